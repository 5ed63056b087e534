//! What the readers of event values (JSON events, EvtxECmd's rows) hand to the file's
//! reading, one at a time.

use crate::error::{InputError, Position};
use crate::json_tree::Json;

/// What a reader of event values (JSON events, EvtxECmd's rows) hands on, in order: an
/// event with where it is, or a problem.
pub(crate) enum Row<'v> {
    /// An event, and its line or its number in an array.
    Event(&'v Json<'v>, Position),
    /// A problem; reading goes on or ends as the error says.
    Error(InputError),
}
