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
use trace_model::Nanos;

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

/// The longest step a report may state: one day. A step is a training or inference
/// iteration; a longer one is not a figure a capture gives.
const MAX_STEP: Nanos = Nanos(86_400 * 1_000_000_000);

/// The most GPUs one capture of a report may name (or show activity on): far above any
/// machine, and so a bound on what a crafted count makes compare hold.
const MAX_DEVICES: usize = 1 << 16;

/// Checks every figure the side takes from `inv` against its range: step durations and
/// times in 0..=[`MAX_STEP`] (a mean step above zero), device counts and GPU models at
/// most [`MAX_DEVICES`] per capture, shares in 0..=1. The error names the field, as a
/// path into report.json, and the value.
fn validate(inv: &Investigation) -> Result<(), String> {
    let duration = |field: String, d: Nanos, positive: bool| -> Result<(), String> {
        let low = if positive { 1 } else { 0 };
        if d.0 < low || d > MAX_STEP {
            return Err(format!(
                "{field} is {} ns: out of range (a duration of {} to {} ns)",
                d.0, low, MAX_STEP.0
            ));
        }
        Ok(())
    };
    for (i, c) in inv.captures.iter().enumerate() {
        let at = format!("captures[{i}]");
        for (j, &d) in c.steady_steps.iter().enumerate() {
            duration(format!("{at}.steady_steps[{j}]"), d, false)?;
        }
        if let Some(d) = c.window_mean_step {
            duration(format!("{at}.window_mean_step"), d, false)?;
        }
        if c.devices_with_activity > MAX_DEVICES {
            return Err(format!(
                "{at}.devices_with_activity is {}: out of range (at most {MAX_DEVICES} per capture)",
                c.devices_with_activity
            ));
        }
        for (field, n) in [
            ("gpu_models", c.gpu_models.len()),
            ("gpu_vendors", c.gpu_vendors.len()),
        ] {
            if n > MAX_DEVICES {
                return Err(format!(
                    "{at}.{field} has {n} entries: out of range (at most {MAX_DEVICES} per capture)"
                ));
            }
        }
    }
    if let investigation::Advice::Ranked(r) = &inv.advice {
        let at = "advice";
        if r.steps < 0 {
            return Err(format!(
                "{at}.steps is {}: a count cannot be negative",
                r.steps
            ));
        }
        duration(format!("{at}.mean_step"), r.mean_step, true)?;
        if r.span.0 < 0 {
            return Err(format!(
                "{at}.span is {} ns: a duration cannot be negative",
                r.span.0
            ));
        }
        for (k, c) in r.causes.iter().enumerate() {
            let at = format!("{at}.causes[{k}]");
            duration(format!("{at}.per_step"), c.per_step, false)?;
            if c.time.0 < 0 {
                return Err(format!(
                    "{at}.time is {} ns: a duration cannot be negative",
                    c.time.0
                ));
            }
            if !(0.0..=1.0).contains(&c.share) {
                return Err(format!("{at}.share is {}: out of range (0 to 1)", c.share));
            }
        }
    }
    Ok(())
}

/// The side a report.json's investigation gives: its step figures and ranked causes.
/// Every figure taken is checked against its range first (a report.json is input like any
/// other): the error names the field.
pub fn of_investigation(path: &Path, inv: &Investigation) -> Result<Side, String> {
    validate(inv)?;
    let mut side = side_of(path, inv)?;
    side.format.clone_from(&inv.format);
    side.from_report = true;
    Ok(side)
}

/// The side an investigation gives, whether investigated here or read back from a
/// report.json: the step figures of its captures and the causes it ranks, by key (the
/// same fields both ways, so both give the same comparison).
pub(crate) fn side_of(path: &Path, inv: &Investigation) -> Result<Side, String> {
    let first = inv
        .captures
        .first()
        .ok_or("the investigation has no capture")?;
    let mut side = Side::empty(path);
    for c in &inv.captures {
        side.gpu_models.extend(c.gpu_models.iter().cloned());
        side.gpu_vendors.extend(c.gpu_vendors.iter().cloned());
        side.devices += c.devices_with_activity;
        side.step_time.extend(c.steady_steps.iter().copied());
    }
    side.gpu_models.sort();
    side.gpu_vendors.sort();
    side.captures = inv.captures.len();
    side.has_steps = first.steps_origin.has_steps();
    side.step_origin = Some(first.steps_origin.clone());
    side.diagnosis = Some(first.verdict.diagnosis);
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
