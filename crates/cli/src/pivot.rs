//! `scanner pivot-keywords-list`: the values of the detected events' pivot fields (users,
//! logon IDs, IP addresses, processes, command lines, …), one list per category of the
//! rules config's `pivot_keywords.txt`, as Hayabusa 3.9.0 writes them
//! (`PREFIX-<Category>.txt`, a `Category: ( %Field% … ):` header, then one value a
//! line, each once).
//!
//! Two passes: the timeline's scan (the same rules, level and record filters) names the
//! records that matched a rule, by file and EventRecordID; a second walk over the files
//! that had any reads those records' pivot fields. The scan's rows carry no record, and
//! reading a few fields of the matched records again is cheaper than rendering every
//! field of every detection.

use crate::args::PivotArgs;
use crate::exit;
use crate::rule_choice::RuleChoice;
use crate::scan_setup::ScanSetup;
use crate::summary::noun;
use crate::terminal::safe;
use scanner_engine::{DetectInfo, Origin, Progress, RuleRef};
use scanner_input::{InputFile, RecordView, Tally, WalkSettings};
use scanner_rules::{FieldId, FieldTable, FxHashMap, RuleSet};
use scanner_timeline::Profile;
use std::collections::HashSet;
use std::fmt;
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The built-in `pivot_keywords.txt` (the project's `rules/config/`).
const BUILTIN: &str = include_str!("../../../rules/config/pivot_keywords.txt");

/// Values never listed: Hayabusa leaves out the empty marker and the loopback addresses.
const SKIPPED: [&str; 3] = ["-", "127.0.0.1", "::1"];

/// Why the command could not run.
#[derive(Debug)]
pub enum PivotError {
    /// The scan could not run (the timeline's message).
    Scan(String),
    /// `pivot_keywords.txt` could not be read.
    Config(PathBuf, std::io::Error),
    /// `pivot_keywords.txt` names no category.
    EmptyConfig(PathBuf),
    /// An output file was refused or could not be written (the message names it).
    Output(String),
    /// Standard output could not be written.
    Stdout(std::io::Error),
}

impl fmt::Display for PivotError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PivotError::Scan(m) | PivotError::Output(m) => f.write_str(m),
            PivotError::Config(p, e) => write!(f, "{}: {e}", p.display()),
            PivotError::EmptyConfig(p) => {
                write!(f, "{}: no `Category.Field` line", p.display())
            }
            PivotError::Stdout(e) => write!(f, "cannot write to standard output: {e}"),
        }
    }
}

impl std::error::Error for PivotError {}

/// One category: its name, its fields (as named in the config) and the values found,
/// each once, in the order found.
#[derive(Debug, Default)]
pub struct Category {
    name: String,
    fields: Vec<String>,
    values: Vec<String>,
}

impl Category {
    /// Hayabusa's text: the header, then one value a line.
    pub fn render(&self) -> String {
        let mut out = format!("{}: ( ", self.name);
        for f in &self.fields {
            out.push('%');
            out.push_str(f);
            out.push_str("% ");
        }
        out.push_str("):");
        if !self.values.is_empty() {
            out.push('\n');
        }
        for v in &self.values {
            out.push_str(v);
            out.push('\n');
        }
        out
    }
}

/// Reads `Category.Field` lines (blank lines and `#` comments skipped) into categories,
/// in the order first named.
pub fn parse_config(text: &str) -> Vec<Category> {
    let mut out: Vec<Category> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((cat, field)) = line.split_once('.') else {
            continue;
        };
        let (cat, field) = (cat.trim(), field.trim());
        if cat.is_empty() || field.is_empty() {
            continue;
        }
        match out.iter_mut().find(|c| c.name == cat) {
            Some(c) => {
                if !c.fields.iter().any(|f| f == field) {
                    c.fields.push(field.to_string());
                }
            }
            None => out.push(Category {
                name: cat.to_string(),
                fields: vec![field.to_string()],
                values: Vec::new(),
            }),
        }
    }
    out
}

/// The config file: `-c DIR`'s, else the first rules folder's `config/` (the rule set
/// the scan runs: `-r`, else `./rules`, else the set `update-rules` installed), else
/// the built-in one. Returns the text and where it came from (None: built in).
fn config_text(
    config: Option<&Path>,
    choice: &RuleChoice,
) -> Result<(String, Option<PathBuf>), PivotError> {
    let candidates: Vec<PathBuf> = match config {
        Some(dir) => vec![dir.join("pivot_keywords.txt")],
        None => choice
            .paths()
            .iter()
            .filter(|r| r.is_dir())
            .map(|r| r.join("config").join("pivot_keywords.txt"))
            .filter(|p| p.is_file())
            .take(1)
            .collect(),
    };
    match candidates.into_iter().next() {
        Some(p) => match std::fs::read_to_string(&p) {
            Ok(t) => Ok((t, Some(p))),
            Err(e) => Err(PivotError::Config(p, e)),
        },
        None => Ok((BUILTIN.to_string(), None)),
    }
}

