//! `diskmeter sla`: the most IOPS under a latency bound.

use super::common::{target_help, HistoryArgs, OutputArgs, TargetArgs};
use crate::output::{self, Outcome};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct SlaArgs {
    #[arg(value_name = "TARGET", help = target_help(" to test"))]
    pub target_pos: Option<PathBuf>,
    /// Same as the positional TARGET.
    #[arg(long, value_name = "PATH", conflicts_with = "target_pos")]
    pub target: Option<PathBuf>,
    /// The latency bound, e.g. 10ms, 500us, 1ms.
    #[arg(long, value_name = "DURATION", required = true)]
    pub latency: String,
    /// Which latency statistic the bound applies to: mean, 50, 90, 99, 99.9.
    #[arg(long, default_value = app::sla::DEFAULT_PERCENTILE, value_name = "STAT")]
    pub percentile: String,
    /// Workload: randread, randwrite, randrw, read, write, or two independent streams such as
    /// randread+randwrite (their depths scale together, split by --mix).
    #[arg(long, default_value = app::sla::DEFAULT_RW, value_name = "MODE")]
    pub rw: String,
    /// Block size per I/O.
    #[arg(long, default_value = app::sla::DEFAULT_BS, value_name = "SIZE")]
    pub bs: String,
    /// Read share (randrw), or the first stream's share of the depth (two streams), percent.
    #[arg(long, value_name = "PCT")]
    pub mix: Option<String>,
    #[arg(long, default_value = app::sla::DEFAULT_MAX_QD, value_name = "N", help = max_qd_help())]
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
    #[arg(long, default_value = app::sla::DEFAULT_SIZE, value_name = "SIZE")]
    pub size: String,
    /// Unmeasured ramp before each point.
    #[arg(long, default_value = app::sla::DEFAULT_RAMP, value_name = "DURATION")]
    pub ramp: String,
    /// Fewest one-second windows per point.
    #[arg(long, default_value = app::sla::DEFAULT_MIN_WINDOWS, value_name = "N")]
    pub min_windows: String,
    /// Most one-second windows per point (a point that has not settled by then is flagged).
    #[arg(long, default_value = app::sla::DEFAULT_MAX_WINDOWS, value_name = "N")]
    pub max_windows: String,
    /// A point is stable when its IOPS and latency are known to within this (relative standard
    /// error over its one-second windows).
    #[arg(long, default_value = app::sla::DEFAULT_CV, value_name = "PCT")]
    pub cv: String,
    /// Points whose latency is within this distance of the bound are measured twice.
    #[arg(long, default_value = app::sla::DEFAULT_GUARD, value_name = "PCT")]
    pub guard: String,
    /// I/O engine: io_uring, psync (or null: no device).
    #[arg(long, default_value = app::session::DEFAULT_ENGINE, value_name = "ENGINE")]
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
    #[command(flatten)]
    pub history: HistoryArgs,
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

pub fn run(a: &SlaArgs) -> Outcome {
    output::measure("sla", &super::common::outputs(&a.out, &a.history), |stop, obs| {
        app::sla::run(&app::sla::Config::new(&a.into())?, stop, obs)
    })
}

/// `--max-qd`'s help, its limit read from the constant that sets it.
fn max_qd_help() -> String {
    format!("Deepest queue per worker to try (at most {})", app::session::MAX_QD)
}
