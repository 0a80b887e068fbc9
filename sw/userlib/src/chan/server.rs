//! The server end: a dispatcher coroutine that pops requests and runs one handler task per
//! request on the thread's executor; each handler pushes its own reply.
use super::park::{Endpoint, ThreadPark};
use super::{bump, cycles, signal, ChanError, ChanMem, Msg, Side, BAD_REQUEST};
use crate::task::{Handle, Priority, SpawnError};
use aring::{Consumer, Item, Notify, Producer};
use core::cell::UnsafeCell;
use core::future::{poll_fn, Future};
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::{Context, Poll, Waker};

/// Requests `serve_inline` handles before it lets other tasks run.
const INLINE_TURN: usize = 64;

/// Longest `serve_inline` polls its request ring after it ran dry, in place, before it lets the
/// thread park (only when the thread's park hook polls too, i.e. the client is on another
/// hart): about a round trip of a call, so that the next request of a client that answers at
/// once is taken without the trip through the park hook and the executor.
const INLINE_SPIN_CYCLES: u64 = 4_000;

/// Replies `serve_inline` stages before it publishes them together (one index store and one
/// look at the client's flag per batch; fewer when the request ring runs dry).
const PUBLISH_BATCH: usize = 2;

struct Inner {
    mem: Option<ChanMem>,
    req: Option<Consumer>,
    rep: Option<Producer>,
    to_client: usize,
    /// How long `serve_inline` polls an empty request ring before it parks (0: not at all).
    inline_spin: u64,
    /// Handlers spawned whose reply is not pushed yet: each holds a credit on the reply ring.
    in_flight: usize,
    /// The dispatcher waits for reply space (credits) / for a free task slot.
    want_space: bool,
    want_slot: bool,
    /// A request popped but not yet handed to a task (no free slot).
    held: Option<Item>,
    dispatcher: Option<Waker>,
    broken: Option<ChanError>,
}

/// A server endpoint. Put it in a `static`, [`Server::attach`] it on the serving thread, and run
/// [`Server::serve`] as a task (or under `block_on`) on that thread's executor.
pub struct Server {
    inner: UnsafeCell<Inner>,
    /// Notifications we sent (replies that found the client asleep).
    pub signals: AtomicUsize,
    /// Replies pushed.
    pub replies: AtomicUsize,
    /// Most handlers in flight at once (shows that they ran concurrently).
    pub max_in_flight: AtomicUsize,
}

// SAFETY: `inner` is used only by the thread the server was attached on (its coroutines and its
// park hook, which never run at the same time); the counters are atomics.
unsafe impl Sync for Server {}

impl Server {
    pub const fn new() -> Server {
        Server {
            inner: UnsafeCell::new(Inner {
                mem: None,
                req: None,
                rep: None,
                to_client: 0,
                inline_spin: 0,
                in_flight: 0,
                want_space: false,
                want_slot: false,
                held: None,
                dispatcher: None,
                broken: None,
            }),
            signals: AtomicUsize::new(0),
            replies: AtomicUsize::new(0),
            max_in_flight: AtomicUsize::new(0),
        }
    }

    /// Attach to the channel `mem` on the serving thread, whose park hook is `park`;
    /// `to_client` is our sender-table entry for the client's U-notification.
    pub fn attach(&'static self, mem: ChanMem, to_client: usize, park: &ThreadPark) -> Result<(), ChanError> {
        let inner = self.inner();
        if inner.mem.is_some() {
            return Err(ChanError::BadSetup);
        }
        inner.mem = Some(mem);
        inner.req = Some(mem.requests().consumer());
        inner.rep = Some(mem.replies().producer());
        inner.to_client = to_client;
        // The thread's park hook was set up first: it polls only with the client elsewhere.
        inner.inline_spin = (park.spin_cycles() as u64).min(INLINE_SPIN_CYCLES);
        if !park.register(self) {
            return Err(ChanError::BadSetup);
        }
        Ok(())
    }

