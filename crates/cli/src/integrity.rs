//! `log-integrity`: what the logs' structure and records say about tampering or damage
//! (`scanner_input`'s integrity findings), one row per finding, as CSV, JSON Lines or a
//! table on a terminal.
//!
//! The records are read by the record walk every command without rules shares
//! (`scanner_input::walk`, with a `RecordLog` tally); each EVTX file's header and chunks
//! are checked in the same parallel pass over the files, right after its records.

use crate::args::LogIntegrityArgs;
use crate::exit;
use crate::metrics::table::{Cell, Quote, Table};
use crate::terminal::safe;
use jiff::SignedDuration;
use scanner_input::{
    check_structure, walk, Finding, InputError, InputFile, IntegrityFields, IntegrityKind as Kind,
    RecordLog, WalkSettings,
};
use scanner_rules::FieldTable;
use scanner_timeline::TimeFormat;
use std::io::Write;
use std::path::Path;

/// How far (in seconds) a record's time may go back before it is a finding, unless
/// `--time-tolerance` says otherwise (and always with the timelines' `--integrity`).
pub(crate) const TIME_TOLERANCE: u32 = 60;

/// The columns.
const HEADER: &[&str] = &[
    "File",
    "Finding",
    "Severity",
    "Channel",
    "Chunk",
    "FirstRecordID",
    "LastRecordID",
    "FirstTime",
    "LastTime",
    "Details",
];

/// The findings about `files` (each with its file's index, in file order) and the
/// input errors met; `recover` reads records from slack space (`-x`).
pub(crate) fn findings(
    files: &[InputFile],
    recover: bool,
    tolerance: SignedDuration,
    done: &(dyn Fn(u64, u64) + Sync),
) -> (Vec<(usize, Finding)>, Vec<InputError>) {
    use rayon::prelude::*;
    let mut table = FieldTable::new();
    let fields = IntegrityFields::intern(&mut table, tolerance);
    let how = WalkSettings {
        fields: &table,
        recover,
        validate_checksums: false,
    };
    let walked = walk::<RecordLog>(files, how, &fields, done);
    let (logs, mut errors, _) = walked.into_parts();
    let per_file: Vec<(Vec<Finding>, Option<InputError>)> = files
        .par_iter()
        .zip(logs)
        .map(|(f, log)| {
            // An archive's member has its records checked, not its structure: its
            // bytes are in the archive (as --integrity does).
            let checked = f.member.is_none().then(|| check_structure(&f.path));
            let (mut found, error) = match checked {
                Some(Ok(found)) => (found, None),
                Some(Err(e)) => (Vec::new(), Some(e)),
                None => (Vec::new(), None),
            };
            found.extend(log.into_findings());
            (found, error)
        })
        .collect();
    let mut out = Vec::new();
    for (i, (found, error)) in per_file.into_iter().enumerate() {
        // The walk names a file it could not open; the check would say it again.
        if let Some(e) = error.filter(|e| !errors.iter().any(|w| w.file() == e.file())) {
            errors.push(e);
        }
        out.extend(found.into_iter().map(|f| (i, f)));
    }
    errors.sort_by_cached_key(ToString::to_string);
    (out, errors)
}

/// `log-integrity`.
pub fn run(a: &LogIntegrityArgs) -> i32 {
    match run_checked(a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", safe(&e));
            exit::FATAL
        }
    }
}

fn run_checked(a: &LogIntegrityArgs) -> Result<i32, String> {
    if a.report.evidence.is_empty() {
        return Err("no input: give -d DIR or -f FILE".into());
    }
    let output = a.report.output.as_deref().filter(|p| *p != Path::new("-"));
    if let Some(p) = output {
        crate::output::check_target(p, a.report.overwrite.clobber)?;
    }
    crate::config::start_threads(a.report.pool.threads).map_err(|e| e.to_string())?;
    let found = a.report.evidence.discover(a.report.console.quiet);
    let (files, mut errors) = (found.files, found.errors);
    crate::output::refuse_inputs(
        &output.into_iter().collect::<Vec<_>>(),
        files.iter().map(|f| f.path.as_path()),
    )?;
    let tolerance = SignedDuration::from_secs(i64::from(a.time_tolerance));
    let (found, read_errors) = findings(
        &files,
        a.report.evidence.source.recover_records,
        tolerance,
        &|_, _| {},
    );
    errors.extend(read_errors);
    let time = crate::config::time_format(&a.report.time);
    let write = |out: &mut dyn Write, terminal: bool| -> std::io::Result<()> {
        if a.json_output {
            write_json(out, &files, &found, &time)
        } else {
            let t = table(&files, &found, &time);
            if terminal {
                t.write_text(out)
            } else {
                t.write_csv(out, a.report.csv.excel_safe)
            }
        }
    };
    if !crate::output::write_report(output, a.report.overwrite.clobber, write)? {
        return Ok(exit::OK);
    }
    if !a.report.console.quiet {
        eprintln!("{}", summary(files.len(), &found));
    }
    Ok(exit::reporting("input error", &errors))
}

