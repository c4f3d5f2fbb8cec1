//! Text for the `sla` answer (`doc.sla`): the bound, the verdict, the best point, every
//! measured point, the knee, thrashing and the search time — as human text, Markdown and
//! CSV. Each renderer returns an empty string when the document has no `sla` section.

use stats::{LatSummary, Percentile, ResultDoc, SlaPoint, SlaResult};

use crate::fmt;

/// Maximum line width of the human output (as in `human.rs`).
const WIDTH: usize = 100;

// ---------------------------------------------------------------------------------------
// The answer in one sentence (`sla.verdict`, made when the search ends)

/// What the `sla` answer sentence is made of.
#[derive(Debug, Clone, Copy)]
pub struct SlaAnswer<'a> {
    /// The target as the sentence names it (a path, or "the null engine").
    pub what: &'a str,
    /// The bound, ns.
    pub bound_ns: f64,
    pub percentile: Percentile,
    /// The highest-IOPS feasible point.
    pub best: Option<&'a SlaPoint>,
    pub knee: Option<&'a SlaPoint>,
    /// The first point measured (QD 1): the answer when no point meets the bound.
    pub first: Option<&'a SlaPoint>,
    /// Why the climb ended on the best worker count: `bound`, `plateau`, `max-qd`.
    pub limit: Option<&'a str>,
}

/// One plain-language sentence with the `sla` answer.
pub fn sla_verdict(a: &SlaAnswer) -> String {
    let what = a.what;
    let bound = fmt::lat_sentence(a.bound_ns);
    let stat = a.percentile.label();
    if let Some(b) = a.best {
        let how = match b.rate_iops {
            Some(r) => format!("an offered rate of {r} IOPS"),
            None if b.threads > 1 => {
                format!("{} I/Os outstanding (QD {} x {} workers)", b.outstanding, b.qd, b.threads)
            }
            None => format!("{} I/O{} outstanding", b.outstanding, if b.outstanding == 1 { "" } else { "s" }),
        };
        let mut s = format!(
            "{what} sustains {:.0} IOPS ({:.1} MB/s) at {stat} {} ≤ {bound} with {how}",
            b.iops,
            b.mb_s,
            fmt::lat_sentence(b.metric_ns)
        );
        match a.limit {
            Some("bound") => s.push_str("; beyond that latency climbs past the bound"),
            Some("plateau") => s.push_str("; more outstanding I/O adds latency, not throughput"),
            Some("max-qd") => s.push_str("; the bound was not reached within --max-qd, so the device may give more"),
            _ => {}
        }
        if let Some(k) = a.knee {
            if k.outstanding < b.outstanding || k.rate_iops < b.rate_iops {
                s.push_str(&format!(
                    " (knee at {} outstanding: {:.0} IOPS, {stat} {}; past it latency grows faster than throughput)",
                    k.outstanding,
                    k.iops,
                    fmt::lat_sentence(k.metric_ns)
                ));
            }
        }
        s.push('.');
        s
    } else if let Some(p) = a.first {
        format!(
            "even QD 1 misses the bound: {stat} {} > {bound} at {:.0} IOPS ({:.1} MB/s) with one I/O outstanding.",
            fmt::lat_sentence(p.metric_ns),
            p.iops,
            p.mb_s
        )
    } else {
        "no point was measured.".to_string()
    }
}

// ---------------------------------------------------------------------------------------
// Helpers shared with `compare_text`

fn line(out: &mut String, s: impl AsRef<str>) {
    out.push_str(s.as_ref());
    out.push('\n');
}

/// Escape text for a Markdown table cell or list item.
pub(crate) fn md_esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace('\n', " ")
}

/// A Markdown table header; column `i` is right-aligned when `right[i]`, else left.
pub(crate) fn md_table_head(out: &mut String, cols: &[&str], right: &[bool]) {
    line(out, format!("| {} |", cols.join(" | ")));
    let aligns: Vec<&str> =
        (0..cols.len()).map(|i| if right.get(i).copied().unwrap_or(false) { "---:" } else { "---" }).collect();
    line(out, format!("| {} |", aligns.join(" | ")));
}

