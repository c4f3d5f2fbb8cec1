//! The `steady` section (`ResultDoc::steady`: the SNIA PTS IOPS test) and the `sustained`
//! section (`ResultDoc::sustained`: the write cliff and its recovery): the facts and tables of
//! the text formats ([`crate::steady_text`]) and their charts — the tracking variables per
//! round with the steady-state window, the preconditioning rate over time, and the sustained
//! write's MB/s against bytes written with the cliff marked. The SVGs are written directly
//! (rectangles, lines, polylines and text; every string escaped), as in `surface`.

use std::fmt::Write as _;

use stats::steady::{ProgressPoint, SteadyResult, SustainedResult, Tracking};
use stats::ResultDoc;

use super::axis::{self, Axis};
use super::charts::{self, BEST, BOUND, MUTED_DASH, WRITE};
use super::view::{escape, legend, Figure};
use crate::fmt;
use crate::steady_text as text;

const W: f64 = 1100.0;
const H: f64 = 390.0;
/// Plot area inside the SVG (room above it for the window's label).
const L: f64 = 78.0;
const R: f64 = 1080.0;
const T: f64 = 30.0;
const B: f64 = 330.0;
/// Lines are thinned to about this many points (the slowest and fastest of each stretch).
const MAX_POINTS: usize = 2000;
/// Rounds beyond this get no dot of their own.
const MAX_DOTS: usize = 60;

const TEXT: &str = "#374151";
const MUTED: &str = "#6b7280";

pub(super) struct SteadyView {
    pub verdict: String,
    pub verdict_class: &'static str,
    pub facts: Vec<(String, String)>,
    pub notes: Vec<String>,
    /// The tracking variables per round (IOPS, then p99 when tracked).
    pub figures: Vec<Figure>,
    /// The preconditioning rate over time.
    pub precondition: Option<Figure>,
    /// Heads of the per-round table's value columns: the tracking variables.
    pub vars: Vec<String>,
    pub rounds: Vec<RoundRow>,
    pub window: String,
    pub checks: Vec<CheckRow>,
    pub table_title: String,
    pub mixes: Vec<String>,
    pub table: Vec<(String, Vec<String>)>,
}

pub(super) struct RoundRow {
    pub round: u32,
    pub start: String,
    pub values: Vec<String>,
    pub in_window: bool,
}

pub(super) struct CheckRow {
    pub name: String,
    pub mean: String,
    pub min: String,
    pub max: String,
    pub range: String,
    pub range_limit: String,
    pub range_ok: bool,
    pub slope: String,
    pub excursion: String,
    pub excursion_limit: String,
    pub slope_ok: bool,
}

pub(super) struct SustainedView {
    pub verdict: String,
    pub facts: Vec<(String, String)>,
    pub figures: Vec<Figure>,
    /// Idle, fast bytes, recovered, written, time, MB/s.
    pub recovery: Vec<[String; 6]>,
}

// ---------------------------------------------------------------------------------------
// drawing

/// Scale x into `L..R` and y into `B..T`.
struct Frame {
    x: Axis,
    y: Axis,
}

impl Frame {
    fn px(&self, v: f64) -> f64 {
        let f = (axis::clean(v) - self.x.lo) / (self.x.hi - self.x.lo).max(1e-12);
        L + (R - L) * f.clamp(0.0, 1.0)
    }
    fn py(&self, v: f64) -> f64 {
        let f = (axis::clean(v) - self.y.lo) / (self.y.hi - self.y.lo).max(1e-12);
        B - (B - T) * f.clamp(0.0, 1.0)
    }
}

/// The `<svg>` head: size, an accessible name (`aria-label` and `<title>`), white ground.
fn open_svg(out: &mut String, label: &str) {
    let label = escape(label);
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{H}\" viewBox=\"0 0 {W} {H}\" \
         font-family=\"sans-serif\" role=\"img\" aria-label=\"{label}\"><title>{label}</title>\
         <rect width=\"{W}\" height=\"{H}\" fill=\"#ffffff\"/>"
    );
}

fn text_at(out: &mut String, x: f64, y: f64, anchor: &str, size: f64, fill: &str, s: &str) {
    let _ = write!(
        out,
        "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" font-size=\"{size}\" fill=\"{fill}\">{}</text>",
        escape(s)
    );
}

