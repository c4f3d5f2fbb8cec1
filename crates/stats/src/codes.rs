//! Warning codes (`warnings[].code`). Stable identifiers; messages are free text.

pub const BUFFERED_IO: &str = "buffered-io";
pub const SMALL_TEST_AREA: &str = "small-test-area";
pub const DEVICE_CACHE_UNKNOWN: &str = "device-cache-unknown";
pub const UNWRITTEN_READ: &str = "unwritten-read";
pub const TOOL_BOTTLENECK: &str = "tool-bottleneck";
pub const CPU_SATURATED: &str = "cpu-saturated";
pub const PARTIAL: &str = "partial";
pub const RATE_NOT_MET: &str = "rate-not-met";
/// A job fell below its fio `rate_min`/`rate_iops_min` over a `ratecycle`: the job failed.
pub const RATE_MIN_NOT_MET: &str = "rate-min-not-met";
pub const ZERO_DATA: &str = "compressible-data";
/// The target lives in RAM (tmpfs, RAM disk, loop over tmpfs): figures describe memory.
pub const RAM_BACKED: &str = "ram-backed";
/// A measured point's IOPS or latency did not settle within the window cap (`sla`).
pub const UNSTABLE: &str = "unstable";
/// The target's speed changed while a multi-point measurement ran (`sla`).
pub const DRIFT: &str = "drift";
/// Compared results differ in a way that weakens the comparison (`compare`).
pub const COMPARE_CAVEAT: &str = "compare-caveat";
/// A job file's `ioengine` runs as another engine (`libaio` as io_uring, `sync` as psync);
/// the value of [`spec::PlanNote::ENGINE_SUBSTITUTED`].
pub const ENGINE_SUBSTITUTED: &str = spec::PlanNote::ENGINE_SUBSTITUTED;
/// The device saw more than one request per diskmeter I/O (or `bs` is above its limit).
pub const SPLIT_IO: &str = "split-io";
/// The device merged diskmeter's I/Os into fewer, larger requests.
pub const MERGED_IO: &str = "merged-io";
/// The device read less than diskmeter did: a cache above it answered.
pub const DEVICE_SAW_LESS: &str = "device-saw-less";
/// The device wrote more than diskmeter did: file system, journal or RAID amplification.
pub const DEVICE_SAW_MORE: &str = "device-saw-more";
/// Other I/O reached the device during the run.
pub const FOREIGN_IO: &str = "foreign-io";
/// A storage figure above the memory bandwidth the mem engine measured for the same
/// shape (rw, bs, qd, threads): it cannot come from the device. Name fixed by the CLI
/// contract.
pub const EXCEEDS_MEMORY_BANDWIDTH: &str = "exceeds-memory-bandwidth";
/// One host's IOPS is far from the median of the hosts (multi-host runs).
pub const HOST_IMBALANCE: &str = "host-imbalance";
/// The ranks' measured windows started further apart than a set fraction of the window.
pub const START_SKEW: &str = "start-skew";
/// Two ranks measured the same file or device without `--shared`.
pub const SHARED_TARGET: &str = "shared-target";
/// Merged documents disagree on their clocks or windows (`merge`): they did not run together.
pub const WINDOW_MISMATCH: &str = "window-mismatch";
/// `replay`: the tool, not the device, issued requests later than 1 ms after their intended
/// time (a slot was free).
pub const REPLAY_LAGGING: &str = "replay-lagging";
/// `replay`: requests were due while every slot was busy — the device could not keep up with
/// the trace's rate; latencies include the wait (open loop).
pub const REPLAY_QUEUEING: &str = "replay-queueing";
/// `replay`: some requests were moved or cut to fit the target (alignment, size).
pub const REPLAY_ADJUSTED: &str = "replay-adjusted";
/// The write figures may be fresh-out-of-box figures: the target was purged by `steady` and
/// not fully written since, or this run found it blank and wrote it for the first time.
pub const NOT_PRECONDITIONED: &str = "not-preconditioned";
/// `mark`: the test area is smaller than the write cache a `--sustained` run found on this
/// device (the write figures are the cache's).
pub const INSIDE_WRITE_CACHE: &str = "inside-write-cache";
/// `steady`: no window of five rounds met the steady-state rule within the rounds allowed.
pub const NOT_STEADY: &str = "not-steady";
/// `steady`: the purge the target allows could not be done (figures start from its
/// current state).
pub const NOT_PURGED: &str = "not-purged";
/// `run --verify` found data that does not match what was written (the `verify` section lists
/// each failure with its diagnosis; the exit status is 1).
pub const VERIFY_FAILED: &str = "verify-failed";
/// `run --verify` on buffered I/O: reads may come from the page cache, not the device.
pub const VERIFY_BUFFERED: &str = "verify-buffered";
/// io_uring handed the job's requests to its kernel worker threads (the target cannot take a
/// request without blocking: zram, bio-based drivers, direct writes that allocate): the
/// figure depends on where those threads ran ([`crate::Handoff`]).
pub const ASYNC_PUNT: &str = "async-punt";
/// The Windows build ran under Wine: its file I/O is synchronous and buffered, so the figures
/// are not a Windows disk's.
pub const WINE: &str = "wine";
/// Windows: the test file is NTFS-compressed and diskmeter may not change it: reads and writes
/// go through the file system's compressor, so the figures are not the disk's.
pub const COMPRESSED_TARGET: &str = "compressed-target";
/// The result could not be kept in the history database (the message says why); the result
/// itself is complete.
pub const HISTORY_NOT_RECORDED: &str = "history-not-recorded";
/// A result converted from fio's own JSON output (`history import`): fio's figures, no device
/// view, no histogram, one pass.
pub const IMPORTED_FIO: &str = "imported-fio";
/// The process's cgroup limits I/O to the target's device (v1 `blkio.throttle.*`, v2
/// `io.max`); a figure within 2 % below the limit (or above it) is the limit's (its `bound` says so).
pub const CGROUP_LIMIT: &str = "cgroup-limit";
/// Random reads at QD1 faster than the medium can answer (a rotating device under 1 ms): a
/// cache answers.
pub const FASTER_THAN_MEDIUM: &str = "faster-than-medium";
/// Throughput within 3 % of the link's practical ceiling (PCIe, SATA, USB): the link may be the limit.
pub const LINK_BOUND: &str = "link-bound";
/// A job's first second ran well above its rest (burst credits, a throttle's slice): the
/// headline is the sustained rate.
pub const STARTUP_BURST: &str = "startup-burst";
