//! The engine's errors, as data: which problem it is, with its numbers and paths. The engine
//! knows no command line: the sentences a user reads, with the options that fix the problem,
//! are the caller's to make (the `app` crate's `engine_words`). The `Display` of these types is
//! a neutral fallback (for logs and tests), names no option, and is not what a user is shown.

use spec::EngineKind;
use std::io;
use std::path::PathBuf;
use thiserror::Error;

/// Errors from the engine. `Invalid` and `Unsafe` are the user's to fix (exit 2, nothing was
/// written); `Io` is a runtime fault (exit 1); `Setup` is either, as [`Setup::is_usage`] says.
#[derive(Debug, Error)]
pub enum EngineError {
    /// Bad input found against the target or the machine.
    #[error("{0}")]
    Invalid(Invalid),
    /// Refused by the data-safety guard.
    #[error("{0}")]
    Unsafe(Unsafe),
    /// An I/O engine could not be set up (a ring, a completion port, its buffers).
    #[error("{0}")]
    Setup(Setup),
    /// A runtime I/O fault.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
}

impl EngineError {
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        Self::Io { context: context.into(), source }
    }
    /// Bad input the command found itself, in its own words ([`Invalid::Command`]).
    pub fn usage(message: impl Into<String>) -> Self {
        Self::Invalid(Invalid::Command(message.into()))
    }
    /// True when the user can fix this by changing the command (exit code 2).
    pub fn is_usage(&self) -> bool {
        match self {
            Self::Invalid(_) | Self::Unsafe(_) => true,
            Self::Setup(s) => s.is_usage(),
            Self::Io { .. } => false,
        }
    }
}

impl From<Invalid> for EngineError {
    fn from(i: Invalid) -> Self {
        Self::Invalid(i)
    }
}

impl From<Unsafe> for EngineError {
    fn from(u: Unsafe) -> Self {
        Self::Unsafe(u)
    }
}

impl From<Setup> for EngineError {
    fn from(s: Setup) -> Self {
        Self::Setup(s)
    }
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

/// What was being done to a path when the OS refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Open,
    Create,
    /// Its metadata (stat).
    Access,
}

impl Verb {
    pub fn name(self) -> &'static str {
        match self {
            Verb::Open => "open",
            Verb::Create => "create",
            Verb::Access => "access",
        }
    }
}

