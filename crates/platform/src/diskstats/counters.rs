//! A device's cumulative counters, and how Windows's `DISK_PERFORMANCE` becomes them: shared by
//! the facade ([`super`]) and Windows's reader (`windows::diskperf`), which never reaches back
//! into the facade that calls it.

/// Cumulative counters of one device (one line without its first three columns). Serialisable:
/// `top --record` keeps them in its recordings.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Counters {
    pub rd_ios: u64,
    pub rd_merges: u64,
    pub rd_sectors: u64,
    pub rd_ticks: u64,
    pub wr_ios: u64,
    pub wr_merges: u64,
    pub wr_sectors: u64,
    pub wr_ticks: u64,
    /// I/Os in flight (column 12, the only non-cumulative field).
    pub inflight: u64,
    /// ms during which at least one request was in flight (column 13).
    pub io_ticks: u64,
    /// Weighted ms: the sum over requests of their time in flight (column 14).
    pub time_in_queue: u64,
    pub dc_ios: u64,
    pub dc_merges: u64,
    pub dc_sectors: u64,
    pub dc_ticks: u64,
    pub fl_ios: u64,
    pub fl_ticks: u64,
    /// 14, 18 or 20: which of the optional groups (discard, flush) the kernel reported.
    pub columns: u8,
}

/// One answer of Windows's `IOCTL_DISK_PERFORMANCE` (the `DISK_PERFORMANCE` structure) as plain
/// integers, with its 32-bit counts already widened by [`extend_u32`]. Times are in 100 ns
/// units, as the structure keeps them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DiskPerformance {
    /// Bytes read since the counters were enabled (`BytesRead`).
    pub bytes_read: i64,
    /// Bytes written (`BytesWritten`).
    pub bytes_written: i64,
    /// The sum over completed reads of each one's time from its dispatch to the partition
    /// manager to its completion there (`ReadTime`, 100 ns).
    pub read_time: i64,
    /// The same for writes (`WriteTime`, 100 ns).
    pub write_time: i64,
    /// Time with no request in flight (`IdleTime`, 100 ns), measured by the performance
    /// counter; a query while idle includes the idle span up to the query.
    pub idle_time: i64,
    /// Completed reads (`ReadCount`, widened).
    pub read_count: u64,
    /// Completed writes (`WriteCount`, widened).
    pub write_count: u64,
    /// Requests in flight at the query (`QueueDepth`).
    pub queue_depth: u32,
    /// Completed requests that were associated IRPs, the pieces a file system split one request
    /// into (`SplitCount`, widened); they are also counted in `read_count`/`write_count`.
    pub split_count: u64,
    /// The system time of the query (`QueryTime`: 100 ns since 1601, the wall clock, updated
    /// about every 10 to 16 ms).
    pub query_time: i64,
}

/// 100 ns units per millisecond.
const HNS_PER_MS: u64 = 10_000;

/// A counter of the structure as u64: a negative value (never seen; the type is signed) as 0.
fn nonneg(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}

/// The counters Linux's `/proc/diskstats` keeps, from Windows's `DISK_PERFORMANCE`:
///
/// - `rd_ios`/`wr_ios`: `ReadCount`/`WriteCount`, the requests that completed at the partition
///   manager (above the disk class driver: a request the class driver splits to fit the
///   adapter's transfer limit counts once; the pieces of a request split by a file system, as
///   associated IRPs, count each);
/// - `rd_sectors`/`wr_sectors`: `BytesRead`/`BytesWritten` over 512 (diskstats sectors are
///   always 512 bytes);
/// - `rd_ticks`/`wr_ticks`: `ReadTime`/`WriteTime` in ms, the sum of each request's time in
///   flight, as Linux's are;
/// - `rd_merges`/`wr_merges`: 0, because Windows keeps no such count: the storage stack does not
///   merge adjacent requests into one as Linux's block layer does;
/// - `inflight`: `QueueDepth`;
/// - `io_ticks` (busy ms): `QueryTime - IdleTime` in ms. Windows keeps no busy counter, only
///   idle time since the counters were enabled; busy time since then is the time elapsed less
///   the idle time, and the start is unknown but fixed, so this value is busy time plus a
///   constant: right as a difference between two reads of one drive (what every user of
///   `io_ticks` takes), meaningless alone. Two caveats: `QueryTime` is the wall clock (a clock
///   step moves it) and ticks every 10 to 16 ms, while `IdleTime` runs on the performance
///   counter, so a difference is good to about 16 ms and an idle drive can read as a little
///   busy or, after a backward step, less than 0 (a difference of such counters saturates to 0);
/// - `time_in_queue` (weighted ms): `ReadTime + WriteTime` in ms, the sum of the requests' times
///   in flight, which is what Linux's weighted time is (its difference over the elapsed time is
///   perfmon's "Avg. Disk Queue Length");
/// - no discard or flush group (`columns` 14).
pub fn from_disk_performance(p: &DiskPerformance) -> Counters {
    let ms = |hns: u64| hns / HNS_PER_MS;
    let (rt, wt) = (nonneg(p.read_time), nonneg(p.write_time));
    Counters {
        rd_ios: p.read_count,
        rd_sectors: nonneg(p.bytes_read) / 512,
        rd_ticks: ms(rt),
        wr_ios: p.write_count,
        wr_sectors: nonneg(p.bytes_written) / 512,
        wr_ticks: ms(wt),
        inflight: u64::from(p.queue_depth),
        io_ticks: ms(nonneg(p.query_time).saturating_sub(nonneg(p.idle_time))),
        time_in_queue: ms(rt.saturating_add(wt)),
        columns: 14,
        ..Counters::default()
    }
}

/// A 32-bit counter's new reading `now` widened to 64 bits after the widened reading `last`: the
/// counter wrapped once if it went back. Right as long as it is read at least once every 2³²
/// counts (at a million I/Os a second, every 71 minutes).
pub fn extend_u32(last: u64, now: u32) -> u64 {
    let high = last & !u64::from(u32::MAX);
    let low = last & u64::from(u32::MAX);
    let v = high | u64::from(now);
    if u64::from(now) < low {
        v.wrapping_add(1 << 32)
    } else {
        v
    }
}

/// The name a physical drive's counters go by: `PhysicalDrive3` (its device is
/// `\\.\PhysicalDrive3`).
pub fn drive_name(n: u32) -> String {
    format!("PhysicalDrive{n}")
}

/// The drive number of a counters name made by [`drive_name`]: `PhysicalDrive3` → 3.
pub fn drive_number(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("PhysicalDrive")?;
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}
