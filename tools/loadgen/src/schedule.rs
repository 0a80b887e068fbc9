//! When each request should go out, and what its latency is.
//!
//! Open loop (`--rate`), as wrk2 does: each connection sends at a fixed interval, connections
//! staggered evenly across one interval, so together they offer the rate asked for whatever the
//! server does. A request's latency counts from when it was due, not from when it could be sent:
//! a server that stalls is charged for every request that should have gone out meanwhile (a
//! closed loop, which waits for each response before sending, would record one slow request
//! and call the stall's other would-be requests unsent: coordinated omission).
use std::time::{Duration, Instant};

/// One connection's send times in open loop.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    first: Instant,
    /// The interval in seconds, unrounded: a Duration's whole nanoseconds would drift.
    period: f64,
}

impl Schedule {
    /// Connection `index` of `connections` sharing `rate` requests/s from `start` on.
    pub fn new(start: Instant, rate: f64, connections: usize, index: usize) -> Schedule {
        let period = connections as f64 / rate;
        Schedule { first: start + Duration::from_secs_f64(period * index as f64 / connections as f64), period }
    }

    pub fn interval(&self) -> Duration {
        Duration::from_secs_f64(self.period)
    }

    /// How many of this connection's requests are due before `t`.
    pub fn due_before(&self, t: Instant) -> u64 {
        match t.checked_duration_since(self.first) {
            Some(d) if !d.is_zero() => {
                let k = (d.as_secs_f64() / self.period).ceil() as u64;
                // Rounding at an exact multiple: request k is due at t, not before it.
                if self.due(k.saturating_sub(1)) >= t {
                    k - 1
                } else {
                    k
                }
            }
            _ => 0,
        }
    }

    /// When request `seq` (0, 1, ...) of this connection is due.
    pub fn due(&self, seq: u64) -> Instant {
        // Multiplied out, not accumulated: no drift over millions of requests.
        self.first + Duration::from_secs_f64(self.period * seq as f64)
    }
}

/// Microseconds from `from` (when the request was due, or sent in closed loop) to `done`, the
/// response's arrival; 0 if `done` is earlier (it cannot be, but Instant math must not panic).
pub fn latency_us(from: Instant, done: Instant) -> u64 {
    done.saturating_duration_since(from).as_micros().min(u64::MAX as u128) as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connections_share_the_rate_at_even_spacing() {
        let t0 = Instant::now();
        // 1000 requests/s over 4 connections: each every 4 ms, offset by 1 ms from the next.
        let s: Vec<Schedule> = (0..4).map(|i| Schedule::new(t0, 1000.0, 4, i)).collect();
        for (i, c) in s.iter().enumerate() {
            assert_eq!(c.interval(), Duration::from_millis(4));
            assert_eq!(c.due(0), t0 + Duration::from_millis(i as u64));
            assert_eq!(c.due(250), t0 + Duration::from_millis(1000 + i as u64));
        }
        // Merged, the due times are 1 ms apart: the offered rate is the one asked for.
        let mut all: Vec<Instant> = s.iter().flat_map(|c| (0..100).map(|k| c.due(k))).collect();
        all.sort();
        for w in all.windows(2) {
            let gap = w[1] - w[0];
            assert!(gap >= Duration::from_micros(999) && gap <= Duration::from_micros(1001), "gap {gap:?}");
        }
    }

    #[test]
    fn requests_due_before_a_time() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 1000.0, 4, 1); // due at 1, 5, 9, ... ms
        let ms = |m: u64| t0 + Duration::from_millis(m);
        assert_eq!([s.due_before(t0), s.due_before(ms(1)), s.due_before(ms(2))], [0, 0, 1]);
        assert_eq!([s.due_before(ms(5)), s.due_before(ms(6)), s.due_before(ms(1001))], [1, 2, 250]);
        for k in 0..1000 {
            assert_eq!(s.due_before(s.due(k)), k);
        }
    }

    #[test]
    fn no_drift_after_many_requests() {
        let t0 = Instant::now();
        let s = Schedule::new(t0, 3.0, 1, 0);
        // 1/3 s is not exact in nanoseconds; the millionth request is still due within 1 us of 333333.33 s.
        let want = Duration::from_secs_f64(1_000_000.0 / 3.0);
        let got = s.due(1_000_000) - t0;
        assert!(got.abs_diff(want) < Duration::from_micros(1), "{got:?} vs {want:?}");
    }

    #[test]
    fn a_stall_is_charged_to_every_request_due_during_it() {
        // One connection at 100 requests/s; the server answers nothing for 200 ms from t0, then
        // everything at once. Latency from the due time: the k-th request waited 200 - 10k ms.
        let t0 = Instant::now();
        let s = Schedule::new(t0, 100.0, 1, 0);
        let resumed = t0 + Duration::from_millis(200);
        let lat: Vec<u64> = (0..20).map(|k| latency_us(s.due(k), resumed)).collect();
        assert_eq!(lat[0], 200_000);
        assert_eq!(lat[19], 10_000);
        assert!(lat.windows(2).all(|w| w[0] - w[1] == 10_000));
        // Timed from when each could really be sent (closed loop: right after the stall), the
        // same requests would look instant: that is what the open loop avoids.
        assert_eq!(latency_us(resumed, resumed), 0);
        assert_eq!(latency_us(resumed, t0), 0);
    }
}
