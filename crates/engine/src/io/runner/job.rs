//! What the runner's parts share: a job bound to its target, the run's controls, the live
//! tick, the log of a worker thread, the measured window, and the checks and facts a run
//! needs before it starts (memlock, allowed CPUs, io_uring set-up messages). Below the runner,
//! its collector and its spawner, so none of them reaches up into another.

#[cfg(target_os = "linux")]
use crate::error::Setup;
use crate::error::{Invalid, Result};
#[cfg(target_os = "linux")]
use crate::io::backend::uring::UringSetupError;
use crate::io::offsets::IoLens;
use crate::io::worker::LogSample;
use crate::target::fault::NullFault;
use platform::target::Raw;
use spec::{EngineKind, JobSpec, RwMode};
use stats::{ErrorInfo, JobResult, LatHist};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// A job bound to an open target, with its region resolved.
#[derive(Debug, Clone)]
pub struct BoundJob {
    /// The job as it will run (size resolved to the region length).
    pub spec: JobSpec,
    pub fd: Raw,
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
    pub files: Vec<Raw>,
    /// The probe before the run found that the target hands io_uring's requests to kernel
    /// workers, and how the job runs them: on threads of synchronous I/O (its engine is then
    /// psync) or on io_uring, every request handed off at once ([`crate::io::handoff::plan`]).
    /// `None`: no hand-off found, or not an io_uring job.
    pub handoff: Option<stats::HandoffPolicy>,
    /// The flags its handle was opened with, for an engine that opens its own per worker
    /// ([`platform::target::reopen_flags`]; 0 on Linux).
    pub flags: u32,
    /// The target's own I/O runs on a kernel thread that needs a CPU of this machine: a loop
    /// device (its worker reads and copies the backing file), alone or under a file system.
    /// A polling worker holds the CPU that thread needs ([`poll_budget`]).
    pub device_thread: bool,
}

impl BoundJob {
    /// CPUs the kernel's threads take to do this job's I/O: the device's own worker (a loop
    /// device) and io_uring's kernel workers where every request is handed to them.
    pub fn kernel_threads(&self) -> usize {
        usize::from(self.device_thread) + usize::from(self.handoff == Some(stats::HandoffPolicy::Ring))
    }
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
    /// Where a probe finds that the target hands io_uring's requests to kernel workers: serve
    /// the queue depth with threads of synchronous I/O ([`stats::HandoffPolicy::Threads`], the
    /// default) or keep io_uring and place its workers ([`crate::io::handoff`]).
    pub handoff: stats::HandoffPolicy,
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
/// group's `workers`, with the `kernel` threads doing their I/O ([`BoundJob::kernel_threads`]),
/// leave at least one of the `cpus` free, else 0 (an explicit budget, `max_depth` =
/// `u32::MAX`, counts the workers alone). Polling workers on every CPU would starve
/// the kernel threads that complete their I/O; so would a deep queue's polling worker on a
/// machine whose completion work takes more than the free CPUs. Measured on a RAM-backed
/// loop device (2 vCPUs, one worker, 3 interleaved rounds): polling beside the loop
/// device's worker gave 4 166–4 513 1 MiB Q8 reads a second at 107–114 µs of CPU per I/O,
/// sleeping 5 026–5 393 at 12–15 µs; at 4k QD 1 the two were level (47–52 k against
/// 46–57 k) at 19–21 µs of CPU per I/O against 7–9.
pub fn poll_budget(
    poll_ns: u64,
    engine: spec::EngineKind,
    offload: bool,
    (depth, max_depth): (u32, u32),
    (workers, kernel): (usize, usize),
    cpus: usize,
) -> u64 {
    // An explicit budget (no depth limit) is the user's to try beside the kernel's threads;
    // never on every CPU.
    let busy = if max_depth == u32::MAX { workers } else { workers + kernel };
    if engine == spec::EngineKind::IoUring && !offload && depth <= max_depth && busy < cpus {
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
            handoff: stats::HandoffPolicy::Threads,
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

pub(super) fn is_mixed(s: &JobSpec) -> bool {
    matches!(s.rw, RwMode::RandRw | RwMode::ReadWrite) && s.mix > 0 && s.mix < 100
}

/// RLIMIT_MEMLOCK applies to io_uring registered buffers unless we hold CAP_IPC_LOCK.
/// `need` is the pinned bytes of the largest group (see [`pinned_bytes`]).
pub fn check_memlock(need: u64, register: bool) -> Result<()> {
    if !register {
        return Ok(());
    }
    if need == 0 || platform::mem::memlock_unlimited() {
        return Ok(());
    }
    let Some(limit) = platform::cpu::memlock_limit() else {
        return Ok(());
    };
    if need > limit {
        return Err(Invalid::Memlock { limit, need }.into());
    }
    Ok(())
}

/// CPUs this process may run on (taskset, cgroup cpusets), highest first: CPU 0 usually
/// takes most interrupts and housekeeping, so workers start at the other end.
pub fn allowed_cpus() -> Vec<usize> {
    platform::cpu::allowed_cpus()
}

/// What went wrong setting up a ring (queue depth `depth`); [`Setup::is_usage`] says whether
/// the user can fix it by changing the command (exit 2) rather than it being a fault (exit 1).
#[cfg(target_os = "linux")]
pub fn uring_setup(e: UringSetupError, depth: u32) -> Setup {
    use platform::error::Errno;
    match e {
        UringSetupError::Buffers(e) if Errno::of(&e) == Some(Errno::ENOMEM) => Setup::UringPin,
        UringSetupError::Buffers(e) => Setup::UringRegister(e),
        UringSetupError::Ring { error, .. }
            if matches!(Errno::of(&error), Some(Errno::ENOSYS) | Some(Errno::EPERM)) =>
        {
            Setup::UringUnavailable(error)
        }
        UringSetupError::Ring { entries, error } if Errno::of(&error) == Some(Errno::ENOMEM) => {
            Setup::UringRingMemory { entries, depth }
        }
        UringSetupError::Ring { entries, error } => Setup::UringRing { entries, depth, error },
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
