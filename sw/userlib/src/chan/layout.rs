//! Where a channel lives in shared memory: a 256-byte header (the client's and the server's
//! open/closed word, each on its own cache line), then the request ring, then the reply ring
//! (`aring`'s layout, `capacity` items each).
use super::ChanError;
use aring::{ring_bytes, RingMem};
use core::sync::atomic::{AtomicU32, Ordering};

pub const CHAN_HEADER_BYTES: usize = 256;
const OPEN: u32 = 0;

/// Bytes of shared memory a channel with rings of `capacity` items occupies.
pub const fn chan_bytes(capacity: usize) -> usize {
    CHAN_HEADER_BYTES + 2 * ring_bytes(capacity)
}

/// One side of a channel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Client,
    Server,
}

/// A channel's location in this address space and its ring capacity, as this side was told at
/// setup (never read from the shared memory). Cheap to copy.
#[derive(Clone, Copy, Debug)]
pub struct ChanMem {
    base: *mut u8,
    capacity: usize,
}

// SAFETY: a location; everything accessed through it is atomic.
unsafe impl Send for ChanMem {}
unsafe impl Sync for ChanMem {}

impl ChanMem {
    /// The channel at `base`.
    ///
    /// # Safety
    /// `base` must be valid for reads and writes of `chan_bytes(capacity)` bytes for as long
    /// as the `ChanMem` and the endpoints made from it are used; the peer may write it at any
    /// time.
    pub unsafe fn new(base: *mut u8, capacity: usize) -> Result<ChanMem, ChanError> {
        if base.is_null() || !(base as usize).is_multiple_of(64) || !capacity.is_power_of_two() || capacity > 1 << 16 {
            return Err(ChanError::BadSetup);
        }
        Ok(ChanMem { base, capacity })
    }

    /// Lay out a fresh channel (both sides open, both rings empty). Done once by whoever
    /// creates the memory, before either side attaches.
    pub fn init(&self) -> Result<(), ChanError> {
        self.state(Side::Client).store(OPEN, Ordering::Relaxed);
        self.state(Side::Server).store(OPEN, Ordering::Relaxed);
        // SAFETY: the region was promised to `new`; both rings lie inside it.
        unsafe {
            RingMem::init(self.ring_ptr(0), self.capacity).map_err(|_| ChanError::BadSetup)?;
            RingMem::init(self.ring_ptr(1), self.capacity).map_err(|_| ChanError::BadSetup)?;
        }
        core::sync::atomic::fence(Ordering::SeqCst);
        Ok(())
    }

    pub fn capacity(&self) -> usize {
        self.capacity
    }

    pub(crate) fn requests(&self) -> RingMem {
        // SAFETY: inside the region (see `new`); the capacity was checked there.
        unsafe { RingMem::attach(self.ring_ptr(0), self.capacity).expect("capacity checked in new") }
    }

    pub(crate) fn replies(&self) -> RingMem {
        // SAFETY: as above.
        unsafe { RingMem::attach(self.ring_ptr(1), self.capacity).expect("capacity checked in new") }
    }

    fn ring_ptr(&self, which: usize) -> *mut u8 {
        self.base.wrapping_add(CHAN_HEADER_BYTES + which * ring_bytes(self.capacity))
    }

    fn state(&self, side: Side) -> &AtomicU32 {
        let off = match side {
            Side::Client => 0,
            Side::Server => 64,
        };
        // SAFETY: aligned (base is 64-byte aligned) and inside the region.
        unsafe { &*(self.base.add(off) as *const AtomicU32) }
    }

    /// Mark `side` gone: from now on the other side's calls (or dispatcher) end with
    /// [`ChanError::PeerGone`]. Called by a side that leaves, or by a supervisor (which must
    /// then signal the survivor's U-notification, as it may be asleep). Any non-zero value
    /// reads as closed, so a peer that scribbles on the word can only cut its own channel.
    pub fn close(&self, side: Side) {
        self.state(side).store(1, Ordering::Release);
    }

    pub fn is_closed(&self, side: Side) -> bool {
        self.state(side).load(Ordering::Acquire) != OPEN
    }
}
