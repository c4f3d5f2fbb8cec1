//! Merging the documents of several ranks (or hosts) into one: exact, because every rank's
//! latencies travel as histograms and histograms add. Used by rank 0 under `mpirun` and by
//! `diskmeter merge`, so both give the same figures for the same documents.
//!
//! - IOPS, MB/s and queue depth are sums over the ranks.
//! - Latency percentiles are those of the union of the ranks' histograms, never averages of
//!   percentiles; the mean is weighted by operations (the union's mean), the maximum is the
//!   largest.
//! - The timeline lines the ranks' one-second intervals up on the wall clock: each interval
//!   goes to the whole second (since the earliest start) nearest to its end.
//! - The stonewall window is the one in which every rank was measuring: from the latest
//!   start to the earliest end.

use crate::{Error, Result};
use stats::{
    codes, Aggregate, ClusterJob, ClusterResult, ClusterSource, DirStats, Histograms, HostFigures, JobResult, LatHist,
    PassResult, RankInfo, ResultDoc, SeriesPoint, Stonewall, TimelinePoint,
};

/// A rank's IOPS this far from the median of the ranks (as a fraction of it) is an imbalance.
pub const IMBALANCE_FRACTION: f64 = 0.20;
/// Starts further apart than this fraction of the measured window are a start skew.
pub const SKEW_FRACTION: f64 = 0.02;

/// One rank's document and what it is called in messages (`rank 2`, or a file name).
pub struct Part {
    pub label: String,
    pub doc: ResultDoc,
}

/// How the documents came together, and what the user said about shared targets.
#[derive(Debug, Clone, Copy)]
pub struct MergeOptions {
    pub source: ClusterSource,
    /// The ranks share one target on purpose (`--shared`): no `shared-target` warning.
    pub shared: bool,
}

/// Merge the ranks' documents, in rank order. Refuses documents of different workloads or
/// without histograms (one line, `Error::Usage`).
pub fn merge(parts: &[Part], o: MergeOptions) -> Result<ResultDoc> {
    let first = parts.first().ok_or_else(|| Error::usage("nothing to merge: give two or more result files"))?;
    // Ranks that failed before they had a result are listed, not merged.
    let jobs_n = parts.iter().map(|p| p.doc.results.len()).max().unwrap_or(0);
    let full: Vec<(u32, &Part)> =
        parts.iter().enumerate().filter(|(_, p)| p.doc.results.len() == jobs_n).map(|(i, p)| (i as u32, p)).collect();
    let lead = full.first().map_or(first, |(_, p)| p);
    check_same_workload(&full)?;
    let mut doc = ResultDoc::new(lead.doc.command.clone(), earliest_start(parts), lead.doc.host.clone());
    doc.target = lead.doc.target.clone();
    let mut jobs = Vec::new();
    for j in 0..jobs_n {
        let rs: Vec<&JobResult> = full.iter().map(|(_, p)| &p.doc.results[j]).collect();
        let labels: Vec<&str> = full.iter().map(|(_, p)| p.label.as_str()).collect();
        // The per-second histograms are decoded once, for the merged series and the timeline.
        let (series, timeline) =
            if rs[0].passes.is_empty() { per_second(&rs, &labels)?.unwrap_or_default() } else { Default::default() };
        doc.results.push(merge_job(&rs, &labels, series)?);
        jobs.push(cluster_job(&rs, &full, timeline));
    }
    let ranks: Vec<RankInfo> = parts.iter().enumerate().map(|(i, p)| rank_info(i, p)).collect();
    let failed_rank = ranks
        .iter()
        .find(|r| r.error.as_ref().is_some_and(|e| e.kind != "interrupted" && e.kind != STOPPED))
        .map(|r| r.rank);
    doc.partial = parts.iter().any(|p| p.doc.partial) || full.len() < parts.len();
    doc.error = match failed_rank {
        Some(r) => ranks[r as usize].error.clone().map(|mut e| {
            e.message = format!("{} ({}) failed: {}", parts[r as usize].label, ranks[r as usize].host, e.message);
            e
        }),
        None => parts.iter().find_map(|p| p.doc.error.clone().filter(|e| e.kind != STOPPED)),
    };
    let mut cluster = ClusterResult { source: o.source, ranks, jobs, failed_rank };
    warn(&mut doc, &mut cluster, parts, o);
    let shared_device = shares_a_device(parts);
    for p in parts {
        for w in &p.doc.warnings {
            // Several ranks on one device each see all of their I/O in its counters.
            if shared_device && DEVICE_CODES.contains(&w.code.as_str()) {
                continue;
            }
            if !doc.warnings.iter().any(|x| x.code == w.code) {
                doc.warnings.push(stats::Warning::new(&w.code, format!("{}: {}", p.label, w.message)));
            }
        }
    }
    doc.cluster = Some(cluster);
    Ok(doc)
}

