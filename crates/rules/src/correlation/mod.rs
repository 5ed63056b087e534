//! Sigma v2.1 correlation rules (`event_count`, `value_count`, `temporal`,
//! `temporal_ordered`, `value_sum`, `value_avg`, `value_percentile`) as data: which
//! rules or correlations feed them, how results are grouped (with aliases) and
//! windowed, and the condition on the measure. The engine evaluates them after a scan.

mod aggregation;
mod count;

pub use aggregation::{parse as parse_aggregation, Aggregation};
pub use count::{parse_timespan, CountOp};

use crate::error::{ErrorKind, ErrorKind::Malformed, RuleError};
use crate::meta::RuleMeta;
use yaml_serde::{Mapping, Value as Yaml};

/// Correlation types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CorrelationKind {
    /// Number of events per group and window.
    EventCount,
    /// Number of distinct values of a field (or of a list of fields) per group and window.
    ValueCount,
    /// All referenced rules fire in the window, any order.
    Temporal,
    /// All referenced rules fire in the window, in the listed order.
    TemporalOrdered,
    /// Sum of a numeric field per group and window (v2.1).
    ValueSum,
    /// Mean of a numeric field per group and window (v2.1).
    ValueAvg,
    /// A percentile of a numeric field per group and window (v2.1).
    ValuePercentile,
}

/// Where a correlation input's events come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CorrelationSource {
    /// A rule (an index into the rule set's rules; one per log-source variant).
    Rule(u32),
    /// Another correlation (an index into the rule set's correlations): each window
    /// it fires on is one event, with its group-by values as fields.
    Correlation(u32),
}

/// How an input finds one group-by or value field in its events.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum InputKey {
    /// A record field (after aliases and the rule's log-source field mapping).
    Field(crate::FieldId),
    /// A position in the chained correlation's group-by values.
    Group(usize),
}

/// One resolved input of a correlation: a rule (variant) or a correlation, which of the
/// correlation's references it answers to, and where its group-by and value fields are.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CorrelationInput {
    /// The rule or correlation.
    pub source: CorrelationSource,
    /// Index into `rule_refs`.
    pub reference: u16,
    /// One key per `group-by` entry; `None` when the source has no such field (its
    /// events are left out).
    pub group: Vec<Option<InputKey>>,
    /// One key per `condition.field` entry.
    pub values: Vec<Option<InputKey>>,
}

/// One entry of `aliases`: the alias, and for each rule reference the field it names.
pub type Alias = (String, Vec<(String, String)>);

/// A loaded correlation rule.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Correlation {
    /// Metadata for output.
    pub meta: RuleMeta,
    /// The type.
    pub kind: CorrelationKind,
    /// Referenced rules or correlations, by id or name.
    pub rule_refs: Vec<String>,
    /// Resolved inputs (several per reference when a rule has log-source variants).
    pub inputs: Vec<CorrelationInput>,
    /// `group-by` fields (rule field names or alias names).
    pub group_by: Vec<String>,
    /// `aliases`: alias name → (reference as written → that rule's field).
    pub aliases: Vec<Alias>,
    /// `timespan` in seconds; `None` for a legacy `count()` without `timeframe`
    /// (the whole scan is one window).
    pub timespan_secs: Option<u64>,
    /// Conditions, all of which must hold (a range has two).
    pub conditions: Vec<(CountOp, f64)>,
    /// `condition.field`: one field, or a list whose values are taken together.
    pub fields: Vec<String>,
    /// `condition.percentile` for `value_percentile` (0–100).
    pub percentile: Option<f64>,
    /// `generate`: the referenced rules also emit their own rows.
    pub generate: bool,
    /// Whether this correlation emits rows (false when a correlation without
    /// `generate` refers to it).
    pub emits: bool,
    /// The document's position in its file (1-based), for errors; 0 for the
    /// correlation a legacy `count()` rule stands for.
    pub document: usize,
}

