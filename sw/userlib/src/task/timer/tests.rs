//! Host tests: the wheel alone (ordering, never early, never later than asked once time
//! passes, cascades, the overflow list, removal), then timers on a real executor with a fake
//! clock whose park jumps time to the armed wake-up (as the kernel deadline would fire).
use super::wheel::{Node, Wheel, RANGE};
use super::*;
use crate::task::{Executor, Handle};
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;

/// A small deterministic generator (xorshift64*).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
}

/// Drive `w` the way the park hook does: sleep until `next_expiration`, pop what is due. Returns
/// (when, time it was handed out) for every node, in hand-out order.
fn drain(w: &mut Wheel, nodes: &[Node], mut now: u64) -> Vec<(u64, u64)> {
    let mut out = Vec::new();
    let mut wakeups = 0;
    while let Some(at) = w.next_expiration() {
        assert!(at >= w.elapsed(), "next expiration {at} before the wheel's time {}", w.elapsed());
        now = now.max(at);
        while let Some(n) = w.pop_expired(now) {
            out.push((n.when(), now));
        }
        wakeups += 1;
        assert!(wakeups <= nodes.len() * (super::wheel::LEVELS + 1) + 2, "too many wake-ups: a lost entry loops");
    }
    assert_eq!(w.len(), 0);
    out
}

#[test]
fn wheel_fires_in_order_never_early_never_late() {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for round in 0..20 {
        let start = rng.next() % (1 << 40);
        let mut w = Wheel::new();
        w.reset(start);
        let nodes: Vec<Node> = (0..500).map(|_| Node::new()).collect();
        for (i, n) in nodes.iter().enumerate() {
            // Spread over every level: 1 tick .. 2^47 ticks ahead.
            let ahead = 1 + (rng.next() % (1u64 << (1 + (i % 47))));
            // SAFETY: `nodes` outlives the wheel's use of them and does not move.
            assert!(unsafe { w.insert(n, start + ahead) });
        }
        assert_eq!(w.len(), 500);
        let out = drain(&mut w, &nodes, start);
        assert_eq!(out.len(), 500, "round {round}");
        for pair in out.windows(2) {
            assert!(pair[0].0 <= pair[1].0, "out of order: {:?}", pair);
        }
        for &(when, at) in &out {
            // Handed out exactly when its time came: the park slept until next_expiration.
            assert_eq!(when, at, "fired at {at}, due {when}");
        }
        assert!(nodes.iter().all(|n| n.fired.get() && !n.linked()));
    }
}

/// Polls that find nothing due (a poller's timer left linked across parks) followed by an
/// insertion earlier than everything linked, in random interleavings: every entry is handed out
/// by the first poll at or after its time, never before it.
#[test]
fn wheel_quiet_polls_then_earlier_insert_still_fire_on_time() {
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for round in 0..200 {
        let start = rng.next() % (1 << 40);
        let mut w = Wheel::new();
        w.reset(start);
        let nodes: Vec<Node> = (0..8).map(|_| Node::new()).collect();
        let mut now = start;
        let mut out = Vec::new();
        let mut polls = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            // Polls that find nothing (or something), then a new entry, possibly earlier than
            // the ones linked.
            for _ in 0..3 {
                now += rng.next() % (1 << (i * 3 % 20 + 1));
                polls.push(now);
                while let Some(x) = w.pop_expired(now) {
                    out.push((x.when(), now));
                }
            }
            let ahead = 1 + rng.next() % (1u64 << (1 + (rng.next() % 30)));
            // SAFETY: `nodes` outlives the wheel's use of them and does not move.
            assert!(unsafe { w.insert(n, now + ahead) });
        }
        out.extend(drain(&mut w, &nodes, now));
        assert_eq!(out.len(), nodes.len(), "round {round}");
        for &(when, at) in &out {
            assert!(at >= when, "round {round}: fired at {at}, due {when}");
            // No poll between its time and its hand-out missed it.
            assert!(!polls.iter().any(|&p| when <= p && p < at), "round {round}: due {when}, missed before {at}");
        }
        assert!(nodes.iter().all(|n| n.fired.get() && !n.linked()));
    }
}

