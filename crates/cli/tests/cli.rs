//! End-to-end tests of the `scanner` binary on the project's own testdata.

mod support;
use support::*;

#[cfg(unix)] // for the Unix-only test that runs sh
use std::process::Command;

#[test]
fn demo_timeline_has_the_verbose_columns_and_every_expected_row_sorted() {
    let dir = scratch("demo");
    let out = dir.join("out.csv");
    let o = scanner(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-p",
        "verbose",
        "-U",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", text(&o.stderr));
    let csv = std::fs::read_to_string(&out).expect("output written");
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some("\"Timestamp\",\"RuleTitle\",\"Level\",\"Computer\",\"Channel\",\"EventID\",\"MitreTactics\",\"MitreTags\",\"OtherTags\",\"RecordID\",\"Details\",\"ExtraFieldInfo\",\"RuleFile\",\"RuleID\",\"EvtxFile\"")
    );
    let rows: Vec<&str> = lines.collect();
    let expected = std::fs::read_to_string(root().join("testdata/demo/expected.tsv")).unwrap();
    let want = expected
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .count();
    assert_eq!(rows.len(), want);
    let stamps: Vec<&str> = rows.iter().map(|r| &r[1..31]).collect();
    assert!(
        stamps.windows(2).all(|w| w[0] <= w[1]),
        "rows sorted by time"
    );
    assert!(
        stamps[0].ends_with("+00:00"),
        "UTC timestamps: {}",
        stamps[0]
    );
    // Numbers unquoted, text quoted (Hayabusa's NonNumeric convention).
    assert!(
        rows[0].contains("\",1") || rows[0].contains("\",4") || rows[0].contains("\",7"),
        "{}",
        rows[0]
    );
    let summary = text(&o.stderr);
    assert!(
        summary.contains("detections:") && summary.contains("records/s"),
        "{summary}"
    );
    assert!(!std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().ends_with(".tmp")));
}

