//! rocprofv3 JSON (`--output-format json`, `<pid>_results.json`, often gzipped): one
//! `rocprofiler-sdk-tool` array of runs, each with `metadata` (pid, command), `agents`,
//! `kernel_symbols`, `strings` (the names of each buffer-record kind's operations) and
//! `buffer_records` (`kernel_dispatch`, `hip_api`, `hsa_api`, `marker_api`,
//! `memory_copy`, ...), times in nanoseconds.
//!
//! Read with typed records (only the fields the model keeps), streamed from the file.
//! Kernel dispatches, HIP/HSA API calls, marker ranges and memory copies become the
//! model's activities and host events, linked by `correlation_id.internal`; GPU agents
//! become devices (numbered by their index among GPUs) with their product name, CU count,
//! gfx version and clock. A section the reader needs that is absent, or a record that
//! does not have the shape rocprofv3 writes, is [`Error::Json`], naming the file, the
//! section and what to run instead.

use std::collections::BTreeMap;
use std::io::{BufReader, Read};
use std::path::Path;

use serde::Deserialize;
use trace_model::{DeviceProperties, Format};

use crate::model::{Activity, Host, Tables, api_kind, copy_direction};
use crate::{Error, Process};

/// Whether the file (plain or gzipped JSON) begins with rocprofv3's top-level key.
pub(crate) fn is_rocprofv3_json(path: &Path) -> bool {
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut head = Vec::with_capacity(256);
    let mut raw = BufReader::new(file);
    let mut magic = [0u8; 2];
    let Ok(n) = raw.read(&mut magic) else {
        return false;
    };
    let chained = std::io::Cursor::new(magic[..n].to_vec()).chain(raw);
    let reader: Box<dyn Read> = if magic[..n] == [0x1f, 0x8b] {
        Box::new(flate2::read::MultiGzDecoder::new(chained))
    } else {
        Box::new(chained)
    };
    if reader.take(256).read_to_end(&mut head).is_err() && head.is_empty() {
        return false;
    }
    let text = String::from_utf8_lossy(&head);
    let text = text.trim_start();
    text.strip_prefix('{')
        .is_some_and(|rest| rest.trim_start().starts_with("\"rocprofiler-sdk-tool\""))
}

#[derive(Deserialize)]
struct Top {
    #[serde(rename = "rocprofiler-sdk-tool")]
    tool: Option<Vec<Run>>,
}

#[derive(Deserialize)]
struct Run {
    metadata: Option<Metadata>,
    agents: Option<Vec<Agent>>,
    kernel_symbols: Option<Vec<Symbol>>,
    strings: Option<Strings>,
    buffer_records: Option<Buffers>,
}

#[derive(Deserialize)]
struct Metadata {
    pid: Option<i64>,
    #[serde(default)]
    command: Vec<String>,
}

#[derive(Deserialize, Clone, Copy)]
struct Handle {
    handle: u64,
}

#[derive(Deserialize)]
struct Agent {
    id: Handle,
    #[serde(rename = "type")]
    kind: i64,
    name: Option<String>,
    product_name: Option<String>,
    cu_count: Option<u64>,
    gfx_target_version: Option<i64>,
    logical_node_type_id: Option<i64>,
    max_engine_clk_fcompute: Option<u64>,
}

#[derive(Deserialize)]
struct Symbol {
    kernel_id: u64,
    formatted_kernel_name: Option<String>,
    demangled_kernel_name: Option<String>,
    kernel_name: Option<String>,
}

#[derive(Deserialize)]
struct Strings {
    #[serde(default)]
    buffer_records: Vec<KindNames>,
}

#[derive(Deserialize)]
struct KindNames {
    kind: String,
    #[serde(default)]
    operations: Vec<String>,
}

#[derive(Deserialize)]
struct Buffers {
    #[serde(default)]
    kernel_dispatch: Vec<Dispatch>,
    #[serde(default)]
    hip_api: Vec<Api>,
    #[serde(default)]
    hsa_api: Vec<Api>,
    #[serde(default)]
    marker_api: Vec<Api>,
    #[serde(default)]
    memory_copy: Vec<Copy>,
}

#[derive(Deserialize)]
struct Correlation {
    internal: u64,
}

