//! Perfetto protobuf traces (`.pftrace`, `.perfetto-trace`), as rocprofv3 writes them and,
//! as plain host slices, from any other producer.
//!
//! The file is a `Trace`: packets framed as field 1 of the top-level message. The framing
//! is walked here, one packet in memory at a time, so an error names the packet and its
//! byte offset, and each packet is decoded with the generated prost types. Interned names (event names, categories, debug
//! annotation names and string values) are kept per `trusted_packet_sequence_id` and
//! dropped when a packet of that sequence says `SEQ_INCREMENTAL_STATE_CLEARED`, as are
//! incremental clocks and the sequence's packet defaults. Slices are `TYPE_SLICE_BEGIN` /
//! `TYPE_SLICE_END` pairs per track (a stack, so nested slices pair up) and
//! `TYPE_INSTANT` events (zero length).
//!
//! rocprofv3 (`source/lib/output/generatePerfetto.cpp` in rocprofiler-sdk) names each
//! slice's kind by its category: `hip_api`, `hsa_api`, `marker_api`, `rccl_api`, ... on
//! host thread tracks; `kernel_dispatch` on `COMPUTE AGENT [n] STREAM [s]` (or
//! `COMPUTE ... QUEUE [q]`) tracks; `memory_copy` on `COPY to AGENT [n] STREAM [s]` (or
//! `... THREAD [t]`) tracks. Its debug annotations give `corr_id` (the correlation id shared
//! by an API call and the GPU work it launched), `tid`, `agent`, `queue`, `src_agent`,
//! `dst_agent` and `copy_bytes`.

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::rc::Rc;

use prost::Message;
use trace_model::{Format, HostKind, MemcpyDirection};

use crate::model::{Activity, Host, Tables, agent_number, copy_direction};
use crate::proto::{
    DebugAnnotation, InternedData, TracePacket, TrackDescriptor, trace_packet::SequenceFlags,
    track_event::Type,
};
use crate::{Error, Process};

/// The categories rocprofv3 writes host API slices under.
const API_CATEGORIES: &[&str] = &[
    "hip_api",
    "hsa_api",
    "marker_api",
    "rccl_api",
    "rocdecode_api",
    "rocjpeg_api",
    "kfd_api",
    "ompt",
];

/// Every category that tells the trace is rocprofv3's.
fn is_rocprof_category(category: &str) -> bool {
    API_CATEGORIES.contains(&category)
        || matches!(
            category,
            "kernel_dispatch" | "memory_copy" | "memory_allocation" | "scratch_memory"
        )
}

/// Reads a `Trace` file packet by packet (field 1 of the top-level message), skipping other
/// fields, so that memory holds one packet at a time; an error names the byte offset of
/// the field that does not fit.
struct Packets<'a> {
    path: &'a Path,
    reader: BufReader<File>,
    /// Bytes read so far.
    offset: u64,
    /// The file's length, so that no length field makes us allocate past it.
    len: u64,
    index: u64,
    buf: Vec<u8>,
}

