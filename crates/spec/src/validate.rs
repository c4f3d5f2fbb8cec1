//! Target-independent checks of a job: everything that can be judged without opening the
//! target (alignment to the device's logical block size, target size etc. are checked
//! by whoever opens it).
//!
//! The checks speak in data: a failed one is a [`FieldError`] — which [`Field`], and the
//! [`Problem`] with its numbers. The words are the caller's: [`FieldError::message`] makes
//! the sentence with a [`Words`], which names each field as the user spells it — a job file
//! by its option (`iodepth`, in [`crate::fiojob`]), the command line by its flag (in the app).

pub use crate::error::{Field, FieldError, Problem, ValidationError};
use crate::model::{BlockSizes, DataPattern, Distribution, EngineKind, JobSpec, RunPlan, SizeChoice};
use crate::units::format_size;

/// Largest accepted block size: 256 MiB.
pub const MAX_BS: u64 = 256 << 20;
/// Largest accepted queue depth per worker: io_uring's limit on a ring's submission queue
/// (the kernel's IORING_MAX_ENTRIES; its completion queue holds twice that). psync and null
/// keep the same range, so a job means the same on every engine.
pub const MAX_QD: u32 = 32_768;
/// psync serves depth with threads (one synchronous I/O each): at most this many threads
/// (`threads` × `qd`) per job.
pub const MAX_PSYNC_THREADS: u32 = 4096;
/// Largest accepted number of workers per job.
pub const MAX_THREADS: u32 = 1024;
/// Alignment that direct I/O offsets must have regardless of the device (a power of two).
pub const DIRECT_ALIGN: u64 = 512;

/// How a caller names the job's fields in a message: a job file by its options
/// ([`crate::fiojob`]), the command line by its flags (the app).
pub trait Words {
    /// The option that sets `field`: `iodepth`, `--qd`.
    fn name(&self, field: Field) -> &str;
    /// `field` set to `value`, as the user writes it: `iodepth=32`, `--qd 32`.
    fn example(&self, field: Field, value: &str) -> String;
    /// The setting that turns direct I/O off: `direct=0`, `--buffered`.
    fn buffered(&self) -> &str;
    /// The advice for a time-based run without a runtime: `use e.g. --runtime 5s`.
    fn runtime_advice(&self) -> String;
}

/// The fields by their own names ([`Field::name`]), set as `name=value`: the words of a bare
/// error's `Display`.
struct OwnNames;

impl Words for OwnNames {
    fn name(&self, field: Field) -> &str {
        field.name()
    }
    fn example(&self, field: Field, value: &str) -> String {
        format!("{}={value}", field.name())
    }
    fn buffered(&self) -> &str {
        "direct=false"
    }
    fn runtime_advice(&self) -> String {
        format!("set e.g. {}", self.example(Field::Runtime, "30s"))
    }
}

impl FieldError {
    fn new(field: Field, problem: Problem) -> Self {
        Self { field, problem }
    }

