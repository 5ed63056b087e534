//! EvtxECmd's output (Eric Zimmerman's EVTX parser, run by KAPE's `!EZParser`), as CSV
//! or JSON: one row per record, `RecordNumber, EventRecordId, TimeCreated, EventId,
//! Level, Provider, Channel, ProcessId, ThreadId, Computer, UserId, MapDescription,
//! UserName, RemoteHost, PayloadData1…6, ExecutableInfo, HiddenRecord, SourceFile,
//! Keywords, Payload`, where `Payload` is the record's `<EventData>` or `<UserData>`
//! element as Json.NET writes XML (`{"EventData":{"Data":[{"@Name":"X","#text":"v"}]}}`).
//! A row is read into the paths of the EVTX rendering, so rules and Details see what
//! they see in the EVTX the row came from.
//!
//! What EvtxECmd does not keep, and so no rule can test here: the System elements
//! `Version`, `Task`, `Opcode`, `Correlation`, the provider's `Guid` and
//! `EventSourceName`, the EventID's `Qualifiers`. `Level` and `Keywords` are kept as
//! names (`Warning`, `Audit success`) and turned back into the numbers EVTX holds; a
//! row without an `EventRecordId` has no RecordID.

use crate::error::{ErrorKind, InputError, Position};
use crate::flatten::Flattener;
use crate::json_tree::{Json, Object, ObjectBuilder};
use crate::record::RecordView;
use crate::rows::Row;
use scanner_rules::FieldTable;
use std::borrow::Cow;
use std::io::{BufRead, Read};
use std::path::Path;

/// The first columns of EvtxECmd's CSV, which tell it.
pub(crate) const CSV_HEADER: &str =
    "RecordNumber,EventRecordId,TimeCreated,EventId,Level,Provider,Channel";

/// Whether the JSON object `o` is an EvtxECmd row.
pub(crate) fn is_row(o: &Object<'_>) -> bool {
    o.contains_key("EventRecordId") && o.contains_key("EventId") && o.contains_key("Payload")
}

/// EVTX's level for EvtxECmd's name of it.
fn level(name: &str) -> Option<&'static str> {
    Some(match name {
        "LogAlways" => "0",
        "Critical" => "1",
        "Error" => "2",
        "Warning" => "3",
        "Info" => "4",
        "Verbose" => "5",
        "Success" => "8",
        "Failure" => "16",
        _ => return None,
    })
}

/// EVTX's keywords for EvtxECmd's name of them.
fn keywords(name: &str) -> Option<&'static str> {
    Some(match name {
        "Audit failure" => "0x8010000000000000",
        "Audit success" => "0x8020000000000000",
        "Time" => "0x8000000000000010",
        "State" => "0x8000000000000080",
        "Reboot" => "0x8000000000000040",
        "Installation" => "0x8000000000000018",
        "Download" => "0x8000000000000014",
        "Audit success, classic" => "0x8080000000000000",
        "Classic" => "0x8000000000000000",
        _ => return None,
    })
}

/// The text of a row's field (a CSV cell, or a JSON string or number); None when empty.
fn text<'v>(v: Option<&'v Json<'_>>) -> Option<Cow<'v, str>> {
    match v? {
        Json::Str(s) if !s.is_empty() => Some(Cow::Borrowed(s)),
        n @ (Json::U64(_) | Json::I64(_) | Json::F64(_)) => n.scalar_text().map(Cow::Owned),
        _ => None,
    }
}

impl Flattener {
    /// Fills `view` (cleared) from the EvtxECmd row `o`.
    pub(crate) fn evtxecmd(
        &mut self,
        o: &Object<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) -> Result<(), ErrorKind> {
        let system = [
            ("Channel", "Event.System.Channel"),
            ("EventId", "Event.System.EventID"),
            ("Computer", "Event.System.Computer"),
            ("Provider", "Event.System.Provider_attributes.Name"),
            ("EventRecordId", "Event.System.EventRecordID"),
            ("ProcessId", "Event.System.Execution_attributes.ProcessID"),
            ("ThreadId", "Event.System.Execution_attributes.ThreadID"),
            ("UserId", "Event.System.Security_attributes.UserID"),
        ];
        for (key, path) in system {
            if let Some(t) = text(o.get(key)) {
                view.push(table, path, &t);
            }
        }
        if let Some(t) = text(o.get("Level")) {
            view.push(table, "Event.System.Level", level(&t).unwrap_or(&t));
        }
        if let Some(t) = text(o.get("Keywords")) {
            view.push(table, "Event.System.Keywords", keywords(&t).unwrap_or(&t));
        }
        let time = o.get("TimeCreated").and_then(evtxecmd_time);
        self.time(time, table, view);
        let Some(payload) = text(o.get("Payload")) else {
            return Ok(());
        };
        let payload: Json<'_> = serde_json::from_str(&payload)
            .map_err(|e| ErrorKind::UnreadableEvent(format!("its Payload is not JSON: {e}")))?;
        if let Some(data) = payload.get("EventData") {
            self.event_data(data, table, view);
        }
        if let Some(user) = payload.get("UserData") {
            let mut path = String::from("Event.UserData");
            xml_json(&mut path, user, table, view);
        }
        Ok(())
    }

