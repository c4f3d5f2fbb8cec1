//! The `surface` section: scan facts, the transfer rate against position (zone rates with
//! the band between each zone's fastest and slowest block, write rates, slow and bad
//! blocks marked), the random access times, and the latency map as a heat grid. The SVGs
//! are written directly (rectangles, polylines and text; every string escaped).

use std::fmt::Write as _;

use stats::surface::SurfaceResult;

use super::axis::{self, Axis};
use super::charts::{self, READ, WRITE};
use super::view::{escape, legend, Figure};
use crate::fmt;

const W: f64 = 1100.0;
const H: f64 = 380.0;
/// Plot area inside the SVG.
const L: f64 = 74.0;
const R: f64 = 1080.0;
const T: f64 = 16.0;
const B: f64 = 320.0;
/// Columns of the heat grid.
const GRID_COLS: usize = 100;

const SLOW: plotters::style::RGBColor = plotters::style::RGBColor(0xe0, 0x8e, 0x0b);
const BAD: plotters::style::RGBColor = plotters::style::RGBColor(0xc0, 0x39, 0x2b);

pub(super) struct SurfaceView {
    pub mode: String,
    pub verdict: String,
    pub verdict_class: &'static str,
    pub facts: Vec<(String, String)>,
    pub figures: Vec<Figure>,
    pub slow: Vec<[String; 5]>,
    pub bad: Vec<[String; 4]>,
    pub notes: Vec<String>,
}

/// Scale a position (bytes) into `L..R` and a value into `B..T`.
struct Frame {
    x: Axis,
    y: Axis,
    xdiv: f64,
}

impl Frame {
    fn px(&self, bytes: f64) -> f64 {
        let f = (bytes / self.xdiv - self.x.lo) / (self.x.hi - self.x.lo).max(1e-12);
        L + (R - L) * f.clamp(0.0, 1.0)
    }
    fn py(&self, v: f64) -> f64 {
        let f = (v - self.y.lo) / (self.y.hi - self.y.lo).max(1e-12);
        B - (B - T) * f.clamp(0.0, 1.0)
    }
}

/// Unit for a byte axis: (divisor, name).
fn byte_unit(max: f64) -> (f64, &'static str) {
    const G: f64 = (1u64 << 30) as f64;
    const M: f64 = (1u64 << 20) as f64;
    if max >= 4.0 * G {
        (G, "GiB")
    } else if max >= 4.0 * M {
        (M, "MiB")
    } else {
        (1024.0, "KiB")
    }
}

fn open_svg(out: &mut String, h: f64) {
    let _ = write!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{W}\" height=\"{h}\" viewBox=\"0 0 {W} {h}\" \
         font-family=\"sans-serif\"><rect width=\"{W}\" height=\"{h}\" fill=\"#ffffff\"/>"
    );
}

fn text(out: &mut String, x: f64, y: f64, anchor: &str, size: f64, fill: &str, s: &str) {
    let _ = write!(
        out,
        "<text x=\"{x:.1}\" y=\"{y:.1}\" text-anchor=\"{anchor}\" font-size=\"{size}\" fill=\"{fill}\">{}</text>",
        escape(s)
    );
}

