//! The user's base folders, as the XDG Base Directory specification names them.

use std::path::PathBuf;

/// `$VAR`, else `$HOME/under_home`; a variable that is unset or not an absolute path is
/// ignored, as the specification says. `None` without either, and when `HOME` names no
/// folder (`HOME=/nonexistent`, as services and `sudo -H` setups have): scanner never
/// makes a home folder, only the folders below one.
pub fn base(var: &str, under_home: &str) -> Option<PathBuf> {
    let absolute = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    absolute(var).or_else(|| {
        absolute("HOME")
            .filter(|h| h.is_dir())
            .map(|h| h.join(under_home))
    })
}
