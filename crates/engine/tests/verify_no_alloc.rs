//! `verify::stamp_block` and `verify::check_block` run per I/O and must not allocate: a
//! counting global allocator proves it for every checksum kind.
#![allow(clippy::unwrap_used)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

use diskmeter_engine::verify::{check_block, stamp_block, BlockStamp, CheckKind, Context, Expect};

/// Counts allocations made on threads that switched counting on (the test harness's own
/// threads allocate too).
struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
}

// SAFETY: every call is forwarded to the system allocator unchanged.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.with(Cell::get) {
            ALLOCS.fetch_add(1, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed on.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn stamp_and_check_do_not_allocate() {
    let mut block = vec![0u8; 64 << 10];
    let s = BlockStamp { run_id: 9, job: 1, worker: 2, timestamp_ns: 3 };
    for kind in CheckKind::ALL {
        let ctx = Context { run_seed: 5, kind, pattern: b"abc" };
        let expect = |offset| Expect { offset, generation: 4, job: 1, run_id: 9, len: 4096 };
        COUNTING.with(|c| c.set(true));
        stamp_block(&mut block, 1 << 20, 4096, &s, &ctx, |_| 4).unwrap();
        let good = check_block(&block, 1 << 20, 4096, &ctx, expect, |_, _| {}).unwrap();
        block[5000] ^= 1;
        let bad = check_block(&block, 1 << 20, 4096, &ctx, expect, |_, _| {}).unwrap();
        COUNTING.with(|c| c.set(false));
        assert_eq!((good, bad), (0, if kind == CheckKind::Meta { 0 } else { 1 }), "{kind}");
    }
    assert_eq!(ALLOCS.load(Ordering::Relaxed), 0);
}
