//! One worker: keeps `depth` I/Os in flight against one target through one backend.
//!
//! Hot-path rules: no allocation, logging or locking per I/O. Latencies go into the
//! current one-second interval histogram; at each second boundary the full histogram is
//! sent to the collector and a recycled one takes its place (one channel message per
//! second, never per I/O).

use crate::io::backend::{code_for, code_of_error, Backend, Completion, Op};
use crate::io::buffers::{stamp, BufferPool};
use crate::io::offsets::{IoLens, OffsetGen};
use crate::io::verifier::VerifyJob;
use platform::clock::Stopwatch;
use platform::{IoErrorClass, OsCode};
use spec::{DataPattern, ErrorClass};
use stats::LatHist;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub const SEC: u64 = 1_000_000_000;
/// Open-loop waits shorter than this are spun rather than slept (timer slack).
const SPIN_NS: u64 = 150_000;
/// Waits for a completion arm a timeout only when a boundary is this close.
const TIMER_NS: u64 = 20_000_000;

/// One second (or less, at the edges) of one worker's completions.
pub struct Interval {
    /// -1 = ramp (discarded), 0.. = measured seconds.
    pub index: i64,
    pub read: LatHist,
    pub write: LatHist,
    pub read_bytes: u64,
    pub write_bytes: u64,
}

impl Interval {
    pub fn new() -> Box<Self> {
        Box::new(Self { index: 0, read: LatHist::new(), write: LatHist::new(), read_bytes: 0, write_bytes: 0 })
    }
    pub fn clear(&mut self) {
        self.read.reset();
        self.write.reset();
        self.read_bytes = 0;
        self.write_bytes = 0;
    }
}

/// An I/O that failed.
#[derive(Debug, Clone, Copy)]
pub struct IoFault {
    /// The OS's error; `None` for a short transfer.
    pub error: Option<OsCode>,
    pub offset: u64,
    pub op: Op,
    pub transferred: u32,
    pub len: u32,
}

/// What a worker reports when it finishes.
#[derive(Debug, Default)]
pub struct WorkerEnd {
    /// io_uring handed this worker's requests to its kernel workers (see [`crate::io::handoff`]).
    pub handoff: Option<HandoffEnd>,
    /// Last moment (ns since the measured window began) this worker counted completions.
    pub measured_ns: u64,
    pub qd_area_read: f64,
    pub qd_area_write: f64,
    pub fsyncs: u64,
    pub cpu_ns: u64,
    pub wall_ns: u64,
    /// The worker's polling budget ([`WorkerPlan::poll_ns`]): its CPU time includes polling.
    pub poll_ns: u64,
    /// Of its CPU time, how long it polled an empty ring.
    pub poll_idle_ns: u64,
    pub fault: Option<IoFault>,
    /// I/O errors counted and gone on after (fio `continue_on_error`), and the first of them.
    pub errors: u64,
    pub first_error: Option<IoFault>,
    /// The averaged log windows (fio `log_avg_msec`), oldest first.
    pub log: Vec<LogSample>,
    /// fio's per-I/O logs (`log_avg_msec=0`): every measured completion, in chunks, oldest
    /// first; `io_log_cut` when the worker stopped logging at [`IO_LOG_MAX`] entries.
    pub io_log: Vec<Vec<IoLogEntry>>,
    pub io_log_cut: bool,
    /// This worker's index within its job.
    pub job_worker: usize,
    /// When its measured window began, ns after the group's start (after the ramp, and any
    /// start delay).
    pub t0_ns: u64,
    /// Why the worker could not be set up (the collector takes it; `setup_failed` stays).
    pub setup_error: Option<crate::error::Setup>,
    /// The worker could not be set up: it did no I/O.
    pub setup_failed: bool,
    /// Completions of the measured window by length, `(bytes, reads, writes)`, when the
    /// job's I/Os have more than one length (empty otherwise).
    pub bs_counts: Vec<(u32, u64, u64)>,
    /// The first and last measured completions' times ([`crate::io::bursts`]), when kept.
    pub edges: Option<Box<crate::io::bursts::EdgeLog>>,
}

pub enum Msg {
    Interval { job: usize, worker: usize, iv: Box<Interval> },
    Done { job: usize, worker: usize, end: Box<WorkerEnd> },
}

/// Live counters for progress display: written once per reap batch with relaxed stores.
#[derive(Default)]
pub struct Live {
    pub read_ops: AtomicU64,
    pub write_ops: AtomicU64,
    pub read_bytes: AtomicU64,
    pub write_bytes: AtomicU64,
}

/// One completion of fio's per-I/O logs (`log_avg_msec=0`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoLogEntry {
    /// When it completed, ms since the measured window began.
    pub t_ms: u32,
    /// 0 read, 1 write.
    pub dir: u8,
    pub len: u32,
    pub lat_ns: u64,
    /// The offset in its file (the file index bits of a job over several files are dropped).
    pub offset: u64,
}

/// Entries per chunk of a per-I/O log: a chunk is allocated once per this many completions.
pub const IO_LOG_CHUNK: usize = 8192;
/// Entries a worker logs at most (24 bytes each: 192 MiB); later completions are not logged
/// and the result says so.
pub const IO_LOG_MAX: usize = 8 << 20;

/// One averaged log window of one worker (fio `log_avg_msec`): what completed in it.
#[derive(Debug, Default, Clone, Copy, PartialEq)]
pub struct LogSample {
    /// End of the window, ms since the measured window began.
    pub end_ms: u64,
    /// Per direction (`[read, write]`): completions, bytes and the sum of their latencies (ns).
    pub ops: [u64; 2],
    pub bytes: [u64; 2],
    pub lat_ns: [u64; 2],
}

/// fio's flow control (`flow`, `flow_id`, `flow_sleep`): the I/Os of every worker in one
/// flow group, and the sum of their weights.
#[derive(Debug, Default)]
pub struct FlowGroup {
    pub ios: AtomicU64,
    pub total_weight: f64,
}

/// A worker's place in a [`FlowGroup`].
#[derive(Debug, Clone)]
pub struct FlowShare {
    pub group: Arc<FlowGroup>,
    /// This worker's weight (its job's `flow` spread over the job's workers).
    pub weight: f64,
    /// How long to wait once ahead of its share (fio `flow_sleep`; at least 10 µs here).
    pub sleep_ns: u64,
}

/// fio's run-flow switches of a worker (all off by default).
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkerFlow {
    /// Exponentially distributed gaps in the open loop (fio `rate_process=poisson`).
    pub poisson: bool,
    /// Which errors are counted and gone on after (fio `continue_on_error`).
    pub continue_on: ErrorClass,
    /// Log window length in ns (fio `log_avg_msec`); 0 = no logs.
    pub log_avg_ns: u64,
    /// Log windows to reserve room for up front.
    pub log_capacity: usize,
    /// fio's per-I/O logs (`log_avg_msec=0`): every measured completion is logged, up to this
    /// many (0 = no per-I/O log; [`IO_LOG_MAX`] in a run).
    pub log_each: usize,
    /// When the worker started, ns after the group (fio `startdelay`, `wait_for`): the open
    /// loop's schedule begins here.
    pub start_ns: u64,
}

