//! `diskmeter doctor [TARGET]`: why is this disk slow? Options → a validated [`Config`] → the
//! facts under the target (through the platform layer), SMART of each whole disk (smartctl),
//! the optional live look (`--load`) and read-only probe (`--probe`) → the doctor crate's
//! ranked causes ([`doctor::diagnose`]).

use crate::error::{Error, Result};
use crate::session::Observer;
use doctor::facts::{self, DeviceState, Facts, MountFacts, Smart};
use doctor::model::{LoadDevice, LoadProcess, LoadView, ProbeView};
pub use doctor::DoctorDoc;
use health::report::{HealthConfig, SourceCache};
use health::smartctl::{SmartSource, Smartctl};
use health::topology::SysPaths;
use platform::block::{Roots, Topology};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The longest `--load`.
pub const MAX_LOAD: Duration = Duration::from_secs(600);
/// The probe's phases: QD1 and QD32 random 4 KiB reads, then sequential 1 MiB reads at QD8.
pub const PROBE_PHASES: [(&str, &str, &str, &str); 3] =
    [("randread", "4k", "1", "2s"), ("randread", "4k", "32", "1500ms"), ("read", "1m", "8", "1500ms")];

/// `doctor`'s options as typed.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// A path, mount point or device; default: the current directory.
    pub target: Option<PathBuf>,
    /// `--load 10s`.
    pub load: Option<String>,
    pub probe: bool,
    pub json: bool,
    /// `-o FILE` (.html, .json or .txt).
    pub output: Option<PathBuf>,
    pub force: bool,
    pub smartctl: Option<PathBuf>,
}

/// The format of the `-o` file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    Html,
    Json,
    Text,
}

/// Everything checked before anything is read.
pub struct Config {
    /// The target as given, and the path to look at.
    pub given: String,
    pub path: PathBuf,
    pub load: Option<Duration>,
    pub probe: bool,
    pub json: bool,
    pub output: Option<(files::output::OutputFile, OutFormat)>,
    pub smartctl: Option<PathBuf>,
}

impl Config {
    pub fn new(o: &Options) -> Result<Config> {
        let (given, path) = match &o.target {
            Some(t) => (t.display().to_string(), t.clone()),
            None => (".".to_string(), PathBuf::from(".")),
        };
        if std::fs::symlink_metadata(&path).is_err() {
            return Err(Error::usage(format!(
                "invalid value for TARGET: {} does not exist; give a file, a folder, a mount point or a device",
                path.display()
            )));
        }
        let load = match &o.load {
            Some(s) => {
                let d = spec::units::parse_duration("--load", s, spec::units::TimeUnit::Seconds)?;
                if d < Duration::from_secs(1) || d > MAX_LOAD {
                    return Err(Error::usage(format!(
                        "invalid value for --load: {s}; give 1s to {}s (10s is a good look)",
                        MAX_LOAD.as_secs()
                    )));
                }
                Some(d)
            }
            None => None,
        };
        let output = match &o.output {
            None => None,
            Some(p) => {
                let ext = p.extension().map(|e| e.to_string_lossy().to_ascii_lowercase());
                let fmt = match ext.as_deref() {
                    Some("html" | "htm") => OutFormat::Html,
                    Some("json") => OutFormat::Json,
                    Some("txt") => OutFormat::Text,
                    _ => {
                        return Err(Error::usage(format!(
                            "invalid value for --output: cannot tell the format of {}; use .html, .json or .txt",
                            p.display()
                        )))
                    }
                };
                let out = files::output::plan(p, "--output", o.force).map_err(|e| Error::usage(e.to_string()))?;
                Some((out, fmt))
            }
        };
        let smartctl = o.smartctl.clone().or_else(|| std::env::var_os("DISKMETER_SMARTCTL").map(PathBuf::from));
        Ok(Config { given, path, load, probe: o.probe, json: o.json, output, smartctl })
    }

