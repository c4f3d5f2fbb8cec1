//! `diskmeter steady`: the SNIA PTS IOPS steady-state test.

use super::common::{HistoryArgs, OutputArgs, TargetArgs};
use crate::output::{self, Outcome};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
#[command(after_help = "The SNIA PTS IOPS test: purge the test range (secure discard or discard of a device, \
punch-hole of a file), write it sequentially twice (128 KiB), then run rounds of the test matrix until \
the tracking variables (4K 0/100, 64K 65/35, 1M 100/0 IOPS) stay within 20 % (range) and 10 % (slope) \
of their mean over 5 rounds, at most 25 rounds. It writes the whole range: a block device needs \
--destroy-data DEVICE.

Examples:
  diskmeter steady /dev/nvme1n1 --destroy-data /dev/nvme1n1
  diskmeter steady ./pts.img --size 8G --matrix quick --round-time 10s --html steady.html")]
pub struct SteadyArgs {
    /// File, block device or folder (its diskmeter.test) to test (its test range is purged and
    /// rewritten).
    #[arg(value_name = "TARGET")]
    pub target: PathBuf,
    /// enterprise (QD32, 4 workers, 100 % of the range) or client (QD16, 2 workers, 75 %).
    #[arg(long, value_name = "PROFILE", default_value = app::steady::ENTERPRISE.name)]
    pub profile: String,
    /// Test points: pts (7 read/write mixes x 8 block sizes, 1M to 512B) or quick (4K 0/100,
    /// 4K 65/35, 64K 65/35).
    #[arg(long, value_name = "MATRIX", default_value = app::steady::MATRIX)]
    pub matrix: String,
    /// Length of each test point in every round (whole seconds).
    #[arg(long, value_name = "DURATION", default_value = app::steady::ROUND_TIME)]
    pub round_time: String,
    /// Sequential 128 KiB write passes over the whole range before the rounds (0 skips).
    #[arg(long, value_name = "N", default_value = app::steady::PRECONDITION_PASSES)]
    pub precondition_passes: String,
    /// Also track p99 latency of the tracking points (a latency steady state).
    #[arg(long)]
    pub latency: bool,
    #[arg(long, value_name = "SIZE", help = size_help())]
    pub size: Option<String>,
    #[arg(long, value_name = "N", help = max_rounds_help())]
    pub max_rounds: Option<String>,
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

impl From<&SteadyArgs> for app::steady::Options {
    fn from(a: &SteadyArgs) -> Self {
        Self {
            target: Some(a.target.clone()),
            profile: a.profile.clone(),
            matrix: a.matrix.clone(),
            round_time: a.round_time.clone(),
            precondition_passes: a.precondition_passes.clone(),
            latency: a.latency,
            size: a.size.clone(),
            max_rounds: a.max_rounds.clone(),
            seed: a.seed,
            flags: (&a.target_args).into(),
        }
    }
}

pub fn run(a: &SteadyArgs) -> Outcome {
    output::measure("steady", &super::common::outputs(&a.out, &a.history), |stop, obs| {
        app::steady::run(&app::steady::Config::new(&a.into())?, stop, obs)
    })
}

/// `--max-rounds`'s help, its defaults read from the constants that set them.
fn max_rounds_help() -> String {
    format!("Most rounds, {} to {max} [default: {max}]", stats::steady::WINDOW_ROUNDS, max = stats::steady::MAX_ROUNDS)
}

/// `--size`'s help, its default read from the constant that sets it.
fn size_help() -> String {
    format!(
        "Test range from the start [default: a block device or an existing file whole; else {}]",
        app::steady::default_file_size_arg()
    )
}
