//! `compare`: the same suite on several targets, passes interleaved so that drift of the
//! machine (thermal, background load, SLC caches) hits every target alike, then per-test
//! confidence intervals, ratios and a significance verdict. Or saved results compared
//! (`--results`, before/after a change).

use crate::checks::{Checks, Command};
use crate::mark::{card, Profile};
use crate::parse::{device_engine, rw, u32_count};
use crate::session::{
    finish_error, gcd, new_doc, open_measurement_then, Observer, SessionOptions, TargetFlags, TargetPath,
};
use crate::{Error, Result};
use engine::measure::{self, target_info, Measurement, Need, Needs, OpenTarget, TargetKind, TargetPlan};
use spec::units::{self, TimeUnit};
use spec::{EngineKind, JobSpec, SpecError};
use stats::compare_docs::build_row;
use stats::{Aggregate, CompareResult, JobResult, PassResult, ResultDoc, Subject, TestKind};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The confidence of the intervals and of the significance test.
const CONFIDENCE: f64 = 0.95;
/// Fewest measured passes per test and target: one pass has no spread to test against.
pub const MIN_PASSES: u32 = 2;
/// Most measured passes per test and target.
pub const MAX_PASSES: u32 = 1000;

/// `compare`'s options as typed.
#[derive(Debug, Clone)]
pub struct Options {
    /// Two or more targets (the first is the baseline).
    pub targets: Vec<PathBuf>,
    /// Or two or more saved result files (the first is the baseline).
    pub results: Vec<PathBuf>,
    /// Comma-separated labels.
    pub labels: Option<String>,
    pub profile: String,
    pub rw: Option<String>,
    pub bs: String,
    pub qd: String,
    pub threads: String,
    pub mix: Option<String>,
    /// Measured passes per test and target [default: [`PASSES`]; `quick`: [`QUICK_PASSES`]].
    pub passes: Option<String>,
    /// Length of each pass [default: [`TIME`]; `quick`: [`QUICK_TIME`]].
    pub time: Option<String>,
    pub no_warmup: bool,
    /// Test area per target [default: [`SIZE`]; `quick`: [`QUICK_SIZE`]].
    pub size: Option<String>,
    /// `--quick`: a verdict in about a minute (smaller area, fewer and shorter passes).
    pub quick: bool,
    pub engine: String,
    pub test: String,
    pub seed: Option<u64>,
    pub flags: TargetFlags,
}

/// The job of `--rw` (block size, depth, workers) and the significance test when the command
/// line leaves them out, as typed.
pub const BS: &str = "4k";
pub const QD: &str = "1";
pub const THREADS: &str = "1";
pub const TEST: &str = "welch";

/// Measured passes per test and target, by default and with `--quick`. Three is the fewest
/// that gives Welch's t a usable interval (two passes draw the `compare-caveat` warning).
pub const PASSES: u32 = 5;
pub const QUICK_PASSES: u32 = 3;
/// Length of each pass, by default and with `--quick`.
pub const TIME: &str = "5s";
pub const QUICK_TIME: &str = "1s";
/// Test area per target, by default and with `--quick` (as `mark --quick`).
pub const SIZE: &str = "1G";
pub const QUICK_SIZE: &str = "256M";

/// A validated `compare`.
#[derive(Debug, Clone)]
pub struct Config {
    source: Source,
}

#[derive(Debug, Clone)]
enum Source {
    /// Saved results, with their labels (none given: from the file names).
    Results { files: Vec<PathBuf>, labels: Vec<String>, test: TestKind },
    /// Targets measured now.
    Targets(Targets),
}

/// What to run on every target.
#[derive(Debug, Clone)]
enum Suite {
    /// The tests of a `mark` profile (each read and write).
    Profile(Profile),
    /// One job as given (its rw decides the directions).
    Job(Box<JobSpec>),
}

