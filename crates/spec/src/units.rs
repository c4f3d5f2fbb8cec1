//! Parsing and formatting of option values: sizes, durations, counts, percentages,
//! access distributions and data patterns.
//!
//! Every parser takes the name of the option being parsed, as the caller spells it (`bs` in a
//! job file, a flag on the command line), so that its error says which option is wrong and how
//! to fix it:
//!
//! ```
//! use diskmeter_spec::units::parse_size;
//! let err = parse_size("bs", "4q").unwrap_err();
//! assert_eq!(
//!     err.to_string(),
//!     "invalid value for bs: \"4q\" is not a size; use a number with an optional \
//!      k/m/g/t suffix such as 4k or 1M"
//! );
//! ```
//!
//! Numbers are parsed as exact decimals (no floating point) wherever the result is an
//! integer, so `1.5k` is exactly 1536 bytes and `0.1s` exactly 100 ms.

use crate::error::SpecError;
use crate::model::{BsPart, DataPattern, Distribution, Zone, ZoneAbs};
use std::time::Duration;

/// Unit of a bare number (one without a suffix) given to [`parse_duration`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Seconds,
    Millis,
    Micros,
}

impl TimeUnit {
    fn nanos(self) -> u128 {
        match self {
            Self::Seconds => 1_000_000_000,
            Self::Millis => 1_000_000,
            Self::Micros => 1_000,
        }
    }
}

const KIB: u64 = 1 << 10;
const MIB: u64 = 1 << 20;
const GIB: u64 = 1 << 30;
const TIB: u64 = 1 << 40;
const PIB: u64 = 1 << 50;

/// Longest duration any option accepts: one year (365 days).
pub const MAX_DURATION: Duration = Duration::from_secs(365 * 24 * 3600);

const SIZE_HINT: &str = "use a number with an optional k/m/g/t suffix such as 4k or 1M";

/// An exact non-negative decimal `int.frac` (frac has `frac_digits` digits).
#[derive(Debug, Clone, Copy)]
struct Decimal {
    int: u128,
    frac: u128,
    frac_digits: u32,
}

impl Decimal {
    /// `self * mult` if it is a whole number (and fits), else `Err(true)` for a
    /// fractional result, `Err(false)` for overflow.
    fn times(self, mult: u128) -> Result<u128, bool> {
        let whole = self.int.checked_mul(mult).ok_or(false)?;
        let scale = 10u128.pow(self.frac_digits);
        let f = self.frac.checked_mul(mult).ok_or(false)?;
        if f % scale != 0 {
            return Err(true);
        }
        whole.checked_add(f / scale).ok_or(false)
    }

    /// `self * mult`, rounding any fraction down.
    fn times_floor(self, mult: u128) -> Option<u128> {
        let whole = self.int.checked_mul(mult)?;
        let scale = 10u128.pow(self.frac_digits);
        whole.checked_add(self.frac.checked_mul(mult)? / scale)
    }
}

/// Split `s` into a leading decimal number and the (trimmed) rest.
/// Returns `None` when there is no well-formed number at the start.
fn split_number(s: &str) -> Option<(Decimal, &str)> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        i += 1;
    }
    let int_str = &s[..i];
    if int_str.is_empty() {
        return None;
    }
    let mut frac_str = "";
    if i < bytes.len() && bytes[i] == b'.' {
        let start = i + 1;
        let mut j = start;
        while j < bytes.len() && bytes[j].is_ascii_digit() {
            j += 1;
        }
        if j == start {
            return None; // "1." or "1.k"
        }
        frac_str = &s[start..j];
        i = j;
    }
    // Drop trailing zeros of the fraction; they do not change the value and keep the
    // scale small.
    let frac_str = frac_str.trim_end_matches('0');
    if frac_str.len() > 20 {
        return None; // absurd precision; would overflow the scale
    }
    let int = parse_digits(int_str)?;
    let frac = if frac_str.is_empty() { 0 } else { parse_digits(frac_str)? };
    Some((Decimal { int, frac, frac_digits: frac_str.len() as u32 }, s[i..].trim_start()))
}

fn parse_digits(s: &str) -> Option<u128> {
    // Leading zeros are fine; overflow is reported by the caller as "too large".
    let s = s.trim_start_matches('0');
    if s.is_empty() {
        return Some(0);
    }
    if s.len() > 38 {
        return Some(u128::MAX); // certainly too large for any caller; checked later
    }
    s.parse().ok()
}

/// Common rejections before a number is parsed: empty and negative values.
fn precheck<'a>(option: &str, s: &'a str, what: &str, hint: &str) -> Result<&'a str, SpecError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(SpecError::value(option, format!("the value is empty; {hint}")));
    }
    if t.starts_with('-') {
        return Err(SpecError::value(option, format!("\"{t}\" is negative; a {what} cannot be negative, {hint}")));
    }
    Ok(t.strip_prefix('+').unwrap_or(t))
}

