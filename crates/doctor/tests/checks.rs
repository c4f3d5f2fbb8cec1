//! Every check on fixture trees of the shapes Linux has: each test builds the sysfs/procfs
//! (and smartctl JSON) that shows one cause, runs the whole diagnosis and asserts that cause
//! ranks first, with the value read and the file it came from, a fix, and its check found.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

mod common;

use common::*;
use diskmeter_doctor::facts::{DeviceState, MountFacts};
use diskmeter_doctor::model::{LoadDevice, LoadProcess, LoadView, ProbeView};
use diskmeter_doctor::{Severity, Status};
use serde_json::json;

const NVME_LIVE: &str = "/sys/devices/pci0000:00/0000:00:1d.0/0000:03:00.0";
const NVME_DISK_LIVE: &str = "/sys/devices/pci0000:00/0000:00:1d.0/0000:03:00.0/nvme/nvme0/nvme0n1";

fn mount(fstype: &str, options: &str, size: u64, free: u64) -> MountFacts {
    MountFacts {
        mount_point: "/data".into(),
        fstype: fstype.into(),
        options: options.into(),
        size_bytes: Some(size),
        free_bytes: Some(free),
    }
}

fn probe_view(qd1_mean_us: f64, seq_mb_s: f64) -> ProbeView {
    ProbeView {
        target: "/dev/sda".into(),
        qd1_iops: 1e6 / qd1_mean_us,
        qd1_mean_us,
        qd1_p99_us: qd1_mean_us * 3.0,
        qd32_iops: 30_000.0,
        qd32_mean_us: 1000.0,
        seq_mb_s,
        warnings: Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// The healthy machine, and checks without their facts.

/// A fast NVMe drive at its full link, write back cache, a 1 MiB-aligned partition, the fstrim
/// timer, healthy SMART: nothing of severity medium or above, and the checks that lack facts
/// say why they did not run.
#[test]
fn healthy_nvme_has_no_cause_of_medium_or_above() {
    let fx = Fx::new();
    let disk = fx.fast_nvme();
    fx.s.partition(&disk, "nvme0n1p1", (259, 1), 1, 2048, 1_953_521_072).unwrap();
    fx.attrs(&disk.join("nvme0n1p1"), &[("alignment_offset", "0")]);
    fx.fstrim_timer();
    fx.kmsg("6,1,2,-;nvme nvme0: 8/0/0 default/read/poll queues\n6,2,3,-;EXT4-fs (nvme0n1p1): mounted filesystem\n");
    fx.file(
        "proc/pressure/io",
        "some avg10=0.00 avg60=0.10 avg300=0.05 total=123456\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=2345\n",
    );
    fx.attrs(
        &fx.devices("system/cpu"),
        &[("cpu0/cpufreq/scaling_governor", "powersave"), ("cpu0/cpufreq/scaling_driver", "intel_pstate")],
    );
    let mut f = fx.gather("nvme0n1p1");
    f.mount = Some(mount("ext4", "rw,relatime", 1_000_000_000_000, 500_000_000_000));
    set_smart(&mut f, "nvme0n1", nvme_json(json!({})));
    let doc = diagnose(&f);

    let bad: Vec<_> = doc.causes.iter().filter(|c| c.severity <= Severity::Medium).collect();
    assert!(bad.is_empty(), "{:#?}", ranked(&doc));
    assert_eq!(doc.exit_code(), 0);
    assert_eq!(doc.device.as_deref(), Some("nvme0n1p1"));
    for code in ["pcie-link", "device-errors", "thermal", "write-cache", "trim", "alignment", "drive-state"] {
        assert_eq!(check(&doc, code).status, Status::Passed, "{code}: {:?}", check(&doc, code));
    }
    // The checks without their facts: not run, and why.
    for code in ["sata-link", "usb-link", "probe"] {
        let c = check(&doc, code);
        assert_eq!(c.status, Status::NotRun, "{code}");
        assert!(c.reason.as_deref().is_some_and(|r| !r.trim().is_empty()), "{code}: no reason");
    }
    assert!(check(&doc, "sata-link").reason.as_deref().unwrap().contains("nvme0n1 is nvme"));
    assert!(check(&doc, "probe").reason.as_deref().unwrap().contains("--probe"));
    for c in doc.checks.iter().filter(|c| c.status == Status::NotRun) {
        assert!(c.reason.as_deref().is_some_and(|r| !r.is_empty()), "{}: not run without a reason", c.code);
    }
    assert_eq!(doc.checks.len(), 17);
    let v = serde_json::to_value(&doc).unwrap();
    assert_eq!(v["schema"], "diskmeter.doctor.v1");
    assert!(v["checks"].as_array().unwrap().iter().any(|c| c["status"] == "not-run"));
    assert!(v["checks"].as_array().unwrap().iter().any(|c| c["status"] == "passed"));
}

/// Without SMART the checks that need it are not run, and say SMART was not read.
#[test]
fn checks_without_smart_are_not_run_with_the_reason() {
    let fx = Fx::new();
    fx.fast_nvme();
    let mut f = fx.gather("nvme0n1");
    f.disks[0].smart = diskmeter_doctor::Smart::NotRead("smartctl not found".into());
    let doc = diagnose(&f);
    for code in ["thermal", "drive-state", "device-errors"] {
        let c = check(&doc, code);
        assert_eq!(c.status, Status::NotRun, "{code}");
        assert!(c.reason.as_deref().unwrap().contains("smartctl not found"), "{code}: {:?}", c.reason);
    }
    // The kernel log was not readable (no /dev/kmsg in the tree): said, with its live path.
    assert!(check(&doc, "device-errors").reason.as_deref().unwrap().contains("/dev/kmsg"));
}

/// A target without a block device: every device check is not run with the reason given.
#[test]
fn no_device_leaves_the_device_checks_not_run() {
    let fx = Fx::new();
    let mut f = diskmeter_doctor::facts::gather(&fx.roots(), None, "/mnt/nfs");
    f.no_device = Some("/mnt/nfs is on a file system without a block device".into());
    let doc = diagnose(&f);
    assert!(doc.causes.is_empty(), "{:#?}", ranked(&doc));
    for c in &doc.checks {
        if c.code == "competing-io" || c.code == "power" {
            continue;
        }
        assert_eq!(c.status, Status::NotRun, "{}", c.code);
        assert!(c.reason.as_deref().unwrap().contains("without a block device"), "{}", c.code);
    }
}

// ---------------------------------------------------------------------------------------------
// pcie-link

#[test]
fn pcie_link_trained_down_is_degraded() {
    let fx = Fx::new();
    fx.nvme((GEN3, 2), (GEN3, 4), Some((GEN3, 4)));
    let doc = diagnose(&fx.gather("nvme0n1"));
    let c = assert_first(&doc, "pcie-link-degraded", "pcie-link");
    assert_eq!(c.severity, Severity::High);
    assert_eq!(c.device.as_deref(), Some("nvme0n1"));
    assert_evidence(c, "current_link_width", "2", &format!("{NVME_LIVE}/current_link_width"));
    assert_evidence(c, "max_link_width", "4", &format!("{NVME_LIVE}/max_link_width"));
    assert_evidence(c, "current_link_speed", "8 GT/s", &format!("{NVME_LIVE}/current_link_speed"));
    assert_evidence(c, "upstream port max_link_width", "4", "/sys/devices/pci0000:00/0000:00:1d.0/max_link_width");
    assert_eq!(c.cost.as_deref(), Some("PCIe 3.0 x2: at most 1.97 GB/s instead of 3.94 GB/s"));
    assert!(c.fix.contains("lspci -vv -s 0000:03:00.0"), "{}", c.fix);
    assert_eq!(doc.exit_code(), 1);
}

/// The slot's port can do only x2: the drive is not at fault, the slot is.
#[test]
fn pcie_link_at_the_slots_limit_is_slot_limit() {
    let fx = Fx::new();
    fx.nvme((GEN3, 2), (GEN3, 4), Some((GEN3, 2)));
    let doc = diagnose(&fx.gather("nvme0n1"));
    let c = assert_first(&doc, "pcie-slot-limit", "pcie-link");
    assert_eq!(c.severity, Severity::High);
    assert_evidence(c, "current_link_width", "2", &format!("{NVME_LIVE}/current_link_width"));
    assert_evidence(c, "upstream port max_link_width", "2", "/sys/devices/pci0000:00/0000:00:1d.0/max_link_width");
    assert_eq!(c.cost.as_deref(), Some("PCIe 3.0 x2: at most 1.97 GB/s instead of 3.94 GB/s"));
    assert!(!doc.causes.iter().any(|c| c.code == "pcie-link-degraded"));
}

#[test]
fn pcie_slot_limit_versus_degraded_cases() {
    // (current, drive max, port max) → code, cost.
    let cases: [(Rate<'_>, Rate<'_>, Option<Rate<'_>>, &str, &str); 5] = [
        // A PCIe 4.0 drive in a PCIe 3.0 slot.
        (
            (GEN3, 4),
            (GEN4, 4),
            Some((GEN3, 4)),
            "pcie-slot-limit",
            "PCIe 3.0 x4: at most 3.94 GB/s instead of 7.88 GB/s",
        ),
        // Trained to PCIe 2.0 though both ends do 3.0.
        (
            (GEN2, 4),
            (GEN3, 4),
            Some((GEN3, 4)),
            "pcie-link-degraded",
            "PCIe 2.0 x4: at most 2.00 GB/s instead of 3.94 GB/s",
        ),
        // x1 in an x2 slot: degraded, and reseating gains the slot's x2, not the drive's x4.
        (
            (GEN3, 1),
            (GEN3, 4),
            Some((GEN3, 2)),
            "pcie-link-degraded",
            "PCIe 3.0 x1: at most 985 MB/s instead of 1.97 GB/s",
        ),
        // No port maximum visible: below the drive's own is degraded.
        ((GEN3, 2), (GEN3, 4), None, "pcie-link-degraded", "PCIe 3.0 x2: at most 1.97 GB/s instead of 3.94 GB/s"),
        // Slot limits both speed and width.
        (
            (GEN2, 2),
            (GEN3, 4),
            Some((GEN2, 2)),
            "pcie-slot-limit",
            "PCIe 2.0 x2: at most 1.00 GB/s instead of 3.94 GB/s",
        ),
    ];
    for (cur, dev, port, code, cost) in cases {
        let fx = Fx::new();
        fx.nvme(cur, dev, port);
        let doc = diagnose(&fx.gather("nvme0n1"));
        let c = assert_first(&doc, code, "pcie-link");
        assert_eq!(c.cost.as_deref(), Some(cost), "{cur:?} {dev:?} {port:?}");
        assert_eq!(c.severity, Severity::High, "{cur:?} {dev:?} {port:?}");
    }
}

// ---------------------------------------------------------------------------------------------
// sata-link

#[test]
fn sata_link_below_both_ends_is_slow() {
    let fx = Fx::new();
    let d = fx.sata("sda", (8, 0), 3, 2, false, "3.0 Gbps", "6.0 Gbps");
    fx.attrs(&d.port, &[("link3/dev3.0/ata_device/dev3.0/spdn_cnt", "2")]);
    let mut f = fx.gather("sda");
    set_smart(
        &mut f,
        "sda",
        ata_json("Samsung SSD 860 EVO 500GB", 0, vec![attr(199, "CRC_Error_Count", 0)], 60, 30, true),
    );
    let doc = diagnose(&f);
    let c = assert_first(&doc, "sata-link-slow", "sata-link");
    assert_eq!(c.severity, Severity::High);
    let link = "/sys/devices/pci0000:00/0000:00:17.0/ata3/link3/ata_link/link3";
    assert_evidence(c, "sata_spd", "3 Gbps", &format!("{link}/sata_spd"));
    assert_evidence(c, "hw_sata_spd_limit", "6 Gbps", &format!("{link}/hw_sata_spd_limit"));
    assert_evidence(
        c,
        "spdn_cnt (speed lowered after errors)",
        "2",
        "/sys/devices/pci0000:00/0000:00:17.0/ata3/link3/dev3.0/ata_device/dev3.0/spdn_cnt",
    );
    assert_evidence(c, "interface_speed max", "6 Gb/s", "smartctl -a /dev/sda");
    assert_eq!(c.cost.as_deref(), Some("at most 300 MB/s instead of 600 MB/s"));
}

/// The controller can do 6 Gb/s but the drive only 3: not slow, the drive's own limit.
#[test]
fn sata_link_at_the_drives_own_maximum_passes() {
    let fx = Fx::new();
    fx.sata("sda", (8, 0), 3, 2, true, "3.0 Gbps", "6.0 Gbps");
    let mut f = fx.gather("sda");
    set_smart(&mut f, "sda", ata_json("ST3500418AS", 7200, vec![], 30, 30, false));
    let doc = diagnose(&f);
    assert!(!doc.causes.iter().any(|c| c.code == "sata-link-slow"), "{:#?}", ranked(&doc));
    assert_eq!(check(&doc, "sata-link").status, Status::Passed);
}

#[test]
fn sata_crc_errors_from_smart() {
    let fx = Fx::new();
    fx.sda(false);
    let mut f = fx.gather("sda");
    set_smart(
        &mut f,
        "sda",
        ata_json(
            "CT1000MX500SSD1",
            0,
            vec![attr(5, "Reallocated_Sector_Ct", 0), attr(199, "UDMA_CRC_Error_Count", 27)],
            60,
            60,
            true,
        ),
    );
    let doc = diagnose(&f);
    let c = assert_first(&doc, "sata-crc-errors", "sata-link");
    assert_eq!(c.severity, Severity::Medium);
    assert_evidence(c, "SMART 199 UDMA_CRC_Error_Count", "27", "smartctl -a /dev/sda");
}

// ---------------------------------------------------------------------------------------------
// usb-link

#[test]
fn usb_disk_on_a_usb2_link() {
    let fx = Fx::new();
    fx.usb("480", "usb-storage", "1");
    let doc = diagnose(&fx.gather("sdb"));
    let c = assert_first(&doc, "usb-high-speed", "usb-link");
    assert_eq!(c.severity, Severity::High);
    assert_evidence(c, "speed", "480 Mb/s", "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/speed");
    assert_evidence(c, "interface driver", "usb-storage", "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/*/driver");
    assert_eq!(c.cost.as_deref(), Some("at most 53 MB/s whatever the drive can do"));
    // Bulk-Only queues one command by design: that is the USB link's finding, not NCQ's.
    assert!(!doc.causes.iter().any(|c| c.code == "ncq-off" || c.code == "nr-requests-low"), "{:#?}", ranked(&doc));
}

#[test]
fn usb3_disk_without_uas() {
    let fx = Fx::new();
    let disk = fx.usb("5000", "usb-storage", "1");
    // usb-storage's one tag: the block layer holds two requests with a scheduler.
    fx.attrs(&disk, &[("queue/nr_requests", "2")]);
    let doc = diagnose(&fx.gather("sdb"));
    let c = assert_first(&doc, "usb-storage-not-uas", "usb-link");
    assert_eq!(c.severity, Severity::Medium);
    assert_evidence(c, "interface driver", "usb-storage", "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/*/driver");
    assert_evidence(c, "speed", "5000 Mb/s", "/sys/devices/pci0000:00/0000:00:14.0/usb2/2-1/speed");
    assert!(!doc.causes.iter().any(|c| c.code == "ncq-off" || c.code == "nr-requests-low"), "{:#?}", ranked(&doc));
    // The medium behind a bridge is unknown.
    assert!(doc.causes.iter().any(|c| c.code == "rotational-unknown"));
}

#[test]
fn usb3_disk_with_uas_passes() {
    let fx = Fx::new();
    fx.usb("10000", "uas", "30");
    let doc = diagnose(&fx.gather("sdb"));
    assert_eq!(check(&doc, "usb-link").status, Status::Passed, "{:#?}", ranked(&doc));
    assert!(check(&doc, "usb-link").reason.as_deref().unwrap().contains("10000 Mb/s uas"));
}

// ---------------------------------------------------------------------------------------------
// device-errors

#[test]
fn nvme_media_errors() {
    let fx = Fx::new();
    fx.fast_nvme();
    let mut f = fx.gather("nvme0n1");
    set_smart(&mut f, "nvme0n1", nvme_json(json!({"media_errors": 12, "num_err_log_entries": 40})));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "media-errors", "device-errors");
    assert_eq!(c.severity, Severity::Critical);
    assert_evidence(c, "NVMe media_errors", "12", "smartctl -a /dev/nvme0n1");
}

#[test]
fn ata_pending_sectors_are_critical_and_reallocated_high() {
    let fx = Fx::new();
    fx.sda(true);
    let mut f = fx.gather("sda");
    let attrs = vec![attr(5, "Reallocated_Sector_Ct", 8), attr(197, "Current_Pending_Sector", 3)];
    set_smart(&mut f, "sda", ata_json("ST4000NM0035-1V4107", 7200, attrs, 60, 60, false));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "media-errors", "device-errors");
    assert_eq!(c.severity, Severity::Critical);
    assert_evidence(c, "SMART 197 Current_Pending_Sector", "3", "smartctl -a /dev/sda");
    assert_evidence(c, "SMART 5 Reallocated_Sector_Ct", "8", "smartctl -a /dev/sda");

    let mut f = fx.gather("sda");
    set_smart(
        &mut f,
        "sda",
        ata_json("ST4000NM0035-1V4107", 7200, vec![attr(5, "Reallocated_Sector_Ct", 8)], 60, 60, false),
    );
    assert_eq!(cause(&diagnose(&f), "media-errors").severity, Severity::High);
}

#[test]
fn nvme_critical_warning() {
    let fx = Fx::new();
    fx.fast_nvme();
    let mut f = fx.gather("nvme0n1");
    set_smart(&mut f, "nvme0n1", nvme_json(json!({"critical_warning": 4})));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "critical-warning", "device-errors");
    assert_eq!(c.severity, Severity::Critical);
    assert!(c.summary.contains("reliability_degraded"), "{}", c.summary);
    assert_evidence(c, "NVMe critical_warning", "0x04", "smartctl -a /dev/nvme0n1");
}

