//! The big kernel lock (as seL4 SMP): every kernel entry from user mode, and the idle loop's
//! look at the ready queues, runs under it. A ticket lock, so harts are served in order.
use core::sync::atomic::{AtomicUsize, Ordering};

static NEXT: AtomicUsize = AtomicUsize::new(0);
static SERVING: AtomicUsize = AtomicUsize::new(0);
static OWNER: AtomicUsize = AtomicUsize::new(usize::MAX);

pub fn acquire() {
    let ticket = NEXT.fetch_add(1, Ordering::Relaxed);
    while SERVING.load(Ordering::Acquire) != ticket {
        core::hint::spin_loop();
    }
    OWNER.store(crate::arch::cpu::hart_id(), Ordering::Relaxed);
}

pub fn release() {
    debug_assert!(held());
    OWNER.store(usize::MAX, Ordering::Relaxed);
    SERVING.fetch_add(1, Ordering::Release);
}

/// This hart holds the lock (for assertions).
pub fn held() -> bool {
    OWNER.load(Ordering::Relaxed) == crate::arch::cpu::hart_id()
}
