//! The collector: the thread that started the workers merges their one-second intervals
//! per report slot, hands finished windows on, shows progress and notes how each worker
//! ended.

use super::job::{BoundJob, RunControl, ThreadLog, Tick, Window};
use crate::error::{EngineError, Result, Setup};
use crate::io::worker::{Interval, Live, Msg, WorkerEnd};
use crate::target::devview;
use stats::{DiskCounters, ErrorInfo, IntervalHistograms, LatHist, SeriesPoint};
use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Per report slot (a job, or a whole group with group_reporting): running merge.
pub(super) struct Slot {
    pub(super) workers: usize,
    pub(super) last_index: Vec<i64>,
    pub(super) done: Vec<bool>,
    pub(super) base: i64,
    pub(super) pending: VecDeque<Box<Interval>>,
    pub(super) total_read: LatHist,
    pub(super) total_write: LatHist,
    pub(super) read_bytes: u64,
    pub(super) write_bytes: u64,
    pub(super) series: Vec<SeriesPoint>,
    /// Each series point's histograms, encoded (only when the run keeps histograms).
    pub(super) series_hists: Option<Vec<IntervalHistograms>>,
    pub(super) ends: Vec<WorkerEnd>,
}

#[allow(clippy::vec_box)] // intervals travel between threads as boxes; keep them boxed
impl Slot {
    pub(super) fn new(workers: usize, keep_histograms: bool) -> Self {
        Self {
            workers,
            last_index: vec![-2; workers],
            done: vec![false; workers],
            base: 0,
            pending: VecDeque::new(),
            total_read: LatHist::new(),
            total_write: LatHist::new(),
            read_bytes: 0,
            write_bytes: 0,
            series: Vec::new(),
            series_hists: keep_histograms.then(Vec::new),
            ends: Vec::new(),
        }
    }

    pub(super) fn add(&mut self, iv: &Interval, spare: &mut Vec<Box<Interval>>) {
        if iv.index < self.base {
            return; // already finalised (cannot happen with in-order workers); be safe
        }
        while self.base + (self.pending.len() as i64) <= iv.index {
            let mut fresh = spare.pop().unwrap_or_else(Interval::new);
            fresh.clear();
            fresh.index = self.base + self.pending.len() as i64;
            self.pending.push_back(fresh);
        }
        let acc = &mut self.pending[(iv.index - self.base) as usize];
        acc.read.add(&iv.read);
        acc.write.add(&iv.write);
        acc.read_bytes += iv.read_bytes;
        acc.write_bytes += iv.write_bytes;
    }

    /// Finalise every interval that all live workers have sent (a worker sends each second once,
    /// in order, when it is over: that second is then complete for it).
    pub(super) fn finalize(
        &mut self,
        force: bool,
        spare: &mut Vec<Box<Interval>>,
        on_window: &mut dyn FnMut(&Interval),
    ) {
        let horizon =
            (0..self.workers).filter(|&w| !self.done[w]).map(|w| self.last_index[w]).min().unwrap_or(i64::MAX);
        while let Some(front) = self.pending.front() {
            if !force && front.index > horizon {
                break;
            }
            let Some(iv) = self.pending.pop_front() else { break };
            self.total_read.add(&iv.read);
            self.total_write.add(&iv.write);
            self.read_bytes += iv.read_bytes;
            self.write_bytes += iv.write_bytes;
            // Series points are finished in `results`, once the measured length is known.
            self.series.push(SeriesPoint::from_interval(
                (iv.index + 1) as f64,
                1.0,
                (&iv.read, iv.read_bytes),
                (&iv.write, iv.write_bytes),
            ));
            if let Some(h) = &mut self.series_hists {
                h.push(IntervalHistograms { read: iv.read.encoded(), write: iv.write.encoded() });
            }
            self.base = iv.index + 1;
            on_window(&iv);
            spare.push(iv);
        }
    }
}

