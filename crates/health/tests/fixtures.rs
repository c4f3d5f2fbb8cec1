//! The crafted smartctl 7.3 fixtures (tests/data) through the parser, the verdict, the
//! forecast and the renderer.

#![allow(clippy::unwrap_used)]
// The report tests walk a fake sysfs (symlinks): Unix only; the parser tests run everywhere.
#![cfg_attr(not(unix), allow(unused_imports))]

use diskmeter_health::endurance::RatedSpec;
use diskmeter_health::exit::ExitStatus;
use diskmeter_health::model::SmartReport;
use diskmeter_health::render;
use diskmeter_health::report::{self, HealthConfig, SourceCache};
use diskmeter_health::smartctl::{parse_version, FixtureSource, SmartSource};
use diskmeter_health::state::{Sample, StateFile};
use diskmeter_health::topology::SysPaths;
use diskmeter_health::verdict::{evaluate, Verdict};
use serde_json::Value;
use std::fs;
#[cfg(unix)]
use std::os::unix::fs::symlink;
use std::path::Path;
#[cfg(unix)]
use std::path::PathBuf;

fn data(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name);
    fs::read_to_string(&p).unwrap_or_else(|e| panic!("read {}: {e}", p.display()))
}

fn report_of(name: &str) -> SmartReport {
    let v: Value = serde_json::from_str(&data(name)).expect("fixture is JSON");
    let exit = v.pointer("/smartctl/exit_status").and_then(Value::as_u64).unwrap_or(0) as u8;
    SmartReport::from_json(&v, ExitStatus(exit))
}

#[test]
fn healthy_hdd() {
    let r = report_of("healthy-hdd.json");
    assert_eq!(r.model.as_deref(), Some("WDC WD40EFRX-68N32N0"));
    assert_eq!(r.kind(), "HDD 5400 rpm");
    assert_eq!(r.is_ssd(), Some(false));
    assert_eq!(r.temperature_c, Some(34));
    assert_eq!(r.power_on_hours, Some(21500));
    assert_eq!((r.reallocated_sectors, r.pending_sectors, r.offline_uncorrectable), (Some(0), Some(0), Some(0)));
    assert_eq!(r.crc_errors, Some(0));
    assert_eq!(r.wear, None);
    assert_eq!(r.written, None);
    assert_eq!(r.error_log_count, Some(0));
    let log = r.self_test_log.as_ref().expect("self-test log");
    assert_eq!((log.count, log.errors), (2, 0));
    assert_eq!(r.polling_minutes.extended, Some(497));
    assert_eq!(evaluate(&r), (Verdict::Healthy, vec![]));
}

#[test]
fn sata_ssd_wear_and_written() {
    let r = report_of("sata-ssd.json");
    assert_eq!(r.kind(), "SATA SSD");
    let wear = r.wear.as_ref().expect("wear");
    assert_eq!(wear.used_percent, 19.0);
    assert!(wear.source.starts_with("Wear_Leveling_Count"), "{}", wear.source);
    let w = r.written.as_ref().expect("written");
    assert_eq!(w.bytes, 64_777_770_148 * 512);
    assert!(w.source.contains("Total_LBAs_Written 64777770148 × 512 B"), "{}", w.source);
    assert_eq!(r.reported_uncorrect, Some(0));
    assert_eq!(r.crc_errors, Some(0));
    assert_eq!(r.temperature_c, Some(36));
    assert_eq!(evaluate(&r).0, Verdict::Healthy);
}

#[test]
fn nvme_log() {
    let r = report_of("nvme.json");
    assert!(r.is_nvme());
    assert_eq!(r.kind(), "NVMe SSD");
    assert_eq!(r.written.as_ref().map(|w| w.bytes), Some(64_768_925 * 512_000));
    assert_eq!(r.read.as_ref().map(|w| w.bytes), Some(19_683_018 * 512_000));
    assert_eq!(r.wear.as_ref().map(|w| w.used_percent), Some(3.0));
    assert_eq!((r.available_spare, r.available_spare_threshold), (Some(100), Some(5)));
    assert_eq!(r.media_errors, Some(0));
    assert_eq!(r.critical_warning, Some(0));
    assert_eq!(r.power_on_hours, Some(6726));
    // smartctl 7.3 prints no NVMe self-test log in JSON.
    assert_eq!(r.self_test_log, None);
    assert_eq!(evaluate(&r).0, Verdict::Healthy);
}

