//! Human text (one card per disk, verdict first) and JSON (`diskmeter.health.v1`).

use crate::report::{DiskReport, HealthDoc};
use crate::units::{dec_bytes, one_decimal};
use crate::verdict::{Level, Verdict};
use std::fmt::Write;

/// Replace control characters so names from disks and paths cannot drive the terminal.
pub fn clean(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { '?' } else { c }).collect()
}

/// The document as pretty JSON (always valid JSON).
pub fn json(doc: &HealthDoc) -> String {
    serde_json::to_string_pretty(doc)
        .unwrap_or_else(|e| format!("{{\"schema\":\"diskmeter.health.v1\",\"error\":\"{e}\"}}"))
}

fn row(out: &mut String, label: &str, value: &str) {
    let _ = writeln!(out, "  {label:<12} {}", clean(value));
}

fn opt_count(v: Option<u64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "—".into())
}

fn card(out: &mut String, d: &DiskReport) {
    let title = match (&d.smart.as_ref().and_then(|s| s.model.clone()), &d.kind) {
        (Some(m), Some(k)) => {
            format!(" — {m} ({k}{})", d.size_bytes.map(|b| format!(", {}", dec_bytes(b as f64))).unwrap_or_default())
        }
        (Some(m), None) => format!(" — {m}"),
        _ => d.size_bytes.map(|b| format!(" — {}", dec_bytes(b as f64))).unwrap_or_default(),
    };
    let verdict = match (d.verdict, &d.virtual_kind) {
        (Verdict::Unavailable, Some(_)) => "SMART unavailable: virtual device".to_string(),
        (v, _) => v.label().to_string(),
    };
    let _ = writeln!(out, "{}: {verdict}{}", clean(&d.path), clean(&title));
    for r in &d.reasons {
        let tag = match r.level {
            Level::Failing if d.verdict == Verdict::Error => "[error]  ",
            Level::Failing => "[failing]",
            Level::Warning => "[warning]",
            Level::Info => "[info]   ",
        };
        let _ = writeln!(out, "  {tag} {}", clean(&r.message));
    }
    if !d.via.is_empty() {
        row(out, "via", &d.via.join(" → "));
    }
    let Some(s) = &d.smart else {
        return;
    };
    if d.verdict == Verdict::Unavailable || d.verdict == Verdict::Error {
        return;
    }
    let mut id = Vec::new();
    if let Some(x) = &s.serial {
        id.push(format!("serial {x}"));
    }
    if let Some(x) = &s.firmware {
        id.push(format!("firmware {x}"));
    }
    if let Some(x) = &s.device_type {
        id.push(format!("smartctl type {x}"));
    }
    if !id.is_empty() {
        row(out, "device", &id.join(" · "));
    }
    if let Some(t) = s.temperature_c {
        row(out, "temperature", &format!("{t} °C"));
    }
    if let Some(h) = s.power_on_hours {
        let cycles = s.power_cycles.map(|c| format!(" · {c} power cycles")).unwrap_or_default();
        row(out, "power-on", &format!("{h} h ({} years){cycles}", one_decimal(h as f64 / 24.0 / 365.0)));
    }
    if let Some(w) = &s.wear {
        row(out, "wear", &format!("{} % of rated endurance used ({})", one_decimal(w.used_percent), w.source));
    }
    if let (Some(a), Some(t)) = (s.available_spare, s.available_spare_threshold) {
        row(out, "spare", &format!("{a} % available (threshold {t} %)"));
    }
    if let Some(w) = &s.written {
        row(out, "written", &format!("{} ({})", dec_bytes(w.bytes as f64), w.source));
    }
    if let Some(w) = &s.read {
        row(out, "read", &format!("{} ({})", dec_bytes(w.bytes as f64), w.source));
    }
    if let Some(w) = &s.nand_written {
        row(out, "NAND writes", &format!("{} ({})", dec_bytes(w.bytes as f64), w.source));
    }
    if s.is_nvme() {
        let mut e = vec![format!("media errors {}", opt_count(s.media_errors))];
        if let Some(c) = s.critical_warning {
            e.push(format!("critical warning 0x{c:02x}"));
        }
        if let Some(u) = s.unsafe_shutdowns {
            e.push(format!("unsafe shutdowns {u}"));
        }
        row(out, "errors", &e.join(" · "));
    } else if s.grown_defects.is_some() {
        row(
            out,
            "defects",
            &format!(
                "grown defect list {} · uncorrected errors {}",
                opt_count(s.grown_defects),
                opt_count(s.reported_uncorrect)
            ),
        );
    } else if s.reallocated_sectors.is_some() || s.pending_sectors.is_some() || s.crc_errors.is_some() {
        row(
            out,
            "sectors",
            &format!(
                "reallocated {} · pending {} · offline uncorrectable {} · reported uncorrectable {} · CRC errors {}",
                opt_count(s.reallocated_sectors),
                opt_count(s.pending_sectors),
                opt_count(s.offline_uncorrectable),
                opt_count(s.reported_uncorrect),
                opt_count(s.crc_errors)
            ),
        );
    }
    if let Some(n) = s.error_log_count {
        row(out, "error log", &if n == 0 { "no errors logged".to_string() } else { format!("{n} errors logged") });
    }
    if let Some(l) = &s.self_test_log {
        let latest = l
            .latest
            .as_ref()
            .map(|e| {
                format!(
                    "; latest: {} — {}{}",
                    e.kind,
                    e.status,
                    e.power_on_hours.map(|h| format!(" at {h} h")).unwrap_or_default()
                )
            })
            .unwrap_or_default();
        row(out, "self-tests", &format!("{} logged, {} failed{latest}", l.count, l.errors));
    }
    if let Some(now) = s.self_test_now.as_ref().filter(|n| n.in_progress) {
        row(
            out,
            "self-test",
            &format!(
                "running: {}{}",
                now.status,
                now.done_percent.map(|p| format!(" ({p} % done)")).unwrap_or_default()
            ),
        );
    }
    if let Some(f) = &d.endurance {
        let mut lines = Vec::new();
        if let Some(r) = &f.rated {
            lines.push(format!("rated {} ({})", dec_bytes(r.bytes as f64), r.source));
        }
        if let Some(a) = &f.arithmetic {
            lines.push(a.clone());
        }
        if let Some(r) = &f.rate {
            lines.push(format!("write rate {}/day: {}", dec_bytes(r.bytes_per_day), r.note));
        }
        if let Some(w) = &f.wear {
            lines.push(format!("wear slope: {}", w.arithmetic));
        }
        for n in &f.notes {
            lines.push(format!("note: {n}"));
        }
        for (i, l) in lines.iter().enumerate() {
            row(out, if i == 0 { "endurance" } else { "" }, l);
        }
    }
}

/// Human text: the self-test line (if any), one card per disk, a blank line between.
pub fn human(doc: &HealthDoc) -> String {
    let mut out = String::new();
    if let Some(t) = &doc.self_test {
        let _ = writeln!(out, "self-test: {}", clean(&t.message));
        if let Some(r) = &t.result {
            let _ = writeln!(out, "self-test result: {} — {}", clean(&r.kind), clean(&r.status));
        }
        out.push('\n');
    }
    if doc.disks.is_empty() {
        out.push_str("no disks found\n");
    }
    for (i, d) in doc.disks.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        card(&mut out, d);
    }
    out
}
