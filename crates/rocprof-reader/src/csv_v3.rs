//! rocprofv3 CSV output (`--output-format csv`): one file per record kind, named
//! `<prefix>_kernel_trace.csv`, `<prefix>_hip_api_trace.csv`, `<prefix>_hsa_api_trace.csv`,
//! `<prefix>_memory_copy_trace.csv`, `<prefix>_marker_api_trace.csv`, `<prefix>_agent_info.csv`
//! (the prefix is the process id unless the user chose another).
//!
//! A file's kind is told by its header, not its name, so any one file loads on its own;
//! a directory loads every file with one of those names, one capture per prefix. Kernel
//! rows come with and without `Stream_Id` (newer rocprofv3 writes it); the stream is the
//! HIP stream where recorded, else the HSA queue. `Grid_Size_*` count work-items
//! (rocprofv3's grid is the total work-items, grid × workgroup), unlike CUDA's grid in
//! blocks; trace-model keeps no launch geometry, so neither is stored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use trace_model::{DeviceProperties, Format};

use crate::model::{Activity, Host, Tables, agent_number, api_kind, copy_direction};
use crate::table::{CsvFile, Row};
use crate::{Error, Process};

/// The file names (after the prefix) that make up a rocprofv3 CSV capture.
pub(crate) const SUFFIXES: &[&str] = &[
    "kernel_trace.csv",
    "hip_api_trace.csv",
    "hsa_api_trace.csv",
    "memory_copy_trace.csv",
    "marker_api_trace.csv",
    "rccl_api_trace.csv",
    "agent_info.csv",
];

/// What a rocprofv3 CSV file holds, from its header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FileKind {
    Kernel,
    Api,
    Copy,
    Agents,
}

/// The kind of a rocprofv3 CSV file from its header's column names, `None` for a file
/// that is not a trace rocprofv3 writes (statistics, counter collection, anything else).
pub(crate) fn kind_of_header(header: &[String]) -> Option<FileKind> {
    let has = |name: &str| header.iter().any(|h| h.eq_ignore_ascii_case(name));
    let timed = has("Start_Timestamp") && has("End_Timestamp");
    if timed && has("Kernel_Name") {
        Some(FileKind::Kernel)
    } else if timed && has("Function") && has("Domain") {
        Some(FileKind::Api)
    } else if timed && has("Direction") && has("Destination_Agent_Id") {
        Some(FileKind::Copy)
    } else if (has("Node_Id") || has("Logical_Node_Id")) && has("Agent_Type") {
        Some(FileKind::Agents)
    } else {
        None
    }
}

/// The prefix of a file name that is part of a capture (`3985093` of
/// `3985093_kernel_trace.csv`, empty for `kernel_trace.csv`).
pub(crate) fn capture_prefix(name: &str) -> Option<&str> {
    SUFFIXES.iter().find_map(|suffix| {
        let prefix = name.strip_suffix(suffix)?;
        match prefix.strip_suffix('_') {
            Some(prefix) => Some(prefix),
            None => prefix.is_empty().then_some(""),
        }
    })
}

/// Loads one CSV file as a capture of its own.
pub(crate) fn load_file(path: &Path) -> Result<Vec<Process>, Error> {
    let mut reader = Reader::new();
    reader.read(path, true)?;
    Ok(vec![reader.finish(path)])
}

/// Loads every capture file in a directory, one capture per file-name prefix.
pub(crate) fn load_dir(dir: &Path) -> Result<Vec<Process>, Error> {
    let mut groups: BTreeMap<String, Vec<PathBuf>> = BTreeMap::new();
    for path in crate::dir_files(dir)? {
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(prefix) = capture_prefix(name) {
            groups.entry(prefix.to_owned()).or_default().push(path);
        }
    }
    if groups.is_empty() {
        return Err(Error::NotRocprof {
            path: dir.to_owned(),
            why: format!("no file named *_{{{}}}", SUFFIXES.join(",")),
        });
    }
    let mut out = Vec::new();
    for files in groups.values() {
        let mut reader = Reader::new();
        // Agent descriptions first, so devices get their properties before any row.
        let (agents, traces): (Vec<_>, Vec<_>) = files
            .iter()
            .partition(|p| p.to_string_lossy().ends_with("agent_info.csv"));
        for path in agents.into_iter().chain(traces) {
            reader.read(path, false)?;
        }
        out.push(reader.finish(dir));
    }
    Ok(out)
}

struct Reader {
    tables: Tables,
    pids: Vec<i64>,
}

impl Reader {
    fn new() -> Reader {
        Reader {
            tables: Tables::new(Format::RocprofCsv),
            pids: Vec::new(),
        }
    }

    /// Reads one file into the capture; `alone` says it was asked for by name (a file
    /// of no known kind is then an error, not skipped).
    fn read(&mut self, path: &Path, alone: bool) -> Result<(), Error> {
        let mut file = CsvFile::open(path)?;
        let Some(kind) = kind_of_header(file.header()) else {
            if alone {
                return Err(Error::NotRocprof {
                    path: path.to_owned(),
                    why: format!(
                        "the header ({}) is not that of a rocprofv3 kernel, API, memory-copy \
                         or agent file",
                        trace_model::limits::names_shown(file.header())
                    ),
                });
            }
            let place = path.display().to_string();
            self.tables.b.diagnostics.add(
                "rocprof-csv-skipped",
                || "CSV files of the capture whose header is not a trace were skipped".to_owned(),
                || place,
            );
            return Ok(());
        };
        match kind {
            FileKind::Kernel => self.kernels(&mut file),
            FileKind::Api => self.api(&mut file),
            FileKind::Copy => self.copies(&mut file),
            FileKind::Agents => self.agents(&mut file),
        }
    }

