//! SigmaHQ's regression suite: for each case under
//! `../shared/corpus/sigma-regression/regression_data`, the rule its `info.yml` names must
//! fire on its EVTX file, at least `match_count` times when given, with the SigmaHQ rules
//! loaded as they are. (Two cases say `match_count: 1` for files whose every event
//! satisfies the rule, as SigmaHQ's own JSON dumps beside them show; more hits than
//! `match_count` are printed, not failed.) It needs the shared data, so it is `#[ignore]`d and run by
//! `.ci/run` (`cargo test --release -p scanner-engine --test sigma_regression -- --ignored`).

use scanner_engine::{RuleRef, Scanner};
use scanner_input::InputFile;
use scanner_rules::{load, LoadOptions, RuleSource};
use std::path::{Path, PathBuf};

fn shared() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
}

struct Case {
    info: PathBuf,
    rule_id: String,
    evtx: PathBuf,
    match_count: Option<usize>,
}

fn field<'a>(text: &'a str, key: &str) -> Vec<&'a str> {
    text.lines()
        .filter_map(|l| l.trim().trim_start_matches("- ").strip_prefix(key))
        .map(|v| v.trim().trim_matches('\'').trim_matches('"'))
        .collect()
}

fn cases(root: &Path) -> Vec<Case> {
    let mut infos = Vec::new();
    let mut stack = vec![root.join("regression_data")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n == "info.yml") {
                infos.push(p);
            }
        }
    }
    infos.sort();
    infos
        .into_iter()
        .map(|info| {
            let text = std::fs::read_to_string(&info).expect("info.yml");
            // rule_metadata holds the rule's id; the first `id:` line is the test's own.
            let after = text.split("rule_metadata:").nth(1).unwrap_or("");
            let rule_id = field(after, "id:")
                .first()
                .copied()
                .unwrap_or("")
                .to_string();
            let path = field(&text, "path:")
                .first()
                .copied()
                .unwrap_or("")
                .to_string();
            let match_count = field(&text, "match_count:")
                .first()
                .and_then(|n| n.parse().ok());
            Case {
                evtx: root.join(path),
                info,
                rule_id,
                match_count,
            }
        })
        .collect()
}

#[test]
#[ignore = "needs ../shared; run by .ci/run"]
fn every_regression_case_fires_its_rule() {
    let root = shared().join("corpus/sigma-regression");
    let cases = cases(&root);
    assert!(!cases.is_empty(), "no cases under {}", root.display());
    let set = load(
        &[RuleSource::Path(shared().join("rules/sigma"))],
        &LoadOptions::default(),
    );
    let scanner = Scanner::new(set);
    let mut failures = Vec::new();
    for c in &cases {
        let size = std::fs::metadata(&c.evtx).map(|m| m.len()).unwrap_or(0);
        let files = [InputFile::new(c.evtx.clone(), size)];
        let result = scanner.scan(&files).expect("spilled rows read back");
        let fired = result
            .rows
            .iter()
            .filter(|r| {
                matches!(r.rule, RuleRef::Rule(i)
                    if scanner.rules().rules()[i as usize].meta.id == c.rule_id.as_str())
            })
            .count();
        let want = c.match_count.unwrap_or(1).max(1);
        let ok = fired >= want;
        if ok && fired > want {
            println!(
                "{}: rule {} fired {fired} times, match_count {want}",
                c.info.display(),
                c.rule_id
            );
        }
        if !ok || !result.errors.is_empty() {
            failures.push(format!(
                "{}: rule {} fired {fired} times (expected {}), errors {:?}",
                c.info.display(),
                c.rule_id,
                c.match_count.map_or("at least 1".into(), |n| n.to_string()),
                result.errors
            ));
        }
    }
    println!(
        "{} of {} regression cases pass",
        cases.len() - failures.len(),
        cases.len()
    );
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
