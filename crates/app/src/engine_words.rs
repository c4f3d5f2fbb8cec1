//! The engine's errors in the command line's words. The engine reports what went wrong as data
//! ([`engine::EngineError`] and its parts in `engine::measure`: which problem, with its numbers
//! and paths) and knows no command line; the sentences, with the options that fix each problem
//! (`--offset`, `--destroy-data`, …), are made here.

use engine::measure::{
    Invalid, Knobs, MemoryCause, MemoryShort, Refusal, Relation, Setup, Shrink, Signature, SystemPart, Unsafe, Writer,
};
use engine::EngineError;
use spec::units::format_size;
use std::path::Path;

/// The one line a command shows for `e`.
pub(crate) fn message(e: &EngineError) -> String {
    match e {
        EngineError::Invalid(i) => invalid(i),
        EngineError::Unsafe(u) => refused(u),
        EngineError::Setup(s) => setup(s),
        EngineError::Io { context, source } => format!("{context}: {source}"),
    }
}

/// Bad input found against the target or the machine.
fn invalid(i: &Invalid) -> String {
    match i {
        Invalid::TargetPath(m) | Invalid::Lock(m) | Invalid::Command(m) => m.clone(),
        Invalid::NotATarget { path, kind } => {
            format!("{} is {kind}; give a file path or a block device", path.display())
        }
        Invalid::Denied { path, verb, error } => {
            let why = error.as_ref().map_or_else(|| "permission denied".to_string(), |e| e.to_string());
            format!("cannot {} {}: {why}; {}", verb.name(), path.display(), denied_advice())
        }
        Invalid::BadPath { path, verb, error } => {
            format!("cannot {} {}: {error}; check the path", verb.name(), path.display())
        }
        Invalid::RunningProgram { path } => format!(
            "cannot write to {}: it is a program that is running (ETXTBSY); choose another target",
            path.display()
        ),
        Invalid::ReadOnlyFs { path } => format!(
            "cannot write to {}: it is on a read-only file system; test with a read-only workload \
             (--rw read/randread) or choose a writable target",
            path.display()
        ),
        Invalid::NotWritable { path, error } => format!("cannot open {} for writing: {error}", path.display()),
        Invalid::CannotCreate { path, error } => {
            format!("cannot create {}: {error}; choose a writable directory", path.display())
        }
        Invalid::DirectoryGone { path } => format!("cannot create {}: its directory does not exist", path.display()),
        Invalid::NoDirectory { path, dir } => format!(
            "{} does not exist and neither does its directory {}; create the directory first",
            path.display(),
            dir.display()
        ),
        Invalid::ParentNotDirectory { path, parent } => {
            format!("{} cannot be created: {} is not a directory", path.display(), parent.display())
        }
        Invalid::NoDirectIo { path, error, filesystem } => format!(
            "{} does not support direct I/O ({}{}); test on another file system or add --buffered \
             (which measures the page cache, not the disk)",
            path.display(),
            error,
            filesystem.as_ref().map(|f| format!(", file system {f}")).unwrap_or_default()
        ),
        Invalid::KeepsChanging { path } => format!(
            "{} keeps changing while diskmeter opens it (other runs create and remove it); try again",
            path.display()
        ),
        Invalid::NoSuchDevice { path } => format!("{} does not exist", path.display()),
        Invalid::NotABlockDevice { path } => format!("{} is not a block device", path.display()),
        Invalid::ForeignFile { path } => format!(
            "{} exists and was not created by diskmeter, and this test writes to it; add --overwrite \
             to allow destroying its contents, or choose another --target",
            path.display()
        ),
        Invalid::FileTooSmall { path, size, needed } => format!(
            "{} holds {size} bytes but the test region needs {needed}; lower --size, or add --overwrite to let \
             diskmeter extend and fill it",
            path.display()
        ),
        Invalid::BlockSizeUnaligned { bs, path, block } => format!(
            "--bs {bs} is not a multiple of {}'s logical block size ({block} bytes), which direct I/O requires; \
             use a multiple such as {}",
            path.display(),
            (*block).max(4096)
        ),
        Invalid::RegionPastEnd { end, path, size } => format!(
            "the test region ends at {end} bytes but {} holds only {size} bytes; lower --size/--offset",
            path.display()
        ),
        Invalid::OffsetUnaligned { offset, block } => format!(
            "--offset {offset} is not a multiple of the logical block size ({block} bytes) that direct I/O requires"
        ),
        Invalid::OffsetPastEnd { offset, size } => {
            format!("--offset {offset} is at or past the end of the target ({size} bytes); lower it")
        }
        Invalid::SpreadPastEnd { increment, threads, size } => format!(
            "offset_increment={increment} puts the last of {threads} workers at or past the end of the target \
             ({size} bytes); lower it"
        ),
        Invalid::RegionBelowBlock { region, offset, bs } => format!(
            "the test region ({region} bytes from offset {offset}) is smaller than one block (--bs {bs}); raise --size"
        ),
        Invalid::SizeUnaligned { value, block } => format!(
            "block size or alignment {value} is not a multiple of the logical block size ({block} bytes) that \
             direct I/O requires; use multiples of {block} (e.g. bssplit=4k/50:64k/50) or direct=0"
        ),
        Invalid::TooManySizes { min, max, step, steps, limit } => format!(
            "bsrange {min}-{max} in steps of {step} bytes has {steps} sizes, more than {limit}; \
             narrow the range or drop bs_unaligned"
        ),
        Invalid::Memory(m) => memory(m),
        Invalid::Memlock { limit, need } => format!(
            "RLIMIT_MEMLOCK ({} KiB) is too small for the io_uring registered buffers ({} KiB = bs × qd × threads); \
             raise it (`ulimit -l {}`), lower --qd/--bs, or add --no-register-buffers",
            limit / 1024,
            need.div_ceil(1024),
            need.div_ceil(1024) + 1024
        ),
        Invalid::FillBuffer => "cannot allocate the fill buffer".to_string(),
        Invalid::MemRegion { bytes, job } => {
            format!("cannot allocate the mem engine's {} region for {job}: lower --size", human(*bytes))
        }
        Invalid::ScanMissing { path } => {
            format!("{} does not exist; surface scans an existing block device or file", path.display())
        }
        Invalid::ScanWritesFile { path, mode } => format!(
            "{} is an existing file and the {mode} mode writes to it; add --overwrite to allow that \
             (the non-destructive mode puts the data back, but a crash mid-block loses that block)",
            path.display()
        ),
        Invalid::ScanBlockUnaligned { block, path, lb } => format!(
            "invalid value for --block: {block} is not a multiple of {}'s logical block size ({lb} bytes); \
             use a multiple such as 1M",
            path.display()
        ),
        Invalid::ScanOffsetUnaligned { offset, lb } => {
            format!("invalid value for --offset: {offset} is not a multiple of the logical block size ({lb} bytes)")
        }
        Invalid::ScanOffsetPastEnd { offset, path, size } => {
            format!("invalid value for --offset: {offset} is at or past the end of {} ({size} bytes)", path.display())
        }
        Invalid::ScanSpanPastEnd { end, path, size } => format!(
            "invalid value for --size: the span ends at {end} bytes but {} holds only {size} bytes",
            path.display()
        ),
        Invalid::ScanSpanShort { span, lb } => {
            format!("invalid value for --size: the span ({span} bytes) is shorter than one logical block ({lb} bytes)")
        }
        Invalid::ScanAccessOnlyWrites => {
            "--access-only measures random reads only; it cannot be combined with --mode nondestructive/destructive"
                .to_string()
        }
        Invalid::ScanDepthWrites => {
            "--qd applies to the read mode; the writing modes work one block at a time".to_string()
        }
        Invalid::ScanNoPatterns => "--patterns needs at least one pattern, e.g. 0xaa,0x55,0xff,0x00".to_string(),
        Invalid::ScanBuffer { block } => format!("cannot allocate a {block}-byte buffer; lower --block"),
        Invalid::FaultPlan { var, error } => format!("{var}: {error}"),
    }
}

