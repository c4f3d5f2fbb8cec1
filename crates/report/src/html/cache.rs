//! The `cache` section: the trace and cache under test, one row per simulated policy,
//! the warm-up chart (hit ratio and occupancy over trace time), the miss-ratio curve and
//! the closed-form warm-up estimate.

use stats::{CacheResult, MrcResult, PolicyResult, WarmupEstimate};

use super::charts::{self, HitLine, SizeMark};
use super::view::{legend, Figure};
use crate::fmt;

/// At most this many policies get a line in the warm-up chart (the table lists all).
const MAX_LINES: usize = 10;
/// Longer series are thinned to about this many points per line.
const MAX_POINTS: usize = 1500;

pub(super) struct CacheView {
    pub action: String,
    /// `(card title, rows)`: the trace and the cache setup.
    pub facts: Vec<(&'static str, Vec<(String, String)>)>,
    pub policies: Vec<PolicyRow>,
    pub figures: Vec<Figure>,
    pub notes: Vec<String>,
    pub warmup: Option<WarmupBox>,
}

pub(super) struct PolicyRow {
    pub name: String,
    pub color: String,
    pub best: bool,
    pub hit: String,
    pub byte_hit: String,
    pub read_hits: String,
    pub partial: String,
    pub misses: String,
    pub write_hits: String,
    pub write_misses: String,
    pub bypasses: String,
    pub ssd_written: String,
    pub dwpd: String,
    pub warmup: String,
    pub iops: String,
    pub hdd_iops: String,
    pub gain: String,
    pub gain_class: &'static str,
    pub bottleneck: String,
}

pub(super) struct WarmupBox {
    pub formula: String,
    pub values: String,
    pub result: String,
    pub terms: Vec<(String, String)>,
}

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1} %", x * 100.0)
    } else {
        "–".to_string()
    }
}

/// `45 s`, `12.5 min`, `3.2 h`.
fn duration(s: f64) -> String {
    if !s.is_finite() {
        "–".to_string()
    } else if s < 120.0 {
        format!("{:.1} s", s.max(0.0))
    } else if s < 2.0 * 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else {
        format!("{:.1} h", s / 3600.0)
    }
}

fn count(n: u64) -> String {
    fmt::group(n)
}

fn trace_facts(c: &CacheResult) -> Option<Vec<(String, String)>> {
    let t = c.trace.as_ref()?;
    let mut rows = vec![
        ("path".to_string(), if t.path.is_empty() { "–".to_string() } else { t.path.clone() }),
        ("format".to_string(), if t.format.is_empty() { "–".to_string() } else { t.format.clone() }),
        ("requests".to_string(), count(t.requests)),
        (
            "reads / writes".to_string(),
            format!(
                "{} ({}) / {} ({})",
                count(t.reads),
                fmt::bytes(t.read_bytes),
                count(t.writes),
                fmt::bytes(t.write_bytes)
            ),
        ),
    ];
    if t.other > 0 {
        rows.push(("discards / flushes".to_string(), count(t.other)));
    }
    rows.push(("span".to_string(), duration(t.span_s)));
    if t.footprint_bytes > 0 {
        rows.push(("footprint".to_string(), fmt::bytes(t.footprint_bytes)));
    }
    let devices = match t.devices.len() {
        0 => "–".to_string(),
        1..=6 => t.devices.join(", "),
        n => format!("{} and {} more", t.devices[..5].join(", "), n - 5),
    };
    rows.push(("devices".to_string(), devices));
    if t.skipped_lines > 0 {
        rows.push(("skipped lines".to_string(), format!("{} malformed", count(t.skipped_lines))));
    }
    Some(rows)
}

fn setup_facts(c: &CacheResult) -> Option<Vec<(String, String)>> {
    let s = c.config.as_ref()?;
    Some(vec![
        ("preset".to_string(), if s.preset.is_empty() { "–".to_string() } else { s.preset.clone() }),
        ("capacity".to_string(), fmt::bytes(s.capacity_bytes)),
        ("block / sub-block".to_string(), format!("{} / {}", fmt::bytes(s.block_bytes), fmt::bytes(s.sub_block_bytes))),
        ("populate on read / write".to_string(), format!("PoR {} · PoW {}", s.por, s.pow)),
        ("mode".to_string(), if s.mode.is_empty() { "–".to_string() } else { s.mode.clone() }),
        ("sequential cut-off".to_string(), s.seq_cutoff_bytes.map(fmt::bytes).unwrap_or_else(|| "off".to_string())),
        ("SSD size (for DWPD)".to_string(), fmt::bytes(s.ssd_bytes)),
    ])
}

