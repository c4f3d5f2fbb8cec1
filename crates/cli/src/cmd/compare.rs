//! `diskmeter compare`: interleaved passes on several targets (or saved results) and verdicts.

use super::common::{HistoryArgs, OutputArgs, TargetArgs};
use crate::output::{self, Outcome};
use clap::Args;
use std::path::PathBuf;

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
    #[arg(long, default_value = app::mark::PROFILE, value_name = "PROFILE")]
    pub profile: String,
    /// Run one job instead of a mark profile: read, write, randread, randwrite, randrw, readwrite.
    #[arg(long, value_name = "MODE")]
    pub rw: Option<String>,
    /// Block size of the job (with --rw).
    #[arg(long, default_value = app::compare::BS, value_name = "SIZE")]
    pub bs: String,
    /// Queue depth per worker of the job (with --rw).
    #[arg(long, default_value = app::compare::QD, value_name = "N")]
    pub qd: String,
    /// Workers of the job (with --rw).
    #[arg(long, default_value = app::compare::THREADS, value_name = "N")]
    pub threads: String,
    /// Read share of a mixed job (with --rw randrw), percent.
    #[arg(long, value_name = "PCT")]
    pub mix: Option<String>,
    #[arg(long, value_name = "N", help = passes_help())]
    pub passes: Option<String>,
    #[arg(long, value_name = "DURATION", help = time_help())]
    pub time: Option<String>,
    /// Skip the unmeasured warm-up pass per test and target.
    #[arg(long)]
    pub no_warmup: bool,
    #[arg(long, value_name = "SIZE", help = size_help())]
    pub size: Option<String>,
    /// A verdict in about a minute: 256M per target, a warm-up and 3 passes of 1 s per test
    /// (the default profile on two targets: about 1 min against about 8 min).
    #[arg(long)]
    pub quick: bool,
    /// I/O engine: io_uring, psync (or null: no device).
    #[arg(long, default_value = app::session::DEFAULT_ENGINE, value_name = "ENGINE")]
    pub engine: String,
    /// The test of the p-value shown beside each verdict: welch (Welch's t) or mann-whitney. The
    /// verdict itself is the one rule every surface uses: faster/slower when the 95 % interval of
    /// the change excludes no change and the change is beyond ±5 %, within noise when the interval
    /// lies within ±5 %, else inconclusive (one pass a side: no interval, beyond ±10 %).
    #[arg(long, default_value = app::compare::TEST, value_name = "TEST")]
    pub test: String,
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

pub fn run(a: &CompareArgs) -> Outcome {
    output::measure("compare", &super::common::outputs(&a.out, &a.history), |stop, obs| {
        app::compare::run(&app::compare::Config::new(&a.into())?, stop, obs)
    })
}

/// `--passes`'s help, its defaults read from the constants that set them.
fn passes_help() -> String {
    format!(
        "Measured passes per test and target, {} to {} [default: {}; --quick: {}]",
        app::compare::MIN_PASSES,
        app::compare::MAX_PASSES,
        app::compare::PASSES,
        app::compare::QUICK_PASSES
    )
}

/// `--time`'s help, its defaults read from the constants that set them.
fn time_help() -> String {
    format!("Length of each pass [default: {}; --quick: {}]", app::compare::TIME, app::compare::QUICK_TIME)
}

/// `--size`'s help, its defaults read from the constants that set them.
fn size_help() -> String {
    format!("Test area size per target [default: {}; --quick: {}]", app::compare::SIZE, app::compare::QUICK_SIZE)
}
