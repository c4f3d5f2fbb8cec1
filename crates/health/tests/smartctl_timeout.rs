//! The real smartctl runner against fake smartctl scripts: a hanging one is killed at the
//! timeout with everything it started, one whose background child keeps stdout open
//! returns promptly, Ctrl-C (the stop flag) kills a running one, and a normal one works.

#![cfg(unix)] // fake smartctl shell scripts
#![allow(clippy::unwrap_used)]

use diskmeter_health::smartctl::{SmartSource, Smartctl};
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const ANSWER: &str = r#"{"smartctl":{"version":[7,3],"exit_status":4},"device":{"name":"/dev/fake0"}}"#;

/// A fake smartctl in `dir` running `body` (with `$d` set to `dir`).
fn fake(dir: &Path, body: &str) -> PathBuf {
    fs::write(dir.join("answer.json"), ANSWER).unwrap();
    let p = dir.join("smartctl");
    fs::write(&p, format!("#!/bin/sh\nd='{}'\necho \"$*\" >> \"$d/calls\"\n{body}\n", dir.display())).unwrap();
    fs::set_permissions(&p, fs::Permissions::from_mode(0o755)).unwrap();
    p
}

fn pid_in(dir: &Path, file: &str) -> u32 {
    let p = dir.join(file);
    for _ in 0..100 {
        if let Ok(t) = fs::read_to_string(&p) {
            if let Ok(pid) = t.trim().parse() {
                return pid;
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("the fake never wrote {}", p.display());
}

/// The process is gone: no /proc entry, or a zombie waiting for init to reap it.
fn gone(pid: u32) -> bool {
    let deadline = Instant::now() + Duration::from_secs(3);
    loop {
        let state = fs::read_to_string(format!("/proc/{pid}/stat"))
            .ok()
            .and_then(|s| s.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().next().map(String::from)));
        match state.as_deref() {
            None | Some("Z") | Some("X") => return true,
            Some(_) if Instant::now() >= deadline => return false,
            Some(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

fn dev() -> &'static Path {
    Path::new("/dev/fake0")
}

#[test]
fn hanging_smartctl_times_out_and_is_killed_with_its_children() {
    let t = tempfile::tempdir().unwrap();
    let s = fake(t.path(), r#"echo $$ > "$d/sh.pid"; sleep 1000 & echo $! > "$d/sleep.pid"; wait"#);
    let sc = Smartctl::new(s).with_timeout(Duration::from_secs(1));
    let start = Instant::now();
    let e = sc.query(dev(), Some("sat")).unwrap_err().to_string();
    let took = start.elapsed();
    assert!(e.contains("smartctl did not answer within 1 s for /dev/fake0"), "{e}");
    assert!(e.contains("--smartctl-timeout"), "{e}");
    assert!(took >= Duration::from_secs(1) && took < Duration::from_secs(4), "took {took:?}");
    let (sh, sleep) = (pid_in(t.path(), "sh.pid"), pid_in(t.path(), "sleep.pid"));
    assert!(gone(sh), "the fake smartctl {sh} still runs");
    assert!(gone(sleep), "its child sleep {sleep} still runs");
}

#[test]
fn hanging_version_check_times_out_too() {
    let t = tempfile::tempdir().unwrap();
    let s = fake(t.path(), "exec sleep 1000");
    let sc = Smartctl::new(s).with_timeout(Duration::from_millis(300));
    let e = sc.version().unwrap_err().to_string();
    assert!(e.contains("smartctl did not answer within 300 ms to -j --version"), "{e}");
}

#[test]
fn background_child_holding_stdout_does_not_hold_up_the_answer() {
    let t = tempfile::tempdir().unwrap();
    let s = fake(t.path(), r#"sleep 1000 & echo $! > "$d/sleep.pid"; cat "$d/answer.json"; exit 4"#);
    let sc = Smartctl::new(s).with_timeout(Duration::from_secs(30));
    let start = Instant::now();
    let out = sc.query(dev(), None).unwrap();
    let took = start.elapsed();
    assert!(took < Duration::from_secs(5), "took {took:?}, the timeout is 30 s");
    assert_eq!(out.json["device"]["name"], "/dev/fake0");
    assert_eq!(out.exit.0, 4);
    let sleep = pid_in(t.path(), "sleep.pid");
    assert!(gone(sleep), "the background sleep {sleep} still runs");
}

#[test]
fn normal_smartctl_with_a_lot_on_both_pipes() {
    let t = tempfile::tempdir().unwrap();
    // 300 kB on stderr before stdout: more than a pipe holds, so both must be read at once.
    let s = fake(
        t.path(),
        r#"case " $* " in
  *" --version "*) echo '{"smartctl":{"version":[7,4],"exit_status":0}}'; exit 0;;
esac
head -c 300000 /dev/zero | tr '\0' x >&2
cat "$d/answer.json"; exit 4"#,
    );
    let sc = Smartctl::new(s).with_timeout(Duration::from_secs(30));
    assert_eq!(sc.version().unwrap(), (7, 4));
    let start = Instant::now();
    let out = sc.query(dev(), Some("sat")).unwrap();
    assert!(start.elapsed() < Duration::from_secs(5), "took {:?}", start.elapsed());
    assert_eq!(out.json["smartctl"]["version"][1], 3);
    assert_eq!(out.exit.0, 4);
    let calls = fs::read_to_string(t.path().join("calls")).unwrap();
    assert_eq!(calls, "-j --version\n-j -a -d sat /dev/fake0\n");
}

#[test]
fn stop_flag_kills_a_running_smartctl_and_starts_no_other() {
    let t = tempfile::tempdir().unwrap();
    let s = fake(t.path(), r#"sleep 1000 & echo $! > "$d/sleep.pid"; wait"#);
    let stop = Arc::new(AtomicBool::new(false));
    let sc = Smartctl::new(s).with_timeout(Duration::from_secs(30)).with_stop(stop.clone());
    let raiser = {
        let stop = stop.clone();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(300));
            stop.store(true, Ordering::SeqCst);
        })
    };
    let start = Instant::now();
    let e = sc.query(dev(), None).unwrap_err().to_string();
    raiser.join().unwrap();
    assert!(start.elapsed() < Duration::from_secs(3), "took {:?}", start.elapsed());
    assert!(e.starts_with("interrupted: smartctl for /dev/fake0 was stopped"), "{e}");
    let sleep = pid_in(t.path(), "sleep.pid");
    assert!(gone(sleep), "the sleep {sleep} still runs");
    // With the flag up, no new smartctl starts.
    fs::remove_file(t.path().join("calls")).unwrap();
    assert!(sc.query(dev(), None).unwrap_err().to_string().starts_with("interrupted"));
    assert!(!t.path().join("calls").exists());
}