fn policy_row(i: usize, p: &PolicyResult, best: bool) -> PolicyRow {
    let r = &p.requests;
    let (iops, hdd_iops, gain, gain_class, bottleneck) = match &p.perf {
        Some(f) => {
            let (gain, class) = if f.gain_pct.is_finite() {
                (
                    format!("{:+.0} %", f.gain_pct),
                    if f.gain_pct > 0.5 {
                        "ok"
                    } else if f.gain_pct < -0.5 {
                        "bad"
                    } else {
                        ""
                    },
                )
            } else {
                ("–".to_string(), "")
            };
            (fmt::iops(f.max_iops), fmt::iops(f.hdd_only_iops), gain, class, f.bottleneck.clone())
        }
        None => ("–".to_string(), "–".to_string(), "–".to_string(), "", "–".to_string()),
    };
    PolicyRow {
        name: p.name.clone(),
        color: charts::hex(charts::color(i)),
        best,
        hit: pct(p.read_hit_ratio),
        byte_hit: pct(p.read_byte_hit_ratio),
        read_hits: count(r.read_hits),
        partial: count(r.partial_hits),
        misses: count(r.read_misses),
        write_hits: count(r.write_hits),
        write_misses: count(r.write_misses),
        bypasses: count(r.bypasses),
        ssd_written: fmt::bytes(p.bytes.written_to_ssd),
        dwpd: match p.dwpd {
            Some(d) if d.is_finite() => format!("{d:.2}"),
            _ => "–".to_string(),
        },
        warmup: p.warmup_s.map(duration).unwrap_or_else(|| "–".to_string()),
        iops,
        hdd_iops,
        gain,
        gain_class,
        bottleneck,
    }
}

/// Every k-th point so a line has at most about [`MAX_POINTS`] (the last one kept).
fn thin<T: Copy>(v: &[T]) -> Vec<T> {
    let k = v.len().div_ceil(MAX_POINTS).max(1);
    let mut out: Vec<T> = v.iter().step_by(k).copied().collect();
    if k > 1 {
        if let Some(&last) = v.last() {
            out.push(last);
        }
    }
    out
}

fn warmup_figure(c: &CacheResult) -> Option<Figure> {
    let with_series: Vec<(usize, &PolicyResult)> =
        c.policies.iter().enumerate().filter(|(_, p)| !p.series.is_empty()).take(MAX_LINES).collect();
    let (first_i, first) = *with_series.first()?;
    let lines: Vec<HitLine> = with_series
        .iter()
        .map(|&(i, p)| HitLine {
            color: charts::color(i),
            label: p.name.clone(),
            points: thin(&p.series).iter().map(|q| (q.t_s, q.interval_hit_ratio)).collect(),
            warmup_s: p.warmup_s,
            warm_label: format!("{} warm after {}", p.name, p.warmup_s.map(duration).unwrap_or_default()),
        })
        .collect();
    let occ: Vec<(f64, f64)> = thin(&first.series).iter().map(|q| (q.t_s, q.occupancy)).collect();
    let n = c.policies.iter().filter(|p| !p.series.is_empty()).count();
    let mut caption = format!(
        "read hit ratio (by request) within each interval of the trace, per policy; dashed: the time each policy \
         first reaches 90 % of its final hit ratio; below: share of the cache holding data ({})",
        first.name
    );
    if n > MAX_LINES {
        caption.push_str(&format!("; the first {MAX_LINES} of {n} policies are shown"));
    }
    let mut fig = Figure::new(
        "chart-cache-warmup".into(),
        "cache-warmup",
        "Warm-up: read hit ratio over trace time".into(),
        caption,
        charts::cache_warmup(&lines, &occ, charts::color(first_i)),
    );
    fig.legend = lines.iter().map(|l| legend(l.color, l.label.clone(), "line")).collect();
    if lines.iter().any(|l| l.warmup_s.is_some_and(f64::is_finite)) {
        fig.legend.push(legend(charts::MUTED_DASH, "warm-up time", "dash"));
    }
    Some(fig)
}

fn mrc_method(m: &MrcResult) -> String {
    match m.method.as_str() {
        "mattson" => "Mattson stack distances (exact LRU)".to_string(),
        "shards" => match m.sampling_rate {
            Some(r) if r.is_finite() => format!("SHARDS (sampled LRU) at R = {}", super::axis::trim(r)),
            _ => "SHARDS (sampled LRU)".to_string(),
        },
        "simulation" => "one simulation per cache size".to_string(),
        "" => "unknown method".to_string(),
        other => other.to_string(),
    }
}