#[test]
fn wheel_due_or_past_is_refused_and_late_polls_catch_up() {
    let mut w = Wheel::new();
    w.reset(1000);
    let a = Node::new();
    // SAFETY: as above.
    assert!(!unsafe { w.insert(&a, 1000) }, "a time not after the wheel's is due already");
    assert!(!unsafe { w.insert(&a, 3) });
    assert_eq!(w.len(), 0);
    let nodes: Vec<Node> = (0..64).map(|_| Node::new()).collect();
    for (i, n) in nodes.iter().enumerate() {
        assert!(unsafe { w.insert(n, 1001 + i as u64 * 97) });
    }
    // One late poll at 4000 hands out exactly those due by then, in order.
    let mut got = Vec::new();
    while let Some(n) = w.pop_expired(4000) {
        got.push(n.when());
    }
    let want: Vec<u64> = (0..64).map(|i| 1001 + i * 97).filter(|&t| t <= 4000).collect();
    assert_eq!(got, want);
    assert_eq!(w.elapsed(), 4000);
    assert_eq!(w.len(), 64 - want.len());
    assert!(w.next_expiration().unwrap() > 4000);
    assert!(w.next_expiration().unwrap() <= 1001 + want.len() as u64 * 97);
}

#[test]
fn wheel_remove_is_immediate_and_leaves_nothing() {
    let mut w = Wheel::new();
    w.reset(0);
    let nodes: Vec<Node> = (0..300).map(|_| Node::new()).collect();
    for (i, n) in nodes.iter().enumerate() {
        assert!(unsafe { w.insert(n, 5 + (i as u64 * 7919) % 100_000) });
    }
    // Remove every other one, in a scrambled order; removing twice is harmless.
    for i in (0..300).step_by(2).rev() {
        w.remove(&nodes[i]);
        w.remove(&nodes[i]);
        assert!(!nodes[i].linked());
    }
    assert_eq!(w.len(), 150);
    let out = drain(&mut w, &nodes, 0);
    let mut want: Vec<u64> = (1..300).step_by(2).map(|i| 5 + (i as u64 * 7919) % 100_000).collect();
    want.sort();
    assert_eq!(out.iter().map(|p| p.0).collect::<Vec<_>>(), want);
    assert!((0..300).step_by(2).all(|i| !nodes[i].fired.get()));
    // Removing the only entry of a slot clears it: nothing left to wake up for.
    let x = Node::new();
    assert!(unsafe { w.insert(&x, w.elapsed() + 1_000_000) });
    assert!(w.next_expiration().is_some());
    w.remove(&x);
    assert_eq!(w.next_expiration(), None);
}

#[test]
fn wheel_overflow_beyond_range() {
    let mut w = Wheel::new();
    w.reset(12345);
    let far = [Node::new(), Node::new(), Node::new()];
    let whens = [12345 + RANGE + 7, 12345 + 3 * RANGE + 1, u64::MAX - 5];
    for (n, &t) in far.iter().zip(&whens) {
        assert!(unsafe { w.insert(n, t) });
    }
    let near = Node::new();
    assert!(unsafe { w.insert(&near, 20_000) });
    let mut now = 12345;
    let mut out = Vec::new();
    let mut wakeups = 0;
    while let Some(at) = w.next_expiration() {
        assert!(at > w.elapsed() || at == w.elapsed());
        now = now.max(at);
        while let Some(n) = w.pop_expired(now) {
            assert_eq!(n.when(), now, "never early, and at its time");
            out.push(n.when());
        }
        wakeups += 1;
        assert!(wakeups < 5000);
    }
    assert_eq!(out, vec![20_000, whens[0], whens[1], whens[2]]);
}

