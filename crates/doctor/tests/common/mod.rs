//! Fixture trees of the shapes Linux has (sysfs, procfs, /etc, /dev/kmsg), smartctl JSON of
//! the shapes smartctl prints, and assertions on the ranked document.
#![allow(dead_code, clippy::unwrap_used)]

use diskmeter_doctor::facts::{Facts, Smart};
use diskmeter_doctor::{Cause, Check, DoctorDoc, Evidence, Status};
use health::exit::ExitStatus;
use health::model::SmartReport;
use platform::block::fixture::SysTree;
use platform::block::Roots;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};

/// The NVMe namespace's controller and its PCI function, and the root port above it.
pub const NVME_PORT: &str = "pci0000:00/0000:00:1d.0";
pub const NVME_PCI: &str = "pci0000:00/0000:00:1d.0/0000:03:00.0";
pub const NVME_CTRL: &str = "pci0000:00/0000:00:1d.0/0000:03:00.0/nvme/nvme0";

/// A fixture tree in a temporary directory (removed on drop).
pub struct Fx {
    _dir: tempfile::TempDir,
    pub s: SysTree,
}

/// A PCIe rate as sysfs prints it: ("8.0 GT/s PCIe", 4).
pub type Rate<'a> = (&'a str, u32);

pub const GEN3: &str = "8.0 GT/s PCIe";
pub const GEN4: &str = "16.0 GT/s PCIe";
pub const GEN2: &str = "5.0 GT/s PCIe";

/// A SATA disk's places in the tree.
pub struct SataDisk {
    pub disk: PathBuf,
    /// `…/N:0:0:0` (queue_depth, ioerr_cnt, model).
    pub scsi: PathBuf,
    /// `…/ataN/linkN/ata_link/linkN`.
    pub link: PathBuf,
    /// `…/ataN` (the port).
    pub port: PathBuf,
    /// The live path of the disk's directory (`/sys/devices/…/block/sda`).
    pub live: String,
}

impl Fx {
    pub fn new() -> Fx {
        let dir = tempfile::tempdir().unwrap();
        // Canonical: the walker resolves links, and evidence names paths relative to the roots.
        let root = fs::canonicalize(dir.path()).unwrap();
        let s = SysTree::new(root).unwrap();
        Fx { _dir: dir, s }
    }

    pub fn root(&self) -> &Path {
        self.s.root()
    }

    pub fn roots(&self) -> Roots {
        self.s.roots()
    }

    /// `devices/REL`.
    pub fn devices(&self, rel: &str) -> PathBuf {
        self.root().join("devices").join(rel)
    }

    /// Any file under the tree's root (parents created): `file("proc/self/cgroup", "0::/")`.
    pub fn file(&self, rel: &str, content: &str) {
        self.s.attr(self.root(), rel, content).unwrap();
    }

    /// Attributes under `dir`.
    pub fn attrs(&self, dir: &Path, kv: &[(&str, &str)]) {
        for (k, v) in kv {
            self.s.attr(dir, k, v).unwrap();
        }
    }

    /// An NVMe namespace `nvme0n1` (259:0) behind PCI function 0000:03:00.0 under root port
    /// 0000:00:1d.0: its link now, the drive's maximum and the port's maximum; a fast drive's
    /// queue (no scheduler, write back, discard).
    pub fn nvme(&self, current: Rate<'_>, device_max: Rate<'_>, port_max: Option<Rate<'_>>) -> PathBuf {
        let disk = self.s.disk(NVME_CTRL, "nvme0n1", (259, 0), 1_953_525_168).unwrap();
        self.s.queue(&disk, 512, 512, false, "[none] mq-deadline kyber bfq").unwrap();
        self.attrs(
            &disk,
            &[
                ("queue/write_cache", "write back"),
                ("queue/nr_requests", "1023"),
                ("queue/max_sectors_kb", "1280"),
                ("queue/max_hw_sectors_kb", "2048"),
                ("queue/read_ahead_kb", "128"),
                ("queue/discard_max_bytes", "2199023255040"),
                ("queue/zoned", "none"),
            ],
        );
        let ctrl = self.s.hardware(&disk, NVME_CTRL).unwrap();
        self.attrs(&ctrl, &[("model", "Samsung SSD 970 EVO Plus 1TB"), ("serial", "S4EWNX0R123456")]);
        let pci = self.devices(NVME_PCI);
        self.attrs(
            &pci,
            &[
                ("current_link_speed", current.0),
                ("current_link_width", &current.1.to_string()),
                ("max_link_speed", device_max.0),
                ("max_link_width", &device_max.1.to_string()),
            ],
        );
        if let Some(port) = port_max {
            let p = self.devices(NVME_PORT);
            self.attrs(
                &p,
                &[
                    ("max_link_speed", port.0),
                    ("max_link_width", &port.1.to_string()),
                    ("current_link_speed", current.0),
                    ("current_link_width", &current.1.to_string()),
                ],
            );
        }
        disk
    }