impl Correlation {
    /// The field name input `reference` reads for group-by entry `name`: the alias's
    /// field for that reference when `name` is an alias, else `name`. `None` when the
    /// alias does not name the reference.
    pub fn group_field(&self, name: &str, reference: &str) -> Option<String> {
        match self.aliases.iter().find(|(a, _)| a == name) {
            Some((_, per_rule)) => per_rule
                .iter()
                .find(|(r, _)| r == reference)
                .map(|(_, f)| f.clone()),
            None => Some(name.to_string()),
        }
    }
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
        inputs: vec![CorrelationInput {
            source: CorrelationSource::Rule(rule),
            reference: 0,
            group: Vec::new(),
            values: Vec::new(),
        }],
        group_by: a.group_by.clone(),
        aliases: Vec::new(),
        timespan_secs: timeframe,
        conditions: vec![(a.op, a.bound as f64)],
        fields: a.field.iter().cloned().collect(),
        percentile: None,
        generate: false,
        emits: true,
        document: 0,
        meta,
    }
}

fn number(v: &Yaml) -> Option<f64> {
    v.as_f64()
        .or_else(|| v.as_u64().map(|n| n as f64))
        .or_else(|| v.as_i64().map(|n| n as f64))
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .filter(|n: &f64| n.is_finite())
}

fn aliases(v: Option<&Yaml>) -> Result<Vec<Alias>, RuleError> {
    let Some(v) = v else {
        return Ok(Vec::new());
    };
    let Yaml::Mapping(m) = v else {
        return Err(Malformed("correlation aliases is not a map").into());
    };
    let mut out = Vec::new();
    for (alias, per_rule) in m {
        let (Some(alias), Yaml::Mapping(per_rule)) = (alias.as_str(), per_rule) else {
            return Err(Malformed("correlation alias is not a map of rule to field").into());
        };
        let mut fields = Vec::new();
        for (r, f) in per_rule {
            match (r.as_str(), f.as_str()) {
                (Some(r), Some(f)) => fields.push((r.to_string(), f.to_string())),
                _ => {
                    return Err(Malformed("correlation alias is not a map of rule to field").into())
                }
            }
        }
        out.push((alias.to_string(), fields));
    }
    Ok(out)
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
        Some("value_sum") => CorrelationKind::ValueSum,
        Some("value_avg") => CorrelationKind::ValueAvg,
        Some("value_percentile") => CorrelationKind::ValuePercentile,
        Some(other) => return Err(ErrorKind::UnsupportedCorrelation(other.to_string()).into()),
        None => return Err(Malformed("correlation has no type").into()),
    };
    let temporal = matches!(
        kind,
        CorrelationKind::Temporal | CorrelationKind::TemporalOrdered
    );
    let rule_refs = strings(c.get("rules"));
    if rule_refs.is_empty() {
        return Err(Malformed("correlation names no rules").into());
    }
    if rule_refs.len() > MAX_REFS {
        return Err(Malformed("correlation names more than 32 rules").into());
    }
    let timespan_secs = match c.get("timespan").or_else(|| c.get("timeframe")) {
        Some(Yaml::String(s)) => Some(parse_timespan(s)?),
        _ => return Err(Malformed("correlation has no timespan").into()),
    };
    let mut conditions = Vec::new();
    let mut fields = Vec::new();
    let mut percentile = None;
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
                        fields = strings(Some(v));
                        continue;
                    }
                    Some("percentile") => {
                        percentile = number(v).filter(|p| (0.0..=100.0).contains(p));
                        if percentile.is_none() {
                            return Err(ErrorKind::CorrelationBound(format!("{k:?}")).into());
                        }
                        continue;
                    }
                    _ => return Err(ErrorKind::CorrelationKey(format!("{k:?}")).into()),
                };
                let n = number(v).ok_or_else(|| ErrorKind::CorrelationBound(format!("{k:?}")))?;
                conditions.push((op, n));
            }
        }
        None if temporal => {}
        _ => return Err(Malformed("correlation has no condition map").into()),
    }
    if conditions.is_empty() {
        if !temporal {
            return Err(Malformed("correlation condition has no comparison").into());
        }
        // As pySigma: every referenced rule.
        conditions.push((CountOp::Gte, rule_refs.len() as f64));
    }
    let needs_field = matches!(
        kind,
        CorrelationKind::ValueCount
            | CorrelationKind::ValueSum
            | CorrelationKind::ValueAvg
            | CorrelationKind::ValuePercentile
    );
    if needs_field && fields.is_empty() {
        return Err(Malformed("this correlation type needs condition.field").into());
    }
    if kind != CorrelationKind::ValueCount && fields.len() > 1 {
        return Err(Malformed("only value_count takes a list in condition.field").into());
    }
    if kind == CorrelationKind::ValuePercentile && percentile.is_none() {
        return Err(Malformed("value_percentile needs condition.percentile").into());
    }
    // v2.1 puts `generate` at the top level of the document; v2.0 inside `correlation`.
    let generate = doc
        .get("generate")
        .or_else(|| c.get("generate"))
        .and_then(Yaml::as_bool)
        .unwrap_or(false);
    Ok(Correlation {
        meta,
        kind,
        rule_refs,
        inputs: Vec::new(),
        group_by: strings(c.get("group-by")),
        aliases: aliases(c.get("aliases"))?,
        timespan_secs,
        conditions,
        fields,
        percentile,
        generate,
        emits: true,
        document: 0,
    })
}

