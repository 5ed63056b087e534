//! `-F Field:value`: a field filter, as Hayabusa 3.9.0 reads it. The value is a
//! wildcard pattern (`*` any run, `?` one character) that must match the whole field
//! value, case-sensitively. The field is looked up through `eventkey_alias.txt` (so
//! `EventID` is `Event.System.EventID`), then as `Event.EventData.<Field>` and
//! `Event.System.<Field>` (for a config without the alias); any matching is enough.
//! Several `-F` must all match.

use super::SearchError;
use scanner_input::RecordView;
use scanner_rules::{FieldId, FieldTable};

/// One `-F` filter.
#[derive(Debug)]
pub struct FieldFilter {
    fields: Vec<FieldId>,
    pattern: String,
}

impl FieldFilter {
    /// Parses `Field:value` (surrounding double quotes dropped; the value is all after
    /// the first `:`, so `Image:C:\Windows\*` works: 3.9.0 split at every `:` and asked
    /// for each part, so a value holding one never matched), interning the field's paths
    /// in `table`.
    pub fn parse(
        text: &str,
        aliases: &[(String, String)],
        table: &mut FieldTable,
    ) -> Result<FieldFilter, SearchError> {
        let t = text.strip_prefix('"').unwrap_or(text);
        let t = t.strip_suffix('"').unwrap_or(t);
        let Some((field, pattern)) = t.split_once(':') else {
            return Err(SearchError::Filter(text.to_string()));
        };
        let (field, pattern) = (field.trim(), pattern.trim());
        if field.is_empty() {
            return Err(SearchError::Filter(text.to_string()));
        }
        let mut fields = Vec::new();
        if let Some((_, path)) = aliases.iter().find(|(k, _)| k == field) {
            fields.push(table.intern_path(path));
        }
        for path in [
            format!("Event.EventData.{field}"),
            format!("Event.System.{field}"),
        ] {
            let id = table.intern_path(&path);
            if !fields.contains(&id) {
                fields.push(id);
            }
        }
        Ok(FieldFilter {
            fields,
            pattern: pattern.to_string(),
        })
    }

    /// Whether `view` passes.
    pub fn keeps(&self, view: &RecordView) -> bool {
        self.fields.iter().any(|&f| {
            let v = view.first(f).unwrap_or("-");
            wildmatch(&self.pattern, v)
        })
    }
}

/// Whether `text` matches the whole `pattern` (`*` any run, `?` one character).
/// Works on the bytes (a literal compares byte for byte, `?` steps over one whole
/// character): no allocation.
pub fn wildmatch(pattern: &str, text: &str) -> bool {
    let (p, t) = (pattern.as_bytes(), text.as_bytes());
    let step = |i: usize| text[i..].chars().next().map_or(1, char::len_utf8);
    let (mut pi, mut ti) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        if pi < p.len() && p[pi] == b'?' {
            pi += 1;
            ti += step(ti);
        } else if pi < p.len() && p[pi] == b'*' {
            star = Some((pi, ti));
            pi += 1;
        } else if pi < p.len() && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if let Some((sp, st)) = star {
            let next = st + step(st);
            pi = sp + 1;
            ti = next;
            star = Some((sp, next));
        } else {
            return false;
        }
    }
    p[pi..].iter().all(|&c| c == b'*')
}

#[cfg(test)]
mod tests {
    use super::wildmatch;

    #[test]
    fn wildcards_match_the_whole_value_case_sensitively() {
        assert!(wildmatch("1", "1"));
        assert!(!wildmatch("1", "10"));
        assert!(wildmatch("*cmd*", "C:\\cmd.exe"));
        assert!(wildmatch("C:\\*.exe", "C:\\Windows\\cmd.exe"));
        assert!(!wildmatch("c:\\*.exe", "C:\\Windows\\cmd.exe"));
        assert!(wildmatch("46?4", "4624"));
        assert!(!wildmatch("46?4", "464"));
        assert!(wildmatch("*", ""));
        assert!(wildmatch("a*b*c", "aXbYbc"));
        assert!(wildmatch("?b", "éb"));
        assert!(wildmatch("*é", "aé"));
    }
}
