//! The `steady` section (`doc.steady`: the SNIA PTS IOPS test — purge, preconditioning,
//! rounds, the steady-state window and the IOPS table) and the `sustained` section
//! (`doc.sustained`: a sustained write, its cliff and the recovery re-tests), as human
//! text, Markdown and CSV. Each renderer returns an empty string when the document has no
//! such section. The pieces the HTML report shows too are `pub(crate)`.

use std::fmt::Write as _;

use stats::steady::{ProgressPoint, Recovery, SteadyResult, SustainedResult, TrackedCheck, Tracking};
use stats::ResultDoc;

use crate::fmt;
use crate::sla_text::{align, csv_text, md_esc, md_table_head, Row};

/// Maximum line width of the human output (as in `human.rs`).
const WIDTH: usize = 100;

fn line(out: &mut String, s: impl AsRef<str>) {
    out.push_str(s.as_ref());
    out.push('\n');
}

fn wrapped(out: &mut String, first: &str, pieces: &[String]) {
    for l in fmt::wrap(first, "    ", pieces, " · ", WIDTH) {
        line(out, l);
    }
}

fn wrapped_text(out: &mut String, first: &str, text: &str) {
    for l in fmt::wrap_text(first, "    ", text, WIDTH) {
        line(out, l);
    }
}

// ---------------------------------------------------------------------------------------
// Wording shared by the formats (and the HTML report)

/// A duration that stays readable for long runs: `45 s`, `70.5 s`, `5 min`, `12 min 30 s`,
/// `2 h 5 min`.
pub(crate) fn duration(s: f64) -> String {
    if !s.is_finite() || s < 120.0 {
        return fmt::secs(s);
    }
    let whole = s.round() as u64;
    if whole < 3600 {
        match whole % 60 {
            0 => format!("{} min", whole / 60),
            r => format!("{} min {r} s", whole / 60),
        }
    } else {
        match (whole % 3600) / 60 {
            0 => format!("{} h", whole / 3600),
            m => format!("{} h {m} min", whole / 3600),
        }
    }
}

/// `50 %`, `33.3 %`.
fn percent(x: f64) -> String {
    if !x.is_finite() {
        "-".to_string()
    } else if (x - x.round()).abs() < 0.05 {
        format!("{x:.0} %")
    } else {
        format!("{x:.1} %")
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// A tracking variable holds latencies (ns) rather than IOPS.
pub(crate) fn is_latency(metric: &str) -> bool {
    metric != "iops" && (metric.starts_with('p') || metric.contains("lat"))
}

/// A value of a tracking variable: IOPS (`20,340`, `400`, `12.5`) or a latency (`1.21 ms`).
pub(crate) fn value(metric: &str, v: f64) -> String {
    if is_latency(metric) {
        fmt::lat(v)
    } else if v.is_finite() && v >= 99.95 {
        fmt::group(v.round() as u64)
    } else {
        fmt::iops(v)
    }
}

/// The metric of the tracking variable a window check belongs to (by name, else `iops`).
pub(crate) fn check_metric<'a>(s: &'a SteadyResult, c: &TrackedCheck) -> &'a str {
    s.tracking.iter().find(|t| t.name == c.name).map_or("iops", |t| t.metric.as_str())
}

/// The test set-up as pieces: `SNIA PTS IOPS`, `enterprise profile`, `pts matrix`,
/// `QD 32 × 4 threads`, the active range and the round time.
pub(crate) fn setup_parts(s: &SteadyResult) -> Vec<String> {
    let threads = if s.threads == 1 { "thread" } else { "threads" };
    let mut v = vec!["SNIA PTS IOPS".to_string()];
    if !s.profile.is_empty() {
        v.push(format!("{} profile", s.profile));
    }
    if !s.matrix.is_empty() {
        v.push(format!("{} matrix", s.matrix));
    }
    v.push(format!("QD {} × {} {threads}", s.qd, s.threads));
    v.push(format!(
        "active range {} % ({} of {})",
        s.active_range_pct,
        fmt::bytes(s.active_bytes),
        fmt::bytes(s.range_bytes)
    ));
    v.push(format!("{} × {} per round", plural(s.points.len(), "point", "points"), duration(s.round_time_s)));
    v
}

/// What the purge did: `secure-discard: <message>`, or the message alone without a method.
pub(crate) fn purge_text(s: &SteadyResult) -> String {
    let p = &s.purge;
    let msg = if p.message.trim().is_empty() {
        if p.done {
            format!("{} purged", fmt::bytes(p.bytes))
        } else {
            "not purged".to_string()
        }
    } else {
        p.message.trim().to_string()
    };
    if p.method.is_empty() || p.method == "none" {
        msg
    } else {
        format!("{}: {msg}", p.method)
    }
}

/// Preconditioning as pieces: passes, bytes, writes, MB/s, time, and `incomplete` when a
/// planned pass did not write the whole range.
pub(crate) fn precondition_parts(s: &SteadyResult) -> Vec<String> {
    let p = &s.precondition;
    let mut v = vec![
        format!("{} of {} {}", p.passes_done, p.passes_planned, if p.passes_planned == 1 { "pass" } else { "passes" }),
        format!("{} written", fmt::bytes(p.bytes)),
        format!("sequential {} writes at QD {}", fmt::bytes(p.bs), p.qd),
        format!("{} MB/s", fmt::rate(p.mb_s)),
        duration(p.seconds),
    ];
    if !p.complete {
        v.push("incomplete: not every planned pass wrote the whole range".to_string());
    }
    v
}

