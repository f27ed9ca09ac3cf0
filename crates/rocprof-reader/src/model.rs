//! What every ROCm format shares on the way into trace-model: devices by agent number,
//! streams by (device, queue or stream), host threads by (pid, tid), and one source index
//! per event.

use std::collections::BTreeMap;
use std::path::Path;

use trace_model::{
    ActivityDetails, ActivityKind, Capture, CaptureBuilder, Device, DeviceId, DeviceProperties,
    Format, GpuActivity, HostEvent, HostKind, HostThread, KernelClass, MemcpyDirection, Nanos,
    Stream, StreamId, ThreadId, Vendor, classify_kernel,
};

/// A capture being filled, with the lookups every format needs.
pub(crate) struct Tables {
    pub(crate) b: CaptureBuilder,
    devices: BTreeMap<i64, DeviceId>,
    streams: BTreeMap<(i64, i64), StreamId>,
    threads: BTreeMap<(i64, i64), ThreadId>,
    next_index: u64,
    /// Names cut at the name limit.
    pub(crate) cut: u64,
    /// Names shared by many events ([`Tables::share`]), by address and length, each kept
    /// alive here so that the address stays its own.
    shared: std::collections::HashMap<(usize, usize), (std::rc::Rc<str>, trace_model::StringId)>,
}

/// One GPU activity as a reader found it.
pub(crate) struct Activity<'a> {
    pub(crate) device: i64,
    pub(crate) stream: i64,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) name: &'a str,
    pub(crate) correlation: Option<u64>,
    /// `None` for a kernel; the direction for a copy.
    pub(crate) copy: Option<MemcpyDirection>,
    pub(crate) bytes: Option<u64>,
}

/// One host event (API call, marker) as a reader found it.
pub(crate) struct Host<'a> {
    pub(crate) pid: i64,
    pub(crate) tid: i64,
    pub(crate) start: u64,
    pub(crate) end: u64,
    pub(crate) name: &'a str,
    pub(crate) kind: HostKind,
    pub(crate) correlation: Option<u64>,
}

impl Tables {
    pub(crate) fn new(format: Format) -> Tables {
        let mut b = CaptureBuilder::new(format);
        b.meta.producer = Some(format.describe().to_owned());
        Tables {
            b,
            devices: BTreeMap::new(),
            streams: BTreeMap::new(),
            threads: BTreeMap::new(),
            next_index: 0,
            cut: 0,
            shared: std::collections::HashMap::new(),
        }
    }

    /// The device with this agent number, made on first use (an AMD GPU).
    pub(crate) fn device(&mut self, ordinal: i64) -> DeviceId {
        let devices = &mut self.b.devices;
        *self.devices.entry(ordinal).or_insert_with(|| {
            let id = DeviceId::new(devices.len() as u32);
            devices.push(Device {
                id,
                ordinal,
                vendor: Vendor::Amd,
                properties: DeviceProperties::default(),
            });
            id
        })
    }

    /// Sets what the capture recorded about a device.
    pub(crate) fn set_device_properties(&mut self, ordinal: i64, properties: DeviceProperties) {
        let id = self.device(ordinal);
        self.b.devices[id.index()].properties = properties;
    }

    /// The stream `ordinal` of device `device`, made on first use with `name`.
    pub(crate) fn stream(&mut self, device: i64, ordinal: i64, name: Option<&str>) -> StreamId {
        if let Some(&id) = self.streams.get(&(device, ordinal)) {
            return id;
        }
        let device_id = self.device(device);
        let id = StreamId::new(self.b.streams.len() as u32);
        let name = name.map(|n| self.b.strings.intern(n));
        self.b.streams.push(Stream {
            id,
            device: device_id,
            ordinal,
            name,
        });
        self.streams.insert((device, ordinal), id);
        id
    }

    /// The host thread `tid` of process `pid`, made on first use.
    pub(crate) fn thread(&mut self, pid: i64, tid: i64, name: Option<&str>) -> ThreadId {
        if let Some(&id) = self.threads.get(&(pid, tid)) {
            if let Some(name) = name
                && self.b.threads[id.index()].name.is_none()
            {
                self.b.threads[id.index()].name = Some(self.b.strings.intern(name));
            }
            return id;
        }
        let id = ThreadId::new(self.b.threads.len() as u32);
        let name = name.map(|n| self.b.strings.intern(n));
        self.b.threads.push(HostThread {
            id,
            pid,
            tid,
            name,
            pid_text: None,
            tid_text: None,
        });
        self.threads.insert((pid, tid), id);
        id
    }

    /// The next event's source index (events are numbered in reading order).
    pub(crate) fn next_index(&mut self) -> u64 {
        let index = self.next_index;
        self.next_index += 1;
        index
    }

    /// Pushes a kernel or copy; returns its source index.
    pub(crate) fn push_activity(&mut self, a: Activity<'_>) -> u64 {
        let stream = self.stream(a.device, a.stream, None);
        let index = self.next_index();
        let name = self.name(a.name);
        let (kind, class) = match a.copy {
            None => (
                ActivityKind::Kernel,
                classify_kernel(self.b.strings.get(name)),
            ),
            Some(direction) => (ActivityKind::Memcpy, KernelClass::Memcpy(direction)),
        };
        let (start, dur) = span(a.start, a.end);
        let mut activity = GpuActivity::new(stream, start, dur, name, kind, class, index);
        activity.set_correlation(a.correlation);
        let details = ActivityDetails {
            bytes: a.bytes,
            ..ActivityDetails::default()
        };
        self.b.push_activity(activity, details);
        index
    }

