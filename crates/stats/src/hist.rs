//! Latency histograms with fixed bounds, so that recording on the engine's hot path never
//! allocates and never fails.
//!
//! The layout and every figure are those of an HDR histogram (hdrhistogram's
//! `Histogram::<u64>::new_with_bounds(1, LAT_MAX_NS, 3)`: 1 ns to 1 h at 3 significant
//! digits; the tests compare them). The counts are kept here rather than in hdrhistogram so
//! that memory follows the latencies seen: the 264 KiB counts array is mapped straight from
//! the kernel (fresh zero pages, given back when the histogram is dropped — the C heap's
//! calloc would clear recycled memory and so write every page), and only the pages where
//! values land are ever written — by recording, merging, and a reset that clears just the
//! counts that are set. A worker's per-second histograms therefore stay a few pages
//! resident, where hdrhistogram's reset and merge-into-empty wrote all 66 pages of every
//! histogram (2 MiB per job, 1.3 GB for a job file of 2000 sections).

use crate::lat::{CdfPoint, LatSummary};

// Its error is exported from the crate root: a re-export here would make `hist` use `codec`,
// which uses `hist`.
pub(crate) mod codec;

/// Highest latency tracked: one hour, in nanoseconds. Larger values are clamped.
pub const LAT_MAX_NS: u64 = 3_600_000_000_000;

/// Sub-buckets per bucket: 2 × 10^3 rounded up to a power of two (3 significant digits).
const SUB_BUCKET_MAG: u32 = 11;
const SUB_HALF_MAG: u32 = SUB_BUCKET_MAG - 1;
const SUB_HALF: usize = 1 << SUB_HALF_MAG;
const SUB_MASK: u64 = (1 << SUB_BUCKET_MAG) - 1;
/// Buckets needed to cover [`LAT_MAX_NS`]: each doubles the range of the previous one.
const BUCKETS: usize = buckets_to_cover(LAT_MAX_NS);
/// Counts in one histogram: the lower half of bucket 0 plus the upper half of every bucket.
pub const LAT_BINS: usize = (BUCKETS + 1) * SUB_HALF;
/// Bytes of one histogram's counts array (its virtual size; see [`LatHist`] for what is
/// resident).
pub const LAT_HIST_BYTES: u64 = (LAT_BINS * std::mem::size_of::<u64>()) as u64;

const fn buckets_to_cover(value: u64) -> usize {
    let mut smallest_untrackable = 1u64 << SUB_BUCKET_MAG;
    let mut n = 1;
    while smallest_untrackable <= value {
        smallest_untrackable <<= 1;
        n += 1;
    }
    n
}

#[inline]
fn bucket_for(v: u64) -> u32 {
    (64 - SUB_BUCKET_MAG) - (v | SUB_MASK).leading_zeros()
}

#[inline]
fn index_for(v: u64) -> usize {
    let b = bucket_for(v);
    (((b as usize) + 1) << SUB_HALF_MAG) + (v >> b) as usize - SUB_HALF
}

/// Lowest value of the bin at `index`.
#[inline]
fn value_for(index: usize) -> u64 {
    let bucket = (index >> SUB_HALF_MAG) as i64 - 1;
    let sub = (index & (SUB_HALF - 1)) + SUB_HALF;
    if bucket < 0 {
        (sub - SUB_HALF) as u64
    } else {
        (sub as u64) << bucket
    }
}

#[inline]
fn lowest_equivalent(v: u64) -> u64 {
    let b = bucket_for(v);
    (v >> b) << b
}

#[inline]
fn equivalent_range(v: u64) -> u64 {
    1 << bucket_for(v)
}

#[inline]
fn highest_equivalent(v: u64) -> u64 {
    lowest_equivalent(v) + equivalent_range(v) - 1
}

#[inline]
fn median_equivalent(v: u64) -> u64 {
    lowest_equivalent(v) + (equivalent_range(v) >> 1)
}

