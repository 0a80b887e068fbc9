//! Model checks with loom (README.md: `RUSTFLAGS="--cfg loom" cargo test -p aring --release`).
//! Loom runs each closure under every interleaving and every value the memory model lets a
//! load return, so an assertion here holds for all orders of the race, not just the ones a
//! machine happens to produce. Counters outside the model prove that both orders of each
//! sleep/wake race were actually explored.
use crate::testing::OwnedRing;
use crate::{Item, Notify, RingError};
use loom::sync::Arc;
use loom::thread;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};

fn item(n: u64) -> Item {
    Item::new(n, n as u32, &[n.wrapping_mul(0x9e37_79b9), !n]).unwrap()
}

/// Items arrive in order with their whole payload (the producer's relaxed slot writes are
/// published by its release store of the tail), through a ring of two that fills, empties and
/// wraps both the slot index and the u64 counters.
#[test]
fn payload_visibility_full_empty_wraparound() {
    loom::model(|| {
        let r = Arc::new(OwnedRing::new(2, u64::MAX - 1));
        let r2 = r.clone();
        let producer = thread::spawn(move || {
            let mut p = r2.mem.producer();
            for n in 0..3 {
                loop {
                    match p.push(&item(n)) {
                        Ok(_) => break,
                        Err(RingError::Full) => thread::yield_now(),
                        Err(e) => panic!("{e:?}"),
                    }
                }
            }
        });
        let mut c = r.mem.consumer();
        for n in 0..3 {
            let got = loop {
                match c.pop().unwrap() {
                    Some(got) => break got.item,
                    None => thread::yield_now(),
                }
            };
            assert_eq!(got, item(n));
        }
        assert_eq!(c.pop(), Ok(None));
        producer.join().unwrap();
    });
}

static SIGNALLED: AtomicUsize = AtomicUsize::new(0);
static RECHECK_SAW_ITEM: AtomicUsize = AtomicUsize::new(0);

/// The consumer sleeps on an empty ring while the producer pushes: in every interleaving
/// either the producer sees the flag and signals, or the consumer's re-check sees the item. A
/// lost wake-up leaves the consumer parked forever, which loom reports as a deadlock.
#[test]
fn consumer_sleep_has_no_lost_wakeup() {
    loom::model(|| {
        let r = Arc::new(OwnedRing::new(2, 0));
        let r2 = r.clone();
        let consumer = thread::spawn(move || {
            let mut c = r2.mem.consumer();
            for n in 0..2 {
                loop {
                    if let Some(got) = c.pop().unwrap() {
                        assert_eq!(got.item, item(n));
                        break;
                    }
                    if c.try_sleep().unwrap() {
                        thread::park(); // the latched U-notification Wait
                        c.cancel_sleep();
                    } else {
                        RECHECK_SAW_ITEM.fetch_add(1, Relaxed);
                    }
                }
            }
        });
        let mut p = r.mem.producer();
        for n in 0..2 {
            if p.push(&item(n)).unwrap() == Notify::Signal {
                SIGNALLED.fetch_add(1, Relaxed);
                consumer.thread().unpark();
            }
        }
        consumer.join().unwrap();
    });
    assert!(SIGNALLED.load(Relaxed) > 0, "no interleaving where the producer signalled");
    assert!(RECHECK_SAW_ITEM.load(Relaxed) > 0, "no interleaving where the re-check won");
}

static P_SIGNALLED: AtomicUsize = AtomicUsize::new(0);
static P_RECHECK_SAW_SPACE: AtomicUsize = AtomicUsize::new(0);

