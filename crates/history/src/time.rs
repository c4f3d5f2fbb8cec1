//! Timestamps: documents carry RFC 3339 text; the database also keeps them as Unix
//! nanoseconds, because text with and without fractional seconds or with offsets does not
//! sort by time.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Unix nanoseconds of an RFC 3339 time (`2026-03-02T10:00:00Z`, `…10:00:00.25+02:00`,
/// a space for the `T`) or of a date (`2026-03-02`, midnight UTC).
pub(crate) fn parse_ns(s: &str) -> Option<i64> {
    let s = s.trim();
    if s.len() == 10 && s.as_bytes()[4] == b'-' {
        return parse_ns(&format!("{s}T00:00:00Z"));
    }
    let (local, offset_s) = split_offset(s)?;
    let t = humantime::parse_rfc3339_weak(local).ok()?;
    let ns = match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_nanos()).ok()?,
        Err(e) => -i64::try_from(e.duration().as_nanos()).ok()?,
    };
    ns.checked_sub(offset_s.checked_mul(1_000_000_000)?)
}

/// The text before a numeric UTC offset, and the offset in seconds (`Z` and none are 0).
fn split_offset(s: &str) -> Option<(&str, i64)> {
    if let Some(local) = s.strip_suffix('Z').or_else(|| s.strip_suffix('z')) {
        return Some((local, 0));
    }
    // "+HH:MM" or "-HH:MM" after the time of day (the date's own '-' come before the 'T').
    let time_at = s.find(['T', 't', ' ']).map_or(0, |i| i + 1);
    let Some(sign_at) = s[time_at..].rfind(['+', '-']).map(|i| i + time_at) else {
        return Some((s, 0));
    };
    let (local, off) = s.split_at(sign_at);
    let sign = if off.starts_with('-') { -1 } else { 1 };
    let (h, m) = off[1..].split_once(':')?;
    let (h, m): (i64, i64) = (h.parse().ok()?, m.parse().ok()?);
    Some((local, sign * (h * 3600 + m * 60)))
}

/// Now as RFC 3339 UTC with whole seconds.
pub(crate) fn now_rfc3339() -> String {
    humantime::format_rfc3339_seconds(SystemTime::now()).to_string()
}

/// An RFC 3339 UTC text of Unix nanoseconds.
pub(crate) fn format_ns(ns: i64) -> String {
    let t = if ns >= 0 {
        UNIX_EPOCH + Duration::from_nanos(ns.unsigned_abs())
    } else {
        UNIX_EPOCH - Duration::from_nanos(ns.unsigned_abs())
    };
    humantime::format_rfc3339_seconds(t).to_string()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        let z = parse_ns("2026-03-02T10:00:00Z").unwrap();
        assert_eq!(parse_ns("2026-03-02T12:00:00+02:00"), Some(z));
        assert_eq!(parse_ns("2026-03-02T09:30:00-00:30"), Some(z));
        assert_eq!(parse_ns("2026-03-02 10:00:00"), Some(z));
        assert_eq!(parse_ns("2026-03-02T10:00:00.5Z"), Some(z + 500_000_000));
        assert_eq!(parse_ns("2026-03-02"), Some(z - 10 * 3600 * 1_000_000_000));
        assert_eq!(format_ns(z), "2026-03-02T10:00:00Z");
        assert_eq!(parse_ns("yesterday"), None);
        assert_eq!(parse_ns("2026-13-02"), None);
    }
}
