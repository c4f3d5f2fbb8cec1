//! Text for the `compare` answer (`doc.compare`): the subjects, then per test, direction
//! and figure each subject's mean with its confidence interval, the ratio to the baseline
//! with its interval, the p-value and the verdict — as human text, Markdown and CSV. Each
//! renderer returns an empty string when the document has no `compare` section.

use stats::compare_docs::{CompareError, WorkloadValue};
use stats::{CompareResult, CompareRow, ResultDoc, SampleStats, TestKind, Verdict, Versus, SCHEMA};

use crate::history_text::change_figure;

use crate::fmt;
use crate::sla_text::{align, csv_text, md_esc, md_table_head, Row};

/// Maximum line width of the human output (as in `human.rs`).
const WIDTH: usize = 100;

fn line(out: &mut String, s: impl AsRef<str>) {
    out.push_str(s.as_ref());
    out.push('\n');
}

// ---------------------------------------------------------------------------------------
// Wording

fn test_name(t: TestKind) -> &'static str {
    match t {
        TestKind::Welch => "Welch's t-test",
        TestKind::MannWhitney => "Mann-Whitney U test",
    }
}

/// `95` for 0.95, `99.9` for 0.999.
fn conf_pct(c: f64) -> String {
    let v = c * 100.0;
    if !v.is_finite() {
        "?".to_string()
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{v:.0}")
    } else {
        format!("{:.1}", v)
    }
}

/// `MB/s`, `IOPS`, `lat mean`; unknown metrics by name.
fn metric_label(metric: &str) -> &str {
    match metric {
        "mb_s" => "MB/s",
        "iops" => "IOPS",
        "lat_mean_ns" => "lat mean",
        m => m,
    }
}

/// A value of `metric` with the figure's formatter (latency with its unit).
fn value(metric: &str, x: f64) -> String {
    match metric {
        "mb_s" => fmt::rate(x),
        "iops" => fmt::iops(x),
        "lat_mean_ns" => fmt::lat(x),
        _ => {
            if x.is_finite() {
                format!("{x:.3}")
            } else {
                "-".to_string()
            }
        }
    }
}

/// Half-width of the confidence interval of the mean.
fn half_width(s: &SampleStats) -> f64 {
    ((s.ci_high - s.ci_low) / 2.0).abs()
}

/// `401.20 ± 3.21`; `-` without values; no ± for a single value.
fn mean_ci(metric: &str, s: &SampleStats) -> String {
    match s.n {
        0 => "-".to_string(),
        1 => value(metric, s.mean),
        _ => format!("{} ± {}", value(metric, s.mean), value(metric, half_width(s))),
    }
}

/// Sample count; seconds of a single run are marked `s`.
fn count(s: &SampleStats) -> String {
    if s.unit == "seconds" {
        format!("{} s", s.n)
    } else {
        s.n.to_string()
    }
}

/// The ratio is meaningful only with values on both sides and a non-zero baseline.
fn ratio_defined(base: Option<&SampleStats>, subject: &SampleStats) -> bool {
    matches!(base, Some(b) if b.n > 0 && b.mean != 0.0) && subject.n > 0
}

/// `<0.001`, `0.034`, `n/a`.
fn p_text(p: Option<f64>) -> String {
    match p {
        Some(p) if p < 0.001 => "<0.001".to_string(),
        Some(p) => format!("{p:.3}"),
        None => "n/a".to_string(),
    }
}

/// The baseline's samples in a row (by label, else the first).
fn baseline<'a>(c: &CompareResult, row: &'a CompareRow) -> Option<&'a SampleStats> {
    row.samples.iter().find(|s| s.label == c.baseline).or(row.samples.first())
}

fn versus<'a>(row: &'a CompareRow, label: &str) -> Option<&'a Versus> {
    row.versus.iter().find(|v| v.label == label)
}

/// Labels of the non-baseline subjects, in subject order.
fn challengers(c: &CompareResult) -> Vec<&str> {
    let mut v: Vec<&str> = c.subjects.iter().map(|s| s.label.as_str()).filter(|l| *l != c.baseline).collect();
    if v.is_empty() {
        // Subjects missing from the document: fall back on the rows.
        for r in &c.rows {
            for x in &r.versus {
                if !v.contains(&x.label.as_str()) {
                    v.push(&x.label);
                }
            }
        }
    }
    v
}

