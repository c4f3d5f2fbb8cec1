//! The device page: per card cell (or job) a timeline of the device's runs of one workload —
//! each run's median pass with the range of its passes, as `history trend` computes them — the
//! SMART figures over time when the runs read them, and the card history as a table.

use crate::history as hist;
use history::{Filter, JobSummary, RunRow, SmartRow, Store};
use std::fmt::Write as _;
use std::path::Path;
use web::DeviceView;

/// Timelines drawn at most (a `run` with many jobs would make an endless page).
const MAX_CHARTS: usize = 32;
/// Runs in the card history table.
const MAX_ROWS: usize = 200;
/// Job columns in the card history table.
const MAX_JOBS: usize = 8;

/// Chart size and margins (pixels of the SVG's own coordinates).
const W: f64 = 440.0;
const H: f64 = 240.0;
const LEFT: f64 = 58.0;
const RIGHT: f64 = 14.0;
const TOP: f64 = 44.0;
const BOTTOM: f64 = 44.0;

/// The page of device `key` (a name, a device key, or part of a model, as `history list
/// --device`); `None` when no stored run matches.
pub(crate) fn view(store: &Store, path: &Path, key: &str) -> Result<Option<DeviceView>, String> {
    let newest = store
        .list(&Filter { device: Some(key.to_string()), limit: Some(1), ..Filter::default() })
        .map_err(|e| e.to_string())?;
    let Some(newest) = newest.into_iter().next() else { return Ok(None) };
    let device_key = newest.device_key.clone();
    let rows = store
        .list(&Filter { device: Some(device_key.clone()), limit: Some(MAX_ROWS), ..Filter::default() })
        .map_err(|e| e.to_string())?;
    let title = match &newest.model {
        Some(m) if !m.is_empty() => format!("{} — {m}", newest.device),
        _ => newest.device.clone(),
    };
    let mut charts = Vec::new();
    match hist::trend(path, &device_key) {
        Ok(t) => {
            for c in t.cells.iter().take(MAX_CHARTS) {
                charts.push(cell_chart(c, t.threshold_pct));
            }
        }
        Err(e) if e.is_usage() => {}
        Err(e) => return Err(e.message().to_string()),
    }
    let smart = store.smart_of_device(&device_key).map_err(|e| e.to_string())?;
    charts.extend(smart_charts(&smart));
    let mut table = card_history(&rows);
    if !smart.is_empty() {
        table.push_str(&smart_table(&smart));
    }
    Ok(Some(DeviceView { key: device_key, title, charts_svg: charts, table_html: table }))
}

/// One point of a timeline: its x label, the value drawn, the whisker, a tooltip.
struct Dot {
    label: String,
    y: f64,
    low: f64,
    high: f64,
    tip: String,
}

/// `2026-03-02T10:04:05Z` → `03-02 10:04`.
fn short_date(t: &str) -> String {
    match (t.get(5..10), t.get(11..16)) {
        (Some(d), Some(h)) => format!("{d} {h}"),
        _ => t.to_string(),
    }
}

/// A figure for an axis: 3 significant digits.
fn num(v: f64) -> String {
    let a = v.abs();
    if a >= 100.0 || a == 0.0 {
        format!("{v:.0}")
    } else if a >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// The highest y tick: a round number at or above `max`.
fn nice_max(max: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        return 1.0;
    }
    let mag = 10f64.powf(max.log10().floor());
    for step in [1.0, 2.0, 2.5, 5.0, 10.0] {
        if step * mag >= max {
            return step * mag;
        }
    }
    10.0 * mag
}

