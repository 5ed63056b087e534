//! Windows Event XML into a [`RecordView`], with the paths the EVTX JSON rendering
//! gives (`Event.System.Provider_attributes.Name`, `Event.EventData.<Name>`), so rules
//! and Details read it as they read EVTX. Used for XML files (`wevtutil qe /f:xml`,
//! Event Viewer's "Save as XML": `<Events><Event>…</Event></Events>`) and for the event
//! XML that JSON exports carry as text (Splunk's `_raw`, Azure's `EventData`).
//!
//! Hostile input stays harmless: no DTD is read, no external entity is resolved, and an
//! entity other than the five predefined ones and character references is an error
//! (none is expanded); nesting deeper than [`MAX_DEPTH`] ends the event.

use crate::error::{ErrorKind, InputError, Position};
use crate::flatten::leaf;
use crate::record::RecordView;
use quick_xml::events::{BytesStart, Event};
use quick_xml::Reader;
use scanner_rules::{FieldTable, CHANNEL, EVENT_ID};
use std::io::BufRead;
use std::path::Path;

/// Deepest element nesting read in one event.
pub const MAX_DEPTH: usize = 64;

/// Why event XML could not be read (its text is the reason an error shows).
#[derive(Debug)]
pub struct XmlError(String);

impl std::fmt::Display for XmlError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl XmlError {
    fn of(e: impl std::fmt::Display) -> Self {
        XmlError(e.to_string())
    }
}

/// Scans one event XML file (`<Events><Event>…</Event>…</Events>`, or events one
/// after another): each event is filled into a view, checked for a `Channel` and an
/// `EventID`, and handed to `f` with its number (`f` may add fields to the view, as the
/// scan's classic PowerShell extraction does); returns how many were handed over.
/// Problems go to `err`; XML that stops parsing ends the file there.
pub fn read_xml<S, F, E>(path: &Path, table: &FieldTable, state: &mut S, f: F, err: E) -> u64
where
    F: Fn(&mut S, &mut RecordView, Position),
    E: Fn(InputError),
{
    let opened = crate::format::open_stream(path);
    read_xml_from(path, opened, table, state, f, err)
}

/// [`read_xml`] from `opened`, the stream of the file shown as `path`.
pub(crate) fn read_xml_from<S, F, E>(
    path: &Path,
    opened: std::io::Result<Box<dyn std::io::BufRead>>,
    table: &FieldTable,
    state: &mut S,
    f: F,
    err: E,
) -> u64
where
    F: Fn(&mut S, &mut RecordView, Position),
    E: Fn(InputError),
{
    let file = match opened {
        Ok(f) => f,
        Err(e) => {
            err(InputError::new(path, Position::None, ErrorKind::Io(e)));
            return 0;
        }
    };
    let mut view = RecordView::default();
    let seen = std::cell::Cell::new(0u64);
    let failed = std::cell::Cell::new(false);
    let mut n = 0u64;
    walk_xml(
        file,
        true,
        table,
        &mut view,
        |v| {
            seen.set(seen.get() + 1);
            let at = Position::Event(seen.get());
            if v.first(CHANNEL).is_none() {
                err(InputError::new(path, at, ErrorKind::NoChannel));
            } else if v.first(EVENT_ID).is_none() {
                err(InputError::new(path, at, ErrorKind::NoEventId));
            } else {
                n += 1;
                f(state, v, at);
            }
        },
        |e| {
            failed.set(true);
            let kind = ErrorKind::InvalidXml(e.to_string());
            err(InputError::new(
                path,
                Position::AfterEvents(seen.get()),
                kind,
            ));
        },
    );
    if seen.get() == 0 && !failed.get() {
        // Well-formed XML with no event at all: not a silent empty scan.
        err(InputError::new(path, Position::None, ErrorKind::NoXmlEvent));
    }
    n
}

/// One open element: where its path ended before it, whether it held text, a child or
/// an attribute (an element with none of them is an empty value, as EVTX renders it).
struct Open {
    base: usize,
    filled: bool,
}

