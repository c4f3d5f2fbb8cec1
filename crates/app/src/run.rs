//! `run`: any workload — command-line options or an fio job file — as a plan of groups run in
//! order, jobs of a group concurrently, with the honesty checks on every result.

use crate::checks::{Checks, Command};
use crate::parse::{engine, rw, u32_count};
use crate::session::{
    finish_error, gcd, new_doc, open_measurement, Observer, SessionOptions, TargetFlags, TargetPath, DEFAULT_TARGET,
};
use crate::{Error, Result};
use engine::measure::{self, target_info, GroupOutcome, Need, Needs, OpenTarget, TargetPlan, Tick};
use spec::units::{self, TimeUnit};
use spec::{EngineKind, JobGroup, JobSpec, RunPlan, SpecError};
use stats::{codes, ResultDoc};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// `run`'s options as typed. Workload options act as defaults for a job file's jobs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// An fio job file.
    pub jobfile: Option<PathBuf>,
    /// File or block device; overrides a job file's `filename`.
    pub target: Option<PathBuf>,
    pub name: Option<String>,
    pub rw: Option<String>,
    pub bs: Option<String>,
    pub qd: Option<String>,
    pub threads: Option<String>,
    pub size: Option<String>,
    pub offset: Option<String>,
    pub runtime: Option<String>,
    pub ramp: Option<String>,
    pub mix: Option<String>,
    pub engine: Option<String>,
    pub rate_iops: Option<String>,
    pub dist: Option<String>,
    pub data: Option<String>,
    pub fsync: Option<String>,
    pub submit_batch: Option<String>,
    pub seed: Option<u64>,
    /// Write the block device's test region before measuring.
    pub prefill: bool,
    pub flags: TargetFlags,
    /// Start the first measured window at this wall-clock instant (RFC 3339, or Unix seconds).
    pub start_at: Option<String>,
    /// What `{rank}`, `{size}` and `{host}` stand for in target paths.
    pub rank: crate::ranks::RankNames,
    /// Write the whole range once sequentially and find the write cliff (no other job runs).
    pub sustained: bool,
    /// With `sustained`: idle pauses, each followed by a re-test (`30s,60s`).
    pub recovery: Option<String>,
    pub verify: VerifyOptions,
    /// Replace existing files that are not diskmeter's (a job file's fio logs).
    pub force: bool,
}

/// The checksum of a bare `--verify`.
pub const VERIFY_KIND: &str = "crc32c";
/// Every `--verify` KIND.
pub const VERIFY_KINDS: &str = spec::VerifyKind::NAMES;

/// The workload options' defaults as `run --help` shows them, each spelled from the value
/// that sets it ([`JobSpec`]'s defaults, the size of a new test file), so the help cannot
/// drift from what a run does.
pub mod defaults {
    use spec::units::{format_duration_arg, format_size_arg};
    use spec::JobSpec;

    /// `--bs`.
    pub fn bs() -> String {
        format_size_arg(JobSpec::DEFAULT_BS)
    }

    /// `--qd`.
    pub fn qd() -> String {
        JobSpec::DEFAULT_QD.to_string()
    }

    /// `--threads`.
    pub fn threads() -> String {
        JobSpec::DEFAULT_THREADS.to_string()
    }

    /// `--size` of a test file diskmeter creates.
    pub fn new_file_size() -> String {
        format_size_arg(crate::session::DEFAULT_SIZE)
    }

    /// `--offset`.
    pub fn offset() -> String {
        format_size_arg(JobSpec::DEFAULT_OFFSET)
    }

    /// `--runtime`.
    pub fn runtime() -> String {
        format_duration_arg(JobSpec::DEFAULT_RUNTIME)
    }

    /// `--ramp`.
    pub fn ramp() -> String {
        format_duration_arg(JobSpec::DEFAULT_RAMP)
    }

    /// `--mix`.
    pub fn mix() -> String {
        JobSpec::DEFAULT_MIX.to_string()
    }

