//! `mark`: the CrystalDiskMark card on one target — each test read and written (and, with
//! `--mix`, mixed), a warm-up and several measured passes, the best pass shown
//! (`docs/METHOD.md`, "mark").

use crate::checks::{Checks, Command};
use crate::parse::device_engine;
use crate::session::{
    finish_error, new_doc, open_measurement, Observer, SessionOptions, TargetFlags, TargetPath, DEFAULT_TARGET,
};
use crate::Result;
use engine::measure::{self, BoundJob, Measurement, Need, Needs, OpenTarget, TargetKind, TargetPlan};
use spec::units::{self, TimeUnit};
use spec::{EngineKind, JobSpec, RwMode, SpecError};
use stats::{Aggregate, ErrorInfo, JobResult, PassResult, ResultDoc};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

    /// `--profile` (or another option naming a profile), its error naming the option.
    pub(crate) fn from_option(option: &str, s: &str) -> Result<Self, SpecError> {
        Self::parse(s)
            .ok_or_else(|| SpecError::value(option, format!("unknown profile {s:?}; use default, nvme, peak or real")))
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
    format!("{}{} Q{qd}T{threads}", if seq { "SEQ" } else { "RND" }, units::format_bs_label(bs))
}

/// One test of the card: its label and its read and write jobs.
#[derive(Debug, Clone)]
pub(crate) struct CardTest {
    pub label: String,
    pub seq: bool,
    pub read: JobSpec,
    pub write: JobSpec,
}

/// The tests of `profile`, each built on `template` (target, size, time, engine, direct
/// I/O, seed). The one place the card is expanded: `mark` and `compare` both run it.
pub(crate) fn card(profile: Profile, template: &JobSpec) -> Vec<CardTest> {
    profile
        .tests()
        .iter()
        .map(|&(seq, bs, qd, threads)| {
            let base = JobSpec { name: mark_label(seq, bs, qd, threads), bs, qd, threads, ..template.clone() };
            CardTest {
                label: base.name.clone(),
                seq,
                read: JobSpec { rw: if seq { RwMode::Read } else { RwMode::RandRead }, ..base.clone() },
                write: JobSpec { rw: if seq { RwMode::Write } else { RwMode::RandWrite }, ..base },
            }
        })
        .collect()
}

/// `mark`'s options as typed.
#[derive(Debug, Clone)]
pub struct Options {
    /// File or block device [default: `DEFAULT_TARGET`].
    pub target: Option<PathBuf>,
    pub profile: String,
    pub mix: bool,
    pub size: Option<String>,
    pub passes: Option<u32>,
    pub time: Option<String>,
    pub interval: Option<String>,
    pub no_warmup: bool,
    pub quick: bool,
    pub engine: String,
    pub seed: Option<u64>,
    pub flags: TargetFlags,
    /// Start the first measured window at this wall-clock instant (RFC 3339, or Unix seconds).
    pub start_at: Option<String>,
    /// What `{rank}`, `{size}` and `{host}` stand for in the target path.
    pub rank: crate::ranks::RankNames,
    /// Write the whole test area once first and find the write cliff.
    pub sustained: bool,
    /// With `sustained`: idle pauses, each followed by a re-test (`30s,60s`).
    pub recovery: Option<String>,
}

/// A validated `mark`.
#[derive(Debug, Clone)]
pub struct Config {
    target: PathBuf,
    /// The folder named as the target (`target` is the test file in it).
    folder: Option<PathBuf>,
    profile: Profile,
    mix: bool,
    size: u64,
    /// The user chose the size; otherwise a smaller block device is used whole.
    size_explicit: bool,
    passes: u32,
    time: Duration,
    interval: Duration,
    warmup: bool,
    engine: EngineKind,
    direct: bool,
    seed: u64,
    mix_read_pct: u8,
    flags: TargetFlags,
    start_at: Option<std::time::SystemTime>,
    /// `--sustained`: the idle pauses of `--recovery` (empty: none).
    sustained: Option<Vec<Duration>>,
}

