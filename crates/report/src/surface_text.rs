//! Text, Markdown and CSV for `surface` results: the summary, a sparkline of MB/s per zone
//! and of the latency map, and the slow-block and bad-sector lists.

use std::fmt::Write as _;

use stats::surface::{SlowBlock, SurfaceResult};
use stats::ResultDoc;

use crate::fmt;

const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];
/// Characters per sparkline row.
const ROW: usize = 72;
/// Lists longer than this are cut (the JSON has everything).
const MAX_LIST: usize = 20;

/// `values` as bar characters scaled to `0..=hi` (a missing value is a space).
fn spark(values: &[Option<f64>], hi: f64) -> String {
    values
        .iter()
        .map(|v| match v {
            Some(x) if x.is_finite() && hi > 0.0 => {
                let i = ((x / hi).clamp(0.0, 1.0) * (BARS.len() - 1) as f64).round() as usize;
                BARS[i.min(BARS.len() - 1)]
            }
            Some(_) => BARS[0],
            None => ' ',
        })
        .collect()
}

/// At most `n` values: the max of each group (a slow spot must stay visible).
fn squeeze(v: &[u64], n: usize) -> Vec<u64> {
    if v.len() <= n {
        return v.to_vec();
    }
    (0..n).map(|i| v[i * v.len() / n..(i + 1) * v.len() / n].iter().copied().max().unwrap_or(0)).collect()
}

fn mode_line(s: &SurfaceResult) -> String {
    let mut parts = vec![
        s.mode.clone(),
        format!("{} blocks", fmt::bytes(s.block_bytes)),
        format!("span {}–{}", fmt::bytes(s.offset), fmt::bytes(s.offset.saturating_add(s.size))),
        if s.direct { "direct I/O".to_string() } else { "buffered (page cache)".to_string() },
    ];
    if s.qd > 1 {
        parts.push(format!("QD {}", s.qd));
    }
    if let Some(n) = s.sample {
        parts.push(format!("sampled {} blocks", fmt::group(n)));
    }
    parts.push(format!("{} read in {}", fmt::bytes(s.scanned_bytes), fmt::secs(s.seconds)));
    parts.join(" · ")
}

fn rate_range(s: &SurfaceResult) -> Option<(f64, f64, f64)> {
    let r: Vec<f64> = s.zones.iter().filter_map(|z| z.mb_s).filter(|x| x.is_finite()).collect();
    if r.is_empty() {
        return None;
    }
    let lo = r.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    // The overall rate: all bytes over all block time.
    let bytes: u64 = s.zones.iter().map(|z| z.bytes).sum();
    let ns: f64 = s.zones.iter().map(|z| z.lat_mean_ns * z.blocks as f64).sum();
    let mean = if ns > 0.0 { bytes as f64 / 1e6 / (ns / 1e9) } else { 0.0 };
    Some((lo, mean, hi))
}

fn slow_line(b: &SlowBlock) -> String {
    let rr: Vec<String> = b.reread_ns.iter().map(|&n| fmt::lat(n as f64)).collect();
    format!(
        "  {:>14} ({:>10})  {:>8}  median {:>8}  re-read {:<20} {}",
        fmt::group(b.offset),
        fmt::bytes(b.offset),
        fmt::lat(b.lat_ns as f64),
        fmt::lat(b.median_ns as f64),
        if rr.is_empty() { "-".to_string() } else { rr.join(", ") },
        b.status
    )
}