/// Parse a size in bytes with fio's binary multipliers.
///
/// Accepted: a plain number of bytes (`4096`), or a number followed by a unit:
/// `k`/`kb`/`kib` = 2^10, `m`/`mb`/`mib` = 2^20, `g`… = 2^30, `t`… = 2^40, `p`… = 2^50
/// (case-insensitive; the trailing `b`/`B` is optional; `B` alone means bytes; one space
/// between number and unit is allowed). A decimal point is allowed when the result is a
/// whole number of bytes (`1.5k` = 1536, but `1.3` is rejected). Negative, empty,
/// malformed and overflowing (> 2^64 - 1) values are rejected.
pub fn parse_size(option: &str, s: &str) -> Result<u64, SpecError> {
    let t = precheck(option, s, "size", SIZE_HINT)?;
    let not_a_size = || SpecError::value(option, format!("\"{}\" is not a size; {SIZE_HINT}", s.trim()));
    let (num, unit) = split_number(t).ok_or_else(not_a_size)?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => KIB,
        "m" | "mb" | "mib" => MIB,
        "g" | "gb" | "gib" => GIB,
        "t" | "tb" | "tib" => TIB,
        "p" | "pb" | "pib" => PIB,
        _ => return Err(not_a_size()),
    };
    match num.times(u128::from(mult)) {
        Ok(v) => u64::try_from(v).map_err(|_| too_large_size(option, t)),
        Err(true) => Err(SpecError::value(
            option,
            format!(
                "\"{t}\" is not a whole number of bytes; use an integer or a fraction of a \
                 larger unit that comes out whole, such as 1.5k"
            ),
        )),
        Err(false) => Err(too_large_size(option, t)),
    }
}

fn too_large_size(option: &str, t: &str) -> SpecError {
    SpecError::value(option, format!("\"{t}\" is too large; sizes must be below 16 EiB (2^64 bytes)"))
}

/// Parse a duration.
///
/// Accepted units (case-insensitive): `us`/`usec`, `ms`/`msec`,
/// `s`/`sec`/`secs`, `m`/`min`/`mins`, `h`/`hr`/`hour`/`hours`, `d`/`day`/`days`.
/// A bare number is in `default_unit` (the CLI and fio's `runtime`/`ramp_time` use
/// seconds). Decimals are allowed (`1.5s`, `0.5ms`); sub-nanosecond fractions are
/// rounded down. Negative, malformed (including `nan`/`inf`) and absurd (longer than
/// [`MAX_DURATION`], one year) values are rejected. Zero is allowed.
pub fn parse_duration(option: &str, s: &str, default_unit: TimeUnit) -> Result<Duration, SpecError> {
    const HINT: &str = "use a number with an optional unit us, ms, s, m or h, such as 500ms, 5s or 2m";
    let t = precheck(option, s, "duration", HINT)?;
    let malformed = || SpecError::value(option, format!("\"{}\" is not a duration; {HINT}", s.trim()));
    let (num, unit) = split_number(t).ok_or_else(malformed)?;
    let nanos_per: u128 = match unit.to_ascii_lowercase().as_str() {
        "" => default_unit.nanos(),
        "ns" | "nsec" | "nsecs" => 1,
        "us" | "usec" | "usecs" | "µs" => 1_000,
        "ms" | "msec" | "msecs" => 1_000_000,
        "s" | "sec" | "secs" => 1_000_000_000,
        "m" | "min" | "mins" => 60 * 1_000_000_000,
        "h" | "hr" | "hour" | "hours" => 3600 * 1_000_000_000,
        "d" | "day" | "days" => 86_400 * 1_000_000_000,
        _ => return Err(malformed()),
    };
    let too_long =
        || SpecError::value(option, format!("\"{t}\" is longer than the one-year maximum; use a shorter duration"));
    let nanos = num.times_floor(nanos_per).ok_or_else(too_long)?;
    if nanos > MAX_DURATION.as_nanos() {
        return Err(too_long());
    }
    let secs = (nanos / 1_000_000_000) as u64;
    let sub = (nanos % 1_000_000_000) as u32;
    Ok(Duration::new(secs, sub))
}

/// Parse a count (e.g. an IOPS rate): a non-negative integer with an optional decimal
/// multiplier `k` = 1000 or `m` = 1,000,000 (case-insensitive). Unlike sizes these are
/// *decimal*: `rate_iops=1k` means 1000 I/Os per second. A fraction is allowed when the
/// result is whole (`1.5k` = 1500).
pub fn parse_count(option: &str, s: &str) -> Result<u64, SpecError> {
    const HINT: &str = "use a whole number with an optional k (x1000) or m (x1000000) suffix, \
                        such as 500 or 10k";
    let t = precheck(option, s, "count", HINT)?;
    let malformed = || SpecError::value(option, format!("\"{}\" is not a count; {HINT}", s.trim()));
    let (num, unit) = split_number(t).ok_or_else(malformed)?;
    let mult: u128 = match unit.to_ascii_lowercase().as_str() {
        "" => 1,
        "k" => 1_000,
        "m" => 1_000_000,
        _ => return Err(malformed()),
    };
    let too_large = || SpecError::value(option, format!("\"{t}\" is too large; {HINT}"));
    match num.times(mult) {
        Ok(v) => u64::try_from(v).map_err(|_| too_large()),
        Err(true) => Err(SpecError::value(option, format!("\"{t}\" is not a whole number; {HINT}"))),
        Err(false) => Err(too_large()),
    }
}

/// Parse a percentage in `0..=100`, with an optional trailing `%` (`70`, `70%`, `99.9`).
pub fn parse_percent(option: &str, s: &str) -> Result<f64, SpecError> {
    const HINT: &str = "use a number from 0 to 100, such as 70 or 99.9%";
    let t = precheck(option, s, "percentage", HINT)?;
    let body = t.strip_suffix('%').unwrap_or(t).trim_end();
    let malformed = || SpecError::value(option, format!("\"{}\" is not a percentage; {HINT}", s.trim()));
    let (num, rest) = split_number(body).ok_or_else(malformed)?;
    if !rest.is_empty() {
        return Err(malformed());
    }
    if num.int > 100 || (num.int == 100 && num.frac != 0) {
        return Err(SpecError::value(option, format!("\"{t}\" is above 100%; {HINT}")));
    }
    let v: f64 = body.parse().map_err(|_| malformed())?;
    if !v.is_finite() || !(0.0..=100.0).contains(&v) {
        return Err(malformed());
    }
    Ok(v)
}

