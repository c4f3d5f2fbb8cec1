//! The doctor's parsers of sysfs and procfs text: garbage never panics, well-formed text
//! reads back, and a kernel log line names a device only by its whole name.
#![allow(clippy::unwrap_used)]

use diskmeter_platform::diag::{parse_gbps, parse_gts, parse_kernel_errors, parse_pressure};
use proptest::prelude::*;

/// Text near the real shapes (keys, `=`, numbers, blank lines) as well as any characters.
fn pressure_like() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("some".to_string()),
        Just("full".to_string()),
        Just("avg10=".to_string()),
        Just("avg60=".to_string()),
        Just("total=".to_string()),
        Just("=".to_string()),
        Just(" ".to_string()),
        Just("\n".to_string()),
        "[0-9.eE+-]{0,12}",
        any::<String>(),
    ];
    proptest::collection::vec(token, 0..24).prop_map(|v| v.concat())
}

/// A real device name: a family's prefix and an index.
fn device_name() -> impl Strategy<Value = String> {
    (
        prop_oneof![
            Just("sd"),
            Just("vd"),
            Just("xvd"),
            Just("nvme0n"),
            Just("dm-"),
            Just("md"),
            Just("loop"),
            Just("mmcblk"),
            Just("zram")
        ],
        "[a-z0-9]{1,2}",
    )
        .prop_map(|(p, i)| format!("{p}{i}"))
}

/// The kernel's I/O error messages, with `{}` where the device goes.
const TEMPLATES: [&str; 5] = [
    "blk_update_request: I/O error, dev {}, sector 2048 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
    "Buffer I/O error on dev {}, logical block 0, async page read",
    "sd 2:0:0:0: [{}] tag#3 Add. Sense: Unrecovered read error - auto reallocate failed: critical medium error",
    "critical medium error, dev {}, sector 4096 op 0x0:(READ)",
    "I/O error, dev {}, sector 8 op 0x1:(WRITE) flags 0x800",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn pressure_never_panics(text in pressure_like()) {
        let _ = parse_pressure(&text);
    }

    #[test]
    fn pressure_reads_back_well_formed_text(
        s10 in 0.0f64..100.0, s60 in 0.0f64..100.0, f10 in 0.0f64..100.0, total in any::<u64>(), blank in any::<bool>()
    ) {
        let text = format!(
            "some avg10={s10:.2} avg60={s60:.2} avg300=0.00 total={total}\n{}full avg10={f10:.2} avg60=0.00 avg300=0.00 total=1\n",
            if blank { "\n" } else { "" }
        );
        let p = parse_pressure(&text).unwrap();
        prop_assert!((p.some_avg10 - s10).abs() < 0.006);
        prop_assert!((p.some_avg60 - s60).abs() < 0.006);
        prop_assert!((p.full_avg10 - f10).abs() < 0.006);
        prop_assert_eq!(p.some_total_us, total);
    }

    #[test]
    fn gts_and_gbps_never_panic(text in any::<String>()) {
        for v in [parse_gts(&text), parse_gbps(&text)].into_iter().flatten() {
            prop_assert!(v.is_finite() && v > 0.0, "{text:?} → {v}");
        }
    }

    #[test]
    fn gts_and_gbps_read_sysfs_shapes(tenths in 1u32..1000) {
        let v = f64::from(tenths) / 10.0;
        let gts = parse_gts(&format!("{v:.1} GT/s PCIe")).unwrap();
        prop_assert!((gts - v).abs() < 1e-9);
        let gbps = parse_gbps(&format!("{v:.1} Gbps")).unwrap();
        prop_assert!((gbps - v).abs() < 1e-9);
        prop_assert_eq!(parse_gbps(&format!("{v:.1}Gbps")), Some(gbps));
    }

    #[test]
    fn kernel_errors_never_panic(text in any::<String>(), names in proptest::collection::vec(any::<String>(), 0..4)) {
        let _ = parse_kernel_errors(&text, &names);
    }

    /// Lines that mention only a longer name (`sdab`, `xvda`) are not the device's (`sda`,
    /// `vda`); lines that mention the device are.
    #[test]
    fn kernel_errors_match_whole_names_only(
        name in device_name(),
        suffix in "[a-z0-9]{1,3}",
        prefix in "[a-z0-9]{1,2}",
        t in 0usize..TEMPLATES.len(),
        seq in 0u32..100_000,
    ) {
        let template = TEMPLATES[t];
        let longer = format!("{name}{suffix}");
        let wider = format!("{prefix}{name}");
        let record = |dev: &str| format!("3,{seq},123456,-;{}", template.replace("{}", dev));
        let names = vec![name.clone()];
        prop_assert!(parse_kernel_errors(&record(&longer), &names).is_empty(), "{} matched {}", name, longer);
        prop_assert!(parse_kernel_errors(&record(&wider), &names).is_empty(), "{} matched {}", name, wider);
        let log = format!("{}\n{}\n{}\n", record(&longer), record(&name), record(&wider));
        let hits = parse_kernel_errors(&log, &names);
        prop_assert_eq!(hits.len(), 1);
        prop_assert_eq!(&hits[0].line, &template.replace("{}", &name));
    }
}

#[test]
fn an_empty_name_names_nothing() {
    let log = "3,1,2,-;blk_update_request: I/O error, dev sda, sector 2048 op 0x0:(READ)\n";
    assert!(parse_kernel_errors(log, &[String::new()]).is_empty());
    assert_eq!(parse_kernel_errors(log, &[String::new(), "sda".into()]).len(), 1);
}

#[test]
fn pressure_with_a_blank_line_still_parses() {
    let p = parse_pressure(
        "\nsome avg10=1.50 avg60=3.13 avg300=4.37 total=9610\n\nfull avg10=0.00 avg60=2.91 avg300=3.94 total=6732\n",
    );
    assert_eq!(p.map(|p| (p.some_avg60, p.full_avg60)), Some((3.13, 2.91)));
}

#[test]
fn non_finite_speeds_are_unknown() {
    for s in ["inf GT/s PCIe", "NaN GT/s PCIe", "1e999 GT/s PCIe", "Unknown", "", "0 GT/s"] {
        assert_eq!(parse_gts(s), None, "{s}");
    }
    for s in ["infGbps", "NaN Gbps", "<unknown>", "0.0 Gbps"] {
        assert_eq!(parse_gbps(s), None, "{s}");
    }
}
