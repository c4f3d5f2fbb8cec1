//! Memory a plan needs, what the machine can give, and the refusal when it cannot.
//!
//! [`group_footprint`] is a pure function of the jobs that run at the same time, built from
//! what the runner and the kernel allocate for them (see each constant); the session entry
//! points compare the largest group with [`available`] before any target is created, so an
//! impossible plan is a usage error (exit 2) instead of an OOM kill half-way through.

pub use crate::error::Knobs;
use crate::error::{Invalid, MemoryCause, MemoryShort, Result, Shrink};
#[cfg(target_os = "linux")]
use crate::io::backend::uring::uring_entries;
use spec::{EngineKind, JobSpec, RwMode};

const PAGE: u64 = 4096;
/// The process itself: binary, libraries, main thread, result document, output text.
pub const BASE_BYTES: u64 = 16 << 20;
/// One worker thread: the touched part of its stack and its TLS (about 16 KiB resident,
/// measured), plus the kernel's 16 KiB stack, which is memory though not the process's RSS.
pub const THREAD_BYTES: u64 = 32 << 10;
/// Resident part of one latency histogram (its address space is
/// [`stats::hist::LAT_HIST_BYTES`], 264 KiB, but only pages that hold values are written):
/// latencies spread over two decades (e.g. 50 µs to 5 ms) touch eight 8 KiB buckets.
pub const HIST_BYTES: u64 = 64 << 10;
/// The same for the null engine, whose latencies (tens of ns to a few µs) fill one or two
/// pages.
pub const HIST_BYTES_NULL: u64 = 8 << 10;
/// Kernel memory per io_uring request in flight (struct io_kiocb, with slack).
#[cfg_attr(not(target_os = "linux"), allow(dead_code))]
pub const URING_REQ_BYTES: u64 = 256;
/// Worker bookkeeping per I/O slot: the slot (24 bytes), the free list (4), a synchronous
/// engine's completion list (8) and the registered-buffer iovec (16).
pub const SLOT_BYTES: u64 = 52;
/// Per job: its spec, result, per-second series and share of the result document, besides
/// `SERIES_POINT_BYTES` per second of ramp + runtime.
pub const JOB_BYTES: u64 = 8 << 10;
const SERIES_POINT_BYTES: u64 = 128;
/// Histograms per worker and direction: the one being filled and the one travelling to the
/// collector and back. Per report slot and direction: the run's total and the second being
/// merged.
const HISTS_PER_WORKER_DIR: u64 = 2;
const HISTS_PER_SLOT_DIR: u64 = 2;

fn page_round(n: u64) -> u64 {
    n.div_ceil(PAGE).saturating_mul(PAGE)
}

/// Memory of the jobs that run at the same time, by what it is for (bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Footprint {
    /// I/O buffers: depth (× 2 for mixed jobs, which keep separate write buffers) × block
    /// size per worker, page-rounded.
    pub buffers: u64,
    /// io_uring rings (SQ index array, SQEs, CQEs) and the kernel's request structs.
    pub rings: u64,
    /// Latency histograms of workers and report slots.
    pub histograms: u64,
    /// The mem engine's regions (each mem job's `--size`, page-rounded), which stand in for
    /// the target.
    pub regions: u64,
    /// Worker threads and per-slot bookkeeping.
    pub workers_mem: u64,
    /// Per-job state, results and series.
    pub jobs_mem: u64,
    /// Worker threads in all.
    pub workers: u64,
    /// The job with the largest buffers: (workers, per-worker depth, buffer bytes per I/O
    /// slot, buffers in all), for the refusal.
    pub largest: Option<(u64, u64, u64, u64)>,
}

impl Footprint {
    /// Everything, plus the process's own [`BASE_BYTES`].
    pub fn total(&self) -> u64 {
        BASE_BYTES
            .saturating_add(self.buffers)
            .saturating_add(self.rings)
            .saturating_add(self.histograms)
            .saturating_add(self.regions)
            .saturating_add(self.workers_mem)
            .saturating_add(self.jobs_mem)
    }

