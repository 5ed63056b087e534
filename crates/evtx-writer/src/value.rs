//! Typed values: what a substitution (or an element's text) holds, how BinXML stores
//! it, and how a reader renders it.

use crate::error::Error;
use std::fmt::Write as _;

/// Seconds between 1601-01-01 (FILETIME's epoch) and 1970-01-01.
const FILETIME_UNIX_OFFSET: i64 = 11_644_473_600;
const TICKS_PER_SEC: u64 = 10_000_000;

/// One value, as BinXML types it (MS-EVEN6 value types).
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// No value: an optional substitution that leaves its node out.
    Null,
    /// UTF-16 string (type 0x01).
    String(String),
    /// ANSI string (type 0x02); only ASCII text is accepted.
    AnsiString(String),
    /// Type 0x03.
    I8(i8),
    /// Type 0x04.
    U8(u8),
    /// Type 0x05.
    I16(i16),
    /// Type 0x06.
    U16(u16),
    /// Type 0x07.
    I32(i32),
    /// Type 0x08.
    U32(u32),
    /// Type 0x09.
    I64(i64),
    /// Type 0x0a.
    U64(u64),
    /// Type 0x0b.
    F32(f32),
    /// Type 0x0c.
    F64(f64),
    /// Type 0x0d, stored as a 32-bit integer.
    Bool(bool),
    /// Type 0x0e; rendered as upper-case hex.
    Binary(Vec<u8>),
    /// Type 0x0f.
    Guid(Guid),
    /// Type 0x11: 100 ns ticks since 1601-01-01 UTC.
    FileTime(u64),
    /// Type 0x12.
    SysTime(SysTime),
    /// Type 0x13.
    Sid(Sid),
    /// Type 0x14; rendered `0x..`.
    Hex32(u32),
    /// Type 0x15; rendered `0x..`.
    Hex64(u64),
    /// An array (type | 0x80) of scalars of one type. A reader repeats the element that
    /// holds it once per item. Empty arrays are string arrays.
    Array(Vec<Value>),
}

/// A GUID, kept as its 16 bytes in the order BinXML stores them (the first three
/// fields little-endian).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Guid(pub [u8; 16]);

/// A SYSTEMTIME: calendar fields, milliseconds precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SysTime {
    /// 1601..=30827.
    pub year: u16,
    /// 1..=12.
    pub month: u16,
    /// 0 (Sunday)..=6.
    pub day_of_week: u16,
    /// 1..=31.
    pub day: u16,
    /// 0..=23.
    pub hour: u16,
    /// 0..=59.
    pub minute: u16,
    /// 0..=59.
    pub second: u16,
    /// 0..=999.
    pub milliseconds: u16,
}

/// A security identifier, `S-1-5-21-...`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Sid {
    /// Always 1 in practice.
    pub revision: u8,
    /// The 48-bit identifier authority.
    pub authority: u64,
    /// At most 15 sub-authorities.
    pub sub_authorities: Vec<u32>,
}

impl Guid {
    /// Parses `{xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}` (braces optional, any case).
    pub fn parse(s: &str) -> Option<Guid> {
        let s = s
            .strip_prefix('{')
            .and_then(|s| s.strip_suffix('}'))
            .unwrap_or(s);
        let parts: Vec<&str> = s.split('-').collect();
        let lens = [8, 4, 4, 4, 12];
        if parts.len() != 5 || parts.iter().zip(lens).any(|(p, l)| p.len() != l) {
            return None;
        }
        if !parts
            .iter()
            .all(|p| p.bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return None;
        }
        let d1 = u32::from_str_radix(parts[0], 16).ok()?;
        let d2 = u16::from_str_radix(parts[1], 16).ok()?;
        let d3 = u16::from_str_radix(parts[2], 16).ok()?;
        let rest = format!("{}{}", parts[3], parts[4]);
        let mut out = [0u8; 16];
        out[0..4].copy_from_slice(&d1.to_le_bytes());
        out[4..6].copy_from_slice(&d2.to_le_bytes());
        out[6..8].copy_from_slice(&d3.to_le_bytes());
        for i in 0..8 {
            out[8 + i] = u8::from_str_radix(&rest[2 * i..2 * i + 2], 16).ok()?;
        }
        Some(Guid(out))
    }
}

