//! Orchestration of whole commands (`run` plans and the `mark` card): target
//! preparation, groups in order, honesty checks, the result document.

use engine::error::Result;
use engine::probe;
use engine::runner::{bind, run_group, RunControl, Tick};
use engine::target::{open_target, target_info, Needs, OpenTarget, TargetOptions};
use spec::{DataPattern, EngineKind, JobGroup, JobSpec, RunPlan, RwMode};
use stats::{codes, Aggregate, ErrorInfo, HostInfo, JobResult, PassResult, ResultDoc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// Receives progress. All methods have no-op defaults.
pub trait Observer {
    /// A new phase starts (`planned` = its expected length, if known).
    fn phase(&mut self, _label: &str, _planned: Option<Duration>) {}
    fn fill(&mut self, _done: u64, _total: u64) {}
    fn tick(&mut self, _t: &Tick) {}
    fn phase_done(&mut self) {}
    /// Multi-step commands (`sla` points, `compare` passes): `done` steps of about
    /// `total` finished after `elapsed`.
    fn steps(&mut self, _done: usize, _total: usize, _elapsed: Duration) {}
    /// Something the user should know while the command waits (another run holds the target).
    fn notice(&mut self, _message: &str) {}
}

/// Passes a target's events on to an observer.
pub(crate) fn target_event(obs: &mut dyn Observer, e: engine::target::TargetEvent<'_>) {
    match e {
        engine::target::TargetEvent::Fill { done, total } => obs.fill(done, total),
        engine::target::TargetEvent::Waiting(m) => obs.notice(m),
    }
}

/// An observer that shows nothing.
pub struct Silent;
impl Observer for Silent {}

#[derive(Clone, Default)]
pub struct SessionOptions {
    pub target: TargetOptions,
    pub ctl: RunControl,
    /// Compare each job with the null engine's ceiling (tool-bottleneck check).
    pub ceiling_check: bool,
    /// Size of a test file diskmeter creates when a job gives no --size.
    pub default_size: u64,
}

pub fn host_info() -> HostInfo {
    let h = probe::host_facts();
    HostInfo {
        kernel: h.kernel,
        cpus: h.cpus,
        memory_bytes: h.memory_bytes,
        cpu_model: h.cpu_model,
        hostname: h.hostname,
    }
}

/// RFC 3339 UTC timestamp of now (seconds precision).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

pub(crate) fn new_doc(command: &str) -> ResultDoc {
    ResultDoc::new(command, now_rfc3339(), host_info())
}

/// A result document for a command that failed before producing any figures (so that
/// `--json` output is always a valid document).
pub fn error_doc(command: &str, kind: &str, message: &str) -> ResultDoc {
    let mut d = new_doc(command);
    d.partial = true;
    d.error = Some(ErrorInfo { kind: kind.into(), message: message.into(), offset: None, job: None });
    d
}

/// What the jobs need from one target. `existing` is the size of a target that already
/// exists: jobs without --size then use it whole; a new file gets `default_size`.
fn needs_for(jobs: &[&JobSpec], existing: Option<u64>, default_size: u64) -> Needs {
    fn gcd(a: u64, b: u64) -> u64 {
        if b == 0 {
            a
        } else {
            gcd(b, a % b)
        }
    }
    let mut n = Needs { region_start: jobs.iter().map(|j| j.offset).min().unwrap_or(0), ..Needs::default() };
    for j in jobs {
        let rp = j.rw.read_pct(j.mix);
        n.reads |= rp > 0;
        n.writes |= rp < 100;
        n.direct |= j.direct;
        let end = match (j.size, existing) {
            (Some(s), _) => j.offset.saturating_add(s),
            (None, Some(total)) => total.max(j.offset),
            (None, None) => j.offset.saturating_add(default_size),
        };
        n.region_end = n.region_end.max(end);
        n.bs_gcd = gcd(n.bs_gcd, j.bs);
    }
    n
}

/// What the device's own counters say against diskmeter's (split, merged, less, more,
/// foreign I/O), one warning per code, naming the first result it was seen in.
fn device_warnings(doc: &mut ResultDoc, target: Option<&OpenTarget>) {
    let raw = target.is_some_and(|t| t.probe.kind == probe::TargetKind::Block);
    let mut found: Vec<(&'static str, String)> = Vec::new();
    for r in &doc.results {
        if let Some(v) = &r.device_view {
            for (code, msg) in v.findings(raw) {
                if !found.iter().any(|(c, _)| *c == code) && !doc.warnings.iter().any(|w| w.code == code) {
                    found.push((code, format!("{}: {msg}", r.name)));
                }
            }
        }
    }
    for (code, msg) in found {
        doc.warn(code, msg);
    }
}

/// A `bs` above the device's request-size limit (`max_sectors_kb`) is split before it reaches
/// the device: said before the run starts, naming the limit.
pub(crate) fn split_limit_warning(doc: &mut ResultDoc, jobs: &[&JobSpec], t: &OpenTarget, obs: &mut dyn Observer) {
    let Some(disk) = t.probe.disk.as_deref().or(t.probe.device.as_deref()) else { return };
    let Some(kb) = std::fs::read_to_string(format!("/sys/block/{disk}/queue/max_sectors_kb"))
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    else {
        return;
    };
    let limit = kb * 1024;
    if let Some(j) = jobs.iter().filter(|j| j.bs > limit).max_by_key(|j| j.bs) {
        let msg = format!(
            "--bs {} is above {disk}'s request-size limit (max_sectors_kb {kb} KiB): each I/O reaches the device as \
             {} requests; use --bs {} KiB or less to measure whole requests",
            spec::units::format_size(j.bs),
            j.bs.div_ceil(limit),
            kb
        );
        obs.notice(&format!("warning[{}]: {msg}", codes::SPLIT_IO));
        doc.warn(codes::SPLIT_IO, msg);
    }
}

pub(crate) fn honesty_warnings(doc: &mut ResultDoc, jobs: &[&JobSpec], target: Option<&OpenTarget>, region: u64) {
    let ram = probe::page_cache_relevant_ram();
    if jobs.iter().any(|j| !j.direct) {
        doc.warn(
            codes::BUFFERED_IO,
            "buffered I/O (--buffered): the page cache (RAM) serves and absorbs I/O, so figures describe \
             memory as much as the device; drop --buffered to measure the device",
        );
        if region < ram {
            doc.warn(
                codes::SMALL_TEST_AREA,
                format!(
                    "test area ({}) is smaller than RAM ({}): with buffered I/O much of it is served from the \
                     page cache; use --size larger than RAM or drop --buffered",
                    spec::units::format_size(region),
                    spec::units::format_size(ram)
                ),
            );
        }
    }
    if let Some(t) = target {
        if t.probe.backing_is_ram {
            doc.warn(
                codes::RAM_BACKED,
                format!(
                    "{} is backed by RAM (tmpfs or a RAM disk): figures describe memory, not a disk",
                    t.path.display()
                ),
            );
        } else if jobs.iter().any(|j| j.direct) {
            match t.probe.device_cache_bytes {
                Some(c) if region < 10 * c => doc.warn(
                    codes::SMALL_TEST_AREA,
                    format!(
                        "test area ({}) is smaller than 10x the device cache ({}): the cache, not the media, \
                         answers much of it; use --size of at least {}",
                        spec::units::format_size(region),
                        spec::units::format_size(c),
                        spec::units::format_size(10 * c)
                    ),
                ),
                Some(_) => {}
                None => doc.warn(
                    codes::DEVICE_CACHE_UNKNOWN,
                    format!(
                        "device cache size unknown: cannot confirm the test area ({}) is at least 10x every cache \
                         in the path; for worst-case figures use a larger --size (a desktop: the whole disk)",
                        spec::units::format_size(region)
                    ),
                ),
            }
        }
        for (code, msg) in &t.warnings {
            doc.warn(code, msg.clone());
        }
    }
    device_warnings(doc, target);
    if jobs.iter().any(|j| j.rw.read_pct(j.mix) < 100 && !matches!(j.data, DataPattern::Random)) {
        doc.warn(
            codes::ZERO_DATA,
            "write data is compressible (--data zeros/compress): compressing or deduplicating devices will look \
             faster than with real data",
        );
    }
}

/// Tool-bottleneck check: run the job briefly on the null engine and compare.
fn ceiling_check(doc: &mut ResultDoc, r: &JobResult, ctl: &RunControl) {
    let s = &r.spec;
    if !s.engine.uses_target() || s.rate_iops.is_some() {
        return;
    }
    let measured = r.read.as_ref().map_or(0.0, |d| d.iops) + r.write.as_ref().map_or(0.0, |d| d.iops);
    if r.cpu.max_worker_pct >= 95.0 {
        doc.warn(
            codes::TOOL_BOTTLENECK,
            format!(
                "{}: a worker thread ran at {:.0}% CPU: the tool (or this CPU), not the device, may be the limit; \
                 add --threads or lower --qd per thread",
                r.name, r.cpu.max_worker_pct
            ),
        );
        return;
    }
    let mut null = s.clone();
    null.engine = EngineKind::Null;
    null.runtime = Duration::from_millis(300);
    null.ramp = Duration::ZERO;
    null.time_based = true;
    let Ok(b) = bind(&null, None) else { return };
    let c = RunControl {
        stop: Default::default(),
        register_buffers: false,
        null_fault: None,
        pin_workers: ctl.pin_workers,
    };
    if let Ok(out) = run_group(&[b], false, &c, &mut |_| {}) {
        if let Some(nr) = out.results.first() {
            let ceiling = nr.read.as_ref().map_or(0.0, |d| d.iops) + nr.write.as_ref().map_or(0.0, |d| d.iops);
            if ceiling > 0.0 && measured >= 0.8 * ceiling {
                doc.warn(
                    codes::TOOL_BOTTLENECK,
                    format!(
                        "{}: {:.0} IOPS is within 20% of diskmeter's own ceiling for this job ({:.0} IOPS on the \
                         null engine): the tool, not the device, may be the limit",
                        r.name, measured, ceiling
                    ),
                );
            }
        }
    }
}

fn rate_check(doc: &mut ResultDoc, r: &JobResult) {
    if let Some(rate) = r.spec.rate_iops {
        let got = r.read.as_ref().map_or(0.0, |d| d.iops) + r.write.as_ref().map_or(0.0, |d| d.iops);
        if got < 0.95 * rate as f64 && !r.spec.runtime.is_zero() {
            doc.warn(
                codes::RATE_NOT_MET,
                format!(
                    "{}: asked for {rate} IOPS, got {got:.0}: the device could not keep up, so latencies include \
                     the backlog (open-loop timing)",
                    r.name
                ),
            );
        }
    }
}

pub(crate) fn finish_error(doc: &mut ResultDoc, error: Option<ErrorInfo>, interrupted: bool) {
    if let Some(e) = error {
        doc.partial = true;
        doc.warn(codes::PARTIAL, format!("run stopped early: {}", e.message));
        doc.error = Some(e);
    } else if interrupted {
        doc.partial = true;
        doc.warn(codes::PARTIAL, "interrupted: figures cover only the time before the interruption");
        doc.error = Some(ErrorInfo {
            kind: "interrupted".into(),
            message: "interrupted by the user".into(),
            offset: None,
            job: None,
        });
    }
}

/// Run a plan: groups in order, jobs of a group concurrently. `default_target` serves
/// jobs without a filename.
pub fn run_plan(
    plan: &RunPlan,
    default_target: &Path,
    opts: &SessionOptions,
    obs: &mut dyn Observer,
) -> Result<ResultDoc> {
    let mut doc = new_doc("run");
    for n in &plan.notes {
        doc.warn(&n.code, n.message.clone());
    }
    let jobs: Vec<&JobSpec> = plan.groups.iter().flat_map(|g| g.jobs.iter()).collect();
    let all_null = jobs.iter().all(|j| !j.engine.uses_target());
    // Checked before any target is created or filled: bad input writes nothing.
    let (need, njobs) = engine::memory::plan_footprint(plan.groups.iter().map(|g| (&g.jobs[..], g.group_reporting)));
    engine::memory::check(&need, njobs, &engine::memory::Knobs::CLI)?;
    let pinned = plan.groups.iter().map(|g| engine::runner::pinned_bytes(g.jobs.iter())).max().unwrap_or(0);
    engine::runner::check_memlock(pinned, opts.ctl.register_buffers)?;

    // Open every distinct target once (validating everything before any I/O starts).
    let mut paths: BTreeMap<PathBuf, Vec<&JobSpec>> = BTreeMap::new();
    for j in &jobs {
        if j.engine.uses_target() {
            let p = j.target.clone().unwrap_or_else(|| default_target.to_path_buf());
            paths.entry(p).or_default().push(j);
        }
    }
    let mut targets: BTreeMap<PathBuf, OpenTarget> = BTreeMap::new();
    for (p, js) in &paths {
        let existing = probe::probe(p).ok().filter(|pr| pr.exists).map(|pr| pr.size_bytes);
        let needs = needs_for(js, existing, opts.default_size);
        obs.phase(&format!("preparing {}", p.display()), None);
        let t = open_target(p, needs, &opts.target, &opts.ctl.stop, &mut |e| crate::session::target_event(obs, e));
        obs.phase_done();
        targets.insert(p.clone(), t?);
    }
    if opts.ctl.stop.load(Ordering::Relaxed) {
        finish_error(&mut doc, None, true);
        return Ok(doc);
    }
    for (p, t) in &targets {
        if let Some(js) = paths.get(p) {
            split_limit_warning(&mut doc, js, t, obs);
        }
    }
    if let Some((_, t)) = targets.iter().next() {
        doc.target = Some(target_info(t));
    } else if all_null {
        doc.target = Some(stats::TargetInfo::new(no_target_name(&jobs), stats::TargetKind::Null, 0));
    }
    let mut region = 0u64;

    for g in &plan.groups {
        let mut bound = Vec::with_capacity(g.jobs.len());
        for j in &g.jobs {
            let t = if !j.engine.uses_target() {
                None
            } else {
                targets.get(&j.target.clone().unwrap_or_else(|| default_target.to_path_buf()))
            };
            let b = bind(j, t)?;
            region = region.max(b.region_len);
            bound.push(b);
        }
        let label = g.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>().join(" + ");
        let planned = g.jobs.iter().map(|j| j.ramp + j.runtime).max();
        obs.phase(&label, planned.filter(|d| !d.is_zero()));
        let out = run_group(&bound, g.group_reporting, &opts.ctl, &mut |t| obs.tick(t));
        obs.phase_done();
        let out = out?;
        let stop = out.error.is_some() || out.interrupted;
        for r in out.results {
            if !stop && opts.ceiling_check {
                ceiling_check(&mut doc, &r, &opts.ctl);
                engine::mem::bandwidth_check(&mut doc, &r, &opts.ctl);
            }
            rate_check(&mut doc, &r);
            doc.results.push(r);
        }
        if stop {
            finish_error(&mut doc, out.error, out.interrupted);
            break;
        }
    }
    if all_null {
        doc.target = Some(stats::TargetInfo::new(no_target_name(&jobs), stats::TargetKind::Null, region));
    }
    let first = targets.values().next();
    // Memory is what the mem engine measures: the device checks do not apply to it.
    let jobs: Vec<&JobSpec> = jobs.into_iter().filter(|j| j.engine != EngineKind::Mem).collect();
    honesty_warnings(&mut doc, &jobs, first, region);
    Ok(doc)
}

/// The result target's name when no job uses a device: `mem` when the mem engine ran, else
/// `null`.
fn no_target_name(jobs: &[&JobSpec]) -> &'static str {
    if jobs.iter().any(|j| j.engine == EngineKind::Mem) {
        "mem"
    } else {
        "null"
    }
}

/// The CrystalDiskMark profiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Profile {
    Default,
    Nvme,
    Peak,
    Real,
}