impl<'a> Packets<'a> {
    fn open(path: &'a Path) -> Result<Packets<'a>, Error> {
        let io = |source| Error::Io {
            path: path.to_owned(),
            source,
        };
        let file = File::open(path).map_err(io)?;
        let len = file.metadata().map_err(io)?.len();
        Ok(Packets {
            path,
            reader: BufReader::with_capacity(1 << 20, file),
            offset: 0,
            len,
            index: 0,
            buf: Vec::new(),
        })
    }

    fn fail(&self, offset: u64, message: String) -> Error {
        Error::Protobuf {
            path: self.path.to_owned(),
            offset,
            packet: Some(self.index),
            message,
        }
    }

    fn io(&self, source: std::io::Error) -> Error {
        Error::Io {
            path: self.path.to_owned(),
            source,
        }
    }

    /// One byte, `None` at the end of the file.
    fn byte(&mut self) -> Result<Option<u8>, Error> {
        let mut one = [0u8];
        loop {
            match self.reader.read(&mut one) {
                Ok(0) => return Ok(None),
                Ok(_) => {
                    self.offset += 1;
                    return Ok(Some(one[0]));
                }
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => return Err(self.io(err)),
            }
        }
    }

    /// A base-128 varint; `None` when the file ends before its first byte.
    fn varint(&mut self, at: u64) -> Result<Option<u64>, Error> {
        let mut value = 0u64;
        for shift in (0..70).step_by(7) {
            let Some(byte) = self.byte()? else {
                if shift == 0 {
                    return Ok(None);
                }
                return Err(self.fail(at, "varint runs past the end of the file".to_owned()));
            };
            if shift == 63 && byte > 1 {
                return Err(self.fail(at, "varint longer than 64 bits".to_owned()));
            }
            value |= u64::from(byte & 0x7f) << shift;
            if byte < 0x80 {
                return Ok(Some(value));
            }
        }
        Err(self.fail(at, "varint longer than 10 bytes".to_owned()))
    }

    /// Reads into `buf` (`keep`) or skips `len` bytes, which the file must still hold.
    fn bytes(&mut self, at: u64, field: u64, len: u64, keep: bool) -> Result<(), Error> {
        let available = self.len.saturating_sub(self.offset);
        if len > available {
            return Err(self.fail(
                at,
                format!(
                    "truncated: field {field} says {len} bytes, {available} remain in the file"
                ),
            ));
        }
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        let read = if keep {
            buf.resize(len as usize, 0);
            self.reader.read_exact(&mut buf)
        } else {
            std::io::copy(&mut (&mut self.reader).take(len), &mut std::io::sink()).and_then(
                |copied| {
                    (copied == len)
                        .then_some(())
                        .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))
                },
            )
        };
        self.buf = buf;
        match read {
            Ok(()) => {
                self.offset += len;
                Ok(())
            }
            // The file shrank while we read it.
            Err(err) if err.kind() == std::io::ErrorKind::UnexpectedEof => {
                Err(self.fail(at, format!("truncated: field {field} ends the file early")))
            }
            Err(err) => Err(self.io(err)),
        }
    }

    /// The next packet's index and byte offset, its bytes in `self.buf`; `None` at the end.
    fn next(&mut self) -> Result<Option<(u64, u64)>, Error> {
        loop {
            let at = self.offset;
            let Some(key) = self.varint(at)? else {
                return Ok(None);
            };
            let (field, wire) = (key >> 3, key & 7);
            if field == 0 {
                return Err(self.fail(at, "field number 0".to_owned()));
            }
            match wire {
                0 => {
                    if self.varint(at)?.is_none() {
                        return Err(self.fail(at, "varint runs past the end of the file".into()));
                    }
                }
                1 => self.bytes(at, field, 8, false)?,
                5 => self.bytes(at, field, 4, false)?,
                2 => {
                    let Some(len) = self.varint(at)? else {
                        return Err(self.fail(at, "length runs past the end of the file".into()));
                    };
                    let start = self.offset;
                    self.bytes(at, field, len, field == 1)?;
                    if field == 1 {
                        let index = self.index;
                        self.index += 1;
                        return Ok(Some((index, start)));
                    }
                }
                _ => {
                    return Err(self.fail(
                        at,
                        format!("wire type {wire} of field {field} is not valid at the top level"),
                    ));
                }
            }
        }
    }
}

pub(crate) fn load(path: &Path) -> Result<Vec<Process>, Error> {
    let mut packets = Packets::open(path)?;
    let mut trace = Reader::default();
    while let Some((index, offset)) = packets.next()? {
        let packet =
            TracePacket::decode(packets.buf.as_slice()).map_err(|err| Error::Protobuf {
                path: path.to_owned(),
                offset,
                packet: Some(index),
                message: format!("TracePacket: {err}"),
            })?;
        trace.packet(index, packet);
    }
    Ok(vec![trace.finish(path)])
}

/// Interned data and defaults of one packet sequence.
#[derive(Default)]
///
/// Interned strings are shared (`Rc<str>`), never copied per event, and cut at the name
/// limit when longer: one long name referred to by every event costs its length once.
struct Sequence {
    names: HashMap<u64, Rc<str>>,
    categories: HashMap<u64, Rc<str>>,
    annotation_names: HashMap<u64, String>,
    annotation_strings: HashMap<u64, String>,
    default_clock: Option<u32>,
    default_track: Option<u64>,
    /// Interned strings cut at the name limit.
    cut: u64,
    /// Incremental clocks: the last value (ns) and the unit multiplier.
    incremental: HashMap<u32, (u64, u64)>,
}

