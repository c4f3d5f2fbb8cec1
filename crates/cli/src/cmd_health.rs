//! `diskmeter health`: SMART and endurance (thin: options → health crate).

use clap::Args;
use health::endurance::RatedSpec;
use health::report::{self, HealthConfig, HealthDoc, SourceCache, WaitPlan};
use health::selftest::WaitObserver;
use health::smartctl::{self, SelfTestKind, SmartSource, Smartctl};
use health::topology::SysPaths;
use health::{render, state, units, HealthError};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::Ordering;
use std::time::Duration;

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
    /// Warranty years for --dwpd [default: 5].
    #[arg(long = "warranty-years", value_name = "YEARS")]
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
    /// The smartctl to run [default: $DISKMETER_SMARTCTL, else smartctl in PATH, /usr/sbin, /sbin].
    #[arg(long, value_name = "PATH")]
    pub smartctl: Option<PathBuf>,
    /// How long one smartctl call may take before it and what it started are killed
    /// (a number alone is seconds) [default: 60s].
    #[arg(long = "smartctl-timeout", value_name = "DURATION")]
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
}

enum OutFormat {
    Json,
    Text,
}

/// Everything checked before anything runs.
struct Plan {
    cfg: HealthConfig,
    self_test: Option<SelfTestKind>,
    poll: Duration,
    output: Option<(files::output::OutputFile, OutFormat)>,
    smartctl: Option<PathBuf>,
    smartctl_timeout: Duration,
}

fn usage(msg: impl Into<String>) -> HealthError {
    HealthError::Usage(msg.into())
}

fn plan(a: &HealthArgs) -> Result<Plan, HealthError> {
    let device = match (&a.device, &a.target) {
        (Some(_), Some(_)) => return Err(usage("give the device once: either DEVICE or --target DEVICE")),
        (d, t) => d.clone().or_else(|| t.clone()),
    };
    let rated = match (&a.tbw, &a.dwpd) {
        (Some(_), Some(_)) => return Err(usage("--tbw and --dwpd both give the rating; use one of them")),
        (Some(t), None) => {
            if a.warranty_years.is_some() {
                return Err(usage("--warranty-years goes with --dwpd (--tbw is already the total)"));
            }
            Some(RatedSpec::Tbw(units::parse_tbw("--tbw", t)?, t.trim().to_string()))
        }
        (None, Some(d)) => {
            let dwpd = units::parse_positive("--dwpd", d, "drive writes per day", 100.0)?;
            let years = match &a.warranty_years {
                Some(y) => units::parse_positive("--warranty-years", y, "years of warranty", 50.0)?,
                None => 5.0,
            };
            Some(RatedSpec::Dwpd { dwpd, years })
        }
        (None, None) => {
            if a.warranty_years.is_some() {
                return Err(usage("--warranty-years needs --dwpd"));
            }
            None
        }
    };
    let self_test = a.self_test.as_deref().map(|k| SelfTestKind::parse("--self-test", k)).transpose()?;
    if a.wait && self_test.is_none() {
        return Err(usage("--wait follows a self-test: add --self-test short|long|conveyance"));
    }
    if let Some(t) = &a.device_type {
        if t.trim().is_empty() || t.starts_with('-') || t.chars().any(char::is_whitespace) {
            return Err(usage(format!(
                "invalid value for --device-type: \"{t}\" is not a smartctl device type; use one such as sat, nvme or megaraid,0"
            )));
        }
    }
    if a.state.is_some() && a.no_state {
        return Err(usage("--state and --no-state contradict each other; use one"));
    }
    let poll = match &a.poll {
        Some(p) => spec::units::parse_duration("--poll", p, spec::units::TimeUnit::Seconds)
            .map_err(|e| usage(e.to_string()))?
            .max(Duration::from_millis(10)),
        None => Duration::from_secs(10),
    };
    let smartctl_timeout = match &a.smartctl_timeout {
        Some(t) => smartctl::check_timeout(
            "--smartctl-timeout",
            spec::units::parse_duration("--smartctl-timeout", t, spec::units::TimeUnit::Seconds)
                .map_err(|e| usage(e.to_string()))?,
        )?,
        None => smartctl::DEFAULT_TIMEOUT,
    };
    let output = match &a.output {
        None => None,
        Some(p) => {
            let ext = p.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
            let fmt = match ext.as_deref() {
                Some("json") => OutFormat::Json,
                Some("txt") => OutFormat::Text,
                _ => {
                    return Err(usage(format!(
                        "invalid value for --output: cannot tell the format of {}; use a .json or .txt file",
                        p.display()
                    )))
                }
            };
            let out = files::output::plan(p, "--output", a.force).map_err(|e| usage(e.to_string()))?;
            Some((out, fmt))
        }
    };
    let state_path = if a.no_state {
        None
    } else if let Some(p) = &a.state {
        Some(p.clone())
    } else {
        state::default_path(std::env::var("XDG_STATE_HOME").ok().as_deref(), std::env::var("HOME").ok().as_deref())
    };
    let smartctl = a.smartctl.clone().or_else(|| std::env::var_os("DISKMETER_SMARTCTL").map(PathBuf::from));
    let now_unix = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    Ok(Plan {
        cfg: HealthConfig {
            device,
            device_type: a.device_type.clone(),
            rated,
            state_path,
            raw: a.raw,
            now_unix,
            time: app::session::now_rfc3339(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
        },
        self_test,
        poll,
        output,
        smartctl,
        smartctl_timeout,
    })
}

/// `--wait` progress: a bar on a terminal, a line per change otherwise.
struct WaitProgress {
    bar: Option<ProgressBar>,
    lines: bool,
    last: Option<u64>,
}

impl WaitProgress {
    fn new(quiet: bool) -> Self {
        let tty = std::io::stderr().is_terminal();
        let bar = (!quiet && tty).then(|| {
            let b = ProgressBar::with_draw_target(Some(100), ProgressDrawTarget::stderr());
            if let Ok(style) = ProgressStyle::with_template("self-test [{bar:30}] {pos:>3}% {msg}") {
                b.set_style(style.progress_chars("=> "));
            }
            b
        });
        Self { bar, lines: !quiet && !tty, last: None }
    }
}

impl WaitObserver for WaitProgress {
    fn progress(&mut self, done: Option<u64>, status: &str) {
        if let Some(b) = &self.bar {
            b.set_position(done.unwrap_or(0));
            b.set_message(render::clean(status));
        } else if self.lines && done != self.last {
            eprintln!("self-test: {}", render::clean(status));
        }
        self.last = done;
    }

    fn done(&mut self) {
        if let Some(b) = self.bar.take() {
            b.finish_and_clear();
        }
    }
}

fn write_out(doc: &HealthDoc, a: &HealthArgs, p: &Plan) -> Result<(), String> {
    let text = if a.json {
        Some(render::json(doc) + "\n")
    } else if !a.quiet {
        Some(render::human(doc))
    } else {
        None
    };
    if let Some(t) = text {
        let mut out = std::io::stdout().lock();
        if let Err(e) = out.write_all(t.as_bytes()).and_then(|_| out.flush()) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(format!("cannot write to stdout: {e}"));
            }
        }
    }
    for w in &doc.warnings {
        eprintln!("warning: {}", crate::sanitize(w));
    }
    if a.json || a.quiet {
        for d in doc.disks.iter().filter(|d| d.verdict == health::verdict::Verdict::Error) {
            if let Some(r) = d.reasons.first() {
                eprintln!("error: {}: {}", crate::sanitize(&d.path), crate::sanitize(&r.message));
            }
        }
    }
    if let Some((path, fmt)) = &p.output {
        let body = match fmt {
            OutFormat::Json => render::json(doc) + "\n",
            OutFormat::Text => render::human(doc),
        };
        path.write(body.as_bytes()).map_err(|e| e.to_string())?;
    }
    Ok(())
}

