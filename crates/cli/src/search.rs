//! `scanner search`: every event that holds keywords (`-k`, any of them, or all with
//! `-a`; `-i` ignores case) or matches a regex (`-r`), and whose fields pass the `-F
//! Field:value` filters and the time range, listed with Hayabusa 3.9.0's columns as CSV,
//! a JSON array (`-J`) or JSON Lines (`-L`). No rules are loaded.
//!
//! What a keyword is matched against: each value of the record, System fields
//! included, one at a time (never across two values, never the field names). Hayabusa
//! 3.9.0 matched the record's compact JSON text instead; docs/commands.md says where the
//! two differ. Matching allocates nothing per record: one Aho-Corasick automaton over
//! every keyword (lowercased once, matched against the view's lowercased values with
//! `-i`), or one compiled regex; only the events found are rendered.

mod filter;
mod names;
mod output;

use crate::args::SearchArgs;
use crate::exit;
use crate::metrics::SystemFields;
use crate::progress_bar::ProgressBar;
use crate::summary::noun;
use crate::terminal::safe;
use aho_corasick::AhoCorasick;
use filter::FieldFilter;
use jiff::Timestamp;
use names::Names;
use output::Hit;
use regex::Regex;
use scanner_engine::{AllFields, ItemsBuf, Progress};
use scanner_input::{RecordView, Tally, WalkSettings};
use scanner_rules::{FieldTable, CHANNEL, EVENT_ID};
use std::fmt;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why the command could not run.
#[derive(Debug)]
pub enum SearchError {
    /// Neither `-d` nor `-f`.
    NoInput,
    /// `-t N`: the thread pool did not start.
    Threads(crate::config::ThreadsError),
    /// `-r`: not a regular expression.
    Regex(regex::Error),
    /// `-k`: the keywords could not be compiled.
    Keywords(aho_corasick::BuildError),
    /// `-F`: not `Field:value`.
    Filter(String),
    /// `--timeline-start` / `--timeline-end`: not a time.
    Time(String),
    /// `-c DIR` is not a folder.
    ConfigNotFolder(PathBuf),
    /// The output was refused or could not be written (the message names the file).
    Output(String),
    /// Standard output could not be written.
    Stdout(std::io::Error),
}

impl fmt::Display for SearchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SearchError::NoInput => f.write_str("nothing to search: give -d DIR or -f FILE"),
            SearchError::Threads(e) => write!(f, "{e}"),
            SearchError::Regex(e) => write!(f, "-r: not a regular expression: {e}"),
            SearchError::Keywords(e) => write!(f, "-k: {e}"),
            SearchError::Filter(s) => {
                write!(f, "-F '{s}': expected Field:value (e.g. -F EventID:4624)")
            }
            SearchError::Time(m) => f.write_str(m),
            SearchError::ConfigNotFolder(d) => write!(f, "-c {}: not a folder", d.display()),
            SearchError::Output(m) => f.write_str(m),
            SearchError::Stdout(e) => write!(f, "cannot write to standard output: {e}"),
        }
    }
}

impl std::error::Error for SearchError {}

/// Runs the command; returns the exit code.
pub fn run(a: &SearchArgs) -> i32 {
    match run_inner(a) {
        Ok(code) => code,
        Err(SearchError::Stdout(e)) if crate::output::reader_gone(&e) => exit::OK,
        Err(e) => {
            eprintln!("error: {}", safe(&e.to_string()));
            exit::FATAL
        }
    }
}

/// What an event must hold.
enum Matcher {
    /// Keywords: any, or all (`-a`) of them; against lowercased values with `-i`.
    Keywords {
        ac: AhoCorasick,
        count: usize,
        all: bool,
        lower: bool,
    },
    /// A regex, anywhere in a value.
    Regex(Regex),
}

