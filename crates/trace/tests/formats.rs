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

/// A capture annotated with a column header and a rule (blkparse prints none itself: its
/// `HEADER` in blkparse_fmt.c is the per-event prefix `%D %2c %8s %5T.%9t %5p %2a %3d`).
const ANNOTATED: &str = "\
# blkparse -i sdb  (default format: %D %2c %8s %5T.%9t %5p %2a %3d)
#  Dev   CPU      Seq        Time   PID Act RWBS Sector + Blocks [Process]
#------ --- -------- ------------ ----- --- ---- ---------------------------
  ------  --- -------- ------------ ----- --- ---- ------ + ------
Input file sdb.blktrace.0 added
  8,16   0        1     0.000000000  2923  Q   R 272208 + 8 [fio]
  8,16   0        2     0.000005000  2923  D   R 272208 + 8 [fio]
# a comment in the middle
  8,16   0        3     0.000250000     0  C   R 272208 + 8 [0]
";

#[test]
fn blkparse_header_and_rules_are_comments() {
    for action in ["blkparse", "blkparse:D", "blkparse:C"] {
        let (r, skipped) = read_str(ANNOTATED, action, &all());
        assert_eq!(r.unwrap(), vec![req(0, 272208 * 512, 4096, Op::Read, 0)], "{action}");
        assert_eq!(skipped, 0, "{action}: comments are not bad lines");
    }
    assert_eq!(
        TraceFormat::detect(std::path::Path::new("x"), ANNOTATED.as_bytes()),
        Some(TraceFormat::Blkparse { action: 'Q' }),
        "detection looks past comments"
    );
    // Garbage is still an error, also right after a header.
    for bad in ["Maj,Mn CPU SeqNo Time PID Act RWBS", "--- x ---", "+", "hello"] {
        let text = format!("# header\n{bad}\n  8,16 0 1 0.1 1 Q R 8 + 8 [x]\n");
        let (r, _) = read_str(&text, "blkparse", &all());
        let e = r.unwrap_err().to_string();
        assert!(e.starts_with("line 2: not a blkparse event line"), "{bad}: {e}");
        let (r, skipped) = read_str(&text, "blkparse", &ReadOptions { skip_bad: true, ..all() });
        assert_eq!((r.unwrap().len(), skipped), (1, 1), "{bad}");
    }
}

/// Requests with the latency the reader gives beside each.
fn with_latency(text: &str, format: &str, opts: &ReadOptions) -> (Vec<(Request, Option<u64>)>, TraceReader) {
    let mut r = TraceReader::from_reader(Cursor::new(text.as_bytes().to_vec()), &fmt(format), opts).unwrap();
    let mut out = Vec::new();
    while let Some(x) = r.next() {
        out.push((x.unwrap(), r.recorded_latency_ns()));
    }
    assert_eq!(r.recorded_latency_ns(), None, "none after the end");
    (out, r)
}

fn latencies(text: &str, format: &str) -> Vec<Option<u64>> {
    with_latency(text, format, &all()).0.into_iter().map(|(_, l)| l).collect()
}

#[test]
fn recorded_latency_of_each_format() {
    let blk = std::fs::read_to_string(data("blkparse.txt")).unwrap();
    assert_eq!(latencies(&blk, "blkparse"), [Some(250_000), Some(300_000), None, None, None, None]);
    assert_eq!(latencies(&blk, "blkparse:D"), [Some(245_000), Some(298_000)]);
    assert_eq!(latencies(&blk, "blkparse:C"), [None, None]);
    let msr = std::fs::read_to_string(data("msr.csv")).unwrap();
    assert_eq!(
        latencies(&msr, "msr"),
        [Some(4_128_600), Some(1_311_700), Some(1_203_500), Some(567_000), Some(304_200)]
    );
    assert_eq!(latencies("1,h,0,Read,0,512\n2,h,0,Read,0,512,x\n", "msr"), [None, None]);
    let carries =
        |f: &str| TraceReader::from_reader(Cursor::new(Vec::new()), &fmt(f), &all()).map(|r| r.carries_latency()).ok();
    for (f, want) in [
        ("blkparse", true),
        ("blkparse:D", true),
        ("blkparse:C", false),
        ("msr", true),
        ("fio", false),
        ("alibaba", false),
        ("tencent", false),
        ("csv:time=0,op=1,offset=2,size=3", false),
    ] {
        assert_eq!(carries(f), Some(want), "{f}");
    }
    let (reqs, _) = with_latency(&std::fs::read_to_string(data("alibaba.csv")).unwrap(), "alibaba", &all());
    assert!(reqs.iter().all(|(_, l)| l.is_none()));
}

