//! Program start and the user-mode self-checks every root task runs.

/// Define `_start`, where the kernel enters a program (a0 = boot info for a root task, its
/// `ProcessInfo` page for a process), as [`init`] and then a call to `$main`, an `extern "C"`
/// function that never returns, with the same a0.
#[macro_export]
macro_rules! entry {
    ($main:path) => {
        #[cfg(target_arch = "riscv64")]
        core::arch::global_asm!(
            ".section .text.entry, \"ax\"",
            ".globl _start",
            "_start:",
            "   mv s0, a0",
            "   call {init}",
            "   mv a0, s0",
            "   call {main}",
            init = sym $crate::rt::init,
            main = sym $main,
        );
    };
}

/// What every program sets up before its `main`: the Console cap it prints with is the root
/// task's `init_cap::CONSOLE`, or for a process started by `process` (its info page carries
/// `bootinfo::process::MAGIC`) `bootinfo::process::CONSOLE`. Programs also enter threads of
/// their own at `_start` with other a0 values (a number, say): only the info page's address
/// is read, and nothing changes for any other a0.
pub extern "C" fn init(info: usize) {
    use abi::bootinfo::process;
    if info != abi::layout::ROOT_BOOTINFO {
        return;
    }
    // SAFETY: the kernel (root task) or the process loader maps this page read-only.
    if unsafe { core::ptr::read_volatile(info as *const usize) } == process::MAGIC {
        crate::debug::set_console(process::CONSOLE);
    }
}

/// Every register but a0..a5 (the IPC registers) must survive a system call: fill some with
/// markers, Yield, compare. True if they all survived.
#[cfg(target_arch = "riscv64")]
pub fn registers_survive_syscall() -> bool {
    let bad: usize;
    // SAFETY: saves and restores the callee-saved registers it uses.
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
            "li t5, 0x5555",
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
            "li t0, 0x5555",
            "bne t5, t0, 1f",
            "li t0, {yield_nr}",
            "bne a7, t0, 1f",
            "j 2f",
            "1: li a0, 1",
            "2: ld s1, 0(sp)",
            "ld s2, 8(sp)",
            "addi sp, sp, 32",
            yield_nr = const abi::syscall::YIELD,
            out("a0") bad, out("t0") _, out("t3") _, out("t4") _, out("t5") _, out("a6") _, out("a7") _,
        );
    }
    bad == 0
}
