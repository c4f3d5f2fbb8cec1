//! Option values as the user typed them, turned into typed values; every error names the
//! option. Shared by the commands' `Config::new`.

use spec::units;
use spec::{EngineKind, SpecError};

/// `--engine`: any engine.
pub(crate) fn engine(option: &str, s: &str) -> Result<EngineKind, SpecError> {
    let e = EngineKind::parse(s)
        .ok_or_else(|| SpecError::value(option, format!("unknown engine {s:?}; use one of {}", EngineKind::NAMES)))?;
    match e.unavailable() {
        Some(why) => Err(SpecError::value(option, why)),
        None => Ok(e),
    }
}

/// `--engine` of the commands that measure a device (mark, sla, compare): the mem engine
/// is `run`'s only.
pub(crate) fn device_engine(option: &str, s: &str) -> Result<EngineKind, SpecError> {
    match engine(option, s)? {
        EngineKind::Mem => Err(SpecError::value(
            option,
            format!(
                "the mem engine measures memory, not a device, and is only for `diskmeter run`; use {}, \
                 psync or null",
                crate::session::DEFAULT_ENGINE
            ),
        )),
        e => Ok(e),
    }
}

/// A count that must fit 32 bits.
pub(crate) fn u32_count(option: &str, s: &str) -> Result<u32, SpecError> {
    let v = units::parse_count(option, s)?;
    u32::try_from(v).map_err(|_| SpecError::value(option, format!("{s} is too large")))
}

/// A percentage above 0, as a fraction.
pub(crate) fn percent_fraction(option: &str, s: &str) -> Result<f64, SpecError> {
    let p = units::parse_percent(option, s)?;
    if p <= 0.0 {
        return Err(SpecError::value(option, format!("{s} must be above 0%")));
    }
    Ok(p / 100.0)
}

/// `--rw`: one access pattern.
pub(crate) fn rw(option: &str, s: &str) -> Result<spec::RwMode, SpecError> {
    spec::RwMode::parse(s)
        .ok_or_else(|| SpecError::value(option, format!("unknown mode {s:?}; use one of {}", spec::RwMode::NAMES)))
}