/// Passes finished windows to the caller's `on_window` until it says to end the run.
pub(super) struct WindowGate<'f> {
    on_window: &'f mut dyn FnMut(&Window) -> bool,
    /// `on_window` returned false: the run ends early (not an interruption).
    pub(super) ended: bool,
}

impl<'f> WindowGate<'f> {
    pub(super) fn new(on_window: &'f mut dyn FnMut(&Window) -> bool) -> Self {
        Self { on_window, ended: false }
    }

    /// A finished interval of report slot `slot`; the ramp's (index -1) is not a window.
    fn pass(&mut self, slot: usize, iv: &Interval) {
        if iv.index >= 0 && !self.ended {
            let w = Window {
                slot,
                index: iv.index,
                read: &iv.read,
                write: &iv.write,
                read_bytes: iv.read_bytes,
                write_bytes: iv.write_bytes,
            };
            if !(self.on_window)(&w) {
                self.ended = true;
            }
        }
    }
}

/// A snapshot of the watched devices' counters, and when it was taken.
pub(super) type Snapshot = (Instant, BTreeMap<String, DiskCounters>);

/// The devices the group's targets reach, and their counters at the start and the end of
/// the measured window.
pub(super) struct Edges {
    watched: Vec<String>,
    pub(super) start: Option<Snapshot>,
    pub(super) end: Option<Snapshot>,
}

impl Edges {
    pub(super) fn new(jobs: &[BoundJob]) -> Self {
        let mut watched: Vec<String> = jobs
            .iter()
            .filter_map(|j| match &j.watch {
                Some(devview::Watch::Device { name, .. }) => Some(name.clone()),
                _ => None,
            })
            .collect();
        watched.sort();
        watched.dedup();
        Self { watched, start: None, end: None }
    }

    fn snapshot(&self) -> Snapshot {
        (Instant::now(), devview::snapshot(&self.watched))
    }

    /// Read the start counters now (a group without ramp, as the workers are released).
    pub(super) fn start_now(&mut self) {
        self.start = Some(self.snapshot());
    }

    /// How long the collector may wait for a message: the start counters are read right
    /// at the end of the ramp, so until then no longer than that. Reads them once it is over.
    fn next_wait(&mut self, t_start: Instant, ramp: Duration) -> Duration {
        const POLL: Duration = Duration::from_millis(50);
        let wait = match self.start {
            None => (t_start + ramp).saturating_duration_since(Instant::now()).min(POLL),
            Some(_) => POLL,
        };
        if self.start.is_none() && t_start.elapsed() >= ramp {
            self.start = Some(self.snapshot());
        }
        wait
    }
}

/// Live figures for the progress callback, every 250 ms from the start. The ticks keep to
/// that grid (the collector waits no longer than the next one), so processes started
/// together tick together: ranks under MPI exchange their counters at each tick.
struct Ticker {
    lives: Vec<Arc<Live>>,
    t_start: Instant,
    planned: Duration,
    ramp: Duration,
    last_tick: Instant,
    next_tick: Instant,
    last_counts: (u64, u64, u64, u64),
}

/// Time between two progress ticks.
pub(super) const TICK: Duration = Duration::from_millis(250);

impl Ticker {
    /// How long until the next tick is due.
    fn until_next(&self) -> Duration {
        self.next_tick.saturating_duration_since(Instant::now())
    }

    fn tick(&mut self, on_tick: &mut dyn FnMut(&Tick)) {
        let now = Instant::now();
        if now < self.next_tick {
            return;
        }
        while self.next_tick <= now {
            self.next_tick += TICK;
        }
        let c = self.lives.iter().fold((0, 0, 0, 0), |a, l| {
            (
                a.0 + l.read_ops.load(Ordering::Relaxed),
                a.1 + l.write_ops.load(Ordering::Relaxed),
                a.2 + l.read_bytes.load(Ordering::Relaxed),
                a.3 + l.write_bytes.load(Ordering::Relaxed),
            )
        });
        let last = self.last_counts;
        let dt = now.duration_since(self.last_tick).as_secs_f64();
        let elapsed = now.duration_since(self.t_start);
        on_tick(&Tick {
            elapsed,
            planned: self.planned,
            ramping: elapsed < self.ramp,
            read_iops: (c.0 - last.0) as f64 / dt,
            write_iops: (c.1 - last.1) as f64 / dt,
            read_mb_s: (c.2 - last.2) as f64 / 1e6 / dt,
            write_mb_s: (c.3 - last.3) as f64 / 1e6 / dt,
            ..Tick::default()
        });
        self.last_counts = c;
        self.last_tick = now;
    }
}

