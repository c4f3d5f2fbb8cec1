//! The `diskmeter` binary: parse arguments, hand the options to `app`, show progress, exit.
//! Exit codes (`app::Error::exit_code`): 0 success, 1 runtime failure, 2 bad input (nothing
//! written), 130 interrupted (partial results printed).

mod args;
mod cmd_health;
mod cmd_surface;
mod cmd_top;
mod progress;
mod signals;

use app::output::{Dest, OutputOptions, Outputs};
use app::session::{self, Observer};
use args::{CacheAction, CacheArgs, Cli, Command, OutputArgs, ReportArgs};
use engine::EngineError;
use spec::SpecError;
use stats::ResultDoc;
use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use app::output::sanitize;

/// The stop flag raised by Ctrl-C and every other terminating signal (see [`signals`]).
fn install_ctrlc() -> Arc<AtomicBool> {
    signals::install()
}

/// The one exit path: the error's line on stderr (an interruption's message as it is, anything
/// else as `error: …`) and its exit code.
fn exit(r: Result<(), app::Error>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            match &e {
                app::Error::Interrupted(m) => eprintln!("{}", sanitize(m)),
                e => eprintln!("error: {}", sanitize(e.message())),
            }
            ExitCode::from(e.exit_code())
        }
    }
}

/// A measuring command (run, mark, sla, compare): its outputs checked, then `command`
/// (validate the options, run) with the stop flag and the progress display, then its result
/// written. A result the run cut short ends as its error says.
fn measure(
    name: &str,
    out: &OutputArgs,
    command: impl FnOnce(Arc<AtomicBool>, &mut dyn Observer) -> Result<ResultDoc, app::Error>,
) -> Result<(), app::Error> {
    // Output paths are checked before anything runs: a typo or a foreign file costs nothing.
    let outputs = Outputs::plan(&OutputOptions::from(out))?;
    let stop = install_ctrlc();
    let mut doc = command(stop, &mut progress::Progress::new(out.quiet)).inspect_err(|e| outputs.failed(name, e))?;
    signals::name_in(&mut doc);
    // An output that cannot be written is exit 1, never 0.
    outputs.write(&doc).map_err(|e| app::Error::runtime(e.message()))?;
    app::output::status(&doc)
}

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    let done = match &cli.command {
        Command::Report(a) => return cmd_report(a).map_or_else(fail, |()| ExitCode::SUCCESS),
        Command::Top(a) => return cmd_top::run(a),
        Command::Health(a) => return cmd_health::run(a),
        Command::Surface(a) => return cmd_surface::run(a),
        Command::Cache(a) => return run_cache(a),
        Command::Run(a) => {
            measure("run", &a.out, |stop, obs| app::run::run(&app::run::Config::new(&(&**a).into())?, stop, obs))
        }
        Command::Mark(a) => {
            measure("mark", &a.out, |stop, obs| app::mark::run(&app::mark::Config::new(&(&**a).into())?, stop, obs))
        }
        Command::Sla(a) => {
            measure("sla", &a.out, |stop, obs| app::sla::run(&app::sla::Config::new(&(&**a).into())?, stop, obs))
        }
        Command::Compare(a) => measure("compare", &a.out, |stop, obs| {
            app::compare::run(&app::compare::Config::new(&(&**a).into())?, stop, obs)
        }),
    };
    exit(done)
}

// ---------------------------------------------------------------------------------------
// Bridge for the commands that do not go through `app` yet (cache, surface, report): their
// error type and helpers, each a thin wrapper over `app::output` and the exit path above.

/// Why the command failed, mapped to an exit code.
enum Failure {
    /// Bad input: one line, exit 2.
    Usage(String),
    /// Runtime fault before any result: exit 1.
    Runtime(String),
}

impl From<SpecError> for Failure {
    fn from(e: SpecError) -> Self {
        Failure::Usage(e.to_string())
    }
}

impl From<EngineError> for Failure {
    fn from(e: EngineError) -> Self {
        if e.is_usage() {
            Failure::Usage(e.to_string())
        } else {
            Failure::Runtime(e.to_string())
        }
    }
}

impl From<files::FileError> for Failure {
    fn from(e: files::FileError) -> Self {
        app::Error::from(e).into()
    }
}

