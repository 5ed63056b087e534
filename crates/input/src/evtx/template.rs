//! BinXML template definitions read straight from an EVTX chunk: the element tree a
//! template instance fills, with its names, literal text and substitution slots.
//!
//! It is for the typed record path ([`super::typed`]), which fills a record view from a
//! template and the record's typed substitution values instead of rendering JSON. It
//! reads only the shapes that path reproduces exactly (elements, attributes, literal
//! UTF-16 text and substitutions); anything else (entity or character references,
//! CDATA, processing instructions, literal non-string values, names JSON would have to
//! escape, damage) makes [`parse`] return `None`, and the record takes the JSON path.
//! It is not a general BinXML parser and never renders anything.

use scanner_rules::FxHashMap;

/// Deepest element nesting the `evtx` crate accepts in one stream.
const MAX_DEPTH: usize = 512;
/// Size of a template definition header: next offset, GUID, data size.
const HEADER: usize = 24;
/// Size of a string-table entry's link (next offset, hash) before its length.
const NAME_LINK: usize = 6;

/// What a name means to the JSON shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NameKind {
    /// `Data`: keyed by its `Name` attribute inside a container.
    Data,
    /// `EventData` or `UserData`: a container of `Data` elements.
    Container,
    /// `Name`: the attribute that names a `Data` element.
    Name,
    /// Anything else.
    Other,
}

/// An element or attribute name.
#[derive(Debug)]
pub(crate) struct Name {
    pub(crate) text: Box<str>,
    pub(crate) kind: NameKind,
}

/// The names of a worker's templates, each once, so that names of different templates
/// (an instance nested in another) compare by id.
#[derive(Debug, Default)]
pub(crate) struct Names {
    list: Vec<Name>,
    ids: FxHashMap<Box<str>, u32>,
}

impl Names {
    /// The name with id `id`.
    pub(crate) fn get(&self, id: u32) -> &Name {
        &self.list[id as usize]
    }

    /// The kind of name `id`.
    pub(crate) fn kind(&self, id: u32) -> NameKind {
        self.list[id as usize].kind
    }

    /// How many names it holds.
    pub(crate) fn len(&self) -> usize {
        self.list.len()
    }

    fn intern(&mut self, text: String) -> u32 {
        if let Some(&id) = self.ids.get(text.as_str()) {
            return id;
        }
        let kind = match text.as_str() {
            "Data" => NameKind::Data,
            "EventData" | "UserData" => NameKind::Container,
            "Name" => NameKind::Name,
            _ => NameKind::Other,
        };
        let id = self.list.len() as u32;
        let text: Box<str> = text.into();
        self.ids.insert(text.clone(), id);
        self.list.push(Name { text, kind });
        id
    }
}

/// A node of an element's content or an attribute's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TNode {
    /// A child element (index into [`Template::elems`]).
    Elem(u32),
    /// Literal text (index into [`Template::texts`]).
    Text(u32),
    /// Substitution `id`; an optional one disappears when its value is empty.
    Sub { id: u16, optional: bool },
}

/// An element of a template.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TElem {
    pub(crate) name: u32,
    /// Left out of an instance whose value at this index is null.
    pub(crate) dependency: Option<u16>,
    /// Range of [`Template::attrs`].
    pub(crate) attrs: (u32, u32),
    /// Range of [`Template::nodes`].
    pub(crate) children: (u32, u32),
}

/// An attribute of a template element (only those with a value node).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TAttr {
    pub(crate) name: u32,
    /// Range of [`Template::nodes`].
    pub(crate) nodes: (u32, u32),
}

/// A parsed template definition.
#[derive(Debug, Default)]
pub(crate) struct Template {
    pub(crate) texts: Vec<Box<str>>,
    pub(crate) elems: Vec<TElem>,
    pub(crate) attrs: Vec<TAttr>,
    pub(crate) nodes: Vec<TNode>,
    pub(crate) root: u32,
    /// Whether two `Data` elements of a container may share a name (a literal name
    /// repeats, or a substitution names one): instances must then be checked.
    pub(crate) data_names_may_repeat: bool,
    /// The definition's bytes after its chain link (GUID, size, body). A definition
    /// elsewhere (another offset, another chunk) parses the same when its bytes are these
    /// but where names are referenced, and its names are the same.
    source: Box<[u8]>,
    /// The names referenced, in stream order.
    refs: Vec<NameRef>,
}