/// What the collector receives from the workers, and how it gives their intervals back.
pub(super) struct Inbox {
    pub(super) rx: mpsc::Receiver<Msg>,
    /// Per worker (global index): the channel that gives its spent intervals back.
    pub(super) recycle: Vec<Sender<Box<Interval>>>,
    pub(super) lives: Vec<Arc<Live>>,
}

/// Everything the collector keeps while the workers run.
pub(super) struct Collector<'a, 'f> {
    pub(super) jobs: &'a [BoundJob],
    /// The report slot of each job.
    pub(super) slot_map: Vec<usize>,
    /// Workers of each job, and how many have finished (fio `exitall`).
    job_workers: Vec<usize>,
    job_done: Vec<usize>,
    /// A job with `exitall` has finished: stop the group.
    exit_all: bool,
    /// Log windows per fio thread, merged as workers finish.
    pub(super) logs: Vec<ThreadLog>,
    pub(super) slots: Vec<Slot>,
    /// Spent intervals, reused for merging (boxed: they travel between threads as boxes).
    #[allow(clippy::vec_box)]
    pub(super) spare: Vec<Box<Interval>>,
    /// (report slot, slot-local worker) → global worker index, for recycling.
    global_index: Vec<(usize, usize)>,
    /// The first runtime error of any worker.
    pub(super) error: Option<ErrorInfo>,
    /// The first setup error the user can fix (exit 2).
    pub(super) usage_error: Option<Setup>,
    pub(super) gate: WindowGate<'f>,
    pub(super) edges: Edges,
    /// The wall clock when the workers were released, Unix ns.
    pub(super) started_unix_ns: u64,
    /// From the return of the release callback (a barrier's release) to the workers' start.
    pub(super) release_to_start: Duration,
    done: usize,
}

impl<'a, 'f> Collector<'a, 'f> {
    pub(super) fn new(
        jobs: &'a [BoundJob],
        slot_map: Vec<usize>,
        slot_workers: &[usize],
        global_index: Vec<(usize, usize)>,
        gate: WindowGate<'f>,
        keep_histograms: bool,
        job_workers: Vec<usize>,
    ) -> Self {
        Self {
            jobs,
            slot_map,
            job_done: vec![0; job_workers.len()],
            job_workers,
            exit_all: false,
            logs: Vec::new(),
            slots: slot_workers.iter().map(|&n| Slot::new(n, keep_histograms)).collect(),
            spare: Vec::new(),
            global_index,
            error: None,
            usage_error: None,
            gate,
            edges: Edges::new(jobs),
            started_unix_ns: 0,
            release_to_start: Duration::ZERO,
            done: 0,
        }
    }

    fn slot_of(&self, job: usize) -> usize {
        self.slot_map[job]
    }

    /// Collect until every worker is done. The workers are past their start barrier at
    /// `t_start`; `user_stop` is the caller's stop flag, forwarded to `ctl.stop`. Returns the
    /// wall time of the run.
    pub(super) fn run(
        &mut self,
        inbox: Inbox,
        t_start: Instant,
        ctl: &RunControl,
        user_stop: &AtomicBool,
        on_tick: &mut dyn FnMut(&Tick),
    ) -> Duration {
        let Inbox { rx, recycle, lives } = inbox;
        let total = lives.len();
        let mut ticker = Ticker {
            lives,
            t_start,
            planned: planned(self.jobs),
            ramp: ramp(self.jobs),
            last_tick: t_start,
            next_tick: t_start + TICK,
            last_counts: (0, 0, 0, 0),
        };
        while self.done < total {
            let wait = self.edges.next_wait(t_start, ticker.ramp).min(ticker.until_next());
            match rx.recv_timeout(wait) {
                Ok(Msg::Interval { job, worker, iv }) => self.interval(job, worker, iv, &recycle),
                Ok(Msg::Done { job, worker, end }) => self.worker_done(job, worker, *end),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
            }
            if user_stop.load(Ordering::Relaxed) || self.gate.ended || self.exit_all {
                ctl.stop.store(true, Ordering::Relaxed);
            }
            ticker.tick(on_tick);
        }
        let wall = t_start.elapsed();
        self.edges.end = Some(self.edges.snapshot());
        wall
    }

