//! `logon-summary`: successful and failed logons counted per (event, target account,
//! domain and computer, logon type, source account, domain, computer and IP address).
//!
//! Hayabusa 3.9.0 counts Security 4624 (successful) and 4625 (failed), and the RDP
//! events TerminalServices-LocalSessionManager 21 and TerminalServices-Gateway 302
//! (successful). As Hayabusa 4.0 does, scanner also counts Security 4778/4779 (an RDP
//! session reconnected / disconnected), TerminalServices-RemoteConnectionManager 1149
//! (RDP authentication succeeded) and LocalSessionManager 25 (session reconnected), all
//! as successful, and writes 4.0's `First Logon`/`Last Logon` (`First Attempt`/`Last
//! Attempt` for failures) where 4.0 does: right after the count. A field an event lacks is `-`; `"` and `'` are
//! removed from values, as 3.9.0 does.

use super::table::{Cell, Quote, Table};
use super::{run_with, thousands, ComputerFilter, Run, SystemFields};
use crate::args::LogonSummaryArgs;
use crate::terminal::safe;
use jiff::Timestamp;
use scanner_input::RecordView;
use scanner_rules::{FieldId, FieldTable, FxHashMap, CHANNEL, EVENT_ID};
use std::collections::HashSet;
use std::path::PathBuf;

/// The first columns of the successful and of the failed table, in 4.0's order: the
/// count and 4.0's first and last time; [`FIELDS`] follow, 3.9.0's other columns.
const SUCCESSFUL: [&str; 3] = ["Successful", "First Logon", "Last Logon"];
const FAILED: [&str; 3] = ["Failed", "First Attempt", "Last Attempt"];
const FIELDS: [&str; 9] = [
    "Event",
    "Target Account",
    "Target Domain",
    "Target Computer",
    "Logon Type",
    "Source Account",
    "Source Domain",
    "Source Computer",
    "Source IP Address",
];

/// The columns 3.9.0 shows on a terminal (count, event, target account and computer,
/// source computer and IP address), as indexes into the full row.
const ON_TERMINAL: [usize; 6] = [0, 3, 4, 6, 10, 11];

/// A counted event: its label, and where its fields are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Security 4624, 4625, 4778 or 4779.
    Security,
    /// LocalSessionManager 21 or 25: `DOMAIN\user` in `User`, `Address`.
    LocalSession,
    /// Gateway 302: `DOMAIN\user` in `Username`, `IpAddress`.
    Gateway,
    /// RemoteConnectionManager 1149: user, domain and address in `Param1..3`.
    RemoteConnection,
}

/// Which counted event a record is: its label, kind and whether it is a failure.
fn classify(channel: &str, eid: &str) -> Option<(&'static str, Kind, bool)> {
    Some(match (channel, eid) {
        ("Security", "4624") => ("Sec 4624", Kind::Security, false),
        ("Security", "4625") => ("Sec 4625", Kind::Security, true),
        ("Security", "4778") => ("Sec 4778", Kind::Security, false),
        ("Security", "4779") => ("Sec 4779", Kind::Security, false),
        ("Microsoft-Windows-TerminalServices-LocalSessionManager/Operational", "21") => {
            ("RDS-LSM 21", Kind::LocalSession, false)
        }
        ("Microsoft-Windows-TerminalServices-LocalSessionManager/Operational", "25") => {
            ("RDS-LSM 25", Kind::LocalSession, false)
        }
        ("Microsoft-Windows-TerminalServices-Gateway/Operational", "302") => {
            ("RDS-GTW 302", Kind::Gateway, false)
        }
        ("Microsoft-Windows-TerminalServices-RemoteConnectionManager/Operational", "1149") => {
            ("RDS-RCM 1149", Kind::RemoteConnection, false)
        }
        _ => return None,
    })
}

