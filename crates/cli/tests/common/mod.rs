//! Helpers shared by the integration tests (each test file includes this module).
#![allow(dead_code)]

use assert_cmd::Command;
use serde_json::Value;
use std::path::Path;
use std::process::Output;
use tempfile::TempDir;

pub mod throttle;
#[allow(dead_code)]
pub mod zram;

/// A home of this test binary's own, emptied on first use: `target/tmp/home-BINARY` (the
/// build's scratch folder, so nothing is left in /tmp; the next run of the binary empties it).
/// Every diskmeter a test starts lives in it ([`home_env`]), so no test reads or writes the
/// user's device state, history database or health history — and no record of the user's own
/// devices changes what a test sees.
pub fn test_home() -> &'static Path {
    static HOME: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    HOME.get_or_init(|| {
        let exe = std::env::current_exe().ok();
        let stem = exe.as_deref().and_then(Path::file_stem).map(|s| s.to_string_lossy().into_owned());
        let home = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("home-{}", stem.unwrap_or_default()));
        let _ = std::fs::remove_dir_all(&home);
        std::fs::create_dir_all(&home).expect("a test home");
        home
    })
}

/// The environment every diskmeter a test starts gets (the one helper: [`dm`] uses it, and so
/// does every test that spawns the binary itself): `HOME` and the XDG folders in
/// [`test_home`], the device state there too, and no history unless a test names one with
/// `--history FILE`.
pub fn home_env() -> Vec<(&'static str, std::path::PathBuf)> {
    let home = test_home();
    vec![
        ("HOME", home.to_path_buf()),
        ("XDG_STATE_HOME", home.join("state")),
        ("XDG_DATA_HOME", home.join("data")),
        ("XDG_CONFIG_HOME", home.join("config")),
        ("XDG_CACHE_HOME", home.join("cache")),
        ("DISKMETER_STATE_DIR", home.join("state/diskmeter")),
        ("DISKMETER_HISTORY", "off".into()),
    ]
}

/// The `diskmeter` binary with a clean environment for the things it reads, in the test home.
pub fn dm() -> Command {
    let mut c = Command::cargo_bin("diskmeter").expect("diskmeter binary is built");
    c.env_remove("DISKMETER_NULL_FAULT")
        .env_remove("DISKMETER_TEST_MEM_CEILING_SCALE")
        .envs(home_env())
        .env("NO_COLOR", "1")
        .env("COLUMNS", "100");
    c
}

/// A std `Command` of the binary with the same environment as [`dm`] (for spawning).
pub fn dm_std() -> std::process::Command {
    let mut c = std::process::Command::new(assert_cmd::cargo::cargo_bin("diskmeter"));
    c.env_remove("DISKMETER_NULL_FAULT").envs(home_env()).env("NO_COLOR", "1").env("COLUMNS", "100");
    c
}

/// `diskmeter` running in `dir`.
pub fn dm_in(dir: &Path) -> Command {
    let mut c = dm();
    c.current_dir(dir);
    c
}

pub fn tempdir() -> TempDir {
    tempfile::tempdir().expect("create a temporary directory")
}

/// Names of the entries of `dir`, sorted.
pub fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read_dir")
        .map(|e| e.expect("dir entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

pub fn stdout_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr_of(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Parse stdout as one JSON document.
pub fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("stdout is not valid JSON ({e}):\n{}\nstderr:\n{}", stdout_of(o), stderr_of(o)))
}

/// Run to completion and return the output (no assertion on the status).
pub fn output(cmd: &mut Command) -> Output {
    cmd.output().expect("spawn diskmeter")
}

/// Run, require `code`, return the output.
pub fn expect_code(cmd: &mut Command, code: i32) -> Output {
    let o = output(cmd);
    assert_eq!(
        o.status.code(),
        Some(code),
        "expected exit code {code}, got {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status,
        stdout_of(&o),
        stderr_of(&o)
    );
    o
}

/// Run with `--json`, require exit 0, return the document.
pub fn run_json(cmd: &mut Command) -> Value {
    let o = expect_code(cmd.arg("--json"), 0);
    json_of(&o)
}

pub fn results(doc: &Value) -> &Vec<Value> {
    doc["results"].as_array().expect("results is an array")
}

pub fn result_names(doc: &Value) -> Vec<String> {
    results(doc).iter().map(|r| r["name"].as_str().expect("result name is a string").to_string()).collect()
}

pub fn warning_codes(doc: &Value) -> Vec<String> {
    doc["warnings"]
        .as_array()
        .expect("warnings is an array")
        .iter()
        .map(|w| w["code"].as_str().expect("warning code is a string").to_string())
        .collect()
}

pub fn u64_at(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} is not an unsigned integer in {v}"))
}

