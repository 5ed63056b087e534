//! The EVTX container (file header, 64 KiB chunks, records) and BinXML encoding.
//!
//! Layout facts (libyal's EVTX format notes, MS-EVEN6 for BinXML):
//!
//! - File header: 4096 bytes; `ElfFile\0`, first/last chunk number, next record id,
//!   header size 128, version 3.1, block size 4096, chunk count, flags at 120 and the
//!   CRC32 of bytes 0..120 at 124.
//! - Chunk: 65536 bytes; 512-byte header (`ElfChnk\0`, first/last record numbers and
//!   ids, header size 128, offset of the last record, free-space offset, CRC32 of the
//!   records, flags, CRC32 of header bytes 0..120 and 128..512), then 64 string-table
//!   buckets and 32 template-table buckets (chunk offsets), then records.
//! - Record: `**\0\0`, size, record id, FILETIME, BinXML, size again.
//! - Names and template definitions live in the chunk: the first use writes them in
//!   place (the reference points just past itself), later uses point back at them.

use crate::error::Error;
use crate::event::{Element, Event, Node};
use crate::value::{push_utf16, Value};
use std::borrow::Borrow;
use std::collections::HashMap;
use std::io::{Seek, SeekFrom, Write};

/// Size of the file header block.
pub const FILE_HEADER_SIZE: usize = 4096;
/// Size of a chunk.
pub const CHUNK_SIZE: usize = 65536;
const CHUNK_HEADER_SIZE: usize = 512;

/// BinXML tokens.
mod token {
    pub const EOF: u8 = 0x00;
    pub const OPEN_START: u8 = 0x01;
    pub const CLOSE_START: u8 = 0x02;
    pub const CLOSE_EMPTY: u8 = 0x03;
    pub const END_ELEMENT: u8 = 0x04;
    pub const VALUE: u8 = 0x05;
    pub const ATTRIBUTE: u8 = 0x06;
    pub const TEMPLATE_INSTANCE: u8 = 0x0c;
    pub const OPTIONAL_SUBSTITUTION: u8 = 0x0e;
    pub const FRAGMENT_HEADER: u8 = 0x0f;
    pub const MORE: u8 = 0x40;
}

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
    shapes: HashMap<Vec<u8>, TemplateMeta>,
    scratch: Scratch,
    finished: bool,
}

#[derive(Clone, Copy)]
struct TemplateMeta {
    index: usize,
    id: u32,
    guid: [u8; 16],
}

