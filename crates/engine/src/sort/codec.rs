//! What a `SpillStore` (`store.rs`) needs to know of the items it
//! holds, and nothing else: their order, what they cost in memory, and their binary form
//! in a run file. The store, its runs and its merge are written once against this trait;
//! each kind of item (timeline rows, correlation hits) is one implementation of it.
//!
//! The binary forms are built from the primitives below: little-endian numbers, and
//! strings as a LEB128 length and their UTF-8 bytes. Only this process reads a run back,
//! but every read is checked: a damaged run gives an error, never a panic or a bad item,
//! and a damaged length cannot ask for a huge allocation.

use compact_str::CompactString;
use jiff::Timestamp;
use std::cmp::Ordering;
use std::io::{self, Read, Write};

/// How a spill store handles its items: their order, their size for the memory bound,
/// how a run file holds them, and the words its errors use.
pub trait SpillCodec: Send + Sync + 'static {
    /// What the store holds.
    type Item: Send + 'static;
    /// The part of an item's order that needs the codec's own data (a hit's correlation
    /// rank); computed once for each item as it enters the merge.
    type Key: Copy + Send + 'static;

    /// What the runs hold, in errors: "cannot write {HOLDS} to temporary file …".
    const HOLDS: &'static str;
    /// What a run gives back, in errors: "cannot read {READ_BACK} back from …".
    const READ_BACK: &'static str;

    /// The part of run `n`'s file name that tells it from the folder's other runs
    /// (`scanner-sort-PID-{this}.run`): hex digits only, the names stale-spill removal
    /// recognises.
    fn run_name(n: u64) -> String;

    /// About how many bytes `item` takes in memory: what the store's bound counts.
    fn approx_bytes(item: &Self::Item) -> usize;

    /// `item`'s [`Self::Key`].
    fn key(&self, item: &Self::Item) -> Self::Key;

    /// The store's order, total over every field (items equal under it are alike), of
    /// items whose keys are `ka` and `kb`.
    fn cmp(ka: Self::Key, a: &Self::Item, kb: Self::Key, b: &Self::Item) -> Ordering;

    /// Sorts `items` in the order of [`Self::cmp`], on the rayon pool when `parallel`
    /// (the order of items equal under it does not matter: they are alike). A batch
    /// holds up to half the memory bound: how to sort it fast is the codec's choice.
    fn sort(&self, items: &mut [Self::Item], parallel: bool);

    /// Writes `item` to `w`.
    fn encode<W: Write>(item: &Self::Item, w: &mut W) -> io::Result<()>;

    /// Reads one item written by [`Self::encode`]; damaged input is an error.
    fn decode<R: Read>(r: &mut R) -> io::Result<Self::Item>;
}

/// Strings up to this length are read into a buffer sized at once; longer ones grow as
/// bytes arrive, so a damaged length cannot ask for a huge allocation.
const PREALLOCATE: usize = 1 << 20;

/// An error for damaged input: `what` is wrong.
pub(crate) fn invalid(what: &str) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, what.to_string())
}

/// Writes `n` as LEB128.
pub(crate) fn put_len(w: &mut impl Write, mut n: u64) -> io::Result<()> {
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

/// Writes `s` as its LEB128 length and its bytes.
pub(crate) fn put_str(w: &mut impl Write, s: &str) -> io::Result<()> {
    put_len(w, s.len() as u64)?;
    w.write_all(s.as_bytes())
}

/// Writes `t` as its seconds (8 bytes) and nanoseconds (4 bytes).
pub(crate) fn put_time(w: &mut impl Write, t: Timestamp) -> io::Result<()> {
    w.write_all(&t.as_second().to_le_bytes())?;
    w.write_all(&t.subsec_nanosecond().to_le_bytes())
}

/// Reads `N` bytes.
pub(crate) fn get<const N: usize>(r: &mut impl Read) -> io::Result<[u8; N]> {
    let mut b = [0u8; N];
    r.read_exact(&mut b)?;
    Ok(b)
}

/// Reads a time written by [`put_time`].
pub(crate) fn get_time(r: &mut impl Read) -> io::Result<Timestamp> {
    let secs = i64::from_le_bytes(get(r)?);
    let nanos = i32::from_le_bytes(get(r)?);
    Timestamp::new(secs, nanos).map_err(|_| invalid("time out of range"))
}

/// Reads a number written by [`put_len`].
pub(crate) fn get_len(r: &mut impl Read) -> io::Result<usize> {
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

/// Reads a string written by [`put_str`].
pub(crate) fn get_string(r: &mut impl Read) -> io::Result<String> {
    let len = get_len(r)?;
    get_string_of(r, len)
}

/// Reads a string written by [`put_str`] into a [`CompactString`].
pub(crate) fn get_compact(r: &mut impl Read) -> io::Result<CompactString> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_and_times_round_trip() {
        let long = "é".repeat(PREALLOCATE);
        let texts = [
            "",
            "a",
            &"x".repeat(24),
            &"y".repeat(25),
            "ホスト ¦ 😀",
            &long,
        ];
        let times = [
            Timestamp::MIN,
            Timestamp::new(-1, -5).unwrap(),
            Timestamp::MAX,
        ];
        let mut buf = Vec::new();
        for s in texts {
            put_str(&mut buf, s).unwrap();
            put_str(&mut buf, s).unwrap();
        }
        for t in times {
            put_time(&mut buf, t).unwrap();
        }
        let mut r = &buf[..];
        for s in texts {
            assert_eq!(get_string(&mut r).unwrap(), s);
            assert_eq!(get_compact(&mut r).unwrap(), s);
        }
        for t in times {
            assert_eq!(get_time(&mut r).unwrap(), t);
        }
        assert!(r.is_empty());
    }

    #[test]
    fn damaged_strings_and_times_are_errors() {
        // A huge length claimed by a short input; a length past 64 bits.
        let huge = [0xff, 0xff, 0xff, 0xff, 0x0f, b'a'];
        assert_eq!(
            get_string(&mut &huge[..]).unwrap_err().kind(),
            io::ErrorKind::UnexpectedEof
        );
        let endless = [0xff; 11];
        assert_eq!(
            get_string(&mut &endless[..]).unwrap_err().kind(),
            io::ErrorKind::InvalidData
        );
        // Bad UTF-8, short and long.
        assert!(get_compact(&mut &[1, 0xff][..]).is_err());
        let mut long = vec![30];
        long.extend([0xff; 30]);
        assert!(get_compact(&mut &long[..]).is_err());
        // Nanoseconds out of range.
        let mut t = Vec::new();
        t.extend(0i64.to_le_bytes());
        t.extend(2_000_000_000i32.to_le_bytes());
        assert!(get_time(&mut &t[..]).is_err());
    }
}
