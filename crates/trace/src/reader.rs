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
use crate::pair::{Key, Pairing};
use crate::parse::{dev_matches, Event, EventKind, LineError, LineParser, Parsed, Rec};
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
///
/// Beside each request, [`recorded_latency_ns`](TraceReader::recorded_latency_ns) gives the
/// latency the trace recorded for it, where the format has one (see
/// [`carries_latency`](TraceReader::carries_latency)). For blkparse with the kept action `Q`
/// or `D`, that latency is on a later line (the `C` completion), so the reader holds kept
/// requests until their completion is read: they come out in the same order and with the
/// same values, only later in the file; `next()` reads as far as the completion of the
/// request it returns (or of the requests before it), and at most 60 s of trace time or
/// 1 Mi kept requests (16 Ki before the first completion is seen) beyond that request's line.
/// Memory grows with the requests held, never with the trace's length.
pub struct TraceReader {
    source: Source,
    state: State,
    format: TraceFormat,
    /// blkparse with the kept action `Q` or `D`: requests waiting for their completions.
    pairing: Option<Pairing>,
    /// The input ended (with `error`, if it failed) while `pairing` still held requests:
    /// they are returned first.
    draining: bool,
    error: Option<TraceError>,
    /// Recorded latency of the request last returned.
    latency: Option<u64>,
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
/// binary format's header (and, for blkparse `Q`/`D`, the lines up to the completions of the
/// requests returned: see [`TraceReader`]).
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
        let mut pairing = None;
        let source = match LineParser::new(format) {
            Some(parser) => {
                if parser.pairs() {
                    pairing = Some(Pairing::new());
                }
                Source::Text { lines: Lines::new(input), line: 0, parser }
            }
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
        Ok(TraceReader { source, state, format: format.clone(), pairing, draining: false, error: None, latency: None })
    }

    /// Malformed lines skipped so far (only with [`ReadOptions::skip_bad`]). Headers, blank
    /// lines, comments, blkparse summaries and other actions, fio file actions are not
    /// counted.
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

    /// Lines read so far (0 for binary traces). With blkparse `Q`/`D`, the reader reads
    /// ahead to the completions of the requests it returns (see [`TraceReader`]).
    pub fn lines(&self) -> u64 {
        match &self.source {
            Source::Text { line, .. } => *line,
            Source::Binary { .. } => 0,
        }
    }

    /// The device latency the trace recorded for the request most recently returned by
    /// `next()`, in ns; `None` before the first request, after the end or an error, and
    /// when the format (see [`carries_latency`](TraceReader::carries_latency)) or that
    /// request has none.
    ///
    /// - **MSR**: ResponseTime × 100 (filetime ticks); `None` when the column is missing or
    ///   not a number.
    /// - **blkparse** with the kept action `D`: the time from the `D` line to the `C` line of
    ///   the same device, start sector and operation (the device's service time); with `Q`:
    ///   from the `Q` line to that `C` line (time in the block layer and the device). `None`
    ///   for a request whose completion is not in the trace, comes more than 60 s (of trace
    ///   time) later or after 1 Mi later requests (16 Ki before the trace's first completion),
    ///   or cannot come: with `Q`, a request merged into another (`M` back merge, or the
    ///   request an `F` front merge extends); with `D`, one requeued (`R`). Two open
    ///   requests of one sector complete oldest first.
    /// - **binary** version 2: the latency stored with the request (0 stored reads as `None`).
    pub fn recorded_latency_ns(&self) -> Option<u64> {
        self.latency
    }

    /// Whether this trace can carry recorded latencies
    /// ([`recorded_latency_ns`](TraceReader::recorded_latency_ns)): MSR, blkparse with the
    /// kept action `Q` or `D`, and binary traces of version 2. Not fio iologs, Alibaba,
    /// Tencent, generic CSV or blkparse `C`, which have no latency to give. A trace that can
    /// carry latencies may still have none for some or all of its requests.
    pub fn carries_latency(&self) -> bool {
        match &self.source {
            Source::Text { parser, .. } => parser.carries_latency(),
            Source::Binary { reader, .. } => reader.carries_latency(),
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
        self.latency = None;
        if self.state.done {
            return None;
        }
        if self.draining {
            if let Some((r, lat)) = self.pairing.as_mut().and_then(Pairing::pop_front) {
                self.latency = lat;
                return Some(Ok(r));
            }
            self.state.done = true;
            return self.error.take().map(Err);
        }
        let state = &mut self.state;
        let result = match &mut self.source {
            Source::Text { lines, line, parser } => next_text(state, lines, line, parser, self.pairing.as_mut()),
            Source::Binary { reader, map } => next_binary(state, reader, map),
        };
        match result {
            Some(Ok((r, lat))) => {
                self.latency = lat;
                Some(Ok(r))
            }
            end => {
                if self.pairing.as_ref().is_some_and(|p| p.len() > 0) {
                    // The requests read before the end (or the error) come out first.
                    self.draining = true;
                    self.error = end.and_then(Result::err);
                    return self.next();
                }
                self.state.done = true;
                end.map(|r| r.map(|(r, _)| r))
            }
        }
    }
}

/// A request and the latency the trace recorded for it.
type Item = (Request, Option<u64>);

fn next_text(
    state: &mut State,
    lines: &mut Lines<Box<dyn BufRead + Send>>,
    line: &mut u64,
    parser: &mut LineParser,
    mut pairing: Option<&mut Pairing>,
) -> Option<Result<Item, TraceError>> {
    let by_suffix = parser.matches_by_suffix();
    if let Some(out) = pairing.as_deref_mut().and_then(Pairing::pop_ready) {
        return Some(Ok(out));
    }
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
                let Rec { t_ns, offset, len, op, dev, lat_ns } = rec;
                let Some(rel) = state.window(t_ns) else { continue };
                if let Some(want) = &state.device {
                    if !dev_matches(by_suffix, dev, want) {
                        continue;
                    }
                }
                let id = state.id_of(dev);
                let req = state.emit(rel, offset, len, op, id);
                let Some(p) = pairing.as_deref_mut() else { return Some(Ok((req, lat_ns))) };
                p.push(req, t_ns);
                if let Some(out) = p.pop_ready() {
                    return Some(Ok(out));
                }
            }
            Ok(Parsed::Event(Event { kind, t_ns, offset, op, dev })) => {
                // Only requests kept (so of a device with an id) wait for an event.
                let (Some(p), Some(dev)) = (pairing.as_deref_mut(), state.known_id(dev)) else { continue };
                let key = Key { offset, dev, op };
                match kind {
                    EventKind::Complete => p.complete(key, t_ns),
                    EventKind::Orphaned => p.orphan(key, t_ns),
                }
                if let Some(out) = p.pop_ready() {
                    return Some(Ok(out));
                }
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
) -> Option<Result<Item, TraceError>> {
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
        return Some(Ok((state.emit(rel, r.offset, r.len, r.op, id), reader.recorded_latency_ns())));
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

    /// Id of a device name already seen among the kept requests.
    #[inline]
    fn known_id(&self, name: &[u8]) -> Option<u32> {
        match self.last_id {
            Some(id) if self.last_name == name => Some(id),
            _ => self.ids.get(name).copied(),
        }
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
