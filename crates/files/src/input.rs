//! Input files: regular files only, and a size cap on the ones read whole, so `report /dev/zero`
//! or a FIFO can never make diskmeter read without end.

use crate::path::{self, shown};
use crate::FileError;
use std::fs;
use std::io::{self, Read};
use std::path::Path;

/// Largest result document `report` and `compare --results` read (a sla or compare result with
/// every series and CDF is a few MiB).
pub const RESULT_CAP: u64 = 256 << 20;
/// Largest fio job file read.
pub const JOBFILE_CAP: u64 = 16 << 20;

/// Checks that `path` (named `what`) is an existing regular file diskmeter may read.
pub fn check_regular(path: &Path, what: &str) -> Result<fs::Metadata, FileError> {
    path::check(path, what)?;
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(FileError::Usage(format!("{what} {} does not exist", shown(path))))
        }
        Err(e) => return Err(path::lookup_error(path, what, &e)),
    };
    if !meta.is_file() {
        return Err(FileError::Usage(format!(
            "{what} {} is {}, not a regular file; give a file",
            shown(path),
            path::kind_of(meta.file_type())
        )));
    }
    Ok(meta)
}

/// Reads the regular file `path` whole, refusing files larger than `cap` bytes.
pub fn read_capped(path: &Path, what: &str, cap: u64) -> Result<Vec<u8>, FileError> {
    let meta = check_regular(path, what)?;
    let too_big = |n: u64| {
        FileError::Usage(format!(
            "{what} {} is {n} bytes; diskmeter reads at most {} MiB here; is it the right file?",
            shown(path),
            cap >> 20
        ))
    };
    if meta.len() > cap {
        return Err(too_big(meta.len()));
    }
    let f = fs::File::open(path).map_err(|e| match platform::classify(&e) {
        platform::IoErrorClass::Permission => {
            FileError::Usage(format!("cannot read {what} {}: permission denied", shown(path)))
        }
        _ => FileError::Runtime(format!("cannot open {what} {}: {e}", shown(path))),
    })?;
    let mut buf = Vec::with_capacity(meta.len() as usize);
    // The file may grow while it is read: never read more than the cap.
    f.take(cap + 1)
        .read_to_end(&mut buf)
        .map_err(|e| FileError::Runtime(format!("cannot read {what} {}: {e}", shown(path))))?;
    if buf.len() as u64 > cap {
        return Err(too_big(buf.len() as u64));
    }
    Ok(buf)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn devices_fifos_and_directories_are_refused_and_big_files_capped() {
        for p in ["/dev/zero", "/dev/null", "/"] {
            match read_capped(Path::new(p), "result file", RESULT_CAP) {
                Err(FileError::Usage(m)) => assert!(m.contains("not a regular file"), "{m}"),
                other => panic!("{p}: {other:?}"),
            }
        }
        let d = tempfile::tempdir().expect("tempdir");
        let f = d.path().join("big");
        fs::write(&f, vec![b'x'; 2048]).expect("write");
        assert!(matches!(read_capped(&f, "result file", 1024), Err(FileError::Usage(m)) if m.contains("at most")));
        assert_eq!(read_capped(&f, "result file", 4096).expect("read").len(), 2048);
        assert!(
            matches!(read_capped(&d.path().join("none"), "x", 1), Err(FileError::Usage(m)) if m.contains("does not exist"))
        );
    }
}
