//! Runs a group of jobs concurrently and turns worker output into results.
//!
//! One group's way: check the pinned memory, lay the jobs out as workers (`spawn`),
//! start one thread each and release them together, collect their one-second intervals
//! until all are done (`collect`), then make one result per report slot (`results`).

mod collect;
mod results;
mod spawn;

use crate::error::{EngineError, Result};
use crate::io::backend::UringSetupError;
use crate::io::offsets::IoLens;
use crate::io::worker::{Interval, Live, LogSample, Msg};
use crate::target::fault::NullFault;
use crate::target::{self, OpenTarget};
use collect::{Collector, Inbox, WindowGate};
use spawn::WorkerSetup;
use spec::{EngineKind, JobSpec, RwMode};
use stats::{ErrorInfo, JobResult, LatHist};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

/// A job bound to an open target, with its region resolved.
#[derive(Debug, Clone)]
pub struct BoundJob {
    /// The job as it will run (size resolved to the region length).
    pub spec: JobSpec,
    pub fd: RawFd,
    pub region_offset: u64,
    pub region_len: u64,
    /// Buffer alignment (≥ the target's DIO memory alignment).
    pub mem_align: usize,
    /// The length of each I/O (`spec.bs`, or the job's variable block sizes).
    pub lens: IoLens,
    /// Where the device's own counters for this job can be read (`None`: not a device target,
    /// e.g. the null engine).
    pub watch: Option<crate::target::devview::Watch>,
    /// `--verify`: the job's table of chunk generations, shared by its workers.
    pub verify: Option<Arc<crate::io::verifier::VerifyJob>>,
    /// A job over several files (`spec.files`): every file's descriptor in the spec's order
    /// (`fd` is the first). Empty: `fd` alone.
    pub files: Vec<RawFd>,
}

/// Run-wide switches.
#[derive(Clone)]
pub struct RunControl {
    pub stop: Arc<AtomicBool>,
    pub register_buffers: bool,
    /// Test hook: fail null-engine I/O after N operations (acted on only in a build with
    /// fault injection; see [`crate::target::fault::null_fault_from_env`]).
    pub null_fault: Option<NullFault>,
    /// Test hook: the write faults of `DISKMETER_FAULTS` (drop, misdirect, torn, zero, flip),
    /// applied to every file or device job's writes (see [`crate::target::fault::Faulty`]).
    pub write_faults: Option<Arc<crate::target::fault::Hook>>,
    /// Pin each worker thread to one allowed CPU, round-robin. Placement by the scheduler
    /// moves a QD1 worker next to the completing kernel thread and costs up to a third of
    /// the IOPS of a fast device.
    pub pin_workers: bool,
    /// An io_uring worker waiting for completions polls its ring this long before it sleeps
    /// (0 = sleep at once, as fio does by default). Polling is a memory read per check; the
    /// kernel is entered only when a completion is there. A sleeping waiter adds its own
    /// wake-up to every latency it measures, and on a VM that wake-up depends on where the
    /// scheduler put the threads: a fast device's QD1 figure varied by half from run to run.
    /// Only when the run's workers leave a CPU free for the kernel's completion work, and
    /// only for workers of at most [`RunControl::poll_max_depth`] I/Os in flight (see
    /// [`poll_budget`]).
    pub poll_ns: u64,
    /// The deepest worker that polls ([`DEFAULT_POLL_MAX_DEPTH`] by default; `u32::MAX` when
    /// the user set the budget explicitly: then every depth polls).
    pub poll_max_depth: u32,
    /// Keep lossless histograms (the whole window's and each second's) and the window's
    /// wall-clock times in the results, so that results of several hosts can be merged.
    pub keep_histograms: bool,
}

/// [`RunControl::poll_ns`] by default: 100 µs. Past that, a wake-up's few microseconds are
/// a small part of the latency, and a slow device's waits cost little CPU.
pub const DEFAULT_POLL_NS: u64 = 100_000;

/// [`RunControl::poll_max_depth`] by default: workers of up to 8 I/Os in flight poll.
///
/// Deeper queues complete often enough that a sleeping waiter is woken seldom for what it
/// gets, and the kernel's completion work needs the CPU a polling worker holds. Measured on
/// a RAM-backed loop device (2 vCPUs, 4k randread, medians of 5–6 interleaved runs):
/// polling against sleeping gave 2.0× the IOPS at QD2, 1.14–1.4× at QD4, 1.0–1.1× at QD8,
/// 1.00× at QD16 and 0.88× at QD32 (a 5 or 20 µs budget did no better there).
pub const DEFAULT_POLL_MAX_DEPTH: u32 = 8;

