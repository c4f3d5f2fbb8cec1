//! The checklist. Each check reads [`Facts`] and ends found (with causes), passed or not run
//! (with the reason). Thresholds and sources: `docs/doctor.md`.

use crate::facts::{Facts, Smart};
use crate::model::{Cause, Check, Evidence, Severity, Status};
use crate::smart_extra;
use platform::diag::{Layer, Read};

/// Weights within a severity: measured beats configured beats possible.
pub mod weight {
    /// A limit that caps every figure (a cgroup's, a link's), or a measured effect.
    pub const MEASURED: u32 = 90;
    /// A setting read from the system that costs speed.
    pub const CONFIGURED: u32 = 60;
    /// A setting that costs only some workloads.
    pub const PARTIAL: u32 = 40;
    /// Something worth knowing, possibly costly.
    pub const POSSIBLE: u32 = 20;
}

/// Every check's code and title, in the order run and listed.
pub const CHECKS: [(&str, &str); 17] = [
    ("pcie-link", "PCIe link speed and width"),
    ("sata-link", "SATA link speed and cable errors"),
    ("usb-link", "USB link speed and driver"),
    ("device-errors", "media and device errors"),
    ("thermal", "thermal throttling"),
    ("write-cache", "write cache"),
    ("ncq", "command queueing (NCQ)"),
    ("trim", "free space and TRIM"),
    ("alignment", "partition alignment"),
    ("power", "power management"),
    ("scheduler", "I/O scheduler and the rotational flag"),
    ("request-limits", "request size and queue limits"),
    ("competing-io", "competing I/O"),
    ("stacking", "stacking layers and cgroup limits"),
    ("drive-state", "drive state: write cliff, wear, spare, SMR"),
    ("virtual", "virtual disk"),
    ("probe", "latency floor and throughput (--probe)"),
];

/// The outcome of running every check.
#[derive(Debug, Default)]
pub struct Findings {
    pub checks: Vec<Check>,
    pub causes: Vec<Cause>,
}

/// What one check returns: passed (with a short note), or not run (with the reason). Causes
/// pushed make it found.
type Outcome = Result<Option<String>, String>;

struct Ctx<'a> {
    f: &'a Facts,
    causes: Vec<Cause>,
    check: &'static str,
}

impl Ctx<'_> {
    #[allow(clippy::too_many_arguments)]
    fn cause(
        &mut self,
        code: &str,
        severity: Severity,
        weight: u32,
        device: Option<&str>,
        summary: String,
        evidence: Vec<Evidence>,
        cost: Option<String>,
        fix: String,
    ) {
        self.causes.push(Cause {
            code: code.into(),
            check: self.check.into(),
            severity,
            device: device.map(str::to_string),
            summary,
            evidence,
            cost,
            fix,
            weight,
        });
    }
}

fn ev<T: std::fmt::Display>(name: &str, r: &Read<T>) -> Evidence {
    Evidence::new(name, &r.value, r.source.clone())
}

fn gb_s(bytes_per_s: f64) -> String {
    if bytes_per_s >= 1e9 {
        format!("{:.2} GB/s", bytes_per_s / 1e9)
    } else {
        format!("{:.0} MB/s", bytes_per_s / 1e6)
    }
}

/// Run every check on `f`.
pub fn run(f: &Facts) -> Findings {
    type CheckFn = fn(&mut Ctx<'_>) -> Outcome;
    let fns: [CheckFn; 17] = [
        pcie_link,
        sata_link,
        usb_link,
        device_errors,
        thermal,
        write_cache,
        ncq,
        trim,
        alignment,
        power,
        scheduler,
        request_limits,
        competing_io,
        stacking,
        drive_state,
        virtual_disk,
        probe,
    ];
    let mut out = Findings::default();
    for ((code, title), check) in CHECKS.iter().zip(fns) {
        let mut cx = Ctx { f, causes: Vec::new(), check: code };
        let r = if f.layers.is_empty() && *code != "competing-io" && *code != "power" {
            Err(f.no_device.clone().unwrap_or_else(|| "the target has no block device".into()))
        } else {
            check(&mut cx)
        };
        let (status, reason) = if !cx.causes.is_empty() {
            (Status::Found, None)
        } else {
            match r {
                Ok(note) => (Status::Passed, note),
                Err(why) => (Status::NotRun, Some(why)),
            }
        };
        out.checks.push(Check { code: (*code).into(), title: (*title).into(), status, reason });
        out.causes.extend(cx.causes);
    }
    out
}

fn smart_of<'a>(f: &'a Facts, disk: &str) -> Option<(&'a health::model::SmartReport, &'a serde_json::Value, &'a str)> {
    match &f.disk(disk)?.smart {
        Smart::Read { report, raw, source } => Some((report, raw, source)),
        Smart::NotRead(_) => None,
    }
}

fn smart_reason(f: &Facts) -> String {
    let why: Vec<String> = f
        .disks
        .iter()
        .filter_map(|d| match &d.smart {
            Smart::NotRead(w) => Some(format!("{}: {w}", d.name)),
            Smart::Read { .. } => None,
        })
        .collect();
    if why.is_empty() {
        "no whole disk under the target".into()
    } else {
        format!("SMART not read ({})", why.join("; "))
    }
}

fn is_virtual_transport(t: &str) -> bool {
    matches!(t, "virtio" | "xen")
}

fn pcie_link(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut seen = Vec::new();
    for d in &f.disks {
        let Some(p) = &d.links.pcie else { continue };
        seen.push(format!("{} {}", d.name, p.current.label()));
        let cap = match p.port_max {
            Some(port) => platform::diag::PcieRate {
                gts: p.device_max.gts.min(port.gts),
                width: p.device_max.width.min(port.width),
            },
            None => p.device_max,
        };
        let file = |name: &str| format!("{}/{name}", p.source);
        let evidence = vec![
            Evidence::new("current_link_speed", format!("{} GT/s", p.current.gts), file("current_link_speed")),
            Evidence::new("current_link_width", p.current.width, file("current_link_width")),
            Evidence::new("max_link_speed", format!("{} GT/s", p.device_max.gts), file("max_link_speed")),
            Evidence::new("max_link_width", p.device_max.width, file("max_link_width")),
        ];
        let below_device = p.current.gts < p.device_max.gts || p.current.width < p.device_max.width;
        if !below_device {
            continue;
        }
        let degraded = p.current.gts < cap.gts || p.current.width < cap.width;
        // A link that trained down can regain what both ends can do; a slot-limited one, the
        // drive's own maximum in a better slot.
        let could = if degraded { cap } else { p.device_max };
        let cost = Some(format!(
            "{}: at most {} instead of {}",
            p.current.label(),
            gb_s(p.current.bytes_per_s()),
            gb_s(could.bytes_per_s())
        ));
        let mut ev2 = evidence.clone();
        if let Some(port) = p.port_max {
            // The upstream port is the device directory's parent.
            let port_dir = p.source.rsplit_once('/').map_or(p.source.as_str(), |(dir, _)| dir);
            ev2.push(Evidence::new(
                "upstream port max_link_speed",
                format!("{} GT/s", port.gts),
                format!("{port_dir}/max_link_speed"),
            ));
            ev2.push(Evidence::new("upstream port max_link_width", port.width, format!("{port_dir}/max_link_width")));
        }
        let share = p.current.bytes_per_s() / p.device_max.bytes_per_s();
        let sev = if share < 0.75 { Severity::High } else { Severity::Medium };
        if degraded {
            cx.cause(
                "pcie-link-degraded",
                sev,
                weight::CONFIGURED,
                Some(&d.name),
                format!(
                    "{}'s PCIe link runs at {} though both the drive and the slot can do {}: the link trained down",
                    d.name,
                    p.current.label(),
                    cap.label()
                ),
                ev2,
                cost,
                format!(
                    "read `lspci -vv -s {}` (LnkSta) under load: some drives lower the link at idle; if it stays \
                     low, reseat the drive, check the riser or cable, and update the BIOS",
                    p.address
                ),
            );
        } else {
            cx.cause(
                "pcie-slot-limit",
                sev,
                weight::CONFIGURED,
                Some(&d.name),
                format!(
                    "{} can do {} but its slot gives {}: the slot, not the drive, sets the ceiling",
                    d.name,
                    p.device_max.label(),
                    p.current.label()
                ),
                ev2,
                cost,
                "move the drive to a slot wired for its full width and generation (the board's manual says which \
                 M.2/PCIe slots share lanes with the chipset or other slots)"
                    .into(),
            );
        }
    }
    if seen.is_empty() {
        return Err(no_link_reason(f, "PCIe"));
    }
    Ok(Some(seen.join(", ")))
}

