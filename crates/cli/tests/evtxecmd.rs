//! EvtxECmd's CSV, often all a responder is handed of a host's logs: built here from the
//! project's own EVTX files as EvtxECmd writes it (its 25 columns, in its order; the
//! record's EventData as Json.NET writes XML in `Payload`), it gives the detections of
//! the EVTX it came from, whatever the file is named.

mod support;

use serde_json::{json, Map, Value};
use support::{root, scanner_utc, scratch, text};

/// EvtxECmd's columns, in its order.
const COLUMNS: [&str; 25] = [
    "RecordNumber",
    "EventRecordId",
    "TimeCreated",
    "EventId",
    "Level",
    "Provider",
    "Channel",
    "ProcessId",
    "ThreadId",
    "Computer",
    "UserId",
    "MapDescription",
    "UserName",
    "RemoteHost",
    "PayloadData1",
    "PayloadData2",
    "PayloadData3",
    "PayloadData4",
    "PayloadData5",
    "PayloadData6",
    "ExecutableInfo",
    "HiddenRecord",
    "SourceFile",
    "Keywords",
    "Payload",
];

/// EvtxECmd's name of an EVTX level.
fn level(n: i64) -> String {
    match n {
        0 => "LogAlways",
        1 => "Critical",
        2 => "Error",
        3 => "Warning",
        4 => "Info",
        5 => "Verbose",
        8 => "Success",
        16 => "Failure",
        n => return n.to_string(),
    }
    .to_string()
}

/// EvtxECmd's name of EVTX keywords.
fn keywords(k: &str) -> String {
    match k {
        "0x8010000000000000" => "Audit failure",
        "0x8020000000000000" => "Audit success",
        "0x8000000000000000" => "Classic",
        k => k,
    }
    .to_string()
}

/// A value as XML text.
fn plain(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(s.clone()),
        v => Some(v.to_string()),
    }
}

/// An element of the `evtx` crate's JSON (`#attributes` beside the children) as
/// Json.NET writes the XML: attributes as `@name`.
fn xml_json(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut o = Map::new();
            for (k, x) in m {
                match (k.as_str(), x) {
                    ("#attributes", Value::Object(a)) => {
                        for (an, av) in a {
                            o.insert(format!("@{an}"), json!(plain(av)));
                        }
                    }
                    _ => {
                        o.insert(k.clone(), xml_json(x));
                    }
                }
            }
            Value::Object(o)
        }
        Value::Null => Value::Null,
        v => json!(plain(v)),
    }
}

/// `<EventData>` (one `Data` object, or an array of them) or `<UserData>` as Json.NET
/// writes it.
fn payload(data: Option<&Value>, user: Option<&Value>) -> String {
    if let Some(u) = user {
        return json!({ "UserData": xml_json(u) }).to_string();
    }
    let Some(Value::Object(d)) = data else {
        return String::new();
    };
    let items: Vec<Value> = d
        .iter()
        .filter(|(k, _)| !k.starts_with('#'))
        .map(|(k, v)| {
            let mut o = Map::new();
            o.insert("@Name".into(), json!(k));
            if let Some(t) = plain(v) {
                o.insert("#text".into(), json!(t));
            }
            Value::Object(o)
        })
        .collect();
    let data = match items.len() {
        1 => items[0].clone(),
        _ => Value::Array(items),
    };
    json!({ "EventData": { "Data": data } }).to_string()
}

/// `2024-03-12T09:14:02.255123Z` as EvtxECmd writes it: `2024-03-12 09:14:02.2551230`.
fn time(t: &str) -> String {
    let t = t.trim_end_matches('Z').replacen('T', " ", 1);
    match t.split_once('.') {
        Some((s, f)) => format!("{s}.{f:0<7}"),
        None => format!("{t}.0000000"),
    }
}

/// The rows EvtxECmd writes for the EVTX file `path`, read with the `evtx` crate.
fn rows(path: &std::path::Path, w: &mut csv::Writer<Vec<u8>>) {
    let mut p = evtx::EvtxParser::from_path(path).unwrap();
    for r in p.records_json_value() {
        let r = r.unwrap();
        let e = &r.data["Event"];
        let s = &e["System"];
        let attr = |o: &str, a: &str| plain(&s[o]["#attributes"][a]).unwrap_or_default();
        let row = [
            r.event_record_id.to_string(),
            plain(&s["EventRecordID"]).unwrap_or_default(),
            time(&attr("TimeCreated", "SystemTime")),
            plain(&s["EventID"]).unwrap_or_default(),
            level(s["Level"].as_i64().unwrap_or(0)),
            attr("Provider", "Name"),
            plain(&s["Channel"]).unwrap_or_default(),
            attr("Execution", "ProcessID"),
            attr("Execution", "ThreadID"),
            plain(&s["Computer"]).unwrap_or_default(),
            attr("Security", "UserID"),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            String::new(),
            "False".into(),
            path.display().to_string(),
            keywords(&plain(&s["Keywords"]).unwrap_or_default()),
            payload(e.get("EventData"), e.get("UserData")),
        ];
        w.write_record(&row).unwrap();
    }
}

