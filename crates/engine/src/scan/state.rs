//! The state of one scan and what it does to one block: read it (timed), narrow a failed read
//! or write to its sectors, compare what was read with what was written, judge its latency and
//! re-read it when slow. The passes ([`super::passes`], [`super::parallel`]) drive these over
//! the span.

use super::config::SurfaceConfig;
use super::dev::{self, Dev, IoClass};
use super::slow::SlowDetector;
use crate::error::{Invalid, Result};
use crate::io::buffers::BufferPool;
use stats::surface::{BadSector, PatternPass, SlowBlock};
use stats::ErrorInfo;
use std::sync::atomic::{AtomicBool, Ordering};

/// Why the scan stopped early.
pub enum Stop {
    Interrupted,
    Fault(ErrorInfo),
}

/// The device went away at `off`.
pub fn vanished(off: u64, e: &std::io::Error) -> Stop {
    Stop::Fault(ErrorInfo {
        kind: "vanished".into(),
        message: format!("the device went away at offset {off} ({}); the scan stopped", dev::errno_text(e)),
        offset: Some(off),
        job: None,
    })
}

/// `what` at `off` failed in a way that is not the medium's: the scan stops.
pub fn fatal(off: u64, what: &str, e: &std::io::Error) -> Stop {
    Stop::Fault(ErrorInfo {
        kind: "io".into(),
        message: format!("{what} at offset {off} failed: {e}; the scan stopped"),
        offset: Some(off),
        job: None,
    })
}

/// Accumulated state of one scan.
pub struct Scan<'a> {
    pub dev: Dev<'a>,
    pub cfg: &'a SurfaceConfig,
    pub stop: &'a AtomicBool,
    pub start: u64,
    pub end: u64,
    pub slow: SlowDetector,
    /// Main pass: `(offset, bytes, latency ns)` per block read.
    pub reads: Vec<(u64, u64, u64)>,
    /// `--qd` > 1: `(offset, bytes, start ns, end ns)` of each block on the scan's clock.
    pub spans: Vec<(u64, u64, u64, u64)>,
    /// Write latencies of the first write pass (destructive) or the pattern writes
    /// (non-destructive).
    pub writes: Vec<(u64, u64, u64)>,
    pub slow_blocks: Vec<SlowBlock>,
    pub bad: Vec<BadSector>,
    pub passes: Vec<PatternPass>,
    pub restore_failures: Vec<u64>,
    pub warnings: Vec<(String, String)>,
    /// Buffers: the block read, the pattern / data to write, a spare for verification.
    pub a: BufferPool,
    pub b: BufferPool,
    pub c: BufferPool,
}

impl<'a> Scan<'a> {
    /// A scan of `(start, size)` with its three block buffers.
    pub fn new(
        dev: Dev<'a>,
        cfg: &'a SurfaceConfig,
        stop: &'a AtomicBool,
        (start, size): (u64, u64),
        block: u64,
        align: usize,
    ) -> Result<Self> {
        let pool = || BufferPool::new(1, block.max(4096) as usize, align).ok_or(Invalid::ScanBuffer { block });
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
}

impl Scan<'_> {
    pub fn interrupted(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// The length of the block at `off`: `--block`, or less at the end of the span.
    pub fn block_len(&self, off: u64) -> usize {
        (self.cfg.block.min(self.end - off)) as usize
    }

    fn bad_sector(&mut self, offset: u64, errno: Option<i32>, phase: &str) {
        self.bad.push(BadSector {
            offset,
            bytes: self.dev.lb,
            errno,
            error: errno.map(dev::errno_name).unwrap_or_else(|| "mismatch".to_string()),
            phase: phase.to_string(),
        });
    }

    /// A block read failed: read it sector by sector and record every sector that fails.
    pub fn narrow_read(&mut self, off: u64, len: usize, phase: &str) -> std::result::Result<usize, Stop> {
        let lb = self.dev.lb as usize;
        let mut found = 0;
        for s in (0..len).step_by(lb) {
            let at = off + s as u64;
            let (r, _) = self.dev.read(at, &mut self.c.slot_mut(0)[..lb]);
            if let Err(e) = r {
                match dev::classify(&e) {
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
    pub fn narrow_write(
        &mut self,
        off: u64,
        data_in_b: bool,
        len: usize,
        phase: &str,
    ) -> std::result::Result<usize, Stop> {
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
                match dev::classify(&e) {
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
    pub fn compare(&mut self, off: u64, got: &[u8], want: &[u8], phase: &str) -> usize {
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
    pub fn judge(&mut self, off: u64, len: usize, ns: u64) {
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
    pub fn read_block(&mut self, off: u64, len: usize, phase: &str) -> std::result::Result<Option<(usize, u64)>, Stop> {
        let (r, ns) = self.dev.read(off, &mut self.a.slot_mut(0)[..len]);
        match r {
            Ok(n) => Ok(Some((n, ns))),
            Err(e) => match dev::classify(&e) {
                IoClass::Media => {
                    self.narrow_read(off, len, phase)?;
                    Ok(None)
                }
                IoClass::Vanished => Err(vanished(off, &e)),
                IoClass::Fatal => Err(fatal(off, "reading", &e)),
            },
        }
    }
}
