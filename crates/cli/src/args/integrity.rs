//! The flags of `log-integrity`: the timelines' input flags, an output and its format,
//! and how far back a record's time may step before it is a finding.

use super::groups::ReportArgs;
use super::OUTPUT;
use clap::Args;

/// `log-integrity` options.
#[derive(Args, Debug)]
#[command(mut_arg("output", |a| a.help(
    "Write the findings to FILE (default: a table on a terminal, CSV or JSON Lines when piped)"
)))]
pub struct LogIntegrityArgs {
    /// The evidence, `-o`, `-C`, `-t`, `-q`, `--excel-safe` and the time format.
    #[command(flatten)]
    pub report: ReportArgs,
    /// JSON Lines (one object per finding) instead of CSV.
    #[arg(long = "json", help_heading = OUTPUT)]
    pub json_output: bool,
    /// How far (in seconds) a record's time may go back from the one before it, by
    /// record id, before it is a finding.
    #[arg(long = "time-tolerance", value_name = "SECONDS", default_value_t = crate::integrity::TIME_TOLERANCE)]
    pub time_tolerance: u32,
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
