//! The detection engine: record views in, sorted detection rows out.
//!
//! A [`Scanner`] (configured once by a [`ScannerBuilder`]) takes the input files
//! `scanner-input` finds, has each record filled into a reusable
//! [`scanner_input::RecordView`], and tests it against a compiled
//! [`scanner_rules::RuleSet`]: only the rules indexed under the record's (Channel,
//! EventID), and of those only the ones the bucket's prefilter admits. A match becomes a
//! slim [`DetectInfo`] row, its Details, ExtraFieldInfo and AllFieldInfo rendered at
//! once from the record as [`Items`] (their items kept apart, never joined with a
//! separator); correlation rules are evaluated over the scan's hits at the end. Rows
//! come out sorted in timeline order ([`SortedRows`]). It knows nothing of flags, YAML
//! or output formats: the CLI configures it, `scanner-rules` compiles rules,
//! `scanner-timeline` writes rows.
//!
//! Two decisions shape it. Records are streamed: no file's records are ever collected,
//! only its detections, rendered as the match happens so that rows never hold a
//! record. And detections are held only up to a memory bound
//! ([`ScannerBuilder::sort_memory`]): past it they are sorted in runs spilled to
//! temporary files and merged back as the timeline is written, one row at a time.
//! Correlation hits are bounded the same way (a quarter of the bound), and merged back
//! by correlation and group, so that correlations are evaluated one group at a time.
//!
//! ```no_run
//! use scanner_engine::ScannerBuilder;
//! use scanner_input::{discover, InputKind};
//! use scanner_rules::{load, LoadOptions, RuleSource};
//! let set = load(&[RuleSource::Builtin], &LoadOptions::default());
//! let scanner = ScannerBuilder::new().extra_field_info(true).build(set);
//! let (files, _errors) = discover(&["logs".into()], &[], InputKind::Evtx);
//! let result = scanner.scan(&files).expect("spilled rows read back");
//! println!("{} detections", result.rows.len());
//! ```

#![warn(missing_docs)]

mod coverage;
mod detect;
mod integrity;
mod items;
mod progress;
mod pwsh_fields;
mod render;
mod row;
mod scan;
mod scanner;
mod sort;

pub use coverage::{TypeCount, TypeTally};
pub use detect::filter::RecordFilter;
pub use detect::stats::{RuleStats, RuleTiming};
pub use integrity::{level as integrity_level, meta as integrity_meta, IntegrityRule};
pub use items::{Item, ItemEnd, ItemIter, Items, ItemsBuf};
pub use progress::{Progress, ProgressSnapshot};
pub use render::all_fields::AllFields;
pub use render::details::template_items;
pub use render::geo::{GeoIpMapping, GeoMappingError};
pub use row::{CorrelationOrigin, DetectInfo, GeoAddrs, Names, Origin, RuleRef};
pub use scan::{ScanResult, ScanStats};
pub use scanner::{Scanner, ScannerBuilder};
pub use sort::merge::SortedRows;
pub use sort::spill_dir::remove_stale_spills;
pub use sort::RowStore;
