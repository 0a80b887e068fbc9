//! The command line: what to run, with every value checked before anything connects.
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

pub const MAX_CONNECTIONS: usize = 128;
pub const MAX_REQUEST_BYTES: usize = 4096;
pub const MAX_DURATION: Duration = Duration::from_secs(3600);
pub const MAX_WARMUP: Duration = Duration::from_secs(600);
pub const MAX_REQUESTS: u64 = 1_000_000_000;
pub const MAX_PIPELINE: usize = 64;
/// Requests per second over all connections, at most (one every microsecond).
pub const MAX_RATE: f64 = 1_000_000.0;

/// When the measurement ends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Stop {
    /// This long after the warm-up.
    Duration(Duration),
    /// After this many measured requests, over all connections.
    Requests(u64),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    pub addr: SocketAddr,
    pub connections: usize,
    /// Open loop: requests per second over all connections, each connection sending at fixed
    /// intervals whatever the responses do; latency counts from the intended send time.
    /// None: closed loop (a request goes out when a response frees its slot).
    pub rate: Option<f64>,
    /// Requests in flight per connection, at most.
    pub pipeline: usize,
    pub request_bytes: usize,
    pub stop: Stop,
    pub warmup: Duration,
    /// A request with no complete response by then kills its connection.
    pub timeout: Duration,
    pub progress: bool,
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
    /// The latency histogram's percentile distribution, HdrHistogram's `.hgrm` text.
    pub hgrm: Option<PathBuf>,
    /// Free-form columns of the CSV row (benchmark sweeps): target, variant, harts.
    pub target: String,
    pub variant: String,
    pub harts: String,
}

impl Default for Config {
    fn default() -> Config {
        Config {
            addr: SocketAddr::from(([127, 0, 0, 1], 5555)),
            connections: 1,
            rate: None,
            pipeline: 1,
            request_bytes: 64,
            stop: Stop::Duration(Duration::from_secs(10)),
            warmup: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
            progress: true,
            json: None,
            csv: None,
            hgrm: None,
            target: String::new(),
            variant: String::new(),
            harts: String::new(),
        }
    }
}

pub const USAGE: &str = "\
usage: loadgen [options]
  --host HOST          the server's name or address (default 127.0.0.1)
  --port PORT          its port (default 5555)
  --addr HOST:PORT     both at once
  -c, --connections N  concurrent connections, 1..=128 (default 1)
  -R, --rate R         open loop: R requests/s over all connections, sent on a fixed schedule,
                       latency timed from each request's scheduled send (default: closed loop)
  -p, --pipeline N     requests in flight per connection, 1..=64 (default 1)
  -s, --size BYTES     request (and response) size, 1..=4096 (default 64)
  -d, --duration SECS  measure this long after the warm-up (default 10; at most 3600)
  -n, --requests N     or: measure this many requests in all
  -w, --warmup SECS    unmeasured warm-up (default 1; at most 600)
  -t, --timeout SECS   a request unanswered this long kills its connection (default 10)
  --json FILE          write the result as JSON (- for stdout)
  --csv FILE           append the result as a CSV row (header written to a new file)
  --hgrm FILE          write the latency percentile distribution (HdrHistogram .hgrm, milliseconds)
  --target T --variant V --harts H   labels for the CSV row
  -q, --quiet          no live progress line";

fn seconds(v: &str) -> Result<Duration, String> {
    let s: f64 = v.parse().map_err(|_| format!("not a number of seconds: {v}"))?;
    if !s.is_finite() || s < 0.0 {
        return Err(format!("not a number of seconds: {v}"));
    }
    Ok(Duration::from_secs_f64(s))
}

fn number<T: std::str::FromStr>(v: &str) -> Result<T, String> {
    v.parse().map_err(|_| format!("not a number: {v}"))
}

/// Parse the arguments after the program name.
pub fn parse<I: IntoIterator<Item = String>>(args: I) -> Result<Config, String> {
    let mut c = Config::default();
    let (mut host, mut port) = (c.addr.ip().to_string(), c.addr.port());
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--addr" => {
                let v = value()?;
                let (h, p) = v.rsplit_once(':').ok_or_else(|| format!("--addr wants HOST:PORT, not {v}"))?;
                (host, port) = (h.trim_start_matches('[').trim_end_matches(']').to_string(), number(p)?);
            }
            "--host" => host = value()?,
            "--port" => port = number(&value()?)?,
            "-c" | "--connections" => c.connections = number(&value()?)?,
            "-R" | "--rate" => c.rate = Some(number(&value()?)?),
            "-p" | "--pipeline" => c.pipeline = number(&value()?)?,
            "-s" | "--size" => c.request_bytes = number(&value()?)?,
            "-d" | "--duration" => c.stop = Stop::Duration(seconds(&value()?)?),
            "-n" | "--requests" => c.stop = Stop::Requests(number(&value()?)?),
            "-w" | "--warmup" => c.warmup = seconds(&value()?)?,
            "-t" | "--timeout" => c.timeout = seconds(&value()?)?,
            "--json" => c.json = Some(PathBuf::from(value()?)),
            "--csv" => c.csv = Some(PathBuf::from(value()?)),
            "--hgrm" => c.hgrm = Some(PathBuf::from(value()?)),
            "--target" => c.target = value()?,
            "--variant" => c.variant = value()?,
            "--harts" => c.harts = value()?,
            "-q" | "--quiet" => c.progress = false,
            "-h" | "--help" => return Err(USAGE.to_string()),
            _ => return Err(format!("unknown option {a}\n{USAGE}")),
        }
    }
    c.addr = resolve(&host, port)?;
    check(&c)?;
    Ok(c)
}