    /// One worker's interval: merge it, pass on what every worker has moved past, and give
    /// the box back to its worker.
    fn interval(&mut self, job: usize, worker: usize, iv: Box<Interval>, recycle: &[Sender<Box<Interval>>]) {
        let sl = self.slot_of(job);
        let (s, spare, gate) = (&mut self.slots[sl], &mut self.spare, &mut self.gate);
        s.last_index[worker] = iv.index;
        if iv.index >= 0 {
            s.add(&iv, spare);
        }
        s.finalize(false, spare, &mut |iv| gate.pass(sl, iv));
        if let Some(g) = self.global_index.iter().position(|&x| x == (sl, worker)) {
            let _ = recycle[g].send(iv);
        }
    }

    /// One worker has ended: note its setup error or fault, keep its end report.
    fn worker_done(&mut self, job: usize, worker: usize, mut end: WorkerEnd) {
        self.done += 1;
        self.job_done[job] += 1;
        if self.job_done[job] >= self.job_workers[job] && self.jobs[job].spec.flow.exitall {
            self.exit_all = true;
        }
        if !end.io_log.is_empty() || end.io_log_cut {
            self.add_io_log(job, end.job_worker, std::mem::take(&mut end.io_log), end.io_log_cut);
        }
        if !end.log.is_empty() {
            self.add_log(job, end.job_worker, std::mem::take(&mut end.log));
        }
        let name = &self.jobs[job].spec.name;
        if let Some(why) = end.setup_error.take() {
            if why.is_usage() {
                self.usage_error.get_or_insert(why);
            } else if self.error.is_none() {
                let message = setup_fault_message(&why);
                self.error = Some(ErrorInfo { kind: "io".into(), message, offset: None, job: Some(name.clone()) });
            }
        }
        if let Some(f) = end.fault {
            if self.error.is_none() {
                self.error = Some(fault_info(&f, name));
            }
        }
        let sl = self.slot_of(job);
        let (s, spare, gate) = (&mut self.slots[sl], &mut self.spare, &mut self.gate);
        s.done[worker] = true;
        s.ends.push(end);
        s.finalize(false, spare, &mut |iv| gate.pass(sl, iv));
    }

    /// Merge a worker's log windows into its fio thread's (psync: `qd` workers per thread).
    /// The log of fio thread `thread` of `job` (a psync job's threads of one clone share it).
    fn thread_log(&mut self, job: usize, job_worker: usize) -> &mut ThreadLog {
        let spec = &self.jobs[job].spec;
        let per_thread = (self.job_workers[job] / spec.threads.max(1) as usize).max(1);
        let thread = job_worker / per_thread;
        match self.logs.iter().position(|l| l.job == job && l.thread == thread) {
            Some(i) => &mut self.logs[i],
            None => {
                self.logs.push(ThreadLog { job, thread, samples: Vec::new(), ios: Vec::new(), ios_cut: false });
                let last = self.logs.len() - 1;
                &mut self.logs[last]
            }
        }
    }

    /// A worker's per-I/O log joins its fio thread's, in completion order.
    fn add_io_log(
        &mut self,
        job: usize,
        job_worker: usize,
        chunks: Vec<Vec<crate::io::worker::IoLogEntry>>,
        cut: bool,
    ) {
        let l = self.thread_log(job, job_worker);
        l.ios.extend(chunks.into_iter().flatten());
        l.ios_cut |= cut;
    }

