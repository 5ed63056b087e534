//! The budget, and the documents of a text read against it.
//!
//! An alias (`*a`) repeats the whole node its anchor names, so a few hundred kilobytes
//! of aliases to aliases to one long string expand to gigabytes (a 290 KB rule took 22 s
//! and 5.1 GB to load). Without aliases a document holds at most about one node and
//! one byte of scalar text per byte of YAML, so the reader charges every node and every
//! scalar byte it builds against a budget of the text's length plus a fixed allowance,
//! and stops at the first node over it: neither time nor memory grows with what the
//! aliases would have expanded to. Real rules stay far below it (they use few aliases).
//!
//! Each document is first offered to `block`, which reads the plain block style rule
//! files are written in (7,832 of the 7,855 documents of the hayabusa and SigmaHQ rule
//! sets) to the same values `yaml_serde` builds, charged to the same budget; a document
//! it gives up on is parsed by `yaml_serde` as before, so errors and their texts are
//! `yaml_serde`'s.

use crate::block;
use crate::error::Error;
use serde::de::{self, DeserializeSeed, Deserializer, Visitor};
use std::fmt;
use yaml_serde::mapping::Entry;
use yaml_serde::value::{Tag, TaggedValue};
use yaml_serde::{Mapping, Value};

/// Nodes a text may expand to beyond one per byte of it.
pub const NODE_ALLOWANCE: usize = 64 << 10;
/// Bytes of scalar text a text may expand to beyond its own length.
pub const TEXT_ALLOWANCE: usize = 1 << 20;

/// What is left to spend while building the values of one text.
struct Budget {
    nodes: usize,
    bytes: usize,
    /// The limits, for the error.
    node_limit: usize,
    byte_limit: usize,
    /// Set when the budget ran out (the parser then wraps our error in its own).
    spent: bool,
}

impl Budget {
    fn for_text(text: &str) -> Budget {
        let node_limit = text.len().saturating_add(NODE_ALLOWANCE);
        let byte_limit = text.len().saturating_add(TEXT_ALLOWANCE);
        Budget {
            nodes: node_limit,
            bytes: byte_limit,
            node_limit,
            byte_limit,
            spent: false,
        }
    }

    /// Charges one node holding `bytes` of text.
    fn charge<E: de::Error>(&mut self, bytes: usize) -> Result<(), E> {
        if self.take(1, bytes) {
            return Ok(());
        }
        self.spent = true;
        Err(E::custom("expansion budget spent"))
    }

    /// Charges `nodes` nodes holding `bytes` bytes of text in all, or nothing when they
    /// do not fit (`false`). A text read directly is charged so; when it does not fit it
    /// is read again by `yaml_serde`, which charges and fails where `Bounded` would.
    fn take(&mut self, nodes: usize, bytes: usize) -> bool {
        match (self.nodes.checked_sub(nodes), self.bytes.checked_sub(bytes)) {
            (Some(n), Some(b)) => {
                self.nodes = n;
                self.bytes = b;
                true
            }
            _ => false,
        }
    }

    /// The error to report for a failed parse: ours when the budget ran out.
    fn error(&self, e: yaml_serde::Error) -> Error {
        if self.spent {
            Error::Expansion {
                nodes: self.node_limit,
                bytes: self.byte_limit,
            }
        } else {
            Error::Yaml(e)
        }
    }
}

/// Builds a [`Value`] exactly as `Value::deserialize` does, charging the budget first.
struct Bounded<'b>(&'b mut Budget);

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any YAML value")
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        self.0.charge(0)?;
        Ok(Value::Bool(b))
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        self.0.charge(0)?;
        Ok(Value::Number(i.into()))
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        self.0.charge(0)?;
        Ok(Value::Number(u.into()))
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        self.0.charge(0)?;
        Ok(Value::Number(f.into()))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        self.0.charge(s.len())?;
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E: de::Error>(self, s: String) -> Result<Value, E> {
        self.0.charge(s.len())?;
        Ok(Value::String(s))
    }

    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        self.0.charge(0)?;
        Ok(Value::Null)
    }

    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        self.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        self.0.charge(0)?;
        let mut items = Vec::new();
        while let Some(v) = seq.next_element_seed(Bounded(&mut *self.0))? {
            items.push(v);
        }
        Ok(Value::Sequence(items))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        self.0.charge(0)?;
        let mut out = Mapping::new();
        while let Some(k) = map.next_key_seed(Bounded(&mut *self.0))? {
            match out.entry(k) {
                // The text `Mapping::deserialize` gives.
                Entry::Occupied(e) => {
                    return Err(de::Error::custom(format_args!(
                        "duplicate entry {}",
                        duplicate_key(e.key())
                    )))
                }
                Entry::Vacant(e) => {
                    e.insert(map.next_value_seed(Bounded(&mut *self.0))?);
                }
            }
        }
        Ok(Value::Mapping(out))
    }

    fn visit_enum<A: de::EnumAccess<'de>>(self, data: A) -> Result<Value, A::Error> {
        use de::VariantAccess;
        let (tag, contents) = data.variant::<String>()?;
        if tag.is_empty() {
            return Err(de::Error::custom("empty YAML tag is not allowed"));
        }
        self.0.charge(tag.len())?;
        let value = contents.newtype_variant_seed(Bounded(&mut *self.0))?;
        Ok(Value::Tagged(Box::new(TaggedValue {
            tag: Tag::new(tag),
            value,
        })))
    }
}

