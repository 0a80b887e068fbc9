//! Host tests: queue order, hand-off, cancellation, exclusion and notify, first polled by hand
//! (deterministic), then from OS threads standing in for harts.
use crate::{Condvar, Mutex, NoPriority, Semaphore, TaskPriority};
use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

/// A waker that counts its wakes.
struct Count(AtomicUsize);

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

struct Probe {
    count: Arc<Count>,
    waker: Waker,
}

impl Probe {
    fn new() -> Probe {
        let count = Arc::new(Count(AtomicUsize::new(0)));
        Probe { waker: Waker::from(count.clone()), count }
    }

    fn wakes(&self) -> usize {
        self.count.0.load(SeqCst)
    }

    fn poll<F: Future>(&self, f: Pin<&mut F>) -> Poll<F::Output> {
        f.poll(&mut Context::from_waker(&self.waker))
    }
}

thread_local! {
    /// The "running task's" priority for [`TestPrio`]; boosts change it as the runtime would.
    static PRIO: Cell<u8> = const { Cell::new(0) };
}

struct TestPrio;

struct Restore(u8);

impl Drop for Restore {
    fn drop(&mut self) {
        PRIO.with(|p| p.set(self.0));
    }
}

impl TaskPriority for TestPrio {
    type Boost = Restore;

    fn of(_: &Waker) -> u8 {
        PRIO.with(|p| p.get())
    }

    fn boost(_: &Waker, ceiling: u8) -> Restore {
        PRIO.with(|p| Restore(p.replace(p.get().max(ceiling))))
    }
}

type Sem = Semaphore<NoPriority>;

#[test]
fn waiters_are_served_fifo() {
    let sem = Sem::new(0);
    let probes: Vec<Probe> = (0..3).map(|_| Probe::new()).collect();
    let mut futs: Vec<_> = (0..3).map(|_| Box::pin(sem.acquire())).collect();
    for (p, f) in probes.iter().zip(futs.iter_mut()) {
        assert!(p.poll(f.as_mut()).is_pending());
    }
    for i in 0..3 {
        sem.release();
        for (j, p) in probes.iter().enumerate() {
            assert_eq!(p.wakes(), usize::from(j <= i), "after release {i}, waiter {j}");
        }
        assert!(probes[i].poll(futs[i].as_mut()).is_ready());
    }
    assert_eq!(sem.available(), 0);
}

#[test]
fn higher_priority_first_fifo_within() {
    let sem = Semaphore::<TestPrio>::new(0);
    let order = [(0, 3), (1, 7), (2, 3), (3, 7), (4, 1)]; // (waiter, priority)
    let probes: Vec<Probe> = order.iter().map(|_| Probe::new()).collect();
    let mut futs: Vec<_> = order.iter().map(|_| Box::pin(sem.acquire())).collect();
    for &(i, prio) in &order {
        PRIO.with(|p| p.set(prio));
        assert!(probes[i].poll(futs[i].as_mut()).is_pending());
    }
    let mut served = vec![];
    for _ in 0..order.len() {
        sem.release();
        let i = (0..order.len()).find(|&i| probes[i].wakes() == 1 && !served.contains(&i)).unwrap();
        assert!(probes[i].poll(futs[i].as_mut()).is_ready());
        served.push(i);
    }
    assert_eq!(served, [1, 3, 0, 2, 4]);
}

#[test]
fn no_barging_past_a_waiter() {
    let sem = Sem::new(0);
    let p = Probe::new();
    let mut a = Box::pin(sem.acquire());
    assert!(p.poll(a.as_mut()).is_pending());
    sem.release(); // handed to `a`, not to the pool
    assert_eq!(sem.available(), 0);
    assert!(!sem.try_acquire());
    assert!(Probe::new().poll(Box::pin(sem.acquire()).as_mut()).is_pending());
    assert!(p.poll(a.as_mut()).is_ready());
}

