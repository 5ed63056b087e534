//! The typed record path: a record's [`RecordView`] filled from its template definition
//! and its typed substitution values, without rendering JSON and flattening it again.
//!
//! It produces exactly the leaves that flattening the `evtx` crate's JSON rendering
//! (with separated attributes, [`crate::evtx::settings`]) produces: the same paths
//! (`#text` folded into its element, `<Elem>_attributes`, `_N` suffixes on repeated
//! element names, `Data` keyed by its `Name` inside `EventData`/`UserData`, positional
//! `Data` as a list), values as the crate writes them, elements that depend on a null
//! value left out, optional empty substitutions dropped, elements repeated once per item
//! of a string array, instances nested in BinXML values spliced in, `xmlns` skipped.
//!
//! The values are read from the record's BinXML, as `EvtxRecord::template_instances`
//! reads them, and so are the instances nested in BinXML values (which that API hands
//! over as bytes): the record's own instance and the nested ones go one way.
//!
//! It is not a renderer and covers only what it can reproduce exactly: a record that is
//! one template instance, scalar and string-array values other than floats, templates
//! that `template::parse` reads, `Data` names that do not repeat once the crate
//! would number them. For anything else [`TypedState::prepare`] says no and the caller
//! renders the record to JSON as before, so results never change. Templates are parsed
//! once per [`TypedState`] (the scan keeps one per thread) and kept across chunks and
//! files; per record, nothing is allocated once the buffers are warm.

use super::template::{self, NameKind, Names, Reader, TNode, Template};
use super::value_text::format_raw;
use crate::flatten;
use crate::record::RecordView;
use evtx::EvtxRecord;
use scanner_rules::FxHashMap;
use scanner_rules::{FieldId, FieldTable};
use std::fmt::Write as _;

mod plan;
use plan::{Plans, Recorder, Shape};

const NONE: u32 = u32::MAX;
/// A BinXML value not yet read as the nested instance it holds.
const PENDING: u32 = u32::MAX - 1;
/// Deepest nesting of instances in values the typed path follows.
const MAX_NESTING: usize = 16;
/// What the typed records of one chunk may be estimated to render (bytes, nodes) before
/// the rest of the chunk takes the JSON path, so that typed records never stand in for
/// records whose rendering would have spent the crate's per-chunk budget. Real chunks
/// render at most a few hundred KB.
const CHUNK_OUTPUT: usize = 8 << 20;
const CHUNK_NODES: usize = 200_000;
/// Deepest element nesting a record may resolve to (the crate's JSON walker stops at 512).
const MAX_DEPTH: usize = 256;
/// Most elements, attributes and nodes a record may resolve to (the crate allows a
/// record 2^18 nodes).
const MAX_RECORD_NODES: usize = 1 << 15;
/// Names and templates kept across chunks before the cache starts afresh.
const MAX_NAMES: usize = 1 << 16;
const MAX_TEMPLATES: usize = 1 << 12;
/// Templates kept per GUID and size.
const KNOWN_PER_KEY: usize = 8;

/// One substitution value, formatted, or the instance it holds.
#[derive(Debug, Clone, Copy)]
struct Val {
    /// Range of [`Resolved::text`] (of the chunk while `nested` is [`PENDING`]).
    span: (u32, u32),
    /// NullType (or an empty BinXML value): leaves out elements that depend on it.
    null: bool,
    /// The nested instance (index into [`Resolved::insts`]), or [`NONE`].
    nested: u32,
    /// For a string array, its items (range of [`Resolved::items`]); `span` is then the
    /// items joined with commas, as the crate writes an array it does not expand.
    items: Option<(u32, u32)>,
}

/// A template instance: its template and its values.
#[derive(Debug, Clone, Copy)]
struct Inst {
    template: u32,
    /// Range of [`Resolved::vals`].
    vals: (u32, u32),
}

/// What a resolved node holds.
#[derive(Debug, Clone, Copy)]
enum Kind {
    /// A child element (index into [`Resolved::elems`]).
    Elem(u32),
    /// Text: a range of [`Resolved::text`].
    Str(u32, u32),
    /// A string array value (index into [`Resolved::vals`]).
    Arr(u32),
}

#[derive(Debug, Clone, Copy)]
struct RNode {
    kind: Kind,
    /// The next sibling of an element's content (attribute values are ranges).
    next: u32,
}

#[derive(Debug, Clone, Copy)]
struct RElem {
    name: u32,
    /// Range of [`Resolved::attrs`].
    attrs: (u32, u32),
    first: u32,
    has_elem: bool,
}

