//! Kernel objects, one module per type (as seL4 lays them out), and the memory they live in.
//!
//! Every object sits in memory retyped from an Untyped and is named by its physical address;
//! the kernel reaches it through the kernel window. All of it is guarded by the kernel lock
//! (`crate::lock`): whoever holds the lock may form a `&mut` to any object for the duration of
//! one operation, and no reference outlives the lock.
pub mod asid;
pub mod cnode;
pub mod endpoint;
pub mod irq;
pub mod notification;
pub mod tcb;
pub mod untyped;
pub mod vspace;

use crate::mm::phys_to_virt;
use caps::{Cap, Slot, SlotRef, Slots};

/// An object of type `T` at physical address `pa`. The caller holds the kernel lock and knows
/// (from a capability) that a `T` lives there.
#[allow(clippy::mut_from_ref)]
pub fn at<T>(pa: u64) -> &'static mut T {
    debug_assert!(pa != 0);
    // SAFETY: see the module comment: capabilities vouch for the type, the lock for exclusivity.
    unsafe { &mut *(phys_to_virt(pa as usize) as *mut T) }
}

/// Slots as the kernel stores them: `SlotRef` is the slot's physical address, a CNode is an
/// array of `Slot`s, and each TCB has a few slots of its own.
pub struct KSlots;

impl Slots for KSlots {
    fn get(&self, s: SlotRef) -> Slot {
        *at::<Slot>(s)
    }
    fn set(&mut self, s: SlotRef, slot: Slot) {
        let old = at::<Slot>(s);
        if (matches!(old.cap, Cap::PageTable { .. }) || matches!(slot.cap, Cap::PageTable { .. }))
            && old.cap != slot.cap
        {
            vspace::spaces_changed();
        }
        *old = slot;
    }
    fn cnode_slot(&self, base: u64, index: u64) -> SlotRef {
        base + index * caps::cdt::SLOT_BYTES
    }
}

pub fn cap_at(slot: SlotRef) -> Cap {
    KSlots.cap(slot)
}

/// The result of an invocation that does not block: `Ok(n)` replies with label 0 and `n`
/// message registers already written by the invocation; errors reply with seL4's error.
pub type InvResult = Result<usize, caps::Error>;

/// Destroy the object a final capability named (its last capability was just deleted).
/// Objects that own other capabilities (CNodes, TCBs) delete those too, iteratively so that a
/// deep tree of CNodes cannot overflow the kernel stack.
pub fn finalise(cap: Cap) {
    let mut work: heapless::Vec<Cap, 64> = heapless::Vec::new();
    let mut next = Some(cap);
    while let Some(c) = next.take().or_else(|| work.pop()) {
        let mut push = |f: Cap| {
            if let Err(f) = work.push(f) {
                // Out of room: finish this one now (rare, and bounded by the kernel stack).
                finalise(f);
            }
        };
        match c {
            Cap::CNode { base, radix, .. } => {
                for i in 0..(1u64 << radix) {
                    if let Some((f, last)) = caps::cdt::delete_any(&mut KSlots, KSlots.cnode_slot(base, i)) {
                        release_held(f);
                        if last {
                            push(f);
                        }
                    }
                }
                crate::stats::object_bytes_freed((1u64 << radix) * caps::cdt::SLOT_BYTES);
            }
            Cap::Tcb { obj } => {
                tcb::destroy(obj, &mut push);
                crate::stats::object_bytes_freed(1 << abi::object::TCB_BITS);
            }
            Cap::Endpoint { obj, .. } => {
                endpoint::destroy(obj);
                crate::stats::object_bytes_freed(1 << abi::object::ENDPOINT_BITS);
            }
            Cap::Notification { obj, .. } => {
                notification::destroy(obj);
                crate::stats::object_bytes_freed(1 << abi::object::NOTIFICATION_BITS);
            }
            Cap::Frame { base, size_bits, .. } => {
                if crate::mm::is_ram(base) {
                    crate::stats::object_bytes_freed(1 << size_bits);
                }
            }
            Cap::PageTable { base, mapped } => {
                vspace::destroy_page_table(base, mapped);
                crate::stats::object_bytes_freed(1 << abi::object::PAGE_TABLE_BITS);
            }
            Cap::AsidPool { base, asid_base } => {
                asid::destroy_pool(base, asid_base);
                crate::stats::object_bytes_freed(1 << abi::object::ASID_POOL_BITS);
            }
            Cap::SenderTable { base } => {
                crate::uintr::sender_table_destroyed(base);
                crate::stats::object_bytes_freed(1 << abi::object::UINTR_SENDER_TABLE_BITS);
            }
            Cap::IrqHandler { irq } => irq::clear_handler(irq),
            Cap::Reply { tcb, .. } => tcb::reply_cap_gone(tcb),
            Cap::Null
            | Cap::Untyped { .. }
            | Cap::IrqControl
            | Cap::AsidControl
            | Cap::DebugControl
            | Cap::UintrControl
            | Cap::Console => {}
        }
    }
}

/// Clean-up every deleted cap needs, final or not.
fn on_deleted(cap: Cap, last: bool) {
    release_held(cap);
    if last {
        finalise(cap);
    }
}

/// What a cap holds besides its object: a mapping (each frame cap maps at most one place), a
/// sender-table entry (a registered U-notification sender cap).
fn release_held(cap: Cap) {
    if let Cap::Frame { base, size_bits, mapped: Some((asid, va)), .. } = cap {
        vspace::unmap_frame_at(asid, va, base, size_bits);
    }
    crate::uintr::cap_deleted(&cap);
}