/// `log-integrity: 3 findings in 2 of 5 files (certain 1, likely 1, possible 1, expected 0)`.
fn summary(files: usize, found: &[(usize, Finding)]) -> String {
    use scanner_input::Severity::*;
    let n = |s| found.iter().filter(|f| f.1.severity == s).count();
    let mut with: Vec<usize> = found.iter().map(|f| f.0).collect();
    with.dedup();
    format!(
        "log-integrity: {} findings in {} of {files} files (certain {}, likely {}, possible {}, expected {})",
        found.len(),
        with.len(),
        n(Certain),
        n(Likely),
        n(Possible),
        n(Expected)
    )
}

/// The findings as a table of [`HEADER`]'s columns.
fn table(files: &[InputFile], found: &[(usize, Finding)], time: &TimeFormat) -> Table {
    let mut t = Table::new(HEADER, Quote::Necessary);
    for (i, f) in found {
        let text = |s: Option<String>| Cell::Text(s.unwrap_or_default());
        let number = |n: Option<u64>| n.map_or(Cell::Text(String::new()), Cell::Number);
        t.push(vec![
            Cell::Text(files[*i].name().display().to_string()),
            Cell::Text(f.kind.name().to_string()),
            Cell::Text(f.severity.name().to_string()),
            text(f.channel.clone()),
            number(f.kind.chunk()),
            number(f.records.map(|r| r.0)),
            number(f.records.map(|r| r.1)),
            text(f.times.map(|t| time.format(t.0))),
            text(f.times.map(|t| time.format(t.1))),
            Cell::Text(f.kind.to_string()),
        ]);
    }
    t
}

/// The findings as JSON Lines: [`HEADER`]'s fields, plus the figures of each kind.
fn write_json(
    out: &mut dyn Write,
    files: &[InputFile],
    found: &[(usize, Finding)],
    time: &TimeFormat,
) -> std::io::Result<()> {
    use serde_json::{json, Value};
    for (i, f) in found {
        let mut o = json!({
            "File": files[*i].name().display().to_string(),
            "Finding": f.kind.name(),
            "Severity": f.severity.name(),
            "Channel": f.channel,
            "Chunk": f.kind.chunk(),
            "FirstRecordID": f.records.map(|r| r.0),
            "LastRecordID": f.records.map(|r| r.1),
            "FirstTime": f.times.map(|t| time.format(t.0)),
            "LastTime": f.times.map(|t| time.format(t.1)),
            "Details": f.kind.to_string(),
        });
        let figures: Vec<(&str, Value)> = match &f.kind {
            Kind::RecordIdGap { missing } => vec![("Missing", json!(missing))],
            Kind::RecordIdRepeat { records } | Kind::Recovered { records } => {
                vec![("Records", json!(records))]
            }
            Kind::TimeBackwards { by } => vec![("Seconds", json!(by.as_secs()))],
            Kind::Stopped { for_, event_id } => vec![
                ("EventID", json!(event_id)),
                ("Seconds", json!(for_.map(|d| d.as_secs()))),
            ],
            Kind::Cleared { event_id } => vec![("EventID", json!(event_id))],
            _ => Vec::new(),
        };
        if let Value::Object(m) = &mut o {
            for (k, v) in figures {
                m.insert(k.into(), v);
            }
        }
        serde_json::to_writer(&mut *out, &o)?;
        out.write_all(b"\n")?;
    }
    Ok(())
}
