//! What `doctor` and the benchmarks' cheap checks read about the system around a block device:
//! each layer's queue settings beyond [`crate::block::Queue`], the disk's link (PCIe, SATA,
//! USB), power management, the caller's cgroup limits, I/O pressure, the trim timer and the
//! kernel log. Every read goes through [`Roots`], so fixture trees stand in for the system.
//!
//! A fact the system does not give is `None` or empty, never guessed. Off Linux the trees do
//! not exist and every fact reads as unknown.

use crate::block::{Device, Roots, Topology, Transport};
use serde::Serialize;
use std::fs;
use std::path::{Path, PathBuf};

use crate::sysfile::{read_num, read_trim};

/// A number sysfs may print in hex (`0x1a`) or decimal.
fn read_hex_or_dec(p: &Path) -> Option<u64> {
    let s = read_trim(p)?;
    match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok(),
        None => s.parse().ok(),
    }
}

/// A file read and where it was read from: the evidence of a finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Read<T> {
    pub value: T,
    /// The file it came from, as the live system names it (`/sys/block/sda/queue/nr_requests`).
    pub source: String,
}

/// The live path of `p` under `roots` (fixture trees show as `/sys/...`). The most specific
/// root wins: fixture trees keep proc, dev and etc inside the sys root.
fn live(roots: &Roots, p: &Path) -> String {
    let best = [(&roots.sys, "/sys"), (&roots.proc, "/proc"), (&roots.dev, "/dev"), (&roots.etc, "/etc")]
        .into_iter()
        .filter_map(|(root, name)| p.strip_prefix(root).ok().map(|rel| (root.components().count(), name, rel)))
        .max_by_key(|(depth, _, _)| *depth);
    match best {
        Some((_, name, rel)) if rel.as_os_str().is_empty() => name.to_string(),
        Some((_, name, rel)) => format!("{name}/{}", rel.display()),
        None => p.display().to_string(),
    }
}

fn read_at<T: std::str::FromStr>(roots: &Roots, p: &Path) -> Option<Read<T>> {
    Some(Read { value: read_num(p)?, source: live(roots, p) })
}

fn read_str(roots: &Roots, p: &Path) -> Option<Read<String>> {
    Some(Read { value: read_trim(p)?, source: live(roots, p) })
}

/// One layer of the stack under a target (a partition, dm, md, loop or a whole disk), with the
/// settings the doctor weighs.
#[derive(Debug, Clone, Serialize)]
pub struct Layer {
    pub name: String,
    /// `nvme`, `sata`, `usb`, `virtio`, `loop`, `dm`, …
    pub transport: &'static str,
    /// `partition`, `disk`, `dm`, `md`, `loop`, `zram`, …
    pub role: &'static str,
    #[serde(skip)]
    pub device: Device,
    /// dm: `CRYPT-…` (dm-crypt), `LVM-…` (LVM); the uuid's prefix says which.
    pub dm_uuid: Option<String>,
    /// Partitions: the offset of the start from the device's natural alignment, in bytes.
    pub alignment_offset: Option<Read<u64>>,
    /// Partitions: the start in 512-byte sectors.
    pub start_sector: Option<Read<u64>>,
    pub physical_block_size: Option<Read<u32>>,
    pub rotational: Option<Read<bool>>,
    pub scheduler: Option<Read<String>>,
    /// BFQ's `low_latency` (1 favours interactive latency over throughput).
    pub bfq_low_latency: Option<Read<bool>>,
    pub write_cache: Option<Read<String>>,
    pub max_sectors_kb: Option<Read<u32>>,
    pub max_hw_sectors_kb: Option<Read<u32>>,
    pub nr_requests: Option<Read<u32>>,
    pub read_ahead_kb: Option<Read<u32>>,
    /// 0 when the layer passes no discard down.
    pub discard_max_bytes: Option<Read<u64>>,
    /// `none`, `host-aware`, `host-managed`.
    pub zoned: Option<Read<String>>,
    /// SCSI/SATA: the device's queue depth (1 = no NCQ/TCQ).
    pub device_queue_depth: Option<Read<u32>>,
    /// SCSI/SATA: commands that ended in an error since the driver attached.
    pub ioerr_cnt: Option<Read<u64>>,
    /// md: `idle`, `resync`, `recover`, `check`, `repair`.
    pub md_sync_action: Option<Read<String>>,
    pub loop_backing_file: Option<String>,
}

