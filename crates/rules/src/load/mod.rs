//! Loading a rule set, in four phases: read (the config folder and every rule file),
//! compile (each YAML document, in parallel, then the filters), select (which rules and
//! correlations run) and index (by Channel and EventID, with the prefilters).
//!
//! A document that cannot be loaded costs only itself: it is reported with its file
//! and reason, and the others load.

mod cache;
mod ctx;
mod document;
mod files;
mod filter;
mod select;

pub use select::RuleSelect;

use crate::builtin;
use crate::config::Config;
use crate::correlation::Correlation;
use crate::fields::FieldTable;
use crate::index::RuleIndex;
use crate::logsource::LogsourceMap;
use crate::matcher::RegexCache;
use crate::meta::Level;
use crate::report::{Disabled, DuplicateId, LoadError, LoadReport};
use crate::rule::Rule;
use crate::set::RuleSet;
use crate::text_file::{self, read_error};
use cache::SetCache;
use compact_str::CompactString;
use ctx::Ctx;
use document::Doc;
use files::RuleText;
use rayon::prelude::*;
use scanner_files::{Seen, TextFile};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

/// Where rules come from. (Serialized as the rule set cache's key: `load::cache`.)
#[derive(Debug, Clone, serde::Serialize)]
pub enum RuleSource {
    /// The set embedded in the binary.
    Builtin,
    /// A `.yml` file or a folder searched recursively.
    Path(#[serde(serialize_with = "path_bytes")] PathBuf),
    /// Rule YAML given as text, under a name for the load report (tests, fuzzing).
    Text {
        /// The name errors give as the file.
        name: String,
        /// The YAML.
        text: String,
    },
}

/// Which rules are enabled. (Serialized, all but the cache folder, as the rule set
/// cache's key: `load::cache`.)
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LoadOptions {
    /// A config folder; default: `<rules folder>/config` when it exists.
    #[serde(serialize_with = "opt_path_bytes")]
    pub config_dir: Option<PathBuf>,
    /// Rules below this level are disabled.
    pub min_level: Level,
    /// Enable `status: deprecated` rules.
    pub enable_deprecated: bool,
    /// Enable `status: unsupported` rules.
    pub enable_unsupported: bool,
    /// Enable rules listed in `noisy_rules.txt`.
    pub enable_noisy: bool,
    /// A folder of `<placeholder>.txt` files with `expand` values (one per line).
    #[serde(serialize_with = "opt_path_bytes")]
    pub expand_dir: Option<PathBuf>,
    /// Keep both a rule and a rule derived from it with the same title (by default the
    /// original is disabled when its derived copy, e.g. a Hayabusa conversion, is loaded).
    pub keep_derived_duplicates: bool,
    /// Only rules of exactly this level (`-e/--exact-level`).
    pub exact_level: Option<Level>,
    /// Only the rules listed in `proven_rules.txt` (`-P/--proven-rules`); with no such
    /// file in the config folder, none.
    pub proven_only: bool,
    /// Rule selection by tag, `logsource.category` and `status` (`--include-tag` …).
    pub select: RuleSelect,
    /// A folder for the rule set cache (the whole loaded set, reused while no file it
    /// came from changes); `None` reads and compiles every file. Used when a source is
    /// a path. The one option that is no part of what is loaded.
    #[serde(skip)]
    pub cache_dir: Option<PathBuf>,
}

/// A path as its bytes: any path, where serde's own form takes UTF-8 only.
fn path_bytes<S: serde::Serializer>(p: &Path, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_bytes(p.as_os_str().as_encoded_bytes())
}

/// [`path_bytes`], or none.
fn opt_path_bytes<S: serde::Serializer>(p: &Option<PathBuf>, s: S) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.serialize_some(p.as_os_str().as_encoded_bytes()),
        None => s.serialize_none(),
    }
}

/// Loads rules from `sources` (the built-in set when empty): from the rule set cache
/// when it holds this set and none of its files changed, else from the rule files,
/// writing the rule set cache anew.
pub fn load(sources: &[RuleSource], opts: &LoadOptions) -> RuleSet {
    load_at(sources, opts, SystemTime::now())
}

