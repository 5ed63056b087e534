//! Sigma v2 correlation rules (`event_count`, `value_count`, `temporal`,
//! `temporal_ordered`) as data: which rules feed them, how results are grouped and
//! windowed, and the condition on the count. The engine evaluates them after a scan.

mod aggregation;
mod count;

pub use aggregation::{parse as parse_aggregation, Aggregation};
pub use count::{parse_timespan, CountOp};

use crate::error::{ErrorKind, ErrorKind::Malformed, RuleError};
use crate::meta::RuleMeta;
use serde_yaml::{Mapping, Value as Yaml};

/// Correlation types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CorrelationKind {
    /// Number of events per group and window.
    EventCount,
    /// Number of distinct values of a field per group and window.
    ValueCount,
    /// All referenced rules fire in the window, any order.
    Temporal,
    /// All referenced rules fire in the window, in the listed order.
    TemporalOrdered,
}

/// A loaded correlation rule.
#[derive(Debug, Clone)]
pub struct Correlation {
    /// Metadata for output.
    pub meta: RuleMeta,
    /// The type.
    pub kind: CorrelationKind,
    /// Referenced rules, by id or name, resolved by the loader into rule indices.
    pub rule_refs: Vec<String>,
    /// Resolved indices into the rule set.
    pub rules: Vec<u32>,
    /// `group-by` fields (rule field names).
    pub group_by: Vec<String>,
    /// `timespan` in seconds; `None` for a legacy `count()` without `timeframe`
    /// (the whole scan is one window).
    pub timespan_secs: Option<u64>,
    /// Conditions, all of which must hold (a range has two).
    pub conditions: Vec<(CountOp, u64)>,
    /// `condition.field` for `value_count`.
    pub field: Option<String>,
    /// `generate`: the referenced rules also emit their own rows.
    pub generate: bool,
    /// The document's position in its file (1-based), for errors; 0 for the
    /// correlation a legacy `count()` rule stands for.
    pub document: usize,
}

