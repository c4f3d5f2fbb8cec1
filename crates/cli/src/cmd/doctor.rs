//! `diskmeter doctor`: options → app::doctor (facts, SMART, load, probe → ranked causes), then
//! the report and the exit.

use crate::output::{self, Outcome};
use crate::progress::Progress;
use app::doctor::{self, Config};
use clap::Args;
use std::path::PathBuf;

const AFTER_HELP: &str = "\
doctor walks the stack under TARGET (file system, dm/md/loop, partition, disk, link) and runs \
the checks an expert would: PCIe/SATA/USB links, media errors, heat, the write cache, NCQ, TRIM \
and free space, alignment, power management, the scheduler, request limits, competing I/O, \
stacking layers and cgroup limits, the drive's state. It ranks what it finds, most likely \
first, each with its evidence (values and where they were read), its cost and its fix; then \
lists the checks that passed and those it could not run, and why. docs/doctor.md lists every \
check with its threshold.

Reading SMART, the kernel log and other processes' I/O needs root; without it those checks say \
so. --probe reads only (a device is opened read-only; a folder gets a test file, removed after).

Exit status: 0 when no cause of severity high or critical was found; 1 when one was; 2 bad \
input; 130 interrupted.";

/// Options of `diskmeter doctor`.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct DoctorArgs {
    /// A file, folder, mount point or block device [default: the current directory]
    #[arg(value_name = "TARGET")]
    pub target: Option<PathBuf>,
    /// Also watch the stack's devices, I/O pressure and processes for this long (e.g. 10s):
    /// I/O from others shows as competing I/O.
    #[arg(long, value_name = "DURATION")]
    pub load: Option<String>,
    /// Also run a 5-second read-only test (QD1 and QD32 4 KiB random, 1 MiB sequential) and hold
    /// its latency against the medium and its throughput against the link.
    #[arg(long)]
    pub probe: bool,
    /// Print the diagnosis as JSON on stdout (schema diskmeter.doctor.v1).
    #[arg(long)]
    pub json: bool,
    /// Also write the diagnosis to FILE: .html (a report page), .json or .txt.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing -o file even when it is not a diskmeter report.
    #[arg(long)]
    pub force: bool,
    /// No progress display.
    #[arg(short, long)]
    pub quiet: bool,
    /// The smartctl to run [default: $DISKMETER_SMARTCTL, else smartctl in PATH, /usr/sbin, /sbin]
    #[arg(long, value_name = "PATH")]
    pub smartctl: Option<PathBuf>,
}

pub fn run(a: &DoctorArgs) -> Outcome {
    let cfg = Config::new(&doctor::Options {
        target: a.target.clone(),
        load: a.load.clone(),
        probe: a.probe,
        json: a.json,
        output: a.output.clone(),
        force: a.force,
        smartctl: a.smartctl.clone(),
    })?;
    let stop = crate::signals::install();
    let mut progress = Progress::new(a.quiet);
    let res = doctor::run(&cfg, &stop, &mut progress);
    drop(progress);
    output::doctor(&res?, &cfg)
}
