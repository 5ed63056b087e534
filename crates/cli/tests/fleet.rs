//! The fleet files in `contrib/`: the Velociraptor artifacts (their structure, and the
//! command line their VQL builds, run here against `testdata/`), and the Elasticsearch
//! index template with the bulk recipe of `docs/fleet.md`.
//!
//! There is no VQL engine here, so the artifacts keep their command line in one shape
//! this test understands: `LET Argv <= filter(list=[ ... ], regex=".+")`, whose items
//! are string literals, names (parameters or the artifact's own `LET`s), `str(str=X)`
//! and `if(condition=NAME, then=ITEM)`. The test evaluates that list as Velociraptor
//! would (a false condition gives null, which `filter` drops with the empty strings).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use support::{command, root, scratch, text};
use yaml_serde::Value;

fn artifact(name: &str) -> Value {
    let path = root().join("contrib/velociraptor").join(name);
    let body = std::fs::read_to_string(&path).expect("read the artifact");
    yaml_serde::from_str(&body).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("no string `{key}` in {v:?}"))
}

/// The artifact's parameters: name → (type, default as a string).
fn parameters(a: &Value) -> BTreeMap<String, (String, String)> {
    let list = a["parameters"].as_sequence().expect("parameters list");
    list.iter()
        .map(|p| {
            let kind = p.get("type").and_then(Value::as_str).unwrap_or("string");
            let default = match p.get("default") {
                None | Some(Value::Null) => String::new(),
                Some(Value::String(s)) => s.clone(),
                Some(Value::Number(n)) => n.to_string(),
                Some(Value::Bool(b)) => if *b { "Y" } else { "N" }.to_string(),
                Some(other) => panic!("default {other:?}"),
            };
            (str_of(p, "name").to_string(), (kind.to_string(), default))
        })
        .collect()
}

fn choices(a: &Value, name: &str) -> Vec<String> {
    let list = a["parameters"].as_sequence().expect("parameters list");
    let p = list
        .iter()
        .find(|p| p["name"].as_str() == Some(name))
        .unwrap_or_else(|| panic!("no parameter {name}"));
    assert_eq!(p["type"].as_str(), Some("choices"), "{name} is a choice");
    p["choices"]
        .as_sequence()
        .expect("choices")
        .iter()
        .map(|c| c.as_str().expect("choice").to_string())
        .collect()
}

fn query(a: &Value) -> &str {
    let sources = a["sources"].as_sequence().expect("sources");
    assert_eq!(sources.len(), 1, "one source");
    str_of(&sources[0], "query")
}

/// Splits `s` at the commas outside quotes and parentheses/brackets.
fn split_top(s: &str) -> Vec<String> {
    let (mut items, mut cur, mut depth, mut quote) = (Vec::new(), String::new(), 0i32, None);
    for c in s.chars() {
        match (quote, c) {
            (Some(q), _) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '"' | '\'') => quote = Some(c),
            (None, '(' | '[') => depth += 1,
            (None, ')' | ']') => depth -= 1,
            (None, ',') if depth == 0 => {
                items.push(cur.trim().to_string());
                cur.clear();
                continue;
            }
            _ => {}
        }
        cur.push(c);
    }
    if !cur.trim().is_empty() {
        items.push(cur.trim().to_string());
    }
    items
}

/// The items of the artifact's `Argv` list, as written.
fn argv_items(q: &str) -> Vec<String> {
    let start = q.find("LET Argv <= filter(list=[").expect("LET Argv") + 25;
    let end = start + q[start..].find("], regex=\".+\")").expect("end of Argv");
    let body: String = q[start..end]
        .lines()
        .filter(|l| !l.trim_start().starts_with("--"))
        .collect::<Vec<_>>()
        .join("\n");
    split_top(&body)
}

