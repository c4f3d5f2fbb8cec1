//! `diskmeter replay`: a block trace played against a file or device.

use super::common::{HistoryArgs, OutputArgs, TargetArgs, TraceReadArgs};
use crate::output::{self, Outcome};
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// The trace (any format `cache simulate` reads; .gz is decompressed on the fly).
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    #[command(flatten)]
    pub read: TraceReadArgs,
    /// File or block device to replay onto (writes need --overwrite or --destroy-data).
    #[arg(long, value_name = "PATH")]
    pub target: Option<PathBuf>,
    /// Map trace devices onto targets: DEVICE=PATH, repeated or separated by ';'.
    #[arg(long, value_name = "DEVICE=PATH")]
    pub devices_to_targets: Vec<String>,
    /// original (the trace's times, open loop), afap (as fast as possible under --qd), depth (the
    /// trace's own outstanding count).
    #[arg(long, value_name = "TIMING", default_value = app::replay::TIMING)]
    pub timing: String,
    /// Time scale of --timing original: 2.0 replays twice as fast.
    #[arg(long, value_name = "FACTOR")]
    pub speed: Option<String>,
    #[arg(long, value_name = "N", help = qd_help())]
    pub qd: Option<String>,
    /// How trace addresses land on the target: modulo, scale or offset [default: offset when the
    /// trace's span fits the target, else modulo].
    #[arg(long, value_name = "MODE")]
    pub map: Option<String>,
    /// Replay the trace this many times; each pass is reported (caches warming show here).
    #[arg(long, value_name = "N")]
    pub passes: Option<String>,
    /// I/O engine: io_uring, psync, or null (no device: the tool's own ceiling).
    #[arg(long, value_name = "ENGINE")]
    pub engine: Option<String>,
    /// Size of a test file diskmeter creates [default: the trace's span].
    #[arg(long, value_name = "SIZE")]
    pub size: Option<String>,
    /// Random seed of the written data.
    #[arg(long, value_name = "N")]
    pub seed: Option<u64>,
    #[command(flatten)]
    pub target_args: TargetArgs,
    #[command(flatten)]
    pub out: OutputArgs,
    #[command(flatten)]
    pub history: HistoryArgs,
}

impl From<&ReplayArgs> for app::replay::Options {
    fn from(a: &ReplayArgs) -> Self {
        Self {
            input: a.read.options(&a.trace),
            target: a.target.clone(),
            devices_to_targets: a.devices_to_targets.clone(),
            timing: Some(a.timing.clone()),
            speed: a.speed.clone(),
            qd: a.qd.clone(),
            map: a.map.clone(),
            passes: a.passes.clone(),
            engine: a.engine.clone(),
            size: a.size.clone(),
            seed: a.seed,
            flags: (&a.target_args).into(),
        }
    }
}

pub fn run(a: &ReplayArgs) -> Outcome {
    output::measure("replay", &super::common::outputs(&a.out, &a.history), |stop, obs| {
        app::replay::run(&app::replay::Config::new(&a.into())?, stop, obs)
    })
}

/// `--qd`'s help, its defaults read from the constants that set them.
fn qd_help() -> String {
    format!(
        "Requests outstanding at most [default: {} for afap, {} otherwise]",
        app::replay::DEFAULT_QD_AFAP,
        app::replay::DEFAULT_QD_OPEN
    )
}