/// Findings from the device's own counters, which hold every rank's I/O when ranks share it.
const DEVICE_CODES: [&str; 5] =
    [codes::SPLIT_IO, codes::MERGED_IO, codes::DEVICE_SAW_LESS, codes::DEVICE_SAW_MORE, codes::FOREIGN_IO];

/// Two ranks on the same host reach the same device.
fn shares_a_device(parts: &[Part]) -> bool {
    let mut seen = std::collections::BTreeSet::new();
    parts.iter().any(|p| {
        let dev = p.doc.target.as_ref().and_then(|t| t.device.clone());
        dev.is_some() && !seen.insert((p.doc.host.hostname.clone(), dev))
    })
}

/// The error kind of a rank that stopped because another rank failed.
pub const STOPPED: &str = "stopped";

fn earliest_start(parts: &[Part]) -> String {
    parts.iter().map(|p| p.doc.started_at.clone()).min().unwrap_or_default()
}

/// The workload, without what may differ between hosts (target, region, seed, name).
fn shape(j: &JobResult) -> String {
    let s = &j.spec;
    format!(
        "{} {} bs {} qd {} threads {} mix {} runtime {:?} ramp {:?} engine {} rate {:?} direct {}",
        j.name,
        s.rw.name(),
        s.bs,
        s.qd,
        s.threads,
        s.mix,
        s.runtime,
        s.ramp,
        s.engine.name(),
        s.rate_iops,
        s.direct
    )
}

fn check_same_workload(parts: &[(u32, &Part)]) -> Result<()> {
    let Some((_, first)) = parts.first() else { return Ok(()) };
    for (_, p) in &parts[1..] {
        if p.doc.command != first.doc.command {
            return Err(Error::usage(format!(
                "cannot merge results of different commands: {} is `{}`, {} is `{}`",
                first.label, first.doc.command, p.label, p.doc.command
            )));
        }
        let a: Vec<String> = first.doc.results.iter().map(shape).collect();
        let b: Vec<String> = p.doc.results.iter().map(shape).collect();
        if a.len() != b.len() {
            return Err(Error::usage(format!(
                "cannot merge results of different workloads: {} has {} jobs, {} has {}",
                first.label,
                a.len(),
                p.label,
                b.len()
            )));
        }
        if let Some((x, y)) = a.iter().zip(&b).find(|(x, y)| x != y) {
            return Err(Error::usage(format!(
                "cannot merge results of different workloads: {} ran `{x}`, {} ran `{y}`",
                first.label, p.label
            )));
        }
    }
    Ok(())
}

fn decode(text: &Option<String>, label: &str) -> Result<LatHist> {
    match text {
        None => Ok(LatHist::new()),
        Some(t) => LatHist::from_base64_v2(t)
            .map_err(|e| Error::usage(format!("{label}: its latency histogram cannot be read ({e})"))),
    }
}

fn hists<'a>(h: Option<&'a Histograms>, label: &str, job: &str) -> Result<&'a Histograms> {
    h.ok_or_else(|| {
        Error::usage(format!(
            "{label} has no latency histograms for `{job}`, so its percentiles cannot be merged exactly; \
             rerun it with --histograms"
        ))
    })
}

/// Sum of the ranks' figures for one direction; `None` when no rank has it.
fn merge_dir(dirs: &[Option<&DirStats>], hist: &LatHist) -> Option<DirStats> {
    let present: Vec<&DirStats> = dirs.iter().flatten().copied().collect();
    if present.is_empty() {
        return None;
    }
    let ops = present.iter().map(|d| d.ops).sum();
    let bytes = present.iter().map(|d| d.bytes).sum();
    let seconds = present.iter().map(|d| d.seconds).fold(0.0, f64::max);
    let qd = present.iter().map(|d| d.qd_mean).sum();
    let mut m = DirStats::new(ops, bytes, seconds, hist, qd);
    m.iops = present.iter().map(|d| d.iops).sum();
    m.mb_s = present.iter().map(|d| d.mb_s).sum();
    m.mib_s = present.iter().map(|d| d.mib_s).sum();
    Some(m)
}

/// The union of the ranks' histograms of one direction.
fn union<'a>(hs: impl Iterator<Item = (&'a Option<String>, &'a str)>) -> Result<LatHist> {
    let mut u = LatHist::new();
    for (h, label) in hs {
        u.add(&decode(h, label)?);
    }
    Ok(u)
}

