//! A MaxMind DB writer for the tests' GeoIP databases: an IPv6 search tree of 24-bit
//! records over the networks given (IPv4 ones under `::/96`, where readers look IPv4
//! addresses up), the data section, and the metadata, as the MaxMind DB format 2.0
//! specifies them. Enough for GeoLite2-shaped maps of strings and numbers.

use std::net::IpAddr;

/// A value of the data section.
#[derive(Debug, Clone)]
pub enum Value {
    Str(String),
    U16(u16),
    U32(u32),
    U64(u64),
    Array(Vec<Value>),
    Map(Vec<(String, Value)>),
}

/// A map of `pairs`.
pub fn map(pairs: &[(&str, Value)]) -> Value {
    Value::Map(
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect(),
    )
}

/// A string.
pub fn s(v: &str) -> Value {
    Value::Str(v.to_string())
}

/// `{"names": {"en": name}}`, as GeoLite2 names a country or city.
pub fn named(name: &str) -> Value {
    map(&[("names", map(&[("en", s(name))]))])
}

/// The control bytes of a value of `kind` (1..=15) and `size`.
fn control(kind: u8, size: usize, out: &mut Vec<u8>) {
    let (field, extra): (u8, Vec<u8>) = if size < 29 {
        (size as u8, vec![])
    } else if size < 29 + 256 {
        (29, vec![(size - 29) as u8])
    } else if size < 285 + 65_536 {
        (30, ((size - 285) as u16).to_be_bytes().to_vec())
    } else {
        (31, ((size - 65_821) as u32).to_be_bytes()[1..].to_vec())
    };
    if kind <= 7 {
        out.push(kind << 5 | field);
    } else {
        out.push(field);
        out.push(kind - 7);
    }
    out.extend(extra);
}

fn unsigned(kind: u8, v: u64, out: &mut Vec<u8>) {
    let bytes = v.to_be_bytes();
    let skip = bytes.iter().take_while(|b| **b == 0).count();
    control(kind, 8 - skip, out);
    out.extend_from_slice(&bytes[skip..]);
}

/// Appends `v` encoded.
pub fn encode(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Str(t) => {
            control(2, t.len(), out);
            out.extend_from_slice(t.as_bytes());
        }
        Value::U16(n) => unsigned(5, u64::from(*n), out),
        Value::U32(n) => unsigned(6, u64::from(*n), out),
        Value::U64(n) => unsigned(9, *n, out),
        Value::Array(items) => {
            control(11, items.len(), out);
            for i in items {
                encode(i, out);
            }
        }
        Value::Map(pairs) => {
            control(7, pairs.len(), out);
            for (k, v) in pairs {
                encode(&Value::Str(k.clone()), out);
                encode(v, out);
            }
        }
    }
}

#[derive(Clone, Copy)]
enum Child {
    Empty,
    Node(usize),
    Data(usize),
}

/// A database of type `kind` (`GeoLite2-City`, …) holding `networks`: (address, prefix
/// length, value); networks must not overlap.
pub fn database(kind: &str, networks: &[(IpAddr, u8, Value)]) -> Vec<u8> {
    let mut nodes: Vec<[Child; 2]> = vec![[Child::Empty; 2]];
    for (i, (addr, len, _)) in networks.iter().enumerate() {
        let (bits, len) = match addr {
            IpAddr::V4(a) => (u128::from(u32::from(*a)), 96 + usize::from(*len)),
            IpAddr::V6(a) => (u128::from(*a), usize::from(*len)),
        };
        let mut node = 0;
        for depth in 0..len {
            let bit = ((bits >> (127 - depth)) & 1) as usize;
            if depth + 1 == len {
                nodes[node][bit] = Child::Data(i);
                break;
            }
            node = match nodes[node][bit] {
                Child::Node(n) => n,
                Child::Empty => {
                    nodes.push([Child::Empty; 2]);
                    nodes[node][bit] = Child::Node(nodes.len() - 1);
                    nodes.len() - 1
                }
                Child::Data(_) => panic!("networks overlap"),
            };
        }
    }
    let mut data = Vec::new();
    let mut offsets = Vec::new();
    for (_, _, v) in networks {
        offsets.push(data.len());
        encode(v, &mut data);
    }
    let count = nodes.len();
    let record = |c: Child| -> usize {
        match c {
            Child::Empty => count,
            Child::Node(n) => n,
            Child::Data(i) => count + 16 + offsets[i],
        }
    };
    let mut out = Vec::new();
    for n in &nodes {
        for c in n {
            out.extend_from_slice(&(record(*c) as u32).to_be_bytes()[1..]);
        }
    }
    out.extend_from_slice(&[0; 16]);
    out.extend_from_slice(&data);
    out.extend_from_slice(b"\xAB\xCD\xEFMaxMind.com");
    let meta = map(&[
        ("binary_format_major_version", Value::U16(2)),
        ("binary_format_minor_version", Value::U16(0)),
        ("build_epoch", Value::U64(1_700_000_000)),
        ("database_type", s(kind)),
        ("description", map(&[("en", s("scanner test database"))])),
        ("ip_version", Value::U16(6)),
        ("languages", Value::Array(vec![s("en")])),
        ("node_count", Value::U32(count as u32)),
        ("record_size", Value::U16(24)),
    ]);
    encode(&meta, &mut out);
    out
}
