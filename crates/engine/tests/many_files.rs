//! A scan's workers serve many files in turn (they are pooled, not made per file): many
//! copies of one log must give each copy's detections exactly once, as the log alone
//! gives them, with rule statistics and rows handed over mid-scan (a small sort bound)
//! all accounted for.

use scanner_engine::{DetectInfo, Origin, ScannerBuilder};
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::path::Path;

/// The parts of a row that do not depend on which copy it came from.
fn content(r: &DetectInfo) -> String {
    let record_id = match r.origin {
        Origin::Record { record_id, .. } => record_id,
        Origin::Correlation { .. } => u64::MAX,
    };
    format!(
        "{} {} {record_id} {} {} {} {:?} {:?} {:?}",
        r.time,
        r.rule.index(),
        r.computer,
        r.channel,
        r.event_id,
        r.details,
        r.extra,
        r.all_fields
    )
}

fn scan(files: &[InputFile], sort_memory: Option<usize>) -> scanner_engine::ScanResult {
    let set = load(&[RuleSource::Builtin], &LoadOptions::default());
    ScannerBuilder::new()
        .extra_field_info(true)
        .all_field_info(true)
        .rule_stats(true)
        .sort_memory(sort_memory)
        .build(set)
        .scan(files)
        .expect("spilled rows read back")
}

#[test]
fn every_copy_of_a_log_gives_its_detections_once() {
    let dir = tempfile_dir();
    let sources = [
        "demo/attack.jsonl",
        "evtx/generated.evtx",
        "evtx/security.evtx",
        "evtx/generated.jsonl",
    ];
    let testdata = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let one: Vec<InputFile> = sources
        .iter()
        .map(|name| {
            let path = testdata.join(name);
            let size = std::fs::metadata(&path).expect("test log").len();
            InputFile::new(path, size)
        })
        .collect();
    const COPIES: usize = 12;
    // Each copy and the index of its source in `one`.
    let (mut many, mut source_of) = (Vec::new(), Vec::new());
    for i in 0..COPIES {
        for (source, f) in one.iter().enumerate() {
            source_of.push(source);
            let path = dir.join(format!(
                "{i}-{}",
                f.path.file_name().unwrap().to_string_lossy()
            ));
            std::fs::copy(&f.path, &path).expect("copy");
            many.push(InputFile::new(path, f.size));
        }
    }
    let alone = scan(&one, None);
    assert!(alone.errors.is_empty(), "{:?}", alone.errors);
    assert!(alone.rows.len() > 10, "the test logs have detections");
    // 64 KiB: workers hand their rows over many times while they move between files.
    for bound in [None, Some(64 << 10)] {
        let together = scan(&many, bound);
        assert!(together.errors.is_empty(), "{:?}", together.errors);
        assert_eq!(together.stats.records, alone.stats.records * COPIES as u64);
        let mut want: Vec<String> = alone.rows.iter().map(content).collect();
        want = want.iter().flat_map(|r| vec![r.clone(); COPIES]).collect();
        want.sort();
        let mut got: Vec<String> = together.rows.iter().map(content).collect();
        got.sort();
        assert_eq!(got, want, "sort bound {bound:?}");
        // Each file's rows name that file.
        for (i, f) in many.iter().enumerate() {
            let of_file = together
                .rows
                .iter()
                .filter(|r| matches!(r.origin, Origin::Record { file, .. } if file as usize == i))
                .count();
            let source = source_of[i];
            let expected = alone
                .rows
                .iter()
                .filter(
                    |r| matches!(r.origin, Origin::Record { file, .. } if file as usize == source),
                )
                .count();
            assert_eq!(of_file, expected, "{}", f.path.display());
        }
        let (a, t) = (
            alone.rule_stats.as_ref().expect("statistics"),
            together.rule_stats.as_ref().expect("statistics"),
        );
        for (x, y) in a.rules.iter().zip(&t.rules) {
            assert_eq!(
                y.count,
                x.count * COPIES as u64,
                "evaluations of every copy counted"
            );
        }
    }
    std::fs::remove_dir_all(&dir).ok();
}

/// A fresh folder for this test's copies.
fn tempfile_dir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "scanner-many-files-{}-{}",
        std::process::id(),
        scanner_files::random_suffix()
    ));
    std::fs::create_dir_all(&dir).expect("temp folder");
    dir
}
