//! A record's event-data fields as `name: value` entries, for the AllFieldInfo column
//! and for ExtraFieldInfo (the entries Details does not show).
//!
//! The list is built into buffers a worker keeps, once per record that matched however
//! many rules it matched: no allocation per entry.

use crate::items::ItemsBuf;
use crate::render::data_mapping::RecordMap;
use crate::render::details::{collapse_into, legacy_form_in, squeeze_spaces_into, Shown};
use scanner_input::RecordView;
use scanner_rules::{FxHashMap, FxHasher};
use std::hash::Hasher;

type Span = (u32, u32);

/// Writes a field's name as it is shown (`search`'s short names).
type NameWriter<'n> = &'n dyn Fn(&str, &mut String);

#[derive(Debug, Clone, Copy)]
struct Entry {
    key: Span,
    /// The value with runs of spaces squeezed, tabs and line breaks kept.
    exact: Span,
    /// The value as displayed: whitespace collapsed.
    value: Span,
    /// Position in the record: ties keep record order.
    order: u32,
}

/// The event-data leaves of a record as distinct `name: value` entries (System
/// excluded), sorted as the text `name: value` sorts (so `Unused2` comes before
/// `Unused`). The key is the leaf's name; the unnamed `Data` elements are numbered
/// `Data[1]`, `Data[2]`, … even when there is one, and so are the values of any other
/// repeated name. Values are shown in their legacy typed form, with the data mapping
/// applied and control characters as spaces.
#[derive(Debug, Default)]
pub struct FieldList {
    /// The current record's entries.
    out: Listing,
    /// Keys and order by sequence of leaf paths (records of one template share one).
    shapes: FxHashMap<u64, Shape>,
    /// The same, for views whose paths have an id (`RecordView::paths_id`), by id.
    shapes_by_id: FxHashMap<u64, Shape>,
    /// Entries show their values with tabs and line breaks kept (`exact`), not
    /// collapsed.
    pub(crate) keep_line_breaks: bool,
}

/// A record's entries and the buffers they are built in.
#[derive(Debug, Default)]
struct Listing {
    text: String,
    entries: Vec<Entry>,
    sorted: Vec<Entry>,
    scratch: String,
    /// A value's legacy form, while it is listed.
    legacy: String,
    /// No key holds a `:` (a `name: value` item's label is then its key).
    colon_free: bool,
}

/// Shapes kept before the cache starts afresh.
const MAX_SHAPES: usize = 1024;

/// What a sequence of event-data leaf paths decides: each leaf's key and, when the keys
/// alone decide it, the order of the entries.
#[derive(Debug)]
struct Shape {
    /// The paths, end to end, and where each ends.
    paths: String,
    path_ends: Vec<u32>,
    /// Each leaf's key, end to end, and where each ends.
    keys: String,
    key_ends: Vec<u32>,
    /// Leaf indices in output order, when the keys are distinct and hold no `:` (then
    /// `key: value` texts differ within their keys, whatever the values, and no entry is
    /// a duplicate); otherwise `None` and the entries are sorted by their text.
    order: Option<Vec<u32>>,
    /// For a shape kept by paths id: the view position ([`RecordView::leaves_from`])
    /// from which every leaf listed is an event-data leaf, when there is one; views of
    /// that id push the same leaves, so their values are read from there.
    from: Option<usize>,
    /// No key holds a `:`.
    colon_free: bool,
}

fn event_data((p, _): &(&str, &str)) -> bool {
    !p.starts_with("Event.System.") && p.starts_with("Event.")
}

/// `view`'s event-data leaves, (path, value), in record order.
fn event_leaves(view: &RecordView) -> impl Iterator<Item = (&str, &str)> {
    view.leaves().filter(event_data)
}

fn nth<'t>(text: &'t str, ends: &[u32], i: usize) -> &'t str {
    let start = if i == 0 { 0 } else { ends[i - 1] as usize };
    &text[start..ends[i] as usize]
}