/// A validated comparison of targets.
#[derive(Debug, Clone)]
struct Targets {
    targets: Vec<TargetPath>,
    suite: Suite,
    passes: u32,
    time: Duration,
    warmup: bool,
    size: u64,
    engine: EngineKind,
    direct: bool,
    seed: u64,
    test: TestKind,
    /// Labels for the targets (default A, B, C, …).
    labels: Vec<String>,
    flags: TargetFlags,
}

impl Config {
    pub fn new(o: &Options) -> Result<Config> {
        if !o.results.is_empty() {
            if o.results.len() < 2 {
                return Err(Error::usage("--results needs at least two result files (the first is the baseline)"));
            }
            let test = test_kind(&o.test)?;
            let labels = labels(o.labels.as_deref(), o.results.len())?;
            return Ok(Config { source: Source::Results { files: o.results.clone(), labels, test } });
        }
        if o.targets.len() < 2 {
            return Err(Error::usage(
                "compare needs two or more targets (diskmeter compare A B) or --results A.json B.json",
            ));
        }
        Ok(Config { source: Source::Targets(Targets::new(o)?) })
    }
}

/// `--labels`: exactly `n` non-empty labels (none given: empty).
fn labels(list: Option<&str>, n: usize) -> Result<Vec<String>, SpecError> {
    match list {
        None => Ok(Vec::new()),
        Some(s) => {
            let l: Vec<String> = s.split(',').map(|x| x.trim().to_string()).collect();
            if l.len() != n || l.iter().any(String::is_empty) {
                return Err(SpecError::value("--labels", format!("give {n} non-empty labels separated by commas")));
            }
            Ok(l)
        }
    }
}

fn test_kind(s: &str) -> Result<TestKind, SpecError> {
    TestKind::parse(s)
        .ok_or_else(|| SpecError::value("--test", format!("unknown test {s:?}; use welch or mann-whitney")))
}

impl Targets {
    fn new(o: &Options) -> Result<Targets, SpecError> {
        let passes = match &o.passes {
            Some(p) => u32_count("--passes", p)?,
            None if o.quick => QUICK_PASSES,
            None => PASSES,
        };
        // One pass per target has no spread: no interval, no verdict.
        if !(MIN_PASSES..=MAX_PASSES).contains(&passes) {
            return Err(SpecError::value(
                "--passes",
                format!(
                    "{passes} is out of range; use {MIN_PASSES} to {MAX_PASSES} (a verdict needs each target's spread)"
                ),
            ));
        }
        let quick = |default: &'static str, quick: &'static str| if o.quick { quick } else { default };
        let time =
            units::parse_duration("--time", o.time.as_deref().unwrap_or(quick(TIME, QUICK_TIME)), TimeUnit::Seconds)?;
        if time.is_zero() {
            return Err(SpecError::value("--time", "must be longer than 0; e.g. --time 5s"));
        }
        let size = units::parse_size("--size", o.size.as_deref().unwrap_or(quick(SIZE, QUICK_SIZE)))?;
        let engine = device_engine("--engine", &o.engine)?;
        let direct = !o.flags.buffered;
        let seed = o.seed.unwrap_or(JobSpec::default().seed);
        let suite = match &o.rw {
            Some(mode) => {
                let rw = rw("--rw", mode)?;
                let mut j = JobSpec {
                    rw,
                    bs: units::parse_size("--bs", &o.bs)?,
                    qd: u32_count("--qd", &o.qd)?,
                    threads: u32_count("--threads", &o.threads)?,
                    size: Some(size),
                    engine,
                    direct,
                    seed,
                    runtime: time,
                    ..JobSpec::default()
                };
                if let Some(m) = &o.mix {
                    j.mix = units::parse_percent("--mix", m)?.round() as u8;
                }
                j.name = format!("{} {} Q{}T{}", rw.name(), units::format_bs_label(j.bs), j.qd, j.threads);
                spec::validate::validate_job(&j)?;
                Suite::Job(Box::new(j))
            }
            None => Suite::Profile(Profile::from_option("--profile", &o.profile)?),
        };
        Ok(Targets {
            targets: resolved_targets(&o.targets)?,
            suite,
            passes,
            time,
            warmup: !o.no_warmup,
            size,
            engine,
            direct,
            seed,
            test: test_kind(&o.test)?,
            labels: labels(o.labels.as_deref(), o.targets.len())?,
            flags: o.flags.clone(),
        })
    }
}