/// The mirror image: the producer sleeps on a full ring (capacity 1) while the consumer pops.
#[test]
fn producer_sleep_has_no_lost_wakeup() {
    loom::model(|| {
        let r = Arc::new(OwnedRing::new(1, 0));
        let r2 = r.clone();
        let producer = thread::spawn(move || {
            let mut p = r2.mem.producer();
            for n in 0..2 {
                loop {
                    match p.push(&item(n)) {
                        Ok(_) => break,
                        Err(RingError::Full) => {}
                        Err(e) => panic!("{e:?}"),
                    }
                    if p.try_sleep().unwrap() {
                        thread::park();
                        p.cancel_sleep();
                    } else {
                        P_RECHECK_SAW_SPACE.fetch_add(1, Relaxed);
                    }
                }
            }
        });
        let mut c = r.mem.consumer();
        for n in 0..2 {
            let got = loop {
                match c.pop().unwrap() {
                    Some(got) => break got,
                    None => thread::yield_now(),
                }
            };
            assert_eq!(got.item, item(n));
            if got.notify == Notify::Signal {
                P_SIGNALLED.fetch_add(1, Relaxed);
                producer.thread().unpark();
            }
        }
        producer.join().unwrap();
    });
    assert!(P_SIGNALLED.load(Relaxed) > 0);
    assert!(P_RECHECK_SAW_SPACE.load(Relaxed) > 0);
}

/// Both sides block: the consumer on an empty ring, the producer on a full one (capacity 1,
/// two items), each woken only through the other's `Notify::Signal`.
#[test]
fn both_sides_sleep_without_lost_wakeup() {
    loom::model(|| {
        let r = Arc::new(OwnedRing::new(1, 0));
        let r2 = r.clone();
        let producer_thread = thread::current();
        let consumer = thread::spawn(move || {
            let mut c = r2.mem.consumer();
            for n in 0..2 {
                loop {
                    if let Some(got) = c.pop().unwrap() {
                        assert_eq!(got.item, item(n));
                        if got.notify == Notify::Signal {
                            producer_thread.unpark();
                        }
                        break;
                    }
                    if c.try_sleep().unwrap() {
                        thread::park();
                        c.cancel_sleep();
                    }
                }
            }
        });
        let mut p = r.mem.producer();
        for n in 0..2 {
            loop {
                match p.push(&item(n)) {
                    Ok(notify) => {
                        if notify == Notify::Signal {
                            consumer.thread().unpark();
                        }
                        break;
                    }
                    Err(RingError::Full) => {
                        if p.try_sleep().unwrap() {
                            thread::park();
                            p.cancel_sleep();
                        }
                    }
                    Err(e) => panic!("{e:?}"),
                }
            }
        }
        consumer.join().unwrap();
    });
}

/// Batches both ways (ring of 2, three items): the producer stages two items and publishes
/// them with one store, the consumer takes what it sees and releases the slots with one
/// store; each side sleeps (consumer on empty, producer on full) and is woken only through the
/// other's publish or release. Payloads arrive whole and in order, and no wake-up is lost.
#[test]
fn batched_publish_and_release_without_lost_wakeup() {
    loom::model(|| {
        let r = Arc::new(OwnedRing::new(2, 0));
        let r2 = r.clone();
        let producer_thread = thread::current();
        let consumer = thread::spawn(move || {
            let mut c = r2.mem.consumer();
            let mut n = 0;
            while n < 3 {
                while let Some(got) = c.take().unwrap() {
                    assert_eq!(got, item(n));
                    n += 1;
                }
                if c.release() == Notify::Signal {
                    producer_thread.unpark();
                }
                if n < 3 && c.try_sleep().unwrap() {
                    thread::park();
                    c.cancel_sleep();
                }
            }
        });
        let mut p = r.mem.producer();
        p.stage(&item(0)).unwrap();
        p.stage(&item(1)).unwrap();
        if p.publish() == Notify::Signal {
            consumer.thread().unpark();
        }
        loop {
            match p.stage(&item(2)) {
                Ok(()) => break,
                Err(RingError::Full) => {
                    if p.try_sleep().unwrap() {
                        thread::park();
                        p.cancel_sleep();
                    }
                }
                Err(e) => panic!("{e:?}"),
            }
        }
        if p.publish() == Notify::Signal {
            consumer.thread().unpark();
        }
        consumer.join().unwrap();
    });
}
