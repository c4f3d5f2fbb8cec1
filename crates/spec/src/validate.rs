//! Target-independent checks of a job: everything that can be judged without opening the
//! target (alignment to the device's logical block size, target size etc. are checked
//! by whoever opens it).
//!
//! Errors name the command-line flag (`--bs`, `--qd`, …). The fio job-file parser runs
//! the same checks but names the job-file option (`bs`, `iodepth`, …) and its line.

use crate::error::SpecError;
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

/// The job fields a check can complain about.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Field {
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
    BsSplit,
    BsRange,
    BlockAlign,
    RwModifier,
    Zones,
    Fill,
}

/// How options are spelled in messages: as CLI flags or as fio job-file options.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Style {
    Cli,
    Fio,
}

impl Style {
    pub(crate) fn name(self, f: Field) -> &'static str {
        match (self, f) {
            (Style::Cli, Field::Bs) => "--bs",
            (Style::Cli, Field::Qd) => "--qd",
            (Style::Cli, Field::Threads) => "--threads",
            (Style::Cli, Field::Mix) => "--mix",
            (Style::Cli, Field::Size) => "--size",
            (Style::Cli, Field::Offset) => "--offset",
            (Style::Cli, Field::Runtime) => "--runtime",
            (Style::Cli, Field::RateIops) => "--rate-iops",
            (Style::Cli, Field::Dist) => "--dist",
            (Style::Cli, Field::Data) => "--data",
            (Style::Cli, Field::Verify) => "--verify",
            (Style::Cli, Field::VerifyInterval) => "--verify-interval",
            (Style::Fio, Field::Verify) => "verify",
            (Style::Fio, Field::VerifyInterval) => "verify_interval",
            (Style::Cli, Field::BsSplit | Field::BsRange | Field::BlockAlign) => "--bs",
            (Style::Cli, Field::RwModifier) => "--rw",
            (Style::Cli, Field::Zones) => "--size",
            (Style::Cli, Field::Fill) => "--rw",
            (Style::Fio, Field::Bs) => "bs",
            (Style::Fio, Field::Qd) => "iodepth",
            (Style::Fio, Field::Threads) => "numjobs",
            (Style::Fio, Field::Mix) => "rwmixread",
            (Style::Fio, Field::Size) => "size",
            (Style::Fio, Field::Offset) => "offset",
            (Style::Fio, Field::Runtime) => "runtime",
            (Style::Fio, Field::RateIops) => "rate_iops",
            (Style::Fio, Field::Dist) => "random_distribution",
            (Style::Fio, Field::Data) => "buffer_compress_percentage",
            (Style::Fio, Field::BsSplit) => "bssplit",
            (Style::Fio, Field::BsRange) => "bsrange",
            (Style::Fio, Field::BlockAlign) => "blockalign",
            (Style::Fio, Field::RwModifier) => "rw",
            (Style::Fio, Field::Zones) => "zonesize",
            (Style::Fio, Field::Fill) => "fill_device",
        }
    }
    /// An example setting: `--bs 4k` or `bs=4k`.
    fn example(self, f: Field, v: &str) -> String {
        match self {
            Style::Cli => format!("{} {v}", self.name(f)),
            Style::Fio => format!("{}={v}", self.name(f)),
        }
    }
}

/// A failed check: which field, and the message (without the "invalid value for" prefix).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Problem {
    pub field: Field,
    pub message: String,
}

