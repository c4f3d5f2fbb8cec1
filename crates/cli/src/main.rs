//! The `diskmeter` binary: parse arguments, hand the options to `app`, show progress, exit.
//! Exit codes (`app::Error::exit_code`): 0 success, 1 runtime failure, 2 bad input (nothing
//! written), 130 interrupted (partial results printed).
//!
//! Every command ends the same way: it returns `Ok(code)` when it finished (0, or the code its
//! result means, its message already shown) or an `app::Error`, and [`exit`] turns that into
//! the one error line and the exit code.

mod args;
mod cmd_cache;
mod cmd_capture;
mod cmd_health;
mod cmd_profile;
mod cmd_replay;
mod cmd_report;
mod cmd_steady;
mod cmd_surface;
mod cmd_top;
mod progress;
mod signals;

use app::cluster::Cluster;
use app::output::{sanitize, OutputOptions, Outputs};
use app::session::Observer;
use args::{Cli, Command, OutputArgs};
use stats::ResultDoc;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How a command ended: `Ok(code)` when it ran to its end (its messages shown), else the error.
pub(crate) type Outcome = Result<u8, app::Error>;

/// The one exit path: the error's line on stderr (`error: …`) and its exit code.
fn exit(r: Outcome) -> ExitCode {
    match r {
        Ok(code) => ExitCode::from(code),
        Err(e) => {
            eprintln!("error: {}", sanitize(e.message()));
            ExitCode::from(e.exit_code())
        }
    }
}

/// How a written result ends the command: an interruption's message as it is (the partial
/// result is out, so it is a notice, not an error) and 130; the fault that cut the result short
/// as an error; else 0.
pub(crate) fn finished(doc: &ResultDoc) -> Outcome {
    match app::output::status(doc) {
        Err(app::Error::Interrupted(m)) => {
            eprintln!("{}", sanitize(&m));
            Ok(130)
        }
        other => other.map(|()| 0),
    }
}

/// A command that writes a result document (run, mark, sla, compare, cache simulate/mrc/warmup):
/// its outputs checked, then `command` (validate the options, run) with the stop flag and the
/// progress display, then its result written. A result the run cut short ends as its error says.
pub(crate) fn measure(
    name: &str,
    out: &OutputArgs,
    command: impl FnOnce(Arc<AtomicBool>, &mut dyn Observer) -> Result<ResultDoc, app::Error>,
) -> Outcome {
    measure_on(&mut Cluster::single(), name, out, false, command)
}

/// [`measure`] on every rank of `cluster` (one process alone: exactly `measure`). Rank 0
/// shows the summed progress and writes the merged result; the others stay quiet unless
/// they fail, and write only outputs named per rank (`{rank}` in the path).
fn measure_on(
    cluster: &mut Cluster,
    name: &str,
    out: &OutputArgs,
    shared: bool,
    command: impl FnOnce(Arc<AtomicBool>, &mut dyn Observer) -> Result<ResultDoc, app::Error>,
) -> Outcome {
    // Output paths are checked before anything runs: a typo or a foreign file costs nothing.
    let planned = Outputs::plan_ranked(&OutputOptions::from(out), cluster.names(), cluster.is_multi());
    let stop = signals::install();
    let mut progress = progress::Progress::new(out.quiet || !cluster.is_root());
    if !cluster.is_multi() {
        let (outputs, _) = planned?;
        let mut doc = command(stop, &mut progress).inspect_err(|e| outputs.failed(name, e))?;
        signals::name_in(&mut doc);
        // An output that cannot be written is exit 1, never 0.
        outputs.write(&doc).map_err(|e| app::Error::runtime(e.message()))?;
        return finished(&doc);
    }
    // Under mpirun every rank takes part in the exchange, even one whose outputs are wrong.
    let plan_error = planned.as_ref().err().cloned();
    let got = app::cluster::measure(cluster, name, shared, stop, &mut progress, |stop, obs| match plan_error {
        Some(e) => Err(e),
        None => command(stop, obs),
    })?;
    let (merged_out, own_out) = planned?;
    let mut own = got.own;
    signals::name_in(&mut own);
    own_out.write(&own).map_err(|e| app::Error::runtime(e.message()))?;
    match got.merged {
        Some(mut merged) => {
            signals::name_in(&mut merged);
            if merged.error.as_ref().is_some_and(|e| e.kind == "usage") {
                return app::cluster::root_status(&merged).map(|()| 0);
            }
            merged_out.write(&merged).map_err(|e| app::Error::runtime(e.message()))?;
            match app::cluster::root_status(&merged) {
                Err(e @ app::Error::Usage(_)) => Err(e),
                _ => finished(&merged),
            }
        }
        None => app::cluster::member_status(&own, got.error),
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    // Under mpirun (an MPI build): this process is one rank; alone: the only one.
    let mut cluster = match Cluster::join() {
        Ok(c) => c,
        Err(e) => return exit(Err(e)),
    };
    if let Err(e) = app::cluster::check_supported(&cluster, cli.command.name()) {
        return exit(Err(e));
    }
    let names = cluster.names().clone();
    exit(match &cli.command {
        Command::Run(a) => measure_on(&mut cluster, "run", &a.out, a.hosts.shared, |stop, obs| {
            let o = app::run::Options { rank: names, ..(&**a).into() };
            app::run::run(&app::run::Config::new(&o)?, stop, obs)
        }),
        Command::Mark(a) => measure_on(&mut cluster, "mark", &a.out, a.hosts.shared, |stop, obs| {
            let o = app::mark::Options { rank: names, ..(&**a).into() };
            app::mark::run(&app::mark::Config::new(&o)?, stop, obs)
        }),
        Command::Merge(a) => {
            measure("merge", &a.out, |_, _| app::merge::run(&app::merge::Config::new(&(&**a).into())?))
        }
        Command::Steady(a) => measure("steady", &a.out, |stop, obs| {
            app::steady::run(&app::steady::Config::new(&(&**a).into())?, stop, obs)
        }),
        Command::Replay(a) => measure("replay", &a.out, |stop, obs| {
            app::replay::run(&app::replay::Config::new(&(&**a).into())?, stop, obs)
        }),
        Command::Sla(a) => {
            measure("sla", &a.out, |stop, obs| app::sla::run(&app::sla::Config::new(&(&**a).into())?, stop, obs))
        }
        Command::Compare(a) => measure("compare", &a.out, |stop, obs| {
            app::compare::run(&app::compare::Config::new(&(&**a).into())?, stop, obs)
        }),
        Command::Surface(a) => cmd_surface::run(a),
        Command::Cache(a) => cmd_cache::run(a),
        Command::Capture(a) => cmd_capture::run(a),
        Command::Profile(a) => cmd_profile::run(a),
        Command::Report(a) => cmd_report::run(a),
        Command::Top(a) => cmd_top::run(a),
        Command::Health(a) => cmd_health::run(a),
    })
}
