//! The owned [`XSpace`] and its borrowing views: planes, lines, events, stats.

use std::path::Path;

use crate::Error;
use crate::decode::{self, Decoded, Fields, LineData, PlaneData, Wire};
use crate::generated as proto;
use crate::generated::x_stat;

/// A decoded XSpace capture, plus what the reader noticed about it.
///
/// The file's bytes are kept: events are parsed from them when a view asks (every byte was
/// checked when the XSpace was read), so memory stays close to the file size.
#[derive(Debug, Clone)]
pub struct XSpace {
    bytes: Vec<u8>,
    raw: Decoded,
    diagnostics: Vec<Diagnostic>,
}

/// Something odd but usable about the input, for the report's trust list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// What kind of oddity.
    pub kind: DiagnosticKind,
    /// It in a sentence.
    pub message: String,
}

/// The kinds of [`Diagnostic`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// No `/device:GPU:N` plane: a CPU-only capture.
    NoGpuDevicePlanes,
    /// A program in `/host:metadata` has no `Hlo Proto` bytes.
    MissingHloProto,
    /// The same HLO proto is stored under two or more program ids; both are kept.
    DuplicateProgram,
    /// The profiler itself recorded an error or warning in the XSpace.
    ProfilerMessage,
}

/// What a plane holds, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlaneKind {
    /// `/device:GPU:<ordinal>`.
    Gpu {
        /// The `N` of `GPU:N`.
        ordinal: u32,
    },
    /// Any other `/device:...` plane (TPU, custom).
    OtherDevice,
    /// `/host:CPU`: host threads.
    HostCpu,
    /// `/host:metadata`: HLO protos, no events.
    HostMetadata,
    /// `Task Environment` and anything else.
    Other,
}

/// Device capabilities from a device plane's stats; absent stats are `None`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DeviceCapabilities {
    /// `Nvidia`, `AMD`, ...
    pub vendor: Option<String>,
    /// Core clock in kHz.
    pub clock_rate_khz: Option<u64>,
    /// SMs (NVIDIA) or CUs (AMD).
    pub core_count: Option<u64>,
    /// Peak memory bandwidth.
    pub memory_bandwidth_bytes_per_s: Option<u64>,
    /// Device memory.
    pub memory_size_bytes: Option<u64>,
    /// CUDA compute capability, major.
    pub compute_cap_major: Option<u64>,
    /// CUDA compute capability, minor.
    pub compute_cap_minor: Option<u64>,
}

/// A plane: one device, the host, or the metadata plane.
#[derive(Debug, Clone, Copy)]
pub struct Plane<'a> {
    bytes: &'a [u8],
    raw: &'a PlaneData,
}

/// A line: one stream or host thread.
#[derive(Debug, Clone, Copy)]
pub struct Line<'a> {
    bytes: &'a [u8],
    plane: &'a PlaneData,
    raw: &'a LineData,
}

/// One event on a line, parsed from the file's bytes.
#[derive(Debug, Clone, Copy)]
pub struct Event<'a> {
    plane: &'a PlaneData,
    line: &'a LineData,
    /// The event's encoded body; its field-4 entries are its stats.
    body: &'a [u8],
    metadata_id: i64,
    data: EventData,
    duration_ps: i64,
}

/// The `data` oneof of an `XEvent`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EventData {
    None,
    OffsetPs(i64),
    NumOccurrences(i64),
}

/// The shared metadata of events: name and stats common to every event that points to it.
#[derive(Debug, Clone, Copy)]
pub struct EventMetadata<'a> {
    plane: &'a PlaneData,
    raw: &'a proto::XEventMetadata,
}

/// One stat with its name resolved.
#[derive(Debug, Clone, Copy)]
pub struct Stat<'a> {
    plane: &'a PlaneData,
    metadata_id: i64,
    value: RawValue<'a>,
}

