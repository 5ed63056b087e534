//! The records of one chunk, handed one at a time: the live records walked from the
//! record headers and handed as typed values where the typed path covers them, the
//! others (and carved records) rendered to JSON by the `evtx` crate.

use super::chunks::recycle;
use super::salvage::mend_string_table;
use super::{at_chunk, Content, RawRecord, TypedState};
use crate::error::{chain, ErrorKind, InputError, Position};
use evtx::{EvtxChunk, EvtxChunkData, EvtxRecord, EvtxRecordHeader, ParserSettings};
use std::path::Path;
use std::sync::Arc;

/// Hands every record of one chunk to `f`; the chunk's bytes are then kept for the
/// thread's next chunk.
pub(super) fn chunk_records<E, F>(
    path: &Path,
    mut data: EvtxChunkData,
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
    let mut mended = false;
    loop {
        let e = match data.parse(Arc::clone(settings)) {
            Ok(mut chunk) => {
                let walk = Walk {
                    at: (path, number),
                    recover,
                    typed: typed.as_deref_mut(),
                    err,
                };
                walk.records(&mut chunk, &mut f);
                break;
            }
            Err(e) => chain(&e),
        };
        if mended {
            err(at_chunk(path, number, ErrorKind::DamagedChunk(e)));
            break;
        }
        if !mend_string_table(path, &mut data, e, err) {
            break;
        }
        mended = true;
    }
    recycle(data.data);
}

/// One parsed chunk's walk: the file and chunk number, whether carved records are
/// wanted, the thread's typed state, and where errors go.
struct Walk<'w, E> {
    at: (&'w Path, u64),
    recover: bool,
    typed: Option<&'w mut TypedState>,
    err: &'w E,
}

