//! One input through every trace reader, for the `trace_readers` fuzz target (`fuzz/`) and
//! its corpus replay test (`tests/fuzz_corpus.rs`), so both run the same code; built with
//! the `fuzz` feature only. Not part of the API: it panics (an `assert!`) when a reader
//! breaks one of its promises, which is what a fuzzer looks for.

use std::io::Cursor;
use std::path::Path;

use crate::binary::{BinaryReader, BinaryWriter};
use crate::detect::detect_reader;
use crate::format::TraceFormat;
use crate::reader::{ReadOptions, TraceReader};
use crate::request::Request;

/// Every reader: each fixed format, the generic CSV with three mappings (one per delimiter
/// family, one with a header) and the binary format.
pub const FORMATS: &[&str] = &[
    "blkparse",
    "blkparse:D",
    "blkparse:C",
    "fio",
    "msr",
    "alibaba",
    "tencent",
    "csv:time=0:us,op=1,offset=2:sectors,size=3:4096,dev=4",
    "csv:time=0:us,op=1,offset=2:sectors,size=3:bytes,dev=4,header,delim=semicolon",
    "csv:time=3:ns,op=2,offset=1,size=0,delim=space,read=0,write=1",
    "binary",
];

/// File names detection is tried with: the name decides when the content does not.
const NAMES: &[&str] = &["trace", "trace.dmt", "trace.iolog.gz"];

/// At most this many requests of one reading are kept for the binary round trip.
const KEEP: usize = 100_000;

/// What [`read_all`] read, for a caller that wants to know the input was not just rejected.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    /// Readings (format × options) that ended without an error.
    pub clean: usize,
    /// Requests read over all readings.
    pub requests: u64,
    /// Formats detected from the content or the name.
    pub detected: usize,
}

/// Feeds `bytes` to format detection and to every reader in [`FORMATS`] (strict, with
/// `skip_bad`, and with a device filter and time window), iterating every request. Checks
/// what the readers promise: each request's device id names a known device, the first kept
/// request is at time 0, nothing follows the end or an error, no reader yields more items
/// than its input has bytes, a reader that carries no latencies gives none, and the requests
/// of a clean reading survive a round trip through the binary format unchanged (version 1,
/// and version 2 with their latencies).
pub fn read_all(bytes: &[u8]) -> Summary {
    let mut sum = Summary::default();
    for name in NAMES {
        if let Ok(Some(format)) = detect_reader(Path::new(name), bytes) {
            sum.detected += 1;
            drain(bytes, &format, &ReadOptions::default(), &mut sum);
        }
    }
    for spec in FORMATS {
        let Ok(format) = TraceFormat::parse(spec) else {
            panic!("fuzz_support::FORMATS holds an invalid format {spec:?}");
        };
        if let Some((reqs, devices)) = drain(bytes, &format, &ReadOptions::default(), &mut sum) {
            round_trip(&reqs, &devices);
        }
        drain(bytes, &format, &ReadOptions { skip_bad: true, ..ReadOptions::default() }, &mut sum);
        let window = ReadOptions {
            skip_bad: true,
            device: Some("0".to_string()),
            from_ns: Some(1),
            until_ns: Some(1_000_000_000),
        };
        drain(bytes, &format, &window, &mut sum);
    }
    sum
}

/// A request and the latency its reader gave beside it.
type WithLatency = (Request, Option<u64>);

/// Reads `bytes` to the end; the requests (with their latencies) and devices if the reading
/// ended cleanly (and held at most [`KEEP`] requests).
fn drain(
    bytes: &[u8],
    format: &TraceFormat,
    opts: &ReadOptions,
    sum: &mut Summary,
) -> Option<(Vec<WithLatency>, Vec<String>)> {
    let mut r = TraceReader::from_reader(Cursor::new(bytes.to_vec()), format, opts).ok()?;
    let gzip = bytes.starts_with(&[0x1f, 0x8b]);
    let mut reqs = Vec::new();
    let mut items = 0usize;
    let mut failed = false;
    while let Some(item) = r.next() {
        items += 1;
        assert!(gzip || items <= bytes.len() + 1, "{format}: more items than input bytes");
        match item {
            Ok(req) => {
                sum.requests += 1;
                assert!((req.dev as usize) < r.devices().len(), "{format}: device id {} is not named", req.dev);
                if items == 1 {
                    assert_eq!(req.t_ns, 0, "{format}: the first kept request is not at time 0");
                }
                let lat = r.recorded_latency_ns();
                assert!(lat.is_none() || r.carries_latency(), "{format}: a latency from a format without");
                if reqs.len() < KEEP {
                    reqs.push((req, lat));
                }
            }
            Err(_) => failed = true,
        }
    }
    assert!(r.next().is_none(), "{format}: a request after the end");
    if failed || reqs.len() >= KEEP {
        return None;
    }
    sum.clean += 1;
    Some((reqs, r.devices().to_vec()))
}

/// Writes the requests as a binary trace, version 1 and version 2 with their latencies, and
/// reads them back as stored: the same requests (and latencies, 0 reading as unknown), the
/// same device names. Requests the writer refuses (a device name over 4 KiB) end the check
/// without a verdict.
fn round_trip(reqs: &[WithLatency], devices: &[String]) {
    for latency in [false, true] {
        let w = if latency {
            BinaryWriter::new_with_latency(Cursor::new(Vec::new()))
        } else {
            BinaryWriter::new(Cursor::new(Vec::new()))
        };
        let Ok(mut w) = w else { return };
        for d in devices {
            if w.define_device(d).is_err() {
                return;
            }
        }
        for (r, lat) in reqs {
            if w.push_with_latency(*r, if latency { *lat } else { None }).is_err() {
                return;
            }
        }
        let Ok(out) = w.finish() else { return };
        let r = BinaryReader::new(Cursor::new(out.into_inner()));
        let Ok(mut r) = r else { panic!("binary round trip: the header written is refused") };
        let mut back = Vec::with_capacity(reqs.len());
        while let Some(req) = r.next() {
            match req {
                Ok(req) => back.push((req, r.recorded_latency_ns())),
                Err(e) => panic!("binary round trip: the trace written is refused: {e}"),
            }
        }
        let same = back.len() == reqs.len()
            && back
                .iter()
                .zip(reqs)
                .all(|((b, bl), (q, ql))| b == q && *bl == if latency { ql.filter(|l| *l != 0) } else { None });
        assert!(same, "binary round trip (latencies: {latency}) changed the requests");
        assert_eq!(r.devices(), devices, "binary round trip changed the device names");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_parses() {
        for spec in FORMATS {
            assert!(TraceFormat::parse(spec).is_ok(), "{spec}");
        }
    }

    #[test]
    fn samples_are_read() {
        let fio = b"fio version 2 iolog\n/dev/x add\n/dev/x open\n/dev/x read 0 4096\nwait 10\n/dev/x write 4096 512\n";
        let s = read_all(fio);
        assert!(s.requests >= 2 && s.clean > 0 && s.detected > 0, "{s:?}");
        // Empty: no requests; a name is then all detection goes by.
        let s = read_all(b"");
        assert_eq!((s.requests, s.detected), (0, 2), "{s:?}");
    }
}