/// A stat's value as stored, before `ref_value` is resolved.
#[derive(Debug, Clone, Copy)]
enum RawValue<'a> {
    Empty,
    Double(f64),
    Uint64(u64),
    Int64(i64),
    Str(&'a str),
    Bytes(&'a [u8]),
    Ref(u64),
}

/// A stat value. `Ref` is an interned string, already resolved.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum StatValue<'a> {
    /// `double_value`.
    Double(f64),
    /// `uint64_value`.
    Uint64(u64),
    /// `int64_value`.
    Int64(i64),
    /// `str_value`.
    Str(&'a str),
    /// `bytes_value`.
    Bytes(&'a [u8]),
    /// `ref_value`: the name of the stat metadata it points to.
    Ref(&'a str),
    /// A `ref_value` pointing to no stat metadata.
    UnresolvedRef(u64),
    /// The stat carries no value.
    Empty,
}

impl XSpace {
    /// Read and decode a `.xplane.pb` file.
    pub fn read(path: &Path) -> Result<XSpace, Error> {
        let bytes = std::fs::read(path).map_err(|source| Error::Io {
            path: path.to_path_buf(),
            source,
        })?;
        XSpace::from_vec(bytes, path)
    }

    /// Decode XSpace bytes; `path` only names the input in errors. The bytes are copied;
    /// [`XSpace::from_vec`] keeps them without a copy.
    pub fn from_bytes(bytes: &[u8], path: &Path) -> Result<XSpace, Error> {
        XSpace::from_vec(bytes.to_vec(), path)
    }

    /// Decode XSpace bytes, keeping them; `path` only names the input in errors.
    pub fn from_vec(bytes: Vec<u8>, path: &Path) -> Result<XSpace, Error> {
        let raw = decode::decode_xspace(&bytes, path)?;
        let mut space = XSpace {
            bytes,
            raw,
            diagnostics: Vec::new(),
        };
        space.diagnostics = space.collect_diagnostics();
        Ok(space)
    }

    /// An XSpace decoded elsewhere (`stream.rs`) whose lines' bodies are not in memory.
    pub(crate) fn from_decoded(raw: Decoded) -> XSpace {
        let mut space = XSpace {
            bytes: Vec::new(),
            raw,
            diagnostics: Vec::new(),
        };
        space.diagnostics = space.collect_diagnostics();
        space
    }

    /// Leaves out every event (and the file's bytes): the XSpace that `load_capture` hands
    /// back, whose events are in the capture. Lines stay, with no events.
    pub(crate) fn drop_events(&mut self) {
        self.bytes = Vec::new();
        for plane in &mut self.raw.planes {
            for line in &mut plane.lines {
                line.body = 0..0;
                line.event_count = 0;
            }
        }
    }

    /// Every plane, in file order.
    pub fn planes(&self) -> impl Iterator<Item = Plane<'_>> + '_ {
        let bytes = self.bytes.as_slice();
        self.raw.planes.iter().map(move |raw| Plane { bytes, raw })
    }

    /// The first plane with this exact name.
    pub fn plane(&self, name: &str) -> Option<Plane<'_>> {
        self.planes().find(|plane| plane.name() == name)
    }

    /// `/device:GPU:N` planes, ordered by ordinal.
    pub fn gpu_planes(&self) -> Vec<Plane<'_>> {
        let mut planes: Vec<_> = self
            .planes()
            .filter(|plane| plane.gpu_ordinal().is_some())
            .collect();
        planes.sort_by_key(|plane| plane.gpu_ordinal());
        planes
    }

    /// GPU planes that hold at least one event (ROCm records idle devices too).
    pub fn device_planes(&self) -> Vec<Plane<'_>> {
        self.gpu_planes()
            .into_iter()
            .filter(|plane| plane.event_count() > 0)
            .collect()
    }

    /// The `/host:CPU` plane.
    pub fn host_plane(&self) -> Option<Plane<'_>> {
        self.plane("/host:CPU")
    }

    /// The `/host:metadata` plane, where the HLO protos are.
    pub fn metadata_plane(&self) -> Option<Plane<'_>> {
        self.plane("/host:metadata")
    }

    /// The hosts the capture was taken on.
    pub fn hostnames(&self) -> &[String] {
        &self.raw.hostnames
    }

    /// Errors the profiler recorded while capturing.
    pub fn profiler_errors(&self) -> &[String] {
        &self.raw.errors
    }

    /// Warnings the profiler recorded while capturing.
    pub fn profiler_warnings(&self) -> &[String] {
        &self.raw.warnings
    }

    /// `profile_start_time` and `profile_stop_time` (Unix-epoch ns) from the `Task Environment` plane.
    pub fn profile_window_ns(&self) -> Option<(u64, u64)> {
        let plane = self.plane("Task Environment")?;
        let start = plane.stat("profile_start_time")?.as_u64()?;
        let stop = plane.stat("profile_stop_time")?.as_u64()?;
        Some((start, stop))
    }

    /// Odd but usable things about this capture (see also [`XSpace::hlo_programs`]).
    pub fn diagnostics(&self) -> &[Diagnostic] {
        &self.diagnostics
    }

    fn collect_diagnostics(&self) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        if self.gpu_planes().is_empty() {
            out.push(Diagnostic {
                kind: DiagnosticKind::NoGpuDevicePlanes,
                message: "no GPU device planes: a host-only capture".to_owned(),
            });
        }
        for (what, list) in [("error", &self.raw.errors), ("warning", &self.raw.warnings)] {
            for message in list {
                out.push(Diagnostic {
                    kind: DiagnosticKind::ProfilerMessage,
                    message: format!("profiler {what}: {message}"),
                });
            }
        }
        out.extend(crate::programs::program_diagnostics(self));
        out
    }
}

