//! Inter-hart requests over the CLINT's machine software interrupt: S-mode IPIs and remote
//! fences. A request is a bit in the target's mailbox plus an msip write; the target's M-mode
//! handler drains the mailbox.
use crate::csr::{self, IRQ_SSI};
use crate::{clint, entry, hsm};
use core::sync::atomic::{AtomicUsize, Ordering};
use sbi_defs::{error, HartMask, SbiRet};

pub const OP_SSIP: usize = 1 << 0;
pub const OP_FENCE_I: usize = 1 << 1;
pub const OP_SFENCE_VMA: usize = 1 << 2;
const FENCES: usize = OP_FENCE_I | OP_SFENCE_VMA;

static MAILBOX: [AtomicUsize; entry::MAX_HARTS] = [const { AtomicUsize::new(0) }; entry::MAX_HARTS];

/// Post `op` to every present hart in `mask`. Fences wait until every target has done them.
pub fn send(mask: HartMask, op: usize) -> SbiRet {
    let me = csr::csrr!("mhartid");
    let targets = || (0..entry::MAX_HARTS).filter(move |&h| mask.contains(h) && hsm::present(h));
    if mask.base != usize::MAX
        && mask.mask != 0
        && (mask.base >= entry::MAX_HARTS || !hsm::present(mask.base + mask.mask.trailing_zeros() as usize))
    {
        return SbiRet::err(error::INVALID_PARAM);
    }
    for h in targets() {
        MAILBOX[h].fetch_or(op, Ordering::AcqRel);
        clint::set_msip(h, true);
    }
    if op & FENCES != 0 {
        for h in targets() {
            // A stopped hart has nothing cached to fence; do not wait for it.
            while MAILBOX[h].load(Ordering::Acquire) & FENCES != 0 && hsm::status(h).value != sbi_defs::hsm::STOPPED {
                // Serve our own mailbox while waiting, so two harts fencing each other cannot deadlock.
                if h != me {
                    drain(me);
                }
                core::hint::spin_loop();
            }
        }
    }
    SbiRet::ok(0)
}

/// Machine software interrupt on this hart.
pub fn handle_msi(hart: usize) {
    clint::set_msip(hart, false);
    drain(hart);
}

fn drain(hart: usize) {
    let ops = MAILBOX[hart].load(Ordering::Acquire);
    if ops == 0 {
        return;
    }
    if ops & OP_FENCE_I != 0 {
        // SAFETY: instruction-stream fence only.
        unsafe { core::arch::asm!("fence.i") };
    }
    if ops & OP_SFENCE_VMA != 0 {
        // SAFETY: a full TLB flush is always a correct (if coarse) remote sfence.vma.
        unsafe { core::arch::asm!("sfence.vma") };
    }
    if ops & OP_SSIP != 0 {
        csr::csrs!("mip", IRQ_SSI);
    }
    MAILBOX[hart].fetch_and(!ops, Ordering::AcqRel);
}
