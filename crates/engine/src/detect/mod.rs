//! The detection loop for one record: look up the candidate rules by (Channel,
//! EventID), evaluate them, and turn matches into [`DetectInfo`] rows and correlation
//! inputs.

pub(crate) mod correlate;
pub(crate) mod filter;
pub(crate) mod hit;
pub(crate) mod hit_store;
pub(crate) mod stats;
pub(crate) mod tally;
pub(crate) mod window;

use crate::detect::filter::RecordFilter;
use crate::detect::hit::CorrelationHit;
use crate::items::{Items, ItemsBuf};
use crate::render::data_mapping::DataMappings;
use crate::render::details::{DetailsTemplate, Shown};
use crate::render::field_list::FieldList;
use crate::render::geo::{GeoFields, GeoIpMapping, GeoScratch};
use crate::row::{DetectInfo, Origin, RuleRef};
use scanner_input::RecordView;
use scanner_rules::{
    Admission, CorrelationSource, FieldId, FieldTable, InputKey, RuleSet, CHANNEL, EVENT_ID,
};

/// The record's values of `keys`, joined with U+001F; `None` when one is missing.
fn join_fields(view: &RecordView, keys: &[Option<InputKey>]) -> Option<String> {
    let mut out = String::new();
    for (i, k) in keys.iter().enumerate() {
        let Some(InputKey::Field(f)) = k else {
            return None;
        };
        if i > 0 {
            out.push('\u{1f}');
        }
        out.push_str(view.first(*f)?);
    }
    Some(out)
}

/// Fields the output reads, interned next to the rules' own.
#[derive(Debug, Clone, Copy)]
pub struct OutputFields {
    /// `Computer`
    pub computer: FieldId,
    /// `Provider_Name`
    pub provider: FieldId,
    /// `EventRecordID`
    pub record_id: FieldId,
    /// `TimeCreated/@SystemTime`
    pub time: FieldId,
    /// Unnamed `Data`
    pub data: FieldId,
}

/// What the detector produces besides rows.
#[derive(Debug, Default)]
pub struct Matches {
    /// Timeline rows.
    pub rows: Vec<DetectInfo>,
    /// Inputs to correlations.
    pub hits: Vec<CorrelationHit>,
    /// Per-rule timings, when rule statistics are on.
    pub stats: Option<crate::detect::stats::RuleStats>,
    /// Whether the record being tested was carved (`--recover-records`); set by the
    /// caller before [`Detector::detect`], copied into its rows.
    pub recovered: bool,
    /// After [`Detector::detect`]: the record had a detection but no readable time
    /// (its rows are timed at the epoch); the caller takes it and reports it.
    pub bad_time: Option<BadTime>,
    /// Records tested for which no rule reads their (Channel, EventID): no bucket of
    /// the index holds them.
    pub uncovered: u64,
    /// Records tested whose (Channel, EventID) only rules without a channel read.
    pub channel_less_only: u64,
    /// The kinds of event tested, when the scan counts them.
    pub coverage: Option<crate::coverage::TypeTally>,
    /// Reused buffers of the prefilter.
    scratch: Admission,
    /// The record (`RenderScratch::record`) whose correlation hits start at
    /// `hits_from`.
    hits_record: u64,
    hits_from: usize,
    /// Reused buffers of the Details, ExtraFieldInfo and AllFieldInfo columns.
    render: RenderScratch,
}

/// A record with a detection and no readable `TimeCreated/@SystemTime`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadTime {
    /// Its `EventRecordID` (or the record header's id; 0 when neither).
    pub record_id: u64,
    /// Its `SystemTime` as written, when it has one.
    pub value: Option<String>,
}

/// Per-worker rendering buffers. The field list is built once per record, however many
/// rules the record matches.
#[derive(Debug, Default)]
struct RenderScratch {
    /// Records seen by `detect`; stamps `fields`.
    record: u64,
    /// The record `fields` was built for (0: none).
    fields_for: u64,
    fields: FieldList,
    shown: Shown,
    out: ItemsBuf,
    key: String,
    /// The Details and ExtraFieldInfo rendered last, and the record and template
    /// (`rendered`) they were rendered for: a record's other rows with that template
    /// repeat them.
    details: ItemsBuf,
    extra: ItemsBuf,
    rendered: Option<(u64, Option<u32>)>,
    /// Channel and provider names, shared by the rows that show them.
    names: crate::render::names::NameCache,
    /// `-G`'s addresses.
    geo: GeoScratch,
}

