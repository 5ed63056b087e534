//! The project's demo intrusion (`testdata/demo/attack.jsonl`), whose events the
//! generator plants among the background, each with the built-in rules
//! `testdata/demo/expected.tsv` lists for it (its decoys, which fire nothing, too).

use super::world::sysmon_time;
use crate::error::Error;
use crate::event::{Event, Node};
use crate::value::Value;
use std::collections::HashMap;

const DEMO_EVENTS: &str = include_str!("../../../../testdata/demo/attack.jsonl");
const DEMO_EXPECTED: &str = include_str!("../../../../testdata/demo/expected.tsv");

/// One event of the demo and the rules it fires.
#[derive(Clone)]
pub(super) struct DemoEvent {
    /// The event as the demo has it; [`restamp`] gives it the log's time and record id.
    pub event: Event,
    /// The ids of the built-in rules it fires, sorted, without repeats.
    pub rules: Vec<String>,
}

/// The demo's events in order, each with its rules.
pub(super) fn demo_events() -> Result<Vec<DemoEvent>, Error> {
    let mut expected: HashMap<u64, Vec<String>> = HashMap::new();
    for line in DEMO_EXPECTED.lines().filter(|l| !l.trim().is_empty()) {
        let (id, rule) = line
            .split_once('\t')
            .ok_or_else(|| Error::Json(format!("bad expected.tsv line {line:?}")))?;
        let id = id
            .parse()
            .map_err(|_| Error::Json(format!("bad record id {id:?}")))?;
        expected.entry(id).or_default().push(rule.trim().to_owned());
    }
    let mut demo = Vec::new();
    for line in DEMO_EVENTS.lines().filter(|l| !l.trim().is_empty()) {
        let event = Event::from_json_str(line)?;
        let id = event
            .event_record_id()
            .ok_or_else(|| Error::Json("demo event without EventRecordID".into()))?;
        let mut rules = expected.remove(&id).unwrap_or_default();
        rules.sort();
        rules.dedup();
        demo.push(DemoEvent { event, rules });
    }
    Ok(demo)
}

/// Gives a demo event the generator's time (`System/TimeCreated` and Sysmon's
/// `UtcTime`) and record id.
pub(super) fn restamp(e: &mut Event, time: u64, id: u64) {
    e.set_event_record_id(id);
    let utc = sysmon_time(time);
    for c in &mut e.root.children {
        let Node::Element(part) = c else { continue };
        for c in &mut part.children {
            let Node::Element(x) = c else { continue };
            if x.name == "TimeCreated" {
                for a in &mut x.attributes {
                    if a.name == "SystemTime" {
                        a.value = Value::FileTime(time);
                    }
                }
            } else if x.name == "Data"
                && matches!(x.attribute("Name"), Some(Value::String(n)) if n == "UtcTime")
            {
                x.children = vec![Node::Value(Value::String(utc.clone()))];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_demo_event_is_planted_with_its_rules() {
        let demo = demo_events().unwrap();
        assert!(demo.len() >= 60);
        let firing = demo.iter().filter(|d| !d.rules.is_empty()).count();
        let rows: usize = demo.iter().map(|d| d.rules.len()).sum();
        assert_eq!(
            rows,
            DEMO_EXPECTED
                .lines()
                .filter(|l| !l.trim().is_empty())
                .count()
        );
        assert!(firing > 40);
    }

    #[test]
    fn restamping_sets_the_time_and_id_everywhere() {
        let demo = demo_events().unwrap();
        let sysmon = demo
            .iter()
            .find(|d| d.event.channel().as_deref() == Some("Microsoft-Windows-Sysmon/Operational"))
            .unwrap();
        let mut e = sysmon.event.clone();
        // 2024-03-12T09:14:16.5305330Z
        restamp(&mut e, 133_547_084_565_305_330, 4242);
        assert_eq!(e.event_record_id(), Some(4242));
        assert_eq!(e.time_created(), Some(133_547_084_565_305_330));
        let utc = e
            .root
            .find("EventData")
            .unwrap()
            .elements()
            .find(|d| d.attribute("Name") == Some(&Value::from("UtcTime")))
            .unwrap();
        assert_eq!(utc.value(), Some(&Value::from("2024-03-12 09:14:16.530")));
    }
}
