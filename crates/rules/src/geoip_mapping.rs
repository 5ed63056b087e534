//! `geoip_field_mapping.yaml`: which fields of which events `-G` looks up in the GeoIP
//! databases. `SrcIP` and `TgtIP` list Details-style placeholders (`%IpAddress%`),
//! tried in order until the event has one; `Filter` lists the events, as a channel and
//! its EventIDs, whose rows are looked up at all (Hayabusa's file and meaning).

use crate::error::{ErrorKind::Malformed, RuleError};
use scanner_yaml::scalar_text as yaml_text;

/// The GeoIP lookups a rules config asks for.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    pub fn parse(text: &str) -> Result<GeoIpMapping, RuleError> {
        let doc = scanner_yaml::document(text)?;
        let list = |key: &str| -> Result<Vec<String>, RuleError> {
            match doc.get(key) {
                None => Ok(Vec::new()),
                Some(v) => match v.as_sequence() {
                    Some(items) => Ok(items.iter().filter_map(yaml_text).collect()),
                    None => Err(Malformed("SrcIP and TgtIP must be lists").into()),
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
}
