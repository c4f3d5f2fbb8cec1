//! The binary format: round trips, conversion from every text format, corruption.
#![allow(clippy::unwrap_used)]

use std::io::Cursor;
use std::path::{Path, PathBuf};

use diskmeter_trace::{
    convert, open, BinaryReader, BinaryWriter, ConvertEnd, ConvertStats, Op, ReadOptions, Request, TraceFormat,
    TraceReader,
};
use proptest::prelude::*;

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![Just(Op::Read), Just(Op::Write), Just(Op::Discard), Just(Op::Flush)]
}

fn request() -> impl Strategy<Value = Request> {
    (any::<u64>(), any::<u64>(), any::<u32>(), op(), 0u32..6).prop_map(|(t_ns, offset, len, op, dev)| Request {
        t_ns,
        offset,
        len,
        op,
        dev,
    })
}

fn write(reqs: &[Request], names: &[&str]) -> Vec<u8> {
    let mut w = BinaryWriter::new(Cursor::new(Vec::new())).unwrap();
    for n in names {
        w.define_device(n).unwrap();
    }
    for r in reqs {
        w.push(*r).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// A version 2 trace of these requests and latencies.
fn write_v2(reqs: &[(Request, Option<u64>)], names: &[&str]) -> Vec<u8> {
    let mut w = BinaryWriter::new_with_latency(Cursor::new(Vec::new())).unwrap();
    assert!(w.carries_latency());
    for n in names {
        w.define_device(n).unwrap();
    }
    for (r, lat) in reqs {
        w.push_with_latency(*r, *lat).unwrap();
    }
    w.finish().unwrap().into_inner()
}

/// Requests and their latencies read back, as stored, and the reader at its end.
type ReadBack = (Vec<(Request, Option<u64>)>, BinaryReader<Cursor<Vec<u8>>>);

fn read_v2(bytes: Vec<u8>) -> ReadBack {
    let mut r = BinaryReader::new(Cursor::new(bytes)).unwrap();
    let mut out = Vec::new();
    while let Some(req) = r.next() {
        out.push((req.unwrap(), r.recorded_latency_ns()));
    }
    assert_eq!(r.recorded_latency_ns(), None, "no latency after the end");
    (out, r)
}

proptest! {
    #[test]
    fn round_trip_with_latency(
        reqs in proptest::collection::vec((request(), proptest::option::of(prop_oneof![Just(0u64), Just(u64::MAX), any::<u64>()])), 0..300),
        name in "[a-z0-9/,_]{0,60}",
    ) {
        let bytes = write_v2(&reqs, &[&name]);
        prop_assert_eq!(&bytes[8..12], &[2, 0, 32, 0]);
        let (back, r) = read_v2(bytes.clone());
        prop_assert_eq!(r.version(), 2);
        prop_assert!(r.carries_latency());
        prop_assert_eq!(r.request_count(), Some(reqs.len() as u64));
        // 0 is "unknown" on disk.
        let want: Vec<(Request, Option<u64>)> = reqs.iter().map(|(q, l)| (*q, l.filter(|l| *l != 0))).collect();
        prop_assert_eq!(&back, &want);
        prop_assert_eq!(&r.devices()[0], &name);
        // Through the reader with options: the same latencies beside the same requests.
        let mut t = TraceReader::from_reader(Cursor::new(bytes.clone()), &TraceFormat::Binary, &ReadOptions::default()).unwrap();
        prop_assert!(t.carries_latency());
        let mut n = 0;
        while let Some(q) = t.next() {
            q.unwrap();
            prop_assert_eq!(t.recorded_latency_ns(), want[n].1);
            n += 1;
        }
        prop_assert_eq!(n, want.len());
        // Every cut is an error (or a clean short read of the header), never a panic.
        for cut in [0, 31, 32, 33, 32 + 32, 32 + 31, bytes.len().saturating_sub(8), bytes.len().saturating_sub(1)] {
            let cut = cut.min(bytes.len());
            if let Ok(r) = BinaryReader::new(Cursor::new(bytes[..cut].to_vec())) {
                let res: Result<Vec<_>, _> = r.collect();
                prop_assert!(cut == bytes.len() || res.is_err() || (reqs.is_empty() && cut == 32));
            }
        }
    }

    #[test]
    fn round_trip(reqs in proptest::collection::vec(request(), 0..300), name in "[a-z0-9/,_]{0,30}") {
        let bytes = write(&reqs, &[&name]);
        let mut r = BinaryReader::new(Cursor::new(bytes.clone())).unwrap();
        prop_assert_eq!(r.request_count(), Some(reqs.len() as u64));
        let back: Vec<Request> = r.by_ref().collect::<Result<_, _>>().unwrap();
        prop_assert_eq!(&back, &reqs);
        let used = reqs.iter().map(|r| r.dev as usize + 1).max().unwrap_or(0).max(1);
        prop_assert_eq!(r.devices().len(), used);
        prop_assert_eq!(&r.devices()[0], &name);
        for (i, d) in r.devices().iter().enumerate().skip(1) {
            prop_assert_eq!(d, &i.to_string());
        }
        // Every cut of the file is an error (or a clean short read of its header), never a panic.
        for cut in [0, 7, 31, 32, 33, bytes.len().saturating_sub(1)] {
            let cut = cut.min(bytes.len());
            if let Ok(r) = BinaryReader::new(Cursor::new(bytes[..cut].to_vec())) {
                let res: Result<Vec<_>, _> = r.collect();
                // Only the full file, or a header whose request count (0) is still honoured, reads cleanly.
                prop_assert!(cut == bytes.len() || res.is_err() || (reqs.is_empty() && cut == 32));
            }
        }
    }

    #[test]
    fn corrupt_records_never_panic(reqs in proptest::collection::vec(request(), 1..50), noise in proptest::collection::vec(any::<(usize, u8)>(), 1..20)) {
        let mut bytes = write(&reqs, &["dev"]);
        let len = bytes.len();
        for (at, b) in noise {
            bytes[32 + at % (len - 32)] = b;
        }
        if let Ok(r) = BinaryReader::new(Cursor::new(bytes)) {
            for x in r {
                let _ = x;
            }
        }
    }
}

#[test]
fn writer_that_did_not_finish_is_readable() {
    let mut w = BinaryWriter::new(Cursor::new(Vec::new())).unwrap();
    let req = Request { t_ns: 5, offset: 4096, len: 512, op: Op::Write, dev: 0 };
    w.push(req).unwrap();
    // Simulate a crash: take the bytes without finish().
    let mut buf = Vec::new();
    {
        let mut w2 = BinaryWriter::new(Cursor::new(&mut buf)).unwrap();
        w2.push(req).unwrap();
        drop(w2);
    }
    let mut r = BinaryReader::new(Cursor::new(buf)).unwrap();
    assert_eq!(r.request_count(), None);
    assert_eq!(r.next().unwrap().unwrap(), req);
    assert!(r.next().is_none());
}

#[test]
fn header_errors() {
    let e = |b: &[u8]| BinaryReader::new(Cursor::new(b.to_vec())).err().unwrap().to_string();
    assert!(e(b"DMTR").contains("shorter than the 32-byte header"));
    assert!(e(&[b'x'; 32]).contains("does not start with \"DMTRACE1\""));
    let mut v3 = write(&[], &[]);
    v3[8] = 3;
    assert_eq!(e(&v3), "binary trace: version 3 is not supported (this diskmeter reads versions 1 and 2)");
    let mut big = write(&[], &[]);
    big[10] = 32;
    assert!(e(&big).contains("record size 32 is not supported (expected 24 in version 1)"), "{}", e(&big));
    // Version 2 with version 1's record size, and the reverse.
    let mut v2 = write(&[], &[]);
    v2[8] = 2;
    assert!(e(&v2).contains("record size 24 is not supported (expected 32 in version 2)"), "{}", e(&v2));
    let mut v2 = write_v2(&[], &[]);
    v2[10] = 24;
    assert!(e(&v2).contains("record size 24 is not supported (expected 32 in version 2)"));
}

#[test]
fn record_errors() {
    let req = Request { t_ns: 1, offset: 2, len: 3, op: Op::Read, dev: 0 };
    let good = write(&[req, req], &["a"]);
    let first_err = |b: Vec<u8>| BinaryReader::new(Cursor::new(b)).unwrap().find_map(Result::err).unwrap().to_string();
    // Header says 2 requests, only 1 present.
    assert!(first_err(good[..good.len() - 24].to_vec()).contains("header promises 2 requests, the file holds 1"));
    assert!(first_err(good[..good.len() - 5].to_vec()).contains("19 stray bytes"));
    let mut kind = good.clone();
    let rec = good.len() - 24;
    kind[rec + 20] = 9;
    assert!(first_err(kind).contains("unknown kind 9"));
    let mut dev = good.clone();
    dev[rec + 21] = 7;
    assert!(first_err(dev).contains("uses device 7, which is not defined"));
}

#[test]
fn version_1_is_unchanged_and_refuses_latencies() {
    let req = Request { t_ns: 1, offset: 2, len: 3, op: Op::Write, dev: 0 };
    let mut w = BinaryWriter::new(Cursor::new(Vec::new())).unwrap();
    assert!(!w.carries_latency());
    w.push(req).unwrap();
    w.push_with_latency(req, None).unwrap();
    let e = w.push_with_latency(req, Some(5)).unwrap_err().to_string();
    assert!(e.contains("version 1 trace has no latencies"), "{e}");
    let bytes = w.finish().unwrap().into_inner();
    assert_eq!(&bytes[8..12], &[1, 0, 24, 0]);
    // Header, one 24-byte device record padded to 24 bytes ("0"), two 24-byte requests.
    assert_eq!(bytes.len(), 32 + 24 + 24 + 2 * 24);
    let (back, r) = read_v2(bytes);
    assert_eq!((r.version(), r.carries_latency()), (1, false));
    assert_eq!(back, vec![(req, None), (req, None)]);
}

#[test]
fn version_2_layout() {
    let req = Request { t_ns: 7, offset: 4096, len: 512, op: Op::Read, dev: 0 };
    let bytes = write_v2(&[(req, Some(250_000)), (req, None)], &["8,16"]);
    // Header, a 32-byte device record, the name padded to 32 bytes, two 32-byte requests.
    assert_eq!(bytes.len(), 32 + 32 + 32 + 2 * 32);
    let first = 32 + 64;
    assert_eq!(&bytes[first + 24..first + 32], &250_000u64.to_le_bytes());
    assert_eq!(&bytes[first + 56..first + 64], &[0; 8]);
    let (back, _) = read_v2(bytes.clone());
    assert_eq!(back, vec![(req, Some(250_000)), (req, None)]);
    // A long name spans several 32-byte blocks.
    let long = "d".repeat(70);
    let (back, r) = read_v2(write_v2(&[(req, Some(1))], &[&long]));
    assert_eq!(back, vec![(req, Some(1))]);
    assert_eq!(r.devices(), [long]);
    // Cut inside the last record's latency: stray bytes, not a short latency.
    let e = BinaryReader::new(Cursor::new(bytes[..bytes.len() - 4].to_vec()))
        .unwrap()
        .find_map(Result::err)
        .unwrap()
        .to_string();
    assert!(e.contains("28 stray bytes"), "{e}");
}

#[test]
fn enable_latency_only_before_any_record() {
    let req = Request { t_ns: 0, offset: 0, len: 512, op: Op::Read, dev: 0 };
    let mut w = BinaryWriter::new(Cursor::new(Vec::new())).unwrap();
    w.enable_latency().unwrap();
    w.enable_latency().unwrap();
    w.push_with_latency(req, Some(9)).unwrap();
    let (back, r) = read_v2(w.finish().unwrap().into_inner());
    assert_eq!(r.version(), 2);
    assert_eq!(back, vec![(req, Some(9))]);
    let mut w = BinaryWriter::new(Cursor::new(Vec::new())).unwrap();
    w.define_device("a").unwrap();
    assert!(w.enable_latency().unwrap_err().to_string().contains("after records were written"));
    // Headers written at an offset inside the output are patched in place.
    let mut out = Cursor::new(vec![0xAAu8; 5]);
    out.set_position(5);
    let mut w = BinaryWriter::new(out).unwrap();
    w.enable_latency().unwrap();
    w.push_with_latency(req, Some(3)).unwrap();
    let bytes = w.finish().unwrap().into_inner();
    assert_eq!(&bytes[..5], &[0xAA; 5]);
    let (back, _) = read_v2(bytes[5..].to_vec());
    assert_eq!(back, vec![(req, Some(3))]);
}

#[test]
fn device_ids_beyond_24_bits_are_refused() {
    let mut w = BinaryWriter::new(Cursor::new(Vec::new())).unwrap();
    let r = Request { t_ns: 0, offset: 0, len: 0, op: Op::Read, dev: 1 << 24 };
    assert!(w.push(r).unwrap_err().to_string().contains("24 bits"));
}

/// Converting each sample to binary and reading it back gives what the text reader gives.
#[test]
fn convert_every_sample() {
    let dir = tempfile::tempdir().unwrap();
    let samples = [
        ("blkparse.txt", "blkparse"),
        ("blkparse.txt", "blkparse:D"),
        ("blkparse.txt", "blkparse:C"),
        ("fio_v2.log", "fio"),
        ("fio_v3.log", "fio"),
        ("msr.csv.gz", "msr"),
        ("alibaba.csv", "alibaba"),
        ("tencent.csv", "tencent"),
        ("generic.csv", "csv:time=0:us,op=1,offset=2:sectors,size=3,dev=4,header,delim=semicolon"),
    ];
    for (name, format) in samples {
        let format = TraceFormat::parse(format).unwrap();
        let out = dir.path().join(format!("{name}.{}.dmtrace", format.to_string().replace(':', "_")));
        let stats = convert_file(&data(name), &format, &ReadOptions::default(), &out).unwrap();
        let mut text = open(&data(name), &format, &ReadOptions::default()).unwrap();
        let want = with_latencies(&mut text);
        let mut bin = open(&out, &TraceFormat::Binary, &ReadOptions::default()).unwrap();
        let got = with_latencies(&mut bin);
        assert_eq!(got, want, "{name}");
        assert_eq!(bin.carries_latency(), text.carries_latency(), "{name}");
        assert_eq!(stats.with_latency, want.iter().filter(|(_, l)| l.is_some()).count() as u64, "{name}");
        let want: Vec<Request> = want.into_iter().map(|(r, _)| r).collect();
        assert_eq!(bin.devices(), text.devices(), "{name}");
        assert_eq!(stats.requests, want.len() as u64);
        assert_eq!(stats.devices, text.devices().len());
        assert_eq!(stats.duration_ns, want.iter().map(|r| r.t_ns).max().unwrap_or(0));
        assert_eq!(TraceFormat::detect(&out, &std::fs::read(&out).unwrap()), Some(TraceFormat::Binary));
    }
}

#[test]
fn binary_traces_honour_read_options() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("msr.dmtrace");
    convert_file(&data("msr.csv"), &TraceFormat::Msr, &ReadOptions::default(), &out).unwrap();
    let opts = ReadOptions { device: Some("hm_1".into()), ..ReadOptions::default() };
    let mut r = open(&out, &TraceFormat::Binary, &opts).unwrap();
    let got: Vec<Request> = r.by_ref().collect::<Result<_, _>>().unwrap();
    assert_eq!(got, vec![Request { t_ns: 0, offset: 1262592000, len: 65536, op: Op::Read, dev: 0 }]);
    assert_eq!(r.devices(), ["hm_1"]);
    let opts = ReadOptions { from_ns: Some(2_000_000_000), until_ns: Some(4_000_000_000), ..ReadOptions::default() };
    let got: Vec<u64> = open(&out, &TraceFormat::Binary, &opts).unwrap().map(|r| r.unwrap().t_ns).collect();
    assert_eq!(got, [0, 1_000_007_500]);
}

/// Requests with the latencies the reader gives beside them.
fn with_latencies(r: &mut TraceReader) -> Vec<(Request, Option<u64>)> {
    let mut out = Vec::new();
    while let Some(req) = r.next() {
        out.push((req.unwrap(), r.recorded_latency_ns()));
    }
    out
}

/// Converted blkparse and MSR traces keep their latencies; the others are version 1.
#[test]
fn convert_keeps_recorded_latencies() {
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &str, u16, &[Option<u64>]); 4] = [
        ("blkparse.txt", "blkparse:D", 2, &[Some(245_000), Some(298_000)]),
        ("blkparse.txt", "blkparse", 2, &[Some(250_000), Some(300_000), None, None, None, None]),
        ("msr.csv", "msr", 2, &[Some(4_128_600), Some(1_311_700), Some(1_203_500), Some(567_000), Some(304_200)]),
        ("alibaba.csv", "alibaba", 1, &[None; 5]),
    ];
    for (name, format, version, lats) in cases {
        let out = dir.path().join(format!("{name}.dmt"));
        let stats =
            convert_file(&data(name), &TraceFormat::parse(format).unwrap(), &ReadOptions::default(), &out).unwrap();
        let bytes = std::fs::read(&out).unwrap();
        let (back, r) = read_v2(bytes);
        assert_eq!(r.version(), version, "{format}");
        assert_eq!(back.iter().map(|(_, l)| *l).collect::<Vec<_>>(), lats, "{format}");
        assert_eq!(stats.with_latency, lats.iter().flatten().count() as u64, "{format}");
    }
    // A writer that already holds a record stays version 1: the latencies are dropped.
    let out = dir.path().join("v1.dmt");
    let mut w = BinaryWriter::buffered(std::fs::File::create(&out).unwrap(), &out).unwrap();
    w.define_device("8,16").unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let f = TraceFormat::parse("blkparse:D").unwrap();
    let (stats, _) = convert(&data("blkparse.txt"), &f, &ReadOptions::default(), &mut w, &stop).unwrap();
    w.finish().unwrap();
    assert_eq!((stats.requests, stats.with_latency), (2, 0));
    assert_eq!(read_v2(std::fs::read(&out).unwrap()).1.version(), 1);
}