/// Grid lines, tick labels and axis titles of a frame.
fn axes(
    out: &mut String,
    f: &Frame,
    xtitle: &str,
    ytitle: &str,
    xfmt: &dyn Fn(f64) -> String,
    yfmt: &dyn Fn(f64) -> String,
) {
    for &t in &f.y.ticks {
        let y = f.py(t);
        let _ = write!(out, "<line x1=\"{L}\" x2=\"{R}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e2e5ea\"/>");
        text_at(out, L - 8.0, y + 4.0, "end", 13.0, MUTED, &yfmt(t));
    }
    for &t in &f.x.ticks {
        let x = f.px(t);
        let _ = write!(out, "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{T}\" y2=\"{B}\" stroke=\"#f1f3f5\"/>");
        text_at(out, x, B + 18.0, "middle", 13.0, MUTED, &xfmt(t));
    }
    let _ = write!(
        out,
        "<rect x=\"{L}\" y=\"{T}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#9ca3af\"/>",
        R - L,
        B - T
    );
    text_at(out, (L + R) / 2.0, B + 42.0, "middle", 13.0, TEXT, xtitle);
    let _ = write!(
        out,
        "<text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\" fill=\"{TEXT}\">{}</text>",
        (T + B) / 2.0,
        escape(ytitle)
    );
}