impl Layer {
    /// A whole disk at the bottom of the stack: not a partition, and nothing below it.
    pub fn is_whole_disk(&self) -> bool {
        self.device.partition.is_none() && self.device.slaves.is_empty()
    }

    /// It says it rotates and is not a RAM device (zram and brd keep the flag of a disk).
    pub fn says_it_rotates(&self) -> bool {
        self.rotational.as_ref().is_some_and(|r| r.value) && !matches!(self.transport, "zram" | "ram")
    }
}

/// The speed of a PCIe link in GT/s and its lanes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PcieRate {
    pub gts: f64,
    pub width: u32,
}

impl PcieRate {
    /// Bytes per second the link carries after line encoding (8b/10b up to 5 GT/s, 128b/130b
    /// from 8 GT/s; 64 GT/s FLIT mode counted as 242/256).
    pub fn bytes_per_s(&self) -> f64 {
        let per_lane_bits = if self.gts <= 5.0 {
            self.gts * 1e9 * 8.0 / 10.0
        } else if self.gts < 64.0 {
            self.gts * 1e9 * 128.0 / 130.0
        } else {
            self.gts * 1e9 * 242.0 / 256.0
        };
        per_lane_bits / 8.0 * f64::from(self.width)
    }

    /// "PCIe 3.0 x4".
    pub fn label(&self) -> String {
        let gen = match self.gts {
            g if g <= 2.5 => "1.0",
            g if g <= 5.0 => "2.0",
            g if g <= 8.0 => "3.0",
            g if g <= 16.0 => "4.0",
            g if g <= 32.0 => "5.0",
            _ => "6.0",
        };
        format!("PCIe {gen} x{}", self.width)
    }
}

/// A PCIe device's link: what it runs at, what it can do, and what the port above it can do.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PcieLink {
    /// The device's PCI address (`0000:01:00.0`).
    pub address: String,
    pub current: PcieRate,
    pub device_max: PcieRate,
    /// The upstream port's own maximum (the slot's limit), when sysfs shows it.
    pub port_max: Option<PcieRate>,
    /// Where the values were read (the device's sysfs directory).
    pub source: String,
}

/// A SATA link (`/sys/class/ata_link/linkN`) and the device on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SataLink {
    pub link: String,
    /// Negotiated speed in Gb/s (`sata_spd`: "6.0 Gbps"); None when down or unknown.
    pub current_gbps: Option<f64>,
    /// The controller's limit (`hw_sata_spd_limit`).
    pub hw_limit_gbps: Option<f64>,
    /// Times libata lowered the speed after errors (`ata_device/…/spdn_cnt`).
    pub spdn_cnt: Option<u64>,
    /// The host's link power policy (`scsi_host/hostN/link_power_management_policy`).
    pub lpm_policy: Option<String>,
    pub source: String,
}

/// A USB device between the machine and the disk.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct UsbLink {
    /// Mb/s (`speed`: 12, 480, 5000, 10000, 20000).
    pub speed_mbps: u32,
    /// The interface's driver: `usb-storage` (Bulk-Only) or `uas`.
    pub driver: Option<String>,
    /// `version` of the device (" 3.20"), trimmed.
    pub version: Option<String>,
    pub source: String,
}

/// NVMe power management: APST's tolerance (0 disables APST).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NvmePower {
    /// The module default (`nvme_core` `default_ps_max_latency_us`).
    pub default_ps_max_latency_us: Option<Read<u64>>,
    /// The controller's own (`power/pm_qos_latency_tolerance_us`).
    pub latency_tolerance_us: Option<Read<i64>>,
}

/// How a disk reaches the machine.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Links {
    pub pcie: Option<PcieLink>,
    pub sata: Option<SataLink>,
    pub usb: Option<UsbLink>,
    pub nvme_power: Option<NvmePower>,
}

