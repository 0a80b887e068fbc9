//! Untyped memory: object sizes, alignment and the retype watermark.
use crate::{cdt::SLOT_BYTES, Cap, Error};
use abi::object;

pub const MIN_UNTYPED_BITS: u8 = 4;
pub const MAX_UNTYPED_BITS: u8 = 38;

/// Size in bits of one object of `ty` (`size_bits` is the user's argument: radix for CNodes,
/// size for Untyped).
pub fn object_size_bits(ty: usize, size_bits: u8) -> Result<u8, Error> {
    let slot_bits = SLOT_BYTES.trailing_zeros() as u8;
    Ok(match ty {
        object::UNTYPED if size_bits < MIN_UNTYPED_BITS => return Err(Error::InvalidArgument(1)),
        object::UNTYPED if size_bits <= MAX_UNTYPED_BITS => size_bits,
        object::UNTYPED => return Err(Error::RangeError { min: 0, max: MAX_UNTYPED_BITS as u64 }),
        object::CNODE if size_bits == 0 => return Err(Error::InvalidArgument(1)),
        object::CNODE if (1..=(MAX_UNTYPED_BITS - slot_bits)).contains(&size_bits) => size_bits + slot_bits,
        object::CNODE => return Err(Error::RangeError { min: 1, max: (MAX_UNTYPED_BITS - slot_bits) as u64 }),
        object::TCB => abi::object::TCB_BITS as u8,
        object::ENDPOINT => abi::object::ENDPOINT_BITS as u8,
        object::NOTIFICATION => abi::object::NOTIFICATION_BITS as u8,
        object::PAGE_4K | object::PAGE_TABLE => 12,
        object::MEGA_PAGE => 21,
        object::GIGA_PAGE => 30,
        object::UINTR_SENDER_TABLE => abi::object::UINTR_SENDER_TABLE_BITS as u8,
        _ => return Err(Error::InvalidArgument(0)),
    })
}

/// Where `count` objects of `ty` go in Untyped `ut` (a cap with its current watermark):
/// returns the address of the first object and the new watermark. Objects are naturally aligned;
/// device Untyped can only become frames (and Untyped).
pub fn plan_retype(ut: &Cap, ty: usize, size_bits: u8, count: u64) -> Result<(u64, u64), Error> {
    let Cap::Untyped { base, size_bits: ut_bits, free_index, device, .. } = *ut else {
        return Err(Error::InvalidCapability(0));
    };
    let obj_bits = object_size_bits(ty, size_bits)?;
    if device && !matches!(ty, object::UNTYPED | object::PAGE_4K | object::MEGA_PAGE | object::GIGA_PAGE) {
        return Err(Error::InvalidArgument(1));
    }
    if count == 0 {
        return Err(Error::RangeError { min: 1, max: u64::MAX });
    }
    let size = 1u64 << obj_bits;
    let start = (base + free_index).next_multiple_of(size);
    let total = size.checked_mul(count).ok_or(Error::RangeError { min: 1, max: 1 })?;
    let end = base + (1u64 << ut_bits);
    if obj_bits > ut_bits || total > end.saturating_sub(start) {
        // seL4 reports the bytes above the watermark, before alignment.
        return Err(Error::NotEnoughMemory { available: (1u64 << ut_bits).saturating_sub(free_index) });
    }
    Ok((start, start + total - base))
}