impl<'a> Plane<'a> {
    /// The plane id.
    pub fn id(self) -> i64 {
        self.raw.id
    }

    /// The plane name (`/device:GPU:0`, `/host:CPU`, ...).
    pub fn name(self) -> &'a str {
        &self.raw.name
    }

    /// What the plane holds, from its name.
    pub fn kind(self) -> PlaneKind {
        let name = self.name();
        if let Some(ordinal) = self.gpu_ordinal() {
            PlaneKind::Gpu { ordinal }
        } else if name.starts_with("/device:") {
            PlaneKind::OtherDevice
        } else if name == "/host:CPU" {
            PlaneKind::HostCpu
        } else if name == "/host:metadata" {
            PlaneKind::HostMetadata
        } else {
            PlaneKind::Other
        }
    }

    /// `N` of `/device:GPU:N`.
    pub fn gpu_ordinal(self) -> Option<u32> {
        self.name().strip_prefix("/device:GPU:")?.parse().ok()
    }

    /// The lines (streams, threads), in file order.
    pub fn lines(self) -> impl Iterator<Item = Line<'a>> + 'a {
        let (bytes, plane) = (self.bytes, self.raw);
        plane
            .lines
            .iter()
            .map(move |raw| Line { bytes, plane, raw })
    }

    /// Events over all lines.
    pub fn event_count(self) -> usize {
        self.raw.lines.iter().map(|line| line.event_count).sum()
    }

    /// Plane-level stats (device capabilities, versions, ...).
    pub fn stats(self) -> impl Iterator<Item = Stat<'a>> + 'a {
        let plane = self.raw;
        plane.stats.iter().map(move |raw| Stat::decoded(plane, raw))
    }

    /// A plane-level stat by name.
    pub fn stat(self, name: &str) -> Option<StatValue<'a>> {
        find_stat(self.stats(), name)
    }

    /// The event metadata with this id.
    pub fn event_metadata(self, id: i64) -> Option<EventMetadata<'a>> {
        let raw = self.raw.event_metadata.get(&id)?;
        Some(EventMetadata {
            plane: self.raw,
            raw,
        })
    }

    /// Every event metadata entry, by id.
    pub fn all_event_metadata(self) -> impl Iterator<Item = EventMetadata<'a>> + 'a {
        let plane = self.raw;
        plane
            .event_metadata
            .values()
            .map(move |raw| EventMetadata { plane, raw })
    }

    /// The name of stat metadata `id` (what a `ref_value` of `id` means).
    pub fn stat_name(self, id: i64) -> Option<&'a str> {
        self.raw
            .stat_metadata
            .get(&id)
            .map(|meta| meta.name.as_str())
    }

    /// The device figures among the plane's stats.
    pub fn device_capabilities(self) -> DeviceCapabilities {
        let number = |name: &str| self.stat(name).and_then(StatValue::as_u64);
        DeviceCapabilities {
            vendor: self
                .stat("device_vendor")
                .and_then(StatValue::as_str)
                .map(str::to_owned),
            clock_rate_khz: number("clock_rate"),
            core_count: number("core_count"),
            memory_bandwidth_bytes_per_s: number("memory_bandwidth"),
            memory_size_bytes: number("memory_size"),
            compute_cap_major: number("compute_cap_major"),
            compute_cap_minor: number("compute_cap_minor"),
        }
    }
}

