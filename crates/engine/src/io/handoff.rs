//! io_uring's hand-off of requests to its kernel workers ("async punt"): seen, placed and
//! accounted (`docs/METHOD.md`, "Hand-off to the kernel's workers").
//!
//! A target that cannot take a request without blocking (zram, bio-based drivers) has io_uring
//! run every request in kernel worker threads of the submitting thread (`iou-wrk-<tid>`).
//! Left alone, those threads inherit the submitter's CPU pin, and the kernel adds a worker
//! only when the running ones block, which a RAM device never does: one thread on the
//! submitter's CPU then does all the I/O, and the figure is that placement's, not the
//! device's. With `--handoff ring`, a worker whose target the probe found handing requests
//! off submits each request for hand-off at once, lets the kernel's workers (and itself) run on
//! every CPU the process may use and caps them at its queue depth; the bytes its own thread and
//! its kernel workers moved tell what share of the I/O the workers did.
//!
//! By default ([`stats::HandoffPolicy::Threads`]) a job whose target hands reads off does not
//! run on io_uring at all: a probe before the workers start finds it ([`target_hands_off`]),
//! and the job's queue depth is served by as many threads of synchronous I/O, each request
//! running in the thread that issued it, as it would in a kernel worker, without the two
//! thread hand-overs per request ([`plan`]). With [`stats::HandoffPolicy::Ring`] the same probe
//! has the job's workers hand every request off at once ([`prepare`]).

#[cfg(target_os = "linux")]
use super::backend::uring::Uring;
#[cfg(target_os = "linux")]
use super::backend::BackendConfig;
#[cfg(target_os = "linux")]
use super::buffers::BufferPool;
use super::runner::job::{BoundJob, RunControl};
#[cfg(target_os = "linux")]
use platform::target::Raw;
use platform::threads::{self, TaskCounters};
#[cfg(target_os = "linux")]
use spec::EngineKind;
use std::borrow::Cow;

pub use super::worker::HandoffEnd;

/// A worker's watch over its hand-off, from before its first I/O to its end.
pub struct Watch {
    tid: u32,
    base: TaskCounters,
    end: HandoffEnd,
}

/// Watch the calling worker's hand-off from here on; where the probe before the run found its
/// target handing requests off (`forced`, [`plan`]), hand every request of `ring` off at once,
/// place the kernel's workers on `cpus` (the CPUs the process may use) and cap them at `depth`.
/// `None` where the OS cannot tell threads apart.
#[cfg(target_os = "linux")]
pub fn prepare(ring: &mut Uring, forced: bool, cpus: &[usize], depth: u32) -> Option<Watch> {
    let tid = threads::current_tid()?;
    let mut end = HandoffEnd::default();
    if forced {
        let (aff, capped) = ring.hand_off(cpus, depth);
        end.forced = true;
        if aff {
            end.cpus = cpus.iter().map(|&c| c as u32).collect();
        }
        if capped {
            end.max_workers = depth;
        }
    }
    Some(Watch { tid, base: TaskCounters::default(), end })
}

impl Watch {
    /// The worker's requests are handed off, and placed as [`prepare`] says.
    #[cfg_attr(not(target_os = "linux"), allow(dead_code))]
    pub fn forced(&self) -> bool {
        self.end.forced
    }

    /// The run starts now: the thread's own counters from here on.
    pub fn start(&mut self) {
        self.base = threads::counters(self.tid).unwrap_or_default();
    }

    /// The run is over (the ring still open, so its workers are alive): what each side moved.
    pub fn finish(mut self) -> HandoffEnd {
        let own = threads::counters(self.tid).unwrap_or_default().since(&self.base);
        self.end.own_bytes = own.bytes();
        for w in threads::io_workers_of(self.tid) {
            if let Some(c) = threads::counters(w) {
                self.end.kernel_workers += 1;
                self.end.kernel_bytes += c.bytes();
                self.end.kernel_cpu_ns += c.cpu_ns;
            }
        }
        self.end
    }
}

/// Whether the target behind `fd` has io_uring hand its reads to kernel workers: reads of
/// `len` bytes at `offset` from a ring of a new thread's own (a thread that never had one, so
/// any kernel worker under it is this read's), into a buffer of the kind the run's workers use
/// ([`BufferPool`]: huge pages for large blocks, so that a read's pages fit the queue's
/// segment limit as the run's do). The first read may be handed off for a passing reason (a
/// file's dirty pages in the cache must be written before a direct read can go by them);
/// the next [`PROBE_READS`] tell how the target takes reads, and they must agree: a target
/// that hands off some reads and not others is taken as handing off (its figure would depend
/// on where the kernel's workers run). `None` where it cannot tell: no io_uring, a failed
/// read, an OS that cannot tell threads apart.
#[cfg(target_os = "linux")]
pub fn target_hands_off(fd: Raw, offset: u64, len: u32) -> Option<bool> {
    let once = || {
        std::thread::scope(|s| {
            s.spawn(|| {
                let cfg = BackendConfig {
                    fd,
                    files: Vec::new(),
                    depth: 1,
                    buffers: None,
                    register_file: false,
                    sqpoll: false,
                    flags: 0,
                };
                let mut ring = Uring::new(&cfg).ok()?;
                let mut pool = BufferPool::new(1, len.max(1) as usize, 4096)?;
                let (punted, reaped) = ring.probe_handoff(offset, pool.slot_mut(0));
                if !reaped {
                    // The kernel may still write into it.
                    std::mem::forget(pool);
                }
                punted
            })
            .join()
            .ok()
            .flatten()
        })
    };
    once()?;
    let mut any = false;
    for _ in 0..PROBE_READS {
        any |= once()?;
    }
    Some(any)
}

