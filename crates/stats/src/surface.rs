//! The `surface` section of a result document (an HD Tune / badblocks-style scan) and the
//! pure maths behind it: per-zone transfer rates, the latency map and the `e2fsck -l`
//! bad-block list. No I/O. The one-sentence verdict is made by the report crate
//! (`report::surface_verdict`).

use serde::{Deserialize, Serialize};

/// The whole surface scan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SurfaceResult {
    /// `read`, `nondestructive` or `destructive`.
    pub mode: String,
    /// Bytes per scanned block.
    pub block_bytes: u64,
    /// The target's logical block size (the unit bad sectors are narrowed to).
    pub logical_block: u32,
    /// Start of the scanned span, in bytes from the start of the target.
    pub offset: u64,
    /// Length of the scanned span in bytes.
    pub size: u64,
    /// Direct I/O (false: through the page cache, which measures RAM).
    pub direct: bool,
    /// `--sample N`: N evenly spaced blocks instead of every block.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample: Option<u64>,
    /// Blocks in flight during the read pass (`--qd`; 1 = one at a time).
    #[serde(default = "one")]
    pub qd: u32,
    /// Bytes read by the sequential pass (the first verify pass in destructive mode).
    pub scanned_bytes: u64,
    /// Blocks read by that pass.
    pub blocks: u64,
    /// Wall-clock seconds of the whole scan (all passes, re-reads and narrowing included).
    pub seconds: f64,
    /// Per-zone figures of the read pass, in position order.
    pub zones: Vec<Zone>,
    /// Random access time (absent with `--access 0` or when interrupted before it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<AccessTime>,
    /// Per-block latencies bucketed into at most a few thousand cells.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_map: Option<LatencyMap>,
    /// How slow blocks were detected.
    pub slow_rule: SlowRule,
    pub slow_blocks: Vec<SlowBlock>,
    pub bad_sectors: Vec<BadSector>,
    /// Destructive mode: one entry per pattern (write the span, then read-verify it).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub passes: Vec<PatternPass>,
    /// The bad-block list in file-system blocks (`--badblocks-out`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub badblocks: Option<BadBlockList>,
    /// Non-destructive mode: blocks whose original content could not be put back.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub restore_failures: Vec<u64>,
    /// One sentence: bad sectors, slow blocks, the rate range.
    pub verdict: String,
}

fn one() -> u32 {
    1
}

/// One zone: a contiguous 1/N of the span.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Zone {
    /// Start of the zone (bytes from the start of the target).
    pub offset: u64,
    /// Length of the zone in bytes.
    pub size: u64,
    /// Blocks measured in the zone (0 in sample mode when no sample fell into it).
    pub blocks: u64,
    pub bytes: u64,
    /// bytes / 10^6 / summed latency of the zone's blocks (`None` without blocks); with
    /// `--qd` > 1, over the wall time from the zone's first block start to its last end.
    pub mb_s: Option<f64>,
    pub lat_min_ns: u64,
    pub lat_mean_ns: f64,
    pub lat_max_ns: u64,
    /// Destructive mode: write rate of the zone in the first pattern pass.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_mb_s: Option<f64>,
}

/// Random access time: `count` reads of `io_bytes` at uniform random positions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AccessTime {
    pub count: u64,
    pub io_bytes: u64,
    pub min_ns: u64,
    pub mean_ns: f64,
    pub p50_ns: u64,
    pub p99_ns: u64,
    pub max_ns: u64,
    /// Every access as `[offset, latency ns]` (for the scatter chart).
    #[serde(default)]
    pub samples: Vec<[u64; 2]>,
}

/// Cell `i` covers blocks `[i·n/C, (i+1)·n/C)` of the read pass; it starts at `offsets[i]`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct LatencyMap {
    pub offsets: Vec<u64>,
    pub max_ns: Vec<u64>,
    pub median_ns: Vec<u64>,
}

