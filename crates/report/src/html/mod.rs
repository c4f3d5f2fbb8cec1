//! The HTML report: one self-contained file — inline CSS, inline SVG charts drawn with
//! plotters' SVG backend, no scripts, no fonts or images fetched from anywhere (a
//! Content-Security-Policy forbids it). The page is an askama template
//! (`templates/report.html`) filled from the view structs built here; askama escapes
//! every string taken from the document, plotters escapes the text inside the SVGs.

mod axis;
mod cache;
mod charts;
mod cluster;
pub mod doctor;
mod replay;
mod steady;
mod surface;
mod verify;
mod view;

use askama::Template;
use stats::{
    CompareResult, CompareRow, DirStats, DocKind, JobResult, LatSummary, ResultDoc, SlaPoint, SlaResult, Verdict,
};

use crate::fmt;
use charts::{CdfLine, SlaDot, TimeLine};
use view::{escape, legend, Figure};

/// At most this many lines in the latency CDF (more would be unreadable).
const MAX_CDF_LINES: usize = 12;
/// Timelines are drawn for at most this many jobs (defined beside the figures that obey it).
pub use view::MAX_TIMELINES;
/// Compare rows beyond this get no chart (the table still lists them).
pub const MAX_COMPARE_CHARTS: usize = 60;

/// Render a result document as a self-contained HTML page. Never panics; a document
/// with nothing to chart still gives a page with its environment and warnings.
pub fn render_html(doc: &ResultDoc) -> String {
    match Page::new(doc).render() {
        Ok(mut s) => {
            // askama drops the template file's final newline; every export ends in one.
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s
        }
        Err(e) => fallback(doc, &e.to_string()),
    }
}

/// A minimal page for the (unexpected) case that the template fails to render.
fn fallback(doc: &ResultDoc, why: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">\
         <title>diskmeter report</title></head><body><h1>diskmeter {} report</h1>\
         <p>The report could not be rendered: {}</p></body></html>\n",
        escape(&doc.command),
        escape(why)
    )
}

// ---------------------------------------------------------------------------------------
// view structs (everything the template shows, already formatted)

struct Note {
    code: String,
    message: String,
}

struct MarkCard {
    caption: String,
    rows: Vec<MarkRow>,
}

struct MarkRow {
    label1: String,
    label2: String,
    read: Option<MarkCell>,
    write: Option<MarkCell>,
}

struct MarkCell {
    mb_s: String,
    iops: String,
    mean: String,
    p99: String,
    /// Bar length in percent of the card's highest MB/s.
    bar: String,
}

struct ResultsTable {
    heading: String,
    title: String,
    caption: String,
    rows: Vec<ResultRow>,
}

struct ResultRow {
    name: String,
    error: String,
    rw: String,
    bs: String,
    depth: String,
    read: [String; 4],
    write: [String; 4],
}

struct SlaView {
    verdict: String,
    miss: bool,
    /// Header of the bounded-statistic column.
    metric: String,
    /// The bounded statistic is not p99, so p99 gets its own column.
    show_p99: bool,
    facts: Vec<(String, String)>,
    notes: Vec<String>,
    figures: Vec<Figure>,
    points: Vec<SlaRow>,
}

