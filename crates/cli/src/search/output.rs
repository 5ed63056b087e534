//! The events found, written with Hayabusa 3.9.0's columns: CSV (`Timestamp, EventTitle,
//! Hostname, Channel, Event ID, Record ID, AllFieldInfo, EvtxFile`, every cell quoted
//! but the numbers), a JSON array (`-J`) or JSON Lines (`-L`, one object a line, which
//! 3.9.0 did not manage).

use super::names::Names;
use super::SearchError;
use crate::args::{OutputFormat, SearchArgs};
use crate::terminal::SafeWriter;
use jiff::Timestamp;
use scanner_engine::Items;
use scanner_input::InputFile;
use scanner_timeline::{row_json, Cell, Column, Style, TimeFormat};
use std::io::{IsTerminal, Write};

/// One event found.
pub struct Hit {
    /// Index of its file.
    pub file: u32,
    /// `SystemTime`, parsed.
    pub time: Option<Timestamp>,
    /// EventRecordID (`u64::MAX` when missing), for the order.
    pub record_id: u64,
    /// EventRecordID as written (`-` when missing).
    pub record_id_text: Box<str>,
    /// `Computer`.
    pub computer: Box<str>,
    /// `Channel`, as recorded.
    pub channel: Box<str>,
    /// `EventID`.
    pub event_id: Box<str>,
    /// AllFieldInfo, `name: value` items.
    pub all_fields: Items,
}

/// File by file in record order, or with `sort` by time (then file and record).
pub fn order(hits: &mut [Hit], sort: bool) {
    if sort {
        hits.sort_unstable_by_key(|h| (h.time, h.file, h.record_id));
    } else {
        hits.sort_unstable_by_key(|h| (h.file, h.record_id, h.time));
    }
}

const CSV_HEADER: [&str; 8] = [
    "Timestamp",
    "EventTitle",
    "Hostname",
    "Channel",
    "Event ID",
    "Record ID",
    "AllFieldInfo",
    "EvtxFile",
];

/// The JSON objects' keys, in 3.9.0's order, and how each cell is written.
const JSON_KEYS: [(&str, Column); 8] = [
    ("Timestamp", Column::Timestamp),
    ("Hostname", Column::Computer),
    ("Channel", Column::Channel),
    ("Event ID", Column::EventID),
    ("Record ID", Column::RecordID),
    ("EventTitle", Column::RuleTitle),
    ("AllFieldInfo", Column::AllFieldInfo),
    ("EvtxFile", Column::EvtxFile),
];

/// The cells of a hit, in CSV order.
fn cells(
    h: &Hit,
    files: &[InputFile],
    names: &Names,
    time: &TimeFormat,
    a: &SearchArgs,
) -> [String; 8] {
    let channel = if a.cells.no_abbreviations {
        h.channel.to_string()
    } else {
        names.channel(&h.channel)
    };
    // The timeline's separator, or with -M a line break, with -S a tab.
    let sep = Style {
        multiline: a.cells.multiline,
        tab_separator: a.cells.tab_separator,
        ..Style::default()
    }
    .separator();
    let all = if h.all_fields.is_empty() {
        "-".to_string()
    } else {
        h.all_fields.join(sep)
    };
    [
        h.time.map_or_else(|| "n/a".to_string(), |t| time.format(t)),
        names
            .title(&h.channel, &h.event_id)
            .unwrap_or("-")
            .to_string(),
        h.computer.to_string(),
        channel,
        h.event_id.to_string(),
        h.record_id_text.to_string(),
        all,
        files
            .get(h.file as usize)
            .map_or_else(String::new, |f| f.name().display().to_string()),
    ]
}

fn csv_cell(v: &str, quote: bool, excel_safe: bool, out: &mut String) {
    let guard = excel_safe && scanner_timeline::is_formula(v);
    if !quote && !guard {
        out.push_str(v);
        return;
    }
    out.push('"');
    if guard {
        out.push('\'');
    }
    for c in v.chars() {
        if c == '"' {
            out.push('"');
        }
        out.push(c);
    }
    out.push('"');
}

fn is_number(v: &str) -> bool {
    !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())
}

/// Writes the hits in the format asked for.
fn encode(
    a: &SearchArgs,
    files: &[InputFile],
    names: &Names,
    time: &TimeFormat,
    hits: &[Hit],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut line = String::new();
    let format = a.format();
    if format != OutputFormat::Csv {
        // One JSON array, or JSON Lines.
        let array = format == OutputFormat::Json;
        let names_cols: Vec<(&str, Column)> = JSON_KEYS.to_vec();
        if array {
            out.write_all(b"[")?;
        }
        for (i, h) in hits.iter().enumerate() {
            let c = cells(h, files, names, time, a);
            // JSON keys in 3.9.0's order: Timestamp, Hostname, Channel, Event ID,
            // Record ID, EventTitle, AllFieldInfo (its items as pairs), EvtxFile.
            let ordered = [
                Cell::text(&c[0]),
                Cell::text(&c[2]),
                Cell::text(&c[3]),
                Cell::text(&c[4]),
                Cell::text(&c[5]),
                Cell::text(&c[1]),
                Cell::items(&h.all_fields),
                Cell::text(&c[7]),
            ];
            let obj = row_json(&names_cols, &ordered, if array { Some("  ") } else { None });
            if array {
                out.write_all(if i == 0 { b"\n  " } else { b",\n  " })?;
                out.write_all(obj.as_bytes())?;
            } else {
                out.write_all(obj.as_bytes())?;
                out.write_all(b"\n")?;
            }
        }
        if array {
            out.write_all(b"\n]\n")?;
        }
        return Ok(());
    }
    for (i, name) in CSV_HEADER.iter().enumerate() {
        if i > 0 {
            line.push(',');
        }
        csv_cell(name, true, false, &mut line);
    }
    line.push('\n');
    out.write_all(line.as_bytes())?;
    for h in hits {
        line.clear();
        for (i, v) in cells(h, files, names, time, a).iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            let numeric = (i == 4 || i == 5) && is_number(v);
            csv_cell(v, !numeric, a.report.csv.excel_safe, &mut line);
        }
        line.push('\n');
        out.write_all(line.as_bytes())?;
    }
    Ok(())
}

/// Writes to `-o` (atomically) or standard output (control characters escaped on a
/// terminal).
pub fn write(
    a: &SearchArgs,
    files: &[InputFile],
    names: &Names,
    time: &TimeFormat,
    hits: Vec<Hit>,
) -> Result<(), SearchError> {
    match super::output_path(a) {
        Some(path) => crate::output::write_atomically(path, a.report.overwrite.clobber, |f| {
            let mut w = std::io::BufWriter::new(f);
            encode(a, files, names, time, &hits, &mut w)?;
            w.flush()
        })
        .map_err(SearchError::Output),
        None => {
            let stdout = std::io::stdout();
            let written = if stdout.is_terminal() {
                let mut safe = SafeWriter::new(stdout.lock());
                encode(a, files, names, time, &hits, &mut safe).and_then(|()| safe.flush())
            } else {
                let mut w = std::io::BufWriter::new(stdout.lock());
                encode(a, files, names, time, &hits, &mut w).and_then(|()| w.flush())
            };
            written.map_err(SearchError::Stdout)
        }
    }
}
