#![allow(clippy::unwrap_used)]
//! The exchange between ranks, on threads: barriers, beats, failures, the end.

use super::local::ThreadComm;
use super::*;
use std::path::{Path, PathBuf};

/// Run `f(rank, cluster)` on `n` ranks (threads); results in rank order.
fn ranks<T: Send>(n: usize, f: impl Fn(usize, &mut Cluster) -> T + Sync) -> Vec<T> {
    let comms = ThreadComm::group(n);
    std::thread::scope(|s| {
        let hs: Vec<_> = comms
            .into_iter()
            .enumerate()
            .map(|(i, c)| {
                let f = &f;
                s.spawn(move || {
                    let mut cl = Cluster::with(Box::new(c), format!("host{i}"));
                    cl.stop = Some(Arc::new(AtomicBool::new(false)));
                    f(i, &mut cl)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

#[test]
fn one_process_alone_passes_everything_through() {
    let mut c = Cluster::single();
    assert!(!c.is_multi() && c.is_root());
    assert!(c.barrier());
    assert_eq!(c.beat([1.0, 2.0, 3.0, 4.0]), [1.0, 2.0, 3.0, 4.0]);
    assert_eq!(c.finish(Status::Ok, b"doc"), Some(vec![b"doc".to_vec()]));
}

#[test]
fn barriers_pass_together_and_rank_0_gets_every_document() {
    let out = ranks(3, |i, c| {
        let passed = (0..3).map(|_| c.barrier()).collect::<Vec<_>>();
        let docs = c.finish(Status::Ok, format!("doc {i}").as_bytes());
        (passed, docs, c.halted().cloned())
    });
    for (i, (passed, docs, halt)) in out.into_iter().enumerate() {
        assert_eq!(passed, [true, true, true]);
        assert_eq!(halt, None);
        match i {
            0 => assert_eq!(docs.unwrap(), [b"doc 0".to_vec(), b"doc 1".to_vec(), b"doc 2".to_vec()]),
            _ => assert_eq!(docs, None),
        }
    }
}

#[test]
fn beats_sum_the_live_rates_and_a_finished_rank_waits_for_the_running_ones() {
    let out = ranks(3, |i, c| {
        let mut sums = Vec::new();
        // Rank 0 runs I/O for 4 beats, rank 1 for 2, rank 2 has finished at once.
        for _ in 0..[4, 2, 0][i] {
            sums.push(c.beat([100.0 * (i + 1) as f64, 0.0, 1.0, 0.0])[0]);
        }
        c.finish(Status::Ok, b"x");
        sums
    });
    assert_eq!(out[0], [300.0, 300.0, 100.0, 100.0], "the running ranks' rates, summed");
    assert_eq!(out[1], [300.0, 300.0]);
}

#[test]
fn a_rank_that_fails_stops_the_others_at_their_next_barrier() {
    let out = ranks(3, |i, c| {
        if i == 2 {
            // Cannot open its target: straight to the end, failed.
            c.finish(Status::Failed, b"failed");
            return (Vec::new(), c.halted().cloned(), false);
        }
        let passed: Vec<bool> = (0..2).map(|_| c.barrier()).collect();
        c.finish(Status::Ok, b"ok");
        let stopped = c.stop.as_ref().unwrap().load(Ordering::Relaxed);
        (passed, c.halted().cloned(), stopped)
    });
    for (passed, halt, stopped) in &out[..2] {
        assert_eq!(passed, &[false, false], "no rank passes a barrier after the failure");
        assert_eq!(halt, &Some(Halt { rank: 2, status: Status::Failed, out_of_step: false }));
        assert!(stopped, "the stop flag is raised");
    }
}

#[test]
fn a_failure_while_others_run_io_reaches_them_at_their_next_beat() {
    let out = ranks(2, |i, c| {
        if i == 1 {
            c.finish(Status::Failed, b"enospc");
            return 0;
        }
        let mut beats = 0;
        while !c.stop.as_ref().unwrap().load(Ordering::Relaxed) && beats < 100 {
            c.beat([1.0, 0.0, 0.0, 0.0]);
            beats += 1;
        }
        c.finish(Status::Ok, b"partial");
        beats
    });
    assert_eq!(out[0], 1, "stopped by the first beat after the failure");
}

#[test]
fn ranks_out_of_step_stop_instead_of_hanging() {
    let out = ranks(2, |i, c| {
        let a = c.barrier();
        if i == 0 {
            c.barrier();
        }
        c.finish(Status::Ok, b"");
        (a, c.halted().cloned())
    });
    assert!(out[0].0 && out[1].0, "the first barrier is common");
    assert!(out[0].1.as_ref().is_some_and(|h| h.out_of_step), "{:?}", out[0].1);
}

#[test]
fn an_interruption_on_one_rank_stops_the_others() {
    let out = ranks(2, |i, c| {
        if i == 0 {
            c.stop.as_ref().unwrap().store(true, Ordering::Relaxed); // Ctrl-C on this rank only
        }
        let passed = c.barrier();
        c.finish(Status::Ok, b"");
        (passed, c.halted().cloned())
    });
    assert_eq!(out[1].1, Some(Halt { rank: 0, status: Status::Interrupted, out_of_step: false }));
    assert!(!out[1].0);
}

#[test]
fn paths_expand_per_rank() {
    let n = RankNames { rank: 2, size: 3, host: "a".into() };
    assert_eq!(n.expand(Path::new("/mnt/nas/dm.{rank}.{host}.of{size}")), PathBuf::from("/mnt/nas/dm.2.a.of3"));
    assert_eq!(n.expand(Path::new("/plain")), PathBuf::from("/plain"));
    assert!(RankNames::per_rank(Path::new("r.{rank}.json")) && !RankNames::per_rank(Path::new("r.json")));
}

#[test]
fn ranks_poll_only_when_told_to() {
    use crate::session::TargetFlags;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let one = RankNames { rank: 0, size: 1, host: "a".into() };
    let three = RankNames { rank: 1, size: 3, host: "a".into() };
    let poll_ns = |f: &TargetFlags, n: &RankNames| f.for_ranks(n).session(false, stop.clone()).ctl.poll_ns;
    let default = TargetFlags::default();
    assert_eq!(poll_ns(&default, &one), 100_000, "one process polls up to 100 µs by default");
    assert_eq!(poll_ns(&default, &three), 0, "ranks that may share a host do not poll by default");
    let told = TargetFlags { poll_us: Some(50), ..TargetFlags::default() };
    assert_eq!(poll_ns(&told, &three), 50_000, "--poll-us is obeyed by every rank");
    let off = TargetFlags { poll_us: Some(0), ..TargetFlags::default() };
    assert_eq!(poll_ns(&off, &one), 0);
}
