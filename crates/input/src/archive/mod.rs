//! Archives read in place: a zip (in a folder searched, given with `-f`, or nested in
//! another archive, told by its first bytes, never by its name) is listed when the
//! input is found, and each member that is input becomes an [`crate::InputFile`] whose
//! [`Member`] says where it is: the archive's path, and the chain of members that leads
//! to it. Reading a member copies it, within the bounds below, into memory when it
//! expands to at most 64 MiB (`temp::IN_MEMORY`), else into a private temporary file
//! that no name leads to (created in the temporary folder with a name no one can know
//! ahead, readable by its owner only, and unlinked at once on Unix), so the EVTX reader
//! gets the random access it needs and nothing is ever extracted beside the evidence.
//! Each of the scan's workers inflates the members it reads, in parallel. Member names are never paths on this machine: they are only
//! shown (Velociraptor's URL-encoded components decoded), so `..`, absolute paths,
//! drive letters or NUL in them touch nothing.
//!
//! Bounds, against archives made to hurt: a member expanding past [`MAX_MEMBER`], an
//! archive past [`MAX_TOTAL`], a member past [`RATIO_FLOOR`] that expands more than
//! [`MAX_RATIO`] times its compressed size, a member that holds more than its header
//! declares, an archive of more than [`MAX_MEMBERS`] entries and nesting deeper than
//! [`MAX_DEPTH`] are errors naming the archive and the member; the rest is read.

mod names;
mod positioned;
mod sevenz;
mod stash;
mod tarred;
mod temp;
mod zipped;

pub(crate) use temp::Held;

use crate::error::{ErrorKind, InputError, Position};
use crate::not_read::NotRead;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) use names::shown_name;

/// Archives inside archives are opened to this depth (an archive given is depth 1).
pub const MAX_DEPTH: usize = 4;
/// The most bytes one member may expand to (16 GiB).
pub const MAX_MEMBER: u64 = 16 << 30;
/// The most bytes the members of one archive may expand to, together (64 GiB).
pub const MAX_TOTAL: u64 = 64 << 30;
/// The most a member past [`RATIO_FLOOR`] may expand, as a multiple of its compressed
/// size (deflate itself cannot pass about 1,032).
pub const MAX_RATIO: u64 = 2000;
/// Members expanding to less than this (64 MiB) are not held to [`MAX_RATIO`].
pub const RATIO_FLOOR: u64 = 64 << 20;
/// The most entries one archive may list.
pub const MAX_MEMBERS: usize = 1_000_000;

/// Why an archive or a member is not read: the text an [`ErrorKind::Archive`] shows.
#[derive(Debug, Clone)]
pub(crate) struct Refused(pub(crate) String);

impl Refused {
    /// The refusal saying `why`.
    pub(crate) fn of(why: String) -> Refused {
        Refused(why)
    }
}

impl From<String> for Refused {
    fn from(why: String) -> Refused {
        Refused(why)
    }
}

impl From<&str> for Refused {
    fn from(why: &str) -> Refused {
        Refused(why.to_string())
    }
}

/// `Err` of a refusal saying `why`.
pub(crate) fn refuse<T>(why: String) -> Result<T, Refused> {
    Err(Refused(why))
}

/// The password `--archive-password` gives for encrypted members. Never shown: its
/// `Debug` says only that there is one.
#[derive(Clone)]
pub struct Password(Arc<[u8]>);

impl Password {
    /// The password `text`.
    pub fn new(text: &str) -> Password {
        Password(Arc::from(text.as_bytes()))
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(…)")
    }
}

/// One step into an archive: a member, by its place in the archive's list and by its
/// name as shown.
#[derive(Debug, Clone)]
pub(crate) struct Step {
    /// The kind of archive the member is taken from.
    pub(crate) kind: Kind,
    pub(crate) index: usize,
    pub(crate) name: String,
}

/// Where an input file is inside an archive: the members that lead to it from the
/// archive on disk (one, or more for archives nested in archives), and the name it is
/// shown by: the archive's path and the members' names, `/` between them
/// (`Collection-WS01.zip/uploads/auto/C:/Windows/System32/winevt/Logs/Security.evtx`).
#[derive(Debug, Clone)]
pub struct Member {
    steps: Box<[Step]>,
    shown: PathBuf,
    password: Option<Password>,
    /// An EVTX member's channel, read from its first record when it was listed (only
    /// for members the channel check looks at).
    channel: Option<String>,
}

impl Member {
    /// The name the member is shown by (archive path, then each member's name).
    pub fn shown(&self) -> &Path {
        &self.shown
    }