/// What a slice's debug annotations say that the mapping needs.
#[derive(Debug, Default, Clone)]
struct Fields {
    correlation: Option<u64>,
    tid: Option<i64>,
    agent: Option<String>,
    queue: Option<i64>,
    src_agent: Option<String>,
    dst_agent: Option<String>,
    bytes: Option<u64>,
}

/// A begun slice.
#[derive(Debug, Clone)]
struct Open {
    start: u64,
    name: Rc<str>,
    category: Rc<str>,
    fields: Fields,
    packet: u64,
}

/// A finished slice on a track.
struct Slice {
    track: u64,
    start: u64,
    end: u64,
    name: Rc<str>,
    category: Rc<str>,
    fields: Fields,
    packet: u64,
}

#[derive(Default)]
struct Reader {
    sequences: HashMap<u32, Sequence>,
    tracks: BTreeMap<u64, TrackDescriptor>,
    open: HashMap<u64, Vec<Open>>,
    slices: Vec<Slice>,
    /// Oddities, counted as the packets are read: code → (count, first packet).
    odd: BTreeMap<&'static str, (u64, u64)>,
}

impl Reader {
    fn note(&mut self, code: &'static str, packet: u64) {
        self.odd.entry(code).or_insert((0, packet)).0 += 1;
    }

    fn packet(&mut self, index: u64, packet: TracePacket) {
        let sequence_id = packet.trusted_packet_sequence_id.unwrap_or(0);
        let flags = packet.sequence_flags.unwrap_or(0);
        let cleared = flags & SequenceFlags::SeqIncrementalStateCleared as u32 != 0
            || packet.incremental_state_cleared.unwrap_or(false);
        if cleared {
            self.sequences.insert(sequence_id, Sequence::default());
        }
        let seq = self.sequences.entry(sequence_id).or_default();
        if let Some(defaults) = &packet.trace_packet_defaults {
            seq.default_clock = defaults.timestamp_clock_id;
            seq.default_track = defaults
                .track_event_defaults
                .as_ref()
                .and_then(|d| d.track_uuid);
        }
        if let Some(snapshot) = &packet.clock_snapshot {
            for clock in &snapshot.clocks {
                if clock.is_incremental.unwrap_or(false) {
                    let multiplier = clock.unit_multiplier_ns.unwrap_or(1).max(1);
                    seq.incremental.insert(
                        clock.clock_id.unwrap_or(0),
                        (
                            clock.timestamp.unwrap_or(0).saturating_mul(multiplier),
                            multiplier,
                        ),
                    );
                }
            }
        }
        if let Some(interned) = packet.interned_data {
            intern(seq, interned);
        }
        if let Some(track) = packet.track_descriptor
            && let Some(uuid) = track.uuid
        {
            // A later descriptor of the same track (rocprofv3 repeats them) fills in
            // what an earlier one left out.
            let entry = self.tracks.entry(uuid).or_default();
            merge_track(entry, track);
        }
        // The timestamp on the sequence's incremental clock, if the packet uses one: every
        // packet with a timestamp on that clock moves it, events or not.
        let clock = packet.timestamp_clock_id.or(seq.default_clock);
        let raw = packet.timestamp.unwrap_or(0);
        let time = match clock.and_then(|c| seq.incremental.get_mut(&c)) {
            Some((last, multiplier)) if packet.timestamp.is_some() => {
                *last = last.saturating_add(raw.saturating_mul(*multiplier));
                *last
            }
            Some((last, _)) => *last,
            None => raw,
        };
        let Some(event) = packet.track_event else {
            return;
        };
        let track = event.track_uuid.or(seq.default_track).unwrap_or(0);
        let name = match (event.name_iid, &event.name) {
            (_, Some(name)) => Some(shared(name)),
            (Some(iid), None) => seq.names.get(&iid).cloned(),
            (None, None) => None,
        };
        let category = event
            .categories
            .first()
            .map(|c| shared(c))
            .or_else(|| {
                event
                    .category_iids
                    .first()
                    .and_then(|iid| seq.categories.get(iid).cloned())
            })
            .unwrap_or_else(|| Rc::from(""));
        let missing_name = event.name_iid.is_some() && name.is_none();
        let mut fields = fields(seq, &event.debug_annotations);
        if fields.correlation.is_none() {
            fields.correlation = event.correlation_id;
        }
        let kind = event.r#type.and_then(|t| Type::try_from(t).ok());
        if missing_name {
            self.note("perfetto-unknown-iid", index);
        }
        let name = name.unwrap_or_else(|| Rc::from(""));
        match kind {
            Some(Type::SliceBegin) => {
                self.open.entry(track).or_default().push(Open {
                    start: time,
                    name,
                    category,
                    fields,
                    packet: index,
                });
            }
            Some(Type::SliceEnd) => match self.open.get_mut(&track).and_then(Vec::pop) {
                Some(open) => self.slices.push(Slice {
                    track,
                    start: open.start,
                    end: time,
                    name: open.name,
                    category: open.category,
                    fields: open.fields,
                    packet: open.packet,
                }),
                None => self.note("perfetto-unmatched-end", index),
            },
            Some(Type::Instant) => self.slices.push(Slice {
                track,
                start: time,
                end: time,
                name,
                category,
                fields,
                packet: index,
            }),
            Some(Type::Counter) => self.note("perfetto-counter-skipped", index),
            Some(Type::Unspecified) | None => self.note("perfetto-untyped-event", index),
        }
    }

