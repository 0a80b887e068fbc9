//! The command line: what to run, with every value checked before anything connects.
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

pub const MAX_CONNECTIONS: usize = 128;
pub const MAX_REQUEST_BYTES: usize = 4096;
pub const MAX_DURATION: Duration = Duration::from_secs(3600);
pub const MAX_WARMUP: Duration = Duration::from_secs(600);
pub const MAX_REQUESTS: u64 = 1_000_000_000;

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
    pub request_bytes: usize,
    pub stop: Stop,
    pub warmup: Duration,
    /// A request with no complete response by then kills its connection.
    pub timeout: Duration,
    pub progress: bool,
    pub json: Option<PathBuf>,
    pub csv: Option<PathBuf>,
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
            request_bytes: 64,
            stop: Stop::Duration(Duration::from_secs(10)),
            warmup: Duration::from_secs(1),
            timeout: Duration::from_secs(10),
            progress: true,
            json: None,
            csv: None,
            target: String::new(),
            variant: String::new(),
            harts: String::new(),
        }
    }
}

pub const USAGE: &str = "\
usage: loadgen [options]
  --addr HOST:PORT     the server, on loopback only (default 127.0.0.1:5555)
  --port PORT          shorthand for --addr 127.0.0.1:PORT
  -c, --connections N  concurrent connections, 1..=128 (default 1)
  -s, --size BYTES     request (and response) size, 1..=4096 (default 64)
  -d, --duration SECS  measure this long after the warm-up (default 10; at most 3600)
  -n, --requests N     or: measure this many requests in all
  -w, --warmup SECS    unmeasured warm-up (default 1; at most 600)
  -t, --timeout SECS   a request unanswered this long kills its connection (default 10)
  --json FILE          write the result as JSON (- for stdout)
  --csv FILE           append the result as a CSV row (header written to a new file)
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
    let mut it = args.into_iter();
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--addr" => {
                c.addr = value()?.parse().map_err(|_| "--addr wants HOST:PORT with a numeric host".to_string())?
            }
            "--port" => c.addr = SocketAddr::from(([127, 0, 0, 1], number::<u16>(&value()?)?)),
            "-c" | "--connections" => c.connections = number(&value()?)?,
            "-s" | "--size" => c.request_bytes = number(&value()?)?,
            "-d" | "--duration" => c.stop = Stop::Duration(seconds(&value()?)?),
            "-n" | "--requests" => c.stop = Stop::Requests(number(&value()?)?),
            "-w" | "--warmup" => c.warmup = seconds(&value()?)?,
            "-t" | "--timeout" => c.timeout = seconds(&value()?)?,
            "--json" => c.json = Some(PathBuf::from(value()?)),
            "--csv" => c.csv = Some(PathBuf::from(value()?)),
            "--target" => c.target = value()?,
            "--variant" => c.variant = value()?,
            "--harts" => c.harts = value()?,
            "-q" | "--quiet" => c.progress = false,
            "-h" | "--help" => return Err(USAGE.to_string()),
            _ => return Err(format!("unknown option {a}\n{USAGE}")),
        }
    }
    check(&c)?;
    Ok(c)
}

/// The bounds every run keeps to.
pub fn check(c: &Config) -> Result<(), String> {
    if !c.addr.ip().is_loopback() {
        return Err(format!("{} is not a loopback address: this client only loads the local machine", c.addr.ip()));
    }
    if c.addr.port() == 0 {
        return Err("port 0".into());
    }
    if !(1..=MAX_CONNECTIONS).contains(&c.connections) {
        return Err(format!("connections must be 1..={MAX_CONNECTIONS}"));
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
        assert!(p(&["--addr", "[::1]:7"]).is_ok());
    }

    #[test]
    fn refuses_what_is_out_of_bounds() {
        for bad in [
            &["--addr", "10.0.0.1:80"][..],
            &["--addr", "192.168.1.2:5555"],
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
