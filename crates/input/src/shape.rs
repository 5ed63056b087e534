//! The shapes Windows events take in JSON exports, each recognised by its content and
//! read into the paths of the EVTX rendering, so rules and Details see one event alike
//! whichever tool exported it:
//!
//! | shape | recognised by | fields |
//! | --- | --- | --- |
//! | evtx_dump (the `evtx` crate) | an `Event` object | as they are |
//! | Elastic Winlogbeat / Agent | a `winlog` object | `winlog.channel`, `event_id`, `computer_name`, `provider_name`, `record_id`, `event_data`, `user_data`, `@timestamp` |
//! | Splunk export | `result._raw` (or `_raw`) holding `<Event>` XML | the XML |
//! | Velociraptor `parse_evtx()` | `System` and `EventData`/`UserData` objects | `System.EventID.Value`, `System.TimeCreated.SystemTime` (epoch seconds), … |
//! | Azure Monitor `SecurityEvent` / `Event` | `TimeGenerated` with `EventID` | `Channel` or `EventLog`, `EventSourceName` or `Source`, `EventData` XML text |
//! | EvtxECmd (CSV rows, JSON) | `EventRecordId`, `EventId` and `Payload` | see [`crate::evtxecmd`] |
//! | flat rows (NXLog, the Security-Datasets files) | `EventID` at the top | `Channel`, `Hostname`/`Computer`, `SourceName`/`ProviderName`, `RecordNumber`, a time, the event data beside them |
//!
//! Every time is written as UTC RFC 3339 in `TimeCreated_attributes.SystemTime`.

use crate::error::ErrorKind;
use crate::flatten::Flattener;
use crate::json_tree::{Json, Object};
use crate::record::RecordView;
use crate::xml::walk_xml;
use jiff::civil::DateTime;
use jiff::Timestamp;
use scanner_rules::{FieldTable, CHANNEL, EVENT_ID};
use std::fmt::Write as _;

const CHANNEL_PATH: &str = "Event.System.Channel";
const EVENT_ID_PATH: &str = "Event.System.EventID";
const COMPUTER: &str = "Event.System.Computer";
const PROVIDER: &str = "Event.System.Provider_attributes.Name";
const PROVIDER_GUID: &str = "Event.System.Provider_attributes.Guid";
const RECORD_ID: &str = "Event.System.EventRecordID";
const TIME: &str = "Event.System.TimeCreated_attributes.SystemTime";
const PROCESS_ID: &str = "Event.System.Execution_attributes.ProcessID";
const THREAD_ID: &str = "Event.System.Execution_attributes.ThreadID";
const USER_ID: &str = "Event.System.Security_attributes.UserID";

impl Flattener {
    /// Clears `view` and fills it from one JSON event in any of the shapes this module
    /// reads. An event in no known shape, or without a `Channel` or an `EventID`, is an
    /// error: the caller reports it, and no rule sees the event.
    pub(crate) fn fill_event(
        &mut self,
        event: &Json<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) -> Result<(), ErrorKind> {
        let Some(o) = event.as_object() else {
            return Err(ErrorKind::UnknownShape(format!(
                "a JSON {} instead of an object",
                event.kind()
            )));
        };
        view.clear(table.len());
        // The values are lowercased together once the event is in (as EVTX's are).
        view.defer_lowercase();
        let filled = self.fill_shape(event, o, table, view);
        view.lowercase_deferred();
        filled?;
        if view.first(CHANNEL).is_none() {
            return Err(ErrorKind::NoChannel);
        }
        if view.first(EVENT_ID).is_none() {
            return Err(ErrorKind::NoEventId);
        }
        Ok(())
    }

