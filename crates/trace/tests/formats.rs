//! Each reader against a crafted sample file with exact expected requests, malformed lines,
//! filters and rebasing.
#![allow(clippy::unwrap_used)]

use std::io::Cursor;
use std::path::PathBuf;

use diskmeter_trace::{open, Op, ReadOptions, Request, TraceError, TraceFormat, TraceReader};

fn data(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(name)
}

fn fmt(name: &str) -> TraceFormat {
    TraceFormat::parse(name).unwrap()
}

fn req(t_ns: u64, offset: u64, len: u32, op: Op, dev: u32) -> Request {
    Request { t_ns, offset, len, op, dev }
}

/// Requests, device names and skipped count of a whole file.
fn read_file(name: &str, format: &str, opts: &ReadOptions) -> (Vec<Request>, Vec<String>, u64) {
    let mut r = open(&data(name), &fmt(format), opts).unwrap();
    let reqs: Vec<Request> = r.by_ref().collect::<Result<_, _>>().unwrap();
    (reqs, r.devices().to_vec(), r.skipped())
}

fn read_str(text: &str, format: &str, opts: &ReadOptions) -> (Result<Vec<Request>, TraceError>, u64) {
    let mut r = TraceReader::from_reader(Cursor::new(text.as_bytes().to_vec()), &fmt(format), opts).unwrap();
    let reqs = r.by_ref().collect::<Result<Vec<_>, _>>();
    (reqs, r.skipped())
}

fn all() -> ReadOptions {
    ReadOptions::default()
}

#[test]
fn blkparse_queue() {
    let (reqs, devs, skipped) = read_file("blkparse.txt", "blkparse", &all());
    assert_eq!(
        reqs,
        vec![
            req(0, 272208 * 512, 4096, Op::Read, 0),
            req(100_000, 1024 * 512, 8192, Op::Write, 0),
            req(300_000, 0, 0, Op::Flush, 0),
            req(350_000, 2048 * 512, 2048 * 512, Op::Discard, 0),
            req(1_000_000, 0, 512, Op::Read, 1),
            req(2_500_000, 99 * 512, 4096, Op::Read, 0),
        ]
    );
    assert_eq!(devs, ["8,16", "8,32"]);
    assert_eq!(skipped, 0, "summary lines are not bad lines");
}

#[test]
fn blkparse_issue_and_complete() {
    let (d, _, _) = read_file("blkparse.txt", "blkparse:D", &all());
    assert_eq!(d, vec![req(0, 272208 * 512, 4096, Op::Read, 0), req(97_000, 1024 * 512, 8192, Op::Write, 0)]);
    let (c, _, _) = read_file("blkparse.txt", "blkparse:C", &all());
    assert_eq!(c, vec![req(0, 272208 * 512, 4096, Op::Read, 0), req(150_000, 1024 * 512, 8192, Op::Write, 0)]);
}

#[test]
fn fio_v2() {
    let (reqs, devs, _) = read_file("fio_v2.log", "fio", &all());
    assert_eq!(
        reqs,
        vec![
            req(0, 0, 4096, Op::Read, 0),
            req(1_000_000, 8192, 8192, Op::Write, 1),
            req(1_500_000, 1_048_576, 65536, Op::Discard, 0),
            req(1_500_000, 0, 0, Op::Flush, 1),
            req(1_500_000, 0, 0, Op::Flush, 0),
            req(1_500_000, 4096, 4096, Op::Read, 0),
        ]
    );
    assert_eq!(devs, ["/dev/sdb", "/dev/sdc"]);
}

#[test]
fn fio_v3() {
    let (reqs, devs, _) = read_file("fio_v3.log", "fio", &all());
    assert_eq!(
        reqs,
        vec![
            req(0, 0, 4096, Op::Read, 0),
            req(15_000, 4096, 4096, Op::Write, 0),
            req(30_000, 8192, 4096, Op::Discard, 0),
            req(31_000, 0, 0, Op::Flush, 0),
            req(90_000, 131072, 131072, Op::Read, 0),
        ]
    );
    assert_eq!(devs, ["/dev/nvme0n1"]);
}

fn msr_expected() -> Vec<Request> {
    vec![
        req(0, 7014609920, 24576, Op::Read, 0),
        req(1_332_052_600, 4927500288, 4096, Op::Write, 0),
        req(2_332_061_600, 4927504384, 8192, Op::Write, 0),
        req(3_332_069_100, 1262592000, 65536, Op::Read, 1),
        req(4_332_077_100, 7014634496, 4096, Op::Read, 0),
    ]
}

