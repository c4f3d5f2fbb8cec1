//! Several hosts at once: the same `run` or `mark` on every MPI rank, each on its own
//! target, merged exactly on rank 0 (see `docs/multi-host.md`).
//!
//! No network protocol of ours: ranks are launched by `mpirun`/`srun` and talk through MPI
//! (`--features mpi`), or through threads in the tests. Every exchange is one collective of
//! the same fixed-size record, so ranks cannot get out of step: each record says whether the
//! rank is running I/O, its status (a failure stops every rank), which barrier it waits at,
//! and its live rates. The rules:
//! - a barrier (before each phase, and the release of the workers) ends when every rank
//!   waits at the same one; ranks still running I/O answer with their 250 ms beats;
//! - a failed or interrupted rank's status reaches every rank at the next exchange, which
//!   raises their stop flags; nobody waits for a rank that will not come;
//! - the end (`finish`) is a barrier every rank reaches, failed or not, and then rank 0
//!   gathers every rank's document and merges it (`merge`).

mod comm;
pub mod local;
pub mod merge;
#[cfg(feature = "mpi")]
mod mpi;

pub use comm::{Comm, Record, RECORD};

use crate::ranks::RankNames;
use crate::session::Observer;
use crate::{Error, Result};
use engine::measure::{Tick, TickKind};
use stats::{ClusterSource, ErrorInfo, ResultDoc};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A rank's status in a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Ok = 0,
    Interrupted = 1,
    Failed = 2,
    /// Bad input (exit 2 on every rank).
    Usage = 3,
}

impl Status {
    fn from_word(w: u64) -> Status {
        match w {
            0 => Status::Ok,
            1 => Status::Interrupted,
            3 => Status::Usage,
            _ => Status::Failed,
        }
    }
}

/// What a rank is doing when it sends a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Running I/O (a beat).
    Beat = 0,
    /// Waiting at a barrier.
    Barrier = 1,
    /// Done with the command, waiting to send its document.
    Finish = 2,
}

/// Why this rank's run was stopped by the others.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Halt {
    /// The first rank that failed (or was interrupted).
    pub rank: usize,
    pub status: Status,
    /// The ranks did not take the same steps (a bug, or different command lines).
    pub out_of_step: bool,
}

/// This process's place among the ranks, and the state of the exchange.
pub struct Cluster {
    comm: Option<Box<dyn Comm>>,
    names: RankNames,
    /// Barriers passed so far (every rank counts the same).
    barrier: u64,
    halt: Option<Halt>,
    /// The stop flag of the running command: raised when another rank fails.
    stop: Option<Arc<AtomicBool>>,
    next_beat: Instant,
    /// The wall clock when the workers were last released together, Unix ns.
    pub release_unix_ns: Option<u64>,
}

/// Time between two exchanges while a rank runs I/O or fills its target.
pub const BEAT: Duration = Duration::from_millis(250);

impl Cluster {
    /// One process on its own (no MPI).
    pub fn single() -> Cluster {
        Self::with_comm(None, RankNames::default())
    }

    /// Ranks that talk through `comm`.
    pub fn with(comm: Box<dyn Comm>, host: String) -> Cluster {
        let names = RankNames { rank: comm.rank(), size: comm.size(), host };
        Self::with_comm(Some(comm), names)
    }

    fn with_comm(comm: Option<Box<dyn Comm>>, names: RankNames) -> Cluster {
        Cluster { comm, names, barrier: 0, halt: None, stop: None, next_beat: Instant::now(), release_unix_ns: None }
    }

    /// Join the ranks `mpirun` (or `srun`) started, or run alone. Under a launcher without
    /// an MPI build, every rank refuses (they would all write the same files).
    pub fn join() -> Result<Cluster> {
        let launched = launcher_size();
        #[cfg(feature = "mpi")]
        if launched.is_some() {
            return mpi::join().map(|(comm, host)| Cluster::with(comm, host));
        }
        if let Some(n) = launched.filter(|&n| n > 1) {
            return Err(Error::usage(format!(
                "started by an MPI launcher as one of {n} ranks, but this diskmeter was built without MPI; \
                 build it with `cargo build --release --features mpi` (needs openmpi-bin libopenmpi-dev libclang-dev)"
            )));
        }
        Ok(Cluster::single())
    }

    pub fn names(&self) -> &RankNames {
        &self.names
    }
    pub fn rank(&self) -> usize {
        self.names.rank
    }
    pub fn size(&self) -> usize {
        self.names.size
    }
    /// More than one rank.
    pub fn is_multi(&self) -> bool {
        self.comm.is_some() && self.names.size > 1
    }
    pub fn is_root(&self) -> bool {
        self.names.rank == 0
    }
    pub fn halted(&self) -> Option<&Halt> {
        self.halt.as_ref()
    }