    /// `--submit-batch`.
    pub fn submit_batch() -> String {
        JobSpec::DEFAULT_SUBMIT_BATCH.to_string()
    }
}

/// `--verify` and its options as typed (the checksum kind is `Some` when `--verify` was given).
#[derive(Debug, Clone, Default)]
pub struct VerifyOptions {
    pub kind: Option<String>,
    pub interval: Option<String>,
    pub pattern: Option<String>,
    pub only: bool,
    pub state: Option<PathBuf>,
    pub fatal: bool,
    pub backlog: Option<String>,
    pub no_pass: bool,
}

impl VerifyOptions {
    /// True when any verify option was given.
    fn any(&self) -> bool {
        self.kind.is_some()
            || self.interval.is_some()
            || self.pattern.is_some()
            || self.only
            || self.state.is_some()
            || self.fatal
            || self.backlog.is_some()
            || self.no_pass
    }

    /// The sub-options given without `--verify` (or `--verify-only`), by name.
    fn loose(&self) -> Option<&'static str> {
        if self.kind.is_some() || self.only {
            return None;
        }
        [
            ("--verify-interval", self.interval.is_some()),
            ("--verify-pattern", self.pattern.is_some()),
            ("--verify-state", self.state.is_some()),
            ("--verify-fatal", self.fatal),
            ("--verify-backlog", self.backlog.is_some()),
            ("--no-verify-pass", self.no_pass),
        ]
        .into_iter()
        .find(|(_, g)| *g)
        .map(|(n, _)| n)
    }

    /// The verification these options ask for; `None` without `--verify` (or `--verify-only`).
    /// With a job file, sub-options alone are applied to the jobs that verify
    /// ([`apply`](Self::apply)).
    fn spec(&self, jobfile: bool) -> Result<Option<spec::VerifySpec>, SpecError> {
        if !self.any() {
            return Ok(None);
        }
        if let Some(name) = self.loose() {
            if jobfile {
                return Ok(None);
            }
            return Err(SpecError::value(name, "it is an option of --verify; add --verify"));
        }
        let mut v = spec::VerifySpec::default();
        if let Some(k) = &self.kind {
            v.kind = spec::VerifyKind::parse(k).ok_or_else(|| {
                SpecError::value("--verify", format!("unknown kind \"{k}\"; use one of {}", spec::VerifyKind::NAMES))
            })?;
        }
        self.apply(&mut v)?;
        Ok(Some(v))
    }

    /// Put the sub-options on a job's verification.
    fn apply(&self, v: &mut spec::VerifySpec) -> Result<(), SpecError> {
        if let Some(i) = &self.interval {
            v.interval = Some(units::parse_size("--verify-interval", i)?);
        }
        if let Some(p) = &self.pattern {
            v.pattern = Some(units::parse_verify_pattern("--verify-pattern", p)?);
            if self.kind.is_none() {
                v.kind = spec::VerifyKind::Pattern;
            }
        }
        if let Some(b) = &self.backlog {
            let n = units::parse_count("--verify-backlog", b)?;
            if n == 0 {
                return Err(SpecError::value("--verify-backlog", "must be at least 1 (writes between read-backs)"));
            }
            v.backlog = Some(n);
        }
        v.only |= self.only;
        v.fatal |= self.fatal;
        v.after_writes &= !self.no_pass;
        if self.state.is_some() {
            v.state = self.state.clone();
        }
        v.load_state |= self.only && v.state.is_some();
        Ok(())
    }
}

