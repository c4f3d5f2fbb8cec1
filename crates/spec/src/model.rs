//! The workload model: what to run, independent of how or where it runs.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;
use std::time::Duration;

/// Access pattern, with fio's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Random mixed stream; the read share is `JobSpec::read_pct`.
    RandRw,
    /// Sequential mixed stream (fio `rw`/`readwrite`); read share as above.
    ReadWrite,
}

impl RwMode {
    pub const NAMES: &'static str = "read, write, randread, randwrite, randrw, readwrite";

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "read" => Self::Read,
            "write" => Self::Write,
            "randread" => Self::RandRead,
            "randwrite" => Self::RandWrite,
            "randrw" => Self::RandRw,
            "rw" | "readwrite" => Self::ReadWrite,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::RandRead => "randread",
            Self::RandWrite => "randwrite",
            Self::RandRw => "randrw",
            Self::ReadWrite => "readwrite",
        }
    }
    pub fn is_random(self) -> bool {
        matches!(self, Self::RandRead | Self::RandWrite | Self::RandRw)
    }
    /// Share of reads in percent implied by the mode (mixed modes use `mix`).
    pub fn read_pct(self, mix: u8) -> u8 {
        match self {
            Self::Read | Self::RandRead => 100,
            Self::Write | Self::RandWrite => 0,
            Self::RandRw | Self::ReadWrite => mix,
        }
    }
}

/// How random offsets are distributed over the region (ignored for sequential modes).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Distribution {
    Uniform,
    /// Zipf with exponent theta (> 0, != 1 allowed), as fio `zipf:THETA`.
    Zipf {
        theta: f64,
    },
    /// Pareto with shape h in (0, 1), as fio `pareto:H`.
    Pareto {
        h: f64,
    },
    /// Zones: each `(ops_pct, area_pct)` sends ops_pct % of I/O uniformly into the next
    /// area_pct % of the region. `hotset:90/10` = zones [(90,10),(10,90)]; fio `zoned:`.
    Zoned {
        zones: Vec<Zone>,
    },
    /// A gaussian around `center` (0 to 1 across the region) whose standard deviation is
    /// `dev_pct` % of the region, as fio's `normal:DEV[:CENTER]` (`gauss`) describes it.
    Normal {
        dev_pct: f64,
        center: f64,
    },
    /// Zones in absolute sizes from the region's start (fio `zoned_abs`): each sends `ops_pct`
    /// % of I/O into its next `bytes`; a region shorter than the zones cuts them.
    #[serde(rename = "zoned_abs")]
    ZonedAbs {
        zones: Vec<ZoneAbs>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ZoneAbs {
    pub ops_pct: f64,
    pub bytes: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    pub ops_pct: f64,
    pub area_pct: f64,
}

/// What write buffers contain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum DataPattern {
    /// Incompressible and unique per write (every 4 KiB chunk differs).
    Random,
    Zeros,
    /// Each 4 KiB chunk is `pct` % zeros, the rest random (fio buffer_compress_percentage).
    Compress {
        pct: u8,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// Linux's asynchronous engine.
    IoUring,
    /// Windows' asynchronous engine: overlapped I/O on a completion port, as DiskSpd does.
    Iocp,
    Psync,
    Null,
    /// No device: each I/O is a memcpy between the worker's buffer and a memory region of
    /// the job's size (the memory-bandwidth ceiling of any cached figure).
    Mem,
}

impl EngineKind {
    pub const NAMES: &'static str = "io_uring (Linux), iocp (Windows), psync, null, mem";
    /// This OS's asynchronous engine, the default: io_uring on Linux, iocp on Windows.
    #[cfg(not(windows))]
    pub const NATIVE: Self = Self::IoUring;
    /// This OS's asynchronous engine, the default: io_uring on Linux, iocp on Windows.
    #[cfg(windows)]
    pub const NATIVE: Self = Self::Iocp;
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "io_uring" | "uring" => Self::IoUring,
            "iocp" | "windowsaio" => Self::Iocp,
            "psync" | "sync" | "pvsync" => Self::Psync,
            "null" => Self::Null,
            "mem" => Self::Mem,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::IoUring => "io_uring",
            Self::Iocp => "iocp",
            Self::Psync => "psync",
            Self::Null => "null",
            Self::Mem => "mem",
        }
    }
    /// True when the engine does I/O to a file or block device (false: null, mem).
    pub fn uses_target(self) -> bool {
        matches!(self, Self::IoUring | Self::Iocp | Self::Psync)
    }
    /// True for an asynchronous engine (one worker keeps `qd` I/Os in flight): io_uring, iocp.
    pub fn is_async(self) -> bool {
        matches!(self, Self::IoUring | Self::Iocp)
    }
    /// Why this engine cannot run on this OS, if it cannot: each OS has its own asynchronous
    /// engine.
    pub fn unavailable(self) -> Option<&'static str> {
        match self {
            Self::IoUring if cfg!(not(target_os = "linux")) => {
                Some("io_uring is Linux's engine; on this OS use iocp (the default) or psync")
            }
            Self::Iocp if cfg!(not(windows)) => {
                Some("iocp is Windows' engine; on this OS use io_uring (the default) or psync")
            }
            _ => None,
        }
    }
}

