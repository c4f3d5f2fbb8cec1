//! The `replay` section: the trace and its mapping, per pass the figures of each operation
//! kind beside the trace's own recorded latency, and the fidelity (issue lag, slot waits).
//! Text, Markdown and CSV; nothing when the document has no replay section.

use std::fmt::Write as _;

use stats::replay::{ReplayOpStats, ReplayPass, ReplayResult};
use stats::ResultDoc;

use crate::fmt;

pub(crate) const OP_COLS: [&str; 9] = ["op", "ops", "IOPS", "MB/s", "mean", "p50", "p99", "max", "trace p99"];

pub(crate) fn head_lines(r: &ReplayResult) -> Vec<String> {
    let t = &r.trace;
    let devices = match t.devices.len() {
        0 | 1 => t.devices.first().map(|d| format!("device {d}")).unwrap_or_default(),
        n => format!("{n} devices"),
    };
    let mut v = vec![format!(
        "trace     {} ({}, {} requests over {}{}{})",
        t.path,
        t.format,
        fmt::group(t.requests),
        fmt::secs(t.duration_s),
        if devices.is_empty() { String::new() } else { format!(", {devices}") },
        if t.recorded_latency { ", with recorded latencies" } else { "" }
    )];
    let timing = match r.timing.as_str() {
        "original" if (r.speed - 1.0).abs() > 1e-9 => format!("original × {}", r.speed),
        "original" => "original (the trace's own times, open loop)".to_string(),
        "afap" => "afap (as fast as possible)".to_string(),
        "depth" => "depth (the trace's own outstanding count)".to_string(),
        other => other.to_string(),
    };
    v.push(format!("timing    {timing} · at most {} outstanding", r.qd));
    for tg in &r.targets {
        v.push(format!(
            "mapping   {} → {} ({}, {} used, map {})",
            if tg.devices.is_empty() { "trace".to_string() } else { tg.devices.join(", ") },
            tg.path,
            fmt::bytes(tg.size_bytes),
            fmt::bytes(tg.used_bytes),
            r.map
        ));
    }
    v
}

pub(crate) fn op_cells(o: &ReplayOpStats) -> [String; 9] {
    [
        o.op.clone(),
        fmt::group(o.ops),
        fmt::iops(o.iops),
        if o.bytes > 0 { fmt::rate(o.mb_s) } else { "-".into() },
        fmt::lat(o.lat_ns.mean),
        fmt::lat(o.lat_ns.p50 as f64),
        fmt::lat(o.lat_ns.p99 as f64),
        fmt::lat(o.lat_ns.max as f64),
        o.recorded_ns.as_ref().map_or("-".into(), |l| fmt::lat(l.p99 as f64)),
    ]
}

/// The fidelity line of a pass.
pub(crate) fn fidelity(p: &ReplayPass, qd: u32) -> String {
    let f = &p.fidelity;
    let mut parts = Vec::new();
    if let Some(l) = &f.lag_ns {
        parts.push(format!(
            "issue lag p50 {} · p99 {} · max {}",
            fmt::lat(l.p50 as f64),
            fmt::lat(l.p99 as f64),
            fmt::lat(l.max as f64)
        ));
    }
    if let Some(pct) = f.on_time_pct {
        parts.push(format!("{pct:.2} % issued within 1 ms"));
    }
    parts.push(format!("{} waited for a slot", fmt::group(f.slot_waits)));
    if f.tool_late > 0 {
        parts.push(format!("{} late by the tool", fmt::group(f.tool_late)));
    }
    parts.push(format!("outstanding max {} of {qd}, mean {:.1}", f.max_outstanding, f.qd_mean));
    parts.join(" · ")
}

/// Recorded vs replayed p99 of the busiest kind, as a sentence (when the trace has latencies).
pub(crate) fn versus(p: &ReplayPass) -> Option<String> {
    let o = p.ops.iter().filter(|o| o.recorded_ns.is_some()).max_by_key(|o| o.ops)?;
    let rec = o.recorded_ns.as_ref()?;
    Some(format!(
        "{}s: this target served the trace with p99 {} (mean {}), where the trace recorded p99 {} (mean {})",
        o.op,
        fmt::lat(o.service_ns.p99 as f64),
        fmt::lat(o.service_ns.mean),
        fmt::lat(rec.p99 as f64),
        fmt::lat(rec.mean)
    ))
}

