//! The fio job-file dialect diskmeter understands.
//!
//! ```text
//! ; comment                  # also a comment
//! [global]
//! filename=/dev/nvme0n1
//! direct=1
//! ioengine=io_uring
//! runtime=30s
//! time_based
//!
//! [randread]
//! rw=randread
//! bs=4k
//! iodepth=32           ; trailing comments after whitespace are allowed
//!
//! [seqwrite]
//! stonewall            # runs after randread has finished
//! rw=write
//! bs=1M
//! ```
//!
//! * `[section]` headers; `[global]` options apply to every job section *after* it. A later
//!   `[global]` section adds to / overrides the globals for the sections after it (as fio
//!   does). Section names other than `global` must be unique.
//! * `key=value` or `key = value`; flags without a value (`time_based`, `direct`, …).
//!   Keys are case-sensitive, as in fio.
//! * Jobs run concurrently within a group; `stonewall` and `wait_for_previous` start a new
//!   group *before* the job that carries them, and groups run one after another.
//!   `group_reporting` marks the job's group for merged reporting; `new_group` starts a new
//!   reporting group (fio's meaning: not a stonewall), merged on its own
//!   ([`crate::JobFlow::report_group`]).
//! * fio's run flow maps to [`crate::JobFlow`]: `wait_for` (a job earlier in the file),
//!   `startdelay` (a range is drawn once from the job's seed), `exitall`, `exitall_on_error`,
//!   `continue_on_error`, `rate_process`, `rate_min`/`rate_iops_min`/`ratecycle`, the log
//!   options (averaged over `log_avg_msec`, or every I/O) and `steadystate`/`ss_dur`/`ss_ramp`.
//! * `numjobs=N` keeps one job with N workers (`threads = N`).
//!
//! Where diskmeter's defaults differ from fio's, a job file gets fio's behaviour for
//! these options when it does not set them: `rw` is `read`; without `runtime` and
//! `time_based` a job runs until `size` bytes are done (`runtime = 0`,
//! `time_based = false`; a non-zero `runtime` without `time_based` is an upper bound);
//! without `size` the job covers the whole target from `offset`. Everything else comes
//! from the `defaults` the caller passes (the CLI's own defaults, e.g. `direct`, `bs`,
//! `ioengine`, target). Note that diskmeter's default is direct I/O, fio's is buffered.
//!
//! `ioengine=libaio` runs as io_uring, and `sync`, `pvsync` and `pvsync2` run as psync
//! (pread/pwrite): the plan carries a [`PlanNote::ENGINE_SUBSTITUTED`] note for each such
//! option (naming its line and jobs), which ends up in the result's warnings.
//!
//! `rate_iops` and `rate` (bytes/s) are per worker and per direction in fio (`R,W`; one value
//! sets both); they are multiplied by `numjobs` to give the job's total rate
//! ([`JobSpec::rate_iops`]): a pure job takes its direction's; a mixed job with both runs at
//! their sum with the read share set by them (fio paces each direction at its own rate), noted
//! as [`PlanNote::RATE_SETS_MIX`] when that differs from `rwmixread`.
//!
//! `randrepeat=0` (without `randseed`) makes the job's seed vary from run to run: it is
//! derived from the current time. `randseed=N` always wins; otherwise the default seed is
//! kept, so runs are repeatable (fio's default `randrepeat=1`).
//!
//! Options that only tune fio itself and have no effect in diskmeter are accepted and
//! listed in [`IGNORED_OPTIONS`]. Anything else unknown, a malformed value, a value on a
//! flag that takes none, an option before any section, or a repeated section name is an
//! error of the form `FILE:LINE: message`.

use crate::error::SpecError;
use crate::model::{
    BlockSizes, DataPattern, DirSizes, EngineKind, ErrorClass, FioLogs, JobGroup, JobSpec, PlanNote, RateProcess,
    RunPlan, RwMode, SizeChoice, SsMetric, SteadySpec, VerifyKind, VerifySpec,
};
use crate::units;
use crate::units::{
    parse_bsrange, parse_bssplit, parse_count, parse_distribution, parse_duration, parse_percent, parse_size, TimeUnit,
};
use crate::validate::{check_job, Field, Words};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Options accepted without effect, each with the reason it is harmless, as
/// `(name, reason)`. Their values are still checked (a number where fio expects one,
/// 0/1 for switches).
///
/// * `description` — free text, only shown by fio.
/// * `thread` — fio uses threads instead of processes; diskmeter always uses threads.
/// * `norandommap` — diskmeter never keeps a random map; random offsets are drawn
///   independently, which is what `norandommap` asks for.
/// * `invalidate` — page-cache invalidation before a job; fio does it by default and it
///   is irrelevant for direct I/O; diskmeter's engine decides cache handling itself.
/// * `refill_buffers` — diskmeter already writes fresh data for every write.
/// * `iodepth_batch_complete_min`, `iodepth_batch_complete`, `iodepth_batch_complete_max`,
///   `iodepth_low` — completion batching knobs; diskmeter's engine keeps `iodepth` I/Os in
///   flight and reaps whatever has completed. (`iodepth_batch_submit`/`iodepth_batch` map
///   to the job's submit batch.)
/// * `gtod_reduce`, `clat_percentiles`, `lat_percentiles`, `slat_percentiles`,
///   `disable_lat`, `disable_clat`, `disable_slat`, `disable_bw_measurement`,
///   `percentile_list` — what fio measures and prints; diskmeter always measures
///   completion latency and reports its fixed percentile set.
pub const IGNORED_OPTIONS: &[(&str, &str)] = &[
    ("description", "free text, only shown by fio"),
    ("thread", "diskmeter always runs workers as threads"),
    ("threads", "alias of thread; diskmeter always runs workers as threads"),
    ("norandommap", "diskmeter draws random offsets independently, never from a random map"),
    ("invalidate", "page-cache invalidation; fio's default, and moot for direct I/O"),
    ("refill_buffers", "diskmeter already writes fresh data for every write"),
    ("iodepth_batch_complete_min", "completion batching; diskmeter's engine batches itself"),
    ("iodepth_batch_complete", "alias of iodepth_batch_complete_min"),
    ("iodepth_batch_complete_max", "completion batching; diskmeter's engine batches itself"),
    ("iodepth_low", "refill watermark; diskmeter keeps iodepth I/Os in flight"),
    ("gtod_reduce", "fio timing shortcut; diskmeter always measures latency"),
    ("clat_percentiles", "reporting switch; diskmeter reports a fixed percentile set"),
    ("lat_percentiles", "reporting switch; diskmeter reports a fixed percentile set"),
    ("slat_percentiles", "reporting switch; diskmeter reports a fixed percentile set"),
    ("disable_lat", "reporting switch; diskmeter always measures completion latency"),
    ("disable_clat", "reporting switch; diskmeter always measures completion latency"),
    ("disable_slat", "reporting switch; diskmeter does not measure submission latency"),
    ("disable_bw_measurement", "reporting switch; diskmeter always measures bandwidth"),
    ("percentile_list", "reporting choice; diskmeter reports a fixed percentile set"),
];

/// The kind of value an ignored option takes (checked even though it has no effect).
fn ignored_kind(name: &str) -> Option<ValueKind> {
    Some(match name {
        "description" | "percentile_list" => ValueKind::Any,
        "iodepth_batch_complete_min" | "iodepth_batch_complete" | "iodepth_batch_complete_max" | "iodepth_low" => {
            ValueKind::Int
        }
        n if IGNORED_OPTIONS.iter().any(|(o, _)| *o == n) => ValueKind::Bool,
        _ => return None,
    })
}

#[derive(Debug, Clone, Copy)]
enum ValueKind {
    Any,
    Int,
    Bool,
}

/// Options that have an effect, for the "unknown option" message.
const SUPPORTED: &[&str] = &[
    "filename",
    "rw",
    "readwrite",
    "rwmixread",
    "rwmixwrite",
    "bs",
    "blocksize",
    "bssplit",
    "bsrange",
    "blocksize_range",
    "blockalign",
    "ba",
    "bs_unaligned",
    "rw_sequencer",
    "percentage_random",
    "fill_device",
    "fill_fs",
    "offset_increment",
    "zonemode",
    "zonesize",
    "zonerange",
    "zoneskip",
    "iodepth",
    "numjobs",
    "size",
    "offset",
    "runtime",
    "timeout",
    "flow",
    "directory",
    "nrfiles",
    "nr_files",
    "file_service_type",
    "filesize",
    "ratemin",
    "flow_id",
    "flow_sleep",
    "time_based",
    "ramp_time",
    "direct",
    "buffered",
    "ioengine",
    "random_distribution",
    "rate_iops",
    "fsync",
    "randseed",
    "randrepeat",
    "stonewall",
    "wait_for_previous",
    "new_group",
    "group_reporting",
    "name",
    "loops",
    "buffer_compress_percentage",
    "zero_buffers",
    "random_generator",
    "io_submit_mode",
    "include",
    "io_size",
    "io_limit",
    "verify",
    "verify_interval",
    "verify_pattern",
    "do_verify",
    "verify_only",
    "verify_backlog",
    "verify_fatal",
    "verify_state_save",
    "verify_state_load",
    "wait_for",
    "startdelay",
    "exitall",
    "exitall_on_error",
    "continue_on_error",
    "rate",
    "rate_min",
    "rate_iops_min",
    "ratecycle",
    "rate_process",
    "write_bw_log",
    "write_lat_log",
    "write_iops_log",
    "log_avg_msec",
    "per_job_logs",
    "log_offset",
    "steadystate",
    "ss",
    "steadystate_duration",
    "ss_dur",
    "steadystate_ramp_time",
    "ss_ramp",
    "steadystate_check_interval",
    "ss_interval",
    "latency_target",
    "latency_percentile",
    "latency_window",
];

/// fio options diskmeter knows but does not support, with what to do instead.
fn unsupported_hint(key: &str) -> Option<&'static str> {
    Some(match key {
        "ioscheduler" => {
            "diskmeter does not switch I/O schedulers; set one before the run with \
             `echo NAME > /sys/block/DEV/queue/scheduler`"
        }
        "opendir" | "filename_format" => {
            "diskmeter names a job's files as fio does by default (JOB.CLONE.FILE in directory=DIR); name them \
             yourself with filename=FILE1:FILE2"
        }
        "number_ios" => "use io_size=BYTES (a job without time_based stops once that many bytes are done)",
        "kb_base" | "unit_base" => "diskmeter always uses binary size units (1k = 1024 bytes)",
        "end_fsync" | "fsync_on_close" | "fdatasync" | "sync" | "write_barrier" => {
            "use fsync=N to sync after every N writes"
        }
        "hipri" | "fixedbufs" | "registerfiles" | "sqthread_poll" | "sqthread_poll_cpu" | "nonvectored"
        | "uncached" | "cmdprio_percentage" => "io_uring tuning is chosen by diskmeter's engine; remove the option",
        "cpus_allowed" | "cpumask" | "cpus_allowed_policy" | "numa_cpu_nodes" => {
            "diskmeter does not pin workers to CPUs; remove the option or use taskset"
        }
        "latency_run" => {
            "diskmeter finds the most IOPS under a latency bound with its own search; use latency_target, \
             which runs as `diskmeter sla`"
        }
        "write_hist_log" | "log_hist_msec" | "log_max_value" | "log_compression" | "log_store_compressed" => {
            "diskmeter writes fio's bw, lat and iops logs only; remove the option"
        }
        "startdelay" => "use stonewall to run jobs one after another",
        "verify_async"
        | "verify_async_cpus"
        | "verify_offset"
        | "verify_dump"
        | "verify_write_sequence"
        | "verify_header_seed"
        | "experimental_verify"
        | "verifysort"
        | "verifysort_nr"
        | "trim_percentage"
        | "trim_verify_zero"
        | "trim_backlog"
        | "verify_backlog_batch" => {
            "this verify option is not supported; diskmeter's verify (verify=, verify_interval, verify_pattern, \
             do_verify, verify_only, verify_backlog, verify_fatal, verify_state_save/load) covers the rest"
        }
        "unlink"
        | "create_on_open"
        | "allow_mounted_write"
        | "unified_rw_reporting"
        | "buffer_pattern"
        | "buffer_compress_chunk"
        | "dedupe_percentage"
        | "scramble_buffers"
        | "pre_read"
        | "rwmix"
        | "ioengine_opts" => "this option is not supported; remove it",
        _ => return None,
    })
}

/// Per-section state while parsing: the job so far plus where fields were set.
#[derive(Debug, Clone)]
struct Settings {
    job: JobSpec,
    /// Line where each validated field was last set (for validation errors).
    lines: HashMap<Field, usize>,
    time_based_line: Option<usize>,
    /// fio's rate_iops is per worker and per direction (`[read, write]`); multiplied by
    /// `threads` when the job is finished. With its line.
    rate_per_worker: Option<([Option<u64>; 2], usize)>,
    /// fio's `rate` (bytes/s per worker and direction), with its line.
    rate_bytes: Option<([Option<u64>; 2], usize)>,
    rate_iops_min: Option<[Option<u64>; 2]>,
    rate_bytes_min: Option<[Option<u64>; 2]>,
    /// `wait_for=NAME` and its line.
    wait_for: Option<(String, usize)>,
    /// `startdelay` in ms: a value or a range to draw from.
    startdelay: Option<(u64, u64)>,
    new_group: bool,
    /// Log names (`Some(None)`: the job's name), `log_avg_msec`, `per_job_logs`, and the line
    /// of the first log option.
    log_bw: Option<Option<String>>,
    log_lat: Option<Option<String>>,
    log_iops: Option<Option<String>>,
    log_line: usize,
    log_avg_ms: Option<u64>,
    /// fio `log_offset`.
    log_offset: bool,
    per_job_logs: bool,
    /// `steadystate` criterion (fio's default iops_slope:0.01%), `ss_dur`, `ss_ramp`, line.
    ss: Option<(SsMetric, f64, bool)>,
    ss_dur: Duration,
    ss_ramp: Duration,
    /// fio `ss_interval`, whole seconds.
    ss_interval: u64,
    ss_line: usize,
    /// `io_submit_mode=offload` at this line.
    offload: Option<usize>,
    /// fio `directory`: where the job's files are (its `filename`s, or `JOB.CLONE.FILE` as fio
    /// names them); several are given out to the clones in turn.
    directory: Option<(Vec<PathBuf>, usize)>,
    /// fio `filename=a:b:c`: every name (the first is also `job.target`).
    filenames: Vec<PathBuf>,
    /// fio `nrfiles` and its line.
    nrfiles: Option<(usize, usize)>,
    /// fio `file_service_type`.
    file_service: crate::model::FileService,
    /// fio `filesize`: the job's one file's size (its region); `size` is then the bytes moved.
    filesize: Option<(u64, usize)>,
    /// `latency_target` (ns), `latency_percentile`, `latency_window` (ns).
    lat_target: Option<u64>,
    lat_pct: Option<f64>,
    lat_window: Option<u64>,
    randseed: Option<u64>,
    randrepeat: bool,
    stonewall: bool,
    group_reporting: bool,
    name: Option<String>,
    /// `ioengine` named an engine diskmeter runs with another one: (the name given, line).
    engine_substituted: Option<(String, usize)>,
    /// fio's verify options; verification is on when `verify` named a checksum (or
    /// `verify_pattern` was given without one).
    verify: VerifySpec,
    verify_on: Option<bool>,
    /// `verify_state_save`/`verify_state_load`: fio's state file, named after the job.
    verify_state: (bool, bool),
    /// Block sizes per direction (read, write), resolved with fio's precedence when the job
    /// is finished: `bssplit`, else `bsrange`, else `bs`.
    sizes: DirBs,
    /// `zonemode` (`Some(true)`: strided, `Some(false)`: none), `zonesize`, `zonerange`,
    /// `zoneskip`, and the line of the last of them.
    zone: (Option<bool>, Option<u64>, Option<u64>, u64, usize),
}

/// What `bs`, `bsrange`, `bssplit`, `blockalign` and `bs_unaligned` said, per direction
/// (index 0 = read, 1 = write).
#[derive(Debug, Clone, Default)]
struct DirBs {
    bs: [u64; 2],
    range: [Option<(u64, u64)>; 2],
    split: [Option<Vec<crate::model::BsPart>>; 2],
    align: [Option<u64>; 2],
    unaligned: bool,
}

impl DirBs {
    /// The job's `(bs, block_sizes)`: `bs` is the largest size when the sizes vary.
    fn resolve(&self) -> (u64, Option<BlockSizes>) {
        let dir = |d: usize| DirSizes {
            sizes: match (&self.split[d], self.range[d]) {
                (Some(parts), _) => SizeChoice::Split { parts: parts.clone() },
                (None, Some((min, max))) if min != max => SizeChoice::Range { min, max },
                (None, Some((min, _))) => SizeChoice::Fixed { bs: min },
                (None, None) => SizeChoice::Fixed { bs: self.bs[d] },
            },
            align: self.align[d],
        };
        let all = BlockSizes { read: dir(0), write: dir(1), unaligned: self.unaligned };
        let max = all.max();
        match all.normalized() {
            None => (max, None),
            Some(b) => (max, Some(b)),
        }
    }
}

/// Split a per-direction value `READ,WRITE` (fio also takes a third, trim, part): one value
/// applies to both directions; an empty part leaves that direction as it was.
fn per_dir<'a>(key: &str, v: &'a str, example: &str) -> Result<[Option<&'a str>; 2], String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    match parts.as_slice() {
        [one] => Ok([Some(*one), Some(*one)]),
        [r, w] => Ok([Some(*r).filter(|s| !s.is_empty()), Some(*w).filter(|s| !s.is_empty())]),
        [r, w, ""] => Ok([Some(*r).filter(|s| !s.is_empty()), Some(*w).filter(|s| !s.is_empty())]),
        _ => Err(format!(
            "{key}={v}: a third (trim) part is not supported, diskmeter issues no trims; give READ,WRITE such as \
             {key}={example}"
        )),
    }
}

