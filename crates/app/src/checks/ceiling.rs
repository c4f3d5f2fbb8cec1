//! The checks that follow each measured job (`docs/METHOD.md`, "Honesty checks"): where its
//! I/O ran (`async-punt`), and two that run the job's shape briefly on an engine no device can
//! beat and warn when the storage figure comes too close to it or goes past it.
//!
//! * [`ceiling_check`]: the null engine gives diskmeter's own ceiling for the job; a figure
//!   within 20 % of it (or a worker at full CPU) is `tool-bottleneck`.
//! * [`bandwidth_check`]: the mem engine gives this machine's memory bandwidth for the job;
//!   a figure above it is `exceeds-memory-bandwidth`.
//!
//! The engine only measures (`engine::measure::run_alone`, the null and mem engines); which job is run,
//! when the check is worth its time and what the warning says are decided here.

use engine::measure::{run_alone, GroupOutcome, Need, RunControl};
use spec::{EngineKind, JobSpec};
use stats::{margin, JobResult, ResultDoc};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// Region of the bandwidth check's mem job: the storage job's region, at most this (larger
/// than any CPU cache, so the copies reach memory).
pub(crate) const CHECK_REGION: u64 = 256 << 20;
/// Measured time of the bandwidth check's mem job.
pub(crate) const CHECK_RUNTIME: Duration = Duration::from_millis(500);
/// Below this a storage figure cannot be above any machine's memory bandwidth (MB/s).
const PLAUSIBLE_MB_S: f64 = 1000.0;

/// The figure `async-punt` is judged by ([`stats::margin::HANDOFF`]): the share of the job's
/// bytes io_uring's kernel workers moved; infinite where the job ran on threads instead, or
/// where workers were seen and no bytes were accounted.
pub(super) fn handoff_share(r: &JobResult) -> f64 {
    match r.handoff.as_ref() {
        Some(h) if h.policy != stats::HandoffPolicy::Threads => h.share.unwrap_or(f64::INFINITY),
        _ => f64::INFINITY,
    }
}

/// `async-punt`: the job's I/O ran in io_uring's kernel worker threads, not in diskmeter's
/// (`docs/METHOD.md`, "Hand-off to the kernel's workers"). `None` when it did not, or for a
/// share short of [`stats::margin::HANDOFF`]'s band (a share inside it is judged by the band).
pub(super) fn handoff_warning(r: &JobResult) -> Option<String> {
    let h = r.handoff.as_ref()?;
    if h.policy == stats::HandoffPolicy::Threads {
        return Some(format!(
            "{}: {} cannot take a request without blocking, so io_uring would run each in a kernel worker \
             thread; diskmeter served the queue depth with {} thread(s) of synchronous I/O instead (the psync \
             engine), each request run in the thread that issued it. The figure is the device's with that many \
             requests at once, and the CPU time is mostly its own work; async engines (fio's io_uring or libaio) \
             measure less on it, by where their kernel workers run (--handoff ring to see io_uring's)",
            r.name,
            device_of(r),
            h.threads
        ));
    }
    let what = match h.share {
        Some(s) if stats::margin::HANDOFF.zone(s) == stats::margin::Zone::Clear => return None,
        Some(s) => format!("{:.0} % of the I/O", s * 100.0),
        None if h.kernel_workers == 0 => return None,
        None => "the I/O".to_string(),
    };
    let device = device_of(r);
    let placed = match (h.forced, h.kernel_cpus.as_slice()) {
        (true, []) => format!(
            "diskmeter submitted every request to be handed off at once, at most {} worker(s) per thread",
            h.max_kernel_workers
        ),
        (true, cpus) => format!(
            "diskmeter submitted every request to be handed off at once and let at most {} worker(s) per thread run on CPU {}",
            h.max_kernel_workers,
            cpu_list(cpus)
        ),
        (false, _) => "they ran where the kernel placed them".to_string(),
    };
    Some(format!(
        "{}: {what} on {device} ran in io_uring's kernel worker threads ({} of them, {:.0} % of a CPU), not in \
         diskmeter's: the device cannot take a request without blocking, so the figure depends on where those \
         threads run and how many there are; {placed}",
        r.name, h.kernel_workers, h.kernel_cpu_pct
    ))
}

/// The device a result measured, as its counters name it, else its target.
fn device_of(r: &JobResult) -> String {
    r.device_view
        .as_ref()
        .map(|v| v.device.as_str())
        .filter(|d| !d.is_empty())
        .map(str::to_string)
        .or_else(|| r.spec.target.as_ref().map(|p| p.display().to_string()))
        .unwrap_or_else(|| "the target".into())
}

