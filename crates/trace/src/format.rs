//! Trace formats: which parser reads a file, and how a generic CSV maps onto a [`Request`].
//!
//! Format names (for `--format`), parsed by [`TraceFormat::parse`]:
//!
//! | name | format |
//! |---|---|
//! | `blkparse`, `blkparse:Q`, `blkparse:D`, `blkparse:C` | `blkparse` text output; keeps one action (default Q) |
//! | `fio` (`iolog`, `fio-iolog`) | fio iolog version 2 or 3, detected from the header line |
//! | `msr` | MSR Cambridge (SNIA) CSV |
//! | `alibaba` | Alibaba block traces 2020 |
//! | `tencent` | Tencent CBS 2018 |
//! | `csv:MAPPING` | any CSV, columns mapped by a [`CsvMapping`] spec |
//! | `binary` (`bin`, `dmtrace`) | diskmeter's binary format, see [`crate::binary`] |
//!
//! # How each format becomes [`Request`]s
//!
//! Common to all: timestamps become ns and are rebased (see [`ReadOptions`]); device names
//! become dense ids in order of first appearance ([`TraceReader::devices`]); a malformed line
//! is an error naming its 1-based line number, or is counted with `skip_bad`; blank lines,
//! `\r\n` endings and a UTF-8 BOM are accepted; gzip'd input is recognised by its magic.
//!
//! - **blkparse**: whitespace-separated `MAJ,MIN CPU SEQ SECS.NSECS PID ACTION RWBS
//!   [SECTOR + NSECTORS] [PROCESS]`. Only lines of the chosen action are requests (so the
//!   trace starts at the first line of that action); other actions, `Input file … added`
//!   lines, the statistics blkparse prints at the end (from a `CPUn (…)` or `Total (…)`
//!   line until the next event line) and comments (lines starting with `#`, such as a
//!   column header added to a capture, and rules made of `-`, spaces and `+` under one;
//!   blkparse prints no header itself) are skipped, not bad. Sectors are 512 B. RWBS: an
//!   optional leading `F` (preflush), then `R` read, `W` write, `D` discard, `F` flush,
//!   `N` no data; trailing flags (`F` FUA, `S`, `M`, `A`, `E`) are ignored. A request of
//!   0 sectors with the preflush flag (e.g. `Q FWS [kworker]`) is a [`Op::Flush`] at offset
//!   0; a write with preflush and data stays a write; other 0-sector events (`N`, SCSI
//!   pass-through) are skipped. Device: `MAJ,MIN`. With the action `Q` or `D`, each request
//!   is paired with its completion (the later `C` line of the same device, start sector and
//!   operation) for its [recorded latency](crate::TraceReader::recorded_latency_ns).
//! - **fio iolog**: the first non-blank line must be `fio version 2 iolog` or
//!   `fio version 3 iolog` (otherwise a fatal error, even with `skip_bad`). `add`, `open`,
//!   `close` lines are skipped; `read`, `write`, `trim` ([`Op::Discard`]) need `OFFSET LENGTH`
//!   in bytes; `sync`/`datasync` are [`Op::Flush`] (offset/length optional). v2: time is the
//!   sum of the `wait USEC` lines before the request (every wait counts, also below fio's
//!   100 µs replay granularity); v3: the first column, µs; `wait` is ignored there, as fio
//!   does. Device: the file name.
//! - **MSR**: 7 comma-separated fields (6 accepted); Timestamp is a Windows filetime
//!   (100 ns ticks; the epoch cancels out in rebasing); Type `Read`/`Write` (any case);
//!   Offset and Size in bytes; ResponseTime, in 100 ns ticks, is the request's
//!   [recorded latency](crate::TraceReader::recorded_latency_ns) (missing or not a number:
//!   none, not a bad line). Device: `Hostname_DiskNumber` (e.g. `hm_0`, like the MSR file
//!   names); the device filter also accepts the disk number alone.
//! - **Alibaba**: `device_id,opcode,offset,length,timestamp`, opcode `R`/`W`, bytes, µs.
//!   Device: `device_id`.
//! - **Tencent**: `timestamp,offset,size,io_type,volume_id`, seconds, 512 B sectors,
//!   `0` read / `1` write. Device: `volume_id`.
//! - MSR, Alibaba and Tencent files have no header, but a first line whose first field starts
//!   with a letter is taken for one and skipped.
//! - **CSV**: see [`CsvMapping`]. No recorded latency (there is no mapping item for one).
//!
//! [`Request`]: crate::Request
//! [`ReadOptions`]: crate::ReadOptions
//! [`TraceReader::devices`]: crate::TraceReader::devices
//! [`Op::Flush`]: crate::Op::Flush
//! [`Op::Discard`]: crate::Op::Discard