/// Hayabusa's logon type names.
fn logon_type(t: &str) -> &str {
    match t {
        "0" => "0 - System",
        "2" => "2 - Interactive",
        "3" => "3 - Network",
        "4" => "4 - Batch",
        "5" => "5 - Service",
        "7" => "7 - Unlock",
        "8" => "8 - NetworkCleartext",
        "9" => "9 - NewInteractive",
        "10" => "10 - RemoteInteractive",
        "11" => "11 - CachedInteractive",
        "12" => "12 - CachedRemoteInteractive",
        "13" => "13 - CachedUnlock",
        other => other,
    }
}

/// The paths the summary reads.
pub struct Fields {
    table: FieldTable,
    system: SystemFields,
    target_user: FieldId,
    target_domain: FieldId,
    subject_user: FieldId,
    subject_domain: FieldId,
    logon_type: FieldId,
    workstation: FieldId,
    ip: FieldId,
    account: FieldId,
    account_domain: FieldId,
    client_name: FieldId,
    client_address: FieldId,
    lsm_user: FieldId,
    lsm_address: FieldId,
    gtw_user: FieldId,
    gtw_ip: FieldId,
    rcm_user: FieldId,
    rcm_domain: FieldId,
    rcm_address: FieldId,
}

impl Fields {
    fn new() -> Fields {
        let mut t = FieldTable::new();
        let system = SystemFields::intern(&mut t);
        let mut f = |p: &str| t.intern_path(p);
        let target_user = f("Event.EventData.TargetUserName");
        let target_domain = f("Event.EventData.TargetDomainName");
        let subject_user = f("Event.EventData.SubjectUserName");
        let subject_domain = f("Event.EventData.SubjectDomainName");
        let logon_type = f("Event.EventData.LogonType");
        let workstation = f("Event.EventData.WorkstationName");
        let ip = f("Event.EventData.IpAddress");
        let account = f("Event.EventData.AccountName");
        let account_domain = f("Event.EventData.AccountDomain");
        let client_name = f("Event.EventData.ClientName");
        let client_address = f("Event.EventData.ClientAddress");
        let lsm_user = f("Event.UserData.EventXML.User");
        let lsm_address = f("Event.UserData.EventXML.Address");
        let gtw_user = f("Event.UserData.EventInfo.Username");
        let gtw_ip = f("Event.UserData.EventInfo.IpAddress");
        let rcm_user = f("Event.UserData.EventXML.Param1");
        let rcm_domain = f("Event.UserData.EventXML.Param2");
        let rcm_address = f("Event.UserData.EventXML.Param3");
        Fields {
            table: t,
            system,
            target_user,
            target_domain,
            subject_user,
            subject_domain,
            logon_type,
            workstation,
            ip,
            account,
            account_domain,
            client_name,
            client_address,
            lsm_user,
            lsm_address,
            gtw_user,
            gtw_ip,
            rcm_user,
            rcm_domain,
            rcm_address,
        }
    }
}

/// What the summary needs while counting.
pub struct Cx {
    fields: Fields,
    computers: ComputerFilter,
    start: Option<Timestamp>,
    end: Option<Timestamp>,
    dedupe: bool,
}

