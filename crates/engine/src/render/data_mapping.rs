//! Field data mapping: how some fields of some events are shown in Details,
//! ExtraFieldInfo and AllFieldInfo, from the rule set's `config/data_mapping/*.yaml`.
//!
//! A mapping names a channel and an EventID (and optionally a provider) and, per
//! field, either text replacements (`%%1842` → `YES`, `S-1-16-12288` →
//! `HIGH_INTEGRITY`) or a hexadecimal-to-decimal conversion (`0x1fc` → `508`).
//! Replacements are substring replacements, scanned left to right, the longest text
//! winning where several start at the same place, so a list of codes such as
//! `%%1538 %%1541` is rewritten code by code. Mapping only changes what is displayed:
//! rules always match the recorded values.

use scanner_rules::DataMapping;
use scanner_rules::FxHashMap;
use std::borrow::Cow;

#[derive(Debug, Clone, Default)]
struct FieldRule {
    /// (text, replacement), longest text first.
    rewrite: Vec<(String, String)>,
    /// The first bytes of the rewritten texts, a bit each: where none starts, no
    /// text is compared.
    starts: [u64; 4],
    hex: bool,
}

#[derive(Debug, Clone)]
struct EventRules {
    provider: Option<String>,
    /// (lowercase field name, what to do with it): a few per event, looked up by a scan
    /// that compares lengths first and folds ASCII case as it compares.
    fields: Vec<(String, FieldRule)>,
}

/// Every mapping of a rule set, by (lowercase channel, EventID).
#[derive(Debug, Clone, Default)]
pub struct DataMappings {
    /// Lowercase channel → EventID → rules (nested, so a lookup borrows its keys).
    by_event: FxHashMap<String, FxHashMap<String, Vec<EventRules>>>,
}

/// The mappings that apply to one record (possibly none).
#[derive(Debug, Clone, Copy, Default)]
pub struct RecordMap<'a> {
    rules: &'a [EventRules],
    provider: &'a str,
}

impl DataMappings {
    /// Compiles the mappings read from a config folder.
    pub fn new(mappings: &[DataMapping]) -> DataMappings {
        let mut by_event: FxHashMap<String, FxHashMap<String, Vec<EventRules>>> =
            FxHashMap::default();
        for m in mappings {
            let mut fields: FxHashMap<String, FieldRule> = FxHashMap::default();
            for (name, pairs) in &m.rewrite {
                let rule = fields.entry(name.to_lowercase()).or_default();
                rule.rewrite.extend(pairs.iter().cloned());
                // Stable: among texts of equal length the file's first one wins.
                rule.rewrite
                    .sort_by_key(|(from, _)| std::cmp::Reverse(from.len()));
                for (from, _) in pairs {
                    if let Some(&b) = from.as_bytes().first() {
                        rule.starts[usize::from(b >> 6)] |= 1 << (b & 63);
                    }
                }
            }
            for name in &m.hex_to_decimal {
                fields.entry(name.to_lowercase()).or_default().hex = true;
            }
            by_event
                .entry(m.channel.to_lowercase())
                .or_default()
                .entry(m.event_id.trim().to_string())
                .or_default()
                .push(EventRules {
                    provider: m.provider.clone(),
                    fields: fields.into_iter().collect(),
                });
        }
        DataMappings { by_event }
    }

    /// The mappings for a record of `channel`, `event_id` and `provider`.
    pub fn for_record<'a>(
        &'a self,
        channel: &str,
        event_id: &str,
        provider: &'a str,
    ) -> RecordMap<'a> {
        if self.by_event.is_empty() {
            return RecordMap::default();
        }
        let owned;
        // Callers pass the lowercased channel: checked on bytes when it is ASCII.
        let upper = if channel.is_ascii() {
            channel.bytes().any(|c| c.is_ascii_uppercase())
        } else {
            channel.chars().any(char::is_uppercase)
        };
        let channel = if upper {
            owned = channel.to_lowercase();
            &owned
        } else {
            channel
        };
        match self.by_event.get(channel).and_then(|e| e.get(event_id)) {
            Some(rules) => RecordMap { rules, provider },
            None => RecordMap::default(),
        }
    }
}

impl<'a> RecordMap<'a> {
    /// `value` as field `name` (any case) is displayed for this record.
    pub fn apply<'v>(&self, name: &str, value: &'v str) -> Cow<'v, str> {
        let mut out = Cow::Borrowed(value);
        if self.rules.is_empty() {
            return out;
        }
        // Field names are ASCII but for rare ones, which are lowercased to compare.
        let lower = (!name.is_ascii()).then(|| name.to_lowercase());
        let is_name = |k: &str| match &lower {
            None => k.len() == name.len() && k.eq_ignore_ascii_case(name),
            Some(l) => k == l,
        };
        for r in self.rules {
            if let Some(p) = &r.provider {
                if !p.eq_ignore_ascii_case(self.provider) {
                    continue;
                }
            }
            let Some((_, rule)) = r.fields.iter().find(|(k, _)| is_name(k)) else {
                continue;
            };
            if !rule.rewrite.is_empty() {
                if let Some(s) = rewrite(&out, &rule.rewrite, &rule.starts) {
                    out = Cow::Owned(s);
                }
            }
            if rule.hex {
                if let Some(s) = hex_to_decimal(&out) {
                    out = Cow::Owned(s);
                }
            }
        }
        out
    }
}