/// A validated `run`: the plan, and how its targets are opened.
#[derive(Debug, Clone)]
pub struct Config {
    plan: RunPlan,
    prefill: bool,
    flags: TargetFlags,
    start_at: Option<std::time::SystemTime>,
    /// `--sustained`: what it writes (the plan is then not run).
    sustained: Option<crate::steady::sustained::SustainedRun>,
    /// The job file's fio log files (checked here, before any I/O).
    logs: Option<crate::fioflow::LogFiles>,
    /// A job with fio's `latency_target`: it runs as the `sla` search, with this note.
    sla: Option<(crate::sla::Config, String)>,
    /// `--target`, resolved (a folder names the test file in it).
    named: Option<TargetPath>,
}

impl Config {
    /// Checks every option and builds the plan (reading the job file, if any).
    pub fn new(o: &Options) -> Result<Config> {
        let defaults = job_defaults(o)?;
        let plan = match &o.jobfile {
            Some(path) => {
                let mut plan = spec::fiojob::read_jobfile(path, &defaults)?;
                // --target on the command line overrides job files' filename.
                if let Some(t) = &o.target {
                    for g in &mut plan.groups {
                        for j in &mut g.jobs {
                            j.target = Some(t.clone());
                        }
                    }
                }
                // --verify-fatal and the like, without --verify: for the jobs that verify.
                if let Some(name) = o.verify.loose() {
                    let mut any = false;
                    for v in plan.groups.iter_mut().flat_map(|g| g.jobs.iter_mut()).filter_map(|j| j.verify.as_mut()) {
                        o.verify.apply(v)?;
                        any = true;
                    }
                    if !any {
                        return Err(Error::usage(format!(
                            "{name}: no job of the job file verifies its data; add --verify (or verify= to the jobs)"
                        )));
                    }
                }
                plan
            }
            None => {
                spec::validate::validate_job(&defaults)?;
                single_job_plan(defaults)
            }
        };
        let mut plan = plan;
        let named = o.target.as_ref().map(|t| TargetPath::resolve(o.rank.expand(t)));
        for j in plan.groups.iter_mut().flat_map(|g| g.jobs.iter_mut()) {
            j.target = match (&j.target, &named) {
                // --target (every job's, as above): a folder stands for its test file.
                (Some(_), Some(n)) => Some(n.path.clone()),
                (t, _) => t.as_ref().map(|t| o.rank.expand(t)),
            };
        }
        spec::validate::validate_plan(&plan)?;
        let start_at = o.start_at.as_deref().map(crate::session::parse_start_at).transpose()?;
        if o.prefill && o.flags.destroy_data.is_none() {
            return Err(Error::usage(
                "--prefill writes the whole test region of the device; it needs --destroy-data DEVICE",
            ));
        }
        let sustained = if o.sustained { Some(sustained_run(o)?) } else { None };
        if o.recovery.is_some() && !o.sustained {
            return Err(Error::usage("invalid value for --recovery: it re-tests the write cliff; add --sustained"));
        }
        let logs = crate::fioflow::LogFiles::plan(&plan, o.force)?;
        let logs = (!logs.is_empty()).then_some(logs);
        let sla = crate::fioflow::latency_target_sla(&plan, &o.flags)?;
        Ok(Config {
            plan,
            prefill: o.prefill,
            flags: o.flags.for_ranks(&o.rank),
            start_at,
            sustained,
            logs,
            sla,
            named,
        })
    }

    pub fn plan(&self) -> &RunPlan {
        &self.plan
    }
}