impl Settings {
    fn new(defaults: &JobSpec) -> Self {
        let job =
            JobSpec { rw: RwMode::Read, runtime: Duration::ZERO, time_based: false, size: None, ..defaults.clone() };
        Self {
            job,
            rate_per_worker: None,
            rate_bytes: None,
            rate_iops_min: None,
            rate_bytes_min: None,
            wait_for: None,
            startdelay: None,
            new_group: false,
            log_bw: None,
            log_lat: None,
            log_iops: None,
            log_line: 0,
            log_avg_ms: None,
            log_offset: false,
            per_job_logs: true,
            ss: None,
            ss_dur: Duration::ZERO,
            ss_ramp: Duration::ZERO,
            ss_interval: 1,
            ss_line: 0,
            offload: None,
            directory: None,
            filenames: Vec::new(),
            nrfiles: None,
            file_service: crate::model::FileService::default(),
            filesize: None,
            lat_target: None,
            lat_pct: None,
            lat_window: None,
            lines: HashMap::new(),
            time_based_line: None,
            randseed: None,
            randrepeat: true,
            stonewall: false,
            group_reporting: false,
            name: None,
            engine_substituted: None,
            verify: defaults.verify.clone().unwrap_or_default(),
            verify_on: defaults.verify.as_ref().map(|_| true),
            verify_state: (false, false),
            sizes: DirBs { bs: [defaults.bs; 2], ..DirBs::default() },
            zone: (None, None, None, 0, 0),
        }
    }
}

struct Section {
    name: String,
    line: usize,
    settings: Settings,
}

enum Current {
    Nothing,
    Global,
    Job(Box<Section>),
}

/// Parse an fio job file's text into a run plan. `file_label` is used in
/// `file:line: message` errors; `defaults` supplies everything the file does not set
/// (see the module documentation for the few fio defaults that take precedence).
/// Every job is validated ([`crate::validate`] checks), with errors pointing at the
/// line that set the offending option (or the section header).
pub fn parse_jobfile(file_label: &str, text: &str, defaults: &JobSpec) -> Result<RunPlan, SpecError> {
    let mut src = Source::default();
    src.gather(file_label, text, None)?;
    parse_lines(&src, defaults, &system_var)
}

/// Read and parse an fio job file (see [`parse_jobfile`]); `include` paths are relative to the
/// including file's directory. A file that cannot be read is a [`SpecError::JobFile`] with line 0.
pub fn read_jobfile(path: &Path, defaults: &JobSpec) -> Result<RunPlan, SpecError> {
    let label = path.display().to_string();
    let text = read_text(path, &label, None)?;
    let mut src = Source::default();
    src.stack.push(std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf()));
    src.gather(&label, &text, Some(path.parent().unwrap_or(Path::new("."))))?;
    parse_lines(&src, defaults, &system_var)
}

/// A job file's text, read as `what`'s error says (`at`: the include line that named it).
fn read_text(path: &Path, label: &str, at: Option<(&str, usize)>) -> Result<String, SpecError> {
    let (file, line) = at.map_or((label.to_string(), 0), |(f, l)| (f.to_string(), l));
    // Only a regular file of sane size: a FIFO or /dev/zero named as a job file must not block or
    // read without end.
    let text = files::input::read_capped(path, "the job file", files::input::JOBFILE_CAP).map_err(|e| {
        let why = e.to_string().replacen(&format!("the job file {} ", files::path::shown(path)), "", 1);
        let what = if at.is_some() { format!("the included file {label}") } else { "the job file".into() };
        SpecError::JobFile {
            file: file.clone(),
            line,
            message: format!("cannot read {what}: it {why}; check the path and that it is readable"),
        }
    })?;
    String::from_utf8(text).map_err(|e| SpecError::JobFile {
        file,
        line,
        message: format!("{label} is not valid UTF-8 text ({e}); save it as UTF-8"),
    })
}

/// Most nested `include`s.
const MAX_INCLUDE_DEPTH: usize = 16;

/// The lines of a job file with its `include`s spliced in, each knowing its file and line.
#[derive(Default)]
struct Source {
    files: Vec<String>,
    /// (file index, line in that file, text).
    lines: Vec<(usize, usize, String)>,
    /// The files being read, outermost first (loop detection).
    stack: Vec<PathBuf>,
}

impl Source {
    fn gather(&mut self, label: &str, text: &str, dir: Option<&Path>) -> Result<(), SpecError> {
        let fi = self.files.len();
        self.files.push(label.to_string());
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (idx, raw) in text.lines().enumerate() {
            let lineno = idx + 1;
            let line = strip_comment(raw).trim();
            let err = |message: String| SpecError::JobFile { file: label.to_string(), line: lineno, message };
            let Some(rest) =
                line.strip_prefix("include").filter(|r| r.is_empty() || r.starts_with(char::is_whitespace))
            else {
                self.lines.push((fi, lineno, raw.to_string()));
                continue;
            };
            let name = rest.trim();
            if name.is_empty() {
                return Err(err("include needs a file name: include other.fio".into()));
            }
            let path = match dir {
                Some(d) if Path::new(name).is_relative() => d.join(name),
                _ => PathBuf::from(name),
            };
            let canon = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
            if let Some(pos) = self.stack.iter().position(|p| *p == canon) {
                let chain: Vec<String> =
                    self.stack[pos..].iter().chain([&canon]).map(|p| p.display().to_string()).collect();
                return Err(err(format!("include loop: {}; remove one of the includes", chain.join(" includes "))));
            }
            if self.stack.len() >= MAX_INCLUDE_DEPTH {
                return Err(err(format!("includes nest deeper than {MAX_INCLUDE_DEPTH} files")));
            }
            let shown = path.display().to_string();
            let inner = read_text(&path, &shown, Some((label, lineno)))?;
            self.stack.push(canon);
            self.gather(&shown, &inner, Some(path.parent().unwrap_or(Path::new("."))))?;
            self.stack.pop();
        }
        Ok(())
    }

    /// `file:line` of the `seq`th line (1-based); past the last line (an empty file), the top
    /// file's line `seq`.
    fn at(&self, seq: usize) -> (String, usize) {
        match seq.checked_sub(1).and_then(|i| self.lines.get(i)) {
            Some(&(f, l, _)) => (self.files[f].clone(), l),
            None => (self.files.first().cloned().unwrap_or_default(), seq),
        }
    }
}

/// fio's reserved keywords in option values: `$ncpus`, `$pagesize`, `$mb_memory`.
fn system_var(name: &str) -> Option<String> {
    match name {
        "ncpus" => Some(std::thread::available_parallelism().map_or(1, |n| n.get()).to_string()),
        "pagesize" => Some(platform::mem::page_size().to_string()),
        "mb_memory" => platform::mem::total_bytes().map(|b| (b >> 20).to_string()),
        _ => None,
    }
}

/// fio's expansion of an option value: `${NAME}` is the environment variable NAME (empty when
/// unset, as in fio); `$ncpus`, `$pagesize` and `$mb_memory` are `keyword`'s values. Any other
/// `$` stays.
fn expand(value: &str, keyword: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(inner) = after.strip_prefix('{') {
            let Some(end) = inner.find('}') else {
                return Err(format!("{value}: ${{ without a closing }}; write ${{NAME}}"));
            };
            out.push_str(&std::env::var(&inner[..end]).unwrap_or_default());
            rest = &inner[end + 1..];
            continue;
        }
        let word = ["mb_memory", "pagesize", "ncpus"].into_iter().find(|w| after.starts_with(w));
        match word.and_then(|w| keyword(w).map(|v| (w, v))) {
            Some((w, v)) => {
                out.push_str(&v);
                rest = &after[w.len()..];
            }
            None => {
                out.push('$');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    Ok(out)
}

/// Parse the gathered lines into a plan (`keyword`: the reserved `$` words' values).
fn parse_lines(
    src: &Source,
    defaults: &JobSpec,
    keyword: &dyn Fn(&str) -> Option<String>,
) -> Result<RunPlan, SpecError> {
    let err = |seq: usize, message: String| {
        let (file, line) = src.at(seq);
        SpecError::JobFile { file, line, message }
    };
    let mut global = Settings::new(defaults);
    let mut current = Current::Nothing;
    let mut seen = HashSet::new();
    let mut plan = RunPlan::default();
    let mut subs = Vec::new();
    let mut flow_notes: Vec<(usize, &'static str, String)> = Vec::new();
    let mut generators: Vec<(usize, String)> = Vec::new();
    let mut line_count = 0;

    for (idx, (_, _, raw)) in src.lines.iter().enumerate() {
        let lineno = idx + 1;
        line_count = lineno;
        let line = strip_comment(raw).trim();
        if line.is_empty() {
            continue;
        }
        if line.starts_with('[') {
            let name = parse_header(line).map_err(|m| err(lineno, m))?;
            if let Current::Job(sec) = std::mem::replace(&mut current, Current::Nothing) {
                finish_job(*sec, &mut plan, &mut subs, &mut flow_notes).map_err(|(l, m)| err(l, m))?;
            }
            if name == "global" {
                current = Current::Global;
            } else {
                if !seen.insert(name.to_string()) {
                    return Err(err(
                        lineno,
                        format!("section [{name}] is defined twice; give each job section a unique name"),
                    ));
                }
                current =
                    Current::Job(Box::new(Section { name: name.to_string(), line: lineno, settings: global.clone() }));
            }
            continue;
        }
        let (key, value) = match line.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (line, None),
        };
        if key.is_empty() {
            return Err(err(lineno, format!("\"{line}\" has no option name before '='; write e.g. bs=4k")));
        }
        let expanded = value.map(|v| expand(v, keyword)).transpose().map_err(|m| err(lineno, m))?;
        let settings = match &mut current {
            Current::Nothing => {
                return Err(err(
                    lineno,
                    format!("option {key} appears before any section; add a [global] or [jobname] header above it"),
                ))
            }
            Current::Global => &mut global,
            Current::Job(sec) => &mut sec.settings,
        };
        apply(settings, key, expanded.as_deref(), lineno).map_err(|m| err(lineno, m))?;
        if key == "random_generator" {
            generators.push((lineno, expanded.unwrap_or_default()));
        }
    }
    if let Current::Job(sec) = current {
        finish_job(*sec, &mut plan, &mut subs, &mut flow_notes).map_err(|(l, m)| err(l, m))?;
    }
    if plan.groups.is_empty() {
        return Err(err(
            line_count.max(1),
            "the file defines no jobs; add a job section such as [job1] (options in [global] only set defaults)".into(),
        ));
    }
    for sub in subs {
        let (file, line) = src.at(sub.line);
        plan.notes.push(sub.note(&format!("{file}:{line}")));
    }
    for (seq, code, message) in flow_notes {
        let (file, line) = src.at(seq);
        plan.notes.push(PlanNote { code: code.to_string(), message: format!("{file}:{line}: {message}") });
    }
    for (seq, name) in generators {
        let (file, line) = src.at(seq);
        plan.notes.push(PlanNote {
            code: PlanNote::GENERATOR_SUBSTITUTED.to_string(),
            message: format!(
                "{file}:{line}: random_generator={name} is accepted, but diskmeter draws offsets with its own \
                 generator: the same seed repeats diskmeter's offsets, not fio's"
            ),
        });
    }
    Ok(plan)
}

/// Remove a trailing `# …` / `; …` comment (one that starts after whitespace) and
/// whole-line comments.
fn strip_comment(raw: &str) -> &str {
    let t = raw.trim_start();
    if t.starts_with('#') || t.starts_with(';') {
        return "";
    }
    let mut prev_ws = false;
    for (i, c) in raw.char_indices() {
        if prev_ws && (c == '#' || c == ';') {
            return &raw[..i];
        }
        prev_ws = c.is_whitespace();
    }
    raw
}

fn parse_header(line: &str) -> Result<&str, String> {
    let Some(close) = line.find(']') else {
        return Err(format!("section header \"{line}\" has no closing ']'; write e.g. [job1]"));
    };
    if !line[close + 1..].trim().is_empty() {
        return Err(format!("unexpected text after the section header \"{}\"", &line[..=close]));
    }
    let name = line[1..close].trim();
    if name.is_empty() || name.contains('[') {
        return Err(format!("\"{line}\" is not a valid section header; write e.g. [job1]"));
    }
    Ok(name)
}

fn need<'a>(key: &str, value: Option<&'a str>, example: &str) -> Result<&'a str, String> {
    match value {
        Some(v) if !v.is_empty() => Ok(v),
        _ => Err(format!("{key} needs a value; write e.g. {key}={example}")),
    }
}

fn boolean(key: &str, value: Option<&str>) -> Result<bool, String> {
    match value {
        None => Ok(true),
        Some("1") => Ok(true),
        Some("0") => Ok(false),
        Some(v) => {
            Err(format!("invalid value for {key}: \"{v}\" is not 0 or 1; write {key} (same as {key}=1) or {key}=0"))
        }
    }
}

fn uint<T: TryFrom<u64>>(key: &str, v: &str, example: &str) -> Result<T, String> {
    let bad = || format!("invalid value for {key}: \"{v}\" is not a whole number; write e.g. {key}={example}");
    if v.is_empty() || !v.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let n: u64 = v.parse().map_err(|_| format!("invalid value for {key}: \"{v}\" is too large"))?;
    T::try_from(n).map_err(|_| format!("invalid value for {key}: \"{v}\" is too large"))
}

/// `N%` (fio's share of the target's size, above 0 and up to 100), or `None` for a size.
fn share_of_target(key: &str, v: &str) -> Result<Option<f64>, String> {
    if !v.trim_end().ends_with('%') {
        return Ok(None);
    }
    let p = parse_percent(key, v).map_err(|e| e.to_string())?;
    if p <= 0.0 {
        return Err(format!("invalid value for {key}: {v} is no part of the target; use e.g. {key}=50%"));
    }
    Ok(Some(p))
}

fn no_percent(key: &str, v: &str) -> Result<(), String> {
    if v.trim_end().ends_with('%') {
        return Err(format!(
            "{key}={v}: sizes in percent of the target are not supported; give an absolute size such as \
             {key}=10G{}",
            if key == "size" { ", or leave size out to use the whole target" } else { "" }
        ));
    }
    Ok(())
}

/// fio's per-direction values `R,W`: one value sets both; an empty side leaves it unset; a
/// third (trim) value is refused.
fn pair(
    key: &str,
    v: &str,
    example: &str,
    one: &dyn Fn(&str, &str) -> Result<u64, String>,
) -> Result<[Option<u64>; 2], String> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    let side = |x: &str| if x.is_empty() { Ok(None) } else { one(key, x).map(Some) };
    match parts.as_slice() {
        [both] => {
            let b = side(both)?;
            Ok([b, b])
        }
        [r, w] => Ok([side(r)?, side(w)?]),
        _ => {
            Err(format!("{key}={v}: trim rates are not supported; give a read and a write value, e.g. {key}={example}"))
        }
    }
}

/// fio's steady-state criterion `METRIC:LIMIT[%]`.
fn parse_ss(key: &str, v: &str) -> Result<(SsMetric, f64, bool), String> {
    let bad =
        || format!("invalid value for {key}: \"{v}\"; write a criterion and a limit such as {key}=iops_slope:0.1%");
    let (m, lim) = v.split_once(':').ok_or_else(bad)?;
    let metric = match m.trim() {
        "iops" => SsMetric::Iops,
        "iops_slope" => SsMetric::IopsSlope,
        "bw" => SsMetric::Bw,
        "bw_slope" => SsMetric::BwSlope,
        "lat" => SsMetric::Lat,
        "lat_slope" => SsMetric::LatSlope,
        _ => return Err(bad()),
    };
    let lim = lim.trim();
    let (num, pct) = match lim.strip_suffix('%') {
        Some(n) => (n.trim(), true),
        None => (lim, false),
    };
    let limit: f64 = num.parse().map_err(|_| bad())?;
    if !limit.is_finite() || limit < 0.0 {
        return Err(bad());
    }
    Ok((metric, limit, pct))
}

/// Apply one `key=value` line to a section's settings: the option's handler ([`OPTIONS`]), else
/// an option accepted without effect ([`IGNORED_OPTIONS`]), else an error.
fn apply(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    if let Some((_, handler)) = OPTIONS.iter().find(|(keys, _)| keys.contains(&key)) {
        return handler(s, key, value, line);
    }
    if let Some(kind) = ignored_kind(key) {
        return match kind {
            ValueKind::Any => Ok(()),
            ValueKind::Bool => boolean(key, value).map(|_| ()),
            ValueKind::Int => uint::<u64>(key, need(key, value, "1")?, "1").map(|_| ()),
        };
    }
    if let Some(hint) = unsupported_hint(key) {
        return Err(format!("option {key} is not supported: {hint}"));
    }
    Err(unknown_option(key, value))
}

/// A [`SpecError`] from a value parser as an option's message.
fn sv(e: SpecError) -> String {
    e.to_string()
}

/// A job-file option's handler: applies `key`'s value (`None` for a bare flag) at `line` to a
/// section's settings, or says what is wrong with it.
type Handler = fn(&mut Settings, &str, Option<&str>, usize) -> Result<(), String>;

