//! `profile --emit-job`: a job in diskmeter's fio dialect that reproduces a profiled workload —
//! its read/write mix, block sizes, hot-set curve, rate and depth — as far as the dialect can
//! say it. Pure: a [`ProfileResult`] in, a [`ProfileJob`] out (report renders it as a file).
//!
//! - One block size per direction, the same for both (or one direction only): one job,
//!   `rw=randrw` with `rwmixread=` the trace's read share by count, rounded to a whole
//!   percent — the mix and the size are exact.
//! - Otherwise (the dialect has no `bssplit`, and one `bs` per job): one job per direction
//!   and size, run together, each with its share of the rate (`rate_iops`), so sizes and mix
//!   come out in the trace's proportions as long as the target keeps up with the rate. Sizes
//!   beyond the [`MAX_SIZES`] most frequent of a direction (or beyond 99 % of its requests)
//!   are folded into its most frequent one, and listed.
//! - The hot set: `random_distribution=zoned:…` with one zone per step of the hot-set curve
//!   (1, 4, 5, 10, 30 and 50 % of the area), each getting the share of I/O the trace put on
//!   that slice of its footprint, in whole percents as fio requires; `size=` is the footprint.
//! - `rate_iops=` is the trace's mean rate of reads and writes (a mixed job writes it per direction,
//!   `rate_iops=R,W`, as fio paces each direction at its own rate); `iodepth=` its largest
//!   number of requests in flight + 1 where it recorded latencies, else [`DEFAULT_DEPTH`].
//! - `rw=read|write|readwrite` instead when at least [`SEQUENTIAL`] of the requests are
//!   sequential (then no distribution).
//! - Flushes become `fsync=N` (the trace's writes per flush); discards are left out.

use stats::profile::{FoldedSize, OpName, OpProfile, ProfileJob, ProfileJobSection, ProfileResult};

/// Sizes given a job of their own per direction.
pub const MAX_SIZES: usize = 4;
/// Share of a direction's requests its own-job sizes must cover before the rest is folded.
pub const SIZE_COVERAGE: f64 = 0.99;
/// `iodepth` when the trace recorded no latencies.
pub const DEFAULT_DEPTH: u32 = 32;
/// Largest `iodepth` written.
pub const MAX_DEPTH: u64 = 1024;
/// Sequential share from which the job is sequential.
pub const SEQUENTIAL: f64 = 0.9;
/// diskmeter's largest block size (`spec`'s limit).
const MAX_BS: u64 = 256 << 20;

/// A direction's sizes: those given their own job (with their counts, folded ones added to
/// the first), and those folded.
fn sizes_of(op: &OpProfile, name: OpName, folded: &mut Vec<FoldedSize>) -> Vec<(u64, u64)> {
    let mut kept: Vec<(u64, u64)> = Vec::new();
    let mut covered = 0u64;
    let mut fold = 0u64;
    // A size diskmeter can issue: a multiple of 512 bytes, at most 256 MiB.
    let issuable = |b: u64| b.max(1).next_multiple_of(512).min(MAX_BS);
    for s in &op.sizes {
        let full = (covered as f64) >= SIZE_COVERAGE * op.requests as f64;
        let to = issuable(s.bytes);
        if !full && kept.len() < MAX_SIZES {
            if to != s.bytes {
                folded.push(FoldedSize { op: name, bytes: s.bytes, count: s.count, into_bytes: to });
            }
            match kept.iter_mut().find(|(b, _)| *b == to) {
                Some(k) => k.1 += s.count,
                None => kept.push((to, s.count)),
            }
            covered += s.count;
        } else {
            fold += s.count;
            if let Some(&(into, _)) = kept.first() {
                folded.push(FoldedSize { op: name, bytes: s.bytes, count: s.count, into_bytes: into });
            }
        }
    }
    if op.other_sizes > 0 {
        fold += op.other_sizes;
        if let Some(&(into, _)) = kept.first() {
            // Sizes beyond the listed ones: named by their count only (bytes 0).
            folded.push(FoldedSize { op: name, bytes: 0, count: op.other_sizes, into_bytes: into });
        }
    }
    if let Some(first) = kept.first_mut() {
        first.1 += fold;
    }
    kept
}

