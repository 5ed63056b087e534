//! Ground truth: logs written by the project's EVTX writer with one planted fault each
//! give exactly the finding planted, and a clean log none.

use super::*;
use crate::error::ChunkFault;
use crate::evtx::test_log::TempFile;
use crate::{walk, InputFile, WalkSettings};
use scanner_evtx_writer::{
    flip_byte, to_slack, Element, Event, EvtxWriter, Value, WriterOptions, EVENT_NS,
};
use scanner_rules::FieldTable;
use std::io::Cursor;

/// 2024-01-01T00:00:00Z as a FILETIME.
const START: u64 = 133_485_408_000_000_000;
const MINUTE: u64 = 600_000_000;

/// An event of `channel` with `id`, at `minutes` past [`START`].
fn event(channel: &str, id: u16, minutes: u64, user: &str) -> Event {
    let system = Element::new("System")
        .child(Element::new("Provider").attr("Name", "Microsoft-Windows-Eventlog"))
        .child(Element::new("EventID").text(Value::U16(id)))
        .child(
            Element::new("TimeCreated")
                .attr("SystemTime", Value::FileTime(START + minutes * MINUTE)),
        )
        .child(Element::new("Channel").text(channel))
        .child(Element::new("Computer").text("host"));
    let data = Element::new("EventData").child(
        Element::new("Data")
            .attr("Name", "TargetUserName")
            .text(user),
    );
    Event {
        root: Element::new("Event")
            .attr("xmlns", EVENT_NS)
            .child(system)
            .child(data),
    }
}

/// What to write: events, or record ids left unused.
enum Step {
    Write(Event),
    Skip(u64),
}

/// Security 4624 events at minutes `from..to`.
fn logons(from: u64, to: u64) -> impl Iterator<Item = Step> {
    (from..to).map(|m| Step::Write(event("Security", 4624, m, &format!("user{m}"))))
}

fn write(steps: impl IntoIterator<Item = Step>, options: WriterOptions) -> Vec<u8> {
    let mut w = EvtxWriter::new(Cursor::new(Vec::new()), options).unwrap();
    for s in steps {
        match s {
            Step::Write(e) => {
                w.write(&e).unwrap();
            }
            Step::Skip(n) => w.skip_record_ids(n).unwrap(),
        }
    }
    w.finish_into_inner().unwrap().0.into_inner()
}

/// Every finding about `bytes` as a file, read with recovery `recover`; the read must
/// report no error.
fn findings(name: &str, bytes: &[u8], recover: bool) -> Vec<Finding> {
    let file = TempFile::new(name, bytes);
    let files = [InputFile::new(
        file.path().to_path_buf(),
        bytes.len() as u64,
    )];
    let mut table = FieldTable::new();
    let fields = IntegrityFields::intern(&mut table, SignedDuration::from_secs(60));
    let how = WalkSettings {
        fields: &table,
        recover,
        validate_checksums: false,
    };
    let walked = walk::<RecordLog>(&files, how, &fields, &|_, _| {});
    let (mut logs, errors, _) = walked.into_parts();
    assert!(errors.is_empty(), "{errors:?}");
    let mut found = check_structure(file.path()).unwrap();
    found.extend(logs.remove(0).into_findings());
    found
}

fn at(minutes: u64) -> Timestamp {
    Timestamp::new(1_704_067_200 + 60 * minutes as i64, 0).unwrap()
}

/// One finding of `kind` about Security records `a..b` at minutes `ta..tb`.
fn security(kind: Kind, severity: Severity, ids: (u64, u64), minutes: (u64, u64)) -> Finding {
    Finding {
        kind,
        severity,
        channel: Some("Security".into()),
        records: Some(ids),
        times: Some((at(minutes.0), at(minutes.1))),
    }
}

#[test]
fn a_clean_log_has_no_finding() {
    let log = write(logons(0, 1500), WriterOptions::default());
    assert!(log.len() > 4096 + 65536, "more than one chunk");
    assert_eq!(findings("clean.evtx", &log, true), []);
}

#[test]
fn records_deleted_from_the_middle_are_a_gap_with_its_times() {
    let steps = logons(0, 20).chain([Step::Skip(5)]).chain(logons(20, 40));
    let log = write(steps, WriterOptions::default());
    let gap = Kind::RecordIdGap { missing: 5 };
    assert_eq!(
        findings("deleted.evtx", &log, false),
        [security(gap, Severity::Likely, (20, 26), (19, 20))]
    );
}

