//! Hayabusa's command lines: every spelling of a flag (3.9.0's, 4.0's lowercase ones,
//! the accepted no-op flags, `dfir-timeline -t`) parses and does what its canonical
//! form does, compared output for output; and the small commands (expand-list,
//! config-critical-systems, level-tuning, set-default-profile) on files the tests make.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use support::{command, scratch, succeeded, text, user_dir, UserDir};

const LOG: &str = "testdata/evtx/security.evtx";
const GENERATED: &str = "testdata/evtx/generated.evtx";
const GENERATED_JSON: &str = "testdata/evtx/generated.jsonl";

/// Runs scanner in Tokyo time (so the time-zone flags change the output), with
/// standard input closed and the default profile read from `config` (an empty folder
/// unless a test sets one).
fn run_with(config: &Path, args: &[&str]) -> Output {
    let mut c = command();
    user_dir(&mut c, UserDir::Config, config)
        .args(args)
        .env("TZ", "Asia/Tokyo")
        .env("HOME", config)
        .env_remove("NO_COLOR")
        .stdin(Stdio::null())
        .output()
        .expect("run scanner")
}

fn empty_config() -> PathBuf {
    scratch("no-config")
}

fn ok_in(config: &Path, args: &[&str]) -> String {
    succeeded(args, run_with(config, args))
}

/// What a flag does to the base command's output.
#[derive(Clone, Copy, Debug)]
enum Effect {
    /// It changes it (so the comparison of spellings is not vacuous).
    Changes,
    /// It changes nothing (an accepted Hayabusa flag without effect here).
    Nothing,
    /// The base command alone does not run (the flag is needed, e.g. `-J` on JSON).
    Needed,
}
use Effect::{Changes, Needed, Nothing};

/// (the spelling tested, the canonical spelling, its effect on the base command).
type Spelling = (&'static [&'static str], &'static [&'static str], Effect);

/// Each spelling, appended to `base`, gives the output of its canonical form.
fn check_spellings(base: &[&str], table: &[Spelling]) {
    let config = empty_config();
    let with = |extra: &[&str]| {
        let mut a: Vec<&str> = base.to_vec();
        a.extend_from_slice(extra);
        ok_in(&config, &a)
    };
    for (spelling, canonical, effect) in table {
        let got = with(spelling);
        let want = with(canonical);
        assert_eq!(got, want, "{spelling:?} differs from {canonical:?}");
        match effect {
            Changes => assert_ne!(want, with(&[]), "{canonical:?} changed nothing"),
            Nothing => assert_eq!(want, with(&[]), "{canonical:?} should change nothing"),
            Needed => assert!(!want.is_empty()),
        }
    }
}

#[test]
fn timeline_flags_in_every_spelling_mean_the_same() {
    check_spellings(
        &["csv-timeline", "-f", LOG, "-q", "-N"],
        &[
            (&["--utc"], &["-U"], Changes),
            (&["--UTC"], &["-U"], Changes),
            (&["--iso-8601"], &["-O"], Changes),
            (&["--ISO-8601"], &["-O"], Changes),
            (&["--rfc-3339"], &["--RFC-3339"], Changes),
            (&["--rfc-2822"], &["--RFC-2822"], Changes),
            (&["--us-time"], &["--US-time"], Changes),
            (&["--us-military-time"], &["--US-military-time"], Changes),
            (&["--european-time"], &["--European-time"], Changes),
            (&["--eid-filter"], &["-E"], Nothing),
            (&["--EID-filter"], &["-E"], Nothing),
            (&["--threads", "2"], &["-t", "2"], Nothing),
            (&["-w"], &[], Nothing),
            (&["--no-wizard"], &[], Nothing),
            (&["-Q"], &[], Nothing),
            (&["--quiet-errors"], &[], Nothing),
            (&["-v"], &[], Nothing),
            (&["--verbose"], &[], Nothing),
            (&["-s"], &[], Nothing),
            (&["--sort"], &[], Nothing),
            (&["--sort-events"], &[], Nothing),
            (&["-w", "-Q", "-U"], &["-U"], Changes),
        ],
    );
}

#[test]
fn json_input_and_jsonl_flags_in_every_spelling_mean_the_same() {
    check_spellings(
        &[
            "json-timeline",
            "-f",
            "testdata/cases/cased.jsonl",
            "-r",
            "testdata/cases/cased.yml",
            "-q",
            "-N",
            "-U",
        ],
        &[
            (&["--json-input"], &["-J"], Needed),
            (&["--JSON-input"], &["-J"], Needed),
            (&["-J", "--jsonl-output"], &["-J", "-L"], Needed),
            (&["-J", "--JSONL-output"], &["-J", "-L"], Needed),
        ],
    );
}