/// A path as JSON text: names that are not UTF-8 are written with U+FFFD in place of the invalid
/// bytes (serde would otherwise refuse the whole document).
fn lossy_path<S: serde::Serializer>(p: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.serialize_str(&p.to_string_lossy()),
        None => s.serialize_none(),
    }
}

/// One job: a workload run by `threads` identical workers, each keeping `qd` I/Os in flight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSpec {
    pub name: String,
    /// Target path (file or block device); `None` = the command's default target.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "lossy_path")]
    pub target: Option<PathBuf>,
    pub rw: RwMode,
    /// Read share in percent for mixed modes (`--mix`, fio `rwmixread`).
    pub mix: u8,
    pub bs: u64,
    pub qd: u32,
    pub threads: u32,
    /// Region length in bytes; `None` = from `offset` to the end of the target.
    pub size: Option<u64>,
    pub offset: u64,
    #[serde(with = "secs", rename = "runtime_s")]
    pub runtime: Duration,
    #[serde(with = "secs", rename = "ramp_s")]
    pub ramp: Duration,
    /// Run for `runtime` regardless of bytes done (fio `time_based`). When false the
    /// job also stops once each worker has moved `size` bytes (fio semantics).
    pub time_based: bool,
    /// Total rate for the job (split evenly over workers); open-loop timing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_iops: Option<u64>,
    pub dist: Distribution,
    pub data: DataPattern,
    /// fsync after every N writes (0 = never).
    pub fsync: u32,
    pub seed: u64,
    pub direct: bool,
    pub engine: EngineKind,
    /// Submit as soon as this many I/Os are prepared (fio `iodepth_batch_submit`; 1 =
    /// each I/O at once, which starts the device sooner and measured fastest). Completions
    /// are always reaped in batches.
    #[serde(default = "one")]
    pub submit_batch: u32,
    /// Bytes the job moves before it stops when not time-based (fio `io_size`/`io_limit`);
    /// `None` = the region once. May exceed the region: offsets wrap around.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub io_bytes: Option<u64>,
    /// Submission by io_uring's SQ polling kernel thread instead of the worker (fio
    /// `io_submit_mode=offload`): the worker only fills the ring.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub offload: bool,
    /// Times the job repeats its bytes when not time-based (fio `loops`).
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub loops: u32,
    /// Block sizes that vary per I/O or per direction (fio `bs=R,W`, `bssplit`, `bsrange`,
    /// `blockalign`, `bs_unaligned`); `None` = every I/O is `bs` bytes. When set, `bs` is
    /// the largest size (what each buffer holds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub block_sizes: Option<BlockSizes>,
    /// The region's length as a share of the target in percent (fio `size=N%`), resolved
    /// when the target is opened; `size` is then `None` until it is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_pct: Option<f64>,
    /// The region's start as a share of the target in percent (fio `offset=N%`), rounded up to
    /// the smallest block size when the target is opened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub offset_pct: Option<f64>,
    /// fio's `rw=MODE:N`. Sequential modes: bytes skipped after each I/O (negative: the walk
    /// goes backwards). Random modes: a new random offset every N I/Os, the ones between
    /// following it (or repeating it, `rw_identical`). 0 = none.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rw_modifier: i64,
    /// fio `rw_sequencer=identical`: the I/Os between random offsets repeat the offset.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rw_identical: bool,
    /// fio `percentage_random` below 100: the share of a random job's I/Os at random offsets;
    /// the others follow the previous I/O.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub percentage_random: Option<u8>,
    /// Data verification (`run --verify`, fio `verify=`): every written block carries a
    /// checked header; reads check it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<VerifySpec>,
    /// fio's run-flow options: start conditions, error handling, rate floors, log files,
    /// steady state and reporting groups (all off by default).
    #[serde(default, skip_serializing_if = "JobFlow::is_default")]
    pub flow: JobFlow,
    /// fio `zonemode=strided`: the I/O stays in a zone until `size` bytes are done there.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub zones: Option<StridedZones>,
    /// fio `fill_device`/`fill_fs`: write sequentially to the end of the device (or of the file
    /// system under a file) and end, successfully, when a write finds it full (ENOSPC).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fill: bool,
    /// fio `offset_increment`: worker i (of `threads`) starts its own region of `size` bytes at
    /// `offset + i × offset_increment`; 0 = the workers share one region.
    #[serde(default, skip_serializing_if = "is_zero_u64")]
    pub offset_increment: u64,
    /// One job over several files (fio `nrfiles`, `filename=a:b`): every file holds its own
    /// copy of the region; `target` is the first file. `None` = the job's one target.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub files: Option<FileSet>,
    /// fio's `numjobs` clones (job files): each of the `threads` workers walks the region from
    /// its start and moves the job's bytes on its own. False (the command line): the workers
    /// share the region, sequential ones in stripes, and split the job's bytes.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub own_walks: bool,
}

