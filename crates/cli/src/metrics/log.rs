//! `log-metrics`: one row per log file: its computers, events, first and last record
//! times, channels, providers and size.

use super::table::{Cell, Quote, Table};
use super::{run_with, thousands, ComputerFilter, Rec, Run, Tally};
use crate::args::LogMetricsArgs;
use jiff::Timestamp;
use std::collections::BTreeSet;

/// The columns, as Hayabusa 3.9.0 names them.
const HEADER: &[&str] = &[
    "Filename",
    "Computers",
    "Events",
    "First Timestamp",
    "Last Timestamp",
    "Channels",
    "Providers",
    "Size",
];

/// What one file holds.
#[derive(Default)]
pub struct FileTally {
    computers: BTreeSet<String>,
    channels: BTreeSet<String>,
    providers: BTreeSet<String>,
    span: super::span::Span,
}

/// Adds `s` to `set`, allocating only when it is new.
fn note(set: &mut BTreeSet<String>, s: Option<&str>) {
    if let Some(s) = s {
        if !set.contains(s) {
            set.insert(s.to_string());
        }
    }
}

impl Tally for FileTally {
    type Opts = ();

    fn add(&mut self, r: &Rec<'_>, (): &()) {
        self.span.add(r.time());
        note(&mut self.computers, r.computer());
        note(&mut self.channels, r.channel());
        note(&mut self.providers, r.provider());
    }

    fn merge(&mut self, o: FileTally) {
        self.computers.extend(o.computers);
        self.channels.extend(o.channels);
        self.providers.extend(o.providers);
        self.span.merge(o.span);
    }
}

/// `log-metrics`.
pub fn run(a: &LogMetricsArgs) -> i32 {
    run_with(|| {
        let mut run = Run::start(&a.common)?;
        let (per_file, _) = run.walk::<FileTally>(());
        let computers = ComputerFilter::new(&a.common);
        let mut rows: Vec<(usize, FileTally)> = per_file
            .into_iter()
            .enumerate()
            .filter(|(i, t)| t.span.records > 0 && kept(a, &computers, run.files[*i].name(), t))
            .collect();
        // Most events first; a stable sort keeps the files' path order among equals.
        rows.sort_by_key(|r| std::cmp::Reverse(r.1.span.records));
        let sep = if a.cells.multiline {
            "\n"
        } else if a.cells.tab_separator {
            "\t"
        } else {
            " ¦"
        };
        let mut table = Table::new(HEADER, Quote::Necessary);
        for (i, t) in rows {
            let file = &run.files[i];
            let name = file
                .name()
                .file_name()
                .unwrap_or_default()
                .to_string_lossy();
            let names = |set: &BTreeSet<String>, show: &dyn Fn(&str) -> String| {
                let mut v: Vec<String> = set.iter().map(|s| show(s)).collect();
                v.sort();
                v.join(sep)
            };
            let plain = |s: &str| s.to_string();
            let (channels, providers) = if a.cells.no_abbreviations {
                (names(&t.channels, &plain), names(&t.providers, &plain))
            } else {
                (
                    names(&t.channels, &|c| run.config.channel(c)),
                    names(&t.providers, &|p| run.config.provider(p)),
                )
            };
            let time = |t: Option<Timestamp>| run.time.format(t.unwrap_or(Timestamp::UNIX_EPOCH));
            table.push(vec![
                Cell::Text(name.into_owned()),
                Cell::Text(names(&t.computers, &plain)),
                Cell::Text(thousands(t.span.records)),
                Cell::Text(time(t.span.first)),
                Cell::Text(time(t.span.last)),
                Cell::Text(channels),
                Cell::Text(providers),
                Cell::Text(size(file.size)),
            ]);
        }
        run.finish(&table)
    })
}

/// Whether a file passes the computer, channel and file name filters: `--include-*`
/// keeps a file with at least one of the names, `--exclude-*` drops a file with any.
fn kept(
    a: &LogMetricsArgs,
    computers: &ComputerFilter,
    path: &std::path::Path,
    t: &FileTally,
) -> bool {
    let any = |list: &[String], set: &BTreeSet<String>| {
        set.iter()
            .any(|s| list.iter().any(|n| n.eq_ignore_ascii_case(s)))
    };
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    let named = |list: &[String]| list.iter().any(|n| n.eq_ignore_ascii_case(&name));
    let computer_ok = t.computers.iter().any(|c| computers.keeps(Some(c)))
        && (a.common.computers.exclude_computers.is_empty()
            || t.computers.iter().all(|c| computers.keeps(Some(c))));
    computer_ok
        && (a.include_channels.is_empty() || any(&a.include_channels, &t.channels))
        && !any(&a.exclude_channels, &t.channels)
        && (a.include_filenames.is_empty() || named(&a.include_filenames))
        && !named(&a.exclude_filenames)
}

/// A size in bytes as Hayabusa 3.9.0 shows it: powers of 1024, one decimal
/// (`68.0 KiB`, `1.1 MiB`), bytes below 1 KiB.
fn size(bytes: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1024.0;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_in_powers_of_1024() {
        assert_eq!(size(0), "0 B");
        assert_eq!(size(1023), "1023 B");
        assert_eq!(size(69_632), "68.0 KiB");
        assert_eq!(size(1_118_208), "1.1 MiB");
        assert_eq!(size(3 << 30), "3.0 GiB");
    }
}
