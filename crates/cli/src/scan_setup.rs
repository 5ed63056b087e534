//! What the commands that run the rules over logs need, built from their flags in one
//! place: the timelines (csv-, json- and dfir-timeline) and pivot-keywords-list, which
//! is the same scan followed by a walk of its own. In ripgrep's terms, this is their
//! "HiArgs": the flags ([`TimelineArgs`]) become the files written, the thread pool,
//! the rule set, the input files, the scanner and the layout here, and nowhere else.
//!
//! A command asks for each piece when it needs it rather than getting them all built at
//! once, because the commands differ in the order of their checks and in what they skip
//! (pivot-keywords-list reads no profile, writes no timeline and reads its categories
//! from the chosen rule set's config), and a check's place decides which error a user
//! sees.

use crate::args::TimelineArgs;
use crate::config;
use crate::progress_bar::ProgressBar;
use crate::rule_choice::RuleChoice;
use scanner_engine::{GeoIpMapping, Progress, ScanResult, Scanner, SortedRows};
use scanner_input::{Discovered, InputError, InputFile, InputKind, NotRead};
use scanner_rules::RuleSet;
use scanner_timeline::{GeoIp, Layout, Profile, TimeFormat};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The input files found, the errors finding them (before any is left out), and the
/// files met and not read.
pub type Found = Discovered;

/// What the run reads: the files to scan, the problems met finding them, and how many
/// files the channel check left out.
pub struct Inputs {
    /// The files to scan.
    pub files: Vec<InputFile>,
    /// The problems met finding them.
    pub errors: Vec<InputError>,
    /// EVTX files left out because no rule reads their channel.
    pub skipped: usize,
    /// Files met in the folders searched and not read, by extension.
    pub not_read: NotRead,
}

/// A finished scan: the scanner (which owns the rule set), its result and the sort
/// memory bound it ran with, in bytes.
pub type Scanned = (Scanner, ScanResult<SortedRows>, usize);

/// A detection scan's settings, from its flags.
pub struct ScanSetup<'a> {
    args: &'a TimelineArgs,
    time: TimeFormat,
    /// Count the kinds of event met (`coverage`).
    coverage: bool,
}

impl<'a> ScanSetup<'a> {
    /// The settings of a scan of the logs `args` name; an error when they name none.
    pub fn new(args: &'a TimelineArgs) -> Result<ScanSetup<'a>, String> {
        if args.input.paths.is_empty() {
            return Err("nothing to scan: give -d DIR or -f FILE".into());
        }
        crate::rule_choice::check_rule_paths(&args.rules)?;
        Ok(ScanSetup {
            args,
            time: config::time_format(&args.time),
            coverage: false,
        })
    }

    /// The scan also counts the kinds of event it meets (`ScanResult::coverage`).
    pub fn counting_types(mut self) -> Self {
        self.coverage = true;
        self
    }

    /// The timestamp format (`-U`, `-O`, …).
    pub fn time(&self) -> &TimeFormat {
        &self.time
    }

    /// The profile of `-p` (else the default one); see [`config::profile`].
    pub fn profile(&self) -> Result<Profile, String> {
        config::profile(self.args)
    }

    /// The files the run writes: `-o` (unless `-` or absent: standard output), `-H`,
    /// `--rule-stats`, `--cpu-profile`. No input may be one of them.
    pub fn outputs(&self) -> Vec<&'a Path> {
        let a = self.args;
        let timeline = a.output.as_deref().filter(|p| *p != Path::new("-"));
        let others = [
            &a.html_report,
            &a.rule_stats,
            &a.cpu_profile,
            &a.attack_navigator,
        ];
        timeline
            .into_iter()
            .chain(others.into_iter().flatten().map(PathBuf::as_path))
            .collect()
    }

    /// `-G DIR`'s three GeoLite2 databases, read; the error names the file missing or
    /// damaged.
    pub fn geo_ip(&self) -> Result<Option<GeoIp>, String> {
        let Some(dir) = &self.args.hayabusa.geo_ip else {
            return Ok(None);
        };
        GeoIp::open(dir)
            .map(Some)
            .map_err(|e| format!("-G/--geo-ip: {e}"))
    }

    /// Starts the worker threads `-t` asks for.
    pub fn start_threads(&self) -> Result<(), String> {
        config::start_threads(self.args.pool.threads).map_err(|e| e.to_string())
    }

    /// The rule set the flags choose (`-r`, else `./rules`, …; see [`RuleChoice`]).
    pub fn rule_choice(&self) -> RuleChoice {
        RuleChoice::of(&self.args.rules, self.args.quiet)
    }