impl<'a> Line<'a> {
    /// A line whose body is `raw.body` of `bytes` (`stream.rs`: one line read back alone).
    pub(crate) fn over(bytes: &'a [u8], plane: &'a PlaneData, raw: &'a LineData) -> Self {
        Line { bytes, plane, raw }
    }

    /// The plane and line as decoded, for [`Line::over`].
    pub(crate) fn raw(self) -> (&'a PlaneData, &'a LineData) {
        (self.plane, self.raw)
    }

    /// The line id.
    pub fn id(self) -> i64 {
        self.raw.id
    }

    /// The id shown by viewers.
    pub fn display_id(self) -> i64 {
        self.raw.display_id
    }

    /// The line name (`Stream #7(...)`, a thread name).
    pub fn name(self) -> &'a str {
        &self.raw.name
    }

    /// The name shown by viewers.
    pub fn display_name(self) -> &'a str {
        &self.raw.display_name
    }

    /// Base time of the line's events, in ns (session-relative in some captures).
    pub fn timestamp_ns(self) -> i64 {
        self.raw.timestamp_ns
    }

    /// Length of the line in picoseconds.
    pub fn duration_ps(self) -> i64 {
        self.raw.duration_ps
    }

    /// `N` of a stream line named `Stream #N(...)` or `Stream #N`.
    pub fn stream_id(self) -> Option<i64> {
        let rest = self.name().strip_prefix("Stream #")?;
        let digits = rest
            .find(|ch: char| !ch.is_ascii_digit())
            .unwrap_or(rest.len());
        rest[..digits].parse().ok()
    }

    /// The events, in file order.
    pub fn events(self) -> impl Iterator<Item = Event<'a>> + 'a {
        let (plane, line) = (self.plane, self.raw);
        let body = self.bytes.get(line.body.clone()).unwrap_or_default();
        Fields::new(body).filter_map(move |(field, value)| match (field, value) {
            (4, Wire::Len(event)) => Some(Event::parse(plane, line, event)),
            _ => None,
        })
    }

    /// How many events the line holds.
    pub fn event_count(self) -> usize {
        self.raw.event_count
    }
}