    /// What is wrong and how to fix it, in `w`'s words (without the "invalid value for"
    /// prefix): `the queue depth 0 is out of range; use 1 to 32768, e.g. --qd 32`.
    pub fn message(&self, w: &dyn Words) -> String {
        let f = self.field;
        let eg = |field: Field, v: &str| w.example(field, v);
        match &self.problem {
            Problem::BsZero => format!("the block size must not be 0; use e.g. {}", eg(Field::Bs, "4k")),
            Problem::BsTooLarge { bs } => format!(
                "the block size {} is larger than the 256 MiB maximum; use e.g. {}",
                format_size(*bs),
                eg(Field::Bs, "1M")
            ),
            Problem::QdZero => {
                format!("the queue depth 0 is out of range; use 1 to {MAX_QD}, e.g. {}", eg(Field::Qd, "32"))
            }
            Problem::QdTooDeep { qd, engine } => too_deep(*qd, *engine, w.name(Field::Qd), w.name(Field::Threads)),
            Problem::PsyncThreads { qd, threads } => {
                too_many_threads(*qd, *threads, w.name(Field::Qd), w.name(Field::Threads))
            }
            Problem::Threads { threads } => {
                format!("{threads} workers is out of range; use 1 to {MAX_THREADS}, e.g. {}", eg(Field::Threads, "4"))
            }
            Problem::MixAbove100 { mix } => {
                format!("a read share of {mix}% is above 100%; use 0 to 100, e.g. {}", eg(Field::Mix, "70"))
            }
            Problem::SizeZero => format!(
                "the region size must not be 0; use e.g. {}, or leave it out to use the whole target",
                eg(Field::Size, "1G")
            ),
            Problem::SizeBelowBs { size, bs } => format!(
                "the region size {} is smaller than the block size {} ({}); use a larger {} or a smaller {}",
                format_size(*size),
                format_size(*bs),
                w.name(Field::Bs),
                w.name(Field::Size),
                w.name(Field::Bs)
            ),
            Problem::RateZero => format!(
                "a rate of 0 IOPS would never issue I/O; use e.g. {}, or leave it out for no limit",
                eg(Field::RateIops, "1000")
            ),
            Problem::RuntimeZero => {
                format!("a time-based run needs a runtime above 0; {}", w.runtime_advice())
            }
            Problem::OffsetUnaligned { offset } => format!(
                "the offset {offset} is not a multiple of {DIRECT_ALIGN} bytes, which direct I/O requires; use \
                 e.g. {}, or {} for buffered I/O",
                eg(Field::Offset, "1M"),
                w.buffered()
            ),
            Problem::ModifierUnaligned { modifier } => format!(
                "the offset modifier {modifier} is not a multiple of {DIRECT_ALIGN} bytes, which direct I/O \
                 requires; use e.g. {}, or direct=0",
                eg(Field::RwModifier, "write:4k")
            ),
            Problem::FillNeedsWrite { rw } => format!(
                "fill_device fills the target with sequential writes and needs rw=write, not rw={}; set rw=write",
                rw.name()
            ),
            Problem::ZonesWithModifier => {
                "strided zones together with rw=MODE:N or percentage_random are not supported; drop one of them"
                    .to_string()
            }
            Problem::ZonesUnaligned => format!(
                "zonesize, zonerange and zoneskip must be multiples of {DIRECT_ALIGN} bytes for direct I/O; use \
                 e.g. {}, or direct=0",
                eg(Field::Zones, "16m")
            ),
            Problem::ZoneBelowBs { range, bs } => {
                format!("the zone ({range} bytes) is smaller than the block size {bs}; use a larger zonerange")
            }
            Problem::BlockSizeOutOfRange { bs } => format!(
                "the block size {} is out of range; use sizes from 1 byte to 256 MiB, e.g. {}",
                format_size(*bs),
                eg(f, sizes_example(f))
            ),
            Problem::BlockSizeUnaligned { bs } => format!(
                "the block size {bs} is not a multiple of {DIRECT_ALIGN} bytes, which direct I/O requires; use \
                 e.g. {}, or direct=0",
                eg(f, sizes_example(f))
            ),
            Problem::SplitShares { sum } => {
                format!("the percentages add up to {sum}, not 100; use e.g. {}", eg(f, sizes_example(f)))
            }
            Problem::AlignOutOfRange { align } => {
                format!("the alignment {align} is out of range; use e.g. {}", eg(Field::BlockAlign, "4k"))
            }
            Problem::AlignUnaligned { align } => format!(
                "the alignment {align} is not a multiple of {DIRECT_ALIGN} bytes, which direct I/O requires; use \
                 e.g. {}",
                eg(Field::BlockAlign, "4k")
            ),
            Problem::Normal { dev_pct, center } => format!(
                "normal:{dev_pct}:{center} needs a deviation above 0 up to 100 % and a center from 0 to 1; use \
                 e.g. {}",
                eg(Field::Dist, "normal:10")
            ),
            Problem::ZonedAbs => format!(
                "zoned_abs needs zones above 0 bytes whose shares add up to 100; use e.g. {}",
                eg(Field::Dist, "zoned_abs:60/20G:40/100G")
            ),
            Problem::Zipf { theta } => {
                format!("the zipf exponent {theta} must be greater than 0; use e.g. {}", eg(Field::Dist, "zipf:1.2"))
            }
            Problem::Pareto { h } => format!(
                "the pareto shape {h} must be between 0 and 1 (exclusive); use e.g. {}",
                eg(Field::Dist, "pareto:0.9")
            ),
            Problem::NoZones => {
                format!("a zoned distribution needs at least one zone; use e.g. {}", eg(Field::Dist, ZONED_EXAMPLE))
            }
            Problem::ZoneInvalid { ops_pct, area_pct } => format!(
                "zone {ops_pct}/{area_pct} is invalid: ops must be 0 to 100 and area above 0 up to 100 percent; \
                 use e.g. {}",
                eg(Field::Dist, ZONED_EXAMPLE)
            ),
            Problem::ZoneSums { ops, area } => format!(
                "the zone percentages must each add up to 100 (ops add up to {ops}, areas to {area}); use e.g. {}",
                eg(Field::Dist, ZONED_EXAMPLE)
            ),
            Problem::CompressAbove100 { pct } => {
                format!("a compressible share of {pct}% is above 100%; use 0 to 100")
            }
            Problem::VerifyWithoutData { engine } => format!(
                "the {} engine stores no data, so there is nothing to verify; use io_uring or psync",
                engine.name()
            ),
            Problem::VerifyWithoutPattern => {
                format!("pattern verification needs the pattern; add {}", eg(Field::VerifyPattern, "0xdeadbeef"))
            }
            Problem::VerifyWithOffsetIncrement => "verification tracks one region per job, and offset_increment \
                                                   gives each worker its own; drop one of them"
                .to_string(),
            Problem::VerifyWithUnalignedSizes => {
                "verified chunks sit at multiples of their size; drop bs_unaligned (or verification)".to_string()
            }
            Problem::VerifyChunk { interval, bs } => format!(
                "a verify chunk of {} does not fit: it must be whole 512-byte sectors and divide the block size \
                 {}; use e.g. {}",
                format_size(*interval),
                format_size(*bs),
                eg(Field::VerifyInterval, "4k")
            ),
            Problem::VerifyChunkStart { interval } => format!(
                "verified I/O must start on {} chunk boundaries, and the rw=MODE:N hole or the zonerange/zoneskip \
                 does not; make them multiples of {}",
                format_size(*interval),
                format_size(*interval)
            ),
        }
    }
}

