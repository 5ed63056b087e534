//! Event logs that are not EVTX: each export shape, made here from an EVTX log by a small
//! exporter, gives exactly the detections of the EVTX it came from; files of every
//! format sit side by side in one folder without a flag; and what is in no known shape
//! is reported with its file and line, never a silent zero.

mod support;

use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use support::{root, scanner_utc, scratch, text};

const INPUT_ERRORS: i32 = 3;

/// The records of an EVTX file in the evtx crate's JSON shape (attributes separated), as
/// `evtx_dump` writes them.
fn evtx_records(path: &Path) -> Vec<Value> {
    let settings = evtx::ParserSettings::default()
        .num_threads(1)
        .separate_json_attributes(true);
    let mut p = evtx::EvtxParser::from_path(path)
        .expect("open EVTX")
        .with_configuration(settings);
    p.records_json_value()
        .map(|r| r.expect("record").data)
        .collect()
}

/// A synthetic log with planted attacks (they fire built-in rules of several channels),
/// and the project's Security log.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let generated = dir.join("generated.evtx");
    let out = scanner_utc(&[
        "evtx",
        "generate",
        "--records",
        "5000",
        "-o",
        generated.to_str().unwrap(),
        "-C",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    vec![generated, root().join("testdata/evtx/security.evtx")]
}

fn system(e: &Value) -> &Map<String, Value> {
    e["Event"]["System"].as_object().expect("System")
}

fn attr<'a>(e: &'a Value, elem: &str, name: &str) -> &'a Value {
    &system(e)[&format!("{elem}_attributes")][name]
}

/// EventData, or the fields of UserData's one element.
fn data(e: &Value) -> Map<String, Value> {
    if let Some(d) = e["Event"]["EventData"].as_object() {
        return d.clone();
    }
    match e["Event"]["UserData"].as_object() {
        Some(u) => u
            .values()
            .filter_map(Value::as_object)
            .flat_map(|m| m.clone())
            .collect(),
        None => Map::new(),
    }
}

fn time(e: &Value) -> String {
    attr(e, "TimeCreated", "SystemTime")
        .as_str()
        .unwrap()
        .to_string()
}

/// NXLog's flat rows: system fields under NXLog's names, event data beside them.
fn to_flat(e: &Value) -> Value {
    let s = system(e);
    let mut row = data(e);
    row.insert("Channel".into(), s["Channel"].clone());
    row.insert("EventID".into(), s["EventID"].clone());
    row.insert("Hostname".into(), s["Computer"].clone());
    row.insert("SourceName".into(), attr(e, "Provider", "Name").clone());
    row.insert("RecordNumber".into(), s["EventRecordID"].clone());
    row.insert("TimeCreated".into(), json!(time(e)));
    for k in ["Level", "Task", "Keywords", "Version"] {
        if let Some(v) = s.get(k) {
            row.insert(k.into(), v.clone());
        }
    }
    if let Some(o) = s.get("Opcode") {
        row.insert("OpcodeValue".into(), o.clone());
    }
    Value::Object(row)
}

/// Elastic Winlogbeat: everything under `winlog`, the event ID as text.
fn to_beats(e: &Value) -> Value {
    let s = system(e);
    let mut w = json!({
        "channel": s["Channel"],
        "event_id": s["EventID"].to_string(),
        "computer_name": s["Computer"],
        "provider_name": attr(e, "Provider", "Name"),
        "record_id": s["EventRecordID"],
    });
    if let Some(d) = e["Event"]["EventData"].as_object() {
        w["event_data"] = Value::Object(d.clone());
    }
    if let Some(u) = e["Event"]["UserData"].as_object() {
        w["user_data"] = Value::Object(u.clone());
    }
    json!({"@timestamp": time(e), "winlog": w, "event": {"code": s["EventID"].to_string()}})
}

