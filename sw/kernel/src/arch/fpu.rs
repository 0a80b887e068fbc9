//! The F/D register file: `sstatus.FS` and the two routines that move a thread's 32 registers
//! and `fcsr` between its TCB and the hart. These two routines, in assembly, are the only
//! floating-point instructions in the kernel (`make test-nofp` checks that): the kernel is built
//! soft-float and never touches FP state otherwise.
use super::csr::*;

/// A user thread's F and D state: `f0`..`f31` (64 bits each, NaN-boxed singles included) and
/// `fcsr` (rounding mode and exception flags).
#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct FpRegs {
    pub f: [u64; 32],
    pub fcsr: u64,
}

/// `sstatus.FS`: Off (FP instructions trap as illegal), Initial, Clean, Dirty (the hardware
/// sets Dirty on any write to an FP register or `fcsr`).
const FS_MASK: usize = 3 << 13;
const FS_CLEAN: usize = 2 << 13;
const FS_DIRTY: usize = 3 << 13;

core::arch::global_asm!(
    ".section .text",
    ".option push",
    ".option arch, +d",
    ".balign 4",
    // a0 = &FpRegs; FS must not be Off.
    ".globl fpu_save_regs",
    "fpu_save_regs:",
    "   .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31",
    "   fsd f\\n, \\n*8(a0)",
    "   .endr",
    "   frcsr t0",
    "   sd t0, 32*8(a0)",
    "   ret",
    ".balign 4",
    // a0 = &FpRegs; FS must not be Off (it is Dirty afterwards).
    ".globl fpu_load_regs",
    "fpu_load_regs:",
    "   ld t0, 32*8(a0)",
    "   .irp n, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31",
    "   fld f\\n, \\n*8(a0)",
    "   .endr",
    "   fscsr t0",
    // Wait for the last load's write-back: Rocket writes an FP load's register (and sets FS
    // Dirty) after later instructions went on, so the caller's FS Clean could come first.
    "   fmv.x.d t0, f31",
    "   ret",
    ".option pop",
);

extern "C" {
    fn fpu_save_regs(to: *mut FpRegs);
    fn fpu_load_regs(from: *const FpRegs);
}

/// The hart's FP registers into `to`; FS must be on (not Off).
pub fn save(to: &mut FpRegs) {
    // SAFETY: writes exactly one FpRegs; FS is on (the caller's condition).
    unsafe { fpu_save_regs(to) }
}

/// `from` into the hart's FP registers and FS Clean: the thread starts with a copy equal to
/// its TCB's (a Dirty FS at its switch-out then means it wrote FP state).
pub fn load(from: &FpRegs) {
    csrs!("sstatus", FS_DIRTY);
    // SAFETY: reads exactly one FpRegs; FS was just turned on.
    unsafe { fpu_load_regs(from) };
    csrc!("sstatus", FS_DIRTY & !FS_CLEAN);
}

/// FS Clean: the registers hold a copy of the state of the thread about to run.
pub fn enable() {
    csrs!("sstatus", FS_CLEAN);
}

/// FS is Dirty: the registers hold state newer than their owner's copy.
pub fn dirty() -> bool {
    csrr!("sstatus") & FS_MASK == FS_DIRTY
}

/// FS Off: the next FP instruction in user mode traps.
pub fn disable() {
    csrc!("sstatus", FS_MASK);
}
