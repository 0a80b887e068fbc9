//! The capability derivation tree, as seL4 keeps it: every non-null slot is in one doubly
//! linked list in depth-first order; a slot's descendants are the slots that follow it while
//! [`is_parent_of`] holds. Copy/Mint insert after the source, retype inserts after the Untyped,
//! Revoke deletes the run of descendants, Delete unlinks one slot.
use crate::{Cap, Error, SlotRef, Slots, NO_SLOT};

/// Bytes a slot occupies in a CNode object (CNode size = 2^radix * SLOT_BYTES). seL4 packs a
/// slot into 32 bytes; ours keeps the cap unpacked and needs 64.
pub const SLOT_BYTES: u64 = 64;
const _: () = assert!(core::mem::size_of::<Slot>() as u64 <= SLOT_BYTES);

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Mdb {
    pub prev: SlotRef,
    pub next: SlotRef,
    /// This cap may have children (originals, badged copies, Untyped, IRQ handlers).
    pub revocable: bool,
    /// First cap with its badge: badged copies below it are its children, not siblings.
    pub first_badged: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Slot {
    pub cap: Cap,
    pub mdb: Mdb,
}

/// Do `a` and `b` name the same object, or is `b`'s object inside Untyped `a`?
pub fn same_region(a: &Cap, b: &Cap) -> bool {
    match (a, b) {
        (Cap::Untyped { .. }, _) => match (a.region(), b.region()) {
            (Some((ab, asz)), Some((bb, bsz))) => bb >= ab && bb + bsz <= ab + asz,
            _ => false,
        },
        (Cap::IrqControl, Cap::IrqHandler { .. }) => true,
        _ => a.object().is_some() && a.object() == b.object(),
    }
}

/// Do two caps name the same object (and, for memory, the same extent)? Null names nothing.
pub fn same_object(a: &Cap, b: &Cap) -> bool {
    a.object().is_some() && a.object() == b.object() && a.region() == b.region()
}

/// seL4 isMDBParentOf: is the cap in slot `a` the parent of the cap in slot `b`?
pub fn is_parent_of(a: &Slot, b: &Slot) -> bool {
    if !a.mdb.revocable || !same_region(&a.cap, &b.cap) {
        return false;
    }
    match a.cap {
        Cap::Endpoint { badge, .. } | Cap::Notification { badge, .. } => {
            badge == 0 || (badge == b.cap.badge() && !b.mdb.first_badged)
        }
        _ => true,
    }
}

/// Whether a new cap derived from `src` starts a revocable subtree (seL4 isCapRevocable).
fn is_revocable(new: &Cap, src: &Cap) -> bool {
    match new {
        Cap::Endpoint { .. } | Cap::Notification { .. } => new.badge() != src.badge(),
        Cap::Untyped { .. } => true,
        Cap::IrqHandler { .. } => matches!(src, Cap::IrqControl),
        _ => false,
    }
}

/// The cap a copy of the cap in `slot` may hold (seL4 deriveCap, with the slot): an Untyped
/// can be copied only while nothing was retyped from it, since the copy starts with the same
/// watermark. Every path that copies a cap (CNode Copy/Mint, IPC transfer, TCB arguments) uses
/// this.
pub fn derive(s: &impl Slots, slot: SlotRef) -> Result<Cap, Error> {
    let cap = s.cap(slot);
    if matches!(cap, Cap::Untyped { .. }) && has_children(s, slot) {
        return Err(Error::RevokeFirst);
    }
    cap.derive()
}

/// Place `cap` (already derived from `src`'s cap) in the empty slot `dest`, as `src`'s child or
/// sibling (Copy, Mint). `src` must hold a cap (the caller checks it after anything that could
/// have emptied it).
///
/// A copy of an Untyped marks the original as fully used (seL4 setUntypedCapAsFull): from then
/// on only the copy can retype, so two watermarks never hand out the same memory. The original
/// starts over from its base once the copy and everything made from it are gone.
pub fn insert(s: &mut impl Slots, src: SlotRef, dest: SlotRef, cap: Cap) -> Result<(), Error> {
    if !s.cap(dest).is_null() {
        return Err(Error::DeleteFirst);
    }
    if s.cap(src).is_null() {
        return Err(Error::InvalidCapability(1));
    }
    if let (Cap::Untyped { base: nb, size_bits: ns, .. }, Cap::Untyped { base, size_bits, device, cleared, .. }) =
        (cap, s.cap(src))
    {
        if nb == base && ns == size_bits {
            s.set_cap(src, Cap::Untyped { base, size_bits, free_index: 1u64 << size_bits, device, cleared });
        }
    }
    let src_slot = s.get(src);
    let revocable = is_revocable(&cap, &src_slot.cap);
    let next = src_slot.mdb.next;
    s.set(dest, Slot { cap, mdb: Mdb { prev: src, next, revocable, first_badged: revocable } });
    if next != NO_SLOT {
        let mut m = s.mdb(next);
        m.prev = dest;
        s.set_mdb(next, m);
    }
    let mut m = src_slot.mdb;
    m.next = dest;
    s.set_mdb(src, m);
    Ok(())
}

/// A fresh object's cap, the child of the Untyped in `parent` (retype).
pub fn insert_new_object(s: &mut impl Slots, parent: SlotRef, dest: SlotRef, cap: Cap) -> Result<(), Error> {
    if !s.cap(dest).is_null() {
        return Err(Error::DeleteFirst);
    }
    insert(s, parent, dest, cap)?;
    let mut m = s.mdb(dest);
    m.revocable = true;
    m.first_badged = true;
    s.set_mdb(dest, m);
    Ok(())
}

/// Move a cap to an empty slot, keeping its place in the tree (Move, Mutate).
pub fn move_cap(s: &mut impl Slots, src: SlotRef, dest: SlotRef, cap: Cap) -> Result<(), Error> {
    if !s.cap(dest).is_null() {
        return Err(Error::DeleteFirst);
    }
    let slot = s.get(src);
    s.set(dest, Slot { cap, mdb: slot.mdb });
    s.set(src, Slot::default());
    if slot.mdb.prev != NO_SLOT {
        let mut m = s.mdb(slot.mdb.prev);
        m.next = dest;
        s.set_mdb(slot.mdb.prev, m);
    }
    if slot.mdb.next != NO_SLOT {
        let mut m = s.mdb(slot.mdb.next);
        m.prev = dest;
        s.set_mdb(slot.mdb.next, m);
    }
    Ok(())
}

/// No other slot names this cap's object: deleting it must destroy the object.
pub fn is_final(s: &impl Slots, slot: SlotRef) -> bool {
    let me = s.get(slot);
    let same = |other: SlotRef| {
        other != NO_SLOT && {
            let o = s.cap(other);
            o.object().is_some() && o.object() == me.cap.object()
        }
    };
    !same(me.mdb.prev) && !same(me.mdb.next)
}

/// Empty a slot. Returns the cap if it was the last one naming its object (the caller then
/// destroys the object: frees a UINTC slot, unbinds a TCB, ...).
pub fn delete(s: &mut impl Slots, slot: SlotRef) -> Option<Cap> {
    delete_any(s, slot).and_then(|(c, last)| last.then_some(c))
}

/// Empty a slot; returns the cap it held and whether it was the last one to its object (some
/// caps need clean-up either way, e.g. a mapped frame is unmapped).
pub fn delete_any(s: &mut impl Slots, slot: SlotRef) -> Option<(Cap, bool)> {
    let me = s.get(slot);
    if me.cap.is_null() {
        return None;
    }
    let last = is_final(s, slot);
    if me.mdb.prev != NO_SLOT {
        let mut m = s.mdb(me.mdb.prev);
        m.next = me.mdb.next;
        s.set_mdb(me.mdb.prev, m);
    }
    if me.mdb.next != NO_SLOT {
        let mut m = s.mdb(me.mdb.next);
        m.prev = me.mdb.prev;
        // A badged copy whose first-badged parent goes away becomes first-badged itself.
        m.first_badged |= me.mdb.first_badged;
        s.set_mdb(me.mdb.next, m);
    }
    s.set(slot, Slot::default());
    Some((me.cap, last))
}

/// Delete every descendant of `slot` (Revoke). `on_deleted` gets each cap removed and whether
/// it was the last one to its object; it answers whether to go on (false: stop here, the
/// rest stays for a later call). Returns how many slots were emptied and whether any
/// descendant is left.
pub fn revoke(s: &mut impl Slots, slot: SlotRef, on_deleted: &mut dyn FnMut(Cap, bool) -> bool) -> (usize, bool) {
    let mut n = 0;
    loop {
        let me = s.get(slot);
        let next = me.mdb.next;
        if next == NO_SLOT || !is_parent_of(&me, &s.get(next)) {
            return (n, false);
        }
        n += 1;
        if let Some((c, last)) = delete_any(s, next) {
            if !on_deleted(c, last) {
                return (n, has_children(s, slot));
            }
        }
    }
}

/// Retype needs an Untyped without children (seL4 ensureNoChildren).
pub fn has_children(s: &impl Slots, slot: SlotRef) -> bool {
    let me = s.get(slot);
    me.mdb.next != NO_SLOT && is_parent_of(&me, &s.get(me.mdb.next))
}
