//! Where every command's result goes: the one place that prints results and reports on
//! stdout (human text or JSON), writes `-o FILE` and `--html`, and turns a result into the
//! command's exit. Commands hand their result here and print nothing of it themselves, so
//! stdout, the files and the exit follow one set of rules (`app::output`'s).
//!
//! A command returns `Ok(code)` when it finished (0, or the code its result means, its
//! message already shown) or an `app::Error`; `main` turns that into the one error line and
//! the exit code.

use crate::{progress, signals};
use app::cluster::Cluster;
use app::output::{print_stdout, rendered, sanitize, OutputOptions, Outputs};
use app::session::Observer;
use stats::ResultDoc;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// How a command ended: `Ok(code)` when it ran to its end (its messages shown), else the error.
pub type Outcome = Result<u8, app::Error>;

/// How a written result ends the command: an interruption's message as it is (the partial
/// result is out, so it is a notice, not an error) and 130; the fault that cut the result short
/// as an error; else 0.
pub fn finished(doc: &ResultDoc) -> Outcome {
    match app::output::status(doc) {
        Err(app::Error::Interrupted(m)) => {
            eprintln!("{}", sanitize(&m));
            Ok(130)
        }
        other => other.map(|()| 0),
    }
}

/// A command that writes a result document (mark, run, sla, compare, merge, steady, replay,
/// profile, cache simulate/mrc/warmup): its outputs checked, then `command` (validate the
/// options, run) with the stop flag and the progress display, then its result written. A
/// result the run cut short ends as its error says.
pub fn measure(
    name: &str,
    out: &OutputOptions,
    command: impl FnOnce(Arc<AtomicBool>, &mut dyn Observer) -> Result<ResultDoc, app::Error>,
) -> Outcome {
    measure_on(&mut Cluster::single(), name, out, false, command)
}

