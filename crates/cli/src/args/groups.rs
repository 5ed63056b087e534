//! Argument groups that several subcommands flatten in (`#[command(flatten)]`), each
//! declared once, and the output format value.
//!
//! A group holds flags that its subcommands declare alike, word for word: a flag whose
//! help says something else in one subcommand is not in that subcommand's group but
//! declared with the subcommand. Field names are the flags' ids, which conflicts and
//! clap's messages refer to, so they are the same in every subcommand.

use super::{DISPLAY, FILTERING, GENERAL, INPUT, OUTPUT, TIME};
use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use scanner_input::InputKind;
use std::path::PathBuf;

/// `-M`, `-S`, `-b`: how a multi-item cell separates its items, and whether names are
/// abbreviated (the timelines, log-metrics, search).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct CellStyleArgs {
    /// One item per line inside multi-item cells (CSV).
    #[arg(
        short = 'M',
        long = "multiline",
        conflicts_with = "tab_separator",
        help_heading = OUTPUT
    )]
    pub multiline: bool,
    /// A tab between the items of multi-item cells (CSV).
    #[arg(short = 'S', long = "tab-separator", help_heading = OUTPUT)]
    pub tab_separator: bool,
    /// Full level, channel and provider names (in the timelines, also no default Details
    /// templates).
    #[arg(short = 'b', long = "disable-abbreviations", help_heading = OUTPUT)]
    pub no_abbreviations: bool,
}

/// `-l` and `-x`: the local logs, and records carved from slack space (the metrics
/// commands and search; the timelines declare `-x` with its column).
#[derive(Args, Debug, Clone, Copy, Default)]
pub struct LiveRecoverArgs {
    /// Read the local Windows event logs (%SystemRoot%\System32\winevt\Logs); on
    /// Windows only.
    #[arg(short = 'l', long = "live-analysis", help_heading = INPUT)]
    pub live_analysis: bool,
    /// Also read records carved from slack space and damaged chunks.
    #[arg(short = 'x', long = "recover-records", help_heading = INPUT)]
    pub recover_records: bool,
}

/// `-r` of the commands that rewrite or list rule files (expand-list, level-tuning).
#[derive(Args, Debug)]
pub struct RuleFolderArg {
    /// Rule file or folder, searched recursively for `.yml` files.
    #[arg(
        short = 'r',
        long = "rules",
        value_name = "DIR/FILE",
        default_value = "rules"
    )]
    pub rules: PathBuf,
}

/// `-d` and `-f`: the logs to read (the timelines, the metrics commands, search).
#[derive(Args, Debug)]
#[command(next_help_heading = INPUT)]
pub struct LogPaths {
    /// Folder of logs, searched recursively; repeatable.
    #[arg(short = 'd', long = "directory", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// A log file; repeatable.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// The password of encrypted archive members (zip AES or ZipCrypto); never shown.
    #[arg(long = "archive-password", value_name = "PASSWORD", value_parser = archive_password)]
    pub archive_password: Option<scanner_input::Password>,
}

/// `--archive-password` as the archive readers take it.
fn archive_password(s: &str) -> Result<scanner_input::Password, String> {
    Ok(scanner_input::Password::new(s))
}

impl LogPaths {
    /// Neither `-d` nor `-f` was given.
    pub fn is_empty(&self) -> bool {
        self.dirs.is_empty() && self.files.is_empty()
    }
}

/// `-d`, `-f` and `-J` as the timelines and the metrics commands take them.
#[derive(Args, Debug)]
pub struct InputArgs {
    /// `-d` and `-f`.
    #[command(flatten)]
    pub paths: LogPaths,
    /// Accepted for Hayabusa's command lines: every file is read by its content (EVTX,
    /// JSON/JSONL in the evtx_dump, NXLog, Winlogbeat, Velociraptor, Azure or Splunk
    /// shape, or event XML), and folders give .evtx, .json, .jsonl and .xml files alike.
    #[arg(short = 'J', long = "JSON-input", alias = "json-input", help_heading = INPUT)]
    pub json: bool,
}

impl InputArgs {
    /// The input files' kind: `-J` reads JSON event files, else EVTX.
    pub fn kind(&self) -> InputKind {
        if self.json {
            InputKind::Json
        } else {
            InputKind::Evtx
        }
    }
}

/// The evidence a command reads and how: `-d`, `-f`, `--archive-password`, `-J`, `-l`,
/// `-x` and `--target-file-ext` (the metrics commands and log-integrity).
#[derive(Args, Debug)]
pub struct EvidenceArgs {
    /// `-d`, `-f`, `-J`.
    #[command(flatten)]
    pub input: InputArgs,
    /// `-l`, `-x`.
    #[command(flatten)]
    pub source: LiveRecoverArgs,
    /// `--target-file-ext`.
    #[command(flatten)]
    pub extensions: TargetFileExt,
}