/// Evaluates one item; `None` is VQL's null.
fn eval(item: &str, vars: &BTreeMap<String, String>) -> Option<String> {
    let item = item.trim();
    if let Some(lit) = item
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| item.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')))
    {
        return Some(lit.to_string());
    }
    if let Some(inner) = item
        .strip_prefix("str(str=")
        .and_then(|s| s.strip_suffix(')'))
    {
        return eval(inner, vars);
    }
    if let Some(inner) = item.strip_prefix("if(").and_then(|s| s.strip_suffix(')')) {
        let parts = split_top(inner);
        assert_eq!(parts.len(), 2, "if(condition=…, then=…): {item}");
        let cond = parts[0].strip_prefix("condition=").expect("condition=");
        let then = parts[1].strip_prefix("then=").expect("then=");
        let truthy = match eval(cond, vars) {
            None => false,
            Some(v) => !(v.is_empty() || v == "N"),
        };
        return if truthy { eval(then, vars) } else { None };
    }
    assert!(
        item.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_[].".contains(c)),
        "an Argv item this test does not understand: {item}"
    );
    Some(
        vars.get(item)
            .unwrap_or_else(|| panic!("Argv uses `{item}`, neither a parameter nor given"))
            .clone(),
    )
}

/// The command line the artifact runs: its parameters' defaults, overridden by
/// `set`, and the `LET`s it computes at run time given in `lets`.
fn command_line(a: &Value, set: &[(&str, &str)], lets: &[(&str, &str)]) -> Vec<String> {
    let mut vars: BTreeMap<String, String> = parameters(a)
        .into_iter()
        .map(|(k, (_, d))| (k, d))
        .collect();
    for (k, v) in set {
        assert!(vars.contains_key(*k), "no parameter {k}");
        vars.insert(k.to_string(), v.to_string());
    }
    for (k, v) in lets {
        assert!(query(a).contains(&format!("LET {}", k.split('[').next().unwrap())));
        vars.insert(k.to_string(), v.to_string());
    }
    argv_items(query(a))
        .iter()
        .filter_map(|i| eval(i, &vars))
        .filter(|s| !s.is_empty())
        .collect()
}

/// Runs the command line (its first item replaced by the built binary) from the
/// project root and returns the rows of the timeline with their `EventTime`, read as
/// the artifact's `timestamp(string=Row.Timestamp || Row.datetime)` does.
fn run(argv: &[String], out: &Path) -> Vec<(jiff::Timestamp, serde_json::Value)> {
    let o = command().args(&argv[1..]).output().expect("run");
    assert!(o.status.success(), "{argv:?}: {}", text(&o.stderr));
    let body = std::fs::read_to_string(out).expect("the timeline file");
    body.lines()
        .map(|l| {
            let row: serde_json::Value = serde_json::from_str(l).expect("a JSON line");
            let t = row
                .get("Timestamp")
                .or_else(|| row.get("datetime"))
                .and_then(|v| v.as_str())
                .unwrap_or_else(|| panic!("no Timestamp/datetime in {l}"));
            let t: jiff::Timestamp = t.parse().unwrap_or_else(|e| panic!("{t}: {e}"));
            (t, row)
        })
        .collect()
}

