//! What `search` reads from the rules config: field aliases (for `-F`), channel
//! abbreviations, event titles (`channel_eid_info.txt`) and, per event, the short field
//! names its default Details template uses (`Cmdline: %CommandLine%`), which 3.9.0
//! shows in AllFieldInfo.

use super::SearchError;
use scanner_rules::{Config, FxHashMap, LoadOptions};
use std::path::{Path, PathBuf};

/// The config folder's tables.
pub struct Names {
    config: Config,
    generic_only: Config,
    titles: FxHashMap<(String, String), String>,
    /// `Provider_EventID` → (field, short name), longest field first.
    field_names: FxHashMap<String, Vec<(String, String)>>,
    errors: Vec<String>,
}

impl Names {
    /// Reads the folder `-c` names, else `./rules/config` when it is one (as Hayabusa
    /// does), else the built-in config; its gaps are filled from the built-in one.
    pub fn load(dir: Option<&Path>) -> Result<Names, SearchError> {
        let dir: Option<PathBuf> = match dir {
            Some(d) if !d.is_dir() => return Err(SearchError::ConfigNotFolder(d.to_path_buf())),
            Some(d) => Some(d.to_path_buf()),
            None => Some(PathBuf::from("rules/config")).filter(|d| d.is_dir()),
        };
        let set = scanner_rules::load(
            &[],
            &LoadOptions {
                config_dir: dir.clone(),
                ..LoadOptions::default()
            },
        );
        let config = set.config().clone();
        let generic_only = Config {
            generic_abbrev: config.generic_abbrev.clone(),
            ..Config::default()
        };
        let field_names = short_names(&config);
        let mut names = Names {
            config,
            generic_only,
            titles: FxHashMap::default(),
            field_names,
            errors: set.report().config_errors.clone(),
        };
        if let Some(dir) = dir {
            let path = dir.join("channel_eid_info.txt");
            if path.exists() {
                match std::fs::read_to_string(&path) {
                    Ok(text) => names.read_titles(&text),
                    Err(e) => names.errors.push(format!("{}: {e}", path.display())),
                }
            }
        }
        Ok(names)
    }

    /// `Channel,EventID,EventTitle` lines after a header; the title may hold commas.
    fn read_titles(&mut self, text: &str) {
        for line in text.lines().skip(1) {
            let mut it = line.splitn(3, ',');
            if let (Some(c), Some(e), Some(t)) = (it.next(), it.next(), it.next()) {
                let key = (c.trim().to_lowercase(), e.trim().to_string());
                self.titles.insert(key, t.trim().to_string());
            }
        }
    }

    /// Problems met reading the folder.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// `eventkey_alias.txt`: (name, path).
    pub fn aliases(&self) -> &[(String, String)] {
        &self.config.aliases
    }

    /// The short field names of an event's default Details template (empty when it has
    /// none), longest field first.
    pub fn field_names(&self, provider: &str, event_id: &str) -> &[(String, String)] {
        let mut key = String::with_capacity(provider.len() + event_id.len() + 1);
        key.push_str(provider);
        key.push('_');
        key.push_str(event_id);
        self.field_names.get(&key).map_or(&[], Vec::as_slice)
    }

    /// The title of (channel, EventID), if the table has one.
    pub fn title(&self, channel: &str, event_id: &str) -> Option<&str> {
        self.titles
            .get(&(channel.to_lowercase(), event_id.to_string()))
            .map(String::as_str)
    }

    /// A channel as Hayabusa shows it: its abbreviation, then the generic
    /// abbreviations replaced.
    pub fn channel(&self, channel: &str) -> String {
        self.generic_only
            .provider_abbrev(self.config.channel_abbrev(channel))
    }
}

/// Each template's `Short: %Field%` items, as (Field, Short) per `Provider_EventID`.
fn short_names(config: &Config) -> FxHashMap<String, Vec<(String, String)>> {
    let mut out = FxHashMap::default();
    for (event, template) in &config.default_details {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for item in template.split('¦') {
            let Some((short, field)) = item.split_once(':') else {
                continue;
            };
            let (short, field) = (short.trim(), field.trim());
            let Some(field) = field.strip_prefix('%').and_then(|f| f.strip_suffix('%')) else {
                continue;
            };
            if short.is_empty() || field.is_empty() || field.contains('%') || short == field {
                continue;
            }
            if !pairs.iter().any(|(f, _)| f == field) {
                pairs.push((field.to_string(), short.to_string()));
            }
        }
        pairs.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        out.insert(event.clone(), pairs);
    }
    out
}

/// Writes field `key` as 3.9.0 shows it in AllFieldInfo: the short name its event's
/// template gives it, else the name with every templated field inside it shortened
/// (`ParentImage` → `ParentProc` where `Image` is `Proc`).
pub fn short_name(key: &str, pairs: &[(String, String)], out: &mut String) {
    if let Some((_, short)) = pairs.iter().find(|(f, _)| f == key) {
        out.push_str(short);
        return;
    }
    if !pairs.iter().any(|(f, _)| key.contains(f.as_str())) {
        out.push_str(key);
        return;
    }
    let mut name = key.to_string();
    for (f, short) in pairs {
        if name.contains(f.as_str()) {
            name = name.replace(f.as_str(), short);
        }
    }
    out.push_str(&name);
}
