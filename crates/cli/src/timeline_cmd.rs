//! `scanner csv-timeline` and `scanner json-timeline`, and `list-profiles`.

use crate::args::TimelineArgs;
use crate::config;
use crate::exit;
use crate::histogram::Histogram;
use crate::output::{check_target, write_atomically};
use crate::phases::{timed, PhaseTimes};
use crate::progress_bar::ProgressBar;
use crate::rules_cmd::{load_rules_with, print_report};
use crate::summary::{group_errors, level_of, Tally};
use crate::terminal::{safe, SafeWriter};
use crate::write_behind::WriteBehind;
use scanner_engine::{DetectInfo, Progress, ScanResult, Scanner, SortedRows};
use scanner_input::{InputError, InputFile, InputKind};
use scanner_rules::RuleSet;
use scanner_timeline::{write_timeline, CsvEncoder, JsonEncoder, Layout, Profile, TimeFormat};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;
use std::time::Instant;

/// The timeline's file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// CSV.
    Csv,
    /// One JSON array.
    Json,
    /// JSON Lines.
    JsonLines,
}

/// `list-profiles`.
pub fn list_profiles() -> i32 {
    for p in Profile::ALL {
        let cols: Vec<&str> = p.named_columns().iter().map(|(n, _)| *n).collect();
        println!("{:<24} {}", p.name(), cols.join(", "));
    }
    exit::OK
}

/// Runs the command; returns the exit code. `debug` reports how detections were sorted,
/// the phases' times and the distribution of the files' scan times.
pub fn run(a: &TimelineArgs, format: Format, debug: bool) -> i32 {
    match run_inner(a, format, debug) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", safe(&e));
            exit::FATAL
        }
    }
}

/// What the run read: the files to scan, the problems met finding them, and how many
/// files the channel check left out.
pub(crate) struct Inputs {
    pub(crate) files: Vec<InputFile>,
    pub(crate) errors: Vec<InputError>,
    pub(crate) skipped: usize,
}

/// The charts counted as the rows are written (`-H`, `-T`).
struct Charts {
    report: Option<Histogram>,
    terminal: Option<Histogram>,
}

