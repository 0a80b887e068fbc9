//! How an executor with nothing to run waits, supplied by the program: on the target a
//! U-notification `Wait` (whose pending bits latch a signal sent before it), in host tests a
//! condition variable.

/// Blocks the executor's thread until it has work again.
pub trait Park: Sync {
    /// Block until [`Park::unpark_from_irq`] has been called since the previous return (a call
    /// made before `park` must make it return at once: the executor announces sleep, re-checks
    /// its queues, then parks, and a wake-up in between must not be lost). May return
    /// spuriously.
    fn park(&self);

    /// Called by an executor that keeps finding work, every [`BUSY_POLL_INTERVAL`] task polls:
    /// the moment to look at event sources that only the hook watches (a channel's rings), so
    /// that a thread that never idles still sees them. Must not block. Default: nothing.
    fn poll_busy(&self) {}

    /// Send what the thread's tasks held back to send in batches (requests staged on a
    /// channel): called when `block_on` returns, so nothing waits for a park that may not come
    /// soon. Must not block. Default: nothing.
    fn flush(&self) {}

    /// End the current or next [`Park::park`]. Called by wakers on any thread or in a user
    /// interrupt handler that interrupted the executor itself: must not block, allocate or take
    /// a lock.
    fn unpark_from_irq(&self);
}

/// Task polls between two [`Park::poll_busy`] calls of a busy executor.
pub const BUSY_POLL_INTERVAL: u32 = 64;