/// `rounds 3–7`.
fn span(first: u32, last: u32) -> String {
    if first == last {
        format!("round {first}")
    } else {
        format!("rounds {first}–{last}")
    }
}

/// The window and its verdict: `rounds 3–7: steady`, `rounds 21–25 (the last 5): not
/// steady`, or why there is none.
pub(crate) fn window_text(s: &SteadyResult) -> String {
    match &s.window {
        Some(w) if w.steady => format!("{}: steady", span(w.first_round, w.last_round)),
        Some(w) => {
            let n = w.last_round.saturating_sub(w.first_round).saturating_add(1);
            format!("{} (the last {n}): not steady", span(w.first_round, w.last_round))
        }
        None => "none: too few rounds ran to test one".to_string(),
    }
}

/// What the IOPS table averages: `mean of rounds 3–7`, `mean of rounds 6–10, not steady`.
pub(crate) fn table_basis(s: &SteadyResult) -> String {
    match &s.window {
        Some(w) if w.steady => format!("mean of {}", span(w.first_round, w.last_round)),
        Some(w) => format!("mean of {}, not steady", span(w.first_round, w.last_round)),
        None => "no window".to_string(),
    }
}

/// `ok` or `over`.
pub(crate) fn ok_word(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "over"
    }
}

/// One check as a sentence: `mean 20,340, range 1,200 (limit 4,068) ok, excursion 400
/// (limit 2,034) ok`.
pub(crate) fn check_text(metric: &str, c: &TrackedCheck) -> String {
    let k = &c.check;
    format!(
        "mean {}, range {} (limit {}) {}, excursion {} (limit {}) {}",
        value(metric, k.mean),
        value(metric, k.range),
        value(metric, k.range_limit),
        ok_word(k.range_ok),
        value(metric, k.excursion),
        value(metric, k.excursion_limit),
        ok_word(k.slope_ok)
    )
}

/// One round of the per-round table.
pub(crate) struct RoundLine {
    pub round: u32,
    pub t_s: Option<f64>,
    pub in_window: bool,
    /// One cell per tracking variable (`-` where it has no value for this round).
    pub values: Vec<String>,
}

/// Whether round `r` lies in the document's window.
pub(crate) fn in_window(s: &SteadyResult, r: u32) -> bool {
    s.window.as_ref().is_some_and(|w| r >= w.first_round && r <= w.last_round)
}

/// The number of rounds the document has figures for (rounds or tracking values).
pub(crate) fn round_count(s: &SteadyResult) -> usize {
    s.tracking.iter().map(|t| t.values.len()).chain([s.rounds.len()]).max().unwrap_or(0)
}

/// The per-round values of every tracking variable (the i-th value is the i-th round's).
pub(crate) fn round_lines(s: &SteadyResult) -> Vec<RoundLine> {
    (0..round_count(s))
        .map(|i| {
            let round = s.rounds.get(i).map_or(u32::try_from(i + 1).unwrap_or(u32::MAX), |r| r.round);
            RoundLine {
                round,
                t_s: s.rounds.get(i).map(|r| r.t_s),
                in_window: in_window(s, round),
                values: s
                    .tracking
                    .iter()
                    .map(|t: &Tracking| t.values.get(i).map_or("-".to_string(), |&v| value(&t.metric, v)))
                    .collect(),
            }
        })
        .collect()
}

/// The IOPS table: column heads (the mixes) and per block size its cells (`-` for none).
pub(crate) fn table_cells(s: &SteadyResult) -> Vec<(String, Vec<String>)> {
    s.table
        .rows
        .iter()
        .map(|r| {
            let cells = (0..s.table.mixes.len())
                .map(|i| r.iops.get(i).copied().flatten().map_or("-".to_string(), fmt::iops))
                .collect();
            (fmt::bytes(r.bs), cells)
        })
        .collect()
}

/// `rounds: 8 of at most 25`.
fn rounds_text(s: &SteadyResult) -> String {
    format!("{} of at most {}", round_count(s), s.max_rounds)
}

// ---------------------------------------------------------------------------------------
// steady: human

