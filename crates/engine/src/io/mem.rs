//! The `mem` engine and the `exceeds-memory-bandwidth` check.
//!
//! `--engine mem` runs the same workload model as the storage engines, but each "I/O" is a
//! memcpy of `bs` bytes between the worker's buffer and a memory region standing in for the
//! target: reads copy region → buffer, writes buffer → region, at the offsets the workload
//! generates. The region (the job's `--size`) is allocated once per job, shared by the job's
//! workers and written in full before the measurement, so page faults are not measured.
//!
//! Queue depth: a memcpy has no asynchrony, so `--qd N` means N copies in flight per worker
//! done back to back — the worker issues N copies, then reaps them. Each copy's latency runs
//! from its issue to that reap, like any other I/O, so at QD N latency ≈ N × one copy and
//! IOPS = QD ÷ latency holds as on a device.
//!
//! The figures are this machine's memory bandwidth and latency for the run's shape, the
//! physical ceiling of any cached storage figure: after a storage job, [`bandwidth_check`]
//! runs a short mem job of the same shape and warns `exceeds-memory-bandwidth` when the job
//! reported more MB/s than memory gave.

use crate::error::{EngineError, Result};
use crate::io::backend::{Backend, BackendConfig, Completed, Op};
use crate::io::runner::{run_group, BoundJob, RunControl};
use spec::{EngineKind, JobSpec};
use stats::{codes, JobResult, ResultDoc};
use std::io;
use std::ptr::NonNull;
use std::sync::Arc;
use std::time::Duration;

/// Region of a mem job without `--size` (the size of a new test file).
pub const DEFAULT_REGION: u64 = 1 << 30;
/// Region of the bandwidth check's mem job: the storage job's region, at most this (larger
/// than any CPU cache, so the copies reach memory).
pub const CHECK_REGION: u64 = 256 << 20;
/// Measured time of the bandwidth check's mem job.
pub const CHECK_RUNTIME: Duration = Duration::from_millis(500);

/// Memory standing in for a target: an anonymous private mapping, written in full on
/// creation. Shared by the workers of one job.
pub struct MemRegion {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the region is plain bytes owned by this struct; it is only accessed through raw
// pointers by `Mem::queue` (see the SAFETY note there) and unmapped once, on drop.
unsafe impl Send for MemRegion {}
// SAFETY: as above; `&MemRegion` exposes no references into the bytes.
unsafe impl Sync for MemRegion {}

impl MemRegion {
    /// Map `len` bytes and write every page, so the measurement sees no page faults.
    /// `None` when the mapping fails (no memory, or `len` is 0 or too large).
    pub fn new(len: u64) -> Option<Self> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        // SAFETY: a fresh anonymous private mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        let ptr = NonNull::new(p.cast::<u8>())?;
        // SAFETY: the mapping is `len` writable bytes that nothing else references yet.
        // Non-zero bytes: every page gets its own frame (not the shared zero page).
        unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0xa5, len) };
        Some(Self { ptr, len })
    }

    pub fn len(&self) -> u64 {
        self.len as u64
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// A copy of the region's bytes `[from, from + n)` (tests and checks; not the hot path).
    pub fn read_at(&self, from: u64, n: usize) -> Option<Vec<u8>> {
        let from = usize::try_from(from).ok()?;
        if from.checked_add(n)? > self.len {
            return None;
        }
        let mut v = vec![0u8; n];
        // SAFETY: [from, from + n) lies inside the mapping (checked above); `v` is a distinct
        // allocation of n bytes.
        unsafe { std::ptr::copy_nonoverlapping(self.ptr.as_ptr().add(from), v.as_mut_ptr(), n) };
        Some(v)
    }

    /// Overwrite the region's bytes at `from` with `data` (tests; not the hot path).
    pub fn write_at(&self, from: u64, data: &[u8]) -> bool {
        let Ok(from) = usize::try_from(from) else { return false };
        if from.checked_add(data.len()).is_none_or(|end| end > self.len) {
            return false;
        }
        // SAFETY: the destination lies inside the mapping (checked above) and does not
        // overlap `data`, which is caller memory.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.ptr.as_ptr().add(from), data.len()) };
        true
    }
}

