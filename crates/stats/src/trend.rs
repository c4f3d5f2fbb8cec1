//! `history trend` and the "vs last run" line: how one card cell or job changed between
//! stored runs, with a 95 % confidence interval and a verdict that allows for run-to-run
//! noise.
//!
//! Pure: the inputs are plain per-pass figures, oldest run first; the caller picks them out
//! of stored documents (the per-pass values, never the `max` headline of a `mark` cell,
//! which is the best pass and would be biased upwards).
//!
//! The interval is `compare`'s own: the ratio of the two means with a delta-method interval
//! on Welch–Satterthwaite degrees of freedom ([`compare_samples`]), so `history trend`,
//! `history diff` and `compare --results` give the same figures for the same two runs. What
//! this module adds is the noise threshold ([`NOISE_THRESHOLD_PCT`]): runs stored days apart
//! are not interleaved as a live `compare` is, and a difference can be statistically certain
//! yet smaller than what the same disk does from one day to the next.
//!
//! Why the mean and not the median: a pass is itself the average of thousands of I/Os over
//! seconds, so per-pass figures are close to normal and rarely hold outliers; with the 3 to 5
//! passes a card has, the median throws away most of the information (no distribution-free
//! 95 % interval of a median exists below 6 values: for 5 it is min…max at 93.75 %), and the
//! mean is what `compare` tests. Each timeline point still shows the median and the range of
//! its passes, which need no assumption.

use serde::{Deserialize, Serialize};

use crate::compare::TestKind;
use crate::compare_docs::compare_samples;

/// Confidence level of every interval here, as in `compare`.
pub const CONFIDENCE: f64 = 0.95;

/// A change smaller than this, in percent either way, is run-to-run noise.
///
/// * `compare` itself has no such threshold: its verdict is significance alone (Welch,
///   p < 0.05), which is right for A/B passes interleaved within minutes. Runs stored days or
///   months apart are not interleaved: temperature, fill level, the state of an SLC cache and
///   of garbage collection, background load and the kernel all move between them, and the
///   per-pass interval measures none of that. With tight passes an interval alone would call
///   a 1 % shift "slower".
/// * The project's own A/A control (the same binary on both sides, 7 interleaved rounds,
///   `bench/results/ab-windows-port-20261127.txt`) gave ratios 1.015, 1.014, 1.026 and
///   0.955: "the noise of this harness on this machine is about ±5 %". `bench/README.md`
///   expects two tools on one real device to agree "within a few percent".
/// * The issue's own example of the "vs last run" line calls −3.1 % within noise.
/// * 5 % is the bar the rest of diskmeter uses for a change worth acting on: `sla` stops
///   climbing when a step gains under 5 % and calls thrashing at 5 % fewer IOPS.
///
/// criterion's default (2 %) is for CPU micro-benchmarks; disks are noisier.
pub const NOISE_THRESHOLD_PCT: f64 = 5.0;

/// With a single pass on either side there is no spread to build an interval from; such a
/// change is called faster or slower only beyond this, twice [`NOISE_THRESHOLD_PCT`], and
/// is otherwise inconclusive (never "within noise", which needs an interval).
///
/// Why twice: one pass carries the pass-to-pass noise on top of the run-to-run noise that
/// the threshold covers, and the difference of two single values spreads √2 times as much
/// as either; without an estimate of that spread the bar is set well clear of it. A
/// `mark --quick` card has one pass per cell, so this is the rule for it.
pub const SINGLE_PASS_FLOOR_PCT: f64 = 2.0 * NOISE_THRESHOLD_PCT;

pub use crate::model::TrendVerdict as Verdict;

/// What a [`Change`]'s verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// At least two passes a side: a confidence interval from the data.
    Interval,
    /// One pass on a side: no interval (it equals the point change); judged against
    /// [`SINGLE_PASS_FLOOR_PCT`].
    SinglePass,
    /// No change can be computed: a side has no usable pass, or the earlier mean is 0.
    Undefined,
}

/// The change of one figure from run `a` (earlier) to run `b` (later).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Change {
    /// 100 · (mean(b) / mean(a) − 1). Positive means a higher figure: better for IOPS and
    /// MB/s, worse for latency. 0 when `basis` is `Undefined`.
    pub pct: f64,
    /// The [`CONFIDENCE`] interval of `pct`; both equal `pct` without an interval.
    /// Always `ci_low_pct ≤ pct ≤ ci_high_pct`, never below −100.
    pub ci_low_pct: f64,
    pub ci_high_pct: f64,
    pub verdict: Verdict,
    pub basis: Basis,
    /// Usable passes of `a` and `b` (finite and not negative).
    pub n_a: u32,
    pub n_b: u32,
}