/// Bad input found against the target or the machine: one variant per problem.
#[derive(Debug, Error)]
pub enum Invalid {
    // The target: its path, opening, creating, its kind and size.
    /// The target's path is unusable (too long, a trailing `/`, a dangling link, a loop): the
    /// `files` crate's message, passed on.
    #[error("{0}")]
    TargetPath(String),
    /// Another run (or this one) holds the target's lock: the `files` crate's message.
    #[error("{0}")]
    Lock(String),
    /// Neither a file nor a block device (`kind`: "a directory", "a character device", …).
    #[error("{} is {kind}, not a file or a block device", .path.display())]
    NotATarget { path: PathBuf, kind: &'static str },
    /// EACCES/EPERM. `error` is the OS's own, when the message quotes it.
    #[error("cannot {} {}: permission denied", .verb.name(), .path.display())]
    Denied { path: PathBuf, verb: Verb, error: Option<io::Error> },
    /// A path the OS cannot follow (too long, a loop, a non-directory in it).
    #[error("cannot {} {}: {error}", .verb.name(), .path.display())]
    BadPath { path: PathBuf, verb: Verb, error: io::Error },
    /// ETXTBSY: the target is a running program.
    #[error("cannot write to {}: it is a running program", .path.display())]
    RunningProgram { path: PathBuf },
    /// EROFS opening a target a workload writes.
    #[error("cannot write to {}: read-only file system", .path.display())]
    ReadOnlyFs { path: PathBuf },
    /// EROFS opening a target a scan writes.
    #[error("cannot open {} for writing: {error}", .path.display())]
    NotWritable { path: PathBuf, error: io::Error },
    /// The directory of a new test file refuses it (EACCES, EPERM, EROFS).
    #[error("cannot create {}: {error}", .path.display())]
    CannotCreate { path: PathBuf, error: io::Error },
    /// The directory of a new test file is gone (ENOENT when creating it).
    #[error("cannot create {}: no directory", .path.display())]
    DirectoryGone { path: PathBuf },
    /// A new test file whose directory does not exist either.
    #[error("neither {} nor its directory {} exists", .path.display(), .dir.display())]
    NoDirectory { path: PathBuf, dir: PathBuf },
    /// A new test file whose parent is not a directory.
    #[error("{} cannot be created: {} is not a directory", .path.display(), .parent.display())]
    ParentNotDirectory { path: PathBuf, parent: PathBuf },
    /// The target's file system (or device) refuses direct I/O (EINVAL).
    #[error("{} does not support direct I/O ({error})", .path.display())]
    NoDirectIo { path: PathBuf, error: io::Error, filesystem: Option<String> },
    /// Other runs keep creating and removing the target while this one opens it.
    #[error("{} keeps changing while it is opened", .path.display())]
    KeepsChanging { path: PathBuf },
    /// A block device to guard that does not exist.
    #[error("{} does not exist", .path.display())]
    NoSuchDevice { path: PathBuf },
    /// A device to guard that is not a block device.
    #[error("{} is not a block device", .path.display())]
    NotABlockDevice { path: PathBuf },
    /// A test writes an existing file diskmeter did not create, and may not.
    #[error("{} exists and was not created by diskmeter; writing it is not allowed", .path.display())]
    ForeignFile { path: PathBuf },
    /// An existing file smaller than the test region, which may not be grown.
    #[error("{} holds {size} bytes, the test region needs {needed}", .path.display())]
    FileTooSmall { path: PathBuf, size: u64, needed: u64 },
    /// A block size (the gcd of every one used) that is not a multiple of the direct-I/O unit.
    #[error("block size {bs} is not a multiple of {}'s direct-I/O unit ({block} bytes)", .path.display())]
    BlockSizeUnaligned { bs: u64, path: PathBuf, block: u64 },
    /// The test region ends past the end of a block device.
    #[error("the test region ends at {end} bytes, {} holds {size}", .path.display())]
    RegionPastEnd { end: u64, path: PathBuf, size: u64 },

    // A job's region against its target.
    /// The job's offset is not a multiple of the direct-I/O unit.
    #[error("offset {offset} is not a multiple of the direct-I/O unit ({block} bytes)")]
    OffsetUnaligned { offset: u64, block: u64 },
    /// The job's offset is at or past the end of the target.
    #[error("offset {offset} is at or past the end of the target ({size} bytes)")]
    OffsetPastEnd { offset: u64, size: u64 },
    /// fio's offset_increment puts the last of the job's workers at or past the end.
    #[error("offset increment {increment} x {threads} workers reaches past the end of the target ({size} bytes)")]
    SpreadPastEnd { increment: u64, threads: u32, size: u64 },
    /// The region left for the job (`region` bytes from `offset`) is smaller than one block.
    #[error("the test region ({region} bytes from offset {offset}) is smaller than one block ({bs} bytes)")]
    RegionBelowBlock { region: u64, offset: u64, bs: u64 },
    /// One of the job's block sizes or alignments is not a multiple of the direct-I/O unit.
    #[error("block size or alignment {value} is not a multiple of the direct-I/O unit ({block} bytes)")]
    SizeUnaligned { value: u64, block: u64 },
    /// A block-size range of more sizes than a job may draw from.
    #[error("block-size range {min}-{max} in steps of {step} has {steps} sizes, more than {limit}")]
    TooManySizes { min: u64, max: u64, step: u64, steps: u64, limit: u64 },

    // Memory.
    /// The plan does not fit in the memory the machine can give.
    #[error("{0}")]
    Memory(MemoryShort),
    /// RLIMIT_MEMLOCK is below what io_uring's registered buffers pin (bytes).
    #[error("RLIMIT_MEMLOCK ({limit} bytes) is below the registered buffers' {need} bytes")]
    Memlock { limit: u64, need: u64 },
    /// The buffer that fills a test area cannot be allocated.
    #[error("cannot allocate the fill buffer")]
    FillBuffer,
    /// The mem engine's region of job `job` (`bytes`) cannot be mapped.
    #[error("cannot allocate the mem engine's region of {bytes} bytes for {job}")]
    MemRegion { bytes: u64, job: String },

    // The surface scan.
    /// The scan's target does not exist.
    #[error("{} does not exist", .path.display())]
    ScanMissing { path: PathBuf },
    /// A writing mode (`mode`) on an existing file, without leave to write it.
    #[error("{} is an existing file and the {mode} mode writes to it", .path.display())]
    ScanWritesFile { path: PathBuf, mode: &'static str },
    /// The scan's block is zero or not a multiple of the target's logical block size `lb`.
    #[error("scan block {block} is not a multiple of {}'s logical block size ({lb} bytes)", .path.display())]
    ScanBlockUnaligned { block: u64, path: PathBuf, lb: u64 },
    /// The scan's offset is not a multiple of the logical block size.
    #[error("scan offset {offset} is not a multiple of the logical block size ({lb} bytes)")]
    ScanOffsetUnaligned { offset: u64, lb: u64 },
    /// The scan's offset is at or past the end of the target.
    #[error("scan offset {offset} is at or past the end of {} ({size} bytes)", .path.display())]
    ScanOffsetPastEnd { offset: u64, path: PathBuf, size: u64 },
    /// The scan's span ends past the end of the target.
    #[error("the scan span ends at {end} bytes, {} holds {size}", .path.display())]
    ScanSpanPastEnd { end: u64, path: PathBuf, size: u64 },
    /// The scan's span is shorter than one logical block.
    #[error("the scan span ({span} bytes) is shorter than one logical block ({lb} bytes)")]
    ScanSpanShort { span: u64, lb: u64 },
    /// Access times only, in a writing mode.
    #[error("access times only are measured in the read mode")]
    ScanAccessOnlyWrites,
    /// A queue depth above 1 in a writing mode.
    #[error("a queue depth above 1 applies to the read mode only")]
    ScanDepthWrites,
    /// The destructive mode without a pattern to write.
    #[error("the destructive mode needs at least one pattern")]
    ScanNoPatterns,
    /// The scan's block buffers cannot be allocated.
    #[error("cannot allocate a {block}-byte scan buffer")]
    ScanBuffer { block: u64 },
    /// The fault plan in the environment variable `var` does not parse (test builds).
    #[error("{var}: {error}")]
    FaultPlan { var: &'static str, error: String },

    // The caller's own.
    /// A problem the command found itself, in its own words: the engine never makes one.
    #[error("{0}")]
    Command(String),
}

/// The machine (or its memory cgroup) cannot hold what a run would allocate.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("this run needs {need} bytes of memory, {available} are available and a run may plan on {usable}")]
pub struct MemoryShort {
    /// The run's footprint at its largest moment, bytes.
    pub need: u64,
    /// What is available, bytes (the tighter of MemAvailable and the memory cgroup's room).
    pub available: u64,
    /// The memory cgroup's limit is what leaves `available`.
    pub cgroup: bool,
    /// What a run may plan to use of it, bytes.
    pub usable: u64,
    /// Where the memory goes.
    pub cause: MemoryCause,
    /// What would shrink it most.
    pub shrink: Shrink,
    /// Which of the command's options size the run.
    pub knobs: Knobs,
}

/// Where a run's memory goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MemoryCause {
    /// Mostly the mem engine's regions (bytes).
    Region(u64),
    /// Mostly the largest job's I/O buffers: `workers` x depth `depth` x `per_io` bytes.
    Buffers { workers: u64, depth: u64, per_io: u64, bytes: u64 },
    /// Spread over many worker threads: their buffers, rings, histograms and the rest (bytes).
    Threads { workers: u64, buffers: u64, rings: u64, histograms: u64, rest: u64 },
}

/// What dominates a run's memory, and so what to lower.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shrink {
    /// The mem engine's region: its size.
    Region,
    /// I/O buffers: depth, threads or block size.
    Buffers,
    /// io_uring rings: depth or threads.
    Rings,
    /// Per-thread state over several jobs: threads, or fewer jobs at once.
    Jobs,
    /// Per-thread state of one job: threads (or depth with psync).
    Threads,
}

/// Which options size a run, for the refusal's advice: a command's own job options, or the
/// deepest point of `sla`'s grid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Knobs {
    /// `run`, `mark`, `compare`: the job's queue depth, threads, block size and size.
    Job,
    /// `sla`: the deepest point of its grid (its largest depth and threads).
    Grid,
}