    /// Adds the leaves of `event` (the object `o`), in the first shape it has, to `view`.
    fn fill_shape(
        &mut self,
        event: &Json<'_>,
        o: &Object<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) -> Result<(), ErrorKind> {
        if o.get("Event").is_some_and(Json::is_object) {
            self.push_tree("", event, table, view);
        } else if let Some(w) = o.get("winlog").and_then(Json::as_object) {
            self.beats(o, w, table, view);
        } else if let Some(raw) = splunk_raw(o) {
            add_xml(raw, table, view)?;
        } else if let Some(sys) = o.get("System").and_then(Json::as_object) {
            self.velociraptor(o, sys, table, view);
        } else if crate::evtxecmd::is_row(o) {
            self.evtxecmd(o, table, view)?;
        } else if o.contains_key("TimeGenerated") && o.contains_key("EventID") {
            self.azure(o, table, view)?;
        } else if o.contains_key("EventID") {
            self.flat(o, table, view);
        } else {
            let mut keys = String::from("keys ");
            for (i, k) in o.keys().take(6).enumerate() {
                let _ = write!(keys, "{}{k:?}", if i > 0 { ", " } else { "" });
            }
            if o.len() > 6 {
                keys.push_str(", …");
            }
            if o.is_empty() {
                keys = "an empty object".into();
            }
            return Err(ErrorKind::UnknownShape(keys));
        }
        Ok(())
    }

    fn put(&mut self, path: &str, v: &Json<'_>, table: &FieldTable, view: &mut RecordView) {
        if !v.is_null() {
            self.push_tree(path, v, table, view);
        }
    }

    /// A field of the event data: `Event.EventData.<key>`.
    pub(crate) fn data(
        &mut self,
        key: &str,
        v: &Json<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) {
        self.path.clear();
        self.path.push_str("Event.EventData.");
        self.path.push_str(key);
        self.push_tree_here(v, table, view);
    }

    pub(crate) fn time(&mut self, t: Option<Timestamp>, table: &FieldTable, view: &mut RecordView) {
        if let Some(t) = t {
            self.num.clear();
            let _ = write!(self.num, "{t}");
            view.push(table, TIME, &self.num);
        }
    }

    fn beats(&mut self, o: &Object<'_>, w: &Object<'_>, table: &FieldTable, view: &mut RecordView) {
        let get = |k: &str| w.get(k).unwrap_or(&Json::Null);
        self.put(CHANNEL_PATH, get("channel"), table, view);
        self.put(EVENT_ID_PATH, get("event_id"), table, view);
        self.put(COMPUTER, get("computer_name"), table, view);
        self.put(PROVIDER, get("provider_name"), table, view);
        self.put(PROVIDER_GUID, get("provider_guid"), table, view);
        self.put(RECORD_ID, get("record_id"), table, view);
        if let Some(p) = w.get("process").and_then(|p| p.get("pid")) {
            self.put(PROCESS_ID, p, table, view);
        }
        if let Some(t) = w
            .get("process")
            .and_then(|p| p.get("thread"))
            .and_then(|t| t.get("id"))
        {
            self.put(THREAD_ID, t, table, view);
        }
        if let Some(u) = w.get("user").and_then(|u| u.get("identifier")) {
            self.put(USER_ID, u, table, view);
        }
        let t = o.get("@timestamp").and_then(time_of);
        self.time(t, table, view);
        self.put("Event.EventData", get("event_data"), table, view);
        self.beats_system(o, w, table, view);
        // UserData's one child element is named by `xml_name`, its fields beside it.
        match get("user_data") {
            Json::Object(u) => match u.get("xml_name").and_then(Json::as_str) {
                Some(name) => {
                    let base = format!("Event.UserData.{name}");
                    for (k, v) in u.iter().filter(|(k, _)| *k != "xml_name") {
                        self.put(&format!("{base}.{k}"), v, table, view);
                    }
                }
                None => self.put("Event.UserData", get("user_data"), table, view),
            },
            v => self.put("Event.UserData", v, table, view),
        }
    }

