//! Trace replay: requests from a stream, issued against one or more targets at their
//! intended times (open loop), as fast as possible under a depth limit, or under the trace's
//! own outstanding count — with how late each one was issued measured, never hidden.
//!
//! The caller (`app::replay`) reads and maps the trace; a reader thread here pulls
//! [`ReplayItem`]s from it in chunks of [`CHUNK`] and hands them over a bounded channel, with
//! the chunks recycled, so the issuing thread never blocks on the trace file and never
//! allocates. The issuing thread owns one backend (ring) per target ("lane"), a pool of
//! `2 × qd` buffers (a read and a write buffer per slot: writes always carry the pool's
//! incompressible data, stamped unique per write) and the histograms.
//!
//! Per request: wait until it is due (sleeping in the ring's timed wait, spinning the last
//! [`SPIN_NS`]), take a free slot (or wait for a completion: the device's backlog), queue,
//! submit. Lag = issue time − intended time. Latency is counted from the intended time in
//! `original` timing (as `--rate-iops` does: a backlog shows as latency), from the issue
//! otherwise; the service time (issue → completion) is kept as well.

use crate::error::{EngineError, Setup};
use crate::io::backend::null::Null;
use crate::io::backend::psync::Psync;
#[cfg(target_os = "linux")]
use crate::io::backend::uring::Uring;
use crate::io::backend::{code_of_error, reg_buf, sync_discard, Backend, BackendConfig, Completion, Op, RegBuf};
use crate::io::buffers::{stamp, BufferPool};
#[cfg(target_os = "linux")]
use crate::io::runner::uring_setup;
use crate::io::runner::{RunControl, Tick};
use platform::clock::Stopwatch;
use platform::target::Raw;
use platform::{IoErrorClass, OsCode};
use rand::SeedableRng;
use spec::{DataPattern, EngineKind};
use stats::{ErrorInfo, LatHist, SeriesPoint};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::time::{Duration, Instant};

/// Requests handed from the reader thread to the issuer at a time.
pub const CHUNK: usize = 4096;
/// Chunks in flight between reader and issuer (read-ahead of `CHUNKS × CHUNK` requests).
const CHUNKS: usize = 8;
/// Below this distance to the next due time the issuer spins instead of sleeping.
const SPIN_NS: u64 = 50_000;
/// Submit after this many queued requests even when more are due.
const BATCH: u32 = 32;
/// A request issued later than this after its intended time counts as late.
pub const ON_TIME_NS: u64 = 1_000_000;

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ReplayOp {
    #[default]
    Read,
    Write,
    Discard,
    Flush,
}

impl ReplayOp {
    pub const ALL: [ReplayOp; 4] = [ReplayOp::Read, ReplayOp::Write, ReplayOp::Discard, ReplayOp::Flush];
    pub fn index(self) -> usize {
        self as usize
    }
    pub fn name(self) -> &'static str {
        match self {
            ReplayOp::Read => "read",
            ReplayOp::Write => "write",
            ReplayOp::Discard => "discard",
            ReplayOp::Flush => "flush",
        }
    }
}

/// One request, mapped onto its target.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayItem {
    /// Intended issue time, ns after the replay starts (`original` timing; ignored otherwise).
    pub due_ns: u64,
    /// Byte offset on the target (aligned as the target needs).
    pub offset: u64,
    /// Bytes (0 for flushes).
    pub len: u32,
    pub op: ReplayOp,
    /// Index of the target (lane).
    pub lane: u16,
    /// `depth` timing: issue only while fewer than this many are outstanding (the trace's own
    /// outstanding count, this request included); 0 = no limit but the slots.
    pub depth: u32,
    /// The latency the trace recorded for this request, ns (0 = none).
    pub recorded_ns: u64,
}

/// How requests are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timing {
    /// At the trace's times (scaled by the speed), open loop.
    Original,
    /// As fast as possible, at most `qd` outstanding.
    Afap,
    /// As fast as possible, at most the trace's own outstanding count.
    Depth,
}

/// One target of the replay.
#[derive(Debug, Clone, Copy)]
pub struct Lane {
    pub fd: Raw,
    /// The flags its handle was opened with, for an engine that opens its own
    /// ([`platform::target::reopen_flags`]).
    pub flags: u32,
    /// A block device (discards are BLKDISCARD) rather than a file (discards punch holes).
    pub block: bool,
}