#[test]
fn evtxecmd_csv_gives_the_detections_of_the_evtx_it_came_from() {
    let d = scratch("evtxecmd");
    let logs = ["security.evtx", "generated.evtx"].map(|n| root().join("testdata/evtx").join(n));
    let mut w = csv::Writer::from_writer(Vec::new());
    w.write_record(COLUMNS).unwrap();
    for l in &logs {
        rows(l, &mut w);
    }
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(w.into_inner().unwrap());
    let csv_dir = d.join("EvtxECmd");
    std::fs::create_dir_all(&csv_dir).unwrap();
    std::fs::write(csv_dir.join("20240312090000_EvtxECmd_Output.csv"), &bytes).unwrap();
    let evtx_dir = d.join("evtx");
    std::fs::create_dir_all(&evtx_dir).unwrap();
    for l in &logs {
        std::fs::copy(l, evtx_dir.join(l.file_name().unwrap())).unwrap();
    }
    let timeline = |dir: &std::path::Path| {
        let out = d.join("out.csv");
        let (o, dir) = (out.display().to_string(), dir.display().to_string());
        let args = [
            "csv-timeline",
            "--builtin-rules",
            "-w",
            "-C",
            "-d",
            &dir,
            "-o",
            &o,
        ];
        let run = scanner_utc(&args);
        assert_eq!(run.status.code(), Some(0), "{}", text(&run.stderr));
        (std::fs::read_to_string(&out).unwrap(), text(&run.stderr))
    };
    let (want, _) = timeline(&evtx_dir);
    let (got, err) = timeline(&csv_dir);
    assert!(want.lines().count() > 3, "{want}");
    // Time, rule, level, computer, channel, EventID, RecordID, Details, ExtraFieldInfo.
    assert_eq!(got, want);
    assert!(!err.contains("not read"), "{err}");
    // EvtxECmd's JSON (--json): the same record, numbers as numbers, the time as
    // ServiceStack writes it (milliseconds).
    let json_dir = d.join("json");
    std::fs::create_dir_all(&json_dir).unwrap();
    let mut lines = String::new();
    let mut r = csv::Reader::from_reader(&bytes[3..]);
    for row in r.records() {
        let row = row.unwrap();
        let mut o = Map::new();
        for (k, v) in COLUMNS.iter().zip(row.iter()) {
            let v = match *k {
                "EventId" | "ProcessId" | "ThreadId" | "RecordNumber" => {
                    json!(v.parse::<i64>().unwrap_or(0))
                }
                "HiddenRecord" => json!(false),
                "TimeCreated" => {
                    let t: jiff::civil::DateTime = v.parse().unwrap();
                    let ms = t
                        .to_zoned(jiff::tz::TimeZone::UTC)
                        .unwrap()
                        .timestamp()
                        .as_millisecond();
                    json!(format!("/Date({ms}+0000)/"))
                }
                _ => json!(v),
            };
            o.insert(k.to_string(), v);
        }
        lines.push_str(&Value::Object(o).to_string());
        lines.push('\n');
    }
    std::fs::write(json_dir.join("EvtxECmd_Output.json"), lines).unwrap();
    let (got, err) = timeline(&json_dir);
    assert_eq!(got, want, "{err}");
    // Sent in a zip, as a KAPE target's output often is.
    let zip_dir = d.join("zip");
    std::fs::create_dir_all(&zip_dir).unwrap();
    let mut z = zip::ZipWriter::new(std::fs::File::create(zip_dir.join("host.zip")).unwrap());
    z.start_file(
        "EvtxECmd/20240312090000_EvtxECmd_Output.csv",
        zip::write::SimpleFileOptions::default(),
    )
    .unwrap();
    std::io::Write::write_all(&mut z, &bytes).unwrap();
    z.finish().unwrap();
    let (got, err) = timeline(&zip_dir);
    assert_eq!(got, want, "{err}");
    std::fs::remove_dir_all(&d).unwrap();
}
