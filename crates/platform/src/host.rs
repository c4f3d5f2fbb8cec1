//! Facts about the machine for a result's envelope.

/// The CPU's model name, where the OS tells (`/proc/cpuinfo` on Linux).
pub fn cpu_model() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        parse_cpu_model(&std::fs::read_to_string("/proc/cpuinfo").ok()?)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Reads a file of the OS's own tree (Linux only; elsewhere `Unsupported`).
fn os_file(path: &str) -> std::io::Result<String> {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_to_string(path)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = path;
        Err(std::io::ErrorKind::Unsupported.into())
    }
}

/// The kernel's uptime report as it stands (`/proc/uptime`: seconds up and idle), raw: `top`
/// records it verbatim so that a recording replays through the same parser.
pub fn uptime_text() -> std::io::Result<String> {
    // Windows: the milliseconds since boot (`GetTickCount64`) in the same form, "SECS.CC 0.00"
    // (no idle figure), so that `top`'s clock reads it through the one parser.
    #[cfg(windows)]
    {
        // SAFETY: no arguments; it only reads the system's tick count.
        let ms = unsafe { windows_sys::Win32::System::SystemInformation::GetTickCount64() };
        Ok(format!("{}.{:02} 0.00\n", ms / 1000, ms % 1000 / 10))
    }
    #[cfg(not(windows))]
    {
        os_file("/proc/uptime")
    }
}

/// The kernel's I/O pressure report (`/proc/pressure/io`), raw; `None` without PSI.
pub fn io_pressure_text() -> Option<String> {
    os_file("/proc/pressure/io").ok()
}

/// The `kernel.task_delayacct` sysctl, raw; `None` where the kernel has no such switch.
pub fn task_delayacct_text() -> Option<String> {
    os_file("/proc/sys/kernel/task_delayacct").ok()
}

/// Host name and kernel release (empty where unknown). On Windows: the computer's name and
/// [`os_version`].
pub fn hostname_and_release() -> (String, String) {
    #[cfg(windows)]
    {
        (crate::windows::host::hostname(), crate::windows::host::os_version())
    }
    #[cfg(not(windows))]
    {
        let rd = |p: &str| os_file(p).map(|s| s.trim().to_string()).unwrap_or_default();
        (rd("/proc/sys/kernel/hostname"), rd("/proc/sys/kernel/osrelease"))
    }
}

/// The kernel's release and the host's name as `uname(2)` gives them on Linux
/// (`6.1.0-18-amd64`, `db1`); elsewhere the OS's version stands for the kernel's
/// ([`hostname_and_release`]: `Windows 10.0.19045`). Empty where unknown.
pub fn kernel_and_hostname() -> (String, String) {
    #[cfg(target_os = "linux")]
    {
        let uname = rustix::system::uname();
        (uname.release().to_string_lossy().into_owned(), uname.nodename().to_string_lossy().into_owned())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let (hostname, kernel) = hostname_and_release();
        (kernel, hostname)
    }
}

/// The OS's name as Rust spells it: `linux`, `windows`, … (`std::env::consts::OS`).
pub fn os_name() -> &'static str {
    std::env::consts::OS
}

/// The OS's version: Linux's kernel release (`6.1.0-18-amd64`), Windows's
/// `Windows 10.0.19045`; empty where unknown.
pub fn os_version() -> String {
    #[cfg(windows)]
    {
        crate::windows::host::os_version()
    }
    #[cfg(not(windows))]
    {
        os_file("/proc/sys/kernel/osrelease").map(|s| s.trim().to_string()).unwrap_or_default()
    }
}

/// Wine's version (`8.0`) when this Windows program runs under Wine; `None` on Windows itself
/// and on every other OS.
pub fn wine_version() -> Option<String> {
    #[cfg(windows)]
    {
        crate::windows::host::wine_version()
    }
    #[cfg(not(windows))]
    {
        None
    }
}

/// Whether this process runs as root (effective user 0).
pub fn is_root() -> bool {
    #[cfg(target_os = "linux")]
    {
        rustix::process::geteuid().is_root()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Whether process `pid` exists.
pub fn process_exists(pid: u32) -> bool {
    #[cfg(target_os = "linux")]
    {
        std::path::Path::new(&format!("/proc/{pid}")).exists()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = pid;
        false
    }
}

/// Where tracefs may be: its usual mount points, then every `tracefs` mount of this process.
pub fn tracefs_candidates() -> Vec<std::path::PathBuf> {
    #[cfg(target_os = "linux")]
    {
        let mut v: Vec<std::path::PathBuf> =
            ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"].iter().map(std::path::PathBuf::from).collect();
        v.extend(
            crate::mounts::read(&crate::block::Roots::default())
                .into_iter()
                .filter(|m| m.fstype == "tracefs")
                .map(|m| m.mount_point),
        );
        v
    }
    #[cfg(not(target_os = "linux"))]
    {
        Vec::new()
    }
}

/// The model line of a /proc/cpuinfo text (x86's `model name`, the ARM and MIPS spellings).
pub fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Model", "cpu model", "Hardware", "cpu"] {
        for line in cpuinfo.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim() == key && !v.trim().is_empty() {
                    return Some(v.trim().to_string());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_facts() {
        assert_eq!(os_name(), std::env::consts::OS);
        if cfg!(any(target_os = "linux", windows)) {
            assert!(!os_version().is_empty());
            assert_eq!(hostname_and_release().1, os_version());
        }
        if !cfg!(windows) {
            assert_eq!(wine_version(), None);
        }
    }

    #[test]
    fn cpu_model_lines() {
        assert_eq!(parse_cpu_model("processor : 0\nmodel name\t: AMD EPYC 7B13\n").as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(parse_cpu_model("processor : 0\n"), None);
    }
}