use std::fmt;
use std::str::FromStr;

use crate::error::TraceError;

/// A trace file format. See the [module documentation](self) for the names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TraceFormat {
    /// `blkparse` default text output. `action` is the one event kept: `'Q'` (queued: the
    /// host's view, before merging), `'D'` (issued to the device) or `'C'` (completed).
    Blkparse {
        /// `'Q'`, `'D'` or `'C'`.
        action: char,
    },
    /// fio iolog, version 2 (`wait` lines carry the time) or 3 (µs timestamp first column);
    /// the version is read from the header line.
    FioLog,
    /// MSR Cambridge: `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`.
    Msr,
    /// Alibaba block traces 2020: `device_id,opcode,offset,length,timestamp`.
    Alibaba,
    /// Tencent CBS 2018: `timestamp,offset,size,io_type,volume_id`.
    Tencent,
    /// Generic delimited text with user-mapped columns.
    Csv(CsvMapping),
    /// diskmeter's compact binary format ([`crate::binary`]).
    Binary,
}

const FORMAT_NAMES: &str = "blkparse[:Q|D|C], fio, msr, alibaba, tencent, csv:MAPPING or binary";

impl TraceFormat {
    /// Parses a format name (case-insensitive): `blkparse`, `blkparse:D`, `fio`, `msr`,
    /// `alibaba`, `tencent`, `csv:time=0:us,op=1,offset=2,size=3`, `binary`.
    pub fn parse(name: &str) -> Result<TraceFormat, TraceError> {
        let name = name.trim();
        let (head, arg) = match name.split_once(':') {
            Some((h, a)) => (h, Some(a)),
            None => (name, None),
        };
        let head = head.to_ascii_lowercase();
        let no_arg = |f: TraceFormat| match arg {
            None => Ok(f),
            Some(a) => Err(TraceError::Invalid(format!("trace format {head:?} takes no \":{a}\" argument"))),
        };
        match head.as_str() {
            "blkparse" | "blktrace" => {
                let action = match arg.map(|a| a.trim().to_ascii_uppercase()) {
                    None => 'Q',
                    Some(a) if a == "Q" || a == "D" || a == "C" => a.chars().next().unwrap_or('Q'),
                    Some(a) => {
                        return Err(TraceError::Invalid(format!(
                            "blkparse action {a:?}: expected Q (queued), D (issued) or C (completed), e.g. blkparse:D"
                        )))
                    }
                };
                Ok(TraceFormat::Blkparse { action })
            }
            "fio" | "iolog" | "fio-iolog" | "fio_iolog" => no_arg(TraceFormat::FioLog),
            "msr" => no_arg(TraceFormat::Msr),
            "alibaba" => no_arg(TraceFormat::Alibaba),
            "tencent" => no_arg(TraceFormat::Tencent),
            "binary" | "bin" | "dmtrace" => no_arg(TraceFormat::Binary),
            "csv" => match arg {
                Some(spec) => Ok(TraceFormat::Csv(CsvMapping::parse(spec)?)),
                None => Err(TraceError::Invalid(
                    "trace format csv needs a column mapping, e.g. csv:time=0:us,op=1,offset=2:bytes,size=3:bytes"
                        .to_string(),
                )),
            },
            _ => Err(TraceError::Invalid(format!("unknown trace format {name:?}: expected {FORMAT_NAMES}"))),
        }
    }
}

