//! One rule file's YAML documents, each turned into what it is: a rule (one per
//! log-source variant), a correlation, a filter, a rule disabled for a reason the user can
//! act on, or an error naming the file, the document and why.

use super::ctx::Ctx;
use super::filter::Filter;
use crate::correlation::{self, Correlation};
use crate::error::{Context, ErrorKind, ErrorKind::Malformed, RuleError};
use crate::logsource::{Mapping, Variant};
use crate::matcher;
use crate::meta::{self, RuleMeta};
use crate::report::{Disabled, LoadError};
use crate::rule::{self, Detection, Rule, Selection};
use yaml_serde::{Mapping as YamlMap, Value as Yaml};

/// What one document turned out to be.
pub(super) enum Doc {
    /// A rule: one entry per log-source variant.
    Rule(Vec<Rule>),
    /// A correlation, its rule references not yet resolved.
    Correlation(Box<Correlation>),
    /// A document that could not be loaded.
    Error(LoadError),
    /// A valid rule that cannot run as configured.
    Disabled(Disabled, LoadError),
    /// A filter, to be ANDed into the rules it targets.
    Filter(Box<Filter>),
}

/// The documents of one rule file, in order; an invalid YAML document is reported on
/// its own and the documents after it are still loaded.
pub(super) fn load_file(path: &str, text: &str, ctx: &Ctx<'_>) -> Vec<Doc> {
    let mut out = Vec::new();
    let error = |document: usize, reason: String| {
        Doc::Error(LoadError {
            file: path.to_string(),
            document,
            title: None,
            reason,
        })
    };
    if scanner_yaml::nests_too_deep(text) {
        out.push(error(
            0,
            format!(
                "invalid YAML: brackets nest deeper than {} levels",
                scanner_yaml::MAX_FLOW_DEPTH
            ),
        ));
        return out;
    }
    for (i, doc) in scanner_yaml::documents(text).enumerate() {
        match doc {
            Ok(v) => out.extend(load_document(path, i + 1, v, ctx)),
            Err(e) => out.push(error(i + 1, format!("invalid YAML: {e}"))),
        }
    }
    out
}

/// Where a document sits (file, position, title), for the errors it gives.
struct Place<'a> {
    path: &'a str,
    document: usize,
    title: Option<String>,
}

impl Place<'_> {
    fn error(&self, reason: impl ToString) -> LoadError {
        LoadError {
            file: self.path.to_string(),
            document: self.document,
            title: self.title.clone(),
            reason: reason.to_string(),
        }
    }

    fn fail(&self, reason: impl ToString) -> Option<Doc> {
        Some(Doc::Error(self.error(reason)))
    }
}

/// One YAML document: `None` for an empty one.
fn load_document(path: &str, n: usize, value: Yaml, ctx: &Ctx<'_>) -> Option<Doc> {
    let doc = match value {
        Yaml::Null => return None,
        Yaml::Mapping(m) => m,
        _ => {
            let place = Place {
                path,
                document: n,
                title: None,
            };
            return place.fail("the document is not a map");
        }
    };
    let place = Place {
        path,
        document: n,
        title: doc.get("title").and_then(Yaml::as_str).map(str::to_string),
    };
    let meta = match meta::read(&doc, path) {
        Ok(m) => m,
        Err(e) => return place.fail(e),
    };
    if let Some(f) = doc.get("filter") {
        return Some(match load_filter(f, meta, ctx) {
            Ok(f) => Doc::Filter(Box::new(f)),
            Err(e) => Doc::Error(place.error(e)),
        });
    }
    if doc.contains_key("correlation") {
        return match correlation::parse(&doc, meta) {
            Ok(c) => Some(Doc::Correlation(Box::new(Correlation { document: n, ..c }))),
            Err(e) => place.fail(e),
        };
    }
    let Some(Yaml::Mapping(det)) = doc.get("detection") else {
        return place.fail("no detection map");
    };
    Some(load_rule(meta, det, &place, ctx))
}

