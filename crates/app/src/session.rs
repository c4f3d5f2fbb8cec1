//! What every measuring command (`run`, `mark`, `sla`, `compare`) shares: the observer that
//! shows progress, the target and safety flags, the skeleton of the result document, and the
//! honesty checks (`docs/METHOD.md`, "Honesty checks") that every result carries.

use engine::measure::{
    Measurement, Need, OpenTarget, Progress, RunControl, TargetEvent, TargetOptions, TargetPlan, Tick, WhenBusy,
};
use stats::{codes, ErrorInfo, HostInfo, ResultDoc};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The target of a command that names none: a test file in the working directory, created
/// and removed.
pub const DEFAULT_TARGET: &str = "diskmeter.test";

/// A target as the command line named it. A folder (a mount point, or any folder on the disk,
/// as a CrystalDiskMark user picks a drive) stands for the test file [`DEFAULT_TARGET`] in it:
/// created, filled, locked and removed exactly like the default `./diskmeter.test`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetPath {
    /// The file or block device measured.
    pub path: PathBuf,
    /// The folder named, when a folder was named.
    pub folder: Option<PathBuf>,
}

impl TargetPath {
    /// `given` resolved: a folder becomes its test file, anything else stays as named.
    pub fn resolve(given: PathBuf) -> TargetPath {
        // Windows: a bare drive (`D:`, `D:\`) is the volume's root, not the drive's current
        // folder: `D:\diskmeter.test`, as CrystalDiskMark tests a drive.
        #[cfg(windows)]
        if let Some(letter) = platform::winpath::drive_letter(&given.to_string_lossy()) {
            let root = PathBuf::from(format!("{letter}:\\"));
            return TargetPath { path: root.join(DEFAULT_TARGET), folder: Some(root) };
        }
        if given.is_dir() {
            TargetPath { path: given.join(DEFAULT_TARGET), folder: Some(given) }
        } else {
            TargetPath { path: given, folder: None }
        }
    }

    /// The named target, or the default test file.
    pub fn or_default(given: Option<PathBuf>) -> TargetPath {
        Self::resolve(given.unwrap_or_else(|| PathBuf::from(DEFAULT_TARGET)))
    }

    /// The result's facts about `t`, this target opened.
    pub(crate) fn info(&self, t: &OpenTarget) -> stats::TargetInfo {
        let mut i = engine::measure::target_info(t);
        self.stamp(&mut i);
        i
    }

    /// Records the folder in `info` when `info` describes this target's test file.
    pub fn stamp(&self, info: &mut stats::TargetInfo) {
        if let Some(f) = &self.folder {
            if info.path == self.path.to_string_lossy() {
                info.folder = Some(f.to_string_lossy().into_owned());
            }
        }
    }
}

/// Size of a test file diskmeter creates when a job gives no `--size`.
pub const DEFAULT_SIZE: u64 = 1 << 30;

/// Receives progress. All methods have no-op defaults.
pub trait Observer {
    /// A new phase starts (`planned` = its expected length, if known).
    fn phase(&mut self, _label: &str, _planned: Option<Duration>) {}
    fn fill(&mut self, _done: u64, _total: u64) {}
    fn tick(&mut self, _t: &Tick) {}
    fn phase_done(&mut self) {}
    /// Multi-step commands (`sla` points, `compare` passes): `done` steps of about
    /// `total` finished after `elapsed`.
    fn steps(&mut self, _done: usize, _total: usize, _elapsed: Duration) {}
    /// The planned length of all the steps, announced before the first (an ETA before any
    /// step has finished).
    fn planned(&mut self, _total: Duration) {}
    /// Something the user should know while the command waits (another run holds the target).
    fn notice(&mut self, _message: &str) {}
    /// A long write (`steady`'s preconditioning, `--sustained`): `done` of `total` bytes
    /// after `elapsed`, `mb_s` over the last second.
    fn written(&mut self, _done: u64, _total: u64, _elapsed: Duration, _mb_s: f64) {}
    /// A card cell is measured (`mark`): test `job` in `direction` (`read`, `write`, `mix`),
    /// its best pass so far. `serve` fills its live card from it.
    fn cell(&mut self, _job: &str, _direction: &str, _stats: &stats::DirStats) {}
}

