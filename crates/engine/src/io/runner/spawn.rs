//! The workers of a group: how many, with what plan ([`layout`]), and the thread each one
//! runs ([`worker_thread`]): its buffers, offsets and backend, then the worker loop, all
//! started at once through two barriers.

#[cfg(target_os = "linux")]
use super::job::uring_setup;
use super::job::{is_mixed, BoundJob, RunControl};
use crate::error::{Invalid, Result, Setup};
use crate::io::backend::mem::{Mem, MemRegion};
use crate::io::backend::null::Null;
use crate::io::backend::psync::Psync;
#[cfg(target_os = "linux")]
use crate::io::backend::uring::Uring;
use crate::io::backend::{Backend, BackendConfig};
use crate::io::buffers::BufferPool;
use crate::io::handoff;
use crate::io::offsets::{worker_rng, IoLens, OffsetGen, Walk};
use crate::io::worker::{self, Channels, FlowGroup, FlowShare, Interval, Live, Msg, WorkerEnd, WorkerFlow, WorkerPlan};
use crate::target::fault::Faulty;
use platform::target::Raw;
use spec::{EngineKind, RwMode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::{Arc, Barrier, OnceLock};
use std::time::{Duration, Instant};

pub(super) struct WorkerSetup {
    /// CPU to pin this worker to (None = let the scheduler place it).
    cpu: Option<usize>,
    /// The CPUs io_uring's kernel workers get when this worker's requests are handed to them
    /// (every CPU the process may use; [`crate::io::handoff`]).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    iowq_cpus: Vec<usize>,
    /// The probe found the target handing requests off, and the job keeps io_uring: hand
    /// every request off at once ([`stats::HandoffPolicy::Ring`]).
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    hand_off: bool,
    pub(super) plan: WorkerPlan,
    engine: EngineKind,
    /// io_uring's SQ polling thread submits (fio `io_submit_mode=offload`).
    offload: bool,
    fd: Raw,
    /// The flags of the job's handle ([`BoundJob::flags`]).
    flags: u32,
    /// This worker's files when its job runs over several (empty: `fd` alone), and how it
    /// picks the file of each I/O.
    files: Vec<Raw>,
    file_service: spec::FileService,
    /// Each worker's share of a file's region (sequential service moves on after it).
    file_share: u64,
    pool_slots: usize,
    mem_align: usize,
    spec_data: spec::DataPattern,
    rw: RwMode,
    mix: u8,
    dist: spec::Distribution,
    region_len: u64,
    lens: IoLens,
    walk: Walk,
    zones: Option<spec::StridedZones>,
    workers_in_job: usize,
    /// This worker's stripe within its region's workers (0..workers_in_job).
    job_worker: usize,
    /// This worker's index within its job (its fio thread for logs).
    index_in_job: usize,
    seed: u64,
    /// The job's region (mem engine only).
    mem: Option<Arc<MemRegion>>,
    /// Start this long after the group (fio `startdelay`).
    delay: Duration,
    /// Start once this job of the group (index, its worker count) has finished (fio `wait_for`).
    wait_job: Option<(usize, usize)>,
}

/// The workers of a group and how many each report slot has.
pub(super) struct Layout {
    pub(super) setups: Vec<WorkerSetup>,
    pub(super) slot_workers: Vec<usize>,
    /// Workers of each job.
    pub(super) job_workers: Vec<usize>,
}

impl Layout {
    /// (report slot, slot-local worker) of every worker, in start order.
    pub(super) fn global_index(&self, slots: &[usize]) -> Vec<(usize, usize)> {
        self.setups.iter().map(|s| (slots[s.plan.job], s.plan.worker)).collect()
    }
}

/// Workers of a job: psync serves depth with threads, the other engines with one ring each.
pub(super) fn workers_of(s: &spec::JobSpec) -> (usize, u32) {
    match s.engine {
        EngineKind::Psync => ((s.threads * s.qd) as usize, 1u32),
        _ => (s.threads as usize, s.qd),
    }
}

/// Lay the jobs out as workers: psync serves depth with threads (one synchronous I/O
/// each), the other engines with one ring (or queue) per thread. Workers are pinned
/// round-robin to the allowed CPUs when `pin`, and poll for completions up to `poll.0` ns
/// where [`super::poll_budget`] allows (by default only workers of at most `poll.1` I/Os in
/// flight); mem-engine regions are allocated and touched here,
/// before any worker starts.
pub(super) fn layout(jobs: &[BoundJob], slots: &[usize], pin: bool, poll: (u64, u32)) -> Result<Layout> {
    let slot_of = |j: usize| slots[j];
    let nslots = slots.iter().max().map_or(0, |m| m + 1);
    let mut setups = Vec::new();
    let mut job_workers = Vec::with_capacity(jobs.len());
    let allowed = super::job::allowed_cpus();
    let all_workers: usize = jobs.iter().map(|j| workers_of(&j.spec).0).sum();
    let kernel_threads: usize = jobs.iter().map(BoundJob::kernel_threads).sum();
    let cpus = if pin { allowed.clone() } else { Vec::new() };
    let mut slot_workers = vec![0usize; nslots];
    let regions = job_regions(jobs)?;
    let flows = flow_groups(jobs);
    for (ji, j) in jobs.iter().enumerate() {
        let s = &j.spec;
        let (workers, depth) = workers_of(s);
        job_workers.push(workers);
        // fio's wait_for: a job earlier in this group (one of an earlier group has finished).
        let wait_job = s.flow.wait_for.as_ref().and_then(|name| {
            jobs[..ji].iter().position(|o| o.spec.name == *name).map(|k| (k, workers_of(&jobs[k].spec).0))
        });
        let log_avg_ns = s.flow.logs.as_ref().map_or(0, |l| l.avg_ms.saturating_mul(1_000_000));
        let log_capacity = if log_avg_ns > 0 && !s.runtime.is_zero() {
            ((s.runtime.as_nanos() as u64 / log_avg_ns) as usize + 1).min(1 << 20)
        } else {
            0
        };
        let log_each = if s.flow.logs.as_ref().is_some_and(|l| l.avg_ms == 0) { worker::IO_LOG_MAX } else { 0 };
        let flow = WorkerFlow {
            poisson: s.flow.rate_process == spec::RateProcess::Poisson,
            continue_on: s.flow.continue_on_error,
            log_avg_ns,
            log_capacity,
            log_each,
            start_ns: 0,
        };
        // Each of the numjobs clones (with psync, each group of qd threads) walks a region of
        // its own and moves all its bytes: with fio's offset_increment, offset_increment further
        // on than the one before; with its own files (fio's `JOB.CLONE.FILE`); or, for a job
        // file's clones (`own_walks`), over the same region.
        let per_clone = s.files.as_ref().map_or(0, |f| f.per_clone);
        let per = if (s.offset_increment > 0 || per_clone > 0 || s.own_walks) && j.verify.is_none() {
            (workers / s.threads.max(1) as usize).max(1)
        } else {
            workers
        };
        let regions_of_job = (workers / per) as u64;
        let nfiles = s.files.as_ref().map_or(1, |f| f.files_per_clone()) as u64;
        // Not time-based: the job moves its region once over each of its files (or `io_bytes`),
        // `loops` times.
        let per_worker_limit = if s.time_based {
            None
        } else {
            let once = s.io_bytes.unwrap_or(j.region_len.saturating_mul(nfiles));
            let total = once.saturating_mul(u64::from(s.loops.max(1)));
            Some((total.saturating_mul(regions_of_job) / workers as u64).max(s.bs))
        };
        let rate = s.rate_iops.map(|r| r as f64 / workers as f64);
        for w in 0..workers {
            // A verified job's workers each own a stripe of the region, so that every chunk
            // has one writer and its generation one meaning.
            // (Stripes are whole largest blocks, so no I/O crosses into a neighbour's; a verified
            // job has no offset_increment, refused by its validation.)
            let (region_offset, region_len, gen_worker, gen_workers) = if j.verify.is_some() && workers > 1 {
                let n = j.region_len / s.bs;
                let (a, b) = (n * w as u64 / workers as u64, n * (w as u64 + 1) / workers as u64);
                (j.region_offset + a * s.bs, (b - a).max(1) * s.bs, 0, 1)
            } else {
                // The worker's group of `per` (its clone) starts offset_increment × clone on.
                (j.region_offset + s.offset_increment * (w / per) as u64, j.region_len, w % per, per)
            };
            // The worker's files: its clone's own, or all of them.
            let files = match (&s.files, per_clone) {
                (Some(_), 0) => j.files.clone(),
                (Some(_), n) => j.files.iter().skip((w / per) * n).take(n).copied().collect(),
                (None, _) => Vec::new(),
            };
            let plan = WorkerPlan {
                job: ji,
                worker: slot_workers[slot_of(ji)],
                depth,
                bs: s.bs as u32,
                region_offset,
                data: s.data,
                fsync_every: s.fsync,
                rate_iops: rate,
                t_start: Instant::now(),
                ramp_ns: s.ramp.as_nanos() as u64,
                runtime_ns: if s.runtime.is_zero() { u64::MAX } else { s.runtime.as_nanos() as u64 },
                byte_limit: per_worker_limit,
                split_buffers: is_mixed(s),
                submit_batch: s.submit_batch.max(1),
                verify: j.verify.clone(),
                flow_share: flows.get(&s.flow.flow_id).filter(|_| s.flow.flow_weight > 0).map(|g| FlowShare {
                    group: g.clone(),
                    weight: f64::from(s.flow.flow_weight) * f64::from(s.threads) / workers as f64,
                    sleep_ns: s.flow.flow_sleep_us.saturating_mul(1000).max(10_000),
                }),
                flow,
                end_on_full: s.fill,
                // A closed loop's rate is the device's, which may come in bursts; an open
                // loop's is the job's own schedule. A job with no run time ends on its byte
                // count and is its whole write (a sustained write's bytes are its range): never
                // cut to bursts.
                edges: rate.is_none() && (s.time_based || !s.runtime.is_zero()),
                poll_ns: super::job::poll_budget(
                    poll.0,
                    s.engine,
                    s.offload,
                    (depth, poll.1),
                    (all_workers, kernel_threads),
                    allowed.len(),
                ),
            };
            slot_workers[slot_of(ji)] += 1;
            let cpu = (!cpus.is_empty()).then(|| cpus[setups.len() % cpus.len()]);
            setups.push(WorkerSetup {
                cpu,
                iowq_cpus: allowed.clone(),
                hand_off: j.handoff == Some(stats::HandoffPolicy::Ring),
                pool_slots: depth as usize * if is_mixed(s) { 2 } else { 1 },
                plan,
                engine: s.engine,
                offload: s.offload,
                fd: files.first().copied().unwrap_or(j.fd),
                flags: j.flags,
                file_service: s.files.as_ref().map(|f| f.service.clone()).unwrap_or_default(),
                file_share: region_len / gen_workers.max(1) as u64,
                files,
                mem_align: j.mem_align,
                spec_data: s.data,
                rw: s.rw,
                mix: s.mix,
                dist: s.dist.clone(),
                region_len,
                lens: j.lens.clone(),
                zones: s.zones,
                walk: Walk { modifier: s.rw_modifier, identical: s.rw_identical, pct_random: s.percentage_random },
                workers_in_job: gen_workers,
                job_worker: gen_worker,
                index_in_job: w,
                seed: s.seed,
                mem: regions[ji].clone(),
                delay: Duration::from_millis(s.flow.start_delay_ms),
                wait_job,
            });
        }
    }
    Ok(Layout { setups, slot_workers, job_workers })
}

/// fio's flow groups of a run group: one per `flow_id` among the jobs with a `flow` weight,
/// weighing each job's weight once per fio thread (`numjobs`).
fn flow_groups(jobs: &[BoundJob]) -> std::collections::HashMap<u32, Arc<FlowGroup>> {
    let mut weights: std::collections::HashMap<u32, f64> = std::collections::HashMap::new();
    for j in jobs.iter().filter(|j| j.spec.flow.flow_weight > 0) {
        *weights.entry(j.spec.flow.flow_id).or_default() +=
            f64::from(j.spec.flow.flow_weight) * f64::from(j.spec.threads);
    }
    weights.into_iter().map(|(id, w)| (id, Arc::new(FlowGroup { ios: Default::default(), total_weight: w }))).collect()
}

fn build_backend_cfg(
    fd: Raw,
    files: &[Raw],
    depth: u32,
    pool: &BufferPool,
    register: bool,
    sqpoll: bool,
    flags: u32,
) -> BackendConfig {
    let buffers = if register && pool.slots() <= 16_384 {
        Some((0..pool.slots()).map(|i| crate::io::backend::reg_buf(pool.slot_ptr(i), pool.slot_len())).collect())
    } else {
        None
    };
    BackendConfig { fd, files: files.to_vec(), depth, buffers, register_file: true, sqpoll, flags }
}

fn pin_current_thread(cpu: usize) {
    set_current_affinity(&[cpu]);
}

/// Let the calling thread run on `cpus` (all of them from the process's allowed set).
fn set_current_affinity(cpus: &[usize]) {
    platform::cpu::set_thread_affinity(cpus);
}

/// A worker's buffers (filled with its data pattern) and offset generator.
fn prepare(setup: &WorkerSetup) -> std::result::Result<(BufferPool, OffsetGen), Setup> {
    let (job, worker) = (setup.plan.job, setup.plan.worker);
    let mut pool =
        BufferPool::new(setup.pool_slots, setup.plan.bs as usize, setup.mem_align).ok_or(Setup::IoBuffers)?;
    let mut rng = worker_rng(setup.seed ^ 0xb0f, job, worker);
    pool.fill(setup.spec_data, &mut rng);
    let make = |rng| {
        let gen = OffsetGen::with_lens(
            setup.rw,
            setup.mix,
            &setup.dist,
            setup.region_len,
            setup.lens.clone(),
            // The stripe of a sequential job is the worker's own within its job (`worker` counts
            // the report slot's workers, which under group_reporting spans several jobs).
            setup.job_worker,
            setup.workers_in_job,
            rng,
        )
        .walk(setup.walk);
        match setup.zones {
            Some(z) => {
                let stripe = (setup.job_worker, setup.workers_in_job);
                gen.strided(setup.rw, setup.mix, &setup.dist, stripe.0, stripe.1, (z.size, z.range, z.skip))
            }
            None => gen,
        }
    };
    let mut gen = make(worker_rng(setup.seed, job, worker));
    if setup.files.len() > 1 {
        // One generator per file, each with its own stream (file k of worker w).
        let gens = (0..setup.files.len())
            .map(|f| make(worker_rng(setup.seed ^ (f as u64 + 1).wrapping_mul(0x5851_f42d_4c95_7f2d), job, worker)))
            .collect();
        let rng = worker_rng(setup.seed ^ 0xf11e, job, worker);
        gen = gen.over_files(crate::io::files::FileWalk::new(gens, &setup.file_service, setup.file_share, rng));
    }
    Ok((pool, gen))
}

/// A worker thread's side of the start: two barriers (everyone set up; the collector
/// has taken the start time), then its end report.
struct Start<'a> {
    job: usize,
    worker: usize,
    job_worker: usize,
    delay: Duration,
    wait_job: Option<(usize, usize)>,
    /// Workers of each job of the group that have finished.
    finished: &'a [AtomicUsize],
    ctl: &'a RunControl,
    tx: &'a Sender<Msg>,
    barrier: &'a Barrier,
    start: &'a OnceLock<Instant>,
}

