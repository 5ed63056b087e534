//! Sysmon's background: processes, network connections, image loads, process access,
//! file creation and registry changes, all of everyday software.

use super::catalog::{domain_account, well_known, LOCAL_SYSTEM, PROCESSES, SYSMON};
use super::kind::Kind;
use super::world::{Body, Header, World};
use crate::value::Value;

/// Sysmon's kinds, in draw order.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        per_10k: 900,
        header: header(1, 5),
        body: process_created,
        rules: &[],
    },
    Kind {
        per_10k: 900,
        header: header(3, 5),
        body: network_connection,
        rules: &[],
    },
    Kind {
        per_10k: 800,
        header: header(7, 3),
        body: image_loaded,
        rules: &[],
    },
    Kind {
        per_10k: 300,
        header: header(10, 3),
        body: process_accessed,
        rules: &[],
    },
    Kind {
        per_10k: 500,
        header: header(11, 2),
        body: file_created,
        rules: &[],
    },
    Kind {
        per_10k: 300,
        header: header(12, 2),
        body: registry_key_created,
        rules: &[],
    },
    Kind {
        per_10k: 400,
        header: header(13, 2),
        body: registry_value_set,
        rules: &[],
    },
];

/// A Sysmon header: level 4, the task is the event id.
const fn header(event_id: u16, version: u8) -> Header {
    Header {
        provider: &SYSMON,
        event_id,
        version,
        level: 4,
        task: event_id,
    }
}

/// Sysmon runs as LocalSystem.
fn body(computer: &'static str, data: Vec<(&str, Value)>) -> Body {
    Body::fields(computer, Some(well_known(LOCAL_SYSTEM)), data)
}

/// The fields every Sysmon event about one process opens with: `RuleName`, `UtcTime`,
/// `ProcessGuid`, `ProcessId`.
fn process_fields(w: &mut World) -> Vec<(&'static str, Value)> {
    vec![
        ("RuleName", "-".into()),
        ("UtcTime", w.utc_time().into()),
        ("ProcessGuid", w.guid()),
        ("ProcessId", Value::U32(w.process_id())),
    ]
}

/// 1: one of the benign processes started by its usual parent.
fn process_created(w: &mut World) -> Body {
    let host = w.host();
    let (user, _) = w.user();
    let (image, cmd, parent) = *w.rng.pick(PROCESSES);
    let image = image.replace("{u}", user);
    let file = image.rsplit('\\').next().unwrap_or("").to_owned();
    let (g, pg) = (w.guid(), w.guid());
    let data = vec![
        ("RuleName", "-".into()),
        ("UtcTime", w.utc_time().into()),
        ("ProcessGuid", g),
        ("ProcessId", Value::U32(w.process_id())),
        ("Image", image.clone().into()),
        ("FileVersion", "10.0.19041.1".into()),
        ("Description", "-".into()),
        ("Product", "-".into()),
        ("Company", "Microsoft Corporation".into()),
        ("OriginalFileName", file.into()),
        ("CommandLine", cmd.replace("{u}", user).into()),
        ("CurrentDirectory", format!("C:\\Users\\{user}\\").into()),
        ("User", domain_account(user).into()),
        ("LogonGuid", w.guid()),
        ("LogonId", Value::Hex64(w.logon_id())),
        ("TerminalSessionId", Value::U32(1)),
        ("IntegrityLevel", "Medium".into()),
        ("Hashes", w.sha256().into()),
        ("ParentProcessGuid", pg),
        ("ParentProcessId", Value::U32(w.process_id())),
        ("ParentImage", parent.into()),
        ("ParentCommandLine", parent.into()),
        ("ParentUser", domain_account(user).into()),
    ];
    body(host, data)
}