/// Walks event XML from `reader`. Leaves go to `view`; at the end of each `<Event>`
/// element, `done(view)` is called. With `whole`, each event (an `<Event>`, or an
/// `<EventData>` or `<UserData>` outside one) starts by clearing `view` (an XML file
/// of many events); without, leaves are added to what `view`
/// holds (one event's XML inside a JSON row). Outside an `<Event>`, an `<EventData>` or
/// `<UserData>` element is read as that part of an event (Azure's `EventData` text,
/// whose wrapper elements are skipped). `RenderingInfo` (Event Viewer's rendered
/// message) is skipped: EVTX records have no such part.
pub(crate) fn walk_xml<R: BufRead>(
    reader: R,
    whole: bool,
    table: &FieldTable,
    view: &mut RecordView,
    mut done: impl FnMut(&mut RecordView),
    mut failed: impl FnMut(XmlError),
) {
    let mut r = Reader::from_reader(reader);
    let mut buf = Vec::new();
    let mut path = String::new();
    let mut open: Vec<Open> = Vec::new();
    // Depth of the element being skipped (`RenderingInfo`, or an event gone bad).
    let mut skip: Option<usize> = None;
    // Depth (in `open`) of unrelated wrapper elements outside any event.
    let mut outside = 0usize;
    loop {
        buf.clear();
        let ev = match r.read_event_into(&mut buf) {
            Ok(ev) => ev,
            Err(e) => {
                failed(XmlError(format!("{e} (at byte {})", r.error_position())));
                return;
            }
        };
        let (start, empty) = match &ev {
            Event::Start(_) => (true, false),
            Event::Empty(_) => (true, true),
            _ => (false, false),
        };
        if start {
            let (Event::Start(e) | Event::Empty(e)) = &ev else {
                continue;
            };
            if let Some(d) = skip.as_mut() {
                if !empty {
                    *d += 1;
                }
                continue;
            }
            let name = e.local_name();
            let name = std::str::from_utf8(name.as_ref()).unwrap_or("?");
            if open.is_empty() {
                let root = match name {
                    "Event" => "Event",
                    "EventData" => "Event.EventData",
                    "UserData" => "Event.UserData",
                    _ => {
                        if !empty {
                            outside += 1;
                        }
                        continue;
                    }
                };
                // Each event (or bare EventData/UserData fragment) starts a record.
                if whole {
                    view.clear(table.len());
                }
                path.clear();
                path.push_str(root);
                open.push(Open {
                    base: 0,
                    filled: false,
                });
            } else {
                if open.len() >= MAX_DEPTH {
                    failed(XmlError(format!("nested deeper than {MAX_DEPTH} elements")));
                    open.clear();
                    skip = (!empty).then_some(1);
                    continue;
                }
                if name == "RenderingInfo" {
                    skip = (!empty).then_some(1);
                    continue;
                }
                if let Some(o) = open.last_mut() {
                    o.filled = true;
                }
                let base = path.len();
                path.push('.');
                match data_name(e, name) {
                    Some(n) => path.push_str(&n),
                    None => path.push_str(name),
                }
                open.push(Open {
                    base,
                    filled: false,
                });
            }
            if let Err(e) = attributes(e, name, &mut path, table, view, &mut open) {
                failed(e);
            }
            if empty {
                close(&mut path, &mut open, table, view, &mut done);
            }
            continue;
        }
        match ev {
            Event::End(_) => {
                if let Some(d) = skip.as_mut() {
                    *d -= 1;
                    if *d == 0 {
                        skip = None;
                    }
                } else if open.is_empty() {
                    outside = outside.saturating_sub(1);
                } else {
                    close(&mut path, &mut open, table, view, &mut done);
                }
            }
            Event::Text(t) if skip.is_none() && !open.is_empty() => match t.unescape() {
                Ok(s) => text(&s, &path, &mut open, table, view),
                Err(e) => failed(XmlError(e.to_string())),
            },
            Event::CData(c) if skip.is_none() && !open.is_empty() => {
                let s = String::from_utf8_lossy(&c);
                text(&s, &path, &mut open, table, view);
            }
            Event::Eof => {
                if !open.is_empty() || skip.is_some() {
                    failed(XmlError("the XML ends inside an element".into()));
                }
                return;
            }
            _ => {}
        }
    }
}

/// A `<Data Name="X">` element's name, which EVTX uses as the field's path segment.
fn data_name(e: &BytesStart<'_>, name: &str) -> Option<String> {
    if name != "Data" {
        return None;
    }
    e.attributes().flatten().find_map(|a| {
        (a.key.as_ref() == b"Name")
            .then(|| a.unescape_value().ok().map(|v| v.into_owned()))
            .flatten()
    })
}

/// Adds an element's attributes as `<path>_attributes.<name>` (namespace declarations
/// and a `Data` element's `Name` left out).
fn attributes(
    e: &BytesStart<'_>,
    name: &str,
    path: &mut String,
    table: &FieldTable,
    view: &mut RecordView,
    open: &mut [Open],
) -> Result<(), XmlError> {
    for a in e.attributes() {
        let a = a.map_err(XmlError::of)?;
        let key = a.key.as_ref();
        if key.starts_with(b"xmlns") || (name == "Data" && key == b"Name") {
            continue;
        }
        let value = a.unescape_value().map_err(XmlError::of)?;
        let base = path.len();
        path.push_str("_attributes.");
        path.push_str(std::str::from_utf8(a.key.local_name().as_ref()).unwrap_or("?"));
        leaf(view, table, path, &value);
        path.truncate(base);
        if let Some(o) = open.last_mut() {
            o.filled = true;
        }
    }
    Ok(())
}

fn text(s: &str, path: &str, open: &mut [Open], table: &FieldTable, view: &mut RecordView) {
    if s.trim().is_empty() {
        return;
    }
    leaf(view, table, path, s);
    if let Some(o) = open.last_mut() {
        o.filled = true;
    }
}