#[test]
fn wheel_same_time_fires_in_arming_order() {
    let mut w = Wheel::new();
    w.reset(0);
    let nodes: Vec<Node> = (0..5).map(|_| Node::new()).collect();
    for n in &nodes {
        assert!(unsafe { w.insert(n, 100_000) });
    }
    let mut order = Vec::new();
    while let Some(n) = w.pop_expired(200_000) {
        order.push(nodes.iter().position(|x| std::ptr::eq(x, n)).unwrap());
    }
    assert_eq!(order, vec![0, 1, 2, 3, 4]);
}

// ---- timers on an executor ------------------------------------------------------------------

/// Time moves only when the thread parks: then to the armed wake-up, as if it slept in the
/// kernel until its deadline fired. Records each request.
struct FakeClock {
    now: AtomicU64,
    armed: Mutex<Option<u64>>,
    requests: Mutex<Vec<Option<u64>>>,
}

impl Clock for FakeClock {
    fn now(&self) -> u64 {
        self.now.load(Ordering::SeqCst)
    }
    fn arm(&self, at: Option<u64>) {
        *self.armed.lock().unwrap() = at;
        self.requests.lock().unwrap().push(at);
    }
}

struct FakePark {
    clock: &'static FakeClock,
    unparked: AtomicBool,
    parks: AtomicUsize,
}

impl Park for FakePark {
    fn park(&self) {
        self.parks.fetch_add(1, Ordering::SeqCst);
        if self.unparked.swap(false, Ordering::SeqCst) {
            return;
        }
        let at =
            self.clock.armed.lock().unwrap().take().expect("parked with no wake-up armed: it would sleep for ever");
        self.clock.now.fetch_max(at, Ordering::SeqCst);
    }
    fn unpark_from_irq(&self) {
        self.unparked.store(true, Ordering::SeqCst);
    }
}

type Rt = Handle<32, 512>;

fn setup(start: u64) -> (Rt, TimerHandle, &'static FakeClock, &'static FakePark) {
    let clock: &'static FakeClock = Box::leak(Box::new(FakeClock {
        now: AtomicU64::new(start),
        armed: Mutex::new(None),
        requests: Mutex::new(Vec::new()),
    }));
    let park: &'static FakePark =
        Box::leak(Box::new(FakePark { clock, unparked: AtomicBool::new(false), parks: AtomicUsize::new(0) }));
    let timers: &'static Timers = Box::leak(Box::new(Timers::new()));
    let th = timers.claim(park, clock).unwrap();
    assert!(timers.claim(park, clock).is_none(), "claimed once");
    let ex: &'static Executor<32, 512> = Box::leak(Box::new(Executor::new()));
    (ex.claim(timers).unwrap(), th, clock, park)
}

#[test]
fn sleep_wakes_at_its_time_and_sleeps_fire_in_deadline_order() {
    let (rt, th, clock, _) = setup(1_000);
    let order: &'static Mutex<Vec<(usize, u64)>> = Box::leak(Box::new(Mutex::new(Vec::new())));
    let durations = [700u64, 50, 3_000_000, 50, 9, 123_456, 1];
    let hs: Vec<_> = durations
        .iter()
        .enumerate()
        .map(|(i, &d)| {
            rt.spawn(1, async move {
                let start = th.now();
                th.sleep(d).await;
                let end = th.now();
                assert!(end >= start + d, "woke after {} of {d} ticks", end - start);
                order.lock().unwrap().push((i, end));
            })
            .unwrap()
        })
        .collect();
    rt.block_on(async {
        for h in hs {
            h.await;
        }
    });
    let got = order.lock().unwrap().clone();
    let mut want: Vec<usize> = (0..durations.len()).collect();
    want.sort_by_key(|&i| (durations[i], i));
    assert_eq!(got.iter().map(|p| p.0).collect::<Vec<_>>(), want);
    // Time only jumped to armed wake-ups: each sleep ended exactly at its deadline.
    for &(i, end) in &got {
        assert_eq!(end, 1_000 + durations[i]);
    }
    assert_eq!(th.pending(), 0);
    assert_eq!(clock.now.load(Ordering::SeqCst), 1_000 + 3_000_000);
}

