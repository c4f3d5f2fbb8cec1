//! One run of `diskmeter health`: resolve disks, read SMART, judge, forecast, keep the
//! history. The result is one serialisable document (schema `diskmeter.health.v1`).

use crate::endurance::{self, Forecast, RatedSpec};
use crate::model::SmartReport;
use crate::selftest::{self, SelfTestRun, WaitObserver};
use crate::smartctl::{check_version, SelfTestKind, SmartSource};
use crate::state::{self, Sample, StateFile};
use crate::topology::{Disk, SysPaths};
use crate::verdict::{evaluate, Level, Reason, Verdict};
use crate::HealthError;
use serde::Serialize;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What opening a disk for SMART needs, for the permission error.
#[cfg(not(windows))]
const NEEDS_ADMIN: &str = "SMART needs root (sudo diskmeter health …)";
/// What opening a disk for SMART needs, for the permission error.
#[cfg(windows)]
const NEEDS_ADMIN: &str = "SMART needs an elevated prompt (Run as administrator)";

pub const SCHEMA: &str = "diskmeter.health.v1";

/// Typed options of one run (the CLI builds this).
#[derive(Debug, Clone, Default)]
pub struct HealthConfig {
    pub device: Option<String>,
    pub device_type: Option<String>,
    pub rated: Option<RatedSpec>,
    /// `None`: keep no history (`--no-state`, or no HOME).
    pub state_path: Option<PathBuf>,
    pub raw: bool,
    pub now_unix: u64,
    pub time: String,
    pub tool_version: String,
}

type Maker<'a> = Box<dyn FnMut() -> Result<Box<dyn SmartSource + 'a>, HealthError> + 'a>;

/// smartctl, found and version-checked on first use only: virtual disks never need it.
pub struct SourceCache<'a> {
    make: Maker<'a>,
    got: Option<Result<Box<dyn SmartSource + 'a>, String>>,
    pub version: Option<(u32, u32)>,
    pub path: Option<String>,
}

impl<'a> SourceCache<'a> {
    pub fn new(make: impl FnMut() -> Result<Box<dyn SmartSource + 'a>, HealthError> + 'a) -> Self {
        Self { make: Box::new(make), got: None, version: None, path: None }
    }

