//! A record's AllFieldInfo rendered on its own, outside a scan: for the commands that
//! list records without rules (`search`).

use crate::items::ItemsBuf;
use crate::render::data_mapping::RecordMap;
use crate::render::field_list::FieldList;
use scanner_input::RecordView;

/// Renders records' event-data fields as the timeline's AllFieldInfo does (`name: value`
/// items, sorted by the recorded names, values as recorded, no data mapping). Keeps its
/// buffers from one record to the next.
#[derive(Debug, Default)]
pub struct AllFields {
    list: FieldList,
}

impl AllFields {
    /// Appends `view`'s fields to `out` as items (none when it has none), each field's
    /// name written by `name` (which appends the name to show to the text it is given).
    pub fn render(
        &mut self,
        view: &RecordView,
        name: impl Fn(&str, &mut String),
        out: &mut ItemsBuf,
    ) {
        self.list.fill(view, &RecordMap::default());
        self.list.write_all_named(out, name);
    }
}
