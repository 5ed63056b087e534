//! The `Channel` of an EVTX file's first record, read from its first chunk alone: what
//! the channel check (`split_by_channel`) decides by, for files and for archive members
//! (whose first bytes an archive's listing reads).

use crate::evtx;

/// Files smaller than this are scanned without a channel check.
pub const MIN_BYTES: u64 = 1 << 20;

/// The `Channel` of a file's first record, if it can be read. Only the first chunk's
/// header tables and one record are parsed.
pub fn first_channel(path: &std::path::Path) -> Option<String> {
    channel_of(&evtx::ChunkFile::open(path).ok()?)
}

/// [`first_channel`] of an EVTX file's first bytes `head` (its file header and first
/// chunk, as an archive's listing reads them).
pub(crate) fn first_channel_in(head: &[u8]) -> Option<String> {
    let bytes = crate::source::Bytes::new(head.to_vec());
    channel_of(&evtx::ChunkFile::of(crate::source::Source::Memory(bytes)).ok()?)
}

/// The `Channel` of the first record of `file`'s first chunk, if it reads.
fn channel_of(file: &evtx::ChunkFile) -> Option<String> {
    let settings = std::sync::Arc::new(evtx::settings());
    let mut data = file.chunks().next()?.ok()?;
    let mut chunk = data.parse(settings).ok()?;
    let record = chunk.iter().next()?.ok()?;
    let json = record.into_json().ok()?;
    let v: serde_json::Value = serde_json::from_str(&json.data).ok()?;
    v.pointer("/Event/System/Channel")
        .and_then(|c| c.as_str())
        .map(str::to_string)
}