impl Profile {
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "default" => Self::Default,
            "nvme" => Self::Nvme,
            "peak" => Self::Peak,
            "real" => Self::Real,
            _ => return None,
        })
    }
    /// (sequential?, block size, queue depth, threads)
    pub fn tests(self) -> &'static [(bool, u64, u32, u32)] {
        const M: u64 = 1 << 20;
        const K: u64 = 1 << 10;
        match self {
            Self::Default => &[(true, M, 8, 1), (true, M, 1, 1), (false, 4 * K, 32, 1), (false, 4 * K, 1, 1)],
            Self::Nvme => &[(true, M, 8, 1), (true, 128 * K, 32, 1), (false, 4 * K, 32, 16), (false, 4 * K, 1, 1)],
            Self::Peak => &[(true, M, 8, 1), (false, 4 * K, 32, 16)],
            Self::Real => &[(true, M, 1, 1), (false, 4 * K, 1, 1)],
        }
    }
}

/// CrystalDiskMark test label, e.g. `SEQ1M Q8T1`, `RND4K Q32T16`.
pub fn mark_label(seq: bool, bs: u64, qd: u32, threads: u32) -> String {
    format!("{}{} Q{qd}T{threads}", if seq { "SEQ" } else { "RND" }, spec::units::format_bs_label(bs))
}