impl Links {
    /// The narrowest link's practical ceiling in bytes per second, and its name: the rate after
    /// line encoding times what the protocol leaves for data ([`PCIE_EFFICIENCY`],
    /// [`SATA_EFFICIENCY`], [`USB2_EFFICIENCY`], [`USB3_EFFICIENCY`]). Drives at a link's limit
    /// read at about this (a PCIe 3.0 x4 SSD 3.5 GB/s, a SATA SSD 550–560 MB/s).
    pub fn ceiling(&self) -> Option<(f64, String)> {
        let mut best: Option<(f64, String)> = None;
        let mut take = |b: f64, l: String| {
            if b > 0.0 && best.as_ref().is_none_or(|(x, _)| b < *x) {
                best = Some((b, l));
            }
        };
        if let Some(p) = &self.pcie {
            take(p.current.bytes_per_s() * PCIE_EFFICIENCY, p.current.label());
        }
        if let Some(s) = self.sata.as_ref().and_then(|s| s.current_gbps) {
            // 8b/10b: ten line bits per byte.
            take(s * 1e9 / 10.0 * SATA_EFFICIENCY, format!("SATA {s} Gb/s"));
        }
        if let Some(u) = &self.usb {
            let eff = if u.speed_mbps <= 480 { USB2_EFFICIENCY } else { USB3_EFFICIENCY };
            take(usb_ceiling(u.speed_mbps) * eff, format!("USB {} Mb/s", u.speed_mbps));
        }
        best
    }
}

/// PCIe: transaction-layer packets of 256 payload bytes carry about 24 bytes of header, sequence
/// number, CRC and framing (256/282), and flow-control packets take a little more.
pub const PCIE_EFFICIENCY: f64 = 0.90;
/// SATA: frame headers, CRCs and primitives between frames (SATA SSDs top out at 550–565 MB/s of
/// 600).
pub const SATA_EFFICIENCY: f64 = 0.94;
/// USB 2.0: Bulk-Only Transport's command and status phases around each transfer.
pub const USB2_EFFICIENCY: f64 = 0.80;
/// USB 3: packet headers and link commands (UAS enclosures top out at about 90 % of the line).
pub const USB3_EFFICIENCY: f64 = 0.90;

/// The most a USB link carries in bytes per second: USB 2.0's bulk limit is 13 packets of 512
/// bytes per 125 µs microframe (53.2 MB/s); SuperSpeed encodes 8b/10b, SuperSpeed+ 128b/132b.
pub fn usb_ceiling(mbps: u32) -> f64 {
    let m = f64::from(mbps) * 1e6;
    match mbps {
        0..=12 => m / 8.0 * 0.8,
        13..=480 => 13.0 * 512.0 * 8000.0,
        481..=5000 => m * 8.0 / 10.0 / 8.0,
        _ => m * 128.0 / 132.0 / 8.0,
    }
}

/// A cgroup I/O limit on one device, for the calling process.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CgroupLimit {
    /// `MAJ:MIN` the limit names.
    pub device: String,
    /// `read_iops`, `write_iops`, `read_bps`, `write_bps`.
    pub kind: &'static str,
    pub value: u64,
    /// The file that sets it.
    pub source: String,
}

/// The system-wide facts: CPU frequency governors, the trim timer, PSI.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SystemFacts {
    /// Distinct `scaling_governor` values over the CPUs, with the driver.
    pub cpu_governors: Vec<String>,
    pub cpufreq_driver: Option<String>,
    /// An enabled `fstrim.timer` (systemd) or a cron job running fstrim: where it was found.
    pub trim_timer: Option<String>,
    /// `/proc/pressure/io`: `some avg10`, `full avg10` (percent).
    pub io_pressure: Option<IoPressure>,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct IoPressure {
    pub some_avg10: f64,
    pub some_avg60: f64,
    pub full_avg10: f64,
    pub full_avg60: f64,
    /// Cumulative µs some task waited on I/O.
    pub some_total_us: u64,
}

/// The stack under one device, top first: the device itself, then what it sits on, down to
/// the whole disks.
pub fn stack(topo: &Topology, top: &Device) -> Vec<Layer> {
    let roots = topo.roots().clone();
    let mut out: Vec<Layer> = Vec::new();
    let mut names = vec![top.name.clone()];
    names.extend(topo.members(&top.name));
    if let Some(p) = &top.partition {
        if !names.contains(&p.disk) {
            names.push(p.disk.clone());
        }
    }
    // A partition's members are its disk's; a dm/md member that is a partition adds its disk.
    let mut i = 0;
    while i < names.len() {
        if let Some(d) = topo.device(&names[i]) {
            if let Some(p) = &d.partition {
                if !names.contains(&p.disk) {
                    names.push(p.disk.clone());
                }
            }
            out.push(layer(&roots, d));
        }
        i += 1;
    }
    out
}

