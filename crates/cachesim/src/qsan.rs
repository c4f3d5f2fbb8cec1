//! The QSAN-style SSD cache model: cache blocks split into sub-blocks, per-block read and
//! write counters with populate-on-read / populate-on-write thresholds, LRU replacement of
//! whole cache blocks, four write modes and an optional sequential cut-off.
//!
//! # The algorithm, as modelled
//!
//! A request is split per cache block (`block_bytes`) and, inside a block, per sub-block
//! (`sub_block_bytes`); a partly covered sub-block counts as touched.
//!
//! **Read.** If every touched sub-block is valid the read is a *hit* (SSD); if some are, a
//! *partial hit* (valid sub-blocks from the SSD, the rest from the HDD); otherwise a *miss*.
//! For every cache block of the read that is not fully valid over the touched range, the
//! block's read counter is incremented (once per request and block) and, when
//! `por > 0 && counter >= por`, the block is *filled*: allocated if absent (the LRU block is
//! evicted when the cache is full) and the **touched sub-blocks only** are made valid. The
//! counter is compared *after* the increment, so with PoR = P the P-th read that misses a
//! block populates it — which is what the warm-up formula T = C·P/(I·S·D) assumes (P HDD
//! reads of every cached unit). Counters are not incremented on full hits and are never
//! reset: the source describes no reset, so a block that once reached its threshold
//! re-enters on its next miss after an eviction (a bounded counter table, see
//! [`QsanCache::with_counter_limit`], is what makes cold counters age out).
//!
//! **Fill granularity.** The source says "the sub-blocks are filled": a fill makes valid
//! the touched sub-blocks of the request, nothing else of the block (no read-ahead of the
//! rest of the block). A partly touched sub-block is filled whole: the bytes the host did
//! not ask for are read from the HDD as part of the same (widened) HDD read and counted in
//! [`Stats::fill_hdd_bytes`]. The SSD write of a fill is counted in `ssd_write_bytes`
//! (whole sub-blocks) and as one SSD write op per block filled.
//!
//! **Write-through.** Every write goes to the HDD. Valid cached sub-blocks it touches are
//! updated on the SSD. For every cache block of the write whose touched sub-blocks are not
//! all valid, the block's write counter is incremented (once per request and block) and,
//! when `pow > 0 && counter >= pow`, the block is allocated if absent and the touched
//! sub-blocks are filled with the written data (a partly written sub-block that was not valid
//! is completed by an HDD read). PoW = 0 therefore means writes never populate, not even the
//! missing sub-blocks of a cached block.
//!
//! **Write-back.** In a cached block, or an uncached one whose incremented write counter
//! reaches PoW (> 0), the write goes to the SSD only and the touched sub-blocks become valid
//! and dirty (a partly written invalid sub-block is completed by an HDD read first; a cached
//! block absorbs writes to its invalid sub-blocks even with PoW = 0, as the source says:
//! "if the block is in the SSD cache, the controller writes it to the SSD cache"). Other
//! blocks are written to the HDD. When a block with dirty sub-blocks is evicted, its dirty
//! sub-blocks are written to the HDD first: one HDD write per contiguous run of dirty
//! sub-blocks, counted in `dirty_evictions` / `dirty_eviction_bytes`. No background
//! destaging is modelled: dirty data stays until eviction (a flush request does not clean
//! it); [`QsanCache::dirty_bytes`] is what a mode switch to write-through would destage.
//!
//! **Write hits.** In every mode a write is a hit when every sub-block it touches was valid
//! before it (write-through: the SSD copy is updated in place; write-back: the SSD absorbs
//! it); write-around / read-only writes and bypassed writes are misses.
//!
//! **Write-around / read-only.** Writes go to the HDD; cached sub-blocks they touch are
//! invalidated (a block left without valid sub-blocks is freed). PoW is not used.
//!
//! **Discard** invalidates the sub-blocks it covers *entirely* (dirty ones are dropped
//! without a write-back); partly covered sub-blocks stay. **Flush** is counted and ignored.
//!
//! **Sequential cut-off** (`seq_cutoff`): per-device stream detection (see `seq.rs`); a
//! request whose stream exceeds the cut-off *bypasses* the cache: a read takes valid
//! sub-blocks from the SSD and the rest from the HDD but touches no counter, fills nothing
//! and does not refresh the LRU; a write goes to the HDD (write-through / write-back: valid
//! cached sub-blocks it touches are updated on the SSD, entirely overwritten dirty ones become
//! clean; write-around / read-only: invalidated as usual). Bypassed writes count as misses.
//!
//! **LRU.** Whole cache blocks; a block moves to the head when a request reads valid data
//! from it, writes into it, or fills it.
//!
//! # Memory
//!
//! Per cache block: a 16-byte slab node (key, prev, next; `size_of` tested), an index entry
//! in an open-addressing table of `u32` slots (5.3–10.7 bytes; ≤ 27 bytes with the node) and two bitmaps of
//! `ceil(sub_blocks / 64)` words (valid, dirty): 32 bytes for the presets' 64–128 sub-blocks.
//! Slab, index and bitmaps are reserved for the whole capacity up front; the hot path does
//! not allocate (except the unbounded counter table growing, amortised, and the first
//! request of a new device with a sequential cut-off). Counters: see `counters.rs`
//! (≈ 35–55 bytes per tracked block).

