//! The surface scan: an HD Tune / badblocks-style pass over a whole device or file — transfer
//! rate per zone, random access time, a latency map, slow blocks (re-read to confirm) and bad
//! sectors (narrowed to the logical block).
//!
//! Modes ([`Mode`]): `read` (never writes), `nondestructive` (per block: read the original,
//! write a pattern, verify, write the original back, verify — like `badblocks -n`) and
//! `destructive` (per pattern: write the whole span, then read-verify it — `badblocks -w`).
//! Both writing modes pass the data-safety guard and need `destroy_data` naming the device
//! (or `overwrite` for a file). A stop request ends the scan after the current block; the
//! non-destructive mode puts that block back first.
//!
//! I/O is synchronous `pread`/`pwrite` at queue depth 1 (O_DIRECT when possible): a surface
//! scan measures each block in isolation, like HD Tune's and Victoria's scans. `qd` > 1 (read
//! mode) keeps that many blocks in flight from as many threads for devices that need depth to
//! reach their sequential rate; the blocks are judged afterwards in position order.
//!
//! The parts, each using only those listed before it: `config` (what a scan is asked to do,
//! the observer), `dev` (timed, fault-injectable block I/O; what an error means), [`slow`]
//! (the slow-block detector), `open` (the target, its span checked, the safety guard, the
//! warnings about the target), `state` (one scan's state and what it does to one block: read,
//! narrow, compare, judge, re-read), `parallel` (the read pass at `qd` > 1), `passes` (each
//! mode's passes, the access-time reads) and `figures` (the `stats::surface` result). This file
//! runs them in order: [`scan`] returns a [`Scanned`], which `app::surface` (options, the
//! exit policy, the bad-block list) turns into the result document with `report`'s verdict.

mod config;
mod dev;
mod figures;
mod open;
mod parallel;
mod passes;
pub mod slow;
mod state;

pub use config::{Mode, Pattern, Quiet, SurfaceConfig, SurfaceObserver};
pub use dev::{classify, errno_name, errno_text, Dev, IoClass};

use crate::error::{Invalid, Result};
use crate::target::fault::{self, Hook};
use open::{open_target, Opened, Warning};
use state::{Scan, Stop};
use stats::surface::SurfaceResult;
use stats::{ErrorInfo, TargetInfo};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Instant, SystemTime};

/// A finished scan, or one stopped early with the part scanned.
#[derive(Debug, Clone)]
pub struct Scanned {
    /// When the scan began: the target was open, nothing read yet.
    pub started: SystemTime,
    pub target: TargetInfo,
    /// The figures, `seconds` included; `verdict` and `badblocks` are left empty.
    pub surface: SurfaceResult,
    /// Why the scan stopped early (`interrupted`, `vanished`, `io`, `restore`): the figures
    /// cover the part scanned.
    pub error: Option<ErrorInfo>,
    /// Codes and messages in the order found: the target's, then the scan's.
    pub warnings: Vec<(String, String)>,
}

/// Scan `path` with the fault plan of the environment (`DISKMETER_FAULTS`, test builds). `Err`
/// only for problems found before anything was read or written (bad options against this
/// target, the safety guard, opening); runtime faults end the scan with partial results and
/// [`Scanned::error`] set.
pub fn scan(path: &Path, cfg: &SurfaceConfig, stop: &AtomicBool, obs: &mut dyn SurfaceObserver) -> Result<Scanned> {
    let hook = Hook::from_env().map_err(|error| Invalid::FaultPlan { var: fault::ENV, error })?;
    scan_with(path, cfg, stop, obs, hook)
}

/// [`scan`] with an explicit fault plan (tests build their own).
pub fn scan_with(
    path: &Path,
    cfg: &SurfaceConfig,
    stop: &AtomicBool,
    obs: &mut dyn SurfaceObserver,
    hook: Hook,
) -> Result<Scanned> {
    check_modes(cfg)?;
    let t = open_target(path, cfg)?;
    let started = SystemTime::now();
    let target = crate::target::probe_info(path, &t.probe);
    let begun = Instant::now();
    let (start, size, mut warnings) = span(cfg, &t)?;
    if hook.active() {
        warnings.push((
            "fault-injection".into(),
            format!("faults were injected ({}; a test build): the figures are not the device's", fault::ENV),
        ));
    }
    let block = cfg.block.min(size.div_ceil(t.lb) * t.lb);
    let align = t.probe.dio_mem_align.unwrap_or(4096).max(4096) as usize;
    let sample = if cfg.mode == Mode::Destructive { None } else { cfg.sample };
    let offsets = if cfg.access_only { Vec::new() } else { block_offsets(start, size, block, sample) };
    let mut s = Scan::new(Dev { file: &t.file, hook: &hook, lb: t.lb }, cfg, stop, (start, size), block, align)?;
    s.reads.reserve(offsets.len());
    let (access, stopped) = match s.passes_over(&offsets, sample.is_some(), align, obs) {
        Ok(a) => (a, None),
        Err(st) => (None, Some(st)),
    };
    let mut surface = s.figures(&t, (start, size), block, sample, access);
    surface.seconds = begun.elapsed().as_secs_f64();
    let error = match stopped {
        None => None,
        Some(Stop::Interrupted) => {
            Some(ErrorInfo::new("interrupted", "interrupted: the results cover the part scanned"))
        }
        Some(Stop::Fault(e)) => Some(e),
    };
    warnings.append(&mut s.warnings);
    Ok(Scanned { started, target, surface, error, warnings })
}

/// Block starts of the scan: every block of the span, or `sample` evenly spaced ones.
pub fn block_offsets(offset: u64, size: u64, block: u64, sample: Option<u64>) -> Vec<u64> {
    let n = size.div_ceil(block.max(1));
    match sample {
        Some(s) if s < n => {
            if s <= 1 {
                return vec![offset];
            }
            (0..s).map(|i| offset + (u128::from(i) * u128::from(n - 1) / u128::from(s - 1)) as u64 * block).collect()
        }
        _ => (0..n).map(|i| offset + i * block).collect(),
    }
}

/// The combinations of modes a scan refuses.
fn check_modes(cfg: &SurfaceConfig) -> Result<()> {
    if cfg.access_only && cfg.mode != Mode::Read {
        return Err(Invalid::ScanAccessOnlyWrites.into());
    }
    if cfg.qd > 1 && cfg.mode != Mode::Read {
        return Err(Invalid::ScanDepthWrites.into());
    }
    if cfg.mode == Mode::Destructive && cfg.patterns.is_empty() {
        return Err(Invalid::ScanNoPatterns.into());
    }
    Ok(())
}

/// The span to scan: its start, its size in whole logical blocks, and the target's warnings
/// (with one for a tail shorter than a block).
fn span(cfg: &SurfaceConfig, t: &Opened) -> Result<(u64, u64, Vec<Warning>)> {
    let start = cfg.offset;
    let raw = cfg.size.unwrap_or(t.probe.size_bytes - start);
    let size = raw / t.lb * t.lb;
    if size == 0 {
        return Err(Invalid::ScanSpanShort { span: raw, lb: t.lb }.into());
    }
    let mut warnings = t.warnings.clone();
    if size < raw {
        warnings.push((
            "span-trimmed".into(),
            format!("the last {} bytes are not a whole logical block and were not scanned", raw - size),
        ));
    }
    Ok((start, size, warnings))
}

#[cfg(all(test, target_os = "linux"))]
mod tests;