impl Shape {
    fn new<'a>(paths: impl Iterator<Item = &'a str>) -> Shape {
        let paths: Vec<&str> = paths.collect();
        let mut shape = Shape {
            paths: String::new(),
            path_ends: Vec::with_capacity(paths.len()),
            keys: String::new(),
            key_ends: Vec::with_capacity(paths.len()),
            order: None,
            from: None,
            colon_free: true,
        };
        // How often each path occurs, then a running count: linear in the leaves,
        // where counting the earlier and later equal paths at each leaf was quadratic.
        let mut seen: FxHashMap<&str, (u32, u32)> = FxHashMap::default();
        for &p in &paths {
            seen.entry(p).or_default().0 += 1;
        }
        for &p in &paths {
            shape.paths.push_str(p);
            shape.path_ends.push(shape.paths.len() as u32);
            let name = p.rsplit('.').next().unwrap_or(p);
            let (total, count) = seen.get_mut(p).map_or((1, 1), |(total, n)| {
                *n += 1;
                (*total, *n)
            });
            let repeated = p == "Event.EventData.Data" || total > 1;
            shape.keys.push_str(name);
            if repeated {
                use std::fmt::Write;
                let _ = write!(shape.keys, "[{count}]");
            }
            shape.key_ends.push(shape.keys.len() as u32);
        }
        let key = |i: u32| nth(&shape.keys, &shape.key_ends, i as usize);
        let mut order: Vec<u32> = (0..paths.len() as u32).collect();
        order.sort_unstable_by(|&a, &b| sort_order(key(a), "", key(b), "").then(a.cmp(&b)));
        shape.colon_free = !shape.keys.contains(':');
        let decided = shape.colon_free && order.windows(2).all(|w| key(w[0]) != key(w[1]));
        shape.order = decided.then_some(order);
        shape
    }

    /// The shape of a view whose paths have an id, with the position its event-data
    /// leaves start from when they come last.
    fn of_view(view: &RecordView) -> Shape {
        let mut shape = Shape::new(event_leaves(view).map(|(p, _)| p));
        let first = view
            .leaves_from(0)
            .find(|&(_, p, v)| event_data(&(p, v)))
            .map(|(i, ..)| i);
        shape.from = first.filter(|&i| view.leaves_from(i).all(|(_, p, v)| event_data(&(p, v))));
        shape
    }

    fn holds<'a>(&self, mut paths: impl Iterator<Item = &'a str>) -> bool {
        (0..self.path_ends.len())
            .all(|i| paths.next() == Some(nth(&self.paths, &self.path_ends, i)))
            && paths.next().is_none()
    }
}

fn at(text: &str, s: Span) -> &str {
    &text[s.0 as usize..s.1 as usize]
}

/// The order of the texts `ka: ea` and `kb: eb`, without building them.
fn sort_order(ka: &str, ea: &str, kb: &str, eb: &str) -> std::cmp::Ordering {
    let (ka, kb) = (ka.as_bytes(), kb.as_bytes());
    let n = ka.len().min(kb.len());
    match ka[..n].cmp(&kb[..n]) {
        std::cmp::Ordering::Equal if ka.len() == kb.len() => ea.cmp(eb),
        std::cmp::Ordering::Equal => {
            // One key is a prefix of the other: the shorter continues with ": ".
            let rest_a = ka[n..].iter().chain(b": ").chain(ea.as_bytes());
            let rest_b = kb[n..].iter().chain(b": ").chain(eb.as_bytes());
            rest_a.cmp(rest_b)
        }
        unequal => unequal,
    }
}

impl Listing {
    /// Lists `view`'s fields, of shape `shape`, into the listing the caller cleared.
    fn list(&mut self, shape: &Shape, view: &RecordView, map: &RecordMap) {
        let Listing {
            text,
            entries,
            sorted,
            scratch,
            legacy,
            colon_free,
        } = self;
        *colon_free = shape.colon_free;
        let values: &mut dyn Iterator<Item = &str> = match shape.from {
            Some(from) => &mut view.values_from(from),
            None => &mut event_leaves(view).map(|(_, v)| v),
        };
        for (i, v) in values.enumerate() {
            let k0 = text.len();
            text.push_str(nth(&shape.keys, &shape.key_ends, i));
            let key = (k0 as u32, text.len() as u32);
            let typed = legacy_form_in(v, legacy);
            let mapped = map.apply(at(text, key), typed);
            let e0 = text.len();
            let plain = squeeze_spaces_into(&mapped, text);
            let exact = (e0 as u32, text.len() as u32);
            scratch.clear();
            // A value copied as it was has no whitespace to collapse.
            let value = if !plain && collapse_into(at(text, exact), scratch) {
                let v0 = text.len();
                text.push_str(scratch);
                (v0 as u32, text.len() as u32)
            } else {
                exact
            };
            entries.push(Entry {
                key,
                exact,
                value,
                order: i as u32,
            });
        }
        if let Some(order) = &shape.order {
            sorted.clear();
            sorted.extend(order.iter().map(|&i| entries[i as usize]));
            std::mem::swap(entries, sorted);
            return;
        }
        let text = &*text;
        // Unstable sort (no buffer to allocate), stable in effect: ties go by position.
        entries.sort_unstable_by(|a, b| {
            sort_order(
                at(text, a.key),
                at(text, a.exact),
                at(text, b.key),
                at(text, b.exact),
            )
            .then(a.order.cmp(&b.order))
        });
        entries.dedup_by(|a, b| {
            at(text, a.key) == at(text, b.key) && at(text, a.exact) == at(text, b.exact)
        });
    }
}