#[test]
fn kernel_log_io_errors_and_the_drivers_error_count() {
    let fx = Fx::new();
    let d = fx.sda(true);
    fx.attrs(&d.scsi, &[("ioerr_cnt", "0x2")]);
    fx.kmsg(
        "3,812,5432101,-;blk_update_request: I/O error, dev sda, sector 2048 op 0x0:(READ) flags 0x0\n\
         3,813,5432102,-;blk_update_request: I/O error, dev sdab, sector 99 op 0x0:(READ) flags 0x0\n\
         6,814,5432103,-;sd 2:0:0:0: [sda] Attached SCSI disk\n",
    );
    let doc = diagnose(&fx.gather("sda"));
    let c = assert_first(&doc, "kernel-io-errors", "device-errors");
    assert_eq!(c.severity, Severity::High);
    assert_eq!(c.evidence.len(), 1, "only sda's line, not sdab's: {:#?}", c.evidence);
    assert_evidence(c, "kernel log", "I/O error, dev sda, sector 2048", "/dev/kmsg");
    let io = cause(&doc, "device-io-errors");
    assert_eq!(io.severity, Severity::Medium);
    assert_evidence(io, "ioerr_cnt", "2", &format!("{}/device/ioerr_cnt", d.live));
}

// ---------------------------------------------------------------------------------------------
// thermal

