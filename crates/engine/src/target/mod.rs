//! What is being measured: opening, creating and preconditioning a target ([`open`]),
//! finding out what it is ([`probe`]), refusing to destroy what matters ([`safety`]),
//! evidence of never-written areas ([`sparse`] for files, [`sample`] for block devices),
//! the device's own counters ([`devview`]) and test-only fault injection ([`fault`]). The OS
//! calls on a target (open for direct I/O, size, sector sizes, alignment, discard, punch hole,
//! reserve) are `platform::target::TargetOps`'s; here are the rules around them. Opening and
//! probing are the engine's own: the commands reach them through [`crate::measure`].
pub mod devview;
pub mod fault;
pub(crate) mod open;
pub(crate) mod probe;
pub mod purge;
pub mod safety;
pub mod sample;
pub mod sparse;

pub(crate) use open::{
    check_block_access, direct_block, mem_align, open_existing, probe_info, Access, OpenTarget, Purpose, WhenBusy,
};