fn merge_job(rs: &[&JobResult], labels: &[&str], series: Vec<SeriesPoint>) -> Result<JobResult> {
    let mut m = JobResult::new(rs[0].spec.clone());
    m.name = rs[0].name.clone();
    m.fsyncs = rs.iter().map(|r| r.fsyncs).sum();
    m.error = rs.iter().find_map(|r| r.error.clone());
    if !rs[0].passes.is_empty() {
        let n = rs.iter().map(|r| r.passes.len()).min().unwrap_or(0);
        let mut passes = Vec::with_capacity(n);
        for p in 0..n {
            let mut hs = Vec::new();
            for (r, l) in rs.iter().zip(labels) {
                hs.push((hists(r.passes[p].histograms.as_ref(), l, &r.name)?, *l));
            }
            let rh = union(hs.iter().map(|(h, l)| (&h.read, *l)))?;
            let wh = union(hs.iter().map(|(h, l)| (&h.write, *l)))?;
            let reads: Vec<Option<&DirStats>> = rs.iter().map(|r| r.passes[p].read.as_ref()).collect();
            let writes: Vec<Option<&DirStats>> = rs.iter().map(|r| r.passes[p].write.as_ref()).collect();
            passes.push(PassResult {
                pass: rs[0].passes[p].pass,
                read: merge_dir(&reads, &rh),
                write: merge_dir(&writes, &wh),
                histograms: None,
                whole_bursts: Vec::new(),
            });
        }
        m.set_passes(passes, rs[0].aggregate.unwrap_or(Aggregate::Max));
        return Ok(m);
    }
    let mut hs = Vec::new();
    for (r, l) in rs.iter().zip(labels) {
        hs.push((hists(r.histograms.as_ref(), l, &r.name)?, *l));
    }
    let rh = union(hs.iter().map(|(h, l)| (&h.read, *l)))?;
    let wh = union(hs.iter().map(|(h, l)| (&h.write, *l)))?;
    let reads: Vec<Option<&DirStats>> = rs.iter().map(|r| r.read.as_ref()).collect();
    let writes: Vec<Option<&DirStats>> = rs.iter().map(|r| r.write.as_ref()).collect();
    m.read = merge_dir(&reads, &rh);
    m.write = merge_dir(&writes, &wh);
    m.series = series;
    m.histograms = Some(Histograms { read: rh.encoded(), write: wh.encoded(), series: Vec::new() });
    Ok(m)
}

/// The ranks' one-second intervals on one clock: each goes to the whole second (since the
/// earliest start) nearest to its end. Per second: summed rates, and the latency figures of
/// the union of that second's histograms per direction; and the timeline (both directions
/// together). `None` when a document has no wall-clock window.
fn per_second(rs: &[&JobResult], labels: &[&str]) -> Result<Option<(Vec<SeriesPoint>, Vec<TimelinePoint>)>> {
    let starts: Vec<f64> = rs.iter().filter_map(|r| r.window.map(|w| w.start_unix_ns as f64 / 1e9)).collect();
    if starts.len() != rs.len() || starts.is_empty() {
        return Ok(None);
    }
    let t0 = starts.iter().copied().fold(f64::INFINITY, f64::min);
    // Per bucket: rates, read union, write union, ranks.
    let mut acc: Vec<(SeriesPoint, LatHist, LatHist, u32)> = Vec::new();
    for (r, l) in rs.iter().zip(labels) {
        let ih = r.histograms.as_ref().map(|h| &h.series);
        for (i, p) in r.series.iter().enumerate() {
            let Some(end) = p.unix_s else { continue };
            let k = ((end - t0).round().max(1.0)) as usize;
            while acc.len() < k {
                acc.push((SeriesPoint::default(), LatHist::new(), LatHist::new(), 0));
            }
            let (pt, rh, wh, n) = &mut acc[k - 1];
            pt.read_iops += p.read_iops;
            pt.read_mb_s += p.read_mb_s;
            pt.write_iops += p.write_iops;
            pt.write_mb_s += p.write_mb_s;
            *n += 1;
            if let Some(ih) = ih.and_then(|v| v.get(i)) {
                rh.add(&decode(&ih.read, l)?);
                wh.add(&decode(&ih.write, l)?);
            }
        }
    }
    let mut series = Vec::new();
    let mut timeline = Vec::new();
    for (k, (mut pt, rh, wh, n)) in acc.into_iter().enumerate() {
        if n == 0 {
            continue;
        }
        let t = (k + 1) as f64;
        pt.t_s = t;
        pt.unix_s = Some(t0 + t);
        pt.read_lat_mean_ns = rh.mean();
        pt.read_lat_p99_ns = rh.quantile(0.99);
        pt.write_lat_mean_ns = wh.mean();
        pt.write_lat_p99_ns = wh.quantile(0.99);
        let mut all = rh.clone();
        all.add(&wh);
        timeline.push(TimelinePoint {
            t_s: t,
            unix_s: t0 + t,
            iops: pt.read_iops + pt.write_iops,
            mb_s: pt.read_mb_s + pt.write_mb_s,
            lat_p99_ns: all.quantile(0.99),
            ranks: n,
        });
        series.push(pt);
    }
    Ok(Some((series, timeline)))
}

