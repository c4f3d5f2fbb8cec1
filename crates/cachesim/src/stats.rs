//! Counters every policy fills the same way, so their tables compare, and [`dwpd`].
//!
//! Conventions (all policies):
//!
//! * every `Read` of non-zero length is exactly one of `read_hits` (all bytes from the SSD),
//!   `read_partial_hits` (some) or `read_misses` (none); every `Write` of non-zero length is
//!   exactly one of `write_hits` (every touched sub-block / unit was valid in the cache before
//!   the write; write-around, read-only and bypassed writes never hit) or `write_misses`. Zero-length reads / writes are counted in `empty` only.
//! * `bypasses` counts the reads and writes the sequential cut-off sent around the cache (a
//!   subset of the reads and writes above).
//! * Host bytes: `read_bytes_ssd + read_bytes_hdd` = bytes read by the host;
//!   `write_bytes_ssd` / `write_bytes_hdd` = host write bytes that went to the SSD / HDD (a
//!   write-through write counts in `write_bytes_hdd`, its SSD copy in `ssd_write_bytes`).
//! * Device totals: `hdd_read_bytes = read_bytes_hdd + fill_hdd_bytes`,
//!   `hdd_write_bytes = write_bytes_hdd + dirty_eviction_bytes`,
//!   `ssd_read_bytes = read_bytes_ssd + dirty_eviction_bytes`, `ssd_write_bytes` = fills
//!   plus host data written over already valid data.
//! * Ops: one HDD op per contiguous run of HDD-served bytes of a request (an HDD run goes on
//!   across cache blocks, the LBAs are contiguous); one SSD op per contiguous run of
//!   SSD-served bytes inside one cache block; one SSD write op per cache block filled or
//!   updated by a request; one HDD write op per contiguous run of dirty sub-blocks written at
//!   eviction. The RAID write penalty is applied later, by [`crate::perf`].

/// Counters of one simulation. Occupancy fields hold the current state, all others are
/// cumulative.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stats {
    /// Host read requests (non-zero length).
    pub reads: u64,
    /// Host write requests (non-zero length).
    pub writes: u64,
    /// Reads served entirely by the SSD.
    pub read_hits: u64,
    /// Reads served partly by the SSD, partly by the HDD.
    pub read_partial_hits: u64,
    /// Reads served entirely by the HDD.
    pub read_misses: u64,
    /// Writes whose every touched sub-block / unit was valid before the write.
    pub write_hits: u64,
    /// Other writes.
    pub write_misses: u64,
    /// Reads and writes sent around the cache by the sequential cut-off.
    pub bypasses: u64,
    /// Discard requests.
    pub discards: u64,
    /// Flush requests (no effect on the model).
    pub flushes: u64,
    /// Zero-length reads and writes (no effect).
    pub empty: u64,
    /// Host requests that waited for at least one HDD operation (latency model).
    pub hdd_requests: u64,

    /// Host read bytes served by the SSD.
    pub read_bytes_ssd: u64,
    /// Host read bytes served by the HDD.
    pub read_bytes_hdd: u64,
    /// Host write bytes absorbed by the SSD (write-back).
    pub write_bytes_ssd: u64,
    /// Host write bytes written to the HDD.
    pub write_bytes_hdd: u64,
    /// Bytes made valid in the cache by populating (whole sub-blocks / units).
    pub fill_bytes: u64,
    /// Part of `fill_bytes` the host request did not carry and that was read from the HDD
    /// (rounding to sub-block / unit boundaries).
    pub fill_hdd_bytes: u64,
    /// Dirty bytes written to the HDD when their block was evicted (write-back).
    pub dirty_eviction_bytes: u64,
    /// Valid bytes dropped by write-around / read-only writes and discards.
    pub invalidated_bytes: u64,

    /// Fill events: one per (request, cache block) that populated sub-blocks / units.
    pub fills: u64,
    /// Blocks evicted to make room.
    pub evictions: u64,
    /// Evicted blocks that held dirty data.
    pub dirty_evictions: u64,

    /// HDD read operations.
    pub hdd_read_ops: u64,
    /// HDD write operations (before any RAID write penalty).
    pub hdd_write_ops: u64,
    /// HDD bytes read.
    pub hdd_read_bytes: u64,
    /// HDD bytes written.
    pub hdd_write_bytes: u64,
    /// SSD read operations.
    pub ssd_read_ops: u64,
    /// SSD write operations.
    pub ssd_write_ops: u64,
    /// SSD bytes read.
    pub ssd_read_bytes: u64,
    /// SSD bytes written (the endurance figure: see [`dwpd`]).
    pub ssd_write_bytes: u64,

    /// Cache capacity in bytes (whole blocks / units).
    pub capacity_bytes: u64,
    /// Cache capacity in blocks / units.
    pub capacity_blocks: u64,
    /// Blocks / units currently allocated.
    pub blocks_used: u64,
    /// Bytes currently valid (sub-blocks / units).
    pub valid_bytes: u64,
    /// Bytes currently dirty.
    pub dirty_bytes: u64,
}

fn ratio(a: u64, b: u64) -> f64 {
    if b == 0 {
        0.0
    } else {
        a as f64 / b as f64
    }
}

