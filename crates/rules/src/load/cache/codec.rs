//! YAML values as bytes, and back: the rule cache's payload.
//!
//! A value is one tag byte, then what the tag needs: nothing (null, false, true), eight
//! bytes (a number), a length and that many bytes (a string), or a count and that many
//! values (a sequence; a mapping, key then value). Lengths and counts are LEB128. The
//! reader trusts nothing: every length is checked against the bytes left, nesting is
//! bounded, and any inconsistency is an error (the cache is then ignored), never a
//! panic.

use yaml_serde::value::{Tag, TaggedValue};
use yaml_serde::{Mapping, Number, Value};

const NULL: u8 = 0;
const FALSE: u8 = 1;
const TRUE: u8 = 2;
const INT: u8 = 3;
const UINT: u8 = 4;
const FLOAT: u8 = 5;
const STRING: u8 = 6;
const SEQUENCE: u8 = 7;
const MAPPING: u8 = 8;
const TAGGED: u8 = 9;

/// Deepest nesting read back; the YAML parser refuses deeper documents than this.
const MAX_DEPTH: usize = 256;

/// Appends `v` to `out`.
pub fn encode(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.push(NULL),
        Value::Bool(false) => out.push(FALSE),
        Value::Bool(true) => out.push(TRUE),
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                out.push(INT);
                out.extend_from_slice(&i.to_le_bytes());
            } else if let Some(u) = n.as_u64() {
                out.push(UINT);
                out.extend_from_slice(&u.to_le_bytes());
            } else {
                out.push(FLOAT);
                let f = n.as_f64().unwrap_or(f64::NAN);
                out.extend_from_slice(&f.to_bits().to_le_bytes());
            }
        }
        Value::String(s) => {
            out.push(STRING);
            put_str(s, out);
        }
        Value::Sequence(items) => {
            out.push(SEQUENCE);
            put_len(items.len(), out);
            for i in items {
                encode(i, out);
            }
        }
        Value::Mapping(m) => {
            out.push(MAPPING);
            put_len(m.len(), out);
            for (k, v) in m {
                encode(k, out);
                encode(v, out);
            }
        }
        Value::Tagged(t) => {
            out.push(TAGGED);
            put_str(&t.tag.to_string(), out);
            encode(&t.value, out);
        }
    }
}