impl Start<'_> {
    /// The worker could not be set up: stop the group, pass the barriers with the others
    /// and report why.
    fn fail(&self, why: Setup) {
        self.ctl.stop.store(true, Ordering::Relaxed);
        self.barrier.wait();
        self.barrier.wait();
        let end = WorkerEnd { setup_error: Some(why), setup_failed: true, ..Default::default() };
        self.finished[self.job].fetch_add(1, Ordering::Release);
        let _ = self.tx.send(Msg::Done { job: self.job, worker: self.worker, end: Box::new(end) });
    }

    /// fio's startdelay and wait_for: wait until this worker may start (or the group stops);
    /// returns how long after the group's start that is.
    fn wait_to_start(&self, t_start: Instant) -> Duration {
        const POLL: Duration = Duration::from_millis(5);
        loop {
            let now = t_start.elapsed();
            if self.ctl.stop.load(Ordering::Relaxed) {
                return now;
            }
            let waited_for = self.wait_job.is_none_or(|(k, n)| self.finished[k].load(Ordering::Acquire) >= n);
            if waited_for && now >= self.delay {
                return now;
            }
            let left = if waited_for { self.delay.saturating_sub(now) } else { POLL };
            std::thread::sleep(left.min(POLL));
        }
    }

    /// Run the worker loop on `backend` once everyone has started, then report how it ended.
    fn measure<B: Backend>(
        &self,
        mut backend: B,
        mut plan: WorkerPlan,
        pool: &mut BufferPool,
        gen: &mut OffsetGen,
        ch: &Channels,
        mut watch: Option<handoff::Watch>,
    ) {
        if let Some(w) = &mut watch {
            w.start();
        }
        self.barrier.wait();
        self.barrier.wait();
        if let Some(t) = self.start.get() {
            plan.t_start = *t;
        }
        if !self.delay.is_zero() || self.wait_job.is_some() {
            // The job's own clock starts when it may: its ramp and measured window follow.
            let started = self.wait_to_start(plan.t_start);
            plan.ramp_ns = plan.ramp_ns.saturating_add(started.as_nanos() as u64);
            plan.flow.start_ns = started.as_nanos() as u64;
        }
        let mut end = worker::run(&plan, &mut backend, pool, gen, ch);
        end.job_worker = self.job_worker;
        end.handoff = watch.map(handoff::Watch::finish);
        drop(backend); // unregister buffers before the pool goes away
        self.finished[self.job].fetch_add(1, Ordering::Release);
        let _ = self.tx.send(Msg::Done { job: self.job, worker: self.worker, end: Box::new(end) });
    }
}

