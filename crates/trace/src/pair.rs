//! Pairing of blkparse requests with their completions, for the latency a trace recorded.
//!
//! A blkparse trace states a request's issue (`D`, or `Q` when it was queued) and its
//! completion (`C`, same device and start sector) on different lines, with other requests in
//! between. [`Pairing`] is the reorder buffer that joins them without changing what the
//! reader yields: kept requests wait in a FIFO, in file order, until their completion is
//! seen; the front is released as soon as it is resolved, with latency = completion time −
//! issue time. A request whose completion cannot come (merged into another request,
//! requeued) or does not come within [`MAX_AGE_NS`] of trace time, or that is pushed out by
//! [`MAX_PENDING`] later requests, is released with no latency; so is everything left at the
//! end of the input. Memory is bounded by the requests outstanding (at most `MAX_PENDING`),
//! not by the trace's length.
//!
//! Until the first completion of a kept device is seen, the count limit is
//! [`EARLY_PENDING`] and the hash map is not kept (an orphaning event searches the few
//! requests held from the newest): a trace without completion lines (`blkparse -a queue`,
//! or a capture filtered to one action) is neither held back by a million requests at a time
//! nor made to pay for a map it never uses. The first completion indexes the requests held.
//! Only a trace whose device has more than `EARLY_PENDING` requests outstanding before its
//! first completion loses latencies by this, for its first requests.
//!
//! Completions are found by `(device, start offset, op)` in a hash map of FIFO positions; a
//! completion resolves the oldest open request with that key, an orphaning event (`M`, `F`,
//! `R`) the newest.

use std::collections::{HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hash, Hasher};

use crate::request::{Op, Request};

/// Requests held at most: the oldest is released without latency beyond this.
pub(crate) const MAX_PENDING: usize = 1 << 20;
/// Requests held at most while no completion has been seen yet.
pub(crate) const EARLY_PENDING: usize = 16 * 1024;
/// Trace time after which a request still waiting for its completion is released without
/// latency: 60 s (above the 30 s default command timeout of SCSI and NVMe).
pub(crate) const MAX_AGE_NS: u64 = 60_000_000_000;

/// The key a request and its completion share.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) struct Key {
    pub offset: u64,
    /// The reader's dense device id.
    pub dev: u32,
    pub op: Op,
}

impl Hash for Key {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        let op = match self.op {
            Op::Read => 0u64,
            Op::Write => 1,
            Op::Discard => 2,
            Op::Flush => 3,
        };
        state.write_u64(self.offset ^ ((u64::from(self.dev) << 34) | (op << 32)).rotate_left(24));
    }
}

/// One multiply-xorshift round over the single `u64` a [`Key`] writes (MurmurHash3's
/// finaliser): keys are offsets with many zero low bits, which a plain multiply would leave
/// in the bucket index.
#[derive(Default)]
pub(crate) struct KeyHasher(u64);

impl Hasher for KeyHasher {
    #[inline]
    fn write_u64(&mut self, v: u64) {
        let mut z = self.0 ^ v;
        z = (z ^ (z >> 33)).wrapping_mul(0xff51_afd7_ed55_8ccd);
        z = (z ^ (z >> 33)).wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        self.0 = z ^ (z >> 33);
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.write_u64(u64::from(*b));
        }
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// The open requests of one key, by sequence number, oldest first. Nearly always one (and
/// then no allocation).
enum Waiters {
    One(u64),
    Many(VecDeque<u64>),
}

struct Pending {
    req: Request,
    /// Issue time in the trace's own clock.
    t_ns: u64,
    lat: Option<u64>,
    /// Still waiting for its completion.
    open: bool,
}

/// The reorder buffer; see the [module documentation](self).
pub(crate) struct Pairing {
    queue: VecDeque<Pending>,
    /// Sequence number of `queue[0]`.
    base: u64,
    waiting: HashMap<Key, Waiters, BuildHasherDefault<KeyHasher>>,
    /// Latest time seen, in the trace's own clock.
    now: u64,
    /// A completion of a kept device has been seen: from then on, `waiting` indexes the open
    /// requests.
    completions: bool,
    max_pending: usize,
    early_pending: usize,
    max_age_ns: u64,
}

impl Key {
    fn of(req: &Request) -> Key {
        Key { offset: req.offset, dev: req.dev, op: req.op }
    }
}

impl Pairing {
    pub(crate) fn new() -> Pairing {
        Pairing::with_limits(MAX_PENDING, EARLY_PENDING, MAX_AGE_NS)
    }

