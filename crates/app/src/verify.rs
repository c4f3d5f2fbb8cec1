//! `run --verify`: the run's side of data verification. Before a group runs, each verified job
//! gets its table of chunk generations (fresh, or from a state file for a verify-only run);
//! while it runs, the table is saved each second when a state file is named; after it, every
//! written chunk is read back and checked; the findings become the result's `verify` section.

use engine::measure::{verify_state as state, BoundJob, CheckKind, VerifyJob};
use engine::{EngineError, Result};
use spec::{JobSpec, VerifySpec};
use stats::verify::VerifyResult;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// One verified job of the run: its table, where it is saved, and what its read-back did.
pub struct Verified {
    pub job: Arc<VerifyJob>,
    pub spec: VerifySpec,
    /// The state file of this job (`--verify-state`, named per job when several are verified).
    pub state: Option<PathBuf>,
    /// The target, for the state file's identity check.
    target: String,
    target_size: u64,
    read_back: Option<engine::measure::ReadBack>,
    saved_at: Option<Instant>,
}

/// The state file of job `name` when `verified` jobs of the plan are verified: the path
/// itself for one, `PATH.NAME` for several.
pub fn state_path(path: &Path, name: &str, verified: usize) -> PathBuf {
    if verified <= 1 {
        return path.to_path_buf();
    }
    let mut p = path.as_os_str().to_owned();
    p.push(".");
    p.push(name.replace(['/', '\0'], "_"));
    PathBuf::from(p)
}

/// Set up verification of `b` (job `index` of the plan), its region resolved: a fresh table,
/// or the one its state file saved. Errors are the user's (a state file of another target or
/// layout).
pub fn prepare(
    b: &mut BoundJob,
    index: u32,
    verified_jobs: usize,
    target: &Path,
    size: u64,
) -> Result<Option<Verified>> {
    let Some(v) = b.spec.verify.clone() else { return Ok(None) };
    let interval = v.interval.unwrap_or_else(|| spec::validate::verify_interval(&b.spec));
    let kind = CheckKind::from(v.kind);
    let pattern = v.pattern.clone().unwrap_or_default();
    let state_file = v.state.as_ref().map(|p| state_path(p, &b.spec.name, verified_jobs));
    let run_id = fresh_u64(index) | 1;
    let run_seed = b.spec.seed ^ fresh_u64(!index);
    let mut job =
        VerifyJob::new(index, &b.spec.name, kind, pattern, interval, run_id, run_seed, b.region_offset, b.region_len);
    job.fatal = v.fatal;
    job.backlog = v.backlog;
    if v.only {
        match (&state_file, v.load_state) {
            (Some(path), true) => load_into(&mut job, path, b, target, size)?,
            _ => job.any_generation = true,
        }
    }
    let job = Arc::new(job);
    b.verify = Some(job.clone());
    Ok(Some(Verified {
        job,
        spec: v,
        state: state_file,
        target: target.display().to_string(),
        target_size: size,
        read_back: None,
        saved_at: None,
    }))
}

/// A state file, or the one line that says why it cannot be used.
pub fn load_state(path: &Path) -> Result<state::VerifyState> {
    state::load_state(path).map_err(|e| EngineError::usage(format!("--verify-state {}: {e}", path.display())))
}

/// Checks that need no target, made before any target is opened (so that bad input writes
/// nothing): a verify-only run's state file must be readable, and its target must exist.
pub fn precheck(jobs: &[&JobSpec], default_target: &Path) -> Result<()> {
    let verified = jobs.iter().filter(|j| j.verify.is_some()).count();
    for j in jobs {
        let Some(v) = j.verify.as_ref().filter(|v| v.only) else { continue };
        let target = j.target.clone().unwrap_or_else(|| default_target.to_path_buf());
        if !target.exists() {
            return Err(EngineError::usage(format!(
                "--verify-only reads what an earlier run wrote, and {} does not exist; name that run's target with \
                 --target (a test file diskmeter created is removed unless that run had --keep)",
                target.display()
            )));
        }
        if let (Some(p), true) = (&v.state, v.load_state) {
            load_state(&state_path(p, &j.name, verified))?;
        }
    }
    Ok(())
}

/// A number no other run draws: std's per-process random hash keys, the clock and `salt`.
fn fresh_u64(salt: u32) -> u64 {
    use std::hash::BuildHasher;
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    std::collections::hash_map::RandomState::new().hash_one((now, salt, std::process::id()))
}