/// The card's test set, area, passes, pass length and pause when the command line leaves them
/// out, as typed; `--quick` takes [`QUICK_SIZE`].
pub const PROFILE: &str = "default";
pub const SIZE: &str = "1G";
pub const QUICK_SIZE: &str = "256M";
/// `--quick`'s passes per test and seconds per pass.
pub const QUICK_PASSES: u32 = 1;
pub const QUICK_TIME: Duration = Duration::from_secs(1);
pub const PASSES: u32 = 3;
pub const TIME: &str = "5s";
pub const INTERVAL: &str = "5s";

/// Most measured passes per test.
const MAX_PASSES: u32 = 100;

impl Config {
    pub fn new(o: &Options) -> Result<Config> {
        let start_at = o.start_at.as_deref().map(crate::session::parse_start_at).transpose()?;
        Ok(Config { start_at, ..Self::checked(o)? })
    }

    /// The options' own rules, with the error naming the option (`serve` words it for its form).
    pub(crate) fn checked(o: &Options) -> Result<Config, SpecError> {
        let named =
            TargetPath::resolve(o.rank.expand(&o.target.clone().unwrap_or_else(|| PathBuf::from(DEFAULT_TARGET))));
        let mut c = Config {
            target: named.path,
            folder: named.folder,
            start_at: None,
            profile: Profile::from_option("--profile", &o.profile)?,
            mix: o.mix,
            size: units::parse_size("--size", SIZE)?,
            size_explicit: false,
            passes: PASSES,
            time: units::parse_duration("--time", TIME, TimeUnit::Seconds)?,
            interval: units::parse_duration("--interval", INTERVAL, TimeUnit::Seconds)?,
            warmup: true,
            engine: EngineKind::NATIVE,
            direct: true,
            seed: JobSpec::default().seed,
            mix_read_pct: 70,
            flags: o.flags.for_ranks(&o.rank),
            sustained: None,
        };
        if o.sustained && o.rank.size > 1 {
            return Err(SpecError::value(
                "--sustained",
                "finds one device's write cache and runs on one host; start it without mpirun",
            ));
        }
        if o.sustained {
            c.sustained = Some(
                o.recovery.as_deref().map(crate::steady::sustained::parse_recovery).transpose()?.unwrap_or_default(),
            );
        } else if o.recovery.is_some() {
            return Err(SpecError::value("--recovery", "re-tests the write cliff: add --sustained"));
        }
        if o.quick {
            c.size = units::parse_size("--size", QUICK_SIZE)?;
            c.passes = QUICK_PASSES;
            c.time = QUICK_TIME;
            c.interval = Duration::ZERO;
            c.warmup = false;
        }
        if let Some(s) = &o.size {
            c.size = units::parse_size("--size", s)?;
            c.size_explicit = true;
        }
        if let Some(p) = o.passes {
            if p == 0 || p > MAX_PASSES {
                return Err(SpecError::value("--passes", format!("{p} is out of range; use 1 to {MAX_PASSES}")));
            }
            c.passes = p;
        }
        if let Some(s) = &o.time {
            c.time = units::parse_duration("--time", s, TimeUnit::Seconds)?;
            if c.time.is_zero() {
                return Err(SpecError::value("--time", "must be longer than 0; e.g. --time 5s"));
            }
        }
        if let Some(s) = &o.interval {
            c.interval = units::parse_duration("--interval", s, TimeUnit::Seconds)?;
        }
        if o.no_warmup {
            c.warmup = false;
        }
        c.engine = device_engine("--engine", &o.engine)?;
        c.direct = !o.flags.buffered;
        if let Some(s) = o.seed {
            c.seed = s;
        }
        if c.size < (1 << 20) {
            return Err(SpecError::value(
                "--size",
                "the mark card needs at least 1M (its sequential tests use 1 MiB blocks)",
            ));
        }
        Ok(c)
    }

    pub fn target(&self) -> &Path {
        &self.target
    }

    /// The folder named as the target, when `target` is the test file diskmeter makes in it.
    pub fn folder(&self) -> Option<&Path> {
        self.folder.as_deref()
    }
}

