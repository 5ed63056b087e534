//! The EVTX file writer: the file header, records handed to one chunk at a time, and
//! the one-call forms [`write_events`] and [`write_events_with`].
//!
//! File header (libyal's EVTX format notes): 4096 bytes; `ElfFile\0`, first/last chunk
//! number, next record id, header size 128, version 3.1, block size 4096, chunk count,
//! flags at 120 and the CRC32 of bytes 0..120 at 124. Chunks follow, 64 KiB each
//! (see `chunk.rs`).

use crate::chunk::Chunk;
use crate::error::Error;
use crate::event::{Element, Event, Node};
use crate::template::{shape_key, Instance, Nested, Shapes, Sub};
use crate::value::Value;
use std::borrow::Borrow;
use std::io::{Seek, SeekFrom, Write};

/// Size of the file header block.
const FILE_HEADER_SIZE: usize = 4096;

/// How the writer lays records out.
#[derive(Debug, Clone)]
pub struct WriterOptions {
    /// Encode `<Event>` records whose root holds a `<System>` element as a template
    /// instance with a substitution array (as Windows does); other events, and all of
    /// them when `false`, as plain elements.
    pub templates: bool,
    /// Set the dirty flag in the file header (a log Windows had open).
    pub dirty: bool,
    /// The record id (record header) of the first record; the next ones count up.
    pub first_record_id: u64,
    /// Overwrite (or add) `System/EventRecordID` with the record header's id, so that
    /// the two agree as in a log Windows wrote. Off: events keep the id they have.
    pub assign_event_record_ids: bool,
    /// The record header's FILETIME for events without `System/TimeCreated/@SystemTime`.
    pub default_time: u64,
    /// Write a template record's `EventData` or `UserData` (the root's first child of
    /// those names) as an instance of a template of its own, held by a BinXML value of
    /// the root's instance, as in logs Windows exports; an event with neither holds a
    /// null value there (the root's template is the same). Off: one template per record.
    pub nested_event_data: bool,
}

impl Default for WriterOptions {
    fn default() -> Self {
        WriterOptions {
            templates: true,
            dirty: false,
            first_record_id: 1,
            assign_event_record_ids: false,
            // 2024-01-01T00:00:00Z
            default_time: 133_485_408_000_000_000,
            nested_event_data: false,
        }
    }
}

/// What a finished file holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Records written.
    pub records: u64,
    /// Chunks written.
    pub chunks: u64,
    /// Bytes written, header included.
    pub bytes: u64,
    /// Template definitions written (each chunk repeats the ones it uses).
    pub template_definitions: u64,
    /// Records written as template instances.
    pub template_records: u64,
    /// The first record id, if any record was written.
    pub first_record_id: Option<u64>,
    /// The last record id, if any record was written.
    pub last_record_id: Option<u64>,
}

/// Writes events to an EVTX file, one chunk at a time: memory stays at one chunk
/// whatever the number of records.
///
/// ```
/// use scanner_evtx_writer::{Event, EvtxWriter, WriterOptions};
/// let event = Event::from_xml(r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
///   <System><Provider Name="Microsoft-Windows-Security-Auditing"/><EventID>1102</EventID>
///   <TimeCreated SystemTime="2024-03-12T09:14:02.2555110Z"/><Channel>Security</Channel></System>
///   <UserData><LogFileCleared><SubjectUserName>jsmith</SubjectUserName></LogFileCleared></UserData>
/// </Event>"#).unwrap();
/// let mut out = std::io::Cursor::new(Vec::new());
/// let mut writer = EvtxWriter::new(&mut out, WriterOptions::default()).unwrap();
/// writer.write(&event).unwrap();
/// let stats = writer.finish().unwrap();
/// assert_eq!((stats.records, stats.chunks, stats.bytes), (1, 1, 4096 + 65536));
/// ```
pub struct EvtxWriter<W: Write + Seek> {
    out: W,
    start: u64,
    options: WriterOptions,
    chunk: Chunk,
    next_id: u64,
    stats: WriteStats,
    /// Template shapes seen so far, each with its id and GUID.
    shapes: Shapes,
    /// The shape of the record being written (a reused buffer).
    key: Vec<u8>,
    finished: bool,
}

