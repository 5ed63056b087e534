//! `log-integrity` end to end: a folder of logs written by the project's EVTX writer,
//! each with one planted fault (records deleted from the middle, a cleared log, a
//! stopped service, a dirty header, a flipped byte, records left in slack, a clock set
//! back) and a clean one, gives exactly the planted findings, as JSON Lines and CSV; a
//! file that is not a log is an input error naming it, and the rest is still checked.

mod support;

use std::path::Path;
use support::planted::plant;
use support::{scanner_utc, scratch, text};

#[test]
fn planted_faults_give_exactly_their_findings() {
    let dir = scratch("log-integrity");
    plant(&dir);
    let out = dir.join("found.jsonl");
    let d = dir.display().to_string();
    let o = out.display().to_string();
    let args = ["log-integrity", "-d", &d, "-x", "--json", "-o", &o, "-U"];
    let run = scanner_utc(&args);
    assert_eq!(run.status.code(), Some(3), "{}", text(&run.stderr));
    let stderr = text(&run.stderr);
    assert!(
        stderr.contains("not-a-log.evtx") && stderr.contains("not an EVTX file"),
        "{stderr}"
    );
    assert!(
        stderr.contains("log-integrity: 7 findings in 7 of 9 files"),
        "{stderr}"
    );
    let mut rows: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let file = Path::new(v["File"].as_str().unwrap()).file_name().unwrap();
            let file = file.to_string_lossy();
            format!(
                "{file} | {} | {} | {} | {}-{} | {} | {} | {}",
                v["Finding"].as_str().unwrap(),
                v["Severity"].as_str().unwrap(),
                v["Channel"],
                v["FirstRecordID"],
                v["LastRecordID"],
                v["FirstTime"],
                v["LastTime"],
                v["Details"].as_str().unwrap()
            )
        })
        .collect();
    rows.sort();
    let t = |m: &str| format!("\"2024-01-01 {m}:00.000 +00:00\"");
    let want = [
        format!(
            "cleared.evtx | log cleared | certain | \"Security\" | 1-1 | {} | {} | EventID 1102",
            t("00:00"),
            t("00:00")
        ),
        format!(
            "clock.evtx | time backwards | possible | \"Security\" | 10-11 | {} | {} | back by 4140s",
            t("01:49"),
            t("00:40")
        ),
        format!(
            "deleted.evtx | record id gap | likely | \"Security\" | 10-14 | {} | {} | 3 records missing",
            t("00:09"),
            t("00:10")
        ),
        "dirty.evtx | dirty file header | expected | null | null-null | null | null | the log was open or not closed cleanly".to_string(),
        "flipped.evtx | chunk records checksum | certain | null | 1-30 | null | null | ".to_string(),
        format!(
            "service.evtx | logging stopped | possible | \"System\" | 2-3 | {} | {} | EventID 6006, for 1800s",
            t("00:01"),
            t("00:31")
        ),
        format!(
            "slack.evtx | records in slack space | possible | \"Security\" | 28-30 | {} | {} | 3 records recovered",
            t("00:27"),
            t("00:29")
        ),
    ];
    assert_eq!(rows.len(), 7, "{rows:#?}");
    for (got, want) in rows
        .iter()
        .filter(|r| !r.starts_with("flipped"))
        .zip(want.iter().filter(|w| !w.starts_with("flipped")))
    {
        assert_eq!(got, want);
    }
    let flipped: Vec<&String> = rows.iter().filter(|r| r.starts_with("flipped")).collect();
    assert_eq!(flipped.len(), 1, "{rows:#?}");
    assert!(flipped[0].starts_with(&want[4]), "{}", flipped[0]);
    // The CSV says the same, under its header.
    let csv = dir.join("found.csv");
    let c = csv.display().to_string();
    let run = scanner_utc(&["log-integrity", "-d", &d, "-x", "-o", &c, "-q"]);
    assert_eq!(run.status.code(), Some(3));
    let csv = std::fs::read_to_string(&csv).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("File,Finding,Severity,Channel,Chunk,FirstRecordID,LastRecordID,FirstTime,LastTime,Details")
    );
    assert_eq!(lines.count(), 7);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A log inside a zip has its records checked (the gap planted in it found, named by
/// archive and member) and no structure check: no input error for the archive.
#[test]
fn a_logs_records_in_an_archive_are_checked_without_an_error() {
    use support::planted::{log, logons};
    let dir = scratch("log-integrity-zip");
    let mut deleted = logons(0, 10);
    deleted.extend([None, None, None]);
    deleted.extend(logons(10, 20));
    let bytes = log("Security", &deleted, Default::default());
    let zip = dir.join("collection.zip");
    let mut w = zip::ZipWriter::new(std::fs::File::create(&zip).unwrap());
    let opts = zip::write::SimpleFileOptions::default();
    w.start_file("Logs/Security.evtx", opts).unwrap();
    std::io::Write::write_all(&mut w, &bytes).unwrap();
    w.finish().unwrap();
    let z = zip.display().to_string();
    let run = scanner_utc(&["log-integrity", "-f", &z, "--json", "-U"]);
    let stderr = text(&run.stderr);
    assert_eq!(run.status.code(), Some(0), "{stderr}");
    assert!(!stderr.contains("input error"), "{stderr}");
    let rows: Vec<serde_json::Value> = text(&run.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["Finding"], "record id gap", "{rows:?}");
    let file = rows[0]["File"].as_str().unwrap();
    assert!(
        file.ends_with("collection.zip/Logs/Security.evtx"),
        "{file}"
    );
}
