//! Classic PowerShell events (channel `Windows PowerShell`, EventIDs 400, 403, 600 and
//! 800) hold their details in one unnamed `Data` element, `key=value` lines separated by
//! a newline and a tab. As Hayabusa does, that element (the third, the second for 800) is
//! split into fields of their own (`HostApplication`, `HostName`, `EngineVersion`, …)
//! that rules and Details read like any `EventData` field.

use scanner_input::RecordView;
use scanner_rules::FieldTable;

const CHANNEL: &str = "Windows PowerShell";
const DATA_PATH: &str = "Event.EventData.Data";
const PREFIX: &str = "Event.EventData.";

/// The (1-based) `Data` element holding the `key=value` lines of an EventID, if it has one.
fn data_index(event_id: &str) -> Option<usize> {
    match event_id {
        "400" | "403" | "600" => Some(3),
        "800" => Some(2),
        _ => None,
    }
}

/// Buffers reused from record to record.
#[derive(Debug, Default)]
pub(crate) struct PwshScratch {
    text: String,
    path: String,
}

/// Adds the fields of a classic PowerShell event's `key=value` element to `view`; other
/// records are left as they are (one comparison of the channel).
pub(crate) fn extract(view: &mut RecordView, table: &FieldTable, s: &mut PwshScratch) {
    if view.first(scanner_rules::CHANNEL) != Some(CHANNEL) {
        return;
    }
    let Some(n) = view.first(scanner_rules::EVENT_ID).and_then(data_index) else {
        return;
    };
    let Some(text) = view.values_at(DATA_PATH).nth(n - 1) else {
        return;
    };
    s.text.clear();
    s.text.push_str(text);
    let mut pushed = false;
    for line in s.text.trim().split("\n\t") {
        let line = line.trim_end_matches("\r\n").trim_end_matches('\r');
        let Some((key, value)) = line.split_once('=') else {
            continue;
        };
        s.path.clear();
        s.path.push_str(PREFIX);
        s.path.push_str(key);
        view.push(table, &s.path, value);
        pushed = true;
    }
    if pushed {
        // The leaves no longer follow the record's template alone.
        view.forget_paths_id();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_input::Flattener;

    fn view(t: &FieldTable, json: &str) -> RecordView {
        let mut v = RecordView::default();
        Flattener::default().fill(json, t, &mut v).unwrap();
        v
    }

    #[test]
    fn the_key_value_element_becomes_fields() {
        let mut t = FieldTable::new();
        let host = t.intern("HostApplication");
        let state = t.intern("NewEngineState");
        let json = |eid: u32, data: &str| {
            format!(
                r#"{{"Event":{{"System":{{"Channel":"Windows PowerShell","EventID":{eid}}},"EventData":{{"Data":{data}}}}}}}"#
            )
        };
        let lines = r#""NewEngineState=Available\n\tHostName=ConsoleHost\n\tHostApplication=powershell.exe -nop -c a=b\r\n""#;
        let mut s = PwshScratch::default();
        let mut v = view(&t, &json(400, &format!(r#"["Available","None",{lines}]"#)));
        extract(&mut v, &t, &mut s);
        assert_eq!(v.first(state), Some("Available"));
        assert_eq!(v.first(host), Some("powershell.exe -nop -c a=b"));
        assert_eq!(
            v.values_at("Event.EventData.HostName").next(),
            Some("ConsoleHost")
        );
        // 800 reads the second element.
        let mut v = view(&t, &json(800, &format!(r#"["x",{lines},"None"]"#)));
        extract(&mut v, &t, &mut s);
        assert_eq!(v.first(state), Some("Available"));
        // Other events, and a missing element, are left alone.
        let mut v = view(&t, &json(4104, &format!(r#"["a","b",{lines}]"#)));
        extract(&mut v, &t, &mut s);
        assert_eq!(v.first(state), None);
        let mut v = view(&t, &json(400, r#"["Available","None"]"#));
        let before = v.len();
        extract(&mut v, &t, &mut s);
        assert_eq!(v.len(), before);
    }
}
