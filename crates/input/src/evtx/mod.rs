//! EVTX files, read through the `evtx` crate: chunks in parallel, each record handed
//! one at a time to a callback (as typed values where the typed path covers it, else as
//! the crate's JSON rendering), damaged chunks salvaged or reported; nothing collects a
//! file's records.
//!
//! Here: the reader ([`evtx`]) and what it hands over. `chunk` walks one chunk's records,
//! `salvage` gets at chunks the crate refuses, `typed` (with `template` and
//! `value_text`) reads records straight from their templates and values.

mod checksum;
mod chunk;
mod chunks;
mod first_channel;
mod salvage;
mod template;
#[cfg(test)]
pub(crate) mod test_log;
mod typed;
mod value_text;

pub(crate) use first_channel::first_channel_in;
pub use first_channel::{first_channel, MIN_BYTES};
pub use typed::TypedState;
pub use value_text::push_padded;

use crate::error::{chain, panic_message, ErrorKind, InputError, Position};
use crate::flatten::{Flattener, Nulls};
use crate::record::RecordView;
pub use checksum::ChunkTally;
use chunk::chunk_records;
pub(crate) use chunks::{all_zero, ChunkFile};
use evtx::err::ChunkError;
use evtx::{EvtxChunkData, ParserSettings};
use rayon::prelude::*;
use salvage::salvage;
use scanner_rules::FieldTable;
use std::cell::RefCell;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

/// A record handed to the scan: what fills its view and, for EVTX, its header record id.
pub struct RawRecord<'a> {
    /// The event: rendered JSON, or (EVTX, [`EvtxRead::typed`]) its typed values.
    pub content: Content<'a>,
    /// The EVTX record header's id (None for JSON input).
    pub record_id: Option<u64>,
    /// Carved from slack space or a damaged chunk (`--recover-records`), not a live record.
    pub recovered: bool,
}

/// What a record's view is filled from.
pub enum Content<'a> {
    /// JSON of the event (`{"Event":{…}}`).
    Json(&'a str),
    /// JSON of an EVTX record stored without a template (plain BinXML): its `null`s are
    /// elements with no content.
    PlainJson(&'a str),
    /// The record's template and typed values, prepared by [`TypedState::prepare`].
    Typed(&'a mut TypedState),
    /// JSON of an EVTX record whose template the typed path reads but whose values it
    /// leaves to the crate: the template, read by [`TypedState::prepare_template`],
    /// tells which of its `null`s are elements with no content.
    TemplateJson(&'a str, &'a mut TypedState),
}

impl Content<'_> {
    /// Clears `view` and fills it with the record's leaves; the same leaves either way.
    /// Only JSON can fail (it does not parse).
    pub fn fill(
        self,
        flat: &mut Flattener,
        table: &FieldTable,
        view: &mut RecordView,
    ) -> Result<(), serde_json::Error> {
        match self {
            Content::Json(json) => flat.fill(json, table, view),
            Content::PlainJson(json) => flat.fill_rendered(json, Nulls::NoContent, table, view),
            Content::TemplateJson(json, typed) => {
                // The template's walk, values aside, gives the paths of its elements
                // with no content; the view is then filled from the JSON.
                typed.fill(table, view);
                let empty: Vec<Box<str>> = view.empty_elements().map(Into::into).collect();
                flat.fill_rendered(json, Nulls::NoContentAt(&empty), table, view)
            }
            Content::Typed(typed) => {
                typed.fill(table, view);
                Ok(())
            }
        }
    }

    /// The JSON text, when the record was rendered.
    pub fn json(&self) -> Option<&str> {
        match self {
            Content::Json(json) | Content::PlainJson(json) | Content::TemplateJson(json, _) => {
                Some(json)
            }
            Content::Typed(_) => None,
        }
    }
}

/// How to read an EVTX file.
#[derive(Debug, Clone, Copy, Default)]
pub struct EvtxRead {
    /// Also hand carved records (marked `recovered`), always as JSON.
    pub recover: bool,
    /// Hand live records as typed values where [`TypedState`] covers them, rendering
    /// only the others to JSON.
    pub typed: bool,
    /// Read a chunk only when its header and records CRC32s match (Hayabusa's `-V`);
    /// a chunk that fails, or whose header does not parse, is reported and not read.
    pub validate_checksums: bool,
}

/// Records an EVTX file gave.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct EvtxCounts {
    /// Live records handed to the callback.
    pub records: u64,
    /// Carved records handed to the callback (only with recovery on).
    pub recovered: u64,
}

