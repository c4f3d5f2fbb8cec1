//! Line splitting over an owned buffer: lines are handed out as slices of the buffer, so the
//! hot path neither copies a line nor makes a call through the `dyn Read` per line.

use std::io::{ErrorKind, Read};

/// Buffer size, and so the longest line accepted (trace lines are < 200 bytes; the bound
/// keeps memory flat on a file without newlines).
pub(crate) const LINE_BUF: usize = 256 * 1024;

/// A line's place in [`Lines::buf`]; `too_long` lines have no content.
pub(crate) struct Line {
    pub start: usize,
    pub end: usize,
    pub too_long: bool,
}

pub(crate) struct Lines<R: Read> {
    inner: R,
    buf: Box<[u8]>,
    start: usize,
    end: usize,
    eof: bool,
    /// Dropping the rest of a line that did not fit in the buffer.
    skipping: bool,
}

impl<R: Read> Lines<R> {
    pub(crate) fn new(inner: R) -> Self {
        Lines { inner, buf: vec![0u8; LINE_BUF].into_boxed_slice(), start: 0, end: 0, eof: false, skipping: false }
    }

    /// The bytes of a line returned by [`next_line`](Lines::next_line) (without `\n`).
    #[inline]
    pub(crate) fn get(&self, line: &Line) -> &[u8] {
        self.buf.get(line.start..line.end).unwrap_or_default()
    }

    /// The next line, `None` at the end of the input. The last line needs no `\n`.
    #[inline]
    pub(crate) fn next_line(&mut self) -> std::io::Result<Option<Line>> {
        if let Some(window) = self.buf.get(self.start..self.end) {
            if let Some(i) = memchr::memchr(b'\n', window) {
                if !self.skipping {
                    let line = Line { start: self.start, end: self.start + i, too_long: false };
                    self.start += i + 1;
                    return Ok(Some(line));
                }
            }
        }
        self.next_line_slow()
    }

    #[cold]
    fn next_line_slow(&mut self) -> std::io::Result<Option<Line>> {
        loop {
            let window = self.buf.get(self.start..self.end).unwrap_or_default();
            if let Some(i) = memchr::memchr(b'\n', window) {
                let line = Line { start: self.start, end: self.start + i, too_long: self.skipping };
                self.start += i + 1;
                self.skipping = false;
                return Ok(Some(line));
            }
            if self.eof {
                if self.start < self.end || self.skipping {
                    let line = Line { start: self.start, end: self.end, too_long: self.skipping };
                    self.start = self.end;
                    self.skipping = false;
                    return Ok(Some(line));
                }
                return Ok(None);
            }
            if self.start == 0 && self.end == self.buf.len() {
                // The line fills the whole buffer: drop what we have, find its end.
                self.skipping = true;
                self.end = 0;
            } else {
                self.buf.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            }
            let Some(space) = self.buf.get_mut(self.end..) else { return Ok(None) };
            match self.inner.read(space) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hands out at most `step` bytes per read, to cross every boundary.
    struct Trickle<'a>(&'a [u8], usize);
    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.1.min(out.len()).min(self.0.len());
            out[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    fn all(input: &[u8], step: usize) -> Vec<(Vec<u8>, bool)> {
        let mut l = Lines::new(Trickle(input, step));
        let mut out = Vec::new();
        while let Some(line) = l.next_line().unwrap() {
            out.push((l.get(&line).to_vec(), line.too_long));
        }
        out
    }

    #[test]
    fn splits_across_reads() {
        for step in [1, 2, 3, 7, 1 << 20] {
            let got = all(b"a\nbc\n\ndef", step);
            let want: Vec<(Vec<u8>, bool)> =
                vec![(b"a".to_vec(), false), (b"bc".to_vec(), false), (b"".to_vec(), false), (b"def".to_vec(), false)];
            assert_eq!(got, want, "step {step}");
            assert_eq!(all(b"x\n", step), vec![(b"x".to_vec(), false)]);
            assert!(all(b"", step).is_empty());
        }
    }

    #[test]
    fn overlong_lines_are_flagged_and_dropped() {
        let mut input = b"ok\n".to_vec();
        input.extend(std::iter::repeat_n(b'9', LINE_BUF * 2 + 5));
        input.extend_from_slice(b"\nnext\n");
        for step in [4096, 1 << 20] {
            let got = all(&input, step);
            assert_eq!(got.len(), 3);
            assert_eq!(got[0], (b"ok".to_vec(), false));
            assert!(got[1].1);
            assert_eq!(got[2], (b"next".to_vec(), false));
        }
        // An overlong last line without newline.
        let got = all(&vec![b'x'; LINE_BUF + 1], 1 << 20);
        assert_eq!(got.len(), 1);
        assert!(got[0].1);
    }
}
