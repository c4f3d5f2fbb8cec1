//! Hand-worked micro traces for the QSAN model. Geometry unless stated: 4 KiB cache blocks of
//! four 1 KiB sub-blocks, a cache of two blocks.

use diskmeter_cachesim::{Access, CacheConfig, Mode, Policy, QsanCache, Stats};
use trace::{Op, Request};

const K: u64 = 1024;
const BLK: u64 = 4 * K;

fn cfg(mode: Mode, por: u32, pow: u32) -> CacheConfig {
    CacheConfig { capacity_bytes: 2 * BLK, block_bytes: BLK, sub_block_bytes: K, por, pow, mode, seq_cutoff: None }
}

fn cache(mode: Mode, por: u32, pow: u32) -> QsanCache {
    QsanCache::new(cfg(mode, por, pow)).expect("valid config")
}

fn rq(op: Op, offset: u64, len: u64) -> Request {
    Request { t_ns: 0, offset, len: len as u32, op, dev: 0 }
}

fn rd(c: &mut QsanCache, offset: u64, len: u64) -> Access {
    c.access(&rq(Op::Read, offset, len))
}

fn wr(c: &mut QsanCache, offset: u64, len: u64) -> Access {
    c.access(&rq(Op::Write, offset, len))
}

fn st(c: &QsanCache) -> Stats {
    *c.stats()
}

#[test]
fn populate_on_read_threshold_two() {
    let mut c = cache(Mode::WriteThrough, 2, 0);
    assert_eq!(rd(&mut c, 0, BLK), Access::ReadMiss); // counter 1 < 2
    assert_eq!(c.counters_of(0, 0), (1, 0));
    assert!(!c.is_cached(0, 0));
    assert_eq!(rd(&mut c, 0, BLK), Access::ReadMiss); // counter 2: filled after this read
    assert!(c.is_cached(0, 0) && c.is_cached(0, BLK - 1));
    assert_eq!(rd(&mut c, 0, BLK), Access::ReadHit);
    assert_eq!(c.counters_of(0, 0), (2, 0)); // full hits do not count
    let s = st(&c);
    assert_eq!((s.reads, s.read_hits, s.read_partial_hits, s.read_misses), (3, 1, 0, 2));
    assert_eq!((s.fills, s.fill_bytes, s.fill_hdd_bytes), (1, BLK, 0));
    assert_eq!((s.read_bytes_ssd, s.read_bytes_hdd), (BLK, 2 * BLK));
    assert_eq!((s.hdd_read_ops, s.ssd_read_ops, s.ssd_write_ops, s.ssd_write_bytes), (2, 1, 1, BLK));
    assert_eq!((s.blocks_used, s.valid_bytes), (1, BLK));
    assert_eq!(s.hdd_requests, 2);
    assert!((s.read_hit_ratio() - 1.0 / 3.0).abs() < 1e-12);
}

#[test]
fn threshold_zero_disables_and_one_fills_at_once() {
    let mut c = cache(Mode::WriteThrough, 0, 0);
    for _ in 0..5 {
        assert_eq!(rd(&mut c, 0, BLK), Access::ReadMiss);
    }
    assert_eq!(st(&c).fills, 0);
    assert_eq!(st(&c).blocks_used, 0);
    let mut c = cache(Mode::WriteThrough, 1, 0);
    assert_eq!(rd(&mut c, 0, BLK), Access::ReadMiss);
    assert_eq!(rd(&mut c, 0, BLK), Access::ReadHit);
}

