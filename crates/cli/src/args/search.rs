//! `search`'s flags (Hayabusa 3.9.0's). Its `-J` is JSON output and its `-t` help is
//! its own, so it takes `-d`/`-f` ([`LogPaths`]) but not the timelines' input and thread
//! groups.

use super::groups::{
    CellStyleArgs, ConsoleArgs, ExcelSafe, LiveRecoverArgs, LogPaths, OutputFormat, OverwriteFile,
    TargetFileExt, TimeArgs, TimeRangeArgs, ValidateChecksums,
};
use super::{FILTERING, GENERAL, INPUT, OUTPUT};
use clap::Args;
use scanner_input::InputKind;
use std::path::PathBuf;

/// `search` options (Hayabusa 3.9.0's).
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// `-d`, `-f`.
    #[command(flatten)]
    pub paths: LogPaths,
    /// Accepted for Hayabusa's command lines: every file is read by its content, and
    /// folders give .evtx, .json, .jsonl and .xml files alike (long form only: in
    /// `search`, `-J` is Hayabusa's JSON output).
    #[arg(long = "JSON-input", help_heading = INPUT)]
    pub json_input: bool,
    /// `-l`, `-x`.
    #[command(flatten)]
    pub source: LiveRecoverArgs,
    /// `--target-file-ext`.
    #[command(flatten)]
    pub extensions: TargetFileExt,
    /// A keyword an event must hold (any of them; all with -a); repeatable.
    #[arg(
        short = 'k',
        long = "keyword",
        value_name = "KEYWORD",
        required_unless_present = "regex",
        conflicts_with = "regex",
        help_heading = FILTERING
    )]
    pub keywords: Vec<String>,
    /// A regular expression an event must match (Rust regex syntax; case-sensitive
    /// unless it starts with `(?i)`).
    #[arg(
        short = 'r',
        long = "regex",
        value_name = "REGEX",
        help_heading = FILTERING
    )]
    pub regex: Option<String>,
    /// Keywords ignore case.
    #[arg(
        short = 'i',
        long = "ignore-case",
        conflicts_with = "regex",
        help_heading = FILTERING
    )]
    pub ignore_case: bool,
    /// An event must hold every keyword (default: any).
    #[arg(
        short = 'a',
        long = "and-logic",
        requires = "keywords",
        help_heading = FILTERING
    )]
    pub and_logic: bool,
    /// Only events whose field matches (`Field:value`, `*` and `?` wildcards); repeatable,
    /// all must match.
    #[arg(
        short = 'F',
        long = "filter",
        value_name = "FIELD:VALUE",
        help_heading = FILTERING
    )]
    pub filters: Vec<String>,
    /// `--timeline-start`, `--timeline-end`.
    #[command(flatten)]
    pub range: TimeRangeArgs,
    /// Only events from this long ago until now (e.g. 1y, 3M, 30d, 24h, 30m, or
    /// "1y 3M"); events without a time are kept.
    #[arg(
        long = "time-offset",
        value_name = "OFFSET",
        conflicts_with = "timeline_start",
        help_heading = FILTERING
    )]
    pub time_offset: Option<String>,
    /// Sort the results by time (default: file by file, in record order).
    #[arg(short = 's', long = "sort", help_heading = OUTPUT)]
    pub sort: bool,
    /// Write to FILE (default: standard output).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        help_heading = OUTPUT
    )]
    pub output: Option<PathBuf>,
    /// JSON: one object per event, in an array.
    #[arg(
        short = 'J',
        long = "JSON-output",
        conflicts_with_all = ["jsonl_output", "multiline"],
        help_heading = OUTPUT
    )]
    pub json_output: bool,
    /// JSON Lines: one object per line.
    #[arg(
        short = 'L',
        long = "JSONL-output",
        conflicts_with = "multiline",
        help_heading = OUTPUT
    )]
    pub jsonl_output: bool,
    /// `-M`, `-S`, `-b` (the AllFieldInfo cell, CSV).
    #[command(flatten)]
    pub cells: CellStyleArgs,
    /// Config folder (abbreviations, channel_eid_info.txt, default_details.txt).
    /// Default: ./rules/config when ./rules is a folder of your own that no one else can
    /// write (as Hayabusa), else the set update-rules downloaded, else the built-in one.
    #[arg(
        short = 'c',
        long = "rules-config",
        value_name = "DIR",
        help_heading = GENERAL
    )]
    pub config: Option<PathBuf>,
    /// `-C`.
    #[command(flatten, next_help_heading = GENERAL)]
    pub overwrite: OverwriteFile,
    /// Worker threads (default: one per core).
    #[arg(
        short = 't',
        long = "threads",
        value_name = "N",
        help_heading = GENERAL
    )]
    pub threads: Option<usize>,
    /// `-V`.
    #[command(flatten)]
    pub checksums: ValidateChecksums,
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

impl SearchArgs {
    /// CSV, or a JSON array (`-J`), or JSON Lines (`-L`); clap refuses both.
    pub fn format(&self) -> OutputFormat {
        if self.json_output {
            OutputFormat::Json
        } else if self.jsonl_output {
            OutputFormat::JsonLines
        } else {
            OutputFormat::Csv
        }
    }

    /// The input files' kind: `--JSON-input` reads JSON event files, else EVTX.
    pub fn input_kind(&self) -> InputKind {
        if self.json_input {
            InputKind::Json
        } else {
            InputKind::Evtx
        }
    }
}
