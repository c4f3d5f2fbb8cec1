//! Latency histograms: a thin wrapper over an HDR histogram with fixed bounds, so that
//! recording on the engine's hot path never allocates and never fails.

use hdrhistogram::Histogram;

use crate::model::LatSummary;

/// Highest latency tracked: one hour, in nanoseconds. Larger values are clamped.
pub const LAT_MAX_NS: u64 = 3_600_000_000_000;
const SIGFIG: u8 = 3;

/// Fractions at which [`LatHist::cdf`] samples the distribution: dense in the body, then
/// the tail out to 99.999 % and the maximum.
pub const CDF_FRACTIONS: [f64; 30] = [
    0.0, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9,
    0.925, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999, 1.0,
];

/// One point of a latency CDF: the fraction of I/Os completed within `ns`.
#[derive(Debug, Clone, Copy, PartialEq, Default, serde::Serialize, serde::Deserialize)]
pub struct CdfPoint {
    pub fraction: f64,
    pub ns: u64,
}

/// Completion-latency histogram in nanoseconds (1 ns ..= 1 h, 3 significant figures).
#[derive(Debug, Clone)]
pub struct LatHist {
    h: Histogram<u64>,
}

impl Default for LatHist {
    fn default() -> Self {
        Self::new()
    }
}

impl LatHist {
    /// A new, empty histogram. Allocates its whole counts array up front; `record` never
    /// allocates afterwards.
    pub fn new() -> Self {
        // The bounds are constants known to be valid (low >= 1, high >= 2 * low, sigfig <= 5).
        let mut h =
            Histogram::<u64>::new_with_bounds(1, LAT_MAX_NS, SIGFIG).expect("constant histogram bounds are valid");
        h.auto(false);
        Self { h }
    }

    #[inline]
    fn clamp(ns: u64) -> u64 {
        ns.clamp(1, LAT_MAX_NS)
    }

