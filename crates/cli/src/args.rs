//! Command-line flags: every option of every subcommand is defined here, and only here.

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Fast Sigma-rule scanner for Windows event logs.
#[derive(Parser, Debug)]
#[command(name = "scanner", version, about)]
pub struct Cli {
    /// Print allocator statistics (mimalloc's peak and reserved memory) and peak RSS at exit.
    #[arg(long, global = true)]
    pub debug: bool,
    /// Write a pprof heap profile (gzip protobuf) of the run's peak memory to FILE and its
    /// flamegraph to FILE.svg (needs a build with the `jemalloc-prof` feature).
    #[arg(long = "heap-profile", value_name = "FILE", global = true)]
    pub heap_profile: Option<PathBuf>,
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Subcommands.
#[derive(Subcommand, Debug)]
pub enum Command {
    /// Scan event logs and write a CSV timeline of detections.
    #[command(name = "csv-timeline")]
    CsvTimeline(TimelineArgs),
    /// Scan event logs and write a JSON (or, with -L, JSON Lines) timeline of detections.
    #[command(name = "json-timeline")]
    JsonTimeline(JsonTimelineArgs),
    /// List the output profiles and their columns.
    #[command(name = "list-profiles")]
    ListProfiles,
    /// Count events per channel and EventID, with their share and title.
    #[command(name = "eid-metrics")]
    EidMetrics(EidMetricsArgs),
    /// Count events per computer.
    #[command(name = "computer-metrics")]
    ComputerMetrics(MetricsArgs),
    /// One row per log file: computers, events, first and last time, channels, providers, size.
    #[command(name = "log-metrics")]
    LogMetrics(LogMetricsArgs),
    /// Successful and failed logons per account, computer, logon type and source
    /// (`-o PREFIX` writes PREFIX-successful.csv and PREFIX-failed.csv).
    #[command(name = "logon-summary")]
    LogonSummary(LogonSummaryArgs),
    /// Base64 in command lines, service paths and PowerShell logs, decoded and classified.
    #[command(name = "extract-base64")]
    ExtractBase64(MetricsArgs),
    /// Hayabusa 4's timeline command: csv-timeline or json-timeline chosen by `-t`.
    #[command(name = "dfir-timeline")]
    DfirTimeline(DfirTimelineArgs),
    /// List the `%placeholder%` names rules' `|expand` modifiers use.
    #[command(name = "expand-list")]
    ExpandList(ExpandListArgs),
    /// Find domain controllers (Security 4768) and file servers (Security 5145) and add
    /// them to critical_systems.txt.
    #[command(name = "config-critical-systems")]
    ConfigCriticalSystems(CriticalSystemsArgs),
    /// Rewrite rules' `level:` from a tuning file (default ./rules/config/level_tuning.txt).
    #[command(name = "level-tuning")]
    LevelTuning(LevelTuningArgs),
    /// Set the profile the timeline commands use without `-p`.
    #[command(name = "set-default-profile")]
    SetDefaultProfile(SetDefaultProfileArgs),
    /// Values of the detected events' pivot fields (users, IPs, processes, …), one list per
    /// category of the rules config's pivot_keywords.txt.
    #[command(name = "pivot-keywords-list")]
    PivotKeywordsList(PivotArgs),
    /// Every event holding keywords (-k) or matching a regex (-r), without rules.
    #[command(name = "search")]
    Search(SearchArgs),
    /// Work with rule sets.
    #[command(subcommand)]
    Rules(RulesCommand),
    /// Download or update the community rules (hayabusa-rules by default) into the
    /// user's data folder, which the rule-loading commands then use without -r.
    #[command(name = "update-rules")]
    UpdateRules(UpdateRulesArgs),
    /// Write EVTX files: from events you give, or a synthetic log with planted attacks.
    #[command(subcommand)]
    Evtx(EvtxCommand),
}

/// `evtx` subcommands.
#[derive(Subcommand, Debug)]
pub enum EvtxCommand {
    /// Write events (XML `<Event>` as Event Viewer shows them, or JSON/JSONL in the evtx
    /// crate's shape) to an EVTX file.
    Write(EvtxWriteArgs),
    /// Write a deterministic synthetic log with attacks planted at known records, and a
    /// ground-truth file listing which built-in rule each planted record fires.
    Generate(EvtxGenerateArgs),
}

/// `evtx write` options.
#[derive(Args, Debug)]
pub struct EvtxWriteArgs {
    /// Source events: .xml, .json (one event or an array) or .jsonl.
    #[arg(long = "from", value_name = "FILE")]
    pub from: PathBuf,
    /// The EVTX file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Overwrite the output file if it exists.
    #[arg(short = 'C', long = "clobber")]
    pub clobber: bool,
}

/// `evtx generate` options.
#[derive(Args, Debug)]
pub struct EvtxGenerateArgs {
    /// Number of records.
    #[arg(long = "records", value_name = "N")]
    pub records: u64,
    /// Seed: the same seed gives the same file.
    #[arg(long = "seed", default_value_t = 1)]
    pub seed: u64,
    /// The EVTX file to write.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: PathBuf,
    /// Ground-truth file (`<EventRecordID>\t<rule id>` lines); default: OUTPUT with `.truth.tsv`.
    #[arg(long = "truth", value_name = "FILE")]
    pub truth: Option<PathBuf>,
    /// Overwrite the output files if they exist.
    #[arg(short = 'C', long = "clobber")]
    pub clobber: bool,
}

/// `rules` subcommands.
#[derive(Subcommand, Debug)]
pub enum RulesCommand {
    /// Load a rule set and print the load report; exits non-zero if any rule failed.
    Check(RuleArgs),
}

/// Which rules to load.
#[derive(Args, Debug, Clone)]
pub struct RuleArgs {
    /// Rule file or folder (recursive); repeatable. Default: the set `update-rules`
    /// downloaded, else the built-in rules.
    #[arg(short = 'r', long = "rules", value_name = "PATH")]
    pub rules: Vec<PathBuf>,
    /// The built-in rules, even when `update-rules` has downloaded a set.
    #[arg(long = "builtin-rules", conflicts_with = "rules")]
    pub builtin_rules: bool,
    /// Config folder (eventkey_alias.txt, default_details.txt, …). Default: <rules>/config.
    #[arg(short = 'c', long = "rules-config", value_name = "DIR")]
    pub config: Option<PathBuf>,
    /// Enable rules with status: deprecated.
    #[arg(short = 'D', long = "enable-deprecated-rules")]
    pub deprecated: bool,
    /// Enable rules listed in noisy_rules.txt.
    #[arg(short = 'n', long = "enable-noisy-rules")]
    pub noisy: bool,
    /// Enable rules with status: unsupported.
    #[arg(short = 'u', long = "enable-unsupported-rules")]
    pub unsupported: bool,
    /// Lowest level to load: informational, low, medium, high, critical.
    #[arg(
        short = 'm',
        long = "min-level",
        default_value = "informational",
        value_name = "LEVEL"
    )]
    pub min_level: String,
    /// Folder of `<placeholder>.txt` files giving values for rules' `expand` placeholders.
    #[arg(long = "expand-dir", value_name = "DIR")]
    pub expand_dir: Option<PathBuf>,
    /// Run both a rule and a rule derived from it with the same title (by default only the
    /// derived one, e.g. Hayabusa's conversion of a SigmaHQ rule, runs).
    #[arg(long = "keep-derived-duplicates")]
    pub keep_derived_duplicates: bool,
    /// List every rejected rule (rules check always does).
    #[arg(long = "show-rule-errors")]
    pub show_errors: bool,
    /// Only rules of exactly this level.
    #[arg(short = 'e', long = "exact-level", value_name = "LEVEL")]
    pub exact_level: Option<String>,
    /// Only the rules listed in proven_rules.txt of the config folder.
    #[arg(short = 'P', long = "proven-rules")]
    pub proven_rules: bool,
    /// Read, parse and compile every rule file, neither reading nor writing the rule
    /// caches ($XDG_CACHE_HOME/scanner, else ~/.cache/scanner).
    #[arg(long = "no-rule-cache")]
    pub no_rule_cache: bool,
    /// Only rules with one of these tags (e.g. attack.execution); comma-separated.
    #[arg(long = "include-tag", value_name = "TAG", value_delimiter = ',')]
    pub include_tags: Vec<String>,
    /// No rules with one of these tags; comma-separated.
    #[arg(long = "exclude-tag", value_name = "TAG", value_delimiter = ',')]
    pub exclude_tags: Vec<String>,
    /// Only rules of these log-source categories (e.g. process_creation); comma-separated.
    #[arg(
        long = "include-category",
        value_name = "CATEGORY",
        value_delimiter = ','
    )]
    pub include_categories: Vec<String>,
    /// No rules of these log-source categories; comma-separated.
    #[arg(
        long = "exclude-category",
        value_name = "CATEGORY",
        value_delimiter = ','
    )]
    pub exclude_categories: Vec<String>,
    /// Only rules of these statuses (stable, test, experimental, …; `*` for all); comma-separated.
    #[arg(long = "include-status", value_name = "STATUS", value_delimiter = ',')]
    pub include_status: Vec<String>,
    /// No rules of these statuses; comma-separated.
    #[arg(long = "exclude-status", value_name = "STATUS", value_delimiter = ',')]
    pub exclude_status: Vec<String>,
}

