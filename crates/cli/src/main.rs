//! The `diskmeter` binary: parse arguments, hand the options to `app`, show progress, exit.
//! Exit codes (`app::Error::exit_code`): 0 success, 1 runtime failure, 2 bad input (nothing
//! written), 130 interrupted (partial results printed).
//!
//! Every command ends the same way: [`output`] writes its result and gives `Ok(code)` when it
//! finished, or the command fails with an `app::Error`, and [`exit`] turns that into the one
//! error line and the exit code.

mod cmd;
mod output;
mod progress;
mod signals;

use app::cluster::Cluster;
use app::output::sanitize;
use clap::CommandFactory;
use cmd::{Cli, Command};
use output::Outcome;
use std::process::ExitCode;

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
    exit(match &cli.command {
        Command::Run(a) => cmd::run::run(a, &mut cluster),
        Command::Mark(a) => cmd::mark::run(a, &mut cluster),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Steady(a) => cmd::steady::run(a),
        Command::Replay(a) => cmd::replay::run(a),
        Command::Sla(a) => cmd::sla::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Surface(a) => cmd::surface::run(a),
        Command::Cache(a) => cmd::cache::run(a),
        Command::Capture(a) => cmd::capture::run(a),
        Command::Profile(a) => cmd::profile::run(a),
        Command::Report(a) => cmd::report::run(a),
        Command::History(a) => cmd::history::run(a),
        Command::Serve(a) => cmd::serve::run(a),
        Command::Top(a) => cmd::top::run(a),
        Command::Health(a) => cmd::health::run(a),
        Command::Doctor(a) => cmd::doctor::run(a),
        Command::Completions(a) => cmd::completions::run(a, Cli::command()),
        Command::Man(a) => cmd::man::run(a, Cli::command()),
    })
}