/// Unmeasured load at the start of each measured `mark` pass that follows a warm-up. Between
/// two passes the device idles for a few milliseconds (threads, buffers, ring set-up), and a
/// rate limiter banks credit meanwhile — blk-throttle up to one 100 ms slice of its rate, a
/// cloud volume its burst bucket. A window opened on the idle device counts that credit as
/// speed (a 10 000 IOPS throttle measured 10 968 IOPS over 1 s passes); one opened on a busy
/// device measures the sustained rate.
const PASS_RAMP: Duration = Duration::from_millis(500);

/// Runs the card; `stop` is raised by a signal (the result is then partial).
pub fn run(cfg: &Config, stop: Arc<AtomicBool>, obs: &mut dyn Observer) -> Result<ResultDoc> {
    let opts = cfg.flags.session(false, stop);
    let mut obs = crate::session::StartAt::new(cfg.start_at, opts.ctl.stop.clone(), obs);
    Ok(mark(cfg, &opts, &mut obs)?)
}

/// The test area: the size asked for, or a smaller block device whole (in whole MiB).
fn area_size(cfg: &Config) -> u64 {
    if !cfg.size_explicit && cfg.engine != EngineKind::Null {
        if let Some(p) = measure::probe(&cfg.target) {
            // --sustained looks for a write cache: a block device is tested whole.
            if p.kind == TargetKind::Block && (p.size_bytes < cfg.size || cfg.sustained.is_some()) {
                return p.size_bytes / (1 << 20) * (1 << 20);
            }
        }
    }
    cfg.size
}

/// Registered and total memory of the biggest test, checked before the target is touched.
/// Tests run one at a time; the mixed variant (--mix) keeps two buffers per slot.
fn need(cfg: &Config, card: &[CardTest]) -> Need {
    let biggest = card.iter().map(|t| t.read.bs * t.read.qd as u64 * t.read.threads as u64).max().unwrap_or(0);
    let pinned = if cfg.engine == EngineKind::IoUring { biggest * if cfg.mix { 2 } else { 1 } } else { 0 };
    let shapes: Vec<JobSpec> = card
        .iter()
        .map(|t| JobSpec {
            bs: t.read.bs,
            qd: t.read.qd,
            threads: t.read.threads,
            engine: cfg.engine,
            runtime: cfg.time,
            rw: if cfg.mix { RwMode::RandRw } else { RwMode::RandRead },
            mix: cfg.mix_read_pct,
            ..JobSpec::default()
        })
        .collect();
    Need::each(&shapes).pinning(pinned)
}

/// How the target is opened (created, filled); none for the null engine.
fn target_plan(cfg: &Config, size: u64, opts: &SessionOptions) -> Option<TargetPlan> {
    if cfg.engine == EngineKind::Null {
        return None;
    }
    let needs =
        Needs { reads: true, writes: true, region_start: 0, region_end: size, direct: cfg.direct, bs_gcd: 4096 };
    let mut topts = opts.target.clone();
    // A block device must be written before it is read: prefill when allowed.
    if measure::probe(&cfg.target).is_some_and(|p| p.kind == TargetKind::Block) {
        topts.prefill = topts.destroy_data.is_some() && cfg.sustained.is_none();
    }
    // --sustained writes the whole area first: that is the fill.
    topts.no_fill = cfg.sustained.is_some();
    let needs = Needs { reads: cfg.sustained.is_none(), ..needs };
    Some(TargetPlan { path: cfg.target.clone(), needs, options: topts })
}

/// One step of the run: a label, and the jobs of its read and write halves (the same mixed
/// job twice for a `--mix` step).
type Step = (String, JobSpec, JobSpec);

