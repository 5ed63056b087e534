//! Ctrl-C (SIGINT) in the middle of a scan that spills detections to disk: the process
//! exits with 130, removes every temporary run file, and leaves no output file, neither
//! under its name nor half-written under a temporary one. A run killed outright
//! (SIGKILL) cannot clean up: the next run removes what it left.

#![cfg(unix)]

mod support;
use support::*;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A log big enough to spill for a while, in `dir`.
fn big_log(dir: &std::path::Path) -> std::path::PathBuf {
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
    evtx
}

/// Starts a scan of `evtx` that spills to `tmp` and writes `out`, waits until it has
/// spilled runs, and sends it `signal`.
fn signal_while_spilling(
    evtx: &std::path::Path,
    tmp: &std::path::Path,
    out: &std::path::Path,
    signal: &str,
) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_scanner"))
        .args(["csv-timeline", "-q", "-U", "--sort-memory", "0", "-f"])
        .arg(evtx)
        .arg("-o")
        .arg(out)
        .env("TMPDIR", tmp)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start scan");
    let start = Instant::now();
    let spilled = || {
        std::fs::read_dir(tmp)
            .unwrap()
            .flatten()
            .any(|d| std::fs::read_dir(d.path()).is_ok_and(|mut runs| runs.next().is_some()))
    };
    while !spilled() {
        if let Some(status) = child.try_wait().unwrap() {
            panic!("the scan ended ({status}) before spilling anything");
        }
        assert!(start.elapsed() < Duration::from_secs(120), "no run spilled");
        std::thread::sleep(Duration::from_millis(20));
    }
    let kill = Command::new("kill")
        .args([signal, &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(kill.success());
    child.wait_with_output().expect("wait")
}

#[test]
fn ctrl_c_removes_spilled_runs_and_leaves_no_output() {
    let dir = scratch("scan");
    let tmp = dir.join("tmp");
    let out = dir.join("out");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let evtx = big_log(&dir);
    let o = signal_while_spilling(&evtx, &tmp, &out.join("timeline.csv"), "-INT");
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

#[test]
fn what_a_killed_run_left_is_removed_by_the_next_run() {
    let dir = scratch("killed");
    let tmp = dir.join("tmp");
    let out = dir.join("out");
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    let evtx = big_log(&dir);
    let timeline = out.join("timeline.csv");
    let o = signal_while_spilling(&evtx, &tmp, &timeline, "-KILL");
    assert_eq!(o.status.code(), None, "killed by the signal");
    let left = names_in(&tmp);
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].starts_with("scanner-sort-"), "{left:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(tmp.join(&left[0]))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o700, "the spill folder is private");
    // An unfinished output of the same name, as a run killed while writing leaves it
    // (the killed scan above had not reached writing), and one of another output.
    let pid = ended_pid();
    let partial = format!(".timeline.csv.{pid}.0123456789abcdef.tmp");
    std::fs::write(out.join(&partial), "half a timeline").unwrap();
    let other = format!(".other.csv.{pid}.0123456789abcdef.tmp");
    std::fs::write(out.join(&other), "not ours to judge").unwrap();

    let o = Command::new(env!("CARGO_BIN_EXE_scanner"))
        .args(["csv-timeline", "-q", "-U", "-f"])
        .arg(&evtx)
        .arg("-o")
        .arg(&timeline)
        .env("TMPDIR", &tmp)
        .output()
        .expect("second scan");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{stderr}");
    assert_eq!(names_in(&tmp), Vec::<String>::new(), "stale spill removed");
    assert!(
        stderr.contains(&left[0]) && stderr.contains("was killed"),
        "{stderr}"
    );
    assert!(stderr.contains(&partial), "{stderr}");
    assert_eq!(names_in(&out), [other.clone(), "timeline.csv".to_string()]);
    let _ = std::fs::remove_dir_all(&dir);
}

/// The id of a process that has ended.
fn ended_pid() -> u32 {
    let mut c = Command::new("true").spawn().expect("true");
    c.wait().expect("wait");
    c.id()
}
