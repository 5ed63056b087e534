//! Events from and to JSON in the `evtx` crate's shape with separated attributes
//! (`ParserSettings::separate_json_attributes(true)`):
//!
//! ```text
//! {"Event":{"System":{"Provider_attributes":{"Name":"..."},"EventID":4688,
//!   "TimeCreated_attributes":{"SystemTime":"..."},...},"EventData":{"Image":"...",...}}}
//! ```
//!
//! Reading: an element `X` is the member `"X"` (its content: an object of children, or
//! a value) and/or `"X_attributes"` (an object of attributes); `"#text"` and
//! `"#attributes"` (the non-separated shape) are understood too. Under `EventData`
//! each member `"N": v` is a `<Data Name="N">v</Data>`, and `"Data": {"#text": [..]}`
//! unnamed `<Data>` elements. A member repeated by the reader as `"X_1"`, `"X_2"` is
//! another `X`. Strings stay strings, except the `System` values Windows stores typed
//! whose type renders the same JSON (`SystemTime` always becomes a FILETIME); whole
//! numbers become UInt32/UInt64 (Int32/Int64 when negative; `System` fields their
//! Windows width), other numbers Real64, booleans Boolean, arrays of those an array
//! value.
//!
//! [`Event::to_json`] gives the JSON the `evtx` crate renders for an event written by
//! this crate, which round-trip tests compare with what it reads back.

use crate::error::Error;
use crate::event::{Attribute, Element, Event, Node};
use crate::value::Value;
use crate::xml::{system_type, typed_if_same, SysType};
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value as J};

/// A JSON value whose objects keep their members' order (serde_json's `Value` sorts
/// them unless its `preserve_order` feature is on).
#[derive(Debug, Clone, PartialEq)]
pub enum OrderedJson {
    /// `null`.
    Null,
    /// `true` / `false`.
    Bool(bool),
    /// A number.
    Number(serde_json::Number),
    /// A string.
    String(String),
    /// An array.
    Array(Vec<OrderedJson>),
    /// An object, members in document order.
    Object(Vec<(String, OrderedJson)>),
}