#[derive(Debug, Clone, Copy)]
struct RAttr {
    name: u32,
    /// Range of [`Resolved::nodes`].
    nodes: (u32, u32),
}

/// One record's template instances with their values in place: the tree the crate's
/// JSON walker would walk, as indices into reusable buffers.
#[derive(Debug, Default)]
struct Resolved {
    insts: Vec<Inst>,
    vals: Vec<Val>,
    text: String,
    elems: Vec<RElem>,
    attrs: Vec<RAttr>,
    nodes: Vec<RNode>,
    /// Text ranges of the items of string arrays.
    items: Vec<(u32, u32)>,
    /// Whether the crate numbers repeated `Data` names in this record: an instance's
    /// template may repeat them, or an array repeated an element.
    data_names: bool,
    /// Whether a string array of several items was read (elements may repeat).
    multi_arrays: bool,
    /// Scratch for the duplicate `Data` name check.
    names: Vec<String>,
}

/// The templates a worker has parsed, kept across chunks and files: a definition is
/// parsed only when none parsed before has its GUID and size, the same bytes but for
/// where names are, and the same names.
#[derive(Debug, Default)]
struct Templates {
    names: Names,
    list: Vec<Option<Template>>,
    /// The current chunk's templates by definition offset.
    by_offset: FxHashMap<u32, u32>,
    /// Templates parsed before, by the GUID and size their definitions start with.
    known: FxHashMap<[u8; 20], Vec<u32>>,
    /// The leaves of the shapes of their records seen so far.
    plans: Plans,
}

impl Templates {
    /// Forgets the current chunk's offsets, and everything once it holds too much.
    fn begin_chunk(&mut self) {
        self.by_offset.clear();
        if self.list.len() > MAX_TEMPLATES || self.names.len() > MAX_NAMES {
            *self = Templates::default();
        }
    }

    /// The index of the template defined at `def` in the chunk, parsed once.
    fn lookup(&mut self, data: &[u8], def: u32) -> Option<u32> {
        let i = match self.by_offset.get(&def) {
            Some(&i) => i,
            None => {
                let i = self
                    .known_at(data, def)
                    .unwrap_or_else(|| self.parse(data, def));
                self.by_offset.insert(def, i);
                i
            }
        };
        self.list[i as usize].is_some().then_some(i)
    }

    /// A template parsed before that is defined at `def` in this chunk too.
    fn known_at(&self, data: &[u8], def: u32) -> Option<u32> {
        let at = def as usize + 4;
        let key: [u8; 20] = data.get(at..at + 20)?.try_into().ok()?;
        let known = self.known.get(&key)?;
        known.iter().copied().find(|&i| {
            self.list[i as usize]
                .as_ref()
                .is_some_and(|t| t.is_defined_at(data, def))
        })
    }

    fn parse(&mut self, data: &[u8], def: u32) -> u32 {
        let t = template::parse(data, def, &mut self.names);
        let i = self.list.len() as u32;
        if let Some(t) = &t {
            let known = self.known.entry(t.key()).or_default();
            if known.len() >= KNOWN_PER_KEY {
                known.remove(0);
            }
            known.push(i);
        }
        self.list.push(t);
        i
    }

    fn get(&self, i: u32) -> &Template {
        self.list[i as usize].as_ref().expect("looked up")
    }
}

/// Per-worker state of the typed path: the templates it has parsed, the record being
/// filled and the buffers for its leaves.
#[derive(Debug, Default)]
pub struct TypedState {
    templates: Templates,
    /// Estimated (bytes, nodes) the chunk's typed records stand for.
    spent: (usize, usize),
    rec: Resolved,
    path: String,
    leaf: String,
    counts: Vec<(u32, u32)>,
    /// The root template of the record prepared, and its instance.
    root_template: u32,
    root: u32,
    /// The record prepared has a plan (it is not resolved)…
    planned: bool,
    /// …or may record one: its shape, and where its values' text ends.
    to_plan: Option<(Shape, u32)>,
    /// Per root template, the paths of the last record's leaves and the ids the field
    /// table gave them (records of one template mostly repeat them), valid while the
    /// table's version is `ids_version`.
    leaf_ids: Vec<Vec<LeafIds>>,
    ids_version: u64,
}

/// A leaf path and what the field table answers for it (`None`: not event data).
#[derive(Debug)]
struct LeafIds {
    path: Box<str>,
    ids: Option<(Option<FieldId>, Option<FieldId>)>,
}

/// Leaves per record whose ids are kept.
const MEMO_LEAVES: usize = 256;

impl TypedState {
    /// Starts a chunk (its definitions are found by offset afresh): call before its
    /// records.
    pub fn begin_chunk(&mut self) {
        self.templates.begin_chunk();
        self.spent = (0, 0);
    }

