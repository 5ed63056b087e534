//! Damage planted in a written EVTX file, for tests of what a reader can tell about a
//! log that was tampered with: a flipped byte ([`flip_byte`]) and live records turned
//! into slack ([`to_slack`]). Both work on the file's bytes, as [`crate::EvtxWriter`]
//! left them.
//!
//! Layout (see `docs/evtx-writer.md`): a 4096-byte file header (next record id at 24,
//! CRC32 of bytes 0..120 at 124), then 64 KiB chunks (last record number at 16, last
//! record id at 32, last record offset at 44, free space offset at 48, CRC32 of the
//! records at 52, CRC32 of header bytes 0..120 and 128..512 at 124).

use crate::error::Error;

const FILE_HEADER: usize = 4096;
const CHUNK: usize = 65536;
const CHUNK_HEADER: usize = 512;

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}

/// The bytes of chunk `n`, or an error when the file has no such chunk.
fn chunk_mut(file: &mut [u8], n: usize) -> Result<&mut [u8], Error> {
    let at = FILE_HEADER + n * CHUNK;
    file.get_mut(at..at + CHUNK)
        .filter(|c| c.starts_with(b"ElfChnk\0"))
        .ok_or_else(|| Error::InvalidValue(format!("no chunk {n} in the file")))
}

/// Flips the bits `mask` of the byte at `offset` in chunk `n`'s records (an offset from
/// the chunk's start, past its 512-byte header), leaving the CRC32s as they were: the
/// chunk's record CRC32 no longer matches.
pub fn flip_byte(file: &mut [u8], n: usize, offset: usize, mask: u8) -> Result<(), Error> {
    let chunk = chunk_mut(file, n)?;
    let free = u32_at(chunk, 48) as usize;
    if !(CHUNK_HEADER..free.min(CHUNK)).contains(&offset) {
        return Err(Error::InvalidValue(format!(
            "offset {offset} is not in chunk {n}'s records"
        )));
    }
    chunk[offset] ^= mask;
    Ok(())
}

/// Turns the last `k` records of chunk `n` into slack: the chunk's header then ends its
/// records before them (last record number and id, last record offset, free space
/// offset, both CRC32s rewritten), as a log whose last records were removed; their
/// bytes stay where they were. When `n` is the file's last chunk, the file header's next
/// record id (and its CRC32) follows. Returns the ids of the records now in slack.
pub fn to_slack(file: &mut [u8], n: usize, k: usize) -> Result<Vec<u64>, Error> {
    let chunk = chunk_mut(file, n)?;
    let free = u32_at(chunk, 48) as usize;
    // The records' offsets and ids, walked by their sizes.
    let mut records = Vec::new();
    let mut at = CHUNK_HEADER;
    while at + 24 <= free && chunk[at..at + 4] == *b"**\0\0" {
        let size = u32_at(chunk, at + 4) as usize;
        records.push((at, u64_at(chunk, at + 8)));
        at += size.max(24);
    }
    if k == 0 || k >= records.len() {
        return Err(Error::InvalidValue(format!(
            "chunk {n} has {} records: cannot leave some and move {k} to slack",
            records.len()
        )));
    }
    let kept = records.len() - k;
    let (last_at, last_id) = records[kept - 1];
    let end = records[kept].0;
    let first_number = u64_at(chunk, 8);
    let first_id = u64_at(chunk, 24);
    chunk[16..24].copy_from_slice(&(first_number + kept as u64 - 1).to_le_bytes());
    chunk[32..40].copy_from_slice(&last_id.to_le_bytes());
    debug_assert_eq!(first_id + kept as u64 - 1, last_id);
    chunk[44..48].copy_from_slice(&(last_at as u32).to_le_bytes());
    chunk[48..52].copy_from_slice(&(end as u32).to_le_bytes());
    let records_crc = crc32fast::hash(&chunk[CHUNK_HEADER..end]);
    chunk[52..56].copy_from_slice(&records_crc.to_le_bytes());
    let mut crc = crc32fast::Hasher::new();
    crc.update(&chunk[..120]);
    crc.update(&chunk[128..512]);
    let header_crc = crc.finalize();
    chunk[124..128].copy_from_slice(&header_crc.to_le_bytes());
    let moved = records[kept..].iter().map(|r| r.1).collect();
    let last_chunk = u64_at(file, 16);
    if last_chunk == n as u64 {
        file[24..32].copy_from_slice(&(last_id + 1).to_le_bytes());
        let crc = crc32fast::hash(&file[..120]);
        file[124..128].copy_from_slice(&crc.to_le_bytes());
    }
    Ok(moved)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{write_events, Element, Event, Value};

    fn log(n: u16) -> Vec<u8> {
        let events: Vec<Event> = (0..n)
            .map(|i| Event {
                root: Element::new("Event").child(
                    Element::new("System").child(Element::new("EventID").text(Value::U16(i))),
                ),
            })
            .collect();
        let mut out = std::io::Cursor::new(Vec::new());
        write_events(&events, &mut out).unwrap();
        out.into_inner()
    }

    #[test]
    fn slack_keeps_the_bytes_and_moves_the_ends() {
        let mut file = log(10);
        let before = file.clone();
        let moved = to_slack(&mut file, 0, 3).unwrap();
        assert_eq!(moved, [8, 9, 10]);
        let c = &file[FILE_HEADER..FILE_HEADER + CHUNK];
        assert_eq!(u64_at(c, 32), 7);
        assert_eq!(u64_at(&file, 24), 8, "the file header's next record id");
        assert_eq!(
            crc32fast::hash(&file[..120]),
            u32_at(&file, 124),
            "the file header's CRC32"
        );
        let free = u32_at(c, 48) as usize;
        assert_eq!(crc32fast::hash(&c[512..free]), u32_at(c, 52));
        // The records moved are still there, byte for byte.
        let old_free = u32_at(&before[FILE_HEADER..], 48) as usize;
        assert_eq!(
            file[FILE_HEADER + free..FILE_HEADER + old_free],
            before[FILE_HEADER + free..FILE_HEADER + old_free]
        );
        assert!(to_slack(&mut file, 0, 7).is_err(), "nothing would stay");
        assert!(to_slack(&mut file, 1, 1).is_err(), "no chunk 1");
    }

    #[test]
    fn a_flipped_byte_must_be_in_the_records() {
        let mut file = log(2);
        assert!(flip_byte(&mut file, 0, 100, 1).is_err());
        flip_byte(&mut file, 0, 600, 1).unwrap();
        let c = &file[FILE_HEADER..FILE_HEADER + CHUNK];
        let free = u32_at(c, 48) as usize;
        assert_ne!(crc32fast::hash(&c[512..free]), u32_at(c, 52));
    }
}