/// Human text of the steady section ("" without one).
pub(crate) fn human(doc: &ResultDoc) -> String {
    let Some(s) = &doc.steady else { return String::new() };
    let mut out = String::new();
    wrapped(&mut out, "steady state: ", &setup_parts(s));
    wrapped_text(&mut out, "purge: ", &purge_text(s));
    wrapped(&mut out, "preconditioning: ", &precondition_parts(s));

    line(&mut out, "");
    line(&mut out, format!("rounds: {} · * = in the window", rounds_text(s)));
    let lines = round_lines(s);
    if s.tracking.is_empty() {
        line(&mut out, "  (no tracking variables)");
    } else if lines.is_empty() {
        line(&mut out, "  (no rounds ran)");
    } else {
        let mut rows = Vec::with_capacity(lines.len() + 1);
        let mut head = vec![String::new(), "round".to_string(), "start".to_string()];
        head.extend(s.tracking.iter().map(|t| t.name.clone()));
        rows.push(Row::Cells(head));
        for l in &lines {
            let mut cells = vec![
                if l.in_window { "*" } else { "" }.to_string(),
                l.round.to_string(),
                l.t_s.map_or("-".to_string(), duration),
            ];
            cells.extend(l.values.iter().cloned());
            rows.push(Row::Cells(cells));
        }
        let mut right = vec![false, true, true];
        right.extend(s.tracking.iter().map(|_| true));
        for l in align(&rows, &right, "  ") {
            line(&mut out, l);
        }
    }

    line(&mut out, "");
    line(&mut out, format!("window: {}", window_text(s)));
    if let Some(w) = &s.window {
        for c in &w.checks {
            wrapped_text(&mut out, &format!("  {}: ", c.name), &check_text(check_metric(s, c), c));
        }
    }

    line(&mut out, "");
    line(&mut out, format!("IOPS by block size and read/write mix ({}):", table_basis(s)));
    let cells = table_cells(s);
    if cells.is_empty() {
        line(&mut out, "  (no figures)");
    } else {
        let mut rows = Vec::with_capacity(cells.len() + 1);
        let mut head = vec!["bs".to_string()];
        head.extend(s.table.mixes.iter().cloned());
        rows.push(Row::Cells(head));
        for (bs, c) in cells {
            let mut r = vec![bs];
            r.extend(c);
            rows.push(Row::Cells(r));
        }
        let mut right = vec![false];
        right.extend(s.table.mixes.iter().map(|_| true));
        for l in align(&rows, &right, "  ") {
            line(&mut out, l);
        }
    }
    if !s.skipped.is_empty() {
        wrapped(&mut out, "skipped: ", &s.skipped);
    }
    wrapped_text(&mut out, "verdict: ", if s.verdict.trim().is_empty() { "none recorded" } else { &s.verdict });
    line(&mut out, format!("time: {} in all (purge, preconditioning and rounds)", duration(s.seconds)));
    out
}

// ---------------------------------------------------------------------------------------
// steady: Markdown

