//! The command line: the top-level parser, the list of commands, one module per command (its
//! clap options, their copy into `app`'s options, and its run), and the option groups several
//! commands share ([`common`]). Checking and converting the values is `app`'s (`Config::new`
//! of each command); nothing outside these modules sees clap. A command module uses only
//! [`common`] and the crate's progress, signals and output modules, never another command or
//! this list.

pub mod cache;
pub mod capture;
pub mod common;
pub mod compare;
pub mod completions;
pub mod doctor;
pub mod health;
pub mod history;
pub mod man;
pub mod mark;
pub mod merge;
pub mod profile;
pub mod replay;
pub mod report;
pub mod run;
pub mod serve;
pub mod sla;
pub mod steady;
pub mod surface;
pub mod top;

use clap::{Parser, Subcommand};

/// `--version`: the version and commit, then the target, its linkage and the optional features.
macro_rules! long_version {
    ($linkage:literal) => {
        concat!(
            env!("DISKMETER_VERSION_LINE"),
            "\ntarget ",
            env!("DISKMETER_TARGET"),
            $linkage,
            "; optional features: ",
            env!("DISKMETER_FEATURES")
        )
    };
}
#[cfg(target_feature = "crt-static")]
const LONG_VERSION: &str = long_version!(", statically linked");
#[cfg(not(target_feature = "crt-static"))]
const LONG_VERSION: &str = long_version!(", dynamically linked");

/// Honest Linux storage benchmarks.
///
/// diskmeter measures disks with direct I/O, incompressible data, test areas written before
/// they are read, and latency percentiles next to every IOPS figure. Sizes use binary units
/// (4k = 4096 bytes); MB/s is decimal (10^6 B/s), MiB/s binary.
#[derive(Debug, Parser)]
#[command(
    name = "diskmeter",
    version = env!("DISKMETER_VERSION_LINE"),
    long_version = LONG_VERSION,
    about,
    long_about = None,
    max_term_width = 100
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

impl Cli {
    /// Parse the command line (exits with clap's message and status 2 on a syntax error).
    ///
    /// An option value that looks like a negative number (`--size -1`, `--offset -4k`,
    /// `--runtime -3s`) is taken as the value rather than as an unknown flag, so diskmeter's own
    /// check can say what is wrong with it.
    pub fn parse_args() -> Cli {
        use clap::CommandFactory;
        let mut takes_value = std::collections::HashSet::new();
        value_options(&Cli::command(), &mut takes_value);
        Cli::parse_from(join_negative_values(std::env::args_os(), &takes_value))
    }
}

/// Long names of every option (in every subcommand) that takes a value.
fn value_options(c: &clap::Command, out: &mut std::collections::HashSet<String>) {
    for a in c.get_arguments() {
        if let Some(long) = a.get_long().filter(|_| a.get_action().takes_values()) {
            out.insert(long.to_string());
        }
    }
    for sub in c.get_subcommands() {
        value_options(sub, out);
    }
}

