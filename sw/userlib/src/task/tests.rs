//! Host tests of the runtime. Each test leaks its own executor (they are `'static` by design);
//! a condition-variable `Park` stands in for U-notification Wait, and std threads calling
//! wakers stand in for user-interrupt handlers and other harts.
use super::*;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

/// Latched park: `unpark_from_irq` before `park` makes it return at once.
#[derive(Default)]
struct CondPark {
    token: Mutex<bool>,
    cv: Condvar,
    parks: AtomicUsize,
    unparks: AtomicUsize,
}

impl Park for CondPark {
    fn park(&self) {
        self.parks.fetch_add(1, Ordering::Relaxed);
        let mut t = self.token.lock().unwrap();
        while !*t {
            t = self.cv.wait(t).unwrap();
        }
        *t = false;
    }
    fn unpark_from_irq(&self) {
        self.unparks.fetch_add(1, Ordering::Relaxed);
        *self.token.lock().unwrap() = true;
        self.cv.notify_one();
    }
}

fn runtime<const N: usize, const S: usize>() -> (Handle<N, S>, &'static CondPark) {
    let ex: &'static Executor<N, S> = Box::leak(Box::new(Executor::new()));
    let park: &'static CondPark = Box::leak(Box::default());
    (ex.claim(park).unwrap(), park)
}

/// Abort the test binary if `f` takes longer than `secs`: a lost wake-up hangs forever.
fn with_watchdog<T>(secs: u64, f: impl FnOnce() -> T) -> T {
    let done = Arc::new(AtomicBool::new(false));
    let d = done.clone();
    std::thread::spawn(move || {
        for _ in 0..secs * 10 {
            std::thread::sleep(Duration::from_millis(100));
            if d.load(Ordering::Relaxed) {
                return;
            }
        }
        eprintln!("watchdog: no completion after {secs} s (lost wake-up?)");
        std::process::abort();
    });
    let out = f();
    done.store(true, Ordering::Relaxed);
    out
}

/// A one-shot event another thread can fire: the future stores its waker, `fire` wakes it.
#[derive(Default)]
struct Event {
    fired: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Event {
    fn fire(&self) {
        self.fired.store(true, Ordering::Release);
        if let Some(w) = self.waker.lock().unwrap().take() {
            w.wake();
        }
    }
    fn wait(self: &Arc<Self>) -> impl std::future::Future<Output = ()> {
        let ev = self.clone();
        std::future::poll_fn(move |cx: &mut Context<'_>| {
            // Register before checking, so a fire between the two is seen by one or the other.
            *ev.waker.lock().unwrap() = Some(cx.waker().clone());
            if ev.fired.load(Ordering::Acquire) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        })
    }
}

#[test]
fn spawn_and_join_output() {
    let (rt, _) = runtime::<8, 256>();
    let a = rt.spawn(1, async { 6 * 7 }).unwrap();
    let b = rt.spawn(1, async { String::from("out") }).unwrap();
    assert_eq!(rt.block_on(async { (a.await, b.await) }), (42, String::from("out")));
}

#[test]
fn higher_priority_first_fifo_within_one() {
    let (rt, _) = runtime::<16, 128>();
    let log = Rc::new(RefCell::new(Vec::new()));
    let mut handles = Vec::new();
    for (name, prio) in [("a5", 5), ("b200", 200), ("c5", 5), ("d0", 0), ("e200", 200), ("f64", 64), ("g255", 255)] {
        let log = log.clone();
        handles.push(rt.spawn(prio, async move { log.borrow_mut().push(name) }).unwrap());
    }
    assert_eq!(rt.run_ready(), 7);
    assert_eq!(*log.borrow(), ["g255", "b200", "e200", "f64", "a5", "c5", "d0"]);
    for h in handles {
        assert!(h.is_finished());
        h.detach();
    }
}

