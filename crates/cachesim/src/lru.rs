//! Plain LRU over fixed-size units: every miss (read or write) is inserted, the least
//! recently used unit is evicted. Write-through accounting (see [`crate::policy`]).

use trace::Request;

use crate::config::{check_capacity, check_size, ConfigError};
use crate::policy::{key, unit_access, Access, Policy, UnitCache};
use crate::slab::{List, Slab};
use crate::stats::Stats;

/// [`Lru::shift`] of a unit that is not a power of two (no prefetching then).
const NO_SHIFT: u32 = u32::MAX;

/// LRU cache of `capacity_bytes / unit_bytes` units.
#[derive(Debug, Clone)]
pub struct Lru {
    unit: u64,
    /// log2 of `unit` when it is a power of two, else [`NO_SHIFT`].
    shift: u32,
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
        if evicted {
            stats.evictions += 1;
            self.slab.prefetch_victims(&self.list);
        }
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
        let shift = if unit_bytes.is_power_of_two() { unit_bytes.trailing_zeros() } else { NO_SHIFT };
        Ok(Lru {
            unit: unit_bytes,
            shift,
            core: LruCore { slab: Slab::new(units as usize), list: List::default() },
            stats,
        })
    }

    /// The unit (cache line) size.
    pub fn unit_bytes(&self) -> u64 {
        self.unit
    }

    /// The key of the first unit of `r` (`unit` a power of two).
    #[inline]
    fn first_key(&self, r: &Request) -> u64 {
        key(r.dev, r.offset >> self.shift)
    }
}

/// How many requests ahead [`Lru::access_all`] starts loading a request's index entry; its
/// node is loaded half as far ahead and the node's neighbours a quarter as far.
const AHEAD: usize = 16;

impl Policy for Lru {
    #[inline]
    fn access(&mut self, r: &Request) -> Access {
        unit_access(&mut self.core, &mut self.stats, self.unit, r)
    }

    /// One [`access`](Policy::access) per request, with the memory the coming requests
    /// will need (their first unit's index entry, node and list neighbours) requested from
    /// RAM in stages while the current one is simulated: with a cache far larger than the
    /// CPU's, that memory latency is what an access costs.
    fn access_all(&mut self, requests: &[Request]) {
        if self.shift == NO_SHIFT {
            for r in requests {
                self.access(r);
            }
            return;
        }
        for (i, r) in requests.iter().enumerate() {
            if let Some(a) = requests.get(i + AHEAD) {
                self.core.slab.prefetch_index(self.first_key(a));
            }
            if let Some(b) = requests.get(i + AHEAD / 2) {
                self.core.slab.prefetch_node(self.first_key(b));
            }
            if let Some(c) = requests.get(i + AHEAD / 4) {
                self.core.slab.prefetch_neighbours(self.first_key(c));
            }
            unit_access(&mut self.core, &mut self.stats, self.unit, r);
        }
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }

    fn name(&self) -> &str {
        "lru"
    }
}