/// Ends the innermost open element: an empty one is an empty value; the end of an
/// `<Event>` hands the event over.
fn close(
    path: &mut String,
    open: &mut Vec<Open>,
    table: &FieldTable,
    view: &mut RecordView,
    done: &mut impl FnMut(&mut RecordView),
) {
    let Some(o) = open.pop() else { return };
    if !o.filled && !open.is_empty() {
        leaf(view, table, path, "");
    }
    if open.is_empty() {
        if path == "Event" {
            done(view);
        }
        path.clear();
    } else {
        path.truncate(o.base);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_rules::Event as _;

    fn walk(xml: &str) -> (Vec<Vec<(String, String)>>, Vec<String>) {
        let t = FieldTable::new();
        let mut v = RecordView::default();
        let mut events = Vec::new();
        let mut errors = Vec::new();
        walk_xml(
            xml.as_bytes(),
            true,
            &t,
            &mut v,
            |v| {
                events.push(
                    v.leaves()
                        .map(|(p, x)| (p.to_string(), x.to_string()))
                        .collect(),
                )
            },
            |e| errors.push(e.to_string()),
        );
        (events, errors)
    }

    #[test]
    fn events_get_the_paths_of_the_evtx_rendering() {
        let xml = r#"<?xml version="1.0"?><Events><Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System><Provider Name="Microsoft-Windows-Security-Auditing" Guid="{5}"/><EventID>4688</EventID><TimeCreated SystemTime="2020-01-01T00:00:00.1Z"/><Correlation/><Channel>Security</Channel></System><EventData><Data Name="CommandLine">a &amp; b</Data><Data Name="Empty"/><Data>x</Data></EventData><RenderingInfo Culture="en-US"><Message>hello</Message></RenderingInfo></Event>
<Event><System><EventID>1</EventID></System></Event></Events>"#;
        let (events, errors) = walk(xml);
        assert!(errors.is_empty(), "{errors:?}");
        let want = [
            (
                "Event.System.Provider_attributes.Name",
                "Microsoft-Windows-Security-Auditing",
            ),
            ("Event.System.Provider_attributes.Guid", "{5}"),
            ("Event.System.EventID", "4688"),
            (
                "Event.System.TimeCreated_attributes.SystemTime",
                "2020-01-01T00:00:00.1Z",
            ),
            ("Event.System.Correlation", ""),
            ("Event.System.Channel", "Security"),
            ("Event.EventData.CommandLine", "a & b"),
            ("Event.EventData.Empty", ""),
            ("Event.EventData.Data", "x"),
        ];
        let got: Vec<(&str, &str)> = events[0]
            .iter()
            .map(|(p, v)| (p.as_str(), v.as_str()))
            .collect();
        assert_eq!(got, want);
        assert_eq!(
            events[1],
            [("Event.System.EventID".to_string(), "1".to_string())]
        );
    }

    #[test]
    fn entities_are_never_expanded_and_dtds_never_read() {
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;"><!ENTITY xxe SYSTEM "file:///etc/passwd">]><Events><Event><System><Channel>&lol2;</Channel><EventID>&xxe;</EventID></System></Event></Events>"#;
        let (events, errors) = walk(bomb);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(events
            .iter()
            .flatten()
            .all(|(_, v)| !v.contains("lol") && !v.contains("root")));
    }

    #[test]
    fn deep_nesting_and_truncation_are_errors_not_panics() {
        let deep = format!("<Event>{}", "<a>".repeat(100_000));
        let (events, errors) = walk(&deep);
        assert!(events.is_empty());
        assert!(errors[0].contains("nested deeper"), "{errors:?}");
        let (_, errors) = walk("<Events><Event><System><Channel>Sec");
        assert!(!errors.is_empty());
    }

    #[test]
    fn a_fragment_adds_to_the_view() {
        let mut t = FieldTable::new();
        let cmd = t.intern("CommandLine");
        let mut v = RecordView::default();
        v.clear(t.len());
        v.push(&t, "Event.System.Channel", "Security");
        let xml = r#"<DataItem><EventData xmlns="x"><Data Name="CommandLine">whoami</Data></EventData></DataItem>"#;
        walk_xml(xml.as_bytes(), false, &t, &mut v, |_| {}, |e| panic!("{e}"));
        assert_eq!(v.first(cmd), Some("whoami"));
        assert_eq!(v.first(CHANNEL), Some("Security"));
        assert!(!v.has(EVENT_ID));
    }

    #[test]
    fn a_file_of_bare_event_data_is_read_into_a_fresh_view() {
        // A file whose root is `<EventData>`: the view, never used before, is made
        // for the table before the first leaf (it once panicked on an empty view);
        // with no `<Event>` closed, nothing is handed over (read_xml then says so).
        let mut t = FieldTable::new();
        let cmd = t.intern("CommandLine");
        let mut v = RecordView::default();
        let xml = r#"<EventData><Data Name="CommandLine">whoami</Data></EventData>"#;
        let mut seen = Vec::new();
        walk_xml(
            xml.as_bytes(),
            true,
            &t,
            &mut v,
            |v| seen.push(v.first(cmd).map(str::to_string)),
            |e| panic!("{e}"),
        );
        assert!(seen.is_empty(), "{seen:?}");
        assert_eq!(v.first(cmd), Some("whoami"));
    }
}
