//! Events from XML: the `<Event>` form Event Viewer shows (and `wevtutil qe /f:xml`
//! prints), one event or several (bare, or inside an `<Events>` root).
//!
//! A small parser of its own: elements, attributes, text, the five predefined entities
//! and character references, CDATA, comments and processing instructions (skipped).
//! No DTDs. Whitespace-only text between elements is dropped, as Event Viewer's
//! indentation is not part of the event.
//!
//! Text is a string everywhere, except that `System` fields Windows stores typed become
//! that type when the type renders back to the very same text (`<EventID>4688</EventID>`
//! becomes a UInt16), and `TimeCreated/@SystemTime` always becomes a FILETIME (its text
//! then reads back with seven fractional digits).

use crate::error::Error;
use crate::event::{Attribute, Element, Event, Node};
use crate::value::{parse_filetime, Guid, Sid, Value};

impl Event {
    /// Parses one event: `xml` must hold exactly one.
    pub fn from_xml(xml: &str) -> Result<Event, Error> {
        let mut events = events_from_xml(xml)?;
        match events.len() {
            1 => Ok(events.remove(0)),
            0 => Err(Error::Xml(0, "no <Event> element".into())),
            n => Err(Error::Xml(0, format!("{n} events where one was expected"))),
        }
    }
}

/// Parses every event in `xml`: each top-level element, or the children of an
/// `<Events>` root (as in `<Events><Event>..</Event>..</Events>`).
pub fn events_from_xml(xml: &str) -> Result<Vec<Event>, Error> {
    let mut p = Parser {
        s: xml.as_bytes(),
        src: xml,
        i: 0,
    };
    if xml.starts_with('\u{feff}') {
        p.i = 3;
    }
    let mut events = Vec::new();
    loop {
        p.skip_misc()?;
        if p.i >= p.s.len() {
            break;
        }
        if p.peek() != Some(b'<') {
            return Err(p.err("text outside of an element"));
        }
        let e = p.element(0)?;
        if e.name != "Events" {
            events.push(Event {
                root: type_event(e),
            });
        } else {
            for c in e.children {
                match c {
                    Node::Element(c) => events.push(Event {
                        root: type_event(c),
                    }),
                    Node::Value(Value::String(s)) if s.trim().is_empty() => {}
                    Node::Value(_) => {
                        return Err(Error::Xml(0, format!("text inside <{}>", e.name)))
                    }
                }
            }
        }
    }
    Ok(events)
}

/// Gives `System` fields the types Windows stores them with (see the module docs).
fn type_event(mut root: Element) -> Element {
    for c in &mut root.children {
        if let Node::Element(system) = c {
            if system.name == "System" {
                for c in &mut system.children {
                    if let Node::Element(field) = c {
                        type_system_field(field, typed_if_same);
                    }
                }
            }
        }
    }
    root
}

/// The type Windows stores a `System` field with: for element text (`attr` None) or an
/// attribute.
pub(crate) fn system_type(element: &str, attr: Option<&str>) -> Option<SysType> {
    use SysType::*;
    Some(match (element, attr) {
        ("Provider", Some("Guid")) => Guid,
        ("EventID", None) | ("EventID", Some("Qualifiers")) | ("Task", None) => U16,
        ("Version", None) | ("Level", None) | ("Opcode", None) => U8,
        ("Keywords", None) => Hex64,
        ("TimeCreated", Some("SystemTime")) => FileTime,
        ("EventRecordID", None) => U64,
        ("Correlation", Some("ActivityID")) | ("Correlation", Some("RelatedActivityID")) => Guid,
        ("Execution", Some("ProcessID")) | ("Execution", Some("ThreadID")) => U32,
        ("Security", Some("UserID")) => Sid,
        _ => return None,
    })
}

/// System field types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SysType {
    U8,
    U16,
    U32,
    U64,
    Hex64,
    Guid,
    Sid,
    FileTime,
}

/// Applies `convert` to each value of a `System` field that has a Windows type.
pub(crate) fn type_system_field(field: &mut Element, convert: impl Fn(&Value, SysType) -> Value) {
    for a in &mut field.attributes {
        if let Some(ty) = system_type(&field.name, Some(&a.name)) {
            a.value = convert(&a.value, ty);
        }
    }
    if let Some(ty) = system_type(&field.name, None) {
        for c in &mut field.children {
            if let Node::Value(v) = c {
                *v = convert(v, ty);
            }
        }
    }
}

/// `v` as type `ty` when it is a string that the type renders back to unchanged
/// (a FILETIME: any parseable time); `v` itself otherwise.
pub(crate) fn typed_if_same(v: &Value, ty: SysType) -> Value {
    let Value::String(s) = v else {
        return v.clone();
    };
    let typed = match ty {
        SysType::U8 => s.parse().ok().map(Value::U8),
        SysType::U16 => s.parse().ok().map(Value::U16),
        SysType::U32 => s.parse().ok().map(Value::U32),
        SysType::U64 => s.parse().ok().map(Value::U64),
        SysType::Hex64 => s
            .strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .map(Value::Hex64),
        SysType::Guid => Guid::parse(s).map(Value::Guid),
        SysType::Sid => Sid::parse(s).map(Value::Sid),
        SysType::FileTime => return parse_filetime(s).map_or_else(|| v.clone(), Value::FileTime),
    };
    match typed {
        Some(t) if t.render() == *s => t,
        _ => v.clone(),
    }
}

