//! The time modifiers of Sigma 2.1 (`minute`, `hour`, `day`, `week`, `month`, `year`):
//! the field's value read as a date and time, in UTC, and one part of it compared with
//! the rule's number.

use jiff::civil::DateTime;
use jiff::tz::TimeZone;
use jiff::Timestamp;

/// The part of a date a time modifier compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum TimePart {
    /// `minute`: 0–59.
    Minute,
    /// `hour`: 0–23.
    Hour,
    /// `day`: day of the month, 1–31.
    Day,
    /// `week`: ISO 8601 week of the year, 1–53.
    Week,
    /// `month`: 1–12.
    Month,
    /// `year`.
    Year,
}

impl TimePart {
    /// The part a modifier name stands for.
    pub fn from_modifier(name: &str) -> Option<TimePart> {
        Some(match name {
            "minute" => TimePart::Minute,
            "hour" => TimePart::Hour,
            "day" => TimePart::Day,
            "week" => TimePart::Week,
            "month" => TimePart::Month,
            "year" => TimePart::Year,
            _ => return None,
        })
    }

    /// This part of `value` read as a date and time: RFC 3339 (an offset is turned
    /// into UTC), or without an offset (then taken as UTC), `T` or a space between date
    /// and time. `None` when the value is no date.
    pub fn of(self, value: &str) -> Option<i64> {
        let value = value.trim();
        let utc = match value.parse::<Timestamp>() {
            Ok(t) => t.to_zoned(TimeZone::UTC).datetime(),
            Err(_) => value.parse::<DateTime>().ok()?,
        };
        Some(match self {
            TimePart::Minute => i64::from(utc.minute()),
            TimePart::Hour => i64::from(utc.hour()),
            TimePart::Day => i64::from(utc.day()),
            TimePart::Week => i64::from(utc.date().iso_week_date().week()),
            TimePart::Month => i64::from(utc.month()),
            TimePart::Year => i64::from(utc.year()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_are_read_in_utc() {
        let t = "2024-12-30T23:59:58.123456Z";
        assert_eq!(TimePart::Minute.of(t), Some(59));
        assert_eq!(TimePart::Hour.of(t), Some(23));
        assert_eq!(TimePart::Day.of(t), Some(30));
        assert_eq!(TimePart::Week.of(t), Some(1), "ISO week 1 of 2025");
        assert_eq!(TimePart::Month.of(t), Some(12));
        assert_eq!(TimePart::Year.of(t), Some(2024));
        // An offset is turned into UTC: 01:30 at +02:00 is 23:30 the day before.
        let off = "2024-03-01T01:30:00+02:00";
        assert_eq!(TimePart::Hour.of(off), Some(23));
        assert_eq!(TimePart::Day.of(off), Some(29));
        assert_eq!(TimePart::Month.of(off), Some(2));
        assert_eq!(TimePart::Hour.of("2024-03-01 04:05:06.789"), Some(4));
        assert_eq!(TimePart::Hour.of("yesterday"), None);
        assert_eq!(TimePart::from_modifier("week"), Some(TimePart::Week));
        assert_eq!(TimePart::from_modifier("weeks"), None);
    }
}
