//! Per-backing-store-block read and write counters of the QSAN model.
//!
//! Layout: a vector of [`CounterEntry`] (key `u64`, read `u32`, write `u32`: 16 bytes) and an
//! `FxHashMap<u64, u32>` from block key to entry (16 bytes + 1 control byte per bucket, load
//! 7/16–7/8). That is about **35–55 bytes per tracked block** (plus 1 bit with a limit).
//!
//! * Unbounded (the default): one entry per distinct block ever counted; the table grows
//!   (amortised reallocation, O(log n) times per run), memory ≈ 45 B × distinct blocks
//!   touched by reads that missed or writes to uncached blocks.
//! * Bounded ([`CounterTable::bounded`]): at most `limit` entries, preallocated; when full, a
//!   CLOCK hand picks the victim: an entry counted again since it was inserted or last passed
//!   over (reference bit set) gets a second chance, a new entry starts without one. A victim's
//!   counts are forgotten, so a cold block has to earn its threshold again.
//!
//! Counters saturate at `u32::MAX`.

use rustc_hash::FxHashMap;

/// One tracked block.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CounterEntry {
    key: u64,
    read: u32,
    write: u32,
}

/// The counter table.
#[derive(Debug, Clone)]
pub(crate) struct CounterTable {
    entries: Vec<CounterEntry>,
    referenced: Vec<u64>,
    map: FxHashMap<u64, u32>,
    limit: usize,
    hand: usize,
}

impl CounterTable {
    /// A table without a limit.
    pub(crate) fn unbounded() -> Self {
        CounterTable {
            entries: Vec::new(),
            referenced: Vec::new(),
            map: FxHashMap::default(),
            limit: usize::MAX,
            hand: 0,
        }
    }

    /// A table of at most `limit` (≥ 1) entries with CLOCK replacement, preallocated.
    pub(crate) fn bounded(limit: usize) -> Self {
        let limit = limit.clamp(1, u32::MAX as usize - 1);
        let mut map = FxHashMap::default();
        map.reserve(limit);
        CounterTable {
            entries: Vec::with_capacity(limit),
            referenced: vec![0; limit.div_ceil(64)],
            map,
            limit,
            hand: 0,
        }
    }

    /// Entries held.
    pub(crate) fn len(&self) -> usize {
        self.entries.len()
    }

    /// The limit, if any.
    pub(crate) fn limit(&self) -> Option<usize> {
        (self.limit != usize::MAX).then_some(self.limit)
    }

    /// (read, write) counts of `key` (0, 0 when untracked).
    pub(crate) fn get(&self, key: u64) -> (u32, u32) {
        self.map.get(&key).map_or((0, 0), |&i| {
            let e = self.entries[i as usize];
            (e.read, e.write)
        })
    }

    /// Increments the read (`write == false`) or write counter of `key`; returns its new value.
    #[inline]
    pub(crate) fn bump(&mut self, key: u64, write: bool) -> u32 {
        let i = match self.map.get(&key) {
            Some(&i) => {
                if self.limit != usize::MAX {
                    self.referenced[i as usize / 64] |= 1 << (i % 64);
                }
                i as usize
            }
            None => self.insert(key),
        };
        let e = &mut self.entries[i];
        let c = if write { &mut e.write } else { &mut e.read };
        *c = c.saturating_add(1);
        *c
    }

    fn insert(&mut self, key: u64) -> usize {
        let fresh = CounterEntry { key, read: 0, write: 0 };
        if self.entries.len() < self.limit {
            self.entries.push(fresh);
            let i = self.entries.len() - 1;
            self.map.insert(key, i as u32);
            return i;
        }
        // CLOCK: clear reference bits until an unreferenced entry comes under the hand.
        let n = self.entries.len();
        let victim = loop {
            let h = self.hand;
            self.hand = (h + 1) % n;
            let (w, b) = (h / 64, 1u64 << (h % 64));
            if self.referenced[w] & b != 0 {
                self.referenced[w] &= !b;
            } else {
                break h;
            }
        };
        let old = self.entries[victim].key;
        self.map.remove(&old);
        self.entries[victim] = fresh;
        self.map.insert(key, victim as u32);
        victim
    }

    /// Approximate heap bytes held.
    pub(crate) fn memory_bytes(&self) -> u64 {
        let entry = std::mem::size_of::<CounterEntry>() as u64;
        let idx = std::mem::size_of::<(u64, u32)>() as u64 + 1;
        self.entries.capacity() as u64 * entry
            + self.map.capacity() as u64 * 8 / 7 * idx
            + self.referenced.capacity() as u64 * 8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_is_16_bytes() {
        assert_eq!(std::mem::size_of::<CounterEntry>(), 16);
    }

    #[test]
    fn counts_and_clock() {
        let mut t = CounterTable::bounded(2);
        assert_eq!(t.bump(1, false), 1);
        assert_eq!(t.bump(1, false), 2); // 1 referenced
        assert_eq!(t.bump(2, true), 1);
        assert_eq!(t.bump(3, false), 1); // evicts 2 (1 had a second chance)
        assert_eq!(t.get(1), (2, 0));
        assert_eq!(t.get(2), (0, 0));
        assert_eq!(t.len(), 2);
        for k in 10..1000 {
            t.bump(k, false);
        }
        assert_eq!(t.len(), 2);
        let mut u = CounterTable::unbounded();
        for k in 0..1000 {
            u.bump(k, k % 2 == 0);
        }
        assert_eq!(u.len(), 1000);
        assert_eq!(u.limit(), None);
    }
}
