//! The Security channel's background: logons and logoffs, failed logons, special
//! privileges, process creation, and now and then an account, a group member or a
//! cleared log.

use super::catalog::{
    domain_sid, short_host, well_known, DOMAIN_CONTROLLER, EVENTLOG, LOCAL_SYSTEM, NULL_SID,
    PROCESSES, SECURITY, SECURITY_FAILURE,
};
use super::kind::Kind;
use super::world::{Body, Header, World};
use crate::event::Element;
use crate::value::{Guid, Sid, Value};

/// The Security channel's kinds, in draw order.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        per_10k: 1500,
        header: header(4624, 2, 12544),
        body: logon,
        rules: &[],
    },
    Kind {
        per_10k: 200,
        header: Header {
            provider: &SECURITY_FAILURE,
            ..header(4625, 0, 12544)
        },
        body: logon_failure,
        rules: &[],
    },
    Kind {
        per_10k: 1200,
        header: header(4634, 0, 12545),
        body: logoff,
        rules: &[],
    },
    Kind {
        per_10k: 500,
        header: header(4672, 0, 12548),
        body: special_logon_system,
        rules: &[],
    },
    Kind {
        per_10k: 20,
        header: header(4672, 0, 12548),
        body: special_logon_admin,
        rules: &["60f55ecd-1c34-4879-a4d5-2f050d93d482"],
    },
    Kind {
        per_10k: 1100,
        header: header(4688, 2, 13312),
        body: process_created,
        rules: &[],
    },
    Kind {
        per_10k: 3,
        header: header(4720, 0, 13824),
        body: user_created,
        rules: &["80495b63-1ebb-4eae-bfbf-43ab4506feb8"],
    },
    Kind {
        per_10k: 7,
        header: header(4732, 0, 13826),
        body: group_member_added,
        rules: &[],
    },
    Kind {
        per_10k: 1,
        header: Header {
            provider: &EVENTLOG,
            event_id: 1102,
            version: 0,
            level: 4,
            task: 104,
        },
        body: security_log_cleared,
        rules: &["b277dd4c-32d4-48e9-89c1-d09489b3277f"],
    },
];

/// A Security-Auditing header (level 0).
const fn header(event_id: u16, version: u8, task: u16) -> Header {
    Header {
        provider: &SECURITY,
        event_id,
        version,
        level: 0,
        task,
    }
}

/// 4624: an interactive, network, service or unlock logon.
fn logon(w: &mut World) -> Body {
    let host = w.host();
    let (user, sid) = w.user();
    let kind = w.rng.below(4);
    let logon_id = w.logon_id();
    let (ltype, process, package, ip, target, tsid): (u32, &str, &str, String, &str, Sid) =
        match kind {
            0 => (2, "User32 ", "Negotiate", "127.0.0.1".into(), user, sid),
            1 => (3, "Kerberos", "Kerberos", w.private_ip(), user, sid),
            2 => (
                5,
                "Advapi  ",
                "Negotiate",
                "-".into(),
                "SYSTEM",
                well_known(LOCAL_SYSTEM),
            ),
            _ => (7, "User32 ", "Negotiate", "127.0.0.1".into(), user, sid),
        };
    let network = ltype == 3;
    let data = vec![
        ("SubjectUserSid", Value::Sid(well_known(LOCAL_SYSTEM))),
        ("SubjectUserName", short_host(host).into()),
        ("SubjectDomainName", "CORP".into()),
        ("SubjectLogonId", Value::Hex64(0x3e7)),
        ("TargetUserSid", Value::Sid(tsid)),
        ("TargetUserName", target.into()),
        (
            "TargetDomainName",
            if ltype == 5 { "NT AUTHORITY" } else { "CORP" }.into(),
        ),
        ("TargetLogonId", Value::Hex64(logon_id)),
        ("LogonType", Value::U32(ltype)),
        ("LogonProcessName", process.into()),
        ("AuthenticationPackageName", package.into()),
        (
            "WorkstationName",
            if network {
                "-".into()
            } else {
                short_host(host)
            }
            .into(),
        ),
        ("LogonGuid", Value::Guid(Guid([0; 16]))),
        ("TransmittedServices", "-".into()),
        ("LmPackageName", "-".into()),
        ("KeyLength", Value::U32(0)),
        ("ProcessId", Value::Hex64(if network { 0 } else { 0x2c4 })),
        (
            "ProcessName",
            if network {
                "-"
            } else {
                "C:\\Windows\\System32\\lsass.exe"
            }
            .into(),
        ),
        ("IpAddress", Value::String(ip)),
        (
            "IpPort",
            if network {
                Value::String(w.client_port().to_string())
            } else {
                "0".into()
            },
        ),
        ("ImpersonationLevel", "%%1833".into()),
        ("ElevatedToken", "%%1842".into()),
    ];
    Body::fields(host, None, data)
}