pub(crate) fn check_job(job: &JobSpec, st: Style) -> Result<(), Problem> {
    // Variable sizes first: `bs` is then their largest, which they name better.
    if let Some(b) = &job.block_sizes {
        check_block_sizes(b, job.direct, st)?;
    }
    let fail = |field, message: String| Err(Problem { field, message });
    if job.bs == 0 {
        return fail(Field::Bs, format!("the block size must not be 0; use e.g. {}", st.example(Field::Bs, "4k")));
    }
    if job.bs > MAX_BS {
        return fail(
            Field::Bs,
            format!(
                "the block size {} is larger than the 256 MiB maximum; use e.g. {}",
                format_size(job.bs),
                st.example(Field::Bs, "1M")
            ),
        );
    }
    if job.qd == 0 {
        return fail(
            Field::Qd,
            format!("the queue depth 0 is out of range; use 1 to {MAX_QD}, e.g. {}", st.example(Field::Qd, "32")),
        );
    }
    if let Some(m) = depth_problem(job.engine, job.qd, job.threads, st.name(Field::Qd), st.name(Field::Threads)) {
        return fail(Field::Qd, m);
    }
    if job.threads == 0 || job.threads > MAX_THREADS {
        return fail(
            Field::Threads,
            format!(
                "{} workers is out of range; use 1 to {MAX_THREADS}, e.g. {}",
                job.threads,
                st.example(Field::Threads, "4")
            ),
        );
    }
    if job.mix > 100 {
        return fail(
            Field::Mix,
            format!("a read share of {}% is above 100%; use 0 to 100, e.g. {}", job.mix, st.example(Field::Mix, "70")),
        );
    }
    if let Some(size) = job.size {
        if size == 0 {
            return fail(
                Field::Size,
                format!(
                    "the region size must not be 0; use e.g. {}, or leave it out to use the \
                     whole target",
                    st.example(Field::Size, "1G")
                ),
            );
        }
        if size < job.bs {
            return fail(
                Field::Size,
                format!(
                    "the region size {} is smaller than the block size {} ({}); use a larger \
                     {} or a smaller {}",
                    format_size(size),
                    format_size(job.bs),
                    st.name(Field::Bs),
                    st.name(Field::Size),
                    st.name(Field::Bs)
                ),
            );
        }
    }
    if job.rate_iops == Some(0) {
        return fail(
            Field::RateIops,
            format!(
                "a rate of 0 IOPS would never issue I/O; use e.g. {}, or leave it out for no \
                 limit",
                st.example(Field::RateIops, "1000")
            ),
        );
    }
    if job.time_based && job.runtime.is_zero() {
        let how = match st {
            Style::Cli => "use e.g. --runtime 5s".to_string(),
            Style::Fio => "set e.g. runtime=30s, or remove time_based to run until size bytes are done".to_string(),
        };
        return fail(Field::Runtime, format!("a time-based run needs a runtime above 0; {how}"));
    }
    if job.direct && (job.offset | job.offset_increment) & (DIRECT_ALIGN - 1) != 0 {
        let buffered = match st {
            Style::Cli => "--buffered",
            Style::Fio => "direct=0",
        };
        return fail(
            Field::Offset,
            format!(
                "the offset {} is not a multiple of {DIRECT_ALIGN} bytes, which direct I/O \
                 requires; use e.g. {}, or {buffered} for buffered I/O",
                if !job.offset.is_multiple_of(DIRECT_ALIGN) { job.offset } else { job.offset_increment },
                st.example(Field::Offset, "1M")
            ),
        );
    }
    if job.direct && !job.rw.is_random() && job.rw_modifier % DIRECT_ALIGN as i64 != 0 {
        return fail(
            Field::RwModifier,
            format!(
                "the offset modifier {} is not a multiple of {DIRECT_ALIGN} bytes, which direct I/O requires; use \
                 e.g. {}, or direct=0",
                job.rw_modifier,
                st.example(Field::RwModifier, "write:4k")
            ),
        );
    }
    if job.fill && job.rw != crate::model::RwMode::Write {
        return fail(
            Field::Fill,
            format!(
                "fill_device fills the target with sequential writes and needs rw=write, not rw={}; set rw=write",
                job.rw.name()
            ),
        );
    }
    if let Some(z) = &job.zones {
        if job.rw_modifier != 0 || job.percentage_random.is_some() {
            return fail(
                Field::Zones,
                "strided zones together with rw=MODE:N or percentage_random are not supported; drop one of them".into(),
            );
        }
        if job.direct && [z.size, z.range, z.skip].iter().any(|v| v % DIRECT_ALIGN != 0) {
            return fail(
                Field::Zones,
                format!(
                    "zonesize, zonerange and zoneskip must be multiples of {DIRECT_ALIGN} bytes for direct I/O; \
                     use e.g. {}, or direct=0",
                    st.example(Field::Zones, "16m")
                ),
            );
        }
        if z.range < job.bs {
            return fail(
                Field::Zones,
                format!(
                    "the zone ({} bytes) is smaller than the block size {}; use a larger zonerange",
                    z.range, job.bs
                ),
            );
        }
    }
    check_dist(&job.dist, st)?;
    if let DataPattern::Compress { pct } = job.data {
        if pct > 100 {
            return fail(Field::Data, format!("a compressible share of {pct}% is above 100%; use 0 to 100"));
        }
    }
    if let Some(v) = &job.verify {
        check_verify(job, v, st)?;
    }
    Ok(())
}

