//! The `-H` report in a real browser: headless Chromium (Debian's `chromium`, which
//! `.ci/run` installs) loads the page offline; the test checks that it logs nothing to
//! the console (no script error, no blocked load), that the chart's bars are in the
//! rendered DOM, and keeps a screenshot in the target folder.

mod support;
use support::*;

use std::path::{Path, PathBuf};
use std::process::Command;

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|b| {
        Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn run_browser(bin: &str, extra: &[&str], page: &Path) -> (String, String) {
    let profile = std::env::temp_dir().join(format!("scanner-chromium-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&profile);
    let url = format!("file://{}", page.display());
    let o = Command::new("timeout")
        .arg("120")
        .arg(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--no-first-run",
            "--enable-logging=stderr",
            "--v=0",
            "--window-size=1100,1400",
            &format!("--user-data-dir={}", profile.display()),
        ])
        .args(extra)
        .arg(&url)
        .output()
        .expect("run chromium");
    let _ = std::fs::remove_dir_all(&profile);
    (
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn html_report_renders_in_chromium_without_console_errors() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have chromium (.ci/run installs it)"
        );
        eprintln!("no chromium: browser test skipped");
        return;
    };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html-report");
    std::fs::create_dir_all(&out).unwrap();
    let page = out.join("report.html");
    let o = Command::new(env!("CARGO_BIN_EXE_scanner"))
        .args([
            "csv-timeline",
            "-J",
            "-d",
            "testdata/demo",
            "-U",
            "-q",
            "-C",
            "-o",
            discard(),
            "-H",
        ])
        .arg(&page)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );

    let (dom, log) = run_browser(bin, &["--dump-dom"], &page);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let bars: usize = dom
        .split("data-bars=\"")
        .nth(1)
        .and_then(|r| r.split('"').next())
        .and_then(|n| n.parse().ok())
        .expect("the page's script ran and counted the chart's bars");
    assert!(bars > 5, "{bars} bars drawn");
    assert!(dom.contains("<rect class=\"bar lvl-critical\""));

    let shot = out.join("report.png");
    let _ = std::fs::remove_file(&shot);
    let (_, log) = run_browser(bin, &[&format!("--screenshot={}", shot.display())], &page);
    let size = std::fs::metadata(&shot).map(|m| m.len()).unwrap_or(0);
    assert!(
        size > 10_000,
        "screenshot {} ({size} bytes): {log}",
        shot.display()
    );
    eprintln!("screenshot: {}", shot.display());
}
