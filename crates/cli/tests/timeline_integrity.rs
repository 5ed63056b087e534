//! `--integrity` on the timelines: the planted logs of the log-integrity tests
//! (`support::planted`) give exactly their findings as timeline rows, at the time each
//! concerns, with their own title, level and Details, sorted with the detections, in
//! CSV (every profile) and JSON / JSON Lines; without the flag there are none; the
//! summary counts them.

mod support;

use support::planted::plant;
use support::{scanner_utc, scratch, text};

/// The CSV's header and rows.
fn parse_csv(b: &[u8]) -> (Vec<String>, Vec<Vec<String>>) {
    let mut r = csv::ReaderBuilder::new().from_reader(b);
    let header = r.headers().unwrap().iter().map(String::from).collect();
    let rows = r
        .records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect();
    (header, rows)
}

fn col(header: &[String], name: &str) -> usize {
    header.iter().position(|h| h == name).unwrap()
}

/// The planted findings, as `file | title | level | channel | event id | record id |
/// time | details` (the flipped chunk's CRC32s left out).
fn want() -> Vec<String> {
    let at = |m: &str| format!("2024-01-01 {m}:00.000 +00:00");
    let mut w = vec![
        format!("cleared.evtx | Log integrity: log cleared | high | Sec | 1102 | 1 | {} | Severity: certain ¦ RecordID: 1", at("00:00")),
        format!("clock.evtx | Log integrity: time backwards | low | Sec | - | 10 | {} | Severity: possible ¦ RecordIDs: 10-11 ¦ Back: 4140s", at("01:49")),
        format!("deleted.evtx | Log integrity: record id gap | med | Sec | - | 10 | {} | Severity: likely ¦ RecordIDs: 10-14 ¦ Elapsed: 60s ¦ Missing: 3", at("00:09")),
        format!("dirty.evtx | Log integrity: dirty file header | info | - | - | - | {} | Severity: expected", at("00:04")),
        format!("flipped.evtx | Log integrity: chunk records checksum | high | - | - | 1 | {} | Severity: certain ¦ Chunk: 0 ¦ RecordIDs: 1-30 ¦ Elapsed: 1740s ¦ Stored: ", at("00:00")),
        format!("service.evtx | Log integrity: logging stopped | low | Sys | 6006 | 2 | {} | Severity: possible ¦ RecordIDs: 2-3 ¦ For: 1800s", at("00:01")),
        format!("slack.evtx | Log integrity: records in slack space | low | Sec | - | 28 | {} | Severity: possible ¦ RecordIDs: 28-30 ¦ Elapsed: 120s ¦ Records: 3", at("00:27")),
    ];
    w.sort();
    w
}

/// The integrity rows of a CSV timeline, as [`want`] writes them, sorted by file.
fn integrity_rows(header: &[String], rows: &[Vec<String>]) -> Vec<String> {
    let c = |n| col(header, n);
    let mut got: Vec<String> = rows
        .iter()
        .filter(|r| r[c("RuleTitle")].starts_with("Log integrity: "))
        .map(|r| {
            let file = r[c("EvtxFile")]
                .rsplit(['/', '\\'])
                .next()
                .unwrap()
                .to_string();
            let details = r[c("Details")].clone();
            // The flipped chunk's CRC32s are whatever the flip made them.
            let details = match details.find("Stored: ") {
                Some(i) => details[..i + "Stored: ".len()].to_string(),
                None => details,
            };
            format!(
                "{file} | {} | {} | {} | {} | {} | {} | {details}",
                r[c("RuleTitle")],
                r[c("Level")],
                r[c("Channel")],
                r[c("EventID")],
                r[c("RecordID")],
                r[c("Timestamp")]
            )
        })
        .collect();
    got.sort();
    got
}

