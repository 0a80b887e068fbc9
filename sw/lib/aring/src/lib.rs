//! Lock-free single-producer/single-consumer rings of 64-byte [`Item`]s in memory shared
//! between two address spaces, with the per-side sleep flags of adaptive notification: a
//! producer signals the consumer only when the consumer announced that it sleeps, so a busy
//! consumer is fed by polling alone (README.md has the protocol and how to model-check it).
//!
//! Nothing read from the shared memory is trusted: capacity and location come from the local
//! setup ([`RingMem`]), each side keeps its own index and validates the peer's on every read
//! ([`RingError::Corrupt`], sticky), slots are addressed by `index & mask`, and every shared
//! word is accessed atomically, so a hostile peer can feed garbage items but never cause
//! undefined behaviour, a panic or an out-of-bounds access.
#![cfg_attr(not(test), no_std)]

mod consumer;
mod flag;
mod item;
mod layout;
mod mem;
mod producer;
mod sync;

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(test)]
mod testing;
#[cfg(all(test, not(loom)))]
mod tests;

pub use consumer::{Consumer, Popped};
pub use item::{Item, ITEM_WORDS, PAYLOAD_WORDS};
pub use layout::{ring_bytes, Header, Slot, HEADER_BYTES, MAX_CAPACITY};
pub use mem::RingMem;
pub use producer::Producer;

/// What went wrong with a ring.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RingError {
    /// No free slot (push only); try again after the consumer made room.
    Full,
    /// The peer wrote an impossible index: the ring is unusable from now on.
    Corrupt,
    /// Setup was given a capacity that is not a power of two up to [`MAX_CAPACITY`], or a null
    /// location.
    BadSetup,
}

/// Whether the operation just done must be followed by a signal (U-notification) to the peer.
#[must_use = "the peer may be asleep waiting for this signal"]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Notify {
    /// The peer announced sleep; send it its notification.
    Signal,
    /// The peer is awake and will see the change by itself.
    Quiet,
}

impl From<bool> for Notify {
    fn from(signal: bool) -> Notify {
        if signal {
            Notify::Signal
        } else {
            Notify::Quiet
        }
    }
}