/// The options that have an effect: each with its aliases, and its handler.
const OPTIONS: &[(&[&str], Handler)] = &[
    (&["filename"], opt_filename),
    (&["rw", "readwrite"], opt_rw),
    (&["rwmixread"], opt_rwmixread),
    (&["rwmixwrite"], opt_rwmixwrite),
    (&["bs", "blocksize"], opt_bs),
    (&["bssplit"], opt_bssplit),
    (&["bsrange", "blocksize_range"], opt_bsrange),
    (&["blockalign", "ba"], opt_blockalign),
    (&["offset_increment"], opt_offset_increment),
    (&["fill_device", "fill_fs"], opt_fill_device),
    (&["zonemode"], opt_zonemode),
    (&["zonesize"], opt_zonesize),
    (&["zonerange"], opt_zonerange),
    (&["zoneskip"], opt_zoneskip),
    (&["rw_sequencer"], opt_rw_sequencer),
    (&["percentage_random"], opt_percentage_random),
    (&["bs_unaligned"], opt_bs_unaligned),
    (&["iodepth"], opt_iodepth),
    (&["numjobs"], opt_numjobs),
    (&["size"], opt_size),
    (&["offset"], opt_offset),
    (&["runtime", "timeout"], opt_runtime),
    (&["ramp_time"], opt_ramp_time),
    (&["time_based"], opt_time_based),
    (&["direct"], opt_direct),
    (&["buffered"], opt_buffered),
    (&["ioengine"], opt_ioengine),
    (&["random_generator"], opt_random_generator),
    (&["io_submit_mode"], opt_io_submit_mode),
    (&["random_distribution"], opt_random_distribution),
    (&["rate_iops"], opt_rate_iops),
    (&["rate"], opt_rate),
    (&["rate_iops_min"], opt_rate_iops_min),
    (&["directory"], opt_directory),
    (&["nrfiles", "nr_files"], opt_nrfiles),
    (&["file_service_type"], opt_file_service_type),
    (&["filesize"], opt_filesize),
    (&["rate_min", "ratemin"], opt_rate_min),
    (&["ratecycle"], opt_ratecycle),
    (&["rate_process"], opt_rate_process),
    (&["wait_for"], opt_wait_for),
    (&["latency_target"], opt_latency_target),
    (&["latency_window"], opt_latency_window),
    (&["latency_percentile"], opt_latency_percentile),
    (&["flow"], opt_flow),
    (&["flow_id"], opt_flow_id),
    (&["flow_sleep"], opt_flow_sleep),
    (&["startdelay"], opt_startdelay),
    (&["exitall"], opt_exitall),
    (&["exitall_on_error"], opt_exitall_on_error),
    (&["continue_on_error"], opt_continue_on_error),
    (&["write_bw_log"], opt_write_bw_log),
    (&["write_lat_log"], opt_write_lat_log),
    (&["write_iops_log"], opt_write_iops_log),
    (&["log_avg_msec"], opt_log_avg_msec),
    (&["per_job_logs"], opt_per_job_logs),
    (&["log_offset"], opt_log_offset),
    (&["steadystate", "ss"], opt_steadystate),
    (&["steadystate_duration", "ss_dur"], opt_steadystate_duration),
    (&["steadystate_check_interval", "ss_interval"], opt_steadystate_check_interval),
    (&["steadystate_ramp_time", "ss_ramp"], opt_steadystate_ramp_time),
    (&["fsync"], opt_fsync),
    (&["iodepth_batch_submit", "iodepth_batch"], opt_iodepth_batch_submit),
    (&["verify"], opt_verify),
    (&["verify_interval"], opt_verify_interval),
    (&["verify_pattern"], opt_verify_pattern),
    (&["do_verify"], opt_do_verify),
    (&["verify_only"], opt_verify_only),
    (&["verify_fatal"], opt_verify_fatal),
    (&["verify_backlog"], opt_verify_backlog),
    (&["verify_state_save"], opt_verify_state_save),
    (&["verify_state_load"], opt_verify_state_load),
    (&["randseed"], opt_randseed),
    (&["randrepeat"], opt_randrepeat),
    (&["stonewall", "wait_for_previous"], opt_stonewall),
    (&["new_group"], opt_new_group),
    (&["group_reporting"], opt_group_reporting),
    (&["name"], opt_name),
    (&["loops"], opt_loops),
    (&["io_size", "io_limit"], opt_io_size),
    (&["buffer_compress_percentage"], opt_buffer_compress_percentage),
    (&["zero_buffers"], opt_zero_buffers),
];

/// `filename`: the target, or several files `a:b:c`.
fn opt_filename(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let v = need(key, value, "/dev/nvme0n1")?;
    let names = split_filenames(v);
    if names.iter().any(|n| n.as_os_str().is_empty()) {
        return Err(format!(
            "filename={v}: an empty name between ':' separators; give FILE or FILE1:FILE2 (write a ':' \
                 inside a path as '\\:')"
        ));
    }
    if names.len() > MAX_FILES {
        return Err(format!("filename={v}: {} files; at most {MAX_FILES} per job", names.len()));
    }
    s.job.target = names.first().cloned();
    s.filenames = names;
    Ok(())
}

/// `rw`, `readwrite`: the mode, with an optional `:N` (I/Os per random offset, or bytes between sequential I/Os).
fn opt_rw(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "randread")?;
    let (mode, modifier) = match v.split_once(':') {
        Some((mode, m)) => (mode, Some(m.trim())),
        None => (v, None),
    };
    s.job.rw = RwMode::parse(mode)
        .ok_or_else(|| format!("invalid value for {key}: \"{mode}\" is not supported; use one of {}", RwMode::NAMES))?;
    s.job.rw_modifier = match modifier {
        None => 0,
        // Random modes: a new random offset every N I/Os.
        Some(m) if s.job.rw.is_random() => {
            let n: u32 = uint(key, m, "randread:8")?;
            if n == 0 {
                return Err(format!("{key}={v}: the I/Os per random offset must be 1 or more, e.g. {key}={mode}:8"));
            }
            i64::from(n)
        }
        // Sequential modes: bytes added after each I/O; negative goes backwards.
        Some(m) => {
            let (neg, size) = match m.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, m),
            };
            let b = parse_size(key, size).map_err(sv)?;
            let b = i64::try_from(b).map_err(|_| format!("{key}={v}: the offset modifier is too large"))?;
            if neg {
                -b
            } else {
                b
            }
        }
    };
    s.lines.insert(Field::RwModifier, line);
    Ok(())
}

/// `rwmixread`: the read share of a mixed job.
fn opt_rwmixread(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.job.mix = whole_percent(key, value)?;
    s.lines.insert(Field::Mix, line);
    Ok(())
}

/// `rwmixwrite`: the write share of a mixed job.
fn opt_rwmixwrite(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.job.mix = 100 - whole_percent(key, value)?;
    s.lines.insert(Field::Mix, line);
    Ok(())
}

/// A whole percentage from 0 to 100 (`rwmixread`, `rwmixwrite`).
fn whole_percent(key: &str, value: Option<&str>) -> Result<u8, String> {
    let v = need(key, value, "70")?;
    let p = parse_percent(key, v).map_err(sv)?;
    if p.fract() != 0.0 {
        return Err(format!("invalid value for {key}: \"{v}\" must be a whole percentage such as 70"));
    }
    Ok(p as u8)
}

/// `bs`, `blocksize`: the block size, per direction (`READ,WRITE`).
fn opt_bs(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "4k")?;
    for (d, part) in per_dir(key, v, "4k,64k")?.into_iter().enumerate() {
        if let Some(p) = part {
            s.sizes.bs[d] = parse_size(key, p).map_err(sv)?;
        }
    }
    s.lines.insert(Field::Bs, line);
    Ok(())
}

/// `bssplit`: block sizes with shares, per direction.
fn opt_bssplit(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "4k/50:64k/50")?;
    for (d, part) in per_dir(key, v, "4k/50:8k/50,64k/100")?.into_iter().enumerate() {
        if let Some(p) = part {
            s.sizes.split[d] = Some(parse_bssplit(key, p).map_err(sv)?);
        }
    }
    s.lines.insert(Field::BsSplit, line);
    Ok(())
}

/// `bsrange`, `blocksize_range`: block sizes drawn from a range, per direction.
fn opt_bsrange(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "1k-64k")?;
    for (d, part) in per_dir(key, v, "1k-4k,4k-64k")?.into_iter().enumerate() {
        if let Some(p) = part {
            s.sizes.range[d] = Some(parse_bsrange(key, p).map_err(sv)?);
        }
    }
    s.lines.insert(Field::BsRange, line);
    Ok(())
}

/// `blockalign`, `ba`: where random offsets may start, per direction.
fn opt_blockalign(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "4k")?;
    for (d, part) in per_dir(key, v, "4k,64k")?.into_iter().enumerate() {
        if let Some(p) = part {
            s.sizes.align[d] = Some(parse_size(key, p).map_err(sv)?);
        }
    }
    s.lines.insert(Field::BlockAlign, line);
    Ok(())
}

/// `offset_increment`: each worker's region starts this much after the previous one's.
fn opt_offset_increment(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "1g")?;
    no_percent(key, v)?;
    s.job.offset_increment = parse_size(key, v).map_err(sv)?;
    s.lines.insert(Field::Offset, line);
    Ok(())
}

/// `fill_device`, `fill_fs`: write until the target is full.
fn opt_fill_device(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.job.fill = boolean(key, value)?;
    s.lines.insert(Field::Fill, line);
    Ok(())
}

/// `zonemode`: `strided` or `none`.
fn opt_zonemode(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.zone.0 = Some(match need(key, value, "strided")? {
        "strided" => true,
        "none" => false,
        "zbd" => {
            return Err("zonemode=zbd (zoned block devices) is not supported; use zonemode=strided with \
                            zonesize, or remove it"
                .into())
        }
        v => return Err(format!("invalid value for zonemode: \"{v}\"; use none or strided")),
    });
    s.zone.4 = line;
    s.lines.insert(Field::Zones, line);
    Ok(())
}

/// `zonesize`: the bytes to move in a zone.
fn opt_zonesize(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.zone.1 = Some(zone_bytes(s, key, value, line)?);
    Ok(())
}

/// `zonerange`: the size of a zone.
fn opt_zonerange(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.zone.2 = Some(zone_bytes(s, key, value, line)?);
    Ok(())
}

/// `zoneskip`: the bytes skipped after a zone.
fn opt_zoneskip(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.zone.3 = zone_bytes(s, key, value, line)?;
    Ok(())
}

/// A strided-zone size (`zonesize`, `zonerange`, `zoneskip`) in bytes; notes its line.
fn zone_bytes(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<u64, String> {
    let v = need(key, value, "64m")?;
    no_percent(key, v)?;
    let b = parse_size(key, v).map_err(sv)?;
    s.zone.4 = line;
    s.lines.insert(Field::Zones, line);
    Ok(b)
}

/// `rw_sequencer`: `sequential` or `identical` offsets after `rw=MODE:N`.
fn opt_rw_sequencer(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    match need(key, value, "sequential")? {
        "sequential" => s.job.rw_identical = false,
        "identical" => s.job.rw_identical = true,
        v => return Err(format!("invalid value for rw_sequencer: \"{v}\"; use sequential or identical")),
    }
    Ok(())
}

/// `percentage_random`: the share of random I/Os in a sequential job.
fn opt_percentage_random(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let v = need(key, value, "50")?;
    let mut pct = None;
    for part in per_dir(key, v, "50,50")?.into_iter().flatten() {
        let p: u64 = uint(key, part, "50")?;
        if p > 100 {
            return Err(format!("invalid value for {key}: {p} is above 100; use 0 to 100, e.g. {key}=50"));
        }
        if pct.is_some_and(|q| q != p) {
            return Err(format!(
                "{key}={v}: different read and write shares are not supported; give one share such as {key}=50"
            ));
        }
        pct = Some(p);
    }
    s.job.percentage_random = pct.filter(|&p| p < 100).map(|p| p as u8);
    Ok(())
}

/// `bs_unaligned`: sizes from a range need not be multiples of its minimum.
fn opt_bs_unaligned(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.sizes.unaligned = boolean(key, value)?;
    s.lines.insert(Field::BsRange, line);
    Ok(())
}

/// `iodepth`: I/Os in flight per worker.
fn opt_iodepth(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.job.qd = uint(key, need(key, value, "32")?, "32")?;
    s.lines.insert(Field::Qd, line);
    Ok(())
}

/// `numjobs`: the workers (fio's clones).
fn opt_numjobs(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.job.threads = uint(key, need(key, value, "4")?, "4")?;
    s.lines.insert(Field::Threads, line);
    Ok(())
}

/// `size`: the region (or `N%` of the target).
fn opt_size(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "1G")?;
    match share_of_target(key, v)? {
        Some(p) => (s.job.size, s.job.size_pct) = (None, Some(p)),
        None => (s.job.size, s.job.size_pct) = (Some(parse_size(key, v).map_err(sv)?), None),
    }
    s.lines.insert(Field::Size, line);
    Ok(())
}

/// `offset`: where the region starts (or `N%` into the target).
fn opt_offset(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "1M")?;
    match share_of_target(key, v)? {
        Some(p) => (s.job.offset, s.job.offset_pct) = (0, Some(p)),
        None => (s.job.offset, s.job.offset_pct) = (parse_size(key, v).map_err(sv)?, None),
    }
    s.lines.insert(Field::Offset, line);
    Ok(())
}

/// `runtime`, `timeout`: the time limit.
fn opt_runtime(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.job.runtime = parse_duration(key, need(key, value, "30s")?, TimeUnit::Seconds).map_err(sv)?;
    s.lines.insert(Field::Runtime, line);
    Ok(())
}

/// `ramp_time`: the warm-up, not measured.
fn opt_ramp_time(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.ramp = parse_duration(key, need(key, value, "5s")?, TimeUnit::Seconds).map_err(sv)?;
    Ok(())
}

/// `time_based`: run for `runtime` rather than until `size` bytes are done.
fn opt_time_based(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.job.time_based = boolean(key, value)?;
    s.time_based_line = Some(line);
    Ok(())
}

/// `direct`: direct I/O on or off.
fn opt_direct(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.direct = boolean(key, value)?;
    Ok(())
}

/// `buffered`: the opposite of `direct`.
fn opt_buffered(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.direct = !boolean(key, value)?;
    Ok(())
}

/// `ioengine`: the engine, with fio's other names run as ours.
fn opt_ioengine(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "io_uring")?;
    s.engine_substituted = matches!(v, "libaio" | "sync" | "pvsync" | "pvsync2").then(|| (v.to_string(), line));
    s.job.engine = match v {
        "io_uring" | "libaio" => EngineKind::IoUring,
        "windowsaio" => EngineKind::Iocp,
        "psync" | "sync" | "pvsync" | "pvsync2" => EngineKind::Psync,
        "null" => EngineKind::Null,
        _ => {
            return Err(format!(
                "invalid value for ioengine: \"{v}\" is not supported; use io_uring (libaio also \
                     runs as io_uring), psync (also sync, pvsync, pvsync2) or null"
            ))
        }
    };
    Ok(())
}

/// `random_generator`: accepted; diskmeter draws offsets with its own generator.
fn opt_random_generator(_s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let v = need(key, value, "tausworthe")?;
    if !matches!(v, "tausworthe" | "lfsr" | "tausworthe64") {
        return Err(format!(
            "invalid value for random_generator: \"{v}\"; fio's generators are tausworthe, lfsr and \
                 tausworthe64"
        ));
    }
    Ok(())
}

/// `io_submit_mode`: `inline`, or `offload` (io_uring's SQ polling thread).
fn opt_io_submit_mode(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    match need(key, value, "inline")? {
        "inline" => {}
        "offload" => {
            s.offload = Some(line);
            s.job.offload = true;
        }
        v => return Err(format!("invalid value for io_submit_mode: \"{v}\"; use inline or offload")),
    }
    Ok(())
}

/// `random_distribution`: the access distribution of random offsets.
fn opt_random_distribution(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.job.dist = parse_distribution(key, need(key, value, "zipf:1.2")?).map_err(sv)?;
    s.lines.insert(Field::Dist, line);
    Ok(())
}

/// `rate_iops`: the I/O rate per worker and direction.
fn opt_rate_iops(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "1000")?;
    s.rate_per_worker = Some((pair(key, v, "500,100", &|k, x| parse_count(k, x).map_err(sv))?, line));
    Ok(())
}

/// `rate`: the byte rate per worker and direction.
fn opt_rate(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "100m")?;
    s.rate_bytes = Some((pair(key, v, "100m,50m", &|k, x| parse_size(k, x).map_err(sv))?, line));
    Ok(())
}

/// `rate_iops_min`: the least I/O rate per worker and direction.
fn opt_rate_iops_min(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let v = need(key, value, "100")?;
    s.rate_iops_min = Some(pair(key, v, "100,50", &|k, x| parse_count(k, x).map_err(sv))?);
    Ok(())
}

/// `directory`: where the job's files are, several given out to the clones in turn.
fn opt_directory(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "/mnt/test")?;
    // fio: several directories, ':'-separated, are given out to the job's clones in turn.
    let dirs = split_filenames(v);
    if dirs.iter().any(|d| d.as_os_str().is_empty()) {
        return Err(format!("directory={v}: an empty name between ':' separators; give DIR or DIR1:DIR2"));
    }
    s.directory = Some((dirs, line));
    Ok(())
}

/// `nrfiles`, `nr_files`: files per clone.
fn opt_nrfiles(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let n: usize = uint(key, need(key, value, "1")?, "4")?;
    if n == 0 || n > MAX_FILES {
        return Err(format!("invalid value for nrfiles: {n}; give 1 to {MAX_FILES} files"));
    }
    s.nrfiles = Some((n, line));
    Ok(())
}

/// `file_service_type`: how I/Os move between the files.
fn opt_file_service_type(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.file_service = parse_file_service(need(key, value, "roundrobin")?)?;
    Ok(())
}

/// `filesize`: each file's size (then `size` is the bytes moved).
fn opt_filesize(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "1g")?;
    if v.contains('-') || v.contains(':') {
        return Err(format!("filesize={v}: a range of file sizes is not supported; give one size such as filesize=1g"));
    }
    s.filesize = Some((parse_size(key, v).map_err(sv)?, line));
    Ok(())
}

/// `rate_min`, `ratemin`: the least byte rate per worker and direction.
fn opt_rate_min(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let v = need(key, value, "10m")?;
    s.rate_bytes_min = Some(pair(key, v, "10m,5m", &|k, x| parse_size(k, x).map_err(sv))?);
    Ok(())
}

