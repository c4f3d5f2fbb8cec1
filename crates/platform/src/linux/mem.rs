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

    #[inline]
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
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
