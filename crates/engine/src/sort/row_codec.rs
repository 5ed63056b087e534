//! The timeline rows' side of the spill store ([`RowCodec`]): their order
//! ([`DetectInfo::timeline_cmp`], a batch sorted by key in [`crate::sort::by_key`]) and
//! their binary form in a run: a flags byte, the time as seconds and nanoseconds, the
//! rule index and a record's origin as little-endian numbers, then each string as a
//! LEB128 length and its UTF-8 bytes (the primitives of [`crate::sort::codec`]). A cell
//! of items is its text, then the number of items and, for each, where its label ends
//! and its length (LEB128, from the item's start); a correlation's origin is its file
//! indices (a count, then each as LEB128) and its three lists as cells.

use crate::items::{ItemEnd, Items};
use crate::row::{CorrelationOrigin, DetectInfo, GeoAddrs, Origin, RuleRef};
use crate::sort::by_key;
use crate::sort::codec::{
    get, get_compact, get_len, get_string, get_time, invalid, put_len, put_str, put_time,
    SpillCodec,
};
use std::cmp::Ordering;
use std::io::{self, Read, Write};

const CORRELATION: u8 = 1;
const RECOVERED: u8 = 2;
const CORRELATION_ORIGIN: u8 = 4;
const EXTRA: u8 = 8;
const ALL_FIELDS: u8 = 16;
const GEO_SRC: u8 = 32;
const GEO_TGT: u8 = 64;
/// The rule is an integrity finding's ([`RuleRef::Integrity`]), by its index.
const INTEGRITY: u8 = 128;

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

/// Writes a cell of items.
fn put_items(w: &mut impl Write, items: &Items) -> io::Result<()> {
    put_str(w, items.text())?;
    put_len(w, items.len() as u64)?;
    let mut start = 0;
    for e in items.ends() {
        put_len(w, u64::from(e.label() - start))?;
        put_len(w, u64::from(e.end() - start))?;
        start = e.end();
    }
    Ok(())
}

/// Reads a cell written by [`put_items`]; ends out of place are an error.
fn get_items(r: &mut impl Read) -> io::Result<Items> {
    let text = get_string(r)?;
    let n = get_len(r)?;
    let bad = || invalid("item ends out of place");
    // Each item takes two bytes at least: a damaged count fails as the input ends.
    let mut ends = Vec::with_capacity(n.min(1024));
    let mut start: u32 = 0;
    for _ in 0..n {
        let label = u32::try_from(get_len(r)?).map_err(|_| bad())?;
        let len = u32::try_from(get_len(r)?).map_err(|_| bad())?;
        if label > len {
            return Err(bad());
        }
        let end = start.checked_add(len).ok_or_else(bad)?;
        ends.push(ItemEnd::new(start + label, end));
        start = end;
    }
    Items::from_parts(text, ends).ok_or_else(bad)
}

/// Writes `r` to `w`.
fn encode(r: &DetectInfo, w: &mut impl Write) -> io::Result<()> {
    let mut flags = 0;
    for (on, bit) in [
        (matches!(r.rule, RuleRef::Correlation(_)), CORRELATION),
        (matches!(r.rule, RuleRef::Integrity(_)), INTEGRITY),
        (r.recovered, RECOVERED),
        (
            matches!(r.origin, Origin::Correlation(_)),
            CORRELATION_ORIGIN,
        ),
        (r.extra.is_some(), EXTRA),
        (r.all_fields.is_some(), ALL_FIELDS),
        (r.geo.as_ref().is_some_and(|g| g.src.is_some()), GEO_SRC),
        (r.geo.as_ref().is_some_and(|g| g.tgt.is_some()), GEO_TGT),
    ] {
        if on {
            flags |= bit;
        }
    }
    w.write_all(&[flags])?;
    put_time(w, r.time)?;
    w.write_all(&r.rule.index().to_le_bytes())?;
    match &r.origin {
        Origin::Record { file, record_id } => {
            w.write_all(&file.to_le_bytes())?;
            w.write_all(&record_id.to_le_bytes())?;
        }
        Origin::Correlation(c) => {
            put_len(w, c.files.len() as u64)?;
            for &f in &c.files {
                put_len(w, u64::from(f))?;
            }
            for list in [&c.computers, &c.channels, &c.event_ids] {
                put_items(w, list)?;
            }
        }
    }
    for s in [&r.computer, &r.channel, &r.event_id, &r.provider] {
        put_str(w, s)?;
    }
    put_items(w, &r.details)?;
    for s in [&r.extra, &r.all_fields].into_iter().flatten() {
        put_items(w, s)?;
    }
    if let Some(g) = &r.geo {
        for s in [&g.src, &g.tgt].into_iter().flatten() {
            put_str(w, s)?;
        }
    }
    Ok(())
}