fn polyline(out: &mut String, pts: &[(f64, f64)], color: &str, width: f64, extra: &str) {
    if pts.len() < 2 {
        for p in pts {
            let _ = write!(out, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>", p.0, p.1);
        }
        return;
    }
    let d: Vec<String> = pts.iter().map(|p| format!("{:.1},{:.1}", p.0, p.1)).collect();
    let _ = write!(
        out,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{width}\" \
         stroke-linejoin=\"round\"{extra}/>",
        d.join(" ")
    );
}

/// A vertical dashed marker across the plot, labelled at its top (left of it near the
/// right edge).
fn marker(out: &mut String, x: f64, color: &str, class: &str, label: &str, title: &str) {
    let _ = write!(
        out,
        "<line class=\"{class}\" x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{T}\" y2=\"{B}\" stroke=\"{color}\" \
         stroke-width=\"2\" stroke-dasharray=\"6 4\"><title>{}</title></line>",
        escape(title)
    );
    let right = x + 8.0 + label.chars().count() as f64 * 7.0 > R;
    let (tx, anchor) = if right { (x - 6.0, "end") } else { (x + 6.0, "start") };
    text_at(out, tx, T + 16.0, anchor, 13.0, color, label);
}

/// At most about [`MAX_POINTS`] points: beyond that, the lowest and the highest of each
/// stretch, in order (dips and spikes stay visible).
fn thin(pts: &[(f64, f64)]) -> Vec<(f64, f64)> {
    if pts.len() <= MAX_POINTS {
        return pts.to_vec();
    }
    let per = pts.len().div_ceil(MAX_POINTS / 2);
    let mut out = Vec::with_capacity(MAX_POINTS + 2);
    for chunk in pts.chunks(per) {
        let lo = chunk.iter().enumerate().min_by(|a, b| a.1 .1.total_cmp(&b.1 .1)).map(|(i, _)| i).unwrap_or(0);
        let hi = chunk.iter().enumerate().max_by(|a, b| a.1 .1.total_cmp(&b.1 .1)).map(|(i, _)| i).unwrap_or(0);
        out.push(chunk[lo.min(hi)]);
        if lo != hi {
            out.push(chunk[lo.max(hi)]);
        }
    }
    out
}

/// Bytes per unit of a byte axis and its name: GiB from 1 GiB up, MiB below.
fn byte_unit(max: f64) -> (f64, &'static str) {
    const G: f64 = (1u64 << 30) as f64;
    const M: f64 = (1u64 << 20) as f64;
    if max >= G {
        (G, "GiB")
    } else {
        (M, "MiB")
    }
}

fn largest(vals: impl Iterator<Item = f64>) -> f64 {
    vals.map(axis::clean).fold(0.0, f64::max)
}

// ---------------------------------------------------------------------------------------
// steady: the tracking variables per round

/// Signed value per round: `−100/round`, `+4.00 µs/round`.
fn per_round(metric: &str, v: f64) -> String {
    let sign = if v < 0.0 { "−" } else { "+" };
    format!("{sign}{}/round", text::value(metric, v.abs()))
}

/// One chart of the tracking variables whose values are latencies (`latency`) or IOPS, with
/// the window shaded and each variable's window mean ± 10 % (a band as wide as the 20 %
/// range limit), its mean dashed and its least-squares line dotted.
fn tracking_figure(s: &SteadyResult, latency: bool) -> Option<Figure> {
    let vars: Vec<(usize, &Tracking)> = s
        .tracking
        .iter()
        .enumerate()
        .filter(|(_, t)| text::is_latency(&t.metric) == latency && !t.values.is_empty())
        .collect();
    if vars.is_empty() {
        return None;
    }
    let n = text::round_count(s).max(1);
    let window = s.window.as_ref().and_then(|w| {
        let (a, b) = (w.first_round.max(1) as usize, (w.last_round as usize).min(n));
        (a <= b).then_some((a, b, w))
    });
    let check = |t: &Tracking| s.window.as_ref().and_then(|w| w.checks.iter().find(|c| c.name == t.name));
    let ymax = largest(
        vars.iter()
            .flat_map(|(_, t)| t.values.iter().copied())
            .chain(vars.iter().filter_map(|(_, t)| check(t).map(|c| c.check.mean * 1.1))),
    );
    let every = n.div_ceil(25).max(1);
    let x = Axis {
        lo: 0.5,
        hi: n as f64 + 0.5,
        ticks: (1..=n).filter(|r| (r - 1) % every == 0).map(|r| r as f64).collect(),
        minor: Vec::new(),
    };
    let f = Frame { x, y: axis::linear(0.0, ymax * 1.08, 6) };
    let what = if latency { "p99 latency" } else { "IOPS" };
    let names: Vec<&str> = vars.iter().map(|(_, t)| t.name.as_str()).collect();
    let window_words = match window {
        Some((a, b, w)) if w.steady => format!("steady-state window rounds {a}–{b}"),
        Some((a, b, _)) => format!("rounds {a}–{b}, the last {}, not steady", b + 1 - a),
        None => "no window".to_string(),
    };
    let mut out = String::new();
    open_svg(
        &mut out,
        &format!("Line chart: {what} per round of {} over {n} rounds; {window_words}", names.join(", ")),
    );
    let yfmt: &dyn Fn(f64) -> String = if latency { &axis::short_lat } else { &axis::compact };
    axes(&mut out, &f, "round", what, &|v| format!("{v:.0}"), yfmt);
    let accent = charts::hex(BEST);
    if let Some((a, b, w)) = window {
        let (x0, x1) = (f.px(a as f64 - 0.5), f.px(b as f64 + 0.5));
        let label = if w.steady {
            format!("steady-state window: rounds {a}–{b}")
        } else {
            format!("last {} rounds: not steady", b + 1 - a)
        };
        let _ = write!(
            out,
            "<rect class=\"window\" x=\"{x0:.1}\" y=\"{T}\" width=\"{:.1}\" height=\"{}\" fill=\"{accent}\" \
             fill-opacity=\"0.08\" stroke=\"{accent}\" stroke-opacity=\"0.35\"><title>{}</title></rect>",
            x1 - x0,
            B - T,
            escape(&label)
        );
        text_at(&mut out, x0 + 4.0, T - 8.0, "start", 13.0, &accent, &label);
    }
    let dots = n <= MAX_DOTS;
    for &(i, t) in &vars {
        let c = charts::hex(charts::color(i));
        if let (Some((a, b, _)), Some(k)) = (window, check(t)) {
            let k = &k.check;
            let (x0, x1) = (f.px(a as f64 - 0.5), f.px(b as f64 + 0.5));
            let (top, bottom) = (f.py(k.mean * 1.1), f.py(k.mean * 0.9));
            let _ = write!(
                out,
                "<rect class=\"band\" x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{c}\" \
                 fill-opacity=\"0.16\"><title>{}: window mean {} ± 10 %</title></rect>",
                x1 - x0,
                (bottom - top).max(0.5),
                escape(&t.name),
                escape(&text::value(&t.metric, k.mean))
            );
            let ym = f.py(k.mean);
            let _ = write!(
                out,
                "<line x1=\"{x0:.1}\" x2=\"{x1:.1}\" y1=\"{ym:.1}\" y2=\"{ym:.1}\" stroke=\"{c}\" \
                 stroke-width=\"1.5\" stroke-dasharray=\"6 4\"/>"
            );
            let fit =
                [(f.px(a as f64), f.py(k.intercept)), (f.px(b as f64), f.py(k.intercept + k.slope * (b - a) as f64))];
            polyline(&mut out, &fit, &c, 1.5, " stroke-dasharray=\"2 3\"");
        }
        let pts: Vec<(f64, f64)> =
            t.values.iter().enumerate().take(n).map(|(r, &v)| (f.px(r as f64 + 1.0), f.py(v))).collect();
        polyline(&mut out, &pts, &c, 2.0, "");
        if dots && pts.len() > 1 {
            for (r, (p, v)) in pts.iter().zip(&t.values).enumerate() {
                let _ = write!(
                    out,
                    "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"{c}\"><title>round {}: {} {}</title></circle>",
                    p.0,
                    p.1,
                    r + 1,
                    escape(&t.name),
                    escape(&text::value(&t.metric, *v))
                );
            }
        }
    }
    out.push_str("</svg>");
    let kind = if latency { "steady-p99" } else { "steady-iops" };
    let band = match window {
        Some((_, _, w)) if w.steady => "shaded: the steady-state window",
        Some(_) => "shaded: the last rounds, which did not pass",
        None => "no window was tested",
    };
    let mut fig = Figure::new(
        format!("chart-{kind}"),
        kind,
        if latency { "p99 latency per round".into() } else { "IOPS per round".into() },
        format!(
            "{what} of each tracking variable per round ({band}); over the window a band of the variable's mean \
             ± 10 % (as wide as the 20 % range limit), the mean dashed and the least-squares line dotted (its rise \
             across the window may be at most 10 % of the mean)"
        ),
        Ok(out),
    );
    fig.legend = vars.iter().map(|&(i, t)| legend(charts::color(i), t.name.clone(), "line")).collect();
    if window.is_some() {
        fig.legend.push(legend(BEST, "window", "dot"));
        fig.legend.push(legend(MUTED_DASH, "window mean (dashed) ± 10 % (band)", "dash"));
    }
    Some(fig)
}

/// MB/s of the preconditioning writes over time, the start of each pass after the first
/// marked.
fn precondition_figure(s: &SteadyResult) -> Option<Figure> {
    let p = &s.precondition;
    if p.series.is_empty() {
        return None;
    }
    let tmax = largest(p.series.iter().map(|q| q.t_s));
    let (div, unit) = charts::time_unit(tmax);
    let ymax = largest(p.series.iter().map(|q| q.mb_s));
    let f = Frame { x: axis::linear(0.0, tmax / div, 10), y: axis::linear(0.0, ymax * 1.08, 6) };
    let mut out = String::new();
    open_svg(
        &mut out,
        &format!(
            "Line chart: preconditioning MB/s over {}, {} of {} passes",
            text::duration(p.seconds),
            p.passes_done,
            p.passes_planned
        ),
    );
    axes(&mut out, &f, &format!("time ({unit})"), "MB/s", &|v| axis::trim(v), &|v| axis::trim(v));
    let pts: Vec<(f64, f64)> = p.series.iter().map(|q| (q.t_s / div, q.mb_s)).collect();
    let pts: Vec<(f64, f64)> = thin(&pts).into_iter().map(|(x, y)| (f.px(x), f.py(y))).collect();
    let c = charts::hex(WRITE);
    polyline(&mut out, &pts, &c, 2.0, "");
    if s.range_bytes > 0 {
        for k in 1..p.passes_done.min(p.passes_planned).min(64) {
            let at = u64::from(k).saturating_mul(s.range_bytes);
            if let Some(q) = p.series.iter().find(|q| q.bytes >= at) {
                let label = format!("pass {}", k + 1);
                marker(&mut out, f.px(q.t_s / div), MUTED, "pass", &label, &format!("{label} starts"));
            }
        }
    }
    out.push_str("</svg>");
    let mut fig = Figure::new(
        "chart-steady-precondition".into(),
        "steady-precondition",
        "Preconditioning".into(),
        format!(
            "MB/s per second of the sequential {} writes at QD {} over {} of the range ({} of {} passes{})",
            fmt::bytes(p.bs),
            p.qd,
            fmt::bytes(p.bytes),
            p.passes_done,
            p.passes_planned,
            if p.complete { "" } else { ", incomplete" }
        ),
        Ok(out),
    );
    fig.legend = vec![legend(WRITE, "write MB/s", "line")];
    if p.passes_done > 1 {
        fig.legend.push(legend(MUTED_DASH, "start of a pass", "dash"));
    }
    Some(fig)
}

pub(super) fn steady_view(s: &SteadyResult) -> SteadyView {
    let mut facts = vec![
        ("test".to_string(), text::setup_parts(s).join(" · ")),
        ("purge".to_string(), text::purge_text(s)),
        ("preconditioning".to_string(), text::precondition_parts(s).join(" · ")),
        ("rounds".to_string(), format!("{} of at most {}", text::round_count(s), s.max_rounds)),
        ("window".to_string(), text::window_text(s)),
        ("time".to_string(), format!("{} in all (purge, preconditioning and rounds)", text::duration(s.seconds))),
    ];
    if s.latency {
        facts.push(("latency".to_string(), "p99 latency is tracked too".to_string()));
    }
    let mut notes = Vec::new();
    if !s.skipped.is_empty() {
        notes.push(format!("Skipped: {}.", s.skipped.join("; ")));
    }
    let rounds = text::round_lines(s)
        .into_iter()
        .map(|l| RoundRow {
            round: l.round,
            start: l.t_s.map_or("–".to_string(), text::duration),
            values: l.values,
            in_window: l.in_window,
        })
        .collect();
    let checks = s
        .window
        .iter()
        .flat_map(|w| &w.checks)
        .map(|c| {
            let m = text::check_metric(s, c);
            let k = &c.check;
            CheckRow {
                name: c.name.clone(),
                mean: text::value(m, k.mean),
                min: text::value(m, k.min),
                max: text::value(m, k.max),
                range: text::value(m, k.range),
                range_limit: text::value(m, k.range_limit),
                range_ok: k.range_ok,
                slope: per_round(m, k.slope),
                excursion: text::value(m, k.excursion),
                excursion_limit: text::value(m, k.excursion_limit),
                slope_ok: k.slope_ok,
            }
        })
        .collect();
    let steady = s.window.as_ref().is_some_and(|w| w.steady);
    SteadyView {
        verdict: if s.verdict.trim().is_empty() { "No verdict was recorded.".to_string() } else { s.verdict.clone() },
        verdict_class: if steady { "" } else { " miss" },
        facts,
        notes,
        figures: [tracking_figure(s, false), tracking_figure(s, true)].into_iter().flatten().collect(),
        precondition: precondition_figure(s),
        vars: s.tracking.iter().map(|t| t.name.clone()).collect(),
        rounds,
        window: text::window_text(s),
        checks,
        table_title: format!("IOPS by block size and read/write mix ({})", text::table_basis(s)),
        mixes: s.table.mixes.clone(),
        table: text::table_cells(s),
    }
}

// ---------------------------------------------------------------------------------------
// sustained

/// MB/s against bytes written: the write, each recovery re-test from zero, the cliff marked
/// and the cliff threshold dashed.
fn sustained_figure(s: &SustainedResult) -> Option<Figure> {
    if s.series.is_empty() && s.recovery.iter().all(|r| r.series.is_empty()) {
        return None;
    }
    let all = || s.series.iter().chain(s.recovery.iter().flat_map(|r| &r.series));
    let xmax = largest(all().map(|p| p.bytes as f64).chain(s.cliff.map(|c| c.offset_bytes as f64)));
    let (div, unit) = byte_unit(xmax);
    let threshold = s.fraction * s.start_mb_s;
    let ymax = largest(all().map(|p| p.mb_s).chain([s.start_mb_s, threshold]));
    let f = Frame { x: axis::linear(0.0, xmax / div, 10), y: axis::linear(0.0, ymax * 1.08, 6) };
    let mut out = String::new();
    let cliff_words = match &s.cliff {
        Some(c) => format!("a cliff after {}", fmt::bytes(c.offset_bytes)),
        None => "no cliff".to_string(),
    };
    open_svg(
        &mut out,
        &format!(
            "Line chart: MB/s against bytes written, {} written, {cliff_words}, {} recovery re-tests",
            fmt::bytes(s.bytes_written),
            s.recovery.len()
        ),
    );
    axes(&mut out, &f, &format!("bytes written ({unit})"), "MB/s", &|v| axis::trim(v), &|v| axis::trim(v));
    let line_of = |series: &[ProgressPoint]| -> Vec<(f64, f64)> {
        let pts: Vec<(f64, f64)> = series.iter().map(|p| (p.bytes as f64 / div, p.mb_s)).collect();
        thin(&pts).into_iter().map(|(x, y)| (f.px(x), f.py(y))).collect()
    };
    if threshold > 0.0 {
        let y = f.py(threshold);
        let _ = write!(
            out,
            "<line x1=\"{L}\" x2=\"{R}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"{MUTED}\" stroke-dasharray=\"4 4\"/>"
        );
        let label = format!("{} % of the start", axis::trim(s.fraction * 100.0));
        text_at(&mut out, R - 6.0, y - 6.0, "end", 12.0, MUTED, &label);
    }
    for (i, r) in s.recovery.iter().enumerate() {
        polyline(&mut out, &line_of(&r.series), &charts::hex(charts::color(i + 2)), 1.5, "");
    }
    polyline(&mut out, &line_of(&s.series), &charts::hex(WRITE), 2.0, "");
    if let Some(c) = &s.cliff {
        let label = format!("cliff at {}", fmt::bytes(c.offset_bytes));
        let title = format!(
            "{label} ({}): {} → {} MB/s",
            text::duration(c.t_s),
            fmt::rate(c.mb_s_before),
            fmt::rate(c.mb_s_after)
        );
        marker(&mut out, f.px(c.offset_bytes as f64 / div), &charts::hex(BOUND), "cliff", &label, &title);
    }
    out.push_str("</svg>");
    let mut fig = Figure::new(
        "chart-sustained".into(),
        "sustained-write",
        "Sustained write".into(),
        format!(
            "MB/s of each second against the bytes written so far, {} writes at QD {}; dashed: {} % of the starting \
             rate (a lasting drop below it is a cliff){}",
            fmt::bytes(s.bs),
            s.qd,
            axis::trim(s.fraction * 100.0),
            if s.recovery.is_empty() {
                String::new()
            } else {
                "; each re-test after an idle pause rewrites the first region and starts from zero".to_string()
            }
        ),
        Ok(out),
    );
    fig.legend.push(legend(WRITE, "write", "line"));
    for (i, r) in s.recovery.iter().enumerate() {
        fig.legend.push(legend(
            charts::color(i + 2),
            format!("re-test after {} idle", text::duration(r.idle_s)),
            "line",
        ));
    }
    if s.cliff.is_some() {
        fig.legend.push(legend(BOUND, "cliff", "dash"));
    }
    Some(fig)
}

pub(super) fn sustained_view(doc: &ResultDoc) -> Option<SustainedView> {
    let s = doc.sustained.as_ref()?;
    let mut facts =
        vec![("written".to_string(), text::written_parts(s).join(" · ")), ("cliff".to_string(), text::cliff_text(s))];
    if let Some(t) = text::recovered_text(s) {
        facts.push(("recovered".to_string(), t));
    }
    let recovery = s
        .recovery
        .iter()
        .map(|r| {
            [
                text::duration(r.idle_s),
                fmt::bytes(r.fast_bytes),
                format!("{:.1} %", axis::clean(r.recovered_pct)),
                fmt::bytes(r.bytes),
                text::duration(r.seconds),
                fmt::rate(r.mb_s),
            ]
        })
        .collect();
    Some(SustainedView {
        verdict: if s.verdict.trim().is_empty() { "No verdict was recorded.".to_string() } else { s.verdict.clone() },
        facts,
        figures: sustained_figure(s).into_iter().collect(),
        recovery,
    })
}

#[cfg(test)]
mod tests {
    use crate::steady_text::fixtures::*;

    /// The `<figure>` with `data-chart="kind"`.
    fn figure<'a>(html: &'a str, kind: &str) -> &'a str {
        let at = html.find(&format!("data-chart=\"{kind}\"")).unwrap_or_else(|| panic!("no {kind} figure"));
        let start = html[..at].rfind("<figure").unwrap_or(0);
        let end = html[at..].find("</figure>").map_or(html.len(), |e| at + e);
        &html[start..end]
    }

    #[test]
    fn steady_page_has_the_window_band_and_tables() {
        let html = crate::render_html(&steady_doc());
        let iops = figure(&html, "steady-iops");
        assert!(iops.contains("<svg") && iops.contains("class=\"window\""), "{iops}");
        assert!(iops.contains("steady-state window: rounds 3–7"));
        // One ± 10 % band per variable of the chart, over the window.
        assert_eq!(iops.matches("class=\"band\"").count(), 2);
        assert!(iops.contains("role=\"img\"") && iops.contains("<title>"));
        let p99 = figure(&html, "steady-p99");
        assert!(p99.contains("class=\"window\"") && p99.contains("4K 0/100 p99"));
        assert!(figure(&html, "steady-precondition").contains("pass 2"));
        for id in ["steady-rounds", "steady-checks", "steady-table"] {
            assert!(html.contains(&format!("id=\"{id}\"")), "{id}");
        }
        assert!(html.contains("rounds 3–7: steady"));
        assert!(!html.contains("id=\"results\""), "no empty job table for a steady document");
        assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());

        let html = crate::render_html(&not_steady_doc());
        let iops = figure(&html, "steady-iops");
        assert!(iops.contains("class=\"window\"") && iops.contains("last 5 rounds: not steady"));
        assert!(!html.contains("data-chart=\"steady-p99\""), "no latency tracked");
        assert!(html.contains("class=\"verdict miss\""));
    }

    #[test]
    fn sustained_page_has_the_cliff_marker() {
        let html = crate::render_html(&mark_with_sustained());
        let fig = figure(&html, "sustained-write");
        assert!(fig.contains("class=\"cliff\""), "{fig}");
        assert!(fig.contains("cliff at 21.61 GiB"), "{fig}");
        assert!(fig.contains("re-test after 60 s idle") && fig.contains("re-test after 5 min idle"));
        assert!(fig.contains("bytes written (GiB)"));
        assert!(html.contains("id=\"sustained-recovery\""));
        // The card comes first, then the sustained section.
        let card = html.find("id=\"chart-mark-card\"").expect("card");
        assert!(card < html.find("id=\"sustained\"").expect("section"));

        let mut d = mark_with_sustained();
        d.sustained = Some(sustained_flat());
        let html = crate::render_html(&d);
        let fig = figure(&html, "sustained-write");
        assert!(!fig.contains("class=\"cliff\"") && fig.contains("70 % of the start"));
        assert!(!html.contains("id=\"sustained-recovery\""));
    }

    #[test]
    fn text_is_escaped() {
        let mut d = steady_doc();
        let s = d.steady.as_mut().expect("steady");
        s.tracking[0].name = "<b>x</b>&".into();
        s.verdict = "<script>".into();
        let html = crate::render_html(&d);
        assert!(!html.contains("<b>x</b>") && !html.contains("<script>"));
        assert!(html.contains("&lt;b&gt;x&lt;/b&gt;&amp;"));
    }

    #[test]
    fn long_series_are_thinned() {
        let pts: Vec<(f64, f64)> = (0..100_000).map(|i| (f64::from(i), if i == 5_000 { -1.0 } else { 1.0 })).collect();
        let t = super::thin(&pts);
        assert!(t.len() <= super::MAX_POINTS + 2, "{}", t.len());
        assert!(t.contains(&(5_000.0, -1.0)), "the dip survives");
        assert!(t.windows(2).all(|w| w[0].0 < w[1].0), "in order");
    }
}
