//! End-to-end tests of the timeline's outputs and options (issue 8): profiles, cell
//! styles, JSON, time formats, filters, summary, progress bar, `-T` and `-H`.

mod support;
use support::*;

use std::process::Command;

/// Runs a demo timeline (JSON input) with extra arguments; returns the header and rows.
fn demo(extra: &[&str]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut args = vec!["csv-timeline", "-J", "-d", "testdata/demo", "-q"];
    args.extend_from_slice(extra);
    let o = scanner_utc(&args);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    parse_csv(&o.stdout)
}

fn parse_csv(b: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::ReaderBuilder::new().has_headers(true).from_reader(b);
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

fn col(header: &[String], name: &str) -> usize {
    header
        .iter()
        .position(|h| h == name)
        .unwrap_or_else(|| panic!("no {name} in {header:?}"))
}

const DEMO_ROWS: usize = 61;

#[test]
fn every_profile_has_hayabusas_columns_in_order() {
    let want: &[(&str, &str)] = &[
        ("minimal", "Timestamp,RuleTitle,Level,Computer,Channel,EventID,RecordID,Details"),
        ("standard", "Timestamp,RuleTitle,Level,Computer,Channel,EventID,RecordID,Details,ExtraFieldInfo,RuleID"),
        ("verbose", "Timestamp,RuleTitle,Level,Computer,Channel,EventID,MitreTactics,MitreTags,OtherTags,RecordID,Details,ExtraFieldInfo,RuleFile,RuleID,EvtxFile"),
        ("all-field-info", "Timestamp,RuleTitle,Level,Computer,Channel,EventID,RecordID,AllFieldInfo,RuleFile,RuleID,EvtxFile"),
        ("all-field-info-verbose", "Timestamp,RuleTitle,Level,Computer,Channel,EventID,MitreTactics,MitreTags,OtherTags,RecordID,AllFieldInfo,RuleFile,RuleID,EvtxFile"),
        ("super-verbose", "Timestamp,RuleTitle,Level,Computer,Channel,EventID,RuleAuthor,RuleModifiedDate,Status,RecordID,Details,ExtraFieldInfo,MitreTactics,MitreTags,OtherTags,Provider,RuleCreationDate,RuleFile,RuleID,EvtxFile"),
        ("timesketch-minimal", "datetime,timestamp_desc,message,Level,Computer,Channel,EventID,MitreTactics,MitreTags,OtherTags,RecordID,Details,RuleFile,RuleID,EvtxFile"),
        ("timesketch-verbose", "datetime,timestamp_desc,message,Level,Computer,Channel,EventID,MitreTactics,MitreTags,OtherTags,RecordID,Details,ExtraFieldInfo,RuleFile,RuleID,EvtxFile"),
    ];
    let listed = text(&scanner_utc(&["list-profiles"]).stdout);
    for (name, cols) in want {
        let (header, rows) = demo(&["-p", name, "-U"]);
        assert_eq!(header.join(","), *cols, "{name}");
        assert_eq!(rows.len(), DEMO_ROWS, "{name}");
        assert!(rows.iter().all(|r| r.len() == header.len()));
        assert!(
            listed
                .lines()
                .any(|l| l.starts_with(name) && l.ends_with(&cols.replace(',', ", "))),
            "list-profiles shows {name}: {listed}"
        );
    }
    // Cells that only the wider profiles have.
    let (h, rows) = demo(&["-p", "super-verbose", "-U"]);
    let lolbin = rows
        .iter()
        .find(|r| r[col(&h, "EventID")] == "4688")
        .unwrap();
    assert_eq!(lolbin[col(&h, "Provider")], "Sec");
    assert!(["stable", "test"].contains(&lolbin[col(&h, "Status")].as_str()));
    assert!(!lolbin[col(&h, "RuleAuthor")].is_empty());
    let (h, rows) = demo(&["-p", "timesketch-minimal", "-U"]);
    assert!(rows
        .iter()
        .all(|r| r[col(&h, "timestamp_desc")] == "hayabusa"));
    let (h, rows) = demo(&["-p", "all-field-info", "-U"]);
    let all = &rows
        .iter()
        .find(|r| r[col(&h, "EventID")] == "4720")
        .unwrap()[col(&h, "AllFieldInfo")];
    assert!(all.contains("TargetUserName: svc_backup ¦ "), "{all}");
}

#[test]
fn multiline_tab_and_no_abbreviation_styles() {
    let (h, plain) = demo(&["-p", "verbose", "-U"]);
    let d = col(&h, "Details");
    assert!(plain.iter().any(|r| r[d].contains(" ¦ ")));
    let (_, multi) = demo(&["-p", "verbose", "-U", "-M"]);
    for (a, b) in plain.iter().zip(&multi) {
        assert_eq!(a[d].replace(" ¦ ", "\r\n"), b[d]);
        assert!(!b[col(&h, "MitreTags")].contains('¦'));
    }
    let (_, tab) = demo(&["-p", "verbose", "-U", "-S"]);
    for (a, b) in plain.iter().zip(&tab) {
        assert_eq!(a[d].replace(" ¦ ", "\t"), b[d]);
    }
    let (h, full) = demo(&["-p", "super-verbose", "-U", "-b"]);
    let levels: std::collections::BTreeSet<&str> =
        full.iter().map(|r| r[col(&h, "Level")].as_str()).collect();
    assert_eq!(
        levels,
        ["critical", "high", "informational", "low", "medium"]
            .into_iter()
            .collect()
    );
    assert!(full
        .iter()
        .any(|r| r[col(&h, "Channel")] == "Microsoft-Windows-Sysmon/Operational"));
    assert!(full
        .iter()
        .any(|r| r[col(&h, "Provider")] == "Microsoft-Windows-Security-Auditing"));
}

#[test]
fn no_field_data_mapping_shows_recorded_values() {
    let dir = scratch("fdm");
    std::fs::create_dir_all(dir.join("data_mapping")).unwrap();
    std::fs::write(
        dir.join("data_mapping/sec_4624.yaml"),
        "Channel: Security\nEventID: 4624\nRewriteFieldData:\n  LogonType:\n    - '3': 'NETWORK'\n",
    )
    .unwrap();
    let c = dir.to_str().unwrap();
    let (h, mapped) = demo(&["-U", "-c", c]);
    let (_, raw) = demo(&["-U", "-c", c, "-F"]);
    let row = |rows: &[Vec<String>]| -> String {
        let r = rows
            .iter()
            .find(|r| r[col(&h, "RuleTitle")].starts_with("NTLM Network Logon"))
            .unwrap();
        format!("{} {}", r[col(&h, "Details")], r[col(&h, "ExtraFieldInfo")])
    };
    assert!(row(&mapped).contains("NETWORK"), "{}", row(&mapped));
    assert!(!row(&raw).contains("NETWORK"), "{}", row(&raw));
}

#[test]
fn remove_duplicates_keeps_one_of_identical_detections() {
    let dir = scratch("dup");
    for n in ["a.jsonl", "b.jsonl"] {
        std::fs::copy(root().join("testdata/demo/attack.jsonl"), dir.join(n)).unwrap();
    }
    let d = dir.to_str().unwrap();
    let run = |extra: &[&str]| {
        let mut args = vec!["csv-timeline", "-J", "-d", d, "-q", "-U", "-p", "verbose"];
        args.extend_from_slice(extra);
        parse_csv(&scanner_utc(&args).stdout).1.len()
    };
    assert_eq!(run(&[]), 2 * DEMO_ROWS);
    assert_eq!(run(&["-X"]), DEMO_ROWS);
}

#[test]
fn json_timeline_writes_details_as_objects_and_jsonl_per_line() {
    let o = scanner_utc(&[
        "json-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-q",
        "-U",
        "-p",
        "verbose",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // A stream of objects, as Hayabusa writes it (not an array).
    let rows: Vec<serde_json::Value> = serde_json::Deserializer::from_slice(&o.stdout)
        .into_iter()
        .collect::<Result<_, _>>()
        .expect("a stream of JSON objects");
    assert_eq!(rows.len(), DEMO_ROWS);
    let svc = rows
        .iter()
        .find(|r| r["EventID"] == 7045)
        .expect("a 7045 row, EventID a number");
    assert_eq!(svc["Details"]["Svc"], "PSEXESVC");
    assert!(svc["RecordID"].is_u64());
    assert!(svc["MitreTactics"].is_array());
    // verbose's 15 columns less OtherTags, which this rule has none of: an empty
    // column is left out, as Hayabusa 4.0 leaves it.
    let keys: Vec<&String> = svc.as_object().unwrap().keys().collect();
    assert_eq!(keys.len(), 14);
    assert!(svc.get("OtherTags").is_none());
    let dir = scratch("jsonl");
    let out = dir.join("t.jsonl");
    let o = scanner_utc(&[
        "json-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-q",
        "-U",
        "-L",
        "-p",
        "all-field-info",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let body = std::fs::read_to_string(&out).unwrap();
    assert!(body.ends_with('\n'));
    let lines: Vec<serde_json::Value> = body
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), DEMO_ROWS);
    assert!(lines.iter().all(|l| l["AllFieldInfo"].is_object()));
    let o = scanner_utc(&["csv-timeline", "-J", "-d", "testdata/demo", "-q", "-L"]);
    assert_ne!(o.status.code(), Some(0), "-L belongs to json-timeline");
}

#[test]
fn time_formats() {
    let first = |flags: &[&str]| demo(flags).1[0][0].clone();
    assert_eq!(first(&[]), "2024-03-12 09:14:30.805 +00:00");
    assert_eq!(first(&["-U"]), "2024-03-12 09:14:30.805 +00:00");
    let iso = first(&["-O"]);
    assert!(
        iso.starts_with("2024-03-12T09:14:30.805") && iso.ends_with('Z'),
        "{iso}"
    );
    let rfc3339 = first(&["--RFC-3339"]);
    assert!(
        rfc3339.starts_with("2024-03-12 09:14:30.805")
            && rfc3339.ends_with("+00:00")
            && rfc3339.len() == 32,
        "{rfc3339}"
    );
    assert_eq!(first(&["--RFC-2822"]), "Tue, 12 Mar 2024 09:14:30 +00:00");
    assert_eq!(first(&["--US-time"]), "03-12-2024 09:14:30.805 AM +00:00");
    assert_eq!(
        first(&["--US-military-time"]),
        "03-12-2024 09:14:30.805 +00:00"
    );
    assert_eq!(
        first(&["--European-time"]),
        "12-03-2024 09:14:30.805 +00:00"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_scanner"))
        .args(["csv-timeline", "-J", "-d", "testdata/demo", "-q"])
        .current_dir(root())
        .env("TZ", "Asia/Tokyo")
        .output()
        .unwrap();
    assert!(
        text(&o.stdout).contains("\"2024-03-12 18:14:30.805 +09:00\""),
        "local time by default"
    );
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-q",
        "-U",
        "-O",
    ]);
    assert_ne!(o.status.code(), Some(0), "one time format at a time");
}

#[test]
fn record_filters() {
    let count = |flags: &[&str]| demo(flags).1.len();
    let (h, rows) = demo(&[
        "-U",
        "--timeline-start",
        "2024-03-12 09:20:00 +00:00",
        "--timeline-end",
        "2024/03/12 18:25:00 +0900",
    ]);
    assert!(!rows.is_empty() && rows.len() < DEMO_ROWS);
    assert!(rows
        .iter()
        .all(|r| r[0].as_str() >= "2024-03-12 09:20:00" && r[0].as_str() <= "2024-03-12 09:25:00"));
    assert_eq!(count(&["--time-offset", "1d"]), 0);
    assert_eq!(count(&["--time-offset", "100y"]), DEMO_ROWS);
    let (_, rows) = demo(&["--include-eid", "4104,7045"]);
    assert!(
        rows.len() >= 5
            && rows
                .iter()
                .all(|r| r[col(&h, "EventID")] == "4104" || r[col(&h, "EventID")] == "7045")
    );
    let (_, rows) = demo(&["--exclude-eid", "4104"]);
    assert!(rows.len() < DEMO_ROWS && rows.iter().all(|r| r[col(&h, "EventID")] != "4104"));
    let (_, rows) = demo(&["--include-computer", "dc01.corp.example"]);
    assert!(
        !rows.is_empty()
            && rows
                .iter()
                .all(|r| r[col(&h, "Computer")] == "DC01.corp.example")
    );
    let (_, rows) = demo(&["--exclude-computer", "DC01.corp.example,FS01.corp.example"]);
    assert!(
        !rows.is_empty()
            && rows
                .iter()
                .all(|r| !r[col(&h, "Computer")].starts_with("DC01")
                    && !r[col(&h, "Computer")].starts_with("FS01"))
    );
    // -E keeps the EventIDs of the config's list: the built-in one has all of the demo's;
    // a config folder's own list decides when it has one.
    assert_eq!(count(&["-E"]), DEMO_ROWS);
    let dir = scratch("eids");
    std::fs::write(
        dir.join("target_event_IDs.txt"),
        "# only script blocks\n4104\n",
    )
    .unwrap();
    let (_, rows) = demo(&["-E", "-c", dir.to_str().unwrap()]);
    assert!(!rows.is_empty() && rows.iter().all(|r| r[col(&h, "EventID")] == "4104"));
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-q",
        "--timeline-start",
        "soon",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("--timeline-start"));
}

#[test]
fn rule_selection_by_level_tag_category_and_status() {
    let (h, rows) = demo(&["-e", "high"]);
    assert!(!rows.is_empty() && rows.iter().all(|r| r[col(&h, "Level")] == "high"));
    let (h, rows) = demo(&["-p", "verbose", "--include-tag", "attack.credential-access"]);
    assert!(
        !rows.is_empty()
            && rows
                .iter()
                .all(|r| r[col(&h, "MitreTactics")].contains("CredAccess"))
    );
    let (_, rows) = demo(&["-p", "verbose", "--exclude-tag", "attack.credential-access"]);
    assert!(
        rows.len() < DEMO_ROWS
            && rows
                .iter()
                .all(|r| !r[col(&h, "MitreTactics")].contains("CredAccess"))
    );
    let (h, rows) = demo(&["--include-category", "ps_script"]);
    assert!(!rows.is_empty() && rows.iter().all(|r| r[col(&h, "Channel")] == "PwSh"));
    let (_, rows) = demo(&["--exclude-category", "ps_script,process_creation"]);
    assert!(!rows.is_empty() && rows.iter().all(|r| r[col(&h, "Channel")] != "PwSh"));
    let (h, rows) = demo(&["-p", "super-verbose", "--include-status", "test"]);
    assert!(!rows.is_empty() && rows.iter().all(|r| r[col(&h, "Status")] == "test"));
    let (_, rows) = demo(&["-p", "super-verbose", "--exclude-status", "test"]);
    assert!(!rows.is_empty() && rows.iter().all(|r| r[col(&h, "Status")] == "stable"));
}

#[test]
fn files_no_rule_can_match_are_skipped_unless_a() {
    // A synthetic log of 2.8 MiB whose first record is a Security event; its other
    // channels include one System event that rules/system detects.
    let dir = scratch("chan");
    let big = dir.join("big.evtx");
    let o = scanner_utc(&[
        "evtx",
        "generate",
        "--records",
        "3000",
        "--seed",
        "1",
        "-o",
        big.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let d = dir.to_str().unwrap();
    let run = |rules: &str, extra: &[&str]| {
        let mut args = vec![
            "csv-timeline",
            "-d",
            d,
            "-r",
            rules,
            "-U",
            "-o",
            discard(),
            "-C",
        ];
        args.extend_from_slice(extra);
        let o = scanner_utc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        text(&o.stderr)
    };
    let s = run("rules/system", &[]);
    assert!(
        s.contains("Files scanned: 0 (") && s.contains("1 skipped"),
        "{s}"
    );
    let s = run("rules/system", &["-a"]);
    assert!(
        s.contains("Files scanned: 1 (") && !s.contains("skipped"),
        "{s}"
    );
    assert!(s.contains("Total | Unique detections: 1 | 1"), "{s}");
    let s = run("rules/security", &[]);
    assert!(
        s.contains("Files scanned: 1 (") && !s.contains("skipped"),
        "{s}"
    );
    assert!(run("rules/system", &["-A"]).contains("1 skipped"));
    // Files under 1 MiB are scanned without the check (a Security log, no Sysmon rule
    // for it); the big one is skipped.
    let s = run("rules/sysmon", &["-f", "testdata/evtx/security.evtx"]);
    assert!(s.contains("Files scanned: 1 (0.1 MiB); 1 skipped"), "{s}");
}

#[test]
fn summary_counts_levels_alerts_dates_computers_and_errors() {
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-U",
        "-o",
        discard(),
        "-C",
    ]);
    let s = text(&o.stderr);
    assert!(!s.contains('\x1b'), "no colour when not a terminal");
    for want in [
        "Results Summary:",
        "Events with hits / Total events: ",
        &format!("Total | Unique detections: {DEMO_ROWS} | "),
        "Total | Unique critical detections: 3 (",
        "Dates with most total detections:",
        "critical: 2024-03-12 (3)",
        "Top 5 computers with most detections:",
        "Top critical alerts:\n  Credential Dumping Command Line (3)",
        "First detection: 2024-03-12 09:14:30.805 +00:00",
        "records/s",
    ] {
        assert!(s.contains(want), "missing {want:?} in\n{s}");
    }
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-N",
        "-o",
        discard(),
        "-C",
    ]);
    assert!(!text(&o.stderr).contains("Results Summary"));
    let dir = scratch("errs");
    std::fs::write(dir.join("bad.jsonl"), "{not json\n").unwrap();
    let o = scanner_utc(&["csv-timeline", "-J", "-d", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    let s = text(&o.stderr);
    assert!(
        s.contains("Input errors: 1 in 1 file") && s.contains("bad.jsonl: line 1: invalid JSON"),
        "{s}"
    );
}

/// Runs the scanner under a pseudo-terminal (util-linux `script`), as a person would.
fn on_terminal(args: &str) -> Option<String> {
    if Command::new("script").arg("--version").output().is_err() {
        eprintln!("no `script`: terminal test skipped");
        return None;
    }
    let bin = env!("CARGO_BIN_EXE_scanner");
    let o = Command::new("script")
        .args(["-qec", &format!("{bin} {args} >/dev/null"), "/dev/null"])
        .current_dir(root())
        .env("TZ", "UTC")
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    Some(text(&o.stdout))
}

#[test]
fn colour_and_progress_bar_on_a_terminal_only() {
    let Some(s) = on_terminal("csv-timeline -J -d testdata/demo -U") else {
        return;
    };
    assert!(s.contains("\x1b[1;31mTotal | Unique critical"), "{s:?}");
    assert!(
        s.contains("files,") && s.contains("records/s, ETA"),
        "progress bar: {s:?}"
    );
    let s = on_terminal("csv-timeline -J -d testdata/demo -U -K").unwrap();
    assert!(!s.contains("\x1b[1;31m") && s.contains("Results Summary"));
    let s = on_terminal("csv-timeline -J -d testdata/demo -U -q").unwrap();
    assert!(
        !s.contains("ETA") && !s.contains("Results Summary"),
        "{s:?}"
    );
}

#[test]
fn frequency_timeline_in_the_terminal() {
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-U",
        "-T",
        "-N",
        "-o",
        discard(),
        "-C",
    ]);
    let s = text(&o.stderr);
    assert!(s.contains("Detection frequency timeline ("), "{s}");
    assert!(s.contains('█'), "{s}");
    assert!(
        s.contains("2024-03-12 09:14:30.805 +00:00") && s.contains("+---"),
        "{s}"
    );
}