/// Delete the cap in `slot`, destroying its object if it was the last one.
pub fn delete_slot(slot: SlotRef) {
    if let Some((cap, last)) = caps::cdt::delete_any(&mut KSlots, slot) {
        on_deleted(cap, last);
    }
}

/// Delete every descendant of the cap in `slot`. The tree is re-read after each deletion, so
/// objects destroyed on the way (which delete further slots) cannot confuse it. Each deletion
/// is charged to the entry's budget, and a descendant that is the last cap of a CNode or TCB
/// has that object emptied first (`prepare_delete`): `Preempted` when the budget ran out with
/// work left.
pub fn revoke_slot(slot: SlotRef) -> Result<(), caps::Error> {
    loop {
        let me = KSlots.get(slot);
        let next = me.mdb.next;
        if next == caps::NO_SLOT || !caps::cdt::is_parent_of(&me, &KSlots.get(next)) {
            return Ok(());
        }
        prepare_delete(next)?;
        delete_slot(next);
        if !crate::preempt::charge(1) && caps::cdt::has_children(&KSlots, slot) {
            return Err(caps::Error::Preempted);
        }
    }
}

/// Before the cap in `slot` goes: if it is the last cap to an endpoint or notification, restart
/// its waiters; if to an object that holds caps (a CNode, a TCB), empty that object first, depth first through the objects in it that would go with
/// it, a unit of budget per deletion and per 64 slots looked at. `Preempted` when the budget
/// ran out: the cap is still there and what was emptied stays empty, so the restarted call
/// carries on. Afterwards deleting the cap finalises an empty object (what `finalise` does
/// with a non-empty one is unbounded, but only a cap that skipped this step gets there).
pub fn prepare_delete(slot: SlotRef) -> Result<(), caps::Error> {
    let top = cap_at(slot);
    if !caps::cdt::is_final(&KSlots, slot) {
        return Ok(());
    }
    if !holds_caps(&top) {
        return restart_waiters(&top);
    }
    // `obj` is where we look; it starts at the top again after each object it emptied. The
    // cap being deleted may itself live in the object it names (a CNode holding its own last
    // cap): that slot is skipped, it goes last.
    let mut obj = top;
    loop {
        match first_full_slot(&obj, slot)? {
            None if obj == top => return Ok(()),
            None => obj = top,
            Some(s) => {
                let c = cap_at(s);
                if holds_caps(&c) && caps::cdt::is_final(&KSlots, s) && first_full_slot(&c, slot)?.is_some() {
                    obj = c;
                    continue;
                }
                if caps::cdt::is_final(&KSlots, s) {
                    restart_waiters(&c)?;
                }
                delete_slot(s);
                if !crate::preempt::charge(1) {
                    return Err(caps::Error::Preempted);
                }
            }
        }
    }
}

/// The last cap of an endpoint or notification is about to go: its queued threads restart
/// first, a unit of budget each (any number of threads can wait on one).
fn restart_waiters(last: &Cap) -> Result<(), caps::Error> {
    match *last {
        Cap::Endpoint { obj, .. } => endpoint::restart_waiters(obj, true),
        Cap::Notification { obj, .. } => notification::restart_waiters(obj, true),
        _ => Ok(()),
    }
}

fn holds_caps(c: &Cap) -> bool {
    matches!(c, Cap::CNode { .. } | Cap::Tcb { .. })
}

/// Where the last scan of a CNode stopped, per hart (a few CNodes, for the depth-first walk):
/// slots before it were emptied by this walk. A wrong hint only skips slots, which the final
/// `finalise` of the CNode still deletes.
static SCAN_HINTS: crate::kcell::KCell<[[(u64, u64); 8]; platform::image::MAX_HARTS]> =
    crate::kcell::KCell::new([[(0, 0); 8]; platform::image::MAX_HARTS]);

/// The first slot of a CNode or TCB other than `skip` that holds a cap (None: empty),
/// charging a unit of budget per 64 slots scanned.
fn first_full_slot(obj: &Cap, skip: SlotRef) -> Result<Option<SlotRef>, caps::Error> {
    match *obj {
        Cap::Tcb { obj } => {
            let t = at::<tcb::Tcb>(obj);
            Ok((0..tcb::SLOTS).map(|i| t.slot(i)).find(|&s| s != skip && !cap_at(s).is_null()))
        }
        Cap::CNode { base, radix, .. } => {
            // SAFETY: this hart's own row, under the kernel lock.
            let hints = unsafe { &mut SCAN_HINTS.get()[crate::percpu::this().hart] };
            let h = hints.iter().position(|&(b, _)| b == base).unwrap_or_else(|| {
                hints.rotate_right(1);
                hints[0] = (base, 0);
                0
            });
            let mut i = hints[h].1;
            let end = 1u64 << radix;
            while i < end {
                let s = KSlots.cnode_slot(base, i);
                if s != skip && !cap_at(s).is_null() {
                    hints[h].1 = i;
                    return Ok(Some(s));
                }
                i += 1;
                if i % 64 == 0 && !crate::preempt::charge(1) {
                    hints[h].1 = i;
                    return Err(caps::Error::Preempted);
                }
            }
            hints[h] = (0, 0);
            Ok(None)
        }
        _ => Ok(None),
    }
}

/// Put a reply cap for `caller` into the (empty) `slot`. Reply caps stand outside the
/// derivation tree: there is only ever one, and `caller.reply_holder` finds it.
pub fn set_reply(slot: SlotRef, caller: &mut tcb::Tcb, can_grant: bool) {
    KSlots.set(slot, Slot { cap: Cap::Reply { tcb: caller.pa(), can_grant }, mdb: Default::default() });
    caller.reply_holder = slot;
}
