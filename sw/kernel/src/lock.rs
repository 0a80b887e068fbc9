//! The big kernel lock (as seL4 SMP): every kernel entry from user mode, and the idle loop's
//! look at the ready queues, runs under it. A ticket lock, so harts are served in order.
//!
//! Under QEMU with more vCPUs than free host cores a ticket lock convoys: each hand-over waits
//! until the host schedules the one vCPU whose ticket is next, so kernel entries drop to a few
//! hundred per second while every hart sits in `acquire` (seen in the fuzzer with a loaded
//! host; the counters keep advancing, it is not a deadlock). Real harts do not have this.
use core::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);
static SERVING: AtomicUsize = AtomicUsize::new(0);
static OWNER: AtomicUsize = AtomicUsize::new(usize::MAX);
/// Cycle count when the lock was taken, and the longest hold since the last reset
/// (`abi::stat::LOCK_HOLD_MAX`): how long one hart can keep every other out of the kernel.
static SINCE: AtomicU64 = AtomicU64::new(0);
static MAX_HOLD: AtomicU64 = AtomicU64::new(0);

pub fn acquire() {
    let ticket = NEXT.fetch_add(1, Ordering::Relaxed);
    while SERVING.load(Ordering::Acquire) != ticket {
        core::hint::spin_loop();
    }
    OWNER.store(crate::arch::cpu::hart_id(), Ordering::Relaxed);
    SINCE.store(crate::arch::cpu::cycles(), Ordering::Relaxed);
}

pub fn release() {
    debug_assert!(held());
    let held_for = crate::arch::cpu::cycles().wrapping_sub(SINCE.load(Ordering::Relaxed));
    // Only the holder writes; a plain compare is enough.
    if held_for > MAX_HOLD.load(Ordering::Relaxed) {
        MAX_HOLD.store(held_for, Ordering::Relaxed);
    }
    OWNER.store(usize::MAX, Ordering::Relaxed);
    SERVING.fetch_add(1, Ordering::Release);
}

/// The longest hold so far (cycles of the holding hart), optionally starting over.
pub fn max_hold(reset: bool) -> u64 {
    if reset { MAX_HOLD.swap(0, Ordering::Relaxed) } else { MAX_HOLD.load(Ordering::Relaxed) }
}

/// This hart holds the lock (for assertions).
pub fn held() -> bool {
    OWNER.load(Ordering::Relaxed) == crate::arch::cpu::hart_id()
}