/// What to do about EACCES/EPERM: as a user, gain the rights; as root, nothing will help from
/// here, so name the likely causes instead of advising to run as root.
fn denied_advice() -> &'static str {
    if cfg!(windows) {
        "run it from an elevated prompt (Run as administrator), or pick a path you can use"
    } else if platform::host::is_root() {
        "even root is refused here, so the file system or a security module forbids it (an NFS export \
         with root_squash, a FUSE mount without allow_root, SELinux/AppArmor, or a device that cannot be \
         opened by anyone); choose another target"
    } else {
        "run as root, add yourself to the group that owns it (for disks: disk), or pick a path you can use"
    }
}

/// Bytes for a message: one decimal in the largest binary unit (`64.1 GiB`, `512.0 MiB`).
fn human(bytes: u64) -> String {
    const UNITS: [(u64, &str); 4] = [(1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")];
    for (unit, name) in UNITS {
        if bytes >= unit {
            return format!("{:.1} {name}", bytes as f64 / unit as f64);
        }
    }
    format!("{bytes} B")
}

/// How a command spells the options that size a run.
struct KnobNames {
    qd: &'static str,
    threads: &'static str,
    bs: &'static str,
    size: &'static str,
}

fn knob_names(k: Knobs) -> KnobNames {
    match k {
        Knobs::Job => KnobNames { qd: "--qd", threads: "--threads", bs: "--bs", size: "--size" },
        Knobs::Grid => KnobNames { qd: "--max-qd", threads: "--max-threads", bs: "--bs", size: "--size" },
    }
}

/// `this run needs 64.0 TiB of memory (…) but 23.0 GiB is available, of which a run may plan
/// on 20.7 GiB; lower --qd, --threads or --bs`.
fn memory(m: &MemoryShort) -> String {
    let why = match m.cause {
        MemoryCause::Region(bytes) => format!(" (a {} mem-engine region)", human(bytes)),
        MemoryCause::Buffers { workers, depth, per_io, bytes } => format!(
            " ({workers} worker{} x QD {depth} x {} buffers = {})",
            if workers == 1 { "" } else { "s" },
            format_size(per_io),
            human(bytes)
        ),
        MemoryCause::Threads { workers, buffers, rings, histograms, rest } => format!(
            " ({workers} worker threads: {} buffers, {} rings, {} latency histograms, {} threads and state)",
            human(buffers),
            human(rings),
            human(histograms),
            human(rest)
        ),
    };
    let available = if m.cgroup {
        format!("{} is available (the memory cgroup's limit)", human(m.available))
    } else {
        format!("{} is available", human(m.available))
    };
    let k = knob_names(m.knobs);
    let lower = match m.shrink {
        Shrink::Region => format!("lower {} (the mem engine's region)", k.size),
        Shrink::Buffers => format!("lower {}, {} or {}", k.qd, k.threads, k.bs),
        Shrink::Rings => format!("lower {} or {}", k.qd, k.threads),
        Shrink::Jobs => format!("lower {}, or run fewer jobs at once (stonewall in a job file)", k.threads),
        Shrink::Threads => format!("lower {} (or {} with psync)", k.threads, k.qd),
    };
    format!(
        "this run needs {} of memory{why} but {available}, of which a run may plan on {}; {lower}",
        human(m.need),
        human(m.usable)
    )
}

/// An I/O engine that could not be set up.
fn setup(s: &Setup) -> String {
    match s {
        Setup::UringPin => "io_uring could not pin the registered buffers (ENOMEM): raise RLIMIT_MEMLOCK \
                            (`ulimit -l`), lower --qd/--bs, or add --no-register-buffers"
            .to_string(),
        Setup::UringRegister(e) => {
            format!("io_uring could not register the I/O buffers ({e}); add --no-register-buffers")
        }
        Setup::UringUnavailable(error) => format!("io_uring is not available here ({error}); use --engine psync"),
        Setup::UringRingMemory { entries, depth } => format!(
            "io_uring could not allocate a ring of {entries} entries for --qd {depth} (ENOMEM): the kernel is \
             short of memory, or (before Linux 5.12) RLIMIT_MEMLOCK is too small for the ring; lower --qd, \
             or raise `ulimit -l`"
        ),
        Setup::UringRing { entries, depth, error } => {
            format!("io_uring setup of a {entries}-entry ring for --qd {depth} failed: {error}; try --engine psync")
        }
        Setup::Unavailable(kind) => kind.unavailable().unwrap_or_default().to_string(),
        Setup::CompletionPort(e) => format!("cannot set up the completion port: {e}"),
        Setup::IoBuffers => "cannot allocate I/O buffers: lower --qd or --bs".to_string(),
        Setup::MemRegionMissing => "the mem engine's region is missing".to_string(),
        Setup::ReplayBuffers { slots, len } => format!("cannot allocate {slots} × 2 buffers of {len} bytes"),
    }
}

/// Refused by the data-safety guard.
fn refused(u: &Unsafe) -> String {
    match u {
        Unsafe::Refused { device, why } => format!("refusing to write {}: {}", device.display(), refusal(device, why)),
        Unsafe::NotNamed { device, by: Writer::Workload } => format!(
            "this test writes to the block device {0}, destroying its data; if that is intended, \
             add --destroy-data {0}",
            device.display()
        ),
        Unsafe::NotNamed { device, by: Writer::Scan { mode } } => format!(
            "the {mode} mode writes to the block device {0} (a crash mid-block loses that block); \
             if that is intended, add --destroy-data {0}",
            device.display()
        ),
        Unsafe::NamesAnother { named, target } => format!(
            "--destroy-data {} does not name the target {}; name the exact device being tested",
            named.display(),
            target.display()
        ),
        Unsafe::Busy { path, error } => format!("{} is busy (in use by the system): {error}", path.display()),
    }
}

const NO_OVERRIDE: &str = "--destroy-data does not override this";

/// Why the guard refuses to write `device`: what follows "refusing to write {device}: ".
fn refusal(device: &Path, why: &Refusal) -> String {
    let shown = device.display();
    let label = |part: &Option<String>| match part {
        None => "it".to_string(),
        Some(p) => format!("its partition {p}"),
    };
    match why {
        Refusal::OtherDevice { named, resolved } => format!(
            "--destroy-data names {}, which is not the target device {shown}{}; \
             the two paths differ. Give --destroy-data the exact device being tested",
            named.display(),
            resolved.as_ref().map(|r| format!(" ({})", r.display())).unwrap_or_default()
        ),
        Refusal::OtherDrive { named } => format!(
            "--destroy-data names {named}, which is not the target drive {shown}; give --destroy-data \
             the exact drive being tested"
        ),
        Refusal::SystemDisk { relation, holds, disk } => {
            let relation = match relation {
                Relation::Holds => "it holds",
                Relation::PartitionOfDisk => "it is a partition of the disk that holds",
                Relation::PartOfDisk => "it is (part of) the disk that holds",
            };
            let holds = match holds {
                SystemPart::RootFs => "the root file system",
                SystemPart::Binary => "the running diskmeter binary",
            };
            format!("{relation} {holds} ({disk}); diskmeter never writes there, --destroy-data or not")
        }
        Refusal::Mounted { part, at, fstype } => {
            format!("{} is mounted at {} ({fstype}); unmount it first ({NO_OVERRIDE})", label(part), at.display())
        }
        Refusal::Swap { part, swap } => {
            format!("{} is in use as swap; run swapoff {} first ({NO_OVERRIDE})", label(part), swap.display())
        }
        Refusal::Held { part, holders } => format!(
            "{} is held by {} (device-mapper/LVM, md RAID or bcache); release it first, \
             e.g. with dmsetup remove, vgchange -an, mdadm --stop ({NO_OVERRIDE})",
            label(part),
            holders.join(", ")
        ),
        Refusal::Busy { part } => format!(
            "{} is busy (an exclusive open failed with EBUSY): a mounted file system, RAID, \
             LVM or another program has it open; stop that first ({NO_OVERRIDE})",
            label(part)
        ),
        Refusal::Signatures(found) => format!(
            "it carries {}; if you really want to destroy its data, add --destroy-data {shown}",
            found.iter().map(signature).collect::<Vec<_>>().join(", ")
        ),
        Refusal::InUse(e) => format!("it is busy (mounted or held by the system): {e}"),
        Refusal::VolumeHandle => "a volume's handle (\\\\.\\X:) is read-only to diskmeter; test a file on the volume \
                                  (--target X:) or the whole disk as \\\\.\\PhysicalDriveN"
            .to_string(),
        Refusal::DriveUnknown(e) => format!("cannot tell what it holds ({e}), so diskmeter will not write it"),
        Refusal::SystemVolume => "it holds the system or boot volume of this Windows installation; diskmeter never \
                                  writes there, --destroy-data or not"
            .to_string(),
        Refusal::Volumes(v) => format!(
            "it holds {} {}; remove {} first (Disk Management or diskpart) ({NO_OVERRIDE})",
            if v.len() == 1 { "the volume" } else { "the volumes" },
            v.join(", "),
            if v.len() == 1 { "it" } else { "them" },
        ),
        Refusal::Partitions { count, disk } => format!(
            "its partition table holds {count} partition{}; clear the disk first (diskpart: select disk {disk}, \
             clean) ({NO_OVERRIDE})",
            if *count == 1 { "" } else { "s" },
        ),
        Refusal::WholeDisk => {
            format!("writing a whole disk destroys its data; if you really mean to, add --destroy-data {shown}")
        }
    }
}

/// "an ext4 file system signature (at byte 1080)".
fn signature(s: &Signature) -> String {
    const FILE_SYSTEMS: &[&str] = &[
        "ext2", "ext3", "ext4", "xfs", "btrfs", "FAT", "exFAT", "NTFS", "ISO9660", "squashfs", "f2fs", "ZFS", "jfs",
        "reiserfs", "bcachefs", "udf", "hfsplus", "apfs",
    ];
    let what = if s.name.ends_with("partition table") {
        s.name.to_string()
    } else if FILE_SYSTEMS.contains(&s.name) {
        format!("{} file system signature", s.name)
    } else {
        format!("{} signature", s.name)
    };
    // Initialisms and names read with a vowel sound take "an".
    const VOWEL_SOUND: &[&str] = &[
        "ext2",
        "ext3",
        "ext4",
        "exFAT",
        "xfs",
        "f2fs",
        "MBR",
        "LVM2",
        "NTFS",
        "ISO9660",
        "md",
        "ambivalent",
        "apfs",
        "udf",
    ];
    let first = s.name.split_whitespace().next().unwrap_or("");
    let article = if VOWEL_SOUND.contains(&first) { "an" } else { "a" };
    format!("{article} {what} (at byte {})", s.offset)
}

#[cfg(test)]
mod tests {
    //! Every message as the engine made it before it spoke in data: each expected line is the
    //! engine's old `format!`, copied with its arguments, so a word changed here shows up.
    use super::*;
    use engine::measure::Verb;
    use spec::EngineKind;
    use std::io;
    use std::path::PathBuf;

    fn os(code: i32) -> io::Error {
        io::Error::from_raw_os_error(code)
    }

    fn said(e: impl Into<EngineError>) -> String {
        message(&e.into())
    }

    #[test]
    fn target_messages_as_before() {
        let p = PathBuf::from("/mnt/t.bin");
        let shown = p.display();
        let e = os(13);
        let advice = denied_advice();
        let cases: Vec<(EngineError, String)> = vec![
            (Invalid::TargetPath("the target x is too long".into()).into(), "the target x is too long".into()),
            (Invalid::Lock("x is in use by pid 1".into()).into(), "x is in use by pid 1".into()),
            (
                Invalid::NotATarget { path: p.clone(), kind: "a directory" }.into(),
                format!("{} is {}; give a file path or a block device", p.display(), "a directory"),
            ),
            (
                Invalid::Denied { path: p.clone(), verb: Verb::Open, error: Some(os(13)) }.into(),
                format!("cannot open {shown}: {e}; {}", advice),
            ),
            (
                Invalid::Denied { path: p.clone(), verb: Verb::Access, error: None }.into(),
                format!("cannot access {}: permission denied; {}", p.display(), advice),
            ),
            (
                Invalid::Denied { path: p.clone(), verb: Verb::Open, error: None }.into(),
                format!("cannot open {}: permission denied; {}", p.display(), advice),
            ),
            (
                Invalid::RunningProgram { path: p.clone() }.into(),
                format!("cannot write to {shown}: it is a program that is running (ETXTBSY); choose another target"),
            ),
            (Invalid::NotWritable { path: p.clone(), error: os(30) }.into(), {
                let e = os(30);
                format!("cannot open {shown} for writing: {e}")
            }),
            (
                Invalid::ReadOnlyFs { path: p.clone() }.into(),
                format!(
                    "cannot write to {shown}: it is on a read-only file system; test with a read-only workload \
                     (--rw read/randread) or choose a writable target"
                ),
            ),
            (Invalid::BadPath { path: p.clone(), verb: Verb::Open, error: os(36) }.into(), {
                let e = os(36);
                format!("cannot open {shown}: {e}; check the path")
            }),
            (
                Invalid::CannotCreate { path: p.clone(), error: os(13) }.into(),
                format!("cannot create {shown}: {e}; choose a writable directory"),
            ),
            (Invalid::BadPath { path: p.clone(), verb: Verb::Create, error: os(20) }.into(), {
                let e = os(20);
                format!("cannot create {shown}: {e}; check the path")
            }),
            (
                Invalid::DirectoryGone { path: p.clone() }.into(),
                format!("cannot create {shown}: its directory does not exist"),
            ),
            (
                Invalid::NoDirectIo { path: p.clone(), error: os(22), filesystem: Some("tmpfs".into()) }.into(),
                format!(
                    "{} does not support direct I/O ({}{}); test on another file system or add --buffered \
                     (which measures the page cache, not the disk)",
                    p.display(),
                    os(22),
                    Some("tmpfs").map(|f| format!(", file system {f}")).unwrap_or_default()
                ),
            ),
            (
                Invalid::NoDirectIo { path: p.clone(), error: os(22), filesystem: None }.into(),
                format!(
                    "{} does not support direct I/O ({}{}); test on another file system or add --buffered \
                     (which measures the page cache, not the disk)",
                    p.display(),
                    os(22),
                    ""
                ),
            ),
            (
                Invalid::KeepsChanging { path: p.clone() }.into(),
                format!(
                    "{} keeps changing while diskmeter opens it (other runs create and remove it); try again",
                    p.display()
                ),
            ),
            (Invalid::BlockSizeUnaligned { bs: 1000, path: p.clone(), block: 512 }.into(), {
                let (bs_gcd, lb) = (1000u64, 512u64);
                format!(
                    "--bs {} is not a multiple of {}'s logical block size ({lb} bytes), which direct I/O requires; \
                     use a multiple such as {}",
                    bs_gcd,
                    p.display(),
                    lb.max(4096)
                )
            }),
            (Invalid::BlockSizeUnaligned { bs: 4096, path: p.clone(), block: 8192 }.into(), {
                let (bs_gcd, lb) = (4096u64, 8192u64);
                format!(
                    "--bs {} is not a multiple of {}'s logical block size ({lb} bytes), which direct I/O requires; \
                     use a multiple such as {}",
                    bs_gcd,
                    p.display(),
                    lb.max(4096)
                )
            }),
            (
                Invalid::RegionPastEnd { end: 2048, path: p.clone(), size: 1024 }.into(),
                format!(
                    "the test region ends at {} bytes but {} holds only {} bytes; lower --size/--offset",
                    2048,
                    p.display(),
                    1024
                ),
            ),
            (
                Invalid::ForeignFile { path: p.clone() }.into(),
                format!(
                    "{} exists and was not created by diskmeter, and this test writes to it; add --overwrite \
                     to allow destroying its contents, or choose another --target",
                    p.display()
                ),
            ),
            (
                Invalid::FileTooSmall { path: p.clone(), size: 10, needed: 20 }.into(),
                format!(
                    "{} holds {} bytes but the test region needs {}; lower --size, or add --overwrite to let \
                     diskmeter extend and fill it",
                    p.display(),
                    10,
                    20
                ),
            ),
            (
                Invalid::NoDirectory { path: p.clone(), dir: PathBuf::from("/mnt") }.into(),
                format!(
                    "{} does not exist and neither does its directory {}; create the directory first",
                    p.display(),
                    "/mnt"
                ),
            ),
            (
                Invalid::ParentNotDirectory { path: p.clone(), parent: PathBuf::from("/mnt") }.into(),
                format!("{} cannot be created: {} is not a directory", p.display(), "/mnt"),
            ),
            (Invalid::NoSuchDevice { path: p.clone() }.into(), format!("{shown} does not exist")),
            (Invalid::NotABlockDevice { path: p.clone() }.into(), format!("{shown} is not a block device")),
            (Invalid::Command("--verify-state x: bad".into()).into(), "--verify-state x: bad".into()),
        ];
        for (e, old) in cases {
            assert_eq!(message(&e), old, "{e:?}");
        }
    }

    #[test]
    fn job_and_memory_messages_as_before() {
        let (lb, size) = (4096u64, 1u64 << 30);
        let cases: Vec<(EngineError, String)> = vec![
            (
                Invalid::OffsetUnaligned { offset: 100, block: lb }.into(),
                format!(
                    "--offset {} is not a multiple of the logical block size ({lb} bytes) that direct I/O requires",
                    100
                ),
            ),
            (
                Invalid::OffsetPastEnd { offset: size, size }.into(),
                format!("--offset {} is at or past the end of the target ({size} bytes); lower it", size),
            ),
            (
                Invalid::SpreadPastEnd { increment: 1 << 29, threads: 4, size }.into(),
                format!(
                    "offset_increment={} puts the last of {} workers at or past the end of the target ({size} bytes); lower it",
                    1u64 << 29,
                    4
                ),
            ),
            (
                Invalid::RegionBelowBlock { region: 100, offset: 0, bs: 4096 }.into(),
                format!(
                    "the test region ({} bytes from offset {}) is smaller than one block (--bs {}); raise --size",
                    100, 0, 4096
                ),
            ),
            (Invalid::SizeUnaligned { value: 1000, block: lb }.into(), {
                let bad = 1000;
                format!(
                    "block size or alignment {bad} is not a multiple of the logical block size ({lb} bytes) that \
                     direct I/O requires; use multiples of {lb} (e.g. bssplit=4k/50:64k/50) or direct=0"
                )
            }),
            (Invalid::TooManySizes { min: 1, max: 1 << 20, step: 1, steps: 1 << 20, limit: 65_536 }.into(), {
                let (min, max, step, steps, max_lens) = (1, 1 << 20, 1, 1 << 20, 65_536);
                format!(
                    "bsrange {min}-{max} in steps of {step} bytes has {steps} sizes, more than {max_lens}; \
                     narrow the range or drop bs_unaligned"
                )
            }),
            (Invalid::Memlock { limit: 8 << 20, need: 100 << 20 }.into(), {
                let (limit, need) = (8u64 << 20, 100u64 << 20);
                format!(
                    "RLIMIT_MEMLOCK ({} KiB) is too small for the io_uring registered buffers ({} KiB = bs × qd × threads); \
                     raise it (`ulimit -l {}`), lower --qd/--bs, or add --no-register-buffers",
                    limit / 1024,
                    need.div_ceil(1024),
                    need.div_ceil(1024) + 1024
                )
            }),
            (Invalid::FillBuffer.into(), "cannot allocate the fill buffer".into()),
            (
                Invalid::MemRegion { bytes: 3 << 30, job: "j1".into() }.into(),
                format!("cannot allocate the mem engine's {} region for {}: lower --size", human(3 << 30), "j1"),
            ),
            (Setup::IoBuffers.into(), "cannot allocate I/O buffers: lower --qd or --bs".into()),
            (Setup::ReplayBuffers { slots: 64, len: 1 << 20 }.into(), {
                let slots = 64;
                format!("cannot allocate {slots} × 2 buffers of {} bytes", 1 << 20)
            }),
        ];
        for (e, old) in cases {
            assert_eq!(message(&e), old, "{e:?}");
        }
    }

    #[test]
    fn io_uring_messages_as_before() {
        let (entries, depth) = (65_536u32, 32_768u32);
        let cases: Vec<(EngineError, String)> = vec![
            (
                Setup::UringPin.into(),
                "io_uring could not pin the registered buffers (ENOMEM): raise RLIMIT_MEMLOCK \
                 (`ulimit -l`), lower --qd/--bs, or add --no-register-buffers"
                    .to_string(),
            ),
            (Setup::UringRegister(os(22)).into(), {
                let e = os(22);
                format!("io_uring could not register the I/O buffers ({e}); add --no-register-buffers")
            }),
            (Setup::UringUnavailable(os(38)).into(), {
                let error = os(38);
                format!("io_uring is not available here ({error}); use --engine psync")
            }),
            (
                Setup::UringRingMemory { entries, depth }.into(),
                format!(
                    "io_uring could not allocate a ring of {entries} entries for --qd {depth} (ENOMEM): the kernel is \
                     short of memory, or (before Linux 5.12) RLIMIT_MEMLOCK is too small for the ring; lower --qd, \
                     or raise `ulimit -l`"
                ),
            ),
            (Setup::UringRing { entries, depth, error: os(22) }.into(), {
                let error = os(22);
                format!("io_uring setup of a {entries}-entry ring for --qd {depth} failed: {error}; try --engine psync")
            }),
            (Setup::CompletionPort(os(5)).into(), {
                let e = os(5);
                format!("cannot set up the completion port: {e}")
            }),
            (Setup::MemRegionMissing.into(), "the mem engine's region is missing".into()),
            (
                Setup::Unavailable(EngineKind::Iocp).into(),
                EngineKind::Iocp.unavailable().unwrap_or_default().to_string(),
            ),
        ];
        for (e, old) in cases {
            assert_eq!(message(&e), old, "{e:?}");
        }
        // Which of them the user fixes (exit 2) and which are faults (exit 1).
        assert!(EngineError::from(Setup::UringPin).is_usage());
        assert!(EngineError::from(Setup::UringRingMemory { entries, depth }).is_usage());
        assert!(!EngineError::from(Setup::UringRegister(os(22))).is_usage());
        assert!(!EngineError::from(Setup::UringRing { entries, depth, error: os(22) }).is_usage());
        assert_eq!(crate::Error::from(EngineError::from(Setup::CompletionPort(os(5)))).exit_code(), 1);
        assert_eq!(crate::Error::from(EngineError::from(Setup::IoBuffers)).exit_code(), 2);
    }

    #[test]
    fn scan_messages_as_before() {
        let p = PathBuf::from("/dev/sdz");
        let shown = p.display();
        let lb = 512u64;
        let cases: Vec<(EngineError, String)> = vec![
            (
                Invalid::ScanMissing { path: p.clone() }.into(),
                format!("{shown} does not exist; surface scans an existing block device or file"),
            ),
            (
                Invalid::ScanWritesFile { path: p.clone(), mode: "nondestructive" }.into(),
                format!(
                    "{shown} is an existing file and the {} mode writes to it; add --overwrite to allow that \
                     (the non-destructive mode puts the data back, but a crash mid-block loses that block)",
                    "nondestructive"
                ),
            ),
            (
                Unsafe::NotNamed { device: p.clone(), by: Writer::Scan { mode: "destructive" } }.into(),
                format!(
                    "the {} mode writes to the block device {shown} (a crash mid-block loses that block); \
                     if that is intended, add --destroy-data {shown}",
                    "destructive"
                ),
            ),
            (
                Invalid::ScanBlockUnaligned { block: 1000, path: p.clone(), lb }.into(),
                format!(
                    "invalid value for --block: {} is not a multiple of {shown}'s logical block size ({lb} bytes); \
                     use a multiple such as 1M",
                    1000
                ),
            ),
            (
                Invalid::ScanOffsetUnaligned { offset: 100, lb }.into(),
                format!(
                    "invalid value for --offset: {} is not a multiple of the logical block size ({lb} bytes)",
                    100
                ),
            ),
            (
                Invalid::ScanOffsetPastEnd { offset: 4096, path: p.clone(), size: 2048 }.into(),
                format!("invalid value for --offset: {} is at or past the end of {shown} ({} bytes)", 4096, 2048),
            ),
            (
                Invalid::ScanSpanPastEnd { end: 4096, path: p.clone(), size: 2048 }.into(),
                format!(
                    "invalid value for --size: the span ends at {} bytes but {shown} holds only {} bytes",
                    4096, 2048
                ),
            ),
            (Invalid::ScanSpanShort { span: 100, lb }.into(), {
                let raw = 100;
                format!(
                    "invalid value for --size: the span ({raw} bytes) is shorter than one logical block ({} bytes)",
                    lb
                )
            }),
            (
                Invalid::ScanAccessOnlyWrites.into(),
                "--access-only measures random reads only; it cannot be combined with --mode nondestructive/destructive"
                    .into(),
            ),
            (
                Invalid::ScanDepthWrites.into(),
                "--qd applies to the read mode; the writing modes work one block at a time".into(),
            ),
            (Invalid::ScanNoPatterns.into(), "--patterns needs at least one pattern, e.g. 0xaa,0x55,0xff,0x00".into()),
            (Invalid::ScanBuffer { block: 1 << 20 }.into(), {
                let block = 1 << 20;
                format!("cannot allocate a {block}-byte buffer; lower --block")
            }),
            (
                Invalid::FaultPlan { var: "DISKMETER_FAULTS", error: "bad rule".into() }.into(),
                format!("{}: {}", "DISKMETER_FAULTS", "bad rule"),
            ),
            (
                Unsafe::Refused { device: p.clone(), why: Refusal::InUse(os(16)) }.into(),
                format!("refusing to write {shown}: it is busy (mounted or held by the system): {}", os(16)),
            ),
        ];
        for (e, old) in cases {
            assert_eq!(message(&e), old, "{e:?}");
        }
    }

    #[test]
    fn guard_messages_as_before() {
        let dev = PathBuf::from("/dev/loop7");
        let shown = dev.display().to_string();
        let refused = |why: Refusal| said(Unsafe::Refused { device: dev.clone(), why });
        let old = |why: String| format!("refusing to write {shown}: {why}");
        let no_override = "--destroy-data does not override this";
        assert_eq!(
            refused(Refusal::OtherDevice { named: "/dev/loop8".into(), resolved: None }),
            old(format!(
                "--destroy-data names {}, which is not the target device {shown}{}; \
                 the two paths differ. Give --destroy-data the exact device being tested",
                "/dev/loop8", ""
            ))
        );
        assert_eq!(
            refused(Refusal::OtherDevice { named: "/dev/loop8".into(), resolved: Some("/dev/loop9".into()) }),
            old(format!(
                "--destroy-data names {}, which is not the target device {shown}{}; \
                 the two paths differ. Give --destroy-data the exact device being tested",
                "/dev/loop8", " (/dev/loop9)"
            ))
        );
        for (relation, rel) in [
            (Relation::Holds, "it holds"),
            (Relation::PartitionOfDisk, "it is a partition of the disk that holds"),
            (Relation::PartOfDisk, "it is (part of) the disk that holds"),
        ] {
            for (holds, what) in
                [(SystemPart::RootFs, "the root file system"), (SystemPart::Binary, "the running diskmeter binary")]
            {
                let why = format!("{rel} {what} ({})", "nvme0n1");
                assert_eq!(
                    refused(Refusal::SystemDisk { relation, holds, disk: "nvme0n1".into() }),
                    old(format!("{why}; diskmeter never writes there, --destroy-data or not"))
                );
            }
        }
        for (part, label) in [(None, "it".to_string()), (Some("loop7p1".to_string()), "its partition loop7p1".into())] {
            assert_eq!(
                refused(Refusal::Mounted { part: part.clone(), at: "/mnt/x".into(), fstype: "ext4".into() }),
                old(format!("{} is mounted at {} ({}); unmount it first ({no_override})", label, "/mnt/x", "ext4"))
            );
            assert_eq!(
                refused(Refusal::Swap { part: part.clone(), swap: "/dev/loop7p1".into() }),
                old(format!("{} is in use as swap; run swapoff {} first ({no_override})", label, "/dev/loop7p1"))
            );
            assert_eq!(
                refused(Refusal::Held { part: part.clone(), holders: vec!["dm-0".into(), "md1".into()] }),
                old(format!(
                    "{} is held by {} (device-mapper/LVM, md RAID or bcache); release it first, \
                     e.g. with dmsetup remove, vgchange -an, mdadm --stop ({no_override})",
                    label, "dm-0, md1"
                ))
            );
            assert_eq!(
                refused(Refusal::Busy { part: part.clone() }),
                old(format!(
                    "{} is busy (an exclusive open failed with EBUSY): a mounted file system, RAID, \
                     LVM or another program has it open; stop that first ({no_override})",
                    label
                ))
            );
        }
        let sigs = vec![Signature { name: "ext4", offset: 1080 }, Signature { name: "swap", offset: 4086 }];
        assert_eq!(
            refused(Refusal::Signatures(sigs)),
            old(format!(
                "it carries {}; if you really want to destroy its data, add --destroy-data {shown}",
                "an ext4 file system signature (at byte 1080), a swap signature (at byte 4086)"
            ))
        );
        assert_eq!(
            said(Unsafe::NotNamed { device: dev.clone(), by: Writer::Workload }),
            format!(
                "this test writes to the block device {0}, destroying its data; if that is intended, \
                 add --destroy-data {0}",
                dev.display()
            )
        );
        assert_eq!(
            said(Unsafe::NamesAnother { named: "/dev/loop8".into(), target: dev.clone() }),
            format!(
                "--destroy-data {} does not name the target {}; name the exact device being tested",
                "/dev/loop8",
                dev.display()
            )
        );
        assert_eq!(
            said(Unsafe::Busy { path: dev.clone(), error: os(16) }),
            format!("{shown} is busy (in use by the system): {}", os(16))
        );
    }

    #[test]
    fn windows_guard_messages_as_before() {
        let drive = PathBuf::from(r"\\.\PhysicalDrive1");
        let shown = drive.display().to_string();
        let refused = |why: Refusal| said(Unsafe::Refused { device: drive.clone(), why });
        let old = |why: String| format!("refusing to write {shown}: {why}");
        let no_override = "--destroy-data does not override this";
        assert_eq!(
            refused(Refusal::VolumeHandle),
            old("a volume's handle (\\\\.\\X:) is read-only to diskmeter; test a file on the volume \
                 (--target X:) or the whole disk as \\\\.\\PhysicalDriveN"
                .to_string())
        );
        let named = r"\\.\PhysicalDrive2";
        assert_eq!(
            refused(Refusal::OtherDrive { named: named.into() }),
            old(format!(
                "--destroy-data names {named}, which is not the target drive {shown}; give --destroy-data \
                 the exact drive being tested"
            ))
        );
        let e = os(5);
        assert_eq!(
            refused(Refusal::DriveUnknown(os(5))),
            old(format!("cannot tell what it holds ({e}), so diskmeter will not write it"))
        );
        assert_eq!(
            refused(Refusal::SystemVolume),
            old("it holds the system or boot volume of this Windows installation; diskmeter never writes there, \
                 --destroy-data or not"
                .to_string())
        );
        for volumes in [vec!["D:".to_string()], vec!["E:".to_string(), r"C:\mnt\data\".to_string()]] {
            assert_eq!(
                refused(Refusal::Volumes(volumes.clone())),
                old(format!(
                    "it holds {} {}; remove {} first (Disk Management or diskpart) ({no_override})",
                    if volumes.len() == 1 { "the volume" } else { "the volumes" },
                    volumes.join(", "),
                    if volumes.len() == 1 { "it" } else { "them" },
                ))
            );
        }
        for partitions in [1u32, 2] {
            assert_eq!(
                refused(Refusal::Partitions { count: partitions, disk: 1 }),
                old(format!(
                    "its partition table holds {} partition{}; clear the disk first (diskpart: select disk {}, clean) \
                     ({no_override})",
                    partitions,
                    if partitions == 1 { "" } else { "s" },
                    1
                ))
            );
        }
        assert_eq!(
            refused(Refusal::WholeDisk),
            old(format!("writing a whole disk destroys its data; if you really mean to, add --destroy-data {shown}"))
        );
    }

    #[test]
    fn signatures_read_well() {
        let d = |name, offset| signature(&Signature { name, offset });
        assert_eq!(d("ext4", 1080), "an ext4 file system signature (at byte 1080)");
        assert_eq!(d("GPT partition table", 512), "a GPT partition table (at byte 512)");
        assert_eq!(d("MBR partition table", 510), "an MBR partition table (at byte 510)");
        assert_eq!(d("swap", 4086), "a swap signature (at byte 4086)");
        assert_eq!(d("LVM2 physical volume", 512), "an LVM2 physical volume signature (at byte 512)");
    }

    const KIB: u64 = 1 << 10;
    const MIB: u64 = 1 << 20;
    const GIB: u64 = 1 << 30;

    fn short(cause: MemoryCause, shrink: Shrink, knobs: Knobs) -> String {
        let m = MemoryShort {
            need: 64 << 40,
            available: 23 * GIB,
            cgroup: false,
            usable: 23 * GIB - (23 * GIB / 10),
            cause,
            shrink,
            knobs,
        };
        said(Invalid::Memory(m))
    }

    #[test]
    fn the_memory_refusal_names_need_availability_and_knobs() {
        let buffers = MemoryCause::Buffers { workers: 1024, depth: 65_536, per_io: MIB, bytes: 64 << 40 };
        let m = short(buffers, Shrink::Buffers, Knobs::CLI);
        assert_eq!(
            m,
            "this run needs 64.0 TiB of memory (1024 workers x QD 65536 x 1 MiB buffers = 64.0 TiB) but 23.0 GiB is \
             available, of which a run may plan on 20.7 GiB; lower --qd, --threads or --bs"
        );
        let one = MemoryCause::Buffers { workers: 1, depth: 8, per_io: 4096, bytes: 32 * KIB };
        assert!(short(one, Shrink::Buffers, Knobs::CLI).contains("(1 worker x QD 8 x 4 KiB buffers = 32.0 KiB)"));
        let mut tight = MemoryShort {
            need: 2 * GIB,
            available: GIB,
            cgroup: true,
            usable: 896 * MIB,
            cause: MemoryCause::Region(40 * GIB),
            shrink: Shrink::Region,
            knobs: Knobs::CLI,
        };
        let m = said(Invalid::Memory(tight.clone()));
        assert!(m.contains("1.0 GiB is available (the memory cgroup's limit)"), "{m}");
        assert!(m.contains("(a 40.0 GiB mem-engine region)"), "{m}");
        assert!(m.ends_with("lower --size (the mem engine's region)"), "{m}");
        tight.cgroup = false;
        assert!(said(Invalid::Memory(tight)).contains("but 1.0 GiB is available, of which"));
        // sla names its own options; many small jobs point at the job count.
        assert!(short(buffers, Shrink::Buffers, Knobs::SLA).ends_with("lower --max-qd, --max-threads or --bs"));
        assert!(short(buffers, Shrink::Rings, Knobs::SLA).ends_with("lower --max-qd or --max-threads"));
        let threads =
            MemoryCause::Threads { workers: 1_000_000, buffers: GIB, rings: 0, histograms: 2 * GIB, rest: MIB };
        let m = short(threads, Shrink::Jobs, Knobs::CLI);
        assert!(
            m.contains(
                "(1000000 worker threads: 1.0 GiB buffers, 0 B rings, 2.0 GiB latency histograms, 1.0 MiB threads and \
                 state)"
            ),
            "{m}"
        );
        assert!(m.ends_with("lower --threads, or run fewer jobs at once (stonewall in a job file)"), "{m}");
        assert!(short(threads, Shrink::Threads, Knobs::CLI).ends_with("lower --threads (or --qd with psync)"));
        assert_eq!(m.lines().count(), 1);
        assert_eq!(human(64 * GIB + 100 * MIB), "64.1 GiB");
        assert_eq!(human(512 * KIB), "512.0 KiB");
        assert_eq!(human(12), "12 B");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn permission_advice_never_tells_root_to_become_root() {
        let a = denied_advice();
        if platform::host::is_root() {
            assert!(!a.contains("run as root") && a.contains("even root"), "{a}");
        } else {
            assert!(a.contains("run as root"), "{a}");
        }
    }

    #[test]
    fn io_faults_keep_their_context() {
        let e = EngineError::io("cannot open /x", os(5));
        assert_eq!(message(&e), format!("cannot open /x: {}", os(5)));
        assert_eq!(crate::Error::from(e).exit_code(), 1);
    }
}