impl<'a> Event<'a> {
    /// The fixed fields of an encoded `XEvent` (last value wins, as in protobuf).
    fn parse(plane: &'a PlaneData, line: &'a LineData, body: &'a [u8]) -> Self {
        let mut event = Event {
            plane,
            line,
            body,
            metadata_id: 0,
            data: EventData::None,
            duration_ps: 0,
        };
        for (field, value) in Fields::new(body) {
            match (field, value) {
                (1, Wire::Varint(id)) => event.metadata_id = id as i64,
                (2, Wire::Varint(offset)) => event.data = EventData::OffsetPs(offset as i64),
                (5, Wire::Varint(count)) => event.data = EventData::NumOccurrences(count as i64),
                (3, Wire::Varint(duration)) => event.duration_ps = duration as i64,
                _ => {}
            }
        }
        event
    }

    /// Id of the event's metadata.
    pub fn metadata_id(self) -> i64 {
        self.metadata_id
    }

    /// The event's metadata, if the plane has it.
    pub fn metadata(self) -> Option<EventMetadata<'a>> {
        let raw = self.plane.event_metadata.get(&self.metadata_id)?;
        Some(EventMetadata {
            plane: self.plane,
            raw,
        })
    }

    /// The event's name (its metadata's name); empty when the metadata is missing.
    pub fn name(self) -> &'a str {
        self.metadata().map_or("", EventMetadata::name)
    }

    /// The metadata's display name; empty when missing.
    pub fn display_name(self) -> &'a str {
        self.metadata().map_or("", EventMetadata::display_name)
    }

    /// Start in picoseconds: `line.timestamp_ns * 1000 + offset_ps` (saturating).
    pub fn start_ps(self) -> i64 {
        let offset = match self.data {
            EventData::OffsetPs(offset) => offset,
            _ => 0,
        };
        self.line
            .timestamp_ns
            .saturating_mul(1000)
            .saturating_add(offset)
    }

    /// Start in nanoseconds, `line.timestamp_ns + offset_ps / 1000` rounded to the nearest
    /// nanosecond, exact for any timestamp (a Unix-epoch `timestamp_ns` times 1000 does not
    /// fit in i64 picoseconds, so [`Event::start_ps`] saturates there); saturates only
    /// beyond the i64 nanosecond range, which readers then leave out.
    pub fn start_ns(self) -> i64 {
        let offset = match self.data {
            EventData::OffsetPs(offset) => offset,
            _ => 0,
        };
        let ps = i128::from(self.line.timestamp_ns) * 1000 + i128::from(offset);
        let ns = (ps + 500).div_euclid(1000);
        ns.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
    }

    /// Duration in picoseconds.
    pub fn duration_ps(self) -> i64 {
        self.duration_ps
    }

    /// End in picoseconds (saturating).
    pub fn end_ps(self) -> i64 {
        self.start_ps().saturating_add(self.duration_ps())
    }

    /// For aggregated events only.
    pub fn num_occurrences(self) -> Option<i64> {
        match self.data {
            EventData::NumOccurrences(count) => Some(count),
            _ => None,
        }
    }

    /// The event's own stats (not its metadata's).
    pub fn stats(self) -> impl Iterator<Item = Stat<'a>> + 'a {
        let plane = self.plane;
        Fields::new(self.body).filter_map(move |(field, value)| match (field, value) {
            (4, Wire::Len(stat)) => Some(Stat::parse(plane, stat)),
            _ => None,
        })
    }

    /// A stat by name: the event's own first, then its metadata's (as XProf does).
    pub fn stat(self, name: &str) -> Option<StatValue<'a>> {
        find_stat(self.stats(), name).or_else(|| self.metadata().and_then(|meta| meta.stat(name)))
    }
}

impl<'a> EventMetadata<'a> {
    /// The metadata id.
    pub fn id(self) -> i64 {
        self.raw.id
    }

    /// The name (kernel, op).
    pub fn name(self) -> &'a str {
        &self.raw.name
    }

    /// The name shown by viewers.
    pub fn display_name(self) -> &'a str {
        &self.raw.display_name
    }

    /// The stats of the metadata.
    pub fn stats(self) -> impl Iterator<Item = Stat<'a>> + 'a {
        let plane = self.plane;
        self.raw
            .stats
            .iter()
            .map(move |raw| Stat::decoded(plane, raw))
    }

    /// A metadata stat by name.
    pub fn stat(self, name: &str) -> Option<StatValue<'a>> {
        find_stat(self.stats(), name)
    }
}

