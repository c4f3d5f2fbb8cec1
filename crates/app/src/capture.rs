//! `diskmeter capture DEVICE --duration D -o TRACE`: what a block device is doing now,
//! request by request, written as a binary trace (version 2: each request with its issue →
//! completion latency). Options as typed → a validated [`Config`] (the device, the duration,
//! the buffer, the output planned; nothing is touched before it exists) → [`run`], which
//! drives `monitor::capture` and writes the trace atomically. How it works and its limits:
//! docs/capture-and-profile.md.

use crate::error::{Error, Result};
use crate::session::{self, Observer};
use engine::measure::Tick;
use files::output::OutputFile;
use monitor::capture::{BlockDevice, Capture, Captured, OpClass};
use monitor::MonitorError;
use spec::units::{self, TimeUnit};
use stats::profile::{CaptureDropped, CapturePartition, CaptureSummary, CAPTURE_SCHEMA};
use stats::LatHist;
use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

/// Longest capture.
pub const MAX_DURATION: Duration = Duration::from_secs(7 * 86_400);
/// Kernel buffer per CPU: bounds of `--buffer`.
pub const MIN_BUFFER: u64 = 256 << 10;
pub const MAX_BUFFER: u64 = 1 << 30;

/// The options of `diskmeter capture`, as given.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub device: PathBuf,
    pub duration: String,
    pub output: PathBuf,
    /// Kernel buffer per CPU; `None`: [`default_buffer`].
    pub buffer: Option<String>,
    pub force: bool,
}

/// A validated capture.
pub struct Config {
    pub device: BlockDevice,
    pub duration: Duration,
    pub buffer_kib: u64,
    pub output: OutputFile,
}

/// The kernel buffer the CPUs share by default, and the bounds of one CPU's share.
pub const BUFFER_SHARED: u64 = 256 << 20;
pub const BUFFER_PER_CPU_MIN: u64 = 4 << 20;
pub const BUFFER_PER_CPU_MAX: u64 = 32 << 20;

/// The default kernel buffer per CPU: 256 MiB shared by the CPUs, 4 to 32 MiB each (at
/// 100 000 events/s a CPU fills 4 MiB in about half a second, and the buffers are read
/// every 50 ms).
pub fn default_buffer(cpus: u64) -> u64 {
    (BUFFER_SHARED / cpus.max(1)).clamp(BUFFER_PER_CPU_MIN, BUFFER_PER_CPU_MAX)
}

fn from_monitor(e: MonitorError) -> Error {
    match e {
        MonitorError::Usage(m) => Error::Usage(m),
        MonitorError::Runtime(m) => Error::Runtime(m),
    }
}

fn online_cpus() -> u64 {
    std::thread::available_parallelism().map(|n| n.get() as u64).unwrap_or(1)
}

impl Config {
    /// Checks the options (duration, buffer), the output, then the device.
    pub fn new(o: &Options) -> Result<Config> {
        let duration = units::parse_duration("--duration", &o.duration, TimeUnit::Seconds)?;
        if duration.is_zero() {
            return Err(Error::usage("invalid value for --duration: must be longer than 0, such as 60s"));
        }
        if duration > MAX_DURATION {
            return Err(Error::usage("invalid value for --duration: at most 7d; capture in several pieces"));
        }
        let buffer = match &o.buffer {
            Some(s) => {
                let b = units::parse_size("--buffer", s)?;
                if !(MIN_BUFFER..=MAX_BUFFER).contains(&b) {
                    return Err(Error::usage(format!(
                        "invalid value for --buffer: {s} per CPU is outside 256k to 1G; the default is {} per CPU here",
                        units::format_size(default_buffer(online_cpus()))
                    )));
                }
                b
            }
            None => default_buffer(online_cpus()),
        };
        if o.output.as_os_str() == "-" {
            return Err(Error::usage(
                "invalid value for --output: a trace is written to a file (its header is completed at the end); \
                 name a file",
            ));
        }
        let output = files::output::plan(&o.output, "--output", o.force)?;
        let device = monitor::capture::resolve(&o.device).map_err(from_monitor)?;
        Ok(Config { device, duration, buffer_kib: buffer.div_ceil(1024), output })
    }
}

