//! Facts about a benchmark target (a regular file or a block device) and the host.
//!
//! Everything here is read-only: `probe` never creates, opens for writing or
//! modifies the target. Facts that cannot be established are `None`, never guessed.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::error::{EngineError, Invalid, Verb};
use platform::block::Topology;
use platform::target::{Native, TargetOps};

/// What kind of object a target path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetKind {
    File,
    Block,
}

/// Facts about a target path. See the field comments for where each one comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub path: PathBuf,
    pub kind: TargetKind,
    /// False when the file does not exist yet (its parent directory was probed).
    pub exists: bool,
    /// File length, or BLKGETSIZE64 for a block device (0 for a missing file).
    pub size_bytes: u64,
    /// BLKSSZGET for block devices; for files the backing device's logical block (or 512).
    pub logical_block: u32,
    /// BLKPBSZGET for block devices; for files the backing device's (or the logical block).
    pub physical_block: u32,
    /// statx STATX_DIOALIGN (Linux ≥ 6.1) when the file system / device reports it.
    pub dio_mem_align: Option<u32>,
    pub dio_offset_align: Option<u32>,
    /// Kernel name of the (backing) block device: "loop0", "vda", "nvme0n1p2", "dm-0".
    pub device: Option<String>,
    /// Whole-disk name: parent of a partition; for files on dm/md the first slave traced down.
    pub disk: Option<String>,
    /// Device model, or "loop over <backing file>" for loop devices.
    pub model: Option<String>,
    pub rotational: Option<bool>,
    /// The active I/O scheduler ("none", "mq-deadline", …).
    pub scheduler: Option<String>,
    /// File-system type for files ("ext4", "xfs", "tmpfs", …); None for block devices.
    pub filesystem: Option<String>,
    /// On-device cache size; unknown almost everywhere, so None.
    pub device_cache_bytes: Option<u64>,
    /// The target lives in RAM (tmpfs/ramfs, zram, brd, loop over a tmpfs file).
    pub backing_is_ram: bool,
    /// The whole disk's serial, WWN, firmware, link and size, where sysfs tells.
    pub identity: stats::DiskIdentity,
    /// Mount options, the device stack, the file system's size and free bytes.
    pub state: stats::TargetState,
}

/// Facts about the machine, for the result envelope.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostFacts {
    /// `uname -r`.
    pub kernel: String,
    /// CPUs this process may run on (affinity and cgroup limits respected).
    pub cpus: u32,
    /// MemTotal from /proc/meminfo, in bytes.
    pub memory_bytes: u64,
    pub cpu_model: Option<String>,
    pub hostname: Option<String>,
}

/// Probe a target path. A missing file probes its parent directory instead
/// (`exists == false`, `size_bytes == 0`) so callers learn the file system and
/// alignment before creating it.
pub fn probe(path: &Path) -> Result<Probe, EngineError> {
    // A disk or volume by the OS's device name (Windows' `\\.\PhysicalDriveN`, `\\.\D:`).
    if platform::target::is_device_path(path) {
        return probe_block(path, None);
    }
    // Too long, a trailing '/', a dangling symlink, a loop: the user's to fix, before any I/O.
    files::path::check(path, "the target").map_err(|e| Invalid::TargetPath(e.to_string()))?;
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return probe_missing(path),
        Err(e) => return Err(meta_error(path, e)),
    };
    let ft = meta.file_type();
    if ft.is_file() {
        probe_file(path, path, &meta, true)
    } else if platform::fs::is_block_device(&ft) {
        probe_block(path, Some(&meta))
    } else {
        Err(not_a_target(path, &meta))
    }
}

fn not_a_target(path: &Path, meta: &fs::Metadata) -> EngineError {
    Invalid::NotATarget { path: path.to_path_buf(), kind: files::path::kind_of(meta.file_type()) }.into()
}