fn no_link_reason(f: &Facts, what: &str) -> String {
    let kinds: Vec<String> = f.disk_layers().map(|l| format!("{} is {}", l.name, l.transport)).collect();
    if f.disk_layers().any(|l| is_virtual_transport(l.transport)) {
        format!("a virtual disk: the host's {what} link is not visible ({})", kinds.join(", "))
    } else {
        format!("no {what} link under the target ({})", kinds.join(", "))
    }
}

fn sata_link(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut seen = Vec::new();
    for d in &f.disks {
        let smart = smart_of(f, &d.name);
        let iface = smart.and_then(|(_, raw, src)| smart_extra::interface_speed(raw).map(|s| (s, src)));
        if d.links.sata.is_none() && iface.is_none() {
            continue;
        }
        let mut evidence = Vec::new();
        let mut current = None;
        let mut limit = None;
        if let Some(s) = &d.links.sata {
            current = s.current_gbps;
            limit = s.hw_limit_gbps;
            evidence.push(Evidence::new(
                "sata_spd",
                s.current_gbps.map_or("unknown".into(), |g| format!("{g} Gbps")),
                format!("{}/sata_spd", s.source),
            ));
            evidence.push(Evidence::new(
                "hw_sata_spd_limit",
                s.hw_limit_gbps.map_or("unknown".into(), |g| format!("{g} Gbps")),
                format!("{}/hw_sata_spd_limit", s.source),
            ));
            if let Some(n) = s.spdn_cnt.filter(|n| *n > 0) {
                // `ataN/linkN/devN.0/ata_device/devN.0/spdn_cnt`, beside the link's directory.
                let k = s.link.trim_start_matches("link");
                let src = match s.source.strip_suffix(&format!("/ata_link/{}", s.link)) {
                    Some(base) => format!("{base}/dev{k}.0/ata_device/dev{k}.0/spdn_cnt"),
                    None => format!("/sys/class/ata_device/dev{k}.0/spdn_cnt"),
                };
                evidence.push(Evidence::new("spdn_cnt (speed lowered after errors)", n, src));
            }
        }
        if let Some(((cur, max), src)) = iface {
            evidence.push(Evidence::new("interface_speed current", format!("{cur} Gb/s"), src));
            evidence.push(Evidence::new("interface_speed max", format!("{max} Gb/s"), src));
            current = current.or(Some(cur));
            // The drive's own maximum counts as well as the controller's.
            limit = Some(limit.map_or(max, |l: f64| l.min(max)));
        }
        seen.push(format!("{} {}", d.name, current.map_or("unknown".into(), |g| format!("{g} Gb/s"))));
        if let (Some(c), Some(l)) = (current, limit) {
            if c + 0.01 < l {
                cx.cause(
                    "sata-link-slow",
                    if c <= l / 2.0 { Severity::High } else { Severity::Medium },
                    weight::CONFIGURED,
                    Some(&d.name),
                    format!("{}'s SATA link runs at {c} Gb/s though both ends can do {l} Gb/s", d.name),
                    evidence.clone(),
                    Some(format!("at most {} instead of {}", gb_s(c * 1e8), gb_s(l * 1e8))),
                    "replace the SATA cable and try another port; a link that keeps falling back (spdn_cnt) points at \
                     the cable or connector"
                        .into(),
                );
            }
        }
        if let Some((r, _, src)) = smart {
            if let Some(crc) = r.crc_errors.filter(|n| *n > 0) {
                cx.cause(
                    "sata-crc-errors",
                    Severity::Medium,
                    weight::MEASURED,
                    Some(&d.name),
                    format!("{} counted {crc} interface CRC errors: transfers were retried", d.name),
                    vec![Evidence::new("SMART 199 UDMA_CRC_Error_Count", crc, src)],
                    Some("every CRC error costs a retried command; many slow the link down".into()),
                    "replace the SATA cable and reseat both ends (the counter never goes down: watch whether it \
                     still rises)"
                        .into(),
                );
            }
        }
    }
    if seen.is_empty() {
        return Err(no_link_reason(f, "SATA"));
    }
    Ok(Some(seen.join(", ")))
}

fn usb_link(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut seen = Vec::new();
    for d in &f.disks {
        let Some(u) = &d.links.usb else { continue };
        seen.push(format!("{} {} Mb/s {}", d.name, u.speed_mbps, u.driver.as_deref().unwrap_or("")));
        let mut evidence =
            vec![Evidence::new("speed", format!("{} Mb/s", u.speed_mbps), format!("{}/speed", u.source))];
        if let Some(v) = &u.version {
            evidence.push(Evidence::new("version", v, format!("{}/version", u.source)));
        }
        if let Some(drv) = &u.driver {
            evidence.push(Evidence::new("interface driver", drv, format!("{}/*/driver", u.source)));
        }
        if u.speed_mbps <= 480 {
            cx.cause(
                "usb-high-speed",
                Severity::High,
                weight::CONFIGURED,
                Some(&d.name),
                format!("{} is connected at {} Mb/s (USB 2.0 or slower)", d.name, u.speed_mbps),
                evidence.clone(),
                Some(format!("at most {} whatever the drive can do", gb_s(platform::diag::usb_ceiling(u.speed_mbps)))),
                "plug it into a USB 3 port (blue or marked SS) with a USB 3 cable; `lsusb -t` shows each port's speed"
                    .into(),
            );
        }
        if u.driver.as_deref() == Some("usb-storage") && u.speed_mbps >= 5000 {
            cx.cause(
                "usb-storage-not-uas",
                Severity::Medium,
                weight::CONFIGURED,
                Some(&d.name),
                format!(
                    "{} uses usb-storage (Bulk-Only Transport) on a {} Mb/s link: one command at a time",
                    d.name, u.speed_mbps
                ),
                evidence,
                Some("no command queueing: random I/O at QD>1 runs like QD1, and sequential throughput drops".into()),
                "if the bridge supports UAS, remove a `usb-storage.quirks=VID:PID:u` entry that disables it (kernel \
                 command line or /etc/modprobe.d); `lsusb -t` shows Driver=uas when it is used"
                    .into(),
            );
        }
    }
    if seen.is_empty() {
        return Err(no_link_reason(f, "USB"));
    }
    Ok(Some(seen.join(", ")))
}

