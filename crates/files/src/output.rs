//! Output files: checked before any work starts, written to a temporary file beside the
//! destination, renamed into place only when complete.
//!
//! The rules, for every file diskmeter writes (results, reports, traces, bad-block lists,
//! recordings, state):
//! - a path that is not a regular file (a directory, device node, FIFO, socket) is refused;
//! - an existing file is replaced only when it is diskmeter's own ([`crate::is_ours`]) or the
//!   user gave `--force`;
//! - nothing is truncated in place: a failed write (ENOSPC, EIO, an interruption) removes the
//!   temporary file and leaves the destination exactly as it was.

use crate::path::{self, shown};
use crate::FileError;
use std::fs;
use std::io::{self, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// A checked output destination.
#[derive(Debug, Clone)]
pub struct OutputFile {
    /// The path as the user gave it (for messages).
    given: PathBuf,
    /// Where the bytes go: `given`, or the file a symlink there points to (the link stays).
    dest: PathBuf,
    /// The option that named it, for messages.
    option: String,
    force: bool,
    /// Permissions of the file this one replaces.
    replaced_mode: Option<u32>,
}

/// Checks `path` as an output named by `option` (e.g. "--output"). `force` allows replacing an
/// existing regular file that is not diskmeter's. Call this before any work starts.
pub fn plan(path: &Path, option: &str, force: bool) -> Result<OutputFile, FileError> {
    path::check(path, option)?;
    let is_link = fs::symlink_metadata(path).map(|m| m.file_type().is_symlink()).unwrap_or(false);
    let dest = if is_link {
        fs::canonicalize(path).map_err(|e| path::lookup_error(path, option, &e))?
    } else {
        path.to_path_buf()
    };
    let mut out =
        OutputFile { given: path.to_path_buf(), dest, option: option.to_string(), force, replaced_mode: None };
    out.replaced_mode = out.check_existing()?;
    path::check_writable_dir(path::parent_dir(&out.dest), option)?;
    Ok(out)
}

impl OutputFile {
    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.given
    }

    /// Where the bytes end up (a symlink resolved).
    pub fn destination(&self) -> &Path {
        &self.dest
    }

    /// The destination's state now: `Ok(None)` = free, `Ok(Some(mode))` = a file that may be
    /// replaced, `Err` = must not be touched.
    fn check_existing(&self) -> Result<Option<u32>, FileError> {
        let meta = match fs::symlink_metadata(&self.dest) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(path::lookup_error(&self.given, &self.option, &e)),
        };
        let ft = meta.file_type();
        let p = shown(&self.given);
        let o = &self.option;
        if ft.is_dir() {
            return Err(FileError::Usage(format!("{o} {p} is a directory; name a file in it")));
        }
        if !ft.is_file() {
            return Err(FileError::Usage(format!(
                "{o} {p} is {}; diskmeter writes only to regular files, which it never creates in place of \
                 another kind of file; choose a file name",
                path::kind_of(ft)
            )));
        }
        if !self.force && crate::is_ours(&self.dest).is_none() {
            return Err(FileError::Usage(format!(
                "{o} {p} already exists and is not a diskmeter result or trace, so diskmeter will not replace it; \
                 add --force to replace it, or choose another name"
            )));
        }
        // Where the OS keeps no mode bits, the new file gets the usual 0644.
        Ok(Some(platform::fs::mode_of(&meta).map_or(0o644, |m| m & 0o7777)))
    }

    /// Starts writing: a temporary file in the destination's directory.
    pub fn create(&self) -> Result<AtomicFile, FileError> {
        let dir = path::parent_dir(&self.dest);
        let name = self.dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let prefix: String = format!(".{}", name.chars().take(100).collect::<String>());
        let tmp = tempfile::Builder::new()
            .prefix(&prefix)
            .suffix(".diskmeter-tmp")
            .tempfile_in(dir)
            .map_err(|e| self.runtime("cannot create a temporary file for", &e))?;
        Ok(AtomicFile { tmp: Some(tmp), out: self.clone() })
    }

    /// Writes `bytes` as the whole file.
    pub fn write(&self, bytes: &[u8]) -> Result<(), FileError> {
        let mut f = self.create()?;
        f.write_all(bytes).map_err(|e| self.runtime("cannot write", &e))?;
        f.commit()
    }

    fn runtime(&self, what: &str, e: &io::Error) -> FileError {
        let note = match platform::classify(e) {
            platform::IoErrorClass::NoSpace => "; the file system is full",
            platform::IoErrorClass::Quota => "; the disk quota is exhausted",
            _ => "",
        };
        FileError::Runtime(format!("{what} {}: {e}{note}; nothing was written there", shown(&self.given)))
    }
}

