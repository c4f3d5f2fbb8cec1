//! Writes small fake sysfs trees for tests of anything that walks block devices — this
//! crate's and its users'. The tree has the kernel's shape: devices under `devices/`, and
//! `block/`, `class/block/` and `dev/block/MAJ:MIN` as links to them.

use super::Roots;
use std::fs;
use std::io;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

/// A fake sysfs rooted at a directory the caller owns (usually a tempdir).
#[derive(Debug, Clone)]
pub struct SysTree {
    root: PathBuf,
}

impl SysTree {
    pub fn new(root: impl Into<PathBuf>) -> io::Result<SysTree> {
        let root = root.into();
        for d in ["block", "class/block", "dev/block", "devices"] {
            fs::create_dir_all(root.join(d))?;
        }
        Ok(SysTree { root })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Roots with sysfs here and /proc, /dev, /etc as `proc`, `dev-nodes`, `etc` inside it.
    pub fn roots(&self) -> Roots {
        Roots {
            sys: self.root.clone(),
            proc: self.root.join("proc"),
            dev: self.root.join("dev-nodes"),
            etc: self.root.join("etc"),
        }
    }

    /// A whole disk at `devices/PARENT/NAME` (PARENT such as `virtual/block` or
    /// `pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block`), listed in `block/`,
    /// `class/block/` and `dev/block/`.
    pub fn disk(&self, parent: &str, name: &str, dev: (u32, u32), sectors: u64) -> io::Result<PathBuf> {
        let dir = self.root.join("devices").join(parent).join(name);
        fs::create_dir_all(dir.join("slaves"))?;
        fs::create_dir_all(dir.join("holders"))?;
        fs::write(dir.join("dev"), format!("{}:{}\n", dev.0, dev.1))?;
        fs::write(dir.join("size"), format!("{sectors}\n"))?;
        symlink(&dir, self.root.join("block").join(name))?;
        self.list(&dir, name, dev)?;
        Ok(dir)
    }

    /// A partition of the disk at `disk`.
    pub fn partition(
        &self,
        disk: &Path,
        name: &str,
        dev: (u32, u32),
        number: u32,
        start: u64,
        sectors: u64,
    ) -> io::Result<PathBuf> {
        let dir = disk.join(name);
        fs::create_dir_all(dir.join("holders"))?;
        fs::write(dir.join("dev"), format!("{}:{}\n", dev.0, dev.1))?;
        fs::write(dir.join("partition"), format!("{number}\n"))?;
        fs::write(dir.join("start"), format!("{start}\n"))?;
        fs::write(dir.join("size"), format!("{sectors}\n"))?;
        self.list(&dir, name, dev)?;
        Ok(dir)
    }

    fn list(&self, dir: &Path, name: &str, dev: (u32, u32)) -> io::Result<()> {
        symlink(dir, self.root.join("class/block").join(name))?;
        symlink(dir, self.root.join("dev/block").join(format!("{}:{}", dev.0, dev.1)))
    }

    /// A file under `dir` (parents created): `attr(&sda, "queue/rotational", "1")`.
    pub fn attr(&self, dir: &Path, rel: &str, content: &str) -> io::Result<()> {
        let p = dir.join(rel);
        if let Some(parent) = p.parent() {
            fs::create_dir_all(parent)?;
        }
        fs::write(p, format!("{content}\n"))
    }

    /// The queue attributes most walkers read.
    pub fn queue(&self, disk: &Path, logical: u32, physical: u32, rotational: bool, scheduler: &str) -> io::Result<()> {
        self.attr(disk, "queue/logical_block_size", &logical.to_string())?;
        self.attr(disk, "queue/physical_block_size", &physical.to_string())?;
        self.attr(disk, "queue/rotational", if rotational { "1" } else { "0" })?;
        self.attr(disk, "queue/scheduler", scheduler)
    }

    /// The hardware node `devices/REL`, linked as the disk's `device`; returns its path for
    /// `attr` (model, serial, …).
    pub fn hardware(&self, disk: &Path, rel: &str) -> io::Result<PathBuf> {
        let hw = self.root.join("devices").join(rel);
        fs::create_dir_all(&hw)?;
        symlink(&hw, disk.join("device"))?;
        Ok(hw)
    }

    /// `upper` sits on `lower` (dm/md member): `upper/slaves/LOWER` and `lower/holders/UPPER`.
    pub fn stack(&self, upper: &Path, lower: &Path) -> io::Result<()> {
        let name =
            |p: &Path| p.file_name().map(|n| n.to_owned()).ok_or_else(|| io::Error::from(io::ErrorKind::InvalidInput));
        fs::create_dir_all(upper.join("slaves"))?;
        fs::create_dir_all(lower.join("holders"))?;
        symlink(lower, upper.join("slaves").join(name(lower)?))?;
        symlink(upper, lower.join("holders").join(name(upper)?))
    }
}
