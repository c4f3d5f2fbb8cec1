//! `diskmeter cache`: the SSD-cache simulator's commands (simulate, mrc, warmup, synth,
//! convert). Options in plain values → a validated [`Config`] (every limit and its message is
//! here) → [`run`], which hands the typed settings to `cachesim` and makes the result document.
//! The method is in docs/METHOD.md ("cache").

mod options;
#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::session;
// Re-exported: the cache commands' options name the trace with it, as `replay` and `profile` do.
use crate::trace_options::trace_input;
pub use crate::trace_options::TraceOptions;
use cachesim::session::{Cut, MrcConfig, Outcome, SessionError, SimulateConfig};
use files::output::OutputFile;
use stats::ResultDoc;
use std::path::Path;
use std::sync::atomic::AtomicBool;

/// `simulate`'s cache and back end when the command line leaves them out, as typed.
pub const PRESET: &str = "database";
pub const MODE: &str = "wt";
pub const POLICY: &str = "qsan";
pub const UNIT: &str = "4k";
pub const HDD_IOPS: &str = "150";
pub const HDD_LATENCY: &str = "8ms";
pub const HDDS: u32 = 1;
pub const RAID_PENALTY: f64 = 1.0;
pub const SSD_IOPS: &str = "50000";
pub const SSD_LATENCY: &str = "100us";
pub const SSDS: u32 = 1;
/// `mrc`'s policy when none is named (its unit is [`UNIT`], its preset [`PRESET`]).
pub const MRC_POLICY: &str = "lru";
/// References above which `mrc` samples with SHARDS when `--shards` is not given.
pub const AUTO_SHARDS_REFS: usize = cachesim::session::AUTO_SHARDS_REFS;
/// `synth`'s request size, read share, rate and seed when the command line leaves them out.
pub const SYNTH_BLOCK_SIZE: &str = "4k";
pub const SYNTH_READ_PCT: &str = "70";
pub const SYNTH_IOPS: &str = "1000";
pub const SYNTH_SEED: u64 = 1;

use trace::TraceInput;

pub use options::{ConvertOptions, MrcOptions, Options, SimulateOptions, SynthOptions, Warmup, WarmupOptions};

/// A validated `cache` command: nothing is read or written before this exists.
pub enum Config {
    Simulate {
        input: TraceInput,
        sim: SimulateConfig,
    },
    Mrc {
        input: TraceInput,
        mrc: MrcConfig,
    },
    Warmup(Warmup),
    /// The trace output is a checked regular file.
    Synth {
        spec: trace::SynthSpec,
        output: OutputFile,
    },
    Convert {
        input: TraceInput,
        output: OutputFile,
    },
}

impl Config {
    /// Checks every option, in the order the command line's errors are reported: the
    /// settings first, then the trace's reading options, then the trace output.
    pub fn new(o: &Options) -> Result<Config> {
        Ok(match o {
            Options::Simulate(s) => {
                let sim = options::simulate(s)?;
                Config::Simulate { input: trace_input(&s.input)?, sim }
            }
            Options::Mrc(m) => {
                let mrc = options::mrc(m)?;
                Config::Mrc { input: trace_input(&m.input)?, mrc }
            }
            Options::Warmup(w) => Config::Warmup(options::warmup(w)?),
            Options::Synth(y) => {
                let spec = options::synth(y)?;
                Config::Synth { spec, output: trace_output(&y.output, y.force)? }
            }
            Options::Convert(c) => {
                let input = trace_input(&c.input)?;
                Config::Convert { input, output: trace_output(&c.output, c.force)? }
            }
        })
    }
}

impl From<SessionError> for Error {
    fn from(e: SessionError) -> Self {
        match e {
            SessionError::Usage(m) => Error::Usage(m),
            SessionError::Runtime(m) => Error::Runtime(m),
        }
    }
}

/// A trace output (`synth`/`convert -o`): a checked regular file (a trace needs a seekable file,
/// so `-` is not offered).
fn trace_output(p: &Path, force: bool) -> Result<OutputFile> {
    if p.as_os_str() == "-" {
        return Err(Error::usage(
            "invalid value for --output: a trace is written to a file (its header is completed at the end); \
             name a file",
        ));
    }
    Ok(files::output::plan(p, "--output", force)?)
}

/// Runs the command. A result that covers only part of the trace is marked partial with the
/// reason as its error (kind `interrupted` when `stop` was raised, `trace` when the trace was
/// cut short); `Err` only when nothing could be computed.
pub fn run(cfg: &Config, stop: &AtomicBool) -> Result<ResultDoc> {
    let outcome = match cfg {
        Config::Simulate { input, sim } => cachesim::session::simulate(input, sim, stop)?,
        Config::Mrc { input, mrc } => cachesim::session::mrc(input, mrc, stop)?,
        Config::Warmup(w) => Outcome {
            result: cachesim::session::warmup(w.capacity_bytes, w.threshold, w.hdd_iops, w.io_size_bytes, w.hdds),
            cut: None,
        },
        Config::Synth { spec, output } => cachesim::session::synth(spec, output, stop)?,
        Config::Convert { input, output } => cachesim::session::convert(input, output, stop)?,
    };
    Ok(doc(outcome))
}

/// A `cache` result document.
fn doc(outcome: Outcome) -> ResultDoc {
    let mut doc = ResultDoc::new("cache", session::now_rfc3339(), session::host_info());
    doc.cache = Some(outcome.result);
    match outcome.cut {
        None => {}
        Some(Cut::Interrupted) => {
            doc.partial = true;
            doc.warn(stats::codes::PARTIAL, "interrupted");
            doc.error = Some(stats::ErrorInfo::new("interrupted", "interrupted"));
        }
        Some(Cut::Trace(m)) => {
            doc.partial = true;
            doc.warn(stats::codes::PARTIAL, m.clone());
            doc.error = Some(stats::ErrorInfo::new("trace", m));
        }
    }
    doc
}