    fn finish(mut self, path: &Path) -> Process {
        let unterminated: Vec<u64> = self
            .open
            .values()
            .flat_map(|stack| stack.iter().map(|o| o.packet))
            .collect();
        for packet in unterminated {
            self.note("perfetto-unterminated-slice", packet);
        }
        let rocprof = self.slices.iter().any(|s| is_rocprof_category(&s.category));
        let format = Format::RocprofPerfetto;
        let mut tables = Tables::new(format);
        tables.cut += self.sequences.values().map(|s| s.cut).sum::<u64>();
        let processes: Vec<i64> = self
            .tracks
            .values()
            .filter_map(|t| t.process.as_ref().and_then(|p| p.pid))
            .map(i64::from)
            .collect();
        let sole_pid = match processes.as_slice() {
            [one] => Some(*one),
            _ => None,
        };
        for slice in &self.slices {
            let track = self.tracks.get(&slice.track);
            let track_name = track
                .and_then(|t| t.name.as_deref().or(t.static_name.as_deref()))
                .unwrap_or("");
            let gpu = rocprof && matches!(&*slice.category, "kernel_dispatch" | "memory_copy");
            if gpu {
                let copy = (&*slice.category == "memory_copy").then(|| copy_direction(&slice.name));
                let device = gpu_device(&slice.fields, track_name, copy);
                let (ordinal, stream_name) = gpu_stream(&slice.fields, track_name, copy.is_some());
                tables.stream(device, ordinal, Some(&stream_name));
                tables.share(&slice.name);
                tables.push_activity(Activity {
                    device,
                    stream: ordinal,
                    start: slice.start,
                    end: slice.end,
                    name: &slice.name,
                    correlation: slice.fields.correlation,
                    copy,
                    bytes: slice.fields.bytes,
                });
                continue;
            }
            let (pid, tid, thread_name) = host_thread(&self.tracks, slice, sole_pid);
            let kind = if !rocprof {
                HostKind::Other
            } else if &*slice.category == "marker_api" {
                HostKind::Annotation
            } else if API_CATEGORIES.contains(&&*slice.category) {
                HostKind::Runtime
            } else {
                self.odd
                    .entry("perfetto-category-skipped")
                    .or_insert((0, slice.packet))
                    .0 += 1;
                continue;
            };
            tables.thread(pid, tid, thread_name.as_deref());
            tables.share(&slice.name);
            tables.push_host(Host {
                pid,
                tid,
                start: slice.start,
                end: slice.end,
                name: &slice.name,
                kind,
                correlation: if rocprof {
                    slice.fields.correlation
                } else {
                    None
                },
            });
        }
        if !rocprof && !self.slices.is_empty() {
            let first = self.slices.iter().map(|s| s.packet).min().unwrap_or(0);
            self.odd.insert("perfetto-other-producer", (1, first));
        }
        let file = path.display().to_string();
        for (code, (count, packet)) in self.odd {
            tables.b.diagnostics.add_many(
                code,
                count,
                diagnostic_message(code).to_owned(),
                format!("{file}: packet {packet}"),
            );
        }
        Process {
            pid: sole_pid,
            name: None,
            rank: None,
            capture: tables.finish(path),
        }
    }
}