/// The example of a zoned distribution.
const ZONED_EXAMPLE: &str = "zoned:60/10:40/90";

/// The example value of variable block sizes set through `field`.
fn sizes_example(field: Field) -> &'static str {
    match field {
        Field::BsSplit => "4k/50:64k/50",
        Field::BsRange => "4k-64k",
        _ => "4k,64k",
    }
}

/// `invalid value for NAME: MESSAGE`, the fields named by their own names ([`Field::name`]).
impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "invalid value for {}: {}", OwnNames.name(self.field), self.message(&OwnNames))
    }
}

impl std::error::Error for FieldError {}

/// As [`FieldError`]'s, with ` (job "NAME")` after the field when the plan has several jobs.
impl std::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ValidationError::NoJobs => f.write_str("invalid value for job list: there are no jobs to run"),
            ValidationError::Job { job: None, error } => error.fmt(f),
            ValidationError::Job { job: Some(name), error } => write!(
                f,
                "invalid value for {} (job \"{name}\"): {}",
                OwnNames.name(error.field),
                error.message(&OwnNames)
            ),
        }
    }
}

impl std::error::Error for ValidationError {}

/// The first check `job` fails, if any.
pub(crate) fn check_job(job: &JobSpec) -> Result<(), FieldError> {
    // Variable sizes first: `bs` is then their largest, which they name better.
    if let Some(b) = &job.block_sizes {
        check_block_sizes(b, job.direct)?;
    }
    let fail = |field, problem| Err(FieldError::new(field, problem));
    if job.bs == 0 {
        return fail(Field::Bs, Problem::BsZero);
    }
    if job.bs > MAX_BS {
        return fail(Field::Bs, Problem::BsTooLarge { bs: job.bs });
    }
    if job.qd == 0 {
        return fail(Field::Qd, Problem::QdZero);
    }
    if let Some(p) = depth_limit(job.engine, job.qd, job.threads) {
        return fail(Field::Qd, p);
    }
    if job.threads == 0 || job.threads > MAX_THREADS {
        return fail(Field::Threads, Problem::Threads { threads: job.threads });
    }
    if job.mix > 100 {
        return fail(Field::Mix, Problem::MixAbove100 { mix: job.mix });
    }
    if let Some(size) = job.size {
        if size == 0 {
            return fail(Field::Size, Problem::SizeZero);
        }
        if size < job.bs {
            return fail(Field::Size, Problem::SizeBelowBs { size, bs: job.bs });
        }
    }
    if job.rate_iops == Some(0) {
        return fail(Field::RateIops, Problem::RateZero);
    }
    if job.time_based && job.runtime.is_zero() {
        return fail(Field::Runtime, Problem::RuntimeZero);
    }
    if job.direct && (job.offset | job.offset_increment) & (DIRECT_ALIGN - 1) != 0 {
        let offset = if !job.offset.is_multiple_of(DIRECT_ALIGN) { job.offset } else { job.offset_increment };
        return fail(Field::Offset, Problem::OffsetUnaligned { offset });
    }
    if job.direct && !job.rw.is_random() && job.rw_modifier % DIRECT_ALIGN as i64 != 0 {
        return fail(Field::RwModifier, Problem::ModifierUnaligned { modifier: job.rw_modifier });
    }
    if job.fill && job.rw != crate::model::RwMode::Write {
        return fail(Field::Fill, Problem::FillNeedsWrite { rw: job.rw });
    }
    if let Some(z) = &job.zones {
        if job.rw_modifier != 0 || job.percentage_random.is_some() {
            return fail(Field::Zones, Problem::ZonesWithModifier);
        }
        if job.direct && [z.size, z.range, z.skip].iter().any(|v| v % DIRECT_ALIGN != 0) {
            return fail(Field::Zones, Problem::ZonesUnaligned);
        }
        if z.range < job.bs {
            return fail(Field::Zones, Problem::ZoneBelowBs { range: z.range, bs: job.bs });
        }
    }
    check_dist(&job.dist).map_err(|p| FieldError::new(Field::Dist, p))?;
    if let DataPattern::Compress { pct } = job.data {
        if pct > 100 {
            return fail(Field::Data, Problem::CompressAbove100 { pct });
        }
    }
    if let Some(v) = &job.verify {
        check_verify(job, v)?;
    }
    Ok(())
}

