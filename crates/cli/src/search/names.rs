//! What `search` reads from the rules config: the names the metrics show too (channel
//! abbreviations, event titles; [`crate::config_names`]), field aliases (for `-F`) and,
//! per event, the short field names its default Details template uses
//! (`Cmdline: %CommandLine%`), which 3.9.0 shows in AllFieldInfo.

use super::SearchError;
use scanner_engine::{template_items, Items};
use scanner_rules::{Config, FxHashMap};
use std::path::Path;

/// The shared config names, and the short field names of each event's template.
pub struct Names {
    shared: crate::config_names::Names,
    /// `Provider_EventID` → (field, short name), longest field first.
    field_names: FxHashMap<String, Vec<(String, String)>>,
}

impl Names {
    /// Reads the config folder as the metrics commands do
    /// ([`crate::config_names::Names::load`]).
    pub fn load(dir: Option<&Path>, quiet: bool) -> Result<Names, SearchError> {
        let shared = crate::config_names::Names::load(dir, quiet)
            .map_err(|e| SearchError::ConfigNotFolder(e.0))?;
        let field_names = short_names(shared.config());
        Ok(Names {
            shared,
            field_names,
        })
    }

    /// Problems met reading the folder.
    pub fn errors(&self) -> &[String] {
        self.shared.errors()
    }

    /// `eventkey_alias.txt`: (name, path).
    pub fn aliases(&self) -> &[(String, String)] {
        &self.shared.config().aliases
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
        self.shared.title(&channel.to_lowercase(), event_id)
    }

    /// A channel as Hayabusa shows it: its abbreviation, then the generic
    /// abbreviations replaced.
    pub fn channel(&self, channel: &str) -> String {
        self.shared.channel(channel)
    }
}

/// Each template's `Short: %Field%` items, as (Field, Short) per `Provider_EventID`.
fn short_names(config: &Config) -> FxHashMap<String, Vec<(String, String)>> {
    let mut out = FxHashMap::default();
    for (event, template) in &config.default_details {
        let mut pairs: Vec<(String, String)> = Vec::new();
        for item in Items::of(template_items(template)).iter() {
            let (short, field) = (item.label().trim(), item.value().trim());
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
