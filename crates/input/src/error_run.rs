//! Input errors of one file that differ only in where they are, as one line: a damaged
//! or truncated EVTX file gives one error per chunk or record, thousands alike, and a
//! reader wants the reason once with how many and where.

use crate::error::{InputError, Position};
use std::collections::HashMap;
use std::fmt;
use std::path::Path;

/// Errors of one file with one reason (their text after the position, with its numbers
/// left aside: `name at offset 1432` and `name at offset 771` are one reason), counted
/// as one: the first of them (by position), how many, and the range of their positions.
#[derive(Debug)]
pub struct ErrorRun<'e> {
    first: &'e InputError,
    count: u64,
    /// The lowest and highest position numbers (chunk, record or line), and for errors
    /// at a record in a chunk, the records'.
    low: (u64, u64),
    high: (u64, u64),
    /// Whether every error of the run has the same reason word for word.
    same_text: bool,
    /// The reason of the run's first error met, to tell whether the others match it.
    text: String,
}

impl<'e> ErrorRun<'e> {
    /// The file the errors are about.
    pub fn file(&self) -> &'e Path {
        self.first.file()
    }

    /// How many errors the run holds.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The run's text after the file name: the error's own when it is alone, else
    /// `chunks 12–4000: <reason> (3,989 errors)`.
    pub fn message(&self) -> RunMessage<'_, 'e> {
        RunMessage(self)
    }
}

/// An [`ErrorRun`]'s text after its file name.
pub struct RunMessage<'r, 'e>(&'r ErrorRun<'e>);

impl fmt::Display for RunMessage<'_, '_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = self.0;
        if r.count == 1 {
            return write!(f, "{}", r.first.message());
        }
        // Two positions are named both (`chunks 6 and 10`), more by their range.
        let range = |f: &mut fmt::Formatter<'_>, what: &str, lo: u64, hi: u64| {
            if lo == hi {
                write!(f, "{what} {lo}")
            } else if r.count == 2 {
                write!(f, "{what}s {lo} and {hi}")
            } else {
                write!(f, "{what}s {lo}\u{2013}{hi}")
            }
        };
        match r.first.position() {
            Position::None => {}
            Position::Chunk(_) => range(f, "chunk", r.low.0, r.high.0)?,
            Position::Record(_) => range(f, "record", r.low.0, r.high.0)?,
            Position::ChunkRecord { .. } => {
                range(f, "chunk", r.low.0, r.high.0)?;
                f.write_str(", ")?;
                range(f, "record", r.low.1, r.high.1)?;
            }
            Position::Line(_) => range(f, "line", r.low.0, r.high.0)?,
            Position::Event(_) => range(f, "event", r.low.0, r.high.0)?,
            Position::AfterEvents(_) => write!(f, "after {}\u{2013}{} events", r.low.0, r.high.0)?,
        }
        if r.first.position() != Position::None {
            f.write_str(": ")?;
        }
        write!(f, "{} ({} errors", r.first.reason(), grouped(r.count))?;
        if !r.same_text {
            f.write_str("; the first shown, the others' numbers differ")?;
        }
        f.write_str(")")
    }
}

/// `n` with a comma every three digits.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The position's numbers, to order errors and take their range.
fn numbers(p: Position) -> (u64, u64) {
    match p {
        Position::None => (0, 0),
        Position::Chunk(n)
        | Position::Record(n)
        | Position::Line(n)
        | Position::Event(n)
        | Position::AfterEvents(n) => (n, 0),
        Position::ChunkRecord { chunk, record } => (chunk, record),
    }
}

/// Which kind of position: errors at chunks and errors at lines are not one run.
fn position_kind(p: Position) -> u8 {
    match p {
        Position::None => 0,
        Position::Chunk(_) => 1,
        Position::Record(_) => 2,
        Position::ChunkRecord { .. } => 3,
        Position::Line(_) => 4,
        Position::Event(_) => 5,
        Position::AfterEvents(_) => 6,
    }
}

