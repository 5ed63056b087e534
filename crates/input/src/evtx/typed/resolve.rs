//! A record resolved: its template instances with their values read and put in place,
//! the tree the `evtx` crate's JSON walker would walk (elements, attributes, text and
//! string arrays), held as indices into buffers reused from record to record.
//!
//! Resolving is where the typed path declines what it cannot reproduce exactly: an
//! instance in an attribute, a string array without its last NUL, trees deeper or larger
//! than the crate renders.

use super::cache::Templates;
use crate::evtx::template::{self, NameKind, Names, TNode, Template};
use crate::evtx::value_text::format_raw;

/// No index: the end of a sibling list, or a value without a nested instance.
pub(super) const NONE: u32 = u32::MAX;
/// A BinXML value not yet read as the nested instance it holds.
pub(super) const PENDING: u32 = u32::MAX - 1;
/// Deepest element nesting a record may resolve to (the crate's JSON walker stops at 512).
const MAX_DEPTH: usize = 256;
/// Most elements, attributes and nodes a record may resolve to (the crate allows a
/// record 2^18 nodes).
const MAX_RECORD_NODES: usize = 1 << 15;

/// One substitution value, formatted, or the instance it holds.
#[derive(Debug, Clone, Copy)]
pub(super) struct Val {
    /// Range of [`Resolved::text`] (of the chunk while `nested` is [`PENDING`]).
    pub(super) span: (u32, u32),
    /// NullType (or an empty BinXML value): leaves out elements that depend on it.
    pub(super) null: bool,
    /// The nested instance (index into [`Resolved::insts`]), or [`NONE`].
    pub(super) nested: u32,
    /// For a string array, its items (range of [`Resolved::items`]); `span` is then the
    /// items joined with commas, as the crate writes an array it does not expand.
    pub(super) items: Option<(u32, u32)>,
}

/// A template instance: its template and its values.
#[derive(Debug, Clone, Copy)]
pub(super) struct Inst {
    pub(super) template: u32,
    /// Range of [`Resolved::vals`].
    pub(super) vals: (u32, u32),
}

/// What a resolved node holds.
#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    /// A child element (index into [`Resolved::elems`]).
    Elem(u32),
    /// Text: a range of [`Resolved::text`].
    Str(u32, u32),
    /// A string array value (index into [`Resolved::vals`]).
    Arr(u32),
}