impl fmt::Display for TraceFormat {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TraceFormat::Blkparse { action } => write!(f, "blkparse:{action}"),
            TraceFormat::FioLog => f.write_str("fio"),
            TraceFormat::Msr => f.write_str("msr"),
            TraceFormat::Alibaba => f.write_str("alibaba"),
            TraceFormat::Tencent => f.write_str("tencent"),
            TraceFormat::Csv(m) => write!(f, "csv:{m}"),
            TraceFormat::Binary => f.write_str("binary"),
        }
    }
}

impl TraceFormat {
    /// The format as a trace summary names it: a CSV mapping's fields are left out, where the
    /// `Display` form keeps them to be parsed back.
    pub fn summary_name(&self) -> String {
        match self {
            TraceFormat::Csv(_) => "csv".into(),
            other => other.to_string(),
        }
    }
}

impl FromStr for TraceFormat {
    type Err = TraceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        TraceFormat::parse(s)
    }
}

/// Unit of a time column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    /// Nanoseconds.
    Ns,
    /// Microseconds.
    Us,
    /// Milliseconds.
    Ms,
    /// Seconds.
    S,
}

impl TimeUnit {
    /// Nanoseconds per unit.
    pub fn ns(self) -> u64 {
        match self {
            TimeUnit::Ns => 1,
            TimeUnit::Us => 1_000,
            TimeUnit::Ms => 1_000_000,
            TimeUnit::S => 1_000_000_000,
        }
    }

    fn parse(s: &str) -> Option<TimeUnit> {
        Some(match s.to_ascii_lowercase().as_str() {
            "ns" => TimeUnit::Ns,
            "us" | "µs" => TimeUnit::Us,
            "ms" => TimeUnit::Ms,
            "s" => TimeUnit::S,
            _ => return None,
        })
    }
}

impl fmt::Display for TimeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TimeUnit::Ns => "ns",
            TimeUnit::Us => "us",
            TimeUnit::Ms => "ms",
            TimeUnit::S => "s",
        })
    }
}

/// Unit of an offset or size column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeUnit {
    /// Bytes.
    Bytes,
    /// 512-byte sectors.
    Sectors,
    /// Blocks of the given number of bytes (spec: a plain number, e.g. `offset=2:4096`).
    Blocks(u32),
}

impl SizeUnit {
    /// Bytes per unit.
    pub fn bytes(self) -> u64 {
        match self {
            SizeUnit::Bytes => 1,
            SizeUnit::Sectors => 512,
            SizeUnit::Blocks(n) => u64::from(n),
        }
    }

    fn parse(s: &str) -> Option<SizeUnit> {
        Some(match s.to_ascii_lowercase().as_str() {
            "bytes" | "byte" | "b" => SizeUnit::Bytes,
            "sectors" | "sector" => SizeUnit::Sectors,
            n => match n.parse::<u32>() {
                Ok(1) => SizeUnit::Bytes,
                Ok(512) => SizeUnit::Sectors,
                Ok(n) if n > 0 => SizeUnit::Blocks(n),
                _ => return None,
            },
        })
    }
}

impl fmt::Display for SizeUnit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SizeUnit::Bytes => f.write_str("bytes"),
            SizeUnit::Sectors => f.write_str("sectors"),
            SizeUnit::Blocks(n) => write!(f, "{n}"),
        }
    }
}

/// Field separator of a generic CSV.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delimiter {
    /// `,` (the default).
    Comma,
    /// `;`.
    Semicolon,
    /// A tab.
    Tab,
    /// `|`.
    Pipe,
    /// Any run of spaces and tabs (leading and trailing whitespace ignored).
    Whitespace,
}

