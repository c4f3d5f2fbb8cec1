//! A group's results: per report slot, the merged latencies, rates, queue depth, series,
//! CPU use and error, and what the device's own counters saw meanwhile.

use super::collect::{fault_info, Collector, Slot, Snapshot};
use super::job::BoundJob;
use crate::io::worker::{WorkerEnd, SEC};
use crate::target::devview;
use stats::{BsCount, CpuUsage, DirStats, ErrorInfo, Histograms, JobResult, MeasuredWindow, SeriesPoint};
use std::collections::BTreeMap;
use std::time::Duration;

/// The process's user and system CPU time so far (µs).
pub(super) fn rusage_self() -> (u64, u64) {
    platform::cpu::process_times_us()
}

/// The process's CPU time over a run.
pub(super) struct CpuTimes {
    ru0: (u64, u64),
    ru1: (u64, u64),
    wall_us: f64,
}

impl CpuTimes {
    /// From `ru0` (taken before the workers started) to now, over `wall` of run time.
    pub(super) fn since(ru0: (u64, u64), wall: Duration) -> Self {
        Self { ru0, ru1: rusage_self(), wall_us: wall.as_micros().max(1) as f64 }
    }

    /// The process's share of the wall time, and the busiest worker's (leaving out the time
    /// it polled an empty ring, which is waiting, not work).
    fn usage(&self, ends: &[WorkerEnd]) -> CpuUsage {
        let max_worker = ends
            .iter()
            .filter(|e| e.wall_ns > 0)
            .map(|e| e.cpu_ns.saturating_sub(e.poll_idle_ns) as f64 / e.wall_ns as f64 * 100.0)
            .fold(0.0, f64::max);
        CpuUsage {
            user_pct: (self.ru1.0 - self.ru0.0) as f64 / self.wall_us * 100.0,
            sys_pct: (self.ru1.1 - self.ru0.1) as f64 / self.wall_us * 100.0,
            max_worker_pct: max_worker,
            poll_us: ends.iter().map(|e| e.poll_ns / 1000).max().unwrap_or(0),
        }
    }
}

/// One result per report slot, with the device's view attached.
pub(super) fn group_results(jobs: &[BoundJob], c: &mut Collector, cpu: &CpuTimes) -> Vec<JobResult> {
    let slots = std::mem::take(&mut c.slots);
    let mut results = Vec::with_capacity(slots.len());
    let mut windows = Vec::with_capacity(slots.len());
    for (si, mut s) in slots.into_iter().enumerate() {
        s.finalize(true, &mut c.spare, &mut |_| {});
        windows.push(burst_window(&s.ends));
        results.push(slot_result(
            jobs,
            &c.slot_map,
            si,
            s,
            cpu,
            c.error.as_ref(),
            (c.started_unix_ns, c.release_to_start),
        ));
    }
    // The device's view holds the whole window's I/Os against the device's counters over the
    // same window: it is taken before a headline is cut to whole bursts.
    attach_device_views(&mut results, jobs, &c.slot_map, c.edges.start.as_ref(), c.edges.end.as_ref());
    for (r, w) in results.iter_mut().zip(windows) {
        if let Some((a, t0)) = w {
            whole_bursts(r, &a, t0);
        }
    }
    results
}