/// `json-timeline` options: those of `csv-timeline`, and JSONL.
#[derive(Args, Debug)]
pub struct JsonTimelineArgs {
    /// The timeline options.
    #[command(flatten)]
    pub timeline: TimelineArgs,
    /// JSON Lines (one object per line) instead of one JSON array.
    #[arg(short = 'L', long = "JSONL-output", alias = "jsonl-output")]
    pub jsonl: bool,
}

/// `csv-timeline` and `json-timeline` options.
#[derive(Args, Debug)]
pub struct TimelineArgs {
    /// Folder of logs, searched recursively; repeatable.
    #[arg(short = 'd', long = "directory", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// A log file; repeatable.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Accepted for Hayabusa's command lines: every file is read by its content (EVTX,
    /// JSON/JSONL in the evtx_dump, NXLog, Winlogbeat, Velociraptor, Azure or Splunk
    /// shape, or event XML), and folders give .evtx, .json, .jsonl and .xml files alike.
    #[arg(short = 'J', long = "JSON-input", alias = "json-input")]
    pub json: bool,
    /// Rule options.
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Output profile (see `scanner list-profiles`); default: the one set with
    /// set-default-profile, else standard.
    #[arg(short = 'p', long = "profile")]
    pub profile: Option<String>,
    /// Write the timeline to FILE (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the output files if they exist.
    #[arg(short = 'C', long = "clobber")]
    pub clobber: bool,
    /// Worker threads (default, or 0: one per core; at most 4 per core).
    #[arg(short = 't', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
    /// Quiet: no load report, progress bar or summary on standard error.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Also scan records carved from slack space and damaged chunks; their rows are
    /// marked Y in an appended RecoveredRecord column. Carved records can be stale
    /// copies of live ones, or garbage (dropped).
    #[arg(short = 'x', long = "recover-records")]
    pub recover_records: bool,
    /// Memory for sorting detections, in MiB: past it, sorted runs are spilled to
    /// temporary files (in TMPDIR) and merged as the timeline is written, so memory stays
    /// bounded however many records match. Fractions allowed; 0 spills every batch.
    /// Default: a 128th of the machine's memory (or of a lower container limit), at
    /// least 64 and at most 512 (64 where the memory cannot be read).
    #[arg(long = "sort-memory", value_name = "MiB")]
    pub sort_memory: Option<f64>,
    /// Evaluate every candidate rule, without the shared-needle prefilter (to measure it,
    /// or to rule it out when debugging).
    #[arg(long = "no-prefilter", hide = true)]
    pub no_prefilter: bool,

