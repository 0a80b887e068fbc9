//! A FIFO gate of `permits` for the tasks of one thread: at most that many async system calls
//! in flight (the syscall buffer's table size), the others asleep in arrival order. Without
//! it, tasks beyond the buffer's table would re-poll themselves until a slot frees, and a
//! thread that never idles keeps the client it shares a hart with from running.
//!
//! Tickets: a task takes the next ticket and may pass once `granted` exceeds it; each release
//! grants one more and wakes exactly the ticket that became eligible. Up to `W` tasks may wait
//! at once (each one's waker sits at its ticket modulo W).
use core::cell::{Cell, UnsafeCell};
use core::future::Future;
use core::pin::Pin;
use core::task::{Context, Poll, Waker};

pub struct Gate<const W: usize> {
    next: Cell<u64>,
    granted: Cell<u64>,
    wakers: UnsafeCell<[Option<Waker>; W]>,
}

// SAFETY: used by one thread only (its tasks take turns; nothing here runs in a handler).
unsafe impl<const W: usize> Sync for Gate<W> {}

impl<const W: usize> Gate<W> {
    pub const fn new(permits: u64) -> Self {
        Gate { next: Cell::new(0), granted: Cell::new(permits), wakers: UnsafeCell::new([const { None }; W]) }
    }

    /// Wait for a permit (give it back with `release`). Must not be dropped before it is ready.
    pub fn acquire(&self) -> Acquire<'_, W> {
        let t = self.next.get();
        self.next.set(t + 1);
        Acquire { gate: self, ticket: t }
    }

    pub fn release(&self) {
        let g = self.granted.get();
        self.granted.set(g + 1);
        // SAFETY: one thread, no reference kept.
        if let Some(w) = unsafe { (*self.wakers.get())[(g % W as u64) as usize].take() } {
            w.wake();
        }
    }

    /// Tasks waiting now.
    pub fn waiting(&self) -> u64 {
        self.next.get().saturating_sub(self.granted.get())
    }
}

pub struct Acquire<'a, const W: usize> {
    gate: &'a Gate<W>,
    ticket: u64,
}

impl<const W: usize> Future for Acquire<'_, W> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        if self.ticket < self.gate.granted.get() {
            return Poll::Ready(());
        }
        // SAFETY: one thread, no reference kept.
        let slot = unsafe { &mut (*self.gate.wakers.get())[(self.ticket % W as u64) as usize] };
        *slot = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::task::Wake;

    struct Count(AtomicUsize);
    impl Wake for Count {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    #[test]
    fn permits_then_fifo_one_wake_per_release() {
        let g: Gate<8> = Gate::new(2);
        let counts: Vec<Arc<Count>> = (0..5).map(|_| Arc::new(Count(AtomicUsize::new(0)))).collect();
        let mut futs: Vec<_> = (0..5).map(|_| Box::pin(g.acquire())).collect();
        let mut ready = vec![false; 5];
        for (i, f) in futs.iter_mut().enumerate() {
            let w = Waker::from(counts[i].clone());
            ready[i] = f.as_mut().poll(&mut Context::from_waker(&w)).is_ready();
        }
        assert_eq!(ready, [true, true, false, false, false]);
        assert_eq!(g.waiting(), 3);
        g.release();
        // Only the first waiter is woken, and only it may pass.
        assert_eq!(counts.iter().map(|c| c.0.load(Ordering::Relaxed)).collect::<Vec<_>>(), [0, 0, 1, 0, 0]);
        let w = Waker::from(counts[3].clone());
        assert!(futs[3].as_mut().poll(&mut Context::from_waker(&w)).is_pending());
        let w = Waker::from(counts[2].clone());
        assert!(futs[2].as_mut().poll(&mut Context::from_waker(&w)).is_ready());
        g.release();
        g.release();
        assert_eq!(counts[3].0.load(Ordering::Relaxed), 1);
        assert_eq!(counts[4].0.load(Ordering::Relaxed), 1);
        assert_eq!(g.waiting(), 0);
    }
}
