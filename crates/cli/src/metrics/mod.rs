//! `eid-metrics`, `computer-metrics`, `log-metrics` and `logon-summary`: counts over
//! every record of the input, with Hayabusa 3.9.0's names, columns and row order (see
//! docs/commands.md).
//!
//! The three share the input crate's record walk ([`scanner_input::walk`]): the files in
//! parallel (EVTX chunk-parallel), each record filled into a reusable view and handed,
//! through [`Rec`], to a per-file [`Tally`]; no rules are evaluated. What they
//! print is a table on a terminal and CSV otherwise (`-o`, or a pipe): the CSV is what
//! Hayabusa writes with `-o`, and what an analyst pipes into other tools.

mod computer;
mod critical;
mod eid;
mod error;
mod extract_base64;
mod log;
mod logon;
mod span;
pub(crate) mod table;

pub use computer::run as computer;
pub use critical::run as critical_systems;
pub use eid::run as eid;
pub use extract_base64::run as extract_base64;
pub use log::run as log;
pub use logon::run as logon_summary;

use crate::args::MetricsArgs;
use crate::exit;
use crate::progress_bar::ProgressBar;
use crate::summary::group as thousands;
use crate::terminal::safe;
use error::MetricsError;
use scanner_engine::Progress;
use scanner_input::{walk, InputError, InputFile, RecordView, WalkSettings};
use scanner_rules::{Event, FieldId, FieldTable, CHANNEL, EVENT_ID};
use scanner_timeline::TimeFormat;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The System paths every record-reading command lists an event with, interned in the
/// command's own table.
pub(crate) struct SystemFields {
    pub(crate) computer: FieldId,
    pub(crate) provider: FieldId,
    pub(crate) time: FieldId,
    pub(crate) record_id: FieldId,
}

/// The record's time, as every record-reading command interns it.
const SYSTEM_TIME: &str = "Event.System.TimeCreated_attributes.SystemTime";

impl SystemFields {
    pub(crate) fn intern(table: &mut FieldTable) -> SystemFields {
        SystemFields {
            computer: table.intern_path("Event.System.Computer"),
            provider: table.intern_path("Event.System.Provider_attributes.Name"),
            time: table.intern_path(SYSTEM_TIME),
            record_id: table.intern_path("Event.System.EventRecordID"),
        }
    }
}

/// The record fields the metrics read, interned in their own table.
struct Fields {
    table: FieldTable,
    system: SystemFields,
    data: FieldId,
    share_name: FieldId,
}

impl Fields {
    fn new() -> Fields {
        let mut table = FieldTable::new();
        let system = SystemFields::intern(&mut table);
        let data = table.intern_path("Event.EventData.Data");
        let share_name = table.intern_path("Event.EventData.ShareName");
        Fields {
            table,
            system,
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
        self.first(self.fields.system.computer)
    }

    /// The provider's name.
    pub fn provider(&self) -> Option<&'a str> {
        self.first(self.fields.system.provider)
    }

    /// `SystemTime`, as written.
    pub fn system_time(&self) -> Option<&'a str> {
        self.first(self.fields.system.time)
    }

    /// `SystemTime`, parsed.
    pub fn time(&self) -> Option<jiff::Timestamp> {
        self.system_time().and_then(scanner_input::parse_timestamp)
    }

    /// `EventRecordID`.
    pub fn record_id(&self) -> Option<&'a str> {
        self.first(self.fields.system.record_id)
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

/// A metric's [`Tally`] seen by the shared walk: the walk's context carries the
/// metrics' field ids with the command's options.
#[derive(Default)]
struct Adapt<T>(T);

/// The context of a metrics walk.
struct Cx<O> {
    fields: Fields,
    opts: O,
}

impl<T: Tally> scanner_input::Tally for Adapt<T> {
    type Context = Cx<T::Opts>;

    fn add(&mut self, view: &RecordView, cx: &Self::Context) {
        let rec = Rec {
            view,
            fields: &cx.fields,
        };
        self.0.add(&rec, &cx.opts);
    }

    fn merge(&mut self, other: Self) {
        self.0.merge(other.0);
    }
}

/// A tally that takes only the records at or after a time (`--time-offset`), and the
/// records without a readable time, as Hayabusa does.
struct Since<'c, T>(T, std::marker::PhantomData<&'c ()>);

impl<T: Default> Default for Since<'_, T> {
    fn default() -> Self {
        Since(T::default(), std::marker::PhantomData)
    }
}

/// The context of a [`Since`] walk: the tally's own, where the record's time is, and the
/// start.
struct SinceCx<'c, C> {
    inner: &'c C,
    time: FieldId,
    start: jiff::Timestamp,
}

impl<'c, T: scanner_input::Tally> scanner_input::Tally for Since<'c, T>
where
    T::Context: 'c,
{
    type Context = SinceCx<'c, T::Context>;

    fn add(&mut self, view: &RecordView, cx: &Self::Context) {
        let time = view.first(cx.time).and_then(scanner_input::parse_timestamp);
        if time.is_none_or(|t| t >= cx.start) {
            self.0.add(view, cx.inner);
        }
    }

    fn merge(&mut self, other: Self) {
        self.0.merge(other.0);
    }
}

/// A metrics run's inputs, settings and results, shared by the three commands.
struct Run<'a> {
    args: &'a MetricsArgs,
    files: Vec<InputFile>,
    errors: Vec<InputError>,
    config: crate::config_names::Names,
    time: TimeFormat,
    /// `--time-offset`: the records counted begin here.
    since: Option<jiff::Timestamp>,
}