/// How to replay.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    pub timing: Timing,
    /// Requests outstanding at most (slots).
    pub qd: u32,
    /// Largest request, bytes: the size of each buffer.
    pub slot_len: usize,
    /// Buffer alignment (the targets' direct-I/O memory alignment).
    pub align: usize,
    pub engine: EngineKind,
    /// Expected length, for the progress display (zero when unknown).
    pub planned: Duration,
    pub seed: u64,
}

/// Figures of one operation kind.
#[derive(Debug, Clone)]
pub struct OpFigures {
    pub ops: u64,
    pub bytes: u64,
    /// From the intended time (`original`) or the issue (other timings) to the completion.
    pub lat: LatHist,
    /// From the issue to the completion.
    pub service: LatHist,
    /// The trace's own latencies of the requests replayed.
    pub recorded: LatHist,
}

impl OpFigures {
    fn new() -> Self {
        Self { ops: 0, bytes: 0, lat: LatHist::new(), service: LatHist::new(), recorded: LatHist::new() }
    }
}

/// What a replay pass measured.
#[derive(Debug, Clone)]
pub struct ReplayOutcome {
    /// Indexed by [`ReplayOp::index`].
    pub ops: [OpFigures; 4],
    /// Issue time − intended time of every request (`original` timing only).
    pub lag: LatHist,
    /// Requests issued within [`ON_TIME_NS`] of their intended time.
    pub on_time: u64,
    /// Requests issued.
    pub issued: u64,
    /// Requests that were due while every slot was busy (the device's backlog).
    pub slot_waits: u64,
    /// Requests issued late (> [`ON_TIME_NS`]) although a slot was free: the tool's own lag.
    pub tool_late: u64,
    /// Most requests outstanding at once.
    pub max_outstanding: u32,
    /// Seconds from the start to the last completion.
    pub seconds: f64,
    /// Per second: reads and writes (IOPS, MB/s, mean and p99 latency).
    pub series: Vec<SeriesPoint>,
    /// Discard and flush requests that went through the synchronous fallback.
    pub sync_discards: u64,
    /// Requests completed per lane (target).
    pub lane_ops: Vec<u64>,
    pub error: Option<ErrorInfo>,
    pub interrupted: bool,
}

/// The reader side: fills a chunk with the next requests (clearing it first). `Ok(false)`
/// at the end of the trace; `Err(message)` stops the replay with partial results.
pub trait ReplaySource: Send {
    fn fill(&mut self, chunk: &mut Vec<ReplayItem>) -> Result<bool, String>;
}

