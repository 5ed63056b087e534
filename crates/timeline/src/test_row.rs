//! A timeline row for the unit tests, built by hand.

use jiff::Timestamp;
use scanner_engine::{DetectInfo, Items, Origin, RuleRef};

/// A row of rule 0 for record `record_id` of input file 0, at `secs` past the epoch,
/// Details `n: <record_id>`.
pub(crate) fn row(secs: i64, record_id: u64) -> DetectInfo {
    DetectInfo {
        time: Timestamp::new(secs, 0).unwrap(),
        rule: RuleRef::Rule(0),
        recovered: false,
        origin: Origin::Record { file: 0, record_id },
        computer: "host".into(),
        channel: "Security".into(),
        event_id: "4624".into(),
        provider: "Microsoft-Windows-Security-Auditing".into(),
        details: Items::of([format!("n: {record_id}").as_str()]),
        extra: None,
        all_fields: None,
        geo: None,
    }
}
