//! Damaged rules: each is rejected alone, with its reason, and none can make loading
//! or matching slow without bound.

use scanner_rules::{load, LoadOptions, RuleSet, RuleSource};
use std::time::{Duration, Instant};

fn load_text(docs: &[(&str, &str)]) -> RuleSet {
    let sources: Vec<RuleSource> = docs
        .iter()
        .map(|(name, text)| RuleSource::Text {
            name: name.to_string(),
            text: text.to_string(),
        })
        .collect();
    load(&sources, &LoadOptions::default())
}

fn rule(detection: &str) -> String {
    format!(
        "title: t\nid: 00000000-0000-0000-0000-000000000001\nlevel: high\n\
         logsource:\n  product: windows\n  service: security\n\
         detection:\n{detection}"
    )
}

const GOOD: &str =
    "  selection:\n    EventID: 4688\n    CommandLine|contains: whoami\n  condition: selection\n";

/// (name, rule text, words the reason must contain)
fn bad_rules() -> Vec<(&'static str, String, &'static str)> {
    vec![
        (
            "invalid_yaml",
            "title: [unclosed\n  - :".into(),
            "invalid YAML",
        ),
        ("tabs", "title: t\n\tdetection: x\n".into(), "invalid YAML"),
        ("not_a_mapping", "- just\n- a list\n".into(), ""),
        (
            "no_detection",
            "title: t\nlogsource:\n  product: windows\n".into(),
            "detection",
        ),
        (
            "no_condition",
            // (One selection and no condition means that selection.)
            rule("  selection:\n    EventID: 1\n  other:\n    EventID: 2\n"),
            "condition",
        ),
        (
            "unknown_modifier",
            rule("  selection:\n    CommandLine|contains|bogus: x\n  condition: selection\n"),
            "bogus",
        ),
        (
            "bad_condition",
            rule("  selection:\n    EventID: 1\n  condition: selection and or (\n"),
            "condition",
        ),
        (
            "unknown_identifier",
            rule("  selection:\n    EventID: 1\n  condition: selection and not nosuchthing\n"),
            "nosuchthing",
        ),
        (
            "quantifier_matches_nothing",
            rule("  selection:\n    EventID: 1\n  condition: 1 of filter_*\n"),
            "filter_",
        ),
        (
            "regex_does_not_compile",
            rule("  selection:\n    CommandLine|re: '(unclosed'\n  condition: selection\n"),
            "regex",
        ),
        (
            "regex_too_big",
            rule("  selection:\n    CommandLine|re: '(\\w{1000}){1000}'\n  condition: selection\n"),
            "regex",
        ),
        (
            "unknown_level",
            "title: t\nlevel: extreme\nlogsource:\n  product: windows\n\
             detection:\n  s:\n    EventID: 1\n  condition: s\n"
                .into(),
            "level",
        ),
        (
            "value_is_a_map",
            rule("  selection:\n    CommandLine:\n      nested: map\n  condition: selection\n"),
            "",
        ),
        (
            "deep_condition",
            rule(&format!(
                "  selection:\n    EventID: 1\n  condition: {}selection{}\n",
                "(".repeat(100_000),
                ")".repeat(100_000)
            )),
            "condition",
        ),
        (
            "deep_not",
            rule(&format!(
                "  selection:\n    EventID: 1\n  condition: {}selection\n",
                "not ".repeat(100_000)
            )),
            "condition",
        ),
        (
            "deep_yaml",
            format!(
                "title: t\ndetection: {}x{}\n",
                "[".repeat(50_000),
                "]".repeat(50_000)
            ),
            "nest deeper",
        ),
        (
            "deep_yaml_maps",
            format!(
                "title: t\ndetection: {}x{}\n",
                "{a: ".repeat(50_000),
                "}".repeat(50_000)
            ),
            "nest deeper",
        ),
        (
            "deep_block_yaml",
            format!("title: t\ndetection:\n{}x\n", "- ".repeat(20_000)),
            "",
        ),
    ]
}

#[test]
fn no_bad_rule_loads_slowly() {
    let mut slow = Vec::new();
    for (name, text, _) in bad_rules() {
        let start = Instant::now();
        let set = load_text(&[(name, &text)]);
        let took = start.elapsed();
        eprintln!("{name}: {took:?}");
        assert!(set.rules().is_empty(), "{name} loaded");
        if took > Duration::from_secs(5) {
            slow.push(format!("{name}: {took:?}"));
        }
    }
    assert!(slow.is_empty(), "slow to reject: {slow:?}");
}

