//! Data verification inside a run: the table of chunk generations a job's workers keep while
//! they write and read, the checks on their reads, and the read-back of every written chunk.
//!
//! A job's region is cut into chunks of `interval` bytes ([`crate::verify`] stamps each with
//! its own header). One `u32` per chunk holds
//! * bits 0–27: the generation of the last *acknowledged* write (0: never written),
//! * bits 28–30: reads of the chunk in flight (at most 7),
//! * bit 31: a write of the chunk in flight; its generation is then already counted, so the
//!   chunk holds either that generation or the one before it.
//!
//! Each worker of a verified job owns its own stripe of the region, so a chunk is only ever
//! touched by one worker and the plain load-then-store updates are exact. A worker never
//! writes a chunk that is being read or written, nor reads one being written: the draw is
//! repeated instead. The entries are atomics so that the state saver and the read-back can
//! look at them from other threads without a lock.

use crate::verify::{self, BlockStamp, CheckKind, Context, Expect, Finding, FindingKind};
use platform::target::Raw;
use stats::verify::VerifyFailure;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

const GEN_MASK: u32 = (1 << 28) - 1;
const READ_ONE: u32 = 1 << 28;
const READS_MASK: u32 = 0b111 << 28;
const WRITING: u32 = 1 << 31;
/// Largest generation a chunk can reach; a job that writes one chunk more often than this
/// stops counting (and checking) it exactly.
pub const MAX_GENERATION: u32 = GEN_MASK;

/// Where a failure was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FoundBy {
    /// A read of the job itself, as it completed.
    Read,
    /// The read-back of every written chunk after the writes (or a verify-only run).
    After,
}

impl FoundBy {
    fn name(self) -> &'static str {
        match self {
            FoundBy::Read => "read",
            FoundBy::After => "after",
        }
    }
}

/// What a verified job is, and what its workers found.
pub struct VerifyJob {
    /// Job index (in every header) and name (in the failures).
    pub job: u32,
    pub name: String,
    pub kind: CheckKind,
    pub pattern: Vec<u8>,
    pub interval: u64,
    pub run_id: u64,
    pub run_seed: u64,
    /// Byte offset of chunk 0: the job's region start.
    pub start: u64,
    gens: Box<[AtomicU32]>,
    /// The expectations came from a state file: a chunk newer than it is not a failure.
    pub loaded: bool,
    /// Nothing is known of the chunks (verify-only without a state file): every chunk is read
    /// back and passes when it holds a valid chunk of its own offset.
    pub any_generation: bool,
    /// Stop at the first failure.
    pub fatal: bool,
    /// `--verify-backlog N`: each worker reads back its last N acknowledged writes before
    /// writing on.
    pub backlog: Option<u64>,
    pub checked_inline: AtomicU64,
    pub chunks_written: AtomicU64,
    pub newer: AtomicU64,
    failed: AtomicBool,
    findings: Mutex<Vec<VerifyFailure>>,
    failures_total: AtomicU64,
}

impl std::fmt::Debug for VerifyJob {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifyJob")
            .field("job", &self.job)
            .field("kind", &self.kind)
            .field("interval", &self.interval)
            .field("start", &self.start)
            .field("chunks", &self.gens.len())
            .finish_non_exhaustive()
    }
}

/// Failures kept per job (the rest are counted).
const KEEP: usize = stats::verify::MAX_LISTED_FAILURES;

