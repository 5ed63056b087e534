//! Finding input files: `-d` folders searched recursively, `-f` files, by extension
//! (case-insensitive). Folder symlinks are followed, each folder searched once (by
//! device and inode), and a link that leads back into its own ancestry is reported as
//! a loop instead of followed.

use crate::archive::{self, Member, Password};
use crate::error::{ErrorKind, InputError, Position};
pub use crate::not_read::NotRead;
use crate::not_read::EXTENSIONS;
use std::collections::VecDeque;
use std::fs::Metadata;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{sync_channel, Receiver, TryRecvError};
use std::sync::Arc;

/// An input file.
#[derive(Debug, Clone)]
pub struct InputFile {
    /// The path as traversed (relative when the argument was relative).
    pub path: PathBuf,
    /// Size in bytes (a member's: expanded).
    pub size: u64,
    /// Where in the archive at `path` it is, for a member of one.
    pub member: Option<Arc<Member>>,
}

impl InputFile {
    /// The file `path`, of `size` bytes.
    pub fn new(path: PathBuf, size: u64) -> InputFile {
        InputFile {
            path,
            size,
            member: None,
        }
    }

    /// The name it is shown by: its path, or for a member the archive's path and the
    /// members' names (`Collection-WS01.zip/uploads/auto/C:/…/Security.evtx`).
    pub fn name(&self) -> &Path {
        match &self.member {
            Some(m) => m.shown(),
            None => &self.path,
        }
    }
}

/// Which files are input. A folder search takes `.evtx`, `.json`, `.jsonl`, `.xml` and
/// `.gz` files whichever the kind (each is read by what its first bytes show, see
/// [`crate::sniff`]); the kind says only whether `--target-file-ext` adds extensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Hayabusa's default: EVTX, plus the extensions of `--target-file-ext`.
    Evtx,
    /// Hayabusa's `-J`: JSON event files (the other formats are taken too).
    Json,
}

/// The extensions a folder search takes: the kind's, plus (for EVTX) those of
/// `--target-file-ext`.
#[derive(Clone, Copy)]
struct Accept<'a> {
    kind: InputKind,
    extra: &'a [String],
}

impl Accept<'_> {
    fn accepts(self, p: &Path) -> bool {
        let Some(ext) = p.extension().and_then(|e| e.to_str()) else {
            return false;
        };
        EXTENSIONS.iter().any(|x| ext.eq_ignore_ascii_case(x))
            || (self.kind == InputKind::Evtx
                && self.extra.iter().any(|x| {
                    let x = x.strip_prefix('.').unwrap_or(x);
                    ext.eq_ignore_ascii_case(x)
                }))
    }
}

/// What a search for input found: the files to read, the problems met, and the files
/// met and not read.
#[derive(Debug, Default)]
pub struct Discovered {
    /// The input files, sorted by path, each once.
    pub files: Vec<InputFile>,
    /// Problems: a path that does not open, a folder given as a file, a symlink loop, ….
    pub errors: Vec<InputError>,
    /// Files under the folders searched that are not input, by extension.
    pub not_read: NotRead,
}

/// Lists the input files under `dirs` plus `files`, sorted by path; problems (a path
/// that does not open, a folder given as a file, a symlink loop, …) are returned beside
/// them. Folder symlinks are followed; a folder is searched once however many links
/// lead to it (the first path found, in name order, is the one listed), a link back to
/// a folder that holds it is reported and not followed, and a file reached by several
/// paths is listed once, by the first of them in path order.
pub fn discover(
    dirs: &[PathBuf],
    files: &[PathBuf],
    kind: InputKind,
) -> (Vec<InputFile>, Vec<InputError>) {
    let d = discover_all(dirs, files, kind, &[], None);
    (d.files, d.errors)
}

