//! The built-in rule set over the demo intrusion in `testdata/demo/` must give exactly
//! the detections listed in `expected.tsv` (`<EventRecordID>\t<rule id>`).

use scanner_engine::Origin;
use scanner_engine::{Scanner, ScannerBuilder};
use scanner_input::InputKind;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn builtin_rules_find_exactly_the_planted_detections() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo");
    let set = load(&[RuleSource::Builtin], &LoadOptions::default());
    assert!(
        set.report().errors.is_empty(),
        "built-in rules must all load: {:?}",
        set.report().errors
    );
    let scanner = ScannerBuilder::new().extra_field_info(true).build(set);
    let (files, errors) = scanner_input::discover(std::slice::from_ref(&dir), &[], InputKind::Json);
    assert!(errors.is_empty(), "{errors:?}");
    assert!(!files.is_empty());
    let result = scanner
        .scan(&files, InputKind::Json)
        .expect("spilled rows read back");
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    let got: BTreeSet<(u64, String)> = result
        .rows
        .iter()
        .filter_map(|r| match r.origin {
            Origin::Record { record_id, .. } => Some((
                record_id,
                scanner.rules().rules()[r.rule as usize].meta.id.to_string(),
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

#[test]
fn rule_statistics_count_every_evaluation_slowest_first() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo");
    let set = load(&[RuleSource::Builtin], &LoadOptions::default());
    let scanner = Scanner::new(set);
    let (files, _) = scanner_input::discover(std::slice::from_ref(&dir), &[], InputKind::Json);
    let off = scanner
        .scan(&files, InputKind::Json)
        .expect("spilled rows read back");
    assert!(off.rule_stats.is_none(), "statistics are off by default");
    let scanner = ScannerBuilder::new()
        .rule_stats(true)
        .build(load(&[RuleSource::Builtin], &LoadOptions::default()));
    let on = scanner
        .scan(&files, InputKind::Json)
        .expect("spilled rows read back");
    assert_eq!(
        on.rows.len(),
        off.rows.len(),
        "timing does not change detections"
    );
    let mut tsv = Vec::new();
    scanner_engine::write_rule_stats(on.rule_stats.as_ref(), scanner.rules(), &mut tsv).unwrap();
    let tsv = String::from_utf8(tsv).unwrap();
    let mut lines = tsv.lines();
    assert_eq!(
        lines.next(),
        Some("rule_id\ttitle\tfile\tevaluations\ttotal_ns\tmean_ns\ttp90_ns\ttp95_ns\ttp99_ns\tmax_ns")
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split('\t').collect()).collect();
    assert!(
        rows.len() >= 40,
        "most built-in rules are evaluated on the demo: {}",
        rows.len()
    );
    let totals: Vec<u64> = rows.iter().map(|r| r[4].parse().unwrap()).collect();
    assert!(totals.windows(2).all(|w| w[0] >= w[1]), "slowest first");
    for r in &rows {
        let n: u64 = r[3].parse().unwrap();
        let (p90, p99, max): (u64, u64, u64) = (
            r[6].parse().unwrap(),
            r[8].parse().unwrap(),
            r[9].parse().unwrap(),
        );
        assert!(n >= 1 && p90 <= p99 && p99 <= max, "{r:?}");
    }
    // Each rule is evaluated at most once per record.
    let records = on.stats.records;
    assert!(rows.iter().all(|r| r[3].parse::<u64>().unwrap() <= records));
}
