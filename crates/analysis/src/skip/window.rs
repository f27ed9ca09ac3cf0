//! The window skip-stats analyses: per GPU, never joined across devices (the GPU with
//! the most steady GPU time where there are several), over the steps' own span where the
//! device or the host keeps them.

use std::collections::BTreeMap;

use trace_model::{Capture, GpuActivity, Nanos};

use super::{DeviceSteps, StepMetrics};
use crate::budget::Window;
use crate::steps::{Spread, Steps};

/// The analysed window and the GPU it is drawn on.
pub(super) struct AnalysedWindow {
    /// Steady GPU time per device ordinal.
    pub per_device: BTreeMap<i64, i64>,
    /// The GPU the window is drawn on, where steady work runs on several.
    pub window_device: Option<i64>,
    /// The window; none where no steady step holds GPU activity.
    pub window: Option<Window>,
    /// The steps the window's GPU keeps on its own timeline, where it keeps any.
    pub device_steps: Option<DeviceSteps>,
}

/// Draws the analysed window over the steady steps (`steady`); `host_ranges` says the
/// steps are the host's own ranges (annotations or markers).
pub(super) fn analysed_window(
    capture: &Capture,
    steps: &Steps,
    steady: &dyn Fn(usize) -> bool,
    host_ranges: bool,
) -> AnalysedWindow {
    let in_steps = || {
        capture
            .activities()
            .iter()
            .zip(&steps.activity_step)
            .filter(|(_, s)| s.is_some_and(|s| steady(s as usize)))
            .map(|(a, _)| a)
    };
    // Windows are per GPU, never joined across devices: with several GPUs in one
    // capture, the window is the one of the GPU with the most steady GPU time.
    let mut per_device: BTreeMap<i64, i64> = BTreeMap::new();
    for a in in_steps() {
        let d = capture.device(capture.stream(a.stream).device).ordinal;
        *per_device.entry(d).or_insert(0) += a.dur.0;
    }
    let window_device = (per_device.len() > 1)
        .then(|| {
            per_device
                .iter()
                .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
                .map(|(d, _)| *d)
        })
        .flatten();
    let on_window_device = |a: &&GpuActivity| {
        window_device.is_none_or(|d| capture.device(capture.stream(a.stream).device).ordinal == d)
    };
    let gpu_window = match (
        in_steps().filter(on_window_device).map(|a| a.start).min(),
        in_steps().filter(on_window_device).map(|a| a.end()).max(),
    ) {
        (Some(start), Some(end)) => Some(Window { start, end }),
        _ => None,
    };
    // The step is the step: where the steps are the host's own ranges (annotations or
    // markers), the window runs over their wall time, so the host-only time before the
    // first and after the last GPU activity counts as idle.
    let mut steady_steps = (0..steps.steps.len())
        .filter(|&i| steady(i))
        .map(|i| &steps.steps[i]);
    let first_steady = steady_steps.next();
    let last_steady = steady_steps.next_back().or(first_steady);
    // Where the host runs ahead of the GPU, the step is timed by the GPU span of its work:
    // the window is the GPU's, not joined with host ranges that start steps early.
    let host_window = host_ranges && !host_runs_ahead(capture, steps, steady);
    // Where the device keeps its own steps (TensorFlow's per-GPU `Steps` line), the
    // window device's steps are the step: the capture's steps are their union over the
    // GPUs, which may run their steps far apart.
    let window_ordinal = window_device.or_else(|| per_device.keys().next().copied());
    let own_steps = window_ordinal.and_then(|ordinal| device_steps_span(capture, ordinal));
    let device_steps = window_ordinal
        .filter(|_| own_steps.is_some())
        .map(|ordinal| device_steps_of(capture, ordinal));
    let window = gpu_window.map(
        |g| match (own_steps, host_window, first_steady, last_steady) {
            (Some(own), ..) => own,
            (None, true, Some(first), Some(last)) => Window {
                start: g.start.min(first.range.start),
                end: g.end.max(last.range.end),
            },
            _ => g,
        },
    );
    AnalysedWindow {
        per_device,
        window_device,
        window,
        device_steps,
    }
}

