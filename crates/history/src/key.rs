//! The comparability key: two runs are compared figure by figure only when they ran the
//! same workload on the same kind of target.
//!
//! A job's workload is what moves its figures: access pattern (`rw`, and the read share of a
//! mixed stream), block size, queue depth, threads, region size, direct or buffered I/O, the
//! engine and the target kind (file or block device). Run time, passes, seeds and names do
//! not make a run incomparable; they are left out. The run's key is the command plus the
//! sorted workloads of its jobs, hashed: equal keys mean every job has its counterpart.
//!
//! Both diskmeter's spec names (`qd`, `threads`) and fio's (`iodepth`, `numjobs`) are read,
//! so an imported fio run has a key of the same shape.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// The comparability key of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Key {
    /// `command:hash` — equal strings mean comparable runs.
    pub key: String,
    /// The command (`mark`, `run`, `health`, …).
    pub command: String,
    /// The target kind (`file`, `block`, `null`) when the document says.
    pub target_kind: Option<String>,
    /// Per job or card cell, in document order.
    pub jobs: Vec<JobKey>,
}

/// The comparability key of one job or card cell.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobKey {
    /// The job's name (`RND4K Q1T1`): what matches a cell with its counterpart.
    pub name: String,
    pub workload: Workload,
}

/// What a job ran; `None` where the document does not say.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Workload {
    pub rw: Option<String>,
    /// Read share in percent, for mixed streams only.
    pub mix: Option<u64>,
    pub bs: Option<u64>,
    pub qd: Option<u64>,
    pub threads: Option<u64>,
    pub size: Option<u64>,
    pub direct: Option<bool>,
    pub engine: Option<String>,
    pub target_kind: Option<String>,
}

impl Workload {
    /// `randread 4k QD1 T1 direct io_uring file 1 GiB`-like text for messages.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(rw) = &self.rw {
            parts.push(match self.mix {
                Some(m) => format!("{rw} {m}% read"),
                None => rw.clone(),
            });
        }
        if let Some(bs) = self.bs {
            parts.push(format!("bs {bs}"));
        }
        if let Some(qd) = self.qd {
            parts.push(format!("QD{qd}"));
        }
        if let Some(t) = self.threads {
            parts.push(format!("T{t}"));
        }
        if let Some(size) = self.size {
            parts.push(format!("size {size}"));
        }
        if let Some(d) = self.direct {
            parts.push(if d { "direct" } else { "buffered" }.to_string());
        }
        parts.extend(self.engine.clone());
        parts.extend(self.target_kind.clone());
        parts.join(" ")
    }
}