#[test]
fn timeout_returns_the_output_or_elapsed() {
    let (rt, th, _, _) = setup(0);
    let r = rt.block_on(th.timeout(1_000, async {
        th.sleep(10).await;
        42
    }));
    assert_eq!(r, Ok(42));
    assert_eq!(th.pending(), 0, "the timeout's own timer went with it");
    let r = rt.block_on(th.timeout(1_000, async {
        th.sleep(5_000).await;
        42
    }));
    assert_eq!(r, Err(Elapsed));
    assert_eq!(th.pending(), 0, "the inner sleep was dropped with the timeout");
    // A future that never completes: only the timeout ends it.
    let t0 = th.now();
    assert_eq!(rt.block_on(th.timeout(77, core::future::pending::<()>())), Err(Elapsed));
    assert_eq!(th.now(), t0 + 77);
    // Ready at once: no timer is ever linked.
    assert_eq!(rt.block_on(th.timeout(5, async { 7 })), Ok(7));
}

#[test]
fn dropped_sleep_is_unlinked_and_its_wakeup_withdrawn() {
    let (rt, th, clock, park) = setup(500);
    let long = rt
        .spawn(1, async move {
            th.sleep(1_000_000).await;
            panic!("a cancelled sleep completed");
        })
        .unwrap();
    rt.run_ready();
    assert_eq!(th.pending(), 1);
    // A park (cut short, as by another wake-up) arms the long sleep's time.
    park.unparked.store(true, Ordering::SeqCst);
    th.timers().park();
    assert_eq!(*clock.requests.lock().unwrap(), vec![Some(1_000_500)]);
    drop(long); // cancels the task, dropping its Sleep
    assert_eq!(th.pending(), 0, "the dropped sleep left the wheel at once");
    park.unparked.store(true, Ordering::SeqCst);
    th.timers().park();
    assert_eq!(*clock.requests.lock().unwrap(), vec![Some(1_000_500), None], "the next park withdraws the wake-up");
    assert_eq!(*clock.armed.lock().unwrap(), None);
    assert_eq!(th.armed(), 0);
    // A sleep dropped before its first poll is never linked nor armed.
    let r = rt.block_on(async {
        drop(th.sleep(10));
        th.sleep(20).await;
        th.now()
    });
    assert_eq!(r, 520);
    assert_eq!(*clock.requests.lock().unwrap(), vec![Some(1_000_500), None, Some(520)]);
    assert_eq!(th.pending(), 0);
    assert_eq!(th.timers().fired.load(Ordering::SeqCst), 1);
}

#[test]
fn rearming_replaces_and_repeats_are_not_rearmed() {
    let (rt, th, clock, _) = setup(0);
    rt.block_on(async {
        // Later and later deadlines from one task: each park asks for exactly the next one.
        for k in 1..=5u64 {
            th.sleep_until(k * 1_000).await;
        }
    });
    let reqs = clock.requests.lock().unwrap().clone();
    assert_eq!(reqs, vec![Some(1_000), Some(2_000), Some(3_000), Some(4_000), Some(5_000)]);
    // An earlier timer replaces the armed one.
    let reqs_before = reqs.len();
    let a = rt.spawn(1, async move { th.sleep_until(90_000).await }).unwrap();
    let b = rt.spawn(1, async move { th.sleep_until(60_000).await }).unwrap();
    rt.block_on(async {
        a.await;
        b.await;
    });
    let reqs = clock.requests.lock().unwrap()[reqs_before..].to_vec();
    assert_eq!(reqs[0], Some(60_000));
    assert!(reqs.contains(&Some(90_000)));
    assert!(reqs.windows(2).all(|p| p[0] != p[1]), "the same wake-up asked for twice: {reqs:?}");
}

#[test]
fn sleep_zero_and_past_deadlines_complete_without_a_wakeup() {
    let (rt, th, clock, park) = setup(10_000);
    rt.block_on(async {
        th.sleep_until(5).await;
        th.sleep_until(10_000).await;
    });
    assert_eq!(park.parks.load(Ordering::SeqCst), 0);
    assert!(clock.requests.lock().unwrap().is_empty());
}
