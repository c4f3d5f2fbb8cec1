//! Plain and JSON Lines mode: sample, report, print, record — until the count is reached,
//! the recording ends, or Ctrl-C.

use crate::monitor::{Monitor, Report};
use crate::render::{self, Columns};
use crate::sample::{RecordHeader, Sample, SampleSource, RECORD_SCHEMA};
use crate::MonitorError;
use files::output::{AtomicFile, OutputFile};
use std::io::{BufWriter, Write};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// Writes a recording: a header line, then one raw sample per line. It is written to a
/// temporary file beside the destination and put in place by [`Recorder::finish`] when the run
/// ends (also by Ctrl-C or another terminating signal); a run that fails leaves nothing.
pub struct Recorder {
    out: BufWriter<AtomicFile>,
    path: PathBuf,
}

fn file_error(e: files::FileError) -> MonitorError {
    match e {
        files::FileError::Usage(m) => MonitorError::Usage(m),
        files::FileError::Runtime(m) => MonitorError::Runtime(m),
    }
}

impl Recorder {
    pub fn create(out: &OutputFile, interval_s: f64, processes: bool) -> Result<Recorder, MonitorError> {
        let f = out.create().map_err(file_error)?;
        let (host, kernel) = crate::sample::host_and_kernel();
        let header = RecordHeader {
            schema: RECORD_SCHEMA.to_string(),
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            host,
            kernel,
            interval_s,
            processes,
        };
        let mut r = Recorder { out: BufWriter::new(f), path: out.path().to_path_buf() };
        r.line(&serde_json::to_string(&header).map_err(|e| MonitorError::Runtime(e.to_string()))?)?;
        Ok(r)
    }

    fn line(&mut self, s: &str) -> Result<(), MonitorError> {
        self.out
            .write_all(s.as_bytes())
            .and_then(|_| self.out.write_all(b"\n"))
            .map_err(|e| MonitorError::Runtime(format!("cannot write --record file {}: {e}", self.path.display())))
    }

    pub fn sample(&mut self, s: &Sample) -> Result<(), MonitorError> {
        let text = serde_json::to_string(s).map_err(|e| MonitorError::Runtime(e.to_string()))?;
        self.line(&text)
    }

    /// Puts the recording in place.
    pub fn finish(self) -> Result<(), MonitorError> {
        let path = self.path;
        let f = self.out.into_inner().map_err(|e| {
            MonitorError::Runtime(format!("cannot write --record file {}: {}", path.display(), e.error()))
        })?;
        f.commit().map_err(file_error)
    }
}

/// Options of the plain/JSON driver.
#[derive(Debug, Clone)]
pub struct PlainConfig {
    pub interval: Duration,
    /// Number of reports; `None` runs until Ctrl-C (or the end of a replay).
    pub count: Option<u64>,
    pub json: bool,
    /// Nothing on stdout (a recording or -o file still gets written).
    pub quiet: bool,
    /// Also write every report to this file; JSON Lines when `output_json`, else text.
    pub output: Option<OutputFile>,
    pub output_json: bool,
    pub record: Option<OutputFile>,
    /// The names text reports show the device figures under (JSON carries both).
    pub columns: Columns,
}

/// How the run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Done,
    Interrupted,
}

/// Sleep until `deadline`, waking every 50 ms to notice Ctrl-C. False when interrupted.
pub fn sleep_until(deadline: Instant, stop: &AtomicBool) -> bool {
    loop {
        if stop.load(Ordering::SeqCst) {
            return false;
        }
        let now = Instant::now();
        if now >= deadline {
            return true;
        }
        std::thread::sleep((deadline - now).min(Duration::from_millis(50)));
    }
}

fn emit(
    r: &Report,
    cfg: &PlainConfig,
    stdout: &mut dyn Write,
    file: &mut Option<BufWriter<AtomicFile>>,
) -> Result<bool, MonitorError> {
    if let Some(f) = file {
        let t = if cfg.output_json { render::json_line(r) } else { render::text_with(r, cfg.columns) };
        f.write_all(t.as_bytes()).map_err(|e| {
            MonitorError::Runtime(format!(
                "cannot write --output file {}: {e}",
                cfg.output.as_ref().map(|o| o.path().display().to_string()).unwrap_or_default()
            ))
        })?;
    }
    if cfg.quiet {
        return Ok(true);
    }
    let t = if cfg.json { render::json_line(r) } else { render::text_with(r, cfg.columns) };
    match stdout.write_all(t.as_bytes()).and_then(|_| stdout.flush()) {
        Ok(()) => Ok(true),
        // A closed pipe (`| head`) ends the run quietly.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(false),
        Err(e) => Err(MonitorError::Runtime(format!("cannot write to stdout: {e}"))),
    }
}

/// Run plain/JSON mode to the end. The recording and the output file are put in place when the
/// run ends (its count reached, the replay over, or a stop); a failed run leaves neither.
pub fn run_plain(
    monitor: &mut Monitor,
    source: &mut dyn SampleSource,
    cfg: &PlainConfig,
    stdout: &mut dyn Write,
    stop: &AtomicBool,
) -> Result<Outcome, MonitorError> {
    let mut recorder = match &cfg.record {
        Some(p) => Some(Recorder::create(p, cfg.interval.as_secs_f64(), monitor.opts.processes)?),
        None => None,
    };
    let mut file = match &cfg.output {
        Some(p) => Some(BufWriter::new(p.create().map_err(file_error)?)),
        None => None,
    };
    let outcome = plain_loop(monitor, source, cfg, stdout, stop, &mut recorder, &mut file)?;
    if let Some(r) = recorder {
        r.finish()?;
    }
    if let Some(f) = file {
        let shown = cfg.output.as_ref().map(|o| o.path().display().to_string()).unwrap_or_default();
        f.into_inner()
            .map_err(|e| MonitorError::Runtime(format!("cannot write --output file {shown}: {}", e.error())))?
            .commit()
            .map_err(file_error)?;
    }
    Ok(outcome)
}

fn plain_loop(
    monitor: &mut Monitor,
    source: &mut dyn SampleSource,
    cfg: &PlainConfig,
    stdout: &mut dyn Write,
    stop: &AtomicBool,
    recorder: &mut Option<Recorder>,
    file: &mut Option<BufWriter<AtomicFile>>,
) -> Result<Outcome, MonitorError> {
    let live = source.is_live();
    let start = Instant::now();
    let mut reports = 0u64;
    let mut tick = 0u32;
    loop {
        if cfg.count.is_some_and(|c| reports >= c) {
            return Ok(Outcome::Done);
        }
        if stop.load(Ordering::SeqCst) {
            return Ok(Outcome::Interrupted);
        }
        let Some(sample) = source.next_sample()? else { return Ok(Outcome::Done) };
        if let Some(r) = recorder {
            r.sample(&sample)?;
        }
        if let Some(report) = monitor.push(&sample) {
            reports += 1;
            if !emit(&report, cfg, stdout, file)? {
                return Ok(Outcome::Done);
            }
            if cfg.count.is_some_and(|c| reports >= c) {
                return Ok(Outcome::Done);
            }
        }
        if live {
            tick += 1;
            // Absolute schedule: intervals do not drift by the time sampling takes.
            if !sleep_until(start + cfg.interval * tick, stop) {
                return Ok(Outcome::Interrupted);
            }
        }
    }
}