/// The passes that count: finite and not negative (no throughput or latency is negative,
/// and `compare` likewise drops non-finite values).
fn usable(xs: &[f64]) -> Vec<f64> {
    xs.iter().copied().filter(|x| x.is_finite() && *x >= 0.0).collect()
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The change of `b` against `a` (per-pass figures of two runs, `a` the earlier), with
/// `higher_is_better` false for latency.
///
/// * Point: the ratio of means, and its interval from `compare`'s [`compare_samples`]
///   (Welch's test), when each side has at least two passes; the interval's low end is
///   clamped at a ratio of 0 (−100 %), which the delta method can pass on very noisy data.
/// * Verdict with an interval: `WithinNoise` when it lies wholly within
///   ±[`NOISE_THRESHOLD_PCT`]; `Faster`/`Slower` when it excludes 0 and the point change is
///   beyond the threshold; otherwise `Inconclusive`.
/// * One pass on a side: `Faster`/`Slower` beyond [`SINGLE_PASS_FLOOR_PCT`], otherwise
///   `Inconclusive`.
/// * A side without usable passes, or an earlier mean of 0: `Undefined`, `Inconclusive`.
///
/// Never panics and never returns NaN or an infinity.
pub fn change(a: &[f64], b: &[f64], higher_is_better: bool) -> Change {
    let (a, b) = (usable(a), usable(b));
    let (n_a, n_b) = (count(a.len()), count(b.len()));
    let undefined = Change {
        pct: 0.0,
        ci_low_pct: 0.0,
        ci_high_pct: 0.0,
        verdict: Verdict::Inconclusive,
        basis: Basis::Undefined,
        n_a,
        n_b,
    };
    if a.is_empty() || b.is_empty() {
        return undefined;
    }
    let (mean_a, mean_b) = (mean(&a), mean(&b));
    if !(mean_a.is_finite() && mean_b.is_finite() && mean_a > 0.0) {
        return undefined;
    }
    let v = compare_samples("", &a, &b, higher_is_better, TestKind::Welch, CONFIDENCE);
    // compare stores figures it cannot compute as 0; an interval that does not hold the
    // ratio is one of those (only with absurdly large values).
    let consistent = v.ratio_ci_low <= v.ratio && v.ratio <= v.ratio_ci_high;
    let pct = (v.ratio - 1.0) * 100.0;
    if !pct.is_finite() || !consistent {
        return undefined;
    }
    let has_interval = a.len() >= 2 && b.len() >= 2;
    let (lo, hi) = if has_interval {
        ((v.ratio_ci_low.max(0.0) - 1.0) * 100.0, (v.ratio_ci_high - 1.0) * 100.0)
    } else {
        (pct, pct)
    };
    if !(lo.is_finite() && hi.is_finite()) {
        return undefined;
    }
    let better = if higher_is_better { pct > 0.0 } else { pct < 0.0 };
    let direction = if better { Verdict::Faster } else { Verdict::Slower };
    let t = NOISE_THRESHOLD_PCT;
    let (verdict, basis) = if has_interval {
        let verdict = if lo >= -t && hi <= t {
            Verdict::WithinNoise
        } else if (lo > 0.0 || hi < 0.0) && pct.abs() > t {
            direction
        } else {
            Verdict::Inconclusive
        };
        (verdict, Basis::Interval)
    } else {
        let verdict = if pct.abs() > SINGLE_PASS_FLOOR_PCT { direction } else { Verdict::Inconclusive };
        (verdict, Basis::SinglePass)
    };
    Change { pct, ci_low_pct: lo.min(pct), ci_high_pct: hi.max(pct), verdict, basis, n_a, n_b }
}

/// One stored run of a cell or job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Run {
    /// When the run started, as stored (RFC 3339).
    pub started_at: String,
    /// The figure of each measured pass.
    pub samples: Vec<f64>,
}

/// One cell or job (`RND4K Q1T1 read`, MB/s) across runs of one device and one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Series {
    /// False for latency.
    pub higher_is_better: bool,
    /// Oldest first.
    pub runs: Vec<Run>,
}

/// One run on the timeline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Point {
    pub started_at: String,
    /// Median of the run's passes.
    pub median: f64,
    /// Lowest and highest pass: the range the chart draws around the median.
    pub low: f64,
    pub high: f64,
    /// Mean of the passes (what the changes compare).
    pub mean: f64,
    /// Usable passes.
    pub n: u32,
}

