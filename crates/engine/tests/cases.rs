//! Hand-written cases: `testdata/cases/NAME.yml` rules over `NAME.jsonl` events must
//! give exactly the detections listed in `NAME.expect` (`<rule-id> <ids>|none`). A
//! correlation's row is listed by the first record (in the events file) dated at the
//! row's time, the start of its window.

use scanner_engine::Scanner;
use scanner_engine::{Origin, RuleRef};
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn testdata() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
}

fn detections(rules: &Path, events: &Path) -> (BTreeMap<String, BTreeSet<u64>>, Vec<String>) {
    let set = load(
        &[RuleSource::Path(rules.to_path_buf())],
        &LoadOptions::default(),
    );
    let mut problems: Vec<String> = set.report().errors.iter().map(|e| e.to_string()).collect();
    let scanner = Scanner::new(set);
    let size = std::fs::metadata(events).map(|m| m.len()).unwrap_or(0);
    let files = [InputFile::new(events.to_path_buf(), size)];
    let result = scanner.scan(&files).expect("spilled rows read back");
    problems.extend(result.errors.iter().map(ToString::to_string));
    let first_at = first_record_at(events);
    let mut got: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
    for r in &result.rows {
        let id = match r.rule {
            RuleRef::Correlation(i) => scanner.rules().correlations()[i as usize]
                .meta
                .id
                .to_string(),
            RuleRef::Rule(i) => scanner.rules().rules()[i as usize].meta.id.to_string(),
            RuleRef::Integrity(i) => panic!("an integrity row without --integrity: {i:?}"),
        };
        let entry = got.entry(id).or_default();
        match r.origin {
            Origin::Record { record_id, .. } => {
                entry.insert(record_id);
            }
            Origin::Correlation { .. } => match first_at.get(&r.time) {
                Some(&id) => {
                    entry.insert(id);
                }
                None => problems.push(format!("correlation row at {} has no record", r.time)),
            },
        }
    }
    (got, problems)
}

/// For each `SystemTime` in an events file, the `EventRecordID` of its first record.
fn first_record_at(events: &Path) -> BTreeMap<jiff::Timestamp, u64> {
    let text = std::fs::read_to_string(events).unwrap_or_default();
    let mut out = BTreeMap::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(v) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        let system = &v["Event"]["System"];
        let time = system["TimeCreated_attributes"]["SystemTime"]
            .as_str()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        if let (Some(t), Some(id)) = (time, system["EventRecordID"].as_u64()) {
            out.entry(t).or_insert(id);
        }
    }
    out
}

fn expected(path: &Path) -> BTreeMap<String, BTreeSet<u64>> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut out = BTreeMap::new();
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (id, ids) = line
            .split_once(char::is_whitespace)
            .unwrap_or((line, "none"));
        let ids = ids.trim();
        let set: BTreeSet<u64> = if ids == "none" {
            BTreeSet::new()
        } else {
            ids.split(',')
                .map(|s| {
                    s.trim()
                        .parse()
                        .unwrap_or_else(|_| panic!("{}: bad id in '{line}'", path.display()))
                })
                .collect()
        };
        out.insert(id.to_string(), set);
    }
    out
}

#[test]
fn every_case_gives_exactly_its_expected_detections() {
    let dir = testdata().join("cases");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("testdata/cases")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml"))
        .collect();
    names.sort();
    assert!(
        names.len() >= 10,
        "expected the hand-written cases, found {}",
        names.len()
    );
    let mut failures = Vec::new();
    for rules in &names {
        let events = rules.with_extension("jsonl");
        let want = expected(&rules.with_extension("expect"));
        let (mut got, problems) = detections(rules, &events);
        for p in problems {
            failures.push(format!("{}: {p}", rules.display()));
        }
        for (id, ids) in &want {
            let have = got.remove(id).unwrap_or_default();
            if &have != ids {
                failures.push(format!(
                    "{}: rule {id}: expected {ids:?}, got {have:?}",
                    rules.display()
                ));
            }
        }
        for (id, ids) in got {
            failures.push(format!(
                "{}: rule {id} has no expect line but fired on {ids:?}",
                rules.display()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} case failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
