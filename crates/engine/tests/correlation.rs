//! Sigma correlations and legacy `| count()` rules, evaluated after the scan: which
//! windows fire, and the rows they give (Hayabusa's format: no RecordID, Details
//! `Count:N ¦ field:v1/v2 ¦ group:value`).

use scanner_engine::ScannerBuilder;
use scanner_engine::{Origin, RuleRef};
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::path::PathBuf;

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("scanner-corr-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn event(id: u64, eid: u32, minute: u32, ip: &str, user: &str) -> String {
    format!(
        r#"{{"Event":{{"System":{{"EventID":{eid},"Channel":"Security","Computer":"DC01","EventRecordID":{id},"TimeCreated_attributes":{{"SystemTime":"2024-05-01T10:{minute:02}:00Z"}}}},"EventData":{{"IpAddress":"{ip}","TargetUserName":"{user}"}}}}}}"#
    )
}

const BASE: &str = "title: Failed logon
name: failed_logon
id: 10000000-0000-0000-0000-000000000001
level: low
logsource: {product: windows, service: security}
detection:
    sel:
        EventID: 4625
    condition: sel
---
title: Successful logon
name: good_logon
id: 10000000-0000-0000-0000-000000000002
level: low
logsource: {product: windows, service: security}
detection:
    sel:
        EventID: 4624
    condition: sel
";

/// (rule or correlation title, Details) of every correlation row, and the titles of
/// record rows.
fn run(corr: &str, events: &[String]) -> (Vec<(String, String)>, Vec<String>) {
    let dir = scratch(&format!("{:x}", corr.len() * 31 + events.len()));
    std::fs::write(dir.join("rules.yml"), format!("{BASE}---\n{corr}")).unwrap();
    let ev = dir.join("events.jsonl");
    std::fs::write(&ev, events.join("\n")).unwrap();
    let set = load(
        &[RuleSource::Path(dir.join("rules.yml"))],
        &LoadOptions::default(),
    );
    assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
    let scanner = ScannerBuilder::new().extra_field_info(true).build(set);
    let size = std::fs::metadata(&ev).unwrap().len();
    let result = scanner
        .scan(&[InputFile::new(ev, size)])
        .expect("spilled rows read back");
    let mut corr_rows = Vec::new();
    let mut record_rows = Vec::new();
    for r in &result.rows {
        match r.origin {
            Origin::Correlation(_) => {
                let RuleRef::Correlation(i) = r.rule else {
                    panic!("a correlation's origin on a rule's row")
                };
                let c = &scanner.rules().correlations()[i as usize];
                corr_rows.push((c.meta.title.to_string(), r.details.join(" ¦ ")));
            }
            Origin::Record { .. } => record_rows.push(
                scanner.rules().rules()[r.rule.index() as usize]
                    .meta
                    .title
                    .to_string(),
            ),
        }
    }
    (corr_rows, record_rows)
}

#[test]
fn event_count_by_group_within_timespan() {
    let corr = "title: Brute force
id: 20000000-0000-0000-0000-000000000001
level: high
correlation:
    type: event_count
    rules: failed_logon
    group-by: [IpAddress]
    timespan: 5m
    condition: {gte: 3}
";
    let ev = vec![
        event(1, 4625, 0, "10.0.0.5", "a"),
        event(2, 4625, 1, "10.0.0.5", "b"),
        event(3, 4625, 2, "10.0.0.5", "a"),
        event(4, 4625, 1, "10.0.0.9", "a"),
        event(5, 4625, 3, "10.0.0.9", "a"),
        // Same IP, but spread wider than the timespan: no second window.
        event(6, 4625, 30, "10.0.0.5", "a"),
        event(7, 4625, 40, "10.0.0.5", "a"),
        event(8, 4625, 50, "10.0.0.5", "a"),
    ];
    let (rows, records) = run(corr, &ev);
    assert_eq!(
        rows,
        vec![(
            "Brute force".to_string(),
            "Count:3 ¦ IpAddress:10.0.0.5".to_string()
        )]
    );
    assert!(
        !records.contains(&"Failed logon".to_string()),
        "generate: false hides the base rule's rows"
    );
    assert!(records.is_empty(), "{records:?}");
}

