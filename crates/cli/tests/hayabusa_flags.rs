//! Hayabusa 3.9.0's timeline flags that scanner used to refuse: `--target-file-ext`,
//! `-P/--proven-rules`, `-R/--remove-duplicate-data`, `--no-pwsh-field-extraction`,
//! and the levels raised by `critical_systems.txt`, on files the tests
//! make.

mod support;

use std::path::{Path, PathBuf};
use support::{scanner_utc, scratch, succeeded, text};

const LOG: &str = "testdata/evtx/security.evtx";

const RULE_A: &str = "title: Logon A
id: 00000000-0000-0000-0000-00000000a001
level: low
status: test
details: 'same text'
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4624}, condition: sel}
";

const RULE_B: &str = "title: Logon B
id: 00000000-0000-0000-0000-00000000b002
level: high
status: test
details: 'same text'
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4624}, condition: sel}
";

/// A rules folder holding [`RULE_A`] and [`RULE_B`] and a `config/` folder with the
/// files given (name, content).
fn rules(name: &str, config: &[(&str, &str)]) -> PathBuf {
    let d = scratch(name);
    std::fs::write(d.join("a.yml"), RULE_A).unwrap();
    std::fs::write(d.join("b.yml"), RULE_B).unwrap();
    std::fs::create_dir_all(d.join("config")).unwrap();
    for (n, t) in config {
        std::fs::write(d.join("config").join(n), t).unwrap();
    }
    d
}

fn ok(args: &[&str]) -> String {
    succeeded(args, scanner_utc(args))
}

/// The CSV's rows as (column name → cell) lists.
fn rows(csv: &str) -> Vec<Vec<(String, String)>> {
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    r.records()
        .map(|rec| {
            let rec = rec.unwrap();
            head.iter()
                .cloned()
                .zip(rec.iter().map(str::to_string))
                .collect()
        })
        .collect()
}