/// Where a template references a name, and which.
#[derive(Debug)]
struct NameRef {
    /// The reference's offset in `source`.
    at: u32,
    /// The name's stored bytes (length, characters, NUL); `None` when the name is
    /// stored right after the reference (inline), in the body.
    stored: Option<Box<[u8]>>,
}

impl Template {
    /// The GUID and data size its definition starts with, which key templates.
    pub(crate) fn key(&self) -> [u8; 20] {
        self.source[..20].try_into().expect("a header")
    }

    /// Whether the definition at `offset` of chunk `data` is this one: the same bytes
    /// but for name references (and the links of names stored inline), which name the
    /// same names, stored inline where this one's are.
    pub(crate) fn is_defined_at(&self, data: &[u8], offset: u32) -> bool {
        let base = offset as usize + 4;
        let Some(def) = data.get(base..base + self.source.len()) else {
            return false;
        };
        let mut from = 0;
        for r in &self.refs {
            let at = r.at as usize;
            if def[from..at] != self.source[from..at] {
                return false;
            }
            let name = u32::from_le_bytes(def[at..at + 4].try_into().expect("4 bytes"));
            let same = match &r.stored {
                None => name as usize == base + at + 4,
                Some(stored) => {
                    let n = name as usize + NAME_LINK;
                    name as usize != base + at + 4
                        && data.get(n..n + stored.len()) == Some(&stored[..])
                }
            };
            if !same {
                return false;
            }
            // Skip the reference, and an inline name's link (next offset, hash).
            from = at + 4 + if r.stored.is_none() { NAME_LINK } else { 0 };
        }
        def[from..] == self.source[from..]
    }

    /// The nodes of a range.
    pub(crate) fn nodes(&self, range: (u32, u32)) -> &[TNode] {
        &self.nodes[range.0 as usize..range.1 as usize]
    }

    /// The attributes of an element.
    pub(crate) fn attrs_of(&self, e: &TElem) -> &[TAttr] {
        &self.attrs[e.attrs.0 as usize..e.attrs.1 as usize]
    }
}

/// Bounds-checked little-endian reads over a chunk.
pub(crate) struct Reader<'d> {
    pub(crate) data: &'d [u8],
    pub(crate) pos: usize,
}

impl<'d> Reader<'d> {
    pub(crate) fn bytes(&mut self, n: usize) -> Option<&'d [u8]> {
        let end = self.pos.checked_add(n)?;
        let b = self.data.get(self.pos..end)?;
        self.pos = end;
        Some(b)
    }
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.bytes(1).map(|b| b[0])
    }
    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.bytes(2).map(|b| u16::from_le_bytes([b[0], b[1]]))
    }
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.bytes(4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// A name reference: its chunk offset, skipping the name when it is stored inline.
    fn name_ref(&mut self) -> Option<u32> {
        let offset = self.u32()?;
        if offset as usize == self.pos {
            self.bytes(NAME_LINK)?;
            let len = self.u16()? as usize;
            self.bytes(len * 2 + 2)?;
        }
        Some(offset)
    }
}