fn role_of(d: &Device) -> &'static str {
    if d.partition.is_some() {
        return "partition";
    }
    match d.transport {
        Transport::Dm => "dm",
        Transport::Md => "md",
        Transport::Loop => "loop",
        Transport::Zram => "zram",
        Transport::Ram => "ram",
        Transport::Nbd => "nbd",
        _ => "disk",
    }
}

fn layer(roots: &Roots, d: Device) -> Layer {
    let dir = d.node_path.clone();
    let disk_dir =
        if d.partition.is_some() { dir.parent().map(Path::to_path_buf).unwrap_or(dir.clone()) } else { dir.clone() };
    let q = disk_dir.join("queue");
    let hw = disk_dir.join("device");
    let bool_at = |p: &Path| -> Option<Read<bool>> {
        let v: u8 = read_num(p)?;
        Some(Read { value: v != 0, source: live(roots, p) })
    };
    Layer {
        name: d.name.clone(),
        transport: d.transport.as_str(),
        role: role_of(&d),
        dm_uuid: read_trim(&dir.join("dm/uuid")),
        alignment_offset: read_at(roots, &dir.join("alignment_offset")),
        start_sector: if d.partition.is_some() { read_at(roots, &dir.join("start")) } else { None },
        physical_block_size: read_at(roots, &q.join("physical_block_size")),
        rotational: bool_at(&q.join("rotational")),
        scheduler: read_trim(&q.join("scheduler"))
            .and_then(|s| crate::block::parse_scheduler(&s))
            .map(|value| Read { value, source: live(roots, &q.join("scheduler")) }),
        bfq_low_latency: bool_at(&q.join("iosched/low_latency")),
        write_cache: read_str(roots, &q.join("write_cache")),
        max_sectors_kb: read_at(roots, &q.join("max_sectors_kb")),
        max_hw_sectors_kb: read_at(roots, &q.join("max_hw_sectors_kb")),
        nr_requests: read_at(roots, &q.join("nr_requests")),
        read_ahead_kb: read_at(roots, &q.join("read_ahead_kb")),
        discard_max_bytes: read_at(roots, &q.join("discard_max_bytes")),
        zoned: read_str(roots, &q.join("zoned")),
        device_queue_depth: if d.partition.is_none() { read_at(roots, &hw.join("queue_depth")) } else { None },
        ioerr_cnt: if d.partition.is_none() {
            let p = hw.join("ioerr_cnt");
            read_hex_or_dec(&p).map(|value| Read { value, source: live(roots, &p) })
        } else {
            None
        },
        md_sync_action: read_str(roots, &dir.join("md/sync_action")),
        loop_backing_file: d.loop_backing_file.as_ref().map(|p| p.display().to_string()),
        device: d,
    }
}

/// "8.0 GT/s PCIe" → 8.0; "Unknown" → None.
pub fn parse_gts(s: &str) -> Option<f64> {
    let n = s.split_whitespace().next()?;
    n.parse::<f64>().ok().filter(|g| g.is_finite() && *g > 0.0)
}

/// "6.0 Gbps" → 6.0; "<unknown>" → None.
pub fn parse_gbps(s: &str) -> Option<f64> {
    let n = s.split_whitespace().next()?;
    n.trim_end_matches("Gbps").parse::<f64>().ok().filter(|g| g.is_finite() && *g > 0.0)
}

fn pcie_rate(dir: &Path, prefix: &str) -> Option<PcieRate> {
    let gts = parse_gts(&read_trim(&dir.join(format!("{prefix}_link_speed")))?)?;
    let width = read_num(&dir.join(format!("{prefix}_link_width")))?;
    (width > 0).then_some(PcieRate { gts, width })
}

