//! The result of a run and its outputs: a human summary, JSON, a CSV row.
use crate::config::Config;
use crate::stats::{Latencies, Percentiles};
use std::io::Write;
use std::path::Path;

#[derive(Clone, Debug, Default)]
pub struct Report {
    pub connections: usize,
    pub request_bytes: usize,
    /// Requests/s offered over all connections (open loop), or None (closed loop).
    pub offered_rate: Option<f64>,
    pub pipeline: usize,
    /// Measured requests (after the warm-up), all answered correctly.
    pub requests: u64,
    /// Open loop: measured requests due before the end but never sent (the server fell behind).
    pub unsent: u64,
    /// The measured window, seconds.
    pub seconds: f64,
    pub requests_per_s: f64,
    /// Latency, microseconds: from each request's due time in open loop, its send in closed.
    pub latency: Percentiles,
    /// Every measured latency (the .hgrm output).
    pub histogram: Latencies,
    /// Connections that died (refused, reset, closed, timed out, or a wrong response).
    pub errors: usize,
    pub target: String,
    pub variant: String,
    pub harts: String,
}

pub const CSV_HEADER: &str =
    "target,variant,harts,connections,request_bytes,requests,seconds,requests_per_s,p50_us,p90_us,p99_us,p999_us,max_us,errors,pipeline,offered_rate,unsent";

impl Report {
    pub fn new(c: &Config) -> Report {
        Report {
            connections: c.connections,
            request_bytes: c.request_bytes,
            offered_rate: c.rate,
            pipeline: c.pipeline,
            target: c.target.clone(),
            variant: c.variant.clone(),
            harts: c.harts.clone(),
            ..Report::default()
        }
    }

    /// "closed loop" or "open loop at R/s", with the pipeline depth when above one.
    pub fn mode(&self) -> String {
        let pace = match self.offered_rate {
            Some(r) => format!("open loop at {r} requests/s offered"),
            None => "closed loop".to_string(),
        };
        if self.pipeline > 1 {
            format!("{pace}, {} in flight per connection", self.pipeline)
        } else {
            pace
        }
    }

    pub fn summary(&self) -> String {
        let l = &self.latency;
        format!(
            "{} connections, {} B requests, {}: {} requests in {:.2} s = {:.1} requests/s{}; latency p50 {} us, p90 {} us, p99 {} us, p999 {} us, max {} us; {} dead connections",
            self.connections, self.request_bytes, self.mode(), self.requests, self.seconds, self.requests_per_s,
            if self.unsent > 0 { format!(" ({} due but never sent: the server fell behind)", self.unsent) } else { String::new() },
            l.p50, l.p90, l.p99, l.p999, l.max, self.errors
        )
    }

    fn rate_text(&self) -> String {
        self.offered_rate.map_or(String::new(), |r| format!("{r}"))
    }

    pub fn json(&self) -> String {
        let l = &self.latency;
        format!(
            "{{\"target\": \"{}\", \"variant\": \"{}\", \"harts\": \"{}\", \"connections\": {}, \"request_bytes\": {}, \"requests\": {}, \"seconds\": {:.6}, \"requests_per_s\": {:.3}, \"p50_us\": {}, \"p90_us\": {}, \"p99_us\": {}, \"p999_us\": {}, \"max_us\": {}, \"errors\": {}, \"pipeline\": {}, \"offered_rate\": {}, \"unsent\": {}}}",
            self.target, self.variant, self.harts, self.connections, self.request_bytes, self.requests, self.seconds, self.requests_per_s, l.p50, l.p90, l.p99, l.p999, l.max, self.errors,
            self.pipeline, self.offered_rate.map_or("null".to_string(), |r| format!("{r}")), self.unsent
        )
    }

    pub fn csv_row(&self) -> String {
        let l = &self.latency;
        format!(
            "{},{},{},{},{},{},{:.6},{:.3},{},{},{},{},{},{},{},{},{}",
            self.target,
            self.variant,
            self.harts,
            self.connections,
            self.request_bytes,
            self.requests,
            self.seconds,
            self.requests_per_s,
            l.p50,
            l.p90,
            l.p99,
            l.p999,
            l.max,
            self.errors,
            self.pipeline,
            self.rate_text(),
            self.unsent
        )
    }

    /// Append the row to `path`, with the header first if the file is new or empty.
    pub fn append_csv(&self, path: &Path) -> std::io::Result<()> {
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(path)?;
        if f.metadata()?.len() == 0 {
            writeln!(f, "{CSV_HEADER}")?;
        }
        writeln!(f, "{}", self.csv_row())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_agree() {
        let r = Report {
            connections: 4,
            request_bytes: 64,
            requests: 1000,
            seconds: 2.0,
            requests_per_s: 500.0,
            latency: Percentiles { p50: 1, p90: 2, p99: 3, p999: 4, max: 5 },
            errors: 1,
            pipeline: 1,
            variant: "async".into(),
            ..Report::default()
        };
        assert_eq!(CSV_HEADER.split(',').count(), r.csv_row().split(',').count());
        assert_eq!(r.csv_row(), ",async,,4,64,1000,2.000000,500.000,1,2,3,4,5,1,1,,0");
        assert!(r.json().contains("\"requests_per_s\": 500.000") && r.json().contains("\"p999_us\": 4"));
        assert!(
            r.json().ends_with("\"pipeline\": 1, \"offered_rate\": null, \"unsent\": 0}") && r.mode() == "closed loop"
        );
        let open = Report { offered_rate: Some(2500.0), pipeline: 4, ..r.clone() };
        assert!(
            open.csv_row().ends_with(",1,4,2500,0") && open.json().ends_with("\"offered_rate\": 2500, \"unsent\": 0}")
        );
        assert_eq!(open.mode(), "open loop at 2500 requests/s offered, 4 in flight per connection");
        let dir = std::env::temp_dir().join(format!("loadgen-csv-{}", std::process::id()));
        let _ = std::fs::remove_file(&dir);
        r.append_csv(&dir).unwrap();
        r.append_csv(&dir).unwrap();
        let text = std::fs::read_to_string(&dir).unwrap();
        assert_eq!(text.lines().collect::<Vec<_>>(), vec![CSV_HEADER, &r.csv_row(), &r.csv_row()]);
        std::fs::remove_file(&dir).unwrap();
    }
}
