//! Human-readable text: the `run` tables and the `mark` card.

use std::fmt::Write as _;

use stats::{DirStats, DocKind, JobResult, ResultDoc, TargetInfo};

use crate::fmt;

pub(crate) fn render(doc: &ResultDoc) -> String {
    if doc.profile.is_some() {
        return crate::profile_text::human(doc);
    }
    let mut out = String::new();
    match doc.kind() {
        DocKind::Cache => return crate::cache_text::human(doc) + &crate::cluster_text::human(doc),
        DocKind::Mark => mark(doc, &mut out),
        DocKind::Sla => {
            // The search first; the best point's full figures follow.
            head(doc, &mut out);
            line(&mut out, "");
            out.push_str(&crate::sla_text::human(doc));
            for r in &doc.results {
                line(&mut out, "");
                run_result(r, &mut out);
            }
            line(&mut out, "");
        }
        DocKind::Surface => {
            head(doc, &mut out);
            out.push_str(&crate::surface_text::human(doc));
            line(&mut out, "");
        }
        DocKind::Compare => {
            head(doc, &mut out);
            line(&mut out, "");
            out.push_str(&crate::compare_text::human(doc));
            line(&mut out, "");
        }
        DocKind::Run => run(doc, &mut out),
    }
    // Several ranks: what each measured, after the merged figures.
    out.push_str(&crate::cluster_text::human(doc));
    // A replay: each kind beside the trace's own figures, and how faithfully it was issued.
    out.push_str(&crate::replay_text::human(doc));
    // `--sustained`: the write cliff and its recovery, after the job figures.
    out.push_str(&crate::steady_text::sustained_human(doc));
    // `--verify`: what was checked and every failure, diagnosed.
    out.push_str(&crate::verify_text::human(doc));
    footer(doc, &mut out);
    out
}

/// Maximum line width of the human output.
const WIDTH: usize = 100;

// `write!` into a String cannot fail; these helpers keep the call sites free of results.
fn line(out: &mut String, s: impl AsRef<str>) {
    out.push_str(s.as_ref());
    out.push('\n');
}

fn title(doc: &ResultDoc) -> String {
    format!("{} {} · {} · {}", doc.tool.name, doc.tool.version, doc.command, fmt::date(&doc.started_at))
}

fn partial_line(doc: &ResultDoc) -> Option<String> {
    if !doc.partial {
        return None;
    }
    Some(format!("PARTIAL RESULTS ({}) — figures cover only the part that completed", fmt::partial_why(doc)))
}

fn target_facts(t: &TargetInfo, mark: bool) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    v.push(("target", format!("{}  ({})", t.path, fmt::target_what(t))));
    let fs = t.filesystem.clone().unwrap_or_else(|| "-".to_string());
    if mark {
        let mut dev = vec![fmt::device(t), fmt::media(t)];
        if let Some(f) = &t.filesystem {
            dev.push(f.clone());
        }
        v.push(("device", dev.join(" · ")));
    } else {
        v.push(("device", fmt::device(t)));
        let st = &t.state;
        let mut fs = fs;
        if let Some(o) = &st.mount_options {
            fs.push_str(&format!(" · mounted {o}"));
        }
        if let (Some(size), Some(free)) = (st.fs_size_bytes, st.fs_free_bytes) {
            if size > 0 {
                fs.push_str(&format!(" · {:.0} % full", size.saturating_sub(free) as f64 * 100.0 / size as f64));
            }
        }
        v.push(("filesystem", fs));
        if !st.stack.is_empty() {
            v.push(("stack", st.stack.join(" → ")));
        }
        let sched = t.scheduler.as_deref().unwrap_or("unknown");
        v.push(("media", format!("{} · scheduler {sched} · blocks {}", fmt::media(t), fmt::blocks(t))));
    }
    let d = &t.disk;
    let ident: Vec<String> = [
        d.serial.as_ref().map(|s| format!("serial {s}")),
        d.wwn.as_ref().map(|w| format!("wwn {w}")),
        d.firmware.as_ref().map(|f| format!("firmware {f}")),
        d.link.as_ref().map(|l| format!("link {l}")),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !ident.is_empty() {
        v.push(("identity", ident.join(" · ")));
    }
    v
}

