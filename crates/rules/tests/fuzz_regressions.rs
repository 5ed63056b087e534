//! Inputs the fuzzers (`fuzz/`) found or were seeded with, kept as regression tests:
//! `fuzz/regressions/rule_yaml/*` through the loader, `fuzz/regressions/condition/*`
//! through the condition parser. Each must finish, without a panic, in bounded time.

use scanner_rules::{load, parse_condition, LoadOptions, RuleSource};
use std::path::Path;
use std::time::{Duration, Instant};

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions")
        .join(target);
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no inputs in {}", dir.display());
    v
}

#[test]
fn rule_yaml_regressions() {
    for (name, bytes) in inputs("rule_yaml") {
        let start = Instant::now();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let _ = load(
            &[RuleSource::Text {
                name: name.clone(),
                text,
            }],
            &LoadOptions::default(),
        );
        assert!(start.elapsed() < Duration::from_secs(10), "{name}");
    }
}

#[test]
fn condition_regressions() {
    let names: Vec<String> = ["selection", "selection_a", "sel2", "filter"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (name, bytes) in inputs("condition") {
        let start = Instant::now();
        if let Ok(c) = parse_condition(&String::from_utf8_lossy(&bytes), &names) {
            let _ = c.eval(&mut |i| i % 2 == 0);
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{name}");
    }
}
