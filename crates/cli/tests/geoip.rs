//! `-G/--geo-ip DIR`: the six GeoIP columns, value for value, on events the test writes
//! (with the project's EVTX writer) and GeoLite2-shaped databases it writes itself
//! (`support/mmdb.rs`): IPv4, IPv6, `::ffff:` mapped, private, local, unknown and
//! not-an-address values, in CSV and JSON Lines; and the errors of a missing or damaged
//! database and of a rules config without `geoip_field_mapping.yaml`.

mod support;

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use support::mmdb::{database, map, named, s, Value};
use support::{scanner_utc, scratch, succeeded, text};

const MAPPING: &str =
    "SrcIP:\n  - '%IpAddress%'\n  - '%SourceIp%'\nTgtIP:\n  - '%DestinationIp%'\n\
Filter:\n  - Security:\n    - 4624\n  - Microsoft-Windows-Sysmon/Operational:\n    - 3\n";

const RULES: &str = "title: Logon
id: 00000000-0000-0000-0000-00000000aa01
level: low
logsource: {product: windows, service: security}
detection: {s: {EventID: [4624, 4688]}, condition: s}
---
title: Connection
id: 00000000-0000-0000-0000-00000000aa02
level: low
logsource: {product: windows, category: network_connection}
detection: {s: {EventID: 3}, condition: s}
---
title: Many logons
id: 00000000-0000-0000-0000-00000000aa03
level: high
correlation: {type: event_count, rules: [00000000-0000-0000-0000-00000000aa01], group-by: [Computer], timespan: 1h, condition: {gte: 2}, generate: true}
";

fn ip(a: &str) -> IpAddr {
    a.parse().unwrap()
}

/// GeoLite2-shaped ASN, Country and City databases in `dir`.
fn write_databases(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let asn = |n: u32, org: Option<&str>| {
        let mut pairs = vec![("autonomous_system_number", Value::U32(n))];
        if let Some(o) = org {
            pairs.push(("autonomous_system_organization", s(o)));
        }
        map(&pairs)
    };
    let nets = |values: [Value; 3]| {
        let [a, b, c] = values;
        vec![
            (ip("203.0.113.0"), 24, a),
            (ip("198.51.100.0"), 24, b),
            (ip("2001:db8:1::"), 48, c),
        ]
    };
    let dbs = [
        (
            "GeoLite2-ASN",
            nets([
                asn(64500, Some("Example Transit")),
                asn(64501, None),
                asn(64502, Some("V6 Net")),
            ]),
        ),
        (
            "GeoLite2-Country",
            nets([
                map(&[("country", named("Japan"))]),
                map(&[("country", named("Germany"))]),
                map(&[("country", named("France"))]),
            ]),
        ),
        (
            "GeoLite2-City",
            nets([
                map(&[("city", named("Tokyo")), ("country", named("Japan"))]),
                map(&[("country", named("Germany"))]),
                map(&[("city", named("Paris")), ("country", named("France"))]),
            ]),
        ),
    ];
    for (kind, networks) in dbs {
        let path = dir.join(format!("{kind}.mmdb"));
        std::fs::write(path, database(kind, &networks)).unwrap();
    }
}

fn security(id: u32, record: u32, ip: &str) -> String {
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System><Provider Name="Microsoft-Windows-Security-Auditing"/><EventID>{id}</EventID><Level>0</Level><TimeCreated SystemTime="2024-01-01T00:00:{record:02}.000Z"/><EventRecordID>{record}</EventRecordID><Channel>Security</Channel><Computer>WS01</Computer></System><EventData><Data Name="TargetUserName">bob</Data><Data Name="IpAddress">{ip}</Data></EventData></Event>"#
    )
}

fn sysmon(record: u32, src: &str, dst: &str) -> String {
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System><Provider Name="Microsoft-Windows-Sysmon"/><EventID>3</EventID><Level>4</Level><TimeCreated SystemTime="2024-01-01T00:00:{record:02}.000Z"/><EventRecordID>{record}</EventRecordID><Channel>Microsoft-Windows-Sysmon/Operational</Channel><Computer>WS01</Computer></System><EventData><Data Name="SourceIp">{src}</Data><Data Name="DestinationIp">{dst}</Data></EventData></Event>"#
    )
}