fn profiles() -> Vec<String> {
    let o = command()
        .arg("list-profiles")
        .output()
        .expect("list-profiles");
    text(&o.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .collect()
}

fn lines_of(args: &[&str]) -> usize {
    let o = command().args(args).output().expect("run");
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    text(&o.stdout).lines().count()
}

const LEVELS: [&str; 5] = ["informational", "low", "medium", "high", "critical"];

#[test]
fn client_artifact_structure() {
    let a = artifact("Windows.EventLogs.Scanner.yaml");
    assert_eq!(str_of(&a, "name"), "Windows.EventLogs.Scanner");
    assert_eq!(str_of(&a, "type"), "CLIENT");
    let tools: Vec<&str> = a["tools"]
        .as_sequence()
        .expect("tools")
        .iter()
        .map(|t| str_of(t, "name"))
        .collect();
    assert_eq!(tools, ["Scanner", "ScannerRules"]);
    assert!(str_of(&a["tools"][0], "url").starts_with("https://"));
    let p = parameters(&a);
    assert_eq!(
        p["EvtxDirectory"].1, r"C:\Windows\System32\winevt\Logs",
        "the endpoint's event log folder"
    );
    assert_eq!(p["RulesZip"], ("bool".to_string(), "N".to_string()));
    for name in ["TimelineStart", "TimelineEnd"] {
        assert_eq!(p[name].1, "", "{name}: no bound by default");
    }
    assert_eq!(choices(&a, "MinLevel"), LEVELS);
    assert_eq!(
        choices(&a, "Profile"),
        profiles(),
        "every profile scanner has"
    );
    let q = query(&a);
    for needle in [
        "Generic.Utils.FetchBinary(ToolName=\"Scanner\"",
        "ToolName=\"ScannerRules\"",
        "execve(argv=Argv",
        "parse_jsonl(filename=ResultFile)",
        "AS EventTime",
        "upload(file=ResultFile",
    ] {
        assert!(q.contains(needle), "the query has {needle}");
    }
    assert_eq!(str_of(&a["column_types"][0], "name"), "EventTime");
}

#[test]
fn server_artifact_structure() {
    let a = artifact("Server.Utils.ScannerOverCollection.yaml");
    assert_eq!(str_of(&a, "name"), "Server.Utils.ScannerOverCollection");
    assert_eq!(str_of(&a, "type"), "SERVER");
    assert_eq!(str_of(&a["tools"][0], "name"), "ScannerServer");
    let p = parameters(&a);
    for name in [
        "ClientId",
        "FlowId",
        "FileRegex",
        "TimelineStart",
        "TimelineEnd",
        "RulesPath",
    ] {
        assert!(p.contains_key(name), "parameter {name}");
    }
    assert_eq!(choices(&a, "MinLevel"), LEVELS);
    assert_eq!(choices(&a, "Profile"), profiles());
    let q = query(&a);
    for needle in [
        "uploads(client_id=ClientId, flow_id=FlowId)",
        "copy(filename=vfs_path, accessor=\"fs\"",
        "execve(argv=Argv",
        "parse_jsonl(filename=ResultFile)",
        "AS EventTime",
    ] {
        assert!(q.contains(needle), "the query has {needle}");
    }
}

fn scanner_path() -> String {
    env!("CARGO_BIN_EXE_scanner").to_string()
}

#[test]
fn client_artifact_default_command_runs_on_testdata() {
    let a = artifact("Windows.EventLogs.Scanner.yaml");
    let d = scratch("fleet-client");
    let out = d.join("scanner-timeline.jsonl");
    let out_s = out.to_str().unwrap();
    let exe = scanner_path();
    let lets = [
        ("ScannerExe[0].OSPath", exe.as_str()),
        ("ResultFile", out_s),
        ("RulesDir", "rules"),
    ];
    // The defaults, the endpoint's folder aside (no winevt\Logs here).
    let argv = command_line(&a, &[("EvtxDirectory", "testdata/evtx")], &lets);
    assert_eq!(
        argv[1..],
        [
            "json-timeline",
            "-L",
            "-O",
            "-q",
            "-C",
            "-d",
            "testdata/evtx",
            "-o",
            out_s,
            "-m",
            "medium",
            "-p",
            "standard",
            "-t",
            "0",
        ],
        "the default command line"
    );
    let rows = run(&argv, &out);
    let expected = lines_of(&[
        "json-timeline",
        "-d",
        "testdata/evtx",
        "-L",
        "-m",
        "medium",
        "-q",
    ]);
    assert!(expected > 0, "testdata has medium detections");
    assert_eq!(rows.len(), expected, "every detection is a row");
    for (t, row) in &rows {
        assert!(t.as_second() > 0, "EventTime of {row}");
        assert!(row.get("RuleTitle").is_some() && row.get("Computer").is_some());
    }

    // Every option set: a time range, a rules folder (the zip unpacked), a timesketch
    // profile (EventTime from `datetime`), informational rules.
    let first = rows.iter().map(|(t, _)| *t).min().unwrap();
    let start = first.to_string();
    let argv = command_line(
        &a,
        &[
            ("EvtxDirectory", "testdata/evtx"),
            ("MinLevel", "informational"),
            ("Profile", "timesketch-verbose"),
            ("TimelineStart", &start),
            ("TimelineEnd", "2099-01-01 00:00:00 +00:00"),
            ("RulesZip", "Y"),
        ],
        &lets,
    );
    let tail: Vec<&str> = argv[argv.len() - 6..].iter().map(String::as_str).collect();
    assert_eq!(
        tail,
        [
            "--timeline-start",
            &start,
            "--timeline-end",
            "2099-01-01 00:00:00 +00:00",
            "-r",
            "rules"
        ]
    );
    let rows = run(&argv, &out);
    assert!(!rows.is_empty());
    for (t, row) in &rows {
        assert!(*t >= first, "{row} is inside the range");
        assert!(row.get("timestamp_desc").is_some() && row.get("message").is_some());
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn server_artifact_default_command_runs_on_collected_logs() {
    let a = artifact("Server.Utils.ScannerOverCollection.yaml");
    // The artifact copies each upload under its flattened endpoint path; the same
    // here, with the testdata standing in for a flow's uploads.
    let d = scratch("fleet-server");
    let logs = d.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    let name = "C_Windows_System32_winevt_Logs_Security.evtx";
    std::fs::copy(root().join("testdata/evtx/security.evtx"), logs.join(name)).unwrap();
    let out = d.join("out.jsonl");
    let exe = scanner_path();
    let argv = command_line(
        &a,
        &[],
        &[
            ("ScannerExe[0].OSPath", exe.as_str()),
            ("LogsDir", logs.to_str().unwrap()),
            ("ResultFile", out.to_str().unwrap()),
        ],
    );
    assert!(
        !argv.contains(&"-r".to_string()),
        "built-in rules by default"
    );
    let rows = run(&argv, &out);
    let expected = lines_of(&[
        "json-timeline",
        "-f",
        "testdata/evtx/security.evtx",
        "-L",
        "-m",
        "medium",
        "-q",
    ]);
    assert!(expected > 0);
    assert_eq!(rows.len(), expected);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn index_template_maps_every_timeline_column() {
    let path = root().join("contrib/elasticsearch/index-template.json");
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).expect("valid JSON");
    assert_eq!(t["index_patterns"][0], "scanner-timeline*");
    let props = t["template"]["mappings"]["properties"]
        .as_object()
        .expect("mappings.properties");
    let o = command().arg("list-profiles").output().unwrap();
    for line in text(&o.stdout).lines() {
        let columns = line
            .split_whitespace()
            .skip(1)
            .collect::<Vec<_>>()
            .join(" ");
        for col in columns.split(", ") {
            assert!(props.contains_key(col), "the template maps column {col}");
        }
    }
    for (col, kind) in [
        ("Timestamp", "date"),
        ("datetime", "date"),
        ("Computer", "keyword"),
        ("Channel", "keyword"),
        ("EventID", "keyword"),
        ("RuleTitle", "keyword"),
        ("Level", "keyword"),
        ("Details", "text"),
    ] {
        assert_eq!(props[col]["type"], kind, "{col}");
    }
}

fn python() -> Option<PathBuf> {
    let ok = Command::new("python3").arg("--version").output().ok()?;
    ok.status.success().then(|| PathBuf::from("python3"))
}

#[test]
fn bulk_lines_from_a_real_timeline_parse() {
    let Some(py) = python() else {
        println!("skipped: no python3 to run contrib/elasticsearch/bulk.py");
        return;
    };
    let d = scratch("fleet-bulk");
    let timeline = d.join("t.jsonl");
    let o = command()
        .args([
            "json-timeline",
            "-d",
            "testdata/evtx",
            "-L",
            "-O",
            "-q",
            "-p",
        ])
        .args(["super-verbose", "-m", "informational", "-o"])
        .arg(&timeline)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let rows = std::fs::read_to_string(&timeline).unwrap().lines().count();
    let o = Command::new(py)
        .arg(root().join("contrib/elasticsearch/bulk.py"))
        .args(["--index", "scanner-timeline-test"])
        .arg(&timeline)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o.stderr));
    let lines: Vec<serde_json::Value> = text(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a bulk line is JSON"))
        .collect();
    assert!(rows > 0);
    assert_eq!(
        lines.len(),
        2 * rows,
        "an action and a document per detection"
    );
    for pair in lines.chunks(2) {
        assert_eq!(pair[0]["index"]["_index"], "scanner-timeline-test");
        let doc = &pair[1];
        let ts = doc["Timestamp"].as_str().expect("Timestamp");
        ts.parse::<jiff::Timestamp>().expect("an ISO-8601 date");
        for field in ["Details", "ExtraFieldInfo"] {
            assert!(doc[field].is_string(), "{field} is text in {doc}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}