/// Everything the per-record loop needs, prepared once per scan.
pub struct Detector<'a> {
    set: &'a RuleSet,
    out: OutputFields,
    templates: Templates,
    /// For each rule, the correlations it feeds and the input of each it is.
    feeds: Vec<Vec<(u32, u16)>>,
    extra: bool,
    /// Whether rows carry AllFieldInfo.
    all_fields: bool,
    /// Records that pass this filter are tested; `None` tests every record.
    filter: Option<RecordFilter>,
    /// Field data mappings for Details and ExtraFieldInfo (empty when disabled).
    data_mappings: DataMappings,
    /// Time every rule evaluation.
    stats: bool,
    /// Use the buckets' prefilters (off only to measure what they save).
    prefilter: bool,
    /// Values keep their tabs and line breaks.
    keep_line_breaks: bool,
    /// `-G`: the addresses rows carry.
    geo: Option<GeoFields>,
}

/// What the rows of a scan carry and which records it tests.
#[derive(Debug, Clone)]
pub(crate) struct DetectOptions {
    /// Rows carry ExtraFieldInfo.
    pub(crate) extra: bool,
    /// Rows carry AllFieldInfo.
    pub(crate) all_fields: bool,
    /// Apply the rules' field data mappings to Details and ExtraFieldInfo.
    pub(crate) field_data_mapping: bool,
    /// Time every rule evaluation.
    pub(crate) rule_stats: bool,
    /// Use the buckets' prefilters.
    pub(crate) prefilter: bool,
    /// Test only the records this keeps (an empty filter is dropped).
    pub(crate) filter: Option<RecordFilter>,
    /// Render rules without a `details` of their own from the config's default
    /// templates (off: they show every field).
    pub(crate) default_details: bool,
    /// Values keep their tabs and line breaks (the JSON timeline).
    pub(crate) keep_line_breaks: bool,
    /// Rows carry the addresses this mapping names (`-G`).
    pub(crate) geo_ip: Option<GeoIpMapping>,
}

impl Default for DetectOptions {
    fn default() -> Self {
        DetectOptions {
            extra: false,
            all_fields: false,
            field_data_mapping: true,
            rule_stats: false,
            prefilter: true,
            filter: None,
            default_details: true,
            keep_line_breaks: false,
            geo_ip: None,
        }
    }
}

/// What [`prepare`] makes of a rule set before any scan: the output's field ids and the
/// compiled Details templates (each rule's, and the defaults by provider and EventID).
#[derive(Clone)]
pub(crate) struct Prepared {
    out: OutputFields,
    templates: Templates,
    geo: Option<GeoFields>,
}

/// The Details templates, each text compiled once: rules and defaults with the same
/// text share one, so that a record's rows rendered from it are rendered once.
#[derive(Clone, Default)]
struct Templates {
    compiled: Vec<DetailsTemplate>,
    /// Each rule's own template, as an index into `compiled`.
    of_rule: Vec<Option<u32>>,
    /// The defaults by `Provider_EventID`, as indices into `compiled`.
    defaults: scanner_rules::FxHashMap<String, u32>,
}

impl Templates {
    fn compile<'t>(
        rules: impl Iterator<Item = Option<&'t str>>,
        defaults: impl Iterator<Item = (&'t String, &'t String)>,
        f: &mut FieldTable,
    ) -> Templates {
        let mut t = Templates::default();
        let mut by_text: scanner_rules::FxHashMap<&str, u32> = Default::default();
        let mut index = |text: &'t str, compiled: &mut Vec<DetailsTemplate>| {
            *by_text.entry(text).or_insert_with(|| {
                compiled.push(DetailsTemplate::compile(text, f));
                compiled.len() as u32 - 1
            })
        };
        t.of_rule = rules
            .map(|d| d.map(|d| index(d, &mut t.compiled)))
            .collect();
        t.defaults = defaults
            .map(|(k, v)| (k.clone(), index(v, &mut t.compiled)))
            .collect();
        t
    }
}

/// Interns the output's fields and compiles Details templates (the config's defaults
/// only with `default_details`) and, with `geo_ip`, the placeholders of the config's
/// GeoIP mapping; call before scanning.
pub(crate) fn prepare(
    set: &mut RuleSet,
    default_details: bool,
    geo_ip: Option<&GeoIpMapping>,
) -> Prepared {
    let (f, rules, config) = set.fields_mut_with();
    let out = OutputFields {
        computer: f.intern("Computer"),
        provider: f.intern("Provider_Name"),
        record_id: f.intern("EventRecordID"),
        time: f.intern_path("Event.System.TimeCreated_attributes.SystemTime"),
        data: f.intern("Data"),
    };
    let templates = Templates::compile(
        rules.iter().map(|r| r.meta.details.as_deref()),
        config.default_details.iter().filter(|_| default_details),
        f,
    );
    let geo = geo_ip.map(|m| GeoFields::compile(m, f));
    Prepared {
        out,
        templates,
        geo,
    }
}