#[test]
fn yield_round_robins_within_a_priority_and_higher_preempts() {
    let (rt, _) = runtime::<8, 256>();
    let log = Rc::new(RefCell::new(Vec::new()));
    let worker = |name: &'static str, rounds: usize| {
        let log = log.clone();
        async move {
            for i in 0..rounds {
                log.borrow_mut().push(format!("{name}{i}"));
                yield_now().await;
            }
        }
    };
    let a = rt.spawn(3, worker("a", 3)).unwrap();
    let b = rt.spawn(3, worker("b", 3)).unwrap();
    let low = rt.spawn(1, worker("low", 1)).unwrap();
    // A high-priority task spawned from inside a worker runs before the worker's next turn.
    let log2 = log.clone();
    let spawner = rt;
    let c = rt
        .spawn(3, async move {
            let h = spawner.spawn(9, async move { log2.borrow_mut().push("high".into()) }).unwrap();
            yield_now().await;
            h.await
        })
        .unwrap();
    rt.run_ready();
    assert_eq!(*log.borrow(), ["a0", "b0", "high", "a1", "b1", "a2", "b2", "low0"]);
    for h in [a, b, low, c] {
        h.detach();
    }
}

#[test]
fn wakers_from_another_thread_and_park_instead_of_spinning() {
    let (rt, park) = runtime::<64, 256>();
    let events: Vec<Arc<Event>> = (0..32).map(|_| Arc::default()).collect();
    let handles: Vec<_> = events
        .iter()
        .enumerate()
        .map(|(i, ev)| {
            let ev = ev.clone();
            rt.spawn((i % 4) as u8, async move {
                ev.wait().await;
                i
            })
            .unwrap()
        })
        .collect();
    let firing = events.clone();
    let sum = with_watchdog(30, || {
        let t = std::thread::spawn(move || {
            for ev in firing.iter().rev() {
                std::thread::sleep(Duration::from_micros(200));
                ev.fire();
            }
        });
        let sum = rt.block_on(async {
            let mut s = 0;
            for h in handles {
                s += h.await;
            }
            s
        });
        t.join().unwrap();
        sum
    });
    assert_eq!(sum, (0..32).sum::<usize>());
    // With the events 200 µs apart the executor had nothing to do most of the time: it must
    // have parked (and been unparked by the other thread's wakers), not spun.
    assert!(park.parks.load(Ordering::Relaxed) > 0);
    assert!(park.unparks.load(Ordering::Relaxed) > 0);
}

/// Counts drops, to see when a future (or an output) is destroyed.
struct DropFlag(Rc<Cell<usize>>);
impl Drop for DropFlag {
    fn drop(&mut self) {
        self.0.set(self.0.get() + 1);
    }
}

#[test]
fn dropping_or_aborting_the_handle_drops_the_future() {
    let (rt, _) = runtime::<4, 256>();
    let drops = Rc::new(Cell::new(0));
    let ran = Rc::new(Cell::new(false));
    let (d, r) = (DropFlag(drops.clone()), ran.clone());
    let h = rt
        .spawn(1, async move {
            let _d = d;
            std::future::pending::<()>().await;
            r.set(true);
        })
        .unwrap();
    rt.run_ready(); // now parked on pending()
    assert_eq!(drops.get(), 0);
    drop(h);
    assert_eq!(drops.get(), 1, "future dropped when the handle was");
    // Cancelled before it ever ran: dropped without a poll.
    let d = DropFlag(drops.clone());
    let r = ran.clone();
    rt.spawn(1, async move {
        let _d = d;
        r.set(true);
    })
    .unwrap()
    .abort();
    assert_eq!(drops.get(), 2);
    assert_eq!(rt.run_ready(), 1, "the aborted task's queue entry is skipped");
    assert!(!ran.get());
}