/// Reads a correlation's origin written by [`encode`].
fn get_origin(r: &mut impl Read) -> io::Result<CorrelationOrigin> {
    let n = get_len(r)?;
    let mut files = Vec::with_capacity(n.min(1024));
    for _ in 0..n {
        files.push(u32::try_from(get_len(r)?).map_err(|_| invalid("file index out of range"))?);
    }
    Ok(CorrelationOrigin {
        files: files.into(),
        computers: get_items(r)?,
        channels: get_items(r)?,
        event_ids: get_items(r)?,
    })
}

/// Reads one row written by [`encode`].
fn decode(r: &mut impl Read) -> io::Result<DetectInfo> {
    // Every bit of the flags byte is one of the flags above.
    let [flags] = get::<1>(r)?;
    if flags & INTEGRITY != 0 && flags & (CORRELATION | CORRELATION_ORIGIN) != 0 {
        return Err(invalid("an integrity row flagged a correlation"));
    }
    let time = get_time(r)?;
    let index = u32::from_le_bytes(get(r)?);
    let rule = if flags & INTEGRITY != 0 {
        let r = crate::IntegrityRule::from_index(index);
        RuleRef::Integrity(r.ok_or_else(|| invalid("integrity rule out of range"))?)
    } else if flags & CORRELATION != 0 {
        RuleRef::Correlation(index)
    } else {
        RuleRef::Rule(index)
    };
    let origin = if flags & CORRELATION_ORIGIN != 0 {
        Origin::Correlation(Box::new(get_origin(r)?))
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
    let details = get_items(r)?;
    let extra = match flags & EXTRA {
        0 => None,
        _ => Some(get_items(r)?),
    };
    let all_fields = match flags & ALL_FIELDS {
        0 => None,
        _ => Some(get_items(r)?),
    };
    let mut address = |bit: u8| match flags & bit {
        0 => Ok(None),
        _ => get_compact(r).map(Some),
    };
    let (src, tgt) = (address(GEO_SRC)?, address(GEO_TGT)?);
    let geo = (src.is_some() || tgt.is_some()).then(|| Box::new(GeoAddrs { src, tgt }));
    Ok(DetectInfo {
        time,
        rule,
        recovered: flags & RECOVERED != 0,
        origin,
        computer,
        channel,
        event_id,
        provider,
        details,
        extra,
        all_fields,
        geo,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::Timestamp;

    fn row(origin: Origin) -> DetectInfo {
        DetectInfo {
            time: Timestamp::new(1_700_000_000, 123_456_789).unwrap(),
            rule: RuleRef::Rule(7),
            recovered: false,
            origin,
            computer: "WS01.corp.example".into(),
            channel: "Microsoft-Windows-Sysmon/Operational".into(),
            event_id: "1".into(),
            provider: "Microsoft-Windows-Sysmon".into(),
            details: Items::of(["Cmdline: whoami", "PID: 0x1fc"]),
            extra: None,
            all_fields: None,
            geo: None,
        }
    }

    /// Every field compared, through the output-visible order and the Debug form.
    fn same(a: &DetectInfo, b: &DetectInfo) -> bool {
        a.timeline_cmp(b).is_eq()
            && a.time == b.time
            && a.rule == b.rule
            && a.origin == b.origin
            && a.details == b.details
            && a.extra == b.extra
            && a.all_fields == b.all_fields
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
        full.extra = Some(Items::of(["ParentImage: C:\\Windows\\explorer.exe"]));
        full.all_fields = Some(Items::of([""]));
        full.computer = "ホスト-名前-とても長いコンピューター名.example.jp".into();
        full.details = Items::of(["Ünïcödé", "😀: ü", "\0", "", "\r\n:"]);
        let mut corr = row(Origin::Correlation(Box::new(CorrelationOrigin {
            files: [0, 7, u32::MAX].into(),
            computers: Items::of(["DC01", "ホスト"]),
            channels: Items::of(["Security"]),
            event_ids: Items::default(),
        })));
        corr.rule = RuleRef::Correlation(u32::MAX);
        corr.provider = "-".into();
        corr.event_id = "".into();
        corr.time = Timestamp::new(-1, -5).unwrap();
        corr.extra = Some(Items::default());
        let mut long = row(Origin::Correlation(Box::default()));
        long.details = Items::of(["x".repeat(300_000).as_str()]);
        let fields: Vec<String> = (0..40_000).map(|i| format!("y{i}: z ")).collect();
        long.all_fields = Some(Items::of(fields.iter().map(String::as_str)));
        long.time = Timestamp::MAX;
        let mut min = plain.clone();
        min.time = Timestamp::MIN;
        let mut geo = plain.clone();
        geo.geo = Some(Box::new(GeoAddrs {
            src: Some("::ffff:203.0.113.9".into()),
            tgt: Some("2001:db8::1".into()),
        }));
        let mut src_only = plain.clone();
        src_only.geo = Some(Box::new(GeoAddrs {
            src: Some("LOCAL".into()),
            tgt: None,
        }));
        let mut tgt_only = full.clone();
        tgt_only.geo = Some(Box::new(GeoAddrs {
            src: None,
            tgt: Some("198.51.100.7".into()),
        }));
        let mut integrity = plain.clone();
        integrity.rule = RuleRef::Integrity(
            crate::IntegrityRule::from_index(crate::IntegrityRule::COUNT as u32 - 1).unwrap(),
        );
        round_trip(&[
            plain, full, corr, long, min, geo, src_only, tgt_only, integrity,
        ]);
    }

    #[test]
    fn damaged_input_is_an_error_not_a_panic() {
        let mut buf = Vec::new();
        let mut r = row(Origin::Record {
            file: 1,
            record_id: 2,
        });
        r.extra = Some(Items::of(["e: f"]));
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
        // Flags that contradict each other, an integrity rule out of range, bad UTF-8.
        let mut b = buf.clone();
        b[0] = INTEGRITY | CORRELATION;
        assert!(decode(&mut &b[..]).is_err());
        let mut b = buf.clone();
        b[0] |= INTEGRITY;
        b[1 + 12..1 + 16].copy_from_slice(&(crate::IntegrityRule::COUNT as u32).to_le_bytes());
        assert!(decode(&mut &b[..]).is_err());
        b[1 + 12..1 + 16].copy_from_slice(&7u32.to_le_bytes());
        let back = decode(&mut &b[..]).unwrap();
        assert_eq!(
            back.rule,
            RuleRef::Integrity(crate::IntegrityRule::from_index(7).unwrap())
        );
        let at = buf.iter().position(|&c| c == b'W').unwrap();
        let mut b = buf.clone();
        b[at] = 0xff;
        assert_eq!(
            decode(&mut &b[..]).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
    }

    #[test]
    fn item_ends_out_of_place_are_errors() {
        let cell = |text: &str, ends: &[u64]| {
            let mut b = Vec::new();
            put_str(&mut b, text).unwrap();
            put_len(&mut b, (ends.len() / 2) as u64).unwrap();
            for &e in ends {
                put_len(&mut b, e).unwrap();
            }
            get_items(&mut &b[..])
        };
        let ok = cell("a: bc", &[1, 4, 1, 1]).unwrap();
        let items: Vec<(&str, &str)> = ok.iter().map(|i| (i.label(), i.value())).collect();
        assert_eq!(items, [("a", " b"), ("c", "")]);
        for ends in [
            &[0, 6][..],
            &[0, 4],
            &[5, 4],
            &[0, 3, 0, 3],
            &[2, 1, 0, 4],
            &[0, 1u64 << 33],
        ] {
            assert!(cell("a: bc", ends).is_err(), "{ends:?}");
        }
        assert!(cell("é", &[0, 1, 0, 1]).is_err(), "inside a character");
    }
}