/// Converts to a file the way a caller does: write, then finish only a complete conversion.
fn convert_file(input: &Path, format: &TraceFormat, opts: &ReadOptions, out: &Path) -> Result<ConvertStats, String> {
    let mut w = BinaryWriter::buffered(std::fs::File::create(out).unwrap(), out).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let (stats, end) = convert(input, format, opts, &mut w, &stop).map_err(|e| e.to_string())?;
    match end {
        ConvertEnd::Complete => {
            w.finish().unwrap();
            Ok(stats)
        }
        ConvertEnd::Cut(e) => Err(format!("cut after {}: {e}", stats.requests)),
        ConvertEnd::Stopped => Err("stopped".into()),
    }
}

#[test]
fn convert_reports_errors_from_the_start_and_cuts_partway() {
    let dir = tempfile::tempdir().unwrap();
    let input = dir.path().join("bad.csv");
    std::fs::write(&input, "1,h,0,Read,0,512,1\n2,h,0,Read,x,512,1\n").unwrap();
    let out = dir.path().join("bad.dmtrace");
    let e = convert_file(&input, &TraceFormat::Msr, &ReadOptions::default(), &out).unwrap_err();
    assert_eq!(e, "cut after 1: line 2: offset \"x\" is not a number");
    let first = dir.path().join("first.csv");
    std::fs::write(&first, "1,h,0,Read,x,512,1\n").unwrap();
    let e = convert_file(&first, &TraceFormat::Msr, &ReadOptions::default(), &out).unwrap_err();
    assert_eq!(e, "line 1: offset \"x\" is not a number");
    let stats =
        convert_file(&input, &TraceFormat::Msr, &ReadOptions { skip_bad: true, ..Default::default() }, &out).unwrap();
    assert_eq!((stats.requests, stats.skipped, stats.reads, stats.read_bytes), (1, 1, 1, 512));
    // A stop request ends the conversion at once.
    let mut w = BinaryWriter::buffered(std::fs::File::create(&out).unwrap(), &out).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(true);
    let (stats, end) = convert(&input, &TraceFormat::Msr, &ReadOptions::default(), &mut w, &stop).unwrap();
    assert!(matches!(end, ConvertEnd::Stopped) && stats.requests == 0);
}

#[test]
fn gzip_binary_streams() {
    use std::io::Write;
    let req = Request { t_ns: 0, offset: 8, len: 8, op: Op::Discard, dev: 0 };
    let bytes = write(&[req], &["x"]);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    gz.write_all(&bytes).unwrap();
    let gz = gz.finish().unwrap();
    let mut r = TraceReader::from_reader(Cursor::new(gz), &TraceFormat::Binary, &ReadOptions::default()).unwrap();
    assert_eq!(r.next().unwrap().unwrap(), req);
    assert_eq!(r.devices(), ["x"]);
}