impl<'a> Stat<'a> {
    /// A stat that prost decoded (plane and metadata stats).
    fn decoded(plane: &'a PlaneData, raw: &'a proto::XStat) -> Self {
        let value = match &raw.value {
            None => RawValue::Empty,
            Some(x_stat::Value::DoubleValue(value)) => RawValue::Double(*value),
            Some(x_stat::Value::Uint64Value(value)) => RawValue::Uint64(*value),
            Some(x_stat::Value::Int64Value(value)) => RawValue::Int64(*value),
            Some(x_stat::Value::StrValue(value)) => RawValue::Str(value),
            Some(x_stat::Value::BytesValue(value)) => RawValue::Bytes(value),
            Some(x_stat::Value::RefValue(id)) => RawValue::Ref(*id),
        };
        Stat {
            plane,
            metadata_id: raw.metadata_id,
            value,
        }
    }

    /// An encoded `XStat` of an event (last value wins, as in protobuf). Its strings were
    /// checked to be UTF-8 when the XSpace was read.
    fn parse(plane: &'a PlaneData, body: &'a [u8]) -> Self {
        let mut stat = Stat {
            plane,
            metadata_id: 0,
            value: RawValue::Empty,
        };
        for (field, value) in Fields::new(body) {
            match (field, value) {
                (1, Wire::Varint(id)) => stat.metadata_id = id as i64,
                (2, Wire::Fixed64(bits)) => stat.value = RawValue::Double(f64::from_bits(bits)),
                (3, Wire::Varint(value)) => stat.value = RawValue::Uint64(value),
                (4, Wire::Varint(value)) => stat.value = RawValue::Int64(value as i64),
                (5, Wire::Len(text)) => {
                    stat.value = RawValue::Str(std::str::from_utf8(text).unwrap_or_default());
                }
                (6, Wire::Len(bytes)) => stat.value = RawValue::Bytes(bytes),
                (7, Wire::Varint(id)) => stat.value = RawValue::Ref(id),
                _ => {}
            }
        }
        stat
    }

    /// The stat's name; empty when its metadata is missing.
    pub fn name(self) -> &'a str {
        self.plane
            .stat_metadata
            .get(&self.metadata_id)
            .map_or("", |meta| meta.name.as_str())
    }

    /// The value, with references resolved.
    pub fn value(self) -> StatValue<'a> {
        match self.value {
            RawValue::Empty => StatValue::Empty,
            RawValue::Double(value) => StatValue::Double(value),
            RawValue::Uint64(value) => StatValue::Uint64(value),
            RawValue::Int64(value) => StatValue::Int64(value),
            RawValue::Str(value) => StatValue::Str(value),
            RawValue::Bytes(value) => StatValue::Bytes(value),
            RawValue::Ref(id) => {
                match i64::try_from(id)
                    .ok()
                    .and_then(|key| self.plane.stat_metadata.get(&key))
                {
                    Some(meta) => StatValue::Ref(&meta.name),
                    None => StatValue::UnresolvedRef(id),
                }
            }
        }
    }
}