struct SlaRow {
    n: usize,
    qd: u32,
    threads: u32,
    outstanding: u32,
    iops: String,
    mb_s: String,
    metric: String,
    p99: String,
    feasible: bool,
    windows: u32,
    cv: String,
    best: bool,
    /// `(css class, text)`.
    tags: Vec<(&'static str, String)>,
}

struct CompareView {
    level: String,
    facts: Vec<(String, String)>,
    subjects: Vec<SubjectRow>,
    figures: Vec<Figure>,
    note: String,
    rows: Vec<CmpRow>,
}

struct SubjectRow {
    label: String,
    source: String,
    device: String,
    color: String,
}

struct CmpRow {
    test: String,
    direction: String,
    metric: String,
    subjects: Vec<CmpCell>,
}

struct CmpCell {
    label: String,
    n: String,
    mean: String,
    ci: String,
    ratio: String,
    p: String,
    verdict: String,
    class: &'static str,
}

struct EnvCard {
    title: &'static str,
    rows: Vec<(String, String)>,
}

#[derive(Template)]
#[template(path = "report.html")]
struct Page {
    generator: String,
    title: String,
    subtitle: Vec<String>,
    partial: String,
    doc_error: String,
    warnings: Vec<Note>,
    job_errors: Vec<Note>,
    /// The command's own part: one of these is filled.
    sections: Sections,
    /// Several ranks: what each measured (after the merged figures of `sections`).
    cluster: Option<cluster::ClusterView>,
    /// A replay: the trace, and per pass each kind's figures and the fidelity.
    replay: Option<replay::ReplayView>,
    /// `--sustained`: the write cliff and its recovery (after the command's figures).
    sustained: Option<steady::SustainedView>,
    /// `--verify`: what was checked and every failure kept.
    verify: Option<verify::VerifyView>,
    cdf: Option<Figure>,
    timelines: Vec<Figure>,
    timeline_note: String,
    env: Vec<EnvCard>,
}

/// The command's own part of the page.
#[derive(Default)]
struct Sections {
    sla: Option<SlaView>,
    compare: Option<CompareView>,
    cache: Option<cache::CacheView>,
    surface: Option<surface::SurfaceView>,
    steady: Option<steady::SteadyView>,
    mark: Option<MarkCard>,
    results: Option<ResultsTable>,
}

impl Sections {
    /// The section of the document's kind, and the jobs table: always for a plain run,
    /// never for `mark` (its card holds the jobs), else when there are jobs.
    fn new(doc: &ResultDoc, kind: DocKind) -> Sections {
        let jobs = |heading| (!doc.results.is_empty()).then(|| results_table(doc, heading));
        match kind {
            // `steady` is a run whose rounds stand for the jobs.
            DocKind::Run if doc.steady.is_some() => Sections {
                steady: doc.steady.as_ref().map(steady::steady_view),
                results: jobs("Results"),
                ..Default::default()
            },
            DocKind::Run => Sections { results: Some(results_table(doc, "Results")), ..Default::default() },
            DocKind::Mark => Sections { mark: Some(mark_card(doc)), ..Default::default() },
            DocKind::Sla => Sections {
                sla: doc.sla.as_ref().map(sla_view),
                results: jobs("Job results of the best point"),
                ..Default::default()
            },
            DocKind::Compare => Sections {
                compare: doc.compare.as_ref().map(compare_view),
                results: jobs("Results"),
                ..Default::default()
            },
            DocKind::Cache => Sections {
                cache: doc.cache.as_ref().map(cache::cache_view),
                results: jobs("Results"),
                ..Default::default()
            },
            DocKind::Surface => Sections {
                surface: doc.surface.as_ref().map(surface::surface_view),
                results: jobs("Results"),
                ..Default::default()
            },
        }
    }
}

impl Page {
    fn new(doc: &ResultDoc) -> Page {
        let kind = doc.kind();
        let (timelines, timeline_note) = timelines(doc);
        Page {
            generator: format!("{} {}", doc.tool.name, doc.tool.version),
            title: format!("{} {} report", doc.tool.name, doc.command),
            subtitle: subtitle(doc),
            partial: partial_line(doc),
            doc_error: match &doc.error {
                Some(e) if !doc.partial => format!("error[{}]: {}", e.kind, e.message),
                _ => String::new(),
            },
            warnings: doc.warnings.iter().map(|w| Note { code: w.code.clone(), message: w.message.clone() }).collect(),
            job_errors: job_errors(doc),
            sections: Sections::new(doc, kind),
            cluster: cluster::cluster_view(doc),
            replay: replay::replay_view(doc),
            sustained: steady::sustained_view(doc),
            verify: verify::verify_view(doc),
            cdf: latency_cdf(doc),
            timelines,
            timeline_note,
            env: environment(doc, kind),
        }
    }
}

// ---------------------------------------------------------------------------------------
// header, warnings, environment

fn subtitle(doc: &ResultDoc) -> Vec<String> {
    let mut v = Vec::new();
    if let Some(t) = &doc.target {
        if t.device.is_some() || t.model.is_some() {
            v.push(fmt::device(t));
        }
        v.push(t.path.clone());
    }
    if let Some(t) = doc.cache.as_ref().and_then(|c| c.trace.as_ref()) {
        if !t.path.is_empty() {
            v.push(format!("trace {}", t.path));
        }
    }
    if !doc.started_at.is_empty() {
        v.push(fmt::date(&doc.started_at));
    }
    v.push(format!("{} {}", doc.tool.name, doc.tool.version));
    v
}

fn partial_line(doc: &ResultDoc) -> String {
    if !doc.partial {
        return String::new();
    }
    format!("Partial results ({}): the figures cover only the part that completed.", fmt::partial_why(doc))
}

fn job_errors(doc: &ResultDoc) -> Vec<Note> {
    doc.results
        .iter()
        .filter_map(|r| {
            let e = r.error.as_ref()?;
            let at = e.offset.map(|o| format!(" (offset {o})")).unwrap_or_default();
            Some(Note { code: format!("error[{}]", e.kind), message: format!("{}: {}{at}", r.name, e.message) })
        })
        .collect()
}

fn opt(s: &Option<String>) -> String {
    s.clone().unwrap_or_else(|| "unknown".to_string())
}

fn environment(doc: &ResultDoc, kind: DocKind) -> Vec<EnvCard> {
    let h = &doc.host;
    let mut host = vec![
        ("kernel".to_string(), if h.kernel.is_empty() { "unknown".to_string() } else { h.kernel.clone() }),
        ("CPUs".to_string(), fmt::known_count(h.cpus)),
        ("CPU model".to_string(), opt(&h.cpu_model)),
        ("memory".to_string(), fmt::known_bytes(h.memory_bytes)),
    ];
    host.push(("hostname".to_string(), opt(&h.hostname)));

    let target = match &doc.target {
        Some(t) => {
            let mut rows = vec![
                ("path".to_string(), t.path.clone()),
                ("kind".to_string(), fmt::kind(t.kind).to_string()),
                ("size".to_string(), fmt::known_bytes(t.size_bytes)),
                ("device".to_string(), opt(&t.device)),
                ("model".to_string(), opt(&t.model)),
                ("media".to_string(), fmt::media(t)),
                ("scheduler".to_string(), opt(&t.scheduler)),
                ("filesystem".to_string(), opt(&t.filesystem)),
                ("block sizes".to_string(), fmt::blocks(t)),
            ];
            if let Some(f) = &t.folder {
                rows.insert(1, ("folder named".to_string(), f.clone()));
            }
            if let Some(c) = t.device_cache_bytes {
                rows.push(("device cache".to_string(), fmt::bytes(c)));
            }
            if t.created_by_diskmeter {
                rows.push(("test file".to_string(), "created and removed by diskmeter".to_string()));
            }
            rows
        }
        None if kind == DocKind::Cache => {
            vec![("target".to_string(), "none: simulated on a recorded trace".to_string())]
        }
        None => vec![("target".to_string(), "not recorded".to_string())],
    };

    let status = match (&doc.error, doc.partial) {
        (Some(_), true) => format!("partial ({})", fmt::partial_why(doc)),
        (None, true) => "partial".to_string(),
        (Some(e), false) => format!("error ({}: {})", e.kind, e.message),
        (None, false) => "complete".to_string(),
    };
    let mut run = vec![
        ("tool".to_string(), format!("{} {}", doc.tool.name, doc.tool.version)),
        ("command".to_string(), doc.command.clone()),
        ("started".to_string(), fmt::date(&doc.started_at)),
        ("status".to_string(), status),
    ];
    match (kind, &doc.cache, &doc.surface) {
        (DocKind::Cache, Some(c), _) if doc.results.is_empty() => {
            run.push(("cache action".to_string(), c.action.clone()))
        }
        (DocKind::Surface, _, Some(s)) => run.push(("surface mode".to_string(), s.mode.clone())),
        _ => run.push(("jobs".to_string(), doc.results.len().to_string())),
    }
    if let Some(r) = doc.results.first() {
        run.push(("I/O".to_string(), fmt::io_mode(&r.spec)));
    }
    if let Some(c) = &doc.cluster {
        let how = match c.source {
            stats::ClusterSource::Mpi => "merged by MPI",
            stats::ClusterSource::Merge => "merged from files",
        };
        run.push(("ranks".to_string(), format!("{} ({how})", c.ranks.len())));
    }
    if kind == DocKind::Mark {
        let passes = doc.results.iter().map(|r| r.passes.len()).max().unwrap_or(0).max(1);
        run.push(("figures".to_string(), fmt::aggregation(doc.results.iter().find_map(|r| r.aggregate), passes)));
    }
    run.push(("schema".to_string(), doc.schema.clone()));
    vec![
        EnvCard { title: "Host", rows: host },
        EnvCard { title: "Target", rows: target },
        EnvCard { title: "Run", rows: run },
    ]
}

// ---------------------------------------------------------------------------------------
// mark card and results table

fn finite(x: f64) -> f64 {
    if x.is_finite() {
        x
    } else {
        0.0
    }
}

fn mark_card(doc: &ResultDoc) -> MarkCard {
    let top =
        doc.results.iter().flat_map(|r| [&r.read, &r.write]).flatten().map(|d| finite(d.mb_s)).fold(0.0, f64::max);
    let cell = |d: &Option<DirStats>| {
        d.as_ref().map(|d| MarkCell {
            mb_s: fmt::rate(d.mb_s),
            iops: fmt::iops(d.iops),
            mean: fmt::lat(d.lat_ns.mean),
            p99: fmt::lat(d.lat_ns.p99 as f64),
            bar: if top > 0.0 {
                format!("{:.1}", (finite(d.mb_s) / top * 100.0).clamp(0.0, 100.0))
            } else {
                "0".into()
            },
        })
    };
    let rows = doc
        .results
        .iter()
        .map(|r| {
            let (a, b) = match r.name.split_once(' ') {
                Some((a, b)) => (a.to_string(), b.trim().to_string()),
                None => (r.name.clone(), String::new()),
            };
            MarkRow { label1: a, label2: b, read: cell(&r.read), write: cell(&r.write) }
        })
        .collect();
    let passes = doc.results.iter().map(|r| r.passes.len()).max().unwrap_or(0).max(1);
    let mut parts = Vec::new();
    if let Some(r) = doc.results.first() {
        if let Some(size) = r.spec.size.or(doc.target.as_ref().map(|t| t.size_bytes)) {
            parts.push(format!("test area {}", fmt::bytes(size)));
        }
        let p = if passes == 1 { "pass" } else { "passes" };
        parts.push(format!("{passes} {p} × {}", fmt::secs(r.spec.runtime.as_secs_f64())));
        parts.push(fmt::io_mode(&r.spec));
        parts.push(fmt::data(&r.spec.data));
    }
    parts.push(fmt::aggregation(doc.results.iter().find_map(|r| r.aggregate), passes));
    MarkCard { caption: parts.join(" · "), rows }
}

fn dir_cells(d: &Option<DirStats>) -> [String; 4] {
    match d {
        Some(d) => [fmt::iops(d.iops), fmt::rate(d.mb_s), fmt::lat(d.lat_ns.mean), fmt::lat(d.lat_ns.p99 as f64)],
        None => std::array::from_fn(|_| "–".to_string()),
    }
}

fn results_table(doc: &ResultDoc, heading: &str) -> ResultsTable {
    let rows = doc
        .results
        .iter()
        .map(|r| ResultRow {
            name: r.name.clone(),
            error: r.error.as_ref().map(|e| e.kind.clone()).unwrap_or_default(),
            rw: fmt::workload(r),
            bs: if r.workload.is_some() { "–".to_string() } else { fmt::bytes(r.spec.bs) },
            depth: format!("{} × {}", r.spec.qd, r.spec.threads),
            read: dir_cells(&r.read),
            write: dir_cells(&r.write),
        })
        .collect();
    ResultsTable {
        heading: heading.to_string(),
        title: "Per-job figures".to_string(),
        caption: "IOPS = completed operations / measured seconds; MB/s = 10⁶ bytes per second; mean and p99 \
                  completion latency"
            .to_string(),
        rows,
    }
}

// ---------------------------------------------------------------------------------------
// latency CDF

fn summary_points(l: &LatSummary) -> Vec<(f64, f64)> {
    let all = [
        (l.min as f64, 0.0),
        (l.p50 as f64, 0.5),
        (l.p90 as f64, 0.9),
        (l.p99 as f64, 0.99),
        (l.p99_9 as f64, 0.999),
        (l.p99_99 as f64, 0.9999),
        (l.max as f64, 1.0),
    ];
    // A zero percentile next to non-zero ones means "not recorded", not "0 ns".
    let some: Vec<(f64, f64)> = all.iter().copied().filter(|p| p.0 > 0.0).collect();
    if some.is_empty() {
        all.to_vec()
    } else {
        some
    }
}

fn directions(r: &JobResult) -> impl Iterator<Item = (&'static str, &DirStats)> {
    [("read", &r.read), ("write", &r.write)].into_iter().filter_map(|(n, d)| d.as_ref().map(|d| (n, d)))
}

fn latency_cdf(doc: &ResultDoc) -> Option<Figure> {
    let mut lines: Vec<(String, Vec<(f64, f64)>)> = Vec::new();
    for r in &doc.results {
        for (dir, d) in directions(r) {
            if !d.lat_cdf.is_empty() {
                let pts = d.lat_cdf.iter().map(|p| (p.ns as f64, p.fraction)).collect();
                lines.push((format!("{} · {dir}", r.name), pts));
            }
        }
    }
    let from_summary = lines.is_empty();
    if from_summary {
        for r in &doc.results {
            for (dir, d) in directions(r) {
                if d.ops > 0 || d.lat_ns.max > 0 {
                    lines.push((format!("{} · {dir}", r.name), summary_points(&d.lat_ns)));
                }
            }
        }
    }
    if lines.is_empty() {
        return None;
    }
    let total = lines.len();
    lines.truncate(MAX_CDF_LINES);
    let drawn: Vec<CdfLine> =
        lines.iter().enumerate().map(|(i, (_, p))| CdfLine { color: charts::color(i), points: p.clone() }).collect();
    let mut caption = "share of I/Os completed within a given latency, per job and direction".to_string();
    if from_summary {
        caption.push_str(
            " (drawn through the summary percentiles min, p50, p90, p99, p99.9, p99.99 and max: the document \
             has no CDF points)",
        );
    }
    if total > MAX_CDF_LINES {
        caption.push_str(&format!("; the first {MAX_CDF_LINES} of {total} lines are shown"));
    }
    let mut fig = Figure::new(
        "chart-latency-cdf".into(),
        "latency-cdf",
        "Completion latency CDF".into(),
        caption,
        charts::latency_cdf(&drawn),
    );
    fig.legend = lines.iter().zip(&drawn).map(|((label, _), l)| legend(l.color, label.clone(), "line")).collect();
    Some(fig)
}

// ---------------------------------------------------------------------------------------
// timelines

fn timelines(doc: &ResultDoc) -> (Vec<Figure>, String) {
    let with_series: Vec<&JobResult> = doc.results.iter().filter(|r| !r.series.is_empty()).collect();
    let figs = with_series
        .iter()
        .take(MAX_TIMELINES)
        .enumerate()
        .map(|(i, r)| {
            let has_read = r.read.is_some() || r.series.iter().any(|p| p.read_iops > 0.0);
            let has_write = r.write.is_some() || r.series.iter().any(|p| p.write_iops > 0.0);
            let mut lines = Vec::new();
            let mut leg = Vec::new();
            let dirs =
                [(has_read || !has_write, "read", true, charts::READ), (has_write, "write", false, charts::WRITE)];
            for (on, name, is_read, color) in dirs {
                if !on {
                    continue;
                }
                let get = |p: &stats::SeriesPoint| {
                    if is_read {
                        (p.read_iops, p.read_lat_p99_ns)
                    } else {
                        (p.write_iops, p.write_lat_p99_ns)
                    }
                };
                let iops = r.series.iter().map(|p| (p.t_s, get(p).0)).collect();
                let mut runs: Vec<Vec<(f64, f64)>> = Vec::new();
                let mut cur = Vec::new();
                for p in &r.series {
                    let (n, lat) = get(p);
                    if n > 0.0 && lat > 0 {
                        cur.push((p.t_s, lat as f64));
                    } else if !cur.is_empty() {
                        runs.push(std::mem::take(&mut cur));
                    }
                }
                if !cur.is_empty() {
                    runs.push(cur);
                }
                lines.push(TimeLine { color, iops, lat: runs });
                leg.push(legend(color, name, "line"));
            }
            let caption = format!(
                "{} · IOPS (top) and p99 completion latency (bottom) per interval, {} intervals",
                fmt::result_parts(r).join(" · "),
                r.series.len()
            );
            let mut fig = Figure::new(
                format!("chart-timeline-{}", i + 1),
                "timeline",
                r.name.clone(),
                caption,
                charts::timeline(&lines),
            );
            fig.legend = leg;
            fig
        })
        .collect();
    let note = if with_series.len() > MAX_TIMELINES {
        format!("Timelines are shown for the first {MAX_TIMELINES} of {} jobs with a time series.", with_series.len())
    } else {
        String::new()
    };
    (figs, note)
}

// ---------------------------------------------------------------------------------------
// sla

/// `Q16`, `Q8×2T`, or the offered rate for open-loop points.
fn depth_label(p: &SlaPoint) -> String {
    match p.rate_iops {
        Some(r) => format!("{}/s", axis::compact(r as f64)),
        None if p.threads > 1 => format!("Q{}×{}T", p.qd, p.threads),
        None => format!("Q{}", p.qd),
    }
}

fn same_point(a: &SlaPoint, b: &SlaPoint) -> bool {
    (a.qd, a.threads, a.rate_iops, a.outstanding) == (b.qd, b.threads, b.rate_iops, b.outstanding)
}

fn point_line(p: &SlaPoint, metric: &str) -> String {
    format!(
        "{} · {} IOPS · {} MB/s · {metric} {}",
        depth_label(p),
        fmt::iops(p.iops),
        fmt::rate(p.mb_s),
        fmt::lat(p.metric_ns)
    )
}

fn sla_view(s: &SlaResult) -> SlaView {
    let metric = s.percentile.label().to_string();
    let bound_label = format!("{metric} ≤ {}", axis::short_lat(s.latency_ns as f64));
    let find = |x: &Option<SlaPoint>| x.as_ref().and_then(|b| s.points.iter().position(|p| same_point(p, b)));
    let (best, knee) = (find(&s.best), find(&s.knee));

    let mut facts = vec![
        ("bound".to_string(), bound_label.clone()),
        ("workload".to_string(), {
            let mut w = if s.streams.is_empty() { "–".to_string() } else { s.streams.join(" + ") };
            if s.bs > 0 {
                w.push_str(&format!(" · bs {}", fmt::bytes(s.bs)));
            }
            w
        }),
        ("mode".to_string(), s.mode.clone()),
        (
            "search".to_string(),
            format!(
                "{}, {} points in {}",
                if s.exhaustive { "exhaustive grid" } else { "adaptive" },
                s.points.len(),
                fmt::secs(s.search_seconds)
            ),
        ),
    ];
    if let Some(b) = &s.best {
        facts.push(("best".to_string(), point_line(b, &metric)));
    }
    if let Some(k) = &s.knee {
        facts.push(("knee".to_string(), point_line(k, &metric)));
    }
    let mut notes = Vec::new();
    if s.qd1_misses {
        notes.push("Even the shallowest point (QD 1, one worker) misses the bound.".to_string());
    }
    for t in &s.thrashing {
        notes.push(format!(
            "Thrashing with {} worker{}: raising QD {} → {} lowered IOPS from {} to {}.",
            t.threads,
            if t.threads == 1 { "" } else { "s" },
            t.from_qd,
            t.to_qd,
            fmt::iops(t.from_iops),
            fmt::iops(t.to_iops)
        ));
    }

    let dots: Vec<SlaDot> = s
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| SlaDot {
            iops: p.iops,
            metric_ns: p.metric_ns,
            feasible: p.feasible,
            label: depth_label(p),
            group: if p.rate_iops.is_some() { u32::MAX } else { p.threads },
            order: match p.rate_iops {
                Some(r) => r as f64,
                None => f64::from(p.outstanding),
            },
            best: best == Some(i),
            knee: knee == Some(i),
        })
        .collect();
    let mut figures = Vec::new();
    if !dots.is_empty() {
        let mut fig = Figure::new(
            "chart-sla-curve".into(),
            "sla-curve",
            "Latency against throughput".into(),
            format!(
                "every measured point: IOPS against the bounded statistic ({metric}, log scale); points of one \
                 worker count are joined in depth order; labels give queue depth per worker × workers"
            ),
            charts::sla_curve(&dots, s.latency_ns as f64, &bound_label),
        );
        fig.legend = vec![
            legend(charts::FEASIBLE, "within the bound", "dot"),
            legend(charts::INFEASIBLE, "over the bound", "cross"),
            legend(charts::BEST, "best feasible point", "ring"),
            legend(charts::KNEE, "knee", "ring"),
            legend(charts::BOUND, format!("bound {bound_label}"), "dash"),
        ];
        figures.push(fig);
    }

