//! Text, Markdown and CSV for `cache` results.

use std::fmt::Write as _;

use stats::{CacheResult, PolicyResult, ResultDoc};

use crate::fmt;

fn pct(x: f64) -> String {
    if x.is_finite() {
        format!("{:.1}%", x * 100.0)
    } else {
        "-".into()
    }
}

fn duration(s: f64) -> String {
    if !s.is_finite() {
        return "∞".into();
    }
    if s < 120.0 {
        format!("{s:.1} s")
    } else if s < 2.0 * 3600.0 {
        format!("{:.1} min", s / 60.0)
    } else if s < 3.0 * 86_400.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} h ({:.1} days)", s / 3600.0, s / 86_400.0)
    }
}

fn count(n: u64) -> String {
    fmt::group(n)
}

fn trace_lines(c: &CacheResult, out: &mut String) {
    if let Some(t) = &c.trace {
        let _ = writeln!(
            out,
            "trace     {} ({}) · {} requests ({} reads, {} writes, {} other) over {}",
            t.path,
            t.format,
            count(t.requests),
            count(t.reads),
            count(t.writes),
            count(t.other),
            duration(t.span_s)
        );
        let mut extra = format!("          read {} · written {}", fmt::bytes(t.read_bytes), fmt::bytes(t.write_bytes));
        if t.footprint_bytes > 0 {
            let _ = write!(extra, " · footprint {}", fmt::bytes(t.footprint_bytes));
        }
        if t.devices.len() > 1 {
            let _ = write!(extra, " · {} devices", t.devices.len());
        }
        if t.skipped_lines > 0 {
            let _ = write!(extra, " · {} malformed lines skipped", count(t.skipped_lines));
        }
        let _ = writeln!(out, "{extra}");
    }
    if let Some(s) = &c.config {
        let cut = s.seq_cutoff_bytes.map(|b| format!(" · sequential cut-off {}", fmt::bytes(b))).unwrap_or_default();
        let _ = writeln!(
            out,
            "cache     {} {} · block {} · sub-block {} · PoR {} · PoW {} · {}{cut}",
            s.preset,
            fmt::bytes(s.capacity_bytes),
            fmt::bytes(s.block_bytes),
            fmt::bytes(s.sub_block_bytes),
            s.por,
            s.pow,
            s.mode
        );
    }
}

fn policy_row(p: &PolicyResult) -> Vec<String> {
    let r = &p.requests;
    vec![
        p.name.clone(),
        pct(p.read_hit_ratio),
        pct(p.read_byte_hit_ratio),
        count(r.read_hits),
        count(r.partial_hits),
        count(r.read_misses),
        count(r.write_hits),
        count(r.write_misses),
        count(r.bypasses),
        fmt::bytes(p.bytes.written_to_ssd),
        p.dwpd.map(|d| format!("{d:.2}")).unwrap_or_else(|| "-".into()),
        p.warmup_s.map(duration).unwrap_or_else(|| "-".into()),
    ]
}

const POLICY_COLS: [&str; 12] = [
    "policy",
    "read hit",
    "byte hit",
    "read hits",
    "partial",
    "misses",
    "wr hits",
    "wr miss",
    "bypass",
    "SSD written",
    "DWPD",
    "warm-up",
];

fn table(rows: &[Vec<String>], head: &[&str], out: &mut String) {
    let mut w: Vec<usize> = head.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    let line = |cells: Vec<String>| {
        cells
            .iter()
            .enumerate()
            .map(
                |(i, c)| {
                    if i == 0 {
                        format!("{c:<width$}", width = w[i])
                    } else {
                        format!("{c:>width$}", width = w[i])
                    }
                },
            )
            .collect::<Vec<_>>()
            .join("  ")
    };
    let _ = writeln!(out, "{}", line(head.iter().map(|s| s.to_string()).collect()));
    for r in rows {
        let _ = writeln!(out, "{}", line(r.clone()));
    }
}