impl Delimiter {
    /// The separator byte (`None` for [`Delimiter::Whitespace`]).
    pub fn byte(self) -> Option<u8> {
        match self {
            Delimiter::Comma => Some(b','),
            Delimiter::Semicolon => Some(b';'),
            Delimiter::Tab => Some(b'\t'),
            Delimiter::Pipe => Some(b'|'),
            Delimiter::Whitespace => None,
        }
    }

    fn parse(s: &str) -> Option<Delimiter> {
        Some(match s.to_ascii_lowercase().as_str() {
            "comma" => Delimiter::Comma,
            "semicolon" | ";" => Delimiter::Semicolon,
            "tab" | "\\t" => Delimiter::Tab,
            "pipe" => Delimiter::Pipe,
            "space" | "spaces" | "whitespace" => Delimiter::Whitespace,
            _ => return None,
        })
    }
}

impl fmt::Display for Delimiter {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Delimiter::Comma => "comma",
            Delimiter::Semicolon => "semicolon",
            Delimiter::Tab => "tab",
            Delimiter::Pipe => "pipe",
            Delimiter::Whitespace => "space",
        })
    }
}

/// How the columns of a generic CSV map onto a [`Request`](crate::Request).
///
/// Written as a spec string of comma-separated items (columns are **0-based**):
///
/// | item | meaning | default |
/// |---|---|---|
/// | `time=COL[:ns\|us\|ms\|s]` | timestamp column and unit; decimals allowed (`1.25`) | unit `s` |
/// | `op=COL` | operation column, matched against the value lists below | |
/// | `offset=COL[:bytes\|sectors\|N]` | offset column; `N` = blocks of N bytes | `bytes` |
/// | `size=COL[:bytes\|sectors\|N]` | length column | `bytes` |
/// | `dev=COL` | device column (optional; without it every request is device `0`, named `0`) | |
/// | `header` or `header=1` | the first line is a header and is skipped (`header=0`: it is data) | `header=0` |
/// | `delim=comma\|semicolon\|tab\|pipe\|space` | field separator | `comma` |
/// | `read=V1\|V2…` | op values meaning read (case-insensitive) | `r\|read` |
/// | `write=V1\|V2…` | op values meaning write | `w\|write` |
/// | `discard=V1\|V2…` | op values meaning discard | `d\|discard\|trim` |
/// | `flush=V1\|V2…` | op values meaning flush | `f\|flush\|sync` |
///
/// `time`, `op`, `offset` and `size` are required. Example:
/// `time=0:us,op=1,offset=2:bytes,size=3:sectors,dev=4,header`, or for 0/1-coded ops
/// `time=0:s,op=3,offset=1:sectors,size=2:sectors,read=0,write=1`. Fields may be padded
/// with spaces and wrapped in double quotes; quoted delimiters are not supported. Lines
/// starting with `#` are comments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CsvMapping {
    /// Timestamp column.
    pub time_col: usize,
    /// Timestamp unit.
    pub time_unit: TimeUnit,
    /// Operation column.
    pub op_col: usize,
    /// Offset column.
    pub offset_col: usize,
    /// Offset unit.
    pub offset_unit: SizeUnit,
    /// Length column.
    pub size_col: usize,
    /// Length unit.
    pub size_unit: SizeUnit,
    /// Device column, if any.
    pub dev_col: Option<usize>,
    /// Whether the first line is a header to skip.
    pub has_header: bool,
    /// Field separator.
    pub delimiter: Delimiter,
    /// Op values meaning [`Op::Read`](crate::Op::Read), compared case-insensitively.
    pub read_values: Vec<String>,
    /// Op values meaning [`Op::Write`](crate::Op::Write).
    pub write_values: Vec<String>,
    /// Op values meaning [`Op::Discard`](crate::Op::Discard).
    pub discard_values: Vec<String>,
    /// Op values meaning [`Op::Flush`](crate::Op::Flush).
    pub flush_values: Vec<String>,
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn default_read() -> Vec<String> {
    strings(&["r", "read"])
}
fn default_write() -> Vec<String> {
    strings(&["w", "write"])
}
fn default_discard() -> Vec<String> {
    strings(&["d", "discard", "trim"])
}
fn default_flush() -> Vec<String> {
    strings(&["f", "flush", "sync"])
}

