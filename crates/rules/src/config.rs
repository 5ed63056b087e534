//! The rule set's configuration folder, in Hayabusa's layout: field aliases, default
//! Details, rule lists, abbreviations and `expand` placeholder values. Each file is
//! optional; the built-in defaults fill what a folder lacks.

use crate::error::{ErrorKind::Malformed, RuleError};
use crate::fields::{FxHashMap, FxHashSet};
use crate::report::LoadError;
use crate::text_file::{self, read_error};
use scanner_files::{Seen, TextFile};
use scanner_yaml::scalar_text as yaml_text;
use std::path::Path;

/// Configuration read from a config folder (or the built-in one).
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub struct Config {
    /// `eventkey_alias.txt`: rule field name → event path.
    pub aliases: Vec<(String, String)>,
    /// `default_details.txt`: `Provider_EventID` → Details template.
    pub default_details: FxHashMap<String, String>,
    /// `noisy_rules.txt`: rule ids disabled unless `-n`.
    pub noisy: FxHashSet<String>,
    /// `exclude_rules.txt`: rule ids always disabled.
    pub exclude: FxHashSet<String>,
    /// `proven_rules.txt`: the rule ids `-P` keeps; `None` when the folder has no such
    /// file.
    pub proven: Option<FxHashSet<String>>,
    /// `channel_abbreviations.txt`: lowercase channel → abbreviation.
    pub channel_abbrev: FxHashMap<String, String>,
    /// `provider_abbreviations.txt`: lowercase provider → abbreviation.
    pub provider_abbrev: FxHashMap<String, String>,
    /// `generic_abbreviations.txt`: (word, abbreviation) replaced inside provider names.
    pub generic_abbrev: Vec<(String, String)>,
    /// `target_event_IDs.txt`: the EventIDs `-E` keeps.
    pub target_eids: FxHashSet<String>,
    /// `mitre_tactics.txt`: `attack.<tactic>` tag → short name.
    pub mitre_tactics: FxHashMap<String, String>,
    /// `expand/<name>.txt`: placeholder values.
    pub placeholders: FxHashMap<String, Vec<String>>,
    /// `data_mapping/*.yaml`: how to display some fields of some events.
    pub data_mappings: Vec<DataMapping>,
    /// `geoip_field_mapping.yaml`'s text (the fields `-G` looks up, and in which events:
    /// the engine's `GeoIpMapping` reads it when `-G` asks); `None` when the folder has no
    /// such file.
    pub geoip: Option<String>,
    /// Files of the folder that could not be read or parsed (a scan must not go on
    /// without them: see [`LoadReport::config_failures`](crate::LoadReport)).
    pub errors: Vec<LoadError>,
}

/// One `data_mapping/*.yaml` file: display rewrites for the fields of one kind of
/// event. They change what Details, ExtraFieldInfo and AllFieldInfo show, never what
/// rules match.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DataMapping {
    /// `Channel`, as written.
    pub channel: String,
    /// `EventID`, as text.
    pub event_id: String,
    /// `Provider_Name`: when set, only events of this provider are rewritten.
    pub provider: Option<String>,
    /// `RewriteFieldData`: field name → (text, replacement) pairs, in file order.
    pub rewrite: Vec<(String, Vec<(String, String)>)>,
    /// `HexToDecimal`: fields whose `0x…` values are shown in decimal.
    pub hex_to_decimal: Vec<String>,
}

