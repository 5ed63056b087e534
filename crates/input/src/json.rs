//! JSON event files: JSON Lines, one array of events, or concatenated objects, each
//! event handed to a callback as it is parsed (an array is streamed, never collected).

use crate::error::{ErrorKind, InputError, Position};
use std::io::{BufRead, BufReader};
use std::path::Path;

/// Scans one JSON file: JSON Lines, one array of events, or concatenated objects.
pub fn json<S, F, E>(path: &Path, state: &mut S, f: F, err: E) -> u64
where
    F: Fn(&mut S, &serde_json::Value),
    E: Fn(InputError),
{
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => {
            err(InputError::new(path, Position::None, ErrorKind::Io(e)));
            return 0;
        }
    };
    let mut reader = BufReader::new(file);
    let first = match reader.fill_buf() {
        Ok(b) => b.iter().copied().find(|c| !c.is_ascii_whitespace()),
        Err(e) => {
            err(InputError::new(path, Position::None, ErrorKind::Io(e)));
            return 0;
        }
    };
    let mut n = 0;
    if first == Some(b'[') {
        // One array: stream its elements without collecting them.
        struct Each<'a, S, F>(&'a mut S, &'a F, &'a mut u64);
        impl<'de, S, F: Fn(&mut S, &serde_json::Value)> serde::de::Visitor<'de> for Each<'_, S, F> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array of events")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
                while let Some(v) = seq.next_element::<serde_json::Value>()? {
                    *self.2 += 1;
                    (self.1)(self.0, &v);
                }
                Ok(())
            }
        }
        let mut de = serde_json::Deserializer::from_reader(reader);
        if let Err(e) = serde::Deserializer::deserialize_seq(&mut de, Each(state, &f, &mut n)) {
            let kind = ErrorKind::JsonArray(e.to_string());
            err(InputError::new(path, Position::AfterEvents(n), kind));
        }
        return n;
    }
    let mut line = String::new();
    let mut lineno = 0;
    loop {
        line.clear();
        match reader.read_line(&mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(e) => {
                err(InputError::new(
                    path,
                    Position::Line(lineno + 1),
                    ErrorKind::Io(e),
                ));
                break;
            }
        }
        lineno += 1;
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        // A line may hold several concatenated objects.
        for v in serde_json::Deserializer::from_str(t).into_iter::<serde_json::Value>() {
            match v {
                Ok(v) => {
                    n += 1;
                    f(state, &v);
                }
                Err(e) => {
                    let kind = ErrorKind::InvalidJson(e.to_string());
                    err(InputError::new(path, Position::Line(lineno), kind));
                    break;
                }
            }
        }
    }
    n
}