/// The surface section of the human output (the caller prints the head and the footer).
pub(crate) fn human(doc: &ResultDoc) -> String {
    let mut out = String::new();
    let Some(s) = &doc.surface else { return out };
    let _ = writeln!(out, "scan        {}", mode_line(s));
    for l in fmt::wrap_text("verdict     ", "            ", &s.verdict, 100) {
        let _ = writeln!(out, "{l}");
    }
    if let Some((lo, mean, hi)) = rate_range(s) {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "transfer rate by position, {} zones (MB/s; bar height from 0 to {}):",
            s.zones.len(),
            fmt::rate_text(hi)
        );
        let vals: Vec<Option<f64>> = s.zones.iter().map(|z| z.mb_s).collect();
        // A zone holding a bad sector shows ✗ instead of its bar.
        let line: Vec<char> = spark(&vals, hi)
            .chars()
            .zip(&s.zones)
            .map(|(c, z)| {
                let bad =
                    s.bad_sectors.iter().any(|b| b.offset >= z.offset && b.offset < z.offset.saturating_add(z.size));
                if bad {
                    '✗'
                } else {
                    c
                }
            })
            .collect();
        for (i, chunk) in line.chunks(ROW).enumerate() {
            let at = s.zones.get(i * ROW).map(|z| z.offset).unwrap_or(0);
            let _ = writeln!(out, "  {:>9} {}", fmt::bytes(at), chunk.iter().collect::<String>());
        }
        if !s.bad_sectors.is_empty() {
            let _ = writeln!(out, "            ✗ = zone with a bad sector");
        }
        let _ = writeln!(
            out,
            "rate        min {} · mean {} · max {} MB/s",
            fmt::rate_text(lo),
            fmt::rate_text(mean),
            fmt::rate_text(hi)
        );
        let w: Vec<f64> = s.zones.iter().filter_map(|z| z.write_mb_s).collect();
        if !w.is_empty() {
            let wlo = w.iter().copied().fold(f64::INFINITY, f64::min);
            let whi = w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let _ =
                writeln!(out, "write       min {} · max {} MB/s per zone", fmt::rate_text(wlo), fmt::rate_text(whi));
        }
        let bmin = s.zones.iter().filter(|z| z.blocks > 0).map(|z| z.lat_min_ns).min().unwrap_or(0);
        let bmax = s.zones.iter().map(|z| z.lat_max_ns).max().unwrap_or(0);
        let _ = writeln!(
            out,
            "blocks      latency min {} · max {} ({} blocks)",
            fmt::lat(bmin as f64),
            fmt::lat(bmax as f64),
            fmt::group(s.blocks)
        );
    }
    if let Some(m) = &s.latency_map {
        if !m.max_ns.is_empty() {
            let cells = squeeze(&m.max_ns, ROW);
            let lo = m.median_ns.iter().copied().filter(|&x| x > 0).min().unwrap_or(1).max(1) as f64;
            let hi = cells.iter().copied().max().unwrap_or(1).max(1) as f64;
            // Log scale from the fastest median to the slowest max: one slow cell stands out.
            let span = (hi / lo).ln();
            let vals: Vec<Option<f64>> = cells
                .iter()
                .map(|&c| Some(if span > 0.0 { ((c.max(1) as f64) / lo).ln().max(0.0) / span } else { 0.0 }))
                .collect();
            let _ =
                writeln!(out, "latency map (slowest block per cell, log scale {} – {}):", fmt::lat(lo), fmt::lat(hi));
            let _ = writeln!(out, "  {:>9} {}", fmt::bytes(m.offsets.first().copied().unwrap_or(0)), spark(&vals, 1.0));
        }
    }
    if let Some(a) = &s.access {
        let _ = writeln!(
            out,
            "access      {} random {} reads: min {} · mean {} · p50 {} · p99 {} · max {}",
            fmt::group(a.count),
            fmt::bytes(a.io_bytes),
            fmt::lat(a.min_ns as f64),
            fmt::lat(a.mean_ns),
            fmt::lat(a.p50_ns as f64),
            fmt::lat(a.p99_ns as f64),
            fmt::lat(a.max_ns as f64)
        );
    }
    for p in &s.passes {
        let _ = writeln!(
            out,
            "pass {}    write {} MB/s · verify {} MB/s · {} bad sector{}{}",
            p.pattern,
            p.write_mb_s.map(fmt::rate_text).unwrap_or_else(|| "-".into()),
            p.read_mb_s.map(fmt::rate_text).unwrap_or_else(|| "-".into()),
            p.bad_sectors,
            if p.bad_sectors == 1 { "" } else { "s" },
            if p.partial { " (partial)" } else { "" }
        );
    }
    let rule = &s.slow_rule;
    if s.slow_blocks.is_empty() {
        let _ = writeln!(
            out,
            "slow        none (rule: > {}× the median of the previous {} blocks and > {})",
            axis_num(rule.factor),
            rule.window,
            fmt::lat(rule.floor_ns as f64)
        );
    } else {
        let _ = writeln!(out);
        let _ = writeln!(
            out,
            "slow blocks ({}; > {}× the rolling median and > {}, re-read up to {}×):",
            s.slow_blocks.len(),
            axis_num(rule.factor),
            fmt::lat(rule.floor_ns as f64),
            rule.rereads
        );
        for b in s.slow_blocks.iter().take(MAX_LIST) {
            let _ = writeln!(out, "{}", slow_line(b).trim_end());
        }
        if s.slow_blocks.len() > MAX_LIST {
            let _ = writeln!(out, "  … and {} more (see --json)", s.slow_blocks.len() - MAX_LIST);
        }
    }
    if s.bad_sectors.is_empty() {
        let _ = writeln!(out, "bad         none");
    } else {
        let _ = writeln!(out);
        let _ = writeln!(out, "bad sectors ({}, {}-byte sectors):", s.bad_sectors.len(), s.logical_block);
        for b in s.bad_sectors.iter().take(MAX_LIST) {
            let _ = writeln!(
                out,
                "  {:>14} ({:>10})  sector {:>12}  {:<9} {}",
                fmt::group(b.offset),
                fmt::bytes(b.offset),
                fmt::group(b.offset / u64::from(s.logical_block.max(1))),
                b.error,
                b.phase
            );
        }
        if s.bad_sectors.len() > MAX_LIST {
            let _ = writeln!(out, "  … and {} more (see --json)", s.bad_sectors.len() - MAX_LIST);
        }
    }
    if let Some(l) = &s.badblocks {
        if l.file.is_some() || !l.blocks.is_empty() {
            let shown: Vec<String> = l.blocks.iter().take(MAX_LIST).map(|b| b.to_string()).collect();
            let more = if l.blocks.len() > MAX_LIST {
                format!(" … (+{})", l.blocks.len() - MAX_LIST)
            } else {
                String::new()
            };
            let file = l.file.as_ref().map(|f| format!(" → {f}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "badblocks   {} in {}-byte blocks{file}{}",
                l.blocks.len(),
                l.fs_block,
                if shown.is_empty() { String::new() } else { format!(": {}{more}", shown.join(" ")) }
            );
        }
    }
    if !s.restore_failures.is_empty() {
        let offs: Vec<String> = s.restore_failures.iter().map(|o| fmt::group(*o)).collect();
        let _ = writeln!(out, "NOT RESTORED: blocks at offsets {}", offs.join(", "));
    }
    out
}

