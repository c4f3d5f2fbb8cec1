//! `diskmeter health`: SMART and endurance. Options → a validated [`Config`] (every rule of the
//! command's options is here) → [`run`] through the health crate, with smartctl behind a
//! timeout and the stop flag.

use crate::error::{Error, Result};
use health::endurance::RatedSpec;
use health::report::{HealthConfig, SourceCache, WaitPlan};
use health::smartctl::{self, SelfTestKind, SmartSource, Smartctl};
use health::topology::SysPaths;
use health::{render, state, units, HealthError};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub use health::render::clean;
pub use health::report::HealthDoc;
pub use health::selftest::WaitObserver;

/// Warranty years of `--dwpd` when `--warranty-years` is not given.
pub const WARRANTY_YEARS: f64 = 5.0;
/// How long one smartctl call may take when `--smartctl-timeout` is not given.
pub const SMARTCTL_TIMEOUT: Duration = smartctl::DEFAULT_TIMEOUT;

/// The options of `diskmeter health`, as given.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub device: Option<String>,
    pub target: Option<String>,
    pub json: bool,
    pub output: Option<PathBuf>,
    pub force: bool,
    pub quiet: bool,
    pub tbw: Option<String>,
    pub dwpd: Option<String>,
    pub warranty_years: Option<String>,
    pub state: Option<PathBuf>,
    pub no_state: bool,
    pub self_test: Option<String>,
    pub wait: bool,
    pub smartctl: Option<PathBuf>,
    pub smartctl_timeout: Option<String>,
    pub device_type: Option<String>,
    pub raw: bool,
    pub poll: Option<String>,
}

/// The format of the `-o` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    Json,
    Text,
}

/// Everything checked before anything runs.
pub struct Config {
    pub health: HealthConfig,
    pub self_test: Option<SelfTestKind>,
    /// Follow the self-test until it ends.
    pub wait: bool,
    pub poll: Duration,
    pub output: Option<(files::output::OutputFile, OutFormat)>,
    /// The smartctl to run; `None`: looked up.
    pub smartctl: Option<PathBuf>,
    pub smartctl_timeout: Duration,
    pub json: bool,
    pub quiet: bool,
}

impl From<HealthError> for Error {
    fn from(e: HealthError) -> Self {
        match e {
            HealthError::Usage(m) => Error::Usage(m),
            HealthError::Smartctl(m) | HealthError::Runtime(m) => Error::Runtime(m),
        }
    }
}

fn rated(o: &Options) -> Result<Option<RatedSpec>> {
    Ok(match (&o.tbw, &o.dwpd) {
        (Some(_), Some(_)) => return Err(Error::usage("--tbw and --dwpd both give the rating; use one of them")),
        (Some(t), None) => {
            if o.warranty_years.is_some() {
                return Err(Error::usage("--warranty-years goes with --dwpd (--tbw is already the total)"));
            }
            Some(RatedSpec::Tbw(units::parse_tbw("--tbw", t)?, t.trim().to_string()))
        }
        (None, Some(d)) => {
            let dwpd = units::parse_positive("--dwpd", d, "drive writes per day", 100.0)?;
            let years = match &o.warranty_years {
                Some(y) => units::parse_positive("--warranty-years", y, "years of warranty", 50.0)?,
                None => WARRANTY_YEARS,
            };
            Some(RatedSpec::Dwpd { dwpd, years })
        }
        (None, None) => {
            if o.warranty_years.is_some() {
                return Err(Error::usage("--warranty-years needs --dwpd"));
            }
            None
        }
    })
}

fn duration(option: &str, s: &str) -> Result<Duration> {
    Ok(spec::units::parse_duration(option, s, spec::units::TimeUnit::Seconds)?)
}

fn output(o: &Options) -> Result<Option<(files::output::OutputFile, OutFormat)>> {
    let Some(p) = &o.output else { return Ok(None) };
    let ext = p.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
    let fmt = match ext.as_deref() {
        Some("json") => OutFormat::Json,
        Some("txt") => OutFormat::Text,
        _ => {
            return Err(Error::usage(format!(
                "invalid value for --output: cannot tell the format of {}; use a .json or .txt file",
                p.display()
            )))
        }
    };
    // Every problem with the -o file is bad input here (exit 2), as the command has always had it.
    let out = files::output::plan(p, "--output", o.force).map_err(|e| Error::usage(e.to_string()))?;
    Ok(Some((out, fmt)))
}