#[test]
fn output_is_not_overwritten_without_clobber() {
    let dir = scratch("clobber");
    let out = dir.join("out.csv");
    std::fs::write(&out, "keep me").unwrap();
    let o = scanner(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-o",
        out.to_str().unwrap(),
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("--clobber"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&out).unwrap(), "keep me");
    let o = scanner(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-o",
        out.to_str().unwrap(),
        "-q",
        "-C",
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert!(std::fs::read_to_string(&out)
        .unwrap()
        .starts_with("\"Timestamp\""));
}

#[test]
fn stdout_gets_the_timeline_without_output_file() {
    let o = scanner(&[
        "csv-timeline",
        "-J",
        "-f",
        "testdata/demo/attack.jsonl",
        "-p",
        "minimal",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let s = text(&o.stdout);
    assert!(s.starts_with("\"Timestamp\",\"RuleTitle\",\"Level\",\"Computer\",\"Channel\",\"EventID\",\"RecordID\",\"Details\"\n"));
    assert!(s.lines().count() > 10);
}

#[test]
fn bad_events_are_reported_and_the_rest_is_scanned() {
    let dir = scratch("badjson");
    let good = std::fs::read_to_string(root().join("testdata/demo/attack.jsonl")).unwrap();
    let mut mixed = String::from("{not json\n");
    mixed.push_str(&good);
    let f = dir.join("mixed.jsonl");
    std::fs::write(&f, mixed).unwrap();
    let o = scanner(&[
        "csv-timeline",
        "-J",
        "-f",
        f.to_str().unwrap(),
        "-p",
        "minimal",
    ]);
    assert_eq!(o.status.code(), Some(3), "finished with input errors");
    let err = text(&o.stderr);
    assert!(err.contains("mixed.jsonl: line 1: invalid JSON"), "{err}");
    let full = scanner(&[
        "csv-timeline",
        "-J",
        "-f",
        "testdata/demo/attack.jsonl",
        "-p",
        "minimal",
        "-q",
    ]);
    assert_eq!(
        text(&o.stdout).lines().count(),
        text(&full.stdout).lines().count()
    );
}

#[test]
fn rules_check_lists_each_rejected_rule_and_fails() {
    let dir = scratch("rules");
    std::fs::write(
        dir.join("good.yml"),
        "title: Good\nid: 11111111-1111-1111-1111-111111111111\nlevel: low\nlogsource: {product: windows}\ndetection:\n  sel:\n    EventID: 1\n  condition: sel\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("bad.yml"),
        "title: Bad\nid: 22222222-2222-2222-2222-222222222222\nlevel: low\nlogsource: {product: windows}\ndetection:\n  sel:\n    Image|sideways: x\n  condition: sel\n",
    )
    .unwrap();
    let o = scanner(&["rules", "check", "-r", dir.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(text(&o.stdout).trim(), "loaded 1 of 2 rules");
    let err = text(&o.stderr);
    assert!(
        err.contains("bad.yml") && err.contains("unknown modifier 'sideways'"),
        "{err}"
    );
}

#[test]
fn builtin_rules_all_load() {
    let o = scanner(&["rules", "check"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    let nums: Vec<&str> = out
        .split_whitespace()
        .filter(|w| w.parse::<u32>().is_ok())
        .collect();
    assert_eq!(nums.len(), 2, "{out}");
    assert_eq!(nums[0], nums[1], "{out}");
    assert!(nums[0].parse::<u32>().unwrap() >= 30);
}

#[test]
fn debug_prints_memory_statistics() {
    let o = scanner(&["--debug", "rules", "check"]);
    let err = text(&o.stderr);
    assert!(err.contains("peak RSS"), "{err}");
    #[cfg(feature = "mimalloc")]
    assert!(err.contains("mimalloc: peak committed"), "{err}");
}

/// A duration as `--debug` prints it (`0.123 s`, `1.50 ms`, `850.00 ns`), in seconds.
fn seconds(v: &str) -> f64 {
    let (x, unit) = v
        .trim()
        .split_once(' ')
        .unwrap_or_else(|| panic!("no unit: {v}"));
    let x: f64 = x.parse().unwrap_or_else(|_| panic!("not a number: {v}"));
    x * match unit {
        "s" => 1.0,
        "ms" => 1e-3,
        "µs" => 1e-6,
        "ns" => 1e-9,
        _ => panic!("unknown unit: {v}"),
    }
}

/// `name VALUE` items of a `--debug` line after its `prefix`, by name.
fn items(line: &str, prefix: &str) -> std::collections::HashMap<String, String> {
    line.strip_prefix(prefix)
        .unwrap_or_else(|| panic!("{line}"))
        .split(", ")
        .filter_map(|i| i.split_once(' '))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn debug_prints_phase_times_and_file_scan_percentiles() {
    let dir = scratch("phases");
    let out = dir.join("out.csv");
    let out = out.to_str().unwrap();
    let files = std::fs::read_dir(root().join("testdata/evtx"))
        .unwrap()
        .filter(|e| {
            let p = e.as_ref().unwrap().path();
            let ext = p.extension().and_then(|x| x.to_str()).unwrap_or("");
            ["evtx", "json", "jsonl", "xml"].contains(&ext)
        })
        .count();
    assert!(files >= 2, "testdata/evtx holds {files} input files");
    let started = std::time::Instant::now();
    let o = scanner(&[
        "--debug",
        "csv-timeline",
        "-d",
        "testdata/evtx",
        "-a",
        "-o",
        out,
    ]);
    let wall = started.elapsed().as_secs_f64();
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");

    let line = |p: &str| {
        err.lines()
            .find(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no line {p:?} in:\n{err}"))
    };
    let phases = items(line("phases: "), "phases: ");
    let mut total = 0.0;
    for name in ["load", "inputs", "scan", "write", "report"] {
        let v = seconds(
            phases
                .get(name)
                .unwrap_or_else(|| panic!("no {name}: {phases:?}")),
        );
        assert!(v >= 0.0, "{name} {v}");
        total += v;
    }
    assert!(seconds(&phases["scan"]) > 0.0, "{phases:?}");
    // The phases are parts of the run: together no longer than the process took.
    assert!(total <= wall, "phases {total} s, process {wall} s");

    let dist = line("file scan times: ");
    let (count, rest) = dist
        .strip_prefix("file scan times: ")
        .and_then(|r| r.split_once(" files, "))
        .unwrap_or_else(|| panic!("{dist}"));
    assert_eq!(count.parse::<usize>().unwrap(), files, "{dist}");
    let d = items(&format!("x: {rest}"), "x: ");
    let v = |k: &str| seconds(d.get(k).unwrap_or_else(|| panic!("no {k} in {dist}")));
    let (avg, max) = (v("avg"), v("max"));
    assert!(avg > 0.0 && avg <= max, "{dist}");
    assert!(
        v("TP90") <= v("TP95") && v("TP95") <= v("TP99") && v("TP99") <= max,
        "{dist}"
    );
    assert!(max <= seconds(&phases["scan"]), "{dist} / {phases:?}");

    // Without --debug, neither line.
    let o = scanner(&["csv-timeline", "-d", "testdata/evtx", "-a", "-o", out, "-C"]);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        !err.contains("phases: ") && !err.contains("file scan times"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn expand_placeholders_come_from_a_user_folder() {
    let dir = scratch("expand");
    std::fs::write(
        dir.join("tools.yml"),
        "title: Admin tool\nid: 33333333-3333-3333-3333-333333333333\nlevel: high\nlogsource: {product: windows}\ndetection:\n  sel:\n    CommandLine|contains|expand: '%admin_tools%'\n  condition: sel\n",
    )
    .unwrap();
    let values = dir.join("values");
    std::fs::create_dir_all(&values).unwrap();
    std::fs::write(
        values.join("admin_tools.txt"),
        "# our tools\npsexec\nadfind\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("events.jsonl"),
        "{\"Event\":{\"System\":{\"EventID\":1,\"Channel\":\"X\",\"EventRecordID\":7,\"TimeCreated_attributes\":{\"SystemTime\":\"2024-03-12T09:14:02Z\"}},\"EventData\":{\"CommandLine\":\"AdFind.exe -f objectcategory=computer\"}}}\n",
    )
    .unwrap();
    let rules = dir.join("tools.yml");
    let events = dir.join("events.jsonl");
    let without = scanner(&["rules", "check", "-r", rules.to_str().unwrap()]);
    let err = text(&without.stderr);
    assert!(
        err.contains("rule disabled") && err.contains("%admin_tools%"),
        "{err}"
    );
    let with = scanner(&[
        "csv-timeline",
        "-J",
        "-f",
        events.to_str().unwrap(),
        "-r",
        rules.to_str().unwrap(),
        "--expand-dir",
        values.to_str().unwrap(),
        "-p",
        "minimal",
        "-q",
    ]);
    assert_eq!(with.status.code(), Some(0), "{}", text(&with.stderr));
    let out = text(&with.stdout);
    assert_eq!(out.lines().count(), 2, "{out}");
    assert!(out.contains("Admin tool"), "{out}");
}

/// (RecordID, RuleID) pairs of a verbose timeline.
fn detections(csv: &str) -> std::collections::BTreeSet<(String, String)> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let rec = header
        .iter()
        .position(|h| *h == "\"RecordID\"")
        .expect("RecordID column");
    let rule = header
        .iter()
        .position(|h| *h == "\"RuleID\"")
        .expect("RuleID column");
    lines
        .map(|l| {
            // Verbose rows here have no commas inside quoted cells before RuleID's position
            // except in Details; split from both ends instead.
            let cells: Vec<&str> = l.split(',').collect();
            let from_end = header.len() - rule;
            let rid = cells[cells.len() - from_end].trim_matches('"').to_string();
            (cells[rec].trim_matches('"').to_string(), rid)
        })
        .collect()
}

#[test]
fn generated_log_gives_exactly_its_ground_truth() {
    let dir = scratch("generate");
    let evtx = dir.join("gen.evtx");
    let o = scanner(&[
        "evtx",
        "generate",
        "--records",
        "6000",
        "--seed",
        "11",
        "-o",
        evtx.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let truth =
        std::fs::read_to_string(dir.join("gen.evtx.truth.tsv")).expect("ground truth written");
    let want: std::collections::BTreeSet<(String, String)> = truth
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (a, b) = l.split_once('\t').expect("tab");
            (a.to_string(), b.to_string())
        })
        .collect();
    assert!(want.len() > 10, "planted detections: {}", want.len());
    let out = dir.join("gen.csv");
    let o = scanner(&[
        "csv-timeline",
        "-f",
        evtx.to_str().unwrap(),
        "-p",
        "standard",
        "-U",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let got = detections(&std::fs::read_to_string(&out).unwrap());
    let missing: Vec<_> = want.difference(&got).collect();
    let extra: Vec<_> = got.difference(&want).collect();
    assert!(
        missing.is_empty() && extra.is_empty(),
        "missing {missing:?}\nextra {extra:?}"
    );
    // The same seed gives the same file.
    let again = dir.join("again.evtx");
    scanner(&[
        "evtx",
        "generate",
        "--records",
        "6000",
        "--seed",
        "11",
        "-o",
        again.to_str().unwrap(),
    ]);
    assert_eq!(
        std::fs::read(&evtx).unwrap(),
        std::fs::read(&again).unwrap()
    );
}

#[test]
fn demo_events_written_as_evtx_give_the_same_detections() {
    let dir = scratch("write");
    let evtx = dir.join("demo.evtx");
    let o = scanner(&[
        "evtx",
        "write",
        "--from",
        "testdata/demo/attack.jsonl",
        "-o",
        evtx.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let from_evtx = scanner(&[
        "csv-timeline",
        "-f",
        evtx.to_str().unwrap(),
        "-p",
        "standard",
        "-U",
        "-q",
    ]);
    let from_json = scanner(&[
        "csv-timeline",
        "-J",
        "-f",
        "testdata/demo/attack.jsonl",
        "-p",
        "standard",
        "-U",
        "-q",
    ]);
    assert_eq!(
        from_evtx.status.code(),
        Some(0),
        "{}",
        text(&from_evtx.stderr)
    );
    let a = detections(&text(&from_evtx.stdout));
    assert_eq!(a, detections(&text(&from_json.stdout)));
    assert!(a.len() >= 60, "{}", a.len());
    // Refuses to overwrite.
    let again = scanner(&[
        "evtx",
        "write",
        "--from",
        "testdata/demo/attack.jsonl",
        "-o",
        evtx.to_str().unwrap(),
    ]);
    assert_eq!(again.status.code(), Some(1));
}

#[test]
fn committed_evtx_fixtures_scan_end_to_end() {
    let o = scanner(&[
        "csv-timeline",
        "-d",
        "testdata/evtx",
        "-p",
        "standard",
        "-U",
        "-q",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    for title in [
        "Successful RDP Logon",
        "PowerShell Started With an Encoded Command (Security Log)",
        "Security Event Log Cleared",
    ] {
        assert!(out.contains(title), "{title} missing from:\n{out}");
    }
    assert!(out.contains("\"Security Event Log Cleared\",\"high\",\"FS01.corp.example\",\"Sec\",1102,184202,\"User: Administrator ¦ Domain: CORP"), "{out}");
}

/// A write that fails part way (here a file-size limit standing in for a full disk) stops
/// the run with a clear error and a non-zero exit, and leaves no file behind: neither the
/// timeline nor its temporary file.
#[cfg(unix)] // sh's ulimit -f and /dev/full stand in for a full disk
#[test]
fn write_errors_fail_the_run_and_leave_no_partial_file() {
    let dir = scratch("diskfull");
    let out = dir.join("out.csv");
    let bin = env!("CARGO_BIN_EXE_scanner");
    let script = format!(
        "trap '' XFSZ; ulimit -f 1; exec '{bin}' csv-timeline -J -d testdata/demo -p verbose -o '{}'",
        out.display()
    );
    let o = Command::new("sh")
        .arg("-c")
        .arg(&script)
        .current_dir(root())
        .output()
        .expect("sh");
    assert_eq!(o.status.code(), Some(1), "stderr: {}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains("cannot write") && err.contains("out.csv"),
        "{err}"
    );
    let left: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    // Standard output that cannot be written is an error too.
    let o = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec '{bin}' csv-timeline -J -d testdata/demo -q > /dev/full"
        ))
        .current_dir(root())
        .output()
        .expect("sh");
    assert_eq!(o.status.code(), Some(1), "stderr: {}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("cannot write to standard output"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn bad_inputs_are_named_and_the_scan_goes_on() {
    let d = scratch("bad-inputs");
    let good = root().join("testdata/evtx/security.evtx");
    std::fs::copy(&good, d.join("good.evtx")).unwrap();
    std::fs::create_dir_all(d.join("folder.evtx")).unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    std::fs::write(d.join("text.evtx"), "hello, not a log\n").unwrap();
    std::fs::write(d.join("empty.evtx"), "").unwrap();
    std::fs::write(
        d.join("sub/half.evtx"),
        &std::fs::read(&good).unwrap()[..2000],
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::symlink;
        symlink("loop2.evtx", d.join("loop1.evtx")).unwrap();
        symlink("loop1.evtx", d.join("loop2.evtx")).unwrap();
        symlink("missing.evtx", d.join("dangling.evtx")).unwrap();
        // A folder symlink back up: not followed, so no loop.
        symlink("..", d.join("sub/up")).unwrap();
    }
    let ds = d.to_str().unwrap();
    let folder = d.join("folder.evtx");
    let missing = d.join("nothing-here.evtx");
    let out = scanner(&[
        "csv-timeline",
        "-d",
        ds,
        "-f",
        folder.to_str().unwrap(),
        "-f",
        missing.to_str().unwrap(),
        "-d",
        good.to_str().unwrap(),
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    let expect = [
        ("folder.evtx", "a folder, not a file"),
        ("nothing-here.evtx", "cannot open"),
        ("security.evtx", "not a folder"),
        ("text.evtx", "not an EVTX file"),
        ("empty.evtx", "empty file"),
        ("half.evtx", "not a readable EVTX file"),
    ];
    for (name, why) in expect {
        assert!(
            err.lines().any(|l| l.contains(name) && l.contains(why)),
            "no error for {name} ({why}):\n{err}"
        );
    }
    #[cfg(unix)]
    for name in ["loop1.evtx", "loop2.evtx", "dangling.evtx"] {
        assert!(
            err.lines()
                .any(|l| l.contains(name) && l.contains("cannot open")),
            "{name}:\n{err}"
        );
    }
    // The good file was scanned all the same.
    assert!(
        text(&out.stdout).contains("Security Event Log Cleared"),
        "{err}"
    );
}

#[test]
fn recover_records_appends_the_recovered_record_column() {
    let out = scanner(&[
        "csv-timeline",
        "-f",
        "testdata/evtx/security.evtx",
        "-x",
        "-q",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    let csv = text(&out.stdout);
    let mut lines = csv.lines();
    assert!(lines
        .next()
        .unwrap()
        .ends_with(r#""RuleID","RecoveredRecord""#));
    // Live records: the column is empty.
    assert!(lines.all(|l| l.ends_with(r#","""#)), "{csv}");
    let plain = text(&scanner(&["csv-timeline", "-f", "testdata/evtx/security.evtx", "-q"]).stdout);
    assert!(!plain.contains("RecoveredRecord"));
}

#[test]
fn an_event_id_that_is_not_a_number_is_refused() {
    for flag in ["--include-eid", "--exclude-eid"] {
        let out = scanner(&[
            "csv-timeline",
            "-f",
            "testdata/evtx/security.evtx",
            "-q",
            flag,
            "4624,46x4",
        ]);
        assert_eq!(out.status.code(), Some(1), "{flag}");
        assert!(
            text(&out.stderr).contains(&format!(
                "{flag}: '46x4' is not an EventID (a number from 0 to 65535)"
            )),
            "{}",
            text(&out.stderr)
        );
        assert!(out.stdout.is_empty(), "{flag}: nothing scanned");
    }
    let out = scanner(&[
        "csv-timeline",
        "-f",
        "testdata/evtx/security.evtx",
        "-q",
        "--include-eid",
        " 4624 ,4625",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
}

#[test]
fn a_home_that_does_not_exist_is_not_made() {
    let home = std::env::temp_dir().join(format!("scanner-no-home-{}", std::process::id()));
    let out = command()
        // Rules from a folder: the run would keep a rule cache under HOME.
        .args([
            "csv-timeline",
            "-f",
            "testdata/evtx/security.evtx",
            "-r",
            "rules",
            "-q",
        ])
        .env("HOME", &home)
        .env_remove("XDG_CACHE_HOME")
        .env_remove("XDG_DATA_HOME")
        .env_remove("XDG_CONFIG_HOME")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    assert!(!home.exists(), "{} was made", home.display());
}
