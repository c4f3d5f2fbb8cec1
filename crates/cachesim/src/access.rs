//! The outcome of one simulated request: what a policy returns and what the counters
//! ([`crate::stats`]) count, so below both.

/// Outcome of one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Access {
    /// A read served entirely by the SSD.
    ReadHit,
    /// A read served partly by the SSD.
    ReadPartialHit,
    /// A read served entirely by the HDD.
    ReadMiss,
    /// A write whose every touched sub-block / unit was cached.
    WriteHit,
    /// Any other write.
    WriteMiss,
    /// A discard.
    Discard,
    /// A flush.
    Flush,
    /// A zero-length read or write (ignored).
    Empty,
}

impl Access {
    /// Whether this is a full read hit.
    pub fn is_read_hit(self) -> bool {
        self == Access::ReadHit
    }
}