struct Parser<'a> {
    s: &'a [u8],
    src: &'a str,
    i: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, m: &str) -> Error {
        Error::Xml(self.i, m.to_owned())
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn starts(&self, p: &str) -> bool {
        self.s[self.i.min(self.s.len())..].starts_with(p.as_bytes())
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }

    /// Skips to just past `end`.
    fn skip_past(&mut self, end: &str) -> Result<(), Error> {
        match self.src[self.i..].find(end) {
            Some(at) => {
                self.i += at + end.len();
                Ok(())
            }
            None => Err(self.err(&format!("missing {end:?}"))),
        }
    }

    /// Whitespace, comments, processing instructions and a doctype.
    fn skip_misc(&mut self) -> Result<(), Error> {
        loop {
            self.skip_ws();
            if self.starts("<!--") {
                self.skip_past("-->")?;
            } else if self.starts("<?") {
                self.skip_past("?>")?;
            } else if self.starts("<!DOCTYPE") {
                return Err(self.err("DTDs are not supported"));
            } else {
                return Ok(());
            }
        }
    }

    fn name(&mut self) -> Result<String, Error> {
        let start = self.i;
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() || matches!(c, b'=' | b'>' | b'/' | b'<' | b'"' | b'\'') {
                break;
            }
            self.i += 1;
        }
        if self.i == start {
            return Err(self.err("expected a name"));
        }
        Ok(self.src[start..self.i].to_owned())
    }

    fn element(&mut self, depth: usize) -> Result<Element, Error> {
        if depth > 64 {
            return Err(self.err("elements nested deeper than 64"));
        }
        self.i += 1; // '<'
        let mut e = Element::new(self.name()?);
        loop {
            self.skip_ws();
            match self.peek() {
                Some(b'/') => {
                    if !self.starts("/>") {
                        return Err(self.err("expected '/>'"));
                    }
                    self.i += 2;
                    return Ok(e);
                }
                Some(b'>') => {
                    self.i += 1;
                    break;
                }
                Some(_) => {
                    let name = self.name()?;
                    self.skip_ws();
                    if self.peek() != Some(b'=') {
                        return Err(self.err("expected '=' after an attribute name"));
                    }
                    self.i += 1;
                    self.skip_ws();
                    let q = match self.peek() {
                        Some(q @ (b'"' | b'\'')) => q,
                        _ => return Err(self.err("expected a quoted attribute value")),
                    };
                    self.i += 1;
                    let start = self.i;
                    while self.peek().is_some_and(|c| c != q) {
                        self.i += 1;
                    }
                    if self.peek().is_none() {
                        return Err(self.err("unterminated attribute value"));
                    }
                    let value = unescape(&self.src[start..self.i], start)?;
                    self.i += 1;
                    if e.attributes.iter().any(|a| a.name == name) {
                        return Err(self.err(&format!("attribute {name} given twice")));
                    }
                    e.attributes.push(Attribute {
                        name,
                        value: Value::String(value),
                    });
                }
                None => return Err(self.err("unterminated start tag")),
            }
        }
        // Content.
        let mut text = String::new();
        let flush = |text: &mut String, e: &mut Element| {
            if !text.is_empty() {
                e.children
                    .push(Node::Value(Value::String(std::mem::take(text))));
            }
        };
        loop {
            if self.i >= self.s.len() {
                return Err(self.err(&format!("unterminated <{}>", e.name)));
            }
            if self.starts("</") {
                self.i += 2;
                let name = self.name()?;
                if name != e.name {
                    return Err(self.err(&format!("</{name}> closes <{}>", e.name)));
                }
                self.skip_ws();
                if self.peek() != Some(b'>') {
                    return Err(self.err("expected '>'"));
                }
                self.i += 1;
                break;
            } else if self.starts("<!--") {
                self.skip_past("-->")?;
            } else if self.starts("<![CDATA[") {
                self.i += 9;
                let start = self.i;
                self.skip_past("]]>")?;
                text.push_str(&self.src[start..self.i - 3]);
            } else if self.starts("<?") {
                self.skip_past("?>")?;
            } else if self.peek() == Some(b'<') {
                flush(&mut text, &mut e);
                let child = self.element(depth + 1)?;
                e.children.push(Node::Element(child));
            } else {
                let start = self.i;
                while self.peek().is_some_and(|c| c != b'<') {
                    self.i += 1;
                }
                text.push_str(&unescape(&self.src[start..self.i], start)?);
            }
        }
        flush(&mut text, &mut e);
        // Indentation between child elements is not content.
        if e.children.iter().any(|c| matches!(c, Node::Element(_))) {
            e.children
                .retain(|c| !matches!(c, Node::Value(Value::String(s)) if s.trim().is_empty()));
        }
        Ok(e)
    }
}