    /// What dominates (`jobs`: how many run at once), and so what would shrink it.
    fn shrink(&self, jobs: usize) -> Shrink {
        let per_thread = self.histograms.saturating_add(self.workers_mem).saturating_add(self.jobs_mem);
        if self.regions >= self.buffers && self.regions >= self.rings && self.regions >= per_thread {
            Shrink::Region
        } else if self.buffers >= self.rings && self.buffers >= per_thread {
            Shrink::Buffers
        } else if self.rings >= per_thread {
            Shrink::Rings
        } else if jobs > 1 {
            Shrink::Jobs
        } else {
            Shrink::Threads
        }
    }
}

fn is_mixed(s: &JobSpec) -> bool {
    matches!(s.rw, RwMode::RandRw | RwMode::ReadWrite) && s.mix > 0 && s.mix < 100
}

/// Memory of `jobs` running concurrently (one group; `group_reporting` merges their report
/// slots into one). Pure: the same jobs always give the same figure.
pub fn group_footprint(jobs: &[JobSpec], group_reporting: bool) -> Footprint {
    let mut f = Footprint::default();
    let mut largest = 0u64;
    let mut slot_dirs = (false, false);
    let mut longest = 0u64;
    for s in jobs {
        // The runner's layout: psync serves depth with threads of depth 1.
        let (workers, depth) = match s.engine {
            EngineKind::Psync => (u64::from(s.threads) * u64::from(s.qd), 1u64),
            _ => (u64::from(s.threads), u64::from(s.qd)),
        };
        let slots = depth * if is_mixed(s) { 2 } else { 1 };
        let pool = crate::io::buffers::BufferPool::footprint(slots as usize, s.bs as usize) as u64;
        let buffers = workers.saturating_mul(pool);
        f.buffers = f.buffers.saturating_add(buffers);
        if buffers > largest || f.largest.is_none() {
            largest = buffers;
            f.largest = Some((workers, depth, s.bs * if is_mixed(s) { 2 } else { 1 }, buffers));
        }
        if s.engine == EngineKind::Mem {
            let region = page_round(s.size.unwrap_or(crate::io::backend::mem::DEFAULT_REGION));
            f.regions = f.regions.saturating_add(region);
        }
        #[cfg(target_os = "linux")]
        if s.engine == EngineKind::IoUring {
            let (sq, cq) = uring_entries(depth as u32);
            let (sq, cq) = (u64::from(sq), u64::from(cq));
            let ring = page_round(256 + sq * 4) + page_round(256 + cq * 16) + page_round(sq * 64);
            f.rings = f.rings.saturating_add(workers.saturating_mul(ring + depth * URING_REQ_BYTES));
        }
        let rp = s.rw.read_pct(s.mix);
        let dirs = u64::from(rp > 0) + u64::from(rp < 100);
        let hist = if s.engine == EngineKind::Null { HIST_BYTES_NULL } else { HIST_BYTES };
        f.histograms = f.histograms.saturating_add(workers.saturating_mul(HISTS_PER_WORKER_DIR * dirs * hist));
        if !group_reporting {
            f.histograms = f.histograms.saturating_add(HISTS_PER_SLOT_DIR * dirs * hist);
        }
        slot_dirs.0 |= rp > 0;
        slot_dirs.1 |= rp < 100;
        f.workers_mem = f.workers_mem.saturating_add(workers.saturating_mul(THREAD_BYTES + (depth + 1) * SLOT_BYTES));
        let secs = (s.ramp + s.runtime).as_secs().max(1);
        longest = longest.max(secs);
        f.jobs_mem = f.jobs_mem.saturating_add(JOB_BYTES + secs * SERIES_POINT_BYTES);
        f.workers = f.workers.saturating_add(workers);
    }
    if group_reporting && !jobs.is_empty() {
        let dirs = u64::from(slot_dirs.0) + u64::from(slot_dirs.1);
        let hist = if jobs.iter().all(|s| s.engine == EngineKind::Null) { HIST_BYTES_NULL } else { HIST_BYTES };
        f.histograms = f.histograms.saturating_add(HISTS_PER_SLOT_DIR * dirs * hist);
    }
    f
}

