//! smartctl's JSON → a typed report. Every key may be missing (old smartctl, USB
//! bridges, SCSI disks, failed reads): missing means `None`, never a parse error.
//!
//! ATA attributes are found by *name*, never by ID: vendors reuse IDs with different
//! meanings and units, and smartctl's drive database names them per model
//! (`Total_LBAs_Written` vs `Host_Writes_32MiB` for ID 241).

use crate::exit::ExitStatus;
use serde::Serialize;
use serde_json::Value;

/// Bytes per NVMe "data unit": 1000 × 512-byte units (NVMe base spec, SMART / Health log).
pub const NVME_DATA_UNIT: u64 = 512_000;

/// One row of the ATA SMART attribute table.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct Attribute {
    pub id: u64,
    pub name: String,
    pub value: Option<u64>,
    pub worst: Option<u64>,
    pub thresh: Option<u64>,
    pub when_failed: String,
    pub prefailure: bool,
    pub raw_value: Option<u64>,
    pub raw_string: String,
}

impl Attribute {
    /// The count in the raw field: the leading number of the raw string ("1975",
    /// "14551h+23m", "25 (Min/Max 19/39)"), else the raw value.
    pub fn raw_count(&self) -> Option<u64> {
        let digits: String = self.raw_string.trim().chars().take_while(char::is_ascii_digit).collect();
        digits.parse().ok().or(self.raw_value)
    }
}

/// A byte count and where it came from, shown next to the figure.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Sourced {
    pub bytes: u64,
    pub source: String,
}

/// Percentage of rated endurance used and its source.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Wear {
    pub used_percent: f64,
    pub source: String,
}

/// The latest entry of a self-test log.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SelfTestEntry {
    pub kind: String,
    pub status: String,
    pub passed: Option<bool>,
    pub power_on_hours: Option<u64>,
}

/// Self-test log summary.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SelfTestLog {
    pub count: u64,
    pub errors: u64,
    pub latest: Option<SelfTestEntry>,
}

/// A self-test running now.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct SelfTestNow {
    pub in_progress: bool,
    /// Percent of the test done (ATA reports "remaining" in steps of 10 %).
    pub done_percent: Option<u64>,
    pub status: String,
}

/// smartctl's advice on how long a test takes, in minutes (ATA only).
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct PollingMinutes {
    pub short: Option<u64>,
    pub extended: Option<u64>,
    pub conveyance: Option<u64>,
}

/// One of smartctl's messages.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Message {
    pub severity: String,
    pub string: String,
}

/// Everything diskmeter reads from one `smartctl -j -a` document.
#[derive(Debug, Clone, Serialize, PartialEq, Default)]
pub struct SmartReport {
    pub device_name: Option<String>,
    pub device_type: Option<String>,
    /// "ATA", "NVMe", "SCSI" as smartctl says.
    pub protocol: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub firmware: Option<String>,
    pub capacity_bytes: Option<u64>,
    pub logical_block_size: u64,
    pub rotation_rate: Option<u64>,
    pub smart_available: Option<bool>,
    pub smart_enabled: Option<bool>,
    pub smart_passed: Option<bool>,
    pub temperature_c: Option<i64>,
    pub power_on_hours: Option<u64>,
    pub power_cycles: Option<u64>,
    pub reallocated_sectors: Option<u64>,
    pub pending_sectors: Option<u64>,
    pub offline_uncorrectable: Option<u64>,
    pub crc_errors: Option<u64>,
    pub reported_uncorrect: Option<u64>,
    /// SCSI/SAS: blocks in the grown defect list (the analogue of reallocated sectors).
    pub grown_defects: Option<u64>,
    pub wear: Option<Wear>,
    pub available_spare: Option<u64>,
    pub available_spare_threshold: Option<u64>,
    pub media_errors: Option<u64>,
    pub critical_warning: Option<u8>,
    pub unsafe_shutdowns: Option<u64>,
    pub written: Option<Sourced>,
    pub read: Option<Sourced>,
    pub nand_written: Option<Sourced>,
    pub error_log_count: Option<u64>,
    pub self_test_log: Option<SelfTestLog>,
    pub self_test_now: Option<SelfTestNow>,
    pub polling_minutes: PollingMinutes,
    /// Attributes whose normalized value is at or below threshold, or that failed before.
    #[serde(rename = "flagged_attributes")]
    pub attributes: Vec<Attribute>,
    #[serde(rename = "exit_status")]
    pub exit: ExitStatus,
    pub messages: Vec<Message>,
    pub smartctl_version: Option<(u32, u32)>,
}

