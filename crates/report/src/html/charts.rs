//! The SVG charts, drawn with plotters' SVG backend into strings. Callers pass plain,
//! already cleaned numbers; ranges and ticks come from [`super::axis`]. Every function
//! returns the `<svg>…</svg>` text or a message saying why the chart could not be drawn.

use std::error::Error;

use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, Ranged};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::axis::{self, Axis};

type R<T> = Result<T, Box<dyn Error>>;
type Coord = Cartesian2d<Ticked, Ticked>;
type Area<'b> = DrawingArea<SVGBackend<'b>, Shift>;
type Chart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Coord>;

const TEXT: RGBColor = RGBColor(0x37, 0x41, 0x51);
const MUTED: RGBColor = RGBColor(0x6b, 0x72, 0x80);
const GRID: RGBColor = RGBColor(0xe2, 0xe5, 0xea);
const MINOR: RGBColor = RGBColor(0xf1, 0xf3, 0xf5);
const AXIS: RGBColor = RGBColor(0x9c, 0xa3, 0xaf);
const LINK: RGBColor = RGBColor(0xc4, 0xcb, 0xd4);

/// Muted, distinguishable series colours (Tableau 10 order).
pub(crate) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x76, 0xb7, 0xb2),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xed, 0xc9, 0x48),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0xff, 0x9d, 0xa7),
    RGBColor(0x79, 0x70, 0x6e),
];
pub(crate) const READ: RGBColor = PALETTE[0];
pub(crate) const WRITE: RGBColor = PALETTE[1];
pub(crate) const FEASIBLE: RGBColor = RGBColor(0x2f, 0x85, 0x5a);
pub(crate) const INFEASIBLE: RGBColor = RGBColor(0xc0, 0x39, 0x2b);
pub(crate) const BEST: RGBColor = RGBColor(0x1d, 0x4e, 0x89);
pub(crate) const KNEE: RGBColor = RGBColor(0x8e, 0x44, 0xad);
pub(crate) const BOUND: RGBColor = RGBColor(0xb9, 0x1c, 0x1c);

/// `#rrggbb` of a colour, for HTML legends.
pub(crate) fn hex(c: RGBColor) -> String {
    format!("#{:02x}{:02x}{:02x}", c.0, c.1, c.2)
}

/// Colour `i` of the palette, cycling.
pub(crate) fn color(i: usize) -> RGBColor {
    PALETTE[i % PALETTE.len()]
}

/// A text style of `px` CSS pixels (the SVG backend writes size / 1.24).
fn font(px: f64, c: RGBColor) -> TextStyle<'static> {
    ("sans-serif", px * 1.24).into_font().color(&c)
}

fn fail(e: Box<dyn Error>) -> String {
    format!("chart could not be drawn: {e}")
}

/// Draw into a fresh SVG of `w`×`h` and return its text.
fn svg(w: u32, h: u32, draw: impl FnOnce(&Area) -> R<()>) -> Result<String, String> {
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (w, h)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| fail(e.into()))?;
        draw(&root).map_err(fail)?;
        root.present().map_err(|e| fail(e.into()))?;
    }
    Ok(buf.trim().to_string())
}

/// A linear f64 axis whose ticks (bold) and light lines are exactly those of an [`Axis`]:
/// plotters' own tick search is never consulted.
pub(crate) struct Ticked(Axis);

impl Ranged for Ticked {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        let span = self.0.hi - self.0.lo;
        let f = if span > 0.0 && v.is_finite() { ((v - self.0.lo) / span).clamp(-4.0, 5.0) } else { 0.5 };
        limit.0 + (f64::from(limit.1 - limit.0) * f).round() as i32
    }

    fn key_points<H: KeyPointHint>(&self, hint: H) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            self.0.minor.clone()
        } else {
            self.0.ticks.clone()
        }
    }

    fn range(&self) -> Range<f64> {
        self.0.lo..self.0.hi
    }
}

fn build<'a, 'b>(area: &'a Area<'b>, x: &Axis, y: &Axis, xl: u32, yl: u32) -> R<Chart<'a, 'b>> {
    let (xr, yr) = (Ticked(x.clone()), Ticked(y.clone()));
    Ok(ChartBuilder::on(area)
        .margin_top(16)
        .margin_right(28)
        .margin_left(6)
        .margin_bottom(4)
        .x_label_area_size(xl)
        .y_label_area_size(yl)
        .build_cartesian_2d(xr, yr)?)
}

fn mesh(
    chart: &mut Chart,
    xfmt: &dyn Fn(&f64) -> String,
    yfmt: &dyn Fn(&f64) -> String,
    xdesc: &str,
    ydesc: &str,
) -> R<()> {
    chart
        .configure_mesh()
        .x_label_formatter(xfmt)
        .y_label_formatter(yfmt)
        .x_desc(xdesc)
        .y_desc(ydesc)
        .label_style(font(13.0, MUTED))
        .axis_desc_style(font(13.0, TEXT))
        .bold_line_style(GRID)
        .light_line_style(MINOR)
        .axis_style(AXIS)
        .set_all_tick_mark_size(4)
        .draw()?;
    Ok(())
}