#[test]
fn fill_covers_only_the_touched_sub_blocks() {
    let mut c = cache(Mode::WriteThrough, 1, 0);
    // Sub-blocks 0 and 1.
    assert_eq!(rd(&mut c, 0, 2 * K), Access::ReadMiss);
    assert!(c.is_cached(0, 0) && c.is_cached(0, 2 * K - 1) && !c.is_cached(0, 2 * K));
    // Sub-blocks 1 (valid) and 2 (not): partial hit, then sub-block 2 is filled.
    assert_eq!(rd(&mut c, K, 2 * K), Access::ReadPartialHit);
    let s = st(&c);
    assert_eq!((s.read_bytes_ssd, s.read_bytes_hdd), (K, 2 * K + K));
    assert_eq!((s.fills, s.fill_bytes), (2, 3 * K));
    assert_eq!(rd(&mut c, 0, 3 * K), Access::ReadHit);
    assert!(!c.is_cached(0, 3 * K));
    assert_eq!(st(&c).valid_bytes, 3 * K);
}

#[test]
fn partly_touched_sub_blocks_are_filled_whole() {
    let mut c = cache(Mode::WriteThrough, 1, 0);
    // Bytes 512..1536 touch sub-blocks 0 and 1 halfway: 2 KiB filled, 1 KiB of it read from
    // the HDD beyond what the host asked for.
    assert_eq!(rd(&mut c, 512, K), Access::ReadMiss);
    let s = st(&c);
    assert_eq!((s.fill_bytes, s.fill_hdd_bytes), (2 * K, K));
    assert_eq!(s.hdd_read_bytes, K + K);
    assert_eq!(s.hdd_read_ops, 1); // the host read is widened, no extra op
    assert_eq!(rd(&mut c, 0, 2 * K), Access::ReadHit);
}

#[test]
fn multi_block_read_counts_hdd_runs_across_blocks() {
    let mut c = cache(Mode::WriteThrough, 1, 0);
    rd(&mut c, BLK + 2 * K, K); // block 1, sub-block 2 only
    let before = st(&c);
    // Blocks 0 and 1 entirely: HDD [0, 6K) and [7K, 8K), SSD [6K, 7K): 2 HDD runs, 1 SSD run.
    assert_eq!(rd(&mut c, 0, 2 * BLK), Access::ReadPartialHit);
    let d = st(&c).since(&before);
    assert_eq!((d.hdd_read_ops, d.ssd_read_ops), (2, 1));
    assert_eq!((d.read_bytes_ssd, d.read_bytes_hdd), (K, 7 * K));
}

#[test]
fn lru_replaces_whole_blocks() {
    let mut c = cache(Mode::WriteThrough, 1, 0);
    rd(&mut c, 0, K); // block 0
    rd(&mut c, BLK, K); // block 1
    assert_eq!(rd(&mut c, 0, K), Access::ReadHit); // block 0 most recent
    rd(&mut c, 2 * BLK, K); // block 2 evicts block 1
    assert!(c.is_cached(0, 0) && !c.is_cached(0, BLK) && c.is_cached(0, 2 * BLK));
    let s = st(&c);
    assert_eq!((s.evictions, s.dirty_evictions, s.blocks_used), (1, 0, 2));
    // Counters survive eviction: block 1 (counter 1 >= PoR 1) re-enters at its next miss.
    assert_eq!(rd(&mut c, BLK, K), Access::ReadMiss);
    assert!(c.is_cached(0, BLK) && !c.is_cached(0, 0));
}

