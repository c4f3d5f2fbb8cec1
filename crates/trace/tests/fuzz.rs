//! No input makes a reader panic or loop: random bytes, and random lines built from each
//! format's own alphabet so they get past the first checks.
#![allow(clippy::unwrap_used)]

use std::io::Cursor;

use diskmeter_trace::{ReadOptions, TraceFormat, TraceReader};
use proptest::prelude::*;

const FORMATS: [&str; 8] = [
    "blkparse",
    "blkparse:C",
    "fio",
    "msr",
    "alibaba",
    "tencent",
    "csv:time=0:us,op=1,offset=2:sectors,size=3:4096,dev=4",
    "binary",
];

const SAMPLES: [(&str, &str); 8] = [
    ("msr.csv.gz", "msr"),
    ("blkparse.txt", "blkparse"),
    ("fio_v2.log", "fio"),
    ("fio_v3.log", "fio"),
    ("msr.csv", "msr"),
    ("alibaba.csv", "alibaba"),
    ("tencent.csv", "tencent"),
    ("generic.csv", "csv:time=0:us,op=1,offset=2:sectors,size=3,dev=4,header,delim=semicolon"),
];

fn drain(bytes: &[u8], format: &str, skip_bad: bool) {
    let format = TraceFormat::parse(format).unwrap();
    let opts = ReadOptions { skip_bad, from_ns: Some(3), until_ns: Some(u64::MAX - 1), ..ReadOptions::default() };
    if let Ok(r) = TraceReader::from_reader(Cursor::new(bytes.to_vec()), &format, &opts) {
        let mut n = 0usize;
        for x in r {
            let _ = x;
            n += 1;
            // Every item takes at least one input byte (gzip'd input can expand).
            assert!(n <= bytes.len() + 1 || bytes.starts_with(&[0x1f, 0x8b]), "more items than bytes");
        }
    }
}

/// Lines of tokens that each format expects somewhere.
fn line() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        "[0-9]{1,25}",
        "[0-9]{1,3},[0-9]{1,3}",
        "[0-9]{1,10}\\.[0-9]{0,12}",
        Just("+".to_string()),
        Just("Q".to_string()),
        Just("C".to_string()),
        "F?[RWDNF][FASMEZ]{0,3}",
        Just("[fio]".to_string()),
        Just("Read".to_string()),
        Just("Write".to_string()),
        "(read|write|trim|sync|datasync|wait|add|open|close)",
        Just("fio version 2 iolog".to_string()),
        Just("fio version 3 iolog".to_string()),
        Just("CPU0 (8,0):".to_string()),
        Just("Total (8,0):".to_string()),
        "[a-z/_\"]{0,6}",
        Just(String::new()),
    ];
    (proptest::collection::vec(token, 0..9), prop_oneof![Just(" "), Just(","), Just("\t")])
        .prop_map(|(t, sep)| t.join(sep))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn random_bytes(bytes in proptest::collection::vec(any::<u8>(), 0..2000)) {
        for f in FORMATS {
            drain(&bytes, f, false);
            drain(&bytes, f, true);
        }
    }

    #[test]
    fn random_lines(lines in proptest::collection::vec(line(), 0..40), header in 0usize..3) {
        let mut text = ["fio version 2 iolog\n", "fio version 3 iolog\n", ""][header].to_string();
        text.push_str(&lines.join("\n"));
        for f in FORMATS {
            drain(text.as_bytes(), f, false);
            drain(text.as_bytes(), f, true);
        }
    }

    /// The sample files with random bytes overwritten, inserted or cut: mostly-valid lines
    /// that reach every field parser.
    #[test]
    fn mutated_samples(edits in proptest::collection::vec((any::<usize>(), any::<u8>(), 0u8..3), 1..12)) {
        for (file, format) in SAMPLES {
            let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(file);
            let mut bytes = std::fs::read(path).unwrap();
            for (at, b, how) in &edits {
                let at = at % (bytes.len() + 1);
                match how {
                    0 if at < bytes.len() => bytes[at] = *b,
                    1 => bytes.insert(at, *b),
                    _ => bytes.truncate(at.max(1)),
                }
            }
            drain(&bytes, format, false);
            drain(&bytes, format, true);
        }
    }

    #[test]
    fn binary_with_random_tail(tail in proptest::collection::vec(any::<u8>(), 0..500)) {
        let mut bytes = b"DMTRACE1\x01\x00\x18\x00\x00\x00\x00\x00\xff\xff\xff\xff\xff\xff\xff\xff\x00\x00\x00\x00\x00\x00\x00\x00".to_vec();
        bytes.extend_from_slice(&tail);
        drain(&bytes, "binary", false);
    }
}
