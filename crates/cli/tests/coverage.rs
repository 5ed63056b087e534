//! `coverage` end to end, on logs written by the project's EVTX writer and rules written
//! here: each kind of event with its counts, the rules that can read it and the
//! detections it gave; a kind no rule reads, one only a rule without a channel reads, a
//! rule without events, a file the channel check skips; and the line the timeline
//! ends with.

mod support;

use scanner_evtx_writer::{write_events, Element, Event, Value, EVENT_NS};
use std::path::Path;
use support::{scanner_utc, scratch, succeeded, text};

/// 2024-01-01T00:00:00Z as a FILETIME, and a minute.
const START: u64 = 133_485_408_000_000_000;
const MINUTE: u64 = 600_000_000;

fn event(
    channel: &str,
    provider: &str,
    id: u16,
    minute: u64,
    computer: &str,
    data: &[(&str, &str)],
) -> Event {
    let system = Element::new("System")
        .child(Element::new("Provider").attr("Name", provider))
        .child(Element::new("EventID").text(Value::U16(id)))
        .child(
            Element::new("TimeCreated")
                .attr("SystemTime", Value::FileTime(START + minute * MINUTE)),
        )
        .child(Element::new("Channel").text(channel))
        .child(Element::new("Computer").text(computer));
    let mut d = Element::new("EventData");
    for (k, v) in data {
        d = d.child(Element::new("Data").attr("Name", *k).text(*v));
    }
    Event {
        root: Element::new("Event")
            .attr("xmlns", EVENT_NS)
            .child(system)
            .child(d),
    }
}

fn write(path: &Path, events: &[Event]) {
    let mut out = std::io::Cursor::new(Vec::new());
    write_events(events, &mut out).unwrap();
    std::fs::write(path, out.into_inner()).unwrap();
}

fn rule(dir: &Path, name: &str, logsource: &str, detection: &str) {
    let text = format!(
        "title: {name}\nid: 00000000-0000-0000-0000-{:012}\nlevel: high\nstatus: test\n\
         logsource: {logsource}\ndetection: {detection}\n",
        name.len() * 1000 + name.bytes().map(usize::from).sum::<usize>()
    );
    std::fs::write(dir.join(format!("{name}.yml")), text).unwrap();
}

const SEC: &str = "Microsoft-Windows-Security-Auditing";
const SYSMON: &str = "Microsoft-Windows-Sysmon/Operational";

/// The CSV's rows as `Status|Channel|Provider|EventID|Events|Computers|FirstTime|
/// LastTime|Rules|ChannelLessRules|Detections|RuleTitle|File name`.
fn rows(csv: &str) -> Vec<String> {
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    assert_eq!(
        r.headers().unwrap().iter().collect::<Vec<_>>(),
        [
            "Status",
            "Channel",
            "Provider",
            "EventID",
            "Events",
            "Computers",
            "FirstTime",
            "LastTime",
            "Rules",
            "ChannelLessRules",
            "Detections",
            "RuleTitle",
            "RuleID",
            "RulePath",
            "File"
        ]
    );
    r.records()
        .map(|row| {
            let row = row.unwrap();
            let file = Path::new(&row[14])
                .file_name()
                .map(|f| f.to_string_lossy().into_owned());
            let mut cells: Vec<&str> = row.iter().take(12).collect();
            let file = file.unwrap_or_default();
            cells.push(&file);
            cells.join("|")
        })
        .collect()
}

