//! Template shapes: which records share a BinXML template, and the id and GUID each
//! template gets.
//!
//! A shape is an element tree with its values taken out: element and attribute names,
//! the attribute values that belong to the structure ([`literal`]), and the value type
//! of each substitution, in document order. Records of the same shape share a template;
//! its id and GUID are a hash of the shape, so they are the same on every run.
//!
//! A template may hold, in a BinXML substitution ([`Nested`]), an instance of another
//! template: the root's event data written as a template of its own, as in logs Windows
//! exports.

use crate::event::{Element, Node};
use crate::value::Value;
use std::collections::HashMap;

/// The value type of BinXML (a nested instance).
pub(crate) const BINXML: u8 = 0x21;

/// A template: which one (in order of first use), its id and its GUID.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TemplateMeta {
    /// Its number among the shapes seen so far, from 0.
    pub index: usize,
    /// The template id written in each instance.
    pub id: u32,
    /// The template GUID written in its definition.
    pub guid: [u8; 16],
}

/// The shapes seen so far, each with its template.
#[derive(Default)]
pub(crate) struct Shapes {
    seen: HashMap<Vec<u8>, TemplateMeta>,
}

impl Shapes {
    /// The template of shape `key` (from [`shape_key`]), new if the shape is.
    pub fn template(&mut self, key: &[u8]) -> TemplateMeta {
        if let Some(m) = self.seen.get(key) {
            return *m;
        }
        let h = fnv64(key);
        let h2 = fnv64(&h.to_le_bytes());
        let mut guid = [0u8; 16];
        guid[..8].copy_from_slice(&h.to_le_bytes());
        guid[8..].copy_from_slice(&h2.to_le_bytes());
        let meta = TemplateMeta {
            index: self.seen.len(),
            id: h as u32,
            guid,
        };
        self.seen.insert(key.to_vec(), meta);
        meta
    }
}

/// A substitution value of a template instance.
pub(crate) enum Sub<'a> {
    /// A value.
    Value(&'a Value),
    /// An instance of another template, held by a BinXML value; `None` for a null value
    /// (the event has nothing to nest) or while the instance is not made yet.
    Instance(Option<Box<Instance<'a>>>),
}

/// A template instance to write: its root element, its template and its values.
pub(crate) struct Instance<'a> {
    pub root: &'a Element,
    pub template: TemplateMeta,
    pub subs: Vec<Sub<'a>>,
    /// Where the template holds an instance of another.
    pub nested: Nested<'a>,
}

/// Where a template holds, in a BinXML substitution, an instance of another template.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Nested<'a> {
    /// Nowhere.
    No,
    /// In place of this child of the root element, which the nested instance is of.
    Replacing(&'a Element),
    /// After the root element's last child (the event has no element to nest there:
    /// its instances hold a null value).
    Last,
}

impl Nested<'_> {
    /// Whether `c`, a child of the root, is the element an instance stands for.
    pub(crate) fn replaces(self, c: &Element) -> bool {
        matches!(self, Nested::Replacing(e) if std::ptr::eq(e, c))
    }
}

/// The shape of a template: element and attribute names, literal values and the value
/// type of each substitution, in document order, with a BinXML substitution where
/// `nested` says. Collects the substituted values (`Sub::Instance(None)` for the BinXML
/// one).
pub(crate) fn shape_key<'a>(
    e: &'a Element,
    key: &mut Vec<u8>,
    subs: &mut Vec<Sub<'a>>,
    nested: Nested<'a>,
) {
    key.push(b'<');
    key.extend_from_slice(e.name.as_bytes());
    for a in &e.attributes {
        key.push(b'@');
        key.extend_from_slice(a.name.as_bytes());
        match literal(e, &a.name, &a.value) {
            Some(s) => {
                key.push(b'=');
                key.extend_from_slice(s.as_bytes());
                key.push(0);
            }
            None => {
                key.push(b'%');
                key.push(a.value.type_code());
                subs.push(Sub::Value(&a.value));
            }
        }
    }
    key.push(b'>');
    for c in &e.children {
        match c {
            Node::Element(c) if nested.replaces(c) => nested_sub(key, subs),
            Node::Element(c) => shape_key(c, key, subs, Nested::No),
            Node::Value(v) => {
                key.push(b'%');
                key.push(v.type_code());
                subs.push(Sub::Value(v));
            }
        }
    }
    if let Nested::Last = nested {
        nested_sub(key, subs);
    }
    key.push(b'/');
}

