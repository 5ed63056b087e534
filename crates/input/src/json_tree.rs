//! One JSON event as a tree borrowed from its text: strings and keys without escapes are
//! slices of the line they were read from, so reading an event allocates one vector
//! per object and array instead of a `String` per key and value and a map per object
//! (`serde_json::Value`). An object's members keep the order of the text, a repeated
//! key at its first place with its last value, as `serde_json::Map` keeps them (with
//! its `preserve_order` feature, which the `evtx` crate turns on): every shape reads its
//! fields in the order it did when events were `Value`s, so its leaves and outputs are
//! the same.

use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use std::borrow::Cow;
use std::fmt;

/// A JSON value whose strings borrow from the text it was parsed from where they can.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Json<'a> {
    Null,
    Bool(bool),
    U64(u64),
    I64(i64),
    F64(f64),
    Str(Cow<'a, str>),
    Array(Vec<Json<'a>>),
    Object(Object<'a>),
}

/// An object's members in the order of the text, each key once.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Object<'a> {
    members: Vec<(Cow<'a, str>, Json<'a>)>,
}

/// An object being read: its members, and a bit for each key's [`key_bit`]. A key whose
/// bit is not set is not in the object yet, so most keys are added without comparing
/// them to the others.
#[derive(Default)]
pub(crate) struct ObjectBuilder<'a> {
    members: Vec<(Cow<'a, str>, Json<'a>)>,
    bits: [u64; 4],
}

/// Which of 256 bits stands for `key`: from its length and its first and last bytes.
fn key_bit(key: &str) -> usize {
    let b = key.as_bytes();
    let first = b.first().map_or(0, |&c| c as usize);
    let last = b.last().map_or(0, |&c| c as usize);
    (b.len().wrapping_mul(31) ^ first.wrapping_mul(7) ^ last.wrapping_mul(131)) & 255
}

impl<'a> ObjectBuilder<'a> {
    /// An object expected to hold about `n` members.
    pub(crate) fn with_capacity(n: usize) -> Self {
        ObjectBuilder {
            members: Vec::with_capacity(n),
            bits: [0; 4],
        }
    }

    /// Adds member `key`, or, when the object has it, replaces its value in place.
    pub(crate) fn insert(&mut self, key: Cow<'a, str>, value: Json<'a>) {
        let bit = key_bit(&key);
        let (word, mask) = (bit / 64, 1u64 << (bit % 64));
        if self.bits[word] & mask != 0 {
            if let Some(member) = self.members.iter_mut().find(|(k, _)| *k == key) {
                member.1 = value;
                return;
            }
        }
        self.bits[word] |= mask;
        self.members.push((key, value));
    }

    pub(crate) fn build(self) -> Object<'a> {
        Object {
            members: self.members,
        }
    }
}

impl<'a> Object<'a> {
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.members.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    pub(crate) fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    /// The members in order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (&str, &Json<'a>)> {
        self.members.iter().map(|(k, v)| (&**k, v))
    }

    pub(crate) fn keys(&self) -> impl Iterator<Item = &str> {
        self.members.iter().map(|(k, _)| &**k)
    }

    pub(crate) fn len(&self) -> usize {
        self.members.len()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }
}

impl<'a> Json<'a> {
    pub(crate) fn as_object(&self) -> Option<&Object<'a>> {
        match self {
            Json::Object(o) => Some(o),
            _ => None,
        }
    }

    pub(crate) fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Json::Array(a) => Some(a),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Json::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The member `key` of an object; None for anything else.
    pub(crate) fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.as_object()?.get(key)
    }

    pub(crate) fn is_null(&self) -> bool {
        matches!(self, Json::Null)
    }

    pub(crate) fn is_object(&self) -> bool {
        matches!(self, Json::Object(_))
    }

    pub(crate) fn is_number(&self) -> bool {
        matches!(self, Json::U64(_) | Json::I64(_) | Json::F64(_))
    }

    /// A number as `f64`, as `serde_json::Number::as_f64` gives it.
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match *self {
            Json::U64(n) => Some(n as f64),
            Json::I64(n) => Some(n as f64),
            Json::F64(n) => Some(n),
            _ => None,
        }
    }

    /// A number or boolean as `serde_json` writes it (`1.0` for a float that is whole).
    pub(crate) fn scalar_text(&self) -> Option<String> {
        match *self {
            Json::Bool(b) => Some(b.to_string()),
            Json::U64(n) => Some(n.to_string()),
            Json::I64(n) => Some(n.to_string()),
            Json::F64(n) => serde_json::Number::from_f64(n).map(|n| n.to_string()),
            _ => None,
        }
    }

    /// What the value is, for messages: `null`, `boolean`, `number`, `string`, ….
    pub(crate) fn kind(&self) -> &'static str {
        match self {
            Json::Null => "null",
            Json::Bool(_) => "boolean",
            Json::U64(_) | Json::I64(_) | Json::F64(_) => "number",
            Json::Str(_) => "string",
            Json::Array(_) => "array",
            Json::Object(_) => "object",
        }
    }
}

