//! The text the `evtx` crate's JSON rendering gives each BinXML substitution value type
//! (numbers, booleans, hex, binary, GUIDs, SIDs, FILETIME and SYSTEMTIME), written
//! without `fmt` into a reused buffer, for the typed record path ([`super::typed`]).
//! Types it does not reproduce exactly (floats, arrays, handles) are left to JSON.

use super::template;

/// Appends the text the crate renders for a substitution value of type `ty` stored in
/// `b` (unescaped); `Some(null)`, or `None` for a value the typed path leaves to JSON
/// (floats, arrays, handles, sizes other than the type's, non-ASCII ANSI text).
pub(crate) fn format_raw(ty: u8, b: &[u8], out: &mut String) -> Option<bool> {
    let fixed = |n: usize| (b.len() == n).then_some(());
    let le64 = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let le32 = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    let le16 = |b: &[u8]| u16::from_le_bytes(b.try_into().expect("2 bytes"));
    match ty {
        0x00 => return Some(true),
        0x21 if b.is_empty() => return Some(true),
        0x01 => {
            if b.len() % 2 != 0 {
                return None;
            }
            template::decode_utf16(b, out)?;
        }
        0x02 => {
            if !b.is_ascii() {
                return None;
            }
            let text = b.iter().filter(|&&c| c != 0).map(|&c| c as char);
            out.extend(text);
        }
        0x03 => push_num(out, fixed(1).map(|_| b[0] as i8)?),
        0x04 => push_num(out, fixed(1).map(|_| b[0])?),
        0x05 => push_num(out, fixed(2).map(|_| le16(b) as i16)?),
        0x06 => push_num(out, fixed(2).map(|_| le16(b))?),
        0x07 => push_num(out, fixed(4).map(|_| le32(b) as i32)?),
        0x08 => push_num(out, fixed(4).map(|_| le32(b))?),
        0x09 => push_num(out, fixed(8).map(|_| le64(b) as i64)?),
        0x0a => push_num(out, fixed(8).map(|_| le64(b))?),
        0x0d => match fixed(4).map(|_| le32(b) as i32)? {
            0 => out.push_str("false"),
            1 => out.push_str("true"),
            n => push_num(out, n),
        },
        0x0e => {
            for &byte in b {
                push_hex_byte(out, byte, UPPER_HEX);
            }
        }
        0x0f => push_guid(out, b.try_into().ok()?),
        0x10 if b.len() == 4 => push_hex(out, u64::from(le32(b))),
        0x10 | 0x15 => push_hex(out, fixed(8).map(|_| le64(b))?),
        0x14 => push_hex(out, u64::from(fixed(4).map(|_| le32(b))?)),
        0x11 => push_filetime(out, fixed(8).map(|_| le64(b))?),
        0x12 => push_systime(out, b.try_into().ok()?),
        0x13 => {
            fixed(8 + 4 * *b.get(1)? as usize)?;
            push_sid(out, b);
        }
        _ => return None,
    }
    Some(false)
}

fn push_hex(out: &mut String, n: u64) {
    let digits = (64 - n.leading_zeros()).div_ceil(4).max(1) as usize;
    let mut b = *b"0x0000000000000000";
    for (i, d) in b[2..2 + digits].iter_mut().rev().enumerate() {
        *d = LOWER_HEX[(n >> (4 * i)) as usize & 0xf];
    }
    out.push_str(std::str::from_utf8(&b[..2 + digits]).expect("ASCII"));
}

const LOWER_HEX: &[u8; 16] = b"0123456789abcdef";
const UPPER_HEX: &[u8; 16] = b"0123456789ABCDEF";

/// The two hex digits of `b`, from the table `digits`.
fn hex_pair(b: u8, digits: &[u8; 16]) -> [u8; 2] {
    [digits[usize::from(b >> 4)], digits[usize::from(b & 0xf)]]
}

fn push_hex_byte(out: &mut String, b: u8, digits: &[u8; 16]) {
    for d in hex_pair(b, digits) {
        out.push(char::from(d));
    }
}

