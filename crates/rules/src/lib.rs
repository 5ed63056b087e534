//! Sigma rules, compiled into matchers.
//!
//! This crate turns Sigma rule files (SigmaHQ's format and Hayabusa's dialect of it)
//! into a [`RuleSet`]: compiled detections, an index by (Channel, EventID), the field
//! table rules read through, and a load report that names every rejected rule and why.
//! It knows nothing of EVTX or JSON: rules test an [`Event`], an interface the engine
//! implements over its record view. It does no file I/O beyond reading rules and their
//! config folder.
//!
//! Two decisions shape it. Every field a rule names is interned at load time into a
//! dense [`FieldId`], so matching reads a slot instead of hashing a name per record.
//! And every value is reduced at load time to the cheapest exact test (equality,
//! prefix, suffix, substring on the lowercased value, an Aho-Corasick automaton for
//! long lists); regexes are compiled once into a cache shared by all rules.
//!
//! ```
//! use scanner_rules::{load, LoadOptions, RuleSource};
//! let set = load(&[RuleSource::Builtin], &LoadOptions::default());
//! assert!(set.report.errors.is_empty());
//! assert!(!set.rules.is_empty());
//! ```

#![warn(missing_docs)]

mod builtin;
mod condition;
mod config;
mod correlation;
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

pub use condition::{parse as parse_condition, Cond};
pub use config::{Config, DataMapping};
pub use correlation::{Correlation, CorrelationKind};
pub use event::{push_lowercase, Event, Value};
pub use fields::{FieldId, FieldTable, FxHashMap, FxHasher, CHANNEL, EVENT_ID};
pub use index::{Bucket, RuleIndex};
pub use load::{load, LoadOptions, RuleSelect, RuleSource};
pub use matcher::{Check, RegexCache, ValueTest};
pub use meta::{Level, RuleMeta};
pub use prefilter::ALL_VALUES;
pub use report::{Disabled, LoadError, LoadReport};
pub use rule::{Rule, Selection};
pub use set::RuleSet;
