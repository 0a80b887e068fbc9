extern crate std;
use super::*;
use crate::cdt::SLOT_BYTES;
use abi::object;
use std::{collections::HashMap, vec::Vec};

#[derive(Default)]
struct HostSlots(HashMap<SlotRef, Slot>);

impl Slots for HostSlots {
    fn get(&self, s: SlotRef) -> Slot {
        assert_ne!(s, NO_SLOT);
        self.0.get(&s).copied().unwrap_or_default()
    }
    fn set(&mut self, s: SlotRef, slot: Slot) {
        self.0.insert(s, slot);
    }
    fn cnode_slot(&self, base: u64, index: u64) -> SlotRef {
        base + index * SLOT_BYTES
    }
}

const ROOT_CN: u64 = 0x1000_0000;
fn root_cnode() -> Cap {
    // 8-bit radix, 56-bit guard of 0: a flat 256-slot CSpace addressed with 64-bit cptrs.
    Cap::CNode { base: ROOT_CN, radix: 8, guard: 0, guard_bits: 56 }
}
fn slot(i: u64) -> SlotRef {
    ROOT_CN + i * SLOT_BYTES
}
fn ep(obj: u64) -> Cap {
    Cap::Endpoint { obj, badge: 0, rights: Rights::ALL }
}

/// An original endpoint cap in slot 1, as retype would leave it.
fn with_original_endpoint() -> HostSlots {
    let mut s = HostSlots::default();
    s.set(
        slot(0),
        Slot {
            cap: Cap::Untyped { base: 0x8000_0000, size_bits: 20, free_index: 16, device: false, cleared: 0 },
            mdb: Mdb { revocable: true, first_badged: true, ..Mdb::default() },
        },
    );
    cdt::insert_new_object(&mut s, slot(0), slot(1), ep(0x8000_0000)).unwrap();
    s
}

#[test]
fn lookup_through_guard_and_radix() {
    let s = HostSlots::default();
    assert_eq!(cspace::lookup_slot_exact(&s, root_cnode(), 5, 64), Ok(slot(5)));
    assert_eq!(cspace::lookup_slot(&s, root_cnode(), 0xff), Ok(slot(0xff)));
    assert!(matches!(cspace::lookup_slot(&s, root_cnode(), 1 << 20), Err(cspace::LookupFault::GuardMismatch { .. })));
    assert!(matches!(
        cspace::lookup_slot_exact(&s, root_cnode(), 5, 32),
        Err(cspace::LookupFault::DepthMismatch { .. })
    ));
    assert_eq!(cspace::lookup_slot(&s, ep(1), 5), Err(cspace::LookupFault::InvalidRoot));
}

#[test]
fn two_level_cspace() {
    let mut s = HostSlots::default();
    // slot 3 of the root holds a 4-bit CNode with no guard; remaining bits 52 guard at root level.
    let child = Cap::CNode { base: 0x2000_0000, radix: 4, guard: 0, guard_bits: 0 };
    s.set(slot(3), Slot { cap: child, mdb: Mdb::default() });
    let root = Cap::CNode { base: ROOT_CN, radix: 8, guard: 0, guard_bits: 52 };
    let cptr = (3 << 4) | 9;
    assert_eq!(cspace::lookup_slot_exact(&s, root, cptr, 64), Ok(0x2000_0000 + 9 * SLOT_BYTES));
    // Stopping at the CNode cap itself needs depth 60.
    assert_eq!(cspace::lookup_slot_exact(&s, root, 3, 60), Ok(slot(3)));
}

