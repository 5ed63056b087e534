//! Inputs the EVTX fuzzer (`fuzz/`, target `evtx_scan`) found or was seeded with, kept
//! as regression tests: each file of `fuzz/regressions/evtx_scan/` is scanned with the
//! built-in rules, with and without record recovery: no panic, no hang, and the same
//! live records either way.

use scanner_engine::ScannerBuilder;
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

#[test]
fn evtx_scan_regressions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/evtx_scan");
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    for p in paths {
        let (tx, rx) = mpsc::channel();
        let q = p.clone();
        std::thread::spawn(move || {
            let size = std::fs::metadata(&q).unwrap().len();
            let files = [InputFile::new(q, size)];
            let rules = || load(&[RuleSource::Builtin], &LoadOptions::default());
            let plain = ScannerBuilder::new()
                .extra_field_info(true)
                .build(rules())
                .scan(&files)
                .expect("spilled rows read back");
            let s = ScannerBuilder::new()
                .extra_field_info(true)
                .recover_records(true)
                .build(rules());
            let rec = s.scan(&files).expect("spilled rows read back");
            let _ = tx.send((plain.stats.records, rec.stats.records));
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok((a, b)) => assert_eq!(a, b, "{}", p.display()),
            Err(_) => panic!("{}: panic or hang", p.display()),
        }
    }
}

/// The extensions the first byte of an `event_file` input picks from (as in
/// `fuzz/fuzz_targets/event_file.rs`).
const EXTENSIONS: [&str; 4] = ["json", "jsonl", "xml", "gz"];

/// Inputs of the `event_file` target (JSON, JSON Lines, event XML, gzip; hostile ones
/// among them: entity expansion, external entities, deep nesting, invalid UTF-8, cut
/// streams): each is scanned with the built-in rules without a panic or a hang, the
/// well-formed ones give their events and the damaged ones report an error.
#[test]
fn event_file_regressions() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/regressions/event_file");
    let tmp = std::env::temp_dir().join(format!("scanner-event-file-{}", std::process::id()));
    std::fs::create_dir_all(&tmp).unwrap();
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    assert!(!paths.is_empty());
    let mut seen = Vec::new();
    for p in paths {
        let data = std::fs::read(&p).unwrap();
        let Some((&pick, content)) = data.split_first() else {
            continue;
        };
        let name = p.file_name().unwrap().to_string_lossy().into_owned();
        let ext = EXTENSIONS[usize::from(pick) % EXTENSIONS.len()];
        let file = tmp.join(format!("{name}.{ext}"));
        std::fs::write(&file, content).unwrap();
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let size = std::fs::metadata(&file).unwrap().len();
            let files = [InputFile::new(file, size)];
            let r = ScannerBuilder::new()
                .all_field_info(true)
                .build(load(&[RuleSource::Builtin], &LoadOptions::default()))
                .scan(&files)
                .expect("spilled rows read back");
            let _ = tx.send((r.stats.records, r.errors.len()));
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok(counts) => seen.push((name, counts)),
            Err(_) => panic!("{}: panic or hang", p.display()),
        }
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let of = |n: &str| seen.iter().find(|(m, _)| m == n).map(|(_, c)| *c);
    // Well-formed: every event read, nothing reported.
    for (name, records) in [
        ("flat-row", 1),
        ("evtx-dump-shape", 1),
        ("json-array", 2),
        ("event-xml", 1),
        ("gzip-jsonl", 3),
        ("gzip-xml", 1),
    ] {
        assert_eq!(of(name), Some((records, 0)), "{name}: {seen:?}");
    }
    // Damaged or hostile: reported, never silent.
    for name in [
        "billion-laughs",
        "external-entity",
        "deep-json",
        "deep-xml",
        "invalid-utf8",
        "gzip-truncated",
        "no-channel",
        "truncated-xml",
    ] {
        let (_, errors) = of(name).unwrap_or_else(|| panic!("{name} missing"));
        assert!(errors > 0, "{name}: nothing reported: {seen:?}");
    }
}
