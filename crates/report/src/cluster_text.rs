//! The multi-host section (`ResultDoc::cluster`) of every text format: per job, what each
//! rank measured, the slowest rank, the start skew, and the stonewall figures next to the
//! whole run's. `results` hold the merged figures and are rendered as for one host; this
//! section follows them. [`summary`] gathers the facts once (the HTML page uses it too);
//! [`human`], [`markdown`] and [`csv`] lay them out.

use std::fmt::Write as _;

use stats::{ClusterJob, ClusterResult, ClusterSource, HostFigures, JobResult, RankInfo, ResultDoc};

use crate::fmt;

/// The facts of the section, formatted.
pub(crate) struct Summary {
    /// `3 ranks on 1 host (merged by MPI)`.
    pub heading: String,
    /// Document-level notes: the failed rank and its error, ranks with partial results.
    pub notes: Vec<(&'static str, String)>,
    pub jobs: Vec<JobSummary>,
}

pub(crate) struct JobSummary {
    pub name: String,
    pub rows: Vec<HostRow>,
    /// Some rank has a start offset (the `start` column is shown).
    pub show_start: bool,
    /// `(label, text)`: slowest rank, start skew, ranks without figures.
    pub lines: Vec<(&'static str, String)>,
    /// The stonewall figures and the whole run's, in that order.
    pub figures: Vec<Figures>,
    /// The median of the ranks' IOPS (`None` without ranks).
    pub median_iops: Option<f64>,
}

/// Throughput over a span: the stonewall window, or the whole run.
pub(crate) struct Figures {
    /// `stonewall` or `whole run`.
    pub what: &'static str,
    /// `all ranks running, 2.99 s`.
    pub detail: String,
    /// `73,337 IOPS`, or why there are no figures.
    pub iops: String,
    /// `300.39 MB/s`; empty when there are no figures.
    pub mb_s: String,
}

impl Figures {
    /// `stonewall (all ranks running, 2.99 s)`.
    pub fn label(&self) -> String {
        if self.detail.is_empty() {
            self.what.to_string()
        } else {
            format!("{} ({})", self.what, self.detail)
        }
    }
}

pub(crate) struct HostRow {
    pub rank: u32,
    pub host: String,
    pub target: String,
    pub iops: String,
    pub mb_s: String,
    pub mean: String,
    pub p99: String,
    pub max: String,
    pub qd: String,
    /// Formatted start offset, `–` when the rank has none.
    pub start: String,
    pub slowest: bool,
    pub partial: bool,
    /// The raw IOPS, for charts.
    pub iops_value: f64,
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `3 ranks on 1 host (merged by MPI)`.
fn heading(c: &ClusterResult) -> String {
    let mut hosts: Vec<&str> = c.ranks.iter().map(|r| r.host.as_str()).collect();
    hosts.sort_unstable();
    hosts.dedup();
    let how = match c.source {
        ClusterSource::Mpi => "merged by MPI",
        ClusterSource::Merge => "merged from files",
    };
    format!("{} on {} ({how})", plural(c.ranks.len(), "rank", "ranks"), plural(hosts.len(), "host", "hosts"))
}

/// `rank 2 (node03)`.
fn rank_name(rank: u32, host: Option<&str>) -> String {
    match host {
        Some(h) if !h.is_empty() => format!("rank {rank} ({h})"),
        _ => format!("rank {rank}"),
    }
}

fn info(c: &ClusterResult, rank: u32) -> Option<&RankInfo> {
    c.ranks.iter().find(|r| r.rank == rank)
}

fn notes(c: &ClusterResult) -> Vec<(&'static str, String)> {
    let mut v = Vec::new();
    if let Some(f) = c.failed_rank {
        let r = info(c, f);
        let mut s = rank_name(f, r.map(|r| r.host.as_str()));
        if let Some(e) = r.and_then(|r| r.error.as_ref()) {
            let _ = write!(s, " — {}: {}", e.kind, e.message);
            if let Some(o) = e.offset.filter(|o| !e.message.contains(&o.to_string())) {
                let _ = write!(s, " (offset {o})");
            }
        }
        v.push(("failed", s));
    }
    let partial: Vec<String> = c
        .ranks
        .iter()
        .filter(|r| r.partial && Some(r.rank) != c.failed_rank)
        .map(|r| rank_name(r.rank, Some(&r.host)))
        .collect();
    if !partial.is_empty() {
        v.push(("partial results from", partial.join(", ")));
    }
    v
}

fn median(xs: &[f64]) -> Option<f64> {
    let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n {
        0 => None,
        _ if n % 2 == 1 => Some(v[n / 2]),
        _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
    }
}

/// `12%`, `3.4%`: one decimal below 10.
fn pct(x: f64) -> String {
    if x >= 9.95 {
        format!("{x:.0}%")
    } else {
        format!("{x:.1}%")
    }
}

/// `vm (rank 0), 12% below the median`.
fn slowest(job: &ClusterJob, median: Option<f64>) -> Option<String> {
    if job.hosts.len() < 2 {
        return None;
    }
    let h = job.hosts.iter().find(|h| Some(h.rank) == job.slowest_rank)?;
    let mut s = format!("{} (rank {})", h.host, h.rank);
    if let Some(m) = median.filter(|m| *m > 0.0) {
        let below = (m - h.iops) / m * 100.0;
        if below.is_finite() && below >= 0.05 {
            let _ = write!(s, ", {} below the median", pct(below));
        } else {
            s.push_str(", within 0.1% of the median");
        }
    }
    Some(s)
}

/// `2.99 s`: the stonewall window is usually a hair shorter than the whole run, which
/// [`fmt::secs`] would round to the same figure.
fn secs(s: f64) -> String {
    if s.is_finite() && s > 0.0 {
        format!("{s:.2} s")
    } else {
        "0 s".to_string()
    }
}

/// The merged result of `job` (in `results`, in the same order).
fn result_of<'a>(doc: &'a ResultDoc, i: usize, job: &ClusterJob) -> Option<&'a JobResult> {
    doc.results.get(i).filter(|r| r.name == job.name).or_else(|| doc.results.iter().find(|r| r.name == job.name))
}

fn whole_run(r: &JobResult) -> (f64, f64, f64) {
    let dirs = [&r.read, &r.write];
    let dirs = dirs.iter().filter_map(|d| d.as_ref());
    dirs.fold((0.0, 0.0, 0.0), |(i, m, s), d| (i + d.iops, m + d.mb_s, f64::max(s, d.seconds)))
}

fn host_row(h: &HostFigures, c: &ClusterResult, slowest: bool) -> HostRow {
    let r = info(c, h.rank);
    HostRow {
        rank: h.rank,
        host: h.host.clone(),
        target: r.and_then(|r| r.target.clone()).unwrap_or_else(|| "–".to_string()),
        iops: fmt::iops(h.iops),
        mb_s: fmt::rate(h.mb_s),
        mean: fmt::lat(h.lat_mean_ns),
        p99: fmt::lat(h.lat_p99_ns as f64),
        max: fmt::lat(h.lat_max_ns as f64),
        qd: format!("{:.1}", h.qd_mean),
        start: h.start_offset_s.map(|s| fmt::lat(s * 1e9)).unwrap_or_else(|| "–".to_string()),
        slowest,
        partial: r.is_some_and(|r| r.partial),
        iops_value: h.iops,
    }
}

fn job_summary(doc: &ResultDoc, c: &ClusterResult, i: usize, job: &ClusterJob) -> JobSummary {
    let iops: Vec<f64> = job.hosts.iter().map(|h| h.iops).collect();
    let median_iops = median(&iops);
    let slow = slowest(job, median_iops);
    let rows = job.hosts.iter().map(|h| host_row(h, c, slow.is_some() && Some(h.rank) == job.slowest_rank)).collect();
    let mut lines = Vec::new();
    if let Some(s) = slow {
        lines.push(("slowest", s));
    }
    let clocked = job.hosts.iter().any(|h| h.start_unix_ns > 0);
    let skew = if clocked || job.start_skew_s > 0.0 {
        fmt::lat(job.start_skew_s * 1e9)
    } else {
        "unknown (no wall-clock times)".to_string()
    };
    lines.push(("start skew", skew));
    let missing: Vec<String> = c
        .ranks
        .iter()
        .filter(|r| !job.hosts.iter().any(|h| h.rank == r.rank))
        .map(|r| rank_name(r.rank, Some(&r.host)))
        .collect();
    if !missing.is_empty() {
        lines.push(("no figures from", missing.join(", ")));
    }
    let mut figures = Vec::new();
    match job.stonewall {
        Some(s) => figures.push(Figures {
            what: "stonewall",
            detail: format!("all ranks running, {}", secs(s.seconds)),
            iops: format!("{} IOPS", fmt::iops(s.iops)),
            mb_s: format!("{} MB/s", fmt::rate(s.mb_s)),
        }),
        None => figures.push(Figures {
            what: "stonewall",
            detail: String::new(),
            iops: "none (no span in which every rank was measuring)".to_string(),
            mb_s: String::new(),
        }),
    }
    if let Some(r) = result_of(doc, i, job) {
        let (iops, mb_s, s) = whole_run(r);
        figures.push(Figures {
            what: "whole run",
            detail: secs(s),
            iops: format!("{} IOPS", fmt::iops(iops)),
            mb_s: format!("{} MB/s", fmt::rate(mb_s)),
        });
    }
    JobSummary {
        name: job.name.clone(),
        rows,
        show_start: job.hosts.iter().any(|h| h.start_offset_s.is_some()),
        lines,
        figures,
        median_iops,
    }
}

/// The section's facts, or `None` for a document of one host.
pub(crate) fn summary(doc: &ResultDoc) -> Option<Summary> {
    let c = doc.cluster.as_ref()?;
    Some(Summary {
        heading: heading(c),
        notes: notes(c),
        jobs: c.jobs.iter().enumerate().map(|(i, j)| job_summary(doc, c, i, j)).collect(),
    })
}

/// What the `start` column means.
pub(crate) const START_NOTE: &str =
    "start = when each rank's measured window began, after the ranks were released together";

// ---------------------------------------------------------------------------------------
// human text

/// Maximum line width of the human output.
const WIDTH: usize = 100;
/// Host names longer than this are cut in the human table.
const HOST_W: usize = 24;

fn clip(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

fn push(out: &mut String, s: impl AsRef<str>) {
    out.push_str(s.as_ref());
    out.push('\n');
}

/// The section in human text, ending in an empty line; empty without a cluster section.
pub(crate) fn human(doc: &ResultDoc) -> String {
    let Some(s) = summary(doc) else { return String::new() };
    let mut out = String::new();
    push(&mut out, format!("Hosts: {}", s.heading));
    for (k, v) in &s.notes {
        for l in fmt::wrap_text(&format!("{k}: "), "    ", v, WIDTH) {
            push(&mut out, l);
        }
    }
    for j in &s.jobs {
        push(&mut out, "");
        push(&mut out, format!("{}:", j.name));
        let rank_w = j.rows.iter().map(|r| r.rank.to_string().len()).max().unwrap_or(0).max(4);
        let host_w = j.rows.iter().map(|r| r.host.chars().count().min(HOST_W)).max().unwrap_or(0).max(4);
        let cols: &[&str] = if j.show_start {
            &["IOPS", "MB/s", "mean", "p99", "max", "start"]
        } else {
            &["IOPS", "MB/s", "mean", "p99", "max"]
        };
        let mut head = format!("  {:>rank_w$}  {:<host_w$}", "rank", "host");
        for c in cols {
            let _ = write!(head, "{c:>10}");
        }
        push(&mut out, head);
        for r in &j.rows {
            let mut l = format!("  {:>rank_w$}  {:<host_w$}", r.rank, clip(&r.host, HOST_W));
            let mut cells = vec![&r.iops, &r.mb_s, &r.mean, &r.p99, &r.max];
            if j.show_start {
                cells.push(&r.start);
            }
            for c in cells {
                let _ = write!(l, "{c:>10}");
            }
            push(&mut out, l);
        }
        if j.rows.is_empty() {
            push(&mut out, "  (no rank has figures for this job)");
        }
        // The slowest rank and the start skew share a line; anything else has its own.
        let (pair, rest): (Vec<_>, Vec<_>) = j.lines.iter().partition(|(k, _)| matches!(*k, "slowest" | "start skew"));
        let pair: Vec<String> = pair.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        for l in fmt::wrap("  ", "    ", &pair, " · ", WIDTH) {
            push(&mut out, l);
        }
        for (k, v) in rest {
            for l in fmt::wrap_text(&format!("  {k}: "), "    ", v, WIDTH) {
                push(&mut out, l);
            }
        }
        let labels: Vec<String> = j.figures.iter().map(Figures::label).collect();
        let label_w = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
        let iops_w = j.figures.iter().filter(|f| !f.mb_s.is_empty()).map(|f| f.iops.chars().count()).max();
        for (f, label) in j.figures.iter().zip(&labels) {
            let l = match iops_w {
                Some(iops_w) if !f.mb_s.is_empty() => {
                    format!("  {label:<label_w$}  {:>iops_w$}  {:>14}", f.iops, f.mb_s)
                }
                _ => format!("  {label}: {}", f.iops),
            };
            push(&mut out, l);
        }
        if j.show_start {
            for l in fmt::wrap_text("  ", "    ", START_NOTE, WIDTH) {
                push(&mut out, l);
            }
        }
    }
    push(&mut out, "");
    out
}

// ---------------------------------------------------------------------------------------
// Markdown

/// Escape text for a table cell or list item.
fn esc(s: &str) -> String {
    s.replace('\\', "\\\\").replace('|', "\\|").replace('\n', " ")
}

fn capital(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The section in Markdown, starting with an empty line; empty without a cluster section.
pub(crate) fn markdown(doc: &ResultDoc) -> String {
    let Some(s) = summary(doc) else { return String::new() };
    let mut out = String::new();
    push(&mut out, "");
    push(&mut out, format!("## Hosts: {}", s.heading));
    if !s.notes.is_empty() {
        push(&mut out, "");
        for (k, v) in &s.notes {
            push(&mut out, format!("- **{}:** {}", capital(k), esc(v)));
        }
    }
    for j in &s.jobs {
        push(&mut out, "");
        push(&mut out, format!("### {}", esc(&j.name)));
        push(&mut out, "");
        let mut cols = vec!["Rank", "Host", "IOPS", "MB/s", "lat mean", "p99", "max"];
        if j.show_start {
            cols.push("start");
        }
        push(&mut out, format!("| {} |", cols.join(" | ")));
        let aligns: Vec<&str> = (0..cols.len()).map(|i| if i == 1 { "---" } else { "---:" }).collect();
        push(&mut out, format!("| {} |", aligns.join(" | ")));
        for r in &j.rows {
            let mut row = format!(
                "| {} | {} | {} | {} | {} | {} | {} |",
                r.rank,
                esc(&r.host),
                r.iops,
                r.mb_s,
                r.mean,
                r.p99,
                r.max
            );
            if j.show_start {
                let _ = write!(row, " {} |", r.start);
            }
            push(&mut out, row);
        }
        push(&mut out, "");
        for (k, v) in &j.lines {
            push(&mut out, format!("- **{}:** {}", capital(k), esc(v)));
        }
        for f in &j.figures {
            let detail = if f.detail.is_empty() { String::new() } else { format!(" ({})", f.detail) };
            let figures = if f.mb_s.is_empty() { f.iops.clone() } else { format!("{} · {}", f.iops, f.mb_s) };
            push(&mut out, format!("- **{}**{detail}: {figures}", capital(f.what)));
        }
        if j.show_start {
            push(&mut out, "");
            push(&mut out, format!("_{}._", capital(START_NOTE)));
        }
    }
    out
}

// ---------------------------------------------------------------------------------------
// CSV

/// Header of the per-rank table that follows the jobs table after an empty line.
pub(crate) const HEADER: [&str; 10] =
    ["job", "rank", "host", "iops", "mb_s", "lat_mean_ns", "lat_p99_ns", "lat_max_ns", "qd_mean", "start_offset_s"];

fn try_csv(c: &ClusterResult) -> Result<String, Box<dyn std::error::Error>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(HEADER)?;
    for j in &c.jobs {
        for h in &j.hosts {
            w.write_record([
                j.name.clone(),
                h.rank.to_string(),
                h.host.clone(),
                h.iops.to_string(),
                h.mb_s.to_string(),
                h.lat_mean_ns.to_string(),
                h.lat_p99_ns.to_string(),
                h.lat_max_ns.to_string(),
                h.qd_mean.to_string(),
                h.start_offset_s.map(|s| s.to_string()).unwrap_or_default(),
            ])?;
        }
    }
    let bytes = w.into_inner().map_err(|e| e.to_string())?;
    Ok(String::from_utf8(bytes)?)
}

/// The per-rank table, preceded by an empty line; empty without a cluster section.
pub(crate) fn csv(doc: &ResultDoc) -> String {
    match &doc.cluster {
        Some(c) => match try_csv(c) {
            Ok(t) => format!("\n{t}"),
            Err(e) => format!("\n# csv export of the per-rank figures failed: {e}\n"),
        },
        None => String::new(),
    }
}
