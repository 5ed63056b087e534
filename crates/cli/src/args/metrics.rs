//! The flags of the commands that count over every record without rules: eid-,
//! computer- and log-metrics, logon-summary, extract-base64 (Hayabusa 3.9.0's) and
//! config-critical-systems, which all flatten [`MetricsArgs`] in.

use super::groups::{CellStyleArgs, ComputerArgs, ReportArgs, ValidateChecksums};
use super::{FILTERING, GENERAL, OUTPUT};
use clap::Args;
use std::path::PathBuf;

/// Options shared by `eid-metrics`, `computer-metrics` and `log-metrics` (Hayabusa 3.9.0's).
#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// The evidence, `-o`, `-C`, `-t`, `-q`, `--excel-safe` and the time format.
    #[command(flatten)]
    pub report: ReportArgs,
    /// Config folder (abbreviations, channel_eid_info.txt, windows_versions.csv).
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
    /// Only records from this long ago until now (e.g. 1y, 3M, 30d, 24h, 30m, or
    /// "1y 3M"); records without a time are kept.
    #[arg(long = "time-offset", value_name = "OFFSET", help_heading = FILTERING)]
    pub time_offset: Option<String>,
    /// `--include-computer`, `--exclude-computer`.
    #[command(flatten)]
    pub computers: ComputerArgs,
}

/// `eid-metrics` options.
#[derive(Args, Debug)]
pub struct EidMetricsArgs {
    /// The common options.
    #[command(flatten)]
    pub common: MetricsArgs,
    /// Count a record found twice (same EventRecordID and time, e.g. in a backup copy)
    /// once.
    #[arg(
        short = 'X',
        long = "remove-duplicate-records",
        alias = "remove-duplicate-detections",
        help_heading = OUTPUT
    )]
    pub remove_duplicates: bool,
}

/// `log-metrics` options.
#[derive(Args, Debug)]
pub struct LogMetricsArgs {
    /// The common options.
    #[command(flatten)]
    pub common: MetricsArgs,
    /// `-M`, `-S`, `-b` (the Computers, Channels and Providers cells).
    #[command(flatten)]
    pub cells: CellStyleArgs,
    /// Only files holding one of these channels (full names, case-insensitive); comma-separated.
    #[arg(
        long = "include-channel",
        value_name = "CHANNEL",
        value_delimiter = ',',
        help_heading = FILTERING
    )]
    pub include_channels: Vec<String>,
    /// No files holding one of these channels; comma-separated.
    #[arg(
        long = "exclude-channel",
        value_name = "CHANNEL",
        value_delimiter = ',',
        help_heading = FILTERING
    )]
    pub exclude_channels: Vec<String>,
    /// Only files of these names (case-insensitive); comma-separated.
    #[arg(
        long = "include-filename",
        value_name = "NAME",
        value_delimiter = ',',
        help_heading = FILTERING
    )]
    pub include_filenames: Vec<String>,
    /// No files of these names; comma-separated.
    #[arg(
        long = "exclude-filename",
        value_name = "NAME",
        value_delimiter = ',',
        help_heading = FILTERING
    )]
    pub exclude_filenames: Vec<String>,
}

/// `logon-summary` options (`-o` is a prefix: PREFIX-successful.csv, PREFIX-failed.csv).
#[derive(Args, Debug)]
#[command(mut_arg("time_offset", |a| a.conflicts_with("timeline_start")))]
pub struct LogonSummaryArgs {
    /// The common options.
    #[command(flatten)]
    pub common: MetricsArgs,
    /// Count an event found twice (same EventRecordID and time, e.g. in a backup copy)
    /// once.
    #[arg(
        short = 'X',
        long = "remove-duplicate-records",
        alias = "remove-duplicate-detections",
        help_heading = OUTPUT
    )]
    pub remove_duplicates: bool,
    /// Only events at or after this time ("2024-01-31 13:00:00 +09:00").
    #[arg(long = "timeline-start", value_name = "TIME", help_heading = FILTERING)]
    pub timeline_start: Option<String>,
    /// Only events at or before this time.
    #[arg(long = "timeline-end", value_name = "TIME", help_heading = FILTERING)]
    pub timeline_end: Option<String>,
}

/// `config-critical-systems` options.
#[derive(Args, Debug)]
pub struct CriticalSystemsArgs {
    /// The input options (as the metrics commands').
    #[command(flatten)]
    pub common: MetricsArgs,
    /// The file written (default: ./config/critical_systems.txt, as Hayabusa's).
    #[arg(
        long = "critical-systems",
        value_name = "FILE",
        default_value = crate::critical_systems::DEFAULT,
        help_heading = OUTPUT
    )]
    pub target: PathBuf,
    /// Print what was found without writing the file.
    #[arg(long = "dry-run", help_heading = OUTPUT)]
    pub dry_run: bool,
}
