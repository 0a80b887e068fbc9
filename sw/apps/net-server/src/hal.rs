//! The virtio driver's view of memory: a pool of physically contiguous frames the root task
//! mapped at `DMA_VADDR` (their physical base it read with Page_GetAddress), handed out page by
//! page, and the device's register page at `MMIO_VADDR`. Buffers the device reads or writes
//! must lie in the pool: their physical address is their offset in it.
use core::ptr::NonNull;
use core::sync::atomic::{AtomicUsize, Ordering};
use virtio_drivers::{BufferDirection, Hal, PhysAddr, PAGE_SIZE};

static VA: AtomicUsize = AtomicUsize::new(0);
static PA: AtomicUsize = AtomicUsize::new(0);
static BYTES: AtomicUsize = AtomicUsize::new(0);
/// Bytes of the pool handed out (the driver's queues and our packet buffers, then the sockets'
/// buffers, `stack::init`; nothing is given back: all live as long as the process).
static USED: AtomicUsize = AtomicUsize::new(0);
static MMIO_VA: AtomicUsize = AtomicUsize::new(0);
static MMIO_PA: AtomicUsize = AtomicUsize::new(0);

/// Set the pool and the device page up, once, before the driver is made.
pub fn init(va: usize, pa: usize, bytes: usize, mmio_va: usize, mmio_pa: usize) {
    VA.store(va, Ordering::Relaxed);
    PA.store(pa, Ordering::Relaxed);
    BYTES.store(bytes, Ordering::Relaxed);
    MMIO_VA.store(mmio_va, Ordering::Relaxed);
    MMIO_PA.store(mmio_pa, Ordering::Relaxed);
}

/// `pages` zeroed pages of the pool: (physical, virtual) address, or None when it is used up.
/// Zeroed already: the root task retyped the pool's frames (Retype zeroes them) and the bump
/// hands each byte out once, so clearing it again would only cost (~0.5 M cycles on the RTL).
pub fn alloc(pages: usize) -> Option<(usize, *mut u8)> {
    let len = pages * PAGE_SIZE;
    let off = USED.fetch_add(len, Ordering::Relaxed);
    if off + len > BYTES.load(Ordering::Relaxed) {
        USED.fetch_sub(len, Ordering::Relaxed);
        return None;
    }
    let va = (VA.load(Ordering::Relaxed) + off) as *mut u8;
    Some((PA.load(Ordering::Relaxed) + off, va))
}

/// The physical address of `len` bytes at `va`, which must lie inside the pool.
pub fn phys(va: usize, len: usize) -> usize {
    let base = VA.load(Ordering::Relaxed);
    let end = base + BYTES.load(Ordering::Relaxed);
    // A buffer outside the pool has no address the device could use: a driver bug.
    assert!(va >= base && va + len <= end, "DMA buffer {va:#x}+{len} outside the pool");
    PA.load(Ordering::Relaxed) + (va - base)
}

pub struct PoolHal;

// SAFETY: dma_alloc returns zeroed, page-aligned, unaliased pool memory (or paddr 0 when the
// pool is exhausted, which the driver reports as a DMA error); share translates only addresses
// inside the pool, whose frames are contiguous; QEMU's virtio is cache coherent, so sharing
// needs no copy or flush.
unsafe impl Hal for PoolHal {
    fn dma_alloc(pages: usize, _dir: BufferDirection) -> (PhysAddr, NonNull<u8>) {
        match alloc(pages) {
            Some((pa, va)) => (pa as PhysAddr, NonNull::new(va).expect("pool is mapped above 0")),
            None => (0, NonNull::dangling()),
        }
    }

    unsafe fn dma_dealloc(_paddr: PhysAddr, _vaddr: NonNull<u8>, _pages: usize) -> i32 {
        // Queues live as long as the process (see USED).
        0
    }

    unsafe fn mmio_phys_to_virt(paddr: PhysAddr, size: usize) -> NonNull<u8> {
        let (pa, va) = (MMIO_PA.load(Ordering::Relaxed), MMIO_VA.load(Ordering::Relaxed));
        let off = (paddr as usize).wrapping_sub(pa);
        assert!(off + size <= PAGE_SIZE, "MMIO {paddr:#x} outside the device page");
        NonNull::new((va + off) as *mut u8).expect("device page is mapped above 0")
    }

    unsafe fn share(buffer: NonNull<[u8]>, _dir: BufferDirection) -> PhysAddr {
        phys(buffer.as_ptr() as *mut u8 as usize, buffer.len()) as PhysAddr
    }

    unsafe fn unshare(_paddr: PhysAddr, _buffer: NonNull<[u8]>, _dir: BufferDirection) {}
}