#[test]
fn kinds_rules_and_detections_with_the_built_in_flags() {
    let d = scratch("coverage");
    let logs = d.join("logs");
    let rules = d.join("rules");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::create_dir_all(&rules).unwrap();
    let cmd = |m, c: &str, cl: &str| event("Security", SEC, 4688, m, c, &[("CommandLine", cl)]);
    write(
        &logs.join("sec.evtx"),
        &[
            cmd(0, "WS1", "whoami /all"),
            cmd(1, "WS2", "ipconfig"),
            cmd(2, "WS1", "net use"),
            event("Security", SEC, 4624, 3, "WS1", &[("TargetUserName", "a")]),
            event("Security", SEC, 4624, 9, "WS1", &[("TargetUserName", "b")]),
        ],
    );
    let img = |m| {
        event(
            SYSMON,
            "Microsoft-Windows-Sysmon",
            1,
            m,
            "WS3",
            &[("Image", "C:\\Windows\\System32\\whoami.exe")],
        )
    };
    write(&logs.join("sysmon.evtx"), &[img(4), img(5)]);
    rule(
        &rules,
        "Whoami",
        "{product: windows, service: security}",
        "{sel: {EventID: 4688, CommandLine|contains: whoami}, condition: sel}",
    );
    rule(
        &rules,
        "Service",
        "{product: windows, service: system}",
        "{sel: {EventID: 7045}, condition: sel}",
    );
    rule(
        &rules,
        "AnyWhoami",
        "{product: windows}",
        "{sel: {EventID: 1, Image|endswith: whoami.exe}, condition: sel}",
    );
    let (l, r) = (logs.display().to_string(), rules.display().to_string());
    let args = ["coverage", "-d", &l, "-r", &r, "-U", "-q"];
    let csv = succeeded(&args, scanner_utc(&args));
    let t = |m: u64| format!("2024-01-01 00:{m:02}:00.000 +00:00");
    assert_eq!(
        rows(&csv),
        [
            format!(
                "{}|{SYSMON}|Microsoft-Windows-Sysmon|1|2|1|{}|{}|0|1|2||",
                "channel-less rules only",
                t(4),
                t(5)
            ),
            format!("unread|Security|{SEC}|4624|2|1|{}|{}|0|0|0||", t(3), t(9)),
            format!("read|Security|{SEC}|4688|3|2|{}|{}|1|0|1||", t(0), t(2)),
            "rule without events|system||7045||||||||Service|".to_string(),
        ]
    );
    // The timeline's last line says as much, of the same records.
    let out = scanner_utc(&[
        "csv-timeline",
        "-d",
        &l,
        "-r",
        &r,
        "-U",
        "-o",
        &d.join("t.csv").display().to_string(),
    ]);
    let err = text(&out.stderr);
    assert!(
        err.contains("coverage: 28.6% of the 7 events read are of kinds (Channel, EventID) no loaded rule reads, 28.6% of kinds only rules without a channel read; `scanner coverage` lists them"),
        "{err}"
    );
    // Detections per kind add up to the timeline's rows.
    let timeline = std::fs::read_to_string(d.join("t.csv")).unwrap();
    assert_eq!(timeline.lines().count() - 1, 3);

    // Without the rule that has no channel, a log of 1 MiB or more whose channel no rule
    // reads is named as one the timeline skips; its events are still counted.
    std::fs::remove_file(rules.join("AnyWhoami.yml")).unwrap();
    let app: Vec<Event> = (0..6000)
        .map(|i| {
            event(
                "Application",
                "App",
                1000,
                i / 100,
                "WS4",
                &[("Data", "x".repeat(40).as_str())],
            )
        })
        .collect();
    write(&logs.join("app.evtx"), &app);
    assert!(std::fs::metadata(logs.join("app.evtx")).unwrap().len() >= 1 << 20);
    let csv = succeeded(&args, scanner_utc(&args));
    let got = rows(&csv);
    assert!(
        got.contains(&format!(
            "unread|Application|App|1000|6000|1|{}|2024-01-01 00:59:00.000 +00:00|0|0|0||",
            t(0)
        )),
        "{got:#?}"
    );
    assert!(
        got.contains(&"skipped file|Application|||||||||||app.evtx".to_string()),
        "{got:#?}"
    );
    assert!(
        got.iter()
            .any(|r| r.starts_with(&format!("unread|{SYSMON}|"))),
        "{got:#?}"
    );
    let json = scanner_utc(&["coverage", "-d", &l, "-r", &r, "-q", "--json"]);
    let lines: Vec<serde_json::Value> = text(&json.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), got.len());
    assert_eq!(
        lines
            .iter()
            .filter(|v| v["Status"] == "skipped file")
            .count(),
        1
    );
    std::fs::remove_dir_all(&d).unwrap();
}
