//! What the device itself saw during a measured window: /proc/diskstats deltas of the block
//! device under the target, held against diskmeter's own counts. Pure: the engine supplies
//! the counter snapshots.

use crate::margin::{self, Margin, Zone};
use serde::{Deserialize, Serialize};

/// Raw /proc/diskstats counters of one device (fields 4–14; times in ms).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCounters {
    pub reads: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ms: u64,
    pub io_ms: u64,
    pub weighted_ms: u64,
}

impl DiskCounters {
    /// `later - self`, counter by counter (a counter that went back counts as 0).
    pub fn delta(&self, later: &DiskCounters) -> DiskCounters {
        let d = |a: u64, b: u64| b.saturating_sub(a);
        DiskCounters {
            reads: d(self.reads, later.reads),
            read_merges: d(self.read_merges, later.read_merges),
            read_sectors: d(self.read_sectors, later.read_sectors),
            read_ms: d(self.read_ms, later.read_ms),
            writes: d(self.writes, later.writes),
            write_merges: d(self.write_merges, later.write_merges),
            write_sectors: d(self.write_sectors, later.write_sectors),
            write_ms: d(self.write_ms, later.write_ms),
            io_ms: d(self.io_ms, later.io_ms),
            weighted_ms: d(self.weighted_ms, later.weighted_ms),
        }
    }

    fn add(&mut self, o: &DiskCounters) {
        self.reads += o.reads;
        self.read_merges += o.read_merges;
        self.read_sectors += o.read_sectors;
        self.read_ms += o.read_ms;
        self.writes += o.writes;
        self.write_merges += o.write_merges;
        self.write_sectors += o.write_sectors;
        self.write_ms += o.write_ms;
        self.io_ms += o.io_ms;
        self.weighted_ms += o.weighted_ms;
    }
}

/// The device's view of a job's measured window (`device_view` in a result).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct DeviceView {
    /// The device as named in /proc/diskstats (`nvme0n1`, `sda2`, `dm-0`, `loop0`); empty when
    /// no device could be read.
    pub device: String,
    /// Devices under it (a loop device's backing file's disk, a dm/md device's members).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub backing: Vec<String>,
    /// Why there is no device view (tmpfs, a network file system, no /proc/diskstats).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unavailable: Option<String>,
    /// Seconds between the two snapshots.
    pub seconds: f64,
    pub counters: DiskCounters,
    /// What diskmeter itself completed on this device in the window (all its jobs on it).
    pub our_reads: u64,
    pub our_writes: u64,
    pub our_read_bytes: u64,
    pub our_write_bytes: u64,
    // Derived, as iostat -x computes them over the window.
    pub read_bytes: u64,
    pub write_bytes: u64,
    /// Mean request size, bytes.
    pub read_req_bytes: f64,
    pub write_req_bytes: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    pub aqu_sz: f64,
    pub util_pct: f64,
    /// Device requests per diskmeter I/O (1.00 = the device saw the I/O asked for).
    pub reads_per_io: Option<f64>,
    pub writes_per_io: Option<f64>,
}

/// Logical sector of /proc/diskstats: always 512 bytes.
const SECTOR: u64 = 512;

/// One check of a device view: the figure, its warning's margin and where it falls.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub margin: Margin,
    pub value: f64,
    pub zone: Zone,
    pub message: String,
}

impl DeviceView {
    /// The view of `device` over `seconds` with counter deltas `c` and diskmeter's own counts.
    pub fn new(device: &str, backing: Vec<String>, seconds: f64, c: DiskCounters, ours: [u64; 4]) -> Self {
        let mut v = DeviceView { device: device.to_string(), backing, seconds, counters: c, ..Default::default() };
        [v.our_reads, v.our_writes, v.our_read_bytes, v.our_write_bytes] = ours;
        v.derive();
        v
    }

    /// A view that could not be taken, and why.
    pub fn unavailable(why: impl Into<String>) -> Self {
        DeviceView { unavailable: Some(why.into()), ..Default::default() }
    }