/// [`discover`], taking in folders also the files whose extension (case-insensitive,
/// with or without its leading dot) is one of `extra`, as Hayabusa's
/// `--target-file-ext` does (they are read as EVTX; `extra` is ignored for JSON input),
/// with the files met and not read; archives (by their first bytes) are listed, their
/// members that are input listed as files, encrypted ones opened with `password`.
pub fn discover_all(
    dirs: &[PathBuf],
    files: &[PathBuf],
    kind: InputKind,
    extra: &[String],
    password: Option<&Password>,
) -> Discovered {
    let accept = Accept { kind, extra };
    let mut found = Found {
        password: password.cloned(),
        ..Found::default()
    };
    for f in files {
        match std::fs::metadata(f) {
            Ok(m) if m.is_file() => found.file(f.clone(), Some(m)),
            Ok(m) if m.is_dir() => found.error(whole(f, ErrorKind::FolderNotFile)),
            Ok(_) => found.error(whole(f, ErrorKind::NotRegularFile)),
            Err(e) => found.error(whole(f, ErrorKind::CannotOpen(e))),
        }
    }
    for d in dirs {
        match std::fs::metadata(d) {
            Ok(m) if m.is_dir() => found.search(d, &m, accept),
            Ok(_) => found.error(whole(d, ErrorKind::NotFolder)),
            Err(e) => found.error(whole(d, ErrorKind::CannotOpenFolder(e))),
        }
    }
    found.finish()
}

/// A file's or folder's identity: device and inode where there are such, else the
/// canonical path (or the path itself when it has none).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Identity {
    #[cfg(unix)]
    Inode(u64, u64),
    #[cfg(not(unix))]
    Path(PathBuf),
}

fn identity(_path: &Path, _m: &std::fs::Metadata) -> Identity {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        Identity::Inode(_m.dev(), _m.ino())
    }
    #[cfg(not(unix))]
    {
        Identity::Path(std::fs::canonicalize(_path).unwrap_or_else(|_| _path.to_path_buf()))
    }
}

/// A folder being searched: its identity and the folder that led to it.
struct Visit {
    id: Identity,
    parent: Option<usize>,
}

/// What tells two files found apart: the file's identity, and for an archive's
/// member its places in the archives that lead to it.
type Key = (Identity, Box<[usize]>);

/// Steps in a batch, whose files' first bytes are read on the rayon pool as one task.
const BATCH: usize = 256;
/// Batches met and not yet taken, at most: past it, the walk waits for the oldest.
const AHEAD: usize = 64;

/// What the walk met, in order. A file is told apart by its first bytes (an archive,
/// EvtxECmd's CSV), read on the rayon pool a [`Batch`] at a time while the walk goes
/// on; the steps are taken in the walk's order once their batch is read.
enum Step {
    Error(InputError),
    /// A file that is input by its name: an archive's members, or the file. Its
    /// metadata, or `None` for a regular file (not a link), whose metadata is read
    /// with its first bytes, off the walk's thread.
    Input(PathBuf, Option<Metadata>),
    /// A file that is not input by its name: an archive's members, EvtxECmd's CSV, or
    /// not read.
    Other(PathBuf, Option<Metadata>),
}

/// What a file's first bytes show, and its metadata when it was to be read.
struct Probed {
    shows: Shows,
    metadata: Option<io::Result<Metadata>>,
}

/// What a file's first bytes show.
enum Shows {
    Archive(archive::Kind),
    /// EvtxECmd's CSV, told by its header whatever its name.
    EvtxECmdCsv,
    Other,
}

/// What the first bytes of `step`'s file show, with its metadata when the walk did not
/// read it: that of the file opened, or, when it does not open, that of its path.
fn probe(step: &Step) -> Probed {
    let (path, input, stat) = match step {
        Step::Error(_) => {
            return Probed {
                shows: Shows::Other,
                metadata: None,
            }
        }
        Step::Input(path, m) => (path, true, m.is_none()),
        Step::Other(path, m) => (path, false, m.is_none()),
    };
    let opened = std::fs::File::open(path);
    let metadata = stat.then(|| match &opened {
        Ok(f) => f.metadata(),
        Err(_) => std::fs::metadata(path),
    });
    let shows = match opened.ok().and_then(|f| archive::probe(f, path)) {
        Some(kind) => Shows::Archive(kind),
        None if !input && crate::format::sniff_head(path) == Some(crate::Format::EvtxECmdCsv) => {
            Shows::EvtxECmdCsv
        }
        None => Shows::Other,
    };
    Probed { shows, metadata }
}