#[test]
fn write_back_dirty_victims_are_written_first() {
    let mut c = cache(Mode::WriteBack, 1, 1);
    assert_eq!(wr(&mut c, 0, K), Access::WriteMiss); // PoW 1: block 0 allocated, SSD only
    assert!(c.is_dirty(0, 0));
    assert_eq!(wr(&mut c, BLK, 2 * K), Access::WriteMiss); // block 1, two dirty sub-blocks
    assert_eq!(wr(&mut c, BLK, K), Access::WriteHit);
    let s = st(&c);
    assert_eq!((s.write_bytes_ssd, s.write_bytes_hdd, s.hdd_write_ops, s.hdd_requests), (4 * K, 0, 0, 0));
    assert_eq!((s.dirty_bytes, s.fill_bytes), (3 * K, 3 * K));
    // Read block 2: fill evicts block 0 (LRU), whose dirty sub-block goes to the HDD first.
    rd(&mut c, 2 * BLK, K);
    let s = st(&c);
    assert_eq!((s.evictions, s.dirty_evictions, s.dirty_eviction_bytes), (1, 1, K));
    assert_eq!((s.hdd_write_ops, s.hdd_write_bytes), (1, K));
    // Read block 3: evicts block 1, two contiguous dirty sub-blocks: one HDD write.
    rd(&mut c, 3 * BLK, K);
    let s = st(&c);
    assert_eq!((s.evictions, s.dirty_evictions, s.dirty_eviction_bytes), (2, 2, 3 * K));
    assert_eq!((s.hdd_write_ops, s.hdd_write_bytes, s.dirty_bytes), (2, 3 * K, 0));
    assert_eq!(c.dirty_bytes(), 0);
    // Non-contiguous dirty sub-blocks: one HDD write per run.
    wr(&mut c, 4 * BLK, K);
    wr(&mut c, 4 * BLK + 2 * K, K);
    rd(&mut c, 5 * BLK, K);
    rd(&mut c, 6 * BLK, K);
    let d = st(&c);
    assert_eq!((d.dirty_evictions, d.dirty_eviction_bytes, d.hdd_write_ops), (3, 5 * K, 4));
}

#[test]
fn write_back_thresholds() {
    // PoW 0: writes to uncached blocks go to the HDD, writes to cached blocks stay on the SSD.
    let mut c = cache(Mode::WriteBack, 1, 0);
    assert_eq!(wr(&mut c, 0, BLK), Access::WriteMiss);
    assert_eq!(st(&c).write_bytes_hdd, BLK);
    assert!(!c.is_cached(0, 0));
    rd(&mut c, 0, BLK); // PoR 1 fills
    assert_eq!(wr(&mut c, 0, BLK), Access::WriteHit);
    assert!(c.is_dirty(0, 0));
    assert_eq!((st(&c).write_bytes_ssd, st(&c).write_bytes_hdd), (BLK, BLK));
    // PoW 2: first write to HDD (counter 1), second to SSD (counter 2), third a hit.
    let mut c = cache(Mode::WriteBack, 0, 2);
    assert_eq!(wr(&mut c, 0, BLK), Access::WriteMiss);
    assert!(!c.is_cached(0, 0));
    assert_eq!(wr(&mut c, 0, BLK), Access::WriteMiss);
    assert!(c.is_dirty(0, 0));
    assert_eq!(wr(&mut c, 0, BLK), Access::WriteHit);
    assert_eq!(c.counters_of(0, 0), (0, 2)); // cached blocks are not counted
    let s = st(&c);
    assert_eq!((s.write_bytes_hdd, s.write_bytes_ssd, s.hdd_write_ops), (BLK, 2 * BLK, 1));
    // Dirty data is read from the SSD.
    assert_eq!(rd(&mut c, 0, BLK), Access::ReadHit);
}

#[test]
fn write_back_partial_sub_block_needs_a_read() {
    let mut c = cache(Mode::WriteBack, 0, 1);
    wr(&mut c, 100, 500); // sub-block 0, partly: completed from the HDD
    let s = st(&c);
    assert_eq!((s.hdd_read_ops, s.fill_bytes, s.fill_hdd_bytes), (1, K, K - 500));
    assert_eq!((s.write_bytes_ssd, s.hdd_requests), (500, 1));
    assert!(c.is_dirty(0, 0));
    wr(&mut c, 100, 500); // now valid: no read
    assert_eq!(st(&c).hdd_read_ops, 1);
}

