//! `-H FILE`: the results summary as one self-contained HTML page. Everything is
//! inline (styles, the chart as SVG, a few lines of script to hide or show a level),
//! so it opens offline and loads nothing from anywhere.

use crate::histogram::Histogram;
use crate::summary::{group, noun, LevelSummary, Summary, LISTED};
use scanner_rules::Level;
use scanner_timeline::TimeFormat;
use std::fmt::Write as _;

/// Slices of the detection-frequency chart.
pub const SLICES: usize = 80;

/// Per level, lowest first (`emergency`, only from `critical_systems.txt`, last).
const COLOURS: [&str; Level::ALL.len()] = [
    "#8e9aaf", "#4caf50", "#f2c14e", "#f28c28", "#d7263d", "#7b1fa2",
];

/// Escapes text for HTML element content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// The chart: stacked bars per slice, one colour per level, with axes and labels.
fn chart(histogram: Option<&Histogram>, time: &TimeFormat) -> String {
    let Some(Histogram {
        first,
        last,
        width,
        counts,
    }) = histogram
    else {
        return "<p class=\"empty\">No detections: nothing to chart.</p>".into();
    };
    let (first, last, width) = (*first, *last, *width);
    let (w, h, left, bottom, top) = (960.0, 300.0, 50.0, 40.0, 10.0);
    let plot_w = w - left - 10.0;
    let plot_h = h - bottom - top;
    let max = counts
        .iter()
        .map(|c| c.iter().sum::<usize>())
        .max()
        .unwrap_or(1)
        .max(1);
    let bar_w = plot_w / counts.len() as f64;
    let mut s = String::new();
    let _ = write!(
        s,
        "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"Detections over time\">"
    );
    // Horizontal grid with counts.
    for i in 0..=4 {
        let y = top + plot_h - plot_h * i as f64 / 4.0;
        let v = (max as f64 * i as f64 / 4.0).round();
        let _ = write!(
            s,
            "<line class=\"grid\" x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text class=\"axis\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{v}</text>",
            w - 10.0,
            left - 6.0,
            y + 4.0
        );
    }
    for (i, c) in counts.iter().enumerate() {
        let x = left + bar_w * i as f64;
        let mut y = top + plot_h;
        let start = first
            .checked_add(jiff::SignedDuration::from_secs_f64(width * i as f64))
            .unwrap_or(first);
        for l in Level::ALL {
            let n = c[l as usize];
            if n == 0 {
                continue;
            }
            let bh = plot_h * n as f64 / max as f64;
            y -= bh;
            let _ = write!(
                s,
                "<rect class=\"bar lvl-{}\" x=\"{x:.2}\" y=\"{y:.2}\" width=\"{:.2}\" height=\"{bh:.2}\" fill=\"{}\"><title>{} from {}: {n}</title></rect>",
                l.name(),
                (bar_w - 1.0).max(0.5),
                COLOURS[l as usize],
                l.name(),
                esc(&time.format(start))
            );
        }
    }
    let _ = write!(
        s,
        "<line class=\"axisline\" x1=\"{left}\" x2=\"{}\" y1=\"{y:.1}\" y2=\"{y:.1}\"/><text class=\"axis\" x=\"{left}\" y=\"{:.1}\">{}</text><text class=\"axis\" x=\"{}\" y=\"{:.1}\" text-anchor=\"end\">{}</text></svg>",
        w - 10.0,
        h - 14.0,
        esc(&time.format(first)),
        w - 10.0,
        h - 14.0,
        esc(&time.format(last)),
        y = top + plot_h,
    );
    s
}

/// Evidence texts (computer names, rule titles, authors, paths) are cut to this many
/// characters in the report, so that one forged value cannot make it huge; the CSV
/// keeps them whole.
const CELL_CHARS: usize = 512;

/// `s` escaped, cut to [`CELL_CHARS`] characters with `…` when longer.
fn cell(s: &str) -> String {
    match s.char_indices().nth(CELL_CHARS) {
        Some((i, _)) => format!("{}…", esc(&s[..i])),
        None => esc(s),
    }
}

/// A percentage of `n` in `of` (0 when `of` is 0).
fn pct(n: usize, of: usize) -> f64 {
    if of == 0 {
        0.0
    } else {
        n as f64 * 100.0 / of as f64
    }
}