/// `ratecycle`: the window the least rates are averaged over, in ms.
fn opt_ratecycle(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let ms: u64 = uint(key, need(key, value, "1000")?, "1000")?;
    if ms == 0 {
        return Err("invalid value for ratecycle: 0; give the averaging window in ms, e.g. ratecycle=1000".into());
    }
    s.job.flow.ratecycle_ms = ms;
    Ok(())
}

/// `rate_process`: `linear` or `poisson` arrivals.
fn opt_rate_process(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.flow.rate_process = match need(key, value, "poisson")? {
        "linear" => RateProcess::Linear,
        "poisson" => RateProcess::Poisson,
        v => return Err(format!("invalid value for rate_process: \"{v}\"; use linear or poisson")),
    };
    Ok(())
}

/// `wait_for`: start after a job earlier in the file has ended.
fn opt_wait_for(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.wait_for = Some((need(key, value, "jobname")?.to_string(), line));
    Ok(())
}

/// `latency_target`: the latency bound of fio's latency search (runs as diskmeter's sla).
fn opt_latency_target(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.lat_target = Some(latency_ns(key, value)?);
    Ok(())
}

/// `latency_window`: the window the latency search judges.
fn opt_latency_window(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.lat_window = Some(latency_ns(key, value)?);
    Ok(())
}

/// A time above zero in ns; fio's unit for `latency_target` and `latency_window` is the
/// microsecond.
fn latency_ns(key: &str, value: Option<&str>) -> Result<u64, String> {
    let d = parse_duration(key, need(key, value, "2ms")?, TimeUnit::Micros).map_err(sv)?;
    let ns = d.as_nanos() as u64;
    if ns == 0 {
        return Err(format!("invalid value for {key}: 0; give a time above zero, e.g. {key}=2ms"));
    }
    Ok(ns)
}

/// `latency_percentile`: the percentile the latency search bounds.
fn opt_latency_percentile(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let p = parse_percent(key, need(key, value, "99")?).map_err(sv)?;
    if p <= 0.0 {
        return Err("invalid value for latency_percentile: 0; give e.g. latency_percentile=99".into());
    }
    s.lat_pct = Some(p);
    Ok(())
}

/// `flow`: the job's weight in a flow group.
fn opt_flow(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.flow.flow_weight = uint(key, need(key, value, "2")?, "2")?;
    Ok(())
}

/// `flow_id`: the flow group.
fn opt_flow_id(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.flow.flow_id = uint(key, need(key, value, "1")?, "1")?;
    Ok(())
}

/// `flow_sleep`: the pause (µs) of a job ahead of its weight.
fn opt_flow_sleep(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.flow.flow_sleep_us = uint(key, need(key, value, "1000")?, "1000")?;
    Ok(())
}

/// `startdelay`: a delay before the job starts, or a range to draw it from.
fn opt_startdelay(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let v = need(key, value, "5s")?;
    let one = |x: &str| -> Result<u64, String> {
        Ok(parse_duration(key, x.trim(), TimeUnit::Seconds).map_err(sv)?.as_millis() as u64)
    };
    s.startdelay = Some(match v.split_once('-') {
        Some((lo, hi)) => {
            let (lo, hi) = (one(lo)?, one(hi)?);
            if lo > hi {
                return Err(format!(
                    "invalid value for startdelay: \"{v}\" is a range from high to low; write e.g. startdelay=1-5"
                ));
            }
            (lo, hi)
        }
        None => {
            let d = one(v)?;
            (d, d)
        }
    });
    Ok(())
}

/// `exitall`: stop every job when this one ends.
fn opt_exitall(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.flow.exitall = boolean(key, value)?;
    Ok(())
}

/// `exitall_on_error`: stop every job when this one fails.
fn opt_exitall_on_error(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.flow.exitall_on_error = boolean(key, value)?;
    Ok(())
}

/// `continue_on_error`: the errors a job goes on after.
fn opt_continue_on_error(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let v = need(key, value, "io")?;
    s.job.flow.continue_on_error = ErrorClass::parse(v)
        .ok_or_else(|| format!("invalid value for continue_on_error: \"{v}\"; use one of {}", ErrorClass::NAMES))?;
    Ok(())
}

/// `write_bw_log`: fio's bandwidth log, named by the value or after the job.
fn opt_write_bw_log(s: &mut Settings, _key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.log_bw = Some(log_name(s, value, line));
    Ok(())
}

/// `write_lat_log`: fio's latency log.
fn opt_write_lat_log(s: &mut Settings, _key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.log_lat = Some(log_name(s, value, line));
    Ok(())
}

/// `write_iops_log`: fio's IOPS log.
fn opt_write_iops_log(s: &mut Settings, _key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.log_iops = Some(log_name(s, value, line));
    Ok(())
}

/// A log's name (`None`: the job's), noting the line of the first log option.
fn log_name(s: &mut Settings, value: Option<&str>, line: usize) -> Option<String> {
    if s.log_line == 0 {
        s.log_line = line;
    }
    value.filter(|v| !v.is_empty()).map(str::to_string)
}

/// `log_avg_msec`: the logs' averaging window (0: every I/O).
fn opt_log_avg_msec(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.log_avg_ms = Some(uint(key, need(key, value, "1000")?, "1000")?);
    Ok(())
}

/// `per_job_logs`: one log file per worker.
fn opt_per_job_logs(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.per_job_logs = boolean(key, value)?;
    Ok(())
}

/// `log_offset`: log each I/O's offset too.
fn opt_log_offset(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.log_offset = boolean(key, value)?;
    Ok(())
}

/// `steadystate`, `ss`: the steady-state criterion `METRIC:LIMIT`.
fn opt_steadystate(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "iops_slope:0.1%")?;
    s.ss = Some(parse_ss(key, v)?);
    s.ss_line = line;
    Ok(())
}

/// `steadystate_duration`, `ss_dur`: the steady-state window, whole seconds.
fn opt_steadystate_duration(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.ss_dur = parse_duration(key, need(key, value, "60s")?, TimeUnit::Seconds).map_err(sv)?;
    if !s.ss_dur.as_millis().is_multiple_of(1000) {
        return Err(format!(
            "invalid value for {key}: diskmeter takes one sample a second; give whole seconds, e.g. {key}=60s"
        ));
    }
    s.ss_line = s.ss_line.max(line);
    Ok(())
}

/// `steadystate_check_interval`, `ss_interval`: the steady-state sampling interval, whole seconds.
fn opt_steadystate_check_interval(
    s: &mut Settings,
    key: &str,
    value: Option<&str>,
    _line: usize,
) -> Result<(), String> {
    let d = parse_duration(key, need(key, value, "10s")?, TimeUnit::Seconds).map_err(sv)?;
    if d.is_zero() || !d.as_millis().is_multiple_of(1000) {
        return Err(format!(
            "invalid value for {key}: diskmeter samples whole seconds; give 1s or more in whole seconds, \
                 e.g. {key}=10s"
        ));
    }
    s.ss_interval = d.as_secs();
    Ok(())
}

/// `steadystate_ramp_time`, `ss_ramp`: the time before steady-state checking starts.
fn opt_steadystate_ramp_time(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.ss_ramp = parse_duration(key, need(key, value, "10s")?, TimeUnit::Seconds).map_err(sv)?;
    Ok(())
}

/// `fsync`: sync after every N writes.
fn opt_fsync(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.job.fsync = uint(key, need(key, value, "32")?, "32")?;
    Ok(())
}

/// `iodepth_batch_submit`, `iodepth_batch`: I/Os submitted at once (0 means 1).
fn opt_iodepth_batch_submit(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    // fio treats 0 as "the default", which is 1.
    s.job.submit_batch = uint::<u32>(key, need(key, value, "1")?, "1")?.max(1);
    Ok(())
}

/// `verify`: the checksum (`0`/`null`: off).
fn opt_verify(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let v = need(key, value, "crc32c")?;
    if v == "0" || v == "null" {
        s.verify_on = Some(false);
    } else {
        s.verify.kind = VerifyKind::parse(v).ok_or_else(|| {
            format!("invalid value for verify: \"{v}\" is not supported; use one of {}", VerifyKind::NAMES)
        })?;
        s.verify_on = Some(true);
    }
    s.lines.insert(Field::Verify, line);
    Ok(())
}

/// `verify_interval`: bytes per verified chunk.
fn opt_verify_interval(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.verify.interval = Some(parse_size(key, need(key, value, "4k")?).map_err(sv)?);
    s.lines.insert(Field::VerifyInterval, line);
    Ok(())
}

/// `verify_pattern`: the payload of pattern verification (turns it on without `verify`).
fn opt_verify_pattern(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    s.verify.pattern = Some(units::parse_verify_pattern(key, need(key, value, "0xdeadbeef")?).map_err(sv)?);
    // As fio: a pattern without verify= verifies with it.
    if s.verify_on.is_none() {
        s.verify.kind = VerifyKind::Pattern;
        s.verify_on = Some(true);
    }
    s.lines.insert(Field::Verify, line);
    Ok(())
}

/// `do_verify`: read back after the writes.
fn opt_do_verify(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.verify.after_writes = boolean(key, value)?;
    Ok(())
}

/// `verify_only`: read and check what an earlier run wrote.
fn opt_verify_only(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.verify.only = boolean(key, value)?;
    Ok(())
}

/// `verify_fatal`: stop at the first failure.
fn opt_verify_fatal(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.verify.fatal = boolean(key, value)?;
    Ok(())
}

/// `verify_backlog`: read back every N writes.
fn opt_verify_backlog(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let n: u64 = uint(key, need(key, value, "1024")?, "1024")?;
    s.verify.backlog = (n > 0).then_some(n);
    Ok(())
}

/// `verify_state_save`: save the state file, named after the job.
fn opt_verify_state_save(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.verify_state.0 = boolean(key, value)?;
    Ok(())
}

/// `verify_state_load`: load the state file.
fn opt_verify_state_load(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.verify_state.1 = boolean(key, value)?;
    Ok(())
}

/// `randseed`: the seed.
fn opt_randseed(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.randseed = Some(uint(key, need(key, value, "42")?, "42")?);
    Ok(())
}

/// `randrepeat`: `0`: a seed that changes from run to run.
fn opt_randrepeat(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.randrepeat = boolean(key, value)?;
    Ok(())
}

/// `stonewall`, `wait_for_previous`: start a new group of jobs, after the ones before. (fio's
/// switches: on alone or with 1, off with 0.)
fn opt_stonewall(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.stonewall = boolean(key, value)?;
    Ok(())
}

/// `new_group`: start a new reporting group.
fn opt_new_group(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.new_group = boolean(key, value)?;
    Ok(())
}

/// `group_reporting`: report the group as one.
fn opt_group_reporting(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.group_reporting = boolean(key, value)?;
    Ok(())
}

/// `name`: the job's name (else its section's).
fn opt_name(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    s.name = Some(need(key, value, "randread-4k")?.to_string());
    Ok(())
}

/// `loops`: run the job this many times.
fn opt_loops(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let n: u32 = uint(key, need(key, value, "1")?, "1")?;
    if n == 0 {
        return Err("invalid value for loops: 0; give the number of times to run the job, 1 or more".into());
    }
    s.job.loops = n;
    Ok(())
}

/// `io_size`, `io_limit`: the bytes to move.
fn opt_io_size(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    let v = need(key, value, "4g")?;
    no_percent(key, v)?;
    let b = parse_size(key, v).map_err(sv)?;
    if b == 0 {
        return Err(format!("invalid value for {key}: 0; give the bytes to move, e.g. {key}=4g"));
    }
    s.job.io_bytes = Some(b);
    Ok(())
}

/// `buffer_compress_percentage`: how compressible the written data is.
fn opt_buffer_compress_percentage(s: &mut Settings, key: &str, value: Option<&str>, line: usize) -> Result<(), String> {
    let p: u64 = uint(key, need(key, value, "50")?, "50")?;
    if p > 100 {
        return Err(format!("invalid value for {key}: {p} is above 100; use a percentage from 0 to 100"));
    }
    s.job.data = DataPattern::Compress { pct: p as u8 };
    s.lines.insert(Field::Data, line);
    Ok(())
}

/// `zero_buffers`: write zeros.
fn opt_zero_buffers(s: &mut Settings, key: &str, value: Option<&str>, _line: usize) -> Result<(), String> {
    if boolean(key, value)? {
        s.job.data = DataPattern::Zeros;
    } else if s.job.data == DataPattern::Zeros {
        s.job.data = DataPattern::Random;
    }
    Ok(())
}

fn unknown_option(key: &str, value: Option<&str>) -> String {
    let known = |k: &str| SUPPORTED.contains(&k) || ignored_kind(k).is_some();
    let lower = key.to_ascii_lowercase();
    if lower != key && known(&lower) {
        return format!("unknown option {key}; options are case-sensitive, write {lower}");
    }
    if value.is_none() {
        if let Some((first, rest)) = key.split_once(char::is_whitespace) {
            if known(first) {
                return format!("unknown option \"{key}\"; did you mean {first}={}?", rest.trim());
            }
        }
    }
    format!("unknown option {key}; supported options are {}", SUPPORTED.join(", "))
}

/// The job file's words for a failed check ([`crate::validate::Words`]): each field named by the
/// option that sets it, and set as `option=value`.
pub struct JobFileWords;

impl Words for JobFileWords {
    fn name(&self, field: Field) -> &str {
        match field {
            Field::Bs => "bs",
            Field::Qd => "iodepth",
            Field::Threads => "numjobs",
            Field::Mix => "rwmixread",
            Field::Size => "size",
            Field::Offset => "offset",
            Field::Runtime => "runtime",
            Field::RateIops => "rate_iops",
            Field::Dist => "random_distribution",
            Field::Data => "buffer_compress_percentage",
            Field::Verify => "verify",
            Field::VerifyInterval => "verify_interval",
            Field::VerifyPattern => "verify_pattern",
            Field::BsSplit => "bssplit",
            Field::BsRange => "bsrange",
            Field::BlockAlign => "blockalign",
            Field::RwModifier => "rw",
            Field::Zones => "zonesize",
            Field::Fill => "fill_device",
        }
    }
    fn example(&self, field: Field, value: &str) -> String {
        format!("{}={value}", self.name(field))
    }
    fn buffered(&self) -> &str {
        "direct=0"
    }
    fn runtime_advice(&self) -> String {
        format!(
            "set e.g. {}, or remove time_based to run until size bytes are done",
            self.example(Field::Runtime, "30s")
        )
    }
}

/// An `ioengine` option naming an engine that runs as another one, and the jobs it applies to.
struct Substitution {
    asked: String,
    line: usize,
    runs_as: EngineKind,
    jobs: Vec<String>,
}

impl Substitution {
    fn note(self, at: &str) -> PlanNote {
        let why = match self.asked.as_str() {
            "libaio" => "diskmeter has no libaio engine".to_string(),
            asked => format!("diskmeter has no {asked} engine; psync does the same reads and writes with pread/pwrite"),
        };
        let jobs = self.jobs.iter().map(|j| format!("[{j}]")).collect::<Vec<_>>().join(", ");
        let s = if self.jobs.len() == 1 { "" } else { "s" };
        PlanNote {
            code: PlanNote::ENGINE_SUBSTITUTED.to_string(),
            message: format!("{at}: ioengine={} runs as {} in job{s} {jobs} ({why})", self.asked, self.runs_as.name()),
        }
    }
}