#[test]
fn dropped_waiter_leaves_the_queue() {
    let sem = Sem::new(0);
    let (pa, pb, pc) = (Probe::new(), Probe::new(), Probe::new());
    let mut a = Box::pin(sem.acquire());
    let mut b = Box::pin(sem.acquire());
    let mut c = Box::pin(sem.acquire());
    assert!(pa.poll(a.as_mut()).is_pending());
    assert!(pb.poll(b.as_mut()).is_pending());
    assert!(pc.poll(c.as_mut()).is_pending());
    drop(b); // from the middle
    sem.release();
    assert_eq!((pa.wakes(), pc.wakes()), (1, 0));
    drop(a); // granted but never polled: its permit passes to c
    assert_eq!(pc.wakes(), 1);
    assert!(pc.poll(c.as_mut()).is_ready());
    drop(c);
    sem.release();
    assert_eq!(sem.available(), 1, "nobody queued: the permit is free");
    // A never-polled future owns nothing.
    drop(sem.acquire());
    assert!(sem.try_acquire());
}

#[test]
fn waker_of_the_latest_poll_is_woken() {
    let sem = Sem::new(0);
    let (old, new) = (Probe::new(), Probe::new());
    let mut a = Box::pin(sem.acquire());
    assert!(old.poll(a.as_mut()).is_pending());
    assert!(new.poll(a.as_mut()).is_pending()); // moved to another task's context
    sem.release();
    assert_eq!((old.wakes(), new.wakes()), (0, 1));
}

#[test]
fn mutex_queues_and_hands_over() {
    let m = Mutex::<u32, NoPriority>::new(0);
    let (pa, pb) = (Probe::new(), Probe::new());
    let mut la = Box::pin(m.lock());
    let Poll::Ready(mut g) = pa.poll(la.as_mut()) else { panic!("free mutex") };
    let mut lb = Box::pin(m.lock());
    assert!(pb.poll(lb.as_mut()).is_pending());
    *g += 1;
    drop(g);
    assert_eq!(pb.wakes(), 1);
    let Poll::Ready(g) = pb.poll(lb.as_mut()) else { panic!("handed over") };
    assert_eq!(*g, 1);
}

#[test]
fn ceiling_raises_the_holder_until_unlock() {
    let m = Mutex::<(), TestPrio>::with_ceiling(9, ());
    let p = Probe::new();
    PRIO.with(|x| x.set(2));
    let mut l = Box::pin(m.lock());
    let Poll::Ready(g) = p.poll(l.as_mut()) else { panic!("free mutex") };
    assert_eq!(PRIO.with(|x| x.get()), 9);
    drop(g);
    assert_eq!(PRIO.with(|x| x.get()), 2);
    // A holder above the ceiling keeps its own priority.
    PRIO.with(|x| x.set(12));
    let mut l = Box::pin(m.lock());
    let Poll::Ready(g) = p.poll(l.as_mut()) else { panic!("free mutex") };
    assert_eq!(PRIO.with(|x| x.get()), 12);
    drop(g);
}

#[test]
fn condvar_wait_notify() {
    let m = Mutex::<u32, NoPriority>::new(0);
    let cv = Condvar::new();
    let (pa, pb, pm) = (Probe::new(), Probe::new(), Probe::new());
    let lock_now = || match pm.poll(Box::pin(m.lock()).as_mut()) {
        Poll::Ready(g) => g,
        Poll::Pending => panic!("mutex should be free"),
    };
    let mut wa = Box::pin(cv.wait(lock_now()));
    assert!(pa.poll(wa.as_mut()).is_pending()); // queued, mutex released
    let mut wb = Box::pin(cv.wait(lock_now()));
    assert!(pb.poll(wb.as_mut()).is_pending());
    *lock_now() = 5;
    assert!(cv.notify_one());
    assert_eq!((pa.wakes(), pb.wakes()), (1, 0), "first waiter first");
    let g = lock_now(); // a holds nothing yet: it must re-lock
    assert!(pa.poll(wa.as_mut()).is_pending(), "notified, waiting for the mutex");
    drop(g);
    let Poll::Ready(g) = pa.poll(wa.as_mut()) else { panic!("mutex free again") };
    assert_eq!(*g, 5);
    drop(g);
    // A notified waiter that is dropped passes the notification on.
    let mut wc = Box::pin(cv.wait(lock_now()));
    let pc = Probe::new();
    assert!(pc.poll(wc.as_mut()).is_pending());
    assert!(cv.notify_one()); // b
    drop(wb);
    assert_eq!(pc.wakes(), 1);
    assert!(pc.poll(wc.as_mut()).is_ready());
    assert!(!cv.notify_one(), "nobody left");
}