    #[allow(clippy::mut_from_ref)]
    fn inner(&self) -> &mut Inner {
        // SAFETY: owning thread only; no caller keeps the reference across a call that could
        // reach `inner` again (spawn does not poll, wakers only queue tasks).
        unsafe { &mut *self.inner.get() }
    }

    /// The dispatcher: serve requests with `handler` (one task of priority `prio` per request
    /// on `rt`) until the channel ends; returns why (`PeerGone` when the client left or died,
    /// `Corrupt` when it broke the protocol, `BadSetup` when a handler does not fit a task
    /// slot).
    pub async fn serve<const N: usize, const S: usize, H, F>(
        &'static self,
        rt: Handle<N, S>,
        prio: Priority,
        handler: H,
    ) -> ChanError
    where
        H: Fn(Msg) -> F,
        F: Future<Output = Msg> + 'static,
    {
        poll_fn(|cx| self.dispatch(cx, rt, prio, &|_: &Msg, _: &mut Option<Owed>| None, &handler)).await
    }

    /// [`Server::serve`], with each request offered to `now` first: a handler that answers at
    /// once when it can and never waits (`None`: it would, or it does not know the request).
    /// Only what it declines gets a task running `handler`, so a request answered at once
    /// costs no task (spawn, turn, slot) at all.
    pub async fn serve_first<const N: usize, const S: usize, I, H, F>(
        &'static self,
        rt: Handle<N, S>,
        prio: Priority,
        now: I,
        handler: H,
    ) -> ChanError
    where
        I: Fn(&Msg) -> Option<Msg>,
        H: Fn(Msg) -> F,
        F: Future<Output = Msg> + 'static,
    {
        let now = |m: &Msg, _: &mut Option<Owed>| now(m);
        poll_fn(|cx| self.dispatch(cx, rt, prio, &now, &handler)).await
    }

    /// [`Server::serve_first`], where `now` may also keep a request to answer it later without
    /// a task: it takes what the request is [`Owed`] out of its second argument, and whatever
    /// code of the serving thread sees the answer come (a poller, say) gives it to
    /// [`Server::answer`]. A kept request holds its reply slot until then (what `now` returns
    /// for it is ignored). For a request that waits on an event the program already watches,
    /// this saves the task (spawn, wake-up, polls) per request.
    pub async fn serve_keeping<const N: usize, const S: usize, I, H, F>(
        &'static self,
        rt: Handle<N, S>,
        prio: Priority,
        now: I,
        handler: H,
    ) -> ChanError
    where
        I: Fn(&Msg, &mut Option<Owed>) -> Option<Msg>,
        H: Fn(Msg) -> F,
        F: Future<Output = Msg> + 'static,
    {
        poll_fn(|cx| self.dispatch(cx, rt, prio, &now, &handler)).await
    }

