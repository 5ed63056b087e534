//! Sigma `logsource` → Windows events: which channels, EventIDs and providers a SigmaHQ
//! rule applies to, and how field names differ per log. The table is data
//! (`rules/config/logsource.yaml`, overridable per config folder), not code.

use crate::error::{Context, ErrorKind::Malformed, RuleError};
use crate::fields::FxHashMap;
use crate::meta::LogSource;
use yaml_serde::Value as Yaml;

/// One set of events a log source stands for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Variant {
    /// Channels (any of).
    pub channels: Vec<String>,
    /// EventIDs (any of); empty means any.
    pub event_ids: Vec<String>,
    /// Provider names (any of); empty means any.
    pub providers: Vec<String>,
    /// Rule field name → this log's field name.
    pub rename: FxHashMap<String, String>,
    /// Rule field name → (value as the rule writes it, lowercase → this log's value).
    pub values: FxHashMap<String, FxHashMap<String, String>>,
    /// Rule field name → (value prefix, lowercase → this log's prefix), e.g. drive paths
    /// as the device paths the Security log records.
    pub prefixes: FxHashMap<String, Vec<(String, String)>>,
}

impl Variant {
    /// How this log writes `value` of rule field `field`, when it differs.
    pub fn map_value(&self, field: &str, value: &str) -> Option<String> {
        let lower = value.to_lowercase();
        if let Some(v) = self.values.get(field).and_then(|m| m.get(lower.as_str())) {
            return Some(v.clone());
        }
        let (from, to) = self
            .prefixes
            .get(field)?
            .iter()
            .find(|(from, _)| lower.starts_with(from.as_str()))?;
        // Prefixes are ASCII, so byte offsets agree between `value` and `lower`.
        Some(format!("{to}{}", value.get(from.len()..)?))
    }
}

/// The logsource table.
#[derive(Debug, Clone, Default)]
pub struct LogsourceMap {
    category: FxHashMap<String, Vec<Variant>>,
    service: FxHashMap<String, Vec<Variant>>,
}

/// What the table says about a rule's log source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mapping<'a> {
    /// Apply the rule to each of these variants.
    Variants(&'a [Variant]),
    /// Take the rule as written (no category or service, e.g. a keyword rule over all logs).
    AsWritten,
    /// The rule cannot apply to Windows event logs; the reason.
    Unusable(String),
}

fn strings(v: Option<&Yaml>) -> Vec<String> {
    match v {
        Some(Yaml::Sequence(s)) => s.iter().filter_map(text).collect(),
        Some(other) => text(other).into_iter().collect(),
        None => Vec::new(),
    }
}

