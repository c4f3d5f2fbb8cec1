//! One read of a trace, streamed: a reader decodes the requests into batches and hands each
//! batch to every consumer, each consumer on its own thread, so reading and decoding overlap
//! with the simulation. Only [`BATCHES`] batches of [`BATCH`] requests exist at any time
//! (8 MiB in all): memory does not grow with the trace. What the commands report about the
//! whole trace (the summary, its footprint) is counted by the reader on the way.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;

use rustc_hash::FxHashSet;
use stats::TraceSummary;
use trace::{from_the_start, Op, Request, TraceFormat, TraceInput};

use crate::mrc;
use crate::outcome::{Cut, SessionError};

/// Requests per batch (2 MiB). Policies on threads that share a core take turns batch by
/// batch, each turn refilling the core's caches with that policy's state: large batches
/// make the turns few. The crate's unit tests use small batches, so that their traces span
/// several.
pub(crate) const BATCH: usize = if cfg!(test) { 4096 } else { 1 << 16 };
/// Batches in circulation: the reader fills one while the consumers work on the others (a
/// consumer may run a batch or two ahead of a slower one).
const BATCHES: usize = 4;

/// What a consumer thread does with the requests, batch by batch, in trace order.
pub(crate) trait Consumer: Send {
    fn batch(&mut self, requests: &[Request]);
}

/// What one read of a trace found.
#[derive(Debug, Clone)]
pub(crate) struct Pass {
    /// Counts, span, devices and skipped lines of the requests read; the footprint when it
    /// was asked for.
    pub summary: TraceSummary,
    /// Time of the first request read (0 without requests).
    pub first_ns: u64,
    /// Latest time of the requests read.
    pub max_ns: u64,
    /// Why the read stopped before the end of the trace.
    pub cut: Option<Cut>,
    /// A hash of every request read, in order: two reads of an unchanged trace agree.
    pub fingerprint: u64,
}

/// Counts what the reader sees.
struct Tally {
    summary: TraceSummary,
    first: Option<u64>,
    min: u64,
    max: u64,
    fingerprint: u64,
    footprint: Option<Footprint>,
}

/// The distinct blocks of `unit` bytes the requests touch ([`mrc::keys`]).
struct Footprint {
    unit: u64,
    /// log2 of `unit` when it is a power of two (a shift instead of two divisions).
    shift: Option<u32>,
    blocks: FxHashSet<u64>,
    /// The last block added: runs of requests in one block are common.
    last: Option<u64>,
}

impl Footprint {
    fn new(unit: u64) -> Self {
        let unit = unit.max(1);
        let shift = unit.is_power_of_two().then(|| unit.trailing_zeros());
        Footprint { unit, shift, blocks: FxHashSet::default(), last: None }
    }

    #[inline]
    fn add(&mut self, r: &Request) {
        if r.len == 0 {
            return;
        }
        let last_byte = r.offset.saturating_add(u64::from(r.len) - 1);
        let (first, last) = match self.shift {
            Some(s) => (r.offset >> s, last_byte >> s),
            None => (r.offset / self.unit, last_byte / self.unit),
        };
        for b in first..=last {
            let k = mrc::key(r.dev, b);
            if self.last != Some(k) {
                self.blocks.insert(k);
                self.last = Some(k);
            }
        }
    }
}

impl Tally {
    #[inline]
    fn count(&mut self, r: &Request) {
        count(&mut self.summary, r);
        self.first.get_or_insert(r.t_ns);
        self.min = self.min.min(r.t_ns);
        self.max = self.max.max(r.t_ns);
        let op = match r.op {
            Op::Read => 0u64,
            Op::Write => 1,
            Op::Discard => 2,
            Op::Flush => 3,
        };
        let word = r.t_ns ^ r.offset.rotate_left(23) ^ (u64::from(r.len) << 29) ^ (u64::from(r.dev) << 7) ^ op;
        self.fingerprint = (self.fingerprint.rotate_left(5) ^ word).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        if let Some(f) = self.footprint.as_mut() {
            f.add(r);
        }
    }
}

/// Adds a request to a trace summary's counts.
pub(crate) fn count(s: &mut TraceSummary, r: &Request) {
    s.requests += 1;
    match r.op {
        Op::Read => {
            s.reads += 1;
            s.read_bytes += u64::from(r.len);
        }
        Op::Write => {
            s.writes += 1;
            s.write_bytes += u64::from(r.len);
        }
        Op::Discard | Op::Flush => s.other += 1,
    }
}