fn run_inner(a: &TimelineArgs, format: Format, debug: bool) -> Result<i32, String> {
    let started = Instant::now();
    if a.dirs.is_empty() && a.files.is_empty() {
        return Err("nothing to scan: give -d DIR or -f FILE".into());
    }
    if let Some(dir) = &a.hayabusa.geo_ip {
        return Err(format!(
            "-G/--GeoIP {}: GeoIP lookup (MaxMind GeoLite2 databases) is not built in; run without -G",
            dir.display()
        ));
    }
    let profile = config::profile(a)?;
    for target in outputs(a) {
        check_target(target, a.clobber)?;
    }
    if let Some(n) = a.threads.and_then(config::threads) {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .build_global()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?;
    }
    let mut phases = PhaseTimes::default();
    // The input files are looked for while the rules load: neither needs the other.
    let (set, found) = std::thread::scope(|s| {
        let finding = s.spawn(|| find_inputs(a));
        let set = timed(&mut phases.load, || load(a));
        let found = finding
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (set, found)
    });
    let set = set?;
    if debug {
        crate::rules_cmd::print_timings(&set);
    }
    if set.rules().is_empty() && set.correlations().is_empty() {
        return Err(
            "no rule to run: the rules given hold none that loads and passes the filters".into(),
        );
    }
    let inputs = timed(&mut phases.inputs, || keep_inputs(a, found?, &set))?;
    if inputs.files.is_empty() {
        if inputs.skipped == 0 {
            // Why nothing was found, before the error that ends the run.
            for run in scanner_input::collapse_errors(&inputs.errors) {
                let line = format!("{}: {}", run.file().display(), run.message());
                eprintln!("input error: {}", safe(&line));
            }
            return Err(
                "no input file to scan: no .evtx, .json, .jsonl, .xml or .gz file in the folders and files given"
                    .to_string(),
            );
        }
        if !a.quiet {
            eprintln!(
                "note: no file scanned: the {} input files hold only channels no rule reads (-a scans them)",
                inputs.skipped
            );
        }
    }
    let time = config::time_format(&a.time);
    let (scanner, mut result, sort_bytes) = timed(&mut phases.scan, || {
        scan(a, profile, set, &inputs.files, &time, debug)
    })?;
    let layout = Layout::new(scanner.rules(), &inputs.files, time.clone(), profile)
        .with_style(config::style(a))
        .with_recovered_column(a.recover_records);
    let rows = std::mem::take(&mut result.rows);
    if debug {
        eprintln!(
            "sort: {} detections; {} sorted runs spilled to {} (sort memory {} MiB); {} runs of correlation events",
            rows.len(),
            rows.spilled_runs(),
            safe(&std::env::temp_dir().display().to_string()),
            sort_bytes >> 20,
            rows.spilled_correlation_runs()
        );
    }
    let chart = |slices| rows.time_range().map(|(f, l)| Histogram::new(f, l, slices));
    let mut charts = Charts {
        report: a
            .html_report
            .is_some()
            .then(|| chart(crate::report_html::SLICES))
            .flatten(),
        terminal: (a.visualize_timeline && !a.quiet)
            .then(|| chart(crate::freq_timeline::WIDTH))
            .flatten(),
    };
    let mut tally = Tally::new(scanner.rules(), &time);
    let formula_cells = AtomicU64::new(0);
    let written = (&layout, &formula_cells);
    timed(&mut phases.write, || {
        write(a, format, debug, written, rows, &mut tally, &mut charts)?;
        match &a.rule_stats {
            Some(path) => write_atomically(path, a.clobber, |f| {
                let stats = result.rule_stats.as_ref();
                scanner_timeline::write_rule_stats(stats, scanner.rules(), a.excel_safe, f)
            }),
            None => Ok(()),
        }
    })?;
    let code = timed(&mut phases.report, || {
        report(a, started, &inputs, &result, tally, &charts, &time)
    })?;
    if debug {
        for line in phases.lines(result.stats.file_times.as_ref()) {
            eprintln!("{line}");
        }
    }
    let formula_cells = formula_cells.into_inner();
    if formula_cells > 0 && !a.excel_safe && !a.quiet {
        eprintln!(
            "{formula_cells} CSV cells begin with a formula character (=, +, -, @, tab, CR): \
             a spreadsheet may run them; --excel-safe writes them as text"
        );
    }
    Ok(code)
}

/// Loads the rules (`-b` drops the default Details templates too) and prints the load
/// report.
fn load(a: &TimelineArgs) -> Result<RuleSet, String> {
    let load_start = Instant::now();
    let mut set = load_rules_with(&a.rules, a.quiet)?;
    read_critical_systems(&mut set, a.quiet)?;
    let load_time = load_start.elapsed();
    if a.no_abbreviations {
        // As Hayabusa: without abbreviations, no default Details templates either.
        set.drop_default_details();
    }
    if !a.quiet {
        print_report(&set, a.rules.show_errors);
        if !set.report().errors.is_empty() && !a.rules.show_errors {
            eprintln!(
                "(run `scanner rules check` with the same -r to list the rejected rules and why)"
            );
        }
        eprintln!("rules loaded in {:.2} s", load_time.as_secs_f64());
    }
    Ok(set)
}

/// Reads `./config/critical_systems.txt` into the rule set: the detections on the
/// computers it lists are raised one level (see [`crate::critical_systems`]).
fn read_critical_systems(set: &mut RuleSet, quiet: bool) -> Result<(), String> {
    let Some((critical, path)) = crate::critical_systems::read_default(quiet)
        .map_err(|e| format!("critical systems file: {e}"))?
    else {
        return Ok(());
    };
    if !critical.is_empty() {
        if !quiet {
            eprintln!(
                "critical systems: {} computers from {} (their detections are raised a level)",
                critical.len(),
                crate::terminal::safe(&path.display().to_string())
            );
        }
        set.set_critical_systems(critical);
    }
    Ok(())
}