#[derive(Debug, Clone, Copy)]
pub(super) struct RNode {
    pub(super) kind: Kind,
    /// The next sibling of an element's content (attribute values are ranges).
    pub(super) next: u32,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct RElem {
    pub(super) name: u32,
    /// Range of [`Resolved::attrs`].
    pub(super) attrs: (u32, u32),
    pub(super) first: u32,
    pub(super) has_elem: bool,
    /// The template gives the element no content node at all, not even a substitution
    /// (one whose value is empty is still content to Hayabusa's crate).
    pub(super) no_content: bool,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct RAttr {
    pub(super) name: u32,
    /// Range of [`Resolved::nodes`].
    pub(super) nodes: (u32, u32),
}

/// One record's template instances with their values in place: the tree the crate's
/// JSON walker would walk, as indices into reusable buffers.
#[derive(Debug, Default)]
pub(super) struct Resolved {
    pub(super) insts: Vec<Inst>,
    pub(super) vals: Vec<Val>,
    pub(super) text: String,
    pub(super) elems: Vec<RElem>,
    pub(super) attrs: Vec<RAttr>,
    pub(super) nodes: Vec<RNode>,
    /// Text ranges of the items of string arrays.
    items: Vec<(u32, u32)>,
    /// Whether the crate numbers repeated `Data` names in this record: an instance's
    /// template may repeat them, or an array repeated an element.
    pub(super) data_names: bool,
    /// Whether a string array of several items was read (elements may repeat).
    multi_arrays: bool,
    /// Scratch for the duplicate `Data` name check.
    names: Vec<String>,
}

impl Resolved {
    pub(super) fn clear(&mut self) {
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
    #[inline]
    pub(super) fn push_value(&mut self, ty: u8, bytes: Option<&[u8]>, at: usize) -> Option<()> {
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

    /// A value whose text the typed path does not reproduce, standing for it when only
    /// the record's structure is wanted: present and not empty.
    pub(super) fn push_opaque(&mut self) {
        let start = self.text.len() as u32;
        self.text.push('?');
        self.vals.push(Val {
            span: (start, self.text.len() as u32),
            null: false,
            nested: NONE,
            items: None,
        });
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
    pub(super) fn resolve(
        &mut self,
        ts: &Templates,
        inst: u32,
        e: u32,
        depth: usize,
    ) -> Option<u32> {
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
            self.end_attr(a.name, n0);
        }
        let id = self.elems.len() as u32;
        self.elems.push(RElem {
            name: te.name,
            attrs: (a0, self.attrs.len() as u32),
            first: NONE,
            has_elem: false,
            no_content: t.nodes(te.children).is_empty(),
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

    /// Ends attribute `name`, whose value nodes start at `n0`: kept if it has any.
    #[inline]
    fn end_attr(&mut self, name: u32, n0: u32) {
        let n1 = self.nodes.len() as u32;
        if n1 > n0 {
            self.attrs.push(RAttr {
                name,
                nodes: (n0, n1),
            });
        }
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
    pub(super) fn cost(&self, names: &Names) -> (usize, usize) {
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
            self.end_attr(attr.name, n0);
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
    pub(super) fn data_names_repeat(&mut self, names: &Names) -> bool {
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
    #[inline]
    pub(super) fn data_name(&self, names: &Names, c: u32) -> Option<(u32, u32)> {
        let ce = &self.elems[c as usize];
        if names.kind(ce.name) != NameKind::Data {
            return None;
        }
        self.attrs[ce.attrs.0 as usize..ce.attrs.1 as usize]
            .iter()
            .find(|a| names.kind(a.name) == NameKind::Name)
            .map(|a| a.nodes)
    }

    #[inline]
    pub(super) fn range(&self, r: (u32, u32)) -> impl Iterator<Item = Kind> + Clone + '_ {
        self.nodes[r.0 as usize..r.1 as usize]
            .iter()
            .map(|n| n.kind)
    }

    /// The content of element `e`, in order.
    #[inline]
    pub(super) fn children(&self, e: u32) -> Children<'_> {
        Children {
            nodes: &self.nodes,
            at: self.elems[e as usize].first,
        }
    }

    #[inline]
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
    #[inline]
    fn is_content(&self, k: Kind) -> bool {
        match k {
            Kind::Str(a, b) => a != b,
            Kind::Arr(v) => self.vals[v as usize].items.is_some_and(|(a, b)| a != b),
            Kind::Elem(_) => false,
        }
    }

    /// The text of `nodes` (elements skipped), appended to `out`.
    pub(super) fn concat(&self, nodes: impl Iterator<Item = Kind>, out: &mut String) {
        for k in nodes {
            out.push_str(self.node_text(k));
        }
    }

    /// Whether `nodes` hold any content.
    pub(super) fn has_text(&self, mut nodes: impl Iterator<Item = Kind>) -> bool {
        nodes.any(|k| self.is_content(k))
    }
}

/// The content nodes of an element.
#[derive(Clone)]
pub(super) struct Children<'r> {
    nodes: &'r [RNode],
    at: u32,
}

impl Iterator for Children<'_> {
    type Item = Kind;
    #[inline]
    fn next(&mut self) -> Option<Kind> {
        let n = self.nodes.get(self.at as usize)?;
        self.at = n.next;
        Some(n.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::super::TypedState;
    use super::*;
    use crate::evtx::test_log::{event, first_chunk, log, named};
    use scanner_evtx_writer::{Element, Value};

    /// UTF-16LE of `s`.
    fn utf16(s: &str) -> Vec<u8> {
        s.encode_utf16().flat_map(u16::to_le_bytes).collect()
    }

    #[test]
    fn values_are_formatted_null_or_pending_as_nested_instances() {
        let mut r = Resolved::default();
        r.push_value(0x01, Some(&utf16("alice")), 0)
            .expect("a string");
        r.push_value(0x00, Some(&[]), 0).expect("a null");
        r.push_value(0x21, Some(&[0x0f, 1, 1, 0]), 100)
            .expect("BinXML");
        let [s, n, x] = r.vals[..] else {
            panic!("three values")
        };
        assert_eq!(&r.text[s.span.0 as usize..s.span.1 as usize], "alice");
        assert!(!s.null && s.nested == NONE);
        assert!(n.null && n.span.0 == n.span.1);
        assert_eq!(
            (x.nested, x.span),
            (PENDING, (100, 104)),
            "read later, from the chunk"
        );
        assert_eq!(r.push_value(0x01, None, 0), None, "a value past the chunk");
    }

    #[test]
    fn a_string_array_keeps_its_items_and_its_comma_joined_text() {
        let mut r = Resolved::default();
        let bytes = [utf16("a\0"), utf16("\0"), utf16("bc\0")].concat();
        r.push_value(0x81, Some(&bytes), 0).expect("an array");
        let v = r.vals[0];
        assert_eq!(&r.text[v.span.0 as usize..v.span.1 as usize], "a,,bc");
        let (i0, i1) = v.items.expect("items");
        let items: Vec<&str> = r.items[i0 as usize..i1 as usize]
            .iter()
            .map(|&(a, b)| &r.text[a as usize..b as usize])
            .collect();
        assert_eq!(items, ["a", "", "bc"]);
        assert!(r.multi_arrays);
        // The last string without its NUL: the crate reads on past it, so JSON it is.
        assert_eq!(r.push_value(0x81, Some(&utf16("a\0b")), 0), None);
    }

    /// The record of `events[0]` prepared by a fresh state.
    fn prepared(data: Element) -> Option<TypedState> {
        let (bytes, records) = first_chunk(&log(&[event(1, data)]));
        let mut s = TypedState::default();
        s.begin_chunk();
        let at = records[0];
        s.prepare_at(&bytes, at.offset, at.size).then_some(s)
    }

    /// The names of the child elements of element `e`, and of their text.
    fn children(s: &TypedState, e: u32) -> Vec<(String, String)> {
        let r = &s.rec;
        r.children(e)
            .filter_map(|k| match k {
                Kind::Elem(c) => {
                    let name = s
                        .templates
                        .names
                        .get(r.elems[c as usize].name)
                        .text
                        .to_string();
                    let mut text = String::new();
                    r.concat(r.children(c), &mut text);
                    Some((name, text))
                }
                Kind::Str(..) | Kind::Arr(_) => None,
            })
            .collect()
    }

    #[test]
    fn a_record_resolves_to_the_tree_of_its_template_with_its_values() {
        let data = Element::new("EventData").child(named("User", "alice"));
        let s = prepared(data).expect("covered");
        let top: Vec<String> = children(&s, 0).into_iter().map(|c| c.0).collect();
        assert_eq!(top, ["System", "EventData"]);
        let data = s.rec.children(0).nth(1);
        let Some(Kind::Elem(data)) = data else {
            panic!("EventData")
        };
        assert_eq!(children(&s, data), [("Data".into(), "alice".into())]);
    }

    #[test]
    fn an_element_holding_an_array_is_repeated_once_per_item() {
        let items = Value::Array(vec![Value::String("a".into()), Value::String("b".into())]);
        let data = Element::new("EventData").child(Element::new("Data").text(items));
        let s = prepared(data).expect("covered");
        let Some(Kind::Elem(data)) = s.rec.children(0).nth(1) else {
            panic!("EventData")
        };
        let expect = [("Data".into(), "a".into()), ("Data".into(), "b".into())];
        assert_eq!(children(&s, data), expect);
        assert!(s.rec.data_names, "repeated elements may repeat names");
    }

    #[test]
    fn data_names_that_repeat_leave_the_record_to_json() {
        let twice = Element::new("EventData")
            .child(named("User", "alice"))
            .child(named("User", "bob"));
        assert!(prepared(twice).is_none());
        let distinct = Element::new("EventData")
            .child(named("User", "alice"))
            .child(named("Target", "bob"));
        assert!(prepared(distinct).is_some());
    }
}
