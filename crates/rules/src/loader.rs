//! Loading a rule set: reading files, parsing YAML documents, compiling them in
//! parallel, filtering by status, level and id lists, and indexing the result.
//!
//! A document that cannot be loaded costs only itself: it is reported with its file
//! and reason, and the others load.

use crate::builtin;
use crate::config::Config;
use crate::correlation::{self, Correlation};
use crate::fields::FxHashMap;
use crate::fields::{FieldId, FieldTable};
use crate::index::RuleIndex;
use crate::logsource::{LogsourceMap, Mapping};
use crate::matcher::{self, CompileContext};
use crate::meta::{self, Level, LogSource, RuleMeta};
use crate::regex_cache::RegexCache;
use crate::report::{Disabled, LoadError, LoadReport};
use crate::rule::{self, Rule};
use crate::set::RuleSet;
use rayon::prelude::*;
use serde::Deserialize;
use serde_yaml::Value as Yaml;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Where rules come from.
#[derive(Debug, Clone)]
pub enum RuleSource {
    /// The set embedded in the binary.
    Builtin,
    /// A `.yml` file or a folder searched recursively.
    Path(PathBuf),
    /// Rule YAML given as text, under a name for the load report (tests, fuzzing).
    Text {
        /// The name errors give as the file.
        name: String,
        /// The YAML.
        text: String,
    },
}

/// Which rules are enabled.
#[derive(Debug, Clone, Default)]
pub struct LoadOptions {
    /// A config folder; default: `<rules folder>/config` when it exists.
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
    pub expand_dir: Option<PathBuf>,
    /// Keep both a rule and a rule derived from it with the same title (by default the
    /// original is disabled when its derived copy, e.g. a Hayabusa conversion, is loaded).
    pub keep_derived_duplicates: bool,
    /// Only rules of exactly this level (`-e/--exact-level`).
    pub exact_level: Option<Level>,
    /// Rule selection by tag, `logsource.category` and `status` (`--include-tag` …).
    pub select: RuleSelect,
}

/// Which rules to keep, by tag, log-source category and status. An include list keeps
/// only the rules with a listed value (so a rule without one is dropped); an exclude
/// list drops the rules with a listed value. Comparisons ignore case.
#[derive(Debug, Clone, Default)]
pub struct RuleSelect {
    /// Keep rules with any of these tags.
    pub include_tags: Vec<String>,
    /// Drop rules with any of these tags.
    pub exclude_tags: Vec<String>,
    /// Keep rules of these categories.
    pub include_categories: Vec<String>,
    /// Drop rules of these categories.
    pub exclude_categories: Vec<String>,
    /// Keep rules of these statuses (`*` keeps all).
    pub include_status: Vec<String>,
    /// Drop rules of these statuses.
    pub exclude_status: Vec<String>,
}

impl RuleSelect {
    /// Whether a rule passes the selection.
    pub fn keeps(&self, meta: &RuleMeta) -> bool {
        let has = |list: &[String], v: &str| list.iter().any(|x| x.eq_ignore_ascii_case(v));
        let any_tag = |list: &[String]| meta.tags.iter().any(|t| has(list, t));
        if !self.include_tags.is_empty() && !any_tag(&self.include_tags) {
            return false;
        }
        if any_tag(&self.exclude_tags) {
            return false;
        }
        let category = meta.logsource.category.as_deref().unwrap_or("");
        if !self.include_categories.is_empty() && !has(&self.include_categories, category) {
            return false;
        }
        if !category.is_empty() && has(&self.exclude_categories, category) {
            return false;
        }
        let status = meta.status.as_str();
        if !self.include_status.is_empty()
            && !self.include_status.iter().any(|s| s == "*")
            && !has(&self.include_status, status)
        {
            return false;
        }
        status.is_empty() || !has(&self.exclude_status, status)
    }
}

struct Ctx<'a> {
    fields: &'a Mutex<FieldTable>,
    regexes: &'a RegexCache,
    config: &'a Config,
    logsources: &'a LogsourceMap,
    /// Field renames of the log-source variant being compiled.
    rename: Option<&'a FxHashMap<String, String>>,
    /// That variant, for its value maps.
    variant: Option<&'a crate::logsource::Variant>,
}