    /// A healthy NVMe drive at PCIe 3.0 x4 in a PCIe 3.0 x4 slot.
    pub fn fast_nvme(&self) -> PathBuf {
        self.nvme((GEN3, 4), (GEN3, 4), Some((GEN3, 4)))
    }

    /// A SATA disk behind AHCI port `ata{port}` (SCSI host `host{host}`): its link at
    /// `spd` under the controller's `limit` ("6.0 Gbps"); NCQ on, write back, mq-deadline.
    #[allow(clippy::too_many_arguments)]
    pub fn sata(
        &self,
        name: &str,
        dev: (u32, u32),
        port: u32,
        host: u32,
        rotational: bool,
        spd: &str,
        limit: &str,
    ) -> SataDisk {
        let port_rel = format!("pci0000:00/0000:00:17.0/ata{port}");
        let scsi_rel = format!("{port_rel}/host{host}/target{host}:0:0/{host}:0:0:0");
        let disk = self.s.disk(&format!("{scsi_rel}/block"), name, dev, 1_953_525_168).unwrap();
        self.s.queue(&disk, 512, 4096, rotational, "[mq-deadline] none").unwrap();
        self.attrs(
            &disk,
            &[
                ("queue/write_cache", "write back"),
                ("queue/nr_requests", "64"),
                ("queue/max_sectors_kb", "1280"),
                ("queue/max_hw_sectors_kb", "32767"),
                ("queue/read_ahead_kb", "128"),
                ("queue/discard_max_bytes", if rotational { "0" } else { "2147450880" }),
            ],
        );
        let scsi = self.s.hardware(&disk, &scsi_rel).unwrap();
        self.attrs(
            &scsi,
            &[("model", if rotational { "ST4000NM0035-1V4" } else { "Samsung SSD 860" }), ("vendor", "ATA     ")],
        );
        self.attrs(&scsi, &[("queue_depth", "32"), ("ioerr_cnt", "0x0")]);
        let port_dir = self.devices(&port_rel);
        let link = port_dir.join(format!("link{port}/ata_link/link{port}"));
        self.attrs(&link, &[("sata_spd", spd), ("hw_sata_spd_limit", limit), ("sata_spd_limit", "<unknown>")]);
        self.attrs(
            &port_dir,
            &[
                (&format!("link{port}/dev{port}.0/ata_device/dev{port}.0/spdn_cnt"), "0"),
                (&format!("host{host}/scsi_host/host{host}/link_power_management_policy"), "max_performance"),
            ],
        );
        let live = format!("/sys/devices/{scsi_rel}/block/{name}");
        SataDisk { disk, scsi, link, port: port_dir, live }
    }

    /// `sda` (8:0) on `ata3` / `host2` at 6.0 Gbps of 6.0 Gbps.
    pub fn sda(&self, rotational: bool) -> SataDisk {
        self.sata("sda", (8, 0), 3, 2, rotational, "6.0 Gbps", "6.0 Gbps")
    }