/// 3: a browser, svchost or OneDrive connecting out.
fn network_connection(w: &mut World) -> Body {
    let host = w.host();
    let (user, _) = w.user();
    let (image, dest, port): (String, String, u16) = match w.rng.below(3) {
        0 => (
            "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe".into(),
            format!("142.250.{}.{}", w.rng.below(255), w.rng.below(255)),
            443,
        ),
        1 => (
            "C:\\Windows\\System32\\svchost.exe".into(),
            w.private_ip(),
            135,
        ),
        _ => (
            format!("C:\\Users\\{user}\\AppData\\Local\\Microsoft\\OneDrive\\OneDrive.exe"),
            format!("13.107.{}.{}", w.rng.below(255), w.rng.below(255)),
            443,
        ),
    };
    let src = w.private_ip();
    let mut data = process_fields(w);
    data.extend([
        ("Image", image.into()),
        ("User", domain_account(user).into()),
        ("Protocol", "tcp".into()),
        ("Initiated", Value::Bool(true)),
        ("SourceIsIpv6", Value::Bool(false)),
        ("SourceIp", src.into()),
        ("SourceHostname", "-".into()),
        ("SourcePort", Value::U16(w.client_port() as u16)),
        ("SourcePortName", "-".into()),
        ("DestinationIsIpv6", Value::Bool(false)),
        ("DestinationIp", dest.into()),
        ("DestinationHostname", "-".into()),
        ("DestinationPort", Value::U16(port)),
        (
            "DestinationPortName",
            if port == 443 { "https" } else { "epmap" }.into(),
        ),
    ]);
    body(host, data)
}

/// 7: a system DLL loaded by a browser, svchost or Explorer.
fn image_loaded(w: &mut World) -> Body {
    let host = w.host();
    let (user, _) = w.user();
    let image = *w.rng.pick(&[
        "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
        "C:\\Windows\\System32\\svchost.exe",
        "C:\\Windows\\explorer.exe",
    ]);
    let dll = *w.rng.pick(&[
        "ntdll.dll",
        "kernel32.dll",
        "crypt32.dll",
        "winhttp.dll",
        "bcrypt.dll",
        "dnsapi.dll",
    ]);
    let mut data = process_fields(w);
    data.extend([
        ("Image", image.into()),
        (
            "ImageLoaded",
            format!("C:\\Windows\\System32\\{dll}").into(),
        ),
        ("FileVersion", "10.0.19041.3636".into()),
        ("Description", "-".into()),
        ("Product", "Microsoft® Windows® Operating System".into()),
        ("Company", "Microsoft Corporation".into()),
        ("OriginalFileName", dll.into()),
        ("Hashes", w.sha256().into()),
        ("Signed", "true".into()),
        ("Signature", "Microsoft Windows".into()),
        ("SignatureStatus", "Valid".into()),
        ("User", domain_account(user).into()),
    ]);
    body(host, data)
}

/// 10: Task Manager opening a process, LSASS with query rights only.
fn process_accessed(w: &mut World) -> Body {
    let host = w.host();
    let (target, access) = match w.rng.below(3) {
        0 => ("C:\\Windows\\System32\\lsass.exe", 0x1000u32),
        1 => ("C:\\Windows\\System32\\svchost.exe", 0x1f_ffff),
        _ => (
            "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
            0x1410,
        ),
    };
    let data = vec![
        ("RuleName", "-".into()),
        ("UtcTime", w.utc_time().into()),
        ("SourceProcessGUID", w.guid()),
        ("SourceProcessId", Value::U32(w.process_id())),
        // Thread ids come from the same pool as process ids.
        ("SourceThreadId", Value::U32(w.process_id())),
        ("SourceImage", "C:\\Windows\\System32\\taskmgr.exe".into()),
        ("TargetProcessGUID", w.guid()),
        ("TargetProcessId", Value::U32(w.process_id())),
        ("TargetImage", target.into()),
        ("GrantedAccess", Value::Hex32(access)),
        (
            "CallTrace",
            "C:\\Windows\\SYSTEM32\\ntdll.dll+9d204|C:\\Windows\\System32\\KERNELBASE.dll+2c13e"
                .into(),
        ),
        ("SourceUser", "CORP\\jsmith".into()),
        ("TargetUser", "NT AUTHORITY\\SYSTEM".into()),
    ];
    body(host, data)
}

/// 11: a browser's temporary file, a download or a prefetch file.
fn file_created(w: &mut World) -> Body {
    let host = w.host();
    let (user, _) = w.user();
    let n = w.rng.below(100_000);
    let target = match w.rng.below(3) {
        0 => format!("C:\\Users\\{user}\\AppData\\Local\\Temp\\chrome_{n}.tmp"),
        1 => format!("C:\\Users\\{user}\\Downloads\\invoice_{n}.pdf"),
        _ => format!("C:\\Windows\\Prefetch\\SVCHOST.EXE-{n:08X}.pf"),
    };
    let mut data = process_fields(w);
    data.extend([
        (
            "Image",
            "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe".into(),
        ),
        ("TargetFilename", target.into()),
        ("CreationUtcTime", w.utc_time().into()),
        ("User", domain_account(user).into()),
    ]);
    body(host, data)
}

