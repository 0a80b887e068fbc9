//! Host tests: a loopback channel (client, server dispatcher and handlers all on one executor
//! and one `ThreadPark`, so the park hook's re-check always finds the work and never reaches
//! the kernel Wait), and hostile peers played by raw ring handles on the same memory.
use super::*;
use crate::task::{yield_now, Executor, Handle};
use aring::Item;
use core::future::Future;
use core::pin::pin;
use core::sync::atomic::Ordering;
use core::task::{Context, Poll, Waker};

const CAP: usize = 16;

fn leak<T>(t: T) -> &'static T {
    Box::leak(Box::new(t))
}

/// Fresh channel memory (64-byte aligned), initialised.
fn chan_mem() -> ChanMem {
    chan_mem_at().0
}

/// `chan_mem`, and where it is (for tests that write its words as a hostile peer would).
fn chan_mem_at() -> (ChanMem, *mut u8) {
    #[repr(C, align(64))]
    struct Line([u8; 64]);
    let lines: &'static mut [Line] = Box::leak((0..chan_bytes(CAP) / 64).map(|_| Line([0; 64])).collect());
    let base = lines.as_mut_ptr() as *mut u8;
    // SAFETY: leaked, so live for the rest of the test process; big enough by construction.
    let m = unsafe { ChanMem::new(base, CAP) }.unwrap();
    m.init().unwrap();
    (m, base)
}

fn runtime() -> (Handle<96, 512>, &'static ThreadPark) {
    let park = leak(ThreadPark::new());
    let ex: &'static Executor<96, 512> = leak(Executor::new());
    (ex.claim(park).unwrap(), park)
}

/// `n` calls one after the other, each asking `double` for twice its word: how many came back
/// right.
fn doubled_in_turn(rt: Handle<96, 512>, cl: &'static Client<CAP>, n: u64) -> u64 {
    rt.block_on(async {
        let mut ok = 0;
        for j in 0..n {
            let r = cl.call(Msg::new(7, &[j]).unwrap()).await.unwrap();
            ok += (r.label == 8 && r.words() == [2 * j]) as u64;
        }
        ok
    })
}

/// A server and a client attached to both ends of `mem`, served by `park`'s thread.
fn connected<const N: usize>(mem: ChanMem, park: &'static ThreadPark) -> (&'static Server, &'static Client<N>) {
    let srv = leak(Server::new());
    let cl: &'static Client<N> = leak(Client::new());
    srv.attach(mem, 0, park).unwrap();
    cl.attach(mem, 0, park).unwrap();
    (srv, cl)
}

async fn double(m: Msg) -> Msg {
    yield_now().await;
    Msg::new(m.label + 1, &[m.word(0) * 2]).unwrap()
}

#[test]
fn loopback_many_concurrent_calls() {
    let (rt, park) = runtime();
    let mem = chan_mem();
    let (srv, cl) = connected::<CAP>(mem, park);
    rt.spawn(10, srv.serve(rt, 10, double)).unwrap().detach();
    // 40 workers for a table of 16: some wait for a slot.
    let hs: Vec<_> = (0..40u64)
        .map(|i| {
            rt.spawn(5, async move {
                let mut ok = 0;
                for j in 0..10u64 {
                    let r = cl.call(Msg::new(7, &[i * 100 + j]).unwrap()).await.unwrap();
                    ok += (r.label == 8 && r.words() == [2 * (i * 100 + j)]) as u32;
                }
                ok
            })
            .unwrap()
        })
        .collect();
    let ok: u32 = rt.block_on(async {
        let mut sum = 0;
        for h in hs {
            sum += h.await;
        }
        sum
    });
    assert_eq!(ok, 400);
    assert_eq!(cl.replies.load(Ordering::Relaxed), 400);
    assert!(srv.max_in_flight.load(Ordering::Relaxed) >= 2);
    // The park hook's re-check always found the work: it never went to the kernel (on the
    // host a Wait would panic). (Doorbells may ring: the server announces that it waits for
    // reply space, and the client's drain in the same re-check answers that announcement.)
    assert_eq!(park.waits.load(Ordering::Relaxed), 0);
}

/// HOLD (label 99) never answers: its handler keeps a reply credit for good.
async fn double_or_hold(m: Msg) -> Msg {
    if m.label == 99 {
        core::future::pending::<()>().await;
    }
    Msg::new(m.label + 1, &[m.word(0) * 2]).unwrap()
}