/// The human text of a `cache` document's section (empty without it).
pub(crate) fn human(doc: &ResultDoc) -> String {
    let Some(c) = &doc.cache else { return String::new() };
    let mut out = String::new();
    let _ =
        writeln!(out, "{} {} · cache {} · {}", doc.tool.name, doc.tool.version, c.action, fmt::date(&doc.started_at));
    trace_lines(c, &mut out);
    if !c.policies.is_empty() {
        out.push('\n');
        let rows: Vec<Vec<String>> = c.policies.iter().map(policy_row).collect();
        table(&rows, &POLICY_COLS, &mut out);
        out.push_str(
            "read hit / byte hit: reads served wholly by the SSD, by request / by byte · partial: reads served\n",
        );
        out.push_str("partly by the SSD · warm-up: trace time until the hit ratio reached 90 % of its final value\n");
        for p in &c.policies {
            if let Some(f) = &p.perf {
                let _ = writeln!(
                    out,
                    "{}: predicted {:.0} IOPS (bottleneck {}), mean latency {} at low load; HDDs alone {:.0} IOPS, {} \
                     → {:+.0} %",
                    p.name,
                    f.max_iops,
                    f.bottleneck,
                    fmt::lat(f.mean_latency_ns),
                    f.hdd_only_iops,
                    fmt::lat(f.hdd_only_latency_ns),
                    f.gain_pct
                );
            }
        }
        for p in &c.policies {
            let _ = writeln!(
                out,
                "{}: HDD {} ops, SSD {} ops · {} fills, {} evictions ({} dirty) · occupancy {}/{} blocks · {:.1} M req/s",
                p.name,
                count(p.hdd_ops),
                count(p.ssd_ops),
                count(p.blocks.fills),
                count(p.blocks.evictions),
                count(p.blocks.dirty_evictions),
                count(p.occupied_blocks),
                count(p.capacity_blocks),
                p.sim_requests_per_s / 1e6
            );
        }
    }
    if let Some(m) = &c.mrc {
        out.push('\n');
        let how = match m.sampling_rate {
            Some(r) => format!("{} ({:.2} % sampled)", m.method, r * 100.0),
            None => m.method.clone(),
        };
        let _ = writeln!(out, "miss-ratio curve: {} · {how} · unit {}", m.policy, fmt::bytes(m.unit_bytes));
        let step = (m.points.len() / 24).max(1);
        let rows: Vec<Vec<String>> = m
            .points
            .iter()
            .enumerate()
            .filter(|(i, _)| i % step == 0 || *i + 1 == m.points.len())
            .map(|(_, p)| vec![fmt::bytes(p.cache_bytes), pct(p.miss_ratio), pct(1.0 - p.miss_ratio)])
            .collect();
        table(&rows, &["cache size", "miss ratio", "hit ratio"], &mut out);
        match &m.recommended {
            Some(r) => {
                let _ = writeln!(
                    out,
                    "recommended: {} (miss ratio {}); doubling it would save less than 2 points",
                    fmt::bytes(r.cache_bytes),
                    pct(r.miss_ratio)
                );
            }
            None => out.push_str("recommended: none (the curve has no knee in the measured range)\n"),
        }
    }
    if let Some(w) = &c.warmup_estimate {
        let _ = writeln!(
            out,
            "warm-up estimate T = C·P / (I·S·D) = {} × {} / ({} IOPS × {} × {} HDDs) = {:.0} s ≈ {}",
            fmt::bytes(w.capacity_bytes),
            w.threshold,
            w.hdd_iops,
            fmt::bytes(w.io_size_bytes),
            w.hdds,
            w.seconds,
            duration(w.seconds)
        );
    }
    for wn in &doc.warnings {
        let _ = writeln!(out, "warning[{}]: {}", wn.code, wn.message);
    }
    out
}

/// Markdown: the same content as tables.
pub(crate) fn markdown(doc: &ResultDoc) -> String {
    let Some(c) = &doc.cache else { return String::new() };
    let mut out = format!("# diskmeter cache {}\n\n", c.action);
    let mut facts = String::new();
    trace_lines(c, &mut facts);
    for l in facts.lines() {
        let _ = writeln!(out, "- {}", l.trim());
    }
    if !c.policies.is_empty() {
        out.push('\n');
        let _ = writeln!(out, "| {} |", POLICY_COLS.join(" | "));
        let _ = writeln!(out, "|{}", " --- |".repeat(POLICY_COLS.len()));
        for p in &c.policies {
            let _ = writeln!(out, "| {} |", policy_row(p).join(" | "));
        }
    }
    if let Some(m) = &c.mrc {
        let _ = writeln!(out, "\n| cache size | miss ratio |\n| --- | --- |");
        for p in &m.points {
            let _ = writeln!(out, "| {} | {} |", fmt::bytes(p.cache_bytes), pct(p.miss_ratio));
        }
    }
    if let Some(w) = &c.warmup_estimate {
        let _ = writeln!(out, "\nWarm-up estimate: {:.0} s ≈ {}", w.seconds, duration(w.seconds));
    }
    out
}