#[test]
fn write_through_updates_and_populates() {
    // File-system-like PoW 2.
    let mut c = cache(Mode::WriteThrough, 2, 2);
    assert_eq!(wr(&mut c, 0, BLK), Access::WriteMiss);
    assert!(!c.is_cached(0, 0));
    assert_eq!(wr(&mut c, 0, BLK), Access::WriteMiss); // counter 2: filled with the data
    assert!(c.is_cached(0, 0) && !c.is_dirty(0, 0));
    assert_eq!(rd(&mut c, 0, BLK), Access::ReadHit);
    assert_eq!(wr(&mut c, 0, 2 * K), Access::WriteHit); // HDD + SSD update
    let s = st(&c);
    assert_eq!((s.write_bytes_hdd, s.hdd_write_ops, s.write_bytes_ssd), (2 * BLK + 2 * K, 3, 0));
    assert_eq!(s.ssd_write_bytes, BLK + 2 * K);
    assert_eq!(s.dirty_bytes, 0);
    // PoW 0: writes never populate, but update cached blocks.
    let mut c = cache(Mode::WriteThrough, 1, 0);
    wr(&mut c, 0, BLK);
    wr(&mut c, 0, BLK);
    assert!(!c.is_cached(0, 0));
    rd(&mut c, 0, K); // fills sub-block 0
    let before = st(&c);
    assert_eq!(wr(&mut c, 0, BLK), Access::WriteMiss); // sub-blocks 1-3 not valid
    assert!(c.is_cached(0, 0) && !c.is_cached(0, K) && !c.is_cached(0, 3 * K)); // PoW 0: no fill
    let d = st(&c).since(&before);
    assert_eq!((d.ssd_write_bytes, d.write_bytes_hdd, d.fills), (K, BLK, 0)); // sub-block 0 updated
    assert_eq!(wr(&mut c, 0, K), Access::WriteHit);
}

#[test]
fn write_around_and_read_only_invalidate() {
    for mode in [Mode::WriteAround, Mode::ReadOnly] {
        let mut c = cache(mode, 1, 1);
        rd(&mut c, 0, BLK);
        assert_eq!(wr(&mut c, K, K), Access::WriteMiss);
        assert!(!c.is_cached(0, K) && c.is_cached(0, 0));
        assert_eq!(rd(&mut c, 0, BLK), Access::ReadPartialHit); // refills sub-block 1
                                                                // A partial sub-block write invalidates the whole sub-block.
        wr(&mut c, 2 * K + 100, 100);
        assert!(!c.is_cached(0, 2 * K));
        wr(&mut c, 0, BLK);
        let s = st(&c);
        assert_eq!((s.blocks_used, s.valid_bytes), (0, 0), "{mode}");
        assert_eq!(s.invalidated_bytes, K + K + 3 * K);
        assert_eq!((s.write_bytes_hdd, s.write_bytes_ssd, s.write_hits), (K + 100 + BLK, 0, 0));
        // PoW is not used: writes never populate.
        wr(&mut c, BLK, BLK);
        wr(&mut c, BLK, BLK);
        assert!(!c.is_cached(0, BLK));
    }
}

#[test]
fn discard_invalidates_covered_sub_blocks_only() {
    let mut c = cache(Mode::WriteBack, 1, 1);
    wr(&mut c, 0, BLK); // four dirty sub-blocks
    assert_eq!(c.access(&rq(Op::Discard, 512, 3 * K)), Access::Discard); // covers sub-blocks 1, 2
    assert!(c.is_dirty(0, 0) && !c.is_cached(0, K) && !c.is_cached(0, 2 * K) && c.is_dirty(0, 3 * K));
    let s = st(&c);
    assert_eq!((s.discards, s.invalidated_bytes, s.dirty_bytes, s.hdd_write_bytes), (1, 2 * K, 2 * K, 0));
    c.access(&rq(Op::Discard, 0, BLK));
    assert_eq!(st(&c).blocks_used, 0);
    assert_eq!(st(&c).dirty_eviction_bytes, 0); // dropped, not written back
}

