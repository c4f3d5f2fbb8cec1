//! What is wrong with a path, found before anything is opened or created.

use crate::FileError;
use platform::IoErrorClass as C;
use std::fs;
use std::io;
use std::path::{Component, Path};

/// Longest file name a Linux file system takes, in bytes.
pub const NAME_MAX: usize = 255;
/// Longest path the kernel takes, in bytes (PATH_MAX less the terminating NUL).
pub const PATH_MAX: usize = 4095;

/// The path as text for messages: lossy for names that are not UTF-8, control characters shown
/// as `?` (a file name must not drive the terminal), cut in the middle when very long.
pub fn shown(path: &Path) -> String {
    let s: String = path.to_string_lossy().chars().map(|c| if c.is_control() { '?' } else { c }).collect();
    let n = s.chars().count();
    if n <= 120 {
        return s;
    }
    let head: String = s.chars().take(60).collect();
    let tail: String = s.chars().skip(n - 40).collect();
    format!("{head}…{tail} ({} bytes)", path.as_os_str().len())
}

/// What kind of thing a file type is, for messages ("a directory", "a FIFO", …).
pub fn kind_of(ft: fs::FileType) -> &'static str {
    platform::fs::kind_of(ft)
}

/// Checks `path` (named `what` in messages, e.g. "--output" or "the target") for the faults that
/// are the user's to fix: empty, longer than the kernel takes, a name over 255 bytes, a trailing
/// `/` (a file is expected), a dangling symlink, a symlink loop, a non-directory used as a
/// directory. Does not require the path to exist.
pub fn check(path: &Path, what: &str) -> Result<(), FileError> {
    let bytes = path.as_os_str().as_encoded_bytes();
    if bytes.is_empty() {
        return Err(FileError::Usage(format!("{what} is empty; give a path")));
    }
    if bytes.len() > PATH_MAX {
        return Err(FileError::Usage(format!(
            "{what} is {} bytes long, and Linux takes paths of at most {PATH_MAX} bytes; use a shorter path",
            bytes.len()
        )));
    }
    for c in path.components() {
        if let Component::Normal(name) = c {
            if name.len() > NAME_MAX {
                return Err(FileError::Usage(format!(
                    "{what} has a name of {} bytes ({}), and a file name is at most {NAME_MAX} bytes; use a \
                     shorter name",
                    name.len(),
                    shown(Path::new(name))
                )));
            }
        }
    }
    if bytes.len() > 1 && bytes.ends_with(b"/") {
        return Err(FileError::Usage(format!(
            "{what} {} ends in '/', which names a directory; give a file path (without the trailing '/')",
            shown(path)
        )));
    }
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => match fs::metadata(path) {
            Ok(_) => Ok(()),
            Err(e) => Err(symlink_error(path, what, &e)),
        },
        Ok(_) => Ok(()),
        Err(e) => match platform::classify(&e) {
            C::NotFound => Ok(()),
            _ => Err(lookup_error(path, what, &e)),
        },
    }
}

fn symlink_error(path: &Path, what: &str, e: &io::Error) -> FileError {
    match platform::classify(e) {
        C::NotFound => {
            let to = fs::read_link(path).map(|t| shown(&t)).unwrap_or_else(|_| "?".into());
            FileError::Usage(format!(
                "{what} {} is a dangling symbolic link (it points to {to}, which does not exist); fix the link \
                 or give another path",
                shown(path)
            ))
        }
        _ => lookup_error(path, what, e),
    }
}

