//! Text for `capture` (its summary, its JSON document, its warnings) and `profile` (the
//! result's human text, the notes on an emitted job, and the fio job file itself).

use std::fmt::Write as _;

use stats::profile::{CaptureSummary, OpProfile, ProfileJob, ProfileResult};
use stats::{LatSummary, ResultDoc};

use crate::fmt;

fn pct(x: f64) -> String {
    if x > 0.0 && x < 0.0005 {
        "<0.1 %".into()
    } else if x.is_finite() {
        format!("{:.1} %", x * 100.0)
    } else {
        "-".into()
    }
}

fn lat_line(l: &LatSummary) -> String {
    format!(
        "mean {} · p50 {} · p90 {} · p99 {} · p99.9 {} · max {}",
        fmt::lat(l.mean),
        fmt::lat(l.p50 as f64),
        fmt::lat(l.p90 as f64),
        fmt::lat(l.p99 as f64),
        fmt::lat(l.p99_9 as f64),
        fmt::lat(l.max as f64)
    )
}

// ---------------------------------------------------------------------------------------
// capture

/// The human summary of a capture.
pub fn capture_text(s: &CaptureSummary) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "diskmeter {} · capture {} · {}", s.version, s.device, fmt::date(&s.started_at));
    let mut dev = format!("{} ({})", s.name, s.dev);
    if let Some(p) = &s.partition {
        let _ = write!(
            dev,
            " · partition of {} at {} ({}): offsets are from its start",
            p.disk,
            fmt::bytes(p.start_bytes),
            fmt::bytes(p.size_bytes)
        );
    }
    let _ = writeln!(out, "device    {dev}");
    let latency = if s.trace_version >= 2 { ", each request with its latency" } else { "" };
    let _ = writeln!(out, "trace     {} (binary v{}{latency})", s.output, s.trace_version);
    let mut recorded = format!(
        "recorded  {} · {} requests: {} reads ({}), {} writes ({})",
        fmt::secs(s.duration_s),
        fmt::group(s.requests),
        fmt::group(s.reads),
        fmt::bytes(s.read_bytes),
        fmt::group(s.writes),
        fmt::bytes(s.write_bytes)
    );
    if s.discards > 0 {
        let _ = write!(recorded, ", {} discards ({})", fmt::group(s.discards), fmt::bytes(s.discard_bytes));
    }
    if s.flushes > 0 {
        let _ = write!(recorded, ", {} flushes", fmt::group(s.flushes));
    }
    let _ = writeln!(out, "{recorded}");
    if let Some(l) = &s.latency_ns {
        let _ = writeln!(out, "latency   {} (issue → completion)", lat_line(l));
    }
    let _ = writeln!(
        out,
        "kernel    {} events read from {} CPU buffers of {} · {} lost",
        fmt::group(s.events),
        s.cpus,
        fmt::bytes(s.buffer_kib_per_cpu * 1024),
        fmt::group(s.lost_events)
    );
    let d = &s.dropped;
    let _ = writeln!(
        out,
        "not kept  {} issued before the start · {} in flight at the end · {} requeued (reissue kept) · {} without \
         completion · {} other operations",
        fmt::group(d.issued_before_start),
        fmt::group(d.in_flight_at_end),
        fmt::group(d.requeued),
        fmt::group(d.no_completion),
        fmt::group(d.other_ops)
    );
    for w in capture_warnings(s) {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}

/// What the user must know about a capture: lost events, errors, nothing captured.
pub fn capture_warnings(s: &CaptureSummary) -> Vec<String> {
    let mut v = Vec::new();
    if s.lost_events > 0 {
        v.push(format!(
            "{} events were lost (the kernel's trace buffer was full): the trace misses requests and counts \
             others as issued before the start or in flight; use a larger --buffer",
            fmt::group(s.lost_events)
        ));
    }
    if s.errors > 0 {
        v.push(format!("{} requests completed with an error (they are in the trace)", fmt::group(s.errors)));
    }
    if s.requests == 0 {
        v.push(format!("no requests were captured: {} was idle for {}", s.device, fmt::secs(s.duration_s)));
    }
    v
}