fn strings(v: Option<&Yaml>) -> Vec<String> {
    match v {
        Some(Yaml::String(s)) => vec![s.clone()],
        Some(Yaml::Sequence(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => Vec::new(),
    }
}

/// The correlation a legacy `| count()` rule stands for: over rule `rule` itself.
pub fn from_aggregation(
    meta: RuleMeta,
    rule: u32,
    a: &Aggregation,
    timeframe: Option<u64>,
) -> Correlation {
    Correlation {
        kind: if a.field.is_some() {
            CorrelationKind::ValueCount
        } else {
            CorrelationKind::EventCount
        },
        rule_refs: vec![meta.id.to_string()],
        rules: vec![rule],
        group_by: a.group_by.clone(),
        timespan_secs: timeframe,
        conditions: vec![(a.op, a.bound)],
        field: a.field.clone(),
        generate: false,
        document: 0,
        meta,
    }
}

/// Reads a correlation document (`meta` already read from it).
pub fn parse(doc: &Mapping, meta: RuleMeta) -> Result<Correlation, RuleError> {
    let Some(Yaml::Mapping(c)) = doc.get("correlation") else {
        return Err(Malformed("correlation is not a map").into());
    };
    let kind = match c.get("type").and_then(Yaml::as_str) {
        Some("event_count") => CorrelationKind::EventCount,
        Some("value_count") => CorrelationKind::ValueCount,
        Some("temporal") => CorrelationKind::Temporal,
        Some("temporal_ordered") => CorrelationKind::TemporalOrdered,
        Some(other) => return Err(ErrorKind::UnsupportedCorrelation(other.to_string()).into()),
        None => return Err(Malformed("correlation has no type").into()),
    };
    let rule_refs = strings(c.get("rules"));
    if rule_refs.is_empty() {
        return Err(Malformed("correlation names no rules").into());
    }
    let timespan_secs = match c.get("timespan").or_else(|| c.get("timeframe")) {
        Some(Yaml::String(s)) => Some(parse_timespan(s)?),
        _ => return Err(Malformed("correlation has no timespan").into()),
    };
    let mut conditions = Vec::new();
    let mut field = None;
    match c.get("condition") {
        Some(Yaml::Mapping(m)) => {
            for (k, v) in m {
                let op = match k.as_str() {
                    Some("gt") => CountOp::Gt,
                    Some("gte") => CountOp::Gte,
                    Some("lt") => CountOp::Lt,
                    Some("lte") => CountOp::Lte,
                    Some("eq") => CountOp::Eq,
                    Some("neq") => CountOp::Neq,
                    Some("field") => {
                        field = v.as_str().map(str::to_string);
                        continue;
                    }
                    _ => return Err(ErrorKind::CorrelationKey(format!("{k:?}")).into()),
                };
                let n = v
                    .as_u64()
                    .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                    .ok_or_else(|| ErrorKind::CorrelationBound(format!("{k:?}")))?;
                conditions.push((op, n));
            }
        }
        None if matches!(
            kind,
            CorrelationKind::Temporal | CorrelationKind::TemporalOrdered
        ) =>
        {
            conditions.push((CountOp::Gte, rule_refs.len() as u64));
        }
        _ => return Err(Malformed("correlation has no condition map").into()),
    }
    if conditions.is_empty() {
        return Err(Malformed("correlation condition has no comparison").into());
    }
    if kind == CorrelationKind::ValueCount && field.is_none() {
        return Err(Malformed("value_count needs condition.field").into());
    }
    Ok(Correlation {
        meta,
        kind,
        rule_refs,
        rules: Vec::new(),
        group_by: strings(c.get("group-by")),
        timespan_secs,
        conditions,
        field,
        generate: c.get("generate").and_then(Yaml::as_bool).unwrap_or(false),
        document: 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(yaml: &str) -> Result<Correlation, String> {
        let doc: Mapping = serde_yaml::from_str(yaml).unwrap();
        parse(&doc, RuleMeta::default()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_correlation_reads_its_rules_window_and_conditions() {
        let c = parse_text("correlation:\n  type: value_count\n  rules: [a, b]\n  group-by: [User]\n  timespan: 10m\n  condition: {gte: 3, lt: '9', field: Host}\n").unwrap();
        assert_eq!(c.kind, CorrelationKind::ValueCount);
        assert_eq!(c.rule_refs, ["a", "b"]);
        assert_eq!(c.group_by, ["User"]);
        assert_eq!(c.timespan_secs, Some(600));
        assert_eq!(c.conditions, [(CountOp::Gte, 3), (CountOp::Lt, 9)]);
        assert_eq!(c.field.as_deref(), Some("Host"));
        let t = parse_text("correlation:\n  type: temporal\n  rules: [a, b]\n  timespan: 1h\n")
            .unwrap();
        assert_eq!(t.conditions, [(CountOp::Gte, 2)], "all rules by default");
    }

    #[test]
    fn errors_keep_the_report_text() {
        let e = |body: &str| parse_text(&format!("correlation:\n{body}")).unwrap_err();
        assert_eq!(
            e("  type: near\n"),
            "correlation type 'near' is not supported"
        );
        assert_eq!(e("  rules: [a]\n"), "correlation has no type");
        assert_eq!(e("  type: event_count\n"), "correlation names no rules");
        assert_eq!(
            e("  type: event_count\n  rules: a\n  timespan: 1h\n  condition: {over: 1}\n"),
            "unknown correlation condition key String(\"over\")"
        );
        assert_eq!(
            e("  type: event_count\n  rules: a\n  timespan: 1h\n  condition: {gt: x}\n"),
            "correlation condition String(\"gt\") is not a whole number"
        );
        assert_eq!(
            e("  type: value_count\n  rules: a\n  timespan: 1h\n  condition: {gt: 1}\n"),
            "value_count needs condition.field"
        );
    }
}
