//! Opening, creating and preconditioning targets.
//!
//! Rules (`docs/METHOD.md`, "The target"): a test file diskmeter creates is filled with
//! incompressible data before anything reads it and removed afterwards unless `keep`;
//! an existing file diskmeter did not create is only read unless `overwrite`; a block
//! device is only written after the safety guard passes.

use crate::io::buffers::fill_pattern;
use crate::error::{EngineError, Result};
use crate::target::probe::{self, Probe, TargetKind};
use crate::target::safety;
use crate::target::sparse;
use spec::DataPattern;
use stats::codes;
use std::fs::{File, OpenOptions};
use std::os::fd::AsRawFd;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use files::lock::Locked;
pub use files::lock::WhenBusy;

#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    pub overwrite: bool,
    pub keep: bool,
    pub destroy_data: Option<PathBuf>,
    /// Write the region of a block device before reading it (needs the guard to pass).
    pub prefill: bool,
    /// When another process (another diskmeter run) holds the target's lock: wait or refuse.
    pub when_busy: WhenBusy,
}

/// What opening a target reports while it works.
#[derive(Debug, Clone, Copy)]
pub enum TargetEvent<'a> {
    /// Filling the test area: bytes done of total.
    Fill { done: u64, total: u64 },
    /// Another process holds the target; the message says who, and that the run waits.
    Waiting(&'a str),
}

/// Receives [`TargetEvent`]s.
pub type TargetProgress<'a> = &'a mut dyn FnMut(TargetEvent<'_>);

/// What the jobs on one target need from it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Needs {
    pub reads: bool,
    pub writes: bool,
    /// Start of the lowest region any job uses (the smallest offset): a file diskmeter
    /// creates is allocated and filled from here to `region_end` only, the rest a hole.
    pub region_start: u64,
    /// End of the furthest region any job uses (offset + size).
    pub region_end: u64,
    pub direct: bool,
    /// Greatest common divisor of every block size used: all are multiples of the
    /// logical block size exactly when this is.
    pub bs_gcd: u64,
}

/// An open target. Dropping it removes a file diskmeter created (unless kept).
pub struct OpenTarget {
    pub path: PathBuf,
    pub probe: Probe,
    pub file: File,
    pub created: bool,
    pub keep: bool,
    pub direct: bool,
    pub warnings: Vec<(String, String)>,
    /// The region this run wrote with real data before measuring (0 = none).
    pub filled_to: u64,
}

impl OpenTarget {
    /// A target that existed before this run (kept at exit).
    fn existing(path: &Path, probe: Probe, file: File, direct: bool, warnings: Vec<(String, String)>) -> Self {
        Self { path: path.to_path_buf(), probe, file, created: false, keep: true, direct, warnings, filled_to: 0 }
    }
}

impl Drop for OpenTarget {
    fn drop(&mut self) {
        if self.created && !self.keep {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}

/// Guard that removes a half-created file on any early return.
struct CreatedGuard<'a> {
    path: &'a Path,
    armed: bool,
}
impl Drop for CreatedGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            let _ = std::fs::remove_file(self.path);
        }
    }
}

fn has_mark(path: &Path) -> bool {
    let Ok(c) = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()) else { return false };
    let name = c"user.diskmeter";
    let mut buf = [0u8; 16];
    // SAFETY: valid C strings and buffer.
    let r = unsafe { libc::getxattr(c.as_ptr(), name.as_ptr(), buf.as_mut_ptr().cast(), buf.len()) };
    r > 0
}

fn set_mark(file: &File) {
    let v = b"test-file";
    let name = c"user.diskmeter";
    // SAFETY: valid fd, name and value. Failure (no xattr support) only means a kept file
    // will later be treated as foreign, which is the safe side.
    unsafe { libc::fsetxattr(file.as_raw_fd(), name.as_ptr(), v.as_ptr().cast(), v.len(), 0) };
}

/// Progress of a fill: (bytes done, bytes total).
pub type FillProgress<'a> = &'a mut dyn FnMut(u64, u64);

fn open(path: &Path, write: bool, create: bool, direct: bool) -> std::io::Result<File> {
    let mut o = OpenOptions::new();
    o.read(true).write(write);
    if create {
        o.create_new(true);
    }
    let mut flags = libc::O_CLOEXEC;
    if direct {
        flags |= libc::O_DIRECT;
    }
    o.custom_flags(flags);
    if create {
        use std::os::unix::fs::OpenOptionsExt as _;
        o.mode(0o600);
    }
    o.open(path)
}

