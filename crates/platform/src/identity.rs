//! One identity for a device: the key under which the history, the device state (`steady`'s
//! write cliff and purges), `health`'s wear history, `doctor` and `serve`'s device pages all
//! remember a device, so that they agree on what "the same device" is — and a new `loop0` over
//! another file is not the old `loop0`.
//!
//! The key, by the first rule that applies:
//!
//! 1. the World Wide Name: `wwn:naa.5002538e40a1b2c3`;
//! 2. the serial number, with the model: `serial:Samsung SSD 860 EVO 500GB/S3Z1NB0K123456`
//!    (both forms are the history's since its first version, so a physical disk keeps its runs);
//! 3. a virtual device, by what makes it itself rather than by its number, which the kernel hands
//!    to the next device as soon as this one goes:
//!    - a loop device by its backing file, that file's device and inode, and the device's size:
//!      `loop:/dev/shm/a.img@2049:131074/1073741824` (a new file at the same path is another
//!      device; a backing file deleted since is known by its path and size alone);
//!    - zram by its number, size and creation time (its `/dev` node's change time), since it
//!      has nothing else: `zram:HOST/zram0/536870912/1732861200`;
//!    - device-mapper and md by their UUIDs: `dm:CRYPT-LUKS2-…`, `md:3f2a…`;
//! 4. a partition: its disk's key and its start sector (`…/part@2048`);
//! 5. the last resort, a device that says nothing of itself (a virtio disk without a serial):
//!    host, kernel name and size — `host:HOST/dev:vda/34359738368`;
//! 6. a file target without a block device (tmpfs, a network file system, Windows under Wine):
//!    host and the absolute folder — never a relative path (`host:HOST/path:/mnt/nfs`).
//!
//! A key is compared whole. Nothing ever matches a device by its number or by a prefix.

use std::path::Path;

use crate::block::{Device, Topology, Transport};

/// The key of block device `name` (a disk or a partition), or `None` when the device is not
/// listed. `host` is the machine's name (the last resort names it).
pub fn block_key(topo: &Topology, name: &str, host: &str) -> Option<String> {
    let dev = topo.device(name)?;
    Some(match &dev.partition {
        Some(p) => {
            let disk = topo.device(&p.disk).map(|d| device_key(topo, &d, host));
            let disk = disk.unwrap_or_else(|| format!("host:{host}/dev:{}", p.disk));
            match p.start_sector {
                Some(start) => format!("{disk}/part@{start}"),
                None => format!("{disk}/part:{name}"),
            }
        }
        None => device_key(topo, &dev, host),
    })
}

/// The key of a file target that has no block device under it: the host and the absolute
/// folder it lives in (`path` is made absolute against the current directory when it is not).
pub fn path_key(path: &Path, host: &str) -> String {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map(|d| d.join(path)).unwrap_or_else(|_| path.to_path_buf())
    };
    // Links resolved where that gives a plain path (on Windows it would give `\\?\C:\…`).
    #[cfg(unix)]
    let abs = std::fs::canonicalize(&abs).unwrap_or(abs);
    format!("host:{host}/path:{}", abs.display())
}

/// The key of the device a file lives on: `disk` is the whole disk under it (through any
/// device-mapper or md layers), `fs_device` the partition or device its file system is on. A disk
/// that says nothing of itself (the last resort) is known by the file system's UUID instead,
/// which names this volume wherever the disk shows up.
pub fn file_key(topo: &Topology, fs_device: &str, disk: &str, host: &str) -> Option<String> {
    let disk_key = block_key(topo, disk, host)?;
    if !disk_key.starts_with("host:") {
        return Some(disk_key);
    }
    Some(volume_uuid(topo, fs_device).map(|u| format!("fs:{u}")).unwrap_or(disk_key))
}

