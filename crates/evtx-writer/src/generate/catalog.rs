//! The simulated estate every background event describes: the providers that write
//! them, the domain's hosts, users and well-known SIDs, and the benign processes they
//! run.
//!
//! Everything here is chosen to fire no built-in rule on its own: the background is
//! quiet unless a kind of event is noisy whatever its fields (see the mix in
//! `generate/mod.rs`).

use crate::value::Sid;

/// What a `System` element says about its provider.
pub(super) struct Provider {
    /// `Provider/@Name`.
    pub name: &'static str,
    /// `Provider/@Guid`.
    pub guid: &'static str,
    /// `Channel`.
    pub channel: &'static str,
    /// `Keywords`.
    pub keywords: u64,
}

/// The Security channel's auditing, audit success.
pub(super) const SECURITY: Provider = Provider {
    name: "Microsoft-Windows-Security-Auditing",
    guid: "{54849625-5478-4994-a5ba-3e3b0328c30d}",
    channel: "Security",
    keywords: 0x8020_0000_0000_0000,
};
/// The Security channel's auditing, audit failure.
pub(super) const SECURITY_FAILURE: Provider = Provider {
    keywords: 0x8010_0000_0000_0000,
    ..SECURITY
};
/// The event log service itself, writing to the Security channel (a cleared log).
pub(super) const EVENTLOG: Provider = Provider {
    name: "Microsoft-Windows-Eventlog",
    guid: "{fc65ddd8-d6ef-4962-83d5-6e5cfe9ce148}",
    keywords: 0x4020_0000_0000_0000,
    ..SECURITY
};
/// Sysmon.
pub(super) const SYSMON: Provider = Provider {
    name: "Microsoft-Windows-Sysmon",
    guid: "{5770385f-c22a-43e0-bf4c-06f5698ffbd9}",
    channel: "Microsoft-Windows-Sysmon/Operational",
    keywords: 0x8000_0000_0000_0000,
};
/// PowerShell's operational log.
pub(super) const POWERSHELL: Provider = Provider {
    name: "Microsoft-Windows-PowerShell",
    guid: "{a0c1853b-5c40-4b15-8766-3cf1c58f985a}",
    channel: "Microsoft-Windows-PowerShell/Operational",
    keywords: 0x0,
};
/// The Service Control Manager, in the System channel.
pub(super) const SCM: Provider = Provider {
    name: "Service Control Manager",
    guid: "{555908d1-a6d7-4695-8e1e-26931d2012f4}",
    channel: "System",
    keywords: 0x8080_0000_0000_0000,
};
/// Microsoft Defender Antivirus.
pub(super) const DEFENDER: Provider = Provider {
    name: "Microsoft-Windows-Windows Defender",
    guid: "{11cd958a-c507-4ef3-b3f2-5fd9dfbd2c78}",
    channel: "Microsoft-Windows-Windows Defender/Operational",
    keywords: 0x8000_0000_0000_0000,
};
/// The Task Scheduler.
pub(super) const TASKS: Provider = Provider {
    name: "Microsoft-Windows-TaskScheduler",
    guid: "{de7b24ea-73c8-4a09-985d-5bdadcfa9017}",
    channel: "Microsoft-Windows-TaskScheduler/Operational",
    keywords: 0x8000_0000_0000_0000,
};

/// The domain controller: where accounts and groups change.
pub(super) const DOMAIN_CONTROLLER: &str = "DC01.corp.example";

/// The machines events come from.
pub(super) const HOSTS: &[&str] = &[
    "WS-FIN-07.corp.example",
    "WS-HR-02.corp.example",
    "WS-ENG-11.corp.example",
    "WS-ENG-14.corp.example",
    "FS01.corp.example",
    "SQL02.corp.example",
    "DC01.corp.example",
];
/// The domain's SID, without a relative id.
const DOMAIN_SID: &str = "S-1-5-21-3623811015-3361044348-30300820";
/// The domain's users: name and relative id.
pub(super) const USERS: &[(&str, u32)] = &[
    ("jsmith", 1107),
    ("mgarcia", 1112),
    ("akumar", 1120),
    ("lchen", 1133),
    ("rwilson", 1141),
    ("tnguyen", 1150),
    ("svc_sql", 1203),
];

