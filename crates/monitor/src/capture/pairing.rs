//! Joining each request's issue with its completion. Pure: events in (in time order),
//! completed requests out, in issue order.
//!
//! Issued requests wait in a FIFO in issue order; a completion finds its request by
//! (start sector, operation) — the oldest open one with that key — and the front of the FIFO
//! is released as soon as it is complete. A completion of part of a request (a driver may
//! complete a request in pieces) moves the key to the rest. A requeued request is dropped (its
//! reissue is a new request). A completion that finds no request was issued before the
//! capture started. A request with no completion within [`MAX_WAIT_NS`] is dropped so it cannot
//! hold back everything after it; requests still open at the end were in flight.

use std::collections::{HashMap, VecDeque};

use super::ring::{Kind, OpClass, RawEvent};

/// A request open this long (trace time) is given up on.
pub const MAX_WAIT_NS: u64 = 60_000_000_000;

/// A request with its issue time and latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Completed {
    /// Trace clock, ns.
    pub issue_ns: u64,
    pub latency_ns: u64,
    pub sector: u64,
    pub bytes: u64,
    pub op: OpClass,
    pub error: bool,
}

/// What was seen but not released.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PairCounts {
    pub unmatched_completions: u64,
    pub requeued: u64,
    pub no_completion: u64,
    pub in_flight_at_end: u64,
    pub other_ops: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    Done { latency_ns: u64, error: bool },
    Dropped,
}

#[derive(Debug, Clone, Copy)]
struct Slot {
    issue_ns: u64,
    sector: u64,
    bytes: u64,
    op: OpClass,
    /// Sectors not completed yet, and the sector they start at (the key of an open slot).
    left: u64,
    at: u64,
    state: State,
}

type Key = (u64, OpClass);

/// The reorder buffer.
#[derive(Debug, Default)]
pub struct Pairing {
    slots: VecDeque<Slot>,
    /// Sequence number of `slots[0]`.
    first: u64,
    /// Open requests by key: their sequence numbers, oldest first.
    open: HashMap<Key, VecDeque<u64>>,
    pub counts: PairCounts,
}

impl Pairing {
    pub fn new() -> Self {
        Self::default()
    }

    /// Requests waiting (open, or complete behind an open one).
    pub fn pending(&self) -> usize {
        self.slots.len()
    }

    fn slot(&mut self, seq: u64) -> Option<&mut Slot> {
        let i = usize::try_from(seq.checked_sub(self.first)?).ok()?;
        self.slots.get_mut(i)
    }

    fn take_open(&mut self, key: Key, newest: bool) -> Option<u64> {
        let q = self.open.get_mut(&key)?;
        let seq = if newest { q.pop_back() } else { q.pop_front() };
        if q.is_empty() {
            self.open.remove(&key);
        }
        seq
    }

    /// Takes one event; events must come in time order.
    pub fn event(&mut self, e: &RawEvent) {
        match e.kind {
            Kind::Issue => self.issue(e),
            Kind::Complete => self.complete(e),
            Kind::Requeue => {
                if let Some(seq) = self.take_open((e.sector, e.op), true) {
                    if let Some(s) = self.slot(seq) {
                        s.state = State::Dropped;
                    }
                    self.counts.requeued += 1;
                }
            }
        }
    }

    fn issue(&mut self, e: &RawEvent) {
        if e.op == OpClass::Other {
            self.counts.other_ops += 1;
            return;
        }
        let bytes = if e.bytes > 0 { u64::from(e.bytes) } else { u64::from(e.sectors) * 512 };
        let seq = self.first + self.slots.len() as u64;
        self.slots.push_back(Slot {
            issue_ns: e.ts,
            sector: e.sector,
            bytes,
            op: e.op,
            left: u64::from(e.sectors),
            at: e.sector,
            state: State::Open,
        });
        self.open.entry((e.sector, e.op)).or_default().push_back(seq);
    }

    fn complete(&mut self, e: &RawEvent) {
        if e.op == OpClass::Other {
            return;
        }
        let Some(seq) = self.take_open((e.sector, e.op), false) else {
            self.counts.unmatched_completions += 1;
            return;
        };
        let Some(s) = self.slot(seq) else { return };
        let done = u64::from(e.sectors);
        if done > 0 && done < s.left {
            // Part of the request: the rest completes later, from the next sector on.
            s.left -= done;
            s.at = e.sector + done;
            let key = (s.at, s.op);
            self.open.entry(key).or_default().push_front(seq);
            return;
        }
        s.state = State::Done { latency_ns: e.ts.saturating_sub(s.issue_ns), error: e.error };
    }

    /// Releases the complete requests at the front, in issue order; a request open since
    /// before `now_ns - MAX_WAIT_NS` is dropped. `sink` errors stop the release.
    pub fn release<E>(&mut self, now_ns: u64, sink: &mut dyn FnMut(&Completed) -> Result<(), E>) -> Result<(), E> {
        while let Some(front) = self.slots.front().copied() {
            match front.state {
                State::Open if now_ns.saturating_sub(front.issue_ns) > MAX_WAIT_NS => {
                    self.forget(front);
                    self.counts.no_completion += 1;
                }
                State::Open => break,
                State::Dropped => {}
                State::Done { latency_ns, error } => sink(&Completed {
                    issue_ns: front.issue_ns,
                    latency_ns,
                    sector: front.sector,
                    bytes: front.bytes,
                    op: front.op,
                    error,
                })?,
            }
            self.slots.pop_front();
            self.first += 1;
        }
        Ok(())
    }

