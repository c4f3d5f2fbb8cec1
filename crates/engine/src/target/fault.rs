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
//!   the first N I/Os that touch the range (a transient fault); `,after=N` only once N I/Os
//!   have touched it (the second write of a block, say).
//!
//! Write faults, the failures `run --verify` must diagnose. Each acknowledges the whole
//! write as done, as a lying device would, and is applied by [`Faulty`] around any backend:
//! * `drop@OFF+LEN` — a write touching the range is not done at all (a lost write);
//! * `misdirect@OFF+LEN:DEST` — it is done at byte offset DEST instead (a misdirected write);
//! * `torn@OFF+LEN:BYTES` — only its first BYTES bytes are written (a torn write);
//! * `zero@OFF+LEN` — zeros are written instead of its data;
//! * `flip@OFF+LEN` — the lowest bit of each byte of the range is flipped in what is
//!   written (`flip@N+1` flips one bit).
//!
//! `DISKMETER_NULL_FAULT` ([`NULL_ENV`], read by [`null_fault_from_env`]): a count rule for
//! the null engine, which touches no device: `KIND@N` fails every I/O after the first N
//! of each worker with KIND ([`NullFault`], applied by [`NullCounter`]).

use crate::io::backend::Completion;
pub use crate::io::backend::Op;
pub use plan::{NullFault, ENV, NULL_ENV};

/// What a plan of faults is made of, shared by the empty build and [`imp`], which reads and
/// applies it (so `imp` needs nothing from the module around it).
mod plan {
    use platform::OsCode;

    /// The environment variable holding the range rules.
    pub const ENV: &str = "DISKMETER_FAULTS";
    /// The environment variable holding the null engine's count rule.
    pub const NULL_ENV: &str = "DISKMETER_NULL_FAULT";

    /// The null engine's fault: every I/O after the first `after_ops` (counted per worker)
    /// fails with `code`. Present in every build so that run controls can carry one; only a
    /// build with fault injection acts on it.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct NullFault {
        pub after_ops: u64,
        pub code: OsCode,
    }
}

/// True when this build can inject faults (tests only).
pub const ENABLED: bool = cfg!(any(test, feature = "fault-injection"));

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

/// The write faults of `DISKMETER_FAULTS`, for [`Faulty`]: `None` when unset, malformed
/// (checked by the commands that read the variable themselves), without a write fault, or
/// in a build without fault injection.
pub fn write_faults_from_env() -> Option<std::sync::Arc<Hook>> {
    let h = Hook::from_env().ok()?;
    h.has_write_faults().then(|| std::sync::Arc::new(h))
}

#[cfg(any(test, feature = "fault-injection"))]
mod imp {
    use super::plan::{NullFault, ENV};
    use crate::io::backend::{Completion, Op};
    use platform::error::Errno;
    use platform::OsCode;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Duration;

    /// The errors a rule can inject, by the name both variables use: Linux's errnos (the
    /// variables name them so); on Windows the Win32 codes of the same meaning
    /// (ERROR_IO_DEVICE, ERROR_CRC, ERROR_DEVICE_NOT_CONNECTED, ERROR_DISK_FULL: `Errno`).
    const ERRNOS: [(&str, Errno); 4] =
        [("eio", Errno::EIO), ("enodata", Errno::ENODATA), ("enodev", Errno::ENODEV), ("enospc", Errno::ENOSPC)];

    fn errno_named(name: &str) -> Option<OsCode> {
        ERRNOS.iter().find(|(n, _)| *n == name).and_then(|&(_, e)| e.code())
    }

    impl NullFault {
        /// Parse `KIND@N` (`eio@1000`); `None` when malformed.
        pub fn parse(s: &str) -> Option<NullFault> {
            let (kind, n) = s.split_once('@')?;
            Some(NullFault { code: errno_named(kind)?, after_ops: n.parse().ok()? })
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

        /// The result of the next I/O, which would otherwise be `ok`.
        #[inline]
        pub fn result(&mut self, ok: Completion) -> Completion {
            self.ops += 1;
            match self.fault {
                Some(f) if self.ops > f.after_ops => Completion::Failed(f.code),
                _ => ok,
            }
        }
    }

    #[derive(Debug, Clone, PartialEq)]
    pub(super) enum Kind {
        Errno(OsCode),
        Slow(Duration),
        Corrupt,
        Drop,
        Misdirect(u64),
        Torn(u64),
        Zero,
        Flip,
    }

