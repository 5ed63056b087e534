//! The record walk shared by the commands that read every record without rules
//! (metrics, logon summary, base64 extraction, search): files in parallel (an EVTX file's
//! chunks too), each record filled into a reusable [`RecordView`] and handed to a
//! per-worker [`Tally`]; the tallies of one file are merged into one, and the caller gets
//! them in the order of the files.

use crate::{read_file, Flattener, InputError, InputFile, ReadSettings, RecordView, RecordWorker};
use scanner_rules::FieldTable;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// What a command counts or collects from records: one per worker (a file, or a group of
/// an EVTX file's chunks), merged per file when the workers are done.
pub trait Tally: Default + Send {
    /// What counting needs besides the record (options, the caller's field ids); shared
    /// by every worker. `()` when nothing.
    type Context: Sync;
    /// Takes one record. Its fields are those of the [`FieldTable`] given to [`walk`]
    /// (plus the built-in ones: `Channel`, `EventID`).
    fn add(&mut self, record: &RecordView, cx: &Self::Context);
    /// Takes one record with where it came from (its record id, whether carved); by
    /// default, [`Tally::add`].
    fn add_at(&mut self, record: &RecordView, at: &crate::RecordAt, cx: &Self::Context) {
        let _ = at;
        self.add(record, cx);
    }
    /// Adds what another worker took from the same file.
    fn merge(&mut self, other: Self);
    /// Called once the file's records are all in (its workers merged), before the next
    /// files are done: a tally that kept records can reduce them to its result here,
    /// so that memory holds the records of the files being read only.
    fn file_done(&mut self, cx: &Self::Context) {
        let _ = cx;
    }
}

/// How to walk: the fields the tallies read and whether to recover records from EVTX
/// slack space (`-x`). Each file is read by the format its first bytes show
/// ([`crate::sniff`]).
#[derive(Clone, Copy)]
pub struct WalkSettings<'a> {
    /// The paths the tallies read, interned by the caller; the view links only these.
    pub fields: &'a FieldTable,
    /// Recover records from slack space (EVTX only); a recovered record that cannot be
    /// rendered is skipped silently, as the scan does.
    pub recover: bool,
    /// Read an EVTX chunk only when its CRC32s match (`-V`).
    pub validate_checksums: bool,
}

/// What a walk found.
pub struct Walked<T> {
    per_file: Vec<T>,
    errors: Vec<InputError>,
    records: u64,
}

impl<T> Walked<T> {
    /// One tally per input file, in the order the files were given.
    pub fn per_file(&self) -> &[T] {
        &self.per_file
    }

    /// The problems met (file, position, reason), sorted by their text; the walk went on
    /// past each.
    pub fn errors(&self) -> &[InputError] {
        &self.errors
    }

    /// Records read (recovered ones included).
    pub fn records(&self) -> u64 {
        self.records
    }

    /// The tallies, the errors and the record count.
    pub fn into_parts(self) -> (Vec<T>, Vec<InputError>, u64) {
        (self.per_file, self.errors, self.records)
    }
}

/// A worker's buffers and tally; the tally goes to its file's slot when the worker is
/// dropped (at the end of its chunks), so no record waits on a lock.
struct Worker<'s, T: Tally> {
    flat: Flattener,
    view: RecordView,
    tally: T,
    slot: &'s Mutex<T>,
}

impl<T: Tally> RecordWorker for Worker<'_, T> {
    fn buffers(&mut self) -> (&mut Flattener, &mut RecordView) {
        (&mut self.flat, &mut self.view)
    }
}

impl<T: Tally> Drop for Worker<'_, T> {
    fn drop(&mut self) {
        let mine = std::mem::take(&mut self.tally);
        self.slot
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .merge(mine);
    }
}

