//! `cargo run --release -p scanner-evtx-writer --example generate -- RECORDS SEED OUT.evtx`
//! writes a synthetic log and, beside it, `OUT.evtx.truth.tsv` (record id, rule id),
//! and prints the write speed.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 4 {
        eprintln!("usage: generate RECORDS SEED OUT.evtx");
        std::process::exit(2);
    }
    let records: u64 = args[1].parse()?;
    let seed: u64 = args[2].parse()?;
    let file = std::fs::File::create(&args[3])?;
    let start = std::time::Instant::now();
    let truth = scanner_evtx_writer::generate(
        records,
        seed,
        std::io::BufWriter::with_capacity(1 << 20, file),
    )?;
    let secs = start.elapsed().as_secs_f64();
    std::fs::write(format!("{}.truth.tsv", args[3]), truth.to_tsv())?;
    let s = &truth.stats;
    println!(
        "{} records, {} chunks, {:.1} MiB in {:.2} s: {:.0} records/s, {:.1} MiB/s; {} planted records",
        s.records,
        s.chunks,
        s.bytes as f64 / 1048576.0,
        secs,
        s.records as f64 / secs,
        s.bytes as f64 / 1048576.0 / secs,
        truth.planted.len()
    );
    Ok(())
}
