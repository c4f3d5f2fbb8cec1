use crate::model::{EngineKind, RwMode};
use thiserror::Error;

/// A problem with user input. Messages name the option and say how to fix it.
#[derive(Debug, Error, Clone, PartialEq)]
pub enum SpecError {
    /// A value given for an option is invalid: `option`, then the message.
    #[error("invalid value for {option}: {message}")]
    Value { option: String, message: String },
    /// A job file problem, located at file:line.
    #[error("{}: {message}", location(file, *line))]
    JobFile { file: String, line: usize, message: String },
    /// A job (or plan) that fails [`crate::validate`]'s checks, as data: the caller names the
    /// field in its own words ([`crate::validate::Words`]); this `Display` names it by the
    /// field's own name ([`Field::name`]).
    #[error("{0}")]
    Invalid(ValidationError),
}

/// `file:line`, or just `file` for problems with the whole file (line 0).
fn location(file: &str, line: usize) -> String {
    if line == 0 {
        file.to_string()
    } else {
        format!("{file}:{line}")
    }
}

impl SpecError {
    pub fn value(option: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Value { option: option.into(), message: message.into() }
    }
}

impl From<ValidationError> for SpecError {
    fn from(e: ValidationError) -> Self {
        Self::Invalid(e)
    }
}

impl From<FieldError> for SpecError {
    fn from(e: FieldError) -> Self {
        Self::Invalid(e.into())
    }
}

/// The job fields a check can complain about, and those its advice names. Each caller names
/// them in its own words: the command line by its flags, a job file by its options
/// ([`crate::validate::Words`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Field {
    Bs,
    Qd,
    Threads,
    Mix,
    Size,
    Offset,
    Runtime,
    RateIops,
    Dist,
    Data,
    Verify,
    VerifyInterval,
    /// Only named in advice (pattern verification without a pattern).
    VerifyPattern,
    BsSplit,
    BsRange,
    BlockAlign,
    RwModifier,
    Zones,
    Fill,
}

impl Field {
    /// Every field, in declaration order.
    pub const ALL: [Field; 19] = [
        Field::Bs,
        Field::Qd,
        Field::Threads,
        Field::Mix,
        Field::Size,
        Field::Offset,
        Field::Runtime,
        Field::RateIops,
        Field::Dist,
        Field::Data,
        Field::Verify,
        Field::VerifyInterval,
        Field::VerifyPattern,
        Field::BsSplit,
        Field::BsRange,
        Field::BlockAlign,
        Field::RwModifier,
        Field::Zones,
        Field::Fill,
    ];

    /// The field's own name, after the [`crate::JobSpec`] setting it stands for (`qd`,
    /// `rate_iops`, `bs_split`, …): the words of a bare error's `Display`, for callers
    /// without words of their own.
    pub fn name(self) -> &'static str {
        match self {
            Field::Bs => "bs",
            Field::Qd => "qd",
            Field::Threads => "threads",
            Field::Mix => "mix",
            Field::Size => "size",
            Field::Offset => "offset",
            Field::Runtime => "runtime",
            Field::RateIops => "rate_iops",
            Field::Dist => "dist",
            Field::Data => "data",
            Field::Verify => "verify",
            Field::VerifyInterval => "verify_interval",
            Field::VerifyPattern => "verify_pattern",
            Field::BsSplit => "bs_split",
            Field::BsRange => "bs_range",
            Field::BlockAlign => "block_align",
            Field::RwModifier => "rw_modifier",
            Field::Zones => "zones",
            Field::Fill => "fill",
        }
    }
}