    /// The threads' logs, taken at the end of the run. A thread served by several workers
    /// (psync) has their per-I/O logs one after the other: one stable sort merges them by
    /// completion time (linear for a thread with one worker, whose log is already in order).
    pub(super) fn take_logs(&mut self) -> Vec<ThreadLog> {
        let mut logs = std::mem::take(&mut self.logs);
        for l in &mut logs {
            l.ios.sort_by_key(|e| e.t_ms);
        }
        logs
    }

    fn add_log(&mut self, job: usize, job_worker: usize, samples: Vec<crate::io::worker::LogSample>) {
        let l = self.thread_log(job, job_worker);
        match l.samples.is_empty() {
            true => l.samples = samples,
            false => {
                for (i, s) in samples.into_iter().enumerate() {
                    match l.samples.get_mut(i) {
                        Some(acc) => {
                            for d in 0..2 {
                                acc.ops[d] += s.ops[d];
                                acc.bytes[d] += s.bytes[d];
                                acc.lat_ns[d] += s.lat_ns[d];
                            }
                        }
                        None => l.samples.push(s),
                    }
                }
            }
        }
    }

    /// The first error of the run as the caller sees it: a usage error fails the group.
    pub(super) fn usage_error(&mut self) -> Result<()> {
        match self.usage_error.take() {
            Some(why) => Err(EngineError::Setup(why)),
            None => Ok(()),
        }
    }
}

/// The result document's error for a worker that could not be set up by a fault (exit 1): the
/// outcome carries it as text ([`ErrorInfo`]), so it is made here.
// The two io_uring messages name command-line options (`--no-register-buffers`, `--qd`,
// `--engine`): the outcome would have to carry the typed [`Setup`] for the commands to word it.
fn setup_fault_message(why: &Setup) -> String {
    match why {
        Setup::UringRegister(e) => {
            format!("io_uring could not register the I/O buffers ({e}); add --no-register-buffers")
        }
        Setup::UringRing { entries, depth, error } => {
            format!("io_uring setup of a {entries}-entry ring for --qd {depth} failed: {error}; try --engine psync")
        }
        Setup::CompletionPort(e) => format!("cannot set up the completion port: {e}"),
        Setup::MemRegionMissing => "the mem engine's region is missing".to_string(),
        // The others are the user's to fix: they fail the group instead (`usage_error`).
        other => other.to_string(),
    }
}

/// The planned length of the group: the longest ramp + runtime of its jobs (a job that
/// ends on a byte count plans zero).
pub(super) fn planned(jobs: &[BoundJob]) -> Duration {
    jobs.iter()
        .map(|j| if j.spec.runtime.is_zero() { Duration::ZERO } else { j.spec.ramp + j.spec.runtime })
        .max()
        .unwrap_or_default()
}

/// The longest ramp of the group.
pub(super) fn ramp(jobs: &[BoundJob]) -> Duration {
    jobs.iter().map(|j| j.spec.ramp).max().unwrap_or_default()
}

/// What a worker's I/O fault was, as a result's error.
pub(super) fn fault_info(f: &crate::io::worker::IoFault, job: &str) -> ErrorInfo {
    use crate::io::backend::Op;
    let what = match f.op {
        Op::Read => "read",
        Op::Write => "write",
        Op::Fsync => "fsync",
        Op::Discard => "discard",
        Op::PunchHole => "punch-hole",
    };
    // A job over several files: the offset carries the file's index.
    let (file, offset) = crate::io::files::split(f.offset);
    let place =
        if file > 0 { format!("offset {offset} of the job's file {}", file + 1) } else { format!("offset {offset}") };
    let (kind, message) = match f.error {
        None => ("io", format!("short {what} at {place}: {} of {} bytes", f.transferred, f.len)),
        Some(code) => {
            // The OS's own media error alone is `eio` (Linux's EIO, Windows' ERROR_IO_DEVICE):
            // other media errors (ENODATA, EILSEQ, ERROR_CRC, …) stay `io` in results.
            let kind = match code.class() {
                platform::IoErrorClass::NoSpace => "enospc",
                platform::IoErrorClass::Media
                    if Some(code) == platform::OsCode::of_class(platform::IoErrorClass::Media) =>
                {
                    "eio"
                }
                platform::IoErrorClass::Vanished | platform::IoErrorClass::NotFound => "vanished",
                _ => "io",
            };
            let at = if f.op == Op::Fsync { String::new() } else { format!(" at {place}") };
            (kind, format!("{what} failed{at}: {}", std::io::Error::from(code)))
        }
    };
    ErrorInfo { kind: kind.into(), message, offset: (f.op != Op::Fsync).then_some(offset), job: Some(job.to_string()) }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::vec_box)] // the slot's own types: intervals travel boxed
