//! Ctrl-C (SIGINT) in the middle of a scan that spills detections to disk: the process
//! exits with 130, removes every temporary run file, and leaves no output file, neither
//! under its name nor half-written under a temporary one.

#![cfg(unix)]

mod support;
use support::*;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn ctrl_c_removes_spilled_runs_and_leaves_no_output() {
    let dir = scratch("scan");
    let tmp = dir.join("tmp");
    let out = dir.join("out");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let evtx = dir.join("big.evtx");
    let gen = Command::new(env!("CARGO_BIN_EXE_scanner"))
        .args([
            "evtx",
            "generate",
            "--records",
            "40000",
            "--seed",
            "3",
            "-o",
        ])
        .arg(&evtx)
        .output()
        .expect("generate");
    assert_eq!(gen.status.code(), Some(0), "{:?}", gen);

    let mut child = Command::new(env!("CARGO_BIN_EXE_scanner"))
        .args(["csv-timeline", "-q", "-U", "--sort-memory", "0", "-f"])
        .arg(&evtx)
        .arg("-o")
        .arg(out.join("timeline.csv"))
        .env("TMPDIR", &tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start scan");
    // Wait until the scan has spilled runs, then interrupt it.
    let start = Instant::now();
    while names_in(&tmp).is_empty() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the scan ended ({status}) before spilling anything");
        }
        assert!(start.elapsed() < Duration::from_secs(120), "no run spilled");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    let o = child.wait_with_output().expect("wait");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted"), "{stderr}");
    assert_eq!(
        names_in(&tmp),
        Vec::<String>::new(),
        "run files left behind"
    );
    assert_eq!(names_in(&out), Vec::<String>::new(), "output left behind");
    let _ = std::fs::remove_dir_all(&dir);
}