fn device_errors(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut read_any = false;
    let mut notes = Vec::new();
    for d in &f.disks {
        if let Some((r, _, src)) = smart_of(f, &d.name) {
            read_any = true;
            let mut evidence = Vec::new();
            let mut worst = None::<Severity>;
            let bump = |s: Severity, w: &mut Option<Severity>| *w = Some(w.map_or(s, |x| x.min(s)));
            for (name, v, sev) in [
                ("SMART 5 Reallocated_Sector_Ct", r.reallocated_sectors, Severity::High),
                ("SMART 197 Current_Pending_Sector", r.pending_sectors, Severity::Critical),
                ("SMART 198 Offline_Uncorrectable", r.offline_uncorrectable, Severity::Critical),
                ("NVMe media_errors", r.media_errors, Severity::Critical),
            ] {
                if let Some(n) = v.filter(|n| *n > 0) {
                    evidence.push(Evidence::new(name, n, src));
                    bump(sev, &mut worst);
                }
            }
            if let Some(sev) = worst {
                cx.cause(
                    "media-errors",
                    sev,
                    weight::MEASURED,
                    Some(&d.name),
                    format!("{} reports media errors: reads of bad areas are retried, slowly, or fail", d.name),
                    evidence,
                    Some("each retried read can take seconds on a disk, and data there is at risk".into()),
                    format!(
                        "back up now; run `diskmeter health {0}` over days to see whether the counts rise, and \
                         `smartctl -t long /dev/{0}`",
                        d.name
                    ),
                );
            }
            if let Some(w) = r.critical_warning.filter(|w| *w != 0) {
                cx.cause(
                    "critical-warning",
                    Severity::Critical,
                    weight::MEASURED,
                    Some(&d.name),
                    format!(
                        "{} raises NVMe critical warnings: {}",
                        d.name,
                        health::model::critical_warning_flags(w).join(", ")
                    ),
                    vec![Evidence::new("NVMe critical_warning", format!("0x{w:02x}"), src)],
                    None,
                    format!("back up now and read `diskmeter health {}`", d.name),
                );
            }
        } else if let Smart::NotRead(w) = &d.smart {
            notes.push(format!("SMART of {}: {w}", d.name));
        }
    }
    for l in &cx.f.layers {
        if let Some(e) = l.ioerr_cnt.as_ref().filter(|e| e.value > 0) {
            cx.cause(
                "device-io-errors",
                Severity::Medium,
                weight::MEASURED,
                Some(&l.name),
                format!("{} ended {} commands in an error since its driver attached", l.name, e.value),
                vec![ev("ioerr_cnt", e)],
                Some("errored commands are retried or fail; timeouts among them stall I/O for seconds".into()),
                format!("look for the errors in `dmesg | grep {}` and read `diskmeter health`", l.name),
            );
        }
    }
    match &f.kernel_log {
        Ok(lines) if !lines.is_empty() => {
            read_any = true;
            let evidence: Vec<Evidence> =
                lines.iter().rev().take(3).map(|k| Evidence::new("kernel log", &k.line, "/dev/kmsg")).collect();
            cx.cause(
                "kernel-io-errors",
                Severity::High,
                weight::MEASURED,
                None,
                format!("the kernel log holds {} I/O error lines for devices of this stack", lines.len()),
                evidence,
                None,
                "read `dmesg -T | grep -i error`: errors on one disk point at the disk or its cable, errors on every \
                 disk at the controller"
                    .into(),
            );
        }
        Ok(_) => read_any = true,
        Err(e) => notes.push(format!("kernel log not readable ({e})")),
    }
    if !read_any {
        return Err(notes.join("; "));
    }
    Ok((!notes.is_empty()).then(|| notes.join("; ")))
}

fn thermal(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut read_any = false;
    let mut seen = Vec::new();
    for d in &f.disks {
        let Some((r, raw, src)) = smart_of(f, &d.name) else { continue };
        read_any = true;
        let t = smart_extra::thermal(raw);
        if let Some(c) = r.temperature_c {
            seen.push(format!("{} {c} °C", d.name));
        }
        let mut evidence = Vec::new();
        if let Some(c) = r.temperature_c {
            evidence.push(Evidence::new("temperature", format!("{c} °C"), src));
        }
        let critical = t.critical_comp_time_min.unwrap_or(0);
        let warning = t.warning_temp_time_min.unwrap_or(0);
        let transitions: u64 = t.transitions.iter().sum();
        if critical > 0 {
            evidence.push(Evidence::new("critical_comp_time (minutes)", critical, src));
        }
        if warning > 0 {
            evidence.push(Evidence::new("warning_temp_time (minutes)", warning, src));
        }
        for (i, n) in t.transitions.iter().enumerate().filter(|(_, n)| **n > 0) {
            evidence.push(Evidence::new(format!("thermal_temp{}_transition_count", i + 1), n, src));
        }
        if critical > 0 || warning > 0 || transitions > 0 {
            cx.cause(
                "thermal-throttling",
                if critical > 0 || warning > 0 { Severity::High } else { Severity::Medium },
                weight::MEASURED,
                Some(&d.name),
                format!("{} has run hot enough to throttle itself", d.name),
                evidence,
                Some("a throttling drive cuts its speed, often to a fraction, until it cools".into()),
                "add airflow or a heatsink to the drive; watch `diskmeter health` temperature during a long write"
                    .into(),
            );
        }
    }
    if !read_any {
        return Err(smart_reason(f));
    }
    Ok((!seen.is_empty()).then(|| seen.join(", ")))
}

fn write_cache(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut seen = Vec::new();
    for l in f.disk_layers() {
        if matches!(l.transport, "zram" | "ram") {
            continue;
        }
        let smart_off = smart_of(f, &l.name).and_then(|(_, raw, src)| smart_extra::write_cache(raw).map(|e| (e, src)));
        let Some(wc) = &l.write_cache else { continue };
        seen.push(format!("{} {}", l.name, wc.value));
        let through = wc.value == "write through";
        let smart_says_off = smart_off.is_some_and(|(on, _)| !on);
        if !(through || smart_says_off) {
            continue;
        }
        let mut evidence = vec![ev("queue/write_cache", wc)];
        if let Some((on, src)) = smart_off {
            evidence.push(Evidence::new("write_cache.enabled", on, src));
        }
        if l.transport == "nvme" && !smart_says_off {
            // NVMe without a volatile write cache (VWC): drives with power-loss protection.
            cx.cause(
                "write-cache-off",
                Severity::Info,
                weight::POSSIBLE,
                Some(&l.name),
                format!(
                    "{} has no volatile write cache (write through): usually a drive with power-loss protection",
                    l.name
                ),
                evidence,
                None,
                "nothing to change when the drive has power-loss protection; `nvme id-ctrl` shows VWC".into(),
            );
            continue;
        }
        cx.cause(
            "write-cache-off",
            Severity::High,
            weight::CONFIGURED,
            Some(&l.name),
            format!("{}'s write cache is off (write through): every write waits for the medium", l.name),
            evidence,
            Some("small and synchronous writes run at the medium's speed: often several times slower".into()),
            format!(
                "turn the drive's cache on: `smartctl -s wcache,on /dev/{0}` (or `hdparm -W1 /dev/{0}`); if only the \
                 kernel's flag is wrong: `echo 'write back' > /sys/block/{0}/queue/write_cache`",
                l.name
            ),
        );
    }
    if seen.is_empty() {
        return Err("no whole disk shows its write cache setting".into());
    }
    Ok(Some(seen.join(", ")))
}

