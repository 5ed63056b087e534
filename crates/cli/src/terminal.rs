//! Text from evidence, rules and file names made safe for a terminal: control
//! characters an attacker could plant (ESC sequences that clear the screen, set the
//! title or write the clipboard; a newline that forges a line of the summary) are shown
//! escaped instead of acted on. C0 controls and DEL become `\xHH`, C1 controls
//! `\u{HH}`; everything else, including every other non-ASCII character, is kept.

use std::borrow::Cow;
use std::io::{self, Write};

/// `s` with its control characters escaped; borrowed when it has none (the usual case).
pub fn safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(char::is_control) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        push_char(c, &mut out);
    }
    Cow::Owned(out)
}

fn push_char(c: char, out: &mut String) {
    use std::fmt::Write as _;
    let n = c as u32;
    if n < 0x20 || n == 0x7f {
        let _ = write!(out, "\\x{n:02x}");
    } else if (0x80..0xa0).contains(&n) {
        let _ = write!(out, "\\u{{{n:x}}}");
    } else {
        out.push(c);
    }
}

/// A writer to a terminal that escapes control characters as [`safe`] does, except the
/// line breaks and tabs of the text itself (a timeline's rows and its multi-line cells).
pub struct SafeWriter<W: Write> {
    inner: W,
    /// A UTF-8 lead byte of a C1 control (0xC2) held until its next byte arrives.
    held: Option<u8>,
    buf: Vec<u8>,
}

impl<W: Write> SafeWriter<W> {
    /// Escapes what is written to `inner`.
    pub fn new(inner: W) -> Self {
        SafeWriter {
            inner,
            held: None,
            buf: Vec::new(),
        }
    }
}

impl<W: Write> Write for SafeWriter<W> {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.buf.clear();
        let mut bytes = data.iter().copied().peekable();
        if let Some(lead) = self.held.take() {
            match data.first() {
                Some(&b) if (0x80..0xa0).contains(&b) => {
                    self.buf
                        .extend_from_slice(format!("\\u{{{b:x}}}").as_bytes());
                    bytes.next();
                }
                Some(_) => self.buf.push(lead),
                None => self.held = Some(lead),
            }
        }
        while let Some(b) = bytes.next() {
            match b {
                b'\n' | b'\r' | b'\t' => self.buf.push(b),
                0..=0x1f | 0x7f => self.buf.extend_from_slice(format!("\\x{b:02x}").as_bytes()),
                0xc2 => match bytes.peek() {
                    Some(&n) if (0x80..0xa0).contains(&n) => {
                        self.buf
                            .extend_from_slice(format!("\\u{{{n:x}}}").as_bytes());
                        bytes.next();
                    }
                    Some(_) => self.buf.push(b),
                    None => self.held = Some(b),
                },
                _ => self.buf.push(b),
            }
        }
        self.inner.write_all(&self.buf)?;
        Ok(data.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(lead) = self.held.take() {
            self.inner.write_all(&[lead])?;
        }
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_sequences_newlines_and_c1_controls_are_shown_not_acted_on() {
        assert!(matches!(safe("WKS-01 ¦ é 日本"), Cow::Borrowed(_)));
        assert_eq!(safe("a\x1b[2Jb"), "a\\x1b[2Jb");
        assert_eq!(safe("\x1b]52;c;Y3VybA==\x07"), "\\x1b]52;c;Y3VybA==\\x07");
        assert_eq!(
            safe("x.evtx\nResults Summary:"),
            "x.evtx\\x0aResults Summary:"
        );
        assert_eq!(safe("del\x7f c1\u{9b}2J"), "del\\x7f c1\\u{9b}2J");
    }

    #[test]
    fn the_writer_keeps_line_breaks_and_tabs_and_escapes_controls_split_across_writes() {
        let mut w = SafeWriter::new(Vec::new());
        w.write_all(b"a,\"b\r\nc\"\t\x1b[31m\n").unwrap();
        // A C1 control whose two UTF-8 bytes arrive in two writes, then é split too.
        w.write_all(b"x\xc2").unwrap();
        w.write_all(b"\x9by\xc3").unwrap();
        w.write_all(b"\xa9").unwrap();
        w.flush().unwrap();
        let out = String::from_utf8(w.inner).unwrap();
        assert_eq!(out, "a,\"b\r\nc\"\t\\x1b[31m\nx\\u{9b}yé");
    }
}
