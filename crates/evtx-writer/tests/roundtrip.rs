//! Write → read with the `evtx` crate → compare field by field.

mod common;

use common::*;
use scanner_evtx_writer::parse_filetime;
use scanner_evtx_writer::*;
use serde_json::json;

fn system(event_id: u16, record: u64) -> Element {
    Element::new("System")
        .child(
            Element::new("Provider")
                .attr("Name", "Microsoft-Windows-Test")
                .attr(
                    "Guid",
                    Value::Guid(Guid::parse("{54849625-5478-4994-a5ba-3e3b0328c30d}").unwrap()),
                ),
        )
        .child(Element::new("EventID").text(Value::U16(event_id)))
        .child(Element::new("Version").text(Value::U8(2)))
        .child(Element::new("Level").text(Value::U8(0)))
        .child(Element::new("Task").text(Value::U16(13312)))
        .child(Element::new("Opcode").text(Value::U8(0)))
        .child(Element::new("Keywords").text(Value::Hex64(0x8020_0000_0000_0000)))
        .child(Element::new("TimeCreated").attr(
            "SystemTime",
            Value::FileTime(parse_filetime("2024-03-12T09:14:02.2555113Z").unwrap()),
        ))
        .child(Element::new("EventRecordID").text(Value::U64(record)))
        .child(Element::new("Correlation"))
        .child(
            Element::new("Execution")
                .attr("ProcessID", Value::U32(4))
                .attr("ThreadID", Value::U32(7216)),
        )
        .child(Element::new("Channel").text("Security"))
        .child(Element::new("Computer").text("WS-FIN-07.corp.example"))
        .child(Element::new("Security").attr("UserID", Value::Sid(Sid::parse("S-1-5-18").unwrap())))
}

fn event(event_id: u16, record: u64, data: Vec<(&str, Value)>) -> Event {
    let mut ed = Element::new("EventData");
    for (name, v) in data {
        ed = ed.child(Element::new("Data").attr("Name", name).text(v));
    }
    Event {
        root: Element::new("Event")
            .attr("xmlns", EVENT_NS)
            .child(system(event_id, record))
            .child(ed),
    }
}

/// One of each scalar value type.
fn scalars() -> Vec<(&'static str, Value)> {
    vec![
        (
            "String",
            Value::from("C:\\Windows\\System32\\cmd.exe /c \"a & b\" <x> é ✓ 𝄞"),
        ),
        ("EmptyString", Value::from("")),
        ("Ansi", Value::AnsiString("plain ascii".into())),
        ("I8", Value::I8(-128)),
        ("U8", Value::U8(255)),
        ("I16", Value::I16(-32768)),
        ("U16", Value::U16(65535)),
        ("I32", Value::I32(-2_147_483_648)),
        ("U32", Value::U32(4_294_967_295)),
        ("I64", Value::I64(i64::MIN)),
        ("U64", Value::U64(u64::MAX)),
        ("BoolTrue", Value::Bool(true)),
        ("BoolFalse", Value::Bool(false)),
        ("Binary", Value::Binary(vec![0x00, 0xab, 0x10, 0xff])),
        (
            "Guid",
            Value::Guid(Guid::parse("{4f1c6a2e-7b3d-65f0-0001-000000000001}").unwrap()),
        ),
        (
            "FileTime",
            Value::FileTime(parse_filetime("2024-03-12T09:14:02.2555113Z").unwrap()),
        ),
        (
            "SysTime",
            Value::SysTime(SysTime::parse("2023-12-31T23:59:59.999Z").unwrap()),
        ),
        (
            "Sid",
            Value::Sid(Sid::parse("S-1-5-21-3623811015-3361044348-30300820-1107").unwrap()),
        ),
        ("Hex32", Value::Hex32(0x1f3c)),
        ("Hex64", Value::Hex64(0x8020_0000_0000_0000)),
        ("HexZero", Value::Hex64(0)),
        ("F32", Value::F32(1.5)),
        ("F64", Value::F64(-0.25)),
    ]
}

