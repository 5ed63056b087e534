//! Detections spilled to disk past the sort-memory bound come back in the same order as
//! when sorted in memory; a spilled run that cannot be read back stops the writers with
//! an error naming its file; the runs' files are removed after the run and after an
//! error. (One test: the temporary folder is set for the whole process.)

use scanner_engine::{Scanner, ScannerBuilder};
use scanner_input::{InputFile, InputKind};
use scanner_rules::{load, LoadOptions, RuleSource};
use scanner_timeline::{write_timeline, CsvEncoder, JsonEncoder, Layout, Profile, TimeFormat};
use std::path::{Path, PathBuf};

/// The files in `d` and in its folders (spilled runs are in a private folder).
fn files_in(d: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(d).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files.extend(files_in(&p));
        } else {
            files.push(p);
        }
    }
    files
}

fn scanner(bound: Option<usize>) -> Scanner {
    ScannerBuilder::new()
        .extra_field_info(true)
        .all_field_info(true)
        .sort_memory(bound)
        .build(load(&[RuleSource::Builtin], &LoadOptions::default()))
}

fn csv(s: &Scanner, files: &[InputFile], rows: scanner_engine::SortedRows) -> Vec<u8> {
    let w = Layout::new(s.rules(), files, TimeFormat::utc(), Profile::SuperVerbose);
    let mut out = Vec::new();
    let mut seen = 0;
    let n = write_timeline(CsvEncoder::new(&w), &mut out, rows, |_| seen += 1).expect("written");
    assert_eq!(n, seen);
    out
}

#[test]
fn spilled_rows_merge_in_order_and_errors_name_the_run() {
    let tmp = std::env::temp_dir().join(format!("scanner-timeline-spill-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&tmp);
    std::fs::create_dir_all(&tmp).unwrap();
    // The variable the standard library's temp_dir reads: TMPDIR on Unix, TMP on Windows.
    std::env::set_var(if cfg!(windows) { "TMP" } else { "TMPDIR" }, &tmp);
    assert_eq!(std::env::temp_dir(), tmp);

    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
    let (mut files, errors) = scanner_input::discover(&[root.join("demo")], &[], InputKind::Json);
    assert!(errors.is_empty(), "{errors:?}");
    // The same events twice: rows with equal sort keys but for the file.
    files.extend(files.clone());

    let memory = scanner(None);
    let rows = memory.scan_sorted(&files).rows;
    assert_eq!(rows.spilled_runs(), 0);
    let n = rows.len();
    assert!(n > 100, "{n}");
    let expected = csv(&memory, &files, rows);

    // Every batch spilled: the same bytes, and no file left once read.
    let tiny = scanner(Some(0));
    let rows = tiny.scan_sorted(&files).rows;
    assert!(rows.spilled_runs() > 10, "{}", rows.spilled_runs());
    assert_eq!(rows.len(), n);
    assert!(!files_in(&tmp).is_empty());
    assert!(
        csv(&tiny, &files, rows) == expected,
        "spilled timeline differs"
    );
    assert_eq!(files_in(&tmp), Vec::<PathBuf>::new());
    // The collecting API gives the same rows.
    let all = tiny.scan(&files).expect("spilled rows read back");
    assert!(all.errors.is_empty(), "{:?}", all.errors);
    let again = memory.scan(&files).expect("spilled rows read back");
    assert_eq!(format!("{:?}", all.rows), format!("{:?}", again.rows));
    assert_eq!(files_in(&tmp), Vec::<PathBuf>::new());

    // A run cut short on disk: the writers stop with an error naming it.
    for json in [false, true] {
        let rows = tiny.scan_sorted(&files).rows;
        let victim = files_in(&tmp)
            .into_iter()
            .max_by_key(|p| std::fs::metadata(p).unwrap().len())
            .unwrap();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(&victim)
            .unwrap();
        f.set_len(f.metadata().unwrap().len() - 3).unwrap();
        drop(f);
        let w = Layout::new(tiny.rules(), &files, TimeFormat::utc(), Profile::Verbose);
        let mut out = Vec::new();
        let err = if json {
            write_timeline(JsonEncoder::new(&w, true), &mut out, rows, |_| {}).unwrap_err()
        } else {
            write_timeline(CsvEncoder::new(&w), &mut out, rows, |_| {}).unwrap_err()
        };
        let msg = err.to_string();
        assert!(msg.contains(&victim.display().to_string()), "{msg}");
        assert_eq!(
            files_in(&tmp),
            Vec::<PathBuf>::new(),
            "files left after an error"
        );
    }
    let _ = std::fs::remove_dir_all(&tmp);
}
