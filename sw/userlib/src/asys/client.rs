//! The thread's side of its syscall buffer: a table of N calls in flight, matched to replies
//! by id (slot and generation), as `chan::Client` does for channels. Replies are collected by
//! whichever call runs and by the park hook; no dispatcher task.
use super::request::{Completion, Request};
use super::{wake, Submit};
use crate::chan::{Endpoint, ThreadPark};
use aring::{Consumer, Notify, Producer, RingMem};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::{Context, Waker};

#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    Free,
    Waiting,
    /// Dropped before its reply: freed when the reply comes.
    Abandoned,
    Done(Completion),
}

struct Entry {
    gen: u32,
    state: State,
    waker: Option<Waker>,
}

const WAITERS: usize = 16;

struct Inner<const N: usize> {
    req: Option<Producer>,
    rep: Option<Consumer>,
    entries: [Entry; N],
    waiters: [Option<Waker>; WAITERS],
    /// The kernel broke or closed the buffer: calls go the sync way from now on.
    broken: bool,
    /// Attached with a park hook, which sends held-back wakes (`Endpoint::flush`).
    parked: bool,
    /// A push found the handler asleep and its WakeSyscallHandler is held back until the
    /// thread's tasks have queued everything they can (one wake, one drain for all of it).
    wake_due: bool,
    /// Slots taken (calls in flight or not yet collected).
    used: usize,
    /// The free slots, a stack (`free[..N - used]`): a scan for a free entry read a cache line
    /// per busy one, and with the table nearly full that was most of them, per call.
    free: [u32; N],
    /// Wakers in `waiters` (none: a freed slot wakes nobody without looking).
    nwaiters: usize,
}

/// Where a thread's syscall buffer is, as the thread sees it: each ring at the start of a
/// frame mapped at `*_vaddr`, `capacity` items each (a power of two; 32 fit a 4 KiB frame).
#[derive(Clone, Copy, Debug)]
pub struct SysBuf {
    pub req_frame: usize,
    pub req_vaddr: usize,
    pub rep_frame: usize,
    pub rep_vaddr: usize,
    pub capacity: usize,
}

impl SysBuf {
    /// Lay both rings out empty (before registering).
    pub fn init(&self) -> Option<()> {
        // SAFETY: the caller maps both frames read-write at these addresses for as long as
        // the buffer is used; the rings fit them (checked by the kernel at registration).
        unsafe {
            RingMem::init(self.req_vaddr as *mut u8, self.capacity).ok()?;
            RingMem::init(self.rep_vaddr as *mut u8, self.capacity).ok()?;
        }
        Some(())
    }

    /// TCB_RegisterSyscallBuffer for thread `tcb`, completions raised as `vector` on its
    /// U-notification.
    pub fn register(&self, tcb: usize, vector: usize) -> crate::Result<()> {
        crate::invoke::invoke0(
            tcb,
            abi::label::TCB_REGISTER_SYSCALL_BUFFER,
            &[0, self.capacity, 0, self.capacity, vector],
            &[self.req_frame, self.rep_frame],
        )
    }
}

/// TCB_UnregisterSyscallBuffer.
pub fn unregister(tcb: usize) -> crate::Result<()> {
    crate::invoke::invoke0(tcb, abi::label::TCB_UNREGISTER_SYSCALL_BUFFER, &[], &[])
}

/// A thread's async-syscall client with up to `N` calls in flight (N at most the ring
/// capacity). Put it in a `static`, [`Client::attach`] it on its thread after registering the
/// buffer, and [`super::install`] it to make the ordinary API use it.
pub struct Client<const N: usize> {
    inner: UnsafeCell<Inner<N>>,
    /// WakeSyscallHandler calls made (requests that found the handler asleep).
    pub wakes: AtomicUsize,
    /// Calls completed.
    pub completed: AtomicUsize,
}

// SAFETY: `inner` is used only by the thread the client was attached on (its coroutines and
// its park hook, which never run at the same time); the counters are atomics.
unsafe impl<const N: usize> Sync for Client<N> {}

impl<const N: usize> Default for Client<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Client<N> {
    pub const fn new() -> Self {
        Client {
            inner: UnsafeCell::new(Inner {
                req: None,
                rep: None,
                entries: [const { Entry { gen: 0, state: State::Free, waker: None } }; N],
                waiters: [const { None }; WAITERS],
                broken: false,
                parked: false,
                wake_due: false,
                used: 0,
                free: free_stack(),
                nwaiters: 0,
            }),
            wakes: AtomicUsize::new(0),
            completed: AtomicUsize::new(0),
        }
    }

