//! What is being measured: opening, creating and preconditioning a target ([`open`]),
//! finding out what it is ([`probe`]), refusing to destroy what matters ([`safety`]),
//! evidence of never-written areas ([`sparse`] for files, [`sample`] for block devices),
//! the device's own counters ([`devview`]) and test-only fault injection ([`fault`]).
pub mod devview;
pub mod fault;
pub mod open;
pub mod probe;
pub mod safety;
pub mod sample;
pub mod sparse;

pub use open::{
    fill_region, open_target, probe_info, target_info, FillProgress, Needs, OpenTarget, TargetEvent, TargetOptions,
    TargetProgress, WhenBusy,
};
