//! A record's own time: its `SystemTime` parsed, and the time a record without one gets.

use jiff::Timestamp;

/// Parses a `SystemTime` such as `2019-03-19T23:47:14.870588Z` (or with an offset).
pub fn parse_timestamp(s: &str) -> Option<Timestamp> {
    s.trim().parse::<Timestamp>().ok()
}

/// The timestamp rows get when a record has none: the Unix epoch, as Hayabusa does.
pub fn missing_timestamp() -> Timestamp {
    Timestamp::UNIX_EPOCH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_times_parse_with_fractions_and_offsets() {
        let t = parse_timestamp(" 2019-03-19T23:47:14.870588Z ").unwrap();
        assert_eq!(t.as_microsecond(), 1_553_039_234_870_588);
        let o = parse_timestamp("2019-03-20T08:47:14.870588+09:00").unwrap();
        assert_eq!(o, t);
        assert_eq!(parse_timestamp("2019-03-19 nonsense"), None);
        assert_eq!(missing_timestamp().as_second(), 0);
    }
}
