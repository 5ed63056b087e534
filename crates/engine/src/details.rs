//! The Details and ExtraFieldInfo columns: Hayabusa's `details:` templates with
//! `%Field%` placeholders, the `default_details.txt` fallback keyed by provider and
//! EventID, and the all-fields fallback.

use crate::record::RecordView;
use scanner_rules::{Event, FieldId, FieldTable};

/// The separator between Details fields: space, U+00A6 BROKEN BAR, space.
pub const SEP: &str = " \u{a6} ";

#[derive(Debug, Clone)]
enum Part {
    Lit(String),
    Field(FieldId),
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
                && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_[]".contains(c));
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
                None => Part::Field(fields.intern(name)),
            });
            rest = &after[len + 1..];
        }
        if !rest.is_empty() {
            parts.push(Part::Lit(rest.to_string()));
        }
        Template { parts }
    }

    /// Renders the template for a record. `data` is the id of the `Data` field.
    pub fn render(&self, view: &RecordView, data: FieldId, out: &mut String, shown: &mut Vec<String>) {
        for p in &self.parts {
            match p {
                Part::Lit(s) => out.push_str(s),
                Part::Field(f) => {
                    let mut vals = view.values(*f).map(|v| v.raw);
                    match (vals.next(), vals.next()) {
                        (None, _) => out.push_str("n/a"),
                        (Some(v), None) => push_value(v, out, shown),
                        (Some(a), Some(b)) => {
                            let all: Vec<&str> = [a, b].into_iter().chain(vals).collect();
                            push_value(&all.join(" "), out, shown)
                        }
                    }
                }
                Part::DataIndex(n) => match view.values(data).nth(n.saturating_sub(1)) {
                    Some(v) if *n > 0 => push_value(v.raw, out, shown),
                    _ => out.push_str("n/a"),
                },
            }
        }
    }
}

/// Appends a value with its whitespace collapsed, `-` for an empty one.
fn push_value(v: &str, out: &mut String, shown: &mut Vec<String>) {
    let start = out.len();
    for (i, w) in v.split_whitespace().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(w);
    }
    if out.len() == start {
        out.push('-');
    } else {
        shown.push(out[start..].to_string());
    }
}

/// The event-data leaves of a record as sorted `name: value` entries (System excluded;
/// repeated names numbered `Name[1]`, `Name[2]`, …).
pub fn all_fields(view: &RecordView) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    let leaves: Vec<(&str, &str)> = view
        .leaves()
        .filter(|(p, _)| !p.starts_with("Event.System.") && p.starts_with("Event."))
        .collect();
    for (i, (p, v)) in leaves.iter().enumerate() {
        let name = p.rsplit('.').next().unwrap_or(p);
        let same: Vec<usize> = leaves
            .iter()
            .enumerate()
            .filter(|(_, (q, _))| q == p)
            .map(|(j, _)| j)
            .collect();
        let key = if same.len() > 1 {
            let k = same.iter().position(|&j| j == i).unwrap_or(0) + 1;
            format!("{name}[{k}]")
        } else {
            name.to_string()
        };
        let value = v.split_whitespace().collect::<Vec<_>>().join(" ");
        out.push((key, value));
    }
    out.sort();
    out.dedup();
    out
}

/// Joins entries as `name: value ¦ …`, or `-` when there are none.
pub fn join_fields(fields: &[(String, String)]) -> String {
    if fields.is_empty() {
        return "-".into();
    }
    let mut s = String::new();
    for (i, (k, v)) in fields.iter().enumerate() {
        if i > 0 {
            s.push_str(SEP);
        }
        s.push_str(k);
        s.push_str(": ");
        s.push_str(v);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::flatten::Flattener;

    #[test]
    fn renders_placeholders_missing_and_data_index() {
        let mut t = FieldTable::new();
        let tpl = Template::compile("User: %TargetUserName% ¦ Ip: %IpAddress% ¦ D2: %Data[2]% ¦ 100%", &mut t);
        let data = t.intern("Data");
        let mut v = RecordView::default();
        let json = r#"{"Event":{"System":{"EventID":1},"EventData":{"TargetUserName":"  bob   smith ","Data":["x","y"]}}}"#;
        Flattener::default().fill(json, &t, &mut v).unwrap();
        let mut out = String::new();
        let mut shown = Vec::new();
        tpl.render(&v, data, &mut out, &mut shown);
        assert_eq!(out, "User: bob smith ¦ Ip: n/a ¦ D2: y ¦ 100%");
        assert_eq!(shown, vec!["bob smith", "y"]);
        let all = all_fields(&v);
        assert_eq!(join_fields(&all), "Data[1]: x ¦ Data[2]: y ¦ TargetUserName: bob smith");
    }
}
