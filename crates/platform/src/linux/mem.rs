//! /proc/meminfo, the auxiliary vector's page size, anonymous mappings, thread CPU time.

use std::path::Path;

pub fn total_bytes() -> Option<u64> {
    meminfo_total(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// `MemTotal` of a /proc/meminfo text, in bytes.
pub fn meminfo_total(text: &str) -> Option<u64> {
    meminfo_field(text, "MemTotal")
}

/// A `kB` field of /proc/meminfo, in bytes.
pub fn meminfo_field(text: &str, name: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// MemAvailable: what the kernel estimates it can give without swapping.
pub fn available_bytes() -> Option<u64> {
    parse_meminfo_available(&std::fs::read_to_string("/proc/meminfo").ok()?)
}

/// MemAvailable from /proc/meminfo text, in bytes.
pub fn parse_meminfo_available(meminfo: &str) -> Option<u64> {
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// A cgroup memory limit file's value: `max` (v2) or a huge v1 value means no limit.
pub fn parse_limit(s: &str) -> Option<u64> {
    let v: u64 = s.trim().parse().ok()?;
    (v < 1 << 62).then_some(v)
}

/// `inactive_file` (v2) or `total_inactive_file` (v1) of a memory.stat: page cache the kernel
/// reclaims first, so it is not counted as used.
pub fn parse_inactive_file(stat: &str) -> u64 {
    let get = |key: &str| {
        stat.lines().find_map(|l| {
            let (k, v) = l.split_once(' ')?;
            (k == key).then(|| v.trim().parse::<u64>().ok()).flatten()
        })
    };
    get("total_inactive_file").or_else(|| get("inactive_file")).unwrap_or(0)
}

/// Room under a limit: limit − (usage − reclaimable page cache).
pub fn room(limit: u64, usage: u64, inactive_file: u64) -> u64 {
    limit.saturating_sub(usage.saturating_sub(inactive_file))
}

/// This process's memory cgroup, from the text of /proc/self/cgroup and
/// /proc/self/mountinfo.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CgroupDir {
    /// Where the hierarchy is mounted (limits above it are not visible).
    pub mount: std::path::PathBuf,
    /// The process's cgroup directory under `mount`.
    pub dir: std::path::PathBuf,
    /// cgroup v2 (`memory.max`) rather than v1 (`memory.limit_in_bytes`).
    pub v2: bool,
}

/// Find this process's memory cgroup (the v1 memory controller when mounted, else v2).
pub fn cgroup_dir(proc_cgroup: &str, mountinfo: &str) -> Option<CgroupDir> {
    // mountinfo: id parent major:minor root mountpoint options - fstype source superoptions
    let mounts: Vec<(&str, &str, &str, &str)> = mountinfo
        .lines()
        .filter_map(|l| {
            let (pre, post) = l.split_once(" - ")?;
            let pre: Vec<&str> = pre.split(' ').collect();
            let post: Vec<&str> = post.split(' ').collect();
            Some((*pre.get(3)?, *pre.get(4)?, *post.first()?, *post.get(2)?))
        })
        .collect();
    let join = |root: &str, mount: &str, path: &str, v2: bool| {
        let rel = path.strip_prefix(root).unwrap_or(path).trim_start_matches('/');
        CgroupDir { mount: mount.into(), dir: std::path::Path::new(mount).join(rel), v2 }
    };
    // v1 memory controller first (its limits are the ones enforced when it is mounted).
    for l in proc_cgroup.lines() {
        let mut parts = l.splitn(3, ':');
        let (_, ctrls, path) = (parts.next()?, parts.next()?, parts.next()?);
        if ctrls.split(',').any(|c| c == "memory") {
            if let Some((root, mp, _, _)) =
                mounts.iter().find(|(_, _, fs, opts)| *fs == "cgroup" && opts.split(',').any(|o| o == "memory"))
            {
                return Some(join(root, mp, path, false));
            }
        }
    }
    for l in proc_cgroup.lines() {
        if let Some(path) = l.strip_prefix("0::") {
            if let Some((root, mp, _, _)) = mounts.iter().find(|(_, _, fs, _)| *fs == "cgroup2") {
                return Some(join(root, mp, path, true));
            }
        }
    }
    None
}

/// Room under the tightest memory limit of this process's cgroup and its ancestors.
pub fn cgroup_room() -> Option<u64> {
    let pc = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let mi = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let cg = cgroup_dir(&pc, &mi)?;
    let (limit_f, usage_f) =
        if cg.v2 { ("memory.max", "memory.current") } else { ("memory.limit_in_bytes", "memory.usage_in_bytes") };
    let mut best: Option<u64> = None;
    // The process's cgroup and every ancestor up to the mount: the tightest limit wins.
    let mut d = Some(cg.dir.as_path());
    while let Some(p) = d.filter(|p| p.starts_with(&cg.mount)) {
        let read = |f: &str| std::fs::read_to_string(p.join(f)).ok();
        if let (Some(limit), Some(usage)) = (read(limit_f).and_then(|s| parse_limit(&s)), read(usage_f)) {
            if let Ok(usage) = usage.trim().parse::<u64>() {
                let inactive = read("memory.stat").map(|s| parse_inactive_file(&s)).unwrap_or(0);
                let r = room(limit, usage, inactive);
                best = Some(best.map_or(r, |b| b.min(r)));
            }
        }
        d = p.parent();
    }
    best
}

/// Bytes of transparent huge pages in the mapping that starts at `addr`, from
/// /proc/self/smaps (`AnonHugePages`).
pub fn anon_huge_bytes(addr: usize) -> Option<usize> {
    let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
    let mut inside = false;
    for line in smaps.lines() {
        let head = line.split_whitespace().next().unwrap_or("");
        if let Some((a, b)) = head.split_once('-') {
            if let (Ok(a), Ok(b)) = (usize::from_str_radix(a, 16), usize::from_str_radix(b, 16)) {
                inside = a <= addr && addr < b;
                continue;
            }
        }
        if inside {
            if let Some(v) = line.strip_prefix("AnonHugePages:") {
                return v.trim().trim_end_matches("kB").trim().parse::<usize>().ok().map(|k| k * 1024);
            }
        }
    }
    None
}

/// Whether the process holds CAP_IPC_LOCK (then memlock limits do not bind it), from the
/// effective set in /proc/self/status.
pub fn has_cap_ipc_lock() -> bool {
    const CAP_IPC_LOCK: u32 = 14;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix("CapEff:")).and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
        })
        .is_some_and(|caps| caps & (1 << CAP_IPC_LOCK) != 0)
}