fn facts(out: &mut String, rows: &[(&str, String)]) {
    let w = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    for (k, v) in rows {
        line(out, format!("{k:<w$}  {v}"));
    }
}

fn footer(doc: &ResultDoc, out: &mut String) {
    for r in &doc.results {
        if let Some(e) = &r.error {
            let at = e.offset.map(|o| format!(" (offset {o})")).unwrap_or_default();
            let first = format!("error[{}] in {}: ", e.kind, r.name);
            text(out, &first, &format!("{}{at}", e.message));
        }
    }
    if let Some(h) = &doc.history {
        text(out, "history: ", &crate::history_text::history_line(h));
    }
    for w in &doc.warnings {
        text(out, &format!("warning[{}]: ", w.code), &w.message);
    }
    // Near a threshold and not given (no earlier comparable run gave it): named, not hidden.
    for b in doc.borderline.iter().filter(|b| b.held_by.is_none()) {
        text(out, &format!("near[{}]: ", b.code), &format!("{} (inside the margin band, not given)", b.message));
    }
    if let Some(e) = &doc.error {
        if !doc.partial {
            text(out, &format!("error[{}]: ", e.kind), &e.message);
        }
    }
    if let Some(p) = partial_line(doc) {
        line(out, p);
    }
}

/// A labelled message, wrapped at [`WIDTH`] with a hanging indent.
fn text(out: &mut String, first: &str, msg: &str) {
    for l in fmt::wrap_text(first, "    ", msg, WIDTH) {
        line(out, l);
    }
}

// ---------------------------------------------------------------------------------------
// run

const RUN_COLS: [&str; 9] = ["IOPS", "MB/s", "MiB/s", "mean", "p50", "p99", "p99.9", "max", "QD(mean)"];

fn run_row(label: &str, d: &DirStats) -> String {
    let cells = fmt::dir_cells(d);
    let mut s = format!("  {label:<6}");
    for c in cells {
        let _ = write!(s, "{c:>10}");
    }
    s
}

fn run_result(r: &JobResult, out: &mut String) {
    let first = format!("{}: ", r.name);
    for l in fmt::wrap(&first, "    ", &fmt::result_parts(r), " · ", WIDTH) {
        line(out, l);
    }
    let mut head = format!("  {:<6}", "");
    for c in RUN_COLS {
        let _ = write!(head, "{c:>10}");
    }
    line(out, head);
    let mut rows = 0;
    for (label, d) in [("read", &r.read), ("write", &r.write)] {
        if let Some(d) = d {
            rows += 1;
            line(out, run_row(label, d));
        }
    }
    if rows == 0 {
        line(out, "  (no completed I/O)");
    }
    for (label, d) in [("read", &r.read), ("write", &r.write)] {
        if let Some(b) = d.as_ref().and_then(|d| d.bound.as_deref()) {
            line(out, format!("  {label}: this figure is the {b}, not the disk's"));
        }
    }
    for b in &r.startup_burst {
        line(
            out,
            format!(
                "  {}: sustained {} IOPS without the first {:.1} s, which ran at {} IOPS (whole window {} IOPS)",
                b.direction,
                fmt::iops(b.sustained_iops),
                b.first_s,
                fmt::iops(b.first_iops),
                fmt::iops(b.whole_iops)
            ),
        );
    }
    if let Some(w) = &r.whole_bursts {
        let whole: Vec<String> = [("read", w.whole_read_iops), ("write", w.whole_write_iops)]
            .iter()
            .filter_map(|(d, v)| v.map(|v| format!("{d} {} IOPS", fmt::iops(v))))
            .collect();
        let dropped = match w.dropped {
            0 => String::new(),
            n => format!(", {n} larger first burst{} left out", if n > 1 { "s" } else { "" }),
        };
        line(
            out,
            format!(
                "  completions came in bursts every {:.0} ms (a limiter's slices): counted over {} whole bursts \
                 ({:.2}–{:.2} s{dropped}); the whole window: {}",
                w.period_ms,
                w.bursts,
                w.start_s,
                w.end_s,
                whole.join(", ")
            ),
        );
    }
    if !r.block_sizes.is_empty() {
        text(out, "  block sizes: ", &fmt::block_size_split(&r.block_sizes));
    }
    let mut extra = format!(
        "  cpu user {:.1} % · sys {:.1} % · busiest worker {:.1} %",
        r.cpu.user_pct, r.cpu.sys_pct, r.cpu.max_worker_pct
    );
    if r.cpu.poll_us > 0 {
        // The process's figures include polling; the worker's leaves it out.
        let _ = write!(extra, " · polled ≤ {} µs per wait (not in busiest)", fmt::group(r.cpu.poll_us));
    }
    if r.fsyncs > 0 {
        let _ = write!(extra, " · {} fsyncs", fmt::group(r.fsyncs));
    }
    line(out, extra);
    flow_lines(r, out);
    if let Some(v) = &r.device_view {
        text(out, "  ", &v.line());
    }
}

