//! `compare --results A.json B.json …`: compare saved `run`/`mark` result documents test
//! by test, and the row builder shared with the live (interleaved) comparison.
//!
//! For every test and direction three rows are produced: `mb_s` and `iops` (higher is
//! better) and `lat_mean_ns` (lower is better). Each row holds per-subject sample
//! statistics with a Student-t confidence interval and, for every subject after the first
//! (the baseline), the ratio of means with a delta-method interval, the p-value of the
//! chosen test and a verdict.

use std::collections::{BTreeMap, HashMap};

use spec::{DataPattern, Distribution, JobSpec, RwMode};

use crate::compare::{CompareResult, CompareRow, SampleStats, Subject, TestKind, Versus};
use crate::infer;
use crate::model::{DirStats, JobResult, PassResult, ResultDoc, SeriesPoint, SCHEMA};
use crate::verdict::{judge, Basis, Sample, Unit, CONFIDENCE};

/// Why result documents cannot be compared. The sentences are made by the report crate
/// (`report::compare_error`).
#[derive(Debug, Clone, PartialEq)]
pub enum CompareError {
    /// Fewer than 2 subjects: how many there were.
    TooFewSubjects(usize),
    /// Two subjects share this label.
    DuplicateLabel(String),
    /// A document of another schema.
    Schema {
        label: String,
        found: String,
    },
    /// A document of a command other than `run` or `mark`.
    Command {
        label: String,
        command: String,
    },
    Mismatch(Box<WorkloadMismatch>),
    /// Tests not in every document, in order of first appearance.
    MissingTests(Vec<MissingTest>),
    /// The documents contain no tests.
    NoTests,
    /// A confidence level outside (0, 1).
    Confidence(f64),
}

/// A test that some documents lack.
#[derive(Debug, Clone, PartialEq)]
pub struct MissingTest {
    /// The test's name (`name #2` for a repeated name's second occurrence).
    pub test: String,
    /// Labels of the documents without it.
    pub missing_from: Vec<String>,
}

/// A test whose workload differs between two results.
#[derive(Debug, Clone, PartialEq)]
pub struct WorkloadMismatch {
    pub test: String,
    /// The field's value in the first result and in the second.
    pub a_value: WorkloadValue,
    pub b_value: WorkloadValue,
    /// Labels of the two results (the baseline first).
    pub a: String,
    pub b: String,
}

impl WorkloadMismatch {
    /// The spec field that differs (see [`WorkloadValue::field`]).
    pub fn field(&self) -> &'static str {
        self.a_value.field()
    }
}

/// The value of one compared workload field of a [`JobSpec`].
#[derive(Debug, Clone, PartialEq)]
pub enum WorkloadValue {
    Rw(RwMode),
    /// Percent of reads of a mixed mode, as the spec holds it.
    Mix(u8),
    Bs(u64),
    Qd(u32),
    Threads(u32),
    Dist(Distribution),
    Data(DataPattern),
    RateIops(Option<u64>),
    Direct(bool),
}

impl WorkloadValue {
    /// The spec field: `rw`, `mix`, `bs`, `qd`, `threads`, `dist`, `data`, `rate_iops`, `direct`.
    pub fn field(&self) -> &'static str {
        match self {
            WorkloadValue::Rw(_) => "rw",
            WorkloadValue::Mix(_) => "mix",
            WorkloadValue::Bs(_) => "bs",
            WorkloadValue::Qd(_) => "qd",
            WorkloadValue::Threads(_) => "threads",
            WorkloadValue::Dist(_) => "dist",
            WorkloadValue::Data(_) => "data",
            WorkloadValue::RateIops(_) => "rate_iops",
            WorkloadValue::Direct(_) => "direct",
        }
    }
}

/// A direction of a job.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Dir {
    Read,
    Write,
}

impl Dir {
    fn name(self) -> &'static str {
        match self {
            Dir::Read => "read",
            Dir::Write => "write",
        }
    }
    fn of_job(self, r: &JobResult) -> Option<&DirStats> {
        match self {
            Dir::Read => r.read.as_ref(),
            Dir::Write => r.write.as_ref(),
        }
    }
    fn of_pass(self, p: &PassResult) -> Option<&DirStats> {
        match self {
            Dir::Read => p.read.as_ref(),
            Dir::Write => p.write.as_ref(),
        }
    }
    /// (iops, mb_s, lat_mean_ns) of one series point.
    fn of_point(self, s: &SeriesPoint) -> (f64, f64, f64) {
        match self {
            Dir::Read => (s.read_iops, s.read_mb_s, s.read_lat_mean_ns),
            Dir::Write => (s.write_iops, s.write_mb_s, s.write_lat_mean_ns),
        }
    }
    /// The job has figures for this direction (headline or any pass).
    fn present(self, r: &JobResult) -> bool {
        self.of_job(r).is_some() || r.passes.iter().any(|p| self.of_pass(p).is_some())
    }
}