#[derive(Debug, Clone)]
pub struct MarkConfig {
    pub profile: Profile,
    pub mix: bool,
    pub size: u64,
    pub passes: u32,
    pub time: Duration,
    pub interval: Duration,
    pub warmup: bool,
    pub engine: EngineKind,
    pub direct: bool,
    pub seed: u64,
    pub mix_read_pct: u8,
    /// The user chose the size; otherwise a smaller block device is used whole.
    pub size_explicit: bool,
}

impl Default for MarkConfig {
    fn default() -> Self {
        Self {
            profile: Profile::Default,
            mix: false,
            size: 1 << 30,
            passes: 3,
            time: Duration::from_secs(5),
            interval: Duration::from_secs(5),
            warmup: true,
            engine: EngineKind::IoUring,
            direct: true,
            seed: JobSpec::default().seed,
            mix_read_pct: 70,
            size_explicit: false,
        }
    }
}

/// Unmeasured load at the start of each measured `mark` pass that follows a warm-up. Between
/// two passes the device idles for a few milliseconds (threads, buffers, ring set-up), and a
/// rate limiter banks credit meanwhile — blk-throttle up to one 100 ms slice of its rate, a
/// cloud volume its burst bucket. A window opened on the idle device counts that credit as
/// speed (a 10 000 IOPS throttle measured 10 968 IOPS over 1 s passes); one opened on a busy
/// device measures the sustained rate.
const PASS_RAMP: Duration = Duration::from_millis(500);

