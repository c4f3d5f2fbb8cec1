//! smartctl's exit status: a bitmask (smartctl(8), "RETURN VALUES").

use serde::Serialize;

/// The eight bits, lowest first, with the names diskmeter's JSON uses.
pub const FLAG_NAMES: [&str; 8] = [
    "command_line_error",
    "device_open_failed",
    "smart_command_failed",
    "disk_failing",
    "prefail_attribute_at_threshold",
    "attribute_at_threshold_in_past",
    "error_log_has_errors",
    "self_test_log_has_errors",
];

/// What each bit means, for human output.
pub const FLAG_TEXT: [&str; 8] = [
    "smartctl did not accept its command line",
    "the device could not be opened or identified",
    "a SMART or other ATA/NVMe command failed, or a checksum error in SMART data",
    "SMART status: DISK FAILING",
    "a pre-failure attribute is at or below its threshold now",
    "an attribute was at or below its threshold in the past",
    "the device error log contains records of errors",
    "the self-test log contains records of errors",
];

/// The decoded exit status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(into = "ExitStatusJson")]
pub struct ExitStatus(pub u8);

impl ExitStatus {
    pub fn bit(self, n: u8) -> bool {
        n < 8 && self.0 & (1 << n) != 0
    }
    pub fn command_line_error(self) -> bool {
        self.bit(0)
    }
    pub fn open_failed(self) -> bool {
        self.bit(1)
    }
    pub fn smart_command_failed(self) -> bool {
        self.bit(2)
    }
    pub fn disk_failing(self) -> bool {
        self.bit(3)
    }
    pub fn prefail_now(self) -> bool {
        self.bit(4)
    }
    pub fn threshold_in_past(self) -> bool {
        self.bit(5)
    }
    pub fn error_log(self) -> bool {
        self.bit(6)
    }
    pub fn self_test_errors(self) -> bool {
        self.bit(7)
    }
    /// Names of the bits that are set, lowest first.
    pub fn flags(self) -> Vec<&'static str> {
        (0..8).filter(|&b| self.bit(b)).map(|b| FLAG_NAMES[b as usize]).collect()
    }
}

/// JSON form: `{"value": 216, "flags": ["disk_failing", …]}`.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ExitStatusJson {
    pub value: u8,
    pub flags: Vec<&'static str>,
}

impl From<ExitStatus> for ExitStatusJson {
    fn from(e: ExitStatus) -> Self {
        ExitStatusJson { value: e.0, flags: e.flags() }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn failing_disk_status_216() {
        // 216 = 0b1101_1000: bits 3, 4, 6, 7 (a real failing Hitachi's status).
        let e = ExitStatus(216);
        assert_eq!(
            e.flags(),
            vec!["disk_failing", "prefail_attribute_at_threshold", "error_log_has_errors", "self_test_log_has_errors"]
        );
        assert!(e.disk_failing() && e.prefail_now() && !e.open_failed());
    }

    #[test]
    fn zero_and_open_failure() {
        assert!(ExitStatus(0).flags().is_empty());
        assert_eq!(ExitStatus(2).flags(), vec!["device_open_failed"]);
    }

    proptest! {
        #[test]
        fn flags_round_trip(v in any::<u8>()) {
            let e = ExitStatus(v);
            let back = e.flags().iter().fold(0u8, |acc, name| {
                acc | 1 << FLAG_NAMES.iter().position(|n| n == name).unwrap_or(0)
            });
            prop_assert_eq!(back, v);
            prop_assert_eq!(e.flags().len() as u32, v.count_ones());
        }
    }
}
