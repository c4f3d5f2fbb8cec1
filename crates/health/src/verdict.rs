//! The overall verdict of one disk and the reasons for it.
//!
//! Failing means "replace it / back up now": smartctl's own FAILED status or bits 3–4,
//! sectors that can no longer be read (pending, offline uncorrectable), a failed latest
//! self-test, NVMe critical warnings about spare, reliability or read-only media.
//! Warning means "watch it": reallocated sectors, cable CRC errors, media errors, wear
//! ≥ 90 %, older failed self-tests. Error-log entries alone are information (many
//! healthy NVMe drives log thousands of harmless entries).

use crate::model::{critical_warning_flags, SmartReport, CRITICAL_WARNING_BITS};
use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Healthy,
    /// No SMART: a virtual disk, a device without SMART, a type smartctl cannot detect.
    Unavailable,
    Warning,
    /// SMART could not be read (permission, smartctl missing or failing).
    Error,
    Failing,
}

impl Verdict {
    pub fn label(self) -> &'static str {
        match self {
            Verdict::Healthy => "HEALTHY",
            Verdict::Unavailable => "SMART unavailable",
            Verdict::Warning => "WARNING",
            Verdict::Error => "ERROR",
            Verdict::Failing => "FAILING",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
    Failing,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Reason {
    pub level: Level,
    pub code: String,
    pub message: String,
}

fn push(v: &mut Vec<Reason>, level: Level, code: &str, message: String) {
    v.push(Reason { level, code: code.into(), message });
}

fn plural(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// Judge one SMART report.
pub fn evaluate(r: &SmartReport) -> (Verdict, Vec<Reason>) {
    let mut v = Vec::new();
    if r.smart_available == Some(false) {
        push(&mut v, Level::Info, "no_smart", "the device does not support SMART".into());
        return (Verdict::Unavailable, v);
    }
    if r.smart_enabled == Some(false) {
        push(
            &mut v,
            Level::Warning,
            "smart_disabled",
            "SMART is disabled on the device (enable it: smartctl -s on)".into(),
        );
    }
    if r.smart_passed == Some(false) {
        push(&mut v, Level::Failing, "smart_status_failed", "SMART overall-health self-assessment: FAILED".into());
    } else if r.exit.disk_failing() {
        push(&mut v, Level::Failing, "disk_failing", "smartctl reports DISK FAILING (exit status bit 3)".into());
    }
    let names = |now: bool| -> String {
        r.attributes
            .iter()
            .filter(|a| if now { a.when_failed == "now" } else { a.when_failed == "past" })
            .map(|a| format!("{} ({} ≤ {})", a.name, a.value.unwrap_or(0), a.thresh.unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if r.exit.prefail_now() || r.attributes.iter().any(|a| a.when_failed == "now" && a.prefailure) {
        let n = names(true);
        push(
            &mut v,
            Level::Failing,
            "prefail_attribute_at_threshold",
            if n.is_empty() {
                "a pre-failure attribute is at or below its threshold now".into()
            } else {
                format!("at or below threshold now: {n}")
            },
        );
    }
    if r.exit.threshold_in_past() || r.attributes.iter().any(|a| a.when_failed == "past") {
        let n = names(false);
        push(
            &mut v,
            Level::Warning,
            "attribute_at_threshold_in_past",
            if n.is_empty() {
                "an attribute was at or below its threshold in the past".into()
            } else {
                format!("at or below threshold in the past: {n}")
            },
        );
    }
    if let Some(n) = r.pending_sectors.filter(|n| *n > 0) {
        push(
            &mut v,
            Level::Failing,
            "pending_sectors",
            format!(
                "{} waiting for reallocation: data there cannot be read; back up now",
                plural(n, "pending sector", "pending sectors")
            ),
        );
    }
    if let Some(n) = r.offline_uncorrectable.filter(|n| *n > 0) {
        push(
            &mut v,
            Level::Failing,
            "offline_uncorrectable",
            format!("{} found by the offline scan", plural(n, "uncorrectable sector", "uncorrectable sectors")),
        );
    }
    if let Some(n) = r.reallocated_sectors.filter(|n| *n > 0) {
        push(
            &mut v,
            Level::Warning,
            "reallocated_sectors",
            format!(
                "{}: the disk has replaced failing sectors; watch whether the count grows",
                plural(n, "reallocated sector", "reallocated sectors")
            ),
        );
    }
    if let Some(n) = r.grown_defects.filter(|n| *n > 0) {
        push(
            &mut v,
            Level::Warning,
            "grown_defects",
            format!(
                "{} in the grown defect list: the disk has remapped bad blocks; watch whether it grows",
                plural(n, "block", "blocks")
            ),
        );
    }
    if let Some(n) = r.reported_uncorrect.filter(|n| *n > 0) {
        push(
            &mut v,
            Level::Warning,
            "reported_uncorrectable",
            format!("{} reported to the host", plural(n, "uncorrectable error", "uncorrectable errors")),
        );
    }
    if let Some(n) = r.crc_errors.filter(|n| *n > 0) {
        push(
            &mut v,
            Level::Warning,
            "crc_errors",
            format!(
                "{} on the link: check or replace the cable and connector (not the disk's media)",
                plural(n, "interface CRC error", "interface CRC errors")
            ),
        );
    }
    if let Some(w) = r.critical_warning.filter(|w| *w != 0) {
        for flag in critical_warning_flags(w) {
            let text = CRITICAL_WARNING_BITS
                .iter()
                .find(|(n, _)| *n == flag)
                .map(|(_, t)| *t)
                .unwrap_or("unknown critical warning bit");
            let level = if flag == "temperature" || flag == "unknown" { Level::Warning } else { Level::Failing };
            push(&mut v, level, &format!("critical_warning_{flag}"), format!("NVMe critical warning: {text}"));
        }
    }
    if let (Some(s), Some(t)) = (r.available_spare, r.available_spare_threshold) {
        if s < t && r.critical_warning.is_none_or(|w| w & 1 == 0) {
            push(
                &mut v,
                Level::Failing,
                "spare_below_threshold",
                format!("available spare {s} % is below its threshold {t} %"),
            );
        }
    }
    if let Some(n) = r.media_errors.filter(|n| *n > 0) {
        push(
            &mut v,
            Level::Warning,
            "media_errors",
            format!("{} (unrecovered data integrity errors)", plural(n, "media error", "media errors")),
        );
    }
    if let Some(w) = &r.wear {
        if w.used_percent >= 100.0 {
            push(
                &mut v,
                Level::Warning,
                "wear",
                format!("{} % of rated endurance used: past its rated life, keep backups current", w.used_percent),
            );
        } else if w.used_percent >= 90.0 {
            push(
                &mut v,
                Level::Warning,
                "wear",
                format!("{} % of rated endurance used: plan a replacement", w.used_percent),
            );
        }
    }
    if let Some(log) = &r.self_test_log {
        match &log.latest {
            Some(e) if e.passed == Some(false) => push(
                &mut v,
                Level::Failing,
                "self_test_failed",
                format!("the latest self-test failed: {} — {}", e.kind, e.status),
            ),
            _ if log.errors > 0 => push(
                &mut v,
                Level::Warning,
                "self_test_errors",
                format!("{} in the self-test log", plural(log.errors, "failed self-test", "failed self-tests")),
            ),
            _ => {}
        }
    } else if r.exit.self_test_errors() {
        push(&mut v, Level::Warning, "self_test_errors", "the self-test log contains errors".into());
    }
    if r.exit.smart_command_failed() {
        push(
            &mut v,
            Level::Warning,
            "smart_command_failed",
            "some SMART commands failed; figures may be incomplete".into(),
        );
    }
    if let Some(n) = r.error_log_count.filter(|n| *n > 0) {
        push(
            &mut v,
            Level::Info,
            "error_log",
            format!(
                "{} in the device error log (compare over time; old entries can be harmless)",
                plural(n, "entry", "entries")
            ),
        );
    }
    if let Some(now) = r.self_test_now.as_ref().filter(|n| n.in_progress) {
        let pct = now.done_percent.map(|p| format!(" ({p} % done)")).unwrap_or_default();
        push(&mut v, Level::Info, "self_test_running", format!("a self-test is running{pct}"));
    }
    // Most severe first; the order within a level is the order above.
    v.sort_by_key(|r| std::cmp::Reverse(r.level));
    let verdict = match v.iter().map(|x| x.level).max() {
        Some(Level::Failing) => Verdict::Failing,
        Some(Level::Warning) => Verdict::Warning,
        _ => Verdict::Healthy,
    };
    (verdict, v)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exit::ExitStatus;
    use crate::model::Wear;

    #[test]
    fn clean_report_is_healthy() {
        let r = SmartReport { smart_passed: Some(true), ..Default::default() };
        assert_eq!(evaluate(&r).0, Verdict::Healthy);
    }

    #[test]
    fn bit3_alone_is_failing() {
        let r = SmartReport { exit: ExitStatus(8), ..Default::default() };
        let (v, reasons) = evaluate(&r);
        assert_eq!(v, Verdict::Failing);
        assert_eq!(reasons[0].code, "disk_failing");
    }

    #[test]
    fn crc_is_a_cable_warning() {
        let r = SmartReport { smart_passed: Some(true), crc_errors: Some(12), ..Default::default() };
        let (v, reasons) = evaluate(&r);
        assert_eq!(v, Verdict::Warning);
        assert!(reasons[0].message.contains("cable"));
    }

    #[test]
    fn wear_thresholds() {
        let mk =
            |p: f64| SmartReport { wear: Some(Wear { used_percent: p, source: String::new() }), ..Default::default() };
        assert_eq!(evaluate(&mk(89.0)).0, Verdict::Healthy);
        assert_eq!(evaluate(&mk(90.0)).0, Verdict::Warning);
        assert_eq!(evaluate(&mk(120.0)).0, Verdict::Warning);
    }

    #[test]
    fn spare_below_threshold_without_warning_bit() {
        let r = SmartReport { available_spare: Some(5), available_spare_threshold: Some(10), ..Default::default() };
        assert_eq!(evaluate(&r).0, Verdict::Failing);
        let r = SmartReport {
            available_spare: Some(5),
            available_spare_threshold: Some(10),
            critical_warning: Some(1),
            ..Default::default()
        };
        let (_, reasons) = evaluate(&r);
        assert_eq!(reasons.len(), 1, "{reasons:?}");
    }

    #[test]
    fn temperature_warning_bit_is_a_warning() {
        let r = SmartReport { critical_warning: Some(2), ..Default::default() };
        assert_eq!(evaluate(&r).0, Verdict::Warning);
    }

    #[test]
    fn error_log_alone_is_information() {
        let r = SmartReport { error_log_count: Some(4804), ..Default::default() };
        assert_eq!(evaluate(&r).0, Verdict::Healthy);
    }
}
