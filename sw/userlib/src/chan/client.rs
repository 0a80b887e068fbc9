//! The client end: a table of N outstanding calls, matched to replies by id.
use super::park::{Endpoint, ThreadPark};
use super::{bump, signal, ChanError, ChanMem, Msg, Side};
use aring::{Consumer, Notify, Producer};
use core::cell::UnsafeCell;
use core::future::Future;
use core::marker::PhantomPinned;
use core::pin::Pin;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::{Context, Poll, Waker};

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    /// Request sent, reply not yet here.
    Waiting,
    /// The call was dropped before its reply: the slot is freed when the reply comes.
    Abandoned,
}

/// One outstanding call: 32 bytes, two to a cache line, so that the table of 64 calls stays a
/// small part of L1. The reply itself goes straight into the waiting call's future (which its
/// task's poll reads next anyway) and the entry is freed at once, so the call's last poll
/// touches nothing but its own future.
struct Entry {
    /// Bumped on every reuse, so a late or forged reply for an earlier call of this slot does
    /// not match.
    gen: u32,
    state: State,
    waker: Option<Waker>,
    /// Where the reply goes: the landing of the pinned [`Call`] that sent the request (valid
    /// while the state is Waiting: the call's drop moves it on first).
    out: *mut Landing,
}

/// Where a call's reply lands: in the call itself.
struct Landing {
    /// The request, then the reply.
    msg: Msg,
    /// The reply is in `msg` (and the call's table entry already free).
    done: bool,
}

/// Coroutines that found every table slot taken wait here (beyond that they yield).
const WAITERS: usize = 16;

/// Requests staged before they are published together (one index store and one look at the
/// server's flag per batch); fewer are published when the thread next polls or parks.
const PUBLISH_BATCH: usize = 2;

struct Inner<const N: usize> {
    mem: Option<ChanMem>,
    req: Option<Producer>,
    rep: Option<Consumer>,
    to_server: usize,
    entries: [Entry; N],
    /// Free slots: `free[..nfree]`, and every slot from `fresh` on (never used yet): O(1)
    /// allocation however large the table.
    free: [u32; N],
    nfree: usize,
    fresh: usize,
    waiters: [Option<Waker>; WAITERS],
    /// Wakers in `waiters` (none: a freed slot wakes nobody without looking).
    nwaiters: usize,
    broken: Option<ChanError>,
}

/// A client endpoint with up to `N` calls outstanding (N at most the ring capacity, so the
/// request ring can never be legitimately full). Put it in a `static`, [`Client::attach`] it
/// on the thread that will call through it, then `call(msg).await` from any of that thread's
/// coroutines.
pub struct Client<const N: usize> {
    inner: UnsafeCell<Inner<N>>,
    /// Notifications we sent (requests that found the server asleep).
    pub signals: AtomicUsize,
    /// Calls completed with a reply.
    pub replies: AtomicUsize,
    /// Requests pushed.
    pub requests: AtomicUsize,
}

// SAFETY: `inner` is used only by the thread the client was attached on (its coroutines and
// its park hook, which never run at the same time); the counters are atomics.
unsafe impl<const N: usize> Sync for Client<N> {}

impl<const N: usize> Client<N> {
    pub const fn new() -> Self {
        Client {
            inner: UnsafeCell::new(Inner {
                mem: None,
                req: None,
                rep: None,
                to_server: 0,
                entries: [const { Entry { gen: 0, state: State::Free, waker: None, out: core::ptr::null_mut() } }; N],
                free: [0; N],
                nfree: 0,
                fresh: 0,
                waiters: [const { None }; WAITERS],
                nwaiters: 0,
                broken: None,
            }),
            signals: AtomicUsize::new(0),
            replies: AtomicUsize::new(0),
            requests: AtomicUsize::new(0),
        }
    }

