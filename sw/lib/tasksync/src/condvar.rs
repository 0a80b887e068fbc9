//! The condition variable: a wait list of its own; a waiter queues before it unlocks the mutex,
//! so a notify after the unlock cannot miss it.
use crate::list::{Node, WakeBatch};
use crate::lock::ListLock;
use crate::mutex::{Lock, Mutex, MutexGuard};
use crate::priority::TaskPriority;
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll};

/// An async condition variable, used with a [`Mutex`]. Waiters are notified by priority, FIFO
/// within one. Notify from task code (it takes the list lock), not from interrupt handlers: a
/// handler releases a [`crate::Semaphore`] instead.
pub struct Condvar {
    lock: ListLock,
}

impl Condvar {
    crate::sync::const_unless_loom! {
        pub fn new() -> Condvar {
            Condvar { lock: ListLock::new() }
        }
    }

    /// Unlock `guard`'s mutex and wait for a notify, then lock it again. As with every
    /// condition variable, re-check the condition when it returns.
    pub fn wait<'a, T, P: TaskPriority>(&'a self, guard: MutexGuard<'a, T, P>) -> Wait<'a, T, P> {
        Wait { cv: self, mutex: guard.mutex(), guard: Some(guard), node: Node::new(), relock: None }
    }

    /// Wake the first waiter. Returns whether there was one.
    pub fn notify_one(&self) -> bool {
        // SAFETY: the closure runs with the lock held.
        match self.lock.with(|list| unsafe { list.grant_first() }) {
            Some(w) => {
                if let Some(w) = w {
                    w.wake();
                }
                true
            }
            None => false,
        }
    }

    /// Wake every waiter queued now.
    pub fn notify_all(&self) {
        loop {
            let mut batch = WakeBatch::new();
            self.lock.with(|list| {
                while !batch.is_full() {
                    // SAFETY: the lock is held.
                    match unsafe { list.grant_first() } {
                        Some(w) => batch.push(w),
                        None => break,
                    }
                }
            });
            let more = batch.is_full();
            batch.wake_all();
            if !more {
                return;
            }
        }
    }
}

impl Default for Condvar {
    fn default() -> Self {
        Self::new()
    }
}

/// The future of [`Condvar::wait`]: the guard again once notified and re-locked. Dropping it
/// after it was notified passes the notification on to the next waiter.
pub struct Wait<'a, T, P: TaskPriority> {
    cv: &'a Condvar,
    mutex: &'a Mutex<T, P>,
    /// Until the node is queued.
    guard: Option<MutexGuard<'a, T, P>>,
    node: Node,
    /// Once notified.
    relock: Option<Lock<'a, T, P>>,
}

impl<'a, T, P: TaskPriority> Future for Wait<'a, T, P> {
    type Output = MutexGuard<'a, T, P>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: `node` and `relock` are never moved out (the list may point at the node).
        let this = unsafe { self.get_unchecked_mut() };
        if let Some(guard) = this.guard.take() {
            let prio = P::of(cx.waker());
            // SAFETY: lock held; the node is pinned and `Drop` unlinks it.
            this.cv.lock.with(|list| unsafe { list.push(&this.node, prio, cx.waker()) });
            drop(guard); // unlock only now: a notify from here on finds the node
        }
        if this.relock.is_none() {
            if !this.node.is_granted() {
                let granted = this.cv.lock.with(|_| {
                    let g = this.node.is_granted();
                    if !g {
                        this.node.set_waker(cx.waker());
                    }
                    g
                });
                if !granted {
                    return Poll::Pending;
                }
            }
            this.relock = Some(this.mutex.lock());
        }
        let relock = this.relock.as_mut().expect("set above");
        // SAFETY: `relock` lives in the pinned future and is never moved out.
        unsafe { Pin::new_unchecked(relock) }.poll(cx)
    }
}

impl<T, P: TaskPriority> Drop for Wait<'_, T, P> {
    fn drop(&mut self) {
        if self.guard.is_some() || self.relock.is_some() {
            return; // never queued, or already off the list
        }
        let granted = self.cv.lock.with(|list| {
            if self.node.is_granted() {
                return true;
            }
            // SAFETY: lock held, and queued but not granted means listed.
            unsafe { list.remove(&self.node) };
            false
        });
        if granted {
            self.cv.notify_one();
        }
    }
}
