//! `diskmeter mark`: the CrystalDiskMark card, on one host or on every rank under mpirun.

use super::common::{target_help, HistoryArgs, HostsArgs, OutputArgs, SustainedArgs, TargetArgs};
use crate::output::{self, Outcome};
use app::cluster::Cluster;
use clap::Args;
use std::path::PathBuf;

#[derive(Debug, Args)]
pub struct MarkArgs {
    #[arg(value_name = "TARGET", help = target_help(" to test"))]
    pub target_pos: Option<PathBuf>,
    /// Same as the positional TARGET.
    #[arg(long, value_name = "PATH", conflicts_with = "target_pos")]
    pub target: Option<PathBuf>,
    /// Test set: default (SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T1, RND4K Q1T1), nvme, peak, real.
    #[arg(long, default_value = app::mark::PROFILE, value_name = "PROFILE")]
    pub profile: String,
    /// Also run every test as a mixed stream of 70 % reads / 30 % writes.
    #[arg(long)]
    pub mix: bool,
    #[arg(long, value_name = "SIZE", help = size_help())]
    pub size: Option<String>,
    #[arg(long, value_name = "N", help = passes_help())]
    pub passes: Option<u32>,
    #[arg(long, value_name = "DURATION", help = time_help())]
    pub time: Option<String>,
    #[arg(long, value_name = "DURATION", help = interval_help())]
    pub interval: Option<String>,
    /// Skip the unmeasured warm-up pass before each test.
    #[arg(long)]
    pub no_warmup: bool,
    #[arg(long, help = quick_help())]
    pub quick: bool,
    /// I/O engine: io_uring, psync (or null: no device, the tool's own ceiling).
    #[arg(long, default_value = app::session::DEFAULT_ENGINE, value_name = "ENGINE")]
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
    #[command(flatten)]
    pub history: HistoryArgs,
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

pub fn run(a: &MarkArgs, cluster: &mut Cluster) -> Outcome {
    let o = app::mark::Options { rank: cluster.names().clone(), ..a.into() };
    output::measure_on(cluster, "mark", &super::common::outputs(&a.out, &a.history), a.hosts.shared, |stop, obs| {
        app::mark::run(&app::mark::Config::new(&o)?, stop, obs)
    })
}

/// `--size`'s help, its defaults read from the constants that set them.
fn size_help() -> String {
    format!("Test area size [default: {}; --quick: {}]", app::mark::SIZE, app::mark::QUICK_SIZE)
}

/// `--passes`'s help, its defaults read from the constants that set them.
fn passes_help() -> String {
    format!("Measured passes per test; the card shows the best (CrystalDiskMark 9) [default: {}]", app::mark::PASSES)
}

/// `--time`'s help, its defaults read from the constants that set them.
fn time_help() -> String {
    format!("Length of each pass [default: {}]", app::mark::TIME)
}

/// `--interval`'s help, its defaults read from the constants that set them.
fn interval_help() -> String {
    format!("Pause between tests [default: {}]", app::mark::INTERVAL)
}

/// `--quick`'s help, its figures read from the constants that set them.
fn quick_help() -> String {
    format!(
        "A first look in seconds: {} area, {} pass of {} s, no pause, short warm-up off",
        app::mark::QUICK_SIZE,
        app::mark::QUICK_PASSES,
        app::mark::QUICK_TIME.as_secs()
    )
}
