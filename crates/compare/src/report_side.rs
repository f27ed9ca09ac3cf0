//! A side read from an earlier `report.json` of investigate (the serialised
//! `investigation::Investigation`, docs/report-json.md) instead of a capture: what the
//! user kept of last week's run when the trace is gone.
//!
//! The value holds every capture's steady-state step durations, its GPUs, and the ranked
//! causes with their keys and time per step, read back by type (no table is looked up by
//! its name). So a report side compares step time (with the same samples, and so the same
//! noise rule, as its capture) and predicted against realized gains; budgets, classes,
//! kernels and ops need the capture.

use std::io::Read;
use std::path::Path;

use investigation::Investigation;

use crate::{CauseKey, Side};

/// Whether `path` is an investigate report.json: a regular file whose JSON text opens
/// with a `"schema"` key (a Kineto trace opens with `"schemaVersion"` or `"traceEvents"`).
pub fn is_report(path: &Path) -> bool {
    if !path.is_file() {
        return false;
    }
    let mut head = [0u8; 64];
    let Ok(n) = std::fs::File::open(path).and_then(|mut f| f.read(&mut head)) else {
        return false;
    };
    let text: String = String::from_utf8_lossy(&head[..n])
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    text.starts_with("{\"schema\":")
}

/// The largest report.json read (a report is tens of kilobytes; this bounds a hostile one).
const MAX_REPORT_BYTES: u64 = 64 << 20;

/// Reads the side; the error names what is missing or malformed.
pub fn read(path: &Path) -> Result<Side, String> {
    let len = std::fs::metadata(path).map_err(|e| e.to_string())?.len();
    if len > MAX_REPORT_BYTES {
        return Err(format!(
            "{len} bytes: larger than any report.json ({MAX_REPORT_BYTES} bytes at most)"
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| e.to_string())?;
    let inv = investigation::from_json(&text).map_err(|e| e.to_string())?;
    of_investigation(path, &inv)
}

/// The side an investigation gives: the step figures of its captures and its ranked causes.
pub fn of_investigation(path: &Path, inv: &Investigation) -> Result<Side, String> {
    let first = inv
        .captures
        .first()
        .ok_or("the investigation has no capture")?;
    let whole = analysis::StepOrigin::WholeCapture.describe();
    let mut side = Side::empty(path);
    side.format = format!(
        "investigate report.json (schema {}): step figures and ranked causes only",
        inv.schema
    );
    side.from_report = true;
    for c in &inv.captures {
        side.gpu_models.extend(c.gpu_models.iter().cloned());
        side.gpu_vendors.extend(c.gpu_vendors.iter().cloned());
        side.devices += c.devices_with_activity;
        side.step_time.extend(c.steady_steps.iter().copied());
    }
    side.gpu_models.sort();
    side.gpu_vendors.sort();
    side.captures = inv.captures.len();
    side.has_steps = first.steps_origin != whole;
    side.step_origin = first.steps_origin.clone();
    side.steady_steps = first.steady_steps.len();
    if let investigation::Advice::Ranked(ranked) = &inv.advice {
        side.mean_step = Some(ranked.mean_step);
        for c in &ranked.causes {
            let key =
                CauseKey::from_code(&c.key).ok_or(format!("unknown cause key \"{}\"", c.key))?;
            side.causes.push((key, c.per_step));
            side.replays.insert(key, c.replay.clone());
        }
    } else {
        side.mean_step = first.window_mean_step;
    }
    Ok(side)
}