/// Smallest verify chunk: the 96-byte header and some payload in one sector.
pub const MIN_VERIFY_INTERVAL: u64 = 512;

/// Verification needs a target, chunks of whole sectors that divide every block, and a pattern
/// for `pattern`.
fn check_verify(job: &JobSpec, v: &crate::model::VerifySpec) -> Result<(), FieldError> {
    let fail = |field, problem| Err(FieldError::new(field, problem));
    if !job.engine.uses_target() {
        return fail(Field::Verify, Problem::VerifyWithoutData { engine: job.engine });
    }
    if v.kind == crate::model::VerifyKind::Pattern && v.pattern.is_none() {
        return fail(Field::Verify, Problem::VerifyWithoutPattern);
    }
    if job.offset_increment > 0 {
        return fail(Field::Verify, Problem::VerifyWithOffsetIncrement);
    }
    if job.block_sizes.as_ref().is_some_and(|b| b.unaligned) {
        return fail(Field::Verify, Problem::VerifyWithUnalignedSizes);
    }
    let sizes = job.io_sizes();
    let interval = v.interval.unwrap_or_else(|| verify_interval(job));
    let bad = sizes.iter().find(|s| !s.is_multiple_of(interval.max(1)));
    if interval < MIN_VERIFY_INTERVAL || !interval.is_multiple_of(MIN_VERIFY_INTERVAL) || bad.is_some() {
        let bs = bad.copied().unwrap_or(job.bs);
        return fail(Field::VerifyInterval, Problem::VerifyChunk { interval, bs });
    }
    // Every I/O must start on a chunk boundary: sequential holes (`rw=write:N`) and strided
    // zones move offsets by their own amounts.
    let skip = if job.rw.is_random() { 0 } else { job.rw_modifier.unsigned_abs() };
    let zones_off = job.zones.is_some_and(|z| !z.range.is_multiple_of(interval) || !z.skip.is_multiple_of(interval));
    if !skip.is_multiple_of(interval) || zones_off {
        return fail(Field::VerifyInterval, Problem::VerifyChunkStart { interval });
    }
    Ok(())
}

/// A verified job's chunk size when none is given: its smallest block size (or alignment).
pub fn verify_interval(job: &JobSpec) -> u64 {
    job.io_sizes().into_iter().min().unwrap_or(job.bs).max(1)
}

/// What is wrong with `qd` I/Os in flight per worker and `threads` workers on `engine`, if
/// anything: the depth above [`MAX_QD`] ([`Problem::QdTooDeep`]), or psync's thread count
/// above [`MAX_PSYNC_THREADS`] ([`Problem::PsyncThreads`]). A zero depth is the caller's to
/// report.
pub fn depth_limit(engine: EngineKind, qd: u32, threads: u32) -> Option<Problem> {
    if qd > MAX_QD {
        return Some(Problem::QdTooDeep { qd, engine });
    }
    let psync_threads = u64::from(qd) * u64::from(threads.max(1));
    if engine == EngineKind::Psync && psync_threads > u64::from(MAX_PSYNC_THREADS) {
        return Some(Problem::PsyncThreads { qd, threads });
    }
    None
}