impl VerifyJob {
    /// A job about to write `len` bytes from `start`, every chunk unwritten.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        job: u32,
        name: &str,
        kind: CheckKind,
        pattern: Vec<u8>,
        interval: u64,
        run_id: u64,
        run_seed: u64,
        start: u64,
        len: u64,
    ) -> Self {
        let chunks = (len / interval.max(1)) as usize;
        Self {
            job,
            name: name.to_string(),
            kind,
            pattern,
            interval,
            run_id,
            run_seed,
            start,
            gens: (0..chunks).map(|_| AtomicU32::new(0)).collect(),
            loaded: false,
            any_generation: false,
            fatal: false,
            backlog: None,
            checked_inline: AtomicU64::new(0),
            chunks_written: AtomicU64::new(0),
            newer: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            findings: Mutex::new(Vec::new()),
            failures_total: AtomicU64::new(0),
        }
    }

    /// Set every chunk's generation from a saved table (a state file); bit 31 keeps meaning
    /// "a write was in flight".
    pub fn load_generations(&mut self, saved: &[u32]) {
        for (e, &g) in self.gens.iter().zip(saved) {
            e.store(g & (GEN_MASK | WRITING), Ordering::Relaxed);
        }
        self.loaded = true;
    }

    /// The table as saved in a state file: generations, with bit 31 on chunks whose write was
    /// in flight (reads in flight are dropped).
    pub fn snapshot(&self) -> Vec<u32> {
        self.gens.iter().map(|e| e.load(Ordering::Relaxed) & !READS_MASK).collect()
    }

    pub fn chunk_count(&self) -> usize {
        self.gens.len()
    }

    fn context(&self) -> Context<'_> {
        Context { run_seed: self.run_seed, kind: self.kind, pattern: &self.pattern }
    }

    /// Chunk indices of `len` bytes at `offset`; `None` when they are not whole chunks of the
    /// region (never for the workers' own I/O).
    #[inline]
    fn chunks(&self, offset: u64, len: u64) -> Option<std::ops::Range<usize>> {
        let rel = offset.checked_sub(self.start)?;
        if !rel.is_multiple_of(self.interval) || !len.is_multiple_of(self.interval) {
            return None;
        }
        let a = (rel / self.interval) as usize;
        let b = a + (len / self.interval) as usize;
        (b <= self.gens.len()).then_some(a..b)
    }

    /// Claim `len` bytes at `offset` for a write and stamp `buf` with the next generation of
    /// each chunk. False when a chunk is being read or written (draw another offset).
    #[inline]
    pub fn begin_write(&self, buf: &mut [u8], offset: u64, worker: u32) -> bool {
        let Some(r) = self.chunks(offset, buf.len() as u64) else { return false };
        if self.gens[r.clone()].iter().any(|e| e.load(Ordering::Relaxed) & (WRITING | READS_MASK) != 0) {
            return false;
        }
        for e in &self.gens[r.clone()] {
            let g = (e.load(Ordering::Relaxed) & GEN_MASK).saturating_add(1).min(MAX_GENERATION);
            e.store(g | WRITING, Ordering::Relaxed);
        }
        let s = BlockStamp { run_id: self.run_id, job: self.job, worker, timestamp_ns: unix_ns() };
        let first = r.start;
        let gens = &self.gens;
        let interval = self.interval;
        let start = self.start;
        let stamped = verify::stamp_block(buf, offset, interval as usize, &s, &self.context(), |chunk_offset| {
            let i = ((chunk_offset - start) / interval) as usize;
            gens.get(i).map_or(0, |e| e.load(Ordering::Relaxed) & GEN_MASK)
        });
        debug_assert!(stamped.is_ok(), "chunk layout checked by the job's validation (first chunk {first})");
        true
    }

    /// A write ended: acknowledged (`ok`) chunks hold their new generation; a failed write
    /// leaves them uncertain.
    #[inline]
    pub fn end_write(&self, offset: u64, len: u64, ok: bool) {
        let Some(r) = self.chunks(offset, len) else { return };
        if ok {
            for e in &self.gens[r.clone()] {
                e.store(e.load(Ordering::Relaxed) & !WRITING, Ordering::Relaxed);
            }
            self.chunks_written.fetch_add(r.len() as u64, Ordering::Relaxed);
        }
    }

    /// Claim `len` bytes at `offset` for a read. False when a chunk is being written, or is
    /// being read seven times already.
    #[inline]
    pub fn begin_read(&self, offset: u64, len: u64) -> bool {
        let Some(r) = self.chunks(offset, len) else { return true };
        if self.gens[r.clone()].iter().any(|e| {
            let v = e.load(Ordering::Relaxed);
            v & WRITING != 0 || v & READS_MASK == READS_MASK
        }) {
            return false;
        }
        for e in &self.gens[r] {
            e.store(e.load(Ordering::Relaxed) + READ_ONE, Ordering::Relaxed);
        }
        true
    }

    /// A read ended: release its chunks and, when it succeeded, check each written one.
    /// Returns true when a chunk failed.
    #[inline]
    pub fn end_read(&self, buf: &[u8], offset: u64, ok: bool) -> bool {
        let Some(r) = self.chunks(offset, buf.len() as u64) else { return false };
        for e in &self.gens[r.clone()] {
            e.store(e.load(Ordering::Relaxed) - READ_ONE, Ordering::Relaxed);
        }
        if !ok {
            return false;
        }
        let mut bad = false;
        let mut checked = 0u64;
        for (k, chunk) in buf.chunks_exact(self.interval as usize).enumerate() {
            let i = r.start + k;
            let g = self.gens[i].load(Ordering::Relaxed) & GEN_MASK;
            if g == 0 {
                continue;
            }
            checked += 1;
            bad |= !self.check_one(chunk, i, FoundBy::Read);
        }
        self.checked_inline.fetch_add(checked, Ordering::Relaxed);
        bad
    }

    /// Check chunk `i` as read into `chunk`; diagnose and record it when it fails. True when
    /// it passes (or is newer than a loaded state).
    fn check_one(&self, chunk: &[u8], i: usize, by: FoundBy) -> bool {
        let entry = self.gens[i].load(Ordering::Relaxed);
        let g = entry & GEN_MASK;
        let offset = self.start + i as u64 * self.interval;
        let ctx = self.context();
        let mut e = Expect { offset, generation: g, job: self.job, run_id: self.run_id, len: self.interval as u32 };
        if self.any_generation {
            return self.check_any(chunk, &e, by);
        }
        if verify::check_chunk(chunk, &e, &ctx) {
            return true;
        }
        // A write in flight when the table was saved (or when it failed) may or may not have
        // landed: the generation before it is as good.
        if entry & WRITING != 0 && g > 1 {
            let before = Expect { generation: g - 1, ..e };
            if verify::check_chunk(chunk, &before, &ctx) {
                return true;
            }
        }
        if entry & WRITING != 0 && g == 1 {
            e.generation = 1;
        }
        let finding = verify::diagnose(chunk, &e, &ctx);
        if finding.kind == FindingKind::Newer && (self.loaded || entry & WRITING != 0) {
            self.newer.fetch_add(1, Ordering::Relaxed);
            return true;
        }
        if finding.kind == FindingKind::Ok {
            return true;
        }
        self.record(&finding, &e, by);
        false
    }

    /// Verify-only without a state: the chunk must be a valid chunk of this offset, whatever
    /// its run and generation.
    fn check_any(&self, chunk: &[u8], e: &Expect, by: FoundBy) -> bool {
        let ctx = self.context();
        if let Ok(h) = verify::decode_header(chunk) {
            let own = Expect {
                offset: e.offset,
                generation: h.fields.generation,
                job: h.fields.job,
                run_id: h.fields.run_id,
                len: e.len,
            };
            let ctx = Context { run_seed: self.run_seed, ..ctx };
            if h.fields.offset == e.offset && verify::chunk::payload_ok(chunk, &h, &ctx) {
                return true;
            }
            let finding = verify::diagnose(chunk, &own, &ctx);
            if !finding.is_failure() {
                return true;
            }
            self.record(&finding, &own, by);
            return false;
        }
        // No header: diagnosed as a chunk that should hold something (zeroed, unwritten, …).
        let e = Expect { generation: 1, ..*e };
        let finding = verify::diagnose(chunk, &e, &ctx);
        self.record(&finding, &e, by);
        false
    }

    #[cold]
    fn record(&self, f: &Finding, e: &Expect, by: FoundBy) {
        if !f.is_failure() {
            return;
        }
        self.failed.store(true, Ordering::Relaxed);
        self.failures_total.fetch_add(1, Ordering::Relaxed);
        let Ok(mut list) = self.findings.lock() else { return };
        if list.len() < KEEP {
            list.push(VerifyFailure {
                job: self.name.clone(),
                offset: e.offset,
                len: u64::from(e.len),
                kind: f.kind.name().to_string(),
                found_by: by.name().to_string(),
                expected_generation: e.generation,
                found_generation: f.found_generation,
                found_offset: f.found_offset,
                detail: f.summary(),
                first_difference: f.first_bad_byte,
                hexdump: f.hexdump.clone(),
            });
        }
    }

    /// True once any chunk failed.
    pub fn failed(&self) -> bool {
        self.failed.load(Ordering::Relaxed)
    }

    /// The failures recorded so far (at most [`stats::verify::MAX_LISTED_FAILURES`]) and how
    /// many there were in all.
    pub fn failures(&self) -> (Vec<VerifyFailure>, u64) {
        let list = self.findings.lock().map(|l| l.clone()).unwrap_or_default();
        (list, self.failures_total.load(Ordering::Relaxed))
    }

    /// Read back every written chunk (every chunk when nothing is known of them) with
    /// `pread` through `fd` in pieces of up to 1 MiB, checking each. Stops early when `stop`
    /// is raised, on a read error, or at the first failure of a fatal job.
    pub fn read_back(&self, fd: Raw, stop: &AtomicBool) -> ReadBack {
        let t0 = Instant::now();
        let per_read = ((1u64 << 20) / self.interval).max(1) as usize;
        let mut out = ReadBack { complete: true, ..ReadBack::default() };
        let Some(mut pool) = crate::io::buffers::BufferPool::new(1, per_read * self.interval as usize, 4096) else {
            out.complete = false;
            out.error = Some("cannot allocate the read-back buffer".into());
            return out;
        };
        let wanted = |i: usize| self.any_generation || self.gens[i].load(Ordering::Relaxed) & GEN_MASK != 0;
        let mut i = 0usize;
        while i < self.gens.len() {
            if stop.load(Ordering::Relaxed) || (self.fatal && self.failed()) {
                out.complete = false;
                break;
            }
            if !wanted(i) {
                i += 1;
                continue;
            }
            let mut n = 1;
            while n < per_read && i + n < self.gens.len() && wanted(i + n) {
                n += 1;
            }
            let len = n * self.interval as usize;
            let offset = self.start + i as u64 * self.interval;
            let buf = &mut pool.slot_mut(0)[..len];
            if let Err(e) = pread_all(fd, buf, offset) {
                out.complete = false;
                out.error = Some(format!("reading back {len} bytes at offset {offset}: {e}"));
                break;
            }
            let mut checked = 0;
            for (k, chunk) in buf.chunks_exact(self.interval as usize).enumerate() {
                checked += 1;
                if !self.check_one(chunk, i + k, FoundBy::After) && self.fatal {
                    break;
                }
            }
            out.checked += checked as u64;
            if checked < n {
                out.complete = false;
                break;
            }
            out.bytes += len as u64;
            i += n;
        }
        out.seconds = t0.elapsed().as_secs_f64();
        out
    }
}