/// A small timeline: points at their medians joined by a line, whiskers from the lowest to
/// the highest pass, four y ticks and the dates of the first and last runs.
fn timeline(kind: &str, title: &str, caption: &str, unit: &str, dots: &[Dot]) -> String {
    let top = nice_max(dots.iter().map(|d| d.high.max(d.y)).fold(0.0, f64::max));
    let (pw, ph) = (W - LEFT - RIGHT, H - TOP - BOTTOM);
    let x = |i: usize| {
        if dots.len() < 2 {
            LEFT + pw / 2.0
        } else {
            LEFT + pw * i as f64 / (dots.len() - 1) as f64
        }
    };
    let y = |v: f64| TOP + ph * (1.0 - (v / top).clamp(0.0, 1.0));
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" data-chart=\"{kind}\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" \
         height=\"{H}\" role=\"img\" aria-label=\"{}\" font-family=\"system-ui, sans-serif\" font-size=\"11\">",
        esc(title)
    );
    let _ = write!(s, "<rect width=\"{W}\" height=\"{H}\" fill=\"#fff\"/>");
    let _ =
        write!(s, "<text x=\"8\" y=\"14\" font-size=\"13\" font-weight=\"600\" fill=\"#1d2330\">{}</text>", esc(title));
    if !caption.is_empty() {
        let _ = write!(s, "<text x=\"8\" y=\"29\" font-size=\"10\" fill=\"#5b6475\">{}</text>", esc(caption));
    }
    for k in 0..=4 {
        let v = top * k as f64 / 4.0;
        let yy = y(v);
        let _ = write!(
            s,
            "<line x1=\"{LEFT}\" x2=\"{}\" y1=\"{yy:.1}\" y2=\"{yy:.1}\" stroke=\"#e2e5ea\"/>\
             <text x=\"{}\" y=\"{:.1}\" text-anchor=\"end\" fill=\"#5b6475\">{}</text>",
            W - RIGHT,
            LEFT - 6.0,
            yy + 4.0,
            num(v)
        );
    }
    let _ = write!(
        s,
        "<text transform=\"translate(12 {:.1}) rotate(-90)\" text-anchor=\"middle\" fill=\"#5b6475\">{}</text>",
        TOP + ph / 2.0,
        esc(unit)
    );
    if dots.len() > 1 {
        let pts: Vec<String> = dots.iter().enumerate().map(|(i, d)| format!("{:.1},{:.1}", x(i), y(d.y))).collect();
        let _ =
            write!(s, "<polyline points=\"{}\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\"/>", pts.join(" "));
    }
    for (i, d) in dots.iter().enumerate() {
        let xx = x(i);
        let _ = write!(
            s,
            "<g><title>{}</title><line x1=\"{xx:.1}\" x2=\"{xx:.1}\" y1=\"{:.1}\" y2=\"{:.1}\" stroke=\"#4e79a7\"/>\
             <circle cx=\"{xx:.1}\" cy=\"{:.1}\" r=\"3.5\" fill=\"#4e79a7\"/></g>",
            esc(&d.tip),
            y(d.low),
            y(d.high),
            y(d.y)
        );
    }
    let base = H - BOTTOM + 16.0;
    let label = |s: &mut String, i: usize, anchor: &str| {
        let _ = write!(
            s,
            "<text x=\"{:.1}\" y=\"{base:.1}\" text-anchor=\"{anchor}\" fill=\"#5b6475\">{}</text>",
            x(i),
            esc(&dots[i].label)
        );
    };
    match dots.len() {
        0 => {}
        1 => label(&mut s, 0, "middle"),
        n => {
            label(&mut s, 0, "start");
            label(&mut s, n - 1, "end");
        }
    }
    let _ = write!(
        s,
        "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" fill=\"#5b6475\">{} run{}</text></svg>",
        LEFT + pw / 2.0,
        H - 6.0,
        dots.len(),
        if dots.len() == 1 { "" } else { "s" }
    );
    s
}

/// The timeline of one cell, captioned with its change since the first run.
fn cell_chart(c: &stats::trend::CellTrend, threshold: f64) -> String {
    let ids = (c.run_ids.len() == c.trend.points.len()).then_some(&c.run_ids);
    let dots: Vec<Dot> = c
        .trend
        .points
        .iter()
        .enumerate()
        .map(|(i, p)| Dot {
            label: short_date(&p.started_at),
            y: p.median,
            low: p.low,
            high: p.high,
            tip: format!(
                "{}{}: median {} MB/s over {} pass{} ({}–{})",
                ids.map(|ids| format!("run {} · ", ids[i])).unwrap_or_default(),
                short_date(&p.started_at),
                num(p.median),
                p.n,
                if p.n == 1 { "" } else { "es" },
                num(p.low),
                num(p.high)
            ),
        })
        .collect();
    let name = format!("{} {}", c.job, c.direction);
    // "since run 3 (2026-03-02 10:04): −18.2 % (95 % CI −21.0…−15.1 %): slower", as `history
    // trend` says it (the title names the cell).
    let caption = match (&c.trend.since_first, &c.trend.first_at, c.run_ids.first()) {
        (Some(ch), Some(first), Some(id)) => {
            report::history_text::describe("", ch, &report::history_text::run_name(*id, first))
        }
        _ => format!("one run so far (a change needs two; noise band ±{threshold:.0} %)"),
    };
    timeline("trend", &format!("{name} ({})", c.command), &caption, "MB/s", &dots)
}

/// SMART figures over time: wear and temperature, when any run read them.
fn smart_charts(rows: &[SmartRow]) -> Vec<String> {
    type Pick = fn(&SmartRow) -> Option<f64>;
    let kinds: [(&str, &str, Pick); 2] = [
        ("percentage used", "%", |r| r.figures.percentage_used),
        ("temperature", "°C", |r| r.figures.temperature_c.map(|t| t as f64)),
    ];
    kinds
        .iter()
        .filter_map(|(what, unit, pick)| {
            let dots: Vec<Dot> = rows
                .iter()
                .filter_map(|r| {
                    pick(r).map(|v| Dot {
                        label: short_date(&r.started_at),
                        y: v,
                        low: v,
                        high: v,
                        tip: format!("run {} · {}: {} {unit}", r.run_id, short_date(&r.started_at), num(v)),
                    })
                })
                .collect();
            (!dots.is_empty()).then(|| timeline("smart", &format!("SMART {what}"), "", unit, &dots))
        })
        .collect()
}