/// [`depth_limit`]'s finding as a sentence, if any. `qd_name`/`threads_name` are the options
/// as the user spells them (`iodepth`, `--qd`, `--max-qd`, …).
pub fn depth_problem(engine: EngineKind, qd: u32, threads: u32, qd_name: &str, threads_name: &str) -> Option<String> {
    match depth_limit(engine, qd, threads)? {
        Problem::QdTooDeep { qd, engine } => Some(too_deep(qd, engine, qd_name, threads_name)),
        Problem::PsyncThreads { qd, threads } => Some(too_many_threads(qd, threads, qd_name, threads_name)),
        // depth_limit finds nothing else.
        _ => None,
    }
}

/// [`Problem::QdTooDeep`]'s sentence.
fn too_deep(qd: u32, engine: EngineKind, qd_name: &str, threads_name: &str) -> String {
    let whose = match engine {
        EngineKind::IoUring => "io_uring's limit",
        EngineKind::Iocp => "the limit (io_uring's, kept on iocp)",
        EngineKind::Psync | EngineKind::Null | EngineKind::Mem => "the limit (io_uring's, kept on every engine)",
    };
    format!(
        "{qd} is above {whose} of {MAX_QD} per worker; use {threads_name} to add workers (each with its own queue) \
         and at most {MAX_QD} for {qd_name}"
    )
}

/// [`Problem::PsyncThreads`]'s sentence.
fn too_many_threads(qd: u32, threads: u32, qd_name: &str, threads_name: &str) -> String {
    let threads = threads.max(1);
    let psync_threads = u64::from(qd) * u64::from(threads);
    format!(
        "psync runs one thread per I/O in flight, and {qd} x {threads} workers is {psync_threads} threads, above the \
         limit of {MAX_PSYNC_THREADS}; lower {qd_name} or {threads_name}, or use the io_uring engine"
    )
}

/// Variable block sizes: every size above 0 and at most [`MAX_BS`], a split's shares summing
/// to 100, and with direct I/O every size and alignment a multiple of [`DIRECT_ALIGN`].
fn check_block_sizes(b: &BlockSizes, direct: bool) -> Result<(), FieldError> {
    for d in [&b.read, &b.write] {
        let field = match &d.sizes {
            SizeChoice::Fixed { .. } => Field::Bs,
            SizeChoice::Split { .. } => Field::BsSplit,
            SizeChoice::Range { .. } => Field::BsRange,
        };
        let fail = |problem| Err(FieldError::new(field, problem));
        for bs in d.sizes.named() {
            if bs == 0 || bs > MAX_BS {
                return fail(Problem::BlockSizeOutOfRange { bs });
            }
            if direct && bs % DIRECT_ALIGN != 0 {
                return fail(Problem::BlockSizeUnaligned { bs });
            }
        }
        if let SizeChoice::Split { parts } = &d.sizes {
            let sum: f64 = parts.iter().map(|p| p.pct).sum();
            if parts.is_empty() || (sum - 100.0).abs() > 1e-6 || parts.iter().any(|p| !(0.0..=100.0).contains(&p.pct)) {
                return fail(Problem::SplitShares { sum });
            }
        }
        if let Some(align) = d.align {
            let fail = |problem| Err(FieldError::new(Field::BlockAlign, problem));
            if align == 0 || align > MAX_BS {
                return fail(Problem::AlignOutOfRange { align });
            }
            if direct && align % DIRECT_ALIGN != 0 {
                return fail(Problem::AlignUnaligned { align });
            }
        }
    }
    Ok(())
}

