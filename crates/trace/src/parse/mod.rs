//! Line parsers, one per text format. Each turns one line (without its newline) into a
//! request with an absolute timestamp in ns and the device's name as the trace spells it;
//! the reader then rebases, filters and numbers the devices.

pub(crate) mod blkparse;
pub(crate) mod csvlike;
pub(crate) mod fields;
pub(crate) mod fio;

use crate::format::TraceFormat;
use crate::Op;

/// One request as a line states it.
#[derive(Debug)]
pub(crate) struct Rec<'a> {
    /// Absolute time in ns, in the trace's own epoch (rebased by the reader).
    pub t_ns: u64,
    pub offset: u64,
    pub len: u32,
    pub op: Op,
    /// Device name as the trace spells it.
    pub dev: &'a [u8],
}

/// What a line holds.
#[derive(Debug)]
pub(crate) enum Parsed<'a> {
    /// Not a request, and not an error: header, comment, blank line, blkparse summary or
    /// other action, fio file action or `wait`.
    Skip,
    Req(Rec<'a>),
}

/// Why a line was rejected.
#[derive(Debug)]
pub(crate) enum LineError {
    /// A malformed line: reported with its number, or skipped and counted with `skip_bad`.
    Bad(String),
    /// The file is not in this format at all (e.g. no fio header): always an error.
    Fatal(String),
}

impl From<String> for LineError {
    fn from(m: String) -> Self {
        LineError::Bad(m)
    }
}

pub(crate) type LineResult<'a> = Result<Parsed<'a>, LineError>;

/// The parser of one text format, with whatever state it carries between lines.
pub(crate) enum LineParser {
    Blkparse(blkparse::Blkparse),
    Fio(fio::Fio),
    Msr(csvlike::Msr),
    Alibaba,
    Tencent,
    Csv(Box<csvlike::Csv>),
}

impl LineParser {
    /// `None` for [`TraceFormat::Binary`], which has no lines.
    pub(crate) fn new(format: &TraceFormat) -> Option<LineParser> {
        Some(match format {
            TraceFormat::Blkparse { action } => LineParser::Blkparse(blkparse::Blkparse::new(*action)),
            TraceFormat::FioLog => LineParser::Fio(fio::Fio::default()),
            TraceFormat::Msr => LineParser::Msr(csvlike::Msr::default()),
            TraceFormat::Alibaba => LineParser::Alibaba,
            TraceFormat::Tencent => LineParser::Tencent,
            TraceFormat::Csv(m) => LineParser::Csv(Box::new(csvlike::Csv::new(m.clone()))),
            TraceFormat::Binary => return None,
        })
    }

    /// Parses line number `lineno` (1-based).
    #[inline]
    pub(crate) fn parse<'a>(&'a mut self, line: &'a [u8], lineno: u64) -> LineResult<'a> {
        match self {
            LineParser::Blkparse(p) => p.parse(line),
            LineParser::Fio(p) => p.parse(line),
            LineParser::Msr(p) => p.parse(line, lineno),
            LineParser::Alibaba => csvlike::alibaba(line, lineno),
            LineParser::Tencent => csvlike::tencent(line, lineno),
            LineParser::Csv(p) => p.parse(line, lineno),
        }
    }

    /// Whether device names also match by their last `_`-separated part (MSR).
    pub(crate) fn matches_by_suffix(&self) -> bool {
        matches!(self, LineParser::Msr(_))
    }
}

/// Whether device `name` is the one the user asked for. MSR devices are named `HOST_DISK`
/// (as the MSR files are) and also match by their disk number alone (`by_suffix`).
pub(crate) fn dev_matches(by_suffix: bool, name: &[u8], filter: &[u8]) -> bool {
    name == filter
        || (by_suffix
            && name.len() > filter.len()
            && name.ends_with(filter)
            && name.get(name.len() - filter.len() - 1) == Some(&b'_'))
}

/// A parse result flattened for assertions: `(t_ns, offset, len, op, device)` or the message.
#[cfg(test)]
pub(crate) type Flat = Result<Option<(u64, u64, u32, Op, String)>, String>;

#[cfg(test)]
pub(crate) fn flat(r: LineResult<'_>) -> Flat {
    match r {
        Ok(Parsed::Skip) => Ok(None),
        Ok(Parsed::Req(r)) => Ok(Some((r.t_ns, r.offset, r.len, r.op, String::from_utf8_lossy(r.dev).into_owned()))),
        Err(LineError::Bad(m) | LineError::Fatal(m)) => Err(m),
    }
}
