//! The typed record path fills exactly the leaves that flattening the JSON rendering
//! fills, on logs written here: a generated log, and events of unusual shapes and value
//! types, each also with its event data nested as an instance of its own template (as
//! in logs Windows exports). It must also be the path most records take, and a record
//! replayed from a leaf plan must fill what resolving and walking it fills.

use scanner_evtx_writer::{generate, write_events, write_events_with, Element, Event, Value};
use scanner_evtx_writer::{Generator, WriterOptions};
use scanner_evtx_writer::{Guid, Sid, SysTime};
use scanner_input::Flattener;
use scanner_input::RecordView;
use scanner_input::TypedState;
use scanner_rules::{Event as _, FieldId, FieldTable};
use std::io::Cursor;
use std::sync::Arc;

#[derive(Debug, Default)]
struct Tally {
    records: u64,
    typed: u64,
    /// Typed records filled from a leaf plan.
    replayed: u64,
    mismatches: Vec<String>,
}

/// Fills every record of `log` both ways and compares the ordered leaves.
fn compare(log: Vec<u8>, state: &mut TypedState) -> Tally {
    compare_with(log, state, &FieldTable::new())
}

/// A field table with `names` interned in that order.
fn table_of(names: &[&str]) -> FieldTable {
    let mut t = FieldTable::new();
    for n in names {
        t.intern(n);
    }
    t
}

/// The (raw, lowercase) values field `f` links to in `v`.
fn linked(v: &RecordView, f: FieldId) -> Vec<(&str, &str)> {
    v.values(f).map(|x| (x.raw, x.lower)).collect()
}

/// Whether the typed view has the leaves of the view flattened from the JSON rendering,
/// which writes `null` for an element with no content as for an empty value and so
/// lists it as an empty value: the typed path finds those elements with no content
/// among its empty values.
fn same_leaves(typed: &RecordView, json: &RecordView) -> bool {
    let empty: Vec<&str> = typed.empty_elements().collect();
    let listed = json
        .leaves()
        .filter(|(p, v)| !(v.is_empty() && empty.contains(p)));
    json.empty_elements().next().is_none()
        && typed.leaves().eq(listed)
        && empty
            .iter()
            .all(|e| json.leaves().any(|(p, v)| p == *e && v.is_empty()))
}

/// Whether two typed views hold the same leaves and elements with no content, in the
/// same order, and link the same values to every field of `table`.
fn same_typed(a: &RecordView, b: &RecordView, table: &FieldTable) -> bool {
    a.leaves_and_empty_elements()
        .eq(b.leaves_and_empty_elements())
        && (0..table.len() as FieldId).all(|f| linked(a, f) == linked(b, f))
}

/// Like [`compare`], and every field of `table` must hold the same values both ways.
/// A record filled from a leaf plan must fill what a fresh state, which resolves and
/// walks it, fills.
fn compare_with(log: Vec<u8>, state: &mut TypedState, table: &FieldTable) -> Tally {
    let settings = Arc::new(scanner_input::settings());
    let parser = evtx::EvtxParser::from_buffer(log).expect("an EVTX log");
    let mut parser = parser.with_configuration((*settings).clone());
    let mut flat = Flattener::default();
    let (mut typed, mut json) = (RecordView::default(), RecordView::default());
    let mut walked = RecordView::default();
    let mut t = Tally::default();
    for chunk in parser.chunks() {
        let mut data = chunk.expect("a chunk");
        let mut chunk = data.parse(Arc::clone(&settings)).expect("a parsed chunk");
        state.begin_chunk();
        for r in chunk.iter() {
            let r = r.expect("a record");
            t.records += 1;
            let prepared = state.prepare(&r);
            let id = r.event_record_id;
            let replayed = prepared && state.planned();
            if replayed {
                t.replayed += 1;
                let mut fresh = TypedState::default();
                fresh.begin_chunk();
                assert!(
                    fresh.prepare(&r),
                    "record {id}: a plan for a record not covered"
                );
                fresh.fill(table, &mut walked);
            }
            let rendered = r.into_json().expect("JSON").data;
            flat.fill(&rendered, table, &mut json).expect("flattened");
            if !prepared {
                continue;
            }
            t.typed += 1;
            state.fill(table, &mut typed);
            if replayed && !same_typed(&typed, &walked, table) {
                let a: Vec<_> = typed.leaves_and_empty_elements().collect();
                let b: Vec<_> = walked.leaves_and_empty_elements().collect();
                t.mismatches
                    .push(format!("record {id} replayed\n plan {a:?}\n walk {b:?}"));
            }
            let fields = 0..table.len() as FieldId;
            if !same_leaves(&typed, &json)
                || fields
                    .clone()
                    .any(|f| linked(&typed, f) != linked(&json, f))
            {
                let a: Vec<_> = typed.leaves().collect();
                let b: Vec<_> = json.leaves().collect();
                let (ea, eb): (Vec<_>, Vec<_>) = (
                    typed.empty_elements().collect(),
                    json.empty_elements().collect(),
                );
                t.mismatches.push(format!(
                    "record {id}: {rendered}\n typed {a:?} {ea:?}\n json  {b:?} {eb:?}"
                ));
            }
        }
    }
    t
}