/// Fractions at which [`LatHist::cdf`] samples the distribution: dense in the body, then
/// the tail out to 99.999 % and the maximum.
pub const CDF_FRACTIONS: [f64; 30] = [
    0.0, 0.01, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9,
    0.925, 0.95, 0.975, 0.99, 0.995, 0.999, 0.9995, 0.9999, 0.99999, 1.0,
];

/// A zeroed counts array: anonymous pages from the kernel, so untouched pages cost nothing;
/// the heap if mapping fails (e.g. the map count limit) or the OS has no such mapping.
enum Counts {
    Mapped(platform::mem::ZeroedPages),
    Heap(Box<[u64]>),
}

impl Counts {
    fn new() -> Self {
        match platform::mem::ZeroedPages::new(LAT_BINS) {
            Some(z) => Counts::Mapped(z),
            None => Counts::Heap(vec![0u64; LAT_BINS].into_boxed_slice()),
        }
    }

    #[inline]
    fn as_slice(&self) -> &[u64] {
        match self {
            Counts::Mapped(z) => z.as_slice(),
            Counts::Heap(b) => b,
        }
    }

    #[inline]
    fn as_mut_slice(&mut self) -> &mut [u64] {
        match self {
            Counts::Mapped(z) => z.as_mut_slice(),
            Counts::Heap(b) => b,
        }
    }
}

impl std::ops::Deref for Counts {
    type Target = [u64];
    #[inline]
    fn deref(&self) -> &[u64] {
        self.as_slice()
    }
}

impl std::ops::DerefMut for Counts {
    #[inline]
    fn deref_mut(&mut self) -> &mut [u64] {
        self.as_mut_slice()
    }
}

/// Completion-latency histogram in nanoseconds (1 ns ..= 1 h, 3 significant figures).
///
/// Memory: [`LAT_HIST_BYTES`] (264 KiB) of address space, of which only the pages holding
/// recorded values are resident — a few pages for latencies that span one or two decades.
pub struct LatHist {
    counts: Counts,
    total: u64,
    /// Smallest and largest value recorded (clamped); `u64::MAX` / 0 when nothing was.
    min_v: u64,
    max_v: u64,
}

impl Default for LatHist {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for LatHist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LatHist")
            .field("count", &self.total)
            .field("min", &self.min())
            .field("max", &self.max())
            .finish()
    }
}

impl Clone for LatHist {
    /// Copies only the recorded range, so a clone is as lean as its original.
    fn clone(&self) -> Self {
        let mut c = Self::new();
        c.add_range(self);
        c.total = self.total;
        c.min_v = self.min_v;
        c.max_v = self.max_v;
        c
    }
}

impl LatHist {
    /// A new, empty histogram. Allocates its whole (zeroed) counts array up front; `record`
    /// never allocates afterwards.
    pub fn new() -> Self {
        Self { counts: Counts::new(), total: 0, min_v: u64::MAX, max_v: 0 }
    }

    #[inline]
    fn clamp(ns: u64) -> u64 {
        ns.clamp(1, LAT_MAX_NS)
    }

    /// Indices that may hold counts (empty when nothing was recorded).
    #[inline]
    fn range(&self) -> std::ops::Range<usize> {
        if self.max_v == 0 {
            0..0
        } else {
            index_for(self.min_v)..index_for(self.max_v) + 1
        }
    }

    /// Record one latency. Values are clamped to [1 ns, 1 h]. Never panics or allocates.
    #[inline]
    pub fn record(&mut self, ns: u64) {
        self.record_n(ns, 1);
    }

    /// Record `count` occurrences of one latency (clamped as in [`LatHist::record`]).
    #[inline]
    pub fn record_n(&mut self, ns: u64, count: u64) {
        let v = Self::clamp(ns);
        // In range by the clamp: LAT_BINS covers index_for(LAT_MAX_NS).
        if let Some(c) = self.counts.get_mut(index_for(v)) {
            *c = c.saturating_add(count);
        }
        self.total = self.total.saturating_add(count);
        self.min_v = self.min_v.min(v);
        self.max_v = self.max_v.max(v);
    }