#[test]
fn nvme_thermal_throttling() {
    let fx = Fx::new();
    fx.fast_nvme();
    let mut f = fx.gather("nvme0n1");
    set_smart(
        &mut f,
        "nvme0n1",
        nvme_json(json!({"temperature": 78, "warning_temp_time": 42, "thermal_temp1_transition_count": 310})),
    );
    let doc = diagnose(&f);
    let c = assert_first(&doc, "thermal-throttling", "thermal");
    assert_eq!(c.severity, Severity::High);
    assert_evidence(c, "warning_temp_time (minutes)", "42", "smartctl -a /dev/nvme0n1");
    assert_evidence(c, "thermal_temp1_transition_count", "310", "smartctl -a /dev/nvme0n1");
    assert_evidence(c, "temperature", "78 °C", "smartctl -a /dev/nvme0n1");

    // Transitions alone (light throttling): medium.
    let mut f = fx.gather("nvme0n1");
    set_smart(&mut f, "nvme0n1", nvme_json(json!({"thermal_temp1_transition_count": 5})));
    assert_eq!(cause(&diagnose(&f), "thermal-throttling").severity, Severity::Medium);
}

// ---------------------------------------------------------------------------------------------
// write-cache

#[test]
fn sata_write_cache_off() {
    let fx = Fx::new();
    let d = fx.sda(false);
    fx.attrs(&d.disk, &[("queue/write_cache", "write through")]);
    let mut f = fx.gather("sda");
    let mut j = ata_json("Samsung SSD 860 EVO 500GB", 0, vec![], 60, 60, true);
    j["write_cache"] = json!({"enabled": false});
    set_smart(&mut f, "sda", j);
    let doc = diagnose(&f);
    let c = assert_first(&doc, "write-cache-off", "write-cache");
    assert_eq!(c.severity, Severity::High);
    assert_evidence(c, "queue/write_cache", "write through", &format!("{}/queue/write_cache", d.live));
    assert_evidence(c, "write_cache.enabled", "false", "smartctl -a /dev/sda");
    assert!(c.fix.contains("smartctl -s wcache,on /dev/sda"), "{}", c.fix);
}