#[test]
fn value_count_lists_the_distinct_values() {
    let corr = "title: Spray
id: 20000000-0000-0000-0000-000000000002
level: high
correlation:
    type: value_count
    rules: [10000000-0000-0000-0000-000000000001]
    group-by: [IpAddress]
    timespan: 10m
    condition: {gt: 2, field: TargetUserName}
";
    let ev = vec![
        event(1, 4625, 0, "10.0.0.5", "bob"),
        event(2, 4625, 1, "10.0.0.5", "alice"),
        event(3, 4625, 2, "10.0.0.5", "bob"),
        event(4, 4625, 3, "10.0.0.5", "carol"),
        event(5, 4625, 4, "10.0.0.7", "bob"),
        event(6, 4625, 5, "10.0.0.7", "bob"),
    ];
    let (rows, _) = run(corr, &ev);
    assert_eq!(
        rows,
        vec![(
            "Spray".to_string(),
            "Count:3 ¦ TargetUserName:alice/bob/carol ¦ IpAddress:10.0.0.5".to_string()
        )]
    );
}

#[test]
fn temporal_and_ordered_need_every_rule_for_the_group() {
    let make = |kind: &str| {
        format!(
            "title: Guessed then in ({kind})
id: 20000000-0000-0000-0000-00000000000{}
level: critical
correlation:
    type: {kind}
    rules: [failed_logon, good_logon]
    group-by: [IpAddress]
    timespan: 5m
    generate: true
",
            if kind == "temporal" { 3 } else { 4 }
        )
    };
    let ev = vec![
        // 10.0.0.5: failure then success within 5 minutes.
        event(1, 4625, 0, "10.0.0.5", "bob"),
        event(2, 4624, 2, "10.0.0.5", "bob"),
        // 10.0.0.6: success before failure (temporal only).
        event(3, 4624, 10, "10.0.0.6", "bob"),
        event(4, 4625, 11, "10.0.0.6", "bob"),
        // 10.0.0.7: only failures; 10.0.0.8 only a success.
        event(5, 4625, 20, "10.0.0.7", "bob"),
        event(6, 4624, 21, "10.0.0.8", "bob"),
    ];
    let (rows, records) = run(&make("temporal"), &ev);
    let groups: Vec<&str> = rows
        .iter()
        .map(|(_, d)| d.rsplit(':').next().unwrap())
        .collect();
    assert_eq!(groups, vec!["10.0.0.5", "10.0.0.6"]);
    assert_eq!(
        records.len(),
        6,
        "generate: true keeps the base rules' rows"
    );
    let (rows, _) = run(&make("temporal_ordered"), &ev);
    let groups: Vec<&str> = rows
        .iter()
        .map(|(_, d)| d.rsplit(':').next().unwrap())
        .collect();
    assert_eq!(groups, vec!["10.0.0.5"]);
}

#[test]
fn event_count_without_group_by_and_lt_condition() {
    let corr = "title: Quiet hour
id: 20000000-0000-0000-0000-000000000005
level: low
correlation:
    type: event_count
    rules: good_logon
    timespan: 1h
    condition: {lt: 3}
";
    let ev = vec![
        event(1, 4624, 0, "10.0.0.5", "a"),
        event(2, 4624, 5, "10.0.0.6", "b"),
    ];
    let (rows, _) = run(corr, &ev);
    assert_eq!(
        rows,
        vec![("Quiet hour".to_string(), "Count:2".to_string())]
    );
}

#[test]
fn legacy_count_by_field_with_timeframe() {
    let legacy = "title: Legacy spray
id: 20000000-0000-0000-0000-000000000006
level: medium
logsource: {product: windows, service: security}
detection:
    sel:
        EventID: 4625
    timeframe: 5m
    condition: sel | count(TargetUserName) by IpAddress >= 2
";
    let ev = vec![
        event(1, 4625, 0, "10.0.0.5", "bob"),
        event(2, 4625, 1, "10.0.0.5", "alice"),
        event(3, 4625, 2, "10.0.0.6", "bob"),
        event(4, 4625, 3, "10.0.0.6", "bob"),
    ];
    let (rows, records) = run(legacy, &ev);
    assert_eq!(
        rows,
        vec![(
            "Legacy spray".to_string(),
            "Count:2 ¦ TargetUserName:alice/bob ¦ IpAddress:10.0.0.5".to_string()
        )]
    );
    assert!(!records.contains(&"Legacy spray".to_string()));
}
