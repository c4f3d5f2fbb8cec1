//! The simulators do not allocate per request once built: a counting global allocator
//! (this test binary only) watches a long replay.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

use diskmeter_cachesim::{CacheConfig, Lru, Mode, Policy, QsanCache, S3Fifo};
use trace::{Op, Request};

struct Counting;

static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn trace(n: u64, span_units: u64) -> Vec<Request> {
    let mut x = 0x1234_5678_9abc_def0u64;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let op = if x.is_multiple_of(10) { Op::Write } else { Op::Read };
            Request { t_ns: i, offset: (x >> 8) % span_units * 4096, len: 8192, op, dev: 0 }
        })
        .collect()
}

/// Allocations during the replay of `reqs` after the policy has seen `warm` first.
fn allocs_during(p: &mut dyn Policy, warm: &[Request], reqs: &[Request]) -> u64 {
    for r in warm {
        p.access(r);
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    for r in reqs {
        p.access(r);
    }
    ALLOCS.load(Ordering::Relaxed) - before
}

#[test]
fn hot_paths_do_not_allocate() {
    let warm = trace(100_000, 1 << 16);
    let reqs = trace(300_000, 1 << 16);
    // The index may grow at most once in a run (hashbrown resizes instead of rehashing in
    // place when tombstones fill a table that is more than half full); never per request.
    let mut lru = Lru::new(16 << 20, 4096).expect("valid");
    let n = allocs_during(&mut lru, &warm, &reqs);
    println!("lru: {n} allocations");
    assert!(n <= 1);
    let mut s3 = S3Fifo::new(16 << 20, 4096).expect("valid");
    let n = allocs_during(&mut s3, &warm, &reqs);
    println!("s3fifo: {n} allocations");
    assert!(n <= 2);
    for mode in [Mode::WriteThrough, Mode::WriteBack, Mode::WriteAround] {
        let cfg = CacheConfig {
            capacity_bytes: 64 << 20,
            block_bytes: 64 << 10,
            sub_block_bytes: 8 << 10,
            ..CacheConfig::database(0)
        }
        .with_mode(mode);
        let mut q = QsanCache::with_counter_limit(cfg, 2048).expect("valid");
        let n = allocs_during(&mut q, &warm, &reqs);
        println!("qsan {mode}: {n} allocations");
        assert!(n <= 2, "{mode}: {n} allocations");
    }
}
