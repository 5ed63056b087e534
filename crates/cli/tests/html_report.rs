//! The `-H` report's content on an input the test builds (`html_report_input`): every
//! rule per level with its detections, authors and file; every computer per level with
//! its detections and rules, cut at 2,000 with a line saying how many more; the rules
//! loaded by status and why others did not run; the MITRE ATT&CK tactics per computer;
//! and every text from the rules and events escaped (titles, authors and computer
//! names hold `<script>` and `<img onerror>`).

mod html_report_input;
mod support;

use html_report_input::*;
use support::{path_below, scratch, text};

/// `s` as the page writes text.
fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// The part of `html` from the element with id `id` to the end of its section.
fn section<'h>(html: &'h str, id: &str) -> &'h str {
    let start = html
        .find(&format!("id=\"{id}\""))
        .unwrap_or_else(|| panic!("no #{id} in the page"));
    let rest = &html[start..];
    &rest[..rest.find("</section>").expect("section ends")]
}

#[test]
fn report_lists_every_rule_computer_and_status_with_evidence_escaped() {
    let dir = scratch("html-report-content");
    let input = Input::new(&dir, 0);
    let page = dir.join("report.html");
    let o = input.report(&page);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();

    // Nothing from the input reaches the page as markup: the page's one script is its own.
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert!(!html.contains("<img"));
    assert!(!html.contains("data-pwned','1')</script>"));

    // Every rule of a level: title, detections, authors, file.
    let high = section(&html, "level-high");
    assert!(high.contains("All 1 rule with high detections"), "{high}");
    let evil_row = format!(
        "<tr><td>{}</td><td class=\"n\">3</td><td>{}</td><td class=\"path\">{}</td></tr>",
        esc(&evil_title()),
        esc(&evil_author()),
        esc(&path_below(&dir, "rules/evil.yml").display().to_string())
    );
    assert!(high.contains(&evil_row), "{evil_row} not in {high}");
    // Every computer of a level: detections, and the distinct rules that fired on it.
    let evil_computer_row = format!(
        "<tr><td>{}</td><td class=\"n\">2</td><td class=\"n\">1</td></tr>",
        esc(&evil_computer())
    );
    assert!(high.contains(&evil_computer_row), "{high}");
    assert!(high
        .contains("<tr><td>WS02.corp.local</td><td class=\"n\">1</td><td class=\"n\">1</td></tr>"));
    assert!(high.contains("All 2 computers with high detections"));
    assert!(
        !html.contains("id=\"level-low\""),
        "no detection at low: no section"
    );

    // The rules loaded: enabled ones by status, the deprecated one disabled.
    let rules = section(&html, "rules");
    assert!(rules.contains("4 rules from 4 files"), "{rules}");
    for status in ["experimental", "stable", "test"] {
        let row =
            format!("<tr><td>{status}</td><td class=\"n\">1</td><td class=\"n\">33.33%</td></tr>");
        assert!(rules.contains(&row), "{row} not in {rules}");
    }
    assert!(rules.contains("<tr><td>disabled: deprecated</td><td class=\"n\">1</td></tr>"));

    // Tactics per computer: the hostile rule is tagged attack.execution.
    let tactics = section(&html, "tactics");
    assert!(
        tactics.contains(&format!(
            "<tr><td>{}</td><td><span class=\"tac\">Exec (1 | 2)</span></td></tr>",
            esc(&evil_computer())
        )),
        "{tactics}"
    );

    // The overview: the detections per level and the general figures.
    let overview = section(&html, "overview");
    for k in [
        "Start time",
        "Elapsed time",
        "Files scanned",
        "Total events",
        "Events with hits",
    ] {
        assert!(
            overview.contains(&format!("<th>{k}</th>")),
            "{k} missing: {overview}"
        );
    }
    assert!(
        overview.contains("<td class=\"n\">3 (100.00%)</td><td class=\"n\">1 (100.00%)</td>"),
        "{overview}"
    );
}

#[test]
fn computers_past_the_cap_are_counted_not_listed() {
    let dir = scratch("html-report-cap");
    // 2,003 hosts with a low and a high detection each, and the 2 computers of 4624.
    let input = Input::new(&dir, 2_003);
    let page = dir.join("report.html");
    let o = input.report(&page);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let html = std::fs::read_to_string(&page).unwrap();

    let low = section(&html, "level-low");
    let listed = &low[low
        .find("class=\"all-computers\"")
        .expect("computers listed")..];
    assert!(listed.contains("All 2,003 computers with low detections"));
    assert_eq!(listed.matches("<tr><td>host-").count(), 2_000);
    // Most detections first, then by name: the last three hosts are left out.
    assert!(low.contains(">host-01999<") && !low.contains(">host-02000<"));
    assert!(low.contains("… and 3 more computers with fewer detections, not listed"));

    let high = section(&html, "level-high");
    assert!(high.contains("All 2,005 computers with high detections"));
    assert!(high.contains("… and 5 more computers"));
    let tactics = section(&html, "tactics");
    assert!(tactics.contains("… and 5 more computers"));
    // Bounded: 2,000 rows per list, whatever the number of computers.
    assert!(html.len() < 2_000_000, "{} bytes", html.len());
}
