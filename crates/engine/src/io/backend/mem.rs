//! The `mem` engine: its backend [`Mem`] and the [`MemRegion`] standing in for the target.
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
//! physical ceiling of any cached storage figure: after a storage job, the app's honesty check
//! runs a short mem job of the same shape and warns `exceeds-memory-bandwidth` when the job
//! reported more MB/s than memory gave.

use super::{code_for, Backend, BackendConfig, Completed, Completion, Op};
use platform::IoErrorClass;
use std::io;
use std::sync::Arc;
use std::time::Duration;

/// Region of a mem job without `--size` (the size of a new test file).
pub const DEFAULT_REGION: u64 = 1 << 30;
/// Memory standing in for a target: an anonymous private mapping, written in full on
/// creation. Shared by the workers of one job.
pub struct MemRegion {
    map: platform::mem::AnonMap,
    len: usize,
}

impl MemRegion {
    /// Map `len` bytes and write every page, so the measurement sees no page faults.
    /// `None` when the mapping fails (no memory, or `len` is 0 or too large).
    pub fn new(len: u64) -> Option<Self> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        let map = platform::mem::AnonMap::new(len)?;
        let ptr = map.ptr();
        // SAFETY: the mapping is `len` writable bytes that nothing else references yet.
        // Non-zero bytes: every page gets its own frame (not the shared zero page).
        unsafe { std::ptr::write_bytes(ptr, 0xa5, len) };
        Some(Self { map, len })
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
        unsafe { std::ptr::copy_nonoverlapping(self.map.ptr().add(from), v.as_mut_ptr(), n) };
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
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), self.map.ptr().add(from), data.len()) };
        true
    }
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
        let base = region.map.ptr();
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

impl Mem {
    /// One copy of `len` bytes between the region (`base`, `region_len` bytes, standing for
    /// target offsets from `origin`) and `buf`: `Done(len)`, or an invalid request (EINVAL)
    /// outside the region.
    #[inline]
    fn copy(&self, op: Op, offset: u64, buf: *mut u8, len: u32) -> Completion {
        let (base, region_len, origin, part) = (self.base, self.len, self.origin, (self.part_start, self.part_len));
        let rel = offset.wrapping_sub(origin);
        if offset < origin || rel > region_len || region_len - rel < u64::from(len) {
            return Completion::Failed(code_for(IoErrorClass::Invalid));
        }
        // Into this worker's own part: modulo its length, kept whole inside it.
        let (start, plen) = part;
        if plen < u64::from(len) {
            return Completion::Failed(code_for(IoErrorClass::Invalid));
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
        Completion::Done(len)
    }
}

impl Backend for Mem {
    #[inline]
    fn queue(&mut self, slot: u32, op: Op, offset: u64, buf: *mut u8, len: u32, _: u16) -> io::Result<()> {
        let res = match op {
            Op::Fsync | Op::Discard | Op::PunchHole => Completion::Done(0),
            Op::Read | Op::Write => self.copy(op, offset, buf, len),
        };
        self.done.push(slot, res);
        Ok(())
    }

    fn submit_and_wait(&mut self, _: u32, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn reap<F: FnMut(u32, Completion)>(&mut self, f: F) {
        self.done.reap(f)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use Completion::Done;

    /// A worker's configuration without a target, four deep.
    fn config() -> BackendConfig {
        BackendConfig {
            fd: platform::target::NO_RAW,
            files: Vec::new(),
            depth: 4,
            buffers: None,
            register_file: false,
            sqpoll: false,
            flags: 0,
        }
    }

    fn backend(region: &Arc<MemRegion>, origin: u64) -> Mem {
        Mem::new(&config(), region.clone(), origin, 0, 1)
    }

    fn reap_all(m: &mut Mem) -> Vec<(u32, Completion)> {
        let mut v = Vec::new();
        m.reap(|s, r| v.push((s, r)));
        v
    }

    #[test]
    fn workers_copy_only_within_their_own_parts() {
        let region = Arc::new(MemRegion::new(64 << 10).unwrap());
        let cfg = config();
        let mut w0 = Mem::new(&cfg, region.clone(), 0, 0, 2);
        let mut w1 = Mem::new(&cfg, region.clone(), 0, 1, 2);
        let mut a = vec![0x11u8; 4096];
        let mut b = vec![0x22u8; 4096];
        // The same target offset lands in each worker's own half.
        w0.queue(0, Op::Write, 4096, a.as_mut_ptr(), 4096, 0).unwrap();
        w1.queue(0, Op::Write, 4096, b.as_mut_ptr(), 4096, 0).unwrap();
        assert_eq!(reap_all(&mut w0), vec![(0, Done(4096))]);
        assert_eq!(reap_all(&mut w1), vec![(0, Done(4096))]);
        assert_eq!(region.read_at(4096, 4096).unwrap(), a);
        assert_eq!(region.read_at((32 << 10) + 4096, 4096).unwrap(), b);
        // An offset past a worker's half wraps inside it, whole.
        w1.queue(1, Op::Write, 60 << 10, b.as_mut_ptr(), 4096, 0).unwrap();
        assert_eq!(reap_all(&mut w1), vec![(1, Done(4096))]);
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
        assert_eq!(reap_all(&mut m), vec![(3, Done(4096))]);
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
        assert_eq!(reap_all(&mut m), vec![(0, Done(4096)), (1, Done(4096))]);
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
        let invalid = Completion::Failed(crate::io::backend::code_for(platform::IoErrorClass::Invalid));
        assert_eq!(reap_all(&mut m), vec![(0, invalid), (1, Done(4096)), (2, invalid), (3, Done(0))]);
        assert_eq!(m.region().len(), 16 << 10);
    }
}
