//! Windows path names as plain strings, on every OS: which names are devices, physical drives,
//! volumes and drive letters, so that the rules built on them (the engine's guard, the
//! target's kind) are tested everywhere. Also [`DriveFacts`], the guard's view of a physical
//! drive, which `windows::volume` fills on Windows and tests fake elsewhere.
//!
//! Device names start with `\\.\` (the Win32 device namespace); `//./` is the same with
//! forward slashes, which Windows accepts. Prefixes and names are matched without regard to
//! case, as Windows does.

/// The file diskmeter makes on a volume named by its drive letter (`D:` → `D:\diskmeter.test`).
pub const TEST_FILE_NAME: &str = "diskmeter.test";

/// What a physical drive holds, as the guard needs it before writing to the drive.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct DriveFacts {
    /// The drive's number (`N` of `\\.\PhysicalDriveN`).
    pub number: u32,
    /// Whether a volume on it holds Windows (the system or boot volume).
    pub holds_system: bool,
    /// The drive letters (`C:`) and mount-point paths of every volume with an extent on it.
    pub volumes: Vec<String>,
    /// Its partitions in use (an MBR type other than 0, a GPT type other than the zero GUID).
    pub partitions: u32,
}

/// `s` without the device namespace's prefix (`\\.\` or `//./`), if it has it.
fn device_rest(s: &str) -> Option<&str> {
    let b = s.as_bytes();
    if b.len() < 4 {
        return None;
    }
    let slash = |c: u8| c == b'\\' || c == b'/';
    (slash(b[0]) && slash(b[1]) && b[2] == b'.' && slash(b[3])).then(|| &s[4..])
}

/// `s` without the ASCII prefix `p`, compared without regard to case.
fn strip_prefix_ci<'a>(s: &'a str, p: &str) -> Option<&'a str> {
    let head = s.get(..p.len())?;
    head.eq_ignore_ascii_case(p).then(|| &s[p.len()..])
}

