//! Untyped_Retype: carve new objects out of an Untyped region, below its watermark, as children
//! in the derivation tree. An Untyped with no children left starts again from its base.
use super::{cap_at, tcb::Tcb, InvResult, KSlots};
use crate::ipc::Msg;
use abi::{label, object};
use caps::{cspace::lookup_slot_exact, Cap, Error, Rights, Slots};

/// seL4's CONFIG_RETYPE_FAN_OUT_LIMIT.
const FAN_OUT_LIMIT: usize = 256;

pub fn invoke(me: &mut Tcb, slot: u64, m: &Msg) -> InvResult {
    if m.label != label::UNTYPED_RETYPE {
        return Err(Error::IllegalOperation);
    }
    m.need(6, 1)?;
    let mr = |i| m.mr(me, i);
    let (ty, size_bits, node_index, node_depth, node_offset, count) = (mr(0), mr(1), mr(2), mr(3), mr(4), mr(5));
    if ty > object::PAGE_TABLE && ty != object::UINTR_SENDER_TABLE {
        return Err(Error::InvalidArgument(0));
    }
    if size_bits > 64 {
        return Err(Error::RangeError { min: 0, max: 64 });
    }
    let obj_bits = caps::untyped::object_size_bits(ty, size_bits as u8)?;
    let root = m.caps[0].0;
    let cnode = if node_depth == 0 {
        root
    } else {
        if node_depth > 64 {
            return Err(Error::RangeError { min: 1, max: 64 });
        }
        let s = lookup_slot_exact(&KSlots, root, node_index as u64, node_depth as u8).map_err(Error::FailedLookup)?;
        cap_at(s)
    };
    let Cap::CNode { base: cn_base, radix, .. } = cnode else {
        return Err(Error::FailedLookup(caps::cspace::LookupFault::InvalidRoot));
    };
    let slots = 1usize << radix;
    if node_offset >= slots {
        return Err(Error::RangeError { min: 0, max: slots as u64 - 1 });
    }
    if count == 0 || count > FAN_OUT_LIMIT || count > slots - node_offset {
        return Err(Error::RangeError { min: 1, max: FAN_OUT_LIMIT.min(slots - node_offset) as u64 });
    }
    for i in 0..count {
        if !cap_at(KSlots.cnode_slot(cn_base, (node_offset + i) as u64)).is_null() {
            return Err(Error::DeleteFirst);
        }
    }
    let mut ut = cap_at(slot);
    let Cap::Untyped { device, base, .. } = ut else { return Err(Error::InvalidCapability(0)) };
    if !caps::cdt::has_children(&KSlots, slot) {
        // Nothing lives in it any more: start over from its base (seL4 resets here). Its
        // memory held objects: nothing is known to be zero.
        if let Cap::Untyped { free_index, cleared, .. } = &mut ut {
            if *free_index != 0 {
                *cleared = 0;
            }
            *free_index = 0;
        }
    }
    let (first, watermark) = caps::untyped::plan_retype(&ut, ty, size_bits as u8, count as u64)?;
    let size = 1u64 << obj_bits;
    // A child Untyped is not zeroed here (as in seL4): it starts with nothing known zero and
    // zeroes what its own retypes hand out, so memory is zeroed once, when an object is made
    // in it, and the unused rest of a power-of-two Untyped costs nothing (at ~2.6 cycles a
    // byte on the RTL, a loader's 1 MiB Untyped half used was ~1.3 M cycles of waste).
    let zeroes = !device && ty != object::UNTYPED;
    // No translation into this memory may outlive its reuse (`asyscall::tlb`).
    crate::asyscall::tlb::settle();
    crate::invariants::memory_handed_out(first);
    if zeroes {
        zero_ahead(slot, &mut ut, base + watermark)?;
    }
    for i in 0..count as u64 {
        let pa = first + i * size;
        if !device && ty != object::UNTYPED {
            crate::stats::object_bytes_made(size);
        }
        let cap = make_object(ty, pa, size_bits as u8, obj_bits, device);
        caps::cdt::insert_new_object(&mut KSlots, slot, KSlots.cnode_slot(cn_base, node_offset as u64 + i), cap)?;
    }
    if let Cap::Untyped { free_index, cleared, .. } = &mut ut {
        *free_index = watermark;
        if zeroes {
            *cleared = (*cleared).max(watermark);
        }
    }
    KSlots.set_cap(slot, ut);
    Ok(0)
}

/// Make everything from the watermark up to `end` zero, a chunk per budget unit, keeping the
/// progress in the cap (`cleared`): a large Retype is preempted and restarted instead of
/// holding the kernel lock for the whole of it. Memory between the watermark and `cleared` is
/// zero already (no object has lived there since it was zeroed).
fn zero_ahead(slot: u64, ut: &mut Cap, end: u64) -> Result<(), Error> {
    let Cap::Untyped { base, free_index, cleared, .. } = ut else { return Err(Error::InvalidCapability(0)) };
    let mut at = *base + (*cleared).max(*free_index);
    while at < end {
        let chunk_end = (at + crate::preempt::ZERO_CHUNK).min(end);
        // SAFETY: RAM above the watermark belongs to no object; mapped in the window.
        unsafe {
            core::ptr::write_bytes(crate::mm::phys_to_virt(at as usize) as *mut u8, 0, (chunk_end - at) as usize)
        };
        at = chunk_end;
        *cleared = at - *base;
        if at < end && !crate::preempt::charge(1) {
            KSlots.set_cap(slot, *ut);
            return Err(Error::Preempted);
        }
    }
    Ok(())
}

fn make_object(ty: usize, pa: u64, size_bits: u8, obj_bits: u8, device: bool) -> Cap {
    match ty {
        // Not zeroed (above): its own retypes zero what they hand out.
        object::UNTYPED => Cap::Untyped { base: pa, size_bits, free_index: 0, device, cleared: 0 },
        object::TCB => {
            super::tcb::create(pa, crate::percpu::this().hart);
            Cap::Tcb { obj: pa }
        }
        object::ENDPOINT => {
            super::endpoint::create(pa);
            Cap::Endpoint { obj: pa, badge: 0, rights: Rights::ALL }
        }
        object::NOTIFICATION => {
            super::notification::create(pa);
            Cap::Notification { obj: pa, badge: 0, rights: Rights::ALL, uintr: 0 }
        }
        object::CNODE => {
            for i in 0..(1u64 << size_bits) {
                KSlots.set(KSlots.cnode_slot(pa, i), caps::Slot::default());
            }
            Cap::CNode { base: pa, radix: size_bits, guard: 0, guard_bits: 0 }
        }
        object::PAGE_TABLE => Cap::PageTable { base: pa, mapped: None },
        object::UINTR_SENDER_TABLE => {
            crate::uintr::sender_table_created(pa);
            Cap::SenderTable { base: pa }
        }
        _ => Cap::Frame { base: pa, size_bits: obj_bits, rights: Rights::ALL, mapped: None },
    }
}