/// (record, the address of the event, its six cells).
type Expected = (u32, &'static str, [&'static str; 6]);

const NONE: [&str; 6] = ["", "", "", "", "", ""];

/// The Security 4624 events: each address and what 4.0 shows for it.
const LOGONS: [Expected; 10] = [
    (
        1,
        "203.0.113.9",
        ["Example Transit", "Japan", "Tokyo", "", "", ""],
    ),
    (2, "::ffff:198.51.100.7", ["-", "Germany", "", "", "", ""]),
    (
        3,
        "2001:db8:1::5",
        ["V6 Net", "France", "Paris", "", "", ""],
    ),
    (4, "192.168.1.10", ["Private", "-", "-", "", "", ""]),
    (5, "127.0.0.1", ["Local", "-", "-", "", "", ""]),
    (6, "LOCAL", ["Local", "-", "-", "", "", ""]),
    (7, "-", NONE),
    (8, "8.8.8.8", NONE),
    (9, "fe80::1", ["Private", "-", "-", "", "", ""]),
    (10, "::1", ["Local", "-", "-", "", "", ""]),
];

/// A rules folder with `MAPPING` (or none), the logs and the databases.
struct Case {
    dir: PathBuf,
    rules: String,
    logs: String,
    dbs: String,
}

fn case(name: &str, mapping: bool) -> Case {
    let dir = scratch(name);
    let rules = dir.join("rules");
    std::fs::create_dir_all(rules.join("config")).unwrap();
    std::fs::write(rules.join("r.yml"), RULES).unwrap();
    if mapping {
        std::fs::write(rules.join("config/geoip_field_mapping.yaml"), MAPPING).unwrap();
    }
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let mut sec: Vec<String> = LOGONS
        .iter()
        .map(|(r, a, _)| security(4624, *r, a))
        .collect();
    sec.push(security(4688, 11, "203.0.113.9"));
    let sys = [
        sysmon(12, "10.0.0.5", "203.0.113.77"),
        sysmon(13, "2001:db8:1::9", "8.8.4.4"),
    ];
    for (file, events) in [("sec.evtx", sec), ("sysmon.evtx", sys.to_vec())] {
        let xml = dir.join(format!("{file}.xml"));
        std::fs::write(&xml, format!("<Events>{}</Events>", events.concat())).unwrap();
        let out = logs.join(file);
        let args = [
            "evtx",
            "write",
            "--from",
            xml.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ];
        succeeded(&args, scanner_utc(&args));
    }
    let dbs = dir.join("geoip");
    write_databases(&dbs);
    Case {
        rules: rules.display().to_string(),
        logs: logs.display().to_string(),
        dbs: dbs.display().to_string(),
        dir,
    }
}

