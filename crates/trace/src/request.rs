//! The request model every reader yields and every writer takes.

/// What a request does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Op {
    /// Read data.
    Read,
    /// Write data.
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
    /// Issue time, ns since the start of the trace.
    pub t_ns: u64,
    /// First byte addressed.
    pub offset: u64,
    /// Length in bytes (0 for flushes).
    pub len: u32,
    /// What the request does.
    pub op: Op,
    /// Device / volume id as the trace names it, mapped to a small integer by the reader.
    pub dev: u32,
}