/// The card's steps: every test, and after each its mixed variant with `--mix`.
fn steps(cfg: &Config, card: Vec<CardTest>) -> Vec<Step> {
    let mut steps = Vec::new();
    for t in card {
        let mixed = cfg.mix.then(|| JobSpec {
            name: format!("{} R{}/W{}", t.label, cfg.mix_read_pct, 100 - cfg.mix_read_pct),
            rw: if t.seq { RwMode::ReadWrite } else { RwMode::RandRw },
            mix: cfg.mix_read_pct,
            ..t.read.clone()
        });
        steps.push((t.label, t.read, t.write));
        if let Some(m) = mixed {
            steps.push((m.name.clone(), m.clone(), m));
        }
    }
    steps
}

/// `mark`'s checks.
const CHECKS: Checks = Checks::new(Command::Mark);

/// Run the CrystalDiskMark card on one target.
fn mark(cfg: &Config, opts: &SessionOptions, obs: &mut dyn Observer) -> engine::Result<ResultDoc> {
    let mut doc = new_doc("mark");
    let size = area_size(cfg);
    let template = JobSpec {
        target: Some(cfg.target.clone()),
        size: Some(size),
        runtime: cfg.time,
        engine: cfg.engine,
        direct: cfg.direct,
        seed: cfg.seed,
        ..JobSpec::default()
    };
    let card = card(cfg.profile, &template);
    let need = need(cfg, &card);
    let m = open_measurement(&need, target_plan(cfg, size, opts).map(|p| vec![p]), opts, obs)?;
    let t = m.targets().first();
    doc.target = Some(match t {
        Some(t) => TargetPath { path: cfg.target.clone(), folder: cfg.folder.clone() }.info(t),
        None => stats::TargetInfo::new("null", stats::TargetKind::Null, size),
    });
    if let Some(t) = t {
        CHECKS.before(&mut doc, &card.iter().map(|c| &c.read).collect::<Vec<_>>(), t, obs);
    }
    let steps = steps(cfg, card);
    let mut stopped = None;
    if let (Some(recovery), Some(t)) = (&cfg.sustained, t) {
        let spec = crate::steady::sustained::SustainedSpec {
            bs: crate::steady::sustained::SUSTAINED_BS,
            qd: crate::steady::sustained::SUSTAINED_QD,
            range: size / crate::steady::sustained::SUSTAINED_BS * crate::steady::sustained::SUSTAINED_BS,
            recovery: recovery.clone(),
            direct: cfg.direct,
            seed: cfg.seed,
        };
        stopped = crate::steady::sustained::sustained(&mut doc, &spec, t, &m, obs, false)?;
    }
    if let Some((e, i)) = stopped {
        finish_error(&mut doc, e, i);
    } else {
        let mut runner = Runner { cfg, opts, m: &m, target: t, first: cfg.sustained.is_none() };
        for (si, step) in steps.iter().enumerate() {
            if let Some((e, i)) = runner.step(&mut doc, obs, (si + 1, steps.len()), step)? {
                finish_error(&mut doc, e, i);
                break;
            }
        }
    }
    let jobs: Vec<&JobSpec> = steps.iter().map(|(_, r, _)| r).collect();
    CHECKS.after(&mut doc, &jobs, t, size, true);
    drop(m);
    Ok(doc)
}

/// Why the card stopped early: a fault, or an interruption.
type Stopped = (Option<ErrorInfo>, bool);

/// Runs the card's steps one after another.
struct Runner<'a> {
    cfg: &'a Config,
    opts: &'a SessionOptions,
    m: &'a Measurement,
    target: Option<&'a OpenTarget>,
    /// No pause before the first run.
    first: bool,
}

