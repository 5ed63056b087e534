//! The `-H` report in a real browser: headless Chromium (Debian's `chromium`, which
//! `.ci/run` installs) loads the page offline; the tests check that it logs nothing to
//! the console (no script error, no blocked load), that the chart's bars and the
//! report's sections are in the rendered DOM, that markup in rule titles, authors and
//! computer names stays text (an injected script would mark the page), and keep a
//! screenshot in the target folder.

mod html_report_input;
mod support;
use support::*;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

fn chromium() -> Option<&'static str> {
    ["chromium", "chromium-browser"].into_iter().find(|b| {
        Command::new(b)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

fn run_browser(bin: &str, extra: &[&str], page: &Path) -> (String, String) {
    // A profile of its own per run: the tests run in parallel, in one process.
    static RUNS: AtomicUsize = AtomicUsize::new(0);
    let profile = std::env::temp_dir().join(format!(
        "scanner-chromium-{}-{}",
        std::process::id(),
        RUNS.fetch_add(1, Ordering::Relaxed)
    ));
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

/// The browser, or `None` (outside CI) when there is none.
fn browser() -> Option<&'static str> {
    let bin = chromium();
    if bin.is_none() {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must have chromium (.ci/run installs it)"
        );
        eprintln!("no chromium: browser test skipped");
    }
    bin
}

/// The attributes of the rendered `<body>`.
fn body_tag(dom: &str) -> &str {
    let start = dom.find("<body").expect("a body");
    &dom[start..start + dom[start..].find('>').expect("body tag ends")]
}

#[test]
fn html_report_renders_in_chromium_without_console_errors() {
    let Some(bin) = browser() else { return };
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
    for part in [
        "id=\"overview\"",
        "id=\"rule-status\"",
        "class=\"all-rules\"",
        "class=\"all-computers\"",
        "id=\"tactics\"",
        "id=\"coverage\"",
    ] {
        assert!(dom.contains(part), "{part} not rendered");
    }
    // The coverage section says what share of the events no rule reads.
    let coverage = dom.split("id=\"coverage\"").nth(1).unwrap_or("");
    assert!(
        coverage.contains("events read are of kinds (Channel, EventID) no loaded rule reads"),
        "{coverage}"
    );

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

#[test]
fn markup_in_rules_and_events_stays_text_in_chromium() {
    let Some(bin) = browser() else { return };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html-report-hostile");
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir_all(&out).unwrap();
    let input = html_report_input::Input::new(&out, 3);
    let page = out.join("report.html");
    let o = input.report(&page);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    let (dom, log) = run_browser(bin, &["--dump-dom"], &page);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    let body = body_tag(&dom);
    assert!(
        body.contains("data-bars="),
        "the page's own script ran: {body}"
    );
    assert!(
        !body.contains("data-pwned"),
        "an injected script ran: {body}"
    );
    assert!(
        !dom.contains("<img"),
        "an element from the input was rendered"
    );
    // The texts are there, as text, in the rendered tables.
    let title = "Evil &lt;script&gt;document.body.setAttribute('data-pwned','1')&lt;/script&gt; logon &amp; \"more\"";
    assert!(dom.contains(title), "{title} not in the DOM");
    assert!(dom.contains(
        "&lt;script&gt;document.body.setAttribute('data-pwned','1')&lt;/script&gt;.corp"
    ));
    assert!(dom.contains(
        "Mallory &lt;img src=x onerror=\"document.body.setAttribute('data-pwned','2')\"&gt;, Eve"
    ));
}

#[test]
fn integrity_section_lists_the_planted_findings_in_chromium() {
    let Some(bin) = browser() else { return };
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("html-report-integrity");
    let _ = std::fs::remove_dir_all(&out);
    let logs = out.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    support::planted::plant(&logs);
    std::fs::remove_file(logs.join("not-a-log.evtx")).unwrap();
    let page = out.join("report.html");
    let o = Command::new(env!("CARGO_BIN_EXE_scanner"))
        .args(["csv-timeline", "-d"])
        .arg(&logs)
        .args(["-x", "--integrity", "-U", "-q", "-C", "-o", discard(), "-H"])
        .arg(&page)
        .current_dir(root())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    let (dom, log) = run_browser(bin, &["--dump-dom"], &page);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "console messages: {console:#?}");
    assert!(dom.contains("<a href=\"#integrity\">Log integrity</a>"));
    let section = dom
        .split("id=\"integrity\"")
        .nth(1)
        .and_then(|s| s.split("</section>").next())
        .expect("the integrity section rendered");
    assert!(
        section.contains("7 findings: 2 certain, 1 likely, 3 possible, 1 expected"),
        "{section}"
    );
    // One row per planted fault, with its file, severity, finding, ids and time.
    let rows: Vec<&str> = section.split("<tr class=\"sev-").skip(1).collect();
    assert_eq!(rows.len(), 7, "{section}");
    for (file, severity, finding, ids, time) in [
        (
            "cleared.evtx",
            "certain",
            "log cleared",
            "1",
            "2024-01-01 00:00:00",
        ),
        (
            "clock.evtx",
            "possible",
            "time backwards",
            "10-11",
            "2024-01-01 01:49:00",
        ),
        (
            "deleted.evtx",
            "likely",
            "record id gap",
            "10-14",
            "2024-01-01 00:09:00",
        ),
        (
            "dirty.evtx",
            "expected",
            "dirty file header",
            "",
            "2024-01-01 00:04:00",
        ),
        (
            "flipped.evtx",
            "certain",
            "chunk records checksum",
            "1-30",
            "2024-01-01 00:00:00",
        ),
        (
            "service.evtx",
            "possible",
            "logging stopped",
            "2-3",
            "2024-01-01 00:01:00",
        ),
        (
            "slack.evtx",
            "possible",
            "records in slack space",
            "28-30",
            "2024-01-01 00:27:00",
        ),
    ] {
        let row = rows
            .iter()
            .find(|r| r.contains(&format!("{file}</td>")))
            .unwrap_or_else(|| panic!("{file} not listed: {section}"));
        let cells = format!(
            "<td>{severity}</td><td>{finding}</td><td>{}</td><td>{ids}</td><td>{time}",
            if file == "dirty.evtx" || file == "flipped.evtx" {
                "-"
            } else if file == "service.evtx" {
                "System"
            } else {
                "Security"
            }
        );
        assert!(row.starts_with(severity), "{row}");
        assert!(row.contains(&cells), "{cells} not in {row}");
    }

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
