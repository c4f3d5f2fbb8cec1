//! The mount table (`/proc/self/mountinfo` on Linux): which file system, from which source,
//! is mounted where.

use crate::block::model::Roots;
use std::path::{Path, PathBuf};

/// One mount.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    pub major: u32,
    pub minor: u32,
    pub mount_point: PathBuf,
    pub fstype: String,
    pub source: String,
    /// The mount's options and the file system's own (`rw,relatime` and `rw,errors=remount-ro`
    /// as one list, mount options first, without repeats).
    pub options: String,
}

/// The calling process's mounts; empty where the OS keeps no such table or it cannot be read.
pub fn read(roots: &Roots) -> Vec<MountEntry> {
    #[cfg(target_os = "linux")]
    {
        std::fs::read_to_string(roots.proc.join("self/mountinfo")).map(|s| parse_mountinfo(&s)).unwrap_or_default()
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = roots;
        Vec::new()
    }
}

/// Parse mountinfo text (see proc(5)); malformed lines are skipped.
pub fn parse_mountinfo(text: &str) -> Vec<MountEntry> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((pre, post)) = line.split_once(" - ") else {
            continue;
        };
        let pre: Vec<&str> = pre.split(' ').collect();
        let post: Vec<&str> = post.split(' ').collect();
        if pre.len() < 5 || post.len() < 2 {
            continue;
        }
        let Some((maj, min)) = pre[2].split_once(':') else {
            continue;
        };
        let (Ok(major), Ok(minor)) = (maj.parse(), min.parse()) else {
            continue;
        };
        out.push(MountEntry {
            major,
            minor,
            mount_point: path_from_bytes(unescape_octal(pre[4])),
            fstype: post[0].to_string(),
            source: String::from_utf8_lossy(&unescape_octal(post[1])).into_owned(),
            options: join_options(pre.get(5).copied().unwrap_or(""), post.get(2).copied().unwrap_or("")),
        });
    }
    out
}

/// Mount options then the super block's, each once.
fn join_options(mount: &str, sup: &str) -> String {
    let mut seen: Vec<&str> = Vec::new();
    for o in mount.split(',').chain(sup.split(',')).filter(|o| !o.is_empty()) {
        if !seen.contains(&o) {
            seen.push(o);
        }
    }
    seen.join(",")
}

#[cfg(unix)]
fn path_from_bytes(b: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(b))
}

#[cfg(not(unix))]
fn path_from_bytes(b: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&b).into_owned())
}

/// Undo the kernel's `\ooo` escaping of spaces, tabs, newlines and backslashes.
pub fn unescape_octal(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' && i + 3 < b.len() {
            let oct = &b[i + 1..i + 4];
            if oct.iter().all(|c| (b'0'..=b'7').contains(c)) {
                let v = oct.iter().fold(0u32, |acc, c| acc * 8 + u32::from(c - b'0'));
                if let Ok(byte) = u8::try_from(v) {
                    out.push(byte);
                    i += 4;
                    continue;
                }
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Active swap areas (files and devices) from `swaps` under the procfs root; empty where
/// unknown.
pub fn swaps(roots: &Roots) -> Vec<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        parse_swaps(&std::fs::read_to_string(roots.proc.join("swaps")).unwrap_or_default())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = roots;
        Vec::new()
    }
}

/// The file names of a /proc/swaps text (after its header line).
pub fn parse_swaps(text: &str) -> Vec<PathBuf> {
    text.lines()
        .skip(1)
        .filter_map(|l| l.split_whitespace().next())
        .map(|f| path_from_bytes(unescape_octal(f)))
        .collect()
}

/// The mount whose mount point is the longest prefix of `path` (later mounts win ties).
pub fn longest_mount<'a>(mounts: &'a [MountEntry], path: &Path) -> Option<&'a MountEntry> {
    let mut best: Option<&MountEntry> = None;
    for m in mounts {
        if path.starts_with(&m.mount_point) {
            let better = match best {
                None => true,
                Some(b) => m.mount_point.as_os_str().len() >= b.mount_point.as_os_str().len(),
            };
            if better {
                best = Some(m);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn swaps_parsing() {
        let v = parse_swaps(
            "Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n/dev/zram0 partition 8388604 0 100\n/swap\\040file file 1 0 -2\n",
        );
        assert_eq!(v, vec![PathBuf::from("/dev/zram0"), PathBuf::from("/swap file")]);
    }

    #[test]
    fn mount_options_join_the_mount_and_super_block_lists() {
        let m = parse_mountinfo(
            "29 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw,errors=remount-ro\n\
             40 29 0:35 / /dev/shm rw,nosuid,nodev shared:3 - tmpfs tmpfs rw,size=8G\n\
             41 29 0:36 / /x ro - tmpfs none\n",
        );
        assert_eq!(m.len(), 3);
        assert_eq!(m[0].options, "rw,relatime,errors=remount-ro");
        assert_eq!(m[1].options, "rw,nosuid,nodev,size=8G");
        assert_eq!((m[2].options.as_str(), m[2].source.as_str()), ("ro", "none"));
    }
}