/// `run --sustained`: one sequential write of the range (`--bs`, `--qd`, `--size`); the options
/// of other workloads do not apply and are refused.
fn sustained_run(o: &Options) -> Result<crate::steady::sustained::SustainedRun> {
    use crate::steady::sustained::{parse_recovery, SustainedRun, SUSTAINED_BS, SUSTAINED_QD};
    if o.jobfile.is_some() {
        return Err(Error::usage("--sustained writes the target once sequentially; it takes no job file"));
    }
    if o.rank.size > 1 {
        return Err(Error::usage(
            "invalid value for --sustained: it finds one device's write cache and runs on one host; start it without \
             mpirun",
        ));
    }
    let other = [
        ("--rw", o.rw.is_some()),
        ("--runtime", o.runtime.is_some()),
        ("--ramp", o.ramp.is_some()),
        ("--mix", o.mix.is_some()),
        ("--threads", o.threads.is_some()),
        ("--offset", o.offset.is_some()),
        ("--rate-iops", o.rate_iops.is_some()),
        ("--dist", o.dist.is_some()),
        ("--fsync", o.fsync.is_some()),
        ("--prefill", o.prefill),
        ("--start-at", o.start_at.is_some()),
    ];
    if let Some((name, _)) = other.iter().find(|(_, given)| *given) {
        return Err(Error::usage(format!(
            "{name} does not apply to --sustained (one sequential write of the whole range with --bs and --qd); \
             drop {name}"
        )));
    }
    let bs = o.bs.as_deref().map(|s| units::parse_size("--bs", s)).transpose()?.unwrap_or(SUSTAINED_BS);
    let qd = o.qd.as_deref().map(|s| u32_count("--qd", s)).transpose()?.unwrap_or(SUSTAINED_QD);
    let size = o.size.as_deref().map(|s| units::parse_size("--size", s)).transpose()?;
    let engine_kind = o.engine.as_deref().map(|s| engine("--engine", s)).transpose()?;
    if engine_kind.is_some_and(|e| e != EngineKind::NATIVE) {
        return Err(Error::usage(format!("--sustained writes with {}; drop --engine", EngineKind::NATIVE.name())));
    }
    let check = JobSpec {
        rw: spec::RwMode::Write,
        bs,
        qd,
        size,
        time_based: false,
        runtime: std::time::Duration::ZERO,
        direct: !o.flags.buffered,
        ..JobSpec::default()
    };
    spec::validate::validate_job(&check)?;
    if size.is_some_and(|s| s < bs) {
        return Err(Error::usage(format!("invalid value for --size: smaller than one block (--bs {bs})")));
    }
    Ok(SustainedRun {
        target: TargetPath::or_default(o.target.clone().map(|t| o.rank.expand(&t))).path,
        bs,
        qd,
        size,
        recovery: o.recovery.as_deref().map(parse_recovery).transpose()?.unwrap_or_default(),
        direct: !o.flags.buffered,
        seed: o.seed.unwrap_or(JobSpec::default().seed),
    })
}

/// The command-line workload options on top of the defaults.
fn job_defaults(o: &Options) -> Result<JobSpec, SpecError> {
    let mut j = JobSpec { name: o.name.clone().unwrap_or_else(|| "job".into()), ..JobSpec::default() };
    if let Some(s) = &o.rw {
        j.rw = rw("--rw", s)?;
    }
    if let Some(s) = &o.bs {
        j.bs = units::parse_size("--bs", s)?;
    }
    if let Some(s) = &o.qd {
        j.qd = u32_count("--qd", s)?;
    }
    if let Some(s) = &o.threads {
        j.threads = u32_count("--threads", s)?;
    }
    if let Some(s) = &o.size {
        j.size = Some(units::parse_size("--size", s)?);
    }
    if let Some(s) = &o.offset {
        j.offset = units::parse_size("--offset", s)?;
    }
    if let Some(s) = &o.runtime {
        j.runtime = units::parse_duration("--runtime", s, TimeUnit::Seconds)?;
    }
    if let Some(s) = &o.ramp {
        j.ramp = units::parse_duration("--ramp", s, TimeUnit::Seconds)?;
    }
    if let Some(s) = &o.mix {
        let p = units::parse_percent("--mix", s)?;
        j.mix = p.round() as u8;
    }
    if let Some(s) = &o.engine {
        j.engine = engine("--engine", s)?;
    }
    if let Some(s) = &o.rate_iops {
        j.rate_iops = Some(units::parse_count("--rate-iops", s)?);
    }
    if let Some(s) = &o.dist {
        j.dist = units::parse_distribution("--dist", s)?;
    }
    if let Some(s) = &o.data {
        j.data = units::parse_data("--data", s)?;
    }
    if let Some(s) = &o.fsync {
        j.fsync = u32_count("--fsync", s)?;
    }
    if let Some(s) = &o.submit_batch {
        j.submit_batch = u32_count("--submit-batch", s)?;
        if j.submit_batch == 0 {
            return Err(SpecError::value("--submit-batch", "must be at least 1 (1 = submit each I/O at once)"));
        }
    }
    if let Some(s) = o.seed {
        j.seed = s;
    }
    j.verify = o.verify.spec(o.jobfile.is_some())?;
    j.direct = !o.flags.buffered;
    j.target = o.target.clone();
    Ok(j)
}