    /// Attach to the channel `mem` (initialised by its creator) on the calling thread, whose
    /// park hook is `park`; `to_server` is our sender-table entry for the server's
    /// U-notification.
    pub fn attach(&'static self, mem: ChanMem, to_server: usize, park: &ThreadPark) -> Result<(), ChanError> {
        // SAFETY: the owning thread, before any call exists.
        let inner = unsafe { &mut *self.inner.get() };
        if inner.mem.is_some() || N == 0 || N > mem.capacity() || N > u32::MAX as usize {
            return Err(ChanError::BadSetup);
        }
        inner.mem = Some(mem);
        inner.req = Some(mem.requests().producer());
        inner.rep = Some(mem.replies().consumer());
        inner.to_server = to_server;
        if !park.register(self) {
            return Err(ChanError::BadSetup);
        }
        Ok(())
    }

    /// Send `msg` and wait for its reply. Dropping the future abandons the call (its reply is
    /// discarded when it comes).
    #[inline]
    pub fn call(&'static self, msg: Msg) -> Call<N> {
        Call { c: self, landing: Landing { msg, done: false }, slot: None, _pinned: PhantomPinned }
    }

    /// Whether the server has announced that it sleeps (a call now would signal it). A
    /// snapshot for tests and diagnostics (owning thread).
    pub fn server_asleep(&'static self) -> bool {
        self.inner().req.as_ref().is_some_and(|r| r.consumer_asleep())
    }

    /// Leave the channel: the server's dispatcher ends with `PeerGone`.
    pub fn close(&'static self) {
        // SAFETY: owning thread.
        let inner = unsafe { &mut *self.inner.get() };
        if let Some(mem) = inner.mem {
            mem.close(Side::Client);
            signal(inner.to_server);
        }
    }

    #[allow(clippy::mut_from_ref)]
    fn inner(&self) -> &mut Inner<N> {
        // SAFETY: owning thread only, and no caller keeps the reference across a call that
        // could reach `inner` again (wakers only queue tasks).
        unsafe { &mut *self.inner.get() }
    }
}