/// The files of a job that runs over several (fio `nrfiles`, `filename=a:b:c`, `directory`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileSet {
    /// Every file of the job. Shared by all its workers; with `per_clone`, worker clone `c`
    /// (of `threads`) has its own `per_clone` files, `paths[c × per_clone ..]` (fio's
    /// generated names `JOB.CLONE.FILE` in `directory`).
    #[serde(serialize_with = "lossy_paths")]
    pub paths: Vec<PathBuf>,
    #[serde(default, skip_serializing_if = "is_zero_usize")]
    pub per_clone: usize,
    /// Which file each I/O goes to (fio `file_service_type`).
    pub service: FileService,
}

impl FileSet {
    /// Files each worker clone uses.
    pub fn files_per_clone(&self) -> usize {
        if self.per_clone > 0 {
            self.per_clone
        } else {
            self.paths.len()
        }
    }
}

fn is_zero_usize(n: &usize) -> bool {
    *n == 0
}

fn lossy_paths<S: serde::Serializer>(p: &[PathBuf], s: S) -> Result<S::Ok, S::Error> {
    s.collect_seq(p.iter().map(|p| p.to_string_lossy()))
}

/// fio's `file_service_type`: how a job over several files picks the file of each I/O.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FileService {
    pub kind: FileServiceKind,
    /// I/Os to a file before the next is picked (fio's `:N` suffix; 1 by default).
    pub switch_every: u32,
}

impl Default for FileService {
    fn default() -> Self {
        Self { kind: FileServiceKind::RoundRobin, switch_every: 1 }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum FileServiceKind {
    /// Each file in turn (fio's default).
    RoundRobin,
    /// One file until its region is done, then the next.
    Sequential,
    /// A file chosen uniformly at random.
    Random,
    /// Files chosen by a skewed distribution over the list (fio `zipf`, `pareto`,
    /// `normal`/`gauss`): file k stands where block k would in `random_distribution`.
    Skewed { dist: Distribution },
}

fn is_zero_u64(n: &u64) -> bool {
    *n == 0
}

/// fio's strided zones: the job's I/O goes to `[start, start + range)` of the region until it
/// has moved `size` bytes there; the next zone starts `range + skip` bytes further on, and
/// after the region's end the first zone comes again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct StridedZones {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

fn is_zero(n: &i64) -> bool {
    *n == 0
}

/// The block sizes of a job whose I/Os are not all `bs` bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BlockSizes {
    pub read: DirSizes,
    pub write: DirSizes,
    /// Sizes drawn from a range need not be multiples of its minimum (fio `bs_unaligned`);
    /// they stay multiples of the direct-I/O unit.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unaligned: bool,
}

/// The sizes of one direction's I/Os and where random ones may start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirSizes {
    pub sizes: SizeChoice,
    /// Random offsets are multiples of this (fio `blockalign`); `None` = the smallest size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub align: Option<u64>,
}