fn u64_at(v: &Value, ptr: &str) -> Option<u64> {
    let x = v.pointer(ptr)?;
    x.as_u64().or_else(|| x.as_f64().filter(|f| *f >= 0.0 && f.is_finite()).map(|f| f as u64))
}

fn str_at(v: &Value, ptr: &str) -> Option<String> {
    v.pointer(ptr).and_then(Value::as_str).map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

fn bool_at(v: &Value, ptr: &str) -> Option<bool> {
    v.pointer(ptr).and_then(Value::as_bool)
}

fn attributes(v: &Value) -> Vec<Attribute> {
    let Some(table) = v.pointer("/ata_smart_attributes/table").and_then(Value::as_array) else {
        return Vec::new();
    };
    table
        .iter()
        .filter_map(|a| {
            Some(Attribute {
                id: a.get("id")?.as_u64()?,
                name: a.get("name").and_then(Value::as_str).unwrap_or("Unknown_Attribute").to_string(),
                value: u64_at(a, "/value"),
                worst: u64_at(a, "/worst"),
                thresh: u64_at(a, "/thresh"),
                when_failed: a.get("when_failed").and_then(Value::as_str).unwrap_or("").to_string(),
                prefailure: bool_at(a, "/flags/prefailure").unwrap_or(false),
                raw_value: u64_at(a, "/raw/value"),
                raw_string: a.pointer("/raw/string").and_then(Value::as_str).unwrap_or("").to_string(),
            })
        })
        .collect()
}

fn find<'a>(attrs: &'a [Attribute], names: &[&str]) -> Option<&'a Attribute> {
    names.iter().find_map(|n| attrs.iter().find(|a| a.name.eq_ignore_ascii_case(n)))
}

fn count(attrs: &[Attribute], names: &[&str]) -> Option<u64> {
    find(attrs, names).and_then(Attribute::raw_count)
}

/// Bytes per raw unit from an attribute name's unit suffix (`Host_Writes_32MiB` →
/// 32 MiB, `Lifetime_Writes_GiB` → 1 GiB); `None` when the name has no unit.
fn unit_suffix(name: &str) -> Option<u64> {
    let last = name.rsplit('_').next()?;
    let (num, unit) = last.split_at(last.find(|c: char| !c.is_ascii_digit()).unwrap_or(last.len()));
    let n: u64 = if num.is_empty() { 1 } else { num.parse().ok()? };
    let m: u64 = match unit {
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        _ => return None,
    };
    n.checked_mul(m)
}

/// Bytes written/read from the ATA attribute table, by name and unit.
fn ata_bytes(attrs: &[Attribute], lbs: u64, lba_names: &[&str], prefixes: &[&str]) -> Option<Sourced> {
    if let Some(a) = find(attrs, lba_names) {
        let raw = a.raw_value?;
        return Some(Sourced { bytes: raw.saturating_mul(lbs), source: format!("{} {raw} × {lbs} B", a.name) });
    }
    attrs.iter().find_map(|a| {
        if !prefixes.iter().any(|p| a.name.starts_with(p)) {
            return None;
        }
        let unit = unit_suffix(&a.name)?;
        let raw = a.raw_value?;
        Some(Sourced { bytes: raw.saturating_mul(unit), source: format!("{} {raw} × {}", a.name, unit_text(unit)) })
    })
}

fn unit_text(unit: u64) -> String {
    if unit.is_multiple_of(1 << 30) {
        format!("{} GiB", unit >> 30)
    } else {
        format!("{} MiB", unit >> 20)
    }
}

