//! `replay`: a block trace played against real targets — at its own times (open loop), as
//! fast as possible under a depth limit, or under the trace's own outstanding count — pass
//! after pass, with the fidelity (how late each request was issued) measured and shown.
//!
//! Flow: [`Config::new`] checks every option; [`run`] reads the trace once without keeping
//! it ([`scan`]: validation, span, largest request, devices — a bad trace is exit 2 before
//! any target is touched), opens its targets through the engine's one entry
//! (`engine::measure::Measurement`: the memory it pins, the safety guard, `--overwrite`, a
//! created test file filled before it is read), then streams the trace again for each pass
//! through [`Mapper`] into the engine's replay loop (`engine::measure::replay`).

use crate::checks::{Checks, Command};
use crate::parse::{engine, u32_count};
use crate::session::{finish_error, new_doc, open_measurement, Observer, TargetFlags};
use crate::trace_options::TraceOptions;
use crate::{Error, Result};
use engine::measure::{
    self, direct_block, mem_align, target_info, Lane, Need, Needs, OpenTarget, ReplayConfig, ReplayItem, ReplayOp,
    ReplayOutcome, ReplaySource, TargetKind, TargetPlan, Timing, CHUNK,
};
use spec::units;
use spec::{EngineKind, JobSpec, RwMode};
use stats::codes;
use stats::replay::{Fidelity, ReplayOpStats, ReplayPass, ReplayResult, ReplayTarget, ReplayTrace};
use stats::{DirStats, JobResult, LatHist, ResultDoc};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;
use trace::{Op, ReadOptions, TraceFormat, TraceReader};

/// The timing when the command line names none.
pub const TIMING: &str = "original";
/// The largest request replayed; longer ones are cut to it (and counted).
pub const MAX_REQUEST: u64 = 64 << 20;
/// Default requests outstanding at most: `afap`, and the slots of the open-loop timings.
pub const DEFAULT_QD_AFAP: u32 = 32;
pub const DEFAULT_QD_OPEN: u32 = 256;
/// The buffers (2 per slot) may take at most this much memory; --qd is lowered to fit.
const MAX_POOL: u64 = 1 << 30;
/// A test file diskmeter creates for a trace is at most this large unless --size says so.
const MAX_DEFAULT_FILE: u64 = 64 << 30;
/// Share of requests the tool may issue late before `replay-lagging`.
const LAGGING_SHARE: f64 = 0.01;

/// `replay`'s options as typed.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub input: TraceOptions,
    pub target: Option<PathBuf>,
    /// `DEVICE=PATH` entries: several trace devices onto several targets.
    pub devices_to_targets: Vec<String>,
    pub timing: Option<String>,
    pub speed: Option<String>,
    pub qd: Option<String>,
    pub map: Option<String>,
    pub passes: Option<String>,
    pub engine: Option<String>,
    /// Size of a test file diskmeter creates (default: the trace's span).
    pub size: Option<String>,
    pub seed: Option<u64>,
    pub flags: TargetFlags,
}

/// How trace addresses land on a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapMode {
    /// The trace's offset from its lowest address, unchanged (refused if it does not fit).
    Offset,
    /// Wrapped around the target's size.
    Modulo,
    /// Scaled: the trace's span stretched or squeezed onto the target.
    Scale,
}

impl MapMode {
    fn name(self) -> &'static str {
        match self {
            MapMode::Offset => "offset",
            MapMode::Modulo => "modulo",
            MapMode::Scale => "scale",
        }
    }
}

/// A validated `replay`.
#[derive(Debug, Clone)]
pub struct Config {
    path: PathBuf,
    format: Option<TraceFormat>,
    read: ReadOptions,
    /// Targets and the trace devices each takes (empty = every device).
    targets: Vec<(PathBuf, Vec<String>)>,
    timing: Timing,
    speed: f64,
    qd: Option<u32>,
    map: Option<MapMode>,
    passes: u32,
    engine: EngineKind,
    size: Option<u64>,
    seed: u64,
    flags: TargetFlags,
}