pub fn run(a: &HealthArgs) -> ExitCode {
    let p = match plan(a) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}", crate::sanitize(&e.to_string()));
            return ExitCode::from(2);
        }
    };
    let sys = SysPaths::default();
    // Ctrl-C (or SIGTERM, SIGHUP) kills a running smartctl, which is in a process group of
    // its own and does not get the terminal's signal; --wait stops waiting on it.
    let stop = crate::install_ctrlc();
    let explicit = p.smartctl.clone();
    let (timeout, runner_stop) = (p.smartctl_timeout, stop.clone());
    let mut cache = SourceCache::new(move || {
        Smartctl::locate(explicit.as_deref())
            .map(|s| Box::new(s.with_timeout(timeout).with_stop(runner_stop.clone())) as Box<dyn SmartSource>)
    });
    let res = match p.self_test {
        None => report::run(&p.cfg, &mut cache, &sys),
        Some(kind) => {
            if a.wait {
                let mut obs = WaitProgress::new(a.quiet);
                let plan = WaitPlan { poll: p.poll, stop: &stop, observer: &mut obs };
                report::run_self_test(&p.cfg, kind, Some(plan), &mut cache, &sys)
            } else {
                report::run_self_test(&p.cfg, kind, None, &mut cache, &sys)
            }
        }
    };
    // Interrupted while smartctl ran (the runner killed it): no report. A Ctrl-C that only
    // ended a --wait was cleared and gives the report with exit 130 below.
    if stop.load(Ordering::SeqCst) && !matches!(&res, Ok(doc) if doc.interrupted) {
        let msg = "interrupted: no report was produced (a running smartctl was killed)";
        eprintln!("error: {msg}");
        if a.json {
            print_error_json("interrupted", msg);
        }
        return ExitCode::from(130);
    }
    match res {
        Ok(doc) => {
            if let Err(e) = write_out(&doc, a, &p) {
                eprintln!("error: {}", crate::sanitize(&e));
                return ExitCode::from(1);
            }
            if doc.interrupted {
                if let Some(t) = &doc.self_test {
                    eprintln!("{}", crate::sanitize(&t.message));
                }
            }
            ExitCode::from(doc.exit_code())
        }
        Err(e) => {
            eprintln!("error: {}", crate::sanitize(&e.to_string()));
            if e.is_usage() {
                return ExitCode::from(2);
            }
            if a.json {
                print_error_json("runtime", &e.to_string());
            }
            ExitCode::from(1)
        }
    }
}

/// --json promises JSON on stdout, also when the run failed.
fn print_error_json(kind: &str, message: &str) {
    let doc = serde_json::json!({
        "schema": report::SCHEMA,
        "tool": {"name": "diskmeter", "version": env!("CARGO_PKG_VERSION")},
        "disks": [],
        "error": {"kind": kind, "message": message},
    });
    println!("{doc}");
}
