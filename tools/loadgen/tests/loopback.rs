//! The client against in-process servers on loopback: a correct one (every byte plus one), one
//! that drops a connection mid-run, one that answers wrongly, and none at all.
use loadgen::{run, Config, Stop};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// How the test server misbehaves on one connection.
#[derive(Clone, Copy)]
enum Fault {
    None,
    /// The first connection to reach its 6th request is closed instead of answering it
    /// (whichever it is, as below).
    CloseAfterFiveOnce,
    /// The first connection to reach its 3rd response gets a wrong byte in it (whichever it
    /// is: on a loaded host one connection may finish the whole count before another starts).
    WrongThirdOnce,
    /// The first connection to reach its 5th request waits this long before answering it.
    StallOnce(Duration),
    /// Responses go out four at a time, once four requests are in.
    Batches,
}

/// Serve fixed-size requests with `size`-byte responses; returns the port.
async fn server(size: usize, fault: Fault) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = l.local_addr().unwrap().port();
    let faulted = Arc::new(AtomicBool::new(false));
    tokio::spawn(async move {
        loop {
            let (mut s, _) = l.accept().await.unwrap();
            let faulted = faulted.clone();
            tokio::spawn(async move {
                let batch = if matches!(fault, Fault::Batches) { 4 } else { 1 };
                let mut buf = vec![0u8; size * batch];
                for k in 0.. {
                    if s.read_exact(&mut buf).await.is_err() {
                        return;
                    }
                    if let Fault::StallOnce(d) = fault {
                        if k == 4 && !faulted.swap(true, Ordering::Relaxed) {
                            tokio::time::sleep(d).await;
                        }
                    }
                    match fault {
                        Fault::CloseAfterFiveOnce if k == 5 && !faulted.swap(true, Ordering::Relaxed) => return,
                        _ => {}
                    }
                    for b in buf.iter_mut() {
                        *b = b.wrapping_add(1);
                    }
                    if matches!(fault, Fault::WrongThirdOnce) && k == 2 && !faulted.swap(true, Ordering::Relaxed) {
                        buf[0] ^= 0x80;
                    }
                    if s.write_all(&buf).await.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

fn config(port: u16, connections: usize, size: usize, stop: Stop) -> Config {
    Config {
        addr: ([127, 0, 0, 1], port).into(),
        connections,
        request_bytes: size,
        stop,
        warmup: Duration::ZERO,
        timeout: Duration::from_secs(5),
        progress: false,
        ..Config::default()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn counts_and_percentiles_against_a_correct_server() {
    for size in [1, 64, 1000] {
        let port = server(size, Fault::None).await;
        let r = run(config(port, 8, size, Stop::Requests(400))).await;
        assert_eq!((r.requests, r.errors), (400, 0), "size {size}");
        assert!(r.seconds > 0.0 && r.requests_per_s > 0.0);
        let l = r.latency;
        assert!(l.p50 <= l.p90 && l.p90 <= l.p99 && l.p99 <= l.p999 && l.p999 <= l.max);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn duration_runs_stop_on_time_after_the_warm_up() {
    let port = server(64, Fault::None).await;
    let mut c = config(port, 4, 64, Stop::Duration(Duration::from_millis(300)));
    c.warmup = Duration::from_millis(200);
    let t0 = std::time::Instant::now();
    let r = run(c).await;
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(500) && took < Duration::from_secs(3), "took {took:?}");
    assert!(r.requests > 0 && r.errors == 0);
    assert!(r.seconds <= 0.35, "measured window {} s", r.seconds);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_connection_is_reported_and_the_rest_keep_measuring() {
    let port = server(64, Fault::CloseAfterFiveOnce).await;
    let r = run(config(port, 4, 64, Stop::Requests(600))).await;
    assert_eq!(r.errors, 1);
    assert_eq!(r.requests, 600, "the three live connections finish the count");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_response_kills_its_connection() {
    let port = server(16, Fault::WrongThirdOnce).await;
    let r = run(config(port, 2, 16, Stop::Requests(100))).await;
    assert_eq!((r.errors, r.requests), (1, 100));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nobody_listening_is_every_connection_dead() {
    // A port that was just free: bind, note it, close.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let r = run(config(port, 3, 64, Stop::Requests(10))).await;
    assert_eq!((r.errors, r.requests), (3, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_offers_the_rate_asked_for() {
    let port = server(64, Fault::None).await;
    let mut c = config(port, 4, 64, Stop::Duration(Duration::from_secs(1)));
    c.rate = Some(400.0);
    let r = run(c).await;
    // 400 requests are due in the second; a loaded host may miss the last few, and says so.
    assert!(r.errors == 0 && (360..=400).contains(&r.requests), "{} requests", r.requests);
    assert!(r.requests + r.unsent <= 400 && r.unsent <= 40, "{} unsent", r.unsent);
    assert!((330.0..=440.0).contains(&r.requests_per_s), "{} requests/s", r.requests_per_s);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_charges_a_stall_to_every_request_due_in_it() {
    // One connection, a 300 ms stall at its 5th request. Closed loop, the stall is one slow
    // request among many fast ones; open loop at 100/s, the ~30 requests due during it wait
    // for it too, and ~20 of the second's 100 take over 100 ms.
    let stall = Duration::from_millis(300);
    let closed =
        run(config(server(64, Fault::StallOnce(stall)).await, 1, 64, Stop::Duration(Duration::from_secs(1)))).await;
    assert!(closed.latency.max >= 290_000, "{:?}", closed.latency);
    assert!(closed.latency.p90 < 100_000, "{:?}", closed.latency);
    let mut c = config(server(64, Fault::StallOnce(stall)).await, 1, 64, Stop::Duration(Duration::from_secs(1)));
    c.rate = Some(100.0);
    let open = run(c).await;
    assert_eq!(open.errors, 0);
    assert!(open.latency.max >= 290_000 && open.latency.p90 >= 100_000, "{:?}", open.latency);
    assert!(open.histogram.count() >= 90);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn open_loop_counts_what_a_slow_server_never_let_it_send() {
    // The server stalls 600 ms at the 5th request of the one connection; at 100/s over a 0.5 s
    // window the client is still waiting when the window ends: the requests due after the
    // stalled one are never sent, and counted as such.
    let mut c = config(
        server(64, Fault::StallOnce(Duration::from_millis(600))).await,
        1,
        64,
        Stop::Duration(Duration::from_millis(500)),
    );
    c.rate = Some(100.0);
    let r = run(c).await;
    assert_eq!(r.errors, 0);
    assert_eq!(r.requests + r.unsent, 50, "{} answered, {} unsent", r.requests, r.unsent);
    assert!(r.unsent >= 40, "{} unsent", r.unsent);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pipeline_keeps_that_many_requests_in_flight() {
    // The server answers only once four requests are in: one at a time never gets an answer.
    // One connection: with two, the 200 requests split between them at random, and one that
    // ends on a part of a batch waits for answers that never come.
    let port = server(32, Fault::Batches).await;
    let mut c = config(port, 1, 32, Stop::Requests(200));
    c.pipeline = 4;
    let r = run(c.clone()).await;
    assert_eq!((r.requests, r.errors), (200, 0));
    c.pipeline = 1;
    c.timeout = Duration::from_millis(300);
    let r = run(c).await;
    assert_eq!((r.requests, r.errors), (0, 1));
}