/// Takes the run's exclusive lock on an open target (see [`files::lock`]).
fn lock(
    file: &File,
    path: &Path,
    opts: &TargetOptions,
    stop: &AtomicBool,
    progress: TargetProgress<'_>,
) -> Result<Locked> {
    files::lock::lock_exclusive(file, path, opts.when_busy, stop, &mut |m| progress(TargetEvent::Waiting(m))).map_err(
        |e| match e {
            files::FileError::Usage(m) => EngineError::Invalid(m),
            files::FileError::Runtime(m) => EngineError::io(m, std::io::Error::from_raw_os_error(libc::ENOLCK)),
        },
    )
}

/// True when `path` still names the file open as `file` (another run may have removed or
/// replaced it while this one waited for the lock).
fn still_same(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Errors opening an existing target that the user can fix (exit 2) rather than runtime faults.
fn open_error(path: &Path, e: std::io::Error, direct: bool, fs: Option<&str>) -> EngineError {
    let shown = path.display();
    match e.raw_os_error() {
        Some(libc::EINVAL) if direct => direct_hint(path, fs, &e),
        Some(libc::EACCES) | Some(libc::EPERM) => {
            EngineError::Invalid(format!("cannot open {shown}: {e}; {}", probe::denied_advice()))
        }
        Some(libc::ETXTBSY) => EngineError::Invalid(format!(
            "cannot write to {shown}: it is a program that is running (ETXTBSY); choose another target"
        )),
        Some(libc::EROFS) => EngineError::Invalid(format!(
            "cannot write to {shown}: it is on a read-only file system; test with a read-only workload \
             (--rw read/randread) or choose a writable target"
        )),
        Some(libc::ENAMETOOLONG) | Some(libc::ELOOP) | Some(libc::ENOTDIR) | Some(libc::EISDIR) => {
            EngineError::Invalid(format!("cannot open {shown}: {e}; check the path"))
        }
        Some(libc::EBUSY) => EngineError::Unsafe(format!("{shown} is busy (in use by the system): {e}")),
        _ => EngineError::io(format!("cannot open {shown}"), e),
    }
}

fn direct_hint(path: &Path, fs: Option<&str>, e: &std::io::Error) -> EngineError {
    EngineError::Invalid(format!(
        "{} does not support direct I/O ({}{}); test on another file system or add --buffered \
         (which measures the page cache, not the disk)",
        path.display(),
        e,
        fs.map(|f| format!(", file system {f}")).unwrap_or_default()
    ))
}

/// Write `[from, to)` of the file with incompressible random data, 4 MiB at a time.
pub fn fill_region(
    file: &File,
    from: u64,
    to: u64,
    align: usize,
    stop: &AtomicBool,
    progress: FillProgress<'_>,
) -> Result<u64> {
    use std::os::unix::fs::FileExt;
    const CHUNK: usize = 4 << 20;
    let mut pool = crate::io::buffers::BufferPool::new(1, CHUNK, align.max(4096))
        .ok_or_else(|| EngineError::Invalid("cannot allocate the fill buffer".into()))?;
    let mut rng = crate::io::offsets::worker_rng(0x5eed_f111, 0, 0);
    let mut pos = from;
    while pos < to {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let n = ((to - pos) as usize).min(CHUNK);
        let buf = pool.slot_mut(0);
        fill_pattern(&mut buf[..n], DataPattern::Random, &mut rng);
        let mut done = 0usize;
        while done < n {
            match file.write_at(&buf[done..n], pos + done as u64) {
                Ok(0) => {
                    return Err(EngineError::io(
                        format!("filling the test area failed at offset {}", pos + done as u64),
                        std::io::Error::from_raw_os_error(libc::ENOSPC),
                    ))
                }
                Ok(w) => done += w,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    return Err(EngineError::io(
                        format!("filling the test area failed at offset {}", pos + done as u64),
                        e,
                    ))
                }
            }
        }
        pos += n as u64;
        progress(pos - from, to - from);
    }
    file.sync_data().map_err(|e| EngineError::io("flushing the filled test area", e))?;
    Ok(pos)
}

/// Open (and if needed create, size and fill) a target for the given needs.
pub fn open_target(
    path: &Path,
    needs: Needs,
    opts: &TargetOptions,
    stop: &AtomicBool,
    progress: TargetProgress<'_>,
) -> Result<OpenTarget> {
    // A run that waited for the lock re-checks the path: the run before it may have removed
    // the test file it created. A few rounds settle it.
    for _ in 0..8 {
        if let Some(t) = open_target_once(path, needs, opts, stop, progress)? {
            return Ok(t);
        }
    }
    Err(EngineError::Invalid(format!(
        "{} keeps changing while diskmeter opens it (other runs create and remove it); try again",
        path.display()
    )))
}