/// How one direction picks each I/O's length.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum SizeChoice {
    Fixed {
        bs: u64,
    },
    /// `pct` % of the I/Os are `bs` bytes (fio `bssplit`); the shares sum to 100.
    Split {
        parts: Vec<BsPart>,
    },
    /// Uniform over `min..=max` in multiples of `min` (fio `bsrange`).
    Range {
        min: u64,
        max: u64,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct BsPart {
    pub bs: u64,
    pub pct: f64,
}

impl SizeChoice {
    pub fn min(&self) -> u64 {
        match self {
            Self::Fixed { bs } => *bs,
            Self::Split { parts } => parts.iter().map(|p| p.bs).min().unwrap_or(0),
            Self::Range { min, .. } => *min,
        }
    }
    pub fn max(&self) -> u64 {
        match self {
            Self::Fixed { bs } => *bs,
            Self::Split { parts } => parts.iter().map(|p| p.bs).max().unwrap_or(0),
            Self::Range { max, .. } => *max,
        }
    }
    /// Every size named (a range gives its ends).
    pub fn named(&self) -> Vec<u64> {
        match self {
            Self::Fixed { bs } => vec![*bs],
            Self::Split { parts } => parts.iter().map(|p| p.bs).collect(),
            Self::Range { min, max } => vec![*min, *max],
        }
    }
}

impl DirSizes {
    pub fn fixed(bs: u64) -> Self {
        Self { sizes: SizeChoice::Fixed { bs }, align: None }
    }
    /// Random offsets' alignment: `align`, else the smallest size.
    pub fn align(&self) -> u64 {
        self.align.unwrap_or_else(|| self.sizes.min())
    }
}

impl BlockSizes {
    /// The largest size of either direction.
    pub fn max(&self) -> u64 {
        self.read.sizes.max().max(self.write.sizes.max())
    }
    /// The smallest size of either direction.
    pub fn min(&self) -> u64 {
        self.read.sizes.min().min(self.write.sizes.min())
    }
    /// `None` when every I/O has one size and alignment (then `bs` says it all).
    pub fn normalized(self) -> Option<Self> {
        match (&self.read.sizes, &self.write.sizes) {
            (SizeChoice::Fixed { bs: r }, SizeChoice::Fixed { bs: w })
                if r == w && self.read.align.is_none_or(|a| a == *r) && self.write.align.is_none_or(|a| a == *w) =>
            {
                None
            }
            _ => Some(self),
        }
    }
}

impl JobSpec {
    /// Read share in percent of a mixed job that names none.
    pub const DEFAULT_MIX: u8 = 70;
    /// Block size of a job that names none.
    pub const DEFAULT_BS: u64 = 4 << 10;
    /// Queue depth per worker of a job that names none.
    pub const DEFAULT_QD: u32 = 1;
    /// Workers of a job that names none.
    pub const DEFAULT_THREADS: u32 = 1;
    /// Region start of a job that names none.
    pub const DEFAULT_OFFSET: u64 = 0;
    /// Measured time of a job that names none.
    pub const DEFAULT_RUNTIME: Duration = Duration::from_secs(5);
    /// Unmeasured ramp of a job that names none.
    pub const DEFAULT_RAMP: Duration = Duration::ZERO;
    /// I/Os prepared per submission of a job that names none (1: each at once).
    pub const DEFAULT_SUBMIT_BATCH: u32 = 1;

    /// Every I/O size and offset alignment the job uses: `bs`, or each variable size.
    pub fn io_sizes(&self) -> Vec<u64> {
        match &self.block_sizes {
            None => vec![self.bs],
            Some(b) => [&b.read, &b.write].iter().flat_map(|d| d.sizes.named().into_iter().chain(d.align)).collect(),
        }
    }
}

/// How a job's data is verified (`run --verify`; fio's `verify*` options).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VerifySpec {
    /// The checksum over each chunk's payload (fio `verify=`).
    pub kind: VerifyKind,
    /// Bytes per checked chunk, each with its own header (fio `verify_interval`); `None` =
    /// the job's smallest block size.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval: Option<u64>,
    /// The payload of `pattern` verification (fio `verify_pattern`), as bytes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pattern: Option<Vec<u8>>,
    /// Read back and check every written chunk once the writes end (fio `do_verify`).
    pub after_writes: bool,
    /// Write nothing: read and check what an earlier run wrote (fio `verify_only`).
    pub only: bool,
    /// Stop at the first failure (fio `verify_fatal`).
    pub fatal: bool,
    /// Every N writes, read back and check those N blocks before going on (fio `verify_backlog`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backlog: Option<u64>,
    /// Where the generations of acknowledged writes are saved, and read by a later
    /// verify-only run (`--verify-state`; fio `verify_state_save`/`verify_state_load`).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "lossy_path")]
    pub state: Option<PathBuf>,
    /// Load `state` and check against it (a second run after a power cut).
    #[serde(default)]
    pub load_state: bool,
}

