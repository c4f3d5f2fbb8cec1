//! `diskmeter top`: options → app::top (the live I/O monitor).

use crate::output::Outcome;
use crate::progress::Progress;
use app::top;
use clap::Args;
use std::io::IsTerminal;
use std::path::PathBuf;

/// Options of `diskmeter top`.
#[derive(Debug, Args)]
pub struct TopArgs {
    /// Time between reports (iostat's interval); at least 100ms.
    #[arg(long, value_name = "DURATION", default_value = app::top::INTERVAL)]
    pub interval: String,
    /// Print N reports, then exit (plain mode; without it, run until Ctrl-C).
    #[arg(long, value_name = "N")]
    pub count: Option<String>,
    /// Also show per-process I/O: bytes/s from /proc/PID/io, and IO%/SWAPIN% from taskstats
    /// delay accounting (root or CAP_NET_ADMIN, and sysctl kernel.task_delayacct=1).
    #[arg(long)]
    pub processes: bool,
    /// Also show loop, device-mapper, md and other virtual devices (and partitions).
    #[arg(long)]
    pub all_devices: bool,
    /// Also show partitions.
    #[arg(long)]
    pub partitions: bool,
    /// Only these devices (kernel names like vda or device-mapper names), comma-separated.
    #[arg(long, value_name = "NAME,...", value_delimiter = ',')]
    pub devices: Vec<String>,
    /// Order devices (and processes) by: name, iops, read, write, await, queue, util, iodelay
    /// (processes by IO%, devices by %util).
    #[arg(long, value_name = "KEY", default_value = app::top::SORT)]
    pub sort: String,
    /// The names the device figures are shown under: iostat (r/s, r_await, aqu-sz, %util) or
    /// perfmon (Disk Reads/sec, Avg. Disk sec/Read, Current Disk Queue Length, % Idle Time; the
    /// default on Windows); --json carries both.
    #[arg(long, value_name = "NAMES", default_value = app::top::COLUMNS)]
    pub columns: String,
    /// Plain text even on a terminal (no TUI).
    #[arg(long)]
    pub plain: bool,
    /// The first report covers the time since boot instead of the first interval.
    #[arg(long)]
    pub since_boot: bool,
    /// Record the raw samples to FILE (JSON Lines, schema diskmeter.top-record.v1).
    #[arg(long, value_name = "FILE")]
    pub record: Option<PathBuf>,
    /// Replay a recording made with --record instead of reading the live system.
    #[arg(long, value_name = "FILE")]
    pub replay: Option<PathBuf>,
    /// JSON Lines on stdout: one object per interval (schema diskmeter.top.v1).
    #[arg(long)]
    pub json: bool,
    /// Also write every report to FILE (.json/.jsonl: JSON Lines, otherwise text).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing --record/-o file even when it is not a diskmeter recording.
    #[arg(long)]
    pub force: bool,
    /// Nothing on stdout (--record and -o still write).
    #[arg(short, long)]
    pub quiet: bool,
}

impl TopArgs {
    fn options(&self) -> top::Options {
        top::Options {
            interval: self.interval.clone(),
            count: self.count.clone(),
            processes: self.processes,
            all_devices: self.all_devices,
            partitions: self.partitions,
            devices: self.devices.clone(),
            sort: self.sort.clone(),
            columns: self.columns.clone(),
            plain: self.plain,
            since_boot: self.since_boot,
            record: self.record.clone(),
            replay: self.replay.clone(),
            json: self.json,
            output: self.output.clone(),
            force: self.force,
            quiet: self.quiet,
            stdout_is_terminal: std::io::stdout().is_terminal(),
        }
    }
}

pub fn run(a: &TopArgs) -> Outcome {
    // top shows newlines in messages as `?` too (its messages quote device and process names).
    let shown = |e: app::Error| match e {
        app::Error::Usage(m) => app::Error::Usage(top::sanitize(&m)),
        app::Error::Runtime(m) => app::Error::Runtime(top::sanitize(&m)),
        app::Error::Interrupted(m) => app::Error::Interrupted(top::sanitize(&m)),
    };
    let cfg = top::Config::new(&a.options()).map_err(shown)?;
    let stop = crate::signals::install();
    let mut progress = Progress::new(a.quiet);
    // Not locked for the whole run: the TUI writes to the terminal, and so may its panic hook on
    // another thread.
    match top::run(cfg, stop, &mut progress, &mut std::io::stdout()).map_err(shown)? {
        top::Outcome::Done => Ok(0),
        top::Outcome::Interrupted => Ok(130),
    }
}
