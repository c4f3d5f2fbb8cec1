//! CPUs and CPU time: which CPUs this process may use, pinning the calling thread, the
//! process's CPU time, and the locked-memory limit that io_uring's registered buffers count
//! against. Linux through `sched_*affinity`/`getrusage`/`getrlimit`; Windows through the
//! process and thread affinity masks and `GetProcessTimes`.

/// CPUs this process may run on (taskset, cgroup cpusets, the affinity mask), highest first:
/// CPU 0 usually takes most interrupts and housekeeping, so workers start at the other end.
/// Empty where the OS does not say.
pub fn allowed_cpus() -> Vec<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: zeroed cpu_set_t is a valid out-parameter of the right size.
        let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        // SAFETY: pid 0 = this thread; the size matches the set.
        let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) } == 0;
        if !ok {
            return Vec::new();
        }
        // SAFETY: indices below CPU_SETSIZE are in bounds.
        (0..libc::CPU_SETSIZE as usize).rev().filter(|&c| unsafe { libc::CPU_ISSET(c, &set) }).collect()
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessAffinityMask};
        let (mut mask, mut system) = (0usize, 0usize);
        // SAFETY: the pseudo-handle of this process and two valid out-pointers.
        if unsafe { GetProcessAffinityMask(GetCurrentProcess(), &mut mask, &mut system) } == 0 {
            return Vec::new();
        }
        (0..usize::BITS as usize).rev().filter(|&c| mask >> c & 1 == 1).collect()
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        Vec::new()
    }
}

/// Lets the calling thread run only on `cpus` (best effort: a failure leaves it where the
/// scheduler puts it).
pub fn set_thread_affinity(cpus: &[usize]) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: zeroed cpu_set_t is valid; CPUs at or above CPU_SETSIZE are skipped.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            for &cpu in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
                libc::CPU_SET(cpu, &mut set);
            }
            libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set);
        }
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::Threading::{GetCurrentThread, SetThreadAffinityMask};
        let mask = cpus.iter().filter(|&&c| c < usize::BITS as usize).fold(0usize, |m, &c| m | 1 << c);
        if mask != 0 {
            // SAFETY: the pseudo-handle of this thread and a mask within the process's CPUs.
            unsafe { SetThreadAffinityMask(GetCurrentThread(), mask) };
        }
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        let _ = cpus;
    }
}

/// The process's user and system CPU time so far, in microseconds ((0, 0) where unknown).
pub fn process_times_us() -> (u64, u64) {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: zeroed rusage is a valid out-parameter.
        let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: valid pointer.
        unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        (us(ru.ru_utime), us(ru.ru_stime))
    }
    #[cfg(windows)]
    {
        use windows_sys::Win32::Foundation::FILETIME;
        use windows_sys::Win32::System::Threading::{GetCurrentProcess, GetProcessTimes};
        let z = FILETIME { dwLowDateTime: 0, dwHighDateTime: 0 };
        let (mut c, mut e, mut k, mut u) = (z, z, z, z);
        // SAFETY: the pseudo-handle of this process and four valid out-pointers.
        if unsafe { GetProcessTimes(GetCurrentProcess(), &mut c, &mut e, &mut k, &mut u) } == 0 {
            return (0, 0);
        }
        // FILETIME counts 100 ns.
        let us = |t: FILETIME| ((u64::from(t.dwHighDateTime) << 32) | u64::from(t.dwLowDateTime)) / 10;
        (us(u), us(k))
    }
    #[cfg(not(any(target_os = "linux", windows)))]
    {
        (0, 0)
    }
}

/// The limit on memory this process may lock (RLIMIT_MEMLOCK), in bytes; `None` when there is
/// none (unlimited, or an OS without one).
pub fn memlock_limit() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        let mut lim = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
        // SAFETY: valid out-pointer for getrlimit.
        if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut lim) } != 0 || lim.rlim_cur == libc::RLIM_INFINITY {
            return None;
        }
        Some(lim.rlim_cur)
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}
