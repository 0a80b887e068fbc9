//! [`ThreadPark`]: the executor's `Park` hook for a thread whose channels deliver through one
//! U-notification (the thread is its receiver). It is the place where the thread goes to sleep,
//! so it is also where the adaptive-notification protocol runs for all the thread's rings.
use super::cycles;
use crate::task::Park;
use core::cell::{Cell, UnsafeCell};
use core::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicUsize, Ordering};

/// Endpoints one thread can have registered.
pub const MAX_ENDPOINTS: usize = 8;

/// A channel endpoint as its thread's park hook sees it. Called only on the owning thread,
/// from [`ThreadPark::park`], i.e. never during one of the endpoint's own polls.
pub trait Endpoint {
    /// Sleep protocol step 1: set our sleep flag on each ring we wait on (a SeqCst fence
    /// follows).
    fn announce(&self);
    /// Step 2 and after waking: is there work for this thread (items, space, a closed peer,
    /// a broken ring)? If so, do what needs no coroutine (collect replies) and wake the
    /// coroutines concerned; true if anything was woken.
    fn check(&self) -> bool;
    /// Clear our sleep flags (we are running again).
    fn cancel(&self);
    /// Send the doorbells held back while the thread's tasks ran (so that one doorbell covers
    /// every request they queued): called before the thread polls or sleeps.
    fn flush(&self) {}
    /// Work of ours is in progress on another hart (async system calls the kernel runs
    /// elsewhere): a short poll will likely see it finish.
    fn remote_work(&self) -> bool {
        false
    }
    /// Items pushed to peer threads so far (a count that only grows): a thread that handed a
    /// peer work since its last park must let that peer have the hart, not poll.
    fn pushed(&self) -> usize {
        0
    }
}

/// How long a thread that shares its hart with its peers polls for work in progress on other
/// harts (an async system call's completion) before it sleeps: about a batch of map/unmap
/// requests in the kernel, far below a Wait's switch and wake-up.
pub const REMOTE_SPIN_CYCLES: usize = 30_000;

/// Park hook of one thread: `spin` cycles of polling its endpoints (worth it only when the
/// peers run on other harts), then announce on every ring, re-check, and U-notification Wait.
pub struct ThreadPark {
    ntfn: AtomicUsize,
    spin: AtomicUsize,
    eps: UnsafeCell<[Option<&'static dyn Endpoint>; MAX_ENDPOINTS]>,
    n: Cell<usize>,
    /// The endpoints' `pushed` total at the last park.
    last_pushed: Cell<usize>,
    /// A waker on another thread asked us to run (`unpark_from_irq`).
    unparked: AtomicBool,
    /// We are about to block, or blocked, in the kernel: `unpark_from_irq` must Signal.
    in_wait: AtomicBool,
    /// Vector bits the Waits returned and nobody took yet (`take_bits`): how a thread learns
    /// which other sources (a device interrupt, a deadline) ended its sleep.
    bits: AtomicU64,
    /// Blocking Waits so far (each a kernel entry), and park calls that found work by spinning.
    pub waits: AtomicUsize,
    pub spin_hits: AtomicUsize,
}

// SAFETY: `eps` and `n` are touched only by the owning thread (registration and park); the rest
// are atomics, which is all that `unpark_from_irq` (any thread, or a handler) uses.
unsafe impl Sync for ThreadPark {}

impl ThreadPark {
    pub const fn new() -> ThreadPark {
        ThreadPark {
            ntfn: AtomicUsize::new(0),
            spin: AtomicUsize::new(0),
            eps: UnsafeCell::new([None; MAX_ENDPOINTS]),
            n: Cell::new(0),
            last_pushed: Cell::new(0),
            unparked: AtomicBool::new(false),
            in_wait: AtomicBool::new(false),
            bits: AtomicU64::new(0),
            waits: AtomicUsize::new(0),
            spin_hits: AtomicUsize::new(0),
        }
    }

    /// Set up on the owning thread: `ntfn` is the U-notification it receives (bound to it and
    /// registered as its receiver), `spin_cycles` how long to poll before blocking (0 when the
    /// peers share this hart: polling would only keep them from running).
    pub fn setup(&self, ntfn: usize, spin_cycles: usize) {
        self.ntfn.store(ntfn, Ordering::Relaxed);
        self.spin.store(spin_cycles, Ordering::Relaxed);
    }

    /// How long the thread polls before it blocks (`setup`'s `spin_cycles`).
    pub fn spin_cycles(&self) -> usize {
        self.spin.load(Ordering::Relaxed)
    }

    /// Take the vector bits in `mask` that Waits returned since they were last taken (the
    /// channels' own bits need no taking: their endpoints check their rings instead).
    pub fn take_bits(&self, mask: u64) -> u64 {
        self.bits.fetch_and(!mask, Ordering::Relaxed) & mask
    }