impl Config {
    /// Checks every option (the trace itself is read by [`run`]).
    pub fn new(o: &Options) -> Result<Config> {
        let input = crate::trace_options::trace_input(&o.input)?;
        let timing = match o.timing.as_deref().unwrap_or("original") {
            "original" => Timing::Original,
            "afap" => Timing::Afap,
            "depth" => Timing::Depth,
            other => {
                return Err(Error::usage(format!(
                    "invalid value for --timing: \"{other}\"; use original (the trace's own times), afap (as fast \
                     as possible under --qd) or depth (the trace's own outstanding count)"
                )))
            }
        };
        let speed = match &o.speed {
            None => 1.0,
            Some(_) if timing != Timing::Original => {
                return Err(Error::usage("--speed scales the trace's own times: it needs --timing original"))
            }
            Some(s) => match s.trim().trim_end_matches('x').parse::<f64>() {
                Ok(v) if v.is_finite() && v > 0.0 && v <= 1e6 => v,
                _ => {
                    return Err(Error::usage(format!(
                        "invalid value for --speed: \"{s}\"; give a factor above 0 such as 2.0 (twice as fast) or 0.5"
                    )))
                }
            },
        };
        let qd = o.qd.as_deref().map(|s| u32_count("--qd", s)).transpose()?;
        if let Some(q) = qd {
            if q == 0 || q > spec::validate::MAX_QD {
                return Err(Error::usage(format!("invalid value for --qd: use 1 to {}", spec::validate::MAX_QD)));
            }
        }
        let map = match o.map.as_deref() {
            None => None,
            Some("modulo") => Some(MapMode::Modulo),
            Some("scale") => Some(MapMode::Scale),
            Some("offset") => Some(MapMode::Offset),
            Some(other) => {
                return Err(Error::usage(format!("invalid value for --map: \"{other}\"; use modulo, scale or offset")))
            }
        };
        let passes = o.passes.as_deref().map(|s| u32_count("--passes", s)).transpose()?.unwrap_or(1);
        if passes == 0 || passes > 1000 {
            return Err(Error::usage("invalid value for --passes: use 1 to 1000"));
        }
        let engine = o.engine.as_deref().map(|s| engine("--engine", s)).transpose()?.unwrap_or(EngineKind::NATIVE);
        if engine == EngineKind::Mem {
            return Err(Error::usage("--engine mem does not replay traces; use io_uring, psync or null"));
        }
        let size = o.size.as_deref().map(|s| units::parse_size("--size", s)).transpose()?;
        let targets = targets(o, engine)?;
        if o.flags.histograms {
            return Err(Error::usage("--histograms is not available for replay"));
        }
        Ok(Config {
            path: input.path,
            format: input.format,
            read: input.opts,
            targets,
            timing,
            speed,
            qd,
            map,
            passes,
            engine,
            size,
            seed: o.seed.unwrap_or(0x5eed_da7a),
            flags: o.flags.clone(),
        })
    }
}

/// The targets: `--target PATH` (every device), or `--devices-to-targets DEV=PATH …`.
fn targets(o: &Options, engine: EngineKind) -> Result<Vec<(PathBuf, Vec<String>)>> {
    if o.devices_to_targets.is_empty() {
        return match (&o.target, engine) {
            (Some(t), _) => Ok(vec![(t.clone(), Vec::new())]),
            (None, EngineKind::Null) => Ok(vec![(PathBuf::from("null"), Vec::new())]),
            (None, _) => Err(Error::usage(
                "replay needs a target: add --target PATH (a file or a block device), or --devices-to-targets \
                 DEVICE=PATH for each device of the trace",
            )),
        };
    }
    if o.target.is_some() {
        return Err(Error::usage("give either --target or --devices-to-targets, not both"));
    }
    if o.input.device.is_some() {
        return Err(Error::usage("--device picks one device for --target; with --devices-to-targets leave it out"));
    }
    let mut out: Vec<(PathBuf, Vec<String>)> = Vec::new();
    for entry in o.devices_to_targets.iter().flat_map(|e| e.split(';')).filter(|e| !e.trim().is_empty()) {
        let Some((dev, path)) = entry.rsplit_once('=') else {
            return Err(Error::usage(format!(
                "invalid value for --devices-to-targets: \"{entry}\"; write DEVICE=PATH, e.g. 8,16=/dev/sdb"
            )));
        };
        let (dev, path) = (dev.trim().to_string(), PathBuf::from(path.trim()));
        if dev.is_empty() || path.as_os_str().is_empty() {
            return Err(Error::usage(format!(
                "invalid value for --devices-to-targets: \"{entry}\"; write DEVICE=PATH, e.g. 8,16=/dev/sdb"
            )));
        }
        if out.iter().any(|(_, ds)| ds.contains(&dev)) {
            return Err(Error::usage(format!("--devices-to-targets names the device {dev} twice")));
        }
        match out.iter_mut().find(|(p, _)| *p == path) {
            Some((_, ds)) => ds.push(dev),
            None => out.push((path, vec![dev])),
        }
    }
    if out.len() > usize::from(u16::MAX) {
        return Err(Error::usage("--devices-to-targets: too many targets"));
    }
    Ok(out)
}

/// What one streaming read of the trace found.
#[derive(Debug, Clone, Default)]
pub struct Scan {
    pub requests: u64,
    pub devices: Vec<String>,
    /// Per lane: lowest and highest byte addressed, requests.
    pub lanes: Vec<LaneScan>,
    pub max_len: u64,
    /// The smallest request (0 before the first).
    pub min_len: u64,
    pub duration_ns: u64,
    pub reads: bool,
    pub writes: bool,
    pub discards: bool,
    pub recorded_latency: bool,
    pub skipped_lines: u64,
    /// Requests of devices no target takes.
    pub unmapped: u64,
}