    /// Output: one item per line inside multi-item cells (Details, tags, …).
    #[arg(short = 'M', long = "multiline", conflicts_with = "tab_separator")]
    pub multiline: bool,
    /// Output: a tab between the items of multi-item cells.
    #[arg(short = 'S', long = "tab-separator")]
    pub tab_separator: bool,
    /// Output: full level, channel and provider names, and no default Details templates.
    #[arg(short = 'b', long = "disable-abbreviations")]
    pub no_abbreviations: bool,
    /// Output: recorded values, without the field data mappings (e.g. `%%1842`, `0x1fc`).
    #[arg(short = 'F', long = "no-field-data-mapping")]
    pub no_field_data_mapping: bool,
    /// Output: drop detections identical to an earlier one at the same time (EvtxFile aside).
    #[arg(short = 'X', long = "remove-duplicate-detections")]
    pub remove_duplicates: bool,
    /// Output: CSV and TSV cells a spreadsheet would run as a formula (beginning with `=`,
    /// `+`, `-`, `@`, tab or CR, after any spaces) written with a leading `'`, shown as text;
    /// a lone `-` and plain numbers (`-12`) are kept as they are.
    #[arg(long = "excel-safe")]
    pub excel_safe: bool,

    /// The timestamp format.
    #[command(flatten)]
    pub time: TimeArgs,

