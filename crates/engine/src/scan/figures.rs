//! The scan's figures from what its passes recorded: zones (read and write rates, wall time
//! at `--qd` > 1), the latency map, the access time, slow blocks, bad sectors deduplicated,
//! the passes of the writing modes.

use super::open::Opened;
use super::state::Scan;
use stats::surface::{self as sm, SlowRule, SurfaceResult};

impl Scan<'_> {
    /// The scan's figures: zones (read and write rates), the latency map, access time, slow
    /// blocks, bad sectors narrowed and deduplicated, the passes of the writing modes. The
    /// verdict (a sentence: `report`'s) and the bad-block list (`app::surface`'s) are left
    /// empty, and `seconds` to the caller, who holds the scan's clock.
    pub fn figures(
        &mut self,
        t: &Opened,
        (start, size): (u64, u64),
        block: u64,
        sample: Option<u64>,
        access: Option<Vec<[u64; 2]>>,
    ) -> SurfaceResult {
        let cfg = self.cfg;
        sm::dedup_sectors(&mut self.bad);
        let mut zones = sm::zones(start, size, block, cfg.zones, &self.reads);
        if !self.spans.is_empty() {
            // Several blocks were in flight: a zone's rate is its bytes over the wall time from
            // its first block's start to its last block's end (summed latencies would count
            // overlapping time several times).
            sm::zone_rates_from_spans(start, size, &mut zones, &self.spans);
        }
        if !self.writes.is_empty() {
            for (z, w) in zones.iter_mut().zip(sm::zones(start, size, block, cfg.zones, &self.writes)) {
                z.write_mb_s = w.mb_s;
            }
        }
        let map_in: Vec<(u64, u64)> = self.reads.iter().map(|r| (r.0, r.2)).collect();
        SurfaceResult {
            mode: cfg.mode.name().to_string(),
            block_bytes: block,
            logical_block: t.lb as u32,
            offset: start,
            size,
            direct: t.direct,
            sample,
            qd: cfg.qd.max(1),
            scanned_bytes: self.reads.iter().map(|r| r.1).sum(),
            blocks: self.reads.len() as u64,
            seconds: 0.0,
            zones,
            access: access.map(|a| sm::access_time(self.dev.lb.max(4096).min(size), a)),
            latency_map: (!map_in.is_empty()).then(|| sm::latency_map(&map_in, cfg.map_cells.max(1))),
            slow_rule: SlowRule {
                factor: cfg.slow_factor,
                window: cfg.slow_window,
                floor_ns: cfg.slow_floor.as_nanos() as u64,
                rereads: cfg.rereads.max(1),
            },
            slow_blocks: std::mem::take(&mut self.slow_blocks),
            bad_sectors: std::mem::take(&mut self.bad),
            passes: std::mem::take(&mut self.passes),
            badblocks: None,
            restore_failures: std::mem::take(&mut self.restore_failures),
            verdict: String::new(),
        }
    }
}