impl FieldList {
    /// Builds the list of `view`'s fields, replacing the previous record's.
    pub fn fill(&mut self, view: &RecordView, map: &RecordMap) {
        self.out.text.clear();
        self.out.entries.clear();
        let shape = match view.paths_id() {
            Some(id) => {
                if self.shapes_by_id.len() >= MAX_SHAPES && !self.shapes_by_id.contains_key(&id) {
                    self.shapes_by_id.clear();
                }
                self.shapes_by_id
                    .entry(id)
                    .or_insert_with(|| Shape::of_view(view))
            }
            None => {
                let sig = self.shape_of(view);
                match self.shapes.get(&sig) {
                    Some(shape) => shape,
                    None => return,
                }
            }
        };
        self.out.list(shape, view, map);
    }

    /// The key of the shape of `view`'s leaf paths in `shapes` (made if new), found by
    /// hashing them.
    fn shape_of(&mut self, view: &RecordView) -> u64 {
        let mut h = FxHasher::default();
        for (p, _) in event_leaves(view) {
            h.write(p.as_bytes());
            h.write_u8(0xff);
        }
        let sig = h.finish();
        if self
            .shapes
            .get(&sig)
            .is_none_or(|s| !s.holds(event_leaves(view).map(|(p, _)| p)))
        {
            if self.shapes.len() >= MAX_SHAPES {
                self.shapes.clear();
            }
            self.shapes
                .insert(sig, Shape::new(event_leaves(view).map(|(p, _)| p)));
        }
        sig
    }

    /// Appends every entry to `out` as a `name: value` item (none when there is none).
    pub fn write_all(&self, out: &mut ItemsBuf) {
        self.write_where(out, |_| true, None);
    }

    /// As [`Self::write_all`], each name written by `name` (which appends it to the
    /// output as it should be shown; the order stays that of the recorded names).
    pub fn write_all_named(&self, out: &mut ItemsBuf, name: impl Fn(&str, &mut String)) {
        self.write_where(out, |_| true, Some(&name));
    }

    /// ExtraFieldInfo: appends the entries whose value is not among the values Details
    /// shows. The test is by value, whatever the field, and on the value with its spaces
    /// squeezed but its tabs and line breaks kept: a value with doubled spaces is left
    /// out when Details shows it, a multi-line value stays even when Details shows it
    /// on one line.
    pub fn write_extra(&self, shown: &Shown, out: &mut ItemsBuf) {
        self.write_where(out, |exact| !shown.contains(exact), None);
    }