    /// Pushes a host event on its thread; returns its source index.
    pub(crate) fn push_host(&mut self, h: Host<'_>) -> u64 {
        let thread = self.thread(h.pid, h.tid, None);
        let index = self.next_index();
        let name = self.name(h.name);
        let (start, dur) = span(h.start, h.end);
        let mut event = HostEvent::new(thread, start, dur, name, h.kind, index);
        event.set_correlation(h.correlation);
        self.b.push_host_event(event, None);
        index
    }

    /// The interned name, cut at the name limit (and counted) when longer: a name is
    /// copied into every row of a text output.
    fn name(&mut self, name: &str) -> trace_model::StringId {
        if let Some((_, id)) = self.shared.get(&(name.as_ptr() as usize, name.len())) {
            return *id;
        }
        match trace_model::limits::cut_name(name) {
            Some(cut) => {
                self.cut += 1;
                self.b.strings.intern(&cut)
            }
            None => self.b.strings.intern(name),
        }
    }

    /// Interns a name many events share once: a later event named by this same `Rc`
    /// finds its id by address, without hashing the text again.
    pub(crate) fn share(&mut self, name: &std::rc::Rc<str>) {
        let key = (name.as_ptr() as usize, name.len());
        if !self.shared.contains_key(&key) {
            let id = self.b.strings.intern(name);
            self.shared.insert(key, (name.clone(), id));
        }
    }

    pub(crate) fn finish(mut self, path: &Path) -> Capture {
        if self.cut > 0 {
            self.b.diagnostics.add_many(
                "name-cut",
                self.cut,
                format!(
                    "names longer than {} bytes were cut, each followed by its full length \
                     (set TRACEWISE_MAX_NAME_BYTES to keep longer names)",
                    trace_model::limits::max_name_bytes()
                ),
                path.display().to_string(),
            );
        }
        self.b.finish(path)
    }
}

/// Start and duration on the capture's axis from two unsigned nanosecond stamps. A stamp
/// beyond `i64::MAX` saturates, and an end before its start gives a negative duration:
/// `CaptureBuilder::finish` leaves both out and counts them.
pub(crate) fn span(start: u64, end: u64) -> (Nanos, Nanos) {
    let start = i64::try_from(start).unwrap_or(i64::MAX);
    let end = i64::try_from(end).unwrap_or(i64::MAX);
    (Nanos(start), Nanos(end.saturating_sub(start)))
}

/// The direction of a rocprofiler memory copy from its operation name
/// (`MEMORY_COPY_HOST_TO_DEVICE`) or the short forms other tools print.
pub(crate) fn copy_direction(name: &str) -> MemcpyDirection {
    let upper = name.to_ascii_uppercase();
    if upper.contains("HOST_TO_DEVICE") {
        MemcpyDirection::HostToDevice
    } else if upper.contains("DEVICE_TO_HOST") {
        MemcpyDirection::DeviceToHost
    } else if upper.contains("DEVICE_TO_DEVICE") {
        MemcpyDirection::DeviceToDevice
    } else if upper.contains("HOST_TO_HOST") {
        MemcpyDirection::HostToHost
    } else if upper.contains("PEER") {
        MemcpyDirection::PeerToPeer
    } else {
        trace_model::memcpy_direction(name)
    }
}

/// The host-event kind of a rocprofiler API domain or Perfetto category
/// (`HIP_RUNTIME_API`, `hsa_api`, `MARKER_CORE_API`, ...).
pub(crate) fn api_kind(domain: &str) -> HostKind {
    let lower = domain.to_ascii_lowercase();
    if lower.contains("marker") || lower.contains("roctx") {
        HostKind::Annotation
    } else {
        HostKind::Runtime
    }
}

/// The number in an agent label: `4` in `Agent 4`, `GPU 4` or `4`.
pub(crate) fn agent_number(text: &str) -> Option<i64> {
    let digits = text
        .trim()
        .rsplit(|c: char| !c.is_ascii_digit())
        .next()
        .filter(|d| !d.is_empty())?;
    digits.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn agent_numbers() {
        for (text, expect) in [
            ("Agent 4", Some(4)),
            ("4", Some(4)),
            (" GPU 12 ", Some(12)),
            ("Agent", None),
            ("", None),
        ] {
            assert_eq!(agent_number(text), expect, "{text:?}");
        }
    }

    #[test]
    fn copy_directions() {
        for (name, expect) in [
            ("MEMORY_COPY_HOST_TO_DEVICE", MemcpyDirection::HostToDevice),
            ("MEMORY_COPY_DEVICE_TO_HOST", MemcpyDirection::DeviceToHost),
            (
                "MEMORY_COPY_DEVICE_TO_DEVICE",
                MemcpyDirection::DeviceToDevice,
            ),
            ("MEMORY_COPY_HOST_TO_HOST", MemcpyDirection::HostToHost),
            ("MEMORY_COPY_NONE", MemcpyDirection::Unknown),
        ] {
            assert_eq!(copy_direction(name), expect, "{name}");
        }
    }

    #[test]
    fn spans_saturate_and_keep_negative_durations() {
        assert_eq!(span(10, 25), (Nanos(10), Nanos(15)));
        assert_eq!(span(25, 10), (Nanos(25), Nanos(-15)));
        assert_eq!(span(u64::MAX, u64::MAX).0, Nanos(i64::MAX));
    }
}
