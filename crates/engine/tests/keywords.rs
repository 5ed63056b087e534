//! Keyword searches scan a record's values joined end to end: a keyword must be found
//! within one value, never across two, and the prefilter must agree with evaluation.

use scanner_engine::flatten::Flattener;
use scanner_engine::record::RecordView;
use scanner_rules::{load, LoadOptions, RuleSet, RuleSource};

fn rules(yaml: &str) -> RuleSet {
    let dir = std::env::temp_dir().join(format!("scanner-keywords-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("r.yml"), yaml).unwrap();
    let set = load(&[RuleSource::Path(dir.clone())], &LoadOptions::default());
    std::fs::remove_dir_all(&dir).ok();
    assert!(set.report.errors.is_empty(), "{:?}", set.report.errors);
    set
}

/// The titles of the rules matching an event whose EventData holds `values` in order.
fn matching(set: &RuleSet, values: &[&str]) -> Vec<String> {
    let data: Vec<String> = values
        .iter()
        .enumerate()
        .map(|(i, v)| format!("\"F{i}\":{}", serde_json::to_string(v).unwrap()))
        .collect();
    let json = format!(
        "{{\"Event\":{{\"System\":{{\"EventID\":1,\"Channel\":\"Test\"}},\"EventData\":{{{}}}}}}}",
        data.join(",")
    );
    let mut view = RecordView::default();
    Flattener::default()
        .fill(&json, &set.fields, &mut view)
        .unwrap();
    set.rules
        .iter()
        .filter(|r| r.detection.is_match(&view))
        .map(|r| r.meta.title.to_string())
        .collect()
}

const RULES: &str = "title: few\nid: a\nlogsource: {product: windows}\ndetection:\n  kw:\n    - 'abcd'\n  condition: kw\n---\n\
title: many\nid: b\nlogsource: {product: windows}\ndetection:\n  kw:\n    - 'sekurlsa::logonpasswords'\n    - 'sekurlsa'\n    - 'privilege::debug'\n    - 'kiwi'\n    - 'ÜBER'\n  condition: kw\n---\n\
title: cased\nid: c\nlogsource: {product: windows}\ndetection:\n  kw:\n    '|cased':\n      - 'AbC'\n  condition: kw\n";

#[test]
fn keywords_match_within_one_value_only() {
    let set = rules(RULES);
    assert_eq!(matching(&set, &["xxabcdyy"]), ["few"]);
    assert!(
        matching(&set, &["xxab", "cdyy"]).is_empty(),
        "a keyword across two values is no match"
    );
    assert_eq!(matching(&set, &["ab", "", "abcd"]), ["few"]);
    // The longest needle crosses into the next value; a shorter one fits in the first.
    assert_eq!(
        matching(&set, &["run SEKURLSA::", "logonpasswords"]),
        ["many"]
    );
    assert!(matching(&set, &["sekur", "lsa", "ki", "wi"]).is_empty());
    assert_eq!(matching(&set, &["é", "x über y"]), ["many"]);
    assert_eq!(matching(&set, &["ab", "xAbC"]), ["cased"]);
    assert!(matching(&set, &["Ab", "C", "abc"]).is_empty());
}
