//! The options that name a trace and how to read it, shared by every command that reads one
//! (`cache`, `replay`, `profile`): typed values → a [`trace::TraceInput`], each error
//! attributed to its option.

use spec::units::{self, TimeUnit};
use spec::SpecError;
use std::path::PathBuf;
use trace::TraceInput;

/// Which trace and how to read it, as given on the command line.
#[derive(Debug, Clone, Default)]
pub struct TraceOptions {
    pub trace: PathBuf,
    /// A format name (`blkparse`, `fio`, `csv:MAPPING`, …); `None`: detected.
    pub format: Option<String>,
    pub device: Option<String>,
    /// Durations since the trace's first request.
    pub from: Option<String>,
    pub until: Option<String>,
    pub skip_bad: bool,
}

pub(crate) fn trace_input(o: &TraceOptions) -> Result<TraceInput, SpecError> {
    let format = match &o.format {
        Some(f) => Some(trace::TraceFormat::parse(f).map_err(|e| SpecError::value("--format", e.to_string()))?),
        None => None,
    };
    let ns = |option: &str, v: &Option<String>| -> Result<Option<u64>, SpecError> {
        v.as_ref()
            .map(|s| {
                units::parse_duration(option, s, TimeUnit::Seconds)
                    .map(|d| d.as_nanos().min(u128::from(u64::MAX)) as u64)
            })
            .transpose()
    };
    let from_ns = ns("--from", &o.from)?;
    let until_ns = ns("--until", &o.until)?;
    if let (Some(a), Some(b)) = (from_ns, until_ns) {
        if b <= a {
            return Err(SpecError::value("--until", "must be later than --from"));
        }
    }
    Ok(TraceInput {
        path: o.trace.clone(),
        format,
        opts: trace::ReadOptions { skip_bad: o.skip_bad, device: o.device.clone(), from_ns, until_ns },
    })
}