    fn dispatch<const N: usize, const S: usize, I, H, F>(
        &'static self,
        cx: &mut Context<'_>,
        rt: Handle<N, S>,
        prio: Priority,
        now: &I,
        handler: &H,
    ) -> Poll<ChanError>
    where
        I: Fn(&Msg, &mut Option<Owed>) -> Option<Msg>,
        H: Fn(Msg) -> F,
        F: Future<Output = Msg> + 'static,
    {
        loop {
            let inner = self.inner();
            if let Some(e) = inner.ended() {
                return Poll::Ready(e);
            }
            match inner.room_for_one(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(false) => continue,
                Poll::Ready(true) => {}
            }
            let item = match inner.held.take() {
                Some(i) => i,
                None => match inner.pop_request(cx, &self.signals) {
                    Ok(Some(item)) => item,
                    Ok(None) => return Poll::Pending,
                    Err(()) => continue,
                },
            };
            let Some(msg) = Msg::from_item(&item) else {
                // The request's length does not fit: answer it as undecodable (we hold a credit).
                inner.in_flight += 1;
                self.reply(item.id, Msg::new(BAD_REQUEST, &[]).unwrap_or_default());
                continue;
            };
            // The handlers are the program's code: no reference into `inner` lives across them.
            let mut owed = Some(Owed(item.id));
            let r = now(&msg, &mut owed);
            if owed.is_none() {
                // Kept: its reply slot stays taken until `answer`.
                let inner = self.inner();
                inner.in_flight += 1;
                self.max_in_flight.fetch_max(inner.in_flight, Ordering::Relaxed);
                continue;
            }
            if let Some(r) = r {
                // Its credit, given back by `reply` at once.
                self.inner().in_flight += 1;
                self.reply(item.id, r);
                continue;
            }
            // The handler's future is built right in the task's slot (a spawn of a built one
            // copies it, uninitialised tail and all), and only once a slot is taken: a request
            // held for lack of one is handled once, later.
            let id = item.id;
            match rt.spawn_with(prio, || Handling { server: self, id, fut: handler(msg) }) {
                Ok(h) => {
                    h.detach();
                    let inner = self.inner();
                    inner.in_flight += 1;
                    self.max_in_flight.fetch_max(inner.in_flight, Ordering::Relaxed);
                }
                Err(SpawnError::NoSlot) => {
                    // Every task slot is busy: keep the request until a handler finishes.
                    let inner = self.inner();
                    inner.held = Some(item);
                    inner.want_slot = true;
                    inner.dispatcher = Some(cx.waker().clone());
                    return Poll::Pending;
                }
                Err(SpawnError::TooBig) => return Poll::Ready(ChanError::BadSetup),
            }
        }
    }

    /// Take the next request for a server that handles requests itself, with no task per
    /// request (it answers each with [`Server::answer`], now or once its work completes, in
    /// any order): Ready(Ok) with the request and what its reply is owed to, Pending with the
    /// caller's waker kept (by the ring, or by the thread's park hook) while the ring is empty
    /// or the reply ring has no slot for it beside every request still owed an answer,
    /// Ready(Err) when the channel ended (as `serve`). A request that does not decode is
    /// answered BAD_REQUEST here. One of `take`, `serve`, `serve_inline` per server.
    pub fn take(&'static self, cx: &mut Context<'_>) -> Poll<Result<(Owed, Msg), ChanError>> {
        loop {
            let inner = self.inner();
            if let Some(e) = inner.ended() {
                return Poll::Ready(Err(e));
            }
            match inner.room_for_one(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(false) => continue,
                Poll::Ready(true) => {}
            }
            let item = match inner.pop_request(cx, &self.signals) {
                Ok(Some(item)) => item,
                Ok(None) => return Poll::Pending,
                Err(()) => continue,
            };
            // Its reply slot, until `answer` (or the BAD_REQUEST below) gives it back.
            inner.in_flight += 1;
            self.max_in_flight.fetch_max(inner.in_flight, Ordering::Relaxed);
            match Msg::from_item(&item) {
                Some(m) => return Poll::Ready(Ok((Owed(item.id), m))),
                None => self.reply(item.id, Msg::new(BAD_REQUEST, &[]).unwrap_or_default()),
            }
        }
    }

    /// Answer a request [`Server::take`] gave, or one `serve_keeping`'s `now` kept (dropped if
    /// the channel ended meanwhile).
    pub fn answer(&self, owed: Owed, msg: Msg) {
        self.reply(owed.0, msg);
    }

    /// The dispatcher for handlers that never wait (the published design's loop: pop, handle,
    /// push): each request is handled right here, with no task per request, so a request costs
    /// a pop, the handler and a push. Use [`Server::serve`] when handlers await. One of the two
    /// per server. Returns why it ended, as `serve`.
    pub async fn serve_inline<H: FnMut(Msg) -> Msg>(&'static self, mut handler: H) -> ChanError {
        poll_fn(|cx| self.dispatch_inline(cx, &mut handler)).await
    }

