//! `steady`: the SNIA PTS IOPS test — purge, workload-independent preconditioning, rounds of
//! the test matrix until the tracking variables reach steady state (`docs/steady-state.md`).
//! Also the sequential writes it shares with `--sustained` ([`sustained`]) and what is
//! remembered about devices between runs ([`state`]).

pub mod state;
pub mod sustained;
pub(crate) mod warnings;

use crate::checks::{Checks, Command};
use crate::parse::u32_count;
use crate::session::{finish_error, new_doc, open_measurement, Observer, SessionOptions, TargetFlags, TargetPath};
use crate::Result;
use engine::measure::{self, direct_block, Measurement, Need, Needs, OpenTarget, TargetKind, TargetPlan};
use spec::units::{self, TimeUnit};
use spec::{DataPattern, EngineKind, JobSpec, RwMode, SpecError};
use stats::steady::{
    first_steady_window, Precondition, Purge, Round, RoundPoint, SteadyPoint, SteadyResult, SteadyTable, SteadyWindow,
    TableRow, TrackedCheck, Tracking, WindowCheck, MAX_ROUNDS, WINDOW_ROUNDS,
};
use stats::{codes, JobResult, LatHist, ResultDoc};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use sustained::{seq_write, write_job, Shown, Stopped};

/// PTS read/write mixes (read percent), in the order a round runs them.
pub const PTS_MIXES: [u8; 7] = [100, 95, 65, 50, 35, 5, 0];
/// PTS block sizes, in the order a round runs them within a mix.
pub const PTS_SIZES: [u64; 8] = [1 << 20, 128 << 10, 64 << 10, 32 << 10, 16 << 10, 8 << 10, 4 << 10, 512];
/// The tracking variables' points (block size, read percent): 4K 0/100, 64K 65/35, 1M 100/0.
/// The test matrix, round length and preconditioning when the command line leaves them out,
/// as typed (the profile's is [`ENTERPRISE`]).
pub const MATRIX: &str = "pts";
pub const ROUND_TIME: &str = "60s";
pub const PRECONDITION_PASSES: &str = "2";
const TRACKED: [(u64, u8); 3] = [(4 << 10, 0), (64 << 10, 65), (1 << 20, 100)];
/// Preconditioning: 128 KiB sequential writes at this depth.
const PRECONDITION_BS: u64 = 128 << 10;
const PRECONDITION_QD: u32 = 32;
/// Most preconditioning passes.
const MAX_PASSES: u32 = 10;
/// Unmeasured start of every point (at most a quarter of the round time). Between points the
/// device idles for a moment and a rate limiter banks credit meanwhile (blk-throttle let a
/// point at QD 128 reach 8 320 IOPS over 5 s under an 8 000 IOPS limit, 4 801 over 1 s under
/// 4 000): measured from the first I/O, that credit would count as speed.
const POINT_RAMP: Duration = Duration::from_millis(500);
/// Default test range of a new file (a block device, or an existing file of 2 MiB or more, is
/// used whole).
pub const DEFAULT_FILE_SIZE: u64 = 1 << 30;

/// [`DEFAULT_FILE_SIZE`] as `--help` shows it (`1G`).
pub fn default_file_size_arg() -> String {
    units::format_size_arg(DEFAULT_FILE_SIZE)
}

/// `steady`'s options as typed.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub target: Option<PathBuf>,
    /// enterprise or client.
    pub profile: String,
    /// pts or quick.
    pub matrix: String,
    pub round_time: String,
    pub precondition_passes: String,
    pub latency: bool,
    /// Test range; `None`: a block device or an existing file whole, else [`DEFAULT_FILE_SIZE`].
    pub size: Option<String>,
    /// Most rounds (at most 25).
    pub max_rounds: Option<String>,
    pub seed: Option<u64>,
    pub flags: TargetFlags,
}

/// A PTS device profile: depth, workers and the share of the range the rounds address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Profile {
    pub name: &'static str,
    pub qd: u32,
    pub threads: u32,
    pub active_pct: u8,
}

pub const ENTERPRISE: Profile = Profile { name: "enterprise", qd: 32, threads: 4, active_pct: 100 };
pub const CLIENT: Profile = Profile { name: "client", qd: 16, threads: 2, active_pct: 75 };

