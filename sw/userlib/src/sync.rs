//! Blocking primitives for the async runtime's tasks (`sw/lib/tasksync`, README "Blocking
//! primitives"), bound to the executor's task priorities: waiters queue by their task's
//! priority, FIFO within one, and a [`Mutex::with_ceiling`] raises its holder to the ceiling
//! while it holds the lock (immediate priority ceiling: the policy against priority inversion).
//! Usable by tasks on several harts; [`Semaphore::release`] also from a user-interrupt handler.
//!
//! ```ignore
//! static LOG: Mutex<Log> = Mutex::with_ceiling(200, Log::new()); // 200: its highest locker
//! static READY: Semaphore = Semaphore::new(0);
//! rt.spawn(10, async { READY.acquire().await; LOG.lock().await.push(1) })?;
//! READY.release(); // from anywhere: another hart, a handler
//! ```
use crate::task::priority::{boost, priority_of, PriorityBoost};
use core::task::Waker;

pub use tasksync::{Condvar, TaskPriority};

/// The executor's task priorities (`crate::task`), as the primitives see them.
pub struct TaskPriorities;

impl TaskPriority for TaskPriorities {
    type Boost = PriorityBoost;

    fn of(w: &Waker) -> u8 {
        priority_of(w).unwrap_or(0)
    }

    fn boost(w: &Waker, ceiling: u8) -> PriorityBoost {
        boost(w, ceiling)
    }
}

pub type Semaphore = tasksync::Semaphore<TaskPriorities>;
pub type Acquire<'a> = tasksync::Acquire<'a, TaskPriorities>;
pub type Mutex<T> = tasksync::Mutex<T, TaskPriorities>;
pub type MutexGuard<'a, T> = tasksync::MutexGuard<'a, T, TaskPriorities>;
pub type Lock<'a, T> = tasksync::Lock<'a, T, TaskPriorities>;
pub type Wait<'a, T> = tasksync::Wait<'a, T, TaskPriorities>;

#[cfg(test)]
mod tests;