impl From<app::Error> for Failure {
    fn from(e: app::Error) -> Self {
        match e {
            app::Error::Usage(m) => Failure::Usage(m),
            app::Error::Runtime(m) | app::Error::Interrupted(m) => Failure::Runtime(m),
        }
    }
}

impl From<Failure> for app::Error {
    fn from(f: Failure) -> Self {
        match f {
            Failure::Usage(m) => app::Error::Usage(m),
            Failure::Runtime(m) => app::Error::Runtime(m),
        }
    }
}

type Planned = Outputs;

fn plan_outputs(out: &OutputArgs) -> Result<Planned, Failure> {
    Ok(Outputs::plan(&out.into())?)
}

fn write_outputs(doc: &ResultDoc, _out: &OutputArgs, planned: &Planned) -> Result<(), Failure> {
    Ok(planned.write(doc)?)
}

fn print_stdout(text: &str) -> Result<(), Failure> {
    Ok(app::output::print_stdout(text)?)
}

fn rendered(doc: &ResultDoc, fmt: report::Format) -> Result<String, Failure> {
    Ok(app::output::rendered(doc, fmt)?)
}

fn load_result(path: &Path) -> Result<ResultDoc, Failure> {
    Ok(app::output::read_result(path)?)
}

/// The exit code a finished result means (its message is printed by the caller).
fn exit_for(doc: &ResultDoc) -> ExitCode {
    ExitCode::from(app::output::status(doc).err().map_or(0, |e| e.exit_code()))
}

/// One error line and the exit code for a failure.
fn fail(f: Failure) -> ExitCode {
    exit(Err(f.into()))
}

/// Prints and writes a finished (or partial) result and picks the exit code. An output that
/// cannot be written is exit 1, never 0.
fn finish(doc: &ResultDoc, _out: &OutputArgs, planned: &Planned) -> ExitCode {
    exit(planned.write(doc).map_err(|e| app::Error::runtime(e.message())).and_then(|()| app::output::status(doc)))
}

fn cmd_report(a: &ReportArgs) -> Result<(), Failure> {
    let out = match &a.output {
        Some(p) => p.clone(),
        None => a.result.with_extension("html"),
    };
    let fmt = if out.as_os_str() == "-" {
        report::Format::Human
    } else if out.extension().is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm")) {
        report::Format::Html
    } else {
        report::Format::from_path(&out).ok_or_else(|| {
            Failure::Usage(format!(
                "invalid value for --output: cannot tell the format of {}; use .html, .md, .csv, .txt or .json \
                 (or - for text on stdout)",
                files::path::shown(&out)
            ))
        })?
    };
    let dest = Dest::plan(&out, "--output", a.force)?;
    if let (Dest::File(f), Ok(input)) = (&dest, a.result.canonicalize()) {
        if f.destination().canonicalize().ok().as_ref() == Some(&input) {
            return Err(Failure::Usage(format!(
                "refusing to overwrite the input {}; choose another -o",
                files::path::shown(&out)
            )));
        }
    }
    let doc = load_result(&a.result)?;
    dest.write(&rendered(&doc, fmt)?)?;
    if let Dest::File(f) = &dest {
        eprintln!("wrote {}", files::path::shown(f.path()));
    }
    Ok(())
}

impl From<cachesim::session::SessionError> for Failure {
    fn from(e: cachesim::session::SessionError) -> Self {
        match e {
            cachesim::session::SessionError::Usage(m) => Failure::Usage(m),
            cachesim::session::SessionError::Runtime(m) => Failure::Runtime(m),
        }
    }
}

/// A `cache` result document; a result that covers only part of the trace is marked partial
/// with the reason as its error (exit 130 when interrupted, 1 when the trace was cut short).
fn cache_doc(outcome: cachesim::session::Outcome) -> ResultDoc {
    use cachesim::session::Cut;
    let mut doc = ResultDoc::new("cache", session::now_rfc3339(), session::host_info());
    doc.cache = Some(outcome.result);
    match outcome.cut {
        None => {}
        Some(Cut::Interrupted) => {
            doc.partial = true;
            doc.warn(stats::codes::PARTIAL, "interrupted");
            doc.error = Some(stats::ErrorInfo::new("interrupted", "interrupted"));
            signals::name_in(&mut doc);
        }
        Some(Cut::Trace(m)) => {
            doc.partial = true;
            doc.warn(stats::codes::PARTIAL, m.clone());
            doc.error = Some(stats::ErrorInfo::new("trace", m));
        }
    }
    doc
}