/// What is wrong with a field, with the numbers: a check's finding as data. The sentence
/// comes from [`FieldError::message`] in the caller's words.
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// The block size is 0.
    BsZero,
    /// The block size is above [`crate::validate::MAX_BS`].
    BsTooLarge { bs: u64 },
    /// The queue depth is 0.
    QdZero,
    /// The queue depth is above [`crate::validate::MAX_QD`] (io_uring's limit, kept on every
    /// engine; `engine` says whose limit it is in the message).
    QdTooDeep { qd: u32, engine: EngineKind },
    /// psync runs one thread per I/O in flight: `qd` × `threads` (at least 1) is above
    /// [`crate::validate::MAX_PSYNC_THREADS`].
    PsyncThreads { qd: u32, threads: u32 },
    /// The number of workers is 0 or above [`crate::validate::MAX_THREADS`].
    Threads { threads: u32 },
    /// The read share is above 100 %.
    MixAbove100 { mix: u8 },
    /// The region size is 0.
    SizeZero,
    /// The region is smaller than one block.
    SizeBelowBs { size: u64, bs: u64 },
    /// A rate of 0 I/Os per second.
    RateZero,
    /// A time-based run without a runtime.
    RuntimeZero,
    /// Direct I/O at an offset (or offset increment) that is not a multiple of
    /// [`crate::validate::DIRECT_ALIGN`].
    OffsetUnaligned { offset: u64 },
    /// Direct I/O with a sequential mode's offset modifier (`rw=write:N`) that is not a
    /// multiple of [`crate::validate::DIRECT_ALIGN`].
    ModifierUnaligned { modifier: i64 },
    /// Filling the target in a mode other than write.
    FillNeedsWrite { rw: RwMode },
    /// Strided zones together with an offset modifier or `percentage_random`.
    ZonesWithModifier,
    /// Direct I/O with a zone size, range or skip that is not a multiple of
    /// [`crate::validate::DIRECT_ALIGN`].
    ZonesUnaligned,
    /// A zone (its range) smaller than one block.
    ZoneBelowBs { range: u64, bs: u64 },
    /// One of the variable block sizes is 0 or above [`crate::validate::MAX_BS`].
    BlockSizeOutOfRange { bs: u64 },
    /// Direct I/O with one of the variable block sizes not a multiple of
    /// [`crate::validate::DIRECT_ALIGN`].
    BlockSizeUnaligned { bs: u64 },
    /// A block-size split whose shares add up to `sum`, not 100 (or one outside 0..=100).
    SplitShares { sum: f64 },
    /// A block alignment of 0 or above [`crate::validate::MAX_BS`].
    AlignOutOfRange { align: u64 },
    /// Direct I/O with a block alignment not a multiple of [`crate::validate::DIRECT_ALIGN`].
    AlignUnaligned { align: u64 },
    /// A normal distribution's deviation (percent) or center out of range.
    Normal { dev_pct: f64, center: f64 },
    /// zoned_abs without zones, with an empty zone, or with shares not adding up to 100.
    ZonedAbs,
    /// A zipf exponent not above 0.
    Zipf { theta: f64 },
    /// A pareto shape not between 0 and 1.
    Pareto { h: f64 },
    /// A zoned distribution without zones.
    NoZones,
    /// A zone's shares of I/O and area out of range.
    ZoneInvalid { ops_pct: f64, area_pct: f64 },
    /// The zones' shares of I/O (`ops`) or of the area (`area`) do not add up to 100.
    ZoneSums { ops: f64, area: f64 },
    /// A compressible share above 100 %.
    CompressAbove100 { pct: u8 },
    /// Verification on an engine that stores no data.
    VerifyWithoutData { engine: EngineKind },
    /// Pattern verification without a pattern.
    VerifyWithoutPattern,
    /// Verification together with an offset increment.
    VerifyWithOffsetIncrement,
    /// Verification together with unaligned block sizes.
    VerifyWithUnalignedSizes,
    /// A verify chunk of `interval` bytes that is not whole sectors or does not divide the
    /// block size `bs`.
    VerifyChunk { interval: u64, bs: u64 },
    /// Verified I/O that would not start on `interval`-byte chunk boundaries.
    VerifyChunkStart { interval: u64 },
}

/// A failed check of one job: which field, and what is wrong with it.
#[derive(Debug, Clone, PartialEq)]
pub struct FieldError {
    pub field: Field,
    pub problem: Problem,
}

/// Why a job or a plan fails validation ([`crate::validate::validate_plan`]).
#[derive(Debug, Clone, PartialEq)]
pub enum ValidationError {
    /// The plan has no jobs at all.
    NoJobs,
    /// A job's field fails a check; `job` is the job's name when its plan has several jobs
    /// (to tell them apart), else `None`.
    Job { job: Option<String>, error: FieldError },
}

impl From<FieldError> for ValidationError {
    fn from(error: FieldError) -> Self {
        Self::Job { job: None, error }
    }
}
