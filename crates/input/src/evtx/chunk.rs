//! The records of one chunk, handed one at a time: the live records walked from the
//! record headers and handed as typed values where the typed path covers them, the
//! others (and carved records) rendered to JSON by the `evtx` crate.

use super::salvage::{chain, parseable};
use super::{at_chunk, Content, RawRecord, TypedState};
use crate::error::{ErrorKind, InputError, Position};
use evtx::{EvtxChunk, EvtxChunkData, EvtxRecord, EvtxRecordHeader, ParserSettings};
use std::path::Path;
use std::sync::Arc;

/// Hands every record of one chunk to `f`.
pub(super) fn chunk_records<E, F>(
    path: &Path,
    data: EvtxChunkData,
    settings: &Arc<ParserSettings>,
    recover: bool,
    mut typed: Option<&mut TypedState>,
    err: &E,
    mut f: F,
) where
    E: Fn(InputError),
    F: FnMut(RawRecord<'_>),
{
    let number = data.number.unwrap_or(0);
    let Some(mut data) = parseable(path, data, settings, err) else {
        return;
    };
    let mut chunk = match data.parse(Arc::clone(settings)) {
        Ok(c) => c,
        Err(e) => {
            err(at_chunk(path, number, ErrorKind::DamagedChunk(chain(&e))));
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
            Err(e) => err(at_chunk(
                path,
                number,
                ErrorKind::UnreadableRecord(chain(&e)),
            )),
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
    E: Fn(InputError),
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
            Some(Err(e)) => err(at_chunk(
                path,
                number,
                ErrorKind::UnreadableRecord(chain(&e)),
            )),
            // Both walks read the same headers, so this is not expected; if it happens
            // the record is reported, not dropped silently.
            None => err(at_record((path, number), s.id, ErrorKind::WalkEnded)),
        }
    }
}

/// Hands `r` to `f` rendered as JSON, or reports why it does not render (but for a
/// carved record: those are often garbage, not an input error).
fn hand_json<E, F>(r: EvtxRecord<'_>, (path, number): (&Path, u64), err: &E, f: &mut F)
where
    E: Fn(InputError),
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
        Err(e) => err(at_record(
            (path, number),
            id,
            ErrorKind::UnreadableRecord(chain(&e)),
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

/// An error at record `record` of chunk `chunk` of `path`.
fn at_record((path, chunk): (&Path, u64), record: u64, kind: ErrorKind) -> InputError {
    InputError::new(path, Position::ChunkRecord { chunk, record }, kind)
}
