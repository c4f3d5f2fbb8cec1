//! Aligned I/O buffers and their contents.
//!
//! Write data must be incompressible and unique per write without costing the engine its
//! speed: every buffer is filled once with random bytes, and before each write only the
//! first 16 bytes of every 4 KiB chunk are stamped with a per-write counter and the chunk's
//! offset. Every 4 KiB chunk ever written therefore differs (defeats dedup) while the rest
//! stays random (defeats compression) — at 16 bytes of work per 4 KiB.

use rand::RngCore;
use spec::DataPattern;
use std::alloc::{alloc_zeroed, dealloc, Layout};
use std::ptr::NonNull;

pub const CHUNK: usize = 4096;
const STAMP: usize = 16;

/// One contiguous, aligned allocation split into equal slots.
///
/// The device sees an I/O as one request only when the buffer's pages fit in the queue's
/// `max_segments` (a loop device: 128 segments of up to 64 KiB). A 1 MiB buffer on scattered
/// 4 KiB pages needs 256 segments and is split in two; on one physically contiguous huge page
/// it needs 16. Pools of 2 MiB and more are therefore mapped 2 MiB-aligned and asked for
/// transparent huge pages (`MADV_HUGEPAGE`); [`BufferPool::huge_pages`] says whether the kernel
/// gave them, so a result can state the fallback.
pub struct BufferPool {
    ptr: NonNull<u8>,
    backing: Backing,
    len: usize,
    slot_len: usize,
    slots: usize,
    huge: bool,
}

enum Backing {
    Heap(Layout),
    /// Pages of the OS's own (`platform::mem::IoPages`: Linux's 2 MiB-aligned mapping advised
    /// for huge pages; Windows' `VirtualAlloc`, 64 KiB-aligned, as DiskSpd's buffers). Freed
    /// by their own drop.
    Os(#[allow(dead_code)] platform::mem::IoPages),
}

/// Size of a transparent huge page on x86-64 and arm64 with 4 KiB pages.
pub const HUGE_PAGE: usize = platform::mem::HUGE_PAGE;

// SAFETY: the pool owns its allocation; slots are handed out by index to a single worker
// thread and never aliased across threads.
unsafe impl Send for BufferPool {}

impl BufferPool {
    pub fn new(slots: usize, slot_len: usize, align: usize) -> Option<Self> {
        let total = slots.checked_mul(slot_len)?.max(1);
        // Pages of the OS's where it gives them for such a pool (see `IoPages::new`): touched,
        // so the pool says whether the kernel gave huge pages.
        if let Some(pages) = platform::mem::IoPages::new(total, align, Self::wants_huge(slots, slot_len)) {
            let (ptr, len, huge) = (NonNull::new(pages.ptr())?, pages.size(), pages.huge());
            return Some(Self { ptr, backing: Backing::Os(pages), len, slot_len, slots, huge });
        }
        let layout = Layout::from_size_align(total, align.max(CHUNK)).ok()?;
        // SAFETY: layout has non-zero size.
        let ptr = NonNull::new(unsafe { alloc_zeroed(layout) })?;
        Some(Self { ptr, backing: Backing::Heap(layout), len: total, slot_len, slots, huge: false })
    }

    /// Pools that hold I/Os above 64 KiB (where scattered pages can exceed a queue's segment
    /// limit), or that are 2 MiB or more, go on huge pages.
    pub fn wants_huge(slots: usize, slot_len: usize) -> bool {
        slot_len > 16 * CHUNK || slots.saturating_mul(slot_len) >= HUGE_PAGE
    }

    /// Bytes a pool of this shape occupies (a huge-page pool is a whole number of 2 MiB pages).
    pub fn footprint(slots: usize, slot_len: usize) -> usize {
        let total = slots.saturating_mul(slot_len).max(1);
        if Self::wants_huge(slots, slot_len) {
            total.next_multiple_of(HUGE_PAGE)
        } else {
            total.next_multiple_of(CHUNK)
        }
    }

    /// True when the whole pool sits on transparent huge pages (physically contiguous in 2 MiB
    /// pieces), so an I/O of up to 2 MiB is one segment run.
    pub fn huge_pages(&self) -> bool {
        self.huge
    }

