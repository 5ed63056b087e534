//! Config files as hostile input: the first byte picks which file the rest is — one of
//! the config folder's tables (through `Config::add_file`), a `data_mapping/*.yaml`
//! file (through `DataMapping::parse`) or `logsource.yaml` (written to a temporary
//! config folder and loaded with a rule that uses it). A file is read or rejected;
//! never a panic, and a rejected `logsource.yaml` is named in the error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use scanner_rules::{load, Config, DataMapping, LoadOptions, RuleSource};

/// The config folder's tables, as `Config::load_dir` reads them.
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

/// A rule whose log source the table maps.
const RULE: &str = "title: F\nlogsource:\n  category: process_creation\n  product: windows\n\
detection:\n  s:\n    Image|endswith: x.exe\n  condition: s\n";

fuzz_target!(|data: &[u8]| {
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
        let _ = scanner_timeline::provider_abbrev(&c, "Microsoft-Windows-Security-Auditing");
        let _ = scanner_timeline::channel_abbrev(&c, "Microsoft-Windows-Sysmon/Operational");
    } else if pick == TABLES.len() {
        let _ = DataMapping::parse(text);
    } else {
        let base = std::env::var_os("FUZZ_TMP")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(std::env::temp_dir);
        let dir = base.join(format!("scanner-fuzz-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let table = dir.join("logsource.yaml");
        std::fs::write(&table, text).unwrap();
        let set = load(
            &[RuleSource::Text {
                name: "fuzz.yml".into(),
                text: RULE.into(),
            }],
            &LoadOptions {
                config_dir: Some(dir),
                ..LoadOptions::default()
            },
        );
        for e in &set.report().config_failures {
            assert_eq!(e.file, table.display().to_string());
        }
    }
});