/// 4625: a network logon with a bad name or password, an expired or disabled account.
fn logon_failure(w: &mut World) -> Body {
    let host = w.host();
    let (user, _) = w.user();
    let sub = *w
        .rng
        .pick(&[0xc000_0072u32, 0xc000_006f, 0xc000_0070, 0xc000_0193]);
    let ip = w.private_ip();
    let data = vec![
        ("SubjectUserSid", Value::Sid(well_known(NULL_SID))),
        ("SubjectUserName", "-".into()),
        ("SubjectDomainName", "-".into()),
        ("SubjectLogonId", Value::Hex64(0)),
        ("TargetUserSid", Value::Sid(well_known(NULL_SID))),
        ("TargetUserName", user.into()),
        ("TargetDomainName", "CORP".into()),
        ("Status", Value::Hex32(0xc000_006e)),
        ("FailureReason", "%%2313".into()),
        ("SubStatus", Value::Hex32(sub)),
        ("LogonType", Value::U32(3)),
        ("LogonProcessName", "NtLmSsp ".into()),
        ("AuthenticationPackageName", "NTLM".into()),
        ("WorkstationName", "WS-ENG-11".into()),
        ("TransmittedServices", "-".into()),
        ("LmPackageName", "-".into()),
        ("KeyLength", Value::U32(0)),
        ("ProcessId", Value::Hex64(0)),
        ("ProcessName", "-".into()),
        ("IpAddress", Value::String(ip)),
        ("IpPort", Value::String(w.client_port().to_string())),
    ];
    Body::fields(host, None, data)
}

/// 4634: a logoff.
fn logoff(w: &mut World) -> Body {
    let host = w.host();
    let (user, sid) = w.user();
    let logon_id = w.logon_id();
    let data = vec![
        ("TargetUserSid", Value::Sid(sid)),
        ("TargetUserName", user.into()),
        ("TargetDomainName", "CORP".into()),
        ("TargetLogonId", Value::Hex64(logon_id)),
        ("LogonType", Value::U32(*w.rng.pick(&[2u32, 3, 7]))),
    ];
    Body::fields(host, None, data)
}

/// 4672 for SYSTEM: the everyday kind, which no rule reports.
fn special_logon_system(w: &mut World) -> Body {
    let host = w.host();
    let data = vec![
        ("SubjectUserSid", Value::Sid(well_known(LOCAL_SYSTEM))),
        ("SubjectUserName", "SYSTEM".into()),
        ("SubjectDomainName", "NT AUTHORITY".into()),
        ("SubjectLogonId", Value::Hex64(0x3e7)),
        ("PrivilegeList", "SeAssignPrimaryTokenPrivilege\r\n\t\t\tSeTcbPrivilege\r\n\t\t\tSeSecurityPrivilege\r\n\t\t\tSeTakeOwnershipPrivilege".into()),
    ];
    Body::fields(host, None, data)
}

