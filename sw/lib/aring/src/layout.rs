//! What lives in the shared frame: a header of four cache lines (the two indices and the two
//! sleep flags, each on its own line so the producer's and the consumer's writes never share
//! one) followed by `capacity` item slots.
use crate::item::ITEM_WORDS;
use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// A flag value: the side is running and will look at the ring again by itself.
pub(crate) const AWAKE: u32 = 0;
/// A flag value: the side is (about to be) blocked and must be signalled. Any value other than
/// [`AWAKE`] counts as asleep, so a peer writing garbage can only cause extra signals.
pub(crate) const ASLEEP: u32 = 1;

/// Largest capacity a ring may be set up with (keeps every index computation far from overflow
/// and a ring well below any address-space size).
pub const MAX_CAPACITY: usize = 1 << 24;

#[repr(C, align(64))]
pub(crate) struct Line<T>(pub T);

/// The ring's control block at the start of the shared memory.
#[repr(C)]
pub struct Header {
    /// Items taken so far (free-running); written by the consumer only.
    pub(crate) head: Line<AtomicU64>,
    /// Items published so far (free-running); written by the producer only.
    pub(crate) tail: Line<AtomicU64>,
    /// The consumer waits for items (written by the consumer, cleared by the producer that
    /// signals it).
    pub(crate) consumer_sleep: Line<AtomicU32>,
    /// The producer waits for space (the mirror image).
    pub(crate) producer_sleep: Line<AtomicU32>,
}

impl Header {
    /// A fresh header: empty at index `start`, both sides awake.
    pub fn new(start: u64) -> Header {
        Header {
            head: Line(AtomicU64::new(start)),
            tail: Line(AtomicU64::new(start)),
            consumer_sleep: Line(AtomicU32::new(AWAKE)),
            producer_sleep: Line(AtomicU32::new(AWAKE)),
        }
    }
}

/// One item's cache line, accessed word by word with relaxed atomics: the peer may write it at
/// any time (a hostile one even while we read), and atomics make that a garbage value instead
/// of a data race. On RISC-V these are plain `ld`/`sd`.
#[repr(C, align(64))]
pub struct Slot {
    pub(crate) words: [AtomicU64; ITEM_WORDS],
}

impl Slot {
    pub fn new() -> Slot {
        Slot { words: core::array::from_fn(|_| AtomicU64::new(0)) }
    }

    pub(crate) fn write(&self, w: [u64; ITEM_WORDS]) {
        for (a, v) in self.words.iter().zip(w) {
            a.store(v, Ordering::Relaxed);
        }
    }

    pub(crate) fn read(&self) -> [u64; ITEM_WORDS] {
        core::array::from_fn(|i| self.words[i].load(Ordering::Relaxed))
    }
}

impl Default for Slot {
    fn default() -> Slot {
        Slot::new()
    }
}

/// Bytes of shared memory a ring of `capacity` items occupies (header + slots), 64-byte aligned.
pub const fn ring_bytes(capacity: usize) -> usize {
    HEADER_BYTES + capacity * 64
}

/// Size of [`Header`] in the shared layout.
pub const HEADER_BYTES: usize = 256;

#[cfg(not(loom))]
const _: () = {
    assert!(core::mem::size_of::<Header>() == HEADER_BYTES);
    assert!(core::mem::size_of::<Slot>() == 64 && core::mem::align_of::<Slot>() == 64);
};
