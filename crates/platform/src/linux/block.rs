//! sysfs's block tree: `class/block/NAME` and `dev/block/MAJ:MIN` lead to the device's
//! directory; a partition's directory sits inside its disk's, which holds the queue and the
//! `device/` link to the hardware.

use crate::block::model::{
    parse_scheduler, split_dev, transport_of, Device, Ident, NotListed, Partition, Queue, Roots,
};
use crate::sysfile::{read_num, read_trim};
use std::fs;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

fn read_bool(p: &Path) -> Option<bool> {
    match read_trim(p)?.as_str() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

fn parse_maj_min(s: &str) -> Option<(u32, u32)> {
    let (a, b) = s.trim().split_once(':')?;
    Some((a.parse().ok()?, b.parse().ok()?))
}

fn list_names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.sort();
    v
}

fn plain_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && name != "." && name != ".."
}

/// The device's own directory (unresolved): `class/block/NAME`, or `block/NAME` on trees
/// that only have that.
fn link_of(roots: &Roots, name: &str) -> Option<PathBuf> {
    if !plain_name(name) {
        return None;
    }
    let class = roots.sys.join("class/block").join(name);
    if class.exists() {
        return Some(class);
    }
    let block = roots.sys.join("block").join(name);
    block.exists().then_some(block)
}

pub fn exists(roots: &Roots, name: &str) -> bool {
    link_of(roots, name).is_some()
}

pub fn by_name(roots: &Roots, name: &str) -> Option<Device> {
    from_dir(&fs::canonicalize(link_of(roots, name)?).ok()?)
}

pub fn by_number(roots: &Roots, major: u32, minor: u32) -> Result<Device, NotListed> {
    let path = roots.sys.join(format!("dev/block/{major}:{minor}"));
    let fail = |path: PathBuf, kind: std::io::ErrorKind| Err(NotListed { path, error: kind.into() });
    if major == 0 {
        // Major 0 is the kernel's anonymous devices (tmpfs, overlay, btrfs subvolumes).
        return fail(path, std::io::ErrorKind::NotFound);
    }
    let dir = match fs::canonicalize(&path) {
        Ok(d) => d,
        Err(error) => return Err(NotListed { path, error }),
    };
    let Some(mut d) = from_dir(&dir) else { return fail(path, std::io::ErrorKind::InvalidData) };
    // Trees without `dev` files still answer by the numbers asked for.
    if (d.major, d.minor) == (0, 0) {
        (d.major, d.minor) = (major, minor);
        if d.partition.is_none() {
            (d.disk_major, d.disk_minor) = (major, minor);
        }
    }
    Ok(d)
}

pub fn partitions(roots: &Roots, disk: &str) -> Vec<Device> {
    let Some(dir) = link_of(roots, disk).and_then(|l| fs::canonicalize(l).ok()) else { return Vec::new() };
    list_names(&dir)
        .into_iter()
        .map(|child| dir.join(child))
        .filter(|c| c.join("partition").exists())
        .filter_map(|c| from_dir(&c))
        .collect()
}

pub fn list(roots: &Roots, name: &str, what: &str) -> Vec<String> {
    link_of(roots, name).map(|d| list_names(&d.join(what))).unwrap_or_default()
}

pub fn attr(roots: &Roots, name: &str, rel: &str) -> Option<String> {
    read_trim(&link_of(roots, name)?.join(rel))
}

pub fn disk_names(roots: &Roots) -> Result<Vec<String>, NotListed> {
    let path = roots.sys.join("block");
    let rd = match fs::read_dir(&path) {
        Ok(rd) => rd,
        Err(error) => return Err(NotListed { path, error }),
    };
    let mut v: Vec<String> = rd.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    Ok(v)
}

pub fn dev_numbers(path: &Path) -> Option<(u32, u32)> {
    let m = fs::metadata(path).ok()?;
    let dev = if m.file_type().is_block_device() { m.rdev() } else { m.dev() };
    let (major, minor) = split_dev(dev);
    (major != 0).then_some((major, minor))
}

fn file_name(p: &Path) -> Option<String> {
    p.file_name().map(|n| n.to_string_lossy().into_owned())
}

/// A device from its resolved sysfs directory.
fn from_dir(dir: &Path) -> Option<Device> {
    let name = file_name(dir)?;
    let (major, minor) = read_trim(&dir.join("dev")).as_deref().and_then(parse_maj_min).unwrap_or((0, 0));
    let is_partition = dir.join("partition").exists();
    let disk_dir = if is_partition { dir.parent()?.to_path_buf() } else { dir.to_path_buf() };
    let disk = file_name(&disk_dir)?;
    let (disk_major, disk_minor) = if is_partition {
        read_trim(&disk_dir.join("dev")).as_deref().and_then(parse_maj_min).unwrap_or((0, 0))
    } else {
        (major, minor)
    };
    let partition = if is_partition {
        Some(Partition {
            disk: disk.clone(),
            number: read_num(&dir.join("partition")),
            start_sector: read_num(&dir.join("start")),
            sectors: read_num(&dir.join("size")),
        })
    } else {
        None
    };
    let q = disk_dir.join("queue");
    let queue = Queue {
        logical_block_size: read_num(&q.join("logical_block_size")),
        physical_block_size: read_num(&q.join("physical_block_size")),
        max_sectors_kb: read_num(&q.join("max_sectors_kb")),
        max_hw_sectors_kb: read_num(&q.join("max_hw_sectors_kb")),
        rotational: read_bool(&q.join("rotational")),
        scheduler: read_trim(&q.join("scheduler")).and_then(|s| parse_scheduler(&s)),
        write_cache: read_trim(&q.join("write_cache")),
        discard_granularity: read_num(&q.join("discard_granularity")),
    };
    let hw = disk_dir.join("device");
    // NVMe namespaces keep model, serial and firmware on the controller one level up.
    let ident_attr = |f: &str| read_trim(&hw.join(f)).or_else(|| read_trim(&hw.join("device").join(f)));
    let ident = Ident {
        model: ident_attr("model"),
        serial: ident_attr("serial"),
        firmware: ident_attr("firmware_rev").or_else(|| ident_attr("rev")),
        vendor: read_trim(&hw.join("vendor")),
    };
    let own = |f: &str| read_trim(&dir.join(f));
    Some(Device {
        transport: transport_of(&disk, &disk_dir),
        loop_backing_file: own("loop/backing_file").map(PathBuf::from),
        dm_name: own("dm/name"),
        md_level: own("md/level"),
        slaves: list_names(&dir.join("slaves")),
        holders: list_names(&dir.join("holders")),
        sectors: read_num(&dir.join("size")),
        removable: read_bool(&disk_dir.join("removable")),
        is_virtual: disk_dir.to_string_lossy().contains("/devices/virtual/"),
        request_based: disk_dir.join("mq").is_dir(),
        node_path: dir.to_path_buf(),
        name,
        major,
        minor,
        disk,
        disk_major,
        disk_minor,
        partition,
        queue,
        ident,
    })
}