/// NVMe without a volatile write cache is a drive with power-loss protection: worth knowing.
#[test]
fn nvme_write_through_is_info() {
    let fx = Fx::new();
    let disk = fx.fast_nvme();
    fx.attrs(&disk, &[("queue/write_cache", "write through")]);
    let doc = diagnose(&fx.gather("nvme0n1"));
    let c = assert_first(&doc, "write-cache-off", "write-cache");
    assert_eq!(c.severity, Severity::Info);
    assert_evidence(c, "queue/write_cache", "write through", &format!("{NVME_DISK_LIVE}/queue/write_cache"));
}

// ---------------------------------------------------------------------------------------------
// ncq

#[test]
fn sata_ncq_off() {
    let fx = Fx::new();
    let d = fx.sda(false);
    fx.attrs(&d.scsi, &[("queue_depth", "1")]);
    let doc = diagnose(&fx.gather("sda"));
    let c = assert_first(&doc, "ncq-off", "ncq");
    assert_eq!(c.severity, Severity::Medium);
    assert_evidence(c, "device/queue_depth", "1", &format!("{}/device/queue_depth", d.live));
}

// ---------------------------------------------------------------------------------------------
// trim

#[test]
fn ssd_nearly_full() {
    let fx = Fx::new();
    let disk = fx.fast_nvme();
    fx.s.partition(&disk, "nvme0n1p1", (259, 1), 1, 2048, 1_953_521_072).unwrap();
    fx.fstrim_timer();
    let mut f = fx.gather("nvme0n1p1");
    f.mount = Some(mount("ext4", "rw,relatime", 1_000_000_000_000, 40_000_000_000));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "ssd-full", "trim");
    assert_eq!(c.severity, Severity::Medium);
    assert!(c.summary.contains("96 % full"), "{}", c.summary);
    assert_evidence(c, "free", "40000000000", "statvfs(/data)");
    assert_evidence(c, "size", "1000000000000", "statvfs(/data)");

    let mut f = fx.gather("nvme0n1p1");
    f.mount = Some(mount("ext4", "rw,relatime", 1_000_000_000_000, 20_000_000_000));
    assert_eq!(cause(&diagnose(&f), "ssd-full").severity, Severity::High);
}

#[test]
fn never_trimmed() {
    let fx = Fx::new();
    let disk = fx.fast_nvme();
    fx.s.partition(&disk, "nvme0n1p1", (259, 1), 1, 2048, 1_953_521_072).unwrap();
    let mut f = fx.gather("nvme0n1p1");
    f.mount = Some(mount("ext4", "rw,relatime", 1_000_000_000_000, 500_000_000_000));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "never-trimmed", "trim");
    assert_eq!(c.severity, Severity::Medium);
    assert_evidence(c, "mount options", "rw,relatime", "/proc/self/mountinfo");
    assert_evidence(c, "fstrim.timer", "not enabled", "/etc/systemd/system/timers.target.wants");

    // The timer, or a discard mount, settles it.
    fx.fstrim_timer();
    let mut f = fx.gather("nvme0n1p1");
    f.mount = Some(mount("ext4", "rw,relatime", 1_000_000_000_000, 500_000_000_000));
    assert!(f.system.trim_timer.as_deref() == Some("/etc/systemd/system/timers.target.wants/fstrim.timer"));
    assert!(diagnose(&f).causes.iter().all(|c| c.code != "never-trimmed"));
}

/// dm-crypt opened without --allow-discards passes no TRIM down.
#[test]
fn dm_crypt_without_discards() {
    let fx = Fx::new();
    let disk = fx.fast_nvme();
    let part = fx.s.partition(&disk, "nvme0n1p2", (259, 2), 2, 1_050_624, 1_900_000_000).unwrap();
    let dm = fx.virtual_disk("dm-0", (253, 0), 1_899_966_464);
    fx.s.queue(&dm, 512, 512, false, "none").unwrap();
    fx.attrs(
        &dm,
        &[
            ("dm/name", "luks-3f1e"),
            ("dm/uuid", "CRYPT-LUKS2-3f1e0c2b9a8d4e7f8a6b5c4d3e2f1a0b-luks-3f1e"),
            ("queue/discard_max_bytes", "0"),
            ("queue/write_cache", "write back"),
        ],
    );
    fx.s.stack(&dm, &part).unwrap();
    fx.fstrim_timer();
    let mut f = fx.gather("dm-0");
    f.mount = Some(mount("ext4", "rw,relatime", 1_000_000_000_000, 500_000_000_000));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "discard-unsupported", "trim");
    assert_eq!(c.severity, Severity::Medium);
    assert_eq!(c.device.as_deref(), Some("dm-0"));
    assert_evidence(c, "queue/discard_max_bytes", "0", "/sys/devices/virtual/block/dm-0/queue/discard_max_bytes");
    assert!(c.fix.contains("--allow-discards"), "{}", c.fix);
    let crypt = cause(&doc, "dm-crypt");
    assert_eq!(crypt.severity, Severity::Info);
    assert_evidence(crypt, "dm/uuid", "CRYPT-LUKS2", "/sys/block/dm-0/dm/uuid");
}

