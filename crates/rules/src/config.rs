//! The rule set's configuration folder, in Hayabusa's layout: field aliases, default
//! Details, rule lists, abbreviations and `expand` placeholder values. Each file is
//! optional; the built-in defaults fill what a folder lacks.

use crate::fields::FxHashMap;
use std::collections::HashSet;
use std::path::Path;

/// Configuration read from a config folder (or the built-in one).
#[derive(Debug, Clone, Default)]
pub struct Config {
    /// `eventkey_alias.txt`: rule field name → event path.
    pub aliases: Vec<(String, String)>,
    /// `default_details.txt`: `Provider_EventID` → Details template.
    pub default_details: FxHashMap<String, String>,
    /// `noisy_rules.txt`: rule ids disabled unless `-n`.
    pub noisy: HashSet<String>,
    /// `exclude_rules.txt`: rule ids always disabled.
    pub exclude: HashSet<String>,
    /// `channel_abbreviations.txt`: lowercase channel → abbreviation.
    pub channel_abbrev: FxHashMap<String, String>,
    /// `mitre_tactics.txt`: `attack.<tactic>` tag → short name.
    pub mitre_tactics: FxHashMap<String, String>,
    /// `expand/<name>.txt`: placeholder values.
    pub placeholders: FxHashMap<String, Vec<String>>,
    /// Problems met while reading the folder (the scan goes on without the bad file).
    pub errors: Vec<String>,
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

fn id_list(text: &str) -> HashSet<String> {
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
            "channel_abbreviations.txt" => self.channel_abbrev.extend(
                pairs(text)
                    .filter(|(c, _)| *c != "Channel")
                    .map(|(c, a)| (c.to_lowercase(), a.to_string())),
            ),
            "mitre_tactics.txt" => self
                .mitre_tactics
                .extend(pairs(text).map(|(t, a)| (t.to_lowercase(), a.to_string()))),
            _ => {}
        }
    }

    /// Reads a config folder; unreadable files are recorded in `errors`.
    pub fn load_dir(dir: &Path) -> Config {
        let mut c = Config::default();
        let names = [
            "eventkey_alias.txt",
            "default_details.txt",
            "noisy_rules.txt",
            "exclude_rules.txt",
            "channel_abbreviations.txt",
            "mitre_tactics.txt",
        ];
        for n in names {
            let p = dir.join(n);
            if !p.exists() {
                continue;
            }
            match std::fs::read_to_string(&p) {
                Ok(t) => c.add_file(n, &t),
                Err(e) => c.errors.push(format!("{}: {e}", p.display())),
            }
        }
        for sub in [
            dir.join("expand"),
            dir.join("..").join("config").join("expand"),
        ] {
            let Ok(rd) = std::fs::read_dir(&sub) else {
                continue;
            };
            for e in rd.flatten() {
                let p = e.path();
                let Some(name) = p.file_stem().and_then(|s| s.to_str()) else {
                    continue;
                };
                if p.extension().and_then(|e| e.to_str()) != Some("txt") {
                    continue;
                }
                match std::fs::read_to_string(&p) {
                    Ok(t) => {
                        c.placeholders
                            .insert(name.to_string(), lines(&t).map(str::to_string).collect());
                    }
                    Err(e) => c.errors.push(format!("{}: {e}", p.display())),
                }
            }
        }
        c
    }

    /// Fills tables this config lacks from `fallback`.
    pub fn fill_from(&mut self, fallback: &Config) {
        if self.channel_abbrev.is_empty() {
            self.channel_abbrev = fallback.channel_abbrev.clone();
        }
        if self.mitre_tactics.is_empty() {
            self.mitre_tactics = fallback.mitre_tactics.clone();
        }
        if self.default_details.is_empty() {
            self.default_details = fallback.default_details.clone();
        }
    }

    /// The abbreviation of a channel name, or the name itself.
    pub fn channel_abbrev<'a>(&'a self, channel: &'a str) -> &'a str {
        if self.channel_abbrev.is_empty() {
            return channel;
        }
        self.channel_abbrev
            .get(channel.to_lowercase().as_str())
            .map_or(channel, String::as_str)
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
        assert_eq!(c.channel_abbrev("security"), "Sec");
        assert_eq!(c.channel_abbrev("Other"), "Other");
    }
}
