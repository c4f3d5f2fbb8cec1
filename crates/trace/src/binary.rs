//! diskmeter's binary trace format: a small header, then fixed-size little-endian records.
//! Several times faster to read than any text trace, and exact (no unit conversions).
//!
//! ```text
//! header, 32 bytes
//!   0  [u8; 8]  magic "DMTRACE1"
//!   8  u16      version: 1, or 2 (records carry a latency)
//!  10  u16      record size: 24 in version 1, 32 in version 2
//!  12  u32      flags (0; readers ignore unknown flags)
//!  16  u64      number of requests, u64::MAX if unknown (the writer did not finish)
//!  24  u64      reserved (0)
//! records, 24 bytes each (version 1) or 32 (version 2)
//!   0  u64      t_ns
//!   8  u64      offset (bytes)
//!  16  u32      len (bytes)
//!  20  u8       kind: 0 read, 1 write, 2 discard, 3 flush, 0xFF device definition
//!  21  u24      dev
//!  24  u64      version 2 only: lat_ns, the latency the source trace recorded for the
//!               request, 0 if unknown (so a recorded 0 ns reads back as unknown)
//! ```
//!
//! Version 2 is version 1 with the latency appended to every record; [`BinaryWriter`] writes
//! version 1 unless made with [`new_with_latency`](BinaryWriter::new_with_latency),
//! [`buffered_with_latency`](BinaryWriter::buffered_with_latency) or switched by
//! [`enable_latency`](BinaryWriter::enable_latency) ([`crate::convert`] does so when the source
//! trace [carries latencies](crate::TraceReader::carries_latency)), and [`BinaryReader`] reads
//! both ([`BinaryReader::recorded_latency_ns`]).
//!
//! The device name table is spread through the file as *device definition* records
//! (kind 0xFF): `dev` is the id defined, `len` the name's length in bytes (≤ 4096, UTF-8),
//! `t_ns`, `offset` (and `lat_ns`) are 0, and the name follows, zero-padded to a multiple of
//! the record size.
//! Ids are defined in order (0, 1, 2, …), each before its first use. This keeps the format
//! streamable: a writer never needs to know the devices in advance and a reader never seeks,
//! so binary traces can be piped and gzip'd like the text ones.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::error::TraceError;
use crate::request::{Op, Request};

/// First 8 bytes of every binary trace.
pub const MAGIC: &[u8; 8] = b"DMTRACE1";
/// Format version written by [`BinaryWriter`] without latencies.
pub const VERSION: u16 = 1;
/// Format version whose records carry a latency.
pub const VERSION_LATENCY: u16 = 2;
/// Header size in bytes.
pub const HEADER_LEN: usize = 32;
/// Record size in bytes, version 1.
pub const RECORD_LEN: usize = 24;
/// Record size in bytes, version 2 (version 1's record and a `u64` latency).
pub const RECORD_LEN_LATENCY: usize = 32;
/// Device ids must be below this (they are stored in 24 bits).
pub const MAX_DEVICES: u32 = 1 << 24;
/// Longest device name, in bytes.
pub const MAX_NAME_LEN: usize = 4096;

const UNKNOWN_COUNT: u64 = u64::MAX;
const KIND_DEVICE: u8 = 0xFF;
const VERSION_AT: u64 = 8;
const COUNT_AT: u64 = 16;
const READ_BUF: usize = 1 << 20;
const WRITE_BUF: usize = 1 << 20;

fn kind_of(op: Op) -> u8 {
    match op {
        Op::Read => 0,
        Op::Write => 1,
        Op::Discard => 2,
        Op::Flush => 3,
    }
}

#[inline]
fn op_of(kind: u8) -> Option<Op> {
    match kind {
        0 => Some(Op::Read),
        1 => Some(Op::Write),
        2 => Some(Op::Discard),
        3 => Some(Op::Flush),
        _ => None,
    }
}