/// One attempt of [`open_target`]; `None` when the file changed while waiting for its lock.
fn open_target_once(
    path: &Path,
    needs: Needs,
    opts: &TargetOptions,
    stop: &AtomicBool,
    progress: TargetProgress<'_>,
) -> Result<Option<OpenTarget>> {
    let p = probe::probe(path)?;
    let mut warnings = Vec::new();
    let align = p.dio_mem_align.unwrap_or(4096).max(4096) as usize;
    let lb = if needs.direct { p.logical_block.max(p.dio_offset_align.unwrap_or(0)).max(512) as u64 } else { 1 };
    if needs.direct && needs.bs_gcd > 0 && !needs.bs_gcd.is_multiple_of(lb) {
        return Err(EngineError::Invalid(format!(
            "--bs {} is not a multiple of {}'s logical block size ({lb} bytes), which direct I/O requires; \
             use a multiple such as {}",
            needs.bs_gcd,
            path.display(),
            lb.max(4096)
        )));
    }

    match p.kind {
        TargetKind::Block => {
            let writes = needs.writes || opts.prefill;
            if writes {
                safety::check_block_write(path, opts.destroy_data.as_deref())?;
                if opts.destroy_data.is_none() {
                    return Err(EngineError::Unsafe(format!(
                        "this test writes to the block device {0}, destroying its data; if that is intended, \
                         add --destroy-data {0}",
                        path.display()
                    )));
                }
            } else if let Some(d) = &opts.destroy_data {
                if std::fs::canonicalize(d).ok() != std::fs::canonicalize(path).ok() {
                    return Err(EngineError::Unsafe(format!(
                        "--destroy-data {} does not name the target {}; name the exact device being tested",
                        d.display(),
                        path.display()
                    )));
                }
            }
            if needs.region_end > p.size_bytes {
                return Err(EngineError::Invalid(format!(
                    "the test region ends at {} bytes but {} holds only {} bytes; lower --size/--offset",
                    needs.region_end,
                    path.display(),
                    p.size_bytes
                )));
            }
            let file = open(path, writes, false, needs.direct).map_err(|e| open_error(path, e, true, None))?;
            let locked = lock(&file, path, opts, stop, progress)?;
            let mut t = OpenTarget::existing(path, p, file, needs.direct, warnings);
            if locked == Locked::Stopped {
                return Ok(Some(t));
            }
            if opts.prefill && needs.region_end > 0 {
                t.filled_to = fill_region(&t.file, needs.region_start, needs.region_end, align, stop, &mut |d, n| {
                    progress(TargetEvent::Fill { done: d, total: n })
                })?;
            } else if needs.reads {
                // Only with evidence: sampled blocks of the read region that read as zeros.
                let block = crate::target::sample::SAMPLE_BLOCK.max(lb);
                let (from, to) = (needs.region_start.min(needs.region_end), needs.region_end);
                let zeros = crate::target::sample::zero_blocks(&t.file, from, to, block, align);
                if let Some(m) = zeros.and_then(|s| crate::target::sample::unwritten_message(path, s)) {
                    t.warnings.push((codes::UNWRITTEN_READ.into(), m));
                }
            }
            Ok(Some(t))
        }
        TargetKind::File if !p.exists => {
            let size = needs.region_end;
            let start = needs.region_start.min(size);
            let file = match open(path, true, true, needs.direct) {
                Ok(f) => f,
                Err(e) if e.raw_os_error() == Some(libc::EINVAL) && needs.direct => {
                    let _ = std::fs::remove_file(path);
                    return Err(direct_hint(path, p.filesystem.as_deref(), &e));
                }
                // Another run created it between the probe and here: start over (and wait for it).
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(None),
                Err(e) => {
                    return Err(match e.raw_os_error() {
                        Some(libc::EACCES) | Some(libc::EPERM) | Some(libc::EROFS) => EngineError::Invalid(format!(
                            "cannot create {}: {e}; choose a writable directory",
                            path.display()
                        )),
                        Some(libc::ENAMETOOLONG) | Some(libc::ELOOP) | Some(libc::ENOTDIR) | Some(libc::EISDIR) => {
                            EngineError::Invalid(format!("cannot create {}: {e}; check the path", path.display()))
                        }
                        Some(libc::ENOENT) => EngineError::Invalid(format!(
                            "cannot create {}: its directory does not exist",
                            path.display()
                        )),
                        _ => EngineError::io(format!("cannot create {}", path.display()), e),
                    })
                }
            };
            let mut guard = CreatedGuard { path, armed: true };
            // Nobody else can hold it yet (just created); taking the lock now makes a run that
            // opens it next wait until this one has filled, measured and removed it.
            lock(&file, path, opts, stop, progress)?;
            set_mark(&file);
            // Reserve the measured region up front so ENOSPC shows now, not mid-measurement;
            // below `start` the file stays a hole (it also sets the file's length to `size`).
            // SAFETY: valid fd.
            let r =
                unsafe { libc::fallocate(file.as_raw_fd(), 0, start as libc::off_t, (size - start) as libc::off_t) };
            if r != 0 {
                let e = std::io::Error::last_os_error();
                if e.raw_os_error() == Some(libc::ENOSPC) {
                    return Err(EngineError::io(
                        format!("not enough free space for a {}-byte test region at {}", size - start, path.display()),
                        e,
                    ));
                }
                file.set_len(size).map_err(|e| EngineError::io("cannot size the test file", e))?;
            }
            let filled = fill_region(&file, start, size, align, stop, &mut |d, n| {
                progress(TargetEvent::Fill { done: d, total: n })
            })?;
            let p = probe::probe(path)?;
            guard.armed = false;
            let mut t = OpenTarget::existing(path, p, file, needs.direct, warnings);
            t.created = true;
            t.keep = opts.keep;
            t.filled_to = filled;
            Ok(Some(t))
        }
        TargetKind::File => {
            let ours = has_mark(path);
            let may_write = ours || opts.overwrite;
            if needs.writes && !may_write {
                return Err(EngineError::Invalid(format!(
                    "{} exists and was not created by diskmeter, and this test writes to it; add --overwrite \
                     to allow destroying its contents, or choose another --target",
                    path.display()
                )));
            }
            let grow = needs.region_end > p.size_bytes;
            if grow && !may_write {
                return Err(EngineError::Invalid(format!(
                    "{} holds {} bytes but the test region needs {}; lower --size, or add --overwrite to let \
                     diskmeter extend and fill it",
                    path.display(),
                    p.size_bytes,
                    needs.region_end
                )));
            }
            let file = open(path, needs.writes || grow, false, needs.direct)
                .map_err(|e| open_error(path, e, needs.direct, p.filesystem.as_deref()))?;
            match lock(&file, path, opts, stop, progress)? {
                Locked::Now => {}
                Locked::AfterWaiting => {
                    // The run before may have removed or refilled it: look again.
                    if !still_same(&file, path) {
                        return Ok(None);
                    }
                    if probe::probe(path)?.size_bytes != p.size_bytes {
                        return Ok(None);
                    }
                }
                Locked::Stopped => return Ok(Some(OpenTarget::existing(path, p, file, needs.direct, warnings))),
            }
            let mut progress = |d, n| progress(TargetEvent::Fill { done: d, total: n });
            let progress: FillProgress<'_> = &mut progress;
            let mut filled = 0;
            if grow {
                let from = p.size_bytes.max(needs.region_start);
                filled = fill_region(&file, from, needs.region_end, align, stop, progress)?;
            }
            if needs.reads {
                let (from, to) = (needs.region_start.min(needs.region_end), needs.region_end);
                let holes = sparse::unwritten_bytes(&file, from, to - from).unwrap_or(0);
                if holes > 0 {
                    if may_write {
                        // Fill holes by rewriting the whole region: simple and leaves no gaps.
                        filled = fill_region(&file, from, to, align, stop, progress)?;
                    } else {
                        warnings.push((
                            codes::UNWRITTEN_READ.into(),
                            format!(
                                "{} has {} bytes of holes (never written) in the test region; reads there \
                                 measure nothing; add --overwrite to let diskmeter fill them",
                                path.display(),
                                holes
                            ),
                        ));
                    }
                }
            }
            let p = if grow { probe::probe(path)? } else { p };
            let mut t = OpenTarget::existing(path, p, file, needs.direct, warnings);
            t.filled_to = filled;
            Ok(Some(t))
        }
    }
}

/// The target facts for the result document.
pub fn target_info(t: &OpenTarget) -> stats::TargetInfo {
    let mut i = probe_info(&t.path, &t.probe);
    i.created_by_diskmeter = t.created;
    i
}

/// The facts a probe found about `path`, for a result document (a target diskmeter did not create).
pub fn probe_info(path: &Path, p: &Probe) -> stats::TargetInfo {
    let kind = match p.kind {
        TargetKind::File => stats::TargetKind::File,
        TargetKind::Block => stats::TargetKind::Block,
    };
    let mut i = stats::TargetInfo::new(path.to_string_lossy(), kind, p.size_bytes);
    i.path_not_utf8 = path.to_str().is_none();
    i.device = p.device.clone();
    i.model = p.model.clone();
    i.rotational = p.rotational;
    i.scheduler = p.scheduler.clone();
    i.logical_block = p.logical_block;
    i.physical_block = p.physical_block;
    i.filesystem = p.filesystem.clone();
    i.dio_mem_align = p.dio_mem_align;
    i.dio_offset_align = p.dio_offset_align;
    i.device_cache_bytes = p.device_cache_bytes;
    i
}