/// A row's key: the event label, then the nine columns after the count.
type Key = (&'static str, [String; 8]);

/// A row's counts and times: successful, then failed.
#[derive(Default, Clone, Copy)]
struct Counts {
    n: [u64; 2],
    first: [Option<Timestamp>; 2],
    last: [Option<Timestamp>; 2],
}

impl Counts {
    fn add(&mut self, failed: bool, n: u64, first: Option<Timestamp>, last: Option<Timestamp>) {
        let i = usize::from(failed);
        self.n[i] += n;
        self.first[i] = match (self.first[i], first) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.last[i] = self.last[i].max(last);
    }
}

/// One counted event kept for `-X` (its EventRecordID and time decide duplicates).
type Seen = ((String, String), Key, bool, Option<Timestamp>);

/// The counts of one file.
#[derive(Default)]
pub struct LogonTally {
    rows: FxHashMap<Key, Counts>,
    span: super::span::Span,
    seen: Vec<Seen>,
}

/// A value as 3.9.0 shows it: `-` when absent, without `"` and `'`.
fn shown(v: Option<&str>) -> String {
    match v {
        None => "-".to_string(),
        Some(s) => s.replace(['"', '\''], ""),
    }
}

/// `DOMAIN\user` split into (user, domain); the domain `-` without a backslash.
fn split_user(v: Option<&str>) -> (String, String) {
    let s = shown(v);
    match s.rsplit_once('\\') {
        Some((d, u)) => (u.to_string(), d.to_string()),
        None => (s, "-".to_string()),
    }
}

impl scanner_input::Tally for LogonTally {
    type Context = Cx;

    fn add(&mut self, r: &RecordView, cx: &Cx) {
        let f = &cx.fields;
        let time = r
            .first(f.system.time)
            .and_then(scanner_input::parse_timestamp);
        self.span.add(time);
        let (Some(channel), Some(eid)) = (r.first(CHANNEL), r.first(EVENT_ID)) else {
            return;
        };
        let Some((label, kind, failed)) = classify(channel, eid) else {
            return;
        };
        if !cx.computers.keeps(r.first(f.system.computer)) {
            return;
        }
        if cx.start.is_some_and(|s| time.is_none_or(|t| t < s))
            || cx.end.is_some_and(|e| time.is_none_or(|t| t > e))
        {
            return;
        }
        let get = |id: FieldId| shown(r.first(id));
        let (user, domain, source_computer, ip) = match kind {
            Kind::Security if label == "Sec 4778" || label == "Sec 4779" => (
                get(f.account),
                get(f.account_domain),
                get(f.client_name),
                get(f.client_address),
            ),
            Kind::Security => (
                get(f.target_user),
                get(f.target_domain),
                get(f.workstation),
                get(f.ip),
            ),
            Kind::LocalSession => {
                let (u, d) = split_user(r.first(f.lsm_user));
                (u, d, get(f.workstation), get(f.lsm_address))
            }
            Kind::Gateway => {
                let (u, d) = split_user(r.first(f.gtw_user));
                (u, d, get(f.workstation), get(f.gtw_ip))
            }
            Kind::RemoteConnection => (
                get(f.rcm_user),
                get(f.rcm_domain),
                get(f.workstation),
                get(f.rcm_address),
            ),
        };
        let lt = shown(r.first(f.logon_type));
        let key: Key = (
            label,
            [
                user,
                domain,
                get(f.system.computer),
                logon_type(&lt).to_string(),
                get(f.subject_user),
                get(f.subject_domain),
                source_computer,
                ip,
            ],
        );
        if cx.dedupe {
            let id = r.first(f.system.record_id).unwrap_or_default().to_string();
            let t = r.first(f.system.time).unwrap_or_default().to_string();
            self.seen.push(((id, t), key, failed, time));
            return;
        }
        self.rows.entry(key).or_default().add(failed, 1, time, time);
    }

    fn merge(&mut self, other: LogonTally) {
        for (k, c) in other.rows {
            let mine = self.rows.entry(k).or_default();
            for i in 0..2 {
                mine.add(i == 1, c.n[i], c.first[i], c.last[i]);
            }
        }
        self.span.merge(other.span);
        self.seen.extend(other.seen);
    }
}

/// `logon-summary`.
pub fn run(a: &LogonSummaryArgs) -> i32 {
    run_with(|| {
        let prefix = a
            .common
            .report
            .output
            .as_ref()
            .filter(|p| p.as_os_str() != "-");
        let outputs: Vec<PathBuf> = prefix
            .map(|p| vec![with_suffix(p, "successful"), with_suffix(p, "failed")])
            .unwrap_or_default();
        let mut run = Run::start_writing(&a.common, &outputs)?;
        let tz = run.time.zone().clone();
        let parse = |flag: &str, v: &Option<String>| {
            v.as_deref()
                .map(|s| crate::filters::parse_time(s, &tz))
                .transpose()
                .map_err(|e| super::error::MetricsError::Time(flag.to_string(), e))
        };
        let cx = Cx {
            fields: Fields::new(),
            computers: ComputerFilter::new(&a.common),
            start: parse("--timeline-start", &a.timeline_start)?,
            end: parse("--timeline-end", &a.timeline_end)?,
            dedupe: a.remove_duplicates,
        };
        let (per_file, _) = run.walk_with::<LogonTally>(&cx.fields.table, &cx);
        // Files in path order, so that with -X the first copy of an event is the one kept.
        let mut all = LogonTally::default();
        let mut seen = HashSet::new();
        for mut t in per_file {
            for (id, key, failed, time) in std::mem::take(&mut t.seen) {
                if seen.insert(id) {
                    all.rows.entry(key).or_default().add(failed, 1, time, time);
                }
            }
            scanner_input::Tally::merge(&mut all, t);
        }
        if !a.common.report.console.quiet {
            eprintln!("Total Event Records: {}", thousands(all.span.records));
            for (name, t) in [("First", all.span.first), ("Last", all.span.last)] {
                if let Some(t) = t {
                    eprintln!("{name} Timestamp: {}", safe(&run.time.format(t)));
                }
            }
        }
        let tables = [table(&run, &all, false), table(&run, &all, true)];
        match prefix {
            Some(_) => {
                for (path, t) in outputs.iter().zip(&tables) {
                    crate::output::write_atomically(path, a.common.report.overwrite.clobber, |f| {
                        let mut w = std::io::BufWriter::new(f);
                        t.write_csv(&mut w, a.common.report.csv.excel_safe)?;
                        std::io::Write::flush(&mut w)
                    })
                    .map_err(super::error::MetricsError::Output)?;
                }
            }
            None => print_tables(&tables).map_err(super::error::MetricsError::Stdout)?,
        }
        Ok(run.exit_code())
    })
}

/// `PREFIX-successful.csv` and `PREFIX-failed.csv`, as 3.9.0 names them.
fn with_suffix(prefix: &std::path::Path, which: &str) -> PathBuf {
    let mut s = prefix.as_os_str().to_owned();
    s.push(format!("-{which}.csv"));
    PathBuf::from(s)
}

/// One table: rows with a count of this kind, most frequent first (ties in column order,
/// where 3.9.0's order is its hash map's).
fn table(run: &Run<'_>, all: &LogonTally, failed: bool) -> Table {
    let i = usize::from(failed);
    let mut rows: Vec<(&Key, &Counts)> = all.rows.iter().filter(|(_, c)| c.n[i] > 0).collect();
    rows.sort_by(|a, b| b.1.n[i].cmp(&a.1.n[i]).then_with(|| a.0.cmp(b.0)));
    let first = if failed { FAILED } else { SUCCESSFUL };
    let mut t = Table::new(&[&first[..], &FIELDS[..]].concat(), Quote::Necessary);
    let time =
        |t: Option<Timestamp>| Cell::Text(t.map_or_else(|| "-".into(), |t| run.time.format(t)));
    for ((label, cols), c) in rows {
        let mut row = Vec::with_capacity(12);
        row.push(Cell::Number(c.n[i]));
        row.push(time(c.first[i]));
        row.push(time(c.last[i]));
        row.push(Cell::Text((*label).to_string()));
        row.extend(cols.iter().map(|s| Cell::Text(s.clone())));
        t.push(row);
    }
    t
}

/// Without `-o`: the two tables with the columns 3.9.0 shows, each cell made safe for a
/// terminal.
fn print_tables(tables: &[Table; 2]) -> std::io::Result<()> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    use std::io::Write;
    writeln!(out, "Logon Summary:")?;
    if tables.iter().all(|t| t.len() == 0) {
        writeln!(out, "No logon events were detected.")?;
        return out.flush();
    }
    for (t, name) in tables.iter().zip(["successful", "failed"]) {
        writeln!(out)?;
        if t.len() == 0 {
            writeln!(out, "No logon {name} events were detected.")?;
            continue;
        }
        let title = if name == "successful" {
            "Successful"
        } else {
            "Failed"
        };
        writeln!(out, "{title} Logons:")?;
        t.project(&ON_TERMINAL).write_text(&mut out)?;
    }
    out.flush()
}