impl<'a> StatValue<'a> {
    /// The text of a string or interned-string value.
    pub fn as_str(self) -> Option<&'a str> {
        match self {
            StatValue::Str(text) | StatValue::Ref(text) => Some(text),
            _ => None,
        }
    }

    /// The bytes of a bytes value.
    pub fn as_bytes(self) -> Option<&'a [u8]> {
        match self {
            StatValue::Bytes(bytes) => Some(bytes),
            _ => None,
        }
    }

    /// An integer value that fits `i64` (either integer kind).
    pub fn as_i64(self) -> Option<i64> {
        match self {
            StatValue::Int64(value) => Some(value),
            StatValue::Uint64(value) => i64::try_from(value).ok(),
            _ => None,
        }
    }

    /// A non-negative integer value (either integer kind).
    pub fn as_u64(self) -> Option<u64> {
        match self {
            StatValue::Uint64(value) => Some(value),
            StatValue::Int64(value) => u64::try_from(value).ok(),
            _ => None,
        }
    }

    /// Any numeric value as `f64`.
    pub fn as_f64(self) -> Option<f64> {
        match self {
            StatValue::Double(value) => Some(value),
            StatValue::Int64(value) => Some(value as f64),
            StatValue::Uint64(value) => Some(value as f64),
            _ => None,
        }
    }
}

impl std::fmt::Display for StatValue<'_> {
    /// As the Chrome-trace converter writes stat values: numbers and text plainly.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StatValue::Double(value) => write!(f, "{value}"),
            StatValue::Uint64(value) => write!(f, "{value}"),
            StatValue::Int64(value) => write!(f, "{value}"),
            StatValue::Str(text) | StatValue::Ref(text) => f.write_str(text),
            StatValue::Bytes(bytes) => write!(f, "<{} bytes>", bytes.len()),
            StatValue::UnresolvedRef(id) => write!(f, "<unresolved ref {id}>"),
            StatValue::Empty => Ok(()),
        }
    }
}

fn find_stat<'a>(mut stats: impl Iterator<Item = Stat<'a>>, name: &str) -> Option<StatValue<'a>> {
    stats.find(|stat| stat.name() == name).map(Stat::value)
}

#[cfg(test)]
mod tests {
    use prost::Message;

    use super::*;
    use crate::generated::x_event;

    fn stat(metadata_id: i64, value: x_stat::Value) -> proto::XStat {
        proto::XStat {
            metadata_id,
            value: Some(value),
        }
    }

    /// One GPU plane with one kernel whose `hlo_op` is an interned string.
    fn space_bytes() -> Vec<u8> {
        let stat_names = [
            (1, "hlo_op"),
            (2, "fusion.3"),
            (3, "correlation_id"),
            (4, "device_vendor"),
        ];
        let plane = proto::XPlane {
            id: 9,
            name: "/device:GPU:2".to_owned(),
            stat_metadata: stat_names
                .iter()
                .map(|(id, name)| {
                    (
                        *id,
                        proto::XStatMetadata {
                            id: *id,
                            name: (*name).to_owned(),
                            description: String::new(),
                        },
                    )
                })
                .collect(),
            event_metadata: [(
                5,
                proto::XEventMetadata {
                    id: 5,
                    name: "loop_fusion_kernel".to_owned(),
                    ..Default::default()
                },
            )]
            .into_iter()
            .collect(),
            stats: vec![stat(4, x_stat::Value::StrValue("Nvidia".to_owned()))],
            lines: vec![proto::XLine {
                id: 1,
                name: "Stream #16(Compute)".to_owned(),
                timestamp_ns: 2_000,
                events: vec![proto::XEvent {
                    metadata_id: 5,
                    data: Some(x_event::Data::OffsetPs(1_500)),
                    duration_ps: 7_250,
                    stats: vec![
                        stat(1, x_stat::Value::RefValue(2)),
                        stat(3, x_stat::Value::Uint64Value(42)),
                    ],
                }],
                ..Default::default()
            }],
        };
        proto::XSpace {
            planes: vec![plane],
            ..Default::default()
        }
        .encode_to_vec()
    }

