//! fio iolog, versions 2 and 3 (fio's `iolog.c`, HOWTO "Trace file format").
//!
//! v2: `FILE add|open|close` and `FILE read|write|sync|datasync|trim OFFSET LENGTH`, plus
//! `FILE wait USEC 0`: the time of every later I/O is the sum of the waits before it.
//! v3: every line starts with a timestamp in µs since the start of the run; fio ignores
//! `wait` there, and so do we.

use super::fields::{bytes_u32, num, show, trim, Words};
use super::line::{LineError, LineResult, Parsed, Rec};
use crate::request::Op;

#[derive(Default)]
pub(crate) struct Fio {
    /// 0 until the header line has been read.
    version: u8,
    /// v2: total of the `wait` lines so far.
    wait_us: u64,
}

const ACTIONS: &str = "add, open, close, read, write, sync, datasync, trim or wait";

impl Fio {
    pub(crate) fn parse<'a>(&mut self, line: &'a [u8]) -> LineResult<'a> {
        let line = trim(line);
        if line.is_empty() {
            return Ok(Parsed::Skip);
        }
        if self.version == 0 {
            self.version = match line {
                b"fio version 2 iolog" => 2,
                b"fio version 3 iolog" => 3,
                _ => {
                    return Err(LineError::Fatal(format!(
                    "not a fio iolog: expected the header \"fio version 2 iolog\" or \"fio version 3 iolog\", found {}",
                    show(line)
                )))
                }
            };
            return Ok(Parsed::Skip);
        }
        let mut w = Words::new(line);
        let stamp = if self.version == 3 { w.next() } else { None };
        let (Some(file), Some(action)) = (w.next(), w.next()) else {
            let form =
                if self.version == 3 { "TIME FILE ACTION [OFFSET LENGTH]" } else { "FILE ACTION [OFFSET LENGTH]" };
            return Err(format!("expected \"{form}\", found {}", show(line)).into());
        };
        let t_us = match stamp {
            Some(s) => num("timestamp", s)?,
            None => self.wait_us,
        };
        let op = match action {
            b"add" | b"open" | b"close" => return Ok(Parsed::Skip),
            b"wait" => {
                if self.version == 2 {
                    let us = num("wait time", w.next().unwrap_or_default())?;
                    self.wait_us = self.wait_us.saturating_add(us);
                }
                return Ok(Parsed::Skip);
            }
            b"read" => Op::Read,
            b"write" => Op::Write,
            b"trim" => Op::Discard,
            b"sync" | b"datasync" => Op::Flush,
            _ => return Err(format!("action {} is not {ACTIONS}", show(action)).into()),
        };
        let (offset, len) = match (w.next(), w.next()) {
            (Some(o), Some(l)) => (num("offset", o)?, bytes_u32("length", num("length", l)?, 1)?),
            // fio writes `sync` with `0 0`; accept it bare too.
            (None, None) if op == Op::Flush => (0, 0),
            (Some(_), None) => return Err("missing LENGTH after OFFSET".to_string().into()),
            _ => return Err(format!("{} needs OFFSET LENGTH", show(action)).into()),
        };
        let t_ns = t_us.checked_mul(1000).ok_or_else(|| format!("time {t_us} µs overflows 64-bit nanoseconds"))?;
        Ok(Parsed::Req(Rec { t_ns, offset, len, op, dev: file, lat_ns: None }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<crate::parse::line::Flat> {
        let mut p = Fio::default();
        lines.iter().map(|l| crate::parse::line::flat(p.parse(l.as_bytes()))).collect()
    }

    #[test]
    fn v2_waits_accumulate() {
        let r = run(&[
            "fio version 2 iolog",
            "/dev/sdb add",
            "/dev/sdb open",
            "/dev/sdb read 4096 512",
            "/dev/sdb wait 100 0",
            "/dev/sdb write 0 4096",
            "/dev/sdb wait 50 0",
            "/dev/sdb sync 0 0",
            "/dev/sdb datasync",
            "/dev/sdb trim 8192 4096",
            "/dev/sdb close",
        ]);
        let reqs: Vec<_> = r.into_iter().filter_map(|x| x.unwrap()).collect();
        assert_eq!(
            reqs,
            vec![
                (0, 4096, 512, Op::Read, "/dev/sdb".into()),
                (100_000, 0, 4096, Op::Write, "/dev/sdb".into()),
                (150_000, 0, 0, Op::Flush, "/dev/sdb".into()),
                (150_000, 0, 0, Op::Flush, "/dev/sdb".into()),
                (150_000, 8192, 4096, Op::Discard, "/dev/sdb".into()),
            ]
        );
    }

    #[test]
    fn v3_and_errors() {
        let r = run(&["fio version 3 iolog", "0 f add", "17 f read 0 4096", "20 f wait 5 0", "x f read 0 1"]);
        assert_eq!(r[2], Ok(Some((17_000, 0, 4096, Op::Read, "f".into()))));
        assert_eq!(r[3], Ok(None));
        assert_eq!(r[4], Err("timestamp \"x\" is not a number".into()));
        let r = run(&["fio version 2 iolog", "f read 0", "f frob 0 1", "f read 1 x", "f read 1 5000000000", "f"]);
        assert!(r[1].as_ref().is_err_and(|m| m.contains("LENGTH")));
        assert!(r[2].as_ref().is_err_and(|m| m.contains("action \"frob\"")));
        assert_eq!(r[3], Err("length \"x\" is not a number".into()));
        assert!(r[4].as_ref().is_err_and(|m| m.contains("32 bits")));
        assert!(r[5].is_err());
        assert!(run(&["/dev/sdb read 0 1"])[0].as_ref().is_err_and(|m| m.contains("not a fio iolog")));
    }
}
