//! `logon-summary` on logs written by the test (`scanner evtx write` from XML events):
//! the expected rows are written out by hand from those events, not computed by the code
//! under test.

mod support;

use std::path::{Path, PathBuf};
use support::{scanner_utc, scratch, text};

/// One event as Event Viewer shows it; `data` is the EventData or UserData element.
fn event(channel: &str, eid: u32, rid: u64, time: &str, computer: &str, data: &str) -> String {
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="P"/>
    <EventID>{eid}</EventID>
    <TimeCreated SystemTime="{time}"/>
    <EventRecordID>{rid}</EventRecordID>
    <Channel>{channel}</Channel>
    <Computer>{computer}</Computer>
  </System>
  {data}
</Event>
"#
    )
}

/// A Security 4624/4625's EventData.
fn logon(target: &str, domain: &str, ty: u32, subject: &str, ws: &str, ip: &str) -> String {
    format!(
        r#"<EventData>
    <Data Name="SubjectUserName">{subject}</Data>
    <Data Name="SubjectDomainName">CORP</Data>
    <Data Name="TargetUserName">{target}</Data>
    <Data Name="TargetDomainName">{domain}</Data>
    <Data Name="LogonType">{ty}</Data>
    <Data Name="WorkstationName">{ws}</Data>
    <Data Name="IpAddress">{ip}</Data>
  </EventData>"#
    )
}

const LSM: &str = "Microsoft-Windows-TerminalServices-LocalSessionManager/Operational";
const RCM: &str = "Microsoft-Windows-TerminalServices-RemoteConnectionManager/Operational";

/// The test log's events.
fn events() -> String {
    let t = |s: u32| format!("2024-03-12T09:00:{s:02}.000Z");
    let mut x = String::from("<Events>\n");
    // Two identical successful logons: one row of 2, first and last time apart.
    x += &event(
        "Security",
        4624,
        1,
        &t(5),
        "HOST1",
        &logon("alice", "CORP", 10, "HOST1$", "WS1", "10.0.0.5"),
    );
    x += &event(
        "Security",
        4624,
        2,
        &t(9),
        "HOST1",
        &logon("alice", "CORP", 10, "HOST1$", "WS1", "10.0.0.5"),
    );
    x += &event(
        "Security",
        4624,
        3,
        &t(1),
        "HOST1",
        &logon("bob", "CORP", 3, "-", "-", "::1"),
    );
    x += &event(
        "Security",
        4625,
        4,
        &t(2),
        "HOST1",
        &logon("alice", "CORP", 3, "-", "WS9", "10.0.0.66"),
    );
    x += &event(
        "Security",
        4625,
        5,
        &t(7),
        "HOST1",
        &logon("alice", "CORP", 3, "-", "WS9", "10.0.0.66"),
    );
    // 3.9.0's RDP event: DOMAIN\user split, other columns absent.
    x += &event(
        LSM,
        21,
        6,
        &t(3),
        "HOST1",
        r#"<UserData><EventXML xmlns="Event_NS"><User>CORP\carol</User><SessionID>2</SessionID><Address>10.0.0.9</Address></EventXML></UserData>"#,
    );
    // 4.0's additions.
    x += &event(
        RCM,
        1149,
        7,
        &t(4),
        "HOST1",
        r#"<UserData><EventXML xmlns="Event_NS"><Param1>dave</Param1><Param2>CORP</Param2><Param3>10.0.0.7</Param3></EventXML></UserData>"#,
    );
    x += &event(
        "Security",
        4778,
        8,
        &t(6),
        "HOST1",
        r#"<EventData><Data Name="AccountName">erin</Data><Data Name="AccountDomain">CORP</Data><Data Name="LogonID">0x1</Data><Data Name="SessionName">RDP-Tcp#1</Data><Data Name="ClientName">LAPTOP</Data><Data Name="ClientAddress">10.0.0.8</Data></EventData>"#,
    );
    // Not counted: a logoff, a 4624 in another channel, a lowercase channel name.
    x += &event(
        "Security",
        4634,
        9,
        &t(8),
        "HOST1",
        &logon("zed", "CORP", 3, "-", "-", "-"),
    );
    x += &event(
        "Microsoft-Windows-Sysmon/Operational",
        4624,
        10,
        &t(8),
        "HOST1",
        &logon("zed", "CORP", 3, "-", "-", "-"),
    );
    x += &event(
        "security",
        4624,
        11,
        &t(8),
        "HOST1",
        &logon("zed", "CORP", 3, "-", "-", "-"),
    );
    x += "</Events>\n";
    x
}