    /// Loads the rules of `choice` with the rule flags, saying which set is used unless
    /// `-q`.
    pub fn load_rules(&self, choice: &RuleChoice) -> Result<RuleSet, String> {
        crate::rules_cmd::load_rules_with(&self.args.rules, choice, self.args.quiet)
    }

    /// Finds the input files, refusing any that is also an output.
    pub fn find_inputs(&self) -> Result<Found, String> {
        let a = self.args;
        let extra = &a.hayabusa.extensions.target_file_ext;
        let paths = &a.input.paths;
        let password = paths.archive_password.as_ref();
        let found =
            scanner_input::discover_all(&paths.dirs, &paths.files, a.input.kind(), extra, password);
        let files = found.files.iter().map(|f| f.path.as_path());
        crate::output::refuse_inputs(&self.outputs(), files)?;
        Ok(found)
    }

    /// Of the files `found`, those to scan: EVTX files whose channel no rule of `set`
    /// reads are left out unless `-a`.
    pub fn keep_inputs(&self, found: Found, set: &RuleSet) -> Inputs {
        let Discovered {
            mut files,
            errors,
            not_read,
        } = found;
        let mut skipped = 0;
        if self.args.input.kind() == InputKind::Evtx && !self.args.scan_all_files {
            let (kept, left) = scanner_input::split_by_channel(files, set);
            files = kept;
            skipped = left.len();
        }
        Inputs {
            files,
            errors,
            skipped,
            not_read,
        }
    }

    /// [`ScanSetup::find_inputs`], then [`ScanSetup::keep_inputs`].
    pub fn inputs(&self, set: &RuleSet) -> Result<Inputs, String> {
        Ok(self.keep_inputs(self.find_inputs()?, set))
    }

    /// Scans `files` with the rules of `set`, rows carrying what `profile` shows (with a
    /// progress bar on a terminal, and the CPU profile when asked; each file timed when
    /// `file_times`).
    pub fn scan(
        &self,
        profile: Profile,
        set: RuleSet,
        files: &[InputFile],
        file_times: bool,
        line_breaks: bool,
    ) -> Result<Scanned, String> {
        let a = self.args;
        let filter = crate::filters::record_filter(&a.filter, &set, self.time.zone())?;
        crate::output::remove_stale_spills();
        let sort_bytes = match a.sort_memory {
            Some(mib) => crate::sort_memory::from_mib(mib)?,
            None => crate::sort_memory::default(),
        };
        let profiler = match &a.cpu_profile {
            Some(_) => Some(crate::cpu_profile::start()?),
            None => None,
        };
        let progress = Arc::new(Progress::default());
        let bar = (std::io::stderr().is_terminal() && !a.quiet).then(|| {
            ProgressBar::start(
                Arc::clone(&progress),
                files.len() as u64,
                files.iter().map(|f| f.size).sum(),
            )
        });
        let progress = bar.is_some().then_some(progress);
        let geo = match a.hayabusa.geo_ip {
            Some(_) => Some(geo_mapping(&set)?),
            None => None,
        };
        let scanner = config::scanner(a, profile, filter, progress)
            .keep_line_breaks(line_breaks)
            .sort_memory(Some(sort_bytes))
            .file_times(file_times)
            .geo_ip(geo)
            .coverage(self.coverage)
            .build(set);
        let result = scanner.scan_sorted(files);
        if let (Some(p), Some(path)) = (profiler, &a.cpu_profile) {
            p.finish(path, a.overwrite.clobber)?;
        }
        if let Some(b) = bar {
            b.finish();
        }
        Ok((scanner, result, sort_bytes))
    }

    /// The timeline's layout for the rows of `scanner` over `files`: the profile's
    /// columns, the style flags and, with `-x`, the RecoveredRecord column.
    pub fn layout<'s>(
        &self,
        scanner: &'s Scanner,
        files: &'s [InputFile],
        profile: Profile,
    ) -> Layout<'s> {
        Layout::new(scanner.rules(), files, self.time.clone(), profile)
            .with_style(config::style(self.args))
            .with_recovered_column(self.args.recover_records)
    }
}

/// What `-G` looks up: the rules config's `geoip_field_mapping.yaml`, read; the error
/// says it is missing or what is wrong with it.
fn geo_mapping(set: &RuleSet) -> Result<GeoIpMapping, String> {
    let text = set.config().geoip.as_deref().ok_or(
        "-G/--geo-ip: the rules config has no geoip_field_mapping.yaml (which fields of which \
         events to look up); give -r a rules folder whose config/ has one",
    )?;
    GeoIpMapping::parse(text)
        .map_err(|e| format!("-G/--geo-ip: the rules config's geoip_field_mapping.yaml: {e}"))
}
