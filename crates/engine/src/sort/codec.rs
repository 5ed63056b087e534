//! The binary form of a [`DetectInfo`] in a spilled run: a flags byte, the time as
//! seconds and nanoseconds, the rule index and the origin as little-endian numbers, then
//! each string as a LEB128 length and its UTF-8 bytes. Only this process reads it back,
//! but every read is checked: a damaged run gives an error, never a panic or a bad row.

use crate::row::{DetectInfo, Origin};
use compact_str::CompactString;
use jiff::Timestamp;
use std::io::{self, Read, Write};

const CORRELATION: u8 = 1;
const RECOVERED: u8 = 2;
const CORRELATION_ORIGIN: u8 = 4;
const EXTRA: u8 = 8;
const ALL_FIELDS: u8 = 16;
const KNOWN: u8 = CORRELATION | RECOVERED | CORRELATION_ORIGIN | EXTRA | ALL_FIELDS;

/// Strings up to this length are read into a buffer sized at once; longer ones grow as
/// bytes arrive, so a damaged length cannot ask for a huge allocation.
const PREALLOCATE: usize = 1 << 20;

fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

fn put_len(w: &mut impl Write, mut n: u64) -> io::Result<()> {
    let mut buf = [0u8; 10];
    let mut i = 0;
    loop {
        let byte = (n & 0x7f) as u8;
        n >>= 7;
        if n == 0 {
            buf[i] = byte;
            i += 1;
            break;
        }
        buf[i] = byte | 0x80;
        i += 1;
    }
    w.write_all(&buf[..i])
}

fn put_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    put_len(w, s.len() as u64)?;
    w.write_all(s.as_bytes())
}

/// Writes `r` to `w`.
pub fn encode(r: &DetectInfo, w: &mut impl Write) -> io::Result<()> {
    let mut flags = 0;
    for (on, bit) in [
        (r.correlation, CORRELATION),
        (r.recovered, RECOVERED),
        (
            matches!(r.origin, Origin::Correlation { .. }),
            CORRELATION_ORIGIN,
        ),
        (r.extra.is_some(), EXTRA),
        (r.all_fields.is_some(), ALL_FIELDS),
    ] {
        if on {
            flags |= bit;
        }
    }
    w.write_all(&[flags])?;
    w.write_all(&r.time.as_second().to_le_bytes())?;
    w.write_all(&r.time.subsec_nanosecond().to_le_bytes())?;
    w.write_all(&r.rule.to_le_bytes())?;
    match &r.origin {
        Origin::Record { file, record_id } => {
            w.write_all(&file.to_le_bytes())?;
            w.write_all(&record_id.to_le_bytes())?;
        }
        Origin::Correlation { files } => put_str(w, files)?,
    }
    for s in [&r.computer, &r.channel, &r.event_id, &r.provider] {
        put_str(w, s)?;
    }
    put_str(w, &r.details)?;
    for s in [&r.extra, &r.all_fields].into_iter().flatten() {
        put_str(w, s)?;
    }
    Ok(())
}

fn get<const N: usize>(r: &mut impl Read) -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

fn get_len(r: &mut impl Read) -> io::Result<usize> {
    let mut n: u64 = 0;
    for shift in (0..64).step_by(7) {
        let [byte] = get::<1>(r)?;
        n |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return usize::try_from(n).map_err(|_| invalid("string length out of range"));
        }
    }
    Err(invalid("string length out of range"))
}

/// Reads `len` bytes: into a buffer sized at once up to [`PREALLOCATE`], past it into one
/// that grows as bytes arrive.
fn get_bytes(r: &mut impl Read, len: usize) -> io::Result<Vec<u8>> {
    if len <= PREALLOCATE {
        let mut bytes = vec![0; len];
        r.read_exact(&mut bytes)?;
        return Ok(bytes);
    }
    let mut bytes = Vec::with_capacity(PREALLOCATE);
    r.take(len as u64).read_to_end(&mut bytes)?;
    if bytes.len() != len {
        return Err(io::ErrorKind::UnexpectedEof.into());
    }
    Ok(bytes)
}

fn get_string(r: &mut impl Read) -> io::Result<String> {
    let len = get_len(r)?;
    get_string_of(r, len)
}

fn get_compact(r: &mut impl Read) -> io::Result<CompactString> {
    let len = get_len(r)?;
    // Short strings (most computers, channels, event ids) stay inline: no allocation.
    let mut small = [0u8; 24];
    if len <= small.len() {
        r.read_exact(&mut small[..len])?;
        let s = std::str::from_utf8(&small[..len]).map_err(|_| invalid("a string is not UTF-8"))?;
        return Ok(CompactString::from(s));
    }
    // A longer one keeps the buffer it was read into.
    Ok(CompactString::from(get_string_of(r, len)?))
}

fn get_string_of(r: &mut impl Read, len: usize) -> io::Result<String> {
    String::from_utf8(get_bytes(r, len)?).map_err(|_| invalid("a string is not UTF-8"))
}

