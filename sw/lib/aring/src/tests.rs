//! Plain unit tests (no loom): behaviour, wrap-around, the sleep flags, hostile peers, and a
//! two-thread stress run.
use crate::layout::{ASLEEP, AWAKE};
use crate::sync::Ordering::Relaxed;
use crate::testing::OwnedRing;
use crate::*;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

fn item(n: u64) -> Item {
    Item::new(n, n as u32 ^ 0x5a, &[n, !n, n * 3]).unwrap()
}

#[test]
fn fifo_full_and_empty() {
    let r = OwnedRing::new(4, 0);
    let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
    assert_eq!(c.pop(), Ok(None));
    for n in 0..4 {
        assert_eq!(p.push(&item(n)), Ok(Notify::Quiet));
    }
    assert_eq!(p.push(&item(9)), Err(RingError::Full));
    assert_eq!(p.free(), Ok(0));
    for n in 0..4 {
        let got = c.pop().unwrap().unwrap();
        assert_eq!(got.item, item(n));
        assert_eq!(got.item.payload().unwrap(), &[n, !n, n * 3]);
    }
    assert_eq!(c.pop(), Ok(None));
    assert_eq!(p.free(), Ok(4));
}

#[test]
fn peek_then_skip() {
    let r = OwnedRing::new(4, 0);
    let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
    assert_eq!(c.peek(0), Ok(None));
    let _ = p.push(&item(1)).unwrap();
    assert_eq!(c.peek(0), Ok(Some(item(1))));
    assert_eq!(c.peek(1), Ok(None));
    let _ = p.push(&item(2)).unwrap();
    // The second item is seen although the cached tail already showed one.
    assert_eq!(c.peek(1), Ok(Some(item(2))));
    assert_eq!(c.peek(0), Ok(Some(item(1))), "peek takes nothing");
    assert_eq!(c.skip(5), Ok(Notify::Quiet), "skip stops at what is ready");
    assert_eq!(c.peek(0), Ok(None));
    assert_eq!(p.free_now(), Ok(4));
    // A producer asleep on a full ring is told to wake by skip, as by pop.
    for n in 0..4 {
        let _ = p.push(&item(n)).unwrap();
    }
    assert_eq!(p.try_sleep(), Ok(true));
    assert_eq!(c.skip(1), Ok(Notify::Signal));
    r.hdr.tail.0.store(99, Relaxed);
    assert_eq!(c.peek(3), Err(RingError::Corrupt));
    assert_eq!(c.skip(1), Err(RingError::Corrupt));
}

#[test]
fn push_all_or_nothing() {
    let r = OwnedRing::new(4, 0);
    let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
    assert_eq!(p.push_all(&[]), Ok(Notify::Quiet));
    assert_eq!(p.push_all(&[item(1), item(2), item(3)]), Ok(Notify::Quiet));
    assert_eq!(p.push_all(&[item(4), item(5)]), Err(RingError::Full), "two do not fit in one");
    assert_eq!(c.available(), Ok(3), "one index store for the three");
    assert_eq!(c.pop().unwrap().unwrap().item, item(1));
    assert_eq!(c.try_sleep(), Ok(false));
    assert_eq!(p.push_all(&[item(4), item(5)]), Ok(Notify::Quiet), "fits once one was taken");
    for n in 2..6 {
        assert_eq!(c.pop().unwrap().unwrap().item, item(n));
    }
    assert_eq!(c.try_sleep(), Ok(true));
    assert_eq!(p.push_all(&[item(6)]), Ok(Notify::Signal), "a sleeping consumer is signalled once");
}

#[test]
fn slot_and_counter_wrap_around() {
    // Start 5 short of the u64 wrap: the free-running counters overflow mid-test, the slot
    // index wraps many times.
    for start in [0, u64::MAX - 4] {
        let r = OwnedRing::new(4, start);
        let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
        let (mut sent, mut got) = (0u64, 0u64);
        for round in 0..50 {
            let burst = 1 + round % 4;
            for _ in 0..burst {
                let _ = p.push(&item(sent)).unwrap();
                sent += 1;
            }
            if burst == 4 {
                assert_eq!(p.push(&item(99)), Err(RingError::Full));
            }
            for _ in 0..burst {
                assert_eq!(c.pop().unwrap().unwrap().item, item(got));
                got += 1;
            }
            assert_eq!(c.pop(), Ok(None));
        }
        assert_eq!(r.hdr.tail.0.load(Relaxed), start.wrapping_add(sent));
    }
}

