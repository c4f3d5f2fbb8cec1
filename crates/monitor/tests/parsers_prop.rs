//! Property tests for every parser of the monitor: /proc/diskstats lines, /proc/uptime,
//! /proc/pressure/io, and recordings.
#![allow(clippy::unwrap_used)]

use diskmeter_monitor::diskstats::{self, parse_line, Change, Counters};
use diskmeter_monitor::psi;
use diskmeter_monitor::sample::{parse_uptime_cs, ReplaySource};
use proptest::prelude::*;

fn counters() -> impl Strategy<Value = (Vec<u64>, usize)> {
    (proptest::collection::vec(any::<u64>(), 17), prop_oneof![Just(14usize), Just(18), Just(20)])
}

proptest! {
    #[test]
    fn diskstats_lines_round_trip((v, cols) in counters(), major in 0u32..4096, minor in 0u32..1_000_000, name in "[a-z][a-z0-9-]{0,12}") {
        let fields: Vec<String> = v.iter().take(cols - 3).map(|x| x.to_string()).collect();
        let line = format!("{major:>4} {minor:>7} {name} {}", fields.join(" "));
        let l = parse_line(&line).unwrap();
        prop_assert_eq!(l.major, major);
        prop_assert_eq!(l.minor, minor);
        prop_assert_eq!(&l.name, &name);
        prop_assert_eq!(l.counters.columns as usize, cols);
        prop_assert_eq!(l.counters.rd_ios, v[0]);
        prop_assert_eq!(l.counters.time_in_queue, v[10]);
        if cols >= 18 { prop_assert_eq!(l.counters.dc_ticks, v[14]); } else { prop_assert_eq!(l.counters.dc_ticks, 0); }
        if cols == 20 { prop_assert_eq!(l.counters.fl_ticks, v[16]); }
    }

    #[test]
    fn diskstats_never_panics_on_junk(s in "\\PC{0,200}") {
        let _ = parse_line(&s);
        let _ = diskstats::parse(&s);
    }

    #[test]
    fn deltas_are_modular_and_never_exceed_2_to_32_for_ms(p in any::<u32>(), step in 0u32..1_000_000) {
        let prev = Counters { rd_ticks: u64::from(p), rd_ios: 10, rd_sectors: 10, ..Counters::default() };
        let cur = Counters { rd_ticks: u64::from(p.wrapping_add(step)), rd_ios: 20, rd_sectors: 20, ..Counters::default() };
        match diskstats::delta(&prev, &cur) {
            Change::Delta(d) => { prop_assert_eq!(d.rd_ticks, u64::from(step)); prop_assert_eq!(d.rd_ios, 10); }
            Change::Reset => prop_assert!(false, "a forward step is never a reset"),
        }
    }

    #[test]
    fn uptime_parses_or_refuses(s in "\\PC{0,40}", secs in 0u64..10_000_000_000, cs in 0u64..100) {
        let _ = parse_uptime_cs(&s);
        prop_assert_eq!(parse_uptime_cs(&format!("{secs}.{cs:02} 123.45\n")), Some(secs * 100 + cs));
    }

    #[test]
    fn psi_parses_or_refuses(s in "\\PC{0,120}", a in 0.0f64..100.0, t in any::<u64>()) {
        let _ = psi::parse(&s);
        let text = format!("some avg10={a:.2} avg60=0.00 avg300=0.00 total={t}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total=0\n");
        let p = psi::parse(&text).unwrap();
        prop_assert_eq!(p.some.total, t);
        prop_assert!(p.full.is_some());
    }

    #[test]
    fn recordings_never_panic(s in "\\PC{0,300}") {
        let _ = ReplaySource::from_reader(s.as_bytes(), "prop");
    }
}

fn line(name: &str, v: &[u64]) -> String {
    format!("8 0 {name} {}", v.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(" "))
}

proptest! {
    /// Whatever two samples hold (wraps, resets, zero intervals), every figure is finite and
    /// not negative, and the JSON line parses.
    #[test]
    fn figures_are_always_finite(a in proptest::collection::vec(any::<u64>(), 17),
                                 b in proptest::collection::vec(any::<u64>(), 17),
                                 up_a in any::<u32>(), step in 0u64..100_000) {
        use diskmeter_monitor::devices::Filter;
        use diskmeter_monitor::sample::Sample;
        use diskmeter_monitor::{Monitor, Options};
        let s = |v: &[u64], up: u64| Sample {
            t: 0.0, uptime_cs: up, diskstats: vec![line("sda", v)], psi: None, procs: None, devices: vec![],
        };
        let mut m = Monitor::new(Options { filter: Filter { names: vec!["sda".into()], ..Filter::default() }, ..Options::default() });
        m.push(&s(&a, u64::from(up_a)));
        let r = m.push(&s(&b, u64::from(up_a) + step)).unwrap();
        let text = diskmeter_monitor::render::json_line(&r);
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        for d in v["devices"].as_array().unwrap() {
            for (k, x) in d.as_object().unwrap() {
                if let Some(f) = x.as_f64() {
                    prop_assert!(f.is_finite() && f >= 0.0, "{k} = {f}");
                }
            }
        }
    }
}

proptest! {
    /// Random bytes never make the taskstats parsers panic or read past the buffer.
    #[test]
    fn taskstats_parsers_never_panic(b in proptest::collection::vec(any::<u8>(), 0..700), fam in any::<u16>(), seq in any::<u32>()) {
        use diskmeter_monitor::taskstats as ts;
        let _ = ts::parse_taskstats(&b);
        let _ = ts::parse_aggregate(&b);
        let _ = ts::parse_get_reply(&b, fam, seq);
        let _ = ts::parse_family_reply(&b, seq);
        prop_assert!(ts::attributes(&b).count() <= b.len() / 4);
        prop_assert!(ts::messages(&b).count() <= b.len() / 16);
    }

    /// A struct of any length and version inside a well-formed reply: parsed when it holds the
    /// delay fields, refused otherwise; fields are present exactly when the struct holds them.
    #[test]
    fn taskstats_any_length(len in 0usize..600, version in 0u16..40, fill in any::<u8>()) {
        use diskmeter_monitor::taskstats as ts;
        let mut s = vec![fill; len];
        if len >= 2 { s[..2].copy_from_slice(&version.to_ne_bytes()); }
        match ts::parse_taskstats(&s) {
            Ok(t) => {
                prop_assert!(version >= 1);
                let need = if version == 1 { 72 } else { 80 };
                prop_assert!(len >= need);
                if version >= 2 {
                    prop_assert_eq!(t.read_bytes.is_some(), len >= 256);
                    prop_assert_eq!(t.cancelled_write_bytes.is_some(), len >= 272);
                    prop_assert_eq!(t.ac_pid.is_some(), len >= 132);
                }
            }
            Err(_) => prop_assert!(len < 80 || version == 0 || (version == 1 && len < 72)),
        }
    }
}
