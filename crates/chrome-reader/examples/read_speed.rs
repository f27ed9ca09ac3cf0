//! Measures the reader on one file: raw event pass and model build, in MB/s of JSON text.
//! Used by `cargo xtask bench`; prints one JSON line. `read_speed model FILE THREADS` builds
//! with that many parsing threads (default: `chrome_reader::default_threads()`, the cores
//! less one).

use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mode = args.next().ok_or("usage: read_speed raw|model FILE")?;
    let path = PathBuf::from(args.next().ok_or("usage: read_speed raw|model FILE")?);
    let threads = match args.next() {
        Some(n) => n.parse()?,
        None => chrome_reader::default_threads(),
    };
    // The capture is dropped after the clock stops: freeing it is no part of the build (on the 1
    // GB synthetic trace 14–17 ms, on one thread whatever the number of parsing threads).
    let mut capture = None;
    let t = Instant::now();
    let (bytes, events) = match mode.as_str() {
        "raw" => {
            let mut n = 0u64;
            let top = chrome_reader::read_raw_file(&path, |_| {
                n += 1;
                Ok(())
            })?;
            (top.json_bytes, n)
        }
        "model" => {
            let c =
                chrome_reader::load_with(&path, &chrome_reader::LoadConfig::with_threads(threads))?;
            let json_bytes = std::fs::metadata(&path)?.len();
            let events = (c.activities().len() + c.host_events().len()) as u64;
            capture = Some(c);
            (json_bytes, events)
        }
        other => return Err(format!("unknown mode {other}").into()),
    };
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{{\"mode\":\"{mode}\",\"threads\":{threads},\"json_bytes\":{bytes},\"events\":{events},\"seconds\":{secs:.4},\"mb_per_s\":{:.1}}}",
        bytes as f64 / 1e6 / secs
    );
    drop(capture);
    Ok(())
}
