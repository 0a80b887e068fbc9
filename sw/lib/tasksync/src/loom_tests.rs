//! Model checks with loom (`RUSTFLAGS="--cfg loom" cargo test -p tasksync --release`): every
//! interleaving of the modelled races. A lost wake-up leaves a `block_on` parked for good,
//! which loom reports as a deadlock.
use crate::{Condvar, Mutex, NoPriority, Semaphore};
use loom::future::block_on;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;
use loom::thread;
use std::future::Future;
use std::sync::atomic::Ordering::Relaxed;
use std::task::{Context, Waker};

type Sem = Semaphore<NoPriority>;

/// `loom::model` with a preemption bound: the spin lock's retry loops make the unbounded
/// models too big to finish. Bugs that need more than this many preemptions stay unexplored.
fn model(f: impl Fn() + Sync + Send + 'static) {
    model_bounded(PREEMPTIONS, f)
}

fn model_bounded(preemptions: usize, f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(preemptions);
    b.check(f);
}

const PREEMPTIONS: usize = 2;

/// A release racing a waiter that is queueing.
#[test]
fn release_wakes_a_queueing_waiter() {
    model(|| {
        let sem = Arc::new(Sem::new(0));
        let s = sem.clone();
        let waiter = thread::spawn(move || block_on(s.acquire()));
        sem.release();
        waiter.join().unwrap();
        assert_eq!(sem.available(), 0);
    });
}

/// Two waiters queueing while two permits are released: each release that finds the list lock
/// held by a queueing waiter leaves the hand-off to it, which must see the permit.
#[test]
fn releases_while_waiters_queue() {
    // Three threads: one preemption already takes minutes with two.
    model_bounded(1, || {
        let sem = Arc::new(Sem::new(0));
        let waiters: Vec<_> = (0..2)
            .map(|_| {
                let s = sem.clone();
                thread::spawn(move || block_on(s.acquire()))
            })
            .collect();
        sem.release();
        sem.release();
        waiters.into_iter().for_each(|w| w.join().unwrap());
        assert_eq!(sem.available(), 0);
    });
}

/// A waiter dropped while a release hands it the permit: the permit is neither lost nor doubled.
#[test]
fn cancelled_waiter_keeps_the_count() {
    model(|| {
        let sem = Arc::new(Sem::new(0));
        let s = sem.clone();
        let canceller = thread::spawn(move || {
            let mut acq = Box::pin(s.acquire());
            let got = acq.as_mut().poll(&mut Context::from_waker(Waker::noop())).is_ready();
            drop(acq);
            usize::from(got)
        });
        sem.release();
        let consumed = canceller.join().unwrap();
        assert_eq!(sem.available(), 1 - consumed);
    });
}

/// Two lockers each do a non-atomic increment (load, then store): without exclusion some
/// interleaving loses one.
#[test]
fn mutex_excludes() {
    model(|| {
        let m = Arc::new(Mutex::<AtomicUsize, NoPriority>::new(AtomicUsize::new(0)));
        let m2 = m.clone();
        let bump = |m: &Mutex<AtomicUsize, NoPriority>| {
            let g = block_on(m.lock());
            let v = g.load(Relaxed);
            g.store(v + 1, Relaxed);
        };
        let other = thread::spawn(move || bump(&m2));
        bump(&m);
        other.join().unwrap();
        assert_eq!(block_on(m.lock()).load(Relaxed), 2);
    });
}

/// A waiter and a notifier racing: the waiter queues before it unlocks, so the notify after
/// the flag is set cannot miss it.
#[test]
fn condvar_notify_is_not_lost() {
    model(|| {
        let state = Arc::new((Mutex::<bool, NoPriority>::new(false), Condvar::new()));
        let st = state.clone();
        let waiter = thread::spawn(move || {
            let (m, cv) = &*st;
            let mut g = block_on(m.lock());
            while !*g {
                g = block_on(cv.wait(g));
            }
        });
        let (m, cv) = &*state;
        *block_on(m.lock()) = true;
        cv.notify_one();
        waiter.join().unwrap();
    });
}
