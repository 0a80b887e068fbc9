//! The S-mode microkernel. This stage brings up every hart in an Sv39 kernel address space,
//! takes timer and IPI interrupts, and checks the machine before handing over (later: to the
//! root task).
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod arch;
#[cfg(target_arch = "riscv64")]
mod boot;
#[cfg(target_arch = "riscv64")]
mod console;
#[cfg(target_arch = "riscv64")]
mod machine;
#[cfg(target_arch = "riscv64")]
mod mm;
#[cfg(target_arch = "riscv64")]
mod percpu;
#[cfg(target_arch = "riscv64")]
mod rootserver;
#[cfg(target_arch = "riscv64")]
mod selftest;
#[cfg(target_arch = "riscv64")]
mod smp;
#[cfg(target_arch = "riscv64")]
mod syscall;
#[cfg(target_arch = "riscv64")]
mod thread;

#[cfg(target_arch = "riscv64")]
#[panic_handler]
fn panic(info: &core::panic::PanicInfo) -> ! {
    console::panic_print(format_args!("[kernel] PANIC on hart {}: {}\n", arch::cpu::hart_id(), info));
    arch::exit::fail(2)
}