fn arrays() -> Vec<(&'static str, Value)> {
    vec![
        (
            "Strings",
            Value::Array(vec!["a".into(), "".into(), "c d".into()]),
        ),
        ("U8s", Value::Array(vec![Value::U8(1), Value::U8(2)])),
        ("I16s", Value::Array(vec![Value::I16(-1), Value::I16(2)])),
        ("U16s", Value::Array(vec![Value::U16(1), Value::U16(65535)])),
        ("I32s", Value::Array(vec![Value::I32(-7)])),
        ("U32s", Value::Array(vec![Value::U32(3), Value::U32(4)])),
        ("I64s", Value::Array(vec![Value::I64(-9), Value::I64(9)])),
        ("U64s", Value::Array(vec![Value::U64(1 << 40)])),
        (
            "Bools",
            Value::Array(vec![Value::Bool(true), Value::Bool(false)]),
        ),
        (
            "Guids",
            Value::Array(vec![Value::Guid(
                Guid::parse("{00000000-0000-0000-0000-000000000001}").unwrap(),
            )]),
        ),
        (
            "Sids",
            Value::Array(vec![
                Value::Sid(Sid::parse("S-1-5-18").unwrap()),
                Value::Sid(Sid::parse("S-1-5-32-544").unwrap()),
            ]),
        ),
        (
            "Hex32s",
            Value::Array(vec![Value::Hex32(0x10), Value::Hex32(0)]),
        ),
        ("Hex64s", Value::Array(vec![Value::Hex64(0xffff)])),
        (
            "FileTimes",
            Value::Array(vec![Value::FileTime(
                parse_filetime("2024-01-01T00:00:00Z").unwrap(),
            )]),
        ),
        (
            "SysTimes",
            Value::Array(vec![Value::SysTime(
                SysTime::parse("2024-01-01T00:00:00.5Z").unwrap(),
            )]),
        ),
    ]
}

#[test]
fn every_scalar_type_round_trips_in_templates_and_plain_elements() {
    for templates in [true, false] {
        let e = event(4688, 42, scalars());
        let back = read_json(write(
            [&e],
            WriterOptions {
                templates,
                ..Default::default()
            },
        ));
        assert_eq!(back.len(), 1);
        assert_eq!(back[0].0, 1);
        let mut expected = e.to_json();
        if !templates {
            // Outside a template an ANSI string is stored as UTF-16 text.
            assert_eq!(back[0].1["Event"]["EventData"]["Ansi"], "plain ascii");
        }
        assert_eq!(back[0].1, expected, "templates: {templates}");
        // Spot checks of the rendering, independent of `to_json`.
        let d = &back[0].1["Event"]["EventData"];
        assert_eq!(d["U64"], json!(u64::MAX));
        assert_eq!(d["I8"], json!(-128));
        assert_eq!(d["BoolTrue"], json!(true));
        assert_eq!(d["Binary"], "00AB10FF");
        assert_eq!(d["Guid"], "{4f1c6a2e-7b3d-65f0-0001-000000000001}");
        assert_eq!(d["FileTime"], "2024-03-12T09:14:02.2555113Z");
        assert_eq!(d["SysTime"], "2023-12-31T23:59:59.9990000Z");
        assert_eq!(d["Sid"], "S-1-5-21-3623811015-3361044348-30300820-1107");
        assert_eq!(d["Hex32"], "0x1f3c");
        assert_eq!(d["HexZero"], "0x0");
        assert_eq!(d["F64"], "-0.25");
        let s = &back[0].1["Event"]["System"];
        assert_eq!(s["EventID"], json!(4688));
        assert_eq!(s["Keywords"], "0x8020000000000000");
        assert_eq!(s["Security_attributes"]["UserID"], "S-1-5-18");
        expected = back[0].1.clone();
        let _ = expected;
        // And as XML: the same text.
        let xml = read_xml(write(
            [&e],
            WriterOptions {
                templates,
                ..Default::default()
            },
        ));
        let again = Event::from_xml(&xml[0]).unwrap();
        assert_eq!(again.to_xml(), e.to_xml(), "templates: {templates}");
    }
}

