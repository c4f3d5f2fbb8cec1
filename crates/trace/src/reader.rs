//! Streaming trace readers: [`open`] a file in any [`TraceFormat`] and iterate its requests.

use std::collections::HashMap;
use std::fs::File;
use std::hash::{BuildHasherDefault, Hasher};
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use flate2::bufread::MultiGzDecoder;

use crate::binary::BinaryReader;
use crate::detect::GZIP_MAGIC;
use crate::error::TraceError;
use crate::format::TraceFormat;
use crate::lines::{Lines, LINE_BUF};
use crate::parse::{dev_matches, LineError, LineParser, Parsed, Rec};
use crate::request::{Op, Request};

/// Read buffer size: large enough that syscalls and decompressor calls are rare.
const BUF_SIZE: usize = 256 * 1024;

/// What to keep from a trace, and what to do with malformed lines.
///
/// Time window and rebasing: `from_ns`/`until_ns` are measured from the **first request of
/// the trace** (the first well-formed request line, whatever its device), and select
/// `from_ns <= t < until_ns`. Filtering (device and window) happens **before** rebasing: the
/// requests that are kept are then rebased so that the first kept one is at `t_ns = 0`.
/// A request stamped earlier than the trace's first one (traces are not always sorted)
/// counts as time 0.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// Skip malformed lines (counted in [`TraceReader::skipped`]) instead of failing on the
    /// first one.
    pub skip_bad: bool,
    /// Keep only this device, named as the trace names it: blkparse `8,32`, the fio file
    /// name, MSR `HOST_DISK` (e.g. `hm_0`) or just the disk number, Alibaba `device_id`,
    /// Tencent `volume_id`, the CSV device column, or a binary trace's device name.
    pub device: Option<String>,
    /// Keep requests at or after this time (ns since the trace's first request).
    pub from_ns: Option<u64>,
    /// Keep requests before this time (ns since the trace's first request).
    pub until_ns: Option<u64>,
}

/// A trace being read: an iterator of [`Request`]s, in file order.
///
/// Requests are rebased (see [`ReadOptions`]) and their `dev` is a dense id, `0, 1, …` in
/// order of the first kept request of each device; [`devices`](TraceReader::devices) maps
/// ids back to names. Any error ends the iteration: after an `Err`, `next()` returns `None`.
pub struct TraceReader {
    source: Source,
    state: State,
    format: TraceFormat,
}

enum Source {
    Text { lines: Lines<Box<dyn BufRead + Send>>, line: u64, parser: LineParser },
    Binary { reader: BinaryReader<Box<dyn BufRead + Send>>, map: Vec<DevState> },
}

/// Fate of a binary trace's device id.
#[derive(Clone, Copy)]
enum DevState {
    Unknown,
    Dropped,
    Kept(u32),
}

struct State {
    path: PathBuf,
    skip_bad: bool,
    device: Option<Vec<u8>>,
    from_ns: u64,
    until_ns: u64,
    /// Time of the trace's first request, in the trace's epoch.
    origin: Option<u64>,
    /// Time of the first kept request, relative to `origin`.
    first_kept: Option<u64>,
    devices: Vec<String>,
    ids: HashMap<Box<[u8]>, u32, BuildHasherDefault<Fnv>>,
    /// The previous request's device: most traces name one device on every line.
    last_name: Vec<u8>,
    last_id: Option<u32>,
    skipped: u64,
    first_skipped: Option<(u64, String)>,
    done: bool,
}

/// Opens a trace file. A gzip'd file (recognised by its magic bytes, whatever its name) is
/// decompressed on the fly; nothing is read beyond what the iterator consumes, except the
/// binary format's header.
pub fn open(path: &Path, format: &TraceFormat, opts: &ReadOptions) -> Result<TraceReader, TraceError> {
    let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
    TraceReader::build(Box::new(BufReader::with_capacity(BUF_SIZE, file)), format, opts, path.to_path_buf())
}