#[test]
fn mint_badges_and_revoke_removes_only_descendants() {
    let mut s = with_original_endpoint();
    // Copy (unbadged sibling of the original, not revocable) and two badged mints.
    let copy = s.cap(slot(1)).derive().unwrap();
    cdt::insert(&mut s, slot(1), slot(2), copy).unwrap();
    let badged = s.cap(slot(1)).derive().unwrap().update_data(7).unwrap();
    cdt::insert(&mut s, slot(1), slot(3), badged).unwrap();
    let badged_copy = s.cap(slot(3)).derive().unwrap();
    cdt::insert(&mut s, slot(3), slot(4), badged_copy).unwrap();
    assert_eq!(s.cap(slot(4)).badge(), 7);
    assert!(s.cap(slot(3)).update_data(9).is_none(), "a badge cannot be changed");
    assert!(cdt::is_parent_of(&s.get(slot(3)), &s.get(slot(4))), "a copy of a badged cap is its child");
    assert!(!cdt::is_parent_of(&s.get(slot(2)), &s.get(slot(3))), "an unbadged copy is not revocable");

    // Revoking the badged cap removes its copy only.
    let mut finals = Vec::new();
    assert_eq!(
        cdt::revoke(&mut s, slot(3), &mut |c, last| {
            if last {
                finals.push(c)
            }
            true
        }),
        (1, false)
    );
    assert!(s.cap(slot(4)).is_null() && !s.cap(slot(3)).is_null());
    assert!(finals.is_empty(), "the endpoint is still named by other caps");

    // Revoking the original removes every derived cap; the original stays.
    assert_eq!(
        cdt::revoke(&mut s, slot(1), &mut |c, last| {
            if last {
                finals.push(c)
            }
            true
        }),
        (2, false)
    );
    assert!(s.cap(slot(2)).is_null() && s.cap(slot(3)).is_null() && !s.cap(slot(1)).is_null());
    // Deleting the last cap reports the object as final.
    assert_eq!(cdt::delete(&mut s, slot(1)), Some(ep(0x8000_0000)));
}

#[test]
fn revoking_untyped_reclaims_every_object_inside() {
    let mut s = with_original_endpoint();
    let nt = Cap::Notification { obj: 0x8000_0040, badge: 0, rights: Rights::ALL, uintr: 0 };
    cdt::insert_new_object(&mut s, slot(0), slot(5), nt).unwrap();
    cdt::insert(&mut s, slot(5), slot(6), nt.derive().unwrap()).unwrap();
    assert!(cdt::has_children(&s, slot(0)));
    let mut finals = Vec::new();
    cdt::revoke(&mut s, slot(0), &mut |c, last| {
        if last {
            finals.push(c)
        }
        true
    });
    assert!((1..=6).all(|i| s.cap(slot(i)).is_null()));
    assert!(!cdt::has_children(&s, slot(0)));
    assert_eq!(finals.len(), 2, "each object reported once, when its last cap went: {finals:?}");
}

#[test]
fn move_keeps_the_tree_and_occupied_slots_are_refused() {
    let mut s = with_original_endpoint();
    cdt::insert(&mut s, slot(1), slot(2), ep(0x8000_0000)).unwrap();
    assert_eq!(cdt::insert(&mut s, slot(1), slot(2), ep(0x8000_0000)), Err(Error::DeleteFirst));
    let c = s.cap(slot(1));
    cdt::move_cap(&mut s, slot(1), slot(9), c).unwrap();
    assert!(s.cap(slot(1)).is_null());
    assert_eq!(s.mdb(slot(0)).next, slot(9));
    assert_eq!(s.mdb(slot(2)).prev, slot(9));
    assert!(cdt::has_children(&s, slot(0)));
}

