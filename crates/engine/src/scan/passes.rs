//! The passes of each mode over the span's blocks, then the random access-time reads:
//! `read` (every or every sampled block once; at `--qd` > 1 in [`super::parallel`]),
//! `nondestructive` (per block: read, write a pattern, verify, restore, verify) and
//! `destructive` (per pattern: write the span, then read-verify it).

use super::config::{Mode, Pattern, SurfaceObserver};
use super::dev::{self, IoClass};
use super::state::{fatal, vanished, Scan, Stop};
use crate::io::buffers::fill_pattern;
use rand::Rng;
use spec::DataPattern;
use stats::surface::{self as sm, PatternPass};
use stats::ErrorInfo;

impl Scan<'_> {
    /// The mode's passes over `offsets`, then the random access-time probes: the access
    /// latencies, or why the scan stopped early.
    pub fn passes_over(
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
                    Err(e) => match dev::classify(&e) {
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
            Err(e) => match dev::classify(&e) {
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
                last = format!("writing it back failed ({})", dev::errno_text(&e));
                continue;
            }
            let (r, _) = self.dev.read(off, &mut self.c.slot_mut(0)[..len]);
            match r {
                Err(e) => last = format!("reading it back failed ({})", dev::errno_text(&e)),
                Ok(_) if self.c.slot_mut(0)[..len] != self.a.slot_mut(0)[..len] => {
                    last = "the data read back differs from the original".to_string()
                }
                Ok(_) => return Ok(()),
            }
        }
        Err(last)
    }

    fn nd_pass(&mut self, offsets: &[u64], obs: &mut dyn SurfaceObserver) -> std::result::Result<(), Stop> {
        let mut rng = crate::io::offsets::worker_rng(self.cfg.seed, 7, 0);
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
                        Err(e) => match dev::classify(&e) {
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
        let mut rng = crate::io::offsets::worker_rng(self.cfg.seed, 11, 0);
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
                Err(e) => match dev::classify(&e) {
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