/// A partition shows its disk's queue: the disk that takes no discard is the one named.
#[test]
fn discard_unsupported_names_the_disk_not_its_partition() {
    let fx = Fx::new();
    let d = fx.sda(false);
    fx.attrs(&d.disk, &[("queue/discard_max_bytes", "0")]);
    fx.s.partition(&d.disk, "sda1", (8, 1), 1, 2048, 1_000_000_000).unwrap();
    fx.fstrim_timer();
    let mut f = fx.gather("sda1");
    f.mount = Some(mount("ext4", "rw,relatime", 500_000_000_000, 250_000_000_000));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "discard-unsupported", "trim");
    assert_eq!(c.device.as_deref(), Some("sda"));
    assert_eq!(c.summary, "sda accepts no discard (TRIM)");
    assert_evidence(c, "queue/discard_max_bytes", "0", &format!("{}/queue/discard_max_bytes", d.live));
}

// ---------------------------------------------------------------------------------------------
// alignment

#[test]
fn partition_at_sector_63_is_misaligned() {
    let fx = Fx::new();
    let d = fx.sda(false);
    fx.s.partition(&d.disk, "sda1", (8, 1), 1, 63, 976_768_002).unwrap();
    fx.attrs(&d.disk.join("sda1"), &[("alignment_offset", "512")]);
    fx.fstrim_timer();
    let doc = diagnose(&fx.gather("sda1"));
    let c = assert_first(&doc, "misaligned-partition", "alignment");
    assert_eq!(c.severity, Severity::High);
    assert_eq!(c.device.as_deref(), Some("sda1"));
    assert_evidence(c, "start (sectors)", "63", &format!("{}/sda1/start", d.live));
    assert_evidence(c, "physical_block_size", "4096", &format!("{}/queue/physical_block_size", d.live));
    assert_evidence(c, "alignment_offset", "512", &format!("{}/sda1/alignment_offset", d.live));
}

#[test]
fn partition_on_4k_but_not_1mib() {
    let fx = Fx::new();
    let d = fx.sda(false);
    fx.s.partition(&d.disk, "sda1", (8, 1), 1, 8, 976_768_002).unwrap();
    let doc = diagnose(&fx.gather("sda1"));
    let c = assert_first(&doc, "partition-not-mib-aligned", "alignment");
    assert_eq!(c.severity, Severity::Low);
    assert_evidence(c, "start (sectors)", "8", &format!("{}/sda1/start", d.live));
}

// ---------------------------------------------------------------------------------------------
// power

#[test]
fn nvme_apst_allowed() {
    let fx = Fx::new();
    fx.fast_nvme();
    fx.file("module/nvme_core/parameters/default_ps_max_latency_us", "100000");
    let doc = diagnose(&fx.gather("nvme0n1"));
    let c = assert_first(&doc, "nvme-apst", "power");
    assert_eq!(c.severity, Severity::Low);
    assert_evidence(
        c,
        "default_ps_max_latency_us",
        "100000",
        "/sys/module/nvme_core/parameters/default_ps_max_latency_us",
    );
    assert!(c.fix.contains("/sys/class/nvme/nvme0/power/pm_qos_latency_tolerance_us"), "{}", c.fix);

    // The controller's own tolerance 0 turns APST off.
    fx.attrs(&fx.devices(NVME_CTRL), &[("power/pm_qos_latency_tolerance_us", "0")]);
    let doc = diagnose(&fx.gather("nvme0n1"));
    assert!(doc.causes.iter().all(|c| c.code != "nvme-apst"), "{:#?}", ranked(&doc));
    assert_eq!(check(&doc, "power").status, Status::Passed);
}

#[test]
fn sata_link_power_management() {
    let fx = Fx::new();
    let d = fx.sda(false);
    fx.attrs(&d.port, &[("host2/scsi_host/host2/link_power_management_policy", "med_power_with_dipm")]);
    let doc = diagnose(&fx.gather("sda"));
    let c = assert_first(&doc, "sata-link-power", "power");
    assert_eq!(c.severity, Severity::Low);
    let e = &c.evidence[0];
    assert_eq!((e.name.as_str(), e.value.as_str()), ("link_power_management_policy", "med_power_with_dipm"));
    assert!(e.source.starts_with("/sys/class/scsi_host/"), "{}", e.source);
}