/// The files the run writes: `-o` (unless `-` or absent: standard output), `-H`,
/// `--rule-stats`, `--cpu-profile`.
fn outputs(a: &TimelineArgs) -> Vec<&Path> {
    let timeline = a.output.as_deref().filter(|p| *p != Path::new("-"));
    let others = [&a.html_report, &a.rule_stats, &a.cpu_profile];
    timeline
        .into_iter()
        .chain(others.into_iter().flatten().map(PathBuf::as_path))
        .collect()
}

/// Finds the input files (refusing any that is also an output); EVTX files whose
/// channel no rule reads are left out unless `-a`.
pub(crate) fn inputs(a: &TimelineArgs, set: &RuleSet) -> Result<Inputs, String> {
    keep_inputs(a, find_inputs(a)?, set)
}

/// The input files found, and the errors finding them (before any is left out).
pub(crate) type Found = (Vec<InputFile>, Vec<InputError>);

/// Finds the input files, refusing any that is also an output.
fn find_inputs(a: &TimelineArgs) -> Result<Found, String> {
    let kind = config::input_kind(a);
    let extra = &a.hayabusa.target_file_ext;
    let (files, errors) = scanner_input::discover_with_extensions(&a.dirs, &a.files, kind, extra);
    crate::output::refuse_inputs(&outputs(a), files.iter().map(|f| f.path.as_path()))?;
    Ok((files, errors))
}

/// Of the files `found`, those to scan: EVTX files whose channel no rule reads are
/// left out unless `-a`.
fn keep_inputs(a: &TimelineArgs, found: Found, set: &RuleSet) -> Result<Inputs, String> {
    let (mut files, errors) = found;
    let mut skipped = 0;
    if config::input_kind(a) == InputKind::Evtx && !a.scan_all_files {
        let (kept, left) = scanner_input::split_by_channel(files, set);
        files = kept;
        skipped = left.len();
    }
    Ok(Inputs {
        files,
        errors,
        skipped,
    })
}

/// Scans the files (with a progress bar on a terminal, and the CPU profile when asked;
/// each file timed when `file_times`); returns the scanner, its result and the sort
/// memory bound.
pub(crate) fn scan(
    a: &TimelineArgs,
    profile: Profile,
    set: RuleSet,
    files: &[InputFile],
    time: &TimeFormat,
    file_times: bool,
) -> Result<(Scanner, ScanResult<SortedRows>, usize), String> {
    let filter = crate::filters::record_filter(a, &set, time.zone())?;
    crate::output::remove_stale_spills();
    let sort_bytes = match a.sort_memory {
        Some(mib) => crate::sort_memory::from_mib(mib)?,
        None => crate::sort_memory::default(),
    };
    let profiler = match &a.cpu_profile {
        Some(_) => Some(crate::cpu_profile::start()?),
        None => None,
    };
    let progress = Arc::new(Progress::default());
    let bar = (std::io::stderr().is_terminal() && !a.quiet).then(|| {
        ProgressBar::start(
            Arc::clone(&progress),
            files.len() as u64,
            files.iter().map(|f| f.size).sum(),
        )
    });
    let scanner = config::scanner(a, profile, filter, bar.is_some().then_some(progress))
        .sort_memory(Some(sort_bytes))
        .file_times(file_times)
        .build(set);
    let result = scanner.scan_sorted(files);
    if let (Some(p), Some(path)) = (profiler, &a.cpu_profile) {
        p.finish(path, a.clobber)?;
    }
    if let Some(b) = bar {
        b.finish();
    }
    Ok((scanner, result, sort_bytes))
}