/// The first address `host` resolves to (a literal address resolves to itself).
pub fn resolve(host: &str, port: u16) -> Result<SocketAddr, String> {
    (host, port)
        .to_socket_addrs()
        .map_err(|e| format!("{host}: {e}"))?
        .next()
        .ok_or_else(|| format!("{host}: no address"))
}

/// The bounds every run keeps to.
pub fn check(c: &Config) -> Result<(), String> {
    if c.addr.port() == 0 {
        return Err("port 0".into());
    }
    if !(1..=MAX_CONNECTIONS).contains(&c.connections) {
        return Err(format!("connections must be 1..={MAX_CONNECTIONS}"));
    }
    if !(1..=MAX_PIPELINE).contains(&c.pipeline) {
        return Err(format!("pipeline must be 1..={MAX_PIPELINE}"));
    }
    if let Some(r) = c.rate {
        if !(r.is_finite() && r > 0.0 && r <= MAX_RATE) {
            return Err(format!("rate must be above 0 and at most {MAX_RATE} requests/s"));
        }
    }
    if !(1..=MAX_REQUEST_BYTES).contains(&c.request_bytes) {
        return Err(format!("request size must be 1..={MAX_REQUEST_BYTES} bytes"));
    }
    match c.stop {
        Stop::Duration(d) if d.is_zero() || d > MAX_DURATION => {
            return Err("duration must be above 0 and at most 3600 s".into())
        }
        Stop::Requests(n) if n == 0 || n > MAX_REQUESTS => return Err(format!("requests must be 1..={MAX_REQUESTS}")),
        _ => {}
    }
    if c.warmup > MAX_WARMUP {
        return Err("warm-up must be at most 600 s".into());
    }
    if c.timeout.is_zero() || c.timeout > MAX_DURATION {
        return Err("timeout must be above 0 and at most 3600 s".into());
    }
    for (name, v) in [("target", &c.target), ("variant", &c.variant), ("harts", &c.harts)] {
        if v.contains([',', '"', '\n']) {
            return Err(format!("--{name} must not contain commas, quotes or newlines"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(args: &[&str]) -> Result<Config, String> {
        parse(args.iter().map(|s| s.to_string()))
    }

    #[test]
    fn defaults_and_options() {
        assert_eq!(p(&[]).unwrap(), Config::default());
        let c = p(&[
            "--port",
            "6000",
            "-c",
            "128",
            "-s",
            "1",
            "-n",
            "500",
            "-w",
            "0",
            "--csv",
            "x.csv",
            "--variant",
            "async",
            "-q",
        ])
        .unwrap();
        assert_eq!(c.addr, SocketAddr::from(([127, 0, 0, 1], 6000)));
        assert_eq!((c.connections, c.request_bytes, c.stop), (128, 1, Stop::Requests(500)));
        assert_eq!((c.warmup, c.progress, c.variant.as_str()), (Duration::ZERO, false, "async"));
        assert_eq!(p(&["-d", "2.5"]).unwrap().stop, Stop::Duration(Duration::from_millis(2500)));
        assert_eq!(p(&["--addr", "[::1]:7"]).unwrap().addr, "[::1]:7".parse().unwrap());
        // Any address, by number or name; the port stays whatever the order.
        assert_eq!(p(&["--port", "6001", "--host", "10.0.0.1"]).unwrap().addr, "10.0.0.1:6001".parse().unwrap());
        assert_eq!(p(&["--addr", "192.168.1.2:80"]).unwrap().addr, "192.168.1.2:80".parse().unwrap());
        assert!(p(&["--host", "localhost"]).unwrap().addr.ip().is_loopback());
        let c = p(&["-R", "2500.5", "-p", "8"]).unwrap();
        assert_eq!((c.rate, c.pipeline), (Some(2500.5), 8));
        assert_eq!((Config::default().rate, Config::default().pipeline), (None, 1));
    }

    #[test]
    fn refuses_what_is_out_of_bounds() {
        for bad in [
            &["--addr", "127.0.0.1:0"][..],
            &["--addr", "127.0.0.1"],
            &["-R", "0"],
            &["-R", "-5"],
            &["-R", "nan"],
            &["-R", "2000000"],
            &["-p", "0"],
            &["-p", "65"],
            &["-c", "0"],
            &["-c", "129"],
            &["-s", "0"],
            &["-s", "4097"],
            &["-d", "0"],
            &["-d", "3601"],
            &["-d", "-1"],
            &["-n", "0"],
            &["-w", "601"],
            &["-t", "0"],
            &["--variant", "a,b"],
            &["--bogus"],
            &["-c"],
            &["-c", "many"],
        ] {
            assert!(p(bad).is_err(), "{bad:?} accepted");
        }
    }
}