/// UTF-16LE code units up to the first NUL, decoded; `None` for unpaired surrogates.
pub(crate) fn decode_utf16(bytes: &[u8], out: &mut String) -> Option<()> {
    // ASCII units are narrowed into a block that is checked and appended once per
    // `BLOCK` bytes: sixteen units at a time, tested without early exits so that the
    // compiler vectorises the test, then unit by unit up to the first other unit.
    const BLOCK: usize = 256;
    let mut block = [0u8; BLOCK];
    let mut n = 0;
    let mut rest = bytes;
    while let Some((chunk, tail)) = rest.split_first_chunk::<32>() {
        let ascii = chunk.chunks_exact(2).fold(true, |ok, u| {
            ok & (u[1] == 0) & (u[0].wrapping_sub(1) < 0x7f)
        });
        if !ascii {
            break;
        }
        if n == BLOCK {
            out.push_str(std::str::from_utf8(&block).ok()?);
            n = 0;
        }
        for (b, u) in block[n..n + 16].iter_mut().zip(chunk.chunks_exact(2)) {
            *b = u[0];
        }
        n += 16;
        rest = tail;
    }
    // At most sixteen more ASCII units: a chunk stopped on another unit, or the tail.
    if n + 16 > BLOCK {
        out.push_str(std::str::from_utf8(&block[..n]).ok()?);
        n = 0;
    }
    let mut units = rest.chunks_exact(2);
    let mut other = None;
    for u in units.by_ref() {
        let [lo, hi] = [u[0], u[1]];
        if hi != 0 || lo >= 0x80 || lo == 0 {
            other = Some(u16::from_le_bytes([lo, hi]));
            break;
        }
        block[n] = lo;
        n += 1;
    }
    out.push_str(std::str::from_utf8(&block[..n]).ok()?);
    let Some(first) = other.filter(|&u| u != 0) else {
        return Some(());
    };
    let rest = units
        .map(|u| u16::from_le_bytes([u[0], u[1]]))
        .take_while(|&u| u != 0);
    for c in char::decode_utf16(std::iter::once(first).chain(rest)) {
        out.push(c.ok()?);
    }
    Some(())
}

/// The name at string-table offset `offset` of `data`, and its stored bytes (length,
/// characters, NUL).
fn read_name(data: &[u8], offset: u32) -> Option<(String, &[u8])> {
    let from = (offset as usize).checked_add(NAME_LINK)?;
    let mut r = Reader { data, pos: from };
    let len = r.u16()? as usize;
    let chars = r.bytes(len * 2)?;
    r.u16()?; // the NUL the crate reads too
    let mut s = String::with_capacity(len);
    decode_utf16(chars, &mut s)?;
    Some((s, &data[from..r.pos]))
}

/// Whether JSON would write `name` as a key unchanged (the crate does not escape names).
fn plain_key(name: &str) -> bool {
    !name.is_empty() && !name.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\')
}

/// An element whose start tag is being read.
struct Starting {
    name: u32,
    dependency: Option<u16>,
    attrs: Vec<(u32, Vec<TNode>)>,
    /// Whether an attribute is open to take value nodes.
    in_attr: bool,
}

/// An element whose content is being read.
struct Open {
    name: u32,
    dependency: Option<u16>,
    attrs: (u32, u32),
    children: Vec<TNode>,
}

/// Builds a [`Template`] from the definition's tokens.
struct Builder<'d, 'n> {
    data: &'d [u8],
    /// The body's range in `data`.
    body: std::ops::Range<usize>,
    names: &'n mut Names,
    t: Template,
    starting: Option<Starting>,
    stack: Vec<Open>,
    root: Option<u32>,
}

impl Builder<'_, '_> {
    /// Reads a name reference, and the name.
    fn name(&mut self, r: &mut Reader<'_>) -> Option<u32> {
        let at = r.pos;
        let offset = r.name_ref()?;
        let inline = offset as usize == at + 4;
        self.intern(offset, at, inline)
    }

    fn intern(&mut self, offset: u32, at: usize, inline: bool) -> Option<u32> {
        let (text, stored) = read_name(self.data, offset)?;
        if !plain_key(&text) {
            return None;
        }
        self.t.refs.push(NameRef {
            at: (at - self.body.start + HEADER - 4) as u32,
            stored: (!inline).then(|| stored.into()),
        });
        Some(self.names.intern(text))
    }

    /// A value or substitution node where the stream is: into the open attribute, or the
    /// open element's content. Outside both the crate fails.
    fn push_node(&mut self, node: TNode) -> Option<()> {
        if let Some(s) = &mut self.starting {
            if s.in_attr {
                s.attrs.last_mut()?.1.push(node);
            }
            return Some(());
        }
        self.stack.last_mut()?.children.push(node);
        Some(())
    }