    fn exchange(&mut self, kind: Kind, running: bool, status: Status, live: [f64; 4]) -> Vec<Record> {
        let Some(comm) = &self.comm else { return Vec::new() };
        let mut r: Record = [u64::from(running), status as u64, self.barrier, kind as u64, 0, 0, 0, 0];
        for (w, v) in r[4..].iter_mut().zip(live) {
            *w = v.to_bits();
        }
        let all = comm.all_gather(&r);
        self.next_beat = Instant::now() + BEAT;
        if self.halt.is_none() {
            if let Some((rank, rec)) = all.iter().enumerate().find(|(_, r)| r[1] != Status::Ok as u64) {
                self.halt_by(Halt { rank, status: Status::from_word(rec[1]), out_of_step: false });
            }
        }
        all
    }

    fn halt_by(&mut self, h: Halt) {
        if let Some(s) = &self.stop {
            s.store(true, Ordering::Relaxed);
        }
        self.halt = Some(h);
    }

    /// This rank's own status: interrupted when its stop flag was raised by a signal.
    fn own_status(&self) -> Status {
        let stopped = self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed));
        if stopped && self.halt.is_none() {
            Status::Interrupted
        } else {
            Status::Ok
        }
    }

    /// A barrier: returns when every rank waits at this one (`true`), or as soon as a rank
    /// failed or the ranks are out of step (`false`, the stop flag raised).
    pub fn barrier(&mut self) -> bool {
        if !self.is_multi() {
            return true;
        }
        if self.halt.is_some() {
            return false;
        }
        self.barrier += 1;
        loop {
            let status = self.own_status();
            let all = self.exchange(Kind::Barrier, false, status, [0.0; 4]);
            if self.halt.is_some() {
                return false;
            }
            if all.iter().any(|r| r[0] == 1) {
                continue; // others are still running I/O: their beats answer ours
            }
            if all.iter().all(|r| r[3] == Kind::Barrier as u64 && r[2] == self.barrier) {
                return true;
            }
            // Every rank sees the same records, so all come to this conclusion together.
            self.halt_by(Halt { rank: self.rank(), status: Status::Failed, out_of_step: true });
            return false;
        }
    }

    /// A beat while this rank runs I/O: sends its live rates, returns the sums over the ranks.
    pub fn beat(&mut self, live: [f64; 4]) -> [f64; 4] {
        if !self.is_multi() {
            return live;
        }
        let status = self.own_status();
        let all = self.exchange(Kind::Beat, true, status, live);
        let mut sum = [0.0; 4];
        for r in &all {
            if r[0] == 1 {
                for (s, w) in sum.iter_mut().zip(&r[4..]) {
                    *s += f64::from_bits(*w);
                }
            }
        }
        sum
    }

    /// A beat if one is due (for loops that report at their own pace, such as filling).
    pub fn beat_if_due(&mut self) {
        if self.is_multi() && Instant::now() >= self.next_beat {
            self.beat([0.0; 4]);
        }
    }

    /// The end, which every rank reaches: wait until all have finished, then rank 0 gets
    /// every rank's document (`doc`, JSON).
    pub fn finish(&mut self, status: Status, doc: &[u8]) -> Option<Vec<Vec<u8>>> {
        if !self.is_multi() {
            return Some(vec![doc.to_vec()]);
        }
        loop {
            let all = self.exchange(Kind::Finish, false, status, [0.0; 4]);
            if all.iter().all(|r| r[3] == Kind::Finish as u64 && r[0] == 0) {
                break;
            }
        }
        self.comm.as_ref().and_then(|c| c.gather_bytes(doc))
    }
}

/// The number of ranks an MPI launcher started, from its environment (`None`: no launcher).
fn launcher_size() -> Option<usize> {
    ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"]
        .iter()
        .find_map(|v| std::env::var(v).ok())
        .and_then(|s| s.trim().parse().ok())
        .or_else(|| std::env::var_os("PMIX_RANK").map(|_| 0))
}

/// The observer a command sees on a rank: barriers before phases and at the release of the
/// workers, beats with the live rates; the rates shown (rank 0) are the sums over the ranks.
pub struct RankObserver<'a> {
    pub cluster: &'a mut Cluster,
    pub inner: &'a mut dyn Observer,
}

impl Observer for RankObserver<'_> {
    fn phase(&mut self, label: &str, planned: Option<Duration>) {
        self.cluster.barrier();
        self.inner.phase(label, planned);
    }
    fn fill(&mut self, done: u64, total: u64) {
        self.cluster.beat_if_due();
        self.inner.fill(done, total);
    }
    fn tick(&mut self, t: &Tick) {
        match t.kind {
            TickKind::Release => {
                if self.cluster.barrier() {
                    self.cluster.release_unix_ns = Some(engine::measure::unix_ns_now());
                }
            }
            TickKind::Live => {
                let s = self.cluster.beat([t.read_iops, t.write_iops, t.read_mb_s, t.write_mb_s]);
                let sum = Tick { read_iops: s[0], write_iops: s[1], read_mb_s: s[2], write_mb_s: s[3], ..*t };
                self.inner.tick(&sum);
            }
        }
    }
    fn phase_done(&mut self) {
        self.inner.phase_done();
    }
    fn steps(&mut self, done: usize, total: usize, elapsed: Duration) {
        self.inner.steps(done, total, elapsed);
    }
    fn planned(&mut self, total: Duration) {
        self.inner.planned(total);
    }
    fn notice(&mut self, message: &str) {
        self.inner.notice(message);
    }
}

