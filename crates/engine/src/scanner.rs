//! [`Scanner`]: a compiled rule set prepared for scanning, configured once by a
//! [`ScannerBuilder`], and how to scan files with it.

use crate::detect::filter::RecordFilter;
use crate::detect::{prepare, DetectOptions, Detector, Prepared};
use crate::progress::Progress;
use crate::render::geo::GeoIpMapping;
use crate::scan::ScanResult;
use crate::sort::merge::SortedRows;
use scanner_input::{InputFile, IntegrityFields};
use scanner_rules::RuleSet;
use std::sync::Arc;

/// How a [`Scanner`] scans: what its rows carry, which records it tests, and how it
/// reads and sorts. The defaults: no ExtraFieldInfo or AllFieldInfo, data mappings
/// on, every record tested, live records only, no memory bound on sorting.
#[derive(Debug, Clone, Default)]
pub struct ScannerBuilder {
    detect: DetectOptions,
    progress: Option<Arc<Progress>>,
    recover_records: bool,
    validate_checksums: bool,
    coverage: bool,
    sort_memory: Option<usize>,
    no_pwsh_fields: bool,
    file_times: bool,
    /// `--integrity`'s time tolerance, when on.
    integrity: Option<jiff::SignedDuration>,
}

impl ScannerBuilder {
    /// A builder with the defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Rows carry ExtraFieldInfo (the fields Details does not show).
    pub fn extra_field_info(&mut self, on: bool) -> &mut Self {
        self.detect.extra = on;
        self
    }

    /// Rows carry AllFieldInfo (every field of the record).
    pub fn all_field_info(&mut self, on: bool) -> &mut Self {
        self.detect.all_fields = on;
        self
    }

    /// Applies the rules' field data mappings (`config/data_mapping`) to Details and
    /// ExtraFieldInfo (the default); off, they show the recorded values (e.g. `%%1842`,
    /// `0x1fc`).
    pub fn field_data_mapping(&mut self, on: bool) -> &mut Self {
        self.detect.field_data_mapping = on;
        self
    }

    /// Keeps the tabs and line breaks of the values in Details, ExtraFieldInfo and
    /// AllFieldInfo (runs of spaces still squeezed, the ends trimmed), as Hayabusa's JSON
    /// timeline shows them; off (the default), every run of whitespace is one space, as
    /// the CSV timeline shows values.
    pub fn keep_line_breaks(&mut self, on: bool) -> &mut Self {
        self.detect.keep_line_breaks = on;
        self
    }

    /// Renders the Details of rules without a `details` of their own from the config's
    /// default templates (`default_details.txt`, by provider and EventID; the default);
    /// off, such rows show every field, as Hayabusa does without abbreviations.
    pub fn default_details(&mut self, on: bool) -> &mut Self {
        self.detect.default_details = on;
        self
    }

    /// Rows of the events `mapping` lists carry their source and target addresses
    /// ([`crate::DetectInfo::geo`]), for `-G`'s lookups; `None` (the default): none.
    pub fn geo_ip(&mut self, mapping: Option<GeoIpMapping>) -> &mut Self {
        self.detect.geo_ip = mapping;
        self
    }

    /// Times every rule evaluation ([`ScanResult::rule_stats`]); off by default, and
    /// free when off.
    pub fn rule_stats(&mut self, on: bool) -> &mut Self {
        self.detect.rule_stats = on;
        self
    }

    /// Times the scan of every file ([`crate::ScanStats::file_times`]: count, mean,
    /// percentiles, maximum); off by default, and free when off (one clock read before and
    /// after each file when on, never per record).
    pub fn file_times(&mut self, on: bool) -> &mut Self {
        self.file_times = on;
        self
    }

    /// Uses the shared-needle prefilter (the default); off, every rule under a record's
    /// (Channel, EventID) is evaluated. Detections are the same either way.
    pub fn prefilter(&mut self, on: bool) -> &mut Self {
        self.detect.prefilter = on;
        self
    }

    /// Tests only the records `filter` keeps; an empty filter costs nothing per record.
    pub fn record_filter(&mut self, filter: RecordFilter) -> &mut Self {
        self.detect.filter = (!filter.is_empty()).then_some(filter);
        self
    }

    /// Counters the scan bumps as each file is done (for a progress display).
    pub fn progress(&mut self, progress: Arc<Progress>) -> &mut Self {
        self.progress = Some(progress);
        self
    }

