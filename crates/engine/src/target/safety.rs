//! The data-safety guard (`docs/METHOD.md`, "Block devices and the safety guard").
//!
//! [`check_block_write`] must be called before any write to a block device. It
//! only reads: sysfs, /proc, the first and last MiB of the device, and an
//! `O_EXCL` open that is closed again at once. On Windows it reads what the drive holds
//! (its volumes, the system volume, its partition table: `platform::windows::volume`) and the
//! drive's first and last MiB; the rules are [`physical_drive_refusal`]'s, tested on a fake
//! topology on every OS.

use std::collections::BTreeSet;
use std::fs::{self, File};
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use crate::error::{EngineError, Invalid, Refusal, Relation, SystemPart, Unsafe};
use crate::target::probe::open_error;
use crate::target::probe::{
    block_dev_by_name, block_dev_from_dev_t, device_stack, longest_mount, read_mountinfo, topology, BlockDev,
    MountEntry,
};
use platform::error::Errno;
use platform::target::{Native, TargetOps};
use platform::winpath::DriveFacts;

pub use crate::error::Signature;

/// What the guard found on a device it allowed.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SafetyReport {
    /// Signatures present on the device (non-empty only when overridden).
    pub signatures: Vec<Signature>,
    /// True when signatures were found and writing is allowed only because the
    /// user named this exact device with `--destroy-data`.
    pub overridden: bool,
}

const HEAD_LEN: u64 = 1 << 20;

/// Decide whether `device` (a block device) may be written. `destroy_data` is the
/// value of `--destroy-data`. Mounted, swap, held, busy and system devices are
/// refused even with the flag; signatures are refused unless the flag names the
/// same device. A disk the OS names in its device namespace (Windows'
/// `\\.\PhysicalDriveN`) has its own guard ([`check_physical_drive`]); a device that is a file
/// (Unix) this one.
pub fn check_block_write(device: &Path, destroy_data: Option<&Path>) -> Result<SafetyReport, EngineError> {
    if platform::target::is_device_path(device) {
        check_physical_drive(device, destroy_data)
    } else {
        check_block_device(device, destroy_data)
    }
}