impl Stats {
    /// Accounts one host read of which `ssd_bytes` came from the SSD and `hdd_bytes` from the
    /// HDD in `hdd_runs` operations, and classifies it (full hit, partial hit, miss).
    #[inline]
    pub(crate) fn record_read(&mut self, ssd_bytes: u64, hdd_bytes: u64, hdd_runs: u64) -> crate::Access {
        self.reads += 1;
        self.read_bytes_ssd += ssd_bytes;
        self.read_bytes_hdd += hdd_bytes;
        self.hdd_read_bytes += hdd_bytes;
        self.hdd_read_ops += hdd_runs;
        if hdd_bytes > 0 {
            self.hdd_requests += 1;
        }
        if hdd_bytes == 0 {
            self.read_hits += 1;
            crate::Access::ReadHit
        } else if ssd_bytes > 0 {
            self.read_partial_hits += 1;
            crate::Access::ReadPartialHit
        } else {
            self.read_misses += 1;
            crate::Access::ReadMiss
        }
    }

    /// Read hit ratio by request: full hits / reads (0 without reads).
    pub fn read_hit_ratio(&self) -> f64 {
        ratio(self.read_hits, self.reads)
    }

    /// Read hit ratio by byte: SSD-served read bytes / read bytes (0 without reads).
    pub fn read_byte_hit_ratio(&self) -> f64 {
        ratio(self.read_bytes_ssd, self.read_bytes_ssd + self.read_bytes_hdd)
    }

    /// Write hit ratio by request (0 without writes).
    pub fn write_hit_ratio(&self) -> f64 {
        ratio(self.write_hits, self.writes)
    }

    /// Valid bytes / capacity.
    pub fn occupancy(&self) -> f64 {
        ratio(self.valid_bytes, self.capacity_bytes)
    }

    /// Allocated blocks / capacity in blocks.
    pub fn block_occupancy(&self) -> f64 {
        ratio(self.blocks_used, self.capacity_blocks)
    }

    /// Host reads and writes (non-zero length).
    pub fn requests(&self) -> u64 {
        self.reads + self.writes
    }

    /// The cumulative counters accumulated since `earlier` (a snapshot of the same run);
    /// occupancy fields are this snapshot's.
    pub fn since(&self, earlier: &Stats) -> Stats {
        macro_rules! d {
            ($($f:ident),*) => { Stats { $($f: self.$f.saturating_sub(earlier.$f),)* ..*self } };
        }
        d!(
            reads,
            writes,
            read_hits,
            read_partial_hits,
            read_misses,
            write_hits,
            write_misses,
            bypasses,
            discards,
            flushes,
            empty,
            hdd_requests,
            read_bytes_ssd,
            read_bytes_hdd,
            write_bytes_ssd,
            write_bytes_hdd,
            fill_bytes,
            fill_hdd_bytes,
            dirty_eviction_bytes,
            invalidated_bytes,
            fills,
            evictions,
            dirty_evictions,
            hdd_read_ops,
            hdd_write_ops,
            hdd_read_bytes,
            hdd_write_bytes,
            ssd_read_ops,
            ssd_write_ops,
            ssd_read_bytes,
            ssd_write_bytes
        )
    }

    /// Records a dirty-data write-back of `bytes` in `runs` HDD operations (eviction).
    pub(crate) fn dirty_writeback(&mut self, bytes: u64, runs: u64) {
        self.dirty_eviction_bytes += bytes;
        self.hdd_write_bytes += bytes;
        self.hdd_write_ops += runs;
        self.ssd_read_bytes += bytes;
        self.ssd_read_ops += 1;
    }
}

/// Drive writes per day: `ssd_bytes_written` over `span_ns` scaled to one day, divided by
/// `ssd_capacity`. 0 when the span or the capacity is 0.
pub fn dwpd(ssd_bytes_written: u64, ssd_capacity: u64, span_ns: u64) -> f64 {
    if span_ns == 0 || ssd_capacity == 0 {
        return 0.0;
    }
    const DAY_NS: f64 = 86_400e9;
    ssd_bytes_written as f64 * (DAY_NS / span_ns as f64) / ssd_capacity as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ratios_and_since() {
        let a = Stats { reads: 10, read_hits: 4, read_bytes_ssd: 30, read_bytes_hdd: 10, ..Stats::default() };
        assert!((a.read_hit_ratio() - 0.4).abs() < 1e-12);
        assert!((a.read_byte_hit_ratio() - 0.75).abs() < 1e-12);
        let b = Stats { reads: 25, read_hits: 14, valid_bytes: 7, ..a };
        let d = b.since(&a);
        assert_eq!((d.reads, d.read_hits, d.valid_bytes), (15, 10, 7));
        assert_eq!(Stats::default().read_hit_ratio(), 0.0);
    }

    #[test]
    fn dwpd_scales_to_a_day() {
        // 1 TB written in 12 h on a 1 TB SSD: 2 drive writes per day.
        assert!((dwpd(1_000_000_000_000, 1_000_000_000_000, 43_200_000_000_000) - 2.0).abs() < 1e-9);
        assert_eq!(dwpd(1, 0, 1), 0.0);
        assert_eq!(dwpd(1, 1, 0), 0.0);
    }
}
