//! Evidence as it arrives: files scanner does not read are named in the summary, and
//! archives (zip, tar, 7z, nested) are read in place, their members named by archive
//! and member in every output.

mod support;

use support::{root, scanner_utc, scratch, text};

#[test]
fn files_not_read_are_counted_by_extension_in_the_summary() {
    let d = scratch("not-read");
    std::fs::copy(
        root().join("testdata/evtx/security.evtx"),
        d.join("security.evtx"),
    )
    .unwrap();
    std::fs::create_dir_all(d.join("sub")).unwrap();
    for (name, body) in [
        ("a.txt", "x"),
        ("sub/b.TXT", "y"),
        ("c.log", "z"),
        ("README", "r"),
    ] {
        std::fs::write(d.join(name), body).unwrap();
    }
    let dir = d.display().to_string();
    let out = scanner_utc(&[
        "csv-timeline",
        "-d",
        &dir,
        "-o",
        support::discard(),
        "-w",
        "-C",
    ]);
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("not read: 4 files (.txt 2, no extension 1, .log 1)"),
        "{err}"
    );
    // A folder with nothing to read says what it met.
    std::fs::remove_file(d.join("security.evtx")).unwrap();
    let out = scanner_utc(&[
        "csv-timeline",
        "-d",
        &dir,
        "-o",
        support::discard(),
        "-w",
        "-C",
    ]);
    let err = text(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("note: not read: 4 files"), "{err}");
    // So do the commands without a summary.
    let out = scanner_utc(&["eid-metrics", "-d", &dir]);
    assert!(
        text(&out.stderr).contains("note: not read: 4 files"),
        "{}",
        text(&out.stderr)
    );
    std::fs::remove_dir_all(&d).unwrap();
}
