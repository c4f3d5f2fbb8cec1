//! The monotonic clock of the per-I/O hot path, and the wall clock ([`unix_ns`]) of what outlives
//! the process (a verify record).
//!
//! Every I/O is timed twice (issue, completion), so at tens of millions of I/Os per second the
//! clock read itself shows. `std::time::Instant` goes through the C library's `clock_gettime`;
//! musl's wrapper (the static build) costs a visible share of the null engine's per-I/O budget
//! over glibc's. On Linux a [`Stopwatch`] reads `CLOCK_MONOTONIC` — the clock `Instant` uses —
//! through rustix, which calls the kernel's vDSO directly, so both C libraries time I/O alike.
//! Elsewhere it is `Instant`.

use std::time::Instant;

/// Nanoseconds since an origin `Instant`, read cheaply and on the same clock as `Instant`, so
/// figures from a stopwatch and from `Instant`s taken elsewhere share one timeline.
#[derive(Debug, Clone, Copy)]
pub struct Stopwatch {
    #[cfg(target_os = "linux")]
    origin_ns: u64,
    #[cfg(not(target_os = "linux"))]
    origin: Instant,
}

#[cfg(target_os = "linux")]
#[inline]
fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    (t.tv_sec as u64).wrapping_mul(1_000_000_000).wrapping_add(t.tv_nsec as u64)
}

impl Stopwatch {
    /// A stopwatch whose zero is now.
    pub fn start() -> Self {
        #[cfg(target_os = "linux")]
        {
            Stopwatch { origin_ns: monotonic_ns() }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Stopwatch { origin: Instant::now() }
        }
    }

    /// A stopwatch whose zero is `origin` (which may lie in the past).
    pub fn since(origin: Instant) -> Self {
        #[cfg(target_os = "linux")]
        {
            let now = Instant::now();
            let mono = monotonic_ns();
            let origin_ns = match now.checked_duration_since(origin) {
                Some(ago) => mono.saturating_sub(ago.as_nanos() as u64),
                None => mono.saturating_add((origin - now).as_nanos() as u64),
            };
            Stopwatch { origin_ns }
        }
        #[cfg(not(target_os = "linux"))]
        {
            Stopwatch { origin }
        }
    }

    /// Nanoseconds since the origin (0 if the origin is still ahead).
    #[inline]
    pub fn elapsed_ns(&self) -> u64 {
        #[cfg(target_os = "linux")]
        {
            monotonic_ns().saturating_sub(self.origin_ns)
        }
        #[cfg(not(target_os = "linux"))]
        {
            self.origin.elapsed().as_nanos() as u64
        }
    }
}

/// The wall clock now, Unix time in nanoseconds: on Linux `CLOCK_REALTIME` through the vDSO (no
/// system call, as the stopwatch's reads); elsewhere std's `SystemTime` (0 before 1970).
#[inline]
pub fn unix_ns() -> u64 {
    #[cfg(target_os = "linux")]
    {
        let t = rustix::time::clock_gettime(rustix::time::ClockId::Realtime);
        t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
    }
    #[cfg(not(target_os = "linux"))]
    {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn stopwatch_runs_on_instants_clock() {
        let origin = Instant::now();
        std::thread::sleep(Duration::from_millis(20));
        let sw = Stopwatch::since(origin);
        let a = sw.elapsed_ns();
        let by_instant = origin.elapsed().as_nanos() as u64;
        let b = sw.elapsed_ns();
        // The same clock: the Instant reading lies between the two stopwatch readings (allowing
        // for the anchoring read's own few microseconds at most).
        assert!(a >= 20_000_000, "{a}");
        assert!(a <= by_instant + 50_000 && by_instant <= b + 50_000, "{a} {by_instant} {b}");
        assert!(b >= a, "monotonic: {a} then {b}");
    }

    #[test]
    fn unix_ns_is_the_system_time() {
        let a = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_nanos();
        let t = u128::from(unix_ns());
        let b = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_nanos();
        // The same clock (std's SystemTime reads CLOCK_REALTIME too), within a few microseconds.
        assert!(a <= t + 50_000 && t <= b + 50_000, "{a} {t} {b}");
    }

    #[test]
    fn an_origin_ahead_reads_zero() {
        let sw = Stopwatch::since(Instant::now() + Duration::from_secs(60));
        assert_eq!(sw.elapsed_ns(), 0);
    }
}