    let pct = |x: f64| if x.is_finite() { format!("{:.1} %", x * 100.0) } else { "–".to_string() };
    let points = s
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| {
            let mut tags = Vec::new();
            if best == Some(i) {
                tags.push(("best", "best".to_string()));
            }
            if knee == Some(i) {
                tags.push(("knee", "knee".to_string()));
            }
            if let Some(r) = p.rate_iops {
                tags.push(("", format!("rate {}/s", fmt::group(r))));
            }
            if p.remeasured {
                tags.push(("", "re-measured".to_string()));
            }
            if p.early_reject {
                tags.push(("", "rejected early".to_string()));
            } else if !p.stable {
                tags.push(("bad", "unstable".to_string()));
            }
            SlaRow {
                n: i + 1,
                qd: p.qd,
                threads: p.threads,
                outstanding: p.outstanding,
                iops: fmt::iops(p.iops),
                mb_s: fmt::rate(p.mb_s),
                metric: fmt::lat(p.metric_ns),
                p99: fmt::lat(p.lat_ns.p99 as f64),
                feasible: p.feasible,
                windows: p.windows,
                cv: format!("{} / {}", pct(p.cv_iops), pct(p.cv_lat)),
                best: best == Some(i),
                tags,
            }
        })
        .collect();
    SlaView {
        verdict: if s.verdict.trim().is_empty() {
            "The search recorded no verdict.".to_string()
        } else {
            s.verdict.clone()
        },
        miss: s.best.is_none(),
        show_p99: s.percentile != stats::Percentile::P99,
        metric: format!("{metric} (bounded)"),
        facts,
        notes,
        figures,
        points,
    }
}