    /// The System elements Winlogbeat gives as names, turned back into EVTX's numbers
    /// where the name is one Windows defines (`log.level` `warning` → `Level` 3,
    /// `winlog.opcode` `Info` → `Opcode` 0, `winlog.keywords` `Audit Success` →
    /// `Keywords` 0x8020000000000000), and those it gives as they are (`version`,
    /// `activity_id`). `winlog.task` is a name only (`Logon`): EVTX's `Task` number is
    /// not in the document.
    fn beats_system(
        &mut self,
        o: &Object<'_>,
        w: &Object<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) {
        let level = o
            .get("log")
            .and_then(|l| l.get("level"))
            .and_then(Json::as_str)
            .and_then(|l| match l.to_ascii_lowercase().as_str() {
                "critical" => Some("1"),
                "error" => Some("2"),
                "warning" => Some("3"),
                "information" | "info" => Some("4"),
                "verbose" => Some("5"),
                _ => None,
            });
        if let Some(l) = level {
            view.push(table, "Event.System.Level", l);
        }
        let opcode = w
            .get("opcode")
            .and_then(Json::as_str)
            .and_then(|op| match op {
                "Info" => Some("0"),
                "Start" => Some("1"),
                "Stop" => Some("2"),
                _ => None,
            });
        if let Some(op) = opcode {
            view.push(table, "Event.System.Opcode", op);
        }
        let keywords = w.get("keywords").and_then(Json::as_array).and_then(|k| {
            let names: Vec<&str> = k.iter().filter_map(Json::as_str).collect();
            match names.as_slice() {
                ["Audit Success"] => Some("0x8020000000000000"),
                ["Audit Failure"] => Some("0x8010000000000000"),
                ["Classic"] => Some("0x80000000000000"),
                _ => None,
            }
        });
        if let Some(k) = keywords {
            view.push(table, "Event.System.Keywords", k);
        }
        if let Some(v) = w.get("version") {
            self.put("Event.System.Version", v, table, view);
        }
        if let Some(a) = w.get("activity_id") {
            self.put(
                "Event.System.Correlation_attributes.ActivityID",
                a,
                table,
                view,
            );
        }
    }

    fn velociraptor(
        &mut self,
        o: &Object<'_>,
        sys: &Object<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) {
        for (k, v) in sys.iter() {
            match (k, v) {
                ("EventID", Json::Object(e)) => {
                    if let Some(id) = e.get("Value") {
                        self.put(EVENT_ID_PATH, id, table, view);
                    }
                    if let Some(q) = e.get("Qualifiers") {
                        self.put("Event.System.EventID_attributes.Qualifiers", q, table, view);
                    }
                }
                ("TimeCreated", Json::Object(t)) => {
                    let t = t.get("SystemTime").and_then(time_of);
                    self.time(t, table, view);
                }
                ("TimeCreated", t) => {
                    let t = time_of(t);
                    self.time(t, table, view);
                }
                // `Provider`, `Execution`, `Security`: attributes in EVTX.
                (_, Json::Object(m)) => {
                    for (a, x) in m.iter() {
                        let path = format!("Event.System.{k}_attributes.{a}");
                        self.put(&path, x, table, view);
                    }
                }
                _ => {
                    let path = format!("Event.System.{k}");
                    self.put(&path, v, table, view);
                }
            }
        }
        for part in ["EventData", "UserData"] {
            if let Some(d) = o.get(part) {
                let path = format!("Event.{part}");
                self.put(&path, d, table, view);
            }
        }
    }