impl CompileContext for Ctx<'_> {
    fn field(&self, name: &str) -> FieldId {
        let name = self
            .rename
            .and_then(|r| r.get(name))
            .map_or(name, String::as_str);
        self.fields
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .intern(name)
    }
    fn regexes(&self) -> &RegexCache {
        self.regexes
    }
    fn placeholder(&self, name: &str) -> Option<&[String]> {
        self.config.placeholders.get(name).map(Vec::as_slice)
    }
    fn map_value(&self, field: &str, value: &str) -> Option<String> {
        self.variant?.map_value(field, value)
    }
}

/// A Sigma filter: a condition ANDed into the rules it names (or all rules of its log source).
struct Filter {
    file: String,
    title: String,
    logsource: LogSource,
    /// Rule ids or names; empty means every rule with a matching log source.
    rules: Vec<String>,
    detection: serde_yaml::Mapping,
}

enum Doc {
    /// A rule: one entry per log-source variant.
    Rule(Vec<Rule>),
    Correlation(Box<Correlation>),
    Error(LoadError),
    Disabled(Disabled, LoadError),
    Filter(Box<Filter>),
}

/// Restricts a detection to a log-source variant's channels, EventIDs and providers.
fn restrict(
    mut d: rule::Detection,
    v: &crate::logsource::Variant,
    ctx: &Ctx<'_>,
) -> Result<rule::Detection, String> {
    let list = |xs: &[String]| Yaml::Sequence(xs.iter().map(|x| Yaml::String(x.clone())).collect());
    let mut tests = vec![matcher::compile_entry("Channel", &list(&v.channels), ctx)?];
    if !v.event_ids.is_empty() {
        tests.push(matcher::compile_entry("EventID", &list(&v.event_ids), ctx)?);
    }
    if !v.providers.is_empty() {
        tests.push(matcher::compile_entry(
            "Provider_Name",
            &list(&v.providers),
            ctx,
        )?);
    }
    let i = d.selections.len() as u32;
    d.selections.push(rule::Selection::All(tests));
    d.names.push("logsource".into());
    d.condition = crate::condition::Cond::And(vec![crate::condition::Cond::Sel(i), d.condition]);
    Ok(d)
}

fn load_document(path: &str, n: usize, value: Yaml, ctx: &Ctx<'_>) -> Option<Doc> {
    let err = |title: Option<String>, reason: String| {
        Some(Doc::Error(LoadError {
            file: path.to_string(),
            document: n,
            title,
            reason,
        }))
    };
    let doc = match value {
        Yaml::Null => return None,
        Yaml::Mapping(m) => m,
        _ => return err(None, "the document is not a map".into()),
    };
    let title = doc.get("title").and_then(Yaml::as_str).map(str::to_string);
    let meta = match meta::read(&doc, path) {
        Ok(m) => m,
        Err(e) => return err(title, e),
    };
    if let Some(f) = doc.get("filter") {
        let Yaml::Mapping(f) = f else {
            return err(title, "filter is not a map".into());
        };
        let rules = match f.get("rules") {
            Some(Yaml::String(s)) if s == "any" => Vec::new(),
            Some(Yaml::String(s)) => vec![s.clone()],
            Some(Yaml::Sequence(items)) => items
                .iter()
                .filter_map(|i| i.as_str().map(str::to_string))
                .collect(),
            None | Some(Yaml::Null) => Vec::new(),
            Some(_) => return err(title, "filter rules is not a list".into()),
        };
        let mut det = f.clone();
        det.remove("rules");
        if !det.contains_key("condition") {
            return err(title, "filter has no condition".into());
        }
        // Compile once to report errors now; it is compiled again per target rule.
        if let Err(e) = rule::compile_detection(&det, ctx) {
            return err(title, format!("filter: {e}"));
        }
        return Some(Doc::Filter(Box::new(Filter {
            file: path.to_string(),
            title: meta.title.to_string(),
            logsource: meta.logsource,
            rules,
            detection: det,
        })));
    }
    if doc.contains_key("correlation") {
        return match correlation::parse(&doc, meta) {
            Ok(c) => Some(Doc::Correlation(Box::new(c))),
            Err(e) => err(title, e),
        };
    }
    let Some(Yaml::Mapping(det)) = doc.get("detection") else {
        return err(title, "no detection map".into());
    };
    let disabled = |why: Disabled, reason: String| {
        Some(Doc::Disabled(
            why,
            LoadError {
                file: path.to_string(),
                document: n,
                title: title.clone(),
                reason,
            },
        ))
    };
    let detection = match rule::compile_detection(det, ctx) {
        Ok(d) => d,
        Err(e) if e.contains(matcher::NO_PLACEHOLDER_VALUES) => {
            return disabled(Disabled::Placeholder, e)
        }
        Err(e) => return err(title, e),
    };
    let plain = Rule {
        meta,
        detection,
        variant: None,
    };
    // A rule that names its channel is taken as written; otherwise its log source
    // decides which events it applies to.
    if plain.constraint().channels.is_some() {
        return Some(Doc::Rule(vec![plain]));
    }
    match ctx.logsources.lookup(&plain.meta.logsource) {
        Mapping::AsWritten => Some(Doc::Rule(vec![plain])),
        Mapping::Unusable(reason) => disabled(Disabled::Logsource, reason),
        Mapping::Variants(variants) => {
            let mut out = Vec::with_capacity(variants.len());
            for (vi, v) in variants.iter().enumerate() {
                let detection =
                    if v.rename.is_empty() && v.values.is_empty() && v.prefixes.is_empty() {
                        plain.detection.clone()
                    } else {
                        let vctx = Ctx {
                            rename: Some(&v.rename),
                            variant: Some(v),
                            ..*ctx
                        };
                        match rule::compile_detection(det, &vctx) {
                            Ok(d) => d,
                            Err(e) => return err(title, e),
                        }
                    };
                match restrict(detection, v, ctx) {
                    Ok(d) => out.push(Rule {
                        meta: plain.meta.clone(),
                        detection: d,
                        variant: Some(vi as u16),
                    }),
                    Err(e) => return err(title, e),
                }
            }
            Some(Doc::Rule(out))
        }
    }
}

