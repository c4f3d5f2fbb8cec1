//! Memory facts and zeroed memory from the OS.

/// A private anonymous mapping of the OS, unmapped on drop (the engine's memory target).
#[cfg(target_os = "linux")]
pub use crate::linux::mem::AnonMap;
/// Committed zeroed pages of the OS (`VirtualAlloc`), released on drop (the engine's memory
/// target).
#[cfg(windows)]
pub use crate::windows::mem::AnonMap;

/// Total RAM in bytes, where the OS tells.
pub fn total_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::mem::total_bytes()
    }
    #[cfg(windows)]
    {
        crate::windows::mem::total_bytes()
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        None
    }
}

/// Memory the kernel can give without swapping (MemAvailable), where the OS tells.
pub fn available_bytes() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::mem::available_bytes()
    }
    #[cfg(windows)]
    {
        crate::windows::mem::available_bytes()
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        None
    }
}

/// Room left under the tightest memory limit of this process's control group and its
/// ancestors (cgroup v2 `memory.max`, v1 `memory.limit_in_bytes`; page cache the kernel reclaims
/// first does not count as used), if one applies.
pub fn cgroup_room() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::mem::cgroup_room()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Bytes of transparent huge pages backing the mapping that starts at `addr`, where the OS
/// tells (`AnonHugePages` of /proc/self/smaps on Linux).
pub fn anon_huge_bytes(addr: usize) -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        crate::linux::mem::anon_huge_bytes(addr)
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = addr;
        None
    }
}

/// Whether the kernel hands transparent huge pages to anonymous memory that asks for them
/// (`always` or `madvise` mode); false where unknown.
pub fn transparent_huge_pages() -> bool {
    #[cfg(target_os = "linux")]
    {
        let mode = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled").unwrap_or_default();
        mode.contains("[always]") || mode.contains("[madvise]")
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// Whether memory-locking limits bind this process (false: it may lock any amount, as Linux's
/// CAP_IPC_LOCK allows).
pub fn memlock_unlimited() -> bool {
    #[cfg(target_os = "linux")]
    {
        crate::linux::mem::has_cap_ipc_lock()
    }
    #[cfg(not(target_os = "linux"))]
    {
        false
    }
}

/// The kernel's page size (4096 where unknown).
pub fn page_size() -> u64 {
    #[cfg(target_os = "linux")]
    {
        crate::linux::mem::page_size()
    }
    #[cfg(windows)]
    {
        crate::windows::mem::page_size()
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        4096
    }
}

/// Zeroed memory of a fixed size straight from the kernel (anonymous pages, so untouched
/// pages cost nothing), owned like a `Box<[u64]>`. `None` where the OS refuses or has no such
/// mapping: the caller then allocates on the heap.
pub struct ZeroedPages {
    #[cfg(target_os = "linux")]
    map: crate::linux::mem::AnonMap,
    #[cfg(target_os = "linux")]
    len: usize,
    #[cfg(windows)]
    map: crate::windows::mem::AnonMap,
    #[cfg(windows)]
    len: usize,
}

impl ZeroedPages {
    /// `len` zeroed u64s.
    pub fn new(len: usize) -> Option<ZeroedPages> {
        #[cfg(target_os = "linux")]
        {
            Some(ZeroedPages { map: crate::linux::mem::AnonMap::new(len * 8)?, len })
        }
        #[cfg(windows)]
        {
            Some(ZeroedPages { map: crate::windows::mem::AnonMap::new(len.checked_mul(8)?)?, len })
        }
        #[cfg(not(any(target_os = "linux", windows)))]
        {
            let _ = len;
            None
        }
    }

    #[inline]
    pub fn as_slice(&self) -> &[u64] {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: the mapping holds `len` u64s, zero-initialised by the kernel and page
            // aligned, and lives as long as self.
            unsafe { std::slice::from_raw_parts(self.map.ptr().cast::<u64>(), self.len) }
        }
        #[cfg(windows)]
        {
            // SAFETY: the region holds `len` u64s, committed, zeroed by Windows and page
            // aligned, and lives as long as self.
            unsafe { std::slice::from_raw_parts(self.map.ptr().cast::<u64>(), self.len) }
        }
        #[cfg(not(any(target_os = "linux", windows)))]
        {
            &[]
        }
    }

    #[inline]
    pub fn as_mut_slice(&mut self) -> &mut [u64] {
        #[cfg(target_os = "linux")]
        {
            // SAFETY: as in as_slice; &mut self makes the access exclusive.
            unsafe { std::slice::from_raw_parts_mut(self.map.ptr().cast::<u64>(), self.len) }
        }
        #[cfg(windows)]
        {
            // SAFETY: as in as_slice; &mut self makes the access exclusive.
            unsafe { std::slice::from_raw_parts_mut(self.map.ptr().cast::<u64>(), self.len) }
        }
        #[cfg(not(any(target_os = "linux", windows)))]
        {
            &mut []
        }
    }
}

/// Size of a transparent huge page on x86-64 and arm64 with 4 KiB pages.
pub const HUGE_PAGE: usize = 2 << 20;

/// Windows gives `VirtualAlloc` regions on 64 KiB boundaries.
#[cfg(windows)]
const VIRTUAL_ALIGN: usize = 64 << 10;

/// Zeroed memory of the OS's own pages for I/O buffers, given back on drop. Where and how the
/// OS gives it ([`IoPages::new`]) is the OS's: Linux maps buffers that want huge pages
/// 2 MiB-aligned and asks for transparent huge pages; Windows gives every buffer
/// `VirtualAlloc` pages, 64 KiB-aligned (as DiskSpd's buffers). Taken once per buffer pool,
/// never per I/O.
pub struct IoPages {
    ptr: std::ptr::NonNull<u8>,
    size: usize,
    huge: bool,
    #[cfg(target_os = "linux")]
    _map: crate::linux::mem::AnonMap,
    #[cfg(windows)]
    _map: crate::windows::mem::AnonMap,
}

// SAFETY: the pages are owned exclusively, as a Box owns its allocation.
unsafe impl Send for IoPages {}
// SAFETY: shared references only read through `ptr`.
unsafe impl Sync for IoPages {}

impl IoPages {
    /// `len` bytes aligned to `align`, for buffers that want huge pages (`huge`: they hold
    /// large I/Os, whose pages must fit a queue's segment limit), where the OS gives such pages
    /// for them; `None` where it does not (or refuses): the caller then allocates on the heap.
    ///
    /// - Linux: only where `huge` and `align` ≤ [`HUGE_PAGE`]: a 2 MiB-aligned anonymous
    ///   mapping of whole huge pages (`len` rounded up), advised for transparent huge pages
    ///   (`MADV_HUGEPAGE`) and touched page by page, since huge pages are allocated at the first
    ///   fault and [`IoPages::huge`] looks for them;
    /// - Windows: wherever `align` ≤ 64 KiB: committed `VirtualAlloc` pages (`len` rounded up
    ///   to whole 4 KiB pages; [`IoPages::size`] is `len`).
    pub fn new(len: usize, align: usize, huge: bool) -> Option<IoPages> {
        #[cfg(target_os = "linux")]
        {
            if !huge || align > HUGE_PAGE {
                return None;
            }
            let size = len.checked_next_multiple_of(HUGE_PAGE)?;
            let map = crate::linux::mem::AnonMap::aligned(size, HUGE_PAGE)?;
            map.advise_huge_pages();
            let ptr = std::ptr::NonNull::new(map.ptr())?;
            // SAFETY: the mapping is `size` bytes, readable and writable, and owned here.
            let all = unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr(), size) };
            for page in all.chunks_mut(4096) {
                page[0] = 0;
            }
            let huge = anon_huge_bytes(ptr.as_ptr() as usize).is_some_and(|b| b >= size);
            Some(IoPages { ptr, size, huge, _map: map })
        }
        #[cfg(windows)]
        {
            let _ = huge;
            if align > VIRTUAL_ALIGN {
                return None;
            }
            let map = crate::windows::mem::AnonMap::new(len.checked_next_multiple_of(4096)?)?;
            let ptr = std::ptr::NonNull::new(map.ptr())?;
            Some(IoPages { ptr, size: len, huge: false, _map: map })
        }
        #[cfg(not(any(target_os = "linux", windows)))]
        {
            let _ = (len, align, huge);
            None
        }
    }

    /// The first byte.
    #[inline]
    pub fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// The bytes usable from [`IoPages::ptr`] on.
    #[inline]
    pub fn size(&self) -> usize {
        self.size
    }

    /// Whether the kernel put all of it on transparent huge pages (physically contiguous in
    /// 2 MiB pieces).
    #[inline]
    pub fn huge(&self) -> bool {
        self.huge
    }
}