/// Markdown of the steady section ("" without one). Starts with its `##` heading.
pub(crate) fn markdown(doc: &ResultDoc) -> String {
    let Some(s) = &doc.steady else { return String::new() };
    let mut out = String::from("## Steady state (SNIA PTS IOPS)\n\n");
    let setup = setup_parts(s);
    let _ = writeln!(out, "- **Setup:** {}", md_esc(&setup[1..].join(" · ")));
    let _ = writeln!(out, "- **Purge:** {}", md_esc(&purge_text(s)));
    let _ = writeln!(out, "- **Preconditioning:** {}", md_esc(&precondition_parts(s).join(" · ")));
    let _ = writeln!(out, "- **Rounds:** {}", rounds_text(s));
    let _ = writeln!(out, "- **Window:** {}", window_text(s));
    if !s.skipped.is_empty() {
        let _ = writeln!(out, "- **Skipped:** {}", md_esc(&s.skipped.join("; ")));
    }
    let _ = writeln!(out, "- **Time:** {} in all (purge, preconditioning and rounds)", duration(s.seconds));
    if !s.verdict.trim().is_empty() {
        let _ = writeln!(out, "\n**Verdict:** {}", md_esc(s.verdict.trim()));
    }

    let lines = round_lines(s);
    if !s.tracking.is_empty() && !lines.is_empty() {
        out.push_str("\n### Rounds\n\n");
        let mut cols: Vec<String> = vec!["Round".into(), "Start".into()];
        cols.extend(s.tracking.iter().map(|t| md_esc(&t.name)));
        cols.push("In window".into());
        let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut right = vec![true; cols.len()];
        right[cols.len() - 1] = false;
        md_table_head(&mut out, &cols, &right);
        for l in &lines {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                l.round,
                l.t_s.map_or("-".to_string(), duration),
                l.values.join(" | "),
                if l.in_window { "✓" } else { "" }
            );
        }
    }

    if let Some(w) = s.window.as_ref().filter(|w| !w.checks.is_empty()) {
        let _ = writeln!(out, "\n### Window checks ({})\n", span(w.first_round, w.last_round));
        md_table_head(
            &mut out,
            &[
                "Variable",
                "Mean",
                "Min",
                "Max",
                "Range",
                "Range limit",
                "Range ok",
                "Excursion",
                "Excursion limit",
                "Slope ok",
            ],
            &[false, true, true, true, true, true, false, true, true, false],
        );
        for c in &w.checks {
            let m = check_metric(s, c);
            let k = &c.check;
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                md_esc(&c.name),
                value(m, k.mean),
                value(m, k.min),
                value(m, k.max),
                value(m, k.range),
                value(m, k.range_limit),
                ok_word(k.range_ok),
                value(m, k.excursion),
                value(m, k.excursion_limit),
                ok_word(k.slope_ok)
            );
        }
    }

    let cells = table_cells(s);
    if !cells.is_empty() {
        let _ = writeln!(out, "\n### IOPS by block size and read/write mix ({})\n", table_basis(s));
        let mut cols = vec!["Block size".to_string()];
        cols.extend(s.table.mixes.iter().map(|m| md_esc(m)));
        let cols: Vec<&str> = cols.iter().map(String::as_str).collect();
        let mut right = vec![true; cols.len()];
        right[0] = false;
        md_table_head(&mut out, &cols, &right);
        for (bs, c) in cells {
            let _ = writeln!(out, "| {bs} | {} |", c.join(" | "));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// steady: CSV

const STEADY_CSV: [&str; 10] =
    ["round", "t_s", "point", "iops", "mb_s", "read_iops", "write_iops", "lat_mean_ns", "lat_p99_ns", "in_window"];

/// CSV of the steady section ("" without one): one row per round and test point.
pub(crate) fn csv(doc: &ResultDoc) -> String {
    let Some(s) = &doc.steady else { return String::new() };
    let records: Vec<Vec<String>> = s
        .rounds
        .iter()
        .flat_map(|r| {
            let w = in_window(s, r.round);
            r.points.iter().map(move |p| {
                vec![
                    r.round.to_string(),
                    r.t_s.to_string(),
                    p.name.clone(),
                    p.iops.to_string(),
                    p.mb_s.to_string(),
                    p.read_iops.to_string(),
                    p.write_iops.to_string(),
                    p.lat_mean_ns.to_string(),
                    p.lat_p99_ns.to_string(),
                    w.to_string(),
                ]
            })
        })
        .collect();
    csv_text(&STEADY_CSV, &records)
}

// ---------------------------------------------------------------------------------------
// sustained: wording

/// What was written: `64 GiB of the 64 GiB range in 1 MiB writes at QD 32`, time, start rate.
pub(crate) fn written_parts(s: &SustainedResult) -> Vec<String> {
    vec![
        format!(
            "{} of the {} range in {} writes at QD {}",
            fmt::bytes(s.bytes_written),
            fmt::bytes(s.range_bytes),
            fmt::bytes(s.bs),
            s.qd
        ),
        duration(s.seconds),
        format!("{} MB/s at the start", fmt::rate(s.start_mb_s)),
    ]
}

/// The cliff: `after 22.35 GiB (12.0 s): 2000.00 → 400.00 MB/s (below 70 % of the start)`,
/// or that there was none.
pub(crate) fn cliff_text(s: &SustainedResult) -> String {
    let below = percent(s.fraction * 100.0);
    match &s.cliff {
        Some(c) => format!(
            "after {} ({}): {} → {} MB/s (below {below} of the start)",
            fmt::bytes(c.offset_bytes),
            duration(c.t_s),
            fmt::rate(c.mb_s_before),
            fmt::rate(c.mb_s_after)
        ),
        None => format!("none: the rate never stayed below {below} of the start"),
    }
}

/// One re-test: `7.45 GiB at the fast rate (33.3 % of the cache) · 30 GiB in 37 s at
/// 812.00 MB/s`.
pub(crate) fn recovery_text(r: &Recovery) -> String {
    format!(
        "{} at the fast rate ({} of the cache) · {} in {} at {} MB/s",
        fmt::bytes(r.fast_bytes),
        percent(r.recovered_pct),
        fmt::bytes(r.bytes),
        duration(r.seconds),
        fmt::rate(r.mb_s)
    )
}

/// `after 300 s idle`, or that no pause was long enough; `None` without re-tests.
pub(crate) fn recovered_text(s: &SustainedResult) -> Option<String> {
    if s.recovery.is_empty() {
        return None;
    }
    Some(match s.recovered_after_s {
        Some(t) => format!("after {} idle", duration(t)),
        None => {
            let longest = s.recovery.iter().map(|r| r.idle_s).fold(0.0, f64::max);
            format!("not after the longest pause ({} idle)", duration(longest))
        }
    })
}

// ---------------------------------------------------------------------------------------
// sustained: human, Markdown, CSV

/// Human text of the sustained section ("" without one), ending in an empty line.
pub(crate) fn sustained_human(doc: &ResultDoc) -> String {
    let Some(s) = &doc.sustained else { return String::new() };
    let mut out = String::new();
    wrapped(&mut out, "sustained write: ", &written_parts(s));
    wrapped_text(&mut out, "cliff: ", &cliff_text(s));
    for r in &s.recovery {
        wrapped_text(&mut out, &format!("recovery after {} idle: ", duration(r.idle_s)), &recovery_text(r));
    }
    if let Some(t) = recovered_text(s) {
        line(&mut out, format!("recovered: {t}"));
    }
    if !s.verdict.trim().is_empty() {
        wrapped_text(&mut out, "verdict: ", &s.verdict);
    }
    line(&mut out, "");
    out
}

/// Markdown of the sustained section ("" without one), after an empty line.
pub(crate) fn sustained_markdown(doc: &ResultDoc) -> String {
    let Some(s) = &doc.sustained else { return String::new() };
    let mut out = String::from("\n## Sustained write\n\n");
    let _ = writeln!(out, "- **Written:** {}", written_parts(s).join(" · "));
    let _ = writeln!(out, "- **Cliff:** {}", cliff_text(s));
    if let Some(t) = recovered_text(s) {
        let _ = writeln!(out, "- **Recovered:** {t}");
    }
    if !s.verdict.trim().is_empty() {
        let _ = writeln!(out, "\n**Verdict:** {}", md_esc(s.verdict.trim()));
    }
    if !s.recovery.is_empty() {
        out.push_str("\n### Recovery after idle pauses\n\n");
        md_table_head(
            &mut out,
            &["Idle", "Fast bytes", "Recovered", "Written", "Time", "MB/s"],
            &[true, true, true, true, true, true],
        );
        for r in &s.recovery {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} | {} | {} |",
                duration(r.idle_s),
                fmt::bytes(r.fast_bytes),
                percent(r.recovered_pct),
                fmt::bytes(r.bytes),
                duration(r.seconds),
                fmt::rate(r.mb_s)
            );
        }
    }
    out
}