fn encode(t_ns: u64, offset: u64, len: u32, kind: u8, dev: u32) -> [u8; RECORD_LEN] {
    let mut r = [0u8; RECORD_LEN];
    let (t, rest) = r.split_at_mut(8);
    t.copy_from_slice(&t_ns.to_le_bytes());
    let (o, rest) = rest.split_at_mut(8);
    o.copy_from_slice(&offset.to_le_bytes());
    let (l, rest) = rest.split_at_mut(4);
    l.copy_from_slice(&len.to_le_bytes());
    let [k, d @ ..] = rest else { return r };
    *k = kind;
    let [d0, d1, d2, _] = dev.to_le_bytes();
    if let [a, b, c] = d {
        (*a, *b, *c) = (d0, d1, d2);
    }
    r
}

/// `(t_ns, offset, len, kind, dev)`.
#[inline]
fn decode(r: &[u8; RECORD_LEN]) -> (u64, u64, u32, u8, u32) {
    let [t0, t1, t2, t3, t4, t5, t6, t7, o0, o1, o2, o3, o4, o5, o6, o7, l0, l1, l2, l3, kind, d0, d1, d2] = *r;
    (
        u64::from_le_bytes([t0, t1, t2, t3, t4, t5, t6, t7]),
        u64::from_le_bytes([o0, o1, o2, o3, o4, o5, o6, o7]),
        u32::from_le_bytes([l0, l1, l2, l3]),
        kind,
        u32::from_le_bytes([d0, d1, d2, 0]),
    )
}

/// The latency as a version 2 record stores it: 0 for unknown.
#[inline]
fn lat_bytes(lat_ns: Option<u64>) -> [u8; 8] {
    lat_ns.unwrap_or(0).to_le_bytes()
}

/// Header bytes 8..12: version and record size.
fn version_and_size(latency: bool) -> [u8; 4] {
    let (version, size) = if latency { (VERSION_LATENCY, RECORD_LEN_LATENCY) } else { (VERSION, RECORD_LEN) };
    let [v0, v1] = version.to_le_bytes();
    let [s0, s1] = (size as u16).to_le_bytes();
    [v0, v1, s0, s1]
}

/// Writes a binary trace. Call [`finish`](BinaryWriter::finish) at the end to record the
/// request count in the header; a trace whose writer never finished is still readable (its
/// count reads as unknown).
pub struct BinaryWriter<W: Write + Seek> {
    out: W,
    start: u64,
    /// Whether records carry a latency (version 2).
    latency: bool,
    /// Anything written after the header.
    wrote: bool,
    devices: Vec<String>,
    requests: u64,
    path: PathBuf,
}

impl<W: Write + Seek> BinaryWriter<BufWriter<W>> {
    /// Writes to `out` through a large buffer; errors name `label` (the output's path). The
    /// caller owns `out`'s life (diskmeter writes to a temporary file and renames it into place).
    pub fn buffered(out: W, label: &Path) -> Result<Self, TraceError> {
        BinaryWriter::with_path(BufWriter::with_capacity(WRITE_BUF, out), label.to_path_buf(), false)
    }

    /// [`buffered`](BinaryWriter::buffered), writing version 2: records carry a latency.
    pub fn buffered_with_latency(out: W, label: &Path) -> Result<Self, TraceError> {
        BinaryWriter::with_path(BufWriter::with_capacity(WRITE_BUF, out), label.to_path_buf(), true)
    }
}

impl<W: Write + Seek> BinaryWriter<W> {
    /// Writes the header at `out`'s current position. Errors name the output `<output>`.
    pub fn new(out: W) -> Result<Self, TraceError> {
        BinaryWriter::with_path(out, PathBuf::from("<output>"), false)
    }

    /// [`new`](BinaryWriter::new), writing version 2: records carry a latency
    /// ([`push_with_latency`](BinaryWriter::push_with_latency)).
    pub fn new_with_latency(out: W) -> Result<Self, TraceError> {
        BinaryWriter::with_path(out, PathBuf::from("<output>"), true)
    }