/// A line of an aligned text table: cells, or free text passed through unaligned.
pub(crate) enum Row {
    Cells(Vec<String>),
    Text(String),
}

/// Lay out `rows` in columns separated by two spaces after `indent`; column `i` is
/// right-aligned when `right[i]` (left otherwise). Widths count characters, so `µ` and
/// `✓` take one column. Trailing spaces are trimmed.
pub(crate) fn align(rows: &[Row], right: &[bool], indent: &str) -> Vec<String> {
    let mut widths: Vec<usize> = Vec::new();
    for r in rows {
        if let Row::Cells(cells) = r {
            for (i, c) in cells.iter().enumerate() {
                let w = c.chars().count();
                match widths.get_mut(i) {
                    Some(x) => *x = (*x).max(w),
                    None => widths.push(w),
                }
            }
        }
    }
    rows.iter()
        .map(|r| match r {
            Row::Text(t) => t.clone(),
            Row::Cells(cells) => {
                let mut s = indent.to_string();
                for (i, c) in cells.iter().enumerate() {
                    if i > 0 {
                        s.push_str("  ");
                    }
                    let w = widths.get(i).copied().unwrap_or(0);
                    if right.get(i).copied().unwrap_or(false) {
                        s.push_str(&format!("{c:>w$}"));
                    } else {
                        s.push_str(&format!("{c:<w$}"));
                    }
                }
                s.trim_end().to_string()
            }
        })
        .collect()
}

/// Write CSV records; on the (unreachable) failure of the writer, a comment line.
pub(crate) fn csv_text(header: &[&str], records: &[Vec<String>]) -> String {
    fn go(header: &[&str], records: &[Vec<String>]) -> Result<String, Box<dyn std::error::Error>> {
        let mut w = csv::Writer::from_writer(Vec::new());
        w.write_record(header)?;
        for r in records {
            w.write_record(r)?;
        }
        let bytes = w.into_inner().map_err(|e| e.to_string())?;
        Ok(String::from_utf8(bytes)?)
    }
    go(header, records).unwrap_or_else(|e| format!("# csv export failed: {e}\n"))
}

// ---------------------------------------------------------------------------------------
// Wording

/// A bound in the largest unit it reaches, without trailing zeros: `1 ms`, `2.5 ms`,
/// `500 µs`, `750 ns`.
fn bound(ns: u64) -> String {
    for (scale, unit) in [(1_000_000_000u64, "s"), (1_000_000, "ms"), (1_000, "µs")] {
        if ns >= scale {
            let v = format!("{:.3}", ns as f64 / scale as f64);
            let v = v.trim_end_matches('0').trim_end_matches('.');
            return format!("{v} {unit}");
        }
    }
    format!("{ns} ns")
}

/// `closed loop` / `open loop`.
fn mode(s: &SlaResult) -> String {
    s.mode.replace('-', " ")
}

/// `p99 ≤ 1 ms, 4 KiB randread, closed loop` (the block size when a job result says it).
fn bound_line(doc: &ResultDoc, s: &SlaResult) -> String {
    let streams: Vec<String> = s
        .streams
        .iter()
        .enumerate()
        .map(|(i, name)| match doc.results.get(i) {
            Some(r) if r.spec.rw.name() == name => fmt::rw(&r.spec),
            _ => name.clone(),
        })
        .collect();
    let mut work = if streams.is_empty() { "workload unknown".to_string() } else { streams.join(" + ") };
    let bs = if s.bs > 0 { Some(s.bs) } else { doc.results.first().map(|r| r.spec.bs) };
    if let Some(bs) = bs {
        work = format!("{} {work}", fmt::bytes(bs));
    }
    format!("{} ≤ {}, {work}, {}", s.percentile.label(), bound(s.latency_ns), mode(s))
}