fn ncq(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut seen = Vec::new();
    for l in f.disk_layers() {
        let Some(q) = &l.device_queue_depth else { continue };
        seen.push(format!("{} queue_depth {}", l.name, q.value));
        // Bulk-Only Transport (usb-storage) queues nothing by design: usb-link reports it.
        let bot = f
            .disk(&l.name)
            .and_then(|d| d.links.usb.as_ref())
            .is_some_and(|u| u.driver.as_deref() == Some("usb-storage"));
        if q.value <= 1 && matches!(l.transport, "sata" | "scsi" | "usb") && !bot {
            cx.cause(
                "ncq-off",
                Severity::Medium,
                weight::CONFIGURED,
                Some(&l.name),
                format!("{} takes one command at a time (queue_depth 1): NCQ is off", l.name),
                vec![ev("device/queue_depth", q)],
                Some("random I/O at any queue depth runs like QD1: an SSD loses most of its random IOPS".into()),
                format!(
                    "`echo 31 > /sys/block/{}/device/queue_depth`; look for `libata.force=noncq` on the kernel \
                     command line",
                    l.name
                ),
            );
        }
    }
    if seen.is_empty() {
        let kinds: Vec<&str> = f.disk_layers().map(|l| l.transport).collect();
        if kinds.contains(&"nvme") {
            return Ok(Some("NVMe queues natively".into()));
        }
        return Err(format!("no SATA or SCSI queue depth to read ({})", kinds.join(", ")));
    }
    Ok(Some(seen.join(", ")))
}

/// Whether the bottom of the stack is flash, as far as is known.
fn is_ssd(f: &Facts, l: &Layer) -> Option<bool> {
    if let Some((r, _, _)) = smart_of(f, &l.name) {
        if let Some(s) = r.is_ssd() {
            return Some(s);
        }
    }
    if is_virtual_transport(l.transport) || l.transport == "usb" {
        return None;
    }
    l.rotational.as_ref().map(|r| !r.value)
}

fn trim(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let flash: Vec<&Layer> = f.disk_layers().filter(|l| is_ssd(f, l) == Some(true)).collect();
    if flash.is_empty() {
        let unknown = f.disk_layers().any(|l| is_ssd(f, l).is_none());
        if !unknown {
            return Ok(Some("rotational disks: TRIM does not apply".into()));
        }
    }
    let target_flash = !flash.is_empty();
    let name = flash.first().map(|l| l.name.clone());
    if let Some(m) = &f.mount {
        if let (Some(size), Some(free)) = (m.size_bytes, m.free_bytes) {
            if size > 0 {
                #[allow(clippy::cast_precision_loss)]
                let used = 100.0 * (size - free.min(size)) as f64 / size as f64;
                if used >= 90.0 && target_flash {
                    cx.cause(
                        "ssd-full",
                        if used >= 97.0 { Severity::High } else { Severity::Medium },
                        weight::CONFIGURED,
                        name.as_deref(),
                        format!("the file system on {} is {used:.0} % full", m.mount_point),
                        vec![
                            Evidence::new("size", size, format!("statvfs({})", m.mount_point)),
                            Evidence::new("free", free, format!("statvfs({})", m.mount_point)),
                        ],
                        Some(
                            "an SSD with little free space has few clean blocks: writes wait for garbage collection"
                                .into(),
                        ),
                        "free space to below 80 % use, then run `fstrim -v` on the mount point".into(),
                    );
                }
            }
        }
    }
    // Discard through the stack: a layer that passes none hides TRIM from the drive.
    if target_flash {
        // Partitions show their disk's queue: the disk (or a dm/md layer) is the one to name.
        if let Some(l) = f
            .layers
            .iter()
            .filter(|l| l.role != "partition")
            .find(|l| l.discard_max_bytes.as_ref().is_some_and(|d| d.value == 0))
        {
            let bottom = f.disks.iter().any(|d| d.name == l.name);
            cx.cause(
                "discard-unsupported",
                Severity::Medium,
                weight::CONFIGURED,
                Some(&l.name),
                if bottom {
                    format!("{} accepts no discard (TRIM)", l.name)
                } else {
                    format!("{} ({}) passes no discard (TRIM) down to the drive", l.name, l.role)
                },
                vec![ev(
                    "queue/discard_max_bytes",
                    l.discard_max_bytes.as_ref().unwrap_or(&Read { value: 0, source: String::new() }),
                )],
                Some("the drive never learns which blocks are free: writes slow down as it fills".into()),
                if l.role == "dm" {
                    "open the dm-crypt volume with discards allowed (`cryptsetup --allow-discards`, or `discard` in \
                     /etc/crypttab); LVM: `issue_discards = 1`"
                        .into()
                } else {
                    "check the controller or bridge: TRIM may need a firmware update or another adapter".into()
                },
            );
        }
        if let Some(m) = &f.mount {
            let discard = m.options.split(',').any(|o| o == "discard" || o.starts_with("discard="));
            if !discard && f.system.trim_timer.is_none() && !matches!(m.fstype.as_str(), "tmpfs" | "zfs") {
                cx.cause(
                    "never-trimmed",
                    Severity::Medium,
                    weight::POSSIBLE,
                    name.as_deref(),
                    format!(
                        "{} ({}) is mounted without `discard` and no fstrim timer or cron job runs",
                        m.mount_point, m.fstype
                    ),
                    vec![
                        Evidence::new("mount options", &m.options, "/proc/self/mountinfo"),
                        Evidence::new("fstrim.timer", "not enabled", "/etc/systemd/system/timers.target.wants"),
                    ],
                    Some(
                        "deleted data stays valid to the drive: garbage collection copies it, writes slow down".into(),
                    ),
                    "`systemctl enable --now fstrim.timer` (weekly TRIM), or run `fstrim -v MOUNTPOINT` now".into(),
                );
            }
        }
        return Ok(Some(format!(
            "TRIM reaches {}",
            flash.iter().map(|l| l.name.as_str()).collect::<Vec<_>>().join(", ")
        )));
    }
    Err("the medium is unknown (no SMART, and the rotational flag of a virtual or USB disk proves nothing)".into())
}

