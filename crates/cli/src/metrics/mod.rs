//! `eid-metrics`, `computer-metrics` and `log-metrics`: counts over every record of the
//! input, with Hayabusa 3.9.0's names, columns and row order (see docs/commands.md).
//!
//! The three share one walk ([`walk`]): the files in parallel (EVTX chunk-parallel)
//! through the scanner's input layer, each record filled into a reusable view and
//! handed, through [`Rec`], to a per-file [`Tally`]; no rules are evaluated. What they
//! print is a table on a terminal and CSV otherwise (`-o`, or a pipe): the CSV is what
//! Hayabusa writes with `-o`, and what an analyst pipes into other tools.

mod computer;
mod critical;
mod eid;
mod error;
mod log;
mod names;
mod table;

pub use computer::run as computer;
pub use critical::run as critical_systems;
pub use eid::run as eid;
pub use log::run as log;

use crate::args::MetricsArgs;
use crate::exit;
use crate::progress_bar::ProgressBar;
use crate::terminal::safe;
use error::MetricsError;
use scanner_engine::Progress;
use scanner_input::{Flattener, InputError, InputFile, InputKind, RecordView};
use scanner_rules::{Event, FieldId, FieldTable, CHANNEL, EVENT_ID};
use scanner_timeline::{TimeFormat, TimeStyle};
use std::io::IsTerminal;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// The record fields the metrics read, interned in their own table.
struct Fields {
    table: FieldTable,
    computer: FieldId,
    provider: FieldId,
    time: FieldId,
    record_id: FieldId,
    data: FieldId,
    share_name: FieldId,
}

impl Fields {
    fn new() -> Fields {
        let mut table = FieldTable::new();
        let computer = table.intern_path("Event.System.Computer");
        let provider = table.intern_path("Event.System.Provider_attributes.Name");
        let time = table.intern_path("Event.System.TimeCreated_attributes.SystemTime");
        let record_id = table.intern_path("Event.System.EventRecordID");
        let data = table.intern_path("Event.EventData.Data");
        let share_name = table.intern_path("Event.EventData.ShareName");
        Fields {
            table,
            computer,
            provider,
            time,
            record_id,
            data,
            share_name,
        }
    }
}

/// One record, as the metrics read it.
pub struct Rec<'a> {
    view: &'a RecordView,
    fields: &'a Fields,
}

impl<'a> Rec<'a> {
    fn first(&self, f: FieldId) -> Option<&'a str> {
        self.view.first(f)
    }

    /// `Event.System.Channel`, lowercased.
    pub fn channel_lower(&self) -> Option<&'a str> {
        self.view.first_lower(CHANNEL)
    }

    /// `Event.System.EventID`, lowercased.
    pub fn event_id_lower(&self) -> Option<&'a str> {
        self.view.first_lower(EVENT_ID)
    }

    /// `Event.System.Channel`.
    pub fn channel(&self) -> Option<&'a str> {
        self.first(CHANNEL)
    }

    /// `Event.System.EventID`.
    pub fn event_id(&self) -> Option<&'a str> {
        self.first(EVENT_ID)
    }

    /// `Event.System.Computer`.
    pub fn computer(&self) -> Option<&'a str> {
        self.first(self.fields.computer)
    }

    /// The provider's name.
    pub fn provider(&self) -> Option<&'a str> {
        self.first(self.fields.provider)
    }

    /// `SystemTime`, as written.
    pub fn system_time(&self) -> Option<&'a str> {
        self.first(self.fields.time)
    }

    /// `SystemTime`, parsed.
    pub fn time(&self) -> Option<jiff::Timestamp> {
        self.system_time().and_then(scanner_input::parse_timestamp)
    }

    /// `EventRecordID`.
    pub fn record_id(&self) -> Option<&'a str> {
        self.first(self.fields.record_id)
    }

    /// `Event.EventData.ShareName`.
    pub fn share_name(&self) -> Option<&'a str> {
        self.first(self.fields.share_name)
    }

    /// The `i`th unnamed `<Data>` value of the EventData.
    pub fn data(&self, i: usize) -> Option<&'a str> {
        self.view.values(self.fields.data).nth(i).map(|v| v.raw)
    }
}