/// Run the CrystalDiskMark card on one target.
pub fn mark(cfg: &MarkConfig, target: &Path, opts: &SessionOptions, obs: &mut dyn Observer) -> Result<ResultDoc> {
    let mut doc = new_doc("mark");
    let mut cfg = cfg.clone();
    if !cfg.size_explicit && cfg.engine != EngineKind::Null {
        if let Ok(p) = probe::probe(target) {
            if p.kind == probe::TargetKind::Block && p.size_bytes < cfg.size {
                cfg.size = p.size_bytes / (1 << 20) * (1 << 20);
            }
        }
    }
    let cfg = &cfg;
    let stop = opts.ctl.stop.clone();
    let null = cfg.engine == EngineKind::Null;
    let needs =
        Needs { reads: true, writes: true, region_start: 0, region_end: cfg.size, direct: cfg.direct, bs_gcd: 4096 };
    let biggest = cfg.profile.tests().iter().map(|&(_, bs, qd, t)| bs * qd as u64 * t as u64).max().unwrap_or(0);
    let pinned = if cfg.engine == EngineKind::IoUring { biggest * if cfg.mix { 2 } else { 1 } } else { 0 };
    engine::runner::check_memlock(pinned, opts.ctl.register_buffers)?;
    // Tests run one at a time; the mixed variant (--mix) keeps two buffers per slot.
    let tests: Vec<JobSpec> = cfg
        .profile
        .tests()
        .iter()
        .map(|&(_, bs, qd, threads)| JobSpec {
            bs,
            qd,
            threads,
            engine: cfg.engine,
            runtime: cfg.time,
            rw: if cfg.mix { RwMode::RandRw } else { RwMode::RandRead },
            mix: cfg.mix_read_pct,
            ..JobSpec::default()
        })
        .collect();
    let (need, _) = engine::memory::plan_footprint(tests.iter().map(|t| (std::slice::from_ref(t), false)));
    engine::memory::check(&need, 1, &engine::memory::Knobs::CLI)?;
    let mut topts = opts.target.clone();
    let t = if null {
        None
    } else {
        obs.phase(&format!("preparing {}", target.display()), None);
        // A block device must be written before it is read: prefill when allowed.
        if probe::probe(target).map(|p| p.kind == probe::TargetKind::Block).unwrap_or(false) {
            topts.prefill = topts.destroy_data.is_some();
        }
        let t = open_target(target, needs, &topts, &stop, &mut |e| crate::session::target_event(obs, e));
        obs.phase_done();
        Some(t?)
    };
    doc.target = Some(match &t {
        Some(t) => target_info(t),
        None => stats::TargetInfo::new("null", stats::TargetKind::Null, cfg.size),
    });

    if let Some(t) = &t {
        split_limit_warning(&mut doc, &tests.iter().collect::<Vec<_>>(), t, obs);
    }
    let mut plan_tests: Vec<(String, JobSpec, JobSpec)> = Vec::new(); // label, read-ish, write-ish
    for &(seq, bs, qd, threads) in cfg.profile.tests() {
        let base = JobSpec {
            name: mark_label(seq, bs, qd, threads),
            target: Some(target.to_path_buf()),
            bs,
            qd,
            threads,
            size: Some(cfg.size),
            runtime: cfg.time,
            engine: cfg.engine,
            direct: cfg.direct,
            seed: cfg.seed,
            ..JobSpec::default()
        };
        let r = JobSpec { rw: if seq { RwMode::Read } else { RwMode::RandRead }, ..base.clone() };
        let w = JobSpec { rw: if seq { RwMode::Write } else { RwMode::RandWrite }, ..base.clone() };
        plan_tests.push((base.name.clone(), r, w));
        if cfg.mix {
            let m = JobSpec {
                name: format!("{} R{}/W{}", base.name, cfg.mix_read_pct, 100 - cfg.mix_read_pct),
                rw: if seq { RwMode::ReadWrite } else { RwMode::RandRw },
                mix: cfg.mix_read_pct,
                ..base.clone()
            };
            plan_tests.push((m.name.clone(), m.clone(), m));
        }
    }

    let total_steps = plan_tests.len();
    let mut first_step = true;
    let mut aborted: Option<(Option<ErrorInfo>, bool)> = None;
    'tests: for (si, (label, rjob, wjob)) in plan_tests.iter().enumerate() {
        let mixed = rjob.rw == RwMode::RandRw || rjob.rw == RwMode::ReadWrite;
        let dirs: Vec<(&str, &JobSpec)> =
            if mixed { vec![("mix", rjob)] } else { vec![("read", rjob), ("write", wjob)] };
        let mut passes: Vec<PassResult> =
            (1..=cfg.passes).map(|p| PassResult { pass: p, read: None, write: None }).collect();
        let mut result = JobResult::new(rjob.clone());
        result.name = label.clone();
        for (dname, job) in dirs {
            if !first_step && !cfg.interval.is_zero() {
                obs.phase(&format!("pause {:.0} s", cfg.interval.as_secs_f64()), Some(cfg.interval));
                let until = std::time::Instant::now() + cfg.interval;
                while std::time::Instant::now() < until && !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                obs.phase_done();
            }
            first_step = false;
            let b = bind(job, t.as_ref())?;
            // After a warm-up, every measured pass opens its window on a busy device.
            let measured = if cfg.warmup {
                let mut m = b.clone();
                m.spec.ramp = PASS_RAMP.min(cfg.time / 2);
                m
            } else {
                b.clone()
            };
            let runs = u32::from(cfg.warmup) + cfg.passes;
            for i in 0..runs {
                if stop.load(Ordering::Relaxed) {
                    aborted = Some((None, true));
                    push_partial(&mut doc, result, passes);
                    break 'tests;
                }
                let warm = cfg.warmup && i == 0;
                let pass_no = if cfg.warmup { i } else { i + 1 };
                let what = if warm { "warm-up".to_string() } else { format!("pass {pass_no}/{}", cfg.passes) };
                let job = if warm { &b } else { &measured };
                obs.phase(
                    &format!("[{}/{}] {label} {dname} {what}", si + 1, total_steps),
                    Some(job.spec.ramp + cfg.time),
                );
                let out = run_group(std::slice::from_ref(job), false, &opts.ctl, &mut |tk| obs.tick(tk));
                obs.phase_done();
                let out = out?;
                let Some(r) = out.results.into_iter().next() else { continue };
                if out.error.is_some() || out.interrupted {
                    aborted = Some((out.error, out.interrupted));
                    push_partial(&mut doc, result, passes);
                    break 'tests;
                }
                if warm {
                    continue;
                }
                if let Some(v) = &r.device_view {
                    match &mut result.device_view {
                        Some(acc) => acc.merge(v),
                        None => result.device_view = Some(v.clone()),
                    }
                }
                let p = &mut passes[(pass_no - 1) as usize];
                if mixed {
                    p.read = r.read.clone();
                    p.write = r.write.clone();
                } else if dname == "read" {
                    p.read = r.read.clone();
                } else {
                    p.write = r.write.clone();
                }
                result.cpu = r.cpu;
                if opts.ceiling_check && pass_no == cfg.passes && !null {
                    ceiling_check(&mut doc, &r, &opts.ctl);
                    engine::mem::bandwidth_check(&mut doc, &r, &opts.ctl);
                }
            }
        }
        let how = if cfg.passes > 1 { Aggregate::Max } else { Aggregate::Single };
        result.set_passes(passes, how);
        doc.results.push(result);
    }
    if let Some((e, i)) = aborted {
        finish_error(&mut doc, e, i);
    }
    let jobs: Vec<&JobSpec> = plan_tests.iter().map(|(_, r, _)| r).collect();
    honesty_warnings(&mut doc, &jobs, t.as_ref(), cfg.size);
    drop(t);
    Ok(doc)
}