impl Matcher {
    fn new(a: &SearchArgs) -> Result<Matcher, SearchError> {
        if let Some(r) = &a.regex {
            return Regex::new(r)
                .map(Matcher::Regex)
                .map_err(SearchError::Regex);
        }
        let keys: Vec<String> = a
            .keywords
            .iter()
            .map(|k| {
                if a.ignore_case {
                    k.to_lowercase()
                } else {
                    k.clone()
                }
            })
            .collect();
        let ac = AhoCorasick::new(&keys).map_err(SearchError::Keywords)?;
        Ok(Matcher::Keywords {
            ac,
            count: keys.len(),
            all: a.and_logic,
            lower: a.ignore_case,
        })
    }

    /// Whether `view` matches; `seen` is a reused buffer (one flag per keyword).
    fn is_match(&self, view: &RecordView, seen: &mut Vec<bool>) -> bool {
        match self {
            Matcher::Regex(re) => view.leaves().any(|(_, v)| re.is_match(v)),
            Matcher::Keywords {
                ac,
                count,
                all,
                lower,
            } => {
                if *lower {
                    keywords_in(ac, *count, *all, view.values_lower(), seen)
                } else {
                    keywords_in(ac, *count, *all, view.leaves().map(|(_, v)| v), seen)
                }
            }
        }
    }
}

/// Whether `values` hold any keyword (all of them with `all`), each keyword found
/// inside one value.
fn keywords_in<'v>(
    ac: &AhoCorasick,
    count: usize,
    all: bool,
    mut values: impl Iterator<Item = &'v str>,
    seen: &mut Vec<bool>,
) -> bool {
    if !all || count == 1 {
        return values.any(|v| ac.is_match(v));
    }
    seen.clear();
    seen.resize(count, false);
    let mut left = count;
    for v in values {
        for m in ac.find_overlapping_iter(v) {
            let slot = &mut seen[m.pattern().as_usize()];
            if !*slot {
                *slot = true;
                left -= 1;
                if left == 0 {
                    return true;
                }
            }
        }
    }
    false
}

/// The fields a found event is listed with.
struct Fields {
    table: FieldTable,
    system: SystemFields,
}

impl Fields {
    fn new() -> Fields {
        let mut table = FieldTable::new();
        let system = SystemFields::intern(&mut table);
        Fields { table, system }
    }
}

/// What every tally of the walk shares: the tests and the names to render with.
struct Search {
    matcher: Matcher,
    filters: Vec<FieldFilter>,
    fields: Fields,
    range: (Option<Timestamp>, Option<Timestamp>),
    names: Names,
}

/// One worker's findings and buffers.
#[derive(Default)]
struct Found {
    hits: Vec<Hit>,
    seen: Vec<bool>,
    all_fields: AllFields,
    /// The current event's AllFieldInfo.
    items: ItemsBuf,
}

impl Tally for Found {
    type Context = Search;

    fn add(&mut self, view: &RecordView, cx: &Search) {
        if !cx.filters.iter().all(|f| f.keeps(view)) {
            return;
        }
        let time = view
            .first(cx.fields.system.time)
            .and_then(scanner_input::parse_timestamp);
        if cx.range.0.is_some() || cx.range.1.is_some() {
            let Some(t) = time else {
                return;
            };
            if cx.range.0.is_some_and(|s| t < s) || cx.range.1.is_some_and(|e| t > e) {
                return;
            }
        }
        if !cx.matcher.is_match(view, &mut self.seen) {
            return;
        }
        let provider = view.first(cx.fields.system.provider).unwrap_or("");
        let event_id = view.first(EVENT_ID).unwrap_or("-");
        let pairs = cx.names.field_names(provider, event_id);
        self.items.clear();
        self.all_fields.render(
            view,
            |k, out| names::short_name(k, pairs, out),
            &mut self.items,
        );
        let record_id = view.first(cx.fields.system.record_id).unwrap_or("");
        self.hits.push(Hit {
            // Set once the walk is done (a tally does not know its file).
            file: 0,
            time,
            record_id: record_id.parse().unwrap_or(u64::MAX),
            record_id_text: if record_id.is_empty() { "-" } else { record_id }.into(),
            computer: view
                .first(cx.fields.system.computer)
                .unwrap_or("n/a")
                .into(),
            channel: view.first(CHANNEL).unwrap_or("").into(),
            event_id: event_id.into(),
            all_fields: self.items.to_items(),
        });
    }

