//! Opening, creating and preconditioning targets.
//!
//! Rules (`docs/METHOD.md`, "The target"): a test file diskmeter creates is filled with
//! incompressible data before anything reads it and removed afterwards unless `keep`;
//! an existing file diskmeter did not create is only read unless `overwrite`; a block
//! device is only written after the safety guard passes.

use crate::error::{EngineError, Invalid, Refusal, Result, Unsafe, Verb, Writer};
use crate::io::buffers::fill_pattern;
use crate::target::probe::{self, Probe, TargetKind};
use crate::target::safety;
use crate::target::sparse;
use platform::error::Errno;
use platform::target::{Native, OpenHow, TargetOps};
use spec::DataPattern;
use stats::codes;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

pub use files::lock::{Locked, WhenBusy};

#[derive(Debug, Clone, Default)]
pub struct TargetOptions {
    pub overwrite: bool,
    pub keep: bool,
    pub destroy_data: Option<PathBuf>,
    /// Write the region of a block device before reading it (needs the guard to pass).
    pub prefill: bool,
    /// When another process (another diskmeter run) holds the target's lock: wait or refuse.
    pub when_busy: WhenBusy,
    /// Do not fill a test file diskmeter creates (only reserve it): the command writes the
    /// whole region itself first (`steady`'s preconditioning).
    pub no_fill: bool,
    /// Writes reach the medium before they complete (Windows FILE_FLAG_WRITE_THROUGH, Linux
    /// O_DSYNC): `--write-through`.
    pub write_through: bool,
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
    /// A block device whose sampled blocks all read as zeros before this run wrote them:
    /// never written since it was new or discarded (`not-preconditioned`).
    pub found_blank: bool,
    /// Opened with writes through to the medium (`--write-through`).
    pub write_through: bool,
}

