//! The JSON timeline (`json-timeline`): the same rows and columns as the CSV timeline,
//! one object per detection, keys in the profile's column order. As Hayabusa writes
//! it, Details, ExtraFieldInfo and AllFieldInfo are objects of their `name: value`
//! items, and integer values (EventID, RecordID, `PID: 2020`) are JSON numbers. The
//! MITRE and tag columns are arrays. Output is a JSON array (one object per
//! indented block) or, with `-L`, JSON Lines.

use crate::details::SEP;
use crate::detect_info::DetectInfo;
use crate::timeline::{Column, TimelineWriter};
use std::io::Write;

/// A cell's value as JSON text: an integer as a number, anything else as a string.
fn scalar(v: &str, out: &mut String) {
    let canonical_int =
        !v.is_empty() && v.len() <= 18 && v.parse::<i64>().is_ok_and(|n| n.to_string() == v);
    if canonical_int {
        out.push_str(v);
    } else {
        out.push_str(&serde_json::Value::String(v.to_string()).to_string());
    }
}

fn string(v: &str, out: &mut String) {
    out.push_str(&serde_json::Value::String(v.to_string()).to_string());
}

/// Splits `name: value ¦ name: value` into (name, value) pairs: the name is what
/// precedes the first `:`, trimmed. An item without a colon is a name with an empty
/// value. `-` (nothing) gives no pairs.
pub fn field_pairs(cell: &str) -> Vec<(&str, &str)> {
    if cell == "-" || cell.is_empty() {
        return Vec::new();
    }
    cell.split(SEP)
        .map(|item| match item.split_once(':') {
            Some((k, v)) => (k.trim(), v.trim()),
            None => (item.trim(), ""),
        })
        .collect()
}

/// Writes `name: value` items as an object; a name given more than once gets an
/// array of its values, in order.
fn object(cell: &str, out: &mut String) {
    let pairs = field_pairs(cell);
    let mut names: Vec<&str> = Vec::new();
    for (k, _) in &pairs {
        if !names.contains(k) {
            names.push(k);
        }
    }
    out.push('{');
    for (i, name) in names.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        string(name, out);
        out.push_str(": ");
        let vals: Vec<&str> = pairs
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| *v)
            .collect();
        if vals.len() == 1 {
            scalar(vals[0], out);
        } else {
            out.push('[');
            for (j, v) in vals.iter().enumerate() {
                if j > 0 {
                    out.push_str(", ");
                }
                scalar(v, out);
            }
            out.push(']');
        }
    }
    out.push('}');
}

fn array(cell: &str, out: &mut String) {
    out.push('[');
    for (i, v) in cell.split(SEP).filter(|v| !v.is_empty()).enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        string(v, out);
    }
    out.push(']');
}

/// Renders one row as a JSON object; `indent` puts each key on its own line.
pub fn row_json(names: &[(&str, Column)], cells: &[String], indent: Option<&str>) -> String {
    let mut out = String::with_capacity(512);
    out.push('{');
    for (i, ((name, col), v)) in names.iter().zip(cells).enumerate() {
        if i > 0 {
            out.push(',');
        }
        match indent {
            Some(ind) => {
                out.push('\n');
                out.push_str(ind);
                out.push_str(ind);
            }
            None if i > 0 => out.push(' '),
            None => {}
        }
        string(name, &mut out);
        out.push_str(": ");
        match col {
            c if c.is_field_list() => object(v, &mut out),
            Column::MitreTactics | Column::MitreTags | Column::OtherTags => array(v, &mut out),
            Column::EventID | Column::RecordID => scalar(v, &mut out),
            _ => string(v, &mut out),
        }
    }
    if let Some(ind) = indent {
        out.push('\n');
        out.push_str(ind);
    }
    out.push('}');
    out
}

/// Writes the rows (a stream in timeline order, see [`TimelineWriter::for_each_row`])
/// as a JSON array, or as JSON Lines when `lines`, calling `on_row` with each row
/// written (after `-X`); returns the number of rows written.
pub fn write<W, I>(
    tw: &TimelineWriter<'_>,
    out: W,
    rows: I,
    lines: bool,
    mut on_row: impl FnMut(&DetectInfo),
) -> std::io::Result<usize>
where
    W: Write,
    I: IntoIterator<Item = std::io::Result<DetectInfo>>,
{
    let mut w = std::io::BufWriter::with_capacity(1 << 16, out);
    let names = tw.named_columns();
    if !lines {
        w.write_all(b"[")?;
    }
    let mut first = true;
    let n = tw.for_each_row(rows, |r, cells| -> std::io::Result<()> {
        on_row(r);
        if lines {
            w.write_all(row_json(names, cells, None).as_bytes())?;
            w.write_all(b"\n")
        } else {
            w.write_all(if first { b"\n    " } else { b",\n    " })?;
            first = false;
            w.write_all(row_json(names, cells, Some("    ")).as_bytes())
        }
    })?;
    if !lines {
        w.write_all(if n == 0 { b"]\n" } else { b"\n]\n" })?;
    }
    w.flush()?;
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn details_become_objects_with_numbers_and_repeated_names_as_arrays() {
        let names = [
            ("EventID", Column::EventID),
            ("Details", Column::Details),
            ("MitreTags", Column::MitreTags),
            ("RecordID", Column::RecordID),
            ("ExtraFieldInfo", Column::ExtraFieldInfo),
        ];
        let cells = [
            "4688".to_string(),
            "Cmdline: a: b ¦ PID: 2020 ¦ LID: 0x3e7 ¦ Zero: 007 ¦ X: 1 ¦ X: two".to_string(),
            "T1021.002 ¦ T1570".to_string(),
            "".to_string(),
            "-".to_string(),
        ];
        let j = row_json(&names, &cells, None);
        let v: serde_json::Value = serde_json::from_str(&j).unwrap();
        assert_eq!(v["EventID"], 4688);
        assert_eq!(v["Details"]["Cmdline"], "a: b");
        assert_eq!(v["Details"]["PID"], 2020);
        assert_eq!(v["Details"]["LID"], "0x3e7");
        assert_eq!(v["Details"]["Zero"], "007");
        assert_eq!(v["Details"]["X"], serde_json::json!([1, "two"]));
        assert_eq!(v["MitreTags"], serde_json::json!(["T1021.002", "T1570"]));
        assert_eq!(v["RecordID"], "");
        assert_eq!(v["ExtraFieldInfo"], serde_json::json!({}));
        assert!(j.starts_with("{\"EventID\": 4688, \"Details\": {"), "{j}");
    }
}