    fn with_path(mut out: W, path: PathBuf, latency: bool) -> Result<Self, TraceError> {
        let io = |e| TraceError::io(&path, e);
        let start = out.stream_position().map_err(io)?;
        let mut h = [0u8; HEADER_LEN];
        let (magic, rest) = h.split_at_mut(8);
        magic.copy_from_slice(MAGIC);
        let (version_size, rest) = rest.split_at_mut(4);
        version_size.copy_from_slice(&version_and_size(latency));
        let (_flags, rest) = rest.split_at_mut(4);
        let (count, _reserved) = rest.split_at_mut(8);
        count.copy_from_slice(&UNKNOWN_COUNT.to_le_bytes());
        out.write_all(&h).map_err(io)?;
        Ok(BinaryWriter { out, start, latency, wrote: false, devices: Vec::new(), requests: 0, path })
    }

    /// Switches a writer that has written nothing but its header to version 2, whose records
    /// carry a latency (rewriting the header's version and record size). An error once a
    /// device or request has been written.
    pub fn enable_latency(&mut self) -> Result<(), TraceError> {
        if self.latency {
            return Ok(());
        }
        if self.wrote {
            return Err(TraceError::Binary(
                "cannot switch to version 2 (latencies) after records were written".to_string(),
            ));
        }
        let io = |e| TraceError::io(&self.path, e);
        let here = self.out.stream_position().map_err(io)?;
        self.out.seek(SeekFrom::Start(self.start + VERSION_AT)).map_err(io)?;
        self.out.write_all(&version_and_size(true)).map_err(io)?;
        self.out.seek(SeekFrom::Start(here)).map_err(io)?;
        self.latency = true;
        Ok(())
    }

    /// Whether records carry a latency (version 2).
    pub fn carries_latency(&self) -> bool {
        self.latency
    }

    fn record_len(&self) -> usize {
        if self.latency {
            RECORD_LEN_LATENCY
        } else {
            RECORD_LEN
        }
    }

    /// Defines the next device id (`devices().len()`) with this name and returns it.
    pub fn define_device(&mut self, name: &str) -> Result<u32, TraceError> {
        let id = u32::try_from(self.devices.len()).unwrap_or(u32::MAX);
        if id >= MAX_DEVICES {
            return Err(TraceError::Binary(format!("more than {MAX_DEVICES} devices")));
        }
        let bytes = name.as_bytes();
        if bytes.len() > MAX_NAME_LEN {
            return Err(TraceError::Binary(format!(
                "device name of {} bytes is longer than {MAX_NAME_LEN}: {:?}…",
                bytes.len(),
                name.chars().take(40).collect::<String>()
            )));
        }
        let record_len = self.record_len();
        let io = |e| TraceError::io(&self.path, e);
        let len = u32::try_from(bytes.len()).unwrap_or(0);
        self.wrote = true;
        self.out.write_all(&encode(0, 0, len, KIND_DEVICE, id)).map_err(io)?;
        if self.latency {
            self.out.write_all(&lat_bytes(None)).map_err(io)?;
        }
        self.out.write_all(bytes).map_err(io)?;
        let pad = bytes.len().next_multiple_of(record_len) - bytes.len();
        self.out.write_all(&[0u8; RECORD_LEN_LATENCY][..pad]).map_err(io)?;
        self.devices.push(name.to_string());
        Ok(id)
    }

    /// Devices defined so far, by id.
    pub fn devices(&self) -> &[String] {
        &self.devices
    }

    /// Appends a request. A device id not defined yet is defined (with all ids below it)
    /// under its decimal number as name. In version 2 its latency is written as unknown.
    pub fn push(&mut self, req: Request) -> Result<(), TraceError> {
        self.push_with_latency(req, None)
    }