/// CPU time of the calling thread, where the OS keeps one per thread.
pub fn thread_cpu_time() -> Option<std::time::Duration> {
    #[cfg(target_os = "linux")]
    {
        Some(crate::linux::mem::thread_cpu_time())
    }
    #[cfg(windows)]
    {
        crate::windows::mem::thread_cpu_time()
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_pages_are_zero_and_writable() {
        let Some(mut z) = ZeroedPages::new(1 << 16) else {
            eprintln!("note: no anonymous mapping here; skipped");
            return;
        };
        assert!(z.as_slice().iter().all(|&x| x == 0));
        z.as_mut_slice()[12345] = 7;
        assert_eq!(z.as_slice()[12345], 7);
    }

    #[test]
    fn io_pages_are_aligned_zeroed_and_as_large_as_asked() {
        match IoPages::new(3 << 20, 4096, true) {
            Some(p) => {
                let align = if cfg!(windows) { 64 << 10 } else { HUGE_PAGE };
                assert_eq!(p.ptr() as usize % align, 0);
                assert_eq!(p.size(), if cfg!(windows) { 3 << 20 } else { 4 << 20 });
                // SAFETY: the pages hold `size` bytes and live as long as `p`.
                let s = unsafe { std::slice::from_raw_parts_mut(p.ptr(), p.size()) };
                assert!(s.iter().all(|&b| b == 0));
                s[p.size() - 1] = 1;
            }
            None => assert!(!["linux", "windows"].contains(&std::env::consts::OS), "the OS gave no pages"),
        }
        // Linux maps only what wants huge pages; nobody maps past its alignment.
        assert_eq!(IoPages::new(4096, 4096, false).is_some(), cfg!(windows));
        assert!(IoPages::new(4 << 20, 4 << 20, true).is_none());
    }

    #[test]
    fn memory_facts() {
        assert!(page_size() >= 4096);
        if cfg!(any(target_os = "linux", windows)) {
            assert!(total_bytes().is_some_and(|b| b > 1 << 20));
            assert!(thread_cpu_time().is_some());
        }
    }
}
