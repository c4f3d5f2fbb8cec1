//! The read pass at `--qd` > 1: `qd` threads take the next block in turn, each with its own
//! buffer; the blocks are then judged in position order, and slow blocks re-read at queue
//! depth 1.

use super::config::SurfaceObserver;
use super::dev::{self, IoClass};
use super::state::{fatal, vanished, Scan, Stop};
use crate::io::buffers::BufferPool;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

impl Scan<'_> {
    /// Read mode at queue depth > 1: `qd` threads take the next block in turn; the
    /// results are then judged in position order (slow-block re-reads at queue depth 1).
    pub fn read_pass_parallel(
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
                    if dev::classify(e) != IoClass::Media {
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
                Some((Err(e), _, _)) => match dev::classify(&e) {
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
}