/// The timeline of a [`Series`] and its changes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Trend {
    /// One per run with at least one usable pass, oldest first; runs without are left out
    /// of the timeline and of both changes.
    pub points: Vec<Point>,
    /// The newest run against the first; `None` with fewer than two points.
    pub since_first: Option<Change>,
    /// The newest run against the one before it; `None` with fewer than two points.
    pub since_last: Option<Change>,
    /// `started_at` of the first, the one before the newest, and the newest point.
    pub first_at: Option<String>,
    pub previous_at: Option<String>,
    pub last_at: Option<String>,
}

fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        // Halfway without adding (two values near f64::MAX would overflow).
        let (lo, hi) = (sorted[n / 2 - 1], sorted[n / 2]);
        lo + (hi - lo) / 2.0
    }
}

fn point(started_at: &str, samples: &[f64]) -> Point {
    let mut sorted = samples.to_vec();
    sorted.sort_by(f64::total_cmp);
    let m = mean(&sorted);
    Point {
        started_at: started_at.to_string(),
        median: median(&sorted),
        low: sorted[0],
        high: sorted[sorted.len() - 1],
        // A sum of huge values can overflow; the chart then shows the median.
        mean: if m.is_finite() { m } else { median(&sorted) },
        n: count(sorted.len()),
    }
}

/// The timeline and the changes since the first and since the previous run.
pub fn trend(series: &Series) -> Trend {
    let runs: Vec<(&str, Vec<f64>)> = series
        .runs
        .iter()
        .map(|r| (r.started_at.as_str(), usable(&r.samples)))
        .filter(|(_, s)| !s.is_empty())
        .collect();
    let points = runs.iter().map(|(at, s)| point(at, s)).collect();
    let hib = series.higher_is_better;
    let (since_first, since_last, previous_at) = match (runs.first(), runs.len().checked_sub(2).map(|i| &runs[i..])) {
        (Some(first), Some([prev, last])) => {
            (Some(change(&first.1, &last.1, hib)), Some(change(&prev.1, &last.1, hib)), Some(prev.0.to_string()))
        }
        _ => (None, None, None),
    };
    Trend {
        points,
        since_first,
        since_last,
        first_at: runs.first().map(|r| r.0.to_string()),
        previous_at,
        last_at: runs.last().map(|r| r.0.to_string()),
    }
}

/// `history trend DEVICE`: a timeline per card cell or job and direction of one device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceTrend {
    /// The device as asked for.
    pub device: String,
    /// The figure followed (`mb_s`: per-pass MB/s).
    pub metric: String,
    /// A change whose interval lies within ±this is noise ([`NOISE_THRESHOLD_PCT`]).
    pub threshold_pct: f64,
    pub cells: Vec<CellTrend>,
}

/// One job (a card cell) in one direction, over the runs of one workload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellTrend {
    pub job: String,
    pub direction: String,
    /// The command that measured it (`mark`, `run`, …).
    pub command: String,
    /// The comparability key its runs share.
    pub key: String,
    /// The runs' ids in the history, oldest first (one per point).
    pub run_ids: Vec<i64>,
    pub trend: Trend,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_compare() {
        let a = [400.0, 405.0, 398.0, 402.0, 401.0];
        let b = [480.0, 478.0, 485.0, 482.0, 479.0];
        let v = compare_samples("B", &a, &b, true, TestKind::Welch, CONFIDENCE);
        let c = change(&a, &b, true);
        assert!((c.pct - (v.ratio - 1.0) * 100.0).abs() < 1e-12);
        assert!((c.ci_low_pct - (v.ratio_ci_low - 1.0) * 100.0).abs() < 1e-12);
        assert!((c.ci_high_pct - (v.ratio_ci_high - 1.0) * 100.0).abs() < 1e-12);
        assert_eq!(c.verdict, Verdict::Faster);
        assert_eq!((c.n_a, c.n_b, c.basis), (5, 5, Basis::Interval));
    }

    #[test]
    fn timeline_points_skip_empty_runs() {
        let run = |at: &str, s: &[f64]| Run { started_at: at.to_string(), samples: s.to_vec() };
        let s = Series {
            higher_is_better: true,
            runs: vec![run("d1", &[3.0, 1.0, 2.0]), run("d2", &[]), run("d3", &[4.0, 1.0, 2.0, 3.0])],
        };
        let t = trend(&s);
        assert_eq!(t.points.len(), 2);
        assert_eq!((t.points[0].median, t.points[0].low, t.points[0].high, t.points[0].n), (2.0, 1.0, 3.0, 3));
        assert_eq!((t.points[1].median, t.points[1].mean), (2.5, 2.5));
        assert_eq!(t.previous_at.as_deref(), Some("d1"));
        assert_eq!(t.since_first, t.since_last);
    }
}
