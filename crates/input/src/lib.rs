//! Windows event log input: files in, one reusable record view per record out.
//!
//! This crate finds input files ([`discover`]), reads EVTX files through the `evtx`
//! crate ([`read_evtx`]: chunks in parallel, damaged chunks salvaged or reported) and
//! JSON event files in every export shape ([`read_file`]), and fills a [`RecordView`] for each record: the
//! record's leaves (path and value, each value lowercased once) linked to the
//! [`scanner_rules::FieldId`]s rules read, so a rule tests a field by index. A
//! [`RecordView`] implements [`scanner_rules::Event`]: it is what the rules evaluate.
//! It knows nothing of detections, sorting or output formats.
//!
//! Two decisions shape it. Records are streamed: every reader hands one record at a
//! time to a callback, and nothing collects a file's records. And an EVTX record is
//! read, where it can be, straight from its template and typed values ([`TypedState`]),
//! without the crate building and rendering its tree; the JSON rendering is the
//! fallback, and both give the same leaves.
//!
//! Commands that read every record without rules (the metrics, logon summary, base64
//! extraction) share one parallel walk, [`walk`]: the caller interns the paths it reads
//! in a [`scanner_rules::FieldTable`] and gives a [`Tally`] type; it gets one tally per
//! file, in file order.
//!
//! Evidence arrives in archives and other tools' output: zip, 7z and tar (plain, gzip,
//! bzip2) files, nested too, are read in place (`archive/`: each member that is input
//! is an [`InputFile`] with a [`Member`], copied when read into a private unlinked
//! temporary file, every bound an error naming archive and member); EvtxECmd's CSV and
//! JSON are read as events (`evtxecmd.rs`); files met and not read are counted
//! ([`NotRead`]).
//!
//! Problems are [`InputError`]s: the file, a [`Position`] in it (chunk, record, line)
//! and an [`ErrorKind`]; reading goes on past them where it can, and their text is the
//! message the scan reports.
//!
//! ```no_run
//! use scanner_input::{discover, read_evtx, EvtxRead, Flattener, InputKind, RecordView};
//! use scanner_rules::FieldTable;
//! let (files, _errors) = discover(&["logs".into()], &[], InputKind::Evtx);
//! let table = FieldTable::default();
//! for f in &files {
//!     read_evtx(
//!         &f.path,
//!         f.size,
//!         EvtxRead { recover: false, typed: true, validate_checksums: false },
//!         || (Flattener::default(), RecordView::default()),
//!         |(flat, view), rec| {
//!             if rec.content.fill(flat, &table, view).is_ok() {
//!                 println!("{} leaves", view.len());
//!             }
//!         },
//!         |e| eprintln!("{e}"),
//!     );
//! }
//! ```

#![warn(missing_docs)]

mod archive;
mod channel;
mod discover;
mod error;
mod error_run;
mod evtx;
mod evtxecmd;
mod flatten;
mod format;
mod integrity;
mod json;
mod json_tree;
mod not_read;
mod read_file;
mod record;
mod rows;
mod shape;
mod source;
mod timestamp;
mod walk;
mod xml;

pub use archive::{
    Member, Password, MAX_DEPTH as MAX_ARCHIVE_DEPTH, MAX_MEMBER, MAX_MEMBERS, MAX_RATIO,
    MAX_TOTAL, RATIO_FLOOR,
};
pub use channel::split_by_channel;
pub use discover::{discover, discover_all, Discovered, InputFile, InputKind, NotRead};
pub use error::{
    panic_message, ChunkFault, ErrorKind, InputError, Message, Position, Reason, MAX_TIME_SHOWN,
};
pub use error_run::{collapse_errors, ErrorRun, RunMessage};
pub use evtx::first_channel;
pub use evtx::{
    push_padded, read_evtx, settings, settings_with, ChunkTally, Content, EvtxCounts, EvtxRead,
    RawRecord, TypedState,
};
pub use flatten::Flattener;
pub use format::{format_of, sniff, sniff_open, Format};
pub use integrity::{
    analyse, check_structure, structure_findings, Check as IntegrityCheck, Finding,
    IntegrityFields, Kind as IntegrityKind, RecordLog, Severity, StructureCheck,
};
pub use json::MAX_LINE;
pub use read_file::{read_file, FileCounts, ReadSettings, RecordAt, RecordWorker};
pub use record::{FieldValues, RecordView};
pub use timestamp::{missing_timestamp, parse_timestamp};
pub use walk::{walk, Tally, WalkSettings, Walked};
pub use xml::{read_xml, MAX_DEPTH};