    /// Only records at or after this time ("2020-02-22 00:00:00 +09:00"; no offset: UTC).
    #[arg(long = "timeline-start", value_name = "TIME")]
    pub timeline_start: Option<String>,
    /// Only records at or before this time.
    #[arg(long = "timeline-end", value_name = "TIME")]
    pub timeline_end: Option<String>,
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
    /// Only records of these computers (case-insensitive); comma-separated.
    #[arg(long = "include-computer", value_name = "NAME", value_delimiter = ',')]
    pub include_computers: Vec<String>,
    /// No records of these computers; comma-separated.
    #[arg(long = "exclude-computer", value_name = "NAME", value_delimiter = ',')]
    pub exclude_computers: Vec<String>,
    /// Keep every rule enabled whatever channels the input holds (scanner's index never
    /// evaluates a rule on a channel it cannot match, so this changes no result).
    #[arg(short = 'A', long = "enable-all-rules")]
    pub enable_all_rules: bool,
    /// Scan every EVTX file, even those whose channel (from the first record) no rule uses.
    #[arg(short = 'a', long = "scan-all-evtx-files")]
    pub scan_all_files: bool,

    /// No results summary at the end.
    #[arg(short = 'N', long = "no-summary")]
    pub no_summary: bool,
    /// No colours in the summary.
    #[arg(short = 'K', long = "no-color")]
    pub no_color: bool,
    /// Write an HTML report of the summary, with a detection-frequency chart, to FILE.
    #[arg(
        short = 'H',
        long = "HTML-report",
        alias = "html-report",
        value_name = "FILE"
    )]
    pub html_report: Option<PathBuf>,
    /// Show a detection-frequency timeline in the terminal.
    #[arg(short = 'T', long = "visualize-timeline")]
    pub visualize_timeline: bool,

    /// Write per-rule evaluation statistics (TSV) to FILE.
    #[arg(long = "rule-stats", value_name = "FILE")]
    pub rule_stats: Option<PathBuf>,
    /// Write a CPU flamegraph (SVG) of the scan to FILE (needs a build with the `pprof` feature).
    #[arg(long = "cpu-profile", value_name = "FILE")]
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
    #[arg(short = 'l', long = "live-analysis")]
    pub live_analysis: bool,
    /// Accepted for Hayabusa's command lines: scanner has no scan wizard.
    #[arg(short = 'w', long = "no-wizard")]
    pub no_wizard: bool,
    /// Accepted for Hayabusa's command lines: scanner keeps no error log file.
    #[arg(short = 'Q', long = "quiet-errors")]
    pub quiet_errors: bool,
    /// Accepted for Hayabusa's command lines (its verbose messages).
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Accepted for Hayabusa's command lines: scanner's timeline is always sorted.
    #[arg(short = 's', long = "sort", alias = "sort-events")]
    pub sort: bool,
    /// Also scan files with these extensions (e.g. evtx_data), as EVTX.
    #[arg(long = "target-file-ext", value_name = "EXT", num_args = 1..)]
    pub target_file_ext: Vec<String>,
    /// Write DUP in Details, ExtraFieldInfo and AllFieldInfo when the value equals the
    /// previous row's in that column.
    #[arg(short = 'R', long = "remove-duplicate-data")]
    pub remove_duplicate_data: bool,
    /// Do not split classic PowerShell events' (400, 403, 600, 800) `key=value` Data
    /// element into fields (`HostApplication`, `HostName`, …).
    #[arg(long = "no-pwsh-field-extraction")]
    pub no_pwsh_field_extraction: bool,
    /// Refused with a clear error: GeoIP lookup (MaxMind databases) is not built in.
    #[arg(short = 'G', long = "GeoIP", alias = "geo-ip", value_name = "DIR")]
    pub geo_ip: Option<PathBuf>,
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
        value_parser = ["csv", "json", "jsonl"]
    )]
    pub output_type: String,
}

