//! Ranks as threads of one process, talking through shared memory: the transport the
//! tests use to check the exchange without MPI (faults, barriers, out-of-step ranks).

use super::comm::{Comm, Record};
use std::sync::{Arc, Barrier, Mutex};

struct Shared {
    barrier: Barrier,
    records: Mutex<Vec<Record>>,
    bytes: Mutex<Vec<Vec<u8>>>,
}

/// One rank of a group of threads made by [`ThreadComm::group`].
pub struct ThreadComm {
    rank: usize,
    size: usize,
    shared: Arc<Shared>,
}

impl ThreadComm {
    /// `size` ranks; give one to each thread.
    pub fn group(size: usize) -> Vec<ThreadComm> {
        let shared = Arc::new(Shared {
            barrier: Barrier::new(size),
            records: Mutex::new(vec![[0; super::RECORD]; size]),
            bytes: Mutex::new(vec![Vec::new(); size]),
        });
        (0..size).map(|rank| ThreadComm { rank, size, shared: shared.clone() }).collect()
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Comm for ThreadComm {
    fn rank(&self) -> usize {
        self.rank
    }
    fn size(&self) -> usize {
        self.size
    }
    fn all_gather(&self, mine: &Record) -> Vec<Record> {
        lock(&self.shared.records)[self.rank] = *mine;
        self.shared.barrier.wait();
        let all = lock(&self.shared.records).clone();
        self.shared.barrier.wait();
        all
    }
    fn gather_bytes(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        lock(&self.shared.bytes)[self.rank] = mine.to_vec();
        self.shared.barrier.wait();
        let all = (self.rank == 0).then(|| lock(&self.shared.bytes).clone());
        self.shared.barrier.wait();
        all
    }
}