/// What a read-back did.
#[derive(Debug, Clone, Default)]
pub struct ReadBack {
    pub checked: u64,
    pub bytes: u64,
    pub seconds: f64,
    pub complete: bool,
    /// A read that failed (the read-back stops there).
    pub error: Option<String>,
}

fn pread_all(fd: Raw, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let mut done = 0usize;
    while done < buf.len() {
        let len = u32::try_from(buf.len() - done).unwrap_or(u32::MAX);
        // SAFETY: the range is inside `buf`, borrowed for the call.
        let r = unsafe { platform::rawio::read_at(fd, buf[done..].as_mut_ptr(), len, offset + done as u64) };
        match r {
            Ok(0) => return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "the target ended")),
            Ok(n) => done += n as usize,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Nanoseconds since the Unix epoch (CLOCK_REALTIME through the vDSO: no system call).
#[inline]
fn unix_ns() -> u64 {
    platform::clock::unix_ns()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const K: u64 = 4096;

    fn job(chunks: u64) -> VerifyJob {
        VerifyJob::new(0, "j", CheckKind::Crc32c, Vec::new(), K, 7, 11, 0, chunks * K)
    }

    #[test]
    fn a_chunk_in_use_cannot_be_claimed_again() {
        let v = job(8);
        let mut buf = vec![0u8; 2 * K as usize];
        assert!(v.begin_write(&mut buf, 0, 0));
        assert!(!v.begin_write(&mut buf, K, 0), "chunk 1 is being written");
        assert!(!v.begin_read(K, K), "nor read while it is written");
        assert!(v.begin_read(2 * K, K), "chunk 2 is free");
        assert!(!v.begin_write(&mut buf, 2 * K, 0), "chunk 2 is being read");
        v.end_write(0, 2 * K, true);
        assert_eq!(v.snapshot()[..3], [1, 1, 0], "generation 1 acknowledged, the read left out of the snapshot");
        assert_eq!(v.chunks_written.load(Ordering::Relaxed), 2);
        // Seven reads of one chunk at most.
        for _ in 0..6 {
            assert!(v.begin_read(2 * K, K));
        }
        assert!(!v.begin_read(2 * K, K));
        // Misaligned or outside: never claimed for a write.
        assert!(!v.begin_write(&mut buf[..K as usize], 100, 0));
        assert!(!v.begin_write(&mut buf[..K as usize], 8 * K, 0));
    }

    #[test]
    fn a_failed_write_leaves_its_chunks_uncertain_and_either_generation_passes() {
        let v = job(2);
        let mut first = vec![0u8; K as usize];
        assert!(v.begin_write(&mut first, 0, 0));
        v.end_write(0, K, true);
        let mut second = vec![0u8; K as usize];
        assert!(v.begin_write(&mut second, 0, 0));
        v.end_write(0, K, false);
        assert_eq!(v.snapshot()[0], 2 | WRITING);
        // The device holds the first generation, or the second: both pass, nothing recorded.
        assert!(v.check_one(&first, 0, FoundBy::After));
        assert!(v.check_one(&second, 0, FoundBy::After));
        assert!(!v.failed());
    }

    #[test]
    fn reads_check_written_chunks_and_record_what_fails() {
        let v = job(4);
        let mut buf = vec![0u8; 2 * K as usize];
        assert!(v.begin_write(&mut buf, K, 3));
        v.end_write(K, 2 * K, true);
        assert!(v.begin_read(K, 2 * K));
        assert!(!v.end_read(&buf, K, true), "what was written reads back");
        assert_eq!(v.checked_inline.load(Ordering::Relaxed), 2);
        buf[K as usize + 500] ^= 0x10;
        assert!(v.begin_read(K, 2 * K));
        assert!(v.end_read(&buf, K, true), "a flipped bit in the second chunk");
        let (list, total) = v.failures();
        assert_eq!(total, 1);
        assert_eq!((list[0].kind.as_str(), list[0].offset, list[0].found_by.as_str()), ("corrupt", 2 * K, "read"));
        // Unwritten chunks are not checked by reads.
        assert!(v.begin_read(3 * K, K));
        assert!(!v.end_read(&vec![0u8; K as usize], 3 * K, true));
    }

    #[test]
    fn the_read_back_reads_only_written_chunks_and_stops_when_fatal() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let mut img = vec![0u8; 64 * K as usize];
        let mut v = job(64);
        v.fatal = true;
        for c in [3u64, 4, 40] {
            let at = (c * K) as usize;
            assert!(v.begin_write(&mut img[at..at + K as usize], c * K, 0));
            v.end_write(c * K, K, true);
        }
        std::fs::write(&path, &img).unwrap();
        let f = std::fs::File::open(&path).unwrap();
        let stop = AtomicBool::new(false);
        let rb = v.read_back(platform::target::raw(&f), &stop);
        assert!(rb.complete && rb.error.is_none());
        assert_eq!((rb.checked, rb.bytes), (3, 3 * K));
        // Zero chunk 4: the fatal read-back stops there.
        img[(4 * K) as usize..(5 * K) as usize].fill(0);
        std::fs::write(&path, &img).unwrap();
        let rb = v.read_back(platform::target::raw(&f), &stop);
        assert!(!rb.complete);
        assert_eq!(rb.checked, 2);
        assert_eq!(v.failures().0[0].kind, "zeroed");
    }

    #[test]
    fn a_loaded_state_counts_newer_chunks_apart() {
        let mut v = job(2);
        let mut buf = vec![0u8; K as usize];
        // Written twice; the state saved after the first write.
        assert!(v.begin_write(&mut buf, 0, 0));
        v.end_write(0, K, true);
        let saved = v.snapshot();
        assert!(v.begin_write(&mut buf, 0, 0));
        v.end_write(0, K, true);
        v.load_generations(&saved);
        assert!(v.loaded);
        assert!(v.check_one(&buf, 0, FoundBy::After), "generation 2 against a state of 1: newer");
        assert_eq!(v.newer.load(Ordering::Relaxed), 1);
        assert!(!v.failed());
    }
}