/// A SYSTEMTIME as the crate writes it: an invalid one as 1601-01-01.
fn push_systime(out: &mut String, b: &[u8; 16]) {
    let f: [u16; 8] = std::array::from_fn(|i| u16::from_le_bytes([b[2 * i], b[2 * i + 1]]));
    let [year, month, _, day, hour, minute, second, ms] = f;
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    let valid = (1601..=30827).contains(&year)
        && (1..=12).contains(&month)
        && (1..=month_days).contains(&day)
        && hour < 24
        && minute < 60
        && second < 60
        && ms < 1000;
    if valid {
        let f = [year % 10_000, month, day, hour, minute, second];
        push_datetime(out, f, u32::from(ms) * 10_000);
    } else {
        push_datetime(out, [1601, 1, 1, 0, 0, 0], 0);
    }
}

/// Appends an integer in decimal.
fn push_num(out: &mut String, n: impl Into<i128>) {
    let n: i128 = n.into();
    if n < 0 {
        out.push('-');
    }
    push_padded(out, n.unsigned_abs() as u64, 1);
}

/// Appends `v` in decimal, zero-padded to `width` digits (more when it needs them).
pub fn push_padded(out: &mut String, v: u64, width: usize) {
    let mut buf = itoa::Buffer::new();
    let digits = buf.format(v);
    for _ in digits.len()..width {
        out.push('0');
    }
    out.push_str(digits);
}

/// `{d1-d2-d3-d4a-d4b}` in lowercase hex, the first three fields little-endian.
fn push_guid(out: &mut String, g: &[u8; 16]) {
    // Byte order of the text: the first three fields little-endian.
    const ORDER: [usize; 16] = [3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15];
    let mut text = *b"{00000000-0000-0000-0000-000000000000}";
    let mut at = 1;
    for (i, &byte) in ORDER.iter().map(|&o| &g[o]).enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            at += 1;
        }
        text[at..at + 2].copy_from_slice(&hex_pair(byte, LOWER_HEX));
        at += 2;
    }
    out.push_str(std::str::from_utf8(&text).expect("ASCII"));
}

/// `S-R-A-S1-…`: revision, 48-bit big-endian authority, little-endian sub-authorities.
fn push_sid(out: &mut String, b: &[u8]) {
    if b.len() < 8 {
        out.push_str("S-?");
        return;
    }
    let authority = b[2..8].iter().fold(0u64, |a, &x| a << 8 | u64::from(x));
    out.push_str("S-");
    push_num(out, b[0]);
    out.push('-');
    push_num(out, authority);
    for sub in b[8..].chunks_exact(4).take(b[1] as usize) {
        out.push('-');
        push_num(out, u32::from_le_bytes([sub[0], sub[1], sub[2], sub[3]]));
    }
}

const TICKS_PER_SECOND: u64 = 10_000_000;
const TICKS_PER_DAY: u64 = 86_400 * TICKS_PER_SECOND;

/// A FILETIME as the crate writes it: seven fractional digits, years modulo 10000, and
/// zeros past `i64::MAX`.
fn push_filetime(out: &mut String, ft: u64) {
    if ft > i64::MAX as u64 {
        push_datetime(out, [0; 6], 0);
        return;
    }
    let (days, ticks) = (ft / TICKS_PER_DAY, ft % TICKS_PER_DAY);
    let (y, m, d) = date_of_day(days);
    let secs = ticks / TICKS_PER_SECOND;
    let f = [
        (y % 10_000) as u16,
        m,
        d,
        (secs / 3600) as u16,
        (secs / 60 % 60) as u16,
        (secs % 60) as u16,
    ];
    push_datetime(out, f, (ticks % TICKS_PER_SECOND) as u32);
}

