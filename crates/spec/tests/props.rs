//! Property tests: size round-trips and the job-file parser's robustness.
#![allow(clippy::unwrap_used)]

use diskmeter_spec::fiojob::parse_jobfile;
use diskmeter_spec::units::{format_size, parse_duration, parse_size, TimeUnit};
use diskmeter_spec::{JobSpec, SpecError};
use proptest::prelude::*;

const SAMPLE: &str = include_str!("jobs/valid/mixed-concurrent.fio");

/// Parse and check that any error's line is within the file.
fn check(text: &str) -> Result<(), TestCaseError> {
    let lines = text.strip_prefix('\u{feff}').unwrap_or(text).lines().count().max(1);
    match parse_jobfile("p.fio", text, &JobSpec::default()) {
        Ok(plan) => {
            prop_assert!(!plan.groups.is_empty());
            prop_assert!(plan.groups.iter().all(|g| !g.jobs.is_empty()));
        }
        Err(SpecError::JobFile { file, line, message }) => {
            prop_assert_eq!(file, "p.fio");
            prop_assert!((1..=lines).contains(&line), "line {} of {}: {}", line, lines, message);
            prop_assert!(!message.is_empty());
        }
        Err(e @ (SpecError::Value { .. } | SpecError::Invalid(_))) => {
            prop_assert!(false, "not a job-file error: {}", e)
        }
    }
    Ok(())
}

fn suffix() -> impl Strategy<Value = (&'static str, u32)> {
    prop::sample::select(vec![
        ("", 0),
        ("b", 0),
        ("B", 0),
        ("k", 10),
        ("K", 10),
        ("KB", 10),
        ("KiB", 10),
        ("m", 20),
        ("MiB", 20),
        ("g", 30),
        ("GB", 30),
        ("t", 40),
        ("TiB", 40),
        ("p", 50),
    ])
}

/// Pieces job files are made of, to make random files that get past the first line.
fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("[global]".to_string()),
        "[a-z]{1,3}".prop_map(|s| format!("[{s}]")),
        Just("stonewall".to_string()),
        Just("time_based".to_string()),
        Just("direct".to_string()),
        Just("group_reporting".to_string()),
        (
            prop::sample::select(vec![
                "bs",
                "iodepth",
                "numjobs",
                "size",
                "offset",
                "runtime",
                "rw",
                "rwmixread",
                "random_distribution",
                "rate_iops",
                "ioengine",
                "direct",
                "fsync",
                "name",
                "filename",
                "bogus",
            ]),
            "[0-9a-z:/%.,-]{0,8}"
        )
            .prop_map(|(k, v)| format!("{k}={v}")),
        "[ -~]{0,20}",
        Just("# comment".to_string()),
        Just(String::new()),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn size_round_trips(n in 0u64..(1 << 20), (sfx, shift) in suffix(), sep in prop::bool::ANY) {
        let expected = n.checked_mul(1u64 << shift);
        let text = format!("{n}{}{sfx}", if sep { " " } else { "" });
        match expected {
            Some(v) => prop_assert_eq!(parse_size("--size", &text).unwrap(), v),
            None => prop_assert!(parse_size("--size", &text).is_err()),
        }
    }

    #[test]
    fn format_size_exact_round_trip(whole in 1u64..1024, eighths in 0u64..8, shift in prop::sample::select(vec![10u32, 20, 30, 40, 50])) {
        // whole + eighths/8 of a unit is printed exactly (at most 3 decimals).
        let n = (whole << shift) + (eighths << (shift - 3));
        let s = format_size(n);
        prop_assert_eq!(parse_size("--size", &s).unwrap(), n, "{}", s);
    }

    #[test]
    fn format_size_is_close(n in any::<u64>()) {
        let s = format_size(n);
        let (num, unit) = s.split_once(' ').unwrap();
        let mult = match unit { "B" => 1u64, "KiB" => 1 << 10, "MiB" => 1 << 20, "GiB" => 1 << 30, "TiB" => 1 << 40, _ => 1 << 50 };
        let shown: f64 = num.parse().unwrap();
        prop_assert!((0.0..=1024.0 * 16.0).contains(&shown), "{}", s);
        let err = (shown * mult as f64 - n as f64).abs();
        prop_assert!(err <= 0.005 * mult as f64 + 1e-9 * n as f64, "{} for {}", s, n);
    }

    #[test]
    fn parse_size_never_panics(s in "\\PC{0,24}") {
        let _ = parse_size("--bs", &s);
        let _ = parse_duration("--runtime", &s, TimeUnit::Seconds);
    }

    #[test]
    fn jobfile_never_panics_on_arbitrary_text(
        cs in prop::collection::vec(prop_oneof![
            3 => any::<char>(),
            1 => prop::sample::select(vec!['\n', '\r', '[', ']', '=', '#', ';', ' ', '\u{feff}']),
        ], 0..200)
    ) {
        check(&cs.into_iter().collect::<String>())?;
    }

    #[test]
    fn jobfile_never_panics_on_arbitrary_bytes(b in prop::collection::vec(any::<u8>(), 0..300)) {
        check(&String::from_utf8_lossy(&b))?;
    }

    #[test]
    fn jobfile_structured_random(frags in prop::collection::vec(fragment(), 0..20)) {
        check(&frags.join("\n"))?;
    }

    #[test]
    fn jobfile_mutations_of_a_valid_file(
        edits in prop::collection::vec((any::<prop::sample::Index>(), 0u8..4, "[ -~\\n]{0,6}"), 1..6)
    ) {
        let mut text: Vec<char> = SAMPLE.chars().collect();
        for (idx, op, ins) in edits {
            let at = if text.is_empty() { 0 } else { idx.index(text.len() + 1) };
            match op {
                // delete a char
                0 if at < text.len() => { text.remove(at); }
                // insert text
                1 => { for (i, c) in ins.chars().enumerate() { text.insert(at + i, c); } }
                // replace a char
                2 if at < text.len() => { text[at] = ins.chars().next().unwrap_or('='); }
                // truncate
                _ => text.truncate(at),
            }
        }
        let s: String = text.into_iter().collect();
        check(&s)?;
    }
}

#[test]
fn sample_is_valid() {
    parse_jobfile("s.fio", SAMPLE, &JobSpec::default()).unwrap();
}
