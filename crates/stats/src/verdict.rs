//! The one rule that judges a change between two results. `compare` (live and `--results`),
//! `history diff`, `history trend`, the line after a run, the device page and the compare page
//! all call [`judge`], so the same two runs get the same verdict, in the same words, on every
//! surface (the words are `report::change_text`'s).
//!
//! The rule, on the figure's samples of each side (a side is one result):
//!
//! * the change is the ratio of the two means, `pct = 100 · (mean(b) / mean(a) − 1)`;
//! * with at least two independent samples (passes) a side, its [`CONFIDENCE`] interval is the
//!   delta-method interval of that ratio on Welch–Satterthwaite degrees of freedom, and the
//!   verdict is **within noise** when the whole interval lies inside ±[`NOISE_THRESHOLD_PCT`],
//!   **faster**/**slower** when the interval excludes no change and the change itself is beyond
//!   the threshold, else **inconclusive**;
//! * with one pass on a side there is **no interval** ([`Basis::SinglePass`]): faster or slower
//!   only beyond ±[`SINGLE_PASS_FLOOR_PCT`], else inconclusive — never "within noise", which
//!   needs an interval. The seconds of one pass are one pass: they are correlated in time, an
//!   interval built from them would be far too narrow, so they count as one sample (their
//!   mean);
//! * nothing to compare (an empty side, an earlier mean of 0): [`Basis::Undefined`].
//!
//! Why a noise band at all, and why 5 %: a significance test alone calls a steady 1 % shift
//! "slower" once the passes are tight, but the same disk moves more than that between runs
//! (temperature, fill level, the SLC cache, garbage collection, background load). The
//! project's own A/A control — the same binary on both sides, seven rounds interleaved
//! A B A B — spread from 0.955 to 1.026 (`bench/results/ab-windows-port-20261127.txt`): even
//! interleaved passes minutes apart move about ±5 %. So one band serves live comparisons and
//! runs stored months apart alike. The single-pass floor doubles it: one pass carries the
//! pass-to-pass noise as well, and the difference of two single values spreads √2 times as
//! much as either.

use serde::{Deserialize, Serialize};

use crate::infer;

/// Confidence level of every interval of a change.
pub const CONFIDENCE: f64 = 0.95;

/// A change whose whole interval lies within ± this many percent is noise.
pub const NOISE_THRESHOLD_PCT: f64 = 5.0;

/// Without an interval (one pass on a side), a change is called faster or slower only beyond
/// ± this many percent, twice [`NOISE_THRESHOLD_PCT`].
pub const SINGLE_PASS_FLOOR_PCT: f64 = 2.0 * NOISE_THRESHOLD_PCT;

/// What a change means for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Better (higher throughput, lower latency) beyond the threshold, and the interval
    /// excludes no change (or, without an interval, beyond the single-pass floor).
    Faster,
    /// Worse, likewise.
    Slower,
    /// The whole interval lies within ±[`NOISE_THRESHOLD_PCT`].
    WithinNoise,
    /// Neither: too few or too scattered passes to tell. (Results written before this rule
    /// said `no-significant-difference`, which reads back as this.)
    #[serde(alias = "no-significant-difference")]
    Inconclusive,
}

impl Verdict {
    /// The word every surface uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Faster => "faster",
            Self::Slower => "slower",
            Self::WithinNoise => "within noise",
            Self::Inconclusive => "inconclusive",
        }
    }

    /// Every verdict, in the order summaries count them.
    pub const ALL: [Verdict; 4] = [Verdict::Faster, Verdict::Slower, Verdict::WithinNoise, Verdict::Inconclusive];
}

/// What a [`Change`]'s verdict rests on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Basis {
    /// At least two passes a side: a confidence interval from the data.
    Interval,
    /// One pass on a side: no interval (its ends equal the change); judged against
    /// [`SINGLE_PASS_FLOOR_PCT`].
    SinglePass,
    /// No change can be computed: a side has no usable value, or the earlier mean is 0.
    Undefined,
}

impl Basis {
    /// Results written before the basis was stored had an interval.
    pub fn legacy() -> Basis {
        Basis::Interval
    }
}

/// Where a side's values come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// One value per measured pass: independent samples.
    Passes,
    /// The per-second series of a single pass: correlated, so one sample (their mean).
    Seconds,
}

/// One side of a change: a figure's values and where they come from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample<'a> {
    pub values: &'a [f64],
    pub unit: Unit,
}

impl<'a> Sample<'a> {
    pub fn passes(values: &'a [f64]) -> Self {
        Sample { values, unit: Unit::Passes }
    }
    pub fn seconds(values: &'a [f64]) -> Self {
        Sample { values, unit: Unit::Seconds }
    }
}

/// The change of one figure from `a` (the earlier run, or the baseline) to `b`.
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
    /// Independent samples (passes) of `a` and `b` the verdict rests on.
    pub n_a: u32,
    pub n_b: u32,
}

impl Change {
    /// mean(b) / mean(a), the ratio `compare` shows.
    pub fn ratio(&self) -> f64 {
        1.0 + self.pct / 100.0
    }
}

fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

fn mean(xs: &[f64]) -> f64 {
    xs.iter().sum::<f64>() / xs.len() as f64
}

