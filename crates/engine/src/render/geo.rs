//! The addresses `-G` looks up ([`crate::GeoAddrs`]): for the events the config's
//! `geoip_field_mapping.yaml` lists in its `Filter`, the first of its `SrcIP` and of its
//! `TgtIP` placeholders the event has, rendered as Details renders a placeholder
//! (whitespace collapsed, no data mapping). A placeholder the event lacks (`n/a`) gives
//! way to the next; the first the event has decides, even when its value is empty or
//! `-` (then there is no address), as Hayabusa decides.

use crate::items::ItemsBuf;
use crate::render::data_mapping::RecordMap;
use crate::render::details::{DetailsTemplate, Shown, MISSING};
use crate::row::GeoAddrs;
use compact_str::CompactString;
use scanner_input::RecordView;
use scanner_rules::{FieldId, FieldTable};
use scanner_yaml::scalar_text as yaml_text;
use GeoMappingError::Malformed;

/// The GeoIP lookups a rules config asks for (its `geoip_field_mapping.yaml`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GeoIpMapping {
    /// `SrcIP`: the placeholders of the source address, in the order tried.
    pub src: Vec<String>,
    /// `TgtIP`: the placeholders of the target address, in the order tried.
    pub tgt: Vec<String>,
    /// `Filter`: (channel as written, EventID as text) of the events looked up.
    pub filter: Vec<(String, String)>,
}

impl GeoIpMapping {
    /// Parses the file; `Err` says what is malformed.
    pub fn parse(text: &str) -> Result<GeoIpMapping, GeoMappingError> {
        let doc = scanner_yaml::document(text).map_err(GeoMappingError::Yaml)?;
        let list = |key: &str| -> Result<Vec<String>, GeoMappingError> {
            match doc.get(key) {
                None => Ok(Vec::new()),
                Some(v) => match v.as_sequence() {
                    Some(items) => Ok(items.iter().filter_map(yaml_text).collect()),
                    None => Err(Malformed("SrcIP and TgtIP must be lists")),
                },
            }
        };
        let (src, tgt) = (list("SrcIP")?, list("TgtIP")?);
        let mut filter = Vec::new();
        if let Some(v) = doc.get("Filter") {
            let entries = v
                .as_sequence()
                .ok_or(Malformed("Filter must be a list of channels"))?;
            for entry in entries {
                let map = entry
                    .as_mapping()
                    .ok_or(Malformed("Filter: each entry is `Channel: [EventIDs]`"))?;
                for (channel, ids) in map {
                    let channel = yaml_text(channel)
                        .ok_or(Malformed("Filter: a channel name is not text"))?;
                    let ids = ids
                        .as_sequence()
                        .ok_or(Malformed("Filter: a channel's EventIDs must be a list"))?;
                    filter.extend(
                        ids.iter()
                            .filter_map(yaml_text)
                            .map(|id| (channel.clone(), id)),
                    );
                }
            }
        }
        Ok(GeoIpMapping { src, tgt, filter })
    }

    /// Whether rows of events of `channel` (as recorded) and `event_id` are looked up.
    pub fn looks_up(&self, channel: &str, event_id: &str) -> bool {
        self.filter
            .iter()
            .any(|(c, e)| c == channel && e == event_id)
    }
}

/// Why a `geoip_field_mapping.yaml` cannot be used.
#[derive(Debug)]
pub enum GeoMappingError {
    /// Not YAML, or past the bounded reader's limits.
    Yaml(scanner_yaml::Error),
    /// YAML, but not of the mapping's layout: what is wrong.
    Malformed(&'static str),
}

impl std::fmt::Display for GeoMappingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GeoMappingError::Yaml(e) => e.fmt(f),
            GeoMappingError::Malformed(what) => f.write_str(what),
        }
    }
}

impl std::error::Error for GeoMappingError {}

/// A mapping's placeholders, compiled once per scan.
#[derive(Debug, Clone)]
pub(crate) struct GeoFields {
    src: Vec<DetailsTemplate>,
    tgt: Vec<DetailsTemplate>,
    /// The events looked up (its `Filter`).
    mapping: GeoIpMapping,
}

/// Reused buffers of the lookups' rendering.
#[derive(Debug, Default)]
pub(crate) struct GeoScratch {
    out: ItemsBuf,
    shown: Shown,
}

impl GeoFields {
    /// Compiles `mapping`'s placeholders, interning their fields.
    pub(crate) fn compile(mapping: &GeoIpMapping, fields: &mut FieldTable) -> GeoFields {
        let compile = |list: &[String], fields: &mut FieldTable| {
            list.iter()
                .map(|t| DetailsTemplate::compile(t, fields))
                .collect()
        };
        GeoFields {
            src: compile(&mapping.src, fields),
            tgt: compile(&mapping.tgt, fields),
            mapping: mapping.clone(),
        }
    }

    /// The addresses of a record of `channel` (as recorded) and `event_id`: `None` when
    /// its event is not listed, or has neither address.
    pub(crate) fn addrs(
        &self,
        view: &RecordView,
        channel: &str,
        event_id: &str,
        data: FieldId,
        b: &mut GeoScratch,
    ) -> Option<Box<GeoAddrs>> {
        if !self.mapping.looks_up(channel, event_id) {
            return None;
        }
        let src = first_address(&self.src, view, data, b);
        let tgt = first_address(&self.tgt, view, data, b);
        (src.is_some() || tgt.is_some()).then(|| Box::new(GeoAddrs { src, tgt }))
    }
}

/// The value of the first of `templates` the record has; `None` when it has none, or
/// when that value is empty.
fn first_address(
    templates: &[DetailsTemplate],
    view: &RecordView,
    data: FieldId,
    b: &mut GeoScratch,
) -> Option<CompactString> {
    for t in templates {
        t.render(view, data, &RecordMap::default(), &mut b.out, &mut b.shown);
        let text = b.out.text();
        if text == MISSING {
            continue;
        }
        return (!text.is_empty()).then(|| text.into());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_hayabusa_s_layout() {
        let m = GeoIpMapping::parse(
            "SrcIP:\n  - '%IpAddress%'\n  - '%SourceIp%'\n\nTgtIP:\n  - '%DestinationIp%'\n\n\
             Filter:\n  - Security:\n    - 4624 # logon\n    - 4625\n  \
             - Microsoft-Windows-Sysmon/Operational: \n    - 3\n",
        )
        .unwrap();
        assert_eq!(m.src, ["%IpAddress%", "%SourceIp%"]);
        assert_eq!(m.tgt, ["%DestinationIp%"]);
        assert!(m.looks_up("Security", "4624"));
        assert!(m.looks_up("Microsoft-Windows-Sysmon/Operational", "3"));
        assert!(!m.looks_up("security", "4624"), "channels as written");
        assert!(!m.looks_up("Security", "4688"));
        assert!(GeoIpMapping::parse("SrcIP: '%IpAddress%'").is_err());
        assert!(GeoIpMapping::parse("Filter:\n  - Security: 4624\n").is_err());
        assert_eq!(GeoIpMapping::parse("{}").unwrap(), GeoIpMapping::default());
    }

    #[test]
    fn the_built_in_config_has_a_mapping_that_reads() {
        let set = scanner_rules::load(
            &[scanner_rules::RuleSource::Builtin],
            &scanner_rules::LoadOptions::default(),
        );
        let text = set.config().geoip.as_deref();
        let m = GeoIpMapping::parse(text.expect("rules/config/geoip_field_mapping.yaml"));
        assert!(m.expect("it reads").looks_up("Security", "4624"));
    }
}