    /// Attach to `buf` (initialised and registered) on the owning thread. With `park`, the
    /// thread's park hook collects replies and sleeps on the reply ring's flag (so the kernel
    /// raises the completion vector only then).
    pub fn attach(&'static self, buf: &SysBuf, park: Option<&ThreadPark>) -> Option<()> {
        let inner = self.inner();
        if inner.req.is_some() || N == 0 || N > buf.capacity || N > u32::MAX as usize {
            return None;
        }
        // SAFETY: as `SysBuf::init`.
        let (req, rep) = unsafe {
            (
                RingMem::attach(buf.req_vaddr as *mut u8, buf.capacity).ok()?,
                RingMem::attach(buf.rep_vaddr as *mut u8, buf.capacity).ok()?,
            )
        };
        inner.req = Some(req.producer());
        inner.rep = Some(rep.consumer());
        if let Some(p) = park {
            if !p.register(self) {
                return None;
            }
            inner.parked = true;
        }
        Some(())
    }

    #[allow(clippy::mut_from_ref)]
    fn inner(&self) -> &mut Inner<N> {
        // SAFETY: owning thread only; no caller keeps the reference across a call that could
        // reach `inner` again (wakers only queue tasks).
        unsafe { &mut *self.inner.get() }
    }

    /// Calls a slot is taken for right now (tests: nothing leaks).
    pub fn in_flight(&self) -> usize {
        self.inner().entries.iter().filter(|e| e.state != State::Free).count()
    }

    /// Send a held-back wake now.
    fn wake_if_due(&self) {
        let inner = self.inner();
        if inner.wake_due {
            inner.wake_due = false;
            self.doorbell(Notify::Signal);
        }
    }

    fn doorbell(&self, n: Notify) {
        if n == Notify::Signal {
            self.wakes.fetch_add(1, Ordering::Relaxed);
            if wake().is_err() {
                self.inner().broken = true;
            }
        }
    }
}

impl<const N: usize> Inner<N> {
    /// Take every reply and hand it to its call; true if a waiting coroutine was woken. A
    /// reply for no call of ours, or a broken ring, ends async use.
    fn drain(&mut self) -> (bool, Notify) {
        let mut woke = false;
        let mut notify = Notify::Quiet;
        while !self.broken {
            let Some(rep) = self.rep.as_mut() else { break };
            match rep.pop() {
                Ok(Some(p)) => {
                    if p.notify == Notify::Signal {
                        notify = Notify::Signal;
                    }
                    match self.deliver(p.item.id, Completion::from_item(&p.item)) {
                        Some(w) => woke |= w,
                        None => self.fail(),
                    }
                }
                Ok(None) => break,
                Err(_) => self.fail(),
            }
        }
        (woke, notify)
    }

    fn deliver(&mut self, id: u64, c: Completion) -> Option<bool> {
        let (slot, gen) = ((id & 0xffff_ffff) as usize, (id >> 32) as u32);
        let e = self.entries.get_mut(slot)?;
        if e.gen != gen {
            return None;
        }
        match e.state {
            State::Waiting => {
                e.state = State::Done(c);
                Some(e.waker.take().map(|w| w.wake()).is_some())
            }
            State::Abandoned => Some(self.free(slot)),
            State::Free | State::Done(_) => None,
        }
    }

    fn fail(&mut self) {
        self.broken = true;
        self.nwaiters = 0;
        for w in self
            .entries
            .iter_mut()
            .filter_map(|e| e.waker.take())
            .chain(self.waiters.iter_mut().filter_map(|w| w.take()))
        {
            w.wake();
        }
    }

    fn alloc(&mut self) -> Option<usize> {
        let i = *self.free.get(N.checked_sub(self.used + 1)?)? as usize;
        self.entries[i].state = State::Waiting;
        self.used += 1;
        Some(i)
    }

    fn free(&mut self, slot: usize) -> bool {
        let e = &mut self.entries[slot];
        if e.state != State::Free {
            self.used -= 1;
            self.free[N - 1 - self.used] = slot as u32;
        }
        e.state = State::Free;
        e.gen = e.gen.wrapping_add(1);
        e.waker = None;
        if self.nwaiters == 0 {
            return false;
        }
        self.nwaiters -= 1;
        self.waiters.iter_mut().find_map(|w| w.take()).map(|w| w.wake()).is_some()
    }

