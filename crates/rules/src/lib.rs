//! Sigma rules, compiled into matchers.
//!
//! This crate turns Sigma rule files (SigmaHQ's format and Hayabusa's dialect of it)
//! into a [`RuleSet`]: compiled detections, an index by (Channel, EventID), the field
//! table rules read through, and a load report that names every rejected rule and why.
//! [`load`] is the entry point; each loaded [`Rule`] then tests anything that implements
//! [`Event`] (`rule.is_match(&event)`).
//!
//! What it is not: it knows nothing of EVTX or JSON (rules test an [`Event`], an
//! interface the engine implements over its record view), it does not scan, sort or
//! print, and it does no file I/O beyond reading rules and their config folder, and
//! the rule set cache when [`LoadOptions::cache_dir`] names a folder for it
//! (`load::cache`): the whole loaded set, taken while none of the files and folders it
//! came from changed. What any such cache needs is `scanner-files`' (`CheckedCache`:
//! the trusted, sealed file named for its key, checked against the statuses of what
//! the load looked at); what the cache is keyed by, how a set is encoded and checked
//! (`load::cache::sound`) are this crate's. A cache file's header names the binary
//! that wrote it, so the encoding follows the crate's types with no version to bump.
//! Correlations are loaded and resolved here but evaluated by the engine after a scan.
//!
//! Three decisions shape it:
//!
//! - Every field a rule names is interned at load time into a dense [`FieldId`], so
//!   matching reads a slot instead of hashing a name per record.
//! - Every value is reduced at load time to the cheapest exact test (equality, prefix,
//!   suffix, substring on the lowercased value, an Aho-Corasick automaton or an affix
//!   set for long lists); regexes are compiled once into a [`RegexCache`] shared by all
//!   rules. Compilation (`matcher::compile`) and evaluation (`matcher`) are kept apart.
//!   Automata and regexes are built the first time a record needs them (`Automaton`,
//!   `LazyRegex`), once for all rules that share them: a scan pays only for the
//!   channels and EventIDs its logs hold.
//! - A document that cannot be loaded costs only itself: loading never fails as a
//!   whole. Errors are [`RuleError`]s (an [`ErrorKind`] plus where it happened) whose
//!   text is what the [`LoadReport`] prints.
//!
//! Rule and config folders may hold what an attacker wrote, so what loading costs is
//! bounded: every file is read through one reader (`text_file`: regular files only,
//! opened without blocking, capped per kind), every YAML text through one parser
//! (the `scanner-yaml` crate: aliases cannot expand a document past a budget
//! proportional to its text; the block style rules are written in is read directly,
//! anything else by `yaml_serde`), and every regex is charged to a total budget for the
//! rule set ([`REGEX_BUDGET`]). A config file that cannot be loaded is a
//! [`LoadReport::config_failures`] entry, which a caller must treat as fatal.
//!
//! Inside, loading runs in four phases (`load/`): read the config and rule files,
//! compile each YAML document in parallel (`load::document`, filters in
//! `load::filter`), select what runs (`load::select`), and index; unless the rule set
//! cache serves the whole set. `meta` (what a rule says about itself),
//! `correlation::count` and `event` are leaves, so the module
//! graph has no cycles.
//!
//! ```
//! use scanner_rules::{load, LoadOptions, RuleSource};
//! let set = load(&[RuleSource::Builtin], &LoadOptions::default());
//! assert!(set.report().errors.is_empty());
//! assert!(!set.rules().is_empty());
//! ```
//!
//! A condition on its own, over a rule's selection names:
//!
//! ```
//! use scanner_rules::Cond;
//! let names = vec!["selection".to_string(), "filter".to_string()];
//! let c = Cond::parse("selection and not filter", &names).unwrap();
//! assert!(c.eval(&mut |i| i == 0));
//! assert_eq!(
//!     Cond::parse("selection and nope", &names).unwrap_err().to_string(),
//!     "condition names 'nope', which is not a selection of the rule"
//! );
//! ```

#![warn(missing_docs)]

mod builtin;
mod condition;
mod config;
mod correlation;
mod error;
mod event;
mod fields;
mod index;
mod load;
mod logsource;
mod matcher;
mod meta;
mod prefilter;
mod report;
mod rule;
mod set;
#[cfg(test)]
mod tests;
mod text_file;

pub use crate::{
    condition::Cond,
    config::{Config, DataMapping},
    correlation::{
        Correlation, CorrelationInput, CorrelationKind, CorrelationSource, CountOp, InputKey,
    },
    error::{ErrorKind, RuleError},
    event::{push_lowercase, push_lowercase_same_length, Event, Value},
    fields::{FieldId, FieldTable, FxHashMap, FxHashSet, FxHasher, CHANNEL, EVENT_ID},
    load::{load, LoadOptions, RuleSelect, RuleSource},
    matcher::{RegexCache, REGEX_BUDGET},
    meta::{Level, RuleMeta},
    prefilter::Admission,
    report::{CacheUse, Disabled, DuplicateId, LoadError, LoadReport, SetCacheUse},
    rule::{Constraint, Rule},
    set::RuleSet,
};
/// The kinds of text file scanner reads, with their caps (`scanner-files`), for the
/// CLI's own reads of rule and config files.
pub use scanner_files::TextFile;
/// The bounded YAML reader every rule and config file goes through, for the CLI's
/// `expand-list`.
pub use scanner_yaml::documents as yaml_documents;