/// Pairing is by device, start sector and op; filters and windows apply to the requests,
/// not to the completions.
#[test]
fn blkparse_pairing_details() {
    let text = "\
8,0 0 1 1.000000000 1 D R 8 + 8 [a]
8,16 0 2 1.000001000 1 D R 8 + 8 [a]
8,0 0 3 1.000002000 1 D W 8 + 8 [a]
8,0 0 4 1.000003000 1 D FWS [a]
8,16 0 5 1.000010000 0 C R 8 + 8 [0]
8,0 0 6 1.000020000 0 C W 8 + 8 [0]
8,0 0 7 1.000030000 0 C R 8 + 8 [0]
8,0 0 8 1.000040000 0 C FWS 0 [0]
";
    let lat = |opts: &ReadOptions| with_latency(text, "blkparse:D", opts).0.iter().map(|(_, l)| *l).collect::<Vec<_>>();
    assert_eq!(lat(&all()), [Some(30_000), Some(9_000), Some(18_000), Some(37_000)]);
    let only = ReadOptions { device: Some("8,16".into()), ..all() };
    assert_eq!(lat(&only), [Some(9_000)]);
    let window = ReadOptions { from_ns: Some(1_500), ..all() };
    assert_eq!(lat(&window), [Some(18_000), Some(37_000)]);
    // A malformed completion line is no event, not an error (it was never read before).
    let (r, skipped) = read_str("8,0 0 1 1.0 1 D R 8 + 8 [a]\n8,0 0 2 1.1 0 C R 8 + x [0]\n", "blkparse:D", &all());
    assert_eq!((r.unwrap().len(), skipped), (1, 0));
}

/// Merged (Q) and requeued (D) requests have no completion of their own: they come out at
/// once, without latency, instead of holding back the requests after them.
#[test]
fn blkparse_merges_and_requeues() {
    let q = "\
8,0 0 1 0.000000000 1 Q W 100 + 8 [a]
8,0 0 2 0.000000100 1 G W 100 + 8 [a]
8,0 0 3 0.000001000 1 Q W 108 + 8 [a]
8,0 0 4 0.000001100 1 M W 108 + 8 [a]
8,0 0 5 0.000002000 1 Q W 92 + 8 [a]
8,0 0 6 0.000002100 1 F W 92 + 8 [a]
8,0 0 7 0.000003000 1 D W 92 + 24 [a]
8,0 0 8 0.000010000 0 C W 92 + 24 [0]
";
    let (reqs, r) = with_latency(q, "blkparse", &all());
    let got: Vec<(u64, Option<u64>)> = reqs.iter().map(|(r, l)| (r.offset / 512, *l)).collect();
    assert_eq!(got, [(100, None), (108, None), (92, Some(8_000))]);
    assert_eq!(r.lines(), 8);
    let d = "\
8,0 0 1 0.000000000 1 D R 100 + 8 [a]
8,0 0 2 0.000001000 1 R R 100 + 8 [0]
8,0 0 3 0.000002000 1 D R 100 + 8 [a]
8,0 0 4 0.000005000 0 C R 100 + 8 [0]
";
    assert_eq!(latencies(d, "blkparse:D"), [None, Some(3_000)]);
    // The first is out as soon as its requeue is read.
    let mut r = TraceReader::from_reader(Cursor::new(d), &fmt("blkparse:D"), &all()).unwrap();
    r.next().unwrap().unwrap();
    assert_eq!((r.lines(), r.recorded_latency_ns()), (2, None));
}

/// A request whose completion never comes is released after 60 s of trace time, not held
/// to the end of the trace; one whose completion comes within 60 s keeps it.
#[test]
fn blkparse_pairing_gives_up_after_60_s() {
    let text = "\
8,0 0 1 0.000000000 1 D R 0 + 8 [a]
8,0 0 2 1.000000000 1 D R 8 + 8 [a]
8,0 0 3 60.000000000 1 D R 16 + 8 [a]
8,0 0 4 60.000000001 1 D R 24 + 8 [a]
8,0 0 5 60.500000000 0 C R 8 + 8 [0]
8,0 0 6 61.000000000 0 C R 16 + 8 [0]
8,0 0 7 62.000000000 0 C R 24 + 8 [0]
";
    let mut r = TraceReader::from_reader(Cursor::new(text), &fmt("blkparse:D"), &all()).unwrap();
    let mut got = Vec::new();
    while let Some(x) = r.next() {
        got.push((x.unwrap().offset / 512, r.recorded_latency_ns(), r.lines()));
    }
    assert_eq!(
        got,
        [(0, None, 4), (8, Some(59_500_000_000), 5), (16, Some(1_000_000_000), 6), (24, Some(1_999_999_999), 7)]
    );
}

/// Requests read before an error come out (without the latency they were waiting for)
/// before the error.
#[test]
fn blkparse_error_after_held_requests() {
    let text = "8,0 0 1 0.1 1 D R 0 + 8 [a]\n8,0 0 2 0.2 1 D R 8 + 8 [a]\n8,0 0 3 0.3 0 C R 8 + 8 [0]\nnonsense\n";
    let mut r = TraceReader::from_reader(Cursor::new(text), &fmt("blkparse:D"), &all()).unwrap();
    assert_eq!(r.next().unwrap().unwrap().offset, 0);
    assert_eq!(r.recorded_latency_ns(), None);
    assert_eq!(r.next().unwrap().unwrap().offset, 4096);
    assert_eq!(r.recorded_latency_ns(), Some(100_000_000));
    let e = r.next().unwrap().unwrap_err().to_string();
    assert!(e.starts_with("line 4: not a blkparse event line"), "{e}");
    assert!(r.next().is_none());
}

