//! tracefs: finding it, and a private tracing instance (`instances/diskmeter-PID`) with its
//! own buffers, clock, filters and enabled events, so a capture neither disturbs nor is
//! disturbed by other users of tracing. The instance is removed when dropped.

use std::fs::{self, File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::MonitorError;

/// Instance names start with this, then the process id.
pub const INSTANCE_PREFIX: &str = "diskmeter-";

fn is_tracefs(p: &Path) -> bool {
    p.join("instances").is_dir() && p.join("events").is_dir()
}

/// The tracefs mount: the usual places, then any mounted `tracefs`.
pub fn find_root() -> Result<PathBuf, MonitorError> {
    if let Some(root) = platform::host::tracefs_candidates().into_iter().find(|c| is_tracefs(c)) {
        return Ok(root);
    }
    Err(MonitorError::Usage(
        "tracefs is not mounted: capture reads the kernel's block tracepoints through it; mount it with \
         `mount -t tracefs nodev /sys/kernel/tracing`"
            .to_string(),
    ))
}

/// Reads a tracefs file whole. Some of them (`events/header_page`) answer only the first
/// read, so it is one large read rather than `read_to_string`'s small first probe.
pub fn read_file(p: &Path) -> std::io::Result<String> {
    use std::io::Read;
    let mut f = File::open(p)?;
    let mut buf = vec![0u8; 256 << 10];
    let mut len = 0;
    while let Some(space) = buf.get_mut(len..).filter(|s| !s.is_empty()) {
        match f.read(space) {
            Ok(0) => break,
            Ok(n) => len += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(len);
    Ok(String::from_utf8_lossy(&buf).into_owned())
}

/// Writes `value` to a tracefs control file.
pub fn write_file(p: &Path, value: &str) -> std::io::Result<()> {
    let mut f = OpenOptions::new().write(true).truncate(true).open(p)?;
    f.write_all(value.as_bytes())
}

/// Removes instances left by diskmeter processes that no longer run (a `kill -9`).
pub fn remove_stale(root: &Path) {
    let Ok(dir) = fs::read_dir(root.join("instances")) else { return };
    for e in dir.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(pid) = name.strip_prefix(INSTANCE_PREFIX).and_then(|p| p.parse::<u32>().ok()) else { continue };
        if !platform::host::process_exists(pid) {
            let _ = fs::remove_dir(e.path());
        }
    }
}

/// A tracing instance of this process. Dropping it stops tracing and removes it (files opened
/// in it must be closed first).
#[derive(Debug)]
pub struct Instance {
    dir: PathBuf,
    /// Event directories enabled (relative to `events/`), to disable before removal.
    enabled: Vec<String>,
    removed: bool,
}

impl Instance {
    /// Creates `instances/diskmeter-PID` under `root`.
    pub fn create(root: &Path) -> Result<Instance, MonitorError> {
        let dir = root.join("instances").join(format!("{INSTANCE_PREFIX}{}", std::process::id()));
        if dir.exists() {
            // Ours from an earlier capture in this process that could not be removed.
            let _ = fs::remove_dir(&dir);
        }
        fs::create_dir(&dir).map_err(|e| {
            let m = format!("cannot create the tracing instance {}: {e}", dir.display());
            if e.kind() == std::io::ErrorKind::PermissionDenied {
                MonitorError::Usage(format!("{m}; capture needs root"))
            } else {
                MonitorError::Runtime(m)
            }
        })?;
        Ok(Instance { dir, enabled: Vec::new(), removed: false })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes a control file of the instance.
    pub fn set(&self, rel: &str, value: &str) -> Result<(), String> {
        write_file(&self.dir.join(rel), value).map_err(|e| format!("cannot write {value:?} to {rel}: {e}"))
    }

    pub fn get(&self, rel: &str) -> Result<String, String> {
        read_file(&self.dir.join(rel)).map_err(|e| format!("cannot read {rel}: {e}"))
    }

    /// Enables `events/<event>` (e.g. `block/block_rq_issue`).
    pub fn enable(&mut self, event: &str) -> Result<(), String> {
        self.enabled.push(event.to_string());
        self.set(&format!("events/{event}/enable"), "1")
    }

    /// Stops recording: disables the events and the instance's tracing.
    pub fn stop(&mut self) {
        for e in std::mem::take(&mut self.enabled) {
            let _ = write_file(&self.dir.join(format!("events/{e}/enable")), "0");
        }
        let _ = write_file(&self.dir.join("tracing_on"), "0");
    }

    /// Per-CPU directories (`per_cpu/cpuN`), by CPU number.
    pub fn cpus(&self) -> Vec<(u32, PathBuf)> {
        let mut v: Vec<(u32, PathBuf)> = fs::read_dir(self.dir.join("per_cpu"))
            .map(|d| {
                d.flatten()
                    .filter_map(|e| {
                        let n = e.file_name().to_string_lossy().strip_prefix("cpu")?.parse::<u32>().ok()?;
                        Some((n, e.path()))
                    })
                    .collect()
            })
            .unwrap_or_default();
        v.sort();
        v
    }

    /// Stops and removes the instance; an instance still busy is retried for a second.
    pub fn remove(&mut self) -> Result<(), String> {
        if self.removed {
            return Ok(());
        }
        self.stop();
        let mut last = None;
        for _ in 0..20 {
            match fs::remove_dir(&self.dir) {
                Ok(()) => {
                    self.removed = true;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                    self.removed = true;
                    return Ok(());
                }
                Err(e) => last = Some(e),
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Err(format!(
            "cannot remove the tracing instance {}: {}; remove it with rmdir",
            self.dir.display(),
            last.map(|e| e.to_string()).unwrap_or_default()
        ))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.remove();
    }
}

/// Opens a per-CPU `trace_pipe_raw` for non-blocking reads.
pub fn open_raw(cpu_dir: &Path) -> std::io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(cpu_dir.join("trace_pipe_raw"))
}

/// Lost events in a per-CPU `stats` file: `overrun`, `commit overrun` and `dropped events`.
pub fn lost_in_stats(text: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.split_once(':'))
        .filter(|(k, _)| matches!(k.trim(), "overrun" | "commit overrun" | "dropped events"))
        .filter_map(|(_, v)| v.trim().parse::<u64>().ok())
        .sum()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn stats_lost_events() {
        let s = "entries: 5\noverrun: 3\ncommit overrun: 1\nbytes: 400\noldest event ts:  1.000\n\
                 now ts:  2.000\ndropped events: 7\nread events: 99\n";
        assert_eq!(lost_in_stats(s), 11);
        assert_eq!(lost_in_stats(""), 0);
    }
}
