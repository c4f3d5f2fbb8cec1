//! Facts about the machine for a result's envelope.

/// The CPU's model name, where the OS tells (`/proc/cpuinfo` on Linux).
pub fn cpu_model() -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        parse_cpu_model(&std::fs::read_to_string("/proc/cpuinfo").ok()?)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// The model line of a /proc/cpuinfo text (x86's `model name`, the ARM and MIPS spellings).
pub fn parse_cpu_model(cpuinfo: &str) -> Option<String> {
    for key in ["model name", "Model", "cpu model", "Hardware", "cpu"] {
        for line in cpuinfo.lines() {
            if let Some((k, v)) = line.split_once(':') {
                if k.trim() == key && !v.trim().is_empty() {
                    return Some(v.trim().to_string());
                }
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_model_lines() {
        assert_eq!(parse_cpu_model("processor : 0\nmodel name\t: AMD EPYC 7B13\n").as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(parse_cpu_model("processor : 0\n"), None);
    }
}
