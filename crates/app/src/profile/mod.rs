//! `diskmeter profile TRACE`: what a workload is — read/write mix, block sizes, sequential
//! share, hot set, arrivals, outstanding depth — from one streaming pass over a trace in any
//! format `cache` reads; `--emit-job` writes an fio job file that reproduces it with
//! `diskmeter run`. Options as typed → a validated [`Config`] → [`run`] → a result document
//! with a `profile` section. The definitions: docs/capture-and-profile.md.

pub mod job;
pub mod pass;

use crate::error::{Error, Result};
use crate::session::{self, Observer};
use crate::trace_options::{trace_input, TraceOptions};
use files::output::OutputFile;
use stats::profile::ProfileTrace;
use stats::ResultDoc;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use trace::TraceInput;

/// The options of `diskmeter profile`, as given.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The trace and how to read it (`--format`, `--device`, `--from`, `--until`,
    /// `--skip-bad`), as `cache` takes them.
    pub input: TraceOptions,
    /// Write an fio job file reproducing the workload.
    pub emit_job: Option<PathBuf>,
    /// The result file (`-o`): `.json` or `.txt` only.
    pub output: Option<PathBuf>,
    /// Replace existing outputs that are not diskmeter's.
    pub force: bool,
}

/// A validated profile.
pub struct Config {
    pub input: TraceInput,
    pub emit_job: Option<OutputFile>,
}

impl Config {
    pub fn new(o: &Options) -> Result<Config> {
        if let Some(out) = &o.output {
            let ext = out.extension().and_then(|e| e.to_str()).map(str::to_ascii_lowercase);
            if out.as_os_str() != "-" && !matches!(ext.as_deref(), Some("json" | "txt")) {
                return Err(Error::usage(format!(
                    "invalid value for --output: profile writes its result as .json or .txt, not {}",
                    out.display()
                )));
            }
        }
        let input = trace_input(&o.input)?;
        files::input::check_regular(&input.path, "the trace")?;
        let emit_job = match &o.emit_job {
            Some(p) if p.as_os_str() == "-" => {
                return Err(Error::usage("invalid value for --emit-job: name a file for the job, such as workload.fio"))
            }
            Some(p) => Some(files::output::plan(p, "--emit-job", o.force)?),
            None => None,
        };
        Ok(Config { input, emit_job })
    }
}

/// Reads the trace once and makes the result; writes the job file when asked. Any fault in
/// the trace (garbage, a cut-off file, no requests) is bad input: one line, exit 2, nothing
/// written. Interrupted, the figures cover the part read and no job is written.
pub fn run(cfg: &Config, stop: &AtomicBool, obs: &mut dyn Observer) -> Result<ResultDoc> {
    let input = &cfg.input;
    let shown = input.path.display().to_string();
    let format = match &input.format {
        Some(f) => f.clone(),
        None => trace::detect_file(&input.path)
            .map_err(|e| Error::usage(format!("{shown} is not a readable trace: {e}")))?
            .ok_or_else(|| {
                Error::usage(format!(
                    "cannot tell the format of {shown}; give --format blkparse|fio|msr|alibaba|tencent|csv:MAPPING|binary"
                ))
            })?,
    };
    let not_readable = |e: trace::TraceError| Error::from(trace::from_the_start(&input.path, e));
    let mut reader = trace::open(&input.path, &format, &input.opts).map_err(not_readable)?;
    obs.phase(&format!("profile {shown}"), None);
    let mut p = pass::Profiler::new();
    let mut n = 0u64;
    let mut interrupted = false;
    while let Some(r) = reader.next() {
        if n.is_multiple_of(1 << 16) && stop.load(Ordering::Relaxed) {
            interrupted = true;
            break;
        }
        let r = r.map_err(|e| {
            Error::usage(format!(
                "{shown} is not a readable trace (after {n} requests): {e}; check the file and --format"
            ))
        })?;
        p.add(&r, reader.recorded_latency_ns());
        n += 1;
    }
    obs.phase_done();
    if n == 0 && !interrupted {
        let skipped = reader.skipped();
        return Err(Error::usage(format!(
            "{shown} holds no requests{}; check --format, --device and the time window",
            if skipped > 0 { format!(" ({skipped} malformed lines skipped)") } else { String::new() }
        )));
    }
    let mut result = p.finish(ProfileTrace {
        path: shown.clone(),
        format: format.summary_name(),
        devices: reader.devices().to_vec(),
        skipped_lines: reader.skipped(),
        carries_latency: reader.carries_latency(),
        ..ProfileTrace::default()
    });
    let mut doc = session::new_doc("profile");
    if interrupted {
        doc.partial = true;
        doc.warn(stats::codes::PARTIAL, "interrupted");
        doc.error = Some(stats::ErrorInfo::new("interrupted", "interrupted"));
    } else if let Some(out) = &cfg.emit_job {
        let job = job::design(&result, &out.path().display().to_string()).ok_or_else(|| {
            Error::usage(format!("{shown} has no reads or writes: there is no job to emit (only discards and flushes)"))
        })?;
        result.job = Some(job);
        for note in report::profile_job_notes(&result) {
            obs.notice(&note);
        }
        out.write(report::profile_fio_job(&result).as_bytes())?;
    }
    doc.profile = Some(result);
    Ok(doc)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::test_support::usage_message;

    #[test]
    fn option_errors() {
        let t = tempfile::tempdir().unwrap();
        let trace = t.path().join("t.csv");
        std::fs::write(&trace, "time_us,op,offset,size\n0,R,0,4096\n").unwrap();
        let base =
            Options { input: TraceOptions { trace: trace.clone(), ..TraceOptions::default() }, ..Options::default() };
        let o = Options { output: Some(t.path().join("r.csv")), ..base.clone() };
        assert!(usage_message(Config::new(&o))
            .starts_with("invalid value for --output: profile writes its result as .json or .txt"));
        let o = Options { emit_job: Some("-".into()), ..base.clone() };
        assert_eq!(
            usage_message(Config::new(&o)),
            "invalid value for --emit-job: name a file for the job, such as workload.fio"
        );
        let o =
            Options { input: TraceOptions { trace: t.path().join("none"), ..TraceOptions::default() }, ..base.clone() };
        assert!(usage_message(Config::new(&o)).contains("none"));
        let o = Options { input: TraceOptions { format: Some("nope".into()), ..base.input.clone() }, ..base.clone() };
        assert!(usage_message(Config::new(&o)).starts_with("invalid value for --format"));
        assert!(Config::new(&base).is_ok());
    }

    #[test]
    fn bad_traces_are_usage_errors() {
        let t = tempfile::tempdir().unwrap();
        let run_on = |name: &str, bytes: &[u8], format: Option<&str>| {
            let p = t.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            let o = Options {
                input: TraceOptions { trace: p, format: format.map(str::to_string), ..TraceOptions::default() },
                ..Options::default()
            };
            let cfg = Config::new(&o).unwrap();
            usage_message(run(&cfg, &AtomicBool::new(false), &mut session::Silent))
        };
        assert!(run_on("empty.dmt", b"", Some("binary")).contains("not a readable trace"));
        assert!(run_on("garbage.bin", &[0x5a; 100], None).contains("cannot tell the format"));
        let header_only = run_on(
            "none.csv",
            b"time_us,op,offset,size\n",
            Some("csv:time=0:us,op=1,offset=2:bytes,size=3:bytes,header"),
        );
        assert!(header_only.contains("holds no requests"), "{header_only}");
    }
}