/// A validated `steady`.
#[derive(Debug, Clone)]
pub struct Config {
    target: TargetPath,
    profile: Profile,
    matrix_name: &'static str,
    /// (block size, read percent) in round order.
    matrix: Vec<(u64, u8)>,
    round_time: Duration,
    passes: u32,
    latency: bool,
    size: Option<u64>,
    max_rounds: u32,
    seed: u64,
    flags: TargetFlags,
}

/// The test matrix: `pts` (7 mixes × 8 block sizes) or `quick` (4K 0/100, 4K 65/35, 64K
/// 65/35), in PTS order (mix outer, block size inner).
pub fn matrix(name: &str) -> Option<Vec<(u64, u8)>> {
    let all = PTS_MIXES.iter().flat_map(|&m| PTS_SIZES.iter().map(move |&b| (b, m)));
    match name {
        "pts" => Some(all.collect()),
        "quick" => {
            let quick = [(4 << 10, 0), (4 << 10, 65), (64 << 10, 65)];
            Some(all.filter(|p| quick.contains(p)).collect())
        }
        _ => None,
    }
}

/// A point's name: `4K 65/35`.
pub fn point_name(bs: u64, read_pct: u8) -> String {
    format!("{} {read_pct}/{}", units::format_bs_label(bs), 100 - read_pct)
}

impl Config {
    pub fn new(o: &Options) -> Result<Config> {
        Ok(Self::checked(o)?)
    }

    fn checked(o: &Options) -> Result<Config, SpecError> {
        let target = TargetPath::resolve(o.target.clone().ok_or_else(|| {
            SpecError::value("TARGET", "name the file or block device to test, e.g. diskmeter steady /dev/nvme1n1")
        })?);
        let profile = match o.profile.as_str() {
            "enterprise" => ENTERPRISE,
            "client" => CLIENT,
            p => return Err(SpecError::value("--profile", format!("unknown profile {p:?}; use enterprise or client"))),
        };
        let (matrix_name, m) = match o.matrix.as_str() {
            "pts" => ("pts", matrix("pts")),
            "quick" => ("quick", matrix("quick")),
            m => return Err(SpecError::value("--matrix", format!("unknown matrix {m:?}; use pts or quick"))),
        };
        let round_time = units::parse_duration("--round-time", &o.round_time, TimeUnit::Seconds)?;
        if round_time < Duration::from_secs(1) {
            return Err(SpecError::value(
                "--round-time",
                format!("{} is too short; each point needs at least 1s (PTS: 60s)", o.round_time),
            ));
        }
        if round_time.subsec_nanos() != 0 {
            return Err(SpecError::value("--round-time", "give whole seconds, e.g. --round-time 60s"));
        }
        let passes = u32_count("--precondition-passes", &o.precondition_passes)?;
        if passes > MAX_PASSES {
            return Err(SpecError::value("--precondition-passes", format!("use 0 to {MAX_PASSES} (PTS: 2)")));
        }
        let max_rounds = match &o.max_rounds {
            Some(s) => u32_count("--max-rounds", s)?,
            None => MAX_ROUNDS,
        };
        if !(WINDOW_ROUNDS as u32..=MAX_ROUNDS).contains(&max_rounds) {
            return Err(SpecError::value(
                "--max-rounds",
                format!("use {WINDOW_ROUNDS} to {MAX_ROUNDS}: a window is {WINDOW_ROUNDS} rounds, PTS stops at 25"),
            ));
        }
        let size = o.size.as_deref().map(|s| units::parse_size("--size", s)).transpose()?;
        if let Some(s) = size {
            if s < (1 << 20) * 2 {
                return Err(SpecError::value("--size", "the test range needs at least 2M"));
            }
        }
        Ok(Config {
            target,
            profile,
            matrix_name,
            matrix: m.unwrap_or_default(),
            round_time,
            passes,
            latency: o.latency,
            size,
            max_rounds,
            seed: o.seed.unwrap_or(JobSpec::default().seed),
            flags: o.flags.clone(),
        })
    }

    pub fn target(&self) -> &Path {
        &self.target.path
    }
}