    /// `<EventData>` as Json.NET writes it: named `Data` as `Event.EventData.<Name>`,
    /// unnamed ones as `Event.EventData.Data`, other children by their names.
    fn event_data(&mut self, data: &Json<'_>, table: &FieldTable, view: &mut RecordView) {
        let Some(data) = data.as_object() else {
            return;
        };
        for (k, v) in data.iter() {
            if k != "Data" {
                let mut path = format!("Event.EventData.{k}");
                xml_json(&mut path, v, table, view);
                continue;
            }
            let items = match v {
                Json::Array(a) => a.as_slice(),
                v => std::slice::from_ref(v),
            };
            for item in items {
                match item {
                    Json::Object(d) => {
                        let value = d.get("#text").and_then(Json::as_str).unwrap_or("");
                        match d.get("@Name").and_then(Json::as_str) {
                            Some(name) => self.data(name, &Json::Str(value.into()), table, view),
                            None => view.push(table, "Event.EventData.Data", value),
                        }
                    }
                    Json::Str(s) => view.push(table, "Event.EventData.Data", s),
                    _ => {}
                }
            }
        }
    }
}

/// An element as Json.NET writes XML, under `path`: `@attr` as `<path>_attributes.attr`
/// (namespace declarations left out, as the EVTX rendering leaves them), `#text` as the
/// element's value, children by name.
fn xml_json(path: &mut String, v: &Json<'_>, table: &FieldTable, view: &mut RecordView) {
    match v {
        Json::Str(s) => view.push(table, path, s),
        Json::U64(_) | Json::I64(_) | Json::F64(_) | Json::Bool(_) => {
            if let Some(t) = v.scalar_text() {
                view.push(table, path, &t);
            }
        }
        Json::Array(a) => {
            for x in a {
                xml_json(path, x, table, view);
            }
        }
        Json::Object(m) => {
            for (k, x) in m.iter() {
                let base = path.len();
                if k == "#text" {
                    xml_json(path, x, table, view);
                    continue;
                }
                match k.strip_prefix('@') {
                    // Namespace declarations are no leaves of the EVTX rendering.
                    Some(a) if a == "xmlns" || a.starts_with("xmlns:") => continue,
                    Some(a) => {
                        path.push_str("_attributes.");
                        path.push_str(a);
                    }
                    None => {
                        path.push('.');
                        path.push_str(k);
                    }
                }
                xml_json(path, x, table, view);
                path.truncate(base);
            }
        }
        Json::Null => {}
    }
}

/// EvtxECmd's `TimeCreated`: `2024-03-12 09:14:02.2551234` (UTC) in CSV, RFC 3339 or
/// ServiceStack's `/Date(milliseconds+zone)/` in JSON.
fn evtxecmd_time(v: &Json<'_>) -> Option<jiff::Timestamp> {
    if let Some(ms) = v.as_str().and_then(|s| {
        s.strip_prefix("/Date(")
            .or_else(|| s.strip_prefix("\\/Date("))
    }) {
        let digits: String = ms
            .chars()
            .enumerate()
            .take_while(|(i, c)| c.is_ascii_digit() || (*i == 0 && *c == '-'))
            .map(|(_, c)| c)
            .collect();
        return jiff::Timestamp::from_millisecond(digits.parse().ok()?).ok();
    }
    let s = v.as_str()?.trim();
    if let Ok(t) = s.parse::<jiff::Timestamp>() {
        return Some(t);
    }
    let civil: jiff::civil::DateTime = s.parse().ok()?;
    civil
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

/// Reads EvtxECmd's CSV from `reader` (the file shown as `path`): each row handed to
/// `sink` as a JSON object of its columns, with its line; returns how many. A row longer
/// than [`crate::MAX_LINE`] ends the file with an error, as a damaged one does.
pub(crate) fn read_csv(
    path: &Path,
    reader: Box<dyn BufRead>,
    sink: &mut dyn FnMut(Row<'_>),
) -> u64 {
    let start = std::rc::Rc::new(std::cell::Cell::new(0u64));
    let bounded = Bounded {
        inner: reader,
        read: 0,
        row_start: std::rc::Rc::clone(&start),
    };
    let mut csv = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(bounded);
    let headers = match csv.headers() {
        Ok(h) => h
            .iter()
            .map(|h| h.trim_start_matches('\u{feff}').to_string())
            .collect::<Vec<_>>(),
        Err(e) => {
            sink(Row::Error(InputError::new(
                path,
                Position::None,
                ErrorKind::InvalidJson(format!("CSV header: {e}")),
            )));
            return 0;
        }
    };
    let mut row = csv::StringRecord::new();
    let mut n = 0;
    loop {
        start.set(csv.position().byte());
        match csv.read_record(&mut row) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) => {
                let line = e.position().map_or(0, csv::Position::line);
                let kind = ErrorKind::UnreadableEvent(format!("CSV: {e}; the rest is not read"));
                sink(Row::Error(InputError::new(
                    path,
                    Position::Line(line),
                    kind,
                )));
                break;
            }
        }
        let line = row.position().map_or(0, csv::Position::line);
        let mut o = ObjectBuilder::with_capacity(headers.len());
        for (h, v) in headers.iter().zip(row.iter()) {
            o.insert(Cow::Borrowed(h.as_str()), Json::Str(Cow::Borrowed(v)));
        }
        let o = o.build();
        n += 1;
        sink(Row::Event(&Json::Object(o), Position::Line(line)));
    }
    n
}

/// The CSV stream, failing when one row passes [`crate::MAX_LINE`] bytes.
struct Bounded<R> {
    inner: R,
    read: u64,
    row_start: std::rc::Rc<std::cell::Cell<u64>>,
}

impl<R: Read> Read for Bounded<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.read.saturating_sub(self.row_start.get()) > crate::MAX_LINE as u64 {
            return Err(std::io::Error::other(format!(
                "a row longer than {} MiB",
                crate::MAX_LINE >> 20
            )));
        }
        let n = self.inner.read(buf)?;
        self.read += n as u64;
        Ok(n)
    }
}
