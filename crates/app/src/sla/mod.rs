//! `sla`: the most IOPS a target gives while a latency statistic stays under a bound
//! (`docs/METHOD.md`, "sla"). [`search`] decides which points to measure; this module measures
//! them on the engine — ramp, then one-second windows until IOPS and the bounded
//! statistic are stable — and builds the result document.

pub mod search;

use crate::checks::{Checks, Command};
use crate::parse::{device_engine, percent_fraction, rw, u32_count};
use crate::session::{finish_error, gcd, new_doc, open_measurement, Observer, SessionOptions, TargetFlags, TargetPath};
use crate::Result;
use engine::measure::{self, Knobs, Measurement, Need, Needs, OpenTarget, TargetKind, TargetPlan, Window};
use engine::EngineError;
use search::{GridPoint, MeasureMode, Prober, SearchConfig, SearchOutcome};
use spec::units::{self, TimeUnit};
use spec::{EngineKind, JobSpec, SpecError};
use stats::{codes, ErrorInfo, JobResult, LatHist, Percentile, ResultDoc, SlaPoint, SlaResult, SlaStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `sla`'s options as typed.
#[derive(Debug, Clone)]
pub struct Options {
    /// File or block device [default: `DEFAULT_TARGET`].
    pub target: Option<PathBuf>,
    /// The latency bound, e.g. `10ms`.
    pub latency: String,
    /// The statistic bounded: mean, 50, 90, 99, 99.9.
    pub percentile: String,
    /// One mode, or two joined by `+`.
    pub rw: String,
    pub bs: String,
    pub mix: Option<String>,
    pub max_qd: String,
    /// Most workers [default: the CPUs this process may use].
    pub max_threads: Option<String>,
    pub exhaustive: bool,
    pub open_loop: bool,
    pub size: String,
    pub ramp: String,
    pub min_windows: String,
    pub max_windows: String,
    pub cv: String,
    pub guard: String,
    pub engine: String,
    pub dist: Option<String>,
    pub data: Option<String>,
    pub seed: Option<u64>,
    pub flags: TargetFlags,
}

/// Most one-second windows per point.
/// The search's settings when the command line leaves them out, as typed.
pub const DEFAULT_PERCENTILE: &str = "mean";
pub const DEFAULT_RW: &str = "randread";
pub const DEFAULT_BS: &str = "4k";
pub const DEFAULT_MAX_QD: &str = "256";
pub const DEFAULT_SIZE: &str = "1G";
pub const DEFAULT_RAMP: &str = "1s";
pub const DEFAULT_MIN_WINDOWS: &str = "3";
pub const DEFAULT_MAX_WINDOWS: &str = "10";
pub const DEFAULT_CV: &str = "5%";
pub const DEFAULT_GUARD: &str = "10%";

const MAX_WINDOWS: u32 = 3600;

/// A validated `sla`: everything it needs besides the target. Built only by [`Config::new`],
/// which checks every value.
#[derive(Debug, Clone)]
pub struct Config {
    target: TargetPath,
    pub(crate) bound_ns: u64,
    pub(crate) percentile: Percentile,
    /// One stream, or two independent streams (e.g. randread + randwrite) whose depths
    /// scale together. `qd`, `threads`, `runtime`, `ramp` and `rate_iops` are set per point.
    pub(crate) streams: Vec<JobSpec>,
    /// Two streams: the first stream's share of the outstanding I/O, percent.
    pub(crate) first_share: u8,
    pub(crate) max_qd: u32,
    pub(crate) max_threads: u32,
    pub(crate) exhaustive: bool,
    pub(crate) open_loop: bool,
    /// Ramp before each point (excluded from its figures).
    pub(crate) ramp: Duration,
    pub(crate) min_windows: u32,
    pub(crate) max_windows: u32,
    /// Relative standard error (fraction) under which IOPS and latency count as stable.
    pub(crate) cv_target: f64,
    /// A point whose statistic is within this fraction of the bound is measured twice.
    pub(crate) guard: f64,
    /// Test area (a file diskmeter creates, or the part of a device used).
    pub(crate) size: u64,
    flags: TargetFlags,
}

impl Config {
    /// Checks every option; the most workers default to the CPUs this process may use.
    pub fn new(o: &Options) -> Result<Config> {
        Ok(Self::checked(o, measure::allowed_cpus().len() as u32)?)
    }

    fn checked(o: &Options, cpus: u32) -> Result<Config, SpecError> {
        let bound = units::parse_duration("--latency", &o.latency, TimeUnit::Seconds)?;
        if bound.is_zero() {
            return Err(SpecError::value(
                "--latency",
                format!("{} is not a usable bound; give a time above zero, e.g. --latency 10ms", o.latency),
            ));
        }
        let percentile = Percentile::parse(&o.percentile).ok_or_else(|| {
            SpecError::value(
                "--percentile",
                format!("unknown statistic {:?}; use mean, 50, 90, 99 or 99.9", o.percentile),
            )
        })?;
        let bs = units::parse_size("--bs", &o.bs)?;
        let engine = device_engine("--engine", &o.engine)?;
        let mut base = JobSpec { bs, engine, direct: !o.flags.buffered, ..JobSpec::default() };
        if let Some(s) = &o.dist {
            base.dist = units::parse_distribution("--dist", s)?;
        }
        if let Some(s) = &o.data {
            base.data = units::parse_data("--data", s)?;
        }
        if let Some(s) = o.seed {
            base.seed = s;
        }
        let mix = match &o.mix {
            Some(s) => Some(units::parse_percent("--mix", s)?.round() as u8),
            None => None,
        };
        let modes: Vec<&str> = o.rw.split('+').map(str::trim).collect();
        if modes.len() > 2 || modes.iter().any(|m| m.is_empty()) {
            return Err(SpecError::value(
                "--rw",
                format!("{:?}: give one mode or two joined by + (randread+randwrite)", o.rw),
            ));
        }
        let mut streams = Vec::new();
        for m in &modes {
            let rw = rw("--rw", m)?;
            let mut j = JobSpec { rw, name: rw.name().to_string(), ..base.clone() };
            if modes.len() == 1 {
                if let Some(p) = mix {
                    j.mix = p;
                }
            }
            spec::validate::validate_job(&JobSpec { qd: 1, threads: 1, ..j.clone() })?;
            streams.push(j);
        }
        let first_share = if modes.len() == 2 {
            let p = mix.unwrap_or(50);
            if p == 0 || p >= 100 {
                return Err(SpecError::value(
                    "--mix",
                    "with two streams it is the first stream's share of the depth: use 1 to 99",
                ));
            }
            p
        } else {
            50
        };
        let max_qd = u32_count("--max-qd", &o.max_qd)?;
        if max_qd == 0 {
            return Err(SpecError::value("--max-qd", "must be at least 1"));
        }
        let max_threads = match &o.max_threads {
            Some(s) => u32_count("--max-threads", s)?,
            None => cpus.max(1),
        };
        if max_threads == 0 {
            return Err(SpecError::value("--max-threads", "must be at least 1"));
        }
        if max_threads > spec::validate::MAX_THREADS {
            return Err(SpecError::value(
                "--max-threads",
                format!("{max_threads} is too many; use at most {}", spec::validate::MAX_THREADS),
            ));
        }
        // The deepest point of the grid runs max_qd per worker on max_threads workers.
        if let Some(m) = spec::validate::depth_problem(engine, max_qd, max_threads, "--max-qd", "--max-threads") {
            return Err(SpecError::value("--max-qd", m));
        }
        let min_windows = u32_count("--min-windows", &o.min_windows)?;
        let max_windows = u32_count("--max-windows", &o.max_windows)?;
        if min_windows < 2 {
            return Err(SpecError::value("--min-windows", "must be at least 2 (a spread needs two windows)"));
        }
        if max_windows < min_windows || max_windows > MAX_WINDOWS {
            return Err(SpecError::value(
                "--max-windows",
                format!("must be between --min-windows ({min_windows}) and {MAX_WINDOWS}"),
            ));
        }
        let size = units::parse_size("--size", &o.size)?;
        if size < bs {
            return Err(SpecError::value("--size", format!("{} is smaller than one block (--bs {})", o.size, o.bs)));
        }
        Ok(Config {
            target: TargetPath::or_default(o.target.clone()),
            bound_ns: bound.as_nanos().min(u128::from(u64::MAX)) as u64,
            percentile,
            streams,
            first_share,
            max_qd,
            max_threads,
            exhaustive: o.exhaustive,
            open_loop: o.open_loop,
            ramp: units::parse_duration("--ramp", &o.ramp, TimeUnit::Seconds)?,
            min_windows,
            max_windows,
            cv_target: percent_fraction("--cv", &o.cv)?,
            guard: units::parse_percent("--guard", &o.guard)? / 100.0,
            size,
            flags: o.flags.clone(),
        })
    }

    pub fn target(&self) -> &Path {
        &self.target.path
    }
    /// The latency bound, ns.
    pub fn bound_ns(&self) -> u64 {
        self.bound_ns
    }
    pub fn percentile(&self) -> Percentile {
        self.percentile
    }
    pub fn streams(&self) -> &[JobSpec] {
        &self.streams
    }
    pub fn max_qd(&self) -> u32 {
        self.max_qd
    }
    pub fn max_threads(&self) -> u32 {
        self.max_threads
    }
}

/// Per-stream depths of a point: one stream takes the grid depth; two streams split
/// it by `first_share` (at least one each).
fn stream_depths(cfg: &Config, qd: u32) -> Vec<u32> {
    if cfg.streams.len() < 2 {
        return vec![qd];
    }
    let first = ((f64::from(qd) * f64::from(cfg.first_share) / 50.0) / 2.0).round().max(1.0) as u32;
    let second = ((f64::from(qd) * f64::from(100 - cfg.first_share) / 50.0) / 2.0).round().max(1.0) as u32;
    vec![first, second]
}

fn cv(xs: &[f64]) -> f64 {
    if xs.len() < 2 {
        return 0.0;
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if mean <= 0.0 {
        return 0.0;
    }
    let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0);
    var.sqrt() / mean
}

fn median(xs: &[f64]) -> f64 {
    let mut v = xs.to_vec();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => 0.0,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

fn statistic(h: &LatHist, p: Percentile) -> f64 {
    match p.quantile() {
        Some(q) => h.quantile(q) as f64,
        None => h.mean(),
    }
}

/// Accumulates the windows of one point across one or two runs.
struct PointAcc {
    slots: usize,
    pct: Percentile,
    /// Per slot: windows not yet complete across slots.
    pending: Vec<std::collections::VecDeque<(LatHist, LatHist, u64, u64)>>,
    total: Vec<[LatHist; 2]>,
    bytes: Vec<[u64; 2]>,
    win_iops: Vec<f64>,
    win_metric: Vec<f64>,
}

impl PointAcc {
    fn new(slots: usize, pct: Percentile) -> Self {
        Self {
            slots,
            pct,
            pending: (0..slots).map(|_| Default::default()).collect(),
            total: (0..slots).map(|_| [LatHist::new(), LatHist::new()]).collect(),
            bytes: vec![[0; 2]; slots],
            win_iops: Vec::new(),
            win_metric: Vec::new(),
        }
    }

    /// Take one slot's window; returns true when a window completed across all slots.
    fn add(&mut self, w: &Window) -> bool {
        if w.slot >= self.slots {
            return false;
        }
        self.pending[w.slot].push_back((w.read.clone(), w.write.clone(), w.read_bytes, w.write_bytes));
        if self.pending.iter().any(|p| p.is_empty()) {
            return false;
        }
        let mut ops = 0u64;
        let mut metric = 0f64;
        for s in 0..self.slots {
            let Some((r, wr, rb, wb)) = self.pending[s].pop_front() else { continue };
            for (d, h) in [(0, &r), (1, &wr)] {
                if h.count() > 0 {
                    ops += h.count();
                    metric = metric.max(statistic(h, self.pct));
                    self.total[s][d].add(h);
                }
            }
            self.bytes[s][0] += rb;
            self.bytes[s][1] += wb;
        }
        self.win_iops.push(ops as f64);
        self.win_metric.push(metric);
        true
    }

    fn windows(&self) -> usize {
        self.win_iops.len()
    }

    /// The bounded statistic over every window so far (exact: merged histograms).
    fn metric(&self) -> f64 {
        let mut m = 0f64;
        for t in &self.total {
            for h in t {
                if h.count() > 0 {
                    m = m.max(statistic(h, self.pct));
                }
            }
        }
        m
    }

    /// Stable when the point's IOPS and bounded statistic are known to within `target`:
    /// the relative standard error over the windows (CV / sqrt(n)) is below it for both.
    /// Per-window p99 on a shared machine easily varies by 20 % from second to second; the
    /// estimate over n windows is what has to settle.
    fn stable(&self, target: f64) -> bool {
        let n = (self.windows() as f64).sqrt();
        n > 0.0 && cv(&self.win_iops) / n < target && cv(&self.win_metric) / n < target
    }
}

struct EngineProber<'a> {
    cfg: &'a Config,
    m: &'a Measurement,
    target: Option<&'a OpenTarget>,
    opts: &'a SessionOptions,
    obs: &'a mut dyn Observer,
    t0: Instant,
    /// Job results of each measurement (last run of it), for the best point's details.
    runs: Vec<(GridPoint, Vec<JobResult>)>,
}

/// Why a measurement failed, which ends the search.
enum Halt {
    /// A signal: the result is partial.
    Interrupted,
    /// An I/O fault: the result is partial, with the fault as its error.
    Failed(ErrorInfo),
    /// Bad input found against the target: no result.
    Usage(EngineError),
}

impl EngineProber<'_> {
    fn jobs_for(&self, p: GridPoint, windows: u32) -> Vec<JobSpec> {
        let depths = stream_depths(self.cfg, p.qd);
        let total: u32 = depths.iter().sum();
        self.cfg
            .streams
            .iter()
            .zip(depths)
            .map(|(s, qd)| JobSpec {
                name: format!("{} Q{qd}T{}", s.rw.name(), p.threads),
                qd,
                threads: p.threads,
                ramp: self.cfg.ramp,
                runtime: Duration::from_secs(u64::from(windows) + 1),
                time_based: true,
                rate_iops: p.rate_iops.map(|r| (r * u64::from(qd) / u64::from(total.max(1))).max(1)),
                size: Some(self.cfg.size),
                ..s.clone()
            })
            .collect()
    }

    /// One run of a point: ramp, then windows until stable (at least `min` windows, at
    /// most `max`), or early rejection.
    fn run_once(
        &mut self,
        p: GridPoint,
        acc: &mut PointAcc,
        min: usize,
        max: usize,
        early_ok: bool,
    ) -> Result<bool, Halt> {
        let jobs = self.jobs_for(p, max as u32);
        let mut bound = Vec::with_capacity(jobs.len());
        for j in &jobs {
            bound.push(self.m.bind(j, self.target).map_err(Halt::Usage)?);
        }
        let start = acc.windows();
        let bound_ns = self.cfg.bound_ns as f64;
        let cv_target = self.cfg.cv_target;
        let mut early = false;
        let label = match p.rate_iops {
            Some(r) => format!("rate {r} IOPS (QD cap {})", p.qd),
            None => format!("QD {} x {} worker{}", p.qd, p.threads, if p.threads == 1 { "" } else { "s" }),
        };
        self.obs.phase(&label, Some(self.cfg.ramp + Duration::from_secs(max as u64)));
        let out = {
            let obs = &mut *self.obs;
            self.m.run_windows(&bound, false, &mut |t| obs.tick(t), &mut |w| {
                if !acc.add(w) {
                    return true;
                }
                let n = acc.windows() - start;
                if early_ok && n >= 2 && median(&acc.win_metric[start..]) > 2.0 * bound_ns {
                    early = true;
                    return false;
                }
                !(n >= max || (n >= min && acc.stable(cv_target)))
            })
        };
        self.obs.phase_done();
        match out {
            Ok(o) => {
                if o.interrupted {
                    return Err(Halt::Interrupted);
                }
                if let Some(e) = o.error {
                    return Err(Halt::Failed(e));
                }
                if let Some(slot) = self.runs.last_mut() {
                    slot.1 = o.results;
                }
                Ok(early)
            }
            Err(e) if e.is_usage() => Err(Halt::Usage(e)),
            Err(e) => Err(Halt::Failed(ErrorInfo::new("io", e.to_string()))),
        }
    }
}