fn figure(d: Option<&history::DirSummary>) -> String {
    d.and_then(|d| d.mb_s).map(web_mb_s).unwrap_or_else(|| "–".into())
}

/// MB/s as the card shows it.
fn web_mb_s(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The runs of the device, newest first: per job (card cell) read and write MB/s.
fn card_history(rows: &[RunRow]) -> String {
    let mut jobs: Vec<&str> = Vec::new();
    for r in rows {
        for j in &r.summary {
            if jobs.len() < MAX_JOBS && !jobs.contains(&j.name.as_str()) {
                jobs.push(&j.name);
            }
        }
    }
    let mut s = String::from("<h2>Card history</h2><table class=\"runs\" id=\"card-history\"><thead><tr>");
    s.push_str("<th rowspan=\"2\">#</th><th rowspan=\"2\">Started</th><th rowspan=\"2\">Command</th>");
    for j in &jobs {
        let _ = write!(s, "<th colspan=\"2\">{}</th>", esc(j));
    }
    s.push_str("</tr><tr>");
    for _ in &jobs {
        s.push_str("<th>R MB/s</th><th>W MB/s</th>");
    }
    s.push_str("</tr></thead><tbody>");
    for r in rows {
        let started = r.started_at.get(..19).unwrap_or(&r.started_at).replacen('T', " ", 1);
        let _ = write!(
            s,
            "<tr data-id=\"{id}\"><td><a href=\"/runs/{id}\">{id}</a></td><td>{}</td><td>{}{}</td>",
            esc(&started),
            esc(&r.command),
            if r.partial { " <span class=\"partial\">partial</span>" } else { "" },
            id = r.id
        );
        for j in &jobs {
            let found: Option<&JobSummary> = r.summary.iter().find(|x| x.name == *j);
            let _ = write!(
                s,
                "<td>{}</td><td>{}</td>",
                figure(found.and_then(|f| f.read.as_ref())),
                figure(found.and_then(|f| f.write.as_ref()))
            );
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table>");
    s
}

/// The SMART rows as a table.
fn smart_table(rows: &[SmartRow]) -> String {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "–".into());
    let mut s = String::from(
        "<h2>SMART</h2><table class=\"runs\" id=\"smart-history\"><thead><tr><th>Run</th><th>Started</th>\
         <th>% used</th><th>°C</th><th>Data written</th><th>Media errors</th><th>Power-on hours</th></tr></thead><tbody>",
    );
    for r in rows.iter().rev() {
        let f = &r.figures;
        let _ = write!(
            s,
            "<tr><td><a href=\"/runs/{id}\">{id}</a></td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            esc(&short_date(&r.started_at)),
            opt(f.percentage_used.map(num)),
            opt(f.temperature_c.map(|t| t.to_string())),
            opt(f.data_written_bytes.map(|b| format!("{:.2} TB", b as f64 / 1e12))),
            opt(f.media_errors.map(|m| m.to_string())),
            opt(f.power_on_hours.map(|h| h.to_string())),
            id = r.run_id
        );
    }
    s.push_str("</tbody></table>");
    s
}

/// HTML-escape text for an element or a quoted attribute.
pub(crate) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_timeline_is_one_escaped_svg() {
        let dots = vec![
            Dot { label: "03-02".into(), y: 100.0, low: 90.0, high: 110.0, tip: "a <b>".into() },
            Dot { label: "04-02".into(), y: 80.0, low: 80.0, high: 80.0, tip: "c".into() },
        ];
        let s = timeline("trend", "RND4K <Q1T1>", "cap & more", "MB/s", &dots);
        assert!(s.starts_with("<svg") && s.ends_with("</svg>"));
        assert!(s.contains("data-chart=\"trend\""));
        assert!(s.contains("RND4K &lt;Q1T1&gt;") && s.contains("cap &amp; more") && s.contains("a &lt;b&gt;"));
        assert_eq!(s.matches("<circle").count(), 2);
        assert!(!s.contains("NaN"));
        let one = timeline("trend", "x", "", "MB/s", &dots[..1]);
        assert_eq!(one.matches("<circle").count(), 1);
        assert!(timeline("trend", "x", "", "MB/s", &[]).contains("0 runs"));
    }

    #[test]
    fn round_axis_tops() {
        assert_eq!(nice_max(0.0), 1.0);
        assert_eq!(nice_max(87.0), 100.0);
        assert_eq!(nice_max(3100.0), 5000.0);
        assert_eq!(nice_max(2.1), 2.5);
        assert_eq!(short_date("2026-03-02T10:04:05Z"), "03-02 10:04");
    }
}
