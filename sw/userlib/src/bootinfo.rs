//! The boot-info page the kernel gives the root task (`abi::bootinfo::BootInfo`).
pub use abi::bootinfo::{BootInfo, SlotRegion, UntypedDesc};

/// The boot info at `addr` (the root task's a0 at entry, also `abi::layout::ROOT_BOOTINFO`).
///
/// # Safety
/// `addr` must point to the mapped boot-info page, which stays mapped and unchanged.
pub unsafe fn from_addr(addr: usize) -> &'static BootInfo {
    &*(addr as *const BootInfo)
}

/// Slots of a region, as a range.
pub fn slots(r: SlotRegion) -> core::ops::Range<usize> {
    r.start..r.end
}

/// Every Untyped cap with its description: (cptr, desc).
pub fn untypeds(bi: &BootInfo) -> impl Iterator<Item = (usize, &UntypedDesc)> {
    let n = bi.untyped.end.saturating_sub(bi.untyped.start).min(abi::bootinfo::MAX_UNTYPEDS);
    (0..n).map(move |i| (bi.untyped.start + i, &bi.untyped_list[i]))
}

/// Number of harts the kernel runs on, bounded by the table size.
pub fn harts(bi: &BootInfo) -> usize {
    bi.num_nodes.min(bi.hart_ids.len())
}