/// A value from the ATA Device Statistics log (`smartctl -x` / `-l devstat`).
fn devstat(v: &Value, name: &str) -> Option<u64> {
    let pages = v.pointer("/ata_device_statistics/pages")?.as_array()?;
    pages.iter().filter_map(|p| p.get("table")?.as_array()).flatten().find_map(|e| {
        if e.get("name")?.as_str()? == name && bool_at(e, "/flags/valid").unwrap_or(true) {
            e.get("value")?.as_u64()
        } else {
            None
        }
    })
}

/// Remaining-life attributes whose normalized value starts at 100 and counts down.
const LIFE_LEFT: [&str; 7] = [
    "Wear_Leveling_Count",
    "Media_Wearout_Indicator",
    "SSD_Life_Left",
    "Percent_Lifetime_Remain",
    "Percent_Life_Remaining",
    "Remaining_Lifetime_Perc",
    "Wearout_Indicator",
];

fn ata_wear(v: &Value, attrs: &[Attribute]) -> Option<Wear> {
    if let Some(p) = devstat(v, "Percentage Used Endurance Indicator") {
        return Some(Wear {
            used_percent: p as f64,
            source: "Device Statistics: Percentage Used Endurance Indicator".into(),
        });
    }
    let a = find(attrs, &LIFE_LEFT)?;
    let value = a.value.filter(|x| *x <= 100)?;
    Some(Wear { used_percent: (100 - value) as f64, source: format!("{} normalized {value} of 100", a.name) })
}

fn ata_self_test_log(v: &Value) -> Option<SelfTestLog> {
    let log =
        v.pointer("/ata_smart_self_test_log/extended").or_else(|| v.pointer("/ata_smart_self_test_log/standard"))?;
    let latest = log.pointer("/table/0").map(|e| SelfTestEntry {
        kind: str_at(e, "/type/string").unwrap_or_else(|| "unknown".into()),
        status: str_at(e, "/status/string").unwrap_or_else(|| "unknown".into()),
        passed: bool_at(e, "/status/passed"),
        power_on_hours: u64_at(e, "/lifetime_hours"),
    });
    Some(SelfTestLog {
        count: u64_at(log, "/count").unwrap_or(0),
        errors: u64_at(log, "/error_count_total").unwrap_or(0),
        latest,
    })
}

fn nvme_self_test_log(v: &Value) -> Option<SelfTestLog> {
    let log = v.get("nvme_self_test_log")?;
    let table: Vec<&Value> = log.get("table").and_then(Value::as_array).map(|t| t.iter().collect()).unwrap_or_default();
    // Results 5, 6, 7 are failures; 1–4, 8, 9 are aborts (NVMe base spec, Device Self-test log).
    let failed = |e: &Value| matches!(u64_at(e, "/self_test_result/value"), Some(5..=7));
    let latest = table.iter().find(|e| !e.is_null()).map(|e| SelfTestEntry {
        kind: str_at(e, "/self_test_code/string").unwrap_or_else(|| "unknown".into()),
        status: str_at(e, "/self_test_result/string").unwrap_or_else(|| "unknown".into()),
        // Aborted tests neither passed nor failed.
        passed: match u64_at(e, "/self_test_result/value") {
            Some(0) => Some(true),
            Some(5..=7) => Some(false),
            _ => None,
        },
        power_on_hours: u64_at(e, "/power_on_hours"),
    });
    Some(SelfTestLog {
        count: table.iter().filter(|e| !e.is_null()).count() as u64,
        errors: table.iter().filter(|e| failed(e)).count() as u64,
        latest,
    })
}

fn self_test_now(v: &Value) -> Option<SelfTestNow> {
    if let Some(op) = u64_at(v, "/nvme_self_test_log/current_self_test_operation/value") {
        return Some(SelfTestNow {
            in_progress: op != 0,
            done_percent: u64_at(v, "/nvme_self_test_log/current_self_test_completion_percent"),
            status: str_at(v, "/nvme_self_test_log/current_self_test_operation/string").unwrap_or_default(),
        });
    }
    let status = v.pointer("/ata_smart_data/self_test/status")?;
    let value = u64_at(status, "/value")?;
    let in_progress = value >> 4 == 0xf;
    Some(SelfTestNow {
        in_progress,
        done_percent: in_progress.then(|| 100u64.saturating_sub((value & 0xf) * 10)),
        status: str_at(status, "/string").unwrap_or_default(),
    })
}

