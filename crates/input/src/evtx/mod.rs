//! EVTX files, read through the `evtx` crate: chunks in parallel, each record handed
//! one at a time to a callback (as typed values where the typed path covers it, else as
//! the crate's JSON rendering), damaged chunks salvaged or reported; nothing collects a
//! file's records.

mod template;
mod typed;
mod value_text;

pub use typed::TypedState;
pub use value_text::push_padded;

use crate::flatten::Flattener;
use crate::record::RecordView;
use evtx::err::ChunkError;
use evtx::{EvtxChunk, EvtxChunkData, EvtxParser, EvtxRecord, EvtxRecordHeader, ParserSettings};
use rayon::prelude::*;
use scanner_rules::FieldTable;
use std::cell::RefCell;
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

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
    /// The record's template and typed values, prepared by [`TypedState::prepare`].
    Typed(&'a mut TypedState),
}

impl Content<'_> {
    /// Clears `view` and fills it with the record's leaves; the same leaves either way.
    /// Only JSON can fail (it does not parse).
    pub fn fill(
        self,
        flat: &mut Flattener,
        table: &FieldTable,
        view: &mut RecordView,
    ) -> Result<(), String> {
        match self {
            Content::Json(json) => flat.fill(json, table, view),
            Content::Typed(typed) => {
                typed.fill(table, view);
                Ok(())
            }
        }
    }

    /// The JSON text, when the record was rendered.
    pub fn json(&self) -> Option<&str> {
        match self {
            Content::Json(json) => Some(json),
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
const CHUNK_SIZE: u64 = 64 * 1024;
const HEADER_SIZE: u64 = 4096;
/// The string table of a chunk header: 64 offsets at bytes 128..384.
const STRING_TABLE: std::ops::Range<usize> = 128..384;

fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        let t = x.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = x.source();
    }
    s
}

/// The message of a caught panic.
pub fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>()
        .cloned()
        .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_else(|| "panic".into())
}

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
pub fn evtx<S, I, F, E>(path: &Path, size: u64, read: EvtxRead, init: I, f: F, err: E) -> EvtxCounts
where
    I: Fn() -> S + Sync + Send,
    F: Fn(&mut S, RawRecord<'_>) + Sync + Send,
    E: Fn(String) + Sync + Send,
{
    let settings = Arc::new(settings_with(read.recover));
    let mut parser = match EvtxParser::from_path(path) {
        Ok(p) => p.with_configuration((*settings).clone()),
        Err(e) => {
            err(format!("{}: {}", path.display(), why_unreadable(path, &e)));
            return EvtxCounts::default();
        }
    };
    let records = AtomicU64::new(0);
    let recovered = AtomicU64::new(0);
    let chunk = |state: &mut S, c: Result<EvtxChunkData, evtx::err::EvtxError>| {
        let data = match c {
            Ok(d) => d,
            Err(evtx::err::EvtxError::FailedToParseChunk { chunk_id, source })
                if matches!(*source, ChunkError::FailedToParseChunkHeader(_)) =>
            {
                // A damaged chunk header: its records may be intact.
                let Some(d) = salvage(path, chunk_id, &err) else {
                    return;
                };
                err(format!(
                    "{}: chunk {chunk_id}: damaged chunk header ({}); records read where intact",
                    path.display(),
                    chain(&source)
                ));
                d
            }
            Err(e) => {
                err(format!("{}: {}", path.display(), chain(&e)));
                return;
            }
        };
        let number = data.number.unwrap_or(0);
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
            err(format!(
                "{}: chunk {number}: the EVTX parser failed (internal error: {}); \
                 the chunk's remaining records are skipped",
                path.display(),
                panic_message(&*p)
            ));
        }
        records.fetch_add(live, Ordering::Relaxed);
        recovered.fetch_add(carved, Ordering::Relaxed);
    };
    // A last, partial chunk (a truncated file): the parser stops before it.
    let tail = (size > HEADER_SIZE && (size - HEADER_SIZE) % CHUNK_SIZE >= 512)
        .then(|| (size - HEADER_SIZE) / CHUNK_SIZE);
    let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let mut state = if size / CHUNK_SIZE > PARALLEL_CHUNKS {
            // By reference: the tail below uses the closure again.
            let each = &chunk;
            parser.chunks().par_bridge().for_each_init(&init, each);
            None
        } else {
            let mut state = init();
            for c in parser.chunks() {
                chunk(&mut state, c);
            }
            Some(state)
        };
        if let Some(n) = tail {
            if let Some(d) = salvage(path, n, &err) {
                err(format!(
                    "{}: chunk {n}: truncated at {} of its {CHUNK_SIZE} bytes; its complete records read",
                    path.display(),
                    (size - HEADER_SIZE) % CHUNK_SIZE
                ));
                let state = state.get_or_insert_with(&init);
                chunk(state, Ok(d));
            }
        }
    }));
    if let Err(p) = run {
        err(format!(
            "{}: the EVTX parser failed (internal error: {}); the file's remaining chunks are skipped",
            path.display(),
            panic_message(&*p)
        ));
    }
    EvtxCounts {
        records: records.into_inner(),
        recovered: recovered.into_inner(),
    }
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

