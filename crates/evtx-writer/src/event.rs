//! The event model: an element tree whose leaves are typed [`Value`]s.

use crate::value::Value;

/// One event: its root element, `<Event>` for any event a Windows log holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Event {
    /// The root element.
    pub root: Element,
}

/// An element: a name, attributes and children in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    /// The element's name (`Data`, `EventID`, ...).
    pub name: String,
    /// Attributes, in order.
    pub attributes: Vec<Attribute>,
    /// Child elements and values, in order.
    pub children: Vec<Node>,
}

/// One attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct Attribute {
    /// Its name.
    pub name: String,
    /// Its value.
    pub value: Value,
}

/// A child of an element.
#[derive(Debug, Clone, PartialEq)]
pub enum Node {
    /// A child element.
    Element(Element),
    /// Text (or a typed value) inside the element.
    Value(Value),
}

/// The namespace Windows gives `<Event>`.
pub const EVENT_NS: &str = "http://schemas.microsoft.com/win/2004/08/events/event";

impl Element {
    /// An element without attributes or children.
    pub fn new(name: impl Into<String>) -> Self {
        Element {
            name: name.into(),
            attributes: Vec::new(),
            children: Vec::new(),
        }
    }

    /// Adds an attribute (builder style).
    pub fn attr(mut self, name: impl Into<String>, value: impl Into<Value>) -> Self {
        self.attributes.push(Attribute {
            name: name.into(),
            value: value.into(),
        });
        self
    }

    /// Adds a child element (builder style).
    pub fn child(mut self, child: Element) -> Self {
        self.children.push(Node::Element(child));
        self
    }

    /// Adds a value as content (builder style).
    pub fn text(mut self, value: impl Into<Value>) -> Self {
        self.children.push(Node::Value(value.into()));
        self
    }

    /// The first child element named `name`.
    pub fn find(&self, name: &str) -> Option<&Element> {
        self.elements().find(|e| e.name == name)
    }

    /// The child elements.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|c| match c {
            Node::Element(e) => Some(e),
            Node::Value(_) => None,
        })
    }

    /// The value of attribute `name`.
    pub fn attribute(&self, name: &str) -> Option<&Value> {
        self.attributes
            .iter()
            .find(|a| a.name == name)
            .map(|a| &a.value)
    }

    /// The element's only value child, if that is all it holds.
    pub fn value(&self) -> Option<&Value> {
        match self.children.as_slice() {
            [Node::Value(v)] => Some(v),
            _ => None,
        }
    }
}

impl Event {
    /// The `<System>` element.
    pub fn system(&self) -> Option<&Element> {
        self.root.find("System")
    }

    /// `System/TimeCreated/@SystemTime` when it is a FILETIME.
    pub fn time_created(&self) -> Option<u64> {
        match self
            .system()?
            .find("TimeCreated")?
            .attribute("SystemTime")?
        {
            Value::FileTime(ft) => Some(*ft),
            _ => None,
        }
    }

    /// `System/TimeCreated/@SystemTime` as written, when it is there but not a time a
    /// reader can show (a text that does not parse as a time, or a FILETIME outside
    /// the years 1601 to 9999).
    pub fn invalid_time(&self) -> Option<String> {
        let v = self
            .system()?
            .find("TimeCreated")?
            .attribute("SystemTime")?;
        match v {
            Value::FileTime(ft) if crate::value::filetime_to_timestamp(*ft).is_some() => None,
            Value::FileTime(ft) => Some(format!("FILETIME {ft}")),
            v => Some(v.render()),
        }
    }

    /// `System/EventRecordID`, when it holds a number.
    pub fn event_record_id(&self) -> Option<u64> {
        match self.system()?.find("EventRecordID")?.value()? {
            Value::U64(v) => Some(*v),
            Value::String(s) => s.parse().ok(),
            v => v.render().parse().ok(),
        }
    }

    /// Sets `System/EventRecordID` (as a UInt64, as Windows stores it), adding the
    /// element after `Correlation`-less `Keywords`/`TimeCreated` order when missing.
    pub fn set_event_record_id(&mut self, id: u64) {
        let Some(system) = self.root.children.iter_mut().find_map(|c| match c {
            Node::Element(e) if e.name == "System" => Some(e),
            _ => None,
        }) else {
            return;
        };
        for c in &mut system.children {
            if let Node::Element(e) = c {
                if e.name == "EventRecordID" {
                    e.children = vec![Node::Value(Value::U64(id))];
                    return;
                }
            }
        }
        // Windows puts it after TimeCreated.
        let at = system
            .children
            .iter()
            .position(|c| matches!(c, Node::Element(e) if e.name == "TimeCreated"))
            .map_or(system.children.len(), |i| i + 1);
        system.children.insert(
            at,
            Node::Element(Element::new("EventRecordID").text(Value::U64(id))),
        );
    }

    /// `System/Channel` text.
    pub fn channel(&self) -> Option<String> {
        Some(self.system()?.find("Channel")?.value()?.render())
    }

    /// `System/EventID` text.
    pub fn event_id(&self) -> Option<String> {
        Some(self.system()?.find("EventID")?.value()?.render())
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(s)
    }
}

macro_rules! from_int {
    ($($t:ty => $v:ident),*) => {$(
        impl From<$t> for Value {
            fn from(v: $t) -> Self {
                Value::$v(v)
            }
        }
    )*};
}
from_int!(u8 => U8, u16 => U16, u32 => U32, u64 => U64, i8 => I8, i16 => I16, i32 => I32, i64 => I64, bool => Bool);
