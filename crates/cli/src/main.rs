//! The `diskmeter` binary: parse arguments, hand typed configuration to the engine,
//! print results. Exit codes: 0 success, 1 runtime failure, 2 bad input (nothing
//! written), 130 interrupted (partial results printed).

mod args;
mod cmd_health;
mod cmd_surface;
mod cmd_top;
mod progress;

use args::{
    CacheAction, CacheArgs, Cli, Command, CompareArgs, MarkArgs, OutputArgs, ReportArgs, RunArgs, SlaArgs,
    DEFAULT_TARGET,
};
use engine::backend::NullFault;
use engine::session::{self, SessionOptions};
use engine::EngineError;
use spec::SpecError;
use stats::ResultDoc;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

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

/// Replace control characters so file names cannot drive the terminal.
fn sanitize(s: &str) -> String {
    s.chars().map(|c| if c.is_control() && c != '\n' { '?' } else { c }).collect()
}

fn install_ctrlc() -> Arc<AtomicBool> {
    let stop = Arc::new(AtomicBool::new(false));
    let s = stop.clone();
    // Repeated Ctrl-C only re-raises the flag: leaving from the handler would skip the
    // removal of test files. Workers notice the flag within one I/O batch.
    let _ = ctrlc::set_handler(move || s.store(true, Ordering::SeqCst));
    stop
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

fn write_outputs(doc: &ResultDoc, out: &OutputArgs) -> Result<(), Failure> {
    let mut stdout = std::io::stdout().lock();
    let text = if out.json {
        Some(report::render(doc, report::Format::Json))
    } else if !out.quiet {
        Some(report::render(doc, report::Format::Human))
    } else {
        None
    };
    if let Some(t) = text {
        if let Err(e) = stdout.write_all(t.as_bytes()).and_then(|_| stdout.flush()) {
            if e.kind() != std::io::ErrorKind::BrokenPipe {
                return Err(Failure::Runtime(format!("cannot write to stdout: {e}")));
            }
        }
    }
    if out.json {
        for w in &doc.warnings {
            eprintln!("warning[{}]: {}", w.code, sanitize(&w.message));
        }
    }
    if let Some(path) = &out.output {
        let fmt = report::Format::from_path(path).unwrap_or(report::Format::Json);
        std::fs::write(path, report::render(doc, fmt))
            .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    if let Some(path) = &out.html {
        std::fs::write(path, report::render(doc, report::Format::Html))
            .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(())
}

fn check_dir(option: &str, p: &Path) -> Result<(), Failure> {
    let dir = p.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(Failure::Usage(format!("invalid value for {option}: directory {} does not exist", dir.display())));
    }
    Ok(())
}

/// Output files are checked before anything runs, so a typo costs nothing.
fn check_output_path(out: &OutputArgs) -> Result<(), Failure> {
    if let Some(p) = &out.output {
        if report::Format::from_path(p).is_none() {
            return Err(Failure::Usage(format!(
                "invalid value for --output: cannot tell the format of {}; use a .json, .csv, .md, .txt or .html file",
                p.display()
            )));
        }
        check_dir("--output", p)?;
    }
    if let Some(p) = &out.html {
        check_dir("--html", p)?;
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
    check_output_path(&a.out)?;
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
    check_output_path(&a.out)?;
    let cfg = a.config()?;
    let opts = session_options(&a.target_args, false, stop);
    let mut obs = progress::Progress::new(a.out.quiet);
    Ok(session::mark(&cfg, &a.target_path(), &opts, &mut obs)?)
}

fn cmd_sla(a: &SlaArgs, stop: Arc<AtomicBool>) -> Result<ResultDoc, Failure> {
    check_output_path(&a.out)?;
    let cpus = engine::runner::allowed_cpus().len() as u32;
    let cfg = a.config(cpus)?;
    let opts = session_options(&a.target_args, false, stop);
    let mut obs = progress::Progress::new(a.out.quiet);
    Ok(engine::sla::sla(&cfg, &a.target_path(), &opts, &mut obs)?)
}

/// Read a result document for `compare --results` / `report`, with one clear error line.
fn load_result(path: &Path) -> Result<ResultDoc, Failure> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::Usage(format!("cannot read result file {}: {e}", path.display())))?;
    ResultDoc::from_json(&text).map_err(|e| Failure::Usage(format!("{}: {e}", path.display())))
}

fn cmd_compare(a: &CompareArgs, stop: Arc<AtomicBool>) -> Result<ResultDoc, Failure> {
    check_output_path(&a.out)?;
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
                s.label = engine::compare::default_label(i);
            }
        }
        for (s, d) in &mut docs {
            s.device = d.target.as_ref().and_then(|t| t.model.clone().or_else(|| t.device.clone()));
        }
        return Ok(engine::compare::compare_results(&docs, test, 0.95)?);
    }
    if a.targets.len() < 2 {
        return Err(Failure::Usage(
            "compare needs two or more targets (diskmeter compare A B) or --results A.json B.json".into(),
        ));
    }
    let cfg = a.config()?;
    let opts = session_options(&a.target_args, false, stop);
    let mut obs = progress::Progress::new(a.out.quiet);
    Ok(engine::compare::compare_targets(&cfg, &a.targets, &opts, &mut obs)?)
}

