//! `--sort-memory`: with a bound small enough that every batch of detections is spilled
//! to disk as a sorted run and merged back, the timeline, the JSON timeline, the summary,
//! `-T` and `-H` are byte for byte those of a scan sorted in memory; the runs' temporary
//! files are gone after the run, and a run that cannot be written is a fatal error that
//! leaves no output behind.

mod support;
use support::*;

use std::path::Path;

/// Standard error without the lines that hold timings (the scan's, the rules', the
/// timeline write's, the phases' and the files'), the spill report or the memory
/// statistics (`--debug`, at the end).
fn steady(stderr: &[u8]) -> String {
    let t = text(stderr);
    let end = ["\nsubproc ", "\nmimalloc: ", "\nallocator: ", "\npeak RSS"]
        .iter()
        .filter_map(|m| t.find(m))
        .min()
        .unwrap_or(t.len());
    t[..end]
        .lines()
        .filter(|l| {
            !l.starts_with("Scan: ")
                && !l.starts_with("rules loaded in")
                && !l.starts_with("sort: ")
                && !l.starts_with("write: ")
                && !l.starts_with("phases: ")
                && !l.starts_with("file scan times: ")
                && !l.starts_with("load phase: ")
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The run's spill report (`--debug`): how many runs were spilled.
fn runs_spilled(stderr: &[u8]) -> usize {
    let t = text(stderr);
    let line = t
        .lines()
        .find(|l| l.starts_with("sort: "))
        .unwrap_or_else(|| panic!("no spill report in:\n{t}"));
    line.split("; ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("bad spill report: {line}"))
}

/// One scan with the given bound: (stdout, stderr without timings, HTML report without
/// its command line, runs spilled).
fn run(tmp: &Path, out: &Path, memory: &str, args: &[&str]) -> (Vec<u8>, String, String, usize) {
    let html = out.join(format!("report-{memory}.html"));
    let mut all = args.to_vec();
    let html_arg = html.display().to_string();
    all.extend_from_slice(&["--sort-memory", memory, "--debug", "-K", "-C", "-T", "-H"]);
    all.push(&html_arg);
    let o = scanner_in(tmp, &all);
    assert_eq!(o.status.code(), Some(0), "{all:?}: {}", text(&o.stderr));
    let page = std::fs::read_to_string(&html).expect("report");
    let page = match (page.find("<code>"), page.find("</code>")) {
        (Some(a), Some(b)) => format!("{}{}", &page[..a], &page[b..]),
        _ => page,
    };
    // The overview's start and elapsed times differ from run to run.
    let page = ["<tr><th>Start time</th>", "<tr><th>Elapsed time</th>"]
        .iter()
        .fold(page, |p, row| match p.find(row) {
            Some(a) => match p[a..].find("</tr>") {
                Some(len) => format!("{}{}", &p[..a], &p[a + len + 5..]),
                None => p,
            },
            None => p,
        });
    (o.stdout, steady(&o.stderr), page, runs_spilled(&o.stderr))
}

fn same_spilled_or_not(name: &str, args: &[&str]) -> Vec<u8> {
    let tmp = scratch(&format!("{name}-tmp"));
    let out = scratch(&format!("{name}-out"));
    let (csv, summary, page, runs) = run(&tmp, &out, "512", args);
    assert_eq!(
        runs, 0,
        "{args:?}: the default bound holds the fixtures in memory"
    );
    assert!(summary.contains("Results Summary"), "{summary}");
    assert!(
        summary.contains("Detection frequency timeline"),
        "{summary}"
    );
    for memory in ["0", "0.002"] {
        let (csv2, summary2, page2, runs2) = run(&tmp, &out, memory, args);
        assert!(runs2 > 1, "{args:?} --sort-memory {memory}: {runs2} runs");
        assert!(
            csv == csv2,
            "{args:?} --sort-memory {memory}: timelines differ"
        );
        assert_eq!(summary, summary2, "{args:?} --sort-memory {memory}");
        assert!(
            page == page2,
            "{args:?} --sort-memory {memory}: reports differ"
        );
        assert_eq!(names_in(&tmp), Vec::<String>::new(), "temporary files left");
    }
    let _ = std::fs::remove_dir_all(&tmp);
    let _ = std::fs::remove_dir_all(&out);
    csv
}

#[test]
fn spilled_csv_and_summary_equal_the_in_memory_ones() {
    let _ = same_spilled_or_not(
        "csv-demo",
        &[
            "csv-timeline",
            "-J",
            "-d",
            "testdata/demo",
            "-p",
            "super-verbose",
        ],
    );
    let _ = same_spilled_or_not(
        "csv-evtx",
        &[
            "csv-timeline",
            "-d",
            "testdata/evtx",
            "-p",
            "all-field-info-verbose",
            "-M",
        ],
    );
    // -X drops duplicates (here: every row of a second copy of the input) from the
    // merged stream as it did from the rows sorted in memory.
    let twice = scratch("twice");
    for n in ["a.jsonl", "b.jsonl"] {
        std::fs::copy(root().join("testdata/demo/attack.jsonl"), twice.join(n)).unwrap();
    }
    let d = twice.display().to_string();
    let all = same_spilled_or_not("csv-both", &["csv-timeline", "-J", "-d", &d]);
    let kept = same_spilled_or_not("csv-dedup", &["csv-timeline", "-J", "-d", &d, "-X"]);
    let lines = |b: &[u8]| b.iter().filter(|&&c| c == b'\n').count();
    assert_eq!(lines(&all) - 1, 2 * (lines(&kept) - 1));
    let _ = std::fs::remove_dir_all(&twice);
}

#[test]
fn spilled_json_equals_the_in_memory_one() {
    let _ = same_spilled_or_not(
        "json",
        &[
            "json-timeline",
            "-J",
            "-d",
            "testdata/demo",
            "-p",
            "verbose",
        ],
    );
    let _ = same_spilled_or_not(
        "jsonl",
        &[
            "json-timeline",
            "-d",
            "testdata/evtx",
            "-L",
            "-p",
            "all-field-info",
            "-x",
        ],
    );
}

/// Spilling into a folder that cannot hold files is fatal: exit 1, the error names the
/// folder, and neither the timeline nor its temporary file is left.
#[test]
fn a_spill_that_cannot_be_written_fails_the_run_and_writes_nothing() {
    let out = scratch("unwritable");
    let tmp = out.join("no-such-folder");
    let target = out.join("timeline.csv");
    let o = scanner_in(
        &tmp,
        &[
            "csv-timeline",
            "-J",
            "-d",
            "testdata/demo",
            "--sort-memory",
            "0",
            "-o",
            &target.display().to_string(),
        ],
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(
        err.contains(&tmp.display().to_string()) && err.contains("sorted detections"),
        "{err}"
    );
    assert_eq!(names_in(&out), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&out);
}

#[test]
fn a_bad_bound_is_refused() {
    let tmp = scratch("bad-bound");
    for bad in ["-1", "NaN", "lots"] {
        let o = scanner_in(
            &tmp,
            &[
                "csv-timeline",
                "-J",
                "-d",
                "testdata/demo",
                "-q",
                "--sort-memory",
                bad,
            ],
        );
        assert_ne!(o.status.code(), Some(0), "--sort-memory {bad}");
        assert!(o.stdout.is_empty());
    }
    let _ = std::fs::remove_dir_all(&tmp);
}

/// Correlations over a generated log: an event count of one user's logons on one
/// computer (only feeding a chained count of its bursts), a value count of the users
/// starting processes on one computer, and a temporal pair of both.
const CORRELATIONS: &str = "title: Logon
id: 5f0d6a4e-0c1b-4f7e-9a59-6a1d2b9b0a01
name: gen_logon
status: test
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4624}, condition: sel}
level: low
---
title: Process created
id: 5f0d6a4e-0c1b-4f7e-9a59-6a1d2b9b0a02
name: gen_process
status: test
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4688}, condition: sel}
level: low
---
title: Many logons of one user on one computer
id: 5f0d6a4e-0c1b-4f7e-9a59-6a1d2b9b0a03
name: gen_many_logons
status: test
correlation: {type: event_count, rules: gen_logon, group-by: [Computer, TargetUserName], timespan: 10m, condition: {gte: 3}}
level: medium
---
title: Processes by many users on one computer
id: 5f0d6a4e-0c1b-4f7e-9a59-6a1d2b9b0a04
status: test
correlation: {type: value_count, rules: gen_process, group-by: [Computer], timespan: 5m, condition: {gte: 2, field: SubjectUserName}}
level: medium
---
title: Logon and process on one computer
id: 5f0d6a4e-0c1b-4f7e-9a59-6a1d2b9b0a05
status: test
correlation: {type: temporal, rules: [gen_logon, gen_process], group-by: [Computer], timespan: 2m}
level: medium
---
title: Repeated logon bursts
id: 5f0d6a4e-0c1b-4f7e-9a59-6a1d2b9b0a06
status: test
correlation: {type: event_count, rules: gen_many_logons, group-by: [Computer, TargetUserName], timespan: 1d, condition: {gte: 2}}
level: high
";

/// The runs of correlation events the run spilled (`--debug`).
fn correlation_runs(stderr: &[u8]) -> usize {
    let t = text(stderr);
    let line = t
        .lines()
        .find(|l| l.starts_with("sort: "))
        .unwrap_or_else(|| panic!("no spill report in:\n{t}"));
    line.rsplit("; ")
        .next()
        .and_then(|s| s.strip_suffix(" runs of correlation events"))
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("bad spill report: {line}"))
}