/// Grid lines, tick labels and axis titles of a frame.
fn axes(out: &mut String, f: &Frame, xunit: &str, ytitle: &str, yfmt: &dyn Fn(f64) -> String) {
    for &t in &f.y.ticks {
        let y = f.py(t);
        let _ = write!(out, "<line x1=\"{L}\" x2=\"{R}\" y1=\"{y:.1}\" y2=\"{y:.1}\" stroke=\"#e2e5ea\"/>");
        text(out, L - 8.0, y + 4.0, "end", 13.0, "#6b7280", &yfmt(t));
    }
    for &t in &f.x.ticks {
        let x = L + (R - L) * ((t - f.x.lo) / (f.x.hi - f.x.lo).max(1e-12)).clamp(0.0, 1.0);
        let _ = write!(out, "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{T}\" y2=\"{B}\" stroke=\"#f1f3f5\"/>");
        text(out, x, B + 18.0, "middle", 13.0, "#6b7280", &axis::trim(t));
    }
    let _ = write!(
        out,
        "<rect x=\"{L}\" y=\"{T}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#9ca3af\"/>",
        R - L,
        B - T
    );
    text(out, (L + R) / 2.0, B + 40.0, "middle", 13.0, "#374151", &format!("position ({xunit})"));
    let _ = write!(
        out,
        "<text transform=\"translate(16 {:.1}) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\" fill=\"#374151\">{}</text>",
        (T + B) / 2.0,
        escape(ytitle)
    );
}

fn polyline(out: &mut String, pts: &[(f64, f64)], color: &str, width: f64) {
    if pts.len() < 2 {
        for p in pts {
            let _ = write!(out, "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{color}\"/>", p.0, p.1);
        }
        return;
    }
    let d: Vec<String> = pts.iter().map(|p| format!("{:.1},{:.1}", p.0, p.1)).collect();
    let _ = write!(
        out,
        "<polyline points=\"{}\" fill=\"none\" stroke=\"{color}\" stroke-width=\"{width}\" stroke-linejoin=\"round\"/>",
        d.join(" ")
    );
}

/// Marks along the bottom of the plot: slow blocks (triangles) and bad sectors (crosses).
fn marks(out: &mut String, f: &Frame, s: &SurfaceResult) {
    let slow = charts::hex(SLOW);
    for b in &s.slow_blocks {
        let x = f.px(b.offset as f64);
        let _ = write!(
            out,
            "<path d=\"M{:.1},{:.1} l-6,11 h12 z\" fill=\"{slow}\"><title>slow block at {} ({}): {}</title></path>",
            x,
            B - 13.0,
            b.offset,
            escape(&fmt::lat(b.lat_ns as f64)),
            escape(&b.status)
        );
    }
    let bad = charts::hex(BAD);
    for b in &s.bad_sectors {
        let x = f.px(b.offset as f64);
        let _ = write!(
            out,
            "<line x1=\"{x:.1}\" x2=\"{x:.1}\" y1=\"{T}\" y2=\"{B}\" stroke=\"{bad}\" stroke-width=\"1.5\" \
             stroke-dasharray=\"4 3\"><title>bad sector at {} ({})</title></line>",
            b.offset,
            escape(&b.error)
        );
    }
}

