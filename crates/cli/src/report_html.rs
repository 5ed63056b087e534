//! `-H FILE`: the results summary as one self-contained HTML page. Everything is
//! inline (styles, the chart as SVG, a few lines of script to hide or show a level),
//! so it opens offline and loads nothing from anywhere.

use crate::histogram::Histogram;
use crate::summary::{group, Summary};
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
            esc(k),
            group(*n as u64)
        );
    }
    s.push_str("</tbody></table>");
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
        "<header><h1>scanner results</h1><p class=\"cmd\"><code>{}</code></p></header>",
        esc(command)
    );
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
    body.push_str("<section><h2>Detections over time</h2><div class=\"legend\">");
    for l in Level::ALL.iter().rev() {
        if *l == Level::Emergency && summary.levels[*l as usize].total == 0 {
            // Only critical_systems.txt makes it: a run without one is as it was.
            continue;
        }
        let _ = write!(
            body,
            "<label><input type=\"checkbox\" checked data-level=\"{0}\"><i style=\"background:{1}\"></i>{0} ({2})</label>",
            l.name(),
            COLOURS[*l as usize],
            group(summary.levels[*l as usize].total as u64)
        );
    }
    body.push_str("</div>");
    body.push_str(&chart(histogram, time));
    body.push_str("</section>");
    for l in Level::ALL.iter().rev() {
        let s = &summary.levels[*l as usize];
        if s.total == 0 {
            continue;
        }
        let _ = write!(
            body,
            "<section class=\"level\" id=\"level-{0}\"><h2><i style=\"background:{1}\"></i>{0}: {2} detections, {3} rules</h2><div class=\"tables\">{4}{5}{6}</div></section>",
            l.name(),
            COLOURS[*l as usize],
            group(s.total as u64),
            group(s.unique as u64),
            table("Top alerts", "Rule", &s.top_alerts),
            table("Top computers", "Computer", &s.top_computers),
            table("Dates with most detections", "Date", &s.top_dates),
        );
    }
    if !summary.errors.is_empty() {
        body.push_str("<section><h2>Input errors</h2><table><thead><tr><th>File</th><th>Errors</th></tr></thead><tbody>");
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
.tables{display:flex;flex-wrap:wrap;gap:12px}table{border-collapse:collapse;background:#fff;font-size:13px}\
caption{text-align:left;font-weight:600;padding:4px 0}th,td{border:1px solid #ddd;padding:3px 8px;text-align:left}td.n,th.n{text-align:right}";

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
}
