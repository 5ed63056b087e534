//! Writing a resolved record's leaves into a [`RecordView`] as flattening its JSON
//! rendering would: the same paths (`<Elem>_attributes`, `_N` suffixes, `Data` keyed by
//! its `Name`), the same values, in the same order; optionally recording the walk as a
//! plan for later records of the same shape.

use super::plan::Recorder;
use super::resolve::{Kind, Resolved};
use crate::evtx::template::{NameKind, Names};
use crate::flatten;
use crate::record::RecordView;
use scanner_rules::{FieldId, FieldTable};
use std::fmt::Write as _;

/// A leaf path and what the field table answers for it (`None`: not event data).
#[derive(Debug)]
pub(super) struct LeafIds {
    path: Box<str>,
    ids: Option<(Option<FieldId>, Option<FieldId>)>,
}

/// Leaves per record whose ids are kept.
const MEMO_LEAVES: usize = 256;

/// Writes the leaves of a resolved record into a view, as flattening its JSON would.
pub(super) struct Emit<'a> {
    pub(super) names: &'a Names,
    pub(super) r: &'a Resolved,
    pub(super) path: &'a mut String,
    pub(super) leaf: &'a mut String,
    /// Element names seen in the objects being written, for `_N` suffixes.
    pub(super) counts: &'a mut Vec<(u32, u32)>,
    pub(super) table: &'a FieldTable,
    pub(super) view: &'a mut RecordView,
    /// The ids of the root template's leaves, by position.
    pub(super) memo: &'a mut Vec<LeafIds>,
    /// Leaves written so far.
    pub(super) leaf_no: usize,
    /// Records the walk as a plan for records of the same shape.
    pub(super) recorder: Option<Recorder>,
}