/// `expand-list` options.
#[derive(Args, Debug)]
pub struct ExpandListArgs {
    /// Rule file or folder, searched recursively for `.yml` files.
    #[arg(
        short = 'r',
        long = "rules",
        value_name = "DIR/FILE",
        default_value = "rules"
    )]
    pub rules: PathBuf,
    /// Quiet (accepted for Hayabusa's command lines; nothing else is printed).
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Accepted for Hayabusa's command lines: no colours are printed.
    #[arg(short = 'K', long = "no-color")]
    pub no_color: bool,
}

/// `level-tuning` options.
#[derive(Args, Debug)]
pub struct LevelTuningArgs {
    /// The tuning file: `id,new_level` lines after a header (Hayabusa's format).
    #[arg(
        short = 'f',
        long = "file",
        value_name = "FILE",
        default_value = "./rules/config/level_tuning.txt"
    )]
    pub file: PathBuf,
    /// Rule file or folder whose rules are rewritten.
    #[arg(
        short = 'r',
        long = "rules",
        value_name = "DIR/FILE",
        default_value = "rules"
    )]
    pub rules: PathBuf,
    /// Quiet: print nothing but errors.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Accepted for Hayabusa's command lines: no colours are printed.
    #[arg(short = 'K', long = "no-color")]
    pub no_color: bool,
}

/// `set-default-profile` options.
#[derive(Args, Debug)]
pub struct SetDefaultProfileArgs {
    /// The profile the timeline commands use without `-p` (see list-profiles); without
    /// it, the current default is printed.
    #[arg(short = 'p', long = "profile", value_name = "PROFILE")]
    pub profile: Option<String>,
    /// Quiet: print nothing but errors.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Accepted for Hayabusa's command lines: no colours are printed.
    #[arg(short = 'K', long = "no-color")]
    pub no_color: bool,
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
        default_value = crate::critical_systems::DEFAULT
    )]
    pub target: PathBuf,
    /// Print what was found without writing the file.
    #[arg(long = "dry-run")]
    pub dry_run: bool,
}

/// Options shared by `eid-metrics`, `computer-metrics` and `log-metrics` (Hayabusa 3.9.0's).
#[derive(Args, Debug)]
pub struct MetricsArgs {
    /// Folder of logs, searched recursively; repeatable.
    #[arg(short = 'd', long = "directory", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// A log file; repeatable.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Accepted for Hayabusa's command lines: every file is read by its content (EVTX,
    /// JSON/JSONL in the evtx_dump, NXLog, Winlogbeat, Velociraptor, Azure or Splunk
    /// shape, or event XML), and folders give .evtx, .json, .jsonl and .xml files alike.
    #[arg(short = 'J', long = "JSON-input", alias = "json-input")]
    pub json: bool,
    /// Also count records carved from slack space and damaged chunks.
    #[arg(short = 'x', long = "recover-records")]
    pub recover_records: bool,
    /// Config folder (abbreviations, channel_eid_info.txt, windows_versions.csv).
    /// Default: ./rules/config when it exists (as Hayabusa), else the built-in one.
    #[arg(short = 'c', long = "rules-config", value_name = "DIR")]
    pub config: Option<PathBuf>,
    /// Write CSV to FILE (default: a table on a terminal, CSV when piped).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(short = 'C', long = "clobber")]
    pub clobber: bool,
    /// Worker threads (default, or 0: one per core; at most 4 per core).
    #[arg(short = 't', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
    /// Quiet: no totals or progress bar on standard error.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Accepted for Hayabusa's command lines: scanner keeps no error log file.
    #[arg(short = 'Q', long = "quiet-errors")]
    pub quiet_errors: bool,
    /// Read the local Windows event logs (%SystemRoot%\System32\winevt\Logs); on
    /// Windows only.
    #[arg(short = 'l', long = "live-analysis")]
    pub live_analysis: bool,
    /// Accepted for Hayabusa's command lines: scanner prints no colours here.
    #[arg(short = 'K', long = "no-color")]
    pub no_color: bool,
    /// Accepted for Hayabusa's command lines (its verbose messages).
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// Only records of these computers (case-insensitive); comma-separated.
    #[arg(long = "include-computer", value_name = "NAME", value_delimiter = ',')]
    pub include_computers: Vec<String>,
    /// No records of these computers; comma-separated.
    #[arg(long = "exclude-computer", value_name = "NAME", value_delimiter = ',')]
    pub exclude_computers: Vec<String>,
    /// CSV cells a spreadsheet would run as a formula written with a leading `'`.
    #[arg(long = "excel-safe")]
    pub excel_safe: bool,

