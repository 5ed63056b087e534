//! `--heap-profile FILE`: a pprof heap profile of the run's peak memory, and a flamegraph
//! SVG of it at `FILE.svg`. Available when built with the cargo feature `jemalloc-prof`
//! (jemalloc and its sampling heap profiler instead of mimalloc, Linux); otherwise the
//! flag reports that.
//!
//! How the peak is caught: jemalloc samples live allocations (one sample per 64 KiB
//! allocated on average, `lg_prof_sample:16`, with the stack that made it). The global
//! allocator ([`PeakDumping`]) counts the bytes live; each time they pass the last dump's
//! figure by 2% (and 256 KiB), the allocating thread has jemalloc dump its profile
//! (`prof.dump`) into a private folder. The last dump is therefore the heap within 2% of
//! the run's peak. At exit it is converted (stack addresses symbolised in process) to
//! pprof's gzip protobuf and to a flamegraph, and the folder is removed.
//!
//! jemalloc's own high-water dumps (`prof.gdump`) were tried first: jemalloc 5.3 can
//! deadlock when one fires while the dumping thread grows its own backtrace table
//! (seen on the attack corpus), so the dumps are asked for from outside the allocator.

use std::fmt;
use std::path::{Path, PathBuf};

/// Why a heap profile could not be started or written.
#[derive(Debug)]
pub enum HeapProfileError {
    /// The binary was built without the `jemalloc-prof` feature.
    #[cfg(not(feature = "jemalloc-prof"))]
    NotBuilt,
    /// An output cannot be written (the message names it and why).
    #[cfg(feature = "jemalloc-prof")]
    Output(String),
    /// jemalloc refused a profiling setting.
    #[cfg(feature = "jemalloc-prof")]
    Jemalloc(&'static str, tikv_jemalloc_ctl::Error),
    /// The private folder for jemalloc's dumps.
    #[cfg(feature = "jemalloc-prof")]
    DumpFolder(PathBuf, std::io::Error),
    /// jemalloc wrote no dump, or one that does not parse.
    #[cfg(feature = "jemalloc-prof")]
    Dump(String),
}

impl fmt::Display for HeapProfileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            #[cfg(not(feature = "jemalloc-prof"))]
            Self::NotBuilt => f.write_str(
                "--heap-profile needs a build with the `jemalloc-prof` feature: \
                 cargo build --release --features jemalloc-prof",
            ),
            #[cfg(feature = "jemalloc-prof")]
            Self::Output(m) => f.write_str(m),
            #[cfg(feature = "jemalloc-prof")]
            Self::Jemalloc(what, e) => write!(f, "heap profile: jemalloc {what}: {e}"),
            #[cfg(feature = "jemalloc-prof")]
            Self::DumpFolder(p, e) => write!(f, "heap profile: folder {}: {e}", p.display()),
            #[cfg(feature = "jemalloc-prof")]
            Self::Dump(m) => write!(f, "heap profile: {m}"),
        }
    }
}

impl std::error::Error for HeapProfileError {}

/// The flamegraph written beside the profile `path`: `path` with `.svg` appended.
#[cfg(any(feature = "jemalloc-prof", test))]
pub fn flamegraph_path(path: &Path) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(".svg");
    PathBuf::from(s)
}

/// What a written profile holds.
#[derive(Debug, Clone, Copy)]
pub struct Written {
    /// The estimated live heap at the peak, in bytes (the sum of the samples' weights).
    pub bytes: f64,
    /// How many dumps jemalloc wrote on the way up (the profile is the last).
    pub dumps: usize,
    /// The exact peak of the bytes live (requested sizes), for comparison.
    pub peak: usize,
}

/// Profiling under way: jemalloc dumps into `dir` at each new high.
pub struct HeapProfile {
    #[cfg(feature = "jemalloc-prof")]
    dir: PathBuf,
    path: PathBuf,
}

/// Checks that `path` and its flamegraph can be written (never replacing an existing
/// file: pick a new name), then turns jemalloc's sampling and the dumps at each new high on.
pub fn start(path: &Path) -> Result<HeapProfile, HeapProfileError> {
    #[cfg(feature = "jemalloc-prof")]
    {
        for p in [path.to_path_buf(), flamegraph_path(path)] {
            crate::output::check_target(&p, false).map_err(HeapProfileError::Output)?;
        }
        let dir = std::env::temp_dir().join(format!(
            "scanner-heap.{}.{:016x}",
            std::process::id(),
            scanner_files::random_suffix()
        ));
        let mut b = std::fs::DirBuilder::new();
        {
            use std::os::unix::fs::DirBuilderExt;
            b.mode(0o700);
        }
        b.create(&dir)
            .map_err(|e| HeapProfileError::DumpFolder(dir.clone(), e))?;
        let profile = HeapProfile {
            dir,
            path: path.to_path_buf(),
        };
        jemalloc::start(&profile.dir.join("scanner"))?;
        Ok(profile)
    }
    #[cfg(not(feature = "jemalloc-prof"))]
    {
        let _ = path;
        Err(HeapProfileError::NotBuilt)
    }
}

