//! diskmeter doctor: why is this disk slow? The checklist an expert runs (links, errors,
//! heat, caches, queueing, TRIM, alignment, power, schedulers, limits, competing I/O, the
//! stack, the drive's state), each check over facts read through the platform layer, joined
//! into ranked causes with their evidence, cost and fix ([`diagnose`]).
//!
//! The cheap part runs inside every benchmark ([`bench`]): a cgroup limit, latency faster
//! than the medium, throughput at the link's ceiling, and a startup burst.
//!
//! - [`facts`] holds what the checks read, gathered once;
//! - [`checks`] runs the checks, pure over the facts;
//! - [`model`] is the document, `diskmeter.doctor.v1`.

#![cfg_attr(test, allow(clippy::unwrap_used))]

pub mod bench;
pub mod checks;
pub mod facts;
pub mod model;
pub mod smart_extra;

pub use facts::{Facts, Smart};
pub use model::{Cause, Check, DoctorDoc, Evidence, Severity, Status};

/// The stack as the document shows it: file system, each layer, each disk's link.
pub fn stack_view(f: &Facts) -> Vec<model::StackLayer> {
    let mut out = Vec::new();
    if let Some(m) = &f.mount {
        out.push(model::StackLayer {
            name: m.mount_point.clone(),
            role: "file system".into(),
            detail: format!("{} ({})", m.fstype, m.options),
        });
    }
    for l in &f.layers {
        let d = &l.device;
        let mut detail = match l.role {
            "dm" => {
                let uuid = l.dm_uuid.as_deref().unwrap_or("");
                let kind = if uuid.starts_with("CRYPT-") {
                    "dm-crypt"
                } else if uuid.starts_with("LVM-") {
                    "LVM"
                } else {
                    "device-mapper"
                };
                format!("{kind} {}", d.dm_name.as_deref().unwrap_or(""))
            }
            "md" => format!("md {}", d.md_level.as_deref().unwrap_or("")),
            "loop" => format!("loop over {}", l.loop_backing_file.as_deref().unwrap_or("?")),
            "partition" => format!(
                "partition {} of {}",
                d.partition.as_ref().and_then(|p| p.number).map_or("?".into(), |n| n.to_string()),
                d.disk
            ),
            _ => {
                let model = d.ident.model.clone().unwrap_or_default();
                format!("{} {model}", l.transport).trim().to_string()
            }
        };
        if let Some(s) = d.size_bytes() {
            detail.push_str(&format!(", {:.1} GB", s as f64 / 1e9));
        }
        if let Some(r) = &l.rotational {
            detail.push_str(if r.value { ", rotational" } else { ", non-rotational" });
        }
        out.push(model::StackLayer { name: l.name.clone(), role: l.role.into(), detail });
        if let Some(disk) = f.disk(&l.name) {
            let lk = &disk.links;
            let link = if let Some(p) = &lk.pcie {
                Some(format!("{} ({} capable) at {}", p.current.label(), p.device_max.label(), p.address))
            } else if let Some(s) = &lk.sata {
                Some(format!("SATA {} ({})", s.current_gbps.map_or("?".into(), |g| format!("{g} Gb/s")), s.link))
            } else {
                lk.usb.as_ref().map(|u| format!("USB {} Mb/s, {}", u.speed_mbps, u.driver.as_deref().unwrap_or("?")))
            };
            if let Some(link) = link {
                out.push(model::StackLayer { name: l.name.clone(), role: "link".into(), detail: link });
            }
        }
    }
    out
}

/// Run the checks over `f` and rank what they found.
pub fn diagnose(f: &Facts, tool: stats::ToolInfo, started_at: String) -> DoctorDoc {
    let found = checks::run(f);
    let mut doc = DoctorDoc {
        schema: model::SCHEMA.into(),
        tool,
        started_at,
        target: f.target.clone(),
        device: f.layers.first().map(|l| l.name.clone()),
        stack: stack_view(f),
        causes: found.causes,
        checks: found.checks,
        load: f.load.clone(),
        probe: f.probe.clone(),
        root: f.root,
    };
    doc.rank();
    doc
}