#[test]
fn long_held_requests_do_not_stall_the_dispatcher() {
    // A server holding requests whose handlers wait for a long time (a socket server's
    // blocked receives) must keep serving the others far past one lap of the reply ring: its
    // cached view of the client's head goes stale while it holds credits.
    let (rt, park) = runtime();
    let mem = chan_mem();
    let (srv, cl) = connected::<CAP>(mem, park);
    rt.spawn(10, srv.serve(rt, 10, double_or_hold)).unwrap().detach();
    let held: Vec<_> = (0..3).map(|_| rt.spawn(5, cl.call(Msg::new(99, &[]).unwrap())).unwrap()).collect();
    assert_eq!(doubled_in_turn(rt, cl, 5 * CAP as u64), 5 * CAP as u64);
    assert!(held.iter().all(|h| !h.is_finished()), "the held calls stay outstanding");
    assert_eq!(park.waits.load(Ordering::Relaxed), 0);
}

#[test]
fn serve_first_answers_at_once_or_spawns() {
    // Even words are answered by `now` (no task), odd ones by a task; HOLD never answers and
    // keeps its task and credit, while the others go on being served past a lap of the ring.
    let (rt, park) = runtime();
    let mem = chan_mem();
    let (srv, cl) = connected::<CAP>(mem, park);
    let now = |m: &Msg| {
        (m.label != 99 && m.word(0).is_multiple_of(2)).then(|| Msg::new(m.label + 1, &[m.word(0) * 2]).unwrap())
    };
    rt.spawn(10, srv.serve_first(rt, 10, now, double_or_hold)).unwrap().detach();
    let held = rt.spawn(5, cl.call(Msg::new(99, &[]).unwrap())).unwrap();
    assert_eq!(doubled_in_turn(rt, cl, 5 * CAP as u64), 5 * CAP as u64);
    assert!(!held.is_finished(), "the held call stays outstanding");
    assert_eq!(srv.replies.load(Ordering::Relaxed), 5 * CAP);
    assert_eq!(srv.max_in_flight.load(Ordering::Relaxed), 2, "the held task and one odd request at a time");
}

#[test]
fn taken_requests_are_answered_in_any_order() {
    // A server loop of its own (no task per request): it takes requests while the reply ring
    // has a slot for each one owed, and answers them later, out of order; an undecodable one
    // is answered BAD_REQUEST by `take` itself. The client is played by raw ring handles.
    let (_rt, park) = runtime();
    let mem = chan_mem();
    let srv = leak(Server::new());
    srv.attach(mem, 0, park).unwrap();
    let (mut req, mut rep) = (mem.requests().producer(), mem.replies().consumer());
    let call = |i: u64| Item { id: 100 + i, label: 3, len: 1, payload: [i, 0, 0, 0, 0, 0] };
    let _ = req.push(&Item { id: 7, label: 1, len: 9, payload: [0; 6] }).unwrap();
    for i in 0..CAP as u64 - 1 {
        let _ = req.push(&call(i)).unwrap();
    }
    let mut cx = Context::from_waker(Waker::noop());
    let mut owed = vec![];
    while let Poll::Ready(r) = srv.take(&mut cx) {
        owed.push(r.unwrap());
    }
    // The BAD_REQUEST's reply is in the ring: one slot fewer for the rest, every one of them
    // taken with its words.
    assert_eq!(owed.len(), CAP - 1);
    assert!(owed.iter().enumerate().all(|(i, (_, m))| m.label == 3 && m.words() == [i as u64]));
    // Another request, but every reply slot is owed or full: it waits in its ring.
    let _ = req.push(&call(99)).unwrap();
    assert!(srv.take(&mut cx).is_pending(), "no reply slot for it");
    let bad = rep.pop().unwrap().unwrap().item;
    assert_eq!((bad.id, bad.label), (7, BAD_REQUEST));
    // Answered newest first: each reply names its request.
    for (o, m) in owed.into_iter().rev() {
        srv.answer(o, Msg::new(4, &[m.word(0) * 3]).unwrap());
    }
    for i in (0..CAP as u64 - 1).rev() {
        let r = rep.pop().unwrap().unwrap().item;
        assert_eq!((r.id, r.label, r.payload().unwrap()), (100 + i, 4, &[3 * i][..]));
    }
    let Poll::Ready(Ok((o, m))) = srv.take(&mut cx) else { panic!("the waiting request") };
    assert_eq!(m.words(), [99]);
    srv.answer(o, Msg::default());
    assert_eq!(rep.pop().unwrap().unwrap().item.id, 199);
    assert_eq!(srv.replies.load(Ordering::Relaxed), CAP + 1);
}