    pub(crate) fn with_limits(max_pending: usize, early_pending: usize, max_age_ns: u64) -> Pairing {
        Pairing {
            queue: VecDeque::new(),
            base: 0,
            waiting: HashMap::default(),
            now: 0,
            completions: false,
            max_pending: max_pending.max(1),
            early_pending: early_pending.clamp(1, max_pending.max(1)),
            max_age_ns,
        }
    }

    /// Requests held.
    pub(crate) fn len(&self) -> usize {
        self.queue.len()
    }

    /// A kept request, issued at `t_ns` (trace clock), waiting for its completion.
    pub(crate) fn push(&mut self, req: Request, t_ns: u64) {
        self.now = self.now.max(t_ns);
        let seq = self.base + self.queue.len() as u64;
        let key = Key::of(&req);
        self.queue.push_back(Pending { req, t_ns, lat: None, open: true });
        if self.completions {
            self.index(key, seq);
        }
    }

    /// Adds open request `seq` to the waiters of `key`.
    fn index(&mut self, key: Key, seq: u64) {
        match self.waiting.get_mut(&key) {
            None => {
                self.waiting.insert(key, Waiters::One(seq));
            }
            Some(w) => match w {
                Waiters::One(first) => *w = Waiters::Many(VecDeque::from([*first, seq])),
                Waiters::Many(q) => q.push_back(seq),
            },
        }
    }

    /// The completion of the oldest open request with this key, at `t_ns`. A completion
    /// later than the age limit is not recorded: the request was given up at that age.
    pub(crate) fn complete(&mut self, key: Key, t_ns: u64) {
        self.now = self.now.max(t_ns);
        if !self.completions {
            self.completions = true;
            for i in 0..self.queue.len() {
                if let Some(p) = self.queue.get(i).filter(|p| p.open) {
                    let key = Key::of(&p.req);
                    self.index(key, self.base + i as u64);
                }
            }
        }
        let max_age = self.max_age_ns;
        if let Some(seq) = self.take(key, false) {
            if let Some(p) = self.get_mut(seq) {
                p.lat = Some(t_ns.saturating_sub(p.t_ns)).filter(|l| *l <= max_age);
                p.open = false;
            }
        }
    }

    /// The newest open request with this key will have no completion of its own.
    pub(crate) fn orphan(&mut self, key: Key, t_ns: u64) {
        self.now = self.now.max(t_ns);
        if let Some(seq) = self.take(key, true) {
            if let Some(p) = self.get_mut(seq) {
                p.open = false;
            }
        }
    }

    /// The oldest request, if it is resolved, or if the limits say to stop waiting for it.
    pub(crate) fn pop_ready(&mut self) -> Option<(Request, Option<u64>)> {
        let front = self.queue.front()?;
        if front.open {
            let too_old = self.now.saturating_sub(front.t_ns) > self.max_age_ns;
            let limit = if self.completions { self.max_pending } else { self.early_pending };
            if !too_old && self.queue.len() <= limit {
                return None;
            }
        }
        self.pop_front()
    }

    /// The oldest request, resolved or not (at the end of the input).
    pub(crate) fn pop_front(&mut self) -> Option<(Request, Option<u64>)> {
        let p = self.queue.pop_front()?;
        let seq = self.base;
        self.base += 1;
        if p.open && self.completions {
            self.remove(Key::of(&p.req), seq);
        }
        Some((p.req, p.lat))
    }

    fn get_mut(&mut self, seq: u64) -> Option<&mut Pending> {
        let i = usize::try_from(seq.checked_sub(self.base)?).ok()?;
        self.queue.get_mut(i)
    }

    /// Removes and returns the oldest (or newest) open request of `key`.
    fn take(&mut self, key: Key, newest: bool) -> Option<u64> {
        if !self.completions {
            // No index yet (only orphaning events come here): the newest, from the back.
            let i = self.queue.iter().rposition(|p| p.open && Key::of(&p.req) == key)?;
            return Some(self.base + i as u64);
        }
        let w = self.waiting.get_mut(&key)?;
        let (seq, left) = match w {
            Waiters::One(seq) => (*seq, None),
            Waiters::Many(q) => {
                let seq = if newest { q.pop_back() } else { q.pop_front() }?;
                (seq, (q.len() == 1).then(|| q.front().copied()).flatten())
            }
        };
        match left {
            Some(last) => *w = Waiters::One(last),
            None if matches!(w, Waiters::One(_)) => {
                self.waiting.remove(&key);
            }
            None => {}
        }
        Some(seq)
    }