    /// Appends the entries `keep` keeps, each name as it is or as `name` writes it.
    fn write_where(
        &self,
        out: &mut ItemsBuf,
        keep: impl Fn(&str) -> bool,
        name: Option<NameWriter<'_>>,
    ) {
        let Listing {
            text,
            entries,
            colon_free,
            ..
        } = &self.out;
        for e in entries {
            if !keep(at(text, e.exact)) {
                continue;
            }
            let o = out.text_mut();
            let start = o.len();
            let key = at(text, e.key);
            match name {
                Some(name) => name(key, o),
                None => o.push_str(key),
            }
            // The label ends at the name's first colon, if it has one, else at the
            // colon after it.
            let named = &o.as_bytes()[start..];
            let label = if *colon_free && name.is_none() {
                named.len()
            } else {
                named.iter().position(|&c| c == b':').unwrap_or(named.len())
            };
            o.push(':');
            let v = at(
                text,
                if self.keep_line_breaks {
                    e.exact
                } else {
                    e.value
                },
            );
            if !v.is_empty() {
                o.push(' ');
                o.push_str(v);
            }
            out.close_labelled(label);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The items joined as the CSV timeline joins them by default (`-` for none).
    fn joined(items: &ItemsBuf) -> String {
        if items.is_empty() {
            return "-".to_string();
        }
        items.to_items().join(" ¦ ")
    }
    use crate::render::data_mapping::DataMappings;
    use crate::render::details::DetailsTemplate;
    use scanner_input::Flattener;
    use scanner_rules::DataMapping;
    use scanner_rules::FieldTable;

    fn view(t: &FieldTable, json: &str) -> RecordView {
        let mut v = RecordView::default();
        Flattener::default().fill(json, t, &mut v).unwrap();
        v
    }

    fn all(v: &RecordView, map: &RecordMap) -> String {
        let mut l = FieldList::default();
        l.fill(v, map);
        let mut out = ItemsBuf::default();
        l.write_all(&mut out);
        joined(&out)
    }

    fn extra(v: &RecordView, map: &RecordMap, shown: &Shown) -> String {
        let mut l = FieldList::default();
        l.fill(v, map);
        let mut out = ItemsBuf::default();
        l.write_extra(shown, &mut out);
        joined(&out)
    }

    fn shown_of(values: &[&str]) -> Shown {
        let mut s = Shown::default();
        for v in values {
            s.push_shown(v);
        }
        s
    }

    #[test]
    fn numbers_unnamed_data_and_repeated_names() {
        let t = FieldTable::new();
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"Data":"only","Name":"n","Empty":""},"UserData":{"X":{"Item":["b","a"]}}}}"#,
        );
        assert_eq!(
            all(&v, &RecordMap::default()),
            "Data[1]: only ¦ Empty: ¦ Item[1]: b ¦ Item[2]: a ¦ Name: n"
        );
    }

    #[test]
    fn views_with_a_paths_id_list_by_their_own_paths() {
        let t = FieldTable::new();
        let a = r#"{"Event":{"System":{"EventID":1},"EventData":{"B":"2","A":"1","Data":"x"}}}"#;
        let b = r#"{"Event":{"System":{"EventID":1},"EventData":{"B":"3","A":"4","Data":"y"}}}"#;
        let other = r#"{"Event":{"System":{"EventID":2},"EventData":{"Z":"9"}}}"#;
        // One list kept across records, as a worker keeps it: a view with a known id
        // reuses the shape of that id, and a new id or none gets its own.
        let mut l = FieldList::default();
        let mut listed = |json: &str, id: u64| {
            let mut v = view(&t, json);
            v.set_paths_id(id);
            l.fill(&v, &RecordMap::default());
            let mut out = ItemsBuf::default();
            l.write_all(&mut out);
            joined(&out)
        };
        assert_eq!(listed(a, 7), "A: 1 ¦ B: 2 ¦ Data[1]: x");
        assert_eq!(listed(b, 7), "A: 4 ¦ B: 3 ¦ Data[1]: y");
        assert_eq!(listed(other, 8), "Z: 9");
        assert_eq!(listed(other, 0), "Z: 9");
        assert_eq!(listed(a, 0), "A: 1 ¦ B: 2 ¦ Data[1]: x");
        // Event data before System: its values are not the view's last leaves.
        let c = r#"{"Event":{"EventData":{"A":"5"},"System":{"EventID":3}}}"#;
        let d = r#"{"Event":{"EventData":{"A":"6"},"System":{"EventID":4}}}"#;
        assert_eq!(listed(c, 10), "A: 5");
        assert_eq!(listed(d, 10), "A: 6");
        let mut v = view(&t, a);
        v.set_paths_id(9);
        v.clear(t.len());
        assert_eq!(v.paths_id(), None, "clear forgets the id");
    }

    #[test]
    fn sorts_as_text_and_drops_duplicates() {
        let t = FieldTable::new();
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"Unused":"","Unused2":"","AdditionalInfo":"-","AdditionalInfo2":""},"UserData":{"A":{"K":"v"},"B":{"K":"v"}}}}"#,
        );
        assert_eq!(
            all(&v, &RecordMap::default()),
            "AdditionalInfo2: ¦ AdditionalInfo: - ¦ K: v ¦ Unused2: ¦ Unused:"
        );
    }

    #[test]
    fn control_characters_become_spaces_and_no_field_is_a_dash() {
        let t = FieldTable::new();
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"Cmd":"a\u009d b","P":"\u0094\u0002-"}}}"#,
        );
        assert_eq!(all(&v, &RecordMap::default()), "Cmd: a b ¦ P: -");
        let none = view(&t, r#"{"Event":{"System":{"EventID":1}}}"#);
        assert_eq!(all(&none, &RecordMap::default()), "-");
    }

    #[test]
    fn extra_drops_every_entry_whose_value_details_shows() {
        let t = FieldTable::new();
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"A":"SYSTEM","B":"SYSTEM","C":"","D":"x"}}}"#,
        );
        let m = RecordMap::default();
        assert_eq!(extra(&v, &m, &shown_of(&["SYSTEM"])), "C: ¦ D: x");
        assert_eq!(extra(&v, &m, &shown_of(&["SYSTEM", ""])), "D: x");
        assert_eq!(extra(&v, &m, &shown_of(&["SYSTEM,", "", "x"])), "-");
    }

    #[test]
    fn data_mapping_applies_by_field_name() {
        let m = DataMapping::parse(
            "Channel: Security\nEventID: 4688\nRewriteFieldData:\n  TokenElevationType:\n    - '%%1936': 'FULL_TOKEN'\nHexToDecimal:\n  - 'NewProcessId'\n  - 'ProcessId'\n",
        )
        .unwrap();
        let fm = DataMappings::new(&[m]);
        let mut t = FieldTable::new();
        let tpl =
            DetailsTemplate::compile("PID: %NewProcessId% ¦ Tok: %TokenElevationType%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":4688,"Channel":"Security"},"EventData":{"NewProcessId":"0x7e4","ProcessId":"0x1e8","TokenElevationType":"%%1936","SubjectLogonId":"0x3e7"}}}"#,
        );
        let map = fm.for_record("security", "4688", "");
        let mut shown = Shown::default();
        let mut out = ItemsBuf::default();
        tpl.render(&v, data, &map, &mut out, &mut shown);
        assert_eq!(joined(&out), "PID: 2020 ¦ Tok: FULL_TOKEN");
        assert_eq!(
            extra(&v, &map, &shown),
            "ProcessId: 488 ¦ SubjectLogonId: 0x3e7"
        );
        out.clear();
        tpl.render(&v, data, &RecordMap::default(), &mut out, &mut shown);
        assert_eq!(joined(&out), "PID: 0x7e4 ¦ Tok: %%1936");
    }

    #[test]
    fn a_multi_line_value_stays_in_extra_but_shows_on_one_line() {
        let mut t = FieldTable::new();
        let tpl = DetailsTemplate::compile("Script: %ScriptBlockText%", &mut t);
        let cmd = DetailsTemplate::compile("Cmd: %Cmd%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":4104},"EventData":{"ScriptBlockText":"a\r\n  b","Path":"a b","Cmd":"x  y"}}}"#,
        );
        let m = RecordMap::default();
        let mut shown = Shown::default();
        let mut out = ItemsBuf::default();
        tpl.render(&v, data, &m, &mut out, &mut shown);
        assert_eq!(joined(&out), "Script: a b");
        assert_eq!(extra(&v, &m, &shown), "Cmd: x y ¦ ScriptBlockText: a b");
        out.clear();
        cmd.render(&v, data, &m, &mut out, &mut shown);
        assert_eq!(joined(&out), "Cmd: x y");
        assert_eq!(extra(&v, &m, &shown), "Path: a b ¦ ScriptBlockText: a b");
    }

    #[test]
    fn sort_order_is_the_order_of_the_joined_text() {
        let keys = ["", "A", "AB", "A[1]", "Unused", "Unused2", "a", "Ü"];
        let values = ["", " ", "-", "x", "x y", "\t", "ü"];
        for ka in keys {
            for kb in keys {
                for ea in values {
                    for eb in values {
                        let want = format!("{ka}: {ea}").cmp(&format!("{kb}: {eb}"));
                        assert_eq!(sort_order(ka, ea, kb, eb), want, "{ka}|{ea} vs {kb}|{eb}");
                    }
                }
            }
        }
    }

    #[test]
    fn a_record_of_a_hundred_thousand_fields_is_listed_in_text_order() {
        // Numbering repeated names once counted the equal paths before and after each
        // leaf: quadratic, minutes for a record like this one.
        let t = FieldTable::new();
        let mut v = RecordView::default();
        v.clear(t.len());
        let n = 50_000;
        let mut want = Vec::new();
        for i in 0..n {
            v.push(&t, &format!("Event.EventData.F{i}"), &format!("v{i}"));
            v.push(&t, "Event.EventData.Data", &format!("d{i}"));
            want.push(format!("F{i}: v{i}"));
            want.push(format!("Data[{}]: d{i}", i + 1));
        }
        want.sort();
        assert_eq!(all(&v, &RecordMap::default()), want.join(" ¦ "));
    }

    #[test]
    fn a_list_refilled_for_another_record_forgets_the_first() {
        let t = FieldTable::new();
        let a = view(&t, r#"{"Event":{"EventData":{"A":"1","B":"2"}}}"#);
        let b = view(&t, r#"{"Event":{"EventData":{"C":"3"}}}"#);
        let mut l = FieldList::default();
        l.fill(&a, &RecordMap::default());
        let mut out = ItemsBuf::default();
        l.write_all(&mut out);
        assert_eq!(joined(&out), "A: 1 ¦ B: 2");
        l.fill(&b, &RecordMap::default());
        out.clear();
        l.write_all(&mut out);
        assert_eq!(joined(&out), "C: 3");
    }

    #[test]
    fn records_of_one_shape_share_keys_but_not_values() {
        let t = FieldTable::new();
        let json = |a: &str, b: &str| {
            format!(
                r#"{{"Event":{{"EventData":{{"B":"{b}","A":"{a}","Data":["x","y"]}},"UserData":{{"P":{{"K":"{a}"}},"Q":{{"K":"{b}"}}}}}}}}"#
            )
        };
        let first = view(&t, &json("1", "2"));
        let second = view(&t, &json("z", "z"));
        let other = view(&t, r#"{"Event":{"EventData":{"C":"3"}}}"#);
        let mut l = FieldList::default();
        let mut listed = |v: &RecordView| {
            l.fill(v, &RecordMap::default());
            let mut out = ItemsBuf::default();
            l.write_all(&mut out);
            joined(&out)
        };
        let want_first = "A: 1 ¦ B: 2 ¦ Data[1]: x ¦ Data[2]: y ¦ K: 1 ¦ K: 2";
        assert_eq!(listed(&first), want_first);
        // Same paths, other values: the repeated key `K` now holds one value twice.
        assert_eq!(
            listed(&second),
            "A: z ¦ B: z ¦ Data[1]: x ¦ Data[2]: y ¦ K: z"
        );
        assert_eq!(listed(&other), "C: 3");
        assert_eq!(listed(&first), want_first);
        // Distinct keys: the order is the keys' whatever the values.
        let keyed = |b: &str| {
            view(
                &t,
                &format!(r#"{{"Event":{{"EventData":{{"Unused":"{b}","Unused2":"-","Ab":""}}}}}}"#),
            )
        };
        assert_eq!(listed(&keyed("a")), "Ab: ¦ Unused2: - ¦ Unused: a");
        assert_eq!(listed(&keyed("0")), "Ab: ¦ Unused2: - ¦ Unused: 0");
    }

    #[test]
    fn an_items_label_ends_at_its_first_colon_in_the_name_or_after_it() {
        let t = FieldTable::new();
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"a:b":"v: w","C":"x: y"}}}"#,
        );
        let mut l = FieldList::default();
        l.fill(&v, &RecordMap::default());
        for named in [false, true] {
            let mut out = ItemsBuf::default();
            if named {
                l.write_all_named(&mut out, |k, o| o.push_str(k));
            } else {
                l.write_all(&mut out);
            }
            let pairs: Vec<(&str, &str)> = out.iter().map(|i| (i.label(), i.value())).collect();
            assert_eq!(pairs, [("C", " x: y"), ("a", "b: v: w")], "named: {named}");
        }
    }
}