/// The result of report slot `si` (a job, or the whole group with group reporting).
fn slot_result(
    jobs: &[BoundJob],
    slot_map: &[usize],
    si: usize,
    mut s: Slot,
    cpu: &CpuTimes,
    error: Option<&ErrorInfo>,
    (started_unix_ns, release_to_start): (u64, Duration),
) -> JobResult {
    let in_slot: Vec<usize> = (0..jobs.len()).filter(|&j| slot_map[j] == si).collect();
    let first_job = in_slot.first().copied().unwrap_or(si);
    let group_reporting = in_slot.len() > 1;
    let mut spec = jobs[first_job].spec.clone();
    spec.size = Some(jobs[first_job].region_len);
    if group_reporting {
        spec.threads = in_slot.iter().map(|&j| jobs[j].spec.threads).sum();
    }
    let mut r = JobResult::new(spec);
    let measured_ns = s.ends.iter().map(|e| e.measured_ns).max().unwrap_or(0);
    let seconds = measured_ns as f64 / SEC as f64;
    let area_r: f64 = s.ends.iter().map(|e| e.qd_area_read).sum();
    let area_w: f64 = s.ends.iter().map(|e| e.qd_area_write).sum();
    let qd = |area: f64| if measured_ns > 0 { area / measured_ns as f64 } else { 0.0 };
    let reads = s.total_read.count() > 0 || r.spec.rw.read_pct(r.spec.mix) > 0;
    let writes = s.total_write.count() > 0 || r.spec.rw.read_pct(r.spec.mix) < 100;
    if reads {
        r.read = Some(DirStats::new(s.total_read.count(), s.read_bytes, seconds, &s.total_read, qd(area_r)));
    }
    if writes {
        r.write = Some(DirStats::new(s.total_write.count(), s.write_bytes, seconds, &s.total_write, qd(area_w)));
    }
    r.series = trim_series(std::mem::take(&mut s.series), seconds);
    let t0 = s.ends.iter().filter(|e| !e.setup_failed).map(|e| e.t0_ns).min();
    let late = in_slot.iter().any(|&j| jobs[j].spec.flow.start_delay_ms > 0 || jobs[j].spec.flow.wait_for.is_some());
    if late {
        r.start_s = t0.map(|t| t as f64 / SEC as f64);
    }
    if let Some(mut hists) = s.series_hists.take() {
        hists.truncate(r.series.len());
        let ramp = t0.map_or(jobs[first_job].spec.ramp, Duration::from_nanos);
        let start = started_unix_ns + ramp.as_nanos() as u64;
        for p in &mut r.series {
            p.unix_s = Some(start as f64 / 1e9 + p.t_s);
        }
        r.histograms = Some(Histograms { read: s.total_read.encoded(), write: s.total_write.encoded(), series: hists });
        r.window = Some(MeasuredWindow {
            start_unix_ns: start,
            end_unix_ns: start + measured_ns,
            start_offset_s: Some((release_to_start + ramp).as_secs_f64()),
        });
    }
    r.fsyncs = s.ends.iter().map(|e| e.fsyncs).sum();
    r.block_sizes = block_size_counts(&s.ends);
    r.errors = s.ends.iter().map(|e| e.errors).sum();
    r.first_error = s.ends.iter().find_map(|e| e.first_error.as_ref()).map(|f| fault_info(f, &r.name));
    r.cpu = cpu.usage(&s.ends);
    r.handoff = handoff(&s.ends).or_else(|| {
        let threads = in_slot
            .iter()
            .filter(|&&j| jobs[j].handoff == Some(stats::HandoffPolicy::Threads))
            .map(|&j| super::spawn::workers_of(&jobs[j].spec).0);
        let n: usize = threads.sum();
        (n > 0).then(|| crate::io::handoff::threads_record(n as u32))
    });
    if let Some(e) = error {
        let in_this = e.job.as_deref().is_some_and(|n| in_slot.iter().any(|&j| jobs[j].spec.name == n));
        if e.job.as_deref() == Some(&r.name) || (group_reporting && in_this) {
            r.error = Some(e.clone());
        }
    }
    r
}

/// The whole-burst window of a slot's workers ([`crate::io::bursts::align`]) and the earliest
/// worker's window start, when its completions came in steady bursts.
fn burst_window(ends: &[WorkerEnd]) -> Option<(crate::io::bursts::Aligned, u64)> {
    let live: Vec<&WorkerEnd> = ends.iter().filter(|e| !e.setup_failed).collect();
    let logs: Option<Vec<_>> = live.iter().map(|e| e.edges.as_deref().map(|l| (l, e.t0_ns, e.measured_ns))).collect();
    let a = crate::io::bursts::align(&logs?)?;
    Some((a, live.iter().map(|e| e.t0_ns).min().unwrap_or(0)))
}

