//! The target, opened for a scan: probed, its span checked against it, the safety guard
//! passed for the writing modes, opened (direct I/O when possible, locked), and the warnings
//! about what the figures of this target will not mean.

use super::config::{Mode, SurfaceConfig};
use crate::error::{Invalid, Result, Writer};
use crate::target::probe::{self, Probe, TargetKind};
use crate::target::{self, Access, Purpose, WhenBusy};
use stats::codes;
use std::fs::File;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// A warning's code and message.
pub type Warning = (String, String);

/// The target, opened for this scan.
pub struct Opened {
    pub probe: Probe,
    pub file: File,
    pub direct: bool,
    /// Unit of narrowing and of every I/O's alignment.
    pub lb: u64,
    pub warnings: Vec<Warning>,
}

pub fn open_target(path: &Path, cfg: &SurfaceConfig) -> Result<Opened> {
    let p = probe::probe(path)?;
    if !p.exists {
        return Err(Invalid::ScanMissing { path: path.to_path_buf() }.into());
    }
    let writes = cfg.mode != Mode::Read;
    let lb = target::direct_block(&p);
    check_span(&p, cfg, lb, path)?;
    match p.kind {
        // The guard refuses mounted, swap, held and system devices outright, and devices
        // with signatures unless the override (`destroy_data`) names them.
        TargetKind::Block => {
            let by = Writer::Scan { mode: cfg.mode.name() };
            target::check_block_access(path, writes, cfg.destroy_data.as_deref(), by)?
        }
        TargetKind::File if writes && !cfg.overwrite => {
            return Err(Invalid::ScanWritesFile { path: path.to_path_buf(), mode: cfg.mode.name() }.into());
        }
        TargetKind::File => {}
    }
    let access = Access {
        purpose: Purpose::Scan,
        write: writes,
        direct: !cfg.buffered,
        buffered_fallback: true,
        // Hold a writable block device exclusively: nobody can mount it mid-scan.
        exclusive: writes && p.kind == TargetKind::Block,
        // Another diskmeter measuring the same target would skew both scans: refuse.
        when_busy: WhenBusy::Refuse,
        write_through: false,
    };
    let opened = target::open_existing(path, &p, &access, &AtomicBool::new(false), &mut |_| {})?;
    let (file, direct) = (opened.file, opened.direct);
    let warnings = open_warnings(&p, &file, access.direct && !direct, cfg, path);
    Ok(Opened { probe: p, file, direct, lb, warnings })
}

/// The span and block against the target: whole logical blocks, inside the target.
fn check_span(p: &Probe, cfg: &SurfaceConfig, lb: u64, path: &Path) -> Result<()> {
    if cfg.block == 0 || !cfg.block.is_multiple_of(lb) {
        return Err(Invalid::ScanBlockUnaligned { block: cfg.block, path: path.to_path_buf(), lb }.into());
    }
    if !cfg.offset.is_multiple_of(lb) {
        return Err(Invalid::ScanOffsetUnaligned { offset: cfg.offset, lb }.into());
    }
    if cfg.offset >= p.size_bytes {
        return Err(
            Invalid::ScanOffsetPastEnd { offset: cfg.offset, path: path.to_path_buf(), size: p.size_bytes }.into()
        );
    }
    if let Some(s) = cfg.size {
        let end = cfg.offset.saturating_add(s);
        if end > p.size_bytes {
            return Err(Invalid::ScanSpanPastEnd { end, path: path.to_path_buf(), size: p.size_bytes }.into());
        }
    }
    Ok(())
}

/// What the figures of a scan of this target will not mean: page cache instead of the
/// medium, RAM instead of a disk, holes that read as zeros.
fn open_warnings(p: &Probe, file: &File, fell_back: bool, cfg: &SurfaceConfig, path: &Path) -> Vec<Warning> {
    let shown = path.display();
    let mut warnings = Vec::new();
    if fell_back {
        warnings.push((
            codes::BUFFERED_IO.to_string(),
            format!(
                "{shown} does not support direct I/O{}; it was scanned through the page cache, \
                 which measures RAM (and the cache), not the medium",
                p.filesystem.as_deref().map(|f| format!(" (file system {f})")).unwrap_or_default()
            ),
        ));
    }
    if cfg.buffered {
        warnings.push((
            codes::BUFFERED_IO.to_string(),
            "--buffered: the scan went through the page cache, which measures RAM (and the cache), not the medium"
                .to_string(),
        ));
    }
    if p.backing_is_ram {
        warnings.push((
            codes::RAM_BACKED.to_string(),
            format!("{shown} lives in RAM: the transfer rates and access times describe memory, not a disk"),
        ));
    }
    // A file's holes read as zeros without touching the medium: their rates measure nothing.
    // (The destructive mode writes the span before it reads it, so only the others care.)
    if p.kind == TargetKind::File && cfg.mode != Mode::Destructive {
        let len = cfg.size.unwrap_or(p.size_bytes - cfg.offset);
        let holes = crate::target::sparse::unwritten_bytes(file, cfg.offset, len).unwrap_or(0);
        if holes > 0 {
            warnings.push((
                codes::UNWRITTEN_READ.to_string(),
                format!(
                    "{shown} has {holes} bytes of holes (never written) in the scanned span; reads there return \
                     zeros without touching the medium, so those zones' rates measure nothing"
                ),
            ));
        }
    }
    warnings
}