/// The drive number of a physical drive's name: `\\.\PhysicalDrive3` (or
/// `//./physicaldrive3`) → 3. Nothing else: no trailing text, no sign, no empty number.
pub fn physical_drive(s: &str) -> Option<u32> {
    let digits = strip_prefix_ci(device_rest(s)?, "PhysicalDrive")?;
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The letter of a volume's device name: `\\.\D:` or `\\.\D:\` (and the `//./` spellings) → `D`,
/// upper case.
pub fn volume_device(s: &str) -> Option<char> {
    let rest = device_rest(s)?;
    let rest = rest.strip_suffix(['\\', '/']).unwrap_or(rest);
    letter_colon(rest)
}

/// The letter of a bare drive: `D:`, `D:\` or `d:/` → `D`. This is how a user names a volume to
/// test (diskmeter then uses `D:\` + [`TEST_FILE_NAME`]). `D:dir`, `D:\dir` and `\\.\D:` are not
/// bare drives.
pub fn drive_letter(s: &str) -> Option<char> {
    let rest = s.strip_suffix(['\\', '/']).unwrap_or(s);
    letter_colon(rest)
}

/// `X:` exactly → `X` upper case.
fn letter_colon(s: &str) -> Option<char> {
    match s.as_bytes() {
        [c, b':'] if c.is_ascii_alphabetic() => Some(char::from(c.to_ascii_uppercase())),
        _ => None,
    }
}

/// Whether `s` names a device rather than a file: the device namespace (`\\.\`, `//./`) or the
/// NT object root through `\\?\GLOBALROOT\` (`\\?\GLOBALROOT\Device\Harddisk0\Partition1`).
/// A volume's GUID name without a trailing backslash (`\\?\Volume{…}`) is its device too.
pub fn is_device_path(s: &str) -> bool {
    if device_rest(s).is_some() {
        return true;
    }
    let Some(rest) = strip_prefix_ci(s, r"\\?\") else {
        return false;
    };
    if strip_prefix_ci(rest, r"GLOBALROOT\").is_some() {
        return true;
    }
    strip_prefix_ci(rest, "Volume{").is_some() && !rest.ends_with('\\')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn physical_drives() {
        assert_eq!(physical_drive(r"\\.\PhysicalDrive3"), Some(3));
        assert_eq!(physical_drive(r"\\.\physicaldrive0"), Some(0));
        assert_eq!(physical_drive("//./physicaldrive12"), Some(12));
        assert_eq!(physical_drive(r"\\.\PHYSICALDRIVE7"), Some(7));
        for no in [
            r"\\.\PhysicalDrive",
            r"\\.\PhysicalDrive3\",
            r"\\.\PhysicalDrive3x",
            r"\\.\PhysicalDrive-1",
            r"\\.\PhysicalDrive+1",
            r"\\.\PhysicalDrive99999999999",
            r"\\?\PhysicalDrive3",
            r"\\.\C:",
            "PhysicalDrive3",
            r"\\.",
            "",
        ] {
            assert_eq!(physical_drive(no), None, "{no}");
        }
    }

    #[test]
    fn volume_devices() {
        assert_eq!(volume_device(r"\\.\D:"), Some('D'));
        assert_eq!(volume_device(r"\\.\d:\"), Some('D'));
        assert_eq!(volume_device("//./e:/"), Some('E'));
        for no in [r"\\.\D", r"\\.\D:\x", r"\\.\DD:", r"\\.\1:", "D:", r"\\?\D:", r"\\.\D:\\"] {
            assert_eq!(volume_device(no), None, "{no}");
        }
    }

    #[test]
    fn drive_letters() {
        assert_eq!(drive_letter("D:"), Some('D'));
        assert_eq!(drive_letter(r"D:\"), Some('D'));
        assert_eq!(drive_letter("d:/"), Some('D'));
        for no in ["D", "D:dir", r"D:\dir", r"\\.\D:", "1:", "DE:", r"D:\\", "", ":"] {
            assert_eq!(drive_letter(no), None, "{no}");
        }
    }

    #[test]
    fn device_paths() {
        for yes in [
            r"\\.\PhysicalDrive0",
            r"\\.\C:",
            "//./c:",
            r"\\?\GLOBALROOT\Device\Harddisk0\Partition1",
            r"\\?\globalroot\device\cdrom0",
            r"\\?\Volume{4c1b02c1-d990-11dc-99ae-806e6f6e6963}",
        ] {
            assert!(is_device_path(yes), "{yes}");
        }
        for no in [
            r"C:\x",
            "C:",
            r"\\?\C:\x",
            r"\\?\Volume{4c1b02c1-d990-11dc-99ae-806e6f6e6963}\",
            r"\\server\share",
            "/dev/sda",
            "",
        ] {
            assert!(!is_device_path(no), "{no}");
        }
    }

    proptest! {
        #[test]
        fn any_number_round_trips(n: u32, upper: bool, fwd: bool) {
            let name = if upper { "PHYSICALDRIVE" } else { "PhysicalDrive" };
            let pre = if fwd { "//./" } else { r"\\.\" };
            let s = format!("{pre}{name}{n}");
            prop_assert_eq!(physical_drive(&s), Some(n));
            prop_assert!(is_device_path(&s));
            prop_assert_eq!(volume_device(&s), None);
            prop_assert_eq!(drive_letter(&s), None);
        }

        #[test]
        fn any_letter_is_one_drive(c in proptest::char::range('a', 'z'), upper: bool, tail in "(|\\\\|/)") {
            let c = if upper { c.to_ascii_uppercase() } else { c };
            let want = Some(c.to_ascii_uppercase());
            prop_assert_eq!(drive_letter(&format!("{c}:{tail}")), want);
            prop_assert_eq!(volume_device(&format!(r"\\.\{c}:{tail}")), want);
            prop_assert_eq!(drive_letter(&format!(r"\\.\{c}:{tail}")), None);
            prop_assert_eq!(physical_drive(&format!(r"\\.\{c}:{tail}")), None);
        }

        #[test]
        fn nothing_panics(s in "\\PC{0,40}") {
            let _ = (physical_drive(&s), volume_device(&s), drive_letter(&s), is_device_path(&s));
        }

        #[test]
        fn non_ascii_near_the_prefix_never_panics(s in "[\\\\/.?]{0,5}\\PC{0,6}") {
            let _ = (physical_drive(&s), volume_device(&s), drive_letter(&s), is_device_path(&s));
        }
    }
}