impl Prober for EngineProber<'_> {
    type Halt = Halt;

    fn plan(&mut self, done: usize, estimate: usize) {
        self.obs.steps(done, estimate, self.t0.elapsed());
    }

    fn measure(&mut self, p: GridPoint, mode: MeasureMode) -> Result<SlaPoint, Halt> {
        if self.opts.ctl.stop.load(Ordering::Relaxed) {
            return Err(Halt::Interrupted);
        }
        let slots = self.cfg.streams.len();
        let mut acc = PointAcc::new(slots, self.cfg.percentile);
        let (min, max) =
            (self.cfg.min_windows.max(2) as usize, self.cfg.max_windows.max(self.cfg.min_windows) as usize);
        self.runs.push((p, Vec::new()));
        let early = self.run_once(p, &mut acc, min, max, mode.allow_early_reject)?;
        let bound = self.cfg.bound_ns as f64;
        let mut remeasured = false;
        if !early && acc.windows() > 0 && (acc.metric() - bound).abs() <= self.cfg.guard * bound {
            // Close to the bound: measure again and decide on both runs together.
            remeasured = true;
            self.run_once(p, &mut acc, min, max, false)?;
        }
        Ok(self.point(p, &acc, early, remeasured))
    }
}

impl EngineProber<'_> {
    fn point(&self, p: GridPoint, acc: &PointAcc, early: bool, remeasured: bool) -> SlaPoint {
        let secs = acc.windows() as f64;
        let depths = stream_depths(self.cfg, p.qd);
        let mut streams = Vec::new();
        let mut worst: Option<(f64, stats::LatSummary)> = None;
        let (mut ops, mut bytes) = (0u64, 0u64);
        for (s, spec) in self.cfg.streams.iter().enumerate() {
            let mut merged = LatHist::new();
            for (d, h) in acc.total[s].iter().enumerate() {
                if h.count() > 0 {
                    merged.add(h);
                    let m = statistic(h, self.cfg.percentile);
                    if worst.as_ref().is_none_or(|(w, _)| m > *w) {
                        worst = Some((m, h.summary()));
                    }
                }
                bytes += acc.bytes[s][d];
            }
            ops += merged.count();
            let sb = acc.bytes[s][0] + acc.bytes[s][1];
            streams.push(SlaStream {
                name: spec.rw.name().to_string(),
                qd: depths.get(s).copied().unwrap_or(p.qd),
                threads: p.threads,
                iops: if secs > 0.0 { merged.count() as f64 / secs } else { 0.0 },
                mb_s: if secs > 0.0 { sb as f64 / 1e6 / secs } else { 0.0 },
                lat_ns: merged.summary(),
            });
        }
        let (metric, lat) = worst.unwrap_or_default();
        let iops = if secs > 0.0 { ops as f64 / secs } else { 0.0 };
        let mut feasible = ops > 0 && metric <= self.cfg.bound_ns as f64;
        if let Some(r) = p.rate_iops {
            feasible &= iops >= 0.95 * r as f64;
        }
        SlaPoint {
            qd: p.qd,
            threads: p.threads,
            rate_iops: p.rate_iops,
            outstanding: depths.iter().sum::<u32>() * p.threads,
            iops,
            mb_s: if secs > 0.0 { bytes as f64 / 1e6 / secs } else { 0.0 },
            lat_ns: lat,
            metric_ns: metric,
            feasible,
            windows: acc.windows() as u32,
            cv_iops: cv(&acc.win_iops),
            cv_lat: cv(&acc.win_metric),
            stable: acc.stable(self.cfg.cv_target),
            remeasured,
            early_reject: early,
            t_s: self.t0.elapsed().as_secs_f64(),
            streams,
        }
    }
}