#[test]
fn item_layout_and_length_check() {
    assert!(Item::new(1, 2, &[0; PAYLOAD_WORDS + 1]).is_none());
    let full = Item::new(1, 2, &[7; PAYLOAD_WORDS]).unwrap();
    assert_eq!(full.payload().unwrap().len(), PAYLOAD_WORDS);
    // The word form matches a little-endian repr(C) copy of the struct.
    let it = Item::new(0x1122, 0x33, &[0x44]).unwrap();
    let w = it.to_words();
    // SAFETY: Item is 64 bytes of plain integers.
    let raw: [u64; 8] = unsafe { core::mem::transmute(it) };
    assert_eq!(w, raw);
    assert_eq!(Item::from_words(w), it);
    let mut bad = it;
    bad.len = 7;
    assert_eq!(bad.payload(), Err(RingError::Corrupt));
    bad.len = u32::MAX;
    assert_eq!(bad.payload(), Err(RingError::Corrupt));
}

#[test]
fn consumer_sleep_flag_signals_once() {
    let r = OwnedRing::new(8, 0);
    let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
    assert_eq!(c.try_sleep(), Ok(true));
    assert_eq!(r.hdr.consumer_sleep.0.load(Relaxed), ASLEEP);
    assert_eq!(p.push(&item(1)), Ok(Notify::Signal));
    // The signal cleared the flag: further pushes before the consumer runs stay quiet.
    assert_eq!(p.push(&item(2)), Ok(Notify::Quiet));
    c.cancel_sleep();
    // Items present: try_sleep refuses and leaves the flag clear.
    assert_eq!(c.try_sleep(), Ok(false));
    assert_eq!(r.hdr.consumer_sleep.0.load(Relaxed), AWAKE);
    assert_eq!(p.push(&item(3)), Ok(Notify::Quiet));
    // Any non-zero flag (a peer's garbage) counts as asleep.
    r.hdr.consumer_sleep.0.store(0xdead, Relaxed);
    assert_eq!(p.push(&item(4)), Ok(Notify::Signal));
}

#[test]
fn producer_sleep_flag_on_full_ring() {
    let r = OwnedRing::new(2, 0);
    let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
    let _ = p.push(&item(0)).unwrap();
    assert_eq!(p.try_sleep(), Ok(false), "space left: no sleep");
    let _ = p.push(&item(1)).unwrap();
    assert_eq!(p.try_sleep(), Ok(true));
    assert_eq!(c.pop().unwrap().unwrap().notify, Notify::Signal);
    assert_eq!(c.pop().unwrap().unwrap().notify, Notify::Quiet);
    p.cancel_sleep();
    assert_eq!(p.free(), Ok(2));
}

#[test]
fn staged_items_travel_with_one_publish() {
    let r = OwnedRing::new(4, 0);
    let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
    p.stage(&item(0)).unwrap();
    p.stage(&item(1)).unwrap();
    assert_eq!(p.staged(), 2);
    assert_eq!(c.available_now(), Ok(0), "staged items are not visible");
    assert_eq!(r.hdr.tail.0.load(Relaxed), 0);
    // The consumer sleeps: the one publish of the batch signals it once.
    assert_eq!(c.try_sleep(), Ok(true));
    assert_eq!(p.publish(), Notify::Signal);
    assert_eq!(p.publish(), Notify::Quiet, "nothing staged: nothing written");
    assert_eq!(p.staged(), 0);
    c.cancel_sleep();
    assert_eq!(c.available_now(), Ok(2));
    // Staged items count against the space: 2 published + 2 staged fill the ring.
    p.stage(&item(2)).unwrap();
    p.stage(&item(3)).unwrap();
    assert_eq!(p.stage(&item(4)), Err(RingError::Full));
    assert_eq!(p.publish(), Notify::Quiet);
    let got: Vec<_> = (0..4).map(|_| c.take().unwrap().unwrap()).collect();
    assert_eq!(got, (0..4).map(item).collect::<Vec<_>>());
}

#[test]
fn taken_slots_come_back_with_one_release() {
    let r = OwnedRing::new(2, 0);
    let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
    let _ = p.push(&item(0)).unwrap();
    let _ = p.push(&item(1)).unwrap();
    assert_eq!(p.try_sleep(), Ok(true), "full");
    assert_eq!(c.take(), Ok(Some(item(0))));
    assert_eq!(c.take(), Ok(Some(item(1))));
    assert_eq!(c.take(), Ok(None));
    assert_eq!(p.free_now(), Ok(0), "taken, not released: the slots are still ours");
    assert_eq!(c.release(), Notify::Signal, "one release wakes the producer");
    assert_eq!(c.release(), Notify::Quiet);
    p.cancel_sleep();
    assert_eq!(p.free_now(), Ok(2));
    assert_eq!(r.hdr.head.0.load(Relaxed), 2);
}

