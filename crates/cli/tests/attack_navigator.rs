//! `--attack-navigator FILE`: the layer of a timeline run scores each technique by the
//! detections of the rules tagged with it, as the timeline's own MitreTags column
//! counts them, and carries the fields a Navigator layer 4.5 has.

mod support;

use std::collections::BTreeMap;
use support::{scanner_utc, scratch, succeeded};

#[test]
fn techniques_are_scored_by_the_detections_the_timeline_shows() {
    let d = scratch("attack-navigator");
    let log = d.join("generated.evtx");
    let file = std::fs::File::create(&log).unwrap();
    scanner_evtx_writer::generate(4000, 5, std::io::BufWriter::new(file)).unwrap();
    let (l, csv, layer) = (
        log.display().to_string(),
        d.join("t.csv").display().to_string(),
        d.join("layer.json").display().to_string(),
    );
    let args = [
        "csv-timeline",
        "-f",
        &l,
        "--builtin-rules",
        "-p",
        "verbose",
        "-q",
        "-U",
        "-o",
        &csv,
        "--attack-navigator",
        &layer,
    ];
    succeeded(&args, scanner_utc(&args));
    // Per technique, the rows whose MitreTags name it.
    let mut want: BTreeMap<String, u64> = BTreeMap::new();
    let mut rows = csv::Reader::from_path(&csv).unwrap();
    let column = rows
        .headers()
        .unwrap()
        .iter()
        .position(|h| h == "MitreTags")
        .unwrap();
    let mut n = 0;
    for row in rows.records() {
        n += 1;
        for tag in row.unwrap()[column].split('¦').map(str::trim) {
            if tag.starts_with('T') && tag[1..].chars().next().is_some_and(|c| c.is_ascii_digit()) {
                *want.entry(tag.to_string()).or_default() += 1;
            }
        }
    }
    // Closed before the folder is removed: on Windows an open file keeps its name.
    drop(rows);
    assert!(n > 20 && want.len() > 5, "{n} rows, {want:?}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&layer).unwrap()).unwrap();
    assert_eq!(v["versions"]["layer"], "4.5");
    assert_eq!(v["domain"], "enterprise-attack");
    let got: BTreeMap<String, u64> = v["techniques"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let id = t["techniqueID"].as_str().unwrap().to_string();
            let score = t["score"].as_u64().unwrap();
            let comment = t["comment"].as_str().unwrap();
            assert!(
                comment.starts_with(&format!("{score} detections by ")),
                "{comment}"
            );
            assert!(!t["metadata"].as_array().unwrap().is_empty());
            (id, score)
        })
        .collect();
    assert_eq!(got, want);
    assert_eq!(
        v["gradient"]["maxValue"].as_u64(),
        want.values().max().copied()
    );
    // An output that exists is not written over without -C.
    let again = scanner_utc(&args);
    assert_eq!(again.status.code(), Some(1));
    std::fs::remove_dir_all(&d).unwrap();
}
