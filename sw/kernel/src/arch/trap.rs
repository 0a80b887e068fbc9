//! Trap entry and dispatch.
//!
//! `sscratch` says where a trap came from: 0 while the kernel runs, the current thread's
//! `UserContext` while a user thread runs. A user trap saves the registers into that context and
//! continues on this hart's kernel stack (its top is kept in the context's x0 slot); a kernel
//! trap pushes a `TrapFrame` on the current kernel stack.
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
    "   csrrw sp, sscratch, sp",
    "   bnez sp, .Lfrom_user",
    "   csrrw sp, sscratch, sp",       // kernel trap: sp back, sscratch 0 again
    "   addi sp, sp, -{frame}",
    "   .irp n, 1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31",
    "   sd x\\n, \\n*8(sp)",
    "   .endr",
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
    "   .irp n, 1,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,5", // t0 (x5) last: it carried sepc
    "   ld x\\n, \\n*8(sp)",
    "   .endr",
    "   addi sp, sp, {frame}",
    "   sret",
    // ---- from user mode: sp = &UserContext, sscratch = user sp
    ".Lfrom_user:",
    "   sd t0, 5*8(sp)",
    "   sd t1, 6*8(sp)",
    // Read early: a CSR read's result comes at write-back on Rocket, and a store of it right
    // after waited; the other registers' stores fill that time.
    "   csrr t0, sscratch",
    "   csrr t1, sepc",
    "   .irp n, 1,3,4,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31",
    "   sd x\\n, \\n*8(sp)",
    "   .endr",
    "   sd t0, 2*8(sp)",
    "   sd t1, 32*8(sp)",
    "   csrw sscratch, zero",
    "   mv a0, sp",
    "   ld sp, 0(sp)",                 // this hart's kernel stack top
    "   ld tp, 33*8(a0)",              // this hart's PerCpu
    "   call {user_handler}",          // never returns: it leaves through return_to_user
    "   unimp",
    ".globl return_to_user",
    "return_to_user:",                 // a0 = &UserContext
    "   ld t0, 32*8(a0)",              // first: the CSR write of it waits for the load
    "   csrw sscratch, a0",
    "   csrw sepc, t0",
    "   .irp n, 1,2,3,4,5,6,7,8,9,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,10", // a0 last: it is the base
    "   ld x\\n, \\n*8(a0)",
    "   .endr",
    "   sret",
    frame = const core::mem::size_of::<TrapFrame>(),
    handler = sym kernel_trap,
    user_handler = sym crate::syscall::user_trap,
);

/// A user thread's registers while it is in the kernel. x0's slot holds the kernel stack top of
/// the hart it runs on, and `percpu` the hart's `PerCpu`: the trap vector needs both.
#[repr(C)]
#[derive(Clone, Debug)]
pub struct UserContext {
    pub regs: [usize; 32],
    pub sepc: usize,
    pub percpu: usize,
}

impl UserContext {
    pub const fn new() -> Self {
        UserContext { regs: [0; 32], sepc: 0, percpu: 0 }
    }
}

/// Enter user mode with `ctx` on this hart. Interrupts are enabled in user mode.
pub fn enter_user(ctx: &mut UserContext) -> ! {
    enter_user_on(crate::percpu::this(), ctx, false)
}

/// `enter_user` on hart `cpu` (this one); `sstatus_ok`: the caller knows `sstatus` is as the
/// trap from user mode left it (no read needed).
#[inline(always)]
pub fn enter_user_on(cpu: &crate::percpu::PerCpu, ctx: &mut UserContext, sstatus_ok: bool) -> ! {
    extern "C" {
        fn return_to_user(ctx: *mut UserContext) -> !;
    }
    ctx.regs[0] = cpu.kstack_top;
    ctx.percpu = cpu as *const _ as usize;
    const SPP: usize = 1 << 8;
    const SPIE: usize = 1 << 5;
    // A CSR write to sstatus flushes Rocket's pipeline; after a trap from user mode the bits
    // are already right (SPP = U, SIE = 0, SPIE = 1), so only other ways here write them.
    if !sstatus_ok && csrr!("sstatus") & (SPP | SSTATUS_SIE | SPIE) != SPIE {
        csrc!("sstatus", SPP | SSTATUS_SIE);
        csrs!("sstatus", SPIE);
    }
    // SAFETY: ctx describes a user thread whose address space is active on this hart.
    unsafe { return_to_user(ctx) }
}

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
        crate::interrupt::handle_in_kernel(scause & !INTERRUPT, cpu);
        return;
    }
    // An expected fault (crate::mm::probe): resume at the fix-up address instead of dying.
    let fixup = cpu.fault_fixup.load(Ordering::Relaxed);
    if fixup != 0 && matches!(scause, EXC_ILLEGAL | EXC_LOAD_PAGE | EXC_STORE_PAGE | EXC_LOAD_ACCESS | EXC_STORE_ACCESS)
    {
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
