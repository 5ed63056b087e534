//! Rule YAML through the loader (parse, validate, compile, index, prefilter), then one
//! empty record through the loaded rules. A rule is rejected or loaded; never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scanner_rules::{load, LoadOptions, RuleSource};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let set = load(
        &[RuleSource::Text {
            name: "fuzz.yml".into(),
            text: text.to_string(),
        }],
        &LoadOptions::default(),
    );
    // Every rejection names its file.
    for e in &set.report().errors {
        assert_eq!(e.file, "fuzz.yml");
    }
});
