//! The S-mode microkernel: seL4's object model and system calls (non-MCS, RISC-V) on every
//! hart of the machine. Boot brings the harts up in an Sv39 kernel address space, checks the
//! machine, builds the root task from the image and schedules it. See `sw/kernel/README.md`.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod arch;
#[cfg(target_arch = "riscv64")]
mod asyscall;
#[cfg(target_arch = "riscv64")]
mod boot;
#[cfg(target_arch = "riscv64")]
mod console;
#[cfg(target_arch = "riscv64")]
mod deadline;
#[cfg(target_arch = "riscv64")]
mod debug;
#[cfg(target_arch = "riscv64")]
mod fastpath;
#[cfg(target_arch = "riscv64")]
mod fault;
#[cfg(target_arch = "riscv64")]
mod fpu;
#[cfg(target_arch = "riscv64")]
mod interrupt;
#[cfg(target_arch = "riscv64")]
mod invariants;
#[cfg(target_arch = "riscv64")]
mod ipc;
#[cfg(target_arch = "riscv64")]
mod kcell;
#[cfg(target_arch = "riscv64")]
mod lock;
#[cfg(target_arch = "riscv64")]
mod machine;
#[cfg(target_arch = "riscv64")]
mod mm;
#[cfg(target_arch = "riscv64")]
mod object;
#[cfg(target_arch = "riscv64")]
mod percpu;
#[cfg(target_arch = "riscv64")]
mod plic;
#[cfg(target_arch = "riscv64")]
mod preempt;
#[cfg(target_arch = "riscv64")]
mod rootserver;
#[cfg(target_arch = "riscv64")]
mod sched;
#[cfg(target_arch = "riscv64")]
mod selftest;
#[cfg(target_arch = "riscv64")]
mod smp;
#[cfg(target_arch = "riscv64")]
mod stats;
#[cfg(target_arch = "riscv64")]
mod syscall;
#[cfg(target_arch = "riscv64")]
mod uintr;

#[cfg(target_arch = "riscv64")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    console::panic_print(format_args!("[kernel] PANIC on hart {}: {}\n", arch::cpu::hart_id(), info));
    arch::exit::fail(2)
}