/// Build a one-group plan from a single job (the `run` command without a job file).
fn single_job_plan(job: JobSpec) -> RunPlan {
    RunPlan { groups: vec![JobGroup { jobs: vec![job], group_reporting: false }], ..RunPlan::default() }
}

/// Runs the plan; `stop` is raised by a signal (the result is then partial).
pub fn run(cfg: &Config, stop: Arc<AtomicBool>, obs: &mut dyn Observer) -> Result<ResultDoc> {
    let opts = cfg.flags.session(cfg.prefill, stop);
    let mut doc = if let Some(s) = &cfg.sustained {
        crate::steady::sustained::run_sustained(s, &opts, obs)?
    } else if let Some((sla, note)) = &cfg.sla {
        let mut doc = crate::sla::run(sla, opts.ctl.stop.clone(), obs)?;
        doc.warn(crate::fioflow::LATENCY_TARGET_AS_SLA, note.clone());
        doc
    } else {
        let mut obs = crate::session::StartAt::new(cfg.start_at, opts.ctl.stop.clone(), obs);
        let mut logs = cfg.logs.clone();
        let doc = run_plan(&cfg.plan, Path::new(DEFAULT_TARGET), &opts, &mut obs, logs.as_mut())?;
        if let Some(l) = &logs {
            l.write()?;
        }
        doc
    };
    if let (Some(named), Some(info)) = (&cfg.named, doc.target.as_mut()) {
        named.stamp(info);
    }
    Ok(doc)
}

/// What the jobs need from one target. `existing` is the size of a target that already
/// exists: jobs without --size then use it whole; a new file gets `default_size`.
fn needs_for(jobs: &[&JobSpec], existing: Option<u64>, default_size: u64) -> Needs {
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
        n.bs_gcd = j.io_sizes().into_iter().fold(n.bs_gcd, gcd);
    }
    n
}

/// `run`'s checks.
const CHECKS: Checks = Checks::new(Command::Run);