    pub fn get(&mut self) -> Result<&dyn SmartSource, String> {
        if self.got.is_none() {
            let r = (self.make)().map_err(|e| e.to_string()).and_then(|src| {
                let v = src.version().map_err(|e| e.to_string())?;
                check_version(v, &src.describe()).map_err(|e| e.to_string())?;
                self.version = Some(v);
                self.path = Some(src.describe());
                Ok(src)
            });
            self.got = Some(r);
        }
        match &self.got {
            Some(Ok(s)) => Ok(s.as_ref()),
            Some(Err(e)) => Err(e.clone()),
            None => Err("smartctl was not looked for".into()),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct DiskReport {
    pub name: String,
    pub path: String,
    pub via: Vec<String>,
    pub verdict: Verdict,
    pub reasons: Vec<Reason>,
    pub virtual_kind: Option<String>,
    pub size_bytes: Option<u64>,
    /// "SATA SSD", "NVMe SSD", "HDD 7200 rpm".
    pub kind: Option<String>,
    pub smart: Option<SmartReport>,
    pub endurance: Option<Forecast>,
    /// The disk's one identity (`platform::identity`): its wear history's key, and the history
    /// database's. Absent for a disk whose SMART was not read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_key: Option<String>,
    /// smartctl's own JSON, with `--raw` only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub smartctl: Option<Value>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tool {
    pub name: String,
    pub version: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct SmartctlInfo {
    pub path: Option<String>,
    pub version: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct HealthDoc {
    pub schema: String,
    pub tool: Tool,
    pub time: String,
    pub smartctl_tool: SmartctlInfo,
    pub state_file: Option<String>,
    pub disks: Vec<DiskReport>,
    pub self_test: Option<SelfTestRun>,
    pub warnings: Vec<String>,
    /// A wait for a self-test was interrupted (Ctrl-C): the test keeps running.
    pub interrupted: bool,
}

impl HealthDoc {
    /// 0 when every disk is healthy, has warnings or has no SMART; 1 when one is failing
    /// or could not be read; 130 when a self-test wait was interrupted.
    pub fn exit_code(&self) -> u8 {
        if self.interrupted {
            130
        } else if self.disks.iter().any(|d| matches!(d.verdict, Verdict::Failing | Verdict::Error)) {
            1
        } else {
            0
        }
    }
}

fn reason(level: Level, code: &str, message: String) -> Reason {
    Reason { level, code: code.into(), message }
}

fn base(disk: &Disk) -> DiskReport {
    DiskReport {
        name: disk.name.clone(),
        path: disk.path.display().to_string(),
        via: disk.via.clone(),
        verdict: Verdict::Healthy,
        reasons: Vec::new(),
        virtual_kind: disk.virtual_kind.clone(),
        size_bytes: disk.size_bytes,
        kind: None,
        smart: None,
        endurance: None,
        device_key: None,
        smartctl: None,
    }
}

fn virtual_reason(kind: &str) -> Reason {
    reason(
        Level::Info,
        "virtual_device",
        format!(
            "SMART unavailable: virtual device ({kind}); SMART belongs to the physical disks of the host, \
             this is not a failure"
        ),
    )
}

/// Judge a smartctl failure to open the device: unavailable or error.
fn open_failure(d: &mut DiskReport, rep: &SmartReport, cfg: &HealthConfig) {
    let msg = rep.error_messages();
    let lower = msg.to_ascii_lowercase();
    if lower.contains("unknown device type") || lower.contains("valid arguments") {
        d.verdict = Verdict::Error;
        d.reasons.push(reason(
            Level::Failing,
            "command_line",
            format!(
                "smartctl rejected its command line (check --device-type): {}",
                rep.messages.iter().find(|m| m.severity == "error").map(|m| m.string.as_str()).unwrap_or("")
            ),
        ));
    } else if let Some(kind) = &d.virtual_kind {
        d.verdict = Verdict::Unavailable;
        d.reasons.push(virtual_reason(kind));
        if cfg.device_type.is_some() && !msg.is_empty() {
            d.reasons.push(reason(Level::Info, "smartctl_message", format!("smartctl: {msg}")));
        }
    } else if lower.contains("unable to detect device type") {
        d.verdict = Verdict::Unavailable;
        d.reasons.push(reason(
            Level::Info,
            "unknown_device_type",
            "SMART unavailable: smartctl cannot detect the device type; behind a USB bridge or RAID controller \
             try --device-type (sat, nvme, megaraid,N, …)"
                .into(),
        ));
    } else if lower.contains("permission denied") || lower.contains("operation not permitted") {
        d.verdict = Verdict::Error;
        d.reasons.push(reason(
            Level::Failing,
            "permission",
            format!("smartctl could not open {}: {msg}; {NEEDS_ADMIN}", d.path),
        ));
    } else {
        d.verdict = Verdict::Error;
        d.reasons.push(reason(
            Level::Failing,
            "open_failed",
            format!(
                "smartctl could not open {}: {}",
                d.path,
                if msg.is_empty() { format!("exit status {}", rep.exit.0) } else { msg }
            ),
        ));
    }
}

/// The disk's one identity (`platform::identity`, as the history and `steady` know it): what
/// sysfs says when it names the disk (its WWN or serial), else SMART's serial and model (a USB
/// bridge hides them from sysfs), else the identity of a device that says nothing of itself.
fn disk_key(sys: &SysPaths, name: &str, serial: Option<&str>, model: Option<&str>) -> String {
    let roots = platform::block::Roots {
        sys: sys.sys.clone(),
        proc: sys.proc_dir.clone(),
        dev: sys.dev.clone(),
        ..platform::block::Roots::default()
    };
    let host = platform::host::hostname_and_release().0;
    let sysfs = platform::identity::block_key(&platform::block::Topology::new(roots), name, &host);
    match sysfs {
        Some(k) if k.starts_with("wwn:") || k.starts_with("serial:") => k,
        other => platform::identity::key_from_facts(None, serial, model)
            .or(other)
            .unwrap_or_else(|| format!("host:{host}/dev:{name}")),
    }
}

/// Read, judge and forecast one disk; record a sample in `state`.
pub fn check_disk(
    disk: &Disk,
    cfg: &HealthConfig,
    cache: &mut SourceCache<'_>,
    sys: &SysPaths,
    state: Option<&mut StateFile>,
) -> DiskReport {
    let mut d = base(disk);
    if let (Some(kind), None) = (&disk.virtual_kind, &cfg.device_type) {
        d.verdict = Verdict::Unavailable;
        d.reasons.push(virtual_reason(kind));
        return d;
    }
    let dtype = cfg.device_type.as_deref();
    let out = match cache.get().map_err(HealthError::Smartctl).and_then(|src| src.query(&disk.path, dtype)) {
        Ok(o) => o,
        Err(e) => {
            d.verdict = Verdict::Error;
            d.reasons.push(reason(Level::Failing, "smartctl", e.to_string()));
            return d;
        }
    };
    let rep = SmartReport::from_json(&out.json, out.exit);
    if cfg.raw {
        d.smartctl = Some(out.json.clone());
    }
    // smartctl exits 1 (bit 0) for "Unable to detect device type", 2 (bit 1) when the
    // open fails: both are sorted out by the message.
    if out.exit.command_line_error() || out.exit.open_failed() {
        open_failure(&mut d, &rep, cfg);
        d.smart = Some(rep);
        return d;
    }
    let (verdict, reasons) = evaluate(&rep);
    d.verdict = verdict;
    d.reasons = reasons;
    d.kind = Some(rep.kind());
    d.size_bytes = rep.capacity_bytes.or(d.size_bytes);
    if verdict == Verdict::Unavailable {
        d.smart = Some(rep);
        return d;
    }

    let uptime = sys.uptime_s();
    let sample = Sample {
        t: cfg.now_unix,
        smart_written: rep.written.as_ref().map(|w| w.bytes),
        sectors_written: sys.sectors_written(&disk.name),
        boot: uptime.map(|u| cfg.now_unix.saturating_sub(u as u64)),
        wear_used_percent: rep.wear.as_ref().map(|w| w.used_percent),
        power_on_hours: rep.power_on_hours,
    };
    let key = disk_key(sys, &disk.name, rep.serial.as_deref(), rep.model.as_deref());
    d.device_key = Some(key.clone());
    let mut state = state;
    if let Some(s) = state.as_deref_mut() {
        s.adopt(&key, state::legacy_key(rep.serial.as_deref()).as_deref());
    }
    let history: Vec<Sample> = state.as_ref().map(|s| s.history(&key).to_vec()).unwrap_or_default();
    if rep.is_ssd() == Some(true) || cfg.rated.is_some() {
        let mut notes = Vec::new();
        let rate = endurance::rate_from_history(&history, &sample)
            .or_else(|| endurance::rate_since_boot(sample.sectors_written?, uptime?))
            .or_else(|| endurance::rate_lifetime(sample.smart_written?, rep.power_on_hours?));
        let wear = endurance::wear_from_history(&history, &sample)
            .or_else(|| endurance::wear_lifetime(sample.wear_used_percent?, rep.power_on_hours?));
        let rated = match &cfg.rated {
            Some(r) => match r.resolve(rep.capacity_bytes) {
                Ok(x) => Some(x),
                Err(e) => {
                    notes.push(e);
                    None
                }
            },
            None => rep.model.as_deref().and_then(crate::known::rated_for),
        };
        if sample.smart_written.is_none() {
            notes.push("SMART reports no bytes-written counter for this disk".into());
        }
        d.endurance = Some(endurance::forecast(rated, sample.smart_written, rate, wear, notes));
    }
    if let Some(s) = state {
        s.record(&key, &disk.name, rep.model.as_deref(), sample);
    }
    d.smart = Some(rep);
    d
}

fn load_state(cfg: &HealthConfig, warnings: &mut Vec<String>) -> Option<StateFile> {
    let p = cfg.state_path.as_ref()?;
    match StateFile::load(p) {
        Ok(s) => Some(s),
        Err(e) => {
            warnings.push(e);
            None
        }
    }
}

fn new_doc(cfg: &HealthConfig) -> HealthDoc {
    HealthDoc {
        schema: SCHEMA.into(),
        tool: Tool { name: "diskmeter".into(), version: cfg.tool_version.clone() },
        time: cfg.time.clone(),
        smartctl_tool: SmartctlInfo { path: None, version: None },
        state_file: cfg.state_path.as_ref().map(|p| p.display().to_string()),
        disks: Vec::new(),
        self_test: None,
        warnings: Vec::new(),
        interrupted: false,
    }
}

fn finish(doc: &mut HealthDoc, cfg: &HealthConfig, cache: &SourceCache<'_>, state: Option<StateFile>) {
    doc.smartctl_tool =
        SmartctlInfo { path: cache.path.clone(), version: cache.version.map(|(a, b)| format!("{a}.{b}")) };
    if let (Some(s), Some(p)) = (state, &cfg.state_path) {
        if !s.disks.is_empty() {
            if let Err(e) = s.save(p) {
                doc.warnings.push(e);
            }
        }
    }
}

/// Resolve the disks this run is about.
pub fn disks_for(cfg: &HealthConfig, sys: &SysPaths) -> Result<Vec<Disk>, HealthError> {
    let disks = match &cfg.device {
        Some(d) => sys.resolve(d)?,
        None => sys.all_disks()?,
    };
    if cfg.rated.is_some() && disks.len() != 1 {
        let names: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
        return Err(HealthError::Usage(format!(
            "invalid value for --tbw/--dwpd: a rating describes one disk, but {} covers {} disks ({}); name one disk",
            cfg.device.as_deref().unwrap_or("a run without DEVICE"),
            disks.len(),
            names.join(", ")
        )));
    }
    Ok(disks)
}

/// `diskmeter health [DEVICE]`.
pub fn run(cfg: &HealthConfig, cache: &mut SourceCache<'_>, sys: &SysPaths) -> Result<HealthDoc, HealthError> {
    let disks = disks_for(cfg, sys)?;
    let mut doc = new_doc(cfg);
    let mut st = load_state(cfg, &mut doc.warnings);
    for disk in &disks {
        let r = check_disk(disk, cfg, cache, sys, st.as_mut());
        doc.disks.push(r);
    }
    finish(&mut doc, cfg, cache, st);
    Ok(doc)
}

/// How `--self-test … [--wait]` waits.
pub struct WaitPlan<'w> {
    pub poll: Duration,
    /// Raised by Ctrl-C: stops the wait (the test keeps running). Cleared again once it
    /// has ended the wait, so the final reading of the disk runs; when it is the same flag
    /// as the smartctl runner's, a second Ctrl-C stops that reading.
    pub stop: &'w AtomicBool,
    pub observer: &'w mut dyn WaitObserver,
}

/// `diskmeter health DEVICE --self-test KIND [--wait]`: start, optionally wait, then
/// report the disk.
pub fn run_self_test(
    cfg: &HealthConfig,
    kind: SelfTestKind,
    wait: Option<WaitPlan<'_>>,
    cache: &mut SourceCache<'_>,
    sys: &SysPaths,
) -> Result<HealthDoc, HealthError> {
    if cfg.device.is_none() {
        return Err(HealthError::Usage("--self-test needs a DEVICE: name the disk to test".into()));
    }
    let disks = disks_for(cfg, sys)?;
    let [disk] = disks.as_slice() else {
        let names: Vec<&str> = disks.iter().map(|d| d.name.as_str()).collect();
        return Err(HealthError::Usage(format!(
            "invalid value for --self-test: {} covers {} disks ({}); run a self-test on one disk at a time",
            cfg.device.as_deref().unwrap_or_default(),
            disks.len(),
            names.join(", ")
        )));
    };
    if let (Some(kind), None) = (&disk.virtual_kind, &cfg.device_type) {
        return Err(HealthError::Usage(format!(
            "invalid value for --self-test: {} is a virtual device ({kind}) without SMART; self-tests run on \
             the host's physical disks",
            disk.path.display()
        )));
    }
    let src = cache.get().map_err(HealthError::Smartctl)?;
    let dtype = cfg.device_type.as_deref();
    let mut run = selftest::start(src, disk, dtype, kind)?;
    let mut interrupted = false;
    if let (Some(w), true) = (wait, kind != SelfTestKind::Abort) {
        run.waited = true;
        let finished = selftest::wait(src, disk, dtype, w.poll, w.stop, w.observer)?;
        run.finished = Some(finished);
        interrupted = !finished;
        if !finished {
            // That Ctrl-C is spent on the wait: clear it so the disk is still read for the
            // report below (a second one stops that smartctl too).
            w.stop.store(false, Ordering::SeqCst);
            run.message = format!(
                "stopped waiting; the {} self-test keeps running on {} (see its progress with diskmeter health {}, \
                 abort it with --self-test abort)",
                kind.name(),
                disk.path.display(),
                disk.path.display()
            );
        }
    }
    let mut doc = new_doc(cfg);
    let mut st = load_state(cfg, &mut doc.warnings);
    let r = check_disk(disk, cfg, cache, sys, st.as_mut());
    if run.finished == Some(true) {
        run.result = r.smart.as_ref().and_then(|s| s.self_test_log.as_ref()).and_then(|l| l.latest.clone());
    }
    doc.disks.push(r);
    doc.self_test = Some(run);
    doc.interrupted = interrupted;
    finish(&mut doc, cfg, cache, st);
    Ok(doc)
}