#[test]
fn every_array_type_round_trips_in_templates() {
    let e = event(1, 1, arrays());
    let back = read_json(write([&e], WriterOptions::default()));
    assert_eq!(back[0].1, e.to_json());
    let d = &back[0].1["Event"]["EventData"];
    assert_eq!(d["Strings"], json!(["a", "", "c d"]));
    assert_eq!(d["U16s"], json!([1, 65535]));
    assert_eq!(d["Sids"], json!(["S-1-5-18", "S-1-5-32-544"]));
    // XML repeats the element once per item.
    let xml = read_xml(write([&e], WriterOptions::default()));
    assert!(
        xml[0].contains("<Data Name=\"U32s\">3</Data>\n    <Data Name=\"U32s\">4</Data>"),
        "{}",
        xml[0]
    );
    // Outside templates an array is its text.
    let e = event(
        1,
        1,
        vec![("Strings", Value::Array(vec!["a".into(), "b".into()]))],
    );
    let back = read_json(write(
        &[e],
        WriterOptions {
            templates: false,
            ..Default::default()
        },
    ));
    assert_eq!(back[0].1["Event"]["EventData"]["Strings"], "a,b");
}

#[test]
fn null_and_empty_values() {
    let e = event(
        1,
        1,
        vec![("Null", Value::Null), ("Empty", Value::from(""))],
    );
    for templates in [true, false] {
        let back = read_json(write(
            [&e],
            WriterOptions {
                templates,
                ..Default::default()
            },
        ));
        assert_eq!(back[0].1, e.to_json());
        assert_eq!(back[0].1["Event"]["EventData"]["Null"], "");
    }
}

#[test]
fn many_chunks_with_ids_times_and_templates() {
    let n = 20_000u64;
    let events: Vec<Event> = (0..n)
        .map(|i| {
            let mut e = event(
                [4624, 4688, 4634][i as usize % 3],
                1000 + i,
                vec![
                    ("Index", Value::U64(i)),
                    ("Text", Value::from("x".repeat((i % 300) as usize))),
                ],
            );
            if i % 7 == 0 {
                // A different shape now and then.
                e.root
                    .children
                    .push(Node::Element(Element::new("Extra").text("y")));
            }
            e
        })
        .collect();
    let mut out = std::io::Cursor::new(Vec::new());
    let opts = WriterOptions {
        first_record_id: 500,
        assign_event_record_ids: true,
        ..Default::default()
    };
    let stats = write_events_with(&events, &mut out, opts).unwrap();
    assert_eq!(stats.records, n);
    assert!(stats.chunks > 20, "{stats:?}");
    // Two shapes (with and without <Extra>), defined again in every chunk.
    assert_eq!(stats.template_definitions, stats.chunks * 2);
    let bytes = out.into_inner();
    assert_eq!(bytes.len() as u64, 4096 + 65536 * stats.chunks);
    assert_eq!(stats.bytes, bytes.len() as u64);
    let back = read_json(bytes.clone());
    assert_eq!(back.len() as u64, n);
    for (i, (id, j)) in back.iter().enumerate() {
        assert_eq!(*id, 500 + i as u64);
        assert_eq!(j["Event"]["System"]["EventRecordID"], json!(500 + i as u64));
        assert_eq!(j["Event"]["EventData"]["Index"], json!(i));
    }
    let p = evtx::EvtxParser::from_buffer(bytes).unwrap();
    let h = p.header();
    assert_eq!(h.next_record_id, 500 + n);
    assert_eq!(u64::from(h.chunk_count), stats.chunks);
    assert_eq!(h.last_chunk_number, stats.chunks - 1);
    assert_eq!(
        (h.major_version, h.minor_version, h.header_block_size),
        (3, 1, 4096)
    );
    assert!(h.flags.is_empty());
}

#[test]
fn record_header_time_is_time_created() {
    let e = event(1, 1, vec![]);
    let mut out = std::io::Cursor::new(Vec::new());
    write_events_with([&e], &mut out, WriterOptions::default()).unwrap();
    let mut p = evtx::EvtxParser::from_buffer(out.into_inner()).unwrap();
    let r = p.records().next().unwrap().unwrap();
    assert_eq!(r.timestamp.to_string(), "2024-03-12T09:14:02.2555113Z");
}

