//! HTA's `generate_trace_with_counters` and `overlay_critical_path_analysis` outputs,
//! written beside trace-frame's other outputs (the `timeline` crate's analyses read no file
//! and write none).

/// HTA's `generate_trace_with_counters` output: the trace `input` (a Chrome trace, gzip or
/// not) with `events` appended to its `traceEvents`, written to `output` through
/// output-file (gzip when the name ends in `.gz`, as HTA's name keeps the input's `.gz`).
/// An existing output is replaced, as HTA replaces it, but never one of `inputs` (every
/// trace file of the set) nor anything inside them.
pub fn write_trace_with_events(
    input: &std::path::Path,
    output: &std::path::Path,
    events: Vec<serde_json::Value>,
    inputs: &[&std::path::Path],
) -> Result<(), crate::Error> {
    write_trace_edited(input, output, inputs, |list| {
        list.extend(events);
        Ok(())
    })
}

/// The trace `input` (a Chrome trace, gzip or not) with its `traceEvents` list changed by
/// `edit`, written to `output` through output-file as [`write_trace_with_events`] writes
/// (HTA's `overlay_critical_path_analysis` and `generate_trace_with_counters`). An error
/// of `edit` names `input`; nothing is written then.
pub fn write_trace_edited(
    input: &std::path::Path,
    output: &std::path::Path,
    inputs: &[&std::path::Path],
    edit: impl FnOnce(&mut Vec<serde_json::Value>) -> Result<(), String>,
) -> Result<(), crate::Error> {
    use std::io::{Read, Write};
    let mut text = Vec::new();
    chrome_reader::open(input)?
        .read_to_end(&mut text)
        .map_err(crate::Error::io(input, "cannot read the trace"))?;
    let mut trace: serde_json::Value =
        serde_json::from_slice(&text).map_err(|e| crate::Error::Missing {
            path: input.to_path_buf(),
            what: format!("the trace is not JSON ({e})"),
        })?;
    drop(text);
    let Some(list) = trace
        .get_mut("traceEvents")
        .and_then(serde_json::Value::as_array_mut)
    else {
        return Err(crate::Error::Missing {
            path: input.to_path_buf(),
            what: "the trace has no `traceEvents` list to write back".into(),
        });
    };
    edit(list).map_err(|what| crate::Error::Missing {
        path: input.to_path_buf(),
        what,
    })?;
    let rules = output_file::Rules {
        overwrite: true,
        inputs,
    };
    let gzip = output.extension().is_some_and(|e| e == "gz");
    output_file::write_with(output, &rules, |file| {
        let buffered = std::io::BufWriter::new(file);
        if gzip {
            let mut enc = flate2::write::GzEncoder::new(buffered, flate2::Compression::default());
            serde_json::to_writer(&mut enc, &trace)?;
            enc.finish()?.flush()
        } else {
            let mut buffered = buffered;
            serde_json::to_writer(&mut buffered, &trace)?;
            buffered.flush()
        }
    })?;
    Ok(())
}