use trace::{Op, Request};

use crate::bits;
use crate::config::{CacheConfig, ConfigError, Mode};
use crate::counters::CounterTable;
use crate::policy::{byte_range, key, Access, Policy};
use crate::seq::SeqDetector;
use crate::slab::{List, Slab};
use crate::stats::Stats;

/// The part of a request inside one cache block.
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// Block index.
    bn: u64,
    /// Byte range inside the block, `[bs, be)`.
    bs: u64,
    be: u64,
    /// Touched sub-blocks, `[a, b)`.
    a: usize,
    b: usize,
}

impl Seg {
    fn len(&self) -> u64 {
        self.be - self.bs
    }
    fn subs(&self) -> u64 {
        (self.b - self.a) as u64
    }
}

/// The segments of `[start, end)` (non-empty) with blocks of `block` and sub-blocks of `sub`.
fn segments(start: u64, end: u64, block: u64, sub: u64) -> impl Iterator<Item = Seg> {
    (start / block..=(end - 1) / block).map(move |bn| {
        let base = bn * block;
        let bs = start.max(base) - base;
        let be = end.min(base.saturating_add(block)) - base;
        Seg { bn, bs, be, a: (bs / sub) as usize, b: ((be - 1) / sub + 1) as usize }
    })
}

/// The QSAN cache model. See the module documentation for the exact semantics.
#[derive(Debug, Clone)]
pub struct QsanCache {
    cfg: CacheConfig,
    sub: u64,
    spb: usize,
    words: usize,
    slab: Slab,
    lru: List,
    valid: Vec<u64>,
    dirty: Vec<u64>,
    counters: CounterTable,
    seq: Option<SeqDetector>,
    stats: Stats,
    valid_subs: u64,
    dirty_subs: u64,
}

impl QsanCache {
    /// A cache with an unbounded counter table.
    pub fn new(cfg: CacheConfig) -> Result<Self, ConfigError> {
        Self::build(cfg, CounterTable::unbounded())
    }

    /// A cache whose counter table holds at most `max_tracked_blocks` blocks (CLOCK
    /// replacement of counters, preallocated; see the module documentation).
    pub fn with_counter_limit(cfg: CacheConfig, max_tracked_blocks: usize) -> Result<Self, ConfigError> {
        if max_tracked_blocks == 0 {
            return Err(ConfigError::Zero { what: "counter table limit" });
        }
        Self::build(cfg, CounterTable::bounded(max_tracked_blocks))
    }