    /// A USB disk `sdb` (8:16) behind device 2-1 of the xHCI controller's bus 2, at `speed`
    /// Mb/s, its mass-storage interface bound to `driver` (`usb-storage` or `uas`).
    pub fn usb(&self, speed: &str, driver: &str, queue_depth: &str) -> PathBuf {
        let dev_rel = "pci0000:00/0000:00:14.0/usb2/2-1";
        let scsi_rel = format!("{dev_rel}/2-1:1.0/host4/target4:0:0/4:0:0:0");
        let disk = self.s.disk(&format!("{scsi_rel}/block"), "sdb", (8, 16), 3_907_029_168).unwrap();
        self.s.queue(&disk, 512, 4096, true, "[mq-deadline] none").unwrap();
        self.attrs(&disk, &[("queue/write_cache", "write back"), ("queue/read_ahead_kb", "128")]);
        let scsi = self.s.hardware(&disk, &scsi_rel).unwrap();
        self.attrs(&scsi, &[("model", "Expansion Desk  "), ("vendor", "Seagate "), ("queue_depth", queue_depth)]);
        let usb = self.devices(dev_rel);
        self.attrs(&usb, &[("speed", speed), ("idVendor", "0bc2"), ("idProduct", "3322"), ("version", " 3.20")]);
        let root_hub = self.devices("pci0000:00/0000:00:14.0/usb2");
        self.attrs(&root_hub, &[("speed", "10000"), ("idVendor", "1d6b")]);
        let intf = usb.join("2-1:1.0");
        self.attrs(&intf, &[("bInterfaceClass", "08"), ("bInterfaceProtocol", "62")]);
        let drv = self.root().join("bus/usb/drivers").join(driver);
        fs::create_dir_all(&drv).unwrap();
        std::os::unix::fs::symlink(&drv, intf.join("driver")).unwrap();
        disk
    }

    /// A virtual block device (`devices/virtual/block/NAME`) for dm, md, loop, zram, ram.
    pub fn virtual_disk(&self, name: &str, dev: (u32, u32), sectors: u64) -> PathBuf {
        self.s.disk("virtual/block", name, dev, sectors).unwrap()
    }

    /// The fstrim timer enabled (systemd).
    pub fn fstrim_timer(&self) {
        self.file("etc/systemd/system/timers.target.wants/fstrim.timer", "[Timer]\nOnCalendar=weekly");
    }

    /// The kernel log (`/dev/kmsg` records).
    pub fn kmsg(&self, records: &str) {
        self.file("dev-nodes/kmsg", records);
    }

    pub fn gather(&self, top: &str) -> Facts {
        diskmeter_doctor::facts::gather(&self.roots(), Some(top), "target")
    }
}

impl Default for Fx {
    fn default() -> Self {
        Fx::new()
    }
}

/// SMART as read from smartctl's JSON.
pub fn smart(json: Value, dev: &str) -> Smart {
    Smart::Read {
        report: Box::new(SmartReport::from_json(&json, ExitStatus(0))),
        raw: json,
        source: format!("smartctl -a /dev/{dev}"),
    }
}

/// Set the SMART of disk `name` in `f`.
pub fn set_smart(f: &mut Facts, name: &str, json: Value) {
    let d = f.disks.iter_mut().find(|d| d.name == name).unwrap_or_else(|| panic!("no disk {name}"));
    d.smart = smart(json, name);
}

/// `smartctl -j -a /dev/nvme0n1` of a healthy drive, with `log` merged into its SMART/Health
/// Information log.
pub fn nvme_json(log: Value) -> Value {
    let mut health = json!({
        "critical_warning": 0,
        "temperature": 41,
        "available_spare": 100,
        "available_spare_threshold": 10,
        "percentage_used": 3,
        "data_units_read": 19683018,
        "data_units_written": 64768925,
        "host_reads": 490830081,
        "host_writes": 1608404624,
        "controller_busy_time": 1302,
        "power_cycles": 369,
        "power_on_hours": 6726,
        "unsafe_shutdowns": 36,
        "media_errors": 0,
        "num_err_log_entries": 0,
        "warning_temp_time": 0,
        "critical_comp_time": 0,
        "temperature_sensors": [41, 47]
    });
    if let (Some(h), Some(extra)) = (health.as_object_mut(), log.as_object()) {
        for (k, v) in extra {
            h.insert(k.clone(), v.clone());
        }
    }
    let temp = health["temperature"].clone();
    json!({
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 4], "argv": ["smartctl", "-j", "-a", "/dev/nvme0n1"], "exit_status": 0},
        "device": {"name": "/dev/nvme0n1", "info_name": "/dev/nvme0n1", "type": "nvme", "protocol": "NVMe"},
        "model_name": "Samsung SSD 970 EVO Plus 1TB",
        "serial_number": "S4EWNX0R123456",
        "firmware_version": "2B2QEXM7",
        "user_capacity": {"blocks": 1953525168, "bytes": 1000204886016u64},
        "logical_block_size": 512,
        "smart_support": {"available": true, "enabled": true},
        "smart_status": {"passed": true, "nvme": {"value": 0}},
        "nvme_smart_health_information_log": health,
        "temperature": {"current": temp},
        "power_cycle_count": 369,
        "power_on_time": {"hours": 6726}
    })
}

