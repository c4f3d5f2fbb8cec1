//! The `diskmeter` binary: parse arguments, hand typed configuration to the engine,
//! print results. Exit codes: 0 success, 1 runtime failure, 2 bad input (nothing
//! written), 130 interrupted (partial results printed).

mod args;
mod cmd_cache;
mod cmd_health;
mod cmd_report;
mod cmd_surface;
mod cmd_top;
mod progress;
mod signals;
mod term;

use app::session::{self, SessionOptions};
use args::{Cli, Command, CompareArgs, MarkArgs, OutputArgs, RunArgs, SlaArgs, DEFAULT_TARGET};
use engine::backend::NullFault;
use engine::EngineError;
use spec::SpecError;
use stats::ResultDoc;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use term::sanitize;

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

/// The stop flag raised by Ctrl-C and every other terminating signal (see [`signals`]).
fn install_ctrlc() -> Arc<AtomicBool> {
    signals::install()
}

/// Test-only hook: DISKMETER_NULL_FAULT=eio@N fails null-engine I/O after N operations.
/// It affects only the null engine, which touches no device.
fn null_fault() -> Option<NullFault> {
    let v = std::env::var("DISKMETER_NULL_FAULT").ok()?;
    let (kind, n) = v.split_once('@')?;
    let errno = match kind {
        "eio" => libc::EIO,
        "enospc" => libc::ENOSPC,
        "enodev" => libc::ENODEV,
        _ => return None,
    };
    Some(NullFault { after_ops: n.parse().ok()?, errno })
}

fn session_options(ta: &args::TargetArgs, prefill: bool, stop: Arc<AtomicBool>) -> SessionOptions {
    SessionOptions {
        target: ta.options(prefill),
        ctl: engine::runner::RunControl {
            stop,
            register_buffers: !ta.no_register_buffers,
            null_fault: null_fault(),
            pin_workers: !ta.no_pin,
        },
        ceiling_check: !ta.no_ceiling_check,
        default_size: 1 << 30,
    }
}

impl From<files::FileError> for Failure {
    fn from(e: files::FileError) -> Self {
        match e {
            files::FileError::Usage(m) => Failure::Usage(m),
            files::FileError::Runtime(m) => Failure::Runtime(m),
        }
    }
}

/// Where one output goes: stdout (`-`) or a checked file.
enum Dest {
    Stdout,
    File(files::output::OutputFile),
}

impl Dest {
    fn plan(path: &Path, option: &str, force: bool) -> Result<Dest, Failure> {
        if path.as_os_str() == "-" {
            return Ok(Dest::Stdout);
        }
        Ok(Dest::File(files::output::plan(path, option, force)?))
    }

    fn write(&self, text: &str) -> Result<(), Failure> {
        match self {
            Dest::Stdout => print_stdout(text),
            Dest::File(f) => Ok(f.write(text.as_bytes())?),
        }
    }

    fn same_file(&self, other: &Dest) -> bool {
        match (self, other) {
            (Dest::File(a), Dest::File(b)) => a.destination() == b.destination(),
            _ => false,
        }
    }
}

/// The output files of a result command, checked before the command starts: a typo, a
/// directory, a device node or somebody else's file costs nothing and is never touched.
#[derive(Default)]
struct Planned {
    output: Option<(Dest, report::Format)>,
    html: Option<Dest>,
}

impl Planned {
    /// True when an output goes to stdout (the human result then stays off it).
    fn uses_stdout(&self) -> bool {
        matches!(self.output, Some((Dest::Stdout, _))) || matches!(self.html, Some(Dest::Stdout))
    }
}

fn plan_outputs(out: &OutputArgs) -> Result<Planned, Failure> {
    let mut planned = Planned::default();
    if let Some(p) = &out.output {
        let fmt = if p.as_os_str() == "-" {
            report::Format::Json
        } else {
            report::Format::from_path(p).ok_or_else(|| {
                Failure::Usage(format!(
                    "invalid value for --output: cannot tell the format of {}; use a .json, .csv, .md, .txt or \
                     .html file (or - for JSON on stdout)",
                    files::path::shown(p)
                ))
            })?
        };
        planned.output = Some((Dest::plan(p, "--output", out.force)?, fmt));
    }
    if let Some(p) = &out.html {
        planned.html = Some(Dest::plan(p, "--html", out.force)?);
    }
    if let (Some((a, _)), Some(b)) = (&planned.output, &planned.html) {
        if a.same_file(b) || matches!((a, b), (Dest::Stdout, Dest::Stdout)) {
            return Err(Failure::Usage("--output and --html name the same destination; give each its own".into()));
        }
    }
    if out.json && planned.uses_stdout() {
        return Err(Failure::Usage("--json and an output of - both write to stdout; use one of them".into()));
    }
    Ok(planned)
}

