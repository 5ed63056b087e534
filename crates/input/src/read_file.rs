//! The one way a file becomes records: [`read_file`] opens it, reads it by the format
//! its first bytes show (EVTX, JSON, XML; [`crate::sniff_open`]), fills each record into
//! a worker's [`RecordView`] and hands the worker to the caller's closure; a file that
//! cannot be opened, a record that cannot be rendered, or a panic while reading is an
//! [`InputError`] given to `report`, and the read goes on with the rest.
//!
//! The scan (records to detections) and the record walk of the other commands
//! (`walk`) both read through it, so they cannot drift apart in what they
//! read, report or count. Workers are the caller's: an EVTX file's chunks are read in
//! parallel, one worker per group of chunks (`new_worker` is called for each); a JSON or
//! XML file is read by one.

use crate::evtx::read_evtx_source;
use crate::evtx::ChunkTally;
use crate::format::stream_of;
use crate::rows::Row;
use crate::source::Source;
use crate::ErrorKind;
use crate::{
    panic_message, EvtxRead, Flattener, Format, InputError, InputFile, Position, RecordView,
};
use scanner_rules::FieldTable;
use std::sync::Mutex;

/// What [`read_file`] needs of a worker: the buffers a record is filled into.
pub trait RecordWorker {
    /// The flattener (JSON) and the view every record is filled into.
    fn buffers(&mut self) -> (&mut Flattener, &mut RecordView);
}

/// Where the record in a worker's view came from.
#[derive(Debug, Clone, Copy)]
pub struct RecordAt {
    /// The file's format.
    pub format: Format,
    /// Its place in the file: the record's id (EVTX), line (JSON) or event (XML).
    pub position: Position,
    /// The record header's id (EVTX only).
    pub record_id: Option<u64>,
    /// Whether it was carved from slack space (`-x`).
    pub recovered: bool,
}

/// How to read.
#[derive(Clone, Copy)]
pub struct ReadSettings<'a> {
    /// The paths the caller reads, interned; the view links only these.
    pub fields: &'a FieldTable,
    /// Recover records from slack space (EVTX only); a recovered record that cannot be
    /// rendered is skipped silently (carved records are often garbage).
    pub recover: bool,
    /// Read an EVTX chunk only when its CRC32s match (`-V`).
    pub validate_checksums: bool,
    /// Also check an EVTX file's structure (its header and each chunk's CRC32s) as its
    /// chunks are read (`--integrity`): [`FileCounts::structure`].
    pub structure: bool,
}

/// What reading one file gave.
#[derive(Debug, Default)]
pub struct FileCounts {
    /// Records read (not counting those recovered from slack space).
    pub records: u64,
    /// Records recovered from slack space.
    pub recovered: u64,
    /// With [`ReadSettings::structure`], an EVTX file's header and chunks as read, for
    /// [`crate::structure_findings`]; `None` for other formats, or when the file did not
    /// open as EVTX.
    pub structure: Option<ChunkTally>,
}