    fn azure(
        &mut self,
        o: &Object<'_>,
        table: &FieldTable,
        view: &mut RecordView,
    ) -> Result<(), ErrorKind> {
        let xml = o
            .get("EventData")
            .and_then(Json::as_str)
            .filter(|s| !s.trim().is_empty());
        for (k, v) in o.iter() {
            match k {
                "Channel" | "EventLog" => self.put(CHANNEL_PATH, v, table, view),
                "EventID" => self.put(EVENT_ID_PATH, v, table, view),
                "Computer" => self.put(COMPUTER, v, table, view),
                "EventSourceName" | "Source" => self.put(PROVIDER, v, table, view),
                "EventRecordId" => self.put(RECORD_ID, v, table, view),
                "Level" | "Task" | "Keywords" | "Version" | "Opcode" => {
                    let path = format!("Event.System.{k}");
                    self.put(&path, v, table, view);
                }
                "TimeGenerated" => {
                    let t = time_of(v);
                    self.time(t, table, view);
                }
                "EventData" | "ParameterXml" => {}
                // Without the XML, the columns Azure extracted are the event data.
                _ if xml.is_none() && !v.is_null() => self.data(k, v, table, view),
                _ => {}
            }
        }
        if let Some(xml) = xml {
            add_xml(xml, table, view)?;
        }
        Ok(())
    }

    fn flat(&mut self, o: &Object<'_>, table: &FieldTable, view: &mut RecordView) {
        let mut computer = None;
        for (k, v) in o.iter() {
            match k {
                "Channel" => self.put(CHANNEL_PATH, v, table, view),
                "EventID" => self.put(EVENT_ID_PATH, v, table, view),
                "Computer" => computer = Some(v),
                "Hostname" => {
                    computer.get_or_insert(v);
                }
                "SourceName" | "ProviderName" => self.put(PROVIDER, v, table, view),
                "ProviderGuid" => self.put(PROVIDER_GUID, v, table, view),
                "RecordNumber" | "EventRecordID" => self.put(RECORD_ID, v, table, view),
                "ExecutionProcessID" => self.put(PROCESS_ID, v, table, view),
                "ExecutionThreadID" | "ThreadID" => self.put(THREAD_ID, v, table, view),
                "UserID" => self.put(USER_ID, v, table, view),
                "Level" => self.put("Event.System.Level", v, table, view),
                "Task" => self.put("Event.System.Task", v, table, view),
                "Keywords" => self.put("Event.System.Keywords", v, table, view),
                "Version" => self.put("Event.System.Version", v, table, view),
                // NXLog writes the opcode's name in `Opcode` and its number here.
                "OpcodeValue" => self.put("Event.System.Opcode", v, table, view),
                "Opcode" if v.is_number() => self.put("Event.System.Opcode", v, table, view),
                "TimeCreated" | "EventTime" | "@timestamp" | "EventReceivedTime" => {}
                _ if v.is_null() => {}
                _ => self.data(k, v, table, view),
            }
        }
        if let Some(c) = computer {
            self.put(COMPUTER, c, table, view);
        }
        let t = flat_time(o);
        self.time(t, table, view);
    }
}

/// Splunk's event XML: `result._raw` in an export, `_raw` in a bare row.
fn splunk_raw<'a>(o: &'a Object<'_>) -> Option<&'a str> {
    let raw = o
        .get("result")
        .and_then(|r| r.get("_raw"))
        .or_else(|| o.get("_raw"))?
        .as_str()?;
    raw.trim_start().starts_with('<').then_some(raw)
}

/// A time as exports write it: RFC 3339 with a zone, a date and time without one (taken
/// as UTC), or epoch seconds (milliseconds past 10^11).
pub(crate) fn time_of(v: &Json<'_>) -> Option<Timestamp> {
    match v {
        Json::Str(s) => parse_any(s),
        Json::U64(_) | Json::I64(_) | Json::F64(_) => {
            let x = v.as_f64()?;
            let micros = if x.abs() > 1e11 { x * 1e3 } else { x * 1e6 };
            Timestamp::from_microsecond(micros.round() as i64).ok()
        }
        _ => None,
    }
}

fn parse_any(s: &str) -> Option<Timestamp> {
    let s = s.trim();
    if let Ok(t) = s.parse::<Timestamp>() {
        return Some(t);
    }
    local(s)?
        .to_zoned(jiff::tz::TimeZone::UTC)
        .ok()
        .map(|z| z.timestamp())
}