impl HeapProfile {
    /// Stops dumping, converts the last dump and writes the profile and its
    /// flamegraph through the safe output writer.
    pub fn finish(self) -> Result<Written, HeapProfileError> {
        #[cfg(feature = "jemalloc-prof")]
        {
            let result = self.convert();
            let _ = std::fs::remove_dir_all(&self.dir);
            result
        }
        #[cfg(not(feature = "jemalloc-prof"))]
        {
            let _ = &self.path;
            Err(HeapProfileError::NotBuilt)
        }
    }

    #[cfg(feature = "jemalloc-prof")]
    fn convert(&self) -> Result<Written, HeapProfileError> {
        let (profile, dumps) = jemalloc::stop_and_read(&self.dir)?;
        let bytes = profile.iter().map(|(s, _)| s.weight).sum();
        let peak = peak::PEAK.load(std::sync::atomic::Ordering::Relaxed);
        let pprof = profile.to_pprof(("inuse_space", "bytes"), ("space", "bytes"), None);
        let mut opts = pprof_util::FlamegraphOptions::default();
        opts.title = "scanner: live heap at the peak".into();
        opts.count_name = "bytes".into();
        let svg = profile
            .to_flamegraph(&mut opts)
            .map_err(|e| HeapProfileError::Dump(format!("flamegraph: {e}")))?;
        use std::io::Write;
        crate::output::write_atomically(&self.path, false, |f| f.write_all(&pprof))
            .map_err(HeapProfileError::Output)?;
        crate::output::write_atomically(&flamegraph_path(&self.path), false, |f| f.write_all(&svg))
            .map_err(HeapProfileError::Output)?;
        Ok(Written { bytes, dumps, peak })
    }
}

/// The jemalloc controls (`mallctl`) profiling uses.
#[cfg(feature = "jemalloc-prof")]
mod jemalloc {
    use super::HeapProfileError;
    use std::ffi::{c_char, CString};
    use std::os::unix::ffi::OsStrExt;
    use std::path::Path;
    use tikv_jemalloc_ctl::raw;

    fn write<T>(name: &'static str, value: T) -> Result<(), HeapProfileError> {
        let key = format!("{name}\0");
        // SAFETY: every key written here is a jemalloc control documented as writable
        // with a value of this type (`prof.prefix`: a C string, copied by jemalloc;
        // `prof.active`: bool).
        unsafe { raw::write(key.as_bytes(), value) }
            .map_err(|e| HeapProfileError::Jemalloc(name, e))
    }

    /// Dumps go to `<prefix>.<pid>.<seq>.u<n>.heap`; sampling starts.
    pub fn start(prefix: &Path) -> Result<(), HeapProfileError> {
        // SAFETY: `opt.prof` is a readable bool.
        let enabled: bool = unsafe { raw::read(b"opt.prof\0") }
            .map_err(|e| HeapProfileError::Jemalloc("opt.prof", e))?;
        if !enabled {
            return Err(HeapProfileError::Dump(
                "jemalloc's profiler is off (a MALLOC_CONF with prof:false?)".into(),
            ));
        }
        let prefix = CString::new(prefix.as_os_str().as_bytes())
            .map_err(|_| HeapProfileError::Dump("temporary folder name holds a NUL".into()))?;
        write::<*const c_char>("prof.prefix", prefix.as_ptr())?;
        write("prof.active", true)?;
        super::peak::arm();
        Ok(())
    }

    /// Has jemalloc dump its profile under the prefix (`<prefix>.<pid>.<seq>.m<n>.heap`).
    /// Called from the allocator: allocates nothing through it, and this thread holds
    /// no jemalloc lock here.
    pub fn dump() {
        // SAFETY: `prof.dump` takes a C string or NULL (a name made from the prefix).
        let _ = unsafe { raw::write::<*const c_char>(b"prof.dump\0", std::ptr::null()) };
    }

