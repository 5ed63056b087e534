//! Legacy Sigma aggregations: `<condition> | count([field]) [by f1, f2] <op> N`, with
//! the detection's `timeframe`. They load as correlations over the rule itself.

use super::count::CountOp;
use crate::error::{ErrorKind, RuleError};

/// A parsed `| count()` clause.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Aggregation {
    /// `count(field)`: distinct values of the field; `count()`: events.
    pub field: Option<String>,
    /// `by` fields.
    pub group_by: Vec<String>,
    /// The comparison.
    pub op: CountOp,
    /// The bound.
    pub bound: u64,
}

/// Parses the text after the `|`.
pub fn parse(text: &str) -> Result<Aggregation, RuleError> {
    let t = text.trim();
    let err = || ErrorKind::Aggregation(t.to_string());
    let rest = t
        .strip_prefix("count")
        .ok_or_else(|| ErrorKind::UnsupportedAggregation(t.to_string()))?;
    let rest = rest.trim_start().strip_prefix('(').ok_or_else(err)?;
    let close = rest.find(')').ok_or_else(err)?;
    let field = rest[..close].trim();
    let field = (!field.is_empty()).then(|| field.to_string());
    let mut rest = rest[close + 1..].trim();
    let mut group_by = Vec::new();
    if let Some(r) = rest.strip_prefix("by ") {
        let end = r.find(['<', '>', '=', '!']).ok_or_else(err)?;
        group_by = r[..end]
            .split(',')
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        rest = r[end..].trim();
    }
    let (op, num) = [
        (">=", CountOp::Gte),
        ("<=", CountOp::Lte),
        ("==", CountOp::Eq),
        ("!=", CountOp::Neq),
        (">", CountOp::Gt),
        ("<", CountOp::Lt),
        ("=", CountOp::Eq),
    ]
    .iter()
    .find_map(|(s, op)| rest.strip_prefix(s).map(|n| (*op, n)))
    .ok_or_else(err)?;
    let num = num.split('#').next().unwrap_or("").trim();
    let bound = num.parse().map_err(|_| err())?;
    Ok(Aggregation {
        field,
        group_by,
        op,
        bound,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_count_forms() {
        let a = parse(" count(TargetUserName) by IpAddress, Computer >= 5 #note").unwrap();
        assert_eq!(a.field.as_deref(), Some("TargetUserName"));
        assert_eq!(a.group_by, vec!["IpAddress", "Computer"]);
        assert_eq!((a.op, a.bound), (CountOp::Gte, 5));
        let b = parse("count() > 10").unwrap();
        assert_eq!(
            (b.field, b.group_by.len(), b.op, b.bound),
            (None, 0, CountOp::Gt, 10)
        );
        assert!(parse("near a and b").is_err());
        assert!(parse("count() by X").is_err());
    }
}