/// The polling budget of a job's workers: `poll_ns` for io_uring workers submitting
/// themselves (no SQ-polling thread) of at most `max_depth` I/Os in flight when the
/// group's `workers` leave at least one of the `cpus` free, else 0. Polling workers on every
/// CPU would starve the kernel threads that complete their I/O; so would a deep queue's
/// polling worker on a machine whose completion work takes more than the free CPUs.
pub fn poll_budget(
    poll_ns: u64,
    engine: spec::EngineKind,
    offload: bool,
    (depth, max_depth): (u32, u32),
    workers: usize,
    cpus: usize,
) -> u64 {
    if engine == spec::EngineKind::IoUring && !offload && depth <= max_depth && workers < cpus {
        poll_ns
    } else {
        0
    }
}

impl Default for RunControl {
    fn default() -> Self {
        Self {
            stop: Arc::new(AtomicBool::new(false)),
            register_buffers: true,
            null_fault: None,
            write_faults: None,
            pin_workers: true,
            poll_ns: DEFAULT_POLL_NS,
            poll_max_depth: DEFAULT_POLL_MAX_DEPTH,
            keep_histograms: false,
        }
    }
}

/// Why the progress callback is called.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum TickKind {
    /// Live figures, every 250 ms from the start.
    #[default]
    Live,
    /// Every worker is ready; they are released (and the group's clock starts) as soon as
    /// the callback returns. Several processes meet here to start together; raising the
    /// stop flag now ends the group before any I/O.
    Release,
}

/// What a progress callback sees, about four times a second.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tick {
    pub kind: TickKind,
    /// The group's longest ramp (the measured window starts this long after the release).
    pub ramp: Duration,
    pub elapsed: Duration,
    /// Ramp + runtime; zero when the run ends on a byte count.
    pub planned: Duration,
    pub ramping: bool,
    pub read_iops: f64,
    pub write_iops: f64,
    pub read_mb_s: f64,
    pub write_mb_s: f64,
}

pub struct GroupOutcome {
    pub results: Vec<JobResult>,
    pub error: Option<ErrorInfo>,
    pub interrupted: bool,
    /// The averaged log windows (fio `log_avg_msec`) of each job's fio threads.
    pub logs: Vec<ThreadLog>,
}

/// One fio thread's log windows (a job's worker; with psync, the `qd` workers that stand for
/// one fio thread, merged).
#[derive(Debug, Clone, Default)]
pub struct ThreadLog {
    /// The job's index in the group.
    pub job: usize,
    /// The fio thread within the job (0..numjobs).
    pub thread: usize,
    pub samples: Vec<LogSample>,
    /// fio's per-I/O log (`log_avg_msec=0`): every measured completion of the thread, in
    /// completion order.
    pub ios: Vec<crate::io::worker::IoLogEntry>,
    /// Some completions were not logged (a worker reached [`crate::io::worker::IO_LOG_MAX`]).
    pub ios_cut: bool,
}

/// The report slot of each job: its own, or with group reporting one per reporting group
/// (fio `new_group`), numbered in order of appearance.
pub fn report_slots(jobs: &[JobSpec], group_reporting: bool) -> Vec<usize> {
    if !group_reporting {
        return (0..jobs.len()).collect();
    }
    let mut seen: Vec<u32> = Vec::new();
    jobs.iter()
        .map(|j| match seen.iter().position(|&g| g == j.flow.report_group) {
            Some(i) => i,
            None => {
                seen.push(j.flow.report_group);
                seen.len() - 1
            }
        })
        .collect()
}

/// Bytes the registered buffers of concurrently running jobs pin in memory.
pub fn pinned_bytes<'a>(jobs: impl IntoIterator<Item = &'a JobSpec>) -> u64 {
    jobs.into_iter()
        .filter(|j| j.engine == EngineKind::IoUring)
        .map(|j| {
            let split = if is_mixed(j) { 2 } else { 1 };
            j.bs * j.qd as u64 * split * j.threads as u64
        })
        .sum()
}

fn is_mixed(s: &JobSpec) -> bool {
    matches!(s.rw, RwMode::RandRw | RwMode::ReadWrite) && s.mix > 0 && s.mix < 100
}

