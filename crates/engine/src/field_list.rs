//! A record's event-data fields as `name: value` entries, for the AllFieldInfo column
//! and for ExtraFieldInfo (the entries Details does not show).
//!
//! The list is built into buffers a worker keeps, once per record that matched however
//! many rules it matched: no allocation per entry.

use crate::details::{collapse_into, legacy_form, squeeze_spaces_into, Shown, SEP};
use crate::field_map::RecordMap;
use crate::record::RecordView;

type Span = (u32, u32);

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
    text: String,
    entries: Vec<Entry>,
    scratch: String,
}

/// A path's length and last eight bytes: paths that differ mostly differ here, so
/// repeated names are found without comparing whole paths.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct PathKey(usize, u64);

impl PathKey {
    fn of(p: &str) -> PathKey {
        let b = p.as_bytes();
        let tail = &b[b.len().saturating_sub(8)..];
        PathKey(b.len(), tail.iter().fold(0, |h, &x| h << 8 | u64::from(x)))
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

impl FieldList {
    /// Builds the list of `view`'s fields, replacing the previous record's.
    pub fn fill(&mut self, view: &RecordView, map: &RecordMap) {
        self.text.clear();
        self.entries.clear();
        let leaves: Vec<(PathKey, &str, &str)> = view
            .leaves()
            .filter(|(p, _)| !p.starts_with("Event.System.") && p.starts_with("Event."))
            .map(|(p, v)| (PathKey::of(p), p, v))
            .collect();
        let same = |a: &(PathKey, &str, &str), k: PathKey, p: &str| a.0 == k && a.1 == p;
        for (i, &(k, p, v)) in leaves.iter().enumerate() {
            let name = p.rsplit('.').next().unwrap_or(p);
            let count = 1 + leaves[..i].iter().filter(|q| same(q, k, p)).count();
            let repeated = p == "Event.EventData.Data"
                || count > 1
                || leaves[i + 1..].iter().any(|q| same(q, k, p));
            let k0 = self.text.len();
            self.text.push_str(name);
            if repeated {
                use std::fmt::Write;
                let _ = write!(self.text, "[{count}]");
            }
            let key = (k0 as u32, self.text.len() as u32);
            let typed = legacy_form(v);
            let mapped = map.apply(at(&self.text, key), &typed);
            let e0 = self.text.len();
            let plain = squeeze_spaces_into(&mapped, &mut self.text);
            let exact = (e0 as u32, self.text.len() as u32);
            self.scratch.clear();
            // A value copied as it was has no whitespace to collapse.
            let value = if !plain && collapse_into(at(&self.text, exact), &mut self.scratch) {
                let v0 = self.text.len();
                self.text.push_str(&self.scratch);
                (v0 as u32, self.text.len() as u32)
            } else {
                exact
            };
            self.entries.push(Entry {
                key,
                exact,
                value,
                order: i as u32,
            });
        }
        let text = &self.text;
        // Unstable sort (no buffer to allocate), stable in effect: ties go by position.
        self.entries.sort_unstable_by(|a, b| {
            sort_order(
                at(text, a.key),
                at(text, a.exact),
                at(text, b.key),
                at(text, b.exact),
            )
            .then(a.order.cmp(&b.order))
        });
        self.entries.dedup_by(|a, b| {
            at(text, a.key) == at(text, b.key) && at(text, a.exact) == at(text, b.exact)
        });
    }

    /// Appends every entry as `name: value ¦ …` to `out`, or `-` when there is none.
    pub fn write_all(&self, out: &mut String) {
        self.write_where(out, |_| true);
    }

    /// ExtraFieldInfo: appends the entries whose value is not among the values Details
    /// shows, or `-` when none is left. The test is by value, whatever the field, and
    /// on the value with its spaces squeezed but its tabs and line breaks kept: a value
    /// with doubled spaces is left out when Details shows it, a multi-line value stays
    /// even when Details shows it on one line.
    pub fn write_extra(&self, shown: &Shown, out: &mut String) {
        self.write_where(out, |exact| !shown.contains(exact));
    }

    fn write_where(&self, out: &mut String, keep: impl Fn(&str) -> bool) {
        let start = out.len();
        for e in &self.entries {
            if !keep(at(&self.text, e.exact)) {
                continue;
            }
            if out.len() > start {
                out.push_str(SEP);
            }
            out.push_str(at(&self.text, e.key));
            out.push(':');
            let v = at(&self.text, e.value);
            if !v.is_empty() {
                out.push(' ');
                out.push_str(v);
            }
        }
        if out.len() == start {
            out.push('-');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::details::Template;
    use crate::field_map::FieldMap;
    use crate::flatten::Flattener;
    use scanner_rules::config::DataMapping;
    use scanner_rules::FieldTable;

    fn view(t: &FieldTable, json: &str) -> RecordView {
        let mut v = RecordView::default();
        Flattener::default().fill(json, t, &mut v).unwrap();
        v
    }

    fn all(v: &RecordView, map: &RecordMap) -> String {
        let mut l = FieldList::default();
        l.fill(v, map);
        let mut out = String::new();
        l.write_all(&mut out);
        out
    }

    fn extra(v: &RecordView, map: &RecordMap, shown: &Shown) -> String {
        let mut l = FieldList::default();
        l.fill(v, map);
        let mut out = String::new();
        l.write_extra(shown, &mut out);
        out
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
        let fm = FieldMap::new(&[m]);
        let mut t = FieldTable::new();
        let tpl = Template::compile("PID: %NewProcessId% ¦ Tok: %TokenElevationType%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":4688,"Channel":"Security"},"EventData":{"NewProcessId":"0x7e4","ProcessId":"0x1e8","TokenElevationType":"%%1936","SubjectLogonId":"0x3e7"}}}"#,
        );
        let map = fm.for_record("security", "4688", "");
        let mut shown = Shown::default();
        let mut out = String::new();
        tpl.render(&v, data, &map, &mut out, &mut shown);
        assert_eq!(out, "PID: 2020 ¦ Tok: FULL_TOKEN");
        assert_eq!(
            extra(&v, &map, &shown),
            "ProcessId: 488 ¦ SubjectLogonId: 0x3e7"
        );
        out.clear();
        tpl.render(&v, data, &RecordMap::default(), &mut out, &mut shown);
        assert_eq!(out, "PID: 0x7e4 ¦ Tok: %%1936");
    }

    #[test]
    fn a_multi_line_value_stays_in_extra_but_shows_on_one_line() {
        let mut t = FieldTable::new();
        let tpl = Template::compile("Script: %ScriptBlockText%", &mut t);
        let cmd = Template::compile("Cmd: %Cmd%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":4104},"EventData":{"ScriptBlockText":"a\r\n  b","Path":"a b","Cmd":"x  y"}}}"#,
        );
        let m = RecordMap::default();
        let mut shown = Shown::default();
        let mut out = String::new();
        tpl.render(&v, data, &m, &mut out, &mut shown);
        assert_eq!(out, "Script: a b");
        assert_eq!(extra(&v, &m, &shown), "Cmd: x y ¦ ScriptBlockText: a b");
        out.clear();
        cmd.render(&v, data, &m, &mut out, &mut shown);
        assert_eq!(out, "Cmd: x y");
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
    fn a_list_refilled_for_another_record_forgets_the_first() {
        let t = FieldTable::new();
        let a = view(&t, r#"{"Event":{"EventData":{"A":"1","B":"2"}}}"#);
        let b = view(&t, r#"{"Event":{"EventData":{"C":"3"}}}"#);
        let mut l = FieldList::default();
        l.fill(&a, &RecordMap::default());
        let mut out = String::new();
        l.write_all(&mut out);
        assert_eq!(out, "A: 1 ¦ B: 2");
        l.fill(&b, &RecordMap::default());
        out.clear();
        l.write_all(&mut out);
        assert_eq!(out, "C: 3");
    }
}