/// Steps met, each with what its file shows once read on the rayon pool (a panic
/// reading them, passed on).
type Batch = Receiver<std::thread::Result<Vec<(Step, Probed)>>>;

/// Starts reading the files of `steps`: on the rayon pool, or here when this is one of
/// its threads (which could otherwise wait on work only it is free to do).
fn start_batch(steps: Vec<Step>) -> Batch {
    // (Steps hold errors, whose sources are not unwind-safe; after a panic they are
    // dropped, and the panic is passed on to the walk.)
    let read = move || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let probed = |s: Step| {
                let p = probe(&s);
                (s, p)
            };
            steps.into_iter().map(probed).collect()
        }))
    };
    let (sender, batch) = sync_channel(1);
    if rayon::current_thread_index().is_some() {
        let _ = sender.send(read());
    } else {
        rayon::spawn(move || {
            let _ = sender.send(read());
        });
    }
    batch
}

/// What the search found so far.
#[derive(Default)]
struct Found {
    /// What the walk met since the last batch.
    steps: Vec<Step>,
    /// Batches being read, oldest first.
    batches: VecDeque<Batch>,
    /// Each file, with what tells it apart: its identity, and for a member its places
    /// in the archives that lead to it.
    files: Vec<(InputFile, Key)>,
    password: Option<Password>,
    errors: Vec<InputError>,
    not_read: NotRead,
    /// Folders searched or waiting to be, across every `-d`.
    folders: std::collections::HashSet<Identity>,
    /// The folders entered, each with the one that led to it (to tell a loop).
    visits: Vec<Visit>,
}

impl Found {
    /// Meets the file `path` (metadata `m`, when read), input by its name.
    fn file(&mut self, path: PathBuf, m: Option<Metadata>) {
        self.step(Step::Input(path, m));
    }

    /// Meets the file `path` (metadata `m`, when read), not input by its name.
    fn other(&mut self, path: PathBuf, m: Option<Metadata>) {
        self.step(Step::Other(path, m));
    }

    /// Meets a problem.
    fn error(&mut self, e: InputError) {
        self.step(Step::Error(e));
    }

    /// Meets `step`: a [`BATCH`] of steps is sent to be read, and the batches read
    /// already are taken.
    fn step(&mut self, step: Step) {
        self.steps.push(step);
        if self.steps.len() == BATCH {
            self.send_batch();
            self.take_batches(false);
        }
    }

    /// Sends the steps met since the last batch to be read.
    fn send_batch(&mut self) {
        let steps = std::mem::take(&mut self.steps);
        self.batches.push_back(start_batch(steps));
    }

    /// Takes the batches read, oldest first, up to the first still being read, which
    /// it waits for when `all` are to be taken or [`AHEAD`] are waiting.
    fn take_batches(&mut self, all: bool) {
        while let Some(front) = self.batches.front() {
            let probed = if all || self.batches.len() > AHEAD {
                front.recv().ok()
            } else {
                match front.try_recv() {
                    Ok(probed) => Some(probed),
                    Err(TryRecvError::Empty) => return,
                    Err(TryRecvError::Disconnected) => None,
                }
            };
            self.batches.pop_front();
            match probed {
                Some(Ok(steps)) => {
                    for (step, probed) in steps {
                        self.take(step, probed);
                    }
                }
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                None => panic!("a batch of files to probe was lost"),
            }
        }
    }