impl Emit<'_> {
    /// `{"<Root>_attributes":{…},"<Root>":…}`.
    pub(super) fn root(&mut self) {
        // The root is resolved first.
        let name = self.r.elems[0].name;
        self.separate_attrs(0, name, 0);
        let base = self.key(name, 0, "");
        self.value(0, false, false);
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

    /// One leaf: the text of `nodes`, or an element with no content (`empty`: see
    /// [`RecordView::push_empty_element`]).
    fn leaf_of(&mut self, nodes: impl Iterator<Item = Kind> + Clone, empty: bool) {
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
            if empty {
                self.view.push_empty_linked(self.path, ids);
            } else {
                self.view.push_linked(self.path, self.leaf, ids);
            }
            if let Some(rec) = &mut self.recorder {
                rec.leaf(self.r, self.path, ids, nodes, empty);
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
            self.leaf_of(r.range(a.nodes), false);
            self.path.truncate(b);
        }
        self.path.truncate(base);
        true
    }

    /// An element's value without its attributes: its text, or an object of its children.
    /// An element other than `Data` (`data`) that its template gives no content at all,
    /// not even a substitution with an empty value, is one with no content (Hayabusa's
    /// `null`; see [`RecordView::push_empty_element`]). A container without text is no
    /// field at all, whether its template gives it no content or an empty value (the
    /// crate renders both `null`).
    fn value(&mut self, e: u32, container: bool, data: bool) {
        let r = self.r;
        let re = r.elems[e as usize];
        if re.has_elem {
            self.body(e, container);
        } else if flatten::is_container(self.path) {
            if r.has_text(r.children(e)) {
                self.leaf_of(r.children(e), false);
            }
        } else {
            self.leaf_of(r.children(e), !data && re.no_content);
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
            self.leaf_of(text_nodes, false);
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
            self.value(c, false, true);
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
                    self.value(c, false, true);
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
            self.value(c, container, false);
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

#[cfg(test)]
mod tests {
    use super::super::TypedState;
    use crate::evtx::test_log::{event, first_chunk, log, named};
    use crate::flatten::Flattener;
    use crate::record::RecordView;
    use scanner_evtx_writer::Element;
    use scanner_rules::FieldTable;

    /// The leaves the typed path writes for the record of `data`, checked against
    /// flattening the crate's JSON rendering of it.
    fn leaves(data: Element) -> Vec<String> {
        let log = log(&[event(7, data)]);
        let (bytes, records) = first_chunk(&log);
        let table = FieldTable::new();
        let mut s = TypedState::default();
        s.begin_chunk();
        let at = records[0];
        assert!(s.prepare_at(&bytes, at.offset, at.size), "covered");
        let mut typed = RecordView::default();
        s.fill(&table, &mut typed);
        let settings = std::sync::Arc::new(crate::evtx::settings());
        let mut parser = evtx::EvtxParser::from_buffer(log).expect("a log");
        let mut data = parser.chunks().next().expect("a chunk").expect("read");
        let mut chunk = data.parse(settings).expect("parsed");
        let json = chunk.iter().next().expect("a record").expect("read");
        let json = json.into_json().expect("rendered").data;
        let mut flat = RecordView::default();
        Flattener::default()
            .fill(&json, &table, &mut flat)
            .expect("flattened");
        // The JSON rendering writes `null` alike for an element with no content and
        // an empty value: flattening lists both as empty values.
        let empty: Vec<&str> = typed.empty_elements().collect();
        assert!(
            typed.leaves().eq(flat
                .leaves()
                .filter(|(p, v)| !(v.is_empty() && empty.contains(p)))),
            "as flattening writes them"
        );
        for e in &empty {
            assert!(flat.leaves().any(|(p, v)| p == *e && v.is_empty()), "{e}");
        }
        let empty = typed.empty_elements().map(|p| format!("{p} (no content)"));
        typed
            .leaves()
            .map(|(p, v)| format!("{p}={v}"))
            .chain(empty)
            .collect()
    }

    #[test]
    fn elements_with_no_content_are_kept_apart_and_an_empty_container_is_no_field() {
        let data = Element::new("EventData")
            .child(Element::new("Param1").text("x"))
            .child(Element::new("Param2"))
            .child(Element::new("Param3").text(""))
            .child(named("Blank", ""));
        // Param3 is a substitution whose value is empty: an empty value (Hayabusa's
        // crate renders it `""`, as System 104's `BackupPath`), not an element with no
        // content like Param2, although the crate here renders both `null`.
        assert_eq!(
            leaves(data)[3..],
            [
                "Event.EventData.Param1=x",
                "Event.EventData.Param3=",
                "Event.EventData.Blank=",
                "Event.EventData.Param2 (no content)",
            ]
        );
        assert_eq!(leaves(Element::new("EventData")).len(), 3);
        // An empty substitution in a container: the crate renders it `null`, no field.
        assert_eq!(leaves(Element::new("EventData").text("")).len(), 3);
        assert_eq!(
            leaves(Element::new("EventData").text("x"))[3..],
            ["Event.EventData=x"]
        );
        let data = Element::new("UserData").child(Element::new("Log").child(Element::new("P")));
        assert_eq!(leaves(data)[3..], ["Event.UserData.Log.P (no content)"]);
    }

    #[test]
    fn named_data_is_keyed_by_its_name_and_attributes_get_their_own_object() {
        let data = Element::new("EventData")
            .child(named("User", "alice"))
            .child(named("Logon", "3"));
        assert_eq!(
            leaves(data),
            [
                "Event.System.Provider_attributes.Name=P",
                "Event.System.EventID=7",
                "Event.System.Channel=Security",
                "Event.EventData.User=alice",
                "Event.EventData.Logon=3",
            ]
        );
    }

    #[test]
    fn data_without_names_is_a_list_under_data() {
        let data = Element::new("EventData")
            .child(Element::new("Data").text("a"))
            .child(Element::new("Data").text("b"));
        let got = leaves(data);
        assert_eq!(
            got[3..],
            ["Event.EventData.Data=a", "Event.EventData.Data=b"]
        );
    }

    #[test]
    fn repeated_element_names_are_numbered_outside_event_data() {
        let data = Element::new("UserData").child(
            Element::new("Log")
                .child(Element::new("Item").text("x"))
                .child(Element::new("Item").text("y")),
        );
        let got = leaves(data);
        assert_eq!(
            got[3..],
            ["Event.UserData.Log.Item=x", "Event.UserData.Log.Item_1=y"]
        );
    }
}
