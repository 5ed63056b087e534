//! `scanner`: the command-line tool. Flags and subcommands only; the work is done by
//! the `scanner-rules` and `scanner-engine` crates.

mod alloc;
mod args;
mod config;
mod cpu_profile;
mod evtx_cmd;
mod filters;
mod freq_timeline;
mod histogram;
mod interrupt;
mod metrics;
mod output;
mod pivot;
mod progress_bar;
mod record_walk;
mod report_html;
mod rules_cmd;
mod search;
mod sort_memory;
mod summary;
mod terminal;
mod timeline_cmd;
mod write_behind;

/// Exit codes.
mod exit {
    /// Success.
    pub const OK: i32 = 0;
    /// A fatal error: nothing (or nothing complete) was written.
    pub const FATAL: i32 = 1;
    /// Finished, but some inputs (files, records or rules) had errors, which were reported.
    pub const INPUT_ERRORS: i32 = 3;
}

use clap::Parser;

fn main() {
    alloc::configure();
    interrupt::install();
    let cli = args::Cli::parse();
    let code = match &cli.command {
        args::Command::CsvTimeline(a) => timeline_cmd::run(a, timeline_cmd::Format::Csv, cli.debug),
        args::Command::JsonTimeline(a) => timeline_cmd::run(
            &a.timeline,
            if a.jsonl {
                timeline_cmd::Format::JsonLines
            } else {
                timeline_cmd::Format::Json
            },
            cli.debug,
        ),
        args::Command::EidMetrics(a) => metrics::eid(a),
        args::Command::ComputerMetrics(a) => metrics::computer(a),
        args::Command::LogMetrics(a) => metrics::log(a),
        args::Command::PivotKeywordsList(a) => pivot::run(a),
        args::Command::Search(a) => search::run(a),
        args::Command::ListProfiles => timeline_cmd::list_profiles(),
        args::Command::Rules(args::RulesCommand::Check(a)) => rules_cmd::check(a, cli.debug),
        args::Command::Evtx(args::EvtxCommand::Write(a)) => evtx_cmd::write(a),
        args::Command::Evtx(args::EvtxCommand::Generate(a)) => evtx_cmd::generate_cmd(a),
    };
    if cli.debug {
        alloc::report();
    }
    std::process::exit(code);
}
