//! The block walker on fixture trees of the shapes users have, and once on a real loop device.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used)]

use diskmeter_platform::block::fixture::SysTree;
use diskmeter_platform::block::{Topology, Transport};
use std::path::Path;

fn tree() -> (tempfile::TempDir, SysTree) {
    let t = tempfile::tempdir().unwrap();
    let s = SysTree::new(t.path()).unwrap();
    (t, s)
}

#[test]
fn nvme_disk_with_a_partition() {
    let (_t, s) = tree();
    let ctrl = "pci0000:00/0000:00:01.1/0000:01:00.0/nvme/nvme0";
    let disk = s.disk(ctrl, "nvme0n1", (259, 0), 1_953_525_168).unwrap();
    s.queue(&disk, 512, 4096, false, "[none] mq-deadline").unwrap();
    s.attr(&disk, "queue/max_sectors_kb", "128").unwrap();
    s.attr(&disk, "queue/max_hw_sectors_kb", "256").unwrap();
    s.attr(&disk, "queue/write_cache", "write back").unwrap();
    s.attr(&disk, "queue/discard_granularity", "512").unwrap();
    s.attr(&disk, "removable", "0").unwrap();
    s.attr(&disk, "mq/0/cpu_list", "0").unwrap();
    let hw = s.hardware(&disk, ctrl).unwrap();
    s.attr(&hw, "model", "Samsung SSD 980 PRO 1TB").unwrap();
    s.attr(&hw, "serial", "S5GXNF0R123456").unwrap();
    s.attr(&hw, "firmware_rev", "5B2QGXA7").unwrap();
    s.partition(&disk, "nvme0n1p1", (259, 1), 1, 2048, 1_048_576).unwrap();

    let topo = Topology::new(s.roots());
    let d = topo.device("nvme0n1").unwrap();
    assert_eq!((d.major, d.minor, d.transport, d.is_partition()), (259, 0, Transport::Nvme, false));
    assert_eq!(d.size_bytes(), Some(1_953_525_168 * 512));
    assert_eq!(d.ident.model.as_deref(), Some("Samsung SSD 980 PRO 1TB"));
    assert_eq!(d.ident.serial.as_deref(), Some("S5GXNF0R123456"));
    assert_eq!(d.ident.firmware.as_deref(), Some("5B2QGXA7"));
    let q = &d.queue;
    assert_eq!((q.logical_block_size, q.physical_block_size), (Some(512), Some(4096)));
    assert_eq!((q.max_sectors_kb, q.max_hw_sectors_kb, q.rotational), (Some(128), Some(256), Some(false)));
    assert_eq!((q.scheduler.as_deref(), q.write_cache.as_deref()), (Some("none"), Some("write back")));
    assert_eq!((q.discard_granularity, d.removable, d.request_based), (Some(512), Some(false), true));

    let p = topo.by_number(259, 1).unwrap();
    assert_eq!(p.name, "nvme0n1p1");
    assert_eq!((p.disk.as_str(), p.disk_major, p.disk_minor), ("nvme0n1", 259, 0));
    let part = p.partition.clone().unwrap();
    assert_eq!((part.number, part.start_sector, part.sectors), (Some(1), Some(2048), Some(1_048_576)));
    // The queue and the identity are the disk's.
    assert_eq!((p.queue.scheduler.as_deref(), p.transport), (Some("none"), Transport::Nvme));
    assert_eq!(p.ident.serial.as_deref(), Some("S5GXNF0R123456"));
    assert_eq!(topo.leaf_disks("nvme0n1p1"), ["nvme0n1"]);
}

fn sata(s: &SysTree) -> std::path::PathBuf {
    let hw = "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0";
    let sda = s.disk(&format!("{hw}/block"), "sda", (8, 0), 500_118_192).unwrap();
    s.queue(&sda, 512, 4096, true, "mq-deadline [bfq] none").unwrap();
    let dev = s.hardware(&sda, hw).unwrap();
    s.attr(&dev, "model", "WDC WD5000AAKX-0").unwrap();
    s.attr(&dev, "vendor", "ATA     ").unwrap();
    s.attr(&dev, "rev", "1H15").unwrap();
    s.attr(&dev, "serial", "WD-WCAYUJ123456").unwrap();
    s.partition(&sda, "sda1", (8, 1), 1, 2048, 1_050_624).unwrap();
    sda
}

