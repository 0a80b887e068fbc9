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
        *at::<Slot>(s) = slot;
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
            Cap::IrqHandler { irq } => irq::clear_handler(irq),
            Cap::Reply { tcb, .. } => tcb::reply_cap_gone(tcb),
            Cap::Null | Cap::Untyped { .. } | Cap::IrqControl | Cap::AsidControl | Cap::DebugControl | Cap::UintrControl => {}
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
/// is charged to the entry's budget: `Preempted` when it ran out with descendants left.
pub fn revoke_slot(slot: SlotRef) -> Result<(), caps::Error> {
    let (_, more) = caps::cdt::revoke(&mut KSlots, slot, &mut |c, last| {
        on_deleted(c, last);
        crate::preempt::charge(1)
    });
    if more { Err(caps::Error::Preempted) } else { Ok(()) }
}

/// Put a reply cap for `caller` into the (empty) `slot`. Reply caps stand outside the
/// derivation tree: there is only ever one, and `caller.reply_holder` finds it.
pub fn set_reply(slot: SlotRef, caller: &mut tcb::Tcb, can_grant: bool) {
    KSlots.set(slot, Slot { cap: Cap::Reply { tcb: caller.pa(), can_grant }, mdb: Default::default() });
    caller.reply_holder = slot;
}