/// A date and time without a zone.
fn local(s: &str) -> Option<DateTime> {
    s.parse::<DateTime>().ok()
}

/// The time of a flat row. `TimeCreated` is the event's own; NXLog's `EventTime` is the
/// collecting machine's local time without a zone, turned into UTC by that machine's
/// offset, read from `EventReceivedTime` (local) beside `@timestamp` (UTC, taken when
/// the row was received), rounded to a quarter hour; failing that, `@timestamp` (the
/// time of receipt, seconds after the event).
fn flat_time(o: &Object<'_>) -> Option<Timestamp> {
    if let Some(t) = o.get("TimeCreated").and_then(time_of) {
        return Some(t);
    }
    let at = o.get("@timestamp").and_then(time_of);
    if let Some(s) = o.get("EventTime").and_then(Json::as_str) {
        if let Ok(t) = s.trim().parse::<Timestamp>() {
            return Some(t);
        }
        if let Some(event) = local(s.trim()) {
            let received = o
                .get("EventReceivedTime")
                .and_then(Json::as_str)
                .and_then(|r| local(r.trim()));
            if let (Some(at), Some(received)) = (at, received) {
                let utc = received.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
                let secs = at.as_second() - utc.as_second();
                let quarter = (secs as f64 / 900.0).round() as i64 * 900;
                if quarter.abs() <= 14 * 3600 {
                    let e = event.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
                    return Timestamp::from_second(e.as_second() + quarter).ok();
                }
            }
            if at.is_none() {
                return parse_any(s);
            }
        }
    }
    at.or_else(|| o.get("TimeGenerated").and_then(time_of))
}