/// What the workers of a group share: the start barrier, the start time, and how many workers
/// of each job have finished.
#[derive(Clone, Copy)]
pub(super) struct Meet<'a> {
    pub(super) barrier: &'a Barrier,
    pub(super) start: &'a OnceLock<Instant>,
    pub(super) finished: &'a [AtomicUsize],
}

/// The body of one worker thread.
pub(super) fn worker_thread(
    setup: WorkerSetup,
    ctl: &RunControl,
    tx: Sender<Msg>,
    recycle: mpsc::Receiver<Box<Interval>>,
    live: Arc<Live>,
    meet: Meet<'_>,
) {
    let Meet { barrier, start, finished } = meet;
    if let Some(cpu) = setup.cpu {
        pin_current_thread(cpu);
    }
    let s = Start {
        job: setup.plan.job,
        worker: setup.plan.worker,
        job_worker: setup.index_in_job,
        delay: setup.delay,
        wait_job: setup.wait_job,
        finished,
        ctl,
        tx: &tx,
        barrier,
        start,
    };
    let (mut pool, mut gen) = match prepare(&setup) {
        Ok(v) => v,
        Err(why) => return s.fail(why),
    };
    let cfg = build_backend_cfg(
        setup.fd,
        &setup.files,
        setup.plan.depth,
        &pool,
        ctl.register_buffers,
        setup.offload,
        setup.flags,
    );
    let ch = Channels { tx: tx.clone(), recycle, live, stop: ctl.stop.clone() };
    #[cfg_attr(not(target_os = "linux"), allow(unused_mut))]
    let (mut plan, pool, gen) = (setup.plan, &mut pool, &mut gen);
    // (Write faults address one file: a job over several runs without them.)
    let faults = ctl.write_faults.clone().filter(|_| crate::target::fault::ENABLED && setup.files.len() <= 1);
    match setup.engine {
        #[cfg(target_os = "linux")]
        EngineKind::IoUring => match Uring::new(&cfg) {
            Ok(mut b) => {
                let watch = handoff::prepare(&mut b, setup.hand_off, &setup.iowq_cpus, plan.depth);
                if watch.as_ref().is_some_and(handoff::Watch::forced) {
                    // The I/O runs in the kernel's workers: a pinned submitter would only hold
                    // one of their CPUs to itself, and a polling one would hold the CPU their
                    // completions need (measured: docs/METHOD.md).
                    if setup.cpu.is_some() {
                        set_current_affinity(&setup.iowq_cpus);
                    }
                    plan.poll_ns = 0;
                }
                match faults {
                    Some(h) => s.measure(Faulty::new(b, h, setup.fd), plan, pool, gen, &ch, watch),
                    None => s.measure(b, plan, pool, gen, &ch, watch),
                }
            }
            Err(e) => s.fail(uring_setup(e, plan.depth)),
        },
        #[cfg(windows)]
        EngineKind::Iocp => match crate::io::backend::iocp::Iocp::new(&cfg) {
            Ok(b) => match faults {
                Some(h) => s.measure(Faulty::new(b, h, setup.fd), plan, pool, gen, &ch, None),
                None => s.measure(b, plan, pool, gen, &ch, None),
            },
            Err(e) => s.fail(Setup::CompletionPort(e)),
        },
        #[cfg(not(target_os = "linux"))]
        EngineKind::IoUring => s.fail(Setup::Unavailable(EngineKind::IoUring)),
        #[cfg(not(windows))]
        EngineKind::Iocp => s.fail(Setup::Unavailable(EngineKind::Iocp)),
        EngineKind::Psync => match faults {
            Some(h) => s.measure(Faulty::new(Psync::new(&cfg), h, setup.fd), plan, pool, gen, &ch, None),
            None => s.measure(Psync::new(&cfg), plan, pool, gen, &ch, None),
        },
        EngineKind::Null => s.measure(Null::new(&cfg, ctl.null_fault), plan, pool, gen, &ch, None),
        EngineKind::Mem => match setup.mem {
            Some(region) => {
                let b = Mem::new(&cfg, region, plan.region_offset, setup.job_worker, setup.workers_in_job);
                s.measure(b, plan, pool, gen, &ch, None)
            }
            None => s.fail(Setup::MemRegionMissing),
        },
    }
}

/// One mem region per mem-engine job of a group (None for other engines), allocated before
/// the workers start. A region that cannot be mapped is a usage error ([`Invalid::MemRegion`]).
fn job_regions(jobs: &[BoundJob]) -> Result<Vec<Option<Arc<MemRegion>>>> {
    jobs.iter()
        .map(|j| {
            if j.spec.engine != EngineKind::Mem {
                return Ok(None);
            }
            MemRegion::new(j.region_len)
                .map(|r| Some(Arc::new(r)))
                .ok_or_else(|| Invalid::MemRegion { bytes: j.region_len, job: j.spec.name.clone() }.into())
        })
        .collect()
}
