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
    /// Work with rule sets.
    #[command(subcommand)]
    Rules(RulesCommand),
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
    /// Rule file or folder (recursive); repeatable. Default: the built-in rules.
    #[arg(short = 'r', long = "rules", value_name = "PATH")]
    pub rules: Vec<PathBuf>,
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
}

/// `csv-timeline` options.
#[derive(Args, Debug)]
pub struct TimelineArgs {
    /// Folder of logs, searched recursively; repeatable.
    #[arg(short = 'd', long = "directory", value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// A log file; repeatable.
    #[arg(short = 'f', long = "file", value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Input is JSON (.json/.jsonl events in the evtx crate's shape) instead of EVTX.
    #[arg(short = 'J', long = "JSON-input")]
    pub json: bool,
    /// Rule options.
    #[command(flatten)]
    pub rules: RuleArgs,
    /// Output profile: minimal, standard, verbose.
    #[arg(short = 'p', long = "profile", default_value = "standard")]
    pub profile: String,
    /// Timestamps in UTC (default: local time).
    #[arg(short = 'U', long = "UTC")]
    pub utc: bool,
    /// Write the timeline to FILE (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Overwrite the output file if it exists.
    #[arg(short = 'C', long = "clobber")]
    pub clobber: bool,
    /// Worker threads (default: one per core).
    #[arg(short = 't', long = "threads", value_name = "N")]
    pub threads: Option<usize>,
    /// No summary on standard error.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,
    /// Evaluate every candidate rule, without the shared-needle prefilter (to measure it,
    /// or to rule it out when debugging).
    #[arg(long = "no-prefilter", hide = true)]
    pub no_prefilter: bool,
}