/// Run a plan: groups in order, jobs of a group concurrently. `default_target` serves
/// jobs without a filename.
fn run_plan(
    plan: &RunPlan,
    default_target: &Path,
    opts: &SessionOptions,
    obs: &mut dyn Observer,
    mut logs: Option<&mut crate::fioflow::LogFiles>,
) -> engine::Result<ResultDoc> {
    let mut doc = new_doc("run");
    for n in &plan.notes {
        doc.warn(&n.code, n.message.clone());
    }
    let jobs: Vec<&JobSpec> = plan.groups.iter().flat_map(|g| g.jobs.iter()).collect();
    let all_null = jobs.iter().all(|j| !j.engine.uses_target());
    // Checked before any target is created or filled: bad input writes nothing.
    let need = Need::groups(plan.groups.iter().map(|g| (&g.jobs[..], g.group_reporting)));
    crate::verify::precheck(&jobs, default_target)?;

    // Open every distinct target once (validating everything before any I/O starts).
    let mut paths: BTreeMap<PathBuf, Vec<&JobSpec>> = BTreeMap::new();
    for j in &jobs {
        if j.engine.uses_target() {
            match &j.files {
                // A job over several files: each file is a target with the job's region.
                Some(f) => f.paths.iter().for_each(|p| paths.entry(p.clone()).or_default().push(j)),
                None => {
                    let p = j.target.clone().unwrap_or_else(|| default_target.to_path_buf());
                    paths.entry(p).or_default().push(j);
                }
            }
        }
    }
    let plans = paths
        .iter()
        .map(|(p, js)| {
            let existing = measure::probe(p).filter(|pr| pr.exists).map(|pr| pr.size_bytes);
            TargetPlan {
                path: p.clone(),
                needs: needs_for(js, existing, opts.default_size),
                options: opts.target.clone(),
            }
        })
        .collect();
    let m = open_measurement(&need, Some(plans), opts, obs)?;
    if m.stopped() || opts.ctl.stop.load(Ordering::Relaxed) {
        finish_error(&mut doc, None, true);
        return Ok(doc);
    }
    let targets: BTreeMap<PathBuf, &OpenTarget> = paths.keys().cloned().zip(m.targets()).collect();
    for (p, t) in &targets {
        if let Some(js) = paths.get(p) {
            CHECKS.before(&mut doc, js, t, obs);
        }
    }
    if let Some((_, t)) = targets.iter().next() {
        doc.target = Some(target_info(t));
    } else if all_null {
        doc.target = Some(stats::TargetInfo::new(no_target_name(&jobs), stats::TargetKind::Null, 0));
    }
    let mut region = 0u64;
    let verified_jobs = jobs.iter().filter(|j| j.verify.is_some()).count();
    let mut verified: Vec<crate::verify::Verified> = Vec::new();
    let mut job_index = 0u32;
    let mut floor_error = None;

    for (gi, g) in plan.groups.iter().enumerate() {
        let mut bound = Vec::with_capacity(g.jobs.len());
        let first_verified = verified.len();
        let mut fds = Vec::new();
        for j in &g.jobs {
            let path = j.target.clone().unwrap_or_else(|| default_target.to_path_buf());
            let t = if !j.engine.uses_target() { None } else { targets.get(&path).copied() };
            let mut b = m.bind(j, t)?;
            if let (Some(f), true) = (&j.files, j.engine.uses_target()) {
                b.files = job_files(f, &targets, b.region_offset + b.region_len)?;
            }
            region = region.max(b.region_len.saturating_mul(b.files.len().max(1) as u64));
            let size = t.map_or(0, |t| t.probe.size_bytes);
            if let Some(v) = crate::verify::prepare(&mut b, job_index, verified_jobs, &path, size)? {
                verified.push(v);
                fds.push(b.fd);
            }
            job_index += 1;
            if crate::verify::runs_workload(j) {
                bound.push(b);
            }
        }
        let label = g.jobs.iter().map(|j| j.name.as_str()).collect::<Vec<_>>().join(" + ");
        let planned = g.jobs.iter().map(|j| j.ramp + j.runtime).max();
        obs.phase(&label, planned.filter(|d| !d.is_zero()));
        // fio's steadystate ends the group once every job that asks for it has attained it.
        let mut watch = crate::fioflow::SteadyWatch::new(&g.jobs, g.group_reporting);
        let mut out = if bound.is_empty() {
            GroupOutcome { results: Vec::new(), error: None, interrupted: false, logs: Vec::new() }
        } else {
            let group_verified = &mut verified[first_verified..];
            let mut tick = |t: &Tick| {
                // Each second: the state file follows the acknowledged writes (a power cut loses
                // at most the last second's record, and a later check counts those as newer).
                for v in group_verified.iter_mut() {
                    let _ = v.save(false);
                }
                obs.tick(t)
            };
            let out = if watch.active() {
                m.run_windows(&bound, g.group_reporting, &mut tick, &mut |w| watch.window(w))
            } else {
                m.run(&bound, g.group_reporting, &mut tick)
            };
            out?
        };
        obs.phase_done();
        watch.apply(&mut out.results);
        if let Some(l) = logs.as_deref_mut() {
            if l.add(gi, &g.jobs, g.group_reporting, &out.logs, &mut out.results) {
                doc.warn(
                    crate::fioflow::FIO_LOG_CUT,
                    format!(
                        "a per-I/O fio log stopped after {} I/Os of one worker (log_avg_msec=0 logs every I/O); \
                         the figures count them all; use log_avg_msec=N for averaged lines",
                        measure::IO_LOG_MAX
                    ),
                );
            }
        }
        let stop = out.error.is_some() || out.interrupted;
        let mut verify_error = None;
        for (v, fd) in verified[first_verified..].iter_mut().zip(fds) {
            v.save(true)?;
            if !stop && !opts.ctl.stop.load(Ordering::Relaxed) {
                obs.phase(&format!("verifying {}", v.job.name), None);
                v.read_back(fd, &opts.ctl.stop);
                obs.phase_done();
                if let Some(e) = v.read_back_error() {
                    verify_error.get_or_insert_with(|| stats::ErrorInfo::new("io", e.to_string()));
                }
            }
        }
        let stop = stop || verify_error.is_some() || opts.ctl.stop.load(Ordering::Relaxed);
        let error = out.error.or(verify_error);
        let interrupted = out.interrupted || (error.is_none() && stop);
        for mut r in out.results {
            if let Some(e) = crate::fioflow::rate_floor_error(&r) {
                doc.warn(codes::RATE_MIN_NOT_MET, e.message.clone());
                r.error.get_or_insert_with(|| e.clone());
                floor_error.get_or_insert(e);
            }
            CHECKS.result(&mut doc, &mut r, &opts.ctl, !stop && opts.ceiling_check);
            doc.results.push(r);
        }
        if stop {
            finish_error(&mut doc, error, interrupted);
            break;
        }
    }
    doc.verify = crate::verify::section(&verified);
    if let Some(v) = doc.verify.as_ref().filter(|v| v.failures_total > 0) {
        let kinds = v.by_kind.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", ");
        doc.warn(codes::VERIFY_FAILED, format!("{} verified chunks failed: {kinds}", v.failures_total));
    }
    if verified.iter().any(|v| !jobs.iter().any(|j| j.name == v.job.name && j.direct)) {
        doc.warn(
            codes::VERIFY_BUFFERED,
            "verified with buffered I/O: reads may have come from the page cache, not the device; verify with \
             direct I/O to check the device",
        );
    }
    if let (None, Some(e)) = (&doc.error, floor_error) {
        // The figures are whole; the job failed its floor (fio's exit status).
        doc.error = Some(e);
    }
    if all_null {
        doc.target = Some(stats::TargetInfo::new(no_target_name(&jobs), stats::TargetKind::Null, region));
    }
    let first = targets.values().next().copied();
    // Memory is what the mem engine measures: the device checks do not apply to it.
    let jobs: Vec<&JobSpec> = jobs.into_iter().filter(|j| j.engine != EngineKind::Mem).collect();
    let writes = jobs.iter().any(|j| j.rw.read_pct(j.mix) < 100);
    CHECKS.after(&mut doc, &jobs, first, region, writes);
    Ok(doc)
}