/// The guard of a block device that is a file (Linux): see [`check_block_write`].
fn check_block_device(device: &Path, destroy_data: Option<&Path>) -> Result<SafetyReport, EngineError> {
    let shown = device.display().to_string();
    let refuse = |why: Refusal| EngineError::Unsafe(Unsafe::Refused { device: device.to_path_buf(), why });

    let meta = fs::metadata(device).map_err(|e| match e.kind() {
        io::ErrorKind::NotFound => Invalid::NoSuchDevice { path: device.to_path_buf() }.into(),
        io::ErrorKind::PermissionDenied => open_error(device, e),
        _ => EngineError::io(format!("cannot stat {shown}"), e),
    })?;
    if !platform::fs::is_block_device(&meta.file_type()) {
        return Err(Invalid::NotABlockDevice { path: device.to_path_buf() }.into());
    }
    let canon = fs::canonicalize(device).map_err(|e| EngineError::io(format!("cannot resolve {shown}"), e))?;
    let rdev = platform::fs::rdev(&meta).unwrap_or(0);

    // 1. The override (`--destroy-data`) must name this very device.
    let destroy_ok = match destroy_data {
        None => false,
        Some(p) => {
            let same = match (fs::canonicalize(p), fs::metadata(p)) {
                (Ok(pc), Ok(pm)) => {
                    pc == canon
                        && platform::fs::is_block_device(&pm.file_type())
                        && platform::fs::rdev(&pm) == Some(rdev)
                }
                _ => false,
            };
            if !same {
                let resolved = (canon != device).then(|| canon.clone());
                return Err(refuse(Refusal::OtherDevice { named: p.to_path_buf(), resolved }));
            }
            true
        }
    };

    let bd = block_dev_from_dev_t(rdev);
    let name = bd.as_ref().map(|b| b.name.clone());

    // 2. Never the disk holding the root file system or this binary.
    if let Some(bd) = &bd {
        if let Some(why) = system_disk_reason(bd) {
            return Err(refuse(why));
        }
    }

    // The device and its partitions: (kernel name, dev_t).
    let mut members: Vec<(String, u64)> = vec![(name.clone().unwrap_or_default(), rdev)];
    if let Some(n) = &name {
        members.extend(partitions_of(n));
    }
    let self_name = name.clone().unwrap_or_else(|| shown.clone());
    // The device itself (None), or its partition.
    let part = |member: &str| (member != self_name && !member.is_empty()).then(|| member.to_string());

    // 3. Mounted (this namespace; other namespaces show up as EBUSY below).
    let mounts = read_mountinfo();
    for (member, dev) in &members {
        if let Some(m) = find_mount(&mounts, *dev, member, &canon) {
            return Err(refuse(Refusal::Mounted {
                part: part(member),
                at: m.mount_point.clone(),
                fstype: m.fstype.clone(),
            }));
        }
    }

    // 4. Active swap.
    for sw in platform::mounts::swaps(&platform::block::Roots::default()) {
        if let Ok(sm) = fs::metadata(&sw) {
            if platform::fs::is_block_device(&sm.file_type()) {
                if let Some((member, _)) = members.iter().find(|(_, d)| Some(*d) == platform::fs::rdev(&sm)) {
                    return Err(refuse(Refusal::Swap { part: part(member), swap: sw.clone() }));
                }
            }
        }
    }

    // 5. Holders (device-mapper/LVM, md RAID, bcache, …).
    for (member, _) in &members {
        if member.is_empty() {
            continue;
        }
        let holders = topology().device(member).map(|d| d.holders).unwrap_or_default();
        if !holders.is_empty() {
            return Err(refuse(Refusal::Held { part: part(member), holders }));
        }
    }

    // 6. The kernel's own in-use check: an exclusive open.
    let mut excl_paths: Vec<(String, PathBuf)> = vec![(self_name.clone(), device.to_path_buf())];
    for (member, _) in members.iter().skip(1) {
        let p = Path::new("/dev").join(member);
        if p.exists() {
            excl_paths.push((member.clone(), p));
        }
    }
    for (member, p) in &excl_paths {
        match platform::block::open_exclusively(p) {
            Ok(()) => {}
            Err(e) if Errno::of(&e) == Some(Errno::EBUSY) => {
                return Err(refuse(Refusal::Busy { part: part(member) }));
            }
            Err(e) => return Err(open_error(p, e)),
        }
    }

    // 7. Signatures.
    let file = platform::target::open_to_read(device).map_err(|e| open_error(device, e))?;
    let size = Native::size(&file).map_err(|e| EngineError::io(format!("cannot read the size of {shown}"), e))?;
    let (head, tail) = read_head_tail(&file, size).map_err(|e| EngineError::io(format!("cannot read {shown}"), e))?;
    drop(file);
    let mut signatures = detect_signatures(&head, &tail, size);
    for s in blkid_signatures(device) {
        let dup = signatures.iter().any(|t| t.name == s.name || (is_ext(t.name) && is_ext(s.name)));
        if !dup {
            signatures.push(s);
        }
    }
    if signatures.is_empty() {
        return Ok(SafetyReport::default());
    }
    if destroy_ok {
        return Ok(SafetyReport { signatures, overridden: true });
    }
    Err(refuse(Refusal::Signatures(signatures)))
}

/// Why a Windows physical drive with these facts may not be written, if it may not;
/// `destroy_named` says whether the override (`--destroy-data`) named this very drive. The rules of the Windows guard, apart from the OS so that a fake topology tests
/// them: never the drive that holds the system or boot volume; never a drive that holds a
/// volume with a drive letter or a mount point, or a partition table with any partition
/// in it — `--destroy-data` or not (remove them first, e.g. with diskpart); otherwise only
/// with `--destroy-data` naming the drive.
pub fn physical_drive_refusal(facts: &DriveFacts, destroy_named: bool) -> Option<Refusal> {
    if facts.holds_system {
        return Some(Refusal::SystemVolume);
    }
    if !facts.volumes.is_empty() {
        return Some(Refusal::Volumes(facts.volumes.clone()));
    }
    if facts.partitions > 0 {
        return Some(Refusal::Partitions { count: facts.partitions, disk: facts.number });
    }
    if !destroy_named {
        return Some(Refusal::WholeDisk);
    }
    None
}