fn log_of(events: &[Event]) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    write_events(events, &mut out).expect("written");
    out.into_inner()
}

/// `events` written with each event's `EventData` or `UserData` an instance of a
/// template of its own, held by a BinXML value of the root's instance (null for an
/// event with neither), as in logs Windows exports.
fn nested_log_of(events: &[Event]) -> Vec<u8> {
    let mut out = Cursor::new(Vec::new());
    let options = WriterOptions {
        nested_event_data: true,
        ..Default::default()
    };
    write_events_with(events, &mut out, options).expect("written");
    out.into_inner()
}

/// `<Event><System>…</System>{data}</Event>`.
fn event(id: u16, data: Element) -> Event {
    let system = Element::new("System")
        .child(Element::new("Provider").attr("Name", "Test-Provider"))
        .child(Element::new("EventID").text(Value::U16(id)))
        .child(
            Element::new("TimeCreated")
                .attr("SystemTime", Value::FileTime(133_000_000_000_000_000)),
        )
        .child(Element::new("EventRecordID").text(Value::U64(u64::from(id))))
        .child(Element::new("Channel").text("Security"))
        .child(Element::new("Computer").text("HOST"))
        .child(
            Element::new("Security").attr("UserID", Value::Sid(Sid::parse("S-1-5-18").unwrap())),
        );
    let root = Element::new("Event")
        .attr("xmlns", scanner_evtx_writer::EVENT_NS)
        .child(system)
        .child(data);
    Event { root }
}

fn named(name: &str, v: impl Into<Value>) -> Element {
    Element::new("Data").attr("Name", name).text(v)
}