impl DataMapping {
    /// Parses one mapping file; `Err` names what is missing or malformed.
    pub fn parse(text: &str) -> Result<DataMapping, RuleError> {
        let doc = scanner_yaml::document(text)?;
        let get = |k: &str| doc.get(k).and_then(yaml_text);
        let channel = get("Channel").ok_or(Malformed("no Channel"))?;
        let event_id = get("EventID").ok_or(Malformed("no EventID"))?;
        let provider = get("Provider_Name");
        let mut rewrite = Vec::new();
        if let Some(map) = doc.get("RewriteFieldData").and_then(|v| v.as_mapping()) {
            for (field, list) in map {
                let Some(field) = yaml_text(field) else {
                    return Err(Malformed("RewriteFieldData: a field name is not text").into());
                };
                let mut pairs = Vec::new();
                // A list of one-entry maps (`- '%%1842': 'YES'`), or one plain map.
                let entries: Vec<&yaml_serde::Mapping> = match list {
                    yaml_serde::Value::Sequence(items) => {
                        items.iter().filter_map(|i| i.as_mapping()).collect()
                    }
                    yaml_serde::Value::Mapping(m) => vec![m],
                    _ => Vec::new(),
                };
                for m in entries {
                    for (from, to) in m {
                        if let (Some(from), Some(to)) = (yaml_text(from), yaml_text(to)) {
                            if !from.is_empty() {
                                pairs.push((from, to));
                            }
                        }
                    }
                }
                rewrite.push((field, pairs));
            }
        }
        let hex_to_decimal = match doc.get("HexToDecimal") {
            Some(yaml_serde::Value::Sequence(items)) => {
                items.iter().filter_map(yaml_text).collect()
            }
            Some(v) => yaml_text(v).into_iter().collect(),
            None => Vec::new(),
        };
        Ok(DataMapping {
            channel,
            event_id,
            provider,
            rewrite,
            hex_to_decimal,
        })
    }
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

fn id_list(text: &str) -> FxHashSet<String> {
    lines(text)
        .filter_map(|l| l.split(|c: char| c == '#' || c.is_whitespace()).next())
        .filter(|id| !id.is_empty())
        .map(str::to_string)
        .collect()
}

fn pairs(text: &str) -> impl Iterator<Item = (&str, &str)> {
    lines(text).filter_map(|l| {
        let (a, b) = l.split_once(',')?;
        Some((a.trim(), b.trim()))
    })
}

impl Config {
    /// Reads one config file's content into the matching table, by file name.
    pub fn add_file(&mut self, name: &str, text: &str) {
        match name {
            "eventkey_alias.txt" => self.aliases.extend(
                pairs(text)
                    .filter(|(a, _)| *a != "alias")
                    .map(|(a, p)| (a.to_string(), p.to_string())),
            ),
            "default_details.txt" => {
                for l in lines(text).skip_while(|l| l.starts_with("Provider")) {
                    let mut it = l.splitn(3, ',');
                    if let (Some(p), Some(e), Some(d)) = (it.next(), it.next(), it.next()) {
                        self.default_details
                            .insert(format!("{}_{}", p.trim(), e.trim()), d.trim().to_string());
                    }
                }
            }
            "noisy_rules.txt" => self.noisy.extend(id_list(text)),
            "exclude_rules.txt" => self.exclude.extend(id_list(text)),
            "proven_rules.txt" => self
                .proven
                .get_or_insert_with(FxHashSet::default)
                .extend(id_list(text)),
            "channel_abbreviations.txt" => self.channel_abbrev.extend(
                pairs(text)
                    .filter(|(c, _)| *c != "Channel")
                    .map(|(c, a)| (c.to_lowercase(), a.to_string())),
            ),
            "provider_abbreviations.txt" => self.provider_abbrev.extend(
                pairs(text)
                    .filter(|(p, _)| *p != "Provider")
                    .map(|(p, a)| (p.to_lowercase(), a.to_string())),
            ),
            "generic_abbreviations.txt" => self.generic_abbrev.extend(
                pairs(text)
                    .filter(|(w, a)| !w.is_empty() && !a.contains("Abbreviation"))
                    .map(|(w, a)| (w.to_string(), a.to_string())),
            ),
            "target_event_IDs.txt" => self.target_eids.extend(id_list(text)),
            "mitre_tactics.txt" => self
                .mitre_tactics
                .extend(pairs(text).map(|(t, a)| (t.to_lowercase(), a.to_string()))),
            "geoip_field_mapping.yaml" => self.geoip = Some(text.to_string()),
            _ => {}
        }
    }