/// A filter document's `filter` map, its detection compiled once to report errors now
/// (it is compiled again for each rule it targets).
fn load_filter(f: &Yaml, meta: RuleMeta, ctx: &Ctx<'_>) -> Result<Filter, RuleError> {
    let Yaml::Mapping(f) = f else {
        return Err(Malformed("filter is not a map").into());
    };
    let rules = match f.get("rules") {
        Some(Yaml::String(s)) if s == "any" => Vec::new(),
        Some(Yaml::String(s)) => vec![s.clone()],
        Some(Yaml::Sequence(items)) => items
            .iter()
            .filter_map(|i| i.as_str().map(str::to_string))
            .collect(),
        None | Some(Yaml::Null) => Vec::new(),
        Some(_) => return Err(Malformed("filter rules is not a list").into()),
    };
    let mut det = f.clone();
    det.remove("rules");
    if !det.contains_key("condition") {
        return Err(Malformed("filter has no condition").into());
    }
    if let Err(e) = rule::compile_detection(&det, ctx) {
        return Err(e.within(Context::Filter));
    }
    Ok(Filter {
        file: meta.path.to_string(),
        title: meta.title.to_string(),
        logsource: meta.logsource,
        rules,
        detection: det,
    })
}

/// A rule document: its detection compiled as written, then once per variant of its
/// log source unless it names its channel.
fn load_rule(meta: RuleMeta, det: &YamlMap, place: &Place<'_>, ctx: &Ctx<'_>) -> Doc {
    let detection = match rule::compile_detection(det, ctx) {
        Ok(d) => d,
        Err(e) if matches!(e.kind(), ErrorKind::NoPlaceholderValues(_)) => {
            return Doc::Disabled(Disabled::Placeholder, place.error(e))
        }
        Err(e) => return Doc::Error(place.error(e)),
    };
    let plain = Rule {
        meta,
        detection,
        variant: None,
    };
    // A rule that names its channel is taken as written; otherwise its log source
    // decides which events it applies to.
    if plain.constraint().channels.is_some() {
        return Doc::Rule(vec![plain]);
    }
    match ctx.logsources.lookup(&plain.meta.logsource) {
        Mapping::AsWritten => Doc::Rule(vec![plain]),
        Mapping::Unusable(reason) => Doc::Disabled(Disabled::Logsource, place.error(reason)),
        Mapping::Variants(variants) => match rule_variants(&plain, det, variants, ctx) {
            Ok(rules) => Doc::Rule(rules),
            Err(e) => Doc::Error(place.error(e)),
        },
    }
}

/// One rule per log-source variant, each restricted to its variant's events.
fn rule_variants(
    plain: &Rule,
    det: &YamlMap,
    variants: &[Variant],
    ctx: &Ctx<'_>,
) -> Result<Vec<Rule>, RuleError> {
    let mut out = Vec::with_capacity(variants.len());
    for (vi, v) in variants.iter().enumerate() {
        let detection = if v.rename.is_empty() && v.values.is_empty() && v.prefixes.is_empty() {
            plain.detection.clone()
        } else {
            rule::compile_detection(det, &ctx.for_variant(Some(v)))?
        };
        out.push(Rule {
            meta: plain.meta.clone(),
            detection: restrict(detection, v, ctx)?,
            variant: Some(vi as u16),
        });
    }
    Ok(out)
}