pub fn f64_at(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

pub fn assert_close(actual: f64, expected: f64, what: &str) {
    let tol = 1e-6 * expected.abs().max(1e-12);
    assert!((actual - expected).abs() <= tol, "{what}: {actual} != {expected} (relative tolerance 1e-6)");
}

/// The contract of a direction's figures: one definition of iops/MB/s/MiB/s and
/// monotone latency percentiles.
pub fn check_dir_stats(d: &Value, what: &str) {
    assert!(d.is_object(), "{what}: expected an object, got {d}");
    let ops = u64_at(d, "ops") as f64;
    let bytes = u64_at(d, "bytes") as f64;
    let secs = f64_at(d, "seconds");
    assert!(secs > 0.0, "{what}: seconds must be > 0");
    assert_close(f64_at(d, "iops"), ops / secs, &format!("{what}.iops"));
    assert_close(f64_at(d, "mb_s"), bytes / 1e6 / secs, &format!("{what}.mb_s"));
    assert_close(f64_at(d, "mib_s"), bytes / 1_048_576.0 / secs, &format!("{what}.mib_s"));
    let lat = &d["lat_ns"];
    let p: Vec<u64> = ["min", "p50", "p90", "p99", "p99_9", "p99_99", "max"].iter().map(|k| u64_at(lat, k)).collect();
    assert!(p.windows(2).all(|w| w[0] <= w[1]), "{what}: percentiles not monotone: {p:?} in {lat}");
    let mean = f64_at(lat, "mean");
    assert!(mean >= p[0] as f64 && mean <= p[6] as f64, "{what}: mean {mean} outside [min, max] {lat}");
    assert!(f64_at(lat, "stddev") >= 0.0, "{what}: negative stddev");
    assert!(f64_at(d, "qd_mean") >= 0.0, "{what}: negative qd_mean");
}

/// A usage error: exit 2, one `error:` line naming `needle`, nothing on stdout.
pub fn assert_usage_error(o: &Output, needle: &str) {
    let err = stderr_of(o);
    assert_eq!(o.status.code(), Some(2), "expected exit 2, got {:?}; stderr:\n{err}", o.status);
    assert!(o.stdout.is_empty(), "stdout must be empty on a usage error, got:\n{}", stdout_of(o));
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "expected exactly one line on stderr, got:\n{err}");
    assert!(lines[0].starts_with("error: "), "stderr line must start with 'error: ': {err}");
    assert!(lines[0].contains(needle), "error line must mention {needle:?}: {err}");
}

/// A simple content hash of a whole file (std's SipHash; enough to notice any change).
pub fn hash_file(path: &Path) -> u64 {
    use std::hash::{Hash, Hasher};
    let bytes = std::fs::read(path).expect("read file to hash");
    let mut h = std::collections::hash_map::DefaultHasher::new();
    bytes.hash(&mut h);
    h.finish()
}

pub fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions.
    unsafe { libc::geteuid() == 0 }
}