/// CPUs as ranges: `0-3,6`.
fn cpu_list(cpus: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if j > i { format!("{}-{}", cpus[i], cpus[j]) } else { cpus[i].to_string() });
        i = j + 1;
    }
    out.join(",")
}

/// The reference job's run: alone, with the measured job's CPU pinning and none of its
/// buffers, faults, polling or histograms, so that it measures only what the engine can do.
/// `None` when it could not run.
fn reference_run(job: &JobSpec, stop: Arc<AtomicBool>, ctl: &RunControl) -> Option<GroupOutcome> {
    let c = RunControl {
        stop,
        register_buffers: false,
        null_fault: None,
        write_faults: None,
        pin_workers: ctl.pin_workers,
        poll_ns: 0,
        poll_max_depth: 0,
        keep_histograms: false,
        handoff: ctl.handoff,
    };
    run_alone(job, &c)
}

/// Tool-bottleneck check: run the job briefly on the null engine and compare.
pub(super) fn ceiling_check(doc: &mut ResultDoc, r: &JobResult, ctl: &RunControl, more_workers: &str) {
    let s = &r.spec;
    if !s.engine.uses_target() || s.rate_iops.is_some() {
        return;
    }
    let measured = r.read.as_ref().map_or(0.0, |d| d.iops) + r.write.as_ref().map_or(0.0, |d| d.iops);
    // A worker doing synchronous I/O on a device that does its work in the caller's thread
    // (zram compresses there) is busy with the device's work, not the tool's.
    let device_cpu = r.handoff.as_ref().is_some_and(|h| h.policy == stats::HandoffPolicy::Threads);
    if !device_cpu {
        let msg = format!(
            "{}: a worker thread ran at {:.0}% CPU: the tool (or this CPU), not the device, may be the limit; \
             {more_workers}",
            r.name, r.cpu.max_worker_pct
        );
        if doc.judge(&margin::WORKER_CPU, r.cpu.max_worker_pct, msg) == margin::Zone::Given {
            return;
        }
    }
    let mut null = s.clone();
    null.engine = EngineKind::Null;
    null.runtime = Duration::from_millis(300);
    null.ramp = Duration::ZERO;
    null.time_based = true;
    // A stop flag of its own: the null run is 300 ms and not the user's to interrupt.
    if let Some(out) = reference_run(&null, Default::default(), ctl) {
        if let Some(nr) = out.results.first() {
            let ceiling = nr.read.as_ref().map_or(0.0, |d| d.iops) + nr.write.as_ref().map_or(0.0, |d| d.iops);
            if ceiling > 0.0 {
                let share = measured / ceiling;
                let msg = format!(
                    "{}: {:.0} IOPS is {:.0} % of diskmeter's own ceiling for this job ({:.0} IOPS on the null \
                     engine): the tool, not the device, may be the limit",
                    r.name,
                    measured,
                    share * 100.0,
                    ceiling
                );
                doc.judge(&margin::TOOL_CEILING, share, msg);
            }
        }
    }
}

/// After a storage job: run [`check_job`] on the mem engine and warn
/// `exceeds-memory-bandwidth` where the job reported more MB/s than memory gave. Skipped for
/// the null and mem engines and when the check run fails or is interrupted.
pub(super) fn bandwidth_check(doc: &mut ResultDoc, r: &JobResult, ctl: &RunControl) {
    if !r.spec.engine.uses_target() {
        return;
    }
    // No machine's memory moves less than 1 GB/s: a slower figure cannot exceed it, and the
    // half-second check is not worth its time (a job file of many small jobs).
    let fastest = [&r.read, &r.write].into_iter().flatten().map(|d| d.mb_s).fold(0.0, f64::max);
    if fastest < PLAUSIBLE_MB_S && test_scale().is_none() {
        return;
    }
    let mut job = check_job(&r.spec);
    // A queue depth served by threads of synchronous I/O (the hand-off policy) copied on as
    // many threads: memory's figure for that shape is the same number of threads, each with
    // one I/O at a time (one thread of eight copies would be a ceiling the job never had).
    if let Some(h) = r.handoff.as_ref().filter(|h| h.policy == stats::HandoffPolicy::Threads && h.threads > 0) {
        job.threads = h.threads;
        job.qd = 1;
    }
    // The check must not be what runs the machine out of memory.
    if !Need::each(std::slice::from_ref(&job)).fits() {
        return;
    }
    let Some(out) = reference_run(&job, ctl.stop.clone(), ctl) else { return };
    if out.error.is_some() || out.interrupted {
        return;
    }
    if let Some(m) = out.results.first() {
        let mut m = m.clone();
        if let Some(scale) = test_scale() {
            for d in [&mut m.read, &mut m.write].into_iter().flatten() {
                d.mb_s *= scale;
            }
        }
        for (ratio, msg) in memory_figures(r, &m) {
            doc.judge(&margin::MEMORY, ratio, msg);
        }
    }
}

