//! How a primitive learns the priority of the task that waits (to queue it) and raises the
//! priority of the task that holds a mutex (the ceiling). Supplied by the runtime: userlib's
//! executor reads both from the task slot behind a task waker.
use core::task::Waker;

/// A runtime's task priorities (0 lowest, 255 highest), reached through the waker of the task
/// being polled.
pub trait TaskPriority {
    /// The raise [`TaskPriority::boost`] made; dropping it puts the old priority back.
    type Boost;

    /// The priority of the task `waker` wakes (0 for anything that is not a task).
    fn of(waker: &Waker) -> u8;

    /// Raise the task `waker` wakes (the one being polled) to at least `ceiling` until the
    /// returned value is dropped, on the thread that polls it.
    fn boost(waker: &Waker, ceiling: u8) -> Self::Boost;
}

/// No priorities: every waiter is equal (plain FIFO) and no ceiling is applied.
pub struct NoPriority;

impl TaskPriority for NoPriority {
    type Boost = ();

    fn of(_: &Waker) -> u8 {
        0
    }

    fn boost(_: &Waker, _: u8) {}
}