/// What a metric counts in one file (or one part of a file read in parallel).
pub trait Tally: Default + Send {
    /// What the counting needs from the command line.
    type Opts: Sync;
    /// Counts one record.
    fn add(&mut self, r: &Rec<'_>, opts: &Self::Opts);
    /// Adds what another part of the same file counted.
    fn merge(&mut self, other: Self);
}

/// What the walk found: a tally per file (in the order of the files), the input errors
/// and the number of records.
pub struct Walked<T> {
    /// One tally per input file, in the order given.
    pub per_file: Vec<T>,
    /// Problems met (file and reason); the walk went on.
    pub errors: Vec<InputError>,
    /// Records read.
    pub records: u64,
}

/// A worker's buffers and tally; its tally goes to its file's slot when it is done.
struct Worker<'s, T: Tally> {
    flat: Flattener,
    view: RecordView,
    tally: T,
    slot: &'s Mutex<T>,
}

impl<T: Tally> Drop for Worker<'_, T> {
    fn drop(&mut self) {
        let mine = std::mem::take(&mut self.tally);
        self.slot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .merge(mine);
    }
}

/// Reads every record of `files` in parallel and counts it into `T`.
fn walk<T: Tally>(
    opts: &T::Opts,
    files: &[InputFile],
    kind: InputKind,
    recover: bool,
    progress: Option<&Progress>,
) -> Walked<T> {
    use rayon::prelude::*;
    let fields = Fields::new();
    let table = &fields.table;
    let slots: Vec<Mutex<T>> = files.iter().map(|_| Mutex::new(T::default())).collect();
    let errors = Mutex::new(Vec::new());
    let records = AtomicU64::new(0);
    let report = |e: InputError| errors.lock().unwrap_or_else(|x| x.into_inner()).push(e);
    let count = |w: &mut Worker<'_, T>| {
        let rec = Rec {
            view: &w.view,
            fields: &fields,
        };
        w.tally.add(&rec, opts);
    };
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].size));
    order.par_iter().for_each(|&i| {
        let f = &files[i];
        let slot = &slots[i];
        let new_worker = || Worker {
            flat: Flattener::default(),
            view: RecordView::default(),
            tally: T::default(),
            slot,
        };
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match kind {
            InputKind::Evtx => {
                let read = scanner_input::EvtxRead {
                    recover,
                    typed: true,
                };
                let n = scanner_input::read_evtx(
                    &f.path,
                    f.size,
                    read,
                    new_worker,
                    |w, rec| match rec.content.fill(&mut w.flat, table, &mut w.view) {
                        Ok(()) => count(w),
                        Err(_) if rec.recovered => {}
                        Err(e) => report(InputError::unreadable_rendering(
                            &f.path,
                            rec.record_id.unwrap_or(0),
                            e,
                        )),
                    },
                    report,
                );
                n.records + n.recovered
            }
            InputKind::Json => {
                let mut w = new_worker();
                scanner_input::read_json(
                    &f.path,
                    &mut w,
                    |w, v| match w.flat.fill_value(v, table, &mut w.view) {
                        Ok(()) => count(w),
                        Err(e) => report(InputError::unreadable_event(&f.path, e)),
                    },
                    report,
                )
            }
        }));
        let n = run.unwrap_or_else(|p| {
            report(InputError::internal(
                &f.path,
                scanner_input::panic_message(&*p),
            ));
            0
        });
        records.fetch_add(n, Ordering::Relaxed);
        if let Some(p) = progress {
            p.file_done(f.size, n);
        }
    });
    let mut errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    errors.sort_by_cached_key(ToString::to_string);
    Walked {
        per_file: slots
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect(),
        errors,
        records: records.into_inner(),
    }
}

/// A metrics run's inputs, settings and results, shared by the three commands.
struct Run<'a> {
    args: &'a MetricsArgs,
    files: Vec<InputFile>,
    errors: Vec<InputError>,
    config: names::Names,
    time: TimeFormat,
}