#[test]
fn dirty_flag() {
    let bytes = write(
        &[event(1, 1, vec![])],
        WriterOptions {
            dirty: true,
            ..Default::default()
        },
    );
    let p = evtx::EvtxParser::from_buffer(bytes.clone()).unwrap();
    assert!(p.header().flags.contains(evtx::HeaderFlags::DIRTY));
    assert!(p.header().validate_checksum());
    assert_eq!(read_json(bytes).len(), 1);
}

#[test]
fn empty_file() {
    let bytes = write([], WriterOptions::default());
    assert_eq!(bytes.len(), 4096);
    assert!(read_json(bytes).is_empty());
}

#[test]
fn other_shapes_are_plain_elements() {
    let e = Event::from_xml(r#"<Thing a="1"><Sub>text</Sub><Sub>two</Sub><E/><F x="y"/></Thing>"#)
        .unwrap();
    let u = Event::from_xml(
        r#"<Event xmlns="http://schemas.microsoft.com/win/2004/08/events/event"><System><EventID>1102</EventID><Channel>Security</Channel></System><UserData><LogFileCleared xmlns="http://manifests.microsoft.com/win/2004/08/windows/eventlog"><SubjectUserSid>S-1-5-21-1-2-3-500</SubjectUserSid><SubjectUserName>admin</SubjectUserName></LogFileCleared></UserData></Event>"#,
    )
    .unwrap();
    let back = read_json(write([&e, &u], WriterOptions::default()));
    assert_eq!(back[0].1, e.to_json());
    assert_eq!(
        back[0].1,
        json!({"Thing_attributes": {"a": "1"}, "Thing": {"Sub": "text", "Sub_1": "two", "E": null, "F_attributes": {"x": "y"}}})
    );
    assert_eq!(back[1].1, u.to_json());
    assert_eq!(
        back[1].1["Event"]["UserData"]["LogFileCleared"]["SubjectUserName"],
        "admin"
    );
}

#[test]
fn unnamed_data() {
    let e = Event::from_xml(r#"<Event><System><EventID>1</EventID></System><EventData><Data>u1</Data><Data>u2</Data><Data></Data></EventData></Event>"#).unwrap();
    let back = read_json(write([&e], WriterOptions::default()));
    assert_eq!(back[0].1, e.to_json());
    assert_eq!(
        back[0].1["Event"]["EventData"]["Data"]["#text"],
        json!(["u1", "u2", ""])
    );
    assert_eq!(Event::from_json(&back[0].1).unwrap().to_json(), back[0].1);
}

#[test]
fn demo_attack_events_round_trip() {
    let text = include_str!("../../../testdata/demo/attack.jsonl");
    let events: Vec<Event> = text
        .lines()
        .map(|l| Event::from_json_str(l).unwrap())
        .collect();
    let back = read_json(write(&events, WriterOptions::default()));
    assert_eq!(back.len(), events.len());
    for (((_, got), line), e) in back.iter().zip(text.lines()).zip(&events) {
        assert_eq!(got, &e.to_json());
        // The source, up to time precision and one thing the reader renders differently:
        // an empty element outside EventData (`"BackupPath": ""`) reads back as null.
        let source: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(
            normalize_times(got),
            empty_as_null(&normalize_times(&source))
        );
    }
}

fn empty_as_null(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value as J;
    match v {
        J::Object(m) => J::Object(
            m.iter()
                .map(|(k, v)| match v {
                    J::Object(_) if k == "EventData" => (k.clone(), v.clone()),
                    J::String(s) if s.is_empty() => (k.clone(), J::Null),
                    _ => (k.clone(), empty_as_null(v)),
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

#[test]
fn json_keeps_field_order() {
    let line = r#"{"Event":{"System":{"EventID":1},"EventData":{"Zeta":"1","Alpha":"2","Mid":3}}}"#;
    let e = Event::from_json_str(line).unwrap();
    let names: Vec<String> = e
        .root
        .find("EventData")
        .unwrap()
        .elements()
        .map(|d| d.attribute("Name").unwrap().render())
        .collect();
    assert_eq!(names, ["Zeta", "Alpha", "Mid"]);
    let xml = read_xml(write([&e], WriterOptions::default()));
    assert!(xml[0].find("Zeta").unwrap() < xml[0].find("Alpha").unwrap());
}

#[test]
fn bad_input_is_an_error_not_a_panic() {
    for bad in [
        "",
        "[]",
        "1",
        "{}",
        r#"{"a":1,"b":2}"#,
        r#"{"Event":{"EventData":{"X":{"Y":1}}}}"#,
        r#"{"Event":{"EventData":{"X":[1,"a"]}}}"#,
        r#"{"Event":{"EventData":{"X":[[1]]}}}"#,
        r#"{"Event":{"X_attributes":[1]}}"#,
        r#"{"Event":{"EventData":{"Data":{"Z":1}}}}"#,
        "{\"Event\":",
    ] {
        assert!(Event::from_json_str(bad).is_err(), "{bad}");
    }
    // Values the format can't hold.
    let too_big = event(1, 1, vec![("Big", Value::from("x".repeat(40_000)))]);
    let mut out = std::io::Cursor::new(Vec::new());
    let mut w = EvtxWriter::new(&mut out, WriterOptions::default()).unwrap();
    assert!(matches!(w.write(&too_big), Err(Error::RecordTooLarge)));
    let bad_array = event(
        1,
        1,
        vec![("A", Value::Array(vec![Value::U8(1), Value::from("x")]))],
    );
    assert!(matches!(w.write(&bad_array), Err(Error::InvalidValue(_))));
    let bad_name = Event {
        root: Element::new(""),
    };
    assert!(matches!(w.write(&bad_name), Err(Error::InvalidName(_))));
    // The writer is still usable after errors.
    w.write(&event(1, 1, vec![])).unwrap();
    let stats = w.finish().unwrap();
    assert_eq!(stats.records, 1);
    assert_eq!(read_json(out.into_inner()).len(), 1);
}

#[test]
fn generated_logs_read_back_cleanly_with_ids_in_step() {
    let mut out = std::io::Cursor::new(Vec::new());
    let truth = generate(5000, 3, &mut out).unwrap();
    assert_eq!(truth.stats.records, 5000);
    let back = read_json(out.into_inner());
    assert_eq!(back.len(), 5000);
    for (i, (id, j)) in back.iter().enumerate() {
        assert_eq!(*id, i as u64 + 1);
        assert_eq!(j["Event"]["System"]["EventRecordID"], json!(i as u64 + 1));
    }
    assert!(!truth.planted.is_empty());
    for p in &truth.planted {
        assert!(!p.rule_ids.is_empty());
        assert!(p.record_id >= 1 && p.record_id <= 5000);
    }
}

#[test]
fn event_data_nested_as_an_instance_of_its_own_reads_as_in_one_template() {
    let user_data = Event {
        root: Element::new("Event")
            .attr("xmlns", EVENT_NS)
            .child(system(1102, 3))
            .child(
                Element::new("UserData")
                    .child(Element::new("LogFileCleared").child(Element::new("User").text("a"))),
            ),
    };
    let bare = Event {
        root: Element::new("Event")
            .attr("xmlns", EVENT_NS)
            .child(system(1100, 4)),
    };
    let events = [
        event(4688, 1, scalars()),
        event(
            4624,
            2,
            vec![("User", Value::from("b")), ("Null", Value::Null)],
        ),
        user_data,
        bare,
    ];
    let nested = WriterOptions {
        nested_event_data: true,
        ..Default::default()
    };
    let (flat, back) = (
        read_json(write(&events, WriterOptions::default())),
        read_json(write(&events, nested.clone())),
    );
    assert_eq!(back, flat);
    assert_eq!(back[1].1["Event"]["EventData"]["User"], "b");
    assert_eq!(back[3].1["Event"].get("EventData"), None);
    // The root's template is shared: four definitions (root, two EventData, UserData).
    let mut out = std::io::Cursor::new(Vec::new());
    let stats = write_events_with(&events, &mut out, nested).unwrap();
    assert_eq!(stats.template_definitions, 4);
}