/// Find an executable in PATH or the sbin directories.
pub fn find_tool(name: &str) -> Option<std::path::PathBuf> {
    let mut dirs: Vec<std::path::PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    for d in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        dirs.push(d.into());
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// Run `fio` (found by [`find_tool`]) on `job` in `dir` and parse its JSON output.
#[allow(dead_code)]
pub fn fio_json(fio: &Path, dir: &Path, job: &str) -> Value {
    let o = Command::new(fio).current_dir(dir).args(["--output-format=json", job]).output().expect("run fio");
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("fio's JSON for {job}: {e}; stderr: {}", String::from_utf8_lossy(&o.stderr)))
}

/// Why loop-device tests cannot run here, if they cannot.
pub fn loop_unavailable() -> Option<&'static str> {
    if !is_root() {
        return Some("not root");
    }
    if find_tool("losetup").is_none() {
        return Some("losetup is missing");
    }
    if !Path::new("/dev/loop-control").exists() {
        return Some("no /dev/loop-control");
    }
    None
}

/// True when the environment demands that root-only and loop-device tests run
/// (`DISKMETER_REQUIRE_LOOP=1`: CI sets it when it runs as root with loop devices).
pub fn loop_required() -> bool {
    std::env::var("DISKMETER_REQUIRE_LOOP").as_deref() == Ok("1")
}

/// A root-only or loop-device test cannot run here: say why on stderr and let the caller
/// return — or, under `DISKMETER_REQUIRE_LOOP=1`, fail instead of passing silently.
pub fn skip_note(why: &str) {
    if loop_required() {
        panic!("{why}, but DISKMETER_REQUIRE_LOOP=1 requires this test to run");
    }
    eprintln!("note: {why}");
}

/// Skip (return from) a loop-device test, with a note, where [`loop_unavailable`] says so;
/// fail instead under `DISKMETER_REQUIRE_LOOP=1`.
#[allow(unused_macros)]
macro_rules! require_loop {
    () => {
        if let Some(why) = loop_unavailable() {
            skip_note(&format!("{why}; loop-device test skipped"));
            return;
        }
    };
}

/// A loop device over an image file; detached (and the image's mount, if any, unmounted) on
/// drop, also when a test panics.
pub struct LoopDev {
    pub dev: std::path::PathBuf,
    pub mount: Option<std::path::PathBuf>,
}

impl LoopDev {
    /// The loop device `dev` (such as `/dev/loop3`, free) over a new zeroed image of `size`
    /// bytes at `image`: a device that gets the number an earlier one had.
    pub fn blank_at(dev: &Path, image: &Path, size: u64) -> LoopDev {
        std::fs::File::create(image).expect("create image").set_len(size).expect("size image");
        let out = std::process::Command::new("losetup").arg(dev).arg(image).output().expect("losetup");
        assert!(out.status.success(), "losetup {}: {}", dev.display(), String::from_utf8_lossy(&out.stderr));
        LoopDev { dev: dev.to_path_buf(), mount: None }
    }

    /// A loop device over a new zeroed image of `size` bytes at `image`.
    pub fn blank(image: &Path, size: u64) -> LoopDev {
        std::fs::File::create(image).expect("create image").set_len(size).expect("size image");
        let out =
            std::process::Command::new("losetup").args(["--find", "--show"]).arg(image).output().expect("losetup");
        assert!(out.status.success(), "losetup: {}", String::from_utf8_lossy(&out.stderr));
        LoopDev { dev: String::from_utf8_lossy(&out.stdout).trim().into(), mount: None }
    }

    pub fn dev_str(&self) -> &str {
        self.dev.to_str().expect("utf-8 device path")
    }

    /// mkfs.ext4 (with `mkfs_args`) and mount at `at` with `opts`; `None` where mkfs.ext4 is
    /// missing.
    pub fn ext4(&mut self, at: &Path, opts: &str) -> Option<()> {
        find_tool("mkfs.ext4")?;
        let st = std::process::Command::new("mkfs.ext4").args(["-q", "-F"]).arg(&self.dev).status().expect("mkfs");
        assert!(st.success(), "mkfs.ext4");
        std::fs::create_dir_all(at).expect("mount point");
        let st = std::process::Command::new("mount").args(["-o", opts]).arg(&self.dev).arg(at).status().expect("mount");
        assert!(st.success(), "mount -o {opts}");
        self.mount = Some(at.to_path_buf());
        Some(())
    }
}

