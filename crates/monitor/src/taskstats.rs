//! The kernel's TASKSTATS generic-netlink family: per-process block-I/O and swap-in delay
//! (iotop's IO% and SWAPIN), hand-written over the platform's generic-netlink socket
//! (`platform::netlink`).
//!
//! Protocol (include/uapi/linux/genetlink.h, taskstats.h): resolve the family id with
//! `CTRL_CMD_GETFAMILY` ("TASKSTATS"), then send `TASKSTATS_CMD_GET` with
//! `TASKSTATS_CMD_ATTR_TGID` (the whole thread group) or `..._ATTR_PID` (one thread). The reply
//! carries `TASKSTATS_TYPE_AGGR_TGID` (or `_AGGR_PID`), a nest of the id and
//! `TASKSTATS_TYPE_STATS`, a `struct taskstats` read here by explicit byte offsets.
//!
//! The GET command needs CAP_NET_ADMIN (EPERM otherwise). Delay fields only move while
//! `kernel.task_delayacct=1` (off by default since Linux 5.14). A TGID reply fills only the
//! delay fields (and context switches): per-thread-group bytes come from /proc/PID/io; a PID
//! (thread) reply also carries `ac_pid`, `ac_comm` and the storage I/O bytes of that thread.
//!
//! Linux only: the parsers build everywhere (they read bytes), but the client ([`Taskstats`])
//! gets a socket only on Linux; elsewhere [`Taskstats::open`] fails with
//! [`TsError::Unsupported`] and `top` shows IO% as unavailable.

use platform::netlink;
use std::borrow::Cow;
use std::fmt;
use std::time::Duration;

const NLMSG_HDRLEN: usize = 16;
const GENL_HDRLEN: usize = 4;
const NLA_HDRLEN: usize = 4;
const NLMSG_ERROR: u16 = 2;
const NLMSG_DONE: u16 = 3;
const NLM_F_REQUEST: u16 = 1;
const NLA_TYPE_MASK: u16 = 0x3fff;

const GENL_ID_CTRL: u16 = 0x10;
const CTRL_CMD_GETFAMILY: u8 = 3;
const CTRL_ATTR_FAMILY_ID: u16 = 1;
const CTRL_ATTR_FAMILY_NAME: u16 = 2;

const TASKSTATS_GENL_NAME: &[u8] = b"TASKSTATS\0";
const TASKSTATS_GENL_VERSION: u8 = 1;
const TASKSTATS_CMD_GET: u8 = 1;
const TASKSTATS_CMD_ATTR_PID: u16 = 1;
const TASKSTATS_CMD_ATTR_TGID: u16 = 2;
const TASKSTATS_TYPE_PID: u16 = 1;
const TASKSTATS_TYPE_TGID: u16 = 2;
const TASKSTATS_TYPE_STATS: u16 = 3;
const TASKSTATS_TYPE_AGGR_PID: u16 = 4;
const TASKSTATS_TYPE_AGGR_TGID: u16 = 5;

/// Byte offsets in `struct taskstats` for version ≥ 2 (every `__u64` after the header is
/// `aligned(8)` in the header, so the offsets are the same on 32- and 64-bit ABIs).
mod off {
    pub const VERSION: usize = 0;
    pub const BLKIO_COUNT: usize = 32;
    pub const BLKIO_DELAY_TOTAL: usize = 40;
    pub const SWAPIN_COUNT: usize = 48;
    pub const SWAPIN_DELAY_TOTAL: usize = 56;
    /// End of the delay block of version 1 fields (`cpu_run_virtual_total`).
    pub const DELAY_END: usize = 80;
    pub const AC_COMM: usize = 80;
    pub const TS_COMM_LEN: usize = 32;
    pub const AC_PID: usize = 128;
    pub const READ_BYTES: usize = 248;
    pub const WRITE_BYTES: usize = 256;
    pub const CANCELLED_WRITE_BYTES: usize = 264;
    /// Version 1 (Linux 2.6.18): `__u16 version; __u16 padding[3];` then the delay block.
    pub const V1_BLKIO_COUNT: usize = 24;
    pub const V1_BLKIO_DELAY_TOTAL: usize = 32;
    pub const V1_SWAPIN_COUNT: usize = 40;
    pub const V1_SWAPIN_DELAY_TOTAL: usize = 48;
    pub const V1_DELAY_END: usize = 72;
}

