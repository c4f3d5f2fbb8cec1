//! Block I/O traces for the `cache` simulator: one request model, readers for the common
//! trace formats, a compact binary format, and synthetic traces. Pure: no device I/O.

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    Read,
    Write,
    /// Discard / trim: invalidates cached data, moves none.
    Discard,
    /// Flush / FUA barrier without data.
    Flush,
}

/// One block request, in bytes. `t_ns` is nanoseconds since the start of the trace (readers
/// rebase absolute timestamps to the first request).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Request {
    pub t_ns: u64,
    pub offset: u64,
    pub len: u32,
    pub op: Op,
    /// Device / volume id as the trace names it, mapped to a small integer by the reader.
    pub dev: u32,
}
