//! Boot-time frame allocation. As in seL4, the kernel takes the few frames it needs at boot
//! and everything left over becomes Untyped memory for the root task.
use devtree::Region;
use spin::Mutex;

pub struct BootFrames {
    free: heapless::Vec<Region, 16>,
    taken: usize,
}

static FRAMES: Mutex<Option<BootFrames>> = Mutex::new(None);

/// Free RAM = device-tree memory minus firmware, kernel image, device tree and reservations.
pub fn init(m: &devtree::Machine, kernel: Region, dtb: Region) -> usize {
    let fw = Region { base: platform::image::FIRMWARE_BASE, size: platform::image::FIRMWARE_SIZE };
    let mut holes: heapless::Vec<Region, 16> = heapless::Vec::new();
    let _ = holes.extend_from_slice(&[fw, kernel, dtb]);
    let _ = holes.extend_from_slice(&m.reserved);
    let _ = holes.extend(crate::rootserver::modules_region());
    let free = devtree::subtract_regions(&m.memory, &holes, sv39::PAGE_SIZE);
    let total = free.iter().map(|r| r.size).sum();
    *FRAMES.lock() = Some(BootFrames { free, taken: 0 });
    total
}

/// One zeroed 4 KiB frame (physical address).
pub fn alloc_zeroed() -> Option<usize> {
    let mut guard = FRAMES.lock();
    let f = guard.as_mut()?;
    let r = f.free.iter_mut().find(|r| r.size >= sv39::PAGE_SIZE)?;
    let pa = r.base;
    r.base += sv39::PAGE_SIZE;
    r.size -= sv39::PAGE_SIZE;
    f.taken += 1;
    // SAFETY: the frame is free RAM, mapped in the kernel window.
    unsafe { core::ptr::write_bytes(super::phys_to_virt(pa) as *mut u8, 0, sv39::PAGE_SIZE) };
    Some(pa)
}

pub fn frames_taken() -> usize {
    FRAMES.lock().as_ref().map_or(0, |f| f.taken)
}
