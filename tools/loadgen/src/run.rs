//! The load: one task per connection, its sender and receiver side by side. The sender paces
//! requests (closed loop: as responses free one of the connection's `pipeline` slots; open
//! loop: on the connection's schedule, src/schedule.rs); the receiver checks each response byte
//! by byte (the server answers every byte plus one) and times it. Requests after the warm-up
//! are measured. A connection that fails is reported and ends; the others go on.
use crate::config::{Config, Stop};
use crate::report::Report;
use crate::schedule::{latency_us, Schedule};
use crate::stats::Latencies;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::net::TcpStream;
use tokio::sync::{mpsc, Semaphore};
use tokio::time::timeout;

/// What all connection tasks share.
struct Shared {
    /// Measured requests claimed (Stop::Requests hands out numbers up to the target).
    claimed: AtomicU64,
    /// Measured requests answered.
    done: AtomicU64,
    live: AtomicUsize,
    dead: AtomicUsize,
    /// Open loop: measured requests due before the end that were never sent (the server was
    /// too far behind for their turn to come).
    unsent: AtomicU64,
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

#[derive(Default)]
struct ConnResult {
    latencies: Latencies,
    /// When the first measured request was due (open loop) or sent (closed loop).
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

/// A request on its way: what the reader needs to check and time its response.
struct InFlight {
    seq: u64,
    /// Latency counts from here: the due time (open loop) or the send (closed loop).
    from: Instant,
    sent: Instant,
    measured: bool,
}

/// When a connection runs and how it paces its requests.
#[derive(Clone, Copy)]
struct Plan {
    measure_from: Instant,
    end: Option<Instant>,
    schedule: Option<Schedule>,
}

/// Send requests: on the schedule (open loop) or as slots free up (closed loop), never more
/// than `cfg.pipeline` unanswered. Each goes to the reader before its bytes go out.
async fn send(
    id: usize,
    mut wr: OwnedWriteHalf,
    cfg: &Config,
    sh: &Shared,
    plan: Plan,
    slots: &Semaphore,
    tx: mpsc::UnboundedSender<InFlight>,
) -> Result<(), Death> {
    let mut req = vec![0u8; cfg.request_bytes];
    for seq in 0u64.. {
        let due = plan.schedule.map(|s| s.due(seq));
        if let Some(d) = due {
            if plan.end.is_some_and(|e| d >= e) {
                break;
            }
            tokio::time::sleep_until(d.into()).await;
        }
        // A closed slots semaphore: the reader has died.
        let Ok(permit) = slots.acquire().await else { break };
        permit.forget();
        let now = Instant::now();
        if let (Some(end), Some(sched)) = (plan.end, plan.schedule) {
            if now >= end {
                let first_unsent = seq.max(sched.due_before(plan.measure_from));
                sh.unsent.fetch_add(sched.due_before(end).saturating_sub(first_unsent), Ordering::Relaxed);
            }
        }
        if sh.stop.load(Ordering::Relaxed) || plan.end.is_some_and(|e| now >= e) {
            break;
        }
        let from = due.unwrap_or(now);
        let measured = from >= plan.measure_from;
        if measured {
            if let Stop::Requests(n) = cfg.stop {
                if sh.claimed.fetch_add(1, Ordering::Relaxed) >= n {
                    sh.claimed.fetch_sub(1, Ordering::Relaxed);
                    break;
                }
            }
        }
        fill_request(&mut req, id, seq);
        if tx.send(InFlight { seq, from, sent: now, measured }).is_err() {
            break;
        }
        match timeout(cfg.timeout, wr.write_all(&req)).await {
            Ok(Ok(())) => {}
            Ok(Err(e)) => return Err(Death::Io(e)),
            Err(_) => return Err(Death::TimedOut),
        }
    }
    Ok(())
}

/// Read and check each response in order, timing it from its request's `from`; every measured
/// request not answered is given back to the count (Stop::Requests) when the connection dies.
async fn receive(
    id: usize,
    mut rd: OwnedReadHalf,
    cfg: &Config,
    sh: &Shared,
    slots: &Semaphore,
    mut rx: mpsc::UnboundedReceiver<InFlight>,
    out: &mut ConnResult,
) -> Result<(), Death> {
    let mut req = vec![0u8; cfg.request_bytes];
    let mut resp = vec![0u8; cfg.request_bytes];
    while let Some(f) = rx.recv().await {
        let r = match tokio::time::timeout_at((f.sent + cfg.timeout).into(), rd.read_exact(&mut resp)).await {
            Ok(Ok(_)) => {
                fill_request(&mut req, id, f.seq);
                check_response(&req, &resp)
            }
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => Err(Death::Closed),
            Ok(Err(e)) => Err(Death::Io(e)),
            Err(_) => Err(Death::TimedOut),
        };
        if let Err(d) = r {
            slots.close();
            if matches!(cfg.stop, Stop::Requests(_)) {
                rx.close();
                let mut unanswered = f.measured as u64;
                while let Ok(g) = rx.try_recv() {
                    unanswered += g.measured as u64;
                }
                sh.claimed.fetch_sub(unanswered, Ordering::Relaxed);
            }
            return Err(d);
        }
        let now = Instant::now();
        if f.measured {
            out.latencies.record(latency_us(f.from, now));
            out.first_measured = Some(out.first_measured.map_or(f.from, |t| t.min(f.from)));
            out.last_done = Some(now);
            sh.done.fetch_add(1, Ordering::Relaxed);
        }
        slots.add_permits(1);
    }
    Ok(())
}

async fn connection(
    id: usize,
    stream: TcpStream,
    cfg: Arc<Config>,
    sh: Arc<Shared>,
    plan: Plan,
) -> (ConnResult, Option<Death>) {
    let mut out = ConnResult::default();
    let (rd, wr) = stream.into_split();
    let slots = Semaphore::new(cfg.pipeline);
    let (tx, rx) = mpsc::unbounded_channel();
    let (sent, received) =
        tokio::join!(send(id, wr, &cfg, &sh, plan, &slots, tx), receive(id, rd, &cfg, &sh, &slots, rx, &mut out));
    (out, received.err().or(sent.err()))
}

/// Run the load described by `cfg` and report it.
pub async fn run(cfg: Config) -> Report {
    let cfg = Arc::new(cfg);
    let sh = Arc::new(Shared {
        claimed: AtomicU64::new(0),
        done: AtomicU64::new(0),
        live: AtomicUsize::new(cfg.connections),
        dead: AtomicUsize::new(0),
        unsent: AtomicU64::new(0),
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
            let schedule = cfg.rate.map(|r| Schedule::new(start, r, cfg.connections, id));
            let plan = Plan { measure_from, end, schedule };
            tokio::spawn(async move {
                let r = match stream {
                    Ok(s) => connection(id, s, cfg, sh.clone(), plan).await,
                    Err(d) => (ConnResult::default(), Some(d)),
                };
                sh.live.fetch_sub(1, Ordering::Relaxed);
                if let Some(d) = &r.1 {
                    sh.dead.fetch_add(1, Ordering::Relaxed);
                    eprintln!("\nconnection {id} died after {} measured requests: {d}", r.0.latencies.count());
                }
                r
            })
        })
        .collect();
    let mut all = Latencies::default();
    let (mut first, mut last): (Option<Instant>, Option<Instant>) = (None, None);
    let mut report = Report::new(&cfg);
    for t in tasks {
        match t.await {
            Ok((r, death)) => {
                all.merge(&r.latencies);
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
    report.requests = all.count();
    report.unsent = sh.unsent.load(Ordering::Relaxed);
    // The window: from the first measured request's start (its due time in open loop; at or
    // after the warm-up's end) to the last measured response.
    report.seconds = match (first, last) {
        (Some(f), Some(l)) => l.duration_since(f).as_secs_f64(),
        _ => 0.0,
    };
    if report.seconds > 0.0 {
        report.requests_per_s = report.requests as f64 / report.seconds;
    }
    report.latency = all.percentiles();
    report.histogram = all;
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