fn print_stdout(text: &str) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout.write_all(text.as_bytes()).and_then(|_| stdout.flush()) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            return Err(Failure::Runtime(format!("cannot write to stdout: {e}")));
        }
    }
    Ok(())
}

/// Renders `doc`; a document that cannot be rendered is a runtime failure (exit 1), never a
/// stand-in printed with exit 0.
fn rendered(doc: &ResultDoc, fmt: report::Format) -> Result<String, Failure> {
    report::try_render(doc, fmt).map_err(|e| Failure::Runtime(format!("cannot write the result: {e}")))
}

fn write_outputs(doc: &ResultDoc, out: &OutputArgs, planned: &Planned) -> Result<(), Failure> {
    let text = if out.json {
        Some(rendered(doc, report::Format::Json)?)
    } else if !out.quiet && !planned.uses_stdout() {
        Some(rendered(doc, report::Format::Human)?)
    } else {
        None
    };
    if let Some(t) = text {
        print_stdout(&t)?;
    }
    if out.json || planned.uses_stdout() {
        for w in &doc.warnings {
            eprintln!("warning[{}]: {}", w.code, sanitize(&w.message));
        }
    }
    if let Some((dest, fmt)) = &planned.output {
        dest.write(&rendered(doc, *fmt)?)?;
    }
    if let Some(dest) = &planned.html {
        dest.write(&rendered(doc, report::Format::Html)?)?;
    }
    Ok(())
}

fn exit_for(doc: &ResultDoc) -> ExitCode {
    match &doc.error {
        None => ExitCode::SUCCESS,
        Some(e) if e.kind == "interrupted" => ExitCode::from(130),
        Some(_) => ExitCode::from(1),
    }
}

fn cmd_run(a: &RunArgs, stop: Arc<AtomicBool>) -> Result<ResultDoc, Failure> {
    let defaults = a.job_defaults()?;
    let plan = match &a.jobfile {
        Some(path) => {
            let mut plan = spec::fiojob::read_jobfile(path, &defaults)?;
            // --target on the command line overrides job files' filename.
            if let Some(t) = &a.target {
                for g in &mut plan.groups {
                    for j in &mut g.jobs {
                        j.target = Some(t.clone());
                    }
                }
            }
            plan
        }
        None => {
            spec::validate::validate_job(&defaults)?;
            session::single_job_plan(defaults)
        }
    };
    spec::validate::validate_plan(&plan)?;
    if a.prefill && a.target_args.destroy_data.is_none() {
        return Err(Failure::Usage(
            "--prefill writes the whole test region of the device; it needs --destroy-data DEVICE".into(),
        ));
    }
    let opts = session_options(&a.target_args, a.prefill, stop);
    let mut obs = progress::Progress::new(a.out.quiet);
    let default_target = PathBuf::from(DEFAULT_TARGET);
    Ok(session::run_plan(&plan, &default_target, &opts, &mut obs)?)
}

fn cmd_mark(a: &MarkArgs, stop: Arc<AtomicBool>) -> Result<ResultDoc, Failure> {
    let cfg = a.config()?;
    let opts = session_options(&a.target_args, false, stop);
    let mut obs = progress::Progress::new(a.out.quiet);
    Ok(session::mark(&cfg, &a.target_path(), &opts, &mut obs)?)
}

fn cmd_sla(a: &SlaArgs, stop: Arc<AtomicBool>) -> Result<ResultDoc, Failure> {
    let cpus = engine::runner::allowed_cpus().len() as u32;
    let cfg = a.config(cpus)?;
    let opts = session_options(&a.target_args, false, stop);
    let mut obs = progress::Progress::new(a.out.quiet);
    Ok(app::sla::sla(&cfg, &a.target_path(), &opts, &mut obs)?)
}

/// Read a result document for `compare --results` / `report`, with one clear error line. Only a
/// regular file of at most 256 MiB is read.
fn load_result(path: &Path) -> Result<ResultDoc, Failure> {
    let bytes = files::input::read_capped(path, "the result file", files::input::RESULT_CAP)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Failure::Usage(format!("{} is not a diskmeter result (not UTF-8 text)", files::path::shown(path)))
    })?;
    ResultDoc::from_json(&text).map_err(|e| Failure::Usage(format!("{}: {e}", files::path::shown(path))))
}