    /// Reads a config folder, noting in `seen` every file read and every path looked
    /// for (a table may be added later); unreadable files are recorded in `errors`.
    pub(crate) fn load_dir(dir: &Path, seen: &Seen) -> Config {
        let mut c = Config::default();
        let names = [
            "eventkey_alias.txt",
            "default_details.txt",
            "noisy_rules.txt",
            "exclude_rules.txt",
            "channel_abbreviations.txt",
            "mitre_tactics.txt",
            "provider_abbreviations.txt",
            "generic_abbreviations.txt",
            "target_event_IDs.txt",
            "proven_rules.txt",
            "geoip_field_mapping.yaml",
        ];
        for n in names {
            let p = dir.join(n);
            if seen.stat(&p).is_none() {
                continue;
            }
            match text_file::read_noting(&p, TextFile::Config, seen) {
                Ok(t) => c.add_file(n, &t),
                Err(e) => c.errors.push(read_error(&p, e)),
            }
        }
        let maps = dir.join("data_mapping");
        seen.stat(&maps);
        if let Ok(rd) = std::fs::read_dir(&maps) {
            let mut paths: Vec<_> = rd.flatten().map(|e| e.path()).collect();
            paths.sort();
            for p in paths {
                if !matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml")) {
                    continue;
                }
                let parsed = text_file::read_noting(&p, TextFile::Config, seen)
                    .and_then(|t| DataMapping::parse(&t));
                match parsed {
                    Ok(m) => c.data_mappings.push(m),
                    Err(e) => c.errors.push(read_error(&p, e)),
                }
            }
        }
        for sub in [
            dir.join("expand"),
            dir.join("..").join("config").join("expand"),
        ] {
            // Either folder may be absent.
            let _ = c.add_placeholder_dir(&sub, seen);
        }
        c
    }

    /// Reads `<name>.txt` files of `expand` placeholder values (one per line, `#` comments)
    /// from `dir`, noting in `seen` the folder and the files read. An unreadable file is
    /// recorded in `errors`; an unreadable folder is the error returned.
    pub(crate) fn add_placeholder_dir(&mut self, dir: &Path, seen: &Seen) -> Result<(), LoadError> {
        seen.stat(dir);
        let rd = std::fs::read_dir(dir).map_err(|e| read_error(dir, e))?;
        for e in rd.flatten() {
            let p = e.path();
            let Some(name) = p.file_stem().and_then(|s| s.to_str()) else {
                continue;
            };
            if p.extension().and_then(|e| e.to_str()) != Some("txt") {
                continue;
            }
            match text_file::read_noting(&p, TextFile::Placeholder, seen) {
                Ok(t) => {
                    self.placeholders
                        .insert(name.to_string(), lines(&t).map(str::to_string).collect());
                }
                Err(e) => self.errors.push(read_error(&p, e)),
            }
        }
        Ok(())
    }