/// The most references a correlation may have (temporal types track them as bits).
pub const MAX_REFS: usize = 32;

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_text(yaml: &str) -> Result<Correlation, String> {
        let doc: Mapping = yaml_serde::from_str(yaml).unwrap();
        parse(&doc, RuleMeta::default()).map_err(|e| e.to_string())
    }

    #[test]
    fn a_correlation_reads_its_rules_window_and_conditions() {
        let c = parse_text("correlation:\n  type: value_count\n  rules: [a, b]\n  group-by: [User]\n  timespan: 10m\n  condition: {gte: 3, lt: '9', field: Host}\n").unwrap();
        assert_eq!(c.kind, CorrelationKind::ValueCount);
        assert_eq!(c.rule_refs, ["a", "b"]);
        assert_eq!(c.group_by, ["User"]);
        assert_eq!(c.timespan_secs, Some(600));
        assert_eq!(c.conditions, [(CountOp::Gte, 3.0), (CountOp::Lt, 9.0)]);
        assert_eq!(c.fields, ["Host"]);
        let t = parse_text("correlation:\n  type: temporal\n  rules: [a, b]\n  timespan: 1h\n")
            .unwrap();
        assert_eq!(t.conditions, [(CountOp::Gte, 2.0)], "all rules by default");
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
            "this correlation type needs condition.field"
        );
    }

    #[test]
    fn v2_1_forms_parse() {
        let c = parse_text("generate: true\ncorrelation:\n  type: value_count\n  rules: [a, b]\n  group-by: [ip]\n  aliases:\n    ip: {a: SourceIp, b: IpAddress}\n  timespan: 1M\n  condition: {gt: 1, lte: 4, field: [User, Host]}\n").unwrap();
        assert!(c.generate, "top-level generate");
        assert_eq!(c.fields, ["User", "Host"]);
        assert_eq!(c.timespan_secs, Some(30 * 86_400));
        assert_eq!(c.group_field("ip", "b").as_deref(), Some("IpAddress"));
        assert_eq!(c.group_field("ip", "c"), None);
        assert_eq!(c.group_field("Computer", "c").as_deref(), Some("Computer"));
        let p = parse_text("correlation:\n  type: value_percentile\n  rules: a\n  timespan: 1h\n  condition: {field: Bytes, percentile: 95, gte: 1.5}\n").unwrap();
        assert_eq!(
            (p.kind, p.percentile, p.conditions),
            (
                CorrelationKind::ValuePercentile,
                Some(95.0),
                vec![(CountOp::Gte, 1.5)]
            )
        );
        let t = parse_text("correlation:\n  type: temporal\n  rules: [a, b, c]\n  timespan: 1h\n  condition: {gte: 2}\n").unwrap();
        assert_eq!(
            t.conditions,
            [(CountOp::Gte, 2.0)],
            "a temporal condition is kept"
        );
        let e = |body: &str| parse_text(&format!("correlation:\n{body}")).unwrap_err();
        assert_eq!(
            e("  type: value_sum\n  rules: a\n  timespan: 1h\n  condition: {gt: 1, field: [A, B]}\n"),
            "only value_count takes a list in condition.field"
        );
        assert_eq!(
            e("  type: value_percentile\n  rules: a\n  timespan: 1h\n  condition: {gt: 1, field: A}\n"),
            "value_percentile needs condition.percentile"
        );
    }
}
