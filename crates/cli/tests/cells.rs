//! Evidence and rule text written where an analyst opens it (issue 20): CSV cells a
//! spreadsheet would run as formulas (`--excel-safe`, and the count when it is off),
//! `--rule-stats` TSV rows that a tab or newline in a rule title must not split,
//! control characters of rule titles and file names shown escaped on the terminal, and
//! hostile values escaped in the HTML report and the JSON timelines.

mod support;
use support::*;

use std::path::{Path, PathBuf};

/// Writes the demo events to `dir/attack.jsonl` with every Computer name replaced by
/// `computer`, given as the body of a JSON string (escapes allowed).
fn demo_with_computer(dir: &Path, computer: &str) -> PathBuf {
    let demo = std::fs::read_to_string(root().join("testdata/demo/attack.jsonl")).unwrap();
    let events = demo.replace("\"Computer\": \"WS-FIN-07.corp.example\"", &{
        format!("\"Computer\": \"{computer}\"")
    });
    assert_ne!(events, demo);
    let path = dir.join("attack.jsonl");
    std::fs::write(&path, events).unwrap();
    path
}

/// Writes a rule folder `dir/rules` holding `file`: one rule titled `title` (the body of
/// a YAML double-quoted string, escapes allowed) that matches the demo's logons.
fn rule_titled(dir: &Path, file: &str, title: &str) -> PathBuf {
    let rules = dir.join("rules");
    std::fs::create_dir_all(&rules).unwrap();
    let rule = format!(
        "title: \"{title}\"
id: 00000000-0000-0000-0000-0000000000c1
level: high
logsource: {{product: windows, service: security}}
detection: {{sel: {{EventID: 4624}}, condition: sel}}
"
    );
    std::fs::write(rules.join(file), rule).unwrap();
    rules
}

/// The records of a CSV file, header first.
fn csv_records(path: &Path) -> Vec<Vec<String>> {
    csv::ReaderBuilder::new()
        .has_headers(false)
        .from_path(path)
        .unwrap()
        .records()
        .map(|r| r.unwrap().iter().map(str::to_string).collect())
        .collect()
}

/// The cells of column `name` in `records` (header first), header left out.
fn column<'r>(records: &'r [Vec<String>], name: &str) -> Vec<&'r str> {
    let at = records[0].iter().position(|h| h == name).expect(name);
    records[1..].iter().map(|r| r[at].as_str()).collect()
}

const COUNT_LINE: &str = "CSV cells begin with a formula character";