/// A scalar as text, as YAML writes it: a string, a number or a boolean; `None` for
/// anything else.
pub fn scalar_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// How a duplicate key is named, as `yaml_serde` names it.
fn duplicate_key(k: &Value) -> String {
    match k {
        Value::Null => "with null key".into(),
        Value::Bool(b) => format!("with key `{b}`"),
        Value::Number(n) => format!("with key {n}"),
        Value::String(s) => format!("with key {s:?}"),
        Value::Sequence(_) | Value::Mapping(_) | Value::Tagged(_) => "in YAML map".into(),
    }
}

/// The one document of `text` (a text of several is an error, as in `yaml_serde`).
pub fn document(text: &str) -> Result<Value, Error> {
    let mut budget = Budget::for_text(text);
    if let Some(v) = direct(text, &mut budget) {
        return Ok(v);
    }
    let v = Bounded(&mut budget).deserialize(yaml_serde::Deserializer::from_str(text));
    v.map_err(|e| budget.error(e))
}

/// The documents of `text`, in order, sharing one budget. Each document is parsed on
/// its own (the text is cut at its `---` lines), so an error in one is reported for it
/// alone and the documents after it are still read.
pub fn documents(text: &str) -> impl Iterator<Item = Result<Value, Error>> + '_ {
    let mut budget = Budget::for_text(text);
    segments(text).map(move |(line, seg)| {
        if let Some(v) = direct(seg, &mut budget) {
            return Ok(v);
        }
        let v = Bounded(&mut budget).deserialize(yaml_serde::Deserializer::from_str(seg));
        v.map_err(|e| {
            if budget.spent || line == 0 {
                return budget.error(e);
            }
            // Parse again behind as many blank lines as precede the document, so the
            // error names the line of the file (errors are rare: no cost otherwise).
            let padded = format!("{}{seg}", "\n".repeat(line));
            match yaml_serde::from_str::<serde::de::IgnoredAny>(&padded) {
                Err(at_line) => budget.error(at_line),
                Ok(_) => budget.error(e),
            }
        })
    })
}

/// `text` read by the block reader, when it is in its subset and within the budget.
fn direct(text: &str, budget: &mut Budget) -> Option<Value> {
    let read = block::read(text)?;
    budget.take(read.nodes, read.bytes).then_some(read.value)
}

/// Whether `line` is a document start marker (`---` alone or followed by a blank).
fn is_start_marker(line: &str) -> bool {
    line.strip_prefix("---")
        .is_some_and(|rest| rest.is_empty() || rest.starts_with([' ', '\t', '\r', '\n']))
}

/// The documents of `text` as (index of their first line, text): cut before each
/// `---` line (a marker at the start of a line ends a document wherever it stands). What
/// precedes the first marker is a document of its own unless it holds only blank lines,
/// comments and directives (then it belongs to the next one). A prelude alone (a text
/// of comments) is one empty document.
pub(crate) fn segments(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut starts = vec![(0usize, 0usize)];
    let mut offset = 0;
    for (n, line) in text.split_inclusive('\n').enumerate() {
        if n > 0 && is_start_marker(line) {
            starts.push((n, offset));
        }
        offset += line.len();
    }
    let head_is_prelude = |head: &str| {
        head.lines().all(|l| {
            let l = l.trim_start();
            l.is_empty() || l.starts_with('#') || l.starts_with('%')
        })
    };
    if starts.len() > 1 && head_is_prelude(&text[..starts[1].1]) {
        starts.remove(1);
    }
    let ends: Vec<usize> = starts
        .iter()
        .skip(1)
        .map(|s| s.1)
        .chain([text.len()])
        .collect();
    starts
        .into_iter()
        .zip(ends)
        .map(move |((line, start), end)| (line, &text[start..end]))
}