#[test]
fn a_task_dropping_its_own_handle_is_cancelled_after_its_poll() {
    let (rt, _) = runtime::<4, 256>();
    let own: Rc<RefCell<Option<JoinHandle<()>>>> = Rc::default();
    let (o, polls) = (own.clone(), Rc::new(Cell::new(0)));
    let p = polls.clone();
    let h = rt
        .spawn(1, async move {
            p.set(p.get() + 1);
            o.borrow_mut().take(); // drop our own handle, mid-poll
            yield_now().await;
            p.set(p.get() + 1);
        })
        .unwrap();
    *own.borrow_mut() = Some(h);
    rt.run_ready();
    assert_eq!(polls.get(), 1, "never resumed after its handle was dropped");
}

#[test]
fn detach_runs_to_completion_and_drops_the_output() {
    let (rt, _) = runtime::<4, 256>();
    let drops = Rc::new(Cell::new(0));
    let d = drops.clone();
    rt.spawn(1, async move { DropFlag(d) }).unwrap().detach();
    rt.run_ready();
    assert_eq!(drops.get(), 1);
    // An output nobody collects is dropped with the handle.
    let d = drops.clone();
    let h = rt.spawn(1, async move { DropFlag(d) }).unwrap();
    rt.run_ready();
    assert!(h.is_finished());
    assert_eq!(drops.get(), 1);
    drop(h);
    assert_eq!(drops.get(), 2);
}

#[test]
fn slots_are_recycled_and_limits_reported() {
    let (rt, _) = runtime::<2, 64>();
    for i in 0..1000u32 {
        let h = rt.spawn(0, async move { i }).unwrap();
        assert_eq!(rt.block_on(h), i);
    }
    let a = rt.spawn(0, std::future::pending::<()>()).unwrap();
    let b = rt.spawn(0, std::future::pending::<()>()).unwrap();
    assert_eq!(rt.spawn(0, async {}).err(), Some(SpawnError::NoSlot));
    drop(a);
    // The queue entry of `a` still holds its slot until the executor has seen it.
    rt.run_ready();
    let c = rt.spawn(0, async { 1 }).unwrap();
    assert_eq!(rt.spawn(0, async { [0u8; 65] }).err(), Some(SpawnError::TooBig));
    let big = [0u8; 100];
    assert_eq!(rt.spawn(0, async move { big.len() }).err(), Some(SpawnError::TooBig));
    drop((b, c));
}

#[test]
fn spawn_with_builds_only_once_a_slot_is_taken() {
    let (rt, _) = runtime::<1, 64>();
    let built = Cell::new(0);
    let h = rt.spawn_with(0, || {
        built.set(built.get() + 1);
        async { 7 }
    });
    assert_eq!(built.get(), 1);
    let held = rt.spawn(0, std::future::pending::<()>()).err();
    assert_eq!(held, Some(SpawnError::NoSlot));
    assert_eq!(rt.block_on(h.unwrap()), 7);
    let p = rt.spawn(0, std::future::pending::<()>()).unwrap();
    let r = rt.spawn_with(0, || {
        built.set(built.get() + 1);
        async {}
    });
    assert_eq!((r.err(), built.get()), (Some(SpawnError::NoSlot), 1));
    let r = rt.spawn_with(0, || {
        built.set(built.get() + 1);
        async { [0u8; 65] }
    });
    assert_eq!((r.err(), built.get()), (Some(SpawnError::TooBig), 1));
    drop(p);
}

#[test]
fn a_waker_that_outlives_its_task_keeps_the_slot_until_dropped() {
    let (rt, _) = runtime::<1, 64>();
    let stash: Rc<RefCell<Option<Waker>>> = Rc::default();
    let s = stash.clone();
    let h = rt
        .spawn(
            0,
            std::future::poll_fn(move |cx| {
                *s.borrow_mut() = Some(cx.waker().clone());
                Poll::Ready(7)
            }),
        )
        .unwrap();
    assert_eq!(rt.block_on(h), 7);
    // The only slot is pinned by the stale waker...
    assert_eq!(rt.spawn(0, async {}).err(), Some(SpawnError::NoSlot));
    let w = stash.borrow_mut().take().unwrap();
    // ...which can still be woken (a spurious wake of a finished task: harmless).
    w.wake_by_ref();
    rt.run_ready();
    drop(w);
    assert_eq!(rt.block_on(rt.spawn(0, async { 8 }).unwrap()), 8);
}

