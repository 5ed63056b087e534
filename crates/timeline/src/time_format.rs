//! Record timestamps: reading `TimeCreated` and formatting it for the timeline.

use jiff::tz::TimeZone;
use jiff::Timestamp;
use scanner_input::push_padded;

/// Hayabusa's timestamp layouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimeStyle {
    /// `2016-09-21 03:40:37.088 +00:00` (the default).
    #[default]
    Standard,
    /// `-O`: `2016-09-21T03:40:37.088867Z`, always UTC, to the microsecond (as
    /// Hayabusa, whose event parser keeps microseconds), with 0, 3 or 6 fractional
    /// digits: as few as show that value exactly (chrono's `%.f`, which Hayabusa uses).
    Iso8601,
    /// `--RFC-3339`: `2016-09-21 03:40:37.088867+00:00`.
    Rfc3339,
    /// `--RFC-2822`: `Wed, 21 Sep 2016 03:40:37 +00:00`; the day without padding
    /// (`Sat, 7 Aug 2021`), the single space RFC 2822 recommends, where Hayabusa's
    /// chrono `%e` writes two.
    Rfc2822,
    /// `--US-time`: `09-21-2016 03:40:37.088 AM +00:00`.
    UsTime,
    /// `--US-military-time`: `09-21-2016 03:40:37.088 +00:00`.
    UsMilitary,
    /// `--European-time`: `21-09-2016 03:40:37.088 +00:00`.
    European,
}

/// How timestamps are written.
#[derive(Debug, Clone)]
pub struct TimeFormat {
    tz: TimeZone,
    style: TimeStyle,
}

const DAYS: [&str; 7] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
const MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];

impl TimeFormat {
    /// UTC (`-U`).
    pub fn utc() -> Self {
        TimeFormat {
            tz: TimeZone::UTC,
            style: TimeStyle::Standard,
        }
    }

    /// The machine's local time zone (UTC when it cannot be determined).
    pub fn local() -> Self {
        TimeFormat {
            tz: TimeZone::try_system().unwrap_or(TimeZone::UTC),
            style: TimeStyle::Standard,
        }
    }

    /// In a given time zone.
    pub fn in_zone(tz: TimeZone) -> Self {
        TimeFormat {
            tz,
            style: TimeStyle::Standard,
        }
    }

    /// Sets the layout; ISO-8601 is always written in UTC.
    pub fn with_style(mut self, style: TimeStyle) -> Self {
        self.style = style;
        if style == TimeStyle::Iso8601 {
            self.tz = TimeZone::UTC;
        }
        self
    }

    /// The time zone timestamps are written in.
    pub fn zone(&self) -> &TimeZone {
        &self.tz
    }

