//! Blocking primitives for async tasks: a counting [`Semaphore`], a [`Mutex`] and a
//! [`Condvar`], usable by tasks of one process on several harts and (the semaphore's
//! `release`) from user-interrupt handlers.
//!
//! No heap: a waiting future's queue entry lives inside the future, which is pinned while it
//! waits (in its task slot); dropping the future takes it off the queue. A primitive's queue
//! sits behind a short spin lock held only to link or unlink an entry; wakers are called after
//! it is released. A waiter is woken through its task's `Waker`, so it needs nothing of the
//! runtime but wakers, and blocks nothing: the executor runs other tasks meanwhile.
//!
//! Order: waiters are served by task priority, FIFO within one priority; a free permit is never
//! taken past a queued waiter (no barging), so equal-priority waiters are served in arrival order.
//!
//! Priority inversion: immediate priority ceiling. A [`Mutex::with_ceiling`] raises its holder
//! to the ceiling (the highest priority of the tasks that lock it) from the moment it takes the
//! lock until the guard is dropped, on the holder's own executor, which is where a task of middle
//! priority could otherwise keep it from running. The bound on a high-priority waiter's wait is
//! then the longest critical section, never the middle tasks' work. Semaphores and condition
//! variables have no owner, so no ceiling: a condition wait drops the mutex (and its boost) and
//! takes both again when notified.
//!
//! The runtime supplies priorities through [`TaskPriority`] (userlib's `sync` module binds the
//! executor's); [`NoPriority`] makes every waiter equal.
#![cfg_attr(not(test), no_std)]

mod condvar;
mod list;
mod lock;
mod mutex;
mod priority;
mod semaphore;
mod sync;

#[cfg(all(test, loom))]
mod loom_tests;
#[cfg(all(test, not(loom)))]
mod tests;

pub use condvar::{Condvar, Wait};
pub use mutex::{Lock, Mutex, MutexGuard};
pub use priority::{NoPriority, TaskPriority};
pub use semaphore::{Acquire, Semaphore};
