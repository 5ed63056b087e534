//! The timeline family's flags: `csv-timeline` ([`TimelineArgs`]), `json-timeline`,
//! Hayabusa 4's `dfir-timeline`, `pivot-keywords-list` (the same scan) and
//! `set-default-profile` (the profile the timelines use without `-p`).
//!
//! `-p` stays text: an unknown profile is the run's error, after the input and output
//! checks (`config::profile`), and pivot-keywords-list accepts any `-p` and ignores it.

use super::groups::{
    CellStyleArgs, ComputerArgs, InputArgs, NoColorFlag, OutputFormat, OverwriteFiles, QuietArgs,
    TargetFileExt, ThreadArgs, TimeArgs, TimeRangeArgs, ValidateChecksums,
};
use super::rules::RuleArgs;
use super::{DISPLAY, FILTERING, GENERAL, INPUT, OUTPUT, PROFILING};
use clap::Args;
use std::path::PathBuf;

/// `csv-timeline` and `json-timeline` options.
#[derive(Args, Debug)]
pub struct TimelineArgs {
    /// `-d`, `-f`, `-J`.
    #[command(flatten)]
    pub input: InputArgs,
    /// Rule options.
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Output profile (see `scanner list-profiles`); default: the one set with
    /// set-default-profile, else standard.
    #[arg(short = 'p', long = "profile", help_heading = OUTPUT)]
    pub profile: Option<String>,
    /// Write the timeline to FILE (default: standard output).
    #[arg(
        short = 'o',
        long = "output",
        value_name = "FILE",
        help_heading = OUTPUT
    )]
    pub output: Option<PathBuf>,
    /// `-C`.
    #[command(flatten, next_help_heading = GENERAL)]
    pub overwrite: OverwriteFiles,
    /// `-t`.
    #[command(flatten)]
    pub pool: ThreadArgs,
    /// Quiet: no load report, progress bar or summary on standard error.
    #[arg(short = 'q', long = "quiet", help_heading = DISPLAY)]
    pub quiet: bool,
    /// Also scan records carved from slack space and damaged chunks; their rows are
    /// marked Y in an appended RecoveredRecord column. Carved records can be stale
    /// copies of live ones, or garbage (dropped).
    #[arg(short = 'x', long = "recover-records", help_heading = INPUT)]
    pub recover_records: bool,
    /// Also check each file's integrity as it is scanned (as log-integrity does, with
    /// its default time tolerance): each finding is a row titled "Log integrity: …" at
    /// the time it concerns, its level its severity's.
    #[arg(long = "integrity", help_heading = INPUT)]
    pub integrity: bool,
    /// Memory for sorting detections, in MiB: past it, sorted runs are spilled to
    /// temporary files (in TMPDIR) and merged as the timeline is written, so memory stays
    /// bounded however many records match. Fractions allowed; 0 spills every batch.
    /// Default: a 128th of the machine's memory (or of a lower container limit), at
    /// least 64 and at most 512 (64 where the memory cannot be read).
    #[arg(long = "sort-memory", value_name = "MiB", help_heading = GENERAL)]
    pub sort_memory: Option<f64>,
    /// Evaluate every candidate rule, without the shared-needle prefilter (to measure it,
    /// or to rule it out when debugging).
    #[arg(long = "no-prefilter", hide = true, help_heading = PROFILING)]
    pub no_prefilter: bool,

    /// `-M`, `-S`, `-b`.
    #[command(flatten)]
    pub cells: CellStyleArgs,
    /// Recorded values, without the field data mappings (e.g. `%%1842`, `0x1fc`).
    #[arg(short = 'F', long = "no-field-data-mapping", help_heading = OUTPUT)]
    pub no_field_data_mapping: bool,
    /// Drop detections identical to an earlier one at the same time (EvtxFile aside).
    #[arg(
        short = 'X',
        long = "remove-duplicate-detections",
        help_heading = OUTPUT
    )]
    pub remove_duplicates: bool,
    /// CSV and TSV cells a spreadsheet would run as a formula (beginning with `=`,
    /// `+`, `-`, `@`, tab or CR, after any spaces) written with a leading `'`, shown as text;
    /// a lone `-` and plain numbers (`-12`) are kept as they are.
    #[arg(long = "excel-safe", help_heading = OUTPUT)]
    pub excel_safe: bool,

    /// The timestamp format.
    #[command(flatten)]
    pub time: TimeArgs,

    /// The record filters.
    #[command(flatten)]
    pub filter: RecordFilterArgs,
    /// Keep every rule enabled whatever channels the input holds (scanner's index never
    /// evaluates a rule on a channel it cannot match, so this changes no result).
    #[arg(short = 'A', long = "enable-all-rules", help_heading = FILTERING)]
    pub enable_all_rules: bool,
    /// Scan every EVTX file, even those whose channel (from the first record) no rule uses.
    #[arg(short = 'a', long = "scan-all-evtx-files", help_heading = FILTERING)]
    pub scan_all_files: bool,

    /// No results summary at the end.
    #[arg(short = 'N', long = "no-summary", help_heading = DISPLAY)]
    pub no_summary: bool,
    /// No colours in the summary.
    #[arg(short = 'K', long = "no-color", help_heading = DISPLAY)]
    pub no_color: bool,
    /// Write an HTML report of the summary, with a detection-frequency chart, to FILE.
    #[arg(
        short = 'H',
        long = "HTML-report",
        alias = "html-report",
        value_name = "FILE",
        help_heading = OUTPUT
    )]
    pub html_report: Option<PathBuf>,
    /// Write an ATT&CK Navigator layer (4.5, Enterprise) to FILE: the techniques of the
    /// rules that fired, scored by their detections.
    #[arg(long = "attack-navigator", value_name = "FILE", help_heading = OUTPUT)]
    pub attack_navigator: Option<PathBuf>,
    /// Show a detection-frequency timeline in the terminal.
    #[arg(short = 'T', long = "visualize-timeline", help_heading = DISPLAY)]
    pub visualize_timeline: bool,

    /// Write per-rule evaluation statistics (TSV) to FILE.
    #[arg(long = "rule-stats", value_name = "FILE", help_heading = PROFILING)]
    pub rule_stats: Option<PathBuf>,
    /// Write a CPU flamegraph (SVG) of the scan to FILE (needs a build with the `pprof` feature).
    #[arg(long = "cpu-profile", value_name = "FILE", help_heading = PROFILING)]
    pub cpu_profile: Option<PathBuf>,

    /// Hayabusa's command-line flags whose feature scanner does not need.
    #[command(flatten)]
    pub hayabusa: HayabusaFlags,
}

