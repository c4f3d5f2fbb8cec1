//! The transport between ranks, below the exchange (`cluster`) and the transports that
//! carry it (`mpi`, `local`).

/// Words in one exchanged record.
pub const RECORD: usize = 8;
/// One rank's record: `[running, status, barrier, kind, live rates as f64 bits × 4]`.
pub type Record = [u64; RECORD];

/// The transport between ranks: MPI, or threads in the tests. Collective calls: every rank
/// makes the same calls in the same order.
pub trait Comm {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Every rank's record, in rank order.
    fn all_gather(&self, mine: &Record) -> Vec<Record>;
    /// Rank 0 gets every rank's bytes, in rank order; the others `None`.
    fn gather_bytes(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>>;
}
