//! `search` on the project's generated log (`testdata/evtx/generated.evtx`): which
//! events each search finds is worked out here from the log's JSON twin
//! (`generated.jsonl`), by the rule docs/commands.md states (a keyword or the regex is
//! looked for inside each value of the record, System values included), and compared
//! with the EventRecordIDs scanner lists.

mod support;

use std::collections::BTreeSet;
use support::{root, scanner_utc, scratch, text};

const LOG: &str = "testdata/evtx/generated.evtx";
const TWIN: &str = "testdata/evtx/generated.jsonl";

fn events() -> Vec<serde_json::Value> {
    let t = std::fs::read_to_string(root().join(TWIN)).expect("read jsonl");
    t.lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every scalar value of `v`, as text.
fn values(v: &serde_json::Value, out: &mut Vec<String>) {
    match v {
        serde_json::Value::Object(m) => m.values().for_each(|x| values(x, out)),
        serde_json::Value::Array(a) => a.iter().for_each(|x| values(x, out)),
        serde_json::Value::String(s) => out.push(s.trim().to_string()),
        serde_json::Value::Number(n) => out.push(n.to_string()),
        serde_json::Value::Bool(b) => out.push(b.to_string()),
        serde_json::Value::Null => {}
    }
}

fn record_id(e: &serde_json::Value) -> u64 {
    e["Event"]["System"]["EventRecordID"].as_u64().unwrap()
}

/// The record ids of the events for which `keep` holds on their values.
fn want(keep: impl Fn(&[String], &serde_json::Value) -> bool) -> BTreeSet<u64> {
    events()
        .iter()
        .filter(|e| {
            let mut v = Vec::new();
            values(e, &mut v);
            keep(&v, e)
        })
        .map(record_id)
        .collect()
}

fn csv_rows(s: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(s.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// Runs `search -f LOG ARGS -U -q`; returns the CSV rows (header first).
fn search(args: &[&str]) -> Vec<Vec<String>> {
    let mut all = vec!["search", "-f", LOG, "-U", "-q"];
    all.extend_from_slice(args);
    let out = scanner_utc(&all);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    csv_rows(&text(&out.stdout))
}

fn ids(rows: &[Vec<String>]) -> BTreeSet<u64> {
    rows[1..].iter().map(|r| r[5].parse().unwrap()).collect()
}

#[test]
fn keywords_are_found_in_any_value_any_or_all_with_or_without_case() {
    let rows = search(&["-k", "svchost", "-k", "LCHEN", "-i"]);
    assert_eq!(
        rows[0],
        [
            "Timestamp",
            "EventTitle",
            "Hostname",
            "Channel",
            "Event ID",
            "Record ID",
            "AllFieldInfo",
            "EvtxFile"
        ]
    );
    let any = want(|v, _| {
        v.iter()
            .any(|x| x.to_lowercase().contains("svchost") || x.to_lowercase().contains("lchen"))
    });
    assert!(!any.is_empty());
    assert_eq!(ids(&rows), any);

    let all = want(|v, _| {
        v.iter().any(|x| x.to_lowercase().contains("svchost"))
            && v.iter().any(|x| x.to_lowercase().contains("lchen"))
    });
    assert!(!all.is_empty() && all.len() < any.len());
    assert_eq!(
        ids(&search(&["-k", "svchost", "-k", "LCHEN", "-i", "-a"])),
        all
    );

    // Without -i the case must match: "LCHEN" is nowhere, "svchost" still is.
    let sensitive = want(|v, _| {
        v.iter()
            .any(|x| x.contains("svchost") || x.contains("LCHEN"))
    });
    assert_eq!(ids(&search(&["-k", "svchost", "-k", "LCHEN"])), sensitive);
    assert!(sensitive.len() < any.len());
}

#[test]
fn a_regex_and_field_filters_narrow_the_events() {
    // `svc[h]ost` is found wherever `svchost` is.
    let rows = search(&["-r", "svc[h]ost"]);
    assert_eq!(
        ids(&rows),
        want(|v, _| v.iter().any(|x| x.contains("svchost")))
    );

    // -F EventID:1 keeps Sysmon process creations (EventID is a System field through
    // the alias table); a wildcard pattern must match the whole value.
    let one = want(|v, e| {
        e["Event"]["System"]["EventID"] == 1 && v.iter().any(|x| x.contains("svchost"))
    });
    assert!(!one.is_empty());
    assert_eq!(ids(&search(&["-k", "svchost", "-F", "EventID:1"])), one);
    let image = want(|v, e| {
        e["Event"]["EventData"]["Image"]
            .as_str()
            .is_some_and(|i| i.starts_with("C:\\Windows\\") && i.ends_with("svchost.exe"))
            && v.iter().any(|x| x.contains("svchost"))
    });
    assert_eq!(
        ids(&search(&[
            "-k",
            "svchost",
            "-F",
            "Image:C:\\Windows\\*svchost.exe"
        ])),
        image
    );
    // Case-sensitive, as 3.9.0's.
    assert!(ids(&search(&["-k", "svchost", "-F", "Image:c:\\windows\\*"])).is_empty());
}

#[test]
fn the_time_range_and_sort_order_hold() {
    let all = search(&["-k", "corp", "-i", "-s"]);
    let times: Vec<&String> = all[1..].iter().map(|r| &r[0]).collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted, "-s sorts by time");
    assert!(times.len() > 4);
    let start = times[2].clone();
    let end = times[times.len() - 3].clone();
    let rows = search(&[
        "-k",
        "corp",
        "-i",
        "--timeline-start",
        &start,
        "--timeline-end",
        &end,
    ]);
    let inside: BTreeSet<u64> = all[1..]
        .iter()
        .filter(|r| r[0] >= start && r[0] <= end)
        .map(|r| r[5].parse().unwrap())
        .collect();
    assert_eq!(ids(&rows), inside);
    assert!(inside.len() < all.len() - 1);
}

#[test]
fn json_lines_hold_one_valid_object_a_line_and_json_an_array() {
    let dir = scratch("search-json");
    let out_l = dir.join("s.jsonl");
    let out_j = dir.join("s.json");
    for (flag, out) in [("-L", &out_l), ("-J", &out_j)] {
        let o = scanner_utc(&[
            "search",
            "-f",
            LOG,
            "-k",
            "svchost",
            "-U",
            "-q",
            flag,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    }
    let expected = want(|v, _| v.iter().any(|x| x.contains("svchost")));
    let lines = std::fs::read_to_string(&out_l).unwrap();
    let objs: Vec<serde_json::Value> = lines
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line one JSON object"))
        .collect();
    let got: BTreeSet<u64> = objs
        .iter()
        .map(|o| o["Record ID"].as_u64().unwrap())
        .collect();
    assert_eq!(got, expected);
    let keys: Vec<&String> = objs[0].as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 8);
    assert!(objs[0]["AllFieldInfo"].is_object());
    let arr: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&out_j).unwrap()).expect("one JSON array");
    assert_eq!(arr.as_array().unwrap().len(), expected.len());
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_bad_regex_or_filter_is_an_error_naming_it() {
    let out = scanner_utc(&["search", "-f", LOG, "-r", "(unclosed", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("-r: not a regular expression"),
        "{}",
        text(&out.stderr)
    );
    let out = scanner_utc(&["search", "-f", LOG, "-k", "x", "-F", "NoColon", "-q"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("-F 'NoColon'"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_damaged_file_is_reported_and_the_others_are_searched() {
    let dir = scratch("search-damaged");
    std::fs::copy(root().join(LOG), dir.join("good.evtx")).unwrap();
    // Not an event log, under an EVTX name.
    std::fs::write(dir.join("bad.evtx"), b"not an event log\n".repeat(4096)).unwrap();
    let out_file = dir.join("out.csv");
    let args = [
        "search",
        "-d",
        dir.to_str().unwrap(),
        "-k",
        "svchost",
        "-U",
        "-q",
        "-o",
        out_file.to_str().unwrap(),
    ];
    let out = scanner_utc(&args);
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert!(
        text(&out.stderr).contains("bad.evtx"),
        "{}",
        text(&out.stderr)
    );
    let rows = csv_rows(&std::fs::read_to_string(&out_file).unwrap());
    let expected = want(|v, _| v.iter().any(|x| x.contains("svchost")));
    assert_eq!(ids(&rows), expected);
    // The output exists now: refused without -C, and left as it was.
    let out = scanner_utc(&args);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("out.csv"),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(csv_rows(&std::fs::read_to_string(&out_file).unwrap()), rows);
    let _ = std::fs::remove_dir_all(&dir);
}