    /// Takes `step`, whose file's first bytes (and metadata, when the walk did not
    /// read it) are `probed`. A file input by its name without metadata is an error, as
    /// in the walk; one not input by its name is then passed over.
    fn take(&mut self, step: Step, probed: Probed) {
        let (path, m, input) = match step {
            Step::Error(e) => return self.errors.push(e),
            Step::Input(path, m) => (path, m, true),
            Step::Other(path, m) => (path, m, false),
        };
        let m = match (m, probed.metadata) {
            (Some(m), _) | (None, Some(Ok(m))) => m,
            (None, Some(Err(e))) if input => {
                return self.errors.push(whole(&path, ErrorKind::CannotOpen(e)));
            }
            (None, _) => return,
        };
        // (Read off the walk's thread, it is the file's now: regular, as its entry said,
        // unless replaced since.)
        if !m.is_file() {
            return;
        }
        match (probed.shows, input) {
            (Shows::Archive(kind), _) => {
                let id = identity(&path, &m);
                self.archive(path, id, kind);
            }
            (_, true) | (Shows::EvtxECmdCsv, false) => {
                let id = identity(&path, &m);
                self.files
                    .push((InputFile::new(path, m.len()), (id, Box::default())));
            }
            (Shows::Other, false) => self.not_read.add(&path),
        }
    }

    /// The members of the archive `path` that are input.
    fn archive(&mut self, path: PathBuf, id: Identity, kind: archive::Kind) {
        let listed = archive::list(&path, kind, self.password.as_ref());
        self.errors.extend(listed.errors);
        self.not_read.merge(&listed.not_read);
        for (member, size) in listed.members {
            let key = (id.clone(), member.indices());
            let file = InputFile {
                path: path.clone(),
                size,
                member: Some(Arc::new(member)),
            };
            self.files.push((file, key));
        }
    }

    /// Whether the folder `id` is `at` or one of the folders that led to it.
    fn is_ancestor(&self, id: &Identity, mut at: Option<usize>) -> bool {
        while let Some(i) = at {
            if self.visits[i].id == *id {
                return true;
            }
            at = self.visits[i].parent;
        }
        false
    }

    /// Searches the folder `root` (metadata `m`) depth first, in name order.
    fn search(&mut self, root: &Path, m: &std::fs::Metadata, kind: Accept<'_>) {
        let id = identity(root, m);
        if !self.folders.insert(id.clone()) {
            return;
        }
        let mut stack = vec![(root.to_path_buf(), id, None)];
        while let Some((dir, id, parent)) = stack.pop() {
            self.visits.push(Visit { id, parent });
            let me = Some(self.visits.len() - 1);
            let rd = match std::fs::read_dir(&dir) {
                Ok(rd) => rd,
                Err(e) => {
                    self.error(whole(&dir, ErrorKind::CannotReadFolder(e)));
                    continue;
                }
            };
            let mut entries = Vec::new();
            for entry in rd {
                match entry {
                    Ok(e) => entries.push(e),
                    Err(e) => self.error(whole(&dir, ErrorKind::Io(e))),
                }
            }
            entries.sort_by_key(|e| e.file_name());
            let mut folders = Vec::new();
            for entry in entries {
                let p = entry.path();
                let Ok(ft) = entry.file_type() else { continue };
                // A regular file's metadata is read with its first bytes.
                if ft.is_file() {
                    match kind.accepts(&p) {
                        true => self.file(p, None),
                        false => self.other(p, None),
                    }
                    continue;
                }
                if !ft.is_dir() && !ft.is_symlink() && !kind.accepts(&p) {
                    continue;
                }
                // Follows a symlink: what it leads to decides.
                let m = match std::fs::metadata(&p) {
                    Ok(m) => m,
                    Err(e) if ft.is_dir() || kind.accepts(&p) => {
                        self.error(whole(&p, ErrorKind::CannotOpen(e)));
                        continue;
                    }
                    // A dangling link not named as input: nothing to search.
                    Err(_) => continue,
                };
                if m.is_dir() {
                    let id = identity(&p, &m);
                    if self.is_ancestor(&id, me) {
                        self.error(whole(&p, ErrorKind::FolderLoop));
                    } else if self.folders.insert(id.clone()) {
                        folders.push((p, id, me));
                    }
                } else if m.is_file() && kind.accepts(&p) {
                    self.file(p, Some(m));
                } else if m.is_file() {
                    // A link to a file that is not input by its name.
                    self.other(p, Some(m));
                }
            }
            // Popped in name order.
            stack.extend(folders.into_iter().rev());
        }
    }