/// Passes a target's events on to an observer.
pub(crate) fn target_event(obs: &mut dyn Observer, e: TargetEvent<'_>) {
    match e {
        TargetEvent::Fill { done, total } => obs.fill(done, total),
        TargetEvent::Waiting(m) => obs.notice(m),
    }
}

/// Opens a measurement (its memory checks, then its targets in order; none when `targets` is
/// `None`: the null and mem engines) with `obs` showing each target's preparation. `checked`
/// speaks once the memory checks have passed, before the first target is touched.
pub(crate) fn open_measurement_then(
    need: &Need,
    targets: Option<Vec<TargetPlan>>,
    opts: &SessionOptions,
    obs: &mut dyn Observer,
    checked: &mut dyn FnMut(&mut dyn Observer),
) -> engine::Result<Measurement> {
    let mut progress = |p: Progress<'_>| match p {
        Progress::Checked => checked(obs),
        Progress::Preparing(path) => obs.phase(&format!("preparing {}", path.display()), None),
        Progress::Target(e) => target_event(obs, e),
        Progress::Prepared => obs.phase_done(),
    };
    match targets {
        Some(t) => Measurement::open(need, t, opts.ctl.clone(), &mut progress),
        None => Measurement::without_target(need, opts.ctl.clone(), &mut progress),
    }
}

/// [`open_measurement_then`] with nothing said between the checks and the targets.
pub(crate) fn open_measurement(
    need: &Need,
    targets: Option<Vec<TargetPlan>>,
    opts: &SessionOptions,
    obs: &mut dyn Observer,
) -> engine::Result<Measurement> {
    open_measurement_then(need, targets, opts, obs, &mut |_| {})
}

/// An observer that shows nothing.
pub struct Silent;
impl Observer for Silent {}

/// How a command opens its targets and runs its jobs (from [`TargetFlags`]).
#[derive(Clone, Default)]
pub struct SessionOptions {
    pub target: TargetOptions,
    pub ctl: RunControl,
    /// Compare each job with the null engine's ceiling (tool-bottleneck check).
    pub ceiling_check: bool,
    /// Size of a test file diskmeter creates when a job gives no --size.
    pub default_size: u64,
}

/// The I/O engine of `mark`, `run`, `sla` and `compare` when none is named: this OS's
/// asynchronous engine (io_uring on Linux, iocp on Windows).
#[cfg(not(windows))]
pub const DEFAULT_ENGINE: &str = "io_uring";
/// The I/O engine of `mark`, `run`, `sla` and `compare` when none is named: this OS's
/// asynchronous engine (io_uring on Linux, iocp on Windows).
#[cfg(windows)]
pub const DEFAULT_ENGINE: &str = "iocp";

/// `--poll-us` by default: [`engine::measure::DEFAULT_POLL_NS`] in microseconds.
pub const DEFAULT_POLL_US: u64 = engine::measure::DEFAULT_POLL_NS / 1000;
/// The longest `--poll-us`: one second.
pub const MAX_POLL_US: u64 = 1_000_000;
/// The deepest queue per worker any command takes ([`spec::validate::MAX_QD`]).
pub const MAX_QD: u32 = spec::validate::MAX_QD;

/// The target and data-safety flags every measuring command takes, as typed.
#[derive(Debug, Clone, Default)]
pub struct TargetFlags {
    /// Allow writing to an existing file that diskmeter did not create.
    pub overwrite: bool,
    /// Keep the test file diskmeter created.
    pub keep: bool,
    /// Allow writing to this exact block device, destroying its data.
    pub destroy_data: Option<PathBuf>,
    /// Buffered I/O (page cache) instead of direct I/O.
    pub buffered: bool,
    /// Do not register I/O buffers with io_uring.
    pub no_register_buffers: bool,
    /// Let the scheduler place worker threads.
    pub no_pin: bool,
    /// `--poll-us`: how long an io_uring worker polls for completions before sleeping
    /// (0 = sleep at once). None: [`DEFAULT_POLL_US`] in one process, 0 for several ranks.
    pub poll_us: Option<u64>,
    /// Skip the tool-bottleneck and memory-bandwidth checks.
    pub no_ceiling_check: bool,
    /// Refuse instead of waiting when another run holds the target.
    pub no_wait: bool,
    /// Keep lossless latency histograms and wall-clock times in the results (`--histograms`),
    /// so that `merge` can combine results of several hosts.
    pub histograms: bool,
    /// `--handoff`: how to run a job whose target hands io_uring's requests to kernel workers
    /// (None: [`DEFAULT_HANDOFF`]).
    pub handoff: Option<stats::HandoffPolicy>,
    /// `--write-through`: writes reach the medium before they complete (Windows
    /// FILE_FLAG_WRITE_THROUGH, Linux O_DSYNC).
    pub write_through: bool,
}