/// The Windows guard: `device` must be a physical drive (`\\.\PhysicalDriveN`; a volume's
/// handle is read-only), `--destroy-data` must name that drive, and [`physical_drive_refusal`]
/// must find nothing against it. A fact that cannot be read refuses: the guard fails safe.
fn check_physical_drive(device: &Path, destroy_data: Option<&Path>) -> Result<SafetyReport, EngineError> {
    use platform::winpath;
    let shown = device.display().to_string();
    let refuse = |why: Refusal| EngineError::Unsafe(Unsafe::Refused { device: device.to_path_buf(), why });
    let Some(number) = winpath::physical_drive(&shown) else {
        return Err(refuse(Refusal::VolumeHandle));
    };
    let destroy_named = match destroy_data {
        None => false,
        Some(p) => {
            let named = p.to_string_lossy();
            if winpath::physical_drive(&named) != Some(number) {
                return Err(refuse(Refusal::OtherDrive { named: named.into_owned() }));
            }
            true
        }
    };
    let facts = platform::block::physical_drive_facts(number).map_err(|e| refuse(Refusal::DriveUnknown(e)))?;
    if let Some(why) = physical_drive_refusal(&facts, destroy_named) {
        return Err(refuse(why));
    }
    let file = platform::target::open_to_read(device).map_err(|e| open_error(device, e))?;
    let size = Native::size(&file).map_err(|e| EngineError::io(format!("cannot read the size of {shown}"), e))?;
    let (head, tail) = read_head_tail(&file, size).map_err(|e| EngineError::io(format!("cannot read {shown}"), e))?;
    let signatures = detect_signatures(&head, &tail, size);
    Ok(SafetyReport { overridden: !signatures.is_empty(), signatures })
}

fn is_ext(name: &str) -> bool {
    matches!(name, "ext2" | "ext3" | "ext4")
}

/// Partitions of a whole device: (name, dev_t).
fn partitions_of(name: &str) -> Vec<(String, u64)> {
    topology()
        .partitions(name)
        .into_iter()
        .filter(|p| p.major != 0)
        .map(|p| (p.name, platform::block::join_dev(p.major, p.minor)))
        .collect()
}

fn find_mount<'a>(mounts: &'a [MountEntry], dev: u64, member: &str, canon_device: &Path) -> Option<&'a MountEntry> {
    let (maj, min) = platform::block::split_dev(dev);
    let dev_path = Path::new("/dev").join(member);
    mounts.iter().find(|m| {
        if maj != 0 && m.major == maj && m.minor == min {
            return true;
        }
        if !m.source.starts_with('/') {
            return false;
        }
        let src = fs::canonicalize(&m.source).unwrap_or_else(|_| PathBuf::from(&m.source));
        (!member.is_empty() && src == dev_path) || (member.is_empty() && src == canon_device)
    })
}

/// Why `bd` is (part of) the disk holding `/` or the running binary, if it is.
fn system_disk_reason(bd: &BlockDev) -> Option<Refusal> {
    let mounts = read_mountinfo();
    let mut checks: Vec<(SystemPart, PathBuf)> = vec![(SystemPart::RootFs, "/".into())];
    if let Ok(exe) = std::env::current_exe() {
        checks.push((SystemPart::Binary, exe));
    }
    for (holds, path) in checks {
        let Some(sys) = device_of_path(&path, &mounts) else {
            continue;
        };
        let mut stack: BTreeSet<String> = BTreeSet::new();
        for n in device_stack(&sys.name) {
            if let Some(b) = block_dev_by_name(&n) {
                stack.insert(b.disk);
            }
            stack.insert(n);
        }
        if stack.contains(&bd.name) || stack.contains(&bd.disk) {
            let relation = if bd.name == sys.name {
                Relation::Holds
            } else if bd.is_partition && !stack.contains(&bd.name) {
                Relation::PartitionOfDisk
            } else {
                Relation::PartOfDisk
            };
            return Some(Refusal::SystemDisk { relation, holds, disk: sys.name });
        }
    }
    None
}

/// The block device a path's file system lives on.
fn device_of_path(path: &Path, mounts: &[MountEntry]) -> Option<BlockDev> {
    let m = fs::metadata(path).ok()?;
    if let Some(b) = platform::fs::dev(&m).and_then(block_dev_from_dev_t) {
        return Some(b);
    }
    let canon = fs::canonicalize(path).ok()?;
    let mount = longest_mount(mounts, &canon)?;
    if !mount.source.starts_with("/dev/") {
        return None;
    }
    let sm = fs::metadata(&mount.source).ok()?;
    if !platform::fs::is_block_device(&sm.file_type()) {
        return None;
    }
    platform::fs::rdev(&sm).and_then(block_dev_from_dev_t)
}

fn read_head_tail(file: &File, size: u64) -> io::Result<(Vec<u8>, Vec<u8>)> {
    let n = usize::try_from(size.min(HEAD_LEN)).unwrap_or(0);
    let mut head = vec![0u8; n];
    platform::fs::read_exact_at(file, &mut head, 0)?;
    let mut tail = vec![0u8; n];
    platform::fs::read_exact_at(file, &mut tail, size - n as u64)?;
    Ok((head, tail))
}

