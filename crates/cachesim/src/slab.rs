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

/// Asks the CPU to start loading the cache line of `p`: a hint, with no effect on results.
/// Used to overlap the memory accesses of the next requests with the current one when the
/// cache is much larger than the CPU's caches.
#[inline(always)]
pub(crate) fn prefetch<T>(p: &T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults and changes no state, whatever the address (here a
    // valid reference); `_mm_prefetch` is `unsafe` only for its target feature, SSE, which
    // every x86-64 CPU has.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(std::ptr::from_ref(p).cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

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
///
/// While slot numbers fit in 24 bits (fewer than 2^24 − 1 entries) each entry also holds, in
/// its top 8 bits, its distance from its home entry (saturated at 255, "unknown"): a lookup
/// then reads only the nodes of the entries that share its home, and a deletion moves entries
/// back without reading a node at all. With a cache that does not fit the CPU's caches, every
/// node read is a trip to RAM, and these were most of them.
#[derive(Debug, Clone)]
struct Index {
    table: Vec<u32>,
    shift: u32,
    mask: usize,
    len: usize,
    /// Whether entries carry their distance from home (slot numbers below 2^24 − 1).
    with_distance: bool,
}

const EMPTY: u32 = u32::MAX;
/// Bits of a slot number in an entry that carries its distance from home.
const SLOT_BITS: u32 = 24;
const SLOT_MASK: u32 = (1 << SLOT_BITS) - 1;
/// A distance from home too large to record: the home is computed from the node's key.
const FAR: usize = 255;

impl Index {
    fn new(cap: usize) -> Self {
        Index::with_layout(cap, cap < SLOT_MASK as usize)
    }

    fn with_layout(cap: usize, with_distance: bool) -> Self {
        // Load factor at most 3/4.
        let want = (cap.saturating_mul(4) / 3 + 1).max(8).next_power_of_two();
        let bits = want.trailing_zeros();
        Index { table: vec![EMPTY; want], shift: 64 - bits, mask: want - 1, len: 0, with_distance }
    }

    #[inline]
    fn home(&self, key: u64) -> usize {
        // Fibonacci hashing: the top bits of key × 2^64/φ.
        (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    /// The slot number of an (occupied) entry.
    #[inline]
    fn slot(&self, e: u32) -> u32 {
        if self.with_distance {
            e & SLOT_MASK
        } else {
            e
        }
    }

    /// The recorded distance of an entry from its home ([`FAR`]: not recorded).
    #[inline]
    fn distance(&self, e: u32) -> usize {
        if self.with_distance {
            (e >> SLOT_BITS) as usize
        } else {
            FAR
        }
    }

    /// The entry of `slot` at `distance` from its home.
    #[inline]
    fn entry(&self, slot: u32, distance: usize) -> u32 {
        if self.with_distance {
            slot | ((distance.min(FAR) as u32) << SLOT_BITS)
        } else {
            slot
        }
    }

    /// The position of `key`'s entry.
    #[inline]
    fn find(&self, nodes: &[Node], key: u64) -> Option<usize> {
        let mut h = self.home(key);
        let mut d = 0;
        loop {
            let e = self.table[h];
            if e == EMPTY {
                return None;
            }
            let dist = self.distance(e);
            if (dist == d || dist == FAR) && nodes[self.slot(e) as usize].key == key {
                return Some(h);
            }
            h = (h + 1) & self.mask;
            d = (d + 1).min(FAR);
        }
    }

    #[inline]
    fn insert(&mut self, key: u64, slot: u32) {
        let mut h = self.home(key);
        let mut d = 0;
        while self.table[h] != EMPTY {
            h = (h + 1) & self.mask;
            d += 1;
        }
        self.table[h] = self.entry(slot, d);
        self.len += 1;
    }

    /// Removes the entry of `slot`, whose key is `key`.
    #[inline]
    fn remove(&mut self, nodes: &[Node], key: u64, slot: u32) {
        let mut i = self.home(key);
        loop {
            let e = self.table[i];
            if e == EMPTY {
                return;
            }
            if self.slot(e) == slot {
                break;
            }
            i = (i + 1) & self.mask;
        }
        let mut j = i;
        loop {
            j = (j + 1) & self.mask;
            let e = self.table[j];
            if e == EMPTY {
                break;
            }
            let s = self.slot(e);
            let k = match self.distance(e) {
                FAR => self.home(nodes[s as usize].key),
                d => j.wrapping_sub(d) & self.mask,
            };
            // Move the entry back into the hole at i unless its home lies cyclically in (i, j].
            let stays = if i <= j { i < k && k <= j } else { i < k || k <= j };
            if !stays {
                self.table[i] = self.entry(s, i.wrapping_sub(k) & self.mask);
                i = j;
            }
        }
        self.table[i] = EMPTY;
        self.len -= 1;
    }

    fn memory_bytes(&self) -> u64 {
        self.table.len() as u64 * 4
    }

    /// The table entry where the search for `key` starts.
    #[inline]
    fn home_entry(&self, key: u64) -> &u32 {
        &self.table[self.home(key) & self.mask]
    }
}

impl Slab {
    /// A slab for `cap` entries (`cap < u32::MAX`), memory reserved up front. Node pages are
    /// only touched as slots come into use.
    pub(crate) fn new(cap: usize) -> Self {
        Slab { nodes: Vec::with_capacity(cap), cap, free: NIL, index: Index::new(cap) }
    }

    /// A slab whose index records distances from home or not, whatever its capacity.
    #[cfg(test)]
    fn with_layout(cap: usize, with_distance: bool) -> Self {
        Slab { nodes: Vec::with_capacity(cap), cap, free: NIL, index: Index::with_layout(cap, with_distance) }
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
        self.index.find(&self.nodes, key).map(|h| self.index.slot(self.index.table[h]))
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
        self.index.remove(&self.nodes, key, i);
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

    /// Prefetch, first stage: the index entry where the search for `key` starts.
    #[inline]
    pub(crate) fn prefetch_index(&self, key: u64) {
        prefetch(self.index.home_entry(key));
    }

    /// Prefetch, second stage (once the index entry is likely in the CPU cache): the node
    /// that entry names, which is `key`'s node when `key` is cached at its home.
    #[inline]
    pub(crate) fn prefetch_node(&self, key: u64) {
        if let Some(n) = self.nodes.get(self.index.slot(*self.index.home_entry(key)) as usize) {
            prefetch(n);
        }
    }

    /// Prefetch, third stage (once the node is likely in the CPU cache): if `key` is cached
    /// at its home, the neighbours a move to the front will relink.
    #[inline]
    pub(crate) fn prefetch_neighbours(&self, key: u64) {
        if let Some(n) = self.nodes.get(self.index.slot(*self.index.home_entry(key)) as usize) {
            if n.key == key {
                for i in [n.prev, n.next] {
                    if let Some(m) = self.nodes.get(i as usize) {
                        prefetch(m);
                    }
                }
            }
        }
    }

    /// After an eviction from `list`: the next victim's index entry and node, and the node of
    /// the one after it, so the next eviction finds them in the CPU cache.
    #[inline]
    pub(crate) fn prefetch_victims(&self, list: &List) {
        if let Some(n) = list.tail().and_then(|t| self.nodes.get(t as usize)) {
            prefetch(self.index.home_entry(n.key));
            if let Some(m) = self.nodes.get(n.prev as usize) {
                prefetch(m);
            }
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

    /// Both index layouts agree with a HashMap, with keys that crowd a few home entries
    /// (long runs: distances beyond what an entry records) and keys spread out.
    #[test]
    fn both_index_layouts_match_a_hash_map() {
        use std::collections::HashMap;
        let phi = 0x9E37_79B9_7F4A_7C15u64;
        let mut inverse = phi;
        for _ in 0..6 {
            inverse = inverse.wrapping_mul(2u64.wrapping_sub(phi.wrapping_mul(inverse)));
        }
        assert_eq!(phi.wrapping_mul(inverse), 1);
        let mut longest = 0;
        for with_distance in [true, false] {
            for crowded in [true, false] {
                let cap = 600;
                let mut s = Slab::with_layout(cap, with_distance);
                let mut l = List::default();
                let mut model: HashMap<u64, u32> = HashMap::new();
                let mut x = 0x9E37_79B9_u64;
                for step in 0..30_000u64 {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    // Crowded: j × φ⁻¹ (mod 2^64) hashes to j, so these keys share home 0.
                    let key =
                        if crowded && !step.is_multiple_of(4) { (x % 300).wrapping_mul(inverse) } else { x % 2000 };
                    match (model.get(&key).copied(), s.get(key)) {
                        (Some(a), Some(b)) => {
                            assert_eq!(a, b);
                            if x.is_multiple_of(3) {
                                s.unlink(&mut l, b);
                                s.release(b);
                                model.remove(&key);
                            } else {
                                s.move_to_front(&mut l, b);
                            }
                        }
                        (None, None) => {
                            let (slot, evicted) = s.insert_front_evicting(&mut l, key);
                            if evicted {
                                model.retain(|k, _| s.get(*k).is_some());
                            }
                            model.insert(key, slot.expect("room"));
                        }
                        (a, b) => panic!("key {key}: model {a:?} vs slab {b:?} ({with_distance}, {crowded})"),
                    }
                    assert_eq!(s.len(), model.len());
                    if crowded && with_distance && step.is_multiple_of(64) {
                        longest = longest.max(s.index.table.iter().filter(|&&e| e >> SLOT_BITS == FAR as u32).count());
                    }
                }
                for (k, v) in &model {
                    assert_eq!(s.get(*k), Some(*v));
                }
            }
        }
        assert!(longest > 0, "some entries were too far from home to record");
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
