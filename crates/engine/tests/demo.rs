//! The built-in rule set over the demo intrusion in `testdata/demo/` must give exactly
//! the detections listed in `expected.tsv` (`<EventRecordID>\t<rule id>`).

use scanner_engine::detect_info::Origin;
use scanner_engine::input::{self, InputKind};
use scanner_engine::Scanner;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn builtin_rules_find_exactly_the_planted_detections() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo");
    let set = load(&[RuleSource::Builtin], &LoadOptions::default());
    assert!(
        set.report.errors.is_empty(),
        "built-in rules must all load: {:?}",
        set.report.errors
    );
    let scanner = Scanner::new(set, true);
    let (files, errors) = input::discover(std::slice::from_ref(&dir), &[], InputKind::Json);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!files.is_empty());
    let result = scanner.scan(&files, InputKind::Json);
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    let got: BTreeSet<(u64, String)> = result
        .rows
        .iter()
        .filter_map(|r| match r.origin {
            Origin::Record { record_id, .. } => Some((
                record_id,
                scanner.rules().rules[r.rule as usize].meta.id.to_string(),
            )),
            Origin::Correlation { .. } => None,
        })
        .collect();
    let text = std::fs::read_to_string(dir.join("expected.tsv")).expect("expected.tsv");
    let want: BTreeSet<(u64, String)> = text
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, rule) = l.split_once('\t').expect("tab-separated");
            (
                id.trim().parse().expect("record id"),
                rule.trim().to_string(),
            )
        })
        .collect();
    let missing: Vec<_> = want.difference(&got).collect();
    let extra: Vec<_> = got.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}\nextra {extra:?}"
    );
    // Rows come out sorted by time.
    assert!(result.rows.windows(2).all(|w| w[0].time <= w[1].time));
}