/// The fields of one `struct taskstats` that diskmeter uses. Fields the kernel's struct is too
/// short (too old) to hold are `None`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TaskStats {
    pub version: u16,
    /// Number of synchronous block-I/O waits recorded.
    pub blkio_count: u64,
    /// Total time waited for synchronous block I/O, ns (only moves with delay accounting on).
    pub blkio_delay_total: u64,
    pub swapin_count: u64,
    /// Total time waited for swap-in page faults, ns.
    pub swapin_delay_total: u64,
    /// `ac_pid`: the thread's id (0 in a TGID aggregate).
    pub ac_pid: Option<u32>,
    ac_comm: Option<[u8; off::TS_COMM_LEN]>,
    pub read_bytes: Option<u64>,
    pub write_bytes: Option<u64>,
    pub cancelled_write_bytes: Option<u64>,
}

impl TaskStats {
    /// `ac_comm` up to its NUL (empty in a TGID aggregate).
    pub fn comm(&self) -> Option<Cow<'_, str>> {
        let c = self.ac_comm.as_ref()?;
        let n = c.iter().position(|b| *b == 0).unwrap_or(c.len());
        Some(String::from_utf8_lossy(&c[..n]))
    }
}

/// Why a query gave no figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TsError {
    /// EPERM/EACCES: TASKSTATS_CMD_GET needs CAP_NET_ADMIN.
    Permission,
    /// ESRCH: the process is gone.
    NoProcess,
    /// The kernel has no TASKSTATS family (CONFIG_TASKSTATS off), or no generic netlink.
    NoFamily,
    /// Any other errno from the socket or the kernel.
    Os(i32),
    /// A reply that does not parse.
    Malformed(&'static str),
    /// This OS has no taskstats (it is Linux's).
    Unsupported,
}

impl fmt::Display for TsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TsError::Permission => f.write_str("taskstats needs root or CAP_NET_ADMIN"),
            TsError::NoProcess => f.write_str("no such process"),
            TsError::NoFamily => f.write_str("kernel without taskstats (CONFIG_TASKSTATS)"),
            TsError::Os(e) => write!(f, "taskstats: {}", std::io::Error::from_raw_os_error(*e)),
            TsError::Malformed(what) => write!(f, "taskstats: malformed reply ({what})"),
            TsError::Unsupported => f.write_str("taskstats is Linux's; it is not available on this OS"),
        }
    }
}

impl std::error::Error for TsError {}

/// The Linux errno values a reply carries (asm-generic/errno-base.h, the same on every
/// architecture): named here so the parsers build on every OS.
mod errno {
    pub const EPERM: i32 = 1;
    pub const EINTR: i32 = 4;
    pub const ENOENT: i32 = 2;
    pub const ESRCH: i32 = 3;
    pub const EACCES: i32 = 13;
}

fn errno_error(e: i32) -> TsError {
    match e {
        errno::EPERM | errno::EACCES => TsError::Permission,
        errno::ESRCH => TsError::NoProcess,
        errno::ENOENT => TsError::NoFamily,
        e => TsError::Os(e),
    }
}

fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    let s = b.get(at..at.checked_add(2)?)?;
    Some(u16::from_ne_bytes([s[0], s[1]]))
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at.checked_add(4)?)?;
    Some(u32::from_ne_bytes([s[0], s[1], s[2], s[3]]))
}

fn u64_at(b: &[u8], at: usize) -> Option<u64> {
    let s = b.get(at..at.checked_add(8)?)?;
    let mut a = [0u8; 8];
    a.copy_from_slice(s);
    Some(u64::from_ne_bytes(a))
}

const fn align4(n: usize) -> usize {
    (n + 3) & !3
}

/// One netlink message: header fields and payload.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NlMsg<'a> {
    pub kind: u16,
    pub flags: u16,
    pub seq: u32,
    pub payload: &'a [u8],
}

/// The messages of one datagram; stops at the first header that does not fit.
pub fn messages(buf: &[u8]) -> impl Iterator<Item = NlMsg<'_>> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        let len = u32_at(rest, 0)? as usize;
        if len < NLMSG_HDRLEN || len > rest.len() {
            return None;
        }
        let m = NlMsg {
            kind: u16_at(rest, 4)?,
            flags: u16_at(rest, 6)?,
            seq: u32_at(rest, 8)?,
            payload: rest.get(NLMSG_HDRLEN..len)?,
        };
        rest = rest.get(align4(len).min(rest.len())..).unwrap_or(&[]);
        Some(m)
    })
}