/// [`load`], begun at `started` (what the rule set cache takes the files' times to be
/// older than; tests take a load begun long after they wrote the files).
pub(super) fn load_at(sources: &[RuleSource], opts: &LoadOptions, started: SystemTime) -> RuleSet {
    let mut report = LoadReport::default();
    let mut clock = Laps(Instant::now());
    let sources: Vec<RuleSource> = if sources.is_empty() {
        vec![RuleSource::Builtin]
    } else {
        sources.to_vec()
    };
    let set_cache = SetCache::open(&sources, opts, started, &mut report);
    if let Some(sc) = &set_cache {
        if let Some(set) = sc.find(&mut report, &mut |r, phase| clock.lap(r, phase)) {
            return set;
        }
    }
    // What the load looks at, for the rule set cache to check next time.
    let seen = match set_cache {
        Some(_) => Seen::on(),
        None => Seen::off(),
    };
    let config_dir = config_dir(&sources, opts, &seen);
    // The config folder is read while the rule folders are walked and read (neither
    // needs the other; the walk alone was a serial 7-11 ms before the parallel reads).
    let ((config, logsources, mut failures), (texts, mut errors)) = rayon::join(
        || {
            let mut failures = Vec::new();
            let config = read_config(config_dir.as_ref(), opts, &mut failures, &seen);
            let logsources = read_logsources(config_dir.as_ref(), &mut failures, &seen);
            (config, logsources, failures)
        },
        || {
            let mut errors = Vec::new();
            (files::read(&sources, &mut errors, &seen), errors)
        },
    );
    report.config_failures.append(&mut failures);
    report.errors.append(&mut errors);
    report.files = texts.len();
    clock.lap(&mut report, "config and rule files read");

    let regexes = RegexCache::default();
    let (loaded, fields) = compile(texts, &config, &logsources, &regexes, &mut report);
    let enabled = select::enable(loaded, &config, opts, &mut report);
    report.regex_bytes = regexes.compiled_bytes();
    let mut set = index(
        enabled,
        fields,
        config,
        &logsources,
        report,
        regexes.len(),
        &mut clock,
    );
    if let Some(sc) = set_cache {
        sc.keep(&mut set, seen);
        clock.lap(&mut set.report, "rule set cache written");
    }
    set
}

/// Wall time per loading phase, for the report.
struct Laps(Instant);

impl Laps {
    /// Records the time since the previous lap under `name`.
    fn lap(&mut self, report: &mut LoadReport, name: &'static str) {
        report.timings.push((name, self.0.elapsed()));
        self.0 = Instant::now();
    }
}

/// The config folder: the one given, else `<rules folder>/config` of the first rules
/// folder that has one.
fn config_dir(sources: &[RuleSource], opts: &LoadOptions, seen: &Seen) -> Option<PathBuf> {
    opts.config_dir.clone().or_else(|| {
        sources.iter().find_map(|s| match s {
            RuleSource::Path(p) => {
                let c = p.join("config");
                seen.stat(&c).is_some_and(|m| m.is_dir()).then_some(c)
            }
            _ => None,
        })
    })
}

/// The configuration: the config folder's, its gaps filled from the built-in one (or
/// the built-in one), plus the `expand` folder given; problems go to the report.
fn read_config(
    dir: Option<&PathBuf>,
    opts: &LoadOptions,
    failures: &mut Vec<LoadError>,
    seen: &Seen,
) -> Config {
    let builtin_config = builtin::config();
    let mut config = match dir {
        Some(d) => Config::load_dir(d, seen),
        None => builtin_config.clone(),
    };
    config.fill_from(&builtin_config);
    if let Some(dir) = &opts.expand_dir {
        if let Err(e) = config.add_placeholder_dir(dir, seen) {
            config.errors.push(e);
        }
    }
    failures.append(&mut config.errors);
    config
}

/// The log-source table: the built-in one, with the config folder's entries replacing
/// its entries of the same name.
fn read_logsources(
    dir: Option<&PathBuf>,
    failures: &mut Vec<LoadError>,
    seen: &Seen,
) -> LogsourceMap {
    let mut logsources = LogsourceMap::default();
    for (name, text) in builtin::CONFIG {
        if *name == "logsource.yaml" {
            match LogsourceMap::parse(text) {
                Ok(m) => logsources = m,
                Err(e) => failures.push(read_error(Path::new("built-in logsource.yaml"), e)),
            }
        }
    }
    if let Some(d) = dir {
        let p = d.join("logsource.yaml");
        // Anything there but a link to nowhere is read, or reported.
        if seen.stat(&p).is_some() {
            let text = text_file::read_noting(&p, TextFile::Config, seen);
            match text.and_then(|t| LogsourceMap::parse(&t)) {
                Ok(m) => logsources.merge(m),
                Err(e) => failures.push(read_error(&p, e)),
            }
        }
    }
    logsources
}

/// What the compile phase hands the select phase.
struct Loaded {
    /// Every rule compiled (one per log-source variant), filters applied.
    rules: Vec<Rule>,
    /// Every correlation read, not yet tied to rules.
    correlations: Vec<Correlation>,
    /// Rules disabled so far, by reason.
    disabled: BTreeMap<Disabled, usize>,
}

