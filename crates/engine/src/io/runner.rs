//! Runs a group of jobs concurrently and turns worker output into results.

use crate::error::{EngineError, Result};
use crate::io::backend::{BackendConfig, Null, NullFault, Psync, Uring, UringSetupError};
use crate::io::buffers::BufferPool;
use crate::io::mem::{Mem, MemRegion};
use crate::io::offsets::{worker_rng, OffsetGen};
use crate::io::worker::{self, Channels, Interval, Live, Msg, WorkerEnd, WorkerPlan, SEC};
use crate::target::devview;
use crate::target::{self, OpenTarget};
use spec::{EngineKind, JobSpec, RwMode};
use stats::{CpuUsage, DirStats, ErrorInfo, JobResult, LatHist, SeriesPoint};
use std::collections::{BTreeMap, VecDeque};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
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
    /// Where the device's own counters for this job can be read (`None`: not a device target,
    /// e.g. the null engine).
    pub watch: Option<crate::target::devview::Watch>,
}

/// Run-wide switches.
#[derive(Clone)]
pub struct RunControl {
    pub stop: Arc<AtomicBool>,
    pub register_buffers: bool,
    /// Test hook: fail null-engine I/O after N operations (acted on only in a build with
    /// fault injection; see [`crate::target::fault::null_fault_from_env`]).
    pub null_fault: Option<NullFault>,
    /// Pin each worker thread to one allowed CPU, round-robin. Placement by the scheduler
    /// moves a QD1 worker next to the completing kernel thread and costs up to a third of
    /// the IOPS of a fast device.
    pub pin_workers: bool,
}

impl Default for RunControl {
    fn default() -> Self {
        Self { stop: Arc::new(AtomicBool::new(false)), register_buffers: true, null_fault: None, pin_workers: true }
    }
}

/// What a progress callback sees, about four times a second.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tick {
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
}

/// Per report slot (a job, or a whole group with group_reporting): running merge.
struct Slot {
    workers: usize,
    last_index: Vec<i64>,
    done: Vec<bool>,
    base: i64,
    pending: VecDeque<Box<Interval>>,
    total_read: LatHist,
    total_write: LatHist,
    read_bytes: u64,
    write_bytes: u64,
    series: Vec<SeriesPoint>,
    ends: Vec<WorkerEnd>,
}

#[allow(clippy::vec_box)] // intervals travel between threads as boxes; keep them boxed
impl Slot {
    fn new(workers: usize) -> Self {
        Self {
            workers,
            last_index: vec![-2; workers],
            done: vec![false; workers],
            base: 0,
            pending: VecDeque::new(),
            total_read: LatHist::new(),
            total_write: LatHist::new(),
            read_bytes: 0,
            write_bytes: 0,
            series: Vec::new(),
            ends: Vec::new(),
        }
    }

    fn add(&mut self, iv: &Interval, spare: &mut Vec<Box<Interval>>) {
        if iv.index < self.base {
            return; // already finalised (cannot happen with in-order workers); be safe
        }
        while self.base + (self.pending.len() as i64) <= iv.index {
            let mut fresh = spare.pop().unwrap_or_else(Interval::new);
            fresh.clear();
            fresh.index = self.base + self.pending.len() as i64;
            self.pending.push_back(fresh);
        }
        let acc = &mut self.pending[(iv.index - self.base) as usize];
        acc.read.add(&iv.read);
        acc.write.add(&iv.write);
        acc.read_bytes += iv.read_bytes;
        acc.write_bytes += iv.write_bytes;
    }

