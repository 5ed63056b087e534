//! `pivot-keywords-list` on a log the test writes (`scanner evtx write`): Security 4672
//! events, which the built-in rule "Special Privileges Assigned to a User Logon"
//! (informational) reports unless the account is a service or machine account. The
//! expected lists are worked out here from the events written, by that rule's stated
//! conditions, not by running scanner.

mod support;

use std::path::Path;
use support::{scanner_utc, scratch, text};

/// (record id, SubjectUserSid, SubjectUserName, SubjectLogonId).
const EVENTS: [(u64, &str, &str, &str); 6] = [
    (1, "S-1-5-21-1-1001", "alice", "0x111"),
    (2, "S-1-5-21-1-1002", "bob", "0x222"),
    (3, "S-1-5-21-1-1001", "alice", "0x111"),
    (4, "S-1-5-21-1-1003", "WS01$", "0x333"),
    (5, "S-1-5-18", "SYSTEM", "0x3e7"),
    (6, "S-1-5-21-1-1004", "carol", "-"),
];

fn event(id: u64, sid: &str, user: &str, lid: &str) -> String {
    serde_json::json!({"Event": {
        "System": {
            "Provider_attributes": {"Name": "Microsoft-Windows-Security-Auditing"},
            "EventID": 4672,
            "TimeCreated_attributes": {"SystemTime": format!("2024-01-01T00:00:0{id}.000000Z")},
            "EventRecordID": id,
            "Channel": "Security",
            "Computer": "PC1.corp.example"
        },
        "EventData": {
            "SubjectUserSid": sid,
            "SubjectUserName": user,
            "SubjectDomainName": "CORP",
            "SubjectLogonId": lid,
            "PrivilegeList": "SeDebugPrivilege"
        }
    }})
    .to_string()
}

/// Writes the log; returns its path.
fn log(dir: &Path) -> String {
    let jsonl = dir.join("events.jsonl");
    let body: Vec<String> = EVENTS.iter().map(|e| event(e.0, e.1, e.2, e.3)).collect();
    std::fs::write(&jsonl, body.join("\n") + "\n").unwrap();
    let evtx = dir.join("log.evtx");
    let out = scanner_utc(&[
        "evtx",
        "write",
        "--from",
        jsonl.to_str().unwrap(),
        "-o",
        evtx.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    evtx.display().to_string()
}

/// The values the rule's detections give for `pick`, each once, in record order,
/// without `-`.
fn expected(
    pick: fn(&(u64, &'static str, &'static str, &'static str)) -> &'static str,
) -> Vec<&'static str> {
    let mut out = Vec::new();
    for e in &EVENTS {
        let service = ["S-1-5-18", "S-1-5-19", "S-1-5-20"].contains(&e.1);
        if service || e.2.ends_with('$') {
            continue;
        }
        let v = pick(e);
        if v != "-" && !out.contains(&v) {
            out.push(v);
        }
    }
    out
}

fn read(dir: &Path, category: &str) -> String {
    let p = dir.join(format!("pk-{category}.txt"));
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

#[test]
fn lists_the_pivot_values_of_the_detected_records_per_category() {
    let dir = scratch("pivot-lists");
    let evtx = log(&dir);
    let prefix = dir.join("pk");
    let out = scanner_utc(&[
        "pivot-keywords-list",
        "-f",
        &evtx,
        "-o",
        prefix.to_str().unwrap(),
        "-w",
        "-q",
        "-Q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let users = expected(|e| e.2);
    assert_eq!(users, ["alice", "bob", "carol"]);
    let want = format!(
        "Subject Users: ( %SubjectUserName% ):\n{}\n",
        users.join("\n")
    );
    assert_eq!(read(&dir, "Subject Users"), want);
    let lids = expected(|e| e.3);
    assert_eq!(lids, ["0x111", "0x222"]);
    let want = format!(
        "Subject Logon IDs: ( %SubjectLogonId% ):\n{}\n",
        lids.join("\n")
    );
    assert_eq!(read(&dir, "Subject Logon IDs"), want);
    // A category with nothing found: its header alone, without a line break (3.9.0's).
    assert_eq!(
        read(&dir, "Source IP Addresses"),
        "Source IP Addresses: ( %SourceIp% %ClientAddress% %SourceAddress% ):"
    );
    // One file per category of the built-in pivot_keywords.txt, and nothing else.
    let names = support::names_in(&dir);
    let lists: Vec<&String> = names.iter().filter(|n| n.starts_with("pk-")).collect();
    assert_eq!(lists.len(), 12, "{names:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_level_filter_leaves_out_the_lower_rules_records() {
    let dir = scratch("pivot-level");
    let evtx = log(&dir);
    let prefix = dir.join("pk");
    let out = scanner_utc(&[
        "pivot-keywords-list",
        "-f",
        &evtx,
        "-o",
        prefix.to_str().unwrap(),
        "-m",
        "low",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    // The rule is informational: at -m low nothing is detected, so nothing is listed.
    assert_eq!(
        read(&dir, "Subject Users"),
        "Subject Users: ( %SubjectUserName% ):"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_config_folder_names_the_categories_and_existing_lists_are_kept_without_c() {
    let dir = scratch("pivot-config");
    let evtx = log(&dir);
    let config = dir.join("config");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("pivot_keywords.txt"),
        "# who\nAccounts.SubjectUserName\nAccounts.SubjectDomainName\n",
    )
    .unwrap();
    let prefix = dir.join("pk");
    let args = [
        "pivot-keywords-list",
        "-f",
        &evtx,
        "-c",
        config.to_str().unwrap(),
        "-o",
        prefix.to_str().unwrap(),
        "-q",
    ];
    let out = scanner_utc(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert_eq!(
        read(&dir, "Accounts"),
        "Accounts: ( %SubjectUserName% %SubjectDomainName% ):\nalice\nCORP\nbob\ncarol\n"
    );
    // Run again: the list exists and -C was not given.
    let out = scanner_utc(&args);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stderr).contains("pk-Accounts.txt"),
        "{}",
        text(&out.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}