#[test]
fn cpu_governor_by_driver() {
    // (driver, governor) → flagged?
    let cases = [
        ("acpi-cpufreq", "powersave", true),
        ("acpi-cpufreq", "conservative", true),
        ("acpi-cpufreq", "schedutil", false),
        ("intel_pstate", "powersave", false),
        ("intel_cpufreq", "powersave", true),
        ("amd-pstate-epp", "powersave", false),
        // amd-pstate without EPP runs the generic governors: powersave pins the lowest clock.
        ("amd-pstate", "powersave", true),
    ];
    for (driver, gov, flagged) in cases {
        let fx = Fx::new();
        fx.fast_nvme();
        for cpu in ["cpu0", "cpu1"] {
            fx.attrs(
                &fx.devices("system/cpu"),
                &[
                    (&format!("{cpu}/cpufreq/scaling_governor"), gov),
                    (&format!("{cpu}/cpufreq/scaling_driver"), driver),
                ],
            );
        }
        let doc = diagnose(&fx.gather("nvme0n1"));
        if flagged {
            let c = assert_first(&doc, "cpu-governor", "power");
            assert_eq!(c.severity, Severity::Low);
            assert_eq!(c.evidence[0].value, gov, "{driver}");
            assert!(c.evidence[0].source.starts_with("/sys/devices/system/cpu/cpu"), "{}", c.evidence[0].source);
        } else {
            assert!(doc.causes.iter().all(|c| c.code != "cpu-governor"), "{driver} {gov}: {:#?}", ranked(&doc));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// scheduler

#[test]
fn bfq_on_an_ssd() {
    let fx = Fx::new();
    let d = fx.sda(false);
    fx.attrs(&d.disk, &[("queue/scheduler", "mq-deadline kyber [bfq] none"), ("queue/iosched/low_latency", "1")]);
    let doc = diagnose(&fx.gather("sda"));
    let c = assert_first(&doc, "scheduler-for-medium", "scheduler");
    assert_eq!(c.severity, Severity::Low);
    assert_evidence(c, "queue/scheduler", "bfq", &format!("{}/queue/scheduler", d.live));
    assert_evidence(c, "iosched/low_latency", "true", &format!("{}/queue/iosched/low_latency", d.live));
}

#[test]
fn no_scheduler_on_a_rotating_disk() {
    let fx = Fx::new();
    let d = fx.sda(true);
    fx.attrs(&d.disk, &[("queue/scheduler", "mq-deadline [none]")]);
    let doc = diagnose(&fx.gather("sda"));
    let c = assert_first(&doc, "scheduler-for-medium", "scheduler");
    assert_evidence(c, "queue/scheduler", "none", &format!("{}/queue/scheduler", d.live));
}

#[test]
fn rotational_flag_wrong_for_an_ssd() {
    let fx = Fx::new();
    let d = fx.sda(true);
    fx.attrs(&d.disk, &[("queue/discard_max_bytes", "2147450880")]);
    let mut f = fx.gather("sda");
    set_smart(&mut f, "sda", ata_json("Samsung SSD 860 EVO 500GB", 0, vec![], 60, 60, true));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "rotational-wrong", "scheduler");
    assert_evidence(c, "queue/rotational", "true", &format!("{}/queue/rotational", d.live));
    assert_evidence(c, "rotation_rate", "solid state", "smartctl -a /dev/sda");
}

/// A USB bridge says rotational; SMART through the bridge knows better either way.
#[test]
fn rotational_unknown_only_when_smart_does_not_know() {
    let fx = Fx::new();
    fx.usb("10000", "uas", "30");
    let doc = diagnose(&fx.gather("sdb"));
    let c = assert_first(&doc, "rotational-unknown", "scheduler");
    assert_eq!(c.severity, Severity::Info);

    let mut f = fx.gather("sdb");
    set_smart(&mut f, "sdb", ata_json("ST8000NM0055-1RM112", 7200, vec![], 60, 60, false));
    let doc = diagnose(&f);
    assert!(doc.causes.iter().all(|c| c.code != "rotational-unknown"), "{:#?}", ranked(&doc));
}

// ---------------------------------------------------------------------------------------------
// request-limits

#[test]
fn request_queue_limits() {
    let fx = Fx::new();
    let d = fx.sda(false);
    fx.attrs(
        &d.disk,
        &[
            ("queue/nr_requests", "16"),
            ("queue/max_sectors_kb", "128"),
            ("queue/max_hw_sectors_kb", "1024"),
            ("queue/read_ahead_kb", "16"),
        ],
    );
    fx.s.partition(&d.disk, "sda1", (8, 1), 1, 2048, 976_768_002).unwrap();
    fx.fstrim_timer();
    let mut f = fx.gather("sda1");
    f.mount = Some(mount("xfs", "rw,relatime", 500_000_000_000, 250_000_000_000));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "nr-requests-low", "request-limits");
    assert_eq!(c.severity, Severity::Medium);
    assert_evidence(c, "queue/nr_requests", "16", &format!("{}/queue/nr_requests", d.live));
    let r = cause(&doc, "request-size-limited");
    assert_evidence(r, "queue/max_sectors_kb", "128", &format!("{}/queue/max_sectors_kb", d.live));
    assert_evidence(r, "queue/max_hw_sectors_kb", "1024", &format!("{}/queue/max_hw_sectors_kb", d.live));
    let ra = cause(&doc, "read-ahead-low");
    assert_eq!(ra.device.as_deref(), Some("sda1"));
    assert_evidence(ra, "queue/read_ahead_kb", "16", &format!("{}/queue/read_ahead_kb", d.live));
}

// ---------------------------------------------------------------------------------------------
// competing-io

/// An md RAID1 resyncing under the target.
#[test]
fn md_resync() {
    let fx = Fx::new();
    let a = fx.sata("sda", (8, 0), 3, 2, true, "6.0 Gbps", "6.0 Gbps");
    let b = fx.sata("sdb", (8, 16), 4, 3, true, "6.0 Gbps", "6.0 Gbps");
    let md = fx.virtual_disk("md0", (9, 0), 7_813_770_240);
    fx.attrs(&md, &[("md/level", "raid1"), ("md/sync_action", "resync"), ("queue/read_ahead_kb", "128")]);
    fx.s.stack(&md, &a.disk).unwrap();
    fx.s.stack(&md, &b.disk).unwrap();
    let doc = diagnose(&fx.gather("md0"));
    let c = assert_first(&doc, "md-resync", "competing-io");
    assert_eq!(c.severity, Severity::High);
    assert_evidence(c, "md/sync_action", "resync", "/sys/devices/virtual/block/md0/md/sync_action");
    let layer = cause(&doc, "md-layer");
    assert_eq!(layer.severity, Severity::Info);
    assert_evidence(layer, "md/level", "raid1", "/sys/block/md0/md/level");
}

/// `--load`: another process keeps the disk busy.
#[test]
fn competing_io_seen_under_load() {
    let fx = Fx::new();
    fx.fast_nvme();
    let mut f = fx.gather("nvme0n1");
    f.load = Some(LoadView {
        seconds: 10.0,
        devices: vec![LoadDevice {
            name: "nvme0n1".into(),
            read_iops: 5200.0,
            write_iops: 800.0,
            read_mb_s: 21.3,
            write_mb_s: 3.3,
            util_pct: 71.5,
            await_ms: 0.4,
            aqu_sz: 2.1,
        }],
        io_pressure_some_pct: Some(3.0),
        processes: vec![LoadProcess { pid: 4242, command: "updatedb".into(), read_bytes: 213_000_000, write_bytes: 0 }],
    });
    let doc = diagnose(&f);
    let c = assert_first(&doc, "competing-io", "competing-io");
    assert_eq!(c.severity, Severity::High);
    assert_evidence(c, "IOPS (r+w)", "6000", "/proc/diskstats over 10 s");
    assert_evidence(c, "%util", "71.5", "/proc/diskstats");
    assert_evidence(c, "process 4242 (updatedb)", "read 213000000 B", "/proc/4242/io");
    assert!(doc.causes.iter().all(|c| c.code != "io-pressure"));
}

/// Without --load, PSI's last minute above 10 % says tasks wait on I/O.
#[test]
fn io_pressure_from_psi() {
    let fx = Fx::new();
    fx.fast_nvme();
    fx.file("proc/pressure/io", "some avg10=31.20 avg60=25.00 avg300=12.00 total=9610489895\nfull avg10=20.00 avg60=18.00 avg300=9.00 total=6732497631\n");
    let doc = diagnose(&fx.gather("nvme0n1"));
    let c = assert_first(&doc, "io-pressure", "competing-io");
    assert_eq!(c.severity, Severity::Medium);
    assert_evidence(c, "PSI io some avg60", "25.00 %", "/proc/pressure/io");
}

// ---------------------------------------------------------------------------------------------
// stacking

/// A loop device (7:3) over a file, its reads limited by a cgroup v1 blkio throttle on the
/// caller's cgroup.
#[test]
fn cgroup_v1_blkio_throttle() {
    let fx = Fx::new();
    let lo = fx.virtual_disk("loop3", (7, 3), 2_097_152);
    fx.s.queue(&lo, 512, 512, false, "none").unwrap();
    fx.attrs(&lo, &[("loop/backing_file", "/var/lib/images/test.img")]);
    fx.file("proc/self/cgroup", "12:cpu,cpuacct:/system.slice/bench.service\n4:blkio:/system.slice/bench.service\n0::/system.slice/bench.service");
    fx.file(
        "proc/self/mountinfo",
        "25 1 0:23 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw\n\
         35 25 0:31 / /sys/fs/cgroup/blkio rw,nosuid,nodev,noexec,relatime shared:15 - cgroup cgroup rw,blkio\n",
    );
    fx.file("fs/cgroup/blkio/system.slice/bench.service/blkio.throttle.read_iops_device", "7:3 10000\n8:0 500");
    let f = fx.gather("loop3");
    assert_eq!(f.cgroup.len(), 1, "only the target's device: {:?}", f.cgroup);
    let doc = diagnose(&f);
    let c = assert_first(&doc, "cgroup-limit", "stacking");
    assert_eq!(c.severity, Severity::High);
    assert_eq!(c.device.as_deref(), Some("loop3"));
    assert!(c.summary.contains("10000 read IOPS"), "{}", c.summary);
    assert_evidence(
        c,
        "read_iops",
        "10000",
        "/sys/fs/cgroup/blkio/system.slice/bench.service/blkio.throttle.read_iops_device",
    );
    let lo = cause(&doc, "loop-layer");
    assert_evidence(lo, "loop/backing_file", "/var/lib/images/test.img", "/sys/block/loop3/loop/backing_file");
}

/// cgroup v2: `io.max` on an ancestor of the caller's cgroup holds for it.
#[test]
fn cgroup_v2_io_max_on_an_ancestor() {
    let fx = Fx::new();
    let lo = fx.virtual_disk("loop3", (7, 3), 2_097_152);
    fx.s.queue(&lo, 512, 512, false, "none").unwrap();
    fx.file("proc/self/cgroup", "0::/user.slice/user-1000.slice/session-2.scope");
    fx.file(
        "proc/self/mountinfo",
        "30 23 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:4 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n",
    );
    fx.file("fs/cgroup/user.slice/io.max", "7:3 riops=10000 wiops=max rbps=max wbps=52428800");
    fx.file("fs/cgroup/user.slice/user-1000.slice/io.max", "7:3 riops=20000 wiops=max rbps=max wbps=max");
    let f = fx.gather("loop3");
    let doc = diagnose(&f);
    let c = assert_first(&doc, "cgroup-limit", "stacking");
    assert_eq!(c.severity, Severity::High);
    // The lowest of the ancestors' limits of each kind.
    let iops = doc.causes.iter().find(|c| c.evidence[0].name == "read_iops").unwrap();
    assert_evidence(iops, "read_iops", "10000", "/sys/fs/cgroup/user.slice/io.max");
    let wbps = doc.causes.iter().find(|c| c.evidence[0].name == "write_bps").unwrap();
    assert_evidence(wbps, "write_bps", "52428800", "/sys/fs/cgroup/user.slice/io.max");
    assert!(wbps.summary.contains("52 MB/s write"), "{}", wbps.summary);
    assert_eq!(doc.causes.iter().filter(|c| c.code == "cgroup-limit").count(), 2);
}

#[test]
fn lvm_snapshot_origin() {
    let fx = Fx::new();
    let disk = fx.fast_nvme();
    let part = fx.s.partition(&disk, "nvme0n1p1", (259, 1), 1, 2048, 1_953_521_072).unwrap();
    let real = fx.virtual_disk("dm-0", (253, 0), 409_600_000);
    fx.attrs(&real, &[("dm/name", "vg0-data-real"), ("dm/uuid", "LVM-Wb2mXk1w3kRz0GQ1sQj1V2p7Nn3f4K5l-real")]);
    let top = fx.virtual_disk("dm-1", (253, 1), 409_600_000);
    fx.attrs(&top, &[("dm/name", "vg0-data"), ("dm/uuid", "LVM-Wb2mXk1w3kRz0GQ1sQj1V2p7Nn3f4K5l")]);
    fx.s.stack(&real, &part).unwrap();
    fx.s.stack(&top, &real).unwrap();
    let doc = diagnose(&fx.gather("dm-1"));
    let c = assert_first(&doc, "lvm-snapshot", "stacking");
    assert_eq!(c.severity, Severity::Medium);
    assert_eq!(c.device.as_deref(), Some("dm-0"));
    assert_evidence(c, "dm/name", "vg0-data-real", "/sys/block/dm-0/dm/name");
}

#[test]
fn compressed_file_system() {
    let fx = Fx::new();
    fx.fast_nvme();
    fx.fstrim_timer();
    let mut f = fx.gather("nvme0n1");
    f.mount = Some(mount("btrfs", "rw,relatime,compress=zstd:3,ssd,discard=async", 1_000_000_000_000, 500_000_000_000));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "fs-compression", "stacking");
    assert_eq!(c.severity, Severity::Info);
    assert_evidence(c, "mount options", "compress=zstd:3", "/proc/self/mountinfo");
}