fn meta_error(path: &Path, e: io::Error) -> EngineError {
    use platform::IoErrorClass::{NameTooLong, NotADirectory};
    let lookup = matches!(platform::classify(&e), NameTooLong | NotADirectory) || is_loop(&e);
    if lookup {
        return Invalid::TargetPath(files::path::lookup_error(path, "the target", &e).to_string()).into();
    }
    if e.kind() == io::ErrorKind::PermissionDenied {
        Invalid::Denied { path: path.to_path_buf(), verb: Verb::Access, error: None }.into()
    } else {
        EngineError::io(format!("cannot stat {}", path.display()), e)
    }
}

/// A symbolic-link loop (ELOOP), which std has no kind for.
fn is_loop(e: &io::Error) -> bool {
    platform::error::Errno::of(e) == Some(platform::error::Errno::ELOOP)
}

fn probe_missing(path: &Path) -> Result<Probe, EngineError> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let meta = match fs::metadata(&parent) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(Invalid::NoDirectory { path: path.to_path_buf(), dir: parent }.into())
        }
        Err(e) => return Err(meta_error(&parent, e)),
    };
    if !meta.is_dir() {
        return Err(Invalid::ParentNotDirectory { path: path.to_path_buf(), parent }.into());
    }
    probe_file(path, &parent, &meta, false)
}

/// Probe a regular file (`exists`) or, for a missing file, its parent directory `at`.
fn probe_file(path: &Path, at: &Path, meta: &fs::Metadata, exists: bool) -> Result<Probe, EngineError> {
    let canon = fs::canonicalize(at).unwrap_or_else(|_| at.to_path_buf());
    let mounts = read_mountinfo();
    let mount = longest_mount(&mounts, &canon);
    let magic = fs_magic(at);
    let filesystem = mount
        .map(|m| m.fstype.clone())
        .or_else(|| magic.and_then(magic_name).map(str::to_string))
        .or_else(|| platform::fs::fs_name(at));

    // st_dev → backing block device; for anonymous devices (btrfs, overlay, nfs)
    // fall back to the mount source when it is a /dev node.
    let mut dev = platform::fs::dev(meta).and_then(block_dev_from_dev_t);
    if dev.is_none() {
        if let Some(m) = mount {
            if m.source.starts_with("/dev/") {
                if let Ok(sm) = fs::metadata(&m.source) {
                    if platform::fs::is_block_device(&sm.file_type()) {
                        dev = platform::fs::rdev(&sm).and_then(block_dev_from_dev_t);
                    }
                }
            }
        }
    }

    let (dio_mem_align, dio_offset_align) = dio_align(at);
    let mut p = Probe {
        path: path.to_path_buf(),
        kind: TargetKind::File,
        exists,
        size_bytes: if exists { meta.len() } else { 0 },
        logical_block: 512,
        physical_block: 512,
        dio_mem_align,
        dio_offset_align,
        device: None,
        disk: None,
        model: None,
        rotational: None,
        scheduler: None,
        filesystem,
        device_cache_bytes: None,
        backing_is_ram: false,
        identity: stats::DiskIdentity::default(),
        state: stats::TargetState::default(),
    };
    p.state.mount_options = mount.map(|m| m.options.clone()).filter(|o| !o.is_empty());
    if let Some((size, free)) = platform::fs::space(at) {
        p.state.fs_size_bytes = Some(size);
        p.state.fs_free_bytes = Some(free);
    }
    let fs_is_ram =
        matches!(magic, Some(TMPFS_MAGIC | RAMFS_MAGIC)) || matches!(p.filesystem.as_deref(), Some("tmpfs" | "ramfs"));
    if let Some(bd) = dev {
        let disk = leaf_disks(&bd.name).into_iter().next();
        let queue_of = disk.clone().unwrap_or_else(|| bd.disk.clone());
        fill_disk_facts(&mut p, &bd, &queue_of);
        let queue = topology().device(&queue_of).map(|d| d.queue).unwrap_or_default();
        if let Some(lb) = queue.logical_block_size {
            p.logical_block = lb;
        }
        p.physical_block = queue.physical_block_size.unwrap_or(p.logical_block);
        p.identity.key = platform::identity::file_key(&topology(), &bd.name, &queue_of, &host_name());
        p.disk = Some(queue_of);
        p.state.stack = stack_of(&bd.name);
        p.backing_is_ram = fs_is_ram || device_is_ram(&bd.name);
    } else {
        p.backing_is_ram = fs_is_ram;
    }
    os_drive(&mut p, at);
    if p.identity.key.is_none() {
        // No block device under the file (tmpfs, a network file system, Windows): its folder,
        // made absolute.
        let folder = if meta.is_dir() { at } else { at.parent().unwrap_or(at) };
        p.identity.key = Some(platform::identity::path_key(folder, &host_name()));
    }
    settle_key(&mut p);
    Ok(p)
}

