//! `diskmeter run`: any workload (options or an fio job file), on one host or on every rank
//! under mpirun.

use super::common::{target_help, HistoryArgs, HostsArgs, OutputArgs, SustainedArgs, TargetArgs};
use crate::output::{self, Outcome};
use app::cluster::Cluster;
use app::run::defaults;
use clap::Args;
use std::path::PathBuf;

/// `run --verify` and its options.
#[derive(Debug, Args, Clone)]
pub struct VerifyArgs {
    #[arg(
        long,
        value_name = "KIND",
        num_args = 0..=1,
        default_missing_value = app::run::VERIFY_KIND,
        help = verify_help()
    )]
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
    #[arg(long, value_name = "PATH", help = target_help(""))]
    pub target: Option<PathBuf>,
    /// Job name shown in the results.
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Access pattern: read, write, randread, randwrite, randrw, readwrite.
    #[arg(long, value_name = "MODE")]
    pub rw: Option<String>,
    #[arg(long, value_name = "SIZE", help = bs_help())]
    pub bs: Option<String>,
    #[arg(long, value_name = "N", help = qd_help())]
    pub qd: Option<String>,
    #[arg(long, value_name = "N", help = threads_help())]
    pub threads: Option<String>,
    #[arg(long, value_name = "SIZE", help = size_help())]
    pub size: Option<String>,
    #[arg(long, value_name = "SIZE", help = offset_help())]
    pub offset: Option<String>,
    #[arg(long, value_name = "DURATION", help = runtime_help())]
    pub runtime: Option<String>,
    #[arg(long, value_name = "DURATION", help = ramp_help())]
    pub ramp: Option<String>,
    #[arg(long, value_name = "PCT", help = mix_help())]
    pub mix: Option<String>,
    #[arg(long, value_name = "ENGINE", help = engine_help())]
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
    #[arg(long, value_name = "N", help = submit_batch_help())]
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
    #[command(flatten)]
    pub history: HistoryArgs,
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

pub fn run(a: &RunArgs, cluster: &mut Cluster) -> Outcome {
    let o = app::run::Options { rank: cluster.names().clone(), ..a.into() };
    output::measure_on(cluster, "run", &super::common::outputs(&a.out, &a.history), a.hosts.shared, |stop, obs| {
        app::run::run(&app::run::Config::new(&o)?, stop, obs)
    })
}

/// `--verify`'s help, its defaults read from the constants that set them.
fn verify_help() -> String {
    format!(
        "Verify the data: every written chunk carries a header (offset, job, generation, \
         time, seed, checksum); reads check it, and after the writes every written chunk is \
         read back. A failure is diagnosed (torn, stale, misdirected, zeroed, unwritten, \
         corrupt) and makes the exit status 1. KIND: {} [default: {}]",
        app::run::VERIFY_KINDS,
        app::run::VERIFY_KIND
    )
}

/// `--engine`'s help, its defaults read from the constants that set them.
fn engine_help() -> String {
    format!(
        "I/O engine: io_uring, psync, null (no device: the tool's own ceiling), mem (memcpy \
         over a --size memory region: this machine's memory bandwidth for the shape) \
         [default: {}]",
        app::session::DEFAULT_ENGINE
    )
}

/// `--bs`'s help, its default read from the value that sets it.
fn bs_help() -> String {
    format!("Block size per I/O [default: {}]", defaults::bs())
}

/// `--qd`'s help, its limit and default read from the values that set them.
fn qd_help() -> String {
    format!("I/Os kept in flight per worker (queue depth), 1 to {} [default: {}]", app::session::MAX_QD, defaults::qd())
}

/// `--threads`'s help, its default read from the value that sets it.
fn threads_help() -> String {
    format!("Workers (threads), each with its own queue [default: {}]", defaults::threads())
}

/// `--size`'s help, its default read from the value that sets it.
fn size_help() -> String {
    format!("Region size [default: {} for a new file, else the whole target from --offset]", defaults::new_file_size())
}

/// `--offset`'s help, its default read from the value that sets it.
fn offset_help() -> String {
    format!("Region start in bytes [default: {}]", defaults::offset())
}

/// `--runtime`'s help, its default read from the value that sets it.
fn runtime_help() -> String {
    format!("Measured time [default: {}]", defaults::runtime())
}

/// `--ramp`'s help, its default read from the value that sets it.
fn ramp_help() -> String {
    format!("Unmeasured ramp before the measured time [default: {}]", defaults::ramp())
}

/// `--mix`'s help, its default read from the value that sets it.
fn mix_help() -> String {
    format!("Read share in percent for randrw/readwrite [default: {}]", defaults::mix())
}

/// `--submit-batch`'s help, its default read from the value that sets it.
fn submit_batch_help() -> String {
    format!(
        "Submit once N I/Os are prepared (fio iodepth_batch_submit); 1 = each at once [default: {}]",
        defaults::submit_batch()
    )
}