fn column(rows: &[Vec<(String, String)>], name: &str) -> Vec<String> {
    rows.iter()
        .map(|r| r.iter().find(|(n, _)| n == name).expect(name).1.clone())
        .collect()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn target_file_ext_scans_files_of_other_extensions_as_evtx() {
    let d = scratch("target-ext");
    let copy = d.join("host1.evtx_data");
    std::fs::copy(support::root().join(LOG), &copy).unwrap();
    let base = ["csv-timeline", "-d", path(&d), "-q", "-N"];
    let without = scanner_utc(&base);
    assert_eq!(
        without.status.code(),
        Some(1),
        "no .evtx file in the folder"
    );
    assert!(text(&without.stderr).contains("no input file"));
    let with: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--target-file-ext", "evtx_data"])
        .collect();
    let got = ok(&with);
    assert_eq!(got, ok(&["csv-timeline", "-f", path(&copy), "-q", "-N"]));
    assert!(rows(&got).len() >= 4, "{got}");
    // Several extensions, with or without their dot.
    let two: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--target-file-ext", "log", ".evtx_data"])
        .collect();
    assert_eq!(ok(&two), got);
    std::fs::remove_dir_all(&d).unwrap();
}

#[test]
fn proven_rules_runs_only_the_rules_listed() {
    let proven = "# proven\n00000000-0000-0000-0000-00000000a001\n";
    let r = rules("proven", &[("proven_rules.txt", proven)]);
    let base = ["csv-timeline", "-f", LOG, "-r", path(&r), "-q", "-N"];
    let titles = |extra: &[&str]| {
        let a: Vec<&str> = base.iter().chain(extra).copied().collect();
        column(&rows(&ok(&a)), "RuleTitle")
    };
    assert_eq!(titles(&[]), ["Logon A", "Logon B"]);
    assert_eq!(titles(&["-P"]), ["Logon A"]);
    assert_eq!(titles(&["--proven-rules"]), ["Logon A"]);

    // Without proven_rules.txt, -P is refused rather than running nothing.
    let bare = rules("proven-none", &[]);
    let out = scanner_utc(&["csv-timeline", "-f", LOG, "-r", path(&bare), "-q", "-P"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("proven_rules.txt"),
        "{}",
        text(&out.stderr)
    );
    for d in [r, bare] {
        std::fs::remove_dir_all(d).unwrap();
    }
}

#[test]
fn remove_duplicate_data_writes_dup_for_a_value_repeated_from_the_row_before() {
    let r = rules("dup", &[]);
    let base = [
        "csv-timeline",
        "-f",
        LOG,
        "-r",
        path(&r),
        "-q",
        "-N",
        "-p",
        "verbose",
    ];
    let run = |extra: &[&str]| {
        let a: Vec<&str> = base.iter().chain(extra).copied().collect();
        rows(&ok(&a))
    };
    let plain = run(&[]);
    assert_eq!(column(&plain, "Details"), ["same text", "same text"]);
    for flag in ["-R", "--remove-duplicate-data"] {
        let dup = run(&[flag]);
        assert_eq!(column(&dup, "Details"), ["same text", "DUP"]);
        assert_eq!(column(&dup, "ExtraFieldInfo")[1], "DUP");
        assert_ne!(column(&dup, "ExtraFieldInfo")[0], "DUP");
        // Nothing else changes.
        for name in ["RuleTitle", "Timestamp", "RecordID", "Computer"] {
            assert_eq!(column(&dup, name), column(&plain, name));
        }
    }
    // JSON: the mark stands for the whole cell.
    let a: Vec<&str> = [
        "json-timeline",
        "-f",
        LOG,
        "-r",
        path(&r),
        "-q",
        "-N",
        "-L",
        "-R",
    ]
    .to_vec();
    let json = ok(&a);
    let second = json.lines().nth(1).unwrap();
    let row: serde_json::Value = serde_json::from_str(second).unwrap();
    assert_eq!(row["Details"], "DUP", "{second}");
    std::fs::remove_dir_all(r).unwrap();
}

#[test]
fn classic_powershell_fields_are_split_unless_turned_off() {
    let d = scratch("pwsh_fields");
    let rule = "title: Classic PowerShell host
id: 00000000-0000-0000-0000-00000000c400
level: low
status: test
details: 'Host: %HostApplication% ¦ Engine: %EngineVersion%'
logsource: {product: windows, service: powershell-classic}
detection:
    sel: {Channel: Windows PowerShell, EventID: 400, HostApplication|contains: '-nop'}
    condition: sel
";
    std::fs::write(d.join("r.yml"), rule).unwrap();
    let event = r#"{"Event":{"System":{"Provider_attributes":{"Name":"PowerShell"},"EventID":400,"Channel":"Windows PowerShell","Computer":"WS01","EventRecordID":7,"TimeCreated_attributes":{"SystemTime":"2024-01-02T03:04:05Z"}},"EventData":{"Data":["Available","None","\tNewEngineState=Available\n\tHostName=ConsoleHost\n\tEngineVersion=5.1\n\tHostApplication=powershell.exe -nop -w hidden"]}}}"#;
    std::fs::write(d.join("e.json"), format!("{event}\n")).unwrap();
    let (r, e) = (d.join("r.yml"), d.join("e.json"));
    let base = [
        "csv-timeline",
        "-f",
        e.to_str().unwrap(),
        "-J",
        "-r",
        r.to_str().unwrap(),
        "-q",
        "-U",
    ];
    let on = ok(&base);
    assert!(
        on.contains("Host: powershell.exe -nop -w hidden ¦ Engine: 5.1"),
        "{on}"
    );
    let off: Vec<&str> = base
        .iter()
        .copied()
        .chain(["--no-pwsh-field-extraction"])
        .collect();
    assert!(!ok(&off).contains("Classic PowerShell host"));
    std::fs::remove_dir_all(d).unwrap();
}
