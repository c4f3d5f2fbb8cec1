//! S3-FIFO (Yang et al., SOSP 2023) over fixed-size units.
//!
//! * A small FIFO `S` (10 % of the units, at least 1), a main FIFO `M` (the rest) and a ghost
//!   FIFO `G` of keys only, as many entries as `M` holds.
//! * A hit increments the unit's 2-bit frequency (capped at 3); nothing moves.
//! * A miss inserts the unit at the head of `M` if its key is in `G`, else at the head of `S`,
//!   with frequency 0, after making room.
//! * Making room evicts one unit: from `S` while `S` holds at least its 10 % share (or `M` is
//!   empty), else from `M`. `S`'s tail is moved to `M` (frequency cleared) if it was hit at
//!   least once while in `S` (libCacheSim's move-to-main threshold 1), else it leaves the
//!   cache and its key enters `G`. `M`'s tail is reinserted at `M`'s head with its frequency
//!   decremented if that frequency is above 0, else it leaves the cache.
//!
//! Reads and writes both insert (write-through accounting, see [`crate::policy`]).

use rustc_hash::FxHashMap;
use trace::Request;

use crate::config::{check_capacity, check_size, ConfigError};
use crate::policy::{unit_access, Access, Policy, UnitCache};
use crate::slab::{List, Slab};
use crate::stats::Stats;

/// Ghost FIFO of keys: a ring of keys plus an index key → insertion sequence number; an
/// entry is live while its sequence number is within the last `cap` insertions.
#[derive(Debug, Clone)]
struct Ghost {
    ring: Vec<u64>,
    cap: u64,
    seq: u64,
    map: FxHashMap<u64, u64>,
}

impl Ghost {
    fn new(cap: usize) -> Self {
        let mut map = FxHashMap::default();
        map.reserve(cap);
        Ghost { ring: Vec::with_capacity(cap), cap: cap as u64, seq: 0, map }
    }

    fn insert(&mut self, k: u64) {
        if self.cap == 0 {
            return;
        }
        let slot = (self.seq % self.cap) as usize;
        if self.seq >= self.cap {
            let old = self.ring[slot];
            if self.map.get(&old) == Some(&(self.seq - self.cap)) {
                self.map.remove(&old);
            }
            self.ring[slot] = k;
        } else {
            self.ring.push(k);
        }
        self.map.insert(k, self.seq);
        self.seq += 1;
    }

    /// Removes `k`; returns whether it was a live ghost.
    fn take(&mut self, k: u64) -> bool {
        self.map.remove(&k).is_some()
    }
}

const SMALL: u8 = 0;
const MAIN: u8 = 1;
const MAX_FREQ: u8 = 3;

#[derive(Debug, Clone)]
struct S3Core {
    slab: Slab,
    small: List,
    main: List,
    freq: Vec<u8>,
    queue: Vec<u8>,
    ghost: Ghost,
    small_cap: u32,
    move_threshold: u8,
}

impl S3Core {
    fn set(&mut self, i: u32, q: u8) {
        let i = i as usize;
        if i >= self.freq.len() {
            self.freq.resize(i + 1, 0);
            self.queue.resize(i + 1, SMALL);
        }
        self.freq[i] = 0;
        self.queue[i] = q;
    }

    /// Evicts one unit (see the module documentation).
    fn evict_one(&mut self, stats: &mut Stats) {
        loop {
            if self.small.len() >= self.small_cap || self.main.len() == 0 {
                let Some(t) = self.small.tail() else { return };
                self.slab.unlink(&mut self.small, t);
                if self.freq[t as usize] >= self.move_threshold {
                    self.freq[t as usize] = 0;
                    self.queue[t as usize] = MAIN;
                    self.slab.push_front(&mut self.main, t);
                    continue;
                }
                let k = self.slab.key(t);
                self.slab.release(t);
                self.ghost.insert(k);
                stats.evictions += 1;
                return;
            }
            let Some(t) = self.main.tail() else { return };
            if self.freq[t as usize] > 0 {
                self.freq[t as usize] -= 1;
                self.slab.move_to_front(&mut self.main, t);
                continue;
            }
            self.slab.unlink(&mut self.main, t);
            self.slab.release(t);
            stats.evictions += 1;
            return;
        }
    }
}

impl UnitCache for S3Core {
    #[inline]
    fn touch(&mut self, k: u64, stats: &mut Stats) -> (bool, bool) {
        if let Some(i) = self.slab.get(k) {
            let f = &mut self.freq[i as usize];
            *f = (*f + 1).min(MAX_FREQ);
            return (true, true);
        }
        while self.slab.is_full() {
            let before = self.slab.len();
            self.evict_one(stats);
            if self.slab.len() == before {
                return (false, false); // cannot happen with capacity >= 1
            }
        }
        let q = if self.ghost.take(k) { MAIN } else { SMALL };
        let Some(i) = self.slab.alloc(k) else { return (false, false) };
        self.set(i, q);
        if q == MAIN {
            self.slab.push_front(&mut self.main, i);
        } else {
            self.slab.push_front(&mut self.small, i);
        }
        (false, true)
    }

    fn discard(&mut self, k: u64) -> bool {
        let Some(i) = self.slab.get(k) else { return false };
        if self.queue[i as usize] == MAIN {
            self.slab.unlink(&mut self.main, i);
        } else {
            self.slab.unlink(&mut self.small, i);
        }
        self.slab.release(i);
        true
    }

    fn len(&self) -> u64 {
        self.slab.len() as u64
    }
}

/// S3-FIFO cache of `capacity_bytes / unit_bytes` units.
#[derive(Debug, Clone)]
pub struct S3Fifo {
    unit: u64,
    core: S3Core,
    stats: Stats,
}

impl S3Fifo {
    /// With the paper's parameters: small queue 10 %, ghost = main size.
    pub fn new(capacity_bytes: u64, unit_bytes: u64) -> Result<Self, ConfigError> {
        check_size("unit_bytes", unit_bytes)?;
        let units = check_capacity(capacity_bytes, unit_bytes)?;
        let small_cap = (units / 10).max(1);
        let main_cap = units - small_cap.min(units);
        let stats = Stats { capacity_bytes: units * unit_bytes, capacity_blocks: units, ..Stats::default() };
        Ok(S3Fifo {
            unit: unit_bytes,
            core: S3Core {
                slab: Slab::new(units as usize),
                small: List::default(),
                main: List::default(),
                freq: Vec::with_capacity(units as usize),
                queue: Vec::with_capacity(units as usize),
                ghost: Ghost::new(main_cap.max(1) as usize),
                small_cap: small_cap as u32,
                move_threshold: 1,
            },
            stats,
        })
    }

    /// Units in the small and the main queue.
    pub fn queue_lens(&self) -> (u32, u32) {
        (self.core.small.len(), self.core.main.len())
    }
}

impl Policy for S3Fifo {
    #[inline]
    fn access(&mut self, r: &Request) -> Access {
        unit_access(&mut self.core, &mut self.stats, self.unit, r)
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }

    fn name(&self) -> &str {
        "s3fifo"
    }
}