/// CSV of the sustained write, after an empty line ("" without one): one row per second.
pub(crate) fn sustained_csv(doc: &ResultDoc) -> String {
    let Some(s) = &doc.sustained else { return String::new() };
    let records: Vec<Vec<String>> = s
        .series
        .iter()
        .map(|p: &ProgressPoint| vec![p.t_s.to_string(), p.bytes.to_string(), p.mb_s.to_string()])
        .collect();
    format!("\n{}", csv_text(&["t_s", "bytes", "mb_s"], &records))
}

// ---------------------------------------------------------------------------------------
// tests

/// Documents of the snapshot tests, shared with the HTML tests.
#[cfg(test)]
pub(crate) mod fixtures {
    use stats::steady::{
        detect_cliff, Precondition, ProgressPoint, Purge, Recovery, Round, RoundPoint, SteadyPoint, SteadyResult,
        SteadyTable, SteadyWindow, SustainedResult, TableRow, TrackedCheck, Tracking, WindowCheck,
    };
    use stats::{HostInfo, ResultDoc, TargetInfo, TargetKind};

    const GIB: u64 = 1 << 30;

    fn target() -> TargetInfo {
        let mut t = TargetInfo::new("/dev/nvme1n1", TargetKind::Block, 64 * GIB);
        t.device = Some("nvme1n1".into());
        t.model = Some("WD Black SN850X 1TB".into());
        t.rotational = Some(false);
        t.physical_block = 4096;
        t
    }

    /// Points of the quick matrix (no 128 KiB 65/35) and what each does in a round, scaled
    /// per round by `scale[round]` (tracked points follow their tracking values).
    const POINTS: [(&str, u64, u8, f64); 5] = [
        ("4K 100/0", 4096, 100, 95_000.0),
        ("4K 65/35", 4096, 65, 41_000.0),
        ("4K 0/100", 4096, 0, 20_000.0),
        ("128K 100/0", 131_072, 100, 9_000.0),
        ("128K 0/100", 131_072, 0, 2_900.0),
    ];

    /// Points per round, from the tracked values where there are some.
    fn rounds(n: usize, write4k: &[f64], read128k: &[f64], p99: Option<&[f64]>, round_s: f64) -> Vec<Round> {
        (0..n)
            .map(|i| {
                let wobble = 1.0 + 0.01 * ((i % 3) as f64 - 1.0);
                let points = POINTS
                    .iter()
                    .map(|&(name, bs, read, iops)| {
                        let iops = match name {
                            "4K 0/100" => write4k[i],
                            "128K 100/0" => read128k[i],
                            _ => iops * wobble,
                        };
                        let r = iops * f64::from(read) / 100.0;
                        let lat_p99 = match (name, p99) {
                            ("4K 0/100", Some(p)) => p[i],
                            _ => 32.0 * 4.0 / iops * 1e9 * 2.5,
                        };
                        RoundPoint {
                            name: name.into(),
                            iops,
                            mb_s: iops * bs as f64 / 1e6,
                            read_iops: r,
                            write_iops: iops - r,
                            lat_mean_ns: (32.0 * 4.0 / iops * 1e9).round(),
                            lat_p99_ns: lat_p99.round(),
                        }
                    })
                    .collect();
                Round { round: i as u32 + 1, t_s: i as f64 * round_s * POINTS.len() as f64, points }
            })
            .collect()
    }