/// The targets named, folders resolved to their test files. Two names for one test file would
/// have the second wait for the first's lock for ever: refused.
fn resolved_targets(named: &[PathBuf]) -> Result<Vec<TargetPath>, SpecError> {
    let targets: Vec<TargetPath> = named.iter().cloned().map(TargetPath::resolve).collect();
    for (i, a) in targets.iter().enumerate() {
        if let Some(b) = targets[..i].iter().find(|b| same_file(&b.path, &a.path)) {
            let named = |t: &TargetPath| t.folder.as_ref().unwrap_or(&t.path).display().to_string();
            return Err(SpecError::value(
                "TARGET",
                format!(
                    "{} and {} are the same test file {}; name two different disks or folders",
                    named(b),
                    named(a),
                    a.path.display()
                ),
            ));
        }
    }
    Ok(targets)
}

/// Whether two paths name one file: existing paths by what they resolve to (`/mnt/c/` and
/// `/mnt/c`, a symlink), a file still to be made by its folder's identity and its name.
fn same_file(a: &std::path::Path, b: &std::path::Path) -> bool {
    let identity = |p: &std::path::Path| -> PathBuf {
        if let Ok(c) = std::fs::canonicalize(p) {
            return c;
        }
        let dir = match p.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => std::path::Path::new("."),
        };
        match (std::fs::canonicalize(dir), p.file_name()) {
            (Ok(d), Some(n)) => d.join(n),
            _ => p.to_path_buf(),
        }
    };
    identity(a) == identity(b)
}

/// Label `i` of a comparison: A … Z, then T27, T28, …
pub fn default_label(i: usize) -> String {
    if i < 26 {
        char::from(b'A' + i as u8).to_string()
    } else {
        format!("T{}", i + 1)
    }
}

/// (test name, direction, job) steps of the suite.
fn steps(cfg: &Targets) -> Vec<Step> {
    let mut out = Vec::new();
    match &cfg.suite {
        Suite::Profile(p) => {
            let template = JobSpec {
                size: Some(cfg.size),
                runtime: cfg.time,
                engine: cfg.engine,
                direct: cfg.direct,
                seed: cfg.seed,
                ..JobSpec::default()
            };
            for t in card(*p, &template) {
                out.push((t.label.clone(), "read", t.read));
                out.push((t.label, "write", t.write));
            }
        }
        Suite::Job(j) => {
            let j = JobSpec { runtime: cfg.time, size: j.size.or(Some(cfg.size)), ..(**j).clone() };
            let dir = if j.rw.read_pct(j.mix) == 100 {
                "read"
            } else if j.rw.read_pct(j.mix) == 0 {
                "write"
            } else {
                "mixed"
            };
            out.push((j.name.clone(), dir, j));
        }
    }
    out
}

/// Runs the comparison; `stop` is raised by a signal (the result is then partial).
pub fn run(cfg: &Config, stop: Arc<AtomicBool>, obs: &mut dyn Observer) -> Result<ResultDoc> {
    match &cfg.source {
        Source::Results { files, labels, test } => compare_files(files, labels, *test),
        Source::Targets(t) => {
            let opts = t.flags.session(false, stop);
            Ok(compare_targets(t, &opts, obs)?)
        }
    }
}

/// Reads the result files and compares them. Each is labelled as given, else by its file
/// name; names that collide (a/result.json, b/result.json) fall back to A, B, …
fn compare_files(files: &[PathBuf], labels: &[String], test: TestKind) -> Result<ResultDoc> {
    let mut docs = Vec::new();
    for (i, p) in files.iter().enumerate() {
        let doc = crate::input::read_result(p)?;
        let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
        let label = labels.get(i).cloned().unwrap_or(stem);
        docs.push((Subject { label, source: p.display().to_string(), device: None, folder: None }, doc));
    }
    let mut seen = std::collections::HashSet::new();
    if docs.iter().any(|(s, _)| s.label.is_empty() || !seen.insert(s.label.clone())) {
        for (i, (s, _)) in docs.iter_mut().enumerate() {
            s.label = default_label(i);
        }
    }
    for (s, d) in &mut docs {
        s.device = d.target.as_ref().and_then(|t| t.model.clone().or_else(|| t.device.clone()));
    }
    compare_results(&docs, test)
}