/// Adds the leaves of one event's XML (a JSON field holding it) to `view`; the first
/// XML error, if any, is the event's error.
fn add_xml(xml: &str, table: &FieldTable, view: &mut RecordView) -> Result<(), ErrorKind> {
    let mut bad = None;
    walk_xml(
        xml.as_bytes(),
        false,
        table,
        view,
        |_| {},
        |e| {
            bad.get_or_insert(e);
        },
    );
    match bad {
        Some(e) => Err(ErrorKind::InvalidXml(e.to_string())),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_rules::Event as _;

    fn fill(json: &str) -> Result<Vec<(String, String)>, ErrorKind> {
        let t = FieldTable::new();
        let mut v = RecordView::default();
        let event: Json<'_> = serde_json::from_str(json).unwrap();
        Flattener::default().fill_event(&event, &t, &mut v)?;
        Ok(v.leaves()
            .map(|(p, x)| (p.to_string(), x.to_string()))
            .collect())
    }

    fn get<'a>(leaves: &'a [(String, String)], path: &str) -> Option<&'a str> {
        leaves
            .iter()
            .find(|(p, _)| p == path)
            .map(|(_, v)| v.as_str())
    }

    #[test]
    fn nxlog_rows_get_system_fields_and_a_utc_time_from_the_local_one() {
        let row = r#"{"EventID":10,"Channel":"Microsoft-Windows-Sysmon/Operational","SourceName":"Microsoft-Windows-Sysmon","Hostname":"WS5","host":"wec","RecordNumber":1929240,"EventTime":"2020-09-20 02:57:14","EventReceivedTime":"2020-09-20 02:57:17","@timestamp":"2020-09-20T06:57:17.371Z","GrantedAccess":"0x1000","tags":["x"],"Nothing":null,"Level":"3","Opcode":"Info","OpcodeValue":0}"#;
        let l = fill(row).unwrap();
        assert_eq!(
            get(&l, CHANNEL_PATH),
            Some("Microsoft-Windows-Sysmon/Operational")
        );
        assert_eq!(get(&l, EVENT_ID_PATH), Some("10"));
        assert_eq!(get(&l, COMPUTER), Some("WS5"));
        assert_eq!(get(&l, PROVIDER), Some("Microsoft-Windows-Sysmon"));
        assert_eq!(get(&l, RECORD_ID), Some("1929240"));
        assert_eq!(get(&l, TIME), Some("2020-09-20T06:57:14Z"));
        assert_eq!(get(&l, "Event.EventData.GrantedAccess"), Some("0x1000"));
        assert_eq!(get(&l, "Event.EventData.host"), Some("wec"));
        assert_eq!(get(&l, "Event.EventData.tags"), Some("x"));
        assert_eq!(get(&l, "Event.EventData.Nothing"), None);
        assert_eq!(get(&l, "Event.System.Level"), Some("3"));
        assert_eq!(get(&l, "Event.System.Opcode"), Some("0"));
        assert_eq!(get(&l, "Event.EventData.Opcode"), Some("Info"));
    }

    #[test]
    fn times_without_a_zone_are_utc_and_numbers_are_epoch_seconds() {
        let l =
            fill(r#"{"EventID":1,"Channel":"C","TimeCreated":"2020-10-18 10:56:18.799"}"#).unwrap();
        assert_eq!(get(&l, TIME), Some("2020-10-18T10:56:18.799Z"));
        let l =
            fill(r#"{"EventID":1,"Channel":"C","@timestamp":"2023-07-19T09:03:40.710Z"}"#).unwrap();
        assert_eq!(get(&l, TIME), Some("2023-07-19T09:03:40.71Z"));
        assert_eq!(
            time_of(&Json::F64(1_600_000_000.5)).map(|t| t.to_string()),
            Some("2020-09-13T12:26:40.5Z".into())
        );
    }

    #[test]
    fn events_without_channel_or_event_id_or_shape_are_errors() {
        assert!(matches!(
            fill(r#"{"EventID":1}"#),
            Err(ErrorKind::NoChannel)
        ));
        assert!(matches!(
            fill(r#"{"winlog":{"channel":"Security"}}"#),
            Err(ErrorKind::NoEventId)
        ));
        let Err(ErrorKind::UnknownShape(d)) = fill(r#"{"a":1,"b":2}"#) else {
            panic!()
        };
        assert_eq!(d, r#"keys "a", "b""#);
        assert!(matches!(fill("[1]"), Err(ErrorKind::UnknownShape(_))));
        let bad = r#"{"TimeGenerated":"2022-05-13T08:54:05Z","EventID":1,"Channel":"Security","EventData":"<EventData><Data Name=\"a\">&bogus;</Data></EventData>"}"#;
        assert!(matches!(fill(bad), Err(ErrorKind::InvalidXml(_))));
    }

    #[test]
    fn azure_rows_read_their_event_data_xml() {
        let row = r#"{"TimeGenerated":"2022-05-13T08:54:05.21Z","Computer":"WS5","EventSourceName":"Microsoft-Windows-Security-Auditing","Channel":"Security","EventID":5156,"Application":"dup","EventData":"<EventData xmlns=\"http://schemas.microsoft.com/win/2004/08/events/event\">\r\n  <Data Name=\"Application\">\\device\\x.exe</Data>\r\n</EventData>"}"#;
        let l = fill(row).unwrap();
        assert_eq!(get(&l, TIME), Some("2022-05-13T08:54:05.21Z"));
        assert_eq!(get(&l, COMPUTER), Some("WS5"));
        assert_eq!(
            get(&l, "Event.EventData.Application"),
            Some("\\device\\x.exe")
        );
        assert_eq!(
            l.iter().filter(|(p, _)| p.ends_with("Application")).count(),
            1
        );
    }

    #[test]
    fn view_reports_fields_present() {
        let t = FieldTable::new();
        let mut v = RecordView::default();
        v.clear(t.len());
        v.push(&t, CHANNEL_PATH, "x");
        assert!(v.has(CHANNEL) && !v.has(EVENT_ID));
    }
}