fn diagnostic_message(code: &str) -> &'static str {
    match code {
        "perfetto-other-producer" => {
            "not a rocprofv3 trace (no hip_api, hsa_api, kernel_dispatch or memory_copy \
             slices): every slice was read as a host event, none as GPU work"
        }
        "perfetto-unknown-iid" => {
            "events refer to an interned name their sequence never defined (packets lost, or \
             interned state cleared); they were read with an empty name"
        }
        "perfetto-unmatched-end" => "slice ends with no begun slice on their track were ignored",
        "perfetto-unterminated-slice" => "slices begun but never ended were left out",
        "perfetto-counter-skipped" => "counter track values were not read",
        "perfetto-untyped-event" => "track events without a type (legacy events) were not read",
        "perfetto-category-skipped" => {
            "rocprofv3 slices of categories the model has no place for (memory allocation, \
             scratch memory) were left out"
        }
        _ => "odd Perfetto input",
    }
}

fn intern(seq: &mut Sequence, interned: InternedData) {
    let long = |s: &str| u64::from(trace_model::limits::cut_name(s).is_some());
    for e in interned.event_names {
        let name = e.name.as_deref().unwrap_or_default();
        seq.cut += long(name);
        seq.names.insert(e.iid.unwrap_or(0), shared(name));
    }
    for e in interned.event_categories {
        let name = e.name.as_deref().unwrap_or_default();
        seq.cut += long(name);
        seq.categories.insert(e.iid.unwrap_or(0), shared(name));
    }
    for e in interned.debug_annotation_names {
        let name = e.name.unwrap_or_default();
        let name = trace_model::limits::cut_name(&name).unwrap_or(name);
        seq.annotation_names.insert(e.iid.unwrap_or(0), name);
    }
    for e in interned.debug_annotation_string_values {
        let text = String::from_utf8_lossy(e.str.as_deref().unwrap_or_default()).into_owned();
        let text = trace_model::limits::cut_name(&text).unwrap_or(text);
        seq.annotation_strings.insert(e.iid.unwrap_or(0), text);
    }
}

/// A name to share between events, cut at the name limit when longer (the cut is
/// counted when the name reaches a capture).
fn shared(name: &str) -> Rc<str> {
    match trace_model::limits::cut_name(name) {
        Some(cut) => Rc::from(cut),
        None => Rc::from(name),
    }
}

fn merge_track(into: &mut TrackDescriptor, from: TrackDescriptor) {
    into.uuid = into.uuid.or(from.uuid);
    into.parent_uuid = into.parent_uuid.or(from.parent_uuid);
    if from.name.is_some() {
        into.name = from.name;
    }
    if from.static_name.is_some() {
        into.static_name = from.static_name;
    }
    if from.process.is_some() {
        into.process = from.process;
    }
    if from.thread.is_some() {
        into.thread = from.thread;
    }
}