/// One test of the suite: its name, direction (read, write, mixed) and job.
type Step = (String, &'static str, JobSpec);

/// Per-pass results: `passes[step][target]`.
type Passes = Vec<Vec<Vec<PassResult>>>;

/// Why the passes stopped early: the fault of the run that failed, and whether it was a signal.
type Stopped = (Option<stats::ErrorInfo>, bool);

/// `compare`'s checks.
const CHECKS: Checks = Checks::new(Command::Compare);

/// Run the suite on every target with interleaved passes and compare.
fn compare_targets(cfg: &Targets, opts: &SessionOptions, obs: &mut dyn Observer) -> engine::Result<ResultDoc> {
    let mut doc = new_doc("compare");
    let steps = steps(cfg);
    let labels: Vec<String> =
        (0..cfg.targets.len()).map(|i| cfg.labels.get(i).cloned().unwrap_or_else(|| default_label(i))).collect();
    // Open (create and fill) every target first: bad input anywhere fails before any I/O.
    let m = open_targets(cfg, &steps, opts, obs)?;
    if m.stopped() {
        finish_error(&mut doc, None, true);
        return Ok(doc);
    }
    let open = per_target(cfg, &m);
    doc.target = open.first().and_then(|o| o.map(|o| cfg.targets[0].info(o)));
    let jobs: Vec<&JobSpec> = steps.iter().map(|(_, _, j)| j).collect();
    for o in open.iter().flatten() {
        CHECKS.before(&mut doc, &jobs, o, obs);
    }
    let (passes, stopped) = run_passes(&mut doc, cfg, &steps, &m, &labels, opts, obs)?;
    let mut rows = Vec::new();
    for (si, (test, dir, job)) in steps.iter().enumerate() {
        // Per target, one result per test (the mean over its passes), then the comparison rows.
        for (ti, label) in labels.iter().enumerate() {
            let ps = passes[si][ti].clone();
            if !ps.is_empty() {
                let mut r = JobResult::new(job.clone());
                r.name = format!("{label} · {test} {dir}");
                r.set_passes(ps, Aggregate::Mean);
                doc.results.push(r);
            }
        }
        rows.extend(step_rows(test, dir, &passes[si], &labels, cfg.test));
    }
    doc.compare = Some(CompareResult {
        test: cfg.test,
        confidence: CONFIDENCE,
        baseline: labels[0].clone(),
        subjects: subjects(&cfg.targets, &open, &labels),
        interleaved: true,
        rows,
    });
    if let Some((e, i)) = stopped {
        finish_error(&mut doc, e, i);
    }
    let writes = jobs.iter().any(|j| j.rw.read_pct(j.mix) < 100);
    for o in &open {
        CHECKS.after(&mut doc, &jobs, *o, cfg.size, writes);
    }
    if cfg.passes < 3 {
        doc.warn(
            stats::codes::COMPARE_CAVEAT,
            format!(
                "{} pass{} per target: confidence intervals are very wide; use --passes 5 or more",
                cfg.passes,
                if cfg.passes == 1 { "" } else { "es" }
            ),
        );
    }
    Ok(doc)
}

/// How long the passes take, and the line that says so before the first: "about 8 min:
/// 2 targets × 8 tests × 6 passes × 5 s" (passes count the warm-up). Filling the test areas
/// comes on top, at the disks' own write speed.
fn plan(cfg: &Targets, tests: usize) -> (Duration, String) {
    let targets = cfg.targets.len();
    let runs = u32::from(cfg.warmup) + cfg.passes;
    let total = cfg.time * (targets * tests) as u32 * runs;
    let secs = total.as_secs_f64();
    let about = if secs < 90.0 { format!("{secs:.0} s") } else { format!("{:.0} min", secs / 60.0) };
    let count = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let passes = match cfg.warmup {
        true => format!("{} (a warm-up and {} measured)", count(runs as usize, "pass", "passes"), cfg.passes),
        false => count(runs as usize, "pass", "passes"),
    };
    let each = match cfg.time.subsec_millis() {
        0 => format!("{} s", cfg.time.as_secs()),
        _ => format!("{} ms", cfg.time.as_millis()),
    };
    let line = format!(
        "about {about}: {} × {} × {passes} × {each}, plus filling the test areas",
        count(targets, "target", "targets"),
        count(tests, "test", "tests"),
    );
    (total, line)
}

/// Memory and memlock for the largest step (checked before any target is touched), then
/// every target opened (created and filled as the steps need; none for the null engine). The
/// measurement says when a signal came while preparing them.
fn open_targets(
    cfg: &Targets,
    steps: &[Step],
    opts: &SessionOptions,
    obs: &mut dyn Observer,
) -> engine::Result<Measurement> {
    let jobs: Vec<JobSpec> = steps.iter().map(|(_, _, j)| j.clone()).collect();
    let need = Need::each(&jobs);
    // The plan is said once the memory checks have passed, before the targets are filled.
    let (planned, plan) = plan(cfg, steps.len());
    let mut announce = |obs: &mut dyn Observer| {
        obs.planned(planned);
        obs.notice(&plan);
    };
    if cfg.engine == EngineKind::Null {
        return open_measurement_then(&need, None, opts, obs, &mut announce);
    }
    let needs = Needs {
        reads: steps.iter().any(|(_, _, j)| j.rw.read_pct(j.mix) > 0),
        writes: steps.iter().any(|(_, _, j)| j.rw.read_pct(j.mix) < 100),
        region_start: steps.iter().map(|(_, _, j)| j.offset).min().unwrap_or(0),
        region_end: steps.iter().map(|(_, _, j)| j.offset + j.size.unwrap_or(cfg.size)).max().unwrap_or(cfg.size),
        direct: cfg.direct,
        bs_gcd: steps.iter().map(|(_, _, j)| j.bs).fold(0, gcd),
    };
    let plans = cfg
        .targets
        .iter()
        .map(|t| {
            let mut options = opts.target.clone();
            if measure::probe(&t.path).is_some_and(|p| p.kind == TargetKind::Block) {
                options.prefill = options.destroy_data.as_deref() == Some(t.path.as_path());
            }
            TargetPlan { path: t.path.clone(), needs, options }
        })
        .collect();
    open_measurement_then(&need, Some(plans), opts, obs, &mut announce)
}

/// Each target's open target, in order; none for the null engine.
fn per_target<'a>(cfg: &Targets, m: &'a Measurement) -> Vec<Option<&'a OpenTarget>> {
    match m.targets() {
        [] => cfg.targets.iter().map(|_| None).collect(),
        ts => ts.iter().map(Some).collect(),
    }
}

