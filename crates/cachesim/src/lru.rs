//! Plain LRU over fixed-size units: every miss (read or write) is inserted, the least
//! recently used unit is evicted. Write-through accounting (see [`crate::policy`]).

use trace::Request;

use crate::config::{check_capacity, check_size, ConfigError};
use crate::policy::{unit_access, Access, Policy, UnitCache};
use crate::slab::{List, Slab};
use crate::stats::Stats;

/// LRU cache of `capacity_bytes / unit_bytes` units.
#[derive(Debug, Clone)]
pub struct Lru {
    unit: u64,
    core: LruCore,
    stats: Stats,
}

#[derive(Debug, Clone)]
struct LruCore {
    slab: Slab,
    list: List,
}

impl UnitCache for LruCore {
    #[inline]
    fn touch(&mut self, key: u64, stats: &mut Stats) -> (bool, bool) {
        if let Some(i) = self.slab.get(key) {
            self.slab.move_to_front(&mut self.list, i);
            return (true, true);
        }
        let (slot, evicted) = self.slab.insert_front_evicting(&mut self.list, key);
        stats.evictions += u64::from(evicted);
        (false, slot.is_some())
    }

    fn discard(&mut self, key: u64) -> bool {
        self.slab.remove(&mut self.list, key)
    }

    fn len(&self) -> u64 {
        self.slab.len() as u64
    }
}

impl Lru {
    /// An LRU cache; `unit_bytes` is the cache line (a power of two or a multiple of 512),
    /// the capacity is rounded down to whole units.
    pub fn new(capacity_bytes: u64, unit_bytes: u64) -> Result<Self, ConfigError> {
        check_size("unit_bytes", unit_bytes)?;
        let units = check_capacity(capacity_bytes, unit_bytes)?;
        let stats = Stats { capacity_bytes: units * unit_bytes, capacity_blocks: units, ..Stats::default() };
        Ok(Lru { unit: unit_bytes, core: LruCore { slab: Slab::new(units as usize), list: List::default() }, stats })
    }

    /// The unit (cache line) size.
    pub fn unit_bytes(&self) -> u64 {
        self.unit
    }
}

impl Policy for Lru {
    #[inline]
    fn access(&mut self, r: &Request) -> Access {
        unit_access(&mut self.core, &mut self.stats, self.unit, r)
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }

    fn name(&self) -> &str {
        "lru"
    }
}