/// An output being written. Dropped without [`commit`](AtomicFile::commit), it removes its
/// temporary file and the destination is untouched.
pub struct AtomicFile {
    tmp: Option<tempfile::NamedTempFile>,
    out: OutputFile,
}

impl AtomicFile {
    fn file(&mut self) -> io::Result<&mut fs::File> {
        self.tmp.as_mut().map(|t| t.as_file_mut()).ok_or_else(|| io::Error::other("output already committed"))
    }

    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.out.given
    }

    /// Flushes the data to stable storage, then renames it over the destination.
    pub fn commit(mut self) -> Result<(), FileError> {
        let out = self.out.clone();
        let Some(tmp) = self.tmp.take() else { return Ok(()) };
        tmp.as_file().sync_all().map_err(|e| out.runtime("cannot write", &e))?;
        let mode = match out.replaced_mode {
            Some(m) => m,
            None => 0o666 & !platform::fs::umask(),
        };
        let _ = platform::fs::set_mode(tmp.as_file(), mode);
        crate::set_output_mark(tmp.as_file());
        // The destination may have changed while the work ran: check it again.
        out.check_existing()?;
        tmp.persist(&out.dest).map_err(|e| out.runtime("cannot put in place", &e.error))?;
        Ok(())
    }
}

impl Write for AtomicFile {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.file()?.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.file()?.flush()
    }
}

impl Seek for AtomicFile {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file()?.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(r: Result<OutputFile, FileError>) -> String {
        match r {
            Err(FileError::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn writes_new_files_atomically_and_leaves_no_temporary() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("r.json");
        plan(&p, "--output", false).expect("plan").write(b"{\"schema\": \"diskmeter.result.v1\"}").expect("write");
        assert_eq!(fs::read(&p).expect("read"), b"{\"schema\": \"diskmeter.result.v1\"}");
        assert_eq!(fs::read_dir(d.path()).expect("dir").count(), 1);
        // Ours now: replaced without --force.
        plan(&p, "--output", false)
            .expect("plan")
            .write(b"{\"schema\": \"diskmeter.result.v1\", \"x\": 1}")
            .expect("write");
    }

    #[test]
    fn a_foreign_file_needs_force_and_an_uncommitted_write_changes_nothing() {
        let d = tempfile::tempdir().expect("tempdir");
        let p = d.path().join("notes.json");
        fs::write(&p, b"my notes").expect("write");
        assert!(usage(plan(&p, "--output", false)).contains("--force"));
        let out = plan(&p, "--output", true).expect("forced");
        let mut f = out.create().expect("create");
        f.write_all(b"half").expect("write");
        drop(f);
        assert_eq!(fs::read(&p).expect("read"), b"my notes");
        assert_eq!(fs::read_dir(d.path()).expect("dir").count(), 1, "temporary removed");
    }

    #[test]
    fn non_regular_destinations_are_refused() {
        let d = tempfile::tempdir().expect("tempdir");
        assert!(usage(plan(d.path(), "--html", true)).contains("is a directory"));
        assert!(usage(plan(Path::new("/dev/null"), "-o", true)).contains("character device"));
        let fifo = d.path().join("fifo");
        rustix::fs::mkfifoat(rustix::fs::CWD, &fifo, rustix::fs::Mode::from_raw_mode(0o600)).expect("mkfifo");
        assert!(usage(plan(&fifo, "-o", true)).contains("FIFO"));
        assert!(usage(plan(&d.path().join("no/such/dir/r.json"), "-o", false)).contains("does not exist"));
    }

    #[test]
    fn a_symlink_to_a_result_is_followed_and_kept() {
        let d = tempfile::tempdir().expect("tempdir");
        let real = d.path().join("real.json");
        fs::write(&real, b"{\"schema\": \"diskmeter.result.v1\"}").expect("write");
        let link = d.path().join("link.json");
        std::os::unix::fs::symlink(&real, &link).expect("symlink");
        plan(&link, "-o", false)
            .expect("plan")
            .write(b"{\"schema\": \"diskmeter.result.v1\", \"n\": 2}")
            .expect("write");
        assert!(fs::symlink_metadata(&link).expect("meta").file_type().is_symlink());
        assert!(fs::read_to_string(&real).expect("read").contains("\"n\": 2"));
    }
}