// ---------------------------------------------------------------------------------------
// compare

fn metric_name(m: &str) -> String {
    match m {
        "mb_s" => "MB/s".to_string(),
        "iops" => "IOPS".to_string(),
        "lat_mean_ns" => "mean latency".to_string(),
        other => other.to_string(),
    }
}

fn metric_fmt(m: &str) -> fn(f64) -> String {
    match m {
        "mb_s" => fmt::rate,
        "iops" => fmt::iops,
        "lat_mean_ns" => fmt::lat,
        _ => |v| axis::trim(v),
    }
}

fn tick_fmt(m: &str) -> fn(f64) -> String {
    match m {
        "lat_mean_ns" => axis::short_lat,
        _ => axis::compact,
    }
}

/// Value printed above a bar: short enough to fit over it.
fn value_fmt(m: &str) -> fn(f64) -> String {
    match m {
        "lat_mean_ns" => fmt::lat,
        _ => |v| {
            let v = axis::clean(v);
            if v.abs() >= 99_999.5 {
                axis::compact(v)
            } else if v.abs() >= 99.95 {
                let g = fmt::group(v.abs().round() as u64);
                if v < 0.0 {
                    format!("-{g}")
                } else {
                    g
                }
            } else {
                format!("{v:.1}")
            }
        },
    }
}

