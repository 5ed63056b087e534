//! What a Hayabusa user trips over on the first day (issue 37), on files the tests make:
//! the rule set of the current folder (`./rules`) and which set a run uses, a mistyped
//! `-r`, `-l` off Windows, Hayabusa's flags on the metrics commands and search, the
//! timestamp formats, the load report's figures and `--help`'s headings.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use support::{command, root, scratch, succeeded, text};

const LOG: &str = "testdata/evtx/security.evtx";

/// A rule that fires on the test log's logons, with a title of its own.
const FOLDER_RULE: &str = "title: Rule From The Folder
id: 00000000-0000-0000-0000-00000000f001
level: high
status: test
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4624}, condition: sel}
";

/// A title of the built-in rules that fires on the test log.
const BUILT_IN_TITLE: &str = "Successful RDP Logon";

fn log() -> String {
    root().join(LOG).display().to_string()
}

fn path(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// scanner run in `cwd` (UTC, no data or cache folder of the machine's).
fn run_in(cwd: &Path, args: &[&str]) -> Output {
    command()
        .current_dir(cwd)
        .env("TZ", "UTC")
        .args(args)
        .output()
        .expect("run scanner")
}

/// A case folder holding `rules/` with [`FOLDER_RULE`] and a `config/` of its own
/// whose `channel_eid_info.txt` names Security 4624 as eid-metrics shows it.
fn hayabusa_folder(name: &str) -> PathBuf {
    let d = scratch(name);
    std::fs::create_dir_all(d.join("rules/config")).unwrap();
    std::fs::write(d.join("rules/r.yml"), FOLDER_RULE).unwrap();
    std::fs::write(
        d.join("rules/config/channel_eid_info.txt"),
        "Channel,EventID,EventTitle\nSecurity,4624,Logon From The Folder Config\n",
    )
    .unwrap();
    d
}

#[cfg(unix)]
fn chmod(p: &Path, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn the_timeline_runs_the_current_folders_rules_and_says_which_set_it_runs() {
    let d = hayabusa_folder("dot-rules");
    let l = log();
    let timeline = |extra: &[&str]| {
        let mut args = vec!["csv-timeline", "-f", &l, "-N"];
        args.extend_from_slice(extra);
        let out = run_in(&d, &args);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        (text(&out.stdout), text(&out.stderr))
    };
    let (csv, err) = timeline(&[]);
    assert!(csv.contains("Rule From The Folder"), "{csv}");
    assert!(!csv.contains(BUILT_IN_TITLE), "{csv}");
    assert!(
        err.contains("rules: using ./rules (the current folder's"),
        "{err}"
    );
    // Quiet says nothing.
    let (_, err) = timeline(&["-q"]);
    assert!(err.is_empty(), "{err}");
    // -r and --builtin-rules say their set.
    let other = scratch("dot-rules-other");
    std::fs::write(other.join("r.yml"), FOLDER_RULE).unwrap();
    let (_, err) = timeline(&["-r", path(&other)]);
    assert!(
        err.contains(&format!("rules: using {}\n", other.display())),
        "{err}"
    );
    let (csv, err) = timeline(&["--builtin-rules"]);
    assert!(csv.contains(BUILT_IN_TITLE), "{csv}");
    assert!(
        err.contains("rules: using the built-in rules (--builtin-rules)"),
        "{err}"
    );
    // rules check and eid-metrics read the same folder.
    let out = run_in(&d, &["rules", "check"]);
    assert_eq!(text(&out.stdout), "loaded 1 of 1 rule\n");
    let out = run_in(&d, &["eid-metrics", "-f", &log(), "-q"]);
    assert!(
        text(&out.stdout).contains("Logon From The Folder Config"),
        "{}",
        text(&out.stdout)
    );
    // Without a rules folder: the built-in set, said.
    let empty = scratch("dot-rules-none");
    let out = run_in(&empty, &["csv-timeline", "-f", &log(), "-N"]);
    assert!(text(&out.stdout).contains(BUILT_IN_TITLE));
    assert!(
        text(&out.stderr).contains("rules: using the built-in rules (no -r"),
        "{}",
        text(&out.stderr)
    );
    for f in [d, other, empty] {
        std::fs::remove_dir_all(f).unwrap();
    }
}

/// scanner runs as root over folders others can write: a `rules` folder others may
/// write, or another user's, is not used (a warning says why), nor its config by
/// eid-metrics; a link named `rules` is followed only when it is the user's and leads to
/// such a folder.
#[cfg(unix)]
#[test]
fn a_rules_folder_that_may_not_be_trusted_is_not_used() {
    let d = hayabusa_folder("dot-rules-untrusted");
    let rules = d.join("rules");
    let check = |d: &Path, why: &str| {
        let out = run_in(d, &["csv-timeline", "-f", &log(), "-N"]);
        assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
        let (csv, err) = (text(&out.stdout), text(&out.stderr));
        assert!(csv.contains(BUILT_IN_TITLE) && !csv.contains("From The Folder"));
        assert!(
            err.contains(&format!("warning: ./rules not used: {why}")),
            "{err}"
        );
        assert!(err.contains("rules: using the built-in rules"), "{err}");
        let out = run_in(d, &["eid-metrics", "-f", &log()]);
        assert!(!text(&out.stdout).contains("From The Folder"));
        assert!(text(&out.stderr).contains("./rules not used"));
        // -q: the warning too is left out.
        let out = run_in(d, &["csv-timeline", "-f", &log(), "-q"]);
        assert!(text(&out.stderr).is_empty(), "{}", text(&out.stderr));
    };
    chmod(&rules, 0o777);
    check(&d, "writable by group or others");
    chmod(&rules, 0o755);
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::chown(&rules, Some(4242), None).unwrap();
        check(&d, "belongs to user 4242");
        std::os::unix::fs::chown(&rules, Some(0), None).unwrap();
    }
    // A link of the user's to a folder that may be trusted: followed, and said.
    let linked = scratch("dot-rules-link");
    let link = linked.join("rules");
    std::os::unix::fs::symlink(&rules, &link).unwrap();
    let out = run_in(&linked, &["csv-timeline", "-f", &log(), "-N"]);
    assert!(text(&out.stdout).contains("Rule From The Folder"));
    let target = std::fs::canonicalize(&rules).unwrap();
    assert!(
        text(&out.stderr).contains(&format!(
            "rules: using ./rules, a link to {} (",
            target.display()
        )),
        "{}",
        text(&out.stderr)
    );
    // To a folder others may write: not.
    chmod(&rules, 0o777);
    check(
        &linked,
        &format!(
            "a symbolic link to {}: writable by group or others",
            target.display()
        ),
    );
    chmod(&rules, 0o755);
    // A link someone else made: not followed.
    if unsafe { libc::geteuid() } == 0 {
        std::os::unix::fs::lchown(&link, Some(4242), None).unwrap();
        check(&linked, "a symbolic link that belongs to user 4242");
    }
    for f in [d, linked] {
        std::fs::remove_dir_all(f).unwrap();
    }
}

#[test]
fn a_mistyped_rules_path_is_named() {
    let d = scratch("mistyped-r");
    let missing = d.join("hayabusa-rulez");
    for cmd in ["csv-timeline", "json-timeline", "pivot-keywords-list"] {
        let out = run_in(&d, &[cmd, "-f", &log(), "-r", path(&missing)]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{cmd}: {err}");
        assert!(
            err.contains(&format!(
                "error: -r {}: no such file or folder",
                missing.display()
            )),
            "{cmd}: {err}"
        );
        assert!(!err.contains("no rule to run"), "{cmd}: {err}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Every command that reads logs answers `-l` off Windows with the same error and exit
/// code (Hayabusa exits 0 there).
#[cfg(not(windows))]
#[test]
fn live_analysis_needs_windows_on_every_command() {
    let d = scratch("live");
    let commands: &[&[&str]] = &[
        &["csv-timeline"],
        &["json-timeline"],
        &["dfir-timeline"],
        &["pivot-keywords-list"],
        &["search", "-k", "x"],
        &["eid-metrics"],
        &["computer-metrics"],
        &["log-metrics"],
        &["logon-summary"],
        &["extract-base64"],
        &["config-critical-systems", "--dry-run"],
    ];
    for c in commands {
        let mut args = c.to_vec();
        args.push("-l");
        let out = run_in(&d, &args);
        assert_eq!(out.status.code(), Some(1), "{c:?}: {}", text(&out.stderr));
        assert_eq!(
            text(&out.stderr),
            "error: -l (live analysis) reads the local Windows event logs and needs Windows; give the logs with -d DIR or -f FILE\n",
            "{c:?}"
        );
    }
    std::fs::remove_dir_all(d).unwrap();
}

fn ok_in(d: &Path, args: &[&str]) -> String {
    succeeded(args, run_in(d, args))
}

#[test]
fn target_file_ext_and_time_offset_on_the_metrics_commands_and_search() {
    let d = scratch("metrics-flags");
    let logs = d.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let copy = logs.join("host1.evtx_data");
    std::fs::copy(root().join(LOG), &copy).unwrap();
    let commands: &[&[&str]] = &[
        &["eid-metrics"],
        &["computer-metrics"],
        &["log-metrics"],
        &["logon-summary"],
        &["extract-base64"],
        &["search", "-k", "CORP"],
    ];
    for c in commands {
        let with = |extra: &[&str]| {
            let mut args = c.to_vec();
            args.extend_from_slice(extra);
            args.extend_from_slice(&["-q", "-U"]);
            ok_in(&d, &args)
        };
        let from_file = with(&["-f", path(&copy)]);
        // log-metrics and search name the file: the same file either way.
        assert_eq!(
            with(&["-d", path(&logs), "--target-file-ext", "evtx_data"]),
            from_file,
            "{c:?}"
        );
        assert_eq!(
            with(&["-d", path(&logs), "--target-file-ext", "bak,.evtx_data"]),
            from_file,
            "{c:?}"
        );
        // The log's events are of 2024: a day's offset leaves none, a century's all.
        assert_eq!(
            with(&["-f", path(&copy), "--time-offset", "100y"]),
            from_file,
            "{c:?}"
        );
        let recent = with(&["-f", path(&copy), "--time-offset", "1d"]);
        assert_ne!(recent, from_file, "{c:?}");
    }
    // What a day's offset leaves: the headers, no event.
    let eid = ok_in(
        &d,
        &[
            "eid-metrics",
            "-f",
            path(&copy),
            "--time-offset",
            "1d",
            "-q",
        ],
    );
    assert_eq!(eid, "Total,%,Channel,ID,Event\n");
    let out = run_in(
        &d,
        &[
            "search",
            "-f",
            path(&copy),
            "-k",
            "CORP",
            "--time-offset",
            "1d",
        ],
    );
    assert!(
        text(&out.stderr).contains(": 0 events found;"),
        "{}",
        text(&out.stderr)
    );
    // Hayabusa's spelling of several units.
    assert_eq!(
        ok_in(
            &d,
            &[
                "eid-metrics",
                "-f",
                path(&copy),
                "--time-offset",
                "1y6M",
                "-q"
            ]
        ),
        eid
    );
    // Not with --timeline-start, as Hayabusa.
    for c in ["logon-summary", "search"] {
        let out = run_in(
            &d,
            &[
                c,
                "-f",
                path(&copy),
                "-k",
                "x",
                "--time-offset",
                "1d",
                "--timeline-start",
                "2024-01-01",
            ],
        );
        assert_eq!(out.status.code(), Some(2), "{c}: {}", text(&out.stderr));
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn hayabusas_other_spellings_and_separators() {
    let d = scratch("hayabusa-spellings");
    let l = log();
    // 4.0's --remove-duplicate-records is -X.
    for c in ["eid-metrics", "logon-summary"] {
        assert_eq!(
            ok_in(&d, &[c, "-f", &l, "-q", "--remove-duplicate-records"]),
            ok_in(&d, &[c, "-f", &l, "-q", "-X"]),
            "{c}"
        );
    }
    // search -S: a tab between AllFieldInfo's fields.
    let plain = ok_in(&d, &["search", "-f", &l, "-k", "CORP", "-q"]);
    let tabbed = ok_in(&d, &["search", "-f", &l, "-k", "CORP", "-q", "-S"]);
    assert!(plain.contains(" ¦ ") && !plain.contains('\t'), "{plain}");
    assert_eq!(tabbed, plain.replace(" ¦ ", "\t"));
    // log-metrics -S: a tab between the computers (and channels, providers).
    let plain = ok_in(&d, &["log-metrics", "-f", &l, "-q"]);
    let tabbed = ok_in(&d, &["log-metrics", "-f", &l, "-q", "-S"]);
    assert!(plain.contains("FS01.corp.example ¦WS-FIN-07"), "{plain}");
    assert!(tabbed.contains("FS01.corp.example\tWS-FIN-07"), "{tabbed}");
    // list-profiles -q and -K.
    let profiles = ok_in(&d, &["list-profiles"]);
    assert!(profiles.starts_with("minimal "));
    for flag in ["-q", "-K"] {
        assert_eq!(ok_in(&d, &["list-profiles", flag]), profiles, "{flag}");
    }
    std::fs::remove_dir_all(d).unwrap();
}

/// Writes `xml` (events as Event Viewer shows them) as `name`.evtx in `d`.
fn evtx(d: &Path, name: &str, xml: &str) -> PathBuf {
    let src = d.join(format!("{name}.xml"));
    let out = d.join(format!("{name}.evtx"));
    std::fs::write(&src, xml).unwrap();
    ok_in(
        d,
        &["evtx", "write", "--from", path(&src), "-o", path(&out)],
    );
    out
}

fn event(rid: u32, time: &str) -> String {
    format!(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event">
  <System><Provider Name="P"/><EventID>1</EventID><TimeCreated SystemTime="{time}"/>
  <EventRecordID>{rid}</EventRecordID><Channel>Application</Channel><Computer>HOST-T</Computer></System>
  <EventData><Data Name="Text">marker</Data></EventData>
</Event>
"#
    )
}

/// `-O` writes microseconds as Hayabusa 4.0 does (its event times carry six digits,
/// written with chrono's `%.f`: none for a whole second, 3 for a whole millisecond,
/// else 6), never the 100 ns of the FILETIME; `--RFC-2822` writes a day below 10
/// without padding.
#[test]
fn timestamps_as_hayabusa_writes_them() {
    let d = scratch("time-formats");
    let times = [
        "2021-08-07T10:00:00.1234567Z",
        "2021-08-07T10:00:01.5000000Z",
        "2021-08-07T10:00:02.0000000Z",
        "2021-08-07T10:00:03.0000009Z",
        "2021-08-17T10:00:04.0000019Z",
    ];
    let xml: String = times
        .iter()
        .enumerate()
        .map(|(i, t)| event(i as u32 + 1, t))
        .collect();
    let file = evtx(&d, "t", &format!("<Events>\n{xml}</Events>\n"));
    let stamps = |flag: &str| -> Vec<String> {
        let csv = ok_in(
            &d,
            &["search", "-f", path(&file), "-k", "marker", "-q", flag],
        );
        csv.lines()
            .skip(1)
            .map(|l| l.split("\",").next().unwrap().trim_matches('"').to_string())
            .collect()
    };
    assert_eq!(
        stamps("-O"),
        [
            "2021-08-07T10:00:00.123456Z",
            "2021-08-07T10:00:01.500Z",
            "2021-08-07T10:00:02Z",
            "2021-08-07T10:00:03Z",
            "2021-08-17T10:00:04.000001Z",
        ]
    );
    let rfc = stamps("--RFC-2822");
    assert_eq!(rfc[0], "Sat, 7 Aug 2021 10:00:00 +00:00");
    assert_eq!(rfc[4], "Tue, 17 Aug 2021 10:00:04 +00:00");
    std::fs::remove_dir_all(d).unwrap();
}

/// The demo timeline (EVTX and JSON events): every `-O` timestamp has 0, 3 or 6 digits.
#[test]
fn iso_timestamps_of_a_timeline_have_at_most_six_digits() {
    let out = command()
        .args(["csv-timeline", "-d", DEMO, "-q", "-O", "--builtin-rules"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let mut rows = 0;
    for line in csv.lines().skip(1) {
        let ts = line.split(',').next().unwrap().trim_matches('"');
        let frac = ts
            .strip_suffix('Z')
            .and_then(|t| t.split_once('.'))
            .map_or(0, |(_, f)| f.len());
        assert!([0, 3, 6].contains(&frac), "{ts}");
        rows += 1;
    }
    assert!(rows > 10, "{csv}");
}

const DEMO: &str = "testdata/demo";

/// The numbers of `rules: N rules in F files: E enabled, D disabled (…), R rejected`.
fn report_figures(err: &str) -> (usize, usize, usize, usize, usize) {
    let line = err
        .lines()
        .find(|l| l.starts_with("rules: ") && !l.starts_with("rules: using"))
        .unwrap_or_else(|| panic!("no load report in {err}"));
    let num = |after: &str| -> usize {
        let rest = &line[line
            .find(after)
            .unwrap_or_else(|| panic!("{after}: {line}"))
            + after.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let before = |word: &str| -> usize {
        let end = line.find(word).unwrap_or_else(|| panic!("{word}: {line}"));
        line[..end]
            .trim_end()
            .rsplit(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    (
        num("rules: "),
        before(if line.contains(" file:") {
            " file:"
        } else {
            " files:"
        }),
        before(" enabled"),
        before(" disabled"),
        before(" rejected"),
    )
}

/// The load report's figures add up: enabled, disabled and rejected rules make the
/// rules counted, which is `rules check`'s total; files are counted apart (a file may
/// hold a rule and its correlation).
#[test]
fn the_load_report_adds_up() {
    let d = scratch("load-report");
    let rules = d.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    let rule = |title: &str, id: u32, extra: &str| {
        format!("title: {title}\nid: 00000000-0000-4000-8000-{id:012}\nlevel: low\n{extra}logsource: {{product: windows, service: security}}\ndetection: {{sel: {{EventID: 4624}}, condition: sel}}\n")
    };
    std::fs::write(rules.join("a.yml"), rule("A", 1, "")).unwrap();
    std::fs::write(rules.join("b.yml"), rule("B", 2, "status: deprecated\n")).unwrap();
    // A rule and its correlation: two rules in one file.
    std::fs::write(
        rules.join("c.yml"),
        format!(
            "{}---\ntitle: C count\nid: 00000000-0000-4000-8000-000000000004\nlevel: high\ncorrelation: {{type: event_count, rules: [00000000-0000-4000-8000-000000000003], group-by: [Computer], timespan: 1h, condition: {{gte: 2}}}}\n",
            rule("C", 3, "")
        ),
    )
    .unwrap();
    // A file that is not YAML, and a rule whose condition names no selection.
    std::fs::write(rules.join("d.yml"), "title: [unclosed\n").unwrap();
    std::fs::write(
        rules.join("e.yml"),
        "title: E\nid: 00000000-0000-4000-8000-000000000005\nlogsource: {product: windows}\ndetection: {sel: {EventID: 1}, condition: nothere}\n",
    )
    .unwrap();
    let out = run_in(&d, &["rules", "check", "--no-rule-cache"]);
    let err = text(&out.stderr);
    let (total, files, enabled, disabled, rejected) = report_figures(&err);
    assert_eq!((total, files), (6, 5), "{err}");
    assert_eq!(enabled + disabled + rejected, total, "{err}");
    assert_eq!((enabled, disabled, rejected), (3, 1, 2), "{err}");
    assert_eq!(text(&out.stdout), "loaded 4 of 6 rules\n");
    // The timeline says the same.
    let out = run_in(&d, &["csv-timeline", "-f", &log(), "-N", "--no-rule-cache"]);
    assert_eq!(report_figures(&text(&out.stderr)), (6, 5, 3, 1, 2));
    // hayabusa-rules, when the shared data is there.
    let shared = root().join("../shared/rules/hayabusa-rules");
    if shared.is_dir() {
        let out = run_in(&d, &["rules", "check", "-r", path(&shared)]);
        let (total, _, enabled, disabled, rejected) = report_figures(&text(&out.stderr));
        assert_eq!(enabled + disabled + rejected, total);
        assert_eq!(
            text(&out.stdout),
            format!("loaded {} of {total} rules\n", total - rejected)
        );
    }
    std::fs::remove_dir_all(d).unwrap();
}

#[test]
fn one_of_a_thing_is_in_the_singular() {
    let d = scratch("singular");
    std::fs::write(d.join("r.yml"), FOLDER_RULE).unwrap();
    let logs = d.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::copy(root().join(LOG), logs.join("a.evtx")).unwrap();
    std::fs::write(logs.join("broken.evtx"), b"not an event log at all").unwrap();
    let r = d.join("r.yml");
    let out = run_in(&d, &["csv-timeline", "-d", path(&logs), "-r", path(&r)]);
    let err = text(&out.stderr);
    assert!(err.contains("rules: 1 rule in 1 file: 1 enabled"), "{err}");
    assert!(err.contains("Input errors: 1 in 1 file\n"), "{err}");
    assert!(
        !err.contains(" 1 files") && !err.contains(" 1 events"),
        "{err}"
    );
    let out = run_in(&d, &["csv-timeline", "-f", &log(), "-r", path(&r), "-N"]);
    let err = text(&out.stderr);
    assert!(err.contains("scanned 1 file, 3 records; "), "{err}");
    let out = run_in(&d, &["rules", "check", "-r", path(&r)]);
    assert_eq!(text(&out.stdout), "loaded 1 of 1 rule\n");
    std::fs::remove_dir_all(d).unwrap();
}

/// `--help` groups the options under Hayabusa's headings: `-d` and `-f` together under
/// Input, `--debug` with the profiling options at the end.
#[test]
fn help_groups_the_options_under_headings() {
    for cmd in ["csv-timeline", "eid-metrics", "search", "logon-summary"] {
        let help = text(
            &Command::new(env!("CARGO_BIN_EXE_scanner"))
                .args([cmd, "--help"])
                .output()
                .unwrap()
                .stdout,
        );
        let lines: Vec<&str> = help.lines().collect();
        let at = |p: &str| {
            lines
                .iter()
                .position(|l| l.trim_start().starts_with(p))
                .unwrap_or_else(|| panic!("{cmd}: no {p} in\n{help}"))
        };
        for heading in [
            "Input:",
            "General Options:",
            "Filtering:",
            "Output:",
            "Display Settings:",
            "Time Format:",
            "Debugging and Profiling:",
        ] {
            assert!(lines.contains(&heading), "{cmd}: no {heading} in\n{help}");
        }
        assert_eq!(
            at("-f, --file"),
            at("-d, --directory") + 1,
            "{cmd}:\n{help}"
        );
        assert!(at("-d, --directory") > at("Input:"), "{cmd}");
        assert!(at("--debug") > at("Debugging and Profiling:"), "{cmd}");
        assert!(at("-U, --UTC") > at("Time Format:"), "{cmd}");
        assert!(at("-o, --output") > at("Output:"), "{cmd}");
    }
}