/// Why the parser could not open `path`, in words: empty, not EVTX, too short, or
/// the parser's own reason.
fn why_unreadable(path: &Path, e: &evtx::err::EvtxError) -> String {
    use std::io::Read;
    let mut head = Vec::with_capacity(8);
    let opened = std::fs::File::open(path).and_then(|f| f.take(8).read_to_end(&mut head));
    match opened {
        Err(io) => format!("cannot read: {io}"),
        Ok(0) => "empty file, not EVTX".into(),
        Ok(_) if head != b"ElfFile\0" => {
            "not an EVTX file (it does not start with the ElfFile signature)".into()
        }
        Ok(_) => format!("not a readable EVTX file: {}", chain(e)),
    }
}

/// Chunk `n` of `path` read directly, padded to a whole chunk, with its magic set:
/// for a chunk whose header the parser refuses, or a truncated last chunk. `None` when
/// nothing is there.
fn salvage<E: Fn(String)>(path: &Path, n: u64, err: &E) -> Option<EvtxChunkData> {
    use std::io::{Read, Seek, SeekFrom};
    let mut bytes = Vec::with_capacity(CHUNK_SIZE as usize);
    let read = std::fs::File::open(path).and_then(|mut f| {
        f.seek(SeekFrom::Start(HEADER_SIZE + n * CHUNK_SIZE))?;
        f.take(CHUNK_SIZE).read_to_end(&mut bytes)
    });
    if let Err(e) = read {
        err(format!("{}: chunk {n}: {e}", path.display()));
        return None;
    }
    if bytes.len() < 512 || bytes.iter().all(|&b| b == 0) {
        return None;
    }
    bytes.resize(CHUNK_SIZE as usize, 0);
    bytes[..8].copy_from_slice(b"ElfChnk\0");
    let mut d = EvtxChunkData::new(bytes, false).ok()?;
    d.number = Some(n);
    Some(d)
}