fn p_value(p: Option<f64>) -> String {
    match p {
        Some(p) if p.is_finite() && p < 0.001 => "< 0.001".to_string(),
        Some(p) if p.is_finite() => format!("{p:.3}"),
        _ => "–".to_string(),
    }
}

fn verdict_class(v: Verdict) -> &'static str {
    match v {
        Verdict::Faster => "ok",
        Verdict::Slower => "bad",
        Verdict::WithinNoise | Verdict::Inconclusive => "",
    }
}

fn compare_row_figure(c: &CompareResult, row: &CompareRow, n: usize) -> Figure {
    let subject_color =
        |label: &str, i: usize| charts::color(c.subjects.iter().position(|s| s.label == label).unwrap_or(i));
    let bars: Vec<charts::Bar> = row
        .samples
        .iter()
        .enumerate()
        .map(|(i, s)| charts::Bar {
            label: s.label.clone(),
            color: subject_color(&s.label, i),
            mean: s.mean,
            lo: s.ci_low,
            hi: s.ci_high,
        })
        .collect();
    let better = if row.higher_is_better { "higher is better" } else { "lower is better" };
    let vs: Vec<String> = row
        .versus
        .iter()
        .map(|v| {
            let p = match p_value(v.p_value) {
                p if p == "–" => String::new(),
                p if p.starts_with('<') => format!(" (p {p})"),
                p => format!(" (p = {p})"),
            };
            format!("{} {}{p}", v.label, crate::history_text::change_words(&v.change()))
        })
        .collect();
    let mut caption = format!("{} ({better})", metric_name(&row.metric));
    if !vs.is_empty() {
        caption.push_str(&format!("; vs {}: {}", c.baseline, vs.join("; ")));
    }
    Figure::new(
        format!("chart-compare-bars-{n}"),
        "compare-bars",
        format!("{} · {}", row.test, row.direction),
        caption,
        charts::bars(&bars, tick_fmt(&row.metric), value_fmt(&row.metric), &metric_name(&row.metric)),
    )
}