#[test]
fn failing_hdd() {
    let r = report_of("failing-hdd.json");
    assert_eq!(
        r.exit.flags(),
        vec!["disk_failing", "prefail_attribute_at_threshold", "error_log_has_errors", "self_test_log_has_errors"]
    );
    assert_eq!(r.smart_passed, Some(false));
    assert_eq!(r.reallocated_sectors, Some(1975));
    assert_eq!(r.pending_sectors, Some(8));
    assert_eq!(r.offline_uncorrectable, Some(2));
    assert_eq!(r.crc_errors, Some(3));
    assert_eq!(r.temperature_c, Some(25));
    assert_eq!(r.error_log_count, Some(56));
    let (v, reasons) = evaluate(&r);
    assert_eq!(v, Verdict::Failing);
    let codes: Vec<&str> = reasons.iter().map(|x| x.code.as_str()).collect();
    for c in [
        "smart_status_failed",
        "prefail_attribute_at_threshold",
        "pending_sectors",
        "offline_uncorrectable",
        "reallocated_sectors",
        "crc_errors",
        "self_test_failed",
        "error_log",
    ] {
        assert!(codes.contains(&c), "missing {c} in {codes:?}");
    }
    assert!(reasons.iter().any(|x| x.message.contains("Reallocated_Sector_Ct (1 ≤ 5)")), "{reasons:?}");
}

#[test]
fn vm_error_is_open_failure() {
    let r = report_of("vm-error.json");
    // smartctl 7.3 on a virtio disk: exit status 1 (bit 0), not bit 1.
    assert_eq!(r.exit.0, 1);
    assert!(r.exit.command_line_error());
    assert!(r.error_messages().contains("Unable to detect device type"));
}

#[test]
fn versions() {
    assert_eq!(parse_version(data("version-7.3.json").as_bytes()), Some((7, 3)));
    assert_eq!(parse_version(data("old-smartctl-version.txt").as_bytes()), Some((6, 6)));
}

#[cfg(unix)]
/// A fake sysfs with one SATA disk per fixture, an NVMe namespace and a virtio disk.
fn fake_sys() -> (tempfile::TempDir, SysPaths) {
    let t = tempfile::tempdir().expect("tempdir");
    let root = t.path();
    let class = root.join("class/block");
    let block = root.join("block");
    fs::create_dir_all(&class).unwrap();
    fs::create_dir_all(&block).unwrap();
    let mk = |name: &str, path: &str, sectors_written: u64| {
        let d = root.join("devices").join(path).join(name);
        fs::create_dir_all(d.join("slaves")).unwrap();
        fs::write(d.join("size"), "976773168\n").unwrap();
        fs::write(d.join("stat"), format!("100 0 800 10 50 0 {sectors_written} 20 0 30 30\n")).unwrap();
        symlink(&d, class.join(name)).unwrap();
        symlink(&d, block.join(name)).unwrap();
        d
    };
    let sda = mk("sda", "pci0000:00/0000:00:1f.2/ata1/host0/target0:0:0/0:0:0:0/block", 68_750_000);
    mk("sdb", "pci0000:00/0000:00:1f.2/ata2/host1/target1:0:0/1:0:0:0/block", 1000);
    mk("sdc", "pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block", 1000);
    mk("nvme0n1", "pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1", 2000);
    mk("vda", "pci0000:00/0000:00:02.0/virtio1/block", 5000);
    let p = sda.join("sda1");
    fs::create_dir_all(&p).unwrap();
    fs::write(p.join("partition"), "1\n").unwrap();
    symlink(&p, class.join("sda1")).unwrap();
    fs::create_dir_all(root.join("proc")).unwrap();
    // Up 2 days: 68 750 000 sectors × 512 B = 35.2 GB in 2 days = 17.6 GB/day.
    fs::write(root.join("proc/uptime"), "172800.00 300000.00\n").unwrap();
    let sys = SysPaths { sys: root.to_path_buf(), proc_dir: root.join("proc"), dev: PathBuf::from("/dev") };
    (t, sys)
}

