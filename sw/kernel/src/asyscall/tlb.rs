//! TLB shootdowns of a batch of async requests, done once at its end. An unmap on the sync
//! path fences every other hart running that address space in user mode at once
//! (`sched::fence_others`: SBI's remote sfence.vma, an M-mode interrupt there, which returns
//! once they have); a handler that unmaps a page of a client running on another hart would
//! interrupt the client on every unmap. Instead, while a batch runs, `sched::shootdown` only
//! bumps the TLB generation (harts in the kernel flush before they return to user mode) and
//! notes the address space here; at the end of the batch, before any of its replies is
//! published, one such fence covers every space the batch unmapped from. So no completion is
//! seen before the translations it removed are gone.
//!
//! Until that flush another hart may still store through a removed translation (or walk a
//! removed table through its page-walk cache), so the memory behind it must not be reused
//! before it: every place that hands memory out (`Untyped_Retype`, which also starts an
//! emptied Untyped over, and `ASIDControl_MakePool`) calls `settle` first, which flushes what
//! is outstanding and lets the batch go on. The rule is enforced there, where memory changes
//! hands, rather than at every request that frees something: a batch that only maps and unmaps
//! keeps its one flush at the end. A shootdown whose address space is gone (its root table
//! deleted, its ASID released, a pool destroyed) is not deferred at all: an sfence.vma leaves
//! such a hart's satp on the freed root, and only a kick (a kernel entry, which then runs the
//! thread's current address space) takes it off.
use crate::kcell::KCell;
use crate::percpu;
use core::sync::atomic::Ordering;
use platform::image::MAX_HARTS;

#[derive(Clone, Copy)]
struct Pending {
    /// A batch is running on this hart.
    batching: bool,
    /// Address spaces unmapped from (`ALL` = any).
    asids: [u16; 8],
    n: usize,
    all: bool,
}

const IDLE: Pending = Pending { batching: false, asids: [0; 8], n: 0, all: false };
static PENDING: KCell<[Pending; MAX_HARTS]> = KCell::new([IDLE; MAX_HARTS]);

fn mine() -> &'static mut Pending {
    // SAFETY: each hart its own entry, under the kernel lock.
    unsafe { &mut PENDING.get()[percpu::this().hart] }
}

pub fn begin() {
    *mine() = Pending { batching: true, ..IDLE };
}

/// `sched::shootdown` during a batch: noted (true), or not batching (false: kick as usual).
pub fn defer(asid: Option<u16>) -> bool {
    let p = mine();
    if !p.batching {
        return false;
    }
    // The space itself went (module comment): kick as the sync path does.
    if asid.is_none_or(|a| crate::object::asid::vspace_of(a).is_none()) {
        return false;
    }
    match asid {
        Some(a) if p.all || p.asids[..p.n].contains(&a) => {}
        Some(a) if p.n < p.asids.len() => {
            p.asids[p.n] = a;
            p.n += 1;
        }
        _ => p.all = true,
    }
    true
}

/// End of a batch (or of a part of one whose replies are about to be published).
pub fn finish() {
    flush(core::mem::replace(mine(), IDLE));
}

/// Before memory is handed out (kernel lock held): no translation this hart's batch removed is
/// left in any hart's TLB or page-walk cache. The batch goes on; nothing to do outside one.
pub fn settle() {
    if outstanding() {
        flush(core::mem::replace(mine(), Pending { batching: true, ..IDLE }));
    }
}

fn flush(p: Pending) {
    if !p.batching || (p.n == 0 && !p.all) {
        return;
    }
    crate::sched::fence_others(|h| {
        let asid = percpu::of(h).active_asid.load(Ordering::Relaxed);
        p.all || p.asids[..p.n].iter().any(|&a| a as usize == asid)
    });
}

/// Whether this hart's batch has removed translations it has not flushed yet (the consistency
/// checker's record: none may be outstanding when memory is handed out).
pub fn outstanding() -> bool {
    let p = mine();
    p.n != 0 || p.all
}