/// "1 pass", "5 passes", "10 seconds".
fn sample_count(s: &stats::SampleStats) -> String {
    match (s.n, s.unit.as_str()) {
        (1, "passes") => "1 pass".to_string(),
        (1, "seconds") => "1 second".to_string(),
        (n, unit) => format!("{n} {unit}"),
    }
}

fn compare_view(c: &CompareResult) -> CompareView {
    let level = if c.confidence.is_finite() && c.confidence > 0.0 && c.confidence < 1.0 {
        format!("{} %", axis::trim(c.confidence * 100.0))
    } else {
        "95 %".to_string()
    };
    let test = match c.test {
        stats::TestKind::Welch => "Welch's t-test",
        stats::TestKind::MannWhitney => "Mann-Whitney U test",
    };
    let facts = vec![
        ("baseline".to_string(), c.baseline.clone()),
        (
            "verdict".to_string(),
            format!(
                "within noise when the {level} interval of the change lies within ±{} %; faster or slower when it \
                 excludes no change and the change is beyond ±{} % (one pass a side: no interval, beyond ±{} %); \
                 else inconclusive",
                stats::verdict::NOISE_THRESHOLD_PCT,
                stats::verdict::NOISE_THRESHOLD_PCT,
                stats::verdict::SINGLE_PASS_FLOOR_PCT
            ),
        ),
        ("p-value".to_string(), format!("{test}, two-sided, for reference")),
        (
            "samples".to_string(),
            if c.interleaved {
                "passes interleaved A B A B … (measured now)".to_string()
            } else {
                "read from result files".to_string()
            },
        ),
    ];
    let subjects = c
        .subjects
        .iter()
        .enumerate()
        .map(|(i, s)| SubjectRow {
            label: s.label.clone(),
            source: match &s.folder {
                Some(f) => format!("{} (in the folder {f})", s.source),
                None => s.source.clone(),
            },
            device: s.device.clone().unwrap_or_else(|| "–".to_string()),
            color: charts::hex(charts::color(i)),
        })
        .collect();
    let figures = c
        .rows
        .iter()
        .filter(|r| !r.samples.is_empty())
        .take(MAX_COMPARE_CHARTS)
        .enumerate()
        .map(|(i, r)| compare_row_figure(c, r, i + 1))
        .collect();
    let charted = c.rows.iter().filter(|r| !r.samples.is_empty()).count();
    let note = if charted > MAX_COMPARE_CHARTS {
        format!("Charts are drawn for the first {MAX_COMPARE_CHARTS} of {charted} rows; the table lists all.")
    } else {
        String::new()
    };
    let rows = c
        .rows
        .iter()
        .map(|row| {
            let f = metric_fmt(&row.metric);
            let mut subjects: Vec<CmpCell> = row
                .samples
                .iter()
                .map(|s| {
                    let vs = row.versus.iter().find(|v| v.label == s.label);
                    let ratio = match vs {
                        Some(v) => crate::history_text::change_figure(&v.change()),
                        None if s.label == c.baseline => "baseline".to_string(),
                        None => "–".to_string(),
                    };
                    CmpCell {
                        label: s.label.clone(),
                        n: sample_count(s),
                        mean: f(s.mean),
                        // One value has no interval: say so, never "x – x".
                        ci: if s.n >= 2 {
                            format!("{} – {}", f(s.ci_low), f(s.ci_high))
                        } else {
                            "no interval".to_string()
                        },
                        ratio,
                        p: vs.map(|v| p_value(v.p_value)).unwrap_or_default(),
                        verdict: vs.map(|v| v.verdict.name().to_string()).unwrap_or_default(),
                        class: vs.map(|v| verdict_class(v.verdict)).unwrap_or(""),
                    }
                })
                .collect();
            if subjects.is_empty() {
                subjects.push(CmpCell {
                    label: "–".to_string(),
                    n: "0".to_string(),
                    mean: "–".to_string(),
                    ci: "–".to_string(),
                    ratio: "–".to_string(),
                    p: "–".to_string(),
                    verdict: String::new(),
                    class: "",
                });
            }
            CmpRow {
                test: row.test.clone(),
                direction: row.direction.clone(),
                metric: metric_name(&row.metric),
                subjects,
            }
        })
        .collect();
    CompareView { level, facts, subjects, figures, note, rows }
}