/// Runs the search; `stop` is raised by a signal (the result is then partial).
pub fn run(cfg: &Config, stop: Arc<AtomicBool>, obs: &mut dyn Observer) -> Result<ResultDoc> {
    let opts = cfg.flags.session(false, stop);
    Ok(sla(cfg, &opts, obs)?)
}

/// The answer in one sentence (stored in the result as `sla.verdict`), made by `report`.
pub(crate) fn verdict(o: &SearchOutcome, cfg: &SearchConfig, what: &str) -> String {
    report::sla_verdict(&report::SlaAnswer {
        what,
        bound_ns: cfg.bound_ns,
        percentile: cfg.percentile,
        best: o.best.as_ref(),
        knee: o.knee.as_ref(),
        first: o.points.first(),
        limit: o.limit,
    })
}

/// `sla`'s checks.
const CHECKS: Checks = Checks::new(Command::Sla);

/// Run the `sla` search on its target and build its result document.
fn sla(cfg: &Config, opts: &SessionOptions, obs: &mut dyn Observer) -> engine::Result<ResultDoc> {
    let mut doc = new_doc("sla");
    let null = cfg.streams.iter().all(|s| s.engine == EngineKind::Null);
    let m = open_measurement(&need(cfg), (!null).then(|| vec![target_plan(cfg, opts)]), opts, obs)?;
    let t = m.targets().first();
    doc.target = Some(match t {
        Some(t) => cfg.target.info(t),
        None => stats::TargetInfo::new("null", stats::TargetKind::Null, cfg.size),
    });
    if opts.ctl.stop.load(Ordering::Relaxed) {
        finish_error(&mut doc, None, true);
        return Ok(doc);
    }
    let jobs: Vec<&JobSpec> = cfg.streams.iter().collect();
    if let Some(t) = t {
        CHECKS.before(&mut doc, &jobs, t, obs);
    }

    let scfg = SearchConfig {
        bound_ns: cfg.bound_ns as f64,
        percentile: cfg.percentile,
        max_qd: cfg.max_qd,
        max_threads: cfg.max_threads,
        exhaustive: cfg.exhaustive,
        open_loop: cfg.open_loop,
        ..SearchConfig::default()
    };
    let t0 = Instant::now();
    let mut prober = EngineProber { cfg, m: &m, target: t, opts, obs, t0, runs: Vec::new() };
    let (outcome, halt) = search::search(&scfg, &mut prober);
    let mut halt = match halt {
        Some(Halt::Usage(e)) => return Err(e),
        h => h,
    };
    let searched_runs = prober.runs.len();
    // Drift check: measure the first point again.
    if let (false, Some(first)) = (outcome.stopped, outcome.points.first()) {
        let p = GridPoint { qd: first.qd, threads: first.threads, rate_iops: first.rate_iops };
        prober.plan(outcome.points.len(), outcome.points.len() + 1);
        match prober.measure(p, MeasureMode { allow_early_reject: false }) {
            Ok(again) => drift_warning(&mut doc, first, &again),
            Err(Halt::Usage(e)) => return Err(e),
            Err(h) => halt = Some(h),
        }
    }
    let search_seconds = t0.elapsed().as_secs_f64();
    let what = match t {
        Some(t) => t.path.display().to_string(),
        None => "the null engine".to_string(),
    };
    let verdict = verdict(&outcome, &scfg, &what);

    best_results(&mut doc, &outcome, &prober.runs[..searched_runs], opts);
    unstable_warning(&mut doc, cfg, &outcome);
    match halt {
        Some(Halt::Interrupted) => finish_error(&mut doc, None, true),
        Some(Halt::Failed(e)) => finish_error(&mut doc, Some(e), false),
        Some(Halt::Usage(_)) | None => {}
    }
    let writes = jobs.iter().any(|j| j.rw.read_pct(j.mix) < 100);
    CHECKS.after(&mut doc, &jobs, t, cfg.size, writes);
    doc.sla = Some(SlaResult {
        latency_ns: cfg.bound_ns,
        percentile: cfg.percentile,
        mode: if cfg.open_loop { "open-loop" } else { "closed-loop" }.to_string(),
        exhaustive: cfg.exhaustive,
        streams: cfg.streams.iter().map(|s| s.rw.name().to_string()).collect(),
        bs: cfg.streams.first().map_or(0, |s| s.bs),
        best: outcome.best,
        points: outcome.points,
        knee: outcome.knee,
        thrashing: outcome.thrashing,
        qd1_misses: outcome.qd1_misses,
        search_seconds,
        verdict,
    });
    drop(m);
    Ok(doc)
}