/// The values that count: finite and not negative (no throughput or latency is negative);
/// the seconds of a pass become that pass (their mean).
fn usable(s: Sample<'_>) -> Vec<f64> {
    let v: Vec<f64> = s.values.iter().copied().filter(|x| x.is_finite() && *x >= 0.0).collect();
    match s.unit {
        Unit::Seconds if !v.is_empty() => vec![mean(&v)],
        _ => v,
    }
}

/// THE rule (see the module's documentation): the change of `b` against `a`, with
/// `higher_is_better` false for latency. Never panics and never returns NaN or an infinity.
pub fn judge(a: Sample<'_>, b: Sample<'_>, higher_is_better: bool) -> Change {
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
    let sa = infer::Sample::new(&a, CONFIDENCE);
    let sb = infer::Sample::new(&b, CONFIDENCE);
    if !(sa.mean.is_finite() && sb.mean.is_finite() && sa.mean > 0.0) {
        return undefined;
    }
    let ratio = sb.mean / sa.mean;
    let pct = (ratio - 1.0) * 100.0;
    if !pct.is_finite() {
        return undefined;
    }
    let has_interval = a.len() >= 2 && b.len() >= 2;
    let (lo, hi) = if has_interval {
        let (se_a, se_b) = (sa.se(), sb.se());
        let df = infer::welch_df(se_a * se_a, sa.n, se_b * se_b, sb.n);
        let (lo, hi) = infer::ratio_ci(sa.mean, se_a, sb.mean, se_b, df, CONFIDENCE);
        // The delta method can pass a ratio of 0 on very noisy data: no figure falls below 0.
        ((lo.max(0.0) - 1.0) * 100.0, (hi - 1.0) * 100.0)
    } else {
        (pct, pct)
    };
    if !(lo.is_finite() && hi.is_finite() && lo <= pct + 1e-9 && pct <= hi + 1e-9) {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn p(v: &[f64]) -> Sample<'_> {
        Sample::passes(v)
    }

    #[test]
    fn one_pass_a_side_has_no_interval() {
        let c = judge(p(&[100.0]), p(&[165.5]), true);
        assert_eq!((c.basis, c.verdict, c.n_a, c.n_b), (Basis::SinglePass, Verdict::Faster, 1, 1));
        assert!((c.pct - 65.5).abs() < 1e-9);
        assert_eq!((c.ci_low_pct, c.ci_high_pct), (c.pct, c.pct));
        // Below the floor: inconclusive, never within noise.
        assert_eq!(judge(p(&[100.0]), p(&[108.0]), true).verdict, Verdict::Inconclusive);
        assert_eq!(judge(p(&[100.0]), p(&[100.0]), true).verdict, Verdict::Inconclusive);
        // Three passes against one: still no interval.
        assert_eq!(judge(p(&[100.0, 101.0, 99.0]), p(&[130.0]), true).basis, Basis::SinglePass);
    }

    #[test]
    fn seconds_of_one_pass_are_one_pass() {
        let a = [100.0, 101.0, 99.0, 100.0, 100.0];
        let b = [103.0, 104.0, 102.0, 103.0, 103.0];
        let c = judge(Sample::seconds(&a), Sample::seconds(&b), true);
        assert_eq!((c.basis, c.n_a, c.n_b, c.verdict), (Basis::SinglePass, 1, 1, Verdict::Inconclusive));
        // The same as judging their means.
        assert_eq!(c, judge(p(&[100.0]), p(&[103.0]), true));
    }

    #[test]
    fn interval_rules() {
        let a = [400.0, 405.0, 398.0, 402.0, 401.0];
        let c = judge(p(&a), p(&[480.0, 478.0, 485.0, 482.0, 479.0]), true);
        assert_eq!((c.basis, c.verdict), (Basis::Interval, Verdict::Faster));
        assert!(c.ci_low_pct > 0.0 && c.ci_low_pct < c.pct && c.pct < c.ci_high_pct);
        assert_eq!(judge(p(&a), p(&[480.0, 478.0, 485.0, 482.0, 479.0]), false).verdict, Verdict::Slower);
        assert_eq!(judge(p(&a), p(&[401.0, 402.0, 400.0, 403.0, 399.0]), true).verdict, Verdict::WithinNoise);
        // Scattered: a big point change whose interval spans 0.
        assert_eq!(judge(p(&[100.0, 300.0]), p(&[150.0, 400.0]), true).verdict, Verdict::Inconclusive);
    }

    #[test]
    fn undefined_when_nothing_to_compare() {
        for (a, b) in [(&[][..], &[1.0][..]), (&[0.0][..], &[1.0][..]), (&[f64::NAN][..], &[1.0][..])] {
            let c = judge(p(a), p(b), true);
            assert_eq!((c.basis, c.verdict, c.pct), (Basis::Undefined, Verdict::Inconclusive, 0.0));
        }
    }

    #[test]
    fn old_documents_read_back() {
        let v: Verdict = serde_json::from_str("\"no-significant-difference\"").unwrap_or(Verdict::Faster);
        assert_eq!(v, Verdict::Inconclusive);
        assert_eq!(serde_json::to_string(&Verdict::WithinNoise).unwrap_or_default(), "\"within-noise\"");
    }
}
