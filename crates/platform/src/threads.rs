//! This process's threads as the OS accounts for them: a thread's own I/O and CPU counters,
//! and the kernel's I/O worker threads that act for it.
//!
//! On Linux a request that a file or device cannot take without blocking is handed by io_uring
//! to kernel worker threads of the submitting process (io-wq, named `iou-wrk-<submitter's
//! thread id>`). They are threads of this process, so their counters are ours to read: the
//! block layer charges a read to the thread that submits its bio (`read_bytes`) and a direct
//! write to the thread that issues it (`write_bytes`), so the bytes each side moved tell what
//! share of the I/O the workers did. Elsewhere nothing here is known and every call says so
//! with `None` or an empty list.

use std::path::Path;

/// One thread's counters since it started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskCounters {
    /// Bytes this thread caused to be read from storage (block-layer reads it submitted).
    pub read_bytes: u64,
    /// Bytes this thread caused to be written to storage.
    pub write_bytes: u64,
    /// Time on a CPU, nanoseconds.
    pub cpu_ns: u64,
}

impl TaskCounters {
    pub fn bytes(&self) -> u64 {
        self.read_bytes + self.write_bytes
    }

    /// The counters gained since `before` (zero where a counter went back).
    pub fn since(&self, before: &TaskCounters) -> TaskCounters {
        TaskCounters {
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
            cpu_ns: self.cpu_ns.saturating_sub(before.cpu_ns),
        }
    }
}