/// `B vs A: 6 faster · 0 slower · 0 within noise · 0 inconclusive` per challenger.
fn summaries(c: &CompareResult) -> Vec<String> {
    challengers(c)
        .into_iter()
        .map(|label| {
            let counts: Vec<String> = Verdict::ALL
                .iter()
                .map(|v| {
                    let n = c.rows.iter().filter(|r| versus(r, label).is_some_and(|x| x.verdict == *v)).count();
                    format!("{n} {}", v.name())
                })
                .collect();
            format!("{label} vs {}: {}", c.baseline, counts.join(" · "))
        })
        .collect()
}

/// The change column: the one wording of a change (`history_text::change_figure`), or `n/a`
/// when the baseline has no figure.
fn change_cell(base: Option<&SampleStats>, s: &SampleStats, v: &Versus) -> String {
    if ratio_defined(base, s) {
        change_figure(&v.change())
    } else {
        "n/a".to_string()
    }
}

fn header_line(c: &CompareResult) -> String {
    let mut s =
        format!("compare: {} · {}% confidence · baseline {}", test_name(c.test), conf_pct(c.confidence), c.baseline);
    if c.interleaved {
        s.push_str(" · passes interleaved");
    }
    s
}

fn subject_source(s: &stats::Subject) -> String {
    let facts: Vec<String> =
        s.folder.iter().map(|f| format!("in the folder {f}")).chain(s.device.iter().cloned()).collect();
    match facts.is_empty() {
        true => s.source.clone(),
        false => format!("{}  ({})", s.source, facts.join("; ")),
    }
}