    /// Stops dumping and parses the last dump in `dir`; also returns how many there
    /// were.
    pub fn stop_and_read(
        dir: &Path,
    ) -> Result<(pprof_util::StackProfile, usize), HeapProfileError> {
        super::peak::disarm();
        write("prof.active", false)?;
        let list = || -> Result<Vec<(u64, std::path::PathBuf)>, HeapProfileError> {
            let mut dumps: Vec<_> = std::fs::read_dir(dir)
                .map_err(|e| HeapProfileError::DumpFolder(dir.to_path_buf(), e))?
                .filter_map(|e| {
                    let p = e.ok()?.path();
                    let n = dump_number(p.file_name()?.to_str()?)?;
                    Some((n, p))
                })
                .collect();
            dumps.sort();
            Ok(dumps)
        };
        let mut dumps = list()?;
        if dumps.is_empty() {
            // The heap never grew 256 KiB past its size at the start: it is as near its
            // peak now as ever.
            dump();
            dumps = list()?;
        }
        let Some((_, last)) = dumps.last() else {
            return Err(HeapProfileError::Dump(format!(
                "jemalloc wrote no dump into {}",
                dir.display()
            )));
        };
        let file =
            std::fs::File::open(last).map_err(|e| HeapProfileError::DumpFolder(last.clone(), e))?;
        let profile =
            pprof_util::parse_jeheap(std::io::BufReader::new(file), mappings::MAPPINGS.as_deref())
                .map_err(|e| HeapProfileError::Dump(format!("{}: {e}", last.display())))?;
        Ok((profile, dumps.len()))
    }

    /// `n` of a requested dump's name `<prefix>.<pid>.<seq>.m<n>.heap`.
    pub(super) fn dump_number(name: &str) -> Option<u64> {
        let stem = name.strip_suffix(".heap")?;
        let (_, last) = stem.rsplit_once('.')?;
        last.strip_prefix('m')?.parse().ok()
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn dumps_are_ordered_by_their_number() {
            assert_eq!(super::dump_number("scanner.41.0.m0.heap"), Some(0));
            assert_eq!(super::dump_number("scanner.41.7.m12.heap"), Some(12));
            assert_eq!(super::dump_number("scanner.41.7.u1.heap"), None);
            assert_eq!(super::dump_number("scanner.41.7.m1.heap.tmp"), None);
        }
    }
}

/// The global allocator of the `jemalloc-prof` build: jemalloc, with the bytes live
/// counted and a profile dumped at each new high once armed.
#[cfg(feature = "jemalloc-prof")]
pub use peak::PeakDumping;

#[cfg(feature = "jemalloc-prof")]
mod peak {
    use std::alloc::{GlobalAlloc, Layout};
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::Relaxed};
    use tikv_jemallocator::Jemalloc;

    /// Bytes live (requested sizes) and their highest value so far.
    static LIVE: AtomicUsize = AtomicUsize::new(0);
    pub static PEAK: AtomicUsize = AtomicUsize::new(0);
    /// Dump when the bytes live pass this (`usize::MAX`: not armed).
    static NEXT: AtomicUsize = AtomicUsize::new(usize::MAX);
    /// A thread is dumping: the others do not wait for it.
    static DUMPING: AtomicBool = AtomicBool::new(false);

    const MIN_STEP: usize = 256 << 10;

    pub fn arm() {
        PEAK.store(LIVE.load(Relaxed), Relaxed);
        NEXT.store(LIVE.load(Relaxed) + MIN_STEP, Relaxed);
    }

    pub fn disarm() {
        NEXT.store(usize::MAX, Relaxed);
    }

    /// Bytes live went up by `n`.
    #[inline]
    fn grew(n: usize) {
        let live = LIVE.fetch_add(n, Relaxed) + n;
        PEAK.fetch_max(live, Relaxed);
        if live > NEXT.load(Relaxed) && !DUMPING.swap(true, Relaxed) {
            NEXT.store(live + (live / 50).max(MIN_STEP), Relaxed);
            super::jemalloc::dump();
            DUMPING.store(false, Relaxed);
        }
    }

    /// jemalloc, counting.
    pub struct PeakDumping;

    // SAFETY: every call is forwarded to jemalloc unchanged; the counting around it
    // neither allocates nor touches the memory.
    unsafe impl GlobalAlloc for PeakDumping {
        #[inline]
        unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
            let p = Jemalloc.alloc(layout);
            if !p.is_null() {
                grew(layout.size());
            }
            p
        }
        #[inline]
        unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
            let p = Jemalloc.alloc_zeroed(layout);
            if !p.is_null() {
                grew(layout.size());
            }
            p
        }
        #[inline]
        unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
            Jemalloc.dealloc(ptr, layout);
            LIVE.fetch_sub(layout.size(), Relaxed);
        }
        #[inline]
        unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
            let p = Jemalloc.realloc(ptr, layout, new_size);
            if !p.is_null() {
                if new_size >= layout.size() {
                    grew(new_size - layout.size());
                } else {
                    LIVE.fetch_sub(layout.size() - new_size, Relaxed);
                }
            }
            p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flamegraph_goes_beside_the_profile() {
        assert_eq!(
            flamegraph_path(Path::new("/tmp/heap.pb.gz")),
            PathBuf::from("/tmp/heap.pb.gz.svg")
        );
    }
}
