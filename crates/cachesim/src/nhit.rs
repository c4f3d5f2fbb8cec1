//! Open CAS style `nhit` promotion in front of an LRU of fixed-size cache lines.
//!
//! As in OCF's nhit promotion policy:
//!
//! * below the *trigger threshold* (default 80 % of the cache lines occupied) every miss is
//!   promoted and nothing is counted;
//! * above it, for a request that is not a full hit, every line of the request is looked up
//!   in a bounded counter table: a line already there has its counter incremented and
//!   qualifies when the counter reaches the *insertion threshold* (default 3); a line not
//!   there is inserted with count 1 (so the 3rd access promotes with the default);
//! * the request's missing lines are promoted when every line qualifies, or when the request
//!   is a partial hit (OCF does not reject partly cached requests); after a promotion the
//!   request's counters are reset to 0;
//! * the counter table is a ring of `2 × cache lines` entries: inserting into a full ring
//!   overwrites the oldest entry.
//!
//! Reads and writes both go through promotion (write-through accounting, see
//! [`crate::policy`]). Memory: the ring holds (key, counter) pairs of 16 bytes plus an
//! `FxHashMap<u64, u32>` index (≈ 18–37 bytes per entry).

use rustc_hash::FxHashMap;
use trace::Request;

use crate::config::{check_capacity, check_size, ConfigError};
use crate::policy::{key, unit_access, Access, Policy, UnitCache};
use crate::slab::{List, Slab};
use crate::stats::Stats;

/// OCF's default insertion threshold.
pub const DEFAULT_INSERTION_THRESHOLD: u32 = 3;
/// OCF's default trigger threshold, percent of cache lines occupied.
pub const DEFAULT_TRIGGER_PCT: u32 = 80;

/// The bounded counter ring.
#[derive(Debug, Clone)]
struct HitTable {
    ring: Vec<(u64, u32)>,
    cap: usize,
    pos: usize,
    map: FxHashMap<u64, u32>,
}

impl HitTable {
    fn new(cap: usize) -> Self {
        let mut map = FxHashMap::default();
        map.reserve(cap);
        HitTable { ring: Vec::with_capacity(cap), cap, pos: 0, map }
    }

    /// Increments and returns the counter of `k`, if tracked.
    fn query(&mut self, k: u64) -> Option<u32> {
        let i = *self.map.get(&k)? as usize;
        let c = &mut self.ring[i].1;
        *c = c.saturating_add(1);
        Some(*c)
    }

    /// Tracks `k` with count 1, overwriting the oldest entry when full.
    fn insert(&mut self, k: u64) {
        if self.ring.len() < self.cap {
            self.ring.push((k, 1));
            self.map.insert(k, (self.ring.len() - 1) as u32);
            return;
        }
        let i = self.pos;
        self.pos = (self.pos + 1) % self.cap;
        let old = self.ring[i].0;
        self.map.remove(&old);
        self.ring[i] = (k, 1);
        self.map.insert(k, i as u32);
    }

    fn reset(&mut self, k: u64) {
        if let Some(&i) = self.map.get(&k) {
            self.ring[i as usize].1 = 0;
        }
    }
}

#[derive(Debug, Clone)]
struct NhitCore {
    slab: Slab,
    list: List,
    table: HitTable,
    threshold: u32,
    trigger_lines: u64,
    promote: bool,
    counted: bool,
    dev: u32,
    first: u64,
    last: u64,
}

impl UnitCache for NhitCore {
    fn begin(&mut self, dev: u32, first: u64, last: u64) {
        (self.dev, self.first, self.last) = (dev, first, last);
        self.counted = false;
        if (self.slab.len() as u64) < self.trigger_lines {
            self.promote = true;
            return;
        }
        let present = (first..=last).filter(|&u| self.slab.get(key(dev, u)).is_some()).count() as u64;
        if present == last - first + 1 {
            self.promote = true; // full hit: nothing to promote, nothing counted
            return;
        }
        let mut all = true;
        for u in first..=last {
            let k = key(dev, u);
            match self.table.query(k) {
                Some(c) => all &= c >= self.threshold,
                None => {
                    self.table.insert(k);
                    all = false;
                }
            }
        }
        self.counted = true;
        self.promote = all || present > 0;
    }

    fn touch(&mut self, k: u64, stats: &mut Stats) -> (bool, bool) {
        if let Some(i) = self.slab.get(k) {
            self.slab.move_to_front(&mut self.list, i);
            return (true, true);
        }
        if !self.promote {
            return (false, false);
        }
        let (slot, evicted) = self.slab.insert_front_evicting(&mut self.list, k);
        stats.evictions += u64::from(evicted);
        (false, slot.is_some())
    }

    fn end(&mut self) {
        if self.counted && self.promote {
            for u in self.first..=self.last {
                self.table.reset(key(self.dev, u));
            }
        }
    }

    fn discard(&mut self, k: u64) -> bool {
        self.slab.remove(&mut self.list, k)
    }

    fn len(&self) -> u64 {
        self.slab.len() as u64
    }
}

/// LRU cache with nhit promotion.
#[derive(Debug, Clone)]
pub struct Nhit {
    unit: u64,
    core: NhitCore,
    stats: Stats,
}

impl Nhit {
    /// With OCF's defaults: insertion threshold 3, trigger 80 %.
    pub fn new(capacity_bytes: u64, unit_bytes: u64) -> Result<Self, ConfigError> {
        Self::with_params(capacity_bytes, unit_bytes, DEFAULT_INSERTION_THRESHOLD, DEFAULT_TRIGGER_PCT)
    }

    /// With an insertion threshold (≥ 1) and a trigger threshold in percent (0–100; 0:
    /// always count).
    pub fn with_params(
        capacity_bytes: u64,
        unit_bytes: u64,
        insertion_threshold: u32,
        trigger_pct: u32,
    ) -> Result<Self, ConfigError> {
        check_size("unit_bytes", unit_bytes)?;
        let lines = check_capacity(capacity_bytes, unit_bytes)?;
        if insertion_threshold == 0 {
            return Err(ConfigError::OutOfRange { what: "insertion threshold", value: 0, range: "at least 1" });
        }
        if trigger_pct > 100 {
            return Err(ConfigError::OutOfRange {
                what: "trigger threshold",
                value: u64::from(trigger_pct),
                range: "0 to 100 %",
            });
        }
        let table = (2 * lines).min(u32::MAX as u64 - 1) as usize;
        let stats = Stats { capacity_bytes: lines * unit_bytes, capacity_blocks: lines, ..Stats::default() };
        Ok(Nhit {
            unit: unit_bytes,
            core: NhitCore {
                slab: Slab::new(lines as usize),
                list: List::default(),
                table: HitTable::new(table),
                threshold: insertion_threshold,
                trigger_lines: (u64::from(trigger_pct) * lines).div_ceil(100),
                promote: true,
                counted: false,
                dev: 0,
                first: 0,
                last: 0,
            },
            stats,
        })
    }

    /// Counter-table entries in use (at most 2 × cache lines).
    pub fn tracked_lines(&self) -> usize {
        self.core.table.ring.len()
    }
}

impl Policy for Nhit {
    fn access(&mut self, r: &Request) -> Access {
        unit_access(&mut self.core, &mut self.stats, self.unit, r)
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }

    fn name(&self) -> &str {
        "nhit"
    }
}