/// What a measuring command gave on this rank, and on rank 0 the merged document.
pub struct RankOutcome {
    /// This rank's own document (with its histograms).
    pub own: ResultDoc,
    /// Rank 0: every rank merged. Other ranks: `None`.
    pub merged: Option<ResultDoc>,
    /// The error the command ended with on this rank, if it had no document.
    pub error: Option<Error>,
}

/// Run a measuring command on every rank and merge on rank 0. `name` is the command;
/// `shared`: the ranks share a target on purpose.
pub fn measure(
    cluster: &mut Cluster,
    name: &str,
    shared: bool,
    stop: Arc<AtomicBool>,
    obs: &mut dyn Observer,
    command: impl FnOnce(Arc<AtomicBool>, &mut dyn Observer) -> Result<ResultDoc>,
) -> Result<RankOutcome> {
    cluster.stop = Some(stop.clone());
    let got = command(stop, &mut RankObserver { cluster, inner: obs });
    let (mut own, status, error) = match got {
        Ok(doc) => {
            let st = match &doc.error {
                Some(e) if e.kind == "interrupted" => Status::Interrupted,
                Some(_) => Status::Failed,
                None => Status::Ok,
            };
            (doc, st, None)
        }
        Err(e) => {
            let (kind, st) = match &e {
                Error::Usage(_) => ("usage", Status::Usage),
                Error::Runtime(_) => ("io", Status::Failed),
                Error::Interrupted(_) => ("interrupted", Status::Interrupted),
            };
            (crate::session::error_doc(name, kind, e.message()), st, Some(e))
        }
    };
    // A rank stopped because another failed says so, and is not itself the failure.
    let status = match cluster.halt.clone() {
        Some(h) if h.rank != cluster.rank() && status == Status::Interrupted => {
            own.error = Some(ErrorInfo::new(merge::STOPPED, format!("stopped because rank {} failed", h.rank)));
            Status::Ok
        }
        _ => status,
    };
    let bytes = serde_json::to_vec(&own).map_err(|e| Error::runtime(format!("cannot encode the result: {e}")))?;
    let gathered = cluster.finish(status, &bytes);
    if !cluster.is_multi() {
        return Ok(RankOutcome { own, merged: None, error });
    }
    let merged = match gathered {
        Some(all) => Some(merge_ranks(&all, shared)?),
        None => None,
    };
    Ok(RankOutcome { own, merged, error })
}

/// Rank 0: every rank's document merged.
fn merge_ranks(all: &[Vec<u8>], shared: bool) -> Result<ResultDoc> {
    let mut parts = Vec::with_capacity(all.len());
    for (i, b) in all.iter().enumerate() {
        let doc: ResultDoc = serde_json::from_slice(b)
            .map_err(|e| Error::runtime(format!("rank {i} sent a result that cannot be read: {e}")))?;
        parts.push(merge::Part { label: format!("rank {i}"), doc });
    }
    merge::merge(&parts, merge::MergeOptions { source: ClusterSource::Mpi, shared })
}

/// How rank 0 ends after writing the merged document: bad input on any rank is exit 2 with
/// its line, a rank's fault exit 1 naming the rank, an interruption 130.
pub fn root_status(merged: &ResultDoc) -> Result<()> {
    match &merged.error {
        Some(e) if e.kind == "usage" => Err(Error::Usage(e.message.clone())),
        _ => crate::output::status(merged),
    }
}

/// How a rank other than 0 ends: quiet unless it failed itself (then its own error line).
pub fn member_status(own: &ResultDoc, error: Option<Error>) -> Result<u8> {
    if let Some(e) = error {
        return Err(e);
    }
    match &own.error {
        None => Ok(0),
        Some(e) if e.kind == merge::STOPPED => Ok(1),
        Some(e) if e.kind == "interrupted" => Ok(130),
        Some(e) => Err(Error::runtime(e.message.clone())),
    }
}

/// The commands that run on every rank; the others refuse to start under several ranks.
pub fn check_supported(cluster: &Cluster, command: &str) -> Result<()> {
    if cluster.is_multi() && !matches!(command, "run" | "mark") {
        return Err(Error::usage(format!(
            "`{command}` runs on one host; under mpirun only `run` and `mark` run on every rank \
             (start `{command}` without mpirun)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