fn alignment(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let parts: Vec<&Layer> = f.layers.iter().filter(|l| l.role == "partition").collect();
    if parts.is_empty() {
        return Ok(Some("no partition under the target (a whole device is aligned)".into()));
    }
    let mut seen = Vec::new();
    for l in parts {
        let phys = l.physical_block_size.as_ref().map_or(512, |p| p.value);
        let Some(start) = &l.start_sector else { continue };
        let bytes = start.value * 512;
        // Flash pages and RAID stripes are 4 KiB or more whatever the drive reports.
        let unit = u64::from(phys.max(4096));
        let offset = l.alignment_offset.as_ref().map_or(0, |a| a.value);
        let mut evidence = vec![ev("start (sectors)", start)];
        if let Some(p) = &l.physical_block_size {
            evidence.push(ev("physical_block_size", p));
        }
        if let Some(a) = &l.alignment_offset {
            evidence.push(ev("alignment_offset", a));
        }
        seen.push(format!("{} starts at sector {}", l.name, start.value));
        if bytes % unit != 0 || offset != 0 {
            cx.cause(
                "misaligned-partition",
                if phys >= 4096 { Severity::High } else { Severity::Medium },
                weight::CONFIGURED,
                Some(&l.name),
                format!(
                    "{} starts at byte {bytes} (sector {}), not on a {} KiB boundary",
                    l.name,
                    start.value,
                    unit / 1024
                ),
                evidence,
                Some("each 4 KiB write straddles two physical blocks: read-modify-write, often half the speed".into()),
                "recreate the partition starting at sector 2048 (1 MiB), the default of parted, fdisk and gdisk, and \
                 copy the data back; `parted /dev/DISK align-check optimal N` checks it"
                    .into(),
            );
        } else if start.value % 2048 != 0 {
            cx.cause(
                "partition-not-mib-aligned",
                Severity::Low,
                weight::POSSIBLE,
                Some(&l.name),
                format!("{} starts at sector {}, not on a 1 MiB boundary", l.name, start.value),
                evidence,
                Some("aligned to 4 KiB; erase blocks and RAID stripes may still be straddled".into()),
                "next time, start partitions at a multiple of 2048 sectors (1 MiB)".into(),
            );
        }
    }
    Ok(Some(seen.join(", ")))
}

fn power(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut read_any = false;
    for d in &f.disks {
        if let Some(p) = &d.links.nvme_power {
            if let Some(def) = &p.default_ps_max_latency_us {
                read_any = true;
                let tol = p.latency_tolerance_us.as_ref();
                let effective = tol.map_or(i128::from(def.value), |t| i128::from(t.value));
                if def.value > 0 && effective > 0 {
                    let mut evidence = vec![ev("default_ps_max_latency_us", def)];
                    if let Some(t) = tol {
                        evidence.push(ev("pm_qos_latency_tolerance_us", t));
                    }
                    cx.cause(
                        "nvme-apst",
                        Severity::Low,
                        weight::POSSIBLE,
                        Some(&d.name),
                        format!(
                            "APST lets {} sleep in power states that take up to {} µs to leave",
                            d.name, effective
                        ),
                        evidence,
                        Some("the first I/O after an idle gap waits for the drive to wake: QD1 latency rises".into()),
                        format!(
                            "for latency-critical use: `echo 0 > /sys/class/nvme/{}/power/pm_qos_latency_tolerance_us`, \
                             or boot with `nvme_core.default_ps_max_latency_us=0`",
                            d.name.split('n').take(2).collect::<Vec<_>>().join("n")
                        ),
                    );
                }
            }
        }
        if let Some(s) = &d.links.sata {
            if let Some(pol) = &s.lpm_policy {
                read_any = true;
                if pol != "max_performance" && pol != "keep_firmware_settings" {
                    cx.cause(
                        "sata-link-power",
                        Severity::Low,
                        weight::POSSIBLE,
                        Some(&d.name),
                        format!("{}'s SATA link may sleep between commands (policy {pol})", d.name),
                        vec![Evidence::new(
                            "link_power_management_policy",
                            pol,
                            "/sys/class/scsi_host/*/link_power_management_policy",
                        )],
                        Some("waking the link adds latency to the first command after a pause".into()),
                        "`echo max_performance > /sys/class/scsi_host/hostN/link_power_management_policy` (or tuned's \
                         throughput-performance profile)"
                            .into(),
                    );
                }
            }
        }
    }
    let govs = &f.system.cpu_governors;
    if !govs.is_empty() {
        read_any = true;
        let driver = f.system.cpufreq_driver.clone().unwrap_or_default();
        // intel_pstate and amd-pstate-epp's "powersave" still raise the clock under load.
        // (amd-pstate without EPP, like intel_cpufreq, runs the generic governors: powersave
        // there holds the lowest frequency.)
        let dynamic = driver == "intel_pstate" || driver == "amd-pstate-epp";
        let slow: Vec<&String> =
            govs.iter().filter(|g| g.as_str() == "conservative" || (g.as_str() == "powersave" && !dynamic)).collect();
        if !slow.is_empty() {
            cx.cause(
                "cpu-governor",
                Severity::Low,
                weight::POSSIBLE,
                None,
                format!("the CPU frequency governor is {} ({driver})", govs.join(", ")),
                vec![Evidence::new(
                    "scaling_governor",
                    govs.join(", "),
                    "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
                )],
                Some("a slow CPU adds to every I/O's submit and completion time: fast NVMe drives show it".into()),
                "`cpupower frequency-set -g performance` while measuring (or tuned's throughput-performance)".into(),
            );
        }
    }
    if !read_any {
        return Err("no power settings visible (no cpufreq, no NVMe APST, no SATA link policy)".into());
    }
    Ok(None)
}

fn scheduler(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut seen = Vec::new();
    for l in f.disk_layers() {
        let Some(s) = &l.scheduler else { continue };
        seen.push(format!("{} {}", l.name, s.value));
        let ssd = is_ssd(f, l);
        if s.value == "bfq" && ssd == Some(true) {
            let mut evidence = vec![ev("queue/scheduler", s)];
            if let Some(ll) = &l.bfq_low_latency {
                evidence.push(ev("iosched/low_latency", ll));
            }
            let ll = l.bfq_low_latency.as_ref().is_some_and(|x| x.value);
            cx.cause(
                "scheduler-for-medium",
                Severity::Low,
                weight::PARTIAL,
                Some(&l.name),
                format!(
                    "{} (flash) is scheduled by BFQ{}",
                    l.name,
                    if ll { " with low_latency on, which favours interactive tasks over throughput" } else { "" }
                ),
                evidence,
                Some("BFQ's per-request work caps a fast SSD's IOPS and adds latency under load".into()),
                format!(
                    "`echo none > /sys/block/{0}/queue/scheduler` (or mq-deadline); keep it with a udev rule",
                    l.name
                ),
            );
        }
        if s.value == "none" && ssd == Some(false) && l.transport != "loop" {
            cx.cause(
                "scheduler-for-medium",
                Severity::Low,
                weight::PARTIAL,
                Some(&l.name),
                format!("{} (rotational) has no I/O scheduler: requests are not sorted or merged", l.name),
                vec![ev("queue/scheduler", s)],
                Some("a disk's head seeks more under mixed load".into()),
                format!("`echo mq-deadline > /sys/block/{}/queue/scheduler`", l.name),
            );
        }
    }
    for l in f.disk_layers() {
        let Some(rot) = l.rotational.as_ref().filter(|r| r.value) else { continue };
        let smart_ssd = smart_of(f, &l.name).and_then(|(r, _, src)| r.is_ssd().map(|s| (s, src)));
        if let Some((true, src)) = smart_ssd {
            cx.cause(
                "rotational-wrong",
                Severity::Low,
                weight::CONFIGURED,
                Some(&l.name),
                format!("{} says rotational though SMART reports a solid-state drive", l.name),
                vec![ev("queue/rotational", rot), Evidence::new("rotation_rate", "solid state", src)],
                Some("the kernel treats it as a disk: scheduler choices and read-ahead suit a spinning disk".into()),
                format!(
                    "`echo 0 > /sys/block/{}/queue/rotational` and a udev rule to keep it (common behind USB bridges)",
                    l.name
                ),
            );
        } else if smart_ssd.is_none() && (is_virtual_transport(l.transport) || l.transport == "usb") {
            cx.cause(
                "rotational-unknown",
                Severity::Info,
                weight::POSSIBLE,
                Some(&l.name),
                format!(
                    "{} ({}) says rotational, as {} do by default: the medium behind it is unknown",
                    l.name,
                    l.transport,
                    if l.transport == "usb" { "USB bridges" } else { "virtual disks" }
                ),
                vec![ev("queue/rotational", rot)],
                None,
                "nothing to fix; `doctor --probe` measures the latency floor, which tells a cache or flash from a \
                 disk"
                    .into(),
            );
        }
    }
    if seen.is_empty() {
        return Err("no scheduler to read (bio-based devices have none)".into());
    }
    Ok(Some(seen.join(", ")))
}