// ---------------------------------------------------------------- blkid

fn find_tool(name: &str) -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    for d in ["/usr/sbin", "/sbin", "/usr/bin", "/bin"] {
        dirs.push(PathBuf::from(d));
    }
    dirs.into_iter().map(|d| d.join(name)).find(|p| p.is_file())
}

/// `blkid -p -o export DEVICE` as a second opinion. Exit 2 means nothing found;
/// exit 8 means several conflicting signatures (itself a reason to refuse).
fn blkid_signatures(device: &Path) -> Vec<Signature> {
    let Some(blkid) = find_tool("blkid") else {
        return Vec::new();
    };
    let Ok(out) = Command::new(blkid)
        .args(["-p", "-o", "export"])
        .arg(device)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
    else {
        return Vec::new();
    };
    match out.status.code() {
        Some(0) => parse_blkid_export(&String::from_utf8_lossy(&out.stdout)),
        Some(8) => vec![Signature { name: "ambivalent (blkid: several signatures)", offset: 0 }],
        _ => Vec::new(),
    }
}

fn parse_blkid_export(text: &str) -> Vec<Signature> {
    let get =
        |key: &str| text.lines().find_map(|l| l.strip_prefix(key).and_then(|r| r.strip_prefix('='))).map(str::trim);
    let offset = |key: &str| get(key).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    let mut out = Vec::new();
    if let Some(t) = get("PTTYPE") {
        let name = match t {
            "dos" => "MBR partition table",
            // PMBR: a protective MBR whose GPT blkid could not validate.
            "gpt" | "PMBR" => "GPT partition table",
            other => intern(format!("{other} partition table")),
        };
        out.push(Signature { name, offset: offset("PTMAGIC_OFFSET") });
    }
    if let Some(t) = get("TYPE") {
        let name = match t {
            "ext2" => "ext2",
            "ext3" => "ext3",
            "ext4" | "ext4dev" | "jbd" => "ext4",
            "xfs" => "xfs",
            "btrfs" => "btrfs",
            "LVM2_member" | "LVM1_member" => "LVM2 physical volume",
            "linux_raid_member" => "md RAID member",
            "swap" => "swap",
            "crypto_LUKS" => "LUKS",
            "vfat" | "msdos" => "FAT",
            "exfat" => "exFAT",
            "ntfs" => "NTFS",
            "iso9660" => "ISO9660",
            "squashfs" => "squashfs",
            "f2fs" => "f2fs",
            "bcache" => "bcache",
            "zfs_member" => "ZFS",
            "ceph_bluestore" => "Ceph BlueStore",
            other => intern(other.to_string()),
        };
        out.push(Signature { name, offset: offset("SBMAGIC_OFFSET") });
    }
    out
}

/// A `&'static str` for a blkid type name we have no constant for. Each distinct
/// name is leaked once, so memory stays bounded by the number of blkid types.
fn intern(s: String) -> &'static str {
    static NAMES: Mutex<Vec<&'static str>> = Mutex::new(Vec::new());
    let mut names = NAMES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(n) = names.iter().find(|n| **n == s) {
        return n;
    }
    let leaked: &'static str = Box::leak(s.into_boxed_str());
    names.push(leaked);
    leaked
}

// ---------------------------------------------------------------- signature scan

/// Bytes `[off, off+len)` of a device of `size` bytes, looked up in `head`
/// (bytes from 0) or `tail` (the last `tail.len()` bytes).
fn window<'a>(head: &'a [u8], tail: &'a [u8], size: u64, off: u64, len: usize) -> Option<&'a [u8]> {
    let end = off.checked_add(len as u64)?;
    if end <= head.len() as u64 {
        let o = usize::try_from(off).ok()?;
        return head.get(o..o + len);
    }
    if end > size {
        return None;
    }
    let tail_start = size.checked_sub(tail.len() as u64)?;
    if off < tail_start {
        return None;
    }
    let o = usize::try_from(off - tail_start).ok()?;
    tail.get(o..o + len)
}

