//! The async runtime: one executor per thread running Rust futures as tasks, with a priority
//! scheduler (256 priorities, a two-level bitmap for an O(1) pick, FIFO within a priority so
//! tasks that yield or wake take turns), wakers that are lock-free and so safe to call from a
//! user-interrupt handler or another thread, spawn with a priority, join handles that cancel on
//! drop, `yield_now` and `block_on`. An executor with nothing to run parks through a
//! program-supplied [`Park`] (a U-notification Wait on the target): it never spins.
//!
//! No heap: tasks live in the fixed slots of an [`Executor`] (normally a `static`), see there.
//!
//! ```ignore
//! static EXEC: Executor<64, 512> = Executor::new();
//! let rt = EXEC.claim(&MY_PARK).unwrap();
//! let h = rt.spawn(10, async { 6 * 7 }).unwrap();
//! assert_eq!(rt.block_on(h), 42);
//! ```
mod bitmap;
mod executor;
mod header;
mod join;
mod park;
pub(crate) mod priority;
mod runqueue;
mod shared;
mod slot;
pub mod timer;
mod waker;
mod yield_now;

#[cfg(test)]
mod tests;

pub use bitmap::PRIORITIES;
pub use executor::{Executor, Handle, Priority, SpawnError};
pub use join::JoinHandle;
pub use park::{Park, BUSY_POLL_INTERVAL};
pub use priority::PriorityBoost;
pub use slot::STORAGE_ALIGN;
pub use waker::wake_local;
pub use yield_now::{yield_now, YieldNow};
