//! `scanner evtx write` and `scanner evtx generate`.

use crate::args::{EvtxGenerateArgs, EvtxWriteArgs};
use crate::exit;
use crate::output::{check_target, refuse_inputs, write_atomically};
use crate::summary::noun;
use crate::terminal::safe;
use scanner_evtx_writer::{events_from_xml, generate, Event, EvtxWriter, WriterOptions};
use std::io::{BufRead, BufReader, BufWriter};
use std::time::Instant;

fn fail(e: String) -> i32 {
    eprintln!("error: {}", safe(&e));
    exit::FATAL
}

fn io(e: scanner_evtx_writer::Error) -> std::io::Error {
    std::io::Error::other(e.to_string())
}

/// `evtx write`.
pub fn write(a: &EvtxWriteArgs) -> i32 {
    if let Err(e) = check_target(&a.target.output, a.overwrite.clobber)
        .and_then(|_| refuse_inputs(&[&a.target.output], [a.from.as_path()]))
    {
        return fail(e);
    }
    let from = a.from.display().to_string();
    let ext = a
        .from
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let started = Instant::now();
    let result = write_atomically(&a.target.output, a.overwrite.clobber, |file| {
        let mut w = EvtxWriter::new(BufWriter::new(file), WriterOptions::default()).map_err(io)?;
        let bad = |what: String| {
            std::io::Error::new(std::io::ErrorKind::InvalidData, format!("{from}: {what}"))
        };
        match ext.as_str() {
            "xml" => {
                let text = std::fs::read_to_string(&a.from)?;
                for (i, e) in events_from_xml(&text)
                    .map_err(|e| bad(e.to_string()))?
                    .iter()
                    .enumerate()
                {
                    w.write(e)
                        .map_err(|e| bad(format!("event {}: {e}", i + 1)))?;
                }
            }
            "jsonl" => {
                // One event per line, streamed.
                let reader = BufReader::new(std::fs::File::open(&a.from)?);
                for (i, line) in reader.lines().enumerate() {
                    let line = line?;
                    if line.trim().is_empty() {
                        continue;
                    }
                    let e = Event::from_json_str(&line)
                        .map_err(|e| bad(format!("line {}: {e}", i + 1)))?;
                    w.write(&e)
                        .map_err(|e| bad(format!("line {}: {e}", i + 1)))?;
                }
            }
            "json" => {
                let text = std::fs::read_to_string(&a.from)?;
                let value: serde_json::Value =
                    serde_json::from_str(&text).map_err(|e| bad(e.to_string()))?;
                let items = match value {
                    serde_json::Value::Array(items) => items,
                    one => vec![one],
                };
                for (i, v) in items.iter().enumerate() {
                    let e =
                        Event::from_json(v).map_err(|e| bad(format!("event {}: {e}", i + 1)))?;
                    w.write(&e)
                        .map_err(|e| bad(format!("event {}: {e}", i + 1)))?;
                }
            }
            other => {
                return Err(bad(format!(
                    "unknown source type '.{other}' (use .xml, .json or .jsonl)"
                )))
            }
        }
        w.finish().map_err(io)
    });
    match result {
        Ok(stats) => {
            eprintln!(
                "wrote {}: {} {} in {} {}, {} bytes in {:.2} s",
                safe(&a.target.output.display().to_string()),
                stats.records,
                noun(stats.records, "record", "records"),
                stats.chunks,
                noun(stats.chunks, "chunk", "chunks"),
                stats.bytes,
                started.elapsed().as_secs_f64()
            );
            exit::OK
        }
        Err(e) => fail(e),
    }
}

/// `evtx generate`.
pub fn generate_cmd(a: &EvtxGenerateArgs) -> i32 {
    let truth = a.truth.clone().unwrap_or_else(|| {
        let mut name = a
            .target
            .output
            .file_name()
            .map(|n| n.to_os_string())
            .unwrap_or_default();
        name.push(".truth.tsv");
        a.target.output.with_file_name(name)
    });
    for t in [&a.target.output, &truth] {
        if let Err(e) = check_target(t, a.overwrite.clobber) {
            return fail(e);
        }
    }
    let started = Instant::now();
    let result = write_atomically(&a.target.output, a.overwrite.clobber, |file| {
        generate(a.records, a.seed, BufWriter::with_capacity(1 << 20, file)).map_err(io)
    });
    let gt = match result {
        Ok(gt) => gt,
        Err(e) => return fail(e),
    };
    let secs = started.elapsed().as_secs_f64();
    if let Err(e) = write_atomically(&truth, a.overwrite.clobber, |f| {
        std::io::Write::write_all(f, gt.to_tsv().as_bytes())
    }) {
        return fail(e);
    }
    eprintln!(
        "wrote {}: {} records, {} chunks, {:.1} MiB in {secs:.2} s ({:.0} records/s); {} planted records listed in {}",
        safe(&a.target.output.display().to_string()),
        gt.stats.records,
        gt.stats.chunks,
        gt.stats.bytes as f64 / 1048576.0,
        gt.stats.records as f64 / secs.max(1e-9),
        gt.planted.len(),
        safe(&truth.display().to_string())
    );
    exit::OK
}