/// A compared figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Metric {
    MbS,
    Iops,
    LatMean,
}

impl Metric {
    const ALL: [Metric; 3] = [Metric::MbS, Metric::Iops, Metric::LatMean];

    fn name(self) -> &'static str {
        match self {
            Metric::MbS => "mb_s",
            Metric::Iops => "iops",
            Metric::LatMean => "lat_mean_ns",
        }
    }
    fn higher_is_better(self) -> bool {
        !matches!(self, Metric::LatMean)
    }
    fn of(self, d: &DirStats) -> f64 {
        match self {
            Metric::MbS => d.mb_s,
            Metric::Iops => d.iops,
            Metric::LatMean => d.lat_ns.mean,
        }
    }
    /// The metric of one series point; `None` for the latency of an interval in which
    /// the direction completed nothing (its mean latency is a placeholder 0).
    fn of_point(self, (iops, mb_s, lat): (f64, f64, f64)) -> Option<f64> {
        match self {
            Metric::MbS => Some(mb_s),
            Metric::Iops => Some(iops),
            Metric::LatMean => (iops > 0.0).then_some(lat),
        }
    }
}

/// Sample unit: one value per measured pass.
pub const UNIT_PASSES: &str = "passes";
/// Sample unit: one value per second of the per-second series of one run.
pub const UNIT_SECONDS: &str = "seconds";

/// The samples of one figure of one job: its per-pass values when it has passes (unit
/// `passes`); else the per-second series of its one run (unit `seconds`, at least two
/// intervals; for latency only intervals that completed I/O in that direction), which the
/// verdict counts as one pass; else the headline value alone (unit `passes`, n = 1); else
/// nothing. Non-finite values are dropped.
fn samples_of(r: &JobResult, dir: Dir, metric: Metric) -> (Vec<f64>, &'static str) {
    let finite = |v: Vec<f64>| v.into_iter().filter(|x| x.is_finite()).collect::<Vec<f64>>();
    let passes: Vec<f64> = r.passes.iter().filter_map(|p| dir.of_pass(p)).map(|d| metric.of(d)).collect();
    if !passes.is_empty() {
        return (finite(passes), UNIT_PASSES);
    }
    let series: Vec<f64> = finite(r.series.iter().filter_map(|s| metric.of_point(dir.of_point(s))).collect());
    if series.len() >= 2 {
        return (series, UNIT_SECONDS);
    }
    match dir.of_job(r) {
        Some(d) => (finite(vec![metric.of(d)]), UNIT_PASSES),
        None => (Vec::new(), UNIT_PASSES),
    }
}

/// The MB/s samples of one direction of a job, as `compare` takes them ([`samples_of`]):
/// what `history` follows, so that its trend and `compare` judge the same values.
pub fn mb_s_samples(r: &JobResult, write: bool) -> (Vec<f64>, &'static str) {
    samples_of(r, if write { Dir::Write } else { Dir::Read }, Metric::MbS)
}

/// Sample statistics of `values` (non-finite values dropped) with a `confidence` interval
/// of the mean. An empty sample has n = 0 and every figure 0.
pub fn sample_stats(label: &str, values: &[f64], unit: &str, confidence: f64) -> SampleStats {
    let values: Vec<f64> = values.iter().copied().filter(|x| x.is_finite()).collect();
    let (mean, stddev, ci_low, ci_high) =
        if values.is_empty() { (0.0, 0.0, 0.0, 0.0) } else { infer::mean_ci(&values, confidence) };
    SampleStats {
        label: label.to_string(),
        n: u32::try_from(values.len()).unwrap_or(u32::MAX),
        mean: finite_or_zero(mean),
        stddev: finite_or_zero(stddev),
        ci_low: finite_or_zero(ci_low),
        ci_high: finite_or_zero(ci_high),
        unit: unit.to_string(),
        values,
    }
}