/// Smallest verify chunk: the 96-byte header and some payload in one sector.
pub const MIN_VERIFY_INTERVAL: u64 = 512;

/// Verification needs a target, chunks of whole sectors that divide every block, and a pattern
/// for `pattern`.
fn check_verify(job: &JobSpec, v: &crate::model::VerifySpec, st: Style) -> Result<(), Problem> {
    let fail = |field, message: String| Err(Problem { field, message });
    if !job.engine.uses_target() {
        return fail(
            Field::Verify,
            format!(
                "the {} engine stores no data, so there is nothing to verify; use io_uring or psync",
                job.engine.name()
            ),
        );
    }
    if v.kind == crate::model::VerifyKind::Pattern && v.pattern.is_none() {
        let p = match st {
            Style::Cli => "--verify-pattern 0xdeadbeef",
            Style::Fio => "verify_pattern=0xdeadbeef",
        };
        return fail(Field::Verify, format!("pattern verification needs the pattern; add {p}"));
    }
    if job.offset_increment > 0 {
        return fail(
            Field::Verify,
            "verification tracks one region per job, and offset_increment gives each worker its own; drop one of \
             them"
                .to_string(),
        );
    }
    if job.block_sizes.as_ref().is_some_and(|b| b.unaligned) {
        return fail(
            Field::Verify,
            "verified chunks sit at multiples of their size; drop bs_unaligned (or verification)".to_string(),
        );
    }
    let sizes = job.io_sizes();
    let interval = v.interval.unwrap_or_else(|| verify_interval(job));
    let bad = sizes.iter().find(|s| !s.is_multiple_of(interval.max(1)));
    if interval < MIN_VERIFY_INTERVAL || !interval.is_multiple_of(MIN_VERIFY_INTERVAL) || bad.is_some() {
        return fail(
            Field::VerifyInterval,
            format!(
                "a verify chunk of {} does not fit: it must be whole 512-byte sectors and divide the block size {}; \
                 use e.g. {}",
                format_size(interval),
                format_size(bad.copied().unwrap_or(job.bs)),
                st.example(Field::VerifyInterval, "4k")
            ),
        );
    }
    // Every I/O must start on a chunk boundary: sequential holes (`rw=write:N`) and strided
    // zones move offsets by their own amounts.
    let skip = if job.rw.is_random() { 0 } else { job.rw_modifier.unsigned_abs() };
    let zones_off = job.zones.is_some_and(|z| !z.range.is_multiple_of(interval) || !z.skip.is_multiple_of(interval));
    if !skip.is_multiple_of(interval) || zones_off {
        return fail(
            Field::VerifyInterval,
            format!(
                "verified I/O must start on {} chunk boundaries, and the rw=MODE:N hole or the zonerange/zoneskip \
                 does not; make them multiples of {}",
                format_size(interval),
                format_size(interval)
            ),
        );
    }
    Ok(())
}

/// A verified job's chunk size when none is given: its smallest block size (or alignment).
pub fn verify_interval(job: &JobSpec) -> u64 {
    job.io_sizes().into_iter().min().unwrap_or(job.bs).max(1)
}

/// What is wrong with `qd` I/Os in flight per worker and `threads` workers on `engine`, if
/// anything: the depth above [`MAX_QD`], or psync's thread count above
/// [`MAX_PSYNC_THREADS`]. `qd_name`/`threads_name` are the options as the user spells them
/// (`--qd`, `iodepth`, `--max-qd`, …). A zero depth is the caller's to report.
pub fn depth_problem(engine: EngineKind, qd: u32, threads: u32, qd_name: &str, threads_name: &str) -> Option<String> {
    if qd > MAX_QD {
        let whose = match engine {
            EngineKind::IoUring => "io_uring's limit",
            EngineKind::Iocp => "the limit (io_uring's, kept on iocp)",
            EngineKind::Psync | EngineKind::Null | EngineKind::Mem => "the limit (io_uring's, kept on every engine)",
        };
        return Some(format!(
            "{qd} is above {whose} of {MAX_QD} per worker; use {threads_name} to add workers (each with its \
             own queue) and at most {MAX_QD} for {qd_name}"
        ));
    }
    let psync_threads = u64::from(qd) * u64::from(threads.max(1));
    if engine == EngineKind::Psync && psync_threads > u64::from(MAX_PSYNC_THREADS) {
        return Some(format!(
            "psync runs one thread per I/O in flight, and {qd} x {} workers is {psync_threads} threads, above \
             the limit of {MAX_PSYNC_THREADS}; lower {qd_name} or {threads_name}, or use the io_uring engine",
            threads.max(1)
        ));
    }
    None
}

