//! Rendered JSON records into a [`RecordView`], streamed: no `serde_json::Value` is
//! built, keys are appended to one reusable path buffer, and strings without escapes
//! are read in place.

use crate::json_tree::Json;
use crate::record::RecordView;
use scanner_rules::FieldTable;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use std::fmt::{self, Write as _};

/// Per-thread buffers for flattening.
#[derive(Debug, Default)]
pub struct Flattener {
    pub(crate) path: String,
    pub(crate) num: String,
}

/// Adds leaf `value` at `path` to `view`, unless it is a namespace declaration.
pub(crate) fn leaf(view: &mut RecordView, table: &FieldTable, path: &str, value: &str) {
    if !is_namespace(path) {
        view.push(table, path, value);
    }
}

/// Adds an element with no content at `path` to `view` (see
/// [`RecordView::push_empty_element`]), unless it is a container or a namespace.
pub(crate) fn empty_element(view: &mut RecordView, table: &FieldTable, path: &str) {
    if !is_container(path) && !is_namespace(path) {
        view.push_empty_element(table, path);
    }
}

/// Whether `path` is the event or one of its containers: an empty one is no field.
pub(crate) fn is_container(path: &str) -> bool {
    matches!(
        path,
        "Event" | "Event.System" | "Event.EventData" | "Event.UserData"
    )
}

/// Whether a leaf at `path` is a namespace declaration: not event data.
pub(crate) fn is_namespace(path: &str) -> bool {
    path.ends_with("xmlns")
}

/// Folds the key just appended to `path` (at `dot`; `base` is the length before its dot):
/// `#text` holds the element's own value and adds no path segment; `#attributes` (the
/// crate's default JSON shape) becomes `<Elem>_attributes`, the shape of separated
/// attributes, so both read the same.
pub(crate) fn fold_key(path: &mut String, base: usize, dot: usize) {
    match &path[dot..] {
        "#text" => path.truncate(base),
        "#attributes" => {
            path.truncate(base);
            path.push_str("_attributes");
        }
        _ => {}
    }
}

struct Node<'a> {
    view: &'a mut RecordView,
    table: &'a FieldTable,
    path: &'a mut String,
    num: &'a mut String,
    /// What a `null` is.
    nulls: Nulls<'a>,
}

/// What a `null` in a rendered EVTX record is: the evtx crate renders both an element
/// with no content and one whose value is empty as `null`.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Nulls<'a> {
    /// An empty value (JSON input, or a record whose template is not known).
    Empty,
    /// An element with no content (a record stored without a template).
    NoContent,
    /// An element with no content at these paths (those its template gives no content,
    /// found by the typed path's reading of the template), an empty value elsewhere.
    NoContentAt(&'a [Box<str>]),
}

impl Nulls<'_> {
    fn no_content(&self, path: &str) -> bool {
        match self {
            Nulls::Empty => false,
            Nulls::NoContent => true,
            Nulls::NoContentAt(paths) => paths.iter().any(|p| **p == *path),
        }
    }
}

/// An object's key: borrowed from the JSON text, copied only when it holds escapes.
#[derive(serde::Deserialize)]
struct Key<'a>(#[serde(borrow)] std::borrow::Cow<'a, str>);

impl Node<'_> {
    fn leaf(&mut self, v: &str) {
        leaf(self.view, self.table, self.path, v);
    }

    /// A number, as its decimal text, written in the node's reused buffer.
    fn number(mut self, v: impl std::fmt::Display) {
        self.num.clear();
        let _ = write!(self.num, "{v}");
        let n = std::mem::take(self.num);
        self.leaf(&n);
        *self.num = n;
    }

    fn reborrow(&mut self) -> Node<'_> {
        Node {
            view: self.view,
            table: self.table,
            path: self.path,
            num: self.num,
            nulls: self.nulls,
        }
    }
}