pub struct WorkerPlan {
    pub job: usize,
    pub worker: usize,
    pub depth: u32,
    /// The largest I/O (each buffer's length); the generator picks each I/O's own.
    pub bs: u32,
    pub region_offset: u64,
    pub data: DataPattern,
    pub fsync_every: u32,
    /// Per-worker open-loop rate; None = closed loop.
    pub rate_iops: Option<f64>,
    pub t_start: Instant,
    pub ramp_ns: u64,
    /// Measured window length; u64::MAX = until the byte limit.
    pub runtime_ns: u64,
    pub byte_limit: Option<u64>,
    /// Number of buffer slots per direction-set: slot s uses buffer s (reads) and, for
    /// mixed jobs, buffer depth+s (writes).
    pub split_buffers: bool,
    /// Submit once this many I/Os are queued (1 = each at once).
    pub submit_batch: u32,
    /// `--verify`: the job's chunk generations; writes are stamped, reads checked.
    pub verify: Option<Arc<VerifyJob>>,
    /// fio `flow`: this worker's share of its flow group.
    pub flow_share: Option<FlowShare>,
    pub flow: WorkerFlow,
    /// A write failing with ENOSPC or EDQUOT ends the worker as done, not as a fault (fio
    /// `fill_device`/`fill_fs`).
    pub end_on_full: bool,
    /// Poll for completions this long before sleeping (0 = sleep at once); see
    /// [`crate::io::runner::RunControl::poll_ns`].
    pub poll_ns: u64,
    /// Keep the first and last measured completions' times, so that a device completing in
    /// bursts is measured over whole bursts ([`crate::io::bursts`]).
    pub edges: bool,
}

struct Slot {
    issue_ns: u64,
    offset: u64,
    op: Op,
    len: u32,
    /// Index of the length in the generator's table (counted when lengths vary).
    len_i: u32,
}

fn thread_cpu_ns() -> u64 {
    platform::mem::thread_cpu_time().map_or(0, |d| d.as_nanos() as u64)
}

pub struct Channels {
    pub tx: Sender<Msg>,
    pub recycle: Receiver<Box<Interval>>,
    pub live: Arc<Live>,
    pub stop: Arc<AtomicBool>,
}

/// Run the worker loop to completion. Never panics on I/O errors: they end the worker
/// with `WorkerEnd::fault` set and raise the shared stop flag.
///
/// One turn: move the interval clock to now, stop if it is time, issue what the free slots
/// and the rate allow, wait for completions (or, idle, for the next intended issue), reap
/// them. At the end every I/O still in flight is drained before its buffer may be freed.
pub fn run<B: Backend>(
    plan: &WorkerPlan,
    backend: &mut B,
    pool: &mut BufferPool,
    gen: &mut OffsetGen,
    ch: &Channels,
) -> WorkerEnd {
    let cpu0 = thread_cpu_ns();
    let tag = gen.next_u64();
    let mut w = WorkerState::new(plan, ch, tag);
    w.count_lens(gen.lens());
    loop {
        let now = w.now();
        w.advance(now);
        if w.finished(now) {
            break;
        }
        w.account_depth(now);
        let next_due = w.issue(backend, pool, gen, now);
        match w.wait(backend, now, next_due) {
            Next::Reap => {}
            Next::Again => continue,
            Next::Stop => break,
        }
        let now = w.now();
        w.advance(now);
        w.account_depth(now);
        w.reap(backend, pool, now);
    }
    let stop_ns = w.now();
    w.close_window(stop_ns);
    w.drain(backend, pool);
    w.finish(stop_ns, cpu0)
}

/// What the loop does after issuing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Next {
    /// Completions are ready (or the wait ended): reap them.
    Reap,
    /// Nothing was in flight and the wait for the next intended issue is over: next turn.
    Again,
    /// A fault ended the worker.
    Stop,
}

/// When the next I/O of the schedule is due.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Due {
    /// Issue it now; the value is its intended issue time (ns), where its latency starts.
    Now(u64),
    /// Not before this time (open loop).
    Later(u64),
}

/// The I/Os in flight by direction, and the time-weighted queue depth of the measured
/// window (the areas under the in-flight curves, in I/O × ns).
#[derive(Debug, Default, Clone, Copy, PartialEq)]
struct Depth {
    reads: u32,
    writes: u32,
    area_read: f64,
    area_write: f64,
    /// When the areas were last brought up to date.
    last_ns: u64,
}

impl Depth {
    /// Add the depth since the last update to the areas, counting only `[t0, deadline)`.
    #[inline]
    fn account(&mut self, now: u64, t0: u64, deadline: u64) {
        let a = self.last_ns.max(t0);
        let b = now.min(deadline);
        if b > a {
            let dt = (b - a) as f64;
            self.area_read += self.reads as f64 * dt;
            self.area_write += self.writes as f64 * dt;
        }
        self.last_ns = now;
    }

    #[inline]
    fn add(&mut self, op: Op) {
        if op == Op::Read {
            self.reads += 1
        } else {
            self.writes += 1
        }
    }

    #[inline]
    fn remove(&mut self, op: Op) {
        if op == Op::Read {
            self.reads -= 1
        } else {
            self.writes -= 1
        }
    }
}

/// Completions of the measured window, published for the progress display.
#[derive(Debug, Default, Clone, Copy)]
struct LiveCounts {
    read_ops: u64,
    write_ops: u64,
    read_bytes: u64,
    write_bytes: u64,
}

/// Everything one worker keeps between turns of its loop. Nothing here allocates after
/// [`WorkerState::new`], except a fresh interval when the collector has none to recycle
/// (once a second at most).
struct WorkerState<'a> {
    plan: &'a WorkerPlan,
    ch: &'a Channels,
    /// `plan.t_start`'s timeline, read once per issue and completion.
    clock: Stopwatch,
    /// End of the ramp: the measured window is `[t0, deadline)`, in ns since `plan.t_start`.
    t0: u64,
    deadline: u64,

    /// Per slot: what is in flight there. Slots `0..depth` carry data; slot `depth` the fsync.
    slots: Vec<Slot>,
    free: Vec<u32>,
    fsync_slot: u32,
    fsync_busy: bool,
    fsync_pending: bool,
    /// The file of the write that made the fsync due (its index bits; 0 for one file).
    fsync_file: u64,
    writes_since_fsync: u32,
    /// Buffer index of slot 0's writes (`depth` when reads and writes have their own buffers).
    write_buf_base: usize,
    write_tag: u64,
    /// Completions in the measured window per length index, `[reads, writes]`; empty when
    /// every I/O has one length.
    len_counts: Vec<[u64; 2]>,
    len_table: Vec<u32>,

    /// The current interval, its index (-1 = ramp) and when it ends.
    cur: Box<Interval>,
    index: i64,
    next_boundary: u64,

    depth: Depth,
    /// Open loop: ns between intended issues, and the index of the next one.
    period: Option<f64>,
    due_i: u64,
    issued_bytes: u64,
    /// A write found the target full (with `end_on_full`): issue nothing more.
    full: bool,
    live: LiveCounts,
    /// Last moment (ns since `t0`) completions were counted.
    last_measured: u64,
    /// `--verify-backlog N`: the last N acknowledged writes, read back before writing on.
    backlog: Option<Backlog>,
    end: WorkerEnd,
    /// Poisson open loop: the next intended issue (ns) and the generator of the gaps.
    due_at: f64,
    gap_rng: u64,
    /// I/Os this worker counted in its flow group (fio `flow`).
    flow_ios: u64,
    /// The open log window and when it ends (`u64::MAX`: no logs).
    log_cur: LogSample,
    log_next: u64,
    /// The per-I/O log's current chunk (fio `log_avg_msec=0`) and the entries logged so far.
    io_log: Vec<IoLogEntry>,
    io_logged: usize,
    /// The edges of the measured window's completions (allocated once, up front).
    edges: Option<Box<crate::io::bursts::EdgeLog>>,
}

/// fio's `verify_backlog`: the offsets of the last `cap` acknowledged writes; once full, they
/// are read back (and checked) before any further write.
struct Backlog {
    offsets: Vec<(u64, u32, u32)>,
    cap: usize,
    draining: bool,
    next: usize,
}