const MAPPING_KEYS: &str = "time, op, offset, size, dev, header, delim, read, write, discard or flush";
const HEADER_VALUES: &str =
    "write header (same as header=1) if the first line is a header to skip, or header=0 if it is data";

impl CsvMapping {
    /// Parses a mapping spec such as `time=0:us,op=1,offset=2:bytes,size=3:sectors,dev=4,header`
    /// (see the type documentation for every item).
    pub fn parse(spec: &str) -> Result<CsvMapping, TraceError> {
        let err = |m: String| TraceError::Invalid(format!("csv mapping {spec:?}: {m}"));
        let mut time = None;
        let mut op = None;
        let mut offset = None;
        let mut size = None;
        let mut dev = None;
        let mut has_header = None;
        let mut delimiter = None;
        let mut lists: [Option<Vec<String>>; 4] = [None, None, None, None];
        for item in spec.split(',') {
            let item = item.trim();
            if item.is_empty() {
                return Err(err("empty item (two commas in a row?)".to_string()));
            }
            let Some((key, value)) = item.split_once('=') else {
                match item.to_ascii_lowercase().as_str() {
                    "header" => {
                        if has_header.is_some() {
                            return Err(err("header is given twice".to_string()));
                        }
                        has_header = Some(true);
                        continue;
                    }
                    _ => {
                        return Err(err(format!(
                            "unknown item {item:?}: expected KEY=VALUE with KEY one of {MAPPING_KEYS} (or just header)"
                        )))
                    }
                }
            };
            let key = key.trim().to_ascii_lowercase();
            let value = value.trim();
            let (col, unit) = match value.split_once(':') {
                Some((c, u)) => (c.trim(), Some(u.trim())),
                None => (value, None),
            };
            let column = || -> Result<usize, TraceError> {
                col.parse::<usize>()
                    .map_err(|_| err(format!("{key} column {col:?} is not a number (columns are 0-based)")))
            };
            let dup = |set: bool| if set { Err(err(format!("{key} is given twice"))) } else { Ok(()) };
            let no_unit = || match unit {
                Some(u) => Err(err(format!("{key} takes no unit (got \":{u}\")"))),
                None => Ok(()),
            };
            match key.as_str() {
                "time" => {
                    dup(time.is_some())?;
                    let u = match unit {
                        None => TimeUnit::S,
                        Some(u) => TimeUnit::parse(u)
                            .ok_or_else(|| err(format!("time unit {u:?}: expected ns, us, ms or s")))?,
                    };
                    time = Some((column()?, u));
                }
                "offset" | "size" => {
                    let u = match unit {
                        None => SizeUnit::Bytes,
                        Some(u) => SizeUnit::parse(u).ok_or_else(|| {
                            err(format!("{key} unit {u:?}: expected bytes, sectors or a block size in bytes"))
                        })?,
                    };
                    if key == "offset" {
                        dup(offset.is_some())?;
                        offset = Some((column()?, u));
                    } else {
                        dup(size.is_some())?;
                        size = Some((column()?, u));
                    }
                }
                "op" => {
                    dup(op.is_some())?;
                    no_unit()?;
                    op = Some(column()?);
                }
                "dev" | "device" => {
                    dup(dev.is_some())?;
                    no_unit()?;
                    dev = Some(column()?);
                }
                "delim" | "delimiter" | "sep" => {
                    dup(delimiter.is_some())?;
                    delimiter = Some(Delimiter::parse(value).ok_or_else(|| {
                        err(format!("delimiter {value:?}: expected comma, semicolon, tab, pipe or space"))
                    })?);
                }
                "header" => {
                    dup(has_header.is_some())?;
                    no_unit()?;
                    has_header = Some(match col {
                        "1" => true,
                        "0" => false,
                        v => return Err(err(format!("header={v}: {HEADER_VALUES}"))),
                    });
                }
                "read" | "write" | "discard" | "flush" => {
                    let i = ["read", "write", "discard", "flush"].iter().position(|k| *k == key).unwrap_or(0);
                    let Some(slot) = lists.get_mut(i) else { continue };
                    dup(slot.is_some())?;
                    let values: Vec<String> =
                        value.split('|').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect();
                    if values.is_empty() {
                        return Err(err(format!("{key} needs at least one value, e.g. {key}=R|r")));
                    }
                    *slot = Some(values);
                }
                _ => return Err(err(format!("unknown key {key:?}: expected {MAPPING_KEYS}"))),
            }
        }
        let need = |what: &str, example: &str| err(format!("{what} is required ({example})"));
        let (time_col, time_unit) = time.ok_or_else(|| need("time", "time=COL[:ns|us|ms|s]"))?;
        let op_col = op.ok_or_else(|| need("op", "op=COL"))?;
        let (offset_col, offset_unit) = offset.ok_or_else(|| need("offset", "offset=COL[:bytes|sectors]"))?;
        let (size_col, size_unit) = size.ok_or_else(|| need("size", "size=COL[:bytes|sectors]"))?;
        let [r, w, d, f] = lists;
        let m = CsvMapping {
            time_col,
            time_unit,
            op_col,
            offset_col,
            offset_unit,
            size_col,
            size_unit,
            dev_col: dev,
            has_header: has_header.unwrap_or(false),
            delimiter: delimiter.unwrap_or(Delimiter::Comma),
            read_values: r.unwrap_or_else(default_read),
            write_values: w.unwrap_or_else(default_write),
            discard_values: d.unwrap_or_else(default_discard),
            flush_values: f.unwrap_or_else(default_flush),
        };
        // One value in two lists would make the op ambiguous.
        let named = [
            ("read", &m.read_values),
            ("write", &m.write_values),
            ("discard", &m.discard_values),
            ("flush", &m.flush_values),
        ];
        for (i, (a, av)) in named.iter().enumerate() {
            for (b, bv) in named.iter().skip(i + 1) {
                if let Some(v) = av.iter().find(|v| bv.iter().any(|x| x.eq_ignore_ascii_case(v))) {
                    return Err(err(format!("op value {v:?} is both a {a} and a {b} value")));
                }
            }
        }
        Ok(m)
    }
}

