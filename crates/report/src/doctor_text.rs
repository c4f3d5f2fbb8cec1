//! `diskmeter doctor` as human text: the target, the stack the checks walked, the causes
//! (most likely first) with their cost, evidence and fix, the probe's and the load's figures,
//! and every check with its status. Plain text, no colour codes; lines wrap at [`WIDTH`].
//!
//! The wording shared with the HTML page (`html::doctor`) lives here too.

use doctor::model::{Cause, DoctorDoc, Evidence, LoadDevice, LoadProcess, LoadView, ProbeView, Severity, Status};

use crate::fmt;
use crate::sla_text::{align, Row};

/// Maximum line width (as in `human.rs`).
const WIDTH: usize = 100;

/// Processes named in the load summary (the JSON keeps them all).
pub(crate) const PROCESSES: usize = 5;

/// Hanging indent of a cause's `cost:`, `evidence:` and `fix:` lines, after its number.
const LABEL_W: usize = "evidence: ".len();

fn line(out: &mut String, s: impl AsRef<str>) {
    out.push_str(s.as_ref());
    out.push('\n');
}

/// Text read from the system (sysfs, smartctl, the kernel log) with its control characters
/// replaced, so it cannot drive the terminal.
fn clean(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// Wrap `text` after `first` (continued after `cont`) at spaces, followed by `tail` two
/// spaces after it (a source or a reason in parentheses), wrapped the same way.
fn wrap_with_tail(first: &str, cont: &str, text: &str, tail: &str, width: usize) -> Vec<String> {
    let words = text
        .split_whitespace()
        .map(|w| (" ", w))
        .chain(tail.split_whitespace().enumerate().map(|(i, w)| (if i == 0 { "  " } else { " " }, w)));
    let mut lines = Vec::new();
    let mut cur = first.to_string();
    let mut empty = true;
    for (sep, w) in words {
        if empty {
            cur.push_str(w);
            empty = false;
        } else if cur.chars().count() + sep.len() + w.chars().count() <= width {
            cur.push_str(sep);
            cur.push_str(w);
        } else {
            lines.push(std::mem::replace(&mut cur, format!("{cont}{w}")));
        }
    }
    lines.push(cur);
    lines
}

// ---------------------------------------------------------------------------------------
// Wording shared with the HTML page

/// `HIGH`, `MEDIUM`, …: how the text tags a cause.
pub(crate) fn severity_word(s: Severity) -> String {
    s.as_str().to_ascii_uppercase()
}

/// `passed`, `FOUND`, `not run`: a check's status as the text lists it.
pub(crate) fn status_word(s: Status) -> &'static str {
    match s {
        Status::Passed => "passed",
        Status::Found => "FOUND",
        Status::NotRun => "not run",
    }
}

/// Whether doctor ran as root, for the header.
pub(crate) fn root_words(doc: &DoctorDoc) -> &'static str {
    if doc.root {
        "run as root"
    } else {
        "not run as root (some checks need it)"
    }
}

/// The line under the title: `target /srv/data · device sda · run as root`.
pub(crate) fn header_pieces(doc: &DoctorDoc) -> Vec<String> {
    vec![
        format!("target {}", clean(&doc.target)),
        match &doc.device {
            Some(d) => format!("device {}", clean(d)),
            None => "no block device found".to_string(),
        },
        root_words(doc).to_string(),
    ]
}

/// How many checks did not run, as a sentence ("" when all ran).
pub(crate) fn not_run_note(doc: &DoctorDoc) -> String {
    let n = doc.checks.iter().filter(|c| c.status == Status::NotRun).count();
    match n {
        0 => String::new(),
        1 => "1 check did not run (see Checks): a cause may hide there.".to_string(),
        n => format!("{n} checks did not run (see Checks): a cause may hide there."),
    }
}

/// What to say when no check found a cause: the disk's speed is what it is, and what else to
/// try (`--probe`, `--load 10s`) when the document lacks them.
pub(crate) fn no_cause_text(doc: &DoctorDoc) -> String {
    let mut s = "No check found a cause: as far as these checks can tell, the disk's speed is what it is.".to_string();
    match (doc.probe.is_some(), doc.load.is_some()) {
        (false, false) => s.push_str(
            " --probe measures it (latency floor and throughput, read-only) and --load 10s watches what \
             else uses the disk.",
        ),
        (false, true) => s.push_str(" --probe measures it (latency floor and throughput, read-only)."),
        (true, false) => s.push_str(" --load 10s watches what else uses the disk."),
        (true, true) => {}
    }
    s
}