/// The largest footprint of groups that run one after another.
pub fn plan_footprint<'a>(groups: impl IntoIterator<Item = (&'a [JobSpec], bool)>) -> (Footprint, usize) {
    groups
        .into_iter()
        .map(|(jobs, gr)| (group_footprint(jobs, gr), jobs.len()))
        .max_by_key(|(f, _)| f.total())
        .unwrap_or_default()
}

/// Memory the machine can give this process, in bytes: MemAvailable, lowered to what the
/// process's memory cgroup (v2 `memory.max`, v1 `memory.limit_in_bytes`, and those of its
/// ancestors) still allows. `None` when /proc/meminfo cannot be read.
pub fn available() -> Option<Available> {
    let mem = platform::mem::available_bytes()?;
    Some(Available { meminfo: mem, cgroup: platform::mem::cgroup_room() })
}

/// What [`available`] found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Available {
    /// MemAvailable.
    pub meminfo: u64,
    /// Room left under the tightest memory cgroup limit, if one applies.
    pub cgroup: Option<u64>,
}

impl Available {
    pub fn bytes(&self) -> u64 {
        self.cgroup.map_or(self.meminfo, |c| c.min(self.meminfo))
    }
    /// What a run may plan to use: the rest is headroom for the page cache, the kernel and
    /// everything else running (a tenth, at least 128 MiB).
    pub fn usable(&self) -> u64 {
        let b = self.bytes();
        b.saturating_sub((b / 10).max(128 << 20))
    }
    /// The memory cgroup's limit is what leaves less than MemAvailable.
    fn cgroup_bound(&self) -> bool {
        self.cgroup.is_some_and(|c| c < self.meminfo)
    }
}

/// The refusal, if `need` does not fit in what is usable of `avail`. Pure (see [`check`]).
pub fn verdict(need: &Footprint, jobs: usize, knobs: &Knobs, avail: &Available) -> Result<()> {
    let total = need.total();
    if total <= avail.usable() {
        return Ok(());
    }
    let cause = match need.largest {
        _ if need.regions >= total / 2 => MemoryCause::Region(need.regions),
        Some((workers, depth, per_io, bytes)) if bytes >= total / 2 => {
            MemoryCause::Buffers { workers, depth, per_io, bytes }
        }
        _ => MemoryCause::Threads {
            workers: need.workers,
            buffers: need.buffers,
            rings: need.rings,
            histograms: need.histograms,
            rest: need.workers_mem.saturating_add(need.jobs_mem).saturating_add(BASE_BYTES),
        },
    };
    Err(Invalid::Memory(MemoryShort {
        need: total,
        available: avail.bytes(),
        cgroup: avail.cgroup_bound(),
        usable: avail.usable(),
        cause,
        shrink: need.shrink(jobs),
        knobs: *knobs,
    })
    .into())
}