impl<'de> Deserialize<'de> for OrderedJson {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedJson;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_unit<E>(self) -> Result<OrderedJson, E> {
                Ok(OrderedJson::Null)
            }
            fn visit_none<E>(self) -> Result<OrderedJson, E> {
                Ok(OrderedJson::Null)
            }
            fn visit_bool<E>(self, v: bool) -> Result<OrderedJson, E> {
                Ok(OrderedJson::Bool(v))
            }
            fn visit_i64<E>(self, v: i64) -> Result<OrderedJson, E> {
                Ok(OrderedJson::Number(v.into()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<OrderedJson, E> {
                Ok(OrderedJson::Number(v.into()))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<OrderedJson, E> {
                serde_json::Number::from_f64(v)
                    .map(OrderedJson::Number)
                    .ok_or_else(|| E::custom("not a finite number"))
            }
            fn visit_str<E>(self, v: &str) -> Result<OrderedJson, E> {
                Ok(OrderedJson::String(v.to_owned()))
            }
            fn visit_string<E>(self, v: String) -> Result<OrderedJson, E> {
                Ok(OrderedJson::String(v))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut a: A) -> Result<OrderedJson, A::Error> {
                let mut out = Vec::new();
                while let Some(v) = a.next_element()? {
                    out.push(v);
                }
                Ok(OrderedJson::Array(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut a: A) -> Result<OrderedJson, A::Error> {
                let mut out: Vec<(String, OrderedJson)> = Vec::new();
                while let Some((k, v)) = a.next_entry::<String, OrderedJson>()? {
                    out.push((k, v));
                }
                Ok(OrderedJson::Object(out))
            }
        }
        d.deserialize_any(V)
    }
}

impl From<&J> for OrderedJson {
    fn from(v: &J) -> Self {
        match v {
            J::Null => OrderedJson::Null,
            J::Bool(b) => OrderedJson::Bool(*b),
            J::Number(n) => OrderedJson::Number(n.clone()),
            J::String(s) => OrderedJson::String(s.clone()),
            J::Array(a) => OrderedJson::Array(a.iter().map(Into::into).collect()),
            J::Object(o) => {
                OrderedJson::Object(o.iter().map(|(k, v)| (k.clone(), v.into())).collect())
            }
        }
    }
}

impl Event {
    /// An event from JSON text in the `evtx` crate's shape, keeping the order of its
    /// members (and so of the event's fields).
    pub fn from_json_str(s: &str) -> Result<Event, Error> {
        let mut de = serde_json::Deserializer::from_str(s);
        let v = OrderedJson::deserialize(&mut de).map_err(|e| Error::Json(e.to_string()))?;
        de.end().map_err(|e| Error::Json(e.to_string()))?;
        Event::from_ordered_json(&v)
    }

    /// An event from a parsed JSON value in the `evtx` crate's shape. Without
    /// serde_json's `preserve_order`, members (and so fields) come in sorted order;
    /// [`Event::from_json_str`] keeps the document's.
    pub fn from_json(v: &J) -> Result<Event, Error> {
        Event::from_ordered_json(&OrderedJson::from(v))
    }

    /// An event from an order-keeping JSON value.
    pub fn from_ordered_json(v: &OrderedJson) -> Result<Event, Error> {
        let OrderedJson::Object(members) = v else {
            return Err(Error::Json("an event is a JSON object".into()));
        };
        let mut roots = children_from_members(members, "", 0)?;
        match roots.len() {
            1 => match roots.remove(0) {
                Node::Element(root) => Ok(Event { root }),
                Node::Value(_) => Err(Error::Json("the event's root has no name".into())),
            },
            n => Err(Error::Json(format!(
                "an event has one root member, not {n}"
            ))),
        }
    }

    /// The JSON the `evtx` crate renders for this event once written (separated
    /// attributes).
    pub fn to_json(&self) -> J {
        let mut obj = Map::new();
        member(&self.root, &mut obj);
        J::Object(obj)
    }
}

/// `name` with a reader's `_N` suffix for a repeated member taken off, if the base
/// name came before.
fn base_name<'a>(key: &'a str, seen: &[String]) -> &'a str {
    if let Some((base, n)) = key.rsplit_once('_') {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && seen.iter().any(|s| s == base)
        {
            return base;
        }
    }
    key
}

/// The elements (and text) an object's members describe, under parent `parent`.
fn children_from_members(
    members: &[(String, OrderedJson)],
    parent: &str,
    depth: usize,
) -> Result<Vec<Node>, Error> {
    if depth > 64 {
        return Err(Error::Json("nested deeper than 64".into()));
    }
    let mut out: Vec<Node> = Vec::new();
    // Names of elements made so far, and where each is in `out`.
    let mut seen: Vec<String> = Vec::new();
    let mut index: Vec<(String, usize)> = Vec::new();
    for (key, v) in members {
        if key == "#text" {
            for t in text_values(v)? {
                out.push(Node::Value(t));
            }
            continue;
        }
        if let Some(name) = key.strip_suffix("_attributes") {
            let OrderedJson::Object(attrs) = v else {
                return Err(Error::Json(format!("{key} is not an object")));
            };
            let name = base_name(name, &seen).to_owned();
            let attributes = attrs_from(attrs, &name)?;
            // The element it belongs to: the one made from `"name"` just before, or a
            // new one (attributes come before the content in the reader's output).
            let target = index
                .iter()
                .rev()
                .find(|(n, _)| *n == *key)
                .map(|(_, i)| *i);
            match target {
                Some(i) => {
                    if let Node::Element(e) = &mut out[i] {
                        e.attributes = attributes;
                    }
                }
                None => {
                    let mut e = Element::new(name.clone());
                    e.attributes = attributes;
                    index.push((key.clone(), out.len()));
                    index.push((
                        key.strip_suffix("_attributes").unwrap_or(key).to_owned(),
                        out.len(),
                    ));
                    seen.push(name);
                    out.push(Node::Element(e));
                }
            }
            continue;
        }
        if parent == "EventData" && !(key == "Data" && matches!(v, OrderedJson::Object(_))) {
            let name = base_name(key, &seen).to_owned();
            let mut e = Element::new("Data");
            e.attributes.push(Attribute {
                name: "Name".into(),
                value: Value::String(name.clone()),
            });
            if let Some(value) = leaf_value(v, None)? {
                e.children.push(Node::Value(value));
            }
            seen.push(name);
            out.push(Node::Element(e));
            continue;
        }
        if parent == "EventData" && key == "Data" {
            // Unnamed <Data> elements: {"#text": "a"} or {"#text": ["a", "b"]}.
            let OrderedJson::Object(m) = v else {
                unreachable!()
            };
            for (k, t) in m {
                if k != "#text" {
                    return Err(Error::Json(format!("EventData.Data.{k} is not understood")));
                }
                let items = match t {
                    OrderedJson::Array(items) => items.clone(),
                    one => vec![one.clone()],
                };
                for item in &items {
                    let mut e = Element::new("Data");
                    if let Some(value) = leaf_value(item, None)? {
                        e.children.push(Node::Value(value));
                    }
                    out.push(Node::Element(e));
                }
            }
            seen.push("Data".into());
            continue;
        }
        // An element whose attributes came first reuses that element.
        let name = base_name(key, &seen).to_owned();
        let pending = index
            .iter()
            .rev()
            .find(|(n, i)| {
                *n == *key && matches!(&out[*i], Node::Element(e) if e.children.is_empty())
            })
            .map(|(_, i)| *i);
        let mut e = match pending {
            Some(i) => match std::mem::replace(&mut out[i], Node::Value(Value::Null)) {
                Node::Element(e) => e,
                Node::Value(_) => unreachable!(),
            },
            None => Element::new(name.clone()),
        };
        match v {
            OrderedJson::Object(m) => {
                let mut children = children_from_members(m, &name, depth + 1)?;
                if let Some(i) = m.iter().position(|(k, _)| k == "#attributes") {
                    let OrderedJson::Object(attrs) = &m[i].1 else {
                        return Err(Error::Json("#attributes is not an object".into()));
                    };
                    e.attributes = attrs_from(attrs, &name)?;
                    children.retain(|c| !matches!(c, Node::Element(x) if x.name == "#attributes"));
                }
                e.children = children;
            }
            other => {
                let ty = if parent == "System" {
                    system_type(&name, None)
                } else {
                    None
                };
                if let Some(value) = leaf_value(other, ty)? {
                    e.children.push(Node::Value(value));
                }
            }
        }
        match pending {
            Some(i) => out[i] = Node::Element(e),
            None => {
                index.push((key.clone(), out.len()));
                index.push((format!("{key}_attributes"), out.len()));
                seen.push(name);
                out.push(Node::Element(e));
            }
        }
    }
    Ok(out)
}

fn attrs_from(attrs: &[(String, OrderedJson)], element: &str) -> Result<Vec<Attribute>, Error> {
    let mut out = Vec::new();
    for (name, v) in attrs {
        let ty = system_type(element, Some(name));
        let value = leaf_value(v, ty)?.unwrap_or(Value::Null);
        if matches!(value, Value::Array(_)) {
            return Err(Error::Json(format!("attribute {name} holds an array")));
        }
        out.push(Attribute {
            name: name.clone(),
            value,
        });
    }
    Ok(out)
}

fn text_values(v: &OrderedJson) -> Result<Vec<Value>, Error> {
    Ok(match v {
        OrderedJson::Array(items) => {
            let mut out = Vec::new();
            for i in items {
                out.extend(leaf_value(i, None)?);
            }
            out
        }
        one => leaf_value(one, None)?.into_iter().collect(),
    })
}

/// The value a JSON leaf stands for (`None` for null), typed for a `System` field
/// of type `ty`.
fn leaf_value(v: &OrderedJson, ty: Option<SysType>) -> Result<Option<Value>, Error> {
    Ok(Some(match v {
        OrderedJson::Null => return Ok(None),
        OrderedJson::Bool(b) => Value::Bool(*b),
        OrderedJson::String(s) => {
            let s = Value::String(s.clone());
            match ty {
                Some(t @ (SysType::Hex64 | SysType::Guid | SysType::Sid | SysType::FileTime)) => {
                    typed_if_same(&s, t)
                }
                _ => s,
            }
        }
        OrderedJson::Number(n) => number(n, ty),
        OrderedJson::Array(items) => {
            let mut out = Vec::new();
            for i in items {
                match leaf_value(i, None)? {
                    Some(Value::Array(_)) => return Err(Error::Json("nested arrays".into())),
                    Some(v) => out.push(v),
                    None => return Err(Error::Json("null in an array".into())),
                }
            }
            // One type for all: numbers widen to the widest among them.
            if out
                .iter()
                .all(|v| matches!(v, Value::U32(_) | Value::U64(_)))
            {
                if out.iter().any(|v| matches!(v, Value::U64(_))) {
                    out = out
                        .into_iter()
                        .map(|v| match v {
                            Value::U32(x) => Value::U64(x.into()),
                            v => v,
                        })
                        .collect();
                }
            } else if out.iter().all(|v| {
                matches!(
                    v,
                    Value::U32(_) | Value::I32(_) | Value::U64(_) | Value::I64(_)
                )
            }) {
                let mut wide = Vec::new();
                for v in out {
                    wide.push(Value::I64(match v {
                        Value::U32(x) => x.into(),
                        Value::I32(x) => x.into(),
                        Value::I64(x) => x,
                        Value::U64(x) => i64::try_from(x)
                            .map_err(|_| Error::Json("array numbers out of range".into()))?,
                        _ => unreachable!(),
                    }));
                }
                out = wide;
            }
            let v = Value::Array(out);
            v.validate().map_err(|e| Error::Json(e.to_string()))?;
            v
        }
        OrderedJson::Object(_) => {
            return Err(Error::Json("an object where a value was expected".into()))
        }
    }))
}

fn number(n: &serde_json::Number, ty: Option<SysType>) -> Value {
    if let Some(u) = n.as_u64() {
        let typed = match ty {
            Some(SysType::U8) => u8::try_from(u).ok().map(Value::U8),
            Some(SysType::U16) => u16::try_from(u).ok().map(Value::U16),
            Some(SysType::U32) => u32::try_from(u).ok().map(Value::U32),
            Some(SysType::U64) => Some(Value::U64(u)),
            _ => None,
        };
        return typed.unwrap_or_else(|| u32::try_from(u).map_or(Value::U64(u), Value::U32));
    }
    if let Some(i) = n.as_i64() {
        return i32::try_from(i).map_or(Value::I64(i), Value::I32);
    }
    Value::F64(n.as_f64().unwrap_or(0.0))
}

/// Adds `e` to `obj` as the reader renders it: `"name_attributes"` for its attributes,
/// `"name"` for its content (a repeated name gets `_1`, `_2`, ...).
fn member(e: &Element, obj: &mut Map<String, J>) {
    let attrs: Map<String, J> = e
        .attributes
        .iter()
        .filter(|a| !matches!(a.value, Value::Null))
        .map(|a| (a.name.clone(), a.value.to_json()))
        .collect();
    let has_elements = e.elements().next().is_some();
    let values: Vec<&Value> = e
        .children
        .iter()
        .filter_map(|c| match c {
            Node::Value(v) if !matches!(v, Value::Null) => Some(v),
            _ => None,
        })
        .collect();
    // Empty text reads back as no content.
    let values: Vec<&Value> = if values.iter().all(|v| v.render().is_empty()) {
        Vec::new()
    } else {
        values
    };
    let content = if has_elements {
        let mut inner = Map::new();
        if e.name == "EventData" {
            event_data(e, &mut inner);
        } else {
            for c in e.elements() {
                member(c, &mut inner);
            }
        }
        Some(J::Object(inner))
    } else {
        match values.as_slice() {
            [] if !attrs.is_empty() => None,
            [] => Some(J::Null),
            [v] => Some(v.to_json()),
            many => Some(J::String(many.iter().map(|v| v.render()).collect())),
        }
    };
    let key = unique(obj, &e.name);
    if !attrs.is_empty() {
        obj.insert(format!("{key}_attributes"), J::Object(attrs));
    }
    if let Some(c) = content {
        obj.insert(key, c);
    }
}

/// `name`, or `name_1`, `name_2`, ... when taken.
fn unique(obj: &Map<String, J>, name: &str) -> String {
    if !obj.contains_key(name) && !obj.contains_key(&format!("{name}_attributes")) {
        return name.to_owned();
    }
    (1..)
        .map(|i| format!("{name}_{i}"))
        .find(|k| !obj.contains_key(k))
        .unwrap_or_default()
}

/// `<EventData>`: each `<Data Name="N">` as `"N"`; unnamed `<Data>`s as
/// `"Data": {"#text": ..}` when no `<Data>` is named (the reader leaves them out
/// otherwise); other elements as usual.
fn event_data(e: &Element, obj: &mut Map<String, J>) {
    let named =
        |d: &Element| d.name == "Data" && matches!(d.attribute("Name"), Some(Value::String(_)));
    let any_named = e.elements().any(named);
    let mut unnamed = Vec::new();
    for c in e.elements() {
        if named(c) {
            let Some(Value::String(name)) = c.attribute("Name") else {
                continue;
            };
            let values: Vec<&Value> = c
                .children
                .iter()
                .filter_map(|n| match n {
                    Node::Value(v) if !matches!(v, Value::Null) => Some(v),
                    _ => None,
                })
                .collect();
            let v = match values.as_slice() {
                [] => J::String(String::new()),
                [v] => v.to_json(),
                many => J::String(many.iter().map(|v| v.render()).collect()),
            };
            let key = unique(obj, name);
            obj.insert(key, v);
        } else if c.name == "Data" {
            if !any_named {
                let text: String = c
                    .children
                    .iter()
                    .filter_map(|n| match n {
                        Node::Value(v) => Some(v.render()),
                        Node::Element(_) => None,
                    })
                    .collect();
                unnamed.push(J::String(text));
            }
        } else {
            member(c, obj);
        }
    }
    if !unnamed.is_empty() {
        let text = if unnamed.len() == 1 {
            unnamed.remove(0)
        } else {
            J::Array(unnamed)
        };
        let mut m = Map::new();
        m.insert("#text".into(), text);
        obj.insert(unique(obj, "Data"), J::Object(m));
    }
}
