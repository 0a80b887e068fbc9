//! The adaptive wake-up protocol, shared by both directions (consumer waiting for items,
//! producer waiting for space).
//!
//! Sleeper: `announce` (flag := asleep, SeqCst fence), re-check the ring, then either `cancel`
//! (something arrived) or block; after waking, `cancel`.
//! Waker: publish its index (release store), SeqCst fence, then `take`: if the flag says asleep,
//! clear it and signal.
//!
//! The two fences order "my store, then your variable's load" on both sides (the
//! store-buffering pattern), so at least one side sees the other's store: either the sleeper's
//! re-check sees the new index and does not block, or the waker sees the flag and signals. The
//! signal (a U-notification's pending bit) is latched, so one sent between the re-check and
//! the block still ends the block.
use crate::layout::{ASLEEP, AWAKE};
use crate::sync::{fence, AtomicU32, Ordering};

pub(crate) fn announce(flag: &AtomicU32) {
    flag.store(ASLEEP, Ordering::Relaxed);
    fence(Ordering::SeqCst);
}

pub(crate) fn cancel(flag: &AtomicU32) {
    flag.store(AWAKE, Ordering::Relaxed);
}

/// Call after publishing an index (the fence is part of the protocol). True: the peer was
/// asleep; the flag is now clear and the caller must signal it (one signal per announcement, so
/// a burst of pushes sends one).
pub(crate) fn take(flag: &AtomicU32) -> bool {
    fence(Ordering::SeqCst);
    // A plain load first (under load the flag is clear and its line stays shared in both
    // caches), then clear it only if it still holds what we saw: unlike a swap, a stale read
    // never stores anything, so no extra "awake" store races with the sleeper's next
    // announcement.
    let mut seen = flag.load(Ordering::Relaxed);
    while seen != AWAKE {
        match flag.compare_exchange(seen, AWAKE, Ordering::Relaxed, Ordering::Relaxed) {
            Ok(_) => return true,
            Err(now) => seen = now,
        }
    }
    false
}