/// The calling thread's id as the OS numbers threads (`None` where unknown).
pub fn current_tid() -> Option<u32> {
    #[cfg(target_os = "linux")]
    {
        Some(rustix::thread::gettid().as_raw_nonzero().get() as u32)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Where this process's threads are listed (`/proc/self/task` on Linux).
#[cfg(target_os = "linux")]
const TASKS: &str = "/proc/self/task";

/// The counters of thread `tid` of this process; `None` once it has exited, or where the OS
/// does not tell.
pub fn counters(tid: u32) -> Option<TaskCounters> {
    #[cfg(target_os = "linux")]
    {
        counters_in(Path::new(TASKS), tid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tid;
        None
    }
}

/// The kernel's I/O worker threads that act for thread `tid` of this process (io_uring's
/// `iou-wrk-<tid>`): their ids, in no order. Empty where there are none or the OS has none.
pub fn io_workers_of(tid: u32) -> Vec<u32> {
    #[cfg(target_os = "linux")]
    {
        io_workers_in(Path::new(TASKS), tid)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = tid;
        Vec::new()
    }
}

/// [`counters`] under a task directory laid out as Linux's (`TID/io`, `TID/schedstat`,
/// `TID/stat`): fixtures in tests.
pub fn counters_in(tasks: &Path, tid: u32) -> Option<TaskCounters> {
    let dir = tasks.join(tid.to_string());
    let io = std::fs::read_to_string(dir.join("io")).ok()?;
    let (read_bytes, write_bytes) = parse_io(&io)?;
    let cpu_ns = std::fs::read_to_string(dir.join("schedstat"))
        .ok()
        .and_then(|s| parse_schedstat(&s))
        .or_else(|| std::fs::read_to_string(dir.join("stat")).ok().and_then(|s| parse_stat_cpu_ns(&s)))
        .unwrap_or(0);
    Some(TaskCounters { read_bytes, write_bytes, cpu_ns })
}

/// [`io_workers_of`] under a task directory laid out as Linux's (`TID/comm`).
pub fn io_workers_in(tasks: &Path, tid: u32) -> Vec<u32> {
    let want = format!("iou-wrk-{tid}");
    let Ok(dir) = std::fs::read_dir(tasks) else { return Vec::new() };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|t| std::fs::read_to_string(tasks.join(t.to_string()).join("comm")).is_ok_and(|c| c.trim() == want))
        .collect()
}

/// `read_bytes` and `write_bytes` of a `/proc/.../io` file.
pub fn parse_io(text: &str) -> Option<(u64, u64)> {
    let field =
        |name: &str| text.lines().find_map(|l| l.strip_prefix(name)?.strip_prefix(':')?.trim().parse::<u64>().ok());
    Some((field("read_bytes")?, field("write_bytes")?))
}

/// Time on a CPU from a `schedstat` file (its first field, nanoseconds).
pub fn parse_schedstat(text: &str) -> Option<u64> {
    text.split_whitespace().next()?.parse().ok()
}

/// User plus system time of a `/proc/.../stat` line, in nanoseconds (the kernel's clock ticks
/// are 100 per second for this file on every architecture Linux reports them so).
pub fn parse_stat_cpu_ns(text: &str) -> Option<u64> {
    // The command name is in parentheses and may hold spaces: fields count after the last ')'.
    let rest = &text[text.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 10_000_000)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const IO: &str = "rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 0\nread_bytes: 1535352832\nwrite_bytes: 4096\n\
                      cancelled_write_bytes: 0\n";

    fn task(root: &Path, tid: u32, comm: &str, io: &str, schedstat: Option<&str>) {
        let d = root.join(tid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        std::fs::write(d.join("io"), io).unwrap();
        if let Some(s) = schedstat {
            std::fs::write(d.join("schedstat"), s).unwrap();
        }
        std::fs::write(d.join("stat"), format!("{tid} ({comm}) S 1 1 1 0 -1 4194368 0 0 0 0 146 7 0 0 20 0 3 0\n"))
            .unwrap();
    }

    #[test]
    fn io_and_cpu_fields_are_read() {
        assert_eq!(parse_io(IO), Some((1_535_352_832, 4096)));
        assert_eq!(parse_io("rchar: 1\n"), None);
        assert_eq!(parse_schedstat("1460000000 2000 30\n"), Some(1_460_000_000));
        let stat = "2123 (iou wrk) (x) S 1 1 1 0 -1 4194368 0 0 0 0 146 7 0 0 20 0 3 0";
        assert_eq!(parse_stat_cpu_ns(stat), Some(153 * 10_000_000));
    }

    #[test]
    fn a_submitters_workers_are_found_by_name_and_counted() {
        let root = tempfile::tempdir().unwrap();
        let r = root.path();
        task(r, 100, "diskmeter", IO, Some("5 0 0\n"));
        task(r, 101, "dm-worker-0-0", "read_bytes: 0\nwrite_bytes: 0\n", Some("93000 1 1\n"));
        task(r, 102, "iou-wrk-101", IO, None);
        task(r, 103, "iou-wrk-101", "read_bytes: 8192\nwrite_bytes: 0\n", Some("77 1 1\n"));
        task(r, 104, "iou-wrk-1010", IO, None);
        let mut w = io_workers_in(r, 101);
        w.sort_unstable();
        assert_eq!(w, vec![102, 103]);
        assert!(io_workers_in(r, 100).is_empty());
        let c = counters_in(r, 102).unwrap();
        assert_eq!(c, TaskCounters { read_bytes: 1_535_352_832, write_bytes: 4096, cpu_ns: 153 * 10_000_000 });
        assert_eq!(counters_in(r, 103).unwrap().cpu_ns, 77);
        assert_eq!(counters_in(r, 999), None);
        let later = TaskCounters { read_bytes: 10, write_bytes: 0, cpu_ns: 5 };
        let before = TaskCounters { read_bytes: 4, write_bytes: 3, cpu_ns: 1 };
        assert_eq!(later.since(&before), TaskCounters { read_bytes: 6, write_bytes: 0, cpu_ns: 4 });
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_thread_has_counters_and_no_workers() {
        let tid = current_tid().unwrap();
        assert!(counters(tid).is_some());
        assert!(io_workers_of(tid).is_empty());
    }

    proptest! {
        #[test]
        fn parsers_never_panic(s in "\\PC{0,200}") {
            let _ = parse_io(&s);
            let _ = parse_schedstat(&s);
            let _ = parse_stat_cpu_ns(&s);
        }
    }
}
