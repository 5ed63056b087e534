//! EVTX bytes through the scanner's real record path: the file is written to a
//! temporary path and scanned with the built-in rules, with and without record
//! recovery. Any panic (caught ones too: libFuzzer's hook aborts) or hang is a finding;
//! so is recovery changing the live records scanned.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scanner_input::InputFile;
use scanner_engine::{Scanner, ScannerBuilder};
use scanner_rules::{load, LoadOptions, RuleSource};
use std::path::PathBuf;
use std::sync::OnceLock;

struct Ctx {
    plain: Scanner,
    recovering: Scanner,
    path: PathBuf,
}

fn ctx() -> &'static Ctx {
    static CTX: OnceLock<Ctx> = OnceLock::new();
    CTX.get_or_init(|| {
        let rules = || load(&[RuleSource::Builtin], &LoadOptions::default());
        let recovering = ScannerBuilder::new()
            .extra_field_info(true)
            .recover_records(true)
            .build(rules());
        let dir = std::env::var_os("FUZZ_TMP")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        Ctx {
            plain: ScannerBuilder::new().extra_field_info(true).build(rules()),
            recovering,
            path: dir.join(format!("scanner-fuzz-{}.evtx", std::process::id())),
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let c = ctx();
    std::fs::write(&c.path, data).unwrap();
    let files = [InputFile::new(c.path.clone(), data.len() as u64)];
    let plain = c.plain.scan(&files)
            .expect("spilled rows read back");
    let recovering = c.recovering.scan(&files)
            .expect("spilled rows read back");
    assert_eq!(plain.stats.records, recovering.stats.records);
});
