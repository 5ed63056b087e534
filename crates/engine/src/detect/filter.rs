//! Record-level filters applied before detection: a time range, EventIDs to keep or
//! drop, computers to keep or drop. A record a filter drops is read and counted, but
//! no rule sees it. With no filter set the detector holds `None` and pays one branch
//! per record.

use crate::detect::OutputFields;
use jiff::Timestamp;
use scanner_input::RecordView;
use scanner_rules::EVENT_ID;
use std::collections::HashSet;

/// Which records the rules see.
#[derive(Debug, Clone, Default)]
pub struct RecordFilter {
    /// Records before this time are dropped.
    pub start: Option<Timestamp>,
    /// Records after this time are dropped.
    pub end: Option<Timestamp>,
    /// When set, only these EventIDs are kept.
    pub include_eids: Option<HashSet<String>>,
    /// These EventIDs are dropped.
    pub exclude_eids: HashSet<String>,
    /// When set, only these computers (lowercase) are kept.
    pub include_computers: Option<HashSet<String>>,
    /// These computers (lowercase) are dropped.
    pub exclude_computers: HashSet<String>,
}

impl RecordFilter {
    /// Whether the filter keeps every record.
    pub fn is_empty(&self) -> bool {
        self.start.is_none()
            && self.end.is_none()
            && self.include_eids.is_none()
            && self.exclude_eids.is_empty()
            && self.include_computers.is_none()
            && self.exclude_computers.is_empty()
    }

    /// Whether the rules see this record. A record without a readable time is kept
    /// only when no time range is set.
    pub(crate) fn keeps(&self, view: &RecordView, out: &OutputFields) -> bool {
        if self.include_eids.is_some() || !self.exclude_eids.is_empty() {
            let eid = view.first(EVENT_ID).unwrap_or("");
            if self.exclude_eids.contains(eid) {
                return false;
            }
            if let Some(inc) = &self.include_eids {
                if !inc.contains(eid) {
                    return false;
                }
            }
        }
        if self.include_computers.is_some() || !self.exclude_computers.is_empty() {
            let c = view.first(out.computer).unwrap_or("").to_lowercase();
            if self.exclude_computers.contains(&c) {
                return false;
            }
            if let Some(inc) = &self.include_computers {
                if !inc.contains(&c) {
                    return false;
                }
            }
        }
        if self.start.is_some() || self.end.is_some() {
            let Some(t) = view
                .first(out.time)
                .and_then(scanner_input::parse_timestamp)
            else {
                return false;
            };
            if self.start.is_some_and(|s| t < s) || self.end.is_some_and(|e| t > e) {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_input::Flattener;
    use scanner_rules::FieldTable;

    fn record(t: &FieldTable, eid: u32, computer: &str, time: &str) -> RecordView {
        let json = format!(
            r#"{{"Event":{{"System":{{"EventID":{eid},"Computer":"{computer}","TimeCreated_attributes":{{"SystemTime":"{time}"}}}}}}}}"#
        );
        let mut v = RecordView::default();
        Flattener::default().fill(&json, t, &mut v).unwrap();
        v
    }

    #[test]
    fn filters_by_eid_computer_and_time() {
        let mut set = scanner_rules::load(&[], &Default::default());
        let out = crate::detect::prepare(&mut set, true, None).out;
        let t = set.fields();
        let a = record(t, 4624, "DC01", "2020-01-02T00:00:00Z");
        let b = record(t, 4688, "ws7", "2021-06-01T12:00:00Z");
        assert!(RecordFilter::default().is_empty());
        let f = RecordFilter {
            include_eids: Some(["4624".to_string()].into()),
            ..Default::default()
        };
        assert!(f.keeps(&a, &out) && !f.keeps(&b, &out));
        let f = RecordFilter {
            exclude_computers: ["dc01".to_string()].into(),
            ..Default::default()
        };
        assert!(!f.keeps(&a, &out) && f.keeps(&b, &out));
        let f = RecordFilter {
            start: Some("2021-01-01T00:00:00Z".parse().unwrap()),
            ..Default::default()
        };
        assert!(!f.keeps(&a, &out) && f.keeps(&b, &out));
        let f = RecordFilter {
            end: Some("2021-01-01T00:00:00Z".parse().unwrap()),
            ..Default::default()
        };
        assert!(f.keeps(&a, &out) && !f.keeps(&b, &out));
    }
}