fn table(title: &str, head: &str, items: &[(String, usize)]) -> String {
    if items.is_empty() {
        return String::new();
    }
    let mut s = format!(
        "<table><caption>{}</caption><thead><tr><th>{}</th><th class=\"n\">Detections</th></tr></thead><tbody>",
        esc(title),
        esc(head)
    );
    for (k, n) in items {
        let _ = write!(
            s,
            "<tr><td>{}</td><td class=\"n\">{}</td></tr>",
            cell(k),
            group(*n as u64)
        );
    }
    s.push_str("</tbody></table>");
    s
}

/// The levels the report shows, highest first: `emergency` only when a row has it.
fn shown_levels(summary: &Summary) -> impl Iterator<Item = Level> + '_ {
    Level::ALL
        .iter()
        .rev()
        .copied()
        .filter(|l| *l != Level::Emergency || summary.levels[*l as usize].total > 0)
}

/// Hayabusa's General Overview and the head of its Results Summary: when and how long,
/// what was read, and the detections per level.
fn overview(summary: &Summary, time: &TimeFormat) -> String {
    let st = &summary.stats;
    let mut rows: Vec<(&str, String)> = Vec::new();
    let started = jiff::SignedDuration::try_from(summary.elapsed)
        .ok()
        .and_then(|d| jiff::Timestamp::now().checked_sub(d).ok());
    if let Some(t) = started {
        rows.push(("Start time", esc(&time.format(t))));
    }
    let secs = st.elapsed.as_secs_f64();
    rows.push((
        "Elapsed time",
        format!(
            "{:.2} s (scan {secs:.2} s, {} records/s)",
            summary.elapsed.as_secs_f64(),
            group(if secs > 0.0 {
                (st.records as f64 / secs) as u64
            } else {
                0
            })
        ),
    ));
    let mut files = format!(
        "{} ({:.1} MiB)",
        group(st.files as u64),
        st.bytes as f64 / 1048576.0
    );
    if summary.skipped_files > 0 {
        let _ = write!(
            files,
            "; {} skipped (no rule uses their channel; -a scans them)",
            group(summary.skipped_files as u64)
        );
    }
    if let Some(line) = crate::summary::not_read_line(&summary.not_read) {
        let _ = write!(files, "; {line}");
    }
    rows.push(("Files scanned", files));
    rows.push(("Total events", group(st.records)));
    if st.recovered > 0 {
        rows.push(("Recovered (carved) records", group(st.recovered)));
    }
    let reduced = st.records.saturating_sub(summary.events_with_hits);
    rows.push((
        "Events with hits",
        format!(
            "{} (data reduction: {} events, {:.2}%)",
            group(summary.events_with_hits),
            group(reduced),
            if st.records == 0 {
                0.0
            } else {
                reduced as f64 * 100.0 / st.records as f64
            }
        ),
    ));
    rows.push((
        "Detections",
        format!(
            "{} from {} rules",
            group(summary.detections as u64),
            group(summary.unique as u64)
        ),
    ));
    for (k, v) in [
        ("First detection", &summary.first),
        ("Last detection", &summary.last),
    ] {
        rows.push((k, esc(v.as_deref().unwrap_or("n/a"))));
    }
    if !summary.errors.is_empty() {
        rows.push((
            "Input errors",
            format!(
                "<a href=\"#errors\">{} in {} {}</a>",
                group(summary.error_count.max(summary.errors.len()) as u64),
                group(summary.errors.len() as u64),
                noun(summary.errors.len() as u64, "file", "files")
            ),
        ));
    }
    let mut s = String::from("<section id=\"overview\"><h2>Overview</h2><div class=\"tables\"><table class=\"kv\"><tbody>");
    for (k, v) in rows {
        let _ = write!(s, "<tr><th>{k}</th><td>{v}</td></tr>");
    }
    s.push_str("</tbody></table><table><caption>Detections per level</caption><thead><tr><th>Level</th><th class=\"n\">Detections</th><th class=\"n\">Rules</th><th>Date with most detections</th></tr></thead><tbody>");
    for l in shown_levels(summary) {
        let ls = &summary.levels[l as usize];
        let _ = write!(
            s,
            "<tr><td><a href=\"#level-{0}\"><i style=\"background:{1}\"></i>{0}</a></td><td class=\"n\">{2} ({3:.2}%)</td><td class=\"n\">{4} ({5:.2}%)</td><td>{6}</td></tr>",
            l.name(),
            COLOURS[l as usize],
            group(ls.total as u64),
            pct(ls.total, summary.detections),
            group(ls.unique as u64),
            pct(ls.unique, summary.unique),
            match ls.top_dates.first() {
                Some((d, n)) => format!("{} ({})", cell(d), group(*n as u64)),
                None => "n/a".into(),
            }
        );
    }
    s.push_str("</tbody></table></div></section>");
    s
}

