//! [`Scanner`]: a compiled rule set prepared for scanning, and how to scan with it.

use crate::detect::filter::RecordFilter;
use crate::detect::Detector;
use crate::progress::Progress;
use crate::scan::ScanResult;
use crate::sort::merge::SortedRows;
use scanner_input::{InputFile, InputKind};
use scanner_rules::RuleSet;

/// A rule set prepared for scanning.
pub struct Scanner {
    set: RuleSet,
    prepared: (
        crate::detect::OutputFields,
        Vec<Option<crate::render::details::Template>>,
        scanner_rules::FxHashMap<String, crate::render::details::Template>,
    ),
    extra: bool,
    field_data_mapping: bool,
    rule_stats: bool,
    prefilter: bool,
    all_fields: bool,
    filter: Option<RecordFilter>,
    progress: Option<std::sync::Arc<Progress>>,
    recover_records: bool,
    sort_memory: Option<usize>,
}

impl Scanner {
    /// Prepares `set` for scanning; `extra` renders ExtraFieldInfo.
    pub fn new(mut set: RuleSet, extra: bool) -> Self {
        let prepared = crate::detect::prepare(&mut set);
        Scanner {
            set,
            prepared,
            extra,
            field_data_mapping: true,
            rule_stats: false,
            prefilter: true,
            all_fields: false,
            filter: None,
            progress: None,
            recover_records: false,
            sort_memory: None,
        }
    }

    /// Turns the shared-needle prefilter on (the default) or off; off, every rule under a
    /// record's (Channel, EventID) is evaluated. Detections are the same either way.
    pub fn set_prefilter(&mut self, on: bool) {
        self.prefilter = on;
    }

    /// Also scans EVTX records carved from slack space and damaged chunks
    /// (`-x/--recover-records`); their rows are marked [`DetectInfo::recovered`].
    /// Carved records that do not render or flatten are dropped without an error.
    pub fn set_recover_records(&mut self, on: bool) {
        self.recover_records = on;
    }

    /// Times every rule evaluation during scans (`--rule-stats`); off by default, and
    /// free when off.
    pub fn enable_rule_stats(&mut self) {
        self.rule_stats = true;
    }

    /// Turns the field data mappings of the rules' `config/data_mapping` on (the
    /// default) or off (`-F/--no-field-data-mapping`): off, Details and
    /// ExtraFieldInfo show the recorded values (e.g. `%%1842`, `0x1fc`).
    pub fn set_field_data_mapping(&mut self, on: bool) {
        self.field_data_mapping = on;
    }

    /// Renders AllFieldInfo into every row (the all-field-info profiles print it).
    pub fn set_all_field_info(&mut self, on: bool) {
        self.all_fields = on;
    }

    /// Tests only the records `filter` keeps; an empty filter costs nothing per record.
    pub fn set_record_filter(&mut self, filter: RecordFilter) {
        self.filter = (!filter.is_empty()).then_some(filter);
    }

    /// Counters the scan bumps as each file is done (for a progress bar).
    pub fn set_progress(&mut self, p: std::sync::Arc<Progress>) {
        self.progress = Some(p);
    }

    /// Holds about `bytes` of detections in memory for sorting (`None`, the default: no
    /// bound); past it, [`Self::scan_sorted`] spills sorted runs to temporary files
    /// (in [`std::env::temp_dir`]), removed once read or dropped.
    pub fn set_sort_memory(&mut self, bytes: Option<usize>) {
        self.sort_memory = bytes;
    }

    /// The rule set.
    pub fn rules(&self) -> &RuleSet {
        &self.set
    }

    /// Scans files; every row is collected in memory (see [`Self::scan_sorted`]). Should
    /// spilled rows not read back, the error is among the result's errors.
    pub fn scan(&self, files: &[InputFile], kind: InputKind) -> ScanResult {
        let r = self.scan_sorted(files, kind);
        let mut errors = r.errors;
        let rows = r.rows.into_vec().unwrap_or_else(|e| {
            errors.push(e.to_string());
            Vec::new()
        });
        ScanResult {
            rows,
            stats: r.stats,
            errors,
            rule_stats: r.rule_stats,
        }
    }

    /// Scans files; the rows come as a stream in timeline order, held in memory only up
    /// to the bound of [`Self::set_sort_memory`].
    pub fn scan_sorted(&self, files: &[InputFile], kind: InputKind) -> ScanResult<SortedRows> {
        let det = Detector::new(&self.set, self.prepared.clone(), self.extra)
            .with_field_data_mapping(self.field_data_mapping)
            .with_rule_stats(self.rule_stats)
            .with_prefilter(self.prefilter)
            .with_all_fields(self.all_fields)
            .with_filter(self.filter.clone());
        crate::scan::scan(
            &det,
            files,
            crate::scan::ScanOptions {
                kind,
                progress: self.progress.clone(),
                recover_records: self.recover_records,
                sort_memory: self.sort_memory,
            },
        )
    }
}
