//! The names the commands that read records without rules show (the metrics, search):
//! channel and provider abbreviations (the rules config's tables), event titles
//! (`channel_eid_info.txt`) and Windows versions (`windows_versions.csv`), all read from
//! one config folder, found the way Hayabusa finds it.

use scanner_files::{Seen, TextFile};
use scanner_rules::{Config, FxHashMap, LoadOptions};
use std::path::{Path, PathBuf};

/// `-c DIR` that is not a folder.
#[derive(Debug)]
pub struct NotAFolder(pub PathBuf);

/// The config folder's tables.
pub struct Names {
    config: Config,
    /// The generic abbreviations alone (no provider table).
    generic_only: Config,
    /// (lowercase channel, EventID) → title.
    titles: FxHashMap<(String, String), String>,
    /// (version, build) → (Windows name, release date).
    versions: FxHashMap<(String, String), (String, String)>,
    errors: Vec<String>,
}

impl Names {
    /// Reads the folder `-c` names, else `./rules/config` when `./rules` is a folder
    /// that may be trusted (as the timelines choose `./rules`; an untrusted one is not
    /// read, with a warning unless `quiet`), else the config of the set `update-rules`
    /// installed, else the built-in config; its gaps are filled from the built-in one.
    /// The error is a `-c` that is not a folder.
    pub fn load(dir: Option<&Path>, quiet: bool) -> Result<Names, NotAFolder> {
        let dir: Option<PathBuf> = match dir {
            Some(d) if !d.is_dir() => return Err(NotAFolder(d.to_path_buf())),
            Some(d) => Some(d.to_path_buf()),
            None => crate::rule_choice::current_folder_rules(quiet)
                .map(|r| r.join("config"))
                .filter(|d| d.is_dir())
                .or_else(|| {
                    let set = crate::update_rules::installed()?;
                    Some(set.dir.join("config")).filter(|d| d.is_dir())
                }),
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
        let mut names = Names {
            config,
            generic_only,
            titles: FxHashMap::default(),
            versions: FxHashMap::default(),
            errors: set.report().config_errors.clone(),
        };
        if let Some(dir) = dir {
            names.read_titles(&dir.join("channel_eid_info.txt"));
            names.read_versions(&dir.join("windows_versions.csv"));
        }
        Ok(names)
    }

    /// Problems met reading the folder.
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    /// The config read (aliases, Details templates, abbreviations).
    pub fn config(&self) -> &Config {
        &self.config
    }

    /// A config table's text, read as every config file is (a regular file, at most
    /// the config files' cap); `None` when it is absent or unreadable (then noted).
    fn read(&mut self, path: &Path) -> Option<String> {
        if std::fs::symlink_metadata(path).is_err() {
            return None;
        }
        scanner_files::read_text(path, TextFile::Config, &Seen::off())
            .map_err(|e| self.errors.push(format!("{}: {e}", path.display())))
            .ok()
    }

    /// `Channel,EventID,EventTitle` lines; the title may hold commas.
    fn read_titles(&mut self, path: &Path) {
        let Some(text) = self.read(path) else {
            return;
        };
        for line in text.lines().skip(1) {
            let mut it = line.splitn(3, ',');
            if let (Some(c), Some(e), Some(t)) = (it.next(), it.next(), it.next()) {
                let key = (c.trim().to_lowercase(), e.trim().to_string());
                self.titles.insert(key, t.trim().to_string());
            }
        }
    }

    /// `Version,Build,WindowsVersion,ReleaseDate` lines.
    fn read_versions(&mut self, path: &Path) {
        let Some(text) = self.read(path) else {
            return;
        };
        for line in text.lines().skip(1) {
            let cells: Vec<&str> = line.split(',').map(str::trim).collect();
            if let [v, b, name, date, ..] = cells[..] {
                let key = (v.to_string(), b.to_string());
                self.versions
                    .insert(key, (name.to_string(), date.to_string()));
            }
        }
    }

    /// The title of (channel, EventID), if the table has one.
    pub fn title(&self, channel_lower: &str, event_id: &str) -> Option<&str> {
        self.titles
            .get(&(channel_lower.to_string(), event_id.to_string()))
            .map(String::as_str)
    }

    /// Whether `windows_versions.csv` was read.
    pub fn has_windows_versions(&self) -> bool {
        !self.versions.is_empty()
    }

    /// The Windows name and release date of (version, build).
    pub fn windows(&self, version: &str, build: &str) -> Option<&(String, String)> {
        self.versions.get(&(version.to_string(), build.to_string()))
    }

    /// A channel as Hayabusa shows it: its abbreviation from the table (looked up
    /// case-insensitively) or the name, then the generic abbreviations replaced.
    pub fn channel(&self, channel: &str) -> String {
        self.generic(scanner_timeline::channel_abbrev(&self.config, channel))
    }

    /// A provider as Hayabusa shows it: its abbreviation, or the name with the generic
    /// abbreviations replaced.
    pub fn provider(&self, provider: &str) -> String {
        scanner_timeline::provider_abbrev(&self.config, provider)
    }

    /// `text` with the generic abbreviations replaced (case-insensitively, longest first).
    fn generic(&self, text: &str) -> String {
        scanner_timeline::provider_abbrev(&self.generic_only, text)
    }
}