    /// Add `other`'s counts, reading and writing only its recorded range.
    fn add_range(&mut self, other: &LatHist) {
        let r = other.range();
        for (dst, &src) in self.counts[r.clone()].iter_mut().zip(&other.counts[r]) {
            if src != 0 {
                *dst = dst.saturating_add(src);
            }
        }
    }

    /// Merge another histogram into this one (exact: same bucket layout).
    pub fn add(&mut self, other: &LatHist) {
        if other.total == 0 {
            return;
        }
        self.add_range(other);
        self.total = self.total.saturating_add(other.total);
        self.min_v = self.min_v.min(other.min_v);
        self.max_v = self.max_v.max(other.max_v);
    }

    /// Forget all recorded values (keeps the allocation). Only counts that are set are
    /// written, so pages that never held a value stay untouched.
    pub fn reset(&mut self) {
        let r = self.range();
        for c in &mut self.counts[r] {
            if *c != 0 {
                *c = 0;
            }
        }
        self.total = 0;
        self.min_v = u64::MAX;
        self.max_v = 0;
    }

    /// Number of recorded values.
    pub fn count(&self) -> u64 {
        self.total
    }

    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// (bin midpoint, count) of every bin that holds values, lowest first.
    fn recorded(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        let r = self.range();
        let start = r.start;
        self.counts[r]
            .iter()
            .enumerate()
            .filter(|(_, &c)| c != 0)
            .map(move |(i, &c)| (median_equivalent(value_for(start + i)), c))
    }

    /// Mean latency in ns (0 when empty).
    pub fn mean(&self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let n = self.total as f64;
        self.recorded().fold(0.0, |acc, (v, c)| acc + v as f64 * c as f64 / n)
    }

    /// Population standard deviation in ns (0 when empty).
    pub fn stddev(&self) -> f64 {
        if self.total == 0 {
            return 0.0;
        }
        let mean = self.mean();
        let sum = self.recorded().fold(0.0, |acc, (v, c)| {
            let dev = v as f64 - mean;
            acc + (dev * dev) * c as f64
        });
        (sum / self.total as f64).sqrt()
    }

    /// Highest recorded latency (bucket upper edge) in ns; 0 when empty.
    pub fn max(&self) -> u64 {
        if self.total == 0 {
            0
        } else {
            highest_equivalent(self.max_v)
        }
    }

    /// Lowest recorded latency (bucket lower edge) in ns; 0 when empty.
    pub fn min(&self) -> u64 {
        if self.total == 0 {
            0
        } else {
            lowest_equivalent(self.min_v)
        }
    }