pub fn page_size() -> u64 {
    page_size_in(Path::new("/proc/self/auxv")).unwrap_or(4096)
}

/// The kernel's page size, as the auxiliary vector at `auxv` gives it (AT_PAGESZ = 6).
fn page_size_in(auxv: &Path) -> Option<u64> {
    let a = std::fs::read(auxv).ok()?;
    a.chunks_exact(16).find_map(|c| {
        let key = u64::from_ne_bytes(c[..8].try_into().ok()?);
        let value = u64::from_ne_bytes(c[8..].try_into().ok()?);
        (key == 6).then_some(value)
    })
}

/// A private anonymous mapping, unmapped on drop.
pub struct AnonMap {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned exclusively, as a Box owns its allocation.
unsafe impl Send for AnonMap {}
// SAFETY: shared references only read through `ptr`.
unsafe impl Sync for AnonMap {}

impl AnonMap {
    pub fn new(len: usize) -> Option<AnonMap> {
        // SAFETY: a fresh private anonymous mapping; no existing memory is affected.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        Some(AnonMap { ptr: std::ptr::NonNull::new(p.cast::<u8>())?, len })
    }

    /// `len` bytes at an address that is a multiple of `align` (a power of two): a mapping of
    /// `len + align` bytes with the part before and after that range unmapped again.
    pub fn aligned(len: usize, align: usize) -> Option<AnonMap> {
        let span = len.checked_add(align)?;
        let whole = AnonMap::new(span)?;
        let start = whole.ptr() as usize;
        let aligned = start.next_multiple_of(align);
        let head = aligned - start;
        let tail = span - head - len;
        // The ranges below are unmapped by hand; `whole` must not unmap the span.
        std::mem::forget(whole);
        // SAFETY: both ranges lie inside the mapping made above and are not used afterwards.
        unsafe {
            if head > 0 {
                libc::munmap(start as *mut libc::c_void, head);
            }
            if tail > 0 {
                libc::munmap((aligned + len) as *mut libc::c_void, tail);
            }
        }
        Some(AnonMap { ptr: std::ptr::NonNull::new(aligned as *mut u8)?, len })
    }

