//! Running smartctl: `smartctl -j -a [-d TYPE] DEV`, `-j --version`, `-t KIND`, `-X`.
//!
//! The [`SmartSource`] trait has a real implementation ([`Smartctl`]) and a fixture one
//! ([`FixtureSource`]) so the rest of the crate is tested on crafted JSON.

use crate::exit::ExitStatus;
use crate::process::{self, RunError};
use crate::HealthError;
use serde_json::Value;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

/// The oldest smartctl with JSON output (`-j`, smartmontools 7.0, 2018-12-30).
pub const MIN_VERSION: (u32, u32) = (7, 0);

/// How long one smartctl call may take before it is killed (`--smartctl-timeout`).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

/// How to get smartctl, for messages.
#[cfg(not(windows))]
pub const INSTALL_HINT: &str = "install smartmontools ≥ 7.0 (apt-get install smartmontools; \
     dnf install smartmontools) or point --smartctl / DISKMETER_SMARTCTL at one";
/// How to get smartctl, for messages.
#[cfg(windows)]
pub const INSTALL_HINT: &str = "install smartmontools for Windows ≥ 7.0 (https://www.smartmontools.org) or \
     point --smartctl / DISKMETER_SMARTCTL at smartctl.exe";

/// One smartctl answer: the JSON document and the exit status bitmask.
#[derive(Debug, Clone)]
pub struct SmartOutput {
    pub json: Value,
    pub exit: ExitStatus,
}

/// Self-test kinds (`smartctl -t short|long|conveyance`, `-X` aborts).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SelfTestKind {
    Short,
    Long,
    Conveyance,
    Abort,
}

impl SelfTestKind {
    pub fn parse(option: &str, s: &str) -> Result<Self, HealthError> {
        match s.trim().to_ascii_lowercase().as_str() {
            "short" => Ok(Self::Short),
            "long" | "extended" => Ok(Self::Long),
            "conveyance" => Ok(Self::Conveyance),
            "abort" => Ok(Self::Abort),
            other => Err(HealthError::usage(
                option,
                format!("\"{other}\" is not a self-test; use short, long, conveyance or abort"),
            )),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Short => "short",
            Self::Long => "long",
            Self::Conveyance => "conveyance",
            Self::Abort => "abort",
        }
    }

    /// smartctl's arguments for this kind.
    pub fn args(self) -> Vec<&'static str> {
        match self {
            Self::Abort => vec!["-X"],
            k => vec!["-t", k.name()],
        }
    }
}

/// Where SMART data comes from.
pub trait SmartSource {
    /// smartctl's version, `[major, minor]` of `smartctl.version`.
    fn version(&self) -> Result<(u32, u32), HealthError>;
    /// `smartctl -j -a [-d TYPE] DEV`.
    fn query(&self, dev: &Path, dev_type: Option<&str>) -> Result<SmartOutput, HealthError>;
    /// `smartctl -j -t KIND DEV` or `smartctl -j -X DEV`.
    fn self_test(&self, dev: &Path, dev_type: Option<&str>, kind: SelfTestKind) -> Result<SmartOutput, HealthError>;
    /// What to call this source in messages (the smartctl path).
    fn describe(&self) -> String;
}

/// stdout, stderr and exit code of one smartctl run.
type RawRun = (Vec<u8>, Vec<u8>, Option<i32>);

/// Check a smartctl timeout (`option` names it in the error): it must be above zero.
pub fn check_timeout(option: &str, timeout: Duration) -> Result<Duration, HealthError> {
    if timeout.is_zero() {
        return Err(HealthError::usage(
            option,
            "a timeout of 0 gives smartctl no time to answer; use a duration such as 60s (the default) or 2m",
        ));
    }
    Ok(timeout)
}

/// A timeout for messages: `60 s`, `1.5 s`, `500 ms`.
pub fn format_timeout(t: Duration) -> String {
    if t < Duration::from_secs(1) {
        let ms = t.as_secs_f64() * 1000.0;
        let text = format!("{ms:.3}");
        format!("{} ms", text.trim_end_matches('0').trim_end_matches('.'))
    } else {
        let text = format!("{:.3}", t.as_secs_f64());
        format!("{} s", text.trim_end_matches('0').trim_end_matches('.'))
    }
}

/// The real smartctl.
#[derive(Debug, Clone)]
pub struct Smartctl {
    pub path: PathBuf,
    /// How long one call may take; then smartctl and everything it started are killed.
    pub timeout: Duration,
    /// Raised by a Ctrl-C (or SIGTERM) handler: a running smartctl is killed and no new
    /// one starts.
    pub stop: Option<Arc<AtomicBool>>,
}

