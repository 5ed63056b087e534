//! What compiling a rule document reads ([`Ctx`]): shared by the documents compiled in
//! parallel and by the filters applied after them.

use crate::config::Config;
use crate::fields::{FieldId, FieldTable};
use crate::logsource::{LogsourceMap, Variant};
use crate::matcher::{CompileContext, RegexCache};
use std::sync::Mutex;

/// What compiling a document reads: the shared field table and regex cache, the
/// configuration, the log-source table, and the log-source variant being compiled for.
pub(super) struct Ctx<'a> {
    /// The field table, shared by the documents compiled in parallel.
    pub fields: &'a Mutex<FieldTable>,
    /// The regex cache, shared likewise.
    pub regexes: &'a RegexCache,
    /// The configuration (for `expand` placeholders).
    pub config: &'a Config,
    /// Which Windows logs hold each log source.
    pub logsources: &'a LogsourceMap,
    /// The log-source variant being compiled for: its field renames and value maps.
    pub variant: Option<&'a Variant>,
}

impl<'a> Ctx<'a> {
    /// The same context, compiling for log-source variant `v`.
    pub fn for_variant(&self, v: Option<&'a Variant>) -> Ctx<'a> {
        Ctx {
            variant: v,
            ..*self
        }
    }
}

impl CompileContext for Ctx<'_> {
    fn field(&self, name: &str) -> FieldId {
        let renamed = self.variant.and_then(|v| v.rename.get(name));
        let name = renamed.map_or(name, String::as_str);
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
