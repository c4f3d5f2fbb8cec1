//! Payload contents: a pure function of (run seed, offset, generation), so the verifier can
//! regenerate any generation of any chunk without having stored it; or fio's
//! `verify_pattern` repeated.

/// The golden-ratio increment of SplitMix64.
const GOLDEN: u64 = 0x9E37_79B9_7F4A_7C15;

/// SplitMix64's finalizer: a bijective, avalanching 64-bit mix.
#[inline(always)]
pub fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The payload seed of one chunk: every (run, offset, generation) gets its own stream, so a
/// stale or misdirected chunk never has the bytes of the one expected.
pub fn payload_seed(run_seed: u64, offset: u64, generation: u32) -> u64 {
    // Each input goes through a full mix before the next is folded in: nearby offsets and
    // generations (the common case) land far apart.
    let a = mix64(run_seed ^ 0x444D_5646_5345_4544); // "DMVFSEED"
    let b = mix64(a.wrapping_add(offset));
    mix64(b ^ u64::from(generation).wrapping_mul(GOLDEN))
}

/// Fills `buf` from `seed`: word `i` (8 bytes, little-endian) is the SplitMix64 output
/// `mix64(seed + (i + 1) * GOLDEN)`; a tail shorter than 8 bytes takes the next word's first
/// bytes. Counter-based (no serial dependency but an add), incompressible, several GB/s.
pub fn fill_payload(seed: u64, buf: &mut [u8]) {
    let mut x = seed;
    let mut words = buf.chunks_exact_mut(8);
    for w in &mut words {
        x = x.wrapping_add(GOLDEN);
        w.copy_from_slice(&mix64(x).to_le_bytes());
    }
    let tail = words.into_remainder();
    if !tail.is_empty() {
        x = x.wrapping_add(GOLDEN);
        let n = tail.len();
        tail.copy_from_slice(&mix64(x).to_le_bytes()[..n]);
    }
}

/// Fills `buf` with `pattern` repeated from its first byte (zeros if `pattern` is empty).
pub fn fill_pattern(pattern: &[u8], buf: &mut [u8]) {
    if pattern.is_empty() {
        buf.fill(0);
        return;
    }
    let first = pattern.len().min(buf.len());
    buf[..first].copy_from_slice(&pattern[..first]);
    // Doubling copies: every copy is a whole number of patterns long (but the last), so a
    // few large memcpys replace one small copy per pattern.
    let mut filled = first;
    while filled < buf.len() {
        let n = filled.min(buf.len() - filled);
        buf.copy_within(..n, filled);
        filled += n;
    }
}

/// Whether `buf` is `pattern` repeated from its first byte (false for an empty pattern).
pub fn is_pattern(pattern: &[u8], buf: &[u8]) -> bool {
    let p = pattern.len();
    if p == 0 {
        return false;
    }
    if buf.len() <= p {
        return buf == &pattern[..buf.len()];
    }
    // Periodic with period p and starting with the pattern: one pass of two compares.
    buf[..p] == *pattern && buf[p..] == buf[..buf.len() - p]
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn payload_is_deterministic_and_seed_dependent() {
        let mut a = [0u8; 100];
        let mut b = [0u8; 100];
        fill_payload(1, &mut a);
        fill_payload(1, &mut b);
        assert_eq!(a, b);
        fill_payload(2, &mut b);
        assert_ne!(a[..], b[..]);
        // A prefix of a longer fill is the shorter fill (word i depends on i only).
        let mut c = [0u8; 37];
        fill_payload(1, &mut c);
        assert_eq!(c[..], a[..37]);
        assert_ne!(payload_seed(1, 0, 1), payload_seed(1, 0, 2));
        assert_ne!(payload_seed(1, 0, 1), payload_seed(1, 4096, 1));
        assert_ne!(payload_seed(1, 0, 1), payload_seed(2, 0, 1));
    }

    #[test]
    fn pattern_fill_and_match() {
        let mut b = [0u8; 10];
        fill_pattern(&[1, 2, 3], &mut b);
        assert_eq!(b, [1, 2, 3, 1, 2, 3, 1, 2, 3, 1]);
        assert!(is_pattern(&[1, 2, 3], &b));
        b[9] = 9;
        assert!(!is_pattern(&[1, 2, 3], &b));
        assert!(is_pattern(&[1, 2, 3], &b[..2]) && !is_pattern(&[1, 2, 3], &[1, 3]));
        for len in [0, 1, 4, 5, 511, 4000] {
            let mut v = vec![7u8; len];
            fill_pattern(b"abcde", &mut v);
            assert!(v.iter().enumerate().all(|(i, &x)| x == b"abcde"[i % 5]));
            assert!(is_pattern(b"abcde", &v));
            if len > 0 {
                v[len - 1] ^= 1;
                assert!(!is_pattern(b"abcde", &v));
            }
        }
        assert!(!is_pattern(&[], &b));
    }
}