/// Parse a plain non-negative float (no units) used inside distribution specs.
fn parse_plain_f64(s: &str) -> Option<f64> {
    let t = s.trim();
    let (_, rest) = split_number(t)?;
    if !rest.is_empty() {
        return None;
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

const DIST_HINT: &str = "use uniform, zipf:THETA (e.g. zipf:1.2), pareto:H (e.g. pareto:0.9), \
                         hotset:OPS%/AREA% (e.g. hotset:90/10) or zoned:OPS/AREA:OPS/AREA... \
                         (e.g. zoned:60/10:30/20:10/70)";

/// Parse an access distribution for random I/O.
///
/// * `uniform` or `random` (fio's name) — every block equally likely.
/// * `zipf:THETA` — Zipf with exponent THETA > 0 (1 is allowed).
/// * `pareto:H` — Pareto with shape 0 < H < 1.
/// * `hotset:OPS/AREA` (each optionally with `%`) — OPS % of I/O goes to the first
///   AREA % of the region, the rest to the remaining area: `hotset:90/10` =
///   `Zoned [(90,10),(10,90)]`. Both numbers must be strictly between 0 and 100.
/// * `zoned:O1/A1:O2/A2:...` (fio) — zone i receives Oi % of I/O over Ai % of the
///   region, in order. Ops may be 0, areas must be > 0; both must sum to 100.
///
/// fio's `normal`/`gauss` and `zoned_abs` are recognised and rejected as unsupported.
pub fn parse_distribution(option: &str, s: &str) -> Result<Distribution, SpecError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(SpecError::value(option, format!("the value is empty; {DIST_HINT}")));
    }
    let (name, arg) = match t.split_once(':') {
        Some((n, a)) => (n.trim().to_ascii_lowercase(), Some(a.trim())),
        None => (t.to_ascii_lowercase(), None),
    };
    let err = |msg: String| Err(SpecError::value(option, msg));
    match (name.as_str(), arg) {
        ("uniform" | "random", None) => Ok(Distribution::Uniform),
        ("uniform" | "random", Some(_)) => err(format!("\"{t}\": {name} takes no parameter; write just {name}")),
        ("zipf", Some(a)) => {
            if a.contains(':') {
                return err(format!(
                    "\"{t}\": a zipf center offset is not supported; write zipf:THETA such as \
                     zipf:1.2"
                ));
            }
            match parse_plain_f64(a) {
                Some(theta) if theta > 0.0 => Ok(Distribution::Zipf { theta }),
                Some(_) => err(format!("\"{t}\": the zipf exponent must be greater than 0; use e.g. zipf:1.2")),
                None => err(format!("\"{t}\": \"{a}\" is not a number; write zipf:THETA such as zipf:1.2")),
            }
        }
        ("pareto", Some(a)) => {
            if a.contains(':') {
                return err(format!(
                    "\"{t}\": a pareto center offset is not supported; write pareto:H such as \
                     pareto:0.9"
                ));
            }
            match parse_plain_f64(a) {
                Some(h) if h > 0.0 && h < 1.0 => Ok(Distribution::Pareto { h }),
                Some(_) => err(format!(
                    "\"{t}\": the pareto shape must be between 0 and 1 (exclusive); use e.g. \
                     pareto:0.9"
                )),
                None => err(format!("\"{t}\": \"{a}\" is not a number; write pareto:H such as pareto:0.9")),
            }
        }
        ("hotset", Some(a)) => {
            let bad = || {
                SpecError::value(
                    option,
                    format!(
                        "\"{t}\" is not a hot set; write hotset:OPS%/AREA% with both strictly \
                         between 0 and 100, such as hotset:90/10 (90% of I/O to 10% of the area)"
                    ),
                )
            };
            let (o, ar) = a.split_once('/').ok_or_else(bad)?;
            let o = parse_plain_f64(o.trim().trim_end_matches('%')).ok_or_else(bad)?;
            let ar = parse_plain_f64(ar.trim().trim_end_matches('%')).ok_or_else(bad)?;
            let inside = |v: f64| v > 0.0 && v < 100.0;
            if !inside(o) || !inside(ar) {
                return Err(bad());
            }
            Ok(Distribution::Zoned {
                zones: vec![Zone { ops_pct: o, area_pct: ar }, Zone { ops_pct: 100.0 - o, area_pct: 100.0 - ar }],
            })
        }
        ("zoned", Some(a)) => parse_zones(option, t, a),
        ("zoned_abs", Some(a)) => parse_zones_abs(option, t, a),
        ("normal" | "gauss", Some(a)) => {
            let (dev, center) = match a.split_once(':') {
                Some((d, c)) => (d, Some(c)),
                None => (a, None),
            };
            let bad = || {
                SpecError::value(
                    option,
                    format!(
                        "\"{t}\" is not a normal distribution; write normal:DEV[:CENTER] with DEV the \
                         deviation in percent of the region (above 0 up to 100) and CENTER from 0 to 1, such as \
                         normal:10 or normal:5:0.25"
                    ),
                )
            };
            let dev_pct =
                parse_plain_f64(dev.trim_end_matches('%')).filter(|d| *d > 0.0 && *d <= 100.0).ok_or_else(bad)?;
            let center = match center {
                Some(c) => parse_plain_f64(c).filter(|c| (0.0..=1.0).contains(c)).ok_or_else(bad)?,
                None => 0.5,
            };
            Ok(Distribution::Normal { dev_pct, center })
        }
        ("zipf" | "pareto" | "hotset" | "zoned" | "zoned_abs" | "normal" | "gauss", None) => {
            err(format!("\"{t}\": {name} needs a parameter; {DIST_HINT}"))
        }
        _ => err(format!("\"{t}\" is not a known distribution; {DIST_HINT}")),
    }
}

