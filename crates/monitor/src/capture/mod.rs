//! `diskmeter capture`: what a block device is doing, request by request, from the kernel's
//! block tracepoints (`block:block_rq_issue`, `block:block_rq_complete`, and
//! `block:block_rq_requeue` where the kernel has it).
//!
//! - [`device`]: the device (a whole disk or a partition of one), through sysfs.
//! - [`tracefs`]: a private tracing instance, with its own per-CPU buffers, the `mono` clock
//!   (ns, comparable with `CLOCK_MONOTONIC`) and a filter on the disk (and the partition's
//!   sectors), removed at the end whatever happens.
//! - [`format`], [`ring`]: the events' layouts from tracefs, and the binary pages of each
//!   CPU's `trace_pipe_raw` decoded into events (no text formatting by the kernel, full ns
//!   timestamps).
//! - [`pairing`]: issue joined to completion, requests released in issue order.
//!
//! The loop ([`Capture::run`]) reads every CPU's buffer without blocking every
//! [`POLL`], sorts what it read by time and hands the events stamped more than [`SLACK`]
//! before the read started to the pairing (an event on one CPU can be read before an earlier
//! one on another). Lost events are counted from the per-CPU `stats` files and the pages'
//! missed-events flags, never hidden.
//!
//! Linux only: tracefs is Linux's. Elsewhere the parsers ([`format`], [`ring`], [`pairing`])
//! still build, but [`resolve`] and [`Capture::prepare`] fail with one usage error
//! ([`unsupported`]: "capture needs Linux's tracefs; it is not available on Windows"), which
//! the app turns into exit 2.

pub mod device;
pub mod format;
pub mod pairing;
pub mod ring;
#[cfg(target_os = "linux")]
pub mod tracefs;

#[cfg(target_os = "linux")]
use std::fs::File;
#[cfg(target_os = "linux")]
use std::io::Read;
#[cfg(target_os = "linux")]
use std::path::Path;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
#[cfg(target_os = "linux")]
use std::sync::atomic::Ordering;
use std::time::Duration;
#[cfg(target_os = "linux")]
use std::time::Instant;

#[cfg(not(target_os = "linux"))]
pub use device::unsupported;
pub use device::{resolve, BlockDevice, Partition};
pub use pairing::{Completed, PairCounts};
pub use ring::OpClass;

use crate::MonitorError;
#[cfg(target_os = "linux")]
use format::{parse_event, parse_header_page, PageLayout};
#[cfg(target_os = "linux")]
use pairing::Pairing;
#[cfg(target_os = "linux")]
use ring::{Decoder, RawEvent};
#[cfg(target_os = "linux")]
use tracefs::Instance;

/// How often the buffers are read.
pub const POLL: Duration = Duration::from_millis(50);
/// Events younger than this when a read starts wait for the next read.
pub const SLACK: Duration = Duration::from_millis(5);

#[cfg(target_os = "linux")]
const ISSUE: &str = "block/block_rq_issue";
#[cfg(target_os = "linux")]
const COMPLETE: &str = "block/block_rq_complete";
#[cfg(target_os = "linux")]
const REQUEUE: &str = "block/block_rq_requeue";

/// A request as the trace stores it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Captured {
    /// Issue time, ns after the first request captured.
    pub t_ns: u64,
    /// Bytes from the start of the device (of the partition, for a partition).
    pub offset: u64,
    pub len: u64,
    /// Never [`OpClass::Other`].
    pub op: OpClass,
    /// Issue → completion.
    pub latency_ns: u64,
    pub error: bool,
}

/// How a capture went.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CaptureStats {
    /// From enabling the events to disabling them.
    pub duration: Duration,
    pub cpus: u32,
    pub buffer_kib: u64,
    /// Events read.
    pub events: u64,
    /// Events the kernel could not store.
    pub lost_events: u64,
    pub counts: PairCounts,
    /// `stop` ended it before its duration.
    pub interrupted: bool,
}

#[cfg(target_os = "linux")]
/// The current `CLOCK_MONOTONIC` time, ns (the tracing instance's `mono` clock).
pub fn now_mono_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: clock_gettime writes the timespec we own; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64).saturating_mul(1_000_000_000).saturating_add(ts.tv_nsec as u64)
}

#[cfg(target_os = "linux")]
fn runtime(m: String) -> MonitorError {
    MonitorError::Runtime(m)
}

