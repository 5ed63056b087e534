//! Counts and time windows, the two quantities correlations (and legacy `| count()`
//! aggregations) compare: a leaf both parsers share.

/// A comparison on a count.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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
    pub fn holds(self, n: u64, bound: u64) -> bool {
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

/// Parses `30s`, `5m`, `1h`, `2d`, `1w`.
pub fn parse_timespan(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (num, unit) = s.split_at(s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len()));
    let n: u64 = num
        .parse()
        .map_err(|_| format!("timespan '{s}' is not <number><unit>"))?;
    let mult = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        "w" => 604_800,
        _ => {
            return Err(format!(
                "timespan '{s}' has an unknown unit (s, m, h, d, w)"
            ))
        }
    };
    Ok(n * mult)
}