/// fio's `zoned_abs:OPS/SIZE:OPS/SIZE…` (`zoned_abs:60/20G:30/100G:10/500G`).
fn parse_zones_abs(option: &str, t: &str, a: &str) -> Result<Distribution, SpecError> {
    let err = |msg: String| Err(SpecError::value(option, msg));
    if a.contains(',') {
        return err(format!("\"{t}\": separate read and write zones are not supported; give one set of zones"));
    }
    let mut zones = Vec::new();
    for part in a.split(':').map(str::trim) {
        let Some((o, size)) = part.split_once('/') else {
            return err(format!(
                "\"{t}\": zone \"{part}\" is not OPS/SIZE; write zoned_abs:OPS/SIZE:… such as \
                 zoned_abs:60/20G:30/100G:10/500G"
            ));
        };
        let Some(o) = parse_plain_f64(o.trim().trim_end_matches('%')).filter(|o| *o <= 100.0) else {
            return err(format!("\"{t}\": zone \"{part}\" needs a share of I/O from 0 to 100 before the '/'"));
        };
        let bytes = parse_size(option, size)?;
        if bytes == 0 {
            return err(format!("\"{t}\": zone \"{part}\" is empty; every zone needs a size above 0"));
        }
        zones.push(ZoneAbs { ops_pct: o, bytes });
    }
    let ops: f64 = zones.iter().map(|z| z.ops_pct).sum();
    if (ops - 100.0).abs() > 1e-6 {
        return err(format!(
            "\"{t}\": the zones' shares of I/O add up to {ops}, not 100; use e.g. zoned_abs:60/20G:30/100G:10/500G"
        ));
    }
    Ok(Distribution::ZonedAbs { zones })
}

fn parse_zones(option: &str, t: &str, a: &str) -> Result<Distribution, SpecError> {
    let err = |msg: String| Err(SpecError::value(option, msg));
    let mut zones = Vec::new();
    let parts: Vec<&str> = a.split(':').map(str::trim).collect();
    for (i, &part) in parts.iter().enumerate() {
        // fio: the last zone may leave its area out (`zoned:50/5:30/15:20/`) and takes the rest.
        if i + 1 == parts.len() && i > 0 {
            if let Some(o) = part.strip_suffix('/').and_then(|o| parse_plain_f64(o.trim().trim_end_matches('%'))) {
                let rest = 100.0 - zones.iter().map(|z: &Zone| z.area_pct).sum::<f64>();
                if rest <= 1e-9 {
                    return err(format!(
                        "\"{t}\": the last zone \"{part}\" takes the rest of the area, but the zones before it \
                         already cover 100%"
                    ));
                }
                if o > 100.0 {
                    return err(format!("\"{t}\": zone \"{part}\" has a percentage above 100"));
                }
                zones.push(Zone { ops_pct: o, area_pct: rest });
                continue;
            }
        }
        let Some((o, ar)) = part.split_once('/') else {
            return err(format!(
                "\"{t}\": zone \"{part}\" is not OPS/AREA; write zoned:OPS/AREA:OPS/AREA... \
                 such as zoned:60/10:40/90"
            ));
        };
        let (Some(o), Some(ar)) =
            (parse_plain_f64(o.trim().trim_end_matches('%')), parse_plain_f64(ar.trim().trim_end_matches('%')))
        else {
            return err(format!("\"{t}\": zone \"{part}\" must be two percentages OPS/AREA such as 60/10"));
        };
        if o > 100.0 || ar > 100.0 {
            return err(format!("\"{t}\": zone \"{part}\" has a percentage above 100"));
        }
        if ar <= 0.0 {
            return err(format!("\"{t}\": zone \"{part}\" has an empty area; every zone needs an area above 0%"));
        }
        zones.push(Zone { ops_pct: o, area_pct: ar });
    }
    let ops: f64 = zones.iter().map(|z| z.ops_pct).sum();
    let area: f64 = zones.iter().map(|z| z.area_pct).sum();
    if (ops - 100.0).abs() > 1e-6 || (area - 100.0).abs() > 1e-6 {
        return err(format!(
            "\"{t}\": the zone percentages must each add up to 100 (ops add up to {ops}, areas \
             to {area}); such as zoned:60/10:30/20:10/70"
        ));
    }
    Ok(Distribution::Zoned { zones })
}

/// Parse a write-data pattern: `random` (incompressible), `zeros` (also `zero`), or
/// `compress:PCT` with an integer PCT in 0..=100 (each 4 KiB chunk PCT % zeros).
pub fn parse_data(option: &str, s: &str) -> Result<DataPattern, SpecError> {
    const HINT: &str = "use random, zeros or compress:PCT such as compress:50";
    let t = s.trim();
    let lower = t.to_ascii_lowercase();
    match lower.as_str() {
        "random" => return Ok(DataPattern::Random),
        "zeros" | "zero" => return Ok(DataPattern::Zeros),
        "" => return Err(SpecError::value(option, format!("the value is empty; {HINT}"))),
        _ => {}
    }
    let Some(pct) = lower.strip_prefix("compress:") else {
        return Err(SpecError::value(option, format!("\"{t}\" is not a data pattern; {HINT}")));
    };
    let pct = pct.trim().trim_end_matches('%');
    match pct.parse::<u8>() {
        Ok(p) if p <= 100 && pct.bytes().all(|b| b.is_ascii_digit()) => Ok(DataPattern::Compress { pct: p }),
        _ => Err(SpecError::value(
            option,
            format!(
                "\"{t}\": the compressible share must be a whole percentage from 0 to 100, \
                 such as compress:50"
            ),
        )),
    }
}