impl<E: Fn(InputError)> Walk<'_, E> {
    /// Hands every record of the parsed `chunk` to `f`.
    fn records<F: FnMut(RawRecord<'_>)>(self, chunk: &mut EvtxChunk<'_>, mut f: F) {
        let Walk {
            at: (path, number),
            recover,
            mut typed,
            err,
        } = self;
        if let Some(t) = typed.as_deref_mut() {
            t.begin_chunk();
        }
        let mut spans = Vec::new();
        if let Some(t) = typed.as_deref_mut().filter(|_| !recover) {
            if live_records(chunk, &mut spans) {
                return typed_records((path, number), chunk, &spans, t, err, f);
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
                    hand_json(r, typed.as_deref_mut(), (path, number), err, &mut f);
                }
                Err(e) => err(at_chunk(
                    path,
                    number,
                    ErrorKind::UnreadableRecord(chain(&e)),
                )),
            }
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
            Some(Ok(r)) => hand_json(r, Some(&mut *typed), (path, number), err, &mut f),
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
/// carved record: those are often garbage, not an input error). With `typed`, a live
/// record's template is read too where the typed path can, to tell its elements with no
/// content from its empty values.
fn hand_json<E, F>(
    r: EvtxRecord<'_>,
    typed: Option<&mut TypedState>,
    (path, number): (&Path, u64),
    err: &E,
    f: &mut F,
) where
    E: Fn(InputError),
    F: FnMut(RawRecord<'_>),
{
    let (id, recovered) = (r.event_record_id, r.recovered);
    let plain = is_plain(&r);
    let template = typed.filter(|_| !plain && !recovered);
    let template = template.and_then(|t| t.prepare_template(&r).then_some(t));
    match r.into_json() {
        Ok(j) => f(RawRecord {
            content: match template {
                _ if plain => Content::PlainJson(&j.data),
                Some(t) => Content::TemplateJson(&j.data, t),
                None => Content::Json(&j.data),
            },
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

/// Whether `r` is stored without a template: its BinXML (after a fragment header) does
/// not start with a template instance.
fn is_plain(r: &EvtxRecord<'_>) -> bool {
    let at = r.binxml_offset as usize;
    let end = at.saturating_add(r.binxml_size as usize);
    !matches!(
        r.chunk.data.get(at..end),
        Some([0x0f, _, _, _, 0x0c, ..] | [0x0c, ..]) | None
    )
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evtx::test_log::{event, first_chunk, log, named, At};
    use scanner_evtx_writer::{Element, Value};

    /// Events the typed path covers, with every third one holding a float (left to JSON).
    fn events(n: u16) -> Vec<scanner_evtx_writer::Event> {
        (0..n)
            .map(|i| {
                let v = if i % 3 == 2 {
                    Value::F64(f64::from(i) + 0.5)
                } else {
                    Value::U32(u32::from(i))
                };
                event(i, Element::new("EventData").child(named("N", v)))
            })
            .collect()
    }

    /// Chunk 0 of `log` as the parser hands it, numbered.
    fn chunk_data(log: &[u8]) -> EvtxChunkData {
        let mut parser = evtx::EvtxParser::from_buffer(log.to_vec()).expect("a log");
        let mut d = parser.chunks().next().expect("a chunk").expect("read");
        d.number = Some(0);
        d
    }

    /// The live walk over chunk 0 of `log` once `damage` has been done to its bytes
    /// (given where the crate finds the records): whether it read, and what it found.
    fn walk(log: &[u8], damage: impl FnOnce(&mut [u8], &[At])) -> (bool, Vec<Span>, Vec<At>) {
        let (_, records) = first_chunk(log);
        let mut data = chunk_data(log);
        damage(&mut data.data, &records);
        let chunk = data
            .parse(Arc::new(crate::evtx::settings()))
            .expect("parsed");
        let mut spans = Vec::new();
        let read = live_records(&chunk, &mut spans);
        (read, spans, records)
    }

    #[test]
    fn the_live_walk_finds_every_record_the_crate_finds() {
        let (read, spans, records) = walk(&log(&events(30)), |_, _| {});
        assert!(read);
        let found: Vec<_> = spans.iter().map(|s| (s.offset, s.size, s.id)).collect();
        let want: Vec<_> = records.iter().map(|r| (r.offset, r.size, r.id)).collect();
        assert_eq!(found, want);
    }

    #[test]
    fn a_record_header_that_does_not_read_leaves_the_chunk_to_the_crate() {
        // The third record's header signature (24 bytes before its BinXML).
        let damage = |data: &mut [u8], records: &[At]| {
            let at = records[2].offset - 24;
            data[at..at + 4].fill(0);
        };
        let (read, spans, _) = walk(&log(&events(5)), damage);
        assert!(!read);
        assert_eq!(spans.len(), 2, "the records before it");
    }

    /// What `chunk_records` hands for chunk `data`: (record id, typed?) and the errors.
    fn hand(data: EvtxChunkData, typed: bool) -> (Vec<(u64, bool)>, Vec<InputError>) {
        let settings = Arc::new(crate::evtx::settings());
        let mut state = TypedState::default();
        let errors = std::cell::RefCell::new(Vec::new());
        let mut got = Vec::new();
        chunk_records(
            Path::new("t.evtx"),
            data,
            &settings,
            false,
            typed.then_some(&mut state),
            &|e| errors.borrow_mut().push(e),
            |r| {
                let is_typed = matches!(r.content, Content::Typed(_));
                got.push((r.record_id.expect("an id"), is_typed));
            },
        );
        (got, errors.into_inner())
    }

    #[test]
    fn the_chunk_walk_hands_every_live_record_once_typed_where_covered() {
        let log = log(&events(30));
        let (_, records) = first_chunk(&log);
        let ids: Vec<u64> = records.iter().map(|r| r.id).collect();
        let (typed, errors) = hand(chunk_data(&log), true);
        assert!(errors.is_empty(), "{errors:?}");
        assert_eq!(typed.iter().map(|r| r.0).collect::<Vec<_>>(), ids);
        for (k, (_, is_typed)) in typed.iter().enumerate() {
            assert_eq!(*is_typed, k % 3 != 2, "record {k}: floats go to JSON");
        }
        let (json, _) = hand(chunk_data(&log), false);
        assert_eq!(json.iter().map(|r| r.0).collect::<Vec<_>>(), ids);
        assert!(json.iter().all(|r| !r.1));
    }

    /// The leaves (`path=value`) and the elements with no content of each record of
    /// chunk 0 of `log` as the chunk walk fills them, and whether each was typed.
    fn filled(log: &[u8]) -> Vec<(bool, Vec<String>, Vec<String>)> {
        let settings = Arc::new(crate::evtx::settings());
        let mut state = TypedState::default();
        let table = scanner_rules::FieldTable::new();
        let mut flat = crate::flatten::Flattener::default();
        let mut view = crate::record::RecordView::default();
        let mut got = Vec::new();
        chunk_records(
            Path::new("t.evtx"),
            chunk_data(log),
            &settings,
            false,
            Some(&mut state),
            &|e| panic!("{e}"),
            |r| {
                let typed = matches!(r.content, Content::Typed(_));
                r.content
                    .fill(&mut flat, &table, &mut view)
                    .expect("filled");
                got.push((
                    typed,
                    view.leaves().map(|(p, v)| format!("{p}={v}")).collect(),
                    view.empty_elements().map(str::to_string).collect(),
                ));
            },
        );
        got
    }

    #[test]
    fn a_template_record_left_to_json_keeps_its_elements_with_no_content_apart() {
        // Param2 has no content, Param3 an empty value; Param1 a float in the second
        // record, which the typed path leaves to the crate's JSON.
        let data = |v: Value| {
            Element::new("EventData")
                .child(Element::new("Param1").text(v))
                .child(Element::new("Param2"))
                .child(Element::new("Param3").text(""))
                .child(Element::new("Param4").text("x"))
        };
        let log = log(&[
            event(1, data(Value::String("1.5".into()))),
            event(1, data(Value::F64(1.5))),
        ]);
        let got = filled(&log);
        assert_eq!(got.len(), 2);
        let (typed, json) = (&got[0], &got[1]);
        assert!(typed.0 && !json.0, "the float goes to JSON");
        assert_eq!(typed.2, ["Event.EventData.Param2"]);
        assert_eq!(json.2, typed.2, "Param2 has no content either way");
        assert_eq!(json.1, typed.1, "the same leaves, Param3 empty");
        assert!(json.1.contains(&"Event.EventData.Param3=".to_string()));
        assert!(!json
            .1
            .iter()
            .any(|l| l.starts_with("Event.EventData.Param2")));
    }

    #[test]
    fn a_record_that_does_not_render_is_reported_with_its_chunk_and_the_rest_handed() {
        let log = log(&events(3));
        let (_, records) = first_chunk(&log);
        let mut data = chunk_data(&log);
        data.number = Some(4);
        let bad = records[1];
        data.data[bad.offset..bad.offset + bad.size].fill(0xff);
        let (handed, errors) = hand(data, true);
        let handed: Vec<u64> = handed.iter().map(|r| r.0).collect();
        assert_eq!(handed, [records[0].id, records[2].id]);
        let [e] = &errors[..] else {
            panic!("one error: {errors:?}")
        };
        // The crate's walk does not build it: reported at its chunk, in the crate's words.
        assert_eq!(e.position(), Position::Chunk(4), "{e}");
        assert!(matches!(e.kind(), ErrorKind::UnreadableRecord(_)), "{e}");
        let text = e.to_string();
        assert!(
            text.starts_with("t.evtx: chunk 4: Failed to parse record number 2"),
            "{e}"
        );
    }
}