/// 4672 for the domain's Administrator: special privileges for a user's logon.
fn special_logon_admin(w: &mut World) -> Body {
    let host = w.host();
    let logon_id = w.logon_id();
    let data = vec![
        ("SubjectUserSid", Value::Sid(domain_sid(500))),
        ("SubjectUserName", "Administrator".into()),
        ("SubjectDomainName", "CORP".into()),
        ("SubjectLogonId", Value::Hex64(logon_id)),
        ("PrivilegeList", "SeSecurityPrivilege\r\n\t\t\tSeBackupPrivilege\r\n\t\t\tSeRestorePrivilege\r\n\t\t\tSeDebugPrivilege".into()),
    ];
    Body::fields(host, None, data)
}

/// 4688: one of the benign processes started.
fn process_created(w: &mut World) -> Body {
    let host = w.host();
    let (user, sid) = w.user();
    let (image, cmd, parent) = *w.rng.pick(PROCESSES);
    let logon_id = w.logon_id();
    let data = vec![
        ("SubjectUserSid", Value::Sid(sid)),
        ("SubjectUserName", user.into()),
        ("SubjectDomainName", "CORP".into()),
        ("SubjectLogonId", Value::Hex64(logon_id)),
        ("NewProcessId", Value::Hex64(u64::from(w.process_id()))),
        ("NewProcessName", image.replace("{u}", user).into()),
        ("TokenElevationType", "%%1938".into()),
        ("ProcessId", Value::Hex64(u64::from(w.process_id()))),
        ("CommandLine", cmd.replace("{u}", user).into()),
        ("TargetUserSid", Value::Sid(well_known(NULL_SID))),
        ("TargetUserName", "-".into()),
        ("TargetDomainName", "-".into()),
        ("TargetLogonId", Value::Hex64(0)),
        ("ParentProcessName", parent.into()),
        // Medium integrity.
        ("MandatoryLabel", Value::Sid(well_known("S-1-16-8192"))),
    ];
    Body::fields(host, None, data)
}

/// 4720: a contractor's account created on the domain controller.
fn user_created(w: &mut World) -> Body {
    let n = w.rng.below(900) + 100;
    let data = vec![
        ("TargetUserName", format!("contractor{n}").into()),
        ("TargetDomainName", "CORP".into()),
        ("TargetSid", Value::Sid(domain_sid(2000 + n as u32))),
        ("SubjectUserSid", Value::Sid(domain_sid(1112))),
        ("SubjectUserName", "mgarcia".into()),
        ("SubjectDomainName", "CORP".into()),
        ("SubjectLogonId", Value::Hex64(0x05a3_f100)),
        ("PrivilegeList", "-".into()),
        ("SamAccountName", format!("contractor{n}").into()),
        ("DisplayName", "%%1793".into()),
        (
            "UserPrincipalName",
            format!("contractor{n}@corp.example").into(),
        ),
        (
            "UserAccountControl",
            "\r\n\t\t%%2080\r\n\t\t%%2082\r\n\t\t%%2084".into(),
        ),
    ];
    Body::fields(DOMAIN_CONTROLLER, None, data)
}

/// 4732: a user added to the Event Log Readers group.
fn group_member_added(w: &mut World) -> Body {
    let (_, sid) = w.user();
    let data = vec![
        ("MemberName", "-".into()),
        ("MemberSid", Value::Sid(sid)),
        ("TargetUserName", "Event Log Readers".into()),
        ("TargetDomainName", "Builtin".into()),
        ("TargetSid", Value::Sid(well_known("S-1-5-32-573"))),
        ("SubjectUserSid", Value::Sid(domain_sid(1112))),
        ("SubjectUserName", "mgarcia".into()),
        ("SubjectDomainName", "CORP".into()),
        ("SubjectLogonId", Value::Hex64(0x05a3_f100)),
        ("PrivilegeList", "-".into()),
    ];
    Body::fields(w.host(), None, data)
}