#[test]
fn serve_keeping_answers_kept_requests_later() {
    // Label 50 is kept (its `Owed` taken, no task); the others are doubled by `now`. The kept
    // ones hold their credits while the rest are served past a lap of the ring, and their
    // answers, given later outside any task, reach the right calls.
    let (rt, park) = runtime();
    let mem = chan_mem();
    let (srv, cl) = connected::<CAP>(mem, park);
    let kept: &'static std::sync::Mutex<Vec<(Owed, u64)>> = leak(std::sync::Mutex::new(Vec::new()));
    let now = move |m: &Msg, t: &mut Option<Owed>| {
        if m.label == 50 {
            kept.lock().unwrap().push((t.take().unwrap(), m.word(0)));
            return None;
        }
        Some(Msg::new(m.label + 1, &[m.word(0) * 2]).unwrap())
    };
    rt.spawn(10, srv.serve_keeping(rt, 10, now, double)).unwrap().detach();
    let held: Vec<_> = (0..3u64).map(|i| rt.spawn(5, cl.call(Msg::new(50, &[i]).unwrap())).unwrap()).collect();
    assert_eq!(doubled_in_turn(rt, cl, 5 * CAP as u64), 5 * CAP as u64);
    assert!(held.iter().all(|h| !h.is_finished()), "kept calls wait for their answers");
    assert_eq!(kept.lock().unwrap().len(), 3);
    assert_eq!(srv.max_in_flight.load(Ordering::Relaxed), 3, "the three kept (answers at once are not counted)");
    for (t, w) in kept.lock().unwrap().drain(..) {
        srv.answer(t, Msg::new(51, &[w + 1000]).unwrap());
    }
    let got: Vec<_> = rt.block_on(async {
        let mut v = Vec::new();
        for h in held {
            v.push(h.await.unwrap());
        }
        v
    });
    assert_eq!(got.iter().map(|m| (m.label, m.word(0))).collect::<Vec<_>>(), [(51, 1000), (51, 1001), (51, 1002)]);
    assert_eq!(srv.replies.load(Ordering::Relaxed), 5 * CAP + 3);
    // The credits came back: the dispatcher still serves.
    assert_eq!(doubled_in_turn(rt, cl, 4), 4);
}

#[test]
fn loopback_inline_dispatcher() {
    let (rt, park) = runtime();
    let mem = chan_mem();
    let (srv, cl) = connected::<CAP>(mem, park);
    let mut handled = 0u64;
    rt.spawn(
        10,
        srv.serve_inline(move |m| {
            handled += 1;
            Msg::new(m.label + 1, &[m.word(0) * 2, handled]).unwrap()
        }),
    )
    .unwrap()
    .detach();
    // More workers than the table and more calls than a dispatcher turn.
    let hs: Vec<_> = (0..24u64)
        .map(|i| {
            rt.spawn(5, async move {
                let mut ok = 0;
                for j in 0..10u64 {
                    let r = cl.call(Msg::new(7, &[i * 100 + j]).unwrap()).await.unwrap();
                    ok += (r.label == 8 && r.word(0) == 2 * (i * 100 + j) && (1..=240).contains(&r.word(1))) as u32;
                }
                ok
            })
            .unwrap()
        })
        .collect();
    let ok: u32 = rt.block_on(async {
        let mut sum = 0;
        for h in hs {
            sum += h.await;
        }
        sum
    });
    assert_eq!(ok, 240);
    assert_eq!(srv.replies.load(Ordering::Relaxed), 240);
    assert_eq!(srv.max_in_flight.load(Ordering::Relaxed), 1, "inline: one request at a time");
    assert_eq!(park.waits.load(Ordering::Relaxed), 0);
    // A request of impossible length gets BAD_REQUEST, as from `serve`.
    let mut raw = mem.requests().producer();
    let mut bad = Item { id: 5 | 1 << 40, label: 7, len: 7, payload: [0; 6] };
    bad.len = 9;
    let _ = raw.push(&bad).unwrap(); // the server is polled below, not woken
    let mut rep = mem.replies().consumer();
    // What an idle thread's park hook does: look at the rings, wake the dispatcher.
    crate::task::Park::poll_busy(park);
    rt.run_ready();
    let got = rep.pop().unwrap().expect("a reply to the bad request").item;
    assert_eq!((got.id, got.label), (5 | 1 << 40, BAD_REQUEST));
}