/// The attributes in `buf` as (type without the nested/byte-order flags, payload); stops at
/// the first attribute that does not fit.
pub fn attributes(buf: &[u8]) -> impl Iterator<Item = (u16, &[u8])> {
    let mut rest = buf;
    std::iter::from_fn(move || {
        let len = u16_at(rest, 0)? as usize;
        if len < NLA_HDRLEN || len > rest.len() {
            return None;
        }
        let kind = u16_at(rest, 2)? & NLA_TYPE_MASK;
        let payload = rest.get(NLA_HDRLEN..len)?;
        rest = rest.get(align4(len).min(rest.len())..).unwrap_or(&[]);
        Some((kind, payload))
    })
}

/// Parse a `struct taskstats` payload of any length: the version decides the layout, the
/// length decides which fields are present; nothing is read past the slice.
pub fn parse_taskstats(b: &[u8]) -> Result<TaskStats, TsError> {
    let version = u16_at(b, off::VERSION).ok_or(TsError::Malformed("taskstats shorter than its version"))?;
    let field = |at: usize| u64_at(b, at);
    match version {
        0 => Err(TsError::Malformed("taskstats version 0")),
        1 => {
            if b.len() < off::V1_DELAY_END {
                return Err(TsError::Malformed("taskstats v1 shorter than its delay fields"));
            }
            Ok(TaskStats {
                version,
                blkio_count: field(off::V1_BLKIO_COUNT).unwrap_or(0),
                blkio_delay_total: field(off::V1_BLKIO_DELAY_TOTAL).unwrap_or(0),
                swapin_count: field(off::V1_SWAPIN_COUNT).unwrap_or(0),
                swapin_delay_total: field(off::V1_SWAPIN_DELAY_TOTAL).unwrap_or(0),
                ac_pid: None,
                ac_comm: None,
                read_bytes: None,
                write_bytes: None,
                cancelled_write_bytes: None,
            })
        }
        _ => {
            if b.len() < off::DELAY_END {
                return Err(TsError::Malformed("taskstats shorter than its delay fields"));
            }
            let ac_comm = b.get(off::AC_COMM..off::AC_COMM + off::TS_COMM_LEN).map(|s| {
                let mut c = [0u8; off::TS_COMM_LEN];
                c.copy_from_slice(s);
                c
            });
            Ok(TaskStats {
                version,
                blkio_count: field(off::BLKIO_COUNT).unwrap_or(0),
                blkio_delay_total: field(off::BLKIO_DELAY_TOTAL).unwrap_or(0),
                swapin_count: field(off::SWAPIN_COUNT).unwrap_or(0),
                swapin_delay_total: field(off::SWAPIN_DELAY_TOTAL).unwrap_or(0),
                ac_pid: u32_at(b, off::AC_PID),
                ac_comm,
                read_bytes: field(off::READ_BYTES),
                write_bytes: field(off::WRITE_BYTES),
                cancelled_write_bytes: field(off::CANCELLED_WRITE_BYTES),
            })
        }
    }
}

/// The error of an `NLMSG_ERROR` payload: `None` for an acknowledgement (error 0).
fn nlmsg_error(payload: &[u8]) -> Result<Option<TsError>, TsError> {
    let e = u32_at(payload, 0).ok_or(TsError::Malformed("short NLMSG_ERROR"))? as i32;
    Ok(if e == 0 { None } else { Some(errno_error(e.checked_neg().unwrap_or(i32::MAX))) })
}

/// Outcome of reading one datagram while waiting for the reply to `seq`.
enum Step<T> {
    Done(Result<T, TsError>),
    /// Nothing for `seq` in this datagram (a stale reply): read again.
    Again,
}