/// Events of the shapes and value types the typed path must get right.
fn unusual_events() -> Vec<Event> {
    let strings =
        |items: &[&str]| Value::Array(items.iter().map(|s| Value::String(s.to_string())).collect());
    let guid = Guid::parse("{01234567-89ab-cdef-0123-456789abcdef}").unwrap();
    let mut events = vec![
        // Every scalar type, named.
        event(
            1,
            Element::new("EventData")
                .child(named("I8", Value::I8(-5)))
                .child(named("U8", Value::U8(200)))
                .child(named("I16", Value::I16(-300)))
                .child(named("I32", Value::I32(-70_000)))
                .child(named("U32", Value::U32(4_000_000_000)))
                .child(named("I64", Value::I64(i64::MIN)))
                .child(named("U64", Value::U64(u64::MAX)))
                .child(named("Bool", Value::Bool(true)))
                .child(named("Binary", Value::Binary(vec![0, 1, 0xab, 0xff])))
                .child(named("Empty", Value::Binary(vec![])))
                .child(named("Guid", Value::Guid(guid)))
                .child(named("Hex32", Value::Hex32(0x1fc)))
                .child(named("Hex64", Value::Hex64(0xdead_beef_0000)))
                .child(named("Ansi", Value::AnsiString("ansi text".into())))
                .child(named(
                    "Sid",
                    Value::Sid(Sid::parse("S-1-5-21-1-2-3-500").unwrap()),
                ))
                .child(named(
                    "Sys",
                    Value::SysTime(SysTime::parse("2024-02-29T23:59:58.123Z").unwrap()),
                ))
                .child(named("Old", Value::FileTime(0)))
                .child(named("Null", Value::Null))
                .child(named("Blank", " padded ")),
        ),
        // A float: left to JSON.
        event(
            7,
            Element::new("EventData").child(named("Float", Value::F64(1.5))),
        ),
        // Positional Data, arrays of strings (repeated elements), an empty item.
        event(
            2,
            Element::new("EventData")
                .child(Element::new("Data").text(strings(&["a", "", "c"])))
                .child(Element::new("Data").text("plain"))
                .child(Element::new("Binary").text(Value::Binary(vec![1, 2]))),
        ),
        // An array in a named Data (repeated names), and a one-item array.
        event(
            3,
            Element::new("EventData")
                .child(named("List", strings(&["x", "y"])))
                .child(named("One", strings(&["only"]))),
        ),
        // UserData: nested elements, repeated names, attributes only, empty elements.
        event(
            4,
            Element::new("UserData").child(
                Element::new("LogFileCleared")
                    .attr(
                        "xmlns",
                        "http://manifests.microsoft.com/win/2004/08/windows/eventlog",
                    )
                    .child(Element::new("SubjectUserName").text("Bob"))
                    .child(Element::new("Item").text("one"))
                    .child(Element::new("Item").text("two"))
                    .child(Element::new("Item").attr("Kind", "attr-only"))
                    .child(Element::new("Empty"))
                    .child(Element::new("Item").child(Element::new("Deep").text(Value::U32(7)))),
            ),
        ),
        // Named and unnamed Data together, a Data with an empty name, a duplicate name.
        event(
            5,
            Element::new("EventData")
                .child(named("A", "1"))
                .child(Element::new("Data").text("unnamed"))
                .child(named("", "empty name"))
                .child(named("A", "2")),
        ),
        // Mixed text and elements, text around children.
        event(
            6,
            Element::new("EventData")
                .text("lead")
                .child(named("X", "x"))
                .text(Value::U32(9)),
        ),
    ];
    // An element with no content, and one whose value is empty (still an empty value);
    // an empty Data (an empty value, not one without content); an empty container.
    events.push(event(
        8,
        Element::new("EventData")
            .child(Element::new("Param1").text("x"))
            .child(Element::new("Param2"))
            .child(Element::new("Param3").text(""))
            .child(Element::new("Data")),
    ));
    events.push(event(9, Element::new("EventData")));
    events.push(event(
        10,
        Element::new("UserData").child(Element::new("Log").child(Element::new("Param2"))),
    ));
    // An event without the usual shape: plain BinXML, no template.
    events.push(Event {
        root: Element::new("Other").child(Element::new("Thing").text("t")),
    });
    events
}

#[test]
fn generated_log_fills_the_same_leaves_typed() {
    let mut log = Cursor::new(Vec::new());
    generate(3000, 11, &mut log).expect("generated");
    let mut state = TypedState::default();
    let t = compare(log.into_inner(), &mut state);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
    assert_eq!(t.records, 3000);
    assert!(
        t.typed * 100 >= t.records * 95,
        "only {} of {} records took the typed path",
        t.typed,
        t.records
    );
}

#[test]
fn unusual_shapes_and_values_fill_the_same_leaves_typed() {
    let events = unusual_events();
    let mut state = TypedState::default();
    let t = compare(log_of(&events), &mut state);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
    assert_eq!(t.records, events.len() as u64);
    // All but the float, the repeated `Data` names (two events) and the plain record.
    assert_eq!(t.typed, events.len() as u64 - 4);
    // The same events again, with templates cached from the first log.
    let again = compare(log_of(&events), &mut state);
    assert!(
        again.mismatches.is_empty(),
        "{}",
        again.mismatches.join("\n")
    );
    assert_eq!(again.typed, t.typed);
}