/// SCSI: uncorrected errors of the read, write and verify counter logs, summed.
fn scsi_uncorrected(v: &Value) -> Option<u64> {
    let log = v.get("scsi_error_counter_log")?;
    let parts: Vec<u64> = ["read", "write", "verify"]
        .iter()
        .filter_map(|k| u64_at(log, &format!("/{k}/total_uncorrected_errors")))
        .collect();
    (!parts.is_empty()).then(|| parts.iter().sum())
}

/// SCSI: bytes processed by writes (the counter log's decimal gigabytes).
fn scsi_written(v: &Value) -> Option<Sourced> {
    let gb = v.pointer("/scsi_error_counter_log/write/gigabytes_processed")?;
    let gb_f = gb.as_f64().or_else(|| gb.as_str()?.trim().parse().ok()).filter(|g: &f64| g.is_finite() && *g >= 0.0)?;
    Some(Sourced {
        bytes: (gb_f * 1e9).round() as u64,
        source: format!("SCSI error counter log: {gb_f:.3} GB processed by writes"),
    })
}

impl SmartReport {
    /// Read a `smartctl -j -a` document. `exit` is the process's exit status.
    pub fn from_json(v: &Value, exit: ExitStatus) -> Self {
        let attrs = attributes(v);
        let lbs = u64_at(v, "/logical_block_size").filter(|b| *b >= 512).unwrap_or(512);
        let nvme = v.get("nvme_smart_health_information_log");
        let nv = |k: &str| nvme.and_then(|n| u64_at(n, &format!("/{k}")));
        let version = v
            .pointer("/smartctl/version")
            .and_then(Value::as_array)
            .and_then(|a| Some((u32::try_from(a.first()?.as_u64()?).ok()?, u32::try_from(a.get(1)?.as_u64()?).ok()?)));

        let temperature_c = v
            .pointer("/temperature/current")
            .and_then(Value::as_i64)
            .or_else(|| nvme.and_then(|n| n.get("temperature")).and_then(Value::as_i64))
            .or_else(|| count(&attrs, &["Temperature_Celsius", "Airflow_Temperature_Cel"]).map(|t| t as i64));
        let power_on_hours = u64_at(v, "/power_on_time/hours")
            .or_else(|| nv("power_on_hours"))
            .or_else(|| count(&attrs, &["Power_On_Hours"]));

        let written = match nv("data_units_written") {
            Some(units) => Some(Sourced {
                bytes: units.saturating_mul(NVME_DATA_UNIT),
                source: format!("NVMe data units written {units} × 512000 B"),
            }),
            None => ata_bytes(
                &attrs,
                lbs,
                &["Total_LBAs_Written"],
                &["Host_Writes_", "Lifetime_Writes_", "Total_Writes_", "Total_Host_Writes_"],
            )
            .or_else(|| {
                devstat(v, "Logical Sectors Written").map(|s| Sourced {
                    bytes: s.saturating_mul(lbs),
                    source: format!("Device Statistics: Logical Sectors Written {s} × {lbs} B"),
                })
            })
            .or_else(|| scsi_written(v)),
        };
        let read = match nv("data_units_read") {
            Some(units) => Some(Sourced {
                bytes: units.saturating_mul(NVME_DATA_UNIT),
                source: format!("NVMe data units read {units} × 512000 B"),
            }),
            None => ata_bytes(&attrs, lbs, &["Total_LBAs_Read"], &["Host_Reads_", "Lifetime_Reads_", "Total_Reads_"]),
        };
        let nand_written = ata_bytes(&attrs, lbs, &[], &["NAND_Writes_", "Total_NAND_Writes_", "NAND_Writes"]);

        let wear = match nv("percentage_used") {
            Some(p) => Some(Wear { used_percent: p as f64, source: "NVMe percentage used".into() }),
            None => ata_wear(v, &attrs),
        };

        let error_log_count = nv("num_err_log_entries").or_else(|| {
            u64_at(v, "/ata_smart_error_log/extended/count").or_else(|| u64_at(v, "/ata_smart_error_log/summary/count"))
        });

        let self_test_log = nvme_self_test_log(v).or_else(|| ata_self_test_log(v));

        let flagged: Vec<Attribute> = attrs
            .iter()
            .filter(|a| {
                !a.when_failed.is_empty() || matches!((a.value, a.thresh), (Some(val), Some(th)) if th > 0 && val <= th)
            })
            .cloned()
            .collect();

        let messages = v
            .pointer("/smartctl/messages")
            .and_then(Value::as_array)
            .map(|m| {
                m.iter()
                    .filter_map(|x| {
                        Some(Message {
                            severity: x.get("severity").and_then(Value::as_str).unwrap_or("information").to_string(),
                            string: x.get("string")?.as_str()?.to_string(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default();

        SmartReport {
            device_name: str_at(v, "/device/name"),
            device_type: str_at(v, "/device/type"),
            protocol: str_at(v, "/device/protocol"),
            model: str_at(v, "/model_name").or_else(|| str_at(v, "/scsi_model_name")),
            serial: str_at(v, "/serial_number"),
            firmware: str_at(v, "/firmware_version"),
            capacity_bytes: u64_at(v, "/user_capacity/bytes"),
            logical_block_size: lbs,
            rotation_rate: u64_at(v, "/rotation_rate"),
            smart_available: bool_at(v, "/smart_support/available"),
            smart_enabled: bool_at(v, "/smart_support/enabled"),
            smart_passed: bool_at(v, "/smart_status/passed"),
            temperature_c,
            power_on_hours,
            power_cycles: u64_at(v, "/power_cycle_count").or_else(|| nv("power_cycles")),
            reallocated_sectors: count(&attrs, &["Reallocated_Sector_Ct"]),
            pending_sectors: count(&attrs, &["Current_Pending_Sector", "Total_Pending_Sectors"]),
            offline_uncorrectable: count(&attrs, &["Offline_Uncorrectable", "Total_Offl_Uncorrectabl"]),
            crc_errors: count(&attrs, &["UDMA_CRC_Error_Count", "CRC_Error_Count"]),
            reported_uncorrect: count(&attrs, &["Reported_Uncorrect", "Uncorrectable_Error_Cnt"])
                .or_else(|| scsi_uncorrected(v)),
            grown_defects: u64_at(v, "/scsi_grown_defect_list"),
            wear,
            available_spare: nv("available_spare"),
            available_spare_threshold: nv("available_spare_threshold"),
            media_errors: nv("media_errors"),
            critical_warning: nv("critical_warning").and_then(|c| u8::try_from(c).ok()),
            unsafe_shutdowns: nv("unsafe_shutdowns"),
            written,
            read,
            nand_written,
            error_log_count,
            self_test_log,
            self_test_now: self_test_now(v),
            polling_minutes: PollingMinutes {
                short: u64_at(v, "/ata_smart_data/self_test/polling_minutes/short"),
                extended: u64_at(v, "/ata_smart_data/self_test/polling_minutes/extended"),
                conveyance: u64_at(v, "/ata_smart_data/self_test/polling_minutes/conveyance"),
            },
            attributes: flagged,
            exit,
            messages,
            smartctl_version: version,
        }
    }

    pub fn is_nvme(&self) -> bool {
        self.protocol.as_deref().is_some_and(|p| p.eq_ignore_ascii_case("nvme"))
    }

    /// SSD or HDD when smartctl knows: NVMe, or an ATA rotation rate of 0 ("Solid State Device").
    pub fn is_ssd(&self) -> Option<bool> {
        if self.is_nvme() {
            return Some(true);
        }
        self.rotation_rate.map(|r| r == 0)
    }

    /// "SATA SSD", "NVMe SSD", "HDD 7200 rpm", "SCSI disk".
    pub fn kind(&self) -> String {
        match (self.protocol.as_deref(), self.rotation_rate) {
            (Some(p), _) if p.eq_ignore_ascii_case("nvme") => "NVMe SSD".into(),
            (Some("ATA"), Some(0)) => "SATA SSD".into(),
            (_, Some(r)) if r > 0 => format!("HDD {r} rpm"),
            (_, Some(0)) => "SSD".into(),
            (Some(p), _) => format!("{p} disk"),
            _ => "disk".into(),
        }
    }

    /// The messages smartctl marked as errors, joined.
    pub fn error_messages(&self) -> String {
        self.messages.iter().filter(|m| m.severity == "error").map(|m| m.string.as_str()).collect::<Vec<_>>().join("; ")
    }
}

/// NVMe critical warning bits (NVMe base spec, SMART / Health log byte 0).
pub const CRITICAL_WARNING_BITS: [(&str, &str); 6] = [
    ("spare_below_threshold", "available spare has fallen below its threshold"),
    ("temperature", "temperature is above or below a threshold"),
    ("reliability_degraded", "NVM subsystem reliability is degraded (media or internal errors)"),
    ("media_read_only", "media has been placed in read-only mode"),
    ("volatile_memory_backup_failed", "volatile memory backup device has failed"),
    ("persistent_memory_region_unreliable", "persistent memory region is read-only or unreliable"),
];

/// Names of the critical-warning bits set in `w`.
pub fn critical_warning_flags(w: u8) -> Vec<&'static str> {
    let mut v: Vec<&str> = (0..6).filter(|b| w & (1 << b) != 0).map(|b| CRITICAL_WARNING_BITS[b].0).collect();
    if w & 0xc0 != 0 {
        v.push("unknown");
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    #[test]
    fn unit_suffixes() {
        assert_eq!(unit_suffix("Host_Writes_32MiB"), Some(32 << 20));
        assert_eq!(unit_suffix("Lifetime_Writes_GiB"), Some(1 << 30));
        assert_eq!(unit_suffix("NAND_Writes_1GiB"), Some(1 << 30));
        assert_eq!(unit_suffix("Total_LBAs_Written"), None);
        assert_eq!(unit_suffix("Host_Writes_GB"), None);
    }

    #[test]
    fn raw_count_leading_number() {
        let a = Attribute { raw_string: "14551h+23m+11.230s".into(), raw_value: Some(99), ..Default::default() };
        assert_eq!(a.raw_count(), Some(14551));
        let b = Attribute { raw_string: "".into(), raw_value: Some(7), ..Default::default() };
        assert_eq!(b.raw_count(), Some(7));
    }

    #[test]
    fn empty_document_is_all_none() {
        let r = SmartReport::from_json(&json!({}), ExitStatus(0));
        assert_eq!(r.temperature_c, None);
        assert_eq!(r.written, None);
        assert_eq!(r.logical_block_size, 512);
        assert!(r.attributes.is_empty());
    }

    #[test]
    fn total_lbas_uses_logical_block_size() {
        let v = json!({
            "logical_block_size": 4096,
            "ata_smart_attributes": {"table": [
                {"id": 241, "name": "Total_LBAs_Written", "value": 99, "worst": 99, "thresh": 0,
                 "raw": {"value": 1000, "string": "1000"}}
            ]}
        });
        let r = SmartReport::from_json(&v, ExitStatus(0));
        assert_eq!(r.written.as_ref().map(|w| w.bytes), Some(4_096_000));
    }

    #[test]
    fn host_writes_32mib() {
        let v = json!({"ata_smart_attributes": {"table": [
            {"id": 241, "name": "Host_Writes_32MiB", "value": 100, "raw": {"value": 10, "string": "10"}}
        ]}});
        let r = SmartReport::from_json(&v, ExitStatus(0));
        assert_eq!(r.written.map(|w| w.bytes), Some(10 * 32 * 1024 * 1024));
    }

    #[test]
    fn nvme_self_test_log_of_smartctl_7_4() {
        // The shape smartctl >= 7.4 prints (nvmeprint.cpp, print_self_test_log).
        let v = json!({
            "device": {"protocol": "NVMe"},
            "nvme_self_test_log": {
                "nsid": -1,
                "current_self_test_operation": {"value": 1, "string": "Short self-test in progress"},
                "current_self_test_completion_percent": 40,
                "table": [
                    {"self_test_code": {"value": 2, "string": "Extended"},
                     "self_test_result": {"value": 7, "string": "Completed: failed segments"},
                     "power_on_hours": 100, "segment": 2},
                    {"self_test_code": {"value": 1, "string": "Short"},
                     "self_test_result": {"value": 1, "string": "Aborted: Self-test command"},
                     "power_on_hours": 90},
                    {"self_test_code": {"value": 1, "string": "Short"},
                     "self_test_result": {"value": 0, "string": "Completed without error"},
                     "power_on_hours": 80}
                ]
            }
        });
        let r = SmartReport::from_json(&v, ExitStatus(0));
        let now = r.self_test_now.unwrap();
        assert!(now.in_progress);
        assert_eq!(now.done_percent, Some(40));
        let log = r.self_test_log.unwrap();
        assert_eq!((log.count, log.errors), (3, 1));
        let latest = log.latest.unwrap();
        assert_eq!(latest.passed, Some(false));
        assert_eq!(latest.kind, "Extended");
    }

    #[test]
    fn ata_self_test_in_progress() {
        let v = json!({"ata_smart_data": {"self_test": {"status": {"value": 249, "string": "in progress, 90% remaining", "remaining_percent": 90}}}});
        let now = SmartReport::from_json(&v, ExitStatus(0)).self_test_now.unwrap();
        assert!(now.in_progress);
        assert_eq!(now.done_percent, Some(10));
    }

    #[test]
    fn scsi_counters() {
        let v = json!({
            "device": {"protocol": "SCSI"},
            "rotation_rate": 7200,
            "scsi_grown_defect_list": 56,
            "scsi_error_counter_log": {
                "read": {"gigabytes_processed": "176987.332", "total_uncorrected_errors": 1},
                "write": {"gigabytes_processed": "86472.611", "total_uncorrected_errors": 2}
            }
        });
        let r = SmartReport::from_json(&v, ExitStatus(0));
        assert_eq!(r.grown_defects, Some(56));
        assert_eq!(r.reported_uncorrect, Some(3));
        assert_eq!(r.written.as_ref().map(|w| w.bytes), Some(86_472_611_000_000));
        assert_eq!(r.kind(), "HDD 7200 rpm");
    }

    #[test]
    fn critical_warning_decoding() {
        assert_eq!(critical_warning_flags(0), Vec::<&str>::new());
        assert_eq!(critical_warning_flags(0x05), vec!["spare_below_threshold", "reliability_degraded"]);
        assert_eq!(critical_warning_flags(0x80), vec!["unknown"]);
    }

    fn arb_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            any::<i64>().prop_map(Value::from),
            any::<u64>().prop_map(Value::from),
            "[a-zA-Z_ ]{0,8}".prop_map(Value::from),
        ];
        leaf.prop_recursive(4, 64, 8, |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
                proptest::collection::btree_map(
                    prop_oneof![
                        Just("table".to_string()),
                        Just("raw".to_string()),
                        Just("value".to_string()),
                        Just("name".to_string()),
                        Just("id".to_string()),
                        "[a-z_]{1,6}"
                    ],
                    inner,
                    0..4
                )
                .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    proptest! {
        /// Any shape under the known top-level keys parses without panicking.
        #[test]
        fn tolerant_of_any_shape(
            a in arb_json(), b in arb_json(), c in arb_json(), d in arb_json(), e in arb_json(), st in any::<u8>()
        ) {
            let v = json!({
                "ata_smart_attributes": a,
                "nvme_smart_health_information_log": b,
                "ata_smart_self_test_log": c,
                "nvme_self_test_log": d,
                "ata_smart_data": e,
                "temperature": {"current": 30},
            });
            let r = SmartReport::from_json(&v, ExitStatus(st));
            prop_assert_eq!(r.exit, ExitStatus(st));
        }

        #[test]
        fn nvme_bytes_are_units_times_512000(units in 0u64..1u64 << 40) {
            let v = json!({"device": {"protocol": "NVMe"},
                           "nvme_smart_health_information_log": {"data_units_written": units}});
            let r = SmartReport::from_json(&v, ExitStatus(0));
            prop_assert_eq!(r.written.map(|w| w.bytes), Some(units * 512_000));
        }
    }
}