/// The annotations rocprofv3 writes that the model uses, by their (interned) names.
fn fields(seq: &Sequence, annotations: &[DebugAnnotation]) -> Fields {
    let mut out = Fields::default();
    for a in annotations {
        let name = match (&a.name, a.name_iid) {
            (Some(name), _) => name.as_str(),
            (None, Some(iid)) => match seq.annotation_names.get(&iid) {
                Some(name) => name.as_str(),
                None => continue,
            },
            (None, None) => continue,
        };
        let int = a
            .uint_value
            .or_else(|| a.int_value.and_then(|v| u64::try_from(v).ok()));
        let text = a
            .string_value
            .clone()
            .or_else(|| {
                a.string_value_iid
                    .and_then(|iid| seq.annotation_strings.get(&iid).cloned())
            })
            .or_else(|| int.map(|v| v.to_string()));
        match name {
            "corr_id" => out.correlation = int,
            "tid" => out.tid = int.and_then(|v| i64::try_from(v).ok()),
            "agent" => out.agent = text,
            "queue" => out.queue = int.and_then(|v| i64::try_from(v).ok()),
            "src_agent" => out.src_agent = text,
            "dst_agent" => out.dst_agent = text,
            "copy_bytes" => out.bytes = int,
            _ => {}
        }
    }
    out
}

/// The number after `key [` in a rocprofv3 track name (`COMPUTE AGENT [1] STREAM [2]`).
fn bracketed(name: &str, key: &str) -> Option<i64> {
    let at = name.find(&format!("{key} ["))? + key.len() + 2;
    let rest = &name[at..];
    rest[..rest.find(']')?].trim().parse().ok()
}

/// The device of a GPU slice: its agent annotation (the GPU end for a copy), else the
/// track name's `AGENT [n]`, else 0.
fn gpu_device(fields: &Fields, track_name: &str, copy: Option<MemcpyDirection>) -> i64 {
    let label = match copy {
        None => fields.agent.as_deref(),
        Some(MemcpyDirection::DeviceToHost) => fields.src_agent.as_deref(),
        Some(_) => fields.dst_agent.as_deref(),
    };
    label
        .and_then(agent_number)
        .or_else(|| bracketed(track_name, "AGENT"))
        .unwrap_or(0)
}

/// The stream of a GPU slice: the track's `STREAM [s]`, else its `QUEUE [q]` (or the
/// `queue` annotation), else, for copies, one stream of copies per device (ordinal -1).
fn gpu_stream(fields: &Fields, track_name: &str, copy: bool) -> (i64, String) {
    if let Some(s) = bracketed(track_name, "STREAM") {
        return (s, format!("Stream {s}"));
    }
    if !copy && let Some(q) = fields.queue.or_else(|| bracketed(track_name, "QUEUE")) {
        return (q, format!("Queue {q}"));
    }
    if copy {
        return (-1, "memory copies".to_owned());
    }
    (0, "Stream 0".to_owned())
}

/// The host thread of a slice: the `tid` annotation or the track's thread descriptor, in
/// the process of the track (or its parent), else the trace's one process.
fn host_thread(
    tracks: &BTreeMap<u64, TrackDescriptor>,
    slice: &Slice,
    sole_pid: Option<i64>,
) -> (i64, i64, Option<String>) {
    let track = tracks.get(&slice.track);
    let thread = track.and_then(|t| t.thread.as_ref());
    let parent = track
        .and_then(|t| t.parent_uuid)
        .and_then(|p| tracks.get(&p));
    let pid = thread
        .and_then(|t| t.pid)
        .or_else(|| parent.and_then(|p| p.process.as_ref()).and_then(|p| p.pid))
        .or_else(|| track.and_then(|t| t.process.as_ref()).and_then(|p| p.pid))
        .map(i64::from)
        .or(sole_pid)
        .unwrap_or(0);
    let name = track.and_then(|t| t.name.clone().or_else(|| t.static_name.clone()));
    let tid = slice
        .fields
        .tid
        .or_else(|| thread.and_then(|t| t.tid).map(i64::from))
        // A track that is no thread's: its uuid's low bits stand for one.
        .unwrap_or((slice.track & 0x7fff_ffff) as i64);
    let thread_name = thread.and_then(|t| t.thread_name.clone()).or(name);
    (pid, tid, thread_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn track_name_numbers() {
        let name = "COMPUTE AGENT [1] STREAM [2] (GPU)";
        assert_eq!(bracketed(name, "AGENT"), Some(1));
        assert_eq!(bracketed(name, "STREAM"), Some(2));
        assert_eq!(bracketed(name, "QUEUE"), None);
        assert_eq!(bracketed("COPY to AGENT [x]", "AGENT"), None);
    }
}
