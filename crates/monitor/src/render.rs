//! Plain-text (iostat-like, one block per interval) and JSON Lines renderers.

use crate::monitor::{DeviceReport, Report};
use crate::verdict::State;

/// iostat -x column order, then the verdict.
const COLUMNS: [(&str, usize); 22] = [
    ("r/s", 9),
    ("rkB/s", 10),
    ("rrqm/s", 8),
    ("%rrqm", 6),
    ("r_await", 8),
    ("rareq-sz", 9),
    ("w/s", 9),
    ("wkB/s", 10),
    ("wrqm/s", 8),
    ("%wrqm", 6),
    ("w_await", 8),
    ("wareq-sz", 9),
    ("d/s", 8),
    ("dkB/s", 9),
    ("drqm/s", 7),
    ("%drqm", 6),
    ("d_await", 8),
    ("dareq-sz", 9),
    ("f/s", 8),
    ("f_await", 8),
    ("aqu-sz", 7),
    ("%util", 7),
];

fn values(d: &DeviceReport) -> [f64; 22] {
    let m = &d.iostat;
    [
        m.r_s, m.rkb_s, m.rrqm_s, m.rrqm_pct, m.r_await, m.rareq_sz, m.w_s, m.wkb_s, m.wrqm_s, m.wrqm_pct, m.w_await,
        m.wareq_sz, m.d_s, m.dkb_s, m.drqm_s, m.drqm_pct, m.d_await, m.dareq_sz, m.f_s, m.f_await, m.aqu_sz, m.util,
    ]
}

/// Replace control characters so device and process names cannot drive the terminal.
pub fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// Bytes per second, human units (base 1024, as iostat's kB).
pub fn human_rate(b: f64) -> String {
    const U: [&str; 5] = ["B/s", "KiB/s", "MiB/s", "GiB/s", "TiB/s"];
    let mut v = b;
    let mut i = 0;
    while v >= 1024.0 && i + 1 < U.len() {
        v /= 1024.0;
        i += 1;
    }
    if i == 0 {
        format!("{v:.0} {}", U[i])
    } else {
        format!("{v:.1} {}", U[i])
    }
}

/// A delay percentage (IO%, SWAPIN%), or "—" when there is none: never a made-up 0.
pub fn delay_pct(v: Option<f64>) -> String {
    match v {
        Some(v) => format!("{v:.1}"),
        None => "—".to_string(),
    }
}

/// One interval as an iostat-like text block.
pub fn text(r: &Report) -> String {
    let mut s = String::new();
    s.push_str(&format!("{}  interval {:.2} s", r.t, r.interval_s));
    match &r.psi {
        Some(p) => {
            s.push_str(&format!("  io pressure: some {:.1}%", p.some_pct));
            if let Some(f) = p.full_pct {
                s.push_str(&format!(" full {f:.1}%"));
            }
        }
        None => s.push_str("  io pressure: n/a (kernel without PSI)"),
    }
    s.push('\n');
    let name_w = r.devices.iter().map(|d| d.display_name().chars().count()).max().unwrap_or(6).max(6) + 1;
    s.push_str(&format!("{:<name_w$}", "Device"));
    // A column widens for a figure wider than its default (GB/s in kB/s, 9-digit r/s), header
    // included, so rows stay under their headers; every column starts with a space.
    let cells: Vec<[String; 22]> = r.devices.iter().map(|d| values(d).map(|v| format!("{v:.2}"))).collect();
    let widths: Vec<usize> = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, (_, w))| cells.iter().map(|c| c[i].len()).fold(w - 1, usize::max))
        .collect();
    for ((h, _), w) in COLUMNS.iter().zip(&widths) {
        s.push_str(&format!(" {h:>w$}"));
    }
    s.push_str("  verdict\n");
    if r.devices.is_empty() {
        s.push_str("(no devices match; --all-devices, --partitions or --devices NAME show more)\n");
    }
    for (d, c) in r.devices.iter().zip(&cells) {
        s.push_str(&format!("{:<name_w$}", sanitize(d.display_name())));
        for (v, w) in c.iter().zip(&widths) {
            s.push_str(&format!(" {v:>w$}"));
        }
        s.push_str(&format!("  {}\n", d.verdict.state.as_str()));
    }
    for d in r.devices.iter().filter(|d| matches!(d.verdict.state, State::Busy | State::Saturated | State::Reset)) {
        s.push_str(&format!("  {}: {} — {}\n", sanitize(d.display_name()), d.verdict.state.as_str(), d.verdict.reason));
    }
    if let Some(ps) = &r.processes {
        s.push_str(&format!(
            "{:>8} {:<16} {:>12} {:>12} {:>12} {:>12} {:>7} {:>8}\n",
            "PID", "COMMAND", "READ", "WRITE", "RCHAR", "WCHAR", "IO%", "SWAPIN%"
        ));
        if ps.is_empty() {
            s.push_str("(no process did I/O in this interval)\n");
        }
        for p in ps {
            s.push_str(&format!(
                "{:>8} {:<16} {:>12} {:>12} {:>12} {:>12} {:>7} {:>8}\n",
                p.pid,
                sanitize(&p.comm),
                human_rate(p.read_bytes_s),
                human_rate(p.write_bytes_s),
                human_rate(p.rchar_s),
                human_rate(p.wchar_s),
                delay_pct(p.io_delay_pct),
                delay_pct(p.swapin_delay_pct)
            ));
        }
        if let Some(n) = &r.processes_note {
            s.push_str(&format!("note: {n}\n"));
        }
    }
    s.push('\n');
    s
}

/// One interval as one JSON line (with the trailing newline).
pub fn json_line(r: &Report) -> String {
    let mut s = serde_json::to_string(r).unwrap_or_else(|e| format!("{{\"error\":\"cannot serialise: {e}\"}}"));
    s.push('\n');
    s
}
