//! `scanner csv-timeline`, `json-timeline` and `dfir-timeline`, and `list-profiles`:
//! the run's phases, the writing of the timeline and the report. What the scan needs
//! is built by [`ScanSetup`].

use crate::args::{OutputFormat, TimelineArgs};
use crate::exit;
use crate::histogram::Histogram;
use crate::output::{check_target, write_atomically};
use crate::phases::{timed, PhaseTimes};
use crate::rules_cmd::print_report;
use crate::scan_setup::{Inputs, ScanSetup};
use crate::summary::{group_errors, noun, Tally};
use crate::terminal::{safe, SafeWriter};
use crate::write_behind::WriteBehind;
use scanner_engine::{DetectInfo, ScanResult, SortedRows};
use scanner_input::InputError;
use scanner_rules::RuleSet;
use scanner_timeline::{
    write_timeline, CriticalSystems, CsvEncoder, JsonEncoder, Layout, Profile, TimeFormat,
};
use std::io::{IsTerminal, Write};
use std::path::Path;
use std::sync::atomic::AtomicU64;
use std::time::Instant;

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
pub fn run(a: &TimelineArgs, format: OutputFormat, debug: bool) -> i32 {
    match run_inner(a, format, debug) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", safe(&e));
            exit::FATAL
        }
    }
}

/// The charts counted as the rows are written (`-H`, `-T`).
struct Charts {
    report: Option<Histogram>,
    terminal: Option<Histogram>,
}

/// `-M` and `-S` shape CSV cells only: with a JSON output they are refused, as Hayabusa
/// 4.0 refuses them with `-t json|jsonl` (`-R` applies to JSON too: its `DUP`).
fn check_csv_only(a: &TimelineArgs, format: OutputFormat) -> Result<(), String> {
    let flags = [
        (a.cells.multiline, "-M, --multiline"),
        (a.cells.tab_separator, "-S, --tab-separator"),
    ];
    let given: Vec<&str> = flags
        .iter()
        .filter(|(on, _)| *on)
        .map(|(_, f)| *f)
        .collect();
    if format == OutputFormat::Csv || given.is_empty() {
        return Ok(());
    }
    Err(format!(
        "the following option(s) only apply to CSV output and cannot be used with JSON output \
         (-t json|jsonl, json-timeline): {}",
        given.join(", ")
    ))
}

