//! Command-line definition (clap derive) and its conversion into typed configuration.
//! Nothing below this module sees clap.

use clap::{Args, Parser, Subcommand};
use engine::session::{MarkConfig, Profile};
use engine::target::TargetOptions;
use spec::units::{self, TimeUnit};
use spec::{EngineKind, JobSpec, RwMode, SpecError};
use std::path::PathBuf;
use std::time::Duration;

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

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The CrystalDiskMark card: sequential and random read/write, done right.
    Mark(Box<MarkArgs>),
    /// Run any workload (command-line options or an fio job file).
    Run(Box<RunArgs>),
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
    /// Skip the tool-bottleneck check (a short null-engine run after each job).
    #[arg(long)]
    pub no_ceiling_check: bool,
}

#[derive(Debug, Args)]
pub struct MarkArgs {
    /// File or block device to test [default: ./diskmeter.test, created and removed].
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
    pub target_args: TargetArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// An fio job file; command-line workload options then act as defaults for its jobs.
    #[arg(value_name = "JOBFILE")]
    pub jobfile: Option<PathBuf>,
    /// File or block device [default: ./diskmeter.test, created and removed].
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
    /// I/Os kept in flight per worker (queue depth) [default: 1].
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
    /// I/O engine: io_uring, psync, null [default: io_uring].
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
    pub target_args: TargetArgs,
    #[command(flatten)]
    pub out: OutputArgs,
}

pub const DEFAULT_TARGET: &str = "diskmeter.test";

fn engine(option: &str, s: &str) -> Result<EngineKind, SpecError> {
    EngineKind::parse(s)
        .ok_or_else(|| SpecError::value(option, format!("unknown engine {s:?}; use one of {}", EngineKind::NAMES)))
}

fn u32_count(option: &str, s: &str) -> Result<u32, SpecError> {
    let v = units::parse_count(option, s)?;
    u32::try_from(v).map_err(|_| SpecError::value(option, format!("{s} is too large")))
}

impl TargetArgs {
    pub fn options(&self, prefill: bool) -> TargetOptions {
        TargetOptions { overwrite: self.overwrite, keep: self.keep, destroy_data: self.destroy_data.clone(), prefill }
    }
}

impl RunArgs {
    /// Apply the command-line workload options on top of `base`.
    pub fn job_defaults(&self) -> Result<JobSpec, SpecError> {
        let mut j = JobSpec { name: self.name.clone().unwrap_or_else(|| "job".into()), ..JobSpec::default() };
        if let Some(s) = &self.rw {
            j.rw = RwMode::parse(s)
                .ok_or_else(|| SpecError::value("--rw", format!("unknown mode {s:?}; use one of {}", RwMode::NAMES)))?;
        }
        if let Some(s) = &self.bs {
            j.bs = units::parse_size("--bs", s)?;
        }
        if let Some(s) = &self.qd {
            j.qd = u32_count("--qd", s)?;
        }
        if let Some(s) = &self.threads {
            j.threads = u32_count("--threads", s)?;
        }
        if let Some(s) = &self.size {
            j.size = Some(units::parse_size("--size", s)?);
        }
        if let Some(s) = &self.offset {
            j.offset = units::parse_size("--offset", s)?;
        }
        if let Some(s) = &self.runtime {
            j.runtime = units::parse_duration("--runtime", s, TimeUnit::Seconds)?;
        }
        if let Some(s) = &self.ramp {
            j.ramp = units::parse_duration("--ramp", s, TimeUnit::Seconds)?;
        }
        if let Some(s) = &self.mix {
            let p = units::parse_percent("--mix", s)?;
            j.mix = p.round() as u8;
        }
        if let Some(s) = &self.engine {
            j.engine = engine("--engine", s)?;
        }
        if let Some(s) = &self.rate_iops {
            j.rate_iops = Some(units::parse_count("--rate-iops", s)?);
        }
        if let Some(s) = &self.dist {
            j.dist = units::parse_distribution("--dist", s)?;
        }
        if let Some(s) = &self.data {
            j.data = units::parse_data("--data", s)?;
        }
        if let Some(s) = &self.fsync {
            j.fsync = u32_count("--fsync", s)?;
        }
        if let Some(s) = &self.submit_batch {
            j.submit_batch = u32_count("--submit-batch", s)?;
            if j.submit_batch == 0 {
                return Err(SpecError::value("--submit-batch", "must be at least 1 (1 = submit each I/O at once)"));
            }
        }
        if let Some(s) = self.seed {
            j.seed = s;
        }
        j.direct = !self.target_args.buffered;
        j.target = self.target.clone();
        Ok(j)
    }
}

impl MarkArgs {
    pub fn target_path(&self) -> PathBuf {
        self.target_pos.clone().or_else(|| self.target.clone()).unwrap_or_else(|| PathBuf::from(DEFAULT_TARGET))
    }

    pub fn config(&self) -> Result<MarkConfig, SpecError> {
        let mut c = MarkConfig { mix: self.mix, ..MarkConfig::default() };
        c.profile = Profile::parse(&self.profile).ok_or_else(|| {
            SpecError::value(
                "--profile",
                format!("unknown profile {:?}; use default, nvme, peak or real", self.profile),
            )
        })?;
        if self.quick {
            c.size = 256 << 20;
            c.passes = 1;
            c.time = Duration::from_secs(1);
            c.interval = Duration::ZERO;
            c.warmup = false;
        }
        if let Some(s) = &self.size {
            c.size = units::parse_size("--size", s)?;
            c.size_explicit = true;
        }
        if let Some(p) = self.passes {
            if p == 0 || p > 100 {
                return Err(SpecError::value("--passes", format!("{p} is out of range; use 1 to 100")));
            }
            c.passes = p;
        }
        if let Some(s) = &self.time {
            c.time = units::parse_duration("--time", s, TimeUnit::Seconds)?;
            if c.time.is_zero() {
                return Err(SpecError::value("--time", "must be longer than 0; e.g. --time 5s"));
            }
        }
        if let Some(s) = &self.interval {
            c.interval = units::parse_duration("--interval", s, TimeUnit::Seconds)?;
        }
        if self.no_warmup {
            c.warmup = false;
        }
        c.engine = engine("--engine", &self.engine)?;
        c.direct = !self.target_args.buffered;
        if let Some(s) = self.seed {
            c.seed = s;
        }
        if c.size < (1 << 20) {
            return Err(SpecError::value(
                "--size",
                "the mark card needs at least 1M (its sequential tests use 1 MiB blocks)",
            ));
        }
        Ok(c)
    }
}