/// Hands every record of one chunk to `f`.
fn chunk_records<E, F>(
    path: &Path,
    mut data: EvtxChunkData,
    settings: &Arc<ParserSettings>,
    recover: bool,
    mut typed: Option<&mut TypedState>,
    err: &E,
    mut f: F,
) where
    E: Fn(String),
    F: FnMut(RawRecord<'_>),
{
    let number = data.number.unwrap_or(0);
    let parsed = data.parse(Arc::clone(settings)).err().map(|e| chain(&e));
    let mut data = match parsed {
        None => data,
        Some(e) if e.contains("string cache") => {
            // A damaged string table: it only caches names that records also point to,
            // so read the chunk again without it.
            err(format!(
                "{}: chunk {number}: damaged string table ({e}); read without it",
                path.display()
            ));
            let mut bytes = std::mem::take(&mut data.data);
            bytes[STRING_TABLE].fill(0);
            match EvtxChunkData::new(bytes, false) {
                Ok(mut d) => {
                    d.number = data.number;
                    d
                }
                Err(e) => {
                    err(format!("{}: chunk {number}: {}", path.display(), chain(&e)));
                    return;
                }
            }
        }
        Some(e) => {
            err(format!("{}: chunk {number}: {e}", path.display()));
            return;
        }
    };
    let mut chunk = match data.parse(Arc::clone(settings)) {
        Ok(c) => c,
        Err(e) => {
            err(format!("{}: chunk {number}: {}", path.display(), chain(&e)));
            return;
        }
    };
    if let Some(t) = typed.as_deref_mut() {
        t.begin_chunk();
    }
    let mut spans = Vec::new();
    if let Some(t) = typed.as_deref_mut().filter(|_| !recover) {
        if live_records(&chunk, &mut spans) {
            return typed_records((path, number), &mut chunk, &spans, t, err, f);
        }
    }
    for rec in chunk.iter() {
        match rec {
            Ok(r) => {
                let id = r.event_record_id;
                let recovered = r.recovered;
                if let Some(t) = typed.as_deref_mut() {
                    if t.prepare(&r) {
                        f(RawRecord {
                            content: Content::Typed(t),
                            record_id: Some(id),
                            recovered,
                        });
                        continue;
                    }
                }
                hand_json(r, (path, number), err, &mut f);
            }
            Err(e) => err(format!("{}: chunk {number}: {}", path.display(), chain(&e))),
        }
    }
}

/// Where one live record's BinXML is in its chunk, and the id its header gives.
#[derive(Debug, Clone, Copy)]
struct Span {
    id: u64,
    offset: usize,
    size: usize,
}

/// The live records of `chunk`, walked as the crate walks them (from the chunk header
/// record by record, up to the free space or the chunk's last record id), into `out`;
/// `false` when a record header does not read (the crate's walk then reports it and
/// looks for the next record, so the chunk is left to it).
fn live_records(chunk: &EvtxChunk<'_>, out: &mut Vec<Span>) -> bool {
    const CHUNK_HEADER: usize = 512;
    const RECORD_HEADER: usize = 24;
    let data = chunk.data;
    let live_end = (chunk.header.free_space_offset as usize).min(data.len());
    let mut at = CHUNK_HEADER;
    while at < live_end {
        let Ok(h) = EvtxRecordHeader::from_bytes_at(data, at) else {
            return false;
        };
        let Ok(size) = h.record_data_size() else {
            return false;
        };
        let (offset, size) = (at + RECORD_HEADER, size as usize);
        if offset + size > data.len() {
            return false;
        }
        out.push(Span {
            id: h.event_record_id,
            offset,
            size,
        });
        if h.event_record_id == chunk.header.last_event_record_id {
            break;
        }
        at += h.data_size as usize;
    }
    true
}

/// Hands the live records `spans` of `chunk` to `f`: as typed values where the typed
/// path covers them, read straight from the chunk; the others rendered to JSON by the
/// crate, whose walk is then advanced to them (it yields one item per live record, and
/// builds each record it passes, as a plain walk over the chunk would).
fn typed_records<E, F>(
    (path, number): (&Path, u64),
    chunk: &mut EvtxChunk<'_>,
    spans: &[Span],
    typed: &mut TypedState,
    err: &E,
    mut f: F,
) where
    E: Fn(String),
    F: FnMut(RawRecord<'_>),
{
    let data = chunk.data;
    let Some(first) = spans
        .iter()
        .position(|s| !hand_typed(typed, data, s, &mut f))
    else {
        return;
    };
    let mut records = chunk.iter();
    let mut walked = 0;
    for (k, s) in spans.iter().enumerate().skip(first) {
        if k > first && hand_typed(typed, data, s, &mut f) {
            continue;
        }
        let mut item = None;
        while walked <= k {
            item = records.next();
            walked += 1;
        }
        match item {
            Some(Ok(r)) => hand_json(r, (path, number), err, &mut f),
            Some(Err(e)) => err(format!("{}: chunk {number}: {}", path.display(), chain(&e))),
            // Both walks read the same headers, so this is not expected; if it happens
            // the record is reported, not dropped silently.
            None => err(format!(
                "{}: chunk {number}: record {}: the parser's walk ended before it",
                path.display(),
                s.id
            )),
        }
    }
}

/// Hands `r` to `f` rendered as JSON, or reports why it does not render (but for a
/// carved record: those are often garbage, not an input error).
fn hand_json<E, F>(r: EvtxRecord<'_>, (path, number): (&Path, u64), err: &E, f: &mut F)
where
    E: Fn(String),
    F: FnMut(RawRecord<'_>),
{
    let (id, recovered) = (r.event_record_id, r.recovered);
    match r.into_json() {
        Ok(j) => f(RawRecord {
            content: Content::Json(&j.data),
            record_id: Some(id),
            recovered,
        }),
        Err(_) if recovered => {}
        Err(e) => err(format!(
            "{}: chunk {number}: record {id}: {}",
            path.display(),
            chain(&e)
        )),
    }
}

/// Hands the record at `s` to `f` as typed values, if the typed path covers it.
fn hand_typed<F: FnMut(RawRecord<'_>)>(
    typed: &mut TypedState,
    chunk: &[u8],
    s: &Span,
    f: &mut F,
) -> bool {
    if !typed.prepare_at(chunk, s.offset, s.size) {
        return false;
    }
    f(RawRecord {
        content: Content::Typed(typed),
        record_id: Some(s.id),
        recovered: false,
    });
    true
}