fn plural(n: u32, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Where a point sits: `QD 32 × 2 workers (64 outstanding)` or, open loop,
/// `offered 100,000 IOPS (QD 32 × 2 workers)`.
fn place(p: &SlaPoint) -> String {
    let depth = format!("QD {} × {}", p.qd, plural(p.threads, "worker", "workers"));
    match p.rate_iops {
        Some(r) => format!("offered {} IOPS ({depth})", fmt::group(r)),
        None => format!("{depth} ({} outstanding)", p.outstanding),
    }
}

/// The full latency summary as pieces: `min …`, `mean …`, … `max …`.
fn lat_pieces(l: &LatSummary) -> Vec<String> {
    vec![
        format!("min {}", fmt::lat(l.min as f64)),
        format!("mean {}", fmt::lat(l.mean)),
        format!("p50 {}", fmt::lat(l.p50 as f64)),
        format!("p90 {}", fmt::lat(l.p90 as f64)),
        format!("p99 {}", fmt::lat(l.p99 as f64)),
        format!("p99.9 {}", fmt::lat(l.p99_9 as f64)),
        format!("p99.99 {}", fmt::lat(l.p99_99 as f64)),
        format!("max {}", fmt::lat(l.max as f64)),
    ]
}

/// A percentage of a fraction with one decimal (`0.0123` → `1.2`); `-` when not finite.
fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}", x * 100.0)
    } else {
        "-".to_string()
    }
}

/// The bounded statistic needs its own column unless the table already shows it.
fn extra_metric_column(p: Percentile) -> bool {
    !matches!(p, Percentile::Mean | Percentile::P50 | Percentile::P99)
}

/// The shallowest point (QD 1, one worker), else the first measured.
fn qd1_point(s: &SlaResult) -> Option<&SlaPoint> {
    s.points.iter().find(|p| p.outstanding == 1 || (p.qd == 1 && p.threads == 1)).or(s.points.first())
}

fn flag_words(p: &SlaPoint) -> Vec<&'static str> {
    let mut f = Vec::new();
    if p.remeasured {
        f.push("remeasured");
    }
    if p.early_reject {
        f.push("early reject");
    }
    if !p.stable && !p.early_reject {
        f.push("unstable");
    }
    f
}

const FLAG_LEGEND: [(&str, &str, &str); 3] = [
    ("remeasured", "R", "R re-measured (close to the bound)"),
    ("early reject", "E", "E rejected early (far over the bound)"),
    ("unstable", "U", "U did not settle within the window cap"),
];

fn flag_code(word: &str) -> &'static str {
    FLAG_LEGEND.iter().find(|(w, _, _)| *w == word).map(|(_, c, _)| *c).unwrap_or("?")
}

fn search_line(s: &SlaResult) -> String {
    let how = if s.exhaustive { "exhaustive grid" } else { "adaptive search" };
    let n = u32::try_from(s.points.len()).unwrap_or(u32::MAX);
    format!("{} in {} ({how})", plural(n, "point", "points"), fmt::secs(s.search_seconds))
}

fn knee_text(s: &SlaResult) -> String {
    match &s.knee {
        Some(k) => format!(
            "{} · {} IOPS · {} {} — past it latency grows faster than throughput",
            place(k),
            fmt::iops(k.iops),
            s.percentile.label(),
            fmt::lat(k.metric_ns)
        ),
        None => "not identified among the measured points".to_string(),
    }
}

fn thrash_texts(s: &SlaResult) -> Vec<String> {
    s.thrashing
        .iter()
        .map(|t| {
            format!(
                "{}: QD {} → {} lowered IOPS from {} to {} (deeper queue, fewer IOPS)",
                plural(t.threads, "worker", "workers"),
                t.from_qd,
                t.to_qd,
                fmt::iops(t.from_iops),
                fmt::iops(t.to_iops)
            )
        })
        .collect()
}

/// `p99 1.80 ms > 1 ms at QD 1 × 1 worker (1 outstanding): 5,555 IOPS · 22.75 MB/s`.
fn qd1_text(s: &SlaResult, p: &SlaPoint) -> String {
    format!(
        "{} {} > {} at {}: {} IOPS · {} MB/s",
        s.percentile.label(),
        fmt::lat(p.metric_ns),
        bound(s.latency_ns),
        place(p),
        fmt::iops(p.iops),
        fmt::rate(p.mb_s)
    )
}

// ---------------------------------------------------------------------------------------
// Human