    /// The timestamp in the chosen zone and layout; fractions are truncated.
    pub fn format(&self, t: Timestamp) -> String {
        let z = t.to_zoned(self.tz.clone());
        let ns = z.subsec_nanosecond().max(0) as u32;
        let ms = ns / 1_000_000;
        let off = z.offset().seconds();
        let sign = if off < 0 { '-' } else { '+' };
        let off = off.unsigned_abs();
        let (y, mo, d) = (z.year(), z.month(), z.day());
        let (h, mi, s) = (z.hour(), z.minute(), z.second());
        if self.style == TimeStyle::Standard && (0..=9999).contains(&y) {
            // The default layout, once per row written: digits pushed, no `fmt`.
            let mut out = String::with_capacity(30);
            let fields = [
                (y as u64, 4, '-'),
                (mo as u64, 2, '-'),
                (d as u64, 2, ' '),
                (h as u64, 2, ':'),
                (mi as u64, 2, ':'),
                (s as u64, 2, '.'),
                (u64::from(ms), 3, ' '),
            ];
            for (v, width, then) in fields {
                push_padded(&mut out, v, width);
                out.push(then);
            }
            out.push(sign);
            push_padded(&mut out, u64::from(off / 3600), 2);
            out.push(':');
            push_padded(&mut out, u64::from(off % 3600 / 60), 2);
            return out;
        }
        let zone = format!("{sign}{:02}:{:02}", off / 3600, (off % 3600) / 60);
        match self.style {
            TimeStyle::Standard => {
                format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{ms:03} {zone}")
            }
            TimeStyle::Iso8601 => {
                let us = ns / 1000;
                let frac = if us == 0 {
                    String::new()
                } else if us % 1000 == 0 {
                    format!(".{:03}", us / 1000)
                } else {
                    format!(".{us:06}")
                };
                format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}{frac}Z")
            }
            TimeStyle::Rfc3339 => format!(
                "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}.{:06}{zone}",
                ns / 1000
            ),
            TimeStyle::Rfc2822 => {
                let wd = DAYS[z.weekday().to_monday_zero_offset() as usize];
                let mon = MONTHS[(mo - 1) as usize];
                format!("{wd}, {d} {mon} {y:04} {h:02}:{mi:02}:{s:02} {zone}")
            }
            TimeStyle::UsTime => {
                let (h12, ampm) = match h {
                    0 => (12, "AM"),
                    1..=11 => (h, "AM"),
                    12 => (12, "PM"),
                    _ => (h - 12, "PM"),
                };
                format!("{mo:02}-{d:02}-{y:04} {h12:02}:{mi:02}:{s:02}.{ms:03} {ampm} {zone}")
            }
            TimeStyle::UsMilitary => {
                format!("{mo:02}-{d:02}-{y:04} {h:02}:{mi:02}:{s:02}.{ms:03} {zone}")
            }
            TimeStyle::European => {
                format!("{d:02}-{mo:02}-{y:04} {h:02}:{mi:02}:{s:02}.{ms:03} {zone}")
            }
        }
    }

    /// The date alone, in the chosen zone, in the layout's order of day, month, year.
    pub fn date(&self, t: Timestamp) -> String {
        let z = t.to_zoned(self.tz.clone());
        let (y, mo, d) = (z.year(), z.month(), z.day());
        match self.style {
            TimeStyle::UsTime | TimeStyle::UsMilitary => format!("{mo:02}-{d:02}-{y:04}"),
            TimeStyle::European => format!("{d:02}-{mo:02}-{y:04}"),
            TimeStyle::Rfc2822 => format!("{d} {} {y:04}", MONTHS[(mo - 1) as usize]),
            _ => format!("{y:04}-{mo:02}-{d:02}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_input::parse_timestamp as parse;

    #[test]
    fn formats_truncated_milliseconds_in_utc() {
        let t = parse("2019-03-19T23:47:14.8709999Z").unwrap();
        assert_eq!(
            TimeFormat::utc().format(t),
            "2019-03-19 23:47:14.870 +00:00"
        );
        assert!(parse("not a time").is_none());
    }

    #[test]
    fn the_standard_layout_is_written_as_fmt_writes_it() {
        let zones = [
            TimeZone::UTC,
            TimeZone::fixed(jiff::tz::offset(9)),
            TimeZone::fixed(jiff::tz::Offset::from_seconds(-(5 * 3600 + 30 * 60)).unwrap()),
        ];
        let mut t = parse("0001-01-01T00:00:00Z").unwrap();
        let step = jiff::SignedDuration::new(86_400 * 37 + 3_661, 987_654_321);
        while t < parse("9999-12-30T00:00:00Z").unwrap() {
            for tz in &zones {
                let z = t.to_zoned(tz.clone());
                let off = z.offset().seconds();
                let sign = if off < 0 { '-' } else { '+' };
                let off = off.unsigned_abs();
                let want = format!(
                    "{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:03} {sign}{:02}:{:02}",
                    z.year(),
                    z.month(),
                    z.day(),
                    z.hour(),
                    z.minute(),
                    z.second(),
                    z.subsec_nanosecond() / 1_000_000,
                    off / 3600,
                    off % 3600 / 60
                );
                assert_eq!(TimeFormat::in_zone(tz.clone()).format(t), want);
            }
            match t.checked_add(step) {
                Ok(next) => t = next,
                Err(_) => break,
            }
        }
        let mut out = String::new();
        push_padded(&mut out, 0, 3);
        push_padded(&mut out, 12345, 2);
        push_padded(&mut out, u64::MAX, 1);
        push_padded(&mut out, 0, 1);
        assert_eq!(out, "00012345184467440737095516150");
    }

    #[test]
    fn every_style_writes_hayabusas_layout() {
        let t = parse("2016-09-21T03:40:37.0888679Z").unwrap();
        let f = |s| TimeFormat::utc().with_style(s).format(t);
        assert_eq!(f(TimeStyle::Standard), "2016-09-21 03:40:37.088 +00:00");
        assert_eq!(f(TimeStyle::Iso8601), "2016-09-21T03:40:37.088867Z");
        assert_eq!(f(TimeStyle::Rfc3339), "2016-09-21 03:40:37.088867+00:00");
        assert_eq!(f(TimeStyle::Rfc2822), "Wed, 21 Sep 2016 03:40:37 +00:00");
        assert_eq!(f(TimeStyle::UsTime), "09-21-2016 03:40:37.088 AM +00:00");
        assert_eq!(f(TimeStyle::UsMilitary), "09-21-2016 03:40:37.088 +00:00");
        assert_eq!(f(TimeStyle::European), "21-09-2016 03:40:37.088 +00:00");
        let pm = parse("2016-09-01T15:04:05.5Z").unwrap();
        let us = TimeFormat::utc().with_style(TimeStyle::UsTime);
        assert_eq!(us.format(pm), "09-01-2016 03:04:05.500 PM +00:00");
        let iso = TimeFormat::utc().with_style(TimeStyle::Iso8601);
        assert_eq!(iso.format(pm), "2016-09-01T15:04:05.500Z");
        assert_eq!(
            iso.format(parse("2016-09-01T15:04:05.088867Z").unwrap()),
            "2016-09-01T15:04:05.088867Z"
        );
        let rfc = TimeFormat::utc().with_style(TimeStyle::Rfc2822);
        assert_eq!(rfc.format(pm), "Thu, 1 Sep 2016 15:04:05 +00:00");
        let tokyo = TimeFormat::in_zone(jiff::tz::TimeZone::fixed(jiff::tz::offset(9)));
        assert_eq!(tokyo.format(t), "2016-09-21 12:40:37.088 +09:00");
        assert_eq!(
            tokyo.with_style(TimeStyle::Iso8601).format(t),
            "2016-09-21T03:40:37.088867Z"
        );
        // Microseconds, never more: a whole millisecond in 3 digits, none for a whole
        // second, 6 otherwise (the 100 ns of the event's FILETIME dropped).
        for (time, want) in [
            ("2016-09-01T15:04:05.0000009Z", "2016-09-01T15:04:05Z"),
            ("2016-09-01T15:04:05.1200009Z", "2016-09-01T15:04:05.120Z"),
            (
                "2016-09-01T15:04:05.0000019Z",
                "2016-09-01T15:04:05.000001Z",
            ),
            (
                "2016-09-01T15:04:05.8709999Z",
                "2016-09-01T15:04:05.870999Z",
            ),
        ] {
            assert_eq!(iso.format(parse(time).unwrap()), want, "{time}");
        }
    }
}