/// Reused buffers.
#[derive(Default)]
struct Scratch {
    key: Vec<u8>,
    values: Vec<u8>,
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
            shapes: HashMap::new(),
            scratch: Scratch::default(),
            finished: false,
        })
    }

    /// Appends one event; returns its record id.
    pub fn write(&mut self, event: &Event) -> Result<u64, Error> {
        if self.finished {
            return Err(Error::Finished);
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
                Ok(()) if self.chunk.buf.len() <= CHUNK_SIZE => {
                    self.chunk.commit_record(id, snapshot.len);
                    return Ok(());
                }
                Ok(()) | Err(Error::RecordTooLarge) => {
                    self.chunk.rollback(snapshot);
                    if attempt == 0 && self.chunk.records > 0 {
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
        let Scratch { key, values } = &mut self.scratch;
        key.clear();
        values.clear();
        let mut subs: Vec<&Value> = Vec::new();
        shape_key(&event.root, key, &mut subs);
        if subs.len() > usize::from(u16::MAX) {
            return Err(Error::InvalidValue(
                "more than 65535 values in one event".into(),
            ));
        }
        let meta = match self.shapes.get(key.as_slice()) {
            Some(m) => *m,
            None => {
                let h = fnv64(key);
                let h2 = fnv64(&h.to_le_bytes());
                let mut guid = [0u8; 16];
                guid[..8].copy_from_slice(&h.to_le_bytes());
                guid[8..].copy_from_slice(&h2.to_le_bytes());
                let meta = TemplateMeta {
                    index: self.shapes.len(),
                    id: h as u32,
                    guid,
                };
                self.shapes.insert(key.clone(), meta);
                meta
            }
        };
        let chunk = &mut self.chunk;
        let record_start = chunk.begin_record(id, time);
        chunk
            .buf
            .extend_from_slice(&[token::FRAGMENT_HEADER, 1, 1, 0]);
        chunk.buf.push(token::TEMPLATE_INSTANCE);
        chunk.buf.push(1);
        chunk.buf.extend_from_slice(&meta.id.to_le_bytes());
        match chunk.templates.get(&meta.index) {
            Some(&offset) => chunk.buf.extend_from_slice(&offset.to_le_bytes()),
            None => {
                let def = chunk.pos() + 4;
                chunk.buf.extend_from_slice(&def.to_le_bytes());
                let bucket = (meta.id % 32) as usize;
                chunk
                    .buf
                    .extend_from_slice(&chunk.template_buckets[bucket].to_le_bytes());
                chunk.buf.extend_from_slice(&meta.guid);
                let size_at = chunk.reserve_u32();
                chunk
                    .buf
                    .extend_from_slice(&[token::FRAGMENT_HEADER, 1, 1, 0]);
                let mut next_sub = 0u16;
                chunk.encode_element(&event.root, Mode::Definition(&mut next_sub))?;
                chunk.buf.push(token::EOF);
                chunk.patch_size(size_at);
                chunk.template_buckets[bucket] = def;
                chunk.templates.insert(meta.index, def);
                chunk.new_templates.push(meta.index);
                self.stats.template_definitions += 1;
            }
        }
        // The substitution array: count, descriptors (size, type), values.
        chunk
            .buf
            .extend_from_slice(&(subs.len() as u32).to_le_bytes());
        for v in &subs {
            let before = values.len();
            v.encode(values);
            let size = values.len() - before;
            let size = u16::try_from(size).map_err(|_| Error::RecordTooLarge)?;
            chunk.buf.extend_from_slice(&size.to_le_bytes());
            chunk.buf.push(v.type_code());
            chunk.buf.push(0);
        }
        chunk.buf.extend_from_slice(values);
        chunk.buf.push(token::EOF);
        chunk.end_record(record_start);
        self.stats.template_records += 1;
        Ok(())
    }

    fn flush_chunk(&mut self) -> Result<(), Error> {
        if self.chunk.records == 0 {
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

/// The shape of a template: element and attribute names, literal values and the value
/// type of each substitution, in document order. Collects the substituted values.
fn shape_key<'a>(e: &'a Element, key: &mut Vec<u8>, subs: &mut Vec<&'a Value>) {
    key.push(b'<');
    key.extend_from_slice(e.name.as_bytes());
    for a in &e.attributes {
        key.push(b'@');
        key.extend_from_slice(a.name.as_bytes());
        match literal(e, &a.name, &a.value) {
            Some(s) => {
                key.push(b'=');
                key.extend_from_slice(s.as_bytes());
                key.push(0);
            }
            None => {
                key.push(b'%');
                key.push(a.value.type_code());
                subs.push(&a.value);
            }
        }
    }
    key.push(b'>');
    for c in &e.children {
        match c {
            Node::Element(c) => shape_key(c, key, subs),
            Node::Value(v) => {
                key.push(b'%');
                key.push(v.type_code());
                subs.push(v);
            }
        }
    }
    key.push(b'/');
}

/// Attribute values that belong to a template's structure rather than its data, as in
/// Windows' templates: `Data/@Name` and `Event/@xmlns`.
fn literal<'a>(e: &Element, attr: &str, v: &'a Value) -> Option<&'a str> {
    match (e.name.as_str(), attr, v) {
        ("Data", "Name", Value::String(s)) | (_, "xmlns", Value::String(s)) => Some(s),
        _ => None,
    }
}

/// How elements are encoded.
enum Mode<'a> {
    /// A template definition: dependency ids on element starts, values as numbered
    /// optional substitutions (the counter is the next number).
    Definition(&'a mut u16),
    /// A record's own elements: values inline.
    Plain,
}

/// One chunk being filled.
struct Chunk {
    buf: Vec<u8>,
    strings: HashMap<String, u32>,
    string_buckets: [u32; 64],
    templates: HashMap<usize, u32>,
    template_buckets: [u32; 32],
    /// Names and templates added by the record being written (for rollback).
    new_strings: Vec<String>,
    new_templates: Vec<usize>,
    first_id: u64,
    last_id: u64,
    last_record_offset: u32,
    records: u64,
}

struct Snapshot {
    len: usize,
    string_buckets: [u32; 64],
    template_buckets: [u32; 32],
}

impl Chunk {
    fn new() -> Self {
        let mut buf = Vec::with_capacity(CHUNK_SIZE + 4096);
        buf.resize(CHUNK_HEADER_SIZE, 0);
        Chunk {
            buf,
            strings: HashMap::new(),
            string_buckets: [0; 64],
            templates: HashMap::new(),
            template_buckets: [0; 32],
            new_strings: Vec::new(),
            new_templates: Vec::new(),
            first_id: 0,
            last_id: 0,
            last_record_offset: 0,
            records: 0,
        }
    }

    /// Empties the chunk, reusing `buf`'s allocation.
    fn reset(&mut self, mut buf: Vec<u8>) {
        buf.clear();
        buf.resize(CHUNK_HEADER_SIZE, 0);
        self.buf = buf;
        self.strings.clear();
        self.string_buckets = [0; 64];
        self.templates.clear();
        self.template_buckets = [0; 32];
        self.new_strings.clear();
        self.new_templates.clear();
        self.records = 0;
        self.last_record_offset = 0;
    }

    fn pos(&self) -> u32 {
        self.buf.len() as u32
    }

    fn snapshot(&mut self) -> Snapshot {
        self.new_strings.clear();
        self.new_templates.clear();
        Snapshot {
            len: self.buf.len(),
            string_buckets: self.string_buckets,
            template_buckets: self.template_buckets,
        }
    }

    fn rollback(&mut self, s: Snapshot) {
        self.buf.truncate(s.len);
        self.string_buckets = s.string_buckets;
        self.template_buckets = s.template_buckets;
        for name in self.new_strings.drain(..) {
            self.strings.remove(&name);
        }
        for t in self.new_templates.drain(..) {
            self.templates.remove(&t);
        }
    }

    fn commit_record(&mut self, id: u64, start: usize) {
        if self.records == 0 {
            self.first_id = id;
        }
        self.last_id = id;
        self.last_record_offset = start as u32;
        self.records += 1;
    }

    fn reserve_u32(&mut self) -> usize {
        let at = self.buf.len();
        self.buf.extend_from_slice(&[0; 4]);
        at
    }

    /// Writes at `at` the number of bytes after that u32 field.
    fn patch_size(&mut self, at: usize) {
        let size = (self.buf.len() - at - 4) as u32;
        self.buf[at..at + 4].copy_from_slice(&size.to_le_bytes());
    }

    fn begin_record(&mut self, id: u64, time: u64) -> usize {
        let start = self.buf.len();
        self.buf.extend_from_slice(b"**\0\0");
        self.buf.extend_from_slice(&[0; 4]);
        self.buf.extend_from_slice(&id.to_le_bytes());
        self.buf.extend_from_slice(&time.to_le_bytes());
        start
    }

    fn end_record(&mut self, start: usize) {
        let size = (self.buf.len() + 4 - start) as u32;
        self.buf.extend_from_slice(&size.to_le_bytes());
        self.buf[start + 4..start + 8].copy_from_slice(&size.to_le_bytes());
    }

    fn encode_plain_record(&mut self, root: &Element, id: u64, time: u64) -> Result<(), Error> {
        let start = self.begin_record(id, time);
        self.buf
            .extend_from_slice(&[token::FRAGMENT_HEADER, 1, 1, 0]);
        self.encode_element(root, Mode::Plain)?;
        self.buf.push(token::EOF);
        self.end_record(start);
        Ok(())
    }

    /// A name reference: the offset of the name in the chunk's string table, written in
    /// place on first use.
    fn name_ref(&mut self, name: &str) {
        if let Some(&offset) = self.strings.get(name) {
            self.buf.extend_from_slice(&offset.to_le_bytes());
            return;
        }
        let offset = self.pos() + 4;
        self.buf.extend_from_slice(&offset.to_le_bytes());
        let units: Vec<u16> = name.encode_utf16().collect();
        let hash = units.iter().fold(0u32, |h, &u| {
            h.wrapping_mul(65599).wrapping_add(u32::from(u))
        }) as u16;
        let bucket = usize::from(hash % 64);
        self.buf
            .extend_from_slice(&self.string_buckets[bucket].to_le_bytes());
        self.buf.extend_from_slice(&hash.to_le_bytes());
        self.buf
            .extend_from_slice(&(units.len() as u16).to_le_bytes());
        for u in units {
            self.buf.extend_from_slice(&u.to_le_bytes());
        }
        self.buf.extend_from_slice(&[0, 0]);
        self.string_buckets[bucket] = offset;
        self.strings.insert(name.to_owned(), offset);
        self.new_strings.push(name.to_owned());
    }

    fn encode_element(&mut self, e: &Element, mut mode: Mode<'_>) -> Result<(), Error> {
        if self.buf.len() > CHUNK_SIZE {
            return Err(Error::RecordTooLarge);
        }
        let has_attrs = !e.attributes.is_empty();
        self.buf
            .push(token::OPEN_START | if has_attrs { token::MORE } else { 0 });
        if matches!(mode, Mode::Definition(_)) {
            self.buf.extend_from_slice(&0xffffu16.to_le_bytes());
        }
        let size_at = self.reserve_u32();
        self.name_ref(&e.name);
        if has_attrs {
            let attrs_at = self.reserve_u32();
            for (i, a) in e.attributes.iter().enumerate() {
                let more = i + 1 < e.attributes.len();
                self.buf
                    .push(token::ATTRIBUTE | if more { token::MORE } else { 0 });
                self.name_ref(&a.name);
                match literal(e, &a.name, &a.value) {
                    Some(s) if matches!(mode, Mode::Definition(_)) => self.inline_string(s)?,
                    _ => self.content_value(&a.value, &mut mode)?,
                }
            }
            self.patch_size(attrs_at);
        }
        // In a definition every value is a substitution, so only a childless element
        // closes empty; in a record, Null values write nothing.
        let content = e.children.iter().any(|c| match (c, &mode) {
            (Node::Element(_), _) | (Node::Value(_), Mode::Definition(_)) => true,
            (Node::Value(v), Mode::Plain) => !matches!(v, Value::Null),
        });
        if !content {
            self.buf.push(token::CLOSE_EMPTY);
        } else {
            self.buf.push(token::CLOSE_START);
            for c in &e.children {
                match c {
                    Node::Element(c) => {
                        let m = match &mut mode {
                            Mode::Definition(n) => Mode::Definition(n),
                            Mode::Plain => Mode::Plain,
                        };
                        self.encode_element(c, m)?
                    }
                    Node::Value(v) => self.content_value(v, &mut mode)?,
                }
            }
            self.buf.push(token::END_ELEMENT);
        }
        self.patch_size(size_at);
        Ok(())
    }

    /// A value in content or attribute position: a substitution in a definition, the
    /// value itself in a record.
    fn content_value(&mut self, v: &Value, mode: &mut Mode<'_>) -> Result<(), Error> {
        match mode {
            Mode::Definition(next) => {
                self.buf.push(token::OPTIONAL_SUBSTITUTION);
                self.buf.extend_from_slice(&next.to_le_bytes());
                self.buf.push(v.type_code());
                **next = next
                    .checked_add(1)
                    .ok_or_else(|| Error::InvalidValue("too many values".into()))?;
                Ok(())
            }
            Mode::Plain => match v {
                Value::Null => Ok(()),
                Value::String(s) => self.inline_string(s),
                // Fixed-size types: a value token holds them as they are.
                Value::I8(_)
                | Value::U8(_)
                | Value::I16(_)
                | Value::U16(_)
                | Value::I32(_)
                | Value::U32(_)
                | Value::I64(_)
                | Value::U64(_)
                | Value::F32(_)
                | Value::F64(_)
                | Value::Bool(_)
                | Value::Guid(_)
                | Value::FileTime(_)
                | Value::SysTime(_)
                | Value::Sid(_)
                | Value::Hex32(_)
                | Value::Hex64(_) => {
                    self.buf.push(token::VALUE);
                    self.buf.push(v.type_code());
                    v.encode(&mut self.buf);
                    Ok(())
                }
                // Sized types need a substitution's size: outside a template they
                // become their text.
                Value::AnsiString(_) | Value::Binary(_) | Value::Array(_) => {
                    self.inline_string(&v.render())
                }
            },
        }
    }

    fn inline_string(&mut self, s: &str) -> Result<(), Error> {
        let n = s.encode_utf16().count();
        let n = u16::try_from(n).map_err(|_| Error::RecordTooLarge)?;
        self.buf.push(token::VALUE);
        self.buf.push(0x01);
        self.buf.extend_from_slice(&n.to_le_bytes());
        push_utf16(&mut self.buf, s);
        Ok(())
    }

    /// The finished 64 KiB chunk: header fields and both CRC32s filled in.
    fn finish(&mut self) -> Vec<u8> {
        let mut buf = std::mem::take(&mut self.buf);
        let free = buf.len() as u32;
        let events_crc = crc32fast::hash(&buf[CHUNK_HEADER_SIZE..]);
        buf.resize(CHUNK_SIZE, 0);
        let h = &mut buf[..CHUNK_HEADER_SIZE];
        h[0..8].copy_from_slice(b"ElfChnk\0");
        h[8..16].copy_from_slice(&self.first_id.to_le_bytes());
        h[16..24].copy_from_slice(&self.last_id.to_le_bytes());
        h[24..32].copy_from_slice(&self.first_id.to_le_bytes());
        h[32..40].copy_from_slice(&self.last_id.to_le_bytes());
        h[40..44].copy_from_slice(&128u32.to_le_bytes());
        h[44..48].copy_from_slice(&self.last_record_offset.to_le_bytes());
        h[48..52].copy_from_slice(&free.to_le_bytes());
        h[52..56].copy_from_slice(&events_crc.to_le_bytes());
        h[56..120].fill(0);
        h[120..124].copy_from_slice(&0u32.to_le_bytes());
        for (i, o) in self.string_buckets.iter().enumerate() {
            h[128 + 4 * i..132 + 4 * i].copy_from_slice(&o.to_le_bytes());
        }
        for (i, o) in self.template_buckets.iter().enumerate() {
            h[384 + 4 * i..388 + 4 * i].copy_from_slice(&o.to_le_bytes());
        }
        let mut crc = crc32fast::Hasher::new();
        crc.update(&h[..120]);
        crc.update(&h[128..512]);
        let header_crc = crc.finalize();
        h[124..128].copy_from_slice(&header_crc.to_le_bytes());
        buf
    }
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

/// FNV-1a, 64 bits: template ids and GUIDs from shapes, the same on every run.
fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}