/// Finish a job section: derive name, seed and total rate, validate, and add the job to
/// the plan; record an engine substitution in `subs`. Errors carry the line to report.
fn finish_job(
    sec: Section,
    plan: &mut RunPlan,
    subs: &mut Vec<Substitution>,
    notes: &mut Vec<(usize, &'static str, String)>,
) -> Result<(), (usize, String)> {
    let Section { name: section_name, line: header, settings: s } = sec;
    let mut job = s.job.clone();
    job.name = s.name.clone().unwrap_or(section_name);
    (job.bs, job.block_sizes) = s.sizes.resolve();
    job.zones = strided_zones(s.zone)?;
    finish_files(&mut job, &s)?;
    // fio's clones are whole jobs: each walks the region itself and moves all of `size`.
    job.own_walks = job.threads > 1;
    if let Some(seed) = s.randseed {
        job.seed = seed;
    } else if !s.randrepeat {
        job.seed = time_seed(&job.name);
    }
    job.verify = (s.verify_on == Some(true)).then(|| {
        let mut v = s.verify.clone();
        // fio's state file is named after the job; `--verify-state FILE` overrides it.
        if (s.verify_state.0 || s.verify_state.1) && v.state.is_none() {
            v.state = Some(PathBuf::from(format!("{}-verify.state", job.name)));
        }
        v.load_state |= s.verify_state.1;
        v
    });
    finish_rates(&mut job, &s, notes)?;
    if job.files.is_some() {
        let line = s.nrfiles.map(|n| n.1).or(s.directory.as_ref().map(|d| d.1)).unwrap_or(header);
        let why = if job.verify.is_some() {
            Some("verify checks one file per job")
        } else if job.fill {
            Some("fill_device/fill_fs fill one file")
        } else {
            None
        };
        if let Some(why) = why {
            return Err((line, format!("one job over several files cannot run here: {why}; give the job one file")));
        }
    }
    finish_flow(&mut job, &s, plan)?;
    if let Err(e) = check_job(&job) {
        let line = match e.field {
            Field::Runtime => s.lines.get(&Field::Runtime).copied().or(s.time_based_line),
            Field::RateIops => s.rate_per_worker.or(s.rate_bytes).map(|(_, l)| l),
            f => s.lines.get(&f).copied(),
        }
        .unwrap_or(header);
        let option = JobFileWords.name(e.field);
        return Err((line, format!("invalid value for {option} in job [{}]: {}", job.name, e.message(&JobFileWords))));
    }
    let new_group = match plan.groups.last() {
        None => true,
        Some(g) => s.stonewall && !g.jobs.is_empty(),
    };
    if new_group {
        plan.groups.push(JobGroup::default());
    }
    // fio's new_group starts a new reporting group (not a stonewall): the jobs still run
    // together, and group_reporting merges each reporting group on its own.
    job.flow.report_group = match plan.groups.last().and_then(|g| g.jobs.last()) {
        Some(prev) if s.new_group => prev.flow.report_group + 1,
        Some(prev) => prev.flow.report_group,
        None => 0,
    };
    if let Some((asked, line)) = s.engine_substituted {
        match subs.iter_mut().find(|x| x.line == line) {
            Some(x) => x.jobs.push(job.name.clone()),
            None => subs.push(Substitution { asked, line, runs_as: job.engine, jobs: vec![job.name.clone()] }),
        }
    }
    if let Some(g) = plan.groups.last_mut() {
        g.group_reporting |= s.group_reporting;
        g.jobs.push(job);
    }
    Ok(())
}

/// Times `threads` (fio's rates are per worker), or the error at `line`.
fn per_job(v: [Option<u64>; 2], threads: u32, key: &str, line: usize) -> Result<[Option<u64>; 2], (usize, String)> {
    let mul = |x: Option<u64>| -> Result<Option<u64>, (usize, String)> {
        x.map(|x| {
            x.checked_mul(u64::from(threads))
                .ok_or_else(|| (line, format!("invalid value for {key}: {x} per worker times numjobs is too large")))
        })
        .transpose()
    };
    Ok([mul(v[0])?, mul(v[1])?])
}

/// fio's per-direction rates as the job's open-loop rate: a pure job takes its direction's
/// rate; a mixed job with both runs at their sum, its read share set so that each direction
/// gets its own rate (what fio does: it paces each direction by itself). A mixed job with one
/// direction limited cannot be paced by one schedule and is refused.
fn finish_rates(
    job: &mut JobSpec,
    s: &Settings,
    notes: &mut Vec<(usize, &'static str, String)>,
) -> Result<(), (usize, String)> {
    if let (Some(_), Some((_, line))) = (s.rate_per_worker, s.rate_bytes) {
        return Err((line, "rate and rate_iops both limit the job; give one of them, e.g. rate_iops=1000".into()));
    }
    let (key, caps, line) = match (s.rate_per_worker, s.rate_bytes) {
        (Some((v, line)), _) => ("rate_iops", per_job(v, job.threads, "rate_iops", line)?, line),
        (None, Some((v, line))) => {
            let bs = job.bs.max(1);
            let v = [v[0].map(|b| (b / bs).max(1)), v[1].map(|b| (b / bs).max(1))];
            ("rate", per_job(v, job.threads, "rate", line)?, line)
        }
        (None, None) => return Ok(()),
    };
    let rp = job.rw.read_pct(job.mix);
    job.rate_iops = match (rp, caps) {
        (100, [r, _]) => r,
        (0, [_, w]) => w,
        (_, [Some(r), Some(w)]) => {
            let total = r.saturating_add(w);
            let mix = ((r as f64 * 100.0 / total as f64).round() as u8).clamp(1, 99);
            if mix != job.mix {
                notes.push((
                    line,
                    PlanNote::RATE_SETS_MIX,
                    format!(
                        "{key} paces reads and writes of the mixed job [{}] each at its own rate, as fio does: \
                         the job runs at {total} I/Os per second with {mix}% reads (rwmixread={} does not apply)",
                        job.name, job.mix
                    ),
                ));
            }
            job.mix = mix;
            Some(total)
        }
        (_, [None, None]) => None,
        _ => {
            return Err((
                line,
                format!(
                    "{key} limits only one direction of the mixed job [{}]; diskmeter paces a mixed job as one \
                     stream: give both rates, e.g. {key}=500,500",
                    job.name
                ),
            ))
        }
    };
    if let Some(m) = s.rate_iops_min {
        job.flow.rate_iops_min = per_job(m, job.threads, "rate_iops_min", line)?;
    }
    if let Some(m) = s.rate_bytes_min {
        job.flow.rate_bytes_min = per_job(m, job.threads, "rate_min", line)?;
    }
    Ok(())
}

/// The other run-flow options: wait_for, startdelay, logs, steady state, offload.
fn finish_flow(job: &mut JobSpec, s: &Settings, plan: &RunPlan) -> Result<(), (usize, String)> {
    if s.rate_per_worker.is_none() && s.rate_bytes.is_none() {
        if let Some(m) = s.rate_iops_min {
            job.flow.rate_iops_min = per_job(m, job.threads, "rate_iops_min", 0)?;
        }
        if let Some(m) = s.rate_bytes_min {
            job.flow.rate_bytes_min = per_job(m, job.threads, "rate_min", 0)?;
        }
    }
    if let Some((name, line)) = &s.wait_for {
        let earlier = plan.groups.iter().flat_map(|g| &g.jobs).any(|j| j.name == *name);
        if !earlier {
            return Err((
                *line,
                format!(
                    "wait_for={name}: no job named {name} comes before [{}]; name a job defined earlier in the file",
                    job.name
                ),
            ));
        }
        job.flow.wait_for = Some(name.clone());
    }
    if let Some((lo, hi)) = s.startdelay {
        job.flow.start_delay_ms =
            if hi > lo { lo + mix64(job.seed ^ 0x5354_4152_5444_4c59) % (hi - lo + 1) } else { lo };
    }
    if s.log_bw.is_some() || s.log_lat.is_some() || s.log_iops.is_some() {
        // fio's default log_avg_msec=0 logs every I/O.
        let avg_ms = s.log_avg_ms.unwrap_or(0);
        let name = |n: &Option<Option<String>>| n.as_ref().map(|n| n.clone().unwrap_or_else(|| job.name.clone()));
        job.flow.logs = Some(FioLogs {
            bw: name(&s.log_bw),
            lat: name(&s.log_lat),
            iops: name(&s.log_iops),
            avg_ms,
            per_job: s.per_job_logs,
            offset: s.log_offset,
        });
    }
    if !s.ss_dur.is_zero() {
        let (metric, limit, pct) = s.ss.unwrap_or((SsMetric::IopsSlope, 0.01, true));
        if !s.ss_dur.as_secs().is_multiple_of(s.ss_interval) {
            return Err((
                s.ss_line,
                format!(
                    "ss_dur={}s is not a whole number of ss_interval={}s samples; make it a multiple",
                    s.ss_dur.as_secs(),
                    s.ss_interval
                ),
            ));
        }
        job.flow.steadystate =
            Some(SteadySpec { metric, limit, pct, dur: s.ss_dur, ramp: s.ss_ramp, interval_s: s.ss_interval });
    } else if s.ss.is_some() {
        return Err((
            s.ss_line,
            "steadystate needs a window: add ss_dur=T, e.g. ss_dur=30s (without it fio never checks)".into(),
        ));
    }
    if let Some(bound_ns) = s.lat_target {
        job.flow.latency_target = Some(crate::model::LatencyTarget {
            bound_ns,
            percentile: s.lat_pct.unwrap_or(100.0),
            window_ns: s.lat_window.unwrap_or(0),
        });
    }
    if let (Some(line), false) = (s.offload, job.engine == EngineKind::IoUring) {
        return Err((
            line,
            format!(
                "io_submit_mode=offload in job [{}] submits through io_uring's SQ polling thread; use \
                 ioengine=io_uring (or libaio), or io_submit_mode=inline",
                job.name
            ),
        ));
    }
    Ok(())
}

fn mix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// fio's strided zones from `zonemode`, `zonesize`, `zonerange` and `zoneskip`: a zonesize
/// without zonemode means strided; zonerange defaults to zonesize.
fn strided_zones(
    (mode, size, range, skip, line): (Option<bool>, Option<u64>, Option<u64>, u64, usize),
) -> Result<Option<crate::model::StridedZones>, (usize, String)> {
    match (mode, size) {
        (Some(false), Some(_)) => Err((
            line,
            "zonemode=none and zonesize do not go together (fio refuses them too); use zonemode=strided or \
             remove zonesize"
                .into(),
        )),
        (Some(true), None) => {
            Err((line, "zonemode=strided needs zonesize, the bytes to move in a zone, e.g. zonesize=16m".into()))
        }
        (_, Some(0)) => Err((line, "invalid value for zonesize: 0; give the bytes per zone, e.g. zonesize=16m".into())),
        (Some(true) | None, Some(size)) => {
            let range = range.unwrap_or(size);
            if range == 0 {
                return Err((line, "invalid value for zonerange: 0; give the zone's size, e.g. zonerange=64m".into()));
            }
            Ok(Some(crate::model::StridedZones { size, range, skip }))
        }
        (_, None) => Ok(None),
    }
}

/// The most files one job may run over (each is an open file descriptor).
pub const MAX_FILES: usize = 4096;

/// fio's `:`-separated list of names, with `\:` for a ':' inside a name.
fn split_filenames(v: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = v.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&':') => {
                cur.push(':');
                chars.next();
            }
            ':' => out.push(PathBuf::from(std::mem::take(&mut cur))),
            c => cur.push(c),
        }
    }
    out.push(PathBuf::from(cur));
    out
}

/// fio's `file_service_type`: `random`, `roundrobin` or `sequential` with an optional `:N` (I/Os
/// before the next file), or `zipf`, `pareto`, `normal`/`gauss` with an optional parameter.
fn parse_file_service(v: &str) -> Result<crate::model::FileService, String> {
    use crate::model::{Distribution, FileService, FileServiceKind};
    let (name, arg) = match v.split_once(':') {
        Some((n, a)) => (n.trim().to_ascii_lowercase(), Some(a.trim())),
        None => (v.trim().to_ascii_lowercase(), None),
    };
    let hint = "use random, roundrobin or sequential (each with an optional :N, the I/Os before the next \
                file), or zipf:THETA, pareto:H, normal:DEV";
    let kind = match name.as_str() {
        "random" => FileServiceKind::Random,
        "roundrobin" => FileServiceKind::RoundRobin,
        "sequential" => FileServiceKind::Sequential,
        "zipf" | "pareto" | "normal" | "gauss" => {
            // fio's defaults without a parameter: zipf 1.1, pareto 0.2, normal always the middle file.
            let dist = match (name.as_str(), arg) {
                ("zipf", None) => Distribution::Zipf { theta: 1.1 },
                ("pareto", None) => Distribution::Pareto { h: 0.2 },
                (_, None) => Distribution::Normal { dev_pct: 0.0, center: 0.5 },
                (_, Some(a)) => crate::units::parse_distribution("file_service_type", &format!("{name}:{a}"))
                    .map_err(|e| e.to_string())?,
            };
            if matches!(dist, Distribution::Zipf { theta } if theta == 1.0) {
                return Err("invalid value for file_service_type: zipf:1; the zipf exponent must differ from 1 \
                            (fio's rule), e.g. zipf:1.1"
                    .into());
            }
            return Ok(FileService { kind: FileServiceKind::Skewed { dist }, switch_every: 1 });
        }
        _ => return Err(format!("invalid value for file_service_type: \"{v}\"; {hint}")),
    };
    let switch_every = match arg {
        None => 1,
        Some(a) => match a.parse::<u32>() {
            Ok(n) if n > 0 => n,
            _ => {
                return Err(format!(
                    "invalid value for file_service_type: \"{v}\"; the number after ':' is the I/Os to a file \
                     before the next, 1 or more (e.g. {name}:8)"
                ))
            }
        },
    };
    Ok(FileService { kind, switch_every })
}

/// The job's files (fio `filename=a:b`, `directory`, `nrfiles`, `filesize`, `file_service_type`):
/// one file stays `job.target`; several become `job.files`. `size` is the job's bytes over all of
/// its files (each file's region is `filesize`, else an equal share of `size`), as in fio.
fn finish_files(job: &mut JobSpec, s: &Settings) -> Result<(), (usize, String)> {
    let dirs = s.directory.as_ref().map(|(d, _)| d.clone()).unwrap_or_default();
    let dir_line = s.directory.as_ref().map_or(0, |d| d.1);
    let in_dir = |dir: Option<&PathBuf>, name: PathBuf| match dir {
        Some(d) if !name.is_absolute() => d.join(name),
        _ => name,
    };
    let clones = job.threads.max(1) as usize;
    let name = job.name.as_str();
    let (paths, per_clone) = if !s.filenames.is_empty() {
        // Named files: every clone shares them (fio), in the first directory.
        if let Some((n, line)) = s.nrfiles.filter(|(n, _)| *n != 1 && *n != s.filenames.len()) {
            return Err((
                line,
                format!(
                    "nrfiles={n} but filename names {} file(s); name each file (filename=a:b:c) or drop filename \
                     for fio's generated names",
                    s.filenames.len()
                ),
            ));
        }
        (s.filenames.iter().map(|n| in_dir(dirs.first(), n.clone())).collect::<Vec<_>>(), 0)
    } else if !dirs.is_empty() || s.nrfiles.is_some_and(|(n, _)| n > 1) {
        // fio's generated names, `JOB.CLONE.FILE`; each clone its own files, the directories given
        // out to the clones in turn.
        let n = s.nrfiles.map_or(1, |(n, _)| n);
        if n * clones > MAX_FILES {
            let line = s.nrfiles.map_or(dir_line, |(_, l)| l);
            return Err((line, format!("{n} files for each of {clones} clones; at most {MAX_FILES} files per job")));
        }
        let paths = (0..clones)
            .flat_map(|c| {
                let dir = (!dirs.is_empty()).then(|| &dirs[c % dirs.len()]);
                (0..n).map(move |f| in_dir(dir, PathBuf::from(format!("{name}.{c}.{f}"))))
            })
            .collect::<Vec<_>>();
        (paths, if clones > 1 { n } else { 0 })
    } else {
        (Vec::new(), 0)
    };
    let nfiles = if per_clone > 0 { per_clone } else { paths.len().max(1) };
    job.target = paths.first().cloned().or(job.target.take());
    // Sizes: the region of each file, and the bytes the job moves over all of them.
    match (s.filesize, job.size) {
        (Some((fsize, _)), size) => {
            let total = size.unwrap_or(fsize.saturating_mul(nfiles as u64));
            if total != fsize && job.io_bytes.is_none() {
                job.io_bytes = Some(total);
            }
            job.size = Some(fsize);
        }
        (None, Some(size)) if nfiles > 1 => {
            if job.io_bytes.is_none() {
                job.io_bytes = Some(size);
            }
            job.size = Some(size / nfiles as u64);
        }
        _ => {}
    }
    if paths.len() > 1 {
        if job.size_pct.is_some() {
            return Err((dir_line, "size=N% over several files is not supported; give size in bytes".into()));
        }
        job.files = Some(crate::model::FileSet { paths, per_clone, service: s.file_service.clone() });
    }
    Ok(())
}

