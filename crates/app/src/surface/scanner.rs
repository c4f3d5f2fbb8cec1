//! The scan itself: opening the target, the passes of each mode, narrowing a bad block to
//! its sectors, the latency map and the result document. Below `command` and `policy`, which
//! use it; it uses neither.

use super::slow::SlowDetector;
use engine::error::{EngineError, Result};
use engine::io::buffers::{fill_pattern, BufferPool};
use engine::scan::{self as io, Dev, IoClass};
use engine::target::fault::{self, Hook};
use engine::target::probe::{self, Probe, TargetKind};
use engine::target::{self, Access, Purpose, WhenBusy};
use rand::Rng;
use spec::DataPattern;
use stats::surface::{self as sm, BadSector, PatternPass, SlowBlock, SlowRule, SurfaceResult};
use stats::{codes, ErrorInfo, ResultDoc};
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// What the scan does to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Read,
    NonDestructive,
    Destructive,
}

impl Mode {
    pub const NAMES: &'static str = "read, nondestructive, destructive";

    pub fn parse(s: &str) -> Option<Mode> {
        Some(match s.to_ascii_lowercase().as_str() {
            "read" | "ro" | "read-only" => Mode::Read,
            "nondestructive" | "non-destructive" | "rw" => Mode::NonDestructive,
            "destructive" | "write" => Mode::Destructive,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Mode::Read => "read",
            Mode::NonDestructive => "nondestructive",
            Mode::Destructive => "destructive",
        }
    }
}

/// The data the non-destructive mode writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pattern {
    Byte(u8),
    Random,
}

/// Everything `surface` needs; built by the CLI from its options.
#[derive(Debug, Clone)]
pub struct SurfaceConfig {
    pub mode: Mode,
    /// Bytes per block (a multiple of the logical block size).
    pub block: u64,
    pub offset: u64,
    /// Span length (default: to the end of the target).
    pub size: Option<u64>,
    /// Scan only this many evenly spaced blocks.
    pub sample: Option<u64>,
    /// Blocks in flight during the read pass (read mode; 1 = one at a time).
    pub qd: u32,
    pub zones: u32,
    pub slow_factor: f64,
    pub slow_window: u32,
    pub slow_floor: Duration,
    pub rereads: u32,
    /// Random access-time reads after the scan (0 = none).
    pub access: u32,
    /// Only measure the access time.
    pub access_only: bool,
    /// Non-destructive mode's pattern.
    pub pattern: Pattern,
    /// Destructive mode's patterns, in order.
    pub patterns: Vec<u8>,
    pub buffered: bool,
    pub overwrite: bool,
    pub destroy_data: Option<PathBuf>,
    /// At most this many latency-map cells.
    pub map_cells: usize,
    /// File-system block size of the bad-block list.
    pub fs_block: u64,
    pub seed: u64,
}

impl Default for SurfaceConfig {
    fn default() -> Self {
        Self {
            mode: Mode::Read,
            block: 1 << 20,
            offset: 0,
            size: None,
            sample: None,
            qd: 1,
            zones: 100,
            slow_factor: 5.0,
            slow_window: 64,
            slow_floor: Duration::from_millis(20),
            rereads: 2,
            access: 200,
            access_only: false,
            pattern: Pattern::Byte(0xaa),
            patterns: vec![0xaa, 0x55, 0xff, 0x00],
            buffered: false,
            overwrite: false,
            destroy_data: None,
            map_cells: 2000,
            fs_block: 4096,
            seed: 0x5eed_5afe,
        }
    }
}

/// Progress of a scan. All methods have no-op defaults; the engine never prints.
pub trait SurfaceObserver {
    /// A phase starts: `label` and the bytes it will move.
    fn phase(&mut self, _label: &str, _total_bytes: u64) {}
    /// `done` bytes of the current phase are finished.
    fn progress(&mut self, _done: u64) {}
    fn phase_done(&mut self) {}
}

/// An observer that shows nothing.
pub struct Quiet;
impl SurfaceObserver for Quiet {}

/// Scan `path`. `Err` only for problems found before anything was read or written (bad
/// options against this target, the safety guard, opening); runtime faults end the scan
/// with partial results and `doc.error` set.
pub fn scan(path: &Path, cfg: &SurfaceConfig, stop: &AtomicBool, obs: &mut dyn SurfaceObserver) -> Result<ResultDoc> {
    let hook = Hook::from_env().map_err(|e| EngineError::Invalid(format!("{}: {e}", fault::ENV)))?;
    scan_with(path, cfg, stop, obs, hook)
}