    /// The names of the members leading to it, outermost first (decoded).
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.steps.iter().map(|s| s.name.as_str())
    }

    /// The channel of its first record, read when it was listed: for EVTX members of at
    /// least the size the channel check looks at, whose first record reads.
    pub fn channel(&self) -> Option<&str> {
        self.channel.as_deref()
    }

    /// Each member's place in its archive's list, outermost first: what tells two
    /// members apart whatever their names.
    pub(crate) fn indices(&self) -> Box<[usize]> {
        self.steps.iter().map(|s| s.index).collect()
    }
}

/// The kind of archive a file's first bytes show, if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Zip,
    /// A POSIX (ustar) or GNU tar.
    Tar,
    /// A tar in gzip (`.tar.gz`, `.tgz`).
    TarGz,
    /// A tar in bzip2 (`.tar.bz2`, `.tbz2`).
    TarBz2,
    /// A 7z archive.
    SevenZ,
}

impl Kind {
    /// Whether its members are reached only by reading through those before them.
    fn is_stream(self) -> bool {
        self != Kind::Zip
    }
}

/// Bytes of a tar looked at to tell it: its first header.
const TAR_HEADER: usize = 512;

/// Whether `block` is a tar header: `ustar` at offset 257 (POSIX and GNU).
fn is_tar(block: &[u8]) -> bool {
    block.get(257..262) == Some(b"ustar")
}

/// The first [`TAR_HEADER`] bytes `r` gives (fewer at its end or on an error).
fn first_block(r: impl std::io::Read) -> Vec<u8> {
    use std::io::Read;
    let mut block = Vec::with_capacity(TAR_HEADER);
    let _ = r.take(TAR_HEADER as u64).read_to_end(&mut block);
    block
}

/// The archive a file starting with `head` is, if any. A gzip stream is looked into
/// for a tar header; bzip2 cannot be from its first bytes alone (a block is needed
/// whole), so a file named `.tar.bz2`, `.tbz2` or `.tbz` with bzip2's signature is
/// taken as a tar in bzip2.
pub(crate) fn kind_of(head: &[u8], name: &Path) -> Option<Kind> {
    let zip = [&b"PK\x03\x04"[..], b"PK\x05\x06", b"PK\x07\x08"];
    if zip.iter().any(|m| head.starts_with(m)) {
        return Some(Kind::Zip);
    }
    if is_tar(head) {
        return Some(Kind::Tar);
    }
    if head.starts_with(b"7z\xBC\xAF\x27\x1C") {
        return Some(Kind::SevenZ);
    }
    if head.starts_with(b"\x1f\x8b") {
        let block = first_block(flate2::bufread::MultiGzDecoder::new(head));
        return is_tar(&block).then_some(Kind::TarGz);
    }
    let bz_name = name.to_str().is_some_and(|n| {
        let n = n.to_ascii_lowercase();
        [".tar.bz2", ".tbz2", ".tbz"].iter().any(|x| n.ends_with(x))
    });
    (head.starts_with(b"BZh") && bz_name).then_some(Kind::TarBz2)
}

/// The archive `f` (the file `path`, opened) is, by its first bytes; None for anything
/// else. A bzip2 file is looked into for a tar header.
pub(crate) fn probe(mut f: File, path: &Path) -> Option<Kind> {
    let head = first_block(&mut f);
    if head.starts_with(b"BZh") {
        use std::io::Seek;
        f.rewind().ok()?;
        let r = bzip2::bufread::MultiBzDecoder::new(std::io::BufReader::new(f));
        return is_tar(&first_block(r)).then_some(Kind::TarBz2);
    }
    if head.starts_with(b"\x1f\x8b") {
        use std::io::Seek;
        f.rewind().ok()?;
        let r = flate2::bufread::MultiGzDecoder::new(std::io::BufReader::new(f));
        return is_tar(&first_block(r)).then_some(Kind::TarGz);
    }
    kind_of(&head, path)
}

/// Whether a member declaring `size` bytes, `packed` compressed, is within the bounds,
/// with `total` declared by the archive's members so far; else why not.
pub(crate) fn bounded(size: u64, packed: u64, total: u64) -> Result<(), Refused> {
    if size > MAX_MEMBER {
        return refuse(format!(
            "declares {size} bytes, more than the {} GiB a member may expand to; not read",
            MAX_MEMBER >> 30
        ));
    }
    if total > MAX_TOTAL {
        return refuse(format!(
            "the archive's members expand past {} GiB together here; not read",
            MAX_TOTAL >> 30
        ));
    }
    ratio(size, packed)
}

/// Whether `size` bytes expanded from `packed` is within [`MAX_RATIO`] (checked from
/// [`RATIO_FLOOR`] on); else why not.
pub(crate) fn ratio(size: u64, packed: u64) -> Result<(), Refused> {
    if size >= RATIO_FLOOR && size / packed.max(1) > MAX_RATIO {
        return refuse(format!(
            "expands {} times from {packed} bytes, past the {MAX_RATIO} allowed (a zip bomb?); not read",
            size / packed.max(1)
        ));
    }
    Ok(())
}