    /// Record one latency. Values are clamped to [1 ns, 1 h]. Never panics or allocates.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        // Cannot fail: the value is within the histogram's bounds.
        let _ = self.h.record(Self::clamp(ns));
    }

    /// Record `count` occurrences of one latency (clamped as in [`LatHist::record`]).
    #[inline]
    pub fn record_n(&mut self, ns: u64, count: u64) {
        let _ = self.h.record_n(Self::clamp(ns), count);
    }

    /// Merge another histogram into this one (exact: same bucket layout).
    pub fn add(&mut self, other: &LatHist) {
        if self.h.add(&other.h).is_err() {
            // Unreachable for two `LatHist`s (identical bounds); fall back to a per-bucket
            // merge that clamps instead of failing.
            for v in other.h.iter_recorded() {
                self.record_n(v.value_iterated_to(), v.count_at_value());
            }
        }
    }

    /// Forget all recorded values (keeps the allocation).
    pub fn reset(&mut self) {
        self.h.reset();
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.h.len()
    }

    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    /// Mean latency in ns (0 when empty).
    pub fn mean(&self) -> f64 {
        self.h.mean()
    }

    /// Population standard deviation in ns (0 when empty).
    pub fn stddev(&self) -> f64 {
        self.h.stdev()
    }

    /// Highest recorded latency (bucket upper edge) in ns; 0 when empty.
    pub fn max(&self) -> u64 {
        if self.h.is_empty() {
            0
        } else {
            self.h.max()
        }
    }

    /// Lowest recorded latency (bucket lower edge) in ns; 0 when empty.
    pub fn min(&self) -> u64 {
        if self.h.is_empty() {
            0
        } else {
            self.h.min()
        }
    }

    /// Latency at quantile `q` in [0, 1] (bucket upper edge); 0 when empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.h.is_empty() {
            0
        } else {
            self.h.value_at_quantile(q.clamp(0.0, 1.0))
        }
    }

    /// Points of the latency CDF at the fixed fractions [`CDF_FRACTIONS`]: `(fraction, ns)`,
    /// empty for an empty histogram. Enough for a smooth CDF on a log axis, small in JSON.
    pub fn cdf(&self) -> Vec<CdfPoint> {
        if self.h.is_empty() {
            return Vec::new();
        }
        CDF_FRACTIONS
            .iter()
            .map(|&f| CdfPoint { fraction: f, ns: if f == 0.0 { self.min() } else { self.quantile(f) } })
            .collect()
    }

    /// The latency summary reported in results; all zero for an empty histogram.
    pub fn summary(&self) -> LatSummary {
        if self.h.is_empty() {
            return LatSummary::default();
        }
        LatSummary {
            min: self.min(),
            mean: self.mean(),
            stddev: self.stddev(),
            p50: self.quantile(0.5),
            p90: self.quantile(0.9),
            p99: self.quantile(0.99),
            p99_9: self.quantile(0.999),
            p99_99: self.quantile(0.9999),
            max: self.max(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs()
    }

    #[test]
    fn empty_summary_is_zero() {
        let h = LatHist::new();
        assert_eq!(h.count(), 0);
        assert_eq!(h.summary(), LatSummary::default());
        assert_eq!(h.max(), 0);
        assert_eq!(h.mean(), 0.0);
    }

    #[test]
    fn methodology_example() {
        // 100 requests at 1 ms plus 9 at 100 ms: median 1 ms, mean ~9.17 ms.
        let mut h = LatHist::new();
        h.record_n(1_000_000, 100);
        for _ in 0..9 {
            h.record(100_000_000);
        }
        let s = h.summary();
        assert_eq!(h.count(), 109);
        assert!(close(s.p50 as f64, 1e6, 1e-3), "p50 {}", s.p50);
        assert!(close(s.mean, 1e9 / 109.0, 1e-3), "mean {}", s.mean);
        assert!(close(s.p99 as f64, 1e8, 1e-3), "p99 {}", s.p99);
        assert!(close(s.max as f64, 1e8, 1e-3), "max {}", s.max);
        assert!(close(s.min as f64, 1e6, 1e-3), "min {}", s.min);
        assert!(s.p90 <= s.p99 && s.p99 <= s.p99_9 && s.p99_9 <= s.p99_99 && s.p99_99 <= s.max);
    }

    #[test]
    fn quantiles_of_uniform_ramp() {
        let mut h = LatHist::new();
        for v in 1..=10_000u64 {
            h.record(v * 1000);
        }
        let s = h.summary();
        assert!(close(s.p50 as f64, 5e6, 2e-3), "p50 {}", s.p50);
        assert!(close(s.p90 as f64, 9e6, 2e-3), "p90 {}", s.p90);
        assert!(close(s.p99 as f64, 9.9e6, 2e-3), "p99 {}", s.p99);
        assert!(close(s.mean, 5.0005e6, 2e-3), "mean {}", s.mean);
        assert!(close(s.stddev, 2.8868e6, 5e-3), "stddev {}", s.stddev);
    }

    #[test]
    fn clamps_out_of_range() {
        let mut h = LatHist::new();
        h.record(0);
        h.record(u64::MAX);
        h.record_n(u64::MAX, 3);
        assert_eq!(h.count(), 5);
        assert_eq!(h.min(), 1);
        assert!(h.max() >= LAT_MAX_NS);
        assert!(close(h.max() as f64, LAT_MAX_NS as f64, 1e-3));
    }

    #[test]
    fn reset_clears() {
        let mut h = LatHist::new();
        h.record(5_000);
        h.reset();
        assert_eq!(h.count(), 0);
        assert_eq!(h.summary(), LatSummary::default());
        h.record(7_000);
        assert_eq!(h.count(), 1);
    }

    #[test]
    fn add_empty_is_identity() {
        let mut a = LatHist::new();
        a.record(1234);
        let before = a.summary();
        a.add(&LatHist::new());
        assert_eq!(a.summary(), before);
        let mut e = LatHist::new();
        e.add(&a);
        assert_eq!(e.summary(), before);
        assert_eq!(e.count(), 1);
    }

    proptest! {
        #[test]
        fn merge_equals_single_histogram(
            workers in proptest::collection::vec(
                proptest::collection::vec(0u64..5_000_000_000_000, 0..200), 1..6)
        ) {
            let mut all = LatHist::new();
            let mut merged = LatHist::new();
            for w in &workers {
                let mut h = LatHist::new();
                for &v in w {
                    h.record(v);
                    all.record(v);
                }
                merged.add(&h);
            }
            prop_assert_eq!(merged.count(), all.count());
            prop_assert_eq!(merged.summary(), all.summary());
            for q in [0.0, 0.1, 0.25, 0.5, 0.75, 0.95, 0.999, 1.0] {
                prop_assert_eq!(merged.quantile(q), all.quantile(q));
            }
        }
    }
}
