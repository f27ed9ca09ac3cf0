//! A structural validator for Chrome trace output: required fields per phase, flow ids
//! with both ends, and a `thread_name` for every thread that holds GPU slices.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use chrome_reader::{Id, RawEvent};

use crate::Error;
use crate::event::is_gpu_slice;

/// What the validator found. An empty issue list means the trace is well-formed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ValidationReport {
    /// Events in `traceEvents`.
    pub events: usize,
    /// Kernel, memcpy and memset events.
    pub gpu_slices: usize,
    /// Events lacking a field their phase requires: (event index, phase, field).
    pub missing_fields: Vec<(usize, String, &'static str)>,
    /// Flow ids (as JSON text) with a start but no end, or an end but no start.
    pub one_sided_flows: BTreeSet<String>,
    /// (pid, tid) of threads holding GPU slices without a `thread_name`.
    pub unnamed_gpu_threads: BTreeSet<(String, String)>,
}

impl ValidationReport {
    /// Whether nothing is wrong.
    pub fn is_clean(&self) -> bool {
        self.missing_fields.is_empty()
            && self.one_sided_flows.is_empty()
            && self.unnamed_gpu_threads.is_empty()
    }
}

/// Validates the trace file at `path`.
pub fn validate_file(path: &Path) -> Result<ValidationReport, Error> {
    let mut v = Validator::default();
    chrome_reader::read_raw_file(path, |ev| {
        v.event(&ev);
        Ok(())
    })?;
    Ok(v.finish())
}

/// Validates a trace held as JSON text.
pub fn validate_json(json: &str, name: &Path) -> Result<ValidationReport, Error> {
    let mut v = Validator::default();
    chrome_reader::read_raw_events(json.as_bytes(), name, |ev| {
        v.event(&ev);
        Ok(())
    })?;
    Ok(v.finish())
}

#[derive(Default)]
struct Validator {
    report: ValidationReport,
    /// Flow id -> (has start, has end).
    flows: BTreeMap<String, (bool, bool)>,
    gpu_threads: BTreeSet<(String, String)>,
    named_threads: BTreeSet<(String, String)>,
}

fn id_text(id: &Option<Id<'_>>) -> String {
    id.as_ref().map(ToString::to_string).unwrap_or_default()
}

impl Validator {
    fn event(&mut self, ev: &RawEvent<'_>) {
        self.report.events += 1;
        let required: &[&'static str] = match &*ev.ph {
            "X" => &["name", "ts", "dur", "pid", "tid"],
            "B" | "E" => &["ts", "pid", "tid"],
            "i" | "I" => &["name", "ts"],
            "M" => &["name", "pid", "args"],
            "s" | "t" | "f" => &["id", "ts", "pid", "tid"],
            "C" => &["name", "ts", "pid", "args"],
            _ => &[],
        };
        for &field in required {
            let present = match field {
                "name" => ev.name.is_some(),
                "ts" => ev.ts.is_some(),
                "dur" => ev.dur.is_some(),
                "pid" => ev.pid.is_some(),
                "tid" => ev.tid.is_some(),
                "id" => ev.id.is_some(),
                "args" => ev.args.is_some(),
                _ => true,
            };
            if !present {
                self.report
                    .missing_fields
                    .push((ev.index, ev.ph.to_string(), field));
            }
        }
        let key = (id_text(&ev.pid), id_text(&ev.tid));
        match &*ev.ph {
            "s" | "f" if ev.id.is_some() => {
                let entry = self.flows.entry(id_text(&ev.id)).or_default();
                if &*ev.ph == "s" {
                    entry.0 = true;
                } else {
                    entry.1 = true;
                }
            }
            "M" if ev.name.as_deref() == Some("thread_name") => {
                self.named_threads.insert(key.clone());
            }
            _ => {}
        }
        if is_gpu_slice(ev.cat.as_deref()) {
            self.report.gpu_slices += 1;
            self.gpu_threads.insert(key);
        }
    }

    fn finish(mut self) -> ValidationReport {
        self.report.one_sided_flows = self
            .flows
            .into_iter()
            .filter(|(_, (s, f))| !(s & f))
            .map(|(id, _)| id)
            .collect();
        self.report.unnamed_gpu_threads = self
            .gpu_threads
            .difference(&self.named_threads)
            .cloned()
            .collect();
        self.report
    }
}