/// Who is compared: label, path and device (with its model) of every target.
fn subjects(targets: &[TargetPath], open: &[Option<&OpenTarget>], labels: &[String]) -> Vec<Subject> {
    targets
        .iter()
        .zip(open)
        .zip(labels)
        .map(|((p, o), l)| Subject {
            label: l.clone(),
            source: p.path.display().to_string(),
            folder: p.folder.as_ref().map(|f| f.display().to_string()),
            device: o.and_then(|o| {
                let i = target_info(o);
                match (i.device, i.model) {
                    (Some(d), Some(m)) => Some(format!("{d} ({m})")),
                    (d, m) => d.or(m),
                }
            }),
        })
        .collect()
}

/// Every step's passes on every target, interleaved: a warm-up (unless turned off), then the
/// measured passes in A B, B A order. Stops at the first fault or signal.
fn run_passes(
    doc: &mut ResultDoc,
    cfg: &Targets,
    steps: &[Step],
    m: &Measurement,
    labels: &[String],
    opts: &SessionOptions,
    obs: &mut dyn Observer,
) -> engine::Result<(Passes, Option<Stopped>)> {
    let open = per_target(cfg, m);
    let n = open.len();
    let mut passes: Passes = vec![vec![Vec::new(); n]; steps.len()];
    let runs_per_target = u32::from(cfg.warmup) + cfg.passes;
    let total_runs = steps.len() * n * runs_per_target as usize;
    let mut done_runs = 0usize;
    let t0 = Instant::now();
    for (si, (test, dir, job)) in steps.iter().enumerate() {
        let bound: Vec<_> =
            open.iter().map(|o| m.bind(&JobSpec { target: None, ..job.clone() }, *o)).collect::<engine::Result<_>>()?;
        for round in 0..runs_per_target {
            let warm = cfg.warmup && round == 0;
            let pass_no = if cfg.warmup { round } else { round + 1 };
            // A B, then B A: alternating order also cancels "who ran first" effects.
            let order: Vec<usize> = if round % 2 == 0 { (0..n).collect() } else { (0..n).rev().collect() };
            for ti in order {
                if opts.ctl.stop.load(Ordering::Relaxed) {
                    obs.steps(done_runs, total_runs, t0.elapsed());
                    return Ok((passes, Some((None, true))));
                }
                obs.steps(done_runs, total_runs, t0.elapsed());
                let what = if warm { "warm-up".to_string() } else { format!("pass {pass_no}/{}", cfg.passes) };
                obs.phase(&format!("[{}] {test} {dir} {what}", labels[ti]), Some(job.runtime));
                let out = m.run(std::slice::from_ref(&bound[ti]), false, &mut |t| obs.tick(t));
                obs.phase_done();
                let out = out?;
                done_runs += 1;
                if out.error.is_some() || out.interrupted {
                    obs.steps(done_runs, total_runs, t0.elapsed());
                    return Ok((passes, Some((out.error, out.interrupted))));
                }
                if let Some(mut r) = out.results.into_iter().next().filter(|_| !warm) {
                    r.name = format!("{} · {test} {dir} pass {pass_no}", labels[ti]);
                    // The tool's and memory's ceilings once per test and target, after its last pass.
                    let reference = opts.ceiling_check && pass_no == cfg.passes && cfg.engine != EngineKind::Null;
                    CHECKS.result(doc, &mut r, &opts.ctl, reference);
                    passes[si][ti].push(PassResult {
                        pass: pass_no,
                        read: r.read,
                        write: r.write,
                        whole_bursts: r.whole_bursts.into_iter().collect(),
                        ..PassResult::default()
                    });
                }
            }
        }
    }
    obs.steps(done_runs, total_runs, t0.elapsed());
    Ok((passes, None))
}

