//! Fault injection for tests: the one way every engine and command is made to fail on
//! purpose — the dm-flakey / dm-delay of a machine that has neither.
//!
//! Compiled in only with the engine feature `fault-injection` (enabled by the `diskmeter`
//! crate's dev-dependency, i.e. for `cargo test`, never for `cargo build --release`) and in
//! the engine's own unit tests. Without it [`Hook`] and [`NullCounter`] are empty types
//! whose checks are constants and cost nothing, and [`null_fault_from_env`] is `None`.
//!
//! Two environment variables hold the plan; both name the error the same way (`eio`,
//! `enodata`, `enodev`, `enospc`) and both speak of the I/O direction with [`Op`], the
//! backends' own enum.
//!
//! `DISKMETER_FAULTS` ([`ENV`], read by [`Hook::from_env`]): range rules for real targets,
//! separated by `;`, each `KIND@OFFSET+LEN[:DURATION][,read|,write][,first=N]`:
//! * `eio@1048576+4096` — I/O touching those bytes fails with EIO (`enodev`, `enodata`,
//!   `enospc` likewise);
//! * `slow@8388608+1048576:50ms` — I/O touching them completes 50 ms late;
//! * `corrupt@4096+512` — reads return those bytes inverted, writes store them inverted;
//! * `,read` / `,write` limit a rule to one direction; `,first=N` makes it fire only on
//!   the first N I/Os that touch the range (a transient fault).
//!
//! `DISKMETER_NULL_FAULT` ([`NULL_ENV`], read by [`null_fault_from_env`]): a count rule for
//! the null engine, which touches no device: `KIND@N` fails every I/O after the first N
//! of each worker with KIND ([`NullFault`], applied by [`NullCounter`]).

pub use crate::io::backend::Op;

/// The environment variable holding the range rules.
pub const ENV: &str = "DISKMETER_FAULTS";
/// The environment variable holding the null engine's count rule.
pub const NULL_ENV: &str = "DISKMETER_NULL_FAULT";

/// True when this build can inject faults (tests only).
pub const ENABLED: bool = cfg!(any(test, feature = "fault-injection"));

/// The null engine's fault: every I/O after the first `after_ops` (counted per worker)
/// fails with `errno`. Present in every build so that run controls can carry one; only a
/// build with fault injection acts on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NullFault {
    pub after_ops: u64,
    pub errno: i32,
}

/// `DISKMETER_NULL_FAULT` as a [`NullFault`]: `None` when unset or malformed (the
/// variable is then ignored), and always `None` in a build without fault injection.
pub fn null_fault_from_env() -> Option<NullFault> {
    #[cfg(any(test, feature = "fault-injection"))]
    {
        std::env::var(NULL_ENV).ok().as_deref().and_then(NullFault::parse)
    }
    #[cfg(not(any(test, feature = "fault-injection")))]
    {
        None
    }
}

#[cfg(any(test, feature = "fault-injection"))]
mod imp {
    use super::{NullFault, Op};
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    /// The errors a rule can inject, by the name both variables use.
    const ERRNOS: [(&str, i32); 4] =
        [("eio", libc::EIO), ("enodata", libc::ENODATA), ("enodev", libc::ENODEV), ("enospc", libc::ENOSPC)];

    fn errno_named(name: &str) -> Option<i32> {
        ERRNOS.iter().find(|(n, _)| *n == name).map(|&(_, e)| e)
    }

    impl NullFault {
        /// Parse `KIND@N` (`eio@1000`); `None` when malformed.
        pub fn parse(s: &str) -> Option<NullFault> {
            let (kind, n) = s.split_once('@')?;
            Some(NullFault { errno: errno_named(kind)?, after_ops: n.parse().ok()? })
        }
    }

    /// The null engine's side of a [`NullFault`]: counts the I/Os of one worker and turns
    /// the result of those past the count into the fault's error.
    #[derive(Debug, Default)]
    pub struct NullCounter {
        fault: Option<NullFault>,
        ops: u64,
    }