/// Runs `steady`; `stop` is raised by a signal (the result is then partial).
pub fn run(cfg: &Config, stop: Arc<AtomicBool>, obs: &mut dyn Observer) -> Result<ResultDoc> {
    let mut opts = cfg.flags.session(false, stop);
    // Preconditioning writes the whole range: a new test file is only reserved.
    opts.target.no_fill = true;
    Ok(steady(cfg, &opts, obs)?)
}

/// The test range: `--size`, else a block device or an existing file of 2 MiB or more whole (in
/// whole MiB), else [`DEFAULT_FILE_SIZE`].
fn range(cfg: &Config) -> u64 {
    if let Some(s) = cfg.size {
        return s;
    }
    match measure::probe(&cfg.target.path) {
        Some(p) if p.kind == TargetKind::Block => p.size_bytes / (1 << 20) * (1 << 20),
        Some(p) if p.exists && p.size_bytes >= 2 << 20 => p.size_bytes / (1 << 20) * (1 << 20),
        _ => DEFAULT_FILE_SIZE,
    }
}

/// `steady`'s checks.
const CHECKS: Checks = Checks::new(Command::Steady);

fn steady(cfg: &Config, opts: &SessionOptions, obs: &mut dyn Observer) -> engine::Result<ResultDoc> {
    let started = Instant::now();
    let mut doc = new_doc("steady");
    let range = range(cfg);
    let active =
        ((u128::from(range) * u128::from(cfg.profile.active_pct) / 100) as u64 / (1 << 20) * (1 << 20)).max(1 << 20);
    // Memory for the deepest point, before the target is touched.
    let deepest = JobSpec {
        bs: 1 << 20,
        qd: cfg.profile.qd,
        threads: cfg.profile.threads,
        rw: RwMode::RandRw,
        runtime: cfg.round_time,
        ..JobSpec::default()
    };
    let needs = Needs {
        reads: false,
        writes: true,
        region_start: 0,
        region_end: range,
        direct: !cfg.flags.buffered,
        bs_gcd: 512,
    };
    let plan = TargetPlan { path: cfg.target.path.clone(), needs, options: opts.target.clone() };
    let m = open_measurement(&Need::group(std::slice::from_ref(&deepest)), Some(vec![plan]), opts, obs)?;
    let Some(t) = m.targets().first() else {
        finish_error(&mut doc, None, true);
        return Ok(doc);
    };
    doc.target = Some(cfg.target.info(t));

    let (points, skipped) = usable_points(cfg, t);
    let mut s = SteadyResult {
        profile: cfg.profile.name.to_string(),
        matrix: cfg.matrix_name.to_string(),
        qd: cfg.profile.qd,
        threads: cfg.profile.threads,
        active_range_pct: cfg.profile.active_pct,
        range_bytes: range,
        active_bytes: active,
        round_time_s: cfg.round_time.as_secs_f64(),
        max_rounds: cfg.max_rounds,
        purge: Purge::default(),
        precondition: Precondition {
            passes_planned: cfg.passes,
            bs: PRECONDITION_BS,
            qd: PRECONDITION_QD,
            ..Precondition::default()
        },
        points: points.iter().map(|&(bs, rp)| SteadyPoint { name: point_name(bs, rp), bs, read_pct: rp }).collect(),
        skipped,
        rounds: Vec::new(),
        tracking: tracking_vars(&points, cfg.latency),
        window: None,
        steady: false,
        latency: cfg.latency,
        table: SteadyTable::default(),
        seconds: 0.0,
        verdict: String::new(),
    };
    if points.is_empty() {
        return Err(engine::EngineError::usage(format!(
            "no point of the {} matrix can run on {}: its direct-I/O unit is {} bytes",
            cfg.matrix_name,
            cfg.target.path.display(),
            direct_block(&t.probe)
        )));
    }
    if s.tracking.is_empty() {
        return Err(engine::EngineError::usage(format!(
            "no tracking variable (4K 0/100, 64K 65/35, 1M 100/0) can run on {}",
            cfg.target.path.display()
        )));
    }

    let jobs: Vec<JobSpec> = points.iter().map(|&(bs, rp)| point_job(cfg, bs, rp, active, 0)).collect();
    let jobs: Vec<&JobSpec> = jobs.iter().collect();
    CHECKS.before(&mut doc, &jobs, t, obs);
    let mut stopped = purge(&mut s, &mut doc, t, range, &m, obs);
    if stopped.is_none() {
        stopped = precondition(&mut s, t, range, cfg, &m, obs)?;
    }
    if stopped.is_none() {
        stopped = rounds(&mut s, &mut doc, t, &points, cfg, &m, obs)?;
    }
    conclude(&mut s, &mut doc);
    CHECKS.results(&mut doc, &opts.ctl, opts.ceiling_check && stopped.is_none());
    s.seconds = started.elapsed().as_secs_f64();
    if let Some((e, interrupted)) = stopped {
        finish_error(&mut doc, e, interrupted);
    }
    CHECKS.after(&mut doc, &jobs, Some(t), active, true);
    doc.steady = Some(s);
    drop(m);
    Ok(doc)
}

