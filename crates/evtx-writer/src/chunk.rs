//! One 64 KiB chunk being filled: its records, its string and template tables, and
//! the BinXML encoding of elements (plain, or as a template definition and instance).
//!
//! Layout (libyal's EVTX format notes, MS-EVEN6 for BinXML): a 512-byte header
//! (`ElfChnk\0`, first/last record numbers and ids, header size 128, offset of the last
//! record, free-space offset, CRC32 of the records, flags, CRC32 of header bytes 0..120
//! and 128..512), then 64 string-table buckets and 32 template-table buckets (chunk
//! offsets), then records: `**\0\0`, size, record id, FILETIME, BinXML, size again.
//! Names and template definitions live in the chunk: the first use writes them in place
//! (the reference points just past itself), later uses point back at them.

use crate::error::Error;
use crate::event::{Element, Node};
use crate::template::{literal, Instance, Nested, Sub, BINXML};
use crate::value::{push_utf16, Value};
use std::collections::HashMap;

/// Size of a chunk.
const CHUNK_SIZE: usize = 65536;
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

/// How elements are encoded.
enum Mode<'a> {
    /// A template definition: dependency ids on element starts, values as numbered
    /// optional substitutions (the counter is the next number).
    Definition(&'a mut u16),
    /// A record's own elements: values inline.
    Plain,
}

