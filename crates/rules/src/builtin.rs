//! The project's own rule set and config, embedded at build time from `rules/`.

use crate::config::Config;

include!(concat!(env!("OUT_DIR"), "/builtin.rs"));

/// The built-in configuration (abbreviations, MITRE tactic names, …).
pub fn config() -> Config {
    let mut c = Config::default();
    for (name, text) in CONFIG {
        if *name == "geoip_field_mapping.yaml" {
            // The project's own file: a parse error is a build's, caught by the test below.
            c.geoip = crate::GeoIpMapping::parse(text).ok();
        } else {
            c.add_file(name, text);
        }
    }
    c
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_built_in_config_has_a_geoip_mapping() {
        let (_, text) = super::CONFIG
            .iter()
            .find(|(n, _)| *n == "geoip_field_mapping.yaml")
            .expect("rules/config/geoip_field_mapping.yaml embedded");
        crate::GeoIpMapping::parse(text).expect("it parses");
        assert!(super::config().geoip.is_some());
    }
}