/// First start to last end of the steps the device of `ordinal` keeps on its own timeline
/// (`TraceMeta::device_steps`), if it keeps any.
fn device_steps_span(capture: &Capture, ordinal: i64) -> Option<Window> {
    let mut own = capture.meta().device_steps.iter().filter(|(d, _)| {
        capture
            .devices()
            .iter()
            .any(|dev| dev.id == *d && dev.ordinal == ordinal)
    });
    let first = own.next()?;
    let (start, end) = own.fold((first.1.start, first.1.end), |(s, e), (_, step)| {
        (s.min(step.start), e.max(step.end))
    });
    (end > start).then_some(Window { start, end })
}

/// The steps GPU `ordinal` keeps on its own timeline, in start order, each with the span
/// of that GPU's activities that start in it.
fn device_steps_of(capture: &Capture, ordinal: i64) -> DeviceSteps {
    let on_device = |d: trace_model::DeviceId| capture.device(d).ordinal == ordinal;
    let mut steps: Vec<StepMetrics> = capture
        .meta()
        .device_steps
        .iter()
        .filter(|(d, _)| capture.devices().iter().any(|dev| dev.id == *d) && on_device(*d))
        .map(|(_, s)| StepMetrics {
            number: s.number,
            range: Window {
                start: s.start,
                end: s.end,
            },
            gpu_range: None,
            skip: None,
        })
        .collect();
    steps.sort_by_key(|m| (m.range.start, m.number));
    for a in capture.activities() {
        if !on_device(capture.stream(a.stream).device) {
            continue;
        }
        let p = steps.partition_point(|m| m.range.start <= a.start);
        let Some(m) = p.checked_sub(1).map(|p| &mut steps[p]) else {
            continue;
        };
        if a.start >= m.range.end {
            continue;
        }
        m.gpu_range = Some(match m.gpu_range {
            Some(g) => Window {
                start: g.start.min(a.start),
                end: g.end.max(a.end()),
            },
            None => Window {
                start: a.start,
                end: a.end(),
            },
        });
    }
    let mut spans: BTreeMap<i64, Vec<Nanos>> = BTreeMap::new();
    for (d, s) in &capture.meta().device_steps {
        if capture.devices().iter().any(|dev| dev.id == *d) {
            spans
                .entry(capture.device(*d).ordinal)
                .or_default()
                .push(s.end - s.start);
        }
    }
    let per_gpu = spans
        .into_iter()
        .filter_map(|(o, d)| Some((o, d.len(), Spread::of(d.iter().copied())?)))
        .collect();
    DeviceSteps {
        ordinal,
        steps,
        per_gpu,
    }
}

/// Whether the host runs ahead of the GPU over the steady steps
/// (`diagnosis::runs_ahead` on each step's host range and the GPU span of the
/// activities placed in it).
fn host_runs_ahead(capture: &Capture, steps: &Steps, steady: &dyn Fn(usize) -> bool) -> bool {
    let mut gpu: Vec<Option<Window>> = vec![None; steps.steps.len()];
    for (a, s) in capture.activities().iter().zip(&steps.activity_step) {
        if let Some(s) = s {
            let g = &mut gpu[*s as usize];
            *g = Some(match *g {
                Some(w) => Window {
                    start: w.start.min(a.start),
                    end: w.end.max(a.end()),
                },
                None => Window {
                    start: a.start,
                    end: a.end(),
                },
            });
        }
    }
    let idx: Vec<usize> = (0..steps.steps.len()).filter(|&i| steady(i)).collect();
    let Some(host) = Spread::of(idx.iter().map(|&i| steps.steps[i].duration())) else {
        return false;
    };
    let g = Spread::of(idx.iter().filter_map(|&i| gpu[i].map(|w| w.span())));
    let lag = Spread::of(
        idx.iter()
            .filter_map(|&i| gpu[i].map(|w| w.end - steps.steps[i].range.end)),
    );
    crate::diagnosis::runs_ahead(host, g, lag)
}
