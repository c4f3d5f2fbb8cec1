//! What the database keeps beside each stored document: read from the document's JSON, so
//! that results of every command, health documents and imported fio runs all fit.
//!
//! - **Device identity** (`device_key`): the WWN when known, else serial and model, else the
//!   host and the kernel's device name (with the model), else model and size, else the host
//!   and the target path. Model and size alone come late: two disks of one model in one
//!   machine (a mirror) would share it.
//! - **Device state** of the run: the target's fields that are not identity (file system,
//!   scheduler, block sizes, cache, and whatever later versions add: mount options, the
//!   dm/md stack, fill level), kept as JSON.
//! - **SMART figures**: one row per disk of a health document, or from a `smart` object
//!   (a health `SmartReport`) that the app layer may attach to a result document.
//! - **Summary**: per job or card cell, what the runs list shows without decompressing.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use crate::key::{command_of, comparability_key, Key};

/// Target fields that identify the device rather than describe its state in a run.
const IDENTITY_FIELDS: &[&str] = &["path", "path_not_utf8", "device", "model", "serial", "wwn", "firmware", "link"];

/// Per job or card cell: the figures the runs list shows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobSummary {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<DirSummary>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write: Option<DirSummary>,
}

/// One direction of a job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DirSummary {
    pub iops: Option<f64>,
    pub mb_s: Option<f64>,
    pub lat_mean_ns: Option<f64>,
    pub lat_p99_ns: Option<f64>,
}

/// A device as one document describes it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Identity {
    pub key: String,
    pub name: Option<String>,
    pub model: Option<String>,
    pub serial: Option<String>,
    pub wwn: Option<String>,
    pub firmware: Option<String>,
    pub size_bytes: Option<u64>,
    pub link: Option<String>,
    pub rotational: Option<bool>,
}

/// The SMART figures of one disk in one run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SmartFigures {
    pub device_key: String,
    pub device: Option<String>,
    pub percentage_used: Option<f64>,
    pub temperature_c: Option<i64>,
    pub data_written_bytes: Option<u64>,
    pub media_errors: Option<u64>,
    pub power_on_hours: Option<u64>,
}

/// Everything stored beside one document.
#[derive(Debug, Clone)]
pub(crate) struct Facts {
    pub command: String,
    pub schema: Option<String>,
    pub started_at: String,
    pub started_ns: i64,
    pub host: Option<String>,
    pub device: Option<String>,
    pub device_key: String,
    pub model: Option<String>,
    pub target: Option<String>,
    pub partial: bool,
    pub key: Key,
    pub summary: Vec<JobSummary>,
    pub state: Option<Value>,
    pub devices: Vec<Identity>,
    pub smart: Vec<SmartFigures>,
}