#[derive(Deserialize)]
struct Dispatch {
    thread_id: Option<i64>,
    correlation_id: Correlation,
    start_timestamp: u64,
    end_timestamp: u64,
    dispatch_info: DispatchInfo,
    stream_id: Option<Handle>,
}

#[derive(Deserialize)]
struct DispatchInfo {
    agent_id: Handle,
    queue_id: Handle,
    kernel_id: u64,
}

#[derive(Deserialize)]
struct Api {
    kind: usize,
    operation: usize,
    thread_id: i64,
    correlation_id: Correlation,
    start_timestamp: u64,
    end_timestamp: u64,
}

#[derive(Deserialize)]
struct Copy {
    kind: usize,
    operation: usize,
    correlation_id: Correlation,
    start_timestamp: u64,
    end_timestamp: u64,
    dst_agent_id: Handle,
    src_agent_id: Handle,
    bytes: Option<u64>,
    stream_id: Option<Handle>,
}

fn json_error(path: &Path, where_: impl Into<String>, message: impl Into<String>) -> Error {
    Error::Json {
        path: path.to_owned(),
        where_: where_.into(),
        message: message.into(),
    }
}

/// Reads a rocprofv3 JSON file: one capture per run (process).
pub(crate) fn load(path: &Path) -> Result<Vec<Process>, Error> {
    let file = std::fs::File::open(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    let mut raw = BufReader::with_capacity(1 << 20, file);
    let mut magic = [0u8; 2];
    let n = raw.read(&mut magic).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })?;
    let chained = std::io::Cursor::new(magic[..n].to_vec()).chain(raw);
    let reader: Box<dyn Read> = if magic[..n] == [0x1f, 0x8b] {
        Box::new(BufReader::new(flate2::read::MultiGzDecoder::new(chained)))
    } else {
        Box::new(chained)
    };
    let top: Top = serde_json::from_reader(reader).map_err(|e| {
        json_error(
            path,
            format!("line {}, column {}", e.line(), e.column()),
            e.to_string(),
        )
    })?;
    let runs = top
        .tool
        .ok_or_else(|| json_error(path, "top level", "no \"rocprofiler-sdk-tool\" array"))?;
    let mut out = Vec::new();
    for (index, run) in runs.into_iter().enumerate() {
        out.push(read_run(path, index, run)?);
    }
    Ok(out)
}

fn read_run(path: &Path, index: usize, run: Run) -> Result<Process, Error> {
    let missing =
        |section: &str, why: &str| json_error(path, run_at(index, section), format!("absent{why}"));
    let buffers = run
        .buffer_records
        .ok_or_else(|| missing("buffer_records", ": no dispatch, API or copy records"))?;
    let needs_agents = !buffers.kernel_dispatch.is_empty() || !buffers.memory_copy.is_empty();
    let agents = match run.agents {
        Some(agents) => agents,
        None if needs_agents => {
            return Err(missing(
                "agents",
                ": the dispatches and copies name agents it would describe",
            ));
        }
        None => Vec::new(),
    };
    let symbols = match run.kernel_symbols {
        Some(symbols) => symbols,
        None if !buffers.kernel_dispatch.is_empty() => {
            return Err(missing(
                "kernel_symbols",
                ": the kernel dispatches name kernels by its ids",
            ));
        }
        None => Vec::new(),
    };
    let kinds = run.strings.map(|s| s.buffer_records).unwrap_or_default();
    let (pid, command) = match run.metadata {
        Some(m) => (m.pid, (!m.command.is_empty()).then(|| m.command.join(" "))),
        None => (None, None),
    };

    let mut tables = Tables::new(Format::RocprofJson);
    let (devices, described) = gpu_agents(&agents);
    let site = RunSite {
        path,
        index,
        devices,
    };
    push_api_calls(&mut tables, &buffers, &kinds, pid.unwrap_or(0));
    push_dispatches(&mut tables, &site, &buffers, &kernel_names(&symbols))?;
    push_copies(&mut tables, &site, &buffers, &kinds)?;
    describe_used_gpus(&mut tables, &buffers, &site.devices, described);
    note_empty_sections(&mut tables, &buffers, &site);
    tables.b.meta.producer = Some("rocprofv3 JSON (rocprofiler-sdk-tool)".to_owned());
    Ok(Process {
        pid,
        name: command,
        rank: None,
        capture: tables.finish(path),
    })
}

