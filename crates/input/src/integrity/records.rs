//! What a log's records say about its integrity: each record's id, time, channel and
//! whether it marks a clear or a stop, kept by a [`RecordLog`] (a tally of the record
//! walk, 24 bytes a record) and read in id order by [`analyse`].

use super::{Finding, Kind, Severity};
use crate::{RecordAt, RecordView, Tally};
use jiff::{SignedDuration, Timestamp};
use scanner_rules::{FieldId, FieldTable, CHANNEL, EVENT_ID};
use std::collections::HashMap;

/// The record paths [`RecordLog`] reads, interned in the caller's table.
pub struct IntegrityFields {
    time: FieldId,
    record_id: FieldId,
    /// How far a record's time may go back before it is a finding.
    tolerance: SignedDuration,
}

impl IntegrityFields {
    /// Interns the record's `SystemTime` and `EventRecordID` in `table`; a time may go
    /// back by `tolerance` before it is a finding.
    pub fn intern(table: &mut FieldTable, tolerance: SignedDuration) -> IntegrityFields {
        IntegrityFields {
            time: table.intern_path("Event.System.TimeCreated_attributes.SystemTime"),
            record_id: table.intern_path("Event.System.EventRecordID"),
            tolerance,
        }
    }
}

/// What a record marks, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    None,
    /// Security 1102, System 104.
    Cleared(u16),
    /// Security 1100.
    Shutdown,
    /// System 6006: the event log service stopped.
    ServiceStopped,
    /// System 6005: the event log service started.
    ServiceStarted,
}

/// One record, as the analysis needs it (24 bytes).
#[derive(Debug, Clone, Copy)]
struct Rec {
    id: u64,
    /// 100 ns ticks since the Unix epoch; [`NO_TIME`] when unreadable.
    time: i64,
    /// Its channel, an index into [`RecordLog::names`].
    channel: u16,
    mark: Mark,
    recovered: bool,
    /// Its id is the record header's (EVTX), not `EventRecordID` (JSON, XML).
    header: bool,
}

/// A record without a readable time.
const NO_TIME: i64 = i64::MIN;

fn ticks(t: Timestamp) -> i64 {
    t.as_second()
        .saturating_mul(10_000_000)
        .saturating_add(i64::from(t.subsec_nanosecond() / 100))
}

fn timestamp(ticks: i64) -> Option<Timestamp> {
    if ticks == NO_TIME {
        return None;
    }
    let (s, r) = (ticks.div_euclid(10_000_000), ticks.rem_euclid(10_000_000));
    Timestamp::new(s, (r * 100) as i32).ok()
}

/// The records of one file: the walk's tally for `log-integrity`.
#[derive(Debug, Default)]
pub struct RecordLog {
    /// The channels met, as the first record of each writes it.
    names: Vec<String>,
    /// Their indexes, by lowercased name.
    index: HashMap<Box<str>, u16>,
    records: Vec<Rec>,
    /// Records with no record id (JSON or XML without `EventRecordID`).
    unnumbered: u64,
    /// The findings, once the file is done (its records then dropped).
    findings: Vec<Finding>,
}

impl RecordLog {
    /// The index of channel `name` (`lower`, lowercased), added when new; past 65535
    /// names, the last one.
    fn channel(&mut self, name: &str, lower: &str) -> u16 {
        if let Some(&i) = self.index.get(lower) {
            return i;
        }
        let Ok(i) = u16::try_from(self.names.len()) else {
            return u16::MAX;
        };
        self.names.push(name.to_string());
        self.index.insert(lower.into(), i);
        i
    }

    /// Records with no record id, which no gap or repeat can be told of.
    pub fn unnumbered(&self) -> u64 {
        self.unnumbered
    }

    /// The file's findings (after the walk: [`analyse`] of its records).
    pub fn into_findings(self) -> Vec<Finding> {
        self.findings
    }
}