impl<W: Write + Seek> EvtxWriter<W> {
    /// Starts a file at the stream's current position (normally 0).
    pub fn new(mut out: W, options: WriterOptions) -> Result<Self, Error> {
        if crate::value::filetime_to_timestamp(options.default_time).is_none() {
            return Err(Error::InvalidValue("default_time is out of range".into()));
        }
        let start = out.stream_position()?;
        // Space for the header; the real one is written by `finish`.
        out.write_all(&[0u8; FILE_HEADER_SIZE])?;
        let next_id = options.first_record_id;
        Ok(EvtxWriter {
            out,
            start,
            options,
            chunk: Chunk::new(),
            next_id,
            stats: WriteStats::default(),
            shapes: Shapes::default(),
            key: Vec::new(),
            finished: false,
        })
    }

    /// Appends one event; returns its record id.
    pub fn write(&mut self, event: &Event) -> Result<u64, Error> {
        if self.finished {
            return Err(Error::Finished);
        }
        // A record whose time no reader can show would be timed by the writer's
        // default, silently: refused instead.
        if let Some(v) = event.invalid_time() {
            return Err(Error::InvalidTime(v));
        }
        let id = self.next_id;
        if self.options.assign_event_record_ids && event.event_record_id() != Some(id) {
            let mut owned = event.clone();
            owned.set_event_record_id(id);
            self.write_record(&owned, id)?;
        } else {
            self.write_record(event, id)?;
        }
        self.next_id = id.checked_add(1).ok_or(Error::RecordIdOverflow)?;
        self.stats.records += 1;
        self.stats.first_record_id.get_or_insert(id);
        self.stats.last_record_id = Some(id);
        Ok(id)
    }

    /// Leaves the next `n` record ids unused, as in a log whose records were deleted
    /// one by one (the records after them keep their ids).
    pub fn skip_record_ids(&mut self, n: u64) -> Result<(), Error> {
        if self.finished {
            return Err(Error::Finished);
        }
        self.next_id = self.next_id.checked_add(n).ok_or(Error::RecordIdOverflow)?;
        Ok(())
    }

    fn write_record(&mut self, event: &Event, id: u64) -> Result<(), Error> {
        validate(&event.root, 0)?;
        let time = match event.time_created() {
            Some(ft) if crate::value::filetime_to_timestamp(ft).is_some() => ft,
            _ => self.options.default_time,
        };
        let template = self.options.templates
            && event.root.name == "Event"
            && event.root.find("System").is_some();
        for attempt in 0..2 {
            let snapshot = self.chunk.snapshot();
            let result = if template {
                self.encode_template_record(event, id, time)
            } else {
                self.chunk.encode_plain_record(&event.root, id, time)
            };
            match result {
                Ok(()) if self.chunk.fits() => {
                    self.chunk.commit_record(id, snapshot);
                    return Ok(());
                }
                Ok(()) | Err(Error::RecordTooLarge) => {
                    self.chunk.rollback(snapshot);
                    if attempt == 0 && !self.chunk.is_empty() {
                        self.flush_chunk()?;
                    } else {
                        return Err(Error::RecordTooLarge);
                    }
                }
                Err(e) => {
                    self.chunk.rollback(snapshot);
                    return Err(e);
                }
            }
        }
        Err(Error::RecordTooLarge)
    }

    fn encode_template_record(&mut self, event: &Event, id: u64, time: u64) -> Result<(), Error> {
        let nested = if self.options.nested_event_data {
            let data = event
                .root
                .elements()
                .find(|c| matches!(c.name.as_str(), "EventData" | "UserData"));
            data.map_or(Nested::Last, Nested::Replacing)
        } else {
            Nested::No
        };
        let inst = self.instance(&event.root, nested)?;
        self.chunk
            .encode_template_record(&inst, id, time, &mut self.stats.template_definitions)?;
        self.stats.template_records += 1;
        Ok(())
    }

