//! A thread's syscall buffer driven by a serving loop of its own, with no future and no waker
//! per call: the loop names each request with a tag of its own (`0..N`, the index of its
//! record of the work), queues requests in batches (one ring index store and one look at the
//! handler's flag per batch, one WakeSyscallHandler if the handler sleeps) and takes the
//! completions back in batches as (tag, completion). For a server that turns its clients'
//! requests into system calls (`mem-server`): there a task, a future and a wake per call
//! cost more than the call's trip through the rings.
//!
//! Nothing read from the reply ring is trusted: `aring` validates the indices, and a
//! completion must name a tag in flight; anything else breaks the buffer for good (the
//! caller does its calls the sync way from then on).
use super::client::SysBuf;
use super::request::{Completion, Request};
use super::wake;
use crate::chan::{Endpoint, ThreadPark};
use aring::{Consumer, Item, Notify, Producer, RingMem};
use core::cell::UnsafeCell;
use core::sync::atomic::{AtomicUsize, Ordering};
use core::task::{Context, Waker};

/// Items queued before they are published (a request takes one or two).
const STAGE: usize = 16;

/// Why [`Direct::submit`] did not queue a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refused {
    /// The tag is out of range or in flight, or the request ring has no room now.
    Busy,
    /// The buffer is not attached or is unusable: do the call the sync way.
    Broken,
}

struct Inner<const N: usize> {
    req: Option<Producer>,
    rep: Option<Consumer>,
    /// Tags sent whose completion has not come.
    busy: [bool; N],
    in_flight: usize,
    /// Requests' items not published yet (`flush`).
    staged: [Item; STAGE],
    nstaged: usize,
    /// The serving loop, woken by the park hook when completions arrive.
    waker: Option<Waker>,
    broken: bool,
}

/// A thread's syscall buffer with up to `N` requests in flight (N at most the ring capacity),
/// used by one loop on the thread that attached it. Put it in a `static`.
pub struct Direct<const N: usize> {
    inner: UnsafeCell<Inner<N>>,
    /// WakeSyscallHandler calls made (batches that found the handler asleep).
    pub wakes: AtomicUsize,
    /// Completions taken.
    pub completed: AtomicUsize,
}

// SAFETY: `inner` is used only by the thread the buffer was attached on (its loop and its park
// hook, which never run at the same time); the counters are atomics.
unsafe impl<const N: usize> Sync for Direct<N> {}

impl<const N: usize> Default for Direct<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> Direct<N> {
    pub const fn new() -> Self {
        Direct {
            inner: UnsafeCell::new(Inner {
                req: None,
                rep: None,
                busy: [false; N],
                in_flight: 0,
                staged: [Item { id: 0, label: 0, len: 0, payload: [0; aring::PAYLOAD_WORDS] }; STAGE],
                nstaged: 0,
                waker: None,
                broken: false,
            }),
            wakes: AtomicUsize::new(0),
            completed: AtomicUsize::new(0),
        }
    }