/// Runs the command; returns the exit code.
pub fn run(a: &PivotArgs) -> i32 {
    match run_inner(a) {
        Ok(code) => code,
        Err(PivotError::Stdout(e)) if crate::output::reader_gone(&e) => exit::OK,
        Err(e) => {
            eprintln!("error: {}", safe(&e.to_string()));
            exit::FATAL
        }
    }
}

/// The file of a category: `PREFIX-<Category>.txt`.
pub fn file_name(prefix: &Path, category: &str) -> PathBuf {
    let mut name = prefix.as_os_str().to_owned();
    name.push("-");
    name.push(category);
    name.push(".txt");
    PathBuf::from(name)
}

fn run_inner(a: &PivotArgs) -> Result<i32, PivotError> {
    let t = &a.timeline;
    let setup = ScanSetup::new(t).map_err(PivotError::Scan)?;
    // The lists have no columns to add: -G is the timelines' (as in Hayabusa 4.0).
    if t.hayabusa.geo_ip.is_some() {
        return Err(PivotError::Scan(
            "-G/--geo-ip adds timeline columns: pivot-keywords-list writes none; run without it"
                .into(),
        ));
    }
    // The timeline's choice of rule set: -r, else ./rules (Hayabusa 3.9.0's
    // pivot-keywords-list has no -r and always reads ./rules), else the installed set.
    let choice = setup.rule_choice();
    let (text, from) = config_text(t.rules.config.as_deref(), &choice)?;
    let mut categories = parse_config(&text);
    if categories.is_empty() {
        return Err(PivotError::EmptyConfig(
            from.unwrap_or_else(|| PathBuf::from("built-in pivot_keywords.txt")),
        ));
    }
    let prefix = t.output.as_deref().filter(|p| *p != Path::new("-"));
    if let Some(prefix) = prefix {
        for c in &categories {
            crate::output::check_target(&file_name(prefix, &c.name), t.overwrite.clobber)
                .map_err(PivotError::Output)?;
        }
    }
    setup.start_threads().map_err(PivotError::Scan)?;
    let set = setup.load_rules(&choice).map_err(PivotError::Scan)?;
    if !t.quiet {
        crate::rules_cmd::print_report(&set, t.rules.show_errors);
    }
    let inputs = setup.inputs(&set).map_err(PivotError::Scan)?;
    // The rows are only read for the records they name: the smallest profile.
    let (scanner, mut result, _) = setup
        .scan(Profile::Minimal, set, &inputs.files, false, false)
        .map_err(PivotError::Scan)?;
    let rows = std::mem::take(&mut result.rows)
        .into_vec()
        .map_err(|e| PivotError::Scan(format!("cannot read the sorted detections back: {e}")))?;
    let matched = matched_records(&rows, inputs.files.len());
    let fields = Fields::new(scanner.rules(), &categories);
    // Only the files with detections are read again.
    let to_read: Vec<usize> = (0..inputs.files.len())
        .filter(|&i| !matched[i].is_empty())
        .collect();
    let files: Vec<InputFile> = to_read.iter().map(|&i| inputs.files[i].clone()).collect();
    let progress = Arc::new(Progress::default());
    let bar = (std::io::stderr().is_terminal() && !t.quiet).then(|| {
        crate::progress_bar::ProgressBar::start(
            Arc::clone(&progress),
            files.len() as u64,
            files.iter().map(|f| f.size).sum(),
        )
    });
    let how = WalkSettings {
        fields: &fields.table,
        recover: t.recover_records,
        validate_checksums: t.hayabusa.checksums.validate_checksums,
    };
    let cx = Context {
        record_id: fields.record_id,
        slots: fields.slots.clone(),
        any_file: matched.iter().flatten().copied().collect(),
    };
    let done = |bytes: u64, records: u64| {
        if bar.is_some() {
            progress.file_done(bytes, records);
        }
    };
    let (per_file, walk_errors, _) =
        scanner_input::walk::<Found>(&files, how, &cx, &done).into_parts();
    if let Some(b) = bar {
        b.finish();
    }
    let mut listed: Vec<HashSet<String>> = categories.iter().map(|_| HashSet::default()).collect();
    for (found, &file) in per_file.into_iter().zip(&to_read) {
        for (slot, value) in found.in_record_order(&matched[file]) {
            let ci = fields.category_of[slot];
            if listed[ci].insert(value.clone()) {
                categories[ci].values.push(value);
            }
        }
    }
    write(a, prefix, &categories)?;
    let errors: Vec<_> = inputs
        .errors
        .iter()
        .chain(&result.errors)
        .chain(&walk_errors)
        .collect();
    for run in scanner_input::collapse_errors(errors.iter().copied()) {
        let line = format!("{}: {}", run.file().display(), run.message());
        eprintln!("input error: {}", safe(&line));
    }
    if !t.quiet {
        let total: usize = categories.iter().map(|c| c.values.len()).sum();
        let n = |v: usize| v as u64;
        eprintln!(
            "{} {} in {} {}; {} pivot {} in {} {}",
            rows.len(),
            noun(n(rows.len()), "detection", "detections"),
            to_read.len(),
            noun(n(to_read.len()), "file", "files"),
            total,
            noun(n(total), "keyword", "keywords"),
            categories.len(),
            noun(n(categories.len()), "category", "categories")
        );
    }
    Ok(if errors.is_empty() {
        exit::OK
    } else {
        exit::INPUT_ERRORS
    })
}

