//! The ground truth of the integrity tests: a folder of logs written by the project's
//! EVTX writer, each with one planted fault (records deleted from the middle, a cleared
//! log, a stopped service, a dirty header, a flipped byte, records left in slack, a
//! clock set back), a clean one and a file that is not a log.

use scanner_evtx_writer::{
    flip_byte, to_slack, Element, Event, EvtxWriter, Value, WriterOptions, EVENT_NS,
};
use std::io::Cursor;
use std::path::Path;

/// 2024-01-01T00:00:00Z as a FILETIME, and a minute.
pub const START: u64 = 133_485_408_000_000_000;
pub const MINUTE: u64 = 600_000_000;

pub fn event(channel: &str, id: u16, minutes: u64) -> Event {
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
            .text(format!("user{minutes}")),
    );
    Event {
        root: Element::new("Event")
            .attr("xmlns", EVENT_NS)
            .child(system)
            .child(data),
    }
}

/// A log of `channel` events: `(event id, minute)` each, `None` for a record id left
/// unused (a deleted record).
pub fn log(channel: &str, records: &[Option<(u16, u64)>], options: WriterOptions) -> Vec<u8> {
    let mut w = EvtxWriter::new(Cursor::new(Vec::new()), options).unwrap();
    for r in records {
        match r {
            Some((id, m)) => {
                w.write(&event(channel, *id, *m)).unwrap();
            }
            None => w.skip_record_ids(1).unwrap(),
        }
    }
    w.finish_into_inner().unwrap().0.into_inner()
}

pub fn logons(from: u64, to: u64) -> Vec<Option<(u16, u64)>> {
    (from..to).map(|m| Some((4624, m))).collect()
}

/// Writes the planted logs into `dir`: clean.evtx (1500 logons), deleted.evtx (ids 11
/// to 13 missing), cleared.evtx (1102 first), service.evtx (6006 at minute 1, 6005 at
/// 31), dirty.evtx, flipped.evtx (a byte of record 18 flipped), slack.evtx (records 28
/// to 30 moved to slack), clock.evtx (the clock set back after record 10) and
/// not-a-log.evtx.
pub fn plant(dir: &Path) {
    let d = WriterOptions::default;
    let write = |name: &str, bytes: &[u8]| std::fs::write(dir.join(name), bytes).unwrap();
    write("clean.evtx", &log("Security", &logons(0, 1500), d()));
    let mut deleted = logons(0, 10);
    deleted.extend([None, None, None]);
    deleted.extend(logons(10, 20));
    write("deleted.evtx", &log("Security", &deleted, d()));
    let mut cleared = vec![Some((1102, 0))];
    cleared.extend(logons(1, 10));
    write("cleared.evtx", &log("Security", &cleared, d()));
    let service = [Some((7036, 0)), Some((6006, 1)), Some((6005, 31))];
    write("service.evtx", &log("System", &service, d()));
    let dirty = WriterOptions { dirty: true, ..d() };
    write("dirty.evtx", &log("Security", &logons(0, 5), dirty));
    let mut flipped = log("Security", &logons(0, 30), d());
    let name: Vec<u8> = "user17".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let at = flipped.windows(name.len()).position(|w| w == name).unwrap();
    flip_byte(&mut flipped, 0, at - 4096, 0x20).unwrap();
    write("flipped.evtx", &flipped);
    let mut slack = log("Security", &logons(0, 30), d());
    to_slack(&mut slack, 0, 3).unwrap();
    write("slack.evtx", &slack);
    let mut clock = logons(100, 110);
    clock.extend(logons(40, 45));
    write("clock.evtx", &log("Security", &clock, d()));
    write(
        "not-a-log.evtx",
        b"this is not an event log at all, but long enough",
    );
}