/// Bytes of a member of `size` bytes looked at when it is listed: enough to tell what
/// it is and, for an EVTX member as large as the channel check looks at, its file
/// header and first chunk, from which its channel is read.
pub(crate) fn head_len(size: u64) -> u64 {
    const HEAD: u64 = 4096;
    if size >= crate::evtx::MIN_BYTES {
        HEAD + crate::evtx::CHUNK_SIZE
    } else {
        HEAD
    }
}

/// Whether a member's name says it is an archive (which a missing password keeps
/// from being told by its bytes).
pub(crate) fn is_archive_name(p: &Path) -> bool {
    let n = p.to_string_lossy().to_ascii_lowercase();
    [
        ".zip", ".tar", ".tgz", ".tar.gz", ".tar.bz2", ".tbz2", ".tbz",
    ]
    .iter()
    .any(|x| n.ends_with(x))
}

/// Decides what the member at `here` (named `path`, `size` bytes, starting with
/// `head`) is: an archive (copied with `copy` and listed in turn, within
/// [`MAX_DEPTH`]), input (by extension or EVTX's signature), or not read.
pub(crate) fn classify(
    head: &[u8],
    here: &Place<'_>,
    path: &Path,
    size: u64,
    out: &mut Listed,
    copy: impl FnOnce() -> Result<Held, Refused>,
) {
    if let Some(kind) = kind_of(head, path) {
        if here.depth() > MAX_DEPTH {
            out.errors.push(here.error(format!(
                "an archive nested deeper than {MAX_DEPTH} archives; not opened"
            )));
            return;
        }
        let copied = copy().and_then(|c| c.file().map(|f| (c, f)));
        match copied {
            // The copy is held while its clone is listed.
            Ok((_copy, file)) => list_file(file, kind, here, out),
            Err(why) => out.errors.push(here.error(why)),
        }
    } else if crate::not_read::taken_by_extension(path)
        || matches!(
            crate::format_of(head),
            Some(crate::Format::Evtx | crate::Format::EvtxECmdCsv)
        )
    {
        let mut member = here.member();
        if size >= crate::evtx::MIN_BYTES && head.starts_with(b"ElfFile\0") {
            member.channel = crate::evtx::first_channel_in(head);
        }
        out.members.push((member, size));
    } else {
        out.not_read.add(path);
    }
}

/// Lists the archive `file` (of kind `kind`) at `at` into `out`.
fn list_file(file: File, kind: Kind, at: &Place<'_>, out: &mut Listed) {
    match kind {
        Kind::Zip => zipped::list(file, at, out),
        Kind::Tar | Kind::TarGz | Kind::TarBz2 => tarred::list(file, kind, at, out),
        Kind::SevenZ => sevenz::list(file, at, out),
    }
}

/// What listing an archive found: its members to read (each with its shown name and
/// expanded size), the errors, and the members not read.
#[derive(Default)]
pub(crate) struct Listed {
    pub(crate) members: Vec<(Member, u64)>,
    pub(crate) errors: Vec<InputError>,
    pub(crate) not_read: NotRead,
}

/// Lists the archive `path` (of kind `kind`): its members that are input, through
/// archives nested in it.
pub(crate) fn list(path: &Path, kind: Kind, password: Option<&Password>) -> Listed {
    let mut out = Listed::default();
    let file = match File::open(path) {
        Ok(f) => f,
        Err(e) => {
            let kind = ErrorKind::CannotOpen(e);
            out.errors.push(InputError::new(path, Position::None, kind));
            return out;
        }
    };
    let at = Place {
        archive: path,
        steps: Vec::new(),
        shown: path.as_os_str().to_owned(),
        password,
    };
    list_file(file, kind, &at, &mut out);
    // Members of archives that are streams are copied in one pass when first read.
    for (m, _) in &out.members {
        if let Some((last, outer)) = m.steps.split_last() {
            if last.kind.is_stream() {
                stash::want(key(path, outer), last.index);
            }
        }
    }
    out
}

/// Notes that the member `m` of the archive `path` will not be read (the channel check
/// skipped it), so that an archive read in one pass does not copy it.
pub(crate) fn skip(path: &Path, m: &Member) {
    if let Some((last, outer)) = m.steps.split_last() {
        if last.kind.is_stream() {
            stash::unwant(&key(path, outer), last.index);
        }
    }
}

/// The key of the archive the members `outer` lead into, in the archive `path`.
fn key(path: &Path, outer: &[Step]) -> stash::Key {
    (path.to_path_buf(), outer.iter().map(|s| s.index).collect())
}

