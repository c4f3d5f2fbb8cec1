//! What is being measured: opening, creating and preconditioning a target ([`open`]),
//! finding out what it is ([`probe`]), refusing to destroy what matters ([`safety`]),
//! evidence of never-written areas ([`sparse`] for files, [`sample`] for block devices),
//! the device's own counters ([`devview`]) and test-only fault injection ([`fault`]). The OS
//! calls on a target (open for direct I/O, size, sector sizes, alignment, discard, punch hole,
//! reserve) are `platform::target::TargetOps`'s; here are the rules around them.
pub mod devview;
pub mod fault;
pub mod open;
pub mod probe;
pub mod purge;
pub mod safety;
pub mod sample;
pub mod sparse;

pub use open::{
    check_block_access, created_by_diskmeter, direct_block, fill_region, mem_align, open_existing, open_target,
    probe_info, target_info, Access, FillProgress, Locked, Needs, OpenTarget, Opened, Purpose, TargetEvent,
    TargetOptions, TargetProgress, WhenBusy,
};