/// The capture's JSON document (schema `diskmeter.capture.v1`), with a final newline.
pub fn capture_json(s: &CaptureSummary) -> Result<String, String> {
    serde_json::to_string_pretty(s).map(|j| j + "\n").map_err(|e| e.to_string())
}

// ---------------------------------------------------------------------------------------
// profile

fn sizes_cell(o: &OpProfile) -> String {
    if o.op == "flush" {
        return String::new();
    }
    let mut parts: Vec<String> = o
        .sizes
        .iter()
        .take(4)
        .map(|s| format!("{} {}", fmt::bytes(s.bytes), pct(s.count as f64 / o.requests.max(1) as f64)))
        .collect();
    let rest = o.sizes.len().saturating_sub(4);
    if rest > 0 || o.other_sizes > 0 {
        let n: u64 = o.sizes.iter().skip(4).map(|s| s.count).sum::<u64>() + o.other_sizes;
        parts.push(format!("others {}", pct(n as f64 / o.requests.max(1) as f64)));
    }
    parts.join(" · ")
}

/// `profile`'s human text.
pub(crate) fn human(doc: &ResultDoc) -> String {
    let Some(p) = &doc.profile else { return String::new() };
    let mut out = String::new();
    let _ = writeln!(out, "{} {} · profile · {}", doc.tool.name, doc.tool.version, fmt::date(&doc.started_at));
    let t = &p.trace;
    let devices = match t.devices.as_slice() {
        [one] => format!("device {one}"),
        many => format!("{} devices", many.len()),
    };
    let _ = writeln!(
        out,
        "trace       {} ({}) · {} requests over {} · {devices}{}",
        t.path,
        t.format,
        fmt::group(p.requests),
        fmt::secs(t.span_s),
        if t.skipped_lines > 0 {
            format!(" · {} malformed lines skipped", fmt::group(t.skipped_lines))
        } else {
            String::new()
        }
    );
    let _ = writeln!(
        out,
        "mix         reads are {} of reads and writes by count, {} by bytes · {} in all",
        pct(p.read_fraction),
        pct(p.read_byte_fraction),
        fmt::bytes(p.bytes)
    );
    out.push('\n');
    let _ = writeln!(
        out,
        "  {:<8}{:>12}{:>9}{:>13}{:>8}  block sizes (most frequent first)",
        "op", "requests", "share", "bytes", "seq"
    );
    for o in &p.ops {
        let seq = if o.op == "flush" { "-".to_string() } else { pct(o.sequential) };
        let row = format!(
            "  {:<8}{:>12}{:>9}{:>13}{:>8}  {}",
            o.op,
            fmt::group(o.requests),
            pct(o.fraction),
            fmt::bytes(o.bytes),
            seq,
            sizes_cell(o)
        );
        let _ = writeln!(out, "{}", row.trim_end());
    }
    out.push('\n');
    let _ = writeln!(
        out,
        "sequential  {} of reads, writes and discards start where the previous request of the same operation on the \
         same device ended",
        pct(p.sequential_fraction)
    );
    let h = &p.hot_set;
    let _ = writeln!(
        out,
        "hot set     footprint {} ({} blocks of {}), {} block accesses; share of them on the hottest",
        fmt::bytes(h.footprint_blocks * h.block_bytes),
        fmt::group(h.footprint_blocks),
        fmt::bytes(h.block_bytes),
        fmt::group(h.accesses)
    );
    let pts: Vec<String> = h.points.iter().map(|x| format!("{:.0} %: {}", x.footprint_pct, pct(x.share))).collect();
    let _ = writeln!(out, "            {}", pts.join(" · "));
    let a = &p.arrivals;
    let mut arr = format!("arrivals    {} IOPS mean", fmt::iops(a.mean_iops));
    if let Some(g) = &a.gap_ns {
        let _ = write!(
            arr,
            " · gap p50 {} · p90 {} · p99 {} · max {}",
            fmt::lat(g.p50 as f64),
            fmt::lat(g.p90 as f64),
            fmt::lat(g.p99 as f64),
            fmt::lat(g.max as f64)
        );
    }
    if a.out_of_order > 0 {
        let _ = write!(arr, " · {} requests stamped before the one before them", fmt::group(a.out_of_order));
    }
    let _ = writeln!(out, "{arr}");
    match &p.depth {
        Some(d) => {
            let _ = writeln!(
                out,
                "depth       mean {:.2} in flight · max {} · seen by an arriving request p50 {} · p90 {} · p99 {}",
                d.mean, d.max, d.at_arrival_p50, d.at_arrival_p90, d.at_arrival_p99
            );
            if !d.series.is_empty() {
                let per = d.series.len().div_ceil(20);
                let means: Vec<String> = d
                    .series
                    .chunks(per)
                    .map(|c| format!("{:.1}", c.iter().map(|x| x.mean).sum::<f64>() / c.len() as f64))
                    .collect();
                let step = d.series.first().map_or(0.0, |x| x.interval_s) * per as f64;
                let _ = writeln!(out, "            over time, per {}: {}", fmt::secs(step), means.join(" "));
            }
        }
        None if t.requests_with_latency == 0 => {
            let _ = writeln!(
                out,
                "depth       not available: the trace records no completion times{}",
                if t.carries_latency { "" } else { " (its format has none)" }
            );
        }
        None => {
            let _ = writeln!(
                out,
                "depth       not available: only {} of {} requests carry a completion time",
                fmt::group(t.requests_with_latency),
                fmt::group(p.requests)
            );
        }
    }
    if let Some(l) = &p.latency_ns {
        let _ = writeln!(out, "latency     {} (as the trace recorded it)", lat_line(l));
    }
    if let Some(j) = &p.job {
        out.push('\n');
        let _ = writeln!(out, "job         {} · {}", j.path, job_summary(j));
        let notes = profile_job_notes(p).len();
        if notes > 0 {
            let _ =
                writeln!(out, "            {notes} notes on what it does not reproduce: on stderr and in the job file");
        }
    }
    if doc.partial {
        let why = doc.error.as_ref().map(|e| e.message.clone()).unwrap_or_else(|| "interrupted".into());
        let _ = writeln!(out, "PARTIAL RESULTS ({why}) — figures cover only the part of the trace read");
    }
    out
}

