//! The wall clock as Unix nanoseconds, for what outlives the process or crosses hosts (a run's
//! start, a verify record); the engine's intervals run on the monotonic clock instead.

/// The wall clock now, Unix time in nanoseconds.
pub fn unix_ns_now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64)
}