impl EvidenceArgs {
    /// Neither `-d` nor `-f` was given.
    pub fn is_empty(&self) -> bool {
        self.input.paths.is_empty()
    }

    /// The input files under `-d` and `-f` (archive members among them), what could not
    /// be read, and the files met that are not input; the not-read summary is printed
    /// unless `quiet`.
    pub fn discover(&self, quiet: bool) -> scanner_input::Discovered {
        let paths = &self.input.paths;
        let found = scanner_input::discover_all(
            &paths.dirs,
            &paths.files,
            self.input.kind(),
            &self.extensions.target_file_ext,
            paths.archive_password.as_ref(),
        );
        crate::summary::note_not_read(&found.not_read, quiet);
        found
    }
}

/// What a command that reads every record into a report takes beside its own flags:
/// the evidence, `-o`, `-C`, `-t`, `-q`/`-Q`/`-K`/`-v`, `--excel-safe` and the time
/// format (the metrics commands and log-integrity).
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// `-d`, `-f`, `-J`, `-l`, `-x`, `--target-file-ext`.
    #[command(flatten)]
    pub evidence: EvidenceArgs,
    /// Write CSV to FILE (default: a table on a terminal, CSV when piped).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        help_heading = OUTPUT
    )]
    pub output: Option<PathBuf>,
    /// `-C`.
    #[command(flatten, next_help_heading = GENERAL)]
    pub overwrite: OverwriteFile,
    /// `-t`.
    #[command(flatten)]
    pub pool: ThreadArgs,
    /// `-q`, `-Q`, `-K`, `-v`.
    #[command(flatten)]
    pub console: ConsoleArgs,
    /// `--excel-safe`.
    #[command(flatten)]
    pub csv: ExcelSafe,
    /// The timestamp format.
    #[command(flatten)]
    pub time: TimeArgs,
}

/// `-t` as the timelines and the metrics commands describe it.
#[derive(Args, Debug)]
#[command(next_help_heading = GENERAL)]
pub struct ThreadArgs {
    /// Worker threads (default, or 0: one per core; at most 4 per core).
    #[arg(short = 't', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
}

/// The timestamp format flags, Hayabusa's (and their lowercase 4.0 spellings): one at most.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = TIME)]
pub struct TimeArgs {
    /// Timestamps in UTC (default: local time).
    #[arg(short = 'U', long = "UTC", alias = "utc", group = "time_style")]
    pub utc: bool,
    /// Timestamps as ISO-8601 in UTC, to the microsecond (2016-09-21T03:40:37.088867Z).
    #[arg(
        short = 'O',
        long = "ISO-8601",
        alias = "iso-8601",
        group = "time_style"
    )]
    pub iso8601: bool,
    /// Timestamps as RFC 3339 (2016-09-21 03:40:37.088867+00:00).
    #[arg(long = "RFC-3339", alias = "rfc-3339", group = "time_style")]
    pub rfc3339: bool,
    /// Timestamps as RFC 2822 (Wed, 21 Sep 2016 03:40:37 +00:00; Sat, 7 Aug 2021 …).
    #[arg(long = "RFC-2822", alias = "rfc-2822", group = "time_style")]
    pub rfc2822: bool,
    /// Timestamps in US style (09-21-2016 03:40:37.088 AM +00:00).
    #[arg(long = "US-time", alias = "us-time", group = "time_style")]
    pub us_time: bool,
    /// Timestamps in US military style (09-21-2016 03:40:37.088 +00:00).
    #[arg(
        long = "US-military-time",
        alias = "us-military-time",
        group = "time_style"
    )]
    pub us_military_time: bool,
    /// Timestamps in European style (21-09-2016 03:40:37.088 +00:00).
    #[arg(long = "European-time", alias = "european-time", group = "time_style")]
    pub european_time: bool,
}

/// `--timeline-start` and `--timeline-end` as the timelines and search describe them
/// (logon-summary's speak of events and keep their own).
#[derive(Args, Debug)]
#[command(next_help_heading = FILTERING)]
pub struct TimeRangeArgs {
    /// Only records at or after this time ("2020-02-22 00:00:00 +09:00"; no offset: UTC).
    #[arg(long = "timeline-start", value_name = "TIME")]
    pub timeline_start: Option<String>,
    /// Only records at or before this time.
    #[arg(long = "timeline-end", value_name = "TIME")]
    pub timeline_end: Option<String>,
}

/// `--include-computer` and `--exclude-computer` (the timelines, the metrics commands).
#[derive(Args, Debug)]
#[command(next_help_heading = FILTERING)]
pub struct ComputerArgs {
    /// Only records of these computers (case-insensitive); comma-separated.
    #[arg(long = "include-computer", value_name = "NAME", value_delimiter = ',')]
    pub include_computers: Vec<String>,
    /// No records of these computers; comma-separated.
    #[arg(long = "exclude-computer", value_name = "NAME", value_delimiter = ',')]
    pub exclude_computers: Vec<String>,
}