/// The matrix's points this target can run: a block size below its direct-I/O unit is
/// left out, and said.
fn usable_points(cfg: &Config, t: &OpenTarget) -> (Vec<(u64, u8)>, Vec<String>) {
    let unit = if cfg.flags.buffered { 1 } else { direct_block(&t.probe) };
    let mut ok = Vec::new();
    let mut skipped = Vec::new();
    for &(bs, rp) in &cfg.matrix {
        if bs % unit == 0 {
            ok.push((bs, rp));
        } else {
            skipped.push(format!(
                "{}: block size below the direct-I/O unit of {} ({unit} bytes)",
                point_name(bs, rp),
                t.path.display()
            ));
        }
    }
    (ok, skipped)
}

/// The tracking variables among `points`: IOPS of 4K 0/100, 64K 65/35 and 1M 100/0, and
/// with `latency` their p99 too.
fn tracking_vars(points: &[(u64, u8)], latency: bool) -> Vec<Tracking> {
    let mut out = Vec::new();
    let tracked: Vec<(u64, u8)> = TRACKED.iter().copied().filter(|p| points.contains(p)).collect();
    for metric in ["iops", "p99"] {
        if metric == "p99" && !latency {
            continue;
        }
        for &(bs, rp) in &tracked {
            let point = point_name(bs, rp);
            let unit = if metric == "iops" { "IOPS" } else { "p99" };
            out.push(Tracking { name: format!("{point} {unit}"), point, metric: metric.into(), values: Vec::new() });
        }
    }
    out
}

/// Purge the range; `Some` when a signal stopped it.
fn purge(
    s: &mut SteadyResult,
    doc: &mut ResultDoc,
    t: &OpenTarget,
    range: u64,
    m: &Measurement,
    obs: &mut dyn Observer,
) -> Option<Stopped> {
    obs.phase(&format!("purging {}", t.path.display()), None);
    let p = measure::purge(t, 0, range, &m.control().stop);
    obs.phase_done();
    s.purge = Purge { method: p.method.to_string(), done: p.done, bytes: p.bytes, message: p.message.clone() };
    if p.done {
        state::update(t, |r| {
            r.purged_at = Some(state::now());
            r.purge_method = Some(p.method.to_string());
            r.purged_bytes = range;
            r.full_writes = 0;
        });
    } else if m.control().stop.load(Ordering::Relaxed) {
        return Some((None, true));
    } else {
        doc.warn(codes::NOT_PURGED, p.message);
    }
    None
}

/// Workload-independent preconditioning: `passes` sequential 128 KiB writes over the range.
fn precondition(
    s: &mut SteadyResult,
    t: &OpenTarget,
    range: u64,
    cfg: &Config,
    m: &Measurement,
    obs: &mut dyn Observer,
) -> engine::Result<Option<Stopped>> {
    let since = Instant::now();
    let total = range * u64::from(cfg.passes);
    let p = &mut s.precondition;
    for pass in 0..cfg.passes {
        let label = format!("preconditioning pass {}/{}", pass + 1, cfg.passes);
        let job = write_job(
            &label,
            0,
            range,
            PRECONDITION_BS,
            PRECONDITION_QD,
            !cfg.flags.buffered,
            cfg.seed + u64::from(pass),
        );
        let shown = Shown { label: &label, before: p.bytes, total, since };
        let offset_t = since.elapsed().as_secs_f64();
        let w = seq_write(t, &job, m, obs, &shown)?;
        let before = p.bytes;
        p.series.extend(w.series.iter().map(|q| stats::steady::ProgressPoint {
            t_s: offset_t + q.t_s,
            bytes: before + q.bytes,
            mb_s: q.mb_s,
        }));
        p.bytes += w.bytes;
        p.seconds = since.elapsed().as_secs_f64();
        p.mb_s = if p.seconds > 0.0 { p.bytes as f64 / 1e6 / p.seconds } else { 0.0 };
        if w.error.is_some() || w.interrupted || w.bytes < range {
            let interrupted = w.interrupted || m.control().stop.load(Ordering::Relaxed);
            return Ok(Some((w.error, interrupted)));
        }
        p.passes_done += 1;
        state::record_full_write(t, range);
    }
    p.complete = true;
    Ok(None)
}