impl Node<'_> {
    /// Adds the leaves of `v` as the visitor below adds those of the same JSON text.
    fn walk(mut self, v: &Json<'_>) {
        match v {
            Json::Null => {
                let _ = Visitor::visit_unit::<serde::de::value::Error>(self);
            }
            Json::Bool(b) => self.leaf(if *b { "true" } else { "false" }),
            Json::U64(n) => self.number(n),
            Json::I64(n) => self.number(n),
            Json::F64(n) => self.number(n),
            Json::Str(s) => self.leaf(s),
            Json::Array(items) => {
                for x in items {
                    self.reborrow().walk(x);
                }
            }
            Json::Object(o) => {
                for (k, x) in o.iter() {
                    let base = self.path.len();
                    if !self.path.is_empty() {
                        self.path.push('.');
                    }
                    let dot = self.path.len();
                    self.path.push_str(k);
                    fold_key(self.path, base, dot);
                    self.reborrow().walk(x);
                    self.path.truncate(base);
                }
            }
        }
    }
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON event")
    }
    fn visit_str<E>(mut self, v: &str) -> Result<(), E> {
        self.leaf(v);
        Ok(())
    }
    fn visit_bool<E>(mut self, v: bool) -> Result<(), E> {
        self.leaf(if v { "true" } else { "false" });
        Ok(())
    }
    fn visit_u64<E>(self, v: u64) -> Result<(), E> {
        self.number(v);
        Ok(())
    }
    fn visit_i64<E>(self, v: i64) -> Result<(), E> {
        self.number(v);
        Ok(())
    }
    fn visit_f64<E>(self, v: f64) -> Result<(), E> {
        self.number(v);
        Ok(())
    }
    /// The evtx crate renders as `null` both an element with no content and one whose
    /// value is empty (`<BackupPath>%4</BackupPath>` with an empty string), which
    /// Hayabusa's version of it tells apart (absent, and `""`). Rules see either as an
    /// empty value (Sigma's `''`). Only in a record stored without a template is it
    /// known to be the former everywhere, and in a record whose template the typed path
    /// reads, at the elements the template gives no content: there Details and the field
    /// lists leave it out; elsewhere it is listed as an empty value. A container is no
    /// field at all.
    fn visit_unit<E>(mut self) -> Result<(), E> {
        if self.nulls.no_content(self.path) {
            empty_element(self.view, self.table, self.path);
        } else if !is_container(self.path) {
            self.leaf("");
        }
        Ok(())
    }
    fn visit_none<E>(self) -> Result<(), E> {
        Ok(())
    }
    fn visit_seq<A: SeqAccess<'de>>(mut self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(self.reborrow())?.is_some() {}
        Ok(())
    }
    fn visit_map<A: MapAccess<'de>>(mut self, mut map: A) -> Result<(), A::Error> {
        loop {
            let base = self.path.len();
            if !self.path.is_empty() {
                self.path.push('.');
            }
            let dot = self.path.len();
            let Some(Key(key)) = map.next_key::<Key<'de>>()? else {
                self.path.truncate(base);
                return Ok(());
            };
            self.path.push_str(&key);
            fold_key(self.path, base, dot);
            map.next_value_seed(self.reborrow())?;
            self.path.truncate(base);
        }
    }
}

impl Flattener {
    /// Clears `view` and fills it from one JSON event (`{"Event":{…}}`).
    pub fn fill(
        &mut self,
        json: &str,
        table: &FieldTable,
        view: &mut RecordView,
    ) -> Result<(), serde_json::Error> {
        self.fill_rendered(json, Nulls::Empty, table, view)
    }

    /// [`Self::fill`] for the JSON rendering of an EVTX record, whose `null`s are what
    /// `nulls` says.
    pub(crate) fn fill_rendered(
        &mut self,
        json: &str,
        nulls: Nulls<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) -> Result<(), serde_json::Error> {
        view.clear(table.len());
        let mut de = serde_json::Deserializer::from_str(json);
        self.node("", nulls, table, view).deserialize(&mut de)?;
        de.end()
    }

    /// The visitor of a tree whose leaves get paths below `prefix`.
    fn node<'a>(
        &'a mut self,
        prefix: &str,
        nulls: Nulls<'a>,
        table: &'a FieldTable,
        view: &'a mut RecordView,
    ) -> Node<'a> {
        self.path.clear();
        self.path.push_str(prefix);
        Node {
            view,
            table,
            path: &mut self.path,
            num: &mut self.num,
            nulls,
        }
    }

    /// Adds `value` (a leaf, or a tree whose leaves get paths below it) at `prefix`,
    /// without clearing `view`: how the non-EVTX shapes place each of their fields.
    pub(crate) fn push_tree(
        &mut self,
        prefix: &str,
        value: &Json<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) {
        self.node(prefix, Nulls::Empty, table, view).walk(value);
    }

    /// [`Self::push_tree`] at the path already in the flattener's path buffer.
    pub(crate) fn push_tree_here(
        &mut self,
        value: &Json<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) {
        Node {
            view,
            table,
            path: &mut self.path,
            num: &mut self.num,
            nulls: Nulls::Empty,
        }
        .walk(value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_rules::Event;

    #[test]
    fn flattens_paths_arrays_and_numbers() {
        let mut t = FieldTable::new();
        let data = t.intern("Data");
        let prov = t.intern("Provider_Name");
        let user = t.intern("SubjectUserName");
        let json = r##"{"Event":{"#attributes":{"xmlns":"http://x"},"System":{"Provider_attributes":{"Name":"Microsoft-Windows-Eventlog"},"EventID":1102,"Channel":"Security"},"EventData":{"Data":{"#text":["a","b\"c"]}},"UserData":{"LogFileCleared":{"SubjectUserName":"Bob","N":null}}}}"##;
        let mut v = RecordView::default();
        Flattener::default().fill(json, &t, &mut v).unwrap();
        let d: Vec<_> = v.values(data).map(|x| x.raw).collect();
        assert_eq!(d, vec!["a", "b\"c"]);
        assert_eq!(v.first(prov), Some("Microsoft-Windows-Eventlog"));
        assert_eq!(v.first(scanner_rules::EVENT_ID), Some("1102"));
        assert_eq!(v.first_lower(scanner_rules::CHANNEL), Some("security"));
        assert_eq!(v.first(user), Some("Bob"));
        assert!(v
            .leaves()
            .all(|(p, _)| !p.contains("xmlns") && !p.contains("#text")));
        assert!(Flattener::default()
            .fill("{\"Event\":", &t, &mut v)
            .is_err());
    }
}
