//! Writing output files so that nothing half-written ever carries the real name.

use std::path::{Path, PathBuf};

fn temp_path(target: &Path) -> PathBuf {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    target.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// Refuses an existing `target` unless `clobber`.
pub fn check_target(target: &Path, clobber: bool) -> Result<(), String> {
    if target.exists() && !clobber {
        return Err(format!(
            "{} exists; use -C/--clobber to overwrite it",
            target.display()
        ));
    }
    Ok(())
}

/// Writes to a temporary file beside `target` and renames it into place, so an
/// interrupted or failed run never leaves a partial file under the real name.
pub fn write_atomically<T>(
    target: &Path,
    f: impl FnOnce(&mut std::fs::File) -> std::io::Result<T>,
) -> Result<T, String> {
    let tmp = temp_path(target);
    let result = (|| {
        // Remembered, so that a run stopped by a signal removes it (`interrupt`).
        let mut file = scanner_engine::create_temp_file(&tmp, false)?;
        let value = f(&mut file)?;
        file.sync_all()?;
        std::fs::rename(&tmp, target)?;
        scanner_engine::forget_temp_file(&tmp);
        Ok(value)
    })();
    result.map_err(|e: std::io::Error| {
        let _ = scanner_engine::remove_temp_file(&tmp);
        format!("cannot write {}: {e}", target.display())
    })
}