/// Find on-disk signatures in the first (`head`) and last (`tail`) MiB of a
/// device of `size` bytes. Pure: unit-testable on crafted buffers.
pub fn detect_signatures(head: &[u8], tail: &[u8], size: u64) -> Vec<Signature> {
    let size = size.max(head.len() as u64);
    let at = |off: u64, len: usize| window(head, tail, size, off, len);
    let is = |off: u64, magic: &[u8]| at(off, magic.len()) == Some(magic);
    let mut out = Vec::new();
    let mut push = |name: &'static str, offset: u64| out.push(Signature { name, offset });

    // Volume boot records (they also end in 0x55AA, so check them before the MBR).
    let boot_sig = is(510, &[0x55, 0xAA]);
    let mut vbr = false;
    if boot_sig && (is(54, b"FAT12") || is(54, b"FAT16") || is(82, b"FAT32")) {
        let off = if is(82, b"FAT32") { 82 } else { 54 };
        push("FAT", off);
        vbr = true;
    }
    if is(3, b"NTFS    ") {
        push("NTFS", 3);
        vbr = true;
    }
    if is(3, b"EXFAT   ") {
        push("exFAT", 3);
        vbr = true;
    }

    // Partition tables. GPT header at LBA 1 (512- or 4096-byte sectors), backup at the last LBA.
    let gpt = [512u64, 4096]
        .into_iter()
        .chain([size.saturating_sub(512), size.saturating_sub(4096)])
        .find(|&o| o > 0 && is(o, b"EFI PART"));
    if let Some(o) = gpt {
        push("GPT partition table", o);
    } else if boot_sig && !vbr {
        let entries: Vec<&[u8]> = (0..4u64).filter_map(|i| at(446 + 16 * i, 16)).collect();
        let sane = entries.len() == 4 && entries.iter().all(|e| e[0] == 0 || e[0] == 0x80);
        if sane && entries.iter().any(|e| e[4] != 0) {
            push("MBR partition table", 510);
        }
    }

    // File systems and volume managers.
    if is(1080, &[0x53, 0xEF]) {
        push(ext_flavour(at(1024, 0x68)), 1080);
    }
    if is(0, b"XFSB") {
        push("xfs", 0);
    }
    if is(65600, b"_BHRfS_M") {
        push("btrfs", 65600);
    }
    if let Some(o) = (0..4u64).map(|s| s * 512).find(|&o| is(o, b"LABELONE")) {
        push("LVM2 physical volume", o);
    }
    const MD_MAGIC: [u8; 4] = 0xa92b_4efc_u32.to_le_bytes();
    let md10 = size.saturating_sub(8192) & !4095;
    let md090 = (size & !65535).checked_sub(65536);
    if let Some(o) = [Some(0u64), Some(4096), (size >= 12288).then_some(md10), md090]
        .into_iter()
        .flatten()
        .find(|&o| is(o, &MD_MAGIC) || (Some(o) == md090 && is(o, &0xa92b_4efc_u32.to_be_bytes())))
    {
        push("md RAID member", o);
    }
    if let Some(o) = [4096u64, 8192, 16384, 65536]
        .into_iter()
        .map(|p| p - 10)
        .find(|&o| is(o, b"SWAPSPACE2") || is(o, b"SWAP-SPACE"))
    {
        push("swap", o);
    }
    if is(0, b"LUKS\xba\xbe") {
        push("LUKS", 0);
    } else if let Some(o) = [16384u64, 32768, 65536, 131_072, 262_144, 524_288, 1 << 20, 2 << 20, 4 << 20]
        .into_iter()
        .find(|&o| is(o, b"SKUL\xba\xbe"))
    {
        push("LUKS", o);
    }
    if is(32769, b"CD001") {
        push("ISO9660", 32769);
    }
    if is(0, b"hsqs") || is(0, b"sqsh") {
        push("squashfs", 0);
    }
    if is(1024, &0xF2F5_2010_u32.to_le_bytes()) {
        push("f2fs", 1024);
    }
    const BCACHE_MAGIC: [u8; 16] =
        [0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81];
    if is(4096 + 24, &BCACHE_MAGIC) {
        push("bcache", 4096 + 24);
    }
    if is(0, b"bluestore block device") {
        push("Ceph BlueStore", 0);
    }
    if let Some(o) = zfs_uberblock(&at, size) {
        push("ZFS", o);
    }
    out
}

/// ext2/3/4 from the superblock feature flags (superblock at byte 1024).
fn ext_flavour(sb: Option<&[u8]>) -> &'static str {
    let Some(sb) = sb else { return "ext4" };
    let word = |o: usize| u32::from_le_bytes([sb[o], sb[o + 1], sb[o + 2], sb[o + 3]]);
    let (compat, incompat, ro_compat) = (word(0x5C), word(0x60), word(0x64));
    // EXTENTS | 64BIT | FLEX_BG | MMP | INLINE_DATA …; HUGE_FILE | GDT_CSUM | DIR_NLINK | EXTRA_ISIZE | METADATA_CSUM.
    if incompat & !0x0017 != 0 || ro_compat & 0x047A != 0 {
        "ext4"
    } else if compat & 0x0004 != 0 {
        "ext3"
    } else {
        "ext2"
    }
}