fn scan<T>(buf: &[u8], seq: u32, want: u16, mut f: impl FnMut(&[u8]) -> Result<T, TsError>) -> Step<T> {
    for m in messages(buf) {
        if m.seq != seq {
            continue;
        }
        match m.kind {
            NLMSG_ERROR => match nlmsg_error(m.payload) {
                Ok(Some(e)) => return Step::Done(Err(e)),
                Ok(None) => continue,
                Err(e) => return Step::Done(Err(e)),
            },
            NLMSG_DONE => return Step::Done(Err(TsError::Malformed("empty reply"))),
            k if k == want => {
                let Some(attrs) = m.payload.get(GENL_HDRLEN..) else {
                    return Step::Done(Err(TsError::Malformed("reply shorter than its genetlink header")));
                };
                return Step::Done(f(attrs));
            }
            _ => continue,
        }
    }
    Step::Again
}

/// The family id in a `CTRL_CMD_GETFAMILY` reply datagram (message type `GENL_ID_CTRL`).
pub fn parse_family_reply(buf: &[u8], seq: u32) -> Option<Result<u16, TsError>> {
    match scan(buf, seq, GENL_ID_CTRL, |attrs| {
        attributes(attrs)
            .find(|(k, _)| *k == CTRL_ATTR_FAMILY_ID)
            .and_then(|(_, p)| u16_at(p, 0))
            .ok_or(TsError::Malformed("no family id"))
    }) {
        Step::Done(r) => Some(r),
        Step::Again => None,
    }
}

/// The stats in a `TASKSTATS_CMD_GET` reply datagram (message type `family`): the first
/// `AGGR_TGID`/`AGGR_PID` nest holding `TASKSTATS_TYPE_STATS`, with the id it names.
pub fn parse_get_reply(buf: &[u8], family: u16, seq: u32) -> Option<Result<(u32, TaskStats), TsError>> {
    match scan(buf, seq, family, parse_aggregate) {
        Step::Done(r) => Some(r),
        Step::Again => None,
    }
}

/// Walk the top-level attributes of a GET reply down to the stats.
pub fn parse_aggregate(attrs: &[u8]) -> Result<(u32, TaskStats), TsError> {
    for (k, nest) in attributes(attrs) {
        if k != TASKSTATS_TYPE_AGGR_TGID && k != TASKSTATS_TYPE_AGGR_PID {
            continue;
        }
        let mut id = None;
        let mut stats = None;
        for (k, p) in attributes(nest) {
            match k {
                TASKSTATS_TYPE_PID | TASKSTATS_TYPE_TGID => id = u32_at(p, 0),
                TASKSTATS_TYPE_STATS => stats = Some(parse_taskstats(p)?),
                _ => {}
            }
        }
        return match (id, stats) {
            (Some(id), Some(s)) => Ok((id, s)),
            (_, None) => Err(TsError::Malformed("aggregate without stats")),
            (None, _) => Err(TsError::Malformed("aggregate without an id")),
        };
    }
    Err(TsError::Malformed("no aggregate attribute"))
}

/// Build a request: netlink header, genetlink header, one attribute. Returns its length.
fn request(out: &mut [u8; 64], kind: u16, seq: u32, cmd: u8, version: u8, attr: u16, value: &[u8]) -> usize {
    let attr_len = NLA_HDRLEN + value.len();
    let len = (NLMSG_HDRLEN + GENL_HDRLEN + align4(attr_len)).min(out.len());
    out.fill(0);
    out[0..4].copy_from_slice(&(len as u32).to_ne_bytes());
    out[4..6].copy_from_slice(&kind.to_ne_bytes());
    out[6..8].copy_from_slice(&NLM_F_REQUEST.to_ne_bytes());
    out[8..12].copy_from_slice(&seq.to_ne_bytes());
    // nlmsg_pid 0: the kernel fills in our port id.
    out[16] = cmd;
    out[17] = version;
    let a = NLMSG_HDRLEN + GENL_HDRLEN;
    out[a..a + 2].copy_from_slice(&(attr_len as u16).to_ne_bytes());
    out[a + 2..a + 4].copy_from_slice(&attr.to_ne_bytes());
    let v = a + NLA_HDRLEN;
    let n = value.len().min(len.saturating_sub(v));
    out[v..v + n].copy_from_slice(&value[..n]);
    len
}

/// Room for any reply (a taskstats reply is about 500 bytes; the controller's family reply
/// lists the ops and groups).
const RECV_BUF: usize = 16 * 1024;

/// The kernel answers within sendmsg; the receive timeout only guards against a lost reply.
const RECV_TIMEOUT: Duration = Duration::from_secs(1);