/// Consecutive rows of the same test and direction.
fn groups(rows: &[CompareRow]) -> Vec<&[CompareRow]> {
    let mut out = Vec::new();
    let mut start = 0;
    for i in 1..=rows.len() {
        if i == rows.len() || rows[i].test != rows[start].test || rows[i].direction != rows[start].direction {
            if i > start {
                out.push(&rows[start..i]);
            }
            start = i;
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// Human

/// The `compare` answer as plain text; empty without `doc.compare`.
pub(crate) fn human(doc: &ResultDoc) -> String {
    let Some(c) = &doc.compare else {
        return String::new();
    };
    let mut out = String::new();
    line(&mut out, header_line(c));
    line(&mut out, "subjects:");
    let subjects: Vec<Row> = c.subjects.iter().map(|s| Row::Cells(vec![s.label.clone(), subject_source(s)])).collect();
    for l in align(&subjects, &[false, false], "  ") {
        line(&mut out, l);
    }
    line(&mut out, "");
    if c.rows.is_empty() {
        line(&mut out, "no figures to compare");
        return out;
    }

    let conf = conf_pct(c.confidence);
    let mut rows = vec![Row::Cells(vec![
        String::new(),
        String::new(),
        format!("mean ± {conf}% CI"),
        "n".to_string(),
        format!("change vs {}", c.baseline),
        "p".to_string(),
        "verdict".to_string(),
    ])];
    let mut seconds = false;
    for g in groups(&c.rows) {
        rows.push(Row::Text(format!("{} · {}", g[0].test, g[0].direction)));
        for r in g {
            let base = baseline(c, r);
            for (i, s) in r.samples.iter().enumerate() {
                seconds |= s.unit == "seconds";
                let figure = if i == 0 { metric_label(&r.metric).to_string() } else { String::new() };
                let mut cells = vec![figure, s.label.clone(), mean_ci(&r.metric, s), count(s)];
                match versus(r, &s.label) {
                    Some(v) => {
                        cells.extend([change_cell(base, s, v), p_text(v.p_value), v.verdict.name().to_string()]);
                    }
                    None => cells.extend([String::new(), String::new(), String::new()]),
                }
                rows.push(Row::Cells(cells));
            }
        }
    }
    for l in align(&rows, &[false, false, true, true, true, true, false], "  ") {
        line(&mut out, l);
    }
    let mut legend = vec![
        format!("mean ± half-width of the {conf}% confidence interval (Student t)"),
        format!("change = mean / mean of {} − 1, with its {conf}% interval (delta method)", c.baseline),
        "no interval with one pass a side".to_string(),
        format!("verdict: within noise when the interval lies within ±{} %", stats::verdict::NOISE_THRESHOLD_PCT),
        format!(
            "faster/slower when it excludes 0 and the change is beyond ±{} % (one pass a side: beyond ±{} %)",
            stats::verdict::NOISE_THRESHOLD_PCT,
            stats::verdict::SINGLE_PASS_FLOOR_PCT
        ),
        "else inconclusive".to_string(),
        format!("p = two-sided {} (for reference)", test_name(c.test)),
        "n = passes per subject".to_string(),
    ];
    if seconds {
        legend.push("n s = seconds of a single run used as samples (correlated: intervals are optimistic)".into());
    }
    legend.push("lat mean: lower is faster".into());
    for l in fmt::wrap("  ", "  ", &legend, " · ", WIDTH) {
        line(&mut out, l);
    }
    for l in fmt::wrap("summary: ", "    ", &summaries(c), "; ", WIDTH) {
        line(&mut out, l);
    }
    out
}

// ---------------------------------------------------------------------------------------
// Markdown

/// The `compare` answer as Markdown; empty without `doc.compare`.
pub(crate) fn markdown(doc: &ResultDoc) -> String {
    let Some(c) = &doc.compare else {
        return String::new();
    };
    let mut out = String::new();
    line(&mut out, "## Comparison");
    line(&mut out, "");
    line(&mut out, format!("- **Test:** {}, {}% confidence", test_name(c.test), conf_pct(c.confidence)));
    line(&mut out, format!("- **Baseline:** {}", md_esc(&c.baseline)));
    if c.interleaved {
        line(&mut out, "- **Passes:** interleaved between the subjects (a live comparison)");
    }
    for s in &c.subjects {
        let facts: Vec<String> =
            s.folder.iter().map(|f| format!("in the folder {f}")).chain(s.device.iter().cloned()).collect();
        let dev = if facts.is_empty() { String::new() } else { format!(" ({})", md_esc(&facts.join("; "))) };
        line(&mut out, format!("- **{}:** `{}`{dev}", md_esc(&s.label), s.source.replace('`', "'")));
    }
    line(&mut out, "");
    if c.rows.is_empty() {
        line(&mut out, "No figures to compare.");
        return out;
    }
    let conf = conf_pct(c.confidence);
    let ci = format!("± {conf}% CI");
    let change_head = format!("Change vs {}", md_esc(&c.baseline));
    md_table_head(
        &mut out,
        &["Test", "Dir", "Figure", "Subject", "Mean", &ci, "n", &change_head, "p", "Verdict"],
        &[false, false, false, false, true, true, true, true, true, false],
    );
    for r in &c.rows {
        let base = baseline(c, r);
        for s in &r.samples {
            let n = if s.unit == "seconds" { format!("{} s", s.n) } else { s.n.to_string() };
            let half = if s.n >= 2 { value(&r.metric, half_width(s)) } else { "-".to_string() };
            let mean = if s.n == 0 { "-".to_string() } else { value(&r.metric, s.mean) };
            let (change, p, verdict) = match versus(r, &s.label) {
                Some(v) => (change_cell(base, s, v), p_text(v.p_value), v.verdict.name().to_string()),
                None => (String::new(), String::new(), "baseline".to_string()),
            };
            line(
                &mut out,
                format!(
                    "| {} | {} | {} | {} | {mean} | {half} | {n} | {change} | {p} | {verdict} |",
                    md_esc(&r.test),
                    md_esc(&r.direction),
                    metric_label(&r.metric),
                    md_esc(&s.label)
                ),
            );
        }
    }
    line(&mut out, "");
    for s in summaries(c) {
        line(&mut out, format!("**Summary:** {}", md_esc(&s)));
        line(&mut out, "");
    }
    if c.rows.iter().any(|r| r.samples.iter().any(|s| s.unit == "seconds")) {
        line(
            &mut out,
            "_n s: seconds of a single run used as samples; they are correlated in time, so the intervals are \
             optimistic._",
        );
    }
    out
}

// ---------------------------------------------------------------------------------------
// CSV

/// Columns of the `compare` CSV: one row per subject per compared figure.
pub(crate) const CSV_HEADER: [&str; 18] = [
    "test",
    "direction",
    "metric",
    "higher_is_better",
    "subject",
    "is_baseline",
    "n",
    "unit",
    "mean",
    "stddev",
    "ci_low",
    "ci_high",
    "ratio",
    "ratio_ci_low",
    "ratio_ci_high",
    "p_value",
    "verdict",
    "basis",
];

/// Every subject of every figure as CSV (header included); empty without `doc.compare`.
/// The baseline's ratio, interval and p-value are empty and its verdict is `baseline`.
pub(crate) fn csv(doc: &ResultDoc) -> String {
    let Some(c) = &doc.compare else {
        return String::new();
    };
    let mut records = Vec::new();
    for r in &c.rows {
        for s in &r.samples {
            let v = versus(r, &s.label);
            let mut rec = vec![
                r.test.clone(),
                r.direction.clone(),
                r.metric.clone(),
                r.higher_is_better.to_string(),
                s.label.clone(),
                v.is_none().to_string(),
                s.n.to_string(),
                s.unit.clone(),
                s.mean.to_string(),
                s.stddev.to_string(),
                s.ci_low.to_string(),
                s.ci_high.to_string(),
            ];
            match v {
                Some(v) => rec.extend([
                    v.ratio.to_string(),
                    v.ratio_ci_low.to_string(),
                    v.ratio_ci_high.to_string(),
                    v.p_value.map(|p| p.to_string()).unwrap_or_default(),
                    v.verdict.name().to_string(),
                    basis_name(v.basis).to_string(),
                ]),
                None => rec.extend([
                    String::new(),
                    String::new(),
                    String::new(),
                    String::new(),
                    "baseline".into(),
                    String::new(),
                ]),
            }
            records.push(rec);
        }
    }
    csv_text(&CSV_HEADER, &records)
}

/// The basis as JSON names it.
fn basis_name(b: stats::verdict::Basis) -> &'static str {
    match b {
        stats::verdict::Basis::Interval => "interval",
        stats::verdict::Basis::SinglePass => "single-pass",
        stats::verdict::Basis::Undefined => "undefined",
    }
}

// ---------------------------------------------------------------------------------------
// Why documents cannot be compared

/// The one-line message of a [`CompareError`] (`compare --results`).
pub fn compare_error(e: &CompareError) -> String {
    match e {
        CompareError::TooFewSubjects(n) => format!("compare needs at least 2 results, got {n}"),
        CompareError::DuplicateLabel(label) => format!("cannot compare: two results are both labelled {label:?}"),
        CompareError::Schema { label, found } => {
            format!("cannot compare {label}: unsupported result schema {found:?} (this diskmeter reads {SCHEMA:?})")
        }
        CompareError::Command { label, command } => {
            format!("cannot compare {label}: compare needs run or mark results, this is a {command:?} result")
        }
        CompareError::Mismatch(m) => format!(
            "cannot compare: test {:?} differs in {} ({} vs {}) between {} and {}",
            m.test,
            m.field(),
            workload_value(&m.a_value),
            workload_value(&m.b_value),
            m.a,
            m.b
        ),
        CompareError::MissingTests(tests) => {
            let list: Vec<String> =
                tests.iter().map(|t| format!("{:?} (missing from {})", t.test, t.missing_from.join(", "))).collect();
            format!("cannot compare: tests not in every result: {}", list.join(", "))
        }
        CompareError::NoTests => "nothing to compare: the results contain no tests".to_string(),
        CompareError::Confidence(c) => format!("confidence must be between 0 and 1 (exclusive), got {c}"),
    }
}

/// A workload field's value as a job's options spell it: `randread`, `70% read`, `4096`,
/// `zipf:1.2`, `compress:50`, `none`, `true`.
fn workload_value(v: &WorkloadValue) -> String {
    match v {
        WorkloadValue::Rw(m) => m.name().to_string(),
        WorkloadValue::Mix(pct) => format!("{pct}% read"),
        WorkloadValue::Bs(n) => n.to_string(),
        WorkloadValue::Qd(n) | WorkloadValue::Threads(n) => n.to_string(),
        WorkloadValue::Dist(d) => fmt::dist(d),
        WorkloadValue::Data(d) => fmt::data_arg(d),
        WorkloadValue::RateIops(r) => r.map_or_else(|| "none".to_string(), |v| v.to_string()),
        WorkloadValue::Direct(b) => b.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use spec::{DataPattern, Distribution, JobSpec, RwMode};
    use stats::compare_docs::{compare_docs, workload_difference, MissingTest};
    use stats::{Aggregate, DirStats, HostInfo, JobResult, PassResult, Subject};

    use super::*;
    use crate::text_fixtures::{compare_doc, compare_live_doc};

    #[test]
    fn human() {
        insta::assert_snapshot!(super::human(&compare_doc()));
    }

    #[test]
    fn human_live() {
        insta::assert_snapshot!(super::human(&compare_live_doc()));
    }

    #[test]
    fn markdown() {
        insta::assert_snapshot!(super::markdown(&compare_doc()));
    }

    #[test]
    fn csv() {
        insta::assert_snapshot!(super::csv(&compare_doc()));
    }

    #[test]
    fn csv_shape() {
        let doc = compare_doc();
        let text = super::csv(&doc);
        let mut r = ::csv::Reader::from_reader(text.as_bytes());
        let headers = r.headers().expect("header").clone();
        assert_eq!(headers.iter().collect::<Vec<_>>(), CSV_HEADER);
        let rows: Vec<_> = r.records().collect::<Result<_, _>>().expect("rows");
        let c = doc.compare.as_ref().expect("compare section");
        assert_eq!(rows.len(), c.rows.iter().map(|r| r.samples.len()).sum::<usize>());
        assert_eq!(&rows[0][16], "baseline");
    }

    #[test]
    fn without_compare_everything_is_empty() {
        let doc = ResultDoc::new("compare", "2025-01-15T10:30:00Z", Default::default());
        assert_eq!(super::human(&doc), "");
        assert_eq!(super::markdown(&doc), "");
        assert_eq!(super::csv(&doc), "");
    }

    #[test]
    fn narrow_and_plain() {
        for doc in [compare_doc(), compare_live_doc()] {
            let text = super::human(&doc);
            assert!(text.ends_with('\n'));
            assert!(!text.contains('\x1b'));
            for l in text.lines() {
                assert!(l.chars().count() <= WIDTH, "line too wide: {l}");
                assert_eq!(l, l.trim_end(), "trailing space: {l:?}");
            }
        }
    }

    #[test]
    fn degenerate_docs_do_not_panic() {
        let mut doc = compare_doc();
        if let Some(c) = doc.compare.as_mut() {
            c.subjects.clear();
            c.confidence = f64::NAN;
            for r in &mut c.rows {
                r.samples.truncate(1);
            }
        }
        for text in [super::human(&doc), super::markdown(&doc), super::csv(&doc)] {
            assert!(!text.is_empty());
        }
        if let Some(c) = doc.compare.as_mut() {
            c.rows.clear();
        }
        assert!(super::human(&doc).contains("no figures to compare"));
    }

    #[test]
    fn wording() {
        assert_eq!(conf_pct(0.95), "95");
        assert_eq!(conf_pct(0.9), "90");
        assert_eq!(conf_pct(0.999), "99.9");
        assert_eq!(p_text(Some(0.0004)), "<0.001");
        assert_eq!(p_text(Some(0.0342)), "0.034");
        assert_eq!(p_text(None), "n/a");
    }

    // Why documents cannot be compared (the numbers: `stats::compare_docs`).

    fn subject(label: &str) -> Subject {
        Subject { label: label.into(), source: format!("{label}.json"), device: None, folder: None }
    }

    fn spec(name: &str, bs: u64) -> JobSpec {
        JobSpec { name: name.into(), rw: RwMode::RandRead, bs, qd: 32, ..JobSpec::default() }
    }

    /// A mark document with one random-read test per entry whose passes run at `mb_s[i]`.
    fn mark_doc(tests: &[(&str, u64, &[f64])]) -> ResultDoc {
        let mut doc = ResultDoc::new("mark", "2025-01-15T10:30:00Z", HostInfo::default());
        for (name, bs, mb_s) in tests {
            let mut r = JobResult::new(spec(name, *bs));
            let passes = mb_s
                .iter()
                .enumerate()
                .map(|(i, &m)| {
                    let d = DirStats { mb_s: m, bytes: 1000 * bs, ops: 1000, seconds: 5.0, ..DirStats::default() };
                    PassResult { pass: i as u32 + 1, read: Some(d), ..PassResult::default() }
                })
                .collect();
            r.set_passes(passes, Aggregate::Max);
            doc.results.push(r);
        }
        doc
    }

    const A: &[f64] = &[400.0, 405.0, 398.0, 402.0, 401.0];
    const B: &[f64] = &[480.0, 478.0, 485.0, 482.0, 479.0];

    /// The first differing workload field and its two values, as the message spells them.
    fn difference(a: &JobSpec, b: &JobSpec) -> Option<(&'static str, String, String)> {
        workload_difference(a, b).map(|(x, y)| (x.field(), workload_value(&x), workload_value(&y)))
    }

    #[test]
    fn different_block_size_is_an_error() {
        let a = mark_doc(&[("RND4K Q32T1", 4096, A)]);
        let b = mark_doc(&[("RND4K Q32T1", 8192, B)]);
        let err =
            compare_docs(&[(subject("A"), &a), (subject("B"), &b)], TestKind::Welch, 0.95).expect_err("different bs");
        assert_eq!(
            compare_error(&err),
            r#"cannot compare: test "RND4K Q32T1" differs in bs (4096 vs 8192) between A and B"#
        );
    }

    #[test]
    fn workload_fields() {
        let base = spec("t", 4096);
        let diff = |f: fn(&mut JobSpec)| {
            let mut b = base.clone();
            f(&mut b);
            difference(&base, &b).map(|(field, a, b)| format!("{field} {a} {b}"))
        };
        assert_eq!(diff(|s| s.rw = RwMode::Read).as_deref(), Some("rw randread read"));
        assert_eq!(diff(|s| s.qd = 1).as_deref(), Some("qd 32 1"));
        assert_eq!(diff(|s| s.threads = 4).as_deref(), Some("threads 1 4"));
        assert_eq!(diff(|s| s.dist = Distribution::Zipf { theta: 1.2 }).as_deref(), Some("dist uniform zipf:1.2"));
        assert_eq!(diff(|s| s.data = DataPattern::Zeros).as_deref(), Some("data random zeros"));
        assert_eq!(diff(|s| s.rate_iops = Some(1000)).as_deref(), Some("rate_iops none 1000"));
        assert_eq!(diff(|s| s.direct = false).as_deref(), Some("direct true false"));
        // Not workload: ignored.
        assert_eq!(diff(|s| s.mix = 50), None, "mix of a non-mixed mode");
        assert_eq!(diff(|s| s.size = Some(1 << 30)), None);
        assert_eq!(diff(|s| s.engine = spec::EngineKind::Psync), None);
        assert_eq!(diff(|s| s.seed = 1), None);
        assert_eq!(diff(|s| s.runtime = std::time::Duration::from_secs(60)), None);
        assert_eq!(diff(|s| s.target = Some("/dev/sdb".into())), None);
        let mut seq = base.clone();
        seq.rw = RwMode::Read;
        let mut seq2 = seq.clone();
        seq2.dist = Distribution::Pareto { h: 0.3 };
        assert_eq!(workload_difference(&seq, &seq2), None, "dist of a sequential mode");
        let mut m1 = base.clone();
        m1.rw = RwMode::RandRw;
        let mut m2 = m1.clone();
        m2.mix = 50;
        assert_eq!(difference(&m1, &m2), Some(("mix", "70% read".to_string(), "50% read".to_string())));
    }

    #[test]
    fn missing_tests_are_an_error() {
        let a = mark_doc(&[("SEQ1M Q8T1", 4096, A), ("RND4K Q32T1", 4096, A)]);
        let b = mark_doc(&[("RND4K Q32T1", 4096, B), ("RND4K Q1T1", 4096, B)]);
        let err = compare_docs(&[(subject("A"), &a), (subject("B"), &b)], TestKind::Welch, 0.95)
            .expect_err("different tests");
        assert_eq!(
            compare_error(&err),
            r#"cannot compare: tests not in every result: "SEQ1M Q8T1" (missing from B), "RND4K Q1T1" (missing from A)"#
        );
    }

    #[test]
    fn schema_and_command_messages() {
        let a = mark_doc(&[("RND4K Q32T1", 4096, A)]);
        let mut sla = a.clone();
        sla.command = "sla".into();
        let err = compare_docs(&[(subject("A"), &a), (subject("S"), &sla)], TestKind::Welch, 0.95).expect_err("sla");
        assert_eq!(
            compare_error(&err),
            r#"cannot compare S: compare needs run or mark results, this is a "sla" result"#
        );
        let mut old = a.clone();
        old.schema = "diskmeter.result.v0".into();
        let err = compare_docs(&[(subject("A"), &a), (subject("O"), &old)], TestKind::Welch, 0.95).expect_err("schema");
        assert!(compare_error(&err).starts_with("cannot compare O: unsupported result schema \"diskmeter.result.v0\""));
        let missing =
            CompareError::MissingTests(vec![MissingTest { test: "x".into(), missing_from: vec!["B".into()] }]);
        for e in [err, CompareError::NoTests, missing] {
            assert!(!compare_error(&e).contains('\n'));
        }
    }
}
