//! The record filters of the timeline commands, from their flags: a time range
//! (`--timeline-start`/`--timeline-end`/`--time-offset`), EventIDs (`--include-eid`,
//! `--exclude-eid`, `-E`) and computers (`--include-computer`, `--exclude-computer`).

use crate::args::RecordFilterArgs;
use jiff::tz::TimeZone;
use jiff::Timestamp;
use scanner_engine::RecordFilter;
use scanner_rules::RuleSet;

/// Parses a time such as `2020-02-22 00:00:00 +09:00`, `2020/02/22 00:00:00 +0900`,
/// `2020-02-22T00:00:00Z`, `2020-02-22 00:00:00` or `2020-02-22`; without an offset
/// it is read in `tz` (the zone the timeline is written in).
pub fn parse_time(s: &str, tz: &TimeZone) -> Result<Timestamp, String> {
    let mut t = s.trim().replace('/', "-");
    // "… 00:00:00 +09:00" → "…00:00:00+09:00"
    if let Some(i) = t.rfind(' ') {
        let tail = &t[i + 1..];
        if tail.starts_with(['+', '-']) && tail[1..].chars().all(|c| c.is_ascii_digit() || c == ':')
        {
            let mut off = tail.to_string();
            if off.len() == 5 && !off.contains(':') {
                off.insert(3, ':');
            }
            t = format!("{}{off}", &t[..i]);
        }
    }
    if let Ok(ts) = t.parse::<Timestamp>() {
        return Ok(ts);
    }
    if let Ok(dt) = t.parse::<jiff::civil::DateTime>() {
        return dt
            .to_zoned(tz.clone())
            .map(|z| z.timestamp())
            .map_err(|e| e.to_string());
    }
    if let Ok(d) = t.parse::<jiff::civil::Date>() {
        return d
            .to_zoned(tz.clone())
            .map(|z| z.timestamp())
            .map_err(|e| e.to_string());
    }
    Err(format!(
        "cannot read time '{s}' (expected e.g. \"2020-02-22 00:00:00 +09:00\")"
    ))
}

/// Parses an offset such as `1y 3M 30d 24h 30m 10s`, or Hayabusa's `1y3M30d` (units
/// written together), into seconds (a year is 365 days, a month 30).
pub fn parse_offset(s: &str) -> Result<i64, String> {
    let mut total: i64 = 0;
    let mut seen = false;
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let unit = rest[digits..].chars().next();
        let tok = &rest[..digits + unit.map_or(0, char::len_utf8)];
        let (Some(unit), Ok(n)) = (unit, rest[..digits].parse::<i64>()) else {
            return Err(format!(
                "--time-offset: cannot read '{tok}' (e.g. 30d, 1y 3M, 24h30m)"
            ));
        };
        rest = rest[tok.len()..].trim_start();
        let secs = match unit {
            'y' => 365 * 86400,
            'M' => 30 * 86400,
            'd' => 86400,
            'h' => 3600,
            'm' => 60,
            's' => 1,
            _ => {
                return Err(format!(
                    "--time-offset: unknown unit in '{tok}' (y M d h m s)"
                ))
            }
        };
        total = total.saturating_add(n.saturating_mul(secs));
        seen = true;
    }
    if !seen {
        return Err("--time-offset: empty offset".into());
    }
    Ok(total)
}

fn lower_set(v: &[String]) -> std::collections::HashSet<String> {
    v.iter().map(|s| s.trim().to_lowercase()).collect()
}

/// The start of `--time-offset OFFSET`: that long before now.
pub fn offset_start(offset: &str) -> Result<Timestamp, String> {
    let secs = parse_offset(offset)?;
    Timestamp::now()
        .checked_sub(jiff::SignedDuration::from_secs(secs))
        .map_err(|e| format!("--time-offset: {e}"))
}

/// The record filter the flags ask for (empty when none is given).
pub fn record_filter(
    a: &RecordFilterArgs,
    set: &RuleSet,
    tz: &TimeZone,
) -> Result<RecordFilter, String> {
    let mut f = RecordFilter::default();
    if let Some(s) = &a.range.timeline_start {
        f.start = Some(parse_time(s, tz).map_err(|e| format!("--timeline-start: {e}"))?);
    }
    if let Some(s) = &a.range.timeline_end {
        f.end = Some(parse_time(s, tz).map_err(|e| format!("--timeline-end: {e}"))?);
    }
    if let Some(o) = &a.time_offset {
        f.start = Some(offset_start(o)?);
    }
    if let (Some(s), Some(e)) = (f.start, f.end) {
        if s > e {
            return Err("the timeline starts after it ends".into());
        }
    }
    let mut include: Option<std::collections::HashSet<String>> = None;
    if !a.include_eids.is_empty() {
        include = Some(event_ids("--include-eid", &a.include_eids)?);
    }
    if a.eid_filter {
        let common = &set.config().target_eids;
        include = Some(match include {
            Some(inc) => inc.into_iter().filter(|e| common.contains(e)).collect(),
            None => common.iter().cloned().collect(),
        });
    }
    f.include_eids = include;
    f.exclude_eids = event_ids("--exclude-eid", &a.exclude_eids)?;
    let computers = &a.computers;
    if !computers.include_computers.is_empty() {
        f.include_computers = Some(lower_set(&computers.include_computers));
    }
    f.exclude_computers = lower_set(&computers.exclude_computers);
    Ok(f)
}

/// The EventIDs a flag lists, each a number (0 to 65535, as EVTX stores them): a typo
/// such as `--include-eid 46x4` would otherwise filter out every record in silence.
fn event_ids<C: FromIterator<String>>(flag: &str, values: &[String]) -> Result<C, String> {
    values
        .iter()
        .map(|v| {
            let v = v.trim();
            match v.parse::<u16>() {
                Ok(_) => Ok(v.to_string()),
                Err(_) => Err(format!(
                    "{flag}: '{v}' is not an EventID (a number from 0 to 65535)"
                )),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_in_hayabusas_forms_and_offsets() {
        let utc = TimeZone::UTC;
        let want: Timestamp = "2020-02-21T15:00:00Z".parse().unwrap();
        for s in [
            "2020-02-22 00:00:00 +09:00",
            "2020/02/22 00:00:00 +0900",
            "2020-02-22T00:00:00+09:00",
            "2020-02-21 15:00:00",
            "2020-02-21T15:00:00Z",
        ] {
            assert_eq!(parse_time(s, &utc).unwrap(), want, "{s}");
        }
        assert_eq!(
            parse_time("2020-02-22", &utc).unwrap(),
            "2020-02-22T00:00:00Z".parse::<Timestamp>().unwrap()
        );
        assert!(parse_time("yesterday", &utc).is_err());
        assert_eq!(
            parse_offset("1y 3M 30d 24h 30m").unwrap(),
            ((365 + 90 + 30 + 1) * 86400) + 1800
        );
        assert!(parse_offset("3w").is_err());
        // Hayabusa's spelling, units written together.
        assert_eq!(
            parse_offset("1y3M30d24h30m").unwrap(),
            parse_offset("1y 3M 30d 24h 30m").unwrap()
        );
        assert_eq!(parse_offset("10s").unwrap(), 10);
        for bad in ["", "d", "12", "1y x", "1.5d"] {
            assert!(parse_offset(bad).is_err(), "{bad}");
        }
    }
}