    /// The IOPS table: per point, the mean over rounds `first..=last` (1-based).
    fn table(rounds: &[Round], first: u32, last: u32) -> SteadyTable {
        let mean = |name: &str| {
            let v: Vec<f64> = rounds
                .iter()
                .filter(|r| r.round >= first && r.round <= last)
                .filter_map(|r| r.points.iter().find(|p| p.name == name).map(|p| p.iops))
                .collect();
            (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
        };
        SteadyTable {
            mixes: vec!["100/0".into(), "65/35".into(), "0/100".into()],
            rows: vec![
                TableRow { bs: 4096, iops: vec![mean("4K 100/0"), mean("4K 65/35"), mean("4K 0/100")] },
                TableRow { bs: 131_072, iops: vec![mean("128K 100/0"), None, mean("128K 0/100")] },
            ],
        }
    }

    fn checks(tracking: &[Tracking], first: u32, last: u32) -> Vec<TrackedCheck> {
        tracking
            .iter()
            .map(|t| TrackedCheck {
                name: t.name.clone(),
                check: WindowCheck::of(&t.values[first as usize - 1..last as usize]),
            })
            .collect()
    }

    fn precondition(mb_s: f64, passes_done: u32, range: u64) -> Precondition {
        let bytes = u64::from(passes_done) * range;
        let seconds = bytes as f64 / 1e6 / mb_s;
        let series = (1..=seconds.ceil() as u64)
            .map(|t| {
                let t = t as f64;
                let dip = if (t as u64) % 17 == 5 { 0.6 } else { 1.0 };
                ProgressPoint { t_s: t, bytes: ((mb_s * 1e6 * t) as u64).min(bytes), mb_s: mb_s * dip }
            })
            .collect();
        Precondition {
            passes_planned: 2,
            passes_done,
            bs: 131_072,
            qd: 32,
            bytes,
            seconds,
            mb_s,
            series,
            complete: passes_done == 2,
        }
    }

    fn points() -> Vec<SteadyPoint> {
        POINTS.iter().map(|&(name, bs, read_pct, _)| SteadyPoint { name: name.into(), bs, read_pct }).collect()
    }

    /// Eight rounds; every tracking variable passes in rounds 3–7 (the worked example of
    /// `stats::steady`), with p99 latency tracked too.
    pub(crate) fn steady_doc() -> ResultDoc {
        let mut d = ResultDoc::new("steady", "2026-12-01T09:00:00Z", HostInfo::default());
        d.target = Some(target());
        let write4k = [45000.0, 30000.0, 21000.0, 20100.0, 19800.0, 20500.0, 20300.0, 19900.0];
        let read128k = [9800.0, 9300.0, 9050.0, 9100.0, 9020.0, 9080.0, 9040.0, 9060.0];
        let p99 = [850e3, 1.9e6, 1.25e6, 1.18e6, 1.22e6, 1.2e6, 1.19e6, 1.21e6];
        let rounds = rounds(8, &write4k, &read128k, Some(&p99), 60.0);
        let tracking = vec![
            Tracking {
                name: "4K 0/100 IOPS".into(),
                point: "4K 0/100".into(),
                metric: "iops".into(),
                values: write4k.to_vec(),
            },
            Tracking {
                name: "128K 100/0 IOPS".into(),
                point: "128K 100/0".into(),
                metric: "iops".into(),
                values: read128k.to_vec(),
            },
            Tracking {
                name: "4K 0/100 p99".into(),
                point: "4K 0/100".into(),
                metric: "p99".into(),
                values: p99.to_vec(),
            },
        ];
        let range = 64 * GIB;
        d.steady = Some(SteadyResult {
            profile: "enterprise".into(),
            matrix: "quick".into(),
            qd: 32,
            threads: 4,
            active_range_pct: 100,
            range_bytes: range,
            active_bytes: range,
            round_time_s: 60.0,
            max_rounds: 25,
            purge: Purge {
                method: "secure-discard".into(),
                done: true,
                bytes: range,
                message: "the whole 64 GiB range was discarded (BLKSECDISCARD)".into(),
            },
            precondition: precondition(1950.0, 2, range),
            points: points(),
            skipped: vec!["512B 0/100 (below the target's 4 KiB direct-I/O unit)".into()],
            table: table(&rounds, 3, 7),
            window: Some(SteadyWindow { first_round: 3, last_round: 7, steady: true, checks: checks(&tracking, 3, 7) }),
            rounds,
            tracking,
            steady: true,
            latency: true,
            seconds: 2_571.4,
            verdict: "Steady state in rounds 3–7: 4K random writes settle at 20,340 IOPS, 55 % below the \
                      fresh drive's 45,000."
                .into(),
        });
        d
    }

    /// Ten rounds (at most ten) that never settle: the window is the last five, not steady.
    pub(crate) fn not_steady_doc() -> ResultDoc {
        let mut d = ResultDoc::new("steady", "2026-12-01T09:00:00Z", HostInfo::default());
        d.target = Some(target());
        let write4k = [38000.0, 16000.0, 23000.0, 15500.0, 22800.0, 15800.0, 21900.0, 16300.0, 22500.0, 15900.0];
        let read128k = [9400.0, 9100.0, 9050.0, 9120.0, 9010.0, 9090.0, 9060.0, 9030.0, 9080.0, 9040.0];
        let rounds = rounds(10, &write4k, &read128k, None, 30.0);
        let tracking = vec![
            Tracking {
                name: "4K 0/100 IOPS".into(),
                point: "4K 0/100".into(),
                metric: "iops".into(),
                values: write4k.to_vec(),
            },
            Tracking {
                name: "128K 100/0 IOPS".into(),
                point: "128K 100/0".into(),
                metric: "iops".into(),
                values: read128k.to_vec(),
            },
        ];
        let range = 16 * GIB;
        d.steady = Some(SteadyResult {
            profile: "client".into(),
            matrix: "quick".into(),
            qd: 16,
            threads: 1,
            active_range_pct: 75,
            range_bytes: range,
            active_bytes: range / 4 * 3,
            round_time_s: 30.0,
            max_rounds: 10,
            purge: Purge {
                method: "none".into(),
                done: false,
                bytes: 0,
                message: "the target is a file on a file system without hole punching; the rounds start from \
                          its current state"
                    .into(),
            },
            precondition: precondition(820.0, 1, range),
            points: points(),
            skipped: Vec::new(),
            table: table(&rounds, 6, 10),
            window: Some(SteadyWindow {
                first_round: 6,
                last_round: 10,
                steady: false,
                checks: checks(&tracking, 6, 10),
            }),
            rounds,
            tracking,
            steady: false,
            latency: false,
            seconds: 1_612.0,
            verdict: "Not steady after 10 rounds: 4K random writes still swing between 15,800 and 22,500 IOPS \
                      (range 36 % of the mean, limit 20 %)."
                .into(),
        });
        d
    }

    /// Per-second progress of a write of `total` bytes at `(seconds, MB/s)` segments, then at
    /// `tail` MB/s until everything is written (the last point may cover part of a second).
    fn write_series(total: u64, segments: &[(f64, f64)], tail: f64) -> Vec<ProgressPoint> {
        let rate_at = |t: f64| {
            let mut from = 0.0;
            for &(secs, rate) in segments {
                if t < from + secs {
                    return rate;
                }
                from += secs;
            }
            tail
        };
        let (mut out, mut cs, mut bytes) = (Vec::new(), 0u64, 0f64);
        while bytes < total as f64 && cs < 10_000_000 {
            let (start, from) = (bytes, cs);
            while cs - from < 100 && bytes < total as f64 {
                bytes = (bytes + rate_at(cs as f64 / 100.0) * 1e4).min(total as f64);
                cs += 1;
            }
            let dt = (cs - from) as f64 / 100.0;
            out.push(ProgressPoint { t_s: cs as f64 / 100.0, bytes: bytes as u64, mb_s: (bytes - start) / 1e6 / dt });
        }
        out
    }

    /// A `mark` document's sustained section: a cliff after about 22 GiB, two re-tests.
    pub(crate) fn sustained_cliff() -> SustainedResult {
        let range = 64 * GIB;
        let series = write_series(range, &[(11.6, 2000.0)], 400.0);
        let (start, cliff) = detect_cliff(&series, 0.7);
        let cache = cliff.map_or(0, |c| c.offset_bytes);
        // Each re-test rewrites the first 1.5 × the cache.
        let retest = |idle: f64, share: f64| {
            let fast_bytes = (cache as f64 * share) as u64;
            let series = write_series(cache / 2 * 3, &[(fast_bytes as f64 / 2000e6, 2000.0)], 400.0);
            let last = series.last().copied().unwrap_or_default();
            Recovery {
                idle_s: idle,
                bytes: last.bytes,
                seconds: last.t_s,
                mb_s: last.bytes as f64 / 1e6 / last.t_s,
                fast_bytes,
                recovered_pct: share * 100.0,
                series,
            }
        };
        let last = series.last().copied().unwrap_or_default();
        SustainedResult {
            bs: 1 << 20,
            qd: 32,
            range_bytes: range,
            bytes_written: last.bytes,
            seconds: last.t_s,
            fraction: 0.7,
            series,
            start_mb_s: start,
            cliff,
            recovery: vec![retest(60.0, 0.334), retest(300.0, 0.958)],
            recovered_after_s: Some(300.0),
            verdict: "Writes fall from 2000 MB/s to 400 MB/s after 21.6 GiB: the write cache holds about 21 GiB; \
                      it is back after 5 min idle."
                .into(),
        }
    }

    /// A `run --sustained` section of a disk without a cliff.
    pub(crate) fn sustained_flat() -> SustainedResult {
        let series = write_series(8 * GIB, &[(10.0, 250.0), (20.0, 235.0)], 210.0);
        let (start, cliff) = detect_cliff(&series, 0.7);
        let last = series.last().copied().unwrap_or_default();
        SustainedResult {
            bs: 1 << 20,
            qd: 4,
            range_bytes: 8 * GIB,
            bytes_written: last.bytes,
            seconds: last.t_s,
            fraction: 0.7,
            series,
            start_mb_s: start,
            cliff,
            recovery: Vec::new(),
            recovered_after_s: None,
            verdict: "No write cliff: the whole range was written at 210–250 MB/s.".into(),
        }
    }

    pub(crate) fn mark_with_sustained() -> ResultDoc {
        let mut d = ResultDoc::new("mark", "2026-12-01T09:00:00Z", HostInfo::default());
        d.target = Some(target());
        d.sustained = Some(sustained_cliff());
        d
    }
}

#[cfg(test)]
mod tests {
    use super::fixtures::*;
    use super::*;
    use stats::HostInfo;

