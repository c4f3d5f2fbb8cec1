//! Self-tests: start one through smartctl (`-t short|long|conveyance`, `-X` to abort)
//! and follow its progress from `ata_smart_data.self_test.status` (ATA: "in progress,
//! 90% remaining") or the NVMe self-test log's current operation and completion
//! (smartctl ≥ 7.4; 7.3 has no NVMe self-tests).

use crate::model::{SelfTestEntry, SmartReport};
use crate::smartctl::{SelfTestKind, SmartSource};
use crate::topology::Disk;
use crate::HealthError;
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// What happened to the self-test this run asked for.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SelfTestRun {
    pub kind: String,
    pub device: String,
    pub message: String,
    /// smartctl's estimate, minutes (ATA polling time).
    pub expected_minutes: Option<u64>,
    pub waited: bool,
    /// With --wait: the test ended (false when waiting was interrupted).
    pub finished: Option<bool>,
    /// The newest self-test log entry after the wait.
    pub result: Option<SelfTestEntry>,
}

/// Progress display for `--wait`.
pub trait WaitObserver {
    fn progress(&mut self, done_percent: Option<u64>, status: &str);
    fn done(&mut self);
}

/// An observer that shows nothing.
pub struct Silent;

impl WaitObserver for Silent {
    fn progress(&mut self, _: Option<u64>, _: &str) {}
    fn done(&mut self) {}
}

fn expected(rep: &SmartReport, kind: SelfTestKind) -> Option<u64> {
    match kind {
        SelfTestKind::Short => rep.polling_minutes.short,
        SelfTestKind::Long => rep.polling_minutes.extended,
        SelfTestKind::Conveyance => rep.polling_minutes.conveyance,
        SelfTestKind::Abort => None,
    }
}

/// Start (or abort) a self-test on `disk`.
pub fn start(
    src: &dyn SmartSource,
    disk: &Disk,
    dev_type: Option<&str>,
    kind: SelfTestKind,
) -> Result<SelfTestRun, HealthError> {
    let before = src.query(&disk.path, dev_type)?;
    let rep = SmartReport::from_json(&before.json, before.exit);
    let out = src.self_test(&disk.path, dev_type, kind)?;
    let after = SmartReport::from_json(&out.json, out.exit);
    let dev = disk.path.display().to_string();
    if out.exit.command_line_error() || out.exit.open_failed() || out.exit.smart_command_failed() {
        let why = after.error_messages();
        return Err(HealthError::Runtime(format!(
            "smartctl could not {} on {dev}: {}",
            if kind == SelfTestKind::Abort {
                "abort the self-test".to_string()
            } else {
                format!("start a {} self-test", kind.name())
            },
            if why.is_empty() { format!("exit status {}", out.exit.0) } else { why }
        )));
    }
    let minutes = expected(&rep, kind);
    let message = match kind {
        SelfTestKind::Abort => format!("self-test on {dev} aborted"),
        k => format!(
            "{} self-test started on {dev}{}; the disk runs it by itself, diskmeter can exit",
            k.name(),
            minutes.map(|m| format!(" (smartctl expects about {m} min)")).unwrap_or_default()
        ),
    };
    Ok(SelfTestRun {
        kind: kind.name().into(),
        device: dev,
        message,
        expected_minutes: minutes,
        waited: false,
        finished: None,
        result: None,
    })
}

/// Poll until the running self-test ends or `stop` is set. Returns whether it ended.
pub fn wait(
    src: &dyn SmartSource,
    disk: &Disk,
    dev_type: Option<&str>,
    poll: Duration,
    stop: &AtomicBool,
    obs: &mut dyn WaitObserver,
) -> Result<bool, HealthError> {
    let step = Duration::from_millis(100).min(poll.max(Duration::from_millis(1)));
    loop {
        let mut slept = Duration::ZERO;
        while slept < poll {
            if stop.load(Ordering::SeqCst) {
                obs.done();
                return Ok(false);
            }
            std::thread::sleep(step);
            slept += step;
        }
        if stop.load(Ordering::SeqCst) {
            obs.done();
            return Ok(false);
        }
        let out = match src.query(&disk.path, dev_type) {
            Ok(o) => o,
            // A Ctrl-C that stopped this smartctl stops the wait, like one between polls.
            Err(_) if stop.load(Ordering::SeqCst) => {
                obs.done();
                return Ok(false);
            }
            Err(e) => return Err(e),
        };
        let rep = SmartReport::from_json(&out.json, out.exit);
        match rep.self_test_now {
            Some(n) if n.in_progress => obs.progress(n.done_percent, &n.status),
            _ => {
                obs.done();
                return Ok(true);
            }
        }
    }
}