/// A `cache` command's result: its document, its output options and checked output files
/// (`None`: the command prints a short summary only), and whether that summary is JSON.
type CacheOutcome<'a> = (ResultDoc, Option<(&'a OutputArgs, Planned)>, bool);

/// The `cache` commands.
fn cmd_cache<'a>(a: &'a CacheArgs, stop: &AtomicBool) -> Result<CacheOutcome<'a>, Failure> {
    match &a.action {
        CacheAction::Simulate(s) => {
            let planned = plan_outputs(&s.out)?;
            let cfg = s.config()?;
            let input = s.input.input()?;
            Ok((cache_doc(cachesim::session::simulate(&input, &cfg, stop)?), Some((&s.out, planned)), false))
        }
        CacheAction::Mrc(m) => {
            let planned = plan_outputs(&m.out)?;
            let cfg = m.config()?;
            let input = m.input.input()?;
            Ok((cache_doc(cachesim::session::mrc(&input, &cfg, stop)?), Some((&m.out, planned)), false))
        }
        CacheAction::Warmup(w) => {
            let planned = plan_outputs(&w.out)?;
            let (c, p, i, sz, d) = w.values()?;
            let outcome = cachesim::session::Outcome { result: cachesim::session::warmup(c, p, i, sz, d), cut: None };
            Ok((cache_doc(outcome), Some((&w.out, planned)), false))
        }
        CacheAction::Synth(y) => {
            let spec = y.spec()?;
            let out = trace_output(&y.output, y.force)?;
            Ok((cache_doc(cachesim::session::synth(&spec, &out, stop)?), None, y.json))
        }
        CacheAction::Convert(c) => {
            let input = c.input.input()?;
            let out = trace_output(&c.output, c.force)?;
            Ok((cache_doc(cachesim::session::convert(&input, &out, stop)?), None, c.json))
        }
    }
}

/// A trace output (`synth`/`convert -o`): a checked regular file (a trace needs a seekable file,
/// so `-` is not offered).
fn trace_output(p: &Path, force: bool) -> Result<files::output::OutputFile, Failure> {
    if p.as_os_str() == "-" {
        return Err(Failure::Usage(
            "invalid value for --output: a trace is written to a file (its header is completed at the end); \
             name a file"
                .into(),
        ));
    }
    Ok(files::output::plan(p, "--output", force)?)
}

fn trace_summary_line(doc: &ResultDoc) -> Option<String> {
    let t = doc.cache.as_ref().and_then(|c| c.trace.as_ref())?;
    let verb = if doc.error.is_some() { "read" } else { "wrote" };
    Some(format!(
        "{verb} {} ({} requests: {} reads, {} writes{}; {:.1} s of trace time{})",
        sanitize(&t.path),
        t.requests,
        t.reads,
        t.writes,
        if t.other > 0 { format!(", {} other", t.other) } else { String::new() },
        t.span_s,
        if t.skipped_lines > 0 { format!("; {} malformed lines skipped", t.skipped_lines) } else { String::new() }
    ))
}

fn run_cache(a: &CacheArgs) -> ExitCode {
    let stop = signals::install();
    match cmd_cache(a, &stop) {
        Ok((doc, Some((out, planned)), _)) => finish(&doc, out, &planned),
        Ok((doc, None, json)) => {
            if json {
                if let Err(f) = rendered(&doc, report::Format::Json).and_then(|t| print_stdout(&t)) {
                    return fail(Failure::Runtime(match f {
                        Failure::Usage(m) | Failure::Runtime(m) => m,
                    }));
                }
            } else if let Some(line) = trace_summary_line(&doc) {
                let _ = print_stdout(&format!("{line}\n"));
            }
            if let Some(e) = &doc.error {
                eprintln!("error: {}", sanitize(&e.message));
            }
            exit_for(&doc)
        }
        Err(f) => fail(f),
    }
}