/// Reads the trace once and gives every request, in order, to each of `consumers` (each on
/// its own thread). Stops early when `stop` is raised (checked once per batch) or when the
/// trace fails after its first request; a failure before it is an error (the file is not that
/// trace). `footprint_unit`: also count the distinct blocks of that many bytes the requests
/// touch ([`TraceSummary::footprint_bytes`]).
pub(crate) fn read<C: Consumer>(
    input: &TraceInput,
    format: &TraceFormat,
    stop: &AtomicBool,
    footprint_unit: Option<u64>,
    consumers: &mut [C],
) -> Result<Pass, SessionError> {
    let mut reader = trace::open(&input.path, format, &input.opts)?;
    let mut tally = Tally {
        summary: TraceSummary {
            path: input.path.display().to_string(),
            format: format.summary_name(),
            ..TraceSummary::default()
        },
        first: None,
        min: u64::MAX,
        max: 0,
        fingerprint: 0,
        footprint: footprint_unit.map(Footprint::new),
    };
    let cut = std::thread::scope(|scope| -> Result<Option<Cut>, SessionError> {
        let (free_tx, free_rx) = sync_channel::<Vec<Request>>(BATCHES);
        let mut queues = Vec::with_capacity(consumers.len());
        for c in consumers.iter_mut() {
            let (tx, rx) = sync_channel::<Arc<Vec<Request>>>(BATCHES);
            let free = free_tx.clone();
            scope.spawn(move || consume(c, &rx, &free));
            queues.push(tx);
        }
        for _ in 1..BATCHES {
            let _ = free_tx.send(Vec::with_capacity(BATCH));
        }
        drop(free_tx);
        let mut buf: Vec<Request> = Vec::with_capacity(BATCH);
        loop {
            if stop.load(Ordering::Relaxed) {
                return Ok(Some(Cut::Interrupted));
            }
            let mut end = None;
            while buf.len() < BATCH {
                match reader.next() {
                    Some(Ok(r)) => {
                        tally.count(&r);
                        buf.push(r);
                    }
                    Some(Err(e)) => {
                        end = Some(Some(e));
                        break;
                    }
                    None => {
                        end = Some(None);
                        break;
                    }
                }
            }
            if !buf.is_empty() {
                buf = share(buf, &queues, &free_rx);
            }
            match end {
                None => {}
                Some(None) => return Ok(None),
                Some(Some(e)) if tally.summary.requests == 0 => return Err(from_the_start(&input.path, e).into()),
                Some(Some(e)) => {
                    return Ok(Some(Cut::Trace(format!(
                        "{} is cut short after {} requests: {e}; the results cover the requests before it",
                        input.path.display(),
                        tally.summary.requests
                    ))))
                }
            }
        }
    })?;
    let Tally { mut summary, first, min, max, fingerprint, footprint } = tally;
    summary.devices = reader.devices().to_vec();
    summary.skipped_lines = reader.skipped();
    if summary.requests > 0 {
        summary.span_s = (max - min) as f64 / 1e9;
    }
    if let Some(f) = footprint {
        summary.footprint_bytes = f.blocks.len() as u64 * f.unit;
    }
    Ok(Pass { summary, first_ns: first.unwrap_or(0), max_ns: max, cut, fingerprint })
}

/// Hands a full batch to every consumer and returns an empty one to fill next.
fn share(buf: Vec<Request>, queues: &[SyncSender<Arc<Vec<Request>>>], free: &Receiver<Vec<Request>>) -> Vec<Request> {
    let batch = Arc::new(buf);
    for q in queues {
        // A consumer that is gone has panicked; the scope's join reports it.
        let _ = q.send(Arc::clone(&batch));
    }
    match Arc::into_inner(batch) {
        Some(mut v) => {
            v.clear();
            v
        }
        None => free.recv().unwrap_or_else(|_| Vec::with_capacity(BATCH)),
    }
}

/// A consumer thread: each batch in turn; the last one done with a batch gives it back.
fn consume<C: Consumer>(c: &mut C, batches: &Receiver<Arc<Vec<Request>>>, free: &SyncSender<Vec<Request>>) {
    for batch in batches {
        c.batch(&batch);
        if let Some(mut v) = Arc::into_inner(batch) {
            v.clear();
            let _ = free.send(v);
        }
    }
}