fn table(rows: &[[String; 9]]) -> Vec<String> {
    let mut w = [0usize; 9];
    for r in std::iter::once(&OP_COLS.map(String::from)).chain(rows) {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(c.chars().count());
        }
    }
    std::iter::once(OP_COLS.map(String::from))
        .chain(rows.iter().cloned())
        .map(|r| {
            let mut s = String::new();
            for (i, c) in r.iter().enumerate() {
                let pad = w[i] - c.chars().count();
                if i == 0 {
                    let _ = write!(s, "  {c}{}", " ".repeat(pad));
                } else {
                    let _ = write!(s, "  {}{c}", " ".repeat(pad));
                }
            }
            s.trim_end().to_string()
        })
        .collect()
}

/// First against last pass (a cache warming shows here): the busiest kind's p99 and the rate.
fn across_passes(r: &ReplayResult) -> Option<String> {
    let (first, last) = (r.passes.first()?, r.passes.last()?);
    if r.passes.len() < 2 {
        return None;
    }
    let busiest = first.ops.iter().max_by_key(|o| o.ops)?;
    let later = last.ops.iter().find(|o| o.op == busiest.op)?;
    let rate = |p: &ReplayPass| p.ops.iter().map(|o| o.iops).sum::<f64>();
    Some(format!(
        "passes: {} p99 {} in the first, {} in the last; {} req/s, then {} req/s",
        busiest.op,
        fmt::lat(busiest.lat_ns.p99 as f64),
        fmt::lat(later.lat_ns.p99 as f64),
        fmt::iops(rate(first)),
        fmt::iops(rate(last))
    ))
}

/// Human text of the replay section ("" without one).
pub(crate) fn human(doc: &ResultDoc) -> String {
    let Some(r) = &doc.replay else { return String::new() };
    let mut out = String::from("\n");
    for l in head_lines(r) {
        out.push_str(&l);
        out.push('\n');
    }
    for p in &r.passes {
        let total: f64 = p.ops.iter().map(|o| o.iops).sum();
        let _ = writeln!(
            out,
            "\npass {} · {} · {} requests · {} req/s",
            p.pass,
            fmt::secs(p.seconds),
            fmt::group(p.requests),
            fmt::iops(total)
        );
        let rows: Vec<[String; 9]> = p.ops.iter().map(op_cells).collect();
        for l in table(&rows) {
            out.push_str(&l);
            out.push('\n');
        }
        for l in fmt::wrap_text("  fidelity: ", "    ", &fidelity(p, r.qd), 100) {
            out.push_str(&l);
            out.push('\n');
        }
        if let Some(v) = versus(p) {
            for l in fmt::wrap_text("  ", "    ", &v, 100) {
                out.push_str(&l);
                out.push('\n');
            }
        }
    }
    if let Some(l) = across_passes(r) {
        let _ = writeln!(out, "\n{l}");
    }
    out
}

/// Markdown of the replay section ("" without one).
pub(crate) fn markdown(doc: &ResultDoc) -> String {
    let Some(r) = &doc.replay else { return String::new() };
    let mut out = String::from("\n## Replay\n\n");
    for l in head_lines(r) {
        let _ = writeln!(out, "- {}", l.split_whitespace().collect::<Vec<_>>().join(" "));
    }
    for p in &r.passes {
        let _ =
            writeln!(out, "\n### Pass {} ({}, {} requests)\n", p.pass, fmt::secs(p.seconds), fmt::group(p.requests));
        let _ = writeln!(out, "| {} |", OP_COLS.join(" | "));
        let _ = writeln!(out, "|---|{}", "---:|".repeat(OP_COLS.len() - 1));
        for o in &p.ops {
            let _ = writeln!(out, "| {} |", op_cells(o).join(" | "));
        }
        let _ = writeln!(out, "\nFidelity: {}", fidelity(p, r.qd));
        if let Some(v) = versus(p) {
            let _ = writeln!(out, "\n{v}");
        }
    }
    out
}