    /// Attach to `buf` (initialised and registered) on the owning thread, whose park hook
    /// `park` then watches the reply ring (and sleeps on its flag, so the kernel raises the
    /// completion vector only then).
    pub fn attach(&'static self, buf: &SysBuf, park: &ThreadPark) -> Option<()> {
        let inner = self.inner();
        if inner.req.is_some() || N == 0 || N > buf.capacity {
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
        park.register(self).then_some(())
    }

    #[allow(clippy::mut_from_ref)]
    fn inner(&self) -> &mut Inner<N> {
        // SAFETY: owning thread only; no caller keeps the reference across a call that could
        // reach `inner` again (`drain` lets it go before it calls out).
        unsafe { &mut *self.inner.get() }
    }

    /// Usable: attached and not broken.
    pub fn ready(&self) -> bool {
        let inner = self.inner();
        inner.req.is_some() && !inner.broken
    }

    /// Requests sent (or queued) whose completion has not come.
    pub fn in_flight(&self) -> usize {
        self.inner().in_flight
    }

    /// Queue `r` under `tag`; it goes to the kernel at the next [`Direct::flush`] (or when
    /// the queue is full). Its completion comes back from [`Direct::drain`] with the tag.
    pub fn submit(&self, tag: usize, r: &Request) -> Result<(), Refused> {
        let inner = self.inner();
        if inner.req.is_none() || inner.broken {
            return Err(Refused::Broken);
        }
        if inner.busy.get(tag).is_none_or(|b| *b) {
            return Err(Refused::Busy);
        }
        let k = r.items();
        if inner.nstaged + k > STAGE {
            self.flush();
        }
        let inner = self.inner();
        // Room for what is queued and this one (the kernel may not have taken every request
        // in flight yet: a fresh look at its head only when the cached one falls short).
        let need = inner.nstaged + k;
        let room = inner.req.as_mut().map(|p| match p.free() {
            Ok(f) if f < need => p.free_now(),
            f => f,
        });
        let room = match room {
            Some(Ok(f)) => f,
            _ => {
                inner.broken = true;
                return Err(Refused::Broken);
            }
        };
        if room < need {
            return Err(Refused::Busy);
        }
        let items = r.to_items(tag as u64);
        inner.staged[inner.nstaged..need].copy_from_slice(&items[..k]);
        inner.nstaged = need;
        inner.busy[tag] = true;
        inner.in_flight += 1;
        Ok(())
    }

    /// Publish the queued requests (one index store) and wake the kernel handler if it
    /// sleeps.
    pub fn flush(&self) {
        let inner = self.inner();
        if inner.nstaged == 0 {
            return;
        }
        let n = inner.nstaged;
        inner.nstaged = 0;
        // `submit` made sure they fit, and only this thread pushes.
        match inner.req.as_mut().map(|p| p.push_all(&inner.staged[..n])) {
            Some(Ok(notify)) => self.doorbell(notify),
            _ => self.fail(),
        }
    }

    /// Take every completion there is: `f(tag, completion)` for each, in ring order (the tag
    /// is free again when `f` runs). Ok(how many), or `Err(Refused::Broken)` if the buffer
    /// broke (now or before): the requests still in flight then never complete, and
    /// [`Direct::abandon`] lists their tags.
    pub fn drain(&self, mut f: impl FnMut(usize, Completion)) -> Result<usize, Refused> {
        let mut taken = 0;
        loop {
            let inner = self.inner();
            if inner.broken {
                return Err(Refused::Broken);
            }
            let Some(rep) = inner.rep.as_mut() else { return Ok(0) };
            // Looked at in place and published once for the batch (`skip`).
            let item = match rep.peek(taken) {
                Ok(Some(item)) => item,
                Ok(None) => break,
                Err(_) => {
                    self.fail();
                    return Err(Refused::Broken);
                }
            };
            let tag = item.id as usize;
            if item.id >= N as u64 || !inner.busy[tag] {
                // A completion for nothing we sent.
                self.fail();
                return Err(Refused::Broken);
            }
            inner.busy[tag] = false;
            inner.in_flight -= 1;
            taken += 1;
            f(tag, Completion::from_item(&item));
        }
        if taken > 0 {
            let inner = self.inner();
            match inner.rep.as_mut().map(|r| r.skip(taken)) {
                // The kernel waited for room in the reply ring: it has some now.
                Some(Ok(notify)) => self.doorbell(notify),
                _ => self.fail(),
            }
            self.completed.fetch_add(taken, Ordering::Relaxed);
        }
        Ok(taken)
    }

    /// Keep `cx`'s waker: the park hook wakes it when completions arrive (or the buffer
    /// breaks).
    pub fn register(&self, cx: &Context<'_>) {
        let inner = self.inner();
        match &inner.waker {
            Some(w) if w.will_wake(cx.waker()) => {}
            _ => inner.waker = Some(cx.waker().clone()),
        }
    }

    /// After the buffer broke: the tags that were in flight, each once (their requests may or
    /// may not have run).
    pub fn abandon(&self, mut f: impl FnMut(usize)) {
        let inner = self.inner();
        if !inner.broken {
            return;
        }
        let tags: [bool; N] = core::mem::replace(&mut inner.busy, [false; N]);
        inner.in_flight = 0;
        for (t, _) in tags.iter().enumerate().filter(|(_, b)| **b) {
            f(t);
        }
    }

    fn fail(&self) {
        let inner = self.inner();
        inner.broken = true;
        inner.nstaged = 0;
    }

    fn doorbell(&self, n: Notify) {
        if n == Notify::Signal {
            self.wakes.fetch_add(1, Ordering::Relaxed);
            if wake().is_err() {
                self.fail();
            }
        }
    }
}

impl<const N: usize> Endpoint for Direct<N> {
    fn announce(&self) {
        if let Some(r) = self.inner().rep.as_ref() {
            r.prepare_sleep();
        }
    }

    fn check(&self) -> bool {
        let inner = self.inner();
        let work = inner.broken || inner.rep.as_mut().is_some_and(|r| r.available().map_or(true, |n| n > 0));
        match inner.waker.take() {
            Some(w) if work => {
                w.wake();
                true
            }
            w => {
                inner.waker = w;
                false
            }
        }
    }

    fn cancel(&self) {
        if let Some(r) = self.inner().rep.as_ref() {
            r.cancel_sleep();
        }
    }

    fn flush(&self) {
        Direct::flush(self);
    }