#[test]
fn sata_behind_ahci() {
    let (_t, s) = tree();
    sata(&s);
    let topo = Topology::new(s.roots());
    let d = topo.device("sda").unwrap();
    assert_eq!(
        (d.transport, d.queue.rotational, d.queue.scheduler.as_deref()),
        (Transport::Sata, Some(true), Some("bfq"))
    );
    assert_eq!(d.ident.model.as_deref(), Some("WDC WD5000AAKX-0"));
    assert_eq!(d.ident.vendor.as_deref(), Some("ATA"));
    assert_eq!(d.ident.firmware.as_deref(), Some("1H15"));
    assert_eq!(d.ident.serial.as_deref(), Some("WD-WCAYUJ123456"));
    assert!(!d.is_virtual);
    let p = topo.device("sda1").unwrap();
    assert_eq!(p.partition.unwrap().disk, "sda");
    assert_eq!((p.major, p.minor, p.disk_major, p.disk_minor), (8, 1, 8, 0));
    assert_eq!(topo.disk_names().unwrap(), ["sda"]);
}

#[test]
fn usb_bridge_is_removable_usb() {
    let (_t, s) = tree();
    let hw = "pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0";
    let sdd = s.disk(&format!("{hw}/block"), "sdd", (8, 48), 61_071_360).unwrap();
    s.attr(&sdd, "removable", "1").unwrap();
    let dev = s.hardware(&sdd, hw).unwrap();
    s.attr(&dev, "vendor", "SanDisk").unwrap();
    s.attr(&dev, "model", "Ultra Fit").unwrap();
    let d = Topology::new(s.roots()).device("sdd").unwrap();
    assert_eq!((d.transport, d.removable), (Transport::Usb, Some(true)));
    assert_eq!((d.ident.vendor.as_deref(), d.ident.model.as_deref()), (Some("SanDisk"), Some("Ultra Fit")));
}

#[test]
fn dm_crypt_over_a_partition() {
    let (_t, s) = tree();
    let sda = sata(&s);
    let sda2 = s.partition(&sda, "sda2", (8, 2), 2, 1_052_672, 400_000_000).unwrap();
    let dm = s.disk("virtual/block", "dm-0", (253, 0), 399_996_928).unwrap();
    s.attr(&dm, "dm/name", "luks-3f2a").unwrap();
    s.attr(&dm, "dm/uuid", "CRYPT-LUKS2-3f2a-luks-3f2a").unwrap();
    s.stack(&dm, &sda2).unwrap();
    let topo = Topology::new(s.roots());
    let d = topo.device("dm-0").unwrap();
    assert_eq!(
        (d.transport, d.dm_name.as_deref(), d.is_virtual, d.request_based),
        (Transport::Dm, Some("luks-3f2a"), true, false)
    );
    assert_eq!(d.slaves, ["sda2"]);
    assert_eq!(topo.device("sda2").unwrap().holders, ["dm-0"]);
    assert_eq!(topo.members("dm-0"), ["sda2"]);
    assert_eq!(topo.leaf_disks("dm-0"), ["sda"]);
    assert_eq!(topo.stack("dm-0"), ["dm-0", "sda2", "sda"]);
}