    /// Finalise every interval that all live workers have moved past.
    fn finalize(&mut self, force: bool, spare: &mut Vec<Box<Interval>>, on_window: &mut dyn FnMut(&Interval)) {
        let horizon =
            (0..self.workers).filter(|&w| !self.done[w]).map(|w| self.last_index[w]).min().unwrap_or(i64::MAX);
        while let Some(front) = self.pending.front() {
            if !force && front.index >= horizon {
                break;
            }
            let Some(iv) = self.pending.pop_front() else { break };
            self.total_read.add(&iv.read);
            self.total_write.add(&iv.write);
            self.read_bytes += iv.read_bytes;
            self.write_bytes += iv.write_bytes;
            // Series points are finished below, once the measured length is known.
            self.series.push(SeriesPoint::from_interval(
                (iv.index + 1) as f64,
                1.0,
                (&iv.read, iv.read_bytes),
                (&iv.write, iv.write_bytes),
            ));
            self.base = iv.index + 1;
            on_window(&iv);
            spare.push(iv);
        }
    }
}

fn build_backend_cfg(fd: RawFd, depth: u32, pool: &BufferPool, register: bool) -> BackendConfig {
    let buffers = if register && pool.slots() <= 16_384 {
        Some(
            (0..pool.slots())
                .map(|i| libc::iovec { iov_base: pool.slot_ptr(i).cast(), iov_len: pool.slot_len() })
                .collect(),
        )
    } else {
        None
    };
    BackendConfig { fd, depth, buffers, register_file: true }
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

fn rusage_self() -> (u64, u64) {
    // SAFETY: zeroed rusage is a valid out-parameter.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: valid pointer.
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    (us(ru.ru_utime), us(ru.ru_stime))
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

fn pin_current_thread(cpu: usize) {
    // SAFETY: zeroed cpu_set_t is valid; cpu < CPU_SETSIZE (it came from allowed_cpus).
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut set);
        // Best effort: a failure only leaves the thread where the scheduler put it.
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
    }
}

struct WorkerSetup {
    /// CPU to pin this worker to (None = let the scheduler place it).
    cpu: Option<usize>,
    plan: WorkerPlan,
    engine: EngineKind,
    fd: RawFd,
    pool_slots: usize,
    mem_align: usize,
    spec_data: spec::DataPattern,
    rw: RwMode,
    mix: u8,
    dist: spec::Distribution,
    nblocks: u64,
    workers_in_job: usize,
    /// This worker's index within its job (0..workers_in_job).
    job_worker: usize,
    seed: u64,
    /// The job's region (mem engine only).
    mem: Option<Arc<MemRegion>>,
}