/// The slow-block rule: latency > `factor` × rolling median of the previous `window`
/// blocks and above `floor_ns`; then re-read up to `rereads` times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowRule {
    pub factor: f64,
    pub window: u32,
    pub floor_ns: u64,
    pub rereads: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlowBlock {
    pub offset: u64,
    pub bytes: u64,
    pub lat_ns: u64,
    /// The rolling median it was compared with.
    pub median_ns: u64,
    /// Latencies of the re-reads.
    pub reread_ns: Vec<u64>,
    /// `confirmed` (every re-read slow too) or `transient`.
    pub status: String,
}

impl SlowBlock {
    pub fn confirmed(&self) -> bool {
        self.status == "confirmed"
    }
}

/// A sector (logical block) that failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BadSector {
    pub offset: u64,
    pub bytes: u64,
    /// The OS error number (`None` for a verify mismatch).
    pub errno: Option<i32>,
    /// `EIO`, `ENODATA`, `mismatch`, …
    pub error: String,
    /// `read`, `write`, `verify`, `write 0xaa`, `verify 0x55`, …
    pub phase: String,
}

/// One pattern of the destructive mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PatternPass {
    /// `0xaa`, `0x55`, …
    pub pattern: String,
    pub write_bytes: u64,
    pub write_seconds: f64,
    pub write_mb_s: Option<f64>,
    pub read_bytes: u64,
    pub read_seconds: f64,
    pub read_mb_s: Option<f64>,
    /// Bad sectors found in this pass.
    pub bad_sectors: u64,
    /// True when the pass was cut short (Ctrl-C or a fault).
    #[serde(default)]
    pub partial: bool,
}

/// The bad-block list as `e2fsck -l` reads it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BadBlockList {
    pub fs_block: u64,
    pub blocks: Vec<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
}

/// `bytes / 10^6 / seconds`, `None` for no time.
pub fn mb_s(bytes: u64, ns: u64) -> Option<f64> {
    (ns > 0).then(|| bytes as f64 / 1e6 / (ns as f64 / 1e9))
}

/// Per-zone figures from per-block `(offset, bytes, latency ns)` of a span. `zones` is
/// capped by the span in blocks of `block` bytes; every block lands in the zone that
/// holds its first byte.
pub fn zones(offset: u64, size: u64, block: u64, zones: u32, blocks: &[(u64, u64, u64)]) -> Vec<Zone> {
    if size == 0 || zones == 0 {
        return Vec::new();
    }
    let n_blocks = size.div_ceil(block.max(1));
    let n = u64::from(zones).min(n_blocks).max(1);
    let mut out: Vec<Zone> = (0..n)
        .map(|i| {
            let lo = zone_start(size, n, i);
            let hi = zone_start(size, n, i + 1);
            Zone {
                offset: offset + lo,
                size: hi - lo,
                blocks: 0,
                bytes: 0,
                mb_s: None,
                lat_min_ns: 0,
                lat_mean_ns: 0.0,
                lat_max_ns: 0,
                write_mb_s: None,
            }
        })
        .collect();
    let mut time = vec![0u64; n as usize];
    for &(off, bytes, ns) in blocks {
        let Some(i) = zone_of(offset, size, n, off) else { continue };
        let z = &mut out[i];
        z.lat_min_ns = if z.blocks == 0 { ns } else { z.lat_min_ns.min(ns) };
        z.lat_max_ns = z.lat_max_ns.max(ns);
        z.blocks += 1;
        z.bytes += bytes;
        time[i] = time[i].saturating_add(ns);
    }
    for (z, t) in out.iter_mut().zip(time) {
        if z.blocks > 0 {
            z.mb_s = mb_s(z.bytes, t);
            z.lat_mean_ns = t as f64 / z.blocks as f64;
        }
    }
    out
}

