//! Damage the `evtx` crate refuses but that leaves records readable: a truncated last
//! chunk, a damaged chunk magic, a damaged string table; and record recovery
//! (carving) from slack space. On `testdata/evtx/security.evtx` (our writer's: one
//! chunk, records 1 at 512, 2 at 3040, 3 at 4618, 1307 bytes long).

use scanner_engine::{ScanResult, ScannerBuilder};
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::path::{Path, PathBuf};

/// The first chunk starts after the 4 KiB file header.
const CHUNK: usize = 4096;

fn fixture() -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/evtx/security.evtx"))
        .unwrap()
}

fn write(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("scanner-damaged-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn scan(path: &Path, recover: bool) -> ScanResult {
    let s = ScannerBuilder::new()
        .extra_field_info(true)
        .recover_records(recover)
        .build(load(&[RuleSource::Builtin], &LoadOptions::default()));
    let files = [InputFile::new(
        path.to_path_buf(),
        std::fs::metadata(path).unwrap().len(),
    )];
    s.scan(&files).expect("spilled rows read back")
}

fn record_ids(r: &ScanResult) -> Vec<u64> {
    let mut v: Vec<u64> = r
        .rows
        .iter()
        .filter_map(|d| match d.origin {
            scanner_engine::Origin::Record { record_id, .. } => Some(record_id),
            _ => None,
        })
        .collect();
    v.dedup();
    v
}

#[test]
fn the_whole_fixture_scans_clean() {
    let p = write("whole.evtx", &fixture());
    let r = scan(&p, false);
    assert_eq!(r.stats.records, 3);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
}

#[test]
fn a_truncated_chunk_gives_its_complete_records() {
    let b = fixture();
    let p = write("truncated.evtx", &b[..CHUNK + 4618 + 100]);
    let r = scan(&p, false);
    assert_eq!(r.stats.records, 2, "{:?}", r.errors);
    // The truncation, and the record it cut.
    assert_eq!(r.errors.len(), 2, "{:?}", r.errors);
    assert!(r.errors[0]
        .to_string()
        .contains("truncated.evtx: chunk 0: Failed to parse record number 3"));
    assert!(r.errors[1]
        .to_string()
        .contains("truncated.evtx: chunk 0: truncated at 4718"));
}

#[test]
fn a_damaged_chunk_magic_loses_no_record() {
    let mut b = fixture();
    b[CHUNK + 2] ^= 0x20;
    let p = write("magic.evtx", &b);
    let r = scan(&p, false);
    assert_eq!(r.stats.records, 3);
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert!(r.errors[0]
        .to_string()
        .contains("magic.evtx: chunk 0: damaged chunk header"));
}

#[test]
fn a_damaged_string_table_loses_no_record() {
    let mut b = fixture();
    // Every string table entry pointing past the chunk.
    for i in 0..64 {
        let at = CHUNK + 128 + 4 * i;
        if b[at..at + 4] != [0; 4] {
            b[at..at + 4].copy_from_slice(&0x0010_0000u32.to_le_bytes());
        }
    }
    let p = write("strings.evtx", &b);
    let r = scan(&p, false);
    assert_eq!(r.stats.records, 3, "{:?}", r.errors);
    assert_eq!(r.errors.len(), 1, "{:?}", r.errors);
    assert!(r.errors[0]
        .to_string()
        .contains("strings.evtx: chunk 0: damaged string table"));
    let whole = scan(&write("whole2.evtx", &fixture()), false);
    assert_eq!(record_ids(&r), record_ids(&whole));
}

/// Record 3 left in slack space: the chunk header ends at record 2.
fn with_slack() -> Vec<u8> {
    let mut b = fixture();
    let h = CHUNK;
    b[h + 16..h + 24].copy_from_slice(&2u64.to_le_bytes()); // last record number
    b[h + 32..h + 40].copy_from_slice(&2u64.to_le_bytes()); // last record id
    b[h + 44..h + 48].copy_from_slice(&3040u32.to_le_bytes()); // last record offset
    b[h + 48..h + 52].copy_from_slice(&4618u32.to_le_bytes()); // free space offset
    b
}

#[test]
fn recovery_carves_slack_records_and_marks_them() {
    let p = write("slack.evtx", &with_slack());
    let plain = scan(&p, false);
    assert_eq!(plain.stats.records, 2);
    assert_eq!(plain.stats.recovered, 0);
    assert!(plain.rows.iter().all(|d| !d.recovered));
    let carved = scan(&p, true);
    assert_eq!(carved.stats.records, 2);
    assert_eq!(carved.stats.recovered, 1, "{:?}", carved.errors);
    assert!(carved.errors.is_empty(), "{:?}", carved.errors);
    // Record 3 (EventRecordID 184202, a log clear) is found, marked recovered.
    let rec: Vec<_> = carved.rows.iter().filter(|d| d.recovered).collect();
    assert!(!rec.is_empty());
    assert!(rec.iter().all(|d| matches!(
        d.origin,
        scanner_engine::Origin::Record {
            record_id: 184202,
            ..
        }
    )));
    assert!(carved.rows.iter().filter(|d| !d.recovered).count() == plain.rows.len());
}

#[test]
fn garbage_in_slack_is_carved_without_harm() {
    // Record-like garbage after the live records: magics, sizes, random bytes.
    let mut b = with_slack();
    let mut x = 0x1234_5678_9abc_def0u64;
    for i in (CHUNK + 6000..CHUNK + 65536 - 8).step_by(1) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b[i] = x as u8;
    }
    for at in (CHUNK + 6000..CHUNK + 60000).step_by(997) {
        b[at..at + 4].copy_from_slice(b"**\0\0");
        let size = 24 + (at % 900) as u32;
        b[at + 4..at + 8].copy_from_slice(&size.to_le_bytes());
        let end = at + size as usize - 4;
        b[end..end + 4].copy_from_slice(&size.to_le_bytes());
    }
    let p = write("garbage.evtx", &b);
    let r = scan(&p, true);
    assert_eq!(r.stats.records, 2);
    assert!(r.stats.recovered >= 1);
}