/// Variable block sizes: every size above 0 and at most [`MAX_BS`], a split's shares summing
/// to 100, and with direct I/O every size and alignment a multiple of [`DIRECT_ALIGN`].
fn check_block_sizes(b: &BlockSizes, direct: bool, st: Style) -> Result<(), Problem> {
    for d in [&b.read, &b.write] {
        let (field, eg) = match &d.sizes {
            SizeChoice::Fixed { .. } => (Field::Bs, "4k,64k"),
            SizeChoice::Split { .. } => (Field::BsSplit, "4k/50:64k/50"),
            SizeChoice::Range { .. } => (Field::BsRange, "4k-64k"),
        };
        let fail = |message: String| Err(Problem { field, message });
        for bs in d.sizes.named() {
            if bs == 0 || bs > MAX_BS {
                return fail(format!(
                    "the block size {} is out of range; use sizes from 1 byte to 256 MiB, e.g. {}",
                    format_size(bs),
                    st.example(field, eg)
                ));
            }
            if direct && bs % DIRECT_ALIGN != 0 {
                return fail(format!(
                    "the block size {bs} is not a multiple of {DIRECT_ALIGN} bytes, which direct I/O requires; use e.g. {}, or direct=0",
                    st.example(field, eg)
                ));
            }
        }
        if let SizeChoice::Split { parts } = &d.sizes {
            let sum: f64 = parts.iter().map(|p| p.pct).sum();
            if parts.is_empty() || (sum - 100.0).abs() > 1e-6 || parts.iter().any(|p| !(0.0..=100.0).contains(&p.pct)) {
                return fail(format!("the percentages add up to {sum}, not 100; use e.g. {}", st.example(field, eg)));
            }
        }
        if let Some(a) = d.align {
            let fail = |message: String| Err(Problem { field: Field::BlockAlign, message });
            if a == 0 || a > MAX_BS {
                return fail(format!(
                    "the alignment {a} is out of range; use e.g. {}",
                    st.example(Field::BlockAlign, "4k")
                ));
            }
            if direct && a % DIRECT_ALIGN != 0 {
                return fail(format!(
                    "the alignment {a} is not a multiple of {DIRECT_ALIGN} bytes, which direct I/O requires; use e.g. {}",
                    st.example(Field::BlockAlign, "4k")
                ));
            }
        }
    }
    Ok(())
}

fn check_dist(dist: &Distribution, st: Style) -> Result<(), Problem> {
    let fail = |message: String| Err(Problem { field: Field::Dist, message });
    match dist {
        Distribution::Uniform => Ok(()),
        Distribution::Normal { dev_pct, center } => {
            if *dev_pct > 0.0 && *dev_pct <= 100.0 && (0.0..=1.0).contains(center) {
                Ok(())
            } else {
                fail(format!(
                    "normal:{dev_pct}:{center} needs a deviation above 0 up to 100 % and a center from 0 to 1; use \
                     e.g. {}",
                    st.example(Field::Dist, "normal:10")
                ))
            }
        }
        Distribution::ZonedAbs { zones } => {
            let ops: f64 = zones.iter().map(|z| z.ops_pct).sum();
            if zones.is_empty() || zones.iter().any(|z| z.bytes == 0) || (ops - 100.0).abs() > 1e-6 {
                fail(format!(
                    "zoned_abs needs zones above 0 bytes whose shares add up to 100; use e.g. {}",
                    st.example(Field::Dist, "zoned_abs:60/20G:40/100G")
                ))
            } else {
                Ok(())
            }
        }
        Distribution::Zipf { theta } => {
            if theta.is_finite() && *theta > 0.0 {
                Ok(())
            } else {
                fail(format!(
                    "the zipf exponent {theta} must be greater than 0; use e.g. {}",
                    st.example(Field::Dist, "zipf:1.2")
                ))
            }
        }
        Distribution::Pareto { h } => {
            if *h > 0.0 && *h < 1.0 {
                Ok(())
            } else {
                fail(format!(
                    "the pareto shape {h} must be between 0 and 1 (exclusive); use e.g. {}",
                    st.example(Field::Dist, "pareto:0.9")
                ))
            }
        }
        Distribution::Zoned { zones } => {
            let eg = st.example(Field::Dist, "zoned:60/10:40/90");
            if zones.is_empty() {
                return fail(format!("a zoned distribution needs at least one zone; use e.g. {eg}"));
            }
            for z in zones {
                let ok_ops = z.ops_pct.is_finite() && (0.0..=100.0).contains(&z.ops_pct);
                let ok_area = z.area_pct.is_finite() && z.area_pct > 0.0 && z.area_pct <= 100.0;
                if !ok_ops || !ok_area {
                    return fail(format!(
                        "zone {}/{} is invalid: ops must be 0 to 100 and area above 0 up to 100 \
                         percent; use e.g. {eg}",
                        z.ops_pct, z.area_pct
                    ));
                }
            }
            let ops: f64 = zones.iter().map(|z| z.ops_pct).sum();
            let area: f64 = zones.iter().map(|z| z.area_pct).sum();
            if (ops - 100.0).abs() > 1e-6 || (area - 100.0).abs() > 1e-6 {
                return fail(format!(
                    "the zone percentages must each add up to 100 (ops add up to {ops}, areas \
                     to {area}); use e.g. {eg}"
                ));
            }
            Ok(())
        }
    }
}