/// The trace's operation for a captured one.
fn op(o: OpClass) -> trace::Op {
    match o {
        OpClass::Read => trace::Op::Read,
        OpClass::Write => trace::Op::Write,
        OpClass::Discard => trace::Op::Discard,
        // `Other` never reaches the trace (the pairing drops it).
        OpClass::Flush | OpClass::Other => trace::Op::Flush,
    }
}

/// Counters shared by the trace writer and the progress display.
#[derive(Default)]
struct Live {
    reads: Cell<u64>,
    writes: Cell<u64>,
    read_bytes: Cell<u64>,
    write_bytes: Cell<u64>,
}

/// Whether the file system holding `out` is on `dev` (then the capture records the trace's
/// own writes too).
fn output_on_device(out: &Path, dev: &BlockDevice) -> bool {
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let Some((maj, min)) = platform::block::dev_numbers(dir) else { return false };
    if (maj, min) == (dev.major, dev.minor) {
        return true;
    }
    // A whole disk holds its partitions' file systems.
    dev.partition.is_none()
        && platform::block::Topology::default()
            .by_number(maj, min)
            .is_some_and(|fs| fs.is_partition() && (fs.disk_major, fs.disk_minor) == (dev.major, dev.minor))
}

fn trace_error(e: trace::TraceError) -> Error {
    Error::runtime(e.to_string())
}

