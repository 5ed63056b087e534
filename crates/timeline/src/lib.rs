//! The timeline: sorted detections in, CSV or JSON bytes out, as Hayabusa writes them.
//!
//! A [`Layout`] holds what a timeline looks like: one of Hayabusa's eight profiles
//! ([`Profile`]: which columns, in which order), the cell [`Style`] (`-M`, `-S`, `-b`,
//! `-X`), the [`TimeFormat`], and where cells are looked up (the rules' titles, levels
//! and tags; the input files' names; the [`CriticalSystems`] whose detections are shown a
//! level up). Cells are rendered once per row ([`RowCells`]), a cell of several items
//! as a list ([`CellRef`], read from the row where it is), and encoded by a
//! [`RowEncoder`]: [`CsvEncoder`] or
//! [`JsonEncoder`] (a stream of objects, or JSON Lines). Only an encoder joins items, each style
//! with its separator; JSON writes Details' items as pairs. [`write_timeline`] runs the merge of the engine's sorted rows, the
//! encoding and the writing on three threads; [`write_encoded`] does the same on one,
//! with the same bytes. [`write_rule_stats`] writes the scan's per-rule evaluation
//! times as TSV. Cells a spreadsheet would run as formulas are counted as the CSV is
//! encoded and, with [`Style::excel_safe`], written as text. [`Layout::with_geo`] adds
//! `-G`'s six columns, from MaxMind's GeoLite2 databases ([`GeoIp`], read once) and the
//! addresses the rows carry, each address looked up once a run. It knows nothing of
//! flags, input formats or rule matching.
//!
//! The design decision that matters: rows reach this crate as slim
//! [`scanner_engine::DetectInfo`] values holding ids and typed, rendered values (items
//! kept apart, file indices), never records, so writing needs neither the input nor the
//! rule matchers, nothing is parsed again, and the rows can come back from the
//! engine's spilled sort runs one at a time.
//!
//! ```no_run
//! use scanner_engine::ScannerBuilder;
//! use scanner_input::{discover, InputKind};
//! use scanner_rules::{load, LoadOptions, RuleSource};
//! use scanner_timeline::{write_timeline, CsvEncoder, Layout, Profile, TimeFormat};
//! let set = load(&[RuleSource::Builtin], &LoadOptions::default());
//! let scanner = ScannerBuilder::new()
//!     .extra_field_info(Profile::Standard.has_extra())
//!     .build(set);
//! let (files, _errors) = discover(&["logs".into()], &[], InputKind::Evtx);
//! let result = scanner.scan_sorted(&files);
//! let layout = Layout::new(scanner.rules(), &files, TimeFormat::utc(), Profile::Standard);
//! let mut out = std::io::stdout().lock();
//! write_timeline(CsvEncoder::new(&layout), &mut out, result.rows, |_| {}).unwrap();
//! ```

#![warn(missing_docs)]

mod abbrev;
mod cell;
mod critical;
mod csv;
mod encoder;
mod formula;
mod geo;
mod json;
mod layout;
mod pipeline;
mod profile;
mod row_cells;
mod rule_stats;
#[cfg(test)]
mod test_row;
mod time_format;

pub use abbrev::{channel as channel_abbrev, provider as provider_abbrev};
pub use cell::{Cell, CellRef};
pub use critical::CriticalSystems;
pub use csv::CsvEncoder;
pub use encoder::{write_encoded, RowEncoder};
pub use formula::is_formula;
pub use geo::{GeoIp, GeoIpError, GEOIP_DATABASES};
pub use json::{row_json, JsonEncoder};
pub use layout::Layout;
pub use pipeline::write as write_timeline;
pub use profile::{Column, Profile, Style, LIST_SEPARATOR};
pub use row_cells::{RowCells, DUP};
pub use rule_stats::write_rule_stats;
pub use time_format::{TimeFormat, TimeStyle};