/// A capture set up and ready to start: the instance exists, its events are not enabled yet.
#[cfg(target_os = "linux")]
pub struct Capture {
    // Field order is drop order: the readers are closed before the instance is removed.
    readers: Vec<(u32, File)>,
    instance: Instance,
    decoder: Decoder,
    device: BlockDevice,
    page_size: usize,
    buffer_kib: u64,
    has_requeue: bool,
}

#[cfg(target_os = "linux")]
fn read_format(root: &Path, event: &str) -> Result<Option<String>, MonitorError> {
    let p = root.join("events").join(event).join("format");
    match tracefs::read_file(&p) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(runtime(format!("cannot read {}: {e}", p.display()))),
    }
}

#[cfg(target_os = "linux")]
fn event_missing(root: &Path, event: &str) -> MonitorError {
    MonitorError::Usage(format!(
        "this kernel has no {} tracepoint ({} is missing); capture needs the block tracepoints \
         (CONFIG_BLOCK with CONFIG_EVENT_TRACING)",
        event.replace('/', ":"),
        root.join("events").join(event).display()
    ))
}

/// The filter that keeps the device's requests: its disk, and for a partition its sectors.
pub fn filter_for(dev: &BlockDevice) -> String {
    let mut f = format!("dev == {}", dev.kernel_dev());
    if let Some(p) = &dev.partition {
        f.push_str(&format!(" && sector >= {} && sector < {}", p.start_sector, p.start_sector + p.sectors));
    }
    f
}

#[cfg(target_os = "linux")]
impl Capture {
    /// Checks what a capture needs (root, tracefs, the block events), makes the private
    /// instance and sets it up: buffer size per CPU, `mono` clock, no overwriting (a full
    /// buffer drops new events, which are counted), the filter. Nothing is recorded yet.
    pub fn prepare(device: &BlockDevice, buffer_kib: u64) -> Result<Capture, MonitorError> {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            return Err(MonitorError::Usage(
                "capture needs root: it reads the kernel's block tracepoints through tracefs".to_string(),
            ));
        }
        let root = tracefs::find_root()?;
        let issue = read_format(&root, ISSUE)?.ok_or_else(|| event_missing(&root, ISSUE))?;
        let complete = read_format(&root, COMPLETE)?.ok_or_else(|| event_missing(&root, COMPLETE))?;
        let requeue = read_format(&root, REQUEUE)?;
        let bad = |what: &str, e: String| runtime(format!("cannot understand tracefs' {what}: {e}"));
        let issue = parse_event(&issue).map_err(|e| bad("block_rq_issue format", e))?;
        let complete = parse_event(&complete).map_err(|e| bad("block_rq_complete format", e))?;
        let requeue = requeue.map(|r| parse_event(&r)).transpose().map_err(|e| bad("block_rq_requeue format", e))?;
        let page = match tracefs::read_file(&root.join("events/header_page")) {
            Ok(t) => parse_header_page(&t).map_err(|e| bad("header_page", e))?,
            Err(_) => PageLayout::DEFAULT,
        };
        let decoder = Decoder::new(page, &issue, &complete, requeue.as_ref()).map_err(|e| bad("block events", e))?;

