//! `extract-base64` on a log written by the test (`scanner evtx write` from XML events).
//! The base64 strings were made with another tool (Python's `base64` module) from the
//! texts named beside them; the expected rows are written out by hand.

mod support;

use std::path::Path;
use support::{scanner_utc, scratch, text};

fn event(channel: &str, eid: u32, rid: u64, data: &str) -> String {
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="P"/>
    <EventID>{eid}</EventID>
    <TimeCreated SystemTime="2024-03-12T09:00:{:02}.000Z"/>
    <EventRecordID>{rid}</EventRecordID>
    <Channel>{channel}</Channel>
    <Computer>HOST1</Computer>
  </System>
  <EventData>{data}</EventData>
</Event>
"#,
        rid - 10
    )
}

/// "Write-Host hi" in UTF-16 LE, unpadded.
const PS: &str = "VwByAGkAdABlAC0ASABvAHMAdAAgAGgAaQA";

fn events() -> String {
    let mut x = String::from("<Events>\n");
    x += &event(
        "Microsoft-Windows-Sysmon/Operational",
        1,
        10,
        // "hello world!!" in UTF-8.
        &format!(
            r#"<Data Name="CommandLine">powershell.exe -enc {PS}</Data><Data Name="ParentCommandLine">cmd /c echo aGVsbG8gd29ybGQhIQ== &gt; x</Data>"#
        ),
    );
    // Ten bytes of a gzip header.
    x += &event(
        "Microsoft-Windows-PowerShell/Operational",
        4104,
        11,
        r#"<Data Name="ScriptBlockText">$d = 'H4sIAAAAAAAAAw=='</Data>"#,
    );
    // "SGVsbG8gd29ybGQ=" (itself base64) in UTF-8: 4.0's PowerShell 4100.
    x += &event(
        "Microsoft-Windows-PowerShell/Operational",
        4100,
        12,
        r#"<Data Name="Payload">x U0dWc2JHOGdkMjl5YkdRPQ== y</Data>"#,
    );
    // 4.0's classic 600: the third Data.
    x += &event(
        "Windows PowerShell",
        600,
        13,
        &format!("<Data>Registry</Data><Data>Started</Data><Data>HostApplication=powershell -enc {PS}</Data>"),
    );
    // After a '-' ("ABCDEFGHIJ"): left out; too short, only letters: not base64 here;
    // "=1+2 calc run" in UTF-8: a formula for a spreadsheet.
    x += &event(
        "Security",
        4688,
        14,
        r#"<Data Name="CommandLine">run {0000-QUJDREVGR0hJSg==} ThisIsAllLetters short1 PTErMiBjYWxjIHJ1bg==</Data>"#,
    );
    // Not an event read.
    x += &event(
        "Security",
        4624,
        15,
        &format!(r#"<Data Name="CommandLine">{PS}</Data>"#),
    );
    x += "</Events>\n";
    x
}

fn write_log(d: &Path) -> String {
    let src = d.join("e.xml");
    let out = d.join("e.evtx");
    std::fs::write(&src, events()).unwrap();
    let o = scanner_utc(&[
        "evtx",
        "write",
        "--from",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    out.to_str().unwrap().to_string()
}

fn csv_rows(s: &str) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_reader(s.as_bytes())
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

#[test]
fn finds_decodes_and_classifies_base64_in_the_fields_read() {
    let d = scratch("extract-base64");
    let log = write_log(&d);
    let out = d.join("b64.csv");
    let o = scanner_utc(&[
        "extract-base64",
        "-f",
        &log,
        "-o",
        out.to_str().unwrap(),
        "-U",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let rows = csv_rows(&std::fs::read_to_string(&out).unwrap());
    let t = |s: u32| format!("2024-03-12 09:00:{s:02}.000 +00:00");
    let row = |s: u32,
               b64: &str,
               dec: &str,
               orig: &str,
               len: &str,
               bin: &str,
               dbl: &str,
               enc: &str,
               ft: &str,
               ev: &str,
               rid: &str| {
        [
            t(s).as_str(),
            "HOST1",
            b64,
            dec,
            orig,
            len,
            bin,
            dbl,
            enc,
            ft,
            ev,
            rid,
            log.as_str(),
        ]
        .map(str::to_string)
        .to_vec()
    };
    let want = vec![
        [
            "Timestamp",
            "Computer",
            "Base64 String",
            "Decoded String",
            "Original Field",
            "Length",
            "Binary",
            "Double Encoding",
            "Encoding",
            "File Type",
            "Event",
            "Record ID",
            "File Name",
        ]
        .map(str::to_string)
        .to_vec(),
        row(
            0,
            PS,
            "Write-Host hi",
            "powershell.exe -enc <Base64String>",
            "13",
            "N",
            "N",
            "UTF-16 LE",
            "text",
            "Sysmon 1",
            "10",
        ),
        row(
            0,
            "aGVsbG8gd29ybGQhIQ",
            "hello world!!",
            "cmd /c echo <Base64String> > x",
            "13",
            "N",
            "N",
            "UTF-8",
            "text",
            "Sysmon 1",
            "10",
        ),
        row(
            1,
            "H4sIAAAAAAAAAw",
            "(Binary Data)",
            "$d = '<Base64String>'",
            "10",
            "Y",
            "N",
            "Binary",
            "application/gzip",
            "PwSh 4104",
            "11",
        ),
        row(
            2,
            "U0dWc2JHOGdkMjl5YkdRPQ",
            "SGVsbG8gd29ybGQ=",
            "x <Base64String> y",
            "16",
            "N",
            "Y",
            "UTF-8",
            "text",
            "PwSh 4100",
            "12",
        ),
        row(
            3,
            PS,
            "Write-Host hi",
            "HostApplication=powershell -enc <Base64String>",
            "13",
            "N",
            "N",
            "UTF-16 LE",
            "text",
            "PwShClassic 600",
            "13",
        ),
        row(
            4,
            "PTErMiBjYWxjIHJ1bg",
            "=1+2 calc run",
            "run {0000-QUJDREVGR0hJSg==} ThisIsAllLetters short1 <Base64String>",
            "13",
            "N",
            "N",
            "UTF-8",
            "text",
            "Sec 4688",
            "14",
        ),
    ];
    assert_eq!(rows, want);

    // --excel-safe: the decoded formula is written as text.
    let o = scanner_utc(&[
        "extract-base64",
        "-f",
        &log,
        "-o",
        out.to_str().unwrap(),
        "-U",
        "-q",
        "-C",
        "--excel-safe",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let rows = csv_rows(&std::fs::read_to_string(&out).unwrap());
    assert_eq!(rows.last().unwrap()[3], "'=1+2 calc run");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_log_without_base64_gives_the_header_only_and_says_so() {
    let d = scratch("extract-base64-none");
    let src = d.join("e.xml");
    std::fs::write(
        &src,
        format!(
            "<Events>\n{}</Events>\n",
            event(
                "Security",
                4688,
                10,
                r#"<Data Name="CommandLine">whoami /all</Data>"#
            )
        ),
    )
    .unwrap();
    let log = d.join("e.evtx");
    let o = scanner_utc(&[
        "evtx",
        "write",
        "--from",
        src.to_str().unwrap(),
        "-o",
        log.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = scanner_utc(&["extract-base64", "-f", log.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(csv_rows(&text(&o.stdout)).len(), 1);
    assert!(
        text(&o.stderr).contains("No matches found."),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}