fn request_limits(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut read_any = false;
    for l in f.disk_layers() {
        if let (Some(ms), Some(hw)) = (&l.max_sectors_kb, &l.max_hw_sectors_kb) {
            read_any = true;
            if ms.value < hw.value && ms.value < 512 {
                cx.cause(
                    "request-size-limited",
                    Severity::Low,
                    weight::PARTIAL,
                    Some(&l.name),
                    format!(
                        "{} splits requests above {} KiB though the hardware takes {} KiB",
                        l.name, ms.value, hw.value
                    ),
                    vec![ev("queue/max_sectors_kb", ms), ev("queue/max_hw_sectors_kb", hw)],
                    Some("large sequential I/O reaches the device as several requests".into()),
                    format!("`echo {} > /sys/block/{}/queue/max_sectors_kb`", hw.value.min(1280), l.name),
                );
            }
        }
        if let Some(nr) = &l.nr_requests {
            read_any = true;
            // A device that takes no more commands than this (usb-storage: 1) is not held back.
            let deeper = l.device_queue_depth.as_ref().is_none_or(|q| q.value > nr.value);
            if nr.value < 32 && deeper {
                cx.cause(
                    "nr-requests-low",
                    Severity::Medium,
                    weight::CONFIGURED,
                    Some(&l.name),
                    format!("{} holds at most {} requests in its queue", l.name, nr.value),
                    vec![ev("queue/nr_requests", nr)],
                    Some(format!(
                        "a workload deeper than QD{} (QD × threads) waits in the block layer, not the device",
                        nr.value
                    )),
                    format!("`echo 256 > /sys/block/{}/queue/nr_requests`", l.name),
                );
            }
        }
    }
    if let Some(top) = f.top() {
        if let Some(ra) = &top.read_ahead_kb {
            read_any = true;
            if ra.value < 128 && f.mount.is_some() {
                cx.cause(
                    "read-ahead-low",
                    Severity::Low,
                    weight::PARTIAL,
                    Some(&top.name),
                    format!("{}'s read-ahead is {} KiB", top.name, ra.value),
                    vec![ev("queue/read_ahead_kb", ra)],
                    Some("buffered sequential reads (cp, tar, databases' scans) come in small pieces".into()),
                    format!("`echo 1024 > /sys/block/{}/queue/read_ahead_kb` (or `blockdev --setra 2048`)", top.name),
                );
            }
        }
    }
    if !read_any {
        return Err("no queue limits to read".into());
    }
    Ok(None)
}

fn competing_io(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    for l in &f.layers {
        if let Some(a) = l.md_sync_action.as_ref().filter(|a| a.value != "idle" && a.value != "frozen") {
            cx.cause(
                "md-resync",
                Severity::High,
                weight::MEASURED,
                Some(&l.name),
                format!("{} is busy with a {} of the array", l.name, a.value),
                vec![ev("md/sync_action", a)],
                Some("the resync reads or writes every member: other I/O gets what is left".into()),
                "wait for it to end (`cat /proc/mdstat`), or lower /proc/sys/dev/raid/speed_limit_max meanwhile".into(),
            );
        }
    }
    if let Some(load) = &f.load {
        let busiest = load.devices.iter().max_by(|a, b| a.util_pct.total_cmp(&b.util_pct));
        if let Some(d) = busiest {
            let iops = d.read_iops + d.write_iops;
            if iops >= 10.0 || d.util_pct >= 5.0 {
                let mut evidence = vec![
                    Evidence::new(
                        "IOPS (r+w)",
                        format!("{iops:.0}"),
                        format!("/proc/diskstats over {:.0} s", load.seconds),
                    ),
                    Evidence::new("%util", format!("{:.1}", d.util_pct), "/proc/diskstats"),
                    Evidence::new("MB/s (r+w)", format!("{:.1}", d.read_mb_s + d.write_mb_s), "/proc/diskstats"),
                ];
                for p in load.processes.iter().take(3) {
                    evidence.push(Evidence::new(
                        format!("process {} ({})", p.pid, p.command),
                        format!("read {} B, wrote {} B", p.read_bytes, p.write_bytes),
                        format!("/proc/{}/io", p.pid),
                    ));
                }
                cx.cause(
                    "competing-io",
                    if d.util_pct >= 50.0 { Severity::High } else { Severity::Medium },
                    weight::MEASURED,
                    Some(&d.name),
                    format!(
                        "other I/O keeps {} {:.0} % busy ({iops:.0} IOPS) while nothing of diskmeter's runs",
                        d.name, d.util_pct
                    ),
                    evidence,
                    Some("a benchmark or an application shares the device with this load".into()),
                    "find the process in `diskmeter top` and stop or reschedule it before measuring".into(),
                );
            }
        }
        if let Some(psi) = load.io_pressure_some_pct.filter(|p| *p >= 10.0) {
            cx.cause(
                "io-pressure",
                Severity::Medium,
                weight::MEASURED,
                None,
                format!("tasks waited on I/O {psi:.0} % of the time (PSI)"),
                vec![Evidence::new("PSI io some", format!("{psi:.1} %"), "/proc/pressure/io")],
                None,
                "find who waits and on which device: `diskmeter top`".into(),
            );
        }
        return Ok(Some(format!("watched {:.0} s", load.seconds)));
    }
    if let Some(p) = f.system.io_pressure.filter(|p| p.some_avg60 >= 10.0) {
        cx.cause(
            "io-pressure",
            Severity::Medium,
            weight::PARTIAL,
            None,
            format!("tasks waited on I/O {:.0} % of the last minute (PSI)", p.some_avg60),
            vec![Evidence::new("PSI io some avg60", format!("{:.2} %", p.some_avg60), "/proc/pressure/io")],
            None,
            "`doctor --load 10s` watches the devices; `diskmeter top` shows who does I/O".into(),
        );
    }
    Ok(Some("no resync; add --load 10s to watch the devices".into()))
}

