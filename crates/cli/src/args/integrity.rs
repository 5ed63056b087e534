//! The flags of `log-integrity`: the timelines' input flags, an output and its format,
//! and how far back a record's time may step before it is a finding.

use super::groups::{
    ConsoleArgs, ExcelSafe, InputArgs, LiveRecoverArgs, OverwriteFile, TargetFileExt, ThreadArgs,
    TimeArgs,
};
use super::OUTPUT;
use clap::Args;
use std::path::PathBuf;

/// `log-integrity` options.
#[derive(Args, Debug)]
pub struct LogIntegrityArgs {
    /// `-d`, `-f`, `-J`.
    #[command(flatten)]
    pub input: InputArgs,
    /// `-l`, `-x` (records carved from slack space are then findings).
    #[command(flatten)]
    pub source: LiveRecoverArgs,
    /// `--target-file-ext`.
    #[command(flatten)]
    pub extensions: TargetFileExt,
    /// Write the findings to FILE (default: a table on a terminal, CSV or JSON Lines
    /// when piped).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        help_heading = OUTPUT
    )]
    pub output: Option<PathBuf>,
    /// JSON Lines (one object per finding) instead of CSV.
    #[arg(long = "json", help_heading = OUTPUT)]
    pub json_output: bool,
    /// How far (in seconds) a record's time may go back from the one before it, by
    /// record id, before it is a finding.
    #[arg(long = "time-tolerance", value_name = "SECONDS", default_value_t = crate::integrity::TIME_TOLERANCE)]
    pub time_tolerance: u32,
    /// `-C`.
    #[command(flatten)]
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

/// `coverage` options: the timeline's (its input and rule flags; `-o FILE` writes the
/// coverage table).
#[derive(Args, Debug)]
pub struct CoverageArgs {
    /// The scan's options; `-o FILE` writes the table (default: standard output).
    #[command(flatten)]
    pub timeline: super::TimelineArgs,
    /// JSON Lines (one object per row) instead of CSV.
    #[arg(long = "json", help_heading = OUTPUT)]
    pub json_output: bool,
}
