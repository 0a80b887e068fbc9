//! Latencies in an HdrHistogram (microseconds, 3 significant digits, up to an hour), merged
//! across connections; percentiles and the `.hgrm` percentile distribution come from it.
use hdrhistogram::Histogram;
use std::io::Write;

/// The longest latency recorded as itself (longer ones are recorded as this).
pub const MAX_US: u64 = 3_600_000_000;
const SIGFIG: u8 = 3;

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Percentiles {
    pub p50: u64,
    pub p90: u64,
    pub p99: u64,
    pub p999: u64,
    pub max: u64,
}

#[derive(Clone, Debug)]
pub struct Latencies(Histogram<u64>);

impl Default for Latencies {
    fn default() -> Latencies {
        Latencies(Histogram::new_with_bounds(1, MAX_US, SIGFIG).expect("histogram bounds"))
    }
}

impl Latencies {
    pub fn record(&mut self, us: u64) {
        self.0.saturating_record(us.clamp(1, MAX_US));
    }

    pub fn merge(&mut self, other: &Latencies) {
        self.0.add(&other.0).expect("same bounds");
    }

    pub fn count(&self) -> u64 {
        self.0.len()
    }

    /// Each percentile is the histogram's value there (equal to the recorded value within 0.1%).
    pub fn percentiles(&self) -> Percentiles {
        if self.0.is_empty() {
            return Percentiles::default();
        }
        let q = |q| self.0.value_at_quantile(q);
        Percentiles { p50: q(0.5), p90: q(0.9), p99: q(0.99), p999: q(0.999), max: self.0.max() }
    }

    /// The percentile distribution in HdrHistogram's text form (`.hgrm`, as its Java
    /// `outputPercentileDistribution` and wrk2 write it), values in milliseconds: the plotters
    /// that read those files read this.
    pub fn write_hgrm<W: Write>(&self, mut w: W) -> std::io::Result<()> {
        let ms = |us: u64| us as f64 / 1000.0;
        writeln!(w, "{:>12} {:>14} {:>10} {:>14}\n", "Value", "Percentile", "TotalCount", "1/(1-Percentile)")?;
        let mut total = 0u64;
        for v in self.0.iter_quantiles(5) {
            total += v.count_since_last_iteration();
            let q = v.quantile_iterated_to();
            if q < 1.0 {
                writeln!(w, "{:12.3} {:2.12} {:10} {:14.2}", ms(v.value_iterated_to()), q, total, 1.0 / (1.0 - q))?;
            } else {
                writeln!(w, "{:12.3} {:2.12} {:10}", ms(v.value_iterated_to()), q, total)?;
            }
        }
        let h = &self.0;
        let (mean, sd) = if h.is_empty() { (0.0, 0.0) } else { (ms(1) * h.mean(), ms(1) * h.stdev()) };
        writeln!(w, "#[Mean    = {:12.3}, StdDeviation   = {:12.3}]", mean, sd)?;
        writeln!(w, "#[Max     = {:12.3}, Total count    = {:12}]", ms(h.max()), h.len())?;
        let sub_buckets = (2 * 10u64.pow(SIGFIG as u32)).next_power_of_two();
        writeln!(w, "#[Buckets = {:12}, SubBuckets     = {:12}]", h.buckets(), sub_buckets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_of_known_values() {
        let mut l = Latencies::default();
        for v in (1..=1000).rev() {
            l.record(v);
        }
        // Below 2048 every microsecond is its own bucket: exact.
        assert_eq!(l.percentiles(), Percentiles { p50: 500, p90: 900, p99: 990, p999: 999, max: 1000 });
        assert_eq!(Latencies::default().percentiles(), Percentiles::default());
        // Above, within 0.1%.
        let mut l = Latencies::default();
        l.record(1_234_567);
        let p = l.percentiles();
        assert!(p.p50.abs_diff(1_234_567) <= 1_235 && p.max == p.p50, "{p:?}");
    }

    #[test]
    fn connections_merge() {
        let (mut a, mut b) = (Latencies::default(), Latencies::default());
        (1..=500).for_each(|v| a.record(v));
        (501..=1000).for_each(|v| b.record(v));
        a.merge(&b);
        assert_eq!((a.count(), a.percentiles().p90), (1000, 900));
    }

    #[test]
    fn hgrm_is_the_distribution() {
        let mut l = Latencies::default();
        for v in 1..=10_000 {
            l.record(v);
        }
        let mut out = Vec::new();
        l.write_hgrm(&mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        let mut lines = text.lines();
        assert!(lines.next().unwrap().split_whitespace().eq(["Value", "Percentile", "TotalCount", "1/(1-Percentile)"]));
        let rows: Vec<Vec<f64>> = lines
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|l| l.split_whitespace().map(|x| x.parse().unwrap()).collect())
            .collect();
        // Values (ms) and counts rise, the last row is the 100th percentile with every count;
        // a value is its bucket's highest (within 0.1%).
        assert!(rows.windows(2).all(|w| w[0][0] <= w[1][0] && w[0][1] <= w[1][1] && w[0][2] <= w[1][2]));
        let last = rows.last().unwrap();
        assert_eq!((last[1], last[2], last.len()), (1.0, 10_000.0, 3));
        assert!((last[0] - 10.0).abs() <= 0.01, "{}", last[0]);
        // The median row: 5 ms at 0.5, and its 1/(1-p) column.
        let median = rows.iter().find(|r| r[1] == 0.5).unwrap();
        assert!((median[0] - 5.0).abs() <= 0.005 && median[2] >= 5000.0 && median[3] == 2.0, "{median:?}");
        assert!(text.contains("Total count    =        10000]"));
    }
}
