//! `diskmeter top`: the live I/O monitor. Options → a validated [`Config`] (every rule of the
//! command's options is here) → [`run`]: the TUI on a terminal, else plain reports (text or
//! JSON Lines) through the monitor crate.

use crate::error::{Error, Result};
use monitor::devices::Filter;
use monitor::run::PlainConfig;
use monitor::sample::{LiveSource, ReplaySource, SampleSource};
use monitor::{Columns, Monitor, MonitorError, SortKey};
use spec::units::{self, TimeUnit};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// `top`'s text for the terminal: control characters, newlines included, shown as `?`.
pub use monitor::render::sanitize;
pub use monitor::run::Outcome;

/// The report interval, the sort key and the column names when the command line names none, as
/// typed: perfmon's names on Windows, iostat's elsewhere.
pub const INTERVAL: &str = "1s";
pub const SORT: &str = "name";
pub const COLUMNS: &str = Columns::NATIVE.as_str();

/// The options of `diskmeter top`, as given.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub interval: String,
    pub count: Option<String>,
    pub processes: bool,
    pub all_devices: bool,
    pub partitions: bool,
    pub devices: Vec<String>,
    pub sort: String,
    /// The names the figures are shown under: iostat or perfmon.
    pub columns: String,
    pub plain: bool,
    pub since_boot: bool,
    pub record: Option<PathBuf>,
    pub replay: Option<PathBuf>,
    pub json: bool,
    pub output: Option<PathBuf>,
    pub force: bool,
    pub quiet: bool,
    /// stdout is a terminal: without `--plain`, `--json`, `--count` or `--quiet`, the TUI runs.
    pub stdout_is_terminal: bool,
}

/// Validated configuration.
pub struct Config {
    pub interval: Duration,
    pub opts: monitor::Options,
    /// Run the full-screen TUI instead of plain reports.
    pub tui: bool,
    pub plain: PlainConfig,
    /// Replay this recording instead of reading the live system.
    pub replay: Option<PathBuf>,
    /// Show per-process I/O (the TUI collects it always, so a key can show it).
    pub processes: bool,
}

/// What `top` tells its user while it starts.
pub trait TopObserver {
    /// A warning that does not stop the command.
    fn warning(&mut self, _message: &str) {}
}

impl From<MonitorError> for Error {
    fn from(e: MonitorError) -> Self {
        match e {
            MonitorError::Usage(m) => Error::Usage(m),
            MonitorError::Runtime(m) => Error::Runtime(m),
        }
    }
}

fn output_file(option: &str, p: &Path, force: bool) -> Result<files::output::OutputFile> {
    Ok(files::output::plan(p, option, force)?)
}