    /// Fills tables this config lacks from `fallback`.
    pub fn fill_from(&mut self, fallback: &Config) {
        if self.channel_abbrev.is_empty() {
            self.channel_abbrev = fallback.channel_abbrev.clone();
        }
        if self.mitre_tactics.is_empty() {
            self.mitre_tactics = fallback.mitre_tactics.clone();
        }
        if self.provider_abbrev.is_empty() && self.generic_abbrev.is_empty() {
            self.provider_abbrev = fallback.provider_abbrev.clone();
            self.generic_abbrev = fallback.generic_abbrev.clone();
        }
        if self.target_eids.is_empty() {
            self.target_eids = fallback.target_eids.clone();
        }
        if self.default_details.is_empty() {
            self.default_details = fallback.default_details.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hayabusa_style_files() {
        let mut c = Config::default();
        c.add_file(
            "eventkey_alias.txt",
            "alias,event_key\nUser,Event.EventData.SubjectUserName\n",
        );
        c.add_file(
            "default_details.txt",
            "Provider, EID, Details\nMicrosoft-Windows-Security-Auditing, 4688, Cmdline: %CommandLine% ¦ Proc: %NewProcessName%\n",
        );
        c.add_file(
            "noisy_rules.txt",
            "#c\n0090ea60-f4a2-43a8-8657-3a9a4ddcf547 # Sysmon 6\n",
        );
        c.add_file(
            "channel_abbreviations.txt",
            "Channel,Abbreviation\nSecurity,Sec\n",
        );
        assert_eq!(
            c.aliases,
            vec![("User".into(), "Event.EventData.SubjectUserName".into())]
        );
        assert_eq!(
            c.default_details["Microsoft-Windows-Security-Auditing_4688"],
            "Cmdline: %CommandLine% ¦ Proc: %NewProcessName%"
        );
        assert!(c.noisy.contains("0090ea60-f4a2-43a8-8657-3a9a4ddcf547"));
        assert_eq!(c.channel_abbrev["security"], "Sec");
    }

    #[test]
    fn reads_data_mapping_files() {
        let m = DataMapping::parse(
            "Title: 'x'\nChannel: Security\nEventID: 4688\nRewriteFieldData:\n    TokenElevationType:\n        - '%%1936': 'FULL_TOKEN' # comment\n        - '%%1937': 'ELEVATED_TOKEN'\n    LogonType:\n        - '10': '10 - REMOTE'\nHexToDecimal:\n    - 'NewProcessId'\n    - 'ProcessId'\nsample-evtx: |\n    <Event/>\n",
        )
        .unwrap();
        assert_eq!(
            (
                m.channel.as_str(),
                m.event_id.as_str(),
                m.provider.as_deref()
            ),
            ("Security", "4688", None)
        );
        assert_eq!(m.rewrite[0].0, "TokenElevationType");
        assert_eq!(
            m.rewrite[0].1[1],
            ("%%1937".to_string(), "ELEVATED_TOKEN".to_string())
        );
        assert_eq!(
            m.rewrite[1].1,
            vec![("10".to_string(), "10 - REMOTE".to_string())]
        );
        assert_eq!(m.hex_to_decimal, vec!["NewProcessId", "ProcessId"]);
        let one = DataMapping::parse("Channel: System\nProvider_Name: 'Service Control Manager'\nEventID: 7023\nHexToDecimal: 'ProcessId'\n").unwrap();
        assert_eq!(one.provider.as_deref(), Some("Service Control Manager"));
        assert_eq!(one.hex_to_decimal, vec!["ProcessId"]);
        assert!(DataMapping::parse("EventID: 1\n").is_err());
    }

    #[test]
    fn load_dir_reads_the_data_mapping_folder_and_reports_bad_files() {
        let dir = std::env::temp_dir().join(format!("scanner-config-{}", std::process::id()));
        let maps = dir.join("data_mapping");
        std::fs::create_dir_all(&maps).unwrap();
        std::fs::write(
            maps.join("a.yaml"),
            "Channel: Security\nEventID: 4624\nHexToDecimal: 'ProcessId'\n",
        )
        .unwrap();
        std::fs::write(maps.join("b.yaml"), "Title: no channel\n").unwrap();
        std::fs::write(maps.join("notes.txt"), "ignored").unwrap();
        let c = Config::load_dir(&dir, &Seen::off());
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(c.data_mappings.len(), 1);
        assert_eq!(c.data_mappings[0].hex_to_decimal, vec!["ProcessId"]);
        assert_eq!(c.errors.len(), 1);
        assert!(c.errors[0].file.ends_with("b.yaml"));
    }

    #[test]
    fn data_mapping_and_placeholder_errors_keep_their_text() {
        let e = |t: &str| DataMapping::parse(t).unwrap_err().to_string();
        assert_eq!(e("EventID: 1\n"), "no Channel");
        assert_eq!(e("Channel: Security\n"), "no EventID");
        assert_eq!(
            e("Channel: S\nEventID: 1\nRewriteFieldData:\n  [a]: x\n"),
            "RewriteFieldData: a field name is not text"
        );
        let missing = Path::new("/no/such/expand");
        let err = Config::default()
            .add_placeholder_dir(missing, &Seen::off())
            .unwrap_err();
        assert_eq!(err.file, "/no/such/expand");
        assert!(err.to_string().starts_with("/no/such/expand: "));
    }
}
