//! What the checks read, gathered once: the stack under the target through the platform
//! layer's topology (so fixture trees stand in for the system), SMART per whole disk, the
//! caller's cgroup limits, the kernel log, and the optional live look and probe.

use crate::model::{LoadView, ProbeView};
use health::model::SmartReport;
use platform::block::{Roots, Topology};
use platform::diag::{self, CgroupLimit, KernelError, Layer, Links, SystemFacts};

/// SMART of one whole disk, or why it was not read.
#[derive(Debug, Clone)]
pub enum Smart {
    Read {
        report: Box<SmartReport>,
        /// smartctl's whole JSON (fields the typed report does not keep: interface speed,
        /// thermal times).
        raw: serde_json::Value,
        /// `smartctl -a /dev/sda`.
        source: String,
    },
    NotRead(String),
}

/// What diskmeter's own device state knows about a disk (`steady --sustained`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceState {
    /// Bytes written before the write cliff of the last `--sustained` run.
    pub cliff_bytes: Option<u64>,
    /// Where the state is kept.
    pub source: String,
}

/// One whole disk at the bottom of the stack.
#[derive(Debug, Clone)]
pub struct DiskFacts {
    pub name: String,
    pub links: Links,
    pub smart: Smart,
    pub state: Option<DeviceState>,
}

/// The file system a path target lives on.
#[derive(Debug, Clone, PartialEq)]
pub struct MountFacts {
    pub mount_point: String,
    pub fstype: String,
    pub options: String,
    pub size_bytes: Option<u64>,
    pub free_bytes: Option<u64>,
}

/// Everything the checks weigh.
#[derive(Debug, Clone)]
pub struct Facts {
    /// The target as given.
    pub target: String,
    /// The file system, when the target is a path on one.
    pub mount: Option<MountFacts>,
    /// Top first: the target's device, then what it sits on, down to the whole disks. Empty
    /// when the target has no block device (tmpfs, a network file system).
    pub layers: Vec<Layer>,
    pub disks: Vec<DiskFacts>,
    pub system: SystemFacts,
    pub cgroup: Vec<CgroupLimit>,
    pub kernel_log: Result<Vec<KernelError>, String>,
    pub root: bool,
    pub load: Option<LoadView>,
    pub probe: Option<ProbeView>,
    /// Why `--probe` could not run, when it was asked for and failed.
    pub probe_error: Option<String>,
    /// Why the target has no block device, when it has none.
    pub no_device: Option<String>,
}

impl Facts {
    /// The layers that are whole disks (the bottom of the stack).
    pub fn disk_layers(&self) -> impl Iterator<Item = &Layer> {
        self.layers.iter().filter(|l| self.disks.iter().any(|d| d.name == l.name))
    }

    /// The top device's layer.
    pub fn top(&self) -> Option<&Layer> {
        self.layers.first()
    }

    pub fn disk(&self, name: &str) -> Option<&DiskFacts> {
        self.disks.iter().find(|d| d.name == name)
    }
}

/// The stack, links and system facts under `roots`, for the device `top` (a kernel name); SMART,
/// state, load and probe are left for the caller to fill.
pub fn gather(roots: &Roots, top: Option<&str>, target: &str) -> Facts {
    let topo = Topology::new(roots.clone());
    let layers = top.and_then(|t| topo.device(t)).map(|d| diag::stack(&topo, &d)).unwrap_or_default();
    // Whole disks: layers no other layer sits on (nothing below them) that are not partitions.
    let disks: Vec<DiskFacts> = layers
        .iter()
        .filter(|l| l.is_whole_disk())
        .map(|l| DiskFacts {
            name: l.name.clone(),
            links: diag::links(&topo, &l.device),
            smart: Smart::NotRead("not read".into()),
            state: None,
        })
        .collect();
    let numbers: Vec<(u32, u32)> = layers.iter().map(|l| (l.device.major, l.device.minor)).collect();
    let names: Vec<String> = layers.iter().map(|l| l.name.clone()).collect();
    Facts {
        target: target.to_string(),
        mount: None,
        cgroup: diag::cgroup_limits(roots, &numbers),
        kernel_log: if names.is_empty() { Ok(Vec::new()) } else { diag::kernel_io_errors(roots, &names) },
        system: diag::system(roots),
        layers,
        disks,
        root: false,
        load: None,
        probe: None,
        probe_error: None,
        no_device: None,
    }
}
