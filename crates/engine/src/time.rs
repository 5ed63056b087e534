//! Record timestamps: reading `TimeCreated` and formatting it for the timeline.

use jiff::tz::TimeZone;
use jiff::Timestamp;

/// How timestamps are written.
#[derive(Debug, Clone)]
pub struct TimeFormat {
    tz: TimeZone,
}

impl TimeFormat {
    /// UTC (`-U`).
    pub fn utc() -> Self {
        TimeFormat { tz: TimeZone::UTC }
    }

    /// The machine's local time zone (UTC when it cannot be determined).
    pub fn local() -> Self {
        TimeFormat {
            tz: TimeZone::try_system().unwrap_or(TimeZone::UTC),
        }
    }

    /// `YYYY-MM-DD HH:MM:SS.fff +hh:mm`, milliseconds truncated.
    pub fn format(&self, t: Timestamp) -> String {
        let z = t.to_zoned(self.tz.clone());
        let ms = z.subsec_nanosecond() / 1_000_000;
        let off = z.offset().seconds();
        let sign = if off < 0 { '-' } else { '+' };
        let off = off.unsigned_abs();
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} {sign}{:02}:{:02}",
            z.year(),
            z.month(),
            z.day(),
            z.hour(),
            z.minute(),
            z.second(),
            ms,
            off / 3600,
            (off % 3600) / 60
        )
    }
}

/// Parses a `SystemTime` such as `2019-03-19T23:47:14.870588Z` (or with an offset).
pub fn parse(s: &str) -> Option<Timestamp> {
    s.trim().parse::<Timestamp>().ok()
}

/// The timestamp rows get when a record has none: the Unix epoch, as Hayabusa does.
pub fn missing() -> Timestamp {
    Timestamp::UNIX_EPOCH
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_truncated_milliseconds_in_utc() {
        let t = parse("2019-03-19T23:47:14.8709999Z").unwrap();
        assert_eq!(
            TimeFormat::utc().format(t),
            "2019-03-19 23:47:14.870 +00:00"
        );
        assert!(parse("not a time").is_none());
    }
}