    fn dispatch_inline<H: FnMut(Msg) -> Msg>(&'static self, cx: &mut Context<'_>, handler: &mut H) -> Poll<ChanError> {
        // One request at a time: the reply credit is taken and given back within the turn.
        if self.max_in_flight.load(Ordering::Relaxed) == 0 {
            self.max_in_flight.store(1, Ordering::Relaxed);
        }
        let inner = self.inner();
        if let Some(e) = inner.ended() {
            return Poll::Ready(e);
        }
        // The rings are ours for the turn (no other code of the thread uses them while an
        // inline dispatcher runs: `take`, `serve` and `answer` belong to the other modes), so
        // the loop works on them directly rather than through `inner` per request.
        let (Some(mut req), Some(mut rep)) = (inner.req.take(), inner.rep.take()) else {
            inner.broken = Some(ChanError::Corrupt);
            return Poll::Ready(ChanError::Corrupt);
        };
        let (to_client, spin) = (inner.to_client, inner.inline_spin);
        inner.want_space = false;
        let out = self.inline_turn(&mut req, &mut rep, to_client, spin, handler);
        let inner = self.inner();
        (inner.req, inner.rep) = (Some(req), Some(rep));
        match out {
            Turn::Idle => {
                inner.dispatcher = Some(cx.waker().clone());
                Poll::Pending
            }
            Turn::NoSpace => {
                inner.want_space = true;
                inner.dispatcher = Some(cx.waker().clone());
                Poll::Pending
            }
            Turn::Long => {
                // A long burst: let the executor's other tasks have a turn, then go on.
                cx.waker().wake_by_ref();
                Poll::Pending
            }
            Turn::Corrupt => {
                inner.broken = Some(ChanError::Corrupt);
                Poll::Ready(ChanError::Corrupt)
            }
            Turn::Ended(e) => Poll::Ready(e),
        }
    }

    /// Up to INLINE_TURN requests: take, handle, stage the reply; publish every PUBLISH_BATCH
    /// replies (and the request slots they answered) and whatever is staged when the turn
    /// ends. Reads nothing of `inner` but the channel's end state, and only between handlers.
    fn inline_turn<H: FnMut(Msg) -> Msg>(
        &'static self,
        req: &mut Consumer,
        rep: &mut Producer,
        to_client: usize,
        spin: u64,
        handler: &mut H,
    ) -> Turn {
        let publish = |req: &mut Consumer, rep: &mut Producer| {
            for n in [req.release(), rep.publish()] {
                if n == Notify::Signal {
                    signal(to_client);
                    self.signals.fetch_add(1, Ordering::Relaxed);
                }
            }
        };
        for _ in 0..INLINE_TURN {
            match rep.free() {
                Ok(0) => {
                    publish(req, rep);
                    return Turn::NoSpace;
                }
                Ok(_) => {}
                Err(_) => return Turn::Corrupt,
            }
            let item = match req.take() {
                Ok(Some(item)) => item,
                Ok(None) => {
                    // Nothing more to do now: what was handled goes out. Then, with the client
                    // on another hart, poll for its next request right here a little while.
                    publish(req, rep);
                    match Self::await_request(req, spin) {
                        Ok(true) => continue,
                        Ok(false) => return Turn::Idle,
                        Err(_) => return Turn::Corrupt,
                    }
                }
                Err(_) => return Turn::Corrupt,
            };
            let out = match Msg::from_item(&item) {
                Some(m) => handler(m),
                None => Msg::new(BAD_REQUEST, &[]).unwrap_or_default(),
            };
            if rep.stage(&out.to_item(item.id)).is_err() {
                return Turn::Corrupt;
            }
            bump(&self.replies);
            if rep.staged() >= PUBLISH_BATCH {
                publish(req, rep);
                // Once per batch: a reply staged for a client that left meanwhile is only
                // dropped with the memory.
                if let Some(e) = self.inner().ended() {
                    return Turn::Ended(e);
                }
            }
        }
        publish(req, rep);
        Turn::Long
    }

    /// Poll the request ring for up to `spin` cycles: true as soon as a request is there.
    fn await_request(req: &mut Consumer, spin: u64) -> Result<bool, aring::RingError> {
        if spin == 0 {
            return Ok(false);
        }
        let t0 = cycles();
        // A look takes more than a cycle, so the count bounds the loop too (where there is no
        // cycle counter, as in host tests).
        for _ in 0..spin {
            if req.available()? > 0 {
                return Ok(true);
            }
            if cycles().wrapping_sub(t0) > spin {
                break;
            }
            core::hint::spin_loop();
        }
        Ok(false)
    }