/// `3 passed · 2 found · 1 not run`.
pub(crate) fn checks_tally(doc: &DoctorDoc) -> String {
    let count = |s: Status| doc.checks.iter().filter(|c| c.status == s).count();
    format!("{} passed · {} found · {} not run", count(Status::Passed), count(Status::Found), count(Status::NotRun))
}

/// `sata_spd = 3.0 Gbps` and its source (`""` when none is named).
pub(crate) fn evidence_parts(e: &Evidence) -> (String, String) {
    let source = if e.source.trim().is_empty() { String::new() } else { format!("({})", clean(&e.source)) };
    (format!("{} = {}", clean(&e.name), clean(&e.value)), source)
}

/// The probe's figures as `(what, rate, latencies)` rows.
pub(crate) fn probe_rows(p: &ProbeView) -> Vec<[String; 3]> {
    let lat = |us: f64| fmt::lat(us * 1e3);
    vec![
        [
            "4 KiB random read, QD1".to_string(),
            format!("{} IOPS", fmt::iops(p.qd1_iops)),
            format!("mean {} · p99 {}", lat(p.qd1_mean_us), lat(p.qd1_p99_us)),
        ],
        [
            "4 KiB random read, QD32".to_string(),
            format!("{} IOPS", fmt::iops(p.qd32_iops)),
            format!("mean {}", lat(p.qd32_mean_us)),
        ],
        ["1 MiB sequential read, QD8".to_string(), format!("{} MB/s", fmt::rate_text(p.seq_mb_s)), String::new()],
    ]
}

/// `Probe of /dev/sda (read-only)`.
pub(crate) fn probe_heading(p: &ProbeView) -> String {
    format!("Probe of {} (read-only)", clean(&p.target))
}

/// `Load over 10 s; some task waited on I/O 12.3 % of the time (PSI)`.
pub(crate) fn load_heading(l: &LoadView) -> String {
    let mut s = format!("Load over {}", fmt::secs(l.seconds));
    if let Some(p) = l.io_pressure_some_pct {
        s.push_str(&format!("; some task waited on I/O {p:.1} % of the time (PSI)"));
    }
    s
}

/// Columns of the per-device load table (as `top` shows them).
pub(crate) const LOAD_COLS: [&str; 8] =
    ["device", "read/s", "write/s", "read MB/s", "write MB/s", "util", "await", "aqu-sz"];

pub(crate) fn load_cells(d: &LoadDevice) -> [String; 8] {
    [
        clean(&d.name),
        fmt::iops(d.read_iops),
        fmt::iops(d.write_iops),
        fmt::rate(d.read_mb_s),
        fmt::rate(d.write_mb_s),
        format!("{:.0} %", d.util_pct),
        fmt::lat(d.await_ms * 1e6),
        format!("{:.2}", d.aqu_sz),
    ]
}

/// `2345 rsync (read 1.20 GiB, wrote 12 KiB)`.
pub(crate) fn process_text(p: &LoadProcess) -> String {
    format!("{} {} (read {}, wrote {})", p.pid, clean(&p.command), fmt::bytes(p.read_bytes), fmt::bytes(p.write_bytes))
}

// ---------------------------------------------------------------------------------------
// The text

/// The human output of `diskmeter doctor`. Ends in a newline.
pub fn render(doc: &DoctorDoc) -> String {
    let mut out = String::new();
    line(
        &mut out,
        format!("{} {} · doctor · {}", clean(&doc.tool.name), clean(&doc.tool.version), fmt::date(&doc.started_at)),
    );
    for l in fmt::wrap("", "  ", &header_pieces(doc), " · ", WIDTH) {
        line(&mut out, l);
    }
    stack(doc, &mut out);
    causes(doc, &mut out);
    if let Some(p) = &doc.probe {
        probe(p, &mut out);
    }
    if let Some(l) = &doc.load {
        load(l, &mut out);
    }
    checks(doc, &mut out);
    out
}

fn stack(doc: &DoctorDoc, out: &mut String) {
    line(out, "");
    line(out, "Stack, top first");
    if doc.stack.is_empty() {
        line(out, "  (no block device under the target)");
        return;
    }
    let rows: Vec<Row> =
        doc.stack.iter().map(|l| Row::Cells(vec![clean(&l.role), clean(&l.name), clean(&l.detail)])).collect();
    for l in align(&rows, &[], "  ") {
        line(out, l);
    }
}