/// One chunk being filled.
pub(crate) struct Chunk {
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

/// Where a record began: what [`Chunk::rollback`] goes back to.
pub(crate) struct Snapshot {
    len: usize,
    string_buckets: [u32; 64],
    template_buckets: [u32; 32],
}

impl Chunk {
    /// An empty chunk.
    pub fn new() -> Self {
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
    pub fn reset(&mut self, mut buf: Vec<u8>) {
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

    /// Whether what was written fits in a chunk.
    pub fn fits(&self) -> bool {
        self.buf.len() <= CHUNK_SIZE
    }

    /// Whether the chunk holds no record.
    pub fn is_empty(&self) -> bool {
        self.records == 0
    }

    fn pos(&self) -> u32 {
        self.buf.len() as u32
    }

    /// Marks where the next record begins.
    pub fn snapshot(&mut self) -> Snapshot {
        self.new_strings.clear();
        self.new_templates.clear();
        Snapshot {
            len: self.buf.len(),
            string_buckets: self.string_buckets,
            template_buckets: self.template_buckets,
        }
    }

    /// Drops what was written since `s`: the record, and the names and templates it added.
    pub fn rollback(&mut self, s: Snapshot) {
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

    /// Counts the record begun at `s` as written.
    pub fn commit_record(&mut self, id: u64, s: Snapshot) {
        let start = s.len;
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

    /// Appends a record of `root` as plain elements, values inline.
    pub fn encode_plain_record(&mut self, root: &Element, id: u64, time: u64) -> Result<(), Error> {
        let start = self.begin_record(id, time);
        self.buf
            .extend_from_slice(&[token::FRAGMENT_HEADER, 1, 1, 0]);
        self.encode_element(root, Mode::Plain, Nested::No)?;
        self.buf.push(token::EOF);
        self.end_record(start);
        Ok(())
    }

    /// Appends a record that is the template instance `inst` (its values in document
    /// order, some of them instances of other templates). A template's definition goes in
    /// place on its first use in this chunk, and counts in `definitions`.
    pub fn encode_template_record(
        &mut self,
        inst: &Instance<'_>,
        id: u64,
        time: u64,
        definitions: &mut u64,
    ) -> Result<(), Error> {
        let record_start = self.begin_record(id, time);
        self.encode_fragment(inst, definitions)?;
        self.end_record(record_start);
        Ok(())
    }

    /// A BinXML fragment of the one template instance `inst`: what a record holds, and
    /// a BinXML value that nests an instance.
    fn encode_fragment(&mut self, inst: &Instance<'_>, definitions: &mut u64) -> Result<(), Error> {
        self.buf
            .extend_from_slice(&[token::FRAGMENT_HEADER, 1, 1, 0]);
        self.buf.push(token::TEMPLATE_INSTANCE);
        self.buf.push(1);
        let template = inst.template;
        self.buf.extend_from_slice(&template.id.to_le_bytes());
        match self.templates.get(&template.index) {
            Some(&offset) => self.buf.extend_from_slice(&offset.to_le_bytes()),
            None => {
                let def = self.pos() + 4;
                self.buf.extend_from_slice(&def.to_le_bytes());
                let bucket = (template.id % 32) as usize;
                self.buf
                    .extend_from_slice(&self.template_buckets[bucket].to_le_bytes());
                self.buf.extend_from_slice(&template.guid);
                let size_at = self.reserve_u32();
                self.buf
                    .extend_from_slice(&[token::FRAGMENT_HEADER, 1, 1, 0]);
                let mut next_sub = 0u16;
                self.encode_element(inst.root, Mode::Definition(&mut next_sub), inst.nested)?;
                self.buf.push(token::EOF);
                self.patch_size(size_at);
                self.template_buckets[bucket] = def;
                self.templates.insert(template.index, def);
                self.new_templates.push(template.index);
                *definitions += 1;
            }
        }
        // The substitution array: count, descriptors (size, type), values.
        self.buf
            .extend_from_slice(&(inst.subs.len() as u32).to_le_bytes());
        let descriptors = self.buf.len();
        for sub in &inst.subs {
            let ty = match sub {
                Sub::Value(v) => v.type_code(),
                Sub::Instance(Some(_)) => BINXML,
                Sub::Instance(None) => Value::Null.type_code(),
            };
            self.buf.extend_from_slice(&[0, 0, ty, 0]);
        }
        for (i, sub) in inst.subs.iter().enumerate() {
            let before = self.buf.len();
            match sub {
                Sub::Value(v) => v.encode(&mut self.buf),
                Sub::Instance(Some(nested)) => self.encode_fragment(nested, definitions)?,
                Sub::Instance(None) => {}
            }
            let size = u16::try_from(self.buf.len() - before).map_err(|_| Error::RecordTooLarge)?;
            let at = descriptors + 4 * i;
            self.buf[at..at + 2].copy_from_slice(&size.to_le_bytes());
        }
        self.buf.push(token::EOF);
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

    /// Encodes element `e`; in a definition, with the BinXML substitution that `nested`
    /// (for the root element) places.
    fn encode_element(
        &mut self,
        e: &Element,
        mut mode: Mode<'_>,
        nested: Nested<'_>,
    ) -> Result<(), Error> {
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
        let content = matches!(nested, Nested::Last)
            || e.children.iter().any(|c| match (c, &mode) {
                (Node::Element(_), _) | (Node::Value(_), Mode::Definition(_)) => true,
                (Node::Value(v), Mode::Plain) => !matches!(v, Value::Null),
            });
        if !content {
            self.buf.push(token::CLOSE_EMPTY);
        } else {
            self.buf.push(token::CLOSE_START);
            for c in &e.children {
                match c {
                    Node::Element(c) if nested.replaces(c) => self.binxml_sub(&mut mode)?,
                    Node::Element(c) => {
                        let m = match &mut mode {
                            Mode::Definition(n) => Mode::Definition(n),
                            Mode::Plain => Mode::Plain,
                        };
                        self.encode_element(c, m, Nested::No)?
                    }
                    Node::Value(v) => self.content_value(v, &mut mode)?,
                }
            }
            if let Nested::Last = nested {
                self.binxml_sub(&mut mode)?;
            }
            self.buf.push(token::END_ELEMENT);
        }
        self.patch_size(size_at);
        Ok(())
    }

    /// The BinXML substitution of a definition that holds a nested instance.
    fn binxml_sub(&mut self, mode: &mut Mode<'_>) -> Result<(), Error> {
        let Mode::Definition(next) = mode else {
            unreachable!("instances nest only in templates")
        };
        self.buf.push(token::OPTIONAL_SUBSTITUTION);
        self.buf.extend_from_slice(&next.to_le_bytes());
        self.buf.push(BINXML);
        **next = next
            .checked_add(1)
            .ok_or_else(|| Error::InvalidValue("too many values".into()))?;
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
                // Sized types need a substitution's size: outside a template they
                // become their text.
                Value::AnsiString(_) | Value::Binary(_) | Value::Array(_) => {
                    self.inline_string(&v.render())
                }
                // Fixed-size types (numbers, booleans, GUIDs, times, SIDs, hex): a
                // value token holds them as they are.
                _ => {
                    self.buf.push(token::VALUE);
                    self.buf.push(v.type_code());
                    v.encode(&mut self.buf);
                    Ok(())
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
    pub fn finish(&mut self) -> Vec<u8> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::{shape_key, Shapes};

    /// `root` as a template instance without nesting.
    fn instance<'a>(shapes: &mut Shapes, root: &'a Element) -> Instance<'a> {
        let (mut key, mut subs) = (Vec::new(), Vec::new());
        shape_key(root, &mut key, &mut subs, Nested::No);
        Instance {
            root,
            template: shapes.template(&key),
            subs,
            nested: Nested::No,
        }
    }

    fn event(user: &str) -> Element {
        Element::new("Event").child(
            Element::new("EventData").child(Element::new("Data").attr("Name", "User").text(user)),
        )
    }

    /// Writes `root` as a template record; returns the definitions written.
    fn template_record(chunk: &mut Chunk, shapes: &mut Shapes, root: &Element, id: u64) -> u64 {
        let inst = instance(shapes, root);
        let mut definitions = 0;
        let s = chunk.snapshot();
        chunk
            .encode_template_record(&inst, id, 0, &mut definitions)
            .unwrap();
        chunk.commit_record(id, s);
        definitions
    }

    fn u32_at(b: &[u8], at: usize) -> u32 {
        u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
    }

    #[test]
    fn a_record_has_its_magic_id_and_size_at_both_ends() {
        let mut chunk = Chunk::new();
        let s = chunk.snapshot();
        chunk.encode_plain_record(&event("jsmith"), 7, 42).unwrap();
        chunk.commit_record(7, s);
        let rec = &chunk.buf[CHUNK_HEADER_SIZE..];
        assert_eq!(&rec[..4], b"**\0\0");
        let size = u32_at(rec, 4) as usize;
        assert_eq!(size, rec.len());
        assert_eq!(u32_at(rec, size - 4) as usize, size);
        assert_eq!(u64::from_le_bytes(rec[8..16].try_into().unwrap()), 7);
        assert_eq!(u64::from_le_bytes(rec[16..24].try_into().unwrap()), 42);
        assert!(chunk.fits() && !chunk.is_empty());
    }

    #[test]
    fn a_template_is_defined_once_per_chunk() {
        let (mut chunk, mut shapes) = (Chunk::new(), Shapes::default());
        assert_eq!(template_record(&mut chunk, &mut shapes, &event("a"), 1), 1);
        let one = chunk.buf.len();
        assert_eq!(template_record(&mut chunk, &mut shapes, &event("b"), 2), 0);
        // The second record points back at the definition: it is much shorter.
        assert!(chunk.buf.len() - one < one - CHUNK_HEADER_SIZE);
        let bytes = chunk.finish();
        chunk.reset(bytes);
        assert!(chunk.is_empty());
        assert_eq!(template_record(&mut chunk, &mut shapes, &event("c"), 3), 1);
    }

    #[test]
    fn rollback_forgets_the_names_and_templates_of_the_record() {
        let (mut chunk, mut shapes) = (Chunk::new(), Shapes::default());
        let root = event("a");
        let inst = instance(&mut shapes, &root);
        let s = chunk.snapshot();
        let mut definitions = 0;
        chunk
            .encode_template_record(&inst, 1, 0, &mut definitions)
            .unwrap();
        let first = chunk.buf[CHUNK_HEADER_SIZE..].to_vec();
        chunk.rollback(s);
        assert_eq!(chunk.buf.len(), CHUNK_HEADER_SIZE);
        assert!(chunk.strings.is_empty() && chunk.templates.is_empty());
        assert_eq!(chunk.string_buckets, [0; 64]);
        // Written again, the record is byte for byte the same: names and definition in place.
        assert_eq!(template_record(&mut chunk, &mut shapes, &root, 1), 1);
        assert_eq!(chunk.buf[CHUNK_HEADER_SIZE..], first[..]);
    }

    #[test]
    fn a_finished_chunk_has_its_header_and_checksums() {
        let mut chunk = Chunk::new();
        for id in 10..13 {
            let s = chunk.snapshot();
            chunk.encode_plain_record(&event("x"), id, 0).unwrap();
            chunk.commit_record(id, s);
        }
        let used = chunk.buf.len();
        let b = chunk.finish();
        assert_eq!(b.len(), CHUNK_SIZE);
        assert_eq!(&b[..8], b"ElfChnk\0");
        assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), 10);
        assert_eq!(u64::from_le_bytes(b[16..24].try_into().unwrap()), 12);
        assert_eq!(u32_at(&b, 48) as usize, used);
        assert_eq!(u32_at(&b, 52), crc32fast::hash(&b[CHUNK_HEADER_SIZE..used]));
        let mut crc = crc32fast::Hasher::new();
        crc.update(&b[..120]);
        crc.update(&b[128..512]);
        assert_eq!(u32_at(&b, 124), crc.finalize());
    }

    #[test]
    fn a_record_past_the_chunk_is_too_large() {
        let mut chunk = Chunk::new();
        let big = "x".repeat(40_000);
        let root = Element::new("Event")
            .child(Element::new("A").text(big.as_str()))
            .child(Element::new("B").text(big.as_str()));
        let s = chunk.snapshot();
        assert!(matches!(
            chunk.encode_plain_record(&root, 1, 0),
            Err(Error::RecordTooLarge)
        ));
        chunk.rollback(s);
        assert!(chunk.is_empty() && chunk.fits());
    }
}