#[test]
#[should_panic(expected = "from inside a task")]
fn nested_block_on_panics() {
    let (rt, _) = runtime::<2, 256>();
    rt.block_on(async move { rt.block_on(async {}) });
}

/// Tasks each waiting for a stream of wake-ups from other threads; every wake-up is needed (a
/// thread grants a task its next round only after the task took the previous one, and wakes it
/// exactly once), and the executor parks whenever it runs dry. With one task a single lost
/// wake-up hangs the run (with many, other tasks' wake-ups could hide it, so both are run);
/// the watchdog turns a hang into a failure.
#[test]
fn stress_no_lost_wakeups() {
    stress(1, 20_000, 1);
    stress(48, 500, 2);
}

fn stress(tasks: usize, rounds: usize, threads: usize) {
    assert!(tasks <= 64);
    let (rt, park) = runtime::<64, 256>();
    let granted: Arc<Vec<AtomicUsize>> = Arc::new((0..tasks).map(|_| AtomicUsize::new(0)).collect());
    let taken: Arc<Vec<AtomicUsize>> = Arc::new((0..tasks).map(|_| AtomicUsize::new(0)).collect());
    let wakers: Arc<Vec<Mutex<Option<Waker>>>> = Arc::new((0..tasks).map(|_| Mutex::new(None)).collect());
    let total = with_watchdog(120, || {
        let handles: Vec<_> = (0..tasks)
            .map(|t| {
                let (granted, taken, wakers) = (granted.clone(), taken.clone(), wakers.clone());
                rt.spawn((t % 8) as u8, async move {
                    let mut seen = 0;
                    while seen < rounds {
                        std::future::poll_fn(|cx| {
                            // Register, then check: a grant in between is seen by one of them.
                            *wakers[t].lock().unwrap() = Some(cx.waker().clone());
                            let g = granted[t].load(Ordering::Acquire);
                            if g > seen {
                                seen = g;
                                taken[t].store(g, Ordering::Release);
                                Poll::Ready(())
                            } else {
                                Poll::Pending
                            }
                        })
                        .await;
                        if seen.is_multiple_of(7) {
                            yield_now().await;
                        }
                    }
                    seen
                })
                .unwrap()
            })
            .collect();
        let irqs: Vec<_> = (0..threads)
            .map(|k| {
                let (granted, taken, wakers) = (granted.clone(), taken.clone(), wakers.clone());
                std::thread::spawn(move || {
                    let mine: Vec<usize> = (k..tasks).step_by(threads).collect();
                    let mut round = 0u64;
                    while mine.iter().any(|&t| taken[t].load(Ordering::Acquire) < rounds) {
                        for &t in &mine {
                            let g = granted[t].load(Ordering::Relaxed);
                            if g < rounds && taken[t].load(Ordering::Acquire) == g {
                                granted[t].store(g + 1, Ordering::Release);
                                // One wake per grant; both waker entry points are used.
                                let mut slot = wakers[t].lock().unwrap();
                                if round.is_multiple_of(2) {
                                    if let Some(w) = slot.as_ref() {
                                        w.wake_by_ref();
                                    }
                                } else if let Some(w) = slot.take() {
                                    w.wake();
                                }
                            }
                        }
                        round += 1;
                        if round.is_multiple_of(16) {
                            std::thread::yield_now();
                        }
                    }
                })
            })
            .collect();
        let total = rt.block_on(async {
            let mut total = 0;
            for h in handles {
                total += h.await;
            }
            total
        });
        for t in irqs {
            t.join().unwrap();
        }
        total
    });
    assert_eq!(total, tasks * rounds);
    eprintln!("stress {tasks} tasks: parked {} times", park.parks.load(Ordering::Relaxed));
}