impl<'a> Detector<'a> {
    /// A detector over a prepared rule set.
    pub(crate) fn new(set: &'a RuleSet, prepared: &Prepared, options: &DetectOptions) -> Self {
        let Prepared {
            out,
            templates,
            geo,
        } = prepared.clone();
        let mut feeds = vec![Vec::new(); set.rules().len()];
        for (ci, c) in set.correlations().iter().enumerate() {
            for (k, input) in c.inputs.iter().enumerate() {
                if let CorrelationSource::Rule(r) = input.source {
                    feeds[r as usize].push((ci as u32, k as u16));
                }
            }
        }
        let data_mappings = if options.field_data_mapping {
            DataMappings::new(&set.config().data_mappings)
        } else {
            DataMappings::default()
        };
        Detector {
            set,
            out,
            templates,
            feeds,
            extra: options.extra,
            all_fields: options.all_fields,
            filter: options.filter.clone().filter(|f| !f.is_empty()),
            data_mappings,
            stats: options.rule_stats,
            prefilter: options.prefilter,
            keep_line_breaks: options.keep_line_breaks,
            geo,
        }
    }

    /// The rule set.
    pub fn rules(&self) -> &RuleSet {
        self.set
    }

    /// Where a record's provider, computer and time are (the fields rows read).
    pub(crate) fn kind_fields(&self) -> crate::coverage::KindFields {
        crate::coverage::KindFields {
            provider: self.out.provider,
            computer: self.out.computer,
            time: self.out.time,
        }
    }

    /// Tests one record; appends rows and correlation hits to `m`.
    #[inline]
    pub fn detect(&self, view: &RecordView, file: u32, record_id: Option<u64>, m: &mut Matches) {
        if let Some(f) = &self.filter {
            if !f.keeps(view, &self.out) {
                return;
            }
        }
        let ch = view.first_lower(CHANNEL).unwrap_or("");
        let eid = view.first(EVENT_ID).unwrap_or("");
        m.render.record += 1;
        if m.stats.is_some() {
            return self.detect_timed(view, ch, eid, file, record_id, m);
        }
        let mut scratch = std::mem::take(&mut m.scratch);
        let rules = self.set.rules();
        let read = self
            .set
            .for_each_candidate(ch, eid, view, &mut scratch, self.prefilter, |r| {
                if rules[r as usize].is_match(view) {
                    self.on_match(r, view, file, record_id, m);
                }
            });
        m.uncovered += u64::from(read == (false, false));
        m.channel_less_only += u64::from(read == (false, true));
        m.scratch = scratch;
    }

    /// Empty per-worker match buffers (with statistics when they are on).
    pub fn matches(&self) -> Matches {
        Matches {
            stats: self
                .stats
                .then(|| crate::detect::stats::RuleStats::new(self.set.rules().len())),
            ..Matches::default()
        }
    }

    /// `detect` with every rule evaluation timed (only with `--rule-stats`).
    #[cold]
    #[inline(never)]
    fn detect_timed(
        &self,
        view: &RecordView,
        ch: &str,
        eid: &str,
        file: u32,
        record_id: Option<u64>,
        m: &mut Matches,
    ) {
        let mut scratch = std::mem::take(&mut m.scratch);
        let rules = self.set.rules();
        let read = self
            .set
            .for_each_candidate(ch, eid, view, &mut scratch, self.prefilter, |r| {
                let t = std::time::Instant::now();
                let hit = rules[r as usize].is_match(view);
                let ns = t.elapsed().as_nanos() as u64;
                if let Some(s) = m.stats.as_mut() {
                    s.rules[r as usize].add(ns);
                }
                if hit {
                    self.on_match(r, view, file, record_id, m);
                }
            });
        m.uncovered += u64::from(read == (false, false));
        m.channel_less_only += u64::from(read == (false, true));
        m.scratch = scratch;
    }

