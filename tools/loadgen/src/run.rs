//! The load: one task per connection, each sending a request and waiting for its response
//! (checked byte by byte: the server answers every byte plus one), measuring each round trip
//! after the warm-up. A connection that fails is reported and ends; the others go on.
use crate::config::{Config, Stop};
use crate::report::Report;
use crate::stats::percentiles;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::timeout;

/// What all connection tasks share.
struct Shared {
    /// Measured requests claimed (Stop::Requests hands out numbers up to the target).
    claimed: AtomicU64,
    /// Measured requests answered.
    done: AtomicU64,
    live: AtomicUsize,
    dead: AtomicUsize,
    stop: AtomicBool,
}

/// Why a connection died.
#[derive(Debug)]
pub enum Death {
    Connect(std::io::Error),
    Io(std::io::Error),
    /// The server closed the connection.
    Closed,
    TimedOut,
    /// Response byte `at` was `got`, not request byte + 1.
    WrongResponse {
        at: usize,
        got: u8,
        want: u8,
    },
}

impl std::fmt::Display for Death {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Death::Connect(e) => write!(f, "connect failed: {e}"),
            Death::Io(e) => write!(f, "{e}"),
            Death::Closed => write!(f, "closed by the server"),
            Death::TimedOut => write!(f, "no response within the timeout"),
            Death::WrongResponse { at, got, want } => write!(f, "wrong response: byte {at} is {got}, expected {want}"),
        }
    }
}

/// The request a connection sends as its `seq`-th: varies by connection and sequence, so a
/// response for the wrong request (or connection) is caught.
pub fn fill_request(buf: &mut [u8], conn: usize, seq: u64) {
    let base = (conn as u64).wrapping_mul(131).wrapping_add(seq.wrapping_mul(7));
    for (i, b) in buf.iter_mut().enumerate() {
        *b = base.wrapping_add(i as u64) as u8;
    }
}

/// The first byte of `resp` that is not `req`'s plus one.
pub fn check_response(req: &[u8], resp: &[u8]) -> Result<(), Death> {
    for (at, (&q, &r)) in req.iter().zip(resp).enumerate() {
        if r != q.wrapping_add(1) {
            return Err(Death::WrongResponse { at, got: r, want: q.wrapping_add(1) });
        }
    }
    Ok(())
}

struct ConnResult {
    latencies: Vec<u32>,
    first_measured: Option<Instant>,
    last_done: Option<Instant>,
}

/// Open a connection (no Nagle: every request goes out at once).
async fn connect(cfg: &Config) -> Result<TcpStream, Death> {
    match timeout(cfg.timeout, TcpStream::connect(cfg.addr)).await {
        Ok(Ok(s)) => {
            let _ = s.set_nodelay(true);
            Ok(s)
        }
        Ok(Err(e)) => Err(Death::Connect(e)),
        Err(_) => Err(Death::TimedOut),
    }
}

async fn connection(
    id: usize,
    mut stream: TcpStream,
    cfg: Arc<Config>,
    sh: Arc<Shared>,
    measure_from: Instant,
    end: Option<Instant>,
) -> (ConnResult, Option<Death>) {
    let mut out = ConnResult { latencies: Vec::new(), first_measured: None, last_done: None };
    let mut req = vec![0u8; cfg.request_bytes];
    let mut resp = vec![0u8; cfg.request_bytes];
    for seq in 0u64.. {
        if sh.stop.load(Ordering::Relaxed) {
            break;
        }
        let t0 = Instant::now();
        if end.is_some_and(|e| t0 >= e) {
            break;
        }
        let measured = t0 >= measure_from;
        if measured {
            if let Stop::Requests(n) = cfg.stop {
                if sh.claimed.fetch_add(1, Ordering::Relaxed) >= n {
                    break;
                }
            }
        }
        fill_request(&mut req, id, seq);
        let round = async {
            stream.write_all(&req).await.map_err(Death::Io)?;
            match stream.read_exact(&mut resp).await {
                Ok(_) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(Death::Closed),
                Err(e) => Err(Death::Io(e)),
            }
        };
        let r = match timeout(cfg.timeout, round).await {
            Ok(r) => r.and_then(|()| check_response(&req, &resp)),
            Err(_) => Err(Death::TimedOut),
        };
        if let Err(d) = r {
            if measured && matches!(cfg.stop, Stop::Requests(_)) {
                // Give the request's number back: a live connection does it instead.
                sh.claimed.fetch_sub(1, Ordering::Relaxed);
            }
            return (out, Some(d));
        }
        let now = Instant::now();
        if measured {
            out.latencies.push(now.duration_since(t0).as_micros().min(u32::MAX as u128) as u32);
            out.first_measured.get_or_insert(t0);
            out.last_done = Some(now);
            sh.done.fetch_add(1, Ordering::Relaxed);
        }
    }
    (out, None)
}

