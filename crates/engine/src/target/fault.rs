//! Fault injection for tests: make chosen byte ranges of a target fail (`EIO`, `ENODEV`),
//! complete slowly, or return corrupted data — the dm-flakey / dm-delay of a machine
//! that has neither.
//!
//! Compiled in only with the engine feature `fault-injection` (enabled by the `diskmeter`
//! crate's dev-dependency, i.e. for `cargo test`, never for `cargo build --release`) and in
//! the engine's own unit tests. Without it [`Hook`] is an empty type whose checks are
//! constant `None` and cost nothing.
//!
//! The plan comes from the environment variable `DISKMETER_FAULTS`: rules separated by
//! `;`, each `KIND@OFFSET+LEN[:DURATION][,read|,write][,first=N]`:
//! * `eio@1048576+4096` — I/O touching those bytes fails with EIO (`enodev`, `enodata`
//!   likewise);
//! * `slow@8388608+1048576:50ms` — I/O touching them completes 50 ms late;
//! * `corrupt@4096+512` — reads return those bytes inverted, writes store them inverted;
//! * `,read` / `,write` limit a rule to one direction; `,first=N` makes it fire only on
//!   the first N I/Os that touch the range (a transient fault).

/// Direction of an I/O.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Read,
    Write,
}

/// The environment variable holding the plan.
pub const ENV: &str = "DISKMETER_FAULTS";

#[cfg(any(test, feature = "fault-injection"))]
mod imp {
    use super::Op;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    #[derive(Debug, Clone, PartialEq)]
    pub(super) enum Kind {
        Errno(i32),
        Slow(Duration),
        Corrupt,
    }

    #[derive(Debug)]
    pub(super) struct Rule {
        pub kind: Kind,
        pub start: u64,
        pub len: u64,
        pub op: Option<Op>,
        pub first: Option<u64>,
        pub hits: AtomicU64,
    }

    impl Rule {
        fn touches(&self, op: Op, offset: u64, len: u64) -> bool {
            self.op.is_none_or(|o| o == op) && offset < self.start + self.len && self.start < offset + len
        }
        /// Count a hit; true when the rule fires for it.
        fn fire(&self) -> bool {
            let n = self.hits.fetch_add(1, Ordering::Relaxed);
            self.first.is_none_or(|f| n < f)
        }
    }

    fn num(s: &str) -> Result<u64, String> {
        spec::units::parse_size("DISKMETER_FAULTS", s.trim()).map_err(|e| e.to_string())
    }

    pub(super) fn parse_rule(s: &str) -> Result<Rule, String> {
        let mut parts = s.split(',');
        let head = parts.next().unwrap_or_default().trim();
        let (kind, rest) = head.split_once('@').ok_or_else(|| format!("fault rule {s:?}: expected KIND@OFFSET+LEN"))?;
        let (range, arg) = match rest.split_once(':') {
            Some((r, a)) => (r, Some(a)),
            None => (rest, None),
        };
        let (start, len) =
            range.split_once('+').ok_or_else(|| format!("fault rule {s:?}: expected OFFSET+LEN after @"))?;
        let kind = match (kind.trim(), arg) {
            ("eio", None) => Kind::Errno(libc::EIO),
            ("enodata", None) => Kind::Errno(libc::ENODATA),
            ("enodev", None) => Kind::Errno(libc::ENODEV),
            ("corrupt", None) => Kind::Corrupt,
            ("slow", Some(d)) => Kind::Slow(
                spec::units::parse_duration("DISKMETER_FAULTS", d.trim(), spec::units::TimeUnit::Millis)
                    .map_err(|e| e.to_string())?,
            ),
            (k, _) => {
                return Err(format!("fault rule {s:?}: unknown kind {k:?} (eio, enodata, enodev, slow:DUR, corrupt)"))
            }
        };
        let mut rule =
            Rule { kind, start: num(start)?, len: num(len)?.max(1), op: None, first: None, hits: AtomicU64::new(0) };
        for p in parts {
            match p.trim() {
                "read" => rule.op = Some(Op::Read),
                "write" => rule.op = Some(Op::Write),
                q => match q.strip_prefix("first=") {
                    Some(n) => rule.first = Some(n.parse().map_err(|_| format!("fault rule {s:?}: bad first={n}"))?),
                    None => return Err(format!("fault rule {s:?}: unknown modifier {q:?}")),
                },
            }
        }
        Ok(rule)
    }

    #[derive(Debug, Default)]
    pub struct Hook {
        pub(super) rules: Vec<Rule>,
    }

    impl Hook {
        /// Parse a plan (`rule;rule;…`).
        pub fn parse(s: &str) -> Result<Hook, String> {
            let rules = s.split(';').filter(|r| !r.trim().is_empty()).map(parse_rule).collect::<Result<_, _>>()?;
            Ok(Hook { rules })
        }

        /// The plan of `DISKMETER_FAULTS` (empty when unset).
        pub fn from_env() -> Result<Hook, String> {
            match std::env::var(super::ENV) {
                Ok(s) => Hook::parse(&s),
                Err(_) => Ok(Hook::default()),
            }
        }