    fn build(cfg: CacheConfig, counters: CounterTable) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let blocks = cfg.blocks() as usize;
        let spb = cfg.sub_blocks_per_block() as usize;
        let words = spb.div_ceil(64);
        let stats =
            Stats { capacity_bytes: cfg.blocks() * cfg.block_bytes, capacity_blocks: cfg.blocks(), ..Stats::default() };
        Ok(QsanCache {
            cfg,
            sub: cfg.sub_block_bytes,
            spb,
            words,
            slab: Slab::new(blocks),
            lru: List::default(),
            valid: Vec::with_capacity(blocks * words),
            dirty: Vec::with_capacity(blocks * words),
            counters,
            seq: cfg.seq_cutoff.map(SeqDetector::new),
            stats,
            valid_subs: 0,
            dirty_subs: 0,
        })
    }

    /// The configuration.
    pub fn config(&self) -> &CacheConfig {
        &self.cfg
    }

    /// Blocks whose counters are tracked.
    pub fn tracked_blocks(&self) -> usize {
        self.counters.len()
    }

    /// The counter-table limit, if any.
    pub fn counter_limit(&self) -> Option<usize> {
        self.counters.limit()
    }

    /// (read, write) counters of block `block` (index in `block_bytes` units) of `dev`.
    pub fn counters_of(&self, dev: u32, block: u64) -> (u32, u32) {
        self.counters.get(key(dev, block))
    }

    /// Bytes currently dirty (what a switch to write-through would have to destage).
    pub fn dirty_bytes(&self) -> u64 {
        self.dirty_subs * self.sub
    }

    /// Whether the byte at `offset` of `dev` is in a valid cached sub-block.
    pub fn is_cached(&self, dev: u32, offset: u64) -> bool {
        let bn = offset / self.cfg.block_bytes;
        let sb = ((offset % self.cfg.block_bytes) / self.sub) as usize;
        self.slab.get(key(dev, bn)).is_some_and(|i| bits::get(self.vbits(i), sb))
    }

    /// Whether the byte at `offset` of `dev` is in a dirty sub-block.
    pub fn is_dirty(&self, dev: u32, offset: u64) -> bool {
        let bn = offset / self.cfg.block_bytes;
        let sb = ((offset % self.cfg.block_bytes) / self.sub) as usize;
        self.slab.get(key(dev, bn)).is_some_and(|i| bits::get(self.dbits(i), sb))
    }

    /// Cache blocks the model can hold.
    pub fn capacity_blocks(&self) -> usize {
        self.slab.capacity()
    }

    /// Size of the per-block slab node in bytes (16).
    pub const NODE_BYTES: usize = std::mem::size_of::<crate::slab::Node>();

    /// Approximate heap bytes reserved: slab, index, bitmaps and counter table.
    pub fn memory_bytes(&self) -> u64 {
        self.slab.memory_bytes()
            + (self.valid.capacity() + self.dirty.capacity()) as u64 * 8
            + self.counters.memory_bytes()
    }

    /// Bytes per cache block excluding the counter table: node, index entry at the worst
    /// load factor, both bitmaps.
    pub fn bytes_per_block(&self) -> u64 {
        Self::NODE_BYTES as u64 + self.slab.index_bytes_per_entry().ceil() as u64 + 2 * 8 * self.words as u64
    }

    #[inline]
    fn vbits(&self, i: u32) -> &[u64] {
        let s = i as usize * self.words;
        &self.valid[s..s + self.words]
    }

    #[inline]
    fn dbits(&self, i: u32) -> &[u64] {
        let s = i as usize * self.words;
        &self.dirty[s..s + self.words]
    }

    /// Bytes of `seg` that fall in sub-blocks set in `bits`.
    #[inline]
    fn covered(&self, bits: &[u64], seg: &Seg) -> u64 {
        let sub = self.sub;
        let mut x = bits::count(bits, seg.a, seg.b) * sub;
        if bits::get(bits, seg.a) {
            x -= seg.bs - seg.a as u64 * sub;
        }
        if bits::get(bits, seg.b - 1) {
            x -= seg.b as u64 * sub - seg.be;
        }
        x
    }

    #[inline]
    fn touch(&mut self, i: u32) {
        self.slab.move_to_front(&mut self.lru, i);
    }

    /// Takes a slot for `key`, evicting the LRU block when the cache is full.
    fn allocate(&mut self, key: u64) -> Option<u32> {
        loop {
            if let Some(i) = self.slab.alloc(key) {
                let need = (i as usize + 1) * self.words;
                if self.valid.len() < need {
                    self.valid.resize(need, 0);
                    self.dirty.resize(need, 0);
                }
                self.slab.push_front(&mut self.lru, i);
                return Some(i);
            }
            let t = self.lru.tail()?;
            self.evict(t);
        }
    }

    /// Evicts block `i`, writing its dirty sub-blocks to the HDD first.
    fn evict(&mut self, i: u32) {
        let d = bits::count_all(self.dbits(i));
        if d > 0 {
            let runs = bits::runs(self.dbits(i), 0, self.spb, false);
            self.stats.dirty_writeback(d * self.sub, runs);
            self.stats.dirty_evictions += 1;
            self.dirty_subs -= d;
        }
        self.valid_subs -= bits::count_all(self.vbits(i));
        self.stats.evictions += 1;
        self.free(i);
    }

    /// Clears block `i`'s bitmaps, unlinks it and returns it to the free list.
    fn free(&mut self, i: u32) {
        let s = i as usize * self.words;
        self.valid[s..s + self.words].fill(0);
        self.dirty[s..s + self.words].fill(0);
        self.slab.unlink(&mut self.lru, i);
        self.slab.release(i);
    }

    /// Invalidates sub-blocks `[a, b)` of block `i`; frees the block when nothing is left.
    fn invalidate(&mut self, i: u32, a: usize, b: usize) {
        let s = i as usize * self.words;
        let w = self.words;
        let v = bits::count(&self.valid[s..s + w], a, b);
        if v == 0 {
            return;
        }
        let d = bits::count(&self.dirty[s..s + w], a, b);
        bits::clear(&mut self.valid[s..s + w], a, b);
        bits::clear(&mut self.dirty[s..s + w], a, b);
        self.valid_subs -= v;
        self.dirty_subs -= d;
        self.stats.invalidated_bytes += v * self.sub;
        if bits::count_all(&self.valid[s..s + w]) == 0 {
            self.free(i);
        }
    }

    /// Writes host data of `seg` into block `i` (write-through update / fill, write-back):
    /// touched sub-blocks become valid (and dirty with `dirty`). Returns the number of HDD
    /// reads needed to complete partly written sub-blocks that were not valid.
    fn write_into(&mut self, i: u32, seg: &Seg, dirty: bool) -> u64 {
        let sub = self.sub;
        let s = i as usize * self.words;
        let w = self.words;
        let v = bits::count(&self.valid[s..s + w], seg.a, seg.b);
        let cov = self.covered(&self.valid[s..s + w], seg);
        let newly = seg.subs() - v;
        let mut rmw = 0;
        if newly > 0 {
            let first_partial = seg.bs > seg.a as u64 * sub || seg.be < (seg.a as u64 + 1) * sub;
            if first_partial && !bits::get(&self.valid[s..s + w], seg.a) {
                rmw += 1;
            }
            if seg.b - 1 > seg.a && seg.be < seg.b as u64 * sub && !bits::get(&self.valid[s..s + w], seg.b - 1) {
                rmw += 1;
            }
            let fill = newly * sub;
            let extra = fill - (seg.len() - cov);
            let st = &mut self.stats;
            st.fills += 1;
            st.fill_bytes += fill;
            st.fill_hdd_bytes += extra;
            st.hdd_read_bytes += extra;
            st.hdd_read_ops += rmw;
            st.ssd_write_bytes += fill;
            self.valid_subs += newly;
            bits::set(&mut self.valid[s..s + w], seg.a, seg.b);
        }
        self.stats.ssd_write_bytes += cov;
        self.stats.ssd_write_ops += 1;
        if dirty {
            let d = bits::count(&self.dirty[s..s + w], seg.a, seg.b);
            bits::set(&mut self.dirty[s..s + w], seg.a, seg.b);
            self.dirty_subs += seg.subs() - d;
        }
        rmw
    }

    /// A bypassed write also sent to the HDD: update the valid sub-blocks of block `i` it
    /// touches on the SSD; dirty sub-blocks it overwrites entirely become clean.
    fn update_valid(&mut self, i: u32, seg: &Seg) {
        let s = i as usize * self.words;
        let w = self.words;
        let cov = self.covered(&self.valid[s..s + w], seg);
        if cov > 0 {
            self.stats.ssd_write_bytes += cov;
            self.stats.ssd_write_ops += 1;
        }
        let fa = seg.bs.div_ceil(self.sub) as usize;
        let fb = (seg.be / self.sub) as usize;
        if fa < fb {
            let d = bits::count(&self.dirty[s..s + w], fa, fb);
            bits::clear(&mut self.dirty[s..s + w], fa, fb);
            self.dirty_subs -= d;
        }
    }

    fn read(&mut self, dev: u32, start: u64, end: u64, bypass: bool) -> Access {
        let (mut ssd_b, mut hdd_b, mut hdd_runs) = (0u64, 0u64, 0u64);
        let mut hdd_open = false;
        let (block, sub) = (self.cfg.block_bytes, self.sub);
        for seg in segments(start, end, block, sub) {
            let k = key(dev, seg.bn);
            let slot = self.slab.get(k);
            let n = seg.subs();
            let (v, cov) = match slot {
                Some(i) => {
                    let vb = self.vbits(i);
                    (bits::count(vb, seg.a, seg.b), self.covered(vb, &seg))
                }
                None => (0, 0),
            };
            if v > 0 {
                if let Some(i) = slot {
                    self.stats.ssd_read_ops += bits::runs(self.vbits(i), seg.a, seg.b, false);
                }
            }
            if v < n {
                let (runs, first_invalid, last_invalid) = match slot {
                    Some(i) => {
                        let vb = self.vbits(i);
                        (bits::runs(vb, seg.a, seg.b, true), !bits::get(vb, seg.a), !bits::get(vb, seg.b - 1))
                    }
                    None => (1, true, true),
                };
                hdd_runs += runs - u64::from(hdd_open && first_invalid);
                hdd_open = last_invalid;
            } else {
                hdd_open = false;
            }
            ssd_b += cov;
            let hdd_seg = seg.len() - cov;
            hdd_b += hdd_seg;
            if bypass {
                continue;
            }
            if v > 0 {
                if let Some(i) = slot {
                    self.touch(i);
                }
            }
            if v < n {
                let c = self.counters.bump(k, false);
                if self.cfg.por > 0 && c >= self.cfg.por {
                    let target = match slot {
                        Some(i) => Some(i),
                        None => self.allocate(k),
                    };
                    if let Some(i) = target {
                        let s = i as usize * self.words;
                        bits::set(&mut self.valid[s..s + self.words], seg.a, seg.b);
                        let newly = n - v;
                        let fill = newly * sub;
                        let extra = fill - hdd_seg;
                        self.valid_subs += newly;
                        let st = &mut self.stats;
                        st.fills += 1;
                        st.fill_bytes += fill;
                        st.fill_hdd_bytes += extra;
                        st.hdd_read_bytes += extra;
                        st.ssd_write_bytes += fill;
                        st.ssd_write_ops += 1;
                        self.touch(i);
                    }
                }
            }
        }
        self.stats.ssd_read_bytes += ssd_b;
        self.stats.record_read(ssd_b, hdd_b, hdd_runs)
    }

    fn write_to_hdd(&mut self, len: u64) {
        let st = &mut self.stats;
        st.write_bytes_hdd += len;
        st.hdd_write_bytes += len;
        st.hdd_write_ops += 1;
        st.hdd_requests += 1;
    }

    fn write_through(&mut self, dev: u32, start: u64, end: u64, bypass: bool) -> bool {
        self.write_to_hdd(end - start);
        let mut all_valid = true;
        for seg in segments(start, end, self.cfg.block_bytes, self.sub) {
            let k = key(dev, seg.bn);
            let slot = self.slab.get(k);
            let v = slot.map_or(0, |i| bits::count(self.vbits(i), seg.a, seg.b));
            let full = v == seg.subs();
            all_valid &= full;
            if bypass {
                if let Some(i) = slot {
                    self.update_valid(i, &seg);
                }
                continue;
            }
            let fill = !full && {
                let c = self.counters.bump(k, true);
                self.cfg.pow > 0 && c >= self.cfg.pow
            };
            let target = match (fill, slot) {
                (true, Some(i)) => Some(i),
                (true, None) => self.allocate(k),
                (false, _) => None,
            };
            if let Some(i) = target {
                self.write_into(i, &seg, false);
                self.touch(i);
            } else if let Some(i) = slot {
                if v > 0 {
                    self.update_valid(i, &seg);
                    self.touch(i);
                }
            }
        }
        all_valid && !bypass
    }

    fn write_back(&mut self, dev: u32, start: u64, end: u64, bypass: bool) -> bool {
        let mut all_valid = true;
        let (mut hdd_open, mut waited) = (false, false);
        for seg in segments(start, end, self.cfg.block_bytes, self.sub) {
            let k = key(dev, seg.bn);
            let slot = self.slab.get(k);
            all_valid &= slot.is_some_and(|i| bits::count(self.vbits(i), seg.a, seg.b) == seg.subs());
            let to_ssd = !bypass
                && (slot.is_some() || {
                    let c = self.counters.bump(k, true);
                    self.cfg.pow > 0 && c >= self.cfg.pow
                });
            let target = match (to_ssd, slot) {
                (false, _) => None,
                (true, Some(i)) => Some(i),
                (true, None) => self.allocate(k),
            };
            if let Some(i) = target {
                let rmw = self.write_into(i, &seg, true);
                self.touch(i);
                self.stats.write_bytes_ssd += seg.len();
                waited |= rmw > 0;
                hdd_open = false;
            } else {
                let st = &mut self.stats;
                st.write_bytes_hdd += seg.len();
                st.hdd_write_bytes += seg.len();
                if !hdd_open {
                    st.hdd_write_ops += 1;
                }
                hdd_open = true;
                waited = true;
                if let Some(i) = slot {
                    self.update_valid(i, &seg);
                }
            }
        }
        if waited {
            self.stats.hdd_requests += 1;
        }
        all_valid && !bypass
    }

    fn write_around(&mut self, dev: u32, start: u64, end: u64) {
        self.write_to_hdd(end - start);
        for seg in segments(start, end, self.cfg.block_bytes, self.sub) {
            if let Some(i) = self.slab.get(key(dev, seg.bn)) {
                self.invalidate(i, seg.a, seg.b);
            }
        }
    }

    fn discard(&mut self, dev: u32, start: u64, end: u64) {
        for seg in segments(start, end, self.cfg.block_bytes, self.sub) {
            let fa = seg.bs.div_ceil(self.sub) as usize;
            let fb = (seg.be / self.sub) as usize;
            if fa < fb {
                if let Some(i) = self.slab.get(key(dev, seg.bn)) {
                    self.invalidate(i, fa, fb);
                }
            }
        }
    }

    fn access_inner(&mut self, r: &Request) -> Access {
        let (start, end) = byte_range(r);
        match r.op {
            Op::Flush => {
                self.stats.flushes += 1;
                return Access::Flush;
            }
            Op::Discard => {
                self.stats.discards += 1;
                if end > start {
                    self.discard(r.dev, start, end);
                }
                return Access::Discard;
            }
            Op::Read | Op::Write => {}
        }
        if end == start {
            self.stats.empty += 1;
            return Access::Empty;
        }
        let bypass = self.seq.as_mut().is_some_and(|s| s.observe(r.dev, start, end));
        if bypass {
            self.stats.bypasses += 1;
        }
        if r.op == Op::Read {
            return self.read(r.dev, start, end, bypass);
        }
        let hit = match self.cfg.mode {
            Mode::WriteThrough => self.write_through(r.dev, start, end, bypass),
            Mode::WriteBack => self.write_back(r.dev, start, end, bypass),
            Mode::WriteAround | Mode::ReadOnly => {
                self.write_around(r.dev, start, end);
                false
            }
        };
        self.stats.writes += 1;
        if hit {
            self.stats.write_hits += 1;
            Access::WriteHit
        } else {
            self.stats.write_misses += 1;
            Access::WriteMiss
        }
    }
}

impl Policy for QsanCache {
    fn access(&mut self, r: &Request) -> Access {
        let out = self.access_inner(r);
        let st = &mut self.stats;
        st.blocks_used = self.slab.len() as u64;
        st.valid_bytes = self.valid_subs * self.sub;
        st.dirty_bytes = self.dirty_subs * self.sub;
        out
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }

    fn name(&self) -> &str {
        "qsan"
    }
}