fn cmd_compare(a: &CompareArgs, stop: Arc<AtomicBool>) -> Result<ResultDoc, Failure> {
    if !a.results.is_empty() {
        if a.results.len() < 2 {
            return Err(Failure::Usage("--results needs at least two result files (the first is the baseline)".into()));
        }
        let test = a.test_kind()?;
        let labels = a.labels(a.results.len())?;
        let mut docs = Vec::new();
        for (i, p) in a.results.iter().enumerate() {
            let doc = load_result(p)?;
            let stem = p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            let label = labels.get(i).cloned().unwrap_or(stem);
            docs.push((stats::Subject { label, source: p.display().to_string(), device: None }, doc));
        }
        // File stems may collide (a/result.json, b/result.json): fall back to A, B, …
        let mut seen = std::collections::HashSet::new();
        if docs.iter().any(|(s, _)| s.label.is_empty() || !seen.insert(s.label.clone())) {
            for (i, (s, _)) in docs.iter_mut().enumerate() {
                s.label = app::compare::default_label(i);
            }
        }
        for (s, d) in &mut docs {
            s.device = d.target.as_ref().and_then(|t| t.model.clone().or_else(|| t.device.clone()));
        }
        return Ok(app::compare::compare_results(&docs, test, 0.95)?);
    }
    if a.targets.len() < 2 {
        return Err(Failure::Usage(
            "compare needs two or more targets (diskmeter compare A B) or --results A.json B.json".into(),
        ));
    }
    let cfg = a.config()?;
    let opts = session_options(&a.target_args, false, stop);
    let mut obs = progress::Progress::new(a.out.quiet);
    Ok(app::compare::compare_targets(&cfg, &a.targets, &opts, &mut obs)?)
}

/// One error line and the exit code for a failure.
fn fail(f: Failure) -> ExitCode {
    match f {
        Failure::Usage(m) => {
            eprintln!("error: {}", sanitize(&m));
            ExitCode::from(2)
        }
        Failure::Runtime(m) => {
            eprintln!("error: {}", sanitize(&m));
            ExitCode::from(1)
        }
    }
}

/// Prints and writes a finished (or partial) result and picks the exit code. An output that
/// cannot be written is exit 1, never 0.
fn finish(doc: &ResultDoc, out: &OutputArgs, planned: &Planned) -> ExitCode {
    match write_outputs(doc, out, planned) {
        Ok(()) => {
            if let Some(e) = &doc.error {
                eprintln!("{}{}", if e.kind == "interrupted" { "" } else { "error: " }, sanitize(&e.message));
            }
            exit_for(doc)
        }
        Err(Failure::Usage(m)) | Err(Failure::Runtime(m)) => {
            eprintln!("error: {}", sanitize(&m));
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    match &cli.command {
        Command::Report(a) => return cmd_report::run(a),
        Command::Top(a) => return cmd_top::run(a),
        Command::Health(a) => return cmd_health::run(a),
        Command::Surface(a) => return cmd_surface::run(a),
        Command::Cache(a) => return cmd_cache::run(a),
        _ => {}
    }
    let (out, name) = match &cli.command {
        Command::Run(a) => (&a.out, "run"),
        Command::Mark(a) => (&a.out, "mark"),
        Command::Sla(a) => (&a.out, "sla"),
        Command::Compare(a) => (&a.out, "compare"),
        Command::Report(_) | Command::Cache(_) | Command::Top(_) | Command::Health(_) | Command::Surface(_) => {
            return ExitCode::from(2)
        }
    };
    // Output paths are checked before anything runs: a typo or a foreign file costs nothing.
    let planned = match plan_outputs(out) {
        Ok(p) => p,
        Err(f) => return fail(f),
    };
    let stop = install_ctrlc();
    let res = match &cli.command {
        Command::Run(a) => cmd_run(a, stop),
        Command::Mark(a) => cmd_mark(a, stop),
        Command::Sla(a) => cmd_sla(a, stop),
        Command::Compare(a) => cmd_compare(a, stop),
        _ => return ExitCode::from(2),
    };
    match res {
        Ok(mut doc) => {
            signals::name_in(&mut doc);
            finish(&doc, out, &planned)
        }
        Err(Failure::Usage(m)) => fail(Failure::Usage(m)),
        Err(Failure::Runtime(m)) => {
            eprintln!("error: {}", sanitize(&m));
            if out.json {
                let doc = session::error_doc(name, "io", &m);
                let _ = print_stdout(&report::render(&doc, report::Format::Json));
            }
            ExitCode::from(1)
        }
    }
}