/// [`measure`] on every rank of `cluster` (one process alone: exactly `measure`). Rank 0
/// shows the summed progress and writes the merged result; the others stay quiet unless
/// they fail, and write only outputs named per rank (`{rank}` in the path).
pub fn measure_on(
    cluster: &mut Cluster,
    name: &str,
    out: &OutputOptions,
    shared: bool,
    command: impl FnOnce(Arc<AtomicBool>, &mut dyn Observer) -> Result<ResultDoc, app::Error>,
) -> Outcome {
    // Output paths are checked before anything runs: a typo or a foreign file costs nothing.
    let planned = Outputs::plan_ranked(out, cluster.names(), cluster.is_multi());
    let stop = signals::install();
    let mut progress = progress::Progress::new(out.quiet || !cluster.is_root());
    if !cluster.is_multi() {
        let (outputs, _) = planned?;
        let mut doc = command(stop, &mut progress).inspect_err(|e| outputs.failed(name, e))?;
        signals::name_in(&mut doc);
        outputs.record(&mut doc);
        write(&outputs, &doc)?;
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
    write(&own_out, &own)?;
    match got.merged {
        Some(mut merged) => {
            signals::name_in(&mut merged);
            if merged.error.as_ref().is_some_and(|e| e.kind == "usage") {
                return app::cluster::root_status(&merged).map(|()| 0);
            }
            merged_out.record(&mut merged);
            write(&merged_out, &merged)?;
            match app::cluster::root_status(&merged) {
                Err(e @ app::Error::Usage(_)) => Err(e),
                _ => finished(&merged),
            }
        }
        None => app::cluster::member_status(&own, got.error),
    }
}

/// A result document to stdout and the planned files. An output that cannot be written is
/// exit 1, never 0.
fn write(outputs: &Outputs, doc: &ResultDoc) -> Result<(), app::Error> {
    outputs.write(doc).map_err(|e| app::Error::runtime(e.message()))
}

/// `surface`'s scan: written like every result document, then the line that says how the scan
/// ended (on stderr; its summary only when the human result is not on stdout) and its exit.
pub fn scan(outputs: &Outputs, out: &OutputOptions, mut scanned: app::surface::Outcome) -> Outcome {
    signals::name_in(&mut scanned.doc);
    outputs.record(&mut scanned.doc);
    write(outputs, &scanned.doc)?;
    let ending = app::surface::Ending::of(&scanned);
    if let Some(line) = ending.line(!(out.json || out.quiet)) {
        eprintln!("{}", sanitize(&line));
    }
    Ok(ending.exit_code())
}

/// A scan that failed before it had a result: with `--json`, stdout still gets a valid
/// document carrying the error (an interruption included, unlike [`measure`]'s).
pub fn scan_failed(out: &OutputOptions, e: &app::Error) {
    if out.json && !e.is_usage() {
        let doc = app::session::error_doc("surface", "io", e.message());
        println!("{}", report::render(&doc, report::Format::Json).trim_end());
    }
}

/// `health`'s report on stdout (JSON or text), its warnings and unreadable disks on stderr,
/// the -o file; then the exit its verdicts mean.
pub fn health(doc: &app::health::HealthDoc, cfg: &app::health::Config) -> Outcome {
    if let Some(t) = cfg.stdout_text(doc) {
        print_stdout(&t)?;
    }
    for w in &doc.warnings {
        eprintln!("warning: {}", sanitize(w));
    }
    for line in cfg.error_lines(doc) {
        eprintln!("error: {}", sanitize(&line));
    }
    cfg.write_output(doc)?;
    if doc.interrupted {
        if let Some(t) = &doc.self_test {
            eprintln!("{}", sanitize(&t.message));
        }
    }
    Ok(doc.exit_code())
}

/// `doctor`'s diagnosis on stdout (JSON or text), the -o file; then its exit (1 when a cause
/// of severity high or above was found).
pub fn doctor(doc: &app::doctor::DoctorDoc, cfg: &app::doctor::Config) -> Outcome {
    let text = if cfg.json { app::doctor::json(doc) } else { report::doctor_text::render(doc) };
    print_stdout(&sanitize(&text))?;
    cfg.write_output(doc)?;
    Ok(doc.exit_code())
}

/// A health report that failed before it had a report: with `--json`, stdout still gets a
/// valid document carrying the error.
pub fn health_failed(cfg: &app::health::Config, e: &app::Error) {
    if let Some(json) = app::health::error_json(e).filter(|_| cfg.json) {
        println!("{json}");
    }
}

/// A trace written by `cache synth` or `cache convert`: its summary document as JSON, or its
/// one-line summary.
pub fn trace_summary(mut doc: ResultDoc, json: bool) -> Outcome {
    signals::name_in(&mut doc);
    if json {
        print_stdout(&rendered(&doc, report::Format::Json)?)?;
    } else if let Some(line) = report::trace_summary(&doc) {
        // The trace is written; a closed stdout does not undo that.
        let _ = print_stdout(&format!("{}\n", sanitize(&line)));
    }
    finished(&doc)
}

/// A trace recorded by `capture`: its summary (text, or JSON), the warnings on stderr when the
/// text (which shows them) is not on stdout, and how an early end cut it.
pub fn capture(summary: &stats::profile::CaptureSummary, json: bool, quiet: bool) -> Outcome {
    if json {
        let json =
            report::capture_json(summary).map_err(|e| app::Error::runtime(format!("cannot write the summary: {e}")))?;
        print_stdout(&json)?;
    } else if !quiet {
        print_stdout(&sanitize(&report::capture_text(summary)))?;
    }
    if json || quiet {
        for w in report::capture_warnings(summary) {
            eprintln!("warning: {}", sanitize(&w));
        }
    }
    if summary.interrupted {
        let what = signals::describe(signals::received().unwrap_or(signals::Stop::INTERRUPT));
        eprintln!("{what}: the trace covers the {:.1} s before it", summary.duration_s);
        return Ok(130);
    }
    Ok(0)
}

/// The file `report` wrote, named on stderr (its stdout is the rendered result when there is
/// no file).
pub fn wrote(path: &std::path::Path) -> Outcome {
    eprintln!("wrote {}", files::path::shown(path));
    Ok(0)
}
