//! [`RingMem`]: where a ring is, as one side was told at setup. Capacity and pointers come from
//! the local setup, never from the shared memory, so nothing the peer writes can move them.
use crate::layout::{Header, Slot, MAX_CAPACITY};
use crate::{Consumer, Producer, RingError};
use core::ptr::NonNull;

/// A ring's location in this address space and its capacity. Cheap to copy; make one
/// [`Producer`] or one [`Consumer`] from it.
#[derive(Clone, Copy, Debug)]
pub struct RingMem {
    pub(crate) hdr: NonNull<Header>,
    pub(crate) slots: NonNull<Slot>,
    /// capacity - 1 (capacity is a power of two): slot of index i is i & mask.
    pub(crate) mask: u64,
}

// SAFETY: the ring is built for concurrent use from two sides; a RingMem is only a location
// (every access through it is atomic).
unsafe impl Send for RingMem {}
unsafe impl Sync for RingMem {}

impl RingMem {
    /// The ring at `mem` (laid out as [`crate::ring_bytes`] says), initialised by the peer or
    /// by [`RingMem::init`].
    ///
    /// # Safety
    /// `mem` must be 64-byte aligned, valid for reads and writes of `ring_bytes(capacity)`
    /// bytes holding initialised memory (any contents), and stay mapped while this `RingMem` or
    /// a handle made from it is in use. The peer may write it at any time.
    #[cfg(not(loom))]
    pub unsafe fn attach(mem: *mut u8, capacity: usize) -> Result<RingMem, RingError> {
        let hdr = mem as *mut Header;
        // SAFETY: the caller's promise covers the slots after the header.
        unsafe { RingMem::from_parts(hdr, hdr.add(1) as *mut Slot, capacity) }
    }

    /// Lay a fresh, empty ring out at `mem` and return it. Do this once, before the peer
    /// attaches (the setup protocol orders the two).
    ///
    /// # Safety
    /// As [`RingMem::attach`], except that `mem` may be uninitialised.
    #[cfg(not(loom))]
    pub unsafe fn init(mem: *mut u8, capacity: usize) -> Result<RingMem, RingError> {
        check_capacity(capacity)?;
        let hdr = mem as *mut Header;
        // SAFETY: in bounds and aligned by the caller's promise; plain writes initialise the
        // memory before anything reads it through an atomic.
        unsafe {
            hdr.write(Header::new(0));
            let slots = hdr.add(1) as *mut Slot;
            for i in 0..capacity {
                slots.add(i).write(Slot::new());
            }
            RingMem::from_parts(hdr, slots, capacity)
        }
    }

    /// The ring whose header and slots are at the given (separate) places: how tests, and loom,
    /// which cannot place its atomics in raw memory, build one.
    ///
    /// # Safety
    /// `hdr` must point to a live [`Header`] and `slots` to `capacity` live [`Slot`]s, for as
    /// long as this `RingMem` or a handle made from it is in use.
    pub unsafe fn from_parts(hdr: *const Header, slots: *const Slot, capacity: usize) -> Result<RingMem, RingError> {
        check_capacity(capacity)?;
        Ok(RingMem {
            hdr: NonNull::new(hdr as *mut Header).ok_or(RingError::BadSetup)?,
            slots: NonNull::new(slots as *mut Slot).ok_or(RingError::BadSetup)?,
            mask: capacity as u64 - 1,
        })
    }

    pub fn capacity(&self) -> usize {
        self.mask as usize + 1
    }

    /// The producing side's handle. There must be one producer per ring (a second one cannot
    /// cause undefined behaviour, only garbage items, as a hostile peer could).
    pub fn producer(self) -> Producer {
        Producer::new(self)
    }

    /// The consuming side's handle (one per ring).
    pub fn consumer(self) -> Consumer {
        Consumer::new(self)
    }

    pub(crate) fn header(&self) -> &Header {
        // SAFETY: live for our lifetime (constructor's contract); only atomics inside.
        unsafe { self.hdr.as_ref() }
    }

    /// The slot that index `i` maps to: always in bounds, whatever `i` is.
    pub(crate) fn slot(&self, i: u64) -> &Slot {
        // SAFETY: (i & mask) < capacity slots, live by the constructor's contract.
        unsafe { &*self.slots.as_ptr().add((i & self.mask) as usize) }
    }
}

fn check_capacity(capacity: usize) -> Result<(), RingError> {
    if capacity.is_power_of_two() && capacity <= MAX_CAPACITY {
        Ok(())
    } else {
        Err(RingError::BadSetup)
    }
}