/// The machine's name, for the identities that name it.
fn host_name() -> String {
    platform::host::hostname_and_release().0
}

/// A disk that said who it is after the key was made (Windows reads serials itself) is known by
/// that, as everywhere else.
fn settle_key(p: &mut Probe) {
    let id = &p.identity;
    if let Some(k) = platform::identity::key_from_facts(id.wwn.as_deref(), id.serial.as_deref(), p.model.as_deref()) {
        p.identity.key = Some(k);
    }
}

fn probe_block(path: &Path, meta: Option<&fs::Metadata>) -> Result<Probe, EngineError> {
    // (Windows: through the OS's open, which shares the device with its other users.)
    let file = platform::target::open_to_read(path).map_err(|e| open_error(path, e))?;
    let size_bytes =
        Native::size(&file).map_err(|e| EngineError::io(format!("cannot read the size of {}", path.display()), e))?;
    let sectors = Native::sector_sizes(&file)
        .map_err(|e| EngineError::io(format!("cannot read the sector sizes of {}", path.display()), e))?;
    let (logical_block, physical_block) = (sectors.logical, sectors.physical);
    let (dio_mem_align, dio_offset_align) = dio_align(path);
    let mut p = Probe {
        path: path.to_path_buf(),
        kind: TargetKind::Block,
        exists: true,
        size_bytes,
        logical_block,
        physical_block,
        dio_mem_align,
        dio_offset_align,
        device: None,
        disk: None,
        model: None,
        rotational: None,
        scheduler: None,
        filesystem: None,
        device_cache_bytes: None,
        backing_is_ram: false,
        identity: stats::DiskIdentity::default(),
        state: stats::TargetState::default(),
    };
    if let Some(bd) = meta.and_then(platform::fs::rdev).and_then(block_dev_from_dev_t) {
        let disk = bd.disk.clone();
        fill_disk_facts(&mut p, &bd, &disk);
        p.identity.key = platform::identity::block_key(&topology(), &disk, &host_name());
        p.disk = Some(disk);
        p.state.stack = stack_of(&bd.name);
        p.backing_is_ram = device_is_ram(&bd.name);
    }
    os_drive(&mut p, path);
    settle_key(&mut p);
    Ok(p)
}

pub fn open_error(path: &Path, e: io::Error) -> EngineError {
    if e.kind() == io::ErrorKind::PermissionDenied {
        Invalid::Denied { path: path.to_path_buf(), verb: Verb::Open, error: None }.into()
    } else {
        EngineError::io(format!("cannot open {}", path.display()), e)
    }
}

fn fill_disk_facts(p: &mut Probe, bd: &BlockDev, disk: &str) {
    p.device = Some(bd.name.clone());
    let facts = topology().device(disk);
    p.model = loop_backing_file(&bd.name)
        .or_else(|| loop_backing_file(disk))
        .map(|b| format!("loop over {}", b.display()))
        .or_else(|| facts.as_ref().and_then(|d| d.ident.model.clone()));
    p.rotational = facts.as_ref().and_then(|d| d.queue.rotational);
    p.identity = disk_identity(disk, facts.as_ref());
    p.scheduler = facts.and_then(|d| d.queue.scheduler);
}