/// Where the target hands io_uring's requests to kernel workers, diskmeter serves the queue
/// depth with threads of synchronous I/O unless told otherwise (`docs/METHOD.md`, "Hand-off to
/// the kernel's workers": on zram 1.3–18× the IOPS of io_uring's hand-off, at every shape).
pub const DEFAULT_HANDOFF: stats::HandoffPolicy = stats::HandoffPolicy::Threads;

impl TargetFlags {
    /// The flags on `ranks`: several ranks merge exactly only with every rank's histograms.
    /// Ranks do not poll unless `--poll-us` says so: several ranks may share a host, and
    /// none of them can see whether the others leave a CPU free.
    pub(crate) fn for_ranks(&self, ranks: &crate::ranks::RankNames) -> TargetFlags {
        let poll_us = if ranks.size > 1 { Some(self.poll_us.unwrap_or(0)) } else { self.poll_us };
        TargetFlags { histograms: self.histograms || ranks.size > 1, poll_us, ..self.clone() }
    }

    /// How the command's targets are opened and its jobs run; `stop` is raised by a signal.
    pub(crate) fn session(&self, prefill: bool, stop: Arc<AtomicBool>) -> SessionOptions {
        SessionOptions {
            target: TargetOptions {
                overwrite: self.overwrite,
                keep: self.keep,
                destroy_data: self.destroy_data.clone(),
                prefill,
                when_busy: if self.no_wait { WhenBusy::Refuse } else { WhenBusy::Wait },
                no_fill: false,
                write_through: self.write_through,
            },
            ctl: RunControl {
                stop,
                register_buffers: !self.no_register_buffers,
                // Test-only (feature `fault-injection`): DISKMETER_NULL_FAULT=eio@N; `None` in a release build.
                null_fault: engine::measure::null_fault_from_env(),
                // Test-only as well: the write faults of DISKMETER_FAULTS (drop, misdirect, torn, …).
                write_faults: engine::measure::write_faults_from_env(),
                pin_workers: !self.no_pin,
                poll_ns: self.poll_us.unwrap_or(DEFAULT_POLL_US).saturating_mul(1000),
                // The default polls shallow queues only; a budget the user gave holds at any depth.
                poll_max_depth: if self.poll_us.is_some() { u32::MAX } else { engine::measure::DEFAULT_POLL_MAX_DEPTH },
                keep_histograms: self.histograms,
                handoff: self.handoff.unwrap_or(DEFAULT_HANDOFF),
            },
            ceiling_check: !self.no_ceiling_check,
            default_size: DEFAULT_SIZE,
        }
    }
}

pub fn host_info() -> HostInfo {
    let h = engine::measure::host_facts();
    HostInfo {
        kernel: h.kernel,
        cpus: h.cpus,
        memory_bytes: h.memory_bytes,
        cpu_model: h.cpu_model,
        hostname: h.hostname,
        os: Some(platform::host::os_name().to_string()),
        os_version: Some(platform::host::os_version()),
        wine: platform::host::wine_version(),
    }
}

/// RFC 3339 UTC timestamp of now (seconds precision).
pub fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

pub(crate) fn new_doc(command: &str) -> ResultDoc {
    ResultDoc::new(command, now_rfc3339(), host_info())
}

/// A result document of `command` that began at `started` (a kernel that reports its own start).
pub(crate) fn new_doc_at(command: &str, started: std::time::SystemTime) -> ResultDoc {
    ResultDoc::new(command, humantime::format_rfc3339_seconds(started).to_string(), host_info())
}

