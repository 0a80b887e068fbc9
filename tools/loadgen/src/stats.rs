//! Latency percentiles: every measured latency is kept (microseconds, 4 bytes each: a million
//! requests cost 4 MB), so the percentiles are exact (nearest rank), not bucketed.

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Percentiles {
    pub p50: u32,
    pub p90: u32,
    pub p99: u32,
    pub p999: u32,
    pub max: u32,
}

/// The value at quantile `q` (0..=1) of sorted `v`, by nearest rank; 0 for no values.
pub fn quantile(v: &[u32], q: f64) -> u32 {
    if v.is_empty() {
        return 0;
    }
    let rank = (q * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Percentiles of `v` (sorted here).
pub fn percentiles(v: &mut [u32]) -> Percentiles {
    v.sort_unstable();
    Percentiles {
        p50: quantile(v, 0.50),
        p90: quantile(v, 0.90),
        p99: quantile(v, 0.99),
        p999: quantile(v, 0.999),
        max: v.last().copied().unwrap_or(0),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let mut v: Vec<u32> = (1..=1000).rev().collect();
        let p = percentiles(&mut v);
        assert_eq!(p, Percentiles { p50: 500, p90: 900, p99: 990, p999: 999, max: 1000 });
        assert_eq!(quantile(&[7], 0.999), 7);
        assert_eq!(percentiles(&mut []), Percentiles::default());
        // Ten values: p99 and p999 are the largest.
        let mut v: Vec<u32> = (1..=10).collect();
        let p = percentiles(&mut v);
        assert_eq!((p.p50, p.p90, p.p99, p.p999), (5, 9, 10, 10));
    }
}