#[derive(Debug, Clone, Copy, Default)]
pub struct LaneScan {
    pub start: u64,
    pub end: u64,
    pub requests: u64,
}

/// The lane of each trace device id (grown as devices appear).
struct LaneOf<'a> {
    targets: &'a [(PathBuf, Vec<String>)],
    ids: Vec<Option<u16>>,
}

impl LaneOf<'_> {
    #[inline]
    fn get(&mut self, reader: &TraceReader, dev: u32) -> Option<u16> {
        let i = dev as usize;
        if let Some(l) = self.ids.get(i) {
            return *l;
        }
        while self.ids.len() <= i {
            let id = self.ids.len();
            let name = reader.devices().get(id).map(String::as_str).unwrap_or("");
            let lane = if self.targets.len() == 1 && self.targets[0].1.is_empty() {
                Some(0)
            } else {
                self.targets.iter().position(|(_, ds)| ds.iter().any(|d| d == name)).map(|p| p as u16)
            };
            self.ids.push(lane);
        }
        self.ids.get(i).copied().flatten()
    }
}

fn open_reader(cfg: &Config, format: &TraceFormat) -> Result<TraceReader> {
    trace::open(&cfg.path, format, &cfg.read).map_err(|e| bad_trace(&cfg.path, e))
}

fn bad_trace(path: &Path, e: trace::TraceError) -> Error {
    trace::from_the_start(path, e).into()
}

fn format_of(cfg: &Config) -> Result<TraceFormat> {
    let input = trace::TraceInput { path: cfg.path.clone(), format: cfg.format.clone(), opts: cfg.read.clone() };
    Ok(trace::trace_format(&input)?)
}

/// Reads the whole trace once, keeping nothing but its extent: any error is exit 2 here,
/// before a target is opened.
pub fn scan(cfg: &Config, format: &TraceFormat, stop: &AtomicBool) -> Result<Scan> {
    let mut reader = open_reader(cfg, format)?;
    let mut s =
        Scan { lanes: vec![LaneScan { start: u64::MAX, ..LaneScan::default() }; cfg.targets.len()], ..Scan::default() };
    let mut lanes = LaneOf { targets: &cfg.targets, ids: Vec::new() };
    let mut n = 0u64;
    while let Some(r) = reader.next() {
        let r = r.map_err(|e| bad_trace(&cfg.path, e))?;
        n += 1;
        if n.is_multiple_of(1 << 16) && stop.load(Ordering::Relaxed) {
            return Err(Error::Interrupted("interrupted while reading the trace; nothing was replayed".into()));
        }
        let Some(lane) = lanes.get(&reader, r.dev) else {
            s.unmapped += 1;
            continue;
        };
        s.requests += 1;
        s.duration_ns = s.duration_ns.max(r.t_ns);
        s.recorded_latency |= reader.recorded_latency_ns().is_some_and(|l| l > 0);
        match r.op {
            Op::Read => s.reads = true,
            Op::Write => s.writes = true,
            Op::Discard => s.discards = true,
            Op::Flush => {}
        }
        if r.op != Op::Flush && r.len > 0 {
            let l = &mut s.lanes[usize::from(lane)];
            l.start = l.start.min(r.offset);
            l.end = l.end.max(r.offset.saturating_add(u64::from(r.len)));
            l.requests += 1;
            s.max_len = s.max_len.max(u64::from(r.len));
            s.min_len = if s.min_len == 0 { u64::from(r.len) } else { s.min_len.min(u64::from(r.len)) };
        }
    }
    s.devices = reader.devices().to_vec();
    s.skipped_lines = reader.skipped();
    for l in &mut s.lanes {
        if l.start == u64::MAX {
            l.start = 0;
        }
    }
    if s.requests == 0 {
        let what = match (&cfg.read.device, cfg.targets.iter().any(|(_, d)| !d.is_empty())) {
            (Some(d), _) => format!("no requests for the device {d}"),
            (None, true) => "no requests for the devices given in --devices-to-targets".to_string(),
            (None, false) => "no requests".to_string(),
        };
        let names =
            if s.devices.is_empty() { String::new() } else { format!(" (the trace names: {})", s.devices.join(", ")) };
        return Err(Error::usage(format!("{} holds {what}{names}; nothing to replay", cfg.path.display())));
    }
    Ok(s)
}

/// How one lane's addresses are mapped.
#[derive(Debug, Clone, Copy)]
struct LaneMap {
    base: u64,
    span: u64,
    size: u64,
    /// Direct-I/O unit (offsets and lengths are multiples of it).
    unit: u64,
}

/// Streams the trace as mapped, timed requests (the engine's [`ReplaySource`]).
struct Mapper<'a> {
    reader: TraceReader,
    lanes: LaneOf<'a>,
    maps: Vec<LaneMap>,
    mode: MapMode,
    timing: Timing,
    speed: f64,
    max_len: u64,
    /// Completion times (trace clock) of earlier requests still outstanding (`depth`).
    pending: BinaryHeap<Reverse<u64>>,
    realigned: u64,
    clamped: u64,
    path: PathBuf,
}

