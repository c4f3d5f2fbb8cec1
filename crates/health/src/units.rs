//! Endurance units: rated TBW as spec sheets write it, and figures for humans.
//!
//! Spec sheets give endurance in decimal units (600 TBW = 600 × 10^12 bytes), so
//! `--tbw` reads `T`/`TB`, `G`/`GB`, `P`/`PB` as powers of 1000 and a bare number as TB;
//! `TiB`, `GiB`, `PiB` are binary. This differs on purpose from diskmeter's I/O sizes
//! (`--bs 4k` = 4096, fio-style): nobody writes a TBW rating in TiB.

use crate::HealthError;

const HINT: &str = "use a number of terabytes as on the spec sheet, such as 600, 600TB, 1.2PB or 550TiB";

/// Parse a rated endurance (`--tbw`) into bytes.
pub fn parse_tbw(option: &str, s: &str) -> Result<u64, HealthError> {
    let t = s.trim();
    if t.is_empty() {
        return Err(HealthError::usage(option, format!("the value is empty; {HINT}")));
    }
    if t.starts_with('-') {
        return Err(HealthError::usage(option, format!("\"{t}\" is negative; {HINT}")));
    }
    let split = t.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let bad = || HealthError::usage(option, format!("\"{t}\" is not an endurance rating; {HINT}"));
    if num.is_empty() || num.matches('.').count() > 1 || num.starts_with('.') || num.ends_with('.') {
        return Err(bad());
    }
    let value: f64 = num.parse().map_err(|_| bad())?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "t" | "tb" | "tbw" => 1e12,
        "g" | "gb" => 1e9,
        "p" | "pb" => 1e15,
        "tib" => 1_099_511_627_776.0,
        "gib" => 1_073_741_824.0,
        "pib" => 1_125_899_906_842_624.0,
        _ => return Err(bad()),
    };
    let bytes = value * mult;
    if !bytes.is_finite() || bytes >= 1.8e19 {
        return Err(HealthError::usage(option, format!("\"{t}\" is too large; {HINT}")));
    }
    if bytes < 1e9 {
        return Err(HealthError::usage(
            option,
            format!("\"{t}\" is below 1 GB; ratings are in TB (600 means 600 TB), {HINT}"),
        ));
    }
    Ok(bytes.round() as u64)
}

/// Parse a positive decimal (`--dwpd 0.3`, `--warranty-years 5`).
pub fn parse_positive(option: &str, s: &str, what: &str, max: f64) -> Result<f64, HealthError> {
    let t = s.trim();
    let v: f64 = t
        .parse()
        .map_err(|_| HealthError::usage(option, format!("\"{t}\" is not a number; give {what}, such as 1 or 0.3")))?;
    if !v.is_finite() || v <= 0.0 || v > max {
        return Err(HealthError::usage(
            option,
            format!("\"{t}\" is out of range; give {what} above 0 and at most {max}"),
        ));
    }
    Ok(v)
}

/// One decimal, with a trailing ".0" dropped: 600.0 → "600", 43.42 → "43.4", 10.96 → "11".
pub fn one_decimal(x: f64) -> String {
    let s = format!("{x:.1}");
    match s.strip_suffix(".0") {
        Some(whole) => whole.to_string(),
        None => s,
    }
}

/// Decimal bytes for humans: "42.1 TB", "35.2 GB", "512 MB" (10^3 multiples, as drive
/// makers and TBW ratings use).
pub fn dec_bytes(bytes: f64) -> String {
    const UNITS: [(&str, f64); 5] = [("PB", 1e15), ("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)];
    for (name, m) in UNITS {
        if bytes.abs() >= m {
            return format!("{} {name}", one_decimal(bytes / m));
        }
    }
    format!("{} B", bytes.round())
}

/// A figure in one fixed decimal unit: `in_unit(42.1e12, "TB")` = "42.1 TB".
pub fn in_unit(bytes: f64, unit: &str) -> String {
    let m = match unit {
        "PB" => 1e15,
        "TB" => 1e12,
        "GB" => 1e9,
        "MB" => 1e6,
        _ => 1.0,
    };
    format!("{} {unit}", one_decimal(bytes / m))
}

/// The unit `dec_bytes` would pick for this magnitude.
pub fn unit_for(bytes: f64) -> &'static str {
    if bytes >= 1e15 {
        "PB"
    } else if bytes >= 1e12 {
        "TB"
    } else if bytes >= 1e9 {
        "GB"
    } else {
        "MB"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn tbw_forms() {
        assert_eq!(parse_tbw("--tbw", "600").unwrap(), 600_000_000_000_000);
        assert_eq!(parse_tbw("--tbw", "600T").unwrap(), 600_000_000_000_000);
        assert_eq!(parse_tbw("--tbw", "600TB").unwrap(), 600_000_000_000_000);
        assert_eq!(parse_tbw("--tbw", "600 tbw").unwrap(), 600_000_000_000_000);
        assert_eq!(parse_tbw("--tbw", "1.2PB").unwrap(), 1_200_000_000_000_000);
        assert_eq!(parse_tbw("--tbw", "1TiB").unwrap(), 1 << 40);
        assert_eq!(parse_tbw("--tbw", "150GB").unwrap(), 150_000_000_000);
    }

    #[test]
    fn tbw_rejects() {
        for bad in ["", "-5", "abc", "5XB", "1.2.3", ".5", "5.", "0", "0.0001", "1e30", "99999999PB"] {
            let e = parse_tbw("--tbw", bad).unwrap_err();
            assert!(e.to_string().contains("--tbw"), "{bad}: {e}");
            assert!(e.is_usage());
        }
    }

    #[test]
    fn decimals() {
        assert_eq!(one_decimal(600.0), "600");
        assert_eq!(one_decimal(43.42), "43.4");
        assert_eq!(one_decimal(10.96), "11");
        assert_eq!(dec_bytes(42.1e12), "42.1 TB");
        assert_eq!(dec_bytes(35.2e9), "35.2 GB");
        assert_eq!(dec_bytes(12.0), "12 B");
        assert_eq!(in_unit(557.9e12, "TB"), "557.9 TB");
    }

    #[test]
    fn positive_numbers() {
        assert_eq!(parse_positive("--dwpd", "0.3", "drive writes per day", 100.0).unwrap(), 0.3);
        assert!(parse_positive("--dwpd", "0", "x", 100.0).is_err());
        assert!(parse_positive("--dwpd", "nan", "x", 100.0).is_err());
        assert!(parse_positive("--dwpd", "1000", "x", 100.0).is_err());
    }

    proptest! {
        #[test]
        fn tbw_never_panics(s in "\\PC{0,12}") {
            let _ = parse_tbw("--tbw", &s);
        }

        #[test]
        fn tbw_whole_terabytes(n in 1u64..100_000) {
            prop_assert_eq!(parse_tbw("--tbw", &format!("{n}TB")).unwrap(), n * 1_000_000_000_000);
            prop_assert_eq!(parse_tbw("--tbw", &n.to_string()).unwrap(), n * 1_000_000_000_000);
        }
    }
}
