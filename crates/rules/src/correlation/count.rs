//! Counts and time windows, the two quantities correlations (and legacy `| count()`
//! aggregations) compare: a leaf both parsers share, and the matcher's `gt`, `gte`,
//! `lt` and `lte` modifiers too.

use crate::error::{ErrorKind, RuleError};

/// A comparison of a number (a count, a field's value) with a bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum CountOp {
    /// `gt`
    Gt,
    /// `gte`
    Gte,
    /// `lt`
    Lt,
    /// `lte`
    Lte,
    /// `eq`
    Eq,
    /// `neq`
    Neq,
}

impl CountOp {
    /// Whether `n` satisfies `op bound`.
    pub fn holds(self, n: f64, bound: f64) -> bool {
        match self {
            CountOp::Gt => n > bound,
            CountOp::Gte => n >= bound,
            CountOp::Lt => n < bound,
            CountOp::Lte => n <= bound,
            CountOp::Eq => n == bound,
            CountOp::Neq => n != bound,
        }
    }
}

/// Parses `30s`, `5m`, `1h`, `2d`, `1w`, and as pySigma `1M` (30 days) and `1y`
/// (365 days).
pub fn parse_timespan(s: &str) -> Result<u64, RuleError> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| ErrorKind::Timespan(s.to_string()))?;
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        "M" => 30 * 86_400,
        "y" => 365 * 86_400,
        _ => return Err(ErrorKind::TimespanUnit(s.to_string()).into()),
    };
    n.checked_mul(mult)
        .ok_or_else(|| ErrorKind::Timespan(s.to_string()).into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timespans_in_each_unit() {
        assert_eq!(parse_timespan(" 30s ").unwrap(), 30);
        assert_eq!(parse_timespan("5m").unwrap(), 300);
        assert_eq!(parse_timespan("2h").unwrap(), 7200);
        assert_eq!(parse_timespan("1d").unwrap(), 86_400);
        assert_eq!(parse_timespan("1w").unwrap(), 604_800);
        assert_eq!(
            parse_timespan("m").unwrap_err().to_string(),
            "timespan 'm' is not <number><unit>"
        );
        assert_eq!(
            parse_timespan("5Y").unwrap_err().to_string(),
            "timespan '5Y' has an unknown unit (s, m, h, d, w, M, y)"
        );
    }

    #[test]
    fn count_comparisons() {
        assert!(CountOp::Gt.holds(3.0, 2.0) && !CountOp::Gt.holds(2.0, 2.0));
        assert!(CountOp::Gte.holds(2.0, 2.0) && CountOp::Lte.holds(2.0, 2.0));
        assert!(CountOp::Lt.holds(1.0, 2.0) && !CountOp::Lt.holds(2.0, 2.0));
        assert!(CountOp::Eq.holds(2.0, 2.0) && CountOp::Neq.holds(1.0, 2.0));
        assert_eq!(parse_timespan("2y").unwrap(), 2 * 365 * 86_400);
    }
}