/// Replays what `source` yields against `lanes`. Ticks about four times a second.
pub fn replay(
    lanes: &[Lane],
    source: &mut dyn ReplaySource,
    cfg: &ReplayConfig,
    ctl: &RunControl,
    tick: &mut dyn FnMut(&Tick),
) -> Result<ReplayOutcome, EngineError> {
    let qd = cfg.qd.max(1);
    let slots = qd as usize;
    let mut pool = BufferPool::new(slots * 2, cfg.slot_len.max(512), cfg.align.max(512))
        .ok_or(Setup::ReplayBuffers { slots, len: cfg.slot_len })?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(cfg.seed);
    pool.fill(DataPattern::Random, &mut rng);
    let iovecs: Vec<RegBuf> = (0..pool.slots()).map(|i| reg_buf(pool.slot_ptr(i), pool.slot_len())).collect();
    let register = ctl.register_buffers && pool.slots() <= 16_384;
    let config = |l: &Lane| BackendConfig {
        fd: l.fd,
        files: Vec::new(),
        depth: qd,
        buffers: register.then(|| iovecs.clone()),
        register_file: true,
        sqpoll: false,
        flags: l.flags,
    };
    std::thread::scope(|scope| {
        let (full_tx, full_rx) = sync_channel::<Chunk>(CHUNKS);
        let (empty_tx, empty_rx) = sync_channel::<Vec<ReplayItem>>(CHUNKS + 2);
        for _ in 0..CHUNKS + 1 {
            let _ = empty_tx.send(Vec::with_capacity(CHUNK));
        }
        let stop = ctl.stop.clone();
        scope.spawn(move || read_ahead(source, full_tx, empty_rx, &stop));
        let feed = Feed { full: full_rx, empty: empty_tx, cur: Vec::new(), at: 0, error: None, done: false };
        match cfg.engine {
            #[cfg(target_os = "linux")]
            EngineKind::IoUring => {
                let mut rings = Vec::with_capacity(lanes.len());
                for l in lanes {
                    match Uring::new(&config(l)) {
                        Ok(r) => rings.push(r),
                        Err(e) => {
                            ctl.stop.store(true, Ordering::Relaxed);
                            return Err(uring_setup(e, qd).into());
                        }
                    }
                }
                let fixed = rings.first().is_some_and(|r| r.uses_fixed_buffers());
                Ok(Issuer::new(lanes, rings, cfg, fixed).run(feed, &mut pool, ctl, tick))
            }
            #[cfg(windows)]
            EngineKind::Iocp => {
                let mut ports = Vec::with_capacity(lanes.len());
                for l in lanes {
                    match crate::io::backend::iocp::Iocp::new(&config(l)) {
                        Ok(p) => ports.push(p),
                        Err(e) => {
                            ctl.stop.store(true, Ordering::Relaxed);
                            return Err(Setup::CompletionPort(e).into());
                        }
                    }
                }
                Ok(Issuer::new(lanes, ports, cfg, false).run(feed, &mut pool, ctl, tick))
            }
            #[cfg(not(target_os = "linux"))]
            EngineKind::IoUring => {
                ctl.stop.store(true, Ordering::Relaxed);
                Err(Setup::Unavailable(EngineKind::IoUring).into())
            }
            #[cfg(not(windows))]
            EngineKind::Iocp => {
                ctl.stop.store(true, Ordering::Relaxed);
                Err(Setup::Unavailable(EngineKind::Iocp).into())
            }
            EngineKind::Psync => {
                let b = lanes.iter().map(|l| Psync::new(&config(l))).collect();
                Ok(Issuer::new(lanes, b, cfg, false).run(feed, &mut pool, ctl, tick))
            }
            _ => {
                let b = lanes.iter().map(|l| Null::new(&config(l), ctl.null_fault)).collect();
                Ok(Issuer::new(lanes, b, cfg, false).run(feed, &mut pool, ctl, tick))
            }
        }
    })
}

/// A chunk of requests, or the end of the trace (`Ok(false)`) or a read error.
enum Chunk {
    Items(Vec<ReplayItem>),
    End,
    Error(String),
}

fn read_ahead(
    source: &mut dyn ReplaySource,
    full: SyncSender<Chunk>,
    empty: Receiver<Vec<ReplayItem>>,
    stop: &std::sync::atomic::AtomicBool,
) {
    while let Ok(mut chunk) = empty.recv() {
        if stop.load(Ordering::Relaxed) {
            return;
        }
        chunk.clear();
        let msg = match source.fill(&mut chunk) {
            Ok(more) => {
                let had = !chunk.is_empty();
                if had && full.send(Chunk::Items(chunk)).is_err() {
                    return;
                }
                if more {
                    continue;
                }
                Chunk::End
            }
            Err(m) => {
                if !chunk.is_empty() && full.send(Chunk::Items(chunk)).is_err() {
                    return;
                }
                Chunk::Error(m)
            }
        };
        let _ = full.send(msg);
        return;
    }
}

/// The issuer's end of the reader's channel.
struct Feed {
    full: Receiver<Chunk>,
    empty: SyncSender<Vec<ReplayItem>>,
    cur: Vec<ReplayItem>,
    at: usize,
    error: Option<String>,
    done: bool,
}

impl Feed {
    /// The next request, or None at the end (or after a read error).
    #[inline]
    fn next(&mut self) -> Option<ReplayItem> {
        loop {
            if let Some(it) = self.cur.get(self.at) {
                self.at += 1;
                return Some(*it);
            }
            if self.done {
                return None;
            }
            match self.full.recv() {
                Ok(Chunk::Items(v)) => {
                    let old = std::mem::replace(&mut self.cur, v);
                    self.at = 0;
                    let _ = self.empty.send(old);
                }
                Ok(Chunk::End) | Err(_) => self.done = true,
                Ok(Chunk::Error(m)) => {
                    self.error = Some(m);
                    self.done = true;
                }
            }
        }
    }
}

/// An I/O in flight.
#[derive(Clone, Copy, Default)]
struct InFlight {
    op: ReplayOp,
    lane: u16,
    len: u32,
    offset: u64,
    due: u64,
    issued: u64,
    recorded: u64,
    /// Went through the synchronous discard fallback already.
    retried: bool,
}