/// Velociraptor's `parse_evtx()`: `System` with `EventID.Value`, epoch seconds.
fn to_velociraptor(e: &Value) -> Value {
    let s = system(e);
    let secs = time(e).parse::<jiff::Timestamp>().unwrap().as_microsecond() as f64 / 1e6;
    let mut sys = Map::new();
    for (k, v) in s {
        match k.as_str() {
            "EventID" => {
                sys.insert(k.clone(), json!({ "Value": v }));
            }
            "TimeCreated_attributes" => {
                sys.insert("TimeCreated".into(), json!({ "SystemTime": secs }));
            }
            _ => match k.strip_suffix("_attributes") {
                Some(elem) => {
                    sys.insert(elem.into(), v.clone());
                }
                None if !v.is_null() => {
                    sys.insert(k.clone(), v.clone());
                }
                None => {}
            },
        }
    }
    let mut row = json!({ "System": sys });
    for part in ["EventData", "UserData"] {
        if let Some(d) = e["Event"].get(part) {
            row[part] = d.clone();
        }
    }
    row
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn scalar(v: &Value) -> String {
    match v {
        Value::String(s) => escape(s),
        Value::Null => String::new(),
        v => escape(&v.to_string()),
    }
}

/// One element of the EVTX JSON as XML: `X_attributes` are X's attributes; the named
/// fields of `EventData` are `<Data Name="…">`.
fn element(out: &mut String, name: &str, v: &Value, attrs: Option<&Value>, in_data: bool) {
    if let Value::Array(items) = v {
        for i in items {
            element(out, name, i, attrs, in_data);
        }
        return;
    }
    let (tag, mut head) = if in_data && name != "Data" && name != "Binary" {
        ("Data", format!("<Data Name=\"{}\"", escape(name)))
    } else {
        (name, format!("<{name}"))
    };
    if let Some(Value::Object(a)) = attrs {
        for (k, x) in a {
            head.push_str(&format!(" {k}=\"{}\"", scalar(x)));
        }
    }
    match v {
        Value::Object(m) => {
            out.push_str(&head);
            out.push('>');
            for (k, x) in m {
                if let Some(base) = k.strip_suffix("_attributes") {
                    // An element with attributes only.
                    if !m.contains_key(base) {
                        element(out, base, &Value::Null, Some(x), false);
                    }
                    continue;
                }
                let a = m.get(&format!("{k}_attributes"));
                element(out, k, x, a, name == "EventData");
            }
            out.push_str(&format!("</{tag}>"));
        }
        Value::Null if attrs.is_some() => {
            out.push_str(&head);
            out.push_str("/>");
        }
        v => out.push_str(&format!("{head}>{}</{tag}>", scalar(v))),
    }
}

/// The record as Event XML, as `wevtutil qe /f:xml` writes it.
fn to_xml(e: &Value) -> String {
    let mut out = String::new();
    let mut ev = e["Event"].clone();
    let ns = json!({"xmlns": "http://schemas.microsoft.com/win/2004/08/events/event"});
    if let Some(m) = ev.as_object_mut() {
        m.insert(
            "RenderingInfo".into(),
            json!({"Message": "shown, never read"}),
        );
    }
    element(&mut out, "Event", &ev, Some(&ns), false);
    out
}

/// Splunk's export: the event XML in `result._raw`.
fn to_splunk(e: &Value) -> Value {
    json!({"preview": false, "result": {"_raw": to_xml(e), "host": system(e)["Computer"], "sourcetype": "XmlWinEventLog"}})
}

/// Azure Monitor's `SecurityEvent`: system columns, `EventData` as XML text.
fn to_azure(e: &Value) -> Value {
    let s = system(e);
    let mut xml = String::new();
    for part in ["EventData", "UserData"] {
        if let Some(d) = e["Event"].get(part) {
            element(&mut xml, part, d, None, false);
        }
    }
    let mut row = json!({
        "TimeGenerated": time(e),
        "Computer": s["Computer"],
        "Channel": s["Channel"],
        "EventSourceName": attr(e, "Provider", "Name"),
        "EventID": s["EventID"],
        "Type": "SecurityEvent",
        "EventData": format!("<DataItem type=\"System.XmlData\">{xml}</DataItem>"),
    });
    for k in ["Level", "Task", "Keywords", "Version", "Opcode"] {
        if let Some(v) = s.get(k) {
            row[k] = v.clone();
        }
    }
    row
}

/// The detections of a run, each (time, rule id, computer, channel, event id, record
/// id or `-` when `ids` is false, details), counted.
fn detections(files: &[&Path], ids: bool) -> BTreeMap<Vec<String>, usize> {
    static RUN: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = RUN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let out_dir = scratch(&format!("shapes-out-{n}"));
    let csv_path = out_dir.join("out.csv");
    let mut args = vec!["csv-timeline", "-o", csv_path.to_str().unwrap(), "-C", "-q"];
    for f in files {
        args.push("-f");
        args.push(f.to_str().unwrap());
    }
    let out = scanner_utc(&args);
    assert!(out.status.success(), "{:?}: {}", files, text(&out.stderr));
    let mut r = csv::Reader::from_path(&csv_path).expect("csv");
    let h = r.headers().unwrap().clone();
    let col = |n: &str| h.iter().position(|x| x == n).expect(n);
    let cols = [
        "Timestamp",
        "RuleID",
        "Computer",
        "Channel",
        "EventID",
        "RecordID",
        "Details",
    ];
    let idx: Vec<usize> = cols.iter().map(|c| col(c)).collect();
    let mut got = BTreeMap::new();
    for row in r.records() {
        let row = row.unwrap();
        let mut key: Vec<String> = idx.iter().map(|&i| row[i].to_string()).collect();
        if !ids {
            key[5] = "-".into();
        }
        *got.entry(key).or_insert(0) += 1;
    }
    std::fs::remove_dir_all(&out_dir).ok();
    got
}

/// An exporter: one EVTX record (evtx_dump shape) to one event of another shape.
type Export = fn(&Value) -> Value;

fn write_lines(path: &Path, events: &[Value], f: Export) {
    let text: String = events.iter().map(|e| format!("{}\n", f(e))).collect();
    std::fs::write(path, text).unwrap();
}

#[test]
fn every_shape_gives_the_detections_of_the_evtx_it_came_from() {
    let dir = scratch("shapes");
    for (n, src) in sources(&dir).iter().enumerate() {
        let events = evtx_records(src);
        let want = detections(&[src], true);
        let want_no_ids = detections(&[src], false);
        assert!(
            want.len() > 3,
            "{src:?}: too few detections to compare: {want:?}"
        );

        let shapes: [(&str, Export); 5] = [
            ("evtx_dump", |e| e.clone()),
            ("flat", to_flat),
            ("beats", to_beats),
            ("velociraptor", to_velociraptor),
            ("splunk", to_splunk),
        ];
        for (name, f) in shapes {
            let path = dir.join(format!("{n}-{name}.jsonl"));
            write_lines(&path, &events, f);
            assert_eq!(detections(&[&path], true), want, "{name} from {src:?}");
        }
        // Azure rows carry no record number.
        let azure = dir.join(format!("{n}-azure.jsonl"));
        write_lines(&azure, &events, to_azure);
        assert_eq!(
            detections(&[&azure], false),
            want_no_ids,
            "azure from {src:?}"
        );

        // One JSON array (flat rows), and an XML file as `wevtutil` writes it.
        let array = dir.join(format!("{n}-array.json"));
        let rows: Vec<Value> = events.iter().map(to_flat).collect();
        std::fs::write(&array, serde_json::to_string_pretty(&rows).unwrap()).unwrap();
        assert_eq!(detections(&[&array], true), want, "array from {src:?}");
        let xml = dir.join(format!("{n}-events.xml"));
        let body: String = events.iter().map(|e| to_xml(e) + "\r\n").collect();
        std::fs::write(
            &xml,
            format!("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\r\n<Events>{body}</Events>"),
        )
        .unwrap();
        assert_eq!(detections(&[&xml], true), want, "xml from {src:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_folder_takes_evtx_json_and_xml_side_by_side_without_a_flag() {
    let dir = scratch("side-by-side");
    let src = root().join("testdata/evtx/security.evtx");
    let events = evtx_records(&src);
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    std::fs::copy(&src, logs.join("a.evtx")).unwrap();
    write_lines(&logs.join("b.jsonl"), &events, to_flat);
    write_lines(&logs.join("c.json"), &events, to_beats);
    let body: String = events.iter().map(to_xml).collect();
    std::fs::write(logs.join("d.xml"), format!("<Events>{body}</Events>")).unwrap();
    let one = detections(&[&src], true).values().sum::<usize>();
    assert!(one > 0);
    for flag in [None, Some("-J")] {
        let csv_path = dir.join("out.csv");
        let mut args = vec!["csv-timeline", "-d", logs.to_str().unwrap()];
        args.extend(["-o", csv_path.to_str().unwrap(), "-C", "-q"]);
        args.extend(flag);
        let out = scanner_utc(&args);
        assert!(out.status.success(), "{}", text(&out.stderr));
        let rows = csv::Reader::from_path(&csv_path).unwrap().records().count();
        assert_eq!(rows, 4 * one, "{flag:?}");
    }
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn events_in_no_known_shape_are_reported_by_file_and_line_and_counted() {
    let dir = scratch("unknown-shape");
    let src = root().join("testdata/evtx/security.evtx");
    let events = evtx_records(&src);
    let mut lines: Vec<String> = events.iter().map(|e| to_flat(e).to_string()).collect();
    lines.insert(1, r#"{"user":"bob","action":"login"}"#.into());
    lines.insert(2, r#"{"EventID":4624,"Hostname":"ws1"}"#.into());
    lines.insert(
        3,
        "{\"EventID\":1,\"Channel\":\"Security\",\"x\":\"\u{0}".into(),
    );
    let mut bytes = lines.join("\n").into_bytes();
    bytes.extend(b"\n{\"EventID\":1,\"Channel\":\"Security\",\"Bad\":\"\xff\xfe\"}\n");
    bytes.extend(b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n");
    let mixed = dir.join("mixed.jsonl");
    std::fs::write(&mixed, bytes).unwrap();
    let other = dir.join("notes.json");
    std::fs::write(&other, "\x00\x05\x16\x07Mac OS X resource fork").unwrap();
    let csv_path = dir.join("out.csv");
    let out = scanner_utc(&[
        "csv-timeline",
        "-d",
        dir.to_str().unwrap(),
        "-o",
        csv_path.to_str().unwrap(),
        "-C",
        "-q",
    ]);
    assert_eq!(
        out.status.code(),
        Some(INPUT_ERRORS),
        "{}",
        text(&out.stderr)
    );
    let err = text(&out.stderr);
    let m = mixed.display().to_string();
    for want in [
        format!("{m}: line 2: not a Windows event in any known shape (keys \"user\", \"action\")"),
        format!("{m}: line 3: event without a Channel"),
        format!("{m}: line 4: invalid JSON"),
        format!("{m}: line {}: invalid JSON: not UTF-8", events.len() + 4),
        format!(
            "{m}: line {}: invalid JSON: recursion limit",
            events.len() + 5
        ),
        format!("{}: neither EVTX, JSON nor event XML", other.display()),
    ] {
        assert!(err.contains(&want), "missing {want:?} in:\n{err}");
    }
    // The events in a known shape are still scanned.
    let rows = csv::Reader::from_path(&csv_path).unwrap().records().count();
    assert_eq!(rows, detections(&[&src], true).values().sum::<usize>());
    std::fs::remove_dir_all(&dir).ok();
}

fn gzip(bytes: &[u8]) -> Vec<u8> {
    use std::io::Write;
    let mut z = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    z.write_all(bytes).unwrap();
    z.finish().unwrap()
}

#[test]
fn gzip_files_are_read_as_streams_and_a_truncated_one_keeps_what_came_before() {
    let dir = scratch("gzip");
    let src = root().join("testdata/evtx/security.evtx");
    let events = evtx_records(&src);
    let want = detections(&[&src], true);
    let flat: String = events.iter().map(|e| format!("{}\n", to_flat(e))).collect();
    let jsonl = dir.join("rows.jsonl.gz");
    std::fs::write(&jsonl, gzip(flat.as_bytes())).unwrap();
    assert_eq!(detections(&[&jsonl], true), want, "JSON Lines in gzip");
    let body: String = events.iter().map(to_xml).collect();
    let xml = dir.join("events.xml.gz");
    std::fs::write(&xml, gzip(format!("<Events>{body}</Events>").as_bytes())).unwrap();
    assert_eq!(detections(&[&xml], true), want, "XML in gzip");

    // A gzip EVTX is named, not misread; a cut stream is an error after what it held.
    let evtx_gz = dir.join("log.evtx.gz");
    std::fs::write(&evtx_gz, gzip(&std::fs::read(&src).unwrap())).unwrap();
    let many: String = (0..2000).map(|_| flat.clone()).collect();
    let whole = gzip(many.as_bytes());
    let cut = dir.join("cut.jsonl.gz");
    std::fs::write(&cut, &whole[..whole.len() / 2]).unwrap();
    for (file, why) in [
        (&evtx_gz, "gzip-compressed EVTX; not read"),
        (&cut, "line "),
    ] {
        let out = scanner_utc(&[
            "csv-timeline",
            "-f",
            file.to_str().unwrap(),
            "-o",
            "-",
            "-q",
        ]);
        assert_eq!(
            out.status.code(),
            Some(INPUT_ERRORS),
            "{}",
            text(&out.stderr)
        );
        let err = text(&out.stderr);
        assert!(err.contains(&format!("{}: {why}", file.display())), "{err}");
        if file == &cut {
            assert!(
                text(&out.stdout).lines().count() > 100,
                "rows before the cut kept"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}