/// A seed that differs from run to run (fio `randrepeat=0`): the current time in
/// nanoseconds mixed with the job name, through splitmix64.
fn time_seed(name: &str) -> u64 {
    let nanos =
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(0);
    let mut x = name.bytes().fold(nanos, |h, b| h.rotate_left(5) ^ u64::from(b));
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::model::{Distribution, Zone};

    fn parse(text: &str) -> RunPlan {
        match parse_jobfile("t.fio", text, &JobSpec::default()) {
            Ok(p) => p,
            Err(e) => panic!("{e}"),
        }
    }
    #[test]
    fn iodepth_batch_submit_sets_the_submit_batch() {
        assert_eq!(one("[j]\nfilename=f\niodepth=32\niodepth_batch_submit=8\n").submit_batch, 8);
        assert_eq!(one("[j]\nfilename=f\niodepth_batch=4\n").submit_batch, 4);
        // fio: 0 means the default, 1.
        assert_eq!(one("[j]\nfilename=f\niodepth_batch_submit=0\n").submit_batch, 1);
        assert_eq!(one("[j]\nfilename=f\n").submit_batch, 1);
    }

    fn one(text: &str) -> JobSpec {
        let p = parse(text);
        assert_eq!(p.groups.len(), 1);
        assert_eq!(p.groups[0].jobs.len(), 1);
        p.groups[0].jobs[0].clone()
    }
    #[test]
    fn substituted_engines_leave_a_note() {
        let notes = |text: &str| -> Vec<String> {
            let p = parse(text);
            assert!(p.notes.iter().all(|n| n.code == PlanNote::ENGINE_SUBSTITUTED));
            p.notes.into_iter().map(|n| n.message).collect()
        };
        assert_eq!(
            notes("[j]\nioengine=libaio\n"),
            ["t.fio:2: ioengine=libaio runs as io_uring in job [j] (diskmeter has no libaio engine)"]
        );
        // One note per option line, naming every job it reaches; a job's own ioengine wins.
        assert_eq!(
            notes("[global]\nioengine=libaio\n[a]\n[b]\nioengine=null\n[c]\n[d]\nioengine=pvsync2\n"),
            [
                "t.fio:2: ioengine=libaio runs as io_uring in jobs [a], [c] (diskmeter has no libaio engine)",
                "t.fio:8: ioengine=pvsync2 runs as psync in job [d] (diskmeter has no pvsync2 engine; psync does \
                 the same reads and writes with pread/pwrite)",
            ]
        );
        for e in ["sync", "pvsync"] {
            let n = notes(&format!("[j]\nioengine={e}\n"));
            assert!(n.len() == 1 && n[0].contains(&format!("ioengine={e} runs as psync")), "{n:?}");
        }
        for e in ["io_uring", "psync", "null"] {
            assert!(notes(&format!("[j]\nioengine={e}\n")).is_empty(), "{e}");
        }
        assert!(notes("[global]\nioengine=libaio\nioengine=io_uring\n[j]\n").is_empty());
    }

    /// The error as text, and its line.
    fn fail(text: &str) -> (usize, String) {
        match parse_jobfile("t.fio", text, &JobSpec::default()) {
            Err(e @ SpecError::JobFile { line, .. }) => (line, e.to_string()),
            other => panic!("expected a job-file error, got {other:?}"),
        }
    }

    #[test]
    fn fio_defaults_where_they_differ() {
        let d = JobSpec { size: Some(1 << 30), ..JobSpec::default() };
        let p = parse_jobfile("t.fio", "[j]\n", &d).unwrap();
        let j = &p.groups[0].jobs[0];
        assert_eq!(j.name, "j");
        assert_eq!(j.rw, RwMode::Read);
        assert_eq!(j.runtime, Duration::ZERO);
        assert!(!j.time_based);
        assert_eq!(j.size, None);
        // The rest comes from the defaults.
        assert_eq!(j.bs, d.bs);
        assert_eq!(j.qd, d.qd);
        assert_eq!(j.direct, d.direct);
        assert_eq!(j.engine, d.engine);
        assert_eq!(j.seed, d.seed);
        assert!(!p.groups[0].group_reporting);
    }

    #[test]
    fn the_option_table_dispatches_every_key_it_names() {
        let keys: Vec<&str> = OPTIONS.iter().flat_map(|(keys, _)| keys.iter().copied()).collect();
        let unique: HashSet<&str> = keys.iter().copied().collect();
        assert_eq!(unique.len(), keys.len(), "a key named twice");
        for key in &keys {
            // Each key reaches its own handler: whatever the value, never the unknown or
            // unsupported option's error.
            for value in [None, Some(""), Some("1"), Some("x:y")] {
                let mut s = Settings::new(&JobSpec::default());
                if let Err(m) = apply(&mut s, key, value, 7) {
                    assert!(!m.starts_with("unknown option") && !m.starts_with("option "), "{key}={value:?}: {m}");
                }
            }
            assert!(ignored_kind(key).is_none(), "{key} is both handled and ignored");
            // (startdelay's hint predates its handler, which wins.)
            assert!(*key == "startdelay" || unsupported_hint(key).is_none(), "{key} is handled and unsupported");
        }
        // The "unknown option" message lists the table's keys; the submit batch is left out of it, and
        // `include` is a line of its own (spliced in before the options are read).
        let listed: HashSet<&str> = SUPPORTED.iter().copied().collect();
        let unlisted: Vec<&str> = keys.iter().copied().filter(|k| !listed.contains(k)).collect();
        assert_eq!(unlisted, ["iodepth_batch_submit", "iodepth_batch"]);
        let not_handled: Vec<&str> = SUPPORTED.iter().copied().filter(|k| !unique.contains(k)).collect();
        assert_eq!(not_handled, ["include"]);
    }

    #[test]
    fn keys_outside_the_table_are_ignored_unsupported_or_unknown() {
        let apply_new = |key: &str, value: Option<&str>| apply(&mut Settings::new(&JobSpec::default()), key, value, 1);
        let unknown = apply_new("bogus", Some("1")).unwrap_err();
        assert_eq!(unknown, unknown_option("bogus", Some("1")));
        assert!(unknown.starts_with("unknown option bogus; supported options are filename, rw, readwrite, "));
        assert_eq!(apply_new("BS", Some("4k")).unwrap_err(), "unknown option BS; options are case-sensitive, write bs");
        assert_eq!(apply_new("bs 4k", None).unwrap_err(), "unknown option \"bs 4k\"; did you mean bs=4k?");
        assert_eq!(apply_new("include", Some("x.fio")).unwrap_err(), unknown_option("include", Some("x.fio")));
        assert_eq!(
            apply_new("hipri", None).unwrap_err(),
            "option hipri is not supported: io_uring tuning is chosen by diskmeter's engine; remove the option"
        );
        assert_eq!(apply_new("description", Some("anything at all")), Ok(()));
        assert_eq!(
            apply_new("norandommap", Some("2")).unwrap_err(),
            "invalid value for norandommap: \"2\" is not 0 or 1; write norandommap (same as norandommap=1) or \
             norandommap=0"
        );
        assert!(apply_new("iodepth_low", Some("x")).unwrap_err().starts_with("invalid value for iodepth_low:"));
    }

    #[test]
    fn every_option_maps() {
        let j = one("[global]\n\
             filename=/dev/disk/by-path/pci-0000\\:00\\:1f.2\n\
             [job]\n\
             rw=randrw\n\
             rwmixread=60\n\
             bs=64k\n\
             iodepth=32\n\
             numjobs=4\n\
             size=10G\n\
             offset=1M\n\
             runtime=30\n\
             time_based\n\
             ramp_time=2s\n\
             direct=0\n\
             ioengine=psync\n\
             random_distribution=zipf:1.1\n\
             rate_iops=500\n\
             fsync=16\n\
             randseed=1234\n\
             buffer_compress_percentage=40\n\
             loops=1\n");
        assert_eq!(j.target, Some(PathBuf::from("/dev/disk/by-path/pci-0000:00:1f.2")));
        assert_eq!(j.rw, RwMode::RandRw);
        assert_eq!(j.mix, 50, "rate_iops paces each direction alone, which sets the mix");
        assert_eq!(j.bs, 65536);
        assert_eq!(j.qd, 32);
        assert_eq!(j.threads, 4);
        assert_eq!(j.size, Some(10 << 30));
        assert_eq!(j.offset, 1 << 20);
        assert_eq!(j.runtime, Duration::from_secs(30));
        assert!(j.time_based);
        assert_eq!(j.ramp, Duration::from_secs(2));
        assert!(!j.direct);
        assert_eq!(j.engine, EngineKind::Psync);
        assert_eq!(j.dist, Distribution::Zipf { theta: 1.1 });
        // fio's rate_iops is per worker and paces each direction: 500 reads + 500 writes per
        // worker, on 4 workers.
        assert_eq!((j.rate_iops, j.mix), (Some(4000), 50));
        assert_eq!(j.fsync, 16);
        assert_eq!(j.seed, 1234);
        assert_eq!(j.data, DataPattern::Compress { pct: 40 });
    }

    #[test]
    fn aliases_and_flags() {
        let j = one("[j]\nreadwrite=rw\nrwmixwrite=30\nblocksize=8k\nbuffered\nzero_buffers\n");
        assert_eq!(j.rw, RwMode::ReadWrite);
        assert_eq!(j.mix, 70);
        assert_eq!(j.bs, 8192);
        assert!(!j.direct);
        assert_eq!(j.data, DataPattern::Zeros);
        let j = one("[j]\nbuffered=0\ndirect\ntime_based=1\nruntime=1m\nzero_buffers=0\n");
        assert!(j.direct);
        assert!(j.time_based);
        assert_eq!(j.runtime, Duration::from_secs(60));
        assert_eq!(j.data, DataPattern::Random);
        for (e, k) in [
            ("io_uring", EngineKind::IoUring),
            ("libaio", EngineKind::IoUring),
            ("sync", EngineKind::Psync),
            ("pvsync", EngineKind::Psync),
            ("null", EngineKind::Null),
        ] {
            assert_eq!(one(&format!("[j]\nioengine={e}\n")).engine, k);
        }
        let j = one("[j]\nname=custom name\nrandom_distribution=hotset:90/10\n");
        assert_eq!(j.name, "custom name");
        assert_eq!(
            j.dist,
            Distribution::Zoned {
                zones: vec![Zone { ops_pct: 90.0, area_pct: 10.0 }, Zone { ops_pct: 10.0, area_pct: 90.0 }]
            }
        );
    }

    #[test]
    fn ignored_options_are_accepted() {
        let mut text = String::from("[j]\n");
        for (name, _) in IGNORED_OPTIONS {
            let line = match ignored_kind(name) {
                Some(ValueKind::Int) => format!("{name}=8\n"),
                Some(ValueKind::Any) => format!("{name}=anything at all\n"),
                Some(ValueKind::Bool) => format!("{name}\n{name}=0\n"),
                None => unreachable!(),
            };
            text.push_str(&line);
        }
        let j = one(&text);
        assert_eq!(j, JobSpec { name: "j".into(), ..one("[j]\n") });
        let (line, e) = fail("[j]\niodepth_batch_submit=x\n");
        assert_eq!(line, 2);
        assert!(e.contains("not a whole number"), "{e}");
        let (_, e) = fail("[j]\nthread=yes\n");
        assert!(e.contains("is not 0 or 1"), "{e}");
    }

    #[test]
    fn comments_and_whitespace() {
        let j = one("\u{feff}# leading comment\n; another\n\n  [ j ]  # section comment\n\
             bs = 16k ; trailing\r\n\tiodepth=4\t# tab\n   # indented comment\nfilename=/tmp/a#b\n");
        assert_eq!(j.name, "j");
        assert_eq!(j.bs, 16384);
        assert_eq!(j.qd, 4);
        assert_eq!(j.target, Some(PathBuf::from("/tmp/a#b")));
    }

    #[test]
    fn global_inheritance_and_later_globals() {
        let p = parse(
            "[global]\nbs=8k\niodepth=4\n\
             [a]\n\
             [b]\niodepth=16\n\
             [global]\nbs=1M\n\
             [c]\n",
        );
        let jobs: Vec<_> = p.groups.iter().flat_map(|g| &g.jobs).collect();
        assert_eq!(p.groups.len(), 1, "no stonewall: all concurrent");
        assert_eq!((jobs[0].name.as_str(), jobs[0].bs, jobs[0].qd), ("a", 8192, 4));
        assert_eq!((jobs[1].name.as_str(), jobs[1].bs, jobs[1].qd), ("b", 8192, 16));
        // c: the later global changed bs but kept iodepth=4 from the first global.
        assert_eq!((jobs[2].name.as_str(), jobs[2].bs, jobs[2].qd), ("c", 1 << 20, 4));
    }

    #[test]
    fn stonewall_grouping() {
        let p = parse("[a]\n[b]\n[c]\nstonewall\n[d]\n[e]\nwait_for_previous\ngroup_reporting\n[f]\nnew_group\n");
        let names: Vec<Vec<&str>> = p.groups.iter().map(|g| g.jobs.iter().map(|j| j.name.as_str()).collect()).collect();
        // new_group is no stonewall: [f] runs with [e], in a reporting group of its own.
        assert_eq!(names, vec![vec!["a", "b"], vec!["c", "d"], vec!["e", "f"]]);
        let rep: Vec<bool> = p.groups.iter().map(|g| g.group_reporting).collect();
        assert_eq!(rep, vec![false, false, true]);
        let rg: Vec<u32> = p.groups[2].jobs.iter().map(|j| j.flow.report_group).collect();
        assert_eq!(rg, [0, 1]);
        // stonewall on the first job does not create an empty group.
        let p = parse("[a]\nstonewall\n[b]\n");
        assert_eq!(p.groups.len(), 1);
        // stonewall in [global] makes every job its own group.
        let p = parse("[global]\nstonewall\ngroup_reporting\n[a]\n[b]\n[c]\n");
        assert_eq!(p.groups.len(), 3);
        assert!(p.groups.iter().all(|g| g.group_reporting && g.jobs.len() == 1));
    }

    #[test]
    fn variables_and_keywords_expand() {
        let kw = |w: &str| match w {
            "ncpus" => Some("8".to_string()),
            "pagesize" => Some("4096".to_string()),
            "mb_memory" => Some("24000".to_string()),
            _ => None,
        };
        std::env::set_var("DISKMETER_FIO_TEST_BS", "16k");
        assert_eq!(expand("${DISKMETER_FIO_TEST_BS}", &kw).unwrap(), "16k");
        assert_eq!(expand("$ncpus", &kw).unwrap(), "8");
        assert_eq!(expand("${DISKMETER_FIO_TEST_UNSET}x", &kw).unwrap(), "x");
        assert_eq!(expand("$mb_memorym", &kw).unwrap(), "24000m");
        assert_eq!(expand("a$pagesize-$other", &kw).unwrap(), "a4096-$other");
        assert!(expand("${OPEN", &kw).is_err());
        // Through a job file: numjobs=$ncpus, bs from the environment.
        let j = one("[j]\nnumjobs=$ncpus\nbs=${DISKMETER_FIO_TEST_BS}\n");
        assert_eq!(j.bs, 16 << 10);
        assert_eq!(j.threads as usize, std::thread::available_parallelism().map_or(1, |n| n.get()));
        assert!(system_var("mb_memory").unwrap().parse::<u64>().unwrap() > 0);
        assert!(system_var("pagesize").unwrap().parse::<u64>().unwrap() >= 4096);
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("diskmeter-fio-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(d.join("sub")).unwrap();
        d
    }

    #[test]
    fn include_splices_files_relative_to_the_includer() {
        let d = scratch("include");
        std::fs::write(d.join("sub/common.fio"), "[global]\nbs=64k\niodepth=8\n").unwrap();
        std::fs::write(d.join("sub/job.fio"), "include common.fio\n[j]\nrw=randread\n").unwrap();
        std::fs::write(d.join("main.fio"), "# top\ninclude sub/job.fio\n").unwrap();
        let plan = read_jobfile(&d.join("main.fio"), &JobSpec::default()).unwrap();
        let j = &plan.groups[0].jobs[0];
        assert_eq!((j.bs, j.qd, j.rw), (64 << 10, 8, RwMode::RandRead));
        // An error inside an included file names that file and its line.
        std::fs::write(d.join("sub/common.fio"), "[global]\nbs=lots\n").unwrap();
        let e = read_jobfile(&d.join("main.fio"), &JobSpec::default()).unwrap_err().to_string();
        assert!(e.contains("common.fio:2:"), "{e}");
        // A missing include is reported at the include line.
        std::fs::write(d.join("sub/job.fio"), "include nothere.fio\n[j]\n").unwrap();
        let e = read_jobfile(&d.join("main.fio"), &JobSpec::default()).unwrap_err().to_string();
        assert!(e.contains("job.fio:1:") && e.contains("nothere.fio"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn include_loops_are_found() {
        let d = scratch("loop");
        std::fs::write(d.join("a.fio"), "include b.fio\n[j]\n").unwrap();
        std::fs::write(d.join("b.fio"), "[global]\nbs=8k\ninclude a.fio\n").unwrap();
        let e = read_jobfile(&d.join("a.fio"), &JobSpec::default()).unwrap_err().to_string();
        assert!(e.contains("b.fio:3:") && e.contains("include loop"), "{e}");
        std::fs::write(d.join("self.fio"), "include self.fio\n").unwrap();
        let e = read_jobfile(&d.join("self.fio"), &JobSpec::default()).unwrap_err().to_string();
        assert!(e.contains("include loop"), "{e}");
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn random_generator_is_accepted_with_a_note_and_io_submit_mode_inline() {
        let plan = parse("[j]\nrandom_generator=lfsr\nio_submit_mode=inline\n");
        assert_eq!(plan.notes.len(), 1);
        assert_eq!(plan.notes[0].code, PlanNote::GENERATOR_SUBSTITUTED);
        assert!(plan.notes[0].message.starts_with("t.fio:2: random_generator=lfsr"), "{}", plan.notes[0].message);
        let (line, m) = fail("[j]\nrandom_generator=mt19937\n");
        assert!(line == 2 && m.contains("tausworthe, lfsr"), "{m}");
        assert!(one("[j]\nio_submit_mode=offload\n").offload);
        assert!(!one("[j]\nio_submit_mode=inline\n").offload);
        let (line, m) = fail("[j]\nioengine=psync\nio_submit_mode=offload\n");
        assert!(line == 3 && m.contains("SQ polling"), "{m}");
    }

    #[test]
    fn io_size_and_loops() {
        let j = one("[j]\nsize=8m\nio_size=32m\nloops=2\n");
        assert_eq!((j.io_bytes, j.loops), (Some(32 << 20), 2));
        assert_eq!(one("[j]\nio_limit=1g\n").io_bytes, Some(1 << 30));
        let (line, m) = fail("[j]\nloops=0\n");
        assert!(line == 2 && m.contains("loops"), "{m}");
        let (line, m) = fail("[j]\nio_size=50%\n");
        assert!(line == 2 && m.contains("percent"), "{m}");
        let (_, m) = fail("[j]\nnumber_ios=10\n");
        assert!(m.contains("io_size"), "{m}");
    }

    #[test]
    fn switches_take_fios_0_and_1() {
        let p = parse("[a]\ngroup_reporting=1\n[b]\nstonewall=1\n[c]\nstonewall=0\n");
        assert_eq!(p.groups.len(), 2, "b starts a group, c does not");
        assert!(p.groups[0].group_reporting);
        assert_eq!(p.groups[1].jobs.len(), 2);
    }

    #[test]
    fn verify_options_map_to_the_job() {
        let j = one("[j]\nverify=md5\nverify_interval=512\ndo_verify=0\nverify_fatal=1\nverify_backlog=64\n\
             verify_state_save=1\n");
        let v = j.verify.expect("verified");
        assert_eq!(
            (v.kind, v.interval, v.after_writes, v.fatal, v.backlog),
            (VerifyKind::Md5, Some(512), false, true, Some(64))
        );
        assert_eq!(v.state.as_deref(), Some(Path::new("j-verify.state")));
        assert!(!v.load_state);
        // A pattern alone verifies with it (as fio); verify=0 turns verification off.
        let p = one("[j]\nverify_pattern=0xfeed\n").verify.expect("pattern verifies");
        assert_eq!((p.kind, p.pattern), (VerifyKind::Pattern, Some(vec![0xfe, 0xed])));
        assert!(one("[j]\nverify=0\n").verify.is_none());
        assert!(one("[j]\nverify_interval=4k\n").verify.is_none(), "sub-options alone do not verify");
        let only = one("[j]\nrw=read\nverify=crc32c-intel\nverify_only\nverify_state_load=1\n").verify.expect("v");
        assert!(only.only && only.load_state && only.kind == VerifyKind::Crc32c);
        let (line, m) = fail("[j]\nverify=crc7\n");
        assert!(line == 2 && m.contains("crc32c, md5"), "{m}");
        let (line, m) = fail("[j]\nverify=crc32c\nverify_interval=100\n");
        assert!(line == 3 && m.contains("verify_interval"), "{m}");
        let (line, m) = fail("[j]\nioengine=null\nverify=md5\n");
        assert!(line == 3 && m.contains("nothing to verify"), "{m}");
        let (line, m) = fail("[j]\nverify=pattern\n");
        assert!(line == 2 && m.contains("verify_pattern"), "{m}");
        let (_, m) = fail("[j]\nrw=write:1k\nbs=4k\nverify=crc32c\n");
        assert!(m.contains("chunk boundaries"), "{m}");
        one("[j]\nrw=write:8k\nbs=4k\nverify=crc32c\n");
        let (_, m) =
            fail("[j]\nrw=read\nzonemode=strided\nzonesize=64k\nzonerange=64k\nzoneskip=1k\nverify=md5\nbs=4k\n");
        assert!(m.contains("chunk boundaries"), "{m}");
        let (line, m) = fail("[j]\nverify_async=4\n");
        assert!(line == 2 && m.contains("verify option is not supported"), "{m}");
    }

    #[test]
    fn zoned_with_a_remainder_zone() {
        // fio's own form: the last zone leaves out its area and takes the rest.
        let j = one("[j]\nrandom_distribution=zoned:50/5:30/15:20/\n");
        let Distribution::Zoned { zones } = j.dist else { panic!("zoned expected, got {:?}", j.dist) };
        let areas: Vec<f64> = zones.iter().map(|z| z.area_pct).collect();
        assert_eq!(areas, vec![5.0, 15.0, 80.0]);
    }

    #[test]
    fn run_flow_options_map() {
        use crate::model::{ErrorClass, RateProcess, SsMetric};
        let p = parse(
            "[global]\nthreads\nthread=1\n[a]\nexitall\nexitall_on_error=1\ncontinue_on_error=read\n\
             [b]\nwait_for=a\nstartdelay=2\nrw=write\nbs=8k\nrate=80k,800k\nrate_process=poisson\n\
             rate_min=,400k\nratecycle=2000\n[c]\nstartdelay=1-5\nrate_iops=100\nrate_iops_min=50\nnumjobs=2\n",
        );
        let j: Vec<&JobSpec> = p.groups[0].jobs.iter().collect();
        assert_eq!(p.groups.len(), 1, "wait_for and startdelay do not make groups");
        assert!(j[0].flow.exitall && j[0].flow.exitall_on_error);
        assert_eq!(j[0].flow.continue_on_error, ErrorClass::Read);
        assert_eq!(j[1].flow.wait_for.as_deref(), Some("a"));
        assert_eq!(j[1].flow.start_delay_ms, 2000);
        // rate is bytes/s per direction: the write job takes 800k / 8k = 100 IOPS.
        assert_eq!(j[1].rate_iops, Some(100));
        assert_eq!(j[1].flow.rate_process, RateProcess::Poisson);
        assert_eq!(j[1].flow.rate_bytes_min, [None, Some(400 << 10)]);
        assert_eq!(j[1].flow.ratecycle(), Duration::from_secs(2));
        assert!((1000..=5000).contains(&j[2].flow.start_delay_ms), "{}", j[2].flow.start_delay_ms);
        assert_eq!(j[2].rate_iops, Some(200));
        assert_eq!(j[2].flow.rate_iops_min, [Some(100), Some(100)], "per worker, times numjobs");
        assert_eq!(j[2].flow.ratecycle(), Duration::from_secs(1), "fio's default ratecycle");
        // The drawn delay repeats with the seed.
        assert_eq!(parse("[c]\nstartdelay=1-5\n").groups[0].jobs[0].flow.start_delay_ms, j[2].flow.start_delay_ms);
        assert!(parse("[j]\n").groups[0].jobs[0].flow.is_default());

        // A mixed job with two rates: their sum, each direction its share, and a note.
        let p = parse("[m]\nrw=randrw\nrwmixread=70\nrate_iops=300,100\n");
        let m = &p.groups[0].jobs[0];
        assert_eq!((m.rate_iops, m.mix), (Some(400), 75));
        assert_eq!(p.notes[0].code, PlanNote::RATE_SETS_MIX);
        assert!(p.notes[0].message.starts_with("t.fio:4: rate_iops paces"), "{}", p.notes[0].message);
        // One rate on a pure job: its direction's.
        assert_eq!(one("[r]\nrate_iops=300,100\n").rate_iops, Some(300));
        assert_eq!(one("[w]\nrw=write\nrate_iops=,100\n").rate_iops, Some(100));
        assert_eq!(one("[r]\nrate_iops=,100\n").rate_iops, None, "a write rate does not limit reads");

        // Logs: names default to the job's, averaged windows, per-job files by default.
        let l = one("[lj]\nwrite_bw_log=bw\nwrite_lat_log\nwrite_iops_log=io\nlog_avg_msec=500\nlog_offset=1\n");
        let logs = l.flow.logs.unwrap();
        assert_eq!(
            (logs.bw.as_deref(), logs.lat.as_deref(), logs.iops.as_deref()),
            (Some("bw"), Some("lj"), Some("io"))
        );
        assert_eq!((logs.avg_ms, logs.per_job), (500, true));
        assert!(!one("[lj]\nwrite_bw_log=bw\nlog_avg_msec=500\nper_job_logs=0\n").flow.logs.unwrap().per_job);

        // latency_target in fio's unit (µs), fio's default percentile 100.
        let lt = one("[l]\nlatency_target=500\nlatency_window=1s\n").flow.latency_target.unwrap();
        assert_eq!((lt.bound_ns, lt.percentile, lt.window_ns), (500_000, 100.0, 1_000_000_000));
        assert_eq!(
            one("[l]\nlatency_target=2ms\nlatency_percentile=99.9\n").flow.latency_target.unwrap().percentile,
            99.9
        );

        // Steady state: fio's criterion forms; ss_dur alone takes fio's default criterion.
        let ss = one("[s]\nsteadystate=bw_slope:0.1%\nss_dur=5\nss_ramp=2s\n").flow.steadystate.unwrap();
        assert_eq!((ss.metric, ss.limit, ss.pct), (SsMetric::BwSlope, 0.1, true));
        assert_eq!((ss.dur, ss.ramp), (Duration::from_secs(5), Duration::from_secs(2)));
        let ss = one("[s]\nss=iops:20\nss_dur=3\n").flow.steadystate.unwrap();
        assert_eq!((ss.metric, ss.limit, ss.pct), (SsMetric::Iops, 20.0, false));
        let ss = one("[s]\nss_dur=3\n").flow.steadystate.unwrap();
        assert_eq!((ss.metric, ss.limit, ss.pct), (SsMetric::IopsSlope, 0.01, true));
        assert_eq!(ss.interval_s, 1);
        assert_eq!(one("[s]\nss_dur=30\nss_interval=10\n").flow.steadystate.unwrap().interval_s, 10);
        assert!(fail("[s]\nss_dur=25\nss_interval=10\n").1.contains("multiple"));
        // fio's directory: the job's file there, named as fio names it; filesize is the file.
        assert_eq!(one("[w1]\ndirectory=/mnt/t\n").target.as_deref(), Some(Path::new("/mnt/t/w1.0.0")));
        let j = one("[j]\nfilename=data\ndirectory=/mnt/t\nsize=64m\nfilesize=16m\nnrfiles=1\n");
        assert_eq!(j.target.as_deref(), Some(Path::new("/mnt/t/data")));
        assert_eq!((j.size, j.io_bytes), (Some(16 << 20), Some(64 << 20)), "size moves 64 MiB over the 16 MiB file");
        assert_eq!(one("[j]\nfilename=/abs/f\ndirectory=/mnt/t\n").target.as_deref(), Some(Path::new("/abs/f")));
        // One job over several files: named ones are shared by the clones; fio's generated names are
        // each clone's own, the directories given out in turn; size is the job's bytes over them all.
        use crate::model::{FileService, FileServiceKind};
        let j = one("[j]\nfilename=/d/a:/d/b\\:c:/e/f\nsize=12m\nnumjobs=2\n");
        let f = j.files.clone().unwrap();
        assert_eq!(f.paths, [PathBuf::from("/d/a"), PathBuf::from("/d/b:c"), PathBuf::from("/e/f")]);
        assert_eq!((f.per_clone, f.service.clone()), (0, FileService::default()));
        assert_eq!((j.target.as_deref(), j.size, j.io_bytes), (Some(Path::new("/d/a")), Some(4 << 20), Some(12 << 20)));
        let j = one("[j]\ndirectory=/x:/y\nnrfiles=2\nfilesize=1m\nnumjobs=3\nfile_service_type=random:8\n");
        let f = j.files.clone().unwrap();
        let names: Vec<_> = f.paths.iter().map(|p| p.to_str().unwrap()).collect();
        assert_eq!(names, ["/x/j.0.0", "/x/j.0.1", "/y/j.1.0", "/y/j.1.1", "/x/j.2.0", "/x/j.2.1"]);
        assert_eq!((f.per_clone, f.files_per_clone()), (2, 2));
        assert_eq!(f.service, FileService { kind: FileServiceKind::Random, switch_every: 8 });
        assert_eq!((j.size, j.io_bytes), (Some(1 << 20), Some(2 << 20)), "each clone moves both its files once");
        // One clone's files are shared by nobody but are still the job's list.
        let f = one("[j]\nnrfiles=3\nsize=3m\n").files.unwrap();
        assert_eq!((f.paths.len(), f.per_clone), (3, 0));
        assert_eq!(f.paths[2], PathBuf::from("j.0.2"), "no directory: fio's names in the current one");
        for (v, kind) in [
            ("sequential", FileServiceKind::Sequential),
            ("zipf", FileServiceKind::Skewed { dist: Distribution::Zipf { theta: 1.1 } }),
            ("pareto:0.5", FileServiceKind::Skewed { dist: Distribution::Pareto { h: 0.5 } }),
            ("gauss", FileServiceKind::Skewed { dist: Distribution::Normal { dev_pct: 0.0, center: 0.5 } }),
            ("normal:20", FileServiceKind::Skewed { dist: Distribution::Normal { dev_pct: 20.0, center: 0.5 } }),
        ] {
            let j = one(&format!("[j]\nnrfiles=2\nfile_service_type={v}\n"));
            assert_eq!(j.files.unwrap().service.kind, kind, "{v}");
        }
        // numjobs with one generated file each: every clone its own (fio), none for a single clone.
        assert_eq!(one("[j]\ndirectory=/m\nnumjobs=2\n").files.unwrap().per_clone, 1);
        assert!(one("[j]\ndirectory=/m\n").files.is_none());
        assert_eq!(one("[j]\nratemin=1m\nruntime=1\ntime_based\n").flow.rate_bytes_min, [Some(1 << 20), Some(1 << 20)]);

        // fio's latency criteria: each second's mean completion latency.
        let ss = one("[s]\nss=lat:5%\nss_dur=3\n").flow.steadystate.unwrap();
        assert_eq!((ss.metric, ss.pct, ss.metric.is_slope()), (SsMetric::Lat, true, false));
        assert!(one("[s]\nss=lat_slope:0.1%\nss_dur=3\n").flow.steadystate.unwrap().metric.is_slope());

        // fio's flow control.
        let f = one("[f]\nflow=3\nflow_id=2\nflow_sleep=500\n").flow;
        assert_eq!((f.flow_weight, f.flow_id, f.flow_sleep_us), (3, 2, 500));
    }

    #[test]
    fn randrepeat_and_randseed() {
        let d = JobSpec::default();
        assert_eq!(one("[j]\nrandrepeat\n").seed, d.seed);
        assert_eq!(one("[j]\nrandrepeat=1\n").seed, d.seed);
        assert_eq!(one("[j]\nrandrepeat=0\nrandseed=7\n").seed, 7);
        // Varies per run: at least not the fixed default (probability of a clash ~2^-64).
        assert_ne!(one("[j]\nrandrepeat=0\n").seed, d.seed);
    }

    #[test]
    fn defaults_rate_is_total_not_per_worker() {
        let d = JobSpec { rate_iops: Some(100), ..JobSpec::default() };
        let p = parse_jobfile("t.fio", "[j]\nnumjobs=4\n", &d).unwrap();
        assert_eq!(p.groups[0].jobs[0].rate_iops, Some(100));
    }

    #[test]
    fn error_shapes() {
        let cases: &[(&str, usize, &str)] = &[
            ("bs=4k\n", 1, "t.fio:1: option bs appears before any section; add a [global] or [jobname] header above it"),
            ("[j]\nbs=4q\n", 2, "t.fio:2: invalid value for bs: \"4q\" is not a size; use a number with an optional k/m/g/t suffix such as 4k or 1M"),
            ("[j]\nbs\n", 2, "t.fio:2: bs needs a value; write e.g. bs=4k"),
            ("[j]\nbs=\n", 2, "t.fio:2: bs needs a value; write e.g. bs=4k"),
            ("[j]\n\nbogus=1\n", 3, "t.fio:3: unknown option bogus; supported options are filename, rw,"),
            ("[j]\nBS=4k\n", 2, "t.fio:2: unknown option BS; options are case-sensitive, write bs"),
            ("[j]\nbs 4k\n", 2, "t.fio:2: unknown option \"bs 4k\"; did you mean bs=4k?"),
            ("[j]\nstonewall=2\n", 2, "t.fio:2: invalid value for stonewall: \"2\" is not 0 or 1"),
            ("[j]\ngroup_reporting=yes\n", 2, "t.fio:2: invalid value for group_reporting: \"yes\" is not 0 or 1"),
            ("[j]\n[k]\n[j]\n", 3, "t.fio:3: section [j] is defined twice; give each job section a unique name"),
            ("[j\n", 1, "t.fio:1: section header \"[j\" has no closing ']'"),
            ("[]\n", 1, "t.fio:1: \"[]\" is not a valid section header"),
            ("[j] x\n", 1, "t.fio:1: unexpected text after the section header \"[j]\""),
            ("[j]\n=4k\n", 2, "t.fio:2: \"=4k\" has no option name before '='"),
            ("[j]\nrw=randread:0\n", 2, "t.fio:2: rw=randread:0: the I/Os per random offset must be 1 or more, e.g. rw=randread:8"),
            ("[j]\nrw=randread:x\n", 2, "t.fio:2: invalid value for rw: \"x\" is not a whole number; write e.g. rw=randread:8"),
            ("[j]\nrw=write:4q\n", 2, "t.fio:2: invalid value for rw: \"4q\" is not a size"),
            ("[j]\nrw_sequencer=random\n", 2, "t.fio:2: invalid value for rw_sequencer: \"random\"; use sequential or identical"),
            ("[j]\npercentage_random=101\n", 2, "t.fio:2: invalid value for percentage_random: 101 is above 100"),
            ("[j]\npercentage_random=10,20\n", 2, "t.fio:2: percentage_random=10,20: different read and write shares are not supported"),
            ("[j]\nrw=trim\n", 2, "t.fio:2: invalid value for rw: \"trim\" is not supported; use one of read, write"),
            ("[j]\nzonemode=zbd\n", 2, "t.fio:2: zonemode=zbd (zoned block devices) is not supported"),
            ("[j]\nzonemode=none\nzonesize=1m\n", 3, "t.fio:3: zonemode=none and zonesize do not go together"),
            ("[j]\nzonemode=strided\n", 2, "t.fio:2: zonemode=strided needs zonesize"),
            ("[j]\nbs=4k,8k,16k\n", 2, "t.fio:2: bs=4k,8k,16k: a third (trim) part is not supported, diskmeter issues no trims; give READ,WRITE such as bs=4k,64k"),
            ("[j]\nbssplit=4k/50:8k/60\n", 2, "t.fio:2: invalid value for bssplit: the percentages of \"4k/50:8k/60\" add up to 110, above 100"),
            ("[j]\nbssplit=4k/50:8k/40\n", 2, "t.fio:2: invalid value for bssplit: the percentages of \"4k/50:8k/40\" add up to 90, not 100; write SIZE/PERCENT entries"),
            ("[j]\nbssplit=4k/50::8k/50\n", 2, "t.fio:2: invalid value for bssplit: \"4k/50::8k/50\" has an empty entry"),
            ("[j]\nbssplit=4q/100\n", 2, "t.fio:2: invalid value for bssplit: \"4q\" is not a size"),
            ("[j]\nbsrange=8k-4k\n", 2, "t.fio:2: invalid value for bsrange: \"8k-4k\" has its minimum above its maximum; write MIN-MAX such as bsrange=1k-64k"),
            ("[j]\nblocksize_range=4k\n", 2, "t.fio:2: invalid value for blocksize_range: \"4k\" is not a range"),
            ("[j]\nbs_unaligned=2\n", 2, "t.fio:2: invalid value for bs_unaligned: \"2\" is not 0 or 1"),
            ("[j]\nsize=0%\n", 2, "t.fio:2: invalid value for size: 0% is no part of the target; use e.g. size=50%"),
            ("[j]\noffset=101%\n", 2, "t.fio:2: invalid value for offset: \"101%\" is above 100%"),
            ("[j]\nrw=randrw\nrate_iops=,100\n", 3, "t.fio:3: rate_iops limits only one direction of the mixed job [j]"),
            ("[j]\nrate_iops=1,2,3\n", 2, "t.fio:2: rate_iops=1,2,3: trim rates are not supported"),
            ("[j]\nrate=1m\nrate_iops=5\n", 2, "t.fio:2: rate and rate_iops both limit the job"),
            ("[j]\nrate_process=bursty\n", 2, "t.fio:2: invalid value for rate_process: \"bursty\"; use linear or poisson"),
            ("[j]\ncontinue_on_error=some\n", 2, "t.fio:2: invalid value for continue_on_error: \"some\"; use one of none, read"),
            ("[a]\n[b]\nwait_for=c\n", 3, "t.fio:3: wait_for=c: no job named c comes before [b]"),
            ("[j]\nstartdelay=5-1\n", 2, "t.fio:2: invalid value for startdelay: \"5-1\" is a range from high to low"),
            ("[j]\nss=iops:5%\n", 2, "t.fio:2: steadystate needs a window: add ss_dur=T"),
            ("[j]\nss=iops\nss_dur=10\n", 2, "t.fio:2: invalid value for ss: \"iops\""),
            ("[j]\nss_dur=1500ms\n", 2, "t.fio:2: invalid value for ss_dur: diskmeter takes one sample a second"),
            ("[j]\nlatency_run=1\n", 2, "t.fio:2: option latency_run is not supported: diskmeter finds the most IOPS under a latency bound with its own search; use latency_target"),
            ("[j]\nlatency_percentile=0\n", 2, "t.fio:2: invalid value for latency_percentile: 0"),
            ("[j]\nnrfiles=0\n", 2, "t.fio:2: invalid value for nrfiles: 0; give 1 to 4096 files"),
            ("[j]\nfilename=a:b\nnrfiles=3\n", 3, "t.fio:3: nrfiles=3 but filename names 2 file(s)"),
            ("[j]\nfilename=a::b\n", 2, "t.fio:2: filename=a::b: an empty name between ':' separators"),
            ("[j]\nfile_service_type=next\n", 2, "t.fio:2: invalid value for file_service_type: \"next\"; use random"),
            ("[j]\nfile_service_type=random:0\n", 2, "t.fio:2: invalid value for file_service_type: \"random:0\""),
            ("[j]\nfile_service_type=zipf:1\n", 2, "t.fio:2: invalid value for file_service_type: zipf:1"),
            ("[j]\nnrfiles=2\nverify=crc32c\n", 2, "t.fio:2: one job over several files cannot run here: verify checks one file"),
            ("[j]\nnrfiles=2\nfill_device=1\n", 2, "t.fio:2: one job over several files cannot run here: fill_device"),
            ("[j]\nnrfiles=3000\nnumjobs=2\n", 2, "t.fio:2: 3000 files for each of 2 clones; at most 4096"),
            ("[j]\nfilesize=1m-2m\n", 2, "t.fio:2: filesize=1m-2m: a range of file sizes is not supported"),
            ("[j]\nioengine=posixaio\n", 2, "t.fio:2: invalid value for ioengine: \"posixaio\" is not supported; use io_uring"),
            ("[j]\nioscheduler=none\n", 2, "t.fio:2: option ioscheduler is not supported: diskmeter does not switch I/O schedulers"),
            ("[j]\nloops=0\n", 2, "t.fio:2: invalid value for loops: 0"),
            ("[j]\ndirect=2\n", 2, "t.fio:2: invalid value for direct: \"2\" is not 0 or 1; write direct (same as direct=1) or direct=0"),
            ("[j]\ntime_based=yes\n", 2, "t.fio:2: invalid value for time_based: \"yes\" is not 0 or 1"),
            ("[j]\nruntime=-1\n", 2, "t.fio:2: invalid value for runtime: \"-1\" is negative"),
            ("[j]\nruntime=5x\n", 2, "t.fio:2: invalid value for runtime: \"5x\" is not a duration"),
            ("[j]\nramp_time=400d\n", 2, "t.fio:2: invalid value for ramp_time: \"400d\" is longer than the one-year maximum"),
            ("[j]\niodepth=abc\n", 2, "t.fio:2: invalid value for iodepth: \"abc\" is not a whole number; write e.g. iodepth=32"),
            ("[j]\niodepth=99999999999\n", 2, "t.fio:2: invalid value for iodepth: \"99999999999\" is too large"),
            ("[j]\nrwmixread=101\n", 2, "t.fio:2: invalid value for rwmixread: \"101\" is above 100%"),
            ("[j]\nrwmixread=50.5\n", 2, "t.fio:2: invalid value for rwmixread: \"50.5\" must be a whole percentage"),
            ("[j]\nrandom_distribution=normal:0\n", 2, "t.fio:2: invalid value for random_distribution: \"normal:0\" is not a normal distribution; write normal:DEV[:CENTER]"),
            ("[j]\nrandom_distribution=gauss:5:2\n", 2, "t.fio:2: invalid value for random_distribution: \"gauss:5:2\" is not a normal distribution"),
            ("[j]\nrandom_distribution=zoned_abs:60/20G:30/100G\n", 2, "t.fio:2: invalid value for random_distribution: \"zoned_abs:60/20G:30/100G\": the zones' shares of I/O add up to 90, not 100"),
            ("[j]\nrandom_distribution=zoned_abs:60/20q:40/1G\n", 2, "t.fio:2: invalid value for random_distribution: \"20q\" is not a size"),
            ("[j]\nrandom_distribution=zoned:50/50:40/50\n", 2, "t.fio:2: invalid value for random_distribution: \"zoned:50/50:40/50\": the zone percentages must each add up to 100"),
            ("[j]\nbuffer_compress_percentage=101\n", 2, "t.fio:2: invalid value for buffer_compress_percentage: 101 is above 100"),
            // An unset variable expands to nothing, as in fio; the empty value is then refused.
            ("[j]\nfilename=${DISKMETER_TEST_UNSET_VARIABLE}\n", 2, "t.fio:2: filename needs a value"),
            ("[j]\nfilename=${DEV\n", 2, "t.fio:2: ${DEV: ${ without a closing }"),
            ("[j]\ninclude\n", 2, "t.fio:2: include needs a file name"),
            ("include other.fio\n", 1, "t.fio:1: cannot read the included file other.fio: it does not exist"),
            ("", 1, "t.fio:1: the file defines no jobs"),
            ("[global]\nbs=4k\n\n", 3, "t.fio:3: the file defines no jobs"),
            ("[j]\nrandseed=-1\n", 2, "t.fio:2: invalid value for randseed: \"-1\" is not a whole number"),
        ];
        for (text, line, prefix) in cases {
            let (l, e) = fail(text);
            assert!(e.starts_with(prefix), "for {text:?}:\n got  {e}\n want {prefix}");
            assert_eq!(l, *line, "for {text:?}: {e}");
        }
    }

    #[test]
    fn validation_errors_point_at_the_setting_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("[j]\nbs=0\n", 2, "t.fio:2: invalid value for bs in job [j]: the block size must not be 0; use e.g. bs=4k"),
            ("[global]\niodepth=0\n[j]\n", 2, "t.fio:2: invalid value for iodepth in job [j]: the queue depth 0 is out of range; use 1 to 32768, e.g. iodepth=32"),
            ("[j]\nnumjobs=2000\n", 2, "t.fio:2: invalid value for numjobs in job [j]:"),
            ("[j]\nsize=0\n", 2, "t.fio:2: invalid value for size in job [j]: the region size must not be 0"),
            ("[j]\nbs=8k\nsize=4k\n", 3, "t.fio:3: invalid value for size in job [j]: the region size 4 KiB is smaller than the block size 8 KiB (bs); use a larger size or a smaller bs"),
            ("[j]\nrate_iops=0\n", 2, "t.fio:2: invalid value for rate_iops in job [j]: a rate of 0 IOPS"),
            ("[j]\n\ntime_based\n", 3, "t.fio:3: invalid value for runtime in job [j]: a time-based run needs a runtime above 0; set e.g. runtime=30s"),
            ("[j]\nruntime=0\ntime_based\n", 2, "t.fio:2: invalid value for runtime in job [j]:"),
            ("[j]\ndirect=1\noffset=100\n", 3, "t.fio:3: invalid value for offset in job [j]: the offset 100 is not a multiple of 512 bytes, which direct I/O requires; use e.g. offset=1M, or direct=0"),
            ("[j]\nbssplit=4k/50:1000/50\n", 2, "t.fio:2: invalid value for bssplit in job [j]: the block size 1000 is not a multiple of 512 bytes, which direct I/O requires; use e.g. bssplit=4k/50:64k/50, or direct=0"),
            ("[j]\nbs=4k,0\n", 2, "t.fio:2: invalid value for bs in job [j]: the block size 0 B is out of range"),
            ("[j]\nbsrange=1k-300M\n", 2, "t.fio:2: invalid value for bsrange in job [j]: the block size 300 MiB is out of range; use sizes from 1 byte to 256 MiB, e.g. bsrange=4k-64k"),
            ("[j]\nbs=4k,8k\nba=100\n", 3, "t.fio:3: invalid value for blockalign in job [j]: the alignment 100 is not a multiple of 512 bytes, which direct I/O requires; use e.g. blockalign=4k"),
            ("[j]\nrw=write:100\n", 2, "t.fio:2: invalid value for rw in job [j]: the offset modifier 100 is not a multiple of 512 bytes, which direct I/O requires; use e.g. rw=write:4k, or direct=0"),
            ("[j]\nzonemode=strided\nzonesize=100\n", 3, "t.fio:3: invalid value for zonesize in job [j]: zonesize, zonerange and zoneskip must be multiples of 512 bytes"),
            ("[j]\nzonesize=1m\nrw=randread:4\n", 2, "t.fio:2: invalid value for zonesize in job [j]: strided zones together with rw=MODE:N"),
            ("[j]\nbs=512M\n", 2, "t.fio:2: invalid value for bs in job [j]: the block size 512 MiB is larger than the 256 MiB maximum"),
            ("[j]\niodepth=65536\n", 2, "t.fio:2: invalid value for iodepth in job [j]: 65536 is above io_uring's limit of 32768 per worker; use numjobs to add workers"),
            ("[j]\nioengine=psync\nnumjobs=64\niodepth=128\n", 4, "t.fio:4: invalid value for iodepth in job [j]: psync runs one thread per I/O in flight, and 128 x 64 workers is 8192 threads"),
        ];
        for (text, line, prefix) in cases {
            let (l, e) = fail(text);
            assert!(e.starts_with(prefix), "for {text:?}:\n got  {e}\n want {prefix}");
            assert_eq!(l, *line, "for {text:?}: {e}");
        }
        // Invalid defaults not set by the file point at the section header.
        let d = JobSpec { qd: 0, ..JobSpec::default() };
        let e = parse_jobfile("t.fio", "\n[j]\n", &d).unwrap_err();
        assert!(matches!(e, SpecError::JobFile { line: 2, .. }), "{e}");
        // buffered offset is fine
        one("[j]\ndirect=0\noffset=100\n");
    }

    fn bsz(j: &JobSpec) -> &crate::model::BlockSizes {
        j.block_sizes.as_ref().expect("variable block sizes")
    }

    fn split_of(d: &crate::model::DirSizes) -> Vec<(u64, f64)> {
        match &d.sizes {
            SizeChoice::Split { parts } => parts.iter().map(|p| (p.bs, p.pct)).collect(),
            other => panic!("not a split: {other:?}"),
        }
    }

    #[test]
    fn per_direction_block_sizes() {
        let j = one("[j]\nbs=4k,64k\n");
        assert_eq!(j.bs, 64 << 10, "bs is the largest size, what a buffer holds");
        let b = bsz(&j);
        assert_eq!(
            (&b.read.sizes, &b.write.sizes),
            (&SizeChoice::Fixed { bs: 4096 }, &SizeChoice::Fixed { bs: 65536 })
        );
        // An empty part keeps the default (fio's bs=,W).
        let j = one("[j]\nbs=,8k\n");
        assert_eq!(bsz(&j).read.sizes, SizeChoice::Fixed { bs: JobSpec::default().bs });
        assert_eq!(bsz(&j).write.sizes, SizeChoice::Fixed { bs: 8192 });
        // One size for both directions is the plain single-size job.
        let j = one("[j]\nbs=16k\n");
        assert_eq!((j.bs, j.block_sizes.is_none()), (16384, true));
        let j = one("[j]\nbs=8k,8k,\n");
        assert_eq!((j.bs, j.block_sizes.is_none()), (8192, true));
        let j = one("[j]\nbs=8k\nba=8k\n");
        assert!(j.block_sizes.is_none(), "an alignment equal to the size changes nothing");
    }

    #[test]
    fn bssplit_with_directions_and_missing_percentages() {
        let j = one("[j]\nbssplit=4k/10:64k/50:32k/40\n");
        let b = bsz(&j);
        assert_eq!(split_of(&b.read), [(4096, 10.0), (65536, 50.0), (32768, 40.0)]);
        assert_eq!(b.read, b.write);
        assert_eq!(j.bs, 65536);
        let j = one("[j]\nbssplit=2k/50:4k/50,4k/90:8k/10\n");
        assert_eq!(split_of(&bsz(&j).read), [(2048, 50.0), (4096, 50.0)]);
        assert_eq!(split_of(&bsz(&j).write), [(4096, 90.0), (8192, 10.0)]);
        // fio fills missing percentages with what is left, shared equally.
        let j = one("[j]\nbssplit=4k/50:8k/\n");
        assert_eq!(split_of(&bsz(&j).read), [(4096, 50.0), (8192, 50.0)]);
        let j = one("[j]\nbssplit=4k/40:8k:16k/\n");
        assert_eq!(split_of(&bsz(&j).read), [(4096, 40.0), (8192, 30.0), (16384, 30.0)]);
        // bssplit wins over bs and bsrange whatever the order (fio's precedence).
        let j = one("[j]\nbssplit=4k/100,8k/100\nbs=1M\nbsrange=1k-2k\n");
        assert_eq!(split_of(&bsz(&j).write), [(8192, 100.0)]);
        assert_eq!(j.bs, 8192);
        // Only the write side: reads keep bs.
        let j = one("[j]\nbs=16k\nbssplit=,4k/50:8k/50\n");
        assert_eq!(bsz(&j).read.sizes, SizeChoice::Fixed { bs: 16384 });
        assert_eq!(j.bs, 16384);
    }

    #[test]
    fn bsrange_blockalign_and_bs_unaligned() {
        let j = one("[j]\nbsrange=1k-4k,2k-8k\nblockalign=512,8k\nbs_unaligned\n");
        let b = bsz(&j);
        assert_eq!(b.read.sizes, SizeChoice::Range { min: 1024, max: 4096 });
        assert_eq!(b.write.sizes, SizeChoice::Range { min: 2048, max: 8192 });
        assert_eq!((b.read.align, b.write.align, b.unaligned), (Some(512), Some(8192), true));
        assert_eq!(j.bs, 8192);
        let j = one("[j]\nblocksize_range=4k-4k\n");
        assert!(j.block_sizes.is_none(), "a range of one size is that size");
        assert_eq!(j.bs, 4096);
        let j = one("[global]\nbsrange=4k-16k\n[j]\n");
        assert_eq!(bsz(&j).read.sizes, SizeChoice::Range { min: 4096, max: 16384 });
    }

    #[test]
    fn size_and_offset_in_percent_of_the_target() {
        let j = one("[j]\nsize=50%\noffset=10%\n");
        assert_eq!((j.size, j.size_pct, j.offset, j.offset_pct), (None, Some(50.0), 0, Some(10.0)));
        // A later absolute value replaces the share, and the other way round.
        let j = one("[global]\nsize=25%\n[j]\nsize=1g\noffset=1m\noffset=5%\n");
        assert_eq!((j.size, j.size_pct, j.offset, j.offset_pct), (Some(1 << 30), None, 0, Some(5.0)));
    }

    #[test]
    fn offset_modifiers_sequencer_and_percentage_random() {
        let j = one("[j]\nrw=write:4k\n");
        assert_eq!((j.rw, j.rw_modifier), (RwMode::Write, 4096));
        let j = one("[j]\nrw=read:-8k\n");
        assert_eq!((j.rw, j.rw_modifier), (RwMode::Read, -8192));
        let j = one("[j]\nrw=randread:8\nrw_sequencer=identical\n");
        assert_eq!((j.rw, j.rw_modifier, j.rw_identical), (RwMode::RandRead, 8, true));
        let j = one("[j]\nreadwrite=randrw:2\nrw_sequencer=sequential\npercentage_random=30\n");
        assert_eq!((j.rw_modifier, j.rw_identical, j.percentage_random), (2, false, Some(30)));
        let j = one("[j]\npercentage_random=40,40\n");
        assert_eq!(j.percentage_random, Some(40));
        assert_eq!(one("[j]\npercentage_random=100\n").percentage_random, None, "100 is fully random");
        assert_eq!(one("[j]\nrw=randread\n").rw_modifier, 0);
    }

    #[test]
    fn normal_zoned_abs_and_random_distributions() {
        use crate::model::{Distribution, ZoneAbs};
        let d = |v: &str| one(&format!("[j]\nrw=randread\nrandom_distribution={v}\n")).dist;
        assert_eq!(d("normal:10"), Distribution::Normal { dev_pct: 10.0, center: 0.5 });
        assert_eq!(d("gauss:5:0.25"), Distribution::Normal { dev_pct: 5.0, center: 0.25 });
        assert_eq!(d("random"), Distribution::Uniform);
        assert_eq!(
            d("zoned_abs:60/20G:30/100G:10/500g"),
            Distribution::ZonedAbs {
                zones: vec![
                    ZoneAbs { ops_pct: 60.0, bytes: 20 << 30 },
                    ZoneAbs { ops_pct: 30.0, bytes: 100 << 30 },
                    ZoneAbs { ops_pct: 10.0, bytes: 500 << 30 },
                ]
            }
        );
    }

    #[test]
    fn strided_zones() {
        use crate::model::StridedZones;
        let z = |t: &str| one(t).zones;
        assert_eq!(
            z("[j]\nzonemode=strided\nzonesize=16k\nzonerange=64k\nzoneskip=64k\n"),
            Some(StridedZones { size: 16 << 10, range: 64 << 10, skip: 64 << 10 })
        );
        // zonesize alone means strided, and the range defaults to it (fio's backward compatibility).
        assert_eq!(z("[j]\nzonesize=1m\n"), Some(StridedZones { size: 1 << 20, range: 1 << 20, skip: 0 }));
        assert_eq!(z("[j]\nzonemode=none\n"), None);
    }

    #[test]
    fn read_errors_use_line_zero() {
        let e = read_jobfile(Path::new("/nonexistent/dir/x.fio"), &JobSpec::default()).unwrap_err();
        match &e {
            SpecError::JobFile { file, line, message } => {
                assert_eq!(file, "/nonexistent/dir/x.fio");
                assert_eq!(*line, 0);
                assert!(message.starts_with("cannot read the job file: "), "{message}");
                assert!(message.ends_with("check the path and that it is readable"), "{message}");
            }
            SpecError::Value { .. } | SpecError::Invalid(_) => panic!("{e}"),
        }
    }
}
