//! `compare`: the same suite on several targets, passes interleaved so that drift of the
//! machine (thermal, background load, SLC caches) hits every target alike, then per-test
//! confidence intervals, ratios and a significance verdict.

use crate::session::{self, mark_label, Observer, Profile, SessionOptions};
use engine::error::{EngineError, Result};
use engine::probe;
use engine::runner::run_group;
use engine::target::{open_target, target_info, Needs, OpenTarget};
use spec::{EngineKind, JobSpec, RwMode};
use stats::compare_docs::build_row;
use stats::{Aggregate, CompareResult, JobResult, PassResult, ResultDoc, Subject, TestKind};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// What to run on every target.
#[derive(Debug, Clone)]
pub enum Suite {
    /// The tests of a `mark` profile (each read and write).
    Profile(Profile),
    /// One job as given (its rw decides the directions).
    Job(Box<JobSpec>),
}

#[derive(Debug, Clone)]
pub struct CompareConfig {
    pub suite: Suite,
    pub passes: u32,
    pub time: Duration,
    pub warmup: bool,
    pub size: u64,
    pub engine: EngineKind,
    pub direct: bool,
    pub seed: u64,
    pub test: TestKind,
    pub confidence: f64,
    /// Labels for the targets (default A, B, C, …).
    pub labels: Vec<String>,
}