    impl NullCounter {
        pub fn new(fault: Option<NullFault>) -> Self {
            Self { fault, ops: 0 }
        }

        /// The result of the next I/O, which would otherwise return `ok`.
        #[inline]
        pub fn result(&mut self, ok: i32) -> i32 {
            self.ops += 1;
            match self.fault {
                Some(f) if self.ops > f.after_ops => -f.errno,
                _ => ok,
            }
        }
    }

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
        let unknown =
            |k: &str| format!("fault rule {s:?}: unknown kind {k:?} (eio, enodata, enodev, enospc, slow:DUR, corrupt)");
        let kind = match (kind.trim(), arg) {
            ("corrupt", None) => Kind::Corrupt,
            ("slow", Some(d)) => Kind::Slow(
                spec::units::parse_duration("DISKMETER_FAULTS", d.trim(), spec::units::TimeUnit::Millis)
                    .map_err(|e| e.to_string())?,
            ),
            (k, None) => Kind::Errno(errno_named(k).ok_or_else(|| unknown(k))?),
            (k, Some(_)) => return Err(unknown(k)),
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

    /// The range rules of one plan.
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
pub use imp::{Hook, NullCounter};

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

/// Without the `fault-injection` feature: the null engine counts nothing and never fails.
#[cfg(not(any(test, feature = "fault-injection")))]
#[derive(Debug, Default)]
pub struct NullCounter;

#[cfg(not(any(test, feature = "fault-injection")))]
impl NullCounter {
    #[inline(always)]
    pub fn new(_fault: Option<NullFault>) -> Self {
        NullCounter
    }
    #[inline(always)]
    pub fn result(&mut self, ok: i32) -> i32 {
        ok
    }
}

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
        for bad in ["eio", "eio@1", "boom@0+1", "slow@0+1", "eio@0+1,first=x", "eio@0+1,sideways", "eio@0+1:5ms"] {
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

    #[test]
    fn both_variables_name_errors_alike() {
        for (name, errno) in
            [("eio", libc::EIO), ("enodata", libc::ENODATA), ("enodev", libc::ENODEV), ("enospc", libc::ENOSPC)]
        {
            let h = Hook::parse(&format!("{name}@0+512")).unwrap();
            assert_eq!(h.before(Op::Read, 0, 512).and_then(|e| e.raw_os_error()), Some(errno), "{name}");
            assert_eq!(NullFault::parse(&format!("{name}@7")), Some(NullFault { after_ops: 7, errno }), "{name}");
        }
    }

    #[test]
    fn null_fault_parses_kind_at_count() {
        assert_eq!(NullFault::parse("eio@1000"), Some(NullFault { after_ops: 1000, errno: libc::EIO }));
        assert_eq!(NullFault::parse("enospc@0"), Some(NullFault { after_ops: 0, errno: libc::ENOSPC }));
        // Malformed values are ignored (None), as the variable always was.
        for bad in ["", "eio", "eio@", "eio@x", "eio@-1", "boom@5", "@5", "eio@5+1", "EIO@5"] {
            assert_eq!(NullFault::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn null_counter_fails_every_io_after_the_count() {
        let mut c = NullCounter::new(Some(NullFault { after_ops: 3, errno: libc::ENOSPC }));
        let got: Vec<i32> = (0..6).map(|_| c.result(4096)).collect();
        assert_eq!(got, [4096, 4096, 4096, -libc::ENOSPC, -libc::ENOSPC, -libc::ENOSPC]);
        let mut none = NullCounter::new(None);
        assert!((0..100).all(|_| none.result(512) == 512));
        let mut at_once = NullCounter::new(Some(NullFault { after_ops: 0, errno: libc::EIO }));
        assert_eq!(at_once.result(0), -libc::EIO, "an fsync fails too");
    }

    #[test]
    fn range_rules_ignore_fsync() {
        // An fsync has no range: no rule touches it, not even one for every direction.
        let h = Hook::parse("eio@0+1G").unwrap();
        assert!(h.before(Op::Fsync, 0, 0).is_none());
    }
}