fn log_label(v: &f64) -> String {
    axis::short_lat(10f64.powf(*v))
}

/// The min and max of an iterator of finite values, or `None` when empty.
fn bounds(vals: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    vals.filter(|v| v.is_finite()).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
    })
}

// ---------------------------------------------------------------------------------------
// latency CDF

/// One CDF line: `(latency ns, fraction 0..1)` points.
pub(crate) struct CdfLine {
    pub color: RGBColor,
    pub points: Vec<(f64, f64)>,
}

pub(crate) fn latency_cdf(lines: &[CdfLine]) -> Result<String, String> {
    let pts: Vec<Vec<(f64, f64)>> = lines
        .iter()
        .map(|l| {
            let mut p: Vec<(f64, f64)> =
                l.points.iter().map(|&(ns, f)| (axis::log_ns(ns), axis::clean(f).clamp(0.0, 1.0) * 100.0)).collect();
            p.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.total_cmp(&b.0)));
            p
        })
        .collect();
    let (lo, hi) = bounds(pts.iter().flatten().map(|p| p.0)).unwrap_or((3.0, 6.0));
    let x = axis::log(lo, hi);
    let y = Axis { lo: 0.0, hi: 100.0, ticks: (0..=10).map(|i| f64::from(i) * 10.0).collect(), minor: Vec::new() };
    svg(1100, 440, |root| {
        let mut chart = build(root, &x, &y, 48, 64)?;
        mesh(&mut chart, &log_label, &|v| format!("{v:.0} %"), "completion latency (log scale)", "I/Os completed")?;
        // Tail guides: the median and p99 are what people read off a CDF.
        for (q, label) in [(50.0, "p50"), (99.0, "p99")] {
            chart.draw_series(DashedLineSeries::new(
                vec![(x.lo, q), (x.hi, q)],
                4,
                4,
                ShapeStyle { color: MUTED.mix(0.6), filled: false, stroke_width: 1 },
            ))?;
            let (px, py) = chart.backend_coord(&(x.hi, q));
            root.draw(&Text::new(label, (px - 4, py - 3), font(11.0, MUTED).pos(Pos::new(HPos::Right, VPos::Bottom))))?;
        }
        for (line, p) in lines.iter().zip(&pts) {
            let style = ShapeStyle { color: line.color.to_rgba(), filled: false, stroke_width: 2 };
            if p.len() == 1 {
                chart.draw_series(p.iter().map(|&c| Circle::new(c, 4, line.color.filled())))?;
            } else {
                chart.draw_series(LineSeries::new(p.iter().copied(), style))?;
            }
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// timeline

/// One direction of one job over time.
pub(crate) struct TimeLine {
    pub color: RGBColor,
    /// `(t_s, IOPS)` for every interval.
    pub iops: Vec<(f64, f64)>,
    /// Runs of `(t_s, p99 ns)` over intervals that completed I/O (gaps where none did).
    pub lat: Vec<Vec<(f64, f64)>>,
}

fn draw_runs(chart: &mut Chart, runs: &[Vec<(f64, f64)>], c: RGBColor, dots: bool) -> R<()> {
    let style = ShapeStyle { color: c.to_rgba(), filled: false, stroke_width: 2 };
    for run in runs {
        if run.len() > 1 {
            chart.draw_series(LineSeries::new(run.iter().copied(), style))?;
        }
        if dots || run.len() == 1 {
            chart.draw_series(run.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
        }
    }
    Ok(())
}

pub(crate) fn timeline(lines: &[TimeLine]) -> Result<String, String> {
    let clean = |v: &[(f64, f64)]| -> Vec<(f64, f64)> {
        v.iter().map(|&(t, y)| (axis::clean(t), axis::clean(y).max(0.0))).collect()
    };
    let iops: Vec<Vec<(f64, f64)>> = lines.iter().map(|l| clean(&l.iops)).collect();
    let lat: Vec<Vec<Vec<(f64, f64)>>> = lines
        .iter()
        .map(|l| l.lat.iter().map(|r| r.iter().map(|&(t, ns)| (axis::clean(t), ns)).collect()).collect())
        .collect();
    let (t0, t1) = bounds(iops.iter().flatten().map(|p| p.0)).unwrap_or((0.0, 1.0));
    let x = axis::linear(t0.min(0.0), t1, 10);
    let (_, ymax) = bounds(iops.iter().flatten().map(|p| p.1)).unwrap_or((0.0, 1.0));
    let y_iops = axis::linear(0.0, ymax, 5);
    let lat_vals = || lat.iter().flatten().flatten().map(|p| axis::clean(p.1).max(0.0));
    let (lmin, lmax) = bounds(lat_vals()).unwrap_or((0.0, 1.0));
    // Latency spikes of 100× are common: switch to a log axis when a linear one would
    // flatten everything else into the floor.
    let log_lat = lmin > 0.0 && lmax / lmin > 30.0;
    let y_lat = if log_lat { axis::log(axis::log_ns(lmin), axis::log_ns(lmax)) } else { axis::linear(0.0, lmax, 5) };
    let dots = iops.iter().map(Vec::len).max().unwrap_or(0) <= 30;
    svg(1100, 480, |root| {
        let (top, bottom) = root.split_vertically(230);
        let mut c = build(&top, &x, &y_iops, 30, 64)?;
        mesh(&mut c, &|v| axis::trim(*v), &|v| axis::compact(*v), "", "IOPS")?;
        for (l, pts) in lines.iter().zip(&iops) {
            draw_runs(&mut c, std::slice::from_ref(pts), l.color, dots)?;
        }
        let mut c = build(&bottom, &x, &y_lat, 44, 64)?;
        let ylab: &dyn Fn(&f64) -> String = if log_lat { &log_label } else { &|v| axis::short_lat(*v) };
        let ydesc = if log_lat { "p99 latency (log)" } else { "p99 latency" };
        mesh(&mut c, &|v| axis::trim(*v), ylab, "time (s)", ydesc)?;
        for (l, runs) in lines.iter().zip(&lat) {
            let runs: Vec<Vec<(f64, f64)>> = runs
                .iter()
                .map(|r| {
                    r.iter()
                        .map(|&(t, ns)| (t, if log_lat { axis::log_ns(ns) } else { axis::clean(ns).max(0.0) }))
                        .collect()
                })
                .collect();
            draw_runs(&mut c, &runs, l.color, dots)?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// sla curve

/// One measured point of the search, ready to plot.
pub(crate) struct SlaDot {
    pub iops: f64,
    pub metric_ns: f64,
    pub feasible: bool,
    pub label: String,
    /// Points of one worker count (or of the open-loop rate sweep) share a group and are
    /// joined in `order`.
    pub group: u32,
    pub order: f64,
    pub best: bool,
    pub knee: bool,
}

/// Pixel boxes of labels already placed, to keep new ones off them.
struct Placer {
    taken: Vec<(i32, i32, i32, i32)>,
    area: (i32, i32, i32, i32),
}

impl Placer {
    fn free(&self, b: (i32, i32, i32, i32)) -> bool {
        let inside = b.0 >= self.area.0 && b.1 >= self.area.1 && b.2 <= self.area.2 && b.3 <= self.area.3;
        inside && self.taken.iter().all(|t| b.2 <= t.0 || b.0 >= t.2 || b.3 <= t.1 || b.1 >= t.3)
    }
}

/// Approximate rendered width of `s` at `px` pixels (sans-serif averages ~0.6 em).
fn text_width(s: &str, px: f64) -> i32 {
    (s.chars().count() as f64 * px * 0.6).ceil() as i32
}

pub(crate) fn sla_curve(dots: &[SlaDot], bound_ns: f64, bound_label: &str) -> Result<String, String> {
    let pts: Vec<(f64, f64)> = dots.iter().map(|d| (axis::clean(d.iops).max(0.0), axis::log_ns(d.metric_ns))).collect();
    let (_, xmax) = bounds(pts.iter().map(|p| p.0)).unwrap_or((0.0, 1.0));
    let x = axis::linear(0.0, xmax * 1.06, 8);
    let by = axis::log_ns(bound_ns);
    let (ylo, yhi) = bounds(pts.iter().map(|p| p.1).chain([by])).unwrap_or((by, by));
    let y = axis::log(ylo, yhi);
    svg(1100, 540, |root| {
        let mut chart = build(root, &x, &y, 48, 70)?;
        mesh(&mut chart, &|v| axis::compact(*v), &log_label, "IOPS", "latency (log scale)")?;
        // Connect the points of each group in search order so the curve reads as a curve.
        let mut groups: Vec<u32> = dots.iter().map(|d| d.group).collect();
        groups.sort_unstable();
        groups.dedup();
        for g in groups {
            let mut line: Vec<(f64, (f64, f64))> =
                dots.iter().zip(&pts).filter(|(d, _)| d.group == g).map(|(d, p)| (d.order, *p)).collect();
            line.sort_by(|a, b| a.0.total_cmp(&b.0));
            if line.len() > 1 {
                chart.draw_series(LineSeries::new(line.into_iter().map(|(_, p)| p), LINK.stroke_width(2)))?;
            }
        }
        // The bound.
        chart.draw_series(DashedLineSeries::new(
            vec![(x.lo, by), (x.hi, by)],
            8,
            5,
            ShapeStyle { color: BOUND.to_rgba(), filled: false, stroke_width: 2 },
        ))?;
        let area = chart.plotting_area().get_pixel_range();
        let mut placer = Placer { taken: Vec::new(), area: (area.0.start, area.1.start, area.0.end, area.1.end) };
        let (bx, bpy) = chart.backend_coord(&(x.lo, by));
        let bl = format!("bound: {bound_label}");
        let bw = text_width(&bl, 13.0);
        root.draw(&Text::new(
            bl.clone(),
            (bx + 8, bpy - 4),
            font(13.0, BOUND).pos(Pos::new(HPos::Left, VPos::Bottom)),
        ))?;
        placer.taken.push((bx + 6, bpy - 22, bx + 12 + bw, bpy));
        // The bound line itself: labels must not be struck through.
        placer.taken.push((area.0.start, bpy - 2, area.0.end, bpy + 2));
        // Markers.
        let pix: Vec<(i32, i32)> = pts.iter().map(|p| chart.backend_coord(p)).collect();
        for &(px, py) in &pix {
            placer.taken.push((px - 6, py - 6, px + 6, py + 6));
        }
        for (d, p) in dots.iter().zip(&pts) {
            if d.feasible {
                chart.draw_series(std::iter::once(Circle::new(*p, 5, FEASIBLE.filled())))?;
            } else {
                chart.draw_series(std::iter::once(Cross::new(*p, 5, INFEASIBLE.stroke_width(2))))?;
            }
            if d.best {
                chart.draw_series(std::iter::once(Circle::new(*p, 10, BEST.stroke_width(2))))?;
            }
            if d.knee {
                chart.draw_series(std::iter::once(Circle::new(*p, 14, KNEE.stroke_width(2))))?;
            }
        }
        // Labels: best and knee first (always drawn), then depths where they fit.
        let mut order: Vec<usize> = (0..dots.len()).collect();
        order.sort_by_key(|&i| (!dots[i].best, !dots[i].knee));
        for i in order {
            let d = &dots[i];
            let (px, py) = pix[i];
            let mut text = d.label.clone();
            let mut c = TEXT;
            let mut size = 12.0;
            if d.best {
                text = format!("best · {text}");
                c = BEST;
                size = 13.0;
            } else if d.knee {
                text = format!("knee · {text}");
                c = KNEE;
                size = 13.0;
            }
            if d.best && d.knee {
                text = format!("best = knee · {}", d.label);
            }
            let w = text_width(&text, size);
            let h = size as i32 + 2;
            let r = if d.knee {
                17
            } else if d.best {
                13
            } else {
                8
            };
            let candidates = [
                (px + r, py - h / 2, HPos::Left, VPos::Center),
                (px - r - w, py - h / 2, HPos::Right, VPos::Center),
                (px - w / 2, py - r - h, HPos::Center, VPos::Bottom),
                (px - w / 2, py + r, HPos::Center, VPos::Top),
                (px + r, py - r - h, HPos::Left, VPos::Bottom),
                (px + r, py + r, HPos::Left, VPos::Top),
                (px - r - w, py - r - h, HPos::Right, VPos::Bottom),
                (px - r - w, py + r, HPos::Right, VPos::Top),
            ];
            let pick = candidates.iter().find(|c| placer.free((c.0, c.1, c.0 + w, c.1 + h)));
            let pick = match pick {
                Some(p) => p,
                None if d.best || d.knee => &candidates[0],
                None => continue,
            };
            let (bx0, by0, hp, vp) = *pick;
            placer.taken.push((bx0, by0, bx0 + w, by0 + h));
            let ax = match hp {
                HPos::Left => bx0,
                HPos::Right => bx0 + w,
                HPos::Center => bx0 + w / 2,
            };
            let ay = match vp {
                VPos::Top => by0,
                VPos::Bottom => by0 + h,
                VPos::Center => by0 + h / 2,
            };
            root.draw(&Text::new(text, (ax, ay), font(size, c).pos(Pos::new(hp, vp))))?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// compare bars

/// One subject's bar: mean and its confidence interval.
pub(crate) struct Bar {
    pub label: String,
    pub color: RGBColor,
    pub mean: f64,
    pub lo: f64,
    pub hi: f64,
}

fn short(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

pub(crate) fn bars(
    bars: &[Bar],
    fmt: fn(f64) -> String,
    value: fn(f64) -> String,
    ydesc: &str,
) -> Result<String, String> {
    let vals: Vec<(f64, f64, f64)> = bars
        .iter()
        .map(|b| {
            let m = axis::clean(b.mean);
            let (lo, hi) = (axis::clean(b.lo), axis::clean(b.hi));
            (m, lo.min(hi), hi.max(lo))
        })
        .collect();
    let (vlo, vhi) = bounds(vals.iter().flat_map(|v| [v.0, v.1, v.2])).unwrap_or((0.0, 1.0));
    let y = axis::linear(vlo.min(0.0), vhi * 1.12, 5);
    let n = bars.len().max(1);
    let x = Axis { lo: 0.0, hi: n as f64, ticks: (0..n).map(|i| i as f64 + 0.5).collect(), minor: Vec::new() };
    let labels: Vec<String> = bars.iter().map(|b| short(&b.label, if n > 4 { 8 } else { 14 })).collect();
    let xfmt = |v: &f64| -> String {
        let i = v.floor();
        if i >= 0.0 && (i as usize) < labels.len() {
            labels[i as usize].clone()
        } else {
            String::new()
        }
    };
    svg(360, 260, |root| {
        let mut chart = build(root, &x, &y, 30, 64)?;
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_label_formatter(&xfmt)
            .y_label_formatter(&|v| fmt(*v))
            .y_desc(ydesc)
            .label_style(font(12.0, MUTED))
            .x_label_style(font(12.0, TEXT))
            .axis_desc_style(font(12.0, TEXT))
            .bold_line_style(GRID)
            .light_line_style(MINOR)
            .axis_style(AXIS)
            .set_all_tick_mark_size(3)
            .draw()?;
        let base = 0f64.clamp(y.lo, y.hi);
        for (i, (b, &(m, lo, hi))) in bars.iter().zip(&vals).enumerate() {
            let i = i as f64;
            chart.draw_series(std::iter::once(Rectangle::new([(i + 0.2, base), (i + 0.8, m)], b.color.filled())))?;
            let whisker = TEXT.stroke_width(1);
            if hi > lo {
                chart.draw_series(std::iter::once(PathElement::new(vec![(i + 0.5, lo), (i + 0.5, hi)], whisker)))?;
                for v in [lo, hi] {
                    chart.draw_series(std::iter::once(PathElement::new(vec![(i + 0.4, v), (i + 0.6, v)], whisker)))?;
                }
            }
            let (px, py) = chart.backend_coord(&(i + 0.5, m.max(hi)));
            root.draw(&Text::new(value(m), (px, py - 3), font(12.0, TEXT).pos(Pos::new(HPos::Center, VPos::Bottom))))?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// cache: warm-up and miss-ratio curve

pub(crate) const MRC: RGBColor = PALETTE[0];
/// Legend colour of muted dashed guides.
pub(crate) const MUTED_DASH: RGBColor = MUTED;

/// One policy's read hit ratio over trace time.
pub(crate) struct HitLine {
    pub color: RGBColor,
    pub label: String,
    /// `(t_s, interval read hit ratio 0..1)`; non-finite ratios (intervals without reads)
    /// leave gaps.
    pub points: Vec<(f64, f64)>,
    /// Trace time at which the policy counts as warm, when known.
    pub warmup_s: Option<f64>,
    /// Label of the warm-up marker.
    pub warm_label: String,
}

/// The unit in which a trace span of `span_s` seconds reads best: `(seconds per unit, name)`.
pub(crate) fn time_unit(span_s: f64) -> (f64, &'static str) {
    if span_s >= 3.0 * 3600.0 {
        (3600.0, "h")
    } else if span_s >= 180.0 {
        (60.0, "min")
    } else {
        (1.0, "s")
    }
}

/// Runs of consecutive finite points, `(x, y)` mapped by `f`; a non-finite `y` ends a run.
fn runs(points: &[(f64, f64)], f: impl Fn(f64, f64) -> (f64, f64)) -> Vec<Vec<(f64, f64)>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    for &(x, y) in points {
        if x.is_finite() && y.is_finite() {
            cur.push(f(x, y));
        } else if !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The area between a line and zero, as a polygon (plotters' area series is not enabled).
fn under(line: &[(f64, f64)], c: RGBAColor) -> Polygon<(f64, f64)> {
    let mut v = line.to_vec();
    if let (Some(first), Some(last)) = (line.first(), line.last()) {
        v.push((last.0, 0.0));
        v.push((first.0, 0.0));
    }
    Polygon::new(v, c.filled())
}

/// Text on a translucent white box, so it stays readable over lines and grid.
fn label(root: &Area, text: &str, at: (i32, i32), px: f64, c: RGBColor, pos: Pos) -> R<()> {
    let w = (text.chars().count() as f64 * px * 0.55).ceil() as i32;
    let h = px as i32 + 4;
    let x0 = match pos.h_pos {
        HPos::Left => at.0,
        HPos::Right => at.0 - w,
        HPos::Center => at.0 - w / 2,
    };
    let y0 = match pos.v_pos {
        VPos::Top => at.1,
        VPos::Bottom => at.1 - h,
        VPos::Center => at.1 - h / 2,
    };
    root.draw(&Rectangle::new([(x0 - 3, y0 - 1), (x0 + w + 3, y0 + h)], WHITE.mix(0.85).filled()))?;
    root.draw(&Text::new(text.to_string(), at, font(px, c).pos(pos)))?;
    Ok(())
}

/// Read hit ratio per interval of every policy (top), with each policy's warm-up time
/// dashed, and the cache occupancy of one policy (bottom).
pub(crate) fn cache_warmup(lines: &[HitLine], occupancy: &[(f64, f64)], occ_color: RGBColor) -> Result<String, String> {
    let times = lines
        .iter()
        .flat_map(|l| l.points.iter().map(|p| p.0).chain(l.warmup_s))
        .chain(occupancy.iter().map(|p| p.0))
        .filter(|t| t.is_finite())
        .map(axis::clean);
    let (t0, t1) = bounds(times).unwrap_or((0.0, 1.0));
    let t0 = t0.min(0.0);
    let (div, unit) = time_unit(t1 - t0);
    let x = axis::linear(t0 / div, t1 / div, 10);
    let y = Axis {
        lo: 0.0,
        hi: 100.0,
        ticks: (0..=5).map(|i| f64::from(i) * 20.0).collect(),
        minor: (0..5).map(|i| f64::from(i) * 20.0 + 10.0).collect(),
    };
    let y_occ = axis::linear(0.0, 100.0, 4);
    let pct = |v: f64| axis::clean(v).clamp(0.0, 1.0) * 100.0;
    let hits: Vec<Vec<Vec<(f64, f64)>>> =
        lines.iter().map(|l| runs(&l.points, |t, h| (axis::clean(t) / div, pct(h)))).collect();
    let occ = runs(occupancy, |t, o| (axis::clean(t) / div, pct(o)));
    let dots = lines.iter().map(|l| l.points.len()).chain([occupancy.len()]).max().unwrap_or(0) <= 30;
    svg(1100, 560, |root| {
        let (top, bottom) = root.split_vertically(360);
        let mut c = build(&top, &x, &y, 30, 64)?;
        mesh(&mut c, &|v| axis::trim(*v), &|v| format!("{v:.0} %"), "", "read hit ratio per interval")?;
        for (l, r) in lines.iter().zip(&hits) {
            draw_runs(&mut c, r, l.color, dots)?;
        }
        // Warm-up times: a dashed line per policy, labelled low in the chart (right of the
        // markers the curves are warm, i.e. high), one row per policy, latest at the bottom.
        let area = c.plotting_area().get_pixel_range();
        let mut marks: Vec<(f64, &HitLine)> = lines
            .iter()
            .filter_map(|l| l.warmup_s.filter(|w| w.is_finite()).map(|w| ((axis::clean(w) / div).clamp(x.lo, x.hi), l)))
            .collect();
        marks.sort_by(|a, b| b.0.total_cmp(&a.0));
        for (row, &(xv, l)) in marks.iter().enumerate() {
            c.draw_series(DashedLineSeries::new(
                vec![(xv, 0.0), (xv, 100.0)],
                6,
                4,
                ShapeStyle { color: l.color.to_rgba(), filled: false, stroke_width: 2 },
            ))?;
            let (px, _) = c.backend_coord(&(xv, 0.0));
            let text = l.warm_label.clone();
            let w = text_width(&text, 12.0) + 18;
            let y = area.1.end - 18 - 20 * row as i32;
            if y < area.1.start + 10 {
                break;
            }
            let (x0, pos) = if px + 8 + w > area.0.end {
                (px - 6 - w, Pos::new(HPos::Left, VPos::Center))
            } else {
                (px + 6, Pos::new(HPos::Left, VPos::Center))
            };
            root.draw(&Rectangle::new([(x0 - 3, y - 9), (x0 + w + 3, y + 9)], WHITE.mix(0.9).filled()))?;
            root.draw(&PathElement::new(vec![(x0, y), (x0 + 12, y)], l.color.stroke_width(3)))?;
            root.draw(&Text::new(text, (x0 + 17, y), font(12.0, TEXT).pos(pos)))?;
        }
        let mut c = build(&bottom, &x, &y_occ, 44, 64)?;
        mesh(&mut c, &|v| axis::trim(*v), &|v| format!("{v:.0} %"), &format!("trace time ({unit})"), "occupancy")?;
        for r in &occ {
            if r.len() > 1 {
                c.draw_series(std::iter::once(under(r, occ_color.mix(0.15))))?;
            }
        }
        draw_runs(&mut c, &occ, occ_color, dots)?;
        Ok(())
    })
}

/// A marked size on the miss-ratio curve.
pub(crate) struct SizeMark {
    pub bytes: f64,
    /// Miss ratio 0..1 at that size (`None`: a full-height line).
    pub miss: Option<f64>,
    pub label: String,
}

/// Miss ratio (0–100 %) against cache size on a log2 axis labelled in binary units; drawn
/// as steps (`step`, for stack-distance curves) or a line through the simulated sizes.
pub(crate) fn cache_mrc(
    points: &[(f64, f64)],
    step: bool,
    recommended: Option<&SizeMark>,
    configured: Option<&SizeMark>,
) -> Result<String, String> {
    let pct = |m: f64| axis::clean(m).clamp(0.0, 1.0) * 100.0;
    let mut pts: Vec<(f64, f64)> = points
        .iter()
        .filter(|p| p.0.is_finite() && p.0 >= 1.0 && p.1.is_finite())
        .map(|&(b, m)| (axis::log2_bytes(b), pct(m)))
        .collect();
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
    let marks = [recommended, configured];
    let xs = pts.iter().map(|p| p.0).chain(marks.iter().flatten().map(|m| axis::log2_bytes(m.bytes)));
    let (lo, hi) = bounds(xs).unwrap_or((20.0, 30.0));
    let x = axis::log2(lo, hi);
    let y = Axis {
        lo: 0.0,
        hi: 100.0,
        ticks: (0..=5).map(|i| f64::from(i) * 20.0).collect(),
        minor: (0..5).map(|i| f64::from(i) * 20.0 + 10.0).collect(),
    };
    let path: Vec<(f64, f64)> = if step {
        let mut v = Vec::with_capacity(pts.len() * 2);
        for (i, p) in pts.iter().enumerate() {
            v.push(*p);
            if let Some(n) = pts.get(i + 1) {
                v.push((n.0, p.1));
            }
        }
        v
    } else {
        pts.clone()
    };
    svg(1100, 460, |root| {
        let mut c = build(root, &x, &y, 48, 64)?;
        mesh(
            &mut c,
            &|v| axis::bytes_label(*v),
            &|v| format!("{v:.0} %"),
            "cache size (log scale)",
            "read miss ratio",
        )?;
        let area = c.plotting_area().get_pixel_range();
        if let Some(m) = configured {
            let xv = axis::log2_bytes(m.bytes).clamp(x.lo, x.hi);
            c.draw_series(DashedLineSeries::new(
                vec![(xv, 0.0), (xv, 100.0)],
                4,
                4,
                ShapeStyle { color: MUTED.to_rgba(), filled: false, stroke_width: 1 },
            ))?;
            let (px, _) = c.backend_coord(&(xv, 100.0));
            let right = px + 8 + text_width(&m.label, 12.0) > area.0.end;
            let at = (if right { px - 5 } else { px + 5 }, area.1.start + 4);
            label(root, &m.label, at, 12.0, MUTED, Pos::new(if right { HPos::Right } else { HPos::Left }, VPos::Top))?;
        }
        if path.len() > 1 {
            c.draw_series(std::iter::once(under(&path, MRC.mix(0.12))))?;
            c.draw_series(LineSeries::new(path.iter().copied(), MRC.stroke_width(2)))?;
        }
        if pts.len() <= 40 {
            c.draw_series(pts.iter().map(|&p| Circle::new(p, 3, MRC.filled())))?;
        }
        if let Some(m) = recommended {
            let xv = axis::log2_bytes(m.bytes).clamp(x.lo, x.hi);
            let yv = m.miss.map(pct).unwrap_or(0.0);
            c.draw_series(DashedLineSeries::new(
                vec![(xv, 0.0), (xv, yv)],
                6,
                4,
                ShapeStyle { color: BEST.to_rgba(), filled: false, stroke_width: 2 },
            ))?;
            c.draw_series(std::iter::once(Circle::new((xv, yv), 7, BEST.stroke_width(2))))?;
            let (px, py) = c.backend_coord(&(xv, yv));
            // Keep the label off the curve: try boxes beside and above the point, nearest
            // first, and take the first that no segment of the curve crosses.
            let curve: Vec<(i32, i32)> = path.iter().map(|p| c.backend_coord(p)).collect();
            let crosses = |b: (i32, i32, i32, i32)| {
                curve.windows(2).any(|s| {
                    (0..=8).any(|k| {
                        let f = f64::from(k) / 8.0;
                        let x = f64::from(s[0].0) + f * f64::from(s[1].0 - s[0].0);
                        let y = f64::from(s[0].1) + f * f64::from(s[1].1 - s[0].1);
                        x >= f64::from(b.0) && x <= f64::from(b.2) && y >= f64::from(b.1) && y <= f64::from(b.3)
                    })
                })
            };
            let w = (m.label.chars().count() as f64 * 13.0 * 0.55).ceil() as i32;
            let h = 18;
            let inside = |b: (i32, i32, i32, i32)| {
                b.0 >= area.0.start && b.2 <= area.0.end && b.1 >= area.1.start && b.3 <= area.1.end
            };
            let mut candidates = Vec::new();
            for up in [14, 34, 54, 74, 94, 124, 154, 184] {
                candidates.push((px + 12, py - up - h));
                candidates.push((px - 12 - w, py - up - h));
                candidates.push((px - w / 2, py - up - h));
            }
            candidates.push((px + 12, py + 14));
            let pick = candidates
                .iter()
                .copied()
                .find(|&(x0, y0)| {
                    let b = (x0 - 3, y0 - 1, x0 + w + 3, y0 + h);
                    inside(b) && !crosses(b)
                })
                .unwrap_or((px + 12, (py - 14 - h).max(area.1.start)));
            let (x0, y0) = pick;
            if y0 + h < py - 16 {
                // A leader from the label down to the marker.
                let lx = (px).clamp(x0, x0 + w);
                root.draw(&PathElement::new(vec![(lx, y0 + h), (px, py - 8)], BEST.mix(0.6).stroke_width(1)))?;
            }
            label(root, &m.label, (x0, y0 + h / 2), 13.0, BEST, Pos::new(HPos::Left, VPos::Center))?;
        }
        Ok(())
    })
}

// ---------------------------------------------------------------------------------------
// cluster: one bar per rank

/// Colour of a rank's bar, and of the slowest rank's.
pub(crate) const RANK: RGBColor = PALETTE[0];
pub(crate) const SLOWEST: RGBColor = INFEASIBLE;

/// One rank's bar.
pub(crate) struct HostBar {
    pub label: String,
    pub value: f64,
    /// The slowest rank: drawn in [`SLOWEST`].
    pub highlight: bool,
}

/// Horizontal bars, one per rank from the top down, each with its value at its end, and the
/// median dashed. Rows get thinner for many ranks; labels then go to every k-th bar only.
pub(crate) fn host_bars(
    bars: &[HostBar],
    median: Option<f64>,
    value: fn(f64) -> String,
    xdesc: &str,
) -> Result<String, String> {
    let n = bars.len().max(1);
    let row: u32 = if n <= 24 { 28 } else { (720 / n as u32).max(3) };
    let every = 16u32.div_ceil(row) as usize;
    let vals: Vec<f64> = bars.iter().map(|b| axis::clean(b.value).max(0.0)).collect();
    let median = median.map(axis::clean).filter(|m| *m > 0.0);
    let vmax = vals.iter().copied().chain(median).fold(0.0, f64::max);
    // Room right of the longest bar for its value.
    let x = axis::linear(0.0, vmax * 1.15, 8);
    let mut ticks: Vec<f64> = (0..bars.len()).filter(|i| i % every == 0).map(|i| (n - 1 - i) as f64 + 0.5).collect();
    ticks.sort_by(f64::total_cmp);
    let y = Axis { lo: 0.0, hi: n as f64, ticks, minor: Vec::new() };
    let labels: Vec<String> = bars.iter().map(|b| short(&b.label, 26)).collect();
    let yfmt = |v: &f64| -> String {
        let i = n as f64 - 1.0 - v.floor();
        if i >= 0.0 && (i as usize) < labels.len() {
            labels[i as usize].clone()
        } else {
            String::new()
        }
    };
    let widest = labels.iter().map(|l| text_width(l, 12.0)).max().unwrap_or(0);
    let yl = (widest + 20).clamp(60, 240) as u32;
    let h = n as u32 * row + 70;
    svg(1100, h, |root| {
        let mut chart = build(root, &x, &y, 44, yl)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .x_label_formatter(&|v| axis::compact(*v))
            .y_label_formatter(&yfmt)
            .x_desc(xdesc)
            .label_style(font(12.0, MUTED))
            .y_label_style(font(12.0, TEXT))
            .axis_desc_style(font(13.0, TEXT))
            .bold_line_style(GRID)
            .light_line_style(MINOR)
            .axis_style(AXIS)
            .set_all_tick_mark_size(3)
            .draw()?;
        let centre = |i: usize| (n - 1 - i) as f64 + 0.5;
        for (i, (b, &v)) in bars.iter().zip(&vals).enumerate() {
            let c = if b.highlight { SLOWEST } else { RANK };
            let yc = centre(i);
            chart.draw_series(std::iter::once(Rectangle::new([(0.0, yc - 0.34), (v, yc + 0.34)], c.filled())))?;
        }
        if let (Some(m), true) = (median, bars.len() > 1) {
            chart.draw_series(DashedLineSeries::new(
                vec![(m, 0.0), (m, n as f64)],
                6,
                4,
                ShapeStyle { color: MUTED.to_rgba(), filled: false, stroke_width: 2 },
            ))?;
        }
        // Values last, on a white box, so the median line does not strike them through.
        if row >= 14 {
            for (i, &v) in vals.iter().enumerate() {
                let (px, py) = chart.backend_coord(&(v, centre(i)));
                label(root, &value(v), (px + 6, py), 12.0, TEXT, Pos::new(HPos::Left, VPos::Center))?;
            }
        }
        Ok(())
    })
}