/// The UUID of the file system on block device `name`, from `/dev/disk/by-uuid`.
pub fn volume_uuid(topo: &Topology, name: &str) -> Option<String> {
    let dir = topo.roots().dev.join("disk/by-uuid");
    std::fs::read_dir(dir).ok()?.flatten().find_map(|e| {
        let target = std::fs::read_link(e.path()).ok()?;
        (target.file_name()? == std::ffi::OsStr::new(name)).then(|| e.file_name().to_string_lossy().into_owned())
    })
}

/// The key of a whole disk from what its result says of it, by the same rules as [`block_key`]:
/// for results stored before results carried their key (the history's migration).
pub fn key_from_facts(wwn: Option<&str>, serial: Option<&str>, model: Option<&str>) -> Option<String> {
    if let Some(w) = wwn.map(str::trim).filter(|w| !w.is_empty()) {
        return Some(format!("wwn:{}", w.to_ascii_lowercase().replace(' ', "")));
    }
    serial.map(str::trim).filter(|s| !s.is_empty()).map(|s| format!("serial:{}/{s}", model.unwrap_or("").trim()))
}

fn device_key(topo: &Topology, dev: &Device, host: &str) -> String {
    let attr = |rel: &str| topo.attr(&dev.name, rel).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let wwn = attr("wwid").or_else(|| attr("device/wwid"));
    if let Some(k) = key_from_facts(wwn.as_deref(), dev.ident.serial.as_deref(), dev.ident.model.as_deref()) {
        return k;
    }
    let size = dev.size_bytes().unwrap_or(0);
    match dev.transport {
        Transport::Loop => {
            if let Some(file) = dev.loop_backing_file.as_deref() {
                // The kernel says "(deleted)" after a backing file's name once it is gone.
                let shown = file.to_string_lossy();
                let path = shown.trim_end_matches(" (deleted)");
                let inode = (path.len() == shown.len())
                    .then(|| std::fs::metadata(path).ok().and_then(|m| crate::fs::file_id(&m)))
                    .flatten()
                    .map(|(dev, ino)| format!("{dev}:{ino}"));
                return match inode {
                    Some(ino) => format!("loop:{path}@{ino}/{size}"),
                    None => format!("loop:{path}/{size}"),
                };
            }
        }
        Transport::Zram => {
            let born = node_ctime(&topo.roots().dev.join(&dev.name));
            return format!("zram:{host}/{}/{size}/{}", dev.name, born.unwrap_or(0));
        }
        Transport::Dm => {
            if let Some(uuid) = attr("dm/uuid") {
                return format!("dm:{uuid}");
            }
        }
        Transport::Md => {
            if let Some(uuid) = attr("md/uuid") {
                return format!("md:{uuid}");
            }
        }
        _ => {}
    }
    format!("host:{host}/dev:{}/{size}", dev.name)
}