// ---------------------------------------------------------------------------------------------
// drive-state

#[test]
fn worn_out_nvme() {
    let fx = Fx::new();
    fx.fast_nvme();
    let mut f = fx.gather("nvme0n1");
    set_smart(&mut f, "nvme0n1", nvme_json(json!({"percentage_used": 95})));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "wear-out", "drive-state");
    assert_eq!(c.severity, Severity::High);
    assert_evidence(c, "NVMe percentage used", "95 %", "smartctl -a /dev/nvme0n1");
}

#[test]
fn low_spare_at_ten_percent() {
    let fx = Fx::new();
    fx.fast_nvme();
    let mut f = fx.gather("nvme0n1");
    set_smart(&mut f, "nvme0n1", nvme_json(json!({"available_spare": 10, "available_spare_threshold": 5})));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "low-spare", "drive-state");
    assert_eq!(c.severity, Severity::High);
    assert_evidence(c, "available_spare", "10 %", "smartctl -a /dev/nvme0n1");

    let mut f = fx.gather("nvme0n1");
    set_smart(&mut f, "nvme0n1", nvme_json(json!({"available_spare": 11, "available_spare_threshold": 5})));
    assert!(diagnose(&f).causes.iter().all(|c| c.code != "low-spare"));
}

#[test]
fn drive_managed_smr() {
    let fx = Fx::new();
    fx.sda(true);
    let mut f = fx.gather("sda");
    set_smart(&mut f, "sda", ata_json("WDC WD40EFAX-68JH4N0", 5400, vec![], 60, 60, true));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "smr-drive", "drive-state");
    assert_eq!(c.severity, Severity::Medium);
    assert_evidence(c, "model", "WD40EFAX", "smartctl -a /dev/sda");
    assert_evidence(c, "rotating disk with TRIM", "yes", "smartctl -a /dev/sda");
}

#[test]
fn write_cliff_from_diskmeters_state() {
    let fx = Fx::new();
    fx.fast_nvme();
    let mut f = fx.gather("nvme0n1");
    f.disks[0].state =
        Some(DeviceState { cliff_bytes: Some(600 << 20), source: "/var/lib/diskmeter/state/259:0.json".into() });
    let doc = diagnose(&f);
    let c = assert_first(&doc, "write-cliff", "drive-state");
    assert_eq!(c.severity, Severity::Medium);
    assert_evidence(c, "cliff_bytes", "629145600", "/var/lib/diskmeter/state/259:0.json");
    assert_eq!(c.cost.as_deref(), Some("writes beyond 0.6 GiB in one go run at the slower rate"));
}

