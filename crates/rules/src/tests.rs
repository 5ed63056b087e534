//! What the crate's unit tests share: a small [`Event`], fields by id with values as
//! given, each value lowercased once as the engine's record view does.

use crate::event::{Event, Value};
use crate::fields::FieldId;

/// An event of named fields (ids 10, 11, …) with values as given; `joined` keeps
/// the lowercase values laid end to end, as the engine's record view does.
pub(crate) struct Ev {
    fields: Vec<(FieldId, Vec<(String, String)>)>,
    joined: Option<(String, Vec<(usize, usize)>)>,
}

impl Ev {
    pub(crate) fn new(fields: &[(FieldId, &[&str])], joined: bool) -> Ev {
        let fields: Vec<(FieldId, Vec<(String, String)>)> = fields
            .iter()
            .map(|(f, vs)| {
                (
                    *f,
                    vs.iter()
                        .map(|v| (v.to_string(), crate::event::lowercase(v)))
                        .collect(),
                )
            })
            .collect();
        let joined = joined.then(|| {
            let (mut text, mut spans) = (String::new(), Vec::new());
            for (_, vs) in &fields {
                for (_, lower) in vs {
                    spans.push((text.len(), text.len() + lower.len()));
                    text.push_str(lower);
                }
            }
            (text, spans)
        });
        Ev { fields, joined }
    }
}

impl Event for Ev {
    fn values(&self, field: FieldId) -> impl Iterator<Item = Value<'_>> {
        self.fields
            .iter()
            .filter(move |(f, _)| *f == field)
            .flat_map(|(_, vs)| vs.iter())
            .map(|(raw, lower)| Value { raw, lower })
    }
    fn all_values(&self) -> impl Iterator<Item = Value<'_>> {
        self.fields
            .iter()
            .flat_map(|(_, vs)| vs.iter())
            .map(|(raw, lower)| Value { raw, lower })
    }
    fn joined(&self, cased: bool) -> Option<&str> {
        self.joined
            .as_ref()
            .filter(|_| !cased)
            .map(|j| j.0.as_str())
    }
    fn within_one_value(&self, _cased: bool, start: usize, end: usize) -> bool {
        self.joined
            .as_ref()
            .is_some_and(|j| j.1.iter().any(|&(s, e)| s <= start && end <= e))
    }
}