/// 12: Explorer creating a key under the user's hive.
fn registry_key_created(w: &mut World) -> Body {
    registry_change(w, false)
}

/// 13: Explorer setting a value under the user's hive.
fn registry_value_set(w: &mut World) -> Body {
    registry_change(w, true)
}

/// A registry event; `set`: a value set (with its details), else a key created.
fn registry_change(w: &mut World, set: bool) -> Body {
    let host = w.host();
    let (user, sid) = w.user();
    let key = *w.rng.pick(&[
        "\\Software\\Microsoft\\Office\\16.0\\Word\\Options\\AutoRecoverTime",
        "\\Software\\Microsoft\\Windows\\CurrentVersion\\Explorer\\RecentDocs\\MRUListEx",
        "\\Software\\Microsoft\\Windows\\CurrentVersion\\Explorer\\UserAssist\\Count\\HRZR_PGYFRFFVBA",
    ]);
    let mut data = vec![
        ("RuleName", "-".into()),
        (
            "EventType",
            if set { "SetValue" } else { "CreateKey" }.into(),
        ),
        ("UtcTime", w.utc_time().into()),
        ("ProcessGuid", w.guid()),
        ("ProcessId", Value::U32(w.process_id())),
        ("Image", "C:\\Windows\\explorer.exe".into()),
        ("TargetObject", format!("HKU\\{sid}{key}").into()),
    ];
    if set {
        data.push((
            "Details",
            format!("DWORD (0x{:08x})", w.rng.below(4096)).into(),
        ));
    }
    data.push(("User", domain_account(user).into()));
    body(host, data)
}

#[cfg(test)]
mod tests {
    use super::super::kind::samples::{data_names, draw_all, field};
    use super::*;

    #[test]
    fn every_kind_is_a_sysmon_event_with_its_fields() {
        let all = draw_all(KINDS, "Microsoft-Windows-Sysmon/Operational", 200);
        let ids: Vec<u16> = KINDS.iter().map(|k| k.header.event_id).collect();
        assert_eq!(ids, [1, 3, 7, 10, 11, 12, 13]);
        for (kind, events) in KINDS.iter().zip(&all) {
            assert!(kind.rules.is_empty());
            for e in events {
                let names = data_names(e);
                assert_eq!(names[0], "RuleName");
                assert!(names.iter().any(|n| n == "UtcTime"), "{names:?}");
                let utc = field(e, "UtcTime").unwrap();
                assert_eq!(utc.len(), "2024-03-01 00:00:00.000".len(), "{utc}");
                let user = e.system().unwrap().find("Security").unwrap();
                assert_eq!(
                    user.attribute("UserID"),
                    Some(&Value::Sid(well_known(LOCAL_SYSTEM)))
                );
                let image = ["Image", "SourceImage"]
                    .iter()
                    .find_map(|n| field(e, n))
                    .unwrap();
                assert!(
                    image.starts_with("C:\\") && !image.contains("{u}"),
                    "{image}"
                );
            }
        }
    }

    #[test]
    fn processes_and_registry_events_carry_what_rules_look_at() {
        let all = draw_all(KINDS, "Microsoft-Windows-Sysmon/Operational", 100);
        for e in &all[0] {
            for name in ["CommandLine", "ParentImage", "Hashes", "OriginalFileName"] {
                assert!(!field(e, name).unwrap().is_empty(), "{name}");
            }
            assert!(field(e, "Hashes").unwrap().starts_with("SHA256="));
        }
        for e in &all[1] {
            let port = field(e, "DestinationPort").unwrap();
            let name = field(e, "DestinationPortName").unwrap();
            assert!(matches!(
                (port.as_str(), name.as_str()),
                ("443", "https") | ("135", "epmap")
            ));
        }
        for (events, set) in [(&all[5], false), (&all[6], true)] {
            for e in events {
                let ty = field(e, "EventType").unwrap();
                assert_eq!(ty, if set { "SetValue" } else { "CreateKey" });
                assert_eq!(field(e, "Details").is_some(), set);
                assert!(field(e, "TargetObject")
                    .unwrap()
                    .starts_with("HKU\\S-1-5-21-"));
            }
        }
    }
}
