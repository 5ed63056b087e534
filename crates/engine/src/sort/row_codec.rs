//! The timeline rows' side of the spill store ([`RowCodec`]): their order
//! ([`DetectInfo::timeline_cmp`], a batch sorted by key in [`crate::sort::by_key`]) and
//! their binary form in a run: a flags byte, the time as seconds and nanoseconds, the
//! rule index and the origin as little-endian numbers, then each string as a LEB128
//! length and its UTF-8 bytes (the primitives of [`crate::sort::codec`]).

use crate::row::{DetectInfo, Origin};
use crate::sort::by_key;
use crate::sort::codec::{
    get, get_compact, get_string, get_time, invalid, put_str, put_time, SpillCodec,
};
use std::cmp::Ordering;
use std::io::{self, Read, Write};

const CORRELATION: u8 = 1;
const RECOVERED: u8 = 2;
const CORRELATION_ORIGIN: u8 = 4;
const EXTRA: u8 = 8;
const ALL_FIELDS: u8 = 16;
const KNOWN: u8 = CORRELATION | RECOVERED | CORRELATION_ORIGIN | EXTRA | ALL_FIELDS;

/// Timeline rows in a spill store, in timeline order.
#[derive(Debug, Default)]
pub struct RowCodec;

impl SpillCodec for RowCodec {
    type Item = DetectInfo;
    /// Rows need nothing beside themselves to be ordered.
    type Key = ();

    const HOLDS: &'static str = "sorted detections";
    const READ_BACK: &'static str = "spilled detections";

    fn run_name(n: u64) -> String {
        n.to_string()
    }

    fn approx_bytes(row: &DetectInfo) -> usize {
        row.approx_bytes()
    }

    fn key(&self, _: &DetectInfo) {}

    fn cmp((): (), a: &DetectInfo, (): (), b: &DetectInfo) -> Ordering {
        a.timeline_cmp(b)
    }

    fn sort(&self, rows: &mut [DetectInfo], parallel: bool) {
        by_key::sort_rows(rows, parallel);
    }

    fn encode<W: Write>(r: &DetectInfo, w: &mut W) -> io::Result<()> {
        encode(r, w)
    }

    fn decode<R: Read>(r: &mut R) -> io::Result<DetectInfo> {
        decode(r)
    }
}

/// Writes `r` to `w`.
fn encode(r: &DetectInfo, w: &mut impl Write) -> io::Result<()> {
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
    put_time(w, r.time)?;
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

/// Reads one row written by [`encode`].
fn decode(r: &mut impl Read) -> io::Result<DetectInfo> {
    let [flags] = get::<1>(r)?;
    if flags & !KNOWN != 0 {
        return Err(invalid("unknown row flags"));
    }
    let time = get_time(r)?;
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
    use jiff::Timestamp;

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