    /// Appends a request with the latency its source recorded (`None`: unknown, as is
    /// `Some(0)` once written). A latency needs a version 2 writer: `Some` on a version 1
    /// writer is an error.
    pub fn push_with_latency(&mut self, req: Request, lat_ns: Option<u64>) -> Result<(), TraceError> {
        if req.dev >= MAX_DEVICES {
            return Err(TraceError::Binary(format!("device id {} does not fit in 24 bits", req.dev)));
        }
        if lat_ns.is_some() && !self.latency {
            return Err(TraceError::Binary(
                "a version 1 trace has no latencies: write it with BinaryWriter::new_with_latency".to_string(),
            ));
        }
        while self.devices.len() <= req.dev as usize {
            self.define_device(&self.devices.len().to_string())?;
        }
        self.wrote = true;
        let rec = encode(req.t_ns, req.offset, req.len, kind_of(req.op), req.dev);
        let io = |e| TraceError::io(&self.path, e);
        if self.latency {
            let mut long = [0u8; RECORD_LEN_LATENCY];
            let (head, tail) = long.split_at_mut(RECORD_LEN);
            head.copy_from_slice(&rec);
            tail.copy_from_slice(&lat_bytes(lat_ns));
            self.out.write_all(&long).map_err(io)?;
        } else {
            self.out.write_all(&rec).map_err(io)?;
        }
        self.requests += 1;
        Ok(())
    }

    /// Requests written so far.
    pub fn requests(&self) -> u64 {
        self.requests
    }

    /// Records the request count in the header, flushes, and returns the output.
    pub fn finish(mut self) -> Result<W, TraceError> {
        let path = self.path.clone();
        let io = |e| TraceError::io(&path, e);
        self.out.seek(SeekFrom::Start(self.start + COUNT_AT)).map_err(io)?;
        self.out.write_all(&self.requests.to_le_bytes()).map_err(io)?;
        self.out.seek(SeekFrom::End(0)).map_err(io)?;
        self.out.flush().map_err(io)?;
        Ok(self.out)
    }
}

/// Reads a binary trace, as stored: no rebasing, no filtering, device ids as written (use
/// [`crate::open`] with [`TraceFormat::Binary`] for the [`ReadOptions`] treatment).
///
/// [`TraceFormat::Binary`]: crate::TraceFormat::Binary
/// [`ReadOptions`]: crate::ReadOptions
pub struct BinaryReader<R: Read> {
    inner: R,
    buf: Box<[u8]>,
    pos: usize,
    end: usize,
    /// File offset of `buf[0]`.
    base: u64,
    eof: bool,
    done: bool,
    devices: Vec<String>,
    count: Option<u64>,
    seen: u64,
    /// [`RECORD_LEN`] or [`RECORD_LEN_LATENCY`], from the header's version.
    record_len: usize,
    /// Latency of the request last returned.
    latency: Option<u64>,
    path: PathBuf,
}

impl BinaryReader<Box<dyn BufRead + Send>> {
    /// Opens a binary trace file (gzip'd or not).
    pub fn open(path: &Path) -> Result<Self, TraceError> {
        let file = File::open(path).map_err(|e| TraceError::io(path, e))?;
        let mut input: Box<dyn BufRead + Send> = Box::new(BufReader::with_capacity(64 * 1024, file));
        if input.fill_buf().map_err(|e| TraceError::io(path, e))?.starts_with(&[0x1f, 0x8b]) {
            input = Box::new(BufReader::with_capacity(READ_BUF, flate2::bufread::MultiGzDecoder::new(input)));
        }
        BinaryReader::with_path(input, path.to_path_buf())
    }
}

impl<R: Read> BinaryReader<R> {
    /// Reads and checks the header. Errors name the input `<input>`.
    pub fn new(inner: R) -> Result<Self, TraceError> {
        BinaryReader::with_path(inner, PathBuf::from("<input>"))
    }