/// The BinXML substitution that holds a nested instance.
fn nested_sub(key: &mut Vec<u8>, subs: &mut Vec<Sub<'_>>) {
    key.push(b'%');
    key.push(BINXML);
    subs.push(Sub::Instance(None));
}

/// Attribute values that belong to a template's structure rather than its data, as in
/// Windows' templates: `Data/@Name` and `Event/@xmlns`.
pub(crate) fn literal<'a>(e: &Element, attr: &str, v: &'a Value) -> Option<&'a str> {
    match (e.name.as_str(), attr, v) {
        ("Data", "Name", Value::String(s)) | (_, "xmlns", Value::String(s)) => Some(s),
        _ => None,
    }
}

/// FNV-1a, 64 bits: template ids and GUIDs from shapes, the same on every run.
fn fnv64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(name: &str, v: impl Into<Value>) -> Element {
        Element::new("Data").attr("Name", name).text(v)
    }

    fn key_of(e: &Element) -> (Vec<u8>, Vec<Value>) {
        let (mut key, mut subs) = (Vec::new(), Vec::new());
        shape_key(e, &mut key, &mut subs, Nested::No);
        let values = subs.into_iter().map(|s| match s {
            Sub::Value(v) => v.clone(),
            Sub::Instance(_) => panic!("no instance nested"),
        });
        (key, values.collect())
    }

    #[test]
    fn values_are_substitutions_and_data_names_are_structure() {
        let e = Element::new("EventData")
            .attr("Kind", "x")
            .child(data("User", "jsmith"))
            .child(data("Pid", Value::U32(4)));
        let (key, subs) = key_of(&e);
        assert_eq!(
            subs,
            vec![
                Value::String("x".into()),
                Value::String("jsmith".into()),
                Value::U32(4)
            ]
        );
        let text = String::from_utf8_lossy(&key);
        assert!(text.contains("@Name=User\0"), "{text:?}");
        assert!(!text.contains("jsmith"), "{text:?}");
    }

    #[test]
    fn same_shape_other_values_same_template() {
        let mut shapes = Shapes::default();
        let (a, _) = key_of(&data("User", "jsmith"));
        let (b, _) = key_of(&data("User", "mgarcia"));
        let (c, _) = key_of(&data("User", Value::U32(7)));
        let (d, _) = key_of(&data("Image", "jsmith"));
        assert_eq!(a, b);
        let ta = shapes.template(&a);
        assert_eq!(shapes.template(&b), ta);
        let tc = shapes.template(&c);
        let td = shapes.template(&d);
        assert_eq!((ta.index, tc.index, td.index), (0, 1, 2));
        assert_ne!(ta.id, tc.id);
        assert_ne!(ta.guid, td.guid);
        // The id is a hash of the shape alone: a new table gives the same one.
        assert_eq!(Shapes::default().template(&c).id, tc.id);
    }

    #[test]
    fn a_nested_element_is_one_binxml_substitution_wherever_it_is() {
        let data = data("User", "jsmith");
        let root = Element::new("Event")
            .child(Element::new("System").child(Element::new("EventID").text(Value::U16(4))))
            .child(Element::new("EventData").child(data));
        let (mut key, mut subs) = (Vec::new(), Vec::new());
        let event_data = root.find("EventData").expect("EventData");
        shape_key(&root, &mut key, &mut subs, Nested::Replacing(event_data));
        assert!(matches!(
            subs[..],
            [Sub::Value(Value::U16(4)), Sub::Instance(None)]
        ));
        let text = String::from_utf8_lossy(&key);
        assert!(!text.contains("EventData"), "{text:?}");
        // Without the element, the substitution goes last: the same template.
        let bare = Element::new("Event")
            .child(Element::new("System").child(Element::new("EventID").text(Value::U16(5))));
        let (mut other, mut subs) = (Vec::new(), Vec::new());
        shape_key(&bare, &mut other, &mut subs, Nested::Last);
        assert_eq!(key, other);
        assert_eq!(subs.len(), 2);
    }

    #[test]
    fn fnv64_is_fnv_1a() {
        assert_eq!(fnv64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
