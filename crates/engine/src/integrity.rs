//! Integrity findings as timeline rows (`--integrity`): each of `scanner_input`'s
//! findings about a file becomes a [`DetectInfo`] whose rule is a
//! [`RuleRef::Integrity`], sorted and written with the detections.
//!
//! The row's rule is one of the built-in integrity rules ([`meta`]): one per check and
//! severity, titled `Log integrity: <check>`, its level the severity's
//! ([`level`]). The row's time is the first time the finding concerns (the last record
//! before a gap, the record cleared), or the epoch when no record dates it; its Details
//! hold the severity, the record ids, the time from the first to the second time it
//! concerns, and the figures.

use crate::items::ItemsBuf;
use crate::row::{DetectInfo, Origin, RuleRef};
use compact_str::CompactString;
use scanner_input::{Finding, IntegrityCheck as Check, IntegrityKind as Kind, Severity};
use scanner_rules::{Level, RuleMeta};
use std::fmt::Write;
use std::sync::LazyLock;

/// The rule of an integrity row: the check that found it and how sure it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct IntegrityRule {
    /// The check.
    pub check: Check,
    /// How sure.
    pub severity: Severity,
}

impl IntegrityRule {
    /// How many there are ([`Self::index`] is below it).
    pub const COUNT: usize = Check::ALL.len() * Severity::ALL.len();

    /// A dense index, `check * 4 + severity`.
    pub fn index(self) -> u32 {
        (self.check.index() * Severity::ALL.len() + self.severity as usize) as u32
    }

    /// The rule of index `i` ([`Self::index`]).
    pub fn from_index(i: u32) -> Option<IntegrityRule> {
        let i = i as usize;
        let n = Severity::ALL.len();
        Some(IntegrityRule {
            check: *Check::ALL.get(i / n)?,
            severity: Severity::ALL[i % n],
        })
    }
}

/// The level an integrity row is shown at: a certain finding (a CRC32 that fails, a
/// log cleared) high, a likely one (records missing) medium, a possible one (the clock
/// set back, logging stopped) low, what normal operation leaves informational.
pub fn level(s: Severity) -> Level {
    match s {
        Severity::Certain => Level::High,
        Severity::Likely => Level::Medium,
        Severity::Possible => Level::Low,
        Severity::Expected => Level::Informational,
    }
}

/// The built-in rule of an integrity row: its title, level and author.
pub fn meta(r: IntegrityRule) -> &'static RuleMeta {
    static ALL: LazyLock<Vec<RuleMeta>> = LazyLock::new(|| {
        (0..IntegrityRule::COUNT as u32)
            .filter_map(IntegrityRule::from_index)
            .map(|r| RuleMeta {
                title: format!("Log integrity: {}", r.check.name()).into(),
                id: "-".into(),
                level: level(r.severity),
                author: "scanner".into(),
                date: "-".into(),
                path: "log-integrity".into(),
                file_name: "log-integrity".into(),
                ..RuleMeta::default()
            })
            .collect()
    });
    &ALL[r.index() as usize]
}

