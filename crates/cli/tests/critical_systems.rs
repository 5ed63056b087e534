//! `critical_systems.txt` read by csv-timeline and json-timeline: the detections on a
//! listed computer are raised one level (low → medium → high → critical → emergency,
//! informational unchanged), as Hayabusa does; without the file nothing changes; a
//! file that cannot be read stops the run with an error naming it.
//!
//! The file is `./config/critical_systems.txt`, relative to the current folder, so
//! each test runs scanner in a scratch folder of its own.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{path_below, scratch, text};

const LEVELS: [&str; 5] = ["informational", "low", "medium", "high", "critical"];

/// A rule of `level` matching every Security 4624.
fn rule(level: &str) -> String {
    format!(
        "title: Logon {level}
id: 00000000-0000-0000-0000-0000000000{n:02}
level: {level}
status: test
details: 'logon'
logsource: {{product: windows, service: security}}
detection: {{sel: {{EventID: 4624}}, condition: sel}}
",
        n = LEVELS.iter().position(|l| *l == level).unwrap()
    )
}

fn event(rid: u64, computer: &str) -> String {
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="Microsoft-Windows-Security-Auditing"/>
    <EventID>4624</EventID>
    <TimeCreated SystemTime="2024-03-12T09:00:{rid:02}.000Z"/>
    <EventRecordID>{rid}</EventRecordID>
    <Channel>Security</Channel>
    <Computer>{computer}</Computer>
  </System>
  <EventData><Data Name="TargetUserName">alice</Data></EventData>
</Event>
"#
    )
}

/// scanner run in `dir` (where `./config/critical_systems.txt` is looked for).
fn scanner_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_scanner"))
        .current_dir(dir)
        .args(args)
        .env("TZ", "UTC")
        .env("NO_COLOR", "1")
        .env(
            "XDG_DATA_HOME",
            std::env::temp_dir().join("scanner-test-no-data-folder"),
        )
        .output()
        .expect("run scanner")
}

/// A scratch folder with `rules/` (one rule per level), `log.evtx` (a 4624 on
/// `DC01.corp.local`, then one on `WS02.corp.local`) and the working folder `run/`.
struct Setup {
    dir: PathBuf,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let dir = scratch(name);
        let rules = dir.join("rules");
        std::fs::create_dir_all(rules.join("config")).unwrap();
        for l in LEVELS {
            std::fs::write(rules.join(format!("{l}.yml")), rule(l)).unwrap();
        }
        let xml = format!(
            "<Events>\n{}{}</Events>\n",
            event(1, "DC01.corp.local"),
            event(2, "WS02.corp.local")
        );
        std::fs::write(dir.join("log.xml"), xml).unwrap();
        std::fs::create_dir_all(dir.join("run")).unwrap();
        let s = Setup { dir };
        let out = s.run(&[
            "evtx",
            "write",
            "--from",
            s.path("log.xml"),
            "-o",
            s.path("log.evtx"),
        ]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        s
    }

    fn path(&self, name: &str) -> &'static str {
        Box::leak(self.dir.join(name).display().to_string().into_boxed_str())
    }

    /// Writes the working folder's `config/critical_systems.txt`.
    fn list(&self, content: &str) -> PathBuf {
        let c = self.dir.join("run/config");
        std::fs::create_dir_all(&c).unwrap();
        let p = c.join("critical_systems.txt");
        std::fs::write(&p, content).unwrap();
        p
    }

    fn run(&self, args: &[&str]) -> Output {
        scanner_in(&self.dir.join("run"), args)
    }

    /// csv-timeline (standard profile, full level names with -b when `full`).
    fn csv(&self, extra: &[&str]) -> Output {
        let mut args = vec![
            "csv-timeline",
            "-f",
            self.path("log.evtx"),
            "-r",
            self.path("rules"),
            "-p",
            "standard",
            "-U",
        ];
        args.extend_from_slice(extra);
        self.run(&args)
    }
}

impl Drop for Setup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn ok(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    text(&out.stdout)
}