        pub fn active(&self) -> bool {
            !self.rules.is_empty()
        }

        /// Before an I/O of `len` bytes at `offset`: sleep for slow rules, return the error
        /// an errno rule injects.
        pub fn before(&self, op: Op, offset: u64, len: u64) -> Option<std::io::Error> {
            let mut err = None;
            for r in &self.rules {
                if !r.touches(op, offset, len) {
                    continue;
                }
                match r.kind {
                    Kind::Errno(e) if err.is_none() && r.fire() => err = Some(std::io::Error::from_raw_os_error(e)),
                    Kind::Slow(d) if r.fire() => std::thread::sleep(d),
                    _ => {}
                }
            }
            err
        }

        /// Corrupt rules: invert the bytes of `buf` (at `offset`) that lie in their range.
        /// Reads call it after the I/O; writes on a copy before it.
        pub fn corrupt(&self, op: Op, offset: u64, buf: &mut [u8]) -> bool {
            let mut hit = false;
            for r in &self.rules {
                if r.kind != Kind::Corrupt || !r.touches(op, offset, buf.len() as u64) || !r.fire() {
                    continue;
                }
                let lo = r.start.max(offset) - offset;
                let hi = (r.start + r.len).min(offset + buf.len() as u64) - offset;
                for b in &mut buf[lo as usize..hi as usize] {
                    *b = !*b;
                }
                hit = true;
            }
            hit
        }

        /// True when a corrupt rule covers a write of `len` bytes at `offset` (so the writer
        /// makes a copy to corrupt).
        pub fn corrupts_write(&self, offset: u64, len: u64) -> bool {
            self.rules.iter().any(|r| r.kind == Kind::Corrupt && r.touches(Op::Write, offset, len))
        }
    }
}

#[cfg(any(test, feature = "fault-injection"))]
pub use imp::Hook;

/// Without the `fault-injection` feature: no plan, no checks, no cost.
#[cfg(not(any(test, feature = "fault-injection")))]
#[derive(Debug, Default)]
pub struct Hook;

#[cfg(not(any(test, feature = "fault-injection")))]
impl Hook {
    #[inline(always)]
    pub fn from_env() -> Result<Hook, String> {
        Ok(Hook)
    }
    #[inline(always)]
    pub fn active(&self) -> bool {
        false
    }
    #[inline(always)]
    pub fn before(&self, _op: Op, _offset: u64, _len: u64) -> Option<std::io::Error> {
        None
    }
    #[inline(always)]
    pub fn corrupt(&self, _op: Op, _offset: u64, _buf: &mut [u8]) -> bool {
        false
    }
    #[inline(always)]
    pub fn corrupts_write(&self, _offset: u64, _len: u64) -> bool {
        false
    }
}

/// True when this build can inject faults (tests only).
pub const ENABLED: bool = cfg!(any(test, feature = "fault-injection"));

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    #[test]
    fn parses_rules() {
        let h = Hook::parse("eio@1M+4k;slow@8388608+1048576:5ms,read,first=1; corrupt@0+512,write").unwrap();
        assert_eq!(h.rules.len(), 3);
        assert_eq!((h.rules[0].start, h.rules[0].len), (1 << 20, 4096));
        assert_eq!(h.rules[1].first, Some(1));
        assert_eq!(h.rules[1].op, Some(Op::Read));
        assert_eq!(h.rules[1].kind, imp::Kind::Slow(Duration::from_millis(5)));
        assert_eq!(h.rules[2].op, Some(Op::Write));
        for bad in ["eio", "eio@1", "boom@0+1", "slow@0+1", "eio@0+1,first=x", "eio@0+1,sideways"] {
            assert!(Hook::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn errno_rules_fire_on_overlap_and_count_hits() {
        let h = Hook::parse("eio@4096+512,first=2").unwrap();
        assert!(h.before(Op::Read, 0, 4096).is_none());
        assert!(h.before(Op::Read, 4608, 512).is_none());
        assert_eq!(h.before(Op::Write, 0, 8192).and_then(|e| e.raw_os_error()), Some(libc::EIO));
        assert!(h.before(Op::Read, 4096, 512).is_some());
        assert!(h.before(Op::Read, 4096, 512).is_none(), "first=2 is used up");
    }

    #[test]
    fn slow_and_corrupt() {
        let h = Hook::parse("slow@0+1:20ms,write;corrupt@10+2,read").unwrap();
        let t = Instant::now();
        assert!(h.before(Op::Read, 0, 100).is_none());
        assert!(t.elapsed() < Duration::from_millis(20));
        h.before(Op::Write, 0, 100);
        assert!(t.elapsed() >= Duration::from_millis(20));
        let mut buf = vec![0u8; 16];
        assert!(h.corrupt(Op::Read, 4, &mut buf));
        assert_eq!(&buf[5..9], &[0, 0xff, 0xff, 0]);
        assert!(!h.corrupts_write(0, 100));
    }
}