/// Offset of a ZFS uberblock magic (0x00bab10c, either byte order) in any of the
/// four 256 KiB vdev labels; uberblocks start 128 KiB into a label, ≥ 1 KiB apart.
fn zfs_uberblock<'a>(at: &impl Fn(u64, usize) -> Option<&'a [u8]>, size: u64) -> Option<u64> {
    const LABEL: u64 = 256 << 10;
    let aligned = size & !(LABEL - 1);
    let labels = [Some(0), Some(LABEL), aligned.checked_sub(2 * LABEL), aligned.checked_sub(LABEL)];
    let le = 0x00ba_b10c_u64.to_le_bytes();
    let be = 0x00ba_b10c_u64.to_be_bytes();
    for base in labels.into_iter().flatten() {
        for k in 0..128u64 {
            let o = base + (128 << 10) + k * 1024;
            if let Some(b) = at(o, 8) {
                if b == le || b == be {
                    return Some(o);
                }
            }
        }
    }
    None
}

/// The Windows guard's rules on a fake topology (they run on every OS).
#[cfg(test)]
mod windows_rules {
    use super::*;

    const DRIVE: &str = r"\\.\PhysicalDrive1";

    fn disk(holds_system: bool, volumes: &[&str], partitions: u32) -> DriveFacts {
        DriveFacts { number: 1, holds_system, volumes: volumes.iter().map(|v| v.to_string()).collect(), partitions }
    }

    #[test]
    fn the_system_disk_is_refused_even_when_named() {
        let why = physical_drive_refusal(&disk(true, &["C:"], 3), true).expect("refused");
        assert!(matches!(why, Refusal::SystemVolume), "{why:?}");
    }

