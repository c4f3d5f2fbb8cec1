//! Memory facts (`GlobalMemoryStatusEx`, `GetSystemInfo`), `VirtualAlloc` regions and a
//! thread's CPU time (`GetThreadTimes`).

use std::time::Duration;
use windows_sys::Win32::Foundation::FILETIME;
use windows_sys::Win32::System::Memory::{
    VirtualAlloc, VirtualFree, MEM_COMMIT, MEM_RELEASE, MEM_RESERVE, PAGE_READWRITE,
};
use windows_sys::Win32::System::SystemInformation::{GetSystemInfo, GlobalMemoryStatusEx, MEMORYSTATUSEX, SYSTEM_INFO};
use windows_sys::Win32::System::Threading::{GetCurrentThread, GetThreadTimes};

/// The machine's memory status, or `None` if Windows does not give it.
fn status() -> Option<MEMORYSTATUSEX> {
    let mut m = MEMORYSTATUSEX { dwLength: std::mem::size_of::<MEMORYSTATUSEX>() as u32, ..Default::default() };
    // SAFETY: `m` is a local with its length set, as the call requires.
    (unsafe { GlobalMemoryStatusEx(&mut m) } != 0).then_some(m)
}

/// Total physical memory in bytes.
pub fn total_bytes() -> Option<u64> {
    status().map(|m| m.ullTotalPhys)
}

/// Physical memory available now (free, standby and zeroed pages), in bytes.
pub fn available_bytes() -> Option<u64> {
    status().map(|m| m.ullAvailPhys)
}

/// The page size (`dwPageSize` of `GetSystemInfo`).
pub fn page_size() -> u64 {
    let mut s = SYSTEM_INFO::default();
    // SAFETY: `s` is a local the call fills; it cannot fail.
    unsafe { GetSystemInfo(&mut s) };
    if s.dwPageSize == 0 {
        4096
    } else {
        u64::from(s.dwPageSize)
    }
}

/// Committed, zeroed, page-aligned private memory (`VirtualAlloc` with `MEM_RESERVE |
/// MEM_COMMIT`, `PAGE_READWRITE`), released on drop: the counterpart of Linux's anonymous
/// mapping. Windows gives pages zeroed on first touch, so untouched pages cost no RAM (they
/// count against the commit limit, though).
pub struct AnonMap {
    ptr: std::ptr::NonNull<u8>,
}

// SAFETY: the region is owned exclusively, as a Box owns its allocation.
unsafe impl Send for AnonMap {}
// SAFETY: shared references only read through `ptr`.
unsafe impl Sync for AnonMap {}

impl AnonMap {
    /// `len` bytes (rounded up to whole pages by Windows); `None` if Windows refuses (no
    /// commit left) or `len` is 0.
    pub fn new(len: usize) -> Option<AnonMap> {
        if len == 0 {
            return None;
        }
        // SAFETY: a fresh private region at an address Windows chooses; no existing memory is
        // affected.
        let p = unsafe { VirtualAlloc(std::ptr::null(), len, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE) };
        Some(AnonMap { ptr: std::ptr::NonNull::new(p.cast::<u8>())? })
    }

    /// Its first byte (page-aligned).
    #[inline]
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
}

impl Drop for AnonMap {
    fn drop(&mut self) {
        // SAFETY: releases exactly the region made in `new` (its base, size 0 as MEM_RELEASE
        // requires), which nothing references any more.
        unsafe { VirtualFree(self.ptr.as_ptr().cast(), 0, MEM_RELEASE) };
    }
}

/// A FILETIME span (100 ns units) as a duration.
fn span(t: FILETIME) -> Duration {
    let ticks = (u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime);
    Duration::from_nanos(ticks.saturating_mul(100))
}

/// The calling thread's CPU time, user and kernel (`GetThreadTimes`), if Windows gives it.
pub fn thread_cpu_time() -> Option<Duration> {
    let z = FILETIME { dwLowDateTime: 0, dwHighDateTime: 0 };
    let (mut created, mut exited, mut kernel, mut user) = (z, z, z, z);
    // SAFETY: the pseudo-handle of this thread; the four outputs are locals.
    let ok = unsafe { GetThreadTimes(GetCurrentThread(), &mut created, &mut exited, &mut kernel, &mut user) };
    (ok != 0).then(|| span(kernel) + span(user))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anon_map_is_zeroed_writable_and_aligned() {
        let len = 3 << 20;
        let m = AnonMap::new(len).expect("VirtualAlloc");
        assert_eq!(m.ptr() as usize % page_size() as usize, 0);
        // SAFETY: the region holds `len` bytes and lives as long as `m`; only this test uses it.
        let s = unsafe { std::slice::from_raw_parts_mut(m.ptr(), len) };
        assert!(s.iter().all(|&b| b == 0));
        s[0] = 1;
        s[len - 1] = 2;
        assert_eq!((s[0], s[len - 1]), (1, 2));
        assert!(AnonMap::new(0).is_none());
        drop(m);
    }

    #[test]
    fn memory_and_cpu_facts() {
        let total = total_bytes().expect("total");
        assert!(total > 1 << 24);
        assert!(available_bytes().is_some_and(|a| a <= total));
        assert!(page_size() >= 4096);
        let t0 = thread_cpu_time().expect("thread times");
        let mut x = 0u64;
        for i in 0..20_000_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
        assert!(thread_cpu_time().expect("thread times") >= t0);
    }
}