fn wrapped(out: &mut String, first: &str, cont: &str, pieces: &[String], sep: &str) {
    for l in fmt::wrap(first, cont, pieces, sep, WIDTH) {
        line(out, l);
    }
}

/// The `sla` answer as plain text; empty without `doc.sla`.
pub(crate) fn human(doc: &ResultDoc) -> String {
    let Some(s) = &doc.sla else {
        return String::new();
    };
    let mut out = String::new();
    let mut head = vec!["SLA search".to_string()];
    if let Some(t) = &doc.target {
        head.push(t.path.clone());
        let dev = fmt::device(t);
        if dev != "unknown" {
            head.push(dev);
        }
    }
    wrapped(&mut out, "", "    ", &head, " · ");
    line(&mut out, format!("bound: {}", bound_line(doc, s)));
    for l in fmt::wrap_text("answer: ", "    ", &s.verdict, WIDTH) {
        line(&mut out, l);
    }
    if s.qd1_misses {
        let what = match qd1_point(s) {
            Some(p) => qd1_text(s, p),
            None => "no point was measured".to_string(),
        };
        for l in fmt::wrap_text("EVEN QD 1 MISSES THE BOUND: ", "    ", &what, WIDTH) {
            line(&mut out, l);
        }
        if let Some(p) = qd1_point(s) {
            wrapped(&mut out, "    latency ", "    ", &lat_pieces(&p.lat_ns), " · ");
        }
        line(&mut out, "    no depth or worker count meets this bound here: relax the bound or lighten the workload");
    }
    line(&mut out, "");

    match &s.best {
        Some(b) => {
            line(&mut out, format!("best: {} · {} IOPS · {} MB/s", place(b), fmt::iops(b.iops), fmt::rate(b.mb_s)));
            wrapped(&mut out, "    latency ", "    ", &lat_pieces(&b.lat_ns), " · ");
            if b.streams.len() > 1 {
                for st in &b.streams {
                    line(
                        &mut out,
                        format!(
                            "    {}: QD {} × {} · {} IOPS · {} MB/s · mean {} · p99 {}",
                            st.name,
                            st.qd,
                            st.threads,
                            fmt::iops(st.iops),
                            fmt::rate(st.mb_s),
                            fmt::lat(st.lat_ns.mean),
                            fmt::lat(st.lat_ns.p99 as f64)
                        ),
                    );
                }
            }
        }
        None => line(&mut out, "best: none — no measured point met the bound"),
    }
    line(&mut out, "");

    if s.points.is_empty() {
        line(&mut out, "points: none measured");
    } else {
        line(&mut out, "points, in measurement order:");
        points_table(s, &mut out);
    }
    for l in fmt::wrap_text("knee: ", "    ", &knee_text(s), WIDTH) {
        line(&mut out, l);
    }
    for t in thrash_texts(s) {
        for l in fmt::wrap_text("thrashing: ", "    ", &t, WIDTH) {
            line(&mut out, l);
        }
    }
    line(&mut out, format!("search: {}", search_line(s)));
    out
}

