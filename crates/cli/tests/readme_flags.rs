//! The README's table of options against the binary: every flag the table names is one
//! `scanner csv-timeline --help` (or the global `scanner --help`) lists, so the table
//! cannot drift from the tools.

mod support;

use std::collections::BTreeSet;

/// The flags named in backquotes in the rows of README's "Options that matter most".
fn readme_flags() -> BTreeSet<String> {
    let readme = std::fs::read_to_string(support::root().join("README.md")).expect("README");
    let table = readme
        .split("Options that matter most")
        .nth(1)
        .expect("README has its table of options");
    let mut flags = BTreeSet::new();
    for row in table.lines().skip_while(|l| !l.starts_with('|')) {
        if !row.starts_with('|') {
            break;
        }
        // The first cell holds the options, each in backquotes, maybe with a value.
        let first = row.split('|').nth(1).unwrap_or("");
        for quoted in first.split('`').skip(1).step_by(2) {
            let flag = quoted.split_whitespace().next().unwrap_or("");
            if flag.starts_with('-') && flag.len() > 1 {
                flags.insert(flag.trim_end_matches("...").to_string());
            }
        }
    }
    flags
}

/// The flags a help text lists (`-x, --long <V>` forms).
fn help_flags(args: &[&str]) -> BTreeSet<String> {
    let out = support::scanner(args);
    assert!(out.status.success(), "{args:?} --help failed");
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.split(|c: char| c.is_whitespace() || c == ',' || c == '=' || c == '[' || c == ']')
        .filter(|w| w.starts_with('-') && w.len() > 1 && !w.starts_with("---"))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_flag_of_the_readme_table_is_one_the_binary_takes() {
    let table = readme_flags();
    assert!(
        table.len() >= 40 && table.contains("--rule-stats") && table.contains("-d"),
        "the table was not read: {table:?}"
    );
    let mut known = help_flags(&["csv-timeline", "--help"]);
    known.extend(help_flags(&["--help"]));
    let missing: Vec<_> = table.iter().filter(|f| !known.contains(*f)).collect();
    assert!(
        missing.is_empty(),
        "README's table names flags the binary does not list: {missing:?}"
    );
}