#[test]
fn md_raid1_over_two_partitions() {
    let (_t, s) = tree();
    let mut parts = Vec::new();
    for (i, n) in ["sdb", "sdc"].iter().enumerate() {
        let hw = format!("pci0000:00/0000:00:1f.2/ata{}/host{}/target{}:0:0/{}:0:0:0", i + 2, i + 1, i + 1, i + 1);
        let minor = 16 * (u32::try_from(i).unwrap() + 1);
        let disk = s.disk(&format!("{hw}/block"), n, (8, minor), 1_000_000).unwrap();
        parts.push(s.partition(&disk, &format!("{n}1"), (8, minor + 1), 1, 2048, 997_952).unwrap());
    }
    let md = s.disk("virtual/block", "md0", (9, 0), 997_696).unwrap();
    s.attr(&md, "md/level", "raid1").unwrap();
    for p in &parts {
        s.stack(&md, p).unwrap();
    }
    let topo = Topology::new(s.roots());
    let d = topo.device("md0").unwrap();
    assert_eq!((d.transport, d.md_level.as_deref()), (Transport::Md, Some("raid1")));
    assert_eq!(d.slaves, ["sdb1", "sdc1"]);
    assert_eq!(topo.leaf_disks("md0"), ["sdb", "sdc"]);
    assert_eq!(topo.device("sdc1").unwrap().holders, ["md0"]);
}

#[test]
fn loop_over_a_file() {
    let (_t, s) = tree();
    let lo = s.disk("virtual/block", "loop0", (7, 0), 32768).unwrap();
    s.attr(&lo, "loop/backing_file", "/var/tmp/img with space").unwrap();
    s.queue(&lo, 512, 512, false, "none").unwrap();
    let d = Topology::new(s.roots()).by_number(7, 0).unwrap();
    assert_eq!((d.name.as_str(), d.transport), ("loop0", Transport::Loop));
    assert_eq!(d.loop_backing_file.as_deref(), Some(Path::new("/var/tmp/img with space")));
    assert_eq!(d.size_bytes(), Some(16 << 20));
}

#[test]
fn unknown_names_and_numbers_are_none() {
    let (_t, s) = tree();
    let topo = Topology::new(s.roots());
    assert!(topo.device("sdz").is_none());
    assert!(topo.device("../block").is_none());
    assert!(topo.by_number(8, 99).is_none());
    assert!(topo.by_number(0, 5).is_none());
    assert!(topo.members("sdz").is_empty());
}

struct Attached(String);
impl Drop for Attached {
    fn drop(&mut self) {
        let _ = std::process::Command::new("losetup").arg("-d").arg(&self.0).status();
    }
}

#[test]
fn real_loop_device_shows_its_backing_file() {
    let required = std::env::var("DISKMETER_REQUIRE_LOOP").is_ok_and(|v| v == "1");
    let skip = |why: String| {
        assert!(!required, "DISKMETER_REQUIRE_LOOP=1 but {why}");
        eprintln!("note: {why}; real loop-device test skipped");
    };
    if !rustix::process::geteuid().is_root() {
        return skip("not root".into());
    }
    let dir = tempfile::tempdir().unwrap();
    let img = dir.path().join("backing.img");
    std::fs::File::create(&img).unwrap().set_len(8 << 20).unwrap();
    let out = match std::process::Command::new("losetup").args(["-f", "--show"]).arg(&img).output() {
        Ok(o) if o.status.success() => o,
        Ok(o) => return skip(format!("losetup failed: {}", String::from_utf8_lossy(&o.stderr).trim())),
        Err(e) => return skip(format!("cannot run losetup: {e}")),
    };
    let node = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let lo = Attached(node);
    let topo = Topology::default();
    let d = topo.for_path(Path::new(&lo.0)).unwrap();
    assert_eq!(Some(d.name.as_str()), Path::new(&lo.0).file_name().and_then(|n| n.to_str()));
    assert_eq!(d.transport, Transport::Loop);
    assert_eq!(d.loop_backing_file.as_deref(), Some(img.canonicalize().unwrap().as_path()));
    assert_eq!(d.size_bytes(), Some(8 << 20));
    assert_eq!(d.queue.logical_block_size, Some(512));
    drop(lo);
}

#[test]
fn partitions_of_a_disk() {
    let (_t, s) = tree();
    let sda = sata(&s);
    s.partition(&sda, "sda2", (8, 2), 2, 1_052_672, 4096).unwrap();
    let parts: Vec<(String, u32)> =
        Topology::new(s.roots()).partitions("sda").into_iter().map(|p| (p.name, p.minor)).collect();
    assert_eq!(parts, [("sda1".to_string(), 1), ("sda2".to_string(), 2)]);
}