#[test]
fn abandoned_call_frees_its_slot_when_the_reply_comes() {
    let (rt, park) = runtime();
    let mem = chan_mem();
    let (srv, cl) = connected::<1>(mem, park);
    rt.spawn(10, srv.serve(rt, 10, double)).unwrap().detach();
    {
        // Sent, then dropped before its reply.
        let mut first = pin!(cl.call(Msg::new(1, &[1]).unwrap()));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(first.as_mut().poll(&mut cx).is_pending());
    }
    // The only slot is taken until the abandoned call's reply arrives, then this one gets it.
    let r = rt.block_on(cl.call(Msg::new(3, &[5]).unwrap())).unwrap();
    assert_eq!((r.label, r.words()), (4, &[10u64][..]));
}

/// A client whose "server" is the test, holding the other ends of the rings.
fn client_with_raw_server() -> (Handle<96, 512>, &'static Client<4>, ChanMem, aring::Consumer, aring::Producer) {
    let (rt, park) = runtime();
    let mem = chan_mem();
    let cl: &'static Client<4> = leak(Client::new());
    cl.attach(mem, 0, park).unwrap();
    (rt, cl, mem, mem.requests().consumer(), mem.replies().producer())
}

#[test]
fn forged_replies_break_the_channel() {
    // A reply naming no outstanding call.
    let (rt, cl, _mem, _req, mut rep) = client_with_raw_server();
    let _ = rep.push(&Item { id: 3 | 9 << 32, label: 1, len: 0, payload: [0; 6] }).unwrap();
    assert_eq!(rt.block_on(cl.call(Msg::default())), Err(ChanError::Corrupt));
    assert_eq!(rt.block_on(cl.call(Msg::default())), Err(ChanError::Corrupt), "sticky");

    // A reply with a length past the payload, for the call's own id.
    let (rt, cl, _mem, _req, mut rep) = client_with_raw_server();
    let _ = rep.push(&Item { id: 0, label: 1, len: 7, payload: [0; 6] }).unwrap();
    assert_eq!(rt.block_on(cl.call(Msg::default())), Err(ChanError::Corrupt));

    // The same reply with a valid length is accepted, and the request was what we sent.
    let (rt, cl, _mem, mut req, mut rep) = client_with_raw_server();
    let _ = rep.push(&Item { id: 0, label: 1, len: 1, payload: [42, 0, 0, 0, 0, 0] }).unwrap();
    let r = rt.block_on(cl.call(Msg::new(9, &[1, 2]).unwrap())).unwrap();
    assert_eq!((r.label, r.words()), (1, &[42u64][..]));
    let p = req.pop().unwrap().unwrap().item;
    assert_eq!((p.id, p.label, p.payload().unwrap()), (0, 9, &[1u64, 2][..]));
}

#[test]
fn closed_peers_end_calls_and_dispatchers() {
    let (rt, cl, mem, _req, _rep) = client_with_raw_server();
    mem.close(Side::Server);
    assert_eq!(rt.block_on(cl.call(Msg::default())), Err(ChanError::PeerGone));

    let (rt, park) = runtime();
    let mem = chan_mem();
    let srv = leak(Server::new());
    srv.attach(mem, 0, park).unwrap();
    let mut req = mem.requests().producer();
    // A request of impossible length gets BAD_REQUEST; then the client goes.
    let _ = req.push(&Item { id: 77, label: 1, len: 9, payload: [0; 6] }).unwrap();
    let mut rep = mem.replies().consumer();
    let mut serve = pin!(srv.serve(rt, 1, double));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(serve.as_mut().poll(&mut cx).is_pending());
    let r = rep.pop().unwrap().unwrap().item;
    assert_eq!((r.id, r.label), (77, BAD_REQUEST));
    mem.close(Side::Client);
    assert_eq!(serve.as_mut().poll(&mut cx), Poll::Ready(ChanError::PeerGone));
}

#[test]
fn setup_errors() {
    let mem = chan_mem();
    let park = leak(ThreadPark::new());
    let big: &'static Client<32> = leak(Client::new());
    assert_eq!(big.attach(mem, 0, park), Err(ChanError::BadSetup), "more calls than ring slots");
    let cl: &'static Client<4> = leak(Client::new());
    cl.attach(mem, 0, park).unwrap();
    assert_eq!(cl.attach(mem, 0, park), Err(ChanError::BadSetup), "attached twice");
    // SAFETY: never dereferenced (refused).
    assert!(unsafe { ChanMem::new(8 as *mut u8, CAP) }.is_err());
    assert!(unsafe { ChanMem::new(64 as *mut u8, 12) }.is_err());
}