        tracefs::remove_stale(&root);
        let instance = Instance::create(&root)?;
        instance.set("tracing_on", "0").map_err(runtime)?;
        instance.set("buffer_size_kb", &buffer_kib.to_string()).map_err(|e| {
            runtime(format!(
                "cannot set up the trace buffers of {buffer_kib} KiB per CPU ({e}); use a smaller --buffer"
            ))
        })?;
        instance.set("trace_clock", "mono").map_err(runtime)?;
        // Without overwriting, a full buffer drops the newest events ("dropped events").
        let _ = instance.set("options/overwrite", "0");
        let filter = filter_for(device);
        let mut events = vec![ISSUE, COMPLETE];
        if requeue.is_some() {
            events.push(REQUEUE);
        }
        for e in &events {
            instance.set(&format!("events/{e}/filter"), &filter).map_err(runtime)?;
        }
        let page_size = instance
            .get("buffer_subbuf_size_kb")
            .ok()
            .and_then(|s| s.trim().parse::<usize>().ok())
            .map(|k| k * 1024)
            // SAFETY: sysconf has no preconditions.
            .unwrap_or_else(|| usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096))
            .max(4096);
        let mut readers = Vec::new();
        for (cpu, dir) in instance.cpus() {
            // An offline CPU has no buffer to read.
            if let Ok(f) = tracefs::open_raw(&dir) {
                readers.push((cpu, f));
            }
        }
        if readers.is_empty() {
            return Err(runtime(format!("cannot open any per-CPU trace buffer in {}", instance.dir().display())));
        }
        Ok(Capture {
            readers,
            instance,
            decoder,
            device: device.clone(),
            page_size,
            buffer_kib,
            has_requeue: requeue.is_some(),
        })
    }

    /// The tracing instance's directory.
    pub fn instance_dir(&self) -> PathBuf {
        self.instance.dir().to_path_buf()
    }

    /// Records for `duration` (or until `stop`), handing each request to `sink` in issue
    /// order; `tick` gets the time elapsed after every read. A `sink` error ends the capture
    /// with that error. The instance is removed in every case.
    pub fn run(
        mut self,
        duration: Duration,
        stop: &AtomicBool,
        sink: &mut dyn FnMut(&Captured) -> Result<(), String>,
        tick: &mut dyn FnMut(Duration),
    ) -> Result<CaptureStats, MonitorError> {
        let mut events = vec![ISSUE, COMPLETE];
        if self.has_requeue {
            events.push(REQUEUE);
        }
        for e in events {
            self.instance.enable(e).map_err(runtime)?;
        }
        self.instance.set("tracing_on", "1").map_err(runtime)?;
        let started = Instant::now();
        let mut buf = vec![0u8; self.page_size];
        let mut pending: Vec<RawEvent> = Vec::new();
        let mut pairing = Pairing::new();
        let mut totals = Totals::default();
        let mut emit = Emitter::new(&self.device, sink);
        let mut interrupted = false;
        loop {
            let elapsed = started.elapsed();
            if elapsed >= duration {
                break;
            }
            if stop.load(Ordering::Relaxed) {
                interrupted = true;
                break;
            }
            std::thread::sleep(POLL.min(duration - elapsed));
            let read_at = now_mono_ns();
            self.drain(&mut buf, &mut pending, &mut totals)?;
            let upto = read_at.saturating_sub(SLACK.as_nanos() as u64);
            self.process(&mut pending, upto, &mut pairing, &mut emit)?;
            tick(started.elapsed());
        }
        self.instance.stop();
        let duration = started.elapsed();
        self.drain(&mut buf, &mut pending, &mut totals)?;
        self.process(&mut pending, u64::MAX, &mut pairing, &mut emit)?;
        let counts = pairing.finish(&mut |c: &Completed| emit.emit(c)).map_err(runtime)?;
        let stats_lost: u64 = self
            .instance
            .cpus()
            .iter()
            .filter_map(|(_, d)| tracefs::read_file(&d.join("stats")).ok())
            .map(|s| tracefs::lost_in_stats(&s))
            .sum();
        let page_lost = totals.missed_count.max(totals.missed_pages);
        let cpus = self.readers.len() as u32;
        self.readers.clear();
        self.instance.remove().map_err(runtime)?;
        Ok(CaptureStats {
            duration,
            cpus,
            buffer_kib: self.buffer_kib,
            events: totals.events,
            lost_events: stats_lost.max(page_lost),
            counts,
            interrupted,
        })
    }

    /// Reads every CPU's buffer until it is empty.
    fn drain(&mut self, buf: &mut [u8], pending: &mut Vec<RawEvent>, totals: &mut Totals) -> Result<(), MonitorError> {
        for (cpu, f) in &mut self.readers {
            loop {
                match f.read(buf) {
                    Ok(0) => break,
                    Ok(n) => {
                        let page = buf.get(..n).unwrap_or_default();
                        let info = self.decoder.decode(page, pending);
                        totals.events += info.events;
                        if info.missed {
                            totals.missed_pages += 1;
                            totals.missed_count += info.missed_count;
                        }
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(e) => return Err(runtime(format!("cannot read CPU {cpu}'s trace buffer: {e}"))),
                }
            }
        }
        Ok(())
    }

    /// Hands the events stamped up to `upto` to the pairing, in time order, and releases
    /// what is complete.
    fn process(
        &self,
        pending: &mut Vec<RawEvent>,
        upto: u64,
        pairing: &mut Pairing,
        emit: &mut Emitter<'_>,
    ) -> Result<(), MonitorError> {
        pending.sort_by_key(|e| e.ts);
        let n = pending.partition_point(|e| e.ts <= upto);
        let dev = self.device.kernel_dev();
        let range = self.device.partition.as_ref().map(|p| p.start_sector..p.start_sector + p.sectors);
        for e in pending.drain(..n) {
            // The kernel filtered already; this only guards against a filter it ignored.
            if e.dev != dev || range.as_ref().is_some_and(|r| !r.contains(&e.sector)) {
                continue;
            }
            pairing.event(&e);
        }
        pairing.release(upto, &mut |c: &Completed| emit.emit(c)).map_err(runtime)
    }
}