    /// Also scans EVTX records carved from slack space and damaged chunks; their rows
    /// are marked [`crate::DetectInfo::recovered`]. Carved records that do not render or
    /// flatten are dropped without an error.
    pub fn recover_records(&mut self, on: bool) -> &mut Self {
        self.recover_records = on;
        self
    }

    /// Reads an EVTX chunk only when its header and records CRC32s match (Hayabusa's
    /// `-V`); the others are reported as input errors and not scanned.
    pub fn validate_checksums(&mut self, on: bool) -> &mut Self {
        self.validate_checksums = on;
        self
    }

    /// Also checks each file's integrity as it is scanned (`--integrity`): its
    /// structure (EVTX) and its records' ids, times, clears and stops, a record's time
    /// allowed back by `tolerance`; each finding is a row ([`crate::RuleRef::Integrity`]).
    /// `None`: off.
    pub fn integrity(&mut self, tolerance: Option<jiff::SignedDuration>) -> &mut Self {
        self.integrity = tolerance;
        self
    }

    /// Counts, per (Channel, Provider, EventID) of the records tested, the records,
    /// computers, first and last time and detections ([`crate::TypeTally`], in
    /// [`crate::ScanResult::coverage`]).
    pub fn coverage(&mut self, on: bool) -> &mut Self {
        self.coverage = on;
        self
    }

    /// Splits classic PowerShell events' `key=value` Data element into fields
    /// (`HostApplication`, `HostName`, …) as Hayabusa does; on by default.
    pub fn pwsh_field_extraction(&mut self, on: bool) -> &mut Self {
        self.no_pwsh_fields = !on;
        self
    }

    /// Holds about `bytes` of detections in memory for sorting (`None`, the default: no
    /// bound); past it, [`Scanner::scan_sorted`] spills sorted runs to temporary files
    /// (in [`std::env::temp_dir`]), removed once read or dropped.
    pub fn sort_memory(&mut self, bytes: Option<usize>) -> &mut Self {
        self.sort_memory = bytes;
        self
    }

    /// Prepares `set` for scanning this way: interns the fields rows are built from and
    /// compiles the Details templates.
    pub fn build(&self, mut set: RuleSet) -> Scanner {
        let geo = self.detect.geo_ip.as_ref();
        let prepared = prepare(&mut set, self.detect.default_details, geo);
        let integrity = self
            .integrity
            .map(|t| IntegrityFields::intern(set.fields_mut_with().0, t));
        Scanner {
            set,
            prepared,
            options: self.clone(),
            integrity,
        }
    }
}

/// A rule set prepared for scanning, with how to scan ([`ScannerBuilder`]).
pub struct Scanner {
    set: RuleSet,
    prepared: Prepared,
    options: ScannerBuilder,
    /// The fields the integrity checks read, with `--integrity`.
    integrity: Option<IntegrityFields>,
}

impl Scanner {
    /// Prepares `set` with the default options ([`ScannerBuilder::new`]).
    pub fn new(set: RuleSet) -> Self {
        ScannerBuilder::new().build(set)
    }

    /// The rule set.
    pub fn rules(&self) -> &RuleSet {
        &self.set
    }

    /// Scans files and collects every row in memory, in timeline order (see
    /// [`Self::scan_sorted`] for a stream). Fails only when rows spilled to disk past
    /// the sort bound cannot be read back; the error names the run's file.
    pub fn scan(&self, files: &[InputFile]) -> std::io::Result<ScanResult> {
        let r = self.scan_sorted(files);
        Ok(ScanResult {
            rows: r.rows.into_vec()?,
            stats: r.stats,
            errors: r.errors,
            rule_stats: r.rule_stats,
            coverage: r.coverage,
        })
    }

    /// Scans files; the rows come as a stream in timeline order, held in memory only up
    /// to the bound of [`ScannerBuilder::sort_memory`]. Each file is read as what its
    /// first bytes show (EVTX, JSON in any known shape, event XML, gzip of these),
    /// whatever its name or how it was found.
    pub fn scan_sorted(&self, files: &[InputFile]) -> ScanResult<SortedRows> {
        let det = Detector::new(&self.set, &self.prepared, &self.options.detect);
        crate::scan::scan(
            &det,
            files,
            crate::scan::ScanOptions {
                progress: self.options.progress.clone(),
                recover_records: self.options.recover_records,
                validate_checksums: self.options.validate_checksums,
                coverage: self.options.coverage,
                sort_memory: self.options.sort_memory,
                pwsh_fields: !self.options.no_pwsh_fields,
                file_times: self.options.file_times,
            },
            self.integrity.as_ref(),
        )
    }
}