/// One rank's headline figures for a job: both directions together.
fn host_figures(rank: u32, host: &str, r: &JobResult, label: &str) -> HostFigures {
    let dirs: Vec<&DirStats> = [r.read.as_ref(), r.write.as_ref()].into_iter().flatten().collect();
    let ops: u64 = dirs.iter().map(|d| d.ops).sum();
    let mean = if ops > 0 { dirs.iter().map(|d| d.lat_ns.mean * d.ops as f64).sum::<f64>() / ops as f64 } else { 0.0 };
    // p99 of both directions together, from the histograms when the document has them.
    let p99 = r
        .histograms
        .as_ref()
        .and_then(|h| {
            let mut u = decode(&h.read, label).ok()?;
            u.add(&decode(&h.write, label).ok()?);
            Some(u.quantile(0.99))
        })
        .unwrap_or_else(|| dirs.iter().map(|d| d.lat_ns.p99).max().unwrap_or(0));
    HostFigures {
        rank,
        host: host.to_string(),
        iops: dirs.iter().map(|d| d.iops).sum(),
        mb_s: dirs.iter().map(|d| d.mb_s).sum(),
        lat_mean_ns: mean,
        lat_p99_ns: p99,
        lat_max_ns: dirs.iter().map(|d| d.lat_ns.max).max().unwrap_or(0),
        qd_mean: dirs.iter().map(|d| d.qd_mean).sum(),
        seconds: dirs.iter().map(|d| d.seconds).fold(0.0, f64::max),
        start_unix_ns: r.window.map_or(0, |w| w.start_unix_ns),
        start_offset_s: r.window.and_then(|w| w.start_offset_s),
    }
}

fn host_name(doc: &ResultDoc) -> String {
    doc.host.hostname.clone().unwrap_or_else(|| "?".into())
}

fn cluster_job(rs: &[&JobResult], parts: &[(u32, &Part)], timeline: Vec<TimelinePoint>) -> ClusterJob {
    let hosts: Vec<HostFigures> =
        rs.iter().zip(parts).map(|(r, (i, p))| host_figures(*i, &host_name(&p.doc), r, &p.label)).collect();
    let slowest_rank = hosts.iter().min_by(|a, b| a.iops.total_cmp(&b.iops)).map(|h| h.rank);
    let windows: Vec<(f64, f64)> = rs
        .iter()
        .filter_map(|r| r.window.map(|w| (w.start_unix_ns as f64 / 1e9, w.end_unix_ns as f64 / 1e9)))
        .collect();
    let start_skew_s = if windows.len() == rs.len() && !windows.is_empty() {
        let lo = windows.iter().map(|w| w.0).fold(f64::INFINITY, f64::min);
        let hi = windows.iter().map(|w| w.0).fold(f64::NEG_INFINITY, f64::max);
        hi - lo
    } else {
        0.0
    };
    ClusterJob {
        name: rs[0].name.clone(),
        stonewall: stonewall(rs, &windows),
        hosts,
        slowest_rank,
        start_skew_s,
        timeline,
    }
}

/// Figures of the window in which every rank was measuring, from each rank's one-second
/// series (an interval that straddles an edge counts in proportion).
fn stonewall(rs: &[&JobResult], windows: &[(f64, f64)]) -> Option<Stonewall> {
    if windows.len() != rs.len() || windows.is_empty() {
        return None;
    }
    let s = windows.iter().map(|w| w.0).fold(f64::NEG_INFINITY, f64::max);
    let e = windows.iter().map(|w| w.1).fold(f64::INFINITY, f64::min);
    if e <= s {
        return None;
    }
    let (mut ops, mut mb) = (0.0, 0.0);
    for r in rs {
        let mut prev_end: Option<f64> = r.window.map(|w| w.start_unix_ns as f64 / 1e9);
        for p in &r.series {
            let (Some(end), Some(begin)) = (p.unix_s, prev_end) else { continue };
            let len = end - begin;
            prev_end = Some(end);
            if len <= 0.0 {
                continue;
            }
            let overlap = (end.min(e) - begin.max(s)).max(0.0);
            ops += (p.read_iops + p.write_iops) * overlap;
            mb += (p.read_mb_s + p.write_mb_s) * overlap;
        }
    }
    let secs = e - s;
    Some(Stonewall { seconds: secs, iops: ops / secs, mb_s: mb / secs })
}