/// The usage error for a failed lookup of `path` (ELOOP, ENAMETOOLONG, ENOTDIR, EACCES); other
/// errors are runtime faults.
pub fn lookup_error(path: &Path, what: &str, e: &io::Error) -> FileError {
    let p = shown(path);
    match platform::classify(e) {
        C::LinkLoop => FileError::Usage(format!(
            "{what} {p} is a loop of symbolic links (too many levels); fix the links or give another path"
        )),
        C::NameTooLong => FileError::Usage(format!("{what} {p} is too long for the file system; use a shorter path")),
        C::NotADirectory => FileError::Usage(format!(
            "{what} {p}: a part of the path that should be a directory is a file; check the path"
        )),
        C::Permission => FileError::Usage(format!(
            "{what} {p}: permission denied on a directory in the path; pick a path you can reach"
        )),
        C::NotFound => FileError::Usage(format!("{what} {p} does not exist")),
        _ => FileError::Runtime(format!("cannot look up {what} {p}: {e}")),
    }
}

/// The directory a new file at `path` would be created in ("." for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Checks that new files can be created in `dir`: it exists, is a directory, is writable and
/// not on a read-only mount.
pub fn check_writable_dir(dir: &Path, what: &str) -> Result<(), FileError> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(m) => {
            return Err(FileError::Usage(format!(
                "{what}: {} is {}, not a directory",
                shown(dir),
                kind_of(m.file_type())
            )))
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Err(FileError::Usage(format!("{what}: directory {} does not exist; create it first", shown(dir))))
        }
        Err(e) => return Err(lookup_error(dir, what, &e)),
    }
    match platform::fs::dir_writable(dir) {
        Ok(()) => Ok(()),
        Err((C::ReadOnly, _)) => Err(FileError::Usage(format!(
            "{what}: {} is on a read-only file system; choose a writable directory",
            shown(dir)
        ))),
        Err((C::Permission, _)) => Err(FileError::Usage(format!(
            "{what}: no permission to create files in {}; choose a writable directory",
            shown(dir)
        ))),
        Err((_, e)) => Err(FileError::Runtime(format!("cannot check directory {}: {e}", shown(dir)))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;

    fn usage(r: Result<(), FileError>) -> String {
        match r {
            Err(FileError::Usage(m)) => m,
            other => panic!("expected a usage error, got {other:?}"),
        }
    }

    #[test]
    fn too_long_paths_and_names_are_usage_errors() {
        let long = "a/".repeat(2500);
        assert!(usage(check(Path::new(&long), "--target")).contains("at most 4095 bytes"));
        let name = "x".repeat(300);
        assert!(usage(check(Path::new(&name), "--target")).contains("at most 255 bytes"));
        check(Path::new(&"y".repeat(255)), "--target").expect("255 is fine");
    }

    #[test]
    fn trailing_slash_dangling_link_and_loop() {
        let d = tempfile::tempdir().expect("tempdir");
        let f = d.path().join("file");
        fs::write(&f, b"x").expect("write");
        let mut slash = f.clone().into_os_string();
        slash.push("/");
        assert!(usage(check(Path::new(&slash), "--target")).contains("ends in '/'"));
        let dangling = d.path().join("dangling");
        std::os::unix::fs::symlink(d.path().join("nowhere"), &dangling).expect("symlink");
        assert!(usage(check(&dangling, "--target")).contains("dangling"));
        let a = d.path().join("a");
        let b = d.path().join("b");
        std::os::unix::fs::symlink(&b, &a).expect("symlink");
        std::os::unix::fs::symlink(&a, &b).expect("symlink");
        assert!(usage(check(&a, "--target")).contains("loop"));
        assert!(usage(check(&a.join("x"), "--target")).contains("loop"));
        assert!(usage(check(&f.join("x"), "--target")).contains("is a file"));
        check(&d.path().join("new"), "--target").expect("a new name is fine");
    }

    #[test]
    fn shown_is_lossy_and_bounded() {
        let p = Path::new(std::ffi::OsStr::from_bytes(b"a\xffb\x1b[31m"));
        let s = shown(p);
        assert!(s.contains('\u{fffd}') && !s.contains('\x1b'), "{s}");
        let long = "z".repeat(500);
        assert!(shown(Path::new(&long)).len() < 200);
    }
}