    #[test]
    fn human_steady() {
        insta::assert_snapshot!(human(&steady_doc()));
    }

    #[test]
    fn human_not_steady() {
        insta::assert_snapshot!(human(&not_steady_doc()));
    }

    #[test]
    fn markdown_steady() {
        insta::assert_snapshot!(markdown(&steady_doc()));
    }

    #[test]
    fn markdown_not_steady() {
        insta::assert_snapshot!(markdown(&not_steady_doc()));
    }

    #[test]
    fn human_sustained_cliff() {
        let mut d = ResultDoc::new("mark", "2026-12-01T09:00:00Z", HostInfo::default());
        d.sustained = Some(sustained_cliff());
        insta::assert_snapshot!(sustained_human(&d));
    }

    #[test]
    fn human_sustained_no_cliff() {
        let mut d = ResultDoc::new("run", "2026-12-01T09:00:00Z", HostInfo::default());
        d.sustained = Some(sustained_flat());
        insta::assert_snapshot!(sustained_human(&d));
    }

    #[test]
    fn markdown_sustained() {
        let mut d = ResultDoc::new("mark", "2026-12-01T09:00:00Z", HostInfo::default());
        d.sustained = Some(sustained_cliff());
        let mut flat = d.clone();
        flat.sustained = Some(sustained_flat());
        insta::assert_snapshot!(format!("{}\n---\n{}", sustained_markdown(&d), sustained_markdown(&flat)));
    }