/// Parse one direction of fio's `bssplit`: `SIZE/PCT:SIZE/PCT…` (`4k/10:64k/50:32k/40`).
/// Entries without a percentage (`8k/` or `8k`) share what the others leave of 100 equally,
/// as in fio. The shares must then sum to 100.
pub fn parse_bssplit(option: &str, s: &str) -> Result<Vec<BsPart>, SpecError> {
    const HINT: &str = "write SIZE/PERCENT entries joined by ':', such as 4k/10:64k/50:32k/40";
    let mut parts = Vec::new();
    let mut missing = 0usize;
    for entry in s.split(':') {
        let entry = entry.trim();
        if entry.is_empty() {
            return Err(SpecError::value(option, format!("\"{s}\" has an empty entry; {HINT}")));
        }
        let (size, pct) = match entry.split_once('/') {
            Some((size, pct)) => (size, pct.trim()),
            None => (entry, ""),
        };
        let bs = parse_size(option, size)?;
        let pct = if pct.is_empty() {
            missing += 1;
            f64::NAN
        } else {
            parse_percent(option, pct)?
        };
        parts.push(BsPart { bs, pct });
    }
    let given: f64 = parts.iter().filter(|p| !p.pct.is_nan()).map(|p| p.pct).sum();
    if given > 100.0 + 1e-9 {
        return Err(SpecError::value(
            option,
            format!("the percentages of \"{s}\" add up to {given}, above 100; {HINT}"),
        ));
    }
    if missing > 0 {
        let each = (100.0 - given) / missing as f64;
        for p in parts.iter_mut().filter(|p| p.pct.is_nan()) {
            p.pct = each;
        }
    } else if (given - 100.0).abs() > 1e-6 {
        return Err(SpecError::value(
            option,
            format!("the percentages of \"{s}\" add up to {given}, not 100; {HINT}, or leave one percentage out (4k/50:8k/) to give it the rest"),
        ));
    }
    Ok(parts)
}

/// Parse one direction of fio's `bsrange`: `MIN-MAX` (`1k-4k`).
pub fn parse_bsrange(option: &str, s: &str) -> Result<(u64, u64), SpecError> {
    let (lo, hi) = s.split_once('-').ok_or_else(|| {
        SpecError::value(option, format!("\"{s}\" is not a range; write MIN-MAX such as {option}=1k-64k"))
    })?;
    let (lo, hi) = (parse_size(option, lo)?, parse_size(option, hi)?);
    if lo > hi {
        return Err(SpecError::value(
            option,
            format!("\"{s}\" has its minimum above its maximum; write MIN-MAX such as {option}=1k-64k"),
        ));
    }
    Ok((lo, hi))
}

const UNITS: [(u64, &str); 5] = [(PIB, "PiB"), (TIB, "TiB"), (GIB, "GiB"), (MIB, "MiB"), (KIB, "KiB")];

/// Human-readable binary size: `"4 KiB"`, `"1 GiB"`, `"1.5 MiB"`, `"512 B"`.
///
/// Uses the largest unit not above the value. The figure is exact when it is a whole
/// number or has at most three decimals (`1.5 MiB`, `1.125 KiB`); otherwise it is
/// rounded to two decimals (`1.01 KiB` for 1035 bytes). Exact outputs parse back with
/// [`parse_size`].
pub fn format_size(bytes: u64) -> String {
    for (unit, name) in UNITS {
        if bytes >= unit {
            let whole = bytes / unit;
            let rem = bytes % unit;
            if rem == 0 {
                return format!("{whole} {name}");
            }
            // Exact with up to 3 decimals?
            let scaled = u128::from(rem) * 1000;
            if scaled % u128::from(unit) == 0 {
                let frac = scaled / u128::from(unit);
                let frac = format!("{frac:03}");
                return format!("{whole}.{} {name}", frac.trim_end_matches('0'));
            }
            return format!("{:.2} {name}", bytes as f64 / unit as f64);
        }
    }
    format!("{bytes} B")
}

/// CrystalDiskMark-style block-size label: `"4K"`, `"128K"`, `"1M"`, `"2G"`.
/// Uses the largest unit that divides the size exactly; sizes that are not a whole
/// number of KiB are given in bytes (`"512B"`).
pub fn format_bs_label(bytes: u64) -> String {
    if bytes == 0 {
        return "0B".into();
    }
    for (unit, name) in [(PIB, "P"), (TIB, "T"), (GIB, "G"), (MIB, "M"), (KIB, "K")] {
        // `unit` is a power of two: divisible when the low bits are clear.
        if bytes & (unit - 1) == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    format!("{bytes}B")
}

/// A size as an option value, the way a user types it and [`parse_size`] reads it back
/// exactly: the largest unit that divides it, `k` lower-case and the others upper-case as
/// diskmeter's defaults are written (`4k`, `256M`, `1G`), else plain bytes (`0`, `512`, `1536`).
pub fn format_size_arg(bytes: u64) -> String {
    if bytes == 0 {
        return "0".into();
    }
    for (unit, name) in [(PIB, "P"), (TIB, "T"), (GIB, "G"), (MIB, "M"), (KIB, "k")] {
        if bytes & (unit - 1) == 0 {
            return format!("{}{name}", bytes / unit);
        }
    }
    bytes.to_string()
}

/// A duration as an option value that [`parse_duration`] reads back exactly: whole seconds
/// as `5s` (`0s` for none), else the largest of `ms`, `us`, `ns` that is whole.
pub fn format_duration_arg(d: Duration) -> String {
    let ns = d.as_nanos();
    for (unit, name) in [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "us")] {
        if ns.is_multiple_of(unit) {
            return format!("{}{name}", ns / unit);
        }
    }
    format!("{ns}ns")
}