impl<'a> Run<'a> {
    /// Checks the output, starts the threads, reads the config and finds the inputs.
    fn start(args: &'a MetricsArgs) -> Result<Run<'a>, MetricsError> {
        let output: Vec<PathBuf> = output_path(args)
            .map(Path::to_path_buf)
            .into_iter()
            .collect();
        Run::start_writing(args, &output)
    }

    /// [`Run::start`] for a command that writes the files `outputs` (none: standard
    /// output).
    fn start_writing(args: &'a MetricsArgs, outputs: &[PathBuf]) -> Result<Run<'a>, MetricsError> {
        if args.report.evidence.is_empty() {
            return Err(MetricsError::NoInput);
        }
        for path in outputs {
            crate::output::check_target(path, args.report.overwrite.clobber)
                .map_err(MetricsError::Output)?;
        }
        let since = args
            .time_offset
            .as_deref()
            .map(crate::filters::offset_start)
            .transpose()
            .map_err(MetricsError::Offset)?;
        crate::config::start_threads(args.report.pool.threads).map_err(MetricsError::Threads)?;
        let config =
            crate::config_names::Names::load(args.config.as_deref(), args.report.console.quiet)
                .map_err(|e| MetricsError::ConfigNotFolder(e.0))?;
        if !args.report.console.quiet {
            for e in config.errors() {
                eprintln!("config error: {}", safe(e));
            }
        }
        let found = args.report.evidence.discover(args.report.console.quiet);
        let (files, errors) = (found.files, found.errors);
        let outs: Vec<&Path> = outputs.iter().map(PathBuf::as_path).collect();
        crate::output::refuse_inputs(&outs, files.iter().map(|f| f.path.as_path()))
            .map_err(MetricsError::Output)?;
        Ok(Run {
            args,
            files,
            errors,
            config,
            time: crate::config::time_format(&args.report.time),
            since,
        })
    }

    /// Walks the files with a progress bar on a terminal; the walk's errors join the
    /// run's.
    fn walk<T: Tally>(&mut self, opts: T::Opts) -> (Vec<T>, u64) {
        let cx = Cx {
            fields: Fields::new(),
            opts,
        };
        let (per_file, records) = self.walk_with::<Adapt<T>>(&cx.fields.table, &cx);
        (per_file.into_iter().map(|a| a.0).collect(), records)
    }

    /// [`Run::walk`] for a command with its own fields and [`scanner_input::Tally`]
    /// (`fields` must hold the record's `SystemTime`, as [`SystemFields`] interns it);
    /// with `--time-offset`, only the records from its start are counted.
    fn walk_with<T: scanner_input::Tally>(
        &mut self,
        fields: &FieldTable,
        cx: &T::Context,
    ) -> (Vec<T>, u64) {
        let Some(start) = self.since else {
            return self.walk_all::<T>(fields, cx);
        };
        let time = fields
            .get(SYSTEM_TIME)
            .expect("the metrics' field tables hold SystemTime");
        let cx = SinceCx {
            inner: cx,
            time,
            start,
        };
        let (per_file, records) = self.walk_all::<Since<T>>(fields, &cx);
        (per_file.into_iter().map(|s| s.0).collect(), records)
    }

    /// Walks every record of the files.
    fn walk_all<T: scanner_input::Tally>(
        &mut self,
        fields: &FieldTable,
        cx: &T::Context,
    ) -> (Vec<T>, u64) {
        let progress = Arc::new(Progress::default());
        let bar = (std::io::stderr().is_terminal() && !self.args.report.console.quiet).then(|| {
            ProgressBar::start(
                Arc::clone(&progress),
                self.files.len() as u64,
                self.files.iter().map(|f| f.size).sum(),
            )
        });
        let how = WalkSettings {
            fields,
            recover: self.args.report.evidence.source.recover_records,
            validate_checksums: self.args.checksums.validate_checksums,
        };
        let walked = walk::<T>(&self.files, how, cx, &|bytes, records| {
            if bar.is_some() {
                progress.file_done(bytes, records);
            }
        });
        if let Some(b) = bar {
            b.finish();
        }
        let (per_file, errors, records) = walked.into_parts();
        self.errors.extend(errors);
        (per_file, records)
    }

    /// Lists the input errors and returns the exit code.
    fn exit_code(&self) -> i32 {
        exit::reporting("input error", &self.errors)
    }

    /// Writes the table (CSV to `-o` or a pipe, aligned text on a terminal), lists the
    /// input errors and returns the exit code.
    fn finish(&self, t: &table::Table) -> Result<i32, MetricsError> {
        match output_path(self.args) {
            Some(path) => {
                crate::output::write_atomically(path, self.args.report.overwrite.clobber, |f| {
                    let mut w = std::io::BufWriter::new(f);
                    t.write_csv(&mut w, self.args.report.csv.excel_safe)?;
                    std::io::Write::flush(&mut w)
                })
                .map_err(MetricsError::Output)?
            }
            None => {
                let stdout = std::io::stdout();
                let mut out = stdout.lock();
                let written = if stdout.is_terminal() {
                    t.write_text(&mut out)
                } else {
                    t.write_csv(&mut out, self.args.report.csv.excel_safe)
                };
                written.map_err(MetricsError::Stdout)?;
            }
        }
        Ok(self.exit_code())
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
            include: args.computers.include_computers.clone(),
            exclude: args.computers.exclude_computers.clone(),
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
    args.report
        .output
        .as_deref()
        .filter(|p| *p != Path::new("-"))
}

/// Runs a command body, printing a fatal error.
fn run_with(body: impl FnOnce() -> Result<i32, MetricsError>) -> i32 {
    match body() {
        Ok(code) => code,
        Err(MetricsError::Stdout(e)) if crate::output::reader_gone(&e) => exit::OK,
        Err(e) => {
            eprintln!("error: {}", safe(&e.to_string()));
            exit::FATAL
        }
    }
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