/// The rules loaded: enabled per status, and why the others did not run.
fn rules_loaded(summary: &Summary) -> String {
    let f = &summary.rule_figures;
    let disabled: usize = f.disabled.iter().map(|(_, n)| n).sum();
    let all = f.enabled + disabled + f.rejected;
    let mut s = format!(
        "<section id=\"rules\"><h2>Rules loaded</h2><p>{} {} from {} {}: <b>{} enabled</b>, {} disabled, {} rejected (<code>scanner rules check</code> lists them). Among the enabled: {} correlations, and {} rules that only feed a correlation.</p><div class=\"tables\">",
        group(all as u64),
        noun(all as u64, "rule", "rules"),
        group(f.files as u64),
        noun(f.files as u64, "file", "files"),
        group(f.enabled as u64),
        group(disabled as u64),
        group(f.rejected as u64),
        group(f.correlations as u64),
        group(f.correlation_only as u64),
    );
    if !f.statuses.is_empty() {
        s.push_str("<table id=\"rule-status\"><caption>Enabled rules by status</caption><thead><tr><th>Status</th><th class=\"n\">Rules</th><th class=\"n\">Share</th></tr></thead><tbody>");
        for (status, n) in &f.statuses {
            let _ = write!(
                s,
                "<tr><td>{}</td><td class=\"n\">{}</td><td class=\"n\">{:.2}%</td></tr>",
                cell(status),
                group(*n as u64),
                pct(*n, f.enabled)
            );
        }
        s.push_str("</tbody></table>");
    }
    if disabled + f.rejected > 0 {
        s.push_str("<table id=\"rule-not-run\"><caption>Rules not run</caption><thead><tr><th>Why</th><th class=\"n\">Rules</th></tr></thead><tbody>");
        for (why, n) in &f.disabled {
            let _ = write!(
                s,
                "<tr><td>disabled: {}</td><td class=\"n\">{}</td></tr>",
                esc(why),
                group(*n as u64)
            );
        }
        if f.rejected > 0 {
            let _ = write!(
                s,
                "<tr><td>rejected (could not be loaded)</td><td class=\"n\">{}</td></tr>",
                group(f.rejected as u64)
            );
        }
        s.push_str("</tbody></table>");
    }
    s.push_str("</div></section>");
    s
}

/// One level: its top five tables, then every rule and every computer (up to
/// [`LISTED`]).
fn level_section(l: Level, s: &LevelSummary) -> String {
    let mut o = format!(
        "<section class=\"level\" id=\"level-{0}\"><h2><i style=\"background:{1}\"></i>{0}: {2} {3}, {4} {5}</h2><div class=\"tables\">{6}{7}{8}</div>",
        l.name(),
        COLOURS[l as usize],
        group(s.total as u64),
        noun(s.total as u64, "detection", "detections"),
        group(s.unique as u64),
        noun(s.unique as u64, "rule", "rules"),
        table("Top alerts", "Rule", &s.top_alerts),
        table("Top computers", "Computer", &s.top_computers),
        table("Dates with most detections", "Date", &s.top_dates),
    );
    open_list(&mut o, l.name(), List::Rules(s.rules.len()));
    for r in &s.rules {
        let (n, author) = (group(r.detections as u64), cell(&r.author));
        let _ = write!(o, "<tr><td>{}</td><td class=\"n\">{n}</td><td>{author}</td><td class=\"path\">{}</td></tr>", cell(&r.title), cell(&r.path));
    }
    o.push_str("</tbody></table></details>");
    let all = s.computers.len() + s.computers_left_out;
    open_list(&mut o, l.name(), List::Computers(all));
    for c in &s.computers {
        let (n, rules) = (group(c.detections as u64), group(c.rules as u64));
        let _ = write!(
            o,
            "<tr><td>{}</td><td class=\"n\">{n}</td><td class=\"n\">{rules}</td></tr>",
            cell(&c.name)
        );
    }
    o.push_str("</tbody></table>");
    o.push_str(&left_out(s.computers_left_out));
    o.push_str("</details></section>");
    o
}