    pub fn slot_len(&self) -> usize {
        self.slot_len
    }
    pub fn slots(&self) -> usize {
        self.slots
    }
    pub fn base(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    pub fn total_len(&self) -> usize {
        self.len
    }

    /// Pointer to the start of slot `i`.
    #[inline]
    pub fn slot_ptr(&self, i: usize) -> *mut u8 {
        debug_assert!(i < self.slots);
        // SAFETY: i < slots, so the offset stays inside the allocation.
        unsafe { self.ptr.as_ptr().add(i * self.slot_len) }
    }

    #[inline]
    pub fn slot_mut(&mut self, i: usize) -> &mut [u8] {
        // SAFETY: slot i lies inside the allocation and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.slot_ptr(i), self.slot_len) }
    }

    /// Fill every slot according to the data pattern.
    pub fn fill(&mut self, pattern: DataPattern, rng: &mut impl RngCore) {
        // SAFETY: the whole allocation is ours and initialised (zeroed).
        let all = unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) };
        fill_pattern(all, pattern, rng);
    }
}

impl Drop for BufferPool {
    fn drop(&mut self) {
        match self.backing {
            // SAFETY: allocated in `new` with this layout.
            Backing::Heap(layout) => unsafe { dealloc(self.ptr.as_ptr(), layout) },
            // The pages give themselves back.
            Backing::Os(_) => {}
        }
    }
}

/// Fill `buf` with the pattern (random bytes, zeros, or chunks that are PCT % zeros).
pub fn fill_pattern(buf: &mut [u8], pattern: DataPattern, rng: &mut impl RngCore) {
    match pattern {
        DataPattern::Zeros => buf.fill(0),
        DataPattern::Random => rng.fill_bytes(buf),
        DataPattern::Compress { pct } => {
            for chunk in buf.chunks_mut(CHUNK) {
                let zeros = chunk.len() * pct.min(100) as usize / 100;
                let (z, r) = chunk.split_at_mut(chunk.len() - zeros);
                rng.fill_bytes(z);
                r.fill(0);
            }
        }
    }
}

/// Make the buffer unique for this write: stamp each 4 KiB chunk's first 16 bytes with a
/// per-write tag and the chunk's device offset. No-op for all-zero data.
#[inline]
pub fn stamp(buf: &mut [u8], pattern: DataPattern, tag: u64, offset: u64) {
    if matches!(pattern, DataPattern::Zeros | DataPattern::Compress { pct: 100 }) {
        return;
    }
    let mut off = offset;
    for chunk in buf.chunks_mut(CHUNK) {
        if chunk.len() >= STAMP {
            chunk[..8].copy_from_slice(&tag.to_le_bytes());
            chunk[8..16].copy_from_slice(&off.to_le_bytes());
        }
        off = off.wrapping_add(CHUNK as u64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    #[cfg(target_os = "linux")]
    fn large_pools_are_huge_page_aligned_and_say_whether_they_got_huge_pages() {
        let mut p = BufferPool::new(8, 1 << 20, 4096).expect("alloc");
        assert_eq!(p.base() as usize % HUGE_PAGE, 0);
        assert_eq!(p.total_len(), 8 << 20);
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(3);
        p.fill(DataPattern::Random, &mut rng);
        assert!(p.slot_mut(7).iter().any(|&b| b != 0));
        if platform::mem::transparent_huge_pages() {
            // The kernel may still refuse (fragmented memory); say so rather than fail.
            if !p.huge_pages() {
                eprintln!("note: THP is enabled but the kernel gave no huge pages to this pool");
            }
        } else {
            assert!(!p.huge_pages());
        }
        let small = BufferPool::new(1, 4096, 4096).expect("alloc");
        assert!(!small.huge_pages());
    }

    #[test]
    fn pool_slots_are_aligned_and_disjoint() {
        let p = BufferPool::new(4, 8192, 4096).expect("alloc");
        for i in 0..4 {
            assert_eq!(p.slot_ptr(i) as usize % 4096, 0);
        }
        assert_eq!(p.slot_ptr(1) as usize - p.slot_ptr(0) as usize, 8192);
    }

    #[test]
    fn stamped_chunks_differ_between_writes() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut b = vec![0u8; 8192];
        fill_pattern(&mut b, DataPattern::Random, &mut rng);
        let mut a = b.clone();
        stamp(&mut a, DataPattern::Random, 1, 0);
        let first = a.clone();
        stamp(&mut a, DataPattern::Random, 2, 0);
        assert_ne!(first[..CHUNK], a[..CHUNK]);
        assert_ne!(a[..CHUNK], a[CHUNK..]);
    }

    #[test]
    fn compress_pattern_has_requested_zero_share() {
        let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
        let mut b = vec![0xffu8; CHUNK * 4];
        fill_pattern(&mut b, DataPattern::Compress { pct: 50 }, &mut rng);
        for c in b.chunks(CHUNK) {
            assert!(c[CHUNK / 2..].iter().all(|&x| x == 0));
            assert!(c[..CHUNK / 2].iter().any(|&x| x != 0));
        }
    }
}