    #[test]
    fn views_resolve_names_stats_and_times() {
        let space = XSpace::from_bytes(&space_bytes(), Path::new("mem.xplane.pb")).unwrap();
        assert!(space.diagnostics().is_empty(), "{:?}", space.diagnostics());
        let plane = space.device_planes()[0];
        assert_eq!(plane.kind(), PlaneKind::Gpu { ordinal: 2 });
        assert_eq!(
            plane.device_capabilities().vendor.as_deref(),
            Some("Nvidia")
        );
        let line = plane.lines().next().unwrap();
        assert_eq!(line.stream_id(), Some(16));
        let event = line.events().next().unwrap();
        assert_eq!(event.name(), "loop_fusion_kernel");
        assert_eq!((event.start_ps(), event.end_ps()), (2_001_500, 2_008_750));
        assert_eq!(event.stat("hlo_op"), Some(StatValue::Ref("fusion.3")));
        assert_eq!(
            event.stat("correlation_id").and_then(StatValue::as_u64),
            Some(42)
        );
        assert_eq!(event.stat("missing"), None);
    }

    /// `field`, length-delimited, with `body`.
    fn len_field(field: u64, body: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        prost::encoding::encode_varint((field << 3) | 2, &mut out);
        prost::encoding::encode_varint(body.len() as u64, &mut out);
        out.extend_from_slice(body);
        out
    }

    /// Events are parsed from the file's bytes: fields the reader does not know are skipped
    /// and every stat kind reads as prost reads it.
    #[test]
    fn events_with_unknown_fields_and_every_stat_kind() {
        let event = proto::XEvent {
            metadata_id: 5,
            data: Some(x_event::Data::NumOccurrences(3)),
            duration_ps: 9,
            stats: vec![
                stat(1, x_stat::Value::DoubleValue(2.5)),
                stat(2, x_stat::Value::Int64Value(-7)),
                stat(3, x_stat::Value::StrValue("text".to_owned())),
                stat(4, x_stat::Value::BytesValue(vec![1, 2, 3])),
                stat(9, x_stat::Value::RefValue(77)),
            ],
        };
        let mut event = event.encode_to_vec();
        // Unknown field 9 (varint 1), then unknown field 20 (length-delimited "zz").
        event.extend_from_slice(&[0x48, 0x01, 0xa2, 0x01, 0x02, b'z', b'z']);
        let mut line = proto::XLine {
            name: "Stream #7".to_owned(),
            ..Default::default()
        }
        .encode_to_vec();
        line.extend(len_field(4, &event));
        let names = [(1, "d"), (2, "i"), (3, "s"), (4, "b"), (9, "r")];
        let mut plane = proto::XPlane {
            name: "/device:GPU:0".to_owned(),
            stat_metadata: names
                .iter()
                .map(|(id, name)| {
                    let meta = proto::XStatMetadata {
                        id: *id,
                        name: (*name).to_owned(),
                        description: String::new(),
                    };
                    (*id, meta)
                })
                .collect(),
            ..Default::default()
        }
        .encode_to_vec();
        plane.extend(len_field(3, &line));
        let bytes = len_field(1, &plane);
        let space = XSpace::from_bytes(&bytes, Path::new("mem.xplane.pb")).unwrap();
        let line = space.gpu_planes()[0].lines().next().unwrap();
        assert_eq!((line.name(), line.event_count()), ("Stream #7", 1));
        let event = line.events().next().unwrap();
        assert_eq!(event.metadata_id(), 5);
        assert_eq!((event.num_occurrences(), event.duration_ps()), (Some(3), 9));
        let stats: Vec<_> = event
            .stats()
            .map(|stat| (stat.name(), stat.value()))
            .collect();
        assert_eq!(
            stats,
            [
                ("d", StatValue::Double(2.5)),
                ("i", StatValue::Int64(-7)),
                ("s", StatValue::Str("text")),
                ("b", StatValue::Bytes(&[1, 2, 3])),
                ("r", StatValue::UnresolvedRef(77)),
            ]
        );
        // prost reads the same bytes the same way.
        let raw = proto::XSpace::decode(bytes.as_slice()).unwrap();
        assert_eq!(raw.planes[0].lines[0].events[0].stats.len(), 5);
    }
}