    /// Prepares `record` for [`Self::fill`]; `false` when the typed path does not cover
    /// it (render it to JSON instead).
    pub fn prepare(&mut self, record: &EvtxRecord<'_>) -> bool {
        !record.recovered
            && self.prepare_at(
                record.chunk.data,
                record.binxml_offset as usize,
                record.binxml_size as usize,
            )
    }

    /// [`Self::prepare`] for the live record whose BinXML is `chunk[offset..offset + size]`,
    /// read straight from the chunk without the crate building the record first.
    pub fn prepare_at(&mut self, chunk: &[u8], offset: usize, size: usize) -> bool {
        self.try_prepare(chunk, offset, size).is_some()
    }

    fn try_prepare(&mut self, data: &[u8], offset: usize, size: usize) -> Option<()> {
        self.rec.clear();
        self.planned = false;
        self.to_plan = None;
        self.root = self.read_instance(data, offset, size, 0)?;
        self.root_template = self.rec.insts[self.root as usize].template;
        let shape = Shape::of(&self.rec);
        let plan = shape.and_then(|s| self.templates.plans.find(self.root_template, s));
        let (bytes, nodes) = match plan {
            Some(plan) => {
                self.planned = true;
                plan.cost(&self.rec)
            }
            None => {
                self.resolve_to_walk(shape)?;
                self.rec.cost(&self.templates.names)
            }
        };
        let (bytes, nodes) = (self.spent.0 + bytes, self.spent.1 + nodes);
        if bytes > CHUNK_OUTPUT || nodes > CHUNK_NODES {
            return None;
        }
        self.spent = (bytes, nodes);
        Some(())
    }

    /// Resolves the record read (its values only) from its root instance, to be walked,
    /// and notes that a plan for its shape (`None`: no plan stands for it) is to be
    /// recorded as it is walked; `None` when the typed path does not cover it.
    fn resolve_to_walk(&mut self, shape: Option<Shape>) -> Option<()> {
        let values_end = self.rec.text.len() as u32;
        let t = self.templates.get(self.root_template);
        self.rec.resolve(&self.templates, self.root, t.root, 0)?;
        if self.rec.data_names && self.rec.data_names_repeat(&self.templates.names) {
            return None;
        }
        self.to_plan = shape.map(|s| (s, values_end));
        Some(())
    }

    /// Reads the template instance that the BinXML stream `data[start..start + len]` is
    /// (with its nested instances), as the crate does; `None` for any other stream, or
    /// values the typed path leaves to JSON.
    fn read_instance(
        &mut self,
        data: &[u8],
        start: usize,
        len: usize,
        depth: usize,
    ) -> Option<u32> {
        let end = start.checked_add(len)?;
        let stream = data.get(start..end)?;
        let at = match stream {
            [0x0f, _, _, _, 0x0c, _, ..] => 5,
            [0x0c, ..] => 1,
            _ => return None,
        };
        let mut r = Reader {
            data,
            pos: start + at,
        };
        r.bytes(5)?; // unknown byte, template id
        let def = r.u32()?;
        if r.pos == def as usize {
            r.bytes(20)?;
            let size = r.u32()? as usize;
            r.bytes(size)?;
        }
        let count = r.u32()? as usize;
        let descriptors = r.bytes(count.checked_mul(4)?)?;
        let template = self.templates.lookup(data, def)?;
        let v0 = self.rec.vals.len() as u32;
        for d in descriptors.chunks_exact(4) {
            let size = u16::from_le_bytes([d[0], d[1]]) as usize;
            let at = r.pos;
            let bytes = r.bytes(size);
            self.rec.push_value(d[2], bytes, at)?;
        }
        // After the instance, nothing or EOF; an instance that reads past the stream is
        // accepted, as the crate does.
        match data.get(r.pos..end) {
            None | Some([]) | Some([0x00, ..]) => {}
            Some(_) => return None,
        }
        let v1 = self.rec.vals.len() as u32;
        let id = self.rec.insts.len() as u32;
        self.rec.data_names |= self.templates.get(template).data_names_may_repeat;
        self.rec.insts.push(Inst {
            template,
            vals: (v0, v1),
        });
        for v in v0..v1 {
            let val = self.rec.vals[v as usize];
            if val.nested != PENDING {
                continue;
            }
            if depth + 1 >= MAX_NESTING {
                return None;
            }
            let (s, e) = (val.span.0 as usize, val.span.1 as usize);
            let nested = self.read_instance(data, s, e - s, depth + 1)?;
            let val = &mut self.rec.vals[v as usize];
            val.nested = nested;
            val.span = (0, 0);
        }
        Some(id)
    }