impl fmt::Display for CsvMapping {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "time={}:{},op={},offset={}:{},size={}:{}",
            self.time_col,
            self.time_unit,
            self.op_col,
            self.offset_col,
            self.offset_unit,
            self.size_col,
            self.size_unit
        )?;
        if let Some(d) = self.dev_col {
            write!(f, ",dev={d}")?;
        }
        if self.has_header {
            f.write_str(",header")?;
        }
        if self.delimiter != Delimiter::Comma {
            write!(f, ",delim={}", self.delimiter)?;
        }
        let lists = [
            ("read", &self.read_values, default_read()),
            ("write", &self.write_values, default_write()),
            ("discard", &self.discard_values, default_discard()),
            ("flush", &self.flush_values, default_flush()),
        ];
        for (key, values, default) in lists {
            if *values != default {
                write!(f, ",{key}={}", values.join("|"))?;
            }
        }
        Ok(())
    }
}

impl FromStr for CsvMapping {
    type Err = TraceError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        CsvMapping::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn format_names() {
        assert_eq!(TraceFormat::parse("blkparse").ok(), Some(TraceFormat::Blkparse { action: 'Q' }));
        assert_eq!(TraceFormat::parse("blkparse:d").ok(), Some(TraceFormat::Blkparse { action: 'D' }));
        assert_eq!(TraceFormat::parse("FIO").ok(), Some(TraceFormat::FioLog));
        assert_eq!(TraceFormat::parse("msr").ok(), Some(TraceFormat::Msr));
        assert_eq!(TraceFormat::parse("bin").ok(), Some(TraceFormat::Binary));
        assert!(TraceFormat::parse("blkparse:X").is_err());
        assert!(TraceFormat::parse("msr:x").is_err());
        assert!(TraceFormat::parse("csv").is_err());
        let e = TraceFormat::parse("spc").err().map(|e| e.to_string()).unwrap_or_default();
        assert!(e.contains("unknown trace format \"spc\""), "{e}");
        for name in [
            "blkparse:C",
            "fio",
            "msr",
            "alibaba",
            "tencent",
            "binary",
            "csv:time=0:us,op=1,offset=2:bytes,size=3:sectors,dev=4,header",
        ] {
            let f = TraceFormat::parse(name).ok();
            assert_eq!(f.as_ref().map(|f| f.to_string()).as_deref(), Some(name));
        }
    }