impl Knobs {
    /// `run`, `mark`, `compare`.
    pub const CLI: Knobs = Knobs::Job;
    /// `sla`: the deepest point of its grid.
    pub const SLA: Knobs = Knobs::Grid;
}

/// An I/O engine that could not be set up.
#[derive(Debug, Error)]
pub enum Setup {
    /// io_uring could not pin the registered buffers (ENOMEM).
    #[error("io_uring could not pin the registered buffers (ENOMEM)")]
    UringPin,
    /// io_uring could not register the I/O buffers (another error): a fault.
    #[error("io_uring could not register the I/O buffers ({0})")]
    UringRegister(io::Error),
    /// io_uring is not available here (ENOSYS, EPERM).
    #[error("io_uring is not available here ({0})")]
    UringUnavailable(io::Error),
    /// The kernel could not allocate a ring of `entries` entries for queue depth `depth` (ENOMEM).
    #[error("io_uring could not allocate a ring of {entries} entries for queue depth {depth} (ENOMEM)")]
    UringRingMemory { entries: u32, depth: u32 },
    /// io_uring_setup failed otherwise: a fault.
    #[error("io_uring setup of a {entries}-entry ring for queue depth {depth} failed: {error}")]
    UringRing { entries: u32, depth: u32, error: io::Error },
    /// The engine is not built for this OS.
    #[error("the {} engine is not available on this OS", .0.name())]
    Unavailable(EngineKind),
    /// The completion port could not be set up: a fault.
    #[error("cannot set up the completion port: {0}")]
    CompletionPort(io::Error),
    /// A worker's I/O buffers cannot be allocated.
    #[error("cannot allocate I/O buffers")]
    IoBuffers,
    /// A mem-engine worker found no region: a fault.
    #[error("the mem engine's region is missing")]
    MemRegionMissing,
    /// Replay's `slots` x 2 buffers of `len` bytes cannot be allocated.
    #[error("cannot allocate {slots} x 2 buffers of {len} bytes")]
    ReplayBuffers { slots: usize, len: usize },
}