struct Issuer<'a, B: Backend> {
    lanes: &'a [Lane],
    backends: Vec<B>,
    cfg: &'a ReplayConfig,
    fixed: bool,
    slots: Vec<InFlight>,
    free: Vec<u32>,
    queued: Vec<u32>,
    out: ReplayOutcome,
    /// Per-second read and write histograms and bytes.
    sec: [(LatHist, u64); 2],
    sec_start: u64,
    start: Stopwatch,
    /// Discards go through the synchronous path (the ring's command is not supported).
    sync_discard: bool,
    tag: u64,
    /// When the issuer last stopped waiting for a free slot: requests due before it were late
    /// because of the device's backlog, not the tool.
    blocked_until: u64,
}

impl<'a, B: Backend> Issuer<'a, B> {
    fn new(lanes: &'a [Lane], backends: Vec<B>, cfg: &'a ReplayConfig, fixed: bool) -> Self {
        let qd = cfg.qd.max(1);
        let figures = || OpFigures::new();
        Self {
            lanes,
            backends,
            cfg,
            fixed,
            slots: vec![InFlight::default(); qd as usize],
            free: (0..qd).rev().collect(),
            queued: vec![0; lanes.len()],
            out: ReplayOutcome {
                ops: [figures(), figures(), figures(), figures()],
                lag: LatHist::new(),
                on_time: 0,
                issued: 0,
                slot_waits: 0,
                tool_late: 0,
                max_outstanding: 0,
                seconds: 0.0,
                series: Vec::new(),
                sync_discards: 0,
                lane_ops: vec![0; lanes.len()],
                error: None,
                interrupted: false,
            },
            sec: [(LatHist::new(), 0), (LatHist::new(), 0)],
            sec_start: 0,
            start: Stopwatch::start(),
            sync_discard: false,
            tag: 0,
            blocked_until: 0,
        }
    }

    #[inline]
    fn now(&self) -> u64 {
        self.start.elapsed_ns()
    }

    fn outstanding(&self) -> u32 {
        (self.slots.len() - self.free.len()) as u32
    }

    fn run(
        mut self,
        mut feed: Feed,
        pool: &mut BufferPool,
        ctl: &RunControl,
        tick: &mut dyn FnMut(&Tick),
    ) -> ReplayOutcome {
        let qd = self.slots.len();
        let original = self.cfg.timing == Timing::Original;
        let mut next_tick = 250_000_000u64;
        let mut last_tick = (0u64, 0u64, 0u64, 0u64, 0u64);
        tick(&Tick { kind: crate::io::runner::TickKind::Release, planned: self.cfg.planned, ..Tick::default() });
        self.start = Stopwatch::start();
        let mut cur = feed.next();
        let mut batch = 0u32;
        let mut polls = 0u32;
        // Set after a sleep: the clock, the second's close, the tick and the stop flag are
        // looked at on the next round whatever the poll count.
        let mut slept = false;
        loop {
            self.reap_all();
            if self.out.error.is_some() {
                break;
            }
            polls = polls.wrapping_add(1);
            if polls & 63 == 0 || cur.is_none() || slept {
                slept = false;
                let now = self.now();
                if now >= self.sec_start + 1_000_000_000 {
                    self.close_second(now);
                }
                if now >= next_tick {
                    next_tick = now + 250_000_000;
                    last_tick = self.tick(now, last_tick, tick);
                }
                if ctl.stop.load(Ordering::Relaxed) {
                    self.out.interrupted = true;
                    break;
                }
            }
            let Some(item) = cur else {
                if batch > 0 {
                    self.submit();
                    batch = 0;
                }
                if self.free.len() == qd {
                    break;
                }
                self.wait(Some(Duration::from_millis(50)));
                continue;
            };
            let limit = match self.cfg.timing {
                Timing::Depth if item.depth > 0 => item.depth.min(qd as u32),
                _ => qd as u32,
            };
            let has_slot = self.outstanding() < limit;
            if original {
                let now = self.now();
                if now < item.due_ns {
                    if batch > 0 {
                        self.submit();
                        batch = 0;
                    }
                    let gap = item.due_ns - now;
                    if gap > SPIN_NS {
                        // Sleep in the ring until shortly before the due time (completions
                        // wake it earlier; they are reaped at the top of the loop).
                        let nap = Duration::from_nanos((gap - SPIN_NS).min(50_000_000));
                        self.wait_timeout(nap);
                        slept = true;
                    } else if self.outstanding() > 0 {
                        self.poll();
                    }
                    continue;
                }
                if !has_slot {
                    if batch > 0 {
                        self.submit();
                        batch = 0;
                    }
                    self.out.slot_waits += 1;
                    // The device is behind: wait for a completion, then issue at once.
                    while self.outstanding() >= limit && self.out.error.is_none() {
                        self.wait(Some(Duration::from_millis(50)));
                        self.reap_all();
                        if ctl.stop.load(Ordering::Relaxed) {
                            break;
                        }
                    }
                    if self.out.error.is_some() || ctl.stop.load(Ordering::Relaxed) {
                        continue;
                    }
                    self.blocked_until = self.now();
                    self.issue(item, pool);
                } else {
                    self.issue(item, pool);
                }
            } else {
                if !has_slot {
                    if batch > 0 {
                        self.submit();
                        batch = 0;
                    }
                    self.wait(Some(Duration::from_millis(50)));
                    continue;
                }
                self.issue(item, pool);
            }
            batch += 1;
            cur = feed.next();
            let due_next = match cur {
                Some(n) if original => n.due_ns <= self.now(),
                Some(_) => self.outstanding() < qd as u32,
                None => false,
            };
            if !due_next || batch >= BATCH {
                self.submit();
                batch = 0;
            }
        }
        // Interrupted or failed: let what is in flight finish (or be cancelled with the ring).
        if batch > 0 {
            self.submit();
        }
        let give_up = Instant::now() + Duration::from_secs(5);
        while self.free.len() < qd && Instant::now() < give_up {
            self.wait(Some(Duration::from_millis(50)));
            let err = self.out.error.take();
            self.reap_all();
            if err.is_some() {
                self.out.error = err;
            }
        }
        let now = self.now();
        self.close_second(now);
        // A partial last second is scaled as the interval it covers; a sliver is dropped.
        self.out.seconds = now as f64 / 1e9;
        if feed.error.is_some() && self.out.error.is_none() {
            self.out.error = Some(ErrorInfo::new("io", feed.error.take().unwrap_or_default()));
        }
        self.out
    }

