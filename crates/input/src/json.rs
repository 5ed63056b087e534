//! JSON event files: JSON Lines, one array of events, or concatenated objects, each
//! event handed to a callback as it is parsed (an array is streamed, never collected).

use crate::error::{ErrorKind, InputError, Position};
use crate::json_tree::Json;
use crate::rows::Row;
use std::io::{BufRead, Read};
use std::path::Path;

/// The longest JSON line read (64 MiB): a longer one is reported and skipped.
pub const MAX_LINE: usize = 64 << 20;

/// Consumes the rest of a line (past its newline) without keeping it.
fn skip_line(reader: &mut impl BufRead) -> std::io::Result<()> {
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            return Ok(());
        }
        if let Some(i) = buf.iter().position(|&b| b == b'\n') {
            reader.consume(i + 1);
            return Ok(());
        }
        let n = buf.len();
        reader.consume(n);
    }
}

/// Scans one JSON file, from `reader`, the stream of the file shown as `path`: JSON
/// Lines, one array of events, or concatenated objects. Hands each event to `sink`, read
/// into a tree borrowed from its line ([`Json`]), with where it is (its line, or its
/// number in an array), and returns how many there were; problems go to `sink` too, and
/// a line that does not parse (invalid JSON or UTF-8, nested too deep, longer than
/// [`MAX_LINE`]) ends only that line.
pub(crate) fn read_json_from(
    path: &Path,
    mut reader: Box<dyn BufRead>,
    sink: &mut dyn FnMut(Row<'_>),
) -> u64 {
    let first = match reader.fill_buf() {
        Ok(b) => b.iter().copied().find(|c| !c.is_ascii_whitespace()),
        Err(e) => {
            sink(Row::Error(InputError::new(
                path,
                Position::None,
                ErrorKind::Io(e),
            )));
            return 0;
        }
    };
    let mut n = 0;
    if first == Some(b'[') {
        // One array: stream its elements without collecting them.
        struct Each<'a, 's>(&'a mut dyn FnMut(Row<'_>), &'s mut u64);
        impl<'de> serde::de::Visitor<'de> for Each<'_, '_> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of events")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                while let Some(v) = seq.next_element::<Json<'de>>()? {
                    *self.1 += 1;
                    (self.0)(Row::Event(&v, Position::Event(*self.1)));
                }
                Ok(())
            }
        }
        let mut de = serde_json::Deserializer::from_reader(reader);
        if let Err(e) = serde::Deserializer::deserialize_seq(&mut de, Each(&mut *sink, &mut n)) {
            let kind = ErrorKind::JsonArray(e.to_string());
            sink(Row::Error(InputError::new(
                path,
                Position::AfterEvents(n),
                kind,
            )));
        }
        return n;
    }
    let mut line = Vec::new();
    let mut lineno = 0;
    loop {
        line.clear();
        let got = (&mut reader)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut line);
        match got {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                sink(Row::Error(InputError::new(
                    path,
                    Position::Line(lineno + 1),
                    ErrorKind::Io(e),
                )));
                break;
            }
        }
        lineno += 1;
        if line.len() > MAX_LINE && line.last() != Some(&b'\n') {
            // A line past the bound: skipped to its end without holding it.
            let kind = ErrorKind::InvalidJson(format!(
                "a line longer than {} MiB; skipped",
                MAX_LINE >> 20
            ));
            sink(Row::Error(InputError::new(
                path,
                Position::Line(lineno),
                kind,
            )));
            if let Err(e) = skip_line(&mut reader) {
                sink(Row::Error(InputError::new(
                    path,
                    Position::Line(lineno),
                    ErrorKind::Io(e),
                )));
                break;
            }
            continue;
        }
        let t = match std::str::from_utf8(&line) {
            Ok(t) => t.trim(),
            Err(e) => {
                let kind = ErrorKind::InvalidJson(format!("not UTF-8 ({e})"));
                sink(Row::Error(InputError::new(
                    path,
                    Position::Line(lineno),
                    kind,
                )));
                continue;
            }
        };
        if t.is_empty() {
            continue;
        }
        // A line may hold several concatenated objects.
        for v in serde_json::Deserializer::from_str(t).into_iter::<Json<'_>>() {
            match v {
                Ok(v) => {
                    n += 1;
                    sink(Row::Event(&v, Position::Line(lineno)));
                }
                Err(e) => {
                    let kind = ErrorKind::InvalidJson(e.to_string());
                    sink(Row::Error(InputError::new(
                        path,
                        Position::Line(lineno),
                        kind,
                    )));
                    break;
                }
            }
        }
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reads `text` as a JSON event file: the events' `n` values and the errors.
    fn read(name: &str, text: &str) -> (Vec<u64>, Vec<InputError>) {
        let path = std::path::PathBuf::from(name);
        let mut errors = Vec::new();
        let mut got = Vec::new();
        let reader = Box::new(std::io::Cursor::new(text.as_bytes().to_vec()));
        let n = read_json_from(&path, reader, &mut |row| match row {
            Row::Event(v, _) => match v.get("n") {
                Some(Json::U64(n)) => got.push(*n),
                other => panic!("{other:?}"),
            },
            Row::Error(e) => errors.push(e),
        });
        assert_eq!(n, got.len() as u64);
        (got, errors)
    }

    #[test]
    fn a_line_that_does_not_parse_is_reported_by_number_and_the_rest_read() {
        let (got, errors) = read("lines.jsonl", "{\"n\":1}\n{\"n\":\n\n{\"n\":3}{\"n\":4}\n");
        assert_eq!(got, [1, 3, 4]);
        let [e] = &errors[..] else {
            panic!("{errors:?}")
        };
        assert_eq!(e.position(), Position::Line(2));
        assert!(
            e.to_string()
                .contains("lines.jsonl: line 2: invalid JSON: "),
            "{e}"
        );
    }

    #[test]
    fn a_line_that_is_not_utf8_is_reported_as_such_and_the_rest_read() {
        let text = b"{\"n\":1}\n{\"n\":2,\"s\":\"\xff\"}\n {\"n\":3} \r\n\xc2\xa0{\"n\":4}\n";
        let mut errors = Vec::new();
        let mut got = Vec::new();
        let reader = Box::new(std::io::Cursor::new(text.to_vec()));
        read_json_from(Path::new("u.jsonl"), reader, &mut |row| match row {
            Row::Event(v, at) => got.push((v.get("n").and_then(Json::as_f64), at)),
            Row::Error(e) => errors.push(e.to_string()),
        });
        // Line 4 starts with a no-break space, which a line is trimmed of.
        let n = |n: u32, line: u64| (Some(f64::from(n)), Position::Line(line));
        assert_eq!(got, [n(1, 1), n(3, 3), n(4, 4)]);
        let [e] = &errors[..] else {
            panic!("{errors:?}")
        };
        assert!(
            e.contains("u.jsonl: line 2: invalid JSON: not UTF-8"),
            "{e}"
        );
    }

    #[test]
    fn an_array_that_stops_parsing_says_after_how_many_events() {
        let (got, errors) = read("array.json", "[{\"n\":1},{\"n\":2},");
        assert_eq!(got, [1, 2]);
        let [e] = &errors[..] else {
            panic!("{errors:?}")
        };
        assert_eq!(e.position(), Position::AfterEvents(2));
        assert!(
            e.to_string().contains("array.json: after 2 events: "),
            "{e}"
        );
    }
}