/// JSON cannot hold NaN or infinities (serde_json writes `null`, which does not read back
/// as a number): figures that cannot be computed are stored as 0.
fn finite_or_zero(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

/// The unit of a sample as the verdict rule reads it: the seconds of one run are one pass.
fn unit_of(unit: &str) -> Unit {
    if unit == UNIT_SECONDS {
        Unit::Seconds
    } else {
        Unit::Passes
    }
}

/// One subject against the baseline for one figure: the change and verdict of the one rule
/// ([`crate::verdict::judge`]) and, beside it, the p-value of `kind` (only with an interval:
/// a single pass a side has none, and neither do the correlated seconds of one run).
///
/// `baseline` and `subject` are `(values, unit)` with unit [`UNIT_PASSES`] or
/// [`UNIT_SECONDS`]. Without a change (an empty side, a baseline mean of 0) the ratio and its
/// interval are stored as 0.
pub fn compare_samples(
    label: &str,
    baseline: (&[f64], &str),
    subject: (&[f64], &str),
    higher_is_better: bool,
    kind: TestKind,
) -> Versus {
    let a = Sample { values: baseline.0, unit: unit_of(baseline.1) };
    let b = Sample { values: subject.0, unit: unit_of(subject.1) };
    let c = judge(a, b, higher_is_better);
    let defined = c.basis != Basis::Undefined;
    let p = match (c.basis, kind) {
        (Basis::Interval, TestKind::Welch) => {
            infer::welch_with(baseline.0, subject.0, CONFIDENCE).map(|w| w.p_two_sided)
        }
        (Basis::Interval, TestKind::MannWhitney) => infer::mann_whitney(baseline.0, subject.0).map(|m| m.p_two_sided),
        _ => None,
    }
    .filter(|p| p.is_finite())
    .map(|p| p.clamp(0.0, 1.0));
    let ratio = |pct: f64| if defined { finite_or_zero(1.0 + pct / 100.0) } else { 0.0 };
    Versus {
        label: label.to_string(),
        ratio: ratio(c.pct),
        ratio_ci_low: ratio(c.ci_low_pct),
        ratio_ci_high: ratio(c.ci_high_pct),
        p_value: p,
        verdict: c.verdict,
        basis: c.basis,
        n_a: c.n_a,
        n_b: c.n_b,
    }
}

/// One row of a comparison from already collected values: `samples` holds
/// `(label, values, unit)` per subject, the baseline first. Used by [`compare_docs`] and
/// by the live interleaved runner. With no samples the row has no statistics.
pub fn build_row(
    test: &str,
    direction: &str,
    metric: &str,
    higher_is_better: bool,
    samples: &[(String, Vec<f64>, &str)],
    test_kind: TestKind,
    confidence: f64,
) -> CompareRow {
    let stats = samples.iter().map(|(label, values, unit)| sample_stats(label, values, unit, confidence)).collect();
    let versus = match samples.split_first() {
        Some(((_, base, base_unit), rest)) => rest
            .iter()
            .map(|(label, values, unit)| {
                compare_samples(label, (base, base_unit), (values, unit), higher_is_better, test_kind)
            })
            .collect(),
        None => Vec::new(),
    };
    CompareRow {
        test: test.to_string(),
        direction: direction.to_string(),
        metric: metric.to_string(),
        higher_is_better,
        samples: stats,
        versus,
    }
}

/// A test's identity across documents: its name and which occurrence of that name it is
/// (job names may repeat in a `run`; the k-th occurrence pairs with the k-th).
type TestKey = (String, usize);

fn display_key((name, k): &TestKey) -> String {
    if *k == 0 {
        name.clone()
    } else {
        format!("{name} #{}", k + 1)
    }
}

fn keyed(doc: &ResultDoc) -> Vec<(TestKey, &JobResult)> {
    let mut seen: HashMap<&str, usize> = HashMap::new();
    doc.results
        .iter()
        .map(|r| {
            let k = seen.entry(r.name.as_str()).or_insert(0);
            let key = (r.name.clone(), *k);
            *k += 1;
            (key, r)
        })
        .collect()
}

fn is_mixed(rw: RwMode) -> bool {
    matches!(rw, RwMode::RandRw | RwMode::ReadWrite)
}

/// The first workload field in which two specs differ: its value in `a` and in `b`.
/// Compared: rw, mix (mixed modes only), bs, qd, threads, dist (random modes only:
/// sequential jobs ignore it), data (it also shapes the preconditioning fill that reads
/// see), rate_iops, direct. Not compared: target, size, offset, runtime, ramp, engine, seed
/// and the like.
pub fn workload_difference(a: &JobSpec, b: &JobSpec) -> Option<(WorkloadValue, WorkloadValue)> {
    use WorkloadValue as V;
    let pair = if a.rw != b.rw {
        (V::Rw(a.rw), V::Rw(b.rw))
    } else if is_mixed(a.rw) && a.mix != b.mix {
        (V::Mix(a.mix), V::Mix(b.mix))
    } else if a.bs != b.bs {
        (V::Bs(a.bs), V::Bs(b.bs))
    } else if a.qd != b.qd {
        (V::Qd(a.qd), V::Qd(b.qd))
    } else if a.threads != b.threads {
        (V::Threads(a.threads), V::Threads(b.threads))
    } else if a.rw.is_random() && a.dist != b.dist {
        (V::Dist(a.dist.clone()), V::Dist(b.dist.clone()))
    } else if a.data != b.data {
        (V::Data(a.data), V::Data(b.data))
    } else if a.rate_iops != b.rate_iops {
        (V::RateIops(a.rate_iops), V::RateIops(b.rate_iops))
    } else if a.direct != b.direct {
        (V::Direct(a.direct), V::Direct(b.direct))
    } else {
        return None;
    };
    Some(pair)
}

/// Compare saved result documents test by test. The first subject is the baseline.
///
/// Checks, in order: at least 2 subjects with distinct labels; `confidence` in (0, 1);
/// every document of this schema and of command `run` or `mark`; the same set of tests in
/// every document (matched by name); the same workload for each test (see the fields in
/// the error). Partial documents and documents with an error are accepted (the caller
/// should warn).
///
/// Rows come in the baseline's test order; per test `read` then `write` (each if any
/// subject has it), per direction `mb_s`, `iops`, `lat_mean_ns`. Samples are per-pass
/// values, else per-second values, else the single headline value.
pub fn compare_docs(
    subjects: &[(Subject, &ResultDoc)],
    test: TestKind,
    confidence: f64,
) -> Result<CompareResult, CompareError> {
    if subjects.len() < 2 {
        return Err(CompareError::TooFewSubjects(subjects.len()));
    }
    for (i, (s, _)) in subjects.iter().enumerate() {
        if subjects[..i].iter().any(|(o, _)| o.label == s.label) {
            return Err(CompareError::DuplicateLabel(s.label.clone()));
        }
    }
    if !(confidence > 0.0 && confidence < 1.0) {
        return Err(CompareError::Confidence(confidence));
    }
    for (s, doc) in subjects {
        if doc.schema != SCHEMA {
            return Err(CompareError::Schema { label: s.label.clone(), found: doc.schema.clone() });
        }
        if doc.command != "run" && doc.command != "mark" {
            return Err(CompareError::Command { label: s.label.clone(), command: doc.command.clone() });
        }
    }

    let keyed: Vec<Vec<(TestKey, &JobResult)>> = subjects.iter().map(|(_, d)| keyed(d)).collect();
    let maps: Vec<HashMap<&TestKey, &JobResult>> =
        keyed.iter().map(|k| k.iter().map(|(key, r)| (key, *r)).collect()).collect();

    // Every test in every document. Order: first appearance, baseline first.
    let mut all: Vec<&TestKey> = Vec::new();
    for k in &keyed {
        for (key, _) in k {
            if !all.contains(&key) {
                all.push(key);
            }
        }
    }
    if all.is_empty() {
        return Err(CompareError::NoTests);
    }
    let mut missing: BTreeMap<usize, Vec<&str>> = BTreeMap::new();
    for (ti, key) in all.iter().enumerate() {
        for ((s, _), m) in subjects.iter().zip(&maps) {
            if !m.contains_key(key) {
                missing.entry(ti).or_default().push(s.label.as_str());
            }
        }
    }
    if !missing.is_empty() {
        let list = missing
            .iter()
            .map(|(&ti, labels)| MissingTest {
                test: display_key(all[ti]),
                missing_from: labels.iter().map(|l| l.to_string()).collect(),
            })
            .collect();
        return Err(CompareError::MissingTests(list));
    }

    let base_label = &subjects[0].0.label;
    let mut rows = Vec::new();
    for (key, base) in &keyed[0] {
        let jobs: Vec<&JobResult> = maps.iter().filter_map(|m| m.get(key).copied()).collect();
        for ((s, _), r) in subjects.iter().zip(&jobs).skip(1) {
            if let Some((a_value, b_value)) = workload_difference(&base.spec, &r.spec) {
                return Err(CompareError::Mismatch(Box::new(WorkloadMismatch {
                    test: display_key(key),
                    a_value,
                    b_value,
                    a: base_label.clone(),
                    b: s.label.clone(),
                })));
            }
        }
        let test_name = display_key(key);
        for dir in [Dir::Read, Dir::Write] {
            if !jobs.iter().any(|r| dir.present(r)) {
                continue;
            }
            for metric in Metric::ALL {
                let samples: Vec<(String, Vec<f64>, &str)> = subjects
                    .iter()
                    .zip(&jobs)
                    .map(|((s, _), r)| {
                        let (values, unit) = samples_of(r, dir, metric);
                        (s.label.clone(), values, unit)
                    })
                    .collect();
                rows.push(build_row(
                    &test_name,
                    dir.name(),
                    metric.name(),
                    metric.higher_is_better(),
                    &samples,
                    test,
                    confidence,
                ));
            }
        }
    }

    Ok(CompareResult {
        test,
        confidence,
        baseline: base_label.clone(),
        subjects: subjects.iter().map(|(s, _)| s.clone()).collect(),
        interleaved: false,
        rows,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compare::Verdict;
    use crate::lat::LatSummary;
    use crate::model::{Aggregate, HostInfo};
    use proptest::prelude::*;

    fn subject(label: &str) -> Subject {
        Subject { label: label.into(), source: format!("{label}.json"), device: None, folder: None }
    }

    fn dir(mb_s: f64, lat_mean: f64, bs: u64) -> DirStats {
        DirStats {
            bound: None,
            ops: 1000,
            bytes: 1000 * bs,
            seconds: 5.0,
            iops: mb_s * 1e6 / bs as f64,
            mb_s,
            mib_s: mb_s * 1e6 / 1_048_576.0,
            lat_ns: LatSummary { mean: lat_mean, ..LatSummary::default() },
            qd_mean: 1.0,
            lat_cdf: Vec::new(),
        }
    }

    fn spec(name: &str, bs: u64) -> JobSpec {
        JobSpec { name: name.into(), rw: RwMode::RandRead, bs, qd: 32, ..JobSpec::default() }
    }

    /// A mark document with one random-read test whose 5 passes run at `mb_s[i]`.
    fn mark_doc(tests: &[(&str, u64, &[f64])]) -> ResultDoc {
        let mut doc = ResultDoc::new("mark", "2025-01-15T10:30:00Z", HostInfo::default());
        for (name, bs, mb_s) in tests {
            let mut r = JobResult::new(spec(name, *bs));
            let passes = mb_s
                .iter()
                .enumerate()
                .map(|(i, &m)| PassResult {
                    pass: i as u32 + 1,
                    read: Some(dir(m, 1e8 / m, *bs)),
                    ..PassResult::default()
                })
                .collect();
            r.set_passes(passes, Aggregate::Max);
            doc.results.push(r);
        }
        doc
    }

    const A: &[f64] = &[400.0, 405.0, 398.0, 402.0, 401.0];
    const B: &[f64] = &[480.0, 478.0, 485.0, 482.0, 479.0];

    fn row<'a>(res: &'a CompareResult, metric: &str) -> &'a CompareRow {
        res.rows.iter().find(|r| r.metric == metric).expect("row present")
    }

    #[test]
    fn clearly_faster() {
        let a = mark_doc(&[("RND4K Q32T1", 4096, A)]);
        let b = mark_doc(&[("RND4K Q32T1", 4096, B)]);
        for kind in [TestKind::Welch, TestKind::MannWhitney] {
            let res = compare_docs(&[(subject("A"), &a), (subject("B"), &b)], kind, 0.95).expect("comparable");
            assert_eq!(res.baseline, "A");
            assert_eq!(res.rows.len(), 3, "read: mb_s, iops, lat_mean_ns");
            let mb = row(&res, "mb_s");
            assert_eq!((mb.test.as_str(), mb.direction.as_str()), ("RND4K Q32T1", "read"));
            assert_eq!(mb.samples[0].n, 5);
            assert_eq!(mb.samples[0].unit, "passes");
            assert!((mb.samples[0].mean - 401.2).abs() < 1e-9);
            let v = &mb.versus[0];
            assert_eq!(v.label, "B");
            assert!((v.ratio - 480.8 / 401.2).abs() < 1e-12);
            assert!(v.ratio_ci_low < v.ratio && v.ratio < v.ratio_ci_high);
            assert!(v.p_value.expect("p") < 0.05);
            assert_eq!(v.verdict, Verdict::Faster, "{kind:?}");
            assert_eq!(row(&res, "iops").versus[0].verdict, Verdict::Faster);
            // Lower latency is better: B's latency is lower, so B is faster there too.
            let lat = row(&res, "lat_mean_ns");
            assert!(!lat.higher_is_better);
            assert!(lat.versus[0].ratio < 1.0);
            assert_eq!(lat.versus[0].verdict, Verdict::Faster);
            // And the other way round.
            let res = compare_docs(&[(subject("B"), &b), (subject("A"), &a)], kind, 0.95).expect("comparable");
            assert!(res.rows.iter().all(|r| r.versus[0].verdict == Verdict::Slower));
        }
        // Mann-Whitney, 5 vs 5 fully separated: exact p = 2/252.
        let res =
            compare_docs(&[(subject("A"), &a), (subject("B"), &b)], TestKind::MannWhitney, 0.95).expect("comparable");
        let p = row(&res, "mb_s").versus[0].p_value.expect("p");
        assert!((p - 2.0 / 252.0).abs() < 1e-12);
    }

    #[test]
    fn identical_is_within_noise() {
        let a = mark_doc(&[("RND4K Q32T1", 4096, A)]);
        for kind in [TestKind::Welch, TestKind::MannWhitney] {
            let res = compare_docs(&[(subject("A"), &a), (subject("B"), &a)], kind, 0.95).expect("comparable");
            for r in &res.rows {
                let v = &r.versus[0];
                assert_eq!(v.verdict, Verdict::WithinNoise);
                assert!((v.ratio - 1.0).abs() < 1e-12);
                assert!((v.p_value.expect("p") - 1.0).abs() < 1e-9);
            }
        }
        // Overlapping noise: within noise too.
        let b = mark_doc(&[("RND4K Q32T1", 4096, &[401.0, 399.0, 404.0, 400.0, 402.0])]);
        let res = compare_docs(&[(subject("A"), &a), (subject("B"), &b)], TestKind::Welch, 0.95).expect("ok");
        assert!(res.rows.iter().all(|r| r.versus[0].verdict == Verdict::WithinNoise));
    }

    #[test]
    fn missing_tests_are_an_error() {
        // The sentence is the report crate's (its `compare_text` tests).
        let empty = ResultDoc::new("run", "x", HostInfo::default());
        let err = compare_docs(&[(subject("A"), &empty), (subject("B"), &empty)], TestKind::Welch, 0.95)
            .expect_err("no tests");
        assert_eq!(err, CompareError::NoTests);
    }

    #[test]
    fn schema_command_and_arguments() {
        let a = mark_doc(&[("RND4K Q32T1", 4096, A)]);
        let mut sla = a.clone();
        sla.command = "sla".into();
        assert!(matches!(
            compare_docs(&[(subject("A"), &a), (subject("S"), &sla)], TestKind::Welch, 0.95),
            Err(CompareError::Command { .. })
        ));
        let mut cmp = a.clone();
        cmp.command = "compare".into();
        assert!(matches!(
            compare_docs(&[(subject("C"), &cmp), (subject("A"), &a)], TestKind::Welch, 0.95),
            Err(CompareError::Command { .. })
        ));
        let mut old = a.clone();
        old.schema = "diskmeter.result.v0".into();
        assert!(matches!(
            compare_docs(&[(subject("A"), &a), (subject("O"), &old)], TestKind::Welch, 0.95),
            Err(CompareError::Schema { .. })
        ));
        assert_eq!(compare_docs(&[(subject("A"), &a)], TestKind::Welch, 0.95), Err(CompareError::TooFewSubjects(1)));
        assert_eq!(
            compare_docs(&[(subject("A"), &a), (subject("A"), &a)], TestKind::Welch, 0.95),
            Err(CompareError::DuplicateLabel("A".into()))
        );
        for c in [0.0, 1.0, f64::NAN, 95.0] {
            assert!(matches!(
                compare_docs(&[(subject("A"), &a), (subject("B"), &a)], TestKind::Welch, c),
                Err(CompareError::Confidence(_))
            ));
        }
        // Partial documents are compared (the caller warns).
        let mut partial = a.clone();
        partial.partial = true;
        assert!(compare_docs(&[(subject("A"), &a), (subject("P"), &partial)], TestKind::Welch, 0.95).is_ok());
    }

    #[test]
    fn samples_fall_back_to_series_then_headline() {
        let mut r = JobResult::new(spec("job", 4096));
        r.read = Some(dir(100.0, 50_000.0, 4096));
        // Headline only.
        assert_eq!(samples_of(&r, Dir::Read, Metric::MbS), (vec![100.0], "passes"));
        assert_eq!(samples_of(&r, Dir::Write, Metric::MbS), (vec![], "passes"));
        // Per-second series; a stalled second counts for throughput, not for latency.
        let pt = |t_s: f64, iops: f64, lat: f64| SeriesPoint {
            t_s,
            read_iops: iops,
            read_mb_s: iops * 4096.0 / 1e6,
            read_lat_mean_ns: lat,
            ..SeriesPoint::default()
        };
        r.series = vec![pt(1.0, 1000.0, 40_000.0), pt(2.0, 0.0, 0.0), pt(3.0, 2000.0, 60_000.0)];
        assert_eq!(samples_of(&r, Dir::Read, Metric::Iops), (vec![1000.0, 0.0, 2000.0], "seconds"));
        assert_eq!(samples_of(&r, Dir::Read, Metric::LatMean), (vec![40_000.0, 60_000.0], "seconds"));
        // One pass: that pass (its seconds are not independent samples). Two passes: the passes.
        r.passes = vec![PassResult { pass: 1, read: Some(dir(90.0, 1.0, 4096)), ..PassResult::default() }];
        assert_eq!(samples_of(&r, Dir::Read, Metric::MbS), (vec![90.0], "passes"));
        r.passes.push(PassResult { pass: 2, read: Some(dir(110.0, 1.0, 4096)), ..PassResult::default() });
        assert_eq!(samples_of(&r, Dir::Read, Metric::MbS), (vec![90.0, 110.0], "passes"));
    }

    #[test]
    fn single_values_have_no_p_value() {
        let mut a = ResultDoc::new("run", "x", HostInfo::default());
        let mut r = JobResult::new(spec("job", 4096));
        r.read = Some(dir(100.0, 50_000.0, 4096));
        a.results.push(r.clone());
        let mut b = a.clone();
        b.results[0].read = Some(dir(200.0, 25_000.0, 4096));
        let res = compare_docs(&[(subject("A"), &a), (subject("B"), &b)], TestKind::Welch, 0.95).expect("ok");
        let v = &row(&res, "mb_s").versus[0];
        assert_eq!((v.ratio, v.ratio_ci_low, v.ratio_ci_high), (2.0, 2.0, 2.0));
        assert_eq!(v.p_value, None);
        assert_eq!((v.verdict, v.basis, v.n_a, v.n_b), (Verdict::Faster, Basis::SinglePass, 1, 1));
        // A zero baseline: the ratio is undefined and stored as 0.
        let mut z = a.clone();
        z.results[0].read = Some(dir(0.0, 0.0, 4096));
        let res = compare_docs(&[(subject("Z"), &z), (subject("B"), &b)], TestKind::Welch, 0.95).expect("ok");
        assert_eq!(row(&res, "mb_s").versus[0].ratio, 0.0);
        let json = serde_json::to_string(&res).expect("serializable");
        let back: CompareResult = serde_json::from_str(&json).expect("round trip");
        assert_eq!(back, res);
    }

    #[test]
    fn build_row_for_live_runner() {
        let samples = vec![
            ("A".to_string(), A.to_vec(), "passes"),
            ("B".to_string(), B.to_vec(), "passes"),
            ("C".to_string(), vec![f64::NAN, 401.0, 400.0], "passes"),
        ];
        let row = build_row("RND4K Q32T1", "read", "mb_s", true, &samples, TestKind::Welch, 0.95);
        assert_eq!(row.samples.len(), 3);
        assert_eq!(row.versus.len(), 2);
        assert_eq!(row.samples[2].n, 2, "NaN dropped");
        assert_eq!(row.versus[0].verdict, Verdict::Faster);
        assert_eq!(row.versus[1].verdict, Verdict::WithinNoise);
        let empty = build_row("t", "read", "iops", true, &[], TestKind::Welch, 0.95);
        assert!(empty.samples.is_empty() && empty.versus.is_empty());
        // The verdict is the one rule's, whatever test gives the p-value beside it.
        let v = compare_samples("B", (A, "passes"), (B, "passes"), true, TestKind::Welch);
        let c = crate::verdict::judge(Sample::passes(A), Sample::passes(B), true);
        assert_eq!((v.verdict, v.basis, v.change()), (c.verdict, c.basis, c));
        assert!(v.p_value.is_some_and(|p| p < 0.05));
        let w = compare_samples("B", (A, "passes"), (B, "passes"), true, TestKind::MannWhitney);
        assert_eq!(w.verdict, v.verdict);
    }

    fn arb_dir() -> impl Strategy<Value = Option<DirStats>> {
        proptest::option::of((0.0f64..5000.0, 0.0f64..1e7).prop_map(|(m, l)| dir(m, l, 4096)))
    }

    fn arb_job() -> impl Strategy<Value = JobResult> {
        (
            0usize..3,
            prop_oneof![Just(4096u64), Just(8192)],
            arb_dir(),
            arb_dir(),
            proptest::collection::vec((arb_dir(), arb_dir()), 0..4),
            proptest::collection::vec((0.0f64..1e5, 0.0f64..1e7), 0..5),
        )
            .prop_map(|(name, bs, read, write, passes, series)| {
                let mut r = JobResult::new(spec(["a", "b", "c"][name], bs));
                r.read = read;
                r.write = write;
                r.passes = passes
                    .into_iter()
                    .enumerate()
                    .map(|(i, (read, write))| PassResult { pass: i as u32 + 1, read, write, ..PassResult::default() })
                    .collect();
                r.series = series
                    .into_iter()
                    .enumerate()
                    .map(|(i, (iops, lat))| SeriesPoint {
                        t_s: i as f64 + 1.0,
                        read_iops: iops,
                        read_mb_s: iops * 4096.0 / 1e6,
                        read_lat_mean_ns: lat,
                        write_iops: iops / 2.0,
                        write_mb_s: iops * 2048.0 / 1e6,
                        write_lat_mean_ns: lat * 2.0,
                        ..SeriesPoint::default()
                    })
                    .collect();
                r
            })
    }

    fn arb_doc() -> impl Strategy<Value = ResultDoc> {
        (prop_oneof![Just("run"), Just("mark"), Just("sla")], proptest::collection::vec(arb_job(), 0..4), any::<bool>())
            .prop_map(|(command, results, partial)| {
                let mut doc = ResultDoc::new(command, "x", HostInfo::default());
                doc.results = results;
                doc.partial = partial;
                doc
            })
    }

    proptest! {
        #[test]
        fn compare_docs_never_panics(
            docs in proptest::collection::vec(arb_doc(), 0..4),
            mw in any::<bool>(),
            confidence in prop_oneof![Just(0.95), Just(0.9), 0.0f64..1.0],
        ) {
            let subjects: Vec<(Subject, &ResultDoc)> =
                docs.iter().enumerate().map(|(i, d)| (subject(&format!("S{i}")), d)).collect();
            let kind = if mw { TestKind::MannWhitney } else { TestKind::Welch };
            if let Ok(res) = compare_docs(&subjects, kind, confidence) {
                for r in &res.rows {
                    prop_assert_eq!(r.samples.len(), subjects.len());
                    prop_assert_eq!(r.versus.len(), subjects.len() - 1);
                    for v in &r.versus {
                        if let Some(p) = v.p_value {
                            prop_assert!((0.0..=1.0).contains(&p));
                        }
                    }
                    for s in &r.samples {
                        prop_assert!(s.ci_low <= s.mean + 1e-9 * s.mean.abs() && s.mean <= s.ci_high + 1e-9 * s.mean.abs());
                    }
                }
                let json = serde_json::to_string(&res).expect("serializable");
                let back: CompareResult = serde_json::from_str(&json).expect("finite figures round-trip");
                prop_assert_eq!(back, res);
            }
        }
    }
}