impl Drop for MemRegion {
    fn drop(&mut self) {
        // SAFETY: the mapping was created in `new` with this length and is unmapped once.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

/// One mem region per mem-engine job of a group (None for other engines), allocated before
/// the workers start. A region that cannot be mapped is a usage error naming `--size`.
pub fn job_regions(jobs: &[BoundJob]) -> Result<Vec<Option<Arc<MemRegion>>>> {
    jobs.iter()
        .map(|j| {
            if j.spec.engine != EngineKind::Mem {
                return Ok(None);
            }
            MemRegion::new(j.region_len).map(|r| Some(Arc::new(r))).ok_or_else(|| {
                EngineError::Invalid(format!(
                    "cannot allocate the mem engine's {} region for {}: lower --size",
                    crate::io::memory::human(j.region_len),
                    j.spec.name
                ))
            })
        })
        .collect()
}

/// The mem backend: every I/O is one memcpy inside `queue`, completed at once.
pub struct Mem {
    region: Arc<MemRegion>,
    base: *mut u8,
    len: u64,
    /// Target offset of the region's first byte (the job's region offset).
    origin: u64,
    /// This worker's own part of the region: `[part_start, part_start + part_len)`. Workers of
    /// a job never touch each other's bytes, so no two threads access the same memory at once.
    part_start: u64,
    part_len: u64,
    done: Completed,
}

impl Mem {
    /// A backend copying to and from `region`, whose first byte stands for target offset
    /// `origin`.
    /// Worker `worker` of `workers` gets its own equal, page-aligned part of the region; an
    /// offset the workload generates is mapped into that part (modulo its length).
    pub fn new(cfg: &BackendConfig, region: Arc<MemRegion>, origin: u64, worker: usize, workers: usize) -> Self {
        let base = region.ptr.as_ptr();
        let len = region.len();
        let workers = workers.max(1) as u64;
        let part_len = if workers == 1 { len } else { (len / workers) / 4096 * 4096 };
        let part_start = part_len * (worker as u64 % workers);
        Self { region, base, len, origin, part_start, part_len, done: Completed::new(cfg.depth) }
    }

    /// The region this backend copies to and from.
    pub fn region(&self) -> &MemRegion {
        &self.region
    }
}

/// One copy of `len` bytes between the region (`base`, `region_len` bytes, standing for
/// target offsets from `origin`) and `buf`: `len`, or -EINVAL outside the region.
impl Mem {
    #[inline]
    fn copy(&self, op: Op, offset: u64, buf: *mut u8, len: u32) -> i32 {
        let (base, region_len, origin, part) = (self.base, self.len, self.origin, (self.part_start, self.part_len));
        let rel = offset.wrapping_sub(origin);
        if offset < origin || rel > region_len || region_len - rel < u64::from(len) {
            return -libc::EINVAL;
        }
        // Into this worker's own part: modulo its length, kept whole inside it.
        let (start, plen) = part;
        if plen < u64::from(len) {
            return -libc::EINVAL;
        }
        let within = (rel % plen).min(plen - u64::from(len));
        let rel = start + within;
        // SAFETY: [rel, rel + len) lies inside the mapping (checked above), which the caller's
        // `MemRegion` keeps alive; `buf` is the worker's slot of `len` bytes, a separate
        // allocation, so the ranges do not overlap. The range lies in this worker's own part of
        // the region, which no other thread reads or writes (see `Mem::new`).
        unsafe {
            let at = base.add(rel as usize);
            if op == Op::Read {
                std::ptr::copy_nonoverlapping(at.cast_const(), buf, len as usize);
            } else {
                std::ptr::copy_nonoverlapping(buf.cast_const(), at, len as usize);
            }
        }
        len as i32
    }
}

impl Backend for Mem {
    #[inline]
    fn queue(&mut self, slot: u32, op: Op, offset: u64, buf: *mut u8, len: u32, _: u16) -> io::Result<()> {
        let res = match op {
            Op::Fsync | Op::Discard | Op::PunchHole => 0,
            Op::Read | Op::Write => self.copy(op, offset, buf, len),
        };
        self.done.0.push((slot, res));
        Ok(())
    }

    fn submit_and_wait(&mut self, _: u32, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn reap<F: FnMut(u32, i32)>(&mut self, f: F) {
        self.done.reap(f)
    }
}

/// The short mem job whose bandwidth bounds a storage job's figures: the same rw, mix, bs,
/// qd, threads, distribution and data, over min(the job's region, [`CHECK_REGION`]), time
/// based for [`CHECK_RUNTIME`], closed loop.
pub fn check_job(s: &JobSpec) -> JobSpec {
    let region = s.size.unwrap_or(CHECK_REGION).min(CHECK_REGION).max(s.bs);
    JobSpec {
        engine: EngineKind::Mem,
        target: None,
        offset: 0,
        size: Some(region),
        runtime: CHECK_RUNTIME,
        ramp: Duration::ZERO,
        time_based: true,
        rate_iops: None,
        fsync: 0,
        ..s.clone()
    }
}

/// MB/s figure with digits grouped by thousands (`9 800`).
fn grouped(mb_s: f64) -> String {
    let digits = format!("{:.0}", mb_s.max(0.0));
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(c);
    }
    out
}

/// The `exceeds-memory-bandwidth` messages for a storage result `r` measured against `mem`,
/// the mem engine's result for the same shape: one per direction whose MB/s is above
/// memory's. Pure.
pub fn exceeds_memory_bandwidth(r: &JobResult, mem: &JobResult) -> Vec<String> {
    let mut out = Vec::new();
    for (dir, got, ceiling) in [("read", &r.read, &mem.read), ("write", &r.write, &mem.write)] {
        let (Some(got), Some(ceiling)) = (got, ceiling) else { continue };
        if ceiling.mb_s > 0.0 && got.mb_s > ceiling.mb_s {
            out.push(format!(
                "{}: {} MB/s {dir} is above this machine's memory bandwidth for the same shape ({} MB/s, the mem \
                 engine at --bs {} --qd {} --threads {}): the figure cannot come from the device; a cache or a bug \
                 answered",
                r.name,
                grouped(got.mb_s),
                grouped(ceiling.mb_s),
                spec::units::format_size(r.spec.bs),
                r.spec.qd,
                r.spec.threads
            ));
        }
    }
    out
}

/// Test-only hook: `DISKMETER_TEST_MEM_CEILING_SCALE=F` multiplies the bandwidth check's
/// memory figures by F before the comparison, so a test can make the check fire (or not) on
/// any machine. It changes no reported figure.
fn test_scale() -> Option<f64> {
    std::env::var("DISKMETER_TEST_MEM_CEILING_SCALE").ok()?.parse().ok().filter(|f: &f64| f.is_finite() && *f > 0.0)
}

/// After a storage job: run [`check_job`] on the mem engine and warn
/// `exceeds-memory-bandwidth` where the job reported more MB/s than memory gave. Skipped for
/// the null and mem engines and when the check run fails or is interrupted.
/// Below this a storage figure cannot be above any machine's memory bandwidth (MB/s).
const PLAUSIBLE_MB_S: f64 = 1000.0;

pub fn bandwidth_check(doc: &mut ResultDoc, r: &JobResult, ctl: &RunControl) {
    if !r.spec.engine.uses_target() {
        return;
    }
    // No machine's memory moves less than 1 GB/s: a slower figure cannot exceed it, and the
    // half-second check is not worth its time (a job file of many small jobs).
    let fastest = [&r.read, &r.write].into_iter().flatten().map(|d| d.mb_s).fold(0.0, f64::max);
    if fastest < PLAUSIBLE_MB_S && test_scale().is_none() {
        return;
    }
    let Ok(b) = crate::io::runner::bind(&check_job(&r.spec), None) else { return };
    // The check must not be what runs the machine out of memory.
    let (need, _) = crate::io::memory::plan_footprint([(std::slice::from_ref(&b.spec), false)]);
    if crate::io::memory::available().is_some_and(|a| need.total() > a.usable()) {
        return;
    }
    let c = RunControl {
        stop: ctl.stop.clone(),
        register_buffers: false,
        null_fault: None,
        write_faults: None,
        pin_workers: ctl.pin_workers,
        poll_ns: 0,
        poll_max_depth: 0,
        keep_histograms: false,
    };
    let Ok(out) = run_group(&[b], false, &c, &mut |_| {}) else { return };
    if out.error.is_some() || out.interrupted {
        return;
    }
    if let Some(m) = out.results.first() {
        let mut m = m.clone();
        if let Some(scale) = test_scale() {
            for d in [&mut m.read, &mut m.write].into_iter().flatten() {
                d.mb_s *= scale;
            }
        }
        for msg in exceeds_memory_bandwidth(r, &m) {
            doc.warn(codes::EXCEEDS_MEMORY_BANDWIDTH, msg);
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use stats::{DirStats, LatHist};

    fn backend(region: &Arc<MemRegion>, origin: u64) -> Mem {
        let cfg =
            BackendConfig { fd: -1, files: Vec::new(), depth: 4, buffers: None, register_file: false, sqpoll: false };
        Mem::new(&cfg, region.clone(), origin, 0, 1)
    }

    fn reap_all(m: &mut Mem) -> Vec<(u32, i32)> {
        let mut v = Vec::new();
        m.reap(|s, r| v.push((s, r)));
        v
    }

    #[test]
    fn workers_copy_only_within_their_own_parts() {
        let region = Arc::new(MemRegion::new(64 << 10).unwrap());
        let cfg =
            BackendConfig { fd: -1, files: Vec::new(), depth: 4, buffers: None, register_file: false, sqpoll: false };
        let mut w0 = Mem::new(&cfg, region.clone(), 0, 0, 2);
        let mut w1 = Mem::new(&cfg, region.clone(), 0, 1, 2);
        let mut a = vec![0x11u8; 4096];
        let mut b = vec![0x22u8; 4096];
        // The same target offset lands in each worker's own half.
        w0.queue(0, Op::Write, 4096, a.as_mut_ptr(), 4096, 0).unwrap();
        w1.queue(0, Op::Write, 4096, b.as_mut_ptr(), 4096, 0).unwrap();
        assert_eq!(reap_all(&mut w0), vec![(0, 4096)]);
        assert_eq!(reap_all(&mut w1), vec![(0, 4096)]);
        assert_eq!(region.read_at(4096, 4096).unwrap(), a);
        assert_eq!(region.read_at((32 << 10) + 4096, 4096).unwrap(), b);
        // An offset past a worker's half wraps inside it, whole.
        w1.queue(1, Op::Write, 60 << 10, b.as_mut_ptr(), 4096, 0).unwrap();
        assert_eq!(reap_all(&mut w1), vec![(1, 4096)]);
        assert_eq!(region.read_at((32 << 10) + (28 << 10), 4096).unwrap(), b);
    }

    #[test]
    fn region_is_touched_and_sized() {
        let r = MemRegion::new(3 * 4096 + 100).unwrap();
        assert_eq!(r.len(), 3 * 4096 + 100);
        assert!(r.read_at(0, r.len() as usize).unwrap().iter().all(|&b| b == 0xa5));
        assert!(r.read_at(r.len() - 1, 2).is_none());
        assert!(MemRegion::new(0).is_none());
    }

    #[test]
    fn reads_copy_the_region_at_the_offset_into_the_buffer() {
        let region = Arc::new(MemRegion::new(64 << 10).unwrap());
        let pattern: Vec<u8> = (0..4096u32).map(|i| (i * 7 + 3) as u8).collect();
        assert!(region.write_at(8192, &pattern));
        // The region stands for target offsets [1 MiB, 1 MiB + 64 KiB).
        let mut m = backend(&region, 1 << 20);
        let mut buf = vec![0u8; 4096];
        m.queue(3, Op::Read, (1 << 20) + 8192, buf.as_mut_ptr(), 4096, 0).unwrap();
        m.submit_and_wait(1, None).unwrap();
        assert_eq!(reap_all(&mut m), vec![(3, 4096)]);
        assert_eq!(buf, pattern);
        // A read leaves the region as it was.
        assert_eq!(region.read_at(8192, 4096).unwrap(), pattern);
    }

    #[test]
    fn writes_copy_the_buffer_into_the_region_at_the_offset() {
        let region = Arc::new(MemRegion::new(64 << 10).unwrap());
        let mut m = backend(&region, 0);
        let mut a = vec![0x11u8; 4096];
        let mut b: Vec<u8> = (0..4096u32).map(|i| i as u8).collect();
        m.queue(0, Op::Write, 4096, a.as_mut_ptr(), 4096, 0).unwrap();
        m.queue(1, Op::Write, 60 << 10, b.as_mut_ptr(), 4096, 1).unwrap();
        assert_eq!(reap_all(&mut m), vec![(0, 4096), (1, 4096)]);
        assert_eq!(region.read_at(4096, 4096).unwrap(), a);
        assert_eq!(region.read_at(60 << 10, 4096).unwrap(), b);
        // Neighbours untouched; the buffers unchanged.
        assert!(region.read_at(0, 4096).unwrap().iter().all(|&x| x == 0xa5));
        assert!(region.read_at(8192, 4096).unwrap().iter().all(|&x| x == 0xa5));
        assert!(a.iter().all(|&x| x == 0x11));
    }

    #[test]
    fn out_of_region_copies_fail_and_fsync_is_a_no_op() {
        let region = Arc::new(MemRegion::new(16 << 10).unwrap());
        let mut m = backend(&region, 4096);
        let mut buf = vec![0u8; 4096];
        m.queue(0, Op::Read, 0, buf.as_mut_ptr(), 4096, 0).unwrap(); // below the origin
        m.queue(1, Op::Read, 4096 + (12 << 10), buf.as_mut_ptr(), 4096, 0).unwrap(); // the last block
        m.queue(2, Op::Write, 4096 + (14 << 10), buf.as_mut_ptr(), 4096, 0).unwrap(); // past the end
        m.queue(3, Op::Fsync, 0, buf.as_mut_ptr(), 0, 0).unwrap();
        assert_eq!(reap_all(&mut m), vec![(0, -libc::EINVAL), (1, 4096), (2, -libc::EINVAL), (3, 0)]);
        assert_eq!(m.region().len(), 16 << 10);
    }

    fn result(name: &str, read_mb_s: Option<f64>, write_mb_s: Option<f64>) -> JobResult {
        let spec = JobSpec { name: name.into(), bs: 1 << 20, qd: 8, ..JobSpec::default() };
        let mut r = JobResult::new(spec);
        let h = LatHist::new();
        // 1 s of 1 MiB I/Os: MB/s = bytes / 1e6.
        let dir = |mb: f64| {
            let bytes = (mb * 1e6) as u64;
            DirStats::new(bytes >> 20, bytes, 1.0, &h, 1.0)
        };
        r.read = read_mb_s.map(dir);
        r.write = write_mb_s.map(dir);
        r
    }

    #[test]
    fn a_figure_above_memory_bandwidth_is_flagged_with_both_figures() {
        let mem = result("mem", Some(7_400.0), Some(5_000.0));
        let r = result("seq", Some(9_800.0), None);
        let w = exceeds_memory_bandwidth(&r, &mem);
        assert_eq!(w.len(), 1, "{w:?}");
        assert!(w[0].starts_with("seq: 9 800 MB/s read is above this machine's memory bandwidth"), "{}", w[0]);
        assert!(w[0].contains("(7 400 MB/s"), "{}", w[0]);
        assert!(w[0].contains("the figure cannot come from the device; a cache or a bug answered"), "{}", w[0]);
        // Below, or equal: nothing. Each direction against its own ceiling.
        assert!(exceeds_memory_bandwidth(&result("a", Some(7_399.0), None), &mem).is_empty());
        assert!(exceeds_memory_bandwidth(&result("a", Some(7_400.0), None), &mem).is_empty());
        let both = exceeds_memory_bandwidth(&result("m", Some(100.0), Some(5_001.0)), &mem);
        assert_eq!(both.len(), 1);
        assert!(both[0].contains("5 001 MB/s write") && both[0].contains("(5 000 MB/s"), "{}", both[0]);
        // No ceiling measured for a direction: no verdict.
        assert!(exceeds_memory_bandwidth(&result("a", Some(1e6), None), &result("mem", None, Some(1.0))).is_empty());
    }

    #[test]
    fn the_check_job_keeps_the_shape_and_bounds_the_region() {
        let s = JobSpec {
            rw: spec::RwMode::RandRw,
            mix: 70,
            bs: 4096,
            qd: 32,
            threads: 2,
            size: Some(100 << 30),
            offset: 1 << 30,
            rate_iops: Some(1000),
            fsync: 8,
            ..JobSpec::default()
        };
        let c = check_job(&s);
        assert_eq!((c.engine, c.rw, c.mix, c.bs, c.qd, c.threads), (EngineKind::Mem, s.rw, 70, 4096, 32, 2));
        assert_eq!((c.size, c.offset, c.rate_iops, c.fsync), (Some(CHECK_REGION), 0, None, 0));
        assert!(c.time_based && c.runtime == CHECK_RUNTIME && c.ramp.is_zero());
        assert_eq!(check_job(&JobSpec { size: Some(8 << 20), ..s.clone() }).size, Some(8 << 20));
        assert_eq!(check_job(&JobSpec { size: None, ..s }).size, Some(CHECK_REGION));
    }

    #[test]
    fn grouping() {
        assert_eq!(grouped(0.4), "0");
        assert_eq!(grouped(999.0), "999");
        assert_eq!(grouped(9_800.2), "9 800");
        assert_eq!(grouped(12_345_678.0), "12 345 678");
    }
}