/// Whether a filter's log source covers a rule's: each of product, category and service
/// the filter names must be the rule's.
fn logsource_covers(filter: &LogSource, rule: &LogSource) -> bool {
    let same = |a: &Option<compact_str::CompactString>, b: &Option<compact_str::CompactString>| {
        a.as_ref()
            .is_none_or(|a| b.as_ref().is_some_and(|b| a.eq_ignore_ascii_case(b)))
    };
    same(&filter.product, &rule.product)
        && same(&filter.category, &rule.category)
        && same(&filter.service, &rule.service)
}

/// ANDs a filter's condition into every rule it targets (pySigma's semantics: the
/// filter's own condition carries the `not`).
fn apply_filter(f: &Filter, rules: &mut [Rule], ctx: &Ctx<'_>, report: &mut LoadReport) {
    let mut applied = 0;
    for r in rules.iter_mut() {
        let named = f.rules.is_empty()
            || f.rules
                .iter()
                .any(|x| r.meta.id == x.as_str() || r.meta.name.as_deref() == Some(x.as_str()));
        if !named || !logsource_covers(&f.logsource, &r.meta.logsource) {
            continue;
        }
        let variants = match (r.variant, ctx.logsources.lookup(&r.meta.logsource)) {
            (Some(i), Mapping::Variants(v)) => v.get(i as usize),
            _ => None,
        };
        let vctx = Ctx {
            rename: variants.map(|v| &v.rename).filter(|m| !m.is_empty()),
            variant: variants,
            ..*ctx
        };
        match rule::compile_detection(&f.detection, &vctx) {
            Ok(fd) => {
                let d = &mut r.detection;
                let off = d.selections.len() as u32;
                d.names
                    .extend(fd.names.iter().map(|n| format!("filter:{}:{n}", f.title)));
                d.selections.extend(fd.selections);
                let own =
                    std::mem::replace(&mut d.condition, crate::condition::Cond::And(Vec::new()));
                d.condition = crate::condition::Cond::And(vec![own, fd.condition.shifted(off)]);
                applied += 1;
            }
            Err(e) => report.errors.push(LoadError {
                file: f.file.clone(),
                document: 0,
                title: Some(f.title.clone()),
                reason: format!("filter on rule {}: {e}", r.meta.id),
            }),
        }
    }
    if applied == 0 {
        report.config_errors.push(format!(
            "{}: filter '{}' applies to no loaded rule",
            f.file, f.title
        ));
    }
}