    /// Adds another window of the same device (mark's passes).
    pub fn merge(&mut self, o: &DeviceView) {
        if self.unavailable.is_some() || o.unavailable.is_some() {
            return;
        }
        self.seconds += o.seconds;
        self.counters.add(&o.counters);
        self.our_reads += o.our_reads;
        self.our_writes += o.our_writes;
        self.our_read_bytes += o.our_read_bytes;
        self.our_write_bytes += o.our_write_bytes;
        self.derive();
    }

    fn derive(&mut self) {
        let c = &self.counters;
        self.read_bytes = c.read_sectors * SECTOR;
        self.write_bytes = c.write_sectors * SECTOR;
        let per = |a: u64, b: u64| if b > 0 { a as f64 / b as f64 } else { 0.0 };
        self.read_req_bytes = per(self.read_bytes, c.reads);
        self.write_req_bytes = per(self.write_bytes, c.writes);
        self.r_await_ms = per(c.read_ms, c.reads);
        self.w_await_ms = per(c.write_ms, c.writes);
        let ms = self.seconds * 1000.0;
        self.aqu_sz = if ms > 0.0 { c.weighted_ms as f64 / ms } else { 0.0 };
        self.util_pct = if ms > 0.0 { c.io_ms as f64 / ms * 100.0 } else { 0.0 };
        self.reads_per_io = (self.our_reads > 0).then(|| c.reads as f64 / self.our_reads as f64);
        self.writes_per_io = (self.our_writes > 0).then(|| c.writes as f64 / self.our_writes as f64);
    }

    /// The checks of a device view against diskmeter's own counts: `(code, message)` pairs,
    /// the warnings given ([`DeviceView::judged`] with the figures in a margin band left out).
    pub fn findings(&self, raw_device: bool) -> Vec<(&'static str, String)> {
        self.judged(raw_device)
            .into_iter()
            .filter(|f| f.zone == Zone::Given)
            .map(|f| (f.margin.code, f.message))
            .collect()
    }

    /// The checks of a device view against diskmeter's own counts, each with its figure and
    /// where it falls against its warning's margin ([`crate::margin`]); figures short of the
    /// band are left out. `raw_device`: the target is the block device itself (no file system
    /// that could add or absorb I/O).
    pub fn judged(&self, raw_device: bool) -> Vec<Finding> {
        let mut out = Vec::new();
        if self.unavailable.is_some() || self.device.is_empty() {
            return out;
        }
        let mut push = |margin: Margin, value: f64, zone: Zone, message: String| {
            if zone != Zone::Clear {
                out.push(Finding { margin, value, zone, message });
            }
        };
        let c = &self.counters;
        let dev = &self.device;
        for (what, per, merges, n, ours) in [
            ("read", self.reads_per_io, c.read_merges, c.reads, self.our_reads),
            ("write", self.writes_per_io, c.write_merges, c.writes, self.our_writes),
        ] {
            let Some(per) = per else { continue };
            // Too few I/Os to tell an edge effect (in flight at the window's edges) from a rule.
            if ours < 100 {
                continue;
            }
            if merges * 20 < n {
                push(
                    margin::SPLIT,
                    per,
                    margin::SPLIT.zone(per),
                    format!(
                        "{dev} saw {per:.2} {what} requests per diskmeter I/O: each I/O was split before the device \
                         (buffer or request-size limits), so the device did not see the workload asked for"
                    ),
                );
            } else if merges * 20 >= n.max(1) {
                push(
                    margin::MERGED,
                    per,
                    margin::MERGED.zone(per),
                    format!(
                        "{dev} merged {what}s: {per:.2} device requests per diskmeter I/O ({merges} merges), so the \
                         device saw fewer, larger requests than the workload's"
                    ),
                );
            }
        }
        if self.our_read_bytes >= 1 << 20 {
            let share = self.read_bytes as f64 / self.our_read_bytes as f64;
            push(
                margin::SAW_LESS,
                share,
                margin::SAW_LESS.zone(share),
                format!(
                    "{dev} read {} of the {} diskmeter read ({:.0} %): a cache above the device (page cache, \
                     controller, host) answered the rest, so the figures are the cache's",
                    human_bytes(self.read_bytes),
                    human_bytes(self.our_read_bytes),
                    share * 100.0
                ),
            );
        }
        let foreign_writes = self.our_writes == 0 && c.writes > 16 && self.write_bytes > (1 << 20);
        let foreign_reads = self.our_reads == 0 && c.reads > 16 && self.read_bytes > (1 << 20);
        if !foreign_writes && self.our_write_bytes >= 1 << 20 {
            let ratio = self.write_bytes as f64 / self.our_write_bytes as f64;
            let (m, why) = if raw_device {
                (margin::FOREIGN, "other I/O reached the device during the run")
            } else {
                (margin::SAW_MORE, "write amplification by the file system, its journal or RAID")
            };
            push(
                m,
                ratio,
                m.zone(ratio),
                format!(
                    "{dev} wrote {} for the {} diskmeter wrote ({ratio:.2}×): {why}",
                    human_bytes(self.write_bytes),
                    human_bytes(self.our_write_bytes),
                ),
            );
        }
        let foreign = format!(
            "{dev} did I/O that was not diskmeter's during the run ({} reads / {} writes on the device \
             against diskmeter's {} / {}): another process shared the device, so the figures are not the \
             device's alone",
            c.reads, c.writes, self.our_reads, self.our_writes
        );
        if foreign_writes || foreign_reads {
            // Nothing of diskmeter's to hold them against: not a figure near a threshold.
            push(margin::FOREIGN, f64::INFINITY, Zone::Given, foreign);
        } else if raw_device && self.read_bytes > (1 << 20) && self.our_read_bytes > 0 {
            let ratio = self.read_bytes as f64 / self.our_read_bytes as f64;
            push(margin::FOREIGN, ratio, margin::FOREIGN.zone(ratio), foreign);
        } else if raw_device && self.read_bytes > (1 << 20) {
            push(margin::FOREIGN, f64::INFINITY, Zone::Given, foreign);
        }
        out
    }