    #[test]
    fn a_disk_with_a_lettered_volume_or_mount_point_is_refused_even_when_named() {
        let why = physical_drive_refusal(&disk(false, &["D:"], 1), true).expect("refused");
        assert!(matches!(&why, Refusal::Volumes(v) if v == &["D:"]), "{why:?}");
        let why = physical_drive_refusal(&disk(false, &["E:", r"C:\mnt\data\"], 2), true).expect("refused");
        assert!(matches!(&why, Refusal::Volumes(v) if v == &["E:", r"C:\mnt\data\"]), "{why:?}");
    }

    #[test]
    fn a_partition_table_with_partitions_is_refused_even_when_named() {
        let why = physical_drive_refusal(&disk(false, &[], 2), true).expect("refused");
        assert!(matches!(why, Refusal::Partitions { count: 2, disk: 1 }), "{why:?}");
    }

    #[test]
    fn an_empty_disk_needs_destroy_data_naming_it() {
        let why = physical_drive_refusal(&disk(false, &[], 0), false).expect("refused without the flag");
        assert!(matches!(why, Refusal::WholeDisk), "{why:?}");
        assert!(physical_drive_refusal(&disk(false, &[], 0), true).is_none(), "named: allowed");
    }

    #[test]
    fn destroy_data_must_name_the_same_drive() {
        use platform::winpath::physical_drive;
        // The Windows guard compares drive numbers: another drive's name is a different drive,
        // and the spelling of the same drive does not matter.
        assert_ne!(physical_drive(r"\\.\PhysicalDrive2"), physical_drive(DRIVE));
        assert_eq!(physical_drive(r"\\.\physicaldrive1"), physical_drive(DRIVE));
        assert_eq!(physical_drive("D:"), None, "a volume is not a drive");
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::MetadataExt;

    const MIB: usize = 1 << 20;

    fn blank(size: u64) -> (Vec<u8>, Vec<u8>) {
        let n = (size as usize).min(MIB);
        (vec![0u8; n], vec![0u8; n])
    }

    fn names(v: &[Signature]) -> Vec<&'static str> {
        v.iter().map(|s| s.name).collect()
    }

    fn one(head: &[u8], tail: &[u8], size: u64) -> Signature {
        let v = detect_signatures(head, tail, size);
        assert_eq!(v.len(), 1, "expected exactly one signature, got {v:?}");
        v[0]
    }

    const SIZE: u64 = 64 << 20;

    #[test]
    fn blank_has_no_signature() {
        let (h, t) = blank(SIZE);
        assert!(detect_signatures(&h, &t, SIZE).is_empty());
        // Small devices and empty buffers do not panic.
        assert!(detect_signatures(&[], &[], 0).is_empty());
        assert!(detect_signatures(&[0u8; 100], &[0u8; 100], 100).is_empty());
    }

    #[test]
    fn mbr_needs_a_nonempty_entry() {
        let (mut h, t) = blank(SIZE);
        h[510] = 0x55;
        h[511] = 0xAA;
        assert!(detect_signatures(&h, &t, SIZE).is_empty(), "empty table is not a partition table");
        h[446 + 4] = 0x83;
        assert_eq!(one(&h, &t, SIZE), Signature { name: "MBR partition table", offset: 510 });
        h[446] = 0x17; // invalid boot flag: not a sane table
        assert!(detect_signatures(&h, &t, SIZE).is_empty());
    }

    #[test]
    fn gpt_at_512_and_4096_and_backup() {
        for off in [512usize, 4096] {
            let (mut h, t) = blank(SIZE);
            h[off..off + 8].copy_from_slice(b"EFI PART");
            h[510] = 0x55;
            h[511] = 0xAA;
            h[446 + 4] = 0xEE; // protective MBR is folded into the GPT finding
            assert_eq!(one(&h, &t, SIZE), Signature { name: "GPT partition table", offset: off as u64 });
        }
        let (h, mut t) = blank(SIZE);
        let n = t.len();
        t[n - 512..n - 504].copy_from_slice(b"EFI PART");
        assert_eq!(one(&h, &t, SIZE).offset, SIZE - 512);
    }

    #[test]
    fn ext_flavours() {
        let (mut h, t) = blank(SIZE);
        h[1080] = 0x53;
        h[1081] = 0xEF;
        assert_eq!(one(&h, &t, SIZE), Signature { name: "ext2", offset: 1080 });
        h[1024 + 0x5C] = 0x04; // has_journal
        assert_eq!(one(&h, &t, SIZE).name, "ext3");
        h[1024 + 0x60] = 0x40; // extents
        assert_eq!(one(&h, &t, SIZE).name, "ext4");
    }

    #[test]
    fn simple_magics() {
        let cases: &[(usize, &[u8], &str)] = &[
            (0, b"XFSB", "xfs"),
            (65600, b"_BHRfS_M", "btrfs"),
            (0, b"LABELONE", "LVM2 physical volume"),
            (512, b"LABELONE", "LVM2 physical volume"),
            (1536, b"LABELONE", "LVM2 physical volume"),
            (0, &[0xfc, 0x4e, 0x2b, 0xa9], "md RAID member"),
            (4096, &[0xfc, 0x4e, 0x2b, 0xa9], "md RAID member"),
            (4086, b"SWAPSPACE2", "swap"),
            (4086, b"SWAP-SPACE", "swap"),
            (65526, b"SWAPSPACE2", "swap"),
            (0, b"LUKS\xba\xbe", "LUKS"),
            (16384, b"SKUL\xba\xbe", "LUKS"),
            (3, b"NTFS    ", "NTFS"),
            (32769, b"CD001", "ISO9660"),
            (0, b"hsqs", "squashfs"),
            (1024, &[0x10, 0x20, 0xF5, 0xF2], "f2fs"),
            (
                4120,
                &[0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81],
                "bcache",
            ),
            (128 << 10, &[0x0c, 0xb1, 0xba, 0, 0, 0, 0, 0], "ZFS"),
            ((256 << 10) + (128 << 10) + 5 * 1024, &[0, 0, 0, 0, 0, 0xba, 0xb1, 0x0c], "ZFS"),
        ];
        for &(off, magic, name) in cases {
            let (mut h, t) = blank(SIZE);
            h[off..off + magic.len()].copy_from_slice(magic);
            assert_eq!(one(&h, &t, SIZE), Signature { name, offset: off as u64 }, "{name} at {off}");
        }
    }

    #[test]
    fn fat_needs_boot_signature_and_beats_mbr() {
        for (off, magic) in [(54usize, b"FAT16"), (54, b"FAT12"), (82, b"FAT32")] {
            let (mut h, t) = blank(SIZE);
            h[off..off + 5].copy_from_slice(magic);
            assert!(detect_signatures(&h, &t, SIZE).is_empty(), "no 0x55AA, no FAT");
            h[510] = 0x55;
            h[511] = 0xAA;
            h[446 + 4] = 0x12; // boot code that looks like an entry
            assert_eq!(one(&h, &t, SIZE), Signature { name: "FAT", offset: off as u64 });
        }
    }

    #[test]
    fn md_superblocks_at_the_end() {
        // v1.0: (size - 8 KiB) aligned down to 4 KiB.
        let size: u64 = SIZE + 3 * 512;
        let (h, mut t) = blank(size);
        let off = (size - 8192) & !4095;
        let i = (off - (size - t.len() as u64)) as usize;
        t[i..i + 4].copy_from_slice(&[0xfc, 0x4e, 0x2b, 0xa9]);
        assert_eq!(one(&h, &t, size), Signature { name: "md RAID member", offset: off });
        // v0.90: (size & !64 KiB) - 64 KiB.
        let (h, mut t) = blank(size);
        let off = (size & !65535) - 65536;
        let i = (off - (size - t.len() as u64)) as usize;
        t[i..i + 4].copy_from_slice(&[0xfc, 0x4e, 0x2b, 0xa9]);
        assert_eq!(one(&h, &t, size), Signature { name: "md RAID member", offset: off });
    }

    #[test]
    fn zfs_tail_label() {
        let size: u64 = SIZE + 12345;
        let (h, mut t) = blank(size);
        let aligned = size & !((256 << 10) - 1);
        let off = aligned - (256 << 10) + (128 << 10);
        let i = (off - (size - t.len() as u64)) as usize;
        t[i..i + 8].copy_from_slice(&0x00ba_b10c_u64.to_le_bytes());
        assert_eq!(one(&h, &t, size), Signature { name: "ZFS", offset: off });
    }

    #[test]
    fn several_signatures_and_small_device() {
        let size = 8192u64;
        let mut h = vec![0u8; 8192];
        h[0..4].copy_from_slice(b"XFSB");
        h[4086..4096].copy_from_slice(b"SWAPSPACE2");
        let v = detect_signatures(&h, &h, size);
        assert_eq!(names(&v), vec!["xfs", "swap"]);
    }

    #[test]
    fn blkid_export_parsing() {
        let v = parse_blkid_export("DEVNAME=/dev/loop3\nUUID=x\nVERSION=1.0\nTYPE=ext4\nUSAGE=filesystem\nSBMAGIC=\\x53\\xef\nSBMAGIC_OFFSET=1080\n");
        assert_eq!(v, vec![Signature { name: "ext4", offset: 1080 }]);
        let v = parse_blkid_export("PTUUID=abc\nPTTYPE=gpt\nPTMAGIC_OFFSET=512\n");
        assert_eq!(v, vec![Signature { name: "GPT partition table", offset: 512 }]);
        let v = parse_blkid_export("TYPE=weirdfs\n");
        assert_eq!(v[0].name, "weirdfs");
        let again = parse_blkid_export("TYPE=weirdfs\n");
        assert!(std::ptr::eq(v[0].name, again[0].name), "interned once");
        assert!(parse_blkid_export("DEVNAME=/dev/loop0\n").is_empty());
    }

    #[test]
    fn non_block_paths_are_invalid() {
        let dir = tempfile::tempdir().expect("tempdir");
        let f = dir.path().join("f");
        fs::write(&f, b"x").expect("write");
        assert!(matches!(check_block_write(&f, None), Err(EngineError::Invalid(_))));
        assert!(matches!(check_block_write(&dir.path().join("nope"), None), Err(EngineError::Invalid(_))));
    }

    #[test]
    fn root_disk_is_refused() {
        // The disk holding `/` is refused even with --destroy-data naming it.
        let Some(bd) = fs::metadata("/").ok().and_then(|m| block_dev_from_dev_t(m.dev())) else {
            println!("note: / is not on a block device here; skipped");
            return;
        };
        let dev = PathBuf::from("/dev").join(&bd.disk);
        if !dev.exists() {
            println!("note: {} missing; skipped", dev.display());
            return;
        }
        match check_block_write(&dev, Some(&dev)) {
            Err(EngineError::Unsafe(Unsafe::Refused { why, .. })) => {
                println!("{why}");
                assert!(
                    matches!(
                        why,
                        Refusal::SystemDisk { holds: SystemPart::RootFs, .. }
                            | Refusal::Mounted { .. }
                            | Refusal::Busy { .. }
                    ),
                    "{why:?}"
                )
            }
            Err(EngineError::Invalid(m)) => println!("note: {m}"),
            other => panic!("root disk must be refused, got {other:?}"),
        }
    }
}