impl Config {
    /// Checks the options. The state file's default place follows `XDG_STATE_HOME`/`HOME`, and
    /// `DISKMETER_SMARTCTL` names the smartctl when `--smartctl` does not.
    pub fn new(o: &Options) -> Result<Config> {
        let device = match (&o.device, &o.target) {
            (Some(_), Some(_)) => return Err(Error::usage("give the device once: either DEVICE or --target DEVICE")),
            (d, t) => d.clone().or_else(|| t.clone()),
        };
        let rated = rated(o)?;
        let self_test = o.self_test.as_deref().map(|k| SelfTestKind::parse("--self-test", k)).transpose()?;
        if o.wait && self_test.is_none() {
            return Err(Error::usage("--wait follows a self-test: add --self-test short|long|conveyance"));
        }
        if let Some(t) = &o.device_type {
            if t.trim().is_empty() || t.starts_with('-') || t.chars().any(char::is_whitespace) {
                return Err(Error::usage(format!(
                    "invalid value for --device-type: \"{t}\" is not a smartctl device type; use one such as sat, nvme or megaraid,0"
                )));
            }
        }
        if o.state.is_some() && o.no_state {
            return Err(Error::usage("--state and --no-state contradict each other; use one"));
        }
        let poll = match &o.poll {
            Some(p) => duration("--poll", p)?.max(Duration::from_millis(10)),
            None => Duration::from_secs(10),
        };
        let smartctl_timeout = match &o.smartctl_timeout {
            Some(t) => smartctl::check_timeout("--smartctl-timeout", duration("--smartctl-timeout", t)?)?,
            None => SMARTCTL_TIMEOUT,
        };
        let output = output(o)?;
        let state_path = if o.no_state {
            None
        } else if let Some(p) = &o.state {
            Some(p.clone())
        } else {
            state::default_path(std::env::var("XDG_STATE_HOME").ok().as_deref(), std::env::var("HOME").ok().as_deref())
        };
        let smartctl = o.smartctl.clone().or_else(|| std::env::var_os("DISKMETER_SMARTCTL").map(PathBuf::from));
        let now_unix =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        Ok(Config {
            health: HealthConfig {
                device,
                device_type: o.device_type.clone(),
                rated,
                state_path,
                raw: o.raw,
                now_unix,
                time: crate::session::now_rfc3339(),
                tool_version: env!("CARGO_PKG_VERSION").to_string(),
            },
            self_test,
            wait: o.wait,
            poll,
            output,
            smartctl,
            smartctl_timeout,
            json: o.json,
            quiet: o.quiet,
        })
    }

    /// The report for stdout: JSON with `--json`, text unless `--quiet`.
    pub fn stdout_text(&self, doc: &HealthDoc) -> Option<String> {
        if self.json {
            Some(render::json(doc) + "\n")
        } else if !self.quiet {
            Some(render::human(doc))
        } else {
            None
        }
    }

    /// The disks whose SMART could not be read, as `PATH: REASON`, for stderr when the text
    /// report (which shows them) is not on stdout.
    pub fn error_lines(&self, doc: &HealthDoc) -> Vec<String> {
        if !(self.json || self.quiet) {
            return Vec::new();
        }
        doc.disks
            .iter()
            .filter(|d| d.verdict == health::verdict::Verdict::Error)
            .filter_map(|d| d.reasons.first().map(|r| format!("{}: {}", d.path, r.message)))
            .collect()
    }

    /// Writes the `-o` file, if any.
    pub fn write_output(&self, doc: &HealthDoc) -> Result<()> {
        if let Some((path, fmt)) = &self.output {
            let body = match fmt {
                OutFormat::Json => render::json(doc) + "\n",
                OutFormat::Text => render::human(doc),
            };
            path.write(body.as_bytes()).map_err(|e| Error::runtime(e.to_string()))?;
        }
        Ok(())
    }
}

/// Runs the report (or the self-test, then the report). `stop` (Ctrl-C, SIGTERM, SIGHUP) kills a
/// running smartctl, which is in a process group of its own and does not get the terminal's
/// signal; with `--wait` it stops waiting, and the report comes back marked interrupted.
/// Interrupted while smartctl ran: [`Error::Interrupted`], no report.
pub fn run(cfg: &Config, stop: &Arc<AtomicBool>, obs: &mut dyn WaitObserver) -> Result<HealthDoc> {
    let sys = SysPaths::default();
    let explicit = cfg.smartctl.clone();
    let (timeout, runner_stop) = (cfg.smartctl_timeout, stop.clone());
    let mut cache = SourceCache::new(move || {
        Smartctl::locate(explicit.as_deref())
            .map(|s| Box::new(s.with_timeout(timeout).with_stop(runner_stop.clone())) as Box<dyn SmartSource>)
    });
    let res = match cfg.self_test {
        None => health::report::run(&cfg.health, &mut cache, &sys),
        Some(kind) => {
            let wait = cfg.wait.then(|| WaitPlan { poll: cfg.poll, stop, observer: obs });
            health::report::run_self_test(&cfg.health, kind, wait, &mut cache, &sys)
        }
    };
    // A Ctrl-C that only ended a --wait was cleared and gives the report, marked interrupted.
    if stop.load(Ordering::SeqCst) && !matches!(&res, Ok(doc) if doc.interrupted) {
        return Err(Error::Interrupted("interrupted: no report was produced (a running smartctl was killed)".into()));
    }
    Ok(res?)
}

