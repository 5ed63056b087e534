//! The global allocator (mimalloc under the default `mimalloc` feature) and the
//! `--debug` memory report.

#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The process's peak resident set size in KiB (Linux `VmHWM`), if known.
pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Prints allocator statistics and peak RSS to standard error.
pub fn report() {
    #[cfg(feature = "mimalloc")]
    {
        let (mut elapsed, mut utime, mut stime) = (0usize, 0usize, 0usize);
        let (mut rss, mut peak_rss, mut commit, mut peak_commit, mut faults) =
            (0usize, 0usize, 0usize, 0usize, 0usize);
        // SAFETY: mimalloc's statistics calls only read allocator state and write
        // through the pointers given, which point at live locals.
        unsafe {
            libmimalloc_sys::mi_stats_print_out(None, std::ptr::null_mut());
            libmimalloc_sys::mi_process_info(
                &mut elapsed,
                &mut utime,
                &mut stime,
                &mut rss,
                &mut peak_rss,
                &mut commit,
                &mut peak_commit,
                &mut faults,
            );
        }
        eprintln!(
            "mimalloc: peak committed {:.1} MiB, current committed {:.1} MiB, peak RSS {:.1} MiB",
            peak_commit as f64 / 1048576.0,
            commit as f64 / 1048576.0,
            peak_rss as f64 / 1048576.0
        );
    }
    #[cfg(not(feature = "mimalloc"))]
    eprintln!("allocator: system (built without the mimalloc feature)");
    if let Some(k) = peak_rss_kib() {
        eprintln!("peak RSS (VmHWM): {:.1} MiB", k as f64 / 1024.0);
    }
}