#[test]
fn html_report_is_self_contained() {
    let dir = scratch("html");
    let page = dir.join("report.html");
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-U",
        "-q",
        "-o",
        discard(),
        "-C",
        "-H",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>"));
    assert!(!html.contains(" src=") && !html.contains("<link") && !html.contains("https://"));
    assert!(html.contains("<svg id=\"chart\"") && html.matches("class=\"bar ").count() > 5);
    assert!(
        html.contains("Credential Dumping Command Line") && html.contains("WS-FIN-07.corp.example")
    );
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-q",
        "-o",
        discard(),
        "-C",
        "-H",
        page.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "-C lets the report be replaced");
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-q",
        "-H",
        page.to_str().unwrap(),
    ]);
    assert_eq!(
        o.status.code(),
        Some(1),
        "an existing report is not overwritten without -C"
    );
}

#[test]
fn cpu_profile_needs_the_feature() {
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-q",
        "--cpu-profile",
        "/tmp/x.svg",
    ]);
    if cfg!(feature = "pprof") {
        return;
    }
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("--features pprof"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn options_on_the_attack_corpus() {
    let corpus = root().join("../shared/corpus/evtx-attack-samples");
    if !corpus.is_dir() {
        eprintln!("no ../shared corpus: skipped");
        return;
    }
    let c = corpus.to_str().unwrap();
    let o = scanner_utc(&[
        "json-timeline",
        "-d",
        c,
        "-q",
        "-L",
        "-p",
        "super-verbose",
        "-O",
        "-X",
        "--include-eid",
        "1,4688",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let lines: Vec<serde_json::Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert!(lines.len() > 10);
    assert!(lines
        .iter()
        .all(|l| l["EventID"] == 1 || l["EventID"] == 4688));
    assert!(lines
        .iter()
        .all(|l| l["Timestamp"].as_str().unwrap().ends_with('Z')));
}

#[test]
fn rule_stats_are_written_as_tsv() {
    let dir = scratch("stats");
    let tsv = dir.join("stats.tsv");
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-q",
        "-o",
        discard(),
        "-C",
        "--rule-stats",
        tsv.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let body = std::fs::read_to_string(&tsv).unwrap();
    assert!(body.starts_with("rule_id\ttitle\t"), "{body}");
    assert!(body.lines().count() > 5, "{body}");
}