impl Config {
    pub fn new(a: &Options) -> Result<Config> {
        let interval = units::parse_duration("--interval", &a.interval, TimeUnit::Seconds)?;
        if interval < Duration::from_millis(100) {
            return Err(Error::usage(format!(
                "invalid value for --interval: {:?} is shorter than 100ms, the resolution of the kernel's uptime clock",
                a.interval
            )));
        }
        let count = match &a.count {
            Some(s) => {
                let n = units::parse_count("--count", s)?;
                if n == 0 {
                    return Err(Error::usage("invalid value for --count: must be at least 1"));
                }
                Some(n)
            }
            None => None,
        };
        let sort = SortKey::parse(&a.sort).ok_or_else(|| {
            Error::usage(format!(
                "invalid value for --sort: {:?}; use one of {}",
                a.sort,
                SortKey::ALL.map(|k| k.as_str()).join(", ")
            ))
        })?;
        let columns = Columns::parse(&a.columns).ok_or_else(|| {
            Error::usage(format!(
                "invalid value for --columns: {:?}; use one of {}",
                a.columns,
                Columns::ALL.map(|c| c.as_str()).join(", ")
            ))
        })?;
        if let Some(d) = a.devices.iter().find(|d| d.is_empty() || d.contains('/')) {
            return Err(Error::usage(format!(
                "invalid value for --devices: {d:?}; give kernel names (vda, nvme0n1, dm-0) or mapper names, without /dev/"
            )));
        }
        if a.record.is_some() && a.replay.is_some() {
            return Err(Error::usage("--record and --replay cannot be combined"));
        }
        let record = match &a.record {
            Some(p) => Some(output_file("--record", p, a.force)?),
            None => None,
        };
        let output = match &a.output {
            Some(p) => {
                if a.record.as_ref() == Some(p) || a.replay.as_ref() == Some(p) {
                    return Err(Error::usage(format!(
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
        let tui = !a.json && !a.plain && a.count.is_none() && !a.quiet && a.stdout_is_terminal;
        let filter = Filter {
            all_devices: a.all_devices,
            partitions: a.partitions || a.all_devices,
            names: a.devices.clone(),
            prefix: None,
        };
        Ok(Config {
            interval,
            opts: monitor::Options {
                filter,
                processes: a.processes,
                sort,
                since_boot: a.since_boot,
                max_processes: 20,
            },
            tui,
            plain: PlainConfig { interval, count, json: a.json, quiet: a.quiet, output, output_json, record, columns },
            replay: a.replay.clone(),
            processes: a.processes,
        })
    }
}

/// The samples: a recording, or the live system (checked: /proc/diskstats readable, the
/// `--devices` names exist).
fn source(cfg: &Config, obs: &mut dyn TopObserver) -> Result<Box<dyn SampleSource + Send>> {
    Ok(match &cfg.replay {
        Some(p) => {
            let r = ReplaySource::open(p)?;
            if r.truncated_tail {
                obs.warning(&format!("the last line of {} is cut short; replaying up to it", p.display()));
            }
            Box::new(r)
        }
        None => {
            LiveSource::probe().and_then(|()| LiveSource::check_names(&cfg.opts.filter.names))?;
            // The TUI collects processes always, so `p` can show them at once.
            Box::new(LiveSource::new(cfg.processes || cfg.tui))
        }
    })
}

/// Runs until `--count` reports, the end of a replay, or `stop` (Ctrl-C): the TUI when
/// `cfg.tui`, else plain reports on `stdout`.
pub fn run(cfg: Config, stop: Arc<AtomicBool>, obs: &mut dyn TopObserver, stdout: &mut dyn Write) -> Result<Outcome> {
    let mut src = source(&cfg, obs)?;
    if cfg.tui {
        // The TUI's monitor sees every device; the user's filter applies on screen, so `a` can widen it.
        let user_filter = cfg.opts.filter.clone();
        let opts = monitor::Options {
            filter: Filter { all_devices: true, partitions: true, names: Vec::new(), prefix: None },
            processes: true,
            ..cfg.opts
        };
        let tcfg = monitor::tui::TuiConfig {
            interval: cfg.interval,
            record: cfg.plain.record.clone(),
            filter: user_filter,
            show_procs: cfg.processes,
            columns: cfg.plain.columns,
        };
        monitor::tui::run(Monitor::new(opts), src, tcfg, stop)?;
        return Ok(Outcome::Done);
    }
    let mut mon = Monitor::new(cfg.opts);
    Ok(monitor::run::run_plain(&mut mon, src.as_mut(), &cfg.plain, stdout, &stop)?)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::test_support::usage_message;

    fn options() -> Options {
        Options { interval: "1s".into(), sort: "name".into(), columns: COLUMNS.into(), ..Options::default() }
    }

    fn usage(f: impl FnOnce(&mut Options)) -> String {
        let mut o = options();
        f(&mut o);
        usage_message(Config::new(&o))
    }

    #[test]
    fn bad_options() {
        assert_eq!(
            usage(|o| o.interval = "50ms".into()),
            "invalid value for --interval: \"50ms\" is shorter than 100ms, the resolution of the kernel's uptime clock"
        );
        assert!(usage(|o| o.interval = "x".into()).starts_with("invalid value for --interval:"));
        assert_eq!(usage(|o| o.count = Some("0".into())), "invalid value for --count: must be at least 1");
        assert!(usage(|o| o.sort = "size".into()).starts_with("invalid value for --sort: \"size\"; use one of name, "));
        assert_eq!(
            usage(|o| o.columns = "windows".into()),
            "invalid value for --columns: \"windows\"; use one of iostat, perfmon"
        );
        assert_eq!(
            usage(|o| o.devices = vec!["/dev/sda".into()]),
            "invalid value for --devices: \"/dev/sda\"; give kernel names (vda, nvme0n1, dm-0) or mapper names, \
             without /dev/"
        );
        assert_eq!(
            usage(|o| {
                o.record = Some("r.jsonl".into());
                o.replay = Some("p.jsonl".into());
            }),
            "--record and --replay cannot be combined"
        );
        assert_eq!(
            usage(|o| {
                o.replay = Some("p.jsonl".into());
                o.output = Some("p.jsonl".into());
            }),
            "--output p.jsonl is also the recording; choose another file"
        );
    }

    #[test]
    fn the_tui_needs_a_terminal_and_no_plain_option() {
        let mut o = options();
        o.stdout_is_terminal = true;
        assert!(Config::new(&o).unwrap().tui);
        let plain: [fn(&mut Options); 4] =
            [|o| o.json = true, |o| o.plain = true, |o| o.quiet = true, |o| o.count = Some("1".into())];
        for f in plain {
            let mut o = options();
            o.stdout_is_terminal = true;
            f(&mut o);
            assert!(!Config::new(&o).unwrap().tui);
        }
        assert!(!Config::new(&options()).unwrap().tui);
    }

    #[test]
    fn columns_reach_the_renderers_perfmon_by_default_on_windows() {
        let want = if cfg!(windows) { Columns::Perfmon } else { Columns::Iostat };
        assert_eq!(Config::new(&options()).unwrap().plain.columns, want);
        for c in Columns::ALL {
            let mut o = options();
            o.columns = c.as_str().into();
            assert_eq!(Config::new(&o).unwrap().plain.columns, c);
        }
    }

    #[test]
    fn all_devices_include_partitions() {
        let mut o = options();
        o.all_devices = true;
        assert!(Config::new(&o).unwrap().opts.filter.partitions);
    }
}