impl Smartctl {
    /// Find smartctl: an explicit path, else PATH plus /usr/sbin and /sbin (where
    /// distributions install it, often outside a normal user's PATH); on Windows
    /// `smartctl.exe` in PATH, then in smartmontools' installation folder
    /// (`%ProgramFiles%\smartmontools\bin`).
    pub fn locate(explicit: Option<&Path>) -> Result<Self, HealthError> {
        if let Some(p) = explicit {
            if !p.is_file() {
                return Err(HealthError::Smartctl(format!("smartctl not found at {}: {INSTALL_HINT}", p.display())));
            }
            return Ok(Self::new(p.to_path_buf()));
        }
        let mut dirs: Vec<PathBuf> =
            std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
        #[cfg(not(windows))]
        let (program, places) = {
            for d in ["/usr/sbin", "/sbin", "/usr/local/sbin"] {
                dirs.push(d.into());
            }
            ("smartctl", "PATH, /usr/sbin or /sbin")
        };
        #[cfg(windows)]
        let (program, places) = {
            let pf = std::env::var_os("ProgramFiles").map_or_else(|| PathBuf::from(r"C:\Program Files"), PathBuf::from);
            dirs.push(pf.join(r"smartmontools\bin"));
            ("smartctl.exe", r"PATH or %ProgramFiles%\smartmontools\bin")
        };
        dirs.into_iter()
            .map(|d| d.join(program))
            .find(|p| p.is_file())
            .map(Self::new)
            .ok_or_else(|| HealthError::Smartctl(format!("smartctl not found in {places}: {INSTALL_HINT}")))
    }

    /// The smartctl at `path`, with the default timeout and no stop flag.
    pub fn new(path: PathBuf) -> Self {
        Self { path, timeout: DEFAULT_TIMEOUT, stop: None }
    }

    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    pub fn with_stop(mut self, stop: Arc<AtomicBool>) -> Self {
        self.stop = Some(stop);
        self
    }

    fn run(&self, args: &[&str], dev: Option<&Path>) -> Result<RawRun, HealthError> {
        let mut cmd = Command::new(&self.path);
        cmd.args(args).env("LC_ALL", "C");
        if let Some(d) = dev {
            cmd.arg(d);
        }
        let what = match dev {
            Some(d) => format!("for {}", d.display()),
            None => format!("to {}", args.join(" ")),
        };
        let line = || {
            let mut words = vec![self.path.display().to_string()];
            words.extend(args.iter().map(|a| a.to_string()));
            words.extend(dev.map(|d| d.display().to_string()));
            words.join(" ")
        };
        match process::run(cmd, self.timeout, self.stop.as_deref()) {
            Ok(out) => Ok((out.stdout, out.stderr, out.status.code())),
            Err(RunError::Spawn(e)) => {
                Err(HealthError::Smartctl(format!("cannot run {}: {e}; {INSTALL_HINT}", self.path.display())))
            }
            Err(RunError::Io(e)) => Err(HealthError::Smartctl(format!("running `{}` failed: {e}", line()))),
            Err(RunError::TimedOut) => Err(HealthError::Smartctl(format!(
                "smartctl did not answer within {} {what} and was killed (`{}`); raise --smartctl-timeout \
                 if the disk is only slow",
                format_timeout(self.timeout),
                line()
            ))),
            Err(RunError::Interrupted) => {
                Err(HealthError::Smartctl(format!("interrupted: smartctl {what} was stopped (`{}`)", line())))
            }
        }
    }

    fn json_run(&self, args: &[&str], dev: &Path) -> Result<SmartOutput, HealthError> {
        let (stdout, stderr, code) = self.run(args, Some(dev))?;
        let Some(code) = code else {
            return Err(HealthError::Smartctl(format!("{} was killed by a signal", self.path.display())));
        };
        parse_output(&stdout, &stderr, code, &self.path)
    }
}

/// Turn smartctl's stdout and exit code into a [`SmartOutput`].
pub fn parse_output(stdout: &[u8], stderr: &[u8], code: i32, path: &Path) -> Result<SmartOutput, HealthError> {
    match serde_json::from_slice::<Value>(stdout) {
        Ok(json) if json.is_object() => {
            // The process status is the truth; the JSON copy is used when it is all we have.
            let from_json = json.pointer("/smartctl/exit_status").and_then(Value::as_u64);
            let exit = u8::try_from(code).ok().or(from_json.and_then(|v| u8::try_from(v).ok())).unwrap_or(0);
            Ok(SmartOutput { json, exit: ExitStatus(exit) })
        }
        _ => {
            let text = String::from_utf8_lossy(if stdout.is_empty() { stderr } else { stdout });
            let first = text.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("no output");
            Err(HealthError::Smartctl(format!(
                "{} did not print JSON (exit status {code}): {first}; diskmeter needs smartctl ≥ 7.0 with -j",
                path.display()
            )))
        }
    }
}