fn errno_text(e: &std::io::Error) -> String {
    e.raw_os_error().map(io::errno_name).unwrap_or_else(|| e.to_string())
}

/// The target, opened for this scan.
struct Opened {
    probe: Probe,
    file: File,
    direct: bool,
    /// Unit of narrowing and of every I/O's alignment.
    lb: u64,
    warnings: Vec<(String, String)>,
}

fn open_target(path: &Path, cfg: &SurfaceConfig) -> Result<Opened> {
    let p = probe::probe(path)?;
    let shown = path.display();
    if !p.exists {
        return Err(EngineError::Invalid(format!(
            "{shown} does not exist; surface scans an existing block device or file"
        )));
    }
    let writes = cfg.mode != Mode::Read;
    let lb = target::direct_block(&p);
    check_span(&p, cfg, lb, path)?;
    match p.kind {
        // The guard refuses mounted, swap, held and system devices outright, and devices
        // with signatures unless --destroy-data names them.
        TargetKind::Block => target::check_block_access(path, writes, cfg.destroy_data.as_deref(), || {
            format!(
                "the {} mode writes to the block device {shown} (a crash mid-block loses that block); \
                 if that is intended, add --destroy-data {shown}",
                cfg.mode.name()
            )
        })?,
        TargetKind::File if writes && !cfg.overwrite => {
            return Err(EngineError::Invalid(format!(
                "{shown} is an existing file and the {} mode writes to it; add --overwrite to allow that \
                 (the non-destructive mode puts the data back, but a crash mid-block loses that block)",
                cfg.mode.name()
            )));
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
    };
    let opened = target::open_existing(path, &p, &access, &AtomicBool::new(false), &mut |_| {})?;
    let (file, direct) = (opened.file, opened.direct);
    let warnings = open_warnings(&p, &file, access.direct && !direct, cfg, path);
    Ok(Opened { probe: p, file, direct, lb, warnings })
}

/// The span and block against the target: whole logical blocks, inside the target.
fn check_span(p: &Probe, cfg: &SurfaceConfig, lb: u64, path: &Path) -> Result<()> {
    let shown = path.display();
    if cfg.block == 0 || !cfg.block.is_multiple_of(lb) {
        return Err(EngineError::Invalid(format!(
            "invalid value for --block: {} is not a multiple of {shown}'s logical block size ({lb} bytes); \
             use a multiple such as 1M",
            cfg.block
        )));
    }
    if !cfg.offset.is_multiple_of(lb) {
        return Err(EngineError::Invalid(format!(
            "invalid value for --offset: {} is not a multiple of the logical block size ({lb} bytes)",
            cfg.offset
        )));
    }
    if cfg.offset >= p.size_bytes {
        return Err(EngineError::Invalid(format!(
            "invalid value for --offset: {} is at or past the end of {shown} ({} bytes)",
            cfg.offset, p.size_bytes
        )));
    }
    if let Some(s) = cfg.size {
        if cfg.offset.saturating_add(s) > p.size_bytes {
            return Err(EngineError::Invalid(format!(
                "invalid value for --size: the span ends at {} bytes but {shown} holds only {} bytes",
                cfg.offset.saturating_add(s),
                p.size_bytes
            )));
        }
    }
    Ok(())
}

/// What the figures of a scan of this target will not mean: page cache instead of the
/// medium, RAM instead of a disk, holes that read as zeros.
fn open_warnings(p: &Probe, file: &File, fell_back: bool, cfg: &SurfaceConfig, path: &Path) -> Vec<(String, String)> {
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
        let holes = engine::target::sparse::unwritten_bytes(file, cfg.offset, len).unwrap_or(0);
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

/// Why the scan stopped early.
enum Stop {
    Interrupted,
    Fault(ErrorInfo),
}

/// Accumulated state of one scan.
struct Scan<'a> {
    dev: Dev<'a>,
    cfg: &'a SurfaceConfig,
    stop: &'a AtomicBool,
    start: u64,
    end: u64,
    slow: SlowDetector,
    /// Main pass: `(offset, bytes, latency ns)` per block read.
    reads: Vec<(u64, u64, u64)>,
    /// `--qd` > 1: `(offset, bytes, start ns, end ns)` of each block on the scan's clock.
    spans: Vec<(u64, u64, u64, u64)>,
    /// Write latencies of the first write pass (destructive) or the pattern writes
    /// (non-destructive).
    writes: Vec<(u64, u64, u64)>,
    slow_blocks: Vec<SlowBlock>,
    bad: Vec<BadSector>,
    passes: Vec<PatternPass>,
    restore_failures: Vec<u64>,
    warnings: Vec<(String, String)>,
    /// Buffers: the block read, the pattern / data to write, a spare for verification.
    a: BufferPool,
    b: BufferPool,
    c: BufferPool,
}

fn vanished(off: u64, e: &std::io::Error) -> Stop {
    Stop::Fault(ErrorInfo {
        kind: "vanished".into(),
        message: format!("the device went away at offset {off} ({}); the scan stopped", errno_text(e)),
        offset: Some(off),
        job: None,
    })
}

fn fatal(off: u64, what: &str, e: &std::io::Error) -> Stop {
    Stop::Fault(ErrorInfo {
        kind: "io".into(),
        message: format!("{what} at offset {off} failed: {e}; the scan stopped"),
        offset: Some(off),
        job: None,
    })
}

impl Scan<'_> {
    fn interrupted(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    fn bad_sector(&mut self, offset: u64, errno: Option<i32>, phase: &str) {
        self.bad.push(BadSector {
            offset,
            bytes: self.dev.lb,
            errno,
            error: errno.map(io::errno_name).unwrap_or_else(|| "mismatch".to_string()),
            phase: phase.to_string(),
        });
    }

    /// A block read failed: read it sector by sector and record every sector that fails.
    fn narrow_read(&mut self, off: u64, len: usize, phase: &str) -> std::result::Result<usize, Stop> {
        let lb = self.dev.lb as usize;
        let mut found = 0;
        for s in (0..len).step_by(lb) {
            let at = off + s as u64;
            let (r, _) = self.dev.read(at, &mut self.c.slot_mut(0)[..lb]);
            if let Err(e) = r {
                match io::classify(&e) {
                    IoClass::Media => {
                        self.bad_sector(at, e.raw_os_error(), phase);
                        found += 1;
                    }
                    IoClass::Vanished => return Err(vanished(at, &e)),
                    IoClass::Fatal => return Err(fatal(at, "reading a sector", &e)),
                }
            }
        }
        if found == 0 {
            self.warnings.push((
                "transient-error".into(),
                format!("a read of the block at offset {off} failed once, but every sector read back fine"),
            ));
        }
        Ok(found)
    }

    /// A block write failed: write `data` sector by sector and record every failing one.
    fn narrow_write(&mut self, off: u64, data_in_b: bool, len: usize, phase: &str) -> std::result::Result<usize, Stop> {
        let lb = self.dev.lb as usize;
        let mut found = 0;
        for s in (0..len).step_by(lb) {
            let at = off + s as u64;
            let piece =
                if data_in_b { self.b.slot_mut(0)[s..s + lb].to_vec() } else { self.a.slot_mut(0)[s..s + lb].to_vec() };
            let c = &mut self.c.slot_mut(0)[..lb];
            c.copy_from_slice(&piece);
            let r = self.dev.write(at, c).0;
            if let Err(e) = r {
                match io::classify(&e) {
                    IoClass::Media => {
                        self.bad_sector(at, e.raw_os_error(), phase);
                        found += 1;
                    }
                    IoClass::Vanished => return Err(vanished(at, &e)),
                    IoClass::Fatal => return Err(fatal(at, "writing a sector", &e)),
                }
            }
        }
        Ok(found)
    }

    /// Compare `got` with `want` sector by sector; record mismatching sectors.
    fn compare(&mut self, off: u64, got: &[u8], want: &[u8], phase: &str) -> usize {
        let lb = self.dev.lb as usize;
        let mut found = 0;
        for (i, (g, w)) in got.chunks(lb).zip(want.chunks(lb)).enumerate() {
            if g != w {
                self.bad_sector(off + (i * lb) as u64, None, phase);
                found += 1;
            }
        }
        found
    }

    /// Judge a block's read latency; re-read slow ones.
    fn judge(&mut self, off: u64, len: usize, ns: u64) {
        let Some(median) = self.slow.check(ns) else {
            self.slow.push(ns, false);
            return;
        };
        let mut reread_ns = Vec::new();
        let mut confirmed = true;
        for _ in 0..self.cfg.rereads.max(1) {
            let (r, t) = self.dev.read(off, &mut self.c.slot_mut(0)[..len]);
            if r.is_err() {
                break;
            }
            reread_ns.push(t);
            if !self.slow.slow_vs(t, median) {
                confirmed = false;
                break;
            }
        }
        self.slow.push(ns, true);
        self.slow_blocks.push(SlowBlock {
            offset: off,
            bytes: len as u64,
            lat_ns: ns,
            median_ns: median,
            reread_ns,
            status: if confirmed { "confirmed" } else { "transient" }.to_string(),
        });
    }

    /// Read one block into `a`, timing it. `Ok(None)`: media error, narrowed and recorded.
    fn read_block(&mut self, off: u64, len: usize, phase: &str) -> std::result::Result<Option<(usize, u64)>, Stop> {
        let (r, ns) = self.dev.read(off, &mut self.a.slot_mut(0)[..len]);
        match r {
            Ok(n) => Ok(Some((n, ns))),
            Err(e) => match io::classify(&e) {
                IoClass::Media => {
                    self.narrow_read(off, len, phase)?;
                    Ok(None)
                }
                IoClass::Vanished => Err(vanished(off, &e)),
                IoClass::Fatal => Err(fatal(off, "reading", &e)),
            },
        }
    }

    fn block_len(&self, off: u64) -> usize {
        (self.cfg.block.min(self.end - off)) as usize
    }

    /// Read mode at queue depth > 1: `qd` threads take the next block in turn; the
    /// results are then judged in position order (slow-block re-reads at queue depth 1).
    fn read_pass_parallel(
        &mut self,
        offsets: &[u64],
        qd: usize,
        align: usize,
        obs: &mut dyn SurfaceObserver,
    ) -> std::result::Result<(), Stop> {
        use std::sync::atomic::AtomicUsize;
        type Done = (usize, std::io::Result<usize>, u64, u64);
        let base = Instant::now();
        let next = AtomicUsize::new(0);
        let halt = AtomicBool::new(false);
        let (tx, rx) = std::sync::mpsc::channel::<Done>();
        let (dev, end, block, stop) = (&self.dev, self.end, self.cfg.block, self.stop);
        let mut results: Vec<Option<(std::io::Result<usize>, u64, u64)>> = (0..offsets.len()).map(|_| None).collect();
        std::thread::scope(|sc| {
            for _ in 0..qd {
                let tx = tx.clone();
                let (next, halt) = (&next, &halt);
                sc.spawn(move || {
                    let Some(mut pool) = BufferPool::new(1, block.max(4096) as usize, align) else {
                        halt.store(true, Ordering::Relaxed);
                        return;
                    };
                    while !stop.load(Ordering::Relaxed) && !halt.load(Ordering::Relaxed) {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(&off) = offsets.get(i) else { break };
                        let len = block.min(end - off) as usize;
                        let (r, ns) = dev.read(off, &mut pool.slot_mut(0)[..len]);
                        let t_end = base.elapsed().as_nanos() as u64;
                        if tx.send((i, r, ns, t_end)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(tx);
            let mut done = 0u64;
            for (i, r, ns, t_end) in rx {
                if let Err(e) = &r {
                    if io::classify(e) != IoClass::Media {
                        halt.store(true, Ordering::Relaxed);
                    }
                }
                done += block.min(end - offsets[i]);
                obs.progress(done);
                results[i] = Some((r, ns, t_end));
            }
        });
        let mut missing = false;
        for (i, res) in results.into_iter().enumerate() {
            let off = offsets[i];
            let len = self.block_len(off);
            match res {
                None => missing = true,
                Some((Ok(n), ns, t_end)) => {
                    if n > 0 {
                        self.reads.push((off, n as u64, ns));
                        self.spans.push((off, n as u64, t_end.saturating_sub(ns), t_end));
                        self.judge(off, n, ns);
                    }
                }
                Some((Err(e), _, _)) => match io::classify(&e) {
                    IoClass::Media => {
                        self.narrow_read(off, len, "read")?;
                    }
                    IoClass::Vanished => return Err(vanished(off, &e)),
                    IoClass::Fatal => return Err(fatal(off, "reading", &e)),
                },
            }
        }
        if missing {
            if self.interrupted() {
                return Err(Stop::Interrupted);
            }
            return Err(fatal(
                self.start,
                "allocating a read buffer",
                &platform::error::os_error(platform::IoErrorClass::Resources),
            ));
        }
        Ok(())
    }

    /// Read mode: every (or every sampled) block once.
    fn read_pass(&mut self, offsets: &[u64], obs: &mut dyn SurfaceObserver) -> std::result::Result<(), Stop> {
        let mut done = 0u64;
        for &off in offsets {
            if self.interrupted() {
                return Err(Stop::Interrupted);
            }
            let len = self.block_len(off);
            if let Some((n, ns)) = self.read_block(off, len, "read")? {
                if n > 0 {
                    self.reads.push((off, n as u64, ns));
                    self.judge(off, n, ns);
                }
            }
            done += len as u64;
            obs.progress(done);
        }
        Ok(())
    }

    /// Non-destructive mode, one block: read, write pattern, verify, restore, verify.
    fn nd_block(&mut self, off: u64, len: usize, rng: &mut impl rand::RngCore) -> std::result::Result<(), Stop> {
        let Some((n, ns)) = self.read_block(off, len, "read")? else {
            // Unreadable: its data cannot be saved, so it is not written either.
            return Ok(());
        };
        if n < len {
            return Err(fatal(off, "reading (short read)", &platform::error::os_error(platform::IoErrorClass::Media)));
        }
        self.reads.push((off, len as u64, ns));
        self.judge(off, len, ns);
        // The pattern goes to b.
        match self.cfg.pattern {
            Pattern::Byte(x) => self.b.slot_mut(0)[..len].fill(x),
            Pattern::Random => fill_pattern(&mut self.b.slot_mut(0)[..len], DataPattern::Random, rng),
        }
        if self.a.slot_mut(0)[..len] == self.b.slot_mut(0)[..len] {
            // The block already holds the pattern: use its complement, or nothing is tested.
            for x in &mut self.b.slot_mut(0)[..len] {
                *x = !*x;
            }
        }
        let mut result = Ok(());
        let (w, wns) = self.dev.write(off, &self.b.slot_mut(0)[..len]);
        match w {
            Ok(()) => {
                self.writes.push((off, len as u64, wns));
                // Verify into c.
                let (r, _) = self.dev.read(off, &mut self.c.slot_mut(0)[..len]);
                match r {
                    Ok(_) => {
                        let got = self.c.slot_mut(0)[..len].to_vec();
                        let want = self.b.slot_mut(0)[..len].to_vec();
                        self.compare(off, &got, &want, "verify");
                    }
                    Err(e) => match io::classify(&e) {
                        IoClass::Media => {
                            if let Err(s) = self.narrow_read(off, len, "verify") {
                                result = Err(s);
                            }
                        }
                        IoClass::Vanished => result = Err(vanished(off, &e)),
                        IoClass::Fatal => result = Err(fatal(off, "verifying", &e)),
                    },
                }
            }
            Err(e) => match io::classify(&e) {
                IoClass::Media => {
                    if let Err(s) = self.narrow_write(off, true, len, "write") {
                        result = Err(s);
                    }
                }
                IoClass::Vanished => result = Err(vanished(off, &e)),
                IoClass::Fatal => result = Err(fatal(off, "writing", &e)),
            },
        }
        // Whatever happened, the original goes back before anything else.
        if let Err(why) = self.restore(off, len) {
            self.restore_failures.push(off);
            return Err(Stop::Fault(ErrorInfo {
                kind: "restore".into(),
                message: format!(
                    "COULD NOT RESTORE the original data of the {len}-byte block at offset {off}: {why}. \
                     That block of the target may now hold test data; the scan stopped"
                ),
                offset: Some(off),
                job: None,
            }));
        }
        result
    }

    /// Write the original (in `a`) back and check it; two attempts.
    fn restore(&mut self, off: u64, len: usize) -> std::result::Result<(), String> {
        let mut last = String::new();
        for _ in 0..2 {
            let (w, _) = self.dev.write(off, &self.a.slot_mut(0)[..len]);
            if let Err(e) = w {
                last = format!("writing it back failed ({})", errno_text(&e));
                continue;
            }
            let (r, _) = self.dev.read(off, &mut self.c.slot_mut(0)[..len]);
            match r {
                Err(e) => last = format!("reading it back failed ({})", errno_text(&e)),
                Ok(_) if self.c.slot_mut(0)[..len] != self.a.slot_mut(0)[..len] => {
                    last = "the data read back differs from the original".to_string()
                }
                Ok(_) => return Ok(()),
            }
        }
        Err(last)
    }

    fn nd_pass(&mut self, offsets: &[u64], obs: &mut dyn SurfaceObserver) -> std::result::Result<(), Stop> {
        let mut rng = engine::io::offsets::worker_rng(self.cfg.seed, 7, 0);
        let mut done = 0u64;
        for &off in offsets {
            // Only between blocks: the block in hand is always restored first.
            if self.interrupted() {
                return Err(Stop::Interrupted);
            }
            let len = self.block_len(off);
            self.nd_block(off, len, &mut rng)?;
            done += len as u64;
            obs.progress(done);
        }
        // Push the restored data out of the device's write cache too.
        self.dev.file.sync_data().map_err(|e| fatal(self.start, "flushing the restored data", &e))
    }

    /// Destructive mode: per pattern, write the span, then read-verify it.
    fn destructive(&mut self, offsets: &[u64], obs: &mut dyn SurfaceObserver) -> std::result::Result<(), Stop> {
        let span = self.end - self.start;
        let cfg = self.cfg;
        for (k, &pat) in cfg.patterns.iter().enumerate() {
            let name = format!("0x{pat:02x}");
            let bad_before = self.bad.len();
            let mut pass = PatternPass {
                pattern: name.clone(),
                write_bytes: 0,
                write_seconds: 0.0,
                write_mb_s: None,
                read_bytes: 0,
                read_seconds: 0.0,
                read_mb_s: None,
                bad_sectors: 0,
                partial: true,
            };
            self.b.slot_mut(0).fill(pat);
            obs.phase(&format!("pattern {}/{} {name}: write", k + 1, cfg.patterns.len()), span);
            let mut wns = 0u64;
            let mut done = 0u64;
            let phase = format!("write {name}");
            let out = (|| {
                for &off in offsets {
                    if self.interrupted() {
                        return Err(Stop::Interrupted);
                    }
                    let len = self.block_len(off);
                    let (w, ns) = self.dev.write(off, &self.b.slot_mut(0)[..len]);
                    match w {
                        Ok(()) => {
                            wns += ns;
                            pass.write_bytes += len as u64;
                            if k == 0 {
                                self.writes.push((off, len as u64, ns));
                            }
                        }
                        Err(e) => match io::classify(&e) {
                            IoClass::Media => {
                                self.narrow_write(off, true, len, &phase)?;
                            }
                            IoClass::Vanished => return Err(vanished(off, &e)),
                            IoClass::Fatal => return Err(fatal(off, "writing", &e)),
                        },
                    }
                    done += len as u64;
                    obs.progress(done);
                }
                Ok(())
            })();
            pass.write_seconds = wns as f64 / 1e9;
            pass.write_mb_s = sm::mb_s(pass.write_bytes, wns);
            if let Err(s) = out {
                pass.bad_sectors = (self.bad.len() - bad_before) as u64;
                self.passes.push(pass);
                return Err(s);
            }
            if let Err(e) = self.dev.file.sync_data() {
                return Err(fatal(self.start, "flushing the written pattern", &e));
            }
            obs.phase(&format!("pattern {}/{} {name}: verify", k + 1, cfg.patterns.len()), span);
            let mut rns = 0u64;
            let mut done = 0u64;
            let phase = format!("verify {name}");
            let out = (|| {
                for &off in offsets {
                    if self.interrupted() {
                        return Err(Stop::Interrupted);
                    }
                    let len = self.block_len(off);
                    if let Some((n, ns)) = self.read_block(off, len, &phase)? {
                        rns += ns;
                        pass.read_bytes += n as u64;
                        if k == 0 {
                            self.reads.push((off, n as u64, ns));
                            self.judge(off, n, ns);
                        }
                        let got = self.a.slot_mut(0)[..n].to_vec();
                        let want = self.b.slot_mut(0)[..n].to_vec();
                        self.compare(off, &got, &want, &phase);
                    }
                    done += len as u64;
                    obs.progress(done);
                }
                Ok(())
            })();
            pass.read_seconds = rns as f64 / 1e9;
            pass.read_mb_s = sm::mb_s(pass.read_bytes, rns);
            pass.bad_sectors = (self.bad.len() - bad_before) as u64;
            pass.partial = out.is_err();
            self.passes.push(pass);
            out?;
        }
        Ok(())
    }

    /// Random access time: `n` reads of `io` bytes at uniform random aligned positions.
    fn access(&mut self, n: u32, obs: &mut dyn SurfaceObserver) -> std::result::Result<Vec<[u64; 2]>, Stop> {
        let io = self.dev.lb.max(4096).min(self.end - self.start);
        let slots = (self.end - self.start) / io;
        let mut rng = engine::io::offsets::worker_rng(self.cfg.seed, 11, 0);
        let mut out = Vec::with_capacity(n as usize);
        obs.phase("random access time", u64::from(n) * io);
        for i in 0..n {
            if self.interrupted() {
                return Err(Stop::Interrupted);
            }
            let off = self.start + rng.random_range(0..slots.max(1)) * io;
            let (r, ns) = self.dev.read(off, &mut self.c.slot_mut(0)[..io as usize]);
            match r {
                Ok(_) => out.push([off, ns]),
                Err(e) => match io::classify(&e) {
                    IoClass::Media => {
                        self.narrow_read(off, io as usize, "access")?;
                    }
                    IoClass::Vanished => return Err(vanished(off, &e)),
                    IoClass::Fatal => return Err(fatal(off, "a random read", &e)),
                },
            }
            obs.progress(u64::from(i + 1) * io);
        }
        Ok(out)
    }
}

/// [`scan`] with an explicit fault plan (the engine's tests build their own).
pub fn scan_with(
    path: &Path,
    cfg: &SurfaceConfig,
    stop: &AtomicBool,
    obs: &mut dyn SurfaceObserver,
    hook: Hook,
) -> Result<ResultDoc> {
    check_modes(cfg)?;
    let t = open_target(path, cfg)?;
    let mut doc = crate::session::new_doc("surface");
    doc.target = Some(engine::target::probe_info(path, &t.probe));
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
    let mut r = s.result(&t, (start, size), block, sample, access);
    r.seconds = begun.elapsed().as_secs_f64();
    let blocks = sm::badblock_numbers(&r.bad_sectors, cfg.fs_block);
    r.badblocks = Some(stats::surface::BadBlockList { fs_block: cfg.fs_block, blocks, file: None });
    match stopped {
        None => {}
        Some(Stop::Interrupted) => {
            doc.partial = true;
            doc.error = Some(ErrorInfo::new("interrupted", "interrupted: the results cover the part scanned"));
        }
        Some(Stop::Fault(e)) => {
            doc.partial = true;
            doc.error = Some(e);
        }
    }
    r.verdict = report::surface_verdict(&r, doc.partial);
    for (code, msg) in warnings.into_iter().chain(std::mem::take(&mut s.warnings)) {
        doc.warn(&code, msg);
    }
    doc.surface = Some(r);
    Ok(doc)
}

/// The combinations of modes a scan refuses.
fn check_modes(cfg: &SurfaceConfig) -> Result<()> {
    if cfg.access_only && cfg.mode != Mode::Read {
        return Err(EngineError::Invalid(
            "--access-only measures random reads only; it cannot be combined with --mode nondestructive/destructive"
                .into(),
        ));
    }
    if cfg.qd > 1 && cfg.mode != Mode::Read {
        return Err(EngineError::Invalid(
            "--qd applies to the read mode; the writing modes work one block at a time".into(),
        ));
    }
    if cfg.mode == Mode::Destructive && cfg.patterns.is_empty() {
        return Err(EngineError::Invalid("--patterns needs at least one pattern, e.g. 0xaa,0x55,0xff,0x00".into()));
    }
    Ok(())
}

/// A warning's code and message.
type Warning = (String, String);

/// The span to scan: its start, its size in whole logical blocks, and the target's warnings
/// (with one for a tail shorter than a block).
fn span(cfg: &SurfaceConfig, t: &Opened) -> Result<(u64, u64, Vec<Warning>)> {
    let start = cfg.offset;
    let raw = cfg.size.unwrap_or(t.probe.size_bytes - start);
    let size = raw / t.lb * t.lb;
    if size == 0 {
        return Err(EngineError::Invalid(format!(
            "invalid value for --size: the span ({raw} bytes) is shorter than one logical block ({} bytes)",
            t.lb
        )));
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

impl<'a> Scan<'a> {
    /// A scan of `(start, size)` with its three block buffers.
    fn new(
        dev: Dev<'a>,
        cfg: &'a SurfaceConfig,
        stop: &'a AtomicBool,
        (start, size): (u64, u64),
        block: u64,
        align: usize,
    ) -> Result<Self> {
        let pool = || {
            BufferPool::new(1, block.max(4096) as usize, align)
                .ok_or_else(|| EngineError::Invalid(format!("cannot allocate a {block}-byte buffer; lower --block")))
        };
        Ok(Scan {
            dev,
            cfg,
            stop,
            start,
            end: start + size,
            slow: SlowDetector::new(cfg.slow_factor, cfg.slow_window as usize, cfg.slow_floor.as_nanos() as u64),
            reads: Vec::new(),
            spans: Vec::new(),
            writes: Vec::new(),
            slow_blocks: Vec::new(),
            bad: Vec::new(),
            passes: Vec::new(),
            restore_failures: Vec::new(),
            warnings: Vec::new(),
            a: pool()?,
            b: pool()?,
            c: pool()?,
        })
    }

    /// The mode's passes over `offsets`, then the random access-time probes: the access
    /// latencies, or why the scan stopped early.
    fn passes_over(
        &mut self,
        offsets: &[u64],
        sampled: bool,
        align: usize,
        obs: &mut dyn SurfaceObserver,
    ) -> std::result::Result<Option<Vec<[u64; 2]>>, Stop> {
        let cfg = self.cfg;
        let total: u64 = offsets.iter().map(|&o| self.block_len(o) as u64).sum();
        let outcome = (|| {
            if !cfg.access_only {
                match cfg.mode {
                    Mode::Read => {
                        obs.phase(if sampled { "sampled read scan" } else { "read scan" }, total);
                        if cfg.qd > 1 {
                            self.read_pass_parallel(offsets, cfg.qd as usize, align, obs)?;
                        } else {
                            self.read_pass(offsets, obs)?;
                        }
                    }
                    Mode::NonDestructive => {
                        obs.phase("read · write · verify · restore", total);
                        self.nd_pass(offsets, obs)?;
                    }
                    Mode::Destructive => self.destructive(offsets, obs)?,
                }
                obs.phase_done();
            }
            let access = if cfg.access > 0 { Some(self.access(cfg.access, obs)?) } else { None };
            obs.phase_done();
            Ok(access)
        })();
        obs.phase_done();
        outcome
    }

    /// The scan's figures: zones (read and write rates), the latency map, access time, slow
    /// blocks, bad sectors narrowed and deduplicated, the passes of the writing modes.
    fn result(
        &mut self,
        t: &Opened,
        (start, size): (u64, u64),
        block: u64,
        sample: Option<u64>,
        access: Option<Vec<[u64; 2]>>,
    ) -> SurfaceResult {
        let cfg = self.cfg;
        sm::dedup_sectors(&mut self.bad);
        let mut zones = sm::zones(start, size, block, cfg.zones, &self.reads);
        if !self.spans.is_empty() {
            // Several blocks were in flight: a zone's rate is its bytes over the wall time from
            // its first block's start to its last block's end (summed latencies would count
            // overlapping time several times).
            sm::zone_rates_from_spans(start, size, &mut zones, &self.spans);
        }
        if !self.writes.is_empty() {
            for (z, w) in zones.iter_mut().zip(sm::zones(start, size, block, cfg.zones, &self.writes)) {
                z.write_mb_s = w.mb_s;
            }
        }
        let map_in: Vec<(u64, u64)> = self.reads.iter().map(|r| (r.0, r.2)).collect();
        SurfaceResult {
            mode: cfg.mode.name().to_string(),
            block_bytes: block,
            logical_block: t.lb as u32,
            offset: start,
            size,
            direct: t.direct,
            sample,
            qd: cfg.qd.max(1),
            scanned_bytes: self.reads.iter().map(|r| r.1).sum(),
            blocks: self.reads.len() as u64,
            seconds: 0.0,
            zones,
            access: access.map(|a| sm::access_time(self.dev.lb.max(4096).min(size), a)),
            latency_map: (!map_in.is_empty()).then(|| sm::latency_map(&map_in, cfg.map_cells.max(1))),
            slow_rule: SlowRule {
                factor: cfg.slow_factor,
                window: cfg.slow_window,
                floor_ns: cfg.slow_floor.as_nanos() as u64,
                rereads: cfg.rereads.max(1),
            },
            slow_blocks: std::mem::take(&mut self.slow_blocks),
            bad_sectors: std::mem::take(&mut self.bad),
            passes: std::mem::take(&mut self.passes),
            badblocks: None,
            restore_failures: std::mem::take(&mut self.restore_failures),
            verdict: String::new(),
        }
    }
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