fn worker_thread(
    setup: WorkerSetup,
    ctl: &RunControl,
    tx: Sender<Msg>,
    recycle: mpsc::Receiver<Box<Interval>>,
    live: Arc<Live>,
    barrier: &Barrier,
    start: &OnceLock<Instant>,
) {
    let job = setup.plan.job;
    let worker = setup.plan.worker;
    if let Some(cpu) = setup.cpu {
        pin_current_thread(cpu);
    }
    let fail = |msg: String, usage: bool, tx: &Sender<Msg>| {
        let end = WorkerEnd { setup_error: Some(msg), setup_error_usage: usage, ..Default::default() };
        let _ = tx.send(Msg::Done { job, worker, end: Box::new(end) });
    };
    let prepared = (|| -> std::result::Result<_, (String, bool)> {
        let mut pool = BufferPool::new(setup.pool_slots, setup.plan.bs as usize, setup.mem_align)
            .ok_or_else(|| ("cannot allocate I/O buffers: lower --qd or --bs".to_string(), true))?;
        let mut rng = worker_rng(setup.seed ^ 0xb0f, job, worker);
        pool.fill(setup.spec_data, &mut rng);
        let gen = OffsetGen::new(
            setup.rw,
            setup.mix,
            &setup.dist,
            setup.nblocks,
            worker,
            setup.workers_in_job,
            worker_rng(setup.seed, job, worker),
        );
        Ok((pool, gen))
    })();
    let (mut pool, mut gen) = match prepared {
        Ok(v) => v,
        Err((m, u)) => {
            ctl.stop.store(true, Ordering::Relaxed);
            barrier.wait();
            barrier.wait();
            return fail(m, u, &tx);
        }
    };
    let cfg = build_backend_cfg(setup.fd, setup.plan.depth, &pool, ctl.register_buffers);
    let ch = Channels { tx: tx.clone(), recycle, live, stop: ctl.stop.clone() };

    macro_rules! go {
        ($backend:expr) => {{
            let mut b = $backend;
            barrier.wait();
            barrier.wait();
            let mut plan = setup.plan;
            if let Some(t) = start.get() {
                plan.t_start = *t;
            }
            let end = worker::run(&plan, &mut b, &mut pool, &mut gen, &ch);
            drop(b); // unregister buffers before the pool goes away
            let _ = tx.send(Msg::Done { job, worker, end: Box::new(end) });
        }};
    }
    match setup.engine {
        EngineKind::IoUring => match Uring::new(&cfg) {
            Ok(b) => go!(b),
            Err(e) => {
                ctl.stop.store(true, Ordering::Relaxed);
                barrier.wait();
                barrier.wait();
                let (msg, usage) = uring_setup_message(&e, setup.plan.depth);
                fail(msg, usage, &tx)
            }
        },
        EngineKind::Psync => go!(Psync::new(&cfg)),
        EngineKind::Null => go!(Null::new(&cfg, ctl.null_fault)),
        EngineKind::Mem => match setup.mem.clone() {
            Some(region) => {
                go!(Mem::new(&cfg, region, setup.plan.region_offset, setup.job_worker, setup.workers_in_job))
            }
            None => {
                ctl.stop.store(true, Ordering::Relaxed);
                barrier.wait();
                barrier.wait();
                fail("the mem engine's region is missing".into(), false, &tx)
            }
        },
    }
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
    // Workers watch their own stop flag: set by the user's (Ctrl-C, forwarded below), by
    // `on_window`, or by a worker that failed to start.
    let user_stop = ctl.stop.clone();
    let ctl = &RunControl { stop: Arc::new(AtomicBool::new(user_stop.load(Ordering::Relaxed))), ..ctl.clone() };
    let end_early = std::cell::Cell::new(false);
    let mut window_hook = |slot: usize, iv: &Interval| {
        if iv.index >= 0 && !end_early.get() {
            let w = Window {
                slot,
                index: iv.index,
                read: &iv.read,
                write: &iv.write,
                read_bytes: iv.read_bytes,
                write_bytes: iv.write_bytes,
            };
            if !on_window(&w) {
                end_early.set(true);
            }
        }
    };
    check_memlock(pinned_bytes(jobs.iter().map(|j| &j.spec)), ctl.register_buffers)?;
    let slot_of = |j: usize| if group_reporting { 0 } else { j };
    let nslots = if group_reporting { 1.min(jobs.len()) } else { jobs.len() };

    // Worker layout: psync serves depth with threads (one synchronous I/O each).
    let mut setups = Vec::new();
    let cpus = if ctl.pin_workers { allowed_cpus() } else { Vec::new() };
    let mut slot_workers = vec![0usize; nslots];
    // Mem-engine regions: allocated and touched here, before any worker starts.
    let regions = crate::io::mem::job_regions(jobs)?;
    for (ji, j) in jobs.iter().enumerate() {
        let s = &j.spec;
        let (workers, depth) = match s.engine {
            EngineKind::Psync => ((s.threads * s.qd) as usize, 1u32),
            _ => (s.threads as usize, s.qd),
        };
        let nblocks = j.region_len / s.bs;
        let per_worker_limit =
            if s.time_based { None } else { Some(j.region_len / workers as u64).map(|l| l.max(s.bs)) };
        let rate = s.rate_iops.map(|r| r as f64 / workers as f64);
        for w in 0..workers {
            let plan = WorkerPlan {
                job: ji,
                worker: slot_workers[slot_of(ji)],
                depth,
                bs: s.bs as u32,
                region_offset: j.region_offset,
                data: s.data,
                fsync_every: s.fsync,
                rate_iops: rate,
                t_start: Instant::now(),
                ramp_ns: s.ramp.as_nanos() as u64,
                runtime_ns: if s.runtime.is_zero() { u64::MAX } else { s.runtime.as_nanos() as u64 },
                byte_limit: per_worker_limit,
                split_buffers: is_mixed(s),
                submit_batch: s.submit_batch.max(1),
            };
            slot_workers[slot_of(ji)] += 1;
            let cpu = (!cpus.is_empty()).then(|| cpus[setups.len() % cpus.len()]);
            setups.push(WorkerSetup {
                cpu,
                pool_slots: depth as usize * if is_mixed(s) { 2 } else { 1 },
                plan,
                engine: s.engine,
                fd: j.fd,
                mem_align: j.mem_align,
                spec_data: s.data,
                rw: s.rw,
                mix: s.mix,
                dist: s.dist.clone(),
                nblocks,
                workers_in_job: workers,
                job_worker: w,
                seed: s.seed,
                mem: regions[ji].clone(),
            });
        }
    }
    let total_workers = setups.len();
    let mut slots: Vec<Slot> = slot_workers.iter().map(|&n| Slot::new(n)).collect();
    let planned = jobs
        .iter()
        .map(|j| if j.spec.runtime.is_zero() { Duration::ZERO } else { j.spec.ramp + j.spec.runtime })
        .max()
        .unwrap_or_default();
    let ramp = jobs.iter().map(|j| j.spec.ramp).max().unwrap_or_default();

    let (tx, rx) = mpsc::channel::<Msg>();
    let barrier = Barrier::new(total_workers + 1);
    let start = OnceLock::new();
    let lives: Vec<Arc<Live>> = (0..total_workers).map(|_| Arc::new(Live::default())).collect();
    let mut recycle_tx = Vec::with_capacity(total_workers);
    let mut recycle_rx = Vec::with_capacity(total_workers);
    for _ in 0..total_workers {
        let (t, r) = mpsc::channel::<Box<Interval>>();
        recycle_tx.push(t);
        recycle_rx.push(r);
    }
    // (job, slot-local worker) → global worker index, for recycling.
    let global_index: Vec<(usize, usize)> = setups.iter().map(|s| (slot_of(s.plan.job), s.plan.worker)).collect();
    let mut spare: Vec<Box<Interval>> = Vec::new();
    let ru0 = rusage_self();
    let mut error: Option<ErrorInfo> = None;
    let mut usage_error: Option<String> = None;
    let mut wall = Duration::ZERO;
    // Devices to watch, and their counters at the start and the end of the measured window.
    let mut watched: Vec<String> = jobs
        .iter()
        .filter_map(|j| match &j.watch {
            Some(devview::Watch::Device { name, .. }) => Some(name.clone()),
            _ => None,
        })
        .collect();
    watched.sort();
    watched.dedup();
    let mut edge0: Option<(Instant, BTreeMap<String, stats::DiskCounters>)> = None;
    let mut edge1: Option<(Instant, BTreeMap<String, stats::DiskCounters>)> = None;

    std::thread::scope(|scope| {
        for (setup, (rrx, live)) in setups.into_iter().zip(recycle_rx.into_iter().zip(lives.iter().cloned())) {
            let tx = tx.clone();
            let barrier = &barrier;
            let start = &start;
            let ctl = ctl.clone();
            std::thread::Builder::new()
                .name(format!("dm-worker-{}-{}", setup.plan.job, setup.plan.worker))
                .spawn_scoped(scope, move || worker_thread(setup, &ctl, tx, rrx, live, barrier, start))
                .map_err(|e| EngineError::io("cannot start a worker thread", e))?;
        }
        drop(tx);
        barrier.wait();
        let t_start = Instant::now();
        let _ = start.set(t_start);
        if ramp.is_zero() {
            edge0 = Some((Instant::now(), devview::snapshot(&watched)));
        }
        barrier.wait();

        let mut done = 0usize;
        let mut last_tick = Instant::now();
        let mut last_counts = (0u64, 0u64, 0u64, 0u64);
        while done < total_workers {
            // The device's counters are read right at the end of the ramp.
            let wait = match edge0 {
                None => (t_start + ramp).saturating_duration_since(Instant::now()).min(Duration::from_millis(50)),
                Some(_) => Duration::from_millis(50),
            };
            if edge0.is_none() && t_start.elapsed() >= ramp {
                edge0 = Some((Instant::now(), devview::snapshot(&watched)));
            }
            match rx.recv_timeout(wait) {
                Ok(Msg::Interval { job, worker, iv }) => {
                    let sl = slot_of(job);
                    let s = &mut slots[sl];
                    s.last_index[worker] = iv.index;
                    if iv.index >= 0 {
                        s.add(&iv, &mut spare);
                    }
                    s.finalize(false, &mut spare, &mut |iv| window_hook(sl, iv));
                    let g = global_index.iter().position(|&x| x == (sl, worker));
                    if let Some(g) = g {
                        let _ = recycle_tx[g].send(iv);
                    }
                }
                Ok(Msg::Done { job, worker, end }) => {
                    done += 1;
                    let sl = slot_of(job);
                    let s = &mut slots[sl];
                    s.done[worker] = true;
                    if let Some(m) = &end.setup_error {
                        if end.setup_error_usage {
                            usage_error.get_or_insert_with(|| m.clone());
                        } else if error.is_none() {
                            error = Some(ErrorInfo {
                                kind: "io".into(),
                                message: m.clone(),
                                offset: None,
                                job: Some(jobs[job].spec.name.clone()),
                            });
                        }
                    }
                    if let Some(f) = end.fault {
                        if error.is_none() {
                            error = Some(fault_info(&f, &jobs[job].spec.name));
                        }
                    }
                    s.ends.push(*end);
                    s.finalize(false, &mut spare, &mut |iv| window_hook(sl, iv));
                }
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if user_stop.load(Ordering::Relaxed) || end_early.get() {
                ctl.stop.store(true, Ordering::Relaxed);
            }
            let now = Instant::now();
            if now.duration_since(last_tick) >= Duration::from_millis(250) {
                let c = lives.iter().fold((0, 0, 0, 0), |a, l| {
                    (
                        a.0 + l.read_ops.load(Ordering::Relaxed),
                        a.1 + l.write_ops.load(Ordering::Relaxed),
                        a.2 + l.read_bytes.load(Ordering::Relaxed),
                        a.3 + l.write_bytes.load(Ordering::Relaxed),
                    )
                });
                let dt = now.duration_since(last_tick).as_secs_f64();
                let elapsed = now.duration_since(t_start);
                on_tick(&Tick {
                    elapsed,
                    planned,
                    ramping: elapsed < ramp,
                    read_iops: (c.0 - last_counts.0) as f64 / dt,
                    write_iops: (c.1 - last_counts.1) as f64 / dt,
                    read_mb_s: (c.2 - last_counts.2) as f64 / 1e6 / dt,
                    write_mb_s: (c.3 - last_counts.3) as f64 / 1e6 / dt,
                });
                last_counts = c;
                last_tick = now;
            }
        }
        wall = t_start.elapsed();
        edge1 = Some((Instant::now(), devview::snapshot(&watched)));
        Ok::<(), EngineError>(())
    })?;

    if let Some(m) = usage_error {
        return Err(EngineError::Invalid(m));
    }
    let ru1 = rusage_self();
    let wall_us = wall.as_micros().max(1) as f64;

    let mut results = Vec::with_capacity(nslots);
    for (si, mut s) in slots.into_iter().enumerate() {
        s.finalize(true, &mut spare, &mut |_| {});
        let first_job = if group_reporting { 0 } else { si };
        let mut spec = jobs[first_job].spec.clone();
        spec.size = Some(jobs[first_job].region_len);
        if group_reporting && jobs.len() > 1 {
            spec.threads = jobs.iter().map(|j| j.spec.threads).sum();
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
        // The last interval may be partial: rescale it to its real length, drop slivers.
        let mut series = std::mem::take(&mut s.series);
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
        r.series = series;
        r.fsyncs = s.ends.iter().map(|e| e.fsyncs).sum();
        let max_worker = s
            .ends
            .iter()
            .filter(|e| e.wall_ns > 0)
            .map(|e| e.cpu_ns as f64 / e.wall_ns as f64 * 100.0)
            .fold(0.0, f64::max);
        r.cpu = CpuUsage {
            user_pct: (ru1.0 - ru0.0) as f64 / wall_us * 100.0,
            sys_pct: (ru1.1 - ru0.1) as f64 / wall_us * 100.0,
            max_worker_pct: max_worker,
        };
        if let Some(e) = &error {
            if e.job.as_deref() == Some(&r.name) || group_reporting {
                r.error = Some(e.clone());
            }
        }
        results.push(r);
    }
    attach_device_views(&mut results, jobs, group_reporting, edge0.as_ref(), edge1.as_ref());
    let interrupted = user_stop.load(Ordering::Relaxed) && error.is_none();
    Ok(GroupOutcome { results, error, interrupted })
}

/// Sets each result's `device_view` from the counter snapshots at the window's edges, held
/// against everything this group did on the same device.
fn attach_device_views(
    results: &mut [JobResult],
    jobs: &[BoundJob],
    group_reporting: bool,
    edge0: Option<&(Instant, BTreeMap<String, stats::DiskCounters>)>,
    edge1: Option<&(Instant, BTreeMap<String, stats::DiskCounters>)>,
) {
    let watch_of = |i: usize| jobs.get(if group_reporting { 0 } else { i }).and_then(|j| j.watch.as_ref());
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

fn fault_info(f: &worker::IoFault, job: &str) -> ErrorInfo {
    let what = match f.op {
        crate::io::backend::Op::Read => "read",
        crate::io::backend::Op::Write => "write",
        crate::io::backend::Op::Fsync => "fsync",
    };
    let (kind, message) = if f.errno == 0 {
        ("io", format!("short {what} at offset {}: {} of {} bytes", f.offset, f.transferred, f.len))
    } else {
        let err = std::io::Error::from_raw_os_error(f.errno);
        let kind = match f.errno {
            libc::ENOSPC => "enospc",
            libc::EIO => "eio",
            libc::ENODEV | libc::ENXIO | libc::ENOENT | libc::ESHUTDOWN => "vanished",
            _ => "io",
        };
        let at = if f.op == crate::io::backend::Op::Fsync { String::new() } else { format!(" at offset {}", f.offset) };
        (kind, format!("{what} failed{at}: {err}"))
    };
    ErrorInfo {
        kind: kind.into(),
        message,
        offset: (f.op != crate::io::backend::Op::Fsync).then_some(f.offset),
        job: Some(job.to_string()),
    }
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
    let len = job.size.unwrap_or(size - job.offset).min(size - job.offset);
    let len = len / job.bs * job.bs;
    if len == 0 {
        return Err(EngineError::Invalid(format!(
            "the test region ({} bytes from offset {}) is smaller than one block (--bs {}); raise --size",
            job.size.unwrap_or(size - job.offset),
            job.offset,
            job.bs
        )));
    }
    let mut spec = job.clone();
    spec.size = Some(len);
    let watch = t.map(|t| crate::target::devview::watch_for(&t.probe));
    Ok(BoundJob { spec, fd, region_offset: job.offset, region_len: len, mem_align: align, watch })
}