/// Writes `xml` as `name`.evtx in `d`.
fn evtx(d: &Path, name: &str, xml: &str) -> PathBuf {
    let src = d.join(format!("{name}.xml"));
    let out = d.join(format!("{name}.evtx"));
    std::fs::write(&src, xml).unwrap();
    let o = scanner_utc(&[
        "evtx",
        "write",
        "--from",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    std::fs::remove_file(&src).unwrap();
    out
}

fn lines(p: &Path) -> Vec<String> {
    std::fs::read_to_string(p)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

const T: &str = "2024-03-12 09:00:";

#[test]
fn counts_each_logon_per_account_computer_type_and_source_with_first_and_last() {
    let d = scratch("logon-summary");
    let log = evtx(&d, "a", &events());
    let prefix = d.join("out");
    let o = scanner_utc(&[
        "logon-summary",
        "-f",
        log.to_str().unwrap(),
        "-o",
        prefix.to_str().unwrap(),
        "-U",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let ok = lines(&d.join("out-successful.csv"));
    assert_eq!(
        ok,
        [
            // 4.0's order: the first and last time right after the count.
            "Successful,First Logon,Last Logon,Event,Target Account,Target Domain,Target Computer,Logon Type,Source Account,Source Domain,Source Computer,Source IP Address".to_string(),
            format!("2,{T}05.000 +00:00,{T}09.000 +00:00,Sec 4624,alice,CORP,HOST1,10 - RemoteInteractive,HOST1$,CORP,WS1,10.0.0.5"),
            // Equal counts: in column order (event first).
            format!("1,{T}03.000 +00:00,{T}03.000 +00:00,RDS-LSM 21,carol,CORP,HOST1,-,-,-,-,10.0.0.9"),
            format!("1,{T}04.000 +00:00,{T}04.000 +00:00,RDS-RCM 1149,dave,CORP,HOST1,-,-,-,-,10.0.0.7"),
            format!("1,{T}01.000 +00:00,{T}01.000 +00:00,Sec 4624,bob,CORP,HOST1,3 - Network,-,CORP,-,::1"),
            format!("1,{T}06.000 +00:00,{T}06.000 +00:00,Sec 4778,erin,CORP,HOST1,-,-,-,LAPTOP,10.0.0.8"),
        ]
    );
    let failed = lines(&d.join("out-failed.csv"));
    assert_eq!(
        failed,
        [
            "Failed,First Attempt,Last Attempt,Event,Target Account,Target Domain,Target Computer,Logon Type,Source Account,Source Domain,Source Computer,Source IP Address".to_string(),
            format!("2,{T}02.000 +00:00,{T}07.000 +00:00,Sec 4625,alice,CORP,HOST1,3 - Network,-,CORP,WS9,10.0.0.66"),
        ]
    );
    // Without -C an existing output is refused, and nothing is overwritten.
    let o = scanner_utc(&[
        "logon-summary",
        "-f",
        log.to_str().unwrap(),
        "-o",
        prefix.to_str().unwrap(),
        "-q",
    ]);
    assert_ne!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("out-successful.csv"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_copy_of_the_log_doubles_the_counts_unless_x_is_given() {
    let d = scratch("logon-summary-dedupe");
    evtx(&d, "a", &events());
    evtx(&d, "b", &events());
    let dir = d.to_str().unwrap();
    let count_of_alice = |extra: &[&str]| {
        let prefix = d.join("o");
        let mut args = vec![
            "logon-summary",
            "-d",
            dir,
            "-o",
            prefix.to_str().unwrap(),
            "-C",
            "-q",
        ];
        args.extend_from_slice(extra);
        let o = scanner_utc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let rows = lines(&d.join("o-successful.csv"));
        rows.iter()
            .find(|r| r.contains(",alice,"))
            .unwrap()
            .split(',')
            .next()
            .unwrap()
            .to_string()
    };
    assert_eq!(count_of_alice(&[]), "4");
    assert_eq!(count_of_alice(&["-X"]), "2");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn without_o_the_tables_show_3_9_0s_columns_and_no_raw_control_characters() {
    let d = scratch("logon-summary-terminal");
    let hostile = "mal\x1b[2Jlory\x07";
    // XML cannot hold ESC or BEL: write the event as JSON instead.
    let json = serde_json::json!({"Event": {"System": {
        "Provider_attributes": {"Name": "P"}, "EventID": 4624, "EventRecordID": 1,
        "TimeCreated_attributes": {"SystemTime": "2024-03-12T09:00:00.000Z"},
        "Channel": "Security", "Computer": "HOST1"},
        "EventData": {"TargetUserName": hostile, "TargetDomainName": "CORP", "LogonType": 2}}});
    let src = d.join("e.json");
    std::fs::write(&src, json.to_string()).unwrap();
    let o = scanner_utc(&["logon-summary", "-J", "-f", src.to_str().unwrap(), "-q"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(!out.contains('\x1b') && !out.contains('\x07'), "{out:?}");
    assert!(out.contains("mal\\x1b[2Jlory\\x07"), "{out}");
    let header = out
        .lines()
        .find(|l| l.starts_with("Successful ") && !l.contains("Logons:"))
        .expect(&out);
    let cols: Vec<&str> = header
        .split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .collect();
    assert_eq!(
        cols,
        [
            "Successful",
            "Event",
            "Target Account",
            "Target Computer",
            "Source Computer",
            "Source IP Address"
        ]
    );
    assert!(
        out.contains("No logon failed events were detected."),
        "{out}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