/// The comparison rows of one step: MB/s, IOPS and mean latency per direction, each target's
/// passes against the baseline's.
fn step_rows(
    test: &str,
    dir: &str,
    passes: &[Vec<PassResult>],
    labels: &[String],
    kind: TestKind,
) -> Vec<stats::compare::CompareRow> {
    let dirs: &[&str] = match dir {
        "mixed" => &["read", "write"],
        "read" => &["read"],
        _ => &["write"],
    };
    let mut rows = Vec::new();
    for d in dirs {
        for (metric, higher) in [("mb_s", true), ("iops", true), ("lat_mean_ns", false)] {
            let samples: Vec<(String, Vec<f64>, &str)> = labels
                .iter()
                .zip(passes)
                .map(|(l, ps)| {
                    let vals = ps
                        .iter()
                        .filter_map(|p| if *d == "read" { p.read.as_ref() } else { p.write.as_ref() })
                        .map(|s| match metric {
                            "mb_s" => s.mb_s,
                            "iops" => s.iops,
                            _ => s.lat_ns.mean,
                        })
                        .collect();
                    (l.clone(), vals, "passes")
                })
                .collect();
            if samples.iter().all(|(_, v, _)| !v.is_empty()) {
                rows.push(build_row(test, d, metric, higher, &samples, kind, CONFIDENCE));
            }
        }
    }
    rows
}