    /// `root` as a template instance, holding the instance of `nested`'s element.
    fn instance<'a>(
        &mut self,
        root: &'a Element,
        nested: Nested<'a>,
    ) -> Result<Instance<'a>, Error> {
        let key = &mut self.key;
        key.clear();
        let mut subs = Vec::new();
        shape_key(root, key, &mut subs, nested);
        if subs.len() > usize::from(u16::MAX) {
            return Err(Error::InvalidValue(
                "more than 65535 values in one event".into(),
            ));
        }
        let template = self.shapes.template(key);
        if let Nested::Replacing(e) = nested {
            let inner = self.instance(e, Nested::No)?;
            if let Some(slot) = subs.iter_mut().find_map(|s| match s {
                Sub::Instance(slot) => Some(slot),
                Sub::Value(_) => None,
            }) {
                *slot = Some(Box::new(inner));
            }
        }
        Ok(Instance {
            root,
            template,
            subs,
            nested,
        })
    }

    fn flush_chunk(&mut self) -> Result<(), Error> {
        if self.chunk.is_empty() {
            return Ok(());
        }
        let bytes = self.chunk.finish();
        self.out.write_all(&bytes)?;
        self.stats.chunks += 1;
        self.chunk.reset(bytes);
        Ok(())
    }

    /// Writes the last chunk and the file header; returns what was written.
    pub fn finish(mut self) -> Result<WriteStats, Error> {
        self.finish_in_place()?;
        Ok(self.stats.clone())
    }

    /// As [`EvtxWriter::finish`], and gives the stream back.
    pub fn finish_into_inner(mut self) -> Result<(W, WriteStats), Error> {
        self.finish_in_place()?;
        let stats = self.stats.clone();
        Ok((self.out, stats))
    }

    fn finish_in_place(&mut self) -> Result<(), Error> {
        if self.finished {
            return Err(Error::Finished);
        }
        self.flush_chunk()?;
        let header = file_header(
            self.stats.chunks,
            self.next_id,
            if self.options.dirty { 1 } else { 0 },
        );
        let end = self.out.stream_position()?;
        self.out.seek(SeekFrom::Start(self.start))?;
        self.out.write_all(&header)?;
        self.out.seek(SeekFrom::Start(end))?;
        self.out.flush()?;
        self.stats.bytes = end - self.start;
        self.finished = true;
        Ok(())
    }
}

/// Writes `events` as an EVTX file to `out` with the default [`WriterOptions`].
pub fn write_events<E: Borrow<Event>>(
    events: impl IntoIterator<Item = E>,
    out: impl Write + Seek,
) -> Result<WriteStats, Error> {
    write_events_with(events, out, WriterOptions::default())
}

/// Writes `events` as an EVTX file to `out`.
pub fn write_events_with<E: Borrow<Event>>(
    events: impl IntoIterator<Item = E>,
    out: impl Write + Seek,
    options: WriterOptions,
) -> Result<WriteStats, Error> {
    let mut writer = EvtxWriter::new(out, options)?;
    for e in events {
        writer.write(e.borrow())?;
    }
    writer.finish()
}

/// Rejects what BinXML cannot hold: bad values, names it cannot store, trees too deep.
fn validate(e: &Element, depth: usize) -> Result<(), Error> {
    if depth > 64 {
        return Err(Error::InvalidValue("elements nested deeper than 64".into()));
    }
    check_name(&e.name)?;
    for a in &e.attributes {
        check_name(&a.name)?;
        a.value.validate()?;
        if matches!(a.value, Value::Array(_)) {
            return Err(Error::InvalidValue(format!(
                "attribute {} holds an array",
                a.name
            )));
        }
    }
    for c in &e.children {
        match c {
            Node::Element(c) => validate(c, depth + 1)?,
            Node::Value(v) => v.validate()?,
        }
    }
    Ok(())
}

fn check_name(name: &str) -> Result<(), Error> {
    if name.is_empty() || name.encode_utf16().count() > 255 || name.contains('\0') {
        return Err(Error::InvalidName(name.to_owned()));
    }
    Ok(())
}