fn causes(doc: &DoctorDoc, out: &mut String) {
    line(out, "");
    line(out, "Causes, most likely first");
    if doc.causes.is_empty() {
        for l in fmt::wrap_text("  ", "  ", &no_cause_text(doc), WIDTH) {
            line(out, l);
        }
        let note = not_run_note(doc);
        if !note.is_empty() {
            for l in fmt::wrap_text("  ", "  ", &note, WIDTH) {
                line(out, l);
            }
        }
        return;
    }
    let digits = doc.causes.len().to_string().len();
    for (i, c) in doc.causes.iter().enumerate() {
        if i > 0 {
            line(out, "");
        }
        cause(c, i + 1, digits, out);
    }
}

/// One cause: `1. [HIGH] code (device): summary`, then its cost, evidence and fix under it.
fn cause(c: &Cause, rank: usize, digits: usize, out: &mut String) {
    let first = format!("  {rank:>digits$}. ");
    let indent = " ".repeat(first.chars().count());
    let device = c.device.as_deref().map(|d| format!(" ({})", clean(d))).unwrap_or_default();
    let head = format!("[{}] {}{device}: {}", severity_word(c.severity), clean(&c.code), clean(&c.summary));
    for l in fmt::wrap_text(&first, &indent, &head, WIDTH) {
        line(out, l);
    }
    let cont = format!("{indent}{}", " ".repeat(LABEL_W));
    let label = |name: &str| format!("{indent}{:<LABEL_W$}", format!("{name}:"));
    if let Some(cost) = &c.cost {
        for l in fmt::wrap_text(&label("cost"), &cont, &clean(cost), WIDTH) {
            line(out, l);
        }
    }
    for (i, e) in c.evidence.iter().enumerate() {
        let first = if i == 0 { label("evidence") } else { cont.clone() };
        let (what, source) = evidence_parts(e);
        for l in wrap_with_tail(&first, &cont, &what, &source, WIDTH) {
            line(out, l);
        }
    }
    for l in fmt::wrap_text(&label("fix"), &cont, &clean(&c.fix), WIDTH) {
        line(out, l);
    }
}

fn probe(p: &ProbeView, out: &mut String) {
    line(out, "");
    line(out, probe_heading(p));
    let rows: Vec<Row> = probe_rows(p).into_iter().map(|r| Row::Cells(r.to_vec())).collect();
    for l in align(&rows, &[false, true, false], "  ") {
        line(out, l);
    }
    if !p.warnings.is_empty() {
        let w: Vec<String> = p.warnings.iter().map(|w| clean(w)).collect();
        for l in fmt::wrap("  warnings: ", "            ", &w, ", ", WIDTH) {
            line(out, l);
        }
    }
}

fn load(l: &LoadView, out: &mut String) {
    line(out, "");
    for s in fmt::wrap_text("", "  ", &load_heading(l), WIDTH) {
        line(out, s);
    }
    if l.devices.is_empty() {
        line(out, "  (no device counters)");
    } else {
        let mut rows = vec![Row::Cells(LOAD_COLS.iter().map(|c| c.to_string()).collect())];
        rows.extend(l.devices.iter().map(|d| Row::Cells(load_cells(d).to_vec())));
        let right = [false, true, true, true, true, true, true, true];
        for s in align(&rows, &right, "  ") {
            line(out, s);
        }
    }
    if l.processes.is_empty() {
        line(out, "  busiest processes: none did I/O in the window");
    } else {
        let mut procs: Vec<String> = l.processes.iter().take(PROCESSES).map(process_text).collect();
        if l.processes.len() > PROCESSES {
            procs.push(format!("{} more in the JSON", l.processes.len() - PROCESSES));
        }
        for s in fmt::wrap("  busiest processes: ", "    ", &procs, " · ", WIDTH) {
            line(out, s);
        }
    }
}

fn checks(doc: &DoctorDoc, out: &mut String) {
    line(out, "");
    line(out, "Checks");
    let sw = doc.checks.iter().map(|c| status_word(c.status).len()).max().unwrap_or(0);
    let cw = doc.checks.iter().map(|c| clean(&c.code).chars().count()).max().unwrap_or(0);
    for c in &doc.checks {
        let first = format!("  {:<sw$}  {:<cw$}  ", status_word(c.status), clean(&c.code));
        let cont = " ".repeat(first.chars().count());
        let reason = c.reason.as_deref().map(|r| format!("({})", clean(r))).unwrap_or_default();
        for l in wrap_with_tail(&first, &cont, &clean(&c.title), &reason, WIDTH) {
            line(out, l.trim_end());
        }
    }
    if doc.checks.is_empty() {
        line(out, "  (no check ran)");
    } else {
        line(out, format!("  {}", checks_tally(doc)));
    }
}