/// Where a request of `len` bytes at trace `offset` lands: (offset, length, realigned,
/// clamped). Inside `[0, size)` always; offset and length multiples of the unit.
#[inline]
fn place(m: &LaneMap, mode: MapMode, max_len: u64, offset: u64, len: u32) -> (u64, u32, bool, bool) {
    let mut asked = u64::from(len);
    let clamped = asked > max_len;
    if clamped {
        asked = max_len;
    }
    let len = (asked.div_ceil(m.unit) * m.unit).min(m.size / m.unit * m.unit).max(m.unit);
    let rel = offset.saturating_sub(m.base);
    let mut o = match mode {
        MapMode::Offset => rel,
        MapMode::Modulo => rel % m.size.max(1),
        MapMode::Scale => ((u128::from(rel) * u128::from(m.size)) / u128::from(m.span.max(1))) as u64,
    };
    if o + len > m.size {
        o = m.size - len;
    }
    let aligned = o / m.unit * m.unit;
    (aligned, len as u32, aligned != o || len != asked, clamped)
}

impl ReplaySource for Mapper<'_> {
    fn fill(&mut self, chunk: &mut Vec<ReplayItem>) -> std::result::Result<bool, String> {
        while chunk.len() < CHUNK {
            let r = match self.reader.next() {
                None => return Ok(false),
                Some(Ok(r)) => r,
                Some(Err(e)) => return Err(format!("{}: {e}", self.path.display())),
            };
            let Some(lane) = self.lanes.get(&self.reader, r.dev) else { continue };
            let recorded = self.reader.recorded_latency_ns().unwrap_or(0);
            let op = match r.op {
                Op::Read => ReplayOp::Read,
                Op::Write => ReplayOp::Write,
                Op::Discard => ReplayOp::Discard,
                Op::Flush => ReplayOp::Flush,
            };
            let (offset, len) = match op {
                ReplayOp::Flush => (0, 0),
                _ if r.len == 0 => continue,
                _ => {
                    let (o, l, realigned, clamped) =
                        place(&self.maps[usize::from(lane)], self.mode, self.max_len, r.offset, r.len);
                    self.realigned += u64::from(realigned);
                    self.clamped += u64::from(clamped);
                    (o, l)
                }
            };
            let mut depth = 0;
            if self.timing == Timing::Depth {
                while self.pending.peek().is_some_and(|Reverse(t)| *t <= r.t_ns) {
                    self.pending.pop();
                }
                depth = self.pending.len() as u32 + 1;
                if recorded > 0 {
                    self.pending.push(Reverse(r.t_ns.saturating_add(recorded)));
                }
            }
            let due_ns = if self.timing == Timing::Original { (r.t_ns as f64 / self.speed) as u64 } else { 0 };
            chunk.push(ReplayItem { due_ns, offset, len, op, lane, depth, recorded_ns: recorded });
        }
        Ok(true)
    }
}

/// Runs the replay; `stop` is raised by a signal (the result is then partial).
/// `replay`'s checks.
const CHECKS: Checks = Checks::new(Command::Replay);

