//! Line parsers, one per text format. Each turns one line (without its newline) into a
//! request with an absolute timestamp in ns and the device's name as the trace spells it;
//! the reader then rebases, filters and numbers the devices.

pub(crate) mod blkparse;
pub(crate) mod csvlike;
pub(crate) mod fields;
pub(crate) mod fio;
pub(crate) mod line;

pub(crate) use line::{Event, EventKind, LineError, LineResult, Parsed, Rec};

use crate::format::TraceFormat;

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

    /// Whether the format records latencies: MSR's ResponseTime, blkparse's completions
    /// when the kept action is `Q` or `D` (the parser then reports [`Parsed::Event`]s).
    pub(crate) fn carries_latency(&self) -> bool {
        match self {
            LineParser::Blkparse(p) => p.pairs(),
            LineParser::Msr(_) => true,
            LineParser::Fio(_) | LineParser::Alibaba | LineParser::Tencent | LineParser::Csv(_) => false,
        }
    }

    /// Whether the reader must pair requests with the completions of later lines (blkparse
    /// with the kept action `Q` or `D`).
    pub(crate) fn pairs(&self) -> bool {
        matches!(self, LineParser::Blkparse(p) if p.pairs())
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