    /// Removes an open slot's key (it is about to leave the FIFO).
    fn forget(&mut self, s: Slot) {
        let seq = self.first;
        let key = (s.at, s.op);
        if let Some(q) = self.open.get_mut(&key) {
            q.retain(|&x| x != seq);
            if q.is_empty() {
                self.open.remove(&key);
            }
        }
    }

    /// The end: releases every complete request; the open ones were in flight.
    pub fn finish<E>(mut self, sink: &mut dyn FnMut(&Completed) -> Result<(), E>) -> Result<PairCounts, E> {
        while !self.slots.is_empty() {
            self.release(0, sink)?;
            if let Some(front) = self.slots.pop_front() {
                self.first += 1;
                if front.state == State::Open {
                    self.counts.in_flight_at_end += 1;
                }
            }
        }
        Ok(self.counts)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn ev(ts: u64, kind: Kind, sector: u64, sectors: u32, op: OpClass) -> RawEvent {
        RawEvent { ts, kind, dev: 1, sector, sectors, bytes: sectors * 512, op, error: false }
    }

    fn run(events: &[RawEvent]) -> (Vec<Completed>, PairCounts) {
        let mut p = Pairing::new();
        let mut out = Vec::new();
        for e in events {
            p.event(e);
            p.release(e.ts, &mut |c: &Completed| -> Result<(), ()> {
                out.push(*c);
                Ok(())
            })
            .unwrap();
        }
        let counts = p
            .finish(&mut |c: &Completed| -> Result<(), ()> {
                out.push(*c);
                Ok(())
            })
            .unwrap();
        (out, counts)
    }

    #[test]
    fn released_in_issue_order_with_latency() {
        use Kind::*;
        use OpClass::*;
        let (out, counts) = run(&[
            ev(100, Issue, 8, 8, Read),
            ev(110, Issue, 16, 8, Write),
            ev(120, Complete, 16, 8, Write),
            ev(150, Complete, 8, 8, Read),
        ]);
        assert_eq!(out.len(), 2);
        assert_eq!((out[0].issue_ns, out[0].latency_ns, out[0].op, out[0].bytes), (100, 50, Read, 4096));
        assert_eq!((out[1].issue_ns, out[1].latency_ns, out[1].op), (110, 10, Write));
        assert_eq!(counts, PairCounts::default());
    }

    #[test]
    fn same_sector_twice_completes_oldest_first() {
        use Kind::*;
        use OpClass::*;
        let (out, _) = run(&[
            ev(0, Issue, 8, 8, Write),
            ev(5, Issue, 8, 8, Write),
            ev(10, Complete, 8, 8, Write),
            ev(30, Complete, 8, 8, Write),
        ]);
        assert_eq!(out.iter().map(|c| c.latency_ns).collect::<Vec<_>>(), [10, 25]);
    }

    #[test]
    fn drops_are_counted() {
        use Kind::*;
        use OpClass::*;
        let (out, counts) = run(&[
            ev(0, Complete, 800, 8, Read), // issued before the start
            ev(1, Issue, 0, 0, Flush),
            ev(2, Issue, 8, 8, Other), // not a request the trace can hold
            ev(3, Issue, 64, 8, Read), // requeued, then reissued
            ev(4, Requeue, 64, 8, Read),
            ev(5, Issue, 64, 8, Read),
            ev(6, Complete, 0, 0, Flush),
            ev(7, Complete, 64, 8, Read),
            ev(8, Issue, 128, 8, Write), // still in flight at the end
        ]);
        assert_eq!(
            out.iter().map(|c| (c.op, c.issue_ns, c.latency_ns)).collect::<Vec<_>>(),
            [(Flush, 1, 5), (Read, 5, 2)]
        );
        assert_eq!(
            counts,
            PairCounts { unmatched_completions: 1, requeued: 1, no_completion: 0, in_flight_at_end: 1, other_ops: 1 }
        );
    }

    #[test]
    fn partial_completions_and_stuck_requests() {
        use Kind::*;
        use OpClass::*;
        let (out, counts) = run(&[
            ev(0, Issue, 0, 64, Read),
            ev(1, Issue, 1000, 8, Write),
            ev(10, Complete, 0, 32, Read),
            ev(20, Complete, 32, 32, Read),
            // the write never completes; a minute later it is given up on
            ev(MAX_WAIT_NS + 5, Issue, 2000, 8, Read),
            ev(MAX_WAIT_NS + 6, Complete, 2000, 8, Read),
        ]);
        assert_eq!(
            out.iter().map(|c| (c.issue_ns, c.latency_ns, c.bytes)).collect::<Vec<_>>(),
            [(0, 20, 32768), (MAX_WAIT_NS + 5, 1, 4096)]
        );
        assert_eq!(counts.no_completion, 1);
        assert_eq!(counts.in_flight_at_end, 0);
    }
}