/// Queue depth > 1: replace each zone's `mb_s` by its bytes over the wall time its blocks
/// took, from the earliest start to the latest end (`(offset, bytes, start ns, end ns)`).
pub fn zone_rates_from_spans(offset: u64, size: u64, zones: &mut [Zone], spans: &[(u64, u64, u64, u64)]) {
    let n = zones.len() as u64;
    let mut acc: Vec<Option<(u64, u64, u64)>> = vec![None; zones.len()];
    for &(off, bytes, t0, t1) in spans {
        let Some(i) = zone_of(offset, size, n, off) else { continue };
        acc[i] = Some(match acc[i] {
            None => (bytes, t0, t1),
            Some((b, a0, a1)) => (b + bytes, a0.min(t0), a1.max(t1)),
        });
    }
    for (z, a) in zones.iter_mut().zip(acc) {
        if let Some((bytes, t0, t1)) = a {
            z.mb_s = mb_s(bytes, t1.saturating_sub(t0));
        }
    }
}

/// Start of zone `i` of `n` within a span of `size` bytes (relative).
fn zone_start(size: u64, n: u64, i: u64) -> u64 {
    (u128::from(size) * u128::from(i) / u128::from(n)) as u64
}

/// The zone index of an absolute offset, `None` outside the span.
pub fn zone_of(offset: u64, size: u64, n: u64, off: u64) -> Option<usize> {
    if off < offset || off - offset >= size || n == 0 {
        return None;
    }
    let rel = u128::from(off - offset);
    let mut i = (rel * u128::from(n) / u128::from(size)) as u64;
    // Integer rounding of the zone bounds: step to the zone whose [start, end) holds rel.
    while i + 1 < n && u128::from(zone_start(size, n, i + 1)) <= rel {
        i += 1;
    }
    while i > 0 && u128::from(zone_start(size, n, i)) > rel {
        i -= 1;
    }
    Some(i as usize)
}

/// The latency map of per-block `(offset, latency ns)` in scan order: at most `cells`
/// cells, each the max and the median of its blocks.
pub fn latency_map(blocks: &[(u64, u64)], cells: usize) -> LatencyMap {
    let n = blocks.len();
    let c = cells.min(n);
    let mut m = LatencyMap::default();
    let mut buf = Vec::new();
    for i in 0..c {
        let (lo, hi) = (i * n / c, (i + 1) * n / c);
        let Some(first) = blocks.get(lo) else { break };
        buf.clear();
        buf.extend(blocks[lo..hi].iter().map(|b| b.1));
        buf.sort_unstable();
        m.offsets.push(first.0);
        m.max_ns.push(buf.last().copied().unwrap_or(0));
        m.median_ns.push(median_sorted(&buf));
    }
    m
}

/// The median of a sorted slice (the lower middle for an even length; 0 when empty).
pub fn median_sorted(v: &[u64]) -> u64 {
    if v.is_empty() {
        0
    } else {
        v[(v.len() - 1) / 2]
    }
}

/// The value at quantile `q` (0..=1) of a sorted slice, nearest rank.
pub fn quantile_sorted(v: &[u64], q: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    let rank = (q.clamp(0.0, 1.0) * v.len() as f64).ceil() as usize;
    v[rank.clamp(1, v.len()) - 1]
}

/// Access-time figures from the latencies (and positions) of random reads.
pub fn access_time(io_bytes: u64, samples: Vec<[u64; 2]>) -> AccessTime {
    let mut lat: Vec<u64> = samples.iter().map(|s| s[1]).collect();
    lat.sort_unstable();
    let sum: u128 = lat.iter().map(|&x| u128::from(x)).sum();
    AccessTime {
        count: lat.len() as u64,
        io_bytes,
        min_ns: lat.first().copied().unwrap_or(0),
        mean_ns: if lat.is_empty() { 0.0 } else { sum as f64 / lat.len() as f64 },
        p50_ns: quantile_sorted(&lat, 0.5),
        p99_ns: quantile_sorted(&lat, 0.99),
        max_ns: lat.last().copied().unwrap_or(0),
        samples,
    }
}

