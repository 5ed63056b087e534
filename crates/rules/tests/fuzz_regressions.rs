//! Inputs the fuzzers (`fuzz/`) found or were seeded with, kept as regression tests:
//! `fuzz/regressions/rule_yaml/*` through the loader, `fuzz/regressions/condition/*`
//! through the condition parser, `config_file/*` and `placeholder/*` through the same
//! code as their fuzz targets (mirrored here, so that it type-checks and runs on
//! stable). Each must finish, without a panic, in bounded time.

use scanner_rules::{load, Cond, Config, DataMapping, ErrorKind, LoadOptions, RuleSource};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn inputs(target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../fuzz/regressions")
        .join(target);
    let mut v: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    assert!(!v.is_empty(), "no inputs in {}", dir.display());
    v
}

#[test]
fn rule_yaml_regressions() {
    for (name, bytes) in inputs("rule_yaml") {
        let start = Instant::now();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let _ = load(
            &[RuleSource::Text {
                name: name.clone(),
                text,
            }],
            &LoadOptions::default(),
        );
        assert!(start.elapsed() < Duration::from_secs(10), "{name}");
    }
}

#[test]
fn condition_regressions() {
    let names: Vec<String> = ["selection", "selection_a", "sel2", "filter"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    for (name, bytes) in inputs("condition") {
        let start = Instant::now();
        if let Ok(c) = Cond::parse(&String::from_utf8_lossy(&bytes), &names) {
            let _ = c.eval(&mut |i| i % 2 == 0);
        }
        assert!(start.elapsed() < Duration::from_secs(10), "{name}");
    }
}

/// A fresh folder for one target's temporary files.
fn scratch(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("scanner-fuzz-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// `fuzz_targets/config_file.rs`'s body.
fn config_file(data: &[u8], dir: &Path) {
    const TABLES: [&str; 9] = [
        "eventkey_alias.txt",
        "default_details.txt",
        "noisy_rules.txt",
        "exclude_rules.txt",
        "channel_abbreviations.txt",
        "mitre_tactics.txt",
        "provider_abbreviations.txt",
        "generic_abbreviations.txt",
        "target_event_IDs.txt",
    ];
    const RULE: &str = "title: F\nlogsource:\n  category: process_creation\n  product: windows\n\
detection:\n  s:\n    Image|endswith: x.exe\n  condition: s\n";
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let pick = pick as usize % (TABLES.len() + 2);
    if pick < TABLES.len() {
        let mut c = Config::default();
        c.add_file(TABLES[pick], text);
    } else if pick == TABLES.len() {
        let _ = DataMapping::parse(text);
    } else {
        let table = dir.join("logsource.yaml");
        std::fs::write(&table, text).unwrap();
        let set = load(
            &[RuleSource::Text {
                name: "fuzz.yml".into(),
                text: RULE.into(),
            }],
            &LoadOptions {
                config_dir: Some(dir.to_path_buf()),
                ..LoadOptions::default()
            },
        );
        for e in &set.report().config_failures {
            assert_eq!(e.file, table.display().to_string());
        }
    }
}

/// `fuzz_targets/placeholder.rs`'s body.
fn placeholder(data: &[u8], dir: &Path) {
    const RULE: &str =
        "title: P\ndetection:\n  a:\n    Channel: Security\n    User|expand: '%fuzz%'\n\
  b:\n    CommandLine|expand|contains|windash: '-x %fuzz%'\n  condition: a or b\n";
    let file = dir.join("fuzz.txt");
    std::fs::write(&file, data).unwrap();
    let set = load(
        &[RuleSource::Text {
            name: "fuzz.yml".into(),
            text: RULE.into(),
        }],
        &LoadOptions {
            expand_dir: Some(dir.to_path_buf()),
            ..LoadOptions::default()
        },
    );
    for e in &set.report().config_failures {
        assert_eq!(e.file, file.display().to_string());
    }
    for e in &set.report().errors {
        assert_eq!(e.file, "fuzz.yml");
    }
}

#[test]
fn config_file_regressions() {
    let dir = scratch("config");
    for (name, bytes) in inputs("config_file") {
        let start = Instant::now();
        config_file(&bytes, &dir);
        assert!(start.elapsed() < Duration::from_secs(10), "{name}");
    }
    // The bombs are refused as such.
    for (name, bytes) in inputs("config_file") {
        if name == "data-mapping-alias-bomb" {
            let e = DataMapping::parse(std::str::from_utf8(&bytes[1..]).unwrap()).unwrap_err();
            assert!(
                matches!(
                    e.kind(),
                    ErrorKind::Yaml(scanner_yaml::Error::Expansion { .. })
                ),
                "{e}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn placeholder_regressions() {
    let dir = scratch("expand");
    for (name, bytes) in inputs("placeholder") {
        let start = Instant::now();
        placeholder(&bytes, &dir);
        assert!(start.elapsed() < Duration::from_secs(10), "{name}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