#[test]
fn retype_watermark_alignment_and_limits() {
    let ut = Cap::Untyped { base: 0x8000_0000, size_bits: 16, free_index: 16, device: false, cleared: 0 };
    // A 4 KiB page is aligned up past the used 16 bytes.
    assert_eq!(untyped::plan_retype(&ut, object::PAGE_4K, 0, 2), Ok((0x8000_1000, 0x3000)));
    // A sender table is 16 KiB, naturally aligned (handles keep the entry index below it).
    assert_eq!(untyped::plan_retype(&ut, object::UINTR_SENDER_TABLE, 0, 1), Ok((0x8000_4000, 0x8000)));
    assert_eq!(Cap::SenderTable { base: 0x8000_4000 }.region(), Some((0x8000_4000, 0x4000)));
    // Endpoints are 32 bytes: the used 16 bytes round up to 32.
    assert_eq!(untyped::plan_retype(&ut, object::ENDPOINT, 0, 4), Ok((0x8000_0020, 0xa0)));
    assert!(matches!(untyped::plan_retype(&ut, object::PAGE_4K, 0, 16), Err(Error::NotEnoughMemory { .. })));
    assert_eq!(untyped::plan_retype(&ut, object::UNTYPED, 2, 1), Err(Error::InvalidArgument(1)));
    assert!(matches!(untyped::plan_retype(&ut, object::UNTYPED, 39, 1), Err(Error::RangeError { .. })));
    assert_eq!(untyped::plan_retype(&ut, 99, 0, 1), Err(Error::InvalidArgument(0)));
    assert!(untyped::plan_retype(&ut, object::PAGE_4K, 0, u64::MAX).is_err());
    let dev = Cap::Untyped { base: 0x6000_0000, size_bits: 16, free_index: 0, device: true, cleared: 0 };
    assert_eq!(untyped::plan_retype(&dev, object::TCB, 0, 1), Err(Error::InvalidArgument(1)));
    assert!(untyped::plan_retype(&dev, object::PAGE_4K, 0, 1).is_ok());
    assert_eq!(Error::NotEnoughMemory { available: 0 }.code(), abi::error::NOT_ENOUGH_MEMORY);
}

#[test]
fn derive_and_rights() {
    assert_eq!(Cap::IrqControl.derive(), Err(Error::IllegalOperation));
    let f = Cap::Frame { base: 0x1000, size_bits: 12, rights: Rights::ALL, mapped: Some((1, 0x4000)) };
    assert_eq!(f.derive().unwrap(), Cap::Frame { base: 0x1000, size_bits: 12, rights: Rights::ALL, mapped: None });
    let ro = ep(1).mask_rights(Rights::from_word(2));
    assert_eq!(ro, Cap::Endpoint { obj: 1, badge: 0, rights: Rights { read: true, ..Rights::NONE } });
    let cn = Cap::CNode { base: 0, radix: 8, guard: 0, guard_bits: 0 };
    assert_eq!(cn.update_data((3 << 6) | 4), Some(Cap::CNode { base: 0, radix: 8, guard: 3, guard_bits: 4 }));
    assert_eq!(cn.update_data((32 << 6) | 4), None, "guard wider than its size");
    assert!(core::mem::size_of::<Slot>() as u64 <= SLOT_BYTES);
}

#[test]
fn registered_sender_notification_caps_are_not_inherited_or_rebadged() {
    let reg = Cap::Notification { obj: 0x8000_0040, badge: 0, rights: Rights::ALL, uintr: 0x1_0001_0002 };
    assert_eq!(reg.derive().unwrap(), Cap::Notification { obj: 0x8000_0040, badge: 0, rights: Rights::ALL, uintr: 0 });
    assert_eq!(reg.update_data(5), None, "a registered sender's vector is its badge");
    assert_eq!(reg.mask_rights(Rights::NONE).badge(), 0);
    assert!(matches!(reg.mask_rights(Rights::NONE), Cap::Notification { uintr: 0x1_0001_0002, .. }), "moving keeps it");
}

#[test]
fn zeroed_memory_is_an_empty_slot() {
    // SAFETY: checking what all-zero bytes decode as is the point of the test; `Slot` is
    // plain data whose zero pattern must be valid.
    let z: Slot = unsafe { core::mem::zeroed() };
    assert_eq!(z.cap, Cap::Null);
    assert_eq!(z, Slot::default());
    assert!(core::mem::size_of::<Slot>() as u64 <= SLOT_BYTES);
}