    /// The one-line summary for people: "device saw: 8 123 reads, 1.00 per I/O, 1024 KiB each,
    /// r_await 3.9 ms, aqu-sz 7.9".
    pub fn line(&self) -> String {
        if let Some(why) = &self.unavailable {
            return format!("device saw: — ({why})");
        }
        let mut parts = Vec::new();
        for (n, what, per, size, wait) in [
            (self.counters.reads, "reads", self.reads_per_io, self.read_req_bytes, ("r_await", self.r_await_ms)),
            (self.counters.writes, "writes", self.writes_per_io, self.write_req_bytes, ("w_await", self.w_await_ms)),
        ] {
            if n == 0 && per.is_none() {
                continue;
            }
            let per = per.map(|p| format!(", {p:.2} per I/O")).unwrap_or_default();
            parts.push(format!(
                "{} {what}{per}, {} each, {} {}",
                group_thousands(n),
                human_bytes(size.round() as u64),
                wait.0,
                ms(wait.1)
            ));
        }
        if parts.is_empty() {
            parts.push("no I/O".into());
        }
        format!(
            "device saw ({}): {}, aqu-sz {:.1}, util {:.0} %",
            self.device,
            parts.join("; "),
            self.aqu_sz,
            self.util_pct
        )
    }
}

fn ms(v: f64) -> String {
    if v >= 10.0 {
        format!("{v:.0} ms")
    } else if v >= 1.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

fn human_bytes(b: u64) -> String {
    const K: u64 = 1024;
    if b >= K * K * K {
        format!("{:.1} GiB", b as f64 / (K * K * K) as f64)
    } else if b >= K * K && !b.is_multiple_of(K * K) {
        format!("{:.1} MiB", b as f64 / (K * K) as f64)
    } else if b >= K * K {
        format!("{} MiB", b / (K * K))
    } else if b >= K {
        format!("{} KiB", (b as f64 / K as f64).round() as u64)
    } else {
        format!("{b} B")
    }
}

fn group_thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(' ');
        }
        out.push(ch);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codes;

    fn view(c: DiskCounters, ours: [u64; 4]) -> DeviceView {
        DeviceView::new("loop0", vec![], 2.0, c, ours)
    }

    #[test]
    fn one_request_per_io_is_quiet_and_described() {
        let c = DiskCounters {
            reads: 8123,
            read_sectors: 8123 * 2048,
            read_ms: 8123 * 39 / 10,
            weighted_ms: 15800,
            io_ms: 2000,
            ..Default::default()
        };
        let v = view(c, [8123, 0, 8123 << 20, 0]);
        assert!(v.findings(true).is_empty(), "{:?}", v.findings(true));
        assert_eq!(v.reads_per_io, Some(1.0));
        let line = v.line();
        assert!(line.contains("8 123 reads, 1.00 per I/O, 1 MiB each, r_await 3.9 ms"), "{line}");
        assert!(line.contains("aqu-sz 7.9"), "{line}");
    }

    #[test]
    fn splits_merges_less_more_and_foreign() {
        let split = view(
            DiskCounters { reads: 2000, read_sectors: 1000 * 2048, ..Default::default() },
            [1000, 0, 1000 << 20, 0],
        );
        assert_eq!(split.findings(true)[0].0, codes::SPLIT_IO);
        let merged = view(
            DiskCounters { writes: 250, write_merges: 750, write_sectors: 1000 * 8, ..Default::default() },
            [0, 1000, 0, 1000 * 4096],
        );
        assert_eq!(merged.findings(true)[0].0, codes::MERGED_IO);
        let less = view(
            DiskCounters { reads: 100, read_sectors: 100 * 8, ..Default::default() },
            [1000, 0, 1000 * 4096 * 256, 0],
        );
        assert!(less.findings(false).iter().any(|f| f.0 == codes::DEVICE_SAW_LESS));
        let more = view(
            DiskCounters { writes: 1500, write_sectors: 2000 * 2048, ..Default::default() },
            [0, 1000, 0, 1000 << 20],
        );
        assert!(more.findings(false).iter().any(|f| f.0 == codes::DEVICE_SAW_MORE));
        assert!(more.findings(true).iter().any(|f| f.0 == codes::FOREIGN_IO));
        let foreign = view(
            DiskCounters {
                reads: 1000,
                read_sectors: 1000 * 2048,
                writes: 400,
                write_sectors: 400 * 2048,
                ..Default::default()
            },
            [1000, 0, 1000 << 20, 0],
        );
        assert!(foreign.findings(false).iter().any(|f| f.0 == codes::FOREIGN_IO));
    }

    #[test]
    fn a_figure_near_a_threshold_is_borderline_not_a_warning() {
        // 1.03 requests per I/O: inside split-io's band (1.02 to 1.05).
        let near = view(
            DiskCounters { reads: 1030, read_sectors: 1000 * 2048, ..Default::default() },
            [1000, 0, 1000 << 20, 0],
        );
        assert!(near.findings(true).is_empty(), "{:?}", near.findings(true));
        let j = near.judged(true);
        assert_eq!(j.len(), 1, "{j:?}");
        assert_eq!((j[0].margin.code, j[0].zone), (codes::SPLIT_IO, Zone::Band));
        assert!((j[0].value - 1.03).abs() < 1e-9);
        // 1.01: short of the band, nothing at all.
        let fine = view(
            DiskCounters { reads: 1010, read_sectors: 1000 * 2048, ..Default::default() },
            [1000, 0, 1000 << 20, 0],
        );
        assert!(fine.judged(true).is_empty());
        // The device read 93 % of diskmeter's bytes: device-saw-less's band (90 to 95 %).
        let less =
            view(DiskCounters { reads: 930, read_sectors: 930 * 2048, ..Default::default() }, [1000, 0, 1000 << 20, 0]);
        let j = less.judged(false);
        assert!(j.iter().any(|f| f.margin.code == codes::DEVICE_SAW_LESS && f.zone == Zone::Band), "{j:?}");
        assert!(less.findings(false).is_empty());
    }

    #[test]
    fn merging_passes_adds_windows() {
        let c = DiskCounters {
            reads: 100,
            read_sectors: 800,
            read_ms: 50,
            io_ms: 500,
            weighted_ms: 100,
            ..Default::default()
        };
        let mut v = view(c, [100, 0, 409_600, 0]);
        v.merge(&view(c, [100, 0, 409_600, 0]));
        assert_eq!(v.counters.reads, 200);
        assert_eq!(v.reads_per_io, Some(1.0));
        assert!((v.util_pct - 25.0).abs() < 1e-9);
        assert_eq!(
            DeviceView::unavailable("tmpfs has no block device").line(),
            "device saw: — (tmpfs has no block device)"
        );
    }
}