/// Flags of Hayabusa 3.9.0's timeline commands accepted so that its command lines run
/// unchanged (see docs/commands.md, "Hayabusa's command line").
#[derive(Args, Debug, Default)]
pub struct HayabusaFlags {
    /// Scan the local Windows event logs (%SystemRoot%\System32\winevt\Logs); on
    /// Windows only.
    #[arg(short = 'l', long = "live-analysis", help_heading = INPUT)]
    pub live_analysis: bool,
    /// `--target-file-ext`.
    #[command(flatten)]
    pub extensions: TargetFileExt,
    /// Accepted for Hayabusa's command lines: scanner has no scan wizard.
    #[arg(short = 'w', long = "no-wizard", help_heading = GENERAL)]
    pub no_wizard: bool,
    /// Accepted for Hayabusa's command lines: scanner keeps no error log file.
    #[arg(short = 'Q', long = "quiet-errors", help_heading = GENERAL)]
    pub quiet_errors: bool,
    /// Accepted for Hayabusa's command lines: scanner's timeline is always sorted.
    #[arg(
        short = 's',
        long = "sort",
        alias = "sort-events",
        help_heading = GENERAL
    )]
    pub sort: bool,
    /// `-V`.
    #[command(flatten)]
    pub checksums: ValidateChecksums,
    /// Accepted for Hayabusa's command lines (its verbose messages).
    #[arg(short = 'v', long = "verbose", help_heading = DISPLAY)]
    pub verbose: bool,
    /// Write DUP in Details, ExtraFieldInfo and AllFieldInfo when the value equals the
    /// previous row's in that column.
    #[arg(short = 'R', long = "remove-duplicate-data", help_heading = OUTPUT)]
    pub remove_duplicate_data: bool,
    /// Do not split classic PowerShell events' (400, 403, 600, 800) `key=value` Data
    /// element into fields (`HostApplication`, `HostName`, …).
    #[arg(long = "no-pwsh-field-extraction", help_heading = OUTPUT)]
    pub no_pwsh_field_extraction: bool,
    /// Add SrcASN, SrcCountry, SrcCity, TgtASN, TgtCountry and TgtCity columns from
    /// MaxMind's GeoLite2-ASN.mmdb, GeoLite2-Country.mmdb and GeoLite2-City.mmdb in DIR,
    /// for the fields and events of the rules config's geoip_field_mapping.yaml.
    #[arg(
        short = 'G',
        long = "geo-ip",
        visible_alias = "GeoIP",
        value_name = "DIR",
        help_heading = OUTPUT
    )]
    pub geo_ip: Option<PathBuf>,
}