    /// A handler's reply (it holds a credit, so the ring has room unless the client moved its
    /// index wrongly), published at once. Dropped if the channel ended meanwhile.
    fn reply(&self, id: u64, msg: Msg) {
        self.stage_reply(id, msg);
        self.inner().publish(&self.signals);
    }

    /// `reply`, left staged: it goes out with the next `Inner::publish`.
    fn stage_reply(&self, id: u64, msg: Msg) {
        let inner = self.inner();
        inner.in_flight -= 1;
        let open = inner.broken.is_none() && !inner.mem.is_some_and(|m| m.is_closed(Side::Client));
        if open {
            match inner.rep.as_mut().map(|r| r.stage(&msg.to_item(id))) {
                Some(Ok(())) => bump(&self.replies),
                _ => inner.broken = Some(ChanError::Corrupt),
            }
        }
        if inner.want_space || inner.want_slot || !open {
            inner.want_slot = false;
            if let Some(w) = inner.dispatcher.take() {
                w.wake();
            }
        }
    }
}

/// How an inline dispatcher's turn ended.
enum Turn {
    /// The request ring is empty.
    Idle,
    /// The reply ring is full (the client has not taken its replies).
    NoSpace,
    /// INLINE_TURN requests handled: others get a turn.
    Long,
    Corrupt,
    Ended(ChanError),
}

/// What a request taken with [`Server::take`] (or kept by `serve_keeping`'s `now`) is owed:
/// one reply, which holds a slot of the reply ring until [`Server::answer`] spends this (so it
/// is neither `Copy` nor `Clone`).
#[must_use = "a taken request holds a reply slot until it is answered"]
#[derive(Debug, PartialEq, Eq)]
pub struct Owed(u64);

/// A handler's task: its future, polled in place, then its reply. (An `async` block around
/// the handler's future would hold it twice and move it at the first poll: a copy of a large
/// future into cold memory per request.)
struct Handling<F> {
    server: &'static Server,
    id: u64,
    fut: F,
}

impl<F: Future<Output = Msg>> Future for Handling<F> {
    type Output = ();

    fn poll(self: core::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: `fut` is pinned with us and never moved out; the other fields are plain data.
        let this = unsafe { self.get_unchecked_mut() };
        // SAFETY: as above.
        match unsafe { core::pin::Pin::new_unchecked(&mut this.fut) }.poll(cx) {
            Poll::Ready(m) => {
                this.server.reply(this.id, m);
                Poll::Ready(())
            }
            Poll::Pending => Poll::Pending,
        }
    }
}

impl Default for Server {
    fn default() -> Self {
        Self::new()
    }
}

impl Inner {
    /// Free reply slots (None: the ring is corrupt). The producer's cached count is a lower
    /// bound; when it does not cover every handler in flight, read the client's head afresh
    /// (a cached count stuck at or below the credits held by long-waiting handlers would
    /// otherwise stop the dispatcher for good).
    /// A reply slot for every request still owed an answer, and one for the next: Ready(true);
    /// Pending with the dispatcher's waker kept when there is none (a freed slot wakes it);
    /// Ready(false) when the reply ring's indices are corrupt (the channel is marked broken).
    fn room_for_one(&mut self, cx: &Context<'_>) -> Poll<bool> {
        let Some(free) = self.reply_space() else {
            self.broken = Some(ChanError::Corrupt);
            return Poll::Ready(false);
        };
        if free <= self.in_flight {
            self.want_space = true;
            self.dispatcher = Some(cx.waker().clone());
            return Poll::Pending;
        }
        self.want_space = false;
        Poll::Ready(true)
    }

