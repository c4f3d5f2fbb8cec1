//! Runs a group of jobs concurrently and turns worker output into results.
//!
//! One group's way (its pinned memory checked once per measurement, by `measure::Need`): lay
//! the jobs out as workers (`spawn`), start one thread each and release them together,
//! collect their one-second intervals until all are done (`collect`), then make one result
//! per report slot (`results`).

mod collect;
pub(crate) mod job;
mod results;
mod spawn;

use crate::error::{EngineError, Invalid, Result};
use crate::io::offsets::IoLens;
use crate::io::worker::{Interval, Live, Msg};
use crate::target::{self, OpenTarget};
use collect::{Collector, Inbox, WindowGate};
use spawn::WorkerSetup;
use spec::JobSpec;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

pub use job::*;

/// Run the jobs of one group concurrently. `on_tick` is called from this thread about
/// every 250 ms with live figures.
pub fn run_group(
    jobs: &[BoundJob],
    group_reporting: bool,
    ctl: &RunControl,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<GroupOutcome> {
    run_group_windows(jobs, group_reporting, ctl, on_tick, &mut |_| true)
}

/// [`run_group`] that also hands every finished one-second window to `on_window`, in
/// order per slot; when it returns `false` the run ends early (not an interruption). This
/// is how adaptive measurements (`sla`) run "until stable".
pub fn run_group_windows(
    jobs: &[BoundJob],
    group_reporting: bool,
    ctl: &RunControl,
    on_tick: &mut dyn FnMut(&Tick),
    on_window: &mut dyn FnMut(&Window) -> bool,
) -> Result<GroupOutcome> {
    // Workers watch their own stop flag: set by the user's (Ctrl-C, forwarded by the
    // collector), by `on_window`, or by a worker that failed to start.
    let user_stop = ctl.stop.clone();
    let ctl = &RunControl { stop: Arc::new(AtomicBool::new(user_stop.load(Ordering::Relaxed))), ..ctl.clone() };
    let jobs = &*crate::io::handoff::plan(jobs, ctl);
    // The pinned memory was checked once for the whole measurement (`measure::Need`).
    let specs: Vec<JobSpec> = jobs.iter().map(|j| j.spec.clone()).collect();
    let slots = report_slots(&specs, group_reporting);
    let layout = spawn::layout(jobs, &slots, ctl.pin_workers, (ctl.poll_ns, ctl.poll_max_depth))?;
    let global_index = layout.global_index(&slots);
    let gate = WindowGate::new(on_window);
    let mut c =
        Collector::new(jobs, slots, &layout.slot_workers, global_index, gate, ctl.keep_histograms, layout.job_workers);
    let ru0 = results::rusage_self();
    let wall = run_workers(layout.setups, ctl, &user_stop, &mut c, on_tick)?;
    c.usage_error()?;
    let cpu = results::CpuTimes::since(ru0, wall);
    let results = results::group_results(jobs, &mut c, &cpu);
    let interrupted = user_stop.load(Ordering::Relaxed) && c.error.is_none();
    let logs = c.take_logs();
    Ok(GroupOutcome { results, error: c.error, interrupted, logs })
}

/// Start one thread per worker, release them all at once and collect until every one is
/// done. Returns the wall time from the start.
fn run_workers(
    setups: Vec<WorkerSetup>,
    ctl: &RunControl,
    user_stop: &AtomicBool,
    c: &mut Collector,
    on_tick: &mut dyn FnMut(&Tick),
) -> Result<Duration> {
    let total = setups.len();
    let (tx, rx) = mpsc::channel::<Msg>();
    let barrier = Barrier::new(total + 1);
    let start = OnceLock::new();
    let lives: Vec<Arc<Live>> = (0..total).map(|_| Arc::new(Live::default())).collect();
    let (recycle, recycle_rx): (Vec<_>, Vec<_>) = (0..total).map(|_| mpsc::channel::<Box<Interval>>()).unzip();
    let ramp = collect::ramp(c.jobs);
    let finished: Vec<AtomicUsize> = c.jobs.iter().map(|_| AtomicUsize::new(0)).collect();
    let finished = &finished[..];
    std::thread::scope(|scope| {
        for (setup, (rrx, live)) in setups.into_iter().zip(recycle_rx.into_iter().zip(lives.iter().cloned())) {
            let tx = tx.clone();
            let barrier = &barrier;
            let start = &start;
            let ctl = ctl.clone();
            std::thread::Builder::new()
                .name(format!("dm-worker-{}-{}", setup.plan.job, setup.plan.worker))
                .spawn_scoped(scope, move || {
                    spawn::worker_thread(setup, &ctl, tx, rrx, live, spawn::Meet { barrier, start, finished })
                })
                .map_err(|e| EngineError::io("cannot start a worker thread", e))?;
        }
        drop(tx);
        barrier.wait();
        // Every worker is ready: whoever paces this group (other ranks) may hold it here.
        on_tick(&Tick { kind: TickKind::Release, planned: collect::planned(c.jobs), ramp, ..Tick::default() });
        let released = Instant::now();
        if user_stop.load(Ordering::Relaxed) {
            ctl.stop.store(true, Ordering::Relaxed);
        }
        let t_start = Instant::now();
        c.release_to_start = t_start.duration_since(released);
        c.started_unix_ns = unix_ns_now();
        let _ = start.set(t_start);
        if ramp.is_zero() {
            c.edges.start_now();
        }
        barrier.wait();
        Ok(c.run(Inbox { rx, recycle, lives }, t_start, ctl, user_stop, on_tick))
    })
}

pub use crate::io::wallclock::unix_ns_now;

/// Resolve a job's region against its open target.
pub fn bind(job: &JobSpec, t: Option<&OpenTarget>) -> Result<BoundJob> {
    let (fd, size, align, lb) = match t {
        Some(t) => (
            platform::target::raw(&t.file),
            t.probe.size_bytes,
            target::mem_align(&t.probe),
            if job.direct { target::direct_block(&t.probe) } else { 1 },
        ),
        None => (platform::target::NO_RAW, job.offset + job.size.unwrap_or(1 << 30), 4096, 1),
    };
    // fio's fill_fs on a file: the region runs on past the file's end by the file system's
    // free space; writes extend the file until one finds the file system full.
    let size = match t {
        Some(t) if job.fill && t.probe.kind == crate::target::probe::TargetKind::File => {
            let free = platform::fs::free_bytes(&t.file).unwrap_or(0);
            size.saturating_add(free)
        }
        _ => size,
    };
    // fio's shares of the target: the offset rounded up to the smallest block size, the
    // length cut to what is left after it.
    let min_bs = job.io_sizes().into_iter().min().unwrap_or(job.bs).max(1);
    let mut job = std::borrow::Cow::Borrowed(job);
    if let Some(p) = job.offset_pct {
        let raw = (size as f64 * p / 100.0) as u64;
        let j = job.to_mut();
        j.offset = raw.div_ceil(min_bs) * min_bs;
        j.offset = j.offset.min(size.saturating_sub(min_bs) / min_bs * min_bs);
    }
    if let Some(p) = job.size_pct {
        let left = size.saturating_sub(job.offset);
        let len = ((size as f64 * p / 100.0) as u64).min(left);
        job.to_mut().size = Some(len / min_bs * min_bs);
    }
    let job = job.as_ref();
    if !job.offset.is_multiple_of(lb) {
        return Err(Invalid::OffsetUnaligned { offset: job.offset, block: lb }.into());
    }
    if job.offset >= size {
        return Err(Invalid::OffsetPastEnd { offset: job.offset, size }.into());
    }
    let wanted = if job.fill { None } else { job.size }; // a fill runs to the end
                                                         // offset_increment: the last worker's region starts this much further on.
    let spread = job.offset_increment.saturating_mul(u64::from(job.threads.max(1) - 1));
    if spread > 0 && job.offset + spread >= size {
        return Err(Invalid::SpreadPastEnd { increment: job.offset_increment, threads: job.threads, size }.into());
    }
    let room = size - job.offset - spread;
    let len = wanted.unwrap_or(room).min(room);
    let len = len / job.bs * job.bs;
    if len == 0 {
        let region = job.size.unwrap_or(size - job.offset);
        return Err(Invalid::RegionBelowBlock { region, offset: job.offset, bs: job.bs }.into());
    }
    if let Some(b) = &job.block_sizes {
        for d in [&b.read, &b.write] {
            if let Some(bad) = d.sizes.named().into_iter().chain(d.align).find(|v| !v.is_multiple_of(lb)) {
                return Err(Invalid::SizeUnaligned { value: bad, block: lb }.into());
            }
        }
    }
    let lens = IoLens::for_job(job.bs, job.block_sizes.as_ref(), lb)?;
    let mut spec = job.clone();
    spec.size = Some(len);
    let watch = t.map(|t| crate::target::devview::watch_for(&t.probe));
    Ok(BoundJob {
        spec,
        fd,
        region_offset: job.offset,
        region_len: len,
        mem_align: align,
        lens,
        watch,
        verify: None,
        files: Vec::new(),
        handoff: None,
        device_thread: t.is_some_and(|t| target::probe::runs_on_a_device_thread(&t.probe)),
        flags: t.map_or(0, |t| {
            platform::target::reopen_flags(platform::target::OpenHow {
                direct: t.direct,
                write_through: t.write_through,
                ..Default::default()
            })
        }),
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::target::fault::NullFault;
    use spec::EngineKind;

    fn null_job(name: &str, bytes: u64) -> BoundJob {
        let spec = JobSpec {
            name: name.into(),
            engine: EngineKind::Null,
            qd: 4,
            size: Some(bytes),
            time_based: false,
            runtime: Duration::ZERO,
            ..JobSpec::default()
        };
        bind(&spec, None).unwrap()
    }

    fn quiet() -> RunControl {
        RunControl { pin_workers: false, register_buffers: false, ..RunControl::default() }
    }

    #[test]
    fn io_uring_workers_poll_only_with_a_cpu_left_free() {
        use spec::EngineKind::*;
        let qd1 = (1, DEFAULT_POLL_MAX_DEPTH);
        assert_eq!(poll_budget(100_000, IoUring, false, qd1, (1, 0), 2), 100_000);
        assert_eq!(poll_budget(100_000, IoUring, false, qd1, (3, 0), 4), 100_000);
        // Workers on every CPU: the kernel's completion work would have none.
        assert_eq!(poll_budget(100_000, IoUring, false, qd1, (2, 0), 2), 0);
        assert_eq!(poll_budget(100_000, IoUring, false, qd1, (1, 0), 1), 0);
        // An SQ-polling thread already takes a CPU; the other engines never wait on a ring.
        assert_eq!(poll_budget(100_000, IoUring, true, qd1, (1, 0), 4), 0);
        for e in [Psync, Null, Mem] {
            assert_eq!(poll_budget(100_000, e, false, qd1, (1, 0), 4), 0, "{e:?}");
        }
        assert_eq!(poll_budget(0, IoUring, false, qd1, (1, 0), 4), 0, "--poll-us 0");
    }

    #[test]
    fn deep_queues_sleep_unless_the_budget_was_asked_for() {
        use spec::EngineKind::IoUring;
        let d = DEFAULT_POLL_MAX_DEPTH;
        assert_eq!(poll_budget(100_000, IoUring, false, (8, d), (1, 0), 2), 100_000, "QD8 polls");
        assert_eq!(poll_budget(100_000, IoUring, false, (9, d), (1, 0), 2), 0, "QD9 sleeps");
        assert_eq!(poll_budget(100_000, IoUring, false, (32, d), (1, 0), 2), 0, "QD32 sleeps");
        // An explicit --poll-us lifts the depth limit, never the free-CPU one.
        assert_eq!(poll_budget(50_000, IoUring, false, (32, u32::MAX), (1, 0), 2), 50_000);
        assert_eq!(poll_budget(50_000, IoUring, false, (32, u32::MAX), (2, 0), 2), 0);
    }

    #[test]
    fn a_device_worked_by_a_kernel_thread_leaves_it_a_cpu() {
        use spec::EngineKind::IoUring;
        let d = DEFAULT_POLL_MAX_DEPTH;
        // One worker on two CPUs beside a loop device's worker: no CPU is free.
        assert_eq!(poll_budget(100_000, IoUring, false, (1, d), (1, 1), 2), 0);
        assert_eq!(poll_budget(100_000, IoUring, false, (1, d), (1, 1), 4), 100_000);
        // io_uring's kernel workers doing every request count too.
        assert_eq!(poll_budget(100_000, IoUring, false, (1, d), (1, 2), 3), 0);
        // An explicit budget is the user's to try beside them, never on every CPU.
        assert_eq!(poll_budget(50_000, IoUring, false, (1, u32::MAX), (1, 1), 2), 50_000);
        assert_eq!(poll_budget(50_000, IoUring, false, (1, u32::MAX), (2, 1), 2), 0);
        let mut j = null_job("n", 1 << 20);
        assert_eq!(j.kernel_threads(), 0, "the null engine has no device");
        j.device_thread = true;
        assert_eq!(j.kernel_threads(), 1);
        j.handoff = Some(stats::HandoffPolicy::Ring);
        assert_eq!(j.kernel_threads(), 2);
        j.handoff = Some(stats::HandoffPolicy::Threads);
        assert_eq!(j.kernel_threads(), 1, "on threads, the job's own workers do the I/O");
    }

    #[test]
    fn a_group_of_null_jobs_reports_each_job() {
        let jobs = [null_job("a", 1 << 20), null_job("b", 2 << 20)];
        let out = run_group(&jobs, false, &quiet(), &mut |_| {}).unwrap();
        assert!(out.error.is_none() && !out.interrupted);
        let ops: Vec<u64> = out.results.iter().map(|r| r.read.as_ref().unwrap().ops).collect();
        assert_eq!(ops, [256, 512], "each job reads its region once");
        let merged = run_group(&jobs, true, &quiet(), &mut |_| {}).unwrap();
        assert_eq!(merged.results.len(), 1);
        assert_eq!(merged.results[0].read.as_ref().unwrap().ops, 768);
    }

    fn timed(name: &str, runtime_ms: u64, f: impl FnOnce(&mut JobSpec)) -> BoundJob {
        let mut spec = JobSpec {
            name: name.into(),
            engine: EngineKind::Null,
            qd: 1,
            size: Some(1 << 20),
            time_based: true,
            runtime: Duration::from_millis(runtime_ms),
            rate_iops: Some(1000),
            ..JobSpec::default()
        };
        f(&mut spec);
        bind(&spec, None).unwrap()
    }

    #[test]
    fn startdelay_and_wait_for_start_jobs_late() {
        let jobs = [
            timed("a", 400, |_| {}),
            timed("b", 300, |j| j.flow.start_delay_ms = 250),
            timed("c", 200, |j| j.flow.wait_for = Some("a".into())),
        ];
        let t = Instant::now();
        let out = run_group(&jobs, false, &quiet(), &mut |_| {}).unwrap();
        let wall = t.elapsed();
        let start: Vec<Option<f64>> = out.results.iter().map(|r| r.start_s).collect();
        assert_eq!(start[0], None, "a starts with the group");
        let b = start[1].unwrap();
        assert!((0.25..0.30).contains(&b), "b starts 250 ms in: {b}");
        let c = start[2].unwrap();
        assert!((0.40..0.47).contains(&c), "c starts when a has finished: {c}");
        assert!(wall >= Duration::from_millis(600), "c runs 200 ms after a's 400: {wall:?}");
        // Each still runs its own runtime: 1000 IOPS for its window.
        let ops: Vec<u64> = out.results.iter().map(|r| r.read.as_ref().unwrap().ops).collect();
        for (o, want) in ops.iter().zip([400, 300, 200]) {
            assert!(o.abs_diff(want) <= 15, "{ops:?}");
        }
    }

    #[test]
    fn exitall_stops_the_group_when_its_job_ends() {
        let jobs = [timed("short", 200, |j| j.flow.exitall = true), timed("long", 5000, |_| {})];
        let t = Instant::now();
        let out = run_group(&jobs, false, &quiet(), &mut |_| {}).unwrap();
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        assert!(!out.interrupted && out.error.is_none());
        let long = out.results[1].read.as_ref().unwrap().ops;
        assert!((190..=260).contains(&long), "long ran about as long as short: {long}");
    }

    #[test]
    fn new_group_splits_group_reporting() {
        let mut jobs = vec![null_job("a", 1 << 20), null_job("b", 1 << 20), null_job("c", 2 << 20)];
        jobs[2].spec.flow.report_group = 1;
        assert_eq!(report_slots(&jobs.iter().map(|j| j.spec.clone()).collect::<Vec<_>>(), true), [0, 0, 1]);
        let out = run_group(&jobs, true, &quiet(), &mut |_| {}).unwrap();
        let ops: Vec<(String, u64)> =
            out.results.iter().map(|r| (r.name.clone(), r.read.as_ref().unwrap().ops)).collect();
        assert_eq!(ops, [("a".to_string(), 512), ("c".to_string(), 512)]);
        assert_eq!(out.results[0].spec.threads, 2);
    }

    #[test]
    fn log_windows_come_back_per_fio_thread() {
        let jobs = [timed("l", 300, |j| {
            j.threads = 2;
            j.flow.logs =
                Some(spec::FioLogs { bw: Some("x".into()), avg_ms: 100, per_job: true, ..Default::default() });
        })];
        let out = run_group(&jobs, false, &quiet(), &mut |_| {}).unwrap();
        let mut threads: Vec<usize> = out.logs.iter().map(|l| l.thread).collect();
        threads.sort();
        assert_eq!(threads, [0, 1]);
        for l in &out.logs {
            assert_eq!(l.samples.iter().map(|s| s.end_ms).collect::<Vec<_>>(), [100, 200, 300]);
        }
    }

    #[test]
    fn a_worker_fault_becomes_the_group_error() {
        let eio = platform::OsCode::of_class(platform::IoErrorClass::Media).unwrap();
        let ctl = RunControl { null_fault: Some(NullFault { after_ops: 10, code: eio }), ..quiet() };
        let out = run_group(&[null_job("f", 1 << 20)], false, &ctl, &mut |_| {}).unwrap();
        let e = out.error.unwrap();
        assert_eq!((e.kind.as_str(), e.job.as_deref()), ("eio", Some("f")));
        assert_eq!(out.results[0].error.as_ref().map(|e| e.kind.as_str()), Some("eio"));
        assert_eq!(out.results[0].read.as_ref().unwrap().ops, 10);
        assert!(!out.interrupted);
    }
}