/// The links between a whole disk and the machine, read from its place in the device tree.
pub fn links(topo: &Topology, disk: &Device) -> Links {
    let roots = topo.roots();
    let mut out = Links::default();
    // Resolve the hardware directory: the disk's `device` link, walked up.
    let start = fs::canonicalize(disk.node_path.join("device")).unwrap_or_else(|_| disk.node_path.clone());
    let mut dir: Option<&Path> = Some(&start);
    let devices = roots.sys.join("devices");
    while let Some(d) = dir {
        if !d.starts_with(&devices) || d == devices {
            break;
        }
        if out.pcie.is_none() && d.join("current_link_speed").exists() {
            if let (Some(current), Some(device_max)) = (pcie_rate(d, "current"), pcie_rate(d, "max")) {
                let port_max = d.parent().and_then(|p| pcie_rate(p, "max"));
                out.pcie = Some(PcieLink {
                    address: d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
                    current,
                    device_max,
                    port_max,
                    source: live(roots, d),
                });
            }
        }
        if out.usb.is_none() && d.join("speed").exists() && d.join("idVendor").exists() {
            if let Some(speed_mbps) = read_trim(&d.join("speed")).and_then(|s| s.parse::<f64>().ok()) {
                // The mass-storage interface's driver: the first child interface with one.
                let driver = fs::read_dir(d).ok().and_then(|rd| {
                    rd.filter_map(|e| e.ok()).map(|e| e.path()).filter(|p| p.join("bInterfaceClass").exists()).find_map(
                        |p| {
                            fs::read_link(p.join("driver"))
                                .ok()
                                .and_then(|l| l.file_name().map(|n| n.to_string_lossy().into_owned()))
                        },
                    )
                });
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                let speed_mbps = speed_mbps.round() as u32;
                out.usb = Some(UsbLink {
                    speed_mbps,
                    driver,
                    version: read_trim(&d.join("version")),
                    source: live(roots, d),
                });
            }
        }
        if out.sata.is_none() {
            if let Some(port) = d.file_name().and_then(|n| n.to_str()).filter(|n| is_ata_port(n)) {
                out.sata = sata_link(roots, d, port);
            }
        }
        dir = d.parent();
    }
    if disk.transport == Transport::Nvme {
        let m = roots.sys.join("module/nvme_core/parameters/default_ps_max_latency_us");
        let ctrl = fs::canonicalize(disk.node_path.join("device")).ok();
        out.nvme_power = Some(NvmePower {
            default_ps_max_latency_us: read_at(roots, &m),
            latency_tolerance_us: ctrl.and_then(|c| read_at(roots, &c.join("power/pm_qos_latency_tolerance_us"))),
        });
    }
    out
}

fn is_ata_port(n: &str) -> bool {
    n.strip_prefix("ata").is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit()))
}

/// `ataN`'s link: `ataN/linkN/ata_link/linkN/` holds the speeds, `…/devN.0/ata_device/devN.0/`
/// the speed-down count; the SCSI host below holds the link power policy.
fn sata_link(roots: &Roots, port_dir: &Path, port: &str) -> Option<SataLink> {
    let n = &port[3..];
    let link_name = format!("link{n}");
    let candidates = [
        port_dir.join(&link_name).join("ata_link").join(&link_name),
        roots.sys.join("class/ata_link").join(&link_name),
    ];
    let link_dir = candidates.into_iter().find(|p| p.join("sata_spd").exists())?;
    let dev_name = format!("dev{n}.0");
    let spdn = [
        port_dir.join(&link_name).join(&dev_name).join("ata_device").join(&dev_name).join("spdn_cnt"),
        roots.sys.join("class/ata_device").join(&dev_name).join("spdn_cnt"),
    ]
    .into_iter()
    .find_map(|p| read_num(&p));
    let lpm = fs::read_dir(port_dir).ok().and_then(|rd| {
        rd.filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .find(|n| n.starts_with("host"))
            .and_then(|h| {
                [
                    port_dir.join(&h).join("scsi_host").join(&h).join("link_power_management_policy"),
                    roots.sys.join("class/scsi_host").join(&h).join("link_power_management_policy"),
                ]
                .into_iter()
                .find_map(|p| read_trim(&p))
            })
    });
    Some(SataLink {
        link: link_name,
        current_gbps: read_trim(&link_dir.join("sata_spd")).and_then(|s| parse_gbps(&s)),
        hw_limit_gbps: read_trim(&link_dir.join("hw_sata_spd_limit")).and_then(|s| parse_gbps(&s)),
        spdn_cnt: spdn,
        lpm_policy: lpm,
        source: live(roots, &link_dir),
    })
}