/// (Computer, RuleTitle) → Level of a CSV timeline.
fn levels(csv: &str) -> Vec<(String, String, String)> {
    let mut r = csv::Reader::from_reader(csv.as_bytes());
    let head: Vec<String> = r.headers().unwrap().iter().map(str::to_string).collect();
    let col = |n: &str| head.iter().position(|h| h == n).unwrap();
    let (c, t, l) = (col("Computer"), col("RuleTitle"), col("Level"));
    let mut v: Vec<(String, String, String)> = r
        .records()
        .map(|rec| {
            let rec = rec.unwrap();
            (rec[c].to_string(), rec[t].to_string(), rec[l].to_string())
        })
        .collect();
    v.sort();
    v
}

fn expected(raised: &[&str]) -> Vec<(String, String, String)> {
    let mut v = Vec::new();
    for (i, l) in LEVELS.iter().enumerate() {
        v.push((
            "DC01.corp.local".to_string(),
            format!("Logon {l}"),
            raised[i].to_string(),
        ));
        v.push((
            "WS02.corp.local".to_string(),
            format!("Logon {l}"),
            ["info", "low", "med", "high", "crit"][i].to_string(),
        ));
    }
    v.sort();
    v
}

#[test]
fn rows_on_a_listed_computer_are_raised_one_level_in_csv_and_json() {
    let s = Setup::new("critical-raised");
    // Without the file: the rules' levels.
    let plain = ok(&s.csv(&["-q"]));
    assert_eq!(
        levels(&plain),
        expected(&["info", "low", "med", "high", "crit"])
    );
    // Listed in another case, with a comment and blank lines.
    s.list("# domain controllers\n\n  dc01.CORP.local  \n# ws02.corp.local\n");
    let raised = ok(&s.csv(&["-q"]));
    assert_eq!(
        levels(&raised),
        expected(&["info", "med", "high", "crit", "emer"])
    );
    // Full names with -b.
    let full = ok(&s.csv(&["-q", "-b"]));
    let dc: Vec<String> = levels(&full)
        .into_iter()
        .filter(|(c, _, _)| c.starts_with("DC01"))
        .map(|(_, _, l)| l)
        .collect();
    // By rule title: critical, high, informational, low, medium.
    assert_eq!(
        dc,
        ["emergency", "critical", "informational", "medium", "high"]
    );
    // JSON: the same levels.
    let json = ok(&s.run(&[
        "json-timeline",
        "-f",
        s.path("log.evtx"),
        "-r",
        s.path("rules"),
        "-p",
        "standard",
        "-U",
        "-L",
        "-q",
    ]));
    let mut got: Vec<(String, String, String)> = json
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            let s = |k: &str| v[k].as_str().unwrap().to_string();
            (s("Computer"), s("RuleTitle"), s("Level"))
        })
        .collect();
    got.sort();
    assert_eq!(got, expected(&["info", "med", "high", "crit", "emer"]));
}

#[test]
fn the_summary_counts_the_emergency_level_only_when_there_is_one() {
    let s = Setup::new("critical-summary");
    let before = s.csv(&["-o", s.path("a.csv")]);
    ok(&before);
    let summary = text(&before.stderr);
    assert!(
        !summary.contains("emergency"),
        "no emergency line without the file:\n{summary}"
    );
    assert!(
        summary.contains("Total | Unique critical detections: 2 (20.00%) | 1 (20.00%)"),
        "{summary}"
    );
    s.list("DC01.corp.local\n");
    let after = s.csv(&["-o", s.path("b.csv")]);
    ok(&after);
    let summary = text(&after.stderr);
    let file = path_below("./config", "critical_systems.txt");
    assert!(
        summary.contains(&format!(
            "critical systems: 1 computer from {}",
            file.display()
        )),
        "{summary}"
    );
    // The critical rule: once at emergency (DC01), once at critical (WS02); the high
    // rule's DC01 row is critical too.
    for line in [
        "Total | Unique emergency detections: 1 (10.00%) | 1 (20.00%)",
        "Total | Unique critical detections: 2 (20.00%) | 2 (40.00%)",
        "Total | Unique informational detections: 2 (20.00%) | 1 (20.00%)",
        "Top emergency alerts:",
        "emergency: DC01.corp.local (1)",
    ] {
        assert!(summary.contains(line), "{line:?} missing:\n{summary}");
    }
}