fn mrc_figure(m: &MrcResult, configured: Option<u64>) -> Option<Figure> {
    let pts: Vec<(f64, f64)> = m.points.iter().map(|p| (p.cache_bytes as f64, p.miss_ratio)).collect();
    if !pts.iter().any(|p| p.0 >= 1.0 && p.1.is_finite()) {
        return None;
    }
    let rec = m.recommended.map(|r| SizeMark {
        bytes: r.cache_bytes as f64,
        miss: Some(r.miss_ratio),
        label: format!("recommended {} · {} misses", fmt::bytes(r.cache_bytes), pct(r.miss_ratio)),
    });
    let conf = configured.filter(|&b| b > 0).map(|b| SizeMark {
        bytes: b as f64,
        miss: None,
        label: format!("simulated cache {}", fmt::bytes(b)),
    });
    let policy = if m.policy.is_empty() { String::new() } else { format!(" of {}", m.policy) };
    let caption = format!(
        "read miss ratio{policy} against cache size (log scale), {}; {} points, unit {}",
        mrc_method(m),
        m.points.len(),
        fmt::bytes(m.unit_bytes)
    );
    let mut fig = Figure::new(
        "chart-cache-mrc".into(),
        "cache-mrc",
        "Miss-ratio curve".into(),
        caption,
        charts::cache_mrc(&pts, m.method != "simulation", rec.as_ref(), conf.as_ref()),
    );
    fig.legend = vec![legend(charts::MRC, "miss ratio", "line")];
    if let Some(r) = &rec {
        fig.legend.push(legend(charts::BEST, r.label.clone(), "ring"));
    }
    if let Some(c) = &conf {
        fig.legend.push(legend(charts::MUTED_DASH, c.label.clone(), "dash"));
    }
    Some(fig)
}

fn warmup_box(w: &WarmupEstimate) -> WarmupBox {
    let hdd_iops = if w.hdd_iops.is_finite() { super::axis::trim(w.hdd_iops) } else { "–".to_string() };
    let result = if w.seconds.is_finite() && w.seconds >= 0.0 {
        format!("T = {} s = {:.1} min = {:.2} h", count(w.seconds.round() as u64), w.seconds / 60.0, w.seconds / 3600.0)
    } else {
        "T cannot be computed from these inputs".to_string()
    };
    WarmupBox {
        formula: "T = C · P / (I · S · D)".to_string(),
        values: format!(
            "= {} × {} / ({} IOPS × {} × {} HDD{})",
            fmt::bytes(w.capacity_bytes),
            w.threshold,
            hdd_iops,
            fmt::bytes(w.io_size_bytes),
            w.hdds,
            if w.hdds == 1 { "" } else { "s" }
        ),
        result,
        terms: vec![
            ("C".to_string(), format!("cache capacity, {}", fmt::bytes(w.capacity_bytes))),
            ("P".to_string(), format!("populate threshold (reads before a block is cached), {}", w.threshold)),
            ("I".to_string(), format!("random IOPS of one HDD, {hdd_iops}")),
            ("S".to_string(), format!("I/O size, {}", fmt::bytes(w.io_size_bytes))),
            ("D".to_string(), format!("HDDs behind the cache, {}", w.hdds)),
        ],
    }
}

pub(super) fn cache_view(c: &CacheResult) -> CacheView {
    let mut facts = Vec::new();
    if let Some(rows) = trace_facts(c) {
        facts.push(("Trace", rows));
    }
    if let Some(rows) = setup_facts(c) {
        facts.push(("Cache", rows));
    }
    let best = c
        .policies
        .iter()
        .enumerate()
        .filter(|(_, p)| p.read_hit_ratio.is_finite())
        .max_by(|a, b| a.1.read_hit_ratio.total_cmp(&b.1.read_hit_ratio))
        .map(|(i, _)| i)
        .filter(|_| c.policies.len() > 1);
    let policies = c.policies.iter().enumerate().map(|(i, p)| policy_row(i, p, best == Some(i))).collect();
    let mut figures = Vec::new();
    let mut notes = Vec::new();
    match warmup_figure(c) {
        Some(f) => figures.push(f),
        None if !c.policies.is_empty() => {
            notes.push("The simulation recorded no time series: no warm-up chart.".into())
        }
        None => {}
    }
    if let Some(m) = &c.mrc {
        match mrc_figure(m, c.config.as_ref().map(|s| s.capacity_bytes)) {
            Some(f) => figures.push(f),
            None => notes.push("The miss-ratio curve has no points with a cache size above zero.".into()),
        }
    }
    if c.policies.is_empty() && c.mrc.is_none() && c.warmup_estimate.is_none() {
        notes.push(match c.action.as_str() {
            "synth" => "A synthetic trace was written; nothing was simulated.".to_string(),
            "convert" => "The trace was converted; nothing was simulated.".to_string(),
            _ => "The document holds no simulation results.".to_string(),
        });
    }
    CacheView {
        action: if c.action.is_empty() { "–".to_string() } else { c.action.clone() },
        facts,
        policies,
        figures,
        notes,
        warmup: c.warmup_estimate.as_ref().map(warmup_box),
    }
}
