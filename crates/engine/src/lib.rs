//! The scanning engine: records in, detections out.
//!
//! It reads EVTX files (through the `evtx` crate) and JSON event files, turns each
//! record into a reusable [`RecordView`] (an EVTX record from its template and typed
//! values, [`typed`], or else from its JSON rendering), tests it against a compiled
//! [`scanner_rules::RuleSet`] by (Channel, EventID), and produces slim
//! [`DetectInfo`] rows that a `scanner-timeline` writes. It knows nothing of flags or
//! YAML: the CLI wires it up, the rules crate compiles rules.
//!
//! Data flows one way: file → records → matches → `DetectInfo` → writer. Records are
//! streamed: no file's records are ever collected, only its detections, and those only
//! up to a memory bound ([`Scanner::set_sort_memory`]): past it they are sorted in runs
//! spilled to temporary files and merged back as the timeline is written
//! ([`Scanner::scan_sorted`]).
//!
//! ```no_run
//! use scanner_engine::Scanner;
//! use scanner_input::{discover, InputKind};
//! use scanner_rules::{load, LoadOptions, RuleSource};
//! let set = load(&[RuleSource::Builtin], &LoadOptions::default());
//! let scanner = Scanner::new(set, true);
//! let (files, _errors) = scanner_input::discover(&["logs".into()], &[], InputKind::Evtx);
//! let result = scanner.scan(&files, InputKind::Evtx);
//! println!("{} detections", result.rows.len());
//! ```

#![warn(missing_docs)]

mod detect;
mod progress;
mod render;
mod row;
mod scan;
mod scanner;
mod sort;

pub use detect::filter::RecordFilter;
pub use detect::stats::{write_tsv as write_rule_stats, RuleStats, RuleTiming};
pub use progress::{Progress, ProgressSnapshot};
pub use render::details::SEP as DETAILS_SEP;
pub use row::{DetectInfo, Origin};
pub use scan::{ScanResult, ScanStats};
pub use scanner::{Scanner, ScannerBuilder};
pub use sort::merge::SortedRows;
pub use sort::temp_files::{
    create as create_temp_file, forget as forget_temp_file, remove as remove_temp_file,
    remove_all_and_hold as remove_all_temp_files_and_hold,
};
pub use sort::RowStore;
