//! Measures xplane-reader on one file, in MB/s of protobuf: `decode` (`XSpace::read` only) or
//! `capture` (`load_capture`, the full `trace_model::Capture`). Used by `cargo xtask bench`;
//! prints one JSON line.

use std::path::PathBuf;
use std::time::Instant;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let usage = "usage: decode_speed decode|capture FILE";
    let mut args = std::env::args().skip(1);
    let mode = args.next().ok_or(usage)?;
    let path = PathBuf::from(args.next().ok_or(usage)?);
    let bytes = std::fs::metadata(&path)?.len();
    let t = Instant::now();
    let events = match mode.as_str() {
        "decode" => {
            let space = xplane_reader::XSpace::read(&path)?;
            space
                .planes()
                .map(|plane| plane.event_count() as u64)
                .sum::<u64>()
        }
        "capture" => {
            let (capture, _space) = xplane_reader::load_capture(&path)?;
            (capture.activities().len() + capture.host_events().len()) as u64
        }
        other => return Err(format!("unknown mode {other}; {usage}").into()),
    };
    let secs = t.elapsed().as_secs_f64();
    println!(
        "{{\"mode\":\"{mode}\",\"bytes\":{bytes},\"events\":{events},\"seconds\":{secs:.4},\"mb_per_s\":{:.1}}}",
        bytes as f64 / 1e6 / secs
    );
    Ok(())
}