impl RecordLog {
    /// The file's findings for a timeline (`--integrity`): `structure`'s
    /// ([`super::check_structure`]), dated from the records, then those of the records
    /// ([`analyse`]). A chunk's finding gets the first and last times of its records; a
    /// finding about the file header, the time of the file's last record (the header
    /// speaks of the file as last written). What no record dates stays undated.
    pub fn finish(self, mut structure: Vec<Finding>, cx: &IntegrityFields) -> Vec<Finding> {
        let live = || self.records.iter().filter(|r| r.header && !r.recovered);
        let dated = |t: Option<i64>| t.and_then(timestamp);
        let last = dated(live().max_by_key(|r| r.id).map(|r| r.time));
        for f in structure.iter_mut().filter(|f| f.times.is_none()) {
            f.times = match (f.kind.chunk(), f.records) {
                (Some(_), Some((a, b))) => {
                    let times = live()
                        .filter(|r| (a..=b).contains(&r.id) && r.time != NO_TIME)
                        .map(|r| r.time);
                    dated(times.clone().min()).zip(dated(times.max()))
                }
                (Some(_), None) => None,
                (None, _) => last.zip(last),
            };
        }
        structure.extend(analyse(self, cx.tolerance));
        structure
    }
}

impl Tally for RecordLog {
    type Context = IntegrityFields;

    fn add(&mut self, _: &RecordView, _: &IntegrityFields) {
        // Every record comes through `add_at`.
    }

    fn add_at(&mut self, r: &RecordView, at: &RecordAt, cx: &IntegrityFields) {
        let header = at.record_id.is_some();
        let id = at.record_id.or_else(|| {
            r.first(cx.record_id)
                .and_then(|s| s.trim().parse::<u64>().ok())
        });
        let Some(id) = id else {
            self.unnumbered += 1;
            return;
        };
        let time = r
            .first(cx.time)
            .and_then(crate::parse_timestamp)
            .map_or(NO_TIME, ticks);
        let lower = r.first_lower(CHANNEL).unwrap_or("");
        let event: Option<u16> = r.first(EVENT_ID).and_then(|s| s.trim().parse().ok());
        let mark = match (lower, event) {
            ("security", Some(1102)) | ("system", Some(104)) => Mark::Cleared(event.unwrap_or(0)),
            ("security", Some(1100)) => Mark::Shutdown,
            ("system", Some(6006)) => Mark::ServiceStopped,
            ("system", Some(6005)) => Mark::ServiceStarted,
            _ => Mark::None,
        };
        let channel = self.channel(r.first(CHANNEL).unwrap_or(""), lower);
        self.records.push(Rec {
            id,
            time,
            channel,
            mark,
            recovered: at.recovered,
            header,
        });
    }

    fn file_done(&mut self, cx: &IntegrityFields) {
        let unnumbered = self.unnumbered;
        let found = analyse(std::mem::take(self), cx.tolerance);
        *self = RecordLog {
            unnumbered,
            findings: found,
            ..RecordLog::default()
        };
    }

    fn merge(&mut self, other: RecordLog) {
        self.unnumbered += other.unnumbered;
        self.findings.extend(other.findings);
        let map: Vec<u16> = other
            .names
            .iter()
            .map(|n| self.channel(n, &n.to_lowercase()))
            .collect();
        self.records.extend(other.records.into_iter().map(|mut r| {
            r.channel = map.get(usize::from(r.channel)).copied().unwrap_or(u16::MAX);
            r
        }));
    }
}

