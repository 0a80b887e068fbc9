//! The root task. For now it proves the user-mode path end to end: it runs in its own Sv39
//! address space in U-mode, makes system calls that must preserve its registers, and ends the
//! run with a verdict through DebugHalt.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use userlib::{println, syscall};

    userlib::entry!(main);

    /// Benchmarks read the cycle counter from user mode (scounteren must allow it).
    fn cycle_counter_readable() -> bool {
        let (a, b): (usize, usize);
        // SAFETY: reads a counter CSR.
        unsafe { core::arch::asm!("rdcycle {0}", "nop", "rdcycle {1}", out(reg) a, out(reg) b) };
        b > a
    }

    extern "C" fn main() -> ! {
        println!("[roottask] hello from user mode");
        let cycles_ok = cycle_counter_readable();
        println!("[roottask] cycle counter readable from user mode: {}", if cycles_ok { "ok" } else { "FAILED" });
        let regs_ok = userlib::rt::registers_survive_syscall() && cycles_ok;
        println!("[roottask] registers preserved across system calls: {}", if regs_ok { "ok" } else { "FAILED" });
        for _ in 0..3 {
            syscall::yield_now();
        }
        println!("[roottask] done");
        syscall::debug_halt(if regs_ok { 0 } else { 1 })
    }

    #[panic_handler]
    fn panic(info: &core::panic::PanicInfo) -> ! {
        println!("[roottask] panic: {}", info);
        syscall::debug_halt(1)
    }
}
