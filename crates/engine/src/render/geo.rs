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
use scanner_rules::{FieldId, FieldTable, GeoIpMapping};

/// A mapping's placeholders, compiled once per scan.
#[derive(Debug, Clone)]
pub(crate) struct GeoFields {
    src: Vec<DetailsTemplate>,
    tgt: Vec<DetailsTemplate>,
    /// (channel as written, EventID) of the events looked up.
    filter: Vec<(String, String)>,
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
            filter: mapping.filter.clone(),
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
        if !self
            .filter
            .iter()
            .any(|(c, e)| c == channel && e == event_id)
        {
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