    /// Clears `view` and fills it with the leaves of the record [`Self::prepare`] accepted.
    pub fn fill(&mut self, table: &FieldTable, view: &mut RecordView) {
        view.clear(table.len());
        self.path.clear();
        if self.ids_version != table.version() {
            // Ids kept for another table, and the plans holding them, go.
            self.leaf_ids.clear();
            self.templates.plans.clear();
            self.ids_version = table.version();
        }
        if self.planned {
            let shape = Shape::of(&self.rec);
            let plan = shape.and_then(|s| self.templates.plans.find(self.root_template, s));
            if let Some(plan) = plan {
                plan.fill(&self.rec, &mut self.leaf, view);
                return;
            }
            // Its plan went with the field ids: resolve it and walk it.
            self.planned = false;
            if self.resolve_to_walk(shape).is_none() {
                return;
            }
        }
        if self.rec.elems.is_empty() {
            return;
        }
        let t = self.root_template as usize;
        if self.leaf_ids.len() <= t {
            self.leaf_ids.resize_with(t + 1, Vec::new);
        }
        let mut out = Emit {
            names: &self.templates.names,
            r: &self.rec,
            path: &mut self.path,
            leaf: &mut self.leaf,
            counts: &mut self.counts,
            table,
            view,
            memo: &mut self.leaf_ids[t],
            leaf_no: 0,
            recorder: self.to_plan.map(|(shape, end)| Recorder::new(shape, end)),
        };
        out.root();
        if let Some(recorder) = out.recorder.take() {
            let cost = self.rec.cost(&self.templates.names);
            recorder.finish(
                &self.rec,
                cost,
                self.root_template,
                &mut self.templates.plans,
            );
        }
        self.to_plan = None;
    }
}

impl Resolved {
    fn clear(&mut self) {
        self.insts.clear();
        self.vals.clear();
        self.text.clear();
        self.elems.clear();
        self.attrs.clear();
        self.nodes.clear();
        self.items.clear();
        self.data_names = false;
        self.multi_arrays = false;
    }

    /// Reads a value of type `ty` (its `size` bytes, `None` past the chunk, found at
    /// `at`): formatted, or pending as a nested instance.
    fn push_value(&mut self, ty: u8, bytes: Option<&[u8]>, at: usize) -> Option<()> {
        let bytes = bytes?;
        let val = if ty == 0x21 && !bytes.is_empty() {
            Val {
                span: (at as u32, (at + bytes.len()) as u32),
                null: false,
                nested: PENDING,
                items: None,
            }
        } else if ty == 0x81 {
            self.string_array(bytes)?
        } else {
            let start = self.text.len() as u32;
            let null = format_raw(ty, bytes, &mut self.text)?;
            Val {
                span: (start, self.text.len() as u32),
                null,
                nested: NONE,
                items: None,
            }
        };
        self.vals.push(val);
        Some(())
    }

    /// A string array: NUL-terminated UTF-16 strings back to back. One whose last
    /// string lacks its NUL (the crate reads on past it) is left to JSON.
    fn string_array(&mut self, bytes: &[u8]) -> Option<Val> {
        if bytes.len() % 2 != 0 || !(bytes.is_empty() || bytes.ends_with(&[0, 0])) {
            return None;
        }
        // The items joined with commas, each item's range noted.
        let (start, i0) = (self.text.len() as u32, self.items.len() as u32);
        let mut from = 0;
        for (i, u) in bytes.chunks_exact(2).enumerate() {
            if u == [0, 0] {
                if from > 0 {
                    self.text.push(',');
                }
                let item = self.text.len() as u32;
                template::decode_utf16(&bytes[from..i * 2], &mut self.text)?;
                self.items.push((item, self.text.len() as u32));
                from = i * 2 + 2;
            }
        }
        let i1 = self.items.len() as u32;
        self.multi_arrays |= i1 - i0 > 1;
        Some(Val {
            span: (start, self.text.len() as u32),
            null: false,
            nested: NONE,
            items: Some((i0, i1)),
        })
    }

    /// Whether template element `e` of an instance with values `vals` is left out: its
    /// dependency value is null.
    fn left_out(&self, t: &Template, vals: (u32, u32), e: u32) -> bool {
        let dep = t.elems[e as usize].dependency;
        dep.and_then(|d| self.value(vals, d))
            .is_some_and(|v| v.null)
    }

    fn value(&self, vals: (u32, u32), id: u16) -> Option<Val> {
        let i = vals.0 as usize + id as usize;
        (i < vals.1 as usize).then(|| self.vals[i])
    }