fn run_inner(a: &TimelineArgs, format: OutputFormat, debug: bool) -> Result<i32, String> {
    let started = Instant::now();
    check_csv_only(a, format)?;
    let setup = ScanSetup::new(a)?;
    // The report lists the kinds of event no rule reads: the scan counts them.
    let setup = if a.html_report.is_some() {
        setup.counting_types()
    } else {
        setup
    };
    let profile = setup.profile()?;
    for target in setup.outputs() {
        check_target(target, a.overwrite.clobber)?;
    }
    setup.start_threads()?;
    let mut phases = PhaseTimes::default();
    // The input files are looked for, and -G's databases read whole, while the rules
    // load: none needs the others. A missing or damaged database ends the run before
    // the scan.
    let (set, found, geo) = std::thread::scope(|s| {
        let finding = s.spawn(|| setup.find_inputs());
        let reading = s.spawn(|| setup.geo_ip());
        let set = timed(&mut phases.load, || load(&setup, a));
        (set, joined(finding), joined(reading))
    });
    let geo = geo?;
    let (set, critical) = set?;
    if debug {
        crate::rules_cmd::print_timings(&set);
    }
    if set.rules().is_empty() && set.correlations().is_empty() {
        return Err(
            "no rule to run: the rules given hold none that loads and passes the filters".into(),
        );
    }
    let inputs = timed(&mut phases.inputs, || {
        found.map(|found| setup.keep_inputs(found, &set))
    })?;
    if inputs.files.is_empty() {
        if inputs.skipped == 0 {
            if let Some(line) = crate::summary::not_read_line(&inputs.not_read) {
                eprintln!("note: {line}");
            }
            // Why nothing was found, before the error that ends the run.
            for run in scanner_input::collapse_errors(&inputs.errors) {
                let line = format!("{}: {}", run.file().display(), run.message());
                eprintln!("input error: {}", safe(&line));
            }
            // Archives were met but none of their members could be read (encrypted
            // without the password, damaged): input errors, as a damaged log is.
            let archive = |e: &InputError| matches!(e.kind(), scanner_input::ErrorKind::Archive(_));
            if inputs.errors.iter().any(archive) {
                eprintln!("error: no input file could be read: the archives' members above are unreadable");
                return Ok(exit::INPUT_ERRORS);
            }
            return Err(
                "no input file to scan: no .evtx, .json, .jsonl, .xml or .gz file in the folders and files given"
                    .to_string(),
            );
        }
        if !a.quiet {
            let n = inputs.skipped as u64;
            eprintln!(
                "note: no file scanned: the {n} input {} only channels no rule reads (-a scans them)",
                noun(n, "file holds", "files hold")
            );
        }
    }
    let time = setup.time();
    let (scanner, mut result, sort_bytes) = timed(&mut phases.scan, || {
        // JSON keeps the values' line breaks and tabs, as Hayabusa's JSON does.
        setup.scan(
            profile,
            set,
            &inputs.files,
            debug,
            format != OutputFormat::Csv,
        )
    })?;
    let layout = setup
        .layout(&scanner, &inputs.files, profile)
        .with_critical_systems(critical)
        .with_geo(geo.as_ref());
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
    let mut tally = Tally::new(&layout, time);
    let formula_cells = AtomicU64::new(0);
    let written = (&layout, &formula_cells);
    timed(&mut phases.write, || {
        write(a, format, debug, written, rows, &mut tally, &mut charts)?;
        match &a.rule_stats {
            Some(path) => write_atomically(path, a.overwrite.clobber, |f| {
                let stats = result.rule_stats.as_ref();
                scanner_timeline::write_rule_stats(stats, scanner.rules(), a.excel_safe, f)
            }),
            None => Ok(()),
        }
    })?;
    let code = timed(&mut phases.report, || {
        report(a, started, &inputs, &result, tally, &charts, time)
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

/// What a scoped thread returned; its panic goes on in the caller.
fn joined<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join()
        .unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// Loads the rules and the critical systems and prints the load report.
fn load(setup: &ScanSetup<'_>, a: &TimelineArgs) -> Result<(RuleSet, CriticalSystems), String> {
    let load_start = Instant::now();
    let set = setup.load_rules(&setup.rule_choice())?;
    let critical = read_critical_systems(a.quiet)?;
    let load_time = load_start.elapsed();
    if !a.quiet {
        print_report(&set, a.rules.show_errors);
        if !set.report().errors.is_empty() && !a.rules.show_errors {
            eprintln!(
                "(run `scanner rules check` with the same -r to list the rejected rules and why)"
            );
        }
        eprintln!("rules loaded in {:.2} s", load_time.as_secs_f64());
    }
    Ok((set, critical))
}

/// Reads `./config/critical_systems.txt`: the detections on the computers it lists are
/// shown a level up (see [`crate::critical_systems`]); none listed when it is absent.
fn read_critical_systems(quiet: bool) -> Result<CriticalSystems, String> {
    let Some((critical, path)) = crate::critical_systems::read_default(quiet)
        .map_err(|e| format!("critical systems file: {e}"))?
    else {
        return Ok(CriticalSystems::default());
    };
    if !critical.is_empty() && !quiet {
        eprintln!(
            "critical systems: {} {} from {} (their detections are raised a level)",
            critical.len(),
            noun(critical.len() as u64, "computer", "computers"),
            crate::terminal::safe(&path.display().to_string())
        );
    }
    Ok(critical)
}

/// Writes the timeline to `-o` (atomically) or standard output in one pass over the
/// sorted rows (merged from disk if they were spilled); each row written is counted
/// for the summary and the charts as it goes by.
fn write(
    a: &TimelineArgs,
    format: OutputFormat,
    debug: bool,
    (layout, formula_cells): (&Layout<'_>, &AtomicU64),
    rows: SortedRows,
    tally: &mut Tally<'_>,
    charts: &mut Charts,
) -> Result<(), String> {
    let on_row = |r: &DetectInfo| {
        tally.add(r);
        if charts.report.is_some() || charts.terminal.is_some() {
            let level = layout.level(r);
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
            OutputFormat::Csv => {
                let enc = CsvEncoder::new(layout).count_formula_cells(formula_cells);
                write_timeline(enc, out, rows, on_row)
            }
            OutputFormat::Json => {
                write_timeline(JsonEncoder::new(layout, false), out, rows, on_row)
            }
            OutputFormat::JsonLines => {
                write_timeline(JsonEncoder::new(layout, true), out, rows, on_row)
            }
        }
    };
    let write_start = Instant::now();
    match a.output.as_deref().filter(|p| *p != Path::new("-")) {
        Some(path) => {
            write_atomically(path, a.overwrite.clobber, |f| {
                write(&mut WriteBehind::new(f))
            })?;
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
            match written {
                Err(e) if !crate::output::reader_gone(&e) => {
                    return Err(format!("cannot write to standard output: {e}"));
                }
                _ => {}
            }
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
    if let Some(path) = &a.attack_navigator {
        let (rules, correlations) = tally.per_rule();
        let counts = crate::navigator::counts(tally.rules(), &rules, &correlations);
        let layer = crate::navigator::layer(counts);
        write_atomically(path, a.overwrite.clobber, |f| {
            let mut w = std::io::BufWriter::new(f);
            serde_json::to_writer_pretty(&mut w, &layer)?;
            w.flush()
        })?;
    }
    let set = tally.rules();
    let mut summary = tally.finish();
    if let Some(types) = &result.coverage {
        (summary.unread, summary.unread_left_out) = crate::coverage::unread(set, types, 20);
    }
    if a.integrity {
        // Checked, whether or not anything was found.
        summary.integrity.get_or_insert_with(Default::default);
    }
    summary.stats = result.stats.clone();
    summary.skipped_files = inputs.skipped;
    summary.not_read = inputs.not_read.clone();
    summary.errors = group_errors(errors.iter().copied());
    summary.error_count = errors.len();
    if let Some(path) = &a.html_report {
        summary.elapsed = started.elapsed();
        let command: Vec<String> = std::env::args().collect();
        let page =
            crate::report_html::render(&summary, charts.report.as_ref(), time, &command.join(" "));
        write_atomically(path, a.overwrite.clobber, |f| f.write_all(page.as_bytes()))?;
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
            let (files, records) = (result.stats.files as u64, result.stats.records);
            let (found, bad) = (detections as u64, errors.len() as u64);
            eprintln!(
                "scanned {files} {}, {records} {}; {found} {}; {bad} input {}",
                noun(files, "file", "files"),
                noun(records, "record", "records"),
                noun(found, "detection", "detections"),
                noun(bad, "error", "errors")
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
        if let Some(line) = crate::coverage::summary_line(&result.stats) {
            eprintln!("{line}");
        }
    }
    std::io::stderr().flush().ok();
    Ok(if errors.is_empty() {
        exit::OK
    } else {
        exit::INPUT_ERRORS
    })
}
