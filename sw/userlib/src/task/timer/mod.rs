//! Timers for the executor: `sleep`, `sleep_until` and `timeout` futures on a per-thread timer
//! wheel ([`wheel`]), driven by a [`Clock`]: on the target [`KernelClock`], which reads the
//! timebase (`crate::time::now`) and keeps the wheel's next expiry armed as the thread's kernel
//! deadline (SetDeadline), so the kernel raises a vector on the thread's U-notification when it
//! passes.
//!
//! [`Timers`] is itself the executor's [`Park`] hook, wrapped around the thread's own (a
//! `chan::ThreadPark`): before the thread blocks it fires what is due and arms the deadline for
//! the earliest timer left; the inner hook blocks in U-notification Wait (never a spin); after
//! waking it fires what became due. A busy executor fires due timers every
//! [`super::BUSY_POLL_INTERVAL`] task polls (`poll_busy`).
//!
//! ```ignore
//! static TIMERS: Timers = Timers::new();
//! static CLOCK: KernelClock = KernelClock::new(TIMER_VECTOR);
//! let timers = TIMERS.claim(&THREAD_PARK, &CLOCK).unwrap();
//! let rt = EXEC.claim(&TIMERS).unwrap();
//! rt.block_on(async { timers.sleep(1000).await; timers.timeout(500, work()).await })
//! ```
//!
//! Dropping a `Sleep` (or a `Timeout`) unlinks its timer at once (O(1)); the kernel deadline
//! follows lazily: it is moved or cancelled the next time the thread parks.
mod kernel;
mod wheel;

#[cfg(test)]
mod tests;

pub use kernel::KernelClock;

use super::park::Park;
use core::cell::{Cell, UnsafeCell};
use core::future::Future;
use core::marker::{PhantomData, PhantomPinned};
use core::pin::Pin;
use core::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use core::task::{Context, Poll};
use wheel::{Node, Wheel};

/// Ticks ahead the wheel reaches before timers wait in its overflow list (2^48).
pub const WHEEL_RANGE: u64 = wheel::RANGE;

/// Where time comes from and how the thread is woken when a timer is due.
pub trait Clock: Sync {
    /// The current time in timebase ticks.
    fn now(&self) -> u64;
    /// Make the thread's park end at time `at` (or soon after), replacing the previous request;
    /// `None` withdraws it. Called on the owning thread, only when the request changes.
    fn arm(&self, at: Option<u64>);
}

/// A thread's timers: the wheel and the park hook that drives it. Normally a `static`,
/// [`Timers::claim`]ed by the thread that runs the executor it is the park hook of.
pub struct Timers {
    claimed: AtomicBool,
    /// Set once by `claim`, before the executor (and so any waker) can reach `unpark_from_irq`.
    inner: UnsafeCell<Option<&'static dyn Park>>,
    clock: UnsafeCell<Option<&'static dyn Clock>>,
    // Owning thread only:
    wheel: UnsafeCell<Wheel>,
    /// What the clock was last asked to wake us at (0: nothing).
    armed: Cell<u64>,
    /// Timers fired, and requests made to the clock (a kernel entry each on the target).
    pub fired: AtomicUsize,
    pub arms: AtomicUsize,
}

// SAFETY: `inner` and `clock` are written once in `claim`, before the executor this is the
// park hook of is claimed (so before any other thread can call `unpark_from_irq`), and only read
// afterwards; everything else but the atomics is touched only by the claiming thread, through
// the !Send `TimerHandle` and the executor's calls of `park`/`poll_busy` on that thread.
unsafe impl Sync for Timers {}

impl Timers {
    pub const fn new() -> Timers {
        Timers {
            claimed: AtomicBool::new(false),
            inner: UnsafeCell::new(None),
            clock: UnsafeCell::new(None),
            wheel: UnsafeCell::new(Wheel::new()),
            armed: Cell::new(0),
            fired: AtomicUsize::new(0),
            arms: AtomicUsize::new(0),
        }
    }

    /// Bind to the calling thread: `inner` is how it blocks (its U-notification Wait), `clock`
    /// its time source and wake-up. Then claim the executor with these `Timers` as its park
    /// hook. `None` if claimed before.
    pub fn claim(&'static self, inner: &'static dyn Park, clock: &'static dyn Clock) -> Option<TimerHandle> {
        if self.claimed.swap(true, Ordering::Acquire) {
            return None;
        }
        // SAFETY: first and only claim; nobody reads these yet (see `Sync`).
        unsafe {
            *self.inner.get() = Some(inner);
            *self.clock.get() = Some(clock);
            (*self.wheel.get()).reset(clock.now());
        }
        Some(TimerHandle { t: self, _not_send: PhantomData })
    }

    fn inner(&self) -> &'static dyn Park {
        // SAFETY: written once before any reader (see `Sync`).
        unsafe { (*self.inner.get()).expect("Timers used before claim") }
    }

    fn clock(&self) -> &'static dyn Clock {
        // SAFETY: as above.
        unsafe { (*self.clock.get()).expect("Timers used before claim") }
    }

    /// The wheel, for one operation that does not call out (no waker runs meanwhile).
    #[allow(clippy::mut_from_ref)]
    fn wheel(&self) -> &mut Wheel {
        // SAFETY: owning thread only, and every caller's borrow ends before it wakes anyone or
        // returns to code that could reach the wheel again.
        unsafe { &mut *self.wheel.get() }
    }

    /// Fire every timer due now; how many.
    fn expire(&self) -> usize {
        if self.wheel().len() == 0 {
            return 0;
        }
        let now = self.clock().now();
        if self.armed.get() != 0 && self.armed.get() <= now {
            self.armed.set(0); // that request has been (or is about to be) served
        }
        let mut n = 0;
        loop {
            let Some(waker) = self.wheel().pop_expired(now).map(|node| node.waker.take()) else { break };
            n += 1;
            if let Some(w) = waker {
                w.wake();
            }
        }
        self.fired.fetch_add(n, Ordering::Relaxed);
        n
    }

    /// Ask the clock to wake us for the wheel's next expiry, if that is not what it has.
    fn arm(&self) {
        let want = self.wheel().next_expiration().unwrap_or(0);
        if want != self.armed.get() {
            self.armed.set(want);
            self.arms.fetch_add(1, Ordering::Relaxed);
            self.clock().arm((want != 0).then_some(want));
        }
    }
}

