//! A deterministic synthetic log with attacks planted at known records.
//!
//! [`Generator`] yields events one at a time (nothing is collected, so millions of
//! records stream through one chunk of memory): a mix of Security, Sysmon, PowerShell,
//! System, Defender and Task Scheduler events with realistic, typed field values, and
//! now and then (about one record in 400) a planted event: one of the events of the
//! project's demo intrusion (`testdata/demo/attack.jsonl`), restamped with the current
//! time and record id, which fires the built-in rules `testdata/demo/expected.tsv`
//! lists for it (its decoys, which fire nothing, are planted too).
//!
//! Background events are chosen so that they fire no built-in rule, except the few
//! kinds every one of which some rule reports whatever its fields (a user account
//! created, a log cleared, a service installed, a Defender detection or real-time
//! protection turned off, a task registered, special privileges for a user's logon):
//! those are in the ground truth too, with their rules. So the ground truth lists every
//! record the built-in rules should fire on, and nothing else.
//!
//! The same `(records, seed)` gives the same bytes.

use crate::error::Error;
use crate::event::{Element, Event, Node, EVENT_NS};
use crate::value::{Guid, Sid, Value};
use crate::writer::{EvtxWriter, WriteStats, WriterOptions};
use std::collections::HashMap;
use std::io::{Seek, Write};

const DEMO_EVENTS: &str = include_str!("../../../testdata/demo/attack.jsonl");
const DEMO_EXPECTED: &str = include_str!("../../../testdata/demo/expected.tsv");

/// One record that should fire built-in rules.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Planted {
    /// Its record id (record header and `System/EventRecordID`).
    pub record_id: u64,
    /// The ids of the built-in rules it should fire, sorted.
    pub rule_ids: Vec<String>,
}

/// What [`generate`] wrote and which records should fire which rules.
#[derive(Debug, Clone, Default)]
pub struct GroundTruth {
    /// The records that should fire rules, in record order.
    pub planted: Vec<Planted>,
    /// The file's numbers.
    pub stats: WriteStats,
}

impl GroundTruth {
    /// One `record_id<TAB>rule_id` line per expected detection, as in
    /// `testdata/demo/expected.tsv`.
    pub fn to_tsv(&self) -> String {
        let mut out = String::new();
        for p in &self.planted {
            for r in &p.rule_ids {
                out.push_str(&format!("{}\t{}\n", p.record_id, r));
            }
        }
        out
    }
}

/// Writes `records` synthetic events (seed `seed`) as an EVTX file to `out`; returns
/// the ground truth.
pub fn generate(records: u64, seed: u64, out: impl Write + Seek) -> Result<GroundTruth, Error> {
    let mut writer = EvtxWriter::new(out, WriterOptions::default())?;
    let mut generator = Generator::new(seed)?;
    let mut planted = Vec::new();
    for _ in 0..records {
        let (event, rules) = generator.next_event();
        let id = writer.write(&event)?;
        debug_assert_eq!(Some(id), event.event_record_id());
        if !rules.is_empty() {
            planted.push(Planted {
                record_id: id,
                rule_ids: rules,
            });
        }
    }
    let stats = writer.finish()?;
    Ok(GroundTruth { planted, stats })
}

/// xorshift64*: small, fast, and the same everywhere.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        // splitmix64 of the seed, never zero.
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        Rng((z ^ (z >> 31)) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len() as u64) as usize]
    }
    fn chance(&mut self, per_10k: u64) -> bool {
        self.below(10_000) < per_10k
    }
}

/// What a `System` element says about its provider.
struct Provider {
    name: &'static str,
    guid: &'static str,
    channel: &'static str,
    keywords: u64,
}

const SECURITY: Provider = Provider {
    name: "Microsoft-Windows-Security-Auditing",
    guid: "{54849625-5478-4994-a5ba-3e3b0328c30d}",
    channel: "Security",
    keywords: 0x8020_0000_0000_0000,
};
const SYSMON: Provider = Provider {
    name: "Microsoft-Windows-Sysmon",
    guid: "{5770385f-c22a-43e0-bf4c-06f5698ffbd9}",
    channel: "Microsoft-Windows-Sysmon/Operational",
    keywords: 0x8000_0000_0000_0000,
};
const POWERSHELL: Provider = Provider {
    name: "Microsoft-Windows-PowerShell",
    guid: "{a0c1853b-5c40-4b15-8766-3cf1c58f985a}",
    channel: "Microsoft-Windows-PowerShell/Operational",
    keywords: 0x0,
};
const SCM: Provider = Provider {
    name: "Service Control Manager",
    guid: "{555908d1-a6d7-4695-8e1e-26931d2012f4}",
    channel: "System",
    keywords: 0x8080_0000_0000_0000,
};
const DEFENDER: Provider = Provider {
    name: "Microsoft-Windows-Windows Defender",
    guid: "{11cd958a-c507-4ef3-b3f2-5fd9dfbd2c78}",
    channel: "Microsoft-Windows-Windows Defender/Operational",
    keywords: 0x8000_0000_0000_0000,
};
const TASKS: Provider = Provider {
    name: "Microsoft-Windows-TaskScheduler",
    guid: "{de7b24ea-73c8-4a09-985d-5bdadcfa9017}",
    channel: "Microsoft-Windows-TaskScheduler/Operational",
    keywords: 0x8000_0000_0000_0000,
};

