//! `scanner`: the command-line tool. Flags and subcommands only; the work is done by
//! the `scanner-rules` and `scanner-engine` crates.

mod alloc;
mod args;
#[allow(dead_code)] // wired to `csv-timeline --cpu-profile` with the CLI flags of issue 8
mod cpu_profile;
mod evtx_cmd;
mod output;
mod rules_cmd;
mod timeline_cmd;

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
    let cli = args::Cli::parse();
    let code = match &cli.command {
        args::Command::CsvTimeline(a) => timeline_cmd::run(a),
        args::Command::Rules(args::RulesCommand::Check(a)) => rules_cmd::check(a, cli.debug),
        args::Command::Evtx(args::EvtxCommand::Write(a)) => evtx_cmd::write(a),
        args::Command::Evtx(args::EvtxCommand::Generate(a)) => evtx_cmd::generate_cmd(a),
    };
    if cli.debug {
        alloc::report();
    }
    std::process::exit(code);
}
