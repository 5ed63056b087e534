//! The rule selection group (`RuleArgs`): which rules to load and which of them run,
//! shared by the timelines, pivot-keywords-list and `rules check`.
//!
//! The levels stay text here: `Level::parse` takes Sigma's short names (`info`, `med`,
//! `crit`) in any case, and an unknown one is the run's error ("--min-level: unknown
//! level 'x'", exit code 1) after the checks that come first, which a clap value parser
//! would turn into a usage error. [`RuleArgs::min_level`] and [`RuleArgs::exact_level`]
//! are where they become levels.

use super::{DISPLAY, FILTERING, GENERAL};
use clap::Args;
use scanner_rules::Level;
use std::path::PathBuf;

/// Which rules to load.
#[derive(Args, Debug, Clone)]
pub struct RuleArgs {
    /// Rule file or folder (recursive); repeatable. Default: ./rules when it is a folder
    /// of your own that no one else can write (as Hayabusa), else the set `update-rules`
    /// downloaded, else the built-in rules.
    #[arg(short = 'r', long = "rules", value_name = "PATH", help_heading = GENERAL)]
    pub rules: Vec<PathBuf>,
    /// The built-in rules, even when `update-rules` has downloaded a set.
    #[arg(long = "builtin-rules", conflicts_with = "rules", help_heading = GENERAL)]
    pub builtin_rules: bool,
    /// Config folder (eventkey_alias.txt, default_details.txt, …). Default: <rules>/config.
    #[arg(short = 'c', long = "rules-config", value_name = "DIR", help_heading = GENERAL)]
    pub config: Option<PathBuf>,
    /// Enable rules with status: deprecated.
    #[arg(short = 'D', long = "enable-deprecated-rules", help_heading = FILTERING)]
    pub deprecated: bool,
    /// Enable rules listed in noisy_rules.txt.
    #[arg(short = 'n', long = "enable-noisy-rules", help_heading = FILTERING)]
    pub noisy: bool,
    /// Enable rules with status: unsupported.
    #[arg(short = 'u', long = "enable-unsupported-rules", help_heading = FILTERING)]
    pub unsupported: bool,
    /// Lowest level to load: informational, low, medium, high, critical.
    #[arg(
        short = 'm',
        long = "min-level",
        default_value = "informational",
        value_name = "LEVEL",
        help_heading = FILTERING
    )]
    pub min_level: String,
    /// Folder of `<placeholder>.txt` files giving values for rules' `expand` placeholders.
    #[arg(long = "expand-dir", value_name = "DIR", help_heading = GENERAL)]
    pub expand_dir: Option<PathBuf>,
    /// Run both a rule and a rule derived from it with the same title (by default only the
    /// derived one, e.g. Hayabusa's conversion of a SigmaHQ rule, runs).
    #[arg(long = "keep-derived-duplicates", help_heading = GENERAL)]
    pub keep_derived_duplicates: bool,
    /// List every rejected rule (rules check always does).
    #[arg(long = "show-rule-errors", help_heading = DISPLAY)]
    pub show_errors: bool,
    /// Only rules of exactly this level.
    #[arg(short = 'e', long = "exact-level", value_name = "LEVEL", help_heading = FILTERING)]
    pub exact_level: Option<String>,
    /// Only the rules listed in proven_rules.txt of the config folder.
    #[arg(short = 'P', long = "proven-rules", help_heading = FILTERING)]
    pub proven_rules: bool,
    /// Read, parse and compile every rule file, neither reading nor writing the rule
    /// set cache ($XDG_CACHE_HOME/scanner, else ~/.cache/scanner).
    #[arg(long = "no-rule-cache", help_heading = GENERAL)]
    pub no_rule_cache: bool,
    /// Only rules with one of these tags (e.g. attack.execution); comma-separated.
    #[arg(long = "include-tag", value_name = "TAG", value_delimiter = ',', help_heading = FILTERING)]
    pub include_tags: Vec<String>,
    /// No rules with one of these tags; comma-separated.
    #[arg(long = "exclude-tag", value_name = "TAG", value_delimiter = ',', help_heading = FILTERING)]
    pub exclude_tags: Vec<String>,
    /// Only rules of these log-source categories (e.g. process_creation); comma-separated.
    #[arg(
        long = "include-category",
        value_name = "CATEGORY",
        value_delimiter = ',',
        help_heading = FILTERING
    )]
    pub include_categories: Vec<String>,
    /// No rules of these log-source categories; comma-separated.
    #[arg(
        long = "exclude-category",
        value_name = "CATEGORY",
        value_delimiter = ',',
        help_heading = FILTERING
    )]
    pub exclude_categories: Vec<String>,
    /// Only rules of these statuses (stable, test, experimental, …; `*` for all); comma-separated.
    #[arg(long = "include-status", value_name = "STATUS", value_delimiter = ',', help_heading = FILTERING)]
    pub include_status: Vec<String>,
    /// No rules of these statuses; comma-separated.
    #[arg(long = "exclude-status", value_name = "STATUS", value_delimiter = ',', help_heading = FILTERING)]
    pub exclude_status: Vec<String>,
}

impl RuleArgs {
    /// `-m`: the lowest level to load.
    pub fn min_level(&self) -> Result<Level, String> {
        Level::parse(&self.min_level)
            .ok_or_else(|| format!("--min-level: unknown level '{}'", self.min_level))
    }

    /// `-e`: the one level to load, if given.
    pub fn exact_level(&self) -> Result<Option<Level>, String> {
        self.exact_level
            .as_deref()
            .map(|l| Level::parse(l).ok_or_else(|| format!("--exact-level: unknown level '{l}'")))
            .transpose()
    }
}
