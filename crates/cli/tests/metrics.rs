//! `eid-metrics`, `computer-metrics` and `log-metrics` on the project's own logs: the
//! counts are checked against counts made another way (the generated log's JSON twice,
//! read here with serde_json), and the columns, order, quoting and safety of the
//! outputs against what the commands promise.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use support::{root, scanner_utc, scratch, text};

const GENERATED: &str = "testdata/evtx/generated.evtx";
const GENERATED_JSON: &str = "testdata/evtx/generated.jsonl";

/// The generated log's events, read from its JSON twin.
fn generated_events() -> Vec<serde_json::Value> {
    let t = std::fs::read_to_string(root().join(GENERATED_JSON)).expect("read jsonl");
    t.lines()
        .map(|l| serde_json::from_str(l).expect("json event"))
        .collect()
}

fn system<'a>(e: &'a serde_json::Value, key: &str) -> &'a serde_json::Value {
    &e["Event"]["System"][key]
}

fn csv_rows(s: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(s.as_bytes())
        .records()
        .map(|r| r.expect("csv row").iter().map(str::to_string).collect())
        .collect()
}

/// Runs scanner, expecting exit code 0; returns standard output.
fn ok(args: &[&str]) -> String {
    let out = scanner_utc(args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// The abbreviations of the built-in config for the generated log's channels.
fn abbreviation(channel: &str) -> &'static str {
    match channel {
        "Security" => "Sec",
        "System" => "Sys",
        "Microsoft-Windows-Sysmon/Operational" => "Sysmon",
        "Microsoft-Windows-PowerShell/Operational" => "PwSh",
        other => panic!("unexpected channel {other}"),
    }
}

#[test]
fn eid_metrics_counts_each_channel_and_event_id() {
    let events = generated_events();
    let mut want: BTreeMap<(String, String), u64> = BTreeMap::new();
    for e in &events {
        let ch = system(e, "Channel").as_str().unwrap();
        let id = system(e, "EventID").to_string();
        *want.entry((abbreviation(ch).to_string(), id)).or_default() += 1;
    }
    let rows = csv_rows(&ok(&["eid-metrics", "-f", GENERATED, "-q"]));
    assert_eq!(rows[0], ["Total", "%", "Channel", "ID", "Event"]);
    let body = &rows[1..];
    assert_eq!(body.len(), want.len());
    let total = events.len() as f64;
    let mut got = BTreeMap::new();
    for r in body {
        let n: u64 = r[0].parse().unwrap();
        assert_eq!(r[1], format!("{:.1}%", n as f64 / total * 100.0), "{r:?}");
        // No channel_eid_info.txt in the built-in config: every title is unknown.
        assert_eq!(r[4], "Unknown");
        got.insert((r[2].clone(), r[3].clone()), n);
    }
    assert_eq!(got, want);
    // Most first; equal counts by channel, then EventID as a number.
    let keys: Vec<(i64, &str, u64)> = body
        .iter()
        .map(|r| {
            (
                -r[0].parse::<i64>().unwrap(),
                r[2].as_str(),
                r[3].parse().unwrap(),
            )
        })
        .collect();
    let mut sorted = keys.clone();
    sorted.sort();
    assert_eq!(keys, sorted);
    // The JSON twin gives the same table.
    let json = ok(&["eid-metrics", "-J", "-f", GENERATED_JSON, "-q"]);
    assert_eq!(csv_rows(&json), rows);
}

#[test]
fn eid_metrics_titles_come_from_the_config_folder() {
    let d = scratch("eid-titles");
    std::fs::write(
        d.join("channel_eid_info.txt"),
        "Channel,EventID,EventTitle\nSecurity,4624,Logon, of some kind\n",
    )
    .unwrap();
    let c = d.to_str().unwrap();
    let rows = csv_rows(&ok(&["eid-metrics", "-f", GENERATED, "-q", "-c", c]));
    let logon = rows.iter().find(|r| r[3] == "4624").expect("4624 row");
    assert_eq!(logon[4], "Logon, of some kind");
    let other = rows.iter().find(|r| r[3] == "4634").expect("4634 row");
    assert_eq!(other[4], "Unknown");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn eid_metrics_filters_computers_and_counts_duplicates_once_with_x() {
    let events = generated_events();
    let dc = events
        .iter()
        .filter(|e| system(e, "Computer") == "DC01.corp.example")
        .count() as u64;
    let rows = csv_rows(&ok(&[
        "eid-metrics",
        "-f",
        GENERATED,
        "-q",
        "--include-computer",
        "dc01.corp.example",
    ]));
    let counted: u64 = rows[1..].iter().map(|r| r[0].parse::<u64>().unwrap()).sum();
    assert_eq!(counted, dc);

    // The same log twice: doubled counts, or with -X each record once.
    let d = scratch("eid-dup");
    std::fs::copy(root().join(GENERATED), d.join("copy.evtx")).unwrap();
    let copy = d.join("copy.evtx");
    let copy = copy.to_str().unwrap();
    let sum = |args: &[&str]| -> u64 {
        csv_rows(&ok(args))[1..]
            .iter()
            .map(|r| r[0].parse::<u64>().unwrap())
            .sum()
    };
    let n = events.len() as u64;
    assert_eq!(
        sum(&["eid-metrics", "-f", GENERATED, "-f", copy, "-q"]),
        2 * n
    );
    assert_eq!(
        sum(&["eid-metrics", "-f", GENERATED, "-f", copy, "-q", "-X"]),
        n
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn computer_metrics_counts_each_computer_most_first() {
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    for e in generated_events() {
        let c = system(&e, "Computer").as_str().unwrap().to_string();
        *want.entry(c).or_default() += 1;
    }
    let out = ok(&["computer-metrics", "-f", GENERATED, "-q"]);
    // Hayabusa's quoting: every text cell quoted, the counts bare.
    assert!(out.starts_with("\"Computer\",\"OS information\",\"UpTime\",\"Timezone\",\"Events\"\n"));
    let mut expected: Vec<(String, u64)> = want.into_iter().collect();
    expected.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let lines: Vec<String> = expected
        .iter()
        .map(|(c, n)| format!("\"{c}\",\"\",\"\",\"\",{n}"))
        .collect();
    assert_eq!(out.lines().skip(1).collect::<Vec<_>>(), lines);
}

/// A System event as Event Viewer shows it, with unnamed Data values.
fn system_event(id: u32, time: &str, record: u32, data: &[&str]) -> String {
    let data: String = data.iter().map(|d| format!("<Data>{d}</Data>")).collect();
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System><Provider Name="EventLog"/><EventID Qualifiers="32768">{id}</EventID><Level>4</Level><TimeCreated SystemTime="{time}"/><EventRecordID>{record}</EventRecordID><Channel>System</Channel><Computer>HOST1</Computer></System><EventData>{data}</EventData></Event>"#
    )
}

/// Writes `events` (XML) to `dir/name` as EVTX with `scanner evtx write`.
fn write_evtx(dir: &Path, name: &str, events: &[String]) -> String {
    let xml = dir.join(format!("{name}.xml"));
    std::fs::write(&xml, format!("<Events>{}</Events>", events.concat())).unwrap();
    let evtx = dir.join(name);
    let (x, e) = (xml.to_str().unwrap(), evtx.to_str().unwrap());
    ok(&["evtx", "write", "--from", x, "-o", e]);
    e.to_string()
}

#[test]
fn computer_metrics_reads_version_zone_and_uptime_from_the_system_log() {
    let d = scratch("computer-system");
    let events = [
        system_event(6005, "2024-01-01T00:00:00.000Z", 1, &[]),
        system_event(
            6009,
            "2024-01-01T00:00:01.000Z",
            2,
            &["10.00.", "19045", "Multiprocessor Free", "0"],
        ),
        system_event(
            6013,
            "2024-01-02T01:02:03.000Z",
            3,
            &["", "", "", "", "", "", "540 Tokyo Standard Time"],
        ),
    ];
    let log = write_evtx(&d, "system.evtx", &events);
    let config = d.join("config");
    std::fs::create_dir(&config).unwrap();
    std::fs::write(
        config.join("windows_versions.csv"),
        "Version,Build,WindowsVersion,ReleaseDate\n10.0,19045,10 22H2,2022/10/18\n",
    )
    .unwrap();
    let out = ok(&[
        "computer-metrics",
        "-f",
        &log,
        "-q",
        "-c",
        config.to_str().unwrap(),
    ]);
    // The uptime runs from the latest boot event (the 6009, a second after the 6005)
    // to the last System event (the 6013).
    assert_eq!(
        out.lines().nth(1),
        Some("\"HOST1\",\"Windows 10 22H2 (2022/10/18)\",\"0Y 0M 1d 1h 2m 2s\",\"Tokyo Standard Time\",3")
    );
    // Without the versions table, no OS information (as Hayabusa).
    let out = ok(&[
        "computer-metrics",
        "-f",
        &log,
        "-q",
        "-c",
        d.to_str().unwrap(),
    ]);
    assert!(
        out.lines().nth(1).unwrap().starts_with("\"HOST1\",\"\","),
        "{out}"
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn log_metrics_gives_one_row_per_file() {
    let events = generated_events();
    let times: BTreeSet<String> = events
        .iter()
        .map(|e| {
            e["Event"]["System"]["TimeCreated_attributes"]["SystemTime"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let computers: BTreeSet<&str> = events
        .iter()
        .map(|e| system(e, "Computer").as_str().unwrap())
        .collect();
    let short = |t: &str| format!("{} {} +00:00", &t[..10], &t[11..23]);
    let size = std::fs::metadata(root().join(GENERATED)).unwrap().len();
    let out = ok(&[
        "log-metrics",
        "-f",
        "testdata/evtx/security.evtx",
        "-f",
        GENERATED,
        "-U",
        "-q",
    ]);
    let rows = csv_rows(&out);
    assert_eq!(
        rows[0],
        [
            "Filename",
            "Computers",
            "Events",
            "First Timestamp",
            "Last Timestamp",
            "Channels",
            "Providers",
            "Size"
        ]
    );
    // The generated log has the most events: first.
    let g = &rows[1];
    assert_eq!(g[0], "generated.evtx");
    assert_eq!(g[1], computers.into_iter().collect::<Vec<_>>().join(" ¦"));
    assert_eq!(g[2], events.len().to_string());
    assert_eq!(g[3], short(times.first().unwrap()));
    assert_eq!(g[4], short(times.last().unwrap()));
    assert_eq!(g[5], "PwSh ¦Sec ¦Sys ¦Sysmon");
    assert_eq!(g[7], format!("{:.1} KiB", size as f64 / 1024.0));
    assert_eq!(rows[2][0], "security.evtx");
    assert_eq!(rows.len(), 3);

    // Filters and -b, -M.
    let only = |args: &[&str]| -> Vec<String> {
        let mut a = vec![
            "log-metrics",
            "-f",
            "testdata/evtx/security.evtx",
            "-f",
            GENERATED,
            "-U",
            "-q",
        ];
        a.extend_from_slice(args);
        csv_rows(&ok(&a))[1..]
            .iter()
            .map(|r| r[0].clone())
            .collect()
    };
    assert_eq!(
        only(&["--include-filename", "SECURITY.evtx"]),
        ["security.evtx"]
    );
    assert_eq!(
        only(&["--exclude-filename", "security.evtx"]),
        ["generated.evtx"]
    );
    assert_eq!(only(&["--exclude-channel", "System"]), ["security.evtx"]);
    assert_eq!(only(&["--include-channel", "system"]), ["generated.evtx"]);
    assert_eq!(
        only(&["--exclude-computer", "FS01.corp.example"]),
        Vec::<String>::new()
    );
    let full = csv_rows(&ok(&[
        "log-metrics",
        "-f",
        GENERATED,
        "-U",
        "-q",
        "-b",
        "-M",
    ]));
    assert!(full[1][5].contains("Security\nSystem"), "{:?}", full[1][5]);
}

#[test]
fn outputs_are_written_as_safely_as_the_timeline() {
    let d = scratch("metrics-output");
    let out = d.join("m.csv");
    let o = out.to_str().unwrap();
    for cmd in ["eid-metrics", "computer-metrics", "log-metrics"] {
        ok(&[cmd, "-f", GENERATED, "-o", o, "-q", "-C"]);
        assert!(std::fs::read_to_string(&out).unwrap().lines().count() > 1);
        // An existing output without -C is refused, and left as it was.
        let before = std::fs::read(&out).unwrap();
        let r = scanner_utc(&[cmd, "-f", GENERATED, "-o", o, "-q"]);
        assert_eq!(r.status.code(), Some(1), "{cmd}");
        assert!(
            text(&r.stderr).contains("-C/--clobber"),
            "{}",
            text(&r.stderr)
        );
        assert_eq!(std::fs::read(&out).unwrap(), before);
    }
    // An output that is one of the inputs is refused.
    let input = d.join("in.evtx");
    std::fs::copy(root().join(GENERATED), &input).unwrap();
    let i = input.to_str().unwrap();
    let r = scanner_utc(&[
        "log-metrics",
        "-d",
        d.to_str().unwrap(),
        "-o",
        i,
        "-q",
        "-C",
    ]);
    assert_eq!(r.status.code(), Some(1), "{}", text(&r.stderr));
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(root().join(GENERATED)).unwrap()
    );
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn input_errors_are_named_and_give_exit_code_3() {
    let d = scratch("metrics-errors");
    std::fs::write(d.join("broken.evtx"), b"not an event log at all").unwrap();
    std::fs::copy(root().join(GENERATED), d.join("good.evtx")).unwrap();
    let r = scanner_utc(&["computer-metrics", "-d", d.to_str().unwrap(), "-q"]);
    assert_eq!(r.status.code(), Some(3), "{}", text(&r.stderr));
    assert!(
        text(&r.stderr).contains("broken.evtx"),
        "{}",
        text(&r.stderr)
    );
    // The good file was still counted.
    let counted: u64 = csv_rows(&text(&r.stdout))[1..]
        .iter()
        .map(|r| r[4].parse::<u64>().unwrap())
        .sum();
    assert_eq!(counted, generated_events().len() as u64);
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn excel_safe_neutralises_formula_cells() {
    let d = scratch("metrics-excel");
    let event =
        system_event(7036, "2024-01-01T00:00:00.000Z", 1, &[]).replace("HOST1", "=cmd|calc");
    let log = write_evtx(&d, "f.evtx", &[event]);
    let plain = ok(&["computer-metrics", "-f", &log, "-q"]);
    assert!(plain.contains("\"=cmd|calc\""), "{plain}");
    let safe = ok(&["computer-metrics", "-f", &log, "-q", "--excel-safe"]);
    assert!(safe.contains("\"'=cmd|calc\""), "{safe}");
    std::fs::remove_dir_all(&d).ok();
}

#[test]
fn fatal_errors_say_what_is_wrong() {
    let r = scanner_utc(&["eid-metrics", "-q"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(
        text(&r.stderr).contains("give -d DIR or -f FILE"),
        "{}",
        text(&r.stderr)
    );
    let r = scanner_utc(&["log-metrics", "-f", GENERATED, "-c", "no/such/folder"]);
    assert_eq!(r.status.code(), Some(1));
    assert!(
        text(&r.stderr).contains("no/such/folder: not a folder"),
        "{}",
        text(&r.stderr)
    );
}
