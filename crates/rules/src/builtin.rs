//! The project's own rule set and config, embedded at build time from `rules/`.

use crate::config::Config;

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

/// The built-in configuration (abbreviations, MITRE tactic names, …).
pub fn config() -> Config {
    let mut c = Config::default();
    for (name, text) in CONFIG {
        c.add_file(name, text);
    }
    c
}