/// Count a job whose completions came in steady bursts over whole bursts
/// ([`crate::io::bursts`]); the latencies keep the whole window.
fn whole_bursts(r: &mut JobResult, a: &crate::io::bursts::Aligned, t0: u64) {
    let seconds = (a.end_ns - a.start_ns) as f64 / SEC as f64;
    let (mut whole, mut whole_ops) = ([None, None], [None, None]);
    for (i, d) in [r.read.as_mut(), r.write.as_mut()].into_iter().enumerate() {
        if let Some(d) = d {
            if d.ops > 0 {
                whole[i] = Some(d.iops);
                whole_ops[i] = Some(d.ops);
                d.rewindow(a.ops[i], a.bytes[i], seconds);
            }
        }
    }
    r.whole_bursts = Some(stats::WholeBursts {
        period_ms: a.period_ns as f64 / 1e6,
        bursts: a.bursts,
        dropped: a.dropped,
        start_s: a.start_ns.saturating_sub(t0) as f64 / SEC as f64,
        end_s: a.end_ns.saturating_sub(t0) as f64 / SEC as f64,
        whole_read_iops: whole[0],
        whole_write_iops: whole[1],
        whole_read_ops: whole_ops[0],
        whole_write_ops: whole_ops[1],
    });
}

/// The workers' hand-off to io_uring's kernel workers, summed: `None` where no worker had its
/// requests handed off and none of its kernel workers was seen.
fn handoff(ends: &[WorkerEnd]) -> Option<stats::Handoff> {
    let hs: Vec<_> = ends.iter().filter_map(|e| e.handoff.as_ref()).collect();
    if !hs.iter().any(|h| h.forced || h.kernel_workers > 0) {
        return None;
    }
    let own: u64 = hs.iter().map(|h| h.own_bytes).sum();
    let kernel: u64 = hs.iter().map(|h| h.kernel_bytes).sum();
    let wall = ends.iter().map(|e| e.wall_ns).max().unwrap_or(0);
    let cpu: u64 = hs.iter().map(|h| h.kernel_cpu_ns).sum();
    let mut cpus: Vec<u32> = hs.iter().flat_map(|h| h.cpus.iter().copied()).collect();
    cpus.sort_unstable();
    cpus.dedup();
    Some(stats::Handoff {
        share: (own + kernel > 0).then(|| kernel as f64 / (own + kernel) as f64),
        kernel_workers: hs.iter().map(|h| h.kernel_workers).sum(),
        kernel_cpu_pct: if wall > 0 { cpu as f64 / wall as f64 * 100.0 } else { 0.0 },
        forced: hs.iter().any(|h| h.forced),
        kernel_cpus: cpus,
        max_kernel_workers: hs.iter().map(|h| h.max_workers).max().unwrap_or(0),
        policy: stats::HandoffPolicy::Ring,
        threads: 0,
    })
}

/// The workers' completions by block size, merged by size (smallest first); sizes no I/O
/// used are left out.
fn block_size_counts(ends: &[WorkerEnd]) -> Vec<BsCount> {
    let mut by: std::collections::BTreeMap<u64, (u64, u64)> = std::collections::BTreeMap::new();
    for (bs, r, w) in ends.iter().flat_map(|e| e.bs_counts.iter()) {
        let e = by.entry(u64::from(*bs)).or_default();
        e.0 += r;
        e.1 += w;
    }
    by.into_iter().filter(|(_, (r, w))| r + w > 0).map(|(bs, (reads, writes))| BsCount { bs, reads, writes }).collect()
}

/// The last interval may be partial: rescale it to its real length (the window ended
/// `seconds` after it began), and drop a sliver shorter than 0.1 s when there are others.
fn trim_series(mut series: Vec<SeriesPoint>, seconds: f64) -> Vec<SeriesPoint> {
    let several = series.len() > 1;
    if let Some(last) = series.last_mut() {
        let start = last.t_s - 1.0;
        let len = seconds - start;
        if len < 0.1 && several {
            series.pop();
        } else if len < 0.999 && len > 0.0 {
            last.t_s = seconds;
            for v in [&mut last.read_iops, &mut last.read_mb_s, &mut last.write_iops, &mut last.write_mb_s] {
                *v /= len;
            }
        }
    }
    series
}

