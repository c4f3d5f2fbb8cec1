//! Live TASKSTATS queries against the running kernel. They need CAP_NET_ADMIN: as another
//! user they check the permission error instead, and say so. Linux only (taskstats is Linux's).
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use diskmeter_monitor::procs::{self, DelaySource, TaskstatsState};
use diskmeter_monitor::taskstats::{self, Taskstats, TsError};
use std::io::Write;

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

fn io_field(text: &str, key: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix(':')))
        .map(|v| v.trim().parse().unwrap())
        .unwrap_or_else(|| panic!("{key} missing in {text}"))
}

fn open() -> Option<Taskstats> {
    match Taskstats::open() {
        Ok(t) => Some(t),
        Err(TsError::NoFamily) => {
            eprintln!("note: kernel without taskstats (CONFIG_TASKSTATS); live test skipped");
            None
        }
        Err(e) => panic!("cannot open the taskstats socket: {e}"),
    }
}

#[test]
fn this_thread_agrees_with_proc_io() {
    let Some(mut ts) = open() else { return };
    if !is_root() {
        let r = ts.tgid(std::process::id() as i32);
        assert!(matches!(r, Err(TsError::Permission) | Ok(_)), "{r:?}");
        eprintln!("note: not root; checked only that a query without CAP_NET_ADMIN is refused cleanly");
        return;
    }
    // Give this thread some storage writes (write_bytes is charged when pages are dirtied).
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let mut f = std::fs::File::create(dir.path().join("w")).unwrap();
    f.write_all(&vec![7u8; 1 << 20]).unwrap();
    f.sync_all().unwrap();
    drop(f);
    // SAFETY: gettid has no preconditions.
    let tid = unsafe { libc::gettid() };
    let s = ts.pid(tid).unwrap();
    // /proc/thread-self/io holds this thread's own counters, the same ones taskstats reports
    // for a PID query (/proc/self/io adds the other threads and reaped children).
    let io = std::fs::read_to_string("/proc/thread-self/io").unwrap();
    assert_eq!(s.ac_pid, Some(tid as u32));
    assert_eq!(s.read_bytes, Some(io_field(&io, "read_bytes")), "{io}");
    assert_eq!(s.write_bytes, Some(io_field(&io, "write_bytes")), "{io}");
    assert_eq!(s.cancelled_write_bytes, Some(io_field(&io, "cancelled_write_bytes")), "{io}");
    let comm = std::fs::read_to_string("/proc/thread-self/comm").unwrap();
    assert_eq!(s.comm().as_deref(), Some(comm.trim_end()));
    assert!(s.version >= 2, "version {}", s.version);
    println!(
        "taskstats v{} for tid {tid}: write_bytes {:?} (proc: {})",
        s.version,
        s.write_bytes,
        io_field(&io, "write_bytes")
    );

    // The process's main thread: ac_pid is the pid.
    let pid = std::process::id();
    let main = ts.pid(pid as i32).unwrap();
    assert_eq!(main.ac_pid, Some(pid));
    // The thread-group aggregate answers for the pid; a vanished pid is ESRCH, not noise.
    ts.tgid(pid as i32).unwrap();
    assert_eq!(ts.tgid(i32::MAX).err(), Some(TsError::NoProcess));
    assert_eq!(ts.tgid(-1).err(), Some(TsError::NoProcess));
    // The socket stays usable after errors.
    ts.tgid(pid as i32).unwrap();
}

#[test]
fn sampling_records_the_state_and_delay_counters() {
    let mut d = DelaySource::open();
    let snap = procs::read_all_with(Some(&mut d));
    let delayacct = taskstats::delayacct_enabled();
    assert_eq!(snap.delayacct, delayacct);
    let me = snap.procs.iter().find(|p| p.pid == std::process::id() as i32).unwrap();
    match snap.taskstats {
        Some(TaskstatsState::Ok) => {
            assert!(me.blkio_delay_ns.is_some() && me.swapin_delay_ns.is_some());
        }
        Some(TaskstatsState::NoPermission) => {
            assert!(!is_root(), "root was refused");
            assert!(me.blkio_delay_ns.is_none());
            eprintln!("note: not root; the no-permission path was checked");
        }
        Some(TaskstatsState::NoKernelSupport) => eprintln!("note: kernel without taskstats; skipped"),
        ref other => panic!("unexpected state {other:?}"),
    }
    let note = procs::note(&snap);
    match (&snap.taskstats, delayacct) {
        (Some(TaskstatsState::Ok), Some(false)) => {
            assert!(note.contains("delay accounting is off (sysctl kernel.task_delayacct=1)"), "{note}")
        }
        (Some(TaskstatsState::Ok), _) => assert!(note.contains("IO% from taskstats"), "{note}"),
        (Some(TaskstatsState::NoPermission), _) => assert!(note.contains("needs root or CAP_NET_ADMIN"), "{note}"),
        _ => {}
    }
    println!("task_delayacct {delayacct:?}: {note}");
}