    /// The timestamp format.
    #[command(flatten)]
    pub time: TimeArgs,
}

/// `eid-metrics` options.
#[derive(Args, Debug)]
pub struct EidMetricsArgs {
    /// The common options.
    #[command(flatten)]
    pub common: MetricsArgs,
    /// Count a record found twice (same EventRecordID and time, e.g. in a backup copy)
    /// once.
    #[arg(short = 'X', long = "remove-duplicate-detections")]
    pub remove_duplicates: bool,
}

/// `log-metrics` options.
#[derive(Args, Debug)]
pub struct LogMetricsArgs {
    /// The common options.
    #[command(flatten)]
    pub common: MetricsArgs,
    /// One item per line in the Computers, Channels and Providers cells.
    #[arg(short = 'M', long = "multiline")]
    pub multiline: bool,
    /// Full channel and provider names.
    #[arg(short = 'b', long = "disable-abbreviations")]
    pub no_abbreviations: bool,
    /// Only files holding one of these channels (full names, case-insensitive); comma-separated.
    #[arg(
        long = "include-channel",
        value_name = "CHANNEL",
        value_delimiter = ','
    )]
    pub include_channels: Vec<String>,
    /// No files holding one of these channels; comma-separated.
    #[arg(
        long = "exclude-channel",
        value_name = "CHANNEL",
        value_delimiter = ','
    )]
    pub exclude_channels: Vec<String>,
    /// Only files of these names (case-insensitive); comma-separated.
    #[arg(long = "include-filename", value_name = "NAME", value_delimiter = ',')]
    pub include_filenames: Vec<String>,
    /// No files of these names; comma-separated.
    #[arg(long = "exclude-filename", value_name = "NAME", value_delimiter = ',')]
    pub exclude_filenames: Vec<String>,
}

/// `logon-summary` options (`-o` is a prefix: PREFIX-successful.csv, PREFIX-failed.csv).
#[derive(Args, Debug)]
pub struct LogonSummaryArgs {
    /// The common options.
    #[command(flatten)]
    pub common: MetricsArgs,
    /// Count an event found twice (same EventRecordID and time, e.g. in a backup copy)
    /// once.
    #[arg(short = 'X', long = "remove-duplicate-detections")]
    pub remove_duplicates: bool,
    /// Only events at or after this time ("2024-01-31 13:00:00 +09:00").
    #[arg(long = "timeline-start", value_name = "TIME")]
    pub timeline_start: Option<String>,
    /// Only events at or before this time.
    #[arg(long = "timeline-end", value_name = "TIME")]
    pub timeline_end: Option<String>,
}

/// `update-rules` options (Hayabusa 3.9.0's `-r`, and where to download from).
#[derive(Args, Debug)]
pub struct UpdateRulesArgs {
    /// The folder to update (a git checkout, or absent or empty: cloned into). Default:
    /// $XDG_DATA_HOME/scanner/rules, else ~/.local/share/scanner/rules.
    #[arg(short = 'r', long = "rules", value_name = "DIR")]
    pub rules: Option<PathBuf>,
    /// The git repository to download (https, ssh or file URL). Default: the one the set
    /// came from, else https://github.com/Yamato-Security/hayabusa-rules.git.
    #[arg(long = "url", value_name = "URL")]
    pub url: Option<String>,
    /// Stop git after this many seconds.
    #[arg(long = "timeout", value_name = "SECS", default_value_t = 600)]
    pub timeout: u64,
    /// Quiet: only the counts, not each changed rule.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Accepted for Hayabusa's command lines: scanner keeps no error log file.
    #[arg(short = 'Q', long = "quiet-errors")]
    pub quiet_errors: bool,
    /// Accepted for Hayabusa's command lines: scanner prints no colours here.
    #[arg(short = 'K', long = "no-color")]
    pub no_color: bool,
}