/// Restricts a detection to a log-source variant's channels, EventIDs and providers.
fn restrict(mut d: Detection, v: &Variant, ctx: &Ctx<'_>) -> Result<Detection, RuleError> {
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
    d.selections.push(Selection::All(tests));
    d.names.push("logsource".into());
    d.condition = crate::condition::Cond::And(vec![crate::condition::Cond::Sel(i), d.condition]);
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::Config;
    use crate::fields::FieldTable;
    use crate::logsource::LogsourceMap;
    use crate::matcher::RegexCache;
    use std::sync::Mutex;

    /// Loads `text` as file `f.yml` with the built-in log-source table.
    fn docs(text: &str) -> Vec<Doc> {
        docs_with(text, &RegexCache::default())
    }

    /// [`docs`] with the regex cache given.
    fn docs_with(text: &str, regexes: &RegexCache) -> Vec<Doc> {
        let fields = Mutex::new(FieldTable::new());
        let config = Config::default();
        let logsources = crate::builtin::CONFIG
            .iter()
            .find(|(n, _)| *n == "logsource.yaml")
            .map(|(_, t)| LogsourceMap::parse(t).unwrap())
            .unwrap();
        let ctx = Ctx {
            fields: &fields,
            regexes,
            config: &config,
            logsources: &logsources,
            variant: None,
        };
        load_file("f.yml", text, &ctx)
    }

    fn error(d: &Doc) -> String {
        match d {
            Doc::Error(e) | Doc::Disabled(_, e) => e.to_string(),
            _ => panic!("not an error"),
        }
    }

    const RULE: &str =
        "title: T\ndetection:\n  s:\n    EventID: 1\n    Channel: Security\n  condition: s\n";

    #[test]
    fn brackets_nested_too_deep_reject_the_whole_file() {
        let d = docs(&format!("a: {}{}", "[".repeat(65), "]".repeat(65)));
        assert_eq!(d.len(), 1);
        assert_eq!(
            error(&d[0]),
            "f.yml: invalid YAML: brackets nest deeper than 64 levels"
        );
    }

    #[test]
    fn each_document_becomes_what_it_is() {
        let text = format!(
            "{RULE}---\n---\n- a list\n---\n{}---\ntitle: C\ncorrelation:\n  type: event_count\n  rules: [x]\n  timespan: 5m\n  condition: {{gte: 2}}\n",
            "title: NoDet\n"
        );
        let d = docs(&text);
        assert_eq!(d.len(), 4, "the empty document gives nothing");
        assert!(matches!(&d[0], Doc::Rule(r) if r.len() == 1 && r[0].variant.is_none()));
        assert_eq!(
            error(&d[1]),
            "f.yml (document 3): the document is not a map"
        );
        assert_eq!(error(&d[2]), "f.yml (document 4) [NoDet]: no detection map");
        assert!(matches!(&d[3], Doc::Correlation(c) if c.rule_refs == ["x"]));
    }

    #[test]
    fn a_rule_whose_regex_passes_the_budget_is_rejected_by_name() {
        let rule = |t: &str, re: &str| {
            format!("title: {t}\ndetection:\n  s:\n    Channel: Security\n    CommandLine|re: '{re}'\n  condition: s\n")
        };
        let regexes = RegexCache::with_budget(64 << 10);
        let d = docs_with(&rule("Small", "ab+c"), &regexes);
        assert!(matches!(&d[0], Doc::Rule(_)));
        let d = docs_with(&rule("Big", r"x\w{1,64}x"), &regexes);
        let e = error(&d[0]);
        assert!(
            e.starts_with("f.yml [Big]: selection 's': field 'CommandLine|re': regex 'x\\w{1,64}x' compiles to more than the 63 KiB left"),
            "{e}"
        );
        // The first rule's regex stays; a small one still fits.
        assert_eq!(regexes.len(), 1);
        assert!(matches!(
            &docs_with(&rule("Other", "de+f"), &regexes)[0],
            Doc::Rule(_)
        ));
    }

    #[test]
    fn invalid_yaml_is_reported_for_its_document_alone() {
        let d = docs(&format!("{RULE}---\na: [\n---\n{RULE}"));
        assert_eq!(d.len(), 3);
        assert!(error(&d[1]).starts_with("f.yml (document 2): invalid YAML: "));
        assert!(matches!(d[2], Doc::Rule(..)));
    }

    #[test]
    fn a_mapped_log_source_gives_one_rule_per_variant_and_an_unknown_one_disables() {
        let d = docs("title: P\nlogsource:\n  category: process_creation\n  product: windows\ndetection:\n  s:\n    Image|endswith: x.exe\n  condition: s\n");
        let Doc::Rule(r) = &d[0] else {
            panic!("a rule")
        };
        assert!(r.len() > 1, "Sysmon 1 and Security 4688");
        for (i, v) in r.iter().enumerate() {
            assert_eq!(v.variant, Some(i as u16));
            assert_eq!(
                v.detection.names.last().map(String::as_str),
                Some("logsource")
            );
        }
        let d = docs("title: U\nlogsource:\n  category: no_such_thing\ndetection:\n  s:\n    a: 1\n  condition: s\n");
        assert!(matches!(&d[0], Doc::Disabled(Disabled::Logsource, _)));
    }

    #[test]
    fn a_placeholder_without_values_disables_the_rule() {
        let d = docs("title: X\ndetection:\n  s:\n    Channel: Security\n    a|expand: '%nothing%'\n  condition: s\n");
        assert!(matches!(&d[0], Doc::Disabled(Disabled::Placeholder, _)));
        assert!(error(&d[0]).contains("placeholder %nothing% has no values"));
    }

    #[test]
    fn filter_documents_are_checked_when_read() {
        let d = docs("title: F\nfilter:\n  rules: [a]\n  s:\n    User: x\n  condition: not s\n---\ntitle: G\nfilter:\n  s:\n    User: x\n---\ntitle: H\nfilter:\n  s:\n    User|bogus: x\n  condition: s\n");
        assert!(matches!(&d[0], Doc::Filter(f) if f.rules == ["a"] && f.title == "F"));
        assert_eq!(
            error(&d[1]),
            "f.yml (document 2) [G]: filter has no condition"
        );
        assert_eq!(
            error(&d[2]),
            "f.yml (document 3) [H]: filter: selection 's': field 'User|bogus': unknown modifier 'bogus'"
        );
    }
}