#[cfg(unix)]
fn fixtures() -> FixtureSource {
    FixtureSource::new((7, 3))
        .with("/dev/sda", &data("sata-ssd.json"))
        .and_then(|f| f.with("/dev/sdb", &data("healthy-hdd.json")))
        .and_then(|f| f.with("/dev/sdc", &data("failing-hdd.json")))
        .and_then(|f| f.with("/dev/nvme0n1", &data("nvme.json")))
        .and_then(|f| f.with("/dev/vda", &data("vm-error.json")))
        .expect("fixtures load")
}

#[cfg(unix)]
const NOW: u64 = 1_795_331_647;

#[cfg(unix)]
fn config(device: Option<&str>) -> HealthConfig {
    HealthConfig {
        device: device.map(str::to_string),
        now_unix: NOW,
        time: "2026-11-22T07:14:07Z".into(),
        tool_version: "0.0.0-test".into(),
        ..Default::default()
    }
}

#[cfg(unix)]
fn run(cfg: &HealthConfig, sys: &SysPaths) -> report::HealthDoc {
    let mut cache = SourceCache::new(|| Ok(Box::new(fixtures()) as Box<dyn SmartSource>));
    report::run(cfg, &mut cache, sys).expect("run")
}

#[cfg(unix)]
#[test]
fn all_disks_human_card() {
    let (_t, sys) = fake_sys();
    let doc = run(&config(None), &sys);
    let names: Vec<&str> = doc.disks.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, vec!["nvme0n1", "sda", "sdb", "sdc", "vda"]);
    let verdicts: Vec<Verdict> = doc.disks.iter().map(|d| d.verdict).collect();
    assert_eq!(
        verdicts,
        vec![Verdict::Healthy, Verdict::Healthy, Verdict::Healthy, Verdict::Failing, Verdict::Unavailable]
    );
    assert_eq!(doc.exit_code(), 1);
    insta::assert_snapshot!("all_disks_human", render::human(&doc));
}

#[cfg(unix)]
#[test]
fn ssd_with_tbw_forecast_from_diskstats() {
    let (_t, sys) = fake_sys();
    let mut cfg = config(Some("sda1"));
    cfg.rated = Some(RatedSpec::Tbw(600_000_000_000_000, "600TB".into()));
    let doc = run(&cfg, &sys);
    assert_eq!(doc.disks.len(), 1);
    let d = &doc.disks[0];
    assert_eq!(d.via, vec!["sda1 is a partition of sda"]);
    let f = d.endurance.as_ref().expect("forecast");
    let rate = f.rate.as_ref().expect("rate");
    assert_eq!(rate.source, "since_boot");
    assert!((rate.bytes_per_day - 17.6e9).abs() < 1.0, "{}", rate.bytes_per_day);
    assert_eq!(
        f.arithmetic.as_deref(),
        Some("600 TB rated − 33.2 TB written = 566.8 TB left at 17.6 GB/day ≈ 32206 days ≈ 88.2 years")
    );
    assert_eq!(doc.exit_code(), 0);
    insta::assert_snapshot!("ssd_tbw_human", render::human(&doc));
}

