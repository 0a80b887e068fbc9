//! CNode invocations: Copy, Mint, Move, Mutate, Rotate, Delete, Revoke, CancelBadgedSends and
//! SaveCaller, all addressed relative to the invoked CNode (seL4 semantics).
use super::{
    cap_at,
    tcb::{self, Tcb},
    InvResult, KSlots,
};
use crate::ipc::Msg;
use abi::label;
use caps::{cspace::lookup_slot_exact, Cap, Error, Rights, Slot, SlotRef};

fn slot_in(root: Cap, index: usize, depth: usize) -> Result<SlotRef, Error> {
    if depth == 0 || depth > 64 {
        return Err(Error::RangeError { min: 1, max: 64 });
    }
    lookup_slot_exact(&KSlots, root, index as u64, depth as u8).map_err(Error::FailedLookup)
}

fn empty_slot(root: Cap, index: usize, depth: usize) -> Result<SlotRef, Error> {
    let s = slot_in(root, index, depth).map_err(|e| match e {
        Error::FailedLookup(f) => Error::FailedDestLookup(f),
        e => e,
    })?;
    if !cap_at(s).is_null() {
        return Err(Error::DeleteFirst);
    }
    Ok(s)
}

fn full_slot(root: Cap, index: usize, depth: usize) -> Result<SlotRef, Error> {
    let s = slot_in(root, index, depth)?;
    if cap_at(s).is_null() {
        return Err(Error::FailedLookup(caps::cspace::LookupFault::MissingCapability { bits_left: 0 }));
    }
    Ok(s)
}

/// Move a cap keeping its place in the derivation tree (and the reply-cap back pointer).
fn move_to(src: SlotRef, dest: SlotRef, cap: Cap) -> Result<(), Error> {
    caps::cdt::move_cap(&mut KSlots, src, dest, cap)?;
    if let Cap::Reply { tcb, .. } = cap {
        super::at::<Tcb>(tcb).reply_holder = dest;
    }
    crate::uintr::cap_moved(&cap, dest);
    Ok(())
}

/// seL4 updateCapData with `preserve`: Mutate and Rotate keep a cap's place in the derivation
/// tree, so they may not badge an endpoint or notification (that would make a new subtree).
fn preserving_update(cap: Cap, data: usize) -> Result<Cap, Error> {
    match cap {
        Cap::Endpoint { .. } | Cap::Notification { .. } => Err(Error::IllegalOperation),
        _ => cap.update_data(data as u64).ok_or(Error::IllegalOperation),
    }
}

/// A kernel slot to swap through (Rotate with dest == src).
static mut SCRATCH: Slot =
    Slot { cap: Cap::Null, mdb: caps::Mdb { prev: 0, next: 0, revocable: false, first_badged: false } };

pub fn invoke(me: &mut Tcb, service: Cap, m: &Msg) -> InvResult {
    let mr = |i| m.mr(me, i);
    match m.label {
        label::CNODE_COPY | label::CNODE_MINT => {
            let mint = m.label == label::CNODE_MINT;
            m.need(if mint { 6 } else { 5 }, 1)?;
            let dest = empty_slot(service, mr(0), mr(1))?;
            let src = full_slot(m.caps[0].0, mr(2), mr(3))?;
            let rights = Rights::from_word(mr(4) as u64);
            let mut cap = caps::cdt::derive(&KSlots, src)?.mask_rights(rights);
            if mint {
                cap = cap.update_data(mr(5) as u64).ok_or(Error::IllegalOperation)?;
            }
            caps::cdt::insert(&mut KSlots, src, dest, cap)?;
            Ok(0)
        }
        label::CNODE_MOVE | label::CNODE_MUTATE => {
            let mutate = m.label == label::CNODE_MUTATE;
            m.need(if mutate { 5 } else { 4 }, 1)?;
            let dest = empty_slot(service, mr(0), mr(1))?;
            let src = full_slot(m.caps[0].0, mr(2), mr(3))?;
            let mut cap = cap_at(src);
            if mutate {
                cap = preserving_update(cap, mr(4))?;
            }
            move_to(src, dest, cap)?;
            Ok(0)
        }
        label::CNODE_ROTATE => {
            // seL4's order: dest index, depth; pivot data, index, depth; src data, index, depth.
            m.need(8, 2)?;
            let dest = slot_in(service, mr(0), mr(1))?;
            let pivot = full_slot(m.caps[0].0, mr(3), mr(4))?;
            let src = full_slot(m.caps[1].0, mr(6), mr(7))?;
            if pivot == src || pivot == dest {
                return Err(Error::IllegalOperation);
            }
            if src != dest && !cap_at(dest).is_null() {
                return Err(Error::DeleteFirst);
            }
            let new_pivot = preserving_update(cap_at(src), mr(5))?;
            let new_dest = preserving_update(cap_at(pivot), mr(2))?;
            if src == dest {
                let scratch = crate::mm::virt_to_phys(&raw mut SCRATCH as usize) as u64;
                move_to(pivot, scratch, new_dest)?;
                move_to(src, pivot, new_pivot)?;
                move_to(scratch, dest, new_dest)?;
            } else {
                move_to(pivot, dest, new_dest)?;
                move_to(src, pivot, new_pivot)?;
            }
            Ok(0)
        }
        label::CNODE_DELETE => {
            m.need(2, 0)?;
            let s = slot_in(service, mr(0), mr(1))?;
            super::prepare_delete(s)?;
            super::delete_slot(s);
            Ok(0)
        }
        label::CNODE_REVOKE => {
            m.need(2, 0)?;
            let s = slot_in(service, mr(0), mr(1))?;
            super::revoke_slot(s)?;
            Ok(0)
        }
        label::CNODE_CANCEL_BADGED_SENDS => {
            m.need(2, 0)?;
            let s = slot_in(service, mr(0), mr(1))?;
            match cap_at(s) {
                Cap::Endpoint { obj, badge, rights } if rights == Rights::ALL => {
                    if badge != 0 {
                        super::endpoint::cancel_badged_sends(me, obj, badge)?;
                    }
                    Ok(0)
                }
                _ => Err(Error::IllegalOperation),
            }
        }
        label::CNODE_SAVE_CALLER => {
            m.need(2, 0)?;
            let dest = empty_slot(service, mr(0), mr(1))?;
            let caller = me.slot(tcb::CALLER);
            let cap = cap_at(caller);
            if let Cap::Reply { .. } = cap {
                move_to(caller, dest, cap)?;
            }
            Ok(0)
        }
        _ => Err(Error::IllegalOperation),
    }
}