/// Writes the timeline to `-o` (atomically) or standard output in one pass over the
/// sorted rows (merged from disk if they were spilled); each row written is counted
/// for the summary and the charts as it goes by.
fn write(
    a: &TimelineArgs,
    format: Format,
    debug: bool,
    (layout, formula_cells): (&Layout<'_>, &AtomicU64),
    rows: SortedRows,
    tally: &mut Tally<'_>,
    charts: &mut Charts,
) -> Result<(), String> {
    let set = layout.rules();
    let on_row = |r: &DetectInfo| {
        tally.add(r);
        if charts.report.is_some() || charts.terminal.is_some() {
            let level = level_of(set, r);
            for h in [&mut charts.report, &mut charts.terminal]
                .into_iter()
                .flatten()
            {
                h.add(r.time, level);
            }
        }
    };
    let write = |out: &mut dyn Write| -> std::io::Result<usize> {
        match format {
            Format::Csv => {
                let enc = CsvEncoder::new(layout).count_formula_cells(formula_cells);
                write_timeline(enc, out, rows, on_row)
            }
            Format::Json => write_timeline(JsonEncoder::new(layout, false), out, rows, on_row),
            Format::JsonLines => write_timeline(JsonEncoder::new(layout, true), out, rows, on_row),
        }
    };
    let write_start = Instant::now();
    match a.output.as_deref().filter(|p| *p != Path::new("-")) {
        Some(path) => {
            write_atomically(path, a.clobber, |f| write(&mut WriteBehind::new(f)))?;
        }
        None => {
            let stdout = std::io::stdout();
            let written = if stdout.is_terminal() {
                // Evidence shown on a terminal: its control characters escaped.
                let mut safe = SafeWriter::new(stdout.lock());
                write(&mut safe).and_then(|n| safe.flush().map(|()| n))
            } else {
                write(&mut stdout.lock())
            };
            written.map_err(|e| format!("cannot write to standard output: {e}"))?;
        }
    }
    if debug {
        eprintln!(
            "write: timeline merged, encoded and written in {:.2} s",
            write_start.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

/// The summary, the HTML report, the terminal chart and the input errors; returns the
/// exit code.
fn report(
    a: &TimelineArgs,
    started: Instant,
    inputs: &Inputs,
    result: &ScanResult<SortedRows>,
    tally: Tally<'_>,
    charts: &Charts,
    time: &TimeFormat,
) -> Result<i32, String> {
    let terminal = std::io::stderr().is_terminal();
    let colour = terminal && !a.no_color && std::env::var_os("NO_COLOR").is_none();
    let errors: Vec<&InputError> = inputs.errors.iter().chain(&result.errors).collect();
    let detections = tally.detections();
    let mut summary = tally.finish();
    summary.stats = result.stats.clone();
    summary.skipped_files = inputs.skipped;
    summary.errors = group_errors(errors.iter().copied());
    summary.error_count = errors.len();
    if let Some(path) = &a.html_report {
        summary.elapsed = started.elapsed();
        let command: Vec<String> = std::env::args().collect();
        let page =
            crate::report_html::render(&summary, charts.report.as_ref(), time, &command.join(" "));
        write_atomically(path, a.clobber, |f| f.write_all(page.as_bytes()))?;
    }
    if a.visualize_timeline && !a.quiet {
        eprint!(
            "\n{}",
            crate::freq_timeline::render(charts.terminal.as_ref(), detections, time)
        );
    }
    summary.elapsed = started.elapsed();
    // Without the summary, which lists them by file, the errors are listed one a line.
    if a.quiet || a.no_summary {
        for run in scanner_input::collapse_errors(errors.iter().copied()) {
            let line = format!("{}: {}", run.file().display(), run.message());
            eprintln!("input error: {}", safe(&line));
        }
    }
    if !a.quiet {
        if a.no_summary {
            eprintln!(
                "scanned {} files, {} records; {} detections; {} input errors",
                result.stats.files,
                result.stats.records,
                detections,
                errors.len()
            );
        } else {
            eprint!("{}", summary.render(colour));
        }
        if a.recover_records {
            eprintln!(
                "recovered (carved) records scanned: {}",
                result.stats.recovered
            );
        }
    }
    std::io::stderr().flush().ok();
    Ok(if errors.is_empty() {
        exit::OK
    } else {
        exit::INPUT_ERRORS
    })
}