/// Memory and memlock for the deepest point (it pins the most registered memory), checked
/// before the target is touched.
fn need(cfg: &Config) -> Need {
    let deepest: Vec<JobSpec> = cfg
        .streams
        .iter()
        .zip(stream_depths(cfg, cfg.max_qd))
        .map(|(s, qd)| JobSpec {
            qd,
            threads: cfg.max_threads,
            runtime: Duration::from_secs(u64::from(cfg.max_windows) + 1),
            ramp: cfg.ramp,
            ..s.clone()
        })
        .collect();
    Need::group(&deepest).with_knobs(Knobs::SLA)
}

/// How the target is opened for every stream (created and filled as they need).
fn target_plan(cfg: &Config, opts: &SessionOptions) -> TargetPlan {
    let target = cfg.target();
    let mut needs = Needs { region_end: cfg.size, bs_gcd: 0, ..Needs::default() };
    for s in &cfg.streams {
        let rp = s.rw.read_pct(s.mix);
        needs.reads |= rp > 0;
        needs.writes |= rp < 100;
        needs.direct |= s.direct;
        needs.bs_gcd = gcd(needs.bs_gcd, s.bs);
    }
    let mut options = opts.target.clone();
    if measure::probe(target).is_some_and(|p| p.kind == TargetKind::Block) {
        options.prefill = options.destroy_data.is_some();
    }
    TargetPlan { path: target.to_path_buf(), needs, options }
}