#[test]
fn spilled_correlation_events_give_the_in_memory_timeline() {
    let dir = scratch("corr-spill");
    let tmp = scratch("corr-spill-tmp");
    let evtx = dir.join("gen.evtx");
    let o = scanner(&[
        "evtx",
        "generate",
        "--records",
        "3000",
        "--seed",
        "7",
        "-o",
        evtx.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let rules = dir.join("correlations.yml");
    std::fs::write(&rules, CORRELATIONS).unwrap();
    let run = |memory: &str| {
        let out = dir.join(format!("t-{memory}.csv"));
        let args = [
            "csv-timeline",
            "-a",
            "-f",
            evtx.to_str().unwrap(),
            "-r",
            rules.to_str().unwrap(),
            "-U",
            "-K",
            "-C",
            "--debug",
            "--sort-memory",
            memory,
            "-o",
            out.to_str().unwrap(),
        ];
        let o = scanner_in(&tmp, &args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
        assert_eq!(names_in(&tmp), Vec::<String>::new(), "temporary files left");
        (std::fs::read(&out).unwrap(), correlation_runs(&o.stderr))
    };
    let (csv, runs) = run("512");
    assert_eq!(runs, 0, "the default bound holds the events in memory");
    let t = text(&csv);
    for title in [
        "Processes by many users on one computer",
        "Logon and process on one computer",
        "Repeated logon bursts",
    ] {
        assert!(t.contains(title), "{title} fires:\n{t}");
    }
    let (spilled, runs) = run("0");
    assert!(runs > 1, "{runs} runs of correlation events");
    assert!(csv == spilled, "timelines differ");
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&tmp);
}