/// The Gregorian (year, month, day) `days` after 1601-01-01.
fn date_of_day(days: u64) -> (u64, u16, u16) {
    // Count from 1600-03-01, so that leap days end each 400-year cycle's years.
    let from_march = days + 306;
    let (cycle, mut rest) = (from_march / 146_097, from_march % 146_097);
    let centuries = (rest / 36_524).min(3);
    rest -= centuries * 36_524;
    let quads = rest / 1461;
    rest -= quads * 1461;
    let years = (rest / 365).min(3);
    let day_of_year = rest - years * 365;
    let year_from_march = 1600 + cycle * 400 + centuries * 100 + quads * 4 + years;
    // Months from March: 31,30,31,30,31,31,30,31,30,31,31,29.
    let month_index = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_index + 2) / 5 + 1;
    let (month, year) = if month_index < 10 {
        (month_index + 3, year_from_march)
    } else {
        (month_index - 9, year_from_march + 1)
    };
    (year, month as u16, day as u16)
}

/// `YYYY-MM-DDThh:mm:ss.fffffffZ`.
fn push_datetime(out: &mut String, f: [u16; 6], ticks: u32) {
    let mut b = *b"0000-00-00T00:00:00.0000000Z";
    let mut put = |at: std::ops::Range<usize>, mut v: u32| {
        for d in b[at].iter_mut().rev() {
            *d = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0..4, u32::from(f[0]));
    put(5..7, u32::from(f[1]));
    put(8..10, u32::from(f[2]));
    put(11..13, u32::from(f[3]));
    put(14..16, u32::from(f[4]));
    put(17..19, u32::from(f[5]));
    put(20..27, ticks);
    out.push_str(std::str::from_utf8(&b).expect("ASCII"));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filetimes_format_as_the_crate_does() {
        let mut s = String::new();
        push_filetime(&mut s, 0);
        assert_eq!(s, "1601-01-01T00:00:00.0000000Z");
        // Check days against jiff over a long range.
        for days in (0..3_000_000u64)
            .step_by(997)
            .chain([59, 60, 365, 366, 146_096])
        {
            let ft = days * TICKS_PER_DAY + 12_345_678;
            s.clear();
            push_filetime(&mut s, ft);
            let secs = (ft / TICKS_PER_SECOND) as i64 - 11_644_473_600;
            let Ok(ts) = jiff::Timestamp::new(secs, 0) else {
                continue;
            };
            let want = ts.strftime("%Y-%m-%dT%H:%M:%S").to_string();
            assert_eq!(&s[..19], want, "days {days}");
            assert_eq!(&s[19..], ".2345678Z");
        }
        s.clear();
        push_filetime(&mut s, u64::MAX);
        assert_eq!(s, "0000-00-00T00:00:00.0000000Z");
    }

    #[test]
    fn guids_and_sids_format_as_the_crate_does() {
        let mut s = String::new();
        let g: [u8; 16] = std::array::from_fn(|i| i as u8 * 17);
        push_guid(&mut s, &g);
        let v = evtx::binxml::value_variant::BinXmlValue::GuidType(g);
        assert_eq!(s, v.to_string());
        s.clear();
        push_sid(
            &mut s,
            &[1, 2, 0, 0, 0, 0, 0, 5, 32, 0, 0, 0, 0x20, 2, 0, 0],
        );
        assert_eq!(s, "S-1-5-32-544");
    }

    #[test]
    fn numbers_and_hex_format_as_fmt_does() {
        let mut s = String::new();
        let values = (0..64).flat_map(|b| [1u64 << b, (1u64 << b) - 1, (1u64 << b) + 1]);
        for v in values.chain([0, 9, 10, 99, 100, u64::MAX]) {
            s.clear();
            push_hex(&mut s, v);
            assert_eq!(s, format!("0x{v:x}"));
            for width in [1, 2, 4, 7] {
                s.clear();
                push_padded(&mut s, v, width);
                assert_eq!(s, format!("{v:0width$}"));
            }
            s.clear();
            push_num(&mut s, v as i64);
            assert_eq!(s, (v as i64).to_string());
        }
    }
}
