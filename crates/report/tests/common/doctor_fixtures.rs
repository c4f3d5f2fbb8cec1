//! `doctor`'s documents for the text, page and browser tests: a SATA disk on a slowed,
//! error-prone link under a misaligned partition, and a disk where nothing was found.

use doctor::model::{Cause, Check, DoctorDoc, Evidence, ProbeView, Severity, StackLayer, Status, SCHEMA};

fn layer(role: &str, name: &str, detail: &str) -> StackLayer {
    StackLayer { role: role.into(), name: name.into(), detail: detail.into() }
}

fn check(code: &str, title: &str, status: Status, reason: Option<&str>) -> Check {
    Check { code: code.into(), title: title.into(), status, reason: reason.map(str::to_string) }
}

/// A document with the header filled in and nothing found yet.
pub fn base() -> DoctorDoc {
    DoctorDoc {
        schema: SCHEMA.into(),
        tool: stats::ToolInfo { name: "diskmeter".into(), version: "0.1.0".into() },
        started_at: "2026-12-01T09:00:00Z".into(),
        target: "/srv/data".into(),
        device: Some("sda1".into()),
        stack: vec![
            layer("file system", "/srv/data", "ext4 (rw,relatime)"),
            layer("partition", "sda1", "partition 1 of sda, 1000.2 GB, non-rotational"),
            layer("disk", "sda", "sata Samsung SSD 870 EVO 1TB, 1000.2 GB, non-rotational"),
            layer("link", "sda", "SATA 3 Gb/s (ata1)"),
        ],
        causes: Vec::new(),
        checks: Vec::new(),
        load: None,
        probe: None,
        root: true,
    }
}

/// A SATA SSD on a link that fell back to 3 Gb/s and counts CRC errors, under a partition
/// that starts at sector 63; the probe ran. Causes ranked as `doctor` ranks them.
pub fn sata_doc() -> DoctorDoc {
    let mut doc = base();
    doc.causes = vec![
        Cause {
            code: "sata-link-slow".into(),
            check: "sata-link".into(),
            severity: Severity::High,
            device: Some("sda".into()),
            summary: "sda's SATA link runs at 3 Gb/s though both ends can do 6 Gb/s".into(),
            evidence: vec![
                Evidence::new("sata_spd", "3 Gbps", "/sys/class/ata_link/link1/sata_spd"),
                Evidence::new("hw_sata_spd_limit", "6 Gbps", "/sys/class/ata_link/link1/hw_sata_spd_limit"),
                Evidence::new("spdn_cnt (speed lowered after errors)", 2, "ata_device/spdn_cnt"),
                Evidence::new("interface_speed max", "6.0 Gb/s", "smartctl -a /dev/sda"),
            ],
            cost: Some("at most 300 MB/s instead of 600 MB/s".into()),
            fix: "replace the SATA cable and try another port; a link that keeps falling back (spdn_cnt) points at \
                  the cable or connector"
                .into(),
            weight: 60,
        },
        Cause {
            code: "sata-crc-errors".into(),
            check: "sata-link".into(),
            severity: Severity::Medium,
            device: Some("sda".into()),
            summary: "sda counted 37 interface CRC errors: transfers were retried".into(),
            evidence: vec![Evidence::new("SMART 199 UDMA_CRC_Error_Count", 37, "smartctl -a /dev/sda")],
            cost: Some("every CRC error costs a retried command; many slow the link down".into()),
            fix: "replace the SATA cable and reseat both ends (the counter never goes down: watch whether it still \
                  rises)"
                .into(),
            weight: 90,
        },
        Cause {
            code: "misaligned-partition".into(),
            check: "alignment".into(),
            severity: Severity::High,
            device: Some("sda1".into()),
            summary: "sda1 starts at byte 32256 (sector 63), not on a 4 KiB boundary".into(),
            evidence: vec![
                Evidence::new("start (sectors)", 63, "/sys/class/block/sda1/start"),
                Evidence::new("physical_block_size", 4096, "/sys/block/sda/queue/physical_block_size"),
                Evidence::new("alignment_offset", 3584, "/sys/class/block/sda1/alignment_offset"),
            ],
            cost: Some(
                "each 4 KiB write straddles two physical blocks: read-modify-write, often half the speed".into(),
            ),
            fix: "recreate the partition starting at sector 2048 (1 MiB), the default of parted, fdisk and gdisk, and \
                  copy the data back; `parted /dev/DISK align-check optimal N` checks it"
                .into(),
            weight: 60,
        },
    ];
    doc.rank();
    doc.checks = vec![
        check(
            "pcie-link",
            "PCIe link speed and width",
            Status::NotRun,
            Some("no PCIe link under the target (sda is sata)"),
        ),
        check("sata-link", "SATA link speed and cable errors", Status::Found, None),
        check("write-cache", "write cache", Status::Passed, Some("sda write back")),
        check("alignment", "partition alignment", Status::Found, None),
        check(
            "power",
            "power management",
            Status::NotRun,
            Some("no power settings visible (no cpufreq, no NVMe APST, no SATA link policy)"),
        ),
        check("competing-io", "competing I/O", Status::Passed, Some("no resync; add --load 10s to watch the devices")),
        check(
            "probe",
            "latency floor and throughput (--probe)",
            Status::Passed,
            Some("QD1 118 µs mean, QD32 71920 IOPS, sequential 268 MB/s"),
        ),
    ];
    doc.probe = Some(ProbeView {
        target: "/dev/sda1".into(),
        qd1_iops: 8_412.3,
        qd1_mean_us: 117.6,
        qd1_p99_us: 245.0,
        qd32_iops: 71_920.4,
        qd32_mean_us: 444.5,
        seq_mb_s: 268.4,
        warnings: Vec::new(),
    });
    doc
}

/// Nothing found: every check passed or could not run; neither `--probe` nor `--load`.
pub fn clean_doc() -> DoctorDoc {
    let mut doc = base();
    doc.root = false;
    doc.checks = vec![
        check("sata-link", "SATA link speed and cable errors", Status::Passed, Some("sda 6 Gb/s")),
        check("device-errors", "media and device errors", Status::NotRun, Some("SMART not read (sda: needs root)")),
        check("alignment", "partition alignment", Status::Passed, Some("sda1 starts at sector 2048")),
    ];
    doc
}