/// CSV: one row per policy (simulate), per size (mrc), or the estimate (warmup).
pub(crate) fn csv(doc: &ResultDoc) -> String {
    let Some(c) = &doc.cache else { return String::new() };
    let mut out = String::new();
    if let Some(m) = &c.mrc {
        out.push_str("cache_bytes,miss_ratio\n");
        for p in &m.points {
            let _ = writeln!(out, "{},{}", p.cache_bytes, p.miss_ratio);
        }
        return out;
    }
    if let Some(w) = &c.warmup_estimate {
        out.push_str("capacity_bytes,threshold,hdd_iops,io_size_bytes,hdds,seconds\n");
        let _ = writeln!(
            out,
            "{},{},{},{},{},{}",
            w.capacity_bytes, w.threshold, w.hdd_iops, w.io_size_bytes, w.hdds, w.seconds
        );
        return out;
    }
    out.push_str(
        "policy,read_hit_ratio,read_byte_hit_ratio,read_hits,partial_hits,read_misses,write_hits,write_misses,\
         bypasses,hdd_ops,ssd_ops,ssd_bytes_written,hdd_bytes_written,fills,evictions,dirty_evictions,dwpd,warmup_s,\
         predicted_iops,hdd_only_iops,gain_pct\n",
    );
    for p in &c.policies {
        let r = &p.requests;
        let opt = |x: Option<f64>| x.map(|v| v.to_string()).unwrap_or_default();
        let _ = writeln!(
            out,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            p.name,
            p.read_hit_ratio,
            p.read_byte_hit_ratio,
            r.read_hits,
            r.partial_hits,
            r.read_misses,
            r.write_hits,
            r.write_misses,
            r.bypasses,
            p.hdd_ops,
            p.ssd_ops,
            p.bytes.written_to_ssd,
            p.bytes.written_to_hdd,
            p.blocks.fills,
            p.blocks.evictions,
            p.blocks.dirty_evictions,
            opt(p.dwpd),
            opt(p.warmup_s),
            opt(p.perf.as_ref().map(|f| f.max_iops)),
            opt(p.perf.as_ref().map(|f| f.hdd_only_iops)),
            opt(p.perf.as_ref().map(|f| f.gain_pct)),
        );
    }
    out
}

/// The one-line summary of `cache synth` and `cache convert`: the trace written (or, when the
/// command stopped early, read) and what it holds. `None` without a trace section.
pub fn trace_summary(doc: &ResultDoc) -> Option<String> {
    let t = doc.cache.as_ref().and_then(|c| c.trace.as_ref())?;
    let verb = if doc.error.is_some() { "read" } else { "wrote" };
    Some(format!(
        "{verb} {} ({} requests: {} reads, {} writes{}; {:.1} s of trace time{})",
        t.path,
        t.requests,
        t.reads,
        t.writes,
        if t.other > 0 { format!(", {} other", t.other) } else { String::new() },
        t.span_s,
        if t.skipped_lines > 0 { format!("; {} malformed lines skipped", t.skipped_lines) } else { String::new() }
    ))
}

#[cfg(test)]
mod summary_tests {
    use super::*;
    use stats::{HostInfo, TraceSummary};

    #[test]
    fn the_summary_counts_what_the_trace_holds() {
        let mut doc = ResultDoc::new("cache", "2026-01-01T00:00:00Z", HostInfo::default());
        assert_eq!(trace_summary(&doc), None);
        let t = TraceSummary {
            path: "z.dmt".into(),
            requests: 10,
            reads: 7,
            writes: 2,
            other: 1,
            span_s: 0.0125,
            skipped_lines: 3,
            ..TraceSummary::default()
        };
        doc.cache = Some(CacheResult { trace: Some(t), ..CacheResult::default() });
        assert_eq!(
            trace_summary(&doc).as_deref(),
            Some(
                "wrote z.dmt (10 requests: 7 reads, 2 writes, 1 other; 0.0 s of trace time; 3 malformed lines skipped)"
            )
        );
        doc.error = Some(stats::ErrorInfo::new("trace", "cut short"));
        assert!(
            trace_summary(&doc).is_some_and(|s| s.starts_with("read z.dmt (10 requests: 7 reads, 2 writes, 1 other;"))
        );
    }
}