/// What the whole disk `disk` says of itself in sysfs: serial and firmware (the device's, or an
/// NVMe controller's), the WWID (`wwid`, `device/wwid`), the PCIe link of an NVMe disk
/// (`device/device/current_link_speed` and `…_width`) and its size (`size`, 512-byte sectors).
fn disk_identity(disk: &str, facts: Option<&platform::block::Device>) -> stats::DiskIdentity {
    let topo = topology();
    let attr = |rel: &str| topo.attr(disk, rel).map(|v| v.trim().to_string()).filter(|v| !v.is_empty());
    let link = match (attr("device/device/current_link_speed"), attr("device/device/current_link_width")) {
        (Some(speed), Some(width)) if !speed.starts_with("Unknown") => Some(format!("{speed} x{width}")),
        _ => None,
    };
    stats::DiskIdentity {
        // Set by the caller, which knows which device the target's identity is of.
        key: None,
        serial: facts.and_then(|d| d.ident.serial.clone()),
        wwn: attr("wwid").or_else(|| attr("device/wwid")),
        firmware: facts.and_then(|d| d.ident.firmware.clone()),
        link,
        size_bytes: attr("size").and_then(|v| v.parse::<u64>().ok()).map(|s| s * 512).filter(|b| *b > 0),
    }
}

/// The direct-I/O alignment of `path` (memory, offsets), where the OS reports it.
fn dio_align(path: &Path) -> (Option<u32>, Option<u32>) {
    Native::direct_align(path).map_or((None, None), |a| (Some(a.mem), Some(a.offset)))
}

// ---------------------------------------------------------------- block topology

/// A block device as the platform's walker sees it, reduced to what probe and safety use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BlockDev {
    /// Kernel name ("sda1").
    pub name: String,
    /// Whole disk ("sda" for "sda1"; the name itself otherwise).
    pub disk: String,
    pub is_partition: bool,
}

impl From<platform::block::Device> for BlockDev {
    fn from(d: platform::block::Device) -> Self {
        BlockDev { is_partition: d.is_partition(), name: d.name, disk: d.disk }
    }
}

pub(crate) fn topology() -> Topology {
    Topology::default()
}

/// Resolve a dev_t (st_dev of a file or st_rdev of a device node) to its block device.
pub(crate) fn block_dev_from_dev_t(dev: u64) -> Option<BlockDev> {
    let (maj, min) = platform::block::split_dev(dev);
    topology().by_number(maj, min).map(BlockDev::from)
}

/// Block device by kernel name.
pub(crate) fn block_dev_by_name(name: &str) -> Option<BlockDev> {
    topology().device(name).map(BlockDev::from)
}

/// Whole disks under a device, tracing dm/md slaves down; a partition maps to its disk.
pub(crate) fn leaf_disks(name: &str) -> Vec<String> {
    topology().leaf_disks(name)
}

/// Every name in the stack under `name` (itself, dm/md slaves, partitions' disks).
/// The stack under `name` when there is one (a partition, dm or md over other devices); empty
/// for a device alone.
fn stack_of(name: &str) -> Vec<String> {
    let s = device_stack(name);
    if s.len() > 1 {
        s
    } else {
        Vec::new()
    }
}

pub(crate) fn device_stack(name: &str) -> Vec<String> {
    topology().stack(name)
}

/// Whether the target's I/O is done by a device's own kernel thread: a loop device (whose
/// worker reads and writes its backing file), the target itself or under its file system.
pub fn runs_on_a_device_thread(p: &Probe) -> bool {
    let is_loop =
        |n: &str| n.strip_prefix("loop").is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()));
    p.device.iter().chain(&p.disk).chain(&p.state.stack).any(|n| is_loop(n))
}

/// Backing file of a loop device, if `name` is one and it is bound.
pub(crate) fn loop_backing_file(name: &str) -> Option<PathBuf> {
    if !name.starts_with("loop") {
        return None;
    }
    topology().device(name)?.loop_backing_file
}