impl<'a> WorkerState<'a> {
    fn new(plan: &'a WorkerPlan, ch: &'a Channels, write_tag: u64) -> Self {
        let depth = plan.depth as usize;
        let t0 = plan.ramp_ns;
        let nslots = depth + usize::from(plan.fsync_every > 0);
        let index: i64 = if t0 > 0 { -1 } else { 0 };
        let mut cur = Interval::new();
        cur.index = index;
        Self {
            plan,
            ch,
            clock: Stopwatch::since(plan.t_start),
            t0,
            deadline: t0.saturating_add(plan.runtime_ns),
            slots: (0..nslots).map(|_| Slot { issue_ns: 0, offset: 0, op: Op::Read, len: 0, len_i: 0 }).collect(),
            free: (0..depth as u32).rev().collect(),
            fsync_slot: depth as u32,
            fsync_busy: false,
            fsync_pending: false,
            fsync_file: 0,
            writes_since_fsync: 0,
            write_buf_base: if plan.split_buffers { depth } else { 0 },
            write_tag,
            len_counts: Vec::new(),
            len_table: Vec::new(),
            cur,
            index,
            next_boundary: if t0 > 0 { t0 } else { SEC },
            depth: Depth::default(),
            period: plan.rate_iops.map(|r| (SEC as f64 / r).max(1.0)),
            due_i: 0,
            issued_bytes: 0,
            full: false,
            live: LiveCounts::default(),
            last_measured: 0,
            backlog: plan.verify.as_ref().and_then(|v| v.backlog).map(|n| {
                let cap = n.clamp(1, 1 << 20) as usize;
                Backlog { offsets: Vec::with_capacity(cap), cap, draining: false, next: 0 }
            }),
            end: WorkerEnd { log: Vec::with_capacity(plan.flow.log_capacity), ..WorkerEnd::default() },
            due_at: plan.flow.start_ns as f64,
            gap_rng: write_tag ^ 0x706f_6973_736f_6e21,
            flow_ios: 0,
            log_cur: LogSample::default(),
            log_next: match (plan.flow.log_avg_ns, plan.flow.log_each) {
                (0, 0) => u64::MAX,
                // Per-I/O: a window end no clock reaches (no window is ever closed).
                (0, _) => u64::MAX - 1,
                (avg, _) => t0.saturating_add(avg),
            },
            io_log: if plan.flow.log_each > 0 {
                Vec::with_capacity(IO_LOG_CHUNK.min(plan.flow.log_each))
            } else {
                Vec::new()
            },
            io_logged: 0,
            edges: plan.edges.then(|| Box::new(crate::io::bursts::EdgeLog::new())),
        }
    }

