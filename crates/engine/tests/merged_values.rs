//! Values merged for speed must match as the rule reads: keyword searches scan a
//! record's values joined end to end (a keyword must be found within one value, never
//! across two), and a selection list of one-field maps becomes one test of the field
//! (with long affix lists as sets: `crates/rules/src/rule.rs` checks that they are).

use scanner_input::Flattener;
use scanner_input::RecordView;
use scanner_rules::{load, LoadOptions, RuleSet, RuleSource};

fn rules(yaml: &str) -> RuleSet {
    let dir = std::env::temp_dir().join(format!(
        "scanner-merged-{}-{}",
        std::process::id(),
        yaml.len()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("r.yml"), yaml).unwrap();
    let set = load(&[RuleSource::Path(dir.clone())], &LoadOptions::default());
    std::fs::remove_dir_all(&dir).ok();
    assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
    set
}

/// The titles of the rules matching an event whose EventData holds `values` in order.
fn matching(set: &RuleSet, values: &[&str]) -> Vec<String> {
    let names: Vec<String> = (0..values.len()).map(|i| format!("F{i}")).collect();
    let fields: Vec<(&str, &str)> = names
        .iter()
        .map(String::as_str)
        .zip(values.iter().copied())
        .collect();
    matching_fields(set, &fields)
}

/// The titles of the rules matching an event with these EventData fields.
fn matching_fields(set: &RuleSet, fields: &[(&str, &str)]) -> Vec<String> {
    let data: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("\"{k}\":{}", serde_json::to_string(v).unwrap()))
        .collect();
    let json = format!(
        "{{\"Event\":{{\"System\":{{\"EventID\":1,\"Channel\":\"Test\"}},\"EventData\":{{{}}}}}}}",
        data.join(",")
    );
    let mut view = RecordView::default();
    Flattener::default()
        .fill(&json, set.fields(), &mut view)
        .unwrap();
    set.rules()
        .iter()
        .filter(|r| r.is_match(&view))
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

const LISTS: &str = "title: lolbin\nid: l\nlogsource: {product: windows}\ndetection:\n  sel:\n    - OriginalFileName|endswith: 'At.exe'\n    - OriginalFileName|endswith: 'Bash.exe'\n    - OriginalFileName|endswith: 'CertUtil.exe'\n    - OriginalFileName|endswith: 'Cmd.exe'\n    - OriginalFileName|endswith: 'Cmstp.exe'\n    - OriginalFileName|endswith: 'Control.exe'\n    - OriginalFileName|endswith: 'Csc.exe'\n    - OriginalFileName|endswith: 'Cscript.exe'\n    - OriginalFileName|endswith: 'Dnscmd.exe'\n    - OriginalFileName|startswith: 'zz'\n    - Image|contains: 'tmp'\n  condition: sel\n---\n\
title: absent\nid: n\nlogsource: {product: windows}\ndetection:\n  sel:\n    - Hashes|contains: 'abc'\n    - Hashes: null\n  condition: sel\n";

#[test]
fn a_list_of_one_field_maps_matches_as_an_or() {
    let set = rules(LISTS);
    let lolbin =
        |fields: &[(&str, &str)]| matching_fields(&set, fields).iter().any(|t| t == "lolbin");
    assert!(lolbin(&[("OriginalFileName", "CERTUTIL.EXE")]));
    assert!(lolbin(&[
        ("OriginalFileName", "x"),
        ("OriginalFileName", "at.exe")
    ]));
    assert!(lolbin(&[("OriginalFileName", "zzTop")]));
    assert!(lolbin(&[("Image", "c:\\tmp\\a.exe")]));
    assert!(!lolbin(&[("OriginalFileName", "at.exe.mui")]));
    assert!(!lolbin(&[
        ("OriginalFileName", "t.exe"),
        ("Image", "c:\\a.exe")
    ]));
    let absent =
        |fields: &[(&str, &str)]| matching_fields(&set, fields).iter().any(|t| t == "absent");
    assert!(absent(&[("Image", "x")]), "null: an absent field matches");
    assert!(absent(&[("Hashes", "SHA1=ABC")]));
    assert!(!absent(&[("Hashes", "SHA1=123")]));
}
