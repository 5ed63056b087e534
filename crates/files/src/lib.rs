//! The files scanner keeps as its own, as opposed to the evidence and rules it reads:
//!
//! - [`OwnedDir`]: a folder of the user's own that no one else may write, opened once
//!   and used through its handle, for every file scanner writes or rewrites that the
//!   user did not name with `-o` (config files, rules, caches, downloaded rule sets).
//!   Run as root in a folder another user can write, scanner never writes through a
//!   link planted there, nor into a folder swapped in after the check.
//! - the run's temporary files ([`create_temp_file`] and the rest): made exclusively,
//!   private, remembered so that a run stopped by a signal removes them, and those of
//!   runs killed outright removed by the next run ([`remove_stale_temp_files`]).
//! - cache files ([`CheckedCache`]): what a load made from files, kept between runs in
//!   an [`OwnedDir`] for one key, with the status of every file and folder the load
//!   looked at ([`Seen`], [`Inputs`]); served only while all are as they were (none is
//!   read to tell), and only when the file is the user's own, whole (a checksum) and
//!   written by this very binary (a header naming it, so that what it holds may follow
//!   the caller's types without a format number); written atomically, the most recent
//!   few kept. What they hold is the caller's bytes: the rule set cache encodes a
//!   `RuleSet` there, its recursive types decoded through [`nested`], which bounds how
//!   deep forged bytes can make the decoder recurse.
//! - text files scanner is given, which may be hostile (rule, config and placeholder
//!   files: [`read_text`]): regular files only, opened without blocking, read to the
//!   cap of their kind ([`TextFile`]).
//!
//! ```no_run
//! use scanner_files::OwnedDir;
//! use std::ffi::OsStr;
//! let config = OwnedDir::open("config".as_ref())?;
//! let text = config.read(OsStr::new("critical_systems.txt"), 16 << 20)?;
//! config.write(OsStr::new("critical_systems.txt"), true, scanner_files::FileMode::KeepOr(0o644), |f| {
//!     std::io::Write::write_all(f, b"dc01\n")
//! })?;
//! # Ok::<(), scanner_files::Error>(())
//! ```

mod cache;
mod error;
mod identity;
mod inputs;
mod lock;
mod nesting;
mod owned_dir;
mod temp;
mod text;

pub use cache::{
    split_section, CacheKind, CheckedCache, Miss, NotWritten, MAX_CACHE_BYTES, SETTLE,
};
pub use error::{Error, Why};
pub use identity::{file_identity, FileIdentity};
pub use inputs::{Input, Inputs, Seen};
pub use lock::try_lock_exclusive;
pub use nesting::{nested, MAX_NESTING};
#[cfg(unix)]
pub use owned_dir::trusted;
pub use owned_dir::{folder_of, kind_name, new_file_mode, Entry, FileMode, Kind, OwnedDir};
pub use temp::{
    create as create_temp_file, create_dir as create_temp_dir, create_unique as create_unique_temp,
    forget as forget_temp_file, random_suffix, remembered as remember_temp_file,
    remove as remove_temp_file, remove_all_and_hold as remove_all_temp_files_and_hold,
    remove_dir as remove_temp_dir, remove_stale as remove_stale_temp_files, StaleTemp,
};
pub use text::{read_text, TextError, TextFile};
