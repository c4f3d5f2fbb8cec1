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
//! Write-through accounting as the other unit policies.
//!
//! Memory: the next-use table, 4 bytes per unit reference (8 beyond 2^32 − 1 references), an
//! ordered set and a map of the cached units. The table is what needs the future: it grows
//! with the trace, everything else with the cache. [`OptPlan`] builds it from requests
//! streamed once (with a map of the distinct units, dropped after that read), and the
//! optimum then replays the requests streamed again, so the trace itself is never held;
//! [`Opt::new`] does both over a slice it keeps (and checks each replayed request against it).

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

/// Next use of every unit reference, in reference order: the index of the next reference to
/// the same unit if that one is a read, else [`NEVER`]. Positions are 32-bit until the table
/// holds 2^32 − 1 references, 64-bit beyond.
#[derive(Debug, Clone)]
enum NextUse {
    Narrow(Vec<u32>),
    Wide(Vec<u64>),
}

impl NextUse {
    fn len(&self) -> usize {
        match self {
            NextUse::Narrow(v) => v.len(),
            NextUse::Wide(v) => v.len(),
        }
    }

    /// Appends a reference whose next use is not known yet ("never").
    fn push_never(&mut self) {
        if let NextUse::Narrow(v) = self {
            if v.len() >= (u32::MAX - 1) as usize {
                let wide = v.iter().map(|&n| if n == u32::MAX { NEVER } else { u64::from(n) }).collect();
                *self = NextUse::Wide(wide);
            }
        }
        match self {
            NextUse::Narrow(v) => v.push(u32::MAX),
            NextUse::Wide(v) => v.push(NEVER),
        }
    }

    /// Records that reference `at` is next used by reference `by` (`by` < `len()`).
    fn set(&mut self, at: usize, by: usize) {
        match self {
            NextUse::Narrow(v) => {
                if let Some(slot) = v.get_mut(at) {
                    *slot = by as u32;
                }
            }
            NextUse::Wide(v) => {
                if let Some(slot) = v.get_mut(at) {
                    *slot = by as u64;
                }
            }
        }
    }

    /// Next use of reference `at` ([`NEVER`] beyond the table).
    #[inline]
    fn get(&self, at: usize) -> u64 {
        match self {
            NextUse::Narrow(v) => match v.get(at) {
                Some(&n) if n != u32::MAX => u64::from(n),
                _ => NEVER,
            },
            NextUse::Wide(v) => v.get(at).copied().unwrap_or(NEVER),
        }
    }

    fn shrink(&mut self) {
        match self {
            NextUse::Narrow(v) => v.shrink_to_fit(),
            NextUse::Wide(v) => v.shrink_to_fit(),
        }
    }
}

/// The first read of Belady's optimum: requests pushed in trace order (streamed, not held)
/// fill the next-use table; [`into_opt`](OptPlan::into_opt) then gives the optimum to replay
/// the same requests through.
#[derive(Debug, Clone)]
pub struct OptPlan {
    unit: u64,
    units: u64,
    next: NextUse,
    /// Each unit's latest reference so far.
    later: FxHashMap<u64, usize>,
}

impl OptPlan {
    /// A plan for a cache of `capacity_bytes / unit_bytes` units (the same checks as
    /// [`Opt::new`]).
    pub fn new(capacity_bytes: u64, unit_bytes: u64) -> Result<Self, ConfigError> {
        check_size("unit_bytes", unit_bytes)?;
        let units = check_capacity(capacity_bytes, unit_bytes)?;
        Ok(OptPlan { unit: unit_bytes, units, next: NextUse::Narrow(Vec::new()), later: FxHashMap::default() })
    }

    /// Adds the next request of the trace.
    pub fn push(&mut self, r: &Request) {
        let read = r.op == Op::Read;
        for k in unit_keys(r, self.unit) {
            let at = self.next.len();
            self.next.push_never();
            if let Some(prev) = self.later.insert(k, at) {
                if read {
                    self.next.set(prev, at);
                }
            }
        }
    }

    /// Unit references so far.
    pub fn references(&self) -> usize {
        self.next.len()
    }

    /// The optimum, to be given the same requests again, in the same order (with nothing to
    /// check them against: a different request sequence gives meaningless counts).
    pub fn into_opt(self) -> Opt {
        let OptPlan { unit, units, mut next, later } = self;
        drop(later);
        next.shrink();
        Opt { unit, replay: None, core: OptCore::new(units, next), stats: Opt::stats_for(units, unit) }
    }
}

/// What [`Opt::new`] checks each replayed request against.
#[derive(Debug, Clone)]
struct Replay {
    requests: Vec<Request>,
    req_idx: usize,
    req_start: Vec<usize>,
}

#[derive(Debug, Clone)]
struct OptCore {
    cap: usize,
    next: NextUse,
    cursor: usize,
    /// Whether the request being replayed is the expected one (else its units count as
    /// never used again).
    in_sync: bool,
    cached: FxHashMap<u64, u64>,
    order: BTreeSet<(u64, u64)>,
}

impl OptCore {
    fn new(units: u64, next: NextUse) -> Self {
        OptCore {
            cap: units as usize,
            next,
            cursor: 0,
            in_sync: true,
            cached: FxHashMap::default(),
            order: BTreeSet::new(),
        }
    }

    fn next_use(&mut self) -> u64 {
        if !self.in_sync {
            return NEVER;
        }
        let n = self.next.get(self.cursor);
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

/// Belady's MIN over a known request sequence.
#[derive(Debug, Clone)]
pub struct Opt {
    unit: u64,
    /// `None`: built by [`OptPlan`], the replay is trusted to be the planned sequence.
    replay: Option<Replay>,
    core: OptCore,
    stats: Stats,
}

impl Opt {
    /// Prepares the optimum for replaying `requests` (in this order) on a cache of
    /// `capacity_bytes / unit_bytes` units.
    pub fn new(requests: &[Request], capacity_bytes: u64, unit_bytes: u64) -> Result<Self, ConfigError> {
        let mut plan = OptPlan::new(capacity_bytes, unit_bytes)?;
        let mut req_start = Vec::with_capacity(requests.len() + 1);
        for r in requests {
            req_start.push(plan.references());
            plan.push(r);
        }
        req_start.push(plan.references());
        let mut opt = plan.into_opt();
        opt.replay = Some(Replay { requests: requests.to_vec(), req_idx: 0, req_start });
        Ok(opt)
    }

    fn stats_for(units: u64, unit_bytes: u64) -> Stats {
        Stats { capacity_bytes: units * unit_bytes, capacity_blocks: units, ..Stats::default() }
    }
}

impl Policy for Opt {
    /// Must be called with the requests given to [`Opt::new`] (or pushed to the [`OptPlan`]),
    /// in order. Built by [`Opt::new`], a request that differs from the next expected one is
    /// simulated with "never used again" for its units.
    fn access(&mut self, r: &Request) -> Access {
        if let Some(p) = self.replay.as_mut() {
            self.core.in_sync = p.requests.get(p.req_idx) == Some(r);
            if self.core.in_sync {
                self.core.cursor = p.req_start[p.req_idx];
                p.req_idx += 1;
            }
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