/// The zoned distribution that gives each slice of the area the share of I/O the trace put
/// on the same slice of its footprint, hottest first.
pub fn zoned(p: &ProfileResult) -> Option<String> {
    let pts = &p.hot_set.points;
    if pts.is_empty() || p.hot_set.accesses == 0 {
        return None;
    }
    // Whole percents, as fio reads them (it drops the fraction of `9.40/1`, then refuses the
    // zones for not adding up to 100). Cumulative shares rounded, the last exactly 100: the
    // zones' shares (their differences) are then ≥ 0 and add up to exactly 100.
    let mut zones = Vec::new();
    let (mut prev_cum, mut prev_pct) = (0i64, 0.0f64);
    for (i, h) in pts.iter().enumerate() {
        let cum = if i + 1 == pts.len() { 100 } else { (h.share * 100.0).round() as i64 };
        let cum = cum.clamp(prev_cum, 100);
        let ops = cum - prev_cum;
        let area = h.footprint_pct - prev_pct;
        if area > 0.0 {
            zones.push(format!("{ops}/{}", trim(area)));
        }
        prev_cum = cum;
        prev_pct = h.footprint_pct;
    }
    Some(format!("zoned:{}", zones.join(":")))
}

fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// Designs the job; `None` when the trace has no reads or writes.
pub fn design(p: &ProfileResult, path: &str) -> Option<ProfileJob> {
    let op = |name: &str| p.ops.iter().find(|o| o.op == name);
    let reads = op("read").map_or(0, |o| o.requests);
    let writes = op("write").map_or(0, |o| o.requests);
    let data = reads + writes;
    if data == 0 {
        return None;
    }
    let mut folded = Vec::new();
    let rsizes = op("read").map(|o| sizes_of(o, OpName::Read, &mut folded)).unwrap_or_default();
    let wsizes = op("write").map(|o| sizes_of(o, OpName::Write, &mut folded)).unwrap_or_default();
    let largest = rsizes.iter().chain(&wsizes).map(|s| s.0).max().unwrap_or(4096);

    let sequential = p.sequential_fraction >= SEQUENTIAL;
    let span = p.trace.span_s;
    let rate = if span > 0.0 { ((data.saturating_sub(1)) as f64 / span).round().max(1.0) as u64 } else { 0 };
    let (depth, depth_from_trace) = match &p.depth {
        Some(d) => ((d.max + 1).clamp(1, MAX_DEPTH), true),
        None => (u64::from(DEFAULT_DEPTH), false),
    };
    let rw = |read: bool, mixed: bool| -> String {
        match (sequential, mixed, read) {
            (false, true, _) => "randrw",
            (false, false, true) => "randread",
            (false, false, false) => "randwrite",
            (true, true, _) => "readwrite",
            (true, false, true) => "read",
            (true, false, false) => "write",
        }
        .to_string()
    };
    let single = rsizes.len() <= 1
        && wsizes.len() <= 1
        && (reads == 0 || writes == 0 || rsizes.first().map(|s| s.0) == wsizes.first().map(|s| s.0));
    let jobs = if single {
        let bs = rsizes.first().or(wsizes.first()).map_or(4096, |s| s.0);
        let mixed = reads > 0 && writes > 0;
        let read_pct = mixed.then(|| ((reads as f64 * 100.0 / data as f64).round() as u8).clamp(1, 99));
        vec![ProfileJobSection {
            name: "trace".into(),
            rw: rw(reads > 0, mixed),
            read_pct,
            bs,
            iodepth: depth as u32,
            rate_iops: (rate > 0).then_some(rate),
        }]
    } else {
        let mut jobs = Vec::new();
        for (read, sizes) in [(true, &rsizes), (false, &wsizes)] {
            for &(bs, count) in sizes {
                let share = count as f64 / data as f64;
                jobs.push(ProfileJobSection {
                    name: format!(
                        "{}-{}",
                        if read { "read" } else { "write" },
                        spec::units::format_size(bs).replace(' ', "")
                    ),
                    rw: rw(read, false),
                    read_pct: None,
                    bs,
                    iodepth: ((depth as f64 * share).round() as u32).max(1),
                    rate_iops: (rate > 0).then(|| ((rate as f64 * share).round() as u64).max(1)),
                });
            }
        }
        jobs
    };
    let footprint = p.hot_set.footprint_blocks * p.hot_set.block_bytes;
    let flushes = op("flush").map_or(0, |o| o.requests);
    Some(ProfileJob {
        path: path.to_string(),
        size_bytes: footprint.max(largest).next_multiple_of(largest),
        runtime_s: (span.ceil() as u64).max(1),
        distribution: if sequential { None } else { zoned(p) },
        sequential,
        fsync: (flushes > 0 && writes > 0).then(|| ((writes as f64 / flushes as f64).round() as u64).max(1)),
        jobs,
        depth_from_trace,
        folded,
        discards_left_out: op("discard").map_or(0, |o| o.requests),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use stats::profile::{DepthProfile, HotPoint, HotSet, ProfileTrace, SizeCount};

    fn op(name: &str, sizes: &[(u64, u64)]) -> OpProfile {
        OpProfile {
            op: name.into(),
            requests: sizes.iter().map(|s| s.1).sum(),
            sizes: sizes.iter().map(|&(bytes, count)| SizeCount { bytes, count }).collect(),
            ..OpProfile::default()
        }
    }

    fn profile(ops: Vec<OpProfile>) -> ProfileResult {
        let pts = [(1.0, 0.09), (5.0, 0.45), (10.0, 0.9), (20.0, 0.911), (50.0, 0.944), (100.0, 1.0)];
        ProfileResult {
            trace: ProfileTrace { span_s: 10.0, ..ProfileTrace::default() },
            ops,
            hot_set: HotSet {
                block_bytes: 4096,
                footprint_blocks: 1000,
                accesses: 10_000,
                points: pts.iter().map(|&(footprint_pct, share)| HotPoint { footprint_pct, share }).collect(),
            },
            depth: Some(DepthProfile { max: 7, ..DepthProfile::default() }),
            ..ProfileResult::default()
        }
    }

    #[test]
    fn one_size_one_job_with_the_exact_mix() {
        let p = profile(vec![op("read", &[(4096, 7001)]), op("write", &[(4096, 2999)])]);
        let j = design(&p, "job.fio").unwrap();
        assert_eq!(j.jobs.len(), 1);
        let s = &j.jobs[0];
        assert_eq!(
            (s.rw.as_str(), s.read_pct, s.bs, s.iodepth, s.rate_iops),
            ("randrw", Some(70), 4096, 8, Some(1000))
        );
        assert_eq!(j.size_bytes, 4096 * 1000);
        assert_eq!(j.runtime_s, 10);
        assert_eq!(j.distribution.as_deref(), Some("zoned:9/1:36/4:45/5:1/10:3/30:6/50"));
        assert!(j.folded.is_empty() && j.depth_from_trace);
    }

    #[test]
    fn the_zones_parse_and_add_up() {
        let p = profile(vec![op("read", &[(4096, 10)])]);
        let d = zoned(&p).unwrap();
        assert!(spec::units::parse_distribution("random_distribution", &d).is_ok(), "{d}");
        // A flat curve with rounding noise still adds up to 100.
        let mut p = p;
        for (h, s) in p.hot_set.points.iter_mut().zip([0.012345, 0.05, 0.1, 0.2, 0.5, 1.0]) {
            h.share = s;
        }
        let d = zoned(&p).unwrap();
        assert_eq!(d, "zoned:1/1:4/4:5/5:10/10:30/30:50/50");
        assert!(spec::units::parse_distribution("random_distribution", &d).is_ok());
    }

    #[test]
    fn several_sizes_several_jobs_by_rate() {
        let p = profile(vec![op("read", &[(4096, 5000), (65536, 2000), (1000, 3)]), op("write", &[(8192, 2997)])]);
        let j = design(&p, "job.fio").unwrap();
        let got: Vec<(&str, &str, u64, Option<u64>)> =
            j.jobs.iter().map(|s| (s.name.as_str(), s.rw.as_str(), s.bs, s.rate_iops)).collect();
        assert_eq!(
            got,
            [
                ("read-4KiB", "randread", 4096, Some(500)),
                ("read-64KiB", "randread", 65536, Some(200)),
                ("write-8KiB", "randwrite", 8192, Some(300)),
            ]
        );
        // 3 requests of 1000 B (beyond 99 % of the reads) are folded into 4 KiB.
        assert_eq!(j.folded, [FoldedSize { op: OpName::Read, bytes: 1000, count: 3, into_bytes: 4096 }]);
        assert_eq!(j.size_bytes, (4096 * 1000u64).next_multiple_of(65536));
    }

    #[test]
    fn sequential_flushes_discards_and_no_depth() {
        let mut p =
            profile(vec![op("write", &[(131072, 1000)]), op("flush", &[(0, 10)]), op("discard", &[(1 << 20, 4)])]);
        p.sequential_fraction = 0.95;
        p.depth = None;
        let j = design(&p, "job.fio").unwrap();
        assert_eq!((j.jobs[0].rw.as_str(), j.jobs[0].iodepth), ("write", DEFAULT_DEPTH));
        assert_eq!((j.sequential, j.distribution.is_none(), j.fsync, j.discards_left_out), (true, true, Some(100), 4));
        assert!(design(&profile(vec![op("flush", &[(0, 3)])]), "x").is_none());
    }
}