    pub(crate) fn with_path(inner: R, path: PathBuf) -> Result<Self, TraceError> {
        let mut r = BinaryReader {
            inner,
            buf: vec![0u8; READ_BUF].into_boxed_slice(),
            pos: 0,
            end: 0,
            base: 0,
            eof: false,
            done: false,
            devices: Vec::new(),
            count: None,
            seen: 0,
            record_len: RECORD_LEN,
            latency: None,
            path,
        };
        if !r.fill(HEADER_LEN)? {
            return Err(TraceError::Binary(format!(
                "not a diskmeter binary trace: shorter than the {HEADER_LEN}-byte header"
            )));
        }
        let h: [u8; HEADER_LEN] = r.take_bytes::<HEADER_LEN>().unwrap_or([0; HEADER_LEN]);
        let [m0, m1, m2, m3, m4, m5, m6, m7, v0, v1, s0, s1, _, _, _, _, c0, c1, c2, c3, c4, c5, c6, c7, ..] = h;
        if [m0, m1, m2, m3, m4, m5, m6, m7] != *MAGIC {
            return Err(TraceError::Binary(
                "not a diskmeter binary trace (it does not start with \"DMTRACE1\")".to_string(),
            ));
        }
        let version = u16::from_le_bytes([v0, v1]);
        r.record_len = match version {
            VERSION => RECORD_LEN,
            VERSION_LATENCY => RECORD_LEN_LATENCY,
            _ => {
                return Err(TraceError::Binary(format!(
                    "version {version} is not supported (this diskmeter reads versions {VERSION} and {VERSION_LATENCY})"
                )))
            }
        };
        let size = u16::from_le_bytes([s0, s1]);
        if usize::from(size) != r.record_len {
            return Err(TraceError::Binary(format!(
                "record size {size} is not supported (expected {} in version {version})",
                r.record_len
            )));
        }
        let count = u64::from_le_bytes([c0, c1, c2, c3, c4, c5, c6, c7]);
        r.count = (count != UNKNOWN_COUNT).then_some(count);
        Ok(r)
    }

    /// Device names by id, as defined so far (a device is defined before its first request).
    pub fn devices(&self) -> &[String] {
        &self.devices
    }

    /// The format version: [`VERSION`] (1), or [`VERSION_LATENCY`] (2) whose records carry
    /// a latency.
    pub fn version(&self) -> u16 {
        if self.carries_latency() {
            VERSION_LATENCY
        } else {
            VERSION
        }
    }

    /// Whether records carry a latency (version 2).
    pub fn carries_latency(&self) -> bool {
        self.record_len == RECORD_LEN_LATENCY
    }

    /// The latency stored with the request most recently returned by `next()`, in ns;
    /// `None` in version 1, when it was stored as unknown (0), and before the first request
    /// or after the end.
    pub fn recorded_latency_ns(&self) -> Option<u64> {
        self.latency
    }

    /// Request count from the header; `None` if the writer did not finish.
    pub fn request_count(&self) -> Option<u64> {
        self.count
    }