/// What fio's run-flow options did to a job: a late start, errors gone on after, the
/// steady-state check, the log files.
fn flow_lines(r: &JobResult, out: &mut String) {
    if let Some(s) = r.start_s {
        line(out, format!("  started {s:.2} s after its group"));
    }
    if r.errors > 0 {
        let first = r.first_error.as_ref().map(|e| format!("; the first: {}", e.message)).unwrap_or_default();
        text(
            out,
            "  ",
            &format!("{} I/O errors counted and gone on after (continue_on_error){first}", fmt::group(r.errors)),
        );
    }
    if let Some(ss) = &r.steadystate {
        let what = match ss.attained_at_s {
            Some(t) if ss.attained => format!("attained after {t:.0} s of the measured window"),
            _ => "not attained".to_string(),
        };
        line(out, format!("  steady state {}: {what}", ss.criterion));
    }
    if !r.log_files.is_empty() {
        text(out, "  ", &format!("fio logs: {}", r.log_files.join(", ")));
    }
}

/// Title, target facts and the partial-result line.
fn head(doc: &ResultDoc, out: &mut String) {
    line(out, title(doc));
    let rows = match &doc.target {
        Some(t) => target_facts(t, false),
        None => vec![("target", "-".to_string())],
    };
    facts(out, &rows);
    if let Some(p) = partial_line(doc) {
        line(out, p);
    }
}

fn run(doc: &ResultDoc, out: &mut String) {
    line(out, title(doc));
    let mut rows = match &doc.target {
        Some(t) => target_facts(t, false),
        None => vec![("target", "-".to_string())],
    };
    if let Some(r) = doc.results.first() {
        rows.push(("I/O", fmt::io_mode(&r.spec)));
    }
    facts(out, &rows);
    if let Some(p) = partial_line(doc) {
        line(out, p);
    }
    if doc.replay.is_some() {
        // The replay section has each pass's figures; the device's own counters come here.
        for r in doc.results.iter().filter(|r| r.device_view.is_some()) {
            if let Some(v) = &r.device_view {
                text(out, &format!("{}, device: ", r.name), &v.line());
            }
        }
        return;
    }
    if doc.steady.is_some() {
        // `steady`: the PTS rounds and their table stand for the jobs.
        line(out, "");
        out.push_str(&crate::steady_text::human(doc));
        line(out, "");
        return;
    }
    for r in &doc.results {
        line(out, "");
        run_result(r, out);
    }
    line(out, "");
}

// ---------------------------------------------------------------------------------------
// mark: the CrystalDiskMark card

/// Inner width of a Read/Write cell.
const CELL: usize = 40;