/// Records the device for the configured duration (or until `stop`) and writes the trace.
/// An interrupted capture keeps what it recorded (the summary says it was interrupted).
pub fn run(cfg: &Config, stop: &AtomicBool, obs: &mut dyn Observer) -> Result<CaptureSummary> {
    let dev = &cfg.device;
    let capture = Capture::prepare(dev, cfg.buffer_kib).map_err(from_monitor)?;
    if output_on_device(cfg.output.destination(), dev) {
        obs.notice(&format!(
            "{} is on {}: the capture records the trace's own writes too; write it to another device",
            cfg.output.path().display(),
            dev.path.display()
        ));
    }
    let file = cfg.output.create()?;
    let mut writer = trace::BinaryWriter::buffered_with_latency(file, cfg.output.path()).map_err(trace_error)?;
    let id = writer.define_device(&dev.name).map_err(trace_error)?;
    let started_at = session::now_rfc3339();
    let live = Live::default();
    let mut other = (0u64, 0u64, 0u64, 0u64, 0u64); // discards, discard bytes, flushes, errors, clamped
    let mut lat = LatHist::new();
    let mut sink = |c: &Captured| -> std::result::Result<(), String> {
        let len = u32::try_from(c.len).unwrap_or(u32::MAX);
        let req = trace::Request { t_ns: c.t_ns, offset: c.offset, len, op: op(c.op), dev: id };
        writer.push_with_latency(req, Some(c.latency_ns.max(1))).map_err(|e| e.to_string())?;
        lat.record(c.latency_ns);
        match c.op {
            OpClass::Read => {
                live.reads.set(live.reads.get() + 1);
                live.read_bytes.set(live.read_bytes.get() + c.len);
            }
            OpClass::Write => {
                live.writes.set(live.writes.get() + 1);
                live.write_bytes.set(live.write_bytes.get() + c.len);
            }
            OpClass::Discard => {
                other.0 += 1;
                other.1 += c.len;
            }
            OpClass::Flush | OpClass::Other => other.2 += 1,
        }
        other.3 += u64::from(c.error);
        Ok(())
    };
    obs.phase(&format!("capture {}", dev.name), Some(cfg.duration));
    let mut last = (Duration::ZERO, 0u64, 0u64, 0u64, 0u64);
    let mut tick = |elapsed: Duration| {
        let now = (elapsed, live.reads.get(), live.writes.get(), live.read_bytes.get(), live.write_bytes.get());
        let dt = (now.0.saturating_sub(last.0)).as_secs_f64();
        if dt < 0.25 {
            return;
        }
        let rate = |a: u64, b: u64| (a - b) as f64 / dt;
        obs.tick(&Tick {
            elapsed,
            planned: cfg.duration,
            read_iops: rate(now.1, last.1),
            write_iops: rate(now.2, last.2),
            read_mb_s: rate(now.3, last.3) / 1e6,
            write_mb_s: rate(now.4, last.4) / 1e6,
            ..Tick::default()
        });
        last = now;
    };
    let stats = capture.run(cfg.duration, stop, &mut sink, &mut tick);
    obs.phase_done();
    let stats = stats.map_err(from_monitor)?;
    let requests = writer.requests();
    let file = writer
        .finish()
        .map_err(trace_error)?
        .into_inner()
        .map_err(|e| Error::runtime(format!("cannot write {}: {}", cfg.output.path().display(), e.error())))?;
    file.commit()?;
    let c = stats.counts;
    Ok(CaptureSummary {
        schema: CAPTURE_SCHEMA.to_string(),
        version: env!("CARGO_PKG_VERSION").to_string(),
        started_at,
        device: dev.path.display().to_string(),
        name: dev.name.clone(),
        dev: format!("{}:{}", dev.major, dev.minor),
        partition: dev.partition.as_ref().map(|p| CapturePartition {
            disk: p.disk.clone(),
            start_bytes: p.start_sector * 512,
            size_bytes: p.sectors * 512,
        }),
        output: cfg.output.path().display().to_string(),
        trace_version: trace::binary::VERSION_LATENCY,
        duration_s: stats.duration.as_secs_f64(),
        cpus: stats.cpus,
        buffer_kib_per_cpu: stats.buffer_kib,
        requests,
        reads: live.reads.get(),
        writes: live.writes.get(),
        discards: other.0,
        flushes: other.2,
        read_bytes: live.read_bytes.get(),
        write_bytes: live.write_bytes.get(),
        discard_bytes: other.1,
        errors: other.3,
        latency_ns: (!lat.is_empty()).then(|| lat.summary()),
        events: stats.events,
        lost_events: stats.lost_events,
        dropped: CaptureDropped {
            issued_before_start: c.unmatched_completions,
            in_flight_at_end: c.in_flight_at_end,
            requeued: c.requeued,
            no_completion: c.no_completion,
            other_ops: c.other_ops,
        },
        interrupted: stats.interrupted,
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::test_support::usage_message;

    fn opts(duration: &str, buffer: Option<&str>) -> Options {
        Options {
            device: PathBuf::from("/dev/null"),
            duration: duration.into(),
            output: PathBuf::from("/tmp/diskmeter-capture-unit.dmt"),
            buffer: buffer.map(str::to_string),
            force: false,
        }
    }

    #[test]
    fn option_errors() {
        assert_eq!(
            usage_message(Config::new(&opts("0s", None))),
            "invalid value for --duration: must be longer than 0, such as 60s"
        );
        assert_eq!(
            usage_message(Config::new(&opts("8d", None))),
            "invalid value for --duration: at most 7d; capture in several pieces"
        );
        assert!(usage_message(Config::new(&opts("1s", Some("4k")))).starts_with("invalid value for --buffer: 4k"));
        let mut o = opts("1s", None);
        o.output = PathBuf::from("-");
        assert!(usage_message(Config::new(&o)).contains("a trace is written to a file"));
        // /dev/null is a character device.
        assert_eq!(
            usage_message(Config::new(&opts("1s", None))),
            "/dev/null is not a block device; capture records the requests of a disk or partition (/dev/NAME)"
        );
    }

    #[test]
    fn default_buffers() {
        assert_eq!(default_buffer(1), 32 << 20);
        assert_eq!(default_buffer(8), 32 << 20);
        assert_eq!(default_buffer(16), 16 << 20);
        assert_eq!(default_buffer(1024), 4 << 20);
    }
}