/// One row of the ATA SMART attribute table.
pub fn attr(id: u64, name: &str, raw: u64) -> Value {
    json!({
        "id": id, "name": name, "value": 100, "worst": 100, "thresh": if id == 5 { 10 } else { 0 },
        "when_failed": "",
        "flags": {"value": 50, "string": "-O--CK ", "prefailure": id == 5, "updated_online": true},
        "raw": {"value": raw, "string": raw.to_string()}
    })
}

/// `smartctl -j -a /dev/sda` of an ATA drive: its model, rotation rate (0: solid state), the
/// attribute rows, the interface speeds (Gb/s ×10: 60 = 6.0) and TRIM support.
pub fn ata_json(model: &str, rpm: u64, attrs: Vec<Value>, speed_max: u64, speed_now: u64, trim: bool) -> Value {
    let speed = |u: u64| json!({"units_per_second": u, "bits_per_unit": 100_000_000u64, "string": format!("{}.{} Gb/s", u / 10, u % 10)});
    json!({
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 4], "argv": ["smartctl", "-j", "-a", "/dev/sda"], "exit_status": 0},
        "device": {"name": "/dev/sda", "info_name": "/dev/sda [SAT]", "type": "sat", "protocol": "ATA"},
        "model_name": model,
        "serial_number": "ZC1ABCDE",
        "firmware_version": "SN04",
        "user_capacity": {"blocks": 1953525168, "bytes": 1000204886016u64},
        "logical_block_size": 512,
        "physical_block_size": 4096,
        "rotation_rate": rpm,
        "trim": {"supported": trim},
        "sata_version": {"string": "SATA 3.1", "value": 127},
        "interface_speed": {"max": speed(speed_max), "current": speed(speed_now)},
        "smart_support": {"available": true, "enabled": true},
        "smart_status": {"passed": true},
        "ata_smart_attributes": {"revision": 16, "table": attrs},
        "power_on_time": {"hours": 14551},
        "power_cycle_count": 13,
        "temperature": {"current": 36}
    })
}

/// The ranked document of `f`.
pub fn diagnose(f: &Facts) -> DoctorDoc {
    diskmeter_doctor::diagnose(f, stats::ToolInfo::default(), "t".into())
}

/// The causes as "code (severity, weight)", for failure messages.
pub fn ranked(doc: &DoctorDoc) -> Vec<String> {
    doc.causes.iter().map(|c| format!("{} ({}, {}) {}", c.code, c.severity.as_str(), c.weight, c.summary)).collect()
}

pub fn check<'a>(doc: &'a DoctorDoc, code: &str) -> &'a Check {
    doc.checks.iter().find(|c| c.code == code).unwrap_or_else(|| panic!("no check {code}"))
}

pub fn cause<'a>(doc: &'a DoctorDoc, code: &str) -> &'a Cause {
    doc.causes.iter().find(|c| c.code == code).unwrap_or_else(|| panic!("no cause {code}: {:#?}", ranked(doc)))
}

/// The first cause is `code`, found by `check` (whose status is found), with a fix and
/// evidence.
pub fn assert_first<'a>(doc: &'a DoctorDoc, code: &str, check_code: &str) -> &'a Cause {
    let first = doc.causes.first().unwrap_or_else(|| panic!("no cause at all; checks: {:#?}", doc.checks));
    assert_eq!(first.code, code, "ranked: {:#?}", ranked(doc));
    assert_eq!(first.check, check_code);
    assert!(!first.fix.trim().is_empty(), "{code}: empty fix");
    assert!(!first.summary.trim().is_empty(), "{code}: empty summary");
    assert!(!first.evidence.is_empty(), "{code}: no evidence");
    assert_eq!(check(doc, check_code).status, Status::Found, "{check_code}: {:?}", check(doc, check_code));
    first
}

/// The evidence `name` of `c`, whose value contains `value` and whose source is `source`.
pub fn assert_evidence<'a>(c: &'a Cause, name: &str, value: &str, source: &str) -> &'a Evidence {
    let e = c
        .evidence
        .iter()
        .find(|e| e.name == name)
        .unwrap_or_else(|| panic!("{}: no evidence {name}: {:#?}", c.code, c.evidence));
    assert!(e.value.contains(value), "{}: {name} = {:?}, want {value:?}", c.code, e.value);
    assert_eq!(e.source, source, "{}: {name}'s source", c.code);
    e
}