fn text(v: &Yaml) -> Option<String> {
    match v {
        Yaml::String(s) => Some(s.clone()),
        Yaml::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

fn variants(v: &Yaml) -> Result<Vec<Variant>, RuleError> {
    let Yaml::Sequence(items) = v else {
        return Err(Malformed("expected a list of variants").into());
    };
    items
        .iter()
        .map(|i| {
            let Yaml::Mapping(m) = i else {
                return Err(Malformed("a variant is not a map").into());
            };
            let channels = strings(m.get("channel"));
            if channels.is_empty() {
                return Err(Malformed("a variant has no channel").into());
            }
            let mut rename = FxHashMap::default();
            if let Some(Yaml::Mapping(r)) = m.get("rename") {
                for (k, v) in r {
                    if let (Some(k), Some(v)) = (text(k), text(v)) {
                        rename.insert(k, v);
                    }
                }
            }
            let mut values = FxHashMap::default();
            if let Some(Yaml::Mapping(vm)) = m.get("values") {
                for (field, map) in vm {
                    let (Some(field), Yaml::Mapping(map)) = (text(field), map) else {
                        return Err(Malformed("values must map a field to a value map").into());
                    };
                    let mut inner = FxHashMap::default();
                    for (from, to) in map {
                        let from = match from {
                            Yaml::Bool(b) => Some(b.to_string()),
                            other => text(other),
                        };
                        if let (Some(from), Some(to)) = (from, text(to)) {
                            inner.insert(from.to_lowercase(), to);
                        }
                    }
                    values.insert(field, inner);
                }
            }
            let mut prefixes = FxHashMap::default();
            if let Some(Yaml::Mapping(pm)) = m.get("prefix") {
                for (field, map) in pm {
                    let (Some(field), Yaml::Mapping(map)) = (text(field), map) else {
                        return Err(Malformed("prefix must map a field to a prefix map").into());
                    };
                    let list: Vec<(String, String)> = map
                        .iter()
                        .filter_map(|(f, t)| Some((text(f)?.to_lowercase(), text(t)?)))
                        .filter(|(f, _)| f.is_ascii())
                        .collect();
                    prefixes.insert(field, list);
                }
            }
            Ok(Variant {
                prefixes,
                values,
                channels,
                event_ids: strings(m.get("event_id")),
                providers: strings(m.get("provider")),
                rename,
            })
        })
        .collect()
}

impl LogsourceMap {
    /// Parses a table (`category:` and `service:` maps of variant lists).
    pub fn parse(source: &str) -> Result<LogsourceMap, RuleError> {
        let in_file = |e: RuleError| e.within(Context::File("logsource.yaml".into()));
        let doc: Yaml = scanner_yaml::document(source).map_err(|e| in_file(e.into()))?;
        let mut map = LogsourceMap::default();
        for (section, target, unnamed) in [
            ("category", &mut map.category, "a category name is not text"),
            ("service", &mut map.service, "a service name is not text"),
        ] {
            if let Some(Yaml::Mapping(m)) = doc.get(section) {
                for (k, v) in m {
                    let name = text(k).ok_or_else(|| in_file(Malformed(unnamed).into()))?;
                    let list = variants(v)
                        .map_err(|e| e.within(Context::Entry(format!("{section} {name}"))))?;
                    target.insert(name.to_lowercase(), list);
                }
            }
        }
        Ok(map)
    }

    /// Entries of `other` replace this table's, by name.
    pub fn merge(&mut self, other: LogsourceMap) {
        self.category.extend(other.category);
        self.service.extend(other.service);
    }

    /// What a rule's log source maps to.
    pub fn lookup(&self, ls: &LogSource) -> Mapping<'_> {
        if let Some(p) = &ls.product {
            if !p.eq_ignore_ascii_case("windows") {
                return Mapping::Unusable(format!("logsource product '{p}' is not Windows"));
            }
        }
        let unusable = |kind: &str, name: &str| {
            Mapping::Unusable(format!(
                "no Windows event log holds logsource {kind} '{name}' (map it in logsource.yaml)"
            ))
        };
        if let Some(c) = &ls.category {
            return match self.category.get(c.to_lowercase().as_str()) {
                Some(v) if !v.is_empty() => Mapping::Variants(v),
                _ => match ls
                    .service
                    .as_ref()
                    .and_then(|s| self.service.get(s.to_lowercase().as_str()))
                {
                    Some(v) if !v.is_empty() => Mapping::Variants(v),
                    _ => unusable("category", c),
                },
            };
        }
        if let Some(s) = &ls.service {
            return match self.service.get(s.to_lowercase().as_str()) {
                Some(v) if !v.is_empty() => Mapping::Variants(v),
                _ => unusable("service", s),
            };
        }
        Mapping::AsWritten
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ls(cat: Option<&str>, svc: Option<&str>, product: Option<&str>) -> LogSource {
        LogSource {
            product: product.map(Into::into),
            category: cat.map(Into::into),
            service: svc.map(Into::into),
        }
    }

    #[test]
    fn builtin_table_maps_categories_and_services() {
        let text = crate::builtin::CONFIG
            .iter()
            .find(|(n, _)| *n == "logsource.yaml")
            .map(|(_, t)| *t)
            .expect("built-in logsource.yaml");
        let m = LogsourceMap::parse(text).unwrap();
        let Mapping::Variants(v) = m.lookup(&ls(Some("process_creation"), None, Some("windows")))
        else {
            panic!("process_creation is mapped");
        };
        assert_eq!(v.len(), 2);
        assert_eq!(v[1].channels, vec!["Security"]);
        assert_eq!(v[1].event_ids, vec!["4688"]);
        assert_eq!(v[1].rename["Image"], "NewProcessName");
        let Mapping::Variants(n) = m.lookup(&ls(Some("network_connection"), None, None)) else {
            panic!()
        };
        assert_eq!(
            n[1].map_value("Initiated", "True").as_deref(),
            Some("%%14593")
        );
        assert_eq!(
            n[1].map_value("Image", r"C:\Windows\System32\lsass.exe")
                .as_deref(),
            Some(r"\device\harddiskvolume?\Windows\System32\lsass.exe")
        );
        assert_eq!(n[1].map_value("Image", r"\lsass.exe"), None);
        let Mapping::Variants(s) = m.lookup(&ls(None, Some("security"), None)) else {
            panic!()
        };
        assert!(s[0].event_ids.is_empty());
        assert!(matches!(
            m.lookup(&ls(Some("file_access"), None, None)),
            Mapping::Unusable(_)
        ));
        assert!(matches!(
            m.lookup(&ls(Some("process_creation"), None, Some("linux"))),
            Mapping::Unusable(_)
        ));
        assert!(matches!(
            m.lookup(&ls(Some("no_such"), None, None)),
            Mapping::Unusable(_)
        ));
        assert_eq!(
            m.lookup(&ls(None, None, Some("windows"))),
            Mapping::AsWritten
        );
    }

    #[test]
    fn errors_name_the_file_or_the_entry() {
        let e = |t: &str| LogsourceMap::parse(t).unwrap_err().to_string();
        assert_eq!(
            e("category:\n  true: []\n"),
            "logsource.yaml: a category name is not text"
        );
        assert_eq!(
            e("service:\n  sysmon:\n    - channel: []\n"),
            "service sysmon: a variant has no channel"
        );
        assert_eq!(
            e("category:\n  x: 1\n"),
            "category x: expected a list of variants"
        );
        assert!(e("[").starts_with("logsource.yaml: "));
    }
}