#[cfg(unix)]
#[test]
fn state_history_gives_the_rate_between_runs() {
    let (t, sys) = fake_sys();
    let state_path = t.path().join("state/health.json");
    // A run 10 days ago recorded 100 GB less written (Total_LBAs_Written is 33.17 TB now).
    let now_written = 64_777_770_148u64 * 512;
    let mut st = StateFile::default();
    st.record(
        "serial:S3YZNB0KB00864E",
        "sda",
        Some("Samsung SSD 860 EVO 500GB"),
        Sample {
            t: NOW - 10 * 86_400,
            smart_written: Some(now_written - 100_000_000_000),
            sectors_written: None,
            boot: None,
            wear_used_percent: Some(18.0),
            power_on_hours: Some(14311),
        },
    );
    st.save(&state_path).unwrap();
    let mut cfg = config(Some("sda"));
    cfg.state_path = Some(state_path.clone());
    cfg.rated = Some(RatedSpec::Dwpd { dwpd: 0.3, years: 5.0 });
    let doc = run(&cfg, &sys);
    let f = doc.disks[0].endurance.as_ref().expect("forecast");
    let rate = f.rate.as_ref().expect("rate");
    assert_eq!(rate.source, "history");
    assert!((rate.bytes_per_day - 10e9).abs() < 1.0);
    let wear = f.wear.as_ref().expect("wear slope");
    assert_eq!(wear.source, "history");
    assert!((wear.percent_per_day - 0.1).abs() < 1e-9);
    assert_eq!(f.rated.as_ref().map(|r| r.source.as_str()), Some("0.3 DWPD × 500.1 GB × 365 × 5 years = 273.8 TB"));
    let saved = StateFile::load(&state_path).unwrap();
    // Kept under the disk's one identity, the history's; the sample under its old key moved
    // there.
    let key = doc.disks[0].device_key.clone().expect("the disk's identity");
    assert!(key.starts_with("serial:") && key.ends_with("/S3YZNB0KB00864E"), "{key}");
    assert_eq!(saved.history(&key).len(), 2);
    assert!(saved.history("serial:S3YZNB0KB00864E").is_empty());
    insta::assert_snapshot!("ssd_history_human", render::human(&doc));
}

#[cfg(unix)]
#[test]
fn virtual_disk_needs_no_smartctl() {
    let (_t, sys) = fake_sys();
    let mut cache =
        SourceCache::new(|| Err(diskmeter_health::HealthError::Smartctl("smartctl not found (test)".into())));
    let doc = report::run(&config(Some("vda")), &mut cache, &sys).unwrap();
    assert_eq!(doc.disks[0].verdict, Verdict::Unavailable);
    assert_eq!(doc.exit_code(), 0);
    let text = render::human(&doc);
    assert!(text.starts_with("/dev/vda: SMART unavailable: virtual device"), "{text}");
    // A real disk without smartctl is an error (exit 1), with the install hint.
    let mut cache = SourceCache::new(|| Err(diskmeter_health::HealthError::Smartctl("smartctl not found".into())));
    let doc = report::run(&config(Some("sda")), &mut cache, &sys).unwrap();
    assert_eq!(doc.disks[0].verdict, Verdict::Error);
    assert_eq!(doc.exit_code(), 1);
}

#[cfg(unix)]
#[test]
fn old_smartctl_is_refused() {
    let (_t, sys) = fake_sys();
    let mut cache = SourceCache::new(|| {
        let mut f = fixtures();
        f.version = Some((6, 6));
        Ok(Box::new(f) as Box<dyn SmartSource>)
    });
    let doc = report::run(&config(Some("sda")), &mut cache, &sys).unwrap();
    assert_eq!(doc.disks[0].verdict, Verdict::Error);
    assert!(doc.disks[0].reasons[0].message.contains("too old"), "{:?}", doc.disks[0].reasons);
}

#[cfg(unix)]
#[test]
fn json_document_shape() {
    let (_t, sys) = fake_sys();
    let mut cfg = config(Some("sdc"));
    cfg.raw = true;
    let doc = run(&cfg, &sys);
    let v: Value = serde_json::from_str(&render::json(&doc)).expect("valid JSON");
    assert_eq!(v["schema"], "diskmeter.health.v1");
    let d = &v["disks"][0];
    assert_eq!(d["verdict"], "failing");
    assert_eq!(d["smart"]["exit_status"]["value"], 216);
    assert_eq!(d["smart"]["exit_status"]["flags"][0], "disk_failing");
    assert_eq!(d["smart"]["pending_sectors"], 8);
    assert_eq!(d["smartctl"]["smartctl"]["exit_status"], 216, "raw smartctl JSON under smartctl with --raw");
    cfg.raw = false;
    let v: Value = serde_json::from_str(&render::json(&run(&cfg, &sys))).unwrap();
    assert!(v["disks"][0].get("smartctl").is_none());
}