    /// A literal or scalar substitution node resolved: `Ok(None)` to leave it out,
    /// `Err(nested instance)` for a substitution that holds one.
    fn leaf_node(
        &mut self,
        t: &Template,
        vals: (u32, u32),
        node: TNode,
    ) -> Result<Option<Kind>, u32> {
        match node {
            TNode::Text(i) => {
                let start = self.text.len() as u32;
                self.text.push_str(&t.texts[i as usize]);
                Ok(Some(Kind::Str(start, self.text.len() as u32)))
            }
            TNode::Sub { id, optional } => {
                let Some(v) = self.value(vals, id) else {
                    return Ok(None);
                };
                if v.nested != NONE {
                    return Err(v.nested);
                }
                let (kind, empty) = match v.items {
                    Some(items) => (Kind::Arr(vals.0 + id as u32), items.0 == items.1),
                    None => (Kind::Str(v.span.0, v.span.1), v.span.0 == v.span.1),
                };
                Ok((!(optional && empty)).then_some(kind))
            }
            TNode::Elem(_) => Ok(None),
        }
    }

    /// Instantiates element `e` of instance `inst` and its subtree; `None` when the
    /// instance needs what the typed path does not reproduce.
    fn resolve(&mut self, ts: &Templates, inst: u32, e: u32, depth: usize) -> Option<u32> {
        if depth > MAX_DEPTH || self.size() > MAX_RECORD_NODES {
            return None;
        }
        let Inst { template, vals } = self.insts[inst as usize];
        let t = ts.get(template);
        let te = t.elems[e as usize];
        let a0 = self.attrs.len() as u32;
        for a in t.attrs_of(&te) {
            let n0 = self.nodes.len() as u32;
            for &node in t.nodes(a.nodes) {
                // An instance in an attribute: left to JSON.
                if let Some(kind) = self.leaf_node(t, vals, node).ok()? {
                    self.nodes.push(RNode { kind, next: NONE });
                }
            }
            let n1 = self.nodes.len() as u32;
            if n1 > n0 {
                self.attrs.push(RAttr {
                    name: a.name,
                    nodes: (n0, n1),
                });
            }
        }
        let id = self.elems.len() as u32;
        self.elems.push(RElem {
            name: te.name,
            attrs: (a0, self.attrs.len() as u32),
            first: NONE,
            has_elem: false,
        });
        let mut last = NONE;
        for &node in t.nodes(te.children) {
            let kind = match node {
                TNode::Elem(c) if self.left_out(t, vals, c) => continue,
                TNode::Elem(c) => {
                    let child = self.resolve(ts, inst, c, depth + 1)?;
                    if self.multi_arrays && self.first_array(child).is_some() {
                        for copy in self.expand(child)? {
                            self.push_child(id, &mut last, Kind::Elem(copy));
                        }
                        continue;
                    }
                    Kind::Elem(child)
                }
                leaf => match self.leaf_node(t, vals, leaf) {
                    Ok(Some(kind)) => kind,
                    Ok(None) => continue,
                    Err(nested) => {
                        let root = ts.get(self.insts[nested as usize].template).root;
                        Kind::Elem(self.resolve(ts, nested, root, depth + 1)?)
                    }
                },
            };
            self.push_child(id, &mut last, kind);
        }
        Some(id)
    }

    /// Appends `kind` to the content of element `e`, whose last node is `last`.
    fn push_child(&mut self, e: u32, last: &mut u32, kind: Kind) {
        let at = self.nodes.len() as u32;
        self.nodes.push(RNode { kind, next: NONE });
        match *last {
            NONE => self.elems[e as usize].first = at,
            l => self.nodes[l as usize].next = at,
        }
        *last = at;
        if let Kind::Elem(_) = kind {
            self.elems[e as usize].has_elem = true;
        }
    }

    /// Where the first array of more than one item is in element `e`: the index of a
    /// content node, else of an attribute value node (content first, as the crate looks).
    fn first_array(&self, e: u32) -> Option<u32> {
        let is_multi = |n: &RNode| match n.kind {
            Kind::Arr(v) => self.vals[v as usize].items.is_some_and(|(a, b)| b - a > 1),
            _ => false,
        };
        let mut at = self.elems[e as usize].first;
        while let Some(n) = self.nodes.get(at as usize) {
            if is_multi(n) {
                return Some(at);
            }
            at = n.next;
        }
        let (a0, a1) = self.elems[e as usize].attrs;
        self.attrs[a0 as usize..a1 as usize]
            .iter()
            .find_map(|a| (a.nodes.0..a.nodes.1).find(|&i| is_multi(&self.nodes[i as usize])))
    }