#[test]
fn excel_safe_writes_formula_cells_as_text_and_keeps_dashes_numbers_and_whitespace() {
    let d = scratch("cells-excel");
    // A DDE payload in a Computer name, a title whose formula follows a space, a rule
    // file name that is a formula too.
    let events = demo_with_computer(&d, "=cmd|' /C calc'!A0");
    let rules = rule_titled(&d, "-1+1.yml", " @SUM(1,1)");
    let (events, rules) = (events.to_str().unwrap(), rules.to_str().unwrap());
    let out = d.join("t.csv");
    let run = |extra: &[&str]| {
        let mut args = vec![
            "csv-timeline",
            "-J",
            "-f",
            events,
            "-r",
            rules,
            "-p",
            "super-verbose",
            "-U",
            "-K",
            "-C",
            "-o",
            out.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let o = scanner_utc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        (text(&o.stderr), csv_records(&out))
    };

    let (err, plain) = run(&[]);
    let rows = plain.len() - 1;
    assert_eq!(rows, 6, "the demo's logons");
    let computers = column(&plain, "Computer");
    assert_eq!(
        computers
            .iter()
            .filter(|c| **c == "=cmd|' /C calc'!A0")
            .count(),
        2
    );
    // Each row's title and rule file, and the two planted computers.
    let line = format!("{} {COUNT_LINE}", 2 * rows + 2);
    assert!(err.contains(&line) && err.contains("--excel-safe"), "{err}");
    assert_eq!(err.lines().filter(|l| l.contains(COUNT_LINE)).count(), 1);

    let (err, safe) = run(&["--excel-safe"]);
    assert!(!err.contains(COUNT_LINE), "{err}");
    let computers = column(&safe, "Computer");
    assert!(computers.contains(&"'=cmd|' /C calc'!A0"), "{computers:?}");
    assert!(column(&safe, "RuleTitle")
        .iter()
        .all(|t| *t == "' @SUM(1,1)"));
    assert!(column(&safe, "RuleFile").iter().all(|t| *t == "'-1+1.yml"));
    // Only the formula cells changed: Hayabusa's `-` and the numbers are as they were.
    let mut changed = 0;
    for (a, b) in plain.iter().zip(&safe).skip(1) {
        for (x, y) in a.iter().zip(b) {
            if x != y {
                assert_eq!(*y, format!("'{x}"));
                changed += 1;
            }
        }
    }
    assert_eq!(changed, 2 * rows + 2);
    assert!(column(&safe, "RecordID")
        .iter()
        .all(|n| n.parse::<u64>().is_ok()));
    let raw = std::fs::read_to_string(&out).unwrap();
    assert!(raw.contains(",\"-\","), "dashes are kept");
    for cell in safe.iter().flatten() {
        let start = cell.trim_start();
        assert!(
            !start.starts_with(['=', '+', '@']) && (!start.starts_with('-') || start == "-"),
            "{cell:?}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_computer_name_with_a_leading_tab_never_becomes_a_live_formula() {
    let d = scratch("cells-tab");
    let events = demo_with_computer(&d, "\\t=1+1");
    let out = d.join("t.csv");
    let args = |safe: bool| {
        let mut a = vec![
            "csv-timeline",
            "-J",
            "-f",
            events.to_str().unwrap(),
            "-U",
            "-K",
            "-C",
            "-o",
            out.to_str().unwrap(),
        ];
        if safe {
            a.push("--excel-safe");
        }
        a
    };
    let o = scanner_utc(&args(false));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The record view trims values (as Hayabusa shows them), so the cell is `=1+1`:
    // counted, and named on standard error.
    assert!(text(&o.stderr).contains(COUNT_LINE), "{}", text(&o.stderr));
    let o = scanner_utc(&args(true));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let records = csv_records(&out);
    let planted: Vec<&str> = column(&records, "Computer")
        .into_iter()
        .filter(|c| c.contains("=1+1"))
        .collect();
    assert!(!planted.is_empty());
    for c in planted {
        assert!(c.starts_with('\''), "{c:?}");
        assert_eq!(
            c[1..].trim_start(),
            "=1+1",
            "whitespace, if any, kept after the quote"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn rule_stats_rows_never_split_on_a_tab_or_newline_in_a_title() {
    let d = scratch("cells-tsv");
    let rules = rule_titled(&d, "stats.yml", "=a\\tb\\nc\\\\d");
    let tsv = d.join("stats.tsv");
    for (safe, title) in [(false, "=a\\tb\\nc\\\\d"), (true, "'=a\\tb\\nc\\\\d")] {
        let mut args = vec![
            "csv-timeline",
            "-J",
            "-d",
            "testdata/demo",
            "-r",
            rules.to_str().unwrap(),
            "-q",
            "-C",
            "-o",
            discard(),
            "--rule-stats",
            tsv.to_str().unwrap(),
        ];
        if safe {
            args.push("--excel-safe");
        }
        let o = scanner_utc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let written = std::fs::read_to_string(&tsv).unwrap();
        let lines: Vec<&str> = written.lines().collect();
        assert_eq!(lines.len(), 2, "{written:?}");
        let cells: Vec<&str> = lines[1].split('\t').collect();
        assert_eq!(cells.len(), 10, "{written:?}");
        assert_eq!(cells[1], title);
        assert_eq!(cells[2], "stats.yml");
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A title with an ESC sequence (clear screen), an OSC title and BEL, a C1 CSI and a
/// newline that would forge a summary line.
const HOSTILE_TITLE_YAML: &str = "x\\e[2J\\e]0;owned\\a\\x9b31m\\nResults Summary: clean";
const HOSTILE_TITLE_SHOWN: &str =
    "x\\x1b[2J\\x1b]0;owned\\x07\\u{9b}31m\\x0aResults Summary: clean";

/// Asserts `err` holds no raw control character (newlines aside) and no forged line.
fn assert_no_raw_controls(err: &str) {
    assert!(
        !err.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\t'),
        "{err:?}"
    );
    assert!(
        !err.lines().any(|l| l.starts_with("Results Summary: clean")),
        "a forged line: {err}"
    );
}

#[test]
fn rule_titles_and_file_names_reach_the_terminal_escaped() {
    let d = scratch("cells-terminal");
    let rules = rule_titled(&d, "ok.yml", HOSTILE_TITLE_YAML);
    // The summary's top alerts name the rule.
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-r",
        rules.to_str().unwrap(),
        "-K",
        "-T",
        "-C",
        "-o",
        discard(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert_no_raw_controls(&err);
    assert!(err.contains(HOSTILE_TITLE_SHOWN), "{err}");
    assert!(
        err.contains("Detection frequency timeline"),
        "-T drawn: {err}"
    );

    // File names with control characters and newlines: Unix only (Windows refuses them).
    #[cfg(unix)]
    {
        // `rules check` names a rule file that does not load.
        std::fs::write(rules.join("bad\x1b[2J\x07\nname.yml"), "title: [unclosed\n").unwrap();
        let o = scanner_utc(&["rules", "check", "-r", rules.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
        let err = text(&o.stderr);
        assert_no_raw_controls(&err);
        assert!(err.contains("bad\\x1b[2J\\x07\\x0aname.yml"), "{err}");

        // `evtx write` names its output.
        let out = d.join("out\x1b]0;t\x07\nResults Summary: clean.evtx");
        let o = scanner_utc(&[
            "evtx",
            "write",
            "--from",
            "testdata/demo/attack.jsonl",
            "-o",
            out.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let err = text(&o.stderr);
        assert_no_raw_controls(&err);
        assert!(
            err.contains("out\\x1b]0;t\\x07\\x0aResults Summary: clean.evtx"),
            "{err}"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A value that is code in HTML, breaks out of a script, holds quotes, control
/// characters and U+2028 (a line break for JavaScript).
const HOSTILE_JSON: &str =
    "WS</script><img src=x onerror=alert(1)>\\\"q'\\u001b[2J\\u0007\\u2028<script>alert(2)</script>x";
const HOSTILE: &str =
    "WS</script><img src=x onerror=alert(1)>\"q'\u{1b}[2J\u{7}\u{2028}<script>alert(2)</script>x";
const HOSTILE_TITLE: &str = "</script><svg onload=alert(3)>\\\"t'\\e\\u2028";

#[test]
fn html_report_and_json_timelines_escape_hostile_values() {
    let d = scratch("cells-html-json");
    let events = demo_with_computer(&d, HOSTILE_JSON);
    let rules = rule_titled(&d, "t.yml", HOSTILE_TITLE);
    let (events, rules) = (events.to_str().unwrap(), rules.to_str().unwrap());

    // The HTML report: the planted values only as text.
    let page_path = d.join("report.html");
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-f",
        events,
        "-r",
        rules,
        "-q",
        "-C",
        "-o",
        discard(),
        "-H",
        page_path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let page = std::fs::read_to_string(&page_path).unwrap();
    assert!(
        page.contains("WS&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;&quot;q&#39;"),
        "the computer, escaped"
    );
    assert!(page.contains("&lt;/script&gt;&lt;svg onload=alert(3)&gt;&quot;t&#39;"));
    for raw in ["<img", "<svg onload", "alert(1)>", "<script>alert(2)"] {
        assert!(!page.contains(raw), "{raw} in the page");
    }
    // The page's own scripts only: as many as in a report of the plain demo.
    let plain_path = d.join("plain.html");
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-q",
        "-C",
        "-o",
        discard(),
        "-H",
        plain_path.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let plain = std::fs::read_to_string(&plain_path).unwrap();
    let scripts = |p: &str| p.matches("<script").count();
    let closes = |p: &str| p.matches("</script").count();
    assert!(scripts(&plain) >= 1);
    assert_eq!(scripts(&page), scripts(&plain));
    assert_eq!(closes(&page), closes(&plain));

    // JSON Lines and the stream of objects: every object parses, and the values come back.
    let title = "</script><svg onload=alert(3)>\"t'\u{1b}\u{2028}";
    for (jsonl, name) in [(true, "t.jsonl"), (false, "t.json")] {
        let out = d.join(name);
        let mut args = vec![
            "json-timeline",
            "-J",
            "-f",
            events,
            "-r",
            rules,
            "-q",
            "-C",
            "-o",
            out.to_str().unwrap(),
        ];
        if jsonl {
            args.push("-L");
        }
        let o = scanner_utc(&args);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let written = std::fs::read_to_string(&out).unwrap();
        assert!(!written.contains('\u{1b}') && !written.contains('\u{7}'));
        let rows: Vec<serde_json::Value> = if jsonl {
            written
                .lines()
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                .collect()
        } else {
            serde_json::Deserializer::from_str(&written)
                .into_iter()
                .collect::<Result<_, _>>()
                .unwrap_or_else(|e| panic!("not a stream of objects: {e}"))
        };
        assert_eq!(rows.len(), 6, "{written}");
        let planted = rows
            .iter()
            .filter(|r| r["Computer"] == serde_json::json!(HOSTILE))
            .count();
        assert_eq!(planted, 2, "{written}");
        assert!(rows
            .iter()
            .all(|r| r["RuleTitle"] == serde_json::json!(title)));
    }
    let _ = std::fs::remove_dir_all(&d);
}
