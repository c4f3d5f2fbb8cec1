//! The live mark: events from the service's thread fan out to every browser watching, and a
//! browser that joins late first gets a snapshot of everything so far.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::broadcast;

use crate::events::{MarkEvent, Snapshot};

/// Events a slow browser may fall behind by before it is sent a fresh snapshot instead.
const BACKLOG: usize = 256;

/// Where a running mark reports. Cheap to clone; `send` never blocks and works from any thread.
#[derive(Clone)]
pub struct EventSink {
    hub: Arc<Hub>,
    generation: u64,
}

impl EventSink {
    /// Report one event. Events of a mark that a newer one has replaced are dropped.
    pub fn send(&self, ev: MarkEvent) {
        self.hub.publish(self.generation, ev);
    }

    /// A sink not connected to any server (for a service's own tests).
    pub fn detached() -> Self {
        Hub::new().sink()
    }
}

impl std::fmt::Debug for EventSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventSink").field("generation", &self.generation).finish()
    }
}

/// The current mark's state and its subscribers.
pub(crate) struct Hub {
    state: Mutex<State>,
    tx: broadcast::Sender<MarkEvent>,
    next_generation: AtomicU64,
}

struct State {
    generation: u64,
    snapshot: Snapshot,
}

impl Hub {
    pub(crate) fn new() -> Arc<Hub> {
        let (tx, _) = broadcast::channel(BACKLOG);
        Arc::new(Hub {
            state: Mutex::new(State { generation: 0, snapshot: Snapshot::default() }),
            tx,
            next_generation: AtomicU64::new(1),
        })
    }

    /// A sink for a mark about to be started. Its first event (or [`Hub::started`]) replaces
    /// the previous mark's state; a start that is refused leaves that state alone.
    pub(crate) fn sink(self: &Arc<Self>) -> EventSink {
        EventSink { hub: Arc::clone(self), generation: self.next_generation.fetch_add(1, Ordering::Relaxed) }
    }

    /// The service accepted the mark of `sink`.
    pub(crate) fn started(&self, sink: &EventSink, target: &str) {
        let mut st = self.lock();
        if self.enter(&mut st, sink.generation) {
            st.snapshot.running = true;
            if st.snapshot.target.is_none() {
                st.snapshot.target = Some(target.to_string());
            }
            let _ = self.tx.send(MarkEvent::Snapshot(st.snapshot.clone()));
        }
    }

    /// The state now, and a receiver of every event after it (taken under one lock, so that
    /// nothing is missed or seen twice).
    pub(crate) fn subscribe(&self) -> (Snapshot, broadcast::Receiver<MarkEvent>) {
        let st = self.lock();
        (st.snapshot.clone(), self.tx.subscribe())
    }

    pub(crate) fn snapshot(&self) -> Snapshot {
        self.lock().snapshot.clone()
    }

    fn publish(&self, generation: u64, ev: MarkEvent) {
        let mut st = self.lock();
        if !self.enter(&mut st, generation) {
            return;
        }
        st.snapshot.apply(&ev);
        let _ = self.tx.send(ev);
    }

    /// Move to `generation` if it is newer (a fresh state, announced to every watcher). False
    /// when `generation` is older than the current mark.
    fn enter(&self, st: &mut State, generation: u64) -> bool {
        if generation < st.generation {
            return false;
        }
        if generation > st.generation {
            st.generation = generation;
            st.snapshot = Snapshot { running: true, ..Snapshot::default() };
            let _ = self.tx.send(MarkEvent::Snapshot(st.snapshot.clone()));
        }
        true
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding this lock leaves a consistent snapshot (each update is one
        // assignment), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}