    fn kernels(&mut self, file: &mut CsvFile) -> Result<(), Error> {
        let agent = file.required("Agent_Id")?;
        let queue = file.required("Queue_Id")?;
        let stream = file.optional("Stream_Id");
        let name = file.required("Kernel_Name")?;
        let correlation = file.required("Correlation_Id")?;
        let start = file.required("Start_Timestamp")?;
        let end = file.required("End_Timestamp")?;
        let tables = &mut self.tables;
        file.rows(|row| {
            let device = agent_id(row, agent)?;
            let (ordinal, label) = match stream {
                Some(s) => (row.int(s)?, "Stream"),
                None => (row.int(queue)?, "Queue"),
            };
            let stream_name = format!("{label} {ordinal}");
            tables.stream(device, ordinal, Some(&stream_name));
            tables.push_activity(Activity {
                device,
                stream: ordinal,
                start: row.uint(start)?,
                end: row.uint(end)?,
                name: row.str(name),
                correlation: Some(row.uint(correlation)?),
                copy: None,
                bytes: None,
            });
            Ok(())
        })
    }

    fn api(&mut self, file: &mut CsvFile) -> Result<(), Error> {
        let domain = file.required("Domain")?;
        let function = file.required("Function")?;
        let pid = file.required("Process_Id")?;
        let tid = file.required("Thread_Id")?;
        let correlation = file.required("Correlation_Id")?;
        let start = file.required("Start_Timestamp")?;
        let end = file.required("End_Timestamp")?;
        let (tables, pids) = (&mut self.tables, &mut self.pids);
        file.rows(|row| {
            let process = row.int(pid)?;
            if !pids.contains(&process) {
                pids.push(process);
            }
            tables.push_host(Host {
                pid: process,
                tid: row.int(tid)?,
                start: row.uint(start)?,
                end: row.uint(end)?,
                name: row.str(function),
                kind: api_kind(row.str(domain)),
                correlation: Some(row.uint(correlation)?),
            });
            Ok(())
        })
    }

    fn copies(&mut self, file: &mut CsvFile) -> Result<(), Error> {
        let direction = file.required("Direction")?;
        let source = file.required("Source_Agent_Id")?;
        let destination = file.required("Destination_Agent_Id")?;
        let correlation = file.required("Correlation_Id")?;
        let start = file.required("Start_Timestamp")?;
        let end = file.required("End_Timestamp")?;
        let stream = file.optional("Stream_Id");
        let bytes = file.optional("Bytes").or(file.optional("Copy_Bytes"));
        let tables = &mut self.tables;
        file.rows(|row| {
            let name = row.str(direction);
            let dir = copy_direction(name);
            // The GPU end of the copy: the source when copying to the host.
            let device = if dir == trace_model::MemcpyDirection::DeviceToHost {
                agent_id(row, source)?
            } else {
                agent_id(row, destination)?
            };
            // Copies without a recorded stream share one per device, ordinal -1.
            let (ordinal, stream_name) = match row.opt_int(stream)? {
                Some(s) => (s, format!("Stream {s}")),
                None => (-1, "memory copies".to_owned()),
            };
            tables.stream(device, ordinal, Some(&stream_name));
            let bytes = match bytes {
                Some(b) => Some(row.uint(b)?),
                None => None,
            };
            tables.push_activity(Activity {
                device,
                stream: ordinal,
                start: row.uint(start)?,
                end: row.uint(end)?,
                name,
                correlation: Some(row.uint(correlation)?),
                copy: Some(dir),
                bytes,
            });
            Ok(())
        })
    }

    fn agents(&mut self, file: &mut CsvFile) -> Result<(), Error> {
        // `Agent N` in the trace files is the agent's logical node id (rocprofv3's default
        // agent index); the absolute node id is only a fallback.
        let node = file
            .optional("Logical_Node_Id")
            .or(file.optional("Node_Id"));
        let kind = file.optional("Agent_Type");
        let name = file
            .optional("Product_Name")
            .or(file.optional("Marketing_Name"))
            .or(file.optional("Name"));
        let compute_units = file.optional("Cu_Count");
        let tables = &mut self.tables;
        file.rows(|row| {
            let is_gpu = kind.is_some_and(|k| row.str(k).to_ascii_uppercase().contains("GPU"));
            let Some(node) = node.filter(|_| is_gpu) else {
                return Ok(());
            };
            let ordinal = agent_id(row, node)?;
            let properties = DeviceProperties {
                name: name
                    .map(|n| row.str(n).to_owned())
                    .filter(|n| !n.is_empty()),
                multiprocessors: match row.opt_int(compute_units)? {
                    Some(n) => u64::try_from(n).ok(),
                    None => None,
                },
                ..DeviceProperties::default()
            };
            tables.set_device_properties(ordinal, properties);
            Ok(())
        })
    }

    fn finish(self, path: &Path) -> Process {
        let pid = match self.pids.as_slice() {
            [one] => Some(*one),
            _ => None,
        };
        Process {
            pid,
            name: None,
            rank: None,
            capture: self.tables.finish(path),
        }
    }
}

/// An agent cell: `Agent 4` (newer rocprofv3) or `4`.
fn agent_id(row: &Row<'_>, column: usize) -> Result<i64, Error> {
    let text = row.str(column);
    agent_number(text).ok_or_else(|| row.error(column, format!("`{text}` is not an agent id")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        for (name, expect) in [
            ("3985093_kernel_trace.csv", Some("3985093")),
            ("prefill_hip_api_trace.csv", Some("prefill")),
            ("kernel_trace.csv", Some("")),
            ("run_agent_info.csv", Some("run")),
            ("hip_api_stats.csv", None),
            ("xkernel_trace.csv", None),
        ] {
            assert_eq!(capture_prefix(name), expect, "{name}");
        }
    }
}