fn device_is_ram(name: &str) -> bool {
    let is_ram_name = |n: &str| {
        n.starts_with("zram") || (n.starts_with("ram") && n[3..].chars().all(|c| c.is_ascii_digit()) && n.len() > 3)
    };
    if is_ram_name(name) {
        return true;
    }
    if let Some(bf) = loop_backing_file(name) {
        if matches!(fs_magic(&bf), Some(TMPFS_MAGIC | RAMFS_MAGIC)) {
            return true;
        }
        if let Ok(m) = fs::metadata(&bf) {
            if let Some(bd) = platform::fs::dev(&m).and_then(block_dev_from_dev_t) {
                return is_ram_name(&bd.name);
            }
        }
    }
    false
}

// ---------------------------------------------------------------- mounts & fs types

pub(crate) use platform::mounts::{longest_mount, MountEntry};

pub(crate) fn read_mountinfo() -> Vec<MountEntry> {
    platform::mounts::read(topology().roots())
}

pub(crate) const TMPFS_MAGIC: u32 = 0x0102_1994;
pub(crate) const RAMFS_MAGIC: u32 = 0x8584_58f6;

fn fs_magic(path: &Path) -> Option<u32> {
    platform::fs::fs_magic(path)
}

/// statfs magic → file-system name.
fn magic_name(magic: u32) -> Option<&'static str> {
    Some(match magic {
        0xEF53 => "ext4",
        0x5846_5342 => "xfs",
        0x9123_683E => "btrfs",
        TMPFS_MAGIC => "tmpfs",
        RAMFS_MAGIC => "ramfs",
        0x794c_7630 => "overlay",
        0x6969 => "nfs",
        0x2fc1_2fc1 => "zfs",
        0xF2F5_2010 => "f2fs",
        0x6573_5546 => "fuse",
        0x5346_544e => "ntfs",
        0x4d44 => "vfat",
        0x2011_BAB0 => "exfat",
        0xFE53_4D42 => "smb3",
        0xFF53_4D42 => "cifs",
        0x00c3_6400 => "ceph",
        0xca45_1a4e => "bcachefs",
        0x7371_7368 => "squashfs",
        0x9660 => "iso9660",
        0x9584_58f6 => "hugetlbfs",
        0x0102_1997 => "9p",
        _ => return None,
    })
}

// ---------------------------------------------------------------- host

/// Kernel, CPU and memory facts for the result envelope.
pub fn host_facts() -> HostFacts {
    // uname(2); elsewhere the OS's version stands for the kernel's ("Windows 10.0.19045").
    let (kernel, hostname) = platform::host::kernel_and_hostname();
    let hostname = (!hostname.is_empty()).then_some(hostname);
    let cpus = std::thread::available_parallelism().map(|n| u32::try_from(n.get()).unwrap_or(u32::MAX)).unwrap_or(1);
    let cpu_model = platform::host::cpu_model();
    HostFacts { kernel, cpus, memory_bytes: page_cache_relevant_ram(), cpu_model, hostname }
}

/// RAM the page cache could use to flatter a buffered test: MemTotal in bytes (0 if unknown).
pub fn page_cache_relevant_ram() -> u64 {
    platform::mem::total_bytes().unwrap_or(0)
}

// ---------------------------------------------------------------- a disk the OS names by its volume