/// 1102: the Security log cleared by the Administrator.
fn security_log_cleared(w: &mut World) -> Body {
    let host = w.host();
    let cleared = Element::new("LogFileCleared")
        .attr(
            "xmlns",
            "http://manifests.microsoft.com/win/2004/08/windows/eventlog",
        )
        .child(Element::new("SubjectUserSid").text(Value::Sid(domain_sid(500))))
        .child(Element::new("SubjectUserName").text("Administrator"))
        .child(Element::new("SubjectDomainName").text("CORP"))
        .child(Element::new("SubjectLogonId").text(Value::Hex64(0x05a3_f200)));
    Body {
        computer: host,
        user: None,
        data: Element::new("UserData").child(cleared),
    }
}

#[cfg(test)]
mod tests {
    use super::super::kind::samples::{data_names, draw_all, field};
    use super::*;

    #[test]
    fn every_kind_is_a_security_event_with_its_fields() {
        let all = draw_all(KINDS, "Security", 200);
        let ids: Vec<u16> = KINDS.iter().map(|k| k.header.event_id).collect();
        assert_eq!(ids, [4624, 4625, 4634, 4672, 4672, 4688, 4720, 4732, 1102]);
        for (kind, events) in KINDS.iter().zip(&all) {
            for e in events {
                if kind.header.event_id == 1102 {
                    assert!(e.root.find("UserData").is_some());
                    continue;
                }
                let names = data_names(e);
                assert!(names.len() >= 5, "{names:?}");
                for name in ["SubjectUserName", "TargetUserName", "LogonType"] {
                    if names.iter().any(|n| n == name) {
                        assert!(!field(e, name).unwrap().is_empty(), "{name}");
                    }
                }
            }
        }
    }

    #[test]
    fn logons_are_consistent_with_their_type() {
        let all = draw_all(KINDS, "Security", 400);
        let mut types = std::collections::BTreeSet::new();
        for e in &all[0] {
            let ltype = field(e, "LogonType").unwrap();
            let port = field(e, "IpPort").unwrap();
            if ltype == "3" {
                assert!(port.parse::<u32>().unwrap() >= 49152);
                assert_eq!(field(e, "WorkstationName").as_deref(), Some("-"));
            } else {
                assert_eq!(port, "0");
                assert!(field(e, "WorkstationName").unwrap().ends_with('$'));
            }
            types.insert(ltype);
        }
        assert_eq!(types.into_iter().collect::<Vec<_>>(), ["2", "3", "5", "7"]);
        // Failed logons are audit failures.
        let keywords = all[1][0].system().unwrap().find("Keywords").unwrap();
        assert_eq!(keywords.value(), Some(&Value::Hex64(0x8010_0000_0000_0000)));
    }

    #[test]
    fn the_noisy_kinds_are_the_ones_with_rules() {
        for (kind, events) in KINDS.iter().zip(draw_all(KINDS, "Security", 50)) {
            let e = &events[0];
            match kind.header.event_id {
                4672 if !kind.rules.is_empty() => {
                    assert_eq!(
                        field(e, "SubjectUserName").as_deref(),
                        Some("Administrator")
                    )
                }
                4672 => assert_eq!(field(e, "SubjectUserName").as_deref(), Some("SYSTEM")),
                4720 => {
                    assert_eq!(field(e, "TargetUserName"), field(e, "SamAccountName"));
                    let computer = e.system().unwrap().find("Computer").unwrap();
                    assert_eq!(computer.value(), Some(&Value::from(DOMAIN_CONTROLLER)));
                    assert!(!kind.rules.is_empty());
                }
                1102 => assert!(!kind.rules.is_empty()),
                _ => assert!(kind.rules.is_empty(), "{}", kind.header.event_id),
            }
        }
    }

    #[test]
    fn new_processes_name_the_user_not_a_placeholder() {
        for e in &draw_all(KINDS, "Security", 300)[5] {
            let user = field(e, "SubjectUserName").unwrap();
            for name in ["NewProcessName", "CommandLine"] {
                let v = field(e, name).unwrap();
                assert!(!v.contains("{u}"), "{v}");
                if v.contains("\\Users\\") {
                    assert!(v.contains(&user), "{v} {user}");
                }
            }
        }
    }
}