fn rate_figure(s: &SurfaceResult) -> Option<Figure> {
    let zones: Vec<_> = s.zones.iter().filter(|z| z.mb_s.is_some_and(f64::is_finite)).collect();
    if zones.is_empty() {
        return None;
    }
    let end = s.offset.saturating_add(s.size) as f64;
    let (xdiv, unit) = byte_unit(end);
    // Per zone: the rate of its fastest and slowest block (bytes per block / latency).
    let band: Vec<(f64, f64, f64, f64)> = zones
        .iter()
        .map(|z| {
            let per = z.bytes as f64 / z.blocks.max(1) as f64;
            let mid = z.offset as f64 + z.size as f64 / 2.0;
            let hi = if z.lat_min_ns > 0 { per / 1e6 / (z.lat_min_ns as f64 / 1e9) } else { z.mb_s.unwrap_or(0.0) };
            let lo = if z.lat_max_ns > 0 { per / 1e6 / (z.lat_max_ns as f64 / 1e9) } else { z.mb_s.unwrap_or(0.0) };
            (mid, z.mb_s.unwrap_or(0.0), lo, hi)
        })
        .collect();
    let writes: Vec<(f64, f64)> = s
        .zones
        .iter()
        .filter_map(|z| z.write_mb_s.filter(|w| w.is_finite()).map(|w| (z.offset as f64 + z.size as f64 / 2.0, w)))
        .collect();
    // The band's top can be far above the zone rates (one lucky block): cap the axis at
    // 1.5× the fastest zone so the line stays readable.
    let top_zone = band.iter().map(|b| b.1).chain(writes.iter().map(|w| w.1)).fold(0.0, f64::max);
    let ymax = band.iter().map(|b| b.3).fold(top_zone, f64::max).min(top_zone * 1.5).max(1e-3);
    let f = Frame { x: axis::linear(s.offset as f64 / xdiv, end / xdiv, 10), y: axis::linear(0.0, ymax, 6), xdiv };
    let mut out = String::new();
    open_svg(&mut out, H);
    axes(&mut out, &f, unit, "MB/s", &|v| axis::trim(v));
    let read = charts::hex(READ);
    if band.len() > 1 {
        let mut pts: Vec<String> = band.iter().map(|b| format!("{:.1},{:.1}", f.px(b.0), f.py(b.3))).collect();
        pts.extend(band.iter().rev().map(|b| format!("{:.1},{:.1}", f.px(b.0), f.py(b.2))));
        let _ = write!(
            out,
            "<polygon points=\"{}\" fill=\"{read}\" fill-opacity=\"0.15\" stroke=\"none\"/>",
            pts.join(" ")
        );
    }
    let line: Vec<(f64, f64)> = band.iter().map(|b| (f.px(b.0), f.py(b.1))).collect();
    polyline(&mut out, &line, &read, 2.0);
    if !writes.is_empty() {
        let wl: Vec<(f64, f64)> = writes.iter().map(|w| (f.px(w.0), f.py(w.1))).collect();
        polyline(&mut out, &wl, &charts::hex(WRITE), 2.0);
    }
    marks(&mut out, &f, s);
    out.push_str("</svg>");
    let mut fig = Figure::new(
        "chart-surface-rate".into(),
        "surface-rate",
        "Transfer rate across the surface".into(),
        format!(
            "MB/s per zone ({} zones: bytes / summed time of the zone's blocks) against position; shaded: the rates \
             of each zone's slowest and fastest {} block",
            zones.len(),
            fmt::bytes(s.block_bytes)
        ),
        Ok(out),
    );
    fig.legend.push(legend(
        READ,
        if s.mode == "destructive" { "read (verify, first pattern)" } else { "read" },
        "line",
    ));
    if !writes.is_empty() {
        fig.legend.push(legend(WRITE, "write", "line"));
    }
    if !s.slow_blocks.is_empty() {
        fig.legend.push(legend(SLOW, "slow block", "dot"));
    }
    if !s.bad_sectors.is_empty() {
        fig.legend.push(legend(BAD, "bad sector", "dash"));
    }
    Some(fig)
}

fn access_figure(s: &SurfaceResult) -> Option<Figure> {
    let a = s.access.as_ref()?;
    if a.samples.is_empty() {
        return None;
    }
    let end = s.offset.saturating_add(s.size) as f64;
    let (xdiv, unit) = byte_unit(end);
    let ymax = a.samples.iter().map(|p| p[1] as f64).fold(0.0, f64::max).max(1.0);
    let f = Frame { x: axis::linear(s.offset as f64 / xdiv, end / xdiv, 10), y: axis::linear(0.0, ymax, 6), xdiv };
    let mut out = String::new();
    open_svg(&mut out, H);
    axes(&mut out, &f, unit, "access time", &axis::short_lat);
    let c = charts::hex(READ);
    for p in &a.samples {
        let _ = write!(
            out,
            "<circle cx=\"{:.1}\" cy=\"{:.1}\" r=\"3\" fill=\"{c}\" fill-opacity=\"0.6\"/>",
            f.px(p[0] as f64),
            f.py(p[1] as f64)
        );
    }
    let mean = f.py(a.mean_ns);
    let _ = write!(
        out,
        "<line x1=\"{L}\" x2=\"{R}\" y1=\"{mean:.1}\" y2=\"{mean:.1}\" stroke=\"{}\" stroke-dasharray=\"6 4\"/>",
        charts::hex(charts::BOUND)
    );
    out.push_str("</svg>");
    let mut fig = Figure::new(
        "chart-surface-access".into(),
        "surface-access",
        "Random access time".into(),
        format!(
            "{} random {} reads across the span: mean {} · p50 {} · p99 {} · max {} (dashed: the mean)",
            a.count,
            fmt::bytes(a.io_bytes),
            fmt::lat(a.mean_ns),
            fmt::lat(a.p50_ns as f64),
            fmt::lat(a.p99_ns as f64),
            fmt::lat(a.max_ns as f64)
        ),
        Ok(out),
    );
    fig.legend = vec![legend(READ, "one read", "dot"), legend(charts::BOUND, "mean", "dash")];
    Some(fig)
}

