//! The template cache: the templates a worker has parsed, kept across chunks and files.
//! In a chunk a definition is found by its offset; in a new chunk a template parsed
//! before is used again when the definition has its GUID and size, its bytes (but for
//! where names are) and its names, so that each template is parsed about once per worker.

use super::plan::Plans;
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
    /// The leaves of the shapes of their records seen so far.
    pub(super) plans: Plans,
}

impl Templates {
    /// Forgets the current chunk's offsets, and everything once it holds too much.
    pub(super) fn begin_chunk(&mut self) {
        self.by_offset.clear();
        if self.list.len() > MAX_TEMPLATES || self.names.len() > MAX_NAMES {
            *self = Templates::default();
        }
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
