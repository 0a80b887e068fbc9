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

/// `csrr rd, time` (csrrs rd, 0xc01, x0) on harts without a time CSR: answer from CLINT mtime.
fn emulate_rdtime(f: &mut TrapFrame) -> bool {
    if hart::TIME_CSR.load(Ordering::Relaxed) {
        return false;
    }
    let insn = csrr!("mtval") as u32;
    let rd = ((insn >> 7) & 0x1f) as usize;
    let is_csrrs_time =
        insn & 0x7f == 0x73 && (insn >> 12) & 0x7 == 2 && (insn >> 15) & 0x1f == 0 && insn >> 20 == 0xc01;
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
