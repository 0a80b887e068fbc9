//! Reset entry, per-hart M-mode stacks, and the jump into S-mode.
use core::sync::atomic::AtomicUsize;

pub const MAX_HARTS: usize = platform::image::MAX_HARTS;
const STACK_SHIFT: usize = 14; // 16 KiB per hart
pub const STACK_SIZE: usize = 1 << STACK_SHIFT;

#[repr(C, align(4096))]
struct Stacks([[u8; STACK_SIZE]; MAX_HARTS]);

#[link_section = ".stack"]
static mut STACKS: Stacks = Stacks([[0; STACK_SIZE]; MAX_HARTS]);

/// Lottery ticket and "BSS is zero" flag live in .data: they are used before BSS is cleared.
#[no_mangle]
#[link_section = ".data"]
static BOOT_LOTTERY: AtomicUsize = AtomicUsize::new(0);
#[no_mangle]
#[link_section = ".data"]
static BSS_READY: AtomicUsize = AtomicUsize::new(0);

core::arch::global_asm!(
    ".section .text.entry, \"ax\"",
    ".globl _start",
    "_start:",
    "   csrw mie, zero",
    "   csrw mip, zero",
    "   csrr t0, mhartid",
    "   li t1, {max_harts}",
    "   bgeu t0, t1, .Lpark",
    // sp = top of this hart's stack
    "   la sp, {stacks}",
    "   addi t1, t0, 1",
    "   slli t1, t1, {stack_shift}",
    "   add sp, sp, t1",
    // first hart to swap a 1 in is the boot hart
    "   la t1, BOOT_LOTTERY",
    "   li t2, 1",
    "   amoswap.w.aqrl t2, t2, (t1)",
    "   bnez t2, .Lsecondary",
    "   la t1, _sbss",
    "   la t2, _ebss",
    "1: bgeu t1, t2, 2f",
    "   sd zero, 0(t1)",
    "   addi t1, t1, 8",
    "   j 1b",
    "2: fence rw, rw",
    "   la t1, BSS_READY",
    "   li t2, 1",
    "   sw t2, 0(t1)",
    "   mv a0, t0",
    "   call {boot_main}",
    "   j .Lpark",
    ".Lsecondary:",
    "   la t1, BSS_READY",
    "3: lw t2, 0(t1)",
    "   beqz t2, 3b",
    "   fence r, rw",
    "   mv a0, t0",
    "   call {secondary_main}",
    ".Lpark:",
    "   wfi",
    "   j .Lpark",
    max_harts = const MAX_HARTS,
    stack_shift = const STACK_SHIFT,
    stacks = sym STACKS,
    boot_main = sym crate::hart::boot_main,
    secondary_main = sym crate::hart::secondary_main,
);

/// Top of `hart`'s M-mode stack: where traps from S/U-mode start.
pub fn stack_top(hart: usize) -> usize {
    (&raw const STACKS) as usize + (hart + 1) * STACK_SIZE
}

/// Leave M-mode for S-mode at `addr` with a0 = `hart`, a1 = `arg`, MMU off, S interrupts off.
/// The M-mode stack is reset, so this is also how a stopped hart restarts from scratch.
pub fn enter_supervisor(hart: usize, addr: usize, arg: usize) -> ! {
    use crate::csr::*;
    let mut mstatus = csrr!("mstatus");
    mstatus &= !(MSTATUS_MPP_MASK | MSTATUS_MPIE | MSTATUS_SIE | MSTATUS_SPIE | MSTATUS_SPP);
    mstatus |= MSTATUS_MPP_S;
    csrw!("mstatus", mstatus);
    csrw!("mepc", addr);
    csrw!("satp", 0);
    csrw!("mscratch", stack_top(hart));
    // SAFETY: control leaves the firmware for good; only a0/a1 carry state across.
    unsafe {
        core::arch::asm!("fence.i", "sfence.vma", "mret", in("a0") hart, in("a1") arg, options(noreturn));
    }
}

/// Restart the current hart's M-mode context on a fresh stack at `f` (used by HSM stop,
/// which must never return into the trap frame of the ecall that asked for it).
pub fn reset_stack_and_call(hart: usize, f: extern "C" fn(usize) -> !) -> ! {
    // SAFETY: nothing on the current stack is needed any more.
    unsafe {
        core::arch::asm!("mv sp, {top}", "jr {f}", top = in(reg) stack_top(hart), f = in(reg) f, in("a0") hart, options(noreturn))
    }
}
