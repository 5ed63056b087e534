//! `scanner csv-timeline` and `scanner json-timeline`, and `list-profiles`.

use crate::args::TimelineArgs;
use crate::exit;
use crate::histogram::Histogram;
use crate::output::{check_target, write_atomically};
use crate::progress_bar::ProgressBar;
use crate::rules_cmd::{load_rules, print_report};
use crate::summary::{group_errors, level_of, Tally};
use crate::write_behind::WriteBehind;
use crate::write_pipeline;
use scanner_engine::csv_encoder::CsvEncoder;
use scanner_engine::json_timeline::JsonEncoder;
use scanner_engine::progress::Progress;
use scanner_engine::time::{TimeFormat, TimeStyle};
use scanner_engine::timeline::Style;
use scanner_engine::{DetectInfo, Profile, Scanner, TimelineWriter};
use scanner_input::InputKind;
use std::io::{IsTerminal, Write};
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

/// Runs the command; returns the exit code. `debug` reports how detections were sorted.
pub fn run(a: &TimelineArgs, format: Format, debug: bool) -> i32 {
    match run_inner(a, format, debug) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            exit::FATAL
        }
    }
}

fn time_format(a: &TimelineArgs) -> TimeFormat {
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

fn run_inner(a: &TimelineArgs, format: Format, debug: bool) -> Result<i32, String> {
    let started = Instant::now();
    if a.dirs.is_empty() && a.files.is_empty() {
        return Err("nothing to scan: give -d DIR or -f FILE".into());
    }
    let profile = Profile::parse(&a.profile).ok_or_else(|| {
        let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
        format!("unknown profile '{}' ({})", a.profile, names.join(", "))
    })?;
    for target in [&a.output, &a.html_report, &a.rule_stats, &a.cpu_profile]
        .into_iter()
        .flatten()
    {
        check_target(target, a.clobber)?;
    }
    if let Some(n) = a.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?;
    }
    let terminal = std::io::stderr().is_terminal();
    let colour = terminal && !a.no_color && std::env::var_os("NO_COLOR").is_none();
    let load_start = Instant::now();
    let mut set = load_rules(&a.rules)?;
    let load_time = load_start.elapsed();
    if a.no_abbreviations {
        // As Hayabusa: without abbreviations, no default Details templates either.
        set.config.default_details.clear();
    }
    if !a.quiet {
        print_report(&set, a.rules.show_errors);
        if !set.report.errors.is_empty() && !a.rules.show_errors {
            eprintln!(
                "(run `scanner rules check` with the same -r to list the rejected rules and why)"
            );
        }
        eprintln!("rules loaded in {:.2} s", load_time.as_secs_f64());
    }
    let kind = if a.json {
        InputKind::Json
    } else {
        InputKind::Evtx
    };
    let (mut files, discover_errors) = {
        let (files, errors) = scanner_input::discover(&a.dirs, &a.files, kind);
        let errors: Vec<String> = errors.iter().map(ToString::to_string).collect();
        (files, errors)
    };
    let mut skipped = 0;
    if kind == InputKind::Evtx && !a.scan_all_files {
        let (kept, left) = scanner_input::split_by_channel(files, &set);
        files = kept;
        skipped = left.len();
    }
    let time = time_format(a);
    let filter = crate::filters::record_filter(a, &set, time.zone())?;
    let mut scanner = Scanner::new(set, profile.has_extra());
    scanner.set_field_data_mapping(!a.no_field_data_mapping);
    scanner.set_all_field_info(profile.has_all_fields());
    scanner.set_record_filter(filter);
    if a.no_prefilter {
        scanner.set_prefilter(false);
    }
    if a.rule_stats.is_some() {
        scanner.enable_rule_stats();
    }
    let profiler = match &a.cpu_profile {
        Some(_) => Some(crate::cpu_profile::start()?),
        None => None,
    };
    let progress = Arc::new(Progress::default());
    let bar = (terminal && !a.quiet).then(|| {
        scanner.set_progress(Arc::clone(&progress));
        ProgressBar::start(
            Arc::clone(&progress),
            files.len() as u64,
            files.iter().map(|f| f.size).sum(),
        )
    });
    scanner.set_recover_records(a.recover_records);
    let sort_bytes = match a.sort_memory {
        Some(mib) => crate::sort_memory::from_mib(mib)?,
        None => crate::sort_memory::default(),
    };
    scanner.set_sort_memory(Some(sort_bytes));
    let mut result = scanner.scan_sorted(&files, kind);
    if let (Some(p), Some(path)) = (profiler, &a.cpu_profile) {
        p.finish(path)?;
    }
    if let Some(b) = bar {
        b.finish();
    }
    let style = Style {
        multiline: a.multiline,
        tab_separator: a.tab_separator,
        no_abbreviations: a.no_abbreviations,
        remove_duplicates: a.remove_duplicates,
    };
    let set = scanner.rules();
    let writer = TimelineWriter::new(set, &files, time.clone(), profile)
        .with_style(style)
        .with_recovered_column(a.recover_records);
    // One pass over the sorted rows (merged from disk if they were spilled): each row
    // written is counted for the summary and the charts as it goes by.
    let rows = std::mem::take(&mut result.rows);
    if debug {
        eprintln!(
            "sort: {} detections; {} sorted runs spilled to {} (sort memory {} MiB)",
            rows.len(),
            rows.spilled_runs(),
            std::env::temp_dir().display(),
            sort_bytes >> 20
        );
    }
    let chart = |slices| rows.time_range().map(|(f, l)| Histogram::new(f, l, slices));
    let mut report_chart = a
        .html_report
        .is_some()
        .then(|| chart(crate::report_html::SLICES))
        .flatten();
    let mut terminal_chart = (a.visualize_timeline && !a.quiet)
        .then(|| chart(crate::freq_timeline::WIDTH))
        .flatten();
    let mut tally = Tally::new(set, &time);
    let on_row = |r: &DetectInfo| {
        tally.add(r);
        if report_chart.is_some() || terminal_chart.is_some() {
            let level = level_of(set, r);
            for h in [&mut report_chart, &mut terminal_chart]
                .into_iter()
                .flatten()
            {
                h.add(r.time, level);
            }
        }
    };
    let write = |out: &mut dyn Write| -> std::io::Result<usize> {
        match format {
            Format::Csv => write_pipeline::write(CsvEncoder::new(&writer), out, rows, on_row),
            Format::Json => {
                write_pipeline::write(JsonEncoder::new(&writer, false), out, rows, on_row)
            }
            Format::JsonLines => {
                write_pipeline::write(JsonEncoder::new(&writer, true), out, rows, on_row)
            }
        }
    };
    let write_start = Instant::now();
    match &a.output {
        Some(path) => {
            write_atomically(path, |f| write(&mut WriteBehind::new(f)))?;
        }
        None => {
            let stdout = std::io::stdout();
            write(&mut stdout.lock())
                .map_err(|e| format!("cannot write to standard output: {e}"))?;
        }
    }
    if debug {
        eprintln!(
            "write: timeline merged, encoded and written in {:.2} s",
            write_start.elapsed().as_secs_f64()
        );
    }
    if let Some(path) = &a.rule_stats {
        write_atomically(path, |f| {
            scanner_engine::rule_stats::write_tsv(&result, scanner.rules(), f)
        })?;
    }
    let errors: Vec<String> = discover_errors
        .iter()
        .chain(&result.errors)
        .cloned()
        .collect();
    let detections = tally.detections();
    let mut summary = tally.finish();
    summary.stats = result.stats.clone();
    summary.skipped_files = skipped;
    summary.errors = group_errors(&files, &errors);
    if let Some(path) = &a.html_report {
        summary.elapsed = started.elapsed();
        let command: Vec<String> = std::env::args().collect();
        let page =
            crate::report_html::render(&summary, report_chart.as_ref(), &time, &command.join(" "));
        write_atomically(path, |f| f.write_all(page.as_bytes()))?;
    }
    if a.visualize_timeline && !a.quiet {
        eprint!(
            "\n{}",
            crate::freq_timeline::render(terminal_chart.as_ref(), detections, &time)
        );
    }
    summary.elapsed = started.elapsed();
    if !a.quiet {
        if a.no_summary {
            for e in &errors {
                eprintln!("input error: {e}");
            }
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
    } else {
        for e in &errors {
            eprintln!("input error: {e}");
        }
    }
    std::io::stderr().flush().ok();
    Ok(if errors.is_empty() {
        exit::OK
    } else {
        exit::INPUT_ERRORS
    })
}
