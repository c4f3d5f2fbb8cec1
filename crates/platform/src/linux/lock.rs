//! flock(2), and the holder from /proc/locks.

use rustix::fs::{flock, FlockOperation};
use std::fs::File;
use std::io;
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;

pub fn try_lock_exclusive(file: &File) -> io::Result<bool> {
    loop {
        match flock(file.as_fd(), FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK) => return Ok(false),
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(e.into()),
        }
    }
}

pub fn holder(file: &File) -> Option<(u32, String)> {
    holder_in(file, std::path::Path::new("/proc"))
}

/// [`holder`] with procfs at `proc_root` (fixtures in tests).
pub fn holder_in(file: &File, proc_root: &std::path::Path) -> Option<(u32, String)> {
    let meta = file.metadata().ok()?;
    let (maj, min) = (libc::major(meta.dev()), libc::minor(meta.dev()));
    let key = format!("{maj:02x}:{min:02x}:{}", meta.ino());
    let locks = std::fs::read_to_string(proc_root.join("locks")).ok()?;
    let pid = find_holder(&locks, &key)?;
    let comm = std::fs::read_to_string(proc_root.join(pid.to_string()).join("comm")).map(|s| s.trim().to_string());
    Some((
        pid,
        match comm {
            Ok(c) if !c.is_empty() => format!("{c} (pid {pid})"),
            _ => format!("process {pid}"),
        },
    ))
}

/// The pid holding the FLOCK on `key` (`MAJ:MIN:INODE` in hex:hex:decimal) in /proc/locks.
fn find_holder(locks: &str, key: &str) -> Option<u32> {
    locks.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().filter(|w| *w != "->").collect();
        (f.get(1) == Some(&"FLOCK") && f.get(5) == Some(&key)).then(|| f.get(4)?.parse().ok()).flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_locks() {
        let text = "1: POSIX  ADVISORY  WRITE 99 00:19:42 0 EOF\n2: FLOCK  ADVISORY  WRITE 1234 fd:01:5678 0 EOF\n\
                    2: -> FLOCK  ADVISORY  WRITE 77 fd:01:5678 0 EOF\n";
        assert_eq!(find_holder(text, "fd:01:5678"), Some(1234));
        assert_eq!(find_holder(text, "00:19:42"), None, "POSIX locks are not ours");
    }

    #[test]
    fn the_holder_is_named_from_a_fixture_procfs() {
        let d = tempfile::tempdir().expect("tempdir");
        let f = File::create(d.path().join("t")).expect("file");
        let m = f.metadata().expect("meta");
        let key = format!("{:02x}:{:02x}:{}", libc::major(m.dev()), libc::minor(m.dev()), m.ino());
        let proc_root = d.path().join("proc");
        std::fs::create_dir_all(proc_root.join("4321")).expect("proc");
        std::fs::write(proc_root.join("locks"), format!("1: FLOCK  ADVISORY  WRITE 4321 {key} 0 EOF\n"))
            .expect("locks");
        std::fs::write(proc_root.join("4321/comm"), "diskmeter\n").expect("comm");
        assert_eq!(holder_in(&f, &proc_root), Some((4321, "diskmeter (pid 4321)".into())));
        assert!(try_lock_exclusive(&f).expect("lock"));
        let g = File::open(d.path().join("t")).expect("second open");
        assert!(!try_lock_exclusive(&g).expect("try"), "a second open file description waits");
    }
}