/// A plain `Value::deserialize`, for tests comparing the two.
#[cfg(test)]
fn unbounded(text: &str) -> Vec<Value> {
    use serde::Deserialize;
    yaml_serde::Deserializer::from_str(text)
        .map(|de| Value::deserialize(de).unwrap())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` levels of aliases, each a list of ten of the one before, over a 1 KB string.
    fn bomb(levels: usize) -> String {
        let mut t = format!("a0: &a0 '{}'\n", "x".repeat(1024));
        for i in 1..=levels {
            let prev = format!("*a{}", i - 1);
            t.push_str(&format!("a{i}: &a{i} [{}]\n", vec![prev; 10].join(", ")));
        }
        t
    }

    #[test]
    fn values_are_those_yaml_serde_builds() {
        let text = "title: T\nn: 1\nneg: -2\nf: 1.5\nb: true\nz: ~\nlist: [a, 'b', {c: d}]\n\
                    tagged: !re 'x+'\nref: &r {k: v}\nagain: *r\n---\n- one\n---\n";
        let ours: Vec<Value> = documents(text).map(Result::unwrap).collect();
        assert_eq!(ours, unbounded(text));
        assert_eq!(ours.len(), 3);
        assert_eq!(document("a: 1\n").unwrap(), unbounded("a: 1\n")[0]);
        assert_eq!(document("").unwrap(), Value::Null);
    }

    #[test]
    fn errors_keep_yaml_serdes_text() {
        let e = document("a: 1\na: 2\n").unwrap_err().to_string();
        assert!(e.starts_with("duplicate entry with key \"a\""), "{e}");
        let e = document("a: 1\n---\nb: 2\n").unwrap_err().to_string();
        assert!(e.contains("more than one document"), "{e}");
        let mut docs = documents("a: 1\n---\na: [\n---\nb: 1\n");
        assert!(docs.next().unwrap().is_ok());
        assert!(matches!(docs.next().unwrap().unwrap_err(), Error::Yaml(_)));
        assert!(
            docs.next().unwrap().is_ok(),
            "the document after an invalid one"
        );
        assert!(docs.next().is_none());
    }

    #[test]
    fn an_alias_bomb_is_rejected_when_the_budget_is_spent() {
        // Four levels are 10,000 copies of the string: 10 MB from 1.2 KB of text.
        let text = bomb(4);
        let e = document(&text).unwrap_err();
        assert!(
            matches!(e, Error::Expansion { bytes, .. } if bytes == text.len() + TEXT_ALLOWANCE),
            "{e}"
        );
        assert!(e.to_string().starts_with("expands to more than"), "{e}");
        // Two levels (100 KB) are within the allowance.
        assert!(document(&bomb(2)).is_ok());
    }

    #[test]
    fn many_small_aliased_nodes_spend_the_node_budget() {
        let mut t = String::from("a0: &a0 [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]\n");
        for i in 1..=6 {
            t.push_str(&format!(
                "a{i}: &a{i} [{}]\n",
                vec![format!("*a{}", i - 1); 10].join(",")
            ));
        }
        let e = documents(&t).next().unwrap().unwrap_err();
        assert!(matches!(e, Error::Expansion { .. }), "{e}");
    }

    #[test]
    fn the_budget_is_shared_by_the_documents_of_a_text() {
        // Each document alone is within the allowance; all together are not.
        let one = format!(
            "a: &a '{}'\nb: [{}]\n",
            "x".repeat(1000),
            vec!["*a"; 300].join(",")
        );
        let text = [one.as_str(); 6].join("---\n");
        let results: Vec<bool> = documents(&text).map(|r| r.is_ok()).collect();
        assert_eq!(results, [true, true, true, false, false, false]);
    }

    #[test]
    fn an_invalid_document_does_not_end_the_text() {
        let text = "# c\n---\na: 1\n---\nb: [\n---\nc: 3\n--- # four\nd: 4\n";
        let docs: Vec<_> = documents(text).collect();
        assert_eq!(docs.len(), 4, "{docs:?}");
        assert_eq!(docs[0].as_ref().unwrap()["a"], Value::from(1));
        let e = docs[1].as_ref().unwrap_err().to_string();
        assert!(e.contains("line 6"), "{e}");
        assert_eq!(docs[2].as_ref().unwrap()["c"], Value::from(3));
        assert_eq!(docs[3].as_ref().unwrap()["d"], Value::from(4));
        let plain: Vec<_> = documents("a: 1\n---\nb: 2\n").collect();
        assert_eq!(plain.len(), 2);
        assert!(documents("# only\n").all(|d| d.unwrap().is_null()));
    }
}
