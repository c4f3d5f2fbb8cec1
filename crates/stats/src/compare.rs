//! The `compare` result: per test, per subject sample statistics with 95 % confidence
//! intervals, ratios to the baseline and a verdict from a significance test.

use serde::{Deserialize, Serialize};

/// Which test decides the verdicts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TestKind {
    /// Welch's unequal-variance t-test (default; works from 2 samples per side).
    Welch,
    /// Mann-Whitney U (rank-based; needs ≥ 4 samples per side for p < 0.05).
    MannWhitney,
}

impl TestKind {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "welch" | "t" | "t-test" => Self::Welch,
            "mann-whitney" | "mw" | "u" | "wilcoxon" => Self::MannWhitney,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Welch => "welch",
            Self::MannWhitney => "mann-whitney",
        }
    }
}

/// What a comparison concluded: the one verdict of [`crate::verdict`] (faster, slower, within
/// noise, inconclusive), as every other surface says it.
pub use crate::verdict::Verdict;

/// One compared subject (a target measured now, or a saved result file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Subject {
    /// Short label used in tables (`A`, `B`, … or the file stem).
    pub label: String,
    /// The target path or the result file it came from.
    pub source: String,
    /// Device / model facts, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    /// The folder named as this target: `source` is the test file diskmeter made in it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub folder: Option<String>,
}

/// The whole `compare` answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareResult {
    pub test: TestKind,
    /// Confidence level of intervals and tests (0.95).
    pub confidence: f64,
    /// Label of the subject every other one is compared with (the first).
    pub baseline: String,
    pub subjects: Vec<Subject>,
    /// Passes were interleaved A B A B … (a live comparison), not read from files.
    pub interleaved: bool,
    pub rows: Vec<CompareRow>,
}

/// One figure of one test, across subjects.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    /// Test name (`RND4K Q32T1`, a job name).
    pub test: String,
    /// `read` or `write`.
    pub direction: String,
    /// `mb_s`, `iops` or `lat_mean_ns`.
    pub metric: String,
    /// False for latency: lower is better, so "faster" means a lower value.
    pub higher_is_better: bool,
    /// One per subject, in subject order.
    pub samples: Vec<SampleStats>,
    /// One per non-baseline subject, in subject order.
    pub versus: Vec<Versus>,
}

/// Sample statistics of one figure for one subject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SampleStats {
    pub label: String,
    pub n: u32,
    pub mean: f64,
    /// Sample standard deviation (n − 1).
    pub stddev: f64,
    /// Confidence interval of the mean (Student t); equal to the mean when n < 2.
    pub ci_low: f64,
    pub ci_high: f64,
    /// Where the samples came from: `passes` or `seconds` (per-second series of one run).
    pub unit: String,
    pub values: Vec<f64>,
}

/// A subject against the baseline for one row: [`crate::verdict::judge`]'s change (as a ratio)
/// and the chosen test's p-value beside it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Versus {
    pub label: String,
    /// mean(subject) / mean(baseline).
    pub ratio: f64,
    /// Confidence interval of the ratio (delta method); both equal `ratio` when `basis` is not
    /// `interval` (a single pass on a side has no interval).
    pub ratio_ci_low: f64,
    pub ratio_ci_high: f64,
    /// Two-sided p-value of the chosen test; `None` without an interval (a single pass a side).
    pub p_value: Option<f64>,
    /// The one rule's verdict (`crate::verdict`).
    pub verdict: Verdict,
    /// What the verdict rests on: `interval`, `single-pass` or `undefined`.
    #[serde(default = "crate::verdict::Basis::legacy")]
    pub basis: crate::verdict::Basis,
    /// Independent samples (passes) of the baseline and of this subject.
    #[serde(default)]
    pub n_a: u32,
    #[serde(default)]
    pub n_b: u32,
}

impl Versus {
    /// The change this row states, in the form every surface words ([`crate::verdict::Change`]).
    pub fn change(&self) -> crate::verdict::Change {
        let pct = |r: f64| if r.is_finite() { (r - 1.0) * 100.0 } else { 0.0 };
        crate::verdict::Change {
            pct: pct(self.ratio),
            ci_low_pct: pct(self.ratio_ci_low),
            ci_high_pct: pct(self.ratio_ci_high),
            verdict: self.verdict,
            basis: self.basis,
            n_a: self.n_a,
            n_b: self.n_b,
        }
    }
}