/// `text` with each number as `#`: a word (a run of ASCII letters and digits) that
/// holds a digit (`1432`, `0x5a7`, `E1`) or is upper-case hex letters only (`CC`, as
/// the parser prints bytes); whitespace left out (bytes are printed padded: `[ C, 5A]`).
fn shape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut word = 0..0;
    let flush = |out: &mut String, w: &str| {
        if w.is_empty() {
            return;
        }
        let number =
            w.bytes().any(|c| c.is_ascii_digit()) || w.bytes().all(|c| matches!(c, b'A'..=b'F'));
        out.push_str(if number { "#" } else { w });
    };
    for (i, c) in text.char_indices() {
        if c.is_ascii_alphanumeric() {
            if word.is_empty() {
                word = i..i;
            }
            word.end = i + 1;
        } else {
            flush(&mut out, &text[word.clone()]);
            word = 0..0;
            if !c.is_whitespace() {
                out.push(c);
            }
        }
    }
    flush(&mut out, &text[word]);
    out
}

/// Collapses `errors` into runs: the errors of one file, at one kind of position, with
/// one reason (numbers aside). Runs come in the order of their first error in `errors`;
/// each shows the error of lowest position. Linear in the errors (one hash look-up
/// each), whatever their number.
pub fn collapse_errors<'e>(errors: impl IntoIterator<Item = &'e InputError>) -> Vec<ErrorRun<'e>> {
    let mut runs: Vec<ErrorRun<'e>> = Vec::new();
    let mut index: HashMap<(&'e Path, u8, String), usize> = HashMap::new();
    for e in errors {
        let reason = e.reason().to_string();
        let key = (e.file(), position_kind(e.position()), shape(&reason));
        let at = numbers(e.position());
        match index.get(&key) {
            Some(&i) => {
                let r = &mut runs[i];
                r.count += 1;
                r.same_text &= reason == r.text;
                r.low = (r.low.0.min(at.0), r.low.1.min(at.1));
                r.high = (r.high.0.max(at.0), r.high.1.max(at.1));
                if at < numbers(r.first.position()) {
                    r.first = e;
                }
            }
            None => {
                index.insert(key, runs.len());
                runs.push(ErrorRun {
                    first: e,
                    count: 1,
                    low: at,
                    high: at,
                    same_text: true,
                    text: reason,
                });
            }
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorKind;

    fn texts(errors: &[InputError]) -> Vec<String> {
        collapse_errors(errors)
            .iter()
            .map(|r| format!("{}: {} [{}]", r.file().display(), r.message(), r.count()))
            .collect()
    }

    #[test]
    fn errors_alike_but_for_their_position_are_one_line_with_a_count_and_range() {
        let damaged = |file: &str, chunk, detail: &str| {
            InputError::new(
                file,
                Position::Chunk(chunk),
                ErrorKind::DamagedChunk(detail.into()),
            )
        };
        let mut errors: Vec<InputError> = (12..=4000)
            .filter(|c| c % 400 != 0)
            .map(|c| damaged("a.evtx", c, "bad magic"))
            .collect();
        // In text order, as the scan sorts them: chunk 1000 before chunk 12.
        errors.sort_by_cached_key(ToString::to_string);
        errors.push(damaged("b.evtx", 7, "bad magic"));
        errors.push(damaged("b.evtx", 9, "name at offset 1432"));
        errors.push(damaged("b.evtx", 3, "name at offset 0x5a7"));
        errors.push(InputError::new(
            "b.evtx",
            Position::Line(3),
            ErrorKind::InvalidJson("x".into()),
        ));
        assert_eq!(
            texts(&errors),
            [
                "a.evtx: chunks 12\u{2013}3999: bad magic (3,979 errors) [3979]",
                "b.evtx: chunk 7: bad magic [1]",
                "b.evtx: chunks 3 and 9: name at offset 0x5a7 (2 errors; the first shown, the others' numbers differ) [2]",
                "b.evtx: line 3: invalid JSON: x [1]",
            ]
        );
    }

    #[test]
    fn records_in_chunks_give_both_ranges() {
        let at = |chunk, record| {
            InputError::new(
                "c.evtx",
                Position::ChunkRecord { chunk, record },
                ErrorKind::WalkEnded,
            )
        };
        let errors = [at(5, 900), at(4, 950), at(6, 800)];
        assert_eq!(
            texts(&errors),
            ["c.evtx: chunks 4\u{2013}6, records 800\u{2013}950: the parser's walk ended before it (3 errors) [3]"]
        );
    }

    #[test]
    fn numbers_are_masked_digit_runs_and_hex() {
        assert_eq!(
            shape("offset 0x1aF at 12, not x12y, found `[CC,  5, E1]`, EVTX ä1 Add"),
            "offset#at#,not#,found`[#,#,#]`,EVTXä#Add"
        );
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(1234567), "1,234,567");
    }
}
