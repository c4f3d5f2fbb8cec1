//! `diskmeter capture`: options → app::capture; the trace is written, then its summary
//! (text, or JSON with --json) goes to stdout.

use crate::output::{self, Outcome};
use crate::progress::Progress;
use crate::signals;
use clap::Args;
use std::path::PathBuf;

/// Options of `diskmeter capture`.
#[derive(Debug, Args)]
#[command(after_long_help = "\
Records each request the device completes (issue time, offset, size, operation and its
issue-to-completion latency) from the kernel's block tracepoints, in a private tracing
instance, into a binary trace that profile, replay and cache read. Needs root and tracefs.
A partition is captured on its disk, filtered to its sectors, with offsets from its start.
Requests issued before the start or still in flight at the end are counted, not kept; events
the kernel's buffer could not hold are counted and reported. Ctrl-C ends the capture early
and keeps what was recorded (exit 130).")]
pub struct CaptureArgs {
    /// The block device: a whole disk or a partition, e.g. /dev/nvme0n1 or /dev/sdb2.
    #[arg(value_name = "DEVICE")]
    pub device: PathBuf,
    /// How long to record, e.g. 60s, 10m (at most 7d).
    #[arg(long, value_name = "DURATION")]
    pub duration: String,
    /// The trace to write (diskmeter's binary format, e.g. trace.dmt).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    #[arg(long, value_name = "SIZE", help = buffer_help())]
    pub buffer: Option<String>,
    /// Print the summary as JSON (schema diskmeter.capture.v1); warnings go to stderr.
    #[arg(long)]
    pub json: bool,
    /// No progress display and no summary on stdout (--json still prints).
    #[arg(short, long)]
    pub quiet: bool,
    /// Replace an existing output file even when it is not a diskmeter result or trace.
    #[arg(long)]
    pub force: bool,
}

impl From<&CaptureArgs> for app::capture::Options {
    fn from(a: &CaptureArgs) -> Self {
        app::capture::Options {
            device: a.device.clone(),
            duration: a.duration.clone(),
            output: a.output.clone(),
            buffer: a.buffer.clone(),
            force: a.force,
        }
    }
}

pub fn run(a: &CaptureArgs) -> Outcome {
    let cfg = app::capture::Config::new(&a.into())?;
    let stop = signals::install();
    let mut progress = Progress::new(a.quiet);
    let summary = app::capture::run(&cfg, &stop, &mut progress)?;
    // The progress line is cleared before the summary takes the terminal.
    drop(progress);
    output::capture(&summary, a.json, a.quiet)
}

/// `--buffer`'s help, its defaults read from the constants that set them.
fn buffer_help() -> String {
    format!(
        "Kernel trace buffer per CPU [default: {} MiB shared by the CPUs, {} to {} MiB each]",
        app::capture::BUFFER_SHARED >> 20,
        app::capture::BUFFER_PER_CPU_MIN >> 20,
        app::capture::BUFFER_PER_CPU_MAX >> 20
    )
}
