//! ASIDs: ASIDControl makes pools of 512 from 4 KiB Untyped; a pool assigns an ASID to a VSpace
//! root. The kernel finds a VSpace by ASID when a frame cap (which records its ASID) is
//! unmapped, so a deleted VSpace can never be written through a stale cap.
//!
//! A kernel ASID is also the hardware one when satp has 16 ASID bits (`mm::tlb`); an ASID given
//! to a new VSpace moves its TLB generation, so no hart keeps a translation of the VSpace that
//! had it before.
use super::{at, cap_at, tcb::Tcb, InvResult, KSlots};
use crate::ipc::Msg;
use crate::kcell::KCell;
use abi::{
    label,
    object::{ASID_POOLS, ASID_POOL_ENTRIES},
};
use caps::{cap::PT_ROOT, cspace::lookup_slot_exact, Cap, Error, Slots};

/// Physical address of each pool (0 = none).
static POOLS: KCell<[u64; ASID_POOLS]> = KCell::new([0; ASID_POOLS]);

type Pool = [u64; ASID_POOL_ENTRIES];

fn pools() -> &'static mut [u64; ASID_POOLS] {
    // SAFETY: under the kernel lock.
    unsafe { POOLS.get() }
}

/// The VSpace root that owns `asid`, if any.
pub fn vspace_of(asid: u16) -> Option<u64> {
    let pool = pools()[asid as usize / ASID_POOL_ENTRIES];
    if pool == 0 {
        return None;
    }
    let root = at::<Pool>(pool)[asid as usize % ASID_POOL_ENTRIES];
    (root != 0).then_some(root)
}

/// The boot VSpace gets ASID 1 in pool 0 (made at boot like seL4's initial pool).
/// Every (ASID, VSpace root) assigned (the consistency checker).
pub fn for_each_vspace(mut f: impl FnMut(u16, u64)) {
    for (hi, &pool) in pools().iter().enumerate() {
        if pool == 0 {
            continue;
        }
        for (lo, &root) in at::<Pool>(pool).iter().enumerate() {
            if root != 0 {
                f((hi * ASID_POOL_ENTRIES + lo) as u16, root);
            }
        }
    }
}

pub fn boot_pool(pool_pa: u64) {
    pools()[0] = pool_pa;
    super::vspace::spaces_changed();
}

pub fn assign(pool_pa: u64, index: usize, root: u64) {
    at::<Pool>(pool_pa)[index] = root;
    super::vspace::spaces_changed();
}

pub fn release(asid: u16, root: u64) {
    let pool = pools()[asid as usize / ASID_POOL_ENTRIES];
    if pool != 0 {
        let e = &mut at::<Pool>(pool)[asid as usize % ASID_POOL_ENTRIES];
        if *e == root {
            *e = 0;
            super::vspace::spaces_changed();
        }
    }
}

pub fn destroy_pool(base: u64, asid_base: u16) {
    let hi = asid_base as usize / ASID_POOL_ENTRIES;
    if pools()[hi] == base {
        // VSpaces in it lose their ASID: their threads fall back to an empty address space.
        pools()[hi] = 0;
        super::vspace::spaces_changed();
        crate::sched::shootdown(None);
    }
}

pub fn invoke_control(me: &mut Tcb, m: &Msg) -> InvResult {
    if m.label != label::RISCV_ASID_CONTROL_MAKE_POOL {
        return Err(Error::IllegalOperation);
    }
    m.need(2, 2)?;
    let (index, depth) = (m.mr(me, 0), m.mr(me, 1));
    let (ut, ut_slot) = m.caps[0];
    let Cap::Untyped { base, size_bits, device, .. } = ut else { return Err(Error::InvalidCapability(1)) };
    if size_bits != abi::object::ASID_POOL_BITS as u8 || device {
        return Err(Error::InvalidCapability(1));
    }
    if caps::cdt::has_children(&KSlots, ut_slot) {
        return Err(Error::RevokeFirst);
    }
    if depth > 64 {
        return Err(Error::RangeError { min: 1, max: 64 });
    }
    let dest = lookup_slot_exact(&KSlots, m.caps[1].0, index as u64, depth as u8).map_err(Error::FailedLookup)?;
    if !cap_at(dest).is_null() {
        return Err(Error::DeleteFirst);
    }
    let hi = (1..ASID_POOLS).find(|&i| pools()[i] == 0).ok_or(Error::DeleteFirst)?;
    crate::asyscall::tlb::settle();
    crate::invariants::memory_handed_out(base);
    // SAFETY: RAM owned by the Untyped, which has no children.
    unsafe { core::ptr::write_bytes(crate::mm::phys_to_virt(base as usize) as *mut u8, 0, 4096) };
    let mut ut = ut;
    if let Cap::Untyped { free_index, .. } = &mut ut {
        *free_index = 4096;
    }
    KSlots.set_cap(ut_slot, ut);
    let asid_base = (hi * ASID_POOL_ENTRIES) as u16;
    caps::cdt::insert_new_object(&mut KSlots, ut_slot, dest, Cap::AsidPool { base, asid_base })?;
    pools()[hi] = base;
    super::vspace::spaces_changed();
    crate::stats::object_bytes_made(4096);
    Ok(0)
}

pub fn invoke_pool(me: &mut Tcb, pool: Cap, m: &Msg) -> InvResult {
    let _ = me;
    if m.label != label::RISCV_ASID_POOL_ASSIGN {
        return Err(Error::IllegalOperation);
    }
    m.need(0, 1)?;
    let Cap::AsidPool { base, asid_base } = pool else { return Err(Error::InvalidCapability(0)) };
    let (pt, pt_slot) = m.caps[0];
    let Cap::PageTable { base: root, mapped: None } = pt else { return Err(Error::InvalidCapability(1)) };
    if pools()[asid_base as usize / ASID_POOL_ENTRIES] != base {
        return Err(Error::FailedLookup(caps::cspace::LookupFault::InvalidRoot));
    }
    let entries = at::<Pool>(base);
    // ASID 0 is never handed out (seL4's asidInvalid).
    let first = if asid_base == 0 { 1 } else { 0 };
    let i = (first..ASID_POOL_ENTRIES).find(|&i| entries[i] == 0).ok_or(Error::DeleteFirst)?;
    super::vspace::copy_kernel_half(root);
    entries[i] = root;
    super::vspace::spaces_changed();
    crate::mm::tlb::bump(Some(asid_base + i as u16));
    KSlots.set_cap(pt_slot, Cap::PageTable { base: root, mapped: Some((asid_base + i as u16, PT_ROOT)) });
    Ok(0)
}