/// Hayabusa's `--target-file-ext` (the timelines, the metrics commands, search).
#[derive(Args, Debug, Default)]
#[command(next_help_heading = INPUT)]
pub struct TargetFileExt {
    /// Also take files with these extensions (e.g. evtx_data) from the -d folders, read
    /// as EVTX; space- or comma-separated.
    #[arg(
        long = "target-file-ext",
        value_name = "EXT",
        num_args = 1..,
        value_delimiter = ','
    )]
    pub target_file_ext: Vec<String>,
}

/// Hayabusa's `-V`/`--validate-checksums` (3.7.0 on): as its `evtx` parser's
/// `validate_checksums`, a chunk is read only when its header and records CRC32s match.
#[derive(Args, Debug, Default)]
#[command(next_help_heading = GENERAL)]
pub struct ValidateChecksums {
    /// Read an EVTX chunk only when its header and records CRC32s match; the others are
    /// reported (input errors) and not read.
    #[arg(short = 'V', long = "validate-checksums")]
    pub validate_checksums: bool,
}

/// `-C` of a command that writes one file (the metrics commands, search, `evtx write`).
#[derive(Args, Debug)]
pub struct OverwriteFile {
    /// Overwrite the output file if it exists.
    #[arg(short = 'C', long = "clobber")]
    pub clobber: bool,
}

/// `-C` of a command that writes several files (the timelines: `-o`, `-H`,
/// `--rule-stats`, …; `evtx generate`: the log and its ground truth).
#[derive(Args, Debug)]
pub struct OverwriteFiles {
    /// Overwrite the output files if they exist.
    #[arg(short = 'C', long = "clobber")]
    pub clobber: bool,
}

/// `--excel-safe` as the metrics commands and search describe it (the timelines' help
/// says more: their TSV too, and which cells are kept).
#[derive(Args, Debug)]
#[command(next_help_heading = OUTPUT)]
pub struct ExcelSafe {
    /// CSV cells a spreadsheet would run as a formula written with a leading `'`.
    #[arg(long = "excel-safe")]
    pub excel_safe: bool,
}

/// What the metrics commands and search print on standard error: `-q`, and Hayabusa's
/// `-Q`, `-K` and `-v`, accepted.
#[derive(Args, Debug)]
#[command(next_help_heading = DISPLAY)]
pub struct ConsoleArgs {
    /// Quiet: no totals or progress bar on standard error.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// `-Q` and `-K`.
    #[command(flatten)]
    pub accepted: AcceptedConsoleFlags,
    /// Accepted for Hayabusa's command lines (its verbose messages).
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
}

/// Hayabusa's `-Q` and `-K`, accepted so that its command lines run: scanner keeps no
/// error log and these commands print no colours (the metrics commands, search,
/// update-rules).
#[derive(Args, Debug)]
pub struct AcceptedConsoleFlags {
    /// Accepted for Hayabusa's command lines: scanner keeps no error log file.
    #[arg(short = 'Q', long = "quiet-errors")]
    pub quiet_errors: bool,
    /// Accepted for Hayabusa's command lines: scanner prints no colours here.
    #[arg(short = 'K', long = "no-color")]
    pub no_color: bool,
}

/// `-q` and `-K` of the commands that print a line per change (level-tuning,
/// set-default-profile).
#[derive(Args, Debug)]
pub struct QuietArgs {
    /// Quiet: print nothing but errors.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// `-K`.
    #[command(flatten)]
    pub color: NoColorFlag,
}

/// Hayabusa's `-K` where nothing is coloured anyway (expand-list, level-tuning,
/// set-default-profile).
#[derive(Args, Debug)]
pub struct NoColorFlag {
    /// Accepted for Hayabusa's command lines: no colours are printed.
    #[arg(short = 'K', long = "no-color")]
    pub no_color: bool,
}

/// The file format of a timeline or of search's results: dfir-timeline's `-t` (its
/// spellings `csv`, `json`, `jsonl`, any case), else the command and its `-J`/`-L`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    /// CSV.
    Csv,
    /// One JSON array.
    Json,
    /// JSON Lines.
    JsonLines,
}

// Written out rather than derived: a derived `ValueEnum` would take the variants' doc
// comments as help for each value, and `--help` would list them instead of the
// one-line `[possible values: csv, json, jsonl]` Hayabusa's users know.
impl ValueEnum for OutputFormat {
    fn value_variants<'a>() -> &'a [Self] {
        &[
            OutputFormat::Csv,
            OutputFormat::Json,
            OutputFormat::JsonLines,
        ]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(PossibleValue::new(match self {
            OutputFormat::Csv => "csv",
            OutputFormat::Json => "json",
            OutputFormat::JsonLines => "jsonl",
        }))
    }
}