impl Default for Timers {
    fn default() -> Self {
        Self::new()
    }
}

impl Park for Timers {
    fn park(&self) {
        // Timers that fire here wake their tasks, which unparks the inner hook: it then returns
        // at once, and the deadline is armed at the next park.
        if self.expire() == 0 {
            self.arm();
        }
        self.inner().park();
        self.expire();
    }

    fn poll_busy(&self) {
        self.expire();
        self.inner().poll_busy();
    }

    fn flush(&self) {
        self.inner().flush();
    }

    fn unpark_from_irq(&self) {
        self.inner().unpark_from_irq();
    }
}

/// The claiming thread's access to its timers. `Copy`; not `Send` (the wheel is that thread's).
#[derive(Clone, Copy)]
pub struct TimerHandle {
    t: &'static Timers,
    _not_send: PhantomData<*const ()>,
}

impl TimerHandle {
    /// The clock's time (timebase ticks).
    pub fn now(&self) -> u64 {
        self.t.clock().now()
    }

    /// A future that completes `ticks` timebase ticks from now, or later.
    pub fn sleep(&self, ticks: u64) -> Sleep {
        self.sleep_until(self.now().saturating_add(ticks))
    }

    /// A future that completes at time `at` (timebase ticks), or later.
    pub fn sleep_until(&self, at: u64) -> Sleep {
        Sleep { timers: *self, when: at, node: Node::new(), _pinned: PhantomPinned }
    }

    /// Run `fut` for at most `ticks`: its output, or `Err(Elapsed)` if the time ran out first
    /// (and `fut` is dropped with the `Timeout`).
    pub fn timeout<F: Future>(&self, ticks: u64, fut: F) -> Timeout<F> {
        Timeout { fut, sleep: self.sleep(ticks) }
    }

    /// As `timeout`, with an absolute deadline.
    pub fn timeout_at<F: Future>(&self, at: u64, fut: F) -> Timeout<F> {
        Timeout { fut, sleep: self.sleep_until(at) }
    }

    /// Timers waiting in the wheel (a dropped `Sleep` is gone from it at once).
    pub fn pending(&self) -> usize {
        self.t.wheel().len()
    }

    /// What the clock is asked to wake the thread at (0: nothing).
    pub fn armed(&self) -> u64 {
        self.t.armed.get()
    }

    pub fn timers(&self) -> &'static Timers {
        self.t
    }
}

/// Completes at its deadline. Its timer is linked into the wheel at the first poll and unlinked
/// when it is dropped, so a dropped sleep costs nothing later.
#[must_use = "futures do nothing unless awaited"]
pub struct Sleep {
    timers: TimerHandle,
    when: u64,
    node: Node,
    /// The wheel links to `node`: it must not move once polled.
    _pinned: PhantomPinned,
}

impl Sleep {
    /// Its deadline (timebase ticks).
    pub fn deadline(&self) -> u64 {
        self.when
    }
}

impl Future for Sleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: nothing is moved out; the node stays where it is (Drop unlinks it).
        let this = unsafe { self.get_unchecked_mut() };
        let node = &this.node;
        if node.fired.get() {
            return Poll::Ready(());
        }
        if !node.linked() {
            // SAFETY: `node` is pinned inside this future, which unlinks it when dropped.
            if !unsafe { this.timers.t.wheel().insert(node, this.when) } {
                node.fired.set(true);
                return Poll::Ready(());
            }
            node.waker.set(Some(cx.waker().clone()));
            return Poll::Pending;
        }
        match node.waker.take() {
            Some(w) if w.will_wake(cx.waker()) => node.waker.set(Some(w)),
            _ => node.waker.set(Some(cx.waker().clone())),
        }
        Poll::Pending
    }
}

impl Drop for Sleep {
    fn drop(&mut self) {
        self.timers.t.wheel().remove(&self.node);
    }
}

/// The error of a [`Timeout`] whose time ran out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Elapsed;

/// `fut` with a deadline: `Ok(output)` if it completes first, `Err(Elapsed)` otherwise.
#[must_use = "futures do nothing unless awaited"]
pub struct Timeout<F> {
    fut: F,
    sleep: Sleep,
}

impl<F: Future> Future for Timeout<F> {
    type Output = Result<F::Output, Elapsed>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: structural pinning: neither field is moved out or exposed unpinned.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above.
        if let Poll::Ready(v) = unsafe { Pin::new_unchecked(&mut this.fut) }.poll(cx) {
            return Poll::Ready(Ok(v));
        }
        // SAFETY: as above.
        match unsafe { Pin::new_unchecked(&mut this.sleep) }.poll(cx) {
            Poll::Ready(()) => Poll::Ready(Err(Elapsed)),
            Poll::Pending => Poll::Pending,
        }
    }
}
