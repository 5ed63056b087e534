//! Rendering a matched record into a row's text: Details and ExtraFieldInfo from the
//! rule's (or the default) template with the rules' data mappings applied, and the
//! AllFieldInfo field list; channel and provider names shared across rows.

pub(crate) mod all_fields;
pub(crate) mod data_mapping;
pub(crate) mod details;
pub(crate) mod field_list;
pub(crate) mod geo;
pub(crate) mod names;