#[test]
fn fields_link_alike_when_the_field_table_changes() {
    let mut log = Cursor::new(Vec::new());
    generate(500, 3, &mut log).expect("generated");
    let log = log.into_inner();
    // One state (as a scan thread keeps) serves tables that number fields differently:
    // the ids it keeps for a template's leaves must follow the table.
    let mut state = TypedState::default();
    let names = [
        "CommandLine",
        "Image",
        "ParentImage",
        "TargetUserName",
        "SubjectUserName",
        "Data",
        "ProcessId",
        "Computer",
    ];
    let mut reversed = names;
    reversed.reverse();
    for table in [table_of(&names), table_of(&reversed), table_of(&names[..3])] {
        let t = compare_with(log.clone(), &mut state, &table);
        assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
        assert!(t.typed * 100 >= t.records * 95);
    }
    // A table that gains a field after the state kept ids for it.
    let mut grown = table_of(&names[..2]);
    let t = compare_with(log.clone(), &mut state, &grown);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
    grown.intern("TargetUserName");
    let t = compare_with(log, &mut state, &grown);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
}

#[test]
fn nested_records_fill_the_same_leaves_typed_and_replay_plans() {
    let events = unusual_events();
    let mut state = TypedState::default();
    // One table: plans go when the table changes.
    let table = FieldTable::new();
    let t = compare_with(nested_log_of(&events), &mut state, &table);
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
    // As in one template: all but the float, the repeated `Data` names and the plain
    // record.
    assert_eq!(t.typed, events.len() as u64 - 4);
    let again = compare_with(nested_log_of(&events), &mut state, &table);
    assert!(
        again.mismatches.is_empty(),
        "{}",
        again.mismatches.join("\n")
    );
    assert_eq!(again.typed, t.typed);
    // Every shape was seen before but those with string arrays (two events).
    assert_eq!(again.replayed, again.typed - 2);

    let generated: Vec<Event> = Generator::new(11)
        .expect("a generator")
        .take(3000)
        .map(|(e, _)| e)
        .collect();
    let t = compare(nested_log_of(&generated), &mut TypedState::default());
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
    assert!(t.typed * 100 >= t.records * 95, "{t:?}");
    assert!(t.replayed * 100 >= t.typed * 90, "{t:?}");
}

#[test]
fn a_nested_instance_of_another_template_has_a_plan_of_its_own() {
    // One root template, and values null or empty alike, but nested instances of
    // templates that differ by a name or hold other elements: a plan of one must not
    // stand for another.
    let data = |name: &str, v: String| event(1, Element::new("EventData").child(named(name, v)));
    let user_data = |v: String| {
        let log = Element::new("Log").child(Element::new("User").text(v));
        event(1, Element::new("UserData").child(log))
    };
    let events: Vec<Event> = (0..6)
        .flat_map(|i| {
            [
                data("User", format!("a{i}")),
                data("Target", format!("b{i}")),
                user_data(format!("c{i}")),
            ]
        })
        .collect();
    let t = compare(nested_log_of(&events), &mut TypedState::default());
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
    assert_eq!((t.typed, t.replayed), (18, 15), "the first of each walked");
}

#[test]
fn null_and_empty_nested_values_and_a_null_instance_have_plans_of_their_own() {
    // An attribute whose value is empty is left out, and an element with only such
    // attributes is one with no content; an event without event data holds a null
    // value where the others hold their nested instance.
    let with = |kind: Value, user: Value| {
        let data = Element::new("EventData")
            .child(named("User", user))
            .child(Element::new("Param").attr("Kind", kind));
        event(2, data)
    };
    let bare = || {
        let mut e = event(2, Element::new("EventData"));
        e.root.children.pop();
        e
    };
    let mut events = Vec::new();
    for i in 0..4 {
        events.extend([
            with(Value::from("k"), Value::from(format!("u{i}"))),
            with(Value::from(""), Value::from(format!("u{i}"))),
            bare(),
            with(Value::from("k"), Value::from("")),
            with(Value::Null, Value::Null),
        ]);
    }
    let t = compare(nested_log_of(&events), &mut TypedState::default());
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
    assert_eq!((t.typed, t.replayed), (20, 15), "the first of each walked");
}

#[test]
fn a_data_name_taken_from_a_nested_value_leaves_the_record_without_a_plan() {
    let named_by = |n: u32| {
        let data = Element::new("Data").attr("Name", Value::U32(n)).text("v");
        event(3, Element::new("EventData").child(data))
    };
    let events: Vec<Event> = (0..4).map(named_by).collect();
    let t = compare(nested_log_of(&events), &mut TypedState::default());
    assert!(t.mismatches.is_empty(), "{}", t.mismatches.join("\n"));
    assert_eq!((t.typed, t.replayed), (4, 0));
}