/// A busy executor (a task that keeps yielding) still calls the hook's `poll_busy`, once per
/// `BUSY_POLL_INTERVAL` polls, so event sources only the hook watches are not starved.
#[test]
fn busy_executor_calls_poll_busy() {
    #[derive(Default)]
    struct CountingPark(AtomicUsize);
    impl Park for CountingPark {
        fn park(&self) {}
        fn unpark_from_irq(&self) {}
        fn poll_busy(&self) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }
    let ex: &'static Executor<4, 256> = Box::leak(Box::new(Executor::new()));
    let park: &'static CountingPark = Box::leak(Box::default());
    let rt = ex.claim(park).unwrap();
    let h = rt
        .spawn(1, async {
            for _ in 0..10 * BUSY_POLL_INTERVAL {
                yield_now().await;
            }
        })
        .unwrap();
    rt.block_on(h);
    let n = park.0.load(Ordering::Relaxed);
    assert!((9..=11).contains(&n), "poll_busy called {} times in {} polls", n, 10 * BUSY_POLL_INTERVAL);
}

/// A future that stashes its waker on each poll and counts its polls, until `done`.
fn stashing(
    stash: Rc<RefCell<Option<Waker>>>,
    polls: Rc<Cell<u32>>,
    done: Rc<Cell<bool>>,
) -> impl std::future::Future<Output = ()> {
    std::future::poll_fn(move |cx| {
        polls.set(polls.get() + 1);
        *stash.borrow_mut() = Some(cx.waker().clone());
        if done.get() {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    })
}

#[test]
fn wake_local_runs_tasks_in_wake_order_once_each() {
    let (rt, park) = runtime::<4, 128>();
    let order: Rc<RefCell<Vec<u32>>> = Rc::default();
    let stashes: Vec<Rc<RefCell<Option<Waker>>>> = (0..3).map(|_| Rc::default()).collect();
    let mut hs = Vec::new();
    for (i, s) in stashes.iter().enumerate() {
        let (s, order) = (s.clone(), order.clone());
        hs.push(
            rt.spawn(
                0,
                std::future::poll_fn(move |cx| {
                    order.borrow_mut().push(i as u32);
                    *s.borrow_mut() = Some(cx.waker().clone());
                    if order.borrow().len() > 3 {
                        Poll::Ready(())
                    } else {
                        Poll::Pending
                    }
                }),
            )
            .unwrap(),
        );
    }
    assert_eq!(rt.run_ready(), 3);
    // Woken 2, 0, 1, and 0 again (already queued: no second entry, its reference released).
    let zero_again = stashes[0].borrow().clone().unwrap();
    for i in [2, 0, 1] {
        let w = stashes[i].borrow_mut().take().unwrap();
        // SAFETY: this thread claimed the executor; no interrupt handler exists here.
        unsafe { wake_local(w) };
    }
    // SAFETY: as above.
    unsafe { wake_local(zero_again) };
    assert_eq!(rt.run_ready(), 3);
    assert_eq!(*order.borrow(), [0, 1, 2, 2, 0, 1]);
    // A local wake never needs the park hook: nobody was asleep.
    assert_eq!(park.unparks.load(Ordering::Relaxed), 0);
    for h in hs {
        assert!(h.is_finished());
    }
    // Every reference came back (once the wakers the second polls stashed are gone): all four
    // slots can be taken again.
    for s in &stashes {
        drop(s.borrow_mut().take());
    }
    let held: Vec<_> = (0..4).map(|_| rt.spawn(0, std::future::pending::<()>()).unwrap()).collect();
    assert_eq!(rt.spawn(0, async {}).err(), Some(SpawnError::NoSlot));
    drop(held);
}

#[test]
fn wake_local_and_a_remote_wake_of_one_task_queue_it_once() {
    let (rt, _) = runtime::<2, 128>();
    let (stash, polls, done): (Rc<RefCell<Option<Waker>>>, _, _) =
        (Rc::default(), Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
    let h = rt.spawn(0, stashing(stash.clone(), polls.clone(), done.clone())).unwrap();
    rt.run_ready();
    let w: Waker = stash.borrow_mut().take().unwrap();
    // Another thread (an interrupt handler's stand-in) wakes it through the inbox first...
    let remote = w.clone();
    std::thread::spawn(move || remote.wake()).join().unwrap();
    // ...then the thread itself: already scheduled, so only the reference goes back.
    // SAFETY: this thread claimed the executor.
    unsafe { wake_local(w) };
    assert_eq!(rt.run_ready(), 1);
    assert_eq!(polls.get(), 2);
    // And the other way round, the local wake first.
    let w = stash.borrow_mut().take().unwrap();
    let remote = w.clone();
    // SAFETY: as above.
    unsafe { wake_local(w) };
    std::thread::spawn(move || remote.wake()).join().unwrap();
    done.set(true);
    assert_eq!(rt.run_ready(), 1);
    assert_eq!(polls.get(), 3);
    assert!(h.is_finished());
    drop(h);
    drop(stash.borrow_mut().take());
    // Both slots free again: no reference leaked or released twice.
    let a = rt.spawn(0, std::future::pending::<()>()).unwrap();
    let b = rt.spawn(0, std::future::pending::<()>()).unwrap();
    drop((a, b));
}

#[test]
fn a_task_cancelled_while_locally_queued_is_not_polled_and_its_slot_returns() {
    let (rt, _) = runtime::<1, 128>();
    let (stash, polls, done): (Rc<RefCell<Option<Waker>>>, _, _) =
        (Rc::default(), Rc::new(Cell::new(0)), Rc::new(Cell::new(false)));
    let h = rt.spawn(0, stashing(stash.clone(), polls.clone(), done)).unwrap();
    rt.run_ready();
    // SAFETY: this thread claimed the executor.
    unsafe { wake_local(stash.borrow_mut().take().unwrap()) };
    drop(h);
    // The queue's reference keeps the slot until the executor has seen it, without a poll.
    assert_eq!(rt.spawn(0, async {}).err(), Some(SpawnError::NoSlot));
    rt.run_ready();
    assert_eq!(polls.get(), 1);
    assert_eq!(rt.block_on(rt.spawn(0, async { 5 }).unwrap()), 5);
}

#[test]
fn wake_local_of_a_parked_executors_task_ends_the_park_check() {
    // A task woken locally while `block_on` is about to park (from the park hook itself, as a
    // channel's reply collection does) must run without any unpark.
    struct WakingPark {
        stash: Mutex<Option<Waker>>,
        parks: AtomicUsize,
    }
    impl Park for WakingPark {
        fn park(&self) {
            self.parks.fetch_add(1, Ordering::Relaxed);
            if let Some(w) = self.stash.lock().unwrap().take() {
                // SAFETY: the executor's thread, in its park hook.
                unsafe { wake_local(w) };
            }
        }
        fn unpark_from_irq(&self) {}
    }
    let ex: &'static Executor<2, 128> = Box::leak(Box::new(Executor::new()));
    let park: &'static WakingPark =
        Box::leak(Box::new(WakingPark { stash: Mutex::new(None), parks: AtomicUsize::new(0) }));
    let rt = ex.claim(park).unwrap();
    let first = Rc::new(Cell::new(true));
    let f = first.clone();
    let h = rt
        .spawn(
            0,
            std::future::poll_fn(move |cx| {
                if f.replace(false) {
                    *park.stash.lock().unwrap() = Some(cx.waker().clone());
                    Poll::Pending
                } else {
                    Poll::Ready(9)
                }
            }),
        )
        .unwrap();
    assert_eq!(with_watchdog(10, || rt.block_on(h)), 9);
    assert_eq!(park.parks.load(Ordering::Relaxed), 1);
}