#[test]
fn flush_and_empty_requests_are_counted_only() {
    let mut c = cache(Mode::WriteBack, 1, 1);
    wr(&mut c, 0, K);
    let before = st(&c);
    assert_eq!(c.access(&rq(Op::Flush, 0, 0)), Access::Flush);
    assert_eq!(rd(&mut c, 5 * BLK, 0), Access::Empty);
    assert_eq!(wr(&mut c, u64::MAX, 10), Access::Empty); // cut at the end of the byte space
    let d = st(&c).since(&before);
    assert_eq!((d.flushes, d.empty, d.reads, d.writes, d.hdd_write_ops), (1, 2, 0, 0, 0));
    assert_eq!(st(&c).dirty_bytes, K); // a flush does not destage
}

#[test]
fn sequential_cutoff_bypasses_long_streams() {
    let mut c = QsanCache::new(
        CacheConfig { capacity_bytes: 8 * BLK, ..cfg(Mode::WriteThrough, 1, 1) }.with_seq_cutoff(Some(2 * BLK)),
    )
    .expect("valid");
    for i in 0..4 {
        rd(&mut c, i * BLK, BLK);
    }
    // 4 KiB, 8 KiB within the cut-off; the 3rd and 4th read (12, 16 KiB) bypass.
    let s = st(&c);
    assert_eq!((s.bypasses, s.fills), (2, 2));
    assert!(c.is_cached(0, 0) && c.is_cached(0, BLK) && !c.is_cached(0, 2 * BLK));
    // A bypassed read still takes cached data from the SSD: the stream goes on at 16 KiB.
    c.access(&rq(Op::Read, 4 * BLK, BLK)); // bypass #3
    assert_eq!(rd(&mut c, 0, BLK), Access::ReadHit); // new stream
                                                     // A bypassed write (write-through) goes to the HDD, updates cached data, fills nothing.
    let mut w = QsanCache::new(cfg(Mode::WriteThrough, 1, 1).with_seq_cutoff(Some(BLK))).expect("valid");
    rd(&mut w, BLK, BLK);
    assert_eq!(wr(&mut w, 2 * BLK, BLK), Access::WriteMiss); // stream 8 KiB > 4 KiB: bypass
    assert!(!w.is_cached(0, 2 * BLK));
    assert_eq!(st(&w).bypasses, 1);
    assert_eq!(st(&c).bypasses, 3);
}

#[test]
fn bypassed_write_back_writes() {
    // Cut-off 4 KiB. A bypassed write to an uncached block goes to the HDD only.
    let mut c = QsanCache::new(cfg(Mode::WriteBack, 1, 1).with_seq_cutoff(Some(BLK))).expect("valid");
    wr(&mut c, 0, BLK); // stream of 4 KiB: not bypassed, block 0 dirty
    wr(&mut c, BLK, BLK); // stream of 8 KiB: bypassed
    assert_eq!((st(&c).bypasses, st(&c).write_bytes_hdd, st(&c).dirty_bytes), (1, BLK, BLK));
    assert!(!c.is_cached(0, BLK));
    // A bypassed write over cached dirty data updates it on the SSD too; the sub-blocks it
    // overwrites entirely become clean, the others stay dirty.
    let mut d = QsanCache::new(cfg(Mode::WriteBack, 1, 1).with_seq_cutoff(Some(BLK))).expect("valid");
    wr(&mut d, BLK, BLK); // block 1: four dirty sub-blocks
    rd(&mut d, 0, BLK); // a new stream 0..4 KiB (fills block 0, clean)
    wr(&mut d, BLK, 3 * K); // the stream goes on: 7 KiB > 4 KiB, bypassed
    let s = st(&d);
    assert_eq!(s.bypasses, 1);
    assert_eq!(s.dirty_bytes, K);
    assert!(!d.is_dirty(0, BLK) && d.is_dirty(0, BLK + 3 * K) && d.is_cached(0, BLK));
}