    /// Writes the `-o` file, if any.
    pub fn write_output(&self, doc: &DoctorDoc) -> Result<()> {
        if let Some((path, fmt)) = &self.output {
            let body = match fmt {
                OutFormat::Html => report::html::doctor::render_html(doc),
                OutFormat::Json => json(doc),
                OutFormat::Text => report::doctor_text::render(doc),
            };
            path.write(body.as_bytes()).map_err(|e| Error::runtime(e.to_string()))?;
        }
        Ok(())
    }
}

/// The document as pretty JSON with a final newline.
pub fn json(doc: &DoctorDoc) -> String {
    serde_json::to_string_pretty(doc).unwrap_or_default() + "\n"
}

/// The kernel name of the block device `path` leads to, and why there is none.
fn device_of(topo: &Topology, path: &Path) -> std::result::Result<String, String> {
    match platform::block::dev_numbers(path) {
        Some((maj, min)) => topo
            .lookup_number(maj, min)
            .map(|d| d.name)
            .map_err(|e| format!("the kernel lists no block device {maj}:{min} for {} ({})", path.display(), e.error)),
        None if cfg!(target_os = "linux") => Err(format!(
            "{} is on a file system without a block device (tmpfs, overlay, a network or FUSE file system)",
            path.display()
        )),
        None => Err(format!(
            "the checks read Linux's device tree (sysfs, procfs); on {} they are not built yet",
            platform::host::os_name()
        )),
    }
}

fn mount_of(roots: &Roots, path: &Path) -> Option<MountFacts> {
    let abs = std::fs::canonicalize(path).ok()?;
    if platform::fs::is_block_device(&std::fs::metadata(&abs).ok()?.file_type()) {
        return None;
    }
    let mounts = platform::mounts::read(roots);
    let m = platform::mounts::longest_mount(&mounts, &abs)?;
    let space = platform::fs::space(&m.mount_point);
    Some(MountFacts {
        mount_point: m.mount_point.display().to_string(),
        fstype: m.fstype.clone(),
        options: m.options.clone(),
        size_bytes: space.map(|s| s.0),
        free_bytes: space.map(|s| s.1),
    })
}

/// SMART of every whole disk, through smartctl; a reason for each disk it could not read.
fn read_smart(f: &mut Facts, smartctl: Option<&Path>, stop: &Arc<AtomicBool>) {
    if f.disks.is_empty() {
        return;
    }
    let sys = SysPaths::default();
    let explicit = smartctl.map(Path::to_path_buf);
    let runner_stop = stop.clone();
    let mut cache = SourceCache::new(move || {
        Smartctl::locate(explicit.as_deref()).map(|s| {
            Box::new(s.with_timeout(health::smartctl::DEFAULT_TIMEOUT).with_stop(runner_stop.clone()))
                as Box<dyn SmartSource>
        })
    });
    let root = f.root;
    for d in &mut f.disks {
        let cfg = HealthConfig { device: Some(format!("/dev/{}", d.name)), raw: true, ..HealthConfig::default() };
        d.smart = match health::report::run(&cfg, &mut cache, &sys) {
            Err(e) => Smart::NotRead(e.to_string()),
            Ok(doc) => match doc.disks.into_iter().next() {
                None => Smart::NotRead("smartctl named no disk".into()),
                Some(r) => match (r.smart, r.smartctl) {
                    (Some(rep), Some(raw))
                        if !matches!(
                            r.verdict,
                            health::verdict::Verdict::Error | health::verdict::Verdict::Unavailable
                        ) =>
                    {
                        Smart::Read { report: Box::new(rep), raw, source: format!("smartctl -a {}", r.path) }
                    }
                    _ => {
                        let why = r.reasons.first().map(|x| x.message.clone()).unwrap_or_else(|| "no SMART".into());
                        Smart::NotRead(if root { why } else { format!("{why} (not root)") })
                    }
                },
            },
        };
    }
}