/// The descriptors of a job's files, each checked to hold the job's region (`end` bytes).
fn job_files(
    f: &spec::FileSet,
    targets: &BTreeMap<PathBuf, &OpenTarget>,
    end: u64,
) -> engine::Result<Vec<platform::target::Raw>> {
    f.paths
        .iter()
        .map(|p| {
            let t = targets.get(p).ok_or_else(|| engine::EngineError::usage(format!("{} is not open", p.display())))?;
            if t.probe.size_bytes < end {
                return Err(engine::EngineError::usage(format!(
                    "{} holds {} bytes, fewer than the job's region ({end} bytes) that each of its files must hold; \
                     lower size or filesize",
                    p.display(),
                    t.probe.size_bytes
                )));
            }
            Ok(platform::target::raw(&t.file))
        })
        .collect()
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{changed, usage_message};

    fn usage(o: &Options) -> String {
        usage_message(Config::new(o))
    }

    fn with(f: impl FnOnce(&mut Options)) -> Options {
        changed(Options::default(), f)
    }

    #[test]
    fn defaults_make_one_job() {
        let c = Config::new(&Options::default()).expect("valid");
        let jobs: Vec<&JobSpec> = c.plan().groups.iter().flat_map(|g| &g.jobs).collect();
        assert_eq!(jobs.len(), 1);
        assert_eq!(jobs[0].name, "job");
        assert!(jobs[0].direct && jobs[0].target.is_none());
        let c = Config::new(&with(|o| o.flags.buffered = true)).expect("valid");
        assert!(!c.plan().groups[0].jobs[0].direct);
    }

    /// What `--help` shows as each default is what a run without the option gets, and the
    /// help spells it as the user would type it.
    #[test]
    fn help_defaults_are_the_run_defaults() {
        let c = Config::new(&Options::default()).expect("valid");
        let j = &c.plan().groups[0].jobs[0];
        let size = |s: String| units::parse_size("-", &s).expect("size");
        let time = |s: String| units::parse_duration("-", &s, TimeUnit::Seconds).expect("duration");
        let count = |s: String| s.parse::<u64>().expect("count");
        assert_eq!(size(defaults::bs()), j.bs);
        assert_eq!(count(defaults::qd()), u64::from(j.qd));
        assert_eq!(count(defaults::threads()), u64::from(j.threads));
        assert_eq!(size(defaults::offset()), j.offset);
        assert_eq!(time(defaults::runtime()), j.runtime);
        assert_eq!(time(defaults::ramp()), j.ramp);
        assert_eq!(count(defaults::mix()), u64::from(j.mix));
        assert_eq!(count(defaults::submit_batch()), u64::from(j.submit_batch));
        assert_eq!(size(defaults::new_file_size()), c.flags.session(false, Arc::default()).default_size);
        let shown = [defaults::bs(), defaults::new_file_size(), defaults::runtime(), defaults::ramp(), defaults::mix()];
        assert_eq!(shown, ["4k", "1G", "5s", "0s", "70"]);
    }

    #[test]
    fn bad_values_name_their_option() {
        assert_eq!(
            usage(&with(|o| o.rw = Some("sideways".into()))),
            "invalid value for --rw: unknown mode \"sideways\"; use one of read, write, randread, randwrite, randrw, \
             readwrite"
        );
        assert_eq!(
            usage(&with(|o| o.engine = Some("spdk".into()))),
            "invalid value for --engine: unknown engine \"spdk\"; use one of io_uring (Linux), iocp (Windows), psync, null, mem"
        );
        assert_eq!(
            usage(&with(|o| o.qd = Some("5000000000".into()))),
            "invalid value for --qd: 5000000000 is too large"
        );
        assert_eq!(
            usage(&with(|o| o.submit_batch = Some("0".into()))),
            "invalid value for --submit-batch: must be at least 1 (1 = submit each I/O at once)"
        );
        assert!(usage(&with(|o| o.bs = Some("4q".into()))).starts_with("invalid value for --bs: "));
        // The plan's own checks (spec::validate) come after the conversions.
        assert!(usage(&with(|o| o.qd = Some("0".into()))).starts_with("invalid value for --qd: "));
    }

    #[test]
    fn prefill_needs_destroy_data() {
        assert_eq!(
            usage(&with(|o| o.prefill = true)),
            "--prefill writes the whole test region of the device; it needs --destroy-data DEVICE"
        );
        let o = with(|o| {
            o.prefill = true;
            o.flags.destroy_data = Some("/dev/null".into());
        });
        assert!(Config::new(&o).is_ok());
    }

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