    fn tick(
        &mut self,
        now: u64,
        last: (u64, u64, u64, u64, u64),
        tick: &mut dyn FnMut(&Tick),
    ) -> (u64, u64, u64, u64, u64) {
        let r = &self.out.ops[0];
        let w = &self.out.ops[1];
        let cur = (now, r.ops, w.ops, r.bytes, w.bytes);
        let dt = (now - last.0) as f64 / 1e9;
        if dt > 0.0 {
            tick(&Tick {
                kind: crate::io::runner::TickKind::Live,
                ramp: Duration::ZERO,
                elapsed: Duration::from_nanos(now),
                planned: self.cfg.planned,
                ramping: false,
                read_iops: (cur.1 - last.1) as f64 / dt,
                write_iops: (cur.2 - last.2) as f64 / dt,
                read_mb_s: (cur.3 - last.3) as f64 / 1e6 / dt,
                write_mb_s: (cur.4 - last.4) as f64 / 1e6 / dt,
            });
        }
        cur
    }

    fn close_second(&mut self, now: u64) {
        let span = now.saturating_sub(self.sec_start);
        if span < 100_000_000 && !self.out.series.is_empty() {
            // A sliver after the last full second: folded into nothing (too short to rate).
            return;
        }
        if span == 0 {
            return;
        }
        let secs = span as f64 / 1e9;
        let [(rh, rb), (wh, wb)] = &mut self.sec;
        let mut p = SeriesPoint::from_interval(now as f64 / 1e9, secs, (rh, *rb), (wh, *wb));
        p.t_s = (now as f64 / 1e9 * 1000.0).round() / 1000.0;
        self.out.series.push(p);
        rh.reset();
        wh.reset();
        *rb = 0;
        *wb = 0;
        self.sec_start = now;
    }