#[test]
fn msr_plain_and_gzip() {
    let (reqs, devs, _) = read_file("msr.csv", "msr", &all());
    assert_eq!(reqs, msr_expected());
    assert_eq!(devs, ["hm_0", "hm_1"]);
    let (gz, devs, _) = read_file("msr.csv.gz", "msr", &all());
    assert_eq!(gz, msr_expected());
    assert_eq!(devs, ["hm_0", "hm_1"]);
}

#[test]
fn alibaba() {
    let (reqs, devs, _) = read_file("alibaba.csv", "alibaba", &all());
    assert_eq!(
        reqs,
        vec![
            req(0, 8653316096, 4096, Op::Write, 0),
            req(39_000, 8653316096, 4096, Op::Read, 0),
            req(439_000, 0, 16384, Op::Read, 1),
            req(8_000_000, 1073741824, 65536, Op::Write, 0),
            req(1_000_000_000, 4096, 4096, Op::Write, 1),
        ]
    );
    assert_eq!(devs, ["419", "12"]);
}

#[test]
fn tencent() {
    let (reqs, devs, _) = read_file("tencent.csv", "tencent", &all());
    assert_eq!(
        reqs,
        vec![
            req(0, 12734480 * 512, 8192, Op::Write, 0),
            req(0, 12734496 * 512, 8192, Op::Write, 0),
            req(1_000_000_000, 8 * 512, 4096, Op::Read, 1),
            req(3_000_000_000, 1003032 * 512, 131072, Op::Read, 0),
            req(3_000_000_000, 1003288 * 512, 4096, Op::Write, 1),
        ]
    );
    assert_eq!(devs, ["1282", "1063"]);
}

#[test]
fn generic_csv() {
    let f = "csv:time=0:us,op=1,offset=2:sectors,size=3:bytes,dev=4,header,delim=semicolon";
    let (reqs, devs, _) = read_file("generic.csv", f, &all());
    assert_eq!(
        reqs,
        vec![
            req(0, 0, 4096, Op::Read, 0),
            req(50_500, 4096, 8192, Op::Write, 0),
            req(100_000, 8192, 4096, Op::Discard, 1),
            req(200_000, 0, 0, Op::Flush, 0),
        ]
    );
    assert_eq!(devs, ["sda", "sdb"]);
    // `header=1` is `header`; without a header (or with `header=0`) the first line is data.
    let (same, _, _) = read_file("generic.csv", &f.replace(",header,", ",header=1,"), &all());
    assert_eq!(same, reqs);
    let text = "100;R;0;4096;sda\n150.5;W;8;8192;sda\n";
    for f in [f.replace(",header,", ",header=0,"), f.replace(",header,", ",")] {
        let (got, skipped) = read_str(text, &f, &all());
        assert_eq!(got.unwrap(), vec![req(0, 0, 4096, Op::Read, 0), req(50_500, 4096, 8192, Op::Write, 0)], "{f}");
        assert_eq!(skipped, 0);
    }
    let (got, _) = read_str(text, &f.replace(",header,", ",header=1,"), &all());
    assert_eq!(got.unwrap(), vec![req(0, 4096, 8192, Op::Write, 0)]);
}

#[test]
fn detection_of_samples() {
    let cases = [
        ("blkparse.txt", Some(TraceFormat::Blkparse { action: 'Q' })),
        ("fio_v2.log", Some(TraceFormat::FioLog)),
        ("fio_v3.log", Some(TraceFormat::FioLog)),
        ("msr.csv", Some(TraceFormat::Msr)),
        ("msr.csv.gz", Some(TraceFormat::Msr)),
        ("alibaba.csv", Some(TraceFormat::Alibaba)),
        ("tencent.csv", Some(TraceFormat::Tencent)),
        ("generic.csv", None),
    ];
    for (name, want) in cases {
        assert_eq!(diskmeter_trace::detect_file(&data(name)).unwrap(), want, "{name}");
        // The same from bytes: the name only matters when the content does not decide.
        let bytes = std::fs::read(data(name)).unwrap();
        let got = diskmeter_trace::detect_reader(std::path::Path::new("x"), Cursor::new(bytes)).unwrap();
        assert_eq!(got, want, "{name} from bytes");
    }
    let named = |name: &str, bytes: &[u8]| diskmeter_trace::detect_reader(std::path::Path::new(name), bytes).unwrap();
    assert_eq!(named("t.dmt", b""), Some(TraceFormat::Binary));
    assert_eq!(named("t.iolog.gz", b"?\n"), Some(TraceFormat::FioLog));
    assert_eq!(named("t.txt", b"?\n"), None);
    // A truncated gzip stream is an error naming the input, not a guess.
    let gz = std::fs::read(data("msr.csv.gz")).unwrap();
    let e = diskmeter_trace::detect_reader(std::path::Path::new("cut.gz"), &gz[..gz.len() / 2]);
    assert!(e.as_ref().is_err_and(|e| e.to_string().contains("cut.gz")), "{e:?}");
}

