//! Comma-separated formats: MSR Cambridge, Alibaba 2020, Tencent CBS 2018 and generic CSV.

use super::fields::{bytes_u32, bytes_u64, not_a_number, num, parse_scaled, parse_u64, show, trim, Split, Words};
use super::line::{LineResult, Parsed, Rec};
use crate::format::{CsvMapping, TraceFormat};
use crate::request::Op;

/// Windows filetime ticks are 100 ns.
const FILETIME_NS: u64 = 100;
const SECTOR: u64 = 512;

/// The fixed formats have no header, but a file that was given one (first field starting
/// with a letter on line 1) is accepted.
fn is_header(lineno: u64, first: &[u8]) -> bool {
    lineno == 1 && trim(first).first().is_some_and(u8::is_ascii_alphabetic)
}

/// Splits a comma-separated line into exactly `N` trimmed fields (`N - optional` at least);
/// on a mismatch, the number of fields found.
#[inline]
fn fields<const N: usize>(line: &[u8], optional: usize) -> Result<[&[u8]; N], usize> {
    let mut out: [&[u8]; N] = [&[]; N];
    let mut n = 0;
    let mut rest = line;
    // A plain scan: fields are a few bytes, shorter than a SIMD search's set-up.
    while let Some(comma) = rest.iter().position(|&c| c == b',') {
        let (field, tail) = rest.split_at(comma);
        match out.get_mut(n) {
            Some(slot) => *slot = trim(field),
            None => return Err(n + 1 + rest.iter().filter(|&&c| c == b',').count()),
        }
        n += 1;
        rest = tail.get(1..).unwrap_or_default();
    }
    match out.get_mut(n) {
        Some(slot) => *slot = trim(rest),
        None => return Err(n + 1),
    }
    n += 1;
    if n + optional < N {
        return Err(n);
    }
    Ok(out)
}

fn field_count_error(found: usize, expected: &str, layout: &str) -> String {
    format!("expected {expected} comma-separated fields ({layout}), found {found}")
}

#[derive(Default)]
pub(crate) struct Msr {
    /// `HOST_DISK` of the current line.
    name: Vec<u8>,
}

impl Msr {
    /// `Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime`. ResponseTime (filetime
    /// ticks of 100 ns) is the recorded latency; it may be missing, and one that is not a
    /// number is no latency rather than a bad line (it was not read at all before).
    pub(crate) fn parse<'a>(&'a mut self, line: &'a [u8], lineno: u64) -> LineResult<'a> {
        if trim(line).is_empty() {
            return Ok(Parsed::Skip);
        }
        let [ts, host, disk, ty, off, size, resp] = match fields::<7>(line, 1) {
            Ok(f) => f,
            Err(_) if is_header(lineno, line) => return Ok(Parsed::Skip),
            Err(n) => {
                return Err(
                    field_count_error(n, "7", "Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime").into()
                )
            }
        };
        if is_header(lineno, ts) {
            return Ok(Parsed::Skip);
        }
        let ticks = num("timestamp", ts)?;
        let t_ns = ticks
            .checked_mul(FILETIME_NS)
            .ok_or_else(|| format!("timestamp {ticks} (filetime) overflows 64-bit nanoseconds"))?;
        let op = if ty.eq_ignore_ascii_case(b"Read") {
            Op::Read
        } else if ty.eq_ignore_ascii_case(b"Write") {
            Op::Write
        } else {
            return Err(format!("type {} is not Read or Write", show(ty)).into());
        };
        let offset = num("offset", off)?;
        let len = bytes_u32("size", num("size", size)?, 1)?;
        // MSR files hold one disk: rebuild the name only when it changes.
        let same = self.name.len() == host.len() + 1 + disk.len()
            && self.name.starts_with(host)
            && self.name.ends_with(disk)
            && self.name.get(host.len()) == Some(&b'_');
        if !same {
            self.name.clear();
            self.name.extend_from_slice(host);
            self.name.push(b'_');
            self.name.extend_from_slice(disk);
        }
        let lat_ns = parse_u64(resp).and_then(|ticks| ticks.checked_mul(FILETIME_NS));
        Ok(Parsed::Req(Rec { t_ns, offset, len, op, dev: &self.name, lat_ns }))
    }
}