    #[inline]
    fn issue(&mut self, item: ReplayItem, pool: &mut BufferPool) {
        let Some(slot) = self.free.pop() else { return };
        let now = self.now();
        let lane = usize::from(item.lane).min(self.backends.len() - 1);
        if self.cfg.timing == Timing::Original {
            let lag = now.saturating_sub(item.due_ns);
            self.out.lag.record(lag);
            if lag <= ON_TIME_NS {
                self.out.on_time += 1;
            } else if item.due_ns >= self.blocked_until {
                // Due after the issuer last waited for a slot: the tool itself was late.
                self.out.tool_late += 1;
            }
        }
        let due = if self.cfg.timing == Timing::Original { item.due_ns } else { now };
        self.slots[slot as usize] = InFlight {
            op: item.op,
            lane: lane as u16,
            len: item.len,
            offset: item.offset,
            due,
            issued: now,
            recorded: item.recorded_ns,
            retried: false,
        };
        self.out.issued += 1;
        let qd = self.slots.len();
        let (op, buf_index) = match item.op {
            ReplayOp::Read => (Op::Read, slot as usize),
            ReplayOp::Write => (Op::Write, qd + slot as usize),
            ReplayOp::Flush => (Op::Fsync, 0),
            ReplayOp::Discard if self.lanes[lane].block => (Op::Discard, 0),
            ReplayOp::Discard => (Op::PunchHole, 0),
        };
        if op == Op::Write {
            self.tag = self.tag.wrapping_add(1);
            stamp(pool.slot_mut(buf_index), DataPattern::Random, self.tag ^ self.cfg.seed, item.offset);
        }
        if op == Op::Discard && self.sync_discard {
            let c = sync_discard(self.lanes[lane].fd, op, item.offset, item.len);
            self.out.sync_discards += 1;
            self.complete(slot, c);
            return;
        }
        let ptr = pool.slot_ptr(buf_index);
        let bi = if self.fixed { buf_index as u16 } else { 0 };
        let out = self.out.max_outstanding.max(self.outstanding());
        self.out.max_outstanding = out;
        if let Err(e) = self.backends[lane].queue(slot, op, item.offset, ptr, item.len, bi) {
            self.fail(item.op, item.offset, code_of_error(&e));
            self.free.push(slot);
            return;
        }
        self.queued[lane] += 1;
    }

    fn submit(&mut self) {
        for (i, b) in self.backends.iter_mut().enumerate() {
            if self.queued[i] > 0 {
                self.queued[i] = 0;
                if let Err(e) = b.poll() {
                    self.out.error = Some(ErrorInfo::new("io", format!("submitting I/O failed: {e}")));
                }
            }
        }
    }

    fn poll(&mut self) {
        for b in &mut self.backends {
            let _ = b.poll();
        }
    }

    /// Sleep until a completion arrives or `t` passes.
    fn wait_timeout(&mut self, t: Duration) {
        if self.outstanding() == 0 || self.backends.len() > 1 {
            // Nothing can wake the ring early: a plain sleep (capped so that several lanes
            // are still polled often).
            let t = if self.backends.len() > 1 { t.min(Duration::from_micros(100)) } else { t };
            std::thread::sleep(t);
            return;
        }
        if let Some(b) = self.backends.first_mut() {
            let _ = b.submit_and_wait(1, Some(t));
        }
    }

    /// Wait for at least one completion (at most `t`).
    fn wait(&mut self, t: Option<Duration>) {
        if self.outstanding() == 0 {
            return;
        }
        if self.backends.len() == 1 {
            if let Some(b) = self.backends.first_mut() {
                if !b.ready() {
                    let _ = b.submit_and_wait(1, t);
                }
            }
        } else {
            self.poll();
            if !self.backends.iter_mut().any(|b| b.ready()) {
                std::thread::sleep(Duration::from_micros(20));
            }
        }
    }

    #[inline]
    fn reap_all(&mut self) {
        for i in 0..self.backends.len() {
            let mut done = [(0u32, Completion::Done(0)); 64];
            loop {
                let mut n = 0;
                if let Some(b) = self.backends.get_mut(i) {
                    if !b.ready() {
                        break;
                    }
                    b.reap(|slot, c| {
                        if let Some(d) = done.get_mut(n) {
                            *d = (slot, c);
                            n += 1;
                        }
                    });
                }
                if n == 0 {
                    break;
                }
                for &(slot, c) in done.iter().take(n) {
                    self.complete(slot, c);
                }
                if n < done.len() {
                    break;
                }
            }
        }
    }