/// The change time (Unix seconds) of a device node: when the kernel made it.
fn node_ctime(node: &Path) -> Option<i64> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(node).ok().map(|m| m.ctime())
    }
    #[cfg(not(unix))]
    {
        let _ = node;
        None
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::block::fixture::SysTree;

    fn tree() -> (tempfile::TempDir, SysTree) {
        let dir = tempfile::tempdir().unwrap();
        let t = SysTree::new(dir.path().join("sys")).unwrap();
        (dir, t)
    }

    #[test]
    fn a_physical_disk_keeps_the_historys_key() {
        let (_d, t) = tree();
        let sda =
            t.disk("pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block", "sda", (8, 0), 976_773_168).unwrap();
        t.attr(&sda, "device/model", "Samsung SSD 860 EVO 500GB\n").unwrap();
        t.attr(&sda, "device/serial", "S3Z1NB0K123456\n").unwrap();
        t.partition(&sda, "sda1", (8, 1), 1, 2048, 1000).unwrap();
        let topo = Topology::new(t.roots());
        assert_eq!(block_key(&topo, "sda", "h").unwrap(), "serial:Samsung SSD 860 EVO 500GB/S3Z1NB0K123456");
        assert_eq!(block_key(&topo, "sda1", "h").unwrap(), "serial:Samsung SSD 860 EVO 500GB/S3Z1NB0K123456/part@2048");
        t.attr(&sda, "device/wwid", "naa.5002538E40A1B2C3\n").unwrap();
        assert_eq!(block_key(&topo, "sda", "h").unwrap(), "wwn:naa.5002538e40a1b2c3");
        assert_eq!(key_from_facts(Some("naa.5002538E40A1B2C3"), Some("x"), None).unwrap(), "wwn:naa.5002538e40a1b2c3");
    }

    #[test]
    fn a_new_loop0_over_another_file_is_another_device() {
        let (d, t) = tree();
        let (a, b) = (d.path().join("a.img"), d.path().join("b.img"));
        std::fs::write(&a, b"a").unwrap();
        std::fs::write(&b, b"b").unwrap();
        let loop0 = t.disk("virtual/block", "loop0", (7, 0), 2_097_152).unwrap();
        t.attr(&loop0, "loop/backing_file", &format!("{}\n", a.display())).unwrap();
        let topo = Topology::new(t.roots());
        let first = block_key(&topo, "loop0", "h").unwrap();
        assert!(first.starts_with(&format!("loop:{}@", a.display())) && first.ends_with("/1073741824"), "{first}");
        // Detached, and the number reused over another file of another size.
        t.attr(&loop0, "loop/backing_file", &format!("{}\n", b.display())).unwrap();
        t.attr(&loop0, "size", "65536\n").unwrap();
        let second = block_key(&topo, "loop0", "h").unwrap();
        assert_ne!(first, second);
        // The same path, a new file (another inode): another device too.
        t.attr(&loop0, "loop/backing_file", &format!("{}\n", a.display())).unwrap();
        t.attr(&loop0, "size", "2097152\n").unwrap();
        let keep = d.path().join("kept.img");
        std::fs::rename(&a, &keep).unwrap();
        std::fs::write(&a, b"new").unwrap();
        assert_ne!(block_key(&topo, "loop0", "h").unwrap(), first);
    }

    #[test]
    fn virtual_devices_and_the_last_resort() {
        let (_d, t) = tree();
        let dm = t.disk("virtual/block", "dm-0", (253, 0), 2048).unwrap();
        t.attr(&dm, "dm/uuid", "CRYPT-LUKS2-abc-root\n").unwrap();
        t.attr(&dm, "dm/name", "root\n").unwrap();
        let vda = t.disk("pci0000:00/0000:00:04.0/virtio1/block", "vda", (254, 0), 4096).unwrap();
        let topo = Topology::new(t.roots());
        assert_eq!(block_key(&topo, "dm-0", "h").unwrap(), "dm:CRYPT-LUKS2-abc-root");
        assert_eq!(block_key(&topo, "vda", "h").unwrap(), "host:h/dev:vda/2097152");
        assert_eq!(block_key(&topo, "nosuch", "h"), None);
        // A file on a disk that says nothing of itself: its volume's UUID.
        t.partition(&vda, "vda1", (254, 1), 1, 2048, 2000).unwrap();
        let uuids = t.roots().dev.join("disk/by-uuid");
        std::fs::create_dir_all(&uuids).unwrap();
        std::os::unix::fs::symlink("../../vda1", uuids.join("0b7c-e1")).unwrap();
        assert_eq!(file_key(&topo, "vda1", "vda", "h").unwrap(), "fs:0b7c-e1");
        assert_eq!(file_key(&topo, "dm-0", "dm-0", "h").unwrap(), "dm:CRYPT-LUKS2-abc-root");
        let p = path_key(Path::new("relative/dir"), "h");
        assert!(p.starts_with("host:h/path:/") && p.ends_with("relative/dir"), "never relative: {p}");
    }
}
