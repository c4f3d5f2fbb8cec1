//! Word-level operations on a bitmap slice over a half-open bit range `[a, b)`.
//! Callers guarantee `a < b <= 64 * words.len()`.

/// The bits of word `w` that fall in `[a, b)`.
#[inline]
fn mask(w: usize, a: usize, b: usize) -> u64 {
    let lo = w * 64;
    let s = a.max(lo) - lo; // first bit in the word
    let e = b.min(lo + 64) - lo; // one past the last bit in the word
    if e <= s {
        return 0;
    }
    let high = if e == 64 { u64::MAX } else { (1u64 << e) - 1 };
    high & !((1u64 << s) - 1)
}

/// Iterates the word indices and masks of `[a, b)`.
#[inline]
fn words(a: usize, b: usize) -> impl Iterator<Item = (usize, u64)> {
    (a / 64..b.div_ceil(64)).map(move |w| (w, mask(w, a, b)))
}

/// Number of set bits in `[a, b)`.
#[inline]
pub(crate) fn count(bits: &[u64], a: usize, b: usize) -> u64 {
    words(a, b).map(|(w, m)| u64::from((bits[w] & m).count_ones())).sum()
}

/// Number of set bits in the whole slice.
#[inline]
pub(crate) fn count_all(bits: &[u64]) -> u64 {
    bits.iter().map(|w| u64::from(w.count_ones())).sum()
}

/// Whether bit `i` is set.
#[inline]
pub(crate) fn get(bits: &[u64], i: usize) -> bool {
    bits[i / 64] >> (i % 64) & 1 == 1
}

/// Sets `[a, b)`.
#[inline]
pub(crate) fn set(bits: &mut [u64], a: usize, b: usize) {
    for (w, m) in words(a, b) {
        bits[w] |= m;
    }
}

/// Clears `[a, b)`.
#[inline]
pub(crate) fn clear(bits: &mut [u64], a: usize, b: usize) {
    for (w, m) in words(a, b) {
        bits[w] &= !m;
    }
}

/// Number of maximal runs of set bits in `[a, b)`; with `inverted`, of clear bits.
#[inline]
pub(crate) fn runs(bits: &[u64], a: usize, b: usize, inverted: bool) -> u64 {
    let mut n = 0;
    let mut prev_top = false; // the bit just below the current word (inside the range)
    for (w, m) in words(a, b) {
        let x = if inverted { !bits[w] } else { bits[w] } & m;
        // a run starts at i when bit i is set and bit i-1 is not (or i is the range start)
        let below = (x << 1) | u64::from(prev_top && m & 1 == 1);
        n += u64::from((x & !below).count_ones());
        prev_top = x >> 63 == 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive_runs(bits: &[u64], a: usize, b: usize, inv: bool) -> u64 {
        let mut n = 0;
        let mut prev = false;
        for i in a..b {
            let v = get(bits, i) != inv;
            if v && !prev {
                n += 1;
            }
            prev = v;
        }
        n
    }

    #[test]
    fn ops_match_naive() {
        let mut bits = vec![0u64; 3];
        set(&mut bits, 3, 70);
        clear(&mut bits, 10, 12);
        set(&mut bits, 127, 129);
        for (a, b) in [(0, 192), (3, 70), (60, 130), (10, 12), (127, 128), (0, 1), (63, 65)] {
            let c = (a..b).filter(|&i| get(&bits, i)).count() as u64;
            assert_eq!(count(&bits, a, b), c, "count {a}..{b}");
            for inv in [false, true] {
                assert_eq!(runs(&bits, a, b, inv), naive_runs(&bits, a, b, inv), "runs {a}..{b} {inv}");
            }
        }
        assert_eq!(count_all(&bits), 67 - 2 + 2);
    }
}