pub fn run(cfg: &Config, stop: Arc<AtomicBool>, obs: &mut dyn Observer) -> Result<ResultDoc> {
    let format = format_of(cfg)?;
    obs.phase(&format!("reading {}", cfg.path.display()), None);
    let scanned = scan(cfg, &format, &stop);
    obs.phase_done();
    let s = scanned?;
    if cfg.timing == Timing::Depth && !s.recorded_latency {
        return Err(Error::usage(format!(
            "--timing depth needs the trace's own completion times, and {} has none; use a blkparse trace with D \
             and C events, an MSR trace, or one recorded by diskmeter capture — or --timing original/afap",
            cfg.path.display()
        )));
    }
    let opts = cfg.flags.session(false, stop.clone());
    let null = cfg.engine == EngineKind::Null;
    let direct = !cfg.flags.buffered;

    // The outstanding requests' buffers: at most MAX_POOL.
    let max_len = s.max_len.clamp(512, MAX_REQUEST);
    let slot_len = max_len.div_ceil(4096) * 4096;
    let mut qd = cfg.qd.unwrap_or(if cfg.timing == Timing::Afap { DEFAULT_QD_AFAP } else { DEFAULT_QD_OPEN });
    let mut doc = new_doc("replay");
    let fit = (MAX_POOL / (2 * slot_len)).max(1) as u32;
    if qd > fit {
        doc.warn(
            codes::REPLAY_ADJUSTED,
            format!(
                "at most {fit} requests can be outstanding with requests of {} bytes (buffers are capped at 1 GiB); \
                 --qd {qd} lowered to {fit}",
                slot_len
            ),
        );
        qd = fit;
    }
    let pinned = if cfg.engine == EngineKind::IoUring { 2 * slot_len * u64::from(qd) } else { 0 };

    // What each target must hold, checked before any is opened (a bad one writes nothing).
    let mut plans = Vec::new();
    let mut region_ends = Vec::new();
    for (i, (path, _)) in cfg.targets.iter().enumerate() {
        let l = s.lanes[i];
        let span = l.end.saturating_sub(l.start).max(512);
        if null {
            continue;
        }
        let existing = measure::probe(path).filter(|p| p.exists);
        let region_end = match (&existing, cfg.size) {
            (Some(p), Some(sz)) => sz.min(p.size_bytes),
            (Some(p), None) => p.size_bytes,
            (None, Some(sz)) => sz,
            (None, None) if span > MAX_DEFAULT_FILE => {
                return Err(Error::usage(format!(
                    "the trace spans {} bytes on {}; give --size to create a smaller test file (requests are then \
                     mapped onto it with --map modulo)",
                    span,
                    path.display()
                )))
            }
            (None, None) => span.div_ceil(1 << 20) << 20,
        };
        let needs =
            Needs { reads: s.reads, writes: s.writes || s.discards, region_start: 0, region_end, direct, bs_gcd: 0 };
        plans.push(TargetPlan { path: path.clone(), needs, options: opts.target.clone() });
        region_ends.push(region_end);
    }
    let need = Need::pinned_only(pinned);
    let m = open_measurement(&need, (!null).then_some(plans), &opts, obs)?;
    if m.stopped() || stop.load(Ordering::Relaxed) {
        finish_error(&mut doc, None, true);
        return Ok(doc);
    }
    let mut opened: Vec<Option<&OpenTarget>> = Vec::new();
    let mut maps = Vec::new();
    let mut align = 4096usize;
    for (i, (path, _)) in cfg.targets.iter().enumerate() {
        let l = s.lanes[i];
        let span = l.end.saturating_sub(l.start).max(512);
        let Some(t) = m.targets().get(i) else {
            maps.push(LaneMap { base: l.start, span, size: span.div_ceil(4096) * 4096, unit: 512 });
            opened.push(None);
            continue;
        };
        let size = region_ends[i].min(t.probe.size_bytes);
        let unit = if t.direct { direct_block(&t.probe).max(512) } else { 512 };
        if size < unit || size < s.max_len.min(MAX_REQUEST).div_ceil(unit) * unit {
            return Err(Error::usage(format!(
                "{} holds {size} bytes, less than one request of the trace ({} bytes); choose a larger target",
                path.display(),
                s.max_len
            )));
        }
        align = align.max(mem_align(&t.probe));
        maps.push(LaneMap { base: l.start, span, size, unit });
        opened.push(Some(t));
    }
    let auto_mode =
        cfg.map.unwrap_or_else(|| if maps.iter().any(|m| m.span > m.size) { MapMode::Modulo } else { MapMode::Offset });
    if auto_mode == MapMode::Offset {
        if let Some((i, m)) = maps.iter().enumerate().find(|(_, m)| m.span > m.size) {
            return Err(Error::usage(format!(
                "--map offset: the trace spans {} bytes but {} holds {}; use --map modulo or --map scale",
                m.span,
                cfg.targets[i].0.display(),
                m.size
            )));
        }
    }
    let lanes: Vec<Lane> = opened
        .iter()
        .map(|t| match t {
            Some(t) => Lane {
                fd: platform::target::raw(&t.file),
                flags: platform::target::reopen_flags(platform::target::OpenHow {
                    direct: t.direct,
                    ..Default::default()
                }),
                block: t.probe.kind == TargetKind::Block,
            },
            None => Lane { fd: platform::target::NO_RAW, flags: 0, block: false },
        })
        .collect();
    if let Some(t) = opened.iter().flatten().next() {
        doc.target = Some(target_info(t));
    } else {
        doc.target = Some(stats::TargetInfo::new("null", stats::TargetKind::Null, maps[0].size));
    }
    let watch = opened.iter().flatten().next().map(|t| measure::watch_for(&t.probe));
    let planned = if cfg.timing == Timing::Original {
        Duration::from_nanos((s.duration_ns as f64 / cfg.speed) as u64)
    } else {
        Duration::ZERO
    };
    let rcfg = ReplayConfig {
        timing: cfg.timing,
        qd,
        slot_len: slot_len as usize,
        align,
        engine: cfg.engine,
        planned,
        seed: cfg.seed,
    };
    let mut result = ReplayResult {
        trace: ReplayTrace {
            path: cfg.path.display().to_string(),
            format: format.to_string(),
            requests: s.requests,
            devices: s.devices.clone(),
            span_start: s.lanes.iter().map(|l| l.start).min().unwrap_or(0),
            span_end: s.lanes.iter().map(|l| l.end).max().unwrap_or(0),
            duration_s: s.duration_ns as f64 / 1e9,
            recorded_latency: s.recorded_latency,
            skipped_lines: s.skipped_lines,
        },
        timing: match cfg.timing {
            Timing::Original => "original",
            Timing::Afap => "afap",
            Timing::Depth => "depth",
        }
        .into(),
        speed: cfg.speed,
        qd,
        map: auto_mode.name().into(),
        targets: cfg
            .targets
            .iter()
            .zip(&maps)
            .map(|((p, ds), m)| ReplayTarget {
                path: p.display().to_string(),
                size_bytes: m.size,
                devices: if ds.is_empty() { s.devices.clone() } else { ds.clone() },
                used_bytes: match auto_mode {
                    MapMode::Offset => m.span.min(m.size),
                    _ => m.size,
                },
            })
            .collect(),
        realigned: 0,
        clamped: 0,
        max_request_bytes: max_len,
        passes: Vec::new(),
    };
    if s.devices.len() > 1 && cfg.targets.len() == 1 && cfg.read.device.is_none() {
        doc.warn(
            codes::REPLAY_ADJUSTED,
            format!(
                "the trace names {} devices ({}); all are replayed onto {} — pick one with --device, or map each with \
                 --devices-to-targets",
                s.devices.len(),
                s.devices.join(", "),
                cfg.targets[0].0.display()
            ),
        );
    }
    if s.unmapped > 0 {
        doc.warn(
            codes::REPLAY_ADJUSTED,
            format!("{} requests of devices that no target takes were left out", s.unmapped),
        );
    }
    // The checks see the replay as one job of the trace's largest request.
    let shape = JobSpec {
        name: "replay".into(),
        rw: match (s.reads, s.writes || s.discards) {
            (true, false) => RwMode::RandRead,
            (false, true) => RwMode::RandWrite,
            _ => RwMode::RandRw,
        },
        bs: max_len,
        qd,
        engine: cfg.engine,
        direct,
        ..JobSpec::default()
    };
    for t in opened.iter().flatten() {
        CHECKS.before(&mut doc, &[&shape], t, obs);
    }

    for pass in 1..=cfg.passes {
        let mut mapper = Mapper {
            reader: open_reader(cfg, &format)?,
            lanes: LaneOf { targets: &cfg.targets, ids: Vec::new() },
            maps: maps.clone(),
            mode: auto_mode,
            timing: cfg.timing,
            speed: cfg.speed,
            max_len,
            pending: BinaryHeap::new(),
            realigned: 0,
            clamped: 0,
            path: cfg.path.clone(),
        };
        let label = if cfg.passes > 1 { format!("replay, pass {pass} of {}", cfg.passes) } else { "replay".into() };
        obs.phase(&label, (!planned.is_zero()).then_some(planned));
        let before = snapshot(&watch);
        let t0 = std::time::Instant::now();
        let out = measure::replay(&lanes, &mut mapper, &rcfg, m.control(), &mut |t| obs.tick(t));
        let wall = t0.elapsed().as_secs_f64();
        let after = snapshot(&watch);
        obs.phase_done();
        let out = out?;
        result.realigned = mapper.realigned;
        result.clamped = mapper.clamped;
        let mut job = pass_job(cfg, pass, &out, qd, (s.min_len.clamp(1, max_len), max_len));
        job.device_view = device_view(&watch, before, after, wall, &job);
        CHECKS.result(&mut doc, &mut job, &opts.ctl, false);
        result.passes.push(pass_figures(pass, &out, cfg.timing));
        let stopped = out.error.is_some() || out.interrupted;
        doc.results.push(job);
        if stopped {
            finish_error(&mut doc, out.error.clone(), out.interrupted);
            break;
        }
    }
    fidelity_warnings(&mut doc, &result);
    let area = result.targets.iter().map(|t| t.used_bytes).max().unwrap_or(0);
    let writes = s.writes || s.discards;
    for (i, &t) in opened.iter().enumerate() {
        // Each target's checks; the device's counters, once (they name the first result).
        if i == 0 || t.is_some() {
            CHECKS.after(&mut doc, &[&shape], t, area, writes);
        }
    }
    doc.replay = Some(result);
    Ok(doc)
}