fn axis_num(x: f64) -> String {
    if (x - x.round()).abs() < 1e-9 {
        format!("{x:.0}")
    } else {
        format!("{x}")
    }
}

/// Markdown: the summary and a zone table.
pub(crate) fn markdown(doc: &ResultDoc) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "# {} surface scan", doc.tool.name);
    let _ = writeln!(out);
    if let Some(t) = &doc.target {
        let _ = writeln!(out, "- **Target:** `{}` ({}, {})", t.path, fmt::kind(t.kind), fmt::bytes(t.size_bytes));
    }
    let _ = writeln!(out, "- **Date:** {} · {} {}", fmt::date(&doc.started_at), doc.tool.name, doc.tool.version);
    let Some(s) = &doc.surface else {
        return out;
    };
    let _ = writeln!(out, "- **Scan:** {}", mode_line(s));
    let _ = writeln!(out, "- **Verdict:** {}", s.verdict);
    if doc.partial {
        let _ = writeln!(out, "- **Partial:** yes");
    }
    if let Some(a) = &s.access {
        let _ = writeln!(
            out,
            "- **Access time:** mean {} · p50 {} · p99 {} ({} random {} reads)",
            fmt::lat(a.mean_ns),
            fmt::lat(a.p50_ns as f64),
            fmt::lat(a.p99_ns as f64),
            a.count,
            fmt::bytes(a.io_bytes)
        );
    }
    let _ = writeln!(out);
    let _ = writeln!(out, "| zone start | MB/s | min latency | mean latency | max latency |");
    let _ = writeln!(out, "| ---: | ---: | ---: | ---: | ---: |");
    for z in &s.zones {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} | {} |",
            fmt::bytes(z.offset),
            z.mb_s.map(fmt::rate_text).unwrap_or_else(|| "-".into()),
            fmt::lat(z.lat_min_ns as f64),
            fmt::lat(z.lat_mean_ns),
            fmt::lat(z.lat_max_ns as f64)
        );
    }
    if !s.bad_sectors.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "| bad sector offset | error | phase |");
        let _ = writeln!(out, "| ---: | --- | --- |");
        for b in &s.bad_sectors {
            let _ = writeln!(out, "| {} | {} | {} |", b.offset, b.error, b.phase);
        }
    }
    if !s.slow_blocks.is_empty() {
        let _ = writeln!(out);
        let _ = writeln!(out, "| slow block offset | latency | median | status |");
        let _ = writeln!(out, "| ---: | ---: | ---: | --- |");
        for b in &s.slow_blocks {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {} |",
                b.offset,
                fmt::lat(b.lat_ns as f64),
                fmt::lat(b.median_ns as f64),
                b.status
            );
        }
    }
    for w in &doc.warnings {
        let _ = writeln!(out, "\n> **warning[{}]:** {}", w.code, w.message);
    }
    out
}

