//! The Details and ExtraFieldInfo columns: Hayabusa's `details:` templates with
//! `%Field%` placeholders, the `default_details.txt` fallback keyed by provider and
//! EventID, and the all-fields fallback.
//!
//! Values are shown the way Hayabusa shows them, so that analysts can compare the two
//! tools' timelines cell for cell:
//! - typed values that the `evtx` crate renders differently from the parser Hayabusa
//!   uses are put back in that parser's form ([`legacy_form`]): GUIDs in upper case
//!   without braces, FILETIMEs with six fractional digits;
//! - field data mappings (`config/data_mapping/*.yaml`) rewrite some fields of some
//!   events ([`crate::field_map`]);
//! - control characters are dropped from Details values and become spaces in
//!   all-fields entries, and every run of whitespace becomes one space;
//! - an empty value shows as nothing, a missing field as `n/a`, an empty cell as `-`.
//!
//! None of this changes what rules match: matching reads the recorded values.

use crate::field_map::RecordMap;
use crate::record::RecordView;
use scanner_rules::{Event, FieldId, FieldTable};
use std::borrow::Cow;

/// The separator between Details fields: space, U+00A6 BROKEN BAR, space.
pub const SEP: &str = " \u{a6} ";

/// What a Details placeholder shows for a field the record lacks.
pub const MISSING: &str = "n/a";

#[derive(Debug, Clone)]
enum Part {
    Lit(String),
    /// A field, and the name data mappings know it by (its path's last segment).
    Field(FieldId, String),
    DataIndex(usize),
}

/// A compiled Details template.
#[derive(Debug, Clone)]
pub struct Template {
    parts: Vec<Part>,
}

impl Template {
    /// Compiles `text`, interning every placeholder's field.
    pub fn compile(text: &str, fields: &mut FieldTable) -> Template {
        let mut parts = Vec::new();
        let mut rest = text;
        while let Some(start) = rest.find('%') {
            let after = &rest[start + 1..];
            let Some(len) = after.find('%') else { break };
            let name = &after[..len];
            let valid = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "-_[]".contains(c));
            if !valid {
                parts.push(Part::Lit(rest[..start + 1].to_string()));
                rest = after;
                continue;
            }
            if start > 0 {
                parts.push(Part::Lit(rest[..start].to_string()));
            }
            let data_index = name
                .strip_prefix("Data[")
                .and_then(|n| n.strip_suffix(']'))
                .and_then(|n| n.parse::<usize>().ok());
            parts.push(match data_index {
                Some(n) => Part::DataIndex(n),
                None => {
                    let path = fields.path_of(name);
                    let leaf = path.rsplit('.').next().unwrap_or(name).to_string();
                    Part::Field(fields.intern(name), leaf)
                }
            });
            rest = &after[len + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Lit(rest.to_string()));
        }
        Template { parts }
    }

    /// Renders the template for a record into `out`, whitespace collapsed, `-` when
    /// nothing is left. `data` is the id of the unnamed `Data` field, `map` the
    /// record's field data mappings; every value shown is added to `shown`.
    pub fn render(
        &self,
        view: &RecordView,
        data: FieldId,
        map: &RecordMap,
        out: &mut String,
        shown: &mut Vec<String>,
    ) {
        let mut text = String::new();
        for p in &self.parts {
            match p {
                Part::Lit(s) => text.push_str(s),
                Part::Field(f, name) => {
                    let mut vals = view.values(*f).map(|v| v.raw);
                    match (vals.next(), vals.next()) {
                        (None, _) => text.push_str(MISSING),
                        (Some(v), None) => {
                            push_value(&detail_value(name, v, map), &mut text, shown)
                        }
                        (Some(a), Some(b)) => {
                            let all: Vec<Cow<str>> = [a, b]
                                .into_iter()
                                .chain(vals)
                                .map(|v| detail_value(name, v, map))
                                .collect();
                            push_value(&all.join(" "), &mut text, shown)
                        }
                    }
                }
                Part::DataIndex(n) => match view.values(data).nth(n.saturating_sub(1)) {
                    Some(v) if *n > 0 => {
                        let name = format!("Data[{n}]");
                        push_value(&detail_value(&name, v.raw, map), &mut text, shown)
                    }
                    _ => text.push_str(MISSING),
                },
            }
        }
        push_collapsed(&text, out);
        if out.is_empty() {
            out.push('-');
        }
    }
}

/// A value as a Details placeholder shows it, before whitespace is collapsed:
/// legacy typed form, data mapping, control characters dropped.
fn detail_value<'v>(name: &str, raw: &'v str, map: &RecordMap) -> Cow<'v, str> {
    let v = legacy_form(raw);
    let v = match map.apply(name, &v) {
        Cow::Borrowed(_) => v,
        Cow::Owned(s) => Cow::Owned(s),
    };
    if v.chars().any(is_dropped_control) {
        Cow::Owned(v.chars().filter(|c| !is_dropped_control(*c)).collect())
    } else {
        v
    }
}