/// Reads after the first that [`target_hands_off`] makes.
#[cfg(target_os = "linux")]
pub const PROBE_READS: usize = 3;

/// The group's jobs as they will run under `ctl`'s hand-off policy. Each io_uring job's target
/// is probed ([`target_hands_off`], once per descriptor); where it hands reads off, the job
/// runs on the psync engine, its queue depth served by threads
/// ([`stats::HandoffPolicy::Threads`], unless an SQ polling thread submits for it), or keeps
/// io_uring with every request handed off at once ([`stats::HandoffPolicy::Ring`]); `handoff`
/// says which. Borrowed as they are where no target hands off (and off Linux, where no
/// engine hands requests to kernel workers of its own).
#[cfg(not(target_os = "linux"))]
pub fn plan<'a>(jobs: &'a [BoundJob], _ctl: &RunControl) -> Cow<'a, [BoundJob]> {
    Cow::Borrowed(jobs)
}

/// The group's jobs as they will run under `ctl`'s hand-off policy. Each io_uring job's target
/// is probed ([`target_hands_off`], once per descriptor); where it hands reads off, the job
/// runs on the psync engine, its queue depth served by threads
/// ([`stats::HandoffPolicy::Threads`], unless an SQ polling thread submits for it), or keeps
/// io_uring with every request handed off at once ([`stats::HandoffPolicy::Ring`]); `handoff`
/// says which. Borrowed as they are where no target hands off.
#[cfg(target_os = "linux")]
pub fn plan<'a>(jobs: &'a [BoundJob], ctl: &RunControl) -> Cow<'a, [BoundJob]> {
    let mut probed: Vec<(Raw, Option<bool>)> = Vec::new();
    let mut out = Cow::Borrowed(jobs);
    for (i, j) in jobs.iter().enumerate() {
        if j.spec.engine != EngineKind::IoUring || j.fd == platform::target::NO_RAW {
            continue;
        }
        let punts = match probed.iter().find(|(fd, _)| *fd == j.fd) {
            Some(&(_, p)) => p,
            None => {
                let p = target_hands_off(j.fd, j.region_offset, j.lens.max());
                probed.push((j.fd, p));
                p
            }
        };
        if punts != Some(true) {
            continue;
        }
        let job = &mut out.to_mut()[i];
        if ctl.handoff == stats::HandoffPolicy::Threads && !job.spec.offload {
            job.spec.engine = EngineKind::Psync;
            job.handoff = Some(stats::HandoffPolicy::Threads);
        } else {
            job.handoff = Some(stats::HandoffPolicy::Ring);
        }
    }
    out
}

/// The hand-off record of a job that ran on threads ([`plan`]), with `threads` of them.
pub fn threads_record(threads: u32) -> stats::Handoff {
    stats::Handoff { policy: stats::HandoffPolicy::Threads, threads, ..stats::Handoff::default() }
}

#[cfg(all(test, target_os = "linux"))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use platform::target::{Native, OpenHow, TargetOps};
    use std::io::Write;

    /// A file just written through the page cache: the first direct read must wait for its dirty
    /// pages to be written, and io_uring hands it off; the probe's second read shows how the
    /// file system takes reads (ext4 and xfs in the submitting thread).
    #[test]
    fn a_files_dirty_pages_do_not_make_a_hand_off() {
        let dir = tempfile::tempdir().unwrap();
        let kind = platform::fs::fs_magic(dir.path()).unwrap_or(0);
        // Only on a disk file system that takes direct reads without blocking (ext4/ext2/ext3, xfs).
        if ![0xEF53, 0x5846_5342].contains(&kind) {
            eprintln!(
                "note: {} is not ext4 or xfs (f_type {kind:#x}): dirty-page probe test skipped",
                dir.path().display()
            );
            return;
        }
        let p = dir.path().join("dirty");
        std::fs::File::create(&p).unwrap().write_all(&vec![7u8; 1 << 20]).unwrap();
        let f = Native::open(&p, OpenHow { direct: true, ..OpenHow::default() }).unwrap();
        assert_eq!(target_hands_off(platform::target::raw(&f), 0, 4096), Some(false));
    }
}
