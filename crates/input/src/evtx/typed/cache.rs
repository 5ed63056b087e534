//! The template cache: the templates a worker has parsed, kept across chunks and files.
//! In a chunk a definition is found by its offset; in a new chunk a template parsed
//! before is used again when the definition has its GUID and size, its bytes (but for
//! where names are) and its names, so that each template is parsed about once per worker.

use crate::evtx::template::{self, Names, Template};
use scanner_rules::FxHashMap;

/// Names and templates kept across chunks before the cache starts afresh.
const MAX_NAMES: usize = 1 << 16;
const MAX_TEMPLATES: usize = 1 << 12;
/// Templates kept per GUID and size.
const KNOWN_PER_KEY: usize = 8;

/// The templates a worker has parsed, kept across chunks and files: a definition is
/// parsed only when none parsed before has its GUID and size, the same bytes but for
/// where names are, and the same names.
#[derive(Debug, Default)]
pub(super) struct Templates {
    pub(super) names: Names,
    list: Vec<Option<Template>>,
    /// The current chunk's templates by definition offset.
    by_offset: FxHashMap<u32, u32>,
    /// Templates parsed before, by the GUID and size their definitions start with.
    known: FxHashMap<[u8; 20], Vec<u32>>,
}

impl Templates {
    /// Forgets the current chunk's offsets, and everything once it holds too much;
    /// true when it started afresh (what refers to its templates by index must go too).
    pub(super) fn begin_chunk(&mut self) -> bool {
        self.by_offset.clear();
        let full = self.list.len() > MAX_TEMPLATES || self.names.len() > MAX_NAMES;
        if full {
            *self = Templates::default();
        }
        full
    }

    /// The index of the template defined at `def` in the chunk, parsed once.
    pub(super) fn lookup(&mut self, data: &[u8], def: u32) -> Option<u32> {
        let i = match self.by_offset.get(&def) {
            Some(&i) => i,
            None => {
                let i = self
                    .known_at(data, def)
                    .unwrap_or_else(|| self.parse(data, def));
                self.by_offset.insert(def, i);
                i
            }
        };
        self.list[i as usize].is_some().then_some(i)
    }

    /// A template parsed before that is defined at `def` in this chunk too.
    fn known_at(&self, data: &[u8], def: u32) -> Option<u32> {
        let at = def as usize + 4;
        let key: [u8; 20] = data.get(at..at + 20)?.try_into().ok()?;
        let known = self.known.get(&key)?;
        known.iter().copied().find(|&i| {
            self.list[i as usize]
                .as_ref()
                .is_some_and(|t| t.is_defined_at(data, def))
        })
    }

    fn parse(&mut self, data: &[u8], def: u32) -> u32 {
        let t = template::parse(data, def, &mut self.names);
        let i = self.list.len() as u32;
        if let Some(t) = &t {
            let known = self.known.entry(t.key()).or_default();
            if known.len() >= KNOWN_PER_KEY {
                known.remove(0);
            }
            known.push(i);
        }
        self.list.push(t);
        i
    }

    #[inline]
    pub(super) fn get(&self, i: u32) -> &Template {
        self.list[i as usize].as_ref().expect("looked up")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evtx::test_log::{event, first_chunk, log, named};
    use scanner_evtx_writer::Element;

    /// The chunk offset of the template definition the record at `offset` uses.
    fn definition(data: &[u8], offset: usize) -> u32 {
        assert_eq!(
            data[offset..offset + 5],
            [0x0f, 1, 1, 0, 0x0c],
            "a template instance"
        );
        u32::from_le_bytes(data[offset + 10..offset + 14].try_into().unwrap())
    }

    /// Where `text` is, as UTF-16, in the definition at `def`.
    fn in_definition(data: &[u8], def: u32, text: &str) -> usize {
        let def = def as usize;
        let size = u32::from_le_bytes(data[def + 20..def + 24].try_into().unwrap()) as usize;
        let needle: Vec<u8> = text.encode_utf16().flat_map(u16::to_le_bytes).collect();
        def + data[def..def + 24 + size]
            .windows(needle.len())
            .position(|w| w == needle)
            .expect("found")
    }

    /// Whether template `i` has an element named `name`.
    fn has_element(cache: &Templates, i: u32, name: &str) -> bool {
        let t = cache.get(i);
        t.elems
            .iter()
            .any(|e| &*cache.names.get(e.name).text == name)
    }

    fn chunk() -> (Vec<u8>, u32) {
        let data = Element::new("EventData").child(named("User", "alice"));
        let (bytes, records) = first_chunk(&log(&[event(4624, data)]));
        let def = definition(&bytes, records[0].offset);
        (bytes, def)
    }

    #[test]
    fn a_definition_is_parsed_once_per_chunk_offset() {
        let (data, def) = chunk();
        let mut cache = Templates::default();
        let i = cache.lookup(&data, def).expect("a template");
        assert_eq!(cache.lookup(&data, def), Some(i));
        assert_eq!(cache.list.len(), 1);
        assert!(has_element(&cache, i, "Channel"));
    }

    #[test]
    fn a_later_chunk_gets_the_same_template_for_the_same_guid_size_and_bytes() {
        let (data, def) = chunk();
        let mut cache = Templates::default();
        let i = cache.lookup(&data, def).expect("a template");
        cache.begin_chunk();
        assert!(cache.by_offset.is_empty(), "offsets are per chunk");
        // The next chunk holds the same definition: found by its GUID, size and bytes.
        assert_eq!(cache.lookup(&data, def), Some(i));
        assert_eq!(cache.list.len(), 1, "not parsed again");
        assert_eq!(cache.by_offset[&def], i);
    }

    #[test]
    fn a_definition_with_other_bytes_under_the_same_guid_is_parsed_again() {
        let (data, def) = chunk();
        let mut cache = Templates::default();
        let i = cache.lookup(&data, def).expect("a template");
        let mut other = data.clone();
        let at = in_definition(&other, def, "Channel");
        other[at] = b'D';
        assert_eq!(
            other[def as usize + 4..def as usize + 24],
            data[def as usize + 4..def as usize + 24]
        );
        cache.begin_chunk();
        let j = cache.lookup(&other, def).expect("parsed again");
        assert_ne!(i, j);
        assert!(has_element(&cache, j, "Dhannel") && !has_element(&cache, j, "Channel"));
        assert_eq!(
            cache.known[&cache.get(i).key()],
            [i, j],
            "kept under one key"
        );
    }

    #[test]
    fn the_cache_starts_afresh_once_it_holds_too_many_templates() {
        let (data, def) = chunk();
        let mut cache = Templates::default();
        cache.lookup(&data, def).expect("a template");
        cache.list.resize_with(MAX_TEMPLATES + 1, || None);
        cache.begin_chunk();
        assert!(cache.list.is_empty() && cache.known.is_empty());
        assert!(cache.lookup(&data, def).is_some());
    }
}
