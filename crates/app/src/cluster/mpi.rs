//! The MPI transport (`--features mpi`): rsmpi over the system's MPI library. Only the
//! thread that initialised MPI calls it (`Threading::Funneled`): the command's main thread,
//! which is also the one that collects the workers' intervals.

use super::comm::{Comm, Record, RECORD};
use crate::{Error, Result};
use mpi::datatype::PartitionMut;
use mpi::topology::{Communicator, SimpleCommunicator};
use mpi::traits::*;
use mpi::Count;

struct MpiComm {
    // Dropping the universe finalises MPI: it lives as long as the exchange.
    _universe: mpi::environment::Universe,
    world: SimpleCommunicator,
}

/// Initialise MPI and join the world: the transport, and the host name this rank goes by.
pub(super) fn join() -> Result<(Box<dyn Comm>, String)> {
    let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Funneled)
        .ok_or_else(|| Error::runtime("MPI could not be initialised (or was initialised twice)"))?;
    if threading < mpi::Threading::Funneled {
        return Err(Error::runtime(format!(
            "the MPI library gives only {threading:?} threading; diskmeter needs Funneled"
        )));
    }
    let world = universe.world();
    let host = mpi::environment::processor_name().unwrap_or_else(|_| "?".into());
    let host = crate::session::host_info().hostname.unwrap_or(host);
    Ok((Box::new(MpiComm { _universe: universe, world }), host))
}

impl Comm for MpiComm {
    fn rank(&self) -> usize {
        self.world.rank() as usize
    }
    fn size(&self) -> usize {
        self.world.size() as usize
    }
    fn all_gather(&self, mine: &Record) -> Vec<Record> {
        let n = self.size();
        let mut flat = vec![0u64; n * RECORD];
        self.world.all_gather_into(&mine[..], &mut flat[..]);
        flat.chunks_exact(RECORD)
            .map(|c| {
                let mut r = [0u64; RECORD];
                r.copy_from_slice(c);
                r
            })
            .collect()
    }
    fn gather_bytes(&self, mine: &[u8]) -> Option<Vec<Vec<u8>>> {
        let root = self.world.process_at_rank(0);
        let len = mine.len() as Count;
        if self.rank() != 0 {
            root.gather_into(&len);
            root.gather_varcount_into(mine);
            return None;
        }
        let mut lens = vec![0 as Count; self.size()];
        root.gather_into_root(&len, &mut lens[..]);
        let displs: Vec<Count> = lens
            .iter()
            .scan(0, |acc, &l| {
                let d = *acc;
                *acc += l;
                Some(d)
            })
            .collect();
        let total: Count = lens.iter().sum();
        let mut buf = vec![0u8; total as usize];
        {
            let mut part = PartitionMut::new(&mut buf[..], &lens[..], &displs[..]);
            root.gather_varcount_into_root(mine, &mut part);
        }
        Some(lens.iter().zip(&displs).map(|(&l, &d)| buf[d as usize..(d + l) as usize].to_vec()).collect())
    }
}