/// The best point's full job results (series, CDF) into `results`: its last measurement (a
/// re-measured point keeps its second figures), with a warning when a worker was CPU-bound.
fn best_results(
    doc: &mut ResultDoc,
    outcome: &SearchOutcome,
    runs: &[(GridPoint, Vec<JobResult>)],
    opts: &SessionOptions,
) {
    if let Some(b) = &outcome.best {
        let g = GridPoint { qd: b.qd, threads: b.threads, rate_iops: b.rate_iops };
        if let Some((_, runs)) = runs.iter().rev().find(|(p, _)| *p == g) {
            for mut r in runs.clone() {
                r.name = format!("best: {}", r.name);
                // The answer's point is checked as a run is: where its I/O ran, the tool's and
                // memory's ceilings for its shape.
                let reference = opts.ceiling_check && !opts.ctl.stop.load(Ordering::Relaxed);
                CHECKS.result(doc, &mut r, &opts.ctl, reference);
                doc.results.push(r);
            }
        }
    }
}

/// Points that never settled, named in one warning.
fn unstable_warning(doc: &mut ResultDoc, cfg: &Config, outcome: &SearchOutcome) {
    let unstable: Vec<String> = outcome
        .points
        .iter()
        .filter(|p| !p.stable && !p.early_reject)
        .map(|p| format!("Q{}T{}", p.qd, p.threads))
        .collect();
    if !unstable.is_empty() {
        doc.warn(
            codes::UNSTABLE,
            format!(
                "{} of {} points did not settle (relative standard error >= {:.0}% after {} windows): {}; \
                 raise --max-windows or check for background load",
                unstable.len(),
                outcome.points.len(),
                cfg.cv_target * 100.0,
                cfg.max_windows,
                unstable.join(", ")
            ),
        );
    }
}

/// Drift check: the first point measured again at the end. A machine or device that changed
/// during the search (another tenant, thermal throttling, an SLC cache running out) makes
/// points measured at different times incomparable; say so.
fn drift_warning(doc: &mut ResultDoc, first: &SlaPoint, again: &SlaPoint) {
    let change = if first.iops > 0.0 { again.iops / first.iops - 1.0 } else { 0.0 };
    if change.abs() > 0.15 {
        doc.warn(
            codes::DRIFT,
            format!(
                "the target changed during the search: QD {} x {} gave {:.0} IOPS at the start and {:.0} at the end \
                 ({:+.0}%); points measured at different times are not comparable — rerun on a quiet machine \
                 or compare several runs",
                first.qd,
                first.threads,
                first.iops,
                again.iops,
                change * 100.0
            ),
        );
    }
}

#[cfg(test)]
mod tests;
