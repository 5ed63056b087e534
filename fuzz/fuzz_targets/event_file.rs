//! Event files that are not EVTX (JSON, JSON Lines, event XML, gzip of either) through
//! the scanner's real record path: the first byte picks the file's extension, the rest
//! is its content, written to a temporary path and scanned with the built-in rules
//! (the format is told by the content). Any panic (caught ones too: libFuzzer's hook
//! aborts) or hang is a finding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scanner_engine::{Scanner, ScannerBuilder};
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The extensions the first byte chooses from.
const EXTENSIONS: [&str; 4] = ["json", "jsonl", "xml", "gz"];

fn scanner() -> &'static Scanner {
    static S: OnceLock<Scanner> = OnceLock::new();
    S.get_or_init(|| {
        ScannerBuilder::new()
            .extra_field_info(true)
            .all_field_info(true)
            .build(load(&[RuleSource::Builtin], &LoadOptions::default()))
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, content)) = data.split_first() else {
        return;
    };
    let dir = std::env::var_os("FUZZ_TMP")
        .map(PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let ext = EXTENSIONS[usize::from(pick) % EXTENSIONS.len()];
    let path = dir.join(format!("scanner-fuzz-{}.{ext}", std::process::id()));
    std::fs::write(&path, content).unwrap();
    let files = [InputFile::new(path, content.len() as u64)];
    scanner()
        .scan(&files)
        .expect("spilled rows read back");
});