    /// Element `e` repeated once per item of its first array of several (that node
    /// replaced by the item, or left out for an empty one), and so on for the copies'
    /// next arrays: the crate's array substitution.
    fn expand(&mut self, e: u32) -> Option<Vec<u32>> {
        if self.size() > MAX_RECORD_NODES {
            return None;
        }
        let Some(at) = self.first_array(e) else {
            return Some(vec![e]);
        };
        self.data_names = true;
        let Kind::Arr(v) = self.nodes[at as usize].kind else {
            unreachable!("first_array finds arrays")
        };
        let (i0, i1) = self.vals[v as usize].items.expect("an array");
        let mut out = Vec::new();
        for i in i0..i1 {
            let (a, b) = self.items[i as usize];
            let item = (a != b).then_some(Kind::Str(a, b));
            let copy = self.copy_replacing(e, at, item);
            out.extend(self.expand(copy)?);
        }
        Some(out)
    }

    /// Nodes resolved so far.
    fn size(&self) -> usize {
        self.elems.len() + self.attrs.len() + self.nodes.len()
    }

    /// What rendering the record would cost the crate, about: (bytes, nodes).
    fn cost(&self, names: &Names) -> (usize, usize) {
        let text: usize = self
            .nodes
            .iter()
            .map(|n| self.node_text(n.kind).len())
            .sum();
        let elems: usize = self
            .elems
            .iter()
            .map(|e| names.get(e.name).text.len())
            .sum();
        let attrs: usize = self
            .attrs
            .iter()
            .map(|a| names.get(a.name).text.len())
            .sum();
        (
            6 * text + 2 * (elems + attrs) + 16 * self.size(),
            self.size(),
        )
    }

    /// A copy of element `e` (sharing its child elements) with node `at` replaced.
    fn copy_replacing(&mut self, e: u32, at: u32, item: Option<Kind>) -> u32 {
        let src = self.elems[e as usize];
        let a0 = self.attrs.len() as u32;
        for ai in src.attrs.0..src.attrs.1 {
            let attr = self.attrs[ai as usize];
            let n0 = self.nodes.len() as u32;
            for ni in attr.nodes.0..attr.nodes.1 {
                let kind = if ni == at {
                    item
                } else {
                    Some(self.nodes[ni as usize].kind)
                };
                if let Some(kind) = kind {
                    self.nodes.push(RNode { kind, next: NONE });
                }
            }
            let n1 = self.nodes.len() as u32;
            if n1 > n0 {
                self.attrs.push(RAttr {
                    name: attr.name,
                    nodes: (n0, n1),
                });
            }
        }
        let id = self.elems.len() as u32;
        self.elems.push(RElem {
            attrs: (a0, self.attrs.len() as u32),
            first: NONE,
            ..src
        });
        let (mut from, mut last) = (src.first, NONE);
        while let Some(&n) = self.nodes.get(from as usize) {
            let kind = if from == at { item } else { Some(n.kind) };
            if let Some(kind) = kind {
                self.push_child(id, &mut last, kind);
            }
            from = n.next;
        }
        id
    }

    /// Whether two `Data` children of a container have the same non-empty name text
    /// (the crate, numbering names, then numbers them or lists them: left to JSON).
    fn data_names_repeat(&mut self, names: &Names) -> bool {
        let containers = (0..self.elems.len() as u32)
            .filter(|&e| names.kind(self.elems[e as usize].name) == NameKind::Container);
        let mut seen = std::mem::take(&mut self.names);
        let repeat = containers
            .into_iter()
            .any(|e| self.container_names_repeat(names, e, &mut seen));
        self.names = seen;
        repeat
    }

    fn container_names_repeat(&self, names: &Names, e: u32, seen: &mut Vec<String>) -> bool {
        seen.clear();
        for c in self.children(e) {
            let Kind::Elem(c) = c else { continue };
            let Some(nodes) = self.data_name(names, c) else {
                continue;
            };
            if !self.has_text(self.range(nodes)) {
                continue;
            }
            let mut s = String::new();
            self.concat(self.range(nodes), &mut s);
            if seen.contains(&s) {
                return true;
            }
            seen.push(s);
        }
        false
    }

    /// The `Name` attribute's nodes of `Data` element `c` (the first attribute so named).
    fn data_name(&self, names: &Names, c: u32) -> Option<(u32, u32)> {
        let ce = &self.elems[c as usize];
        if names.kind(ce.name) != NameKind::Data {
            return None;
        }
        self.attrs[ce.attrs.0 as usize..ce.attrs.1 as usize]
            .iter()
            .find(|a| names.kind(a.name) == NameKind::Name)
            .map(|a| a.nodes)
    }