impl Setup {
    /// True when the user can fix it by changing the command (exit 2), not a fault (exit 1).
    pub fn is_usage(&self) -> bool {
        !matches!(
            self,
            Self::UringRegister(_) | Self::UringRing { .. } | Self::CompletionPort(_) | Self::MemRegionMissing
        )
    }
}

/// Refused by the data-safety guard.
#[derive(Debug, Error)]
pub enum Unsafe {
    /// The guard will not let `device` be written, for `why`.
    #[error("refusing to write {}: {why}", .device.display())]
    Refused { device: PathBuf, why: Refusal },
    /// A test that writes a block device that the override does not name.
    #[error("{} would be written, destroying its data; the override does not name it", .device.display())]
    NotNamed { device: PathBuf, by: Writer },
    /// A test that only reads, with the override naming another path than its target.
    #[error("the override names {}, not the target {}", .named.display(), .target.display())]
    NamesAnother { named: PathBuf, target: PathBuf },
    /// The target is in use by the system (EBUSY opening it for a workload).
    #[error("{} is busy (in use by the system): {error}", .path.display())]
    Busy { path: PathBuf, error: io::Error },
}

/// What writes a block device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writer {
    /// A workload (run, mark, sla, compare, steady, replay).
    Workload,
    /// A surface scan in this writing mode ("nondestructive", "destructive").
    Scan { mode: &'static str },
}

