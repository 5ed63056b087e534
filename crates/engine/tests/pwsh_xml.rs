//! Classic PowerShell `key=value` extraction (channel `Windows PowerShell`, 400/403/600
//! `Data[3]`, 800 `Data[2]`) is applied whatever the input: the same events as event
//! XML and as EVTX give the same detections, Details and field lists, with the
//! extraction on and with it off.

use scanner_engine::{DetectInfo, ScannerBuilder};
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::path::{Path, PathBuf};

const RULES: &str = "title: Classic PowerShell host
id: 00000000-0000-0000-0000-00000000c401
level: low
status: test
details: 'Host: %HostApplication% ¦ Engine: %EngineVersion% ¦ State: %NewEngineState%'
logsource: {product: windows, service: powershell-classic}
detection:
    sel: {EventID: 400, HostApplication|contains: '-nop'}
    condition: sel
---
title: Classic PowerShell pipeline
id: 00000000-0000-0000-0000-00000000c402
level: low
status: test
details: 'Host: %HostName% ¦ Sequence: %SequenceNumber%'
logsource: {product: windows, service: powershell-classic}
detection:
    sel: {EventID: 800, HostName: ConsoleHost}
    condition: sel
---
title: Classic PowerShell any
id: 00000000-0000-0000-0000-00000000c403
level: low
status: test
logsource: {product: windows, service: powershell-classic}
detection:
    sel: {EventID: [400, 800]}
    condition: sel
";

fn system(eid: u32, record: u32, second: u32) -> String {
    format!(
        "<System><Provider Name=\"PowerShell\"/><EventID Qualifiers=\"0\">{eid}</EventID>\
         <Level>4</Level><Task>4</Task><Keywords>0x80000000000000</Keywords>\
         <TimeCreated SystemTime=\"2024-01-02T03:04:{second:02}.1234567Z\"/>\
         <EventRecordID>{record}</EventRecordID><Channel>Windows PowerShell</Channel>\
         <Computer>WS01</Computer><Security/></System>"
    )
}

/// Two classic PowerShell events as Event Viewer shows them: a 400 whose third `Data`
/// holds the `key=value` lines, and an 800 whose first `Data` is empty and whose second
/// holds them.
fn events_xml() -> String {
    let ns = "http://schemas.microsoft.com/win/2004/08/events/event";
    let lines400 = "\tNewEngineState=Available\n\tPreviousEngineState=None\n\n\
        \tSequenceNumber=13\n\n\tHostName=ConsoleHost\n\tHostVersion=5.1.19041.1\n\
        \tHostId=4f0c9a1e-1111-2222-3333-444455556666\n\
        \tHostApplication=powershell.exe -nop -w hidden -c IEX(a=b)\n\
        \tEngineVersion=5.1.19041.1\n\tRunspaceId=5e6f\n\tPipelineId=\n\tCommandName=\n";
    let lines800 = "\tDetailSequence=1\n\tDetailTotal=1\n\n\tSequenceNumber=15\n\n\
        \tUserId=CORP\\bob\n\tHostName=ConsoleHost\n\tHostVersion=5.1.19041.1\n";
    format!(
        "<Events>\
         <Event xmlns=\"{ns}\">{}<EventData><Data>Available</Data><Data>None</Data><Data>{lines400}</Data></EventData></Event>\
         <Event xmlns=\"{ns}\">{}<EventData><Data></Data><Data>{lines800}</Data><Data>CommandInvocation(Get-Date)</Data></EventData></Event>\
         </Events>",
        system(400, 7, 5),
        system(800, 8, 6),
    )
}

fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("scanner-pwsh-xml-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// (rule title, time, Details, AllFieldInfo) of each row of a scan of `file`.
fn scan(file: &Path, extract: bool) -> Vec<(String, String, String, String)> {
    let set = load(
        &[RuleSource::Text {
            name: "pwsh.yml".into(),
            text: RULES.into(),
        }],
        &LoadOptions::default(),
    );
    assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
    let scanner = ScannerBuilder::new()
        .all_field_info(true)
        .pwsh_field_extraction(extract)
        .build(set);
    let size = std::fs::metadata(file).unwrap().len();
    let files = [InputFile::new(file.to_path_buf(), size)];
    let result = scanner.scan(&files).unwrap();
    assert!(result.errors.is_empty(), "{:?}", result.errors);
    let title = |r: &DetectInfo| {
        scanner.rules().rules()[r.rule.index() as usize]
            .meta
            .title
            .to_string()
    };
    result
        .rows
        .iter()
        .map(|r| {
            (
                title(r),
                r.time.to_string(),
                r.details.join(" ¦ "),
                r.all_fields
                    .as_ref()
                    .map_or(String::new(), |a| a.join(" ¦ ")),
            )
        })
        .collect()
}

#[test]
fn xml_and_evtx_of_classic_powershell_events_give_the_same_fields() {
    let d = scratch("same");
    let xml = events_xml();
    let xml_path = d.join("pwsh.xml");
    std::fs::write(&xml_path, &xml).unwrap();
    let events = scanner_evtx_writer::events_from_xml(&xml).unwrap();
    assert_eq!(events.len(), 2);
    let mut evtx = std::io::Cursor::new(Vec::new());
    scanner_evtx_writer::write_events(&events, &mut evtx).unwrap();
    let evtx_path = d.join("pwsh.evtx");
    std::fs::write(&evtx_path, evtx.into_inner()).unwrap();

    let from_evtx = scan(&evtx_path, true);
    let from_xml = scan(&xml_path, true);
    assert_eq!(from_xml, from_evtx);
    let mut titles: Vec<&str> = from_xml.iter().map(|r| r.0.as_str()).collect();
    titles.sort_unstable();
    assert_eq!(
        titles,
        [
            "Classic PowerShell any",
            "Classic PowerShell any",
            "Classic PowerShell host",
            "Classic PowerShell pipeline",
        ]
    );
    let row = |title: &str| from_xml.iter().find(|r| r.0 == title).unwrap();
    let host = row("Classic PowerShell host");
    assert_eq!(
        host.2,
        "Host: powershell.exe -nop -w hidden -c IEX(a=b) ¦ Engine: 5.1.19041.1 ¦ State: Available"
    );
    assert!(host.3.contains("HostName: ConsoleHost"), "{}", host.3);
    assert_eq!(
        row("Classic PowerShell pipeline").2,
        "Host: ConsoleHost ¦ Sequence: 15"
    );

    // Off: the lines stay one value, on both inputs alike.
    let off_evtx = scan(&evtx_path, false);
    let off_xml = scan(&xml_path, false);
    assert_eq!(off_xml, off_evtx);
    let titles: Vec<&str> = off_xml.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(titles, ["Classic PowerShell any", "Classic PowerShell any"]);
    assert!(
        !off_xml[0].3.contains("HostName: ConsoleHost"),
        "{}",
        off_xml[0].3
    );
    std::fs::remove_dir_all(d).unwrap();
}
