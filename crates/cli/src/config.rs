//! The one step from the flags to the libraries' settings: the profile, the time
//! format, the cell style, how the scanner is built and the worker threads. Nothing
//! below the binary reads a flag; everything after this step reads these values
//! (`scan_setup.rs` puts them together for the commands that run rules).

use crate::args::{TimeArgs, TimelineArgs};
use scanner_engine::{Progress, RecordFilter, ScannerBuilder};
use scanner_timeline::{Profile, Style, TimeFormat, TimeStyle};
use std::sync::Arc;

/// The profile named by `-p` (else the one set with set-default-profile, else
/// standard), or an error listing the profiles.
pub fn profile(a: &TimelineArgs) -> Result<Profile, String> {
    let Some(name) = &a.profile else {
        return crate::default_profile::read(a.quiet).map_err(|e| e.to_string());
    };
    Profile::parse(name).ok_or_else(|| {
        let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        format!("unknown profile '{name}' ({})", names.join(", "))
    })
}

/// The time format: the zone (`-U` UTC, else local) and the style flags.
pub fn time_format(a: &TimeArgs) -> TimeFormat {
    let base = if a.utc {
        TimeFormat::utc()
    } else {
        TimeFormat::local()
    };
    let style = if a.iso8601 {
        TimeStyle::Iso8601
    } else if a.rfc3339 {
        TimeStyle::Rfc3339
    } else if a.rfc2822 {
        TimeStyle::Rfc2822
    } else if a.us_time {
        TimeStyle::UsTime
    } else if a.us_military_time {
        TimeStyle::UsMilitary
    } else if a.european_time {
        TimeStyle::European
    } else {
        TimeStyle::Standard
    };
    base.with_style(style)
}

/// The cell style: `-M`, `-S`, `-b`, `-X`, `--excel-safe`.
pub fn style(a: &TimelineArgs) -> Style {
    Style {
        multiline: a.cells.multiline,
        tab_separator: a.cells.tab_separator,
        no_abbreviations: a.cells.no_abbreviations,
        remove_duplicates: a.remove_duplicates,
        remove_duplicate_data: a.hayabusa.remove_duplicate_data,
        excel_safe: a.excel_safe,
    }
}

/// How the scanner is built: what rows carry (by the profile, `-F`, and `-b`, which as
/// in Hayabusa drops the default Details templates too), which records are tested,
/// `--no-prefilter`, `--rule-stats`, `-x`, and the progress counters when a progress bar
/// is shown.
pub fn scanner(
    a: &TimelineArgs,
    profile: Profile,
    filter: RecordFilter,
    progress: Option<Arc<Progress>>,
) -> ScannerBuilder {
    let mut b = ScannerBuilder::new();
    b.extra_field_info(profile.has_extra())
        .all_field_info(profile.has_all_fields())
        .field_data_mapping(!a.no_field_data_mapping)
        .default_details(!a.cells.no_abbreviations)
        .pwsh_field_extraction(!a.hayabusa.no_pwsh_field_extraction)
        .record_filter(filter)
        .prefilter(!a.no_prefilter)
        .rule_stats(a.rule_stats.is_some())
        .recover_records(a.recover_records)
        .validate_checksums(a.hayabusa.checksums.validate_checksums)
        .integrity(
            a.integrity.then(|| {
                jiff::SignedDuration::from_secs(i64::from(crate::integrity::TIME_TOLERANCE))
            }),
        );
    if let Some(p) = progress {
        b.progress(p);
    }
    b
}

/// Most worker threads per core. The scan is CPU-bound: past one thread per core, more
/// only hide waits on slow storage, and each holds its own buffers (a record view, a
/// batch of rows), so a few per core is plenty; tens of thousands took minutes to start.
pub const THREADS_PER_CORE: usize = 4;

/// The worker threads for `-t n`: `None` for the default (one per core), which `-t 0`
/// also asks for; at most [`THREADS_PER_CORE`] per core, with a warning when `n` is cut.
fn threads(n: usize) -> Option<usize> {
    if n == 0 {
        return None;
    }
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let max = cores.saturating_mul(THREADS_PER_CORE);
    if n > max {
        eprintln!(
            "warning: -t {n}: using {max} threads, the most this machine's {cores} cores are given ({THREADS_PER_CORE} per core)"
        );
        return Some(max);
    }
    Some(n)
}

/// The worker pool could not be started with the threads asked for.
#[derive(Debug)]
pub struct ThreadsError {
    threads: usize,
    source: rayon::ThreadPoolBuildError,
}

impl std::fmt::Display for ThreadsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "cannot start {} threads: {}", self.threads, self.source)
    }
}

impl std::error::Error for ThreadsError {}

/// Starts the global worker pool with the threads `-t` asks for ([`threads`]); nothing
/// to do without `-t` or with `-t 0`.
pub fn start_threads(requested: Option<usize>) -> Result<(), ThreadsError> {
    let Some(n) = requested.and_then(threads) else {
        return Ok(());
    };
    rayon::ThreadPoolBuilder::new()
        .num_threads(n)
        .build_global()
        .map_err(|source| ThreadsError { threads: n, source })
}

/// `-l`: adds the local Windows event log folder to the folders read (`dirs`). Off
/// Windows there is none, and the run stops with an error naming the flag.
pub fn live_analysis_dirs(live: bool, dirs: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    if !live {
        return Ok(());
    }
    if !cfg!(windows) {
        return Err("-l (live analysis) reads the local Windows event logs and needs Windows; give the logs with -d DIR or -f FILE".into());
    }
    let root = std::env::var_os("SystemRoot").unwrap_or_else(|| "C:\\Windows".into());
    let dir = std::path::PathBuf::from(root)
        .join("System32")
        .join("winevt")
        .join("Logs");
    dirs.push(dir);
    Ok(())
}