    #[test]
    fn mapping_spec() {
        let m = CsvMapping::parse("time=0:us,op=1,offset=2:bytes,size=3:sectors,dev=4,header").ok();
        let m = m.as_ref();
        assert_eq!(m.map(|m| (m.time_col, m.time_unit)), Some((0, TimeUnit::Us)));
        assert_eq!(m.map(|m| (m.size_col, m.size_unit)), Some((3, SizeUnit::Sectors)));
        assert_eq!(m.and_then(|m| m.dev_col), Some(4));
        assert_eq!(m.map(|m| m.has_header), Some(true));
        // `header` is `header=1`, as fio's flags are; `header=0` is the default, spelled out.
        for (item, want) in
            [("header", true), ("HEADER", true), ("header=1", true), ("header = 1", true), ("header=0", false)]
        {
            let m = CsvMapping::parse(&format!("time=0,op=1,offset=2,size=3,{item}"));
            assert_eq!(m.as_ref().map(|m| m.has_header).ok(), Some(want), "{item}: {m:?}");
        }
        let m = CsvMapping::parse("time=1,op=0,offset=2:4096,size=3:512,read=0,write=1,delim=tab").ok();
        assert_eq!(m.as_ref().map(|m| m.offset_unit), Some(SizeUnit::Blocks(4096)));
        assert_eq!(m.as_ref().map(|m| m.size_unit), Some(SizeUnit::Sectors));
        assert_eq!(m.as_ref().map(|m| m.delimiter), Some(Delimiter::Tab));
        assert_eq!(
            m.as_ref().map(|m| m.to_string()).as_deref(),
            Some("time=1:s,op=0,offset=2:4096,size=3:sectors,delim=tab,read=0,write=1")
        );
        let errors = [
            ("op=1,offset=2,size=3", "time is required"),
            ("time=x,op=1,offset=2,size=3", "time column \"x\" is not a number"),
            ("time=0:h,op=1,offset=2,size=3", "time unit \"h\""),
            ("time=0,op=1,offset=2:kb,size=3", "offset unit \"kb\""),
            ("time=0,op=1,offset=2,size=3,color=4", "unknown key \"color\""),
            ("time=0,op=1,offset=2,size=3,,", "empty item"),
            ("time=0,op=1,offset=2,size=3,time=4", "time is given twice"),
            ("time=0,op=1,offset=2,size=3,read=r|x,write=x", "\"x\" is both a read and a write value"),
            ("time=0,op=1:us,offset=2,size=3", "op takes no unit"),
            ("time=0,op=1,offset=2,size=3,header=2", "header=2: write header (same as header=1)"),
            ("time=0,op=1,offset=2,size=3,header=yes", "header=yes: write header"),
            ("time=0,op=1,offset=2,size=3,header=", "header=: write header"),
            ("time=0,op=1,offset=2,size=3,header,header=0", "header is given twice"),
            ("time=0,op=1,offset=2,size=3,header=1,header", "header is given twice"),
            ("time=0,op=1,offset=2,size=3,header=1:x", "header takes no unit"),
        ];
        for (spec, want) in errors {
            let e = CsvMapping::parse(spec).err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.contains(want), "{spec}: {e}");
        }
    }
}