fn read_write(what: &str, b: &[u8], read: &[u8], write: &[u8]) -> Result<Op, String> {
    if b.eq_ignore_ascii_case(read) {
        Ok(Op::Read)
    } else if b.eq_ignore_ascii_case(write) {
        Ok(Op::Write)
    } else {
        Err(format!(
            "{what} {} is neither {} (read) nor {} (write)",
            show(b),
            String::from_utf8_lossy(read),
            String::from_utf8_lossy(write)
        ))
    }
}

/// Alibaba block traces 2020: `device_id,opcode,offset,length,timestamp` (bytes, µs).
pub(crate) fn alibaba(line: &[u8], lineno: u64) -> LineResult<'_> {
    if trim(line).is_empty() {
        return Ok(Parsed::Skip);
    }
    let [dev, opcode, off, len, ts] = match fields::<5>(line, 0) {
        Ok(f) => f,
        Err(_) if is_header(lineno, line) => return Ok(Parsed::Skip),
        Err(n) => return Err(field_count_error(n, "5", "device_id,opcode,offset,length,timestamp").into()),
    };
    if is_header(lineno, dev) {
        return Ok(Parsed::Skip);
    }
    let op = read_write("opcode", opcode, b"R", b"W")?;
    let offset = num("offset", off)?;
    let len = bytes_u32("length", num("length", len)?, 1)?;
    let us = num("timestamp", ts)?;
    let t_ns = us.checked_mul(1000).ok_or_else(|| format!("timestamp {us} µs overflows 64-bit nanoseconds"))?;
    Ok(Parsed::Req(Rec { t_ns, offset, len, op, dev, lat_ns: None }))
}

/// Tencent CBS 2018: `timestamp,offset,size,io_type,volume_id` (s, sectors, sectors, 0 = read
/// / 1 = write).
pub(crate) fn tencent(line: &[u8], lineno: u64) -> LineResult<'_> {
    if trim(line).is_empty() {
        return Ok(Parsed::Skip);
    }
    let [ts, off, size, io_type, dev] = match fields::<5>(line, 0) {
        Ok(f) => f,
        Err(_) if is_header(lineno, line) => return Ok(Parsed::Skip),
        Err(n) => return Err(field_count_error(n, "5", "timestamp,offset,size,io_type,volume_id").into()),
    };
    if is_header(lineno, ts) {
        return Ok(Parsed::Skip);
    }
    let s = num("timestamp", ts)?;
    let t_ns = s.checked_mul(1_000_000_000).ok_or_else(|| format!("timestamp {s} s overflows 64-bit nanoseconds"))?;
    let offset = bytes_u64("offset", num("offset", off)?, SECTOR)?;
    let len = bytes_u32("size", num("size", size)?, SECTOR)?;
    let op = read_write("io_type", io_type, b"0", b"1")?;
    Ok(Parsed::Req(Rec { t_ns, offset, len, op, dev, lat_ns: None }))
}

/// Generic CSV through a [`CsvMapping`].
pub(crate) struct Csv {
    m: CsvMapping,
    /// Columns of time, op, offset, size and device (`usize::MAX` when absent).
    cols: [usize; 5],
    needed: usize,
    time_ns: u64,
    offset_bytes: u64,
    size_bytes: u64,
}

const ROLES: [&str; 5] = ["time", "op", "offset", "size", "device"];

impl Csv {
    pub(crate) fn new(m: CsvMapping) -> Csv {
        let cols = [m.time_col, m.op_col, m.offset_col, m.size_col, m.dev_col.unwrap_or(usize::MAX)];
        let needed = cols.iter().filter(|c| **c != usize::MAX).max().map_or(0, |c| c + 1);
        Csv {
            time_ns: m.time_unit.ns(),
            offset_bytes: m.offset_unit.bytes(),
            size_bytes: m.size_unit.bytes(),
            cols,
            needed,
            m,
        }
    }