/// Control characters other than the whitespace ones (tab, CR, LF).
fn is_dropped_control(c: char) -> bool {
    c.is_control() && !matches!(c, '\t' | '\r' | '\n')
}

/// Appends a value with its whitespace collapsed and records it as shown.
fn push_value(v: &str, out: &mut String, shown: &mut Vec<String>) {
    let start = out.len();
    push_collapsed(v, out);
    shown.push(out[start..].to_string());
}

/// Appends `v` with every run of whitespace turned into one space, trimmed.
pub fn push_collapsed(v: &str, out: &mut String) {
    for (i, w) in v.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(w);
    }
}

/// `v` with every run of whitespace turned into one space, trimmed.
pub fn collapse(v: &str) -> Cow<'_, str> {
    let clean = !v.starts_with(char::is_whitespace)
        && !v.ends_with(char::is_whitespace)
        && !v
            .as_bytes()
            .windows(2)
            .any(|w| w[0] == b' ' && w[1] == b' ')
        && !v.chars().any(|c| c.is_whitespace() && c != ' ');
    if clean {
        Cow::Borrowed(v)
    } else {
        let mut s = String::with_capacity(v.len());
        push_collapsed(v, &mut s);
        Cow::Owned(s)
    }
}

/// The form Hayabusa's EVTX parser gives a typed value that the `evtx` crate renders
/// differently: a GUID (`{365abb72-ac09-…}`) in upper case without braces
/// (`365ABB72-AC09-…`), a FILETIME (`…T16:10:39.0000000Z`) with six fractional digits
/// (`…T16:10:39.000000Z`, truncated). Only a whole value of exactly that shape is
/// changed: the same text inside a longer string is kept as recorded.
pub fn legacy_form(v: &str) -> Cow<'_, str> {
    if let Some(inner) = v.strip_prefix('{').and_then(|r| r.strip_suffix('}')) {
        if is_lower_guid(inner) {
            return Cow::Owned(inner.to_ascii_uppercase());
        }
    }
    if is_filetime_7(v) {
        let mut s = v[..v.len() - 2].to_string();
        s.push('Z');
        return Cow::Owned(s);
    }
    Cow::Borrowed(v)
}

/// `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` in lower-case hexadecimal.
fn is_lower_guid(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, &c)| match i {
            8 | 13 | 18 | 23 => c == b'-',
            _ => c.is_ascii_digit() || (b'a'..=b'f').contains(&c),
        })
}

/// `YYYY-MM-DDTHH:MM:SS.fffffffZ`, the `evtx` crate's rendering of a FILETIME.
fn is_filetime_7(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 28
        && b.iter().enumerate().all(|(i, &c)| match i {
            4 | 7 => c == b'-',
            10 => c == b'T',
            13 | 16 => c == b':',
            19 => c == b'.',
            27 => c == b'Z',
            _ => c.is_ascii_digit(),
        })
}

/// `v` with control characters other than tab, CR and LF as spaces, runs of spaces
/// as one and no spaces at either end; tabs and line breaks are kept.
fn squeeze_spaces(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        let c = if is_dropped_control(c) { ' ' } else { c };
        if c == ' ' && (s.is_empty() || s.ends_with(' ')) {
            continue;
        }
        s.push(c);
    }
    if s.ends_with(' ') {
        s.pop();
    }
    s
}

/// One `name: value` entry of the all-fields list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldEntry {
    /// The leaf's name, numbered when repeated (`Data[1]`).
    pub key: String,
    /// The value as displayed: whitespace collapsed.
    pub value: String,
    /// The value with runs of spaces squeezed but tabs and line breaks kept: what
    /// ExtraFieldInfo compares with the values Details shows.
    pub exact: String,
}