impl TraceReader {
    /// Reads a trace from any buffered reader (gzip'd input is recognised and decompressed).
    /// Errors name the file as `<input>`.
    pub fn from_reader(
        input: impl BufRead + Send + 'static,
        format: &TraceFormat,
        opts: &ReadOptions,
    ) -> Result<TraceReader, TraceError> {
        TraceReader::build(Box::new(input), format, opts, PathBuf::from("<input>"))
    }

    fn build(
        mut input: Box<dyn BufRead + Send>,
        format: &TraceFormat,
        opts: &ReadOptions,
        path: PathBuf,
    ) -> Result<TraceReader, TraceError> {
        if let TraceFormat::Blkparse { action } = format {
            if !matches!(action, 'Q' | 'D' | 'C') {
                return Err(TraceError::Invalid(format!(
                    "blkparse action {action:?}: expected Q (queued), D (issued) or C (completed)"
                )));
            }
        }
        let head = input.fill_buf().map_err(|e| TraceError::io(&path, e))?;
        if head.starts_with(&GZIP_MAGIC) {
            input = Box::new(BufReader::with_capacity(BUF_SIZE, MultiGzDecoder::new(input)));
        }
        let source = match LineParser::new(format) {
            Some(parser) => Source::Text { lines: Lines::new(input), line: 0, parser },
            None => {
                let reader = BinaryReader::with_path(input, path.clone())?;
                Source::Binary { reader, map: Vec::new() }
            }
        };
        let state = State {
            path,
            skip_bad: opts.skip_bad,
            device: opts.device.as_ref().map(|d| d.as_bytes().to_vec()),
            from_ns: opts.from_ns.unwrap_or(0),
            until_ns: opts.until_ns.unwrap_or(u64::MAX),
            origin: None,
            first_kept: None,
            devices: Vec::new(),
            ids: HashMap::default(),
            last_name: Vec::new(),
            last_id: None,
            skipped: 0,
            first_skipped: None,
            done: false,
        };
        Ok(TraceReader { source, state, format: format.clone() })
    }

    /// Malformed lines skipped so far (only with [`ReadOptions::skip_bad`]). Headers, blank
    /// lines, blkparse summaries and other actions, fio file actions are not counted.
    pub fn skipped(&self) -> u64 {
        self.state.skipped
    }

    /// The first malformed line skipped, as (line number, what was wrong), to show the user
    /// why lines were skipped.
    pub fn first_skipped(&self) -> Option<(u64, &str)> {
        self.state.first_skipped.as_ref().map(|(l, m)| (*l, m.as_str()))
    }

    /// Device names by id: `devices()[req.dev as usize]` names the device of `req`. Grows as
    /// devices first appear among the kept requests.
    pub fn devices(&self) -> &[String] {
        &self.state.devices
    }

    /// Lines read so far (0 for binary traces).
    pub fn lines(&self) -> u64 {
        match &self.source {
            Source::Text { line, .. } => *line,
            Source::Binary { .. } => 0,
        }
    }

    /// The format being read.
    pub fn format(&self) -> &TraceFormat {
        &self.format
    }

    /// Time of the trace's first request in the trace's own clock, in ns (the origin of
    /// [`ReadOptions::from_ns`]/[`until_ns`](ReadOptions::until_ns)); `None` before it is read.
    /// For MSR that is the filetime × 100, for Alibaba µs × 1000, for Tencent s × 10⁹.
    pub fn origin_ns(&self) -> Option<u64> {
        self.state.origin
    }
}

impl Iterator for TraceReader {
    type Item = Result<Request, TraceError>;

    fn next(&mut self) -> Option<Self::Item> {
        let state = &mut self.state;
        if state.done {
            return None;
        }
        let result = match &mut self.source {
            Source::Text { lines, line, parser } => next_text(state, lines, line, parser),
            Source::Binary { reader, map } => next_binary(state, reader, map),
        };
        match result {
            Some(Ok(r)) => Some(Ok(r)),
            other => {
                state.done = true;
                other
            }
        }
    }
}