#[test]
fn hostile_indices_are_checked_against_what_was_published() {
    // A consumer that claims a staged (unpublished) item is lying.
    let r = OwnedRing::new(4, 0);
    let mut p = r.mem.producer();
    let _ = p.push(&item(0)).unwrap();
    p.stage(&item(1)).unwrap();
    r.hdr.head.0.store(2, Relaxed);
    assert_eq!(p.free_now(), Err(RingError::Corrupt));
    // A producer that publishes past the slots we have not released yet is lying too.
    let r = OwnedRing::new(2, 0);
    let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
    let _ = p.push(&item(0)).unwrap();
    assert_eq!(c.take(), Ok(Some(item(0))));
    // Head released: 0, so a tail of 3 (= 0 + capacity + 1) cannot be.
    r.hdr.tail.0.store(3, Relaxed);
    assert_eq!(c.available_now(), Err(RingError::Corrupt));
    assert_eq!(c.take(), Err(RingError::Corrupt));
}

#[test]
fn hostile_head_is_corrupt_and_sticky() {
    // Past our tail, and backwards: both impossible for an honest consumer.
    for bad in [3u64, 1u64.wrapping_sub(2), u64::MAX / 2] {
        let r = OwnedRing::new(2, 0);
        let mut p = r.mem.producer();
        let _ = p.push(&item(0)).unwrap();
        let _ = p.push(&item(1)).unwrap();
        r.hdr.head.0.store(bad, Relaxed);
        assert_eq!(p.push(&item(2)), Err(RingError::Corrupt), "head {bad:#x}");
        // Sticky: an honest-looking value later does not revive the ring.
        r.hdr.head.0.store(2, Relaxed);
        assert_eq!(p.push(&item(2)), Err(RingError::Corrupt));
        assert_eq!(p.free(), Err(RingError::Corrupt));
    }
}

#[test]
fn hostile_tail_is_corrupt_and_sticky() {
    for bad in [5u64, u64::MAX, 1 << 40] {
        let r = OwnedRing::new(4, 0);
        let mut c = r.mem.consumer();
        r.hdr.tail.0.store(bad, Relaxed);
        assert_eq!(c.pop(), Err(RingError::Corrupt), "tail {bad:#x}");
        r.hdr.tail.0.store(1, Relaxed);
        assert_eq!(c.pop(), Err(RingError::Corrupt));
        assert_eq!(c.try_sleep(), Err(RingError::Corrupt));
    }
    // Backwards after we saw it further on.
    let r = OwnedRing::new(4, 0);
    let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
    for n in 0..3 {
        let _ = p.push(&item(n)).unwrap();
    }
    for _ in 0..3 {
        c.pop().unwrap().unwrap();
    }
    r.hdr.tail.0.store(2, Relaxed);
    assert_eq!(c.pop(), Err(RingError::Corrupt));
    // A claimed-full ring of garbage is legal: it yields exactly `capacity` items.
    let r = OwnedRing::new(4, 0);
    let mut c = r.mem.consumer();
    r.hdr.tail.0.store(4, Relaxed);
    r.slots[2].words[1].store(u64::MAX, Relaxed);
    let items: Vec<_> = (0..4).map(|_| c.pop().unwrap().unwrap().item).collect();
    assert_eq!(items[2].payload(), Err(RingError::Corrupt));
    assert_eq!(c.pop(), Ok(None));
}

/// A peer that scribbles random values over every shared word between our operations: we may
/// see garbage items or `Corrupt`, but never a panic, never more items than were possible, and
/// `Corrupt` once seen stays.
#[test]
fn random_hostile_peer_never_panics() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for _ in 0..200 {
        let r = OwnedRing::new(8, rnd());
        let (mut p, mut c) = (r.mem.producer(), r.mem.consumer());
        let (mut p_bad, mut c_bad) = (false, false);
        let mut popped_total = 0u64;
        for step in 0..200 {
            let v = rnd();
            // Small moves are plausible values an attacker would try; big ones anything.
            let near = |x: u64| x.wrapping_add(v % 24).wrapping_sub(12);
            match v % 7 {
                0 => r.hdr.head.0.store(near(r.hdr.head.0.load(Relaxed)), Relaxed),
                1 => r.hdr.tail.0.store(near(r.hdr.tail.0.load(Relaxed)), Relaxed),
                2 => r.hdr.tail.0.store(rnd(), Relaxed),
                3 => r.slots[(v as usize >> 8) % 8].words[(v as usize >> 16) % 8].store(rnd(), Relaxed),
                4 => r.hdr.consumer_sleep.0.store(rnd() as u32, Relaxed),
                _ => {}
            }
            match p.push(&item(step)) {
                Err(RingError::Corrupt) => p_bad = true,
                Ok(_) | Err(RingError::Full) => assert!(!p_bad),
                Err(e) => panic!("{e:?}"),
            }
            let before = c.available();
            match c.pop() {
                Err(RingError::Corrupt) => c_bad = true,
                Ok(got) => {
                    assert!(!c_bad);
                    if let Some(got) = got {
                        let _ = got.item.payload();
                        popped_total += 1;
                    }
                }
                Err(e) => panic!("{e:?}"),
            }
            if let Ok(n) = before {
                assert!(n <= 8);
            }
        }
        assert!(popped_total <= 200 * 8);
    }
}

