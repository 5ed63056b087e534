//! Command-line flags: every option of every subcommand is defined under this module,
//! and only here.
//!
//! A flag that several subcommands share with the same names, help and default is
//! declared once, in an argument group (`groups.rs`, and the rule selection in
//! `rules.rs`) that each of them flattens in; each subcommand's own flags sit in the
//! file of its family. Hayabusa's command lines must keep running, so a flag keeps its
//! names, aliases, value name, default and help text in every subcommand that has it:
//! where two subcommands describe "the same" flag differently (`-q` says what each one
//! leaves out), each keeps its own declaration rather than a merged one.
//!
//! Values clap can check without changing what users see are typed here
//! ([`OutputFormat`]); levels and profiles stay text until the run reads them (see
//! [`RuleArgs::min_level`] and `config::profile`), because their errors are the run's
//! own, after the checks that come before them, with exit code 1.

mod evtx;
mod groups;
mod integrity;
mod metrics;
mod rule_tools;
mod rules;
mod search;
mod timeline;

pub use evtx::{EvtxGenerateArgs, EvtxWriteArgs};
pub use groups::{OutputFormat, ReportArgs, TimeArgs};
pub use integrity::{CoverageArgs, LogIntegrityArgs};
pub use metrics::{
    CriticalSystemsArgs, EidMetricsArgs, LogMetricsArgs, LogonSummaryArgs, MetricsArgs,
};
pub use rule_tools::{ExpandListArgs, LevelTuningArgs, UpdateRulesArgs};
pub use rules::RuleArgs;
pub use search::SearchArgs;
pub use timeline::ListProfilesArgs;
pub use timeline::{
    DfirTimelineArgs, JsonTimelineArgs, PivotArgs, RecordFilterArgs, SetDefaultProfileArgs,
    TimelineArgs,
};

use clap::{Parser, Subcommand};
use std::path::PathBuf;

// The headings `--help` groups the options under, Hayabusa's.
/// Where the logs come from.
const INPUT: &str = "Input";
/// How the run goes: rules, threads, files written over.
const GENERAL: &str = "General Options";
/// Which rules and records.
const FILTERING: &str = "Filtering";
/// What is written and how.
const OUTPUT: &str = "Output";
/// What is said on the terminal.
const DISPLAY: &str = "Display Settings";
/// The timestamp format.
const TIME: &str = "Time Format";
/// Measuring a run.
const PROFILING: &str = "Debugging and Profiling";

/// Fast Sigma-rule scanner for Windows event logs.
#[derive(Parser, Debug)]
#[command(name = "scanner", version, about)]
pub struct Cli {
    /// Print allocator statistics (mimalloc's peak and reserved memory) and peak RSS at exit.
    #[arg(long, global = true, help_heading = PROFILING)]
    pub debug: bool,
    /// Write a pprof heap profile (gzip protobuf) of the run's peak memory to FILE and its
    /// flamegraph to FILE.svg (needs a build with the `jemalloc-prof` feature).
    #[arg(
        long = "heap-profile",
        value_name = "FILE",
        global = true,
        help_heading = PROFILING
    )]
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
    ListProfiles(ListProfilesArgs),
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
    /// What the logs' structure and record ids say of tampering or damage: checksums,
    /// headers, record id gaps, time going back, clears, stops, records in slack.
    #[command(name = "log-integrity")]
    LogIntegrity(LogIntegrityArgs),
    /// Which kinds of event (Channel, Provider, EventID) the logs hold, the rules that
    /// can read each and the detections it gave; kinds no rule reads, rules with no
    /// events, files the channel check skips.
    #[command(name = "coverage")]
    Coverage(CoverageArgs),
}

impl Command {
    /// `-l` (live analysis) and the folders it adds the local event logs to, for every
    /// command that reads logs: the timelines, pivot-keywords-list, search, the metrics
    /// commands, logon-summary, extract-base64 and config-critical-systems. Off Windows
    /// each of them stops with the same error (see `config::live_analysis_dirs`).
    pub fn live_analysis(&mut self) -> Option<(bool, &mut Vec<PathBuf>)> {
        fn timeline(t: &mut TimelineArgs) -> (bool, &mut Vec<PathBuf>) {
            (t.hayabusa.live_analysis, &mut t.input.paths.dirs)
        }
        fn report(r: &mut ReportArgs) -> (bool, &mut Vec<PathBuf>) {
            let e = &mut r.evidence;
            (e.source.live_analysis, &mut e.input.paths.dirs)
        }
        Some(match self {
            Command::CsvTimeline(a) => timeline(a),
            Command::JsonTimeline(a) => timeline(&mut a.timeline),
            Command::DfirTimeline(a) => timeline(&mut a.timeline),
            Command::EidMetrics(a) => report(&mut a.common.report),
            Command::ComputerMetrics(a) => report(&mut a.report),
            Command::LogMetrics(a) => report(&mut a.common.report),
            Command::ConfigCriticalSystems(a) => report(&mut a.common.report),
            Command::LogonSummary(a) => report(&mut a.common.report),
            Command::ExtractBase64(a) => report(&mut a.report),
            Command::PivotKeywordsList(a) => timeline(&mut a.timeline),
            Command::Search(a) => report(&mut a.report),
            Command::LogIntegrity(a) => report(&mut a.report),
            Command::Coverage(a) => timeline(&mut a.timeline),
            _ => return None,
        })
    }
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

/// `rules` subcommands.
#[derive(Subcommand, Debug)]
pub enum RulesCommand {
    /// Load a rule set and print the load report; exits non-zero if any rule failed.
    Check(RuleArgs),
}