/// CSV of the replay section, after an empty line ("" without one): one row per pass and kind.
pub(crate) fn csv(doc: &ResultDoc) -> String {
    let Some(r) = &doc.replay else { return String::new() };
    let mut out = String::from(
        "\npass,op,ops,bytes,iops,mb_s,lat_mean_ns,lat_p50_ns,lat_p99_ns,lat_max_ns,service_p99_ns,recorded_p99_ns,\
         lag_p99_ns,on_time_pct,slot_waits\n",
    );
    for p in &r.passes {
        for o in &p.ops {
            let _ = writeln!(
                out,
                "{},{},{},{},{:.3},{:.3},{:.0},{},{},{},{},{},{},{},{}",
                p.pass,
                o.op,
                o.ops,
                o.bytes,
                o.iops,
                o.mb_s,
                o.lat_ns.mean,
                o.lat_ns.p50,
                o.lat_ns.p99,
                o.lat_ns.max,
                o.service_ns.p99,
                o.recorded_ns.as_ref().map(|l| l.p99.to_string()).unwrap_or_default(),
                p.fidelity.lag_ns.as_ref().map(|l| l.p99.to_string()).unwrap_or_default(),
                p.fidelity.on_time_pct.map(|x| format!("{x:.3}")).unwrap_or_default(),
                p.fidelity.slot_waits
            );
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use stats::replay::{Fidelity, ReplayTarget, ReplayTrace};
    use stats::{HostInfo, LatSummary};

    fn lat(p50: u64, p99: u64, max: u64) -> LatSummary {
        LatSummary {
            min: p50 / 2,
            mean: p50 as f64 * 1.1,
            p50,
            p90: p99 / 2,
            p99,
            p99_9: max,
            p99_99: max,
            max,
            ..Default::default()
        }
    }

    fn doc() -> ResultDoc {
        let mut d = ResultDoc::new("replay", "2026-11-24T12:00:00Z", HostInfo::default());
        let pass = |n: u32, scale: u64| ReplayPass {
            pass: n,
            seconds: 4.0,
            requests: 20_000,
            ops: vec![
                ReplayOpStats {
                    op: "read".into(),
                    ops: 14_000,
                    bytes: 14_000 * 4096,
                    iops: 3_500.0,
                    mb_s: 14.336,
                    lat_ns: lat(45_000 * scale, 104_000 * scale, 2_850_000),
                    service_ns: lat(40_000 * scale, 98_000 * scale, 2_800_000),
                    recorded_ns: Some(lat(200_000, 250_000, 900_000)),
                },
                ReplayOpStats {
                    op: "flush".into(),
                    ops: 6_000,
                    bytes: 0,
                    iops: 1_500.0,
                    mb_s: 0.0,
                    lat_ns: lat(90_000, 190_000, 341_000),
                    service_ns: lat(88_000, 180_000, 340_000),
                    recorded_ns: None,
                },
            ],
            target_requests: vec![20_000],
            fidelity: Fidelity {
                lag_ns: Some(lat(21_000, 58_000, 2_710_000)),
                on_time_pct: Some(99.86),
                slot_waits: 0,
                tool_late: 21,
                max_outstanding: 15,
                qd_mean: 0.4,
                sync_discards: 0,
            },
        };
        d.replay = Some(ReplayResult {
            trace: ReplayTrace {
                path: "t.dmt".into(),
                format: "binary".into(),
                requests: 20_000,
                devices: vec!["8,16".into()],
                span_start: 0,
                span_end: 64 << 20,
                duration_s: 4.0,
                recorded_latency: true,
                skipped_lines: 0,
            },
            timing: "original".into(),
            speed: 1.0,
            qd: 256,
            map: "offset".into(),
            targets: vec![ReplayTarget {
                path: "/dev/loop0".into(),
                size_bytes: 256 << 20,
                devices: vec!["8,16".into()],
                used_bytes: 64 << 20,
            }],
            realigned: 0,
            clamped: 0,
            max_request_bytes: 4096,
            passes: vec![pass(1, 2), pass(2, 1)],
        });
        d
    }

    #[test]
    fn human() {
        insta::assert_snapshot!(super::human(&doc()));
    }

    #[test]
    fn markdown_and_csv() {
        insta::assert_snapshot!(format!("{}\n---\n{}", super::markdown(&doc()), super::csv(&doc())));
    }

    #[test]
    fn html_has_the_section() {
        let html = crate::render_html(&doc());
        assert!(html.contains("id=\"replay-pass-2\""));
        assert!(html.contains("where the trace recorded p99 250 µs"));
    }

    #[test]
    fn nothing_without_a_replay() {
        let d = ResultDoc::new("run", "2026-11-24T12:00:00Z", HostInfo::default());
        assert_eq!(super::human(&d) + &super::markdown(&d) + &super::csv(&d), "");
    }
}