/// The access distribution's parameters in range; the problem is the distribution's.
fn check_dist(dist: &Distribution) -> Result<(), Problem> {
    match dist {
        Distribution::Uniform => Ok(()),
        Distribution::Normal { dev_pct, center } => {
            if *dev_pct > 0.0 && *dev_pct <= 100.0 && (0.0..=1.0).contains(center) {
                Ok(())
            } else {
                Err(Problem::Normal { dev_pct: *dev_pct, center: *center })
            }
        }
        Distribution::ZonedAbs { zones } => {
            let ops: f64 = zones.iter().map(|z| z.ops_pct).sum();
            if zones.is_empty() || zones.iter().any(|z| z.bytes == 0) || (ops - 100.0).abs() > 1e-6 {
                Err(Problem::ZonedAbs)
            } else {
                Ok(())
            }
        }
        Distribution::Zipf { theta } => {
            if theta.is_finite() && *theta > 0.0 {
                Ok(())
            } else {
                Err(Problem::Zipf { theta: *theta })
            }
        }
        Distribution::Pareto { h } => {
            if *h > 0.0 && *h < 1.0 {
                Ok(())
            } else {
                Err(Problem::Pareto { h: *h })
            }
        }
        Distribution::Zoned { zones } => {
            if zones.is_empty() {
                return Err(Problem::NoZones);
            }
            for z in zones {
                let ok_ops = z.ops_pct.is_finite() && (0.0..=100.0).contains(&z.ops_pct);
                let ok_area = z.area_pct.is_finite() && z.area_pct > 0.0 && z.area_pct <= 100.0;
                if !ok_ops || !ok_area {
                    return Err(Problem::ZoneInvalid { ops_pct: z.ops_pct, area_pct: z.area_pct });
                }
            }
            let ops: f64 = zones.iter().map(|z| z.ops_pct).sum();
            let area: f64 = zones.iter().map(|z| z.area_pct).sum();
            if (ops - 100.0).abs() > 1e-6 || (area - 100.0).abs() > 1e-6 {
                return Err(Problem::ZoneSums { ops, area });
            }
            Ok(())
        }
    }
}

/// Check one job for problems that do not depend on the target: the first field that fails,
/// and why, e.g. [`Field::Qd`] with [`Problem::QdZero`].
///
/// A zero `runtime` is accepted when the job is not time-based (it then runs until
/// `size` bytes are done, as fio does without `runtime`).
pub fn validate_job(job: &JobSpec) -> Result<(), FieldError> {
    check_job(job)
}