fn fresh_untyped(s: &mut HostSlots, i: u64) -> Cap {
    let ut = Cap::Untyped { base: 0x9000_0000, size_bits: 16, free_index: 0, device: false, cleared: 0 };
    s.set(slot(i), Slot { cap: ut, mdb: Mdb { revocable: true, first_badged: true, ..Mdb::default() } });
    ut
}

#[test]
fn copying_an_untyped_marks_the_original_full() {
    let mut s = HostSlots::default();
    let ut = fresh_untyped(&mut s, 0);
    let copy = cdt::derive(&s, slot(0)).unwrap();
    assert_eq!(copy, ut);
    cdt::insert(&mut s, slot(0), slot(1), copy).unwrap();
    // Only the copy may retype now: the original's watermark is at its end.
    assert!(matches!(s.cap(slot(0)), Cap::Untyped { free_index, .. } if free_index == 1 << 16));
    assert!(untyped::plan_retype(&s.cap(slot(0)), object::PAGE_4K, 0, 1).is_err());
    assert_eq!(untyped::plan_retype(&s.cap(slot(1)), object::PAGE_4K, 0, 1).unwrap().0, 0x9000_0000);
    // The copy is the original's child: the original cannot be copied again.
    assert!(cdt::has_children(&s, slot(0)));
    assert_eq!(cdt::derive(&s, slot(0)), Err(Error::RevokeFirst));
}

#[test]
fn an_untyped_with_children_cannot_be_derived() {
    let mut s = HostSlots::default();
    fresh_untyped(&mut s, 0);
    cdt::insert_new_object(&mut s, slot(0), slot(1), ep(0x9000_0000)).unwrap();
    assert_eq!(cdt::derive(&s, slot(0)), Err(Error::RevokeFirst));
    // Other caps derive as before.
    assert_eq!(cdt::derive(&s, slot(1)), Ok(ep(0x9000_0000)));
}

#[test]
fn insert_from_an_emptied_source_is_refused() {
    let mut s = with_original_endpoint();
    cdt::delete(&mut s, slot(1));
    assert_eq!(cdt::insert(&mut s, slot(1), slot(2), ep(0x8000_0000)), Err(Error::InvalidCapability(1)));
    assert!(s.cap(slot(2)).is_null());
}

#[test]
fn revoke_stops_when_asked_and_resumes() {
    let mut s = with_original_endpoint();
    for i in 2..7 {
        let c = cdt::derive(&s, slot(1)).unwrap().update_data(i).unwrap();
        cdt::insert(&mut s, slot(1), slot(i), c).unwrap();
    }
    let mut budget = 2;
    let (n, more) = cdt::revoke(&mut s, slot(1), &mut |_, _| {
        budget -= 1;
        budget > 0
    });
    assert_eq!((n, more), (2, true));
    let (n, more) = cdt::revoke(&mut s, slot(1), &mut |_, _| true);
    assert_eq!((n, more), (3, false));
    assert!(!cdt::has_children(&s, slot(1)));
}

#[test]
fn console_copies_descend_from_the_original() {
    let mut s = HostSlots::default();
    s.set(slot(1), Slot { cap: Cap::Console, mdb: Mdb { revocable: true, first_badged: true, ..Mdb::default() } });
    let c = cdt::derive(&s, slot(1)).unwrap();
    assert_eq!(c, Cap::Console, "the console cap can be copied");
    cdt::insert(&mut s, slot(1), slot(2), c).unwrap();
    let c2 = cdt::derive(&s, slot(2)).unwrap();
    cdt::insert(&mut s, slot(2), slot(3), c2).unwrap();
    assert!(cdt::is_parent_of(&s.get(slot(1)), &s.get(slot(2))), "a copy is the original's child");
    assert!(!cdt::is_parent_of(&s.get(slot(2)), &s.get(slot(3))), "a copy's copy is its sibling");
    assert!(cdt::has_children(&s, slot(1)));
    assert!(!cdt::is_final(&s, slot(2)), "copies name one console");
}