type Edge = Option<std::collections::BTreeMap<String, stats::DiskCounters>>;

fn snapshot(w: &Option<measure::Watch>) -> Edge {
    match w {
        Some(measure::Watch::Device { name, .. }) => Some(measure::device_counters(std::slice::from_ref(name))),
        _ => None,
    }
}

fn device_view(w: &Option<measure::Watch>, a: Edge, b: Edge, secs: f64, job: &JobResult) -> Option<stats::DeviceView> {
    match w {
        None => None,
        Some(measure::Watch::None(why)) => Some(stats::DeviceView::unavailable(why.clone())),
        Some(measure::Watch::Device { name, backing }) => {
            let (a, b) = (a?.get(name).copied()?, b?.get(name).copied()?);
            let r = job.read.as_ref().map_or((0, 0), |d| (d.ops, d.bytes));
            let w = job.write.as_ref().map_or((0, 0), |d| (d.ops, d.bytes));
            Some(stats::DeviceView::new(name, backing.clone(), secs, a.delta(&b), [r.0, w.0, r.1, w.1]))
        }
    }
}

/// What a pass replayed, from the trace: `trace: 100 % reads, 4 KiB`, `trace: 70 % reads,
/// 30 % writes, 4 KiB–1 MiB` (`lens`: the smallest and largest request).
fn trace_workload(reads: u64, writes: u64, lens: (u64, u64)) -> String {
    let total = reads + writes;
    // Whole percents, unless rounding would show a mix as all one or the other.
    let pct = |n: u64| {
        let p = n as f64 * 100.0 / total.max(1) as f64;
        match p.round() {
            r if (r == 0.0 && n > 0) || (r == 100.0 && n < total) => format!("{p:.1} %"),
            r => format!("{r:.0} %"),
        }
    };
    let mix = match (reads, writes) {
        (_, 0) => format!("{} reads", pct(reads)),
        (0, _) => format!("{} writes", pct(writes)),
        _ => format!("{} reads, {} writes", pct(reads), pct(writes)),
    };
    let size = |b: u64| units::format_size(b);
    let sizes = match lens {
        (lo, hi) if lo == hi => size(hi),
        (lo, hi) => format!("{}–{}", size(lo), size(hi)),
    };
    format!("trace: {mix}, {sizes}")
}