/// A result document for a command that failed before producing any figures (so that
/// `--json` output is always a valid document).
pub fn error_doc(command: &str, kind: &str, message: &str) -> ResultDoc {
    let mut d = new_doc(command);
    d.partial = true;
    d.error = Some(ErrorInfo { kind: kind.into(), message: message.into(), offset: None, job: None });
    d
}

pub(crate) fn finish_error(doc: &mut ResultDoc, error: Option<ErrorInfo>, interrupted: bool) {
    if let Some(e) = error {
        doc.partial = true;
        doc.warn(codes::PARTIAL, format!("run stopped early: {}", e.message));
        doc.error = Some(e);
    } else if interrupted {
        doc.partial = true;
        doc.warn(codes::PARTIAL, "interrupted: figures cover only the time before the interruption");
        doc.error = Some(ErrorInfo {
            kind: "interrupted".into(),
            message: "interrupted by the user".into(),
            offset: None,
            job: None,
        });
    }
}

pub(crate) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// `--start-at`: an RFC 3339 instant (`2026-11-24T15:30:00Z`) or Unix seconds, in the future
/// and at most a day away.
pub fn parse_start_at(s: &str) -> Result<std::time::SystemTime, crate::Error> {
    use std::time::{Duration as D, SystemTime, UNIX_EPOCH};
    let t = match s.trim().parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 => UNIX_EPOCH + D::from_secs_f64(secs),
        _ => humantime::parse_rfc3339_weak(s.trim()).map_err(|_| {
            crate::Error::usage(format!(
                "invalid value for --start-at: {s:?} is not a time; give RFC 3339 UTC (2026-11-24T15:30:00Z) or \
                 Unix seconds"
            ))
        })?,
    };
    let now = SystemTime::now();
    match t.duration_since(now) {
        Err(_) => Err(crate::Error::usage(format!(
            "invalid value for --start-at: {s} is in the past; give a time a little ahead (every host must reach it)"
        ))),
        Ok(d) if d > D::from_secs(86_400) => {
            Err(crate::Error::usage(format!("invalid value for --start-at: {s} is more than a day away")))
        }
        Ok(_) => Ok(t),
    }
}

/// Holds the first release of workers until `--start-at`'s instant minus the ramp, so the
/// first measured window starts at that instant on every host whose clock is synchronised.
pub struct StartAt<'a> {
    at: Option<std::time::SystemTime>,
    stop: Arc<AtomicBool>,
    inner: &'a mut dyn Observer,
}

impl<'a> StartAt<'a> {
    pub fn new(at: Option<std::time::SystemTime>, stop: Arc<AtomicBool>, inner: &'a mut dyn Observer) -> Self {
        Self { at, stop, inner }
    }
}

impl Observer for StartAt<'_> {
    fn phase(&mut self, label: &str, planned: Option<Duration>) {
        self.inner.phase(label, planned);
    }
    fn fill(&mut self, done: u64, total: u64) {
        self.inner.fill(done, total);
    }
    fn tick(&mut self, t: &Tick) {
        self.inner.tick(t);
        if t.kind == engine::measure::TickKind::Release {
            if let Some(at) = self.at.take() {
                let release = at.checked_sub(t.ramp).unwrap_or(at);
                self.inner.notice(&format!("waiting for --start-at {}", humantime::format_rfc3339_millis(at)));
                while !self.stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let Ok(left) = release.duration_since(std::time::SystemTime::now()) else { break };
                    std::thread::sleep(left.min(Duration::from_millis(50)));
                }
            }
        }
    }
    fn phase_done(&mut self) {
        self.inner.phase_done();
    }
    fn steps(&mut self, done: usize, total: usize, elapsed: Duration) {
        self.inner.steps(done, total, elapsed);
    }
    fn planned(&mut self, total: Duration) {
        self.inner.planned(total);
    }
    fn notice(&mut self, message: &str) {
        self.inner.notice(message);
    }
    fn written(&mut self, done: u64, total: u64, elapsed: Duration, mb_s: f64) {
        self.inner.written(done, total, elapsed, mb_s);
    }
    fn cell(&mut self, job: &str, direction: &str, stats: &stats::DirStats) {
        self.inner.cell(job, direction, stats);
    }
}