/// Every expected row: record → six cells.
fn expected() -> Vec<(u32, [&'static str; 6])> {
    let mut all: Vec<(u32, [&str; 6])> = LOGONS.iter().map(|(r, _, c)| (*r, *c)).collect();
    all.push((11, NONE));
    all.push((
        12,
        ["Private", "-", "-", "Example Transit", "Japan", "Tokyo"],
    ));
    all.push((13, ["V6 Net", "France", "Paris", "", "", ""]));
    all
}

#[test]
fn csv_gets_hayabusa_s_six_columns_value_for_value() {
    let c = case("geoip-csv", true);
    let profiles = [
        "minimal",
        "standard",
        "verbose",
        "all-field-info",
        "all-field-info-verbose",
        "super-verbose",
        "timesketch-minimal",
        "timesketch-verbose",
    ];
    for profile in profiles {
        let args = [
            "csv-timeline",
            "-d",
            &c.logs,
            "-r",
            &c.rules,
            "-G",
            &c.dbs,
            "-p",
            profile,
            "-q",
            "-N",
            "-U",
        ];
        let out = succeeded(&args, scanner_utc(&args));
        let mut rd = csv::Reader::from_reader(out.as_bytes());
        let header: Vec<String> = rd.headers().unwrap().iter().map(str::to_string).collect();
        let n = header.len();
        assert_eq!(
            header[n - 6..],
            [
                "SrcASN",
                "SrcCountry",
                "SrcCity",
                "TgtASN",
                "TgtCountry",
                "TgtCity"
            ],
            "{profile}: appended to the profile's columns"
        );
        let record = header.iter().position(|h| h == "RecordID").unwrap();
        let mut got: Vec<(u32, Vec<String>)> = Vec::new();
        let mut correlations = 0;
        for r in rd.records() {
            let r = r.unwrap();
            let cells: Vec<String> = r.iter().skip(n - 6).map(str::to_string).collect();
            match r[record].parse() {
                Ok(id) => got.push((id, cells)),
                // A correlation's row: `-` in all six, as 4.0 writes it.
                Err(_) => {
                    assert_eq!(cells, ["-"; 6], "{profile}");
                    correlations += 1;
                }
            }
        }
        assert_eq!(correlations, 1, "{profile}: the correlation's row");
        got.sort();
        let want: Vec<(u32, Vec<String>)> = expected()
            .into_iter()
            .map(|(r, c)| (r, c.iter().map(|v| v.to_string()).collect()))
            .collect();
        assert_eq!(got, want, "{profile}");
    }
    // With -x, RecoveredRecord comes after them, as in Hayabusa 4.0's profile.
    let x = [
        "csv-timeline",
        "-d",
        &c.logs,
        "-r",
        &c.rules,
        "-G",
        &c.dbs,
        "-x",
        "-q",
        "-N",
    ];
    let out = succeeded(&x, scanner_utc(&x));
    assert!(
        out.lines().next().unwrap().ends_with(
            "\"SrcASN\",\"SrcCountry\",\"SrcCity\",\"TgtASN\",\"TgtCountry\",\"TgtCity\",\"RecoveredRecord\""
        ),
        "{out}"
    );
    // Rows spilled to disk and merged back keep their addresses.
    let base = [
        "csv-timeline",
        "-d",
        &c.logs,
        "-r",
        &c.rules,
        "-G",
        &c.dbs,
        "-q",
        "-N",
        "-U",
    ];
    let spilled: Vec<&str> = base.iter().copied().chain(["--sort-memory", "0"]).collect();
    assert_eq!(
        succeeded(&spilled, scanner_utc(&spilled)),
        succeeded(&base, scanner_utc(&base))
    );
    // Without -G the columns are not there, and nothing else changed.
    let plain = [
        "csv-timeline",
        "-d",
        &c.logs,
        "-r",
        &c.rules,
        "-p",
        "minimal",
        "-q",
        "-N",
        "-U",
    ];
    let without = succeeded(&plain, scanner_utc(&plain));
    assert!(!without.contains("SrcASN"));
    let with = [
        "csv-timeline",
        "-d",
        &c.logs,
        "-r",
        &c.rules,
        "-p",
        "minimal",
        "-q",
        "-N",
        "-U",
        "--geo-ip",
        &c.dbs,
    ];
    let with = succeeded(&with, scanner_utc(&with));
    let strip = |t: &str| -> Vec<String> {
        t.lines()
            .map(|l| l.splitn(9, ',').take(8).collect::<Vec<_>>().join(","))
            .collect()
    };
    assert_eq!(strip(&with), strip(&without));
    std::fs::remove_dir_all(c.dir).unwrap();
}

#[test]
fn json_folds_the_cells_into_details_and_all_field_info() {
    let c = case("geoip-json", true);
    for (cmd, profile, field) in [
        (&["dfir-timeline", "-t", "jsonl"][..], "standard", "Details"),
        (
            &["json-timeline", "-L"][..],
            "all-field-info",
            "AllFieldInfo",
        ),
    ] {
        let mut args: Vec<&str> = cmd.to_vec();
        args.extend([
            "-d", &c.logs, "-r", &c.rules, "-G", &c.dbs, "-p", profile, "-q", "-N", "-U",
        ]);
        let out = succeeded(&args, scanner_utc(&args));
        let names = [
            "SrcASN",
            "SrcCountry",
            "SrcCity",
            "TgtASN",
            "TgtCountry",
            "TgtCity",
        ];
        let mut seen = 0;
        for line in out.lines() {
            let v: serde_json::Value = serde_json::from_str(line).unwrap();
            for n in names {
                assert!(v.get(n).is_none(), "{n} is not a key of the row: {line}");
            }
            let Some(record) = v["RecordID"].as_u64() else {
                // A correlation's row: its six cells are `-`, none written.
                for n in names {
                    assert!(v[field].get(n).is_none(), "{line}");
                }
                continue;
            };
            let record = record as u32;
            let (_, cells) = expected().into_iter().find(|(r, _)| *r == record).unwrap();
            let obj = &v[field];
            for (n, want) in names.iter().zip(cells) {
                // Hayabusa leaves out the cells that are `-`, and writes the others
                // (empty ones too) as strings.
                match want {
                    "-" => assert!(obj.get(n).is_none(), "{record} {n}: {line}"),
                    w => assert_eq!(obj[n], serde_json::json!(w), "{record} {n}: {line}"),
                }
            }
            if let Some(extra) = v.get("ExtraFieldInfo") {
                assert!(
                    extra.get("SrcASN").is_none(),
                    "not in ExtraFieldInfo: {line}"
                );
            }
            seen += 1;
        }
        assert_eq!(seen, expected().len(), "{cmd:?}");
    }
    std::fs::remove_dir_all(c.dir).unwrap();
}

#[test]
fn a_missing_or_damaged_database_is_an_error_naming_it_before_any_scan() {
    let c = case("geoip-errors", true);
    let out_csv = c.dir.join("out.csv");
    let run = |dbs: &str| {
        let args = [
            "csv-timeline",
            "-d",
            &c.logs,
            "-r",
            &c.rules,
            "-G",
            dbs,
            "-q",
            "-N",
            "-o",
            out_csv.to_str().unwrap(),
        ];
        scanner_utc(&args)
    };
    let city = Path::new(&c.dbs).join("GeoLite2-City.mmdb");
    let bytes = std::fs::read(&city).unwrap();
    std::fs::remove_file(&city).unwrap();
    let out = run(&c.dbs);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains(city.to_str().unwrap()), "{err}");
    assert!(!out_csv.exists(), "no timeline written");
    // Damaged: its metadata marker cut off, or the file a folder.
    std::fs::write(&city, &bytes[..bytes.len() - 40]).unwrap();
    let out = run(&c.dbs);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains("GeoLite2-City.mmdb") && err.contains("not a MaxMind database"),
        "{err}"
    );
    std::fs::remove_file(&city).unwrap();
    std::fs::create_dir(&city).unwrap();
    let out = run(&c.dbs);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("GeoLite2-City.mmdb"));
    assert!(!out_csv.exists(), "no timeline written");
    std::fs::remove_dir_all(c.dir).unwrap();
}

#[test]
fn a_rules_config_without_the_mapping_is_an_error() {
    let c = case("geoip-no-mapping", false);
    let args = [
        "csv-timeline",
        "-d",
        &c.logs,
        "-r",
        &c.rules,
        "-G",
        &c.dbs,
        "-q",
        "-N",
    ];
    let out = scanner_utc(&args);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("geoip_field_mapping.yaml"), "{err}");
    assert!(out.stdout.is_empty());
    std::fs::remove_dir_all(c.dir).unwrap();
}

#[test]
fn the_built_in_rules_have_a_mapping_so_g_runs_without_r() {
    let c = case("geoip-builtin", false);
    let out = scanner_utc(&["csv-timeline", "-d", &c.logs, "-G", &c.dbs, "-q", "-N"]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let csv = text(&out.stdout);
    let header = csv.lines().next().unwrap_or("");
    assert!(
        header.ends_with(r#""SrcASN","SrcCountry","SrcCity","TgtASN","TgtCountry","TgtCity""#),
        "{header}"
    );
    std::fs::remove_dir_all(c.dir).unwrap();
}
