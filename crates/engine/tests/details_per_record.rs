//! A record matched by several rules renders Details and ExtraFieldInfo once per
//! template: rows of one record with the same template text repeat it, rows with
//! another template get their own, and the next record is rendered afresh.

use scanner_engine::{Origin, ScannerBuilder};
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::collections::BTreeMap;

fn rule(title: &str, id: &str, details: &str, image_end: &str) -> String {
    format!(
        "title: {title}\nid: {id}\nlevel: high\ndetails: '{details}'\n\
         logsource: {{product: windows}}\n\
         detection:\n  sel:\n    Image|endswith: '{image_end}'\n  condition: sel\n"
    )
}

fn event(record: u64, image: &str, user: &str) -> String {
    format!(
        "{{\"Event\":{{\"System\":{{\"EventID\":1,\"Channel\":\"Test\",\"EventRecordID\":{record},\
         \"TimeCreated_attributes\":{{\"SystemTime\":\"2024-01-01T00:00:0{record}Z\"}}}},\
         \"EventData\":{{\"Image\":\"{image}\",\"User\":\"{user}\",\"Other\":\"o{record}\"}}}}}}"
    )
}

#[test]
fn rows_of_one_record_share_a_template_render_and_no_other() {
    let dir = std::env::temp_dir().join(format!("scanner-details-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("rules")).unwrap();
    let rules = [
        rule(
            "a",
            "00000000-0000-0000-0000-00000000000a",
            "Img: %Image%",
            ".exe",
        ),
        // The same text as rule a: one template for both.
        rule(
            "b",
            "00000000-0000-0000-0000-00000000000b",
            "Img: %Image%",
            ".exe",
        ),
        rule(
            "c",
            "00000000-0000-0000-0000-00000000000c",
            "User: %User%",
            ".exe",
        ),
        // Rule c's template, for record 3 alone, which rules a to c do not match: the
        // record before it rendered that template last.
        rule(
            "d",
            "00000000-0000-0000-0000-00000000000d",
            "User: %User%",
            ".com",
        ),
    ];
    std::fs::write(dir.join("rules/r.yml"), rules.join("---\n")).unwrap();
    let events = dir.join("events.jsonl");
    let lines = [
        event(1, "C:\\\\x\\\\one.exe", "alice"),
        event(2, "C:\\\\x\\\\two.exe", "bob"),
        event(3, "C:\\\\x\\\\three.com", "carol"),
    ];
    std::fs::write(&events, lines.join("\n")).unwrap();

    let set = load(
        &[RuleSource::Path(dir.join("rules"))],
        &LoadOptions::default(),
    );
    assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
    let scanner = ScannerBuilder::new().extra_field_info(true).build(set);
    let size = std::fs::metadata(&events).unwrap().len();
    let result = scanner
        .scan(&[InputFile::new(events.clone(), size)])
        .unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(result.errors.is_empty(), "{:?}", result.errors);

    let mut got = BTreeMap::new();
    for r in &result.rows {
        let Origin::Record { record_id, .. } = r.origin else {
            panic!("a correlation row");
        };
        let title = scanner.rules().rules()[r.rule.index() as usize]
            .meta
            .title
            .to_string();
        let extra = r.extra.as_ref().map_or(String::new(), |e| e.join(" ¦ "));
        got.insert((record_id, title), (r.details.join(" ¦ "), extra));
    }
    let row = |d: &str, e: &str| (d.to_string(), e.to_string());
    let img = |n| format!("Img: C:\\x\\{n}.exe");
    let want = BTreeMap::from([
        (
            (1, "a".to_string()),
            row(&img("one"), "Other: o1 ¦ User: alice"),
        ),
        (
            (1, "b".to_string()),
            row(&img("one"), "Other: o1 ¦ User: alice"),
        ),
        (
            (1, "c".to_string()),
            row("User: alice", "Image: C:\\x\\one.exe ¦ Other: o1"),
        ),
        (
            (2, "a".to_string()),
            row(&img("two"), "Other: o2 ¦ User: bob"),
        ),
        (
            (2, "b".to_string()),
            row(&img("two"), "Other: o2 ¦ User: bob"),
        ),
        (
            (2, "c".to_string()),
            row("User: bob", "Image: C:\\x\\two.exe ¦ Other: o2"),
        ),
        (
            (3, "d".to_string()),
            row("User: carol", "Image: C:\\x\\three.com ¦ Other: o3"),
        ),
    ]);
    assert_eq!(got, want);
}
