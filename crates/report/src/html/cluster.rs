//! The multi-host section (`ResultDoc::cluster`): per job, each rank's figures as a table and
//! as bars of IOPS per rank, the stonewall figures next to the whole run's, and the merged
//! timeline (summed IOPS, p99 of the union of the ranks' histograms) when there is one. The
//! facts are those of the text formats ([`crate::cluster_text::summary`]).

use stats::{ClusterJob, ResultDoc};

use super::charts::{self, HostBar, TimeLine};
use super::view::{legend, Figure, MAX_TIMELINES};
use crate::cluster_text::{self, Figures, HostRow, JobSummary};
use crate::fmt;

pub(super) struct ClusterView {
    /// `3 ranks on 3 hosts (merged by MPI)`.
    pub heading: String,
    /// The failed rank and ranks with partial results.
    pub notes: Vec<(String, String)>,
    pub jobs: Vec<JobView>,
    /// Says when jobs beyond [`MAX_TIMELINES`] got no charts.
    pub note: String,
}

pub(super) struct JobView {
    /// 1-based, for element ids.
    pub n: usize,
    pub name: String,
    /// Slowest rank, start skew, ranks without figures, stonewall and whole run.
    pub facts: Vec<(String, String)>,
    pub show_start: bool,
    /// What the `start` column means.
    pub start_note: &'static str,
    pub rows: Vec<HostRow>,
    pub figures: Vec<Figure>,
}

fn figures_text(f: &Figures) -> String {
    if f.mb_s.is_empty() {
        f.iops.clone()
    } else {
        format!("{} · {}", f.iops, f.mb_s)
    }
}

fn host_chart(n: usize, j: &JobSummary) -> Figure {
    let bars: Vec<HostBar> = j
        .rows
        .iter()
        .map(|r| HostBar { label: format!("{} · {}", r.rank, r.host), value: r.iops_value, highlight: r.slowest })
        .collect();
    let mut fig = Figure::new(
        format!("chart-cluster-hosts-{n}"),
        "cluster-hosts",
        format!("{} · IOPS per rank", j.name),
        "each rank's IOPS over its own measured window (reads and writes together); the merged figure is \
         their sum"
            .to_string(),
        charts::host_bars(&bars, j.median_iops, fmt::iops, "IOPS"),
    );
    fig.legend = vec![legend(charts::RANK, "rank", "dot")];
    if j.rows.iter().any(|r| r.slowest) {
        fig.legend.push(legend(charts::SLOWEST, "slowest rank", "dot"));
    }
    if let (Some(m), true) = (j.median_iops, j.rows.len() > 1) {
        fig.legend.push(legend(charts::MUTED_DASH, format!("median of the ranks ({} IOPS)", fmt::iops(m)), "dash"));
    }
    fig
}

fn timeline_chart(n: usize, job: &ClusterJob, ranks: usize) -> Figure {
    let iops = job.timeline.iter().map(|p| (p.t_s, p.iops)).collect();
    let mut lat: Vec<Vec<(f64, f64)>> = Vec::new();
    let mut cur = Vec::new();
    for p in &job.timeline {
        if p.iops > 0.0 && p.lat_p99_ns > 0 {
            cur.push((p.t_s, p.lat_p99_ns as f64));
        } else if !cur.is_empty() {
            lat.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        lat.push(cur);
    }
    let line = TimeLine { color: charts::READ, iops, lat };
    let mut caption = format!(
        "summed IOPS of the ranks (top) and p99 of the union of their histograms (bottom) per wall-clock second \
         since the earliest start, {} seconds",
        job.timeline.len()
    );
    let short = job.timeline.iter().filter(|p| (p.ranks as usize) < ranks).count();
    if short > 0 {
        caption.push_str(&format!("; in {short} of them fewer than all {ranks} ranks were measuring"));
    }
    let mut fig = Figure::new(
        format!("chart-cluster-timeline-{n}"),
        "cluster-timeline",
        format!("{} · all ranks over time", job.name),
        caption,
        charts::timeline(std::slice::from_ref(&line)),
    );
    fig.legend = vec![legend(charts::READ, "all ranks", "line")];
    fig
}

pub(super) fn cluster_view(doc: &ResultDoc) -> Option<ClusterView> {
    let c = doc.cluster.as_ref()?;
    let s = cluster_text::summary(doc)?;
    let jobs = s
        .jobs
        .into_iter()
        .zip(&c.jobs)
        .enumerate()
        .map(|(i, (j, job))| {
            let n = i + 1;
            let mut figures = Vec::new();
            if i < MAX_TIMELINES {
                if !j.rows.is_empty() {
                    figures.push(host_chart(n, &j));
                }
                if !job.timeline.is_empty() {
                    figures.push(timeline_chart(n, job, j.rows.len()));
                }
            }
            let mut facts: Vec<(String, String)> = j.lines.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
            facts.extend(j.figures.iter().map(|f| (f.label(), figures_text(f))));
            JobView {
                n,
                name: j.name,
                facts,
                show_start: j.show_start,
                start_note: cluster_text::START_NOTE,
                rows: j.rows,
                figures,
            }
        })
        .collect();
    let note = if c.jobs.len() > MAX_TIMELINES {
        format!("Charts are drawn for the first {MAX_TIMELINES} of {} jobs; the tables list all.", c.jobs.len())
    } else {
        String::new()
    };
    Some(ClusterView {
        heading: s.heading,
        notes: s.notes.into_iter().map(|(k, v)| (k.to_string(), v)).collect(),
        jobs,
        note,
    })
}