    pub(crate) fn parse<'a>(&'a mut self, line: &'a [u8], lineno: u64) -> LineResult<'a> {
        let t = trim(line);
        if t.is_empty() || t.starts_with(b"#") || (lineno == 1 && self.m.has_header) {
            return Ok(Parsed::Skip);
        }
        let mut got: [&[u8]; 5] = [&[]; 5];
        let found = match self.m.delimiter.byte() {
            Some(d) => self.pick(Split::new(line, d), &mut got),
            None => self.pick(Words::new(line), &mut got),
        };
        if found < self.needed {
            let what = ROLES
                .iter()
                .zip(self.cols)
                .filter(|(_, c)| *c != usize::MAX && *c >= found)
                .map(|(r, c)| format!("{r} (column {c})"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err(format!("only {found} fields, so no {what}").into());
        }
        let [time, op, off, size, dev] = got;
        let t_ns = parse_scaled(time, self.time_ns).ok_or_else(|| not_a_number("time", time))?;
        let op = self.op(op)?;
        let offset = bytes_u64("offset", num("offset", off)?, self.offset_bytes)?;
        let len = bytes_u32("size", num("size", size)?, self.size_bytes)?;
        let dev: &[u8] = if self.cols[4] == usize::MAX { b"0" } else { dev };
        Ok(Parsed::Req(Rec { t_ns, offset, len, op, dev, lat_ns: None }))
    }

    /// Fills `got` with the mapped fields (trimmed, unquoted); returns how many fields were
    /// looked at (all of them when the line is too short).
    #[inline]
    fn pick<'a>(&self, fields: impl Iterator<Item = &'a [u8]>, got: &mut [&'a [u8]; 5]) -> usize {
        let mut n = 0;
        for (i, f) in fields.enumerate() {
            n = i + 1;
            if i >= self.needed {
                break;
            }
            for (slot, col) in got.iter_mut().zip(self.cols) {
                if col == i {
                    *slot = unquote(trim(f));
                }
            }
        }
        n
    }

    fn op(&self, v: &[u8]) -> Result<Op, String> {
        let m = &self.m;
        let lists = [
            (&m.read_values, Op::Read),
            (&m.write_values, Op::Write),
            (&m.discard_values, Op::Discard),
            (&m.flush_values, Op::Flush),
        ];
        for (values, op) in lists {
            if values.iter().any(|x| x.as_bytes().eq_ignore_ascii_case(v)) {
                return Ok(op);
            }
        }
        Err(format!(
            "op {} is not a read ({}), write ({}), discard ({}) or flush ({}) value",
            show(v),
            m.read_values.join("|"),
            m.write_values.join("|"),
            m.discard_values.join("|"),
            m.flush_values.join("|")
        ))
    }
}

fn unquote(b: &[u8]) -> &[u8] {
    match b {
        [b'"', inner @ .., b'"'] => inner,
        _ => b,
    }
}

/// Recognises one data line of MSR, Alibaba or Tencent (for format detection).
pub(crate) fn guess(line: &[u8]) -> Option<TraceFormat> {
    let f: Vec<&[u8]> = Split::new(line, b',').map(trim).collect();
    let digits = |b: &&[u8]| super::fields::parse_u64(b).is_some();
    match f.as_slice() {
        [ts, _, _, ty, off, size, ..]
            if (f.len() == 6 || f.len() == 7)
                && digits(ts)
                && (ty.eq_ignore_ascii_case(b"read") || ty.eq_ignore_ascii_case(b"write"))
                && digits(off)
                && digits(size) =>
        {
            Some(TraceFormat::Msr)
        }
        [_, op, off, len, ts] if (*op == b"R" || *op == b"W") && digits(off) && digits(len) && digits(ts) => {
            Some(TraceFormat::Alibaba)
        }
        [ts, off, size, ty, _] if digits(ts) && digits(off) && digits(size) && (*ty == b"0" || *ty == b"1") => {
            Some(TraceFormat::Tencent)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(r: LineResult<'_>) -> crate::parse::line::Flat {
        crate::parse::line::flat(r)
    }

    #[test]
    fn msr() {
        let mut p = Msr::default();
        assert_eq!(
            req(p.parse(b"128166372003061629,hm,0,Read,7014609920,24576,41286", 1)),
            Ok(Some((12816637200306162900, 7014609920, 24576, Op::Read, "hm_0".into())))
        );
        assert_eq!(req(p.parse(b"Timestamp,Hostname,DiskNumber,Type,Offset,Size,ResponseTime", 1)), Ok(None));
        let lat = |p: &mut Msr, l: &[u8]| match p.parse(l, 2) {
            Ok(Parsed::Req(r)) => r.lat_ns,
            _ => panic!("not a request"),
        };
        assert_eq!(lat(&mut p, b"1,hm,0,Read,0,512,41286"), Some(4_128_600));
        assert_eq!(lat(&mut p, b"1,hm,0,Read,0,512,0"), Some(0));
        assert_eq!(lat(&mut p, b"1,hm,0,Read,0,512"), None);
        assert_eq!(lat(&mut p, b"1,hm,0,Read,0,512,"), None);
        assert_eq!(lat(&mut p, b"1,hm,0,Read,0,512,n/a"), None);
        assert_eq!(lat(&mut p, b"1,hm,0,Read,0,512,99999999999999999999"), None);
        assert_eq!(req(p.parse(b"1,hm,0,Write,0,512", 2)).map(|r| r.map(|r| r.3)), Ok(Some(Op::Write)));
        assert_eq!(req(p.parse(b"1,hm,0,Read,12x,512,1", 2)), Err("offset \"12x\" is not a number".into()));
        assert_eq!(req(p.parse(b"1,hm,0,Trim,1,512,1", 2)), Err("type \"Trim\" is not Read or Write".into()));
        assert!(req(p.parse(b"1,hm,0", 2)).is_err_and(|m| m.contains("found 3")));
        assert!(req(p.parse(b"1,hm,0,Read,1,512,1,9", 2)).is_err_and(|m| m.contains("found 8")));
        assert!(req(p.parse(b"999999999999999999,hm,0,Read,1,512,1", 2)).is_err_and(|m| m.contains("overflows")));
    }

    #[test]
    fn alibaba_tencent() {
        assert_eq!(
            req(alibaba(b"419,W,8653316096,4096,1577808144002561", 1)),
            Ok(Some((1577808144002561000, 8653316096, 4096, Op::Write, "419".into())))
        );
        assert!(req(alibaba(b"419,X,1,1,1", 2)).is_err_and(|m| m.contains("opcode \"X\"")));
        assert_eq!(
            req(tencent(b"1538323199,1003032,8,1,1063", 1)),
            Ok(Some((1538323199000000000, 1003032 * 512, 4096, Op::Write, "1063".into())))
        );
        assert!(req(tencent(b"1538323199,1003032,8,2,1063", 2)).is_err_and(|m| m.contains("io_type \"2\"")));
    }

    #[test]
    fn generic() {
        let m = CsvMapping::parse("time=0:ms,op=1,offset=2:sectors,size=3,dev=4,header").unwrap();
        let mut p = Csv::new(m);
        assert_eq!(req(p.parse(b"t,op,off,size,dev", 1)), Ok(None));
        assert_eq!(
            req(p.parse(b"1.5, \"R\" ,8,4096,sdb", 2)),
            Ok(Some((1_500_000, 4096, 4096, Op::Read, "sdb".into())))
        );
        assert_eq!(req(p.parse(b"# comment", 3)), Ok(None));
        assert!(req(p.parse(b"1,R,8", 4)).is_err_and(|m| m.contains("no size (column 3), device (column 4)")));
        assert!(req(p.parse(b"1,X,8,1,a", 4)).is_err_and(|m| m.starts_with("op \"X\" is not a read (r|read)")));
        let mut p = Csv::new(CsvMapping::parse("time=3:ns,op=2,offset=1,size=0,delim=space,read=0,write=1").unwrap());
        assert_eq!(req(p.parse(b"  512  4096 1   77 ", 1)), Ok(Some((77, 4096, 512, Op::Write, "0".into()))));
    }

    #[test]
    fn guesses() {
        assert_eq!(guess(b"128166372003061629,hm,0,Read,7014609920,24576,41286"), Some(TraceFormat::Msr));
        assert_eq!(guess(b"419,W,8653316096,4096,1577808144002561"), Some(TraceFormat::Alibaba));
        assert_eq!(guess(b"1538323199,1003032,8,1,1063"), Some(TraceFormat::Tencent));
        assert_eq!(guess(b"a,b,c"), None);
    }
}