/// `--json` promises JSON on stdout, also when the run failed: the error as a report with no
/// disks. `None` for bad input, which writes nothing.
pub fn error_json(e: &Error) -> Option<String> {
    let kind = match e {
        Error::Usage(_) => return None,
        Error::Runtime(_) => "runtime",
        Error::Interrupted(_) => "interrupted",
    };
    let doc = serde_json::json!({
        "schema": health::report::SCHEMA,
        "tool": {"name": "diskmeter", "version": env!("CARGO_PKG_VERSION")},
        "disks": [],
        "error": {"kind": kind, "message": e.message()},
    });
    Some(doc.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::test_support::{changed, usage_message};

    fn usage(o: Options) -> String {
        usage_message(Config::new(&o))
    }

    fn with(f: impl FnOnce(&mut Options)) -> Options {
        changed(Options { no_state: true, ..Options::default() }, f)
    }

    #[test]
    fn option_conflicts() {
        let cases: Vec<(Options, &str)> = vec![
            (
                with(|o| {
                    o.device = Some("/dev/sda".into());
                    o.target = Some("/dev/sdb".into());
                }),
                "give the device once: either DEVICE or --target DEVICE",
            ),
            (
                with(|o| {
                    o.tbw = Some("600".into());
                    o.dwpd = Some("1".into());
                }),
                "--tbw and --dwpd both give the rating; use one of them",
            ),
            (
                with(|o| {
                    o.tbw = Some("600".into());
                    o.warranty_years = Some("3".into());
                }),
                "--warranty-years goes with --dwpd (--tbw is already the total)",
            ),
            (with(|o| o.warranty_years = Some("3".into())), "--warranty-years needs --dwpd"),
            (with(|o| o.wait = true), "--wait follows a self-test: add --self-test short|long|conveyance"),
            (
                with(|o| o.device_type = Some("sat x".into())),
                "invalid value for --device-type: \"sat x\" is not a smartctl device type; use one such as sat, \
                 nvme or megaraid,0",
            ),
            (with(|o| o.state = Some("s.json".into())), "--state and --no-state contradict each other; use one"),
            (
                with(|o| o.output = Some("h.pdf".into())),
                "invalid value for --output: cannot tell the format of h.pdf; use a .json or .txt file",
            ),
            (
                with(|o| o.self_test = Some("quick".into())),
                "invalid value for --self-test: \"quick\" is not a self-test; use short, long, conveyance or abort",
            ),
            (
                with(|o| o.smartctl_timeout = Some("0".into())),
                "invalid value for --smartctl-timeout: a timeout of 0 gives smartctl no time to answer; use a \
                 duration such as 60s (the default) or 2m",
            ),
        ];
        for (o, want) in cases {
            assert_eq!(usage(o), want);
        }
        assert!(usage(with(|o| o.poll = Some("x".into()))).starts_with("invalid value for --poll:"));
        assert!(usage(with(|o| o.dwpd = Some("-1".into()))).starts_with("invalid value for --dwpd:"));
    }

    #[test]
    fn defaults() {
        let cfg = Config::new(&with(|o| o.device = Some("/dev/sda".into()))).unwrap();
        assert_eq!(cfg.health.device.as_deref(), Some("/dev/sda"));
        assert_eq!(cfg.health.state_path, None);
        assert_eq!(cfg.poll, Duration::from_secs(10));
        assert_eq!(cfg.smartctl_timeout, smartctl::DEFAULT_TIMEOUT);
        let cfg = Config::new(&with(|o| o.poll = Some("1ms".into()))).unwrap();
        assert_eq!(cfg.poll, Duration::from_millis(10), "polls are at least 10 ms apart");
    }

    #[test]
    fn error_reports() {
        assert_eq!(error_json(&Error::usage("x")), None);
        let j: serde_json::Value = serde_json::from_str(&error_json(&Error::runtime("no smartctl")).unwrap()).unwrap();
        assert_eq!(j["error"]["kind"], "runtime");
        assert_eq!(j["error"]["message"], "no smartctl");
        assert_eq!(j["disks"], serde_json::json!([]));
    }
}