/// Take a verify-only run's expectations from its state file, refusing one of another
/// target, region or chunk size.
fn load_into(job: &mut VerifyJob, path: &Path, b: &BoundJob, target: &Path, size: u64) -> Result<()> {
    let s = load_state(path)?;
    let shown = path.display();
    if s.interval != job.interval || s.kind != job.kind {
        return Err(EngineError::usage(format!(
            "--verify-state {shown}: it was saved by a run with {} chunks of {} bytes; run this check with \
             --verify {} --verify-interval {}",
            s.kind.name(),
            s.interval,
            s.kind.name(),
            s.interval
        )));
    }
    let Some(region) = s.regions.iter().find(|r| r.start == b.region_offset) else {
        return Err(EngineError::usage(format!(
            "--verify-state {shown}: it holds no region starting at offset {}; use the --offset of the run that \
             saved it",
            b.region_offset
        )));
    };
    if s.target.size != size {
        return Err(EngineError::usage(format!(
            "--verify-state {shown}: it was saved for a target of {} bytes ({}), this one has {size} ({})",
            s.target.size,
            s.target.path,
            target.display()
        )));
    }
    job.run_id = s.run_id;
    job.run_seed = s.run_seed;
    job.load_generations(&region.generations);
    Ok(())
}

impl Verified {
    /// Save the table to the state file (atomically). At most once a second unless `now`.
    pub fn save(&mut self, now: bool) -> Result<()> {
        let Some(path) = &self.state else { return Ok(()) };
        if self.spec.only {
            return Ok(());
        }
        if !now && self.saved_at.is_some_and(|t| t.elapsed() < Duration::from_secs(1)) {
            return Ok(());
        }
        let j = &self.job;
        let s = state::VerifyState {
            run_id: j.run_id,
            run_seed: j.run_seed,
            kind: j.kind,
            interval: j.interval,
            target: state::TargetId { path: self.target.clone(), size: self.target_size, dev: 0, ino: 0 },
            regions: vec![state::Region { start: j.start, generations: j.snapshot() }],
        };
        state::save_state(path, &s).map_err(|e| {
            EngineError::io(format!("cannot save --verify-state {}", path.display()), std::io::Error::other(e))
        })?;
        self.saved_at = Some(Instant::now());
        Ok(())
    }

    /// After the job's group: read back every written chunk (unless `--no-verify-pass`).
    pub fn read_back(&mut self, fd: platform::target::Raw, stop: &AtomicBool) {
        if self.spec.after_writes || self.spec.only {
            self.read_back = Some(self.job.read_back(fd, stop));
        }
    }

    /// A read-back that stopped on a read error, as the message to report.
    pub fn read_back_error(&self) -> Option<&str> {
        self.read_back.as_ref().and_then(|r| r.error.as_deref())
    }
}

/// The result's `verify` section over every verified job.
pub fn section(jobs: &[Verified]) -> Option<VerifyResult> {
    let first = jobs.first()?;
    let mut r = VerifyResult {
        kind: first.job.kind.name().to_string(),
        interval: first.job.interval,
        run_id: format!("{:016x}", first.job.run_id),
        state: first.state.as_ref().map(|p| p.display().to_string()),
        state_loaded: first.job.loaded,
        complete: true,
        ..VerifyResult::default()
    };
    for v in jobs {
        let j = &v.job;
        r.chunks_written += j.chunks_written.load(std::sync::atomic::Ordering::Relaxed);
        r.checked_inline += j.checked_inline.load(std::sync::atomic::Ordering::Relaxed);
        r.newer += j.newer.load(std::sync::atomic::Ordering::Relaxed);
        if let Some(rb) = &v.read_back {
            r.checked_after += rb.checked;
            r.after_seconds += rb.seconds;
            r.complete &= rb.complete;
            if rb.seconds > 0.0 {
                r.after_mb_s += rb.bytes as f64 / 1e6 / rb.seconds;
            }
        } else if v.spec.after_writes {
            r.complete = false;
        }
        let (failures, total) = j.failures();
        let listed = failures.len() as u64;
        for f in failures {
            r.add_failure(f);
        }
        // Failures past the job's own list are counted, not listed.
        r.failures_total += total - listed;
    }
    r.sort();
    Some(r)
}

/// A spec whose job needs the workload run at all: verify-only jobs only read back.
pub fn runs_workload(j: &JobSpec) -> bool {
    !j.verify.as_ref().is_some_and(|v| v.only)
}