/// Test-only hook: `DISKMETER_TEST_MEM_CEILING_SCALE=F` multiplies the bandwidth check's
/// memory figures by F before the comparison, so a test can make the check fire (or not) on
/// any machine. It changes no reported figure.
fn test_scale() -> Option<f64> {
    std::env::var("DISKMETER_TEST_MEM_CEILING_SCALE").ok()?.parse().ok().filter(|f: &f64| f.is_finite() && *f > 0.0)
}

/// The short mem job whose bandwidth bounds a storage job's figures: the same rw, mix, bs,
/// qd, threads, distribution and data, over min(the job's region, [`CHECK_REGION`]), time
/// based for [`CHECK_RUNTIME`], closed loop.
pub(crate) fn check_job(s: &JobSpec) -> JobSpec {
    let region = s.size.unwrap_or(CHECK_REGION).min(CHECK_REGION).max(s.bs);
    JobSpec {
        engine: EngineKind::Mem,
        target: None,
        offset: 0,
        size: Some(region),
        runtime: CHECK_RUNTIME,
        ramp: Duration::ZERO,
        time_based: true,
        rate_iops: None,
        fsync: 0,
        ..s.clone()
    }
}

/// MB/s figure with digits grouped by thousands (`9 800`).
fn grouped(mb_s: f64) -> String {
    let digits = format!("{:.0}", mb_s.max(0.0));
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// The `exceeds-memory-bandwidth` messages for a storage result `r` measured against `mem`,
/// the mem engine's result for the same shape: one per direction whose MB/s is above
/// memory's by more than [`stats::margin::MEMORY`]'s threshold. Pure.
#[cfg(test)]
pub(crate) fn exceeds_memory_bandwidth(r: &JobResult, mem: &JobResult) -> Vec<String> {
    memory_figures(r, mem)
        .into_iter()
        .filter(|(v, _)| margin::MEMORY.zone(*v) == margin::Zone::Given)
        .map(|(_, m)| m)
        .collect()
}

/// Each direction's MB/s against memory's for the same shape, with the
/// `exceeds-memory-bandwidth` message, where it reaches [`stats::margin::MEMORY`]'s band. Pure.
pub(crate) fn memory_figures(r: &JobResult, mem: &JobResult) -> Vec<(f64, String)> {
    let mut out = Vec::new();
    for (dir, got, ceiling) in [("read", &r.read, &mem.read), ("write", &r.write, &mem.write)] {
        let (Some(got), Some(ceiling)) = (got, ceiling) else { continue };
        let ratio = if ceiling.mb_s > 0.0 { got.mb_s / ceiling.mb_s } else { 0.0 };
        if margin::MEMORY.zone(ratio) != margin::Zone::Clear {
            out.push((
                ratio,
                format!(
                    "{}: {} MB/s {dir} is above this machine's memory bandwidth for the same shape ({} MB/s, the mem \
                 engine at --bs {} --qd {} --threads {}): the figure cannot come from the device; a cache or a bug \
                 answered",
                    r.name,
                    grouped(got.mb_s),
                    grouped(ceiling.mb_s),
                    spec::units::format_size(mem.spec.bs),
                    mem.spec.qd,
                    mem.spec.threads
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use stats::{DirStats, LatHist};

    fn result(name: &str, read_mb_s: Option<f64>, write_mb_s: Option<f64>) -> JobResult {
        let spec = JobSpec { name: name.into(), bs: 1 << 20, qd: 8, ..JobSpec::default() };
        let mut r = JobResult::new(spec);
        let h = LatHist::new();
        // 1 s of 1 MiB I/Os: MB/s = bytes / 1e6.
        let dir = |mb: f64| {
            let bytes = (mb * 1e6) as u64;
            DirStats::new(bytes >> 20, bytes, 1.0, &h, 1.0)
        };
        r.read = read_mb_s.map(dir);
        r.write = write_mb_s.map(dir);
        r
    }

    #[test]
    fn a_hand_off_is_named_with_its_share_device_and_placement() {
        let mut r = result("rnd", Some(1000.0), None);
        assert_eq!(handoff_warning(&r), None);
        r.spec.target = Some("/dev/zram1".into());
        r.handoff = Some(stats::Handoff {
            share: Some(0.999),
            kernel_workers: 2,
            kernel_cpu_pct: 143.4,
            forced: true,
            kernel_cpus: vec![0, 1, 2, 5],
            max_kernel_workers: 2,
            ..Default::default()
        });
        let w = handoff_warning(&r).unwrap();
        assert!(w.starts_with("rnd: 100 % of the I/O on /dev/zram1 ran in io_uring's kernel worker threads (2 of them, 143 % of a CPU)"), "{w}");
        assert!(w.ends_with("let at most 2 worker(s) per thread run on CPU 0-2,5"), "{w}");
        // The odd request handed off does not shape the figure.
        r.handoff.as_mut().unwrap().share = Some(0.01);
        assert_eq!(handoff_warning(&r), None);
        // No storage bytes accounted (a file in RAM): workers seen are enough.
        let h = r.handoff.as_mut().unwrap();
        h.share = None;
        h.forced = false;
        let w = handoff_warning(&r).unwrap();
        assert!(
            w.contains("rnd: the I/O on /dev/zram1") && w.ends_with("they ran where the kernel placed them"),
            "{w}"
        );
        r.handoff.as_mut().unwrap().kernel_workers = 0;
        assert_eq!(handoff_warning(&r), None);
        // Served by threads: the device is named with the threads, and how to see io_uring's.
        r.handoff = Some(stats::Handoff { policy: stats::HandoffPolicy::Threads, threads: 32, ..Default::default() });
        let w = handoff_warning(&r).unwrap();
        assert!(w.starts_with("rnd: /dev/zram1 cannot take a request without blocking"), "{w}");
        assert!(
            w.contains("with 32 thread(s) of synchronous I/O") && w.ends_with("(--handoff ring to see io_uring's)"),
            "{w}"
        );
        assert_eq!(cpu_list(&[3]), "3");
    }

    #[test]
    fn a_figure_above_memory_bandwidth_is_flagged_with_both_figures() {
        let mem = result("mem", Some(7_400.0), Some(5_000.0));
        let r = result("seq", Some(9_800.0), None);
        let w = exceeds_memory_bandwidth(&r, &mem);
        // 7 400 MB/s plus the 10 % margin: 8 140.
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("seq: 9 800 MB/s read is above this machine's memory bandwidth"), "{}", w[0]);
        assert!(w[0].contains("(7 400 MB/s"), "{}", w[0]);
        assert!(w[0].contains("the figure cannot come from the device; a cache or a bug answered"), "{}", w[0]);
        // Below, equal, or within the margin above: nothing. Each direction against its own ceiling.
        assert!(exceeds_memory_bandwidth(&result("a", Some(7_399.0), None), &mem).is_empty());
        assert!(exceeds_memory_bandwidth(&result("a", Some(7_400.0), None), &mem).is_empty());
        assert!(exceeds_memory_bandwidth(&result("a", Some(8_139.0), None), &mem).is_empty());
        assert_eq!(exceeds_memory_bandwidth(&result("a", Some(8_141.0), None), &mem).len(), 1);
        let both = exceeds_memory_bandwidth(&result("m", Some(100.0), Some(5_501.0)), &mem);
        assert_eq!(both.len(), 1);
        assert!(both[0].contains("5 501 MB/s write") && both[0].contains("(5 000 MB/s"), "{}", both[0]);
        // No ceiling measured for a direction: no verdict.
        assert!(exceeds_memory_bandwidth(&result("a", Some(1e6), None), &result("mem", None, Some(1.0))).is_empty());
    }

    #[test]
    fn the_check_job_keeps_the_shape_and_bounds_the_region() {
        let s = JobSpec {
            rw: spec::RwMode::RandRw,
            mix: 70,
            bs: 4096,
            qd: 32,
            threads: 2,
            size: Some(100 << 30),
            offset: 1 << 30,
            rate_iops: Some(1000),
            fsync: 8,
            ..JobSpec::default()
        };
        let c = check_job(&s);
        assert_eq!((c.engine, c.rw, c.mix, c.bs, c.qd, c.threads), (EngineKind::Mem, s.rw, 70, 4096, 32, 2));
        assert_eq!((c.size, c.offset, c.rate_iops, c.fsync), (Some(CHECK_REGION), 0, None, 0));
        assert!(c.time_based && c.runtime == CHECK_RUNTIME && c.ramp.is_zero());
        assert_eq!(check_job(&JobSpec { size: Some(8 << 20), ..s.clone() }).size, Some(8 << 20));
        assert_eq!(check_job(&JobSpec { size: None, ..s }).size, Some(CHECK_REGION));
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(0.4), "0");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(grouped(9_800.2), "9 800");
        assert_eq!(grouped(12_345_678.0), "12 345 678");
    }
}