    /// Latency at quantile `q` in [0, 1] (bucket upper edge; the lower edge at 0); 0 when
    /// empty.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let q = q.clamp(0.0, 1.0);
        let target = ((q * self.total as f64).ceil() as u64).max(1);
        let r = self.range();
        let mut seen = 0u64;
        for (i, &c) in self.counts[r.clone()].iter().enumerate() {
            seen = seen.saturating_add(c);
            if seen >= target {
                let v = value_for(r.start + i);
                return if q == 0.0 { lowest_equivalent(v) } else { highest_equivalent(v) };
            }
        }
        0
    }

    /// Points of the latency CDF at the fixed fractions [`CDF_FRACTIONS`]: `(fraction, ns)`,
    /// empty for an empty histogram. Enough for a smooth CDF on a log axis, small in JSON.
    pub fn cdf(&self) -> Vec<CdfPoint> {
        if self.is_empty() {
            return Vec::new();
        }
        CDF_FRACTIONS
            .iter()
            .map(|&f| CdfPoint { fraction: f, ns: if f == 0.0 { self.min() } else { self.quantile(f) } })
            .collect()
    }

    /// The latency summary reported in results; all zero for an empty histogram.
    pub fn summary(&self) -> LatSummary {
        if self.is_empty() {
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
    #![allow(clippy::unwrap_used)]
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

    #[test]
    fn layout_is_hdrhistograms() {
        let h = hdrhistogram::Histogram::<u64>::new_with_bounds(1, LAT_MAX_NS, 3).unwrap();
        assert_eq!(h.distinct_values(), LAT_BINS);
        assert_eq!(LAT_BINS, 33_792);
        assert_eq!(LAT_HIST_BYTES, 270_336);
        assert!(index_for(LAT_MAX_NS) < LAT_BINS);
        for v in [1u64, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 1_000_000, 123_456_789, LAT_MAX_NS] {
            assert_eq!(lowest_equivalent(v), h.lowest_equivalent(v), "{v}");
            assert_eq!(highest_equivalent(v), h.highest_equivalent(v), "{v}");
            assert_eq!(median_equivalent(v), h.median_equivalent(v), "{v}");
            assert_eq!(value_for(index_for(v)), h.lowest_equivalent(v), "{v}");
        }
    }

    /// The hdrhistogram configuration LatHist reproduces.
    fn reference() -> hdrhistogram::Histogram<u64> {
        hdrhistogram::Histogram::<u64>::new_with_bounds(1, LAT_MAX_NS, 3).unwrap()
    }

    fn assert_same(ours: &LatHist, hdr: &hdrhistogram::Histogram<u64>) {
        assert_eq!(ours.count(), hdr.len());
        if hdr.is_empty() {
            assert_eq!(ours.summary(), LatSummary::default());
            return;
        }
        assert_eq!(ours.min(), hdr.min());
        assert_eq!(ours.max(), hdr.max());
        assert_eq!(ours.mean().to_bits(), hdr.mean().to_bits(), "mean {} vs {}", ours.mean(), hdr.mean());
        assert_eq!(ours.stddev().to_bits(), hdr.stdev().to_bits());
        for q in CDF_FRACTIONS.iter().copied().chain([0.5, 0.9, 0.99, 0.999, 0.9999]) {
            assert_eq!(ours.quantile(q), hdr.value_at_quantile(q), "q {q}");
        }
    }

    #[test]
    fn heap_fallback_behaves_alike() {
        let mut h = LatHist { counts: Counts::Heap(vec![0; LAT_BINS].into_boxed_slice()), ..LatHist::new() };
        let mut r = reference();
        for v in [1, 2_000, 70_000, LAT_MAX_NS] {
            h.record(v);
            r.record(v).unwrap();
        }
        assert_same(&h, &r);
        assert_same(&h.clone(), &r);
        h.reset();
        assert!(h.is_empty() && h.counts.iter().all(|&c| c == 0));
    }

    #[test]
    fn reset_touches_only_set_counts_and_keeps_figures() {
        let mut h = LatHist::new();
        let mut r = reference();
        for round in 0..3u64 {
            for v in [900, 15_000, 15_001, 250_000 * (round + 1), 3_000_000_000] {
                h.record(v);
                r.record(v).unwrap();
            }
            assert_same(&h, &r);
            h.reset();
            r.reset();
            assert_same(&h, &r);
            assert!(h.counts.iter().all(|&c| c == 0));
        }
    }

    proptest! {
        // Each case builds several 33 792-bin reference histograms: keep the count modest.
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn figures_equal_hdrhistograms(
            parts in proptest::collection::vec(
                proptest::collection::vec((0u64..5_000_000_000_000, 1u64..5), 0..100), 1..5),
            scale in 0u32..40,
        ) {
            // Values spread over every magnitude: scale shifts them down by up to 40 bits.
            let mut merged = LatHist::new();
            let mut hdr_merged = reference();
            for p in &parts {
                let mut h = LatHist::new();
                let mut r = reference();
                for &(v, n) in p {
                    let v = v >> (scale % 40);
                    h.record_n(v, n);
                    r.record_n(v.clamp(1, LAT_MAX_NS), n).unwrap();
                }
                assert_same(&h, &r);
                assert_same(&h.clone(), &r);
                merged.add(&h);
                hdr_merged.add(&r).unwrap();
                assert_same(&merged, &hdr_merged);
            }
        }

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