/// Compiles every document of every file (in parallel), then applies the filters;
/// returns them with the field table they were compiled against.
fn compile(
    texts: Vec<RuleText>,
    config: &Config,
    logsources: &LogsourceMap,
    regexes: &RegexCache,
    report: &mut LoadReport,
) -> (Loaded, FieldTable) {
    let mut fields = FieldTable::new();
    for (a, p) in &config.aliases {
        fields.add_alias(a, p);
    }
    let fields = Mutex::new(fields);
    let ctx = Ctx {
        fields: &fields,
        regexes,
        config,
        logsources,
        variant: None,
    };
    // Each text is freed by the worker that parsed it, as it goes.
    let files: Vec<Vec<Doc>> = texts
        .into_par_iter()
        .map(|t| document::load_file(&t.name, &t.text, &ctx))
        .collect();
    let docs = files.into_iter().flatten();
    let mut loaded = Loaded {
        rules: Vec::new(),
        correlations: Vec::new(),
        disabled: BTreeMap::new(),
    };
    let mut filters = Vec::new();
    // Id → the files of the rules with it (one entry per document, not per variant).
    let mut ids: BTreeMap<CompactString, Vec<Box<str>>> = BTreeMap::new();
    let mut note_id = |m: &crate::meta::RuleMeta| {
        if m.id != "-" && !m.id.is_empty() {
            ids.entry(m.id.clone()).or_default().push(m.path.clone());
        }
    };
    for d in docs {
        report.documents += 1;
        match d {
            Doc::Rule(r) => {
                report.loaded += 1;
                if let Some(first) = r.first() {
                    note_id(&first.meta);
                }
                loaded.rules.extend(r);
            }
            Doc::Correlation(c) => {
                report.loaded += 1;
                note_id(&c.meta);
                loaded.correlations.push(*c);
            }
            Doc::Error(e) => report.errors.push(e),
            Doc::Disabled(why, e) => {
                report.loaded += 1;
                *loaded.disabled.entry(why).or_default() += 1;
                report.disabled_rules.push(e);
            }
            Doc::Filter(f) => {
                report.loaded += 1;
                filters.push(*f);
            }
        }
    }
    report.duplicate_ids = ids
        .into_iter()
        .filter(|(_, files)| files.len() > 1)
        .map(|(id, files)| DuplicateId {
            id: id.to_string(),
            count: files.len(),
            files: files
                .iter()
                .take(DuplicateId::LISTED)
                .map(|f| f.to_string())
                .collect(),
        })
        .collect();
    for f in &filters {
        filter::apply(f, &mut loaded.rules, &ctx, report);
    }
    (
        loaded,
        fields.into_inner().unwrap_or_else(|e| e.into_inner()),
    )
}

/// Indexes the enabled rules by (Channel, EventID), builds the prefilters and
/// assembles the rule set.
fn index(
    enabled: select::Enabled,
    mut fields: FieldTable,
    config: Config,
    logsources: &LogsourceMap,
    mut report: LoadReport,
    regexes: usize,
    clock: &mut Laps,
) -> RuleSet {
    let select::Enabled {
        mut rules,
        emits,
        mut correlations,
    } = enabled;
    correlation_keys(&mut correlations, &rules, &mut fields, logsources);
    let mut index = RuleIndex::default();
    let constraints: Vec<_> = rules.par_iter().map(Rule::constraint).collect();
    for (i, c) in constraints.iter().enumerate() {
        index.insert(i as u32, c);
    }
    clock.lap(&mut report, "parsed, compiled, filtered and indexed");
    index.build_prefilters(&rules);
    share_automata(&mut rules, &mut index);
    clock.lap(
        &mut report,
        "prefilters planned (automata built on first use)",
    );
    // After the prefilters, which were built from the rules as written: reordering what
    // a rule ANDs changes how fast it fails, not what it matches.
    for r in &mut rules {
        r.detection.defer_index_tests();
    }
    report
        .errors
        .sort_by(|a, b| (&a.file, a.document).cmp(&(&b.file, b.document)));
    RuleSet {
        rules,
        emits,
        correlations,
        fields,
        index,
        config,
        report,
        regexes,
    }
}