/// CSV: one row per zone.
pub(crate) fn csv(doc: &ResultDoc) -> String {
    let mut out = String::from("zone,offset,size,blocks,bytes,mb_s,write_mb_s,lat_min_ns,lat_mean_ns,lat_max_ns\n");
    if let Some(s) = &doc.surface {
        for (i, z) in s.zones.iter().enumerate() {
            let f = |x: Option<f64>| x.map(|v| format!("{v:.3}")).unwrap_or_default();
            let _ = writeln!(
                out,
                "{i},{},{},{},{},{},{},{},{:.0},{}",
                z.offset,
                z.size,
                z.blocks,
                z.bytes,
                f(z.mb_s),
                f(z.write_mb_s),
                z.lat_min_ns,
                z.lat_mean_ns,
                z.lat_max_ns
            );
        }
    }
    out
}

/// The one-sentence verdict the `surface` section stores (`verdict`), e.g. "no bad sectors, 2 slow blocks (transient),
/// 512.3–498.1 MB/s across the surface".
pub fn verdict(r: &SurfaceResult, partial: bool) -> String {
    let mut parts = Vec::new();
    parts.push(match r.bad_sectors.len() {
        0 => "no bad sectors".to_string(),
        1 => "1 bad sector".to_string(),
        n => format!("{n} bad sectors"),
    });
    let confirmed = r.slow_blocks.iter().filter(|s| s.confirmed()).count();
    let transient = r.slow_blocks.len() - confirmed;
    parts.push(match (confirmed, transient) {
        (0, 0) => "no slow blocks".to_string(),
        (c, 0) => format!("{c} slow block{} (confirmed)", if c == 1 { "" } else { "s" }),
        (0, t) => format!("{t} slow block{} (transient)", if t == 1 { "" } else { "s" }),
        (c, t) => format!("{} slow blocks ({c} confirmed, {t} transient)", c + t),
    });
    if !r.restore_failures.is_empty() {
        parts.push(format!("{} block(s) NOT RESTORED", r.restore_failures.len()));
    }
    let rates: Vec<f64> = r.zones.iter().filter_map(|z| z.mb_s).filter(|x| x.is_finite()).collect();
    if let (Some(first), Some(last)) = (rates.first(), rates.last()) {
        let lo = rates.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = rates.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        if rates.len() == 1 {
            parts.push(format!("{} MB/s", fmt::rate_text(*first)));
        } else {
            parts.push(format!(
                "{}–{} MB/s across the surface (min {}, max {})",
                fmt::rate_text(*first),
                fmt::rate_text(*last),
                fmt::rate_text(lo),
                fmt::rate_text(hi)
            ));
        }
    }
    let mut s = parts.join(", ");
    if partial {
        s.push_str(" (partial scan)");
    }
    s
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use stats::surface::{zones, BadSector, SlowRule};

    #[test]
    fn sparkline_scales_from_zero() {
        assert_eq!(spark(&[Some(0.0), Some(50.0), Some(100.0), None], 100.0), "▁▅█ ");
    }

    fn doc() -> ResultDoc {
        ResultDoc::from_json(include_str!("../tests/data/surface.json")).unwrap()
    }

    #[test]
    fn human_snapshot() {
        insta::assert_snapshot!("surface_human", crate::render(&doc(), crate::Format::Human));
    }

    #[test]
    fn markdown_and_csv() {
        let d = doc();
        let md = crate::render(&d, crate::Format::Markdown);
        assert!(md.contains("| zone start | MB/s |"), "{md}");
        assert!(md.contains("| 10485760 | EIO | read |"), "{md}");
        let csv = crate::render(&d, crate::Format::Csv);
        assert_eq!(csv.lines().count(), 1 + d.surface.as_ref().unwrap().zones.len());
    }

    #[test]
    fn empty_and_partial_documents_render() {
        let mut d = doc();
        let s = d.surface.as_mut().unwrap();
        s.zones.clear();
        s.latency_map = None;
        s.access = None;
        s.slow_blocks.clear();
        s.bad_sectors.clear();
        d.partial = true;
        let text = crate::render(&d, crate::Format::Human);
        assert!(text.contains("PARTIAL RESULTS"), "{text}");
        assert!(text.contains("bad         none"));
        assert!(crate::render(&d, crate::Format::Html).contains("id=\"surface\""));
        for f in [crate::Format::Markdown, crate::Format::Csv, crate::Format::Json] {
            assert!(crate::render(&d, f).ends_with('\n'), "{f:?}");
        }
    }

    #[test]
    fn squeeze_keeps_the_max() {
        assert_eq!(squeeze(&[1, 9, 2, 3, 4, 5], 3), vec![9, 3, 5]);
        assert_eq!(squeeze(&[1, 2], 3), vec![1, 2]);
    }

    fn bad(offset: u64, bytes: u64) -> BadSector {
        BadSector { offset, bytes, errno: Some(5), error: "EIO".into(), phase: "read".into() }
    }

    #[test]
    fn verdict_sentence() {
        let mut r = SurfaceResult {
            mode: "read".into(),
            block_bytes: 100,
            logical_block: 512,
            offset: 0,
            size: 200,
            direct: true,
            sample: None,
            qd: 1,
            scanned_bytes: 200,
            blocks: 2,
            seconds: 1.0,
            zones: zones(0, 200, 100, 2, &[(0, 100, 1_000), (100, 100, 2_000)]),
            access: None,
            latency_map: None,
            slow_rule: SlowRule { factor: 5.0, window: 64, floor_ns: 1, rereads: 2 },
            slow_blocks: vec![],
            bad_sectors: vec![],
            passes: vec![],
            badblocks: None,
            restore_failures: vec![],
            verdict: String::new(),
        };
        assert_eq!(
            verdict(&r, false),
            "no bad sectors, no slow blocks, 100.0–50.0 MB/s across the surface (min 50.0, max 100.0)"
        );
        r.bad_sectors.push(bad(0, 512));
        r.slow_blocks.push(SlowBlock {
            offset: 0,
            bytes: 100,
            lat_ns: 9,
            median_ns: 1,
            reread_ns: vec![1],
            status: "transient".into(),
        });
        assert!(verdict(&r, true).starts_with("1 bad sector, 1 slow block (transient), "));
        assert!(verdict(&r, true).ends_with("(partial scan)"));
    }
}