    #[test]
    fn csv_rows() {
        let text = csv(&steady_doc());
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], STEADY_CSV.join(","));
        // Eight rounds of five points.
        assert_eq!(lines.len(), 1 + 8 * 5);
        assert!(lines[1].starts_with("1,0,4K 100/0,"), "{}", lines[1]);
        assert!(lines[1].ends_with(",false"));
        assert!(lines[11].starts_with("3,600,4K 100/0,") && lines[11].ends_with(",true"), "{}", lines[11]);
        assert!(lines[40].starts_with("8,2100,128K 0/100,") && lines[40].ends_with(",false"), "{}", lines[40]);

        let mut d = ResultDoc::new("run", "2026-12-01T09:00:00Z", HostInfo::default());
        d.sustained = Some(sustained_flat());
        let text = sustained_csv(&d);
        assert!(text.starts_with("\nt_s,bytes,mb_s\n1,250000000,250\n"), "{text}");
        // 8 GiB at 250, 235 and 210 MB/s: 36.6 s, the last second a part of one.
        assert_eq!(text.lines().count(), 2 + 37);
    }

    #[test]
    fn nothing_without_the_sections() {
        let d = ResultDoc::new("run", "2026-12-01T09:00:00Z", HostInfo::default());
        let all = human(&d) + &markdown(&d) + &csv(&d);
        assert_eq!(all + &sustained_human(&d) + &sustained_markdown(&d) + &sustained_csv(&d), "");
    }

    #[test]
    fn durations() {
        let got: Vec<String> = [0.5, 45.0, 70.5, 120.0, 750.0, 3600.0, 7500.0].iter().map(|&s| duration(s)).collect();
        assert_eq!(got, ["500 ms", "45 s", "70.5 s", "2 min", "12 min 30 s", "1 h", "2 h 5 min"]);
    }

    /// A steady document renders through every format's dispatch: its section, no empty job
    /// table; a sustained section follows the job figures.
    #[test]
    fn dispatch() {
        use crate::{render, Format};
        let d = steady_doc();
        let h = render(&d, Format::Human);
        assert!(h.starts_with("diskmeter ") && h.contains("\nsteady state: SNIA PTS IOPS"), "{h}");
        assert!(!h.contains("no completed I/O"), "{h}");
        let md = render(&d, Format::Markdown);
        assert!(md.contains("\n## Steady state (SNIA PTS IOPS)\n") && !md.contains("| Job |"), "{md}");
        let c = render(&d, Format::Csv);
        assert!(c.starts_with("round,t_s,point,"), "{c}");

        let d = mark_with_sustained();
        let h = render(&d, Format::Human);
        assert!(h.contains("│ Read") || h.contains("Read"), "{h}");
        assert!(h.contains("\nsustained write: 64 GiB of the 64 GiB range"), "{h}");
        let md = render(&d, Format::Markdown);
        assert!(md.contains("| Test | Read MB/s") && md.contains("\n## Sustained write\n"), "{md}");
        let c = render(&d, Format::Csv);
        assert!(c.starts_with("name,direction,") && c.contains("\n\nt_s,bytes,mb_s\n"), "{c}");
        for f in [Format::Human, Format::Json, Format::Csv, Format::Markdown, Format::Html] {
            assert!(render(&steady_doc(), f).ends_with('\n'), "{f:?}");
            assert!(render(&d, f).ends_with('\n'), "{f:?}");
        }
    }

    /// Documents edited by hand: windows outside the rounds, ragged tables and series, no
    /// tracking variables. Nothing panics and every format ends in a newline.
    #[test]
    fn inconsistent_documents_render() {
        use crate::{render, Format};
        let mut d = steady_doc();
        let s = d.steady.as_mut().expect("steady");
        s.window.as_mut().expect("window").first_round = 40;
        s.window.as_mut().expect("window").last_round = 2;
        s.tracking[0].values.truncate(3);
        s.tracking[1].values.extend([1.0; 30]);
        s.table.rows[0].iops.clear();
        s.table.rows[1].iops.extend([Some(1.0); 8]);
        s.rounds.truncate(2);
        s.precondition.series.clear();
        let mut e = d.clone();
        let s = e.steady.as_mut().expect("steady");
        s.tracking.clear();
        s.window = None;
        s.table = Default::default();
        let mut f = mark_with_sustained();
        let s = f.sustained.as_mut().expect("sustained");
        s.series.clear();
        s.recovery[0].series.clear();
        s.cliff.as_mut().expect("cliff").offset_bytes = u64::MAX;
        for doc in [&d, &e, &f] {
            for fmt in [Format::Human, Format::Json, Format::Csv, Format::Markdown, Format::Html] {
                assert!(render(doc, fmt).ends_with('\n'), "{fmt:?}");
            }
        }
    }
}