/// Gives every needle automaton built from the same needles the same way one build,
/// whichever rules or prefilters hold it: hayabusa-rules carries most SigmaHQ rules
/// twice (for Sysmon and for Security logs) and compiles a rule once per log-source
/// variant, so the same OR-lists recur.
fn share_automata(rules: &mut [Rule], index: &mut RuleIndex) {
    use crate::matcher::{Check, SharedAutomata, ValueTest};
    let mut shared = SharedAutomata::default();
    let mut share = |tests: &mut [ValueTest]| {
        for t in tests {
            if let ValueTest::Needles { ac, .. } = t {
                ac.share(&mut shared);
            }
        }
    };
    for r in rules.iter_mut() {
        for s in &mut r.detection.selections {
            s.for_each_test_mut(&mut |t| match &mut t.check {
                Check::Any { tests, .. } => share(tests),
                Check::All(groups) => groups.iter_mut().for_each(|g| share(g)),
                _ => {}
            });
        }
    }
    index.share_automata(&mut shared);
}

/// Where each correlation input finds its group-by and value fields: a rule's field
/// name (through the correlation's aliases) as the rule's log-source variant maps it,
/// as detection does; a chained correlation's group-by position.
fn correlation_keys(
    correlations: &mut [Correlation],
    rules: &[Rule],
    fields: &mut FieldTable,
    logsources: &LogsourceMap,
) {
    use crate::correlation::{CorrelationSource, InputKey};
    let groups: Vec<Vec<String>> = correlations.iter().map(|c| c.group_by.clone()).collect();
    for c in correlations.iter_mut() {
        let mut inputs = std::mem::take(&mut c.inputs);
        for input in &mut inputs {
            let reference = c.rule_refs[input.reference as usize].as_str();
            let mut key = |name: &str| -> Option<InputKey> {
                match input.source {
                    CorrelationSource::Rule(r) => {
                        let rule = &rules[r as usize];
                        let field = c
                            .group_field(name, reference)
                            .or_else(|| {
                                rule.meta
                                    .name
                                    .as_deref()
                                    .and_then(|n| c.group_field(name, n))
                            })
                            .or_else(|| c.group_field(name, rule.meta.id.as_str()))?;
                        let rename = match (logsources.lookup(&rule.meta.logsource), rule.variant) {
                            (crate::logsource::Mapping::Variants(v), Some(i)) => {
                                v.get(i as usize).and_then(|v| v.rename.get(&field))
                            }
                            _ => None,
                        };
                        Some(InputKey::Field(
                            fields.intern(rename.map_or(field.as_str(), String::as_str)),
                        ))
                    }
                    CorrelationSource::Correlation(k) => {
                        let field = c.group_field(name, reference)?;
                        groups[k as usize]
                            .iter()
                            .position(|g| *g == field)
                            .map(InputKey::Group)
                    }
                }
            };
            input.group = c.group_by.iter().map(|g| key(g)).collect();
            input.values = c.fields.iter().map(|g| key(g)).collect();
        }
        c.inputs = inputs;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(name: &str, text: &str) -> RuleSource {
        RuleSource::Text {
            name: name.into(),
            text: text.into(),
        }
    }

    fn load_texts(sources: &[RuleSource]) -> RuleSet {
        load(sources, &LoadOptions::default())
    }

    const RULE: &str = "title: R\nid: r1\nlevel: high\ndetection:\n  s:\n    Channel: Security\n    EventID: 4624\n  condition: s\n";

    #[test]
    fn the_phases_count_documents_and_time_themselves() {
        let set = load_texts(&[text("a.yml", RULE), text("b.yml", "title: broken\n")]);
        let r = &set.report;
        assert_eq!((r.files, r.documents, r.loaded, r.enabled), (2, 2, 1, 1));
        assert_eq!(r.errors.len(), 1);
        assert_eq!(r.errors[0].to_string(), "b.yml [broken]: no detection map");
        let phases: Vec<&str> = r.timings.iter().map(|t| t.0).collect();
        assert_eq!(
            phases,
            [
                "config and rule files read",
                "parsed, compiled, filtered and indexed",
                "prefilters planned (automata built on first use)"
            ]
        );
        assert_eq!(
            set.index
                .candidates("security", "4624")
                .into_iter()
                .flatten()
                .count(),
            1
        );
    }

    #[test]
    fn correlations_in_a_cycle_are_errors_and_a_chain_resolves_with_mapped_keys() {
        let c = |title: &str, name: &str, refs: &str| {
            format!("title: {title}\nname: {name}\ncorrelation:\n  type: event_count\n  rules: [{refs}]\n  group-by: [User]\n  timespan: 1h\n  condition: {{gte: 3}}\n")
        };
        let text_of = [c("A", "a", "b"), c("B", "b", "a")].join("---\n");
        let set = load_texts(&[text("a.yml", RULE), text("c.yml", &text_of)]);
        assert!(set.correlations.is_empty());
        let reasons: Vec<String> = set.report.errors.iter().map(|e| e.reason.clone()).collect();
        assert_eq!(
            reasons,
            [
                "correlation refers to itself through other correlations",
                "correlation refers to itself through other correlations"
            ]
        );
        // A chain: the outer correlation's input is the inner one, its group-by found at
        // the inner one's group-by position; the inner one emits nothing of its own.
        let text_of = [c("Inner", "inner", "r1"), c("Outer", "outer", "inner")].join("---\n");
        let set = load_texts(&[text("a.yml", RULE), text("c.yml", &text_of)]);
        assert!(set.report.errors.is_empty(), "{:?}", set.report.errors);
        let outer = &set.correlations[1];
        assert_eq!(
            outer.inputs[0].source,
            crate::correlation::CorrelationSource::Correlation(0)
        );
        assert_eq!(
            outer.inputs[0].group,
            [Some(crate::correlation::InputKey::Group(0))]
        );
        assert!(!set.correlations[0].emits && set.correlations[1].emits);
    }

    #[test]
    fn a_correlation_over_a_missing_rule_is_an_error_and_not_loaded() {
        let corr = "title: C\ncorrelation:\n  type: event_count\n  rules: [r1, nope]\n  timespan: 1h\n  condition: {gte: 3}\n";
        let set = load_texts(&[text("a.yml", RULE), text("c.yml", corr)]);
        assert_eq!(set.report.loaded, 1);
        // Counted once among the documents: the error names its document, so it is
        // not taken for a file that could not be read (document 0).
        assert_eq!(
            (set.report.documents, set.report.errors[0].document),
            (2, 1)
        );
        assert_eq!(
            set.report.errors[0].to_string(),
            "c.yml [C]: correlation refers to rules not loaded or not enabled: nope"
        );
        assert!(set.correlations.is_empty());
        assert_eq!(set.emits, [true]);
    }

    #[test]
    fn rules_sharing_an_id_load_and_are_reported_once_per_id() {
        let mut sources: Vec<RuleSource> =
            (0..5).map(|i| text(&format!("d{i}.yml"), RULE)).collect();
        sources.push(text("other.yml", &RULE.replace("id: r1", "id: r9")));
        let set = load_texts(&sources);
        assert_eq!(set.report.loaded, 6, "all load");
        assert_eq!(
            set.report.duplicate_ids,
            [DuplicateId {
                id: "r1".into(),
                files: vec!["d0.yml".into(), "d1.yml".into(), "d2.yml".into()],
                count: 5
            }]
        );
        assert_eq!(
            set.report.duplicate_ids[0].to_string(),
            "rule id r1 is shared by 5 rules: d0.yml, d1.yml, d2.yml and 2 more"
        );
        // A rule of several log-source variants is one rule.
        let mapped = "title: P\nid: p1\nlogsource:\n  category: process_creation\n  product: windows\ndetection:\n  s:\n    Image|endswith: x.exe\n  condition: s\n";
        let set = load_texts(&[text("p.yml", mapped)]);
        assert!(set.report.duplicate_ids.is_empty());
    }

    #[test]
    fn filters_apply_to_the_rules_they_name_and_report_when_none() {
        let filter = "title: F\nfilter:\n  rules: r1\n  u:\n    User: admin\n  condition: not u\n";
        let stray = "title: G\nfilter:\n  rules: nothing\n  u:\n    User: x\n  condition: not u\n";
        let set = load_texts(&[
            text("a.yml", RULE),
            text("f.yml", filter),
            text("g.yml", stray),
        ]);
        let names = &set.rules[0].detection.names;
        assert!(names.iter().any(|n| n == "filter:F:u"), "{names:?}");
        assert_eq!(
            set.report.config_errors,
            ["g.yml: filter 'G' applies to no loaded rule"]
        );
    }

    #[test]
    fn a_derived_rule_with_the_same_title_replaces_its_original() {
        let derived = "title: R\nid: r2\nrelated:\n  - id: r1\n    type: derived\ndetection:\n  s:\n    Channel: Security\n  condition: s\n";
        let set = load_texts(&[text("a.yml", RULE), text("b.yml", derived)]);
        assert_eq!(set.rules.len(), 1);
        assert_eq!(set.rules[0].meta.id, "r2");
        assert_eq!(set.report.disabled, [(Disabled::Duplicate, 1)]);
        assert_eq!(
            set.report.disabled_rules[0].to_string(),
            "a.yml [R]: rule r2, derived from it with the same title, is loaded"
        );
    }
}