impl Default for VerifySpec {
    fn default() -> Self {
        Self {
            kind: VerifyKind::Crc32c,
            interval: None,
            pattern: None,
            after_writes: true,
            only: false,
            fatal: false,
            backlog: None,
            state: None,
            load_state: false,
        }
    }
}

/// The checksum of verified chunks, with fio's names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum VerifyKind {
    Crc32c,
    Md5,
    Sha1,
    Sha256,
    Xxhash,
    /// Only the header is checked (offset, job, generation, run), not the payload.
    Meta,
    /// The payload is `verify_pattern` repeated, and must read back as exactly that.
    Pattern,
}

impl VerifyKind {
    pub const NAMES: &'static str = "crc32c, md5, sha1, sha256, xxhash, meta, pattern";

    /// fio's names, and its aliases of the same checksum (`crc32c-intel`, `crc32c-arm64`);
    /// `xxh64` names diskmeter's xxhash digest (XXH64).
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "crc32c" | "crc32c-intel" | "crc32c-arm64" | "1" => Self::Crc32c,
            "md5" => Self::Md5,
            "sha1" => Self::Sha1,
            "sha256" => Self::Sha256,
            "xxhash" | "xxh64" => Self::Xxhash,
            "meta" => Self::Meta,
            "pattern" => Self::Pattern,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            Self::Crc32c => "crc32c",
            Self::Md5 => "md5",
            Self::Sha1 => "sha1",
            Self::Sha256 => "sha256",
            Self::Xxhash => "xxhash",
            Self::Meta => "meta",
            Self::Pattern => "pattern",
        }
    }
}

/// Which I/O errors a job counts and goes on after (fio `continue_on_error`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ErrorClass {
    /// Stop at the first error (fio's default).
    #[default]
    None,
    Read,
    Write,
    /// Any I/O error, reads and writes.
    Io,
    /// Verification failures. diskmeter's `--verify` always lists every failure and goes on
    /// (unless `verify_fatal`), so this class changes nothing.
    Verify,
    All,
}

impl ErrorClass {
    pub const NAMES: &'static str = "none, read, write, io, verify, all";
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "none" | "0" => Self::None,
            "read" => Self::Read,
            "write" => Self::Write,
            "io" => Self::Io,
            "verify" => Self::Verify,
            "all" | "1" => Self::All,
            _ => return None,
        })
    }
    /// True when an error of a read (`read`) or a write/fsync (`!read`) is counted and the job
    /// goes on.
    pub fn covers(self, read: bool) -> bool {
        match self {
            Self::None | Self::Verify => false,
            Self::Read => read,
            Self::Write => !read,
            Self::Io | Self::All => true,
        }
    }
    fn is_none(&self) -> bool {
        *self == Self::None
    }
}

/// How an open loop spaces its I/Os (fio `rate_process`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RateProcess {
    /// Evenly spaced.
    #[default]
    Linear,
    /// Exponentially distributed gaps with the same mean (a Poisson arrival process).
    Poisson,
}

impl RateProcess {
    fn is_linear(&self) -> bool {
        *self == Self::Linear
    }
}

/// fio's log files of a job (`write_bw_log`, `write_lat_log`, `write_iops_log`), averaged over
/// `avg_ms` windows.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct FioLogs {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bw: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lat: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iops: Option<String>,
    /// fio `log_avg_msec`: windows of this many ms; 0 (fio's default) = every I/O.
    pub avg_ms: u64,
    /// fio `per_job_logs` (default true): one file per worker thread, numbered; false = one
    /// file per log name.
    #[serde(default = "yes")]
    pub per_job: bool,
    /// fio `log_offset`: per-I/O lines carry the I/O's offset (averaged lines write 0).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub offset: bool,
}

fn yes() -> bool {
    true
}