fn job_summary(j: &ProfileJob) -> String {
    let jobs: Vec<String> = j
        .jobs
        .iter()
        .map(|s| {
            let mut v = format!("rw={}", s.rw);
            if let Some(m) = s.read_pct {
                let _ = write!(v, " rwmixread={m}");
            }
            let _ = write!(v, " bs={} iodepth={}", fmt::bytes(s.bs), s.iodepth);
            if let Some(r) = s.rate_iops {
                let _ = write!(v, " rate_iops={r}");
            }
            v
        })
        .collect();
    let mut s = format!("{} · size {} · runtime {} s", jobs.join(" + "), fmt::bytes(j.size_bytes), j.runtime_s);
    if let Some(d) = &j.distribution {
        let _ = write!(s, " · {d}");
    }
    if let Some(f) = j.fsync {
        let _ = write!(s, " · fsync={f}");
    }
    s
}

/// What the emitted job does not reproduce exactly (also shown on stderr and written into
/// the job file as comments).
pub fn profile_job_notes(p: &ProfileResult) -> Vec<String> {
    let Some(j) = &p.job else { return Vec::new() };
    let mut v = Vec::new();
    let per_size = j.jobs.len() > 1;
    if per_size {
        v.push(format!(
            "the dialect has one block size per job: the job runs {} jobs together, one per operation and size, \
             each with its share of the rate; sizes and mix keep the trace's proportions while the target \
             sustains the rates",
            j.jobs.len()
        ));
    }
    for f in &j.folded {
        let what = if f.bytes == 0 { "of other sizes".to_string() } else { format!("of {}", fmt::bytes(f.bytes)) };
        v.push(format!(
            "{} {} requests {what} are issued as {} (the dialect cannot express every size)",
            fmt::group(f.count),
            f.op.as_str(),
            fmt::bytes(f.into_bytes)
        ));
    }
    if j.discards_left_out > 0 {
        v.push(format!(
            "{} discards are left out: the job-file dialect has no discards",
            fmt::group(j.discards_left_out)
        ));
    }
    if !j.depth_from_trace {
        v.push(format!(
            "the trace records no completion times: iodepth={} is a default, not the trace's depth",
            j.jobs.iter().map(|s| s.iodepth).sum::<u32>()
        ));
    }
    if j.sequential {
        v.push(format!(
            "{} of the requests are sequential: the job is sequential, without the trace's hot set",
            pct(p.sequential_fraction)
        ));
    }
    v
}