#[test]
fn counter_table_limit_bounds_memory() {
    let mut c = QsanCache::with_counter_limit(cfg(Mode::WriteThrough, 2, 0), 100).expect("valid");
    for b in 0..10_000u64 {
        rd(&mut c, b * BLK, K);
    }
    assert_eq!(c.tracked_blocks(), 100);
    assert_eq!(c.counter_limit(), Some(100));
    let unbounded = {
        let mut u = cache(Mode::WriteThrough, 2, 0);
        for b in 0..10_000u64 {
            rd(&mut u, b * BLK, K);
        }
        u
    };
    assert_eq!(unbounded.tracked_blocks(), 10_000);
    assert!(c.memory_bytes() < unbounded.memory_bytes());
    assert!(QsanCache::with_counter_limit(cfg(Mode::WriteThrough, 2, 0), 0).is_err());
}

#[test]
fn per_block_memory_is_bounded() {
    const { assert!(QsanCache::NODE_BYTES <= 32) };
    assert_eq!(QsanCache::NODE_BYTES, 16);
    // Database preset, 1 GiB: 1024 blocks of 128 sub-blocks, 2 words per bitmap.
    let c = QsanCache::new(CacheConfig::database(1 << 30)).expect("valid");
    assert_eq!(c.capacity_blocks(), 1024);
    // Node 16 + index 8 (2048 u32 slots for 1024 blocks) + bitmaps 2 × 16.
    assert_eq!(c.bytes_per_block(), 16 + 8 + 32);
    // The bound: at most 32 bytes per cached block plus the sub-block bitmaps.
    assert!(c.bytes_per_block() - 32 <= 32);
    // Reserved up front: slab nodes + index + bitmaps (+ the empty counter table).
    assert!(c.memory_bytes() <= 1024 * (32 + 32) + 4096, "{}", c.memory_bytes());
}

#[test]
fn devices_are_separate() {
    let mut c = cache(Mode::WriteThrough, 1, 0);
    rd(&mut c, 0, BLK);
    assert_eq!(c.access(&Request { dev: 1, ..rq(Op::Read, 0, BLK) }), Access::ReadMiss);
    assert_eq!(rd(&mut c, 0, BLK), Access::ReadHit);
}

#[test]
fn presets_run() {
    for cfg in [CacheConfig::database(64 << 20), CacheConfig::filesystem(64 << 20), CacheConfig::web(64 << 20)] {
        let mut c = QsanCache::new(cfg).expect("valid");
        for i in 0..1000u64 {
            let off = (i * 7919 % 512) * 8192;
            c.access(&rq(if i % 10 == 0 { Op::Write } else { Op::Read }, off, 8192));
        }
        let s = c.stats();
        assert_eq!(s.reads + s.writes, 1000);
        assert_eq!(s.read_hits + s.read_partial_hits + s.read_misses, s.reads);
        assert!(s.read_hits > 0);
    }
}

#[test]
fn warmup_grows_with_the_populate_threshold() {
    use diskmeter_cachesim::{simulate, warmup};
    // 100 blocks read round-robin, one read per ms, 20 passes; one interval per pass.
    let reqs: Vec<Request> =
        (0..2_000u64).map(|i| Request { t_ns: i * 1_000_000, ..rq(Op::Read, (i % 100) * BLK, BLK) }).collect();
    for por in [1u32, 2, 3] {
        let mut c = QsanCache::new(CacheConfig { capacity_bytes: 128 * BLK, ..cfg(Mode::WriteThrough, por, 0) })
            .expect("valid");
        let s = simulate(&mut c, &reqs, Some(100_000_000));
        assert_eq!(s.points.len(), 20);
        let w = warmup(&s).expect("warm-up");
        assert!((w.final_hit_ratio - 1.0).abs() < 1e-12);
        // PoR passes over the hot set miss; the interval after them is the first at 100 %.
        assert_eq!(w.warmup_ns, u64::from(por + 1) * 100_000_000, "PoR {por}");
        assert!((s.points[19].occupancy - 100.0 / 128.0).abs() < 1e-12);
    }
}