/// Sets each result's `device_view` from the counter snapshots at the window's edges, held
/// against everything this group did on the same device.
fn attach_device_views(
    results: &mut [JobResult],
    jobs: &[BoundJob],
    slot_map: &[usize],
    edge0: Option<&Snapshot>,
    edge1: Option<&Snapshot>,
) {
    let first_of = |si: usize| slot_map.iter().position(|&s| s == si).unwrap_or(si);
    let watch_of = |i: usize| jobs.get(first_of(i)).and_then(|j| j.watch.as_ref());
    let mut ours: BTreeMap<&str, [u64; 4]> = BTreeMap::new();
    for (i, r) in results.iter().enumerate() {
        if let Some(devview::Watch::Device { name, .. }) = watch_of(i) {
            let o = ours.entry(name.as_str()).or_default();
            if let Some(d) = &r.read {
                o[0] += d.ops;
                o[2] += d.bytes;
            }
            if let Some(d) = &r.write {
                o[1] += d.ops;
                o[3] += d.bytes;
            }
        }
    }
    for (i, r) in results.iter_mut().enumerate() {
        r.device_view = match watch_of(i) {
            None => None,
            Some(devview::Watch::None(why)) => Some(stats::DeviceView::unavailable(why.clone())),
            Some(devview::Watch::Device { name, backing }) => {
                let a = edge0.and_then(|(t, m)| Some((*t, *m.get(name)?)));
                let b = edge1.and_then(|(t, m)| Some((*t, *m.get(name)?)));
                match (a, b) {
                    (Some((ta, ca)), Some((tb, cb))) => Some(stats::DeviceView::new(
                        name,
                        backing.clone(),
                        tb.duration_since(ta).as_secs_f64(),
                        ca.delta(&cb),
                        ours.get(name.as_str()).copied().unwrap_or_default(),
                    )),
                    _ => Some(stats::DeviceView::unavailable(format!("{name} vanished from /proc/diskstats"))),
                }
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::io::backend::Op;
    use crate::io::worker;

    fn point(t_s: f64, iops: f64) -> SeriesPoint {
        SeriesPoint { t_s, read_iops: iops, write_iops: iops, ..Default::default() }
    }

    #[test]
    fn a_partial_last_second_is_rescaled_and_a_sliver_dropped() {
        // 2.5 s measured: the third point covers half a second.
        let s = trim_series(vec![point(1.0, 100.0), point(2.0, 100.0), point(3.0, 50.0)], 2.5);
        assert_eq!(s.len(), 3);
        assert_eq!((s[2].t_s, s[2].read_iops, s[2].write_iops), (2.5, 100.0, 100.0));
        // 2.05 s: the last 0.05 s is dropped.
        let s = trim_series(vec![point(1.0, 100.0), point(2.0, 100.0), point(3.0, 5.0)], 2.05);
        assert_eq!(s.len(), 2);
        // A single short point stays, rescaled.
        let s = trim_series(vec![point(1.0, 5.0)], 0.05);
        assert_eq!((s.len(), s[0].t_s, s[0].read_iops), (1, 0.05, 100.0));
        // Whole seconds are left alone.
        let s = trim_series(vec![point(1.0, 100.0), point(2.0, 100.0)], 2.0);
        assert_eq!((s[1].t_s, s[1].read_iops), (2.0, 100.0));
    }

    #[test]
    fn faults_name_the_direction_and_the_offset() {
        let eio = platform::OsCode::of_class(platform::IoErrorClass::Media);
        let f = worker::IoFault { error: eio, offset: 8192, op: Op::Write, transferred: 0, len: 4096 };
        let e = fault_info(&f, "j");
        assert_eq!((e.kind.as_str(), e.offset, e.job.as_deref()), ("eio", Some(8192), Some("j")));
        assert!(e.message.starts_with("write failed at offset 8192: "), "{}", e.message);
        let short = worker::IoFault { error: None, offset: 0, op: Op::Read, transferred: 512, len: 4096 };
        assert_eq!(fault_info(&short, "j").message, "short read at offset 0: 512 of 4096 bytes");
        let enospc = platform::OsCode::of_class(platform::IoErrorClass::NoSpace);
        let sync = worker::IoFault { error: enospc, offset: 0, op: Op::Fsync, transferred: 0, len: 0 };
        let e = fault_info(&sync, "j");
        assert_eq!((e.kind.as_str(), e.offset), ("enospc", None));
    }
}
