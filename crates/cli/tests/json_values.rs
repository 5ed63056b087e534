//! The JSON timeline's values as Hayabusa 4.0 writes them, on EVTX written for the test:
//! a Details item without a label (a bare `%Details%`, Sysmon 13's registry value) kept
//! whole under the key `""` however many colons it holds; `true`/`false` as booleans and
//! integers as numbers (hex, decimals and integers past 64 bits as strings), in Details
//! and ExtraFieldInfo alike; without `-L` a stream of pretty-printed objects (what
//! `jq -r '.RuleTitle'` reads), with `-L` one object a line.

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use support::{scanner_utc, scratch, text};

const REGISTRY_RULE: &str = "title: Run Key Set
id: 00000000-0000-0000-0000-000000000013
level: medium
status: test
details: 'EventType: %EventType% ¦ TgtObj: %TargetObject% ¦ %Details% ¦ PID: %ProcessId%'
logsource: {product: windows, service: sysmon}
detection: {sel: {EventID: 13}, condition: sel}
";

const NETWORK_RULE: &str = "title: Outbound Connection
id: 00000000-0000-0000-0000-000000000003
level: low
status: test
details: 'Initiated: %Initiated% ¦ SrcPort: %SourcePort% ¦ Proc: %Image%'
logsource: {product: windows, service: sysmon}
detection: {sel: {EventID: 3}, condition: sel}
";

/// A Sysmon event of `eid` with record id `rid` and `data` as its named Data elements.
fn event(eid: u32, rid: u32, data: &[(&str, &str)]) -> String {
    let data: String = data
        .iter()
        .map(|(n, v)| format!("    <Data Name=\"{n}\">{v}</Data>\n"))
        .collect();
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="Microsoft-Windows-Sysmon"/>
    <EventID>{eid}</EventID>
    <TimeCreated SystemTime="2024-03-12T09:00:{rid:02}.000Z"/>
    <EventRecordID>{rid}</EventRecordID>
    <Channel>Microsoft-Windows-Sysmon/Operational</Channel>
    <Computer>WS01</Computer>
  </System>
  <EventData>
{data}  </EventData>
</Event>
"#
    )
}