#[cfg(unix)]
#[test]
fn known_model_rating_is_used_and_cited() {
    let (_t, sys) = fake_sys();
    let text = data("sata-ssd.json").replace("Samsung SSD 860 EVO 500GB", "Samsung SSD 850 EVO 500GB");
    let src = FixtureSource::new((7, 3)).with("/dev/sda", &text).unwrap();
    let mut once = Some(src);
    let mut cache = SourceCache::new(move || {
        once.take()
            .map(|s| Box::new(s) as Box<dyn SmartSource>)
            .ok_or_else(|| diskmeter_health::HealthError::Smartctl("used".into()))
    });
    let doc = report::run(&config(Some("sda")), &mut cache, &sys).unwrap();
    let f = doc.disks[0].endurance.as_ref().unwrap();
    let rated = f.rated.as_ref().expect("rating from the known-model table");
    assert_eq!(rated.bytes, 150_000_000_000_000);
    assert!(rated.source.contains("semiconductor.samsung.com"), "{}", rated.source);
    assert!(f
        .arithmetic
        .as_deref()
        .unwrap()
        .starts_with("150 TB rated − 33.2 TB written = 116.8 TB left at 17.6 GB/day"));
}

#[cfg(unix)]
#[test]
fn device_without_smart_is_unavailable_not_failing() {
    let (_t, sys) = fake_sys();
    let usb = r#"{"smartctl":{"version":[7,3],"exit_status":4},
        "device":{"name":"/dev/sdb","type":"scsi","protocol":"SCSI"},
        "model_name":"SanDisk Cruzer Blade","smart_support":{"available":false}}"#;
    let mut once = Some(FixtureSource::new((7, 3)).with("/dev/sdb", usb).unwrap());
    let mut cache = SourceCache::new(move || {
        once.take()
            .map(|s| Box::new(s) as Box<dyn SmartSource>)
            .ok_or_else(|| diskmeter_health::HealthError::Smartctl("used".into()))
    });
    let doc = report::run(&config(Some("sdb")), &mut cache, &sys).unwrap();
    assert_eq!(doc.disks[0].verdict, Verdict::Unavailable);
    assert_eq!(doc.disks[0].reasons[0].code, "no_smart");
    assert!(doc.disks[0].endurance.is_none());
    assert_eq!(doc.exit_code(), 0);
}

#[cfg(unix)]
#[test]
fn json_schema_snapshot() {
    let (_t, sys) = fake_sys();
    let doc = run(&config(Some("sdc")), &sys);
    insta::assert_snapshot!("failing_json", render::json(&doc));
}

#[cfg(unix)]
#[test]
fn permission_denied_is_an_error_that_says_root() {
    let (_t, sys) = fake_sys();
    let denied = r#"{"smartctl":{"version":[7,3],"exit_status":2,"messages":[
        {"string":"Smartctl open device: /dev/sdb failed: Permission denied","severity":"error"}]}}"#;
    let mut once = Some(FixtureSource::new((7, 3)).with("/dev/sdb", denied).unwrap());
    let mut cache = SourceCache::new(move || {
        once.take()
            .map(|s| Box::new(s) as Box<dyn SmartSource>)
            .ok_or_else(|| diskmeter_health::HealthError::Smartctl("used".into()))
    });
    let doc = report::run(&config(Some("sdb")), &mut cache, &sys).unwrap();
    assert_eq!(doc.disks[0].verdict, Verdict::Error);
    assert!(doc.disks[0].reasons[0].message.contains("needs root"), "{:?}", doc.disks[0].reasons);
    assert_eq!(doc.exit_code(), 1);
    let text = render::human(&doc);
    assert!(text.starts_with("/dev/sdb: ERROR"), "{text}");
    assert!(text.contains("[error]"), "{text}");
}

#[cfg(unix)]
#[test]
fn rating_needs_one_disk() {
    let (_t, sys) = fake_sys();
    let mut cfg = config(None);
    cfg.rated = Some(RatedSpec::Tbw(1_000_000_000_000, "1TB".into()));
    let mut cache = SourceCache::new(|| Ok(Box::new(fixtures()) as Box<dyn SmartSource>));
    let e = report::run(&cfg, &mut cache, &sys).unwrap_err();
    assert!(e.is_usage() && e.to_string().contains("--tbw"), "{e}");
}