#[test]
fn host_managed_zoned_disk() {
    let fx = Fx::new();
    let d = fx.sda(true);
    fx.attrs(&d.disk, &[("queue/zoned", "host-managed")]);
    let doc = diagnose(&fx.gather("sda"));
    let c = assert_first(&doc, "smr-drive", "drive-state");
    assert_eq!(c.severity, Severity::Info);
    assert_evidence(c, "queue/zoned", "host-managed", &format!("{}/queue/zoned", d.live));
}

// ---------------------------------------------------------------------------------------------
// virtual

#[test]
fn virtio_disk() {
    let fx = Fx::new();
    let vda = fx.s.disk("pci0000:00/0000:00:04.0/virtio1/block", "vda", (252, 0), 209_715_200).unwrap();
    fx.s.queue(&vda, 512, 512, true, "[none] mq-deadline").unwrap();
    fx.attrs(&vda, &[("queue/write_cache", "write back")]);
    fx.s.hardware(&vda, "pci0000:00/0000:00:04.0/virtio1").unwrap();
    let doc = diagnose(&fx.gather("vda"));
    let c = assert_first(&doc, "virtual-disk", "virtual");
    assert_eq!(c.severity, Severity::Info);
    assert_evidence(c, "transport", "virtio", "/sys/block/vda/device");
    assert_evidence(
        c,
        "queue/rotational",
        "true",
        "/sys/devices/pci0000:00/0000:00:04.0/virtio1/block/vda/queue/rotational",
    );
    // The host's link is not visible from inside.
    assert!(check(&doc, "pcie-link").reason.as_deref().unwrap().contains("virtual disk"));
}

#[test]
fn ram_disk() {
    let fx = Fx::new();
    let ram = fx.virtual_disk("ram0", (1, 0), 131_072);
    fx.s.queue(&ram, 512, 512, false, "none").unwrap();
    let doc = diagnose(&fx.gather("ram0"));
    let c = assert_first(&doc, "ram-device", "virtual");
    assert_evidence(c, "device", "ram0", "/sys/block/ram0");
}

// ---------------------------------------------------------------------------------------------
// probe

/// A "rotating" disk answering random reads in 180 µs: a cache answers.
#[test]
fn probe_faster_than_the_medium() {
    let fx = Fx::new();
    let d = fx.sda(true);
    let mut f = fx.gather("sda");
    f.probe = Some(probe_view(180.0, 180.0));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "faster-than-medium", "probe");
    assert_eq!(c.severity, Severity::Info);
    assert_evidence(c, "QD1 4 KiB random read mean", "180 µs", "probe");
    assert_evidence(c, "queue/rotational", "true", &format!("{}/queue/rotational", d.live));

    // 8 ms is a disk's.
    let mut f = fx.gather("sda");
    f.probe = Some(probe_view(8000.0, 180.0));
    let doc = diagnose(&f);
    assert!(doc.causes.is_empty(), "{:#?}", ranked(&doc));
    assert_eq!(check(&doc, "probe").status, Status::Passed);
}

/// An SSD whose QD1 reads take a disk's time: the latency floor is too slow for flash.
#[test]
fn probe_flash_with_a_disks_latency_floor() {
    let fx = Fx::new();
    fx.sda(false);
    let mut f = fx.gather("sda");
    f.probe = Some(probe_view(2500.0, 500.0));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "slow-latency-floor", "probe");
    assert_eq!(c.severity, Severity::Medium);
    assert_evidence(c, "QD1 4 KiB random read mean", "2500 µs", "probe");
    // 90 µs is flash's own pace.
    let mut f = fx.gather("sda");
    f.probe = Some(probe_view(90.0, 500.0));
    assert!(diagnose(&f).causes.iter().all(|c| c.code != "slow-latency-floor"));
}

/// A RAID1 of a disk and an SSD: the SSD answers reads, the medium is not misreported.
#[test]
fn probe_mixed_mirror_is_not_faster_than_the_medium() {
    let fx = Fx::new();
    let a = fx.sata("sda", (8, 0), 3, 2, true, "6.0 Gbps", "6.0 Gbps");
    let b = fx.sata("sdb", (8, 16), 4, 3, false, "6.0 Gbps", "6.0 Gbps");
    let md = fx.virtual_disk("md0", (9, 0), 1_953_525_168);
    fx.attrs(&md, &[("md/level", "raid1"), ("md/sync_action", "idle")]);
    fx.s.stack(&md, &a.disk).unwrap();
    fx.s.stack(&md, &b.disk).unwrap();
    let mut f = fx.gather("md0");
    f.probe = Some(probe_view(90.0, 500.0));
    let doc = diagnose(&f);
    assert!(doc.causes.iter().all(|c| c.code != "faster-than-medium"), "{:#?}", ranked(&doc));
}

/// An SSD on a 3 Gb/s controller reading at 295 MB/s: the link is the ceiling.
#[test]
fn probe_at_the_links_ceiling() {
    let fx = Fx::new();
    fx.sata("sda", (8, 0), 3, 2, false, "3.0 Gbps", "3.0 Gbps");
    let mut f = fx.gather("sda");
    f.probe = Some(probe_view(90.0, 295.0));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "link-bound", "probe");
    assert_eq!(c.severity, Severity::High);
    assert_eq!(c.device.as_deref(), Some("sda"));
    assert_evidence(c, "sequential read", "295 MB/s", "probe");
    assert_evidence(
        c,
        "link ceiling",
        "282 MB/s (SATA 3 Gb/s)",
        "/sys/devices/pci0000:00/0000:00:17.0/ata3/link3/ata_link/link3/sata_spd",
    );

    // 260 MB/s is 92 % of the practical ceiling (300 MB/s after 8b/10b, × 0.94): not bound.
    let mut f = fx.gather("sda");
    f.probe = Some(probe_view(90.0, 260.0));
    assert!(diagnose(&f).causes.iter().all(|c| c.code != "link-bound"));
}

/// A PCIe 3.0 x2 link read at 1.93 GB/s: bound, and measured ranks above configured.
#[test]
fn probe_link_bound_ranks_above_the_slot_limit() {
    let fx = Fx::new();
    fx.nvme((GEN3, 2), (GEN3, 4), Some((GEN3, 2)));
    let mut f = fx.gather("nvme0n1");
    f.probe = Some(probe_view(70.0, 1930.0));
    let doc = diagnose(&f);
    let c = assert_first(&doc, "link-bound", "probe");
    assert_evidence(c, "link ceiling", "1.77 GB/s (PCIe 3.0 x2)", NVME_LIVE);
    assert_eq!(doc.causes[1].code, "pcie-slot-limit");
}
