//! Text for the `compare` answer (`doc.compare`): the subjects, then per test, direction
//! and figure each subject's mean with its confidence interval, the ratio to the baseline
//! with its interval, the p-value and the verdict — as human text, Markdown and CSV. Each
//! renderer returns an empty string when the document has no `compare` section.

use stats::{CompareResult, CompareRow, ResultDoc, SampleStats, TestKind, Verdict, Versus};

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

fn ratio(x: f64) -> String {
    format!("{x:.3}")
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

/// `B vs A: 6 faster · 0 slower · 0 no significant difference` per challenger.
fn summaries(c: &CompareResult) -> Vec<String> {
    challengers(c)
        .into_iter()
        .map(|label| {
            let mut n = [0usize; 3];
            for r in &c.rows {
                if let Some(v) = versus(r, label) {
                    n[match v.verdict {
                        Verdict::Faster => 0,
                        Verdict::Slower => 1,
                        Verdict::NoSignificantDifference => 2,
                    }] += 1;
                }
            }
            format!(
                "{label} vs {}: {} {} · {} {} · {} {}",
                c.baseline,
                n[0],
                Verdict::Faster.name(),
                n[1],
                Verdict::Slower.name(),
                n[2],
                Verdict::NoSignificantDifference.name()
            )
        })
        .collect()
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
    match &s.device {
        Some(d) => format!("{}  ({d})", s.source),
        None => s.source.clone(),
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
        format!("ratio ({conf}% CI)"),
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
                        let rt = if ratio_defined(base, s) {
                            format!("×{} ({}–{})", ratio(v.ratio), ratio(v.ratio_ci_low), ratio(v.ratio_ci_high))
                        } else {
                            "n/a".to_string()
                        };
                        cells.extend([rt, p_text(v.p_value), v.verdict.name().to_string()]);
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
        format!("ratio = mean / mean of {} (delta-method interval)", c.baseline),
        format!("p = two-sided {}", test_name(c.test)),
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
        let dev = s.device.as_ref().map(|d| format!(" ({})", md_esc(d))).unwrap_or_default();
        line(&mut out, format!("- **{}:** `{}`{dev}", md_esc(&s.label), s.source.replace('`', "'")));
    }
    line(&mut out, "");
    if c.rows.is_empty() {
        line(&mut out, "No figures to compare.");
        return out;
    }
    let conf = conf_pct(c.confidence);
    let ci = format!("± {conf}% CI");
    let ratio_head = format!("Ratio vs {}", md_esc(&c.baseline));
    let ratio_ci = format!("Ratio {conf}% CI");
    md_table_head(
        &mut out,
        &["Test", "Dir", "Figure", "Subject", "Mean", &ci, "n", &ratio_head, &ratio_ci, "p", "Verdict"],
        &[false, false, false, false, true, true, true, true, true, true, false],
    );
    for r in &c.rows {
        let base = baseline(c, r);
        for s in &r.samples {
            let n = if s.unit == "seconds" { format!("{} s", s.n) } else { s.n.to_string() };
            let half = if s.n >= 2 { value(&r.metric, half_width(s)) } else { "-".to_string() };
            let mean = if s.n == 0 { "-".to_string() } else { value(&r.metric, s.mean) };
            let (rt, rci, p, verdict) = match versus(r, &s.label) {
                Some(v) if ratio_defined(base, s) => (
                    ratio(v.ratio),
                    format!("{}–{}", ratio(v.ratio_ci_low), ratio(v.ratio_ci_high)),
                    p_text(v.p_value),
                    v.verdict.name().to_string(),
                ),
                Some(v) => ("n/a".to_string(), "n/a".to_string(), p_text(v.p_value), v.verdict.name().to_string()),
                None => (String::new(), String::new(), String::new(), "baseline".to_string()),
            };
            line(
                &mut out,
                format!(
                    "| {} | {} | {} | {} | {mean} | {half} | {n} | {rt} | {rci} | {p} | {verdict} |",
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
pub(crate) const CSV_HEADER: [&str; 17] = [
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
                ]),
                None => rec.extend([String::new(), String::new(), String::new(), String::new(), "baseline".into()]),
            }
            records.push(rec);
        }
    }
    csv_text(&CSV_HEADER, &records)
}

#[cfg(test)]
mod tests {
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
}