    fn start_element(&mut self, r: &mut Reader<'_>, has_attrs: bool) -> Option<()> {
        if self.starting.is_some() {
            return None;
        }
        let dependency = r.u16()?;
        r.u32()?; // data size
        let name = self.name(r)?;
        if has_attrs {
            r.u32()?; // attribute list size
        }
        self.starting = Some(Starting {
            name,
            dependency: (dependency != 0xffff).then_some(dependency),
            attrs: Vec::new(),
            in_attr: false,
        });
        Some(())
    }

    fn attribute(&mut self, r: &mut Reader<'_>) -> Option<()> {
        let name = self.name(r)?;
        let s = self.starting.as_mut()?;
        s.attrs.push((name, Vec::new()));
        s.in_attr = true;
        Some(())
    }

    /// Ends a start tag: its attributes (those with value nodes) are stored.
    fn finish_start(&mut self) -> Option<(u32, Option<u16>, (u32, u32))> {
        let s = self.starting.take()?;
        let first = self.t.attrs.len() as u32;
        for (name, nodes) in s.attrs {
            if nodes.is_empty() {
                continue;
            }
            let n0 = self.t.nodes.len() as u32;
            self.t.nodes.extend(nodes);
            self.t.attrs.push(TAttr {
                name,
                nodes: (n0, self.t.nodes.len() as u32),
            });
        }
        Some((s.name, s.dependency, (first, self.t.attrs.len() as u32)))
    }

    fn close_start(&mut self) -> Option<()> {
        if self.stack.len() >= MAX_DEPTH {
            return None;
        }
        let (name, dependency, attrs) = self.finish_start()?;
        self.stack.push(Open {
            name,
            dependency,
            attrs,
            children: Vec::new(),
        });
        Some(())
    }

    fn close_empty(&mut self) -> Option<()> {
        let (name, dependency, attrs) = self.finish_start()?;
        let n = self.t.nodes.len() as u32;
        self.attach(TElem {
            name,
            dependency,
            attrs,
            children: (n, n),
        })
    }

    fn close_element(&mut self) -> Option<()> {
        let open = self.stack.pop()?;
        let n0 = self.t.nodes.len() as u32;
        self.t.nodes.extend(open.children);
        self.attach(TElem {
            name: open.name,
            dependency: open.dependency,
            attrs: open.attrs,
            children: (n0, self.t.nodes.len() as u32),
        })
    }

    /// Stores a finished element under its parent, or as the root (only one).
    fn attach(&mut self, e: TElem) -> Option<()> {
        if self.starting.is_some() {
            return None;
        }
        let id = self.t.elems.len() as u32;
        self.t.elems.push(e);
        match self.stack.last_mut() {
            Some(parent) => parent.children.push(TNode::Elem(id)),
            None if self.root.is_none() => self.root = Some(id),
            None => return None,
        }
        Some(())
    }

    /// A literal value: only UTF-16 strings are read.
    fn value(&mut self, r: &mut Reader<'_>) -> Option<()> {
        if r.u8()? != 0x01 {
            return None;
        }
        let len = r.u16()? as usize;
        let bytes = r.bytes(len * 2)?;
        let mut s = String::new();
        decode_utf16(bytes, &mut s)?;
        self.t.texts.push(s.into());
        let id = self.t.texts.len() as u32 - 1;
        self.push_node(TNode::Text(id))
    }

    fn substitution(&mut self, r: &mut Reader<'_>, optional: bool) -> Option<()> {
        let id = r.u16()?;
        let ty = r.u8()?;
        if !known_value_type(ty) {
            return None;
        }
        self.push_node(TNode::Sub { id, optional })
    }

    fn token(&mut self, r: &mut Reader<'_>, token: u8) -> Option<()> {
        match token {
            0x0f => r.bytes(3).map(drop),
            0x01 | 0x41 => self.start_element(r, token == 0x41),
            0x02 => self.close_start(),
            0x03 => self.close_empty(),
            0x04 => self.close_element(),
            0x05 | 0x45 => self.value(r),
            0x06 | 0x46 => self.attribute(r),
            0x0d | 0x0e => self.substitution(r, token == 0x0e),
            _ => None,
        }
    }
}

/// Whether the `evtx` crate knows value type `ty` (it fails on the others).
fn known_value_type(ty: u8) -> bool {
    matches!(ty, 0x00..=0x15 | 0x20 | 0x21 | 0x23 | 0x81..=0x95)
}

