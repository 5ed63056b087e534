//! `scanner … | head`: when standard output's reader goes away, the run stops writing
//! and ends quietly with success (no "Broken pipe" error, no panic), as command-line
//! tools do, so `set -o pipefail` scripts go on.
#![cfg(unix)]

mod support;

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use support::{command, scratch, text};

/// Runs `scanner ARGS` with standard output read for one line, then closed.
fn first_line_then_close(args: &[&str]) -> (Option<i32>, String, String) {
    let mut child = command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = String::new();
    {
        let mut out = BufReader::new(child.stdout.take().unwrap());
        out.read_line(&mut first).unwrap();
    }
    let out = child.wait_with_output().unwrap();
    (out.status.code(), first, text(&out.stderr))
}

#[test]
fn commands_end_quietly_when_their_reader_goes() {
    let d = scratch("closed-pipe");
    let log = d.join("big.evtx");
    let made = command()
        .args([
            "evtx",
            "generate",
            "--records",
            "20000",
            "--seed",
            "3",
            "-o",
        ])
        .arg(&log)
        .output()
        .unwrap();
    assert!(made.status.success(), "{}", text(&made.stderr));
    let log = log.to_str().unwrap();
    for args in [
        vec!["csv-timeline", "-f", log, "-q"],
        vec!["json-timeline", "-f", log, "-L", "-q"],
        vec!["search", "-f", log, "-k", "a", "-q"],
    ] {
        let (code, first, err) = first_line_then_close(&args);
        assert!(!first.is_empty(), "{args:?}: nothing written");
        assert_eq!(code, Some(0), "{args:?}: {err}");
        assert!(!err.contains("Broken pipe"), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
    let _ = std::fs::remove_dir_all(&d);
}
