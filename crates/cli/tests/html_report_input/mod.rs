//! The hostile input the HTML report tests build: rules whose title and author hold
//! markup, and an EVTX log (written with `scanner evtx write`) whose events name
//! computers with markup, so that anything reaching the page unescaped would run.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// What an injected script would do: mark the page (the browser test looks for it).
pub const PWN_SCRIPT: &str = "<script>document.body.setAttribute('data-pwned','1')</script>";
/// An element whose handler would run.
pub const PWN_IMG: &str = "<img src=x onerror=\"document.body.setAttribute('data-pwned','2')\">";

/// The hostile rule's title.
pub fn evil_title() -> String {
    format!("Evil {PWN_SCRIPT} logon & \"more\"")
}

/// The hostile rule's author.
pub fn evil_author() -> String {
    format!("Mallory {PWN_IMG}, Eve")
}

/// The hostile computer's name.
pub fn evil_computer() -> String {
    format!("{PWN_SCRIPT}.corp")
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn yaml_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

fn event(rid: u64, event_id: u32, computer: &str) -> String {
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="Microsoft-Windows-Security-Auditing"/>
    <EventID>{event_id}</EventID>
    <TimeCreated SystemTime="2024-03-12T09:{:02}:{:02}.000Z"/>
    <EventRecordID>{rid}</EventRecordID>
    <Channel>Security</Channel>
    <Computer>{}</Computer>
  </System>
  <EventData><Data Name="TargetUserName">alice</Data></EventData>
</Event>
"#,
        (rid / 60) % 60,
        rid % 60,
        xml_escape(computer)
    )
}

/// A scratch folder holding `rules/` and `log.evtx`.
pub struct Input {
    /// The folder.
    pub dir: PathBuf,
}

impl Input {
    /// Builds the input in `dir`: three enabled rules (on 4624: the hostile one, high,
    /// `test`, tagged `attack.execution`; on 4625: a `stable` low one and a high one)
    /// and a deprecated one (disabled); events: two 4624 on the hostile computer, one
    /// on `WS02.corp.local`, and a 4625 on each of `extra` computers named
    /// `host-NNNNN`.
    pub fn new(dir: &Path, extra: usize) -> Input {
        let rules = dir.join("rules");
        std::fs::create_dir_all(&rules).unwrap();
        let rule = |name: &str,
                    title: &str,
                    author: &str,
                    level: &str,
                    status: &str,
                    eid: u32,
                    n: u32| {
            let text = format!(
                "title: {}\nid: 00000000-0000-0000-0000-0000000000{n:02}\nauthor: {}\nlevel: {level}\nstatus: {status}\n\
tags: [attack.execution, attack.t1059]\ndetails: 'logon'\nlogsource: {{product: windows, service: security}}\n\
detection: {{sel: {{EventID: {eid}}}, condition: sel}}\n",
                yaml_quote(title),
                yaml_quote(author)
            );
            std::fs::write(rules.join(name), text).unwrap();
        };
        rule(
            "evil.yml",
            &evil_title(),
            &evil_author(),
            "high",
            "test",
            4624,
            1,
        );
        rule(
            "failed.yml",
            "Failed logon",
            "Alice",
            "low",
            "stable",
            4625,
            2,
        );
        rule(
            "failed-high.yml",
            "Failed logon, high",
            "Bob",
            "high",
            "experimental",
            4625,
            3,
        );
        rule(
            "old.yml",
            "Old rule",
            "Carol",
            "high",
            "deprecated",
            4624,
            4,
        );
        let mut xml = String::from("<Events>\n");
        let evil = evil_computer();
        xml.push_str(&event(1, 4624, &evil));
        xml.push_str(&event(2, 4624, &evil));
        xml.push_str(&event(3, 4624, "WS02.corp.local"));
        for i in 0..extra {
            xml.push_str(&event(10 + i as u64, 4625, &format!("host-{i:05}")));
        }
        xml.push_str("</Events>\n");
        std::fs::write(dir.join("log.xml"), xml).unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_scanner"))
            .args(["evtx", "write", "--from"])
            .arg(dir.join("log.xml"))
            .arg("-o")
            .arg(dir.join("log.evtx"))
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        Input {
            dir: dir.to_path_buf(),
        }
    }

    /// Runs csv-timeline over the log with the rules, the report to `page`.
    pub fn report(&self, page: &Path) -> Output {
        Command::new(env!("CARGO_BIN_EXE_scanner"))
            .current_dir(&self.dir)
            .env("TZ", "UTC")
            .env("XDG_DATA_HOME", self.dir.join("data"))
            .env("XDG_CACHE_HOME", self.dir.join("cache"))
            .args(["csv-timeline", "-f"])
            .arg(self.dir.join("log.evtx"))
            .arg("-r")
            .arg(self.dir.join("rules"))
            .args(["-U", "-q", "-C", "-o"])
            .arg(self.dir.join("timeline.csv"))
            .arg("-H")
            .arg(page)
            .output()
            .unwrap()
    }
}