    /// Asks the kernel for transparent huge pages under the mapping (`MADV_HUGEPAGE`). Advice
    /// only: without THP the mapping still works, on ordinary pages.
    pub fn advise_huge_pages(&self) {
        // SAFETY: advice on exactly this mapping, which is ours.
        unsafe { libc::madvise(self.ptr.as_ptr().cast(), self.len, libc::MADV_HUGEPAGE) };
    }

    #[inline]
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Its length in bytes.
    #[inline]
    pub fn size(&self) -> usize {
        self.len
    }
}

impl Drop for AnonMap {
    fn drop(&mut self) {
        // SAFETY: unmaps exactly the mapping made in `new`, which nothing references any more.
        unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
    }
}

pub fn thread_cpu_time() -> std::time::Duration {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    std::time::Duration::new(u64::try_from(t.tv_sec).unwrap_or(0), u32::try_from(t.tv_nsec).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meminfo_and_cgroup_files() {
        assert_eq!(parse_meminfo_available("MemTotal: 100 kB\nMemAvailable:   2048 kB\n"), Some(2 << 20));
        assert_eq!(parse_meminfo_available("MemTotal: 100 kB\n"), None);
        assert_eq!(parse_limit("max\n"), None);
        assert_eq!(parse_limit("9223372036854771712\n"), None);
        assert_eq!(parse_limit("1073741824\n"), Some(1 << 30));
        assert_eq!(parse_inactive_file("anon 5\ninactive_file 4096\nactive_file 1\n"), 4096);
        assert_eq!(parse_inactive_file("cache 5\ninactive_file 1\ntotal_inactive_file 8192\n"), 8192);
        assert_eq!(room(1 << 30, 600 << 20, 100 << 20), 524 << 20);
        assert_eq!(room(1 << 30, 2 << 30, 0), 0);

        let mi = "24 1 0:22 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n";
        let c = cgroup_dir("0::/user.slice/session-1.scope\n", mi).expect("v2");
        assert_eq!(c.dir, std::path::Path::new("/sys/fs/cgroup/user.slice/session-1.scope"));
        assert_eq!(c.mount, std::path::Path::new("/sys/fs/cgroup"));
        assert!(c.v2);
        let mi = "35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n\
                  41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
        let pc = "4:memory:/process_api/97c8\n0::/\n";
        let c = cgroup_dir(pc, mi).expect("v1");
        assert_eq!(c.dir, std::path::Path::new("/sys/fs/cgroup/memory/process_api/97c8"));
        assert!(!c.v2);
        // A container that sees its own cgroup as the mount's root.
        let mi = "35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro - cgroup cgroup rw,memory\n";
        let c = cgroup_dir("4:memory:/docker/abc\n", mi).expect("container");
        assert_eq!(c.dir, std::path::Path::new("/sys/fs/cgroup/memory"));
        assert_eq!(cgroup_dir("1:cpu:/\n", "").map(|c| c.v2), None);
    }

    #[test]
    fn meminfo_fields() {
        let t = "MemTotal:       24576000 kB\nMemFree:  100 kB\nMemAvailable:   2048 kB\n";
        assert_eq!(meminfo_total(t), Some(24_576_000 * 1024));
        assert_eq!(meminfo_field(t, "MemAvailable"), Some(2048 * 1024));
        assert_eq!(meminfo_field(t, "Mem"), None, "a prefix is not a field");
    }

    #[test]
    fn page_size_from_a_fixture_auxv() {
        let d = tempfile::tempdir().expect("tempdir");
        let mut v = Vec::new();
        for (k, val) in [(3u64, 64u64), (6, 16384), (0, 0)] {
            v.extend_from_slice(&k.to_ne_bytes());
            v.extend_from_slice(&val.to_ne_bytes());
        }
        std::fs::write(d.path().join("auxv"), v).expect("auxv");
        assert_eq!(page_size_in(&d.path().join("auxv")), Some(16384));
        assert_eq!(page_size_in(&d.path().join("missing")), None);
    }
}