    #[inline]
    fn complete(&mut self, slot: u32, c: Completion) {
        let Some(f) = self.slots.get(slot as usize).copied() else { return };
        if let Completion::Failed(code) = c {
            if f.op == ReplayOp::Discard && !f.retried && self.lanes[usize::from(f.lane)].block {
                // The ring's discard command is missing (before Linux 6.12) or refused: the
                // synchronous BLKDISCARD from here on.
                if discard_unsupported(code) && !self.sync_discard {
                    self.sync_discard = true;
                    let c = sync_discard(self.lanes[usize::from(f.lane)].fd, Op::Discard, f.offset, f.len);
                    self.out.sync_discards += 1;
                    if let Some(s) = self.slots.get_mut(slot as usize) {
                        s.retried = true;
                    }
                    return self.complete(slot, c);
                }
            }
        }
        let now = self.now();
        self.free.push(slot);
        let ok = match f.op {
            ReplayOp::Read | ReplayOp::Write => c == Completion::Done(f.len),
            _ => c.error().is_none(),
        };
        if !ok {
            if self.out.error.is_none() {
                match c {
                    Completion::Failed(code) => self.fail(f.op, f.offset, code),
                    Completion::Done(n) => {
                        self.out.error = Some(ErrorInfo {
                            kind: "io".into(),
                            message: format!("short {} at offset {}: {n} of {} bytes", f.op.name(), f.offset, f.len),
                            offset: Some(f.offset),
                            job: None,
                        });
                    }
                }
            }
            return;
        }
        if let Some(n) = self.out.lane_ops.get_mut(usize::from(f.lane)) {
            *n += 1;
        }
        let o = &mut self.out.ops[f.op.index()];
        o.ops += 1;
        o.bytes += u64::from(f.len) * u64::from(matches!(f.op, ReplayOp::Read | ReplayOp::Write));
        let lat = now.saturating_sub(f.due);
        o.lat.record(lat);
        o.service.record(now.saturating_sub(f.issued));
        if f.recorded > 0 {
            o.recorded.record(f.recorded);
        }
        if let Some((h, b)) = self.sec.get_mut(f.op.index()) {
            h.record(lat);
            *b += u64::from(f.len);
        }
    }

    fn fail(&mut self, op: ReplayOp, offset: u64, code: OsCode) {
        let err = std::io::Error::from(code);
        let kind = error_kind(code);
        let at = if op == ReplayOp::Flush { String::new() } else { format!(" at offset {offset}") };
        self.out.error = Some(ErrorInfo {
            kind: kind.into(),
            message: format!("{} failed{at}: {err}", op.name()),
            offset: (op != ReplayOp::Flush).then_some(offset),
            job: None,
        });
    }
}

/// True when a ring's discard failed because the kernel cannot do it that way (an unknown
/// command, an unsupported operation): the synchronous discard may still work.
fn discard_unsupported(code: OsCode) -> bool {
    matches!(code.class(), IoErrorClass::Invalid | IoErrorClass::Unsupported)
}

