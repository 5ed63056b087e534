//! The background of Windows' own services: the Service Control Manager (System
//! channel), Defender and the Task Scheduler. Most of it is services starting and
//! stopping; the rest is rare, and every one of those events fires a rule.

use super::catalog::{domain_account, domain_sid, well_known, DEFENDER, LOCAL_SYSTEM, SCM, TASKS};
use super::kind::Kind;
use super::world::{Body, Header, World};
use crate::value::{format_filetime, push_utf16, Value};

/// A service entering the running or stopped state.
const SERVICE_STATE: Header = Header {
    provider: &SCM,
    event_id: 7036,
    version: 0,
    level: 4,
    task: 0,
};

/// The services' kinds, in draw order.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        per_10k: 5,
        header: Header {
            event_id: 7045,
            ..SERVICE_STATE
        },
        body: service_installed,
        rules: &["d4899374-5cf6-40d8-8813-e9de861f9513"],
    },
    Kind {
        per_10k: 800,
        header: SERVICE_STATE,
        body: service_state,
        rules: &[],
    },
    Kind {
        per_10k: 2,
        header: Header {
            provider: &DEFENDER,
            event_id: 1116,
            version: 0,
            level: 3,
            task: 0,
        },
        body: defender_detection,
        rules: &["242220fa-e11b-4124-93f0-669233305e0b"],
    },
    Kind {
        per_10k: 1,
        header: Header {
            provider: &DEFENDER,
            event_id: 5001,
            version: 0,
            level: 4,
            task: 0,
        },
        body: defender_disabled,
        rules: &["84b36e15-7d93-4f53-ad04-448670a8b82b"],
    },
    Kind {
        per_10k: 7,
        header: Header {
            provider: &TASKS,
            event_id: 106,
            version: 0,
            level: 4,
            task: 106,
        },
        body: task_registered,
        rules: &["9d49ba32-c2cd-4241-aec6-d518624e9733"],
    },
    // The last draws: more service state changes. A second entry rather than a larger
    // share of the first, so that every draw falls on the kind it always has.
    Kind {
        per_10k: 54,
        header: SERVICE_STATE,
        body: service_state,
        rules: &[],
    },
];

/// 7045: an updater's service installed.
fn service_installed(w: &mut World) -> Body {
    let host = w.host();
    let (name, path) = *w.rng.pick(&[
        ("Google Update Service (gupdate)", "\"C:\\Program Files (x86)\\Google\\Update\\GoogleUpdate.exe\" /svc"),
        ("Mozilla Maintenance Service", "\"C:\\Program Files (x86)\\Mozilla Maintenance Service\\maintenanceservice.exe\""),
        ("Microsoft Edge Elevation Service (MicrosoftEdgeElevationService)", "\"C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\122.0.2365.80\\elevation_service.exe\""),
    ]);
    let data = vec![
        ("ServiceName", name.into()),
        ("ImagePath", path.into()),
        ("ServiceType", "user mode service".into()),
        ("StartType", "auto start".into()),
        ("AccountName", "LocalSystem".into()),
    ];
    Body::fields(host, Some(domain_sid(1107)), data)
}

/// 7036: a Windows service started or stopped.
fn service_state(w: &mut World) -> Body {
    let host = w.host();
    let (svc, key) = *w.rng.pick(&[
        ("Windows Update", "wuauserv"),
        ("Background Intelligent Transfer Service", "BITS"),
        ("Windows Modules Installer", "TrustedInstaller"),
        ("Delivery Optimization", "DoSvc"),
    ]);
    let state = *w.rng.pick(&["running", "stopped"]);
    // The service's key name, UTF-16 with its terminator.
    let mut binary = Vec::new();
    push_utf16(&mut binary, key);
    binary.extend_from_slice(&[0, 0]);
    let data = vec![
        ("param1", svc.into()),
        ("param2", state.into()),
        ("Binary", Value::Binary(binary)),
    ];
    Body::fields(host, None, data)
}

/// 1116: the EICAR test file found in a user's downloads.
fn defender_detection(w: &mut World) -> Body {
    let host = w.host();
    let (user, _) = w.user();
    let data = vec![
        ("Product Name", "Microsoft Defender Antivirus".into()),
        ("Product Version", "4.18.24010.12".into()),
        ("Detection ID", w.guid().render().to_uppercase().into()),
        (
            "Detection Time",
            format_filetime(w.time)[..23].to_owned().into(),
        ),
        ("Threat ID", "2147519003".into()),
        ("Threat Name", "Virus:DOS/EICAR_Test_File".into()),
        ("Severity ID", "5".into()),
        ("Severity Name", "Severe".into()),
        ("Category ID", "42".into()),
        ("Category Name", "Virus".into()),
        (
            "Path",
            format!("file:_C:\\Users\\{user}\\Downloads\\eicar.com.txt").into(),
        ),
        ("Detection User", domain_account(user).into()),
        (
            "Process Name",
            "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe".into(),
        ),
        ("Action Name", "Not Applicable".into()),
    ];
    local_system(host, data)
}

/// 5001: real-time protection turned off.
fn defender_disabled(w: &mut World) -> Body {
    let host = w.host();
    let data = vec![
        ("Product Name", "Microsoft Defender Antivirus".into()),
        ("Product Version", "4.18.24010.12".into()),
    ];
    local_system(host, data)
}

/// 106: an updater's scheduled task registered.
fn task_registered(w: &mut World) -> Body {
    let host = w.host();
    let task = *w.rng.pick(&[
        "\\Microsoft\\Windows\\UpdateOrchestrator\\Schedule Scan",
        "\\GoogleUpdateTaskMachineUA",
        "\\Microsoft\\Office\\Office Automatic Updates 2.0",
    ]);
    let data = vec![
        ("TaskName", task.into()),
        ("UserContext", "NT AUTHORITY\\System".into()),
    ];
    local_system(host, data)
}

/// Defender and the Task Scheduler write as LocalSystem.
fn local_system(computer: &'static str, data: Vec<(&str, Value)>) -> Body {
    Body::fields(computer, Some(well_known(LOCAL_SYSTEM)), data)
}

#[cfg(test)]
mod tests {
    use super::super::kind::samples::{draw_all, field};
    use super::*;

    #[test]
    fn the_service_kinds_carry_their_event_ids_and_fields() {
        // Channels differ by provider: draw each kind under its own.
        for (i, kind) in KINDS.iter().enumerate() {
            let events = draw_all(&KINDS[i..=i], kind.header.provider.channel, 100);
            for e in &events[0] {
                let must = match kind.header.event_id {
                    7045 => &["ServiceName", "ImagePath", "StartType"][..],
                    7036 => &["param1", "param2", "Binary"][..],
                    1116 => &["Threat Name", "Path", "Detection Time"][..],
                    5001 => &["Product Name"][..],
                    106 => &["TaskName", "UserContext"][..],
                    other => panic!("unexpected kind {other}"),
                };
                for name in must {
                    assert!(!field(e, name).unwrap().is_empty(), "{name}");
                }
            }
        }
    }

    #[test]
    fn only_service_state_changes_fire_nothing() {
        let quiet: Vec<u16> = KINDS
            .iter()
            .filter(|k| k.rules.is_empty())
            .map(|k| k.header.event_id)
            .collect();
        assert_eq!(quiet, [7036, 7036]);
        let binary = &draw_all(&KINDS[1..2], "System", 1)[0][0];
        let b = field(binary, "Binary").unwrap();
        // The key name in UTF-16LE with its terminator, rendered as hex.
        assert!(b.ends_with("0000"), "{b}");
    }
}