    /// Record vector bits the thread collected some other way (a user-interrupt handler's
    /// `on_signal`), for `take_bits`.
    pub fn note_bits(&self, bits: u64) {
        self.bits.fetch_or(bits, Ordering::Relaxed);
    }

    /// Add an endpoint the thread serves (owning thread only): channel ends register
    /// themselves when attached; a program adds its own event sources (a device's completion
    /// ring) so that the park hook wakes their tasks. False if the table is full.
    pub fn register(&self, ep: &'static dyn Endpoint) -> bool {
        let n = self.n.get();
        if n == MAX_ENDPOINTS {
            return false;
        }
        // SAFETY: owning thread only, and park is not running (we are in a task or in setup).
        unsafe { (*self.eps.get())[n] = Some(ep) };
        self.n.set(n + 1);
        true
    }

    fn each(&self, mut f: impl FnMut(&dyn Endpoint)) {
        // SAFETY: owning thread only; registration does not run during park.
        let eps = unsafe { &*self.eps.get() };
        for ep in eps[..self.n.get()].iter().flatten() {
            f(*ep);
        }
    }

    fn check_all(&self) -> bool {
        let mut any = false;
        self.each(|ep| any |= ep.check());
        any
    }
}

impl Default for ThreadPark {
    fn default() -> Self {
        Self::new()
    }
}

impl Park for ThreadPark {
    fn park(&self) {
        self.each(|ep| ep.flush());
        if self.unparked.swap(false, Ordering::Acquire) {
            return;
        }
        let mut spin = self.spin.load(Ordering::Relaxed) as u64;
        let mut pushed = 0usize;
        let mut remote = false;
        self.each(|ep| {
            pushed = pushed.wrapping_add(ep.pushed());
            remote |= ep.remote_work();
        });
        // Peers on this hart get it when we handed them work; otherwise work of ours running
        // on another hart is worth a short poll (a Wait would cost a switch and a wake-up).
        if spin == 0 && remote && self.last_pushed.replace(pushed) == pushed {
            spin = REMOTE_SPIN_CYCLES as u64;
        }
        self.last_pushed.set(pushed);
        if spin > 0 {
            // Polling phase: our flags stay "awake", so a busy peer sends nothing.
            let t0 = cycles();
            loop {
                if self.check_all() || self.unparked.swap(false, Ordering::Acquire) {
                    self.spin_hits.fetch_add(1, Ordering::Relaxed);
                    return;
                }
                if cycles().wrapping_sub(t0) > spin {
                    break;
                }
                core::hint::spin_loop();
            }
        }
        // Sleep: announce on every ring (each announcement ends with a SeqCst fence), then
        // re-check every ring: a peer that published before our flag was visible is seen here,
        // one that published after sees the flag and signals, and the U-notification's pending
        // bit latches that signal until the Wait.
        self.each(|ep| ep.announce());
        // check_all first: a coroutine it wakes sets `unparked` (the executor is asleep), and
        // `in_wait` is still clear, so that costs no Signal.
        if !(self.check_all() | self.unparked.load(Ordering::Relaxed)) {
            // Against `unpark_from_irq` (store, fence, load on both sides): either it sees
            // `in_wait` and Signals, or we see `unparked` and do not block.
            self.in_wait.store(true, Ordering::Relaxed);
            fence(Ordering::SeqCst);
            if !self.unparked.load(Ordering::Relaxed) {
                let bits = crate::uintr::wait(self.ntfn.load(Ordering::Relaxed));
                self.bits.fetch_or(bits, Ordering::Relaxed);
                self.waits.fetch_add(1, Ordering::Relaxed);
            }
            self.in_wait.store(false, Ordering::Relaxed);
        }
        self.unparked.store(false, Ordering::Relaxed);
        self.each(|ep| ep.cancel());
        // Wake whoever the signal was for (or a supervisor's close).
        self.check_all();
    }

    fn flush(&self) {
        self.each(|ep| ep.flush());
    }

    fn poll_busy(&self) {
        // The executor has not idled for a while: collect replies and wake dispatchers whose
        // rings have work, as an idle park would (without announcing anything).
        self.each(|ep| ep.flush());
        self.check_all();
    }

    fn unpark_from_irq(&self) {
        self.unparked.store(true, Ordering::Release);
        fence(Ordering::SeqCst);
        if self.in_wait.load(Ordering::Relaxed) {
            // A kernel Signal on our own U-notification ends (or pre-empts) the Wait.
            crate::syscall::signal(self.ntfn.load(Ordering::Relaxed));
        }
    }
}