/// Reads the input file `input` (a file, or a member of an archive read from a private
/// copy), handing each record to `on_record` with the worker whose view holds it;
/// errors, named by [`InputFile::name`], go to `report`. Returns what was read (nothing
/// when the file could not be opened, or when reading it panicked).
pub fn read_file<W, I, F, E>(
    input: &InputFile,
    how: ReadSettings<'_>,
    new_worker: I,
    on_record: F,
    report: E,
) -> FileCounts
where
    W: RecordWorker,
    I: Fn() -> W + Sync + Send,
    F: Fn(&mut W, RecordAt) + Sync + Send,
    E: Fn(InputError) + Sync + Send,
{
    let (path, size) = (input.name(), input.size);
    // A member's private copy lives as long as its reading.
    let (_copy, opened) = match &input.member {
        None => (None, std::fs::File::open(&input.path).map(Source::File)),
        Some(m) => match crate::archive::open(&input.path, m) {
            Ok(copy) => match copy.into_source() {
                Ok((source, copy)) => (copy, Ok(source)),
                Err(e) => (None, Err(e)),
            },
            Err(e) => {
                report(e);
                return FileCounts::default();
            }
        },
    };
    let (format, file) = match crate::format::sniff_file(path, opened) {
        Ok(opened) => opened,
        Err(e) => {
            report(e);
            return FileCounts::default();
        }
    };
    let table = how.fields;
    // A panic while reading one file (a bug, in the parser or here) is reported and
    // ends that file only.
    let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match format {
        Format::Evtx => {
            let read = EvtxRead {
                recover: how.recover,
                typed: true,
                validate_checksums: how.validate_checksums,
            };
            let tally = how.structure.then(|| Mutex::new(ChunkTally::default()));
            let n = read_evtx_source(
                path,
                file,
                size,
                read,
                tally.as_ref(),
                &new_worker,
                |w, rec| {
                    let (flat, view) = w.buffers();
                    match rec.content.fill(flat, table, view) {
                        Ok(()) => on_record(
                            w,
                            RecordAt {
                                format,
                                position: Position::Record(rec.record_id.unwrap_or(0)),
                                record_id: rec.record_id,
                                recovered: rec.recovered,
                            },
                        ),
                        Err(_) if rec.recovered => {}
                        Err(e) => report(InputError::unreadable_rendering(
                            path,
                            rec.record_id.unwrap_or(0),
                            e,
                        )),
                    }
                },
                &report,
            );
            // A file that did not open as EVTX left its tally without a header.
            let tally = tally.map(|t| t.into_inner().unwrap_or_else(|e| e.into_inner()));
            FileCounts {
                records: n.records,
                recovered: n.recovered,
                structure: tally.filter(|t| !t.head.is_empty()),
            }
        }
        // Both give serde_json values, one per line or row.
        Format::Json | Format::EvtxECmdCsv => {
            let mut w = new_worker();
            let mut sink = |row: Row<'_>| match row {
                Row::Event(v, at) => {
                    let (flat, view) = w.buffers();
                    match flat.fill_event(v, table, view) {
                        Ok(()) => on_record(&mut w, plain(format, at)),
                        Err(kind) => report(InputError::new(path, at, kind)),
                    }
                }
                Row::Error(e) => report(e),
            };
            let records = match stream_of(file) {
                Err(e) => {
                    report(InputError::new(path, Position::None, ErrorKind::Io(e)));
                    0
                }
                Ok(r) if format == Format::Json => crate::json::read_json_from(path, r, &mut sink),
                Ok(r) => crate::evtxecmd::read_csv(path, r, &mut sink),
            };
            FileCounts {
                records,
                recovered: 0,
                structure: None,
            }
        }
        Format::Xml => {
            let mut w = new_worker();
            let records = crate::xml::read_xml_from(
                path,
                stream_of(file),
                table,
                &mut w,
                |w, view, at| {
                    // The XML reader keeps its own view; the worker's is lent to it
                    // for the call, so that callers find every record in theirs.
                    std::mem::swap(w.buffers().1, view);
                    on_record(w, plain(format, at));
                    std::mem::swap(w.buffers().1, view);
                },
                &report,
            );
            FileCounts {
                records,
                recovered: 0,
                structure: None,
            }
        }
    }));
    run.unwrap_or_else(|p| {
        report(InputError::internal(path, panic_message(&*p)));
        FileCounts::default()
    })
}

/// Where a JSON or XML record came from.
fn plain(format: Format, position: Position) -> RecordAt {
    RecordAt {
        format,
        position,
        record_id: None,
        recovered: false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_rules::{CHANNEL, EVENT_ID};
    use std::sync::Mutex;

    /// A worker that notes what it was handed.
    #[derive(Default)]
    struct Seen {
        flat: Flattener,
        view: RecordView,
        got: Vec<(String, Format)>,
    }

    impl RecordWorker for Seen {
        fn buffers(&mut self) -> (&mut Flattener, &mut RecordView) {
            (&mut self.flat, &mut self.view)
        }
    }

    #[test]
    fn every_format_lands_in_the_workers_view_and_errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("scanner-read-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let xml = dir.join("events.xml");
        std::fs::write(
            &xml,
            "<Events><Event><System><EventID>7</EventID><Channel>System</Channel></System></Event>\
             <Event><System><EventID>8</EventID></System></Event></Events>",
        )
        .unwrap();
        let json = dir.join("events.jsonl");
        std::fs::write(
            &json,
            "{\"Event\":{\"System\":{\"Channel\":\"Security\",\"EventID\":4624}}}\n{oops\n",
        )
        .unwrap();
        let table = FieldTable::new();
        let how = ReadSettings {
            fields: &table,
            recover: false,
            validate_checksums: false,
            structure: false,
        };
        let errors = Mutex::new(Vec::new());
        let report = |e: InputError| errors.lock().unwrap().push(e.to_string());
        let mut seen = Vec::new();
        for path in [&xml, &json, &dir.join("absent.evtx")] {
            let got = Mutex::new(Vec::new());
            let n = read_file(
                &InputFile::new(path.clone(), 0),
                how,
                Seen::default,
                |w, at| {
                    let id = w.view.first(EVENT_ID).unwrap_or("-").to_string();
                    let ch = w.view.first(CHANNEL).unwrap_or("-").to_string();
                    w.got.push((format!("{ch}/{id}"), at.format));
                    got.lock().unwrap().extend(w.got.drain(..));
                },
                report,
            );
            seen.push((n.records, got.into_inner().unwrap()));
        }
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(seen[0], (1, vec![("System/7".to_string(), Format::Xml)]));
        assert_eq!(
            seen[1],
            (1, vec![("Security/4624".to_string(), Format::Json)])
        );
        assert_eq!(seen[2], (0, vec![]));
        let errors = errors.into_inner().unwrap();
        assert_eq!(errors.len(), 3, "{errors:?}");
        assert!(
            errors.iter().any(|e| e.contains("events.xml")),
            "{errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.contains("events.jsonl")),
            "{errors:?}"
        );
        assert!(
            errors.iter().any(|e| e.contains("absent.evtx")),
            "{errors:?}"
        );
    }
}