#[test]
fn a_peer_item_becomes_its_first_len_words_and_nothing_past_them() {
    let mut item = aring::Item { id: 1, label: 8, len: 2, payload: [11, 12, 13, 14, 15, 16] };
    // The words past the length (the peer's garbage) neither show nor travel on.
    let m = Msg::from_item(&item).unwrap();
    assert_eq!(m, Msg::new(8, &[11, 12]).unwrap());
    assert_eq!(m.to_item(1).payload, [11, 12, 0, 0, 0, 0]);
    item.len = 6;
    assert_eq!(Msg::from_item(&item).unwrap().words(), &[11, 12, 13, 14, 15, 16]);
    for bad in [7, 8, u32::MAX] {
        item.len = bad;
        assert_eq!(Msg::from_item(&item), None);
    }
}

#[test]
fn inline_dispatcher_under_a_raw_client() {
    let (_rt, park) = runtime();
    let mem = chan_mem();
    let srv = leak(Server::new());
    srv.attach(mem, 0, park).unwrap();
    let mut req = mem.requests().producer();
    let mut rep = mem.replies().consumer();
    let mut serve = pin!(srv.serve_inline(|m| Msg::new(m.label, &[m.word(0) + 1]).unwrap()));
    let mut cx = Context::from_waker(Waker::noop());
    let ask = |req: &mut aring::Producer, i: u64| {
        let _ = req.push(&Item { id: i, label: 3, len: 1, payload: [i, 0, 0, 0, 0, 0] }).unwrap();
    };
    // A full request ring is answered until the reply ring is full too.
    for i in 0..CAP as u64 {
        ask(&mut req, i);
    }
    assert!(serve.as_mut().poll(&mut cx).is_pending());
    assert_eq!(srv.replies.load(Ordering::Relaxed), CAP);
    // One more request finds no reply slot: it stays in the ring, untouched.
    ask(&mut req, 100);
    assert!(serve.as_mut().poll(&mut cx).is_pending());
    assert_eq!(srv.replies.load(Ordering::Relaxed), CAP);
    for i in 0..CAP as u64 {
        let r = rep.pop().unwrap().unwrap().item;
        assert_eq!((r.id, r.label, r.payload().unwrap()), (i, 3, &[i + 1][..]));
    }
    // Space again: the held-back request is answered.
    assert!(serve.as_mut().poll(&mut cx).is_pending());
    let r = rep.pop().unwrap().unwrap().item;
    assert_eq!((r.id, r.payload().unwrap()), (100, &[101u64][..]));
    // The client goes: the dispatcher ends.
    mem.close(Side::Client);
    assert_eq!(serve.as_mut().poll(&mut cx), Poll::Ready(ChanError::PeerGone));

    // A client that moves its tail past a full ring ahead: Corrupt, for good.
    let (mem, base) = chan_mem_at();
    let srv = leak(Server::new());
    srv.attach(mem, 0, park).unwrap();
    let mut serve = pin!(srv.serve_inline(|m| m));
    // The request ring's tail: its header's second line, after the channel header.
    // SAFETY: inside the leaked channel memory; atomics, as the server reads it.
    let tail = unsafe { &*(base.add(CHAN_HEADER_BYTES + 64) as *const core::sync::atomic::AtomicU64) };
    tail.store(CAP as u64 + 1, Ordering::Release);
    assert_eq!(serve.as_mut().poll(&mut cx), Poll::Ready(ChanError::Corrupt));
    let mut again = pin!(srv.serve_inline(|m| m));
    assert_eq!(again.as_mut().poll(&mut cx), Poll::Ready(ChanError::Corrupt), "sticky");
}

#[test]
fn inline_dispatcher_polling_an_empty_ring_still_yields_and_ends() {
    // A thread whose park hook polls (client on another hart): the dispatcher polls its dry
    // request ring in place for a bounded while, then lets the thread park; it still answers
    // what comes and still sees the client go.
    let park = leak(ThreadPark::new());
    park.setup(0, 1 << 30);
    let mem = chan_mem();
    let srv = leak(Server::new());
    srv.attach(mem, 0, park).unwrap();
    let mut req = mem.requests().producer();
    let mut rep = mem.replies().consumer();
    let mut serve = pin!(srv.serve_inline(|m| Msg::new(m.label, &[m.word(0) * 3]).unwrap()));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(serve.as_mut().poll(&mut cx).is_pending(), "an empty ring: back to the executor");
    let _ = req.push(&Item { id: 4, label: 2, len: 1, payload: [5, 0, 0, 0, 0, 0] }).unwrap();
    assert!(serve.as_mut().poll(&mut cx).is_pending());
    let r = rep.pop().unwrap().unwrap().item;
    assert_eq!((r.id, r.payload().unwrap()), (4, &[15u64][..]));
    mem.close(Side::Client);
    assert_eq!(serve.as_mut().poll(&mut cx), Poll::Ready(ChanError::PeerGone));
}