#[cfg(target_os = "linux")]
#[derive(Default)]
struct Totals {
    events: u64,
    missed_pages: u64,
    missed_count: u64,
}

/// Completed requests → [`Captured`]: times from the first request, offsets from the start
/// of the device.
#[cfg(any(target_os = "linux", test))]
struct Emitter<'a> {
    origin: Option<u64>,
    base_sector: u64,
    sink: &'a mut dyn FnMut(&Captured) -> Result<(), String>,
}

#[cfg(any(target_os = "linux", test))]
impl<'a> Emitter<'a> {
    fn new(dev: &BlockDevice, sink: &'a mut dyn FnMut(&Captured) -> Result<(), String>) -> Self {
        Emitter { origin: None, base_sector: dev.partition.as_ref().map_or(0, |p| p.start_sector), sink }
    }

    fn emit(&mut self, c: &Completed) -> Result<(), String> {
        let origin = *self.origin.get_or_insert(c.issue_ns);
        (self.sink)(&Captured {
            t_ns: c.issue_ns.saturating_sub(origin),
            offset: c.sector.saturating_sub(self.base_sector).saturating_mul(512),
            len: c.bytes,
            op: c.op,
            latency_ns: c.latency_ns,
            error: c.error,
        })
    }
}

/// A capture where the OS has no tracefs: it cannot be made ([`Capture::prepare`] fails with
/// [`unsupported`]), so its other methods are never reached.
#[cfg(not(target_os = "linux"))]
pub struct Capture {
    never: std::convert::Infallible,
}

#[cfg(not(target_os = "linux"))]
impl Capture {
    /// Always [`unsupported`]: capture reads Linux's tracefs.
    pub fn prepare(_device: &BlockDevice, _buffer_kib: u64) -> Result<Capture, MonitorError> {
        Err(unsupported())
    }

    /// The tracing instance's directory (never reached: no capture exists).
    pub fn instance_dir(&self) -> PathBuf {
        match self.never {}
    }

    /// Records the device (never reached: no capture exists).
    pub fn run(
        self,
        _duration: Duration,
        _stop: &AtomicBool,
        _sink: &mut dyn FnMut(&Captured) -> Result<(), String>,
        _tick: &mut dyn FnMut(Duration),
    ) -> Result<CaptureStats, MonitorError> {
        match self.never {}
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn filters() {
        let mut d = BlockDevice {
            path: "/dev/sda1".into(),
            name: "sda1".into(),
            major: 8,
            minor: 1,
            disk_major: 8,
            disk_minor: 0,
            partition: None,
        };
        assert_eq!(filter_for(&d), "dev == 8388608");
        d.partition = Some(Partition { disk: "sda".into(), start_sector: 2048, sectors: 100 });
        assert_eq!(filter_for(&d), "dev == 8388608 && sector >= 2048 && sector < 2148");
    }

    #[test]
    fn emitter_rebases_time_and_partition_offsets() {
        let d = BlockDevice {
            path: "/dev/sda1".into(),
            name: "sda1".into(),
            major: 8,
            minor: 1,
            disk_major: 8,
            disk_minor: 0,
            partition: Some(Partition { disk: "sda".into(), start_sector: 2048, sectors: 100 }),
        };
        let mut got = Vec::new();
        let mut sink = |c: &Captured| {
            got.push(*c);
            Ok(())
        };
        let mut e = Emitter::new(&d, &mut sink);
        let c = |issue_ns, sector| Completed {
            issue_ns,
            latency_ns: 7,
            sector,
            bytes: 4096,
            op: OpClass::Read,
            error: false,
        };
        e.emit(&c(1_000, 2048)).unwrap();
        e.emit(&c(1_500, 2056)).unwrap();
        assert_eq!(got.iter().map(|c| (c.t_ns, c.offset)).collect::<Vec<_>>(), [(0, 0), (500, 4096)]);
    }

    #[cfg(not(target_os = "linux"))]
    #[test]
    fn elsewhere_capture_is_one_usage_error() {
        let d = BlockDevice {
            path: "C:".into(),
            name: "C:".into(),
            major: 0,
            minor: 0,
            disk_major: 0,
            disk_minor: 0,
            partition: None,
        };
        let e = Capture::prepare(&d, 1024).err().unwrap();
        let MonitorError::Usage(m) = &e else { panic!("{e:?}") };
        assert!(m.starts_with("capture needs Linux's tracefs") && !m.contains('\n'), "{m}");
        assert_eq!(resolve(std::path::Path::new("C:")), Err(e));
    }
}