/// The 4096-byte file header.
fn file_header(chunks: u64, next_record_id: u64, flags: u32) -> Vec<u8> {
    let mut h = vec![0u8; FILE_HEADER_SIZE];
    h[0..8].copy_from_slice(b"ElfFile\0");
    h[8..16].copy_from_slice(&0u64.to_le_bytes());
    h[16..24].copy_from_slice(&chunks.saturating_sub(1).to_le_bytes());
    h[24..32].copy_from_slice(&next_record_id.to_le_bytes());
    h[32..36].copy_from_slice(&128u32.to_le_bytes());
    h[36..38].copy_from_slice(&1u16.to_le_bytes());
    h[38..40].copy_from_slice(&3u16.to_le_bytes());
    h[40..42].copy_from_slice(&(FILE_HEADER_SIZE as u16).to_le_bytes());
    // Past 65535 chunks (4 GiB) the count no longer fits; readers count chunks from
    // the file's size.
    h[42..44].copy_from_slice(&(chunks.min(0xffff) as u16).to_le_bytes());
    h[120..124].copy_from_slice(&flags.to_le_bytes());
    let crc = crc32fast::hash(&h[..120]);
    h[124..128].copy_from_slice(&crc.to_le_bytes());
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;

    fn event() -> Event {
        Event {
            root: Element::new("Event")
                .child(Element::new("System").child(Element::new("EventID").text(Value::U16(1)))),
        }
    }

    #[test]
    fn the_file_header_counts_chunks_and_the_next_record_id() {
        let h = file_header(3, 501, 1);
        assert_eq!(h.len(), FILE_HEADER_SIZE);
        assert_eq!(&h[..8], b"ElfFile\0");
        assert_eq!(u64::from_le_bytes(h[16..24].try_into().unwrap()), 2);
        assert_eq!(u64::from_le_bytes(h[24..32].try_into().unwrap()), 501);
        assert_eq!(u16::from_le_bytes([h[42], h[43]]), 3);
        assert_eq!(u32::from_le_bytes(h[120..124].try_into().unwrap()), 1);
        let crc = u32::from_le_bytes(h[124..128].try_into().unwrap());
        assert_eq!(crc, crc32fast::hash(&h[..120]));
    }

    #[test]
    fn an_event_whose_time_is_not_a_time_is_refused() {
        let timed = |v: Value| Event {
            root: Element::new("Event").child(
                Element::new("System")
                    .child(Element::new("EventID").text(Value::U16(1)))
                    .child(Element::new("TimeCreated").attr("SystemTime", v)),
            ),
        };
        let mut w = EvtxWriter::new(Cursor::new(Vec::new()), WriterOptions::default()).unwrap();
        let bad = [
            (
                Value::String("2024-02-30T00:00:00Z".into()),
                "\"2024-02-30T00:00:00Z\"",
            ),
            (
                Value::FileTime(u64::MAX),
                "\"FILETIME 18446744073709551615\"",
            ),
        ];
        for (v, shown) in bad {
            match w.write(&timed(v)) {
                Err(e @ Error::InvalidTime(_)) => {
                    assert!(
                        e.to_string()
                            .starts_with(&format!("invalid TimeCreated SystemTime {shown}: ")),
                        "{e}"
                    )
                }
                other => panic!("{other:?}"),
            }
        }
        assert_eq!(
            w.write(&timed(Value::FileTime(133_547_084_565_305_330)))
                .unwrap(),
            1
        );
        // No time at all: the writer's default time, as before.
        assert_eq!(w.write(&event()).unwrap(), 2);
    }

    #[test]
    fn ids_count_up_from_the_first_and_stop_at_the_last() {
        let options = WriterOptions {
            first_record_id: u64::MAX - 1,
            ..WriterOptions::default()
        };
        let mut w = EvtxWriter::new(Cursor::new(Vec::new()), options).unwrap();
        assert_eq!(w.write(&event()).unwrap(), u64::MAX - 1);
        assert!(matches!(w.write(&event()), Err(Error::RecordIdOverflow)));
        let (out, stats) = w.finish_into_inner().unwrap();
        assert_eq!(out.into_inner().len() as u64, stats.bytes);
        assert_eq!(stats.first_record_id, Some(u64::MAX - 1));
    }

    #[test]
    fn write_events_writes_them_all_as_templates() {
        let events = vec![event(), event(), event()];
        let stats = write_events(&events, Cursor::new(Vec::new())).unwrap();
        assert_eq!((stats.records, stats.chunks), (3, 1));
        assert_eq!((stats.template_records, stats.template_definitions), (3, 1));
        let plain = WriterOptions {
            templates: false,
            ..WriterOptions::default()
        };
        let stats = write_events_with(&events, Cursor::new(Vec::new()), plain).unwrap();
        assert_eq!((stats.records, stats.template_records), (3, 0));
    }

    #[test]
    fn what_binxml_cannot_hold_is_refused() {
        let mut w = EvtxWriter::new(Cursor::new(Vec::new()), WriterOptions::default()).unwrap();
        let unnamed = Event {
            root: Element::new(""),
        };
        assert!(matches!(w.write(&unnamed), Err(Error::InvalidName(_))));
        let mut deep = Element::new("E");
        for _ in 0..70 {
            deep = Element::new("E").child(deep);
        }
        assert!(matches!(
            w.write(&Event { root: deep }),
            Err(Error::InvalidValue(_))
        ));
        assert_eq!(w.finish().unwrap().records, 0);
        let bad_time = WriterOptions {
            default_time: u64::MAX,
            ..WriterOptions::default()
        };
        assert!(EvtxWriter::new(Cursor::new(Vec::new()), bad_time).is_err());
    }
}