/// Files with more chunks than this are scanned chunk-parallel.
const PARALLEL_CHUNKS: u64 = 8;
pub(crate) const CHUNK_SIZE: u64 = 64 * 1024;
const HEADER_SIZE: u64 = 4096;

/// The parser settings the scan uses: single-threaded parsers (rayon parallelism is
/// ours; the crate's own threads deadlock inside a rayon pool), attributes separated.
pub fn settings() -> ParserSettings {
    ParserSettings::default()
        .num_threads(1)
        .separate_json_attributes(true)
}

/// [`settings`], with record recovery (carving) on or off.
pub fn settings_with(recover: bool) -> ParserSettings {
    settings().recover_records(recover)
}

/// Scans one EVTX file. `init` makes per-worker state, `f` handles a record with it.
/// Errors (file, chunk or record) go to `err`; the rest of the file is still read.
/// `read.recover` also hands carved records (marked `recovered`) to `f`; `read.typed`
/// hands records the typed path covers without rendering them.
///
/// Damage the `evtx` crate refuses but that leaves records readable is worked
/// around: a chunk whose string table is damaged is read again without the table
/// (names are then read where the records point), and is reported. A panic inside the
/// parser ends only the chunk (or file) it happened in, and is reported.
pub fn read_evtx<S>(
    path: &Path,
    size: u64,
    read: EvtxRead,
    init: impl Fn() -> S + Sync + Send,
    f: impl Fn(&mut S, RawRecord<'_>) + Sync + Send,
    err: impl Fn(InputError) + Sync + Send,
) -> EvtxCounts {
    match std::fs::File::open(path) {
        Ok(file) => {
            let file = crate::source::Source::File(file);
            read_evtx_source(path, file, size, read, None, init, f, err)
        }
        Err(e) => {
            err(InputError::new(
                path,
                Position::None,
                ErrorKind::CannotRead(e),
            ));
            EvtxCounts::default()
        }
    }
}

/// [`read_evtx`] on `file`, a file (at any position) or bytes in memory (an archive's
/// member); with `tally`, the file's header and each whole chunk also go there as they
/// are read (the structure check of `--integrity`).
#[allow(clippy::too_many_arguments)] // read_evtx's six, the source, and the tally
pub(crate) fn read_evtx_source<S, I, F, E>(
    path: &Path,
    file: crate::source::Source,
    size: u64,
    read: EvtxRead,
    tally: Option<&Mutex<ChunkTally>>,
    init: I,
    f: F,
    err: E,
) -> EvtxCounts
where
    I: Fn() -> S + Sync + Send,
    F: Fn(&mut S, RawRecord<'_>) + Sync + Send,
    E: Fn(InputError) + Sync + Send,
{
    let settings = Arc::new(settings_with(read.recover));
    let file = match ChunkFile::of(file) {
        Ok(f) => f,
        Err(kind) => {
            err(InputError::new(path, Position::None, kind));
            return EvtxCounts::default();
        }
    };
    if let Some(t) = tally {
        let mut head = vec![0u8; 128];
        match file.read_header(&mut head) {
            Ok(_) => t.lock().unwrap_or_else(|e| e.into_inner()).head = head,
            Err(e) => err(InputError::new(path, Position::None, ErrorKind::Io(e))),
        }
    }
    let records = AtomicU64::new(0);
    let recovered = AtomicU64::new(0);
    let chunk = |state: &mut S, c: Result<EvtxChunkData, evtx::err::EvtxError>| {
        let data = match c {
            Ok(d) => d,
            Err(evtx::err::EvtxError::FailedToParseChunk { chunk_id, source })
                if matches!(*source, ChunkError::FailedToParseChunkHeader(_))
                    && read.validate_checksums =>
            {
                // Its checksums cannot be checked: not salvaged.
                let d = format!("{}; not read (-V)", chain(&source));
                err(at_chunk(path, chunk_id, ErrorKind::DamagedChunk(d)));
                return;
            }
            Err(evtx::err::EvtxError::FailedToParseChunk { chunk_id, source })
                if matches!(*source, ChunkError::FailedToParseChunkHeader(_)) =>
            {
                // A damaged chunk header: its records may be intact.
                let Some(d) = salvage(path, &file, chunk_id, &err) else {
                    return;
                };
                let kind = ErrorKind::DamagedChunkHeader(chain(&source));
                err(at_chunk(path, chunk_id, kind));
                d
            }
            Err(e) => {
                err(InputError::new(
                    path,
                    Position::None,
                    ErrorKind::Parser(chain(&e)),
                ));
                return;
            }
        };
        let number = data.number.unwrap_or(0);
        if read.validate_checksums {
            if let Some(kind) = checksum::checksum_error(&data.data) {
                err(at_chunk(path, number, kind));
                return;
            }
        }
        let (mut live, mut carved) = (0, 0);
        let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
            with_typed(read.typed, |typed| {
                chunk_records(path, data, &settings, read.recover, typed, &err, |rec| {
                    if rec.recovered {
                        carved += 1;
                    } else {
                        live += 1;
                    }
                    f(state, rec)
                })
            })
        }));
        if let Err(p) = run {
            forget_typed();
            let kind = ErrorKind::ParserPanicked(panic_message(&*p));
            err(at_chunk(path, number, kind));
        }
        records.fetch_add(live, Ordering::Relaxed);
        recovered.fetch_add(carved, Ordering::Relaxed);
    };
    let chunks = || match tally {
        Some(t) => file.chunks_tallied(t),
        None => file.chunks(),
    };
    // A last, partial chunk (a truncated file): the parser stops before it.
    let tail = (size > HEADER_SIZE && (size - HEADER_SIZE) % CHUNK_SIZE >= 512)
        .then(|| (size - HEADER_SIZE) / CHUNK_SIZE);
    let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut state = if size / CHUNK_SIZE > PARALLEL_CHUNKS {
            // By reference: the tail below uses the closure again.
            let each = &chunk;
            chunks().par_bridge().for_each_init(&init, each);
            None
        } else {
            let mut state = init();
            for c in chunks() {
                chunk(&mut state, c);
            }
            Some(state)
        };
        if let Some(n) = tail {
            if let Some(d) = salvage(path, &file, n, &err) {
                let kind = ErrorKind::TruncatedChunk {
                    read: (size - HEADER_SIZE) % CHUNK_SIZE,
                    size: CHUNK_SIZE,
                };
                err(at_chunk(path, n, kind));
                let state = state.get_or_insert_with(&init);
                chunk(state, Ok(d));
            }
        }
    }));
    if let Err(p) = run {
        let kind = ErrorKind::ParserPanicked(panic_message(&*p));
        err(InputError::new(path, Position::None, kind));
    }
    EvtxCounts {
        records: records.into_inner(),
        recovered: recovered.into_inner(),
    }
}

/// An error at chunk `n` of `path`.
fn at_chunk(path: &Path, n: u64, kind: ErrorKind) -> InputError {
    InputError::new(path, Position::Chunk(n), kind)
}

thread_local! {
    /// Each thread's typed-path state: its template cache serves every chunk and file
    /// the thread reads.
    static TYPED: RefCell<TypedState> = RefCell::default();
}

/// Runs `f` with this thread's typed-path state when `on` (a fresh one should it be in
/// use already).
fn with_typed<R>(on: bool, f: impl FnOnce(Option<&mut TypedState>) -> R) -> R {
    if !on {
        return f(None);
    }
    TYPED.with(|cell| match cell.try_borrow_mut() {
        Ok(mut t) => f(Some(&mut t)),
        Err(_) => f(Some(&mut TypedState::default())),
    })
}

/// Drops this thread's typed-path state (after a panic left it half updated).
fn forget_typed() {
    TYPED.with(|cell| {
        if let Ok(mut t) = cell.try_borrow_mut() {
            *t = TypedState::default();
        }
    });
}
