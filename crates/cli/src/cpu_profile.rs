//! `--cpu-profile FILE`: samples the process while it scans and writes a flamegraph SVG.
//! Available when built with the cargo feature `pprof`
//! (`cargo build --release --features pprof`); otherwise the flag reports that.

/// A running profiler (nothing without the `pprof` feature).
pub struct CpuProfile {
    #[cfg(feature = "pprof")]
    guard: pprof::ProfilerGuard<'static>,
}

/// Starts sampling at 997 Hz (a prime, so samples do not lock step with periodic work).
pub fn start() -> Result<CpuProfile, String> {
    #[cfg(feature = "pprof")]
    {
        let guard = pprof::ProfilerGuardBuilder::default()
            .frequency(997)
            .blocklist(&["libc", "libgcc", "pthread", "vdso"])
            .build()
            .map_err(|e| format!("cannot start the CPU profiler: {e}"))?;
        Ok(CpuProfile { guard })
    }
    #[cfg(not(feature = "pprof"))]
    Err("--cpu-profile needs a build with the `pprof` feature: cargo build --release --features pprof".into())
}

impl CpuProfile {
    /// Stops sampling and writes the flamegraph to `path` (replacing a file there only
    /// with `clobber`).
    pub fn finish(self, path: &std::path::Path, clobber: bool) -> Result<(), String> {
        #[cfg(feature = "pprof")]
        {
            let report = self
                .guard
                .report()
                .build()
                .map_err(|e| format!("CPU profile: {e}"))?;
            crate::output::write_atomically(path, clobber, |f| {
                report
                    .flamegraph(f)
                    .map_err(|e| std::io::Error::other(e.to_string()))
            })
        }
        #[cfg(not(feature = "pprof"))]
        {
            let _ = (path, clobber);
            Ok(())
        }
    }
}