impl<'a> Run<'a> {
    /// Checks the output, starts the threads, reads the config and finds the inputs.
    fn start(args: &'a MetricsArgs) -> Result<Run<'a>, MetricsError> {
        if args.dirs.is_empty() && args.files.is_empty() {
            return Err(MetricsError::NoInput);
        }
        let output = output_path(args);
        if let Some(path) = output {
            crate::output::check_target(path, args.clobber).map_err(MetricsError::Output)?;
        }
        if let Some(n) = args.threads {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build_global()
                .map_err(|e| MetricsError::Threads(n, e))?;
        }
        let config = names::Names::load(args.config.as_deref())?;
        if !args.quiet {
            for e in config.errors() {
                eprintln!("config error: {}", safe(e));
            }
        }
        let kind = input_kind(args);
        let (files, errors) = scanner_input::discover(&args.dirs, &args.files, kind);
        crate::output::refuse_inputs(
            &output.into_iter().collect::<Vec<_>>(),
            files.iter().map(|f| f.path.as_path()),
        )
        .map_err(MetricsError::Output)?;
        Ok(Run {
            args,
            files,
            errors,
            config,
            time: time_format(args),
        })
    }

    /// Walks the files with a progress bar on a terminal; the walk's errors join the
    /// run's.
    fn walk<T: Tally>(&mut self, opts: &T::Opts) -> (Vec<T>, u64) {
        let progress = Arc::new(Progress::default());
        let bar = (std::io::stderr().is_terminal() && !self.args.quiet).then(|| {
            ProgressBar::start(
                Arc::clone(&progress),
                self.files.len() as u64,
                self.files.iter().map(|f| f.size).sum(),
            )
        });
        let walked = walk::<T>(
            opts,
            &self.files,
            input_kind(self.args),
            self.args.recover_records,
            bar.is_some().then_some(&*progress),
        );
        if let Some(b) = bar {
            b.finish();
        }
        self.errors.extend(walked.errors);
        (walked.per_file, walked.records)
    }

    /// Writes the table (CSV to `-o` or a pipe, aligned text on a terminal), lists the
    /// input errors and returns the exit code.
    fn finish(&self, t: &table::Table) -> Result<i32, MetricsError> {
        match output_path(self.args) {
            Some(path) => crate::output::write_atomically(path, self.args.clobber, |f| {
                let mut w = std::io::BufWriter::new(f);
                t.write_csv(&mut w, self.args.excel_safe)?;
                std::io::Write::flush(&mut w)
            })
            .map_err(MetricsError::Output)?,
            None => {
                let stdout = std::io::stdout();
                let mut out = stdout.lock();
                let written = if stdout.is_terminal() {
                    t.write_text(&mut out)
                } else {
                    t.write_csv(&mut out, self.args.excel_safe)
                };
                written.map_err(MetricsError::Stdout)?;
            }
        }
        for e in &self.errors {
            eprintln!("input error: {}", safe(&e.to_string()));
        }
        Ok(if self.errors.is_empty() {
            exit::OK
        } else {
            exit::INPUT_ERRORS
        })
    }
}

/// `--include-computer` and `--exclude-computer`.
pub struct ComputerFilter {
    include: Vec<String>,
    exclude: Vec<String>,
}

impl ComputerFilter {
    fn new(args: &MetricsArgs) -> ComputerFilter {
        ComputerFilter {
            include: args.include_computers.clone(),
            exclude: args.exclude_computers.clone(),
        }
    }

    /// Whether a computer passes (names compared case-insensitively).
    pub fn keeps(&self, computer: Option<&str>) -> bool {
        let has = |list: &[String]| {
            computer.is_some_and(|c| list.iter().any(|n| n.eq_ignore_ascii_case(c)))
        };
        (self.include.is_empty() || has(&self.include)) && !has(&self.exclude)
    }
}

/// `-o`, unless absent or `-` (standard output).
fn output_path(args: &MetricsArgs) -> Option<&Path> {
    args.output.as_deref().filter(|p| *p != Path::new("-"))
}

fn input_kind(args: &MetricsArgs) -> InputKind {
    if args.json {
        InputKind::Json
    } else {
        InputKind::Evtx
    }
}

/// The time format: the zone (`-U` UTC, else local) and the style flags.
fn time_format(a: &MetricsArgs) -> TimeFormat {
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

/// Runs a command body, printing a fatal error.
fn run_with(body: impl FnOnce() -> Result<i32, MetricsError>) -> i32 {
    body().unwrap_or_else(|e| {
        eprintln!("error: {}", safe(&e.to_string()));
        exit::FATAL
    })
}

/// `n` with thousands separators (`1,537`), as Hayabusa writes counts.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_separated() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1537), "1,537");
        assert_eq!(thousands(1_234_567), "1,234,567");
    }
}