/// What fio's steady-state detection watches (`steadystate=iops:10%`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SsMetric {
    Iops,
    IopsSlope,
    Bw,
    BwSlope,
    /// The mean completion latency of each second (fio `lat`: its maximum deviation).
    Lat,
    /// Its least-squares slope (fio `lat_slope`).
    LatSlope,
}

impl SsMetric {
    pub fn name(self) -> &'static str {
        match self {
            Self::Iops => "iops",
            Self::IopsSlope => "iops_slope",
            Self::Bw => "bw",
            Self::BwSlope => "bw_slope",
            Self::Lat => "lat",
            Self::LatSlope => "lat_slope",
        }
    }
    pub fn is_slope(self) -> bool {
        matches!(self, Self::IopsSlope | Self::BwSlope | Self::LatSlope)
    }
}

/// fio's steady-state criterion: once `metric`'s samples (one a second) over the last `dur`
/// after `ramp` stay within `limit` (a percentage of their mean when `pct`, else an absolute
/// value: IOPS, or KiB/s for bw), the job ends.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct SteadySpec {
    pub metric: SsMetric,
    pub limit: f64,
    pub pct: bool,
    #[serde(with = "secs", rename = "dur_s")]
    pub dur: Duration,
    #[serde(with = "secs", rename = "ramp_s")]
    pub ramp: Duration,
    /// Seconds per sample (fio `ss_interval`, default 1): each sample is the mean of that many
    /// one-second values, and the window holds `dur / interval` samples.
    #[serde(default = "one_sec", skip_serializing_if = "is_one_sec")]
    pub interval_s: u64,
}

fn one_sec() -> u64 {
    1
}

fn is_one_sec(n: &u64) -> bool {
    *n == 1
}

/// fio's `latency_target`: the bound, the percentile of I/Os that must meet it (fio's default
/// 100: every one) and fio's window (diskmeter's search measures in one-second windows).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LatencyTarget {
    pub bound_ns: u64,
    pub percentile: f64,
    pub window_ns: u64,
}

/// fio's run-flow options of one job.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct JobFlow {
    /// Start once the job of this name (earlier in the file) has finished (fio `wait_for`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait_for: Option<String>,
    /// Start this long after the group starts (fio `startdelay`, drawn once from a range).
    #[serde(default, skip_serializing_if = "is_zero_ms")]
    pub start_delay_ms: u64,
    /// When this job finishes, stop the other jobs of its group (fio `exitall`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub exitall: bool,
    /// When this job fails, stop every job (fio `exitall_on_error`).
    #[serde(default, skip_serializing_if = "is_false")]
    pub exitall_on_error: bool,
    #[serde(default, skip_serializing_if = "ErrorClass::is_none")]
    pub continue_on_error: ErrorClass,
    #[serde(default, skip_serializing_if = "RateProcess::is_linear")]
    pub rate_process: RateProcess,
    /// The job fails when a direction's rate over any `ratecycle_ms` falls below this
    /// (fio `rate_iops_min`, total for the job; `[read, write]`).
    #[serde(default, skip_serializing_if = "no_pair")]
    pub rate_iops_min: [Option<u64>; 2],
    /// As `rate_iops_min` in bytes per second (fio `rate_min`).
    #[serde(default, skip_serializing_if = "no_pair")]
    pub rate_bytes_min: [Option<u64>; 2],
    /// fio `ratecycle`, ms (0 = fio's default, 1000).
    #[serde(default, skip_serializing_if = "is_zero_ms")]
    pub ratecycle_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logs: Option<FioLogs>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steadystate: Option<SteadySpec>,
    /// fio `latency_target` (with `latency_percentile`, `latency_window`): the job runs as
    /// diskmeter's `sla` search for the most IOPS under this bound.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<LatencyTarget>,
    /// Reporting group within its run group (fio `new_group`); group reporting merges the
    /// jobs of each reporting group.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub report_group: u32,
    /// fio `flow`: this job's weight in its flow group; the jobs of a group that share a
    /// `flow_id` do I/O in the ratio of their weights (0 = not regulated).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub flow_weight: u32,
    /// fio `flow_id`: which flow group (0 = the global one).
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub flow_id: u32,
    /// fio `flow_sleep`: µs a job ahead of its share waits before it tries again.
    #[serde(default, skip_serializing_if = "is_zero_ms")]
    pub flow_sleep_us: u64,
}

