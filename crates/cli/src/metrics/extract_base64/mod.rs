//! `extract-base64`: base64 found in command lines, service paths and PowerShell script
//! blocks and payloads, decoded, with its encoding, file type and whether the decoded
//! text is itself base64 (Hayabusa 3.9.0's columns, one row per token).
//!
//! The fields read, as 3.9.0: Security 4688 `CommandLine`; Sysmon 1 `CommandLine` and
//! `ParentCommandLine`; System 7045 `ImagePath`; PowerShell (Windows PowerShell and
//! PowerShell 7 Operational) 4104 `ScriptBlockText` and 4103 `Payload`; classic Windows
//! PowerShell 400 the third `<Data>`. As Hayabusa 4.0 does, also PowerShell 4100 and 4102
//! `Payload` and classic 403 and 600 the third `<Data>`.
//!
//! Decoded text is evidence an attacker wrote: on a terminal every cell goes through
//! [`crate::terminal::safe`]; in the CSV it is quoted as the metrics tables are, and
//! `--excel-safe` writes cells a spreadsheet would run as formulas as text.

mod decode;

use super::table::{Cell, Quote, Table};
use super::{run_with, thousands, Run, SystemFields};
use crate::args::MetricsArgs;
use decode::Decoded;
use jiff::Timestamp;
use scanner_input::RecordView;
use scanner_rules::{Event, FieldId, FieldTable, CHANNEL, EVENT_ID};

const HEADER: &[&str] = &[
    "Timestamp",
    "Computer",
    "Base64 String",
    "Decoded String",
    "Original Field",
    "Length",
    "Binary",
    "Double Encoding",
    "Encoding",
    "File Type",
    "Event",
    "Record ID",
    "File Name",
];

/// The columns 3.9.0 shows on a terminal.
const ON_TERMINAL: [usize; 4] = [0, 1, 2, 3];

/// Where a field is read from.
#[derive(Clone, Copy)]
enum Source {
    /// A named EventData field.
    Named(FieldId),
    /// The `i`th unnamed `<Data>`.
    Nth(usize),
}

/// The paths read.
pub struct Fields {
    table: FieldTable,
    system: SystemFields,
    command_line: FieldId,
    parent_command_line: FieldId,
    image_path: FieldId,
    script_block: FieldId,
    payload: FieldId,
    data: FieldId,
}

impl Fields {
    fn new() -> Fields {
        let mut t = FieldTable::new();
        let system = SystemFields::intern(&mut t);
        let mut f = |p: &str| t.intern_path(p);
        let command_line = f("Event.EventData.CommandLine");
        let parent_command_line = f("Event.EventData.ParentCommandLine");
        let image_path = f("Event.EventData.ImagePath");
        let script_block = f("Event.EventData.ScriptBlockText");
        let payload = f("Event.EventData.Payload");
        let data = f("Event.EventData.Data");
        Fields {
            table: t,
            system,
            command_line,
            parent_command_line,
            image_path,
            script_block,
            payload,
            data,
        }
    }

    /// The event's label and the fields to search, or `None` for other events.
    fn sources(&self, channel: &str, eid: &str) -> Option<(&'static str, [Option<Source>; 2])> {
        use Source::{Named, Nth};
        const PWSH: [&str; 2] = [
            "Microsoft-Windows-PowerShell/Operational",
            "PowerShellCore/Operational",
        ];
        let one = |s| [Some(s), None];
        Some(match (channel, eid) {
            ("Security", "4688") => ("Sec 4688", one(Named(self.command_line))),
            ("Microsoft-Windows-Sysmon/Operational", "1") => (
                "Sysmon 1",
                [
                    Some(Named(self.command_line)),
                    Some(Named(self.parent_command_line)),
                ],
            ),
            ("System", "7045") => ("Sys 7045", one(Named(self.image_path))),
            (c, "4104") if PWSH.contains(&c) => ("PwSh 4104", one(Named(self.script_block))),
            (c, "4103") if PWSH.contains(&c) => ("PwSh 4103", one(Named(self.payload))),
            (c, "4100") if PWSH.contains(&c) => ("PwSh 4100", one(Named(self.payload))),
            (c, "4102") if PWSH.contains(&c) => ("PwSh 4102", one(Named(self.payload))),
            ("Windows PowerShell", "400") => ("PwShClassic 400", one(Nth(2))),
            ("Windows PowerShell", "403") => ("PwShClassic 403", one(Nth(2))),
            ("Windows PowerShell", "600") => ("PwShClassic 600", one(Nth(2))),
            _ => return None,
        })
    }
}