/// One point's job in round `round`.
fn point_job(cfg: &Config, bs: u64, read_pct: u8, active: u64, round: u32) -> JobSpec {
    let rw = match read_pct {
        100 => RwMode::RandRead,
        0 => RwMode::RandWrite,
        _ => RwMode::RandRw,
    };
    JobSpec {
        name: point_name(bs, read_pct),
        rw,
        mix: read_pct,
        bs,
        qd: cfg.profile.qd,
        threads: cfg.profile.threads,
        size: Some(active / bs * bs),
        offset: 0,
        runtime: cfg.round_time,
        ramp: POINT_RAMP.min(cfg.round_time / 4),
        time_based: true,
        data: DataPattern::Random,
        direct: !cfg.flags.buffered,
        engine: EngineKind::NATIVE,
        seed: cfg.seed.wrapping_add(u64::from(round) * 1000),
        ..JobSpec::default()
    }
}

/// Rounds until a window of five is steady, or `max_rounds`.
#[allow(clippy::too_many_arguments)]
fn rounds(
    s: &mut SteadyResult,
    doc: &mut ResultDoc,
    t: &OpenTarget,
    points: &[(u64, u8)],
    cfg: &Config,
    m: &Measurement,
    obs: &mut dyn Observer,
) -> engine::Result<Option<Stopped>> {
    let t0 = Instant::now();
    let total = points.len() * cfg.max_rounds as usize;
    for round in 1..=cfg.max_rounds {
        let mut r = Round { round, t_s: t0.elapsed().as_secs_f64(), points: Vec::new() };
        let mut last_results = Vec::new();
        for (i, &(bs, rp)) in points.iter().enumerate() {
            if m.control().stop.load(Ordering::Relaxed) {
                keep_round(s, r);
                return Ok(Some((None, true)));
            }
            let done = (round as usize - 1) * points.len() + i;
            obs.steps(done, total, t0.elapsed());
            let job = point_job(cfg, bs, rp, s.active_bytes, round);
            let b = m.bind(&job, Some(t))?;
            let mut lat = LatHist::new();
            obs.phase(&format!("round {round}: {}", job.name), Some(job.ramp + cfg.round_time));
            let out = m.run_windows(std::slice::from_ref(&b), false, &mut |tk| obs.tick(tk), &mut |w| {
                lat.add(w.read);
                lat.add(w.write);
                true
            });
            obs.phase_done();
            let out = out?;
            let Some(res) = out.results.into_iter().next() else { continue };
            if out.error.is_some() || out.interrupted {
                keep_round(s, r);
                return Ok(Some((out.error, out.interrupted)));
            }
            r.points.push(round_point(&job.name, &res, &lat));
            last_results.push(res);
        }
        for v in &mut s.tracking {
            let p = r.points.iter().find(|p| p.name == v.point);
            v.values.push(p.map_or(0.0, |p| if v.metric == "iops" { p.iops } else { p.lat_p99_ns }));
        }
        s.rounds.push(r);
        let vars: Vec<Vec<f64>> = s.tracking.iter().map(|v| v.values.clone()).collect();
        if first_steady_window(&vars, WINDOW_ROUNDS).is_some() || round == cfg.max_rounds {
            doc.results = last_results
                .into_iter()
                .map(|mut j| {
                    j.name = format!("round {round}: {}", j.name);
                    j
                })
                .collect();
            break;
        }
    }
    Ok(None)
}

/// A round cut short: its finished points are kept, but it does not count as a round.
fn keep_round(s: &mut SteadyResult, r: Round) {
    if !r.points.is_empty() {
        s.rounds.push(r);
    }
}

