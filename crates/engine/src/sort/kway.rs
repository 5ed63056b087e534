//! A spill store's items in order, one at a time: the items kept in memory (sorted),
//! merged with the runs spilled to disk by a k-way heap merge on the codec's order. Ties
//! between sources go to the earlier one (the runs in the order they were written, then
//! memory), so the order is the same whatever was spilled; only one item per run is
//! held at a time.

use crate::sort::codec::SpillCodec;
use crate::sort::run::RunReader;
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::io;
use std::sync::Arc;

/// The next item of one source, ordered so that the heap's top is the first item.
struct Head<C: SpillCodec> {
    key: C::Key,
    item: C::Item,
    source: usize,
}

impl<C: SpillCodec> Ord for Head<C> {
    fn cmp(&self, other: &Self) -> Ordering {
        C::cmp(other.key, &other.item, self.key, &self.item)
            .then_with(|| other.source.cmp(&self.source))
    }
}

impl<C: SpillCodec> PartialOrd for Head<C> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<C: SpillCodec> PartialEq for Head<C> {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other).is_eq()
    }
}

impl<C: SpillCodec> Eq for Head<C> {}

/// A store's items in order. An `Err` item (a run that cannot be opened or read back,
/// or a failure before the merge) ends the stream: what came before it is not the whole.
pub struct Merge<C: SpillCodec> {
    codec: Arc<C>,
    /// Items never spilled, sorted.
    memory: std::vec::IntoIter<C::Item>,
    /// Spilled runs; source `runs.len()` is `memory`.
    runs: Vec<RunReader<C>>,
    heap: BinaryHeap<Head<C>>,
    primed: bool,
    /// An error met before the first item, given as the first item.
    error: Option<io::Error>,
    done: bool,
}

impl<C: SpillCodec + Default> Default for Merge<C> {
    fn default() -> Self {
        Merge::new(Arc::default(), Vec::new(), Vec::new())
    }
}

impl<C: SpillCodec> Merge<C> {
    /// `memory` (sorted by `codec`) merged with `runs`.
    pub(crate) fn new(codec: Arc<C>, memory: Vec<C::Item>, runs: Vec<RunReader<C>>) -> Self {
        Merge {
            codec,
            memory: memory.into_iter(),
            runs,
            heap: BinaryHeap::new(),
            primed: false,
            error: None,
            done: false,
        }
    }

    /// A stream whose only item is `e`.
    pub(crate) fn failed(e: io::Error) -> Self
    where
        C: Default,
    {
        Merge {
            error: Some(e),
            ..Merge::default()
        }
    }

    /// Every item, in order, in one vector.
    pub fn into_vec(self) -> io::Result<Vec<C::Item>> {
        if self.runs.is_empty() && self.error.is_none() && !self.primed {
            return Ok(self.memory.collect());
        }
        self.collect()
    }

    fn pull(&mut self, source: usize) -> Option<io::Result<C::Item>> {
        match self.runs.get_mut(source) {
            Some(run) => run.next_item(),
            None => self.memory.next().map(Ok),
        }
    }

    /// Takes the next item of `source` into the heap.
    fn refill(&mut self, source: usize) -> io::Result<()> {
        if let Some(item) = self.pull(source) {
            let item = item?;
            let key = self.codec.key(&item);
            self.heap.push(Head { key, item, source });
        }
        Ok(())
    }

    fn fail(&mut self, e: io::Error) -> Option<io::Result<C::Item>> {
        self.done = true;
        self.heap.clear();
        // Closing the runs now removes their files at once.
        self.runs.clear();
        Some(Err(e))
    }
}

impl<C: SpillCodec> Iterator for Merge<C> {
    type Item = io::Result<C::Item>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        if let Some(e) = self.error.take() {
            return self.fail(e);
        }
        if self.runs.is_empty() {
            return self.memory.next().map(Ok);
        }
        if !self.primed {
            self.primed = true;
            for source in 0..=self.runs.len() {
                if let Err(e) = self.refill(source) {
                    return self.fail(e);
                }
            }
        }
        let Some(Head { item, source, .. }) = self.heap.pop() else {
            self.done = true;
            self.runs.clear();
            return None;
        };
        if let Err(e) = self.refill(source) {
            return self.fail(e);
        }
        Some(Ok(item))
    }
}