const HOSTS: &[&str] = &[
    "WS-FIN-07.corp.example",
    "WS-HR-02.corp.example",
    "WS-ENG-11.corp.example",
    "WS-ENG-14.corp.example",
    "FS01.corp.example",
    "SQL02.corp.example",
    "DC01.corp.example",
];
const DOMAIN_SID: &str = "S-1-5-21-3623811015-3361044348-30300820";
const USERS: &[(&str, u32)] = &[
    ("jsmith", 1107),
    ("mgarcia", 1112),
    ("akumar", 1120),
    ("lchen", 1133),
    ("rwilson", 1141),
    ("tnguyen", 1150),
    ("svc_sql", 1203),
];

/// Benign processes: image, command line (`{u}` is the user), parent image.
const PROCESSES: &[(&str, &str, &str)] = &[
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

const SCRIPTS: &[&str] = &[
    "Get-Service | Where-Object { $_.Status -eq 'Running' } | Select-Object -First 20",
    "Get-ChildItem -Path C:\\Logs -Filter *.log | Where-Object LastWriteTime -lt (Get-Date).AddDays(-30) | Remove-Item",
    "Import-Module ActiveDirectory; Get-ADUser -Filter * -SearchBase 'OU=Staff,DC=corp,DC=example' | Measure-Object",
    "Get-CimInstance -ClassName Win32_OperatingSystem | Select-Object Caption, Version, LastBootUpTime",
    "Test-NetConnection -ComputerName fs01.corp.example -Port 445",
    "$PSVersionTable.PSVersion",
    "Get-Process | Sort-Object CPU -Descending | Select-Object -First 5 Name, CPU",
];

/// Yields synthetic events, with the rule ids each should fire.
pub struct Generator {
    rng: Rng,
    /// Current time, FILETIME.
    time: u64,
    next_record_id: u64,
    demo: Vec<(Event, Vec<String>)>,
    next_demo: usize,
    next_logon: u64,
}

impl Generator {
    /// A generator for `seed`; the first record gets id 1.
    pub fn new(seed: u64) -> Result<Self, Error> {
        let mut expected: HashMap<u64, Vec<String>> = HashMap::new();
        for line in DEMO_EXPECTED.lines().filter(|l| !l.trim().is_empty()) {
            let (id, rule) = line
                .split_once('\t')
                .ok_or_else(|| Error::Json(format!("bad expected.tsv line {line:?}")))?;
            let id = id
                .parse()
                .map_err(|_| Error::Json(format!("bad record id {id:?}")))?;
            expected.entry(id).or_default().push(rule.trim().to_owned());
        }
        let mut demo = Vec::new();
        for line in DEMO_EVENTS.lines().filter(|l| !l.trim().is_empty()) {
            let e = Event::from_json_str(line)?;
            let id = e
                .event_record_id()
                .ok_or_else(|| Error::Json("demo event without EventRecordID".into()))?;
            let mut rules = expected.remove(&id).unwrap_or_default();
            rules.sort();
            rules.dedup();
            demo.push((e, rules));
        }
        let mut rng = Rng::new(seed);
        // 2024-03-01T00:00:00Z plus up to a week.
        let time = 133_537_248_000_000_000 + rng.below(7 * 86_400) * 10_000_000;
        let next_demo = rng.below(demo.len() as u64) as usize;
        Ok(Generator {
            rng,
            time,
            next_record_id: 1,
            demo,
            next_demo,
            next_logon: 0x3e7_0000,
        })
    }

    /// The next event and the (sorted) rule ids it should fire.
    pub fn next_event(&mut self) -> (Event, Vec<String>) {
        // 50 ms to 2 s between events.
        self.time += (50 + self.rng.below(1950)) * 10_000;
        let id = self.next_record_id;
        self.next_record_id += 1;
        if self.rng.chance(25) && !self.demo.is_empty() {
            let (mut e, rules) = self.demo[self.next_demo].clone();
            self.next_demo = (self.next_demo + 1) % self.demo.len();
            restamp(&mut e, self.time, id);
            return (e, rules);
        }
        let r = self.rng.below(10_000);
        let (e, rules): (Event, &[&str]) = match r {
            0..=1499 => (self.logon(id), &[]),
            1500..=1699 => (self.logon_failure(id), &[]),
            1700..=2899 => (self.logoff(id), &[]),
            2900..=3399 => (self.special_logon_system(id), &[]),
            3400..=3419 => (
                self.special_logon_admin(id),
                &["60f55ecd-1c34-4879-a4d5-2f050d93d482"],
            ),
            3420..=4519 => (self.process_4688(id), &[]),
            4520..=4522 => (
                self.user_created(id),
                &["80495b63-1ebb-4eae-bfbf-43ab4506feb8"],
            ),
            4523..=4529 => (self.group_member_added(id), &[]),
            4530 => (
                self.security_log_cleared(id),
                &["b277dd4c-32d4-48e9-89c1-d09489b3277f"],
            ),
            4531..=5430 => (self.sysmon_process(id), &[]),
            5431..=6330 => (self.sysmon_network(id), &[]),
            6331..=7130 => (self.sysmon_image_load(id), &[]),
            7131..=7430 => (self.sysmon_process_access(id), &[]),
            7431..=7930 => (self.sysmon_file_create(id), &[]),
            7931..=8230 => (self.sysmon_registry(id, false), &[]),
            8231..=8630 => (self.sysmon_registry(id, true), &[]),
            8631..=8830 => (self.ps_module(id), &[]),
            8831..=9130 => (self.ps_script_block(id), &[]),
            9131..=9135 => (
                self.service_installed(id),
                &["d4899374-5cf6-40d8-8813-e9de861f9513"],
            ),
            9136..=9935 => (self.service_state(id), &[]),
            9936..=9937 => (
                self.defender_detection(id),
                &["242220fa-e11b-4124-93f0-669233305e0b"],
            ),
            9938 => (
                self.defender_disabled(id),
                &["84b36e15-7d93-4f53-ad04-448670a8b82b"],
            ),
            9939..=9945 => (
                self.task_registered(id),
                &["9d49ba32-c2cd-4241-aec6-d518624e9733"],
            ),
            _ => (self.service_state(id), &[]),
        };
        (e, rules.iter().map(|s| (*s).to_owned()).collect())
    }

    fn user(&mut self) -> (&'static str, Sid) {
        let (name, rid) = *self.rng.pick(USERS);
        (name, domain_sid(rid))
    }

    fn host(&mut self) -> &'static str {
        HOSTS[self.rng.below(HOSTS.len() as u64) as usize]
    }

    fn logon_id(&mut self) -> u64 {
        self.next_logon += 1 + self.rng.below(40);
        self.next_logon
    }

    fn private_ip(&mut self) -> String {
        format!("10.20.{}.{}", self.rng.below(8), 10 + self.rng.below(200))
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        p: &Provider,
        event_id: u16,
        version: u8,
        level: u8,
        task: u16,
        id: u64,
        computer: &str,
        user: Option<Sid>,
        data: Element,
    ) -> Event {
        let pid = if p.channel == "Security" {
            644
        } else {
            1000 + 4 * self.rng.below(2000) as u32
        };
        let tid = 1000 + 4 * self.rng.below(4000) as u32;
        let mut provider = Element::new("Provider").attr("Name", p.name).attr(
            "Guid",
            Value::Guid(Guid::parse(p.guid).unwrap_or(Guid([0; 16]))),
        );
        if p.name == "Service Control Manager" {
            provider = provider.attr("EventSourceName", "Service Control Manager");
        }
        let mut security = Element::new("Security");
        if let Some(sid) = user {
            security = security.attr("UserID", Value::Sid(sid));
        }
        let system = Element::new("System")
            .child(provider)
            .child(Element::new("EventID").text(Value::U16(event_id)))
            .child(Element::new("Version").text(Value::U8(version)))
            .child(Element::new("Level").text(Value::U8(level)))
            .child(Element::new("Task").text(Value::U16(task)))
            .child(Element::new("Opcode").text(Value::U8(0)))
            .child(Element::new("Keywords").text(Value::Hex64(p.keywords)))
            .child(Element::new("TimeCreated").attr("SystemTime", Value::FileTime(self.time)))
            .child(Element::new("EventRecordID").text(Value::U64(id)))
            .child(Element::new("Correlation"))
            .child(
                Element::new("Execution")
                    .attr("ProcessID", Value::U32(pid))
                    .attr("ThreadID", Value::U32(tid)),
            )
            .child(Element::new("Channel").text(p.channel))
            .child(Element::new("Computer").text(computer))
            .child(security);
        Event {
            root: Element::new("Event")
                .attr("xmlns", EVENT_NS)
                .child(system)
                .child(data),
        }
    }

    fn utc_time(&self) -> String {
        let s = crate::value::format_filetime(self.time);
        // 2024-03-12T09:14:16.5305330Z -> 2024-03-12 09:14:16.530
        format!("{} {}", &s[..10], &s[11..23])
    }

    fn process_guid(&mut self) -> Value {
        let mut b = [0u8; 16];
        b[..8].copy_from_slice(&self.rng.next().to_le_bytes());
        b[8..].copy_from_slice(&self.rng.next().to_le_bytes());
        Value::Guid(Guid(b))
    }

    fn logon(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, sid) = self.user();
        let kind = self.rng.below(4);
        let logon_id = self.logon_id();
        let (ltype, process, package, ip, target, tsid): (u32, &str, &str, String, &str, Sid) =
            match kind {
                0 => (2, "User32 ", "Negotiate", "127.0.0.1".into(), user, sid),
                1 => (3, "Kerberos", "Kerberos", self.private_ip(), user, sid),
                2 => (
                    5,
                    "Advapi  ",
                    "Negotiate",
                    "-".into(),
                    "SYSTEM",
                    Sid::parse("S-1-5-18").unwrap_or(sid),
                ),
                _ => (7, "User32 ", "Negotiate", "127.0.0.1".into(), user, sid),
            };
        let data = data_of(vec![
            (
                "SubjectUserSid",
                Value::Sid(Sid::parse("S-1-5-18").unwrap_or(tsid.clone())),
            ),
            ("SubjectUserName", short_host(host).into()),
            ("SubjectDomainName", "CORP".into()),
            ("SubjectLogonId", Value::Hex64(0x3e7)),
            ("TargetUserSid", Value::Sid(tsid)),
            ("TargetUserName", target.into()),
            (
                "TargetDomainName",
                if ltype == 5 {
                    "NT AUTHORITY".into()
                } else {
                    "CORP".into()
                },
            ),
            ("TargetLogonId", Value::Hex64(logon_id)),
            ("LogonType", Value::U32(ltype)),
            ("LogonProcessName", process.into()),
            ("AuthenticationPackageName", package.into()),
            (
                "WorkstationName",
                if ltype == 3 {
                    "-".into()
                } else {
                    short_host(host).into()
                },
            ),
            ("LogonGuid", Value::Guid(Guid([0; 16]))),
            ("TransmittedServices", "-".into()),
            ("LmPackageName", "-".into()),
            ("KeyLength", Value::U32(0)),
            (
                "ProcessId",
                Value::Hex64(if ltype == 3 { 0 } else { 0x2c4 }),
            ),
            (
                "ProcessName",
                if ltype == 3 {
                    "-".into()
                } else {
                    "C:\\Windows\\System32\\lsass.exe".into()
                },
            ),
            ("IpAddress", Value::String(ip)),
            (
                "IpPort",
                if ltype == 3 {
                    Value::String((49152 + self.rng.below(16000)).to_string())
                } else {
                    "0".into()
                },
            ),
            ("ImpersonationLevel", "%%1833".into()),
            ("ElevatedToken", "%%1842".into()),
        ]);
        self.event(&SECURITY, 4624, 2, 0, 12544, id, host, None, data)
    }

    fn logon_failure(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, _) = self.user();
        let sub = *self
            .rng
            .pick(&[0xc000_0072u32, 0xc000_006f, 0xc000_0070, 0xc000_0193]);
        let ip = self.private_ip();
        let data = data_of(vec![
            (
                "SubjectUserSid",
                Value::Sid(Sid::parse("S-1-0-0").unwrap_or(domain_sid(0))),
            ),
            ("SubjectUserName", "-".into()),
            ("SubjectDomainName", "-".into()),
            ("SubjectLogonId", Value::Hex64(0)),
            (
                "TargetUserSid",
                Value::Sid(Sid::parse("S-1-0-0").unwrap_or(domain_sid(0))),
            ),
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
            (
                "IpPort",
                Value::String((49152 + self.rng.below(16000)).to_string()),
            ),
        ]);
        let mut e = self.event(&SECURITY, 4625, 0, 0, 12544, id, host, None, data);
        set_keywords(&mut e, 0x8010_0000_0000_0000);
        e
    }

    fn logoff(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, sid) = self.user();
        let logon_id = self.logon_id();
        let data = data_of(vec![
            ("TargetUserSid", Value::Sid(sid)),
            ("TargetUserName", user.into()),
            ("TargetDomainName", "CORP".into()),
            ("TargetLogonId", Value::Hex64(logon_id)),
            ("LogonType", Value::U32(*self.rng.pick(&[2u32, 3, 7]))),
        ]);
        self.event(&SECURITY, 4634, 0, 0, 12545, id, host, None, data)
    }

    fn special_logon_system(&mut self, id: u64) -> Event {
        let host = self.host();
        let data = data_of(vec![
            ("SubjectUserSid", Value::Sid(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0)))),
            ("SubjectUserName", "SYSTEM".into()),
            ("SubjectDomainName", "NT AUTHORITY".into()),
            ("SubjectLogonId", Value::Hex64(0x3e7)),
            ("PrivilegeList", "SeAssignPrimaryTokenPrivilege\r\n\t\t\tSeTcbPrivilege\r\n\t\t\tSeSecurityPrivilege\r\n\t\t\tSeTakeOwnershipPrivilege".into()),
        ]);
        self.event(&SECURITY, 4672, 0, 0, 12548, id, host, None, data)
    }

    fn special_logon_admin(&mut self, id: u64) -> Event {
        let host = self.host();
        let logon_id = self.logon_id();
        let data = data_of(vec![
            ("SubjectUserSid", Value::Sid(domain_sid(500))),
            ("SubjectUserName", "Administrator".into()),
            ("SubjectDomainName", "CORP".into()),
            ("SubjectLogonId", Value::Hex64(logon_id)),
            ("PrivilegeList", "SeSecurityPrivilege\r\n\t\t\tSeBackupPrivilege\r\n\t\t\tSeRestorePrivilege\r\n\t\t\tSeDebugPrivilege".into()),
        ]);
        self.event(&SECURITY, 4672, 0, 0, 12548, id, host, None, data)
    }

    fn process_4688(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, sid) = self.user();
        let (image, cmd, parent) = *self.rng.pick(PROCESSES);
        let logon_id = self.logon_id();
        let data = data_of(vec![
            ("SubjectUserSid", Value::Sid(sid.clone())),
            ("SubjectUserName", user.into()),
            ("SubjectDomainName", "CORP".into()),
            ("SubjectLogonId", Value::Hex64(logon_id)),
            (
                "NewProcessId",
                Value::Hex64(4 * (100 + self.rng.below(5000))),
            ),
            ("NewProcessName", image.replace("{u}", user).into()),
            ("TokenElevationType", "%%1938".into()),
            ("ProcessId", Value::Hex64(4 * (100 + self.rng.below(5000)))),
            ("CommandLine", cmd.replace("{u}", user).into()),
            (
                "TargetUserSid",
                Value::Sid(Sid::parse("S-1-0-0").unwrap_or(sid)),
            ),
            ("TargetUserName", "-".into()),
            ("TargetDomainName", "-".into()),
            ("TargetLogonId", Value::Hex64(0)),
            ("ParentProcessName", parent.into()),
            (
                "MandatoryLabel",
                Value::Sid(Sid::parse("S-1-16-8192").unwrap_or(domain_sid(0))),
            ),
        ]);
        self.event(&SECURITY, 4688, 2, 0, 13312, id, host, None, data)
    }

    fn user_created(&mut self, id: u64) -> Event {
        let n = self.rng.below(900) + 100;
        let data = data_of(vec![
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
        ]);
        self.event(
            &SECURITY,
            4720,
            0,
            0,
            13824,
            id,
            "DC01.corp.example",
            None,
            data,
        )
    }

    fn group_member_added(&mut self, id: u64) -> Event {
        let (_, sid) = self.user();
        let data = data_of(vec![
            ("MemberName", "-".into()),
            ("MemberSid", Value::Sid(sid)),
            ("TargetUserName", "Event Log Readers".into()),
            ("TargetDomainName", "Builtin".into()),
            (
                "TargetSid",
                Value::Sid(Sid::parse("S-1-5-32-573").unwrap_or(domain_sid(0))),
            ),
            ("SubjectUserSid", Value::Sid(domain_sid(1112))),
            ("SubjectUserName", "mgarcia".into()),
            ("SubjectDomainName", "CORP".into()),
            ("SubjectLogonId", Value::Hex64(0x05a3_f100)),
            ("PrivilegeList", "-".into()),
        ]);
        let host = self.host();
        self.event(&SECURITY, 4732, 0, 0, 13826, id, host, None, data)
    }

    fn security_log_cleared(&mut self, id: u64) -> Event {
        let host = self.host();
        let cleared = Element::new("LogFileCleared")
            .attr(
                "xmlns",
                "http://manifests.microsoft.com/win/2004/08/windows/eventlog",
            )
            .child(Element::new("SubjectUserSid").text(Value::Sid(domain_sid(500))))
            .child(Element::new("SubjectUserName").text("Administrator"))
            .child(Element::new("SubjectDomainName").text("CORP"))
            .child(Element::new("SubjectLogonId").text(Value::Hex64(0x05a3_f200)));
        let mut p = SECURITY;
        p.name = "Microsoft-Windows-Eventlog";
        p.guid = "{fc65ddd8-d6ef-4962-83d5-6e5cfe9ce148}";
        p.keywords = 0x4020_0000_0000_0000;
        self.event(
            &p,
            1102,
            0,
            4,
            104,
            id,
            host,
            None,
            Element::new("UserData").child(cleared),
        )
    }

    fn sysmon_process(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, _) = self.user();
        let (image, cmd, parent) = *self.rng.pick(PROCESSES);
        let image = image.replace("{u}", user);
        let file = image.rsplit('\\').next().unwrap_or("").to_owned();
        let (g, pg) = (self.process_guid(), self.process_guid());
        let data = data_of(vec![
            ("RuleName", "-".into()),
            ("UtcTime", self.utc_time().into()),
            ("ProcessGuid", g),
            (
                "ProcessId",
                Value::U32(4 * (100 + self.rng.below(5000) as u32)),
            ),
            ("Image", image.clone().into()),
            ("FileVersion", "10.0.19041.1".into()),
            ("Description", "-".into()),
            ("Product", "-".into()),
            ("Company", "Microsoft Corporation".into()),
            ("OriginalFileName", file.into()),
            ("CommandLine", cmd.replace("{u}", user).into()),
            ("CurrentDirectory", format!("C:\\Users\\{user}\\").into()),
            ("User", format!("CORP\\{user}").into()),
            ("LogonGuid", self.process_guid()),
            ("LogonId", Value::Hex64(self.logon_id())),
            ("TerminalSessionId", Value::U32(1)),
            ("IntegrityLevel", "Medium".into()),
            (
                "Hashes",
                format!(
                    "SHA256={:016X}{:016X}{:016X}{:016X}",
                    self.rng.next(),
                    self.rng.next(),
                    self.rng.next(),
                    self.rng.next()
                )
                .into(),
            ),
            ("ParentProcessGuid", pg),
            (
                "ParentProcessId",
                Value::U32(4 * (100 + self.rng.below(5000) as u32)),
            ),
            ("ParentImage", parent.into()),
            ("ParentCommandLine", parent.into()),
            ("ParentUser", format!("CORP\\{user}").into()),
        ]);
        self.event(
            &SYSMON,
            1,
            5,
            4,
            1,
            id,
            host,
            Some(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0))),
            data,
        )
    }

    fn sysmon_network(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, _) = self.user();
        let (image, dest, port): (String, String, u16) = match self.rng.below(3) {
            0 => (
                "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe".into(),
                format!("142.250.{}.{}", self.rng.below(255), self.rng.below(255)),
                443,
            ),
            1 => (
                "C:\\Windows\\System32\\svchost.exe".into(),
                self.private_ip(),
                135,
            ),
            _ => (
                format!("C:\\Users\\{user}\\AppData\\Local\\Microsoft\\OneDrive\\OneDrive.exe"),
                format!("13.107.{}.{}", self.rng.below(255), self.rng.below(255)),
                443,
            ),
        };
        let src = self.private_ip();
        let data = data_of(vec![
            ("RuleName", "-".into()),
            ("UtcTime", self.utc_time().into()),
            ("ProcessGuid", self.process_guid()),
            (
                "ProcessId",
                Value::U32(4 * (100 + self.rng.below(5000) as u32)),
            ),
            ("Image", image.into()),
            ("User", format!("CORP\\{user}").into()),
            ("Protocol", "tcp".into()),
            ("Initiated", Value::Bool(true)),
            ("SourceIsIpv6", Value::Bool(false)),
            ("SourceIp", src.into()),
            ("SourceHostname", "-".into()),
            (
                "SourcePort",
                Value::U16(49152 + self.rng.below(16000) as u16),
            ),
            ("SourcePortName", "-".into()),
            ("DestinationIsIpv6", Value::Bool(false)),
            ("DestinationIp", dest.into()),
            ("DestinationHostname", "-".into()),
            ("DestinationPort", Value::U16(port)),
            (
                "DestinationPortName",
                if port == 443 {
                    "https".into()
                } else {
                    "epmap".into()
                },
            ),
        ]);
        self.event(
            &SYSMON,
            3,
            5,
            4,
            3,
            id,
            host,
            Some(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0))),
            data,
        )
    }

    fn sysmon_image_load(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, _) = self.user();
        let image = *self.rng.pick(&[
            "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
            "C:\\Windows\\System32\\svchost.exe",
            "C:\\Windows\\explorer.exe",
        ]);
        let dll = *self.rng.pick(&[
            "ntdll.dll",
            "kernel32.dll",
            "crypt32.dll",
            "winhttp.dll",
            "bcrypt.dll",
            "dnsapi.dll",
        ]);
        let data = data_of(vec![
            ("RuleName", "-".into()),
            ("UtcTime", self.utc_time().into()),
            ("ProcessGuid", self.process_guid()),
            (
                "ProcessId",
                Value::U32(4 * (100 + self.rng.below(5000) as u32)),
            ),
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
            (
                "Hashes",
                format!(
                    "SHA256={:016X}{:016X}{:016X}{:016X}",
                    self.rng.next(),
                    self.rng.next(),
                    self.rng.next(),
                    self.rng.next()
                )
                .into(),
            ),
            ("Signed", "true".into()),
            ("Signature", "Microsoft Windows".into()),
            ("SignatureStatus", "Valid".into()),
            ("User", format!("CORP\\{user}").into()),
        ]);
        self.event(
            &SYSMON,
            7,
            3,
            4,
            7,
            id,
            host,
            Some(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0))),
            data,
        )
    }

    fn sysmon_process_access(&mut self, id: u64) -> Event {
        let host = self.host();
        let (target, access) = match self.rng.below(3) {
            0 => ("C:\\Windows\\System32\\lsass.exe", 0x1000u32),
            1 => ("C:\\Windows\\System32\\svchost.exe", 0x1f_ffff),
            _ => (
                "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe",
                0x1410,
            ),
        };
        let data = data_of(vec![
            ("RuleName", "-".into()),
            ("UtcTime", self.utc_time().into()),
            ("SourceProcessGUID", self.process_guid()),
            ("SourceProcessId", Value::U32(4 * (100 + self.rng.below(5000) as u32))),
            ("SourceThreadId", Value::U32(4 * (100 + self.rng.below(5000) as u32))),
            ("SourceImage", "C:\\Windows\\System32\\taskmgr.exe".into()),
            ("TargetProcessGUID", self.process_guid()),
            ("TargetProcessId", Value::U32(4 * (100 + self.rng.below(5000) as u32))),
            ("TargetImage", target.into()),
            ("GrantedAccess", Value::Hex32(access)),
            ("CallTrace", "C:\\Windows\\SYSTEM32\\ntdll.dll+9d204|C:\\Windows\\System32\\KERNELBASE.dll+2c13e".into()),
            ("SourceUser", "CORP\\jsmith".into()),
            ("TargetUser", "NT AUTHORITY\\SYSTEM".into()),
        ]);
        self.event(
            &SYSMON,
            10,
            3,
            4,
            10,
            id,
            host,
            Some(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0))),
            data,
        )
    }

    fn sysmon_file_create(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, _) = self.user();
        let n = self.rng.below(100_000);
        let target = match self.rng.below(3) {
            0 => format!("C:\\Users\\{user}\\AppData\\Local\\Temp\\chrome_{n}.tmp"),
            1 => format!("C:\\Users\\{user}\\Downloads\\invoice_{n}.pdf"),
            _ => format!("C:\\Windows\\Prefetch\\SVCHOST.EXE-{n:08X}.pf"),
        };
        let data = data_of(vec![
            ("RuleName", "-".into()),
            ("UtcTime", self.utc_time().into()),
            ("ProcessGuid", self.process_guid()),
            (
                "ProcessId",
                Value::U32(4 * (100 + self.rng.below(5000) as u32)),
            ),
            (
                "Image",
                "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe".into(),
            ),
            ("TargetFilename", target.into()),
            ("CreationUtcTime", self.utc_time().into()),
            ("User", format!("CORP\\{user}").into()),
        ]);
        self.event(
            &SYSMON,
            11,
            2,
            4,
            11,
            id,
            host,
            Some(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0))),
            data,
        )
    }

    fn sysmon_registry(&mut self, id: u64, set: bool) -> Event {
        let host = self.host();
        let (user, sid) = self.user();
        let key = *self.rng.pick(&[
            "\\Software\\Microsoft\\Office\\16.0\\Word\\Options\\AutoRecoverTime",
            "\\Software\\Microsoft\\Windows\\CurrentVersion\\Explorer\\RecentDocs\\MRUListEx",
            "\\Software\\Microsoft\\Windows\\CurrentVersion\\Explorer\\UserAssist\\Count\\HRZR_PGYFRFFVBA",
        ]);
        let mut fields = vec![
            ("RuleName", "-".into()),
            (
                "EventType",
                if set {
                    "SetValue".into()
                } else {
                    "CreateKey".into()
                },
            ),
            ("UtcTime", self.utc_time().into()),
            ("ProcessGuid", self.process_guid()),
            (
                "ProcessId",
                Value::U32(4 * (100 + self.rng.below(5000) as u32)),
            ),
            ("Image", "C:\\Windows\\explorer.exe".into()),
            ("TargetObject", format!("HKU\\{sid}{key}").into()),
        ];
        if set {
            fields.push((
                "Details",
                format!("DWORD (0x{:08x})", self.rng.below(4096)).into(),
            ));
        }
        fields.push(("User", format!("CORP\\{user}").into()));
        self.event(
            &SYSMON,
            if set { 13 } else { 12 },
            2,
            4,
            if set { 13 } else { 12 },
            id,
            host,
            Some(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0))),
            data_of(fields),
        )
    }

    fn ps_module(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, sid) = self.user();
        let cmd = *self.rng.pick(&[
            "Get-Service",
            "Get-ChildItem",
            "Get-CimInstance",
            "Select-Object",
        ]);
        let data = data_of(vec![
            ("ContextInfo", format!("        Severity = Informational\r\n        Host Name = ConsoleHost\r\n        Host Application = powershell.exe\r\n        Command Name = {cmd}\r\n        User = CORP\\{user}\r\n").into()),
            ("UserData", "".into()),
            ("Payload", format!("CommandInvocation({cmd}): \"{cmd}\"\r\n").into()),
        ]);
        self.event(&POWERSHELL, 4103, 1, 4, 106, id, host, Some(sid), data)
    }

    fn ps_script_block(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, sid) = self.user();
        let text = *self.rng.pick(SCRIPTS);
        let block = self.process_guid().render();
        let data = data_of(vec![
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
                if self.rng.chance(5000) {
                    format!("C:\\Users\\{user}\\Documents\\maintenance.ps1").into()
                } else {
                    "".into()
                },
            ),
        ]);
        self.event(&POWERSHELL, 4104, 1, 5, 2, id, host, Some(sid), data)
    }

    fn service_installed(&mut self, id: u64) -> Event {
        let host = self.host();
        let (name, path) = *self.rng.pick(&[
            ("Google Update Service (gupdate)", "\"C:\\Program Files (x86)\\Google\\Update\\GoogleUpdate.exe\" /svc"),
            ("Mozilla Maintenance Service", "\"C:\\Program Files (x86)\\Mozilla Maintenance Service\\maintenanceservice.exe\""),
            ("Microsoft Edge Elevation Service (MicrosoftEdgeElevationService)", "\"C:\\Program Files (x86)\\Microsoft\\Edge\\Application\\122.0.2365.80\\elevation_service.exe\""),
        ]);
        let data = data_of(vec![
            ("ServiceName", name.into()),
            ("ImagePath", path.into()),
            ("ServiceType", "user mode service".into()),
            ("StartType", "auto start".into()),
            ("AccountName", "LocalSystem".into()),
        ]);
        self.event(&SCM, 7045, 0, 4, 0, id, host, Some(domain_sid(1107)), data)
    }

    fn service_state(&mut self, id: u64) -> Event {
        let host = self.host();
        let (svc, key) = *self.rng.pick(&[
            ("Windows Update", "wuauserv"),
            ("Background Intelligent Transfer Service", "BITS"),
            ("Windows Modules Installer", "TrustedInstaller"),
            ("Delivery Optimization", "DoSvc"),
        ]);
        let state = *self.rng.pick(&["running", "stopped"]);
        let mut binary = Vec::new();
        crate::value::push_utf16(&mut binary, key);
        binary.extend_from_slice(&[0, 0]);
        let data = data_of(vec![
            ("param1", svc.into()),
            ("param2", state.into()),
            ("Binary", Value::Binary(binary)),
        ]);
        self.event(&SCM, 7036, 0, 4, 0, id, host, None, data)
    }

    fn defender_detection(&mut self, id: u64) -> Event {
        let host = self.host();
        let (user, _) = self.user();
        let data = data_of(vec![
            ("Product Name", "Microsoft Defender Antivirus".into()),
            ("Product Version", "4.18.24010.12".into()),
            (
                "Detection ID",
                self.process_guid().render().to_uppercase().into(),
            ),
            (
                "Detection Time",
                crate::value::format_filetime(self.time)[..23]
                    .to_owned()
                    .into(),
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
            ("Detection User", format!("CORP\\{user}").into()),
            (
                "Process Name",
                "C:\\Program Files\\Google\\Chrome\\Application\\chrome.exe".into(),
            ),
            ("Action Name", "Not Applicable".into()),
        ]);
        self.event(
            &DEFENDER,
            1116,
            0,
            3,
            0,
            id,
            host,
            Some(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0))),
            data,
        )
    }

    fn defender_disabled(&mut self, id: u64) -> Event {
        let host = self.host();
        let data = data_of(vec![
            ("Product Name", "Microsoft Defender Antivirus".into()),
            ("Product Version", "4.18.24010.12".into()),
        ]);
        self.event(
            &DEFENDER,
            5001,
            0,
            4,
            0,
            id,
            host,
            Some(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0))),
            data,
        )
    }

    fn task_registered(&mut self, id: u64) -> Event {
        let host = self.host();
        let task = *self.rng.pick(&[
            "\\Microsoft\\Windows\\UpdateOrchestrator\\Schedule Scan",
            "\\GoogleUpdateTaskMachineUA",
            "\\Microsoft\\Office\\Office Automatic Updates 2.0",
        ]);
        let data = data_of(vec![
            ("TaskName", task.into()),
            ("UserContext", "NT AUTHORITY\\System".into()),
        ]);
        self.event(
            &TASKS,
            106,
            0,
            4,
            106,
            id,
            host,
            Some(Sid::parse("S-1-5-18").unwrap_or(domain_sid(0))),
            data,
        )
    }
}