/// The key of a result document (`diskmeter.result.v1`, a health document or an imported
/// one): every entry of `results` with a `spec` (or fio's `job options`) is a job.
pub fn comparability_key(doc: &Value) -> Key {
    let command = command_of(doc).unwrap_or_default();
    let target_kind = doc.pointer("/target/kind").and_then(Value::as_str).map(str::to_string);
    let jobs: Vec<JobKey> = doc
        .get("results")
        .and_then(Value::as_array)
        .map(|r| r.iter().map(|job| job_key(job, target_kind.as_deref())).collect())
        .unwrap_or_default();
    let mut workloads: Vec<(&str, &Workload)> = jobs.iter().map(|j| (j.name.as_str(), &j.workload)).collect();
    // Order does not matter, names do not either (the workloads make the key).
    workloads.sort_by(|a, b| a.1.cmp(b.1));
    let canonical = serde_json::json!({
        "command": command,
        "target_kind": target_kind,
        "jobs": workloads.iter().map(|(_, w)| w).collect::<Vec<_>>(),
    });
    let digest = Sha256::digest(canonical.to_string().as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    Key { key: format!("{command}:{hex}"), command, target_kind, jobs }
}

fn job_key(job: &Value, target_kind: Option<&str>) -> JobKey {
    let spec =
        job.get("spec").or_else(|| job.get("job options")).or_else(|| job.get("job_options")).unwrap_or(&Value::Null);
    let field = |names: &[&str]| names.iter().find_map(|n| spec.get(*n)).filter(|v| !v.is_null());
    let num = |names: &[&str]| field(names).and_then(as_u64);
    let rw = field(&["rw", "readwrite"]).and_then(Value::as_str).map(str::to_string);
    let mixed = rw.as_deref().is_some_and(|r| r.contains("rw") || r == "readwrite");
    let direct = field(&["direct"]).and_then(|v| v.as_bool().or_else(|| as_u64(v).map(|n| n != 0)));
    let name = job.get("name").or_else(|| job.get("jobname")).and_then(Value::as_str).unwrap_or_default().to_string();
    JobKey {
        name,
        workload: Workload {
            rw,
            mix: if mixed { num(&["mix", "rwmixread"]) } else { None },
            bs: num(&["bs", "blocksize"]),
            qd: num(&["qd", "iodepth"]),
            threads: num(&["threads", "numjobs"]),
            size: num(&["size"]),
            direct,
            engine: field(&["engine", "ioengine"]).and_then(Value::as_str).map(str::to_string),
            target_kind: target_kind.map(str::to_string),
        },
    }
}

/// A number, or fio's text form of one (`"4096"`, `"4k"`, `"1m"`, `"1g"`).
fn as_u64(v: &Value) -> Option<u64> {
    if let Some(n) = v.as_u64() {
        return Some(n);
    }
    let s = v.as_str()?.trim().to_ascii_lowercase();
    let s = s.strip_suffix('b').unwrap_or(&s).strip_suffix('i').unwrap_or(&s);
    let (digits, mult) = match s.chars().last()? {
        'k' => (&s[..s.len() - 1], 1u64 << 10),
        'm' => (&s[..s.len() - 1], 1 << 20),
        'g' => (&s[..s.len() - 1], 1 << 30),
        't' => (&s[..s.len() - 1], 1 << 40),
        _ => (s, 1),
    };
    digits.parse::<u64>().ok()?.checked_mul(mult)
}

/// Schema of health documents (`diskmeter health --json`).
pub const HEALTH_SCHEMA: &str = "diskmeter.health.v1";

/// The command of a document: its `command`, or `health` for a health document.
pub(crate) fn command_of(doc: &Value) -> Option<String> {
    let command = doc.get("command").and_then(Value::as_str).map(str::trim).filter(|s| !s.is_empty());
    command.map(str::to_string).or_else(|| is_health(doc).then(|| "health".to_string()))
}

fn is_health(doc: &Value) -> bool {
    doc.get("schema").and_then(Value::as_str) == Some(HEALTH_SCHEMA)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc(qd: u64, names: [&str; 2]) -> Value {
        json!({
            "command": "mark",
            "target": {"kind": "file"},
            "results": [
                {"name": names[0], "spec": {"rw": "randread", "bs": 4096, "qd": qd, "threads": 1,
                    "size": 1u64 << 30, "direct": true, "engine": "io_uring", "seed": 1, "mix": 70}},
                {"name": names[1], "spec": {"rw": "read", "bs": 1 << 20, "qd": 8, "threads": 1,
                    "size": 1u64 << 30, "direct": true, "engine": "io_uring", "seed": 2, "mix": 70}},
            ]
        })
    }

    #[test]
    fn same_workload_same_key() {
        let a = comparability_key(&doc(1, ["RND4K Q1T1", "SEQ1M Q8T1"]));
        let b = comparability_key(&doc(1, ["RND4K Q1T1", "SEQ1M Q8T1"]));
        assert_eq!(a, b);
        assert!(a.key.starts_with("mark:"));
        // Seeds and order do not matter.
        let mut c = doc(1, ["RND4K Q1T1", "SEQ1M Q8T1"]);
        c["results"].as_array_mut().unwrap().reverse();
        c["results"][0]["spec"]["seed"] = json!(99);
        assert_eq!(comparability_key(&c).key, a.key);
        // The mix of a pure read is not part of its workload.
        assert_eq!(a.jobs[0].workload.mix, None);
    }

    #[test]
    fn different_qd_different_key() {
        let a = comparability_key(&doc(1, ["RND4K Q1T1", "SEQ1M Q8T1"]));
        let b = comparability_key(&doc(32, ["RND4K Q1T1", "SEQ1M Q8T1"]));
        assert_ne!(a.key, b.key);
        let mut c = doc(1, ["RND4K Q1T1", "SEQ1M Q8T1"]);
        c["target"]["kind"] = json!("block");
        assert_ne!(comparability_key(&c).key, a.key);
        let mut d = doc(1, ["RND4K Q1T1", "SEQ1M Q8T1"]);
        d["results"][0]["spec"]["direct"] = json!(false);
        assert_ne!(comparability_key(&d).key, a.key);
    }

    #[test]
    fn fio_names() {
        let fio = json!({"command": "fio", "results": [{"jobname": "j",
            "job options": {"rw": "randrw", "rwmixread": "70", "bs": "4k", "iodepth": "16",
                            "numjobs": "2", "direct": "1", "ioengine": "libaio"}}]});
        let k = comparability_key(&fio);
        let w = &k.jobs[0].workload;
        assert_eq!((w.bs, w.qd, w.threads, w.mix, w.direct), (Some(4096), Some(16), Some(2), Some(70), Some(true)));
        assert_eq!(w.describe(), "randrw 70% read bs 4096 QD16 T2 direct libaio");
    }
}