impl std::fmt::Display for Guid {
    /// Lower-case, in braces, as Windows and the `evtx` crate render it.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let b = &self.0;
        let d1 = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
        let d2 = u16::from_le_bytes([b[4], b[5]]);
        let d3 = u16::from_le_bytes([b[6], b[7]]);
        write!(f, "{{{d1:08x}-{d2:04x}-{d3:04x}-{:02x}{:02x}-", b[8], b[9])?;
        for x in &b[10..] {
            write!(f, "{x:02x}")?;
        }
        f.write_char('}')
    }
}

impl Sid {
    /// Parses `S-1-5-21-1-2-3` (decimal authority, or `0x` hex for large ones).
    pub fn parse(s: &str) -> Option<Sid> {
        let mut parts = s
            .strip_prefix("S-")
            .or_else(|| s.strip_prefix("s-"))?
            .split('-');
        let revision: u8 = parse_dec(parts.next()?)?.try_into().ok()?;
        let auth = parts.next()?;
        let authority = match auth.strip_prefix("0x").or_else(|| auth.strip_prefix("0X")) {
            Some(h) => u64::from_str_radix(h, 16).ok()?,
            None => parse_dec(auth)?,
        };
        if authority >= 1 << 48 {
            return None;
        }
        let mut sub_authorities = Vec::new();
        for p in parts {
            sub_authorities.push(parse_dec(p)?.try_into().ok()?);
        }
        if sub_authorities.len() > 15 {
            return None;
        }
        Some(Sid {
            revision,
            authority,
            sub_authorities,
        })
    }
}

/// Plain decimal digits only (no sign, no leading `+`).
fn parse_dec(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

impl std::fmt::Display for Sid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "S-{}-{}", self.revision, self.authority)?;
        for s in &self.sub_authorities {
            write!(f, "-{s}")?;
        }
        Ok(())
    }
}

impl SysTime {
    /// Whether a reader renders it as the time it says.
    pub fn is_valid(&self) -> bool {
        (1601..=30827).contains(&self.year)
            && (1..=12).contains(&self.month)
            && self.day >= 1
            && self.day <= days_in_month(self.year.into(), self.month)
            && self.hour < 24
            && self.minute < 60
            && self.second < 60
            && self.milliseconds < 1000
    }

    /// Parses `YYYY-MM-DDTHH:MM:SS[.fff]Z` with at most millisecond precision (extra
    /// fractional digits must be zeros).
    pub fn parse(s: &str) -> Option<SysTime> {
        let ft = parse_filetime(s)?;
        if ft % 10_000 != 0 {
            return None;
        }
        let (y, mo, d, h, mi, sec, ticks) = civil_from_filetime(ft);
        let days = ft / (86_400 * TICKS_PER_SEC);
        Some(SysTime {
            year: u16::try_from(y).ok()?,
            month: mo.into(),
            // 1601-01-01 was a Monday.
            day_of_week: ((days + 1) % 7) as u16,
            day: d.into(),
            hour: h.into(),
            minute: mi.into(),
            second: sec.into(),
            milliseconds: (ticks / 10_000) as u16,
        })
    }
}