/// Benign processes: image, command line (`{u}` is the user), parent image.
pub(super) const PROCESSES: &[(&str, &str, &str)] = &[
    (
        "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
        "\"C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe\" --type=renderer --lang=en-US --renderer-client-id=7",
        "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
    ),
    ("C:\\Windows\\System32\\svchost.exe", "C:\\Windows\\system32\\svchost.exe -k netsvcs -p -s Schedule", "C:\\Windows\\System32\\services.exe"),
    ("C:\\Windows\\System32\\notepad.exe", "\"C:\\Windows\\system32\\notepad.exe\" C:\\Users\\{u}\\Documents\\notes.txt", "C:\\Windows\\explorer.exe"),
    (
        "C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE",
        "\"C:\\Program Files\\Microsoft Office\\root\\Office16\\WINWORD.EXE\" /n \"C:\\Users\\{u}\\Documents\\Q3 report.docx\"",
        "C:\\Windows\\explorer.exe",
    ),
    ("C:\\Windows\\System32\\SearchProtocolHost.exe", "\"C:\\Windows\\system32\\SearchProtocolHost.exe\" Global\\UsGthrFltPipeMssGthrPipe4", "C:\\Windows\\System32\\SearchIndexer.exe"),
    ("C:\\Windows\\System32\\taskhostw.exe", "taskhostw.exe {222A245B-E637-4AE9-A93F-A59CA119A75E}", "C:\\Windows\\System32\\svchost.exe"),
    ("C:\\Windows\\System32\\cmd.exe", "C:\\Windows\\system32\\cmd.exe /c \"C:\\Scripts\\backup.cmd\"", "C:\\Windows\\System32\\svchost.exe"),
    (
        "C:\\Windows\\System32\\WindowsPowerShell\\v1.0\\powershell.exe",
        "powershell.exe -NoProfile -File C:\\Scripts\\inventory.ps1",
        "C:\\Windows\\System32\\svchost.exe",
    ),
    ("C:\\Users\\{u}\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe", "\"C:\\Users\\{u}\\AppData\\Local\\Programs\\Microsoft VS Code\\Code.exe\"", "C:\\Windows\\explorer.exe"),
    ("C:\\Windows\\System32\\conhost.exe", "\\??\\C:\\Windows\\system32\\conhost.exe 0xffffffff -ForceV1", "C:\\Windows\\System32\\cmd.exe"),
];

/// `S-1-5-18`, LocalSystem.
pub(super) const LOCAL_SYSTEM: &str = "S-1-5-18";
/// `S-1-0-0`, the null SID.
pub(super) const NULL_SID: &str = "S-1-0-0";

/// A well-known SID from its text.
pub(super) fn well_known(text: &str) -> Sid {
    Sid::parse(text).unwrap_or_else(|| domain_sid(0))
}

/// The SID of the domain account with relative id `rid`.
pub(super) fn domain_sid(rid: u32) -> Sid {
    let mut sid = Sid::parse(DOMAIN_SID).unwrap_or(Sid {
        revision: 1,
        authority: 5,
        sub_authorities: vec![21],
    });
    sid.sub_authorities.push(rid);
    sid
}

/// A domain account as Sysmon names it: `CORP\user`.
pub(super) fn domain_account(user: &str) -> String {
    format!("CORP\\{user}")
}

/// A host's machine account: `WS-FIN-07$` for `WS-FIN-07.corp.example`.
pub(super) fn short_host(h: &str) -> String {
    format!("{}$", h.split('.').next().unwrap_or(h))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::Guid;

    #[test]
    fn providers_and_sids_parse() {
        for p in [
            &SECURITY,
            &SECURITY_FAILURE,
            &EVENTLOG,
            &SYSMON,
            &POWERSHELL,
            &SCM,
            &DEFENDER,
            &TASKS,
        ] {
            assert!(Guid::parse(p.guid).is_some(), "{}", p.name);
        }
        // The cleared log and failed logons are Security events all the same.
        assert_eq!(EVENTLOG.channel, "Security");
        assert_eq!(SECURITY_FAILURE.name, SECURITY.name);
        for s in [
            LOCAL_SYSTEM,
            NULL_SID,
            DOMAIN_SID,
            "S-1-16-8192",
            "S-1-5-32-573",
        ] {
            assert_eq!(Sid::parse(s).map(|x| x.to_string()).as_deref(), Some(s));
        }
        assert_eq!(well_known(LOCAL_SYSTEM).to_string(), "S-1-5-18");
        assert_eq!(domain_sid(1107).to_string(), format!("{DOMAIN_SID}-1107"));
    }

    #[test]
    fn names_are_shaped_as_windows_writes_them() {
        assert_eq!(short_host("WS-FIN-07.corp.example"), "WS-FIN-07$");
        assert_eq!(domain_account("jsmith"), "CORP\\jsmith");
        assert!(HOSTS.contains(&DOMAIN_CONTROLLER));
        let mut rids: Vec<u32> = USERS.iter().map(|u| u.1).collect();
        rids.dedup();
        assert_eq!(rids.len(), USERS.len());
    }

    #[test]
    fn benign_processes_hold_no_rule_keyword() {
        for (image, cmd, parent) in PROCESSES {
            let cmd = cmd.to_lowercase();
            for k in [
                " -e ",
                " /e ",
                " -en",
                " /en",
                " -ec ",
                " /ec ",
                " -ma ",
                "comsvcs",
                "::",
                " /add",
                " cl ",
                "-urlcache",
                "/transfer",
            ] {
                assert!(!cmd.contains(k), "{cmd} holds {k}");
            }
            assert!(!parent.to_lowercase().contains("winword"), "{image}");
        }
    }
}