fn cmd_report(a: &ReportArgs) -> Result<(), Failure> {
    let out = match &a.output {
        Some(p) => p.clone(),
        None => a.result.with_extension("html"),
    };
    let fmt = if out.extension().is_some_and(|e| e.eq_ignore_ascii_case("html") || e.eq_ignore_ascii_case("htm")) {
        report::Format::Html
    } else {
        report::Format::from_path(&out).ok_or_else(|| {
            Failure::Usage(format!(
                "invalid value for --output: cannot tell the format of {}; use .html, .md, .csv, .txt or .json",
                out.display()
            ))
        })?
    };
    check_dir("--output", &out)?;
    let doc = load_result(&a.result)?;
    if out == a.result {
        return Err(Failure::Usage(format!("refusing to overwrite the input {}; choose another -o", out.display())));
    }
    std::fs::write(&out, report::render(&doc, fmt))
        .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", out.display())))?;
    eprintln!("wrote {}", out.display());
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

fn cache_doc(result: stats::CacheResult) -> ResultDoc {
    let mut doc = ResultDoc::new("cache", session::now_rfc3339(), session::host_info());
    doc.cache = Some(result);
    doc
}

/// Output files (trace files of synth/convert) are checked like -o: an existing directory.
fn check_trace_output(p: &Path) -> Result<(), Failure> {
    check_dir("--output", p)?;
    if p.is_dir() {
        return Err(Failure::Usage(format!("invalid value for --output: {} is a directory", p.display())));
    }
    Ok(())
}

/// The `cache` commands; `None` output args mean the command prints a short summary only.
fn cmd_cache(a: &CacheArgs) -> Result<(ResultDoc, Option<&OutputArgs>, bool), Failure> {
    match &a.action {
        CacheAction::Simulate(s) => {
            check_output_path(&s.out)?;
            let cfg = s.config()?;
            let input = s.input.input()?;
            Ok((cache_doc(cachesim::session::simulate(&input, &cfg)?), Some(&s.out), false))
        }
        CacheAction::Mrc(m) => {
            check_output_path(&m.out)?;
            let cfg = m.config()?;
            let input = m.input.input()?;
            Ok((cache_doc(cachesim::session::mrc(&input, &cfg)?), Some(&m.out), false))
        }
        CacheAction::Warmup(w) => {
            check_output_path(&w.out)?;
            let (c, p, i, sz, d) = w.values()?;
            Ok((cache_doc(cachesim::session::warmup(c, p, i, sz, d)), Some(&w.out), false))
        }
        CacheAction::Synth(y) => {
            let spec = y.spec()?;
            check_trace_output(&y.output)?;
            Ok((cache_doc(cachesim::session::synth(&spec, &y.output)?), None, y.json))
        }
        CacheAction::Convert(c) => {
            let input = c.input.input()?;
            check_trace_output(&c.output)?;
            Ok((cache_doc(cachesim::session::convert(&input, &c.output)?), None, c.json))
        }
    }
}

fn run_cache(a: &CacheArgs) -> ExitCode {
    match cmd_cache(a) {
        Ok((doc, Some(out), _)) => match write_outputs(&doc, out) {
            Ok(()) => ExitCode::SUCCESS,
            Err(Failure::Usage(m)) | Err(Failure::Runtime(m)) => {
                eprintln!("error: {}", sanitize(&m));
                ExitCode::from(1)
            }
        },
        Ok((doc, None, json)) => {
            if json {
                println!("{}", report::render(&doc, report::Format::Json).trim_end());
            } else if let Some(t) = doc.cache.as_ref().and_then(|c| c.trace.as_ref()) {
                println!(
                    "wrote {} ({} requests: {} reads, {} writes; {:.1} s of trace time{})",
                    sanitize(&t.path),
                    t.requests,
                    t.reads,
                    t.writes,
                    t.span_s,
                    if t.skipped_lines > 0 {
                        format!("; {} malformed lines skipped", t.skipped_lines)
                    } else {
                        String::new()
                    }
                );
            }
            ExitCode::SUCCESS
        }
        Err(Failure::Usage(m)) => {
            eprintln!("error: {}", sanitize(&m));
            ExitCode::from(2)
        }
        Err(Failure::Runtime(m)) => {
            eprintln!("error: {}", sanitize(&m));
            ExitCode::from(1)
        }
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse_args();
    if let Command::Report(a) = &cli.command {
        return match cmd_report(a) {
            Ok(()) => ExitCode::SUCCESS,
            Err(Failure::Usage(m)) => {
                eprintln!("error: {}", sanitize(&m));
                ExitCode::from(2)
            }
            Err(Failure::Runtime(m)) => {
                eprintln!("error: {}", sanitize(&m));
                ExitCode::from(1)
            }
        };
    }
    match &cli.command {
        Command::Top(a) => return cmd_top::run(a),
        Command::Health(a) => return cmd_health::run(a),
        Command::Surface(a) => return cmd_surface::run(a),
        _ => {}
    }
    if let Command::Cache(a) = &cli.command {
        return run_cache(a);
    }
    let stop = install_ctrlc();
    let (res, out, name) = match &cli.command {
        Command::Run(a) => (cmd_run(a, stop), &a.out, "run"),
        Command::Mark(a) => (cmd_mark(a, stop), &a.out, "mark"),
        Command::Sla(a) => (cmd_sla(a, stop), &a.out, "sla"),
        Command::Compare(a) => (cmd_compare(a, stop), &a.out, "compare"),
        Command::Report(_) | Command::Cache(_) | Command::Top(_) | Command::Health(_) | Command::Surface(_) => {
            return ExitCode::from(2)
        }
    };
    match res {
        Ok(doc) => match write_outputs(&doc, out) {
            Ok(()) => {
                if let Some(e) = &doc.error {
                    if e.kind != "interrupted" {
                        eprintln!("error: {}", sanitize(&e.message));
                    }
                }
                exit_for(&doc)
            }
            Err(Failure::Usage(m)) | Err(Failure::Runtime(m)) => {
                eprintln!("error: {}", sanitize(&m));
                ExitCode::from(1)
            }
        },
        Err(Failure::Usage(m)) => {
            eprintln!("error: {}", sanitize(&m));
            ExitCode::from(2)
        }
        Err(Failure::Runtime(m)) => {
            eprintln!("error: {}", sanitize(&m));
            if out.json {
                let doc = session::error_doc(name, "io", &m);
                println!("{}", report::render(&doc, report::Format::Json).trim_end());
            }
            ExitCode::from(1)
        }
    }
}