/// The line under a list cut at [`LISTED`] computers.
/// A level's list of every rule, or of every computer, and how many there are.
enum List {
    Rules(usize),
    Computers(usize),
}

/// Opens a level's list: a table in a `<details>`, its summary saying how many.
fn open_list(o: &mut String, level: &str, list: List) {
    let (class, n, one, many, heads) = match list {
        List::Rules(n) => (
            "all-rules",
            n,
            "rule",
            "rules",
            "<th>Rule</th><th class=\"n\">Detections</th><th>Authors</th><th>Rule file</th>",
        ),
        List::Computers(n) => (
            "all-computers",
            n,
            "computer",
            "computers",
            "<th>Computer</th><th class=\"n\">Detections</th><th class=\"n\">Rules</th>",
        ),
    };
    let _ = write!(
        o,
        "<details open class=\"{class}\"><summary>All {} {} with {level} detections</summary><table class=\"wide\"><thead><tr>{heads}</tr></thead><tbody>",
        group(n as u64),
        noun(n as u64, one, many),
    );
}

fn left_out(n: usize) -> String {
    if n == 0 {
        return String::new();
    }
    format!(
        "<p class=\"more\">… and {} more {} with fewer detections, not listed (the report lists {}; <code>scanner computer-metrics</code> lists every computer).</p>",
        group(n as u64),
        noun(n as u64, "computer", "computers"),
        group(LISTED as u64)
    )
}

/// The MITRE ATT&CK tactics of the rules that fired on each computer.
fn tactics(summary: &Summary) -> String {
    if summary.tactics.is_empty() {
        return String::new();
    }
    let mut s = String::from("<section id=\"tactics\"><h2>MITRE ATT&amp;CK tactics per computer</h2><p>Each tactic with the number of distinct rules tagged with it that fired on the computer | their detections.</p><table class=\"wide\"><thead><tr><th>Computer</th><th>Tactics (rules | detections)</th></tr></thead><tbody>");
    for c in &summary.tactics {
        let list: Vec<String> = c
            .tactics
            .iter()
            .map(|(t, rules, n)| {
                format!(
                    "<span class=\"tac\">{} ({} | {})</span>",
                    cell(t),
                    group(*rules as u64),
                    group(*n as u64)
                )
            })
            .collect();
        let _ = write!(
            s,
            "<tr><td>{}</td><td>{}</td></tr>",
            cell(&c.name),
            list.join(" ")
        );
    }
    s.push_str("</tbody></table>");
    s.push_str(&left_out(summary.tactics_left_out));
    s.push_str("</section>");
    s
}

/// What share of the events the rules can read, and the kinds of event none reads.
fn coverage(summary: &Summary) -> String {
    let st = &summary.stats;
    let read = st.records + st.recovered;
    let share = |n: u64| {
        if read == 0 {
            0.0
        } else {
            100.0 * n as f64 / read as f64
        }
    };
    let mut s = format!(
        "<section id=\"coverage\"><h2>Coverage</h2><p>{:.1}% of the {} events read are of kinds \
         (Channel, EventID) no loaded rule reads; {:.1}% of kinds only rules without a channel \
         read. <code>scanner coverage</code> lists every kind with the rules that read it.</p>",
        share(st.uncovered),
        group(read),
        share(st.channel_less_only)
    );
    if !summary.unread.is_empty() {
        s.push_str("<table class=\"wide\"><thead><tr><th>Channel</th><th>Provider</th><th>EventID</th><th>Events no rule reads</th></tr></thead><tbody>");
        for u in &summary.unread {
            let _ = write!(
                s,
                "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                cell(&u.channel),
                cell(&u.provider),
                cell(&u.event_id),
                group(u.events)
            );
        }
        end_table(&mut s, summary.unread_left_out, "kinds no rule reads");
    }
    s.push_str("</section>");
    s
}

/// Closes a table whose rows past the report's limit were left out, saying how many
/// (`left_out`) of `what`.
fn end_table(s: &mut String, left_out: usize, what: &str) {
    s.push_str("</tbody></table>");
    if left_out > 0 {
        let _ = write!(
            s,
            "<p class=\"more\">and {} more {what}</p>",
            group(left_out as u64)
        );
    }
}