/// A TASKSTATS client: one netlink socket, reused for every query; one request buffer on the
/// stack and one reply buffer allocated once.
pub struct Taskstats {
    socket: netlink::Socket,
    family: u16,
    seq: u32,
    buf: Vec<u8>,
}

impl fmt::Debug for Taskstats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Taskstats").field("socket", &self.socket).field("family", &self.family).finish()
    }
}

/// A socket's error as a query's (the errno of a refused or failed send or receive).
fn socket_error(e: netlink::Error) -> TsError {
    match e {
        netlink::Error::Unsupported => TsError::Unsupported,
        netlink::Error::NoFamily => TsError::NoFamily,
        netlink::Error::Interrupted => TsError::Os(errno::EINTR),
        netlink::Error::Os(e) => errno_error(e),
    }
}

impl Taskstats {
    /// Open the socket and resolve the family. `NoFamily` when the kernel has no taskstats;
    /// `Unsupported` off Linux. Opening needs no privilege; queries do (see
    /// [`TsError::Permission`]).
    pub fn open() -> Result<Taskstats, TsError> {
        let socket = netlink::Socket::open(RECV_TIMEOUT).map_err(|e| match e {
            // The socket's own errors as they are (not a query's refusal).
            netlink::Error::Os(e) => TsError::Os(e),
            e => socket_error(e),
        })?;
        let mut ts = Taskstats { socket, family: 0, seq: 0, buf: vec![0u8; RECV_BUF] };
        let mut req = [0u8; 64];
        let seq = ts.next_seq();
        let n = request(&mut req, GENL_ID_CTRL, seq, CTRL_CMD_GETFAMILY, 1, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME);
        ts.send(&req[..n])?;
        ts.family = ts.receive(|buf| parse_family_reply(buf, seq))?;
        Ok(ts)
    }

    /// The generic-netlink id of the TASKSTATS family.
    pub fn family(&self) -> u16 {
        self.family
    }

    fn next_seq(&mut self) -> u32 {
        self.seq = self.seq.wrapping_add(1);
        self.seq
    }

    fn send(&self, req: &[u8]) -> Result<(), TsError> {
        self.socket.send(req).map_err(socket_error)
    }

    /// Read datagrams from the kernel until `parse` finds the answer (at most a few: stale
    /// replies to an earlier, timed-out request are skipped).
    fn receive<T>(&mut self, mut parse: impl FnMut(&[u8]) -> Option<Result<T, TsError>>) -> Result<T, TsError> {
        for _ in 0..8 {
            let (n, from_kernel) = match self.socket.recv(&mut self.buf) {
                Ok(r) => r,
                Err(netlink::Error::Interrupted) => continue,
                Err(e) => return Err(socket_error(e)),
            };
            // Only the kernel (port 0) answers; anything else is not ours.
            if !from_kernel {
                continue;
            }
            if n > self.buf.len() {
                return Err(TsError::Malformed("reply larger than the receive buffer"));
            }
            if let Some(r) = parse(&self.buf[..n]) {
                return r;
            }
        }
        Err(TsError::Malformed("no reply to the request"))
    }

    fn get(&mut self, attr: u16, id: i32) -> Result<TaskStats, TsError> {
        let Ok(id) = u32::try_from(id) else { return Err(TsError::NoProcess) };
        let mut req = [0u8; 64];
        let seq = self.next_seq();
        let n = request(&mut req, self.family, seq, TASKSTATS_CMD_GET, TASKSTATS_GENL_VERSION, attr, &id.to_ne_bytes());
        self.send(&req[..n])?;
        let family = self.family;
        let (got, stats) = self.receive(|buf| parse_get_reply(buf, family, seq))?;
        if got != id {
            return Err(TsError::Malformed("reply for another id"));
        }
        Ok(stats)
    }

    /// Delay totals of a whole process (thread group, live threads plus exited ones).
    pub fn tgid(&mut self, tgid: i32) -> Result<TaskStats, TsError> {
        self.get(TASKSTATS_CMD_ATTR_TGID, tgid)
    }

    /// Everything about one thread (`ac_pid`, `ac_comm`, I/O bytes and delays).
    pub fn pid(&mut self, tid: i32) -> Result<TaskStats, TsError> {
        self.get(TASKSTATS_CMD_ATTR_PID, tid)
    }
}