#[test]
fn a_cleared_log_is_certain_and_a_gap_next_to_it_expected() {
    let clear = |m| Step::Write(event("Security", 1102, m, "admin"));
    let steps = [clear(0)]
        .into_iter()
        .chain(logons(1, 10))
        .chain([Step::Skip(3), clear(10)])
        .chain(logons(11, 12));
    let log = write(steps, WriterOptions::default());
    let cleared = Kind::Cleared { event_id: 1102 };
    assert_eq!(
        findings("cleared.evtx", &log, false),
        [
            security(cleared.clone(), Severity::Certain, (1, 1), (0, 0)),
            security(
                Kind::RecordIdGap { missing: 3 },
                Severity::Expected,
                (10, 14),
                (9, 10)
            ),
            security(cleared, Severity::Certain, (14, 14), (10, 10)),
        ]
    );
}

#[test]
fn logging_stopped_says_for_how_long() {
    let steps = logons(0, 5)
        .chain([Step::Write(event("Security", 1100, 5, "-"))])
        .chain(logons(65, 70));
    let log = write(steps, WriterOptions::default());
    let stopped = Kind::Stopped {
        event_id: 1100,
        for_: Some(SignedDuration::from_secs(3600)),
    };
    assert_eq!(
        findings("stopped.evtx", &log, false),
        [security(stopped, Severity::Possible, (6, 7), (5, 65))]
    );
    // System 6006 until the next 6005, other records between.
    let system = |id, m| Step::Write(event("System", id, m, "-"));
    let steps = [
        system(7036, 0),
        system(6006, 1),
        system(7036, 2),
        system(6005, 9),
    ];
    let log = write(steps, WriterOptions::default());
    let stopped = Kind::Stopped {
        event_id: 6006,
        for_: Some(SignedDuration::from_secs(480)),
    };
    let mut want = security(stopped, Severity::Possible, (2, 4), (1, 9));
    want.channel = Some("System".into());
    assert_eq!(findings("service.evtx", &log, false), [want]);
}

#[test]
fn a_dirty_header_is_expected() {
    let options = WriterOptions {
        dirty: true,
        ..WriterOptions::default()
    };
    let log = write(logons(0, 10), options);
    let want = Finding {
        kind: Kind::Dirty,
        severity: Severity::Expected,
        channel: None,
        records: None,
        times: None,
    };
    assert_eq!(findings("dirty.evtx", &log, false), [want]);
}

#[test]
fn a_flipped_byte_fails_its_chunks_records_checksum() {
    let mut log = write(logons(0, 30), WriterOptions::default());
    // A letter of a user name (UTF-16): the record still reads.
    let name: Vec<u8> = "user17".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let at = log.windows(name.len()).position(|w| w == name).unwrap();
    flip_byte(&mut log, 0, at - 4096, 0x20).unwrap();
    let found = findings("flipped.evtx", &log, false);
    let [f] = &found[..] else { panic!("{found:?}") };
    assert!(
        matches!(f.kind, Kind::ChunkRecordsChecksum { chunk: 0, stored, computed } if stored != computed),
        "{f:?}"
    );
    assert_eq!((f.severity, f.records), (Severity::Certain, Some((1, 30))));
    // A reserved byte of the chunk header: its own checksum fails.
    let mut log = write(logons(0, 30), WriterOptions::default());
    log[4096 + 100] ^= 1;
    let found = findings("header.evtx", &log, false);
    assert!(
        matches!(
            found[..],
            [Finding {
                kind: Kind::ChunkHeaderChecksum { chunk: 0, .. },
                ..
            }]
        ),
        "{found:?}"
    );
}

#[test]
fn records_left_in_slack_are_found_with_recovery_only() {
    let mut log = write(logons(0, 30), WriterOptions::default());
    assert_eq!(to_slack(&mut log, 0, 4).unwrap(), [27, 28, 29, 30]);
    assert_eq!(findings("slack.evtx", &log, false), []);
    let recovered = Kind::Recovered { records: 4 };
    assert_eq!(
        findings("slack.evtx", &log, true),
        [security(recovered, Severity::Possible, (27, 30), (26, 29))]
    );
}

