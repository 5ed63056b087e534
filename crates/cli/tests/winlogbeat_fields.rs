//! Winlogbeat's fields that EVTX keeps elsewhere: `winlog.user_data` (with its
//! `xml_name`) read as the `UserData` element it came from, and the level Winlogbeat
//! gives only as text (`log.level`) read as the System `Level` rules test. The same
//! two events, written as EVTX and as Winlogbeat documents, give the same detections.

mod support;

use serde_json::json;
use support::{root, scanner_utc, scratch, text};

const EVENTS: &str = r#"<Events>
<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="Microsoft-Windows-Eventlog"/>
    <EventID>104</EventID>
    <Version>0</Version>
    <Level>4</Level>
    <Task>104</Task>
    <Opcode>0</Opcode>
    <Keywords>0x8000000000000000</Keywords>
    <TimeCreated SystemTime="2024-03-12T10:00:00.0000000Z"/>
    <EventRecordID>5001</EventRecordID>
    <Channel>System</Channel>
    <Computer>FS01.corp.example</Computer>
  </System>
  <UserData>
    <LogFileCleared xmlns="http://manifests.microsoft.com/win/2004/08/windows/eventlog">
      <SubjectUserName>Administrator</SubjectUserName>
      <SubjectDomainName>CORP</SubjectDomainName>
      <Channel>Application</Channel>
      <BackupPath>C:\bak\app.evtx</BackupPath>
    </LogFileCleared>
  </UserData>
</Event>
<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="Microsoft-Windows-PowerShell"/>
    <EventID>4104</EventID>
    <Version>1</Version>
    <Level>3</Level>
    <Task>2</Task>
    <Opcode>15</Opcode>
    <Keywords>0x0</Keywords>
    <TimeCreated SystemTime="2024-03-12T10:05:00.0000000Z"/>
    <EventRecordID>7001</EventRecordID>
    <Channel>Microsoft-Windows-PowerShell/Operational</Channel>
    <Computer>FS01.corp.example</Computer>
  </System>
  <EventData>
    <Data Name="MessageNumber">1</Data>
    <Data Name="MessageTotal">1</Data>
    <Data Name="ScriptBlockText">Invoke-Mimikatz -DumpCreds</Data>
    <Data Name="ScriptBlockId">7c6a2f7e-0000-4000-8000-000000000001</Data>
  </EventData>
</Event>
</Events>
"#;

/// A rule that tests the System `Level`, as Hayabusa's PowerShell warning rules do.
const LEVEL_RULE: &str = "title: ScriptBlock Logged As Warning
id: 5a1e0000-0000-4000-8000-000000000001
level: medium
logsource:
    product: windows
    service: powershell
detection:
    selection:
        Channel: Microsoft-Windows-PowerShell/Operational
        EventID: 4104
        Level: 3
    condition: selection
details: 'Script: %ScriptBlockText%'
";

#[test]
fn winlogbeat_user_data_and_level_give_the_detections_of_the_evtx() {
    let d = scratch("winlogbeat");
    let rules = d.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    std::fs::write(rules.join("level.yml"), LEVEL_RULE).unwrap();
    std::fs::copy(
        root().join("rules/system/log_cleared.yml"),
        rules.join("log_cleared.yml"),
    )
    .unwrap();
    let xml = d.join("events.xml");
    std::fs::write(&xml, EVENTS).unwrap();
    let evtx_dir = d.join("evtx");
    std::fs::create_dir_all(&evtx_dir).unwrap();
    let evtx = evtx_dir.join("events.evtx");
    let out = scanner_utc(&[
        "evtx",
        "write",
        "--from",
        xml.to_str().unwrap(),
        "-o",
        evtx.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The same events as Winlogbeat 8 writes them.
    let docs = [
        json!({
            "@timestamp": "2024-03-12T10:00:00.000Z",
            "log": {"level": "information"},
            "event": {"code": "104"},
            "winlog": {
                "channel": "System", "event_id": "104", "record_id": 5001,
                "computer_name": "FS01.corp.example",
                "provider_name": "Microsoft-Windows-Eventlog",
                "opcode": "Info", "version": 0, "keywords": ["Classic"],
                "user_data": {
                    "xml_name": "LogFileCleared",
                    "SubjectUserName": "Administrator", "SubjectDomainName": "CORP",
                    "Channel": "Application", "BackupPath": "C:\\bak\\app.evtx"
                }
            }
        }),
        json!({
            "@timestamp": "2024-03-12T10:05:00.000Z",
            "log": {"level": "warning"},
            "event": {"code": "4104"},
            "winlog": {
                "channel": "Microsoft-Windows-PowerShell/Operational", "event_id": "4104",
                "record_id": 7001, "computer_name": "FS01.corp.example",
                "provider_name": "Microsoft-Windows-PowerShell", "version": 1,
                "event_data": {
                    "MessageNumber": "1", "MessageTotal": "1",
                    "ScriptBlockText": "Invoke-Mimikatz -DumpCreds",
                    "ScriptBlockId": "7c6a2f7e-0000-4000-8000-000000000001"
                }
            }
        }),
    ];
    let beats_dir = d.join("beats");
    std::fs::create_dir_all(&beats_dir).unwrap();
    let lines: Vec<String> = docs.iter().map(|v| v.to_string()).collect();
    std::fs::write(beats_dir.join("winlogbeat.jsonl"), lines.join("\n") + "\n").unwrap();
    let timeline = |dir: &std::path::Path| {
        let out = d.join("out.csv");
        let (o, dir, r) = (
            out.display().to_string(),
            dir.display().to_string(),
            rules.display().to_string(),
        );
        let args = ["csv-timeline", "-r", &r, "-w", "-C", "-d", &dir, "-o", &o];
        let run = scanner_utc(&args);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
        std::fs::read_to_string(&out).unwrap()
    };
    let want = timeline(&evtx_dir);
    assert!(want.contains("ScriptBlock Logged As Warning"), "{want}");
    assert!(
        want.contains("User: Administrator ¦ Domain: CORP"),
        "{want}"
    );
    assert_eq!(timeline(&beats_dir), want);
    std::fs::remove_dir_all(&d).unwrap();
}
