//! Admission: which rules of a (Channel, EventID) bucket an event must be evaluated
//! against. A bucket's prefilter holds each rule's needles (strings its values must
//! contain for it to match, in clauses: one of each) in one Aho-Corasick automaton per
//! field; the event's values are scanned once, and only the rules with a needle of
//! every clause found, plus those without one, are admitted. It reads the event only
//! through [`Event`].

use super::needle_cache::NeedleCache;
use super::{Prefilter, ALL_VALUES};
use crate::event::Event;

/// A worker's prefilter buffers, reused for every event: which rules of a bucket its
/// prefilter admits for the event at hand.
#[derive(Debug, Default)]
pub struct Admission {
    /// `marks[rule] == epoch` when a needle of the rule was found in this record.
    marks: Vec<u32>,
    /// The rule's clauses met in this record (as bits; valid where `marks` is).
    met: Vec<u8>,
    epoch: u32,
    admitted: Vec<u32>,
    /// Needles found in values met before.
    needles: NeedleCache,
}

impl Admission {
    /// The rules of a bucket (`bucket`, with its `prefilter`) to evaluate for `view`,
    /// of a set of `rules` rules: those the prefilter admits, or every rule of the bucket
    /// when it has none. `Bucket::admit` (`index`) is the way in, through
    /// [`RuleSet::for_each_candidate`](crate::RuleSet::for_each_candidate).
    #[inline]
    pub(crate) fn admit(
        &mut self,
        bucket: &[u32],
        prefilter: Option<&Prefilter>,
        view: &impl Event,
        rules: usize,
    ) -> &[u32] {
        self.admitted.clear();
        let Some(p) = prefilter else {
            self.admitted.extend_from_slice(bucket);
            return &self.admitted;
        };
        self.admitted.extend_from_slice(&p.always);
        if self.marks.len() != rules {
            self.marks = vec![0; rules];
            self.met = vec![0; rules];
            self.epoch = 0;
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.marks.iter_mut().for_each(|m| *m = 0);
            self.epoch = 1;
        }
        for fs in &p.fields {
            let mut take = |pattern: usize| {
                for o in &fs.owners[pattern] {
                    let r = o.rule as usize;
                    if self.marks[r] != self.epoch {
                        self.marks[r] = self.epoch;
                        self.met[r] = 0;
                    }
                    let met = &mut self.met[r];
                    if *met & o.clause == 0 {
                        *met |= o.clause;
                        // Admitted once, when its last clause is met.
                        if *met == o.all {
                            self.admitted.push(o.rule);
                        }
                    }
                }
            };
            if fs.field != ALL_VALUES {
                let owner = fs as *const _ as usize;
                for v in view.values(fs.field) {
                    let found = self.needles.needles(owner, v.lower, |value, out| {
                        fs.automaton
                            .for_each_overlapping(value, |hit| out.push(hit.needle as u32))
                    });
                    for &pattern in found {
                        take(pattern as usize);
                    }
                }
            } else if let Some(text) = view.joined(false) {
                // One scan over the values joined end to end; a needle found across two
                // values admits nothing.
                fs.automaton.for_each_overlapping(text, |hit| {
                    if view.within_one_value(false, hit.start, hit.end) {
                        take(hit.needle);
                    }
                });
            } else {
                for v in view.all_values() {
                    fs.automaton
                        .for_each_overlapping(v.lower, |hit| take(hit.needle));
                }
            }
        }
        &self.admitted
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::load::{load, LoadOptions, RuleSource};
    use crate::tests::Ev;

    /// `n` rules on Sysmon 1 (one bucket, with a prefilter), titled `{prefix}{i}`, rule
    /// `i` with the selection lines `detection(i)` besides Channel and EventID.
    fn sysmon_rules(n: usize, prefix: &str, detection: impl Fn(usize) -> String) -> crate::RuleSet {
        let mut text = String::new();
        for i in 0..n {
            let detection = detection(i);
            text.push_str(&format!(
                "title: {prefix}{i}\nid: {prefix}-{i}\nlogsource:\n  product: windows\n  service: sysmon\n\
                 detection:\n  sel:\n    Channel: Microsoft-Windows-Sysmon/Operational\n    EventID: 1\n{detection}\n  condition: sel\nlevel: high\n---\n"
            ));
        }
        let set = load(
            &[RuleSource::Text {
                name: "t.yml".into(),
                text,
            }],
            &LoadOptions::default(),
        );
        assert!(set.report.errors.is_empty(), "{:?}", set.report.errors);
        set
    }

    /// The bucket of Sysmon 1 with a prefilter.
    fn prefiltered(set: &crate::RuleSet) -> &crate::index::Bucket {
        set.index
            .candidates("microsoft-windows-sysmon/operational", "1")
            .into_iter()
            .flatten()
            .find(|b| b.prefilter.is_some())
            .expect("a prefiltered bucket")
    }

    /// Twelve rules: rule `i` needs `tool{i}.exe` in `Image`, the last one has no needle.
    fn rules() -> crate::RuleSet {
        sysmon_rules(12, "r", |i| {
            if i < 11 {
                format!("    Image|endswith: '\\\\tool{i}.exe'")
            } else {
                "    Image|re: '.*'".to_string()
            }
        })
    }

    #[test]
    fn only_rules_whose_needle_occurs_are_admitted() {
        let set = rules();
        let bucket = prefiltered(&set);
        let image = set.fields.get("Image").expect("Image interned");
        let ev = Ev::new(&[(image, &["C:\\Temp\\TOOL3.EXE"])], false);
        let mut adm = Admission::default();
        let title = |r: &u32| set.rules[*r as usize].meta.title.to_string();
        let mut got: Vec<String> = bucket
            .admit(&mut adm, &ev, set.rules.len(), true)
            .iter()
            .map(title)
            .collect();
        got.sort();
        assert_eq!(got, ["r11", "r3"]);
        // The same value again (now from the needle memo), and with the prefilter off.
        assert_eq!(bucket.admit(&mut adm, &ev, set.rules.len(), true).len(), 2);
        assert_eq!(
            bucket.admit(&mut adm, &ev, set.rules.len(), false).len(),
            12
        );
        let other = Ev::new(&[(image, &["C:\\notepad.exe"])], false);
        let got: Vec<String> = bucket
            .admit(&mut adm, &other, set.rules.len(), true)
            .iter()
            .map(title)
            .collect();
        assert_eq!(got, ["r11"]);
    }

    /// Nine rules: rule `i` needs `\\windows\\` in `Image` and `tool{i}` or `util{i}` in
    /// `CommandLine` (two clauses), the last `Image|contains|all` of two needles.
    fn conjunctions() -> crate::RuleSet {
        sysmon_rules(9, "c", |i| {
            if i < 8 {
                format!("    Image|contains: '\\Windows\\'\n    CommandLine|contains: ['tool{i}', 'util{i}']")
            } else {
                "    Image|contains|all: ['\\Temp\\', 'evil']".to_string()
            }
        })
    }

    #[test]
    fn a_rule_is_admitted_only_when_every_clause_is_met() {
        let set = conjunctions();
        assert_eq!(super::super::requirements(&set.rules[0]).len(), 2);
        assert_eq!(super::super::requirements(&set.rules[8]).len(), 2);
        let bucket = prefiltered(&set);
        let image = set.fields.get("Image").expect("Image interned");
        let cli = set.fields.get("CommandLine").expect("CommandLine interned");
        let mut adm = Admission::default();
        let mut admitted = |fields: &[(u32, &[&str])]| {
            let ev = Ev::new(fields, false);
            let mut got: Vec<String> = bucket
                .admit(&mut adm, &ev, set.rules.len(), true)
                .iter()
                .map(|r| set.rules[*r as usize].meta.title.to_string())
                .collect();
            got.sort();
            got
        };
        let windows: &[&str] = &["C:\\Windows\\x.exe"];
        assert!(
            admitted(&[(image, windows)]).is_empty(),
            "one clause of two"
        );
        assert!(
            admitted(&[(cli, &["run tool3"])]).is_empty(),
            "the other one"
        );
        assert_eq!(admitted(&[(image, windows), (cli, &["run TOOL3"])]), ["c3"]);
        assert_eq!(
            admitted(&[(image, windows), (cli, &["util5 tool1", "x"])]),
            ["c1", "c5"]
        );
        // Both groups of an `|all` test, in one value or in two of the field's values.
        assert!(admitted(&[(image, &["C:\\Temp\\good.exe"])]).is_empty());
        assert_eq!(admitted(&[(image, &["C:\\Temp\\evil.exe"])]), ["c8"]);
        assert_eq!(admitted(&[(image, &["C:\\Temp\\a", "evil"])]), ["c8"]);
    }
}
