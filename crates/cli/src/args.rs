//! Command-line definition (clap derive) and field-copy conversions into `app`'s options:
//! checking and converting the values is `app`'s (`Config::new` of each command). Nothing
//! below this module sees clap.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Honest Linux storage benchmarks.
///
/// diskmeter measures disks with direct I/O, incompressible data, test areas written before
/// they are read, and latency percentiles next to every IOPS figure. Sizes use binary units
/// (4k = 4096 bytes); MB/s is decimal (10^6 B/s), MiB/s binary.
#[derive(Debug, Parser)]
#[command(name = "diskmeter", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parse the command line (exits with clap's message and status 2 on a syntax error).
    ///
    /// An option value that looks like a negative number (`--size -1`, `--offset -4k`,
    /// `--runtime -3s`) is taken as the value rather than as an unknown flag, so diskmeter's own
    /// check can say what is wrong with it.
    pub fn parse_args() -> Cli {
        use clap::CommandFactory;
        let mut takes_value = std::collections::HashSet::new();
        value_options(&Cli::command(), &mut takes_value);
        Cli::parse_from(join_negative_values(std::env::args_os(), &takes_value))
    }
}

/// Long names of every option (in every subcommand) that takes a value.
fn value_options(c: &clap::Command, out: &mut std::collections::HashSet<String>) {
    for a in c.get_arguments() {
        if let Some(long) = a.get_long().filter(|_| a.get_action().takes_values()) {
            out.insert(long.to_string());
        }
    }
    for sub in c.get_subcommands() {
        value_options(sub, out);
    }
}

/// `--name -3s` → `--name=-3s` for options that take a value; everything after `--` untouched.
fn join_negative_values(
    args: impl IntoIterator<Item = std::ffi::OsString>,
    takes_value: &std::collections::HashSet<String>,
) -> Vec<std::ffi::OsString> {
    let looks_negative =
        |s: &str| s.len() > 1 && s.starts_with('-') && s[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.');
    let mut out = Vec::new();
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a);
            out.extend(it);
            break;
        }
        let name = a.to_str().and_then(|s| s.strip_prefix("--")).filter(|n| takes_value.contains(*n));
        if let Some(name) = name {
            if let Some(v) = it.peek().and_then(|v| v.to_str()).filter(|v| looks_negative(v)) {
                out.push(format!("--{name}={v}").into());
                it.next();
                continue;
            }
        }
        out.push(a);
    }
    out
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The CrystalDiskMark card: sequential and random read/write, done right.
    Mark(Box<MarkArgs>),
    /// Run any workload (command-line options or an fio job file).
    Run(Box<RunArgs>),
    /// The most IOPS the target gives while latency stays under a bound, with the curve and its knee.
    Sla(Box<SlaArgs>),
    /// Which target (or setting) is faster: interleaved passes, confidence intervals, verdicts.
    Compare(Box<CompareArgs>),
    /// Render a saved result (JSON) as a self-contained HTML report, or as text, CSV or Markdown.
    Report(Box<ReportArgs>),
    /// Simulate an SSD cache in front of HDDs on an I/O trace: hit ratio, warm-up, wear, IOPS, size.
    Cache(Box<CacheArgs>),
    /// Live I/O monitor: iostat -x and perfmon figures per device, saturation, pressure, processes.
    Top(Box<crate::cmd_top::TopArgs>),
    /// Disk health: SMART through smartctl, wear, error logs, self-tests, endurance forecast.
    Health(Box<crate::cmd_health::HealthArgs>),
    /// Surface scan: transfer rate and latency across the device, slow and bad blocks.
    Surface(Box<SurfaceArgs>),
    /// Merge the results of several hosts (run or mark with --histograms) into one: summed IOPS,
    /// percentiles of the union of the histograms, per-host table, stonewall, timeline.
    Merge(Box<MergeArgs>),
    /// SNIA PTS steady state: purge, precondition, rounds of the IOPS matrix until the figures
    /// settle; the steady-state window, PTS tables and charts.
    Steady(Box<crate::cmd_steady::SteadyArgs>),
    /// Play a block trace against a file or device: at its own times, as fast as possible or at
    /// its own depth, pass after pass, with how late each request was issued.
    Replay(Box<crate::cmd_replay::ReplayArgs>),
    /// Record what a block device is doing, request by request with its latency, into a binary
    /// trace (kernel block tracepoints; root).
    Capture(Box<crate::cmd_capture::CaptureArgs>),
    /// Summarise a trace: mix, block sizes, sequential share, hot set, arrivals, depth; emit an
    /// fio job that reproduces it.
    Profile(Box<crate::cmd_profile::ProfileArgs>),
}

impl Command {
    /// The subcommand's name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Mark(_) => "mark",
            Command::Run(_) => "run",
            Command::Sla(_) => "sla",
            Command::Compare(_) => "compare",
            Command::Report(_) => "report",
            Command::Cache(_) => "cache",
            Command::Top(_) => "top",
            Command::Health(_) => "health",
            Command::Surface(_) => "surface",
            Command::Merge(_) => "merge",
            Command::Replay(_) => "replay",
            Command::Steady(_) => "steady",
            Command::Capture(_) => "capture",
            Command::Profile(_) => "profile",
        }
    }
}