#[test]
fn planted_faults_are_timeline_rows_in_every_profile() {
    let dir = scratch("timeline-integrity");
    plant(&dir);
    let d = dir.display().to_string();
    let run = scanner_utc(&[
        "csv-timeline",
        "-d",
        &d,
        "-x",
        "--integrity",
        "-p",
        "verbose",
        "-w",
    ]);
    assert_eq!(run.status.code(), Some(3), "{}", text(&run.stderr));
    let stderr = text(&run.stderr);
    assert!(stderr.contains("not-a-log.evtx"), "{stderr}");
    let (header, rows) = parse_csv(&run.stdout);
    assert_eq!(integrity_rows(&header, &rows), want());
    // Sorted with the detections, by time.
    let times: Vec<&String> = rows.iter().map(|r| &r[col(&header, "Timestamp")]).collect();
    assert!(times.windows(2).all(|w| w[0] <= w[1]), "{times:?}");
    assert!(rows.len() > 7, "the logons' detections are there too");
    // The summary counts them as detections: their levels and titles.
    assert!(stderr.contains("Log integrity: log cleared"), "{stderr}");

    // Spilled to disk and merged back (every batch spilled), the same timeline.
    let spilled = scanner_utc(&[
        "csv-timeline",
        "-d",
        &d,
        "-x",
        "--integrity",
        "-p",
        "verbose",
        "-w",
        "-q",
        "-N",
        "--sort-memory",
        "0",
    ]);
    assert_eq!(text(&spilled.stdout), text(&run.stdout));

    // Every profile writes them.
    for p in [
        "minimal",
        "standard",
        "super-verbose",
        "all-field-info-verbose",
        "timesketch-verbose",
    ] {
        let run = scanner_utc(&[
            "csv-timeline",
            "-d",
            &d,
            "-x",
            "--integrity",
            "-p",
            p,
            "-w",
            "-q",
            "-N",
        ]);
        let (header, rows) = parse_csv(&run.stdout);
        let title = if header.contains(&"RuleTitle".to_string()) {
            "RuleTitle"
        } else {
            "message"
        };
        let n = rows
            .iter()
            .filter(|r| r[col(&header, title)].starts_with("Log integrity: "))
            .count();
        assert_eq!(n, 7, "profile {p}: {}", text(&run.stderr));
    }

    // Without the flag, none.
    let run = scanner_utc(&[
        "csv-timeline",
        "-d",
        &d,
        "-x",
        "-p",
        "verbose",
        "-w",
        "-q",
        "-N",
    ]);
    let (header, rows) = parse_csv(&run.stdout);
    assert!(integrity_rows(&header, &rows).is_empty());

    // JSON Lines: the same rows, Details as an object.
    let run = scanner_utc(&[
        "json-timeline",
        "-d",
        &d,
        "-x",
        "--integrity",
        "-L",
        "-p",
        "verbose",
        "-w",
        "-q",
        "-N",
    ]);
    let mut got: Vec<String> = text(&run.stdout)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| {
            v["RuleTitle"]
                .as_str()
                .unwrap()
                .starts_with("Log integrity: ")
        })
        .map(|v| {
            let file = v["EvtxFile"]
                .as_str()
                .unwrap()
                .rsplit(['/', '\\'])
                .next()
                .unwrap()
                .to_string();
            format!(
                "{file} | {} | {} | {}",
                v["RuleTitle"], v["Level"], v["Details"]["Severity"]
            )
        })
        .collect();
    got.sort();
    let titles: Vec<String> = want()
        .iter()
        .map(|w| {
            let f: Vec<&str> = w.split(" | ").collect();
            let severity = f[7]
                .split(" ¦ ")
                .next()
                .unwrap()
                .trim_start_matches("Severity: ");
            format!("{} | \"{}\" | \"{}\" | \"{severity}\"", f[0], f[1], f[2])
        })
        .collect();
    assert_eq!(got, titles);
    // And JSON, one object per row.
    let run = scanner_utc(&[
        "json-timeline",
        "-d",
        &d,
        "-x",
        "--integrity",
        "-w",
        "-q",
        "-N",
    ]);
    let n = text(&run.stdout).matches("\"Log integrity: ").count();
    assert_eq!(n, 7, "{}", text(&run.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}