/// Keep the passes of an interrupted `mark` test that did complete.
fn push_partial(doc: &mut ResultDoc, mut result: JobResult, passes: Vec<PassResult>) {
    let done: Vec<PassResult> = passes.into_iter().filter(|p| p.read.is_some() || p.write.is_some()).collect();
    if !done.is_empty() {
        let how = if done.len() > 1 { Aggregate::Max } else { Aggregate::Single };
        result.set_passes(done, how);
        doc.results.push(result);
    }
}

/// Build a one-group plan from a single job (the `run` command without a job file).
pub fn single_job_plan(job: JobSpec) -> RunPlan {
    RunPlan { groups: vec![JobGroup { jobs: vec![job], group_reporting: false }], ..RunPlan::default() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn needs_span_the_lowest_offset_to_the_furthest_end() {
        let a = JobSpec { offset: 100 << 30, size: Some(16 << 20), ..JobSpec::default() };
        let b = JobSpec { offset: 101 << 30, size: Some(1 << 20), ..JobSpec::default() };
        let n = needs_for(&[&a, &b], None, 1 << 30);
        assert_eq!(n.region_start, 100 << 30);
        assert_eq!(n.region_end, (101 << 30) + (1 << 20));
        // Without --size a new file gets the default size from the offset on.
        let c = JobSpec { offset: 1 << 20, size: None, ..JobSpec::default() };
        let n = needs_for(&[&c], None, 1 << 30);
        assert_eq!((n.region_start, n.region_end), (1 << 20, (1 << 20) + (1 << 30)));
    }
}