/// The calling process's cgroup I/O limits on any of `devices` (`MAJ:MIN`), from its cgroup
/// and every ancestor (a parent's limit holds for its children): v1 `blkio.throttle.*`, v2
/// `io.max`. The lowest limit of each kind and device.
pub fn cgroup_limits(roots: &Roots, devices: &[(u32, u32)]) -> Vec<CgroupLimit> {
    let Some(text) = read_trim(&roots.proc.join("self/cgroup")) else { return Vec::new() };
    let mounts = crate::mounts::read(roots);
    let sys_fs_cgroup = roots.sys.join("fs/cgroup");
    // Mount points from the mount table, mapped into the sys root (fixtures keep them there).
    let mount_of = |want_v2: bool| -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = mounts
            .iter()
            .filter(|m| {
                if want_v2 {
                    m.fstype == "cgroup2"
                } else {
                    m.fstype == "cgroup" && m.options.split(',').any(|o| o == "blkio")
                }
            })
            .filter_map(|m| m.mount_point.strip_prefix("/sys/fs/cgroup").ok().map(|r| sys_fs_cgroup.join(r)))
            .collect();
        if v.is_empty() {
            v = if want_v2 {
                vec![sys_fs_cgroup.clone(), sys_fs_cgroup.join("unified")]
            } else {
                vec![sys_fs_cgroup.join("blkio")]
            };
        }
        v
    };
    let mut out: Vec<CgroupLimit> = Vec::new();
    let mut add = |l: CgroupLimit| {
        if let Some(o) = out.iter_mut().find(|o| o.device == l.device && o.kind == l.kind) {
            if l.value < o.value {
                *o = l;
            }
        } else {
            out.push(l);
        }
    };
    let wanted: Vec<String> = devices.iter().map(|(a, b)| format!("{a}:{b}")).collect();
    for line in text.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(_), Some(ctrls), Some(path)) = (parts.next(), parts.next(), parts.next()) else { continue };
        let v2 = ctrls.is_empty();
        if !v2 && !ctrls.split(',').any(|c| c == "blkio") {
            continue;
        }
        for base in mount_of(v2) {
            let mut rel = PathBuf::from(path.trim_start_matches('/'));
            loop {
                let dir = base.join(&rel);
                if v2 {
                    let f = dir.join("io.max");
                    if let Some(t) = read_trim(&f) {
                        for l in t.lines() {
                            let mut w = l.split_whitespace();
                            let Some(dev) = w.next().filter(|d| wanted.iter().any(|x| x == d)) else { continue };
                            for kv in w {
                                let Some((k, v)) = kv.split_once('=') else { continue };
                                let kind = match k {
                                    "riops" => "read_iops",
                                    "wiops" => "write_iops",
                                    "rbps" => "read_bps",
                                    "wbps" => "write_bps",
                                    _ => continue,
                                };
                                if let Ok(value) = v.parse::<u64>() {
                                    add(CgroupLimit { device: dev.into(), kind, value, source: live(roots, &f) });
                                }
                            }
                        }
                    }
                } else {
                    for (file, kind) in [
                        ("blkio.throttle.read_iops_device", "read_iops"),
                        ("blkio.throttle.write_iops_device", "write_iops"),
                        ("blkio.throttle.read_bps_device", "read_bps"),
                        ("blkio.throttle.write_bps_device", "write_bps"),
                    ] {
                        let f = dir.join(file);
                        let Some(t) = read_trim(&f) else { continue };
                        for l in t.lines() {
                            let mut w = l.split_whitespace();
                            let (Some(dev), Some(v)) = (w.next(), w.next()) else { continue };
                            if !wanted.iter().any(|x| x == dev) {
                                continue;
                            }
                            if let Ok(value) =
                                v.parse::<u64>().map_err(|_| ()).and_then(|v| if v == 0 { Err(()) } else { Ok(v) })
                            {
                                add(CgroupLimit { device: dev.into(), kind, value, source: live(roots, &f) });
                            }
                        }
                    }
                }
                if !rel.pop() {
                    break;
                }
            }
        }
    }
    out.sort_by(|a, b| (a.device.as_str(), a.kind).cmp(&(b.device.as_str(), b.kind)));
    out
}