/// A scratch folder with `rules/` and `log.evtx`: two registry values without a label
/// (one a path with colons, one without any) and a connection with typed fields.
fn setup() -> PathBuf {
    let dir = scratch("json-values");
    let rules = dir.join("rules");
    std::fs::create_dir_all(rules.join("config")).unwrap();
    std::fs::write(rules.join("registry.yml"), REGISTRY_RULE).unwrap();
    std::fs::write(rules.join("network.yml"), NETWORK_RULE).unwrap();
    let run_key = "HKU\\S-1-5-21-1\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\360v";
    let events = [
        event(
            13,
            1,
            &[
                ("EventType", "SetValue"),
                ("ProcessId", "2992"),
                ("TargetObject", run_key),
                (
                    "Details",
                    "C:\\Users\\IEUser\\AppData\\Roaming\\svchost.exe",
                ),
            ],
        ),
        event(
            13,
            2,
            &[
                ("EventType", "SetValue"),
                ("ProcessId", "3804"),
                ("TargetObject", "HKLM\\x\\EnableLUA"),
                ("Details", "DWORD (0x00000001)"),
            ],
        ),
        event(
            3,
            3,
            &[
                ("Initiated", "true"),
                ("SourcePort", "546"),
                ("Image", "C:\\Windows\\System32\\svchost.exe"),
                ("SourceIsIpv6", "false"),
                ("DestinationPort", "-12"),
                ("LogonId", "0x3e7"),
                ("Ratio", "1.5"),
                ("Huge", "18446744073709551616"),
                ("Padded", "007"),
                ("Shout", "TRUE"),
            ],
        ),
    ];
    let xml = format!("<Events>\n{}</Events>\n", events.concat());
    std::fs::write(dir.join("log.xml"), xml).unwrap();
    let out = scanner_utc(&[
        "evtx",
        "write",
        "--from",
        &path(&dir, "log.xml"),
        "-o",
        &path(&dir, "log.evtx"),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    dir
}

fn path(dir: &Path, name: &str) -> String {
    dir.join(name).display().to_string()
}

/// json-timeline over the test's log, with `extra` flags; the file it wrote.
fn timeline(dir: &Path, out: &str, extra: &[&str]) -> String {
    let (log, rules, out) = (path(dir, "log.evtx"), path(dir, "rules"), path(dir, out));
    let mut args = vec![
        "json-timeline",
        "-f",
        &log,
        "-r",
        &rules,
        "-p",
        "verbose",
        "-q",
        "-C",
        "-o",
        &out,
    ];
    args.extend_from_slice(extra);
    let o = scanner_utc(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::read_to_string(&out).unwrap()
}

/// The rows of the timeline by RecordID.
fn by_record(rows: &[Value], rid: u64) -> &Value {
    rows.iter()
        .find(|r| r["RecordID"] == rid)
        .unwrap_or_else(|| panic!("no row of record {rid} in {rows:?}"))
}

#[test]
fn values_are_keyed_and_typed_as_hayabusa_writes_them() {
    let dir = setup();
    let jsonl = timeline(&dir, "t.jsonl", &["-L"]);
    let rows: Vec<Value> = jsonl
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(rows.len(), 3, "{jsonl}");

    let path_value = by_record(&rows, 1);
    assert_eq!(
        path_value["Details"],
        json!({
            "EventType": "SetValue",
            "TgtObj": "HKU\\S-1-5-21-1\\Software\\Microsoft\\Windows\\CurrentVersion\\Run\\360v",
            "": "C:\\Users\\IEUser\\AppData\\Roaming\\svchost.exe",
            "PID": 2992,
        })
    );
    assert_eq!(by_record(&rows, 2)["Details"][""], "DWORD (0x00000001)");

    let connection = by_record(&rows, 3);
    assert_eq!(
        connection["Details"],
        json!({"Initiated": true, "SrcPort": 546, "Proc": "C:\\Windows\\System32\\svchost.exe"})
    );
    let extra = &connection["ExtraFieldInfo"];
    assert_eq!(extra["SourceIsIpv6"], json!(false));
    assert_eq!(extra["DestinationPort"], json!(-12));
    assert_eq!(extra["LogonId"], json!("0x3e7"));
    assert_eq!(extra["Ratio"], json!("1.5"));
    assert_eq!(extra["Huge"], json!("18446744073709551616"));
    assert_eq!(extra["Padded"], json!(7));
    assert_eq!(extra["Shout"], json!("TRUE"));
    assert_eq!(connection["EventID"], json!(3));
    // No tags: the keys are left out, as Hayabusa leaves them.
    assert!(connection.get("MitreTactics").is_none(), "{connection}");
    assert!(jsonl.starts_with("{ \"Timestamp\":\"2024-03-12 09:00:01.000 +00:00\","));

    // Without -L: the same objects, one after the other, each over several lines.
    let stream = timeline(&dir, "t.json", &[]);
    assert!(stream.starts_with("{\n    \"Timestamp\": "), "{stream}");
    let objects: Vec<Value> = serde_json::Deserializer::from_str(&stream)
        .into_iter::<Value>()
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{e}: {stream}"));
    assert_eq!(objects, rows);
    // What `jq -r '.RuleTitle' file.json` prints, where jq is installed.
    if let Ok(jq) = std::process::Command::new("jq")
        .args(["-r", ".RuleTitle", &path(&dir, "t.json")])
        .output()
    {
        assert_eq!(
            text(&jq.stdout),
            "Run Key Set\nRun Key Set\nOutbound Connection\n"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

const PROCESS_RULE: &str = "title: Process Started
id: 00000000-0000-0000-0000-000000000001
level: low
status: test
details: 'Cmdline: %CommandLine% ¦ PID: %ProcessId%'
logsource: {product: windows, service: sysmon}
detection: {sel: {EventID: 1}, condition: sel}
";

/// JSON keeps a value's tabs and line breaks, as Hayabusa 4.0's JSON does, and leaves a
/// value Details shows out of ExtraFieldInfo; the CSV timeline shows both collapsed to
/// one line, and keeps the multi-line value in ExtraFieldInfo (as Hayabusa's CSV does).
#[test]
fn json_keeps_line_breaks_and_tabs_where_csv_collapses_them() {
    let dir = scratch("json-line-breaks");
    let rules = dir.join("rules");
    std::fs::create_dir_all(rules.join("config")).unwrap();
    std::fs::write(rules.join("process.yml"), PROCESS_RULE).unwrap();
    let ev = event(
        1,
        7,
        &[
            ("CommandLine", "powershell -c&#13;&#10;&#9;whoami  /all"),
            ("ProcessId", "4242"),
            ("Description", "line one&#13;&#10;&#9;&#9;line two"),
            ("Copy", "powershell -c&#13;&#10;&#9;whoami  /all"),
        ],
    );
    std::fs::write(dir.join("log.xml"), format!("<Events>\n{ev}</Events>\n")).unwrap();
    let (xml, log) = (path(&dir, "log.xml"), path(&dir, "log.evtx"));
    let out = scanner_utc(&["evtx", "write", "--from", &xml, "-o", &log]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));

    let jsonl = timeline(&dir, "t.jsonl", &["-L"]);
    let row: Value = serde_json::from_str(jsonl.trim()).unwrap_or_else(|e| panic!("{e}: {jsonl}"));
    assert_eq!(row["Details"]["Cmdline"], "powershell -c\r\n\twhoami /all");
    assert_eq!(
        row["ExtraFieldInfo"],
        json!({"Description": "line one\r\n\t\tline two"}),
        "the value Details shows (CommandLine, and Copy, which holds the same) is left out"
    );

    let csv_out = path(&dir, "t.csv");
    let o = scanner_utc(&[
        "csv-timeline",
        "-f",
        &log,
        "-r",
        &path(&dir, "rules"),
        "-p",
        "verbose",
        "-q",
        "-C",
        "-o",
        &csv_out,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let csv = std::fs::read_to_string(&csv_out).unwrap();
    assert!(
        csv.contains("\"Cmdline: powershell -c whoami /all ¦ PID: 4242\""),
        "{csv}"
    );
    assert!(
        csv.contains("Copy: powershell -c whoami /all ¦ Description: line one line two"),
        "{csv}"
    );
}