/// RLIMIT_MEMLOCK applies to io_uring registered buffers unless we hold CAP_IPC_LOCK.
/// `need` is the pinned bytes of the largest group (see [`pinned_bytes`]).
pub fn check_memlock(need: u64, register: bool) -> Result<()> {
    if !register {
        return Ok(());
    }
    if need == 0 || has_cap_ipc_lock() {
        return Ok(());
    }
    let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: valid out-pointer for getrlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) } != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
        return Ok(());
    }
    if need > lim.rlim_cur {
        return Err(EngineError::Invalid(format!(
            "RLIMIT_MEMLOCK ({} KiB) is too small for the io_uring registered buffers ({} KiB = bs × qd × threads); \
             raise it (`ulimit -l {}`), lower --qd/--bs, or add --no-register-buffers",
            lim.rlim_cur / 1024,
            need.div_ceil(1024),
            need.div_ceil(1024) + 1024
        )));
    }
    Ok(())
}

fn has_cap_ipc_lock() -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("CapEff:")).and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

/// CPUs this process may run on (taskset, cgroup cpusets), highest first: CPU 0 usually
/// takes most interrupts and housekeeping, so workers start at the other end.
pub fn allowed_cpus() -> Vec<usize> {
    // SAFETY: zeroed cpu_set_t is a valid out-parameter of the right size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: pid 0 = this thread; the size matches the set.
    let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } == 0;
    if !ok {
        return Vec::new();
    }
    // SAFETY: indices below CPU_SETSIZE are in bounds.
    (0..libc::CPU_SETSIZE as usize).rev().filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
}

/// The one-line message for a ring that could not be set up, and whether the user can fix
/// it by changing the command (exit 2) rather than it being a fault (exit 1).
pub fn uring_setup_message(e: &UringSetupError, depth: u32) -> (String, bool) {
    match e {
        UringSetupError::Buffers(e) if e.raw_os_error() == Some(libc::ENOMEM) => (
            "io_uring could not pin the registered buffers (ENOMEM): raise RLIMIT_MEMLOCK \
             (`ulimit -l`), lower --qd/--bs, or add --no-register-buffers"
                .to_string(),
            true,
        ),
        UringSetupError::Buffers(e) => {
            (format!("io_uring could not register the I/O buffers ({e}); add --no-register-buffers"), false)
        }
        UringSetupError::Ring { error, .. }
            if matches!(error.raw_os_error(), Some(libc::ENOSYS) | Some(libc::EPERM)) =>
        {
            (format!("io_uring is not available here ({error}); use --engine psync"), true)
        }
        UringSetupError::Ring { entries, error } if error.raw_os_error() == Some(libc::ENOMEM) => (
            format!(
                "io_uring could not allocate a ring of {entries} entries for --qd {depth} (ENOMEM): the kernel is \
                 short of memory, or (before Linux 5.12) RLIMIT_MEMLOCK is too small for the ring; lower --qd, \
                 or raise `ulimit -l`"
            ),
            true,
        ),
        UringSetupError::Ring { entries, error } => (
            format!("io_uring setup of a {entries}-entry ring for --qd {depth} failed: {error}; try --engine psync"),
            false,
        ),
    }
}

/// One finished measurement interval (one second) of one report slot, as the collector
/// merged it from every worker.
pub struct Window<'a> {
    /// Report slot: the job index (or 0 with group reporting).
    pub slot: usize,
    /// 0-based second of the measured phase.
    pub index: i64,
    pub read: &'a LatHist,
    pub write: &'a LatHist,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

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
    check_memlock(pinned_bytes(jobs.iter().map(|j| &j.spec)), ctl.register_buffers)?;
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

/// The wall clock now, Unix time in nanoseconds.
pub fn unix_ns_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}