/// Light green (fast) → yellow → dark red (slow) for `t` in 0..=1.
fn heat(t: f64) -> String {
    let stops = [(0.0, (0xd9, 0xef, 0xd4)), (0.5, (0xf6, 0xd3, 0x6b)), (1.0, (0xa3, 0x1d, 0x1d))];
    let t = t.clamp(0.0, 1.0);
    let (a, b) = if t <= 0.5 { (stops[0], stops[1]) } else { (stops[1], stops[2]) };
    let u = (t - a.0) / (b.0 - a.0);
    let mix = |x: u8, y: u8| (f64::from(x) + (f64::from(y) - f64::from(x)) * u).round() as u8;
    format!("#{:02x}{:02x}{:02x}", mix(a.1 .0, b.1 .0), mix(a.1 .1, b.1 .1), mix(a.1 .2, b.1 .2))
}

fn map_figure(s: &SurfaceResult) -> Option<Figure> {
    let m = s.latency_map.as_ref()?;
    // The three columns are as long as each other in a document diskmeter wrote; a cell
    // needs all three.
    let n = m.offsets.len().min(m.max_ns.len()).min(m.median_ns.len());
    if n == 0 {
        return None;
    }
    let cols = GRID_COLS.min(n);
    let rows = n.div_ceil(cols);
    let cell = ((R - L) / cols as f64).min(22.0);
    let h = T + rows as f64 * cell + 40.0;
    let lo = m.median_ns.iter().copied().filter(|&x| x > 0).min().unwrap_or(1).max(1) as f64;
    let hi = m.max_ns.iter().copied().max().unwrap_or(1).max(1) as f64;
    let span = (hi / lo).ln();
    let end = s.offset.saturating_add(s.size);
    let mut out = String::new();
    open_svg(&mut out, h);
    for i in 0..n {
        let (r, c) = (i / cols, i % cols);
        let (Some(&max), Some(&median), Some(&from)) = (m.max_ns.get(i), m.median_ns.get(i), m.offsets.get(i)) else {
            break;
        };
        let v = max.max(1) as f64;
        let t = if span > 0.0 { (v / lo).ln().max(0.0) / span } else { 0.0 };
        let to = m.offsets.get(i + 1).copied().unwrap_or(end);
        let bad = s.bad_sectors.iter().any(|b| b.offset >= from && b.offset < to);
        let slow = s.slow_blocks.iter().any(|b| b.offset >= from && b.offset < to);
        let stroke = if bad {
            format!(" stroke=\"{}\" stroke-width=\"2\"", charts::hex(BAD))
        } else if slow {
            format!(" stroke=\"{}\" stroke-width=\"2\"", charts::hex(SLOW))
        } else {
            " stroke=\"#ffffff\" stroke-width=\"0.5\"".to_string()
        };
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"{:.1}\" height=\"{:.1}\" fill=\"{}\"{stroke}><title>{} – {}: max {}, median {}</title></rect>",
            L + c as f64 * cell,
            T + r as f64 * cell,
            cell,
            cell,
            if bad { charts::hex(BAD) } else { heat(t) },
            from,
            to,
            escape(&fmt::lat(v)),
            escape(&fmt::lat(median as f64))
        );
    }
    let y = T + rows as f64 * cell + 24.0;
    text(&mut out, L, y, "start", 13.0, "#374151", &format!("{} (fast)", fmt::lat(lo)));
    for k in 0..=20 {
        let _ = write!(
            out,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/>",
            L + 110.0 + f64::from(k) * 12.0,
            y - 11.0,
            heat(f64::from(k) / 20.0)
        );
    }
    text(&mut out, L + 370.0, y, "start", 13.0, "#374151", &format!("{} (slow)", fmt::lat(hi)));
    out.push_str("</svg>");
    let per = s.size.div_ceil(n as u64);
    let mut fig = Figure::new(
        "chart-surface-map".into(),
        "surface-map",
        "Latency map".into(),
        format!(
            "{n} cells of about {} each, left to right and top to bottom from {}: colour = slowest block in the cell \
             (log scale); outlined: slow blocks; red: bad sectors",
            fmt::bytes(per),
            fmt::bytes(s.offset)
        ),
        Ok(out),
    );
    fig.legend = vec![legend(SLOW, "contains a slow block", "ring"), legend(BAD, "contains a bad sector", "dot")];
    Some(fig)
}

