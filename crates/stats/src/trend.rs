//! `history trend` and the "vs last run" line: how one card cell or job changed between
//! stored runs, with a 95 % confidence interval and a verdict that allows for run-to-run
//! noise.
//!
//! Pure: the inputs are plain per-pass figures, oldest run first; the caller picks them out
//! of stored documents (the per-pass values, never the `max` headline of a `mark` cell,
//! which is the best pass and would be biased upwards).
//!
//! The change and its verdict are the one rule of [`crate::verdict`], the same that `compare`,
//! `history diff` and the web pages use, so every surface says the same of the same two runs.
//!
//! Why the mean and not the median: a pass is itself the average of thousands of I/Os over
//! seconds, so per-pass figures are close to normal and rarely hold outliers; with the 3 to 5
//! passes a card has, the median throws away most of the information (no distribution-free
//! 95 % interval of a median exists below 6 values: for 5 it is min…max at 93.75 %), and the
//! mean is what `compare` tests. Each timeline point still shows the median and the range of
//! its passes, which need no assumption.

use serde::{Deserialize, Serialize};

use crate::verdict::{judge, Sample};
pub use crate::verdict::{Basis, Change, Verdict, CONFIDENCE, NOISE_THRESHOLD_PCT, SINGLE_PASS_FLOOR_PCT};

/// The passes that count: finite and not negative.
fn usable(xs: &[f64]) -> Vec<f64> {
    xs.iter().copied().filter(|x| x.is_finite() && *x >= 0.0).collect()
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The change of `b` against `a`, both per-pass figures (`a` the earlier run): the one rule,
/// [`crate::verdict::judge`].
pub fn change(a: &[f64], b: &[f64], higher_is_better: bool) -> Change {
    judge(Sample::passes(a), Sample::passes(b), higher_is_better)
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
    use crate::compare::TestKind;
    use crate::compare_docs::compare_samples;

    #[test]
    fn agrees_with_compare() {
        let a = [400.0, 405.0, 398.0, 402.0, 401.0];
        let b = [480.0, 478.0, 485.0, 482.0, 479.0];
        let v = compare_samples("B", (&a, "passes"), (&b, "passes"), true, TestKind::Welch);
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