/// The findings of one file's records, in record id order: gaps and repeats of record
/// ids, times going back by more than `tolerance`, clears, stops, and (per channel)
/// records recovered from slack space.
///
/// The ids read are the record headers' (EVTX): they number the file's records. In a
/// log Windows wrote, that is the channel's numbering (`EventRecordID` is the same); in
/// a log saved from Event Viewer (a selection, or several logs in one file), the
/// export's, from 1, while `EventRecordID` keeps the source log's, with the gaps the
/// selection left. JSON and XML records have only `EventRecordID`: they are read per
/// channel.
pub fn analyse(log: RecordLog, tolerance: SignedDuration) -> Vec<Finding> {
    let mut out = Vec::new();
    let (mut live, carved): (Vec<Rec>, Vec<Rec>) =
        log.records.into_iter().partition(|r| !r.recovered);
    // One sequence for the header ids, one per channel for the others.
    live.sort_unstable_by_key(|r| {
        (
            !r.header,
            if r.header { 0 } else { r.channel },
            r.id,
            r.time,
        )
    });
    let name = |c: u16| log.names.get(usize::from(c)).cloned();
    let at = |kind, severity, a: &Rec, b: &Rec| Finding {
        kind,
        severity,
        channel: name(b.channel),
        records: Some((a.id, b.id)),
        times: timestamp(a.time).zip(timestamp(b.time)),
    };
    let mut start = 0;
    while start < live.len() {
        let key = |r: &Rec| (r.header, if r.header { 0 } else { r.channel });
        let k = key(&live[start]);
        let len = live[start..].iter().take_while(|r| key(r) == k).count();
        sequence(&live[start..start + len], tolerance, &at, &mut out);
        start += len;
    }
    let mut channels: Vec<u16> = carved.iter().map(|r| r.channel).collect();
    channels.sort_unstable();
    channels.dedup();
    for c in channels {
        let of = || carved.iter().filter(move |r| r.channel == c);
        let (Some(first), Some(last)) = (of().min_by_key(|r| r.id), of().max_by_key(|r| r.id))
        else {
            continue;
        };
        let times = of().map(|r| r.time).filter(|&t| t != NO_TIME);
        let (lo, hi) = (times.clone().min(), times.max());
        out.push(Finding {
            kind: Kind::Recovered {
                records: of().count() as u64,
            },
            severity: Severity::Possible,
            channel: name(c),
            records: Some((first.id, last.id)),
            times: lo.and_then(timestamp).zip(hi.and_then(timestamp)),
        });
    }
    out
}

/// The findings of one sequence of records numbered alike, sorted by id.
fn sequence(
    live: &[Rec],
    tolerance: SignedDuration,
    at: &impl Fn(Kind, Severity, &Rec, &Rec) -> Finding,
    out: &mut Vec<Finding>,
) {
    let mut i = 0;
    while i < live.len() {
        let r = &live[i];
        let same = live[i..].iter().take_while(|s| s.id == r.id).count();
        if same > 1 {
            let kind = Kind::RecordIdRepeat {
                records: same as u64,
            };
            out.push(at(kind, Severity::Likely, r, &live[i + same - 1]));
        }
        if let Some(p) = i.checked_sub(1).map(|p| &live[p]) {
            if r.id > p.id + 1 {
                let cleared = |x: &Rec| matches!(x.mark, Mark::Cleared(_));
                let severity = if cleared(p) || cleared(r) {
                    Severity::Expected
                } else {
                    Severity::Likely
                };
                let kind = Kind::RecordIdGap {
                    missing: r.id - p.id - 1,
                };
                out.push(at(kind, severity, p, r));
            }
            if p.time != NO_TIME
                && r.time != NO_TIME
                && p.time.saturating_sub(r.time) > ticks_of(tolerance)
            {
                let by = SignedDuration::from_micros((p.time - r.time) / 10);
                out.push(at(Kind::TimeBackwards { by }, Severity::Possible, p, r));
            }
        }
        match r.mark {
            Mark::Cleared(event_id) => {
                out.push(at(Kind::Cleared { event_id }, Severity::Certain, r, r));
            }
            Mark::Shutdown => {
                let next = live.get(i + same);
                out.push(stopped(1100, r, next, at));
            }
            Mark::ServiceStopped => {
                let next = live[i + same..]
                    .iter()
                    .find(|n| n.mark == Mark::ServiceStarted);
                out.push(stopped(6006, r, next, at));
            }
            _ => {}
        }
        // The other records with this id were looked at as one.
        i += same;
    }
}

/// A tolerance in 100 ns ticks.
fn ticks_of(d: SignedDuration) -> i64 {
    i64::try_from(d.as_micros().saturating_mul(10)).unwrap_or(i64::MAX)
}

/// Logging stopped at `r` (event `event_id`) until `next`, if any.
fn stopped(
    event_id: u16,
    r: &Rec,
    next: Option<&Rec>,
    at: &impl Fn(Kind, Severity, &Rec, &Rec) -> Finding,
) -> Finding {
    let for_ = next.and_then(|n| {
        let (a, b) = (timestamp(r.time)?, timestamp(n.time)?);
        Some(b.duration_since(a))
    });
    at(
        Kind::Stopped { event_id, for_ },
        Severity::Possible,
        r,
        next.unwrap_or(r),
    )
}