/// `--name -3s` → `--name=-3s` for options that take a value; everything after `--` untouched.
fn join_negative_values(
    args: impl IntoIterator<Item = std::ffi::OsString>,
    takes_value: &std::collections::HashSet<String>,
) -> Vec<std::ffi::OsString> {
    let looks_negative =
        |s: &str| s.len() > 1 && s.starts_with('-') && s[1..].starts_with(|c: char| c.is_ascii_digit() || c == '.');
    let mut out = Vec::new();
    let mut it = args.into_iter().peekable();
    while let Some(a) = it.next() {
        if a == "--" {
            out.push(a);
            out.extend(it);
            break;
        }
        let name = a.to_str().and_then(|s| s.strip_prefix("--")).filter(|n| takes_value.contains(*n));
        if let Some(name) = name {
            if let Some(v) = it.peek().and_then(|v| v.to_str()).filter(|v| looks_negative(v)) {
                out.push(format!("--{name}={v}").into());
                it.next();
                continue;
            }
        }
        out.push(a);
    }
    out
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// The CrystalDiskMark card: sequential and random read/write, done right.
    Mark(Box<mark::MarkArgs>),
    /// Run any workload (command-line options or an fio job file).
    Run(Box<run::RunArgs>),
    /// The most IOPS the target gives while latency stays under a bound, with the curve and its knee.
    Sla(Box<sla::SlaArgs>),
    /// Which target (or setting) is faster: interleaved passes, confidence intervals, verdicts.
    Compare(Box<compare::CompareArgs>),
    /// Render a saved result (JSON) as a self-contained HTML report, or as text, CSV or Markdown.
    Report(Box<report::ReportArgs>),
    /// The results kept in the history database: list, show, trend, diff, import, export, forget.
    History(Box<history::HistoryArgs>),
    /// The history in a browser: runs, reports, device trends, compare, a live mark, import.
    ///
    /// Listens on 127.0.0.1 (a free port unless --port), prints the URL and opens nothing.
    Serve(Box<serve::ServeArgs>),
    /// Simulate an SSD cache in front of HDDs on an I/O trace: hit ratio, warm-up, wear, IOPS, size.
    Cache(Box<cache::CacheArgs>),
    /// Live I/O monitor: iostat -x and perfmon figures per device, saturation, pressure, processes.
    Top(Box<top::TopArgs>),
    /// Disk health: SMART through smartctl, wear, error logs, self-tests, endurance forecast.
    Health(Box<health::HealthArgs>),
    /// Why is this disk slow? Ranked causes with evidence, cost and fix, from links to cgroups.
    Doctor(Box<doctor::DoctorArgs>),
    /// Surface scan: transfer rate and latency across the device, slow and bad blocks.
    Surface(Box<surface::SurfaceArgs>),
    /// Merge the results of several hosts (run or mark with --histograms) into one: summed IOPS,
    /// percentiles of the union of the histograms, per-host table, stonewall, timeline.
    Merge(Box<merge::MergeArgs>),
    /// SNIA PTS steady state: purge, precondition, rounds of the IOPS matrix until the figures
    /// settle; the steady-state window, PTS tables and charts.
    Steady(Box<steady::SteadyArgs>),
    /// Play a block trace against a file or device: at its own times, as fast as possible or at
    /// its own depth, pass after pass, with how late each request was issued.
    Replay(Box<replay::ReplayArgs>),
    /// Record what a block device is doing, request by request with its latency, into a binary
    /// trace (kernel block tracepoints; root).
    Capture(Box<capture::CaptureArgs>),
    /// Summarise a trace: mix, block sizes, sequential share, hot set, arrivals, depth; emit an
    /// fio job that reproduces it.
    Profile(Box<profile::ProfileArgs>),
    /// Shell completion script on stdout: bash, zsh, fish, powershell, elvish (for packagers).
    #[command(hide = true)]
    Completions(completions::CompletionsArgs),
    /// Manual pages: diskmeter(1) on stdout, one command's page, or all of them into a directory.
    #[command(hide = true)]
    Man(man::ManArgs),
}

impl Command {
    /// The subcommand's name, as typed.
    pub fn name(&self) -> &'static str {
        match self {
            Command::Mark(_) => "mark",
            Command::Run(_) => "run",
            Command::Sla(_) => "sla",
            Command::Compare(_) => "compare",
            Command::Report(_) => "report",
            Command::History(_) => "history",
            Command::Serve(_) => "serve",
            Command::Cache(_) => "cache",
            Command::Top(_) => "top",
            Command::Health(_) => "health",
            Command::Doctor(_) => "doctor",
            Command::Surface(_) => "surface",
            Command::Merge(_) => "merge",
            Command::Replay(_) => "replay",
            Command::Steady(_) => "steady",
            Command::Capture(_) => "capture",
            Command::Profile(_) => "profile",
            Command::Completions(_) => "completions",
            Command::Man(_) => "man",
        }
    }
}

#[cfg(test)]
mod negative_value_tests {
    use super::*;

    fn join(args: &[&str]) -> Vec<String> {
        let takes: std::collections::HashSet<String> = ["size", "runtime"].map(String::from).into();
        join_negative_values(args.iter().map(std::ffi::OsString::from), &takes)
            .into_iter()
            .map(|a| a.into_string().expect("test arguments are UTF-8"))
            .collect()
    }

    #[test]
    fn negative_looking_values_stick_to_their_option() {
        assert_eq!(
            join(&["dm", "run", "--size", "-1", "--runtime", "-3s"]),
            ["dm", "run", "--size=-1", "--runtime=-3s"]
        );
        assert_eq!(join(&["dm", "--size", "-.5g"]), ["dm", "--size=-.5g"]);
        // Not a number, a flag option, or after `--`: untouched.
        assert_eq!(join(&["dm", "--size", "--runtime", "1s"]), ["dm", "--size", "--runtime", "1s"]);
        assert_eq!(join(&["dm", "--json", "-1"]), ["dm", "--json", "-1"]);
        assert_eq!(join(&["dm", "--", "--size", "-1"]), ["dm", "--", "--size", "-1"]);
        assert_eq!(join(&["dm", "--size", "-"]), ["dm", "--size", "-"]);
    }

    #[test]
    fn every_value_option_is_found_in_every_subcommand() {
        use clap::CommandFactory;
        let mut takes = std::collections::HashSet::new();
        value_options(&Cli::command(), &mut takes);
        for name in ["size", "qd", "offset", "runtime", "ramp", "threads", "latency", "interval"] {
            assert!(takes.contains(name), "--{name} takes a value");
        }
        assert!(!takes.contains("json") && !takes.contains("keep"), "flags take no value");
    }
}