/// The row of finding `f` about input file `file`.
pub(crate) fn row(file: u32, f: &Finding) -> DetectInfo {
    let rule = IntegrityRule {
        check: f.kind.check(),
        severity: f.severity,
    };
    let mut d = ItemsBuf::default();
    let mut item = |label: &str, value: std::fmt::Arguments| {
        let t = d.text_mut();
        t.push_str(label);
        t.push_str(": ");
        let _ = t.write_fmt(value);
        d.close_labelled(label.len());
    };
    item("Severity", format_args!("{}", f.severity.name()));
    if let Some(c) = f.kind.chunk() {
        item("Chunk", format_args!("{c}"));
    }
    match f.records {
        Some((a, b)) if a == b => item("RecordID", format_args!("{a}")),
        Some((a, b)) => item("RecordIDs", format_args!("{a}-{b}")),
        None => {}
    }
    // From the first time to the second (a stop says how long in its own figure; a
    // step back, by how much).
    let stop = matches!(f.kind, Kind::Stopped { .. });
    if let Some((a, b)) = f.times.filter(|t| t.1 > t.0 && !stop) {
        let secs = b.duration_since(a).as_secs();
        item("Elapsed", format_args!("{secs}s"));
    }
    let secs = |d: jiff::SignedDuration| d.as_secs();
    match &f.kind {
        Kind::HeaderChecksum { stored, computed }
        | Kind::ChunkHeaderChecksum {
            stored, computed, ..
        }
        | Kind::ChunkRecordsChecksum {
            stored, computed, ..
        } => {
            item("Stored", format_args!("{stored:08x}"));
            item("Computed", format_args!("{computed:08x}"));
        }
        Kind::ChunkCount { header, found } => {
            item("Header", format_args!("{header}"));
            item("Found", format_args!("{found}"));
        }
        Kind::NextRecordId { header, found } => {
            item("Header", format_args!("{header}"));
            item("LastRecordID", format_args!("{}", found.saturating_sub(1)));
        }
        Kind::RecordIdGap { missing } => item("Missing", format_args!("{missing}")),
        Kind::RecordIdRepeat { records } | Kind::Recovered { records } => {
            item("Records", format_args!("{records}"));
        }
        Kind::TimeBackwards { by } => item("Back", format_args!("{}s", secs(*by))),
        Kind::Stopped {
            for_: Some(for_), ..
        } => item("For", format_args!("{}s", secs(*for_))),
        Kind::Stopped { for_: None, .. } => item("For", format_args!("no record after it")),
        Kind::Dirty | Kind::ChunkUnreadable { .. } | Kind::Cleared { .. } => {}
    }
    let event_id: CompactString = match &f.kind {
        Kind::Cleared { event_id } | Kind::Stopped { event_id, .. } => {
            compact_str::format_compact!("{event_id}")
        }
        _ => "-".into(),
    };
    DetectInfo {
        time: f.time().unwrap_or_else(scanner_input::missing_timestamp),
        rule: RuleRef::Integrity(rule),
        recovered: false,
        origin: Origin::Record {
            file,
            record_id: f.records.map_or(0, |r| r.0),
        },
        computer: "-".into(),
        channel: f.channel.as_deref().unwrap_or("-").into(),
        event_id,
        provider: "-".into(),
        details: d.to_items(),
        extra: None,
        all_fields: None,
        geo: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_its_own_index_and_meta() {
        let all: Vec<IntegrityRule> = (0..IntegrityRule::COUNT as u32)
            .map(|i| IntegrityRule::from_index(i).unwrap())
            .collect();
        for (i, r) in all.iter().enumerate() {
            assert_eq!(r.index(), i as u32);
            assert_eq!(meta(*r).level, level(r.severity));
            assert!(meta(*r).title.ends_with(r.check.name()));
        }
        assert_eq!(IntegrityRule::from_index(IntegrityRule::COUNT as u32), None);
    }

    #[test]
    fn a_gap_row_names_its_records_and_figures() {
        let t = |s| jiff::Timestamp::from_second(s).unwrap();
        let f = Finding {
            kind: Kind::RecordIdGap { missing: 5 },
            severity: Severity::Likely,
            channel: Some("Security".into()),
            records: Some((10, 16)),
            times: Some((t(100), t(160))),
        };
        let r = row(3, &f);
        assert_eq!(r.time, t(100));
        assert_eq!(
            r.details.join(" ¦ "),
            "Severity: likely ¦ RecordIDs: 10-16 ¦ Elapsed: 60s ¦ Missing: 5"
        );
        assert_eq!(r.details.iter().next().unwrap().label(), "Severity");
        assert_eq!(
            meta(match r.rule {
                RuleRef::Integrity(i) => i,
                _ => unreachable!(),
            })
            .title,
            "Log integrity: record id gap"
        );
        assert_eq!(
            r.origin,
            Origin::Record {
                file: 3,
                record_id: 10
            }
        );
    }
}