/// A key: borrowed from the JSON text, copied only when it holds escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_str(Tree).and_then(|v| match v {
            Json::Str(s) => Ok(Key(s)),
            _ => Err(serde::de::Error::custom("a key that is not a string")),
        })
    }
}

struct Tree;

impl<'de> Visitor<'de> for Tree {
    type Value = Json<'de>;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Json<'de>, E> {
        Ok(Json::U64(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Json<'de>, E> {
        Ok(Json::I64(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Json<'de>, E> {
        Ok(Json::F64(v))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(v.to_owned())))
    }
    fn visit_string<E>(self, v: String) -> Result<Json<'de>, E> {
        Ok(Json::Str(Cow::Owned(v)))
    }
    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element()? {
            items.push(v);
        }
        Ok(Json::Array(items))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        // Events' objects hold a few dozen members, their children a few.
        let mut o = ObjectBuilder::with_capacity(8);
        while let Some(Key(k)) = map.next_key()? {
            let v = map.next_value()?;
            o.insert(k, v);
        }
        Ok(Json::Object(o.build()))
    }
}

impl<'de> Deserialize<'de> for Json<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(Tree)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tree of `text`, with `serde_json::Value`'s view of the same text beside it.
    fn both(text: &str) -> (Json<'_>, serde_json::Value) {
        (
            serde_json::from_str(text).expect("parses"),
            serde_json::from_str(text).expect("parses"),
        )
    }

    /// `v` as `serde_json::Value` would hold it.
    fn to_value(v: &Json<'_>) -> serde_json::Value {
        use serde_json::Value;
        match v {
            Json::Null => Value::Null,
            Json::Bool(b) => Value::Bool(*b),
            Json::U64(n) => (*n).into(),
            Json::I64(n) => (*n).into(),
            Json::F64(n) => serde_json::Number::from_f64(*n).map_or(Value::Null, Value::Number),
            Json::Str(s) => Value::String(s.to_string()),
            Json::Array(a) => Value::Array(a.iter().map(to_value).collect()),
            Json::Object(o) => Value::Object(
                o.iter()
                    .map(|(k, v)| (k.to_string(), to_value(v)))
                    .collect(),
            ),
        }
    }

    #[test]
    fn members_keep_their_order_and_a_repeated_key_its_place_and_last_value() {
        let (tree, value) =
            both(r#"{"b":1,"a":{"z":null,"y":[true,-2,0.5]},"b":"two","\u0041":"esc"}"#);
        let o = tree.as_object().expect("object");
        assert_eq!(o.keys().collect::<Vec<_>>(), ["b", "a", "A"]);
        assert_eq!(o.get("b"), Some(&Json::Str("two".into())));
        assert_eq!(to_value(&tree), value);
        let keys: Vec<_> = value.as_object().unwrap().keys().cloned().collect();
        assert_eq!(o.keys().collect::<Vec<_>>(), keys);
    }

    #[test]
    fn repeated_keys_among_many_are_found() {
        // 300 keys: every one of the 256 bits is taken, so repeats are compared.
        let mut text = String::from("{");
        for i in 0..300 {
            text.push_str(&format!("\"k{i}\":{i},"));
        }
        text.push_str("\"k7\":\"last\",\"k299\":null}");
        let (tree, value) = both(&text);
        assert_eq!(to_value(&tree), value);
        let o = tree.as_object().unwrap();
        assert_eq!(o.len(), 300);
        assert_eq!(o.get("k7"), Some(&Json::Str("last".into())));
        assert_eq!(o.keys().nth(7), Some("k7"));
        assert_eq!(o.get("k299"), Some(&Json::Null));
        assert_eq!(o.get("k300"), None);
    }

    #[test]
    fn strings_without_escapes_borrow_from_the_text() {
        let text = r#"{"Image":"C:\\x.exe","User":"bob"}"#;
        let tree: Json<'_> = serde_json::from_str(text).unwrap();
        let o = tree.as_object().unwrap();
        assert!(matches!(
            o.get("User"),
            Some(Json::Str(Cow::Borrowed("bob")))
        ));
        assert!(matches!(o.get("Image"), Some(Json::Str(Cow::Owned(s))) if s == "C:\\x.exe"));
    }

    #[test]
    fn numbers_read_and_print_as_serde_json_reads_and_prints_them() {
        for text in ["1", "-1", "18446744073709551615", "1e3", "1.5", "-0", "2.0"] {
            let (tree, value) = both(text);
            assert_eq!(to_value(&tree), value, "{text}");
            assert_eq!(tree.scalar_text(), Some(value.to_string()), "{text}");
            assert_eq!(tree.as_f64(), value.as_f64(), "{text}");
        }
    }

    #[test]
    fn bad_text_fails_as_it_does_for_value() {
        for text in [
            "{\"a\":",
            "[1,]",
            "{\"a\" 1}",
            "\"\\ud800\"",
            &"[".repeat(200),
        ] {
            let tree = serde_json::from_str::<Json<'_>>(text).map(|_| ());
            let value = serde_json::from_str::<serde_json::Value>(text).map(|_| ());
            assert_eq!(
                tree.map_err(|e| e.to_string()),
                value.map_err(|e| e.to_string()),
                "{text}"
            );
        }
    }
}