#[test]
fn a_clock_set_back_beyond_the_tolerance_is_found_once() {
    // Back 2 hours at record 21, then on from there; a step back of 30 s (within the
    // tolerance) at record 41 is not a finding.
    let early = |m: u64| Step::Write(event("Security", 4624, m, "u"));
    let steps = logons(200, 220)
        .chain((80..100).map(early))
        .chain([Step::Write(event("Security", 4624, 99, "v"))]);
    let mut events: Vec<Step> = steps.collect();
    // Record 41 is 30 s before record 40 (minute 99 less 30 s): rewrite its time.
    if let Some(Step::Write(e)) = events.last_mut() {
        let t = e.root.children.iter_mut().find_map(|n| match n {
            scanner_evtx_writer::Node::Element(s) if s.name == "System" => Some(s),
            _ => None,
        });
        let tc = t.unwrap().children.iter_mut().find_map(|n| match n {
            scanner_evtx_writer::Node::Element(c) if c.name == "TimeCreated" => Some(c),
            _ => None,
        });
        tc.unwrap().attributes[0].value = Value::FileTime(START + 99 * MINUTE - 300_000_000);
    }
    let log = write(events, WriterOptions::default());
    let back = Kind::TimeBackwards {
        by: SignedDuration::from_secs(139 * 60),
    };
    assert_eq!(
        findings("clock.evtx", &log, false),
        [security(back, Severity::Possible, (20, 21), (219, 80))]
    );
}

#[test]
fn a_file_of_several_channels_is_numbered_by_its_record_headers() {
    // As Event Viewer saves a selection of two logs: header ids 1.. across both.
    let steps = (0..20).map(|m| {
        let channel = if m % 3 == 0 {
            "Microsoft-Windows-Sysmon/Operational"
        } else {
            "Security"
        };
        Step::Write(event(channel, 1, m, "u"))
    });
    let log = write(steps, WriterOptions::default());
    assert_eq!(findings("merged.evtx", &log, false), []);
}

#[test]
fn json_records_are_numbered_per_channel_by_their_event_record_id() {
    let line = |channel: &str, id: u64, minute: u64| {
        format!(
            r#"{{"Event":{{"System":{{"Channel":"{channel}","EventID":4624,"EventRecordID":{id},"TimeCreated_attributes":{{"SystemTime":"2024-01-01T00:{minute:02}:00Z"}}}}}}}}"#
        )
    };
    let text = [
        line("Security", 7, 0),
        line("System", 100, 1),
        line("Security", 8, 2),
        line("System", 101, 3),
        line("Security", 11, 4),
    ]
    .join("\n");
    let found = findings("events.jsonl", text.as_bytes(), false);
    assert_eq!(
        found,
        [security(
            Kind::RecordIdGap { missing: 2 },
            Severity::Likely,
            (8, 11),
            (2, 4)
        )]
    );
}

/// The records `bytes` gives with checksums validated or not, and the errors.
fn read_validated(name: &str, bytes: &[u8], validate: bool) -> (u64, Vec<crate::InputError>) {
    let file = TempFile::new(name, bytes);
    let errors = std::sync::Mutex::new(Vec::new());
    let read = crate::EvtxRead {
        recover: false,
        typed: true,
        validate_checksums: validate,
    };
    let n = crate::read_evtx(
        file.path(),
        bytes.len() as u64,
        read,
        || (),
        |_, _| {},
        |e| errors.lock().unwrap().push(e),
    );
    (n.records, errors.into_inner().unwrap())
}

#[test]
fn validated_checksums_leave_out_the_chunks_that_fail_and_only_those() {
    use crate::ErrorKind;
    let clean = write(logons(0, 1500), WriterOptions::default());
    let all = read_validated("v-clean.evtx", &clean, true);
    assert_eq!((all.0, all.1.len()), (1500, 0));
    let in_chunk_0 = u64::from_le_bytes(clean[4096 + 32..4096 + 40].try_into().unwrap());
    // A record byte, a reserved header byte, the chunk's magic.
    let name: Vec<u8> = "user17".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let at = clean.windows(name.len()).position(|w| w == name).unwrap();
    for (what, offset) in [("records", at), ("header", 4096 + 100), ("magic", 4096 + 2)] {
        let mut log = clean.clone();
        log[offset] ^= 0x20;
        let (n, errors) = read_validated("v.evtx", &log, false);
        assert_eq!(n, 1500, "{what}: read without -V");
        assert_eq!(
            errors.len(),
            usize::from(what == "magic"),
            "{what}: {errors:?}"
        );
        let (n, errors) = read_validated("v.evtx", &log, true);
        assert_eq!(n, 1500 - in_chunk_0, "{what}: chunk 0 left out with -V");
        let [e] = &errors[..] else {
            panic!("{what}: {errors:?}")
        };
        assert_eq!(e.position(), crate::Position::Chunk(0));
        match (what, e.kind()) {
            ("records", ErrorKind::ChunkChecksum(ChunkFault::Records { .. }))
            | ("header", ErrorKind::ChunkChecksum(ChunkFault::Header { .. }))
            | ("magic", ErrorKind::DamagedChunk(_)) => {}
            _ => panic!("{what}: {e}"),
        }
    }
}
