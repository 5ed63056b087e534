//! The global allocator (mimalloc under the default `mimalloc` feature; jemalloc with its
//! heap profiler under `jemalloc-prof`, which wins when both are on) and the `--debug`
//! memory report.

#[cfg(all(feature = "mimalloc", not(feature = "jemalloc-prof")))]
#[global_allocator]
static GLOBAL: crate::mi_alloc::Mimalloc = crate::mi_alloc::Mimalloc;

#[cfg(feature = "jemalloc-prof")]
#[global_allocator]
static GLOBAL: crate::heap_profile::PeakDumping = crate::heap_profile::PeakDumping;

/// jemalloc's built-in options (the C string `malloc_conf`, under the prefixed name of
/// tikv-jemalloc-sys): the profiler is compiled in and armed, but samples nothing until
/// `--heap-profile` activates it; one sample per 64 KiB allocated on average (2^16).
/// `_RJEM_MALLOC_CONF` in the environment overrides these.
#[cfg(feature = "jemalloc-prof")]
#[export_name = "_rjem_malloc_conf"]
static MALLOC_CONF: ConfString =
    ConfString(c"prof:true,prof_active:false,lg_prof_sample:16".as_ptr());

/// A C string pointer jemalloc reads at start-up.
#[cfg(feature = "jemalloc-prof")]
#[repr(transparent)]
struct ConfString(*const std::ffi::c_char);

// SAFETY: the pointer is to a static, immutable C string.
#[cfg(feature = "jemalloc-prof")]
unsafe impl Sync for ConfString {}

/// mimalloc's option numbers (`mi_option_e` in mimalloc.h, the same in versions 2 and 3),
/// which the -sys crate does not name.
#[cfg(all(feature = "mimalloc", not(feature = "jemalloc-prof")))]
const ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
#[cfg(all(feature = "mimalloc", not(feature = "jemalloc-prof")))]
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

#[cfg(all(feature = "mimalloc", not(feature = "jemalloc-prof")))]
extern "C" {
    fn getenv(name: *const std::ffi::c_char) -> *const std::ffi::c_char;
}

/// Tunes mimalloc for a short-lived batch process: commit arena memory on demand rather
/// than up front, and give freed memory back after 10 ms rather than 1 s. Measured on the
/// attack corpus with the hayabusa rules: peak RSS 170 MB -> 93 MB at the same speed
/// (docs/performance.md). Giving memory back at once (0 ms) saved a few MB more but
/// doubled the system time (madvise calls) on large scans.
/// Runs from `.init_array` (before the Rust runtime's first allocation reserves mimalloc's
/// first arena) and again first thing in `main` on platforms without it.
pub fn configure() {
    #[cfg(all(feature = "mimalloc", not(feature = "jemalloc-prof")))]
    // SAFETY: setting an option only stores a value in mimalloc's option table.
    unsafe {
        // mimalloc's own environment variables still win (getenv does not allocate:
        // this runs before the allocator may be touched).
        if getenv(c"MIMALLOC_ARENA_EAGER_COMMIT".as_ptr()).is_null() {
            libmimalloc_sys::mi_option_set(ARENA_EAGER_COMMIT, 0);
        }
        if getenv(c"MIMALLOC_PURGE_DELAY".as_ptr()).is_null() {
            libmimalloc_sys::mi_option_set(PURGE_DELAY, 10);
        }
    }
}

/// Runs [`configure`] before `main`: the arena mimalloc reserves on the first allocation
/// would otherwise already be committed eagerly.
#[cfg(all(
    feature = "mimalloc",
    not(feature = "jemalloc-prof"),
    target_os = "linux"
))]
#[used]
#[link_section = ".init_array"]
static CONFIGURE_EARLY: extern "C" fn() = {
    extern "C" fn configure_early() {
        configure();
    }
    configure_early
};

/// The process's peak resident set size in KiB (Linux `VmHWM`), if known.
pub fn peak_rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Prints allocator statistics and peak RSS to standard error.
pub fn report() {
    #[cfg(all(feature = "mimalloc", not(feature = "jemalloc-prof")))]
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
    #[cfg(feature = "jemalloc-prof")]
    jemalloc_report();
    #[cfg(not(any(feature = "mimalloc", feature = "jemalloc-prof")))]
    eprintln!("allocator: system (built without the mimalloc feature)");
    if let Some(k) = peak_rss_kib() {
        eprintln!("peak RSS (VmHWM): {:.1} MiB", k as f64 / 1024.0);
    }
}

/// jemalloc's current figures (it keeps no peak: the heap profile's total is the peak).
#[cfg(feature = "jemalloc-prof")]
fn jemalloc_report() {
    use tikv_jemalloc_ctl::{epoch, stats};
    let mib = |r: Result<usize, tikv_jemalloc_ctl::Error>| match r {
        Ok(b) => format!("{:.1} MiB", b as f64 / 1048576.0),
        Err(e) => format!("unknown ({e})"),
    };
    let _ = epoch::advance();
    eprintln!(
        "jemalloc: allocated {}, active {}, resident {}, mapped {} (at exit)",
        mib(stats::allocated::read()),
        mib(stats::active::read()),
        mib(stats::resident::read()),
        mib(stats::mapped::read())
    );
}