/// File-system block numbers (units of `fs_block`, counted from the start of the target)
/// touched by bad sectors: deduplicated, ascending — one per line is what `e2fsck -l` and
/// `mke2fs -l` read.
pub fn badblock_numbers(sectors: &[BadSector], fs_block: u64) -> Vec<u64> {
    let fs_block = fs_block.max(1);
    let mut v: Vec<u64> = sectors
        .iter()
        .flat_map(|s| {
            let first = s.offset / fs_block;
            let last = (s.offset + s.bytes.max(1) - 1) / fs_block;
            first..=last
        })
        .collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// The text of a bad-block list file: one decimal block number per line.
pub fn badblock_file(blocks: &[u64]) -> String {
    let mut s = String::with_capacity(blocks.len() * 8);
    for b in blocks {
        s.push_str(&b.to_string());
        s.push('\n');
    }
    s
}

/// Bad sectors in ascending offset order, one entry per sector (the first phase kept).
pub fn dedup_sectors(v: &mut Vec<BadSector>) {
    v.sort_by_key(|s| s.offset);
    v.dedup_by_key(|s| s.offset);
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bad(offset: u64, bytes: u64) -> BadSector {
        BadSector { offset, bytes, errno: Some(5), error: "EIO".into(), phase: "read".into() }
    }

    #[test]
    fn zones_cover_the_span_and_sum_the_bytes() {
        let blocks: Vec<(u64, u64, u64)> = (0..10).map(|i| (1000 + i * 100, 100, 1000)).collect();
        let z = zones(1000, 1000, 100, 4, &blocks);
        assert_eq!(z.len(), 4);
        assert_eq!(z[0].offset, 1000);
        assert_eq!(z.iter().map(|z| z.size).sum::<u64>(), 1000);
        assert_eq!(z.iter().map(|z| z.bytes).sum::<u64>(), 1000);
        // 100 bytes per µs = 100 MB/s.
        for zone in &z {
            assert!((zone.mb_s.unwrap() - 100.0).abs() < 1e-9);
        }
    }

    #[test]
    fn zones_are_capped_by_blocks() {
        let z = zones(0, 300, 100, 100, &[(0, 100, 5), (100, 100, 7), (200, 100, 9)]);
        assert_eq!(z.len(), 3);
        assert_eq!((z[1].lat_min_ns, z[1].lat_max_ns), (7, 7));
    }

    #[test]
    fn zone_rate_is_bytes_over_summed_time() {
        let z = zones(0, 200, 100, 1, &[(0, 100, 1_000), (100, 100, 3_000)]);
        assert!((z[0].mb_s.unwrap() - 50.0).abs() < 1e-9);
        assert_eq!((z[0].lat_min_ns, z[0].lat_max_ns), (1_000, 3_000));
        assert!((z[0].lat_mean_ns - 2_000.0).abs() < 1e-9);
    }

    #[test]
    fn overlapping_blocks_count_wall_time_once() {
        let mut z = zones(0, 400, 100, 2, &[(0, 100, 1_000), (100, 100, 1_000), (200, 100, 1_000), (300, 100, 1_000)]);
        assert!((z[0].mb_s.unwrap() - 100.0).abs() < 1e-9);
        // Two blocks in flight at once: each zone's 200 bytes took 1 µs of wall time.
        zone_rates_from_spans(
            0,
            400,
            &mut z,
            &[(0, 100, 0, 1_000), (100, 100, 0, 1_000), (200, 100, 1_000, 2_000), (300, 100, 1_000, 2_000)],
        );
        assert!((z[0].mb_s.unwrap() - 200.0).abs() < 1e-9);
        assert!((z[1].mb_s.unwrap() - 200.0).abs() < 1e-9);
    }

    #[test]
    fn latency_map_keeps_max_and_median() {
        let blocks: Vec<(u64, u64)> = (0..8).map(|i| (i * 10, [1, 2, 3, 100, 5, 6, 7, 8][i as usize])).collect();
        let m = latency_map(&blocks, 2);
        assert_eq!(m.offsets, vec![0, 40]);
        assert_eq!(m.max_ns, vec![100, 8]);
        assert_eq!(m.median_ns, vec![2, 6]);
        let m = latency_map(&blocks, 100);
        assert_eq!(m.max_ns.len(), 8);
    }

    #[test]
    fn badblock_list_in_fs_blocks() {
        let v = badblock_numbers(&[bad(8192 + 512, 512), bad(8192, 512), bad(4095, 2), bad(40960, 512)], 4096);
        assert_eq!(v, vec![0, 1, 2, 10]);
        assert_eq!(badblock_file(&v), "0\n1\n2\n10\n");
        assert_eq!(badblock_numbers(&[bad(1024, 512)], 1024), vec![1]);
    }

    #[test]
    fn quantiles() {
        let v: Vec<u64> = (1..=100).collect();
        assert_eq!(quantile_sorted(&v, 0.5), 50);
        assert_eq!(quantile_sorted(&v, 0.99), 99);
        assert_eq!(quantile_sorted(&v, 1.0), 100);
        assert_eq!(quantile_sorted(&[], 0.5), 0);
        let a = access_time(4096, vec![[0, 3], [4096, 1], [8192, 2]]);
        assert_eq!((a.min_ns, a.p50_ns, a.max_ns, a.count), (1, 2, 3, 3));
    }

    proptest! {
        #[test]
        fn every_block_lands_in_the_zone_holding_it(offset in 0u64..1 << 40, size in 1u64..1 << 36,
                                                    n in 1u64..1000, pick in 0.0f64..1.0) {
            let off = offset + ((size - 1) as f64 * pick) as u64;
            let i = zone_of(offset, size, n, off).unwrap() as u64;
            prop_assert!(i < n);
            prop_assert!(offset + zone_start(size, n, i) <= off);
            prop_assert!(off < offset + zone_start(size, n, i + 1));
        }

        #[test]
        fn zones_conserve_bytes(sizes in proptest::collection::vec(1u64..10_000, 1..200), nz in 1u32..300) {
            let mut pos = 0;
            let mut blocks = Vec::new();
            for s in &sizes {
                blocks.push((pos, *s, *s * 3 + 1));
                pos += s;
            }
            let z = zones(0, pos, 1, nz, &blocks);
            prop_assert_eq!(z.iter().map(|z| z.bytes).sum::<u64>(), pos);
            prop_assert_eq!(z.iter().map(|z| z.blocks).sum::<u64>(), sizes.len() as u64);
            prop_assert_eq!(z.iter().map(|z| z.size).sum::<u64>(), pos);
        }

        #[test]
        fn badblock_list_is_sorted_unique_and_covers(offs in proptest::collection::vec(0u64..1 << 30, 0..50),
                                                     shift in 9u32..17) {
            let fsb = 1u64 << shift;
            let sectors: Vec<BadSector> = offs.iter().map(|&o| bad(o / 512 * 512, 512)).collect();
            let v = badblock_numbers(&sectors, fsb);
            prop_assert!(v.windows(2).all(|w| w[0] < w[1]));
            for s in &sectors {
                prop_assert!(v.binary_search(&(s.offset / fsb)).is_ok());
            }
        }

        #[test]
        fn latency_map_cells_are_bounded(lat in proptest::collection::vec(0u64..1_000_000, 0..5000), cells in 1usize..3000) {
            let blocks: Vec<(u64, u64)> = lat.iter().enumerate().map(|(i, &l)| (i as u64, l)).collect();
            let m = latency_map(&blocks, cells);
            prop_assert_eq!(m.max_ns.len(), cells.min(lat.len()));
            prop_assert_eq!(m.max_ns.iter().copied().max(), lat.iter().copied().max());
            for (mx, md) in m.max_ns.iter().zip(&m.median_ns) {
                prop_assert!(md <= mx);
            }
        }
    }
}