impl OpenTarget {
    /// A target that existed before this run (kept at exit).
    fn existing(path: &Path, probe: Probe, file: File, direct: bool, warnings: Vec<(String, String)>) -> Self {
        Self {
            path: path.to_path_buf(),
            probe,
            file,
            created: false,
            keep: true,
            direct,
            warnings,
            filled_to: 0,
            found_blank: false,
            write_through: false,
        }
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

/// True when `path` is a test file diskmeter created (and so may write again without
/// `overwrite`): what a caller checks before it starts a test that writes it.
pub fn created_by_diskmeter(path: &Path) -> bool {
    has_mark(path)
}

fn has_mark(path: &Path) -> bool {
    platform::mark::get(path, "user.diskmeter", 16).is_some_and(|v| !v.is_empty())
}

/// Failure (no marker support) only means a kept file will later be treated as foreign,
/// which is the safe side.
fn set_mark(file: &File) {
    platform::mark::set(file, "user.diskmeter", b"test-file");
}

/// Progress of a fill: (bytes done, bytes total).
pub type FillProgress<'a> = &'a mut dyn FnMut(u64, u64);

/// The unit a target's direct I/O must be aligned to: its logical block size, or its file
/// system's direct-I/O offset alignment when that is larger, and at least 512 bytes.
pub fn direct_block(p: &Probe) -> u64 {
    u64::from(p.logical_block.max(p.dio_offset_align.unwrap_or(0)).max(512))
}

/// The alignment of I/O buffers for a target: its direct-I/O memory alignment, at least a page.
pub fn mem_align(p: &Probe) -> usize {
    p.dio_mem_align.unwrap_or(4096).max(4096) as usize
}

/// The data-safety rules for a block device: a writing command (`by`) passes the guard
/// ([`safety::check_block_write`]) and needs the override (`destroy_data`) naming the device
/// (without it, [`Unsafe::NotNamed`]); an override naming another device is refused either way.
pub fn check_block_access(path: &Path, writes: bool, destroy_data: Option<&Path>, by: Writer) -> Result<()> {
    if writes {
        safety::check_block_write(path, destroy_data)?;
        if destroy_data.is_none() {
            return Err(Unsafe::NotNamed { device: path.to_path_buf(), by }.into());
        }
    } else if let Some(d) = destroy_data {
        if std::fs::canonicalize(d).ok() != std::fs::canonicalize(path).ok() {
            return Err(Unsafe::NamesAnother { named: d.to_path_buf(), target: path.to_path_buf() }.into());
        }
    }
    Ok(())
}

/// Whose advice an error opening a target carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// A workload (`run`, `mark`, `sla`, `compare`): it can turn read-only or `--buffered`.
    Workload,
    /// A surface scan of an existing target as a whole.
    Scan,
}

/// How an existing target is opened and locked.
#[derive(Debug, Clone, Copy)]
pub struct Access {
    pub purpose: Purpose,
    pub write: bool,
    /// O_DIRECT.
    pub direct: bool,
    /// With `direct`: when the target refuses direct I/O (EINVAL), open it through the page
    /// cache instead of failing ([`Opened::direct`] tells which it got).
    pub buffered_fallback: bool,
    /// O_EXCL: hold a block device exclusively, so that nobody can mount it while it is open.
    pub exclusive: bool,
    /// When another process holds the target's lock: wait or refuse.
    pub when_busy: WhenBusy,
    /// Writes reach the medium before they complete ([`TargetOptions::write_through`]).
    pub write_through: bool,
}

impl Access {
    /// A workload's access: direct I/O or not as asked, no fallback, not exclusive.
    pub fn workload(write: bool, direct: bool, when_busy: WhenBusy) -> Self {
        Self {
            purpose: Purpose::Workload,
            write,
            direct,
            buffered_fallback: false,
            exclusive: false,
            when_busy,
            write_through: false,
        }
    }
}

/// An existing target, open and (unless the run was stopped while waiting) locked.
#[derive(Debug)]
pub struct Opened {
    pub file: File,
    /// True when the file is open with O_DIRECT.
    pub direct: bool,
    pub locked: Locked,
}

/// Open an existing target (probed as `p`) as `access` says, then take the run's exclusive
/// lock on it (see [`files::lock`]). The step every command opens an existing target with.
pub fn open_existing(
    path: &Path,
    p: &Probe,
    access: &Access,
    stop: &AtomicBool,
    progress: TargetProgress<'_>,
) -> Result<Opened> {
    let how = |direct: bool| OpenHow {
        write: access.write,
        create: false,
        direct,
        exclusive: access.exclusive,
        write_through: access.write_through,
    };
    let open = |direct: bool| Native::open(path, how(direct));
    let (file, direct) = match open(access.direct) {
        Ok(f) => (f, access.direct),
        Err(e) if access.direct && access.buffered_fallback && Errno::of(&e) == Some(Errno::EINVAL) => {
            (open(false).map_err(|e| open_error(path, p, access, e))?, false)
        }
        Err(e) => return Err(open_error(path, p, access, e)),
    };
    let locked = lock(&file, path, access.when_busy, stop, progress)?;
    Ok(Opened { file, direct, locked })
}

/// Takes the run's exclusive lock on an open target (see [`files::lock`]).
fn lock(
    file: &File,
    path: &Path,
    when_busy: WhenBusy,
    stop: &AtomicBool,
    progress: TargetProgress<'_>,
) -> Result<Locked> {
    files::lock::lock_exclusive(file, path, when_busy, stop, &mut |m| progress(TargetEvent::Waiting(m))).map_err(|e| {
        match e {
            files::FileError::Usage(m) => Invalid::Lock(m).into(),
            files::FileError::Runtime(m) => EngineError::io(m, Errno::ENOLCK.error()),
        }
    })
}

/// True when `path` still names the file open as `file` (another run may have removed or
/// replaced it while this one waited for the lock).
fn still_same(file: &File, path: &Path) -> bool {
    match (file.metadata(), std::fs::metadata(path)) {
        (Ok(a), Ok(b)) => match (platform::fs::file_id(&a), platform::fs::file_id(&b)) {
            (Some(a), Some(b)) => a == b,
            // No identities on this OS: the path still opens, as far as it can tell.
            _ => true,
        },
        _ => false,
    }
}

/// Errors opening an existing target that the user can fix (exit 2) rather than runtime faults.
fn open_error(path: &Path, p: &Probe, access: &Access, e: std::io::Error) -> EngineError {
    let scan = access.purpose == Purpose::Scan;
    let path_buf = || path.to_path_buf();
    match Errno::of(&e) {
        // A block device refuses only O_DIRECT with EINVAL.
        Some(Errno::EINVAL) if !scan && (access.direct || p.kind == TargetKind::Block) => {
            direct_hint(path, p.filesystem.as_deref(), e)
        }
        Some(Errno::EACCES) | Some(Errno::EPERM) => {
            Invalid::Denied { path: path_buf(), verb: Verb::Open, error: Some(e) }.into()
        }
        Some(Errno::ETXTBSY) => Invalid::RunningProgram { path: path_buf() }.into(),
        Some(Errno::EROFS) if scan => Invalid::NotWritable { path: path_buf(), error: e }.into(),
        Some(Errno::EROFS) => Invalid::ReadOnlyFs { path: path_buf() }.into(),
        Some(Errno::ENAMETOOLONG) | Some(Errno::ELOOP) | Some(Errno::ENOTDIR) | Some(Errno::EISDIR) if !scan => {
            Invalid::BadPath { path: path_buf(), verb: Verb::Open, error: e }.into()
        }
        Some(Errno::EBUSY) if scan => Unsafe::Refused { device: path_buf(), why: Refusal::InUse(e) }.into(),
        Some(Errno::EBUSY) => Unsafe::Busy { path: path_buf(), error: e }.into(),
        _ => EngineError::io(format!("cannot open {}", path.display()), e),
    }
}

/// Errors creating a test file.
fn create_error(path: &Path, e: std::io::Error) -> EngineError {
    let path_buf = path.to_path_buf();
    match Errno::of(&e) {
        Some(Errno::EACCES) | Some(Errno::EPERM) | Some(Errno::EROFS) => {
            Invalid::CannotCreate { path: path_buf, error: e }.into()
        }
        Some(Errno::ENAMETOOLONG) | Some(Errno::ELOOP) | Some(Errno::ENOTDIR) | Some(Errno::EISDIR) => {
            Invalid::BadPath { path: path_buf, verb: Verb::Create, error: e }.into()
        }
        Some(Errno::ENOENT) => Invalid::DirectoryGone { path: path_buf }.into(),
        _ => EngineError::io(format!("cannot create {}", path.display()), e),
    }
}

fn direct_hint(path: &Path, fs: Option<&str>, e: std::io::Error) -> EngineError {
    Invalid::NoDirectIo { path: path.to_path_buf(), error: e, filesystem: fs.map(str::to_string) }.into()
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
    const CHUNK: usize = 4 << 20;
    let mut pool = crate::io::buffers::BufferPool::new(1, CHUNK, align.max(4096))
        .ok_or(EngineError::Invalid(Invalid::FillBuffer))?;
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
            match platform::fs::write_at(file, &buf[done..n], pos + done as u64) {
                Ok(0) => {
                    return Err(EngineError::io(
                        format!("filling the test area failed at offset {}", pos + done as u64),
                        std::io::Error::from_raw_os_error(
                            crate::io::backend::code_for(platform::IoErrorClass::NoSpace).raw(),
                        ),
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
        if let Some(mut t) = open_target_once(path, needs, opts, stop, progress)? {
            t.write_through = opts.write_through;
            return Ok(t);
        }
    }
    Err(Invalid::KeepsChanging { path: path.to_path_buf() }.into())
}

/// One attempt of [`open_target`]; `None` when the file changed while waiting for its lock.
fn open_target_once(
    path: &Path,
    needs: Needs,
    opts: &TargetOptions,
    stop: &AtomicBool,
    progress: TargetProgress<'_>,
) -> Result<Option<OpenTarget>> {
    // A Windows disk or volume: the guard before anything else, so that a drive whose facts
    // cannot be read is refused for writing, not probed.
    if platform::target::is_device_path(path) && (needs.writes || opts.prefill) {
        check_block_access(path, true, opts.destroy_data.as_deref(), Writer::Workload)?;
    }
    let p = probe::probe(path)?;
    let lb = if needs.direct { direct_block(&p) } else { 1 };
    if needs.direct && needs.bs_gcd > 0 && !needs.bs_gcd.is_multiple_of(lb) {
        return Err(Invalid::BlockSizeUnaligned { bs: needs.bs_gcd, path: path.to_path_buf(), block: lb }.into());
    }
    let mut step = Step { path, needs, opts, stop, progress };
    match p.kind {
        TargetKind::Block => step.block(p, lb).map(Some),
        TargetKind::File if !p.exists => step.create(p),
        TargetKind::File => step.existing_file(p),
    }
}

/// What one attempt at opening a target works with.
struct Step<'a, 'p> {
    path: &'a Path,
    needs: Needs,
    opts: &'a TargetOptions,
    stop: &'a AtomicBool,
    progress: TargetProgress<'p>,
}

impl Step<'_, '_> {
    /// Fill `[from, to)` of `file`, reporting progress.
    fn fill(&mut self, file: &File, from: u64, to: u64, align: usize) -> Result<u64> {
        let progress = &mut *self.progress;
        fill_region(file, from, to, align, self.stop, &mut |d, n| progress(TargetEvent::Fill { done: d, total: n }))
    }

    /// A block device: the safety guard, then open, lock and precondition (`lb`: the direct
    /// I/O unit, 1 without direct I/O).
    fn block(&mut self, p: Probe, lb: u64) -> Result<OpenTarget> {
        let (path, needs, opts) = (self.path, self.needs, self.opts);
        let writes = needs.writes || opts.prefill;
        check_block_access(path, writes, opts.destroy_data.as_deref(), Writer::Workload)?;
        if needs.region_end > p.size_bytes {
            return Err(
                Invalid::RegionPastEnd { end: needs.region_end, path: path.to_path_buf(), size: p.size_bytes }.into()
            );
        }
        let access =
            Access { write_through: opts.write_through, ..Access::workload(writes, needs.direct, opts.when_busy) };
        let o = open_existing(path, &p, &access, self.stop, &mut *self.progress)?;
        let align = mem_align(&p);
        let mut t = OpenTarget::existing(path, p, o.file, needs.direct, Vec::new());
        if o.locked == Locked::Stopped {
            return Ok(t);
        }
        if opts.prefill && needs.region_end > 0 {
            let block = crate::target::sample::SAMPLE_BLOCK.max(lb);
            let (from, to) = (needs.region_start.min(needs.region_end), needs.region_end);
            t.found_blank = crate::target::sample::zero_blocks(&t.file, from, to, block, align)
                .is_some_and(|s| s.sampled > 0 && s.zero == s.sampled);
            t.filled_to = self.fill(&t.file, needs.region_start, needs.region_end, align)?;
        } else if needs.reads {
            // Only with evidence: sampled blocks of the read region that read as zeros.
            let block = crate::target::sample::SAMPLE_BLOCK.max(lb);
            let (from, to) = (needs.region_start.min(needs.region_end), needs.region_end);
            let zeros = crate::target::sample::zero_blocks(&t.file, from, to, block, align);
            if let Some(m) = zeros.and_then(|s| crate::target::sample::unwritten_message(path, s)) {
                t.warnings.push((codes::UNWRITTEN_READ.into(), m));
            }
        }
        Ok(t)
    }

    /// A test file diskmeter creates: create, lock, mark, reserve and fill its region.
    /// `None` when another run created it first.
    fn create(&mut self, p: Probe) -> Result<Option<OpenTarget>> {
        let (path, needs) = (self.path, self.needs);
        let size = needs.region_end;
        let start = needs.region_start.min(size);
        let how = OpenHow {
            write: true,
            create: true,
            direct: needs.direct,
            write_through: self.opts.write_through,
            exclusive: false,
        };
        let file = match Native::open(path, how) {
            Ok(f) => f,
            Err(e) if Errno::of(&e) == Some(Errno::EINVAL) && needs.direct => {
                let _ = std::fs::remove_file(path);
                return Err(direct_hint(path, p.filesystem.as_deref(), e));
            }
            // Another run created it between the probe and here: start over (and wait for it).
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => return Ok(None),
            Err(e) => return Err(create_error(path, e)),
        };
        let mut guard = CreatedGuard { path, armed: true };
        // Nobody else can hold it yet (just created); taking the lock now makes a run that
        // opens it next wait until this one has filled, measured and removed it.
        lock(&file, path, self.opts.when_busy, self.stop, &mut *self.progress)?;
        set_mark(&file);
        // NTFS compression would measure the compressor; the test file never has it (a
        // folder's compression attribute is inherited by new files).
        platform::fs::set_uncompressed(&file)
            .map_err(|e| EngineError::io(format!("cannot turn NTFS compression off on {}", path.display()), e))?;
        reserve(&file, path, start, size)?;
        let filled = if self.opts.no_fill { 0 } else { self.fill(&file, start, size, mem_align(&p))? };
        let p = probe::probe(path)?;
        guard.armed = false;
        let mut t = OpenTarget::existing(path, p, file, needs.direct, Vec::new());
        t.created = true;
        t.keep = self.opts.keep;
        t.filled_to = filled;
        Ok(Some(t))
    }

    /// An existing file: written only when diskmeter created it or `--overwrite`; grown and
    /// its holes filled when it may be written. `None` when it changed while this run waited
    /// for its lock.
    fn existing_file(&mut self, p: Probe) -> Result<Option<OpenTarget>> {
        let (path, needs, opts) = (self.path, self.needs, self.opts);
        let ours = has_mark(path);
        let may_write = ours || opts.overwrite;
        if needs.writes && !may_write {
            return Err(Invalid::ForeignFile { path: path.to_path_buf() }.into());
        }
        let grow = needs.region_end > p.size_bytes;
        if grow && !may_write {
            return Err(Invalid::FileTooSmall {
                path: path.to_path_buf(),
                size: p.size_bytes,
                needed: needs.region_end,
            }
            .into());
        }
        let access = Access {
            write_through: opts.write_through,
            ..Access::workload(needs.writes || grow, needs.direct, opts.when_busy)
        };
        let o = open_existing(path, &p, &access, self.stop, &mut *self.progress)?;
        let file = o.file;
        match o.locked {
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
            Locked::Stopped => return Ok(Some(OpenTarget::existing(path, p, file, needs.direct, Vec::new()))),
        }
        let align = mem_align(&p);
        let mut warnings = Vec::new();
        let mut filled = 0;
        if grow {
            let from = p.size_bytes.max(needs.region_start);
            filled = self.fill(&file, from, needs.region_end, align)?;
        }
        if needs.reads {
            let (from, to) = (needs.region_start.min(needs.region_end), needs.region_end);
            let holes = sparse::unwritten_bytes(&file, from, to - from).unwrap_or(0);
            if holes > 0 {
                if may_write {
                    // Fill holes by rewriting the whole region: simple and leaves no gaps.
                    filled = self.fill(&file, from, to, align)?;
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
        if platform::fs::is_compressed(&file).unwrap_or(false) {
            if ours {
                // diskmeter's own test file (kept, then compressed by hand or by its folder).
                platform::fs::set_uncompressed(&file).map_err(|e| {
                    EngineError::io(format!("cannot turn NTFS compression off on {}", path.display()), e)
                })?;
            } else {
                warnings.push((codes::COMPRESSED_TARGET.into(), compressed_warning(path)));
            }
        }
        let p = if grow { probe::probe(path)? } else { p };
        let mut t = OpenTarget::existing(path, p, file, needs.direct, warnings);
        t.filled_to = filled;
        Ok(Some(t))
    }
}

/// The warning for an NTFS-compressed file diskmeter did not create (it never changes such a
/// file's attributes; the files it creates are never compressed).
fn compressed_warning(path: &Path) -> String {
    format!(
        "{} is NTFS-compressed: every read and write goes through the file system's compressor, so the figures \
         are not the disk's; turn compression off (compact /u \"{}\") or let diskmeter create its own test file",
        path.display(),
        path.display()
    )
}

/// Reserve `[start, size)` of a new test file up front so ENOSPC shows now, not
/// mid-measurement; below `start` the file stays a hole. Also sets the file's length.
fn reserve(file: &File, path: &Path, start: u64, size: u64) -> Result<()> {
    if let Err(e) = Native::reserve(Native::handle(file), start, size - start) {
        if platform::classify(&e) == platform::IoErrorClass::NoSpace {
            return Err(EngineError::io(
                format!("not enough free space for a {}-byte test region at {}", size - start, path.display()),
                e,
            ));
        }
        file.set_len(size).map_err(|e| EngineError::io("cannot size the test file", e))?;
    }
    Ok(())
}

/// The target facts for the result document.
pub fn target_info(t: &OpenTarget) -> stats::TargetInfo {
    let mut i = probe_info(&t.path, &t.probe);
    i.created_by_diskmeter = t.created;
    i.write_through = t.write_through;
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
    i.disk = p.identity.clone();
    i.state = p.state.clone();
    i
}

/// Many files open at once (fio `nrfiles`): the soft limit on open files rises to the hard one
/// (best effort; opening then fails with EMFILE past it).
pub fn raise_open_files_limit(files: usize) {
    if files > 256 {
        platform::process::raise_open_files_limit();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_compressed_file_warning_names_the_file_and_the_way_out() {
        let m = compressed_warning(Path::new(r"D:\data\big.bin"));
        assert!(m.starts_with(r"D:\data\big.bin is NTFS-compressed"), "{m}");
        assert!(m.contains(r#"compact /u "D:\data\big.bin""#), "{m}");
        assert!(m.contains("not the disk's"), "{m}");
    }
}
