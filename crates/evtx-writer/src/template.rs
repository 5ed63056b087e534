//! Template shapes: which records share a BinXML template, and the id and GUID each
//! template gets.
//!
//! A shape is an element tree with its values taken out: element and attribute names,
//! the attribute values that belong to the structure ([`literal`]), and the value type
//! of each substitution, in document order. Records of the same shape share a template;
//! its id and GUID are a hash of the shape, so they are the same on every run.

use crate::event::{Element, Node};
use crate::value::Value;
use std::collections::HashMap;

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

/// The shape of a template: element and attribute names, literal values and the value
/// type of each substitution, in document order. Collects the substituted values.
pub(crate) fn shape_key<'a>(e: &'a Element, key: &mut Vec<u8>, subs: &mut Vec<&'a Value>) {
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
                subs.push(&a.value);
            }
        }
    }
    key.push(b'>');
    for c in &e.children {
        match c {
            Node::Element(c) => shape_key(c, key, subs),
            Node::Value(v) => {
                key.push(b'%');
                key.push(v.type_code());
                subs.push(v);
            }
        }
    }
    key.push(b'/');
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
        shape_key(e, &mut key, &mut subs);
        (key, subs.into_iter().cloned().collect())
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
    fn fnv64_is_fnv_1a() {
        assert_eq!(fnv64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv64(b"a"), 0xaf63_dc4c_8601_ec8c);
    }
}