fn points_table(s: &SlaResult, out: &mut String) {
    let rate = s.points.iter().any(|p| p.rate_iops.is_some());
    let extra = extra_metric_column(s.percentile);
    let star = |name: &str| if s.percentile.label() == name { format!("{name}*") } else { name.to_string() };
    let mut head = vec!["QD".to_string(), "T".into(), "out".into()];
    let mut right = vec![true, true, true];
    if rate {
        head.push("rate".into());
        right.push(true);
    }
    head.extend(["IOPS".to_string(), "MB/s".into(), star("mean"), star("p50"), star("p99")]);
    right.extend([true; 5]);
    if extra {
        head.push(star(s.percentile.label()));
        right.push(true);
    }
    head.extend(["ok".to_string(), "win".into(), "cv% I/L".into(), "flags".into()]);
    right.extend([true, true, true, false]);

    let mut rows = vec![Row::Cells(head)];
    let mut used_flags: Vec<&str> = Vec::new();
    for p in &s.points {
        let mut c = vec![p.qd.to_string(), p.threads.to_string(), p.outstanding.to_string()];
        if rate {
            c.push(p.rate_iops.map(fmt::group).unwrap_or_else(|| "-".to_string()));
        }
        c.extend([
            fmt::iops(p.iops),
            fmt::rate(p.mb_s),
            fmt::lat(p.lat_ns.mean),
            fmt::lat(p.lat_ns.p50 as f64),
            fmt::lat(p.lat_ns.p99 as f64),
        ]);
        if extra {
            c.push(fmt::lat(p.metric_ns));
        }
        let flags = flag_words(p);
        for f in &flags {
            if !used_flags.contains(f) {
                used_flags.push(f);
            }
        }
        c.extend([
            if p.feasible { "✓" } else { "✗" }.to_string(),
            p.windows.to_string(),
            format!("{}/{}", pct(p.cv_iops), pct(p.cv_lat)),
            flags.iter().map(|f| flag_code(f)).collect::<Vec<_>>().join(""),
        ]);
        rows.push(Row::Cells(c));
    }
    for l in align(&rows, &right, "  ") {
        line(out, l);
    }
    let mut legend = vec![
        format!("* bounded statistic ({} ≤ {})", s.percentile.label(), bound(s.latency_ns)),
        "ok: ✓ within / ✗ over the bound".to_string(),
        "T: workers".to_string(),
        "out: I/Os in flight".to_string(),
        "win: 1 s windows".to_string(),
        "cv%: variation of IOPS / latency over the windows".to_string(),
    ];
    for (word, _, text) in FLAG_LEGEND {
        if used_flags.contains(&word) {
            legend.push((*text).to_string());
        }
    }
    wrapped(out, "  ", "  ", &legend, " · ");
}

// ---------------------------------------------------------------------------------------
// Markdown

/// The `sla` answer as Markdown; empty without `doc.sla`.
pub(crate) fn markdown(doc: &ResultDoc) -> String {
    let Some(s) = &doc.sla else {
        return String::new();
    };
    let mut out = String::new();
    line(&mut out, "## Capacity under a latency bound");
    line(&mut out, "");
    line(&mut out, format!("- **Bound:** {}", md_esc(&bound_line(doc, s))));
    line(&mut out, format!("- **Answer:** {}", md_esc(&s.verdict)));
    if s.qd1_misses {
        let what = qd1_point(s).map(|p| qd1_text(s, p)).unwrap_or_else(|| "no point was measured".to_string());
        line(&mut out, format!("- **Even QD 1 misses the bound:** {}", md_esc(&what)));
    }
    match &s.best {
        Some(b) => {
            line(
                &mut out,
                format!(
                    "- **Best point:** {} · {} IOPS · {} MB/s · latency {}",
                    place(b),
                    fmt::iops(b.iops),
                    fmt::rate(b.mb_s),
                    lat_pieces(&b.lat_ns).join(" · ")
                ),
            );
            if b.streams.len() > 1 {
                for st in &b.streams {
                    line(
                        &mut out,
                        format!(
                            "  - {}: QD {} × {} · {} IOPS · {} MB/s · mean {} · p99 {}",
                            md_esc(&st.name),
                            st.qd,
                            st.threads,
                            fmt::iops(st.iops),
                            fmt::rate(st.mb_s),
                            fmt::lat(st.lat_ns.mean),
                            fmt::lat(st.lat_ns.p99 as f64)
                        ),
                    );
                }
            }
        }
        None => line(&mut out, "- **Best point:** none — no measured point met the bound"),
    }
    line(&mut out, format!("- **Knee:** {}", knee_text(s)));
    for t in thrash_texts(s) {
        line(&mut out, format!("- **Thrashing:** {t}"));
    }
    line(&mut out, format!("- **Search:** {}", search_line(s)));
    line(&mut out, "");
    if s.points.is_empty() {
        return out;
    }
    let rate = s.points.iter().any(|p| p.rate_iops.is_some());
    let bounded = format!("{} (bounded)", s.percentile.label());
    let mut cols = vec!["#", "QD", "Workers", "Outstanding"];
    if rate {
        cols.push("Rate IOPS");
    }
    cols.extend(["IOPS", "MB/s", "mean", "p50", "p99", bounded.as_str(), "Within bound", "Windows"]);
    cols.extend(["CV IOPS %", "CV lat %", "Flags"]);
    let mut right = vec![true; cols.len()];
    if let Some(last) = right.last_mut() {
        *last = false; // flags
    }
    md_table_head(&mut out, &cols, &right);
    for (i, p) in s.points.iter().enumerate() {
        let mut c = vec![(i + 1).to_string(), p.qd.to_string(), p.threads.to_string(), p.outstanding.to_string()];
        if rate {
            c.push(p.rate_iops.map(fmt::group).unwrap_or_else(|| "-".to_string()));
        }
        c.extend([
            fmt::iops(p.iops),
            fmt::rate(p.mb_s),
            fmt::lat(p.lat_ns.mean),
            fmt::lat(p.lat_ns.p50 as f64),
            fmt::lat(p.lat_ns.p99 as f64),
            fmt::lat(p.metric_ns),
            if p.feasible { "✓" } else { "✗" }.to_string(),
            p.windows.to_string(),
            pct(p.cv_iops),
            pct(p.cv_lat),
            flag_words(p).join(", "),
        ]);
        line(&mut out, format!("| {} |", c.join(" | ")));
    }
    out
}

