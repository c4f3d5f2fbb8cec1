//! Belady's offline optimum (MIN) over fixed-size units: the read-hit upper bound.
//!
//! It needs the future, so it is built from the whole request slice: a backward pass
//! computes, for every unit access, the index of the next access to the same unit **if that
//! next access is a read** (a unit whose next access is a write or a discard is worth nothing
//! until then: the write brings it back for free, the discard drops it), else "never".
//! Replaying the same slice in order, it inserts every miss (read or write) and, when the cache
//! is over capacity, evicts the unit with the farthest next use — the newcomer included, so a
//! missed unit whose next use is farther than every cached unit's is in effect not kept
//! (MIN with bypass). For unit-sized requests this maximises read hits over every policy
//! that holds at most as many units and can only bring a unit in when it is accessed, with or
//! without admission control (nhit, the QSAN thresholds), so `opt` bounds them all. With
//! multi-unit requests it maximises *unit* read hits, a bound on the request-level figures in
//! spirit only.
//!
//! Write-through accounting as the other unit policies. Memory: 8 bytes per unit access
//! (next-use index) plus the request slice, an ordered set and a map of the cached units.

use std::collections::BTreeSet;

use rustc_hash::FxHashMap;
use trace::{Op, Request};

use crate::config::{check_capacity, check_size, ConfigError};
use crate::policy::{discard_span, key, unit_access, unit_span, Access, Policy, UnitCache};
use crate::stats::Stats;

/// "Never used again (by a read)".
const NEVER: u64 = u64::MAX;

/// The unit keys a request references, in order (discards: the units they cover entirely).
fn unit_keys(r: &Request, unit: u64) -> impl Iterator<Item = u64> {
    let dev = r.dev;
    let (first, end) = match r.op {
        Op::Read | Op::Write => unit_span(r, unit).map_or((1, 1), |(f, l)| (f, l + 1)),
        Op::Discard => discard_span(r, unit),
        Op::Flush => (1, 1),
    };
    (first..end).map(move |u| key(dev, u))
}

#[derive(Debug, Clone)]
struct OptCore {
    cap: usize,
    next: Vec<u64>,
    cursor: usize,
    /// Whether the request being replayed is the expected one (else its units count as
    /// never used again).
    in_sync: bool,
    cached: FxHashMap<u64, u64>,
    order: BTreeSet<(u64, u64)>,
}

impl OptCore {
    fn next_use(&mut self) -> u64 {
        if !self.in_sync {
            return NEVER;
        }
        let n = self.next.get(self.cursor).copied().unwrap_or(NEVER);
        self.cursor += 1;
        n
    }
}

impl UnitCache for OptCore {
    fn touch(&mut self, k: u64, stats: &mut Stats) -> (bool, bool) {
        let n = self.next_use();
        if let Some(old) = self.cached.get_mut(&k) {
            self.order.remove(&(*old, k));
            *old = n;
            self.order.insert((n, k));
            return (true, true);
        }
        if self.cached.len() >= self.cap {
            match self.order.last().copied() {
                Some((far, victim)) if far > n => {
                    self.order.remove(&(far, victim));
                    self.cached.remove(&victim);
                    stats.evictions += 1;
                }
                _ => return (false, false),
            }
        }
        self.cached.insert(k, n);
        self.order.insert((n, k));
        (false, true)
    }

    fn discard(&mut self, k: u64) -> bool {
        let _ = self.next_use();
        match self.cached.remove(&k) {
            Some(n) => {
                self.order.remove(&(n, k));
                true
            }
            None => false,
        }
    }

    fn len(&self) -> u64 {
        self.cached.len() as u64
    }
}

/// Belady's MIN over a known request slice.
#[derive(Debug, Clone)]
pub struct Opt {
    unit: u64,
    requests: Vec<Request>,
    req_idx: usize,
    req_start: Vec<usize>,
    core: OptCore,
    stats: Stats,
}

impl Opt {
    /// Prepares the optimum for replaying `requests` (in this order) on a cache of
    /// `capacity_bytes / unit_bytes` units.
    pub fn new(requests: &[Request], capacity_bytes: u64, unit_bytes: u64) -> Result<Self, ConfigError> {
        check_size("unit_bytes", unit_bytes)?;
        let units = check_capacity(capacity_bytes, unit_bytes)?;
        // Forward: unit accesses and where each request's accesses start.
        let mut keys = Vec::new();
        let mut reads = Vec::new();
        let mut req_start = Vec::with_capacity(requests.len() + 1);
        for r in requests {
            req_start.push(keys.len());
            for k in unit_keys(r, unit_bytes) {
                keys.push(k);
                reads.push(r.op == Op::Read);
            }
        }
        req_start.push(keys.len());
        // Backward: next access to the same unit, if it is a read.
        let mut next = vec![NEVER; keys.len()];
        let mut later: FxHashMap<u64, usize> = FxHashMap::default();
        for j in (0..keys.len()).rev() {
            if let Some(&l) = later.get(&keys[j]) {
                if reads[l] {
                    next[j] = l as u64;
                }
            }
            later.insert(keys[j], j);
        }
        let stats = Stats { capacity_bytes: units * unit_bytes, capacity_blocks: units, ..Stats::default() };
        Ok(Opt {
            unit: unit_bytes,
            requests: requests.to_vec(),
            req_idx: 0,
            req_start,
            core: OptCore {
                cap: units as usize,
                next,
                cursor: 0,
                in_sync: true,
                cached: FxHashMap::default(),
                order: BTreeSet::new(),
            },
            stats,
        })
    }
}

impl Policy for Opt {
    /// Must be called with the requests given to [`Opt::new`], in order; a request that
    /// differs from the next expected one is simulated with "never used again" for its units.
    fn access(&mut self, r: &Request) -> Access {
        self.core.in_sync = self.requests.get(self.req_idx) == Some(r);
        if self.core.in_sync {
            self.core.cursor = self.req_start[self.req_idx];
            self.req_idx += 1;
        }
        unit_access(&mut self.core, &mut self.stats, self.unit, r)
    }

    fn stats(&self) -> &Stats {
        &self.stats
    }

    fn name(&self) -> &str {
        "opt"
    }
}