/// Resolve a job's region against its open target.
pub fn bind(job: &JobSpec, t: Option<&OpenTarget>) -> Result<BoundJob> {
    let (fd, size, align, lb) = match t {
        Some(t) => (
            t.file.as_raw_fd(),
            t.probe.size_bytes,
            target::mem_align(&t.probe),
            if job.direct { target::direct_block(&t.probe) } else { 1 },
        ),
        None => (-1, job.offset + job.size.unwrap_or(1 << 30), 4096, 1),
    };
    // fio's fill_fs on a file: the region runs on past the file's end by the file system's
    // free space; writes extend the file until one finds the file system full.
    let size = match t {
        Some(t) if job.fill && t.probe.kind == crate::target::probe::TargetKind::File => {
            let free = rustix::fs::fstatvfs(&t.file).map_or(0, |v| v.f_bavail.saturating_mul(v.f_frsize));
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
        return Err(EngineError::Invalid(format!(
            "--offset {} is not a multiple of the logical block size ({lb} bytes) that direct I/O requires",
            job.offset
        )));
    }
    if job.offset >= size {
        return Err(EngineError::Invalid(format!(
            "--offset {} is at or past the end of the target ({size} bytes); lower it",
            job.offset
        )));
    }
    let wanted = if job.fill { None } else { job.size }; // a fill runs to the end
                                                         // offset_increment: the last worker's region starts this much further on.
    let spread = job.offset_increment.saturating_mul(u64::from(job.threads.max(1) - 1));
    if spread > 0 && job.offset + spread >= size {
        return Err(EngineError::Invalid(format!(
            "offset_increment={} puts the last of {} workers at or past the end of the target ({size} bytes); lower it",
            job.offset_increment, job.threads
        )));
    }
    let room = size - job.offset - spread;
    let len = wanted.unwrap_or(room).min(room);
    let len = len / job.bs * job.bs;
    if len == 0 {
        return Err(EngineError::Invalid(format!(
            "the test region ({} bytes from offset {}) is smaller than one block (--bs {}); raise --size",
            job.size.unwrap_or(size - job.offset),
            job.offset,
            job.bs
        )));
    }
    if let Some(b) = &job.block_sizes {
        for d in [&b.read, &b.write] {
            if let Some(bad) = d.sizes.named().into_iter().chain(d.align).find(|v| !v.is_multiple_of(lb)) {
                return Err(EngineError::Invalid(format!(
                    "block size or alignment {bad} is not a multiple of the logical block size ({lb} bytes) that \
                     direct I/O requires; use multiples of {lb} (e.g. bssplit=4k/50:64k/50) or direct=0"
                )));
            }
        }
    }
    let lens = IoLens::for_job(job.bs, job.block_sizes.as_ref(), lb).map_err(EngineError::Invalid)?;
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
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::target::fault::NullFault;

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
        assert_eq!(poll_budget(100_000, IoUring, false, qd1, 1, 2), 100_000);
        assert_eq!(poll_budget(100_000, IoUring, false, qd1, 3, 4), 100_000);
        // Workers on every CPU: the kernel's completion work would have none.
        assert_eq!(poll_budget(100_000, IoUring, false, qd1, 2, 2), 0);
        assert_eq!(poll_budget(100_000, IoUring, false, qd1, 1, 1), 0);
        // An SQ-polling thread already takes a CPU; the other engines never wait on a ring.
        assert_eq!(poll_budget(100_000, IoUring, true, qd1, 1, 4), 0);
        for e in [Psync, Null, Mem] {
            assert_eq!(poll_budget(100_000, e, false, qd1, 1, 4), 0, "{e:?}");
        }
        assert_eq!(poll_budget(0, IoUring, false, qd1, 1, 4), 0, "--poll-us 0");
    }

    #[test]
    fn deep_queues_sleep_unless_the_budget_was_asked_for() {
        use spec::EngineKind::IoUring;
        let d = DEFAULT_POLL_MAX_DEPTH;
        assert_eq!(poll_budget(100_000, IoUring, false, (8, d), 1, 2), 100_000, "QD8 polls");
        assert_eq!(poll_budget(100_000, IoUring, false, (9, d), 1, 2), 0, "QD9 sleeps");
        assert_eq!(poll_budget(100_000, IoUring, false, (32, d), 1, 2), 0, "QD32 sleeps");
        // An explicit --poll-us lifts the depth limit, never the free-CPU one.
        assert_eq!(poll_budget(50_000, IoUring, false, (32, u32::MAX), 1, 2), 50_000);
        assert_eq!(poll_budget(50_000, IoUring, false, (32, u32::MAX), 2, 2), 0);
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
        let ctl = RunControl { null_fault: Some(NullFault { after_ops: 10, errno: libc::EIO }), ..quiet() };
        let out = run_group(&[null_job("f", 1 << 20)], false, &ctl, &mut |_| {}).unwrap();
        let e = out.error.unwrap();
        assert_eq!((e.kind.as_str(), e.job.as_deref()), ("eio", Some("f")));
        assert_eq!(out.results[0].error.as_ref().map(|e| e.kind.as_str()), Some("eio"));
        assert_eq!(out.results[0].read.as_ref().unwrap().ops, 10);
        assert!(!out.interrupted);
    }
}
