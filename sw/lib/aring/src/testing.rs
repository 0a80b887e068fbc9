//! A ring on the heap for the tests (and loom, whose atomics cannot live in raw memory), with
//! direct access to the shared words so tests can play a hostile peer.
use crate::layout::{Header, Slot};
use crate::RingMem;

// Under loom only `mem` is used; the boxes are kept for ownership.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) struct OwnedRing {
    pub hdr: Box<Header>,
    pub slots: Box<[Slot]>,
    pub mem: RingMem,
}

impl OwnedRing {
    /// An empty ring of `capacity` items whose indices start at `start` (to test counter
    /// wrap-around).
    pub fn new(capacity: usize, start: u64) -> OwnedRing {
        let hdr = Box::new(Header::new(start));
        let slots: Box<[Slot]> = (0..capacity).map(|_| Slot::new()).collect();
        // SAFETY: both boxes live as long as the OwnedRing, which tests keep past every handle.
        let mem = unsafe { RingMem::from_parts(&*hdr, slots.as_ptr(), capacity) }.unwrap();
        OwnedRing { hdr, slots, mem }
    }
}