impl<const N: usize> Default for Client<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Inner<N> {
    fn doorbell(&self, n: Notify, count: &AtomicUsize) {
        if n == Notify::Signal {
            signal(self.to_server);
            count.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Make the staged requests visible to the server (one index store for the batch).
    fn publish(&mut self, signals: &AtomicUsize) {
        if let Some(n) = self.req.as_mut().map(|r| r.publish()) {
            self.doorbell(n, signals);
        }
    }

    /// Publish once a batch is staged (and otherwise when the thread polls or parks: `flush`).
    fn publish_if_batch(&mut self, signals: &AtomicUsize) {
        if self.req.as_ref().is_some_and(|r| r.staged() >= PUBLISH_BATCH) {
            self.publish(signals);
        }
    }

    /// Take every reply in the ring and hand each to its call (the channel breaks on a bad
    /// one), then give their slots back at once. True if a waiting coroutine was woken (the
    /// park hook's "work found"): counted here rather than by scanning the table, which costs
    /// O(N) per park.
    fn drain(&mut self, signals: &AtomicUsize) -> bool {
        if self.broken.is_some() {
            return false;
        }
        let mut woke = false;
        loop {
            let Some(rep) = self.rep.as_mut() else { return woke };
            match rep.take() {
                Ok(Some(item)) => match self.deliver(item.id, Msg::from_item(&item)) {
                    Some(w) => woke |= w,
                    None => return self.fail(ChanError::Corrupt),
                },
                Ok(None) => break,
                Err(_) => return self.fail(ChanError::Corrupt),
            }
        }
        if let Some(n) = self.rep.as_mut().map(|r| r.release()) {
            self.doorbell(n, signals);
        }
        if self.mem.is_some_and(|m| m.is_closed(Side::Server)) {
            return self.fail(ChanError::PeerGone);
        }
        woke
    }

    /// A reply for `id`: it must name a slot of ours with a call outstanding, and carry a valid
    /// length (None otherwise). Some(true) if it woke the call's coroutine. The reply goes
    /// straight into the call's future, and its task to the executor's local run list.
    fn deliver(&mut self, id: u64, msg: Option<Msg>) -> Option<bool> {
        let (slot, gen) = ((id & 0xffff_ffff) as usize, (id >> 32) as u32);
        let e = self.entries.get_mut(slot)?;
        let msg = msg?;
        if e.gen != gen {
            return None;
        }
        match e.state {
            State::Waiting => {
                // SAFETY: Waiting means the call that set `out` is alive and pinned (its drop
                // leaves Waiting before its memory can go), and no reference to its landing is
                // live: this runs on the owning thread, from the park hook or from another
                // call's poll (a call's own poll reaches here only before it reads its landing).
                unsafe { *e.out = Landing { msg, done: true } };
                let w = e.waker.take();
                // The call needs its entry no more: free it now (it may wake a coroutine waiting
                // for one), while its line is here.
                let freed_woke = self.free(slot);
                Some(w.map(wake).is_some() | freed_woke)
            }
            State::Abandoned => {
                // Freeing the slot may wake a coroutine waiting for one.
                Some(self.free(slot))
            }
            State::Free => None,
        }
    }

    /// The channel is unusable: every outstanding call returns `e`. True if it woke anyone.
    fn fail(&mut self, e: ChanError) -> bool {
        self.broken.get_or_insert(e);
        let mut woke = false;
        for entry in self.entries.iter_mut() {
            if let Some(w) = entry.waker.take() {
                wake(w);
                woke = true;
            }
        }
        self.nwaiters = 0;
        for w in self.waiters.iter_mut() {
            if let Some(w) = w.take() {
                wake(w);
                woke = true;
            }
        }
        woke
    }

    fn alloc(&mut self) -> Option<usize> {
        let i = if self.nfree > 0 {
            self.nfree -= 1;
            self.free[self.nfree] as usize
        } else if self.fresh < N {
            self.fresh += 1;
            self.fresh - 1
        } else {
            return None;
        };
        self.entries[i].state = State::Waiting;
        Some(i)
    }

    /// True if a coroutine waiting for a slot was woken.
    fn free(&mut self, slot: usize) -> bool {
        let e = &mut self.entries[slot];
        if !matches!(e.state, State::Free) {
            self.free[self.nfree] = slot as u32;
            self.nfree += 1;
        }
        e.state = State::Free;
        e.gen = e.gen.wrapping_add(1);
        e.waker = None;
        e.out = core::ptr::null_mut();
        // One slot became free: let one waiting coroutine have it.
        if self.nwaiters == 0 {
            return false;
        }
        self.nwaiters -= 1;
        match self.waiters.iter_mut().find_map(|w| w.take()) {
            Some(w) => {
                wake(w);
                true
            }
            None => false,
        }
    }

    fn wait_for_slot(&mut self, w: &Waker) {
        match self.waiters.iter_mut().find(|s| s.is_none()) {
            Some(s) => {
                *s = Some(w.clone());
                self.nwaiters += 1;
            }
            // More waiters than places: come back at the next turn (a yield).
            None => w.wake_by_ref(),
        }
    }
}

/// Wake a coroutine of the owning thread: the waker was registered by a call (or a wait for a
/// slot) polled on this thread, and the client is only ever used on this thread, outside
/// interrupt handlers, so a task waker goes to its executor's local run list.
fn wake(w: Waker) {
    // SAFETY: as above (the client's contract: one thread, its coroutines and park hook).
    unsafe { crate::task::wake_local(w) }
}

/// A call in progress ([`Client::call`]). Pinned while it waits: the reply is written into it.
#[must_use = "futures do nothing unless awaited"]
pub struct Call<const N: usize> {
    c: &'static Client<N>,
    /// The request, then (once delivered) the reply.
    landing: Landing,
    slot: Option<usize>,
    _pinned: PhantomPinned,
}

impl<const N: usize> Future for Call<N> {
    type Output = Result<Msg, ChanError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        // SAFETY: nothing is moved out of the call; the landing stays where `out` points.
        let this = unsafe { self.get_unchecked_mut() };
        let c = this.c;
        if this.landing.done {
            // Delivered (the entry is already free, maybe reused): only our own future is read.
            this.slot = None;
            this.landing.done = false;
            bump(&c.replies);
            return Poll::Ready(Ok(this.landing.msg));
        }
        let inner = c.inner();
        if inner.mem.is_none() {
            return Poll::Ready(Err(ChanError::BadSetup));
        }
        let slot = match this.slot {
            Some(s) => s,
            None => {
                if let Some(e) = inner.broken {
                    return Poll::Ready(Err(e));
                }
                let Some(s) = inner.alloc().or_else(|| {
                    let _ = inner.drain(&c.signals);
                    inner.alloc()
                }) else {
                    if let Some(e) = inner.broken {
                        return Poll::Ready(Err(e));
                    }
                    inner.wait_for_slot(cx.waker());
                    return Poll::Pending;
                };
                let id = s as u64 | (inner.entries[s].gen as u64) << 32;
                let item = this.landing.msg.to_item(id);
                match inner.req.as_mut().map(|r| r.stage(&item)) {
                    Some(Ok(())) => {
                        bump(&c.requests);
                        inner.publish_if_batch(&c.signals);
                    }
                    // Full cannot happen with at most capacity calls outstanding unless the
                    // server moves its index wrongly: both are the peer's fault.
                    _ => {
                        inner.free(s);
                        inner.fail(ChanError::Corrupt);
                        return Poll::Ready(Err(ChanError::Corrupt));
                    }
                }
                this.slot = Some(s);
                // The reply cannot be here yet: collecting replies is left to the thread's
                // next park or busy poll (one drain for all the calls it completes).
                let e = &mut inner.entries[s];
                e.waker = Some(cx.waker().clone());
                e.out = &mut this.landing;
                return Poll::Pending;
            }
        };
        // Polled again without the reply delivered (woken some other way): look at the ring
        // before waiting on.
        inner.drain(&c.signals);
        // SAFETY: `drain` may have written the landing through `out`; read it afresh.
        if unsafe { core::ptr::read_volatile(&this.landing.done) } {
            this.slot = None;
            this.landing.done = false;
            bump(&c.replies);
            return Poll::Ready(Ok(this.landing.msg));
        }
        let e = &mut inner.entries[slot];
        if let Some(err) = inner.broken {
            inner.free(slot);
            this.slot = None;
            return Poll::Ready(Err(err));
        }
        match &e.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => e.waker = Some(cx.waker().clone()),
        }
        Poll::Pending
    }
}

impl<const N: usize> Drop for Call<N> {
    fn drop(&mut self) {
        if self.landing.done {
            return; // the entry was freed with the delivery
        }
        if let Some(s) = self.slot {
            let inner = self.c.inner();
            match inner.entries[s].state {
                State::Waiting if inner.broken.is_none() => {
                    let e = &mut inner.entries[s];
                    e.state = State::Abandoned;
                    e.waker = None;
                    e.out = core::ptr::null_mut();
                }
                _ => {
                    inner.free(s);
                }
            }
        }
    }
}

impl<const N: usize> Endpoint for Client<N> {
    fn announce(&self) {
        if let Some(r) = self.inner().rep.as_ref() {
            r.prepare_sleep();
        }
    }

    fn check(&self) -> bool {
        self.inner().drain(&self.signals)
    }

    fn cancel(&self) {
        if let Some(r) = self.inner().rep.as_ref() {
            r.cancel_sleep();
        }
    }

    fn flush(&self) {
        self.inner().publish(&self.signals);
    }

    fn pushed(&self) -> usize {
        self.requests.load(Ordering::Relaxed)
    }
}
