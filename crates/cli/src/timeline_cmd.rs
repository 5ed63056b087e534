//! `scanner csv-timeline`.

use crate::args::TimelineArgs;
use crate::exit;
use crate::output::write_atomically;
use crate::rules_cmd::{load_rules, print_report};
use scanner_engine::input::{self, InputKind};
use scanner_engine::time::TimeFormat;
use scanner_engine::{Profile, Scanner, TimelineWriter};
use scanner_rules::Level;
use std::io::Write;
use std::time::Instant;

/// Runs the command; returns the exit code.
pub fn run(a: &TimelineArgs) -> i32 {
    match run_inner(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e}");
            exit::FATAL
        }
    }
}

fn run_inner(a: &TimelineArgs) -> Result<i32, String> {
    let started = Instant::now();
    if a.dirs.is_empty() && a.files.is_empty() {
        return Err("nothing to scan: give -d DIR or -f FILE".into());
    }
    let profile = Profile::parse(&a.profile).ok_or_else(|| {
        format!(
            "unknown profile '{}' (minimal, standard, verbose)",
            a.profile
        )
    })?;
    if let Some(o) = &a.output {
        if o.exists() && !a.clobber {
            return Err(format!(
                "{} exists; use -C/--clobber to overwrite it",
                o.display()
            ));
        }
    }
    if let Some(n) = a.threads {
        rayon::ThreadPoolBuilder::new()
            .num_threads(n.max(1))
            .build_global()
            .map_err(|e| format!("cannot start {n} threads: {e}"))?;
    }
    let load_start = Instant::now();
    let set = load_rules(&a.rules)?;
    let load_time = load_start.elapsed();
    if !a.quiet {
        print_report(&set, a.rules.show_errors);
        if !set.report.errors.is_empty() && !a.rules.show_errors {
            eprintln!(
                "(run `scanner rules check` with the same -r to list the rejected rules and why)"
            );
        }
    }
    let kind = if a.json {
        InputKind::Json
    } else {
        InputKind::Evtx
    };
    let (files, discover_errors) = input::discover(&a.dirs, &a.files, kind);
    let mut scanner = Scanner::new(set, profile.has_extra());
    if a.no_prefilter {
        scanner.set_prefilter(false);
    }
    let result = scanner.scan(&files, kind);
    let time = if a.utc {
        TimeFormat::utc()
    } else {
        TimeFormat::local()
    };
    let writer = TimelineWriter::new(scanner.rules(), &files, time, profile);
    match &a.output {
        Some(path) => write_atomically(path, |f| writer.write(f, &result.rows))?,
        None => {
            let stdout = std::io::stdout();
            writer
                .write(stdout.lock(), &result.rows)
                .map_err(|e| format!("cannot write to standard output: {e}"))?;
        }
    }
    let errors: Vec<&String> = discover_errors.iter().chain(&result.errors).collect();
    for e in &errors {
        eprintln!("input error: {e}");
    }
    if !a.quiet {
        let s = &result.stats;
        let mut per_level = [0usize; 5];
        for r in &result.rows {
            let lvl = if r.correlation {
                scanner.rules().correlations[r.rule as usize].meta.level
            } else {
                scanner.rules().rules[r.rule as usize].meta.level
            };
            per_level[lvl as usize] += 1;
        }
        let levels: Vec<String> = Level::ALL
            .iter()
            .rev()
            .map(|l| format!("{} {}", l.name(), per_level[*l as usize]))
            .collect();
        let secs = s.elapsed.as_secs_f64();
        eprintln!(
            "scanned {} files ({:.1} MiB), {} records in {:.2} s ({:.0} records/s); rules loaded in {:.2} s",
            s.files,
            s.bytes as f64 / 1048576.0,
            s.records,
            secs,
            if secs > 0.0 { s.records as f64 / secs } else { 0.0 },
            load_time.as_secs_f64()
        );
        eprintln!("detections: {} ({})", result.rows.len(), levels.join(", "));
        eprintln!(
            "input errors: {}; total time {:.2} s",
            errors.len(),
            started.elapsed().as_secs_f64()
        );
    }
    std::io::stderr().flush().ok();
    Ok(if errors.is_empty() {
        exit::OK
    } else {
        exit::INPUT_ERRORS
    })
}