#[test]
fn raw_memory_init_attach_and_layout() {
    assert_eq!(ring_bytes(4), 256 + 4 * 64);
    let layout = std::alloc::Layout::from_size_align(ring_bytes(4), 64).unwrap();
    // SAFETY: non-zero size; freed below after every handle is gone.
    let mem = unsafe { std::alloc::alloc(layout) };
    {
        // SAFETY: aligned, ring_bytes(4) long, alive for this block.
        let a = unsafe { RingMem::init(mem, 4) }.unwrap();
        let b = unsafe { RingMem::attach(mem, 4) }.unwrap();
        let (mut p, mut c) = (a.producer(), b.consumer());
        for n in 0..6 {
            let _ = p.push(&item(n)).unwrap();
            assert_eq!(c.pop().unwrap().unwrap().item, item(n));
        }
        // The ABI: head at byte 0, tail at 64, consumer flag at 128, producer flag at 192,
        // slot i at 256 + 64 i with the id first.
        c.prepare_sleep();
        p.prepare_sleep();
        // SAFETY: reading initialised words of the live buffer.
        unsafe {
            assert_eq!(*(mem as *const u64), 6);
            assert_eq!(*(mem.add(64) as *const u64), 6);
            assert_eq!(*(mem.add(128) as *const u32), ASLEEP);
            assert_eq!(*(mem.add(192) as *const u32), ASLEEP);
            assert_eq!(*(mem.add(256 + 64) as *const u64), 5);
        }
        assert_eq!(unsafe { RingMem::attach(mem, 3) }.unwrap_err(), RingError::BadSetup);
        assert_eq!(unsafe { RingMem::attach(mem, 0) }.unwrap_err(), RingError::BadSetup);
    }
    // SAFETY: allocated above with this layout.
    unsafe { std::alloc::dealloc(mem, layout) };
}

/// Two real threads, a tiny ring and the full sleep protocol on both sides (std park/unpark
/// stand in for U-notification Wait/signal: both latch a wake-up that arrives before the
/// block). A lost wake-up would hang both threads; the watchdog then aborts the test binary.
#[test]
fn two_threads_with_sleep_protocol() {
    const N: u64 = 200_000;
    let r = Arc::new(OwnedRing::new(4, 0));
    let done = Arc::new(AtomicBool::new(false));
    let watchdog = {
        let done = done.clone();
        std::thread::spawn(move || {
            for _ in 0..1200 {
                std::thread::sleep(std::time::Duration::from_millis(100));
                if done.load(Ordering::Relaxed) {
                    return;
                }
            }
            eprintln!("two_threads_with_sleep_protocol: no progress for 120 s: lost wake-up");
            std::process::abort();
        })
    };
    let producer_thread = std::thread::current();
    let consumer_thread = {
        let r = r.clone();
        std::thread::spawn(move || {
            let mut c = r.mem.consumer();
            let (mut next, mut sleeps) = (0, 0u64);
            while next < N {
                match c.pop().unwrap() {
                    Some(got) => {
                        assert_eq!(got.item, item(next));
                        next += 1;
                        if got.notify == Notify::Signal {
                            producer_thread.unpark();
                        }
                    }
                    None => {
                        if c.try_sleep().unwrap() {
                            sleeps += 1;
                            std::thread::park();
                            c.cancel_sleep();
                        }
                    }
                }
            }
            sleeps
        })
    };
    let mut p = r.mem.producer();
    let (mut n, mut signals) = (0, 0u64);
    while n < N {
        match p.push(&item(n)) {
            Ok(notify) => {
                n += 1;
                if notify == Notify::Signal {
                    signals += 1;
                    consumer_thread.thread().unpark();
                }
            }
            Err(RingError::Full) => {
                if p.try_sleep().unwrap() {
                    std::thread::park();
                    p.cancel_sleep();
                }
            }
            Err(e) => panic!("{e:?}"),
        }
    }
    let sleeps = consumer_thread.join().unwrap();
    done.store(true, Ordering::Relaxed);
    watchdog.join().unwrap();
    // Each consumer block needs a signal to end, and a signal is only sent for an announced
    // sleep (some announcements are cancelled by the re-check, so signals >= sleeps).
    assert!(signals >= sleeps, "{signals} signals for {sleeps} blocks");
    eprintln!("{N} items: consumer blocked {sleeps} times, {signals} signals");
}
