//! Fields of smartctl's JSON that the typed [`health::model::SmartReport`] does not keep.

use serde_json::Value;

/// A SATA drive's negotiated and maximum interface speed in Gb/s (`interface_speed.current`
/// and `.max`: `units_per_second` × `bits_per_unit`).
pub fn interface_speed(raw: &Value) -> Option<(f64, f64)> {
    let gbps = |v: &Value| -> Option<f64> {
        let u = v.get("units_per_second")?.as_f64()?;
        let b = v.get("bits_per_unit")?.as_f64()?;
        Some(u * b / 1e9).filter(|g| *g > 0.0)
    };
    let s = raw.get("interface_speed")?;
    let max = gbps(s.get("max")?)?;
    let current = s.get("current").and_then(gbps).unwrap_or(max);
    Some((current, max))
}

/// `write_cache.enabled` (smartctl `-g wcache`), when reported.
pub fn write_cache(raw: &Value) -> Option<bool> {
    raw.get("write_cache")?.get("enabled")?.as_bool()
}

/// Whether an ATA drive reports TRIM support (`trim.supported`).
pub fn trim_supported(raw: &Value) -> bool {
    raw.get("trim").and_then(|t| t.get("supported")).and_then(Value::as_bool).unwrap_or(false)
}

/// NVMe thermal history (minutes above the warning and critical composite temperatures, and
/// thermal management transition counts when smartctl reports them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Thermal {
    pub warning_temp_time_min: Option<u64>,
    pub critical_comp_time_min: Option<u64>,
    pub transitions: Vec<u64>,
}

pub fn thermal(raw: &Value) -> Thermal {
    let Some(log) = raw.get("nvme_smart_health_information_log") else { return Thermal::default() };
    let n = |k: &str| log.get(k).and_then(Value::as_u64);
    Thermal {
        warning_temp_time_min: n("warning_temp_time"),
        critical_comp_time_min: n("critical_comp_time"),
        transitions: ["thermal_temp1_transition_count", "thermal_temp2_transition_count"]
            .iter()
            .filter_map(|k| n(k))
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_extra_fields() {
        let v: Value = serde_json::from_str(
            r#"{"interface_speed":{"max":{"units_per_second":60,"bits_per_unit":100000000},
                "current":{"units_per_second":15,"bits_per_unit":100000000}},
                "write_cache":{"enabled":false},"trim":{"supported":true},
                "nvme_smart_health_information_log":{"warning_temp_time":12,"critical_comp_time":0}}"#,
        )
        .unwrap();
        assert_eq!(interface_speed(&v), Some((1.5, 6.0)));
        assert_eq!(write_cache(&v), Some(false));
        assert!(trim_supported(&v));
        assert_eq!(thermal(&v).warning_temp_time_min, Some(12));
        assert_eq!(interface_speed(&Value::Null), None);
    }
}