/// Why the guard refuses to write a device.
#[derive(Debug, Error)]
pub enum Refusal {
    /// The override names `named`, another device than the target (`resolved`: the target's
    /// canonical path, when it differs from the path given).
    #[error("the override names {}, another device; the two paths differ", .named.display())]
    OtherDevice { named: PathBuf, resolved: Option<PathBuf> },
    /// The override names another Windows drive.
    #[error("the override names {named}, another drive")]
    OtherDrive { named: String },
    /// It is (part of) the disk of the root file system or of the running binary (`disk`).
    #[error("{relation} {holds} ({disk}); diskmeter never writes there")]
    SystemDisk { relation: Relation, holds: SystemPart, disk: String },
    /// It (`part` None) or its partition `part` is mounted at `at`.
    #[error("{} is mounted at {} ({fstype}); naming the device does not override this", Part(.part), .at.display())]
    Mounted { part: Option<String>, at: PathBuf, fstype: String },
    /// It or its partition is active swap (`swap`: the swap device as listed).
    #[error("{} is in use as swap ({}); naming the device does not override this", Part(.part), .swap.display())]
    Swap { part: Option<String>, swap: PathBuf },
    /// It or its partition is held by `holders` (device-mapper/LVM, md RAID, bcache).
    #[error("{} is held by {}; naming the device does not override this", Part(.part), .holders.join(", "))]
    Held { part: Option<String>, holders: Vec<String> },
    /// An exclusive open of it or its partition failed with EBUSY.
    #[error("{} is busy (an exclusive open failed with EBUSY); naming the device does not override this", Part(.part))]
    Busy { part: Option<String> },
    /// It carries these signatures, and the override does not name it.
    #[error("it carries {}", Sigs(.0))]
    Signatures(Vec<Signature>),
    /// A scan's open for writing failed with EBUSY (mounted or held by the system).
    #[error("it is busy (mounted or held by the system): {0}")]
    InUse(io::Error),
    /// A Windows volume's handle (`\\.\X:`), which diskmeter only reads.
    #[error("a volume's handle is read-only to diskmeter")]
    VolumeHandle,
    /// What a Windows drive holds cannot be read, so it is not written.
    #[error("cannot tell what it holds ({0})")]
    DriveUnknown(io::Error),
    /// The Windows drive holds the system or boot volume.
    #[error("it holds the system or boot volume; diskmeter never writes there")]
    SystemVolume,
    /// The Windows drive holds volumes with a drive letter or a mount point.
    #[error("it holds {}; naming the drive does not override this", .0.join(", "))]
    Volumes(Vec<String>),
    /// The Windows drive's partition table holds `count` partitions (`disk`: its number).
    #[error("its partition table holds {count} partitions; naming the drive does not override this")]
    Partitions { count: u32, disk: u32 },
    /// A whole Windows drive, which the override does not name.
    #[error("writing a whole disk destroys its data; the override does not name it")]
    WholeDisk,
}

/// How a device relates to the system disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum Relation {
    #[error("it holds")]
    Holds,
    #[error("it is a partition of the disk that holds")]
    PartitionOfDisk,
    #[error("it is (part of) the disk that holds")]
    PartOfDisk,
}

/// What of the running system a disk holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Error)]
pub enum SystemPart {
    #[error("the root file system")]
    RootFs,
    #[error("the running diskmeter binary")]
    Binary,
}

/// An on-disk signature found on a device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Signature {
    /// Short name: "ext4", "GPT partition table", "LVM2 physical volume", …
    pub name: &'static str,
    /// Byte offset of the magic on the device.
    pub offset: u64,
}

/// "it", or "its partition sdb1".
struct Part<'a>(&'a Option<String>);

impl std::fmt::Display for Part<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            None => f.write_str("it"),
            Some(p) => write!(f, "its partition {p}"),
        }
    }
}

/// "ext4 signature (at byte 1080), swap signature (at byte 4086)".
struct Sigs<'a>(&'a [Signature]);

impl std::fmt::Display for Sigs<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, s) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{} signature (at byte {})", s.name, s.offset)?;
        }
        Ok(())
    }
}