/// One row, before the file name and time format are known.
struct Row {
    /// Record number, then the field's and the token's place, for a stable order.
    order: (u64, usize, usize),
    time: Option<Timestamp>,
    computer: String,
    record_id: String,
    token: String,
    decoded: Decoded,
    original: String,
    event: &'static str,
}

/// The rows of one file.
#[derive(Default)]
pub struct Base64Tally {
    rows: Vec<Row>,
    records: u64,
}

impl scanner_input::Tally for Base64Tally {
    type Context = Fields;

    fn add(&mut self, r: &RecordView, f: &Fields) {
        self.records += 1;
        let (Some(channel), Some(eid)) = (r.first(CHANNEL), r.first(EVENT_ID)) else {
            return;
        };
        let Some((event, sources)) = f.sources(channel, eid) else {
            return;
        };
        let record_id = r.first(f.system.record_id).unwrap_or("-");
        let time = r
            .first(f.system.time)
            .and_then(scanner_input::parse_timestamp);
        for (i, source) in sources.iter().flatten().enumerate() {
            let value = match *source {
                Source::Named(id) => r.first(id),
                Source::Nth(n) => r.values(f.data).nth(n).map(|v| v.raw),
            };
            let Some(value) = value else { continue };
            for (j, found) in decode::find(value).enumerate() {
                let original = decode::original_field(value, found.token);
                // 3.9.0 leaves out a token right after a `-` (a flag's value such as a
                // GUID's last part), once its padding is dropped.
                if original.contains("-<Base64String>") {
                    continue;
                }
                self.rows.push(Row {
                    order: (record_id.parse().unwrap_or(u64::MAX), i, j),
                    time,
                    computer: r.first(f.system.computer).unwrap_or_default().to_string(),
                    record_id: record_id.to_string(),
                    token: found.token.to_string(),
                    decoded: found.decoded,
                    original,
                    event,
                });
            }
        }
    }

    fn merge(&mut self, other: Base64Tally) {
        self.rows.extend(other.rows);
        self.records += other.records;
    }
}

/// `extract-base64`.
pub fn run(a: &MetricsArgs) -> i32 {
    run_with(|| {
        let mut run = Run::start(a)?;
        let fields = Fields::new();
        let (per_file, records) = run.walk_with::<Base64Tally>(&fields.table, &fields);
        if !a.report.console.quiet {
            eprintln!("Total Event Records: {}", thousands(records));
        }
        let mut table = Table::new(HEADER, Quote::Necessary);
        let epoch = Timestamp::UNIX_EPOCH;
        for (file, mut t) in run.files.iter().zip(per_file) {
            t.rows.sort_by_key(|r| r.order);
            let name = file.name().to_string_lossy();
            for r in t.rows {
                let (decoded, length, binary, double, encoding, kind) = match r.decoded {
                    Decoded::Text(enc, s) => {
                        let double = decode::is_base64(&s);
                        let len = s.len();
                        let shown: String = s.chars().filter(|c| !c.is_control()).collect();
                        (shown, len, "N", if double { "Y" } else { "N" }, enc, "text")
                    }
                    Decoded::Binary(kind, len) => {
                        ("(Binary Data)".to_string(), len, "Y", "N", "Binary", kind)
                    }
                };
                table.push(vec![
                    Cell::Text(run.time.format(r.time.unwrap_or(epoch))),
                    Cell::Text(r.computer),
                    Cell::Text(r.token),
                    Cell::Text(decoded),
                    Cell::Text(r.original),
                    Cell::Number(length as u64),
                    Cell::Text(binary.to_string()),
                    Cell::Text(double.to_string()),
                    Cell::Text(encoding.to_string()),
                    Cell::Text(kind.to_string()),
                    Cell::Text(r.event.to_string()),
                    Cell::Text(r.record_id),
                    Cell::Text(name.clone().into_owned()),
                ]);
            }
        }
        if table.len() == 0 && !a.report.console.quiet {
            eprintln!("No matches found.");
        }
        if super::output_path(a).is_none() && std::io::IsTerminal::is_terminal(&std::io::stdout()) {
            let stdout = std::io::stdout();
            table
                .project(&ON_TERMINAL)
                .write_text(&mut stdout.lock())
                .map_err(super::error::MetricsError::Stdout)?;
            return Ok(run.exit_code());
        }
        run.finish(&table)
    })
}