#[test]
fn an_unreadable_file_stops_the_run_naming_it() {
    let s = Setup::new("critical-bad");
    let p = s.list("x");
    // Not UTF-8.
    std::fs::write(&p, [0xff, 0xfe, 0x00, 0x41]).unwrap();
    let out = s.csv(&["-q", "-o", s.path("bad.csv")]);
    assert_ne!(out.status.code(), Some(0));
    let err = text(&out.stderr);
    let file = path_below("./config", "critical_systems.txt");
    assert!(
        err.contains(&format!("{}: not UTF-8 text", file.display())),
        "{err}"
    );
    assert!(!s.dir.join("bad.csv").exists());
    // A folder.
    std::fs::remove_file(&p).unwrap();
    std::fs::create_dir(&p).unwrap();
    let err = text(&s.csv(&["-q"]).stderr);
    assert!(err.contains("not a regular file (a folder)"), "{err}");
    std::fs::remove_dir(&p).unwrap();
    // A FIFO without a writer: refused at once, not waited on.
    #[cfg(unix)]
    {
        let made = Command::new("mkfifo").arg(&p).status();
        if matches!(made, Ok(st) if st.success()) {
            let out = s.csv(&["-q"]);
            assert_ne!(out.status.code(), Some(0));
            let err = text(&out.stderr);
            assert!(
                err.contains("critical_systems.txt: not a regular file (a FIFO)"),
                "{err}"
            );
        } else {
            eprintln!("skipped: mkfifo is not available here");
        }
    }
}

#[test]
fn config_critical_systems_writes_where_the_timeline_reads() {
    let s = Setup::new("critical-roundtrip");
    // A domain controller: a Security 4768 on DC01.
    let xml = r#"<Events>
<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="Microsoft-Windows-Security-Auditing"/>
    <EventID>4768</EventID>
    <TimeCreated SystemTime="2024-03-12T08:00:00.000Z"/>
    <EventRecordID>1</EventRecordID>
    <Channel>Security</Channel>
    <Computer>DC01.corp.local</Computer>
  </System>
  <EventData><Data Name="TargetUserName">alice</Data></EventData>
</Event>
</Events>
"#;
    std::fs::write(s.dir.join("dc.xml"), xml).unwrap();
    ok(&s.run(&[
        "evtx",
        "write",
        "--from",
        s.path("dc.xml"),
        "-o",
        s.path("dc.evtx"),
    ]));
    ok(&s.run(&["config-critical-systems", "-f", s.path("dc.evtx"), "-q"]));
    assert_eq!(
        std::fs::read_to_string(s.dir.join("run/config/critical_systems.txt")).unwrap(),
        "DC01.corp.local\n"
    );
    let raised = ok(&s.csv(&["-q"]));
    assert_eq!(
        levels(&raised),
        expected(&["info", "med", "high", "crit", "emer"])
    );
}

/// A Security 4768 (a domain controller) on each computer named, as EVTX in `name`.
#[cfg(unix)] // for the Unix-only tests below (links, permissions)
fn dc_log(s: &Setup, name: &str, computers: &[&str]) -> &'static str {
    let mut xml = String::from("<Events>\n");
    for (i, c) in computers.iter().enumerate() {
        xml.push_str(&format!(
            r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System>
    <Provider Name="Microsoft-Windows-Security-Auditing"/>
    <EventID>4768</EventID>
    <TimeCreated SystemTime="2024-03-12T08:00:0{i}.000Z"/>
    <EventRecordID>{}</EventRecordID>
    <Channel>Security</Channel>
    <Computer>{c}</Computer>
  </System>
  <EventData><Data Name="TargetUserName">alice</Data></EventData>
</Event>
"#,
            i + 1
        ));
    }
    xml.push_str("</Events>\n");
    let src = s.dir.join(format!("{name}.xml"));
    std::fs::write(&src, xml).unwrap();
    let out = s.path(name);
    ok(&s.run(&["evtx", "write", "--from", src.to_str().unwrap(), "-o", out]));
    out
}

