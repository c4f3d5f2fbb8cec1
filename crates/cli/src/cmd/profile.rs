//! `diskmeter profile`: options → app::profile; the result is written like every result
//! document (text, --json, -o), the job file by app.

use super::common::TraceReadArgs;
use crate::output::{self, Outcome};
use app::output::OutputOptions;
use clap::Args;
use std::path::PathBuf;

/// Options of `diskmeter profile`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
One streaming pass over the trace: read/write/discard/flush mix by count and bytes, block
sizes per operation, the sequential share (a request that starts where the previous request
of the same operation on the same device ended), the hot-set curve (share of the 4 KiB-block
accesses on the hottest 1, 5, 10, 20, 50 and 100 % of the footprint), inter-arrival times and
rate, and the outstanding depth over time where the trace recorded completion times (binary
v2 traces from capture, MSR, blkparse Q/D). Memory grows with the footprint, not the length.
--emit-job writes a job file for `diskmeter run JOB --target PATH` with the same mix and block
size(s), a zoned distribution matching the hot-set curve, the mean rate and the depth.")]
pub struct ProfileArgs {
    /// The trace file (.gz is decompressed on the fly).
    #[arg(value_name = "TRACE")]
    pub trace: PathBuf,
    #[command(flatten)]
    pub read: TraceReadArgs,
    /// Also write an fio job file (diskmeter's dialect) that reproduces the workload.
    #[arg(long, value_name = "FILE.fio")]
    pub emit_job: Option<PathBuf>,
    /// Print the result as JSON on stdout (schema diskmeter.result.v1); diagnostics go to stderr.
    #[arg(long)]
    pub json: bool,
    /// Also write the result to FILE: .json or .txt.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// No progress display and no human result on stdout (JSON and -o still work).
    #[arg(short, long)]
    pub quiet: bool,
    /// Replace an existing output or job file even when it is not diskmeter's.
    #[arg(long)]
    pub force: bool,
}

impl From<&ProfileArgs> for app::profile::Options {
    fn from(a: &ProfileArgs) -> Self {
        app::profile::Options {
            input: a.read.options(&a.trace),
            emit_job: a.emit_job.clone(),
            output: a.output.clone(),
            force: a.force,
        }
    }
}

pub fn run(a: &ProfileArgs) -> Outcome {
    let out = OutputOptions {
        json: a.json,
        output: a.output.clone(),
        quiet: a.quiet,
        html: None,
        force: a.force,
        history: app::history::Choice::none(),
    };
    let opts = app::profile::Options::from(a);
    output::measure("profile", &out, |stop, obs| app::profile::run(&app::profile::Config::new(&opts)?, &stop, obs))
}