/// The `filename=` of an emitted job, to be replaced: a test file in the working directory.
pub const PLACEHOLDER_TARGET: &str = "diskmeter.test";

/// The fio job file (diskmeter's dialect) for `p.job`: comments saying what it reproduces,
/// then `[global]` and the job sections.
pub fn profile_fio_job(p: &ProfileResult) -> String {
    let Some(j) = &p.job else { return String::new() };
    let mut out = String::new();
    let t = &p.trace;
    let _ = writeln!(
        out,
        "; written by diskmeter profile from {} ({}): {} requests over {}",
        t.path,
        t.format,
        fmt::group(p.requests),
        fmt::secs(t.span_s)
    );
    let _ = writeln!(out, "; reads are {:.2} % of reads and writes by count", p.read_fraction * 100.0);
    for o in p.ops.iter().filter(|o| o.op != "flush") {
        let _ = writeln!(out, "; {} sizes: {}", o.op, sizes_cell(o));
    }
    let h: Vec<String> =
        p.hot_set.points.iter().map(|x| format!("{:.0} % → {}", x.footprint_pct, pct(x.share))).collect();
    let _ = writeln!(
        out,
        "; hot set, share of I/O on the hottest part of the {} footprint: {}",
        fmt::bytes(p.hot_set.footprint_blocks * p.hot_set.block_bytes),
        h.join(", ")
    );
    let _ = write!(out, "; rate {} IOPS", fmt::iops(p.arrivals.mean_iops));
    match &p.depth {
        Some(d) => {
            let _ = writeln!(out, "; depth mean {:.2}, at most {} in flight", d.mean, d.max);
        }
        None => out.push_str("; no depth recorded\n"),
    }
    for n in profile_job_notes(p) {
        for l in fmt::wrap_text("; note: ", ";   ", &n, 100) {
            let _ = writeln!(out, "{l}");
        }
    }
    let run = format!(
        "diskmeter run {0} --target PATH, or fio {0} with filename= set to PATH (the job covers the first {1} \
         of PATH; a device named there is written)",
        j.path,
        fmt::bytes(j.size_bytes)
    );
    for l in fmt::wrap_text("; run: ", ";   ", &run, 100) {
        let _ = writeln!(out, "{l}");
    }
    out.push_str("\n[global]\n");
    // Without these, fio runs the job through the page cache (its defaults are direct=0 and
    // psync): the emitted job must reproduce the workload in fio as it does in diskmeter.
    out.push_str("; direct I/O with io_uring, as diskmeter runs it (fio before 3.13: ioengine=libaio)\n");
    out.push_str("direct=1\nioengine=io_uring\n");
    let _ = writeln!(out, "; the file or device to test: replace {PLACEHOLDER_TARGET} (diskmeter run: --target PATH)");
    let _ = writeln!(out, "filename={PLACEHOLDER_TARGET}");
    let _ = writeln!(out, "size={}", j.size_bytes);
    let _ = writeln!(out, "runtime={}s", j.runtime_s);
    out.push_str("time_based\n");
    if let Some(d) = &j.distribution {
        let _ = writeln!(out, "random_distribution={d}");
    }
    if let Some(f) = j.fsync {
        let _ = writeln!(out, "fsync={f}");
    }
    for s in &j.jobs {
        let _ = writeln!(out, "\n[{}]", s.name);
        let _ = writeln!(out, "rw={}", s.rw);
        if let Some(m) = s.read_pct {
            let _ = writeln!(out, "rwmixread={m}");
        }
        let _ = writeln!(out, "bs={}", s.bs);
        let _ = writeln!(out, "iodepth={}", s.iodepth);
        if let Some(r) = s.rate_iops {
            match s.read_pct {
                // fio paces each direction at its own rate: a mixed job gives both, in the mix.
                Some(m) => {
                    let reads = (r as f64 * f64::from(m) / 100.0).round() as u64;
                    let _ = writeln!(out, "rate_iops={reads},{}", r.saturating_sub(reads));
                }
                None => {
                    let _ = writeln!(out, "rate_iops={r}");
                }
            }
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use stats::profile::{
        Arrivals, CaptureDropped, CapturePartition, DepthPoint, DepthProfile, FoldedSize, HotPoint, HotSet, OpName,
        ProfileJobSection, ProfileTrace, SizeCount, CAPTURE_SCHEMA,
    };
    use stats::HostInfo;

    fn lat() -> LatSummary {
        LatSummary {
            min: 9_000,
            mean: 120_000.0,
            stddev: 50_000.0,
            p50: 81_000,
            p90: 170_000,
            p99: 3_500_000,
            p99_9: 8_000_000,
            p99_99: 10_000_000,
            max: 12_000_000,
        }
    }

    fn op(name: &str, requests: u64, bytes: u64, sizes: &[(u64, u64)]) -> OpProfile {
        OpProfile {
            op: name.into(),
            requests,
            bytes,
            fraction: requests as f64 / 10_003.0,
            byte_fraction: 0.0,
            sequential: 0.002,
            sizes: sizes.iter().map(|&(bytes, count)| SizeCount { bytes, count }).collect(),
            other_sizes: 0,
        }
    }

    fn profile_doc(job: bool, depth: bool) -> ResultDoc {
        let mut doc = ResultDoc::new("profile", "2025-01-15T10:30:00Z", HostInfo::default());
        let pts = [(1.0, 0.094), (5.0, 0.46), (10.0, 0.9), (20.0, 0.912), (50.0, 0.946), (100.0, 1.0)];
        let mut p = ProfileResult {
            trace: ProfileTrace {
                path: "capture.dmt".into(),
                format: "binary".into(),
                devices: vec!["loop0".into()],
                span_s: 3.0,
                skipped_lines: 0,
                carries_latency: depth,
                requests_with_latency: if depth { 10_003 } else { 0 },
            },
            requests: 10_003,
            bytes: 47_001_600,
            read_fraction: 0.7,
            read_byte_fraction: 0.65,
            ops: vec![
                op("read", 7_000, 32_768_000, &[(4096, 6_000), (65536, 1_000)]),
                op("write", 3_000, 14_233_600, &[(4096, 2_990), (512, 10)]),
                op("flush", 3, 0, &[(0, 3)]),
            ],
            sequential_fraction: 0.002,
            hot_set: HotSet {
                block_bytes: 4096,
                footprint_blocks: 4096,
                accesses: 25_000,
                points: pts.iter().map(|&(footprint_pct, share)| HotPoint { footprint_pct, share }).collect(),
            },
            arrivals: Arrivals {
                mean_iops: 3334.0,
                gap_ns: Some(LatSummary { p50: 250_000, p90: 700_000, p99: 1_400_000, max: 3_000_000, ..lat() }),
                out_of_order: 0,
            },
            depth: depth.then(|| DepthProfile {
                mean: 1.25,
                max: 9,
                at_arrival_p50: 1,
                at_arrival_p90: 2,
                at_arrival_p99: 5,
                series: (0..30)
                    .map(|i| DepthPoint { t_s: i as f64 * 0.1, interval_s: 0.1, mean: 1.0 + (i % 3) as f64 * 0.25 })
                    .collect(),
            }),
            latency_ns: depth.then(lat),
            job: None,
        };
        if job {
            p.job = Some(ProfileJob {
                path: "workload.fio".into(),
                size_bytes: 16 << 20,
                runtime_s: 3,
                distribution: Some("zoned:9.40/1:36.60/4:44.00/5:1.20/10:3.40/30:5.40/50".into()),
                sequential: false,
                fsync: Some(1000),
                jobs: vec![
                    ProfileJobSection {
                        name: "read-4KiB".into(),
                        rw: "randread".into(),
                        read_pct: None,
                        bs: 4096,
                        iodepth: 6,
                        rate_iops: Some(2000),
                    },
                    ProfileJobSection {
                        name: "read-64KiB".into(),
                        rw: "randread".into(),
                        read_pct: None,
                        bs: 65536,
                        iodepth: 1,
                        rate_iops: Some(333),
                    },
                    ProfileJobSection {
                        name: "write-4KiB".into(),
                        rw: "randwrite".into(),
                        read_pct: None,
                        bs: 4096,
                        iodepth: 3,
                        rate_iops: Some(1000),
                    },
                ],
                depth_from_trace: depth,
                folded: vec![FoldedSize { op: OpName::Write, bytes: 512, count: 10, into_bytes: 4096 }],
                discards_left_out: 0,
            });
        }
        doc.profile = Some(p);
        doc
    }

    #[test]
    fn human() {
        insta::assert_snapshot!(super::human(&profile_doc(true, true)));
    }

    #[test]
    fn human_without_latencies() {
        insta::assert_snapshot!(super::human(&profile_doc(false, false)));
    }

    #[test]
    fn fio_job() {
        let doc = profile_doc(true, false);
        let p = doc.profile.as_ref().unwrap();
        let text = profile_fio_job(p);
        insta::assert_snapshot!(text);
        // The job file is one diskmeter runs.
        let plan = spec::fiojob::parse_jobfile("workload.fio", &text, &spec::JobSpec::default()).unwrap();
        let jobs: Vec<&spec::JobSpec> = plan.groups.iter().flat_map(|g| &g.jobs).collect();
        assert_eq!(jobs.len(), 3);
        assert_eq!(jobs.iter().map(|j| j.bs).collect::<Vec<_>>(), [4096, 65536, 4096]);
        assert_eq!(jobs[0].rate_iops, Some(2000));
        assert_eq!(jobs[0].size, Some(16 << 20));
    }

    fn capture() -> CaptureSummary {
        CaptureSummary {
            schema: CAPTURE_SCHEMA.into(),
            version: "0.1.0".into(),
            started_at: "2025-01-15T10:30:00Z".into(),
            device: "/dev/loop0".into(),
            name: "loop0".into(),
            dev: "7:0".into(),
            partition: None,
            output: "capture.dmt".into(),
            trace_version: 2,
            duration_s: 5.0,
            cpus: 2,
            buffer_kib_per_cpu: 32768,
            requests: 280_512,
            reads: 196_012,
            writes: 84_497,
            discards: 0,
            flushes: 3,
            read_bytes: 196_012 * 4096,
            write_bytes: 84_497 * 4096,
            discard_bytes: 0,
            errors: 0,
            latency_ns: Some(lat()),
            events: 561_030,
            lost_events: 0,
            dropped: CaptureDropped {
                issued_before_start: 2,
                in_flight_at_end: 0,
                requeued: 0,
                no_completion: 0,
                other_ops: 0,
            },
            interrupted: false,
        }
    }

    #[test]
    fn capture_summary() {
        insta::assert_snapshot!(capture_text(&capture()));
    }

    #[test]
    fn capture_summary_with_losses_on_a_partition() {
        let mut c = capture();
        c.device = "/dev/sdb2".into();
        c.name = "sdb2".into();
        c.dev = "8:18".into();
        c.partition = Some(CapturePartition { disk: "sdb".into(), start_bytes: 1 << 20, size_bytes: 8 << 30 });
        c.lost_events = 1234;
        c.errors = 2;
        insta::assert_snapshot!(capture_text(&c));
        let j = capture_json(&c).unwrap();
        assert!(j.contains("\"schema\": \"diskmeter.capture.v1\"") && j.contains("\"lost_events\": 1234"), "{j}");
        assert_eq!(serde_json::from_str::<CaptureSummary>(&j).unwrap(), c);
    }
}