/// The template defined at `offset` of the chunk `data`, or `None` for a shape the typed
/// path does not reproduce.
pub(crate) fn parse(data: &[u8], offset: u32, names: &mut Names) -> Option<Template> {
    let mut r = Reader {
        data,
        pos: offset as usize,
    };
    r.bytes(HEADER - 4)?;
    let size = r.u32()? as usize;
    let start = offset as usize + HEADER;
    let end = start.checked_add(size)?;
    if end > data.len() {
        return None;
    }
    let mut b = Builder {
        data,
        body: start..end,
        names,
        t: Template::default(),
        starting: None,
        stack: Vec::new(),
        root: None,
    };
    while r.pos < end {
        match r.u8()? {
            0x00 => break,
            token => b.token(&mut r, token)?,
        }
    }
    // A token read past the body would make its bytes no key to the template.
    if b.starting.is_some() || !b.stack.is_empty() || r.pos > end {
        return None;
    }
    b.t.root = b.root?;
    b.t.source = data[offset as usize + 4..end].into();
    b.t.data_names_may_repeat = data_names_may_repeat(&b.t, b.names);
    Some(b.t)
}

/// Whether a container element of `t` has two `Data` children with the same literal
/// name, one named by a substitution, or a substitution child (which can be a `Data`).
fn data_names_may_repeat(t: &Template, names: &Names) -> bool {
    let mut seen: Vec<&[TNode]> = Vec::new();
    for e in &t.elems {
        if names.kind(e.name) != NameKind::Container {
            continue;
        }
        seen.clear();
        for node in t.nodes(e.children) {
            let c = match node {
                TNode::Sub { .. } => return true,
                TNode::Elem(c) => &t.elems[*c as usize],
                TNode::Text(_) => continue,
            };
            if names.kind(c.name) != NameKind::Data {
                continue;
            }
            let Some(name) = t
                .attrs_of(c)
                .iter()
                .find(|a| names.kind(a.name) == NameKind::Name)
            else {
                continue;
            };
            let nodes = t.nodes(name.nodes);
            if nodes.iter().any(|n| matches!(n, TNode::Sub { .. })) {
                return true;
            }
            let same = |a: &[TNode], b: &[TNode]| {
                a.len() == b.len()
                    && a.iter().zip(b).all(|(x, y)| match (x, y) {
                        (TNode::Text(x), TNode::Text(y)) => {
                            t.texts[*x as usize] == t.texts[*y as usize]
                        }
                        _ => false,
                    })
            };
            if seen.iter().any(|s| same(s, nodes)) {
                return true;
            }
            seen.push(nodes);
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::decode_utf16;

    /// The plain decoding: units up to the first NUL, `None` on an unpaired surrogate.
    fn reference(bytes: &[u8]) -> Option<String> {
        let units: Vec<u16> = bytes
            .chunks_exact(2)
            .map(|u| u16::from_le_bytes([u[0], u[1]]))
            .take_while(|&u| u != 0)
            .collect();
        String::from_utf16(&units).ok()
    }

    #[test]
    fn decodes_as_the_plain_way_at_every_length_and_position() {
        let specials: [&[u16]; 6] = [&[], &[0xe9], &[0x20ac], &[0xd83d, 0xde00], &[0], &[0xd800]];
        for len in (0..70usize).chain([239, 240, 255, 256, 257, 271, 272, 300, 530]) {
            for at in 0..=len {
                for sp in specials {
                    let mut units: Vec<u16> = (0..len).map(|i| 0x41 + (i % 26) as u16).collect();
                    units.splice(at..at, sp.iter().copied());
                    let mut bytes: Vec<u8> = units.iter().flat_map(|u| u.to_le_bytes()).collect();
                    for odd in [false, true] {
                        if odd {
                            bytes.push(0x41);
                        }
                        let mut out = String::from("x");
                        let got = decode_utf16(&bytes, &mut out).map(|()| out[1..].to_string());
                        assert_eq!(got, reference(&bytes), "len {len} at {at} {sp:?} odd {odd}");
                    }
                }
            }
        }
    }
}
