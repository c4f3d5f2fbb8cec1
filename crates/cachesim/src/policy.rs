//! The [`Policy`] trait every simulated cache implements, the per-request outcome
//! [`Access`] (defined in `access`, below the counters that count it), the cache key of a
//! (device, block) pair, and the shared request driver of the unit-granular comparison
//! policies (`lru`, `nhit`, `s3fifo`, `opt`).

use trace::{Op, Request};

pub use crate::access::Access;
use crate::stats::Stats;

/// A simulated cache: feed it requests in trace order, read its [`Stats`].
pub trait Policy {
    /// Simulates one request and returns its outcome. Never panics, whatever the request
    /// (zero length, offsets near `u64::MAX`, any device id).
    fn access(&mut self, r: &Request) -> Access;
    /// Simulates `requests` in order: the same as one [`access`](Policy::access) per request.
    /// A policy may override it to start the memory accesses of the next requests while it
    /// simulates the current one.
    fn access_all(&mut self, requests: &[Request]) {
        for r in requests {
            self.access(r);
        }
    }
    /// The counters so far.
    fn stats(&self) -> &Stats;
    /// Short name: `qsan`, `lru`, `nhit`, `s3fifo`, `opt`.
    fn name(&self) -> &str;
}

/// Bits of a key holding the block index (the same layout as [`crate::mrc`] keys).
pub const KEY_BLOCK_BITS: u32 = 44;
const KEY_BLOCK_MASK: u64 = (1 << KEY_BLOCK_BITS) - 1;

/// The cache key of block `block` of device `dev`: the device id above the low 44 bits of the
/// block index. Unique for `dev < 2^20` and block indices below 2^44 (8 PiB at 512-byte
/// blocks); beyond that keys alias, which only merges the statistics of aliased blocks.
#[inline]
pub fn key(dev: u32, block: u64) -> u64 {
    (u64::from(dev) << KEY_BLOCK_BITS) | (block & KEY_BLOCK_MASK)
}

/// The byte range `[start, end)` of a request, cut at the end of the 64-bit space.
#[inline]
pub(crate) fn byte_range(r: &Request) -> (u64, u64) {
    (r.offset, r.offset.saturating_add(u64::from(r.len)))
}

/// Units (of `unit` bytes) a read or write touches: `first..=last`; `None` when empty.
#[inline]
pub(crate) fn unit_span(r: &Request, unit: u64) -> Option<(u64, u64)> {
    let (s, e) = byte_range(r);
    (e > s).then(|| (s / unit, (e - 1) / unit))
}

/// Units a discard covers entirely: `first..end` (possibly empty).
#[inline]
pub(crate) fn discard_span(r: &Request, unit: u64) -> (u64, u64) {
    let (s, e) = byte_range(r);
    let first = s.div_ceil(unit);
    let end = e / unit;
    (first, end.max(first))
}

/// A unit-granular cache as the shared driver sees it. One unit is one cache entry (no
/// sub-blocks): a request is split into the units it touches.
pub(crate) trait UnitCache {
    /// Called before the units of a read or write are touched (nhit decides promotion here).
    fn begin(&mut self, _dev: u32, _first: u64, _last: u64) {}
    /// Accesses one unit: returns (present before, present after). Evictions are counted in
    /// `stats.evictions` by the implementation.
    fn touch(&mut self, key: u64, stats: &mut Stats) -> (bool, bool);
    /// Called after the units of a read or write were touched.
    fn end(&mut self) {}
    /// Drops a unit (discard); returns whether it was cached.
    fn discard(&mut self, key: u64) -> bool;
    /// Units cached.
    fn len(&self) -> u64;
}

/// Simulates one request on a unit-granular cache with write-through accounting: reads and
/// writes both populate (as the cache decides), every write goes to the HDD, cached units it
/// touches are updated on the SSD. See [`crate::stats`] for the counting conventions.
pub(crate) fn unit_access<C: UnitCache>(c: &mut C, stats: &mut Stats, unit: u64, r: &Request) -> Access {
    let out = unit_access_inner(c, stats, unit, r);
    stats.blocks_used = c.len();
    stats.valid_bytes = c.len().saturating_mul(unit);
    out
}

fn unit_access_inner<C: UnitCache>(c: &mut C, stats: &mut Stats, unit: u64, r: &Request) -> Access {
    match r.op {
        Op::Flush => {
            stats.flushes += 1;
            return Access::Flush;
        }
        Op::Discard => {
            stats.discards += 1;
            let (first, end) = discard_span(r, unit);
            for u in first..end {
                if c.discard(key(r.dev, u)) {
                    stats.invalidated_bytes += unit;
                }
            }
            return Access::Discard;
        }
        Op::Read | Op::Write => {}
    }
    let Some((first, last)) = unit_span(r, unit) else {
        stats.empty += 1;
        return Access::Empty;
    };
    let (s, e) = byte_range(r);
    let is_read = r.op == Op::Read;
    c.begin(r.dev, first, last);
    let (mut ssd_bytes, mut hdd_bytes, mut hdd_runs) = (0u64, 0u64, 0u64);
    let mut prev_hdd = false;
    let mut all_present = true;
    for u in first..=last {
        let us = u * unit;
        let ov = e.min(us.saturating_add(unit)) - s.max(us);
        let (was, now) = c.touch(key(r.dev, u), stats);
        all_present &= was;
        if is_read {
            if was {
                ssd_bytes += ov;
                stats.ssd_read_ops += 1;
                prev_hdd = false;
            } else {
                hdd_bytes += ov;
                if !prev_hdd {
                    hdd_runs += 1;
                }
                prev_hdd = true;
            }
        } else if was {
            stats.ssd_write_bytes += ov;
            stats.ssd_write_ops += 1;
        }
        if !was && now {
            let extra = unit - ov;
            stats.fills += 1;
            stats.fill_bytes += unit;
            stats.fill_hdd_bytes += extra;
            stats.hdd_read_bytes += extra;
            stats.ssd_write_bytes += unit;
            stats.ssd_write_ops += 1;
            if !is_read && extra > 0 {
                stats.hdd_read_ops += 1; // read-modify fill of a partly written unit
            }
        }
    }
    c.end();
    let len = e - s;
    if is_read {
        stats.record_read(ssd_bytes, hdd_bytes, hdd_runs)
    } else {
        stats.writes += 1;
        stats.write_bytes_hdd += len;
        stats.hdd_write_bytes += len;
        stats.hdd_write_ops += 1;
        stats.hdd_requests += 1;
        if all_present {
            stats.write_hits += 1;
            Access::WriteHit
        } else {
            stats.write_misses += 1;
            Access::WriteMiss
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(offset: u64, len: u32, op: Op) -> Request {
        Request { t_ns: 0, offset, len, op, dev: 0 }
    }

    #[test]
    fn spans() {
        assert_eq!(unit_span(&req(0, 4096, Op::Read), 4096), Some((0, 0)));
        assert_eq!(unit_span(&req(4095, 2, Op::Read), 4096), Some((0, 1)));
        assert_eq!(unit_span(&req(5, 0, Op::Read), 4096), None);
        assert_eq!(unit_span(&req(u64::MAX, 10, Op::Read), 4096), None);
        assert_eq!(discard_span(&req(100, 8192, Op::Discard), 4096), (1, 2));
        assert_eq!(discard_span(&req(100, 100, Op::Discard), 4096), (1, 1));
        assert_eq!(key(1, 5), (1 << 44) | 5);
    }
}