/// Refuse (a usage error, before anything is created) a plan whose largest concurrent
/// group does not fit in memory. Skipped when availability cannot be read.
pub fn check(need: &Footprint, jobs: usize, knobs: &Knobs) -> Result<()> {
    match available() {
        Some(a) => verdict(need, jobs, knobs, &a),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::error::EngineError;
    use std::time::Duration;

    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    fn job(engine: EngineKind, rw: RwMode, bs: u64, qd: u32, threads: u32) -> JobSpec {
        JobSpec { engine, rw, bs, qd, threads, runtime: Duration::from_secs(5), ..JobSpec::default() }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn io_uring_qd32_exact() {
        let f = group_footprint(&[job(EngineKind::IoUring, RwMode::RandRead, 4096, 32, 1)], false);
        assert_eq!(f.buffers, 32 * 4096);
        // SQ 64: index array 256+256 B -> 1 page; CQ 128 x 16 + 256 -> 1 page; SQEs 64 x 64 -> 1 page;
        // 32 requests x 256 B.
        assert_eq!(f.rings, 3 * 4096 + 32 * 256);
        // One direction: 2 worker histograms + 2 slot histograms of 64 KiB.
        assert_eq!(f.histograms, 4 * 64 * KIB);
        // Thread + 33 slots x 52 B.
        assert_eq!(f.workers_mem, 32 * KIB + 33 * 52);
        assert_eq!(f.jobs_mem, 8 * KIB + 5 * 128);
        assert_eq!(f.workers, 1);
        assert_eq!(f.total(), BASE_BYTES + 131_072 + 20_480 + 262_144 + 34_484 + 8_832);
    }

    #[test]
    fn the_oom_killed_command_is_counted() {
        // diskmeter run --engine null --rw write --threads 1024 --qd 65536 (4 KiB blocks): the
        // buffers alone are 256 GiB.
        let f = group_footprint(&[job(EngineKind::Null, RwMode::Write, 4096, 65_536, 1024)], false);
        assert_eq!(f.buffers, 256 * GIB);
        assert_eq!(f.rings, 0);
        assert_eq!(f.histograms, 1024 * 2 * 8 * KIB + 2 * 8 * KIB);
        assert_eq!(f.workers_mem, 1024 * (32 * KIB + 65_537 * 52));
        assert_eq!(f.largest, Some((1024, 65_536, 4096, 256 * GIB)));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn deepest_io_uring_ring() {
        let f = group_footprint(&[job(EngineKind::IoUring, RwMode::RandRead, 4096, 32_768, 1)], false);
        // SQ 32768 entries, CQ 65536: 128 KiB + 256 B index array, 1 MiB + 256 B CQEs, 2 MiB SQEs,
        // and 8 MiB of requests.
        let ring = page_round(256 + 32_768 * 4) + page_round(256 + 65_536 * 16) + 2 * MIB;
        assert_eq!(f.rings, ring + 32_768 * 256);
        assert_eq!(f.rings, 11_673_600);
        assert_eq!(f.buffers, 128 * MIB);
    }

    #[test]
    fn psync_and_mixed_layouts() {
        // psync: threads x qd workers of depth 1.
        let f = group_footprint(&[job(EngineKind::Psync, RwMode::RandRead, 8192, 16, 4)], false);
        assert_eq!(f.workers, 64);
        assert_eq!(f.buffers, 64 * 8192);
        assert_eq!(f.rings, 0);
        // Mixed jobs keep separate write buffers and histograms per direction.
        let f = group_footprint(&[job(EngineKind::IoUring, RwMode::RandRw, 4096, 8, 2)], false);
        assert_eq!(f.buffers, 2 * 16 * 4096);
        assert_eq!(f.histograms, (2 * 2 * 2 + 2 * 2) * 64 * KIB);
    }

    #[test]
    fn many_job_sections_are_linear() {
        let one = job(EngineKind::Null, RwMode::RandRead, 4096, 1, 1);
        let f1 = group_footprint(std::slice::from_ref(&one), false);
        let f2000 = group_footprint(&vec![one; 2000], false);
        assert_eq!(f2000.total() - BASE_BYTES, 2000 * (f1.total() - BASE_BYTES));
        // About 77 KiB a job (measured: about 27 KiB of RSS, plus the kernel's thread stack).
        assert_eq!(f1.total() - BASE_BYTES, 4 * KIB + 4 * 8 * KIB + 32 * KIB + 2 * 52 + 8 * KIB + 5 * 128);
        assert!(f2000.total() < 200 * MIB, "{}", f2000.total());
    }

    #[test]
    fn groups_in_sequence_take_the_largest() {
        let small = [job(EngineKind::Null, RwMode::RandRead, 4096, 1, 1)];
        let big = vec![job(EngineKind::Null, RwMode::RandRead, MIB, 64, 4)];
        let (f, n) = plan_footprint([(&small[..], false), (&big[..], false)]);
        assert_eq!((f, n), (group_footprint(&big, false), 1));
    }

    /// The refusal's data, for a plan that does not fit.
    fn short(need: &Footprint, jobs: usize, knobs: Knobs, avail: &Available) -> MemoryShort {
        match verdict(need, jobs, &knobs, avail) {
            Err(EngineError::Invalid(Invalid::Memory(m))) => m,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn refusal_names_need_availability_and_knobs() {
        let need = group_footprint(&[job(EngineKind::Null, RwMode::Write, MIB, 65_536, 1024)], false);
        let avail = Available { meminfo: 23 * GIB, cgroup: None };
        assert!(verdict(&need, 1, &Knobs::CLI, &avail).unwrap_err().is_usage());
        let m = short(&need, 1, Knobs::CLI, &avail);
        assert_eq!(m.need, need.total());
        assert_eq!(m.cause, MemoryCause::Buffers { workers: 1024, depth: 65_536, per_io: MIB, bytes: 64 << 40 });
        assert_eq!((m.available, m.cgroup, m.usable), (23 * GIB, false, avail.usable()));
        assert_eq!((m.shrink, m.knobs), (Shrink::Buffers, Knobs::CLI));
        // A cgroup limit tighter than the machine is named.
        let tight = Available { meminfo: 23 * GIB, cgroup: Some(GIB) };
        let small = group_footprint(&[job(EngineKind::IoUring, RwMode::RandRead, MIB, 1024, 1)], false);
        let m = short(&small, 1, Knobs::CLI, &tight);
        assert_eq!((m.available, m.cgroup), (GIB, true));
        // sla names its own options; many small jobs point at the job count.
        assert_eq!(short(&need, 1, Knobs::SLA, &avail).knobs, Knobs::SLA);
        let many = group_footprint(&vec![job(EngineKind::Null, RwMode::RandRead, 4096, 1, 1000); 1000], false);
        let m = short(&many, 1000, Knobs::CLI, &avail);
        assert!(matches!(m.cause, MemoryCause::Threads { workers: 1_000_000, .. }), "{m:?}");
        assert_eq!(m.shrink, Shrink::Jobs);
        verdict(&small, 1, &Knobs::CLI, &avail).unwrap();
        // Headroom: a tenth (at least 128 MiB) stays free.
        assert_eq!(Available { meminfo: 10 * GIB, cgroup: None }.usable(), 9 * GIB);
        assert_eq!(Available { meminfo: 512 * MIB, cgroup: None }.usable(), 384 * MIB);
    }

    #[test]
    fn mem_engine_regions_are_counted_and_named() {
        let mut m = job(EngineKind::Mem, RwMode::Read, MIB, 8, 1);
        m.size = Some(40 * GIB + 1);
        let f = group_footprint(std::slice::from_ref(&m), false);
        assert_eq!(f.regions, 40 * GIB + PAGE);
        assert_eq!(f.buffers, 8 * MIB);
        let r = short(&f, 1, Knobs::CLI, &Available { meminfo: 23 * GIB, cgroup: None });
        assert_eq!((r.cause, r.shrink), (MemoryCause::Region(40 * GIB + PAGE), Shrink::Region));
        // Without --size: the default region; other engines have none.
        m.size = None;
        assert_eq!(group_footprint(std::slice::from_ref(&m), false).regions, crate::io::backend::mem::DEFAULT_REGION);
        m.engine = EngineKind::Null;
        assert_eq!(group_footprint(&[m], false).regions, 0);
    }

    #[test]
    fn this_machine_reports_something() {
        let a = available().unwrap();
        assert!(a.meminfo > 0 && a.bytes() <= a.meminfo);
    }
}