/// Parse `/proc/pressure/io`.
pub fn parse_pressure(text: &str) -> Option<IoPressure> {
    let mut p = IoPressure { some_avg10: 0.0, some_avg60: 0.0, full_avg10: 0.0, full_avg60: 0.0, some_total_us: 0 };
    let mut seen = false;
    for line in text.lines() {
        let mut w = line.split_whitespace();
        let Some(kind) = w.next() else { continue };
        for kv in w {
            let Some((k, v)) = kv.split_once('=') else { continue };
            match (kind, k) {
                ("some", "avg10") => p.some_avg10 = v.parse().ok()?,
                ("some", "avg60") => p.some_avg60 = v.parse().ok()?,
                ("some", "total") => p.some_total_us = v.parse().ok()?,
                ("full", "avg10") => p.full_avg10 = v.parse().ok()?,
                ("full", "avg60") => p.full_avg60 = v.parse().ok()?,
                _ => {}
            }
        }
        seen |= kind == "some";
    }
    seen.then_some(p)
}

/// The system-wide facts under `roots`.
pub fn system(roots: &Roots) -> SystemFacts {
    let cpu = roots.sys.join("devices/system/cpu");
    let mut governors: Vec<String> = Vec::new();
    let mut driver = None;
    if let Ok(rd) = fs::read_dir(&cpu) {
        let mut dirs: Vec<PathBuf> = rd.filter_map(|e| e.ok()).map(|e| e.path()).collect();
        dirs.sort();
        for d in dirs {
            let n = d.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if !n.strip_prefix("cpu").is_some_and(|r| !r.is_empty() && r.bytes().all(|b| b.is_ascii_digit())) {
                continue;
            }
            if let Some(g) = read_trim(&d.join("cpufreq/scaling_governor")) {
                if !governors.contains(&g) {
                    governors.push(g);
                }
            }
            driver = driver.or_else(|| read_trim(&d.join("cpufreq/scaling_driver")));
        }
    }
    SystemFacts {
        cpu_governors: governors,
        cpufreq_driver: driver,
        trim_timer: trim_timer(roots),
        io_pressure: read_trim(&roots.proc.join("pressure/io")).and_then(|t| parse_pressure(&t)),
    }
}

/// Where a periodic trim is set up: systemd's `fstrim.timer` enabled (linked into
/// `timers.target.wants`), or a cron job that runs fstrim.
fn trim_timer(roots: &Roots) -> Option<String> {
    let unit = roots.etc.join("systemd/system/timers.target.wants/fstrim.timer");
    if unit.exists() {
        return Some(live(roots, &unit));
    }
    for d in ["cron.weekly", "cron.daily", "cron.monthly"] {
        let dir = roots.etc.join(d);
        if let Ok(rd) = fs::read_dir(&dir) {
            for e in rd.filter_map(|e| e.ok()) {
                if e.file_name().to_string_lossy().contains("fstrim") {
                    return Some(live(roots, &e.path()));
                }
            }
        }
    }
    None
}

/// One kernel log line about a device's I/O errors.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelError {
    pub line: String,
}

/// Kernel log lines naming I/O errors on any of `names` (`/dev/kmsg`, read without waiting;
/// needs root). `Err` says why the log could not be read.
pub fn kernel_io_errors(roots: &Roots, names: &[String]) -> Result<Vec<KernelError>, String> {
    let path = roots.dev.join("kmsg");
    let text = read_kmsg(&path).map_err(|e| format!("{}: {e}", live(roots, &path)))?;
    Ok(parse_kernel_errors(&text, names))
}