/// Windows: the physical drive whose counters (`IOCTL_DISK_PERFORMANCE`) the device view reads,
/// as `device` and `disk` (`PhysicalDrive2`): the drive itself for `\\.\PhysicalDriveN`; for a
/// volume (`\\.\D:`) or a file (`at`: the file, or its directory when it does not exist yet),
/// the first drive the volume holding it has extents on (the others are the device view's
/// `backing`). Left `None` when that cannot be found (a folder mount point, a share, Wine): the
/// device view then says why. Nothing on an OS whose block devices are found from device
/// numbers (`platform::diskstats::drive_under`).
fn os_drive(p: &mut Probe, at: &Path) {
    if let Some(d) = platform::diskstats::drive_under(at) {
        p.device = Some(d);
        p.disk = p.device.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform::block::parse_scheduler;
    use platform::mounts::parse_mountinfo;
    use std::fs::File;
    use std::io::Write;
    use std::process::Command;

    #[test]
    fn a_loop_device_anywhere_under_the_target_runs_on_its_worker() {
        let f = std::env::temp_dir().join(format!("dm-probe-loop-{}", std::process::id()));
        let mut p = probe(&f).expect("a missing file probes its directory");
        p.device = None;
        p.disk = None;
        p.state.stack.clear();
        assert!(!runs_on_a_device_thread(&p));
        for (device, disk, stack) in [
            (Some("loop0"), None, vec![]),
            (Some("loop3p1"), Some("loop3"), vec![]),
            (Some("dm-0"), Some("dm-0"), vec!["dm-0", "loop12"]),
        ] {
            p.device = device.map(String::from);
            p.disk = disk.map(String::from);
            p.state.stack = stack.into_iter().map(String::from).collect();
            assert!(runs_on_a_device_thread(&p), "{device:?} {:?}", p.state.stack);
        }
        for name in ["vda", "nvme0n1", "loopy", "loop", "zram0"] {
            p.device = Some(name.into());
            p.disk = Some(name.into());
            p.state.stack.clear();
            assert!(!runs_on_a_device_thread(&p), "{name}");
        }
    }

    fn is_root() -> bool {
        platform::host::is_root()
    }

    #[test]
    fn temp_file_is_a_file_with_fs_and_size() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("t.bin");
        let mut f = File::create(&path).expect("create");
        f.write_all(&[7u8; 12345]).expect("write");
        drop(f);
        let p = probe(&path).expect("probe");
        assert_eq!(p.kind, TargetKind::File);
        assert!(p.exists);
        assert_eq!(p.size_bytes, 12345);
        assert!(p.filesystem.is_some(), "{p:?}");
        assert!(p.logical_block >= 512 && p.logical_block.is_power_of_two());
        assert!(p.physical_block >= p.logical_block);
        assert_eq!(p.device_cache_bytes, None);
        println!("{p:#?}");
    }

    #[test]
    fn missing_file_probes_parent() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("not-yet");
        let p = probe(&path).expect("probe");
        assert_eq!(p.kind, TargetKind::File);
        assert!(!p.exists);
        assert_eq!(p.size_bytes, 0);
        assert_eq!(p.path, path);
        assert!(p.filesystem.is_some());
        let deeper = dir.path().join("no-dir/file");
        assert!(matches!(probe(&deeper), Err(EngineError::Invalid(_))));
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn dev_shm_is_ram() {
        let shm = Path::new("/dev/shm");
        if !shm.is_dir() {
            println!("note: /dev/shm missing; skipped");
            return;
        }
        let path = shm.join(format!("diskmeter-probe-{}", std::process::id()));
        fs::write(&path, [1u8; 4096]).expect("write");
        let r = probe(&path);
        let _ = fs::remove_file(&path);
        let p = r.expect("probe");
        assert!(p.backing_is_ram, "{p:?}");
        assert_eq!(p.filesystem.as_deref(), Some("tmpfs"));
        assert_eq!(p.size_bytes, 4096);
        assert_eq!(p.device, None);
    }

    #[test]
    fn directory_is_rejected() {
        let dir = tempfile::tempdir().expect("tempdir");
        match probe(dir.path()) {
            Err(EngineError::Invalid(Invalid::NotATarget { kind, .. })) => assert_eq!(kind, "a directory"),
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn char_device_is_rejected() {
        match probe(Path::new("/dev/null")) {
            Err(EngineError::Invalid(Invalid::NotATarget { kind, .. })) => assert!(kind.contains("character device")),
            other => panic!("expected Invalid, got {other:?}"),
        }
    }

    #[test]
    fn mountinfo_parsing_and_longest_match() {
        let text = "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n\
                    30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw\n\
                    31 27 7:0 / /mnt/my\\040disk rw - xfs /dev/loop0 rw\n\
                    garbage line\n";
        let m = parse_mountinfo(text);
        assert_eq!(m.len(), 3);
        assert_eq!(m[2].mount_point, Path::new("/mnt/my disk"));
        assert_eq!((m[2].major, m[2].minor), (7, 0));
        let hit = longest_mount(&m, Path::new("/mnt/my disk/x/y")).expect("match");
        assert_eq!(hit.fstype, "xfs");
        let hit = longest_mount(&m, Path::new("/mnt/my diskette")).expect("match");
        assert_eq!(hit.fstype, "ext4");
        let hit = longest_mount(&m, Path::new("/dev/shm/f")).expect("match");
        assert_eq!(hit.fstype, "tmpfs");
    }

    #[test]
    fn small_parsers() {
        assert_eq!(parse_scheduler("mq-deadline kyber [bfq] none").as_deref(), Some("bfq"));
        assert_eq!(parse_scheduler("none").as_deref(), Some("none"));
        assert_eq!(parse_scheduler("a b"), None);
        assert_eq!(platform::mounts::unescape_octal("a\\040b\\134c\\0"), b"a b\\c\\0".to_vec());
    }

    #[test]
    fn host_facts_are_sane() {
        let h = host_facts();
        assert!(!h.kernel.is_empty());
        assert!(h.cpus >= 1);
        assert!(h.memory_bytes > 0);
        assert_eq!(h.memory_bytes, page_cache_relevant_ram());
    }

    struct LoopDev(PathBuf);
    impl Drop for LoopDev {
        fn drop(&mut self) {
            let _ = Command::new("losetup").arg("-d").arg(&self.0).status();
        }
    }
    fn attach(file: &Path) -> Option<LoopDev> {
        let out = Command::new("losetup").args(["-f", "--show"]).arg(file).output().ok()?;
        if !out.status.success() {
            println!("note: losetup failed: {}", String::from_utf8_lossy(&out.stderr));
            return None;
        }
        Some(LoopDev(PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())))
    }

    #[test]
    fn loop_device_root_only() {
        if !is_root() {
            println!("note: not root; loop-device probe test skipped");
            return;
        }
        let dir = tempfile::tempdir().expect("tempdir");
        let img = dir.path().join("img");
        File::create(&img).expect("create").set_len(16 << 20).expect("set_len");
        let Some(lo) = attach(&img) else {
            println!("note: losetup unavailable; loop-device probe test skipped");
            return;
        };
        let p = probe(&lo.0).expect("probe loop");
        assert_eq!(p.kind, TargetKind::Block);
        assert_eq!(p.size_bytes, 16 << 20);
        assert_eq!(p.logical_block, 512);
        assert!(p.physical_block >= 512);
        assert_eq!(p.filesystem, None);
        let name = lo.0.file_name().and_then(|s| s.to_str()).map(str::to_string);
        assert_eq!(p.device, name);
        assert_eq!(p.disk, name);
        let model = p.model.clone().expect("model");
        assert!(model.starts_with("loop over ") && model.ends_with("/img"), "{model}");
        assert!(!p.backing_is_ram);
        assert!(p.scheduler.is_some());
        println!("{p:#?}");
        drop(lo);

        // A loop device over a /dev/shm file is RAM.
        if Path::new("/dev/shm").is_dir() {
            let shm = Path::new("/dev/shm").join(format!("diskmeter-loop-{}", std::process::id()));
            File::create(&shm).expect("create").set_len(4 << 20).expect("set_len");
            let lo = attach(&shm);
            let r = lo.as_ref().map(|l| probe(&l.0));
            drop(lo);
            let _ = fs::remove_file(&shm);
            if let Some(r) = r {
                let p = r.expect("probe shm loop");
                assert!(p.backing_is_ram, "{p:?}");
                assert_eq!(p.device_cache_bytes, None);
            }
        }
    }
}