/// fio's `verify_pattern`: a sequence of `0x` hex byte strings (`0xdeadbeef`: bytes in the
/// order written), quoted strings (`"abc"` or `'abc'`) and decimal numbers (one byte each,
/// 0–255), written one after another (`0xff"tag"`).
pub fn parse_verify_pattern(key: &str, s: &str) -> Result<Vec<u8>, SpecError> {
    let bad =
        |why: &str| SpecError::value(key, format!("\"{s}\" {why}; write e.g. {key}=0xdeadbeef or {key}=\"text\""));
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        if let Some(hex) = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X")) {
            let end = hex.find(|c: char| !c.is_ascii_hexdigit()).unwrap_or(hex.len());
            let digits = &hex[..end];
            if digits.is_empty() {
                return Err(bad("has 0x without hex digits"));
            }
            // An odd number of digits is a leading zero nibble (0xabc = 0x0abc).
            let padded = if digits.len() % 2 == 1 { format!("0{digits}") } else { digits.to_string() };
            for i in (0..padded.len()).step_by(2) {
                out.push(u8::from_str_radix(&padded[i..i + 2], 16).map_err(|_| bad("is not hex"))?);
            }
            rest = &hex[end..];
        } else if let Some(q) = rest.chars().next().filter(|c| *c == '"' || *c == '\'') {
            let body = &rest[1..];
            let close = body.find(q).ok_or_else(|| bad("has a quote that is not closed"))?;
            out.extend_from_slice(&body.as_bytes()[..close]);
            rest = &body[close + 1..];
        } else if rest.starts_with(|c: char| c.is_ascii_digit()) {
            let end = rest.find(|c: char| !c.is_ascii_digit()).unwrap_or(rest.len());
            let n: u8 = rest[..end].parse().map_err(|_| bad("has a decimal number above 255"))?;
            out.push(n);
            rest = &rest[end..];
        } else if rest.starts_with('%') {
            return Err(bad("uses a % format (fio's %o offset), which is not supported"));
        } else {
            return Err(bad("is not hex (0x…), a quoted string or a decimal byte"));
        }
        rest = rest.trim_start();
    }
    if out.is_empty() {
        return Err(bad("is empty"));
    }
    if out.len() > MAX_VERIFY_PATTERN {
        return Err(bad("is longer than 512 bytes (fio's limit)"));
    }
    Ok(out)
}