    fn merge(&mut self, other: Found) {
        self.hits.extend(other.hits);
    }
}

fn output_path(a: &SearchArgs) -> Option<&Path> {
    a.report.output.as_deref().filter(|p| *p != Path::new("-"))
}

fn run_inner(a: &SearchArgs) -> Result<i32, SearchError> {
    if a.report.evidence.is_empty() {
        return Err(SearchError::NoInput);
    }
    if let Some(path) = output_path(a) {
        crate::output::check_target(path, a.report.overwrite.clobber)
            .map_err(SearchError::Output)?;
    }
    crate::config::start_threads(a.report.pool.threads).map_err(SearchError::Threads)?;
    let matcher = Matcher::new(a)?;
    let time = crate::config::time_format(&a.report.time);
    let tz = time.zone().clone();
    let parse = |s: &Option<String>, flag: &str| {
        s.as_deref()
            .map(|s| crate::filters::parse_time(s, &tz))
            .transpose()
            .map_err(|e| SearchError::Time(format!("{flag}: {e}")))
    };
    let start = match &a.time_offset {
        Some(o) => Some(crate::filters::offset_start(o).map_err(SearchError::Time)?),
        None => parse(&a.range.timeline_start, "--timeline-start")?,
    };
    let range = (start, parse(&a.range.timeline_end, "--timeline-end")?);
    let names = Names::load(a.config.as_deref(), a.report.console.quiet)?;
    if !a.report.console.quiet {
        for e in names.errors() {
            eprintln!("config error: {}", safe(e));
        }
    }
    let mut fields = Fields::new();
    let filters = a
        .filters
        .iter()
        .map(|f| FieldFilter::parse(f, names.aliases(), &mut fields.table))
        .collect::<Result<Vec<_>, _>>()?;
    let found = a.report.evidence.discover(a.report.console.quiet);
    let (files, mut errors) = (found.files, found.errors);
    crate::output::refuse_inputs(
        &output_path(a).into_iter().collect::<Vec<_>>(),
        files.iter().map(|f| f.path.as_path()),
    )
    .map_err(SearchError::Output)?;
    let progress = Arc::new(Progress::default());
    let bar = (std::io::stderr().is_terminal() && !a.report.console.quiet).then(|| {
        ProgressBar::start(
            Arc::clone(&progress),
            files.len() as u64,
            files.iter().map(|f| f.size).sum(),
        )
    });
    let cx = Search {
        matcher,
        filters,
        fields,
        range,
        names,
    };
    let how = WalkSettings {
        fields: &cx.fields.table,
        recover: a.report.evidence.source.recover_records,
        validate_checksums: a.checksums.validate_checksums,
    };
    let done = |bytes: u64, records: u64| {
        if bar.is_some() {
            progress.file_done(bytes, records);
        }
    };
    let (per_file, walk_errors, records) =
        scanner_input::walk::<Found>(&files, how, &cx, &done).into_parts();
    if let Some(b) = bar {
        b.finish();
    }
    let mut hits: Vec<Hit> = Vec::new();
    for (i, found) in per_file.into_iter().enumerate() {
        hits.extend(found.hits.into_iter().map(|mut h| {
            h.file = i as u32;
            h
        }));
    }
    output::order(&mut hits, a.sort);
    let found = hits.len();
    output::write(a, &files, &cx.names, &time, hits)?;
    errors.extend(walk_errors);
    for run in scanner_input::collapse_errors(&errors) {
        let line = format!("{}: {}", run.file().display(), run.message());
        eprintln!("input error: {}", safe(&line));
    }
    if !a.report.console.quiet {
        let (n, bad) = (files.len() as u64, errors.len() as u64);
        eprintln!(
            "searched {n} {}, {records} {}: {found} {} found; {bad} input {}",
            noun(n, "file", "files"),
            noun(records, "record", "records"),
            noun(found as u64, "event", "events"),
            noun(bad, "error", "errors")
        );
    }
    Ok(if errors.is_empty() {
        exit::OK
    } else {
        exit::INPUT_ERRORS
    })
}