impl Default for CompareConfig {
    fn default() -> Self {
        Self {
            suite: Suite::Profile(Profile::Default),
            passes: 5,
            time: Duration::from_secs(5),
            warmup: true,
            size: 1 << 30,
            engine: EngineKind::IoUring,
            direct: true,
            seed: JobSpec::default().seed,
            test: TestKind::Welch,
            confidence: 0.95,
            labels: Vec::new(),
        }
    }
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
fn steps(cfg: &CompareConfig) -> Vec<(String, &'static str, JobSpec)> {
    let mut out = Vec::new();
    match &cfg.suite {
        Suite::Profile(p) => {
            for &(seq, bs, qd, threads) in p.tests() {
                let base = JobSpec {
                    name: mark_label(seq, bs, qd, threads),
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
                out.push((base.name.clone(), "read", r));
                out.push((base.name.clone(), "write", w));
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

/// Run the suite on every target with interleaved passes and compare.
pub fn compare_targets(
    cfg: &CompareConfig,
    targets: &[PathBuf],
    opts: &SessionOptions,
    obs: &mut dyn Observer,
) -> Result<ResultDoc> {
    if targets.len() < 2 {
        return Err(EngineError::Invalid(
            "compare needs at least two targets (or --results with two or more result files)".into(),
        ));
    }
    let mut doc = session::new_doc("compare");
    let steps = steps(cfg);
    let null = cfg.engine == EngineKind::Null;
    let biggest = steps.iter().map(|(_, _, j)| engine::runner::pinned_bytes([j])).max().unwrap_or(0);
    engine::runner::check_memlock(biggest, opts.ctl.register_buffers)?;
    let (need, _) = engine::memory::plan_footprint(steps.iter().map(|(_, _, j)| (std::slice::from_ref(j), false)));
    engine::memory::check(&need, 1, &engine::memory::Knobs::CLI)?;
    let labels: Vec<String> =
        (0..targets.len()).map(|i| cfg.labels.get(i).cloned().unwrap_or_else(|| default_label(i))).collect();

    // Open (create and fill) every target first: bad input anywhere fails before any I/O.
    let mut open: Vec<Option<OpenTarget>> = Vec::new();
    for t in targets {
        if null {
            open.push(None);
            continue;
        }
        let region_end = steps.iter().map(|(_, _, j)| j.offset + j.size.unwrap_or(cfg.size)).max().unwrap_or(cfg.size);
        let needs = Needs {
            reads: steps.iter().any(|(_, _, j)| j.rw.read_pct(j.mix) > 0),
            writes: steps.iter().any(|(_, _, j)| j.rw.read_pct(j.mix) < 100),
            region_start: steps.iter().map(|(_, _, j)| j.offset).min().unwrap_or(0),
            region_end,
            direct: cfg.direct,
            bs_gcd: steps.iter().map(|(_, _, j)| j.bs).fold(0, gcd),
        };
        let mut topts = opts.target.clone();
        if probe::probe(t).map(|p| p.kind == probe::TargetKind::Block).unwrap_or(false) {
            topts.prefill = topts.destroy_data.as_deref() == Some(t.as_path());
        }
        obs.phase(&format!("preparing {}", t.display()), None);
        let o = open_target(t, needs, &topts, &opts.ctl.stop, &mut |e| crate::session::target_event(obs, e));
        obs.phase_done();
        open.push(Some(o?));
        if opts.ctl.stop.load(Ordering::Relaxed) {
            session::finish_error(&mut doc, None, true);
            return Ok(doc);
        }
    }
    let subjects: Vec<Subject> = targets
        .iter()
        .zip(&open)
        .zip(&labels)
        .map(|((p, o), l)| Subject {
            label: l.clone(),
            source: p.display().to_string(),
            device: o.as_ref().and_then(|o| {
                let i = target_info(o);
                match (i.device, i.model) {
                    (Some(d), Some(m)) => Some(format!("{d} ({m})")),
                    (d, m) => d.or(m),
                }
            }),
        })
        .collect();
    doc.target = open.first().and_then(|o| o.as_ref().map(target_info));

    // passes[step][target] = per-pass results
    let n = targets.len();
    let mut passes: Vec<Vec<Vec<PassResult>>> = vec![vec![Vec::new(); n]; steps.len()];
    let runs_per_target = u32::from(cfg.warmup) + cfg.passes;
    let total_runs = steps.len() * n * runs_per_target as usize;
    let mut done_runs = 0usize;
    let t0 = Instant::now();
    let mut stopped: Option<(Option<stats::ErrorInfo>, bool)> = None;
    'outer: for (si, (test, dir, job)) in steps.iter().enumerate() {
        let bound: Vec<_> = open
            .iter()
            .map(|o| {
                let j = JobSpec { target: None, ..job.clone() };
                engine::runner::bind(&j, o.as_ref())
            })
            .collect::<Result<_>>()?;
        for round in 0..runs_per_target {
            let warm = cfg.warmup && round == 0;
            let pass_no = if cfg.warmup { round } else { round + 1 };
            // A B, then B A: alternating order also cancels "who ran first" effects.
            let order: Vec<usize> = if round % 2 == 0 { (0..n).collect() } else { (0..n).rev().collect() };
            for ti in order {
                if opts.ctl.stop.load(Ordering::Relaxed) {
                    stopped = Some((None, true));
                    break 'outer;
                }
                obs.steps(done_runs, total_runs, t0.elapsed());
                let what = if warm { "warm-up".to_string() } else { format!("pass {pass_no}/{}", cfg.passes) };
                obs.phase(&format!("[{}] {test} {dir} {what}", labels[ti]), Some(job.runtime));
                let out = run_group(std::slice::from_ref(&bound[ti]), false, &opts.ctl, &mut |t| obs.tick(t));
                obs.phase_done();
                let out = out?;
                done_runs += 1;
                if out.error.is_some() || out.interrupted {
                    stopped = Some((out.error, out.interrupted));
                    break 'outer;
                }
                if warm {
                    continue;
                }
                if let Some(r) = out.results.into_iter().next() {
                    passes[si][ti].push(PassResult { pass: pass_no, read: r.read, write: r.write });
                }
            }
        }
    }
    obs.steps(done_runs, total_runs, t0.elapsed());

    // Per target, one result per test (mean over passes), and the comparison rows.
    let mut rows = Vec::new();
    for (si, (test, dir, job)) in steps.iter().enumerate() {
        for (ti, label) in labels.iter().enumerate() {
            let ps = passes[si][ti].clone();
            if ps.is_empty() {
                continue;
            }
            let mut r = JobResult::new(job.clone());
            r.name = format!("{label} · {test} {dir}");
            r.set_passes(ps, Aggregate::Mean);
            doc.results.push(r);
        }
        let dirs: &[&str] = match *dir {
            "mixed" => &["read", "write"],
            "read" => &["read"],
            _ => &["write"],
        };
        for d in dirs {
            for (metric, higher) in [("mb_s", true), ("iops", true), ("lat_mean_ns", false)] {
                let samples: Vec<(String, Vec<f64>, &str)> = labels
                    .iter()
                    .enumerate()
                    .map(|(ti, l)| {
                        let vals = passes[si][ti]
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
                if samples.iter().any(|(_, v, _)| v.is_empty()) {
                    continue;
                }
                rows.push(build_row(test, d, metric, higher, &samples, cfg.test, cfg.confidence));
            }
        }
    }
    doc.compare = Some(CompareResult {
        test: cfg.test,
        confidence: cfg.confidence,
        baseline: labels[0].clone(),
        subjects,
        interleaved: true,
        rows,
    });
    if let Some((e, i)) = stopped {
        session::finish_error(&mut doc, e, i);
    }
    let jobs: Vec<&JobSpec> = steps.iter().map(|(_, _, j)| j).collect();
    for o in &open {
        session::honesty_warnings(&mut doc, &jobs, o.as_ref(), cfg.size);
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
    drop(open);
    Ok(doc)
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// Compare saved result documents (before/after a tuning change).
pub fn compare_results(docs: &[(Subject, ResultDoc)], test: TestKind, confidence: f64) -> Result<ResultDoc> {
    let refs: Vec<(Subject, &ResultDoc)> = docs.iter().map(|(s, d)| (s.clone(), d)).collect();
    let cmp = stats::compare_docs::compare_docs(&refs, test, confidence)
        .map_err(|e| EngineError::Invalid(report::compare_error(&e)))?;
    let mut doc = session::new_doc("compare");
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