impl Drop for LoopDev {
    fn drop(&mut self) {
        if let Some(m) = &self.mount {
            // Just after a run the file system can be busy for a moment (writeback): retry,
            // then detach it lazily rather than leave a mount behind.
            let quiet = |args: &[&str]| {
                std::process::Command::new("umount")
                    .args(args)
                    .arg(m)
                    .stderr(std::process::Stdio::null())
                    .status()
                    .is_ok_and(|s| s.success())
            };
            let mut done = false;
            for _ in 0..30 {
                if quiet(&[]) {
                    done = true;
                    break;
                }
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
            if !done {
                quiet(&["-l"]);
            }
        }
        let name = self.dev.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let attached = || Path::new(&format!("/sys/block/{name}/loop/backing_file")).exists();
        for _ in 0..30 {
            let _ = std::process::Command::new("losetup")
                .arg("-d")
                .arg(&self.dev)
                .stderr(std::process::Stdio::null())
                .status();
            if !attached() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// A size-limited tmpfs mounted for a test (root only); unmounted on drop, also on panic.
pub struct Tmpfs(pub std::path::PathBuf);

impl Tmpfs {
    /// Mounts a tmpfs of `size` (mount's syntax: `64k`, `32m`) at `dir`, creating it.
    pub fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).ok()?;
        let st = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .status()
            .ok()?;
        st.success().then(|| Tmpfs(dir.to_path_buf()))
    }

    /// Fills it to the last page with a file named `filler`: writes that follow get ENOSPC.
    pub fn fill(&self) {
        let _ = std::fs::remove_file(self.0.join("filler"));
        let _ = std::fs::write(self.0.join("filler"), vec![0u8; 1 << 20]);
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}

// ------------------------------------------------------------------ child processes

/// Reads a child's pipe on a thread so it can never block on a full pipe.
pub fn drain(mut r: impl std::io::Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = r.read_to_end(&mut v);
        v
    })
}

pub struct Spawned {
    pub child: std::process::Child,
    pub out: Option<std::thread::JoinHandle<Vec<u8>>>,
    pub err: Option<std::thread::JoinHandle<Vec<u8>>>,
}

impl Drop for Spawned {
    fn drop(&mut self) {
        // Never leave a 60 s benchmark running if an assertion failed.
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

pub fn spawn(dir: &Path, args: &[&str]) -> Spawned {
    let mut child = dm_std()
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn diskmeter");
    let out = child.stdout.take().map(drain);
    let err = child.stderr.take().map(drain);
    Spawned { child, out, err }
}

pub fn sigint(child: &std::process::Child) {
    send_signal(child, libc::SIGINT);
}

pub fn send_signal(child: &std::process::Child, sig: i32) {
    let pid = libc::pid_t::try_from(child.id()).expect("pid fits pid_t");
    // SAFETY: sending a signal to our own child process.
    let r = unsafe { libc::kill(pid, sig) };
    assert_eq!(r, 0, "kill({sig}) failed");
}

/// Wait for exit (up to `limit`); returns (exit code, stdout, stderr).
pub fn wait_exit(mut s: Spawned, limit: std::time::Duration) -> (Option<i32>, Vec<u8>, String) {
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(st) = s.child.try_wait().expect("try_wait") {
            break st;
        }
        assert!(std::time::Instant::now() < deadline, "diskmeter did not exit within {limit:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    let out = s.out.take().map(|h| h.join().expect("stdout reader")).unwrap_or_default();
    let err = s.err.take().map(|h| h.join().expect("stderr reader")).unwrap_or_default();
    (status.code(), out, String::from_utf8_lossy(&err).into_owned())
}