    /// Push the request for slot `s`; Err if the ring has no room now.
    fn push(&mut self, s: usize, r: &Request) -> Result<Notify, ()> {
        let id = s as u64 | (self.entries[s].gen as u64) << 32;
        let items = r.to_items(id);
        let req = self.req.as_mut().ok_or(())?;
        // One index store and one look at the handler's flag for both items (push_all reads
        // the cached count first: a fresh read of the kernel's head is a cache miss).
        req.push_all(&items[..r.items()]).map_err(|_| ())
    }
}

/// Every slot free, slot 0 on top.
const fn free_stack<const N: usize>() -> [u32; N] {
    let mut f = [0; N];
    let mut i = 0;
    while i < N {
        f[i] = (N - 1 - i) as u32;
        i += 1;
    }
    f
}

/// Where a call stands: not sent, or sent in slot `.0`.
pub type Ticket = Option<usize>;

/// What a call's poll found.
pub enum Step {
    Done(Completion),
    /// The buffer is unusable: do it the sync way.
    Sync,
    Pending,
}

impl<const N: usize> Submit for Client<N> {
    fn poll_call(&self, t: &mut Ticket, r: &Request, cx: Option<&mut Context<'_>>) -> Step {
        let inner = self.inner();
        if inner.req.is_none() || (inner.broken && t.is_none()) {
            return Step::Sync;
        }
        let s = match *t {
            Some(s) => s,
            None => {
                let slot = inner.alloc().or_else(|| {
                    let _ = inner.drain();
                    inner.alloc()
                });
                let Some(s) = slot else {
                    // A blocking caller (no cx) spins, and wakes the handler now and then.
                    if let Some(cx) = cx {
                        match inner.waiters.iter_mut().find(|w| w.is_none()) {
                            Some(w) => {
                                *w = Some(cx.waker().clone());
                                inner.nwaiters += 1;
                            }
                            None => cx.waker().wake_by_ref(),
                        }
                    }
                    return Step::Pending;
                };
                match inner.push(s, r) {
                    // From a task of a thread with a park hook, the wake waits for the hook
                    // (the thread's other tasks may have requests to queue too).
                    Ok(Notify::Signal) if cx.is_some() && inner.parked => inner.wake_due = true,
                    Ok(n) => self.doorbell(n),
                    Err(()) => {
                        // The kernel is behind: make sure it runs, and try again later.
                        inner.free(s);
                        inner.wake_due = false;
                        self.doorbell(Notify::Signal);
                        if let Some(cx) = cx {
                            cx.waker().wake_by_ref();
                        }
                        return if inner.broken { Step::Sync } else { Step::Pending };
                    }
                }
                *t = Some(s);
                s
            }
        };
        let (_, n) = inner.drain();
        // The kernel waited for room in the reply ring: it has some now.
        self.doorbell(n);
        let e = &mut inner.entries[s];
        if let State::Done(c) = e.state {
            inner.free(s);
            *t = None;
            self.completed.fetch_add(1, Ordering::Relaxed);
            return Step::Done(c);
        }
        if inner.broken {
            inner.free(s);
            *t = None;
            return Step::Sync;
        }
        if let Some(cx) = cx {
            match &e.waker {
                Some(w) if w.will_wake(cx.waker()) => {}
                _ => e.waker = Some(cx.waker().clone()),
            }
        }
        Step::Pending
    }

    fn drop_call(&self, t: &mut Ticket) {
        if let Some(s) = t.take() {
            let inner = self.inner();
            if inner.entries[s].state == State::Waiting && !inner.broken {
                inner.entries[s].state = State::Abandoned;
                inner.entries[s].waker = None;
            } else {
                inner.free(s);
            }
        }
    }

    fn kick(&self) {
        self.inner().wake_due = false;
        self.doorbell(Notify::Signal);
    }
}

impl<const N: usize> Endpoint for Client<N> {
    fn announce(&self) {
        if let Some(r) = self.inner().rep.as_ref() {
            r.prepare_sleep();
        }
    }

    fn check(&self) -> bool {
        let (woke, n) = self.inner().drain();
        self.doorbell(n);
        woke
    }

    fn cancel(&self) {
        if let Some(r) = self.inner().rep.as_ref() {
            r.cancel_sleep();
        }
    }

    fn flush(&self) {
        self.wake_if_due();
    }

    fn remote_work(&self) -> bool {
        let inner = self.inner();
        inner.used > 0 && !inner.broken
    }
}