/// Deepest nesting of YAML flow collections (`[`, `{`) a rule file may have. The YAML
/// parser's time grows with the square of the nesting, so a hostile file of a few
/// kilobytes of brackets would take minutes; real rules nest a few levels.
pub const MAX_YAML_FLOW_DEPTH: usize = 64;

/// The deepest nesting of flow brackets outside quotes and comments (a cheap upper
/// estimate: quotes are taken to end with their line).
fn flow_depth(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    for line in text.lines() {
        let mut quote = None;
        let mut prev = b' ';
        for &c in line.as_bytes() {
            match (quote, c) {
                (Some(q), _) if c == q => quote = None,
                (Some(_), _) => {}
                (None, b'\'' | b'"') => quote = Some(c),
                (None, b'#') if prev == b' ' || prev == b'\t' => break,
                (None, b'[' | b'{') => {
                    depth += 1;
                    max = max.max(depth);
                }
                (None, b']' | b'}') => depth = depth.saturating_sub(1),
                _ => {}
            }
            prev = c;
        }
    }
    max
}

fn load_file(path: &str, text: &str, ctx: &Ctx<'_>) -> Vec<Doc> {
    let mut out = Vec::new();
    if flow_depth(text) > MAX_YAML_FLOW_DEPTH {
        out.push(Doc::Error(LoadError {
            file: path.to_string(),
            document: 0,
            title: None,
            reason: format!("invalid YAML: brackets nest deeper than {MAX_YAML_FLOW_DEPTH} levels"),
        }));
        return out;
    }
    for (i, de) in serde_yaml::Deserializer::from_str(text).enumerate() {
        match Yaml::deserialize(de) {
            Ok(v) => out.extend(load_document(path, i + 1, v, ctx)),
            Err(e) => {
                out.push(Doc::Error(LoadError {
                    file: path.to_string(),
                    document: i + 1,
                    title: None,
                    reason: format!("invalid YAML: {e}"),
                }));
                break;
            }
        }
    }
    out
}

fn is_rule_file(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("yml") || e.eq_ignore_ascii_case("yaml"))
}

