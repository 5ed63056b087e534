//! `computer-metrics`: events per computer, with what the System log tells of it: the
//! Windows version (EventID 6009), the time zone (6013) and the uptime at its last
//! System event since the last boot (12, 6005 or 6009).

use super::table::{Cell, Quote, Table};
use super::{run_with, Rec, Run, Tally};
use crate::args::MetricsArgs;
use scanner_rules::FxHashMap;

/// The columns, as Hayabusa 3.9.0 names them.
const HEADER: &[&str] = &["Computer", "OS information", "UpTime", "Timezone", "Events"];

/// What one computer's records said.
#[derive(Default)]
struct Computer {
    events: u64,
    /// The earliest 6009's (time, version and build).
    os: Option<(String, String, String)>,
    /// The latest 6013's (time, zone).
    zone: Option<(String, String)>,
    /// The latest boot event's time (`SystemTime` text; they compare as times).
    boot: String,
    /// The latest System event's time.
    last: String,
}

impl Computer {
    fn merge(&mut self, o: Computer) {
        self.events += o.events;
        if let Some(os) = o.os {
            if self.os.as_ref().is_none_or(|m| os.0 < m.0) {
                self.os = Some(os);
            }
        }
        if let Some(z) = o.zone {
            if self.zone.as_ref().is_none_or(|m| z.0 >= m.0) {
                self.zone = Some(z);
            }
        }
        self.boot = self.boot.clone().max(o.boot);
        self.last = self.last.clone().max(o.last);
    }
}

/// Counts per computer.
#[derive(Default)]
pub struct ComputerTally {
    computers: FxHashMap<String, Computer>,
}

impl Tally for ComputerTally {
    type Opts = ();

    fn add(&mut self, r: &Rec<'_>, (): &()) {
        let Some(name) = r.computer() else {
            return;
        };
        let c = match self.computers.get_mut(name) {
            Some(c) => c,
            None => self.computers.entry(name.to_string()).or_default(),
        };
        c.events += 1;
        if r.channel() != Some("System") {
            return;
        }
        let Some(id) = r.event_id().and_then(|e| e.parse::<i64>().ok()) else {
            return;
        };
        let time = r.system_time().unwrap_or_default();
        if id == 6009 {
            if let (Some(v), Some(b)) = (r.data(0), r.data(1)) {
                if c.os.as_ref().is_none_or(|m| time < m.0.as_str()) {
                    c.os = Some((time.to_string(), v.to_string(), b.to_string()));
                }
            }
        } else if id == 6013 {
            if let Some(z) = r.data(6) {
                if c.zone.as_ref().is_none_or(|m| time >= m.0.as_str()) {
                    // The zone's name follows its offset in minutes.
                    let z = z.split_once(' ').map_or(z, |(_, name)| name);
                    c.zone = Some((time.to_string(), z.to_string()));
                }
            }
        }
        if matches!(id, 12 | 6005 | 6009) && time > c.boot.as_str() {
            c.boot = time.to_string();
        }
        if time > c.last.as_str() {
            c.last = time.to_string();
        }
    }

    fn merge(&mut self, other: ComputerTally) {
        for (name, c) in other.computers {
            self.computers.entry(name).or_default().merge(c);
        }
    }
}

/// `computer-metrics`.
pub fn run(a: &MetricsArgs) -> i32 {
    run_with(|| {
        let mut run = Run::start(a)?;
        let (per_file, _) = run.walk::<ComputerTally>(());
        let mut all = ComputerTally::default();
        for t in per_file {
            all.merge(t);
        }
        let mut rows: Vec<(String, Computer)> = all.computers.into_iter().collect();
        rows.sort_by(|x, y| y.1.events.cmp(&x.1.events).then_with(|| x.0.cmp(&y.0)));
        let mut table = Table::new(HEADER, Quote::Text);
        for (name, c) in rows {
            let os = c.os.map(|(_, v, b)| os_name(&run, &v, &b));
            table.push(vec![
                Cell::Text(name),
                Cell::Text(os.unwrap_or_default()),
                Cell::Text(uptime(&c.boot, &c.last)),
                Cell::Text(c.zone.map(|z| z.1).unwrap_or_default()),
                Cell::Number(c.events),
            ]);
        }
        if !a.report.console.quiet {
            eprintln!("Total computers: {}", table.len());
        }
        run.finish(&table)
    })
}

/// The Windows name of a 6009's version and build (`windows_versions.csv`), or both
/// numbers; nothing without the table, as Hayabusa.
fn os_name(run: &Run<'_>, version: &str, build: &str) -> String {
    if !run.config.has_windows_versions() {
        return String::new();
    }
    let v = version
        .trim_matches('.')
        .replace(".01", ".1")
        .replace(".00", ".0");
    match run.config.windows(&v, build) {
        Some((name, date)) => format!("Windows {name} ({date})"),
        None => format!("Version: {v} Build: {build}"),
    }
}

/// The time from the last boot to the last System event, as `1Y 2M 3d 4h 5m 6s`
/// (Hayabusa's units: a year of 365 days, a month of 30); empty when either is missing
/// or the boot is not earlier.
fn uptime(boot: &str, last: &str) -> String {
    let parse = |s: &str| scanner_input::parse_timestamp(s).map(|t| t.as_second());
    let (Some(b), Some(l)) = (parse(boot), parse(last)) else {
        return String::new();
    };
    let s = l - b;
    if s <= 0 {
        return String::new();
    }
    format!(
        "{}Y {}M {}d {}h {}m {}s",
        s / 31_536_000,
        s % 31_536_000 / 2_592_000,
        s % 2_592_000 / 86_400,
        s % 86_400 / 3_600,
        s % 3_600 / 60,
        s % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uptime_in_hayabusa_units() {
        assert_eq!(uptime("", "2021-01-01T00:00:00Z"), "");
        assert_eq!(uptime("2021-01-01T00:00:00Z", "2021-01-01T00:00:00Z"), "");
        assert_eq!(
            uptime("2021-01-01T00:00:00Z", "2021-01-02T01:02:03.5Z"),
            "0Y 0M 1d 1h 2m 3s"
        );
    }
}