/// Replaces every occurrence of the texts in `pairs` (longest first), left to right;
/// `None` when nothing matched.
/// `starts` has the bit of each text's first byte (texts are not empty).
fn rewrite(value: &str, pairs: &[(String, String)], starts: &[u64; 4]) -> Option<String> {
    let mut out = String::new();
    let mut copied = 0;
    let mut i = 0;
    let bytes = value.as_bytes();
    let may_start = |b: u8| starts[usize::from(b >> 6)] & (1 << (b & 63)) != 0;
    while i < bytes.len() {
        if !may_start(bytes[i]) || !value.is_char_boundary(i) {
            i += 1;
            continue;
        }
        match pairs
            .iter()
            .find(|(from, _)| value[i..].starts_with(from.as_str()))
        {
            Some((from, to)) => {
                out.push_str(&value[copied..i]);
                out.push_str(to);
                i += from.len();
                copied = i;
            }
            None => i += 1,
        }
    }
    if copied == 0 {
        return None;
    }
    out.push_str(&value[copied..]);
    Some(out)
}

/// `0x1fc` → `508`; anything that is not a `0x` hexadecimal number stays as it is.
fn hex_to_decimal(value: &str) -> Option<String> {
    let digits = value
        .trim()
        .strip_prefix("0x")
        .or_else(|| value.trim().strip_prefix("0X"))?;
    u128::from_str_radix(digits, 16).ok().map(|n| n.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mapping() -> DataMappings {
        let logon = DataMapping::parse(
            "Channel: Security\nEventID: 4624\nRewriteFieldData:\n  LogonType:\n    - '0': '0 - SYSTEM'\n    - '10': '10 - REMOTE INTERACTIVE'\n    - '2': '2 - INTERACTIVE'\n  ElevatedToken:\n    - '%%1842': 'YES'\nHexToDecimal: 'ProcessId'\n",
        )
        .unwrap();
        let share = DataMapping::parse(
            "Channel: Security\nEventID: 5145\nRewriteFieldData:\n  AccessList:\n    - '%%1538': 'READ_CONTROL'\n    - '%%1541': 'SYNCHRONIZE'\n",
        )
        .unwrap();
        let scm = DataMapping::parse(
            "Channel: System\nProvider_Name: 'Service Control Manager'\nEventID: 7023\nRewriteFieldData:\n  param2:\n    - '%%1792': 'not started'\n",
        )
        .unwrap();
        DataMappings::new(&[logon, share, scm])
    }

    #[test]
    fn rewrites_whole_and_partial_values_longest_first() {
        let m = mapping();
        let r = m.for_record("SECURITY", "4624", "Microsoft-Windows-Security-Auditing");
        assert_eq!(r.apply("LogonType", "10"), "10 - REMOTE INTERACTIVE");
        assert_eq!(r.apply("logontype", "2"), "2 - INTERACTIVE");
        assert_eq!(r.apply("ElevatedToken", "%%1842"), "YES");
        assert_eq!(r.apply("ElevatedToken", "%%1843"), "%%1843");
        assert_eq!(r.apply("TargetUserName", "10"), "10");
        let s = m.for_record("Security", "5145", "");
        assert_eq!(
            s.apply("AccessList", "%%1538 %%1541 %%4417"),
            "READ_CONTROL SYNCHRONIZE %%4417"
        );
        assert!(matches!(s.apply("AccessList", "none"), Cow::Borrowed(_)));
    }

    #[test]
    fn converts_hex_and_keeps_other_values() {
        let m = mapping();
        let r = m.for_record("Security", "4624", "");
        assert_eq!(r.apply("ProcessId", "0x1fc"), "508");
        assert_eq!(r.apply("ProcessId", "0X0"), "0");
        assert_eq!(r.apply("ProcessId", "1234"), "1234");
        assert_eq!(r.apply("ProcessId", "0xzz"), "0xzz");
        assert_eq!(
            m.for_record("Security", "4688", "")
                .apply("ProcessId", "0x1fc"),
            "0x1fc"
        );
    }

    #[test]
    fn field_names_match_in_any_case_ascii_or_not() {
        let m = DataMappings::new(&[DataMapping::parse(
            "Channel: Security\nEventID: 1\nRewriteFieldData:\n  ÄrgerCode:\n    - '1': 'one'\n  Kind:\n    - '1': 'uno'\n",
        )
        .unwrap()]);
        let r = m.for_record("Security", "1", "");
        let cases = [
            ("ÄRGERCODE", "one"),
            ("ärgercode", "one"),
            ("ArgerCode", "1"),
            ("KIND", "uno"),
            ("Kin", "1"),
            ("Kinds", "1"),
        ];
        for (name, shown) in cases {
            assert_eq!(r.apply(name, "1"), shown, "{name}");
        }
    }

    #[test]
    fn honours_the_provider_restriction() {
        let m = mapping();
        let scm = m.for_record("System", "7023", "Service Control Manager");
        assert_eq!(scm.apply("param2", "%%1792"), "not started");
        let other = m.for_record("System", "7023", "Other");
        assert_eq!(other.apply("param2", "%%1792"), "%%1792");
    }
}