/// Check one job for problems that do not depend on the target. The error names the
/// command-line flag to fix, e.g. `invalid value for --qd: the queue depth 0 is out of
/// range; use 1 to 32768, e.g. --qd 32`.
///
/// A zero `runtime` is accepted when the job is not time-based (it then runs until
/// `size` bytes are done, as fio does without `runtime`).
pub fn validate_job(job: &JobSpec) -> Result<(), SpecError> {
    check_job(job, Style::Cli).map_err(|p| SpecError::value(Style::Cli.name(p.field), p.message))
}

/// Check every job of a plan. When the plan has several jobs, the option in the error
/// is followed by the job's name: `invalid value for --bs (job "seqread"): ...`.
/// An empty plan (no jobs at all) is an error too.
pub fn validate_plan(plan: &RunPlan) -> Result<(), SpecError> {
    let total: usize = plan.groups.iter().map(|g| g.jobs.len()).sum();
    if total == 0 {
        return Err(SpecError::value(
            "job list",
            "there are no jobs to run; give a job file with at least one job section, or \
             workload options",
        ));
    }
    for job in plan.groups.iter().flat_map(|g| &g.jobs) {
        if let Err(p) = check_job(job, Style::Cli) {
            let option = Style::Cli.name(p.field);
            let option = if total > 1 { format!("{option} (job \"{}\")", job.name) } else { option.into() };
            return Err(SpecError::value(option, p.message));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::model::{JobGroup, Zone};
    use std::time::Duration;

    fn err(f: impl FnOnce(&mut JobSpec)) -> String {
        let mut j = JobSpec::default();
        f(&mut j);
        validate_job(&j).unwrap_err().to_string()
    }

    #[test]
    fn default_job_is_valid() {
        validate_job(&JobSpec::default()).unwrap();
    }

    #[test]
    fn runtime_zero_ok_when_not_time_based() {
        let j = JobSpec { runtime: Duration::ZERO, time_based: false, ..JobSpec::default() };
        validate_job(&j).unwrap();
        let e = err(|j| j.runtime = Duration::ZERO);
        assert_eq!(
            e,
            "invalid value for --runtime: a time-based run needs a runtime above 0; use e.g. \
             --runtime 5s"
        );
    }

    #[test]
    fn each_check_names_its_flag() {
        assert!(err(|j| j.bs = 0).starts_with("invalid value for --bs: the block size must not be 0"));
        assert!(err(|j| j.bs = MAX_BS + 1).contains("256 MiB maximum"));
        assert!(err(|j| j.bs = MAX_BS + 1).starts_with("invalid value for --bs:"));
        assert!(err(|j| j.qd = 0).starts_with("invalid value for --qd: the queue depth 0"));
        assert!(err(|j| j.qd = MAX_QD + 1).starts_with("invalid value for --qd:"));
        assert!(err(|j| j.threads = 0).starts_with("invalid value for --threads:"));
        assert!(err(|j| j.threads = 1025).starts_with("invalid value for --threads:"));
        assert!(err(|j| j.mix = 101).starts_with("invalid value for --mix:"));
        assert!(err(|j| j.size = Some(0)).starts_with("invalid value for --size: the region size must not be 0"));
        assert!(err(|j| j.rate_iops = Some(0)).starts_with("invalid value for --rate-iops:"));
        assert!(err(|j| j.dist = Distribution::Zipf { theta: 0.0 }).starts_with("invalid value for --dist:"));
        assert!(err(|j| j.dist = Distribution::Zipf { theta: f64::NAN }).contains("greater than 0"));
        assert!(err(|j| j.dist = Distribution::Pareto { h: 1.0 }).contains("between 0 and 1"));
        assert!(err(|j| j.dist = Distribution::Zoned { zones: vec![] }).contains("at least one zone"));
        assert!(err(|j| j.dist = Distribution::Zoned { zones: vec![Zone { ops_pct: 50.0, area_pct: 50.0 }] })
            .contains("add up to 100"));
        assert!(err(|j| j.dist = Distribution::Zoned { zones: vec![Zone { ops_pct: 100.0, area_pct: 0.0 }] })
            .contains("is invalid"));
        assert!(err(|j| j.data = DataPattern::Compress { pct: 101 }).starts_with("invalid value for --data:"));
        let e = err(|j| j.offset = 100);
        assert!(e.starts_with("invalid value for --offset: the offset 100 is not a multiple of 512"), "{e}");
        assert!(e.contains("--buffered"));
        let e = err(|j| {
            j.size = Some(1024);
            j.bs = 4096;
        });
        assert_eq!(
            e,
            "invalid value for --size: the region size 1 KiB is smaller than the block size 4 \
             KiB (--bs); use a larger --size or a smaller --bs"
        );
    }

    #[test]
    fn depth_limits_follow_the_engine() {
        // io_uring's ring limit holds on every engine; the message names the engine's reason.
        let e = err(|j| j.qd = 65_536);
        assert_eq!(
            e,
            "invalid value for --qd: 65536 is above io_uring's limit of 32768 per worker; use --threads to add \
             workers (each with its own queue) and at most 32768 for --qd"
        );
        let e = err(|j| {
            j.engine = EngineKind::Null;
            j.qd = MAX_QD + 1;
        });
        assert!(e.starts_with("invalid value for --qd: 32769 is above the limit (io_uring's"), "{e}");
        // psync: one thread per I/O in flight.
        let e = err(|j| {
            j.engine = EngineKind::Psync;
            j.qd = 128;
            j.threads = 64;
        });
        assert!(e.contains("128 x 64 workers is 8192 threads, above the limit of 4096"), "{e}");
        let mut ok = JobSpec { engine: EngineKind::Psync, qd: 64, threads: 64, ..JobSpec::default() };
        validate_job(&ok).unwrap();
        ok.engine = EngineKind::IoUring;
        ok.qd = MAX_QD;
        ok.threads = MAX_THREADS;
        validate_job(&ok).unwrap();
        assert_eq!(depth_problem(EngineKind::Psync, 4096, 1, "--max-qd", "--max-threads"), None);
        assert!(depth_problem(EngineKind::Psync, 4097, 1, "--max-qd", "--max-threads")
            .is_some_and(|m| m.contains("lower --max-qd or --max-threads")));
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
    fn plan_prefixes_job_name_when_several() {
        let good = JobSpec::default();
        let bad = JobSpec { name: "seqread".into(), qd: 0, ..JobSpec::default() };
        let one = RunPlan {
            groups: vec![JobGroup { jobs: vec![bad.clone()], group_reporting: false }],
            ..RunPlan::default()
        };
        assert!(validate_plan(&one).unwrap_err().to_string().starts_with("invalid value for --qd:"));
        let two = RunPlan {
            groups: vec![
                JobGroup { jobs: vec![good.clone()], group_reporting: false },
                JobGroup { jobs: vec![bad], group_reporting: false },
            ],
            ..RunPlan::default()
        };
        assert!(validate_plan(&two)
            .unwrap_err()
            .to_string()
            .starts_with("invalid value for --qd (job \"seqread\"): the queue depth 0"));
        let fine = RunPlan {
            groups: vec![JobGroup { jobs: vec![good.clone(), good], group_reporting: true }],
            ..RunPlan::default()
        };
        validate_plan(&fine).unwrap();
        assert!(validate_plan(&RunPlan::default()).unwrap_err().to_string().contains("no jobs"));
    }
}