/// Longest `verify_pattern`, in bytes (fio's limit).
pub const MAX_VERIFY_PATTERN: usize = 512;

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn size(s: &str) -> u64 {
        parse_size("bs", s).unwrap()
    }
    fn size_err(s: &str) -> String {
        parse_size("bs", s).unwrap_err().to_string()
    }

    #[test]
    fn sizes_plain_and_suffixed() {
        assert_eq!(size("0"), 0);
        assert_eq!(size("4096"), 4096);
        assert_eq!(size("512b"), 512);
        assert_eq!(size("512B"), 512);
        for s in ["4k", "4K", "4kb", "4KB", "4KiB", "4kib", "4 KiB", " 4k "] {
            assert_eq!(size(s), 4096, "{s}");
        }
        assert_eq!(size("1m"), MIB);
        assert_eq!(size("1MiB"), MIB);
        assert_eq!(size("1G"), GIB);
        assert_eq!(size("2gb"), 2 * GIB);
        assert_eq!(size("1t"), TIB);
        assert_eq!(size("1TiB"), TIB);
        assert_eq!(size("1p"), PIB);
        assert_eq!(size("+8k"), 8192);
        assert_eq!(size("0004k"), 4096);
    }

    #[test]
    fn sizes_with_decimals() {
        assert_eq!(size("1.5k"), 1536);
        assert_eq!(size("0.5M"), 512 * 1024);
        assert_eq!(size("1.25G"), GIB + GIB / 4);
        assert_eq!(size("2.0"), 2);
        assert_eq!(size("1.500k"), 1536);
        let e = size_err("1.3");
        assert!(e.contains("not a whole number of bytes"), "{e}");
        assert!(size_err("1.0001k").contains("whole number"));
    }

    #[test]
    fn size_error_messages() {
        assert_eq!(
            size_err("4q"),
            "invalid value for bs: \"4q\" is not a size; use a number with an optional \
             k/m/g/t suffix such as 4k or 1M"
        );
        assert!(size_err("").contains("empty"));
        assert!(size_err("   ").contains("empty"));
        assert!(size_err("-4k").contains("negative"));
        assert!(size_err("k").contains("is not a size"));
        assert!(size_err("1.k").contains("is not a size"));
        assert!(size_err(".5k").contains("is not a size"));
        assert!(size_err("4kk").contains("is not a size"));
        assert!(size_err("4 k b").contains("is not a size"));
        assert!(size_err("1e3").contains("is not a size"));
        assert!(size_err("nan").contains("is not a size"));
        assert!(size_err("0x10").contains("is not a size"));
        assert!(size_err("16384p").contains("too large"));
        assert!(size_err("18446744073709551616").contains("too large"));
        assert!(size_err("99999999999999999999999999999999999999999999k").contains("too large"));
        assert_eq!(size("18446744073709551615"), u64::MAX);
        assert_eq!(size("16383p"), 16383 * PIB);
    }

    #[test]
    fn durations() {
        let d = |s| parse_duration("runtime", s, TimeUnit::Seconds).unwrap();
        assert_eq!(d("5"), Duration::from_secs(5));
        assert_eq!(d("5s"), Duration::from_secs(5));
        assert_eq!(d("5sec"), Duration::from_secs(5));
        assert_eq!(d("500ms"), Duration::from_millis(500));
        assert_eq!(d("250us"), Duration::from_micros(250));
        assert_eq!(d("2m"), Duration::from_secs(120));
        assert_eq!(d("2min"), Duration::from_secs(120));
        assert_eq!(d("1h"), Duration::from_secs(3600));
        assert_eq!(d("1.5s"), Duration::from_millis(1500));
        assert_eq!(d("0.1s"), Duration::from_millis(100));
        assert_eq!(d("0"), Duration::ZERO);
        assert_eq!(d("5S"), Duration::from_secs(5));
        assert_eq!(d("365d"), MAX_DURATION);
        let ms = parse_duration("x", "20", TimeUnit::Millis).unwrap();
        assert_eq!(ms, Duration::from_millis(20));
        let us = parse_duration("x", "20", TimeUnit::Micros).unwrap();
        assert_eq!(us, Duration::from_micros(20));
    }

    #[test]
    fn duration_errors() {
        let e = |s| parse_duration("runtime", s, TimeUnit::Seconds).unwrap_err().to_string();
        assert!(e("-5s").starts_with("invalid value for runtime: \"-5s\" is negative"));
        assert!(e("5x").contains("\"5x\" is not a duration; use a number with an optional unit"));
        assert!(e("nan").contains("not a duration"));
        assert!(e("NaN").contains("not a duration"));
        assert!(e("inf").contains("not a duration"));
        assert!(e("").contains("empty"));
        assert!(e("s").contains("not a duration"));
        assert!(e("366d").contains("one-year maximum"));
        assert!(e("9999999h").contains("one-year maximum"));
        assert!(e("99999999999999999999999999999999999999999h").contains("one-year maximum"));
        assert!(e("5 s s").contains("not a duration"));
    }

    #[test]
    fn counts() {
        let c = |s| parse_count("rate_iops", s).unwrap();
        assert_eq!(c("500"), 500);
        assert_eq!(c("10k"), 10_000);
        assert_eq!(c("10K"), 10_000);
        assert_eq!(c("1.5k"), 1500);
        assert_eq!(c("2m"), 2_000_000);
        let e = |s| parse_count("rate_iops", s).unwrap_err().to_string();
        assert!(e("1.5").contains("not a whole number"));
        assert!(e("-1").contains("negative"));
        assert!(e("10g").contains("not a count"));
        assert!(e("abc").contains("not a count"));
        assert!(e("99999999999999999999m").contains("too large"));
    }

    #[test]
    fn percents() {
        let p = |s| parse_percent("mix", s).unwrap();
        assert_eq!(p("70"), 70.0);
        assert_eq!(p("70%"), 70.0);
        assert_eq!(p("99.9"), 99.9);
        assert_eq!(p("0"), 0.0);
        assert_eq!(p("100"), 100.0);
        assert_eq!(p("100.0%"), 100.0);
        let e = |s| parse_percent("mix", s).unwrap_err().to_string();
        assert!(e("100.1").contains("above 100%"));
        assert!(e("101").contains("above 100%"));
        assert!(e("-1").contains("negative"));
        assert!(e("abc").contains("not a percentage"));
        assert!(e("50%%").contains("not a percentage"));
        assert!(e("nan").contains("not a percentage"));
    }

    #[test]
    fn distributions() {
        let d = |s| parse_distribution("dist", s).unwrap();
        assert_eq!(d("uniform"), Distribution::Uniform);
        assert_eq!(d("random"), Distribution::Uniform);
        assert_eq!(d("zipf:1.2"), Distribution::Zipf { theta: 1.2 });
        assert_eq!(d("zipf:1"), Distribution::Zipf { theta: 1.0 });
        assert_eq!(d("pareto:0.9"), Distribution::Pareto { h: 0.9 });
        let hot = Distribution::Zoned {
            zones: vec![Zone { ops_pct: 90.0, area_pct: 10.0 }, Zone { ops_pct: 10.0, area_pct: 90.0 }],
        };
        assert_eq!(d("hotset:90/10"), hot);
        assert_eq!(d("hotset:90%/10%"), hot);
        assert_eq!(
            d("zoned:60/10:30/20:10/70"),
            Distribution::Zoned {
                zones: vec![
                    Zone { ops_pct: 60.0, area_pct: 10.0 },
                    Zone { ops_pct: 30.0, area_pct: 20.0 },
                    Zone { ops_pct: 10.0, area_pct: 70.0 },
                ]
            }
        );
        // fio: a last zone without an area takes the rest of it.
        assert_eq!(
            d("zoned:50/5:30/15:20/"),
            Distribution::Zoned {
                zones: vec![
                    Zone { ops_pct: 50.0, area_pct: 5.0 },
                    Zone { ops_pct: 30.0, area_pct: 15.0 },
                    Zone { ops_pct: 20.0, area_pct: 80.0 },
                ]
            }
        );
        assert_eq!(
            d("zoned:100/50:0/50"),
            Distribution::Zoned {
                zones: vec![Zone { ops_pct: 100.0, area_pct: 50.0 }, Zone { ops_pct: 0.0, area_pct: 50.0 },]
            }
        );
    }

    #[test]
    fn distribution_errors() {
        let e = |s| parse_distribution("dist", s).unwrap_err().to_string();
        assert!(e("zipf:0").contains("greater than 0"));
        assert!(e("zipf:-1").contains("not a number"));
        assert!(e("zipf:abc").contains("not a number"));
        assert!(e("zipf:nan").contains("not a number"));
        assert!(e("zipf").contains("needs a parameter"));
        assert!(e("zipf:1.2:0.5").contains("center"));
        assert!(e("pareto:1").contains("between 0 and 1"));
        assert!(e("pareto:0").contains("between 0 and 1"));
        assert!(e("hotset:100/10").contains("strictly"));
        assert!(e("hotset:90").contains("not a hot set"));
        assert!(e("hotset:90/0").contains("strictly"));
        assert!(e("zoned:60/10:30/20").contains("add up to 100"));
        assert!(e("zoned:50/0:50/100").contains("area above 0%"));
        assert!(e("zoned:50/100:50/").contains("already cover 100%"));
        assert!(e("zoned:50/50:40/").contains("add up to 100"));
        assert!(e("zoned:50").contains("is not OPS/AREA"));
        assert!(e("zoned:x/y").contains("two percentages"));
        assert!(e("zoned:200/50:-100/50").contains("above 100"));
        assert!(e("normal:101").contains("is not a normal distribution"));
        assert!(e("gauss").contains("needs a parameter"));
        assert!(e("zoned_abs:50/1G:40/2G").contains("add up to 90, not 100"));
        assert!(e("zoned_abs:50/1G,50/2G").contains("separate read and write zones"));
        assert!(e("bogus").starts_with("invalid value for dist: \"bogus\" is not a known"));
        assert!(e("uniform:3").contains("takes no parameter"));
        assert!(e("").contains("empty"));
    }

    #[test]
    fn data_patterns() {
        let d = |s| parse_data("data", s).unwrap();
        assert_eq!(d("random"), DataPattern::Random);
        assert_eq!(d("zeros"), DataPattern::Zeros);
        assert_eq!(d("compress:50"), DataPattern::Compress { pct: 50 });
        assert_eq!(d("compress:0"), DataPattern::Compress { pct: 0 });
        assert_eq!(d("compress:100"), DataPattern::Compress { pct: 100 });
        let e = |s| parse_data("data", s).unwrap_err().to_string();
        assert!(e("compress:101").contains("0 to 100"));
        assert!(e("compress:-1").contains("0 to 100"));
        assert!(e("compress:5.5").contains("0 to 100"));
        assert!(e("compress:+5").contains("0 to 100"));
        assert!(e("ones").contains("not a data pattern"));
    }

    #[test]
    fn formatting() {
        assert_eq!(format_size(0), "0 B");
        assert_eq!(format_size(512), "512 B");
        assert_eq!(format_size(4096), "4 KiB");
        assert_eq!(format_size(GIB), "1 GiB");
        assert_eq!(format_size(MIB + MIB / 2), "1.5 MiB");
        assert_eq!(format_size(1152), "1.125 KiB");
        assert_eq!(format_size(1035), "1.01 KiB");
        assert_eq!(format_size(u64::MAX), "16384.00 PiB");
        assert_eq!(format_bs_label(4096), "4K");
        assert_eq!(format_bs_label(128 * 1024), "128K");
        assert_eq!(format_bs_label(MIB), "1M");
        assert_eq!(format_bs_label(2 * GIB), "2G");
        assert_eq!(format_bs_label(1536 * 1024), "1536K");
        assert_eq!(format_bs_label(512), "512B");
        for n in [0, 1, 512, 4096, 1536, MIB + MIB / 2, 1152, 3 * TIB] {
            assert_eq!(size(&format_size(n)), n);
            assert_eq!(size(&format_size_arg(n)), n);
        }
        let args = [0, 512, 4096, 1536, 256 * MIB, GIB, 3 * TIB, 2 * PIB].map(format_size_arg);
        assert_eq!(args, ["0", "512", "4k", "1536", "256M", "1G", "3T", "2P"]);
        for (d, text) in [
            (Duration::ZERO, "0s"),
            (Duration::from_secs(5), "5s"),
            (Duration::from_millis(1500), "1500ms"),
            (Duration::from_micros(100), "100us"),
            (Duration::from_nanos(1), "1ns"),
        ] {
            assert_eq!(format_duration_arg(d), text);
            assert_eq!(parse_duration("t", text, TimeUnit::Seconds).unwrap(), d);
        }
    }

    #[test]
    fn verify_patterns_in_fio_forms() {
        assert_eq!(parse_verify_pattern("p", "0xdeadbeef").unwrap(), vec![0xde, 0xad, 0xbe, 0xef]);
        assert_eq!(parse_verify_pattern("p", "0xabc").unwrap(), vec![0x0a, 0xbc]);
        assert_eq!(parse_verify_pattern("p", "\"ab\"0xff 7").unwrap(), vec![b'a', b'b', 0xff, 7]);
        assert_eq!(parse_verify_pattern("p", "'x'").unwrap(), vec![b'x']);
        let long = format!("0x{}", "ab".repeat(513));
        for bad in ["", "0x", "0xzz", "\"open", "256", "%o", "word", long.as_str()] {
            let e = parse_verify_pattern("verify_pattern", bad).unwrap_err().to_string();
            assert!(e.contains("verify_pattern") && e.contains("0xdeadbeef"), "{bad}: {e}");
        }
    }
}