/// The pass as a job: reads and writes, the per-second series. Its spec says what a spec can
/// (directions, read share, largest request); `workload` says what the trace was.
fn pass_job(cfg: &Config, pass: u32, out: &ReplayOutcome, qd: u32, lens: (u64, u64)) -> JobResult {
    let (reads, writes) = (out.ops[0].ops, out.ops[1].ops);
    let spec = JobSpec {
        name: format!("replay pass {pass}"),
        rw: match (reads, writes) {
            (_, 0) => RwMode::RandRead,
            (0, _) => RwMode::RandWrite,
            _ => RwMode::RandRw,
        },
        mix: (reads as f64 * 100.0 / (reads + writes).max(1) as f64).round() as u8,
        bs: lens.1,
        qd,
        engine: cfg.engine,
        direct: !cfg.flags.buffered,
        target: cfg.targets.first().map(|(p, _)| p.clone()),
        runtime: Duration::from_secs_f64(out.seconds),
        ..JobSpec::default()
    };
    let mut job = JobResult::new(spec);
    job.workload = Some(trace_workload(reads, writes, lens));
    let qd_of = |h: &LatHist| if out.seconds > 0.0 { h.mean() * h.count() as f64 / 1e9 / out.seconds } else { 0.0 };
    let dir = |i: usize| {
        let o = &out.ops[i];
        (o.ops > 0).then(|| DirStats::new(o.ops, o.bytes, out.seconds, &o.lat, qd_of(&o.service)))
    };
    job.read = dir(0);
    job.write = dir(1);
    job.fsyncs = out.ops[3].ops;
    job.series = out.series.clone();
    job
}

fn pass_figures(pass: u32, out: &ReplayOutcome, timing: Timing) -> ReplayPass {
    let ops = ReplayOp::ALL
        .iter()
        .map(|op| (op, &out.ops[op.index()]))
        .filter(|(_, o)| o.ops > 0)
        .map(|(op, o)| ReplayOpStats {
            op: op.name().into(),
            ops: o.ops,
            bytes: o.bytes,
            iops: if out.seconds > 0.0 { o.ops as f64 / out.seconds } else { 0.0 },
            mb_s: if out.seconds > 0.0 { o.bytes as f64 / 1e6 / out.seconds } else { 0.0 },
            lat_ns: o.lat.summary(),
            service_ns: o.service.summary(),
            recorded_ns: (!o.recorded.is_empty()).then(|| o.recorded.summary()),
        })
        .collect();
    let busy: f64 = out.ops.iter().map(|o| o.service.mean() * o.service.count() as f64).sum::<f64>() / 1e9;
    let original = timing == Timing::Original;
    ReplayPass {
        pass,
        seconds: out.seconds,
        requests: out.issued,
        ops,
        target_requests: out.lane_ops.clone(),
        fidelity: Fidelity {
            lag_ns: original.then(|| out.lag.summary()),
            on_time_pct: (original && out.issued > 0).then(|| out.on_time as f64 * 100.0 / out.issued as f64),
            slot_waits: out.slot_waits,
            tool_late: out.tool_late,
            max_outstanding: out.max_outstanding,
            qd_mean: if out.seconds > 0.0 { busy / out.seconds } else { 0.0 },
            sync_discards: out.sync_discards,
        },
    }
}