/// The timestamp format flags, Hayabusa's (and their lowercase 4.0 spellings): one at most.
#[derive(Args, Debug, Default)]
pub struct TimeArgs {
    /// Timestamps in UTC (default: local time).
    #[arg(short = 'U', long = "UTC", alias = "utc", group = "time_style")]
    pub utc: bool,
    /// Timestamps as ISO-8601 in UTC (2016-09-21T03:40:37.088867Z).
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
    /// Timestamps as RFC 2822 (Wed, 21 Sep 2016 03:40:37 +00:00).
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

/// `pivot-keywords-list` options: the timeline's (the same scan; Hayabusa's `-w` and `-Q`
/// are among them).
#[derive(Args, Debug)]
pub struct PivotArgs {
    /// The scan's options; `-o PREFIX` writes `PREFIX-<Category>.txt` per category
    /// (default: the lists on standard output).
    #[command(flatten)]
    pub timeline: TimelineArgs,
}

/// `search` options (Hayabusa 3.9.0's).
#[derive(Args, Debug)]
pub struct SearchArgs {
    /// Folder of logs, searched recursively; repeatable.
    #[arg(short = 'd', long = "directory", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// A log file; repeatable.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Input is JSON (.json/.jsonl events in the evtx crate's shape) instead of EVTX
    /// (long form only: in `search`, `-J` is Hayabusa's JSON output).
    #[arg(long = "JSON-input")]
    pub json_input: bool,
    /// Also search records carved from slack space and damaged chunks.
    #[arg(short = 'x', long = "recover-records")]
    pub recover_records: bool,
    /// A keyword an event must hold (any of them; all with -a); repeatable.
    #[arg(
        short = 'k',
        long = "keyword",
        value_name = "KEYWORD",
        required_unless_present = "regex",
        conflicts_with = "regex"
    )]
    pub keywords: Vec<String>,
    /// A regular expression an event must match (Rust regex syntax; case-sensitive
    /// unless it starts with `(?i)`).
    #[arg(short = 'r', long = "regex", value_name = "REGEX")]
    pub regex: Option<String>,
    /// Keywords ignore case.
    #[arg(short = 'i', long = "ignore-case", conflicts_with = "regex")]
    pub ignore_case: bool,
    /// An event must hold every keyword (default: any).
    #[arg(short = 'a', long = "and-logic", requires = "keywords")]
    pub and_logic: bool,
    /// Only events whose field matches (`Field:value`, `*` and `?` wildcards); repeatable,
    /// all must match.
    #[arg(short = 'F', long = "filter", value_name = "FIELD:VALUE")]
    pub filters: Vec<String>,
    /// Only records at or after this time ("2020-02-22 00:00:00 +09:00"; no offset: UTC).
    #[arg(long = "timeline-start", value_name = "TIME")]
    pub timeline_start: Option<String>,
    /// Only records at or before this time.
    #[arg(long = "timeline-end", value_name = "TIME")]
    pub timeline_end: Option<String>,
    /// Sort the results by time (default: file by file, in record order).
    #[arg(short = 's', long = "sort")]
    pub sort: bool,
    /// Write to FILE (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// JSON: one object per event, in an array.
    #[arg(short = 'J', long = "JSON-output", conflicts_with = "jsonl_output")]
    pub json_output: bool,
    /// JSON Lines: one object per line.
    #[arg(short = 'L', long = "JSONL-output")]
    pub jsonl_output: bool,
    /// One item per line in the AllFieldInfo cell (CSV).
    #[arg(short = 'M', long = "multiline", conflicts_with_all = ["json_output", "jsonl_output"])]
    pub multiline: bool,
    /// Full channel names.
    #[arg(short = 'b', long = "disable-abbreviations")]
    pub no_abbreviations: bool,
    /// Config folder (abbreviations, channel_eid_info.txt, default_details.txt).
    /// Default: ./rules/config when it exists (as Hayabusa), else the built-in one.
    #[arg(short = 'c', long = "rules-config", value_name = "DIR")]
    pub config: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(short = 'C', long = "clobber")]
    pub clobber: bool,
    /// Worker threads (default: one per core).
    #[arg(short = 't', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
    /// Quiet: no totals or progress bar on standard error.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Accepted for Hayabusa's command lines: scanner keeps no error log file.
    #[arg(short = 'Q', long = "quiet-errors")]
    pub quiet_errors: bool,
    /// Accepted for Hayabusa's command lines: scanner prints no colours here.
    #[arg(short = 'K', long = "no-color")]
    pub no_color: bool,
    /// Accepted for Hayabusa's command lines (its verbose messages).
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,
    /// CSV cells a spreadsheet would run as a formula written with a leading `'`.
    #[arg(long = "excel-safe")]
    pub excel_safe: bool,

    /// The timestamp format.
    #[command(flatten)]
    pub time: TimeArgs,
}