/// A failed request's `error.kind`: `enospc`, `eio` (EIO alone, not the other media errors),
/// `vanished` (the device or the file is gone: ENODEV, ENXIO, ESHUTDOWN, ENOENT) or `io`.
/// A replay leaves the broken link and the missing medium (ENOLINK, ENOMEDIUM) `io`, as it
/// always has; a run's results call them `vanished`.
fn error_kind(code: OsCode) -> &'static str {
    match code.class() {
        IoErrorClass::NoSpace => "enospc",
        IoErrorClass::Media if code.name() == "EIO" => "eio",
        IoErrorClass::NotFound => "vanished",
        IoErrorClass::Vanished if !matches!(code.name().as_str(), "ENOLINK" | "ENOMEDIUM") => "vanished",
        _ => "io",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg(target_os = "linux")]
    fn errors_are_named_as_before() {
        use platform::error::Errno;
        let code = |e: Errno| e.code().expect("Linux has every errno");
        for (errno, kind) in [
            (Errno::ENOSPC, "enospc"),
            (Errno::EIO, "eio"),
            (Errno::ENODATA, "io"),
            (Errno::ENODEV, "vanished"),
            (Errno::ENXIO, "vanished"),
            (Errno::ENOENT, "vanished"),
            (Errno::ESHUTDOWN, "vanished"),
            (Errno::ENOLINK, "io"),
            (Errno::ENOMEDIUM, "io"),
            (Errno::EINVAL, "io"),
            (Errno::EDQUOT, "io"),
        ] {
            assert_eq!(error_kind(code(errno)), kind, "{errno:?}");
        }
        for errno in [Errno::EINVAL, Errno::EOPNOTSUPP, Errno::ENOTTY] {
            assert!(discard_unsupported(code(errno)), "{errno:?}");
        }
        assert!(!discard_unsupported(code(Errno::EIO)));
    }

    struct Vecs {
        items: Vec<ReplayItem>,
        at: usize,
    }

    impl ReplaySource for Vecs {
        fn fill(&mut self, chunk: &mut Vec<ReplayItem>) -> Result<bool, String> {
            let end = (self.at + CHUNK).min(self.items.len());
            chunk.extend_from_slice(&self.items[self.at..end]);
            self.at = end;
            Ok(self.at < self.items.len())
        }
    }

    fn cfg(timing: Timing, qd: u32) -> ReplayConfig {
        ReplayConfig {
            timing,
            qd,
            slot_len: 4096,
            align: 4096,
            engine: EngineKind::Null,
            planned: Duration::ZERO,
            seed: 1,
        }
    }

    fn items(n: u64, gap_ns: u64) -> Vec<ReplayItem> {
        (0..n)
            .map(|i| ReplayItem {
                due_ns: i * gap_ns,
                offset: i * 4096,
                len: 4096,
                op: ReplayOp::ALL[(i % 4) as usize],
                lane: 0,
                depth: 0,
                recorded_ns: 1000,
            })
            .collect()
    }

    #[test]
    fn every_request_is_replayed_once_per_kind() {
        let mut src = Vecs { items: items(10_001, 0), at: 0 };
        let ctl = RunControl::default();
        let lanes = [Lane { fd: platform::target::NO_RAW, flags: 0, block: false }];
        let out = replay(&lanes, &mut src, &cfg(Timing::Afap, 8), &ctl, &mut |_| {}).expect("replay");
        assert!(out.error.is_none());
        assert_eq!(out.issued, 10_001);
        let counts: Vec<u64> = out.ops.iter().map(|o| o.ops).collect();
        assert_eq!(counts, [2501, 2500, 2500, 2500]);
        assert_eq!(out.ops[0].bytes, 2501 * 4096);
        assert_eq!(out.ops[2].bytes, 0, "discards move no data");
        assert_eq!(out.ops[0].recorded.count(), 2501);
        assert!(out.max_outstanding <= 8);
    }

    #[test]
    fn original_timing_waits_for_the_due_time() {
        // 200 requests 1 ms apart: about 0.2 s, none early.
        let mut src = Vecs { items: items(200, 1_000_000), at: 0 };
        let ctl = RunControl::default();
        let lanes = [Lane { fd: platform::target::NO_RAW, flags: 0, block: false }];
        let out = replay(&lanes, &mut src, &cfg(Timing::Original, 8), &ctl, &mut |_| {}).expect("replay");
        assert_eq!(out.issued, 200);
        assert!(out.seconds >= 0.199, "{}", out.seconds);
        assert_eq!(out.lag.count(), 200);
        assert_eq!(out.slot_waits, 0);
    }

    #[test]
    fn depth_timing_keeps_the_traces_own_depth() {
        let mut v = items(1000, 0);
        for it in &mut v {
            it.depth = 3;
        }
        let mut src = Vecs { items: v, at: 0 };
        let ctl = RunControl::default();
        let lanes = [Lane { fd: platform::target::NO_RAW, flags: 0, block: false }];
        let out = replay(&lanes, &mut src, &cfg(Timing::Depth, 16), &ctl, &mut |_| {}).expect("replay");
        assert_eq!(out.issued, 1000);
        assert!(out.max_outstanding <= 3, "{}", out.max_outstanding);
    }

    #[test]
    fn a_read_error_stops_with_what_was_replayed() {
        struct Broken(u32);
        impl ReplaySource for Broken {
            fn fill(&mut self, chunk: &mut Vec<ReplayItem>) -> Result<bool, String> {
                if self.0 == 0 {
                    return Err("line 9: bad".into());
                }
                self.0 -= 1;
                chunk.push(ReplayItem { len: 512, ..ReplayItem::default() });
                Ok(true)
            }
        }
        let ctl = RunControl::default();
        let lanes = [Lane { fd: platform::target::NO_RAW, flags: 0, block: false }];
        let out = replay(&lanes, &mut Broken(3), &cfg(Timing::Afap, 4), &ctl, &mut |_| {}).expect("replay");
        assert_eq!(out.issued, 3);
        assert_eq!(out.error.map(|e| e.message), Some("line 9: bad".to_string()));
    }
}