/// The event-data leaves of a record as distinct `name: value` entries (System
/// excluded), sorted as the text `name: value` sorts (so `Unused2` comes before
/// `Unused`). The key is the leaf's name; the unnamed `Data` elements are numbered
/// `Data[1]`, `Data[2]`, … even when there is one, and so are the values of any other
/// repeated name. Values are shown in their legacy typed form, with the data mapping
/// applied and control characters as spaces.
pub fn all_fields(view: &RecordView, map: &RecordMap) -> Vec<FieldEntry> {
    let leaves: Vec<(&str, &str)> = view
        .leaves()
        .filter(|(p, _)| !p.starts_with("Event.System.") && p.starts_with("Event."))
        .collect();
    let mut seen: Vec<(&str, usize)> = Vec::new();
    let mut out: Vec<(String, FieldEntry)> = Vec::with_capacity(leaves.len());
    for (i, (p, v)) in leaves.iter().enumerate() {
        let name = p.rsplit('.').next().unwrap_or(p);
        let count = match seen.iter_mut().find(|(q, _)| q == p) {
            Some((_, n)) => {
                *n += 1;
                *n
            }
            None => {
                seen.push((p, 1));
                1
            }
        };
        let repeated = *p == "Event.EventData.Data"
            || count > 1
            || leaves[i + 1..].iter().any(|(q, _)| q == p);
        let key = if repeated {
            format!("{name}[{count}]")
        } else {
            name.to_string()
        };
        let typed = legacy_form(v);
        let mapped = map.apply(&key, &typed);
        let exact = squeeze_spaces(&mapped);
        let value = collapse(&exact).into_owned();
        out.push((format!("{key}: {exact}"), FieldEntry { key, value, exact }));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out.dedup_by(|a, b| a.0 == b.0);
    out.into_iter().map(|(_, e)| e).collect()
}

/// Joins entries as `name: value ¦ …`, or `-` when there are none.
pub fn join_fields(fields: &[FieldEntry]) -> String {
    if fields.is_empty() {
        return "-".into();
    }
    let mut s = String::new();
    for (i, e) in fields.iter().enumerate() {
        if i > 0 {
            s.push_str(SEP);
        }
        s.push_str(&e.key);
        s.push(':');
        if !e.value.is_empty() {
            s.push(' ');
            s.push_str(&e.value);
        }
    }
    s
}

/// ExtraFieldInfo: the entries of `all` whose value is not among the values Details
/// shows, joined, or `-` when none is left. The test is by value, whatever the field,
/// and on the value with its spaces squeezed but its tabs and line breaks kept: a
/// value with doubled spaces is left out when Details shows it, a multi-line value
/// stays even when Details shows it on one line.
pub fn extra_fields(all: Vec<FieldEntry>, shown: &[String]) -> String {
    let rest: Vec<FieldEntry> = all
        .into_iter()
        .filter(|e| !shown.iter().any(|s| s.trim_end_matches(',') == e.exact))
        .collect();
    join_fields(&rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::field_map::FieldMap;
    use crate::flatten::Flattener;
    use scanner_rules::config::DataMapping;

    fn view(t: &FieldTable, json: &str) -> RecordView {
        let mut v = RecordView::default();
        Flattener::default().fill(json, t, &mut v).unwrap();
        v
    }

    fn render(
        tpl: &Template,
        v: &RecordView,
        data: FieldId,
        map: &RecordMap,
    ) -> (String, Vec<String>) {
        let mut out = String::new();
        let mut shown = Vec::new();
        tpl.render(v, data, map, &mut out, &mut shown);
        (out, shown)
    }

    #[test]
    fn renders_placeholders_missing_and_data_index() {
        let mut t = FieldTable::new();
        let tpl = Template::compile(
            "User: %TargetUserName% ¦ Ip: %IpAddress% ¦ D2: %Data[2]% ¦ D9: %Data[9]% ¦ 100%",
            &mut t,
        );
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"TargetUserName":"  bob   smith ","Data":["x","y"]}}}"#,
        );
        let (out, shown) = render(&tpl, &v, data, &RecordMap::default());
        assert_eq!(out, "User: bob smith ¦ Ip: n/a ¦ D2: y ¦ D9: n/a ¦ 100%");
        assert_eq!(shown, vec!["bob smith", "y"]);
    }

    #[test]
    fn empty_values_show_nothing_and_whitespace_collapses_across_the_cell() {
        let mut t = FieldTable::new();
        let tpl = Template::compile("A: %A% ¦  B:  %B% ¦ C: %C%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"A":"","B":"two\n\tlines","C":""}}}"#,
        );
        let (out, shown) = render(&tpl, &v, data, &RecordMap::default());
        assert_eq!(out, "A: ¦ B: two lines ¦ C:");
        assert_eq!(shown, vec!["", "two lines", ""]);
        let empty = Template::compile("%A%", &mut t);
        assert_eq!(render(&empty, &v, data, &RecordMap::default()).0, "-");
    }

    #[test]
    fn control_characters_are_dropped_in_details_and_spaced_in_all_fields() {
        let mut t = FieldTable::new();
        let tpl = Template::compile("Cmd: %Cmd%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"Cmd":"a\u009d b","P":"\u0094\u0002-"}}}"#,
        );
        assert_eq!(render(&tpl, &v, data, &RecordMap::default()).0, "Cmd: a b");
        let all = all_fields(&v, &RecordMap::default());
        assert_eq!(join_fields(&all), "Cmd: a b ¦ P: -");
    }

    #[test]
    fn guids_and_filetimes_take_the_legacy_form_only_as_whole_values() {
        assert_eq!(
            legacy_form("{365abb72-7acc-5cc4-0000-0010b2470300}"),
            "365ABB72-7ACC-5CC4-0000-0010B2470300"
        );
        assert_eq!(
            legacy_form("2017-04-20T16:10:39.1234567Z"),
            "2017-04-20T16:10:39.123456Z"
        );
        for kept in [
            "C:\\x\\{4f02f780-dd6c-40e3-ab21-c1336815b4db}.sdb",
            "%{c6faf700-bfe4-452a-a766-424f84c29583}",
            "{365ABB72-7ACC-5CC4-0000-0010B2470300}",
            "{365abb72-7acc-5cc4-0000-0010b247030}",
            "2019-07-18T20:40:00.580Z",
            "2019-07-18 20:40:00.5801234",
        ] {
            assert_eq!(legacy_form(kept), kept);
        }
        let mut t = FieldTable::new();
        let tpl = Template::compile("PGUID: %ParentProcessGuid%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"ParentProcessGuid":"{365abb72-7acc-5cc4-0000-0010b2470300}"}}}"#,
        );
        assert_eq!(
            render(&tpl, &v, data, &RecordMap::default()).0,
            "PGUID: 365ABB72-7ACC-5CC4-0000-0010B2470300"
        );
    }

    #[test]
    fn all_fields_number_unnamed_data_and_repeated_names() {
        let t = FieldTable::new();
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"Data":"only","Name":"n","Empty":""},"UserData":{"X":{"Item":["b","a"]}}}}"#,
        );
        let all = all_fields(&v, &RecordMap::default());
        assert_eq!(
            join_fields(&all),
            "Data[1]: only ¦ Empty: ¦ Item[1]: b ¦ Item[2]: a ¦ Name: n"
        );
    }

    #[test]
    fn data_mapping_applies_to_details_and_all_fields_by_field_name() {
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
        let map = fm.for_record("Security", "4688", "");
        let (out, shown) = render(&tpl, &v, data, &map);
        assert_eq!(out, "PID: 2020 ¦ Tok: FULL_TOKEN");
        let extra = extra_fields(all_fields(&v, &map), &shown);
        assert_eq!(extra, "ProcessId: 488 ¦ SubjectLogonId: 0x3e7");
        let (plain, _) = render(&tpl, &v, data, &RecordMap::default());
        assert_eq!(plain, "PID: 0x7e4 ¦ Tok: %%1936");
    }

    fn entry(key: &str, exact: &str) -> FieldEntry {
        FieldEntry {
            key: key.into(),
            value: collapse(exact).into_owned(),
            exact: exact.into(),
        }
    }

    #[test]
    fn extra_fields_drop_every_entry_whose_value_details_shows() {
        let all = vec![
            entry("A", "SYSTEM"),
            entry("B", "SYSTEM"),
            entry("C", ""),
            entry("D", "x"),
        ];
        assert_eq!(extra_fields(all.clone(), &["SYSTEM".into()]), "C: ¦ D: x");
        assert_eq!(
            extra_fields(all.clone(), &["SYSTEM".into(), "".into()]),
            "D: x"
        );
        assert_eq!(
            extra_fields(all, &["SYSTEM".into(), "".into(), "x".into()]),
            "-"
        );
    }

    #[test]
    fn a_multi_line_value_stays_in_extra_fields_but_shows_on_one_line() {
        let mut t = FieldTable::new();
        let tpl = Template::compile("Script: %ScriptBlockText%", &mut t);
        let cmd = Template::compile("Cmd: %Cmd%", &mut t);
        let data = t.intern("Data");
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":4104},"EventData":{"ScriptBlockText":"a\r\n  b","Path":"a b","Cmd":"x  y"}}}"#,
        );
        let (out, shown) = render(&tpl, &v, data, &RecordMap::default());
        assert_eq!(out, "Script: a b");
        let extra = extra_fields(all_fields(&v, &RecordMap::default()), &shown);
        assert_eq!(extra, "Cmd: x y ¦ ScriptBlockText: a b");
        let (out, shown) = render(&cmd, &v, data, &RecordMap::default());
        assert_eq!(out, "Cmd: x y");
        let extra = extra_fields(all_fields(&v, &RecordMap::default()), &shown);
        assert_eq!(extra, "Path: a b ¦ ScriptBlockText: a b");
    }

    #[test]
    fn all_fields_sort_as_text_and_drop_duplicates() {
        let t = FieldTable::new();
        let v = view(
            &t,
            r#"{"Event":{"System":{"EventID":1},"EventData":{"Unused":"","Unused2":"","AdditionalInfo":"-","AdditionalInfo2":""},"UserData":{"A":{"K":"v"},"B":{"K":"v"}}}}"#,
        );
        let all = all_fields(&v, &RecordMap::default());
        assert_eq!(
            join_fields(&all),
            "AdditionalInfo2: ¦ AdditionalInfo: - ¦ K: v ¦ Unused2: ¦ Unused:"
        );
    }
}
