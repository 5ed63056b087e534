//! `--rule-stats`: the scan's per-rule evaluation times as TSV, one rule a line,
//! slowest (by total time) first.
//!
//! Rule ids, titles and file names are text a rule's author chose: a tab, carriage
//! return or line feed in one would split its row, so they are written as `\t`, `\r`
//! and `\n`, and a backslash as `\\` (so the escapes read back unambiguously). With
//! `excel_safe`, a cell a spreadsheet would take for a formula gets a leading `'`, as in
//! the CSV timeline.

use crate::formula::is_formula;
use scanner_engine::RuleStats;
use scanner_rules::RuleSet;
use std::io::{self, Write};

/// Appends `text` to `out` as a TSV cell: tab, CR, LF and backslash escaped, and a
/// leading `'` when `excel_safe` and the escaped cell may be read as a formula.
fn push_cell(text: &str, excel_safe: bool, out: &mut String) {
    let start = out.len();
    for c in text.chars() {
        match c {
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\n' => out.push_str("\\n"),
            '\\' => out.push_str("\\\\"),
            c => out.push(c),
        }
    }
    if excel_safe && is_formula(&out[start..]) {
        out.insert(start, '\'');
    }
}

/// Writes rule statistics as TSV, slowest rules (by total time) first; `None`
/// (statistics were off) writes the header alone. `excel_safe` writes the text cells a
/// spreadsheet would take for formulas with a leading `'`.
pub fn write_rule_stats(
    stats: Option<&RuleStats>,
    set: &RuleSet,
    excel_safe: bool,
    out: &mut impl Write,
) -> io::Result<()> {
    use std::fmt::Write as _;
    writeln!(
        out,
        "rule_id\ttitle\tfile\tevaluations\ttotal_ns\tmean_ns\ttp90_ns\ttp95_ns\ttp99_ns\tmax_ns"
    )?;
    let Some(stats) = stats else {
        return Ok(());
    };
    let mut order: Vec<usize> = (0..stats.rules.len())
        .filter(|&i| stats.rules[i].count > 0)
        .collect();
    order.sort_by_key(|&i| std::cmp::Reverse(stats.rules[i].total_ns));
    let mut line = String::new();
    for i in order {
        let t = &stats.rules[i];
        let m = &set.rules()[i].meta;
        line.clear();
        for text in [m.id.as_str(), &m.title, &m.file_name] {
            push_cell(text, excel_safe, &mut line);
            line.push('\t');
        }
        let _ = writeln!(
            line,
            "{}\t{}\t{:.0}\t{}\t{}\t{}\t{}",
            t.count,
            t.total_ns,
            t.mean(),
            t.percentile(90.0),
            t.percentile(95.0),
            t.percentile(99.0),
            t.max_ns
        );
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_rules::{load, LoadOptions, RuleSource};

    #[test]
    fn cells_are_escaped_so_that_rows_never_split() {
        let mut out = String::new();
        push_cell("a\tb\nc\rd\\e", false, &mut out);
        assert_eq!(out, "a\\tb\\nc\\rd\\\\e");
        out.clear();
        push_cell("=1+1", true, &mut out);
        push_cell("|-|", true, &mut out);
        push_cell("-", true, &mut out);
        // An escaped tab is no longer a leading tab.
        push_cell("|\t=1", true, &mut out);
        push_cell("\t=1", true, &mut out);
        assert_eq!(out, "'=1+1|-|-|\\t=1\\t=1");
        out.clear();
        push_cell("@x", false, &mut out);
        assert_eq!(out, "@x");
    }

    #[test]
    fn a_rule_title_with_a_tab_and_a_newline_stays_on_its_row() {
        let rule = "title: \"=a\\tb\\nc\"
id: 00000000-0000-0000-0000-0000000000b1
level: low
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4624}, condition: sel}
---
title: Slow
id: 00000000-0000-0000-0000-0000000000b2
level: low
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4625}, condition: sel}
---
title: Never evaluated
id: 00000000-0000-0000-0000-0000000000b3
level: low
logsource: {product: windows, service: security}
detection: {sel: {EventID: 4626}, condition: sel}
";
        let set = load(
            &[RuleSource::Text {
                name: "rules/x\ty.yml".into(),
                text: rule.into(),
            }],
            &LoadOptions::default(),
        );
        assert_eq!(set.rules().len(), 3, "{:?}", set.report().errors);
        assert_eq!(set.rules()[0].meta.title, "=a\tb\nc");
        let mut stats = RuleStats::new(3);
        stats.rules[0].add(1000);
        stats.rules[1].add(5000);
        stats.rules[1].add(7000);
        for (excel_safe, title) in [(false, "=a\\tb\\nc"), (true, "'=a\\tb\\nc")] {
            let mut tsv = Vec::new();
            write_rule_stats(Some(&stats), &set, excel_safe, &mut tsv).unwrap();
            let tsv = String::from_utf8(tsv).unwrap();
            let lines: Vec<&str> = tsv.lines().collect();
            assert_eq!(
                lines.len(),
                3,
                "slowest first, unevaluated left out: {tsv:?}"
            );
            assert!(lines[1].starts_with("00000000-0000-0000-0000-0000000000b2\tSlow\t"));
            assert!(
                lines[1].ends_with("\t2\t12000\t6000\t6656\t6656\t6656\t7000"),
                "{tsv:?}"
            );
            let cells: Vec<&str> = lines[2].split('\t').collect();
            assert_eq!(cells.len(), 10, "{tsv:?}");
            assert_eq!(cells[1], title);
            assert_eq!(cells[2], "x\\ty.yml");
            assert_eq!(cells[3], "1");
        }
        let mut header_only = Vec::new();
        write_rule_stats(None, &set, false, &mut header_only).unwrap();
        assert_eq!(String::from_utf8(header_only).unwrap().lines().count(), 1);
    }
}