    fn range(&self, r: (u32, u32)) -> impl Iterator<Item = Kind> + Clone + '_ {
        self.nodes[r.0 as usize..r.1 as usize]
            .iter()
            .map(|n| n.kind)
    }

    /// The content of element `e`, in order.
    fn children(&self, e: u32) -> Children<'_> {
        Children {
            nodes: &self.nodes,
            at: self.elems[e as usize].first,
        }
    }

    fn node_text(&self, k: Kind) -> &str {
        let (a, b) = match k {
            Kind::Str(a, b) => (a, b),
            Kind::Arr(v) => self.vals[v as usize].span,
            Kind::Elem(_) => return "",
        };
        &self.text[a as usize..b as usize]
    }

    /// Whether a node is content to the crate: text that is not empty, or an array with
    /// an item (even an empty one).
    fn is_content(&self, k: Kind) -> bool {
        match k {
            Kind::Str(a, b) => a != b,
            Kind::Arr(v) => self.vals[v as usize].items.is_some_and(|(a, b)| a != b),
            Kind::Elem(_) => false,
        }
    }

    /// The text of `nodes` (elements skipped), appended to `out`.
    fn concat(&self, nodes: impl Iterator<Item = Kind>, out: &mut String) {
        for k in nodes {
            out.push_str(self.node_text(k));
        }
    }

    /// Whether `nodes` hold any content.
    fn has_text(&self, mut nodes: impl Iterator<Item = Kind>) -> bool {
        nodes.any(|k| self.is_content(k))
    }
}

/// The content nodes of an element.
#[derive(Clone)]
struct Children<'r> {
    nodes: &'r [RNode],
    at: u32,
}

impl Iterator for Children<'_> {
    type Item = Kind;
    fn next(&mut self) -> Option<Kind> {
        let n = self.nodes.get(self.at as usize)?;
        self.at = n.next;
        Some(n.kind)
    }
}

/// Writes the leaves of a resolved record into a view, as flattening its JSON would.
struct Emit<'a> {
    names: &'a Names,
    r: &'a Resolved,
    path: &'a mut String,
    leaf: &'a mut String,
    /// Element names seen in the objects being written, for `_N` suffixes.
    counts: &'a mut Vec<(u32, u32)>,
    table: &'a FieldTable,
    view: &'a mut RecordView,
    /// The ids of the root template's leaves, by position.
    memo: &'a mut Vec<LeafIds>,
    /// Leaves written so far.
    leaf_no: usize,
    /// Records the walk as a plan for records of the same shape.
    recorder: Option<Recorder>,
}

