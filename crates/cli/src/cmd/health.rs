//! `diskmeter health`: options → app::health (SMART and endurance), then the report and the exit.

use crate::output::{self, Outcome};
use crate::progress::Progress;
use app::health::{self, Config};
use clap::Args;
use std::path::PathBuf;
const AFTER_HELP: &str = "\
SMART comes from smartctl's JSON output (smartmontools ≥ 7.0; apt-get install smartmontools). \
Reading SMART needs root. A virtual disk (virtio, Xen, Hyper-V, loop, zram) has no SMART and is \
reported as \"SMART unavailable: virtual device\", which is not a failure.

Endurance: --tbw reads spec-sheet units, decimal: 600, 600T and 600TB all mean 600 × 10^12 bytes \
(TiB for binary). The write rate comes from the history kept in the state file between runs \
($XDG_STATE_HOME/diskmeter/health.json, else ~/.local/state/diskmeter/health.json), else from \
the kernel's counters since boot, else from SMART's lifetime average.

Exit status: 0 when the report was produced and no disk is failing (healthy, warnings, or SMART \
unavailable); 1 when a disk is FAILING or its SMART could not be read (like smartctl's bit 3, so \
scripts can alert); 2 bad input; 130 when interrupted (Ctrl-C kills a running smartctl; a self-test \
left by --wait keeps running).";

/// Options of `diskmeter health`.
#[derive(Debug, Args)]
#[command(after_help = AFTER_HELP)]
pub struct HealthArgs {
    /// Disk, partition, dm/md/loop device, mount point or file (traced to its physical disks)
    /// [default: every disk]
    #[arg(value_name = "DEVICE")]
    pub device: Option<String>,
    /// The same as DEVICE.
    #[arg(long, value_name = "DEVICE")]
    pub target: Option<String>,
    /// Print the report as JSON on stdout (schema diskmeter.health.v1); diagnostics go to stderr.
    #[arg(long)]
    pub json: bool,
    /// Also write the report to FILE: .json (JSON) or .txt (text).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace an existing -o file even when it is not a diskmeter report.
    #[arg(long)]
    pub force: bool,
    /// No progress display and no text report on stdout (--json and -o still work).
    #[arg(short, long)]
    pub quiet: bool,
    /// Rated endurance from the spec sheet, decimal: 600 = 600T = 600TB = 600×10^12 bytes (TiB: binary).
    #[arg(long, value_name = "TBW")]
    pub tbw: Option<String>,
    /// Rated drive writes per day; TBW = DWPD × capacity × 365 × warranty years.
    #[arg(long, value_name = "N")]
    pub dwpd: Option<String>,
    #[arg(long = "warranty-years", value_name = "YEARS", help = warranty_years_help())]
    pub warranty_years: Option<String>,
    /// History file for write rate and wear slope [default: $XDG_STATE_HOME/diskmeter/health.json].
    #[arg(long, value_name = "FILE")]
    pub state: Option<PathBuf>,
    /// Keep no history: neither read nor write the state file.
    #[arg(long = "no-state")]
    pub no_state: bool,
    /// Start a self-test on DEVICE: short, long, conveyance, or abort a running one.
    #[arg(long = "self-test", value_name = "KIND")]
    pub self_test: Option<String>,
    /// With --self-test: show its progress until it ends (Ctrl-C stops waiting, not the test).
    #[arg(long)]
    pub wait: bool,
    #[arg(long, value_name = "PATH", help = SMARTCTL_HELP)]
    pub smartctl: Option<PathBuf>,
    #[arg(long = "smartctl-timeout", value_name = "DURATION", help = smartctl_timeout_help())]
    pub smartctl_timeout: Option<String>,
    /// smartctl's device type (-d), for USB bridges and RAID controllers: sat, nvme, megaraid,N, …
    #[arg(short = 'd', long = "device-type", value_name = "TYPE")]
    pub device_type: Option<String>,
    /// Include smartctl's own JSON for each disk under "smartctl" in the JSON report.
    #[arg(long)]
    pub raw: bool,
    /// Self-test progress poll interval (testing aid).
    #[arg(long, value_name = "DURATION", hide = true)]
    pub poll: Option<String>,
    #[command(flatten)]
    pub history: super::common::HistoryArgs,
}

impl HealthArgs {
    fn options(&self) -> health::Options {
        health::Options {
            device: self.device.clone(),
            target: self.target.clone(),
            json: self.json,
            output: self.output.clone(),
            force: self.force,
            quiet: self.quiet,
            tbw: self.tbw.clone(),
            dwpd: self.dwpd.clone(),
            warranty_years: self.warranty_years.clone(),
            state: self.state.clone(),
            no_state: self.no_state,
            self_test: self.self_test.clone(),
            wait: self.wait,
            smartctl: self.smartctl.clone(),
            smartctl_timeout: self.smartctl_timeout.clone(),
            device_type: self.device_type.clone(),
            raw: self.raw,
            poll: self.poll.clone(),
        }
    }
}

pub fn run(a: &HealthArgs) -> Outcome {
    let cfg = Config::new(&a.options())?;
    let stop = crate::signals::install();
    let mut progress = Progress::new(a.quiet);
    let res = health::run(&cfg, &stop, &mut progress);
    drop(progress);
    let mut doc = res.inspect_err(|e| output::health_failed(&cfg, e))?;
    app::history::record_health(&(&a.history).into(), &mut doc);
    output::health(&doc, &cfg)
}

/// `--warranty-years`'s help, its defaults read from the constants that set them.
fn warranty_years_help() -> String {
    format!("Warranty years for --dwpd [default: {}]", app::health::WARRANTY_YEARS)
}

/// `--smartctl-timeout`'s help, its defaults read from the constants that set them.
/// Where `--smartctl` defaults to, as `Smartctl::locate` looks.
#[cfg(not(windows))]
const SMARTCTL_HELP: &str =
    "The smartctl to run [default: $DISKMETER_SMARTCTL, else smartctl in PATH, /usr/sbin, /sbin]";
/// Where `--smartctl` defaults to, as `Smartctl::locate` looks.
#[cfg(windows)]
const SMARTCTL_HELP: &str = "The smartctl.exe to run [default: %DISKMETER_SMARTCTL%, else smartctl.exe in PATH, \
     then %ProgramFiles%\\smartmontools\\bin]";

fn smartctl_timeout_help() -> String {
    format!(
        "How long one smartctl call may take before it and what it started are killed (a \
         number alone is seconds) [default: {}s]",
        app::health::SMARTCTL_TIMEOUT.as_secs()
    )
}