/// Compare saved result documents (before/after a tuning change).
pub(crate) fn compare_results(docs: &[(Subject, ResultDoc)], test: TestKind) -> Result<ResultDoc> {
    let refs: Vec<(Subject, &ResultDoc)> = docs.iter().map(|(s, d)| (s.clone(), d)).collect();
    let cmp = stats::compare_docs::compare_docs(&refs, test, CONFIDENCE)
        .map_err(|e| Error::usage(report::compare_error(&e)))?;
    let mut doc = new_doc("compare");
    doc.target = docs.first().and_then(|(_, d)| d.target.clone());
    for (s, d) in docs {
        if d.partial {
            doc.warn(
                stats::codes::COMPARE_CAVEAT,
                format!("{} ({}) is a partial result: its figures cover only part of the run", s.label, s.source),
            );
        }
        for w in &d.warnings {
            doc.warn(&w.code, format!("{}: {}", s.label, w.message));
        }
        for r in &d.results {
            let mut r = r.clone();
            r.name = format!("{} · {}", s.label, r.name);
            doc.results.push(r);
        }
    }
    let units: Vec<&str> =
        cmp.rows.iter().flat_map(|r| r.samples.iter().map(|s| s.unit.as_str())).filter(|u| *u == "seconds").collect();
    if !units.is_empty() {
        doc.warn(
            stats::codes::COMPARE_CAVEAT,
            "some results have one pass only: their per-second figures serve as samples, which are correlated \
             in time, so the intervals are optimistic; prefer results with several passes (mark --passes 5)",
        );
    }
    doc.compare = Some(cmp);
    Ok(doc)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{changed, usage_message};

    fn options() -> Options {
        Options {
            targets: vec!["a.test".into(), "b.test".into()],
            results: Vec::new(),
            labels: None,
            profile: "default".into(),
            rw: None,
            bs: "4k".into(),
            qd: "1".into(),
            threads: "1".into(),
            mix: None,
            passes: None,
            time: None,
            no_warmup: false,
            size: None,
            quick: false,
            engine: crate::session::DEFAULT_ENGINE.into(),
            test: "welch".into(),
            seed: None,
            flags: TargetFlags::default(),
        }
    }

    fn with(f: impl FnOnce(&mut Options)) -> Options {
        changed(options(), f)
    }

    fn usage(o: &Options) -> String {
        usage_message(Config::new(o))
    }

    fn targets(c: &Config) -> &Targets {
        match &c.source {
            Source::Targets(t) => t,
            Source::Results { .. } => panic!("targets expected"),
        }
    }

    #[test]
    fn two_or_more_of_either() {
        assert_eq!(
            usage(&with(|o| o.targets.truncate(1))),
            "compare needs two or more targets (diskmeter compare A B) or --results A.json B.json"
        );
        assert_eq!(
            usage(&with(|o| {
                o.targets.clear();
                o.results = vec!["a.json".into()];
            })),
            "--results needs at least two result files (the first is the baseline)"
        );
        let c = Config::new(&with(|o| {
            o.targets.clear();
            o.results = vec!["a.json".into(), "b.json".into()];
            o.labels = Some("before, after".into());
        }))
        .expect("valid");
        match c.source {
            Source::Results { labels, test, .. } => {
                assert_eq!(labels, ["before", "after"]);
                assert_eq!(test, TestKind::Welch);
            }
            Source::Targets(_) => panic!("results expected"),
        }
    }

    #[test]
    fn bad_values_name_their_option() {
        for n in ["0", "1", "1001"] {
            assert_eq!(
                usage(&with(|o| o.passes = Some(n.into()))),
                format!(
                    "invalid value for --passes: {n} is out of range; use 2 to 1000 (a verdict needs each target's spread)"
                )
            );
        }
        assert_eq!(
            usage(&with(|o| o.time = Some("0s".into()))),
            "invalid value for --time: must be longer than 0; e.g. --time 5s"
        );
        assert_eq!(
            usage(&with(|o| o.test = "chi2".into())),
            "invalid value for --test: unknown test \"chi2\"; use welch or mann-whitney"
        );
        assert_eq!(
            usage(&with(|o| o.labels = Some("x".into()))),
            "invalid value for --labels: give 2 non-empty labels separated by commas"
        );
        assert_eq!(
            usage(&with(|o| o.labels = Some("x,".into()))),
            "invalid value for --labels: give 2 non-empty labels separated by commas"
        );
        assert_eq!(
            usage(&with(|o| o.profile = "fast".into())),
            "invalid value for --profile: unknown profile \"fast\"; use default, nvme, peak or real"
        );
        assert_eq!(
            usage(&with(|o| o.rw = Some("up".into()))),
            "invalid value for --rw: unknown mode \"up\"; use one of read, write, randread, randwrite, randrw, \
             readwrite"
        );
        assert!(usage(&with(|o| o.engine = "mem".into())).starts_with("invalid value for --engine: the mem engine"));
        // The job of --rw is checked as a whole (spec::validate), after its values.
        assert!(usage(&with(|o| {
            o.rw = Some("randread".into());
            o.qd = "65536".into();
        }))
        .starts_with("invalid value for --qd: "));
    }

    #[test]
    fn quick_is_a_short_verdict_and_says_how_long() {
        let c = Config::new(&with(|o| o.quick = true)).expect("valid");
        let t = targets(&c);
        assert_eq!((t.passes, t.time, t.size, t.warmup), (3, Duration::from_secs(1), 256 << 20, true));
        assert_eq!(
            plan(t, steps(t).len()).1,
            "about 64 s: 2 targets × 8 tests × 4 passes (a warm-up and 3 measured) × 1 s, plus filling the test areas"
        );
        // Explicit values win over --quick.
        let c = Config::new(&with(|o| {
            o.quick = true;
            o.passes = Some("4".into());
            o.size = Some("512M".into());
        }))
        .expect("valid");
        assert_eq!((targets(&c).passes, targets(&c).size), (4, 512 << 20));
        let t = targets(&Config::new(&options()).expect("valid")).clone();
        assert_eq!((t.passes, t.time, t.size), (5, Duration::from_secs(5), 1 << 30));
        let (total, line) = plan(&t, steps(&t).len());
        assert_eq!(total, Duration::from_secs(480));
        assert_eq!(
            line,
            "about 8 min: 2 targets × 8 tests × 6 passes (a warm-up and 5 measured) × 5 s, plus filling the test areas"
        );
        let t = Targets { warmup: false, time: Duration::from_millis(500), ..t };
        assert!(plan(&t, 1).1.starts_with("about 5 s: 2 targets × 1 test × 5 passes × 500 ms"), "{}", plan(&t, 1).1);
    }

    #[test]
    fn suites() {
        let c = Config::new(&options()).expect("valid");
        let t = targets(&c);
        let s = steps(t);
        assert_eq!(s.len(), 8);
        assert_eq!((s[0].0.as_str(), s[0].1), ("SEQ1M Q8T1", "read"));
        assert_eq!((s[1].0.as_str(), s[1].1), ("SEQ1M Q8T1", "write"));
        assert!(s.iter().all(|(_, _, j)| j.target.is_none() && j.size == Some(1 << 30)));
        let c = Config::new(&with(|o| {
            o.rw = Some("randrw".into());
            o.qd = "4".into();
            o.mix = Some("60".into());
        }))
        .expect("valid");
        let s = steps(targets(&c));
        assert_eq!(s.len(), 1);
        assert_eq!((s[0].0.as_str(), s[0].1, s[0].2.mix), ("randrw 4K Q4T1", "mixed", 60));
    }

    #[test]
    fn default_labels() {
        assert_eq!(default_label(0), "A");
        assert_eq!(default_label(25), "Z");
        assert_eq!(default_label(26), "T27");
    }
}