mod tests {
    use super::*;

    fn interval(index: i64, reads: u64) -> Box<Interval> {
        let mut iv = Interval::new();
        iv.index = index;
        for _ in 0..reads {
            iv.read.record(1000);
        }
        iv.read_bytes = reads * 4096;
        iv
    }

    /// Worker `w` sends `iv` to slot `s`; windows that become final go to `seen`.
    fn send(s: &mut Slot, spare: &mut Vec<Box<Interval>>, seen: &mut Vec<(i64, u64)>, w: usize, iv: Box<Interval>) {
        s.last_index[w] = iv.index;
        s.add(&iv, spare);
        s.finalize(false, spare, &mut |iv| seen.push((iv.index, iv.read.count())));
    }

    #[test]
    fn a_window_is_final_once_every_live_worker_has_sent_it() {
        let mut s = Slot::new(2, false);
        let mut spare = Vec::new();
        let mut seen = Vec::new();
        // Only worker 0 sent second 0 (and 1): second 0 is not final yet.
        send(&mut s, &mut spare, &mut seen, 0, interval(0, 3));
        send(&mut s, &mut spare, &mut seen, 0, interval(1, 5));
        assert_eq!(seen, []);
        // Worker 1 sends second 0 too: it is merged and passed on at once.
        send(&mut s, &mut spare, &mut seen, 1, interval(0, 4));
        assert_eq!(seen, [(0, 7)]);
        // Worker 1's second 1 completes that one.
        send(&mut s, &mut spare, &mut seen, 1, interval(1, 1));
        assert_eq!(seen, [(0, 7), (1, 6)]);
        // A worker that ends holds nothing back.
        send(&mut s, &mut spare, &mut seen, 0, interval(2, 2));
        assert_eq!(seen, [(0, 7), (1, 6)]);
        s.done[1] = true;
        s.finalize(false, &mut spare, &mut |iv| seen.push((iv.index, iv.read.count())));
        assert_eq!(seen, [(0, 7), (1, 6), (2, 2)]);
        s.done[0] = true;
        s.finalize(false, &mut spare, &mut |iv| seen.push((iv.index, iv.read.count())));
        assert_eq!(seen, [(0, 7), (1, 6), (2, 2)]);
        assert_eq!((s.total_read.count(), s.read_bytes, s.base), (15, 15 * 4096, 3));
        assert_eq!(s.series.len(), 3);
        assert!(!spare.is_empty(), "finished intervals are kept for reuse");
    }

    #[test]
    fn the_gate_passes_measured_windows_until_told_to_stop() {
        let mut got = Vec::new();
        let mut on_window = |w: &Window| {
            got.push((w.slot, w.index, w.read.count()));
            w.index < 1
        };
        let mut gate = WindowGate::new(&mut on_window);
        gate.pass(0, &interval(-1, 9)); // the ramp is not a window
        gate.pass(0, &interval(0, 1));
        assert!(!gate.ended);
        gate.pass(1, &interval(1, 2));
        assert!(gate.ended, "on_window said stop");
        gate.pass(0, &interval(2, 3));
        assert_eq!(got, [(0, 0, 1), (1, 1, 2)]);
    }
}