    /// Takes the steps left, then gives the files sorted by path, each once, and the
    /// errors.
    fn finish(mut self) -> Discovered {
        self.send_batch();
        self.take_batches(true);
        // By the name shown: an archive's members in the order the same files would
        // have unpacked.
        self.files.sort_by(|a, b| a.0.name().cmp(b.0.name()));
        let mut seen = std::collections::HashSet::new();
        let files = self
            .files
            .into_iter()
            .filter(|(_, id)| seen.insert(id.clone()))
            .map(|(f, _)| f)
            .collect();
        Discovered {
            files,
            errors: self.errors,
            not_read: self.not_read,
        }
    }
}

/// An error about `path` as a whole.
fn whole(path: &Path, kind: ErrorKind) -> InputError {
    InputError::new(path, Position::None, kind)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A folder of this process under the temp folder, removed when dropped.
    struct Scratch(PathBuf);

    impl Scratch {
        fn new(name: &str) -> Scratch {
            let d = std::env::temp_dir()
                .join(format!("scanner-discover-{}-{name}", std::process::id()));
            let _ = std::fs::remove_dir_all(&d);
            std::fs::create_dir_all(&d).unwrap();
            Scratch(d)
        }

        /// Writes `len` bytes to the file `rel`, making its folders.
        fn file(&self, rel: &str, len: usize) -> PathBuf {
            let p = self.0.join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, vec![b'x'; len]).unwrap();
            p
        }
    }

    impl Drop for Scratch {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// More files than a few batches of probes hold, over several folders: each is
    /// taken in the walk's order whatever batch its first bytes were read in, with its
    /// size, and an archive named as a log, EvtxECmd's CSV under another name and links
    /// that lead nowhere are told apart as before.
    #[test]
    fn files_probed_in_batches_are_taken_in_the_walks_order() {
        use std::io::Write;
        let s = Scratch::new("batches");
        let logs = 3 * BATCH + 7;
        for i in 0..logs {
            s.file(&format!("d{}/f{i:04}.evtx", i % 5), i + 1);
        }
        for i in 0..40 {
            s.file(&format!("d{}/n{i}.txt", i % 3), 1);
        }
        let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
        let stored = zip::write::SimpleFileOptions::default()
            .compression_method(zip::CompressionMethod::Stored);
        w.start_file("inner/Security.evtx", stored).unwrap();
        w.write_all(b"ElfFile\0").unwrap();
        let zip = w.finish().unwrap().into_inner();
        std::fs::write(s.0.join("d2/packed.evtx"), zip).unwrap();
        let csv = format!("{}\n", crate::evtxecmd::CSV_HEADER);
        std::fs::write(s.0.join("d3/parsed.csv"), csv).unwrap();
        #[cfg(unix)]
        for d in ["d4", "d1"] {
            std::os::unix::fs::symlink("nowhere", s.0.join(d).join("gone.evtx")).unwrap();
        }
        let d = discover_all(std::slice::from_ref(&s.0), &[], InputKind::Evtx, &[], None);
        assert_eq!(d.files.len(), logs + 2);
        assert_eq!(d.not_read.by_extension(), [("txt", 40)]);
        let mut member = 0;
        let mut csvs = 0;
        for f in &d.files {
            let name = f.path.file_name().unwrap().to_string_lossy();
            if let Some(i) = name.strip_prefix('f').and_then(|n| n.strip_suffix(".evtx")) {
                assert_eq!(f.size, i.parse::<u64>().unwrap() + 1, "{name}");
            } else if name == "packed.evtx" {
                assert!(f.member.is_some());
                member += 1;
            } else {
                assert_eq!(name, "parsed.csv");
                csvs += 1;
            }
        }
        assert_eq!((member, csvs), (1, 1));
        assert!(d.files.windows(2).all(|w| w[0].name() < w[1].name()));
        #[cfg(unix)]
        {
            // In the walk's order: folder d1 before d4.
            let gone: Vec<&Path> = d.errors.iter().map(|e| e.file()).collect();
            assert_eq!(gone, [s.0.join("d1/gone.evtx"), s.0.join("d4/gone.evtx")]);
            assert!(d
                .errors
                .iter()
                .all(|e| matches!(e.kind(), ErrorKind::CannotOpen(_))));
        }
        #[cfg(not(unix))]
        assert!(d.errors.is_empty(), "{:?}", d.errors);
    }

    #[test]
    fn files_not_taken_are_counted_by_extension() {
        let s = Scratch::new("not-read");
        s.file("a.evtx", 1);
        s.file("notes.txt", 1);
        s.file("sub/more.TXT", 1);
        s.file("sub/run.log", 1);
        s.file("README", 1);
        let d = discover_all(std::slice::from_ref(&s.0), &[], InputKind::Evtx, &[], None);
        assert_eq!(d.files.len(), 1);
        assert_eq!(d.not_read.total(), 4);
        assert_eq!(d.not_read.by_extension(), [("txt", 2), ("", 1), ("log", 1)]);
        // An extension --target-file-ext adds is read, so not counted.
        let extra = ["log".to_string()];
        let d = discover_all(
            std::slice::from_ref(&s.0),
            &[],
            InputKind::Evtx,
            &extra,
            None,
        );
        assert_eq!(d.not_read.by_extension(), [("txt", 2), ("", 1)]);
    }

    /// What `discover` finds, relative to the scratch folder, in order; no errors.
    #[test]
    fn target_file_ext_adds_extensions_for_evtx_only() {
        let s = Scratch::new("ext");
        s.file("a.evtx", 1);
        s.file("b.evtx_data", 1);
        s.file("sub/c.EVTX_DATA", 1);
        s.file("d.log", 1);
        s.file("e.json", 1);
        let dirs = [s.0.clone()];
        let names = |extra: &[String], kind| {
            let d = discover_all(&dirs, &[], kind, extra, None);
            let (got, errors) = (d.files, d.errors);
            assert!(errors.is_empty(), "{errors:?}");
            // Component by component, `/` between them on every platform.
            let rel = |f: &InputFile| {
                let rel = f.path.strip_prefix(&s.0).unwrap().iter();
                rel.map(|c| c.to_string_lossy())
                    .collect::<Vec<_>>()
                    .join("/")
            };
            got.iter().map(rel).collect::<Vec<_>>()
        };
        assert_eq!(names(&[], InputKind::Evtx), ["a.evtx", "e.json"]);
        let extra = ["evtx_data".to_string(), ".log".to_string()];
        assert_eq!(
            names(&extra, InputKind::Evtx),
            [
                "a.evtx",
                "b.evtx_data",
                "d.log",
                "e.json",
                "sub/c.EVTX_DATA"
            ]
        );
        assert_eq!(names(&extra, InputKind::Json), ["a.evtx", "e.json"]);
    }

    fn found(s: &Scratch, dirs: &[PathBuf], files: &[PathBuf], kind: InputKind) -> Vec<String> {
        let (got, errors) = discover(dirs, files, kind);
        assert!(errors.is_empty(), "{errors:?}");
        got.iter()
            .map(|f| {
                let rel = f.path.strip_prefix(&s.0).unwrap();
                rel.to_string_lossy().replace('\\', "/")
            })
            .collect()
    }

    #[test]
    fn folders_are_searched_recursively_by_extension_ignoring_case_every_format_side_by_side() {
        let s = Scratch::new("recursive");
        s.file("a.evtx", 3);
        s.file("B.EVTX", 5);
        s.file("sub/deeper/c.Evtx", 7);
        s.file("folder.evtx/d.evtx", 1);
        s.file("notes.txt", 1);
        s.file("evtx", 1);
        s.file("e.evtx.bak", 1);
        s.file("x.json", 1);
        s.file("sub/y.JSONL", 1);
        s.file("z.Xml", 1);
        let dirs = [s.0.clone()];
        let all = [
            "B.EVTX",
            "a.evtx",
            "folder.evtx/d.evtx",
            "sub/deeper/c.Evtx",
            "sub/y.JSONL",
            "x.json",
            "z.Xml",
        ];
        assert_eq!(
            found(&s, &dirs, &[], InputKind::Evtx),
            all,
            "sorted by path; a folder named .evtx is searched, not listed"
        );
        let (files, _) = discover(&dirs, &[], InputKind::Evtx);
        let sizes: Vec<u64> = files.iter().map(|f| f.size).collect();
        assert_eq!(sizes, [5, 3, 1, 7, 1, 1, 1]);
        assert_eq!(found(&s, &dirs, &[], InputKind::Json), all);
    }

    #[test]
    fn files_given_are_taken_whatever_their_extension_and_listed_once() {
        let s = Scratch::new("files");
        let log = s.file("a.evtx", 2);
        let other = s.file("renamed.log", 4);
        let files = [other.clone(), log.clone()];
        let got = found(&s, std::slice::from_ref(&s.0), &files, InputKind::Evtx);
        assert_eq!(got, ["a.evtx", "renamed.log"]);
    }

    #[test]
    fn a_missing_path_or_a_folder_given_as_a_file_is_an_error_naming_it() {
        let s = Scratch::new("errors");
        let log = s.file("a.evtx", 1);
        let missing = s.0.join("missing.evtx");
        let missing_dir = s.0.join("no-such-folder");
        let files = [s.0.clone(), missing.clone()];
        let dirs = [missing_dir.clone(), log.clone()];
        let (got, errors) = discover(&dirs, &files, InputKind::Evtx);
        assert!(got.is_empty());
        let described: Vec<(&Path, Position, &str)> = errors
            .iter()
            .map(|e| {
                let kind = match e.kind() {
                    ErrorKind::FolderNotFile => "folder as file",
                    ErrorKind::CannotOpen(_) => "cannot open",
                    ErrorKind::CannotOpenFolder(_) => "cannot open folder",
                    ErrorKind::NotFolder => "file as folder",
                    _ => "other",
                };
                (e.file(), e.position(), kind)
            })
            .collect();
        let whole = Position::None;
        assert_eq!(
            described,
            [
                (s.0.as_path(), whole, "folder as file"),
                (&missing, whole, "cannot open"),
                (&missing_dir, whole, "cannot open folder"),
                (&log, whole, "file as folder"),
            ]
        );
    }

    #[cfg(unix)]
    #[test]
    fn symlinked_folders_are_followed_once_and_a_loop_is_reported_not_followed() {
        use std::os::unix::fs::symlink;
        let s = Scratch::new("symlinks");
        let outside = Scratch::new("symlinks-outside");
        outside.file("far.evtx", 1);
        s.file("near.evtx", 1);
        s.file("sub/deep.evtx", 1);
        symlink(&outside.0, s.0.join("link")).unwrap();
        // A second link to the same folder, and a link to a file already listed: each
        // file is listed once, by its first path in path order.
        symlink(&outside.0, s.0.join("link2")).unwrap();
        symlink(s.0.join("near.evtx"), s.0.join("sub/again.evtx")).unwrap();
        // Links back to the folder itself and to its parent would loop if followed.
        symlink(&s.0, s.0.join("loop")).unwrap();
        symlink(s.0.join("sub"), s.0.join("sub/up")).unwrap();
        let (got, errors) = discover(std::slice::from_ref(&s.0), &[], InputKind::Evtx);
        let rel = |p: &Path| p.strip_prefix(&s.0).unwrap().to_string_lossy().into_owned();
        let names: Vec<String> = got.iter().map(|f| rel(&f.path)).collect();
        assert_eq!(names, ["link/far.evtx", "near.evtx", "sub/deep.evtx"]);
        let loops: Vec<(String, String)> = errors
            .iter()
            .map(|e| (rel(e.file()), e.message().to_string()))
            .collect();
        let msg = "symlink loop: this link leads back to a folder that holds it; not followed";
        assert_eq!(
            loops,
            [
                ("loop".to_string(), msg.to_string()),
                ("sub/up".to_string(), msg.to_string())
            ]
        );
        // Given itself as -d, the linked folder is searched; given twice, listed once.
        let linked = [s.0.join("link"), s.0.join("link2")];
        assert_eq!(found(&s, &linked, &[], InputKind::Evtx), ["link/far.evtx"]);
    }
}