    /// The next gap of a Poisson process with mean `period` ns: -ln(U)·period, U uniform in
    /// (0, 1] from a splitmix64 stream (no allocation, one draw per I/O).
    #[inline]
    fn poisson_gap(&mut self, period: f64) -> f64 {
        self.gap_rng = self.gap_rng.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.gap_rng;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        let u = ((z >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        -u.ln() * period
    }

    /// One entry of the per-I/O log; a full chunk is set aside and a new one started (one
    /// allocation per [`IO_LOG_CHUNK`] completions). Not inlined: the loop of a job without
    /// per-I/O logs stays as small as it was.
    #[inline(never)]
    fn log_io(&mut self, op: Op, len: u32, lat: u64, offset: u64, now: u64) {
        if self.io_log.len() == self.io_log.capacity() && !self.next_io_log_chunk() {
            return;
        }
        let t_ms = (now.saturating_sub(self.t0) / 1_000_000).min(u64::from(u32::MAX)) as u32;
        let offset = offset & crate::io::files::OFFSET_MASK;
        self.io_log.push(IoLogEntry { t_ms, dir: u8::from(op != Op::Read), len, lat_ns: lat, offset });
    }

    /// Set the full chunk aside; false once the worker has logged [`IO_LOG_MAX`] entries.
    #[cold]
    fn next_io_log_chunk(&mut self) -> bool {
        self.io_logged += self.io_log.len();
        if self.io_logged >= self.plan.flow.log_each {
            self.end.io_log_cut = true;
            self.io_log.shrink_to_fit();
            return false;
        }
        let next = IO_LOG_CHUNK.min(self.plan.flow.log_each - self.io_logged);
        let full = std::mem::replace(&mut self.io_log, Vec::with_capacity(next));
        if !full.is_empty() {
            self.end.io_log.push(full);
        }
        true
    }

    /// Close every log window that ended by `now` (and by the deadline): one push per window,
    /// never per I/O.
    #[cold]
    fn close_logs(&mut self, now: u64) {
        let avg = self.plan.flow.log_avg_ns;
        while now >= self.log_next && self.log_next <= self.deadline {
            self.log_cur.end_ms = (self.log_next - self.t0) / 1_000_000;
            self.end.log.push(self.log_cur);
            self.log_cur = LogSample::default();
            self.log_next = self.log_next.saturating_add(avg);
        }
    }

    #[inline]
    fn now(&self) -> u64 {
        self.clock.elapsed_ns()
    }

    /// Count completions by length when `lens` has more than one.
    fn count_lens(&mut self, lens: &IoLens) {
        if let IoLens::Var(_) = lens {
            self.len_table = lens.table();
            self.len_counts = vec![[0; 2]; self.len_table.len()];
        }
    }

    /// I/Os in flight, the fsync included.
    #[inline]
    fn inflight(&self) -> u32 {
        self.depth.reads + self.depth.writes + u32::from(self.fsync_busy)
    }

    #[inline]
    fn limit_reached(&self) -> bool {
        self.full || self.plan.byte_limit.is_some_and(|l| self.issued_bytes >= l)
    }

    #[inline]
    fn measuring(&self, now: u64) -> bool {
        now >= self.t0 && now < self.deadline
    }

    /// True when the loop must end: stopped, past the deadline, failed, or the byte limit
    /// issued and every I/O back.
    #[inline]
    fn finished(&self, now: u64) -> bool {
        let stopping = self.ch.stop.load(Ordering::Relaxed) || now >= self.deadline || self.end.fault.is_some();
        stopping || (self.limit_reached() && self.inflight() == 0)
    }

    /// Send every interval that ended by `now` to the collector and start the next with a
    /// recycled box. The ramp interval (-1) is sent too: the collector discards it, and the
    /// worker gets a recycled box back either way.
    #[inline]
    fn advance(&mut self, now: u64) {
        while now >= self.next_boundary && self.next_boundary <= self.deadline {
            self.send_interval();
        }
        if now >= self.log_next {
            self.close_logs(now);
        }
    }

    #[cold]
    fn send_interval(&mut self) {
        let fresh = self.ch.recycle.try_recv().unwrap_or_else(|_| Interval::new());
        let mut full = std::mem::replace(&mut self.cur, fresh);
        full.index = self.index;
        let _ = self.ch.tx.send(Msg::Interval { job: self.plan.job, worker: self.plan.worker, iv: full });
        self.cur.clear();
        self.index += 1;
        self.cur.index = self.index;
        self.next_boundary = self.t0 + (self.index as u64 + 1) * SEC;
    }

    #[inline]
    fn account_depth(&mut self, now: u64) {
        self.depth.account(now, self.t0, self.deadline);
    }

    /// Queue the pending fsync, then as many I/Os as the free slots and the rate schedule
    /// allow, submitted in batches. Returns when the open loop's next I/O is due
    /// (`u64::MAX`: not waiting for one).
    #[inline]
    fn issue<B: Backend>(&mut self, backend: &mut B, pool: &mut BufferPool, gen: &mut OffsetGen, now: u64) -> u64 {
        if self.fsync_pending && !self.fsync_busy {
            self.queue_fsync(backend, pool, now);
        }
        let mut unsubmitted = 0u32;
        while !self.limit_reached() {
            let issue_ns = match self.due(now) {
                Due::Now(t) => t,
                Due::Later(t) => return t,
            };
            if let Some(f) = &self.plan.flow_share {
                // fio's flow control: ahead of its share of the group's I/Os, the worker waits.
                let all = f.group.ios.load(Ordering::Relaxed);
                if all > 0 && self.flow_ios as f64 / all as f64 > f.weight / f.group.total_weight {
                    return now + f.sleep_ns;
                }
            }
            let Some(slot) = self.free.pop() else { break };
            if let Some(f) = &self.plan.flow_share {
                f.group.ios.fetch_add(1, Ordering::Relaxed);
                self.flow_ios += 1;
            }
            self.due_i += 1;
            if let (true, Some(p)) = (self.plan.flow.poisson, self.period) {
                self.due_at += self.poisson_gap(p);
            }
            if !self.issue_one(backend, pool, gen, slot, issue_ns, &mut unsubmitted) {
                break;
            }
        }
        u64::MAX
    }

    /// The schedule's next I/O: at once in a closed loop; at its intended time in an open
    /// loop, which is also where its latency starts (so a late issue counts against it).
    #[inline]
    fn due(&self, now: u64) -> Due {
        match self.period {
            Some(p) => {
                let due = if self.plan.flow.poisson {
                    self.due_at as u64
                } else {
                    self.plan.flow.start_ns + (self.due_i as f64 * p) as u64
                };
                if due > now {
                    Due::Later(due)
                } else {
                    Due::Now(due)
                }
            }
            None => Due::Now(now),
        }
    }

    fn queue_fsync<B: Backend>(&mut self, backend: &mut B, pool: &mut BufferPool, now: u64) {
        let s = &mut self.slots[self.fsync_slot as usize];
        s.issue_ns = now;
        s.op = Op::Fsync;
        match backend.queue(self.fsync_slot, Op::Fsync, self.fsync_file, pool.slot_ptr(0), 0, 0) {
            Ok(()) => self.fsync_busy = true,
            Err(e) => {
                let error = Some(code_of_error(&e));
                self.end.fault.get_or_insert(IoFault { error, offset: 0, op: Op::Fsync, transferred: 0, len: 0 });
            }
        }
        self.fsync_pending = false;
    }

    /// Queue one I/O in `slot` (and submit the batch once it is full). False when it could
    /// not be queued: the fault is recorded and the slot is free again. Per I/O: always inlined.
    #[inline(always)]
    fn issue_one<B: Backend>(
        &mut self,
        backend: &mut B,
        pool: &mut BufferPool,
        gen: &mut OffsetGen,
        slot: u32,
        issue_ns: u64,
        unsubmitted: &mut u32,
    ) -> bool {
        let plan = self.plan;
        let (op, offset, len, len_i) = match &plan.verify {
            None => {
                let read = gen.next_is_read();
                let (off, len, len_i) = gen.next_io(read);
                (if read { Op::Read } else { Op::Write }, plan.region_offset + off, len, len_i)
            }
            Some(v) => match self.verified_draw(v, pool, gen, slot) {
                Some(d) => d,
                None => {
                    // Every draw hit a chunk in use: wait for completions, then draw again. With
                    // nothing in flight no chunk is in use, so no draw can ever be claimed (an
                    // offset off the chunk grid, which validation refuses): fail, never spin.
                    self.free.push(slot);
                    self.due_i -= 1;
                    if self.inflight() == 0 && self.backlog.as_ref().is_none_or(|b| !b.draining) {
                        let error = Some(code_for(IoErrorClass::Invalid));
                        self.end.fault = Some(IoFault { error, offset: 0, op: Op::Write, transferred: 0, len: 0 });
                    }
                    return false;
                }
            },
        };
        let buf_i = if op == Op::Read {
            slot as usize
        } else {
            let i = self.write_buf_base + slot as usize;
            if plan.verify.is_none() {
                self.write_tag = self.write_tag.wrapping_add(1);
                stamp(&mut pool.slot_mut(i)[..len as usize], plan.data, self.write_tag, offset);
            }
            i
        };
        self.depth.add(op);
        self.slots[slot as usize] = Slot { issue_ns, offset, op, len, len_i };
        self.issued_bytes += u64::from(len);
        // Start the device on what is ready (fio iodepth_batch_submit semantics). One I/O per
        // submission: the previous one goes in when this one is queued, and the last of the
        // turn with the wait's call right after the loop (one system call less per turn; it
        // enters the kernel a few tens of nanoseconds later).
        let mut r = Ok(());
        if plan.submit_batch == 1 && *unsubmitted > 0 {
            *unsubmitted = 0;
            r = backend.poll();
        }
        if r.is_ok() {
            r = backend.queue(slot, op, offset, pool.slot_ptr(buf_i), len, buf_i as u16);
        }
        *unsubmitted += 1;
        if r.is_ok() && plan.submit_batch > 1 && *unsubmitted >= plan.submit_batch {
            *unsubmitted = 0;
            r = backend.poll();
        }
        match r {
            Ok(()) => true,
            Err(e) => {
                self.end.fault = Some(IoFault { error: Some(code_of_error(&e)), offset, op, transferred: 0, len });
                // Not queued: undo the accounting for this slot.
                self.depth.remove(op);
                self.free.push(slot);
                false
            }
        }
    }

    /// Wait for completions, but no later than the next interval boundary, the deadline or
    /// the next intended issue; with nothing in flight, wait for that moment instead.
    #[inline]
    fn wait<B: Backend>(&mut self, backend: &mut B, now: u64, next_due: u64) -> Next {
        let inflight = self.inflight();
        let wake = self.next_boundary.min(self.deadline).min(next_due);
        if inflight == 0 {
            if self.end.fault.is_some() {
                return Next::Stop;
            }
            idle_until(now, wake);
            return Next::Again;
        }
        let (want, timeout) = wait_args(now, wake, next_due);
        // With several I/Os in flight, submit and pick up what has already finished before
        // sleeping: sleeping for every single completion doubles the context switches. Only
        // when the ring says completion work waits (a memory read): otherwise that call would
        // find nothing, and the sleeping call runs any work that arrives meanwhile first.
        let r = if want == 1 && self.plan.poll_ns > 0 {
            self.poll_wait(backend, now, wake, next_due)
        } else if want == 1 && inflight > 1 && backend.pending() {
            backend.poll().and_then(|_| if backend.ready() { Ok(()) } else { backend.submit_and_wait(want, timeout) })
        } else {
            backend.submit_and_wait(want, timeout)
        };
        match r {
            Ok(()) => Next::Reap,
            Err(e) => {
                self.end.fault =
                    Some(IoFault { error: Some(code_of_error(&e)), offset: 0, op: Op::Read, transferred: 0, len: 0 });
                Next::Stop
            }
        }
    }

    /// Wait by polling: submit, then watch the ring for completion work for up to
    /// `poll_ns` (never past `wake`), entering the kernel only when there is some; sleep
    /// after that. A sleeping waiter's wake-up (an interrupt to its CPU and, on a VM, the
    /// vCPU leaving halt) would be added to every latency it measures.
    /// The time spent checking an empty ring is counted apart (`poll_idle_ns`): it is not
    /// work, and the tool-bottleneck check leaves it out of the worker's CPU time.
    #[inline]
    fn poll_wait<B: Backend>(&mut self, backend: &mut B, now: u64, wake: u64, next_due: u64) -> std::io::Result<()> {
        backend.poll()?;
        if backend.ready() {
            return Ok(());
        }
        let until = now.saturating_add(self.plan.poll_ns).min(wake);
        let mut idle_from = self.now();
        let mut spins = 0u32;
        let t = loop {
            if backend.pending() {
                self.end.poll_idle_ns += self.now().saturating_sub(idle_from);
                backend.poll()?;
                if backend.ready() {
                    return Ok(());
                }
                idle_from = self.now();
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(POLL_CLOCK_EVERY) {
                let t = self.now();
                if t >= until {
                    break t;
                }
            }
            std::hint::spin_loop();
        };
        self.end.poll_idle_ns += t.saturating_sub(idle_from);
        match wait_args(t, wake, next_due) {
            (0, _) => Ok(()),
            (want, timeout) => backend.submit_and_wait(want, timeout),
        }
    }

    /// Take every ready completion, then publish the live counters; a fault raises the
    /// shared stop flag.
    #[inline]
    fn reap<B: Backend>(&mut self, backend: &mut B, pool: &mut BufferPool, now: u64) {
        let measuring = self.measuring(now);
        backend.reap(|slot, c| self.complete(slot, c, now, measuring, pool));
        if measuring {
            self.last_measured = now - self.t0;
        }
        let (live, l) = (&self.ch.live, self.live);
        live.read_ops.store(l.read_ops, Ordering::Relaxed);
        live.write_ops.store(l.write_ops, Ordering::Relaxed);
        live.read_bytes.store(l.read_bytes, Ordering::Relaxed);
        live.write_bytes.store(l.write_bytes, Ordering::Relaxed);
        if self.end.fault.is_some() {
            self.ch.stop.store(true, Ordering::Relaxed);
        }
    }

    /// One completion: free its slot, count it (in the measured window) or record its fault.
    /// Per I/O: always inlined into the backend's reap loop, as the closure it replaces was.
    #[inline(always)]
    fn complete(&mut self, slot: u32, c: Completion, now: u64, measuring: bool, pool: &mut BufferPool) {
        if slot == self.fsync_slot && self.fsync_busy {
            self.fsync_busy = false;
            let fault = |error| IoFault { error: Some(error), offset: 0, op: Op::Fsync, transferred: 0, len: 0 };
            match c {
                Completion::Failed(e) if self.plan.flow.continue_on.covers(false) => self.count_error(fault(e)),
                Completion::Failed(e) if self.end.fault.is_none() => self.end.fault = Some(fault(e)),
                _ if measuring => self.end.fsyncs += 1,
                _ => {}
            }
            return;
        }
        let s = &self.slots[slot as usize];
        let (op, offset, issue_ns, len, len_i) = (s.op, s.offset, s.issue_ns, s.len, s.len_i);
        self.depth.remove(op);
        if self.plan.verify.is_some() {
            self.verify_complete(slot, c, pool);
        }
        if op != Op::Read {
            self.writes_since_fsync += 1;
            if self.plan.fsync_every > 0 && self.writes_since_fsync >= self.plan.fsync_every {
                self.writes_since_fsync = 0;
                self.fsync_pending = true;
                self.fsync_file = offset & !crate::io::files::OFFSET_MASK;
            }
        }
        self.free.push(slot);
        if c != Completion::Done(len) {
            if self.plan.end_on_full && op == Op::Write && fills(c) {
                self.full = true; // filled: the end of the job, as fio's fill_device
                return;
            }
            let (error, transferred) = match c {
                Completion::Done(n) => (None, n),
                Completion::Failed(e) => (Some(e), 0),
            };
            let f = IoFault { error, offset, op, transferred, len };
            if self.plan.flow.continue_on.covers(op == Op::Read) {
                self.count_error(f);
            } else if self.end.fault.is_none() {
                self.end.fault = Some(f);
            }
            return;
        }
        if measuring {
            let lat = now.saturating_sub(issue_ns);
            let bs = u64::from(len);
            if let Some(c) = self.len_counts.get_mut(len_i as usize) {
                c[usize::from(op != Op::Read)] += 1;
            }
            // One test for both kinds of fio log (no log: u64::MAX; per-I/O: never a window end).
            if self.log_next != u64::MAX {
                if self.plan.flow.log_each > 0 {
                    self.log_io(op, len, lat, offset, now);
                } else {
                    let d = usize::from(op != Op::Read);
                    self.log_cur.ops[d] += 1;
                    self.log_cur.bytes[d] += bs;
                    self.log_cur.lat_ns[d] += lat;
                }
            }
            if let Some(e) = &mut self.edges {
                e.record(now, len, op != Op::Read);
            }
            if op == Op::Read {
                self.cur.read.record(lat);
                self.cur.read_bytes += bs;
                self.live.read_ops += 1;
                self.live.read_bytes += bs;
            } else {
                self.cur.write.record(lat);
                self.cur.write_bytes += bs;
                self.live.write_ops += 1;
                self.live.write_bytes += bs;
            }
        }
    }

    /// A verified job's next I/O: a draw whose chunks are free, claimed (a write's buffer is
    /// stamped with their next generations). `None` when 16 draws all hit chunks in use, or a
    /// backlog read-back waits for its reads.
    fn verified_draw(
        &mut self,
        v: &VerifyJob,
        pool: &mut BufferPool,
        gen: &mut OffsetGen,
        slot: u32,
    ) -> Option<(Op, u64, u32, u32)> {
        let plan = self.plan;
        if let Some(b) = self.backlog.as_mut().filter(|b| b.draining) {
            while b.next < b.offsets.len() {
                let (offset, len, len_i) = b.offsets[b.next];
                b.next += 1;
                if v.begin_read(offset, u64::from(len)) {
                    return Some((Op::Read, offset, len, len_i));
                }
            }
            if self.depth.reads + self.depth.writes > 0 {
                return None;
            }
            b.offsets.clear();
            b.draining = false;
            b.next = 0;
        }
        for _ in 0..16 {
            let read = gen.next_is_read();
            let (off, len, len_i) = gen.next_io(read);
            let offset = plan.region_offset + off;
            let claimed = if read {
                v.begin_read(offset, u64::from(len))
            } else {
                let i = self.write_buf_base + slot as usize;
                v.begin_write(&mut pool.slot_mut(i)[..len as usize], offset, plan.worker as u32)
            };
            if claimed {
                return Some((if read { Op::Read } else { Op::Write }, offset, len, len_i));
            }
        }
        None
    }

    /// A verified job's completion: a write's chunks take their new generation, a read's are
    /// checked. A failure of a fatal verify stops the group.
    #[inline]
    fn verify_complete(&mut self, slot: u32, c: Completion, pool: &mut BufferPool) {
        let Some(v) = &self.plan.verify else { return };
        let s = &self.slots[slot as usize];
        let (op, offset, len, len_i) = (s.op, s.offset, s.len, s.len_i);
        let ok = c == Completion::Done(len);
        match op {
            Op::Read => {
                let buf = &pool.slot_mut(slot as usize)[..len as usize];
                if v.end_read(buf, offset, ok) && v.fatal {
                    self.ch.stop.store(true, Ordering::Relaxed);
                }
            }
            Op::Write => {
                v.end_write(offset, u64::from(len), ok);
                if let Some(b) = self.backlog.as_mut().filter(|_| ok) {
                    if !b.draining && b.offsets.len() < b.cap {
                        b.offsets.push((offset, len, len_i));
                        b.draining = b.offsets.len() == b.cap;
                    }
                }
            }
            _ => {}
        }
    }

    /// An error of a class the job goes on after: count it, keep the first (no allocation).
    #[cold]
    fn count_error(&mut self, f: IoFault) {
        self.end.errors += 1;
        if self.end.first_error.is_none() {
            self.end.first_error = Some(f);
        }
    }

    /// The loop has ended at `stop_ns`: bring the depth areas up to it and fix the length of
    /// the measured window (a run that ends on its byte limit counts up to its last
    /// measured completion).
    fn close_window(&mut self, stop_ns: u64) {
        self.account_depth(stop_ns.min(self.deadline));
        self.end.measured_ns = if (self.plan.byte_limit.is_some() || self.full) && stop_ns < self.deadline {
            self.last_measured
        } else {
            stop_ns.min(self.deadline).saturating_sub(self.t0)
        };
    }

    /// Every I/O still in flight must complete before its buffer may be freed: wait for them
    /// (at most about a minute); if some never return, leak the pool rather than free memory
    /// the kernel may still write into.
    fn drain<B: Backend>(&mut self, backend: &mut B, pool: &mut BufferPool) {
        let mut guard = 0u32;
        while self.inflight() > 0 {
            if backend.submit_and_wait(1, Some(Duration::from_millis(100))).is_err() {
                guard += 1;
                if guard > 600 {
                    break; // the kernel keeps the buffers' pages pinned; leak rather than free
                }
            }
            backend.reap(|slot, c| {
                if slot == self.fsync_slot && self.fsync_busy {
                    self.fsync_busy = false;
                } else {
                    self.depth.remove(self.slots[slot as usize].op);
                    // A write acknowledged now is as written as any other.
                    if self.plan.verify.is_some() {
                        self.verify_complete(slot, c, pool);
                    }
                }
            });
        }
        if self.depth.reads + self.depth.writes > 0 {
            // Could not drain: never free memory the kernel may still write into.
            std::mem::forget(std::mem::replace(pool, BufferPool::new(1, 4096, 4096).expect("tiny alloc")));
        }
    }

    /// Send the last (partial) interval and hand back the worker's end report (`cpu0`: the
    /// thread's CPU time when it started).
    fn finish(mut self, stop_ns: u64, cpu0: u64) -> WorkerEnd {
        if self.index >= 0 || self.cur.read.count() + self.cur.write.count() > 0 {
            let plan = self.plan;
            let mut cur = self.cur;
            cur.index = self.index;
            let _ = self.ch.tx.send(Msg::Interval { job: plan.job, worker: plan.worker, iv: cur });
        }
        if !self.io_log.is_empty() {
            self.end.io_log.push(std::mem::take(&mut self.io_log));
        }
        if !self.len_counts.is_empty() {
            self.end.bs_counts = self.len_table.iter().zip(&self.len_counts).map(|(&bs, c)| (bs, c[0], c[1])).collect();
        }
        self.end.qd_area_read = self.depth.area_read;
        self.end.qd_area_write = self.depth.area_write;
        self.end.cpu_ns = thread_cpu_ns().saturating_sub(cpu0);
        self.end.poll_ns = self.plan.poll_ns;
        self.end.wall_ns = stop_ns;
        self.end.t0_ns = self.t0;
        self.end.edges = self.edges;
        self.end
    }
}

/// True when a write failed because the target is full: no space, or the user's quota spent
/// (fio's `fill_device`/`fill_fs` end there).
#[inline]
fn fills(c: Completion) -> bool {
    c.error().is_some_and(|e| matches!(e.class(), IoErrorClass::NoSpace | IoErrorClass::Quota))
}

/// A polling wait reads the clock once per this many checks of the ring (a check is a
/// memory read; the clock a few tens of nanoseconds).
const POLL_CLOCK_EVERY: u32 = 32;

/// How to wait with I/O in flight at `now` until `wake` at the latest (`next_due`: the open
/// loop's next intended issue, `u64::MAX` for none): `(completions wanted, timeout)`.
/// Close to an intended issue, poll instead of sleeping; a far boundary needs no timer.
#[inline]
fn wait_args(now: u64, wake: u64, next_due: u64) -> (u32, Option<Duration>) {
    if wake > now && wake != u64::MAX {
        let wait = wake - now;
        if wake == next_due && wait <= SPIN_NS {
            (0, None)
        } else if wake == next_due {
            (1, Some(Duration::from_nanos(wait - SPIN_NS)))
        } else if wait < TIMER_NS {
            (1, Some(Duration::from_nanos(wait)))
        } else {
            // A far boundary needs no timer: completions arrive long before it, and
            // arming a kernel timer on every wait costs CPU at high IOPS.
            (1, None)
        }
    } else if wake <= now {
        (0, None)
    } else {
        (1, None)
    }
}

/// Open loop and idle: wait for the next intended issue. Timer wake-ups overshoot by tens
/// of microseconds, which open-loop timing would charge to the device as latency, so sleep
/// coarsely and spin through the last stretch.
#[inline]
fn idle_until(now: u64, wake: u64) {
    if wake > now && wake != u64::MAX {
        let wait = wake - now;
        if wait > SPIN_NS {
            std::thread::sleep(Duration::from_nanos(wait - SPIN_NS));
        } else {
            std::hint::spin_loop();
        }
    }
}

/// What a worker's hand-off came to, for its end report.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct HandoffEnd {
    /// Storage bytes the worker's own thread moved over the run.
    pub own_bytes: u64,
    /// Storage bytes its kernel workers moved (those alive at the end).
    pub kernel_bytes: u64,
    pub kernel_workers: u32,
    /// Their CPU time, ns.
    pub kernel_cpu_ns: u64,
    /// Requests were submitted for hand-off at once.
    pub forced: bool,
    /// CPUs the kernel's workers were given; empty: inherited.
    pub cpus: Vec<u32>,
    /// Their cap per submitting thread; 0: the kernel's.
    pub max_workers: u32,
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::io::backend::null::Null;
    use crate::io::backend::BackendConfig;
    use crate::io::offsets::worker_rng;
    use crate::target::fault::NullFault;
    use spec::{Distribution, RwMode};
    use std::sync::mpsc;

    const MS: u64 = 1_000_000;

    fn plan(depth: u32) -> WorkerPlan {
        WorkerPlan {
            job: 0,
            worker: 0,
            depth,
            bs: 4096,
            region_offset: 0,
            data: DataPattern::Random,
            fsync_every: 0,
            rate_iops: None,
            t_start: Instant::now(),
            ramp_ns: 0,
            runtime_ns: u64::MAX,
            byte_limit: None,
            split_buffers: false,
            submit_batch: 1,
            verify: None,
            flow_share: None,
            flow: WorkerFlow::default(),
            end_on_full: false,
            poll_ns: 0,
            edges: false,
        }
    }

    fn channels() -> (Channels, mpsc::Receiver<Msg>) {
        let (tx, rx) = mpsc::channel();
        let (_, recycle) = mpsc::channel();
        (Channels { tx, recycle, live: Arc::default(), stop: Arc::default() }, rx)
    }

    /// Run `plan` on the null engine over a 1 MiB region with `rw`.
    fn run_null(plan: &WorkerPlan, rw: RwMode, fault: Option<NullFault>) -> (WorkerEnd, Vec<Interval>, Channels) {
        let (ch, rx) = channels();
        let cfg = BackendConfig {
            fd: platform::target::NO_RAW,
            files: Vec::new(),
            depth: plan.depth,
            buffers: None,
            register_file: false,
            sqpoll: false,
            flags: 0,
        };
        let mut backend = Null::new(&cfg, fault);
        let slots = plan.depth as usize * if plan.split_buffers { 2 } else { 1 };
        let mut pool = BufferPool::new(slots.max(1), plan.bs as usize, 4096).unwrap();
        let lens = IoLens::One(plan.bs);
        let mut gen = OffsetGen::with_lens(rw, 50, &Distribution::Uniform, 1 << 20, lens, 0, 1, worker_rng(1, 0, 0));
        let end = run(plan, &mut backend, &mut pool, &mut gen, &ch);
        let ivs = rx
            .try_iter()
            .filter_map(|m| match m {
                Msg::Interval { iv, .. } => Some(*iv),
                Msg::Done { .. } => None,
            })
            .collect();
        (end, ivs, ch)
    }

    #[test]
    fn wait_args_block_poll_or_time_out() {
        let far = 10 * TIMER_NS;
        // Nothing due: a far boundary blocks without a timer, a near one arms it.
        assert_eq!(wait_args(0, far, u64::MAX), (1, None));
        assert_eq!(wait_args(0, 5 * MS, u64::MAX), (1, Some(Duration::from_millis(5))));
        // The boundary has passed: only submit and pick up.
        assert_eq!(wait_args(7, 7, u64::MAX), (0, None));
        assert_eq!(wait_args(8, 7, u64::MAX), (0, None));
        // An intended issue close by: poll; further away: sleep until the spin stretch.
        assert_eq!(wait_args(0, SPIN_NS, SPIN_NS), (0, None));
        assert_eq!(wait_args(0, 3 * SPIN_NS, 3 * SPIN_NS), (1, Some(Duration::from_nanos(2 * SPIN_NS))));
        // No boundary and no deadline at all (a byte-limited run's last second).
        assert_eq!(wait_args(0, u64::MAX, u64::MAX), (1, None));
    }

    #[test]
    fn depth_counts_only_the_measured_window() {
        let mut d = Depth::default();
        d.add(Op::Read);
        d.add(Op::Read);
        d.add(Op::Write);
        // Ramp until 100: nothing counts before it; the deadline is 300.
        d.account(50, 100, 300);
        assert_eq!((d.area_read, d.area_write), (0.0, 0.0));
        d.account(200, 100, 300);
        assert_eq!((d.area_read, d.area_write), (200.0, 100.0));
        d.remove(Op::Read);
        d.account(400, 100, 300);
        assert_eq!((d.area_read, d.area_write), (300.0, 200.0), "cut at the deadline");
        assert_eq!((d.reads, d.writes, d.last_ns), (1, 1, 400));
    }

    #[test]
    fn open_loop_schedule_issues_at_intended_times() {
        let mut p = plan(4);
        p.rate_iops = Some(1000.0);
        let (ch, _rx) = channels();
        let mut w = WorkerState::new(&p, &ch, 0);
        assert_eq!(w.due(0), Due::Now(0));
        w.due_i = 3;
        assert_eq!(w.due(2 * MS), Due::Later(3 * MS));
        assert_eq!(w.due(5 * MS), Due::Now(3 * MS), "late: the latency starts at the intended time");
        let closed = plan(4);
        let w = WorkerState::new(&closed, &ch, 0);
        assert_eq!(w.due(12345), Due::Now(12345));
    }

    #[test]
    fn intervals_advance_at_each_second_after_the_ramp() {
        let mut p = plan(1);
        p.ramp_ns = 500 * MS;
        p.runtime_ns = 2 * SEC;
        let (ch, rx) = channels();
        let mut w = WorkerState::new(&p, &ch, 0);
        assert_eq!((w.index, w.next_boundary), (-1, 500 * MS));
        w.advance(499 * MS);
        assert!(rx.try_recv().is_err());
        // Past the ramp and the first second at once: both go out, in order.
        w.advance(p.ramp_ns + SEC + 1);
        let sent: Vec<i64> = rx
            .try_iter()
            .map(|m| match m {
                Msg::Interval { iv, .. } => iv.index,
                Msg::Done { .. } => unreachable!(),
            })
            .collect();
        assert_eq!(sent, [-1, 0]);
        assert_eq!((w.index, w.next_boundary), (1, p.ramp_ns + 2 * SEC));
        // The deadline's boundary is the last one.
        w.advance(u64::MAX);
        assert_eq!(rx.try_iter().count(), 1);
        assert_eq!(w.next_boundary, p.ramp_ns + 3 * SEC);
    }

    #[test]
    fn a_byte_limit_ends_the_run_after_every_io_returns() {
        let mut p = plan(8);
        p.byte_limit = Some(100 * 4096);
        let (end, ivs, ch) = run_null(&p, RwMode::RandRead, None);
        assert!(end.fault.is_none());
        let ops: u64 = ivs.iter().map(|iv| iv.read.count()).sum();
        assert_eq!(ops, 100);
        assert_eq!(ivs.iter().map(|iv| iv.read_bytes).sum::<u64>(), 100 * 4096);
        assert_eq!(ch.live.read_ops.load(Ordering::Relaxed), 100);
        assert!(!ch.stop.load(Ordering::Relaxed));
        assert!(end.measured_ns > 0 && end.wall_ns >= end.measured_ns);
    }

    /// A ring that counts its kernel calls: every call submits what is queued, and a device
    /// with no latency completes it at once (posted for the next reap).
    #[derive(Default)]
    struct CountingRing {
        queued: Vec<u32>,
        done: Vec<u32>,
        calls: u64,
        /// I/Os submitted by each call.
        per_call: Vec<usize>,
    }

    impl Backend for CountingRing {
        fn queue(&mut self, slot: u32, _: Op, _: u64, _: *mut u8, _: u32, _: u16) -> std::io::Result<()> {
            self.queued.push(slot);
            Ok(())
        }
        fn submit_and_wait(&mut self, _: u32, _: Option<Duration>) -> std::io::Result<()> {
            self.calls += 1;
            self.per_call.push(self.queued.len());
            self.done.append(&mut self.queued);
            Ok(())
        }
        fn ready(&mut self) -> bool {
            !self.done.is_empty()
        }
        fn pending(&mut self) -> bool {
            !self.done.is_empty()
        }
        fn reap<F: FnMut(u32, Completion)>(&mut self, mut f: F) {
            for slot in self.done.drain(..) {
                f(slot, Completion::Done(4096));
            }
        }
    }

    fn run_counting(plan: &WorkerPlan) -> (WorkerEnd, CountingRing) {
        let (ch, _rx) = channels();
        let mut ring = CountingRing::default();
        let mut pool = BufferPool::new(plan.depth as usize, plan.bs as usize, 4096).unwrap();
        let lens = IoLens::One(plan.bs);
        let mut gen = OffsetGen::with_lens(
            RwMode::RandRead,
            50,
            &Distribution::Uniform,
            1 << 20,
            lens,
            0,
            1,
            worker_rng(1, 0, 0),
        );
        let end = run(plan, &mut ring, &mut pool, &mut gen, &ch);
        (end, ring)
    }

    #[test]
    fn one_io_per_submission_costs_one_kernel_call_per_io() {
        // The last I/O of a turn goes in with the wait's call: 1 call per I/O, not one more
        // per turn (on a loop device at QD32 that was 1.22 io_uring_enter calls per I/O).
        let mut p = plan(8);
        p.byte_limit = Some(800 * 4096);
        let (end, ring) = run_counting(&p);
        assert!(end.fault.is_none());
        assert!(ring.per_call.iter().all(|&n| n <= 1), "one I/O per submission: {:?}", &ring.per_call[..16]);
        assert_eq!(ring.per_call.iter().sum::<usize>(), 800);
        // Every call submits one I/O, but the drain's last wait (nothing left to submit).
        assert!(ring.calls <= 801, "{} kernel calls for 800 I/Os", ring.calls);
    }

    #[test]
    fn a_submit_batch_is_submitted_whole() {
        let mut p = plan(8);
        p.submit_batch = 4;
        p.byte_limit = Some(800 * 4096);
        let (end, ring) = run_counting(&p);
        assert!(end.fault.is_none());
        assert_eq!(ring.per_call.iter().sum::<usize>(), 800);
        assert!(ring.per_call.iter().all(|&n| n <= 4), "{:?}", &ring.per_call[..16]);
        assert!(ring.per_call.iter().filter(|&&n| n == 4).count() >= 190, "{:?}", &ring.per_call[..16]);
    }

    #[test]
    fn fsync_every_n_writes_is_counted() {
        let mut p = plan(4);
        p.fsync_every = 10;
        p.byte_limit = Some(200 * 4096);
        let (end, ivs, _) = run_null(&p, RwMode::RandWrite, None);
        assert!(end.fault.is_none());
        assert_eq!(ivs.iter().map(|iv| iv.write.count()).sum::<u64>(), 200);
        // One fsync before every 10 more writes, as fio: none after the last write (19).
        assert_eq!(end.fsyncs, 19);
    }

    #[test]
    fn per_io_log_holds_every_completion_up_to_its_cap() {
        let mut p = plan(4);
        p.byte_limit = Some(5000 * 4096);
        p.flow.log_each = 100_000;
        let (end, _, _) = run_null(&p, RwMode::RandRead, None);
        let all: Vec<IoLogEntry> = end.io_log.iter().flatten().copied().collect();
        assert_eq!((all.len(), end.io_log_cut), (5000, false));
        assert!(all.iter().all(|e| e.dir == 0 && e.len == 4096 && e.offset % 4096 == 0));
        assert!(all.windows(2).all(|w| w[0].t_ms <= w[1].t_ms));
        // A cap below the I/Os: exactly the cap is logged, and the worker says it stopped.
        p.flow.log_each = 3000;
        let (end, _, _) = run_null(&p, RwMode::RandRead, None);
        assert_eq!((end.io_log.iter().map(Vec::len).sum::<usize>(), end.io_log_cut), (3000, true));
    }

    #[test]
    fn poisson_gaps_have_the_mean_and_a_cv_of_one() {
        let mut p = plan(4);
        p.rate_iops = Some(1000.0);
        p.flow.poisson = true;
        let (ch, _rx) = channels();
        let mut w = WorkerState::new(&p, &ch, 7);
        let n = 200_000;
        let gaps: Vec<f64> = (0..n).map(|_| w.poisson_gap(1e6)).collect();
        let mean = gaps.iter().sum::<f64>() / n as f64;
        let var = gaps.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / n as f64;
        let cv = var.sqrt() / mean;
        assert!((mean / 1e6 - 1.0).abs() < 0.01, "mean {mean}");
        assert!((cv - 1.0).abs() < 0.02, "cv {cv}");
        assert!(gaps.iter().all(|g| g.is_finite() && *g >= 0.0));
        // The schedule follows the drawn gaps: the first I/O is due at 0, the next later.
        assert_eq!(w.due(0), Due::Now(0));
        w.due_at += w.poisson_gap(1e6);
        w.due_i = 1;
        assert!(matches!(w.due(0), Due::Later(t) if t > 0));
    }

    #[test]
    fn continue_on_error_counts_errors_and_goes_on() {
        let mut p = plan(4);
        p.byte_limit = Some(200 * 4096);
        p.flow.continue_on = ErrorClass::Io;
        let fault = NullFault { after_ops: 50, code: OsCode::of_class(IoErrorClass::Media).unwrap() };
        let (end, ivs, ch) = run_null(&p, RwMode::RandRead, Some(fault));
        assert!(end.fault.is_none(), "the job went on");
        let ok: u64 = ivs.iter().map(|iv| iv.read.count()).sum();
        assert_eq!((ok, end.errors), (50, 150), "every I/O after the 50th failed and was counted");
        let f = end.first_error.expect("the first error");
        assert_eq!((f.error, f.op), (Some(OsCode::of_class(IoErrorClass::Media).unwrap()), Op::Read));
        assert!(!ch.stop.load(Ordering::Relaxed));
        // A class that does not cover reads stops at the first read error, as before.
        p.flow.continue_on = ErrorClass::Write;
        let (end, _, _) = run_null(&p, RwMode::RandRead, Some(fault));
        assert!(end.fault.is_some() && end.errors == 0);
    }

    #[test]
    fn log_windows_average_what_completed() {
        let mut p = plan(2);
        p.rate_iops = Some(2000.0);
        p.runtime_ns = 300 * MS;
        p.flow.log_avg_ns = 50 * MS;
        p.flow.log_capacity = 8;
        let (end, ivs, _) = run_null(&p, RwMode::RandRead, None);
        let ends: Vec<u64> = end.log.iter().map(|s| s.end_ms).collect();
        assert_eq!(ends, [50, 100, 150, 200, 250, 300]);
        // The windows hold every measured completion, once.
        let total: u64 = end.log.iter().map(|s| s.ops[0]).sum();
        assert_eq!(total, ivs.iter().map(|iv| iv.read.count()).sum::<u64>());
        assert!((540..=601).contains(&total), "2000 IOPS for 300 ms: {total}");
        for s in &end.log[1..] {
            // 2000 IOPS for 50 ms: 100 reads per window (a busy machine moves some to the next).
            assert!((40..=160).contains(&s.ops[0]), "{s:?}");
            assert_eq!((s.bytes[0], s.ops[1]), (s.ops[0] * 4096, 0));
            assert!(s.lat_ns[0] > 0);
        }
    }

    #[test]
    fn a_failed_io_ends_the_worker_and_raises_stop() {
        let mut p = plan(4);
        p.split_buffers = true;
        p.byte_limit = Some(1000 * 4096);
        let fault = NullFault { after_ops: 50, code: OsCode::of_class(IoErrorClass::NoSpace).unwrap() };
        let (end, ivs, ch) = run_null(&p, RwMode::RandRw, Some(fault));
        let f = end.fault.expect("a fault");
        assert_eq!((f.error, f.transferred, f.len), (Some(OsCode::of_class(IoErrorClass::NoSpace).unwrap()), 0, 4096));
        let ops: u64 = ivs.iter().map(|iv| iv.read.count() + iv.write.count()).sum();
        assert_eq!(ops, 50, "every I/O before the fault is counted, none after");
        assert!(ch.stop.load(Ordering::Relaxed));
    }
    #[test]
    fn variable_lengths_move_their_own_bytes_and_are_counted_by_size() {
        let mut p = plan(8);
        p.bs = 65536;
        p.split_buffers = true;
        p.byte_limit = Some(64 << 20);
        let parts = vec![spec::BsPart { bs: 4096, pct: 50.0 }, spec::BsPart { bs: 65536, pct: 50.0 }];
        let d = spec::DirSizes { sizes: spec::SizeChoice::Split { parts }, align: None };
        let b = spec::BlockSizes { read: spec::DirSizes::fixed(8192), write: d, unaligned: false };
        let lens = IoLens::for_job(65536, Some(&b), 512).unwrap();
        let (ch, rx) = channels();
        let cfg = BackendConfig {
            fd: platform::target::NO_RAW,
            files: Vec::new(),
            depth: p.depth,
            buffers: None,
            register_file: false,
            sqpoll: false,
            flags: 0,
        };
        let mut backend = Null::new(&cfg, None);
        let mut pool = BufferPool::new(16, 65536, 4096).unwrap();
        let mut gen =
            OffsetGen::with_lens(RwMode::RandRw, 50, &Distribution::Uniform, 1 << 24, lens, 0, 1, worker_rng(3, 0, 0));
        let end = run(&p, &mut backend, &mut pool, &mut gen, &ch);
        assert!(end.fault.is_none());
        let ivs: Vec<Interval> = rx
            .try_iter()
            .filter_map(|m| match m {
                Msg::Interval { iv, .. } => Some(*iv),
                Msg::Done { .. } => None,
            })
            .collect();
        let bytes = |f: fn(&Interval) -> u64| ivs.iter().map(f).sum::<u64>();
        let (rb, wb) = (bytes(|iv| iv.read_bytes), bytes(|iv| iv.write_bytes));
        let (rops, wops) = (bytes(|iv| iv.read.count()), bytes(|iv| iv.write.count()));
        // Table: reads' 8k, then writes' 4k and 64k.
        let c = &end.bs_counts;
        assert_eq!(c.iter().map(|x| x.0).collect::<Vec<_>>(), [8192, 4096, 65536]);
        assert_eq!((c[0].1, c[0].2, c[1].1, c[2].1), (rops, 0, 0, 0));
        assert_eq!(c[1].2 + c[2].2, wops);
        assert_eq!(rb, rops * 8192, "reads are 8 KiB each");
        assert_eq!(wb, c[1].2 * 4096 + c[2].2 * 65536, "writes move their own lengths");
        let share = c[1].2 as f64 / wops as f64;
        assert!((share - 0.5).abs() < 0.05, "4k share of writes {share}");
        assert!(rb + wb >= 64 << 20 && rb + wb < (64 << 20) + 8 * 65536, "the byte limit counts real lengths");
    }

    #[test]
    fn a_full_target_ends_a_filling_worker_without_a_fault() {
        let mut p = plan(4);
        p.byte_limit = Some(1000 * 4096);
        p.end_on_full = true;
        let fault = NullFault { after_ops: 60, code: OsCode::of_class(IoErrorClass::NoSpace).unwrap() };
        let (end, ivs, ch) = run_null(&p, RwMode::Write, Some(fault));
        assert!(end.fault.is_none(), "ENOSPC is the end of a fill, not a fault");
        assert_eq!(ivs.iter().map(|iv| iv.write.count()).sum::<u64>(), 60);
        assert!(!ch.stop.load(Ordering::Relaxed));
        // Without fill it is a fault.
        p.end_on_full = false;
        let (end, _, _) = run_null(&p, RwMode::Write, Some(fault));
        assert_eq!(end.fault.and_then(|f| f.error), Some(OsCode::of_class(IoErrorClass::NoSpace).unwrap()));
    }
}
