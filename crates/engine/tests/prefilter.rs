//! The shared-needle prefilter must never change what is detected: every hand-written
//! case rule, loaded together (so their buckets are large enough to be prefiltered), over
//! every case event and the demo intrusion, with the built-in rules too.

use scanner_engine::Origin;
use scanner_engine::{Scanner, ScannerBuilder};
use scanner_input::InputKind;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::collections::BTreeSet;
use std::path::Path;

#[test]
fn prefilter_keeps_every_detection() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let rule_set = || {
        load(
            &[RuleSource::Path(root.join("cases")), RuleSource::Builtin],
            &LoadOptions::default(),
        )
    };
    let set = rule_set();
    assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
    let (buckets, rules) = set.prefiltered();
    assert!(
        buckets >= 1 && rules >= 50,
        "prefiltered buckets {buckets}, rules {rules}"
    );
    let scanner = Scanner::new(set);
    let (files, errors) = scanner_input::discover(
        &[root.join("cases"), root.join("demo")],
        &[],
        InputKind::Json,
    );
    assert!(errors.is_empty());
    let keys = |s: &Scanner| -> BTreeSet<(u32, u64, u32)> {
        s.scan(&files)
            .expect("spilled rows read back")
            .rows
            .iter()
            .filter_map(|r| match r.origin {
                Origin::Record { file, record_id } => Some((file, record_id, r.rule.index())),
                Origin::Correlation { .. } => None,
            })
            .collect()
    };
    let with = keys(&scanner);
    let without = keys(&ScannerBuilder::new().prefilter(false).build(rule_set()));
    assert!(with.len() > 100, "{}", with.len());
    assert_eq!(with, without);
}