impl Runner<'_> {
    /// The pause between two runs (`--interval`), cut short by a signal.
    fn pause(&mut self, obs: &mut dyn Observer) {
        let interval = self.cfg.interval;
        if !self.first && !interval.is_zero() {
            obs.phase(&format!("pause {:.0} s", interval.as_secs_f64()), Some(interval));
            let until = Instant::now() + interval;
            while Instant::now() < until && !self.opts.ctl.stop.load(Ordering::Relaxed) {
                std::thread::sleep(Duration::from_millis(50));
            }
            obs.phase_done();
        }
        self.first = false;
    }

    /// Runs one step (`n` of `total`): each direction with its warm-up and passes. Its result
    /// goes into `doc` — only the passes that completed when the run stops (`Some`).
    fn step(
        &mut self,
        doc: &mut ResultDoc,
        obs: &mut dyn Observer,
        (n, total): (usize, usize),
        (label, rjob, wjob): &Step,
    ) -> engine::Result<Option<Stopped>> {
        let cfg = self.cfg;
        let mixed = rjob.rw == RwMode::RandRw || rjob.rw == RwMode::ReadWrite;
        let dirs: Vec<(&str, &JobSpec)> =
            if mixed { vec![("mix", rjob)] } else { vec![("read", rjob), ("write", wjob)] };
        let mut passes: Vec<PassResult> =
            (1..=cfg.passes).map(|p| PassResult { pass: p, ..PassResult::default() }).collect();
        let mut result = JobResult::new(rjob.clone());
        result.name = label.clone();
        for (dname, job) in dirs {
            self.pause(obs);
            let b = self.m.bind(job, self.target)?;
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
                if self.opts.ctl.stop.load(Ordering::Relaxed) {
                    push_partial(doc, result, passes);
                    return Ok(Some((None, true)));
                }
                let warm = cfg.warmup && i == 0;
                let pass_no = if cfg.warmup { i } else { i + 1 };
                let what = if warm { "warm-up".to_string() } else { format!("pass {pass_no}/{}", cfg.passes) };
                let job: &BoundJob = if warm { &b } else { &measured };
                obs.phase(&format!("[{n}/{total}] {label} {dname} {what}"), Some(job.spec.ramp + cfg.time));
                let out = self.m.run(std::slice::from_ref(job), false, &mut |tk| obs.tick(tk));
                obs.phase_done();
                let out = out?;
                let Some(mut r) = out.results.into_iter().next() else { continue };
                if out.error.is_some() || out.interrupted {
                    push_partial(doc, result, passes);
                    return Ok(Some((out.error, out.interrupted)));
                }
                if warm {
                    continue;
                }
                // The tool's and memory's ceilings once per direction, after its last pass.
                let reference = self.opts.ceiling_check && pass_no == cfg.passes && cfg.engine != EngineKind::Null;
                CHECKS.result(doc, &mut r, &self.opts.ctl, reference);
                result.startup_burst.append(&mut r.startup_burst);
                if let Some(v) = &r.device_view {
                    match &mut result.device_view {
                        Some(acc) => acc.merge(v),
                        None => result.device_view = Some(v.clone()),
                    }
                }
                let p = &mut passes[(pass_no - 1) as usize];
                p.whole_bursts.extend(r.whole_bursts.clone());
                if mixed {
                    p.read = r.read.clone();
                    p.write = r.write.clone();
                } else if dname == "read" {
                    p.read = r.read.clone();
                } else {
                    p.write = r.write.clone();
                }
                if let Some(h) = &r.histograms {
                    let mut kept = p.histograms.take().unwrap_or_default();
                    if mixed || dname == "read" {
                        kept.read = h.read.clone();
                    }
                    if mixed || dname != "read" {
                        kept.write = h.write.clone();
                    }
                    p.histograms = Some(kept);
                }
                result.window = result.window.or(r.window);
                result.cpu = r.cpu;
            }
            // The card's cell: the best pass of this direction (as the card shows it).
            let best = |pick: fn(&PassResult) -> Option<&stats::DirStats>| {
                passes.iter().filter_map(pick).max_by(|a, b| a.mb_s.total_cmp(&b.mb_s))
            };
            let cell = match dname {
                "write" => best(|p| p.write.as_ref()),
                _ => best(|p| p.read.as_ref()),
            };
            if let Some(s) = cell {
                obs.cell(label, dname, s);
            }
        }
        let how = if cfg.passes > 1 { Aggregate::Max } else { Aggregate::Single };
        result.set_passes(passes, how);
        doc.results.push(result);
        Ok(None)
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{changed, usage_message};

    fn options() -> Options {
        Options {
            target: None,
            profile: "default".into(),
            mix: false,
            size: None,
            passes: None,
            time: None,
            interval: None,
            no_warmup: false,
            quick: false,
            engine: crate::session::DEFAULT_ENGINE.into(),
            seed: None,
            flags: TargetFlags::default(),
            start_at: None,
            sustained: false,
            recovery: None,
            rank: Default::default(),
        }
    }

    fn with(f: impl FnOnce(&mut Options)) -> Options {
        changed(options(), f)
    }

    fn usage(o: &Options) -> String {
        usage_message(Config::new(o))
    }

    #[test]
    fn defaults_and_quick() {
        let c = Config::new(&options()).expect("valid");
        assert_eq!(c.target(), Path::new(DEFAULT_TARGET));
        assert_eq!((c.size, c.passes, c.warmup, c.size_explicit), (1 << 30, 3, true, false));
        let c = Config::new(&with(|o| o.quick = true)).expect("valid");
        assert_eq!(
            (c.size, c.passes, c.time, c.interval, c.warmup),
            (256 << 20, 1, Duration::from_secs(1), Duration::ZERO, false)
        );
        // Explicit values win over --quick.
        let c = Config::new(&with(|o| {
            o.quick = true;
            o.size = Some("2M".into());
            o.passes = Some(2);
        }))
        .expect("valid");
        assert_eq!((c.size, c.passes, c.size_explicit), (2 << 20, 2, true));
    }

    #[test]
    fn bad_values_name_their_option() {
        assert_eq!(
            usage(&with(|o| o.profile = "fast".into())),
            "invalid value for --profile: unknown profile \"fast\"; use default, nvme, peak or real"
        );
        assert_eq!(usage(&with(|o| o.passes = Some(0))), "invalid value for --passes: 0 is out of range; use 1 to 100");
        assert_eq!(
            usage(&with(|o| o.passes = Some(101))),
            "invalid value for --passes: 101 is out of range; use 1 to 100"
        );
        assert_eq!(
            usage(&with(|o| o.time = Some("0s".into()))),
            "invalid value for --time: must be longer than 0; e.g. --time 5s"
        );
        assert_eq!(
            usage(&with(|o| o.size = Some("512k".into()))),
            "invalid value for --size: the mark card needs at least 1M (its sequential tests use 1 MiB blocks)"
        );
        assert_eq!(
            usage(&with(|o| o.engine = "mem".into())),
            "invalid value for --engine: the mem engine measures memory, not a device, and is only for `diskmeter \
             run`; use io_uring, psync or null"
        );
        assert!(usage(&with(|o| o.interval = Some("soon".into()))).starts_with("invalid value for --interval: "));
    }

    #[test]
    fn the_card_is_expanded_once_for_every_use() {
        let template = JobSpec { size: Some(1 << 30), ..JobSpec::default() };
        let card = card(Profile::Default, &template);
        let labels: Vec<&str> = card.iter().map(|t| t.label.as_str()).collect();
        assert_eq!(labels, ["SEQ1M Q8T1", "SEQ1M Q1T1", "RND4K Q32T1", "RND4K Q1T1"]);
        assert_eq!((card[0].read.rw, card[0].write.rw), (RwMode::Read, RwMode::Write));
        assert_eq!((card[3].read.rw, card[3].write.rw), (RwMode::RandRead, RwMode::RandWrite));
        assert!(card.iter().all(|t| t.read.size == Some(1 << 30) && t.read.name == t.label));
        // --mix adds a mixed step after each test.
        let cfg = Config::new(&with(|o| o.mix = true)).expect("valid");
        let steps = steps(&cfg, card);
        let names: Vec<&str> = steps.iter().map(|(l, _, _)| l.as_str()).collect();
        assert_eq!(names[..2], ["SEQ1M Q8T1", "SEQ1M Q8T1 R70/W30"]);
        assert_eq!((steps[1].1.rw, steps[1].1.mix), (RwMode::ReadWrite, 70));
        assert_eq!((steps.len(), steps[5].0.as_str(), steps[5].1.rw), (8, "RND4K Q32T1 R70/W30", RwMode::RandRw));
    }
}