pub(super) fn surface_view(s: &SurfaceResult) -> SurfaceView {
    let mut facts = vec![
        ("mode".to_string(), s.mode.clone()),
        ("block".to_string(), fmt::bytes(s.block_bytes)),
        (
            "span".to_string(),
            format!(
                "{} – {} ({})",
                fmt::bytes(s.offset),
                fmt::bytes(s.offset.saturating_add(s.size)),
                fmt::bytes(s.size)
            ),
        ),
        (
            "I/O".to_string(),
            format!("{}, queue depth {}", if s.direct { "direct" } else { "buffered (page cache)" }, s.qd.max(1)),
        ),
        ("scanned".to_string(), format!("{} in {} blocks", fmt::bytes(s.scanned_bytes), fmt::group(s.blocks))),
        ("time".to_string(), fmt::secs(s.seconds)),
        (
            "slow rule".to_string(),
            format!(
                "> {}× the median of the previous {} blocks and > {}; {} re-reads",
                axis::trim(s.slow_rule.factor),
                s.slow_rule.window,
                fmt::lat(s.slow_rule.floor_ns as f64),
                s.slow_rule.rereads
            ),
        ),
    ];
    if let Some(n) = s.sample {
        facts.push(("sample".to_string(), format!("{} evenly spaced blocks", fmt::group(n))));
    }
    if let Some(l) = &s.badblocks {
        facts.push((
            "bad-block list".to_string(),
            format!(
                "{} block{} of {} B{}",
                l.blocks.len(),
                if l.blocks.len() == 1 { "" } else { "s" },
                l.fs_block,
                l.file.as_ref().map(|f| format!(" → {f}")).unwrap_or_default()
            ),
        ));
    }
    let figures: Vec<Figure> = [rate_figure(s), map_figure(s), access_figure(s)].into_iter().flatten().collect();
    let mut notes = Vec::new();
    if figures.is_empty() {
        notes.push("Nothing was scanned: no charts.".to_string());
    }
    for p in &s.passes {
        notes.push(format!(
            "Pattern {}: write {} MB/s, verify {} MB/s, {} bad sector(s){}.",
            p.pattern,
            p.write_mb_s.map(fmt::rate_text).unwrap_or_else(|| "–".into()),
            p.read_mb_s.map(fmt::rate_text).unwrap_or_else(|| "–".into()),
            p.bad_sectors,
            if p.partial { ", cut short" } else { "" }
        ));
    }
    if !s.restore_failures.is_empty() {
        notes.push(format!(
            "NOT RESTORED: the blocks at offsets {} may hold test data.",
            s.restore_failures.iter().map(|o| o.to_string()).collect::<Vec<_>>().join(", ")
        ));
    }
    let slow = s
        .slow_blocks
        .iter()
        .take(200)
        .map(|b| {
            [
                fmt::group(b.offset),
                fmt::lat(b.lat_ns as f64),
                fmt::lat(b.median_ns as f64),
                b.reread_ns.iter().map(|&n| fmt::lat(n as f64)).collect::<Vec<_>>().join(", "),
                b.status.clone(),
            ]
        })
        .collect();
    let lb = u64::from(s.logical_block.max(1));
    let bad = s
        .bad_sectors
        .iter()
        .take(500)
        .map(|b| [fmt::group(b.offset), fmt::group(b.offset / lb), b.error.clone(), b.phase.clone()])
        .collect();
    // Bad sectors and unrestored blocks are failures; everything else is a finding.
    let class = if !s.bad_sectors.is_empty() || !s.restore_failures.is_empty() { " miss" } else { "" };
    SurfaceView {
        mode: s.mode.clone(),
        verdict: s.verdict.clone(),
        verdict_class: class,
        facts,
        figures,
        slow,
        bad,
        notes,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use stats::ResultDoc;

    fn doc() -> ResultDoc {
        ResultDoc::from_json(include_str!("../../tests/data/surface.json")).unwrap()
    }

    #[test]
    fn the_section_has_its_charts_and_tables() {
        let html = crate::render_html(&doc());
        for kind in ["surface-rate", "surface-map", "surface-access"] {
            assert!(html.contains(&format!("data-chart=\"{kind}\"")), "{kind}");
        }
        assert!(html.contains("id=\"surface-bad\"") && html.contains("id=\"surface-slow\""));
        assert_eq!(html.matches("<svg").count(), html.matches("</svg>").count());
        assert!(!html.contains("id=\"results\""), "no empty results table for a surface scan");
    }

    #[test]
    fn text_is_escaped_and_empty_scans_render() {
        let mut d = doc();
        let s = d.surface.as_mut().unwrap();
        s.bad_sectors[0].error = "<script>x</script>".into();
        s.slow_blocks[0].status = "a&b\"".into();
        let html = crate::render_html(&d);
        assert!(!html.contains("<script>x"));
        assert!(html.contains("&lt;script&gt;x"));
        let s = d.surface.as_mut().unwrap();
        s.zones.clear();
        s.latency_map = None;
        s.access = None;
        let html = crate::render_html(&d);
        assert!(html.contains("Nothing was scanned"));
    }

    /// Found by the `result_json` fuzz target: a hand-edited document whose latency map
    /// columns differ in length, or whose span ends past 2^64, used to panic.
    #[test]
    fn inconsistent_documents_render() {
        let mut d = doc();
        let s = d.surface.as_mut().unwrap();
        let m = s.latency_map.as_mut().unwrap();
        m.offsets.pop();
        m.median_ns.truncate(m.median_ns.len() / 2);
        let html = crate::render_html(&d);
        assert!(html.contains("data-chart=\"surface-map\""));
        let s = d.surface.as_mut().unwrap();
        s.offset = u64::MAX - 1;
        s.size = u64::MAX;
        s.zones[0].offset = u64::MAX;
        s.zones[0].size = u64::MAX;
        use crate::Format::{Csv, Html, Human, Json, Markdown};
        for f in [Human, Json, Markdown, Csv, Html] {
            assert!(crate::render(&d, f).ends_with('\n'), "{f:?}");
        }
    }

    #[test]
    fn heat_runs_from_green_to_red() {
        assert_eq!(super::heat(0.0), "#d9efd4");
        assert_eq!(super::heat(1.0), "#a31d1d");
        assert_eq!(super::heat(7.0), "#a31d1d");
    }
}
