//! The counting semaphore, the base of the mutex. `release` is safe from a user-interrupt
//! handler and from any hart: it never waits for the list lock (see `Semaphore::dispatch`).
use crate::list::{Node, WakeBatch};
use crate::lock::ListLock;
use crate::priority::{NoPriority, TaskPriority};
use crate::sync::{fence, AtomicUsize, Ordering};
use core::future::Future;
use core::marker::PhantomData;
use core::pin::Pin;
use core::task::{Context, Poll};

/// A counting semaphore for async tasks. Waiters queue by task priority, FIFO within one, and a
/// free permit never goes to a newcomer while a waiter is queued (no barging).
pub struct Semaphore<P: TaskPriority = NoPriority> {
    /// Free permits: released and not yet handed to a waiter.
    permits: AtomicUsize,
    /// Nodes on the list, readable without the lock.
    waiting: AtomicUsize,
    lock: ListLock,
    _prio: PhantomData<fn() -> P>,
}

impl<P: TaskPriority> Semaphore<P> {
    crate::sync::const_unless_loom! {
        pub fn new(permits: usize) -> Self {
            Semaphore {
                permits: AtomicUsize::new(permits),
                waiting: AtomicUsize::new(0),
                lock: ListLock::new(),
                _prio: PhantomData,
            }
        }
    }

    /// Wait for a permit and take it.
    pub fn acquire(&self) -> Acquire<'_, P> {
        Acquire { sem: self, node: Node::new(), state: State::Idle }
    }

    /// Take a permit if one is free and nobody waits for it.
    pub fn try_acquire(&self) -> bool {
        self.waiting.load(Ordering::Acquire) == 0 && self.take_permit()
    }

    /// Give a permit back: to the first waiter if there is one, else to the pool. Never waits,
    /// so a user-interrupt handler may call it (how a handler wakes a task blocked on it).
    pub fn release(&self) {
        self.permits.fetch_add(1, Ordering::Release);
        self.dispatch();
    }

    /// Free permits now (a snapshot).
    pub fn available(&self) -> usize {
        self.permits.load(Ordering::Acquire)
    }

    fn take_permit(&self) -> bool {
        let mut n = self.permits.load(Ordering::Relaxed);
        while n > 0 {
            match self.permits.compare_exchange_weak(n, n - 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => n = now,
            }
        }
        false
    }

    /// Hand free permits to waiters. Only ever *tries* the lock: if someone holds it, that
    /// holder runs this after releasing it (every lock use here is followed by a dispatch). The
    /// fence pairs with the one of whoever frees permits or queues, so of a releaser that finds
    /// the lock held and a holder that leaves, at least one sees the other's work.
    fn dispatch(&self) {
        loop {
            fence(Ordering::SeqCst);
            if self.waiting.load(Ordering::Relaxed) == 0 || self.permits.load(Ordering::Relaxed) == 0 {
                return;
            }
            let mut batch = WakeBatch::new();
            let granted = self.lock.try_with(|list| {
                while !batch.is_full() && self.take_permit() {
                    // SAFETY: the lock is held.
                    match unsafe { list.grant_first() } {
                        Some(w) => {
                            self.waiting.fetch_sub(1, Ordering::Relaxed);
                            batch.push(w);
                        }
                        None => {
                            self.permits.fetch_add(1, Ordering::Relaxed);
                            break;
                        }
                    }
                }
            });
            if granted.is_none() {
                return; // the holder dispatches when it leaves
            }
            batch.wake_all();
        }
    }
}

// SAFETY: every field is an atomic or behind the list lock.
unsafe impl<P: TaskPriority> Sync for Semaphore<P> {}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum State {
    Idle,
    Queued,
    Done,
}

/// The future of [`Semaphore::acquire`]. Dropping it while queued leaves the queue (a permit it
/// was handed meanwhile goes to the next waiter).
pub struct Acquire<'a, P: TaskPriority> {
    sem: &'a Semaphore<P>,
    node: Node,
    state: State,
}

impl<P: TaskPriority> Future for Acquire<'_, P> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: `node` is never moved out (the list may point at it until `Drop`).
        let this = unsafe { self.get_unchecked_mut() };
        let sem = this.sem;
        match this.state {
            State::Done => panic!("Acquire polled after it returned"),
            State::Idle => {
                if sem.try_acquire() {
                    this.state = State::Done;
                    return Poll::Ready(());
                }
                let prio = P::of(cx.waker());
                let got = sem.lock.with(|list| {
                    if list.is_empty() && sem.take_permit() {
                        return true;
                    }
                    // SAFETY: lock held; the node is pinned and `Drop` unlinks it.
                    unsafe { list.push(&this.node, prio, cx.waker()) };
                    sem.waiting.fetch_add(1, Ordering::Relaxed);
                    false
                });
                this.state = if got { State::Done } else { State::Queued };
                sem.dispatch();
            }
            State::Queued => {
                if !this.node.is_granted() {
                    sem.lock.with(|_| {
                        if !this.node.is_granted() {
                            this.node.set_waker(cx.waker());
                        }
                    });
                    sem.dispatch();
                }
            }
        }
        if this.state == State::Queued && this.node.is_granted() {
            this.state = State::Done;
        }
        match this.state {
            State::Done => Poll::Ready(()),
            _ => Poll::Pending,
        }
    }
}

impl<P: TaskPriority> Drop for Acquire<'_, P> {
    fn drop(&mut self) {
        if self.state != State::Queued {
            return;
        }
        let sem = self.sem;
        let granted = sem.lock.with(|list| {
            if self.node.is_granted() {
                return true;
            }
            // SAFETY: lock held, and not granted means still listed.
            unsafe { list.remove(&self.node) };
            sem.waiting.fetch_sub(1, Ordering::Relaxed);
            false
        });
        if granted {
            sem.release(); // handed a permit it will never use: pass it on
        } else {
            sem.dispatch();
        }
    }
}
