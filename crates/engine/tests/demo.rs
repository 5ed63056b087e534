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
    let result = scanner.scan(&files).expect("spilled rows read back");
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    let got: BTreeSet<(u64, String)> = result
        .rows
        .iter()
        .filter_map(|r| match r.origin {
            Origin::Record { record_id, .. } => Some((
                record_id,
                scanner.rules().rules()[r.rule.index() as usize]
                    .meta
                    .id
                    .to_string(),
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
fn rule_statistics_count_every_evaluation() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo");
    let set = load(&[RuleSource::Builtin], &LoadOptions::default());
    let scanner = Scanner::new(set);
    let (files, _) = scanner_input::discover(std::slice::from_ref(&dir), &[], InputKind::Json);
    let off = scanner.scan(&files).expect("spilled rows read back");
    assert!(off.rule_stats.is_none(), "statistics are off by default");
    let scanner = ScannerBuilder::new()
        .rule_stats(true)
        .build(load(&[RuleSource::Builtin], &LoadOptions::default()));
    let on = scanner.scan(&files).expect("spilled rows read back");
    assert_eq!(
        on.rows.len(),
        off.rows.len(),
        "timing does not change detections"
    );
    let stats = on.rule_stats.as_ref().expect("statistics when asked");
    assert_eq!(stats.rules.len(), scanner.rules().rules().len());
    let timed: Vec<_> = stats.rules.iter().filter(|t| t.count > 0).collect();
    assert!(
        timed.len() >= 40,
        "most built-in rules are evaluated on the demo: {}",
        timed.len()
    );
    for t in &timed {
        let (p90, p99) = (t.percentile(90.0), t.percentile(99.0));
        assert!(
            p90 <= p99 && p99 <= t.max_ns && t.max_ns <= t.total_ns,
            "{t:?}"
        );
    }
    // Each rule is evaluated at most once per record.
    let records = on.stats.records;
    assert!(timed.iter().all(|t| t.count <= records));
}

#[test]
fn file_times_count_each_file_once() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/evtx");
    let (files, _) = scanner_input::discover(std::slice::from_ref(&dir), &[], InputKind::Evtx);
    assert!(files.len() >= 3, "EVTX, JSON and XML files: {files:?}");
    let set = || load(&[RuleSource::Builtin], &LoadOptions::default());
    let off = Scanner::new(set()).scan(&files).expect("rows");
    assert!(
        off.stats.file_times.is_none(),
        "file times are off by default"
    );
    let on = ScannerBuilder::new()
        .file_times(true)
        .build(set())
        .scan(&files)
        .expect("rows");
    assert_eq!(on.rows.len(), off.rows.len(), "timing changes no detection");
    let t = on.stats.file_times.as_ref().expect("file times when asked");
    assert_eq!(t.count, files.len() as u64);
    assert!(t.max_ns > 0 && t.max_ns <= t.total_ns, "{t:?}");
    assert!(t.mean() <= t.max_ns as f64);
    let (p90, p95, p99) = (t.percentile(90.0), t.percentile(95.0), t.percentile(99.0));
    assert!(p90 <= p95 && p95 <= p99 && p99 <= t.max_ns, "{t:?}");
    // Each file is timed within the scan.
    assert!(t.max_ns as u128 <= on.stats.elapsed.as_nanos(), "{t:?}");
}