#[test]
fn dfir_timeline_does_what_csv_and_json_timeline_do() {
    let config = empty_config();
    let same = |dfir: &[&str], old: &[&str]| {
        let common = ["-f", LOG, "-q", "-N", "-U"];
        let a: Vec<&str> = dfir.iter().chain(&common).copied().collect();
        let b: Vec<&str> = old.iter().chain(&common).copied().collect();
        let (x, y) = (ok_in(&config, &a), ok_in(&config, &b));
        assert!(!y.is_empty(), "{old:?} wrote nothing");
        assert_eq!(x, y, "{dfir:?} differs from {old:?}");
    };
    same(&["dfir-timeline"], &["csv-timeline"]);
    same(&["dfir-timeline", "-t", "csv"], &["csv-timeline"]);
    same(&["dfir-timeline", "-t", "json"], &["json-timeline"]);
    same(&["dfir-timeline", "-t", "JSONL"], &["json-timeline", "-L"]);
    same(
        &["dfir-timeline", "--output-type", "jsonl", "--threads", "2"],
        &["json-timeline", "-L", "-t", "2"],
    );
    // -t is the output type there: a number is refused, naming the values.
    let out = run_with(&config, &["dfir-timeline", "-f", LOG, "-t", "2"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("csv"), "{}", text(&out.stderr));
}

#[test]
fn csv_only_flags_are_refused_with_json_output_as_hayabusa_4_refuses_them() {
    let config = empty_config();
    let common = ["-f", LOG, "-q", "-N", "-U"];
    for cmd in [
        &["dfir-timeline", "-t", "json"][..],
        &["dfir-timeline", "-t", "jsonl"],
        &["dfir-timeline", "--output-type", "JSONL"],
        &["json-timeline"],
        &["json-timeline", "-L"],
    ] {
        for (flag, named) in [
            ("-M", "-M, --multiline"),
            ("--multiline", "-M, --multiline"),
            ("-S", "-S, --tab-separator"),
            ("--tab-separator", "-S, --tab-separator"),
        ] {
            let args: Vec<&str> = cmd.iter().chain(&common).chain([&flag]).copied().collect();
            let out = run_with(&config, &args);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
            assert!(
                err.contains("only apply to CSV output") && err.contains(named),
                "{args:?}: {err}"
            );
            assert!(out.stdout.is_empty(), "{args:?} wrote a timeline");
        }
    }
    // With CSV they shape the cells; -R (DUP) applies to JSON too, as in Hayabusa 4.0
    // (its source keeps -R out of the refused flags): both runs succeed.
    let csv = ok_in(
        &config,
        &["dfir-timeline", "-t", "csv", "-M", "-f", LOG, "-q", "-N"],
    );
    assert!(csv.contains("\r\n"), "-M's line breaks inside cells");
    let dup = ok_in(
        &config,
        &["dfir-timeline", "-t", "jsonl", "-R", "-f", LOG, "-q", "-N"],
    );
    assert!(dup.starts_with("{ \"Timestamp\""), "{dup}");
}

#[test]
fn geo_ip_in_every_spelling_adds_the_same_columns() {
    use support::mmdb::{database, map, named, s};
    let d = scratch("geoip-spelling");
    let rules = d.join("rules");
    std::fs::create_dir_all(rules.join("config")).unwrap();
    write(
        &rules.join("r.yml"),
        "title: Logon\nid: 00000000-0000-0000-0000-00000000bb01\nlevel: low\n\
         logsource: {product: windows, service: security}\n\
         detection: {s: {EventID: 4624}, condition: s}\n",
    );
    write(
        &rules.join("config/geoip_field_mapping.yaml"),
        "SrcIP: ['%IpAddress%']\nTgtIP: []\nFilter:\n  - Security: [4624]\n",
    );
    let dbs = d.join("geoip");
    std::fs::create_dir_all(&dbs).unwrap();
    let net = |v| vec![("203.0.113.0".parse().unwrap(), 24, v)];
    let values = [
        (
            "GeoLite2-ASN",
            map(&[("autonomous_system_organization", s("Example Transit"))]),
        ),
        ("GeoLite2-Country", map(&[("country", named("Japan"))])),
        ("GeoLite2-City", map(&[("city", named("Tokyo"))])),
    ];
    for (kind, v) in values {
        std::fs::write(dbs.join(format!("{kind}.mmdb")), database(kind, &net(v))).unwrap();
    }
    let (r, g) = (rules.to_str().unwrap(), dbs.to_str().unwrap());
    let base = ["csv-timeline", "-f", LOG, "-r", r, "-q", "-N", "-U"];
    let config = empty_config();
    let with = |flag: &str| ok_in(&config, &[&base[..], &[flag, g]].concat());
    let out = with("-G");
    assert_eq!(with("--geo-ip"), out);
    assert_eq!(with("--GeoIP"), out);
    assert_ne!(ok_in(&config, &base), out, "-G changed nothing");
    assert!(
        out.lines().next().unwrap().ends_with(
            "\"SrcASN\",\"SrcCountry\",\"SrcCity\",\"TgtASN\",\"TgtCountry\",\"TgtCity\""
        ),
        "{out}"
    );
    assert!(
        out.contains("\"Example Transit\",\"Japan\",\"Tokyo\",\"\",\"\",\"\""),
        "{out}"
    );
    // 4.0's full command line with -V, -G and -s runs unchanged.
    let four = [
        "dfir-timeline",
        "-V",
        "-d",
        "testdata/evtx",
        "-r",
        r,
        "-o",
        "-",
        "-w",
        "-p",
        "verbose",
        "-U",
        "-q",
        "-C",
        "-s",
        "-N",
        "-G",
        g,
    ];
    assert!(ok_in(&config, &four).contains("\"Japan\",\"Tokyo\""));
    // pivot-keywords-list writes no timeline columns: -G is refused there, not ignored.
    let out = run_with(
        &config,
        &["pivot-keywords-list", "-f", LOG, "-r", r, "-q", "-G", g],
    );
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("pivot-keywords-list writes none"));
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn html_report_is_written_under_either_spelling() {
    let d = scratch("html-spelling");
    let config = empty_config();
    for (i, flag) in ["-H", "--HTML-report", "--html-report"].iter().enumerate() {
        let report = d.join(format!("r{i}.html"));
        let r = report.to_str().unwrap();
        ok_in(&config, &["csv-timeline", "-f", LOG, "-q", "-N", flag, r]);
        let html = std::fs::read_to_string(&report).expect("report written");
        assert!(html.contains("<html"), "{flag}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn metrics_flags_in_every_spelling_mean_the_same() {
    check_spellings(
        &["log-metrics", "-f", GENERATED, "-q"],
        &[
            (&["--utc"], &["-U"], Changes),
            (&["--iso-8601"], &["-O"], Changes),
            (&["--rfc-3339"], &["--RFC-3339"], Changes),
            (&["--european-time"], &["--European-time"], Changes),
            (&["-Q"], &[], Nothing),
            (&["--quiet-errors"], &[], Nothing),
        ],
    );
    check_spellings(
        &["eid-metrics", "-f", GENERATED_JSON, "-q"],
        &[
            (&["--json-input"], &["-J"], Needed),
            (&["--JSON-input"], &["-J"], Needed),
        ],
    );
}

#[cfg(not(windows))]
#[test]
fn live_analysis_off_windows_is_refused_naming_the_flag() {
    let config = empty_config();
    for args in [
        &["csv-timeline", "-l"][..],
        &["dfir-timeline", "--live-analysis"],
        &["eid-metrics", "-l"],
        &["computer-metrics", "-l", "-q"],
    ] {
        let out = run_with(&config, args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = text(&out.stderr);
        assert!(
            err.contains("-l (live analysis)") && err.contains("Windows"),
            "{err}"
        );
    }
}

// ---- expand-list

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn expand_list_lists_every_placeholder_the_rules_use() {
    let d = scratch("expand-list");
    let rules = d.join("rules");
    let rule =
        |sel: &str| format!("title: t\nid: x\nlevel: low\ndetection:\n{sel}  condition: s\n");
    write(
        &rules.join("a.yml"),
        &rule("  s:\n    Computer|expand: '%dc_names%'\n"),
    );
    // In a nested map, with another modifier, twice: once.
    write(
        &rules.join("sub/b.yml"),
        &rule("  s:\n    x:\n      CommandLine|contains|expand: '%userdomain%'\n    y|expand: '%dc_names%'\n"),
    );
    // A list value, and keys inside a list, are read (Hayabusa skips them).
    write(
        &rules.join("c.yml"),
        &rule("  s:\n    A|expand:\n      - '%in_list%'\n  t:\n    - B|expand: '%list_of_maps%'\n"),
    );
    // Every document, and .yaml files, as the rule loader reads them (Hayabusa: the
    // first document of .yml files); an invalid file is reported.
    write(
        &rules.join("d.yml"),
        &format!(
            "{}---\ndetection:\n  s:\n    A|expand: '%second_doc%'\n",
            rule("  s:\n    A: 1\n")
        ),
    );
    write(
        &rules.join("e.yaml"),
        &rule("  s:\n    A|expand: '%not_yml%'\n"),
    );
    write(&rules.join("f.yml"), "detection: [unclosed\n");
    // An alias bomb (10^12 nodes once expanded) is an error, not a hang.
    let mut bomb = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let refs = vec![format!("*a{}", i - 1); 10].join(", ");
        bomb.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    bomb.push_str("detection:\n  s:\n    A|expand: '%bomb%'\n    B: *a11\n  condition: s\n");
    write(&rules.join("bomb.yml"), &bomb);
    // A FIFO named like a rule is not opened (nothing would ever be written to it).
    #[cfg(unix)]
    {
        let fifo = rules.join("fifo.yml");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if !made.is_ok_and(|s| s.success()) {
            println!("skipped: mkfifo is not available");
        }
    }
    #[cfg(unix)]
    {
        let outside = d.join("outside");
        write(
            &outside.join("g.yml"),
            &rule("  s:\n    A|expand: '%through_link%'\n"),
        );
        std::os::unix::fs::symlink(&outside, rules.join("link")).unwrap();
    }
    let out = run_with(
        &empty_config(),
        &["expand-list", "-r", rules.to_str().unwrap(), "-q"],
    );
    assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "\n6 unique expand placeholders found:\ndc_names\nin_list\nlist_of_maps\nnot_yml\nsecond_doc\nuserdomain\n"
    );
    let err = text(&out.stderr);
    assert!(
        err.contains("f.yml") && err.contains("invalid YAML"),
        "{err}"
    );
    std::fs::remove_dir_all(d).unwrap();
}

/// With a file for each placeholder expand-list names, `rules check --expand-dir`
/// disables no rule for a missing placeholder (issue 37: hayabusa-rules has
/// `- SubjectAccountName|expand: '%Administrators%'` and `ComputerName|expand:` with a
/// list of `%ServerSystems%` and `%DomainControllers%`, which Hayabusa's expand-list
/// does not name).
#[test]
fn expand_list_names_every_placeholder_rules_check_asks_for() {
    let d = scratch("expand-list-agrees");
    let rules = d.join("rules");
    let rule = |id: u32, sel: &str| {
        format!("title: r{id}\nid: 6a7d0b4e-0000-4000-8000-{id:012}\nlevel: low\nlogsource:\n  product: windows\n  service: security\ndetection:\n{sel}  condition: s\n")
    };
    write(
        &rules.join("a.yml"),
        &rule(
            1,
            "  s:\n    - EventID: 4624\n    - SubjectAccountName|expand: '%Administrators%'\n",
        ),
    );
    write(
        &rules.join("b.yml"),
        &rule(2, "  s:\n    ComputerName|expand:\n      - '%ServerSystems%'\n      - '%DomainControllers%'\n"),
    );
    write(
        &rules.join("c.yml"),
        &format!(
            "{}---\n{}",
            rule(3, "  s:\n    Workstation|expand: '%Workstations%'\n"),
            rule(
                4,
                "  s:\n    TargetUserName|contains|expand: 'x\\%y%Admins_Workstations%'\n"
            )
        ),
    );
    let config = empty_config();
    let listed = ok_in(&config, &["expand-list", "-r", rules.to_str().unwrap()]);
    let names: Vec<&str> = listed.lines().skip(2).collect();
    assert_eq!(
        names,
        [
            "Administrators",
            "Admins_Workstations",
            "DomainControllers",
            "ServerSystems",
            "Workstations"
        ],
        "{listed}"
    );
    let check = |expand: &Path| {
        let out = run_with(
            &config,
            &[
                "rules",
                "check",
                "-r",
                rules.to_str().unwrap(),
                "--expand-dir",
                expand.to_str().unwrap(),
                "--no-rule-cache",
            ],
        );
        text(&out.stderr)
    };
    let expand = d.join("expand");
    std::fs::create_dir_all(&expand).unwrap();
    let err = check(&expand);
    assert_eq!(err.matches("has no values").count(), 4, "{err}");
    for n in &names {
        write(&expand.join(format!("{n}.txt")), "value\n");
    }
    let err = check(&expand);
    assert!(!err.contains("placeholder"), "{err}");
    std::fs::remove_dir_all(d).unwrap();
}

// ---- config-critical-systems

fn security_event(id: u32, record: u32, computer: &str, share: Option<&str>) -> String {
    let data = share.map_or(String::new(), |s| {
        format!("<Data Name=\"ShareName\">{s}</Data>")
    });
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System><Provider Name="Microsoft-Windows-Security-Auditing"/><EventID>{id}</EventID><Level>0</Level><TimeCreated SystemTime="2024-01-01T00:00:0{record}.000Z"/><EventRecordID>{record}</EventRecordID><Channel>Security</Channel><Computer>{computer}</Computer></System><EventData>{data}</EventData></Event>"#
    )
}

fn write_evtx(dir: &Path, name: &str, events: &[String]) -> String {
    let xml = dir.join(format!("{name}.xml"));
    std::fs::write(&xml, format!("<Events>{}</Events>", events.concat())).unwrap();
    let evtx = dir.join(name);
    ok_in(
        &empty_config(),
        &[
            "evtx",
            "write",
            "--from",
            xml.to_str().unwrap(),
            "-o",
            evtx.to_str().unwrap(),
        ],
    );
    evtx.display().to_string()
}

#[test]
fn config_critical_systems_adds_domain_controllers_and_file_servers() {
    let d = scratch("critical");
    let log = write_evtx(
        &d,
        "sec.evtx",
        &[
            security_event(4768, 1, "DC1.corp", None),
            security_event(4768, 2, "DC1.corp", None),
            security_event(5145, 3, "IPCONLY.corp", Some(r"\\*\IPC$")),
            security_event(5145, 4, "FS1.corp", Some(r"\\*\data")),
            security_event(5145, 5, "DC1.corp", Some(r"\\*\SYSVOL")),
            security_event(4624, 6, "WS1.corp", None),
        ],
    );
    let target = d.join("config/critical_systems.txt");
    write(&target, "# critical hosts\ndc1.CORP\n");
    let t = target.to_str().unwrap();
    // Standard input is not a terminal (Hayabusa 3.9.0 panicked here).
    let out = run_with(
        &empty_config(),
        &[
            "config-critical-systems",
            "-f",
            &log,
            "-q",
            "--critical-systems",
            t,
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("Domain Controllers found (1):\nDC1.corp\n"),
        "{stdout}"
    );
    assert!(
        stdout.contains("File Servers found (2):\nDC1.corp\nFS1.corp\n"),
        "{stdout}"
    );
    // The comment and the name already there (in another case) are kept; FS1 is added.
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "# critical hosts\ndc1.CORP\nFS1.corp\n"
    );
    // --dry-run writes nothing.
    std::fs::remove_file(&target).unwrap();
    ok_in(
        &empty_config(),
        &[
            "config-critical-systems",
            "-f",
            &log,
            "--critical-systems",
            t,
            "--dry-run",
        ],
    );
    assert!(!target.exists());
    // None found: said, and no file written.
    let none = write_evtx(&d, "none.evtx", &[security_event(4624, 1, "WS1", None)]);
    let stdout = ok_in(
        &empty_config(),
        &[
            "config-critical-systems",
            "-f",
            &none,
            "--critical-systems",
            t,
        ],
    );
    assert!(
        stdout.contains("No Domain Controllers found.")
            && stdout.contains("No File Servers found."),
        "{stdout}"
    );
    assert!(!target.exists());
    std::fs::remove_dir_all(d).unwrap();
}

// ---- level-tuning

const RULE_ID: &str = "33c276a1-2475-2f1f-aa3d-ec5d61dbe94c";
const OTHER_ID: &str = "b6ce0b2f-593b-5e1c-e137-d30b2974e30e";

fn rule_text(id: &str, level: &str) -> String {
    format!("title: T\nid: {id}\nstatus: test\nlevel: {level} # keep me\nlogsource:\n  product: windows\ndetection:\n  s:\n    EventID: 1\n    level: {level}\n  condition: s\n")
}

#[test]
fn level_tuning_rewrites_the_level_line_of_the_rules_listed() {
    let d = scratch("level-tuning");
    let rules = d.join("rules");
    write(&rules.join("a/one.yml"), &rule_text(RULE_ID, "high"));
    write(&rules.join("two.yml"), &rule_text(OTHER_ID, "medium"));
    write(
        &rules.join("untouched.yml"),
        &rule_text("00000000-0000-0000-0000-000000000000", "high"),
    );
    let tuning = d.join("tuning.txt");
    write(
        &tuning,
        &format!("id,new_level\n{RULE_ID},low # was high\n{OTHER_ID},medium\n"),
    );
    #[cfg(unix)]
    let outside = {
        let o = d.join("outside.yml");
        write(&o, &rule_text(RULE_ID, "high"));
        std::os::unix::fs::symlink(&o, rules.join("linked.yml")).unwrap();
        o
    };
    let (r, t) = (rules.to_str().unwrap(), tuning.to_str().unwrap());
    let out = run_with(&empty_config(), &["level-tuning", "-r", r, "-f", t]);
    let stdout = text(&out.stdout);
    assert!(stdout.contains("one.yml: level high -> low"), "{stdout}");
    assert!(stdout.contains("1 rules tuned"), "{stdout}");
    // Only the top-level line changes; the comment and the detection's field stay.
    assert_eq!(
        std::fs::read_to_string(rules.join("a/one.yml")).unwrap(),
        rule_text(RULE_ID, "high").replacen("level: high #", "level: low #", 1)
    );
    assert_eq!(
        std::fs::read_to_string(rules.join("two.yml")).unwrap(),
        rule_text(OTHER_ID, "medium")
    );
    #[cfg(unix)]
    {
        // The link is reported and neither it nor its target is written.
        assert_eq!(out.status.code(), Some(3), "{}", text(&out.stderr));
        assert!(text(&out.stderr).contains("linked.yml: a symbolic link, not followed; not tuned"));
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            rule_text(RULE_ID, "high")
        );
        assert!(std::fs::symlink_metadata(rules.join("linked.yml"))
            .unwrap()
            .file_type()
            .is_symlink());
    }
    // A malformed tuning line stops the run before any rule is touched.
    write(&rules.join("two.yml"), &rule_text(OTHER_ID, "medium"));
    write(
        &tuning,
        &format!("id,new_level\n{OTHER_ID},critical\nnot-an-id,low\n"),
    );
    let out = run_with(&empty_config(), &["level-tuning", "-r", r, "-f", t]);
    assert_eq!(out.status.code(), Some(1));
    let err = text(&out.stderr);
    assert!(
        err.contains("tuning.txt line 3") && err.contains("not-an-id"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_to_string(rules.join("two.yml")).unwrap(),
        rule_text(OTHER_ID, "medium")
    );
    // A FIFO as the tuning file is refused, not read forever.
    #[cfg(unix)]
    {
        let fifo = d.join("fifo.txt");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            let f = fifo.to_str().unwrap();
            let out = run_with(&empty_config(), &["level-tuning", "-r", r, "-f", f]);
            assert_eq!(out.status.code(), Some(1));
            assert!(text(&out.stderr).contains("not a regular file"));
        } else {
            println!("skipped: mkfifo is not available");
        }
    }
    std::fs::remove_dir_all(d).unwrap();
}

// ---- set-default-profile

#[test]
fn set_default_profile_is_used_by_the_timeline_without_p() {
    let config = scratch("default-profile");
    let header = |args: &[&str]| {
        let mut a = vec!["csv-timeline", "-f", LOG, "-q", "-N", "-U"];
        a.extend_from_slice(args);
        ok_in(&config, &a)
            .lines()
            .next()
            .unwrap_or_default()
            .to_string()
    };
    let standard = header(&[]);
    let verbose = header(&["-p", "verbose"]);
    assert_ne!(standard, verbose);
    assert_eq!(ok_in(&config, &["set-default-profile"]), "standard\n");
    ok_in(&config, &["set-default-profile", "-p", "verbose", "-q"]);
    assert_eq!(
        std::fs::read_to_string(config.join("scanner/default_profile.txt")).unwrap(),
        "verbose\n"
    );
    assert_eq!(ok_in(&config, &["set-default-profile"]), "verbose\n");
    assert_eq!(header(&[]), verbose);
    assert_eq!(header(&["-p", "standard"]), standard);
    // An unknown name is refused and the default kept; a damaged file is named.
    let out = run_with(&config, &["set-default-profile", "-p", "nope"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("unknown profile 'nope'"));
    assert_eq!(header(&[]), verbose);
    std::fs::write(config.join("scanner/default_profile.txt"), "garbage\n").unwrap();
    let out = run_with(&config, &["csv-timeline", "-f", LOG, "-q"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("default_profile.txt: unknown profile 'garbage'"));
    // A FIFO in its place is refused, not read forever.
    #[cfg(unix)]
    {
        let file = config.join("scanner/default_profile.txt");
        std::fs::remove_file(&file).unwrap();
        let made = std::process::Command::new("mkfifo").arg(&file).status();
        if made.is_ok_and(|s| s.success()) {
            let out = run_with(&config, &["csv-timeline", "-f", LOG, "-q"]);
            assert_eq!(out.status.code(), Some(1));
            assert!(text(&out.stderr).contains("not a regular file"));
        } else {
            println!("skipped: mkfifo is not available");
        }
        // A link planted at the file's name is neither followed nor replaced.
        use std::os::unix::fs::PermissionsExt;
        let victim = config.join("victim");
        std::fs::write(&victim, "root's\n").unwrap();
        std::fs::remove_file(&file).unwrap();
        std::os::unix::fs::symlink(&victim, &file).unwrap();
        let out = run_with(&config, &["set-default-profile", "-p", "verbose", "-q"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(
            text(&out.stderr).contains("default_profile.txt: a symbolic link, not followed"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "root's\n");
        // A folder others may write: not written, and not read (standard, a warning).
        std::fs::remove_file(&file).unwrap();
        std::fs::write(&file, "verbose\n").unwrap();
        let folder = config.join("scanner");
        std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(0o777)).unwrap();
        let out = run_with(&config, &["set-default-profile", "-p", "minimal", "-q"]);
        assert_eq!(out.status.code(), Some(1));
        assert!(text(&out.stderr).contains("writable by group or others"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "verbose\n");
        let out = run_with(&config, &["csv-timeline", "-f", LOG, "-N", "-U"]);
        assert!(
            text(&out.stderr).contains("default_profile.txt not read:")
                && text(&out.stderr).contains("the standard profile is used"),
            "{}",
            text(&out.stderr)
        );
        assert_eq!(
            text(&out.stdout).lines().next().unwrap_or_default(),
            standard
        );
    }
    std::fs::remove_dir_all(config).unwrap();
}

// ---- elements with no content (issue 17)

#[test]
fn elements_with_no_content_show_na_and_are_left_out_of_the_field_lists() {
    let d = scratch("no-content");
    let event = |id: u32, data: &str| {
        format!(
            r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System><Provider Name="P"/><EventID>{id}</EventID><Level>0</Level><TimeCreated SystemTime="2024-01-01T00:00:01.000Z"/><EventRecordID>{id}</EventRecordID><Channel>Security</Channel><Computer>WS1</Computer></System>{data}</Event>"#
        )
    };
    let log = write_evtx(
        &d,
        "empty.evtx",
        &[
            event(
                9001,
                "<EventData><Param1>one</Param1><Param2></Param2><Param3>three</Param3></EventData>",
            ),
            event(9002, "<EventData></EventData>"),
        ],
    );
    let rules = d.join("rules");
    // Rules still see an element with no content as an empty value.
    write(
        &rules.join("r.yml"),
        "title: Empty P2\nid: 0b0a3a39-3d0e-4a2b-9b51-6b1d2a4f3c01\nstatus: test\nlevel: high\nlogsource:\n  product: windows\n  service: security\ndetection:\n  s:\n    EventID: 9001\n    Param2: ''\n  condition: s\ndetails: 'A: %Param1% ¦ B: %Param2% ¦ C: %Param3%'\n",
    );
    write(
        &rules.join("all.yml"),
        "title: Any\nid: 0b0a3a39-3d0e-4a2b-9b51-6b1d2a4f3c02\nstatus: test\nlevel: high\nlogsource:\n  product: windows\n  service: security\ndetection:\n  s:\n    EventID: 9002\n  condition: s\n",
    );
    let rows = |profile: &str| {
        let out = d.join(format!("{profile}.csv"));
        ok_in(
            &empty_config(),
            &[
                "csv-timeline",
                "-f",
                &log,
                "-r",
                rules.to_str().unwrap(),
                "-p",
                profile,
                "-U",
                "-q",
                "-C",
                "-o",
                out.to_str().unwrap(),
            ],
        );
        std::fs::read_to_string(out).unwrap()
    };
    let verbose = rows("verbose");
    assert!(
        verbose.contains(r#""A: one ¦ B: n/a ¦ C: three","-""#),
        "{verbose}"
    );
    let all = rows("all-field-info");
    assert!(all.contains(r#""Param1: one ¦ Param3: three""#), "{all}");
    // An empty container is no field: nothing to list.
    assert!(all.contains(r#",9002,"-","#), "{all}");
    assert!(
        !all.contains("Param2") && !all.contains("EventData:"),
        "{all}"
    );
    std::fs::remove_dir_all(d).unwrap();
}

// --- -V/--validate-checksums (issue 34) ---

/// A generated log of two chunks or more whose chunk 0 has one record byte flipped (a
/// letter of a path: the record still reads, the chunk's records CRC32 fails), and
/// the number of records in that chunk.
fn log_with_a_flipped_byte(d: &Path) -> (PathBuf, u64) {
    let mut out = std::io::Cursor::new(Vec::new());
    scanner_evtx_writer::generate(3000, 7, &mut out).unwrap();
    let mut bytes = out.into_inner();
    assert!(bytes.len() > 4096 + 2 * 65536, "three chunks at least");
    let chunk = &bytes[4096..4096 + 65536];
    let records = |at: usize| u64::from_le_bytes(chunk[at..at + 8].try_into().unwrap());
    let in_chunk_0 = records(16) - records(8) + 1;
    let free = u32::from_le_bytes(chunk[48..52].try_into().unwrap()) as usize;
    let c: Vec<u8> = "C:\\".encode_utf16().flat_map(u16::to_le_bytes).collect();
    let at = chunk[..free]
        .windows(c.len())
        .position(|w| w == c)
        .expect("a path in chunk 0");
    scanner_evtx_writer::flip_byte(&mut bytes, 0, at, 0x20).unwrap();
    let path = d.join("flipped.evtx");
    std::fs::write(&path, bytes).unwrap();
    (path, in_chunk_0)
}

#[test]
fn validate_checksums_skips_chunks_whose_crc32_fails_on_every_command_that_takes_it() {
    let d = scratch("validate-checksums");
    let config = empty_config();
    let (log, in_chunk_0) = log_with_a_flipped_byte(&d);
    let l = log.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["csv-timeline", "-f", l, "-q", "-N"],
        &["json-timeline", "-f", l, "-q", "-N"],
        &["dfir-timeline", "-f", l, "-q", "-N"],
        &["dfir-timeline", "-t", "jsonl", "-f", l, "-q", "-N"],
        &["pivot-keywords-list", "-f", l, "-q"],
        &["eid-metrics", "-f", l, "-q"],
        &["computer-metrics", "-f", l, "-q"],
        &["log-metrics", "-f", l, "-q"],
        &["logon-summary", "-f", l, "-q"],
        &["extract-base64", "-f", l, "-q"],
        &["search", "-f", l, "-k", "x", "-q"],
    ];
    for c in commands {
        // Without -V the chunk is read: no error.
        ok_in(&config, c);
        for flag in ["-V", "--validate-checksums"] {
            let mut args = c.to_vec();
            args.push(flag);
            let out = run_with(&config, &args);
            let err = text(&out.stderr);
            assert_eq!(out.status.code(), Some(3), "{args:?}: {err}");
            assert!(
                err.contains(&format!(
                    "{l}: chunk 0: its records' CRC32 does not match (stored "
                )) && err.contains("not read (-V)"),
                "{args:?}: {err}"
            );
        }
    }
    // What is not read: every record of chunk 0, and nothing else.
    let count = |extra: &[&str]| -> u64 {
        let mut args = vec!["log-metrics", "-f", l, "-q"];
        args.extend_from_slice(extra);
        let out = run_with(&config, &args);
        let mut rows = csv::Reader::from_reader(&out.stdout[..]);
        let row = rows.records().next().expect("a row").expect("CSV");
        row[2].replace(',', "").parse().expect("Events")
    };
    assert_eq!(count(&[]), 3000);
    assert_eq!(count(&["-V"]), 3000 - in_chunk_0);
    std::fs::remove_dir_all(&d).unwrap();
}
// --- end -V ---