/// Resolves entity and character references.
fn unescape(s: &str, at: usize) -> Result<String, Error> {
    if !s.contains('&') {
        return Ok(s.to_owned());
    }
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let semi = rest[amp..]
            .find(';')
            .ok_or_else(|| Error::Xml(at, "'&' without ';'".into()))?;
        let ent = &rest[amp + 1..amp + semi];
        let c = match ent {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => {
                let n = if let Some(h) = ent.strip_prefix("#x").or_else(|| ent.strip_prefix("#X")) {
                    u32::from_str_radix(h, 16).ok()
                } else if let Some(d) = ent.strip_prefix('#') {
                    d.parse().ok()
                } else {
                    None
                };
                n.and_then(char::from_u32)
                    .ok_or_else(|| Error::Xml(at, format!("unknown entity &{ent};")))?
            }
        };
        out.push(c);
        rest = &rest[amp + semi + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Escapes text for XML content or a double-quoted attribute.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

impl Event {
    /// The event as XML text (no indentation): what a reader renders, up to
    /// formatting.
    pub fn to_xml(&self) -> String {
        let mut out = String::new();
        write_xml(&self.root, &mut out);
        out
    }
}

fn write_xml(e: &Element, out: &mut String) {
    out.push('<');
    out.push_str(&e.name);
    for a in &e.attributes {
        if matches!(a.value, Value::Null) {
            continue;
        }
        out.push(' ');
        out.push_str(&a.name);
        out.push_str("=\"");
        out.push_str(&escape(&a.value.render()));
        out.push('"');
    }
    let content: Vec<&Node> = e
        .children
        .iter()
        .filter(|c| !matches!(c, Node::Value(v) if v.render().is_empty()))
        .collect();
    if content.is_empty() {
        out.push_str("/>");
        return;
    }
    out.push('>');
    for c in content {
        match c {
            Node::Element(c) => write_xml(c, out),
            Node::Value(v) => out.push_str(&escape(&v.render())),
        }
    }
    out.push_str("</");
    out.push_str(&e.name);
    out.push('>');
}

#[cfg(test)]
mod tests {
    use super::*;

    const SAMPLE: &str = r#"<?xml version="1.0"?>
<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="Microsoft-Windows-Security-Auditing" Guid="{54849625-5478-4994-a5ba-3e3b0328c30d}"/>
    <EventID>4688</EventID>
    <TimeCreated SystemTime="2024-03-12T09:16:06.080577Z"/>
    <EventRecordID>0184202</EventRecordID>
    <Channel>Security</Channel>
  </System>
  <EventData>
    <Data Name="CommandLine">cmd.exe /c "a &amp; b" &lt;x&gt; &#65;<![CDATA[<raw>]]></Data>
    <Data Name="Empty"></Data>
    <!-- a comment -->
  </EventData>
</Event>"#;

    #[test]
    fn parses_event_viewer_xml() {
        let e = Event::from_xml(SAMPLE).unwrap();
        let sys = e.system().unwrap();
        assert_eq!(
            sys.find("EventID").unwrap().value(),
            Some(&Value::U16(4688))
        );
        assert!(matches!(
            sys.find("Provider").unwrap().attribute("Guid"),
            Some(Value::Guid(_))
        ));
        // Leading zero: a number would read back without it.
        assert_eq!(
            sys.find("EventRecordID").unwrap().value(),
            Some(&Value::from("0184202"))
        );
        assert!(e.time_created().is_some());
        let data = e.root.find("EventData").unwrap();
        assert_eq!(
            data.find("Data").unwrap().value(),
            Some(&Value::from("cmd.exe /c \"a & b\" <x> A<raw>"))
        );
        assert_eq!(data.elements().nth(1).unwrap().children, vec![]);
    }

    #[test]
    fn bad_xml_is_an_error() {
        for bad in [
            "<Event>",
            "<Event></Evnt>",
            "<Event a=1/>",
            "<Event>&bogus;</Event>",
            "text",
            "<Event a='1' a='2'/>",
            "<!DOCTYPE x><Event/>",
            "<Event><![CDATA[x</Event>",
            "",
        ] {
            assert!(Event::from_xml(bad).is_err(), "{bad}");
        }
        let deep = "<a>".repeat(100) + &"</a>".repeat(100);
        assert!(Event::from_xml(&deep).is_err());
    }

    #[test]
    fn several_events() {
        let two =
            format!("<Events>{SAMPLE}{SAMPLE}</Events>").replace("<?xml version=\"1.0\"?>", "");
        assert_eq!(events_from_xml(&two).unwrap().len(), 2);
        assert_eq!(
            events_from_xml(&format!("{SAMPLE}\n{SAMPLE}"))
                .unwrap()
                .len(),
            2
        );
    }
}