/// What `steady --sustained` found about each disk (its write cliff), by the disk's one
/// identity: a disk that only reuses a device number (a new loop0) has none of it.
fn read_state(f: &mut Facts, topo: &Topology) {
    let host = platform::host::hostname_and_release().0;
    for d in &mut f.disks {
        let Some(layer) = f.layers.iter().find(|l| l.name == d.name) else { continue };
        let Some(identity) = platform::identity::block_key(topo, &d.name, &host) else { continue };
        let dev = &layer.device;
        let ident = dev
            .ident
            .serial
            .clone()
            .or_else(|| topo.attr(&d.name, "wwid"))
            .or_else(|| dev.loop_backing_file.as_ref().map(|p| p.display().to_string()));
        let legacy = ident.map(|ident| crate::steady::state::Legacy { size: dev.size_bytes().unwrap_or(0), ident });
        if let Some((rec, source)) = crate::steady::state::for_device(&identity, legacy.as_ref()) {
            d.state = Some(DeviceState { cliff_bytes: rec.cliff_bytes, source });
        }
    }
}

/// `--load`: the stack's devices, PSI and processes over `span`, with nothing of ours running.
fn watch(f: &Facts, span: Duration, stop: &Arc<AtomicBool>, obs: &mut dyn Observer) -> Option<LoadView> {
    let roots = Roots::default();
    let names: Vec<String> = f.layers.iter().map(|l| l.name.clone()).collect();
    let read = || -> Vec<platform::diskstats::DiskLine> {
        platform::diskstats::read(&roots).map(|(v, _)| v).unwrap_or_default()
    };
    obs.phase(&format!("watching for {}", humantime::format_duration(span)), Some(span));
    let (d0, p0, s0, t0) = (read(), monitor::psi::read(), monitor::procs::read_all(), Instant::now());
    while t0.elapsed() < span && !stop.load(Ordering::Relaxed) {
        std::thread::sleep(Duration::from_millis(100).min(span.saturating_sub(t0.elapsed())));
    }
    let (d1, p1, s1) = (read(), monitor::psi::read(), monitor::procs::read_all());
    let secs = t0.elapsed().as_secs_f64();
    obs.phase_done();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let itv_cs = (secs * 100.0).round().max(1.0) as u64;
    let mut devices = Vec::new();
    for n in &names {
        let (Some(a), Some(b)) = (d0.iter().find(|l| &l.name == n), d1.iter().find(|l| &l.name == n)) else {
            continue;
        };
        if let monitor::diskstats::Change::Delta(d) = monitor::diskstats::delta(&a.counters, &b.counters) {
            let io = monitor::metrics::Iostat::compute(&d, itv_cs);
            devices.push(LoadDevice {
                name: n.clone(),
                read_iops: io.r_s,
                write_iops: io.w_s,
                read_mb_s: io.rkb_s * 1024.0 / 1e6,
                write_mb_s: io.wkb_s * 1024.0 / 1e6,
                util_pct: io.util,
                await_ms: io.await_ms,
                aqu_sz: io.aqu_sz,
            });
        }
    }
    let psi = match (p0, p1) {
        (Some(a), Some(b)) => Some(monitor::psi::interval(&a, &b, secs).some_pct),
        _ => None,
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let processes = monitor::procs::rates(&s0, &s1, secs, monitor::procs::ProcSort::Total)
        .into_iter()
        .filter(|r| r.read_bytes_s + r.write_bytes_s > 0.0 && r.pid != std::process::id() as i32)
        .take(5)
        .map(|r| LoadProcess {
            pid: r.pid.unsigned_abs(),
            command: r.comm,
            read_bytes: (r.read_bytes_s * secs) as u64,
            write_bytes: (r.write_bytes_s * secs) as u64,
        })
        .collect();
    Some(LoadView { seconds: secs, devices, io_pressure_some_pct: psi, processes })
}

/// `--probe`: read-only reads of the target (a device, a file, or a test file in a folder):
/// the latency floor at QD1, IOPS at QD32, sequential throughput.
fn probe(cfg: &Config, stop: &Arc<AtomicBool>, obs: &mut dyn Observer) -> Result<ProbeView> {
    let tp = crate::session::TargetPath::resolve(cfg.path.clone());
    let existed = tp.path.exists();
    let mut out = ProbeView {
        target: tp.path.display().to_string(),
        qd1_iops: 0.0,
        qd1_mean_us: 0.0,
        qd1_p99_us: 0.0,
        qd32_iops: 0.0,
        qd32_mean_us: 0.0,
        seq_mb_s: 0.0,
        warnings: Vec::new(),
    };
    let mut result = Ok(());
    for (i, (rw, bs, qd, runtime)) in PROBE_PHASES.iter().enumerate() {
        let o = crate::run::Options {
            target: Some(tp.path.clone()),
            name: Some(format!("probe-{rw}-{bs}-qd{qd}")),
            rw: Some((*rw).into()),
            bs: Some((*bs).into()),
            qd: Some((*qd).into()),
            runtime: Some((*runtime).into()),
            ramp: Some("0".into()),
            flags: crate::session::TargetFlags {
                // The test file the first phase creates serves the others; removed below.
                keep: true,
                no_ceiling_check: true,
                ..Default::default()
            },
            ..Default::default()
        };
        let doc = match crate::run::Config::new(&o).and_then(|c| crate::run::run(&c, stop.clone(), obs)) {
            Ok(d) => d,
            Err(e) => {
                result = Err(e);
                break;
            }
        };
        for w in &doc.warnings {
            if !out.warnings.contains(&w.code) {
                out.warnings.push(w.code.clone());
            }
        }
        let Some(r) = doc.results.first().and_then(|r| r.read.clone()) else { break };
        match i {
            0 => {
                out.qd1_iops = r.iops;
                out.qd1_mean_us = r.lat_ns.mean / 1000.0;
                out.qd1_p99_us = r.lat_ns.p99 as f64 / 1000.0;
            }
            1 => {
                out.qd32_iops = r.iops;
                out.qd32_mean_us = r.lat_ns.mean / 1000.0;
            }
            _ => out.seq_mb_s = r.mb_s,
        }
        if doc.partial || stop.load(Ordering::Relaxed) {
            break;
        }
    }
    if !existed && tp.path.is_file() {
        let _ = std::fs::remove_file(&tp.path);
    }
    result.map(|()| out)
}

/// Gathers the facts and runs the checks.
pub fn run(cfg: &Config, stop: &Arc<AtomicBool>, obs: &mut dyn Observer) -> Result<DoctorDoc> {
    let roots = Roots::default();
    let topo = Topology::new(roots.clone());
    let device = device_of(&topo, &cfg.path);
    let mut f = facts::gather(&roots, device.as_ref().ok().map(String::as_str), &cfg.given);
    f.no_device = device.err();
    f.mount = mount_of(&roots, &cfg.path);
    f.root = platform::host::is_root();
    obs.phase("reading SMART", None);
    read_smart(&mut f, cfg.smartctl.as_deref(), stop);
    obs.phase_done();
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted("interrupted: no diagnosis was made".into()));
    }
    read_state(&mut f, &topo);
    if let Some(span) = cfg.load {
        f.load = watch(&f, span, stop, obs);
    }
    if cfg.probe && !stop.load(Ordering::Relaxed) {
        // A probe that cannot run (no permission to read the device, no room for a test file)
        // costs its check, not the diagnosis.
        match probe(cfg, stop, obs) {
            Ok(p) => f.probe = Some(p),
            Err(e) => {
                obs.notice(&format!("warning: --probe could not run: {}", e.message()));
                f.probe_error = Some(e.message().to_string());
            }
        }
    }
    if stop.load(Ordering::Relaxed) {
        return Err(Error::Interrupted("interrupted: no diagnosis was made".into()));
    }
    Ok(doctor::diagnose(&f, stats::ToolInfo::default(), crate::session::now_rfc3339()))
}