mod pairing {
    use super::*;
    use proptest::prelude::*;

    const MINUTE: u64 = 60_000_000_000;

    /// One generated I/O: issued `gap` ns after the previous one, completed `lat` ns after
    /// its issue, or never; with Q, G lines and a completion of another device before it.
    #[derive(Debug, Clone)]
    struct Io {
        gap: u64,
        lat: Option<u64>,
        write: bool,
        noise: bool,
    }

    fn io() -> impl Strategy<Value = Io> {
        (
            0u64..2_000_000,
            prop_oneof![
                4 => (1u64..5_000_000).prop_map(Some),
                1 => (MINUTE - 1_000..MINUTE + 1_000).prop_map(Some),
                1 => (1u64..2 * MINUTE).prop_map(Some),
                1 => Just(None),
            ],
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(gap, lat, write, noise)| Io { gap, lat, write, noise })
    }

    fn line(t: u64, act: &str, rwbs: &str, sector: u64, dev: &str) -> (u64, String) {
        let (s, ns) = (t / 1_000_000_000, t % 1_000_000_000);
        (t, format!("{dev} 0 1 {s:>5}.{ns:09} 1 {act:>2} {rwbs:>3} {sector} + 8 [x]"))
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

        /// Random interleavings of D and C lines (with Q and G lines, and completions of
        /// another device at the same sectors, in between): every request comes out once, in
        /// issue order, with its values and its latency, or `None` when its completion is
        /// missing or more than 60 s late; and the reader has not read past the line by
        /// which that request and those before it were resolved or given up.
        #[test]
        fn d_and_c_interleaved(ios in proptest::collection::vec(io(), 0..200)) {
            let mut lines = Vec::new();
            let mut t = 1_000_000_000u64;
            let mut issued = Vec::new();
            for (i, io) in ios.iter().enumerate() {
                t += io.gap;
                // Distinct sectors: each completion names one open request.
                let sector = 8 * (i as u64 * 7919 % 1000);
                let rwbs = if io.write { "WS" } else { "R" };
                if io.noise {
                    lines.push(line(t, "Q", rwbs, sector, "8,0"));
                    lines.push(line(t, "G", rwbs, sector, "8,0"));
                    lines.push(line(t, "C", rwbs, sector, "8,1"));
                }
                lines.push(line(t, "D", rwbs, sector, "8,0"));
                if let Some(lat) = io.lat {
                    lines.push(line(t + lat, "C", rwbs, sector, "8,0"));
                }
                issued.push((t, sector, io.write, io.lat));
            }
            // By time; equal times keep the order generated (a D before its own C).
            lines.sort_by_key(|(t, _)| *t);
            let text: String = lines.iter().map(|(_, l)| format!("{l}\n")).collect();
            let total = lines.len() as u64;
            let number = |i: usize| i as u64 + 1;
            let at = |sector: u64, act: &str| {
                lines.iter().position(|(_, l)| l.starts_with("8,0 ") && l.contains(&format!(" {act} ")) && l.contains(&format!(" {sector} + "))).map(number)
            };

            // What each request should carry, and the line by which it must be out.
            let mut want = Vec::new();
            let mut due = 0;
            let first = issued.first().map_or(0, |i| i.0);
            for &(t0, sector, write, lat) in &issued {
                let kept = lat.filter(|l| *l <= MINUTE);
                let resolved = match kept {
                    Some(_) => at(sector, "C"),
                    // Given up at the first line of the device (a D or a C) more than 60 s
                    // after the issue, or at the end.
                    None => lines.iter().position(|(t, l)| *t > t0 + MINUTE && l.starts_with("8,0 ") && (l.contains(" D ") || l.contains(" C "))).map(number),
                };
                due = due.max(resolved.unwrap_or(total)).max(at(sector, "D").unwrap_or(total));
                let op = if write { Op::Write } else { Op::Read };
                want.push((req(t0 - first, sector * 512, 4096, op, 0), kept, due));
            }

            let mut r = TraceReader::from_reader(Cursor::new(text.into_bytes()), &fmt("blkparse:D"), &all()).unwrap();
            let mut got = Vec::new();
            while let Some(x) = r.next() {
                got.push((x.unwrap(), r.recorded_latency_ns(), r.lines()));
            }
            prop_assert_eq!(got.len(), want.len());
            for (i, (g, w)) in got.iter().zip(&want).enumerate() {
                prop_assert_eq!(g.0, w.0, "request {}", i);
                prop_assert_eq!(g.1, w.1, "request {} latency", i);
                prop_assert!(g.2 <= w.2, "request {} out at line {}, due by line {}", i, g.2, w.2);
            }
            prop_assert_eq!(r.devices().len(), usize::from(!issued.is_empty()));
        }
    }
}