/// Check every job of a plan. When the plan has several jobs, the error names the job
/// ([`ValidationError::Job`]'s `job`). An empty plan (no jobs at all) is an error too.
pub fn validate_plan(plan: &RunPlan) -> Result<(), ValidationError> {
    let total: usize = plan.groups.iter().map(|g| g.jobs.len()).sum();
    if total == 0 {
        return Err(ValidationError::NoJobs);
    }
    for job in plan.groups.iter().flat_map(|g| &g.jobs) {
        check_job(job).map_err(|error| ValidationError::Job { job: (total > 1).then(|| job.name.clone()), error })?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::model::{JobGroup, Zone};
    use std::time::Duration;

    fn err(f: impl FnOnce(&mut JobSpec)) -> FieldError {
        let mut j = JobSpec::default();
        f(&mut j);
        validate_job(&j).unwrap_err()
    }

    fn is(field: Field, problem: Problem) -> FieldError {
        FieldError { field, problem }
    }

    /// Words that show what the caller named: `<qd>`, `<qd>:32`.
    struct Marked;

    impl Words for Marked {
        fn name(&self, field: Field) -> &str {
            match field {
                Field::Bs => "<bs>",
                Field::Qd => "<qd>",
                Field::Threads => "<threads>",
                Field::Size => "<size>",
                f => f.name(),
            }
        }
        fn example(&self, field: Field, value: &str) -> String {
            format!("{}:{value}", self.name(field))
        }
        fn buffered(&self) -> &str {
            "<buffered>"
        }
        fn runtime_advice(&self) -> String {
            "<runtime advice>".into()
        }
    }

    #[test]
    fn default_job_is_valid() {
        validate_job(&JobSpec::default()).unwrap();
    }

    #[test]
    fn runtime_zero_ok_when_not_time_based() {
        let j = JobSpec { runtime: Duration::ZERO, time_based: false, ..JobSpec::default() };
        validate_job(&j).unwrap();
        assert_eq!(err(|j| j.runtime = Duration::ZERO), is(Field::Runtime, Problem::RuntimeZero));
    }

    #[test]
    fn each_check_names_its_field_and_numbers() {
        assert_eq!(err(|j| j.bs = 0), is(Field::Bs, Problem::BsZero));
        assert_eq!(err(|j| j.bs = MAX_BS + 1), is(Field::Bs, Problem::BsTooLarge { bs: MAX_BS + 1 }));
        assert_eq!(err(|j| j.qd = 0), is(Field::Qd, Problem::QdZero));
        assert_eq!(err(|j| j.threads = 0), is(Field::Threads, Problem::Threads { threads: 0 }));
        assert_eq!(err(|j| j.threads = 1025), is(Field::Threads, Problem::Threads { threads: 1025 }));
        assert_eq!(err(|j| j.mix = 101), is(Field::Mix, Problem::MixAbove100 { mix: 101 }));
        assert_eq!(err(|j| j.size = Some(0)), is(Field::Size, Problem::SizeZero));
        assert_eq!(err(|j| j.rate_iops = Some(0)), is(Field::RateIops, Problem::RateZero));
        assert_eq!(err(|j| j.dist = Distribution::Zipf { theta: 0.0 }), is(Field::Dist, Problem::Zipf { theta: 0.0 }));
        assert_eq!(err(|j| j.dist = Distribution::Pareto { h: 1.0 }), is(Field::Dist, Problem::Pareto { h: 1.0 }));
        assert_eq!(err(|j| j.dist = Distribution::Zoned { zones: vec![] }), is(Field::Dist, Problem::NoZones));
        assert_eq!(
            err(|j| j.dist = Distribution::Zoned { zones: vec![Zone { ops_pct: 50.0, area_pct: 50.0 }] }),
            is(Field::Dist, Problem::ZoneSums { ops: 50.0, area: 50.0 })
        );
        assert_eq!(
            err(|j| j.dist = Distribution::Zoned { zones: vec![Zone { ops_pct: 100.0, area_pct: 0.0 }] }),
            is(Field::Dist, Problem::ZoneInvalid { ops_pct: 100.0, area_pct: 0.0 })
        );
        assert_eq!(
            err(|j| j.data = DataPattern::Compress { pct: 101 }),
            is(Field::Data, Problem::CompressAbove100 { pct: 101 })
        );
        assert_eq!(err(|j| j.offset = 100), is(Field::Offset, Problem::OffsetUnaligned { offset: 100 }));
        assert_eq!(err(|j| j.offset_increment = 100), is(Field::Offset, Problem::OffsetUnaligned { offset: 100 }));
        let e = err(|j| {
            j.size = Some(1024);
            j.bs = 4096;
        });
        assert_eq!(e, is(Field::Size, Problem::SizeBelowBs { size: 1024, bs: 4096 }));
    }

    #[test]
    fn zipf_nan_is_refused() {
        let e = err(|j| j.dist = Distribution::Zipf { theta: f64::NAN });
        assert!(matches!(e.problem, Problem::Zipf { theta } if theta.is_nan()));
        assert!(e.to_string().contains("greater than 0"));
    }

    #[test]
    fn depth_limits_follow_the_engine() {
        // io_uring's ring limit holds on every engine; the message names the engine's reason.
        assert_eq!(
            err(|j| j.qd = 65_536),
            is(Field::Qd, Problem::QdTooDeep { qd: 65_536, engine: EngineKind::IoUring })
        );
        let e = err(|j| {
            j.engine = EngineKind::Null;
            j.qd = MAX_QD + 1;
        });
        assert_eq!(e, is(Field::Qd, Problem::QdTooDeep { qd: MAX_QD + 1, engine: EngineKind::Null }));
        assert!(e.message(&Marked).starts_with("32769 is above the limit (io_uring's"), "{e}");
        // psync: one thread per I/O in flight.
        let e = err(|j| {
            j.engine = EngineKind::Psync;
            j.qd = 128;
            j.threads = 64;
        });
        assert_eq!(e, is(Field::Qd, Problem::PsyncThreads { qd: 128, threads: 64 }));
        assert!(e.message(&Marked).contains("128 x 64 workers is 8192 threads, above the limit of 4096"), "{e}");
        let mut ok = JobSpec { engine: EngineKind::Psync, qd: 64, threads: 64, ..JobSpec::default() };
        validate_job(&ok).unwrap();
        ok.engine = EngineKind::IoUring;
        ok.qd = MAX_QD;
        ok.threads = MAX_THREADS;
        validate_job(&ok).unwrap();
        assert_eq!(depth_problem(EngineKind::Psync, 4096, 1, "iodepth", "numjobs"), None);
        assert!(depth_problem(EngineKind::Psync, 4097, 1, "iodepth", "numjobs")
            .is_some_and(|m| m.contains("lower iodepth or numjobs")));
        assert_eq!(
            depth_problem(EngineKind::IoUring, 65_536, 1, "iodepth", "numjobs").unwrap(),
            "65536 is above io_uring's limit of 32768 per worker; use numjobs to add workers (each with its own \
             queue) and at most 32768 for iodepth"
        );
        assert_eq!(depth_limit(EngineKind::Psync, 0, 0), None);
    }

    #[test]
    fn messages_are_in_the_callers_words() {
        let e = is(Field::Size, Problem::SizeBelowBs { size: 1024, bs: 4096 });
        assert_eq!(
            e.message(&Marked),
            "the region size 1 KiB is smaller than the block size 4 KiB (<bs>); use a larger <size> or a smaller <bs>"
        );
        assert_eq!(
            is(Field::Qd, Problem::QdTooDeep { qd: 65_536, engine: EngineKind::IoUring }).message(&Marked),
            "65536 is above io_uring's limit of 32768 per worker; use <threads> to add workers (each with its own \
             queue) and at most 32768 for <qd>"
        );
        assert_eq!(
            is(Field::Offset, Problem::OffsetUnaligned { offset: 100 }).message(&Marked),
            "the offset 100 is not a multiple of 512 bytes, which direct I/O requires; use e.g. offset:1M, or \
             <buffered> for buffered I/O"
        );
        assert_eq!(
            is(Field::Runtime, Problem::RuntimeZero).message(&Marked),
            "a time-based run needs a runtime above 0; <runtime advice>"
        );
        // Variable block sizes: the example follows the field that set them.
        let sizes = |field| is(field, Problem::BlockSizeOutOfRange { bs: 0 }).message(&Marked);
        assert!(sizes(Field::Bs).ends_with("e.g. <bs>:4k,64k"));
        assert!(sizes(Field::BsSplit).ends_with("e.g. bs_split:4k/50:64k/50"));
        assert!(sizes(Field::BsRange).ends_with("e.g. bs_range:4k-64k"));
    }

    #[test]
    fn display_names_fields_by_their_own_names() {
        assert_eq!(
            err(|j| j.qd = 0).to_string(),
            "invalid value for qd: the queue depth 0 is out of range; use 1 to 32768, e.g. qd=32"
        );
        assert_eq!(
            err(|j| j.offset = 100).to_string(),
            "invalid value for offset: the offset 100 is not a multiple of 512 bytes, which direct I/O requires; \
             use e.g. offset=1M, or direct=false for buffered I/O"
        );
        let names: std::collections::HashSet<&str> = Field::ALL.iter().map(|f| f.name()).collect();
        assert_eq!(names.len(), Field::ALL.len(), "each field has a name of its own");
    }

    #[test]
    fn accepted_edge_values() {
        let ok = |f: fn(&mut JobSpec)| {
            let mut j = JobSpec::default();
            f(&mut j);
            validate_job(&j).unwrap();
        };
        ok(|j| j.bs = MAX_BS);
        ok(|j| j.qd = MAX_QD);
        ok(|j| j.threads = MAX_THREADS);
        ok(|j| j.mix = 100);
        ok(|j| j.size = Some(4096));
        ok(|j| j.size = Some(4096 * 3 + 7)); // not a multiple of bs: engine rounds down
        ok(|j| {
            j.direct = false;
            j.offset = 100;
        });
        ok(|j| {
            j.dist = Distribution::Zoned {
                zones: vec![Zone { ops_pct: 100.0, area_pct: 50.0 }, Zone { ops_pct: 0.0, area_pct: 50.0 }],
            }
        });
        ok(|j| j.data = DataPattern::Compress { pct: 100 });
    }

    #[test]
    fn plan_names_the_job_when_several() {
        let good = JobSpec::default();
        let bad = JobSpec { name: "seqread".into(), qd: 0, ..JobSpec::default() };
        let one = RunPlan {
            groups: vec![JobGroup { jobs: vec![bad.clone()], group_reporting: false }],
            ..RunPlan::default()
        };
        assert_eq!(validate_plan(&one).unwrap_err(), ValidationError::Job { job: None, error: err(|j| j.qd = 0) });
        let two = RunPlan {
            groups: vec![
                JobGroup { jobs: vec![good.clone()], group_reporting: false },
                JobGroup { jobs: vec![bad], group_reporting: false },
            ],
            ..RunPlan::default()
        };
        let e = validate_plan(&two).unwrap_err();
        assert_eq!(e, ValidationError::Job { job: Some("seqread".into()), error: err(|j| j.qd = 0) });
        assert!(e.to_string().starts_with("invalid value for qd (job \"seqread\"): the queue depth 0"), "{e}");
        let fine = RunPlan {
            groups: vec![JobGroup { jobs: vec![good.clone(), good], group_reporting: true }],
            ..RunPlan::default()
        };
        validate_plan(&fine).unwrap();
        assert_eq!(validate_plan(&RunPlan::default()).unwrap_err(), ValidationError::NoJobs);
        assert!(validate_plan(&RunPlan::default()).unwrap_err().to_string().contains("no jobs"));
    }
}
