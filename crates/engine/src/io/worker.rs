//! One worker: keeps `depth` I/Os in flight against one target through one backend.
//!
//! Hot-path rules: no allocation, logging or locking per I/O. Latencies go into the
//! current one-second interval histogram; at each second boundary the full histogram is
//! sent to the collector and a recycled one takes its place (one channel message per
//! second, never per I/O).

use crate::io::backend::{Backend, Op};
use crate::io::buffers::{stamp, BufferPool};
use crate::io::offsets::OffsetGen;
use spec::DataPattern;
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
    /// errno, or 0 for a short transfer.
    pub errno: i32,
    pub offset: u64,
    pub op: Op,
    pub transferred: i32,
    pub len: u32,
}

/// What a worker reports when it finishes.
#[derive(Debug, Default, Clone)]
pub struct WorkerEnd {
    /// Last moment (ns since the measured window began) this worker counted completions.
    pub measured_ns: u64,
    pub qd_area_read: f64,
    pub qd_area_write: f64,
    pub fsyncs: u64,
    pub cpu_ns: u64,
    pub wall_ns: u64,
    pub fault: Option<IoFault>,
    pub setup_error: Option<String>,
    pub setup_error_usage: bool,
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

pub struct WorkerPlan {
    pub job: usize,
    pub worker: usize,
    pub depth: u32,
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
}

struct Slot {
    issue_ns: u64,
    offset: u64,
    op: Op,
}

#[inline]
fn now_ns(t_start: Instant) -> u64 {
    t_start.elapsed().as_nanos() as u64
}

fn thread_cpu_ns() -> u64 {
    let r = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    r.tv_sec as u64 * SEC + r.tv_nsec as u64
}

pub struct Channels {
    pub tx: Sender<Msg>,
    pub recycle: Receiver<Box<Interval>>,
    pub live: Arc<Live>,
    pub stop: Arc<AtomicBool>,
}

/// Run the worker loop to completion. Never panics on I/O errors: they end the worker
/// with `WorkerEnd::fault` set and raise the shared stop flag.
pub fn run<B: Backend>(
    plan: &WorkerPlan,
    backend: &mut B,
    pool: &mut BufferPool,
    gen: &mut OffsetGen,
    ch: &Channels,
) -> WorkerEnd {
    let cpu0 = thread_cpu_ns();
    let t_start = plan.t_start;
    let depth = plan.depth as usize;
    let bs = plan.bs as u64;
    let t0 = plan.ramp_ns;
    let deadline = t0.saturating_add(plan.runtime_ns);
    let mut end = WorkerEnd::default();

    let nslots = depth + usize::from(plan.fsync_every > 0);
    let mut slots: Vec<Slot> = (0..nslots).map(|_| Slot { issue_ns: 0, offset: 0, op: Op::Read }).collect();
    let mut free: Vec<u32> = (0..depth as u32).rev().collect();
    let fsync_slot = depth as u32;
    let mut fsync_busy = false;
    let write_buf_base = if plan.split_buffers { depth } else { 0 };

    let mut cur = Interval::new();
    let mut index: i64 = if t0 > 0 { -1 } else { 0 };
    cur.index = index;
    let mut next_boundary = if t0 > 0 { t0 } else { SEC };

    let (mut inflight_r, mut inflight_w) = (0u32, 0u32);
    let (mut area_r, mut area_w) = (0f64, 0f64);
    let mut last_t = 0u64;
    let period = plan.rate_iops.map(|r| (SEC as f64 / r).max(1.0));
    let mut due_i: u64 = 0; // open-loop: index of the next intended issue
    let mut issued_bytes = 0u64;
    let mut writes_since_fsync = 0u32;
    let mut fsync_pending = false;
    let mut write_tag = gen.next_u64();
    let (mut lr_ops, mut lw_ops, mut lr_bytes, mut lw_bytes) = (0u64, 0u64, 0u64, 0u64);
    let mut last_measured = 0u64;

    macro_rules! advance {
        ($now:expr) => {
            while $now >= next_boundary && next_boundary <= deadline {
                // The ramp interval (-1) is sent too: the collector discards it, and the
                // worker gets a recycled box back either way.
                let fresh = ch.recycle.try_recv().unwrap_or_else(|_| Interval::new());
                let mut full = std::mem::replace(&mut cur, fresh);
                full.index = index;
                let _ = ch.tx.send(Msg::Interval { job: plan.job, worker: plan.worker, iv: full });
                cur.clear();
                index += 1;
                cur.index = index;
                next_boundary = t0 + (index as u64 + 1) * SEC;
            }
        };
    }
    macro_rules! account_depth {
        ($now:expr) => {{
            let a = last_t.max(t0);
            let b = ($now).min(deadline);
            if b > a {
                let dt = (b - a) as f64;
                area_r += inflight_r as f64 * dt;
                area_w += inflight_w as f64 * dt;
            }
            #[allow(unused_assignments)]
            {
                last_t = $now;
            }
        }};
    }

    let limit_reached = |issued: u64| plan.byte_limit.is_some_and(|l| issued >= l);

    loop {
        let mut now = now_ns(t_start);
        advance!(now);
        let stopping = ch.stop.load(Ordering::Relaxed) || now >= deadline || end.fault.is_some();
        if stopping || (limit_reached(issued_bytes) && inflight_r + inflight_w == 0 && !fsync_busy) {
            break;
        }

        // Issue as many I/Os as free slots (and the rate schedule) allow, as one batch.
        account_depth!(now);
        let mut next_due = u64::MAX;
        let mut unsubmitted = 0u32;
        if fsync_pending && !fsync_busy {
            let s = &mut slots[fsync_slot as usize];
            s.issue_ns = now;
            s.op = Op::Fsync;
            if backend.queue(fsync_slot, Op::Fsync, 0, pool.slot_ptr(0), 0, 0).is_ok() {
                fsync_busy = true;
                fsync_pending = false;
            }
        }
        while !limit_reached(issued_bytes) {
            let issue_ns = match period {
                Some(p) => {
                    let due = (due_i as f64 * p) as u64;
                    if due > now {
                        next_due = due;
                        break;
                    }
                    due
                }
                None => now,
            };
            let Some(slot) = free.pop() else { break };
            due_i += 1;
            let is_read = gen.next_is_read();
            let offset = plan.region_offset + gen.next_block() * bs;
            let (op, buf_i) = if is_read {
                inflight_r += 1;
                (Op::Read, slot as usize)
            } else {
                inflight_w += 1;
                let i = write_buf_base + slot as usize;
                write_tag = write_tag.wrapping_add(1);
                stamp(pool.slot_mut(i), plan.data, write_tag, offset);
                (Op::Write, i)
            };
            let s = &mut slots[slot as usize];
            s.issue_ns = issue_ns;
            s.offset = offset;
            s.op = op;
            issued_bytes += bs;
            let qr = backend.queue(slot, op, offset, pool.slot_ptr(buf_i), plan.bs, buf_i as u16);
            unsubmitted += 1;
            // Start the device on what is ready (fio iodepth_batch_submit semantics).
            let qr = if qr.is_ok() && unsubmitted >= plan.submit_batch {
                unsubmitted = 0;
                backend.poll()
            } else {
                qr
            };
            if let Err(e) = qr {
                end.fault = Some(IoFault {
                    errno: e.raw_os_error().unwrap_or(libc::EIO),
                    offset,
                    op,
                    transferred: 0,
                    len: plan.bs,
                });
                // Not queued: undo the accounting for this slot.
                if is_read {
                    inflight_r -= 1
                } else {
                    inflight_w -= 1
                }
                free.push(slot);
                break;
            }
        }

        let inflight = inflight_r + inflight_w + u32::from(fsync_busy);
        let wake = next_boundary.min(deadline).min(next_due);
        if inflight == 0 {
            if end.fault.is_some() {
                break;
            }
            // Open loop and idle: wait for the next intended issue. Timer wake-ups overshoot
            // by tens of microseconds, which open-loop timing would charge to the device as
            // latency, so sleep coarsely and spin through the last stretch.
            if wake > now && wake != u64::MAX {
                let wait = wake - now;
                if wait > SPIN_NS {
                    std::thread::sleep(Duration::from_nanos(wait - SPIN_NS));
                } else {
                    std::hint::spin_loop();
                }
            }
            continue;
        }
        // With I/O in flight, block for a completion, but no later than the next boundary
        // or intended issue; close to an intended issue, poll instead of sleeping.
        let (want, timeout) = if wake > now && wake != u64::MAX {
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
        };
        // With several I/Os in flight, submit and pick up what has already finished before
        // sleeping: sleeping for every single completion doubles the context switches.
        let r = if want == 1 && inflight > 1 {
            backend.poll().and_then(|_| if backend.ready() { Ok(()) } else { backend.submit_and_wait(want, timeout) })
        } else {
            backend.submit_and_wait(want, timeout)
        };
        if let Err(e) = r {
            end.fault = Some(IoFault {
                errno: e.raw_os_error().unwrap_or(libc::EIO),
                offset: 0,
                op: Op::Read,
                transferred: 0,
                len: 0,
            });
            break;
        }

        now = now_ns(t_start);
        advance!(now);
        account_depth!(now);
        let measuring = now >= t0 && now < deadline;
        let fault = &mut end.fault;
        let cur_ref = &mut *cur;
        backend.reap(|slot, res| {
            if slot == fsync_slot && fsync_busy {
                fsync_busy = false;
                if res < 0 && fault.is_none() {
                    *fault = Some(IoFault { errno: -res, offset: 0, op: Op::Fsync, transferred: 0, len: 0 });
                } else if measuring {
                    end.fsyncs += 1;
                }
                return;
            }
            let s = &slots[slot as usize];
            let is_read = s.op == Op::Read;
            if is_read {
                inflight_r -= 1
            } else {
                inflight_w -= 1;
                writes_since_fsync += 1;
                if plan.fsync_every > 0 && writes_since_fsync >= plan.fsync_every {
                    writes_since_fsync = 0;
                    fsync_pending = true;
                }
            }
            free.push(slot);
            if res != plan.bs as i32 {
                if fault.is_none() {
                    *fault = Some(IoFault {
                        errno: if res < 0 { -res } else { 0 },
                        offset: s.offset,
                        op: s.op,
                        transferred: res.max(0),
                        len: plan.bs,
                    });
                }
                return;
            }
            if measuring {
                let lat = now.saturating_sub(s.issue_ns);
                if is_read {
                    cur_ref.read.record(lat);
                    cur_ref.read_bytes += bs;
                    lr_ops += 1;
                    lr_bytes += bs;
                } else {
                    cur_ref.write.record(lat);
                    cur_ref.write_bytes += bs;
                    lw_ops += 1;
                    lw_bytes += bs;
                }
            }
        });
        if measuring {
            last_measured = now - t0;
        }
        ch.live.read_ops.store(lr_ops, Ordering::Relaxed);
        ch.live.write_ops.store(lw_ops, Ordering::Relaxed);
        ch.live.read_bytes.store(lr_bytes, Ordering::Relaxed);
        ch.live.write_bytes.store(lw_bytes, Ordering::Relaxed);
        if end.fault.is_some() {
            ch.stop.store(true, Ordering::Relaxed);
        }
    }

    let stop_ns = now_ns(t_start);
    account_depth!(stop_ns.min(deadline));
    end.measured_ns = if plan.byte_limit.is_some() && stop_ns < deadline {
        last_measured
    } else {
        stop_ns.min(deadline).saturating_sub(t0)
    };

    // Every I/O still in flight must complete before its buffer may be freed.
    let mut guard = 0u32;
    while inflight_r + inflight_w + u32::from(fsync_busy) > 0 {
        if backend.submit_and_wait(1, Some(Duration::from_millis(100))).is_err() {
            guard += 1;
            if guard > 600 {
                break; // the kernel keeps the buffers' pages pinned; leak rather than free
            }
        }
        backend.reap(|slot, _| {
            if slot == fsync_slot && fsync_busy {
                fsync_busy = false;
            } else if slots[slot as usize].op == Op::Read {
                inflight_r -= 1
            } else {
                inflight_w -= 1
            }
        });
    }
    if inflight_r + inflight_w > 0 {
        // Could not drain: never free memory the kernel may still write into.
        std::mem::forget(std::mem::replace(pool, BufferPool::new(1, 4096, 4096).expect("tiny alloc")));
    }

    if index >= 0 || cur.read.count() + cur.write.count() > 0 {
        cur.index = index;
        let _ = ch.tx.send(Msg::Interval { job: plan.job, worker: plan.worker, iv: cur });
    }
    end.qd_area_read = area_r;
    end.qd_area_write = area_w;
    end.cpu_ns = thread_cpu_ns().saturating_sub(cpu0);
    end.wall_ns = stop_ns;
    end
}
