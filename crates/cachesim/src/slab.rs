//! A preallocated slab of cache entries with intrusive doubly linked lists (`u32` indices)
//! and an `FxHashMap` from key to slot. Several lists may share one slab (S3-FIFO's small and
//! main queues). No allocation after construction: the node vector and the map are reserved
//! for the full capacity up front (hashbrown rehashes in place when deletions leave
//! tombstones, since the table never holds more than the reserved number of items).
//!
//! Memory per entry: a [`Node`] (16 bytes) plus one index entry (`u64` key + `u32` slot,
//! 16 bytes, plus one control byte) at a load factor between 7/16 and 7/8, i.e. about
//! 35–55 bytes per cached entry in all.

use rustc_hash::FxHashMap;

/// The "no node" index.
pub(crate) const NIL: u32 = u32::MAX;

/// One slab entry: its key and its neighbours in the list it belongs to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Node {
    pub(crate) key: u64,
    pub(crate) prev: u32,
    pub(crate) next: u32,
}

/// A list's head (most recent / newest) and tail (least recent / oldest).
#[derive(Debug, Clone, Copy)]
pub(crate) struct List {
    head: u32,
    tail: u32,
    len: u32,
}

impl Default for List {
    fn default() -> Self {
        List { head: NIL, tail: NIL, len: 0 }
    }
}

impl List {
    /// Entries in the list.
    pub(crate) fn len(&self) -> u32 {
        self.len
    }

    /// The tail (least recently used / oldest) entry.
    pub(crate) fn tail(&self) -> Option<u32> {
        (self.tail != NIL).then_some(self.tail)
    }
}

/// Slab of at most `cap` nodes, a free list and the key index.
#[derive(Debug, Clone)]
pub(crate) struct Slab {
    nodes: Vec<Node>,
    cap: usize,
    free: u32,
    map: FxHashMap<u64, u32>,
}

impl Slab {
    /// A slab for `cap` entries (`cap < u32::MAX`), memory reserved up front. Node pages are
    /// only touched as slots come into use.
    pub(crate) fn new(cap: usize) -> Self {
        let mut map = FxHashMap::default();
        map.reserve(cap);
        Slab { nodes: Vec::with_capacity(cap), cap, free: NIL, map }
    }

    /// Capacity in entries.
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Entries in use.
    pub(crate) fn len(&self) -> usize {
        self.map.len()
    }

    /// Whether every slot is in use.
    pub(crate) fn is_full(&self) -> bool {
        self.map.len() >= self.cap
    }

    /// The slot of `key`.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        self.map.get(&key).copied()
    }

    /// The key of slot `i`.
    #[inline]
    pub(crate) fn key(&self, i: u32) -> u64 {
        self.nodes[i as usize].key
    }

    /// Takes a free slot for `key` (not yet in any list); `None` when full. The caller makes
    /// sure `key` is not present.
    #[inline]
    pub(crate) fn alloc(&mut self, key: u64) -> Option<u32> {
        let i = if self.free != NIL {
            let i = self.free;
            self.free = self.nodes[i as usize].next;
            self.nodes[i as usize] = Node { key, prev: NIL, next: NIL };
            i
        } else if self.nodes.len() < self.cap {
            self.nodes.push(Node { key, prev: NIL, next: NIL });
            (self.nodes.len() - 1) as u32
        } else {
            return None;
        };
        self.map.insert(key, i);
        Some(i)
    }

    /// Returns slot `i` (already unlinked from its list) to the free list.
    #[inline]
    pub(crate) fn release(&mut self, i: u32) {
        let key = self.nodes[i as usize].key;
        self.map.remove(&key);
        self.nodes[i as usize].next = self.free;
        self.free = i;
    }

    /// Links `i` at the head of `list`.
    #[inline]
    pub(crate) fn push_front(&mut self, list: &mut List, i: u32) {
        let old = list.head;
        {
            let n = &mut self.nodes[i as usize];
            n.prev = NIL;
            n.next = old;
        }
        if old != NIL {
            self.nodes[old as usize].prev = i;
        } else {
            list.tail = i;
        }
        list.head = i;
        list.len += 1;
    }

    /// Unlinks `i` from `list`.
    #[inline]
    pub(crate) fn unlink(&mut self, list: &mut List, i: u32) {
        let Node { prev, next, .. } = self.nodes[i as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        } else {
            list.head = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        } else {
            list.tail = prev;
        }
        list.len -= 1;
    }

    /// Moves `i` (in `list`) to the head of `list`.
    #[inline]
    pub(crate) fn move_to_front(&mut self, list: &mut List, i: u32) {
        if list.head != i {
            self.unlink(list, i);
            self.push_front(list, i);
        }
    }

    /// Approximate heap bytes held (nodes reserved plus the index table).
    pub(crate) fn memory_bytes(&self) -> u64 {
        let node = std::mem::size_of::<Node>() as u64;
        let entry = std::mem::size_of::<(u64, u32)>() as u64 + 1;
        self.nodes.capacity() as u64 * node + self.map.capacity() as u64 * 8 / 7 * entry
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_is_small() {
        assert_eq!(std::mem::size_of::<Node>(), 16);
    }

    #[test]
    fn lru_order_and_reuse() {
        let mut s = Slab::new(3);
        let mut l = List::default();
        for k in [10, 20, 30] {
            let i = s.alloc(k).expect("room");
            s.push_front(&mut l, i);
        }
        assert!(s.alloc(40).is_none());
        let t = l.tail().expect("tail");
        assert_eq!(s.key(t), 10);
        let i20 = s.get(20).expect("20");
        s.move_to_front(&mut l, i20);
        s.unlink(&mut l, t);
        s.release(t);
        assert_eq!(s.get(10), None);
        let i = s.alloc(40).expect("reused");
        assert_eq!(i, t);
        s.push_front(&mut l, i);
        assert_eq!(s.key(l.tail().expect("tail")), 30);
        assert_eq!(l.len(), 3);
        assert_eq!(s.len(), 3);
    }
}