/// The EventRecordIDs of the records a rule matched, per input file (correlations
/// name no single record and are left out, as Hayabusa lists only the records its
/// detection rules select; so are integrity findings).
fn matched_records(rows: &[DetectInfo], files: usize) -> Vec<HashSet<u64>> {
    let mut out = vec![HashSet::default(); files];
    for r in rows {
        // An integrity finding (`--integrity`) is no record a rule matched.
        if matches!(r.rule, RuleRef::Integrity(_)) {
            continue;
        }
        if let Origin::Record { file, record_id } = r.origin {
            if let Some(s) = out.get_mut(file as usize) {
                s.insert(record_id);
            }
        }
    }
    out
}

/// The fields the second walk reads: EventRecordID and each pivot field (its
/// `eventkey_alias.txt` path, else `Event.EventData.<Field>`), one slot per
/// (category, field).
struct Fields {
    table: FieldTable,
    record_id: FieldId,
    slots: Vec<FieldId>,
    category_of: Vec<usize>,
}

impl Fields {
    fn new(set: &RuleSet, categories: &[Category]) -> Fields {
        let aliases: FxHashMap<&str, &str> = set
            .config()
            .aliases
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut table = FieldTable::new();
        let record_id = table.intern_path("Event.System.EventRecordID");
        let mut slots = Vec::new();
        let mut category_of = Vec::new();
        for (ci, c) in categories.iter().enumerate() {
            for f in &c.fields {
                let path = match aliases.get(f.as_str()) {
                    Some(p) => (*p).to_string(),
                    None => format!("Event.EventData.{f}"),
                };
                slots.push(table.intern_path(&path));
                category_of.push(ci);
            }
        }
        Fields {
            table,
            record_id,
            slots,
            category_of,
        }
    }
}

/// What the second walk's tallies share: the fields, and the EventRecordIDs detected in
/// any of the files read (a tally does not know its file: each record of these ids is
/// kept, and sorted out per file once the walk is done).
struct Context {
    record_id: FieldId,
    slots: Vec<FieldId>,
    any_file: HashSet<u64>,
}

/// One file's (or worker's) pivot values: (EventRecordID, slot, value) of each record
/// whose id was detected in some file.
#[derive(Default)]
struct Found {
    values: Vec<(u64, usize, String)>,
}

impl Found {
    /// The (slot, value) pairs of the records detected in this file, in record order
    /// and then slot order.
    fn in_record_order(mut self, matched: &HashSet<u64>) -> impl Iterator<Item = (usize, String)> {
        self.values.retain(|(id, _, _)| matched.contains(id));
        self.values.sort_by_key(|&(id, slot, _)| (id, slot));
        self.values.into_iter().map(|(_, slot, v)| (slot, v))
    }
}

impl Tally for Found {
    type Context = Context;

    fn add(&mut self, view: &RecordView, cx: &Context) {
        let Some(id) = view.first(cx.record_id).and_then(|v| v.parse::<u64>().ok()) else {
            return;
        };
        if !cx.any_file.contains(&id) {
            return;
        }
        for (slot, &field) in cx.slots.iter().enumerate() {
            match view.first(field) {
                Some(v) if !SKIPPED.contains(&v) => self.values.push((id, slot, v.to_string())),
                _ => {}
            }
        }
    }

    fn merge(&mut self, other: Found) {
        self.values.extend(other.values);
    }
}

/// Writes each category to `PREFIX-<Category>.txt`, or all to standard output.
fn write(a: &PivotArgs, prefix: Option<&Path>, categories: &[Category]) -> Result<(), PivotError> {
    match prefix {
        Some(prefix) => {
            for c in categories {
                let text = c.render();
                crate::output::write_atomically(
                    &file_name(prefix, &c.name),
                    a.timeline.overwrite.clobber,
                    |f| f.write_all(text.as_bytes()),
                )
                .map_err(PivotError::Output)?;
            }
        }
        None => {
            let stdout = std::io::stdout();
            let terminal = stdout.is_terminal();
            let mut out = stdout.lock();
            for c in categories {
                let text = c.render();
                let text = if terminal {
                    safe(&text).to_string()
                } else {
                    text
                };
                writeln!(out, "{text}").map_err(PivotError::Stdout)?;
            }
        }
    }
    Ok(())
}