/// Run the load described by `cfg` and report it.
pub async fn run(cfg: Config) -> Report {
    let cfg = Arc::new(cfg);
    let sh = Arc::new(Shared {
        claimed: AtomicU64::new(0),
        done: AtomicU64::new(0),
        live: AtomicUsize::new(cfg.connections),
        dead: AtomicUsize::new(0),
        stop: AtomicBool::new(false),
    });
    // Connections are opened one after the other before the load starts: a server behind
    // QEMU's user-mode network is reached through a host socket with a listen backlog of one,
    // where a burst of connects loses SYNs to seconds of retransmission back-off.
    let mut streams = Vec::with_capacity(cfg.connections);
    for id in 0..cfg.connections {
        if cfg.progress {
            eprint!("\rconnecting {}/{}   ", id + 1, cfg.connections);
        }
        streams.push(connect(&cfg).await);
    }
    let start = Instant::now();
    let measure_from = start + cfg.warmup;
    let end = match cfg.stop {
        Stop::Duration(d) => Some(measure_from + d),
        Stop::Requests(_) => None,
    };
    let progress = cfg.progress.then(|| tokio::spawn(progress_line(sh.clone(), start, measure_from)));
    let tasks: Vec<_> = streams
        .into_iter()
        .enumerate()
        .map(|(id, stream)| {
            let (cfg, sh) = (cfg.clone(), sh.clone());
            tokio::spawn(async move {
                let r = match stream {
                    Ok(s) => connection(id, s, cfg, sh.clone(), measure_from, end).await,
                    Err(d) => (ConnResult { latencies: Vec::new(), first_measured: None, last_done: None }, Some(d)),
                };
                sh.live.fetch_sub(1, Ordering::Relaxed);
                if let Some(d) = &r.1 {
                    sh.dead.fetch_add(1, Ordering::Relaxed);
                    eprintln!("\nconnection {id} died after {} measured requests: {d}", r.0.latencies.len());
                }
                r
            })
        })
        .collect();
    let mut all = Vec::new();
    let (mut first, mut last): (Option<Instant>, Option<Instant>) = (None, None);
    let mut report = Report::new(&cfg);
    for t in tasks {
        match t.await {
            Ok((r, death)) => {
                all.extend_from_slice(&r.latencies);
                first = match (first, r.first_measured) {
                    (Some(a), Some(b)) => Some(a.min(b)),
                    (a, b) => a.or(b),
                };
                last = last.max(r.last_done);
                report.errors += death.is_some() as usize;
            }
            Err(_) => report.errors += 1,
        }
    }
    sh.stop.store(true, Ordering::Relaxed);
    if let Some(p) = progress {
        p.abort();
        eprintln!();
    }
    report.requests = all.len() as u64;
    // The window: from the first measured request's start (at or after the warm-up's end) to
    // the last measured response.
    report.seconds = match (first, last) {
        (Some(f), Some(l)) => l.duration_since(f).as_secs_f64(),
        _ => 0.0,
    };
    if report.seconds > 0.0 {
        report.requests_per_s = report.requests as f64 / report.seconds;
    }
    report.latency = percentiles(&mut all);
    report
}

/// A status line on stderr every second.
async fn progress_line(sh: Arc<Shared>, start: Instant, measure_from: Instant) {
    let mut prev = 0u64;
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    tick.tick().await;
    loop {
        tick.tick().await;
        let done = sh.done.load(Ordering::Relaxed);
        let phase = if Instant::now() < measure_from { "warm-up" } else { "measuring" };
        eprint!(
            "\r[{:6.1} s] {phase}: {done} requests, {} /s now, {} connections live, {} dead   ",
            start.elapsed().as_secs_f64(),
            done - prev,
            sh.live.load(Ordering::Relaxed),
            sh.dead.load(Ordering::Relaxed)
        );
        prev = done;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_differ_and_responses_are_checked() {
        let (mut a, mut b) = ([0u8; 8], [0u8; 8]);
        fill_request(&mut a, 0, 0);
        fill_request(&mut b, 1, 0);
        assert_ne!(a, b);
        fill_request(&mut b, 0, 1);
        assert_ne!(a, b);
        let good: Vec<u8> = a.iter().map(|x| x.wrapping_add(1)).collect();
        assert!(check_response(&a, &good).is_ok());
        let mut bad = good.clone();
        bad[5] ^= 1;
        assert!(matches!(check_response(&a, &bad), Err(Death::WrongResponse { at: 5, .. })));
    }
}
