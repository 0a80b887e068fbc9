//! The M-mode trap vector: SBI calls, timer and software interrupts, `rdtime` emulation, and
//! redirection of everything else to S-mode as if it had been delegated.
use crate::csr::{self, *};
use crate::{hart, ipi, println, sbi};
use core::sync::atomic::Ordering;

/// Registers of the interrupted context, indexed by register number (x0 slot unused).
#[repr(C)]
pub struct TrapFrame {
    pub regs: [usize; 32],
    pub mepc: usize,
}

pub const A0: usize = 10;
pub const A1: usize = 11;

core::arch::global_asm!(
    ".section .text",
    ".balign 4",
    ".globl m_trap_vector",
    "m_trap_vector:",
    // mscratch holds this hart's M stack top while a lower mode runs.
    "   csrrw sp, mscratch, sp",
    "   addi sp, sp, -{frame}",
    // An illegal instruction from user mode that is not `rdtime` goes to S-mode straight from
    // here, with three registers saved (`redirect_to_supervisor` in a few instructions): it is
    // how a user thread's first FP instruction reaches the kernel on cores without a `time`
    // CSR, where illegal instructions cannot be delegated (the kernel switches FP state lazily).
    "   sd t0, 5*8(sp)",
    "   sd t1, 6*8(sp)",
    "   sd t2, 7*8(sp)",
    "   csrr t0, mcause",
    "   addi t0, t0, -{illegal}",
    "   bnez t0, .Lfull",
    "   csrr t0, mstatus",
    "   li t1, {mpp_mask}",
    "   and t1, t0, t1",
    "   bnez t1, .Lfull",               // not from user mode
    "   csrr t1, mtval",
    "   li t0, {rdtime_mask}",
    "   and t1, t1, t0",
    "   li t0, {rdtime}",
    "   beq t1, t0, .Lfull",            // csrrs rd, time, x0: emulated below
    "   csrr t1, mtval",
    "   csrw stval, t1",
    "   li t1, {illegal}",
    "   csrw scause, t1",
    "   csrr t1, mepc",
    "   csrw sepc, t1",
    // mstatus: SPP = U, SPIE = SIE, SIE = 0, MPP = S.
    "   csrr t0, mstatus",
    "   andi t1, t0, {sie}",
    "   slli t1, t1, {sie_to_spie}",    // SIE's value in SPIE's place
    "   li t2, {mpp_s}",
    "   or t1, t1, t2",
    "   li t2, {clear}",
    "   and t0, t0, t2",                // SPP, SPIE, SIE, MPP cleared
    "   or t0, t0, t1",
    "   csrw mstatus, t0",
    "   csrr t1, stvec",
    "   andi t1, t1, -4",
    "   csrw mepc, t1",
    "   ld t0, 5*8(sp)",
    "   ld t1, 6*8(sp)",
    "   ld t2, 7*8(sp)",
    "   addi sp, sp, {frame}",
    "   csrrw sp, mscratch, sp",
    "   mret",
    ".Lfull:",
    "   ld t0, 5*8(sp)",
    "   ld t1, 6*8(sp)",
    "   ld t2, 7*8(sp)",
    "   .irp n, 1,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31",
    "   sd x\\n, \\n*8(sp)",
    "   .endr",
    "   csrr t0, mscratch",
    "   sd t0, 2*8(sp)",
    "   csrr t0, mepc",
    "   sd t0, 32*8(sp)",
    "   mv a0, sp",
    "   call {handler}",
    "   ld t0, 32*8(sp)",
    "   csrw mepc, t0",
    "   .irp n, 1,3,4,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,5", // t0 (x5) last: it carried mepc
    "   ld x\\n, \\n*8(sp)",
    "   .endr",
    "   addi sp, sp, {frame}",
    "   csrrw sp, mscratch, sp",
    "   mret",
    frame = const core::mem::size_of::<TrapFrame>(),
    illegal = const EXC_ILLEGAL,
    mpp_mask = const MSTATUS_MPP_MASK,
    rdtime_mask = const RDTIME_MASK,
    rdtime = const RDTIME,
    sie = const MSTATUS_SIE,
    sie_to_spie = const 4,
    clear = const !(MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE | MSTATUS_MPP_MASK),
    mpp_s = const MSTATUS_MPP_S,
    handler = sym m_trap_handler,
);

pub fn vector_address() -> usize {
    extern "C" {
        fn m_trap_vector();
    }
    m_trap_vector as *const () as usize
}

extern "C" fn m_trap_handler(f: &mut TrapFrame) {
    let cause = csrr!("mcause");
    let hart = csrr!("mhartid");
    if cause & INTERRUPT != 0 {
        match cause & !INTERRUPT {
            7 => {
                // Machine timer: hand it to S-mode as STIP and mask it until the next set_timer.
                csr::csrc!("mie", IRQ_MTI);
                csr::csrs!("mip", IRQ_STI);
            }
            3 => ipi::handle_msi(hart),
            code => println!("[firmware] hart {hart}: unexpected interrupt {code}"),
        }
        return;
    }
    match cause {
        EXC_ECALL_S => {
            f.mepc += 4;
            sbi::dispatch(hart, f);
        }
        EXC_ILLEGAL if emulate_rdtime(f) => f.mepc += 4,
        _ if csrr!("mstatus") & MSTATUS_MPP_MASK != MSTATUS_MPP_M => redirect_to_supervisor(f, cause),
        _ => panic!("M-mode exception {} at {:#x}, mtval {:#x}", cause, f.mepc, csrr!("mtval")),
    }
}

/// `csrrs rd, time, x0` is `RDTIME` with any rd: the instruction under `RDTIME_MASK`.
const RDTIME_MASK: usize = 0xffff_f07f;
const RDTIME: usize = 0xc010_2073;

/// `csrr rd, time` (csrrs rd, 0xc01, x0) on harts without a time CSR: answer from CLINT mtime.
fn emulate_rdtime(f: &mut TrapFrame) -> bool {
    if hart::TIME_CSR.load(Ordering::Relaxed) {
        return false;
    }
    let insn = csrr!("mtval") as u32;
    let rd = ((insn >> 7) & 0x1f) as usize;
    let is_csrrs_time = insn as usize & RDTIME_MASK == RDTIME;
    if !is_csrrs_time {
        return false;
    }
    if rd != 0 {
        f.regs[rd] = crate::clint::mtime() as usize;
    }
    true
}

/// Deliver an exception to S-mode exactly as hardware delegation would have.
fn redirect_to_supervisor(f: &mut TrapFrame, cause: usize) {
    csrw!("scause", cause);
    csrw!("stval", csrr!("mtval"));
    csrw!("sepc", f.mepc);
    let mut mstatus = csrr!("mstatus");
    let from_s = mstatus & MSTATUS_MPP_MASK == MSTATUS_MPP_S;
    mstatus &= !(MSTATUS_SPP | MSTATUS_SPIE | MSTATUS_SIE | MSTATUS_MPP_MASK);
    if from_s {
        mstatus |= MSTATUS_SPP;
    }
    if csrr!("mstatus") & MSTATUS_SIE != 0 {
        mstatus |= MSTATUS_SPIE;
    }
    mstatus |= MSTATUS_MPP_S;
    csrw!("mstatus", mstatus);
    f.mepc = csrr!("stvec") & !3;
}
