//! `scanner rules check`, and the rule loading shared with the timeline command.

use crate::args::RuleArgs;
use crate::exit;
use crate::rule_choice::RuleChoice;
use crate::summary::noun;
use crate::terminal::safe;
use scanner_rules::{load, LoadOptions, RuleSelect, RuleSet, RuleSource};

/// Loads the rules the arguments name (saying which set on standard error). A config
/// file that could not be loaded is an error (after each is printed): the rules would
/// run with another config than the one given.
pub fn load_rules(a: &RuleArgs) -> Result<RuleSet, String> {
    load_rules_with(a, &RuleChoice::of(a, false), false)
}

/// The rule cache's folder: `$XDG_CACHE_HOME/scanner`, else `~/.cache/scanner`
/// (`%LOCALAPPDATA%\\scanner` on Windows); none when no such variable is set to an
/// absolute path.
pub fn rule_cache_dir() -> Option<std::path::PathBuf> {
    crate::user_dirs::base("XDG_CACHE_HOME", ".cache")
        .or_else(|| {
            std::env::var_os("LOCALAPPDATA")
                .map(std::path::PathBuf::from)
                .filter(|p| p.is_absolute())
        })
        .map(|d| d.join("scanner"))
}

/// Loads the rules of `choice` with the options of `a`; says which set runs unless
/// `quiet`.
pub fn load_rules_with(a: &RuleArgs, choice: &RuleChoice, quiet: bool) -> Result<RuleSet, String> {
    let min_level = a.min_level()?;
    if !quiet {
        eprintln!("{}", safe(&choice.describe()));
    }
    let sources: Vec<RuleSource> = choice.paths().into_iter().map(RuleSource::Path).collect();
    let opts = LoadOptions {
        config_dir: a.config.clone(),
        min_level,
        enable_deprecated: a.deprecated,
        enable_unsupported: a.unsupported,
        enable_noisy: a.noisy,
        expand_dir: a.expand_dir.clone(),
        keep_derived_duplicates: a.keep_derived_duplicates,
        exact_level: a.exact_level()?,
        proven_only: a.proven_rules,
        select: RuleSelect {
            include_tags: a.include_tags.clone(),
            exclude_tags: a.exclude_tags.clone(),
            include_categories: a.include_categories.clone(),
            exclude_categories: a.exclude_categories.clone(),
            include_status: a.include_status.clone(),
            exclude_status: a.exclude_status.clone(),
        },
        cache_dir: if a.no_rule_cache {
            None
        } else {
            rule_cache_dir()
        },
    };
    let set = load(&sources, &opts);
    if opts.proven_only && set.config().proven.is_none() {
        return Err(
            "-P/--proven-rules: the config folder has no proven_rules.txt (give it with -c DIR)"
                .into(),
        );
    }
    let cache = &set.report().cache;
    for note in [&cache.set.note, &cache.note].into_iter().flatten() {
        eprintln!("warning: {}", safe(note));
    }
    let failures = &set.report().config_failures;
    if !failures.is_empty() {
        for e in failures {
            eprintln!("config error: {}", safe(&e.to_string()));
        }
        return Err(format!(
            "{} config file{} could not be loaded",
            failures.len(),
            if failures.len() == 1 { "" } else { "s" }
        ));
    }
    Ok(set)
}

/// The rules of a load in all: every rule and correlation document read, and each file
/// that gave none because it could not be read or parsed (counted once, as one rejected
/// rule). Enabled, disabled and rejected add up to it.
fn rules_in_all(r: &scanner_rules::LoadReport) -> usize {
    r.documents + r.errors.iter().filter(|e| e.document == 0).count()
}

/// The load report's totals line: the rules (documents: a file may hold several, a rule
/// and its correlation) in how many files, and how those rules split into enabled,
/// disabled (with each reason) and rejected, which add up to the first figure.
pub fn report_line(set: &RuleSet) -> String {
    let r = set.report();
    let n = |v: usize| v as u64;
    let total = rules_in_all(r);
    let disabled: usize = r.disabled.iter().map(|(_, n)| n).sum();
    let reasons: Vec<String> = r
        .disabled
        .iter()
        .map(|(d, n)| format!("{n} {}", d.label()))
        .collect();
    format!(
        "rules: {total} {} in {} {}: {} enabled, {disabled} disabled{}, {} rejected; {} distinct {}, {} (channel, EventID) index {}",
        noun(n(total), "rule", "rules"),
        r.files,
        noun(n(r.files), "file", "files"),
        r.enabled,
        if reasons.is_empty() {
            String::new()
        } else {
            format!(" ({})", reasons.join(", "))
        },
        r.errors.len(),
        set.regexes(),
        noun(n(set.regexes()), "regex", "regexes"),
        set.index_keys(),
        noun(n(set.index_keys()), "key", "keys")
    )
}

/// Prints the load report: each rejected rule, then the totals.
pub fn print_report(set: &RuleSet, list_errors: bool) {
    let r = set.report();
    for e in &r.config_errors {
        eprintln!("config error: {}", safe(&e.to_string()));
    }
    for d in &r.duplicate_ids {
        eprintln!("rule warning: {}", safe(&d.to_string()));
    }
    if list_errors {
        for e in &r.errors {
            eprintln!("rule error: {}", safe(&e.to_string()));
        }
        for e in &r.disabled_rules {
            eprintln!("rule disabled: {}", safe(&e.to_string()));
        }
    }
    eprintln!("{}", report_line(set));
}

/// Prints the loading phases' wall times (`--debug`).
pub fn print_timings(set: &RuleSet) {
    for (name, d) in &set.report().timings {
        eprintln!("load phase: {name}: {:.3} s", d.as_secs_f64());
    }
    eprintln!(
        "load: distinct regexes take {} KiB compiled (budget {} MiB)",
        set.report().regex_bytes >> 10,
        scanner_rules::REGEX_BUDGET >> 20
    );
    let s = &set.report().cache.set;
    let path = |f: &std::path::Path| safe(&f.display().to_string()).into_owned();
    match &s.file {
        Some(f) if s.served => eprintln!(
            "load: rule cache: the whole rule set from {} ({} rule and config files and folders unchanged)",
            path(f),
            s.inputs
        ),
        Some(f) => eprintln!(
            "load: rule set cache {}: {}{}",
            path(f),
            safe(s.missed.as_deref().unwrap_or("not used")),
            match (&s.not_written, s.written) {
                (_, true) => format!(", written anew ({} files and folders to check)", s.inputs),
                (Some(why), false) => format!(", not written: {}", safe(why)),
                (None, false) => String::new(),
            }
        ),
        None => eprintln!("load: rule cache not used"),
    }
}

/// `rules check`.
pub fn check(a: &RuleArgs, debug: bool) -> i32 {
    let set = match load_rules(a) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {}", safe(&e));
            return exit::FATAL;
        }
    };
    print_report(&set, true);
    if debug {
        print_timings(&set);
    }
    let r = set.report();
    let total = rules_in_all(r);
    println!(
        "loaded {} of {total} {}",
        r.loaded,
        noun(total as u64, "rule", "rules")
    );
    let code = if r.errors.is_empty() && r.config_errors.is_empty() {
        exit::OK
    } else {
        exit::INPUT_ERRORS
    };
    // The process ends next, and its memory with it: freeing the set's allocations one
    // by one first cost more than the load from its cache.
    std::mem::forget(set);
    code
}