impl Iterator for Generator {
    type Item = (Event, Vec<String>);
    fn next(&mut self) -> Option<Self::Item> {
        Some(self.next_event())
    }
}

fn domain_sid(rid: u32) -> Sid {
    let mut sid = Sid::parse(DOMAIN_SID).unwrap_or(Sid {
        revision: 1,
        authority: 5,
        sub_authorities: vec![21],
    });
    sid.sub_authorities.push(rid);
    sid
}

fn short_host(h: &str) -> String {
    format!("{}$", h.split('.').next().unwrap_or(h))
}

fn data_of(fields: Vec<(&str, Value)>) -> Element {
    let mut ed = Element::new("EventData");
    for (name, v) in fields {
        ed.children.push(Node::Element(
            Element::new("Data").attr("Name", name).text(v),
        ));
    }
    ed
}

fn set_keywords(e: &mut Event, k: u64) {
    if let Some(Node::Element(s)) = e.root.children.first_mut() {
        for c in &mut s.children {
            if let Node::Element(x) = c {
                if x.name == "Keywords" {
                    x.children = vec![Node::Value(Value::Hex64(k))];
                }
            }
        }
    }
}

/// Gives a demo event the generator's time and record id.
fn restamp(e: &mut Event, time: u64, id: u64) {
    e.set_event_record_id(id);
    let utc = {
        let s = crate::value::format_filetime(time);
        format!("{} {}", &s[..10], &s[11..23])
    };
    for c in &mut e.root.children {
        let Node::Element(part) = c else { continue };
        for c in &mut part.children {
            let Node::Element(x) = c else { continue };
            if x.name == "TimeCreated" {
                for a in &mut x.attributes {
                    if a.name == "SystemTime" {
                        a.value = Value::FileTime(time);
                    }
                }
            } else if x.name == "Data"
                && matches!(x.attribute("Name"), Some(Value::String(n)) if n == "UtcTime")
            {
                x.children = vec![Node::Value(Value::String(utc.clone()))];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_bytes_other_seed_other_bytes() {
        let run = |seed| {
            let mut out = std::io::Cursor::new(Vec::new());
            let truth = generate(3000, seed, &mut out).unwrap();
            (out.into_inner(), truth.to_tsv())
        };
        let (a, ta) = run(7);
        let (b, tb) = run(7);
        let (c, _) = run(8);
        assert_eq!(a, b);
        assert_eq!(ta, tb);
        assert_ne!(a, c);
        assert!(ta.lines().count() > 5, "{ta}");
    }

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

    #[test]
    fn every_demo_event_is_planted_with_its_rules() {
        let g = Generator::new(1).unwrap();
        assert!(g.demo.len() >= 60);
        let firing = g.demo.iter().filter(|(_, r)| !r.is_empty()).count();
        let rows: usize = g.demo.iter().map(|(_, r)| r.len()).sum();
        assert_eq!(
            rows,
            DEMO_EXPECTED
                .lines()
                .filter(|l| !l.trim().is_empty())
                .count()
        );
        assert!(firing > 40);
    }
}
