//! Inputs the EVTX fuzzer (`fuzz/`, target `evtx_scan`) found or was seeded with, kept
//! as regression tests: each file of `fuzz/regressions/evtx_scan/` is scanned with the
//! built-in rules, with and without record recovery: no panic, no hang, and the same
//! live records either way.

use scanner_engine::ScannerBuilder;
use scanner_input::{InputFile, InputKind};
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
            let files = [InputFile { path: q, size }];
            let rules = || load(&[RuleSource::Builtin], &LoadOptions::default());
            let plain = ScannerBuilder::new()
                .extra_field_info(true)
                .build(rules())
                .scan(&files, InputKind::Evtx)
                .expect("spilled rows read back");
            let s = ScannerBuilder::new()
                .extra_field_info(true)
                .recover_records(true)
                .build(rules());
            let rec = s
                .scan(&files, InputKind::Evtx)
                .expect("spilled rows read back");
            let _ = tx.send((plain.stats.records, rec.stats.records));
        });
        match rx.recv_timeout(Duration::from_secs(60)) {
            Ok((a, b)) => assert_eq!(a, b, "{}", p.display()),
            Err(_) => panic!("{}: panic or hang", p.display()),
        }
    }
}