/// Lists rule files under `root` (sorted), skipping hidden folders and a top-level `config`.
fn rule_files(root: &Path, errors: &mut Vec<LoadError>) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if root.is_file() {
        out.push(root.to_path_buf());
        return out;
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let rd = match std::fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) => {
                errors.push(LoadError {
                    file: dir.display().to_string(),
                    document: 0,
                    title: None,
                    reason: format!("cannot read folder: {e}"),
                });
                continue;
            }
        };
        for entry in rd.flatten() {
            let p = entry.path();
            let name = entry.file_name();
            let name = name.to_string_lossy();
            let Ok(ft) = entry.file_type() else { continue };
            // Follow file symlinks but not folder symlinks (no loops).
            if ft.is_dir() {
                if name.starts_with('.') || (dir == root && name == "config") {
                    continue;
                }
                stack.push(p);
            } else if (ft.is_file() || (ft.is_symlink() && p.is_file())) && is_rule_file(&p) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// Loads rules from `sources` (the built-in set when empty).
pub fn load(sources: &[RuleSource], opts: &LoadOptions) -> RuleSet {
    let mut report = LoadReport::default();
    let mut phase = std::time::Instant::now();
    let mut lap = |report: &mut LoadReport, name: &'static str| {
        report.timings.push((name, phase.elapsed()));
        phase = std::time::Instant::now();
    };
    let sources: Vec<RuleSource> = if sources.is_empty() {
        vec![RuleSource::Builtin]
    } else {
        sources.to_vec()
    };

    // Configuration: explicit folder, else `<rules folder>/config`, else built-in.
    let builtin_config = builtin::config();
    let config_dir = opts.config_dir.clone().or_else(|| {
        sources.iter().find_map(|s| match s {
            RuleSource::Path(p) if p.join("config").is_dir() => Some(p.join("config")),
            _ => None,
        })
    });
    let mut config = match &config_dir {
        Some(d) => Config::load_dir(d),
        None => builtin_config.clone(),
    };
    config.fill_from(&builtin_config);
    report.config_errors = std::mem::take(&mut config.errors);

    if let Some(dir) = &opts.expand_dir {
        if let Err(e) = config.add_placeholder_dir(dir) {
            report.config_errors.push(e);
        }
        report.config_errors.append(&mut config.errors);
    }
    let mut logsources = LogsourceMap::default();
    for (name, text) in builtin::CONFIG {
        if *name == "logsource.yaml" {
            match LogsourceMap::parse(text) {
                Ok(m) => logsources = m,
                Err(e) => report.config_errors.push(format!("built-in {e}")),
            }
        }
    }
    if let Some(d) = &config_dir {
        let p = d.join("logsource.yaml");
        if p.is_file() {
            match std::fs::read_to_string(&p)
                .map_err(|e| e.to_string())
                .and_then(|t| LogsourceMap::parse(&t))
            {
                Ok(m) => logsources.merge(m),
                Err(e) => report.config_errors.push(format!("{}: {e}", p.display())),
            }
        }
    }

    let mut fields = FieldTable::new();
    for (a, p) in &config.aliases {
        fields.add_alias(a, p);
    }

    // Read every file first (I/O), then parse and compile in parallel.
    let mut texts: Vec<(String, String)> = Vec::new();
    for s in &sources {
        match s {
            RuleSource::Builtin => texts.extend(
                builtin::RULES
                    .iter()
                    .map(|(p, t)| (format!("builtin:{p}"), t.to_string())),
            ),
            RuleSource::Text { name, text } => texts.push((name.clone(), text.clone())),
            RuleSource::Path(root) => {
                if !root.exists() {
                    report.errors.push(LoadError {
                        file: root.display().to_string(),
                        document: 0,
                        title: None,
                        reason: "no such file or folder".into(),
                    });
                    continue;
                }
                for f in rule_files(root, &mut report.errors) {
                    match std::fs::read_to_string(&f) {
                        Ok(t) => texts.push((f.display().to_string(), t)),
                        Err(e) => report.errors.push(LoadError {
                            file: f.display().to_string(),
                            document: 0,
                            title: None,
                            reason: format!("cannot read: {e}"),
                        }),
                    }
                }
            }
        }
    }
    report.files = texts.len();
    lap(&mut report, "config and rule files read");

    let fields_m = Mutex::new(fields);
    let regexes = RegexCache::default();
    let ctx = Ctx {
        fields: &fields_m,
        regexes: &regexes,
        config: &config,
        logsources: &logsources,
        rename: None,
        variant: None,
    };
    let docs: Vec<Doc> = texts
        .par_iter()
        .flat_map_iter(|(p, t)| load_file(p, t, &ctx))
        .collect();
    drop(texts);

    let mut rules = Vec::new();
    let mut correlations = Vec::new();
    let mut disabled: std::collections::BTreeMap<Disabled, usize> = Default::default();
    let mut filters = Vec::new();
    for d in docs {
        report.documents += 1;
        match d {
            Doc::Rule(r) => {
                report.loaded += 1;
                rules.extend(r);
            }
            Doc::Correlation(c) => {
                report.loaded += 1;
                correlations.push(*c);
            }
            Doc::Error(e) => report.errors.push(e),
            Doc::Disabled(why, e) => {
                report.loaded += 1;
                *disabled.entry(why).or_default() += 1;
                report.disabled_rules.push(e);
            }
            Doc::Filter(f) => {
                report.loaded += 1;
                filters.push(*f);
            }
        }
    }
    for f in &filters {
        apply_filter(f, &mut rules, &ctx, &mut report);
    }

    // A rule derived from another with the same title (a conversion of it, such as
    // Hayabusa's) stands for it: run one, not both.
    if !opts.keep_derived_duplicates {
        let mut title_of: FxHashMap<&str, &str> = FxHashMap::default();
        for r in &rules {
            title_of.insert(r.meta.id.as_str(), r.meta.title.as_str());
        }
        let mut superseded: FxHashMap<String, String> = FxHashMap::default();
        for r in &rules {
            for (id, kind) in &r.meta.related {
                if kind == "derived"
                    && *id != r.meta.id
                    && title_of.get(id.as_str()) == Some(&r.meta.title.as_str())
                {
                    superseded.insert(id.to_string(), r.meta.id.to_string());
                }
            }
        }
        if !superseded.is_empty() {
            let mut seen = std::collections::HashSet::new();
            rules.retain(|r| match superseded.get(r.meta.id.as_str()) {
                Some(by) => {
                    if seen.insert((r.meta.path.clone(), r.meta.id.clone())) {
                        *disabled.entry(Disabled::Duplicate).or_default() += 1;
                        report.disabled_rules.push(LoadError {
                            file: r.meta.path.to_string(),
                            document: 0,
                            title: Some(r.meta.title.to_string()),
                            reason: format!(
                                "rule {by}, derived from it with the same title, is loaded"
                            ),
                        });
                    }
                    false
                }
                None => true,
            });
        }
    }

    // Filters, in Hayabusa's order of precedence.
    let verdict = |meta: &RuleMeta| -> Option<Disabled> {
        let id = meta.id.as_str();
        if config.exclude.contains(id) {
            return Some(Disabled::Excluded);
        }
        if !opts.enable_noisy && config.noisy.contains(id) {
            return Some(Disabled::Noisy);
        }
        match meta.status.as_str() {
            "deprecated" if !opts.enable_deprecated => return Some(Disabled::Deprecated),
            "unsupported" if !opts.enable_unsupported => return Some(Disabled::Unsupported),
            _ => {}
        }
        if meta.level < opts.min_level {
            return Some(Disabled::BelowMinLevel);
        }
        if opts.exact_level.is_some_and(|l| l != meta.level) {
            return Some(Disabled::NotExactLevel);
        }
        (!opts.select.keeps(meta)).then_some(Disabled::Selected)
    };
    let mut kept = Vec::with_capacity(rules.len());
    let mut counted = std::collections::HashSet::new();
    for r in rules {
        match verdict(&r.meta) {
            Some(d) => {
                // Count a rule once, not once per log-source variant.
                if counted.insert((r.meta.path.clone(), r.meta.id.clone(), r.meta.title.clone())) {
                    *disabled.entry(d).or_default() += 1;
                }
            }
            None => kept.push(r),
        }
    }
    let mut rules = kept;
    let mut emits = vec![true; rules.len()];
    let mut kept_corr = Vec::new();
    for mut c in correlations {
        if let Some(d) = verdict(&c.meta) {
            *disabled.entry(d).or_default() += 1;
            continue;
        }
        let mut missing = Vec::new();
        for r in &c.rule_refs {
            let found: Vec<u32> = rules
                .iter()
                .enumerate()
                .filter(|(_, x)| {
                    x.meta.id == r.as_str() || x.meta.name.as_deref() == Some(r.as_str())
                })
                .map(|(i, _)| i as u32)
                .collect();
            if found.is_empty() {
                missing.push(r.clone());
            }
            c.rules.extend(found);
        }
        if !missing.is_empty() {
            report.loaded -= 1;
            report.errors.push(LoadError {
                file: c.meta.path.to_string(),
                document: 0,
                title: Some(c.meta.title.to_string()),
                reason: format!(
                    "correlation refers to rules not loaded or not enabled: {}",
                    missing.join(", ")
                ),
            });
            continue;
        }
        if !c.generate {
            for &i in &c.rules {
                emits[i as usize] = false;
            }
        }
        kept_corr.push(c);
    }
    // Legacy `| count()` rules: each becomes a correlation over itself.
    for (i, r) in rules.iter().enumerate() {
        if let Some((a, timeframe)) = &r.detection.aggregation {
            emits[i] = false;
            kept_corr.push(correlation::from_aggregation(
                r.meta.clone(),
                i as u32,
                a,
                *timeframe,
            ));
        }
    }
    report.disabled = disabled.into_iter().collect();
    // Count rules, not log-source variants.
    let distinct: std::collections::HashSet<_> = rules
        .iter()
        .filter(|r| r.detection.aggregation.is_none())
        .map(|r| (&r.meta.path, &r.meta.id, &r.meta.title))
        .collect();
    report.enabled = distinct.len() + kept_corr.len();

    let mut fields = fields_m.into_inner().unwrap_or_else(|e| e.into_inner());
    for c in &kept_corr {
        for g in c.group_by.iter().chain(c.field.iter()) {
            fields.intern(g);
        }
    }
    let mut index = RuleIndex::default();
    for (i, r) in rules.iter().enumerate() {
        index.insert(i as u32, &r.constraint());
    }
    lap(&mut report, "parsed, compiled, filtered and indexed");
    index.build_prefilters(&rules);
    lap(&mut report, "prefilter automata built");
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
        correlations: kept_corr,
        fields,
        index,
        config,
        report,
        regexes: regexes.len(),
    }
}