/// `kernel.task_delayacct`: `Some(true/false)`, or `None` when the sysctl is absent (kernels
/// before 5.14, where delay accounting is on unless booted with `nodelayacct`, or kernels
/// built without it).
pub fn delayacct_enabled() -> Option<bool> {
    parse_delayacct(&platform::host::task_delayacct_text()?)
}

pub fn parse_delayacct(text: &str) -> Option<bool> {
    match text.trim() {
        "0" => Some(false),
        "1" => Some(true),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    /// Linux's EINVAL (asm-generic/errno-base.h).
    const EINVAL: i32 = 22;

    /// A struct taskstats of `len` bytes (version `v`) with recognisable values.
    pub(crate) fn stats_bytes(v: u16, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        let put = |b: &mut Vec<u8>, at: usize, x: &[u8]| {
            if at + x.len() <= b.len() {
                b[at..at + x.len()].copy_from_slice(x);
            }
        };
        put(&mut b, 0, &v.to_ne_bytes());
        if v == 1 {
            put(&mut b, off::V1_BLKIO_COUNT, &7u64.to_ne_bytes());
            put(&mut b, off::V1_BLKIO_DELAY_TOTAL, &1_500_000u64.to_ne_bytes());
            put(&mut b, off::V1_SWAPIN_COUNT, &1u64.to_ne_bytes());
            put(&mut b, off::V1_SWAPIN_DELAY_TOTAL, &2_000u64.to_ne_bytes());
            return b;
        }
        put(&mut b, 4, &0u32.to_ne_bytes()); // ac_exitcode
        put(&mut b, 16, &11u64.to_ne_bytes()); // cpu_count
        put(&mut b, 24, &12u64.to_ne_bytes()); // cpu_delay_total
        put(&mut b, off::BLKIO_COUNT, &7u64.to_ne_bytes());
        put(&mut b, off::BLKIO_DELAY_TOTAL, &1_500_000u64.to_ne_bytes());
        put(&mut b, off::SWAPIN_COUNT, &1u64.to_ne_bytes());
        put(&mut b, off::SWAPIN_DELAY_TOTAL, &2_000u64.to_ne_bytes());
        put(&mut b, off::AC_COMM, b"dd\0");
        put(&mut b, 112, &[0u8]); // ac_sched
        put(&mut b, 120, &1000u32.to_ne_bytes()); // ac_uid
        put(&mut b, 124, &1000u32.to_ne_bytes()); // ac_gid
        put(&mut b, off::AC_PID, &4242u32.to_ne_bytes());
        put(&mut b, 132, &1u32.to_ne_bytes()); // ac_ppid
        put(&mut b, 144, &99u64.to_ne_bytes()); // ac_etime
        put(&mut b, 240, &5u64.to_ne_bytes()); // write_syscalls
        put(&mut b, off::READ_BYTES, &4096u64.to_ne_bytes());
        put(&mut b, off::WRITE_BYTES, &(2u64 << 30).to_ne_bytes());
        put(&mut b, off::CANCELLED_WRITE_BYTES, &8192u64.to_ne_bytes());
        put(&mut b, 272, &3u64.to_ne_bytes()); // nvcsw
        b
    }

    fn nla(kind: u16, payload: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((NLA_HDRLEN + payload.len()) as u16).to_ne_bytes());
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(payload);
        while v.len() % 4 != 0 {
            v.push(0);
        }
        v
    }

    fn nlmsg(kind: u16, seq: u32, cmd: u8, attrs: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        let len = NLMSG_HDRLEN + GENL_HDRLEN + attrs.len();
        v.extend_from_slice(&(len as u32).to_ne_bytes());
        v.extend_from_slice(&kind.to_ne_bytes());
        v.extend_from_slice(&0u16.to_ne_bytes());
        v.extend_from_slice(&seq.to_ne_bytes());
        v.extend_from_slice(&77u32.to_ne_bytes());
        v.extend_from_slice(&[cmd, 1, 0, 0]);
        v.extend_from_slice(attrs);
        v
    }

    fn error_msg(seq: u32, errno: i32) -> Vec<u8> {
        let mut v = Vec::new();
        v.extend_from_slice(&((NLMSG_HDRLEN + 4 + NLMSG_HDRLEN) as u32).to_ne_bytes());
        v.extend_from_slice(&NLMSG_ERROR.to_ne_bytes());
        v.extend_from_slice(&0u16.to_ne_bytes());
        v.extend_from_slice(&seq.to_ne_bytes());
        v.extend_from_slice(&0u32.to_ne_bytes());
        v.extend_from_slice(&(-errno).to_ne_bytes());
        v.extend_from_slice(&[0u8; NLMSG_HDRLEN]);
        v
    }

    /// A TGID reply as the kernel builds it (with the TASKSTATS_TYPE_NULL pad some 64-bit
    /// architectures put first, and the nested flag on the aggregate).
    fn tgid_reply(family: u16, seq: u32, tgid: u32, stats: &[u8]) -> Vec<u8> {
        let mut nest = nla(TASKSTATS_TYPE_TGID, &tgid.to_ne_bytes());
        nest.extend(nla(TASKSTATS_TYPE_STATS, stats));
        let mut attrs = nla(6, &[]);
        attrs.extend(nla(TASKSTATS_TYPE_AGGR_TGID | 0x8000, &nest));
        nlmsg(family, seq, 2, &attrs)
    }

    #[test]
    fn full_v14_struct() {
        // Version 14 (Linux 6.x) is 432 bytes; anything after cancelled_write_bytes is ignored.
        let s = parse_taskstats(&stats_bytes(14, 432)).unwrap();
        assert_eq!(s.version, 14);
        assert_eq!((s.blkio_count, s.blkio_delay_total), (7, 1_500_000));
        assert_eq!((s.swapin_count, s.swapin_delay_total), (1, 2_000));
        assert_eq!(s.ac_pid, Some(4242));
        assert_eq!(s.comm().as_deref(), Some("dd"));
        assert_eq!(s.read_bytes, Some(4096));
        assert_eq!(s.write_bytes, Some(2 << 30));
        assert_eq!(s.cancelled_write_bytes, Some(8192));
        // A longer struct from a future kernel parses the same.
        assert_eq!(parse_taskstats(&stats_bytes(17, 1000)).unwrap().write_bytes, Some(2 << 30));
    }

    #[test]
    fn short_and_old_structs() {
        // Cut after the basic accounting fields (as before the I/O accounting block).
        let s = parse_taskstats(&stats_bytes(2, 248)).unwrap();
        assert_eq!(s.blkio_delay_total, 1_500_000);
        assert_eq!(s.ac_pid, Some(4242));
        assert_eq!((s.read_bytes, s.write_bytes, s.cancelled_write_bytes), (None, None, None));
        // Cut inside write_bytes.
        let s = parse_taskstats(&stats_bytes(3, 260)).unwrap();
        assert_eq!((s.read_bytes, s.write_bytes), (Some(4096), None));
        // Only the delay block.
        let s = parse_taskstats(&stats_bytes(2, 80)).unwrap();
        assert_eq!((s.ac_pid, s.comm()), (None, None));
        // Version 1: a different header, delay fields only.
        let s = parse_taskstats(&stats_bytes(1, 72)).unwrap();
        assert_eq!((s.version, s.blkio_delay_total, s.swapin_delay_total), (1, 1_500_000, 2_000));
        assert_eq!(s.read_bytes, None);
        // Too short to hold the delays, version 0, empty.
        assert!(matches!(parse_taskstats(&stats_bytes(14, 79)), Err(TsError::Malformed(_))));
        assert!(matches!(parse_taskstats(&stats_bytes(1, 71)), Err(TsError::Malformed(_))));
        assert!(matches!(parse_taskstats(&stats_bytes(0, 432)), Err(TsError::Malformed(_))));
        assert!(matches!(parse_taskstats(&[1]), Err(TsError::Malformed(_))));
    }

    #[test]
    fn nested_attribute_walking() {
        let stats = stats_bytes(14, 432);
        let reply = tgid_reply(27, 5, 4242, &stats);
        let (id, s) = parse_get_reply(&reply, 27, 5).unwrap().unwrap();
        assert_eq!(id, 4242);
        assert_eq!(s.blkio_delay_total, 1_500_000);
        // Another sequence number: not our reply; another message type: skipped.
        assert!(parse_get_reply(&reply, 27, 6).is_none());
        assert!(parse_get_reply(&reply, 28, 5).is_none());
        // A stale reply followed by ours in one datagram.
        let mut two = tgid_reply(27, 4, 1, &stats);
        two.extend(tgid_reply(27, 5, 4242, &stats));
        assert_eq!(parse_get_reply(&two, 27, 5).unwrap().unwrap().0, 4242);
        // Errors.
        assert_eq!(parse_get_reply(&error_msg(5, errno::EPERM), 27, 5), Some(Err(TsError::Permission)));
        assert_eq!(parse_get_reply(&error_msg(5, errno::ESRCH), 27, 5), Some(Err(TsError::NoProcess)));
        assert_eq!(parse_get_reply(&error_msg(5, EINVAL), 27, 5), Some(Err(TsError::Os(EINVAL))));
        // Family reply: name, id, then other attributes.
        let mut attrs = nla(CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME);
        attrs.extend(nla(CTRL_ATTR_FAMILY_ID, &27u16.to_ne_bytes()));
        attrs.extend(nla(3, &1u32.to_ne_bytes()));
        assert_eq!(parse_family_reply(&nlmsg(GENL_ID_CTRL, 1, 1, &attrs), 1), Some(Ok(27)));
        assert_eq!(parse_family_reply(&error_msg(1, errno::ENOENT), 1), Some(Err(TsError::NoFamily)));
    }

    #[test]
    fn truncated_attributes() {
        let stats = stats_bytes(14, 432);
        let reply = tgid_reply(27, 5, 4242, &stats);
        // Every truncation of the datagram is refused or ignored, never read past.
        for cut in 0..reply.len() {
            let r = parse_get_reply(&reply[..cut], 27, 5);
            assert!(!matches!(r, Some(Ok(_))), "cut at {cut} parsed: {r:?}");
        }
        // A nest whose STATS attribute claims more bytes than the nest holds.
        let mut nest = nla(TASKSTATS_TYPE_TGID, &1u32.to_ne_bytes());
        let mut bad = nla(TASKSTATS_TYPE_STATS, &stats[..100]);
        bad[0..2].copy_from_slice(&600u16.to_ne_bytes());
        nest.extend(bad);
        let attrs = nla(TASKSTATS_TYPE_AGGR_TGID, &nest);
        assert_eq!(parse_aggregate(&attrs), Err(TsError::Malformed("aggregate without stats")));
        // An attribute length below its header.
        assert!(attributes(&[2, 0, 1, 0, 9, 9, 9, 9]).next().is_none());
        // A message length that overruns the datagram.
        let mut m = tgid_reply(27, 5, 1, &stats);
        m[0..4].copy_from_slice(&10_000u32.to_ne_bytes());
        assert!(messages(&m).next().is_none());
        // Stats too short for the delay fields inside a well-formed nest.
        let r = parse_get_reply(&tgid_reply(27, 5, 1, &stats[..40]), 27, 5);
        assert!(matches!(r, Some(Err(TsError::Malformed(_)))));
    }

    #[test]
    fn request_layout() {
        let mut req = [0u8; 64];
        let n = request(&mut req, 27, 9, TASKSTATS_CMD_GET, 1, TASKSTATS_CMD_ATTR_TGID, &4242u32.to_ne_bytes());
        assert_eq!(n, 28);
        let m = messages(&req[..n]).next().unwrap();
        assert_eq!((m.kind, m.flags, m.seq), (27, NLM_F_REQUEST, 9));
        assert_eq!(&m.payload[..2], &[TASKSTATS_CMD_GET, 1]);
        let (k, p) = attributes(&m.payload[GENL_HDRLEN..]).next().unwrap();
        assert_eq!((k, u32_at(p, 0)), (TASKSTATS_CMD_ATTR_TGID, Some(4242)));
        let n = request(&mut req, GENL_ID_CTRL, 1, CTRL_CMD_GETFAMILY, 1, CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME);
        assert_eq!(n, 16 + 4 + 16);
        let m = messages(&req[..n]).next().unwrap();
        let (k, p) = attributes(&m.payload[GENL_HDRLEN..]).next().unwrap();
        assert_eq!((k, p), (CTRL_ATTR_FAMILY_NAME, TASKSTATS_GENL_NAME));
    }

    #[test]
    fn delayacct_sysctl_text() {
        assert_eq!(parse_delayacct("0\n"), Some(false));
        assert_eq!(parse_delayacct("1\n"), Some(true));
        assert_eq!(parse_delayacct(""), None);
    }
}