/// The version from `smartctl -j --version` (JSON), or from the first line of a
/// pre-7.0 smartctl's text (`smartctl 6.6 2016-05-31 r4324 …`) to name it in the error.
pub fn parse_version(stdout: &[u8]) -> Option<(u32, u32)> {
    if let Ok(v) = serde_json::from_slice::<Value>(stdout) {
        let ver = v.pointer("/smartctl/version")?.as_array()?;
        let major = u32::try_from(ver.first()?.as_u64()?).ok()?;
        let minor = u32::try_from(ver.get(1).and_then(Value::as_u64).unwrap_or(0)).ok()?;
        return Some((major, minor));
    }
    let text = String::from_utf8_lossy(stdout);
    let line = text.lines().find(|l| l.trim_start().starts_with("smartctl "))?;
    let ver = line.split_whitespace().nth(1)?;
    let (maj, min) = ver.split_once('.').unwrap_or((ver, "0"));
    let min: String = min.chars().take_while(char::is_ascii_digit).collect();
    Some((maj.parse().ok()?, min.parse().unwrap_or(0)))
}

/// Refuse a smartctl older than [`MIN_VERSION`].
pub fn check_version(v: (u32, u32), path: &str) -> Result<(), HealthError> {
    if v < MIN_VERSION {
        return Err(HealthError::Smartctl(format!(
            "{path} is smartctl {}.{}, too old: diskmeter reads smartctl's JSON output, which needs smartctl ≥ {}.{}; {INSTALL_HINT}",
            v.0, v.1, MIN_VERSION.0, MIN_VERSION.1
        )));
    }
    Ok(())
}

fn dtype_args(dev_type: Option<&str>) -> Vec<&str> {
    dev_type.map(|t| vec!["-d", t]).unwrap_or_default()
}

impl SmartSource for Smartctl {
    fn version(&self) -> Result<(u32, u32), HealthError> {
        // An old smartctl rejects -j, so ask twice: JSON first, then plain text.
        let (out, _, _) = self.run(&["-j", "--version"], None)?;
        if let Some(v) = parse_version(&out) {
            return Ok(v);
        }
        let (out, err, _) = self.run(&["--version"], None)?;
        parse_version(&out).ok_or_else(|| {
            let text = String::from_utf8_lossy(if out.is_empty() { &err } else { &out }).into_owned();
            HealthError::Smartctl(format!(
                "{} does not look like smartctl (its --version printed: {}); {INSTALL_HINT}",
                self.path.display(),
                text.lines().next().unwrap_or("nothing")
            ))
        })
    }

    fn query(&self, dev: &Path, dev_type: Option<&str>) -> Result<SmartOutput, HealthError> {
        let mut args = vec!["-j", "-a"];
        args.extend(dtype_args(dev_type));
        self.json_run(&args, dev)
    }

    fn self_test(&self, dev: &Path, dev_type: Option<&str>, kind: SelfTestKind) -> Result<SmartOutput, HealthError> {
        let mut args = vec!["-j"];
        args.extend(kind.args());
        args.extend(dtype_args(dev_type));
        self.json_run(&args, dev)
    }

    fn describe(&self) -> String {
        self.path.display().to_string()
    }
}

/// Canned answers, for tests: one or more `-a` documents per device path (served in
/// order, the last one repeating) and the answer to self-test commands.
#[derive(Debug, Default)]
pub struct FixtureSource {
    pub version: Option<(u32, u32)>,
    pub answers: HashMap<PathBuf, Vec<SmartOutput>>,
    pub self_test_answer: Option<SmartOutput>,
    served: std::cell::RefCell<HashMap<PathBuf, usize>>,
    /// Every command run, as "query /dev/sda" or "self_test short /dev/sda".
    pub log: std::cell::RefCell<Vec<String>>,
}

impl FixtureSource {
    pub fn new(version: (u32, u32)) -> Self {
        Self { version: Some(version), ..Default::default() }
    }

    /// Add an answer for `dev` from fixture JSON text; the exit status is taken from
    /// the document's `smartctl.exit_status`.
    pub fn with(mut self, dev: &str, json_text: &str) -> Result<Self, HealthError> {
        let json: Value = serde_json::from_str(json_text)
            .map_err(|e| HealthError::Runtime(format!("fixture for {dev} is not JSON: {e}")))?;
        let exit = json.pointer("/smartctl/exit_status").and_then(Value::as_u64).unwrap_or(0);
        let out = SmartOutput { json, exit: ExitStatus(u8::try_from(exit).unwrap_or(u8::MAX)) };
        self.answers.entry(PathBuf::from(dev)).or_default().push(out);
        Ok(self)
    }
}

