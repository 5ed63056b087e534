//! Inputs an attacker shaped, and run-level bounds: damaged logs whose errors repeat,
//! thread counts, symlinked folders, runs with nothing to scan, records without a
//! readable time, and `evtx write` given invalid times.

mod support;

use std::path::{Path, PathBuf};
use support::{discard, scanner_utc, scratch, text};

const FATAL: i32 = 1;
const INPUT_ERRORS: i32 = 3;

/// Writes a synthetic log of `records` records to `dir/name` with `scanner evtx generate`.
fn generated(dir: &Path, name: &str, records: u32) -> PathBuf {
    let path = dir.join(name);
    let out = scanner_utc(&[
        "evtx",
        "generate",
        "--records",
        &records.to_string(),
        "-o",
        path.to_str().unwrap(),
        "-C",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    path
}

/// The lines of standard error that report input errors.
fn input_error_lines(stderr: &[u8]) -> Vec<String> {
    text(stderr)
        .lines()
        .filter(|l| l.starts_with("input error: "))
        .map(str::to_string)
        .collect()
}

#[test]
fn repeated_chunk_errors_of_a_damaged_truncated_log_are_one_line_with_a_count() {
    let dir = scratch("collapse");
    let log = generated(&dir, "log.evtx", 3000);
    // Chunks 3 to 29 overwritten past their headers, and the file cut inside chunk 40:
    // each damaged chunk gives the same two errors, numbers aside.
    let mut bytes = std::fs::read(&log).unwrap();
    for c in 3..30 {
        let start = 4096 + 65536 * c;
        bytes[start + 512..start + 65536].fill(0xff);
    }
    bytes.truncate(4096 + 65536 * 40 + 1000);
    std::fs::write(&log, &bytes).unwrap();
    let path = log.to_str().unwrap();
    let out = scanner_utc(&["csv-timeline", "-f", path, "-o", discard(), "-C", "-q"]);
    assert_eq!(
        out.status.code(),
        Some(INPUT_ERRORS),
        "{}",
        text(&out.stderr)
    );
    let lines = input_error_lines(&out.stderr);
    // Two lines for chunks 3-29 (one per reason), two for chunk 40 (a record cut short,
    // and the chunk): 56 errors in all.
    assert_eq!(lines.len(), 4, "{lines:#?}");
    let record_magic = format!("input error: {path}: chunks 3\u{2013}29: Failed to read the record at offset 0x200 of chunk 3 ");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with(&record_magic) && l.contains(" (27 errors")),
        "{lines:#?}"
    );
    assert!(
        lines.iter().any(
            |l| l.contains(": chunks 3\u{2013}29: damaged string table (")
                && l.contains("; read without it (27 errors")
        ),
        "{lines:#?}"
    );
    assert!(
        lines.contains(&format!(
            "input error: {path}: chunk 40: truncated at 1000 of its 65536 bytes; its complete records read"
        )),
        "{lines:#?}"
    );
    // The summary counts every error, and lists three of the four lines.
    let out = scanner_utc(&["csv-timeline", "-f", path, "-o", discard(), "-C"]);
    let err = text(&out.stderr);
    assert!(err.contains("Input errors: 56 in 1 file"), "{err}");
    assert!(err.contains(": … and 1 more line of errors"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}

/// A rule for a channel the generated logs do not hold (Application), in `dir/rules`.
fn application_rules(dir: &Path) -> PathBuf {
    let rules = dir.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("application.yml"),
        "title: Any Application event\nid: 5b7b4a5e-7b1b-4c55-9d0f-1a2b3c4d5e6f\nstatus: test\nlevel: low\nlogsource:\n  product: windows\n  service: application\ndetection:\n  sel:\n    EventID: 1\n  condition: sel\n",
    )
    .unwrap();
    rules
}

#[test]
fn a_run_with_no_input_file_or_no_rule_fails_without_writing() {
    let dir = scratch("nothing");
    let empty = dir.join("empty");
    let no_rules = dir.join("no-rules");
    std::fs::create_dir_all(&empty).unwrap();
    std::fs::create_dir_all(&no_rules).unwrap();
    std::fs::write(empty.join("notes.txt"), "not a log").unwrap();
    let log = generated(&dir, "log.evtx", 50);
    let out_csv = dir.join("out.csv");
    let out = out_csv.to_str().unwrap();
    for cmd in ["csv-timeline", "json-timeline"] {
        let run = scanner_utc(&[cmd, "-d", empty.to_str().unwrap(), "-o", out]);
        assert_eq!(run.status.code(), Some(FATAL), "{}", text(&run.stderr));
        assert!(
            text(&run.stderr).contains(
                "error: no input file to scan: no .evtx, .json, .jsonl, .xml or .gz file in the folders and files given"
            ),
            "{}",
            text(&run.stderr)
        );
        assert!(!out_csv.exists(), "{cmd}: no output for an empty run");
        let run = scanner_utc(&[cmd, "-J", "-d", empty.to_str().unwrap(), "-o", out]);
        assert_eq!(run.status.code(), Some(FATAL), "{}", text(&run.stderr));
        assert!(text(&run.stderr).contains("no .evtx, .json, .jsonl, .xml or .gz file"));
        let run = scanner_utc(&[
            cmd,
            "-f",
            log.to_str().unwrap(),
            "-r",
            no_rules.to_str().unwrap(),
            "-o",
            out,
        ]);
        assert_eq!(run.status.code(), Some(FATAL), "{}", text(&run.stderr));
        assert!(
            text(&run.stderr).contains(
                "error: no rule to run: the rules given hold none that loads and passes the filters"
            ),
            "{}",
            text(&run.stderr)
        );
        assert!(!out_csv.exists(), "{cmd}: no output without rules");
    }
    // A file given that does not open: its error, then the run fails.
    let missing = dir.join("missing.evtx");
    let run = scanner_utc(&["csv-timeline", "-f", missing.to_str().unwrap(), "-o", out]);
    assert_eq!(run.status.code(), Some(FATAL));
    let err = text(&run.stderr);
    assert!(
        err.contains(&format!(
            "input error: {}: cannot open: ",
            missing.display()
        )),
        "{err}"
    );
    assert!(err.contains("error: no input file to scan"), "{err}");
    // Files read and left out because no rule reads their channel: a success, said so.
    // (Files under 1 MiB are scanned without a channel check.)
    let big = generated(&dir, "big.evtx", 1500);
    let rules = application_rules(&dir);
    let run = scanner_utc(&[
        "csv-timeline",
        "-f",
        big.to_str().unwrap(),
        "-r",
        rules.to_str().unwrap(),
        "-o",
        out,
    ]);
    assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
    assert!(
        text(&run.stderr).contains(
            "note: no file scanned: the 1 input file holds only channels no rule reads (-a scans them)"
        ),
        "{}",
        text(&run.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn threads_are_capped_with_one_warning_and_zero_means_one_per_core() {
    let dir = scratch("threads");
    let log = generated(&dir, "log.evtx", 300);
    let path = log.to_str().unwrap();
    let base = scanner_utc(&["csv-timeline", "-f", path, "-o", "-", "-q"]);
    assert!(base.status.success(), "{}", text(&base.stderr));
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    let many = scanner_utc(&["csv-timeline", "-f", path, "-o", "-", "-q", "-t", "20000"]);
    assert!(many.status.success(), "{}", text(&many.stderr));
    assert_eq!(many.stdout, base.stdout);
    let warning = format!(
        "warning: -t 20000: using {} threads, the most this machine's {cores} cores are given (4 per core)\n",
        cores * 4
    );
    assert_eq!(text(&many.stderr), warning);
    // The commands that read records without rules take the same cap.
    let metrics = scanner_utc(&["eid-metrics", "-f", path, "-q", "-t", "20000"]);
    assert!(metrics.status.success(), "{}", text(&metrics.stderr));
    assert_eq!(text(&metrics.stderr), warning);
    for n in ["0", "1"] {
        let run = scanner_utc(&["csv-timeline", "-f", path, "-o", "-", "-q", "-t", n]);
        assert!(run.status.success(), "{}", text(&run.stderr));
        assert_eq!(run.stdout, base.stdout, "-t {n}");
        assert_eq!(text(&run.stderr), "", "-t {n}: no warning");
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A JSON event (EventID 1) in the evtx crate's shape, record `id`, with `time` as its SystemTime.
fn json_event(id: u32, time: &str) -> String {
    format!(
        r#"{{"Event":{{"System":{{"Provider_attributes":{{"Name":"Test"}},"EventID":1,"Channel":"Security","Computer":"pc","EventRecordID":{id},"TimeCreated_attributes":{{"SystemTime":"{time}"}}}},"EventData":{{"A":"b"}}}}}}"#
    )
}

#[test]
fn evtx_write_refuses_an_invalid_time_naming_the_event_and_the_value() {
    let dir = scratch("write-time");
    let out = dir.join("out.evtx");
    let good = "2024-03-12T09:14:02.255511Z";
    let jsonl = dir.join("events.jsonl");
    let json = dir.join("events.json");
    let xml = dir.join("events.xml");
    let cases = [
        (
            &jsonl,
            format!("{}\n{}\n", json_event(1, good), json_event(2, "2024-13-45T99:00:00Z")),
            "line 2: invalid TimeCreated SystemTime \"2024-13-45T99:00:00Z\"",
        ),
        (
            &json,
            format!("[{},{}]", json_event(1, "yesterday"), json_event(2, good)),
            "event 1: invalid TimeCreated SystemTime \"yesterday\"",
        ),
        (
            &xml,
            "<Events><Event xmlns=\"http://schemas.microsoft.com/win/2004/08/events/event\"><System><Provider Name=\"Test\"/><EventID>1</EventID><TimeCreated SystemTime=\"1600-12-31T23:59:59Z\"/><Channel>Security</Channel><Computer>pc</Computer></System></Event></Events>".to_string(),
            "event 1: invalid TimeCreated SystemTime \"1600-12-31T23:59:59Z\"",
        ),
    ];
    for (from, content, want) in cases {
        std::fs::write(from, content).unwrap();
        let run = scanner_utc(&[
            "evtx",
            "write",
            "--from",
            from.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ]);
        let err = text(&run.stderr);
        assert_eq!(run.status.code(), Some(FATAL), "{err}");
        assert!(
            err.contains(&format!("{}: {want}", from.display())),
            "{err}"
        );
        assert!(!out.exists(), "no output for {}", from.display());
    }
    // Valid times are written.
    std::fs::write(&jsonl, format!("{}\n", json_event(1, good))).unwrap();
    let run = scanner_utc(&[
        "evtx",
        "write",
        "--from",
        jsonl.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_detection_without_a_readable_time_is_kept_and_reported_per_record() {
    let dir = scratch("times");
    let rules = dir.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(
        rules.join("any.yml"),
        "title: Any event 1\nid: 0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f\nstatus: test\nlevel: low\nlogsource:\n  product: windows\n  service: security\ndetection:\n  sel:\n    EventID: 1\n  condition: sel\n",
    )
    .unwrap();
    let rules = rules.to_str().unwrap();
    // JSON: a good time, none, two unreadable ones, then 300 records without a time:
    // the 301 without a time are one line.
    let jsonl = dir.join("events.jsonl");
    let mut lines = vec![
        json_event(1, "2024-03-12T09:14:02.255511Z"),
        json_event(2, "garbage")
            .replace(r#","TimeCreated_attributes":{"SystemTime":"garbage"}"#, ""),
        json_event(3, "garbage"),
        json_event(4, "2024-13-45T99:00:00Z"),
    ];
    lines.extend((5..305).map(|i| {
        json_event(i, "tbd").replace(r#","TimeCreated_attributes":{"SystemTime":"tbd"}"#, "")
    }));
    std::fs::write(&jsonl, lines.join("\n")).unwrap();
    let path = jsonl.to_str().unwrap();
    let run = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-f",
        path,
        "-r",
        rules,
        "-o",
        "-",
        "-q",
        "-p",
        "minimal",
    ]);
    assert_eq!(
        run.status.code(),
        Some(INPUT_ERRORS),
        "{}",
        text(&run.stderr)
    );
    let csv = text(&run.stdout);
    assert_eq!(csv.lines().count(), 1 + 304, "every record detected: {csv}");
    assert_eq!(
        csv.matches("\"1970-01-01 00:00:00.000 +00:00\"").count(),
        303
    );
    let epoch = "its detections are timed 1970-01-01 00:00:00 UTC";
    assert_eq!(
        input_error_lines(&run.stderr),
        [
            format!("input error: {path}: lines 2\u{2013}304: no TimeCreated SystemTime; {epoch} (301 errors)"),
            format!("input error: {path}: line 3: unreadable TimeCreated SystemTime \"garbage\"; {epoch}"),
            format!("input error: {path}: line 4: unreadable TimeCreated SystemTime \"2024-13-45T99:00:00Z\"; {epoch}"),
        ]
    );
    // EVTX: a record written without TimeCreated is named by its record id.
    let xml = dir.join("events.xml");
    let event = |time: &str| {
        format!("<Event><System><Provider Name=\"Test\"/><EventID>1</EventID>{time}<Channel>Security</Channel><Computer>pc</Computer></System></Event>")
    };
    std::fs::write(
        &xml,
        format!(
            "<Events>{}{}</Events>",
            event("<TimeCreated SystemTime=\"2024-03-12T09:14:02Z\"/>"),
            event("")
        ),
    )
    .unwrap();
    let evtx = dir.join("events.evtx");
    let run = scanner_utc(&[
        "evtx",
        "write",
        "--from",
        xml.to_str().unwrap(),
        "-o",
        evtx.to_str().unwrap(),
    ]);
    assert!(run.status.success(), "{}", text(&run.stderr));
    let path = evtx.to_str().unwrap();
    let run = scanner_utc(&[
        "csv-timeline",
        "-f",
        path,
        "-r",
        rules,
        "-o",
        "-",
        "-q",
        "-p",
        "minimal",
    ]);
    assert_eq!(
        run.status.code(),
        Some(INPUT_ERRORS),
        "{}",
        text(&run.stderr)
    );
    assert_eq!(text(&run.stdout).lines().count(), 3);
    assert_eq!(
        input_error_lines(&run.stderr),
        [format!(
            "input error: {path}: record 2: no TimeCreated SystemTime; {epoch}"
        )]
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[cfg(unix)]
#[test]
fn a_symlink_loop_under_d_is_reported_and_each_log_scanned_once() {
    use std::os::unix::fs::symlink;
    let dir = scratch("loop");
    let logs = dir.join("logs");
    std::fs::create_dir_all(logs.join("sub")).unwrap();
    generated(&logs.join("sub"), "log.evtx", 50);
    // Reached three ways: its folder, a second link to that folder, a link to the file.
    // Folders are searched in name order, so `sub` is searched as `again`.
    symlink(logs.join("sub"), logs.join("again")).unwrap();
    symlink(logs.join("sub/log.evtx"), logs.join("same.evtx")).unwrap();
    symlink(&logs, logs.join("sub/up")).unwrap();
    let d = logs.to_str().unwrap();
    let run = scanner_utc(&["csv-timeline", "-d", d, "-o", discard(), "-C", "-N"]);
    assert_eq!(
        run.status.code(),
        Some(INPUT_ERRORS),
        "{}",
        text(&run.stderr)
    );
    assert_eq!(
        input_error_lines(&run.stderr),
        [format!(
            "input error: {d}/again/up: symlink loop: this link leads back to a folder that holds it; not followed"
        )]
    );
    assert!(
        text(&run.stderr).contains("scanned 1 file, 50 records;"),
        "{}",
        text(&run.stderr)
    );
    std::fs::remove_dir_all(&dir).ok();
}