fn round_point(name: &str, r: &JobResult, lat: &LatHist) -> RoundPoint {
    let (ri, wi) = (r.read.as_ref().map_or(0.0, |d| d.iops), r.write.as_ref().map_or(0.0, |d| d.iops));
    RoundPoint {
        name: name.to_string(),
        iops: ri + wi,
        mb_s: r.read.as_ref().map_or(0.0, |d| d.mb_s) + r.write.as_ref().map_or(0.0, |d| d.mb_s),
        read_iops: ri,
        write_iops: wi,
        lat_mean_ns: if lat.count() > 0 { lat.mean() } else { 0.0 },
        lat_p99_ns: if lat.count() > 0 { lat.quantile(0.99) as f64 } else { 0.0 },
    }
}

/// The window, the verdict, the table and the `not-steady` warning.
fn conclude(s: &mut SteadyResult, doc: &mut ResultDoc) {
    // Only complete rounds count (an interrupted round has fewer points).
    let complete = s.rounds.iter().filter(|r| r.points.len() == s.points.len()).count();
    let vars: Vec<Vec<f64>> = s.tracking.iter().map(|v| v.values[..complete.min(v.values.len())].to_vec()).collect();
    let found = first_steady_window(&vars, WINDOW_ROUNDS);
    let start = found.or_else(|| complete.checked_sub(WINDOW_ROUNDS));
    if let Some(st) = start {
        s.steady = found.is_some();
        s.window = Some(SteadyWindow {
            first_round: st as u32 + 1,
            last_round: (st + WINDOW_ROUNDS) as u32,
            steady: s.steady,
            checks: s
                .tracking
                .iter()
                .zip(&vars)
                .map(|(t, v)| TrackedCheck { name: t.name.clone(), check: WindowCheck::of(&v[st..st + WINDOW_ROUNDS]) })
                .collect(),
        });
    }
    // The table: IOPS averaged over the window (else over the complete rounds there are).
    let (from, to) = match &s.window {
        Some(w) => (w.first_round as usize - 1, w.last_round as usize),
        None => (0, complete),
    };
    let mut mixes: Vec<u8> = Vec::new();
    let mut sizes: Vec<u64> = Vec::new();
    for p in &s.points {
        if !mixes.contains(&p.read_pct) {
            mixes.push(p.read_pct);
        }
        if !sizes.contains(&p.bs) {
            sizes.push(p.bs);
        }
    }
    sizes.sort_by(|a, b| b.cmp(a));
    mixes.sort_by(|a, b| b.cmp(a));
    let avg = |name: &str| -> Option<f64> {
        let xs: Vec<f64> = s.rounds[from..to]
            .iter()
            .filter_map(|r| r.points.iter().find(|p| p.name == name).map(|p| p.iops))
            .collect();
        (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
    };
    s.table = SteadyTable {
        mixes: mixes.iter().map(|m| format!("{m}/{}", 100 - m)).collect(),
        rows: sizes
            .iter()
            .map(|&bs| TableRow {
                bs,
                iops: mixes
                    .iter()
                    .map(|&m| {
                        s.points
                            .iter()
                            .any(|p| p.bs == bs && p.read_pct == m)
                            .then(|| avg(&point_name(bs, m)))
                            .flatten()
                    })
                    .collect(),
            })
            .collect(),
    };
    s.verdict = verdict(s, complete);
    if !s.steady && complete > 0 {
        let why = match &s.window {
            Some(w) => {
                let failing: Vec<String> = w
                    .checks
                    .iter()
                    .filter(|c| !c.check.ok())
                    .map(|c| {
                        format!(
                            "{} {}",
                            c.name,
                            match (c.check.range_ok, c.check.slope_ok) {
                                (false, false) => "range and slope",
                                (false, true) => "range",
                                _ => "slope",
                            }
                        )
                    })
                    .collect();
                format!("the last window (rounds {}-{}) fails on {}", w.first_round, w.last_round, failing.join(", "))
            }
            None => format!("only {complete} round(s) ran; a window needs {WINDOW_ROUNDS}"),
        };
        if complete >= s.max_rounds as usize {
            doc.warn(
                codes::NOT_STEADY,
                format!(
                    "no steady state after {complete} rounds: {why}; the figures are those of the last {WINDOW_ROUNDS} \
                     rounds, not steady-state figures"
                ),
            );
        } else {
            doc.warn(codes::NOT_STEADY, format!("not steady: {why}"));
        }
    }
}

fn verdict(s: &SteadyResult, complete: usize) -> String {
    let figures = |w: &SteadyWindow| {
        w.checks.iter().map(|c| format!("{} {:.0}", c.name, c.check.mean)).collect::<Vec<_>>().join(", ")
    };
    match &s.window {
        Some(w) if w.steady => format!(
            "steady state after round {} (window rounds {}-{}): {}",
            w.last_round,
            w.first_round,
            w.last_round,
            figures(w)
        ),
        Some(w) => format!(
            "not steady after {complete} rounds; the last {WINDOW_ROUNDS} (rounds {}-{}) give {}",
            w.first_round,
            w.last_round,
            figures(w)
        ),
        None if s.precondition.complete || s.precondition.passes_planned == 0 => {
            format!("stopped after {complete} round(s): too few for a steady-state window of {WINDOW_ROUNDS}")
        }
        None => format!(
            "stopped during preconditioning ({} of {} passes, {} written): no rounds ran",
            s.precondition.passes_done,
            s.precondition.passes_planned,
            units::format_size(s.precondition.bytes)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options() -> Options {
        Options {
            target: Some("x.img".into()),
            profile: "enterprise".into(),
            matrix: "pts".into(),
            round_time: "60s".into(),
            precondition_passes: "2".into(),
            ..Options::default()
        }
    }

    fn usage(o: &Options) -> String {
        Config::new(o).expect_err("an error").to_string()
    }

    #[test]
    fn the_pts_matrix_in_pts_order() {
        let m = matrix("pts").expect("a value");
        assert_eq!(m.len(), 56);
        assert_eq!(m[0], (1 << 20, 100));
        assert_eq!(m[7], (512, 100));
        assert_eq!(m[55], (512, 0));
        let q = matrix("quick").expect("a value");
        assert_eq!(q, vec![(64 << 10, 65), (4 << 10, 65), (4 << 10, 0)]);
        assert_eq!(point_name(512, 65), "512B 65/35");
        assert_eq!(point_name(4096, 0), "4K 0/100");
    }

    #[test]
    fn profiles_and_defaults() {
        let c = Config::new(&options()).expect("a value");
        assert_eq!(c.profile, ENTERPRISE);
        assert_eq!((c.round_time, c.passes, c.max_rounds), (Duration::from_secs(60), 2, 25));
        let c = Config::new(&Options { profile: "client".into(), ..options() }).expect("a value");
        assert_eq!((c.profile.qd, c.profile.threads, c.profile.active_pct), (16, 2, 75));
    }

    #[test]
    fn a_folder_names_its_test_file() {
        let d = tempfile::tempdir().expect("tempdir");
        let c = Config::new(&Options { target: Some(d.path().to_path_buf()), ..options() }).expect("valid");
        assert_eq!(c.target(), d.path().join(crate::session::DEFAULT_TARGET));
        assert_eq!(c.target.folder.as_deref(), Some(d.path()));
    }

    #[test]
    fn bad_values_name_their_option() {
        for (o, want) in [
            (Options { target: None, ..options() }, "TARGET"),
            (Options { profile: "laptop".into(), ..options() }, "--profile"),
            (Options { matrix: "full".into(), ..options() }, "--matrix"),
            (Options { round_time: "0s".into(), ..options() }, "--round-time"),
            (Options { round_time: "1.5s".into(), ..options() }, "--round-time"),
            (Options { precondition_passes: "11".into(), ..options() }, "--precondition-passes"),
            (Options { precondition_passes: "-1".into(), ..options() }, "--precondition-passes"),
            (Options { max_rounds: Some("26".into()), ..options() }, "--max-rounds"),
            (Options { max_rounds: Some("4".into()), ..options() }, "--max-rounds"),
            (Options { size: Some("1M".into()), ..options() }, "--size"),
        ] {
            let e = usage(&o);
            assert!(e.contains(want), "{want}: {e}");
        }
    }

    #[test]
    fn tracking_variables_follow_the_matrix() {
        let q = matrix("quick").expect("a value");
        let names: Vec<String> = tracking_vars(&q, false).into_iter().map(|t| t.name).collect();
        assert_eq!(names, vec!["4K 0/100 IOPS", "64K 65/35 IOPS"]);
        let names: Vec<String> =
            tracking_vars(&matrix("pts").expect("a value"), true).into_iter().map(|t| t.name).collect();
        assert_eq!(
            names,
            vec!["4K 0/100 IOPS", "64K 65/35 IOPS", "1M 100/0 IOPS", "4K 0/100 p99", "64K 65/35 p99", "1M 100/0 p99"]
        );
    }

    fn doc_with(rounds: &[[f64; 2]]) -> (SteadyResult, ResultDoc) {
        let points = vec![(4096u64, 0u8), (64 << 10, 65)];
        let mut s = SteadyResult {
            profile: "enterprise".into(),
            matrix: "quick".into(),
            qd: 32,
            threads: 4,
            active_range_pct: 100,
            range_bytes: 1 << 30,
            active_bytes: 1 << 30,
            round_time_s: 5.0,
            max_rounds: 25,
            purge: Purge::default(),
            precondition: Precondition { passes_planned: 2, passes_done: 2, complete: true, ..Precondition::default() },
            points: points.iter().map(|&(bs, rp)| SteadyPoint { name: point_name(bs, rp), bs, read_pct: rp }).collect(),
            skipped: Vec::new(),
            rounds: Vec::new(),
            tracking: tracking_vars(&points, false),
            window: None,
            steady: false,
            latency: false,
            table: SteadyTable::default(),
            seconds: 0.0,
            verdict: String::new(),
        };
        for (i, r) in rounds.iter().enumerate() {
            s.rounds.push(Round {
                round: i as u32 + 1,
                t_s: i as f64,
                points: s
                    .points
                    .iter()
                    .zip(r)
                    .map(|(p, &v)| RoundPoint { name: p.name.clone(), iops: v, ..RoundPoint::default() })
                    .collect(),
            });
            for (t, &v) in s.tracking.iter_mut().zip(r) {
                t.values.push(v);
            }
        }
        let mut doc = ResultDoc::new("steady", "now", stats::HostInfo::default());
        conclude(&mut s, &mut doc);
        (s, doc)
    }

    #[test]
    fn the_window_excludes_the_rounds_before_a_change() {
        // Fast for three rounds, then slow and steady.
        let rounds = [
            [9000.0, 3000.0],
            [9100.0, 2900.0],
            [9050.0, 3050.0],
            [2000.0, 800.0],
            [2010.0, 790.0],
            [1990.0, 805.0],
            [2005.0, 800.0],
            [1995.0, 798.0],
        ];
        let (s, doc) = doc_with(&rounds);
        let w = s.window.as_ref().expect("a value");
        assert!(s.steady && (w.first_round, w.last_round) == (4, 8), "{w:?}");
        assert!(doc.warnings.is_empty());
        assert_eq!(s.table.mixes, vec!["65/35", "0/100"]);
        assert_eq!(s.table.rows.len(), 2);
        assert_eq!(s.table.rows[0].bs, 64 << 10);
        assert!((s.table.rows[1].iops[1].expect("a value") - 2000.0).abs() < 1.0);
        assert!(s.table.rows[0].iops[1].is_none());
        assert!(s.verdict.starts_with("steady state after round 8 (window rounds 4-8)"), "{}", s.verdict);
    }

    #[test]
    fn no_window_after_the_last_round_is_reported_not_steady() {
        let rounds: Vec<[f64; 2]> =
            (0..25).map(|i| if i % 2 == 0 { [1000.0, 500.0] } else { [1500.0, 500.0] }).collect();
        let (s, doc) = doc_with(&rounds);
        let w = s.window.as_ref().expect("a value");
        assert!(!s.steady && !w.steady && (w.first_round, w.last_round) == (21, 25));
        assert_eq!(doc.warnings[0].code, codes::NOT_STEADY);
        assert!(doc.warnings[0].message.contains("4K 0/100 IOPS range"), "{}", doc.warnings[0].message);
        assert!(s.verdict.starts_with("not steady after 25 rounds"), "{}", s.verdict);
    }
}
