//! An `expand` placeholder file as hostile input: the bytes are written to
//! `<tmp>/expand/fuzz.txt` and read through `--expand-dir` (`LoadOptions::expand_dir`)
//! by a rule that expands `%fuzz%` plain, as a substring and under windash. Each line
//! becomes a value compiled into matchers; a rule is loaded, disabled or rejected,
//! never a panic, and an unreadable file is named.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scanner_rules::{load, LoadOptions, RuleSource};

const RULE: &str = "title: P\ndetection:\n  a:\n    Channel: Security\n    User|expand: '%fuzz%'\n\
  b:\n    CommandLine|expand|contains|windash: '-x %fuzz%'\n  condition: a or b\n";

fuzz_target!(|data: &[u8]| {
    let base = std::env::var_os("FUZZ_TMP")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("scanner-fuzz-expand-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("fuzz.txt");
    std::fs::write(&file, data).unwrap();
    let set = load(
        &[RuleSource::Text {
            name: "fuzz.yml".into(),
            text: RULE.into(),
        }],
        &LoadOptions {
            expand_dir: Some(dir),
            ..LoadOptions::default()
        },
    );
    for e in &set.report().config_failures {
        assert_eq!(e.file, file.display().to_string());
    }
    for e in &set.report().errors {
        assert_eq!(e.file, "fuzz.yml");
    }
});