/// Reads one row written by [`encode`].
pub fn decode(r: &mut impl Read) -> io::Result<DetectInfo> {
    let [flags] = get::<1>(r)?;
    if flags & !KNOWN != 0 {
        return Err(invalid("unknown row flags"));
    }
    let secs = i64::from_le_bytes(get(r)?);
    let nanos = i32::from_le_bytes(get(r)?);
    let time = Timestamp::new(secs, nanos).map_err(|_| invalid("time out of range"))?;
    let rule = u32::from_le_bytes(get(r)?);
    let origin = if flags & CORRELATION_ORIGIN != 0 {
        Origin::Correlation {
            files: get_string(r)?.into_boxed_str(),
        }
    } else {
        Origin::Record {
            file: u32::from_le_bytes(get(r)?),
            record_id: u64::from_le_bytes(get(r)?),
        }
    };
    let computer = get_compact(r)?;
    let channel = get_compact(r)?;
    let event_id = get_compact(r)?;
    let provider = get_compact(r)?;
    let details = get_string(r)?.into_boxed_str();
    let extra = match flags & EXTRA {
        0 => None,
        _ => Some(get_string(r)?.into_boxed_str()),
    };
    let all_fields = match flags & ALL_FIELDS {
        0 => None,
        _ => Some(get_string(r)?.into_boxed_str()),
    };
    Ok(DetectInfo {
        time,
        rule,
        correlation: flags & CORRELATION != 0,
        recovered: flags & RECOVERED != 0,
        origin,
        computer,
        channel,
        event_id,
        provider,
        details,
        extra,
        all_fields,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(origin: Origin) -> DetectInfo {
        DetectInfo {
            time: Timestamp::new(1_700_000_000, 123_456_789).unwrap(),
            rule: 7,
            correlation: false,
            recovered: false,
            origin,
            computer: "WS01.corp.example".into(),
            channel: "Microsoft-Windows-Sysmon/Operational".into(),
            event_id: "1".into(),
            provider: "Microsoft-Windows-Sysmon".into(),
            details: "Cmdline: whoami ¦ PID: 0x1fc".into(),
            extra: None,
            all_fields: None,
        }
    }

    /// Every field compared, through the output-visible order and the Debug form.
    fn same(a: &DetectInfo, b: &DetectInfo) -> bool {
        a.timeline_cmp(b).is_eq()
            && a.time == b.time
            && a.rule == b.rule
            && a.correlation == b.correlation
            && a.origin == b.origin
            && format!("{a:?}") == format!("{b:?}")
    }

    fn round_trip(rows: &[DetectInfo]) {
        let mut buf = Vec::new();
        for r in rows {
            encode(r, &mut buf).unwrap();
        }
        let mut rd = &buf[..];
        for r in rows {
            let back = decode(&mut rd).unwrap();
            assert!(same(r, &back), "{r:?}\n{back:?}");
        }
        assert!(rd.is_empty());
    }

    #[test]
    fn every_field_variant_round_trips() {
        let plain = row(Origin::Record {
            file: 3,
            record_id: u64::MAX,
        });
        let mut full = row(Origin::Record {
            file: u32::MAX,
            record_id: 0,
        });
        full.recovered = true;
        full.extra = Some("ParentImage: C:\\Windows\\explorer.exe".into());
        full.all_fields = Some("".into());
        full.computer = "ホスト-名前-とても長いコンピューター名.example.jp".into();
        full.details = "Ünïcödé ¦ 😀 ¦ \0 ¦ \r\n".into();
        let mut corr = row(Origin::Correlation {
            files: "a.evtx ¦ b/ç.evtx".into(),
        });
        corr.correlation = true;
        corr.provider = "-".into();
        corr.event_id = "".into();
        corr.time = Timestamp::new(-1, -5).unwrap();
        corr.extra = Some("-".into());
        let mut long = row(Origin::Correlation { files: "".into() });
        long.details = "x".repeat(300_000).into();
        long.all_fields = Some("y: z ".repeat(40_000).into());
        long.time = Timestamp::MAX;
        let mut min = plain.clone();
        min.time = Timestamp::MIN;
        round_trip(&[plain, full, corr, long, min]);
    }

    #[test]
    fn damaged_input_is_an_error_not_a_panic() {
        let mut buf = Vec::new();
        let mut r = row(Origin::Record {
            file: 1,
            record_id: 2,
        });
        r.extra = Some("e".into());
        encode(&r, &mut buf).unwrap();
        // Every truncation fails cleanly.
        for cut in 0..buf.len() {
            assert!(decode(&mut &buf[..cut]).is_err(), "cut at {cut}");
        }
        // Every single-byte change either fails or still gives some row.
        for i in 0..buf.len() {
            for v in [0x00, 0x7f, 0x80, 0xff] {
                let mut b = buf.clone();
                b[i] = v;
                let _ = decode(&mut &b[..]);
            }
        }
        // A huge length claimed by a short input.
        let mut b = buf[..1 + 8 + 4 + 4 + 4 + 8].to_vec();
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]);
        assert!(decode(&mut &b[..]).is_err());
        // Unknown flags and bad UTF-8.
        let mut b = buf.clone();
        b[0] = 0x80;
        assert!(decode(&mut &b[..]).is_err());
        let at = buf.iter().position(|&c| c == b'W').unwrap();
        let mut b = buf.clone();
        b[at] = 0xff;
        assert_eq!(
            decode(&mut &b[..]).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }
}
