//! Sequential cut-off: per-device stream detection.
//!
//! Each device keeps [`STREAMS`] recent streams (end offset and length so far), so a few
//! interleaved sequential streams are told apart, as bcache's recent-I/O table does (traces
//! carry no process id). A request that starts exactly where a stream ended extends it;
//! any other request starts a new stream in the least recently used entry. A request is
//! bypassed when its stream, including the request, exceeds the cut-off.

use rustc_hash::FxHashMap;

/// Streams tracked per device.
pub const STREAMS: usize = 8;

#[derive(Debug, Clone, Copy, Default)]
struct Stream {
    end: u64,
    bytes: u64,
    used: u64,
}

/// The stream table of all devices.
#[derive(Debug, Clone)]
pub(crate) struct SeqDetector {
    cutoff: u64,
    devs: FxHashMap<u32, [Stream; STREAMS]>,
    tick: u64,
}

impl SeqDetector {
    /// A detector bypassing streams longer than `cutoff` bytes.
    pub(crate) fn new(cutoff: u64) -> Self {
        SeqDetector { cutoff, devs: FxHashMap::default(), tick: 0 }
    }

    /// Records a read or write of `[start, end)` on `dev`; returns whether it bypasses.
    pub(crate) fn observe(&mut self, dev: u32, start: u64, end: u64) -> bool {
        self.tick += 1;
        let streams = self.devs.entry(dev).or_default();
        let len = end - start;
        let idx = match streams.iter().position(|s| s.used != 0 && s.end == start) {
            Some(i) => {
                streams[i].bytes = streams[i].bytes.saturating_add(len);
                i
            }
            None => {
                let (i, _) = streams.iter().enumerate().min_by_key(|(_, s)| s.used).unwrap_or((0, &streams[0]));
                streams[i].bytes = len;
                i
            }
        };
        streams[idx].end = end;
        streams[idx].used = self.tick;
        streams[idx].bytes > self.cutoff
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interleaved_streams() {
        let mut d = SeqDetector::new(3 * 4096);
        // Two interleaved sequential streams on dev 0, one on dev 1.
        let mut bypassed = Vec::new();
        for i in 0..5u64 {
            bypassed.push(d.observe(0, i * 4096, (i + 1) * 4096));
            let o = (1 << 30) + i * 4096;
            bypassed.push(d.observe(0, o, o + 4096));
            d.observe(1, i * 4096, (i + 1) * 4096);
        }
        // 4th and 5th request of each stream exceed 3 x 4 KiB.
        assert_eq!(bypassed, [false, false, false, false, false, false, true, true, true, true]);
        // A random request starts over.
        assert!(!d.observe(0, 77 << 20, (77 << 20) + 4096));
    }
}