/// Where a section of run `index` is in the file, for messages.
fn run_at(index: usize, section: &str) -> String {
    format!("rocprofiler-sdk-tool[{index}].{section}")
}

/// One run of the file: where it is, and its GPU agents by handle (the device number,
/// the index among GPUs unless the agent gives its own).
struct RunSite<'a> {
    path: &'a Path,
    index: usize,
    devices: BTreeMap<u64, i64>,
}

impl RunSite<'_> {
    /// The device of `agent`, named by record `i` of `section`; an error where the agent
    /// is not a GPU of the agents section.
    fn device_of(&self, section: &str, i: usize, agent: Handle) -> Result<i64, Error> {
        self.devices.get(&agent.handle).copied().ok_or_else(|| {
            json_error(
                self.path,
                format!("{}[{i}]", run_at(self.index, section)),
                format!("agent {} is not a GPU of the agents section", agent.handle),
            )
        })
    }
}

/// The GPU agents by handle (their device number), and what each GPU's agent records.
fn gpu_agents(agents: &[Agent]) -> (BTreeMap<u64, i64>, BTreeMap<i64, DeviceProperties>) {
    let mut devices: BTreeMap<u64, i64> = BTreeMap::new();
    let mut described: BTreeMap<i64, DeviceProperties> = BTreeMap::new();
    for (position, agent) in agents.iter().filter(|a| a.kind == 2).enumerate() {
        let ordinal = agent.logical_node_type_id.unwrap_or(position as i64);
        devices.insert(agent.id.handle, ordinal);
        let name = agent
            .product_name
            .clone()
            .filter(|n| !n.is_empty())
            .or_else(|| agent.name.clone());
        let properties = DeviceProperties {
            name,
            compute_capability: agent
                .gfx_target_version
                .filter(|v| *v > 0)
                .map(|v| (v / 10000, (v / 100) % 100)),
            multiprocessors: agent.cu_count,
            clock_rate_khz: agent.max_engine_clk_fcompute.map(|mhz| mhz * 1000),
            ..DeviceProperties::default()
        };
        described.insert(ordinal, properties);
    }
    (devices, described)
}

/// Each kernel's name by id: the first non-empty of its formatted, demangled and raw names.
fn kernel_names(symbols: &[Symbol]) -> BTreeMap<u64, &str> {
    symbols
        .iter()
        .map(|s| {
            let name = [
                &s.formatted_kernel_name,
                &s.demangled_kernel_name,
                &s.kernel_name,
            ]
            .into_iter()
            .flatten()
            .find(|n| !n.is_empty())
            .map_or("(unnamed kernel)", String::as_str);
            (s.kernel_id, name)
        })
        .collect()
}

/// The name of operation `op` of buffer-record kind `kind`, from the `strings` section.
fn operation(kinds: &[KindNames], kind: usize, op: usize) -> Option<&str> {
    kinds.get(kind)?.operations.get(op).map(String::as_str)
}

/// The HIP, HSA and marker API records as host events of process `pid` (markers are
/// annotations).
fn push_api_calls(tables: &mut Tables, buffers: &Buffers, kinds: &[KindNames], pid: i64) {
    for (section, records) in [
        ("hip_api", &buffers.hip_api),
        ("hsa_api", &buffers.hsa_api),
        ("marker_api", &buffers.marker_api),
    ] {
        for record in records {
            let domain = kinds.get(record.kind).map_or("", |k| k.kind.as_str());
            let name = operation(kinds, record.kind, record.operation).map_or_else(
                || format!("{domain} operation {}", record.operation),
                str::to_owned,
            );
            let kind = if section == "marker_api" {
                trace_model::HostKind::Annotation
            } else {
                api_kind(domain)
            };
            tables.push_host(Host {
                pid,
                tid: record.thread_id,
                start: record.start_timestamp,
                end: record.end_timestamp,
                name: &name,
                kind,
                correlation: Some(record.correlation_id.internal),
            });
        }
    }
}