/// The timeline's record filters: a time range, EventIDs and computers (read by
/// `filters::record_filter`).
#[derive(Args, Debug)]
#[command(next_help_heading = FILTERING)]
pub struct RecordFilterArgs {
    /// `--timeline-start`, `--timeline-end`.
    #[command(flatten)]
    pub range: TimeRangeArgs,
    /// Only records from this long ago until now (e.g. "1y 3M 30d 24h 30m").
    #[arg(
        long = "time-offset",
        value_name = "OFFSET",
        conflicts_with = "timeline_start"
    )]
    pub time_offset: Option<String>,
    /// Only records with these EventIDs; comma-separated.
    #[arg(long = "include-eid", value_name = "EID", value_delimiter = ',')]
    pub include_eids: Vec<String>,
    /// No records with these EventIDs; comma-separated.
    #[arg(long = "exclude-eid", value_name = "EID", value_delimiter = ',')]
    pub exclude_eids: Vec<String>,
    /// Only records of the common EventIDs of config/target_event_IDs.txt.
    #[arg(short = 'E', long = "EID-filter", alias = "eid-filter")]
    pub eid_filter: bool,
    /// `--include-computer`, `--exclude-computer`.
    #[command(flatten)]
    pub computers: ComputerArgs,
}

/// `json-timeline` options: those of `csv-timeline`, and JSONL.
#[derive(Args, Debug)]
pub struct JsonTimelineArgs {
    /// The timeline options.
    #[command(flatten)]
    pub timeline: TimelineArgs,
    /// JSON Lines (one object per line) instead of one JSON array.
    #[arg(
        short = 'L',
        long = "JSONL-output",
        alias = "jsonl-output",
        help_heading = OUTPUT
    )]
    pub jsonl: bool,
}

impl JsonTimelineArgs {
    /// JSON, or JSON Lines with `-L`.
    pub fn format(&self) -> OutputFormat {
        if self.jsonl {
            OutputFormat::JsonLines
        } else {
            OutputFormat::Json
        }
    }
}

/// `dfir-timeline` (Hayabusa 4's name for csv-timeline and json-timeline) options.
#[derive(Args, Debug)]
#[command(mut_arg("threads", |a| a.short(None)))]
pub struct DfirTimelineArgs {
    /// The timeline options (`--threads` has no short form here: `-t` is the output type).
    #[command(flatten)]
    pub timeline: TimelineArgs,
    /// Output type: csv (default), json or jsonl (case-insensitive).
    #[arg(
        short = 't',
        long = "output-type",
        value_name = "TYPE",
        default_value = "csv",
        ignore_case = true,
        help_heading = OUTPUT
    )]
    pub output_type: OutputFormat,
}

/// `pivot-keywords-list` options: the timeline's (the same scan; Hayabusa's `-w` and `-Q`
/// are among them).
#[derive(Args, Debug)]
pub struct PivotArgs {
    /// The scan's options; `-o PREFIX` writes `PREFIX-<Category>.txt` per category
    /// (default: the lists on standard output).
    #[command(flatten)]
    pub timeline: TimelineArgs,
}

/// `list-profiles` options: Hayabusa's `-q` and `-K`, accepted.
#[derive(Args, Debug)]
pub struct ListProfilesArgs {
    /// Accepted for Hayabusa's command lines (its launch banner; scanner prints none).
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// `-K`.
    #[command(flatten)]
    pub color: NoColorFlag,
}

/// `set-default-profile` options.
#[derive(Args, Debug)]
pub struct SetDefaultProfileArgs {
    /// The profile the timeline commands use without `-p` (see list-profiles); without
    /// it, the current default is printed.
    #[arg(short = 'p', long = "profile", value_name = "PROFILE")]
    pub profile: Option<String>,
    /// `-q`, `-K`.
    #[command(flatten)]
    pub console: QuietArgs,
}