/// Each format with its 3rd line broken: the error names line 3 and the fault; with
/// `skip_bad` the line is counted and the others are read.
#[test]
fn malformed_lines() {
    let cases: [(&str, &str, &str); 7] = [
        (
            "blkparse",
            "8,0 1 1 0.1 9 Q R 8 + 8 [a]\n8,0 1 2 0.2 9 Q W 16 + 8 [a]\n8,0 1 3 0.3 9 Q R 12x + 8 [a]\n8,0 1 4 0.4 9 Q R 0 + 1 [a]\n",
            "line 3: sector \"12x\" is not a number",
        ),
        (
            "fio",
            "fio version 2 iolog\nf read 0 512\nf write 0 lots\nf read 512 512\nf wait 10 0\nf sync 0 0\n",
            "line 3: length \"lots\" is not a number",
        ),
        (
            "fio",
            "fio version 3 iolog\n1 f read 0 512\n2 f scribble 0 512\n3 f read 512 512\n4 f trim 0 512\n",
            "line 3: action \"scribble\" is not add, open, close, read, write, sync, datasync, trim or wait",
        ),
        (
            "msr",
            "1,h,0,Read,0,512,1\n2,h,0,Write,0,512,1\n3,h,0,Read,12x,512,1\n4,h,0,Read,0,512,1\n",
            "line 3: offset \"12x\" is not a number",
        ),
        (
            "alibaba",
            "1,R,0,512,10\n1,W,0,512,11\n1,R,0,512\n1,R,0,512,13\n",
            "line 3: expected 5 comma-separated fields (device_id,opcode,offset,length,timestamp), found 4",
        ),
        ("tencent", "1,0,1,0,7\n1,0,1,1,7\n1,0,1,3,7\n2,0,1,0,7\n", "line 3: io_type \"3\" is neither 0 (read) nor 1 (write)"),
        (
            "csv:time=0:ms,op=1,offset=2,size=3",
            "1,r,0,512\n2,w,0,512\n3,r,0,5000000000\n4,r,0,512\n",
            "line 3: size 5000000000 × 1 bytes does not fit in 32 bits (max 4 GiB - 1)",
        ),
    ];
    for (format, text, want) in cases {
        let (strict, _) = read_str(text, format, &all());
        assert_eq!(strict.unwrap_err().to_string(), want, "{format}");
        let (lenient, skipped) = read_str(text, format, &ReadOptions { skip_bad: true, ..all() });
        assert_eq!(lenient.unwrap().len(), 3, "{format}");
        assert_eq!(skipped, 1, "{format}");
    }
}