    fn reply_space(&mut self) -> Option<usize> {
        let rep = self.rep.as_mut()?;
        match rep.free() {
            Ok(f) if f > self.in_flight => Some(f),
            Ok(_) => rep.free_now().ok(),
            Err(_) => None,
        }
    }

    /// Why the dispatcher must stop, if it must: no channel, a broken one, or a client gone.
    fn ended(&self) -> Option<ChanError> {
        match self.mem {
            None => Some(ChanError::BadSetup),
            Some(_) if self.broken.is_some() => self.broken,
            Some(m) if m.is_closed(Side::Client) => Some(ChanError::PeerGone),
            Some(_) => None,
        }
    }

    /// The next request: Ok(None) with the dispatcher's waker kept when the ring is empty,
    /// Err(()) with the channel marked Corrupt when the client broke the ring.
    fn pop_request(&mut self, cx: &Context<'_>, signals: &AtomicUsize) -> Result<Option<Item>, ()> {
        let popped = self.req.as_mut().map(|r| r.pop());
        let Some(p) = self.found(cx, popped)? else { return Ok(None) };
        self.doorbell(p.notify, signals);
        Ok(Some(p.item))
    }

    /// What a look at the request ring found: the entry; None with the dispatcher's waker kept
    /// (empty); Err with the channel marked Corrupt (no ring, or the client broke it).
    fn found<T>(
        &mut self,
        cx: &Context<'_>,
        got: Option<Result<Option<T>, aring::RingError>>,
    ) -> Result<Option<T>, ()> {
        match got {
            Some(Ok(Some(entry))) => Ok(Some(entry)),
            Some(Ok(None)) => {
                self.dispatcher = Some(cx.waker().clone());
                Ok(None)
            }
            _ => {
                self.broken = Some(ChanError::Corrupt);
                Err(())
            }
        }
    }

    /// Give back the request slots taken, then make the staged replies visible: in this
    /// order, so that a client that sees a reply and calls again finds the request ring's
    /// room for that call already released.
    fn publish(&mut self, signals: &AtomicUsize) {
        if let Some(n) = self.req.as_mut().map(|r| r.release()) {
            self.doorbell(n, signals);
        }
        if let Some(n) = self.rep.as_mut().map(|r| r.publish()) {
            self.doorbell(n, signals);
        }
    }

    fn doorbell(&self, n: Notify, count: &AtomicUsize) {
        if n == Notify::Signal {
            signal(self.to_client);
            count.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Endpoint for Server {
    fn announce(&self) {
        let inner = self.inner();
        if let Some(r) = inner.req.as_ref() {
            r.prepare_sleep();
        }
        // Only when we wait for space: otherwise every reply the client takes would signal us.
        if inner.want_space {
            if let Some(r) = inner.rep.as_ref() {
                r.prepare_sleep();
            }
        }
    }

    fn check(&self) -> bool {
        let inner = self.inner();
        let closed = inner.mem.is_some_and(|m| m.is_closed(Side::Client));
        let work = closed
            || match (inner.want_space, inner.want_slot) {
                (true, _) => inner.reply_space().is_none_or(|f| f > inner.in_flight),
                (false, false) => inner.req.as_mut().is_some_and(|r| r.available().map_or(true, |n| n > 0)),
                // Waiting for a task slot: a handler's reply wakes us.
                (false, true) => false,
            };
        match inner.dispatcher.take() {
            Some(w) if work => {
                // SAFETY: the park hook runs on the serving thread, outside interrupt handlers,
                // and the dispatcher's waker was registered by its poll on this thread.
                unsafe { crate::task::wake_local(w) };
                true
            }
            w => {
                inner.dispatcher = w;
                false
            }
        }
    }

    fn cancel(&self) {
        let inner = self.inner();
        if let Some(r) = inner.req.as_ref() {
            r.cancel_sleep();
        }
        if let Some(r) = inner.rep.as_ref() {
            r.cancel_sleep();
        }
    }

    fn pushed(&self) -> usize {
        self.replies.load(Ordering::Relaxed)
    }

    fn flush(&self) {
        self.inner().publish(&self.signals);
    }
}