/// Options of commands that run on several hosts at once (under mpirun, or merged later).
#[derive(Debug, Args, Clone)]
pub struct HostsArgs {
    /// Keep the lossless latency histograms (HdrHistogram V2, base64) and wall-clock times in
    /// the result, so that `diskmeter merge` can combine results of several hosts exactly.
    #[arg(long)]
    pub histograms: bool,
    /// Start the first measured window at this wall-clock instant (RFC 3339 UTC, or Unix
    /// seconds): hosts started independently then measure together.
    #[arg(long, value_name = "TIME")]
    pub start_at: Option<String>,
    /// Several ranks measure one shared target on purpose (no shared-target warning).
    #[arg(long)]
    pub shared: bool,
}

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Result files of the hosts (JSON written with --histograms), in host order.
    #[arg(value_name = "RESULT.json", required = true)]
    pub files: Vec<PathBuf>,
    /// The hosts measured one shared target on purpose (no shared-target warning).
    #[arg(long)]
    pub shared: bool,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// Options every command takes.
#[derive(Debug, Args, Clone)]
pub struct OutputArgs {
    /// Print the result as JSON on stdout (schema diskmeter.result.v1); diagnostics go to stderr.
    #[arg(long)]
    pub json: bool,
    /// Also write the result to FILE; the extension picks the format (.json, .csv, .md, .txt).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// No progress display and no human result on stdout (JSON and -o still work).
    #[arg(short, long)]
    pub quiet: bool,
    /// Also write a self-contained HTML report (charts inline, opens offline) to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

/// Options about the target and data safety.
#[derive(Debug, Args, Clone)]
pub struct TargetArgs {
    /// Allow writing to an existing file that diskmeter did not create (its contents are lost).
    #[arg(long)]
    pub overwrite: bool,
    /// Keep the test file diskmeter created instead of removing it at exit.
    #[arg(long)]
    pub keep: bool,
    /// Allow writing to this exact block device, destroying its data (must name the target).
    #[arg(long, value_name = "DEVICE")]
    pub destroy_data: Option<PathBuf>,
    /// Use buffered I/O (page cache) instead of direct I/O; the result carries a warning.
    #[arg(long)]
    pub buffered: bool,
    /// Do not register I/O buffers with io_uring (needs no RLIMIT_MEMLOCK headroom; slower).
    #[arg(long)]
    pub no_register_buffers: bool,
    /// Let the scheduler place worker threads instead of pinning each to one allowed CPU.
    #[arg(long)]
    pub no_pin: bool,
    /// An io_uring worker waiting for completions polls its ring this many microseconds
    /// before it sleeps, when the run's workers leave a CPU free (0 = sleep at once, as fio)
    /// [default: 100 for workers of QD ≤ 8, deeper ones sleep; 0 for several MPI ranks]
    #[arg(long, value_name = "US", value_parser = clap::value_parser!(u64).range(0..=app::session::MAX_POLL_US))]
    pub poll_us: Option<u64>,
    /// Skip the tool-bottleneck and memory-bandwidth checks (short null- and mem-engine runs
    /// after each job).
    #[arg(long)]
    pub no_ceiling_check: bool,
    /// If another run holds the test file or device, refuse (exit 2) instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
}

#[derive(Debug, Args)]
pub struct MarkArgs {
    /// File, block device or folder (a mount point: its diskmeter.test) to test
    /// [default: ./diskmeter.test, created and removed].
    #[arg(value_name = "TARGET")]
    pub target_pos: Option<PathBuf>,
    /// Same as the positional TARGET.
    #[arg(long, value_name = "PATH", conflicts_with = "target_pos")]
    pub target: Option<PathBuf>,
    /// Test set: default (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1), nvme, peak, real.
    #[arg(long, default_value = "default", value_name = "PROFILE")]
    pub profile: String,
    /// Also run every test as a mixed stream of 70 % reads / 30 % writes.
    #[arg(long)]
    pub mix: bool,
    /// Test area size [default: 1G; --quick: 256M].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Measured passes per test; the card shows the best (CrystalDiskMark 9) [default: 3].
    #[arg(long, value_name = "N")]
    pub passes: Option<u32>,
    /// Length of each pass [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub time: Option<String>,
    /// Pause between tests [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
    /// Skip the unmeasured warm-up pass before each test.
    #[arg(long)]
    pub no_warmup: bool,
    /// A first look in seconds: 256M area, 1 pass of 1 s, no pause, short warm-up off.
    #[arg(long)]
    pub quick: bool,
    /// I/O engine: io_uring, psync (or null: no device, the tool's own ceiling).
    #[arg(long, default_value = "io_uring", value_name = "ENGINE")]
    pub engine: String,
    /// Random seed (offsets and data are reproducible for a given seed).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub sustained: SustainedArgs,
    #[command(flatten)]
    pub hosts: HostsArgs,
    #[command(flatten)]
    pub target_args: TargetArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

/// `--sustained` and its options (`mark`, `run`).
#[derive(Debug, Args, Clone)]
pub struct SustainedArgs {
    /// First write the whole test range once (QD32 1 MiB; run: --bs/--qd) and chart MB/s against
    /// bytes written: the write cliff, the cache size it implies, MB/s before and after. mark on
    /// a block device then tests the whole device unless --size is given.
    #[arg(long)]
    pub sustained: bool,
    /// With --sustained: idle this long, then re-test the first region, for each pause
    /// (e.g. 30s,60s,120s): how long the write cache takes to recover.
    #[arg(long, value_name = "DURATIONS")]
    pub recovery: Option<String>,
}

/// `run --verify` and its options.
#[derive(Debug, Args, Clone)]
pub struct VerifyArgs {
    /// Verify the data: every written chunk carries a header (offset, job, generation, time,
    /// seed, checksum); reads check it, and after the writes every written chunk is read back.
    /// A failure is diagnosed (torn, stale, misdirected, zeroed, unwritten, corrupt) and makes
    /// the exit status 1. KIND: crc32c, md5, sha256, xxhash, meta, pattern [default: crc32c].
    #[arg(long, value_name = "KIND", num_args = 0..=1, default_missing_value = "crc32c")]
    pub verify: Option<String>,
    /// Bytes per checked chunk, each with its own header [default: the block size].
    #[arg(long, value_name = "SIZE")]
    pub verify_interval: Option<String>,
    /// The payload of --verify pattern (0xdeadbeef, "text", or decimal bytes).
    #[arg(long, value_name = "PATTERN")]
    pub verify_pattern: Option<String>,
    /// Write nothing: read the region and check what an earlier --verify run wrote (against
    /// --verify-state when given: acknowledged writes that were lost are found).
    #[arg(long)]
    pub verify_only: bool,
    /// Save the generation of every acknowledged write here (each second and at the end); with
    /// --verify-only, check against it. A run, a power cut, then --verify-only: a power-loss test.
    #[arg(long, value_name = "FILE")]
    pub verify_state: Option<PathBuf>,
    /// Stop at the first verify failure.
    #[arg(long)]
    pub verify_fatal: bool,
    /// Every N writes, read back and check those N blocks before writing on.
    #[arg(long, value_name = "N")]
    pub verify_backlog: Option<String>,
    /// Check reads as they complete, but skip the read-back of everything written at the end.
    #[arg(long)]
    pub no_verify_pass: bool,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// An fio job file; command-line workload options then act as defaults for its jobs.
    #[arg(value_name = "JOBFILE")]
    pub jobfile: Option<PathBuf>,
    /// File, block device or folder (a mount point: its diskmeter.test)
    /// [default: ./diskmeter.test, created and removed].
    #[arg(long, value_name = "PATH")]
    pub target: Option<PathBuf>,
    /// Job name shown in the results.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Access pattern: read, write, randread, randwrite, randrw, readwrite.
    #[arg(long, value_name = "MODE")]
    pub rw: Option<String>,
    /// Block size per I/O [default: 4k].
    #[arg(long, value_name = "SIZE")]
    pub bs: Option<String>,
    /// I/Os kept in flight per worker (queue depth), 1 to 32768 [default: 1].
    #[arg(long, value_name = "N")]
    pub qd: Option<String>,
    /// Workers (threads), each with its own queue [default: 1].
    #[arg(long, value_name = "N")]
    pub threads: Option<String>,
    /// Region size [default: 1G for a new file, else the whole target from --offset].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Region start in bytes [default: 0].
    #[arg(long, value_name = "SIZE")]
    pub offset: Option<String>,
    /// Measured time [default: 5s].
    #[arg(long, value_name = "DURATION")]
    pub runtime: Option<String>,
    /// Unmeasured ramp before the measured time [default: 0s].
    #[arg(long, value_name = "DURATION")]
    pub ramp: Option<String>,
    /// Read share in percent for randrw/readwrite [default: 70].
    #[arg(long, value_name = "PCT")]
    pub mix: Option<String>,
    /// I/O engine: io_uring, psync, null (no device: the tool's own ceiling), mem (memcpy
    /// over a --size memory region: this machine's memory bandwidth for the shape)
    /// [default: io_uring].
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Open-loop rate for the job (latency counted from the intended issue time).
    #[arg(long, value_name = "N")]
    pub rate_iops: Option<String>,
    /// Random offset distribution: uniform, zipf:THETA, pareto:H, hotset:OPS%/AREA%, zoned:...
    #[arg(long, value_name = "DIST")]
    pub dist: Option<String>,
    /// Write data: random (incompressible, unique per write), zeros, compress:PCT.
    #[arg(long, value_name = "DATA")]
    pub data: Option<String>,
    /// fsync after every N writes (0 = never).
    #[arg(long, value_name = "N")]
    pub fsync: Option<String>,
    /// Submit once N I/Os are prepared (fio iodepth_batch_submit); 1 = each at once [default: 1].
    #[arg(long, value_name = "N")]
    pub submit_batch: Option<String>,
    /// Random seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    /// Write the block device's test region before measuring (needs --destroy-data).
    #[arg(long)]
    pub prefill: bool,
    #[command(flatten)]
    pub sustained: SustainedArgs,
    #[command(flatten)]
    pub verify: VerifyArgs,
    #[command(flatten)]
    pub hosts: HostsArgs,
    #[command(flatten)]
    pub target_args: TargetArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct SlaArgs {
    /// File, block device or folder (a mount point: its diskmeter.test) to test
    /// [default: ./diskmeter.test, created and removed].
    #[arg(value_name = "TARGET")]
    pub target_pos: Option<PathBuf>,
    /// Same as the positional TARGET.
    #[arg(long, value_name = "PATH", conflicts_with = "target_pos")]
    pub target: Option<PathBuf>,
    /// The latency bound, e.g. 10ms, 500us, 1ms.
    #[arg(long, value_name = "DURATION", required = true)]
    pub latency: String,
    /// Which latency statistic the bound applies to: mean, 50, 90, 99, 99.9.
    #[arg(long, default_value = "mean", value_name = "STAT")]
    pub percentile: String,
    /// Workload: randread, randwrite, randrw, read, write, or two independent streams such as
    /// randread+randwrite (their depths scale together, split by --mix).
    #[arg(long, default_value = "randread", value_name = "MODE")]
    pub rw: String,
    /// Block size per I/O.
    #[arg(long, default_value = "4k", value_name = "SIZE")]
    pub bs: String,
    /// Read share (randrw), or the first stream's share of the depth (two streams), percent.
    #[arg(long, value_name = "PCT")]
    pub mix: Option<String>,
    /// Deepest queue per worker to try (at most 32768).
    #[arg(long, default_value = "256", value_name = "N")]
    pub max_qd: String,
    /// Most workers to try [default: the CPUs this process may use].
    #[arg(long, value_name = "N")]
    pub max_threads: Option<String>,
    /// Measure every point of the grid (for verification; much slower).
    #[arg(long)]
    pub exhaustive: bool,
    /// Search the offered rate (open loop, latency from the intended issue time) instead of depth.
    #[arg(long)]
    pub open_loop: bool,
    /// Test area size.
    #[arg(long, default_value = "1G", value_name = "SIZE")]
    pub size: String,
    /// Unmeasured ramp before each point.
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub ramp: String,
    /// Fewest one-second windows per point.
    #[arg(long, default_value = "3", value_name = "N")]
    pub min_windows: String,
    /// Most one-second windows per point (a point that has not settled by then is flagged).
    #[arg(long, default_value = "10", value_name = "N")]
    pub max_windows: String,
    /// A point is stable when its IOPS and latency are known to within this (relative standard
    /// error over its one-second windows).
    #[arg(long, default_value = "5%", value_name = "PCT")]
    pub cv: String,
    /// Points whose latency is within this distance of the bound are measured twice.
    #[arg(long, default_value = "10%", value_name = "PCT")]
    pub guard: String,
    /// I/O engine: io_uring, psync (or null: no device).
    #[arg(long, default_value = "io_uring", value_name = "ENGINE")]
    pub engine: String,
    /// Random offset distribution: uniform, zipf:THETA, pareto:H, hotset:OPS%/AREA%.
    #[arg(long, value_name = "DIST")]
    pub dist: Option<String>,
    /// Write data: random, zeros, compress:PCT.
    #[arg(long, value_name = "DATA")]
    pub data: Option<String>,
    /// Random seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub target_args: TargetArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
#[command(after_help = "\
How long: every test runs on every target, a warm-up then the measured passes. The default profile
(8 tests) on two targets takes about 8 min by default (6 passes x 5 s each) and about 1 min with
--quick (4 passes x 1 s each), plus filling the test areas; the plan is printed before the first
pass.

Examples:
  diskmeter compare --quick /mnt/c /mnt/d          two disks by their mount points
  diskmeter compare --rw randread --qd 32 /mnt/a /mnt/b   one job instead of the card
  diskmeter compare --results before.json after.json")]
pub struct CompareArgs {
    /// Two or more files, block devices or folders (each its own diskmeter.test) to compare
    /// (the first is the baseline).
    #[arg(value_name = "TARGET")]
    pub targets: Vec<PathBuf>,
    /// Compare saved result files instead (before/after a change); the first is the baseline.
    #[arg(long, value_name = "FILE", num_args = 1.., conflicts_with = "targets")]
    pub results: Vec<PathBuf>,
    /// Labels for the targets or files, comma-separated [default: A,B,… / file names].
    #[arg(long, value_name = "LIST")]
    pub labels: Option<String>,
    /// mark profile to run: default, nvme, peak, real (ignored when --rw is given).
    #[arg(long, default_value = "default", value_name = "PROFILE")]
    pub profile: String,
    /// Run one job instead of a mark profile: read, write, randread, randwrite, randrw, readwrite.
    #[arg(long, value_name = "MODE")]
    pub rw: Option<String>,
    /// Block size of the job (with --rw).
    #[arg(long, default_value = "4k", value_name = "SIZE")]
    pub bs: String,
    /// Queue depth per worker of the job (with --rw).
    #[arg(long, default_value = "1", value_name = "N")]
    pub qd: String,
    /// Workers of the job (with --rw).
    #[arg(long, default_value = "1", value_name = "N")]
    pub threads: String,
    /// Read share of a mixed job (with --rw randrw), percent.
    #[arg(long, value_name = "PCT")]
    pub mix: Option<String>,
    /// Measured passes per test and target [default: 5; --quick: 3].
    #[arg(long, value_name = "N")]
    pub passes: Option<String>,
    /// Length of each pass [default: 5s; --quick: 1s].
    #[arg(long, value_name = "DURATION")]
    pub time: Option<String>,
    /// Skip the unmeasured warm-up pass per test and target.
    #[arg(long)]
    pub no_warmup: bool,
    /// Test area size per target [default: 1G; --quick: 256M].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// A verdict in about a minute: 256M per target, a warm-up and 3 passes of 1 s per test
    /// (the default profile on two targets: about 1 min against about 8 min).
    #[arg(long)]
    pub quick: bool,
    /// I/O engine: io_uring, psync (or null: no device).
    #[arg(long, default_value = "io_uring", value_name = "ENGINE")]
    pub engine: String,
    /// Significance test: welch (Welch's t) or mann-whitney.
    #[arg(long, default_value = "welch", value_name = "TEST")]
    pub test: String,
    /// Random seed.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub target_args: TargetArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// A result document written by diskmeter (--json or -o FILE.json).
    #[arg(value_name = "RESULT.json")]
    pub result: PathBuf,
    /// Output file; the extension picks the format (.html, .md, .csv, .txt, .json)
    /// [default: RESULT.html next to the input].
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

// ---------------------------------------------------------------------------------------
// Field-copy conversions into app's options (checking the values is app's).

impl From<&OutputArgs> for app::output::OutputOptions {
    fn from(a: &OutputArgs) -> Self {
        Self { json: a.json, output: a.output.clone(), quiet: a.quiet, html: a.html.clone(), force: a.force }
    }
}

impl From<&TargetArgs> for app::session::TargetFlags {
    fn from(a: &TargetArgs) -> Self {
        Self {
            overwrite: a.overwrite,
            keep: a.keep,
            destroy_data: a.destroy_data.clone(),
            buffered: a.buffered,
            no_register_buffers: a.no_register_buffers,
            no_pin: a.no_pin,
            poll_us: a.poll_us,
            no_ceiling_check: a.no_ceiling_check,
            no_wait: a.no_wait,
            histograms: false,
        }
    }
}

impl From<&MergeArgs> for app::merge::Options {
    fn from(a: &MergeArgs) -> Self {
        Self { files: a.files.clone(), shared: a.shared }
    }
}

impl From<&RunArgs> for app::run::Options {
    fn from(a: &RunArgs) -> Self {
        Self {
            jobfile: a.jobfile.clone(),
            target: a.target.clone(),
            name: a.name.clone(),
            rw: a.rw.clone(),
            bs: a.bs.clone(),
            qd: a.qd.clone(),
            threads: a.threads.clone(),
            size: a.size.clone(),
            offset: a.offset.clone(),
            runtime: a.runtime.clone(),
            ramp: a.ramp.clone(),
            mix: a.mix.clone(),
            engine: a.engine.clone(),
            rate_iops: a.rate_iops.clone(),
            dist: a.dist.clone(),
            data: a.data.clone(),
            fsync: a.fsync.clone(),
            submit_batch: a.submit_batch.clone(),
            seed: a.seed,
            prefill: a.prefill,
            sustained: a.sustained.sustained,
            recovery: a.sustained.recovery.clone(),
            verify: app::run::VerifyOptions {
                kind: a.verify.verify.clone(),
                interval: a.verify.verify_interval.clone(),
                pattern: a.verify.verify_pattern.clone(),
                only: a.verify.verify_only,
                state: a.verify.verify_state.clone(),
                fatal: a.verify.verify_fatal,
                backlog: a.verify.verify_backlog.clone(),
                no_pass: a.verify.no_verify_pass,
            },
            flags: app::session::TargetFlags { histograms: a.hosts.histograms, ..(&a.target_args).into() },
            start_at: a.hosts.start_at.clone(),
            rank: Default::default(),
            force: a.out.force,
        }
    }
}

impl From<&MarkArgs> for app::mark::Options {
    fn from(a: &MarkArgs) -> Self {
        Self {
            target: a.target_pos.clone().or_else(|| a.target.clone()),
            profile: a.profile.clone(),
            mix: a.mix,
            size: a.size.clone(),
            passes: a.passes,
            time: a.time.clone(),
            interval: a.interval.clone(),
            no_warmup: a.no_warmup,
            quick: a.quick,
            engine: a.engine.clone(),
            seed: a.seed,
            sustained: a.sustained.sustained,
            recovery: a.sustained.recovery.clone(),
            flags: app::session::TargetFlags { histograms: a.hosts.histograms, ..(&a.target_args).into() },
            start_at: a.hosts.start_at.clone(),
            rank: Default::default(),
        }
    }
}

impl From<&SlaArgs> for app::sla::Options {
    fn from(a: &SlaArgs) -> Self {
        Self {
            target: a.target_pos.clone().or_else(|| a.target.clone()),
            latency: a.latency.clone(),
            percentile: a.percentile.clone(),
            rw: a.rw.clone(),
            bs: a.bs.clone(),
            mix: a.mix.clone(),
            max_qd: a.max_qd.clone(),
            max_threads: a.max_threads.clone(),
            exhaustive: a.exhaustive,
            open_loop: a.open_loop,
            size: a.size.clone(),
            ramp: a.ramp.clone(),
            min_windows: a.min_windows.clone(),
            max_windows: a.max_windows.clone(),
            cv: a.cv.clone(),
            guard: a.guard.clone(),
            engine: a.engine.clone(),
            dist: a.dist.clone(),
            data: a.data.clone(),
            seed: a.seed,
            flags: (&a.target_args).into(),
        }
    }
}

impl From<&CompareArgs> for app::compare::Options {
    fn from(a: &CompareArgs) -> Self {
        Self {
            targets: a.targets.clone(),
            results: a.results.clone(),
            labels: a.labels.clone(),
            profile: a.profile.clone(),
            rw: a.rw.clone(),
            bs: a.bs.clone(),
            qd: a.qd.clone(),
            threads: a.threads.clone(),
            mix: a.mix.clone(),
            passes: a.passes.clone(),
            time: a.time.clone(),
            no_warmup: a.no_warmup,
            size: a.size.clone(),
            quick: a.quick,
            engine: a.engine.clone(),
            test: a.test.clone(),
            seed: a.seed,
            flags: (&a.target_args).into(),
        }
    }
}

#[derive(Debug, Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    pub action: CacheAction,
}

#[derive(Debug, Subcommand)]
pub enum CacheAction {
    /// Replay a trace through the SSD cache model (and comparison policies).
    Simulate(Box<SimulateArgs>),
    /// Miss-ratio curve over cache sizes and a recommended size.
    Mrc(Box<MrcArgs>),
    /// Closed-form warm-up time T = C·P / (I·S·D) (binary units).
    Warmup(Box<WarmupArgs>),
    /// Write a synthetic trace (uniform, zipf, hotset) in the binary format (or .csv).
    Synth(Box<SynthArgs>),
    /// Convert a text trace to the compact binary format (text parsing dominates replay time).
    Convert(Box<ConvertArgs>),
}

/// Which trace and how to read it.
#[derive(Debug, Args, Clone)]
pub struct TraceArgs {
    /// The trace file (.gz is decompressed on the fly).
    #[arg(long, value_name = "FILE")]
    pub trace: PathBuf,
    #[command(flatten)]
    pub read: TraceReadArgs,
}

/// How to read a trace, whatever names it (`--trace FILE` or a positional TRACE).
#[derive(Debug, Args, Clone)]
pub struct TraceReadArgs {
    /// blkparse[:Q|D|C], fio, msr, alibaba, tencent, csv:MAPPING, binary [default: detected].
    #[arg(long, value_name = "FORMAT")]
    pub format: Option<String>,
    /// Keep only this device / volume / disk as the trace names it.
    #[arg(long, value_name = "NAME")]
    pub device: Option<String>,
    /// Keep requests from this time on (since the trace's first request), e.g. 10m.
    #[arg(long, value_name = "DURATION")]
    pub from: Option<String>,
    /// Keep requests before this time (since the trace's first request), e.g. 2h.
    #[arg(long, value_name = "DURATION")]
    pub until: Option<String>,
    /// Skip malformed lines (counted) instead of stopping at the first one.
    #[arg(long)]
    pub skip_bad: bool,
}

impl TraceReadArgs {
    /// `app`'s trace options for the trace at `trace`.
    pub fn options(&self, trace: &std::path::Path) -> app::cache::TraceOptions {
        app::cache::TraceOptions {
            trace: trace.to_path_buf(),
            format: self.format.clone(),
            device: self.device.clone(),
            from: self.from.clone(),
            until: self.until.clone(),
            skip_bad: self.skip_bad,
        }
    }
}

#[derive(Debug, Args)]
pub struct SimulateArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Cache preset: database (1M/8K/PoR 2/PoW 0), filesystem (2M/16K/2/2), web (4M/64K/2/0).
    #[arg(long, default_value = "database", value_name = "PRESET")]
    pub preset: String,
    /// SSD cache capacity.
    #[arg(long, value_name = "SIZE", required = true)]
    pub cache_size: String,
    /// Cache block size (overrides the preset).
    #[arg(long, value_name = "SIZE")]
    pub block: Option<String>,
    /// Sub-block size (overrides the preset).
    #[arg(long, value_name = "SIZE")]
    pub sub_block: Option<String>,
    /// Populate-on-read threshold (0 = never fill on reads).
    #[arg(long, value_name = "N")]
    pub por: Option<u32>,
    /// Populate-on-write threshold (0 = never fill on writes).
    #[arg(long, value_name = "N")]
    pub pow: Option<u32>,
    /// Write mode: wt (write-through), wb (write-back), wa (write-around), ro (read-only).
    #[arg(long, default_value = "wt", value_name = "MODE")]
    pub mode: String,
    /// Bypass sequential streams longer than this.
    #[arg(long, value_name = "SIZE")]
    pub seq_cutoff: Option<String>,
    /// Policies: qsan (the model), lru, nhit, s3fifo, opt, or all; comma-separated.
    #[arg(long, default_value = "qsan", value_name = "LIST")]
    pub policy: String,
    /// Cache unit of the comparison policies (lru, nhit, s3fifo, opt).
    #[arg(long, default_value = "4k", value_name = "SIZE")]
    pub unit: String,
    /// Bound the QSAN read/write counter table to N backing blocks (CLOCK replacement; memory is
    /// preallocated) [default: unbounded, one entry per block ever missed].
    #[arg(long, value_name = "N")]
    pub counter_limit: Option<String>,
    /// Interval of the hit-ratio series [default: 1/100 of the trace span].
    #[arg(long, value_name = "DURATION")]
    pub interval: Option<String>,
    /// SSD size for DWPD [default: the cache capacity].
    #[arg(long, value_name = "SIZE")]
    pub ssd_size: Option<String>,
    /// Random IOPS of one HDD (performance prediction).
    #[arg(long, default_value = "150", value_name = "N")]
    pub hdd_iops: String,
    /// Mean latency of one HDD I/O.
    #[arg(long, default_value = "8ms", value_name = "DURATION")]
    pub hdd_latency: String,
    /// Number of HDDs.
    #[arg(long, default_value = "1", value_name = "N")]
    pub hdds: u32,
    /// Back-end writes per host write on the HDDs (RAID10 2, RAID5 4, RAID6 6).
    #[arg(long, default_value = "1", value_name = "N")]
    pub raid_penalty: f64,
    /// Random IOPS of one SSD.
    #[arg(long, default_value = "50000", value_name = "N")]
    pub ssd_iops: String,
    /// Mean latency of one SSD I/O.
    #[arg(long, default_value = "100us", value_name = "DURATION")]
    pub ssd_latency: String,
    /// Number of SSDs.
    #[arg(long, default_value = "1", value_name = "N")]
    pub ssds: u32,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct MrcArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Cache unit (block) size of the curve.
    #[arg(long, default_value = "4k", value_name = "SIZE")]
    pub unit: String,
    /// Cache sizes to report, comma-separated (e.g. 1G,2G,4G) [default: the whole curve].
    #[arg(long, value_name = "LIST")]
    pub sizes: Option<String>,
    /// Sample with SHARDS at this rate (e.g. 1%) [default: exact unless > 50 M references].
    #[arg(long, value_name = "PCT")]
    pub shards: Option<String>,
    /// Count only reads (a read cache) instead of reads and writes.
    #[arg(long)]
    pub reads_only: bool,
    /// lru (exact stack distances) or qsan (one simulation per size of --sizes, in parallel).
    #[arg(long, default_value = "lru", value_name = "POLICY")]
    pub policy: String,
    /// Preset for --policy qsan.
    #[arg(long, default_value = "database", value_name = "PRESET")]
    pub preset: String,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct WarmupArgs {
    /// Total SSD cache capacity C.
    #[arg(long, value_name = "SIZE")]
    pub capacity: String,
    /// Populate threshold P.
    #[arg(long, value_name = "N")]
    pub threshold: u32,
    /// Random IOPS I of one HDD.
    #[arg(long, value_name = "N")]
    pub hdd_iops: String,
    /// I/O size S.
    #[arg(long, value_name = "SIZE")]
    pub io_size: String,
    /// Number of HDDs D.
    #[arg(long, value_name = "N")]
    pub hdds: u32,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct SynthArgs {
    /// uniform, zipf:THETA or hotset:OPS%/AREA% (e.g. hotset:90/10).
    #[arg(long, value_name = "DIST")]
    pub dist: String,
    /// Distinct blocks (the working area is blocks × block size).
    #[arg(long, value_name = "N")]
    pub blocks: String,
    /// Requests to write.
    #[arg(long, value_name = "N")]
    pub requests: String,
    /// Request (and block) size.
    #[arg(long, default_value = "4k", value_name = "SIZE")]
    pub block_size: String,
    /// Share of reads, percent.
    #[arg(long, default_value = "70", value_name = "PCT")]
    pub read_pct: String,
    /// Request rate for the timestamps.
    #[arg(long, default_value = "1000", value_name = "N")]
    pub iops: String,
    /// Keep zipf's hottest blocks contiguous at the start (default: scattered).
    #[arg(long)]
    pub contiguous: bool,
    /// Random seed.
    #[arg(long, default_value = "1", value_name = "N")]
    pub seed: u64,
    /// Output trace: binary format, or CSV for a .csv name.
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

#[derive(Debug, Args)]
pub struct ConvertArgs {
    #[command(flatten)]
    pub input: TraceArgs,
    /// Output binary trace.
    #[arg(short = 'o', long = "output", value_name = "FILE", required = true)]
    pub output: PathBuf,
    /// Print the summary as JSON.
    #[arg(long)]
    pub json: bool,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

/// Options of `diskmeter surface`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Modes:
  read            reads every block; never writes (the default)
  nondestructive  per block: read the original, write a pattern, read it back and compare,
                  write the original back and compare again (like badblocks -n); Ctrl-C and
                  errors stop only after the block in hand is restored
  destructive     per pattern: write the whole span, then read it back and compare
                  (like badblocks -w); the target ends filled with the last pattern
Both writing modes need --destroy-data naming the device (and pass the safety guard:
never a mounted, swap, held or system device), or --overwrite for a file.

Slow blocks: latency > --slow-factor x the median of the previous --slow-window blocks and
above --slow-floor (so scheduling jitter on fast devices is not flagged); each is re-read
--rereads times: \"confirmed\" when every re-read is slow too, else \"transient\".
Read errors are narrowed to the logical block (sector) and recorded with their errno.

Exit status: 0 scan complete, no bad sectors (slow blocks do not change it); 1 bad
sectors found (full results are still printed), a runtime fault, a block that could not
be restored, or the device vanished; 2 bad input (nothing read or written); 130
interrupted (the part scanned is printed, marked partial).

Examples:
  diskmeter surface /dev/sdb                       read scan of the whole disk
  diskmeter surface /dev/sdb --sample 2000         quick benchmark: 2000 evenly spaced blocks
  diskmeter surface /dev/sdb1 --badblocks-out bb.txt; e2fsck -l bb.txt /dev/sdb1   (unmounted)
  diskmeter surface /dev/sdb --mode destructive --destroy-data /dev/sdb")]
pub struct SurfaceArgs {
    /// Block device or file to scan (the whole of it unless --offset/--size).
    #[arg(value_name = "TARGET")]
    pub target_pos: Option<PathBuf>,
    /// Same as the positional TARGET.
    #[arg(long, value_name = "PATH", conflicts_with = "target_pos")]
    pub target: Option<PathBuf>,
    /// read (never writes), nondestructive (read, write pattern, verify, restore) or destructive.
    #[arg(long, default_value = "read", value_name = "MODE")]
    pub mode: String,
    /// Bytes per scanned block (a multiple of the logical block size).
    #[arg(long, default_value = "1M", value_name = "SIZE")]
    pub block: String,
    /// Start of the span [default: 0].
    #[arg(long, value_name = "SIZE")]
    pub offset: Option<String>,
    /// Length of the span [default: to the end of the target].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Read only N evenly spaced blocks (HD Tune's quick benchmark); read and nondestructive modes.
    #[arg(long, value_name = "N")]
    pub sample: Option<String>,
    /// Blocks in flight during a read scan (read mode; slow-block re-reads run at 1).
    #[arg(long, default_value = "1", value_name = "N")]
    pub qd: String,
    /// Zones of the transfer-rate chart (MB/s per zone = bytes / summed time of its blocks).
    #[arg(long, default_value = "100", value_name = "N")]
    pub zones: String,
    /// A block is slow above this many times the rolling median latency.
    #[arg(long, default_value = "5", value_name = "K")]
    pub slow_factor: String,
    /// Blocks in the rolling median.
    #[arg(long, default_value = "64", value_name = "N")]
    pub slow_window: String,
    /// Never flag a block faster than this (jitter on fast devices), e.g. 20ms.
    #[arg(long, default_value = "20ms", value_name = "DURATION")]
    pub slow_floor: String,
    /// Re-reads of a slow block to tell confirmed from transient (1 to 10).
    #[arg(long, default_value = "2", value_name = "N")]
    pub rereads: String,
    /// Random 4k reads for the access time after the scan (0 = none).
    #[arg(long, default_value = "200", value_name = "N")]
    pub access: String,
    /// Measure only the random access time (no scan).
    #[arg(long)]
    pub access_only: bool,
    /// Non-destructive mode's pattern: a byte such as 0xaa, or random.
    #[arg(long, default_value = "0xaa", value_name = "BYTE")]
    pub pattern: String,
    /// Destructive mode's patterns, written and verified in this order.
    #[arg(long, default_value = "0xaa,0x55,0xff,0x00", value_name = "LIST")]
    pub patterns: String,
    /// Write the bad blocks as e2fsck -l / mke2fs -l read them: block numbers in --fs-block
    /// units from the start of TARGET, one per line (an empty file when there are none).
    #[arg(long, value_name = "FILE")]
    pub badblocks_out: Option<PathBuf>,
    /// File-system block size of --badblocks-out (a power of two; badblocks' own default is
    /// 1024, ext4's usual block is 4096).
    #[arg(long, default_value = "4096", value_name = "SIZE")]
    pub fs_block: String,
    /// Read through the page cache instead of direct I/O (measures RAM; the result is flagged).
    #[arg(long)]
    pub buffered: bool,
    /// Allow the writing modes on an existing file.
    #[arg(long)]
    pub overwrite: bool,
    /// Allow the writing modes on this exact block device (must name TARGET).
    #[arg(long, value_name = "DEVICE")]
    pub destroy_data: Option<PathBuf>,
    /// Random seed (access-time positions, random pattern).
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[cfg(test)]
mod negative_value_tests {
    use super::*;

    fn join(args: &[&str]) -> Vec<String> {
        let takes: std::collections::HashSet<String> = ["size", "runtime"].map(String::from).into();
        join_negative_values(args.iter().map(std::ffi::OsString::from), &takes)
            .into_iter()
            .map(|a| a.into_string().expect("test arguments are UTF-8"))
            .collect()
    }

    #[test]
    fn negative_looking_values_stick_to_their_option() {
        assert_eq!(
            join(&["dm", "run", "--size", "-1", "--runtime", "-3s"]),
            ["dm", "run", "--size=-1", "--runtime=-3s"]
        );
        assert_eq!(join(&["dm", "--size", "-.5g"]), ["dm", "--size=-.5g"]);
        // Not a number, a flag option, or after `--`: untouched.
        assert_eq!(join(&["dm", "--size", "--runtime", "1s"]), ["dm", "--size", "--runtime", "1s"]);
        assert_eq!(join(&["dm", "--json", "-1"]), ["dm", "--json", "-1"]);
        assert_eq!(join(&["dm", "--", "--size", "-1"]), ["dm", "--", "--size", "-1"]);
        assert_eq!(join(&["dm", "--size", "-"]), ["dm", "--size", "-"]);
    }

    #[test]
    fn every_value_option_is_found_in_every_subcommand() {
        use clap::CommandFactory;
        let mut takes = std::collections::HashSet::new();
        value_options(&Cli::command(), &mut takes);
        for name in ["size", "qd", "offset", "runtime", "ramp", "threads", "latency", "interval"] {
            assert!(takes.contains(name), "--{name} takes a value");
        }
        assert!(!takes.contains("json") && !takes.contains("keep"), "flags take no value");
    }
}