fn fidelity_warnings(doc: &mut ResultDoc, r: &ReplayResult) {
    for p in &r.passes {
        let f = &p.fidelity;
        let n = p.requests.max(1) as f64;
        if f.tool_late as f64 / n > LAGGING_SHARE {
            doc.warn(
                codes::REPLAY_LAGGING,
                format!(
                    "pass {}: {:.1} % of requests were issued more than 1 ms after their intended time although a slot \
                     was free — diskmeter could not keep up (CPU), so the timing is not the trace's",
                    p.pass,
                    f.tool_late as f64 * 100.0 / n
                ),
            );
        }
        if f.slot_waits > 0 {
            doc.warn(
                codes::REPLAY_QUEUEING,
                format!(
                    "pass {}: {} requests were due while all {} slots were busy — the device could not keep up with \
                     the trace's rate, so they were issued late and their latency counts the wait (raise --qd to \
                     queue more in the device)",
                    p.pass, f.slot_waits, r.qd
                ),
            );
        }
    }
    if r.realigned > 0 || r.clamped > 0 {
        let mut parts = Vec::new();
        if r.realigned > 0 {
            parts.push(format!("{} requests rounded to the target's direct-I/O block", r.realigned));
        }
        if r.clamped > 0 {
            parts.push(format!("{} requests cut to {} bytes", r.clamped, r.max_request_bytes));
        }
        doc.warn(codes::REPLAY_ADJUSTED, parts.join("; "));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_support::{changed, usage_message};

    fn with(f: impl FnOnce(&mut Options)) -> Options {
        changed(
            Options {
                input: TraceOptions { trace: "t.dmt".into(), ..TraceOptions::default() },
                target: Some("x".into()),
                ..Options::default()
            },
            f,
        )
    }

    #[test]
    fn bad_options_are_one_line_each() {
        let u = |o: Options| usage_message(Config::new(&o));
        assert!(u(with(|o| o.timing = Some("slow".into()))).starts_with("invalid value for --timing"));
        assert!(u(with(|o| o.speed = Some("0".into()))).starts_with("invalid value for --speed"));
        assert!(u(with(|o| {
            o.timing = Some("afap".into());
            o.speed = Some("2".into());
        }))
        .contains("needs --timing original"));
        assert!(u(with(|o| o.map = Some("fold".into()))).starts_with("invalid value for --map"));
        assert!(u(with(|o| o.passes = Some("0".into()))).starts_with("invalid value for --passes"));
        assert!(u(with(|o| o.target = None)).starts_with("replay needs a target"));
        assert!(u(with(|o| o.devices_to_targets = vec!["8,16".into()])).contains("both"));
        assert!(u(with(|o| {
            o.target = None;
            o.devices_to_targets = vec!["8,16".into()];
        }))
        .contains("DEVICE=PATH"));
    }

    #[test]
    fn the_pass_is_labelled_from_the_trace() {
        assert_eq!(trace_workload(10_000, 0, (4096, 4096)), "trace: 100 % reads, 4 KiB");
        assert_eq!(trace_workload(0, 3, (512, 1 << 20)), "trace: 100 % writes, 512 B–1 MiB");
        assert_eq!(trace_workload(7, 3, (4096, 4096)), "trace: 70 % reads, 30 % writes, 4 KiB");
        // A mix never rounds to all one or the other.
        assert_eq!(trace_workload(999, 1, (4096, 8192)), "trace: 99.9 % reads, 0.1 % writes, 4 KiB–8 KiB");
    }

    #[test]
    fn devices_map_to_targets() {
        let o = with(|o| {
            o.target = None;
            o.devices_to_targets = vec!["8,16=/dev/a;8,32=/dev/b".into(), "8,48=/dev/a".into()];
        });
        let c = Config::new(&o).expect("valid");
        assert_eq!(
            c.targets,
            vec![
                (PathBuf::from("/dev/a"), vec!["8,16".to_string(), "8,48".to_string()]),
                (PathBuf::from("/dev/b"), vec!["8,32".to_string()])
            ]
        );
    }

    fn mapper_place(mode: MapMode, m: LaneMap, offset: u64, len: u32) -> (u64, u32) {
        let (o, l, _, _) = place(&m, mode, MAX_REQUEST, offset, len);
        (o, l)
    }

    proptest::proptest! {
        #[test]
        fn every_mapped_request_stays_inside_the_target(
            base in 0u64..1 << 40, rel in 0u64..1 << 44, len in 1u32..(8 << 20), size_units in 1u64..1 << 24,
            mode in 0usize..3,
        ) {
            let unit = 512u64;
            let size = size_units * unit + (8 << 20);
            let mode = [MapMode::Offset, MapMode::Modulo, MapMode::Scale][mode];
            let m = LaneMap { base, span: rel + u64::from(len) + 1, size, unit };
            let (o, l) = mapper_place(mode, m, base + rel, len);
            proptest::prop_assert!(o + u64::from(l) <= size);
            proptest::prop_assert_eq!(o % unit, 0);
            proptest::prop_assert_eq!(u64::from(l) % unit, 0);
            proptest::prop_assert!(u64::from(l) >= u64::from(len).min(size / unit * unit));
        }
    }
}