impl SmartSource for FixtureSource {
    fn version(&self) -> Result<(u32, u32), HealthError> {
        self.version.ok_or_else(|| HealthError::Smartctl(format!("smartctl not found: {INSTALL_HINT}")))
    }

    fn query(&self, dev: &Path, _dev_type: Option<&str>) -> Result<SmartOutput, HealthError> {
        self.log.borrow_mut().push(format!("query {}", dev.display()));
        let list =
            self.answers.get(dev).ok_or_else(|| HealthError::Smartctl(format!("no fixture for {}", dev.display())))?;
        let mut served = self.served.borrow_mut();
        let n = served.entry(dev.to_path_buf()).or_insert(0);
        let i = (*n).min(list.len().saturating_sub(1));
        *n += 1;
        list.get(i).cloned().ok_or_else(|| HealthError::Smartctl(format!("no fixture for {}", dev.display())))
    }

    fn self_test(&self, dev: &Path, _dev_type: Option<&str>, kind: SelfTestKind) -> Result<SmartOutput, HealthError> {
        self.log.borrow_mut().push(format!("self_test {} {}", kind.name(), dev.display()));
        self.self_test_answer.clone().ok_or_else(|| HealthError::Smartctl("no self-test fixture".into()))
    }

    fn describe(&self) -> String {
        "fixture".into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn version_from_json_and_text() {
        let j = br#"{"json_format_version":[1,0],"smartctl":{"version":[7,3],"exit_status":0}}"#;
        assert_eq!(parse_version(j), Some((7, 3)));
        let t = b"smartctl 6.6 2016-05-31 r4324 [x86_64-linux-4.9.0] (local build)\nCopyright (C) 2002-16";
        assert_eq!(parse_version(t), Some((6, 6)));
        assert_eq!(parse_version(b"bash: smartctl: command not found"), None);
        assert!(check_version((6, 6), "smartctl").unwrap_err().to_string().contains("≥ 7.0"));
        assert!(check_version((7, 0), "smartctl").is_ok());
        assert!(check_version((7, 3), "smartctl").is_ok());
    }

    #[test]
    fn output_needs_json() {
        let e = parse_output(b"", b"smartctl: invalid option -- 'j'", 1, Path::new("smartctl")).unwrap_err();
        assert!(e.to_string().contains("invalid option"), "{e}");
        let ok = parse_output(br#"{"smartctl":{"exit_status":4}}"#, b"", 4, Path::new("s")).unwrap();
        assert_eq!(ok.exit, ExitStatus(4));
    }

    #[test]
    fn self_test_kinds() {
        assert_eq!(SelfTestKind::parse("--self-test", "LONG").unwrap(), SelfTestKind::Long);
        assert_eq!(SelfTestKind::Abort.args(), vec!["-X"]);
        assert_eq!(SelfTestKind::Short.args(), vec!["-t", "short"]);
        assert!(SelfTestKind::parse("--self-test", "quick").unwrap_err().to_string().contains("--self-test"));
    }

    #[test]
    fn timeouts() {
        assert_eq!(format_timeout(DEFAULT_TIMEOUT), "60 s");
        assert_eq!(format_timeout(Duration::from_millis(1500)), "1.5 s");
        assert_eq!(format_timeout(Duration::from_millis(500)), "500 ms");
        assert_eq!(format_timeout(Duration::from_micros(2500)), "2.5 ms");
        let e = check_timeout("--smartctl-timeout", Duration::ZERO).unwrap_err();
        assert!(e.is_usage() && e.to_string().starts_with("invalid value for --smartctl-timeout: "), "{e}");
        assert_eq!(check_timeout("--smartctl-timeout", Duration::from_secs(1)).unwrap(), Duration::from_secs(1));
        assert_eq!(Smartctl::new("smartctl".into()).timeout, DEFAULT_TIMEOUT);
    }

    proptest! {
        #[test]
        fn version_parser_never_panics(s in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = parse_version(&s);
        }

        #[test]
        fn version_text_round_trip(a in 0u32..100, b in 0u32..100) {
            let line = format!("smartctl {a}.{b} 2022-02-28 r5338 [x86_64-linux] (local build)\n");
            prop_assert_eq!(parse_version(line.as_bytes()), Some((a, b)));
        }
    }
}