fn days_in_month(year: u64, month: u16) -> u16 {
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Year, month, day, hour, minute, second and sub-second ticks of a FILETIME.
fn civil_from_filetime(ft: u64) -> (u64, u8, u8, u8, u8, u8, u32) {
    let day_ticks = 86_400 * TICKS_PER_SEC;
    let (days, ticks) = (ft / day_ticks, ft % day_ticks);
    // Days since 1601-03-01 style civil conversion, shifted to the 0000-03-01 era base.
    let z = days + 584_694;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u8;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u8;
    let year = era * 400 + yoe + u64::from(month <= 2);
    let secs = ticks / TICKS_PER_SEC;
    (
        year,
        month,
        day,
        (secs / 3600) as u8,
        (secs / 60 % 60) as u8,
        (secs % 60) as u8,
        (ticks % TICKS_PER_SEC) as u32,
    )
}

/// Renders a FILETIME as the `evtx` crate does: `YYYY-MM-DDTHH:MM:SS.fffffffZ`.
pub fn format_filetime(ft: u64) -> String {
    if ft > i64::MAX as u64 {
        return "0000-00-00T00:00:00.0000000Z".to_owned();
    }
    let (y, mo, d, h, mi, s, t) = civil_from_filetime(ft);
    format!(
        "{:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{t:07}Z",
        y % 10_000
    )
}

/// Parses an RFC 3339 / ISO 8601 UTC time (`2024-03-12T09:14:02.255511Z`, any number
/// of fractional digits, a `Z` or numeric offset) into a FILETIME. Sub-100 ns digits are
/// dropped.
pub fn parse_filetime(s: &str) -> Option<u64> {
    let ts: jiff::Timestamp = s.trim().parse().ok()?;
    timestamp_to_filetime(ts)
}

/// A FILETIME from a timestamp; `None` before 1601.
pub fn timestamp_to_filetime(ts: jiff::Timestamp) -> Option<u64> {
    let secs = ts.as_second().checked_add(FILETIME_UNIX_OFFSET)?;
    let secs = u64::try_from(secs).ok()?;
    let sub = u64::try_from(ts.subsec_nanosecond()).ok()? / 100;
    secs.checked_mul(TICKS_PER_SEC)?.checked_add(sub)
}

/// A timestamp from a FILETIME, when jiff can hold it (years up to 9999).
pub fn filetime_to_timestamp(ft: u64) -> Option<jiff::Timestamp> {
    let secs = i64::try_from(ft / TICKS_PER_SEC).ok()? - FILETIME_UNIX_OFFSET;
    let nanos = ((ft % TICKS_PER_SEC) * 100) as i32;
    jiff::Timestamp::new(secs, nanos).ok()
}

impl Value {
    /// The BinXML value type byte.
    pub fn type_code(&self) -> u8 {
        match self {
            Value::Null => 0x00,
            Value::String(_) => 0x01,
            Value::AnsiString(_) => 0x02,
            Value::I8(_) => 0x03,
            Value::U8(_) => 0x04,
            Value::I16(_) => 0x05,
            Value::U16(_) => 0x06,
            Value::I32(_) => 0x07,
            Value::U32(_) => 0x08,
            Value::I64(_) => 0x09,
            Value::U64(_) => 0x0a,
            Value::F32(_) => 0x0b,
            Value::F64(_) => 0x0c,
            Value::Bool(_) => 0x0d,
            Value::Binary(_) => 0x0e,
            Value::Guid(_) => 0x0f,
            Value::FileTime(_) => 0x11,
            Value::SysTime(_) => 0x12,
            Value::Sid(_) => 0x13,
            Value::Hex32(_) => 0x14,
            Value::Hex64(_) => 0x15,
            Value::Array(items) => 0x80 | items.first().map_or(0x01, Value::type_code),
        }
    }

    /// Whether a reader renders it as a bare JSON number or boolean (not a string).
    pub fn is_json_scalar(&self) -> bool {
        matches!(
            self,
            Value::I8(_)
                | Value::U8(_)
                | Value::I16(_)
                | Value::U16(_)
                | Value::I32(_)
                | Value::U32(_)
                | Value::I64(_)
                | Value::U64(_)
                | Value::Bool(_)
        )
    }

    /// Checks what BinXML can store: ASCII ANSI strings, SIDs of at most 15
    /// sub-authorities with a 48-bit authority, arrays of one scalar type.
    pub fn validate(&self) -> Result<(), Error> {
        match self {
            Value::AnsiString(s) if !s.is_ascii() => Err(Error::InvalidValue(format!(
                "ANSI string is not ASCII: {s:?}"
            ))),
            Value::Sid(sid) if sid.sub_authorities.len() > 15 || sid.authority >= 1 << 48 => {
                Err(Error::InvalidValue(format!("SID out of range: {sid}")))
            }
            Value::Array(items) => {
                let Some(first) = items.first() else {
                    return Ok(());
                };
                let code = first.type_code();
                if matches!(first, Value::Null | Value::Array(_) | Value::Binary(_)) {
                    return Err(Error::InvalidValue(format!(
                        "arrays of type {code:#04x} are not supported"
                    )));
                }
                for item in items {
                    if item.type_code() != code {
                        return Err(Error::InvalidValue("array items of mixed types".into()));
                    }
                    item.validate()?;
                    if let Value::String(s) | Value::AnsiString(s) = item {
                        if s.contains('\0') {
                            return Err(Error::InvalidValue(
                                "array strings cannot contain NUL".into(),
                            ));
                        }
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Appends the value's bytes as a substitution stores them (no size, no type).
    pub fn encode(&self, out: &mut Vec<u8>) {
        match self {
            Value::Null => {}
            Value::String(s) => push_utf16(out, s),
            Value::AnsiString(s) => out.extend_from_slice(s.as_bytes()),
            Value::I8(v) => out.push(*v as u8),
            Value::U8(v) => out.push(*v),
            Value::I16(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::U16(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::I32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::U32(v) | Value::Hex32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::I64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::U64(v) | Value::Hex64(v) | Value::FileTime(v) => {
                out.extend_from_slice(&v.to_le_bytes())
            }
            Value::F32(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::F64(v) => out.extend_from_slice(&v.to_le_bytes()),
            Value::Bool(v) => out.extend_from_slice(&i32::from(*v).to_le_bytes()),
            Value::Binary(b) => out.extend_from_slice(b),
            Value::Guid(g) => out.extend_from_slice(&g.0),
            Value::SysTime(t) => {
                for f in [
                    t.year,
                    t.month,
                    t.day_of_week,
                    t.day,
                    t.hour,
                    t.minute,
                    t.second,
                    t.milliseconds,
                ] {
                    out.extend_from_slice(&f.to_le_bytes());
                }
            }
            Value::Sid(sid) => {
                out.push(sid.revision);
                out.push(sid.sub_authorities.len() as u8);
                out.extend_from_slice(&sid.authority.to_be_bytes()[2..]);
                for s in &sid.sub_authorities {
                    out.extend_from_slice(&s.to_le_bytes());
                }
            }
            Value::Array(items) => {
                for item in items {
                    item.encode(out);
                    if matches!(item, Value::String(_)) {
                        out.extend_from_slice(&[0, 0]);
                    } else if matches!(item, Value::AnsiString(_)) {
                        out.push(0);
                    }
                }
            }
        }
    }

    /// The text a reader renders for it (XML text; JSON strings hold the same text).
    /// An array renders as its items joined by commas.
    pub fn render(&self) -> String {
        match self {
            Value::Null => String::new(),
            Value::String(s) | Value::AnsiString(s) => s.clone(),
            Value::I8(v) => v.to_string(),
            Value::U8(v) => v.to_string(),
            Value::I16(v) => v.to_string(),
            Value::U16(v) => v.to_string(),
            Value::I32(v) => v.to_string(),
            Value::U32(v) => v.to_string(),
            Value::I64(v) => v.to_string(),
            Value::U64(v) => v.to_string(),
            Value::F32(v) => v.to_string(),
            Value::F64(v) => v.to_string(),
            Value::Bool(v) => v.to_string(),
            Value::Binary(b) => b
                .iter()
                .fold(String::with_capacity(b.len() * 2), |mut s, x| {
                    let _ = write!(s, "{x:02X}");
                    s
                }),
            Value::Guid(g) => g.to_string(),
            Value::FileTime(ft) => format_filetime(*ft),
            Value::SysTime(t) => {
                if t.is_valid() {
                    format!(
                        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:07}Z",
                        t.year % 10_000,
                        t.month,
                        t.day,
                        t.hour,
                        t.minute,
                        t.second,
                        u32::from(t.milliseconds) * 10_000
                    )
                } else {
                    "1601-01-01T00:00:00.0000000Z".to_owned()
                }
            }
            Value::Sid(sid) => sid.to_string(),
            Value::Hex32(v) => format!("{v:#x}"),
            Value::Hex64(v) => format!("{v:#x}"),
            Value::Array(items) => items
                .iter()
                .map(Value::render)
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// The JSON value a reader renders for it: integers and booleans bare, arrays of
    /// two or more items as arrays, everything else (floats too) as its text.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as J;
        match self {
            Value::Null => J::Null,
            Value::I8(v) => J::from(*v),
            Value::U8(v) => J::from(*v),
            Value::I16(v) => J::from(*v),
            Value::U16(v) => J::from(*v),
            Value::I32(v) => J::from(*v),
            Value::U32(v) => J::from(*v),
            Value::I64(v) => J::from(*v),
            Value::U64(v) => J::from(*v),
            Value::Bool(v) => J::Bool(*v),
            // A one-item array reads back as that item's text.
            Value::Array(items) if items.len() == 1 => J::String(items[0].render()),
            Value::Array(items) => J::Array(items.iter().map(Value::to_json).collect()),
            other => J::String(other.render()),
        }
    }
}

/// Appends `s` as UTF-16LE code units, without a terminator.
pub(crate) fn push_utf16(out: &mut Vec<u8>, s: &str) {
    for u in s.encode_utf16() {
        out.extend_from_slice(&u.to_le_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guid_parses_and_renders_lowercase() {
        let g = Guid::parse("{54849625-5478-4994-A5BA-3E3B0328C30D}").unwrap();
        assert_eq!(g.0[0], 0x25);
        assert_eq!(g.to_string(), "{54849625-5478-4994-a5ba-3e3b0328c30d}");
        assert!(Guid::parse("{5484962-5478-4994-A5BA-3E3B0328C30D}").is_none());
        assert!(Guid::parse("{+4849625-5478-4994-A5BA-3E3B0328C30D}").is_none());
    }

    #[test]
    fn sid_round_trips() {
        for s in [
            "S-1-5-18",
            "S-1-5-21-3623811015-3361044348-30300820-1107",
            "S-1-0-0",
        ] {
            assert_eq!(Sid::parse(s).unwrap().to_string(), s);
        }
        assert!(Sid::parse("S-1-5-x").is_none());
        assert!(Sid::parse("S-1").is_none());
        assert!(Sid::parse("S-1-281474976710656").is_none());
    }

    #[test]
    fn filetime_round_trips() {
        let ft = parse_filetime("2024-03-12T09:14:02.255511Z").unwrap();
        assert_eq!(format_filetime(ft), "2024-03-12T09:14:02.2555110Z");
        assert_eq!(
            filetime_to_timestamp(ft).unwrap().to_string(),
            "2024-03-12T09:14:02.255511Z"
        );
        assert_eq!(format_filetime(0), "1601-01-01T00:00:00.0000000Z");
        assert!(parse_filetime("yesterday").is_none());
        let st = SysTime::parse("2024-03-12T09:14:02.250Z").unwrap();
        assert_eq!(st.day_of_week, 2);
        assert_eq!(Value::SysTime(st).render(), "2024-03-12T09:14:02.2500000Z");
        assert!(SysTime::parse("2024-03-12T09:14:02.2501Z").is_none());
    }

    #[test]
    fn arrays_validate() {
        assert!(Value::Array(vec![Value::U8(1), Value::U16(2)])
            .validate()
            .is_err());
        assert!(Value::Array(vec![Value::Binary(vec![])])
            .validate()
            .is_err());
        assert!(Value::Array(vec![Value::String("a\0".into())])
            .validate()
            .is_err());
        assert!(Value::AnsiString("é".into()).validate().is_err());
        assert!(Value::Array(vec![Value::U8(1), Value::U8(2)])
            .validate()
            .is_ok());
    }
}
