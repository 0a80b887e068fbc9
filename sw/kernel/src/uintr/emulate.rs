//! Trap-and-emulate of the user-interrupt contract on a machine without it (stock QEMU): the
//! U-mode CSRs, `uipi.*` and `uret` are illegal instructions there, so the kernel decodes
//! them and applies them to the thread's saved state, and `inject` enters the user trap
//! handler on the way back to user mode exactly as the hardware would.
use super::{sender, uintc, ThreadState, UIE, UPIE, USIP};
use crate::object::tcb::Tcb;
use platform::{csr, uipi};

const OPCODE_SYSTEM: u32 = 0x73;
const UINTR_BITS: usize = (1 << csr::USIP_BIT) | (1 << csr::UTIP_BIT) | (1 << csr::UEIP_BIT);

/// The instruction `insn` trapped in thread `t`: emulate it if it is ours. Returns false for
/// anything else (the thread gets its illegal-instruction fault).
pub fn instruction(t: &mut Tcb, insn: u32) -> bool {
    let rd = ((insn >> 7) & 0x1f) as usize;
    let funct3 = (insn >> 12) & 7;
    let rs1 = ((insn >> 15) & 0x1f) as usize;
    if insn as usize == uipi::URET {
        let u = &mut t.uintr;
        u.ustatus = if u.ustatus & UPIE != 0 { UIE } else { 0 } | UPIE;
        t.ctx.sepc = u.uepc;
        return true;
    }
    let value = if insn & 0x7f == uipi::OPCODE as u32 && funct3 == uipi::FUNCT3 as u32 && (insn >> 20) & 0x1f == 0 {
        match uipi_op(t, (insn >> 25) as usize, reg(t, rs1)) {
            Some(v) => v,
            None => return false,
        }
    } else if insn & 0x7f == OPCODE_SYSTEM && funct3 & 3 != 0 {
        let number = (insn >> 20) as usize;
        let operand = if funct3 & 4 != 0 { rs1 } else { reg(t, rs1) };
        // csrrs/csrrc with x0 (or uimm 0) only read.
        let writes = funct3 & 3 == 1 || rs1 != 0;
        let Some(old) = read_csr(t, number) else { return false };
        if writes {
            let new = match funct3 & 3 {
                1 => operand,
                2 => old | operand,
                _ => old & !operand,
            };
            write_csr(&mut t.uintr, number, new);
        }
        old
    } else {
        return false;
    };
    if rd != 0 {
        t.ctx.regs[rd] = value;
    }
    t.ctx.sepc += 4;
    true
}

fn reg(t: &Tcb, r: usize) -> usize {
    if r == 0 {
        0
    } else {
        t.ctx.regs[r]
    }
}

/// One `uipi` operation; its result for rd. None: funct7 > 4, illegal.
fn uipi_op(t: &mut Tcb, op: usize, rs1: usize) -> Option<usize> {
    let slot = t.uintr.slot.checked_sub(1);
    match op {
        uipi::SEND => {
            if let Some((s, vector)) = Some(t.uintr.table).filter(|&tb| tb != 0).and_then(|tb| sender::lookup(tb, rs1))
            {
                if (s as usize) < uintc::count() {
                    super::deliver(s, 1 << vector);
                }
            }
            Some(0)
        }
        uipi::READ => Some(slot.map_or(0, uintc::take) as usize),
        uipi::WRITE => {
            if let Some(s) = slot {
                super::deliver(s, rs1 as u64);
            }
            Some(0)
        }
        uipi::ACTIVATE | uipi::DEACTIVATE => {
            if let Some(s) = slot {
                uintc::set_active(s, op == uipi::ACTIVATE);
            }
            Some(0)
        }
        _ => None,
    }
}

/// The value a U-mode CSR read returns; None for a CSR that is not one of the U ones (S-mode
/// CSRs stay illegal from U, as in hardware).
fn read_csr(t: &Tcb, number: usize) -> Option<usize> {
    let u = &t.uintr;
    Some(match number {
        csr::USTATUS => u.ustatus,
        csr::UIE => u.uie & u.sideleg,
        csr::UTVEC => u.utvec,
        csr::USCRATCH => u.uscratch,
        csr::UEPC => u.uepc,
        csr::UCAUSE => u.ucause,
        csr::UTVAL => u.utval,
        csr::UIP => uip(t),
        _ => return None,
    })
}

fn uip(t: &Tcb) -> usize {
    let u = &t.uintr;
    let wire = match u.slot.checked_sub(1) {
        Some(s) if uintc::emu_pending(s) && uintc::emu_active_on(s).is_some() => USIP,
        _ => 0,
    };
    (u.uip_soft | wire) & u.sideleg
}

fn write_csr(u: &mut ThreadState, number: usize, v: usize) {
    match number {
        csr::USTATUS => u.ustatus = v & (UIE | UPIE),
        csr::UIE => u.uie = (u.uie & !u.sideleg) | (v & u.sideleg & UINTR_BITS),
        // As the hardware legalises it (like mtvec): MODE bit 1 reads 0, and a vectored
        // base is 256-byte aligned.
        csr::UTVEC => u.utvec = if v & 1 != 0 { v & !0xfe } else { v & !2 },
        csr::USCRATCH => u.uscratch = v,
        csr::UEPC => u.uepc = v & !1,
        csr::UCAUSE => u.ucause = v,
        csr::UTVAL => u.utval = v,
        // Only the software USIP bit is writable (docs/uintr-spec.md section 1).
        csr::UIP if u.sideleg & USIP != 0 => u.uip_soft = v & USIP,
        _ => {}
    }
}

/// On the way back to user mode: take a pending, enabled user interrupt as the hardware does
/// (uepc, ucause, utval, UPIE ← UIE, UIE ← 0, pc ← utvec).
pub fn inject(t: &mut Tcb) {
    let u = &t.uintr;
    if u.ustatus & UIE == 0 || u.slot == 0 && u.uip_soft == 0 {
        return;
    }
    let code = match uip(t) & u.uie {
        p if p & USIP != 0 => csr::USIP_BIT,
        p if p & (1 << csr::UEIP_BIT) != 0 => csr::UEIP_BIT,
        _ => return,
    };
    let u = &mut t.uintr;
    u.uepc = t.ctx.sepc;
    u.ucause = (1 << 63) | code;
    u.utval = 0;
    u.ustatus = if u.ustatus & UIE != 0 { UPIE } else { 0 };
    let base = u.utvec & !3;
    t.ctx.sepc = if u.utvec & 3 == 1 { base + 4 * code } else { base };
}

/// The trapping instruction: stval where the core reports it, else fetched from user memory.
pub fn fetch(t: &Tcb, stval: usize) -> Option<u32> {
    if stval != 0 {
        return Some(stval as u32);
    }
    let pc = t.ctx.sepc;
    let mut b = [0u8; 4];
    for (i, byte) in b.iter_mut().enumerate() {
        *byte = crate::mm::probe::try_read_user_u8(pc + i)?;
    }
    Some(u32::from_le_bytes(b))
}