    fn remote_work(&self) -> bool {
        let inner = self.inner();
        inner.in_flight > 0 && !inner.broken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ring memory on the heap, 64-byte aligned, for the rest of the test process.
    fn ring_mem(cap: usize) -> usize {
        #[repr(C, align(64))]
        struct Line([u8; 64]);
        let lines: &'static mut [Line] = Box::leak((0..aring::ring_bytes(cap) / 64).map(|_| Line([0; 64])).collect());
        lines.as_mut_ptr() as usize
    }

    /// A buffer attached to two host rings; the test plays the kernel on their other ends.
    fn attached<const N: usize>(cap: usize) -> (&'static Direct<N>, aring::Consumer, aring::Producer) {
        let buf =
            SysBuf { req_frame: 0, req_vaddr: ring_mem(cap), rep_frame: 0, rep_vaddr: ring_mem(cap), capacity: cap };
        buf.init().unwrap();
        let d: &'static Direct<N> = Box::leak(Box::new(Direct::new()));
        let park: &'static ThreadPark = Box::leak(Box::new(ThreadPark::new()));
        d.attach(&buf, park).unwrap();
        // SAFETY: leaked memory, laid out by `init`.
        let (req, rep) = unsafe {
            (
                RingMem::attach(buf.req_vaddr as *mut u8, cap).unwrap(),
                RingMem::attach(buf.rep_vaddr as *mut u8, cap).unwrap(),
            )
        };
        (d, req.consumer(), rep.producer())
    }

    fn unmap(cap: usize) -> Request {
        Request::invocation(cap, abi::label::RISCV_PAGE_UNMAP, &[], &[]).unwrap()
    }

    fn done(tag: u64, code: u32) -> Item {
        Item { id: tag, label: code, len: 0, payload: [0; 6] }
    }

    #[test]
    fn batches_go_out_at_flush_and_completions_come_back_by_tag() {
        let (d, mut kreq, mut krep) = attached::<4>(8);
        d.submit(2, &unmap(10)).unwrap();
        d.submit(0, &unmap(11)).unwrap();
        assert_eq!(d.submit(2, &unmap(12)), Err(Refused::Busy), "tag in flight");
        assert_eq!(d.submit(4, &unmap(12)), Err(Refused::Busy), "tag out of range");
        assert_eq!(kreq.pop().unwrap(), None, "nothing published before the flush");
        d.flush();
        let a = kreq.pop().unwrap().unwrap().item;
        let b = kreq.pop().unwrap().unwrap().item;
        assert_eq!((a.id, a.payload[0], b.id, b.payload[0]), (2, 10, 0, 11));
        assert_eq!(d.in_flight(), 2);
        // Completed out of order, taken in ring order, each tag free again in its callback.
        let _ = krep.push_all(&[done(0, 0), done(2, 3)]).unwrap();
        let mut got = vec![];
        assert_eq!(
            d.drain(|t, c| {
                got.push((t, c.code));
                d.submit(t, &unmap(20 + t)).unwrap();
            }),
            Ok(2)
        );
        assert_eq!(got, [(0, 0), (2, 3)]);
        assert_eq!(d.in_flight(), 2);
        assert_eq!(d.drain(|_, _| panic!("none left")), Ok(0));
    }

    /// Untyped_Retype: two ring items.
    fn retype() -> Request {
        Request::invocation(9, abi::label::UNTYPED_RETYPE, &[1, 2, 3, 4, 5, 6], &[2]).unwrap()
    }

    #[test]
    fn a_full_request_ring_refuses_until_the_kernel_takes() {
        let (d, mut kreq, _krep) = attached::<4>(4);
        d.submit(0, &retype()).unwrap();
        d.flush();
        d.submit(1, &retype()).unwrap();
        // Two items queued or in the ring per request: a third does not fit the 4 slots.
        assert_eq!(d.submit(2, &retype()), Err(Refused::Busy));
        assert_eq!(d.in_flight(), 2);
        // The kernel takes the first request: room again (seen by a fresh look at its head).
        let _ = kreq.skip(2).unwrap();
        d.submit(2, &retype()).unwrap();
        d.flush();
        let ids: Vec<u64> = (0..2).map(|k| kreq.peek(2 * k).unwrap().unwrap().id).collect();
        assert_eq!(ids, [1, 2]);
    }

    #[test]
    fn forged_completions_break_the_buffer() {
        let (d, _kreq, mut krep) = attached::<4>(8);
        d.submit(1, &unmap(5)).unwrap();
        d.submit(3, &unmap(6)).unwrap();
        d.flush();
        // A completion for a tag not in flight.
        let _ = krep.push(&done(2, 0)).unwrap();
        assert_eq!(d.drain(|_, _| panic!("forged")), Err(Refused::Broken));
        assert!(!d.ready());
        assert_eq!(d.submit(0, &unmap(1)), Err(Refused::Broken));
        let mut left = vec![];
        d.abandon(|t| left.push(t));
        assert_eq!(left, [1, 3]);
        assert_eq!(d.in_flight(), 0);
        // Past the table.
        let (d, _kreq, mut krep) = attached::<4>(8);
        d.submit(0, &unmap(5)).unwrap();
        d.flush();
        let _ = krep.push(&done(1 << 32, 0)).unwrap();
        assert_eq!(d.drain(|_, _| panic!("forged")), Err(Refused::Broken));
    }
}
