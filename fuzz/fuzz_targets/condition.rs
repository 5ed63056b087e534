//! Condition strings through the condition parser, over a fixed set of selection
//! names; a parsed condition is evaluated once.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scanner_rules::Cond;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let names: Vec<String> = ["selection", "selection_a", "sel2", "filter", "filter_main_x", "keywords"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    if let Ok(c) = Cond::parse(text, &names) {
        let mut i = 0u32;
        let _ = c.eval(&mut |s| {
            i = i.wrapping_add(s + 1);
            i % 3 == 0
        });
    }
});