fn rank_info(i: usize, p: &Part) -> RankInfo {
    let target = p.doc.target.as_ref().map(|t| t.path.clone());
    let error = p.doc.error.clone().or_else(|| p.doc.results.iter().find_map(|r| r.error.clone()));
    RankInfo {
        rank: i as u32,
        host: host_name(&p.doc),
        target,
        started_at: p.doc.started_at.clone(),
        partial: p.doc.partial,
        error,
    }
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

/// `host-imbalance`, `start-skew`, `shared-target`, and (for `merge`) `window-mismatch`.
fn warn(doc: &mut ResultDoc, c: &mut ClusterResult, parts: &[Part], o: MergeOptions) {
    for j in &c.jobs {
        let mut iops: Vec<f64> = j.hosts.iter().map(|h| h.iops).collect();
        let med = median(&mut iops);
        if med > 0.0 && j.hosts.len() > 2 {
            if let Some(h) = j.hosts.iter().max_by(|a, b| (a.iops - med).abs().total_cmp(&(b.iops - med).abs())) {
                let off = (h.iops - med) / med;
                if off.abs() > IMBALANCE_FRACTION {
                    doc.warn(
                        codes::HOST_IMBALANCE,
                        format!(
                            "{}: {} (rank {}) did {:.0} IOPS, {:+.0}% from the median of the ranks ({:.0}): the \
                             merged figure hides an uneven share",
                            j.name,
                            h.host,
                            h.rank,
                            h.iops,
                            off * 100.0,
                            med
                        ),
                    );
                }
            }
        }
        let window = j.hosts.iter().map(|h| h.seconds).fold(0.0, f64::max);
        if window > 0.0 && j.start_skew_s > SKEW_FRACTION * window {
            doc.warn(
                codes::START_SKEW,
                format!(
                    "{}: the ranks' measured windows started {:.3} s apart, {:.1}% of the {:.1} s window (limit {:.0}%): \
                     the sums count ranks that were not running together",
                    j.name,
                    j.start_skew_s,
                    j.start_skew_s / window * 100.0,
                    window,
                    SKEW_FRACTION * 100.0
                ),
            );
        }
        if o.source == ClusterSource::Merge {
            if let Some(sw) = j.stonewall {
                if window > 0.0 && sw.seconds < 0.9 * window {
                    doc.warn(
                        codes::WINDOW_MISMATCH,
                        format!(
                            "{}: the documents measured together for only {:.1} s of {:.1} s: their clocks or start \
                             times disagree (start them with --start-at)",
                            j.name, sw.seconds, window
                        ),
                    );
                }
            } else {
                doc.warn(
                    codes::WINDOW_MISMATCH,
                    format!(
                        "{}: the documents' measured windows do not overlap (or have no wall-clock times): they did \
                         not run together",
                        j.name
                    ),
                );
            }
        }
    }
    if !o.shared {
        shared_targets(doc, c, parts);
    }
}

/// Two ranks on one file (the same path) or one device (the same device on the same host).
fn shared_targets(doc: &mut ResultDoc, c: &ClusterResult, parts: &[Part]) {
    for (i, a) in parts.iter().enumerate() {
        for (k, b) in parts.iter().enumerate().skip(i + 1) {
            let (Some(ta), Some(tb)) = (&a.doc.target, &b.doc.target) else { continue };
            if ta.kind == stats::TargetKind::Null || tb.kind == stats::TargetKind::Null {
                continue;
            }
            let same_path = ta.path == tb.path;
            let same_dev = ta.kind == stats::TargetKind::Block
                && ta.device.is_some()
                && ta.device == tb.device
                && c.ranks[i].host == c.ranks[k].host;
            if same_path || same_dev {
                doc.warn(
                    codes::SHARED_TARGET,
                    format!(
                        "{} and {} measured the same target ({}): they share its bandwidth and cache; give each rank \
                         its own (`{{rank}}` in the path) or say --shared if that is the test",
                        a.label, b.label, ta.path
                    ),
                );
                return;
            }
        }
    }
}