/// The kernel dispatches as GPU activities, on their stream (or, without one, their
/// queue); an error where one names an unknown agent or kernel.
fn push_dispatches(
    tables: &mut Tables,
    site: &RunSite,
    buffers: &Buffers,
    names: &BTreeMap<u64, &str>,
) -> Result<(), Error> {
    let section = "buffer_records.kernel_dispatch";
    for (i, d) in buffers.kernel_dispatch.iter().enumerate() {
        let info = &d.dispatch_info;
        let device = site.device_of(section, i, info.agent_id)?;
        let name = names.get(&info.kernel_id).copied().ok_or_else(|| {
            json_error(
                site.path,
                format!("{}[{i}]", run_at(site.index, section)),
                format!("kernel_id {} is not in kernel_symbols", info.kernel_id),
            )
        })?;
        let (stream, stream_name) = match d.stream_id.map(|s| s.handle).filter(|&s| s != 0) {
            Some(s) => (s as i64, format!("Stream {s}")),
            None => (
                info.queue_id.handle as i64,
                format!("Queue {}", info.queue_id.handle),
            ),
        };
        let _ = d.thread_id;
        tables.stream(device, stream, Some(&stream_name));
        tables.push_activity(Activity {
            device,
            stream,
            start: d.start_timestamp,
            end: d.end_timestamp,
            name,
            correlation: Some(d.correlation_id.internal),
            copy: None,
            bytes: None,
        });
    }
    Ok(())
}

/// The memory copies as GPU activities on the GPU end of each copy; an error where
/// neither end is a GPU of the agents section.
fn push_copies(
    tables: &mut Tables,
    site: &RunSite,
    buffers: &Buffers,
    kinds: &[KindNames],
) -> Result<(), Error> {
    for (i, c) in buffers.memory_copy.iter().enumerate() {
        let name = operation(kinds, c.kind, c.operation).map_or_else(
            || format!("MEMORY_COPY operation {}", c.operation),
            str::to_owned,
        );
        let direction = copy_direction(&name);
        // The GPU end of the copy: the destination when it is a GPU, else the source.
        let agent = if site.devices.contains_key(&c.dst_agent_id.handle) {
            c.dst_agent_id
        } else {
            c.src_agent_id
        };
        let device = site.device_of("buffer_records.memory_copy", i, agent)?;
        let stream = c.stream_id.map_or(-1, |s| s.handle as i64);
        tables.stream(device, stream, Some("memory copies"));
        tables.push_activity(Activity {
            device,
            stream,
            start: c.start_timestamp,
            end: c.end_timestamp,
            name: &name,
            correlation: Some(c.correlation_id.internal),
            copy: Some(direction),
            bytes: c.bytes,
        });
    }
    Ok(())
}

/// The GPUs with work get what their agent records (the others are not devices of the
/// capture, as in every other format).
fn describe_used_gpus(
    tables: &mut Tables,
    buffers: &Buffers,
    devices: &BTreeMap<u64, i64>,
    described: BTreeMap<i64, DeviceProperties>,
) {
    let used: std::collections::BTreeSet<i64> = buffers
        .kernel_dispatch
        .iter()
        .map(|d| d.dispatch_info.agent_id)
        .chain(
            buffers
                .memory_copy
                .iter()
                .flat_map(|c| [c.dst_agent_id, c.src_agent_id]),
        )
        .filter_map(|a| devices.get(&a.handle).copied())
        .collect();
    for (ordinal, properties) in described {
        if used.contains(&ordinal) {
            tables.set_device_properties(ordinal, properties);
        }
    }
}

/// The `rocprof-json-sections-empty` diagnostic: the record sections the run left empty
/// (rocprofv3 traces them only when asked to).
fn note_empty_sections(tables: &mut Tables, buffers: &Buffers, site: &RunSite) {
    let absent: Vec<&str> = [
        ("HIP API calls", buffers.hip_api.is_empty()),
        ("HSA API calls", buffers.hsa_api.is_empty()),
        ("marker ranges", buffers.marker_api.is_empty()),
        ("memory copies", buffers.memory_copy.is_empty()),
    ]
    .into_iter()
    .filter(|(_, empty)| *empty)
    .map(|(what, _)| what)
    .collect();
    if !absent.is_empty() {
        let shown = site.path.display().to_string();
        tables.b.diagnostics.add(
            "rocprof-json-sections-empty",
            || {
                format!(
                    "the run recorded no {}: rocprofv3 was run without the options that trace them (--sys-trace, --hip-trace, --marker-trace, --memory-copy-trace)",
                    absent.join(", ")
                )
            },
            || format!("{shown}: {}", run_at(site.index, "buffer_records")),
        );
    }
}
