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

/// Longest accepted pattern (fio's limit is 512 bytes).
pub const MAX_PATTERN: usize = 512;

/// Parses fio's `verify_pattern`: a sequence of `0x`-prefixed hex of any length (bytes in
/// the order written; an odd digit count gets a leading 0), decimal numbers (written as the
/// fewest big-endian bytes, as if given in hex) and quoted strings (`"abc"` or `'abc'`),
/// optionally separated by spaces or commas.
pub fn parse_pattern(s: &str) -> Result<Vec<u8>, String> {
    let err = |why: &str| {
        format!(
            "--verify-pattern: bad value '{s}' ({why}): give hex (0xdeadbeef), a decimal number (255) or a quoted \
             string (\"abc\")"
        )
    };
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
            let body = &rest[1..];
            let end = body.find(q).ok_or_else(|| err("unterminated string"))?;
            if end == 0 {
                return Err(err("empty string"));
            }
            out.extend_from_slice(&body.as_bytes()[..end]);
            rest = &body[end + 1..];
        } else if rest.starts_with("0x") || rest.starts_with("0X") {
            let digits: &str = &rest[2..rest[2..].find(|c: char| !c.is_ascii_hexdigit()).map_or(rest.len(), |i| i + 2)];
            if digits.is_empty() {
                return Err(err("no hex digits after 0x"));
            }
            out.extend(hex_bytes(digits));
            rest = &rest[2 + digits.len()..];
        } else if rest.starts_with(|c: char| c.is_ascii_digit()) {
            let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let n: u64 = rest[..end].parse().map_err(|_| err("number too large"))?;
            let bytes = n.to_be_bytes();
            let skip = (n.leading_zeros() / 8).min(7) as usize;
            out.extend_from_slice(&bytes[skip..]);
            rest = &rest[end..];
        } else {
            return Err(err("unexpected text"));
        }
        rest = rest.trim_start_matches([' ', ',', '\t']);
        if out.len() > MAX_PATTERN {
            return Err(err("longer than 512 bytes"));
        }
    }
    if out.is_empty() {
        return Err(err("empty"));
    }
    Ok(out)
}

/// Hex digits (already checked) to bytes, in order; an odd count gets a leading zero.
fn hex_bytes(digits: &str) -> Vec<u8> {
    let nib = |c: u8| char::from(c).to_digit(16).unwrap_or(0) as u8;
    let d = digits.as_bytes();
    let mut out = Vec::with_capacity(d.len().div_ceil(2));
    let mut i = 0;
    if d.len() % 2 == 1 {
        out.push(nib(d[0]));
        i = 1;
    }
    while i + 1 < d.len() {
        out.push(nib(d[i]) << 4 | nib(d[i + 1]));
        i += 2;
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn patterns_parse() {
        assert_eq!(parse_pattern("0xdeadbeef"), Ok(vec![0xde, 0xad, 0xbe, 0xef]));
        assert_eq!(parse_pattern("0xABC"), Ok(vec![0x0a, 0xbc]));
        assert_eq!(parse_pattern("255"), Ok(vec![0xff]));
        assert_eq!(parse_pattern("256"), Ok(vec![0x01, 0x00]));
        assert_eq!(parse_pattern("0"), Ok(vec![0]));
        assert_eq!(parse_pattern("\"abc\""), Ok(b"abc".to_vec()));
        assert_eq!(parse_pattern("'x y' 0x01, 2"), Ok(vec![b'x', b' ', b'y', 1, 2]));
        for bad in ["", "0x", "\"abc", "\"\"", "zz", "99999999999999999999999", "0x12 junk"] {
            let e = parse_pattern(bad).unwrap_err();
            assert!(e.starts_with("--verify-pattern") && e.contains("0xdeadbeef") && !e.contains('\n'), "{e}");
        }
        assert!(parse_pattern(&format!("0x{}", "ab".repeat(600))).is_err());
    }

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
