//! The root task. For now it proves the user-mode path end to end: it runs in its own Sv39
//! address space in U-mode, makes system calls that must preserve its registers, and ends the
//! run with a verdict through DebugHalt.
#![cfg_attr(target_arch = "riscv64", no_std, no_main)]

#[cfg(not(target_arch = "riscv64"))]
fn main() {}

#[cfg(target_arch = "riscv64")]
mod rt {
    use userlib::{println, syscall};

    core::arch::global_asm!(
        ".section .text.entry, \"ax\"",
        ".globl _start",
        "_start:",
        "   call {main}",
        main = sym main,
    );

    /// Every register but a0 must survive a system call: fill them with markers, yield, compare.
    fn registers_survive_syscalls() -> bool {
        let bad: usize;
        // SAFETY: the asm saves and restores the callee-saved registers it uses on the stack.
        unsafe {
            core::arch::asm!(
                "addi sp, sp, -32",
                "sd s1, 0(sp)",
                "sd s2, 8(sp)",
                "li s1, 0x1111",
                "li s2, 0x2222",
                "li t3, 0x3333",
                "li t4, 0x4444",
                "li a6, 0x6666",
                "li a7, {yield_nr}",
                "ecall",
                "li a0, 0",
                "li t0, 0x1111",
                "bne s1, t0, 1f",
                "li t0, 0x2222",
                "bne s2, t0, 1f",
                "li t0, 0x3333",
                "bne t3, t0, 1f",
                "li t0, 0x4444",
                "bne t4, t0, 1f",
                "li t0, 0x6666",
                "bne a6, t0, 1f",
                "j 2f",
                "1: li a0, 1",
                "2: ld s1, 0(sp)",
                "ld s2, 8(sp)",
                "addi sp, sp, 32",
                yield_nr = const abi::syscall::YIELD,
                out("a0") bad, out("t0") _, out("t3") _, out("t4") _, out("a6") _, out("a7") _,
            );
        }
        bad == 0
    }

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
        let regs_ok = registers_survive_syscalls() && cycles_ok;
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
