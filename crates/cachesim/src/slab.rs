//! A preallocated slab of cache entries with intrusive doubly linked lists (`u32` indices)
//! and an open-addressing index from key to slot. Several lists may share one slab
//! (S3-FIFO's small and main queues). No allocation after construction: the node vector and
//! the index are sized for the full capacity up front.
//!
//! Memory per entry: a [`Node`] (16 bytes: key, prev, next) plus the index, a table of `u32`
//! slot numbers only (the key lives in the node) with linear probing at a load factor of at
//! most 3/4: between 4/(3/4) ≈ 5.3 and 10.7 bytes per entry depending on how the capacity
//! rounds to a power of two. In all at most 27 bytes per cached entry (≤ 32, the target).

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
    index: Index,
}

/// Open-addressing table of slot numbers, linear probing, backward-shift deletion (no
/// tombstones, so lookups never degrade). Keys are read from the slab's nodes.
#[derive(Debug, Clone)]
struct Index {
    table: Vec<u32>,
    shift: u32,
    mask: usize,
    len: usize,
}

const EMPTY: u32 = u32::MAX;

impl Index {
    fn new(cap: usize) -> Self {
        // Load factor at most 3/4.
        let want = (cap.saturating_mul(4) / 3 + 1).max(8).next_power_of_two();
        let bits = want.trailing_zeros();
        Index { table: vec![EMPTY; want], shift: 64 - bits, mask: want - 1, len: 0 }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing: the top bits of key × 2^64/φ.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn find(&self, nodes: &[Node], key: u64) -> Option<usize> {
        let mut h = self.home(key);
        loop {
            let s = self.table[h];
            if s == EMPTY {
                return None;
            }
            if nodes[s as usize].key == key {
                return Some(h);
            }
            h = (h + 1) & self.mask;
        }
    }

    #[inline]
    fn insert(&mut self, key: u64, slot: u32) {
        let mut h = self.home(key);
        while self.table[h] != EMPTY {
            h = (h + 1) & self.mask;
        }
        self.table[h] = slot;
        self.len += 1;
    }

    #[inline]
    fn remove(&mut self, nodes: &[Node], key: u64) {
        let Some(mut i) = self.find(nodes, key) else { return };
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let s = self.table[j];
            if s == EMPTY {
                break;
            }
            let k = self.home(nodes[s as usize].key);
            // Move s back into the hole at i unless its home lies cyclically in (i, j].
            let stays = if i <= j { i < k && k <= j } else { i < k || k <= j };
            if !stays {
                self.table[i] = s;
                i = j;
            }
        }
        self.table[i] = EMPTY;
        self.len -= 1;
    }

    fn memory_bytes(&self) -> u64 {
        self.table.len() as u64 * 4
    }
}

impl Slab {
    /// A slab for `cap` entries (`cap < u32::MAX`), memory reserved up front. Node pages are
    /// only touched as slots come into use.
    pub(crate) fn new(cap: usize) -> Self {
        Slab { nodes: Vec::with_capacity(cap), cap, free: NIL, index: Index::new(cap) }
    }

    /// Capacity in entries.
    pub(crate) fn capacity(&self) -> usize {
        self.cap
    }

    /// Entries in use.
    pub(crate) fn len(&self) -> usize {
        self.index.len
    }

    /// Whether every slot is in use.
    pub(crate) fn is_full(&self) -> bool {
        self.index.len >= self.cap
    }

    /// The slot of `key`.
    #[inline]
    pub(crate) fn get(&self, key: u64) -> Option<u32> {
        self.index.find(&self.nodes, key).map(|h| self.index.table[h])
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
        self.index.insert(key, i);
        Some(i)
    }

    /// Removes `key` from `list` and frees its slot; false when it was not cached.
    #[inline]
    pub(crate) fn remove(&mut self, list: &mut List, key: u64) -> bool {
        match self.get(key) {
            Some(i) => {
                self.unlink(list, i);
                self.release(i);
                true
            }
            None => false,
        }
    }

    /// Returns slot `i` (already unlinked from its list) to the free list.
    #[inline]
    pub(crate) fn release(&mut self, i: u32) {
        let key = self.nodes[i as usize].key;
        self.index.remove(&self.nodes, key);
        self.nodes[i as usize].next = self.free;
        self.free = i;
    }

    /// Inserts `key` at the head of `list`, first evicting the tail of `list` when the slab
    /// is full. Returns the new slot (`None` if there was no room) and whether a tail was
    /// evicted. The caller makes sure `key` is not present.
    #[inline]
    pub(crate) fn insert_front_evicting(&mut self, list: &mut List, key: u64) -> (Option<u32>, bool) {
        let mut evicted = false;
        if self.is_full() {
            if let Some(t) = list.tail() {
                self.unlink(list, t);
                self.release(t);
                evicted = true;
            }
        }
        let slot = self.alloc(key);
        if let Some(i) = slot {
            self.push_front(list, i);
        }
        (slot, evicted)
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

    /// Heap bytes held (nodes reserved plus the index table).
    pub(crate) fn memory_bytes(&self) -> u64 {
        let node = std::mem::size_of::<Node>() as u64;
        self.nodes.capacity() as u64 * node + self.index.memory_bytes()
    }

    /// Index bytes per entry of capacity (5.3–10.7).
    pub(crate) fn index_bytes_per_entry(&self) -> f64 {
        self.index.memory_bytes() as f64 / self.cap.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The index agrees with a HashMap under random inserts and removals (backward-shift
    /// deletion keeps every key reachable).
    #[test]
    fn index_matches_a_hash_map() {
        use std::collections::HashMap;
        let cap = 1000;
        let mut s = Slab::new(cap);
        let mut l = List::default();
        let mut model: HashMap<u64, u32> = HashMap::new();
        let mut x = 0x1234_5678_u64;
        for step in 0..200_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // A small key space (with clustered keys) forces collisions and wrap-around.
            let key = (x % 3000) << if step.is_multiple_of(3) { 44 } else { 0 };
            match (model.get(&key).copied(), s.get(key)) {
                (Some(a), Some(b)) => {
                    assert_eq!(a, b);
                    if x.is_multiple_of(2) {
                        s.unlink(&mut l, b);
                        s.release(b);
                        model.remove(&key);
                    }
                }
                (None, None) => {
                    if s.is_full() {
                        let t = l.tail().expect("tail");
                        let k = s.key(t);
                        s.unlink(&mut l, t);
                        s.release(t);
                        model.remove(&k);
                    }
                    let i = s.alloc(key).expect("room");
                    s.push_front(&mut l, i);
                    model.insert(key, i);
                }
                (a, b) => panic!("key {key}: model {a:?} vs slab {b:?}"),
            }
            assert_eq!(s.len(), model.len());
        }
        for (k, v) in &model {
            assert_eq!(s.get(*k), Some(*v));
        }
    }

    #[test]
    fn memory_per_entry_is_within_32_bytes() {
        for cap in [1usize, 7, 100, 1000, 3000, 1 << 16, (1 << 16) + 1, 1_000_000] {
            let s = Slab::new(cap);
            let per = std::mem::size_of::<Node>() as f64 + s.index_bytes_per_entry();
            assert!(per <= 32.0 || cap < 8, "cap {cap}: {per} bytes per entry");
        }
    }

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