/// The lines of a kernel log that report I/O errors on one of `names`.
pub fn parse_kernel_errors(text: &str, names: &[String]) -> Vec<KernelError> {
    const MARKS: [&str; 5] =
        ["I/O error", "critical medium error", "Medium Error", "failed command: READ", "failed command: WRITE"];
    let mut out = Vec::new();
    for line in text.lines() {
        // /dev/kmsg: "prio,seq,time,flags;message".
        let msg = line.split_once(';').map_or(line, |(_, m)| m).trim();
        // libata's uncorrectable-error flag is the word UNC ("error: { UNC }"), not FUNC.
        let unc = msg.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "UNC");
        if !unc && !MARKS.iter().any(|m| msg.contains(m)) {
            continue;
        }
        let names_it = names.iter().filter(|n| !n.is_empty()).any(|n| {
            msg.match_indices(n.as_str()).any(|(i, _)| {
                let after = msg[i + n.len()..].chars().next();
                let before = msg[..i].chars().last();
                !after.is_some_and(|c| c.is_ascii_alphanumeric()) && !before.is_some_and(|c| c.is_ascii_alphanumeric())
            })
        });
        if names_it {
            out.push(KernelError { line: msg.to_string() });
        }
    }
    out
}

#[cfg(target_os = "linux")]
fn read_kmsg(path: &Path) -> std::io::Result<String> {
    use std::io::Read as _;
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    let mut f = fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    if !f.metadata()?.file_type().is_char_device() {
        // A fixture: a plain file of kmsg records.
        let mut s = String::new();
        f.read_to_string(&mut s)?;
        return Ok(s);
    }
    // /dev/kmsg gives one record per read and EAGAIN at the end.
    let mut out = String::new();
    let mut buf = vec![0u8; 8192];
    for _ in 0..100_000 {
        match f.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                out.push_str(&String::from_utf8_lossy(&buf[..n]));
                if !out.ends_with('\n') {
                    out.push('\n');
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
            // A record overwritten while reading: go on with the next.
            Err(e) if e.raw_os_error() == Some(libc::EPIPE) => continue,
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

#[cfg(not(target_os = "linux"))]
fn read_kmsg(path: &Path) -> std::io::Result<String> {
    let _ = path;
    Err(std::io::Error::from(std::io::ErrorKind::Unsupported))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_rates() {
        let g3x4 = PcieRate { gts: 8.0, width: 4 };
        assert!((g3x4.bytes_per_s() / 1e9 - 3.938).abs() < 0.001);
        assert!((PcieRate { gts: 8.0, width: 2 }.bytes_per_s() / 1e9 - 1.969).abs() < 0.001);
        assert_eq!(g3x4.label(), "PCIe 3.0 x4");
        assert!((PcieRate { gts: 2.5, width: 1 }.bytes_per_s() - 250e6).abs() < 1.0);
        assert!((usb_ceiling(480) - 53.248e6).abs() < 1.0);
        assert!((usb_ceiling(5000) - 500e6).abs() < 1.0);
        assert_eq!(parse_gts("8.0 GT/s PCIe"), Some(8.0));
        assert_eq!(parse_gts("Unknown"), None);
        assert_eq!(parse_gbps("3.0 Gbps"), Some(3.0));
        assert_eq!(parse_gbps("<unknown>"), None);
    }

    #[test]
    fn pressure_parses() {
        let p = parse_pressure(
            "some avg10=1.50 avg60=3.13 avg300=4.37 total=9610489895\nfull avg10=0.00 avg60=2.91 avg300=3.94 total=6732497631\n",
        )
        .expect("parses");
        assert_eq!(p.some_avg10, 1.5);
        assert_eq!(p.full_avg60, 2.91);
        assert_eq!(p.some_total_us, 9_610_489_895);
        assert!(parse_pressure("garbage").is_none());
    }

    #[test]
    fn kernel_errors_name_the_device_exactly() {
        let log = "3,1,2,-;blk_update_request: I/O error, dev sda, sector 2048 op 0x0:(READ)\n\
                   3,2,3,-;blk_update_request: I/O error, dev sdab, sector 1\n\
                   6,3,4,-;sd 0:0:0:0: [sda] Attached SCSI disk\n";
        let e = parse_kernel_errors(log, &["sda".to_string()]);
        assert_eq!(e.len(), 1);
        assert!(e[0].line.contains("sector 2048"));
        let unc = "3,4,5,-;sd 2:0:0:0: [sda] tag#3 Add. Sense: { UNC } on sda\n6,5,6,-;sda: FUNC_CALL done\n";
        let e = parse_kernel_errors(unc, &["sda".to_string()]);
        assert_eq!(e.len(), 1, "{e:?}");
        assert!(e[0].line.contains("{ UNC }"));
    }
}