    impl Kind {
        /// True for the kinds [`Hook::write_fault`] applies.
        fn is_write_fault(&self) -> bool {
            matches!(self, Kind::Drop | Kind::Misdirect(_) | Kind::Torn(_) | Kind::Zero | Kind::Flip)
        }
    }

    #[derive(Debug)]
    pub(super) struct Rule {
        pub kind: Kind,
        pub start: u64,
        pub len: u64,
        pub op: Option<Op>,
        pub first: Option<u64>,
        pub after: u64,
        pub hits: AtomicU64,
    }

    impl Rule {
        fn touches(&self, op: Op, offset: u64, len: u64) -> bool {
            self.op.is_none_or(|o| o == op) && offset < self.start + self.len && self.start < offset + len
        }
        /// Count a hit; true when the rule fires for it.
        fn fire(&self) -> bool {
            let n = self.hits.fetch_add(1, Ordering::Relaxed);
            n >= self.after && self.first.is_none_or(|f| n < self.after + f)
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
        let unknown = |k: &str| {
            format!(
                "fault rule {s:?}: unknown kind {k:?} (eio, enodata, enodev, enospc, slow:DUR, corrupt, drop, \
                 misdirect:DEST, torn:BYTES, zero, flip)"
            )
        };
        let kind = match (kind.trim(), arg) {
            ("corrupt", None) => Kind::Corrupt,
            ("drop", None) => Kind::Drop,
            ("zero", None) => Kind::Zero,
            ("flip", None) => Kind::Flip,
            ("misdirect", Some(d)) => Kind::Misdirect(num(d)?),
            ("torn", Some(b)) => Kind::Torn(num(b)?),
            ("slow", Some(d)) => Kind::Slow(
                spec::units::parse_duration("DISKMETER_FAULTS", d.trim(), spec::units::TimeUnit::Millis)
                    .map_err(|e| e.to_string())?,
            ),
            (k, None) => Kind::Errno(errno_named(k).ok_or_else(|| unknown(k))?),
            (k, Some(_)) => return Err(unknown(k)),
        };
        let mut rule = Rule {
            kind,
            start: num(start)?,
            len: num(len)?.max(1),
            op: None,
            first: None,
            after: 0,
            hits: AtomicU64::new(0),
        };
        for p in parts {
            match p.trim() {
                "read" => rule.op = Some(Op::Read),
                "write" => rule.op = Some(Op::Write),
                q => {
                    if let Some(n) = q.strip_prefix("first=") {
                        rule.first = Some(n.parse().map_err(|_| format!("fault rule {s:?}: bad first={n}"))?);
                    } else if let Some(n) = q.strip_prefix("after=") {
                        rule.after = n.parse().map_err(|_| format!("fault rule {s:?}: bad after={n}"))?;
                    } else {
                        return Err(format!("fault rule {s:?}: unknown modifier {q:?}"));
                    }
                }
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
            match std::env::var(ENV) {
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
                    Kind::Errno(e) if err.is_none() && r.fire() => err = Some(std::io::Error::from(e)),
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

        /// True when the plan has a rule [`write_fault`](Self::write_fault) applies (so the
        /// engine wraps its backend in [`Faulty`](super::Faulty)).
        pub fn has_write_faults(&self) -> bool {
            self.rules.iter().any(|r| r.kind.is_write_fault() || (r.kind == Kind::Corrupt && r.op != Some(Op::Read)))
        }

        /// A write of `data` at `offset` to `fd` that a write fault (or a corrupt rule) covers:
        /// done the faulty way, synchronously, and its result as the backend would report it
        /// (the whole length: the device acknowledges what it did not do). `None`: no rule
        /// fires, the caller writes normally.
        pub fn write_fault(&self, fd: platform::target::Raw, offset: u64, data: &[u8]) -> Option<Completion> {
            let len = data.len() as u64;
            let rule = self.rules.iter().find(|r| {
                (r.kind.is_write_fault() || r.kind == Kind::Corrupt) && r.touches(Op::Write, offset, len) && r.fire()
            })?;
            let mut copy = data.to_vec();
            let (at, bytes) = match rule.kind {
                Kind::Drop => return Some(Completion::Done(data.len() as u32)),
                Kind::Misdirect(dest) => (dest, &copy[..]),
                Kind::Torn(n) => (offset, &copy[..(n.min(len) as usize)]),
                Kind::Zero => {
                    copy.fill(0);
                    (offset, &copy[..])
                }
                Kind::Flip | Kind::Corrupt => {
                    let lo = (rule.start.max(offset) - offset) as usize;
                    let hi = ((rule.start + rule.len).min(offset + len) - offset) as usize;
                    for b in &mut copy[lo..hi] {
                        *b = if rule.kind == Kind::Flip { *b ^ 1 } else { !*b };
                    }
                    (offset, &copy[..])
                }
                Kind::Errno(_) | Kind::Slow(_) => return None,
            };
            // The copy is heap memory, not aligned for O_DIRECT: write it through an aligned
            // bounce buffer of whole sectors.
            Some(match aligned_pwrite(fd, at, bytes) {
                Ok(()) => Completion::Done(data.len() as u32),
                Err(e) => Completion::Failed(crate::io::backend::code_of_error(&e)),
            })
        }
    }

    /// `pwrite` of `bytes` at `at` from a 4 KiB-aligned copy (O_DIRECT needs aligned memory;
    /// lengths and offsets of the faults' writes are whole sectors in every test).
    fn aligned_pwrite(fd: platform::target::Raw, at: u64, bytes: &[u8]) -> std::io::Result<()> {
        if bytes.is_empty() {
            return Ok(());
        }
        let layout = std::alloc::Layout::from_size_align(bytes.len(), 4096).map_err(std::io::Error::other)?;
        // SAFETY: the layout has a non-zero size; the block is freed below on every path.
        let p = unsafe { std::alloc::alloc(layout) };
        if p.is_null() {
            return Err(std::io::ErrorKind::OutOfMemory.into());
        }
        // SAFETY: p holds bytes.len() bytes; the regions do not overlap.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
        let mut done = 0usize;
        let mut result = Ok(());
        while done < bytes.len() {
            let len = u32::try_from(bytes.len() - done).unwrap_or(u32::MAX);
            // SAFETY: p + done .. p + len is inside the block, which nothing else touches.
            match unsafe { platform::rawio::write_at(fd, p.add(done), len, at + done as u64) } {
                Ok(0) => {
                    result = Err(platform::error::os_error(platform::IoErrorClass::Media));
                    break;
                }
                Ok(n) => done += n as usize,
                Err(e) => {
                    result = Err(e);
                    break;
                }
            }
        }
        // SAFETY: allocated above with this layout.
        unsafe { std::alloc::dealloc(p, layout) };
        result
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
    #[inline(always)]
    pub fn has_write_faults(&self) -> bool {
        false
    }
    #[inline(always)]
    pub fn write_fault(&self, _fd: platform::target::Raw, _offset: u64, _data: &[u8]) -> Option<Completion> {
        None
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
    pub fn result(&mut self, ok: Completion) -> Completion {
        ok
    }
}

/// A backend with the plan's write faults applied: a write a rule covers is done the
/// faulty way at once ([`Hook::write_fault`]) and its completion handed out with the
/// backend's own; everything else goes to the backend unchanged. The engine uses it only
/// when the plan has write faults, so a run without them is the plain backend.
pub struct Faulty<B> {
    inner: B,
    hook: std::sync::Arc<Hook>,
    fd: platform::target::Raw,
    done: Vec<(u32, Completion)>,
}

impl<B> Faulty<B> {
    pub fn new(inner: B, hook: std::sync::Arc<Hook>, fd: platform::target::Raw) -> Self {
        Self { inner, hook, fd, done: Vec::new() }
    }
}

impl<B: crate::io::backend::Backend> crate::io::backend::Backend for Faulty<B> {
    fn queue(&mut self, slot: u32, op: Op, offset: u64, buf: *mut u8, len: u32, buf_index: u16) -> std::io::Result<()> {
        if op == Op::Write {
            // SAFETY: buf holds `len` bytes of the worker's pool for this slot (the Backend contract).
            let data = unsafe { std::slice::from_raw_parts(buf.cast_const(), len as usize) };
            if let Some(res) = self.hook.write_fault(self.fd, offset, data) {
                self.done.push((slot, res));
                return Ok(());
            }
        }
        self.inner.queue(slot, op, offset, buf, len, buf_index)
    }

    fn submit_and_wait(&mut self, want: u32, timeout: Option<std::time::Duration>) -> std::io::Result<()> {
        if self.done.is_empty() {
            self.inner.submit_and_wait(want, timeout)
        } else {
            self.inner.poll()
        }
    }

    fn poll(&mut self) -> std::io::Result<()> {
        self.inner.poll()
    }

    fn ready(&mut self) -> bool {
        !self.done.is_empty() || self.inner.ready()
    }

    fn reap<F: FnMut(u32, Completion)>(&mut self, mut f: F) {
        for (slot, res) in self.done.drain(..) {
            f(slot, res);
        }
        self.inner.reap(&mut f)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use platform::error::Errno;
    use platform::OsCode;
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
        assert_eq!(h.before(Op::Write, 0, 8192).and_then(|e| e.raw_os_error()), Errno::EIO.code().map(OsCode::raw));
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
            [("eio", Errno::EIO), ("enodata", Errno::ENODATA), ("enodev", Errno::ENODEV), ("enospc", Errno::ENOSPC)]
        {
            let h = Hook::parse(&format!("{name}@0+512")).unwrap();
            let code = errno.code().unwrap();
            assert_eq!(h.before(Op::Read, 0, 512).and_then(|e| e.raw_os_error()), Some(code.raw()), "{name}");
            assert_eq!(NullFault::parse(&format!("{name}@7")), Some(NullFault { after_ops: 7, code }), "{name}");
        }
    }

    #[test]
    fn null_fault_parses_kind_at_count() {
        let (eio, enospc) = (Errno::EIO.code().unwrap(), Errno::ENOSPC.code().unwrap());
        assert_eq!(NullFault::parse("eio@1000"), Some(NullFault { after_ops: 1000, code: eio }));
        assert_eq!(NullFault::parse("enospc@0"), Some(NullFault { after_ops: 0, code: enospc }));
        // Malformed values are ignored (None), as the variable always was.
        for bad in ["", "eio", "eio@", "eio@x", "eio@-1", "boom@5", "@5", "eio@5+1", "EIO@5"] {
            assert_eq!(NullFault::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn null_counter_fails_every_io_after_the_count() {
        use Completion::{Done, Failed};
        let (eio, enospc) = (Errno::EIO.code().unwrap(), Errno::ENOSPC.code().unwrap());
        let mut c = NullCounter::new(Some(NullFault { after_ops: 3, code: enospc }));
        let got: Vec<Completion> = (0..6).map(|_| c.result(Done(4096))).collect();
        assert_eq!(got, [Done(4096), Done(4096), Done(4096), Failed(enospc), Failed(enospc), Failed(enospc)]);
        let mut none = NullCounter::new(None);
        assert!((0..100).all(|_| none.result(Done(512)) == Done(512)));
        let mut at_once = NullCounter::new(Some(NullFault { after_ops: 0, code: eio }));
        assert_eq!(at_once.result(Done(0)), Failed(eio), "an fsync fails too");
    }

    #[test]
    fn write_faults_do_what_they_say() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t");
        let f = std::fs::File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        f.set_len(64 << 10).unwrap();
        let fd = platform::target::raw(&f);
        let data = vec![0xabu8; 4096];
        let h = Hook::parse(
            "drop@0+4096;misdirect@8192+4096:16384;torn@24576+4096:1024;zero@32768+4096;flip@40960+1;\
             drop@49152+4096,after=1",
        )
        .unwrap();
        assert!(h.has_write_faults());
        let full = Some(Completion::Done(4096));
        for at in [0u64, 8192, 24576, 32768, 40960] {
            assert_eq!(h.write_fault(fd, at, &data), full, "acknowledged in full at {at}");
        }
        assert_eq!(h.write_fault(fd, 4096 * 12, &data), None, "after=1: the first write passes");
        assert_eq!(h.write_fault(fd, 4096 * 12, &data), full, "and the second is dropped");
        assert_eq!(h.write_fault(fd, 57344, &data), None, "no rule covers it");
        let img = std::fs::read(&path).unwrap();
        assert!(img[..4096].iter().all(|&b| b == 0), "dropped");
        assert!(
            img[8192..12288].iter().all(|&b| b == 0) && img[16384..20480].iter().all(|&b| b == 0xab),
            "misdirected"
        );
        assert!(img[24576..25600].iter().all(|&b| b == 0xab) && img[25600..28672].iter().all(|&b| b == 0), "torn");
        assert!(img[32768..36864].iter().all(|&b| b == 0), "zeroed");
        assert_eq!(img[40960], 0xaa, "one bit flipped");
        assert!(img[40961..45056].iter().all(|&b| b == 0xab));
        for bad in ["misdirect@0+1", "torn@0+1", "drop@0+1:5", "drop@0+1,after=x"] {
            assert!(Hook::parse(bad).is_err(), "{bad}");
        }
        assert!(!Hook::parse("eio@0+1;corrupt@0+1,read").unwrap().has_write_faults());
    }

    #[test]
    fn range_rules_ignore_fsync() {
        // An fsync has no range: no rule touches it, not even one for every direction.
        let h = Hook::parse("eio@0+1G").unwrap();
        assert!(h.before(Op::Fsync, 0, 0).is_none());
    }
}