/// Each record `read_evtx` hands over for `log`: its id and its leaves, then its
/// elements with no content (`<path> (no content)`).
fn read_through_source(log: &[u8], typed: bool) -> (Vec<(u64, Vec<String>)>, Vec<String>) {
    let dir = std::env::temp_dir().join(format!("scanner-typed-walk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a temp dir");
    // A file of its own per call: tests run at once on threads of one process.
    static CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let call = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = dir.join(format!("log-{typed}-{call}.evtx"));
    std::fs::write(&path, log).expect("written");
    let table = FieldTable::new();
    let records = std::sync::Mutex::new(Vec::new());
    let errors = std::sync::Mutex::new(Vec::new());
    let read = scanner_input::EvtxRead {
        recover: false,
        typed,
        validate_checksums: false,
    };
    scanner_input::read_evtx(
        &path,
        log.len() as u64,
        read,
        || (Flattener::default(), RecordView::default()),
        |(flat, view), rec| {
            let id = rec.record_id.expect("an EVTX record id");
            rec.content.fill(flat, &table, view).expect("filled");
            let leaves = view
                .leaves()
                .map(|(p, v)| format!("{p}={v}"))
                .chain(view.empty_elements().map(|p| format!("{p} (no content)")))
                .collect();
            records.lock().unwrap().push((id, leaves));
        },
        |e| errors.lock().unwrap().push(e.to_string()),
    );
    std::fs::remove_file(&path).ok();
    let mut records = records.into_inner().unwrap();
    records.sort_by_key(|r| r.0);
    (records, errors.into_inner().unwrap())
}

#[test]
fn chunks_of_typed_and_rendered_records_hand_every_record_once() {
    // Records the typed path covers and records it leaves to JSON, interleaved in the
    // same chunks: the scan's own walk must hand each once, with its id and leaves.
    let mut events = Vec::new();
    for _ in 0..40 {
        events.extend(unusual_events());
    }
    let log = log_of(&events);
    let (typed, typed_errors) = read_through_source(&log, true);
    let (json, json_errors) = read_through_source(&log, false);
    assert!(typed_errors.is_empty(), "{typed_errors:?}");
    assert!(json_errors.is_empty(), "{json_errors:?}");
    assert_eq!(typed.len(), events.len());
    assert!(typed.iter().all(|r| !r.1.is_empty()));
    // The JSON rendering of a record stored with a template writes `null` alike for an
    // element with no content and an empty value: both are listed as empty values.
    let as_rendered = |r: &(u64, Vec<String>)| {
        let mut leaves: Vec<String> =
            r.1.iter()
                .map(|l| match l.strip_suffix(" (no content)") {
                    Some(p) => format!("{p}="),
                    None => l.clone(),
                })
                .collect();
        leaves.sort();
        (r.0, leaves)
    };
    let typed_rendered: Vec<_> = typed.iter().map(as_rendered).collect();
    let json_sorted: Vec<_> = json.iter().map(as_rendered).collect();
    assert_eq!(typed_rendered, json_sorted);
    assert!(json
        .iter()
        .flat_map(|r| &r.1)
        .all(|l| !l.ends_with("(no content)")));
    assert!(typed
        .iter()
        .flat_map(|r| &r.1)
        .any(|l| l.ends_with("(no content)")));
}

#[test]
fn a_record_stored_without_a_template_has_elements_with_no_content() {
    // Without a template, the rendering's `null` can only be an element with no content.
    let data = Element::new("EventData")
        .child(Element::new("Param1").text("one"))
        .child(Element::new("Param2"));
    let mut out = Cursor::new(Vec::new());
    let options = scanner_evtx_writer::WriterOptions {
        templates: false,
        ..Default::default()
    };
    scanner_evtx_writer::write_events_with(&[event(11, data)], &mut out, options).expect("written");
    let log = out.into_inner();
    for typed in [true, false] {
        let (records, errors) = read_through_source(&log, typed);
        assert!(errors.is_empty(), "{errors:?}");
        let leaves = &records[0].1;
        assert!(leaves.contains(&"Event.EventData.Param1=one".to_string()));
        assert!(
            leaves.ends_with(&["Event.EventData.Param2 (no content)".to_string()]),
            "{leaves:?}"
        );
    }
}
