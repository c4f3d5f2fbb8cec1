//! The null engine: completes every I/O at once. Measures the tool's own ceiling; deterministic
//! tests.
//!
//! Its test-only fault is one of `target::fault`'s ([`NullCounter`]), while the fault layer
//! wraps any backend: this file uses the fault layer, and the fault layer uses only the
//! backends' trait in `mod.rs`, never this file.

use super::{Backend, BackendConfig, Completed, Completion, Op};
use crate::target::fault::{NullCounter, NullFault};
use std::io;
use std::time::Duration;

pub struct Null {
    done: Completed,
    /// Fails I/Os past a count in a build with fault injection; nothing in any other.
    fault: NullCounter,
}

impl Null {
    pub fn new(cfg: &BackendConfig, fault: Option<NullFault>) -> Self {
        Self { done: Completed::new(cfg.depth), fault: NullCounter::new(fault) }
    }
}

impl Backend for Null {
    #[inline]
    fn queue(&mut self, slot: u32, op: Op, _: u64, _: *mut u8, len: u32, _: u16) -> io::Result<()> {
        let res = self.fault.result(Completion::Done(if matches!(op, Op::Read | Op::Write) { len } else { 0 }));
        self.done.push(slot, res);
        Ok(())
    }

    fn submit_and_wait(&mut self, _: u32, _: Option<Duration>) -> io::Result<()> {
        Ok(())
    }

    #[inline]
    fn reap<F: FnMut(u32, Completion)>(&mut self, f: F) {
        self.done.reap(f)
    }
}
