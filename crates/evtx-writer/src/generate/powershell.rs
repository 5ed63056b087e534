//! PowerShell's background: module logging (4103) and script block logging (4104) of
//! everyday administration scripts.

use super::catalog::POWERSHELL;
use super::kind::Kind;
use super::world::{Body, Header, World};
use crate::value::Value;

/// PowerShell's kinds, in draw order.
pub(super) const KINDS: &[Kind] = &[
    Kind {
        per_10k: 200,
        header: Header {
            provider: &POWERSHELL,
            event_id: 4103,
            version: 1,
            level: 4,
            task: 106,
        },
        body: module_logged,
        rules: &[],
    },
    Kind {
        per_10k: 300,
        header: Header {
            provider: &POWERSHELL,
            event_id: 4104,
            version: 1,
            level: 5,
            task: 2,
        },
        body: script_block_logged,
        rules: &[],
    },
];

/// Everyday administration scripts, none with a keyword a built-in rule looks for.
const SCRIPTS: &[&str] = &[
    "Get-Service | Where-Object { $_.Status -eq 'Running' } | Select-Object -First 20",
    "Get-ChildItem -Path C:\\Logs -Filter *.log | Where-Object LastWriteTime -lt (Get-Date).AddDays(-30) | Remove-Item",
    "Import-Module ActiveDirectory; Get-ADUser -Filter * -SearchBase 'OU=Staff,DC=corp,DC=example' | Measure-Object",
    "Get-CimInstance -ClassName Win32_OperatingSystem | Select-Object Caption, Version, LastBootUpTime",
    "Test-NetConnection -ComputerName fs01.corp.example -Port 445",
    "$PSVersionTable.PSVersion",
    "Get-Process | Sort-Object CPU -Descending | Select-Object -First 5 Name, CPU",
];
/// 4103: a cmdlet run from the console.
fn module_logged(w: &mut World) -> Body {
    let host = w.host();
    let (user, sid) = w.user();
    let cmd = *w.rng.pick(&[
        "Get-Service",
        "Get-ChildItem",
        "Get-CimInstance",
        "Select-Object",
    ]);
    let data = vec![
        ("ContextInfo", format!("        Severity = Informational\r\n        Host Name = ConsoleHost\r\n        Host Application = powershell.exe\r\n        Command Name = {cmd}\r\n        User = CORP\\{user}\r\n").into()),
        ("UserData", "".into()),
        ("Payload", format!("CommandInvocation({cmd}): \"{cmd}\"\r\n").into()),
    ];
    Body::fields(host, Some(sid), data)
}

/// 4104: one of the scripts, typed in or (half the time) from a file.
fn script_block_logged(w: &mut World) -> Body {
    let host = w.host();
    let (user, sid) = w.user();
    let text = *w.rng.pick(SCRIPTS);
    let block = w.guid().render();
    let data = vec![
        ("MessageNumber", Value::I32(1)),
        ("MessageTotal", Value::I32(1)),
        ("ScriptBlockText", text.into()),
        (
            "ScriptBlockId",
            block
                .trim_matches(|c| c == '{' || c == '}')
                .to_owned()
                .into(),
        ),
        (
            "Path",
            if w.rng.chance(5000) {
                format!("C:\\Users\\{user}\\Documents\\maintenance.ps1").into()
            } else {
                "".into()
            },
        ),
    ];
    Body::fields(host, Some(sid), data)
}

#[cfg(test)]
mod tests {
    use super::super::kind::samples::{data_names, draw_all, field};
    use super::*;

    #[test]
    fn benign_scripts_hold_no_rule_keyword() {
        let keywords = [
            "amsiutils",
            "amsiinitfailed",
            "amsiscanbuffer",
            "amsicontext",
            "invoke-mimikatz",
            "invoke-kerberoast",
            "out-minidump",
            "get-gpppassword",
            "invoke-dcsync",
            "sekurlsa::",
            "lsadump::",
            "net.webclient",
            "invoke-webrequest",
            "invoke-restmethod",
            "iwr ",
            "irm ",
            "iex",
            "invoke-expression",
            "frombase64string",
            "frombase64chararray",
            "[char]",
        ];
        for s in SCRIPTS {
            let s = s.to_lowercase();
            for k in keywords {
                assert!(!s.contains(k), "{s} holds {k}");
            }
        }
    }

    #[test]
    fn every_kind_is_a_powershell_event_with_its_fields() {
        let all = draw_all(KINDS, "Microsoft-Windows-PowerShell/Operational", 200);
        for e in &all[0] {
            assert_eq!(data_names(e), ["ContextInfo", "UserData", "Payload"]);
            let user = e.system().unwrap().find("Security").unwrap();
            assert!(user.attribute("UserID").is_some());
            assert!(field(e, "Payload")
                .unwrap()
                .starts_with("CommandInvocation("));
        }
        let mut from_files = 0;
        for e in &all[1] {
            assert!(SCRIPTS.contains(&field(e, "ScriptBlockText").unwrap().as_str()));
            let id = field(e, "ScriptBlockId").unwrap();
            assert_eq!(id.len(), 36, "{id}");
            let path = field(e, "Path").unwrap();
            if !path.is_empty() {
                assert!(path.ends_with("\\maintenance.ps1"), "{path}");
                from_files += 1;
            }
        }
        assert!((50..150).contains(&from_files), "{from_files}");
    }
}
