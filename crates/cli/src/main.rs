//! `scanner`: the command-line tool. Flags and subcommands only; the work is done by
//! the `scanner-rules` and `scanner-engine` crates.

mod alloc;
mod args;
mod config;
mod config_names;
mod coverage;
mod cpu_profile;
mod critical_systems;
mod default_profile;
mod evtx_cmd;
mod exit;
mod expand_list;
mod filters;
mod freq_timeline;
mod heap_profile;
mod histogram;
mod integrity;
mod interrupt;
mod level_tuning;
mod metrics;
#[cfg(all(feature = "mimalloc", not(feature = "jemalloc-prof")))]
mod mi_alloc;
mod navigator;
mod output;
mod phases;
mod pivot;
mod progress_bar;
mod report_html;
mod rule_choice;
mod rules_cmd;
mod scan_setup;
mod search;
mod sort_memory;
mod summary;
mod terminal;
mod timeline_cmd;
mod update_rules;
mod user_dirs;
mod write_behind;

use clap::Parser;

fn main() {
    alloc::configure();
    interrupt::install();
    quiet_when_stdout_closes();
    let mut cli = args::Cli::parse();
    if let Err(e) = live_analysis(&mut cli.command) {
        eprintln!("error: {}", terminal::safe(&e));
        std::process::exit(exit::FATAL);
    }
    let heap = match cli.heap_profile.as_deref().map(heap_profile::start) {
        Some(Err(e)) => {
            eprintln!("error: {}", terminal::safe(&e.to_string()));
            std::process::exit(exit::FATAL);
        }
        Some(Ok(h)) => Some(h),
        None => None,
    };
    let mut code = match &cli.command {
        args::Command::CsvTimeline(a) => timeline_cmd::run(a, args::OutputFormat::Csv, cli.debug),
        args::Command::JsonTimeline(a) => timeline_cmd::run(&a.timeline, a.format(), cli.debug),
        args::Command::DfirTimeline(a) => timeline_cmd::run(&a.timeline, a.output_type, cli.debug),
        args::Command::ExpandList(a) => expand_list::run(a),
        args::Command::ConfigCriticalSystems(a) => metrics::critical_systems(a),
        args::Command::LevelTuning(a) => level_tuning::run(a),
        args::Command::SetDefaultProfile(a) => default_profile::run(a),
        args::Command::EidMetrics(a) => metrics::eid(a),
        args::Command::ComputerMetrics(a) => metrics::computer(a),
        args::Command::LogMetrics(a) => metrics::log(a),
        args::Command::PivotKeywordsList(a) => pivot::run(a),
        args::Command::Search(a) => search::run(a),
        args::Command::LogonSummary(a) => metrics::logon_summary(a),
        args::Command::ExtractBase64(a) => metrics::extract_base64(a),
        args::Command::ListProfiles(_) => timeline_cmd::list_profiles(),
        args::Command::Rules(args::RulesCommand::Check(a)) => rules_cmd::check(a, cli.debug),
        args::Command::UpdateRules(a) => update_rules::run(a),
        args::Command::Evtx(args::EvtxCommand::Write(a)) => evtx_cmd::write(a),
        args::Command::Evtx(args::EvtxCommand::Generate(a)) => evtx_cmd::generate_cmd(a),
        args::Command::LogIntegrity(a) => integrity::run(a),
        args::Command::Coverage(a) => coverage::run(a),
    };
    if let Some(h) = heap {
        match h.finish() {
            Ok(w) if cli.debug => eprintln!(
                "heap profile: {:.1} MiB live in the profile (the last of {} dumps); \
                 peak of the bytes live {:.1} MiB",
                w.bytes / 1048576.0,
                w.dumps,
                w.peak as f64 / 1048576.0
            ),
            Ok(_) => {}
            Err(e) => {
                eprintln!("error: {}", terminal::safe(&e.to_string()));
                code = exit::FATAL;
            }
        }
    }
    if cli.debug {
        alloc::report();
    }
    std::process::exit(code);
}

/// `-l` (live analysis): the local event log folder joins the folders read.
fn live_analysis(c: &mut args::Command) -> Result<(), String> {
    match c.live_analysis() {
        Some((live, dirs)) => config::live_analysis_dirs(live, dirs),
        None => Ok(()),
    }
}

/// Ends the process quietly with success when a `println!` finds standard output's
/// reader gone (`scanner … | head`): the commands that write their output through
/// `io::Write` stop on `output::reader_gone`; this covers the few lines printed by
/// macro, which would otherwise panic.
fn quiet_when_stdout_closes() {
    // How the system words a closed pipe, as the panic message quotes it.
    #[cfg(unix)]
    static BROKEN_PIPE: std::sync::LazyLock<String> =
        std::sync::LazyLock::new(|| std::io::Error::from_raw_os_error(libc::EPIPE).to_string());
    #[cfg(not(unix))]
    static BROKEN_PIPE: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
        std::io::Error::from(std::io::ErrorKind::BrokenPipe).to_string()
    });
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let text = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if text.starts_with("failed printing to stdout") && text.contains(&*BROKEN_PIPE) {
            std::process::exit(exit::OK);
        }
        default(info);
    }));
}