// ---------------------------------------------------------------------------------------
// CSV

/// Columns of the `sla` CSV: one row per measured point, in measurement order.
pub(crate) const CSV_HEADER: [&str; 17] = [
    "qd",
    "threads",
    "outstanding",
    "rate_iops",
    "iops",
    "mb_s",
    "lat_mean_ns",
    "lat_p50_ns",
    "lat_p99_ns",
    "lat_p99_9_ns",
    "metric_ns",
    "feasible",
    "windows",
    "cv_iops",
    "cv_lat",
    "remeasured",
    "t_s",
];

/// The measured points as CSV (header included); empty without `doc.sla`.
pub(crate) fn csv(doc: &ResultDoc) -> String {
    let Some(s) = &doc.sla else {
        return String::new();
    };
    let records: Vec<Vec<String>> = s
        .points
        .iter()
        .map(|p| {
            vec![
                p.qd.to_string(),
                p.threads.to_string(),
                p.outstanding.to_string(),
                p.rate_iops.map(|r| r.to_string()).unwrap_or_default(),
                p.iops.to_string(),
                p.mb_s.to_string(),
                p.lat_ns.mean.to_string(),
                p.lat_ns.p50.to_string(),
                p.lat_ns.p99.to_string(),
                p.lat_ns.p99_9.to_string(),
                p.metric_ns.to_string(),
                p.feasible.to_string(),
                p.windows.to_string(),
                p.cv_iops.to_string(),
                p.cv_lat.to_string(),
                p.remeasured.to_string(),
                p.t_s.to_string(),
            ]
        })
        .collect();
    csv_text(&CSV_HEADER, &records)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::text_fixtures::{sla_doc, sla_open_loop_doc, sla_qd1_miss_doc};

    fn point(qd: u32, threads: u32, iops: f64, metric_ns: f64) -> SlaPoint {
        let mut p = sla_doc().sla.and_then(|s| s.best).expect("the fixture has a best point");
        p.qd = qd;
        p.threads = threads;
        p.outstanding = qd * threads;
        p.rate_iops = None;
        p.iops = iops;
        p.mb_s = iops * 4096.0 / 1e6;
        p.metric_ns = metric_ns;
        p
    }

    #[test]
    fn verdict_sentences() {
        let best = point(32, 2, 418_200.0, 590_000.0);
        let knee = point(8, 2, 172_000.0, 212_000.0);
        let a = SlaAnswer {
            what: "/dev/nvme1n1",
            bound_ns: 1e6,
            percentile: Percentile::P99,
            best: Some(&best),
            knee: Some(&knee),
            first: None,
            limit: Some("bound"),
        };
        assert_eq!(
            sla_verdict(&a),
            "/dev/nvme1n1 sustains 418200 IOPS (1712.9 MB/s) at p99 590 µs ≤ 1.00 ms with 64 I/Os outstanding (QD 32 \
             x 2 workers); beyond that latency climbs past the bound (knee at 16 outstanding: 172000 IOPS, p99 212 µs; \
             past it latency grows faster than throughput)."
        );
        let one = point(1, 1, 150.0, 5_500.0);
        let plateau =
            SlaAnswer { best: Some(&one), knee: None, limit: Some("plateau"), percentile: Percentile::Mean, ..a };
        assert_eq!(
            sla_verdict(&plateau),
            "/dev/nvme1n1 sustains 150 IOPS (0.6 MB/s) at mean 5.5 µs ≤ 1.00 ms with 1 I/O outstanding; more \
             outstanding I/O adds latency, not throughput."
        );
        let slow = point(1, 1, 80.0, 12_500_000.0);
        let miss = SlaAnswer { best: None, knee: None, first: Some(&slow), bound_ns: 5e6, ..a };
        assert_eq!(
            sla_verdict(&miss),
            "even QD 1 misses the bound: p99 12.5 ms > 5.00 ms at 80 IOPS (0.3 MB/s) with one I/O outstanding."
        );
        assert_eq!(sla_verdict(&SlaAnswer { first: None, ..miss }), "no point was measured.");
    }

    #[test]
    fn human() {
        insta::assert_snapshot!(super::human(&sla_doc()));
    }

    #[test]
    fn human_qd1_misses() {
        insta::assert_snapshot!(super::human(&sla_qd1_miss_doc()));
    }

    #[test]
    fn human_open_loop() {
        insta::assert_snapshot!(super::human(&sla_open_loop_doc()));
    }

    #[test]
    fn markdown() {
        insta::assert_snapshot!(super::markdown(&sla_doc()));
    }

    #[test]
    fn markdown_qd1_misses() {
        insta::assert_snapshot!(super::markdown(&sla_qd1_miss_doc()));
    }

    #[test]
    fn csv() {
        insta::assert_snapshot!(super::csv(&sla_doc()));
    }

    #[test]
    fn csv_shape() {
        for doc in [sla_doc(), sla_qd1_miss_doc(), sla_open_loop_doc()] {
            let text = super::csv(&doc);
            let mut r = ::csv::Reader::from_reader(text.as_bytes());
            let headers = r.headers().expect("header").clone();
            assert_eq!(headers.iter().collect::<Vec<_>>(), CSV_HEADER);
            let rows: Vec<_> = r.records().collect::<Result<_, _>>().expect("rows");
            assert_eq!(rows.len(), doc.sla.as_ref().map_or(0, |s| s.points.len()));
        }
    }

    #[test]
    fn without_sla_everything_is_empty() {
        let doc = ResultDoc::new("sla", "2025-01-15T10:30:00Z", Default::default());
        assert_eq!(super::human(&doc), "");
        assert_eq!(super::markdown(&doc), "");
        assert_eq!(super::csv(&doc), "");
    }

    #[test]
    fn narrow_and_plain() {
        for doc in [sla_doc(), sla_qd1_miss_doc(), sla_open_loop_doc()] {
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
        let mut doc = sla_doc();
        if let Some(s) = doc.sla.as_mut() {
            s.points.clear();
            s.best = None;
            s.knee = None;
            s.streams.clear();
            s.qd1_misses = true;
            s.search_seconds = f64::NAN;
        }
        doc.results.clear();
        doc.target = None;
        for text in [super::human(&doc), super::markdown(&doc), super::csv(&doc)] {
            assert!(!text.is_empty());
        }
        assert!(super::human(&doc).contains("no point was measured"));
    }

    #[test]
    fn bounds_read_naturally() {
        assert_eq!(bound(1_000_000), "1 ms");
        assert_eq!(bound(500_000), "500 µs");
        assert_eq!(bound(2_500_000), "2.5 ms");
        assert_eq!(bound(1_234_567), "1.235 ms");
        assert_eq!(bound(0), "0 ns");
        assert_eq!(bound(10_000_000_000), "10 s");
        assert_eq!(bound(750), "750 ns");
    }
}
