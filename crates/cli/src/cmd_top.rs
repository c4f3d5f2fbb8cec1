//! `diskmeter top`: the live I/O monitor (thin: options → monitor crate).

use clap::Args;
use monitor::devices::Filter;
use monitor::run::{self, Outcome, PlainConfig};
use monitor::sample::{LiveSource, ReplaySource, SampleSource};
use monitor::{Monitor, MonitorError, Options, SortKey};
use spec::units::{self, TimeUnit};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

/// Options of `diskmeter top`.
#[derive(Debug, Args)]
pub struct TopArgs {
    /// Time between reports (iostat's interval); at least 100ms.
    #[arg(long, value_name = "DURATION", default_value = "1s")]
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
    #[arg(long, value_name = "KEY", default_value = "name")]
    pub sort: String,
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

/// Validated configuration.
struct Config {
    interval: Duration,
    opts: Options,
    tui: bool,
    plain: PlainConfig,
}

fn output_file(option: &str, p: &Path, force: bool) -> Result<files::output::OutputFile, MonitorError> {
    files::output::plan(p, option, force).map_err(|e| match e {
        files::FileError::Usage(m) => MonitorError::Usage(m),
        files::FileError::Runtime(m) => MonitorError::Runtime(m),
    })
}

fn config(a: &TopArgs) -> Result<Config, MonitorError> {
    let usage = |e: spec::SpecError| MonitorError::Usage(e.to_string());
    let interval = units::parse_duration("--interval", &a.interval, TimeUnit::Seconds).map_err(usage)?;
    if interval < Duration::from_millis(100) {
        return Err(MonitorError::Usage(format!(
            "invalid value for --interval: {:?} is shorter than 100ms, the resolution of the kernel's uptime clock",
            a.interval
        )));
    }
    let count = match &a.count {
        Some(s) => {
            let n = units::parse_count("--count", s).map_err(usage)?;
            if n == 0 {
                return Err(MonitorError::Usage("invalid value for --count: must be at least 1".into()));
            }
            Some(n)
        }
        None => None,
    };
    let sort = SortKey::parse(&a.sort).ok_or_else(|| {
        MonitorError::Usage(format!(
            "invalid value for --sort: {:?}; use one of {}",
            a.sort,
            SortKey::ALL.map(|k| k.as_str()).join(", ")
        ))
    })?;
    if let Some(d) = a.devices.iter().find(|d| d.is_empty() || d.contains('/')) {
        return Err(MonitorError::Usage(format!(
            "invalid value for --devices: {d:?}; give kernel names (vda, nvme0n1, dm-0) or mapper names, without /dev/"
        )));
    }
    if a.record.is_some() && a.replay.is_some() {
        return Err(MonitorError::Usage("--record and --replay cannot be combined".into()));
    }
    let record = match &a.record {
        Some(p) => Some(output_file("--record", p, a.force)?),
        None => None,
    };
    let output = match &a.output {
        Some(p) => {
            if a.record.as_ref() == Some(p) || a.replay.as_ref() == Some(p) {
                return Err(MonitorError::Usage(format!(
                    "--output {} is also the recording; choose another file",
                    p.display()
                )));
            }
            Some(output_file("--output", p, a.force)?)
        }
        None => None,
    };
    let output_json = a
        .output
        .as_ref()
        .and_then(|p| p.extension())
        .is_some_and(|e| e.eq_ignore_ascii_case("json") || e.eq_ignore_ascii_case("jsonl"));
    let tui = !a.json && !a.plain && a.count.is_none() && !a.quiet && std::io::stdout().is_terminal();
    let filter = Filter {
        all_devices: a.all_devices,
        partitions: a.partitions || a.all_devices,
        names: a.devices.clone(),
        prefix: None,
    };
    Ok(Config {
        interval,
        opts: Options { filter, processes: a.processes, sort, since_boot: a.since_boot, max_processes: 20 },
        tui,
        plain: PlainConfig { interval, count, json: a.json, quiet: a.quiet, output, output_json, record },
    })
}

fn fail(e: MonitorError) -> ExitCode {
    match e {
        MonitorError::Usage(m) => {
            eprintln!("error: {}", monitor::render::sanitize(&m));
            ExitCode::from(2)
        }
        MonitorError::Runtime(m) => {
            eprintln!("error: {}", monitor::render::sanitize(&m));
            ExitCode::from(1)
        }
    }
}

pub fn run(a: &TopArgs) -> ExitCode {
    let cfg = match config(a) {
        Ok(c) => c,
        Err(e) => return fail(e),
    };
    let source: Box<dyn SampleSource + Send> = match &a.replay {
        Some(p) => match ReplaySource::open(p) {
            Ok(r) => {
                if r.truncated_tail {
                    eprintln!("warning: the last line of {} is cut short; replaying up to it", p.display());
                }
                Box::new(r)
            }
            Err(e) => return fail(e),
        },
        None => {
            if let Err(e) = LiveSource::probe().and_then(|()| LiveSource::check_names(&a.devices)) {
                return fail(e);
            }
            // The TUI collects processes always, so `p` can show them at once.
            Box::new(LiveSource::new(a.processes || cfg.tui))
        }
    };
    let stop = crate::signals::install();
    if cfg.tui {
        // The TUI's monitor sees every device; the user's filter applies on screen, so `a` can widen it.
        let user_filter = cfg.opts.filter.clone();
        let opts = Options {
            filter: Filter { all_devices: true, partitions: true, names: Vec::new(), prefix: None },
            processes: true,
            ..cfg.opts
        };
        let tcfg = monitor::tui::TuiConfig {
            interval: cfg.interval,
            record: cfg.plain.record.clone(),
            filter: user_filter,
            show_procs: a.processes,
        };
        return match monitor::tui::run(Monitor::new(opts), source, tcfg, stop) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => fail(e),
        };
    }
    let mut mon = Monitor::new(cfg.opts);
    let mut src = source;
    let mut out = std::io::stdout().lock();
    match run::run_plain(&mut mon, src.as_mut(), &cfg.plain, &mut out, &stop) {
        Ok(Outcome::Done) => ExitCode::SUCCESS,
        Ok(Outcome::Interrupted) => ExitCode::from(130),
        Err(e) => fail(e),
    }
}