fn stacking(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    for c in &f.cgroup {
        let what = match c.kind {
            "read_iops" => format!("{} read IOPS", c.value),
            "write_iops" => format!("{} write IOPS", c.value),
            "read_bps" => format!("{} read", gb_s(c.value as f64)),
            _ => format!("{} write", gb_s(c.value as f64)),
        };
        let name = f.layers.iter().find(|l| format!("{}:{}", l.device.major, l.device.minor) == c.device);
        cx.cause(
            "cgroup-limit",
            Severity::High,
            weight::MEASURED + 5,
            name.map(|l| l.name.as_str()),
            format!("this process's cgroup limits {} to {what}", name.map_or(c.device.as_str(), |l| l.name.as_str())),
            vec![Evidence::new(c.kind, c.value, c.source.clone())],
            Some(format!("no figure on this device can exceed {what}: it measures the limit, not the disk")),
            format!("run outside the cgroup, or raise the limit in {}", c.source),
        );
    }
    for l in &f.layers {
        let uuid = l.dm_uuid.as_deref().unwrap_or("");
        let dm_name = l.device.dm_name.as_deref().unwrap_or("");
        if uuid.starts_with("CRYPT-") {
            cx.cause(
                "dm-crypt",
                Severity::Info,
                weight::PARTIAL,
                Some(&l.name),
                format!("{} ({dm_name}) encrypts every byte (dm-crypt)", l.name),
                vec![Evidence::new("dm/uuid", uuid, format!("/sys/block/{}/dm/uuid", l.name))],
                Some("CPU work per byte and, by default, extra queueing in kernel work queues".into()),
                "on fast SSDs: `cryptsetup refresh --perf-no_read_workqueue --perf-no_write_workqueue NAME`".into(),
            );
        }
        if dm_name.ends_with("-cow") || dm_name.ends_with("-real") {
            cx.cause(
                "lvm-snapshot",
                Severity::Medium,
                weight::CONFIGURED,
                Some(&l.name),
                format!("{} ({dm_name}) belongs to an LVM snapshot: writes to the origin are copied first", l.name),
                vec![Evidence::new("dm/name", dm_name, format!("/sys/block/{}/dm/name", l.name))],
                Some("each first write to a chunk costs a read and two writes".into()),
                "remove snapshots you no longer need: `lvremove VG/SNAPSHOT`".into(),
            );
        }
        if l.role == "md" {
            let level = l.device.md_level.clone().unwrap_or_default();
            let parity = level == "raid5" || level == "raid6";
            cx.cause(
                "md-layer",
                if parity { Severity::Low } else { Severity::Info },
                weight::POSSIBLE,
                Some(&l.name),
                format!("{} is an md {level} array", l.name),
                vec![Evidence::new("md/level", &level, format!("/sys/block/{}/md/level", l.name))],
                parity.then(|| "small random writes cost a read-modify-write of the parity".into()),
                "nothing to change; measure the members alone to see the array's own cost".into(),
            );
        }
        if l.role == "loop" {
            cx.cause(
                "loop-layer",
                Severity::Info,
                weight::POSSIBLE,
                Some(&l.name),
                format!("{} is a loop device over {}", l.name, l.loop_backing_file.as_deref().unwrap_or("a file")),
                vec![Evidence::new(
                    "loop/backing_file",
                    l.loop_backing_file.as_deref().unwrap_or("?"),
                    format!("/sys/block/{}/loop/backing_file", l.name),
                )],
                Some("its I/O passes through the backing file's file system and device".into()),
                "measure the backing file's device to see the disk itself".into(),
            );
        }
    }
    if let Some(m) = &f.mount {
        if let Some(opt) = m.options.split(',').find(|o| o.starts_with("compress")) {
            cx.cause(
                "fs-compression",
                Severity::Info,
                weight::POSSIBLE,
                None,
                format!("{} ({}) compresses data ({opt})", m.mount_point, m.fstype),
                vec![Evidence::new("mount options", &m.options, "/proc/self/mountinfo")],
                Some("figures depend on the data's compressibility, and compression costs CPU".into()),
                "benchmark with random data (diskmeter's default) and remember real data may differ".into(),
            );
        }
    }
    let names: Vec<String> = f.layers.iter().map(|l| format!("{} ({})", l.name, l.role)).collect();
    Ok(Some(format!("stack: {}; no cgroup limit", names.join(" → "))))
}

/// Drive-managed SMR models (manufacturers' published lists, 2020): the writes that fill the
/// CMR cache are fast, then sustained random writes fall to a few MB/s.
const DM_SMR_MODELS: [&str; 16] = [
    "WD20EFAX",
    "WD30EFAX",
    "WD40EFAX",
    "WD60EFAX",
    "WD20EZAZ",
    "WD60EZAZ",
    "ST2000DM008",
    "ST3000DM007",
    "ST4000DM004",
    "ST5000DM000",
    "ST6000DM003",
    "ST8000DM004",
    "ST2000LM015",
    "ST5000LM000",
    "DT02ABA400",
    "DT02ABA600",
];

fn drive_state(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut read_any = false;
    for d in &f.disks {
        if let Some(s) = &d.state {
            read_any = true;
            if let Some(b) = s.cliff_bytes {
                cx.cause(
                    "write-cliff",
                    Severity::Medium,
                    weight::MEASURED,
                    Some(&d.name),
                    format!(
                        "{} has a write cliff: a sustained write fell to its post-cache rate after {b} bytes",
                        d.name
                    ),
                    vec![Evidence::new("cliff_bytes", b, s.source.clone())],
                    Some(format!(
                        "writes beyond {:.1} GiB in one go run at the slower rate",
                        b as f64 / f64::from(1u32 << 30)
                    )),
                    "expect it for large copies; `diskmeter run --sustained` measures both rates".into(),
                );
            }
        }
        if let Some((r, raw, src)) = smart_of(f, &d.name) {
            read_any = true;
            if let Some(w) = r.wear.as_ref().filter(|w| w.used_percent >= 90.0) {
                cx.cause(
                    "wear-out",
                    Severity::High,
                    weight::MEASURED,
                    Some(&d.name),
                    format!("{} has used {:.0} % of its rated endurance", d.name, w.used_percent),
                    vec![Evidence::new(&w.source, format!("{:.0} %", w.used_percent), src)],
                    Some("worn flash needs more error correction and retries; drives slow down near the end".into()),
                    format!("plan its replacement; `diskmeter health {}` forecasts the date", d.name),
                );
            }
            if let Some(sp) = r.available_spare {
                let th = r.available_spare_threshold.unwrap_or(10);
                if sp <= th.max(10) {
                    cx.cause(
                        "low-spare",
                        Severity::High,
                        weight::MEASURED,
                        Some(&d.name),
                        format!("{} has {sp} % spare blocks left (threshold {th} %)", d.name),
                        vec![Evidence::new("available_spare", format!("{sp} %"), src)],
                        None,
                        "back up and replace the drive".into(),
                    );
                }
            }
            let model = r.model.clone().unwrap_or_default();
            let listed = DM_SMR_MODELS.iter().any(|m| model.contains(m));
            let hdd_trim = r.rotation_rate.is_some_and(|x| x > 0) && smart_extra::trim_supported(raw);
            if listed || hdd_trim {
                let mut evidence = vec![Evidence::new("model", &model, src)];
                if hdd_trim {
                    evidence.push(Evidence::new("rotating disk with TRIM", "yes", src));
                }
                cx.cause(
                    "smr-drive",
                    Severity::Medium,
                    weight::CONFIGURED,
                    Some(&d.name),
                    format!("{} ({model}) is a drive-managed SMR disk", d.name),
                    evidence,
                    Some(
                        "once its CMR cache fills, sustained random writes fall to a few MB/s; RAID rebuilds crawl"
                            .into(),
                    ),
                    "use a CMR disk where sustained writes or RAID matter".into(),
                );
            }
        }
    }
    for l in f.disk_layers() {
        if let Some(z) = l.zoned.as_ref().filter(|z| z.value == "host-managed" || z.value == "host-aware") {
            read_any = true;
            cx.cause(
                "smr-drive",
                Severity::Info,
                weight::POSSIBLE,
                Some(&l.name),
                format!("{} is a {} zoned (SMR) device", l.name, z.value),
                vec![ev("queue/zoned", z)],
                Some("random writes inside a zone are not allowed (host-managed) or slow (host-aware)".into()),
                "use a zone-aware file system (btrfs, f2fs) or application".into(),
            );
        }
    }
    if !read_any {
        return Err(format!("{}; no diskmeter device state", smart_reason(f)));
    }
    Ok(None)
}

