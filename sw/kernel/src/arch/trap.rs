//! Kernel trap entry and dispatch. Kernel threads only for now; the user-mode path (sscratch
//! swap to the thread's trap frame) arrives with user threads.
use super::csr::*;
use crate::{arch, percpu};
use core::sync::atomic::Ordering;

#[repr(C)]
pub struct TrapFrame {
    /// x1..x31 by register number; slot 0 unused.
    pub regs: [usize; 32],
    pub sepc: usize,
    pub sstatus: usize,
}

core::arch::global_asm!(
    ".section .text",
    ".balign 4",
    ".globl kernel_trap_vector",
    "kernel_trap_vector:",
    "   addi sp, sp, -{frame}",
    "   sd x1, 1*8(sp)",
    "   sd x3, 3*8(sp)",
    "   sd x4, 4*8(sp)",
    "   sd x5, 5*8(sp)",
    "   sd x6, 6*8(sp)",
    "   sd x7, 7*8(sp)",
    "   sd x8, 8*8(sp)",
    "   sd x9, 9*8(sp)",
    "   sd x10, 10*8(sp)",
    "   sd x11, 11*8(sp)",
    "   sd x12, 12*8(sp)",
    "   sd x13, 13*8(sp)",
    "   sd x14, 14*8(sp)",
    "   sd x15, 15*8(sp)",
    "   sd x16, 16*8(sp)",
    "   sd x17, 17*8(sp)",
    "   sd x18, 18*8(sp)",
    "   sd x19, 19*8(sp)",
    "   sd x20, 20*8(sp)",
    "   sd x21, 21*8(sp)",
    "   sd x22, 22*8(sp)",
    "   sd x23, 23*8(sp)",
    "   sd x24, 24*8(sp)",
    "   sd x25, 25*8(sp)",
    "   sd x26, 26*8(sp)",
    "   sd x27, 27*8(sp)",
    "   sd x28, 28*8(sp)",
    "   sd x29, 29*8(sp)",
    "   sd x30, 30*8(sp)",
    "   sd x31, 31*8(sp)",
    "   addi t0, sp, {frame}",
    "   sd t0, 2*8(sp)",
    "   csrr t0, sepc",
    "   sd t0, 32*8(sp)",
    "   csrr t0, sstatus",
    "   sd t0, 33*8(sp)",
    "   mv a0, sp",
    "   call {handler}",
    "   ld t0, 32*8(sp)",
    "   csrw sepc, t0",
    "   ld t0, 33*8(sp)",
    "   csrw sstatus, t0",
    "   ld x1, 1*8(sp)",
    "   ld x3, 3*8(sp)",
    "   ld x4, 4*8(sp)",
    "   ld x6, 6*8(sp)",
    "   ld x7, 7*8(sp)",
    "   ld x8, 8*8(sp)",
    "   ld x9, 9*8(sp)",
    "   ld x10, 10*8(sp)",
    "   ld x11, 11*8(sp)",
    "   ld x12, 12*8(sp)",
    "   ld x13, 13*8(sp)",
    "   ld x14, 14*8(sp)",
    "   ld x15, 15*8(sp)",
    "   ld x16, 16*8(sp)",
    "   ld x17, 17*8(sp)",
    "   ld x18, 18*8(sp)",
    "   ld x19, 19*8(sp)",
    "   ld x20, 20*8(sp)",
    "   ld x21, 21*8(sp)",
    "   ld x22, 22*8(sp)",
    "   ld x23, 23*8(sp)",
    "   ld x24, 24*8(sp)",
    "   ld x25, 25*8(sp)",
    "   ld x26, 26*8(sp)",
    "   ld x27, 27*8(sp)",
    "   ld x28, 28*8(sp)",
    "   ld x29, 29*8(sp)",
    "   ld x30, 30*8(sp)",
    "   ld x31, 31*8(sp)",
    "   ld x5, 5*8(sp)",
    "   addi sp, sp, {frame}",
    "   sret",
    frame = const core::mem::size_of::<TrapFrame>(),
    handler = sym kernel_trap,
);

pub fn install() {
    extern "C" {
        fn kernel_trap_vector();
    }
    csrw!("sscratch", 0);
    csrw!("stvec", kernel_trap_vector as *const () as usize);
}

extern "C" fn kernel_trap(f: &mut TrapFrame) {
    let scause = csrr!("scause");
    let cpu = percpu::this();
    if scause & INTERRUPT != 0 {
        match scause & !INTERRUPT {
            IRQ_S_TIMER => arch::timer::on_interrupt(cpu),
            IRQ_S_SOFT => arch::ipi::on_interrupt(cpu),
            code => panic!("unexpected interrupt {code} on hart {}", cpu.hart),
        }
        return;
    }
    // An expected fault (crate::mm::probe): resume at the fix-up address instead of dying.
    let fixup = cpu.fault_fixup.load(Ordering::Relaxed);
    if fixup != 0 && matches!(scause, EXC_ILLEGAL | EXC_LOAD_PAGE | EXC_STORE_PAGE | EXC_LOAD_ACCESS | EXC_STORE_ACCESS) {
        cpu.fault_fixup.store(0, Ordering::Relaxed);
        f.sepc = fixup;
        return;
    }
    let (lo, hi) = arch::entry::stack_of(cpu.hart);
    let sp = f.regs[2];
    let overflow = if sp < lo + 512 || sp > hi { " (kernel stack overflow)" } else { "" };
    panic!(
        "kernel exception: scause {:#x} sepc {:#x} stval {:#x} sp {:#x}{}",
        scause,
        f.sepc,
        csrr!("stval"),
        sp,
        overflow
    );
}
