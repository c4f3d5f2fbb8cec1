//! Byte-level helpers shared by the text parsers: field splitting and number parsing without
//! allocation (the hot path of every reader).

/// Strips ASCII spaces and tabs at both ends.
#[inline]
pub(crate) fn trim(mut b: &[u8]) -> &[u8] {
    while let [first, rest @ ..] = b {
        if *first == b' ' || *first == b'\t' {
            b = rest;
        } else {
            break;
        }
    }
    while let [rest @ .., last] = b {
        if *last == b' ' || *last == b'\t' {
            b = rest;
        } else {
            break;
        }
    }
    b
}

/// A non-empty run of ASCII digits as `u64`; `None` on anything else or on overflow.
#[inline]
pub(crate) fn parse_u64(b: &[u8]) -> Option<u64> {
    if b.is_empty() {
        return None;
    }
    // Up to 19 digits cannot overflow a u64, so the common case skips the checked arithmetic.
    if b.len() <= 19 {
        let mut v: u64 = 0;
        for &c in b {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v * 10 + u64::from(d);
        }
        Some(v)
    } else {
        let mut v: u64 = 0;
        for &c in b {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                return None;
            }
            v = v.checked_mul(10)?.checked_add(u64::from(d))?;
        }
        Some(v)
    }
}

/// A decimal number `INT[.FRAC]` multiplied by `unit` (a power of ten ≥ 1, e.g. 1e9 to turn
/// seconds into nanoseconds). Fraction digits finer than 1/`unit` are truncated. `None` on
/// anything that is not such a number, or on overflow.
pub(crate) fn parse_scaled(b: &[u8], unit: u64) -> Option<u64> {
    let (int, frac) = match memchr::memchr(b'.', b) {
        Some(dot) => (b.get(..dot)?, b.get(dot + 1..)?),
        None => (b, &[][..]),
    };
    let whole = if int.is_empty() && !frac.is_empty() { 0 } else { parse_u64(int)? };
    let mut v = whole.checked_mul(unit)?;
    let mut scale = unit / 10;
    for &c in frac {
        let d = c.wrapping_sub(b'0');
        if d > 9 {
            return None;
        }
        v = v.checked_add(u64::from(d) * scale)?;
        scale /= 10;
    }
    Some(v)
}

/// Iterator over the fields of a line separated by one delimiter byte (empty fields kept).
pub(crate) struct Split<'a> {
    rest: Option<&'a [u8]>,
    delim: u8,
}

impl<'a> Split<'a> {
    #[inline]
    pub(crate) fn new(line: &'a [u8], delim: u8) -> Self {
        Split { rest: Some(line), delim }
    }
}

impl<'a> Iterator for Split<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let rest = self.rest?;
        // A plain scan: fields are a few bytes, shorter than a SIMD search's set-up.
        match rest.iter().position(|&c| c == self.delim) {
            Some(i) => {
                self.rest = rest.get(i + 1..);
                rest.get(..i)
            }
            None => {
                self.rest = None;
                Some(rest)
            }
        }
    }
}

/// Iterator over the runs of non-whitespace bytes of a line.
pub(crate) struct Words<'a> {
    rest: &'a [u8],
}

impl<'a> Words<'a> {
    #[inline]
    pub(crate) fn new(line: &'a [u8]) -> Self {
        Words { rest: line }
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = &'a [u8];

    #[inline]
    fn next(&mut self) -> Option<&'a [u8]> {
        let start = self.rest.iter().position(|c| !c.is_ascii_whitespace())?;
        let s = self.rest.get(start..)?;
        let end = s.iter().position(|c| c.is_ascii_whitespace()).unwrap_or(s.len());
        let (word, rest) = s.split_at(end);
        self.rest = rest;
        Some(word)
    }
}

/// A field quoted for an error message: lossy UTF-8, at most 40 characters.
pub(crate) fn show(b: &[u8]) -> String {
    let s = String::from_utf8_lossy(b);
    let mut out: String = s.chars().take(40).collect();
    if s.chars().nth(40).is_some() {
        out.push('…');
    }
    format!("{out:?}")
}

/// `"{what} {field:?} is not a number"`.
pub(crate) fn not_a_number(what: &str, b: &[u8]) -> String {
    format!("{what} {} is not a number", show(b))
}

/// Parses an unsigned integer field, naming it in the error.
#[inline]
pub(crate) fn num(what: &str, b: &[u8]) -> Result<u64, String> {
    parse_u64(b).ok_or_else(|| not_a_number(what, b))
}

/// `count × unit` as a byte offset, or an error naming the field.
#[inline]
pub(crate) fn bytes_u64(what: &str, count: u64, unit: u64) -> Result<u64, String> {
    count.checked_mul(unit).ok_or_else(|| format!("{what} {count} × {unit} bytes overflows 64 bits"))
}

/// `count × unit` as a request length, which must fit in 32 bits.
#[inline]
pub(crate) fn bytes_u32(what: &str, count: u64, unit: u64) -> Result<u32, String> {
    count
        .checked_mul(unit)
        .and_then(|b| u32::try_from(b).ok())
        .ok_or_else(|| format!("{what} {count} × {unit} bytes does not fit in 32 bits (max 4 GiB - 1)"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_u64(b"0"), Some(0));
        assert_eq!(parse_u64(b"18446744073709551615"), Some(u64::MAX));
        assert_eq!(parse_u64(b"18446744073709551616"), None);
        assert_eq!(parse_u64(b"99999999999999999999"), None);
        assert_eq!(parse_u64(b""), None);
        assert_eq!(parse_u64(b"12x"), None);
        assert_eq!(parse_u64(b"-1"), None);
        assert_eq!(parse_scaled(b"1.5", 1_000_000_000), Some(1_500_000_000));
        assert_eq!(parse_scaled(b"0.000000123", 1_000_000_000), Some(123));
        assert_eq!(parse_scaled(b"2.0000000019", 1_000_000_000), Some(2_000_000_001));
        assert_eq!(parse_scaled(b"7", 1000), Some(7000));
        assert_eq!(parse_scaled(b".5", 1000), Some(500));
        assert_eq!(parse_scaled(b"3.", 1000), Some(3000));
        assert_eq!(parse_scaled(b"1.2.3", 1000), None);
        assert_eq!(parse_scaled(b".", 1000), None);
        assert_eq!(parse_scaled(b"1e3", 1000), None);
        assert_eq!(parse_scaled(b"18446744073709551615", 10), None);
    }

    #[test]
    fn splitting() {
        let f: Vec<&[u8]> = Split::new(b"a,,b,", b',').collect();
        assert_eq!(f, vec![&b"a"[..], b"", b"b", b""]);
        let w: Vec<&[u8]> = Words::new(b"  8,32   7 x\t").collect();
        assert_eq!(w, vec![&b"8,32"[..], b"7", b"x"]);
        assert_eq!(trim(b" \tx y \t"), b"x y");
        assert_eq!(show(b"12x"), "\"12x\"");
        assert_eq!(show(&[b'a'; 50]).chars().count(), 43);
    }
}