/// Where a listing is: the archive on disk, the members that led here, the name shown.
pub(crate) struct Place<'a> {
    pub(crate) archive: &'a Path,
    pub(crate) steps: Vec<Step>,
    pub(crate) shown: std::ffi::OsString,
    pub(crate) password: Option<&'a Password>,
}

impl Place<'_> {
    /// The place of member `index`, named `name`, of this archive.
    pub(crate) fn member_at(&self, kind: Kind, index: usize, name: &str) -> Place<'_> {
        let mut steps = self.steps.clone();
        steps.push(Step {
            kind,
            index,
            name: name.to_string(),
        });
        let mut shown = self.shown.clone();
        shown.push("/");
        shown.push(name);
        Place {
            archive: self.archive,
            steps,
            shown,
            password: self.password,
        }
    }

    /// The member this place is.
    pub(crate) fn member(&self) -> Member {
        Member {
            steps: self.steps.clone().into_boxed_slice(),
            shown: PathBuf::from(&self.shown),
            password: self.password.cloned(),
            channel: None,
        }
    }

    /// An error about this place (the archive, or the member it is).
    pub(crate) fn error(&self, why: impl Into<Refused>) -> InputError {
        InputError::new(
            PathBuf::from(&self.shown),
            Position::None,
            ErrorKind::Archive(why.into().0),
        )
    }

    /// How deep in archives this place is (the archive given is 1).
    pub(crate) fn depth(&self) -> usize {
        self.steps.len() + 1
    }
}

/// Opens the member `m` of the archive `path` into a copy: in memory when it is small
/// enough ([`temp::IN_MEMORY`]), else a private temporary file, rewound; or an error
/// naming the archive and the member. Archives it is nested in are copied into files.
/// A member of an archive that is a stream comes from that archive's one pass
/// ([`stash`]).
pub(crate) fn open(path: &Path, m: &Member) -> Result<Held, InputError> {
    let err = |why: Refused| InputError::new(m.shown(), Position::None, ErrorKind::Archive(why.0));
    let (last, outer) = m
        .steps
        .split_last()
        .ok_or_else(|| err(Refused("no member named".into())))?;
    let password = m.password.as_ref();
    if last.kind == Kind::Zip && outer.is_empty() {
        // The zip on disk, opened by the thread once for all its members.
        return zipped::extract_at(path, last.index, password, true).map_err(err);
    }
    let file = File::open(path)
        .map_err(|e| InputError::new(m.shown(), Position::None, ErrorKind::CannotOpen(e)))?;
    if last.kind.is_stream() {
        let kind = last.kind;
        let pass = move |wanted: &[usize],
                         got: &mut dyn FnMut(usize, Result<Held, Refused>),
                         read: &mut dyn FnMut(u64) -> bool| {
            match container(path, file, outer, password) {
                Ok((file, _outer)) if kind == Kind::SevenZ => {
                    sevenz::extract_each(file, password, wanted, got, read)
                }
                Ok((file, _outer)) => tarred::extract_each(file, kind, wanted, got, read),
                Err(why) => wanted.iter().for_each(|&i| got(i, Err(why.clone()))),
            }
        };
        if let Some(copy) = stash::take(&key(path, outer), last.index, Box::new(pass)) {
            return copy.map_err(err);
        }
        let file = File::open(path)
            .map_err(|e| InputError::new(m.shown(), Position::None, ErrorKind::CannotOpen(e)))?;
        let (file, _outer) = container(path, file, outer, password).map_err(err)?;
        return extract(path, file, last, outer.is_empty(), password, true).map_err(err);
    }
    let (file, _outer) = container(path, file, outer, password).map_err(err)?;
    extract(path, file, last, outer.is_empty(), password, true).map_err(err)
}

/// The file of the archive the members `steps` lead into, from `file` (the archive
/// `path` on disk), and the copy it is read from (none for the archive on disk).
fn container(
    path: &Path,
    mut file: File,
    steps: &[Step],
    password: Option<&Password>,
) -> Result<(File, Option<Held>), Refused> {
    let mut held = None;
    for (i, step) in steps.iter().enumerate() {
        let copy = extract(path, file, step, i == 0, password, false)?;
        file = copy.file()?;
        held = Some(copy);
    }
    Ok((file, held))
}

/// Copies the member `step` of the archive `file` (`first`: the archive on disk at
/// `path`), in memory when `read` allows it ([`Held::new`]).
fn extract(
    path: &Path,
    file: File,
    step: &Step,
    first: bool,
    password: Option<&Password>,
    read: bool,
) -> Result<Held, Refused> {
    match step.kind {
        // The archive on disk: its central directory kept for the next member.
        Kind::Zip if first => zipped::extract_at(path, step.index, password, read),
        Kind::Zip => zipped::extract(file, step.index, password, read),
        Kind::SevenZ => sevenz::extract(file, step.index, password, read),
        kind => tarred::extract(file, kind, step.index, read),
    }
}