/// Appends a length or count.
pub fn put_len(mut n: usize, out: &mut Vec<u8>) {
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

fn put_str(s: &str, out: &mut Vec<u8>) {
    put_len(s.len(), out);
    out.extend_from_slice(s.as_bytes());
}

/// What is wrong with bytes that do not decode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damaged;

/// Reads values from bytes written by [`encode`].
pub struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    /// A reader at the start of `bytes`.
    pub fn new(bytes: &'a [u8]) -> Reader<'a> {
        Reader { bytes, at: 0 }
    }

    /// Whether every byte has been read.
    pub fn is_done(&self) -> bool {
        self.at == self.bytes.len()
    }

    fn byte(&mut self) -> Result<u8, Damaged> {
        let b = *self.bytes.get(self.at).ok_or(Damaged)?;
        self.at += 1;
        Ok(b)
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], Damaged> {
        let end = self.at.checked_add(n).ok_or(Damaged)?;
        let s = self.bytes.get(self.at..end).ok_or(Damaged)?;
        self.at = end;
        Ok(s)
    }

    fn eight(&mut self) -> Result<[u8; 8], Damaged> {
        self.take(8)?.try_into().map_err(|_| Damaged)
    }

    /// A length or count; never more than the bytes left (each item takes one at
    /// least), so a damaged count cannot ask for a huge allocation.
    pub fn len(&mut self) -> Result<usize, Damaged> {
        let mut n: u64 = 0;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            n |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                let n = usize::try_from(n).map_err(|_| Damaged)?;
                return if n <= self.bytes.len() - self.at {
                    Ok(n)
                } else {
                    Err(Damaged)
                };
            }
        }
        Err(Damaged)
    }

    /// A string.
    pub fn str(&mut self) -> Result<&'a str, Damaged> {
        let n = self.len()?;
        std::str::from_utf8(self.take(n)?).map_err(|_| Damaged)
    }

    /// The next value.
    pub fn value(&mut self) -> Result<Value, Damaged> {
        self.value_at(0)
    }

    fn value_at(&mut self, depth: usize) -> Result<Value, Damaged> {
        if depth > MAX_DEPTH {
            return Err(Damaged);
        }
        Ok(match self.byte()? {
            NULL => Value::Null,
            FALSE => Value::Bool(false),
            TRUE => Value::Bool(true),
            INT => Value::Number(Number::from(i64::from_le_bytes(self.eight()?))),
            UINT => Value::Number(Number::from(u64::from_le_bytes(self.eight()?))),
            FLOAT => Value::Number(Number::from(f64::from_bits(u64::from_le_bytes(
                self.eight()?,
            )))),
            STRING => Value::String(self.str()?.to_string()),
            SEQUENCE => {
                let n = self.len()?;
                let mut items = Vec::with_capacity(n);
                for _ in 0..n {
                    items.push(self.value_at(depth + 1)?);
                }
                Value::Sequence(items)
            }
            MAPPING => {
                let n = self.len()?;
                let mut m = Mapping::with_capacity(n);
                for _ in 0..n {
                    let k = self.value_at(depth + 1)?;
                    let v = self.value_at(depth + 1)?;
                    m.insert(k, v);
                }
                Value::Mapping(m)
            }
            TAGGED => {
                let tag = self.str()?;
                if tag.is_empty() {
                    return Err(Damaged);
                }
                let tag = Tag::new(tag);
                let value = self.value_at(depth + 1)?;
                Value::Tagged(Box::new(TaggedValue { tag, value }))
            }
            _ => return Err(Damaged),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(v: &Value) -> Value {
        let mut out = Vec::new();
        encode(v, &mut out);
        let mut r = Reader::new(&out);
        let back = r.value().unwrap();
        assert!(r.is_done());
        back
    }

    #[test]
    fn every_built_in_rule_and_config_document_reads_back_equal() {
        let mut n = 0;
        for (name, text) in crate::builtin::RULES.iter().chain(crate::builtin::CONFIG) {
            for doc in crate::yaml::documents(text) {
                let Ok(v) = doc else { continue };
                assert_eq!(round_trip(&v), v, "{name}");
                n += 1;
            }
        }
        assert!(n > 20, "{n} documents");
    }

    #[test]
    fn scalars_of_every_kind_and_tags_read_back_equal() {
        let text = "a: ~\nb: [true, false, -3, 18446744073709551615, 1.5, .nan, -.inf, '']\n\
                    c: !custom {x: 1}\n? [1, 2]\n: {é: \"\\u0000\"}\nd: 12345678901\n";
        let v: Value = crate::yaml::documents(text).next().unwrap().unwrap();
        let back = round_trip(&v);
        // NaN is not equal to itself: compare the text the values print.
        assert_eq!(
            yaml_serde::to_string(&back).unwrap(),
            yaml_serde::to_string(&v).unwrap()
        );
        assert_eq!(back.get("c"), v.get("c"));
    }

    #[test]
    fn damaged_bytes_are_an_error_never_a_panic() {
        let v: Value = crate::yaml::documents(crate::builtin::RULES[0].1)
            .next()
            .unwrap()
            .unwrap();
        let mut good = Vec::new();
        encode(&v, &mut good);
        // Every truncation, and every single-byte change, either decodes to something
        // or is Damaged.
        for cut in 0..good.len() {
            assert_eq!(
                Reader::new(&good[..cut]).value(),
                Err(Damaged),
                "cut at {cut}"
            );
        }
        for i in 0..good.len() {
            for flip in [0x01u8, 0x80, 0xff] {
                let mut bad = good.clone();
                bad[i] ^= flip;
                let _ = Reader::new(&bad).value();
            }
        }
        // A count larger than the bytes left, and nesting past the bound.
        assert_eq!(Reader::new(&[SEQUENCE, 0xff, 0x7f]).value(), Err(Damaged));
        let deep: Vec<u8> = std::iter::repeat_n([SEQUENCE, 1], 300)
            .flatten()
            .chain([NULL])
            .collect();
        assert_eq!(Reader::new(&deep).value(), Err(Damaged));
    }
}
