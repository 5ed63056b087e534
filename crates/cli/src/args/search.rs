//! `search`'s flags (Hayabusa 3.9.0's): the report group the metrics commands take, with
//! `-J` meaning JSON output, so JSON input is `--JSON-input` only.

use super::groups::{CellStyleArgs, OutputFormat, ReportArgs, TimeRangeArgs, ValidateChecksums};
use super::{FILTERING, GENERAL, OUTPUT};
use clap::Args;
use std::path::PathBuf;

/// `search` options (Hayabusa 3.9.0's).
#[derive(Args, Debug)]
#[command(
    mut_arg("json", |a| a.short(None)),
    mut_arg("output", |a| a.help("Write to FILE (default: standard output)"))
)]
pub struct SearchArgs {
    /// The evidence, `-o`, `-C`, `-t`, `-q`, `--excel-safe` and the time format.
    #[command(flatten)]
    pub report: ReportArgs,
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
    /// `-V`.
    #[command(flatten)]
    pub checksums: ValidateChecksums,
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
}