fn virtual_disk(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let mut any = false;
    for l in f.disk_layers() {
        if !(is_virtual_transport(l.transport) || matches!(l.transport, "zram" | "ram")) {
            continue;
        }
        any = true;
        if matches!(l.transport, "zram" | "ram") {
            cx.cause(
                "ram-device",
                Severity::Info,
                weight::CONFIGURED,
                Some(&l.name),
                format!("{} is a RAM block device ({}): figures describe memory", l.name, l.transport),
                vec![Evidence::new("device", &l.name, format!("/sys/block/{}", l.name))],
                None,
                "measure a disk to learn a disk's speed".into(),
            );
            continue;
        }
        let mut evidence = vec![Evidence::new("transport", l.transport, format!("/sys/block/{}/device", l.name))];
        if let Some(r) = &l.rotational {
            evidence.push(ev("queue/rotational", r));
        }
        cx.cause(
            "virtual-disk",
            Severity::Info,
            weight::CONFIGURED,
            Some(&l.name),
            format!(
                "{} is a virtual disk ({}): the medium is the host's and unknown from inside; the host's cache and \
                 other guests share it",
                l.name, l.transport
            ),
            evidence,
            Some("figures describe the host's storage stack, its cache and its limits, not one disk".into()),
            "for the disk's own figures, measure on the host; `doctor --probe` shows whether a cache answers".into(),
        );
    }
    if !any {
        return Ok(Some("physical disks".into()));
    }
    Ok(None)
}

/// Where the narrowest link was read (the device directory of its PCIe, SATA or USB link).
fn link_source(l: &platform::diag::Links) -> String {
    // The ceiling's name says which link it is ("PCIe 3.0 x4", "SATA 6 Gb/s", "USB 480 Mb/s").
    let Some((_, label)) = l.ceiling() else { return "sysfs".into() };
    let found = if label.starts_with("PCIe") {
        l.pcie.as_ref().map(|p| p.source.clone())
    } else if label.starts_with("USB") {
        l.usb.as_ref().map(|u| u.source.clone())
    } else {
        l.sata.as_ref().map(|s| format!("{}/sata_spd", s.source))
    };
    found.unwrap_or_else(|| "sysfs".into())
}

/// A rotating disk cannot answer a random 4 KiB read in under this (seek plus half a turn of
/// a 15 000 rpm disk is about 3.5 ms; 1 ms leaves a wide margin).
pub const ROTATIONAL_FLOOR_US: f64 = 1000.0;

/// Flash slower than this at QD1 for 4 KiB random reads answers at a disk's pace (NAND reads
/// take 50–100 µs, SATA SSDs answer in about 100 µs, NVMe in tens of µs).
pub const FLASH_FLOOR_US: f64 = 500.0;

fn probe(cx: &mut Ctx<'_>) -> Outcome {
    let f = cx.f;
    let Some(p) = &f.probe else {
        return Err(match &f.probe_error {
            Some(e) => format!("the probe could not run: {e}"),
            None => "not asked for (--probe runs a 5-second read-only test)".into(),
        });
    };
    // As inside a benchmark: every whole disk says it rotates (one flash member answers fast).
    let disks: Vec<&Layer> = f.disk_layers().collect();
    let rotational = !disks.is_empty() && disks.iter().all(|l| l.says_it_rotates());
    if rotational && p.qd1_mean_us < ROTATIONAL_FLOOR_US {
        let rot = disks.first().and_then(|l| l.rotational.as_ref());
        let virt = f.disk_layers().any(|l| is_virtual_transport(l.transport));
        cx.cause(
            "faster-than-medium",
            Severity::Info,
            weight::MEASURED,
            disks.first().map(|l| l.name.as_str()),
            format!(
                "4 KiB random reads at QD1 took {:.0} µs on average from a device that says it rotates: {}",
                p.qd1_mean_us,
                if virt { "the host's cache answers" } else { "a cache answers, or the flag is wrong" }
            ),
            vec![
                Evidence::new("QD1 4 KiB random read mean", format!("{:.0} µs", p.qd1_mean_us), "probe"),
                rot.map_or_else(
                    || Evidence::new("queue/rotational", 1, "queue/rotational"),
                    |r| ev("queue/rotational", r),
                ),
            ],
            Some("figures describe a cache, not the medium: a disk needs milliseconds per random read".into()),
            "to measure the medium, use a test area far larger than every cache (--size), or measure on the host"
                .into(),
        );
    }
    // Flash answers a 4 KiB read in tens to a few hundred µs; 500 µs at QD1 is a disk's pace.
    let flash: Vec<&Layer> = f.disk_layers().filter(|l| is_ssd(f, l) == Some(true)).collect();
    if !flash.is_empty() && flash.len() == f.disk_layers().count() && p.qd1_mean_us > FLASH_FLOOR_US {
        cx.cause(
            "slow-latency-floor",
            Severity::Medium,
            weight::MEASURED,
            flash.first().map(|l| l.name.as_str()),
            format!(
                "4 KiB random reads at QD1 took {:.0} µs on average from flash, which answers in well under {} µs",
                p.qd1_mean_us, FLASH_FLOOR_US
            ),
            vec![Evidence::new("QD1 4 KiB random read mean", format!("{:.0} µs", p.qd1_mean_us), "probe")],
            Some("every dependent read (a database lookup, a file open) waits this long".into()),
            "look at power states (nvme-apst, sata-link-power above), thermal throttling, errors and competing I/O; \
             `doctor --load 10s` shows who else uses the device"
                .into(),
        );
    }
    if let Some((disk, (ceiling, label))) =
        f.disks.iter().filter_map(|d| d.links.ceiling().map(|c| (d, c))).min_by(|a, b| a.1 .0.total_cmp(&b.1 .0))
    {
        let got = p.seq_mb_s * 1e6;
        if got >= 0.97 * ceiling {
            cx.cause(
                "link-bound",
                Severity::High,
                weight::MEASURED,
                Some(&disk.name),
                format!("sequential reads reach {} of the link's {} ({label})", gb_s(got), gb_s(ceiling)),
                vec![
                    Evidence::new("sequential read", gb_s(got), "probe"),
                    Evidence::new("link ceiling", format!("{} ({label})", gb_s(ceiling)), link_source(&disk.links)),
                ],
                Some("the drive may be faster than the link lets it show".into()),
                "use a faster link (slot, port or cable) to see the drive's own ceiling".into(),
            );
        }
    }
    Ok(Some(format!(
        "QD1 {:.0} µs mean, QD32 {:.0} IOPS, sequential {:.0} MB/s",
        p.qd1_mean_us, p.qd32_iops, p.seq_mb_s
    )))
}