impl JobFlow {
    pub fn is_default(&self) -> bool {
        *self == Self::default()
    }
    /// fio's `ratecycle`, 1000 ms unless set.
    pub fn ratecycle(&self) -> Duration {
        Duration::from_millis(if self.ratecycle_ms == 0 { 1000 } else { self.ratecycle_ms })
    }
}

fn is_zero_ms(n: &u64) -> bool {
    *n == 0
}
fn is_zero_u32(n: &u32) -> bool {
    *n == 0
}
fn is_false(b: &bool) -> bool {
    !*b
}
fn no_pair(p: &[Option<u64>; 2]) -> bool {
    p.iter().all(Option::is_none)
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

impl Default for JobSpec {
    fn default() -> Self {
        Self {
            name: "job".into(),
            target: None,
            rw: RwMode::RandRead,
            mix: Self::DEFAULT_MIX,
            bs: Self::DEFAULT_BS,
            qd: Self::DEFAULT_QD,
            threads: Self::DEFAULT_THREADS,
            size: None,
            offset: Self::DEFAULT_OFFSET,
            runtime: Self::DEFAULT_RUNTIME,
            ramp: Self::DEFAULT_RAMP,
            time_based: true,
            rate_iops: None,
            dist: Distribution::Uniform,
            data: DataPattern::Random,
            fsync: 0,
            seed: 0x6469_736b_6d65_7465, // "diskmete"
            direct: true,
            engine: EngineKind::NATIVE,
            submit_batch: Self::DEFAULT_SUBMIT_BATCH,
            io_bytes: None,
            offload: false,
            loops: 1,
            verify: None,
            block_sizes: None,
            size_pct: None,
            offset_pct: None,
            rw_modifier: 0,
            rw_identical: false,
            percentage_random: None,
            flow: JobFlow::default(),
            zones: None,
            files: None,
            own_walks: false,
            fill: false,
            offset_increment: 0,
        }
    }
}

/// A run: groups execute one after another (fio `stonewall`); jobs inside a group run
/// concurrently and are reported separately (or merged when `group_reporting`).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RunPlan {
    pub groups: Vec<JobGroup>,
    /// What the run must report about how its input was read, e.g. an engine substituted
    /// for the one a job file asked for. The session copies each into the result's warnings.
    pub notes: Vec<PlanNote>,
}

/// A note carried by a [`RunPlan`] into the result document (as a warning with this code).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanNote {
    /// A stable identifier, such as [`PlanNote::ENGINE_SUBSTITUTED`].
    pub code: String,
    /// Free text for the user.
    pub message: String,
}

impl PlanNote {
    /// A job file asked for an I/O engine diskmeter does not have, and another one runs it
    /// (`ioengine=libaio` runs as io_uring; `sync`, `pvsync`, `pvsync2` as psync).
    pub const ENGINE_SUBSTITUTED: &'static str = "engine-substituted";
    /// A job file named fio's `random_generator`: diskmeter's own generator draws the offsets.
    pub const GENERATOR_SUBSTITUTED: &'static str = "generator-substituted";
    /// Separate read and write rates on a mixed job: the job runs at their sum with the read
    /// share set to the read rate's part of it (so each direction gets its rate).
    pub const RATE_SETS_MIX: &'static str = "rate-sets-mix";
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct JobGroup {
    pub jobs: Vec<JobSpec>,
    /// Report the group as one merged result instead of per job.
    pub group_reporting: bool,
}

mod secs {
    use serde::{Deserialize, Deserializer, Serializer};
    use std::time::Duration;
    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(d.as_secs_f64())
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let v = f64::deserialize(d)?;
        if !(0.0..1e9).contains(&v) {
            return Err(serde::de::Error::custom("duration out of range"));
        }
        Ok(Duration::from_secs_f64(v))
    }
}

#[cfg(test)]
mod engine_tests {
    use super::EngineKind;

    #[test]
    fn engine_names_round_trip() {
        for e in [EngineKind::IoUring, EngineKind::Psync, EngineKind::Null, EngineKind::Mem] {
            assert_eq!(EngineKind::parse(e.name()), Some(e));
            assert!(EngineKind::NAMES.contains(e.name()));
        }
        assert_eq!(EngineKind::parse("mem"), Some(EngineKind::Mem));
        assert!(EngineKind::IoUring.uses_target() && EngineKind::Psync.uses_target());
        assert!(!EngineKind::Null.uses_target() && !EngineKind::Mem.uses_target());
    }
}