#[test]
fn condvar_notify_all_wakes_every_waiter() {
    let m = Mutex::<(), NoPriority>::new(());
    let cv = Condvar::new();
    let probes: Vec<Probe> = (0..20).map(|_| Probe::new()).collect(); // more than one wake batch
    let mut waits = vec![];
    for p in &probes {
        let Poll::Ready(g) = p.poll(Box::pin(m.lock()).as_mut()) else { panic!("free") };
        let mut w = Box::pin(cv.wait(g));
        assert!(p.poll(w.as_mut()).is_pending());
        waits.push(w);
    }
    cv.notify_all();
    assert!(probes.iter().all(|p| p.wakes() == 1));
    for (p, w) in probes.iter().zip(waits.iter_mut()) {
        let Poll::Ready(g) = p.poll(w.as_mut()) else { panic!("each re-locks in turn") };
        drop(g);
    }
}

/// Run `f` on this OS thread, parking it while pending (a thread standing in for a hart).
fn block_on<F: Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut Context::from_waker(&waker)) {
            return v;
        }
        std::thread::park();
    }
}

#[test]
fn mutex_excludes_across_threads() {
    static M: Mutex<(u64, u64), NoPriority> = Mutex::new((0, 0));
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..5_000 {
                    let mut g = block_on(M.lock());
                    // Two fields updated apart: a second holder would see them differ.
                    g.0 += 1;
                    std::hint::black_box(&mut *g);
                    assert_eq!(g.0, g.1 + 1);
                    g.1 += 1;
                }
            });
        }
    });
    assert_eq!(*block_on(M.lock()), (20_000, 20_000));
}

#[test]
fn semaphore_never_loses_a_wakeup_across_threads() {
    // A ping-pong through two semaphores: a lost wake-up hangs the test.
    static PING: Sem = Sem::new(0);
    static PONG: Sem = Sem::new(0);
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..20_000 {
                block_on(PING.acquire());
                PONG.release();
            }
        });
        for _ in 0..20_000 {
            PING.release();
            block_on(PONG.acquire());
        }
    });
    assert_eq!((PING.available(), PONG.available()), (0, 0));
}

#[test]
fn condvar_producer_consumer_across_threads() {
    static QUEUE: Mutex<Vec<u32>, NoPriority> = Mutex::new(Vec::new());
    static NOT_EMPTY: Condvar = Condvar::new();
    const EACH: u32 = 3_000;
    let total = std::thread::scope(|s| {
        let consumers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    let mut sum = 0u64;
                    loop {
                        let mut q = block_on(QUEUE.lock());
                        while q.is_empty() {
                            q = block_on(NOT_EMPTY.wait(q));
                        }
                        let v = q.remove(0);
                        drop(q);
                        if v == 0 {
                            return sum;
                        }
                        sum += u64::from(v);
                    }
                })
            })
            .collect();
        let producers: Vec<_> = (0..2)
            .map(|_| {
                s.spawn(|| {
                    for v in 1..=EACH {
                        block_on(QUEUE.lock()).push(v);
                        NOT_EMPTY.notify_one();
                    }
                })
            })
            .collect();
        producers.into_iter().for_each(|p| p.join().unwrap());
        for _ in 0..2 {
            block_on(QUEUE.lock()).push(0); // one stop mark per consumer
            NOT_EMPTY.notify_all();
        }
        consumers.into_iter().map(|c| c.join().unwrap()).sum::<u64>()
    });
    assert_eq!(total, 2 * u64::from(EACH) * u64::from(EACH + 1) / 2);
}
