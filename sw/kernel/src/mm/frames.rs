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
    holes.extend(crate::rootserver::modules_region());
    let free = devtree::subtract_regions(&m.memory, &holes, sv39::PAGE_SIZE);
    let total = free.iter().map(|r| r.size).sum();
    *FRAMES.lock() = Some(BootFrames { free, taken: 0 });
    total
}

/// One zeroed 4 KiB frame (physical address).
pub fn alloc_zeroed() -> Option<usize> {
    alloc_filled(|page| page.fill(0))
}

/// One 4 KiB frame whose every byte `fill` writes (the root task's image pages: written once,
/// not zeroed and then overwritten).
pub fn alloc_filled(fill: impl FnOnce(&mut [u8])) -> Option<usize> {
    let pa = alloc_frame()?;
    // SAFETY: a free frame we now own, mapped in the kernel window.
    fill(unsafe { core::slice::from_raw_parts_mut(super::phys_to_virt(pa) as *mut u8, sv39::PAGE_SIZE) });
    Some(pa)
}

fn alloc_frame() -> Option<usize> {
    let mut guard = FRAMES.lock();
    let f = guard.as_mut()?;
    let r = f.free.iter_mut().find(|r| r.size >= sv39::PAGE_SIZE)?;
    let pa = r.base;
    r.base += sv39::PAGE_SIZE;
    r.size -= sv39::PAGE_SIZE;
    f.taken += 1;
    Some(pa)
}

/// A zeroed block of `size` bytes aligned to `size` (a power of two), for the root task's
/// objects. The part of a region skipped for alignment stays free.
pub fn alloc_aligned(size: usize) -> Option<usize> {
    let mut guard = FRAMES.lock();
    let f = guard.as_mut()?;
    let i = f.free.iter().position(|r| r.base.next_multiple_of(size) + size <= r.end())?;
    let r = f.free[i];
    let pa = r.base.next_multiple_of(size);
    f.free[i] = Region { base: pa + size, size: r.end() - (pa + size) };
    if pa > r.base {
        let _ = f.free.push(Region { base: r.base, size: pa - r.base });
    }
    f.taken += size / sv39::PAGE_SIZE;
    // SAFETY: free RAM, mapped in the kernel window.
    unsafe { core::ptr::write_bytes(super::phys_to_virt(pa) as *mut u8, 0, size) };
    Some(pa)
}

/// Everything still free, handed over as Untyped memory: the allocator is empty afterwards.
pub fn take_remaining() -> heapless::Vec<Region, 16> {
    let mut guard = FRAMES.lock();
    let Some(f) = guard.as_mut() else { return heapless::Vec::new() };
    let mut out = core::mem::take(&mut f.free);
    out.retain(|r| r.size > 0);
    out.sort_unstable_by_key(|r| r.base);
    out
}

pub fn frames_taken() -> usize {
    FRAMES.lock().as_ref().map_or(0, |f| f.taken)
}