/// The severities' colours in the integrity section (only on pages that have it).
const INTEGRITY_CSS: &str = "tr.sev-certain td:nth-child(2){color:#c0392b;font-weight:600}\
tr.sev-likely td:nth-child(2){color:#d35400;font-weight:600}tr.sev-possible td:nth-child(2){color:#b7950b}\
tr.sev-expected td:nth-child(2){color:#666}";

/// The integrity findings (`--integrity`), per file: severity, finding, channel,
/// record ids, time and figures.
fn integrity(summary: &Summary) -> String {
    let Some(list) = &summary.integrity else {
        return String::new();
    };
    let n = list.per_severity;
    let mut s = format!(
        "<section id=\"integrity\"><style>{INTEGRITY_CSS}</style><h2>Log integrity</h2><p>{} findings: {} certain, {} likely, \
         {} possible, {} expected (what normal operation leaves). <code>scanner log-integrity</code> \
         lists them as CSV or JSON.</p>",
        group(n.iter().sum::<usize>() as u64),
        group(n[0] as u64),
        group(n[1] as u64),
        group(n[2] as u64),
        group(n[3] as u64)
    );
    if !list.lines.is_empty() {
        s.push_str("<table class=\"wide\"><thead><tr><th>File</th><th>Severity</th><th>Finding</th><th>Channel</th><th>Record IDs</th><th>Time</th><th>Details</th></tr></thead><tbody>");
        for l in &list.lines {
            let _ = write!(
                s,
                "<tr class=\"sev-{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                l.severity,
                cell(&l.file),
                l.severity,
                l.finding,
                cell(&l.channel),
                cell(&l.records),
                esc(&l.time),
                cell(&l.details)
            );
        }
        end_table(&mut s, list.left_out, "findings");
    }
    s.push_str("</section>");
    s
}

/// The whole page; `histogram` has [`SLICES`] slices (`None`: no detections).
pub fn render(
    summary: &Summary,
    histogram: Option<&Histogram>,
    time: &TimeFormat,
    command: &str,
) -> String {
    let st = &summary.stats;
    let mut body = String::new();
    let _ = write!(
        body,
        "<header><h1>scanner results</h1><p class=\"cmd\"><code>{}</code></p><nav><a href=\"#overview\">Overview</a><a href=\"#timeline\">Detections over time</a><a href=\"#rules\">Rules loaded</a>",
        esc(command)
    );
    for l in shown_levels(summary) {
        if summary.levels[l as usize].total > 0 {
            let _ = write!(body, "<a href=\"#level-{0}\">{0}</a>", l.name());
        }
    }
    if !summary.tactics.is_empty() {
        body.push_str("<a href=\"#tactics\">MITRE ATT&amp;CK</a>");
    }
    body.push_str("<a href=\"#coverage\">Coverage</a>");
    if summary.integrity.is_some() {
        body.push_str("<a href=\"#integrity\">Log integrity</a>");
    }
    if !summary.errors.is_empty() {
        body.push_str("<a href=\"#errors\">Input errors</a>");
    }
    body.push_str("</nav></header>");
    let reduction = if st.records == 0 {
        0.0
    } else {
        100.0 * st.records.saturating_sub(summary.events_with_hits) as f64 / st.records as f64
    };
    let _ = write!(
        body,
        "<section class=\"cards\">\
<div class=\"card\"><b>{}</b><span>files scanned ({:.1} MiB)</span></div>\
<div class=\"card\"><b>{}</b><span>events</span></div>\
<div class=\"card\"><b>{}</b><span>events with hits ({reduction:.2}% reduction)</span></div>\
<div class=\"card\"><b>{}</b><span>detections</span></div>\
<div class=\"card\"><b>{}</b><span>rules that fired</span></div>\
<div class=\"card\"><b>{}</b><span>first detection</span></div>\
<div class=\"card\"><b>{}</b><span>last detection</span></div></section>",
        group(st.files as u64),
        st.bytes as f64 / 1048576.0,
        group(st.records),
        group(summary.events_with_hits),
        group(summary.detections as u64),
        group(summary.unique as u64),
        esc(summary.first.as_deref().unwrap_or("n/a")),
        esc(summary.last.as_deref().unwrap_or("n/a")),
    );
    body.push_str(&overview(summary, time));
    body.push_str("<section id=\"timeline\"><h2>Detections over time</h2><div class=\"legend\">");
    for l in shown_levels(summary) {
        let _ = write!(
            body,
            "<label><input type=\"checkbox\" checked data-level=\"{0}\"><i style=\"background:{1}\"></i>{0} ({2})</label>",
            l.name(),
            COLOURS[l as usize],
            group(summary.levels[l as usize].total as u64)
        );
    }
    body.push_str("</div>");
    body.push_str(&chart(histogram, time));
    body.push_str("</section>");
    body.push_str(&rules_loaded(summary));
    for l in shown_levels(summary) {
        let s = &summary.levels[l as usize];
        if s.total > 0 {
            body.push_str(&level_section(l, s));
        }
    }
    body.push_str(&tactics(summary));
    body.push_str(&coverage(summary));
    body.push_str(&integrity(summary));
    if !summary.errors.is_empty() {
        body.push_str("<section id=\"errors\"><h2>Input errors</h2><table><thead><tr><th>File</th><th>Errors</th></tr></thead><tbody>");
        for (f, msgs) in &summary.errors {
            let _ = write!(
                body,
                "<tr><td>{}</td><td>{}</td></tr>",
                esc(f),
                msgs.iter().map(|m| esc(m)).collect::<Vec<_>>().join("<br>")
            );
        }
        body.push_str("</tbody></table></section>");
    }
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:\">\
<title>scanner results</title><style>{STYLE}</style></head><body>{body}<script>{SCRIPT}</script></body></html>\n"
    )
}

