//! The interface between compiled rules and the records they test.
//!
//! Rules never see EVTX or JSON: they see an [`Event`], which hands out each field's
//! values by [`FieldId`], each both as written and lowercased once per record.

use crate::fields::FieldId;

/// One value of a field: the text as recorded (trimmed) and its lowercase form.
#[derive(Debug, Clone, Copy)]
pub struct Value<'a> {
    /// The value as the event holds it.
    pub raw: &'a str,
    /// The value lowercased (computed once per record, shared by every rule).
    pub lower: &'a str,
}

/// A record as rules see it.
pub trait Event {
    /// The values of a field (several for repeated elements such as unnamed `Data`).
    fn values(&self, field: FieldId) -> impl Iterator<Item = Value<'_>>;

    /// Every value of the record's event data and system fields, for keyword search.
    fn all_values(&self) -> impl Iterator<Item = Value<'_>>;

    /// Whether the field is present with at least one value.
    fn has(&self, field: FieldId) -> bool {
        self.values(field).next().is_some()
    }
}