#[test]
fn each_bad_rule_is_rejected_alone_with_its_reason() {
    let bad = bad_rules();
    let mut docs: Vec<(String, String)> = bad
        .iter()
        .map(|(n, t, _)| (format!("{n}.yml"), t.clone()))
        .collect();
    docs.push(("good.yml".into(), rule(GOOD)));
    let refs: Vec<(&str, &str)> = docs.iter().map(|(a, b)| (a.as_str(), b.as_str())).collect();
    let start = Instant::now();
    let set = load_text(&refs);
    assert!(
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    let mut missing = Vec::new();
    for (name, _, why) in &bad {
        let file = format!("{name}.yml");
        let errs: Vec<_> = set
            .report()
            .errors
            .iter()
            .filter(|e| e.file == file)
            .collect();
        if errs.is_empty() || !errs.iter().any(|e| e.reason.contains(why)) {
            missing.push(format!(
                "{file}: {:?}",
                errs.iter().map(|e| &e.reason).collect::<Vec<_>>()
            ));
        }
    }
    for e in &set.report().errors {
        eprintln!(
            "{}: {}",
            e.file,
            e.reason.chars().take(200).collect::<String>()
        );
    }
    assert!(
        missing.is_empty(),
        "not rejected with their reason:\n{}",
        missing.join("\n")
    );
    assert_eq!(set.rules().len(), 1, "only the good rule loads");
}

#[test]
fn unknown_top_level_keys_are_accepted() {
    // Sigma allows custom attributes; Hayabusa's rules carry their own.
    let text = rule(GOOD).replace("level: high\n", "level: high\nmy_custom_key: [1, 2]\n");
    let set = load_text(&[("custom.yml", &text)]);
    assert!(set.report().errors.is_empty(), "{:?}", set.report().errors);
    assert_eq!(set.rules().len(), 1);
}

/// A Security event whose every other field holds one value.
struct Ev(String, String);

impl scanner_rules::Event for Ev {
    fn values(&self, f: scanner_rules::FieldId) -> impl Iterator<Item = scanner_rules::Value<'_>> {
        std::iter::once(if f == scanner_rules::CHANNEL {
            scanner_rules::Value {
                raw: "Security",
                lower: "security",
            }
        } else {
            scanner_rules::Value {
                raw: &self.0,
                lower: &self.1,
            }
        })
    }
    fn all_values(&self) -> impl Iterator<Item = scanner_rules::Value<'_>> {
        self.values(scanner_rules::CHANNEL)
    }
}

#[test]
fn catastrophic_patterns_match_in_bounded_time() {
    let patterns = [
        "    CommandLine|re: '(a+)+$'\n",
        "    CommandLine|re: '(a|aa)*c'\n",
        "    CommandLine|re: '(.*a){20}b'\n",
        "    CommandLine|re: '^(\\w+\\s?)*$'\n",
        "    CommandLine: '*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'\n",
        "    CommandLine|contains|all:\n      - 'aaaa'\n      - 'aaab'\n",
        "    CommandLine|endswith: 'a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b'\n",
    ];
    let value = "a".repeat(200_000) + "!";
    let ev = Ev(value.clone(), value.to_lowercase());
    for p in patterns {
        let text = rule(&format!("  selection:\n{p}  condition: selection\n"));
        let set = load_text(&[("p.yml", &text)]);
        assert!(
            set.report().errors.is_empty(),
            "{p}: {:?}",
            set.report().errors
        );
        let start = Instant::now();
        for r in set.rules() {
            assert!(!r.is_match(&ev), "{p}");
        }
        // And a value that matches, so the pattern is really evaluated.
        let hit = "a".repeat(1000) + "b";
        let yes = Ev(hit.clone(), hit.clone());
        if !p.contains("'(a+)+$'") && !p.contains("\\w") {
            assert!(
                set.rules()[0].is_match(&yes) || p.contains("(a|aa)*c"),
                "{p}"
            );
        }
        let took = start.elapsed();
        eprintln!("{}: {took:?}", p.trim());
        assert!(took < Duration::from_secs(5), "{p}: {took:?}");
    }
}