fn next_text(
    state: &mut State,
    lines: &mut Lines<Box<dyn BufRead + Send>>,
    line: &mut u64,
    parser: &mut LineParser,
) -> Option<Result<Request, TraceError>> {
    let by_suffix = parser.matches_by_suffix();
    loop {
        let at = match lines.next_line() {
            Ok(Some(at)) => at,
            Ok(None) => return None,
            Err(e) => return Some(Err(TraceError::io(&state.path, e))),
        };
        *line += 1;
        let mut text = lines.get(&at);
        if let [rest @ .., b'\r'] = text {
            text = rest;
        }
        if *line == 1 {
            text = text.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(text);
        }
        let parsed = if at.too_long {
            Err(LineError::Bad(format!("line longer than {LINE_BUF} bytes: not a text trace?")))
        } else {
            parser.parse(text, *line)
        };
        match parsed {
            Ok(Parsed::Skip) => {}
            Ok(Parsed::Req(rec)) => {
                let Rec { t_ns, offset, len, op, dev } = rec;
                let Some(rel) = state.window(t_ns) else { continue };
                if let Some(want) = &state.device {
                    if !dev_matches(by_suffix, dev, want) {
                        continue;
                    }
                }
                let id = state.id_of(dev);
                return Some(Ok(state.emit(rel, offset, len, op, id)));
            }
            Err(LineError::Bad(message)) if state.skip_bad => {
                state.skipped += 1;
                if state.first_skipped.is_none() {
                    state.first_skipped = Some((*line, message));
                }
            }
            Err(LineError::Bad(message) | LineError::Fatal(message)) => {
                return Some(Err(TraceError::Parse { line: *line, message }));
            }
        }
    }
}

fn next_binary(
    state: &mut State,
    reader: &mut BinaryReader<Box<dyn BufRead + Send>>,
    map: &mut Vec<DevState>,
) -> Option<Result<Request, TraceError>> {
    loop {
        let r = match reader.next()? {
            Ok(r) => r,
            Err(e) => return Some(Err(e)),
        };
        let Some(rel) = state.window(r.t_ns) else { continue };
        let idx = r.dev as usize;
        if map.len() <= idx {
            map.resize(idx + 1, DevState::Unknown);
        }
        let Some(slot) = map.get_mut(idx) else { continue };
        let id = match *slot {
            DevState::Kept(id) => id,
            DevState::Dropped => continue,
            DevState::Unknown => {
                let name = reader.devices().get(idx).map(String::as_bytes).unwrap_or_default();
                if state.device.as_deref().is_some_and(|want| want != name) {
                    *slot = DevState::Dropped;
                    continue;
                }
                let id = state.id_of(name);
                *slot = DevState::Kept(id);
                id
            }
        };
        return Some(Ok(state.emit(rel, r.offset, r.len, r.op, id)));
    }
}

/// FNV-1a: device names are a few bytes, where SipHash's setup dominates (and a trace file
/// is not an adversary worth HashDoS protection).
struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = (self.0 ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3);
        }
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

impl State {
    /// Time relative to the trace's first request, if inside the window.
    #[inline]
    fn window(&mut self, t_ns: u64) -> Option<u64> {
        let origin = *self.origin.get_or_insert(t_ns);
        let rel = t_ns.saturating_sub(origin);
        (rel >= self.from_ns && rel < self.until_ns).then_some(rel)
    }

    #[inline]
    fn emit(&mut self, rel: u64, offset: u64, len: u32, op: Op, dev: u32) -> Request {
        let first = *self.first_kept.get_or_insert(rel);
        Request { t_ns: rel.saturating_sub(first), offset, len, op, dev }
    }

    /// Dense id of a device name, assigned on first sight.
    #[inline]
    fn id_of(&mut self, name: &[u8]) -> u32 {
        if let Some(id) = self.last_id {
            if self.last_name == name {
                return id;
            }
        }
        let id = match self.ids.get(name) {
            Some(id) => *id,
            None => {
                let id = u32::try_from(self.devices.len()).unwrap_or(u32::MAX);
                self.devices.push(String::from_utf8_lossy(name).into_owned());
                self.ids.insert(name.into(), id);
                id
            }
        };
        self.last_name.clear();
        self.last_name.extend_from_slice(name);
        self.last_id = Some(id);
        id
    }
}
