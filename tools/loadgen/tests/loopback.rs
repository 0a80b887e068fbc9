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
                let mut buf = vec![0u8; size];
                for k in 0.. {
                    if s.read_exact(&mut buf).await.is_err() {
                        return;
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