fn str_at(v: &Value, ptr: &str) -> Option<String> {
    v.pointer(ptr).and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

fn u64_at(v: &Value, ptr: &str) -> Option<u64> {
    v.pointer(ptr).and_then(Value::as_u64)
}

fn f64_at(v: &Value, ptr: &str) -> Option<f64> {
    v.pointer(ptr).and_then(Value::as_f64)
}

/// Reads the facts of `doc`, or says what it lacks.
pub(crate) fn facts(doc: &Value) -> Result<Facts, String> {
    if !doc.is_object() {
        return Err("it is not a JSON object".into());
    }
    let command = command_of(doc).ok_or("it has no \"command\"")?;
    let started_at =
        str_at(doc, "/started_at").or_else(|| str_at(doc, "/time")).ok_or("it has no \"started_at\" time")?;
    let started_ns = crate::time::parse_ns(&started_at)
        .ok_or_else(|| format!("its started_at '{started_at}' is not an RFC 3339 time"))?;
    let has_results = doc.get("results").is_some_and(Value::is_array);
    let disks = doc.get("disks").and_then(Value::as_array);
    if !has_results && disks.is_none() {
        return Err("it has neither \"results\" nor \"disks\"".into());
    }
    let host = str_at(doc, "/host/hostname").or_else(|| str_at(doc, "/host/name"));
    let host_name = host.clone().unwrap_or_else(|| "?".to_string());
    let partial = doc.get("partial").and_then(Value::as_bool).unwrap_or(false)
        || doc.get("interrupted").and_then(Value::as_bool).unwrap_or(false);

    let mut devices = Vec::new();
    let mut smart = Vec::new();
    let (device, target, state) = match disks {
        Some(disks) if !has_results || doc.get("target").is_none_or(Value::is_null) => {
            for d in disks {
                let id = disk_identity(d, &host_name);
                if let Some(s) = d.get("smart").filter(|s| s.is_object()) {
                    smart.push(smart_figures(s, &id));
                }
                devices.push(id);
            }
            let names: Vec<String> = devices.iter().filter_map(|d| d.name.clone()).collect();
            let state = json!({"disks": disks.iter().map(disk_state).collect::<Vec<_>>()});
            ((!names.is_empty()).then(|| names.join(", ")), None, Some(state))
        }
        _ => {
            let t = doc.get("target").filter(|t| t.is_object());
            let id = t.map_or_else(
                || Identity { key: format!("host:{host_name}/none"), ..Identity::default() },
                |t| target_identity(t, &host_name),
            );
            if let Some(s) = doc.get("smart").filter(|s| s.is_object()) {
                smart.push(smart_figures(s, &id));
            }
            let display = id.name.clone().or_else(|| t.and_then(|t| str_at(t, "/folder")));
            let state = t.map(target_state);
            devices.push(id);
            (display, t.and_then(|t| str_at(t, "/path")), state)
        }
    };
    let first = devices.first();
    Ok(Facts {
        schema: str_at(doc, "/schema"),
        key: comparability_key(doc),
        summary: summary(doc),
        device_key: first.map_or_else(|| format!("host:{host_name}/none"), |d| d.key.clone()),
        model: first.and_then(|d| d.model.clone()),
        command,
        started_at,
        started_ns,
        host,
        device,
        target,
        partial,
        state,
        devices,
        smart,
    })
}

/// The device key of the identity fields known.
fn device_key(
    host: &str,
    name: Option<&str>,
    model: Option<&str>,
    serial: Option<&str>,
    wwn: Option<&str>,
    size: Option<u64>,
    path: Option<&str>,
) -> String {
    if let Some(wwn) = wwn {
        return format!("wwn:{}", wwn.to_ascii_lowercase().replace(' ', ""));
    }
    if let Some(serial) = serial {
        return format!("serial:{}/{serial}", model.unwrap_or(""));
    }
    if let Some(name) = name {
        return match model {
            Some(m) => format!("host:{host}/dev:{name}/{m}"),
            None => format!("host:{host}/dev:{name}"),
        };
    }
    if let (Some(m), Some(size)) = (model, size) {
        return format!("model:{m}/{size}");
    }
    format!("host:{host}/path:{}", path.unwrap_or(""))
}

fn target_identity(t: &Value, host: &str) -> Identity {
    let block = t.get("kind").and_then(Value::as_str) == Some("block");
    let name = str_at(t, "/device");
    let model = str_at(t, "/model");
    let serial = str_at(t, "/serial");
    let wwn = str_at(t, "/wwn");
    // A file target's size is the test file's, not the device's.
    let size_bytes = if block { u64_at(t, "/size_bytes") } else { u64_at(t, "/device_size_bytes") };
    let path = str_at(t, "/folder").or_else(|| str_at(t, "/path"));
    // The run's own identity of its device (`platform::identity`), when the result carries it;
    // a result stored before that is keyed as it always was (its rows keep their key, and a new
    // device never takes it over: the new keys have other forms).
    let key = str_at(t, "/device_key").unwrap_or_else(|| {
        device_key(
            host,
            name.as_deref(),
            model.as_deref(),
            serial.as_deref(),
            wwn.as_deref(),
            size_bytes,
            path.as_deref(),
        )
    });
    Identity {
        key,
        firmware: str_at(t, "/firmware"),
        link: str_at(t, "/link"),
        rotational: t.get("rotational").and_then(Value::as_bool),
        name,
        model,
        serial,
        wwn,
        size_bytes,
    }
}

fn disk_identity(d: &Value, host: &str) -> Identity {
    let name = str_at(d, "/name");
    let model = str_at(d, "/smart/model");
    let serial = str_at(d, "/smart/serial");
    let wwn = str_at(d, "/smart/wwn");
    let size_bytes = u64_at(d, "/size_bytes").or_else(|| u64_at(d, "/smart/capacity_bytes"));
    // The disk's one identity when the report carries it (as `health`'s wear history keys it).
    let key = str_at(d, "/device_key").unwrap_or_else(|| {
        device_key(
            host,
            name.as_deref(),
            model.as_deref(),
            serial.as_deref(),
            wwn.as_deref(),
            size_bytes,
            str_at(d, "/path").as_deref(),
        )
    });
    Identity {
        key,
        firmware: str_at(d, "/smart/firmware"),
        link: str_at(d, "/smart/protocol"),
        rotational: u64_at(d, "/smart/rotation_rate").map(|r| r > 0),
        name,
        model,
        serial,
        wwn,
        size_bytes,
    }
}

fn target_state(t: &Value) -> Value {
    let mut state: Map<String, Value> = t.as_object().cloned().unwrap_or_default();
    for f in IDENTITY_FIELDS {
        state.remove(*f);
    }
    Value::Object(state)
}

fn disk_state(d: &Value) -> Value {
    let pick = |k: &str| d.get(k).cloned().unwrap_or(Value::Null);
    json!({"name": pick("name"), "verdict": pick("verdict"), "kind": pick("kind"),
           "virtual_kind": pick("virtual_kind"), "via": pick("via")})
}

/// From a health `SmartReport` (serialized).
fn smart_figures(s: &Value, id: &Identity) -> SmartFigures {
    SmartFigures {
        device_key: id.key.clone(),
        device: id.name.clone(),
        percentage_used: f64_at(s, "/wear/used_percent").or_else(|| f64_at(s, "/percentage_used")),
        temperature_c: s.get("temperature_c").and_then(Value::as_i64),
        data_written_bytes: u64_at(s, "/written/bytes").or_else(|| u64_at(s, "/data_written_bytes")),
        media_errors: u64_at(s, "/media_errors"),
        power_on_hours: u64_at(s, "/power_on_hours"),
    }
}

fn dir_summary(d: &Value) -> Option<DirSummary> {
    if !d.is_object() {
        return None;
    }
    Some(DirSummary {
        iops: f64_at(d, "/iops"),
        mb_s: f64_at(d, "/mb_s"),
        lat_mean_ns: f64_at(d, "/lat_ns/mean"),
        lat_p99_ns: f64_at(d, "/lat_ns/p99"),
    })
}

fn summary(doc: &Value) -> Vec<JobSummary> {
    let Some(results) = doc.get("results").and_then(Value::as_array) else {
        return Vec::new();
    };
    results
        .iter()
        .map(|r| JobSummary {
            name: str_at(r, "/name").unwrap_or_default(),
            read: r.get("read").and_then(dir_summary),
            write: r.get("write").and_then(dir_summary),
        })
        .collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_file_target_on_a_disk() {
        let doc = json!({"command": "mark", "started_at": "2026-03-02T10:00:00Z",
            "host": {"hostname": "box"},
            "target": {"path": "/mnt/d/diskmeter.test", "kind": "file", "size_bytes": 1024,
                       "device": "nvme0n1", "model": "Acme 1TB", "filesystem": "ext4",
                       "scheduler": "none"},
            "results": []});
        let f = facts(&doc).unwrap();
        assert_eq!(f.device_key, "host:box/dev:nvme0n1/Acme 1TB");
        assert_eq!(f.device.as_deref(), Some("nvme0n1"));
        assert_eq!(f.devices[0].size_bytes, None, "a file's size is not the device's");
        let state = f.state.unwrap();
        assert_eq!(state["filesystem"], "ext4");
        assert!(state.get("model").is_none());
    }

    #[test]
    fn a_runs_smart_snapshot_joins_its_disk() {
        let doc = json!({"command": "mark", "started_at": "2026-03-02T10:00:00Z",
            "host": {"hostname": "box"},
            "target": {"path": "/dev/sda", "kind": "block", "size_bytes": 1024, "device": "sda",
                       "model": "Acme SSD", "serial": "S1", "firmware": "F2"},
            "smart": {"device": "/dev/sda", "percentage_used": 19.0, "temperature_c": 36,
                      "data_written_bytes": 1000, "media_errors": 0, "power_on_hours": 7},
            "results": []});
        let f = facts(&doc).unwrap();
        assert_eq!(f.device_key, "serial:Acme SSD/S1");
        assert_eq!(f.smart.len(), 1);
        let s = &f.smart[0];
        assert_eq!(
            (s.device_key.as_str(), s.percentage_used, s.temperature_c),
            ("serial:Acme SSD/S1", Some(19.0), Some(36))
        );
        assert_eq!((s.data_written_bytes, s.media_errors, s.power_on_hours), (Some(1000), Some(0), Some(7)));
    }

    #[test]
    fn identity_order() {
        let k = |wwn, serial, name, model, size| device_key("h", name, model, serial, wwn, size, None);
        assert_eq!(k(Some("0x5 00A"), Some("S1"), Some("sda"), Some("M"), Some(1)), "wwn:0x500a");
        assert_eq!(k(None, Some("S1"), Some("sda"), Some("M"), Some(1)), "serial:M/S1");
        assert_eq!(k(None, None, Some("sda"), None, Some(1)), "host:h/dev:sda");
        assert_eq!(k(None, None, None, Some("M"), Some(1)), "model:M/1");
        assert_eq!(k(None, None, None, Some("M"), None), "host:h/path:");
    }

    #[test]
    fn what_is_refused() {
        assert!(facts(&json!([])).is_err());
        assert!(facts(&json!({"started_at": "2026-03-02", "results": []})).is_err());
        assert!(facts(&json!({"command": "run", "results": []})).is_err());
        assert!(facts(&json!({"command": "run", "started_at": "soon", "results": []})).is_err());
        assert!(facts(&json!({"command": "run", "started_at": "2026-03-02"})).is_err());
        assert!(facts(&json!({"command": "run", "started_at": "2026-03-02", "results": []})).is_ok());
    }
}