    #[cold]
    fn on_match(
        &self,
        r: u32,
        view: &RecordView,
        file: u32,
        record_id: Option<u64>,
        m: &mut Matches,
    ) {
        let raw_time = view.first(self.out.time);
        let parsed = raw_time.and_then(scanner_input::parse_timestamp);
        // `System/EventRecordID` is what analysts and other tools key on; the record
        // header's id differs from it in exported logs.
        let record_id = view
            .first(self.out.record_id)
            .and_then(|s| s.parse().ok())
            .or(record_id)
            .unwrap_or(0);
        let time = match parsed {
            Some(t) => t,
            None => {
                // Kept, at the epoch as Hayabusa does, and reported once per record.
                if m.bad_time.is_none() {
                    m.bad_time = Some(BadTime {
                        record_id,
                        value: raw_time.map(str::to_string),
                    });
                }
                scanner_input::missing_timestamp()
            }
        };
        // Shared names: cloning them for each correlation and the row allocates nothing.
        let channel = m.render.names.get(view.first(CHANNEL).unwrap_or("-"));
        for &(c, k) in &self.feeds[r as usize] {
            let input = &self.set.correlations()[c as usize].inputs[k as usize];
            // An event without every group-by field (or value field) is left out.
            let Some(group) = join_fields(view, &input.group) else {
                continue;
            };
            let value = if input.values.is_empty() {
                None
            } else {
                match join_fields(view, &input.values) {
                    Some(v) => Some(v.into()),
                    None => continue,
                }
            };
            // One event matched by several of the correlation's rules is one event:
            // its hit records every reference it answers.
            let bit = 1u32 << input.reference;
            if m.hits_record != m.render.record {
                m.hits_record = m.render.record;
                m.hits_from = m.hits.len();
            }
            // (The buffer may have been drained since: then nothing is looked at.)
            let from = m.hits_from.min(m.hits.len());
            if let Some(h) = m.hits[from..]
                .iter_mut()
                .find(|h| h.correlation == c && *h.group == *group && h.value == value)
            {
                h.references |= bit;
                continue;
            }
            m.hits.push(CorrelationHit {
                correlation: c,
                references: bit,
                time,
                group: group.into(),
                value,
                computer: view.first(self.out.computer).unwrap_or("-").into(),
                channel: channel.clone(),
                event_id: view.first(EVENT_ID).unwrap_or("-").into(),
                file,
            });
        }
        if !self.set.emits()[r as usize] {
            return;
        }
        let (details, extra, all_fields) = self.render(r, view, &mut m.render);
        let geo = self.geo.as_ref().and_then(|g| {
            let ch = view.first(CHANNEL).unwrap_or("");
            let eid = view.first(EVENT_ID).unwrap_or("");
            g.addrs(view, ch, eid, self.out.data, &mut m.render.geo)
        });
        let provider = m
            .render
            .names
            .get(view.first(self.out.provider).unwrap_or("-"));
        m.rows.push(DetectInfo {
            time,
            rule: RuleRef::Rule(r),
            origin: Origin::Record { file, record_id },
            recovered: m.recovered,
            computer: view.first(self.out.computer).unwrap_or("-").into(),
            channel,
            event_id: view.first(EVENT_ID).unwrap_or("-").into(),
            provider,
            details,
            extra,
            all_fields,
            geo,
        });
    }

    /// Details, and ExtraFieldInfo and AllFieldInfo when the profile prints them.
    fn render(
        &self,
        r: u32,
        view: &RecordView,
        b: &mut RenderScratch,
    ) -> (Items, Option<Items>, Option<Items>) {
        let provider = view.first(self.out.provider).unwrap_or("");
        let event_id = view.first(EVENT_ID).unwrap_or("");
        let map = self.data_mappings.for_record(
            view.first_lower(CHANNEL).unwrap_or(""),
            event_id,
            provider,
        );
        let template = self.templates.of_rule[r as usize].or_else(|| {
            b.key.clear();
            // Provider names rarely hold a quote: copied whole when they do not.
            if provider.contains('\'') {
                b.key.extend(provider.chars().filter(|&c| c != '\''));
            } else {
                b.key.push_str(provider);
            }
            b.key.push('_');
            b.key.push_str(event_id);
            self.templates.defaults.get(b.key.as_str()).copied()
        });
        b.shown.keep_line_breaks = self.keep_line_breaks;
        b.fields.keep_line_breaks = self.keep_line_breaks;
        let need_fields = self.all_fields || template.is_none() || self.extra;
        if need_fields && b.fields_for != b.record {
            b.fields.fill(view, &map);
            b.fields_for = b.record;
        }
        if b.rendered != Some((b.record, template)) {
            self.render_details(template, view, &map, b);
            b.rendered = Some((b.record, template));
        }
        let details = b.details.to_items();
        let extra = self.extra.then(|| b.extra.to_items());
        let all_fields = self.all_fields.then(|| {
            b.out.clear();
            b.fields.write_all(&mut b.out);
            b.out.to_items()
        });
        (details, extra, all_fields)
    }

    /// Renders into `b.details` Details from `template` (or every field, without one),
    /// and into `b.extra` ExtraFieldInfo when the profile prints it.
    fn render_details(
        &self,
        template: Option<u32>,
        view: &RecordView,
        map: &crate::render::data_mapping::RecordMap<'_>,
        b: &mut RenderScratch,
    ) {
        b.details.clear();
        b.extra.clear();
        match template {
            Some(t) => {
                let t = &self.templates.compiled[t as usize];
                t.render(view, self.out.data, map, &mut b.details, &mut b.shown);
                if self.extra {
                    b.fields.write_extra(&b.shown, &mut b.extra);
                }
            }
            // Every field is in Details: ExtraFieldInfo has nothing left to add.
            None => b.fields.write_all(&mut b.details),
        }
    }
}