fn hrule(out: &mut String, label_w: usize, left: char, mid: char, right: char) {
    let mut s = String::new();
    s.push(left);
    s.push_str(&"─".repeat(label_w + 2));
    s.push(mid);
    s.push_str(&"─".repeat(CELL + 2));
    s.push(mid);
    s.push_str(&"─".repeat(CELL + 2));
    s.push(right);
    line(out, s);
}

fn center(s: &str, w: usize) -> String {
    format!("{s:^w$}")
}

/// The two lines of one Read or Write cell.
fn mark_cell(d: Option<&DirStats>) -> [String; 2] {
    match d {
        Some(d) => [
            format!("{:>CELL$}", format!("{} MB/s", fmt::rate(d.mb_s))),
            format!(
                "{:>9} IOPS  avg {:>7}  p99 {:>7}",
                fmt::iops(d.iops),
                fmt::lat(d.lat_ns.mean),
                fmt::lat(d.lat_ns.p99 as f64)
            ),
        ],
        None => [format!("{:>CELL$}", "-"), String::new()],
    }
}

fn mark(doc: &ResultDoc, out: &mut String) {
    line(out, title(doc));
    let mut rows = match &doc.target {
        Some(t) => target_facts(t, true),
        None => vec![("target", "-".to_string())],
    };
    let passes = doc.results.iter().map(|r| r.passes.len()).max().unwrap_or(0).max(1);
    if let Some(r) = doc.results.first() {
        let size = r
            .spec
            .size
            .or(doc.target.as_ref().map(|t| t.size_bytes))
            .map(fmt::bytes)
            .unwrap_or_else(|| "-".to_string());
        let p = if passes == 1 { "pass" } else { "passes" };
        rows.push((
            "test",
            format!(
                "{size} · {passes} {p} × {} · {} · {}",
                fmt::secs(r.spec.runtime.as_secs_f64()),
                fmt::io_mode(&r.spec),
                fmt::data(&r.spec.data)
            ),
        ));
    }
    let how = doc.results.iter().find_map(|r| r.aggregate);
    rows.push(("figures", fmt::aggregation(how, passes)));
    facts(out, &rows);
    if let Some(p) = partial_line(doc) {
        line(out, p);
    }
    line(out, "");

    let labels: Vec<(String, String)> = doc
        .results
        .iter()
        .map(|r| match r.name.split_once(' ') {
            Some((a, b)) => (a.to_string(), b.trim().to_string()),
            None => (r.name.clone(), String::new()),
        })
        .collect();
    let label_w = labels.iter().map(|(a, b)| a.chars().count().max(b.chars().count())).max().unwrap_or(0).max(7);

    hrule(out, label_w, '┌', '┬', '┐');
    line(out, format!("│ {:<label_w$} │ {} │ {} │", "", center("Read", CELL), center("Write", CELL)));
    for (r, (a, b)) in doc.results.iter().zip(&labels) {
        hrule(out, label_w, '├', '┼', '┤');
        let rc = mark_cell(r.read.as_ref());
        let wc = mark_cell(r.write.as_ref());
        line(out, format!("│ {a:<label_w$} │ {:<CELL$} │ {:<CELL$} │", rc[0], wc[0]));
        line(out, format!("│ {b:<label_w$} │ {:<CELL$} │ {:<CELL$} │", rc[1], wc[1]));
    }
    hrule(out, label_w, '└', '┴', '┘');
    line(out, "MB/s = 10^6 B/s · avg / p99 = mean / 99th-percentile completion latency");
    // What the device itself saw, per test (its own counters over the measured passes).
    let views: Vec<(&str, &stats::DeviceView)> =
        doc.results.iter().filter_map(|r| r.device_view.as_ref().map(|v| (r.name.as_str(), v))).collect();
    if let Some((_, v)) = views.first().filter(|(_, v)| v.unavailable.is_some()) {
        line(out, v.line());
    } else {
        for (name, v) in views {
            text(out, &format!("{name}: "), &v.line());
        }
    }
    line(out, "");
}