#[test]
fn parse_error_carries_line_and_message() {
    let (r, _) = read_str("1,h,0,Read,0,512,1\n\n1,h,0,Nope,0,512,1\n", "msr", &all());
    match r {
        Err(TraceError::Parse { line, message }) => {
            assert_eq!(line, 3);
            assert_eq!(message, "type \"Nope\" is not Read or Write");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn errors_end_the_stream() {
    let text = "1,h,0,Read,0,512,1\nbad\n3,h,0,Read,0,512,1\n";
    let mut r = TraceReader::from_reader(Cursor::new(text), &fmt("msr"), &all()).unwrap();
    assert!(r.next().unwrap().is_ok());
    assert!(r.next().unwrap().is_err());
    assert!(r.next().is_none());
}

#[test]
fn skip_bad_remembers_the_first_fault() {
    let text = "1,h,0,Read,0,512,1\nbad\n3,h,0,Read,0,x,1\n";
    let mut r =
        TraceReader::from_reader(Cursor::new(text), &fmt("msr"), &ReadOptions { skip_bad: true, ..all() }).unwrap();
    assert_eq!(r.by_ref().count(), 1);
    assert_eq!(r.skipped(), 2);
    let (line, msg) = r.first_skipped().unwrap();
    assert_eq!(line, 2);
    assert!(msg.starts_with("expected 7 comma-separated fields"), "{msg}");
}

#[test]
fn fio_without_header_is_fatal_even_when_skipping() {
    let (r, _) = read_str("/dev/sda read 0 4096\n", "fio", &ReadOptions { skip_bad: true, ..all() });
    let e = r.unwrap_err().to_string();
    assert!(e.starts_with("line 1: not a fio iolog"), "{e}");
}

#[test]
fn headers_are_tolerated() {
    let (r, _) =
        read_str("Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime\n5,h,0,Read,0,512,1\n", "msr", &all());
    assert_eq!(r.unwrap(), vec![req(0, 0, 512, Op::Read, 0)]);
    let (r, _) = read_str("\u{feff}device_id,opcode,offset,length,timestamp\n1,R,0,512,10\n", "alibaba", &all());
    assert_eq!(r.unwrap().len(), 1);
    let (r, _) = read_str("timestamp,offset,size,io_type,volume_id\r\n1,0,1,0,7\r\n", "tencent", &all());
    assert_eq!(r.unwrap().len(), 1);
}

#[test]
fn device_filter() {
    let only = |d: &str| ReadOptions { device: Some(d.to_string()), ..all() };
    let (reqs, devs, _) = read_file("blkparse.txt", "blkparse", &only("8,32"));
    assert_eq!(reqs, vec![req(0, 0, 512, Op::Read, 0)], "rebased to the first kept request, dev renumbered");
    assert_eq!(devs, ["8,32"]);
    for d in ["hm_1", "1"] {
        let (reqs, devs, _) = read_file("msr.csv", "msr", &only(d));
        assert_eq!(reqs, vec![req(0, 1262592000, 65536, Op::Read, 0)], "{d}");
        assert_eq!(devs, ["hm_1"]);
    }
    let (reqs, _, _) = read_file("alibaba.csv", "alibaba", &only("12"));
    assert_eq!(reqs, vec![req(0, 0, 16384, Op::Read, 0), req(1_000_000_000 - 439_000, 4096, 4096, Op::Write, 0)]);
    let (reqs, _, _) = read_file("fio_v2.log", "fio", &only("/dev/sdc"));
    assert_eq!(reqs, vec![req(0, 8192, 8192, Op::Write, 0), req(500_000, 0, 0, Op::Flush, 0)]);
    let (reqs, _, _) = read_file("tencent.csv", "tencent", &only("9999"));
    assert!(reqs.is_empty());
    let (reqs, _, _) = read_file("msr.csv", "msr", &only("m_1"));
    assert!(reqs.is_empty(), "a partial host name does not match");
}

#[test]
fn time_window_is_relative_to_the_trace_start() {
    // Alibaba sample at 0, 39 µs, 439 µs, 8 ms, 1 s from the first request.
    let window = |from: Option<u64>, until: Option<u64>| ReadOptions { from_ns: from, until_ns: until, ..all() };
    let (reqs, _, _) = read_file("alibaba.csv", "alibaba", &window(Some(39_000), Some(8_000_000)));
    assert_eq!(reqs, vec![req(0, 8653316096, 4096, Op::Read, 0), req(400_000, 0, 16384, Op::Read, 1)]);
    let (reqs, _, _) = read_file("alibaba.csv", "alibaba", &window(Some(8_000_000), None));
    assert_eq!(reqs.iter().map(|r| r.t_ns).collect::<Vec<_>>(), [0, 992_000_000]);
    let (reqs, _, _) = read_file("alibaba.csv", "alibaba", &window(None, Some(1)));
    assert_eq!(reqs.len(), 1);
    // The window is measured from the trace's first request even when a device filter
    // drops that request.
    let opts = ReadOptions { device: Some("12".into()), from_ns: Some(500_000), ..all() };
    let (reqs, _, _) = read_file("alibaba.csv", "alibaba", &opts);
    assert_eq!(reqs, vec![req(0, 4096, 4096, Op::Write, 0)]);
}

#[test]
fn unsorted_timestamps_clamp_to_zero() {
    let (r, _) = read_str("5,R,0,512,100\n5,R,512,512,40\n5,R,1024,512,300\n", "alibaba", &all());
    assert_eq!(r.unwrap().iter().map(|r| r.t_ns).collect::<Vec<_>>(), [0, 0, 200_000]);
}

#[test]
fn missing_file_names_the_path() {
    let e = open(&data("nope.csv"), &fmt("msr"), &all()).err().unwrap().to_string();
    assert!(e.contains("nope.csv"), "{e}");
}

#[test]
fn overlong_lines_are_bad_lines_not_memory() {
    let mut text = "1,R,0,512,10\n".to_string();
    text.push_str(&"9".repeat(600_000));
    text.push_str("\n1,R,0,512,11\n");
    let (r, _) = read_str(&text, "alibaba", &all());
    assert!(r.unwrap_err().to_string().starts_with("line 2: line longer than"));
    let (r, skipped) = read_str(&text, "alibaba", &ReadOptions { skip_bad: true, ..all() });
    assert_eq!((r.unwrap().len(), skipped), (2, 1));
}

#[test]
fn readers_are_send_and_errors_are_sync() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync + std::error::Error + 'static>() {}
    send::<TraceReader>();
    send_sync::<TraceError>();
}

#[test]
fn unsupported_blkparse_action_is_refused() {
    let f = TraceFormat::Blkparse { action: 'X' };
    let e = TraceReader::from_reader(Cursor::new(Vec::new()), &f, &all()).err().unwrap().to_string();
    assert!(e.contains("expected Q (queued), D (issued) or C (completed)"), "{e}");
}