const STYLE: &str = "body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1000px;padding:16px;color:#222;background:#fafafa}\
h1{margin:0 0 4px}h2{font-size:18px;margin:24px 0 8px}h2 i,.legend i{display:inline-block;width:12px;height:12px;margin-right:6px;border-radius:2px}\
.cmd code{font-size:12px;color:#555;word-break:break-all}\
.cards{display:flex;flex-wrap:wrap;gap:8px}.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:120px}\
.card b{display:block;font-size:18px}.card span{color:#666;font-size:12px}\
svg{width:100%;height:auto;background:#fff;border:1px solid #ddd;border-radius:6px}\
.grid{stroke:#eee}.axisline{stroke:#999}.axis{font-size:11px;fill:#555}.bar.hidden{display:none}\
.legend{display:flex;gap:14px;margin-bottom:6px}.legend label{cursor:pointer}\
.tables{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start}table{border-collapse:collapse;background:#fff;font-size:13px}\
caption{text-align:left;font-weight:600;padding:4px 0}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left;vertical-align:top}td.n,th.n{text-align:right;white-space:nowrap}\
td{overflow-wrap:anywhere}table.wide{width:100%;margin-top:6px}td.path{font:12px ui-monospace,monospace;color:#444}\
table.kv th{background:#f3f3f3;font-weight:600;white-space:nowrap}td i{display:inline-block;width:10px;height:10px;margin-right:6px;border-radius:2px}\
nav{display:flex;flex-wrap:wrap;gap:4px 14px;margin:4px 0 12px;font-size:13px}a{color:#1a5fb4}\
details{margin-top:10px}summary{cursor:pointer;font-weight:600}.more{color:#666;font-style:italic}.tac{white-space:nowrap;margin-right:10px}";

const SCRIPT: &str = "document.querySelectorAll('.legend input').forEach(function(box){\
box.addEventListener('change',function(){var l=box.getAttribute('data-level');\
document.querySelectorAll('.bar.lvl-'+l).forEach(function(r){r.classList.toggle('hidden',!box.checked);});\
var s=document.getElementById('level-'+l);if(s){s.style.display=box.checked?'':'none';}});});\
document.body.setAttribute('data-bars',String(document.querySelectorAll('#chart .bar').length));";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup() {
        assert_eq!(
            esc("<a href=\"x\">&'"),
            "&lt;a href=&quot;x&quot;&gt;&amp;&#39;"
        );
    }

    #[test]
    fn long_evidence_is_cut_on_a_character_boundary() {
        let long = "é<".repeat(CELL_CHARS);
        let c = cell(&long);
        assert!(c.ends_with('…'));
        assert_eq!(c.matches("&lt;").count(), CELL_CHARS / 2);
        assert_eq!(c.chars().filter(|c| *c == 'é').count(), CELL_CHARS / 2);
        assert_eq!(cell("short <b>"), "short &lt;b&gt;");
    }
}