/// The attack of a local user who can write the case folder: `config/critical_systems.txt`
/// planted as a link to a root file, and a computer name holding a crontab line.
#[cfg(unix)]
#[test]
fn a_planted_link_is_not_written_through_and_evidence_adds_no_line() {
    let s = Setup::new("critical-planted");
    let victim = s.dir.join("crontab");
    std::fs::write(&victim, "# root's crontab\n").unwrap();
    let config = s.dir.join("run/config");
    std::fs::create_dir_all(&config).unwrap();
    std::os::unix::fs::symlink(&victim, config.join("critical_systems.txt")).unwrap();
    let log = dc_log(
        &s,
        "evil",
        &[
            "* * * * * root touch /tmp/PWNED&#10;ssh-ed25519 AAAA attacker",
            "DC01.corp.local",
        ],
    );
    let out = s.run(&["config-critical-systems", "-f", log, "-q"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stdout));
    let err = text(&out.stderr);
    assert!(
        err.contains("./config/critical_systems.txt: a symbolic link, not followed"),
        "{err}"
    );
    assert!(
        !err.contains("not added"),
        "refused before any evidence is read: {err}"
    );
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "# root's crontab\n"
    );
    assert!(
        std::fs::symlink_metadata(config.join("critical_systems.txt"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    // The timeline does not read through the link either: levels unchanged, exit 1.
    let out = s.csv(&["-q"]);
    assert_ne!(out.status.code(), Some(0));
    assert!(text(&out.stderr).contains("a symbolic link, not followed"));
    // With the link gone, the name fit for the file is added, the other never.
    std::fs::remove_file(config.join("critical_systems.txt")).unwrap();
    let out = s.run(&["config-critical-systems", "-f", log, "-q"]);
    assert!(
        text(&out.stderr).contains("holds a line break or control character; not added"),
        "{}",
        text(&out.stderr)
    );
    ok(&out);
    assert_eq!(
        std::fs::read_to_string(config.join("critical_systems.txt")).unwrap(),
        "DC01.corp.local\n"
    );
}

/// A `config` folder others may write (or, when the tests run as root, another
/// user's): config-critical-systems refuses it naming it; the timelines leave it unread
/// with a warning, and the levels are the rules' own.
#[cfg(unix)]
#[test]
fn a_config_folder_others_control_is_refused_for_writing_and_unread_by_timelines() {
    use std::os::unix::fs::PermissionsExt;
    let s = Setup::new("critical-foreign");
    let file = s.list("DC01.corp.local\n");
    let config = file.parent().unwrap().to_path_buf();
    let log = dc_log(&s, "dc", &["FS09.corp.local"]);
    type Case<'a> = (&'a str, Box<dyn Fn() + 'a>);
    let mut cases: Vec<Case> = vec![(
        "writable by group or others",
        Box::new(|| {
            std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o777)).unwrap()
        }),
    )];
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } == 0 {
        cases.push((
            "belongs to user 65534",
            Box::new(|| {
                std::fs::set_permissions(&config, std::fs::Permissions::from_mode(0o755)).unwrap();
                std::os::unix::fs::chown(&config, Some(65534), Some(65534)).unwrap();
            }),
        ));
    }
    for (why, make) in cases {
        make();
        let out = s.run(&["config-critical-systems", "-f", log, "-q"]);
        assert_eq!(out.status.code(), Some(1), "{why}");
        let err = text(&out.stderr);
        assert!(
            err.contains("./config: ") && err.contains(why),
            "{why}: {err}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "DC01.corp.local\n");
        let out = s.csv(&[]);
        let err = text(&out.stderr);
        assert!(
            err.contains("warning: ./config/critical_systems.txt not read: ./config: ")
                && err.contains(why),
            "{why}: {err}"
        );
        assert_eq!(
            levels(&ok(&out)),
            expected(&["info", "low", "med", "high", "crit"]),
            "{why}: levels as the rules say"
        );
    }
}