/// Reads every record of `files` in parallel (largest files first, on the current rayon
/// pool) and hands each to a [`Tally`] with `cx`. `done(bytes, records)` is called as
/// each file finishes (for a progress bar). A file that cannot be read, a record that
/// cannot be rendered, or a panic while reading a file is an [`InputError`]; the walk goes
/// on with the rest.
///
/// ```no_run
/// use scanner_input::{discover, walk, InputKind, RecordView, Tally, WalkSettings};
/// use scanner_rules::{FieldTable, EVENT_ID};
/// #[derive(Default)]
/// struct Count4624(u64);
/// impl Tally for Count4624 {
///     type Context = ();
///     fn add(&mut self, r: &RecordView, _: &()) {
///         self.0 += u64::from(r.first(EVENT_ID) == Some("4624"));
///     }
///     fn merge(&mut self, o: Count4624) {
///         self.0 += o.0;
///     }
/// }
/// let (files, _) = discover(&["logs".into()], &[], InputKind::Evtx);
/// let table = FieldTable::new();
/// let how = WalkSettings { fields: &table, recover: false, validate_checksums: false };
/// let walked = walk::<Count4624>(&files, how, &(), &|_, _| {});
/// for (f, n) in files.iter().zip(walked.per_file()) {
///     println!("{}: {}", f.path.display(), n.0);
/// }
/// ```
pub fn walk<T: Tally>(
    files: &[InputFile],
    how: WalkSettings<'_>,
    cx: &T::Context,
    done: &(dyn Fn(u64, u64) + Sync),
) -> Walked<T> {
    use rayon::prelude::*;
    let slots: Vec<Mutex<T>> = files.iter().map(|_| Mutex::new(T::default())).collect();
    let errors = Mutex::new(Vec::new());
    let records = AtomicU64::new(0);
    let report = |e: InputError| errors.lock().unwrap_or_else(|x| x.into_inner()).push(e);
    let mut order: Vec<usize> = (0..files.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse(files[i].size));
    order.par_iter().for_each(|&i| {
        let f = &files[i];
        let slot = &slots[i];
        let new_worker = || Worker {
            flat: Flattener::default(),
            view: RecordView::default(),
            tally: T::default(),
            slot,
        };
        let read = ReadSettings {
            fields: how.fields,
            recover: how.recover,
            validate_checksums: how.validate_checksums,
            structure: false,
        };
        let n = read_file(
            f,
            read,
            new_worker,
            |w, at| w.tally.add_at(&w.view, &at, cx),
            report,
        );
        slot.lock().unwrap_or_else(|e| e.into_inner()).file_done(cx);
        let n = n.records + n.recovered;
        records.fetch_add(n, Ordering::Relaxed);
        done(f.size, n);
    });
    let mut errors = errors.into_inner().unwrap_or_else(|e| e.into_inner());
    errors.sort_by_cached_key(ToString::to_string);
    Walked {
        per_file: slots
            .into_iter()
            .map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
            .collect(),
        errors,
        records: records.into_inner(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use scanner_rules::EVENT_ID;

    /// Event IDs seen, in the order read (one worker per JSON file).
    #[derive(Default)]
    struct Ids(Vec<String>);

    impl Tally for Ids {
        type Context = ();
        fn add(&mut self, r: &RecordView, _: &()) {
            self.0.push(r.first(EVENT_ID).unwrap_or("-").to_string());
        }
        fn merge(&mut self, o: Ids) {
            self.0.extend(o.0);
        }
    }

    #[test]
    fn json_files_give_one_tally_each_in_file_order_and_errors_name_the_file() {
        let dir = std::env::temp_dir().join(format!("scanner-walk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let event = |id: u32| {
            format!(r#"{{"Event":{{"System":{{"Channel":"Security","EventID":{id}}}}}}}"#)
        };
        let a = dir.join("a.json");
        let b = dir.join("b.json");
        let bad = dir.join("c.json");
        std::fs::write(&a, format!("{}\n{}\n", event(1), event(2))).unwrap();
        std::fs::write(&b, format!("{}\n", event(3))).unwrap();
        std::fs::write(&bad, "{not json\n").unwrap();
        let files: Vec<InputFile> = [&b, &a, &bad]
            .iter()
            .map(|p| InputFile::new(p.to_path_buf(), std::fs::metadata(p).unwrap().len()))
            .collect();
        let table = FieldTable::new();
        let how = WalkSettings {
            fields: &table,
            recover: false,
            validate_checksums: false,
        };
        let finished = AtomicU64::new(0);
        let walked = walk::<Ids>(&files, how, &(), &|_, _| {
            finished.fetch_add(1, Ordering::Relaxed);
        });
        std::fs::remove_dir_all(&dir).unwrap();
        let ids: Vec<&[String]> = walked.per_file().iter().map(|t| &t.0[..]).collect();
        assert_eq!(
            ids,
            [&["3".to_string()][..], &["1".into(), "2".into()], &[]]
        );
        assert_eq!(walked.records(), 3);
        assert_eq!(finished.into_inner(), 3);
        assert_eq!(walked.errors().len(), 1);
        assert!(walked.errors()[0].to_string().contains("c.json"));
    }
}