    /// Makes at least `need` bytes available at `pos`; `false` if the input ends first.
    fn fill(&mut self, need: usize) -> Result<bool, TraceError> {
        if self.end - self.pos >= need {
            return Ok(true);
        }
        self.buf.copy_within(self.pos..self.end, 0);
        self.base += self.pos as u64;
        self.end -= self.pos;
        self.pos = 0;
        while self.end < need && !self.eof {
            let Some(space) = self.buf.get_mut(self.end..) else { break };
            match self.inner.read(space) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(TraceError::io(&self.path, e)),
            }
        }
        Ok(self.end >= need)
    }

    /// The next `N` buffered bytes (call `fill(N)` first).
    #[inline]
    fn take_bytes<const N: usize>(&mut self) -> Option<[u8; N]> {
        let bytes = self.buf.get(self.pos..)?.first_chunk::<N>()?;
        self.pos += N;
        Some(*bytes)
    }

    fn offset(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Fast path: a whole request record already buffered.
    #[inline]
    fn next_request(&mut self) -> Result<Option<Request>, TraceError> {
        let avail = self.buf.get(self.pos..self.end).unwrap_or_default();
        if let (Some(rec), true) = (avail.first_chunk::<RECORD_LEN>(), avail.len() >= self.record_len) {
            let (t_ns, offset, len, kind, dev) = decode(rec);
            if let Some(op) = op_of(kind) {
                if (dev as usize) < self.devices.len() {
                    self.latency = self.latency_of(avail);
                    self.pos += self.record_len;
                    self.seen += 1;
                    return Ok(Some(Request { t_ns, offset, len, op, dev }));
                }
            }
        }
        self.next_request_slow()
    }

    /// The latency of the version 2 record at the start of `rec` (`None` in version 1).
    #[inline]
    fn latency_of(&self, rec: &[u8]) -> Option<u64> {
        if self.record_len != RECORD_LEN_LATENCY {
            return None;
        }
        let lat = rec.get(RECORD_LEN..RECORD_LEN_LATENCY)?.first_chunk::<8>()?;
        Some(u64::from_le_bytes(*lat)).filter(|l| *l != 0)
    }

    #[cold]
    fn next_request_slow(&mut self) -> Result<Option<Request>, TraceError> {
        loop {
            if !self.fill(self.record_len)? {
                let stray = self.end - self.pos;
                if stray != 0 {
                    return Err(TraceError::Binary(format!(
                        "truncated: {stray} stray bytes at offset {} after the last whole record",
                        self.offset()
                    )));
                }
                if let Some(count) = self.count.filter(|c| *c != self.seen) {
                    return Err(TraceError::Binary(format!(
                        "truncated: the header promises {count} requests, the file holds {}",
                        self.seen
                    )));
                }
                return Ok(None);
            }
            let at = self.offset();
            let latency = self.latency_of(self.buf.get(self.pos..self.end).unwrap_or_default());
            let Some(rec) = self.take_bytes::<RECORD_LEN>() else { return Ok(None) };
            self.pos += self.record_len - RECORD_LEN;
            let (t_ns, offset, len, kind, dev) = decode(&rec);
            if let Some(op) = op_of(kind) {
                if dev as usize >= self.devices.len() {
                    return Err(TraceError::Binary(format!(
                        "record at offset {at} uses device {dev}, which is not defined"
                    )));
                }
                self.latency = latency;
                self.seen += 1;
                return Ok(Some(Request { t_ns, offset, len, op, dev }));
            }
            if kind != KIND_DEVICE {
                return Err(TraceError::Binary(format!("record at offset {at} has unknown kind {kind}")));
            }
            self.define(at, dev, len as usize)?;
        }
    }

    fn define(&mut self, at: u64, dev: u32, len: usize) -> Result<(), TraceError> {
        if dev as usize != self.devices.len() {
            return Err(TraceError::Binary(format!(
                "device record at offset {at} defines id {dev}, expected {}",
                self.devices.len()
            )));
        }
        if len > MAX_NAME_LEN {
            return Err(TraceError::Binary(format!(
                "device record at offset {at}: name of {len} bytes is longer than {MAX_NAME_LEN}"
            )));
        }
        let padded = len.next_multiple_of(self.record_len);
        if !self.fill(padded)? {
            return Err(TraceError::Binary(format!(
                "truncated: device name at offset {} is cut off",
                at + self.record_len as u64
            )));
        }
        let name = self.buf.get(self.pos..self.pos + len).unwrap_or_default();
        let name = std::str::from_utf8(name)
            .map_err(|_| TraceError::Binary(format!("device record at offset {at}: name is not UTF-8")))?;
        self.devices.push(name.to_string());
        self.pos += padded;
        Ok(())
    }
}

impl<R: Read> Iterator for BinaryReader<R> {
    type Item = Result<Request, TraceError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            self.latency = None;
            return None;
        }
        match self.next_request() {
            Ok(Some(r)) => Some(Ok(r)),
            Ok(None) => {
                self.latency = None;
                self.done = true;
                None
            }
            Err(e) => {
                self.done = true;
                self.latency = None;
                Some(Err(e))
            }
        }
    }
}