impl Emit<'_> {
    /// `{"<Root>_attributes":{…},"<Root>":…}`.
    fn root(&mut self) {
        // The root is resolved first.
        let name = self.r.elems[0].name;
        self.separate_attrs(0, name, 0);
        let base = self.key(name, 0, "");
        self.value(0, false);
        self.path.truncate(base);
    }

    /// Appends a key to the path as flattening does; returns the length to restore.
    fn key(&mut self, name: u32, suffix: u32, tail: &str) -> usize {
        let base = self.path.len();
        if base > 0 {
            self.path.push('.');
        }
        let dot = self.path.len();
        self.path.push_str(&self.names.get(name).text);
        if suffix > 0 {
            let _ = write!(self.path, "_{suffix}");
        }
        self.path.push_str(tail);
        flatten::fold_key(self.path, base, dot);
        base
    }

    /// Like [`Self::key`] for a key given as text (a `Data` name).
    fn text_key(&mut self, key: &str) -> usize {
        let base = self.path.len();
        if base > 0 {
            self.path.push('.');
        }
        let dot = self.path.len();
        self.path.push_str(key);
        flatten::fold_key(self.path, base, dot);
        base
    }

    /// One leaf: the text of `nodes`.
    fn leaf_of(&mut self, nodes: impl Iterator<Item = Kind> + Clone) {
        self.leaf.clear();
        self.r.concat(nodes.clone(), self.leaf);
        let i = self.leaf_no;
        self.leaf_no += 1;
        let ids = match self.memo.get(i) {
            Some(m) if *m.path == **self.path => m.ids,
            _ => {
                let ids =
                    (!flatten::is_namespace(self.path)).then(|| self.table.lookup_leaf(self.path));
                let m = LeafIds {
                    path: self.path.as_str().into(),
                    ids,
                };
                if i < self.memo.len() {
                    self.memo[i] = m;
                } else if i < MEMO_LEAVES {
                    self.memo.push(m);
                }
                ids
            }
        };
        if let Some(ids) = ids {
            self.view.push_linked(self.path, self.leaf, ids);
            if let Some(rec) = &mut self.recorder {
                rec.leaf(self.r, self.path, ids, nodes);
            }
        }
    }

    /// `"<Elem>[_N]_attributes":{…}` when an attribute has text; whether it wrote it.
    fn separate_attrs(&mut self, e: u32, name: u32, suffix: u32) -> bool {
        let r = self.r;
        let re = r.elems[e as usize];
        let attrs = &r.attrs[re.attrs.0 as usize..re.attrs.1 as usize];
        if !attrs.iter().any(|a| r.has_text(r.range(a.nodes))) {
            return false;
        }
        let base = self.key(name, suffix, "_attributes");
        for a in attrs {
            if !r.has_text(r.range(a.nodes)) {
                continue;
            }
            let b = self.key(a.name, 0, "");
            self.leaf_of(r.range(a.nodes));
            self.path.truncate(b);
        }
        self.path.truncate(base);
        true
    }

    /// An element's value without its attributes: its text, or an object of its children.
    fn value(&mut self, e: u32, container: bool) {
        let r = self.r;
        if !r.elems[e as usize].has_elem {
            self.leaf_of(r.children(e));
        } else {
            self.body(e, container);
        }
    }

    /// Whether any `Data` child of `e` has a `Name` with text (the named form).
    fn named_data(&self, e: u32) -> bool {
        let r = self.r;
        r.children(e).any(|k| match k {
            Kind::Elem(c) => r
                .data_name(self.names, c)
                .is_some_and(|n| r.has_text(r.range(n))),
            Kind::Str(..) | Kind::Arr(_) => false,
        })
    }

    fn is_data(&self, c: u32) -> bool {
        self.names.kind(self.r.elems[c as usize].name) == NameKind::Data
    }

    /// An element with child elements: its text (`#text`) then its children as members.
    fn body(&mut self, e: u32, in_container: bool) {
        let r = self.r;
        let text_nodes = r.children(e).filter(|k| !matches!(k, Kind::Elem(_)));
        if r.has_text(text_nodes.clone()) {
            self.leaf_of(text_nodes);
        }
        let named = in_container && self.named_data(e);
        let mut positional_done = false;
        let counts_base = self.counts.len();
        for k in r.children(e) {
            let Kind::Elem(c) = k else { continue };
            if in_container && self.is_data(c) {
                if named {
                    self.named_member(c);
                } else if !positional_done {
                    positional_done = true;
                    self.positional_data(e);
                }
                continue;
            }
            self.member(c, counts_base);
        }
        self.counts.truncate(counts_base);
    }

    /// A named `Data` element: its value under its name.
    fn named_member(&mut self, c: u32) {
        let r = self.r;
        let Some(nodes) = r.data_name(self.names, c) else {
            return;
        };
        if let Some(rec) = &mut self.recorder {
            rec.key(r, r.range(nodes));
        }
        let mut key = std::mem::take(self.leaf);
        key.clear();
        r.concat(r.range(nodes), &mut key);
        let base = r.has_text(r.range(nodes)).then(|| self.text_key(&key));
        *self.leaf = key;
        if let Some(base) = base {
            self.value(c, false);
            self.path.truncate(base);
        }
    }

    /// The `Data` children of `e` without names: their values under `Data`.
    fn positional_data(&mut self, e: u32) {
        let base = self.text_key("Data");
        let r = self.r;
        for k in r.children(e) {
            if let Kind::Elem(c) = k {
                if self.is_data(c) {
                    self.value(c, false);
                }
            }
        }
        self.path.truncate(base);
    }

    /// A child element as a member: its attributes, then its value unless it has only
    /// attributes.
    fn member(&mut self, c: u32, counts_base: usize) {
        let r = self.r;
        let name = r.elems[c as usize].name;
        let suffix = self.next_suffix(name, counts_base);
        let wrote_attrs = self.separate_attrs(c, name, suffix);
        let has_value = r.elems[c as usize].has_elem || r.has_text(r.children(c));
        if has_value || !wrote_attrs {
            let container = self.names.kind(name) == NameKind::Container;
            let base = self.key(name, suffix, "");
            self.value(c, container);
            self.path.truncate(base);
        }
    }

    /// 0 the first time `name` is a member of the current object, then 1, 2, …
    fn next_suffix(&mut self, name: u32, base: usize) -> u32 {
        let seen = &mut self.counts[base..];
        if let Some(c) = seen.iter_mut().find(|c| c.0 == name) {
            c.1 += 1;
            return c.1 - 1;
        }
        self.counts.push((name, 1));
        0
    }
}
