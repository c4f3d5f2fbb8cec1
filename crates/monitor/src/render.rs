//! Plain-text (iostat-like, one block per interval, under iostat's or perfmon's names) and JSON
//! Lines renderers.

use crate::monitor::{DeviceReport, Report};
use crate::verdict::State;

/// The names the device figures are shown under: iostat -x's or Windows perfmon's. JSON
/// carries both sets whichever is chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columns {
    /// `iostat -x`: r/s, rkB/s, r_await (ms), aqu-sz, %util…
    Iostat,
    /// perfmon's PhysicalDisk counters: Disk Reads/sec, Avg. Disk sec/Read (s), Current Disk
    /// Queue Length, % Idle Time…
    Perfmon,
}

impl Columns {
    pub const ALL: [Columns; 2] = [Columns::Iostat, Columns::Perfmon];

    /// `top`'s default on this OS: the names its users read (perfmon's on Windows).
    pub const NATIVE: Columns = if cfg!(windows) { Columns::Perfmon } else { Columns::Iostat };

    pub const fn as_str(self) -> &'static str {
        match self {
            Columns::Iostat => "iostat",
            Columns::Perfmon => "perfmon",
        }
    }

    pub fn parse(s: &str) -> Option<Columns> {
        Columns::ALL.into_iter().find(|c| c.as_str() == s)
    }
}

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

/// perfmon's PhysicalDisk counters as the text block's columns, in the JSON `perfmon` object's
/// order. Each column is at least as wide as its name, which has spaces in it.
pub const PERFMON_COLUMNS: [&str; 11] = [
    "Disk Reads/sec",
    "Disk Writes/sec",
    "Disk Transfers/sec",
    "Disk Bytes/sec",
    "Avg. Disk Bytes/Transfer",
    "Avg. Disk sec/Read",
    "Avg. Disk sec/Write",
    "Avg. Disk sec/Transfer",
    "Avg. Disk Queue Length",
    "Current Disk Queue Length",
    "% Idle Time",
];

/// Seconds per request as perfmon gives them, to 10 µs: the resolution of iostat's r_await
/// (0.01 ms), so a 50 µs read is not shown as 0.
pub fn perfmon_secs(v: f64) -> String {
    format!("{v:.5}")
}

/// perfmon's figures in its units: counts per second, bytes, seconds, requests, percent.
fn perfmon_cells(d: &DeviceReport) -> Vec<String> {
    let p = &d.perfmon;
    vec![
        format!("{:.2}", p.reads_sec),
        format!("{:.2}", p.writes_sec),
        format!("{:.2}", p.transfers_sec),
        format!("{:.0}", p.bytes_sec),
        format!("{:.0}", p.bytes_per_transfer),
        perfmon_secs(p.sec_per_read),
        perfmon_secs(p.sec_per_write),
        perfmon_secs(p.sec_per_transfer),
        format!("{:.2}", p.avg_queue),
        p.current_queue.to_string(),
        format!("{:.1}", p.idle_pct),
    ]
}

/// The figure columns of one text block.
struct Figures {
    /// Each column's header and narrowest width.
    heads: Vec<(&'static str, usize)>,
    /// Each device's figures, as text.
    cells: Vec<Vec<String>>,
    /// What goes before each column.
    sep: &'static str,
}

/// The figure columns under `columns`' names. perfmon's names have spaces, so its columns are
/// two spaces apart: a name's words stay together and apart from the next name.
fn figures(r: &Report, columns: Columns) -> Figures {
    match columns {
        Columns::Iostat => Figures {
            heads: COLUMNS.iter().map(|(h, w)| (*h, w - 1)).collect(),
            cells: r.devices.iter().map(|d| values(d).map(|v| format!("{v:.2}")).to_vec()).collect(),
            sep: " ",
        },
        Columns::Perfmon => Figures {
            heads: PERFMON_COLUMNS.iter().map(|h| (*h, h.len())).collect(),
            cells: r.devices.iter().map(perfmon_cells).collect(),
            sep: "  ",
        },
    }
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

/// One interval as an iostat-like text block, under iostat's column names.
pub fn text(r: &Report) -> String {
    text_with(r, Columns::Iostat)
}

/// One interval as a text block, the device figures under `columns`' names.
pub fn text_with(r: &Report, columns: Columns) -> String {
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
    // included, so rows stay under their headers; every column starts with its separator.
    let Figures { heads, cells, sep } = figures(r, columns);
    let widths: Vec<usize> =
        heads.iter().enumerate().map(|(i, (_, w))| cells.iter().map(|c| c[i].len()).fold(*w, usize::max)).collect();
    for ((h, _), w) in heads.iter().zip(&widths) {
        s.push_str(&format!("{sep}{h:>w$}"));
    }
    s.push_str("  verdict\n");
    if r.devices.is_empty() {
        s.push_str("(no devices match; --all-devices, --partitions or --devices NAME show more)\n");
    }
    for (d, c) in r.devices.iter().zip(&cells) {
        s.push_str(&format!("{:<name_w$}", sanitize(d.display_name())));
        for (v, w) in c.iter().zip(&widths) {
            s.push_str(&format!("{sep}{v:>w$}"));
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
