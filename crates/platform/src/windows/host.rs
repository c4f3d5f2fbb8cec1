//! The OS's version (`RtlGetVersion`, which does not lie about it as `GetVersionEx` does to
//! programs without a manifest), Wine's, and the computer's name.

use windows_sys::Wdk::System::SystemServices::RtlGetVersion;
use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
use windows_sys::Win32::System::SystemInformation::{
    ComputerNamePhysicalDnsHostname, GetComputerNameExW, OSVERSIONINFOW,
};

/// `Windows <major>.<minor>.<build>` (`Windows 10.0.19045`; Windows 11 is 10.0 too, from build
/// 22000), or `Windows` if ntdll does not tell.
pub fn os_version() -> String {
    let mut v =
        OSVERSIONINFOW { dwOSVersionInfoSize: std::mem::size_of::<OSVERSIONINFOW>() as u32, ..Default::default() };
    // SAFETY: `v` is a local with its size set, as the call requires.
    let status = unsafe { RtlGetVersion(&mut v) };
    if status < 0 || v.dwMajorVersion == 0 {
        return "Windows".to_string();
    }
    format!("Windows {}.{}.{}", v.dwMajorVersion, v.dwMinorVersion, v.dwBuildNumber)
}

/// Wine's version (`8.0`) when this process runs under Wine: ntdll then exports
/// `wine_get_version`. `None` on Windows.
pub fn wine_version() -> Option<String> {
    let name: Vec<u16> = "ntdll.dll\0".encode_utf16().collect();
    // SAFETY: `name` is NUL-terminated; ntdll is loaded in every process, and the module
    // handle is not released (GetModuleHandleW adds no reference).
    let ntdll = unsafe { GetModuleHandleW(name.as_ptr()) };
    if ntdll.is_null() {
        return None;
    }
    // SAFETY: a NUL-terminated ASCII name; `ntdll` is a loaded module.
    let f = unsafe { GetProcAddress(ntdll, c"wine_get_version".as_ptr().cast()) }?;
    // SAFETY: Wine's ntdll.spec declares `wine_get_version` as a cdecl function without
    // arguments returning a `const char *` (on x86_64 cdecl and the system ABI are the same).
    let get: unsafe extern "C" fn() -> *const std::ffi::c_char = unsafe { std::mem::transmute(f) };
    // SAFETY: calls it as declared.
    let p = unsafe { get() };
    if p.is_null() {
        return None;
    }
    // SAFETY: Wine returns a static NUL-terminated string.
    let s = unsafe { std::ffi::CStr::from_ptr(p) };
    Some(s.to_string_lossy().into_owned())
}

/// The computer's host name (`GetComputerNameExW(ComputerNamePhysicalDnsHostname)`), else the
/// `COMPUTERNAME` variable, else empty.
pub fn hostname() -> String {
    let mut buf = vec![0u16; 256];
    let mut n = buf.len() as u32;
    // SAFETY: `buf` holds `n` u16s; `n` is updated to the length written (without the NUL).
    if unsafe { GetComputerNameExW(ComputerNamePhysicalDnsHostname, buf.as_mut_ptr(), &mut n) } != 0 && n > 0 {
        return String::from_utf16_lossy(&buf[..(n as usize).min(buf.len())]);
    }
    std::env::var("COMPUTERNAME").unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_name() {
        let v = os_version();
        assert!(v.starts_with("Windows"), "{v}");
        assert!(v.len() > "Windows ".len(), "{v}");
        // Under Wine (how CI runs these tests) wine_get_version is there; on Windows it is not.
        if let Some(w) = wine_version() {
            assert!(!w.is_empty());
            assert!(w.chars().next().is_some_and(|c| c.is_ascii_digit()), "{w}");
        }
        if std::env::var_os("WINELOADERNOEXEC").is_some() || std::env::var_os("WINEPREFIX").is_some() {
            assert!(wine_version().is_some(), "under Wine");
        }
        assert!(!hostname().is_empty());
    }
}
