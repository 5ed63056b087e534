//! `config-critical-systems`: the domain controllers and file servers of the input,
//! added to `critical_systems.txt`.
//!
//! As Hayabusa 3.9.0/4.0: a computer with a Security 4768 (a Kerberos TGT was
//! requested) is a domain controller; one with a Security 5145 (a network share object
//! was checked for access) other than on `\\*\IPC$` is a file server. Hayabusa asks
//! before adding each kind to the file, and panics when standard input is not a
//! terminal; scanner asks nothing (`--dry-run` prints without writing), so it runs in a
//! script. The file keeps its lines as they were; new names are appended (a name
//! already there, in any case, is not repeated) and the file is replaced atomically,
//! through its folder checked as the user's own (see [`crate::critical_systems`]).

use super::{run_with, MetricsError, Rec, Run, Tally};
use crate::args::CriticalSystemsArgs;
use crate::exit;
use crate::terminal::safe;
use std::collections::BTreeSet;
use std::path::Path;

/// The computers of one kind found.
#[derive(Default)]
pub struct CriticalTally {
    domain_controllers: BTreeSet<String>,
    file_servers: BTreeSet<String>,
}

impl Tally for CriticalTally {
    type Opts = ();

    fn add(&mut self, r: &Rec<'_>, (): &()) {
        if r.channel() != Some("Security") {
            return;
        }
        let set = match r.event_id() {
            Some("4768") => &mut self.domain_controllers,
            Some("5145") if r.share_name() != Some(r"\\*\IPC$") => &mut self.file_servers,
            _ => return,
        };
        if let Some(c) = r.computer().filter(|c| !c.is_empty()) {
            if !set.contains(c) {
                set.insert(c.to_string());
            }
        }
    }

    fn merge(&mut self, other: CriticalTally) {
        self.domain_controllers.extend(other.domain_controllers);
        self.file_servers.extend(other.file_servers);
    }
}

/// Where the names found go.
enum Dest<'a> {
    /// Nowhere (`--dry-run`).
    DryRun,
    /// The file `-o` names, written as every output is.
    Output(&'a Path),
    /// The critical-systems file, through its checked folder.
    Config(crate::critical_systems::ConfigFile),
}

/// `config-critical-systems`.
pub fn run(a: &CriticalSystemsArgs) -> i32 {
    run_with(|| {
        let mut run = Run::start(&a.common)?;
        // The file is checked before any evidence is read: a folder or file that must
        // not be written stops the run at once, naming it.
        let dest = match (&a.common.report.output, a.dry_run) {
            (_, true) => Dest::DryRun,
            (Some(out), false) => Dest::Output(out),
            (None, false) => Dest::Config(
                crate::critical_systems::ConfigFile::open(&a.target)
                    .map_err(MetricsError::Output)?,
            ),
        };
        let (per_file, _) = run.walk::<CriticalTally>(());
        let mut all = CriticalTally::default();
        for t in per_file {
            all.merge(t);
        }
        let mut found = Vec::new();
        for (kind, names) in [
            ("Domain Controllers", &all.domain_controllers),
            ("File Servers", &all.file_servers),
        ] {
            if names.is_empty() {
                println!("No {kind} found.");
            } else {
                println!("{kind} found ({}):", names.len());
                for n in names {
                    println!("{}", safe(n));
                    found.push(n.as_str());
                }
            }
            println!();
        }
        let (fit, unfit): (Vec<&str>, Vec<&str>) = found
            .iter()
            .partition(|n| crate::critical_systems::writable_name(n));
        for n in &unfit {
            eprintln!(
                "warning: computer name \"{}\" holds a line break or control character; not added",
                safe(n)
            );
        }
        if !fit.is_empty() {
            let (target, added) = match dest {
                Dest::DryRun => (None, 0),
                Dest::Output(out) => (
                    Some(out),
                    add_to_output(out, &fit, a.common.report.overwrite.clobber)?,
                ),
                Dest::Config(file) => (
                    Some(a.target.as_path()),
                    file.add(&fit).map_err(MetricsError::Output)?,
                ),
            };
            if let Some(target) = target {
                println!("{added} added to {}.", safe(&target.display().to_string()));
            }
        }
        Ok(exit::reporting("input error", &run.errors))
    })
}

/// `-o FILE`: the names added to the file the user named (its lines kept, with `-C`;
/// without, an existing file is refused), written as every output is.
fn add_to_output(path: &Path, names: &[&str], clobber: bool) -> Result<usize, MetricsError> {
    let existing = match std::fs::read_to_string(path) {
        Ok(_) if !clobber => {
            return Err(MetricsError::Output(format!(
                "{} exists: add -C to add the names to it",
                path.display()
            )))
        }
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => {
            return Err(MetricsError::Output(format!(
                "cannot read {}: {e}",
                path.display()
            )))
        }
    };
    let (text, added) = crate::critical_systems::extended(existing, names);
    crate::output::write_atomically(path, true, |f| {
        std::io::Write::write_all(f, text.as_bytes())
    })
    .map_err(MetricsError::Output)?;
    Ok(added)
}