    /// Removes request `seq` from the waiters of `key`.
    fn remove(&mut self, key: Key, seq: u64) {
        let Some(w) = self.waiting.get_mut(&key) else { return };
        let gone = match w {
            Waiters::One(s) => *s == seq,
            Waiters::Many(q) => {
                q.retain(|s| *s != seq);
                if let [last] = q.make_contiguous() {
                    *w = Waiters::One(*last);
                    false
                } else {
                    q.is_empty()
                }
            }
        };
        if gone {
            self.waiting.remove(&key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(offset: u64) -> Request {
        Request { t_ns: 0, offset, len: 512, op: Op::Read, dev: 0 }
    }

    fn key(offset: u64) -> Key {
        Key { offset, dev: 0, op: Op::Read }
    }

    fn drain(p: &mut Pairing) -> Vec<(u64, Option<u64>)> {
        std::iter::from_fn(|| p.pop_front()).map(|(r, l)| (r.offset, l)).collect()
    }

    #[test]
    fn releases_in_order_once_resolved() {
        let mut p = Pairing::new();
        p.push(req(0), 10);
        p.push(req(8), 20);
        p.complete(key(8), 25);
        assert!(p.pop_ready().is_none(), "the front is still open");
        p.complete(key(0), 40);
        assert_eq!(p.pop_ready().map(|(r, l)| (r.offset, l)), Some((0, Some(30))));
        assert_eq!(p.pop_ready().map(|(r, l)| (r.offset, l)), Some((8, Some(5))));
        assert!(p.pop_ready().is_none());
        assert!(p.waiting.is_empty());
    }

    #[test]
    fn same_key_completes_oldest_and_orphans_newest() {
        let mut p = Pairing::new();
        p.push(req(0), 0);
        p.push(req(0), 1);
        p.push(req(0), 2);
        p.orphan(key(0), 3);
        p.complete(key(0), 10);
        p.complete(key(0), 20);
        p.complete(key(0), 30);
        assert_eq!(drain(&mut p), [(0, Some(10)), (0, Some(19)), (0, None)]);
        assert!(p.waiting.is_empty());
    }

    #[test]
    fn the_first_completion_indexes_the_requests_held() {
        let mut p = Pairing::new();
        p.push(req(0), 0);
        p.push(req(8), 1);
        p.orphan(key(8), 2);
        p.push(req(0), 3);
        assert!(p.waiting.is_empty(), "no index before a completion");
        p.complete(key(0), 10);
        p.complete(key(0), 13);
        p.push(req(16), 14);
        p.complete(key(16), 15);
        assert!(p.waiting.is_empty());
        assert_eq!(drain(&mut p), [(0, Some(10)), (8, None), (0, Some(10)), (16, Some(1))]);
    }

    #[test]
    fn limits_release_without_latency() {
        let mut p = Pairing::with_limits(2, 1, 100);
        // Before any completion, the early limit: 1.
        p.push(req(40), 0);
        p.push(req(48), 0);
        assert_eq!(p.pop_ready().map(|(r, l)| (r.offset, l)), Some((40, None)), "early count limit");
        p.complete(key(48), 0);
        assert_eq!(p.pop_ready().map(|(r, l)| (r.offset, l)), Some((48, Some(0))));
        p.push(req(0), 0);
        p.push(req(8), 1);
        assert!(p.pop_ready().is_none());
        p.push(req(16), 2);
        assert_eq!(p.pop_ready().map(|(r, l)| (r.offset, l)), Some((0, None)), "count limit");
        assert!(p.pop_ready().is_none());
        p.complete(key(0), 3);
        assert!(p.pop_ready().is_none(), "a released request is no longer waited for");
        p.push(req(24), 102);
        assert_eq!(p.pop_ready().map(|(r, l)| (r.offset, l)), Some((8, None)), "age limit");
        assert!(p.pop_ready().is_none());
        assert_eq!(p.len(), 2);
        assert_eq!(drain(&mut p), [(16, None), (24, None)]);
        assert!(p.waiting.is_empty());
    }

    #[test]
    fn removing_from_the_middle_of_a_key() {
        let mut p = Pairing::with_limits(1, 1, u64::MAX);
        p.push(req(0), 0);
        p.push(req(0), 1);
        // The count limit releases the first; the second still waits under the key.
        assert_eq!(p.pop_ready().map(|(_, l)| l), Some(None));
        p.complete(key(0), 5);
        assert_eq!(p.pop_ready().map(|(_, l)| l), Some(Some(4)));
        assert!(p.waiting.is_empty());
    }
}
