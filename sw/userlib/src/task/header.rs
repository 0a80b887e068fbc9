//! The part of a task slot that wakers use: the scheduled bit, the reference count and the list
//! links, all atomics so any thread or interrupt handler may touch them.
//!
//! References to a slot: one while its future exists ("alive"), one for the `JoinHandle`, one
//! while the SCHEDULED bit is set (the run queue's), one per `Waker`. The slot returns to the
//! free list when the count reaches zero; by then its future and output are gone, so freeing
//! needs no executor state and is safe from a waker dropped in an interrupt handler.
use super::shared::Shared;
use core::sync::atomic::{fence, AtomicPtr, AtomicU32, Ordering};

/// The slot is in the inbox or the run queue, or being polled after being taken from it.
pub(crate) const SCHEDULED: u32 = 1;

pub(crate) struct Header {
    pub state: AtomicU32,
    pub refs: AtomicU32,
    /// Link in the inbox or the run queue (a slot is in at most one of them).
    pub next: AtomicU32,
    /// Link in the free list.
    pub free_next: AtomicU32,
    /// Written when the slot is first handed out, before any waker exists.
    index: AtomicU32,
    shared: AtomicPtr<Shared>,
}

impl Header {
    pub const fn new() -> Header {
        Header {
            state: AtomicU32::new(0),
            refs: AtomicU32::new(0),
            next: AtomicU32::new(u32::MAX),
            free_next: AtomicU32::new(u32::MAX),
            index: AtomicU32::new(u32::MAX),
            shared: AtomicPtr::new(core::ptr::null_mut()),
        }
    }

    pub fn index(&self) -> u32 {
        self.index.load(Ordering::Relaxed)
    }

    fn shared(&self) -> &Shared {
        // SAFETY: set by `start` to the owning executor, which is 'static, before any reference
        // that could lead here existed.
        unsafe { &*self.shared.load(Ordering::Relaxed) }
    }

    /// Make a free slot a new, scheduled task holding the alive, handle and queue references.
    /// Executor thread only, with the slot off every list.
    pub fn start(&self, index: u32, shared: &'static Shared) {
        self.index.store(index, Ordering::Relaxed);
        self.shared.store(shared as *const Shared as *mut Shared, Ordering::Relaxed);
        self.refs.store(3, Ordering::Relaxed);
        self.state.store(SCHEDULED, Ordering::Relaxed);
        shared.push_inbox(self);
        shared.notify();
    }

    pub fn add_ref(&self) {
        let old = self.refs.fetch_add(1, Ordering::Relaxed);
        // Wakers leaked by the billion would wrap the count and free a live slot.
        assert!(old < u32::MAX / 2, "task reference count overflow");
    }

    pub fn release_ref(&self) {
        if self.refs.fetch_sub(1, Ordering::Release) == 1 {
            // Everything every other holder did with the slot happens before its reuse.
            fence(Ordering::Acquire);
            self.shared().push_free(self);
        }
    }

    /// [`Header::schedule`] from the executor's own thread, outside any interrupt handler: the
    /// slot goes to the executor's local list (no inbox CAS, no fence, no unpark: the thread
    /// is running). Relaxed: whatever the waker did was done by this thread.
    pub fn schedule_local(&self, owned: bool) {
        if self.state.fetch_or(SCHEDULED, Ordering::Relaxed) & SCHEDULED == 0 {
            if !owned {
                self.add_ref();
            }
            self.shared().push_local(self);
        } else if owned {
            self.release_ref();
        }
    }

    /// Wake the task. `owned` says whether the caller gives up a reference of its own (a
    /// consumed `Waker`); the run queue keeps one while the task is scheduled.
    pub fn schedule(&self, owned: bool) {
        // AcqRel: what the waker did before waking is visible to the poll that follows.
        if self.state.fetch_or(SCHEDULED, Ordering::AcqRel) & SCHEDULED == 0 {
            if !owned {
                self.add_ref();
            }
            let shared = self.shared();
            shared.push_inbox(self);
            shared.notify();
        } else if owned {
            self.release_ref();
        }
    }
}
