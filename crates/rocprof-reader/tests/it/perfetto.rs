//! Perfetto traces: the real rocprofv3 `.pftrace` files against an independent decode with
//! the generated messages, and traces written here with the kernel-dispatch and
//! memory-copy tracks rocprofv3 writes (the shared files hold only HIP API slices).

use std::collections::{BTreeMap, HashMap};

use prost::Message;
use rocprof_reader::proto::{
    DebugAnnotation, DebugAnnotationName, EventCategory, EventName, InternedData,
    ProcessDescriptor, ThreadDescriptor, Trace, TracePacket, TrackDescriptor, TrackEvent,
    trace_packet::SequenceFlags, track_event::Type,
};
use rocprof_reader::{Kind, detect, load};
use trace_model::{ActivityKind, Capture, HostKind, KernelClass, MemcpyDirection};

/// What an independent decode of a trace counts: begun slices per track, and how many
/// of them are in category `kernel_dispatch`.
struct Counts {
    per_track: BTreeMap<u64, usize>,
    kernel_dispatches: usize,
}

/// Decodes the whole file as one `Trace` (no framing of our own) and counts begin events,
/// resolving interned categories per sequence with resets.
fn independent_counts(bytes: &[u8]) -> Counts {
    let trace = Trace::decode(bytes).expect("the shared traces decode");
    let mut categories: HashMap<u32, HashMap<u64, String>> = HashMap::new();
    let mut counts = Counts {
        per_track: BTreeMap::new(),
        kernel_dispatches: 0,
    };
    for packet in trace.packet {
        let seq = packet.trusted_packet_sequence_id.unwrap_or(0);
        if packet.sequence_flags.unwrap_or(0) & 1 != 0 {
            categories.remove(&seq);
        }
        let interned = categories.entry(seq).or_default();
        if let Some(data) = &packet.interned_data {
            for c in &data.event_categories {
                interned.insert(c.iid.unwrap(), c.name.clone().unwrap());
            }
        }
        let Some(event) = packet.track_event else {
            continue;
        };
        if event.r#type != Some(Type::SliceBegin as i32) {
            continue;
        }
        *counts
            .per_track
            .entry(event.track_uuid.unwrap_or(0))
            .or_default() += 1;
        let category = event
            .category_iids
            .first()
            .and_then(|iid| interned.get(iid).cloned())
            .or_else(|| event.categories.first().cloned());
        if category.as_deref() == Some("kernel_dispatch") {
            counts.kernel_dispatches += 1;
        }
    }
    counts
}

/// Every activity whose correlation id some host call has is linked to such a call.
fn assert_linked_by_correlation(c: &Capture) {
    let calls: HashMap<u64, usize> = c
        .host_events()
        .iter()
        .filter(|e| matches!(e.kind, HostKind::Runtime | HostKind::Launch))
        .filter_map(|e| e.correlation())
        .fold(HashMap::new(), |mut m, id| {
            *m.entry(id).or_default() += 1;
            m
        });
    for a in c.activities() {
        let Some(id) = a.correlation() else { continue };
        if calls.contains_key(&id) {
            let launch = c.host_event(a.launch().expect("a call with its id exists"));
            assert_eq!(launch.correlation(), Some(id));
            assert_eq!(launch.kind, HostKind::Launch);
        } else {
            assert!(a.launch().is_none());
        }
    }
}

#[test]
fn real_pftrace_slice_counts_equal_an_independent_decode() {
    let Some(dir) = crate::rocprof_dir("real_pftrace_slice_counts_equal_an_independent_decode")
    else {
        return;
    };
    let dir = dir.join("rocprofv3-pftrace-jacc");
    let mut total = 0;
    for (file, slices, pid) in [
        ("3634724_results.pftrace", 5, 3634724),
        ("3635359_results.pftrace", 1132, 3635359),
    ] {
        let path = dir.join(file);
        let bytes = std::fs::read(&path).unwrap();
        let counts = independent_counts(&bytes);
        assert_eq!(
            counts.per_track.values().sum::<usize>(),
            slices,
            "MANIFEST: {file}"
        );
        assert_eq!(detect(&path), Some(Kind::Perfetto));
        let loaded = load(&path).unwrap();
        assert_eq!(loaded.len(), 1);
        assert_eq!(loaded[0].pid, Some(pid), "{file}");
        let c = &loaded[0].capture;
        assert_eq!(c.format(), trace_model::Format::RocprofPerfetto);
        // Each host track is one thread: the same multiset of slice counts.
        let mut ours: Vec<usize> = c
            .threads()
            .iter()
            .map(|t| c.thread_events(t.id).len())
            .collect();
        let mut theirs: Vec<usize> = counts.per_track.values().copied().collect();
        ours.sort_unstable();
        theirs.sort_unstable();
        assert_eq!(ours, theirs, "{file}");
        let kernels = c
            .activities()
            .iter()
            .filter(|a| a.kind == ActivityKind::Kernel)
            .count();
        assert_eq!(kernels, counts.kernel_dispatches, "{file}");
        assert!(c.host_events().iter().all(|e| e.kind == HostKind::Runtime));
        assert!(c.threads().iter().all(|t| t.pid == pid));
        assert!(c.diagnostics().get("perfetto-other-producer").is_none());
        assert_linked_by_correlation(c);
        total += c.host_events().len();
    }
    assert_eq!(total, 1137);
}

/// Writing traces: packets of one sequence with interned names.
struct Writer {
    packets: Vec<TracePacket>,
}

const PROCESS: u64 = 10;
const THREAD: u64 = 11;
const COMPUTE: u64 = 20;
const COPY: u64 = 21;

fn annotation(name_iid: u64, uint: Option<u64>, text: Option<&str>) -> DebugAnnotation {
    DebugAnnotation {
        name_iid: Some(name_iid),
        uint_value: uint,
        string_value: text.map(str::to_owned),
        ..DebugAnnotation::default()
    }
}

impl Writer {
    fn packet(&mut self, seq: u32, packet: TracePacket) {
        self.packets.push(TracePacket {
            trusted_packet_sequence_id: Some(seq),
            ..packet
        });
    }

    /// A slice: begin (with its interned name iid, category iid, annotations) and end.
    #[allow(clippy::too_many_arguments)] // A test writer: one line per slice reads best.
    fn slice(
        &mut self,
        seq: u32,
        track: u64,
        start: u64,
        end: u64,
        name_iid: u64,
        category_iid: u64,
        annotations: Vec<DebugAnnotation>,
        interned: Option<InternedData>,
    ) {
        self.packet(
            seq,
            TracePacket {
                timestamp: Some(start),
                sequence_flags: Some(SequenceFlags::SeqNeedsIncrementalState as u32),
                interned_data: interned,
                track_event: Some(TrackEvent {
                    r#type: Some(Type::SliceBegin as i32),
                    track_uuid: Some(track),
                    name_iid: Some(name_iid),
                    category_iids: vec![category_iid],
                    debug_annotations: annotations,
                    ..TrackEvent::default()
                }),
                ..TracePacket::default()
            },
        );
        self.packet(
            seq,
            TracePacket {
                timestamp: Some(end),
                track_event: Some(TrackEvent {
                    r#type: Some(Type::SliceEnd as i32),
                    track_uuid: Some(track),
                    ..TrackEvent::default()
                }),
                ..TracePacket::default()
            },
        );
    }

    fn bytes(self) -> Vec<u8> {
        Trace {
            packet: self.packets,
        }
        .encode_to_vec()
    }
}

fn names(pairs: &[(u64, &str)]) -> Vec<EventName> {
    pairs
        .iter()
        .map(|&(iid, name)| EventName {
            iid: Some(iid),
            name: Some(name.to_owned()),
        })
        .collect()
}

fn track(uuid: u64, parent: Option<u64>, name: Option<&str>) -> TracePacket {
    TracePacket {
        track_descriptor: Some(TrackDescriptor {
            uuid: Some(uuid),
            parent_uuid: parent,
            name: name.map(str::to_owned),
            ..TrackDescriptor::default()
        }),
        ..TracePacket::default()
    }
}

/// A trace laid out as rocprofv3 writes one: a process and a thread track, a compute and
/// a copy track of agent 1 stream 3; HIP calls, a marker, two kernels, a copy; then a
/// reset of the sequence's interned state that gives iid 1 another name; a second
/// sequence whose iids mean other names again.
pub fn rocprof_like_trace() -> Vec<u8> {
    let mut w = Writer {
        packets: Vec::new(),
    };
    w.packet(
        1,
        TracePacket {
            sequence_flags: Some(SequenceFlags::SeqIncrementalStateCleared as u32),
            ..TracePacket::default()
        },
    );
    let mut process = track(PROCESS, None, None);
    process.track_descriptor.as_mut().unwrap().process = Some(ProcessDescriptor {
        pid: Some(4242),
        process_name: Some("app".to_owned()),
        ..ProcessDescriptor::default()
    });
    w.packet(1, process);
    let mut thread = track(THREAD, Some(PROCESS), None);
    thread.track_descriptor.as_mut().unwrap().thread = Some(ThreadDescriptor {
        pid: Some(4242),
        tid: Some(4243),
        thread_name: Some("main".to_owned()),
    });
    w.packet(1, thread);
    w.packet(
        1,
        track(COMPUTE, None, Some("COMPUTE AGENT [1] STREAM [3] (GPU)")),
    );
    w.packet(
        1,
        track(COPY, None, Some("COPY to AGENT [1] STREAM [3] (GPU)")),
    );
    let interned = InternedData {
        event_categories: ["hip_api", "kernel_dispatch", "memory_copy", "marker_api"]
            .iter()
            .zip(1..)
            .map(|(name, iid)| EventCategory {
                iid: Some(iid),
                name: Some((*name).to_owned()),
            })
            .collect(),
        event_names: names(&[
            (1, "hipLaunchKernel"),
            (2, "hipMemcpyAsync"),
            (3, "gemm_kernel"),
            (4, "MEMORY_COPY_HOST_TO_DEVICE"),
            (5, "step 1"),
            (6, "orphan_kernel"),
        ]),
        debug_annotation_names: [
            "corr_id",
            "tid",
            "agent",
            "queue",
            "dst_agent",
            "copy_bytes",
        ]
        .iter()
        .zip(1..)
        .map(|(name, iid)| DebugAnnotationName {
            iid: Some(iid),
            name: Some((*name).to_owned()),
        })
        .collect(),
        ..InternedData::default()
    };
    let corr = |id| annotation(1, Some(id), None);
    let tid = annotation(2, Some(4243), None);
    w.slice(
        1,
        THREAD,
        900,
        3_000,
        5,
        4,
        vec![corr(1), tid.clone()],
        Some(interned),
    );
    w.slice(
        1,
        THREAD,
        1_000,
        1_500,
        1,
        1,
        vec![corr(7), tid.clone()],
        None,
    );
    w.slice(
        1,
        THREAD,
        2_000,
        2_400,
        2,
        1,
        vec![corr(8), tid.clone()],
        None,
    );
    let gpu = |c: u64| {
        vec![
            corr(c),
            annotation(3, None, Some("Agent-1")),
            annotation(4, Some(55), None),
        ]
    };
    w.slice(1, COMPUTE, 5_000, 9_000, 3, 2, gpu(7), None);
    w.slice(1, COMPUTE, 9_500, 9_900, 6, 2, gpu(99), None);
    let copy = vec![
        corr(8),
        annotation(5, None, Some("Agent-1")),
        annotation(6, Some(4096), None),
    ];
    w.slice(1, COPY, 10_000, 12_000, 4, 3, copy, None);
    // Reset: iid 1 now names another call and category iid 1 is still hip_api.
    w.packet(
        1,
        TracePacket {
            sequence_flags: Some(SequenceFlags::SeqIncrementalStateCleared as u32),
            ..TracePacket::default()
        },
    );
    let after_reset = InternedData {
        event_categories: vec![EventCategory {
            iid: Some(1),
            name: Some("hip_api".to_owned()),
        }],
        event_names: names(&[(1, "hipStreamSynchronize")]),
        debug_annotation_names: vec![DebugAnnotationName {
            iid: Some(1),
            name: Some("corr_id".to_owned()),
        }],
        ..InternedData::default()
    };
    w.slice(
        1,
        THREAD,
        13_000,
        14_000,
        1,
        1,
        vec![corr(9)],
        Some(after_reset),
    );
    // Another sequence: its iid 1 is its own.
    let other = InternedData {
        event_categories: vec![EventCategory {
            iid: Some(1),
            name: Some("hip_api".to_owned()),
        }],
        event_names: names(&[(1, "hipDeviceSynchronize")]),
        ..InternedData::default()
    };
    w.packet(
        2,
        TracePacket {
            sequence_flags: Some(SequenceFlags::SeqIncrementalStateCleared as u32),
            ..TracePacket::default()
        },
    );
    w.slice(2, THREAD, 15_000, 16_000, 1, 1, vec![], Some(other));
    // An iid sequence 2 never defined.
    w.slice(2, THREAD, 17_000, 17_500, 42, 1, vec![], None);
    w.bytes()
}

#[test]
fn rocprof_tracks_become_devices_streams_activities_and_links() {
    let dir = crate::scratch();
    let path = dir.path().join("4242_results.pftrace");
    std::fs::write(&path, rocprof_like_trace()).unwrap();
    assert_eq!(detect(&path), Some(Kind::Perfetto));
    let loaded = load(&path).unwrap();
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].pid, Some(4242));
    let c = &loaded[0].capture;
    let activities: Vec<_> = c
        .activities()
        .iter()
        .map(|a| {
            let s = c.stream(a.stream);
            (
                c.name(a.name),
                a.start.0,
                a.dur.0,
                c.device(s.device).ordinal,
                s.ordinal,
                a.correlation(),
                a.launch().map(|l| c.name(c.host_event(l).name)),
                c.activity_bytes(a),
            )
        })
        .collect();
    assert_eq!(
        activities,
        [
            (
                "gemm_kernel",
                5_000,
                4_000,
                1,
                3,
                Some(7),
                Some("hipLaunchKernel"),
                None
            ),
            ("orphan_kernel", 9_500, 400, 1, 3, Some(99), None, None),
            (
                "MEMORY_COPY_HOST_TO_DEVICE",
                10_000,
                2_000,
                1,
                3,
                Some(8),
                Some("hipMemcpyAsync"),
                Some(4096)
            ),
        ]
    );
    assert_eq!(
        c.activities()[2].class,
        KernelClass::Memcpy(MemcpyDirection::HostToDevice)
    );
    assert_eq!(c.activities()[2].kind, ActivityKind::Memcpy);
    assert_eq!(c.devices().len(), 1);
    assert_eq!(
        c.streams().len(),
        1,
        "kernels and copies of stream 3 share it"
    );
    let host: Vec<_> = c
        .host_events()
        .iter()
        .map(|e| (c.name(e.name), e.start.0, e.kind, c.thread(e.thread).tid))
        .collect();
    assert_eq!(
        host,
        [
            ("step 1", 900, HostKind::Annotation, 4243),
            ("hipLaunchKernel", 1_000, HostKind::Launch, 4243),
            ("hipMemcpyAsync", 2_000, HostKind::Launch, 4243),
            ("hipStreamSynchronize", 13_000, HostKind::Runtime, 4243),
            ("hipDeviceSynchronize", 15_000, HostKind::Runtime, 4243),
            ("", 17_000, HostKind::Runtime, 4243),
        ]
    );
    assert_eq!(c.thread(c.host_events()[0].thread).pid, 4242);
    assert_eq!(c.diagnostics().count("perfetto-unknown-iid"), 1);
    assert_eq!(c.diagnostics().count("activity-without-launch"), 1);
    assert_linked_by_correlation(c);
    // The independent decode agrees on the kernel dispatches.
    assert_eq!(
        independent_counts(&rocprof_like_trace()).kernel_dispatches,
        2
    );
}

#[test]
fn another_producers_trace_loads_as_host_slices_with_a_diagnostic() {
    let mut w = Writer {
        packets: Vec::new(),
    };
    let mut thread = track(THREAD, None, None);
    thread.track_descriptor.as_mut().unwrap().thread = Some(ThreadDescriptor {
        pid: Some(7),
        tid: Some(8),
        thread_name: None,
    });
    w.packet(1, thread);
    let interned = InternedData {
        event_categories: vec![EventCategory {
            iid: Some(1),
            name: Some("rendering".to_owned()),
        }],
        event_names: names(&[(1, "draw"), (2, "paint")]),
        ..InternedData::default()
    };
    w.slice(1, THREAD, 100, 900, 1, 1, vec![], Some(interned));
    w.slice(1, THREAD, 200, 300, 2, 1, vec![], None);
    // A slice begun and never ended.
    w.packet(
        1,
        TracePacket {
            timestamp: Some(1_000),
            track_event: Some(TrackEvent {
                r#type: Some(Type::SliceBegin as i32),
                track_uuid: Some(THREAD),
                name: Some("open".to_owned()),
                ..TrackEvent::default()
            }),
            ..TracePacket::default()
        },
    );
    let dir = crate::scratch();
    let path = dir.path().join("chrome.perfetto-trace");
    std::fs::write(&path, w.bytes()).unwrap();
    let c = &load(&path).unwrap()[0].capture;
    let host: Vec<_> = c
        .host_events()
        .iter()
        .map(|e| (c.name(e.name), e.start.0, e.dur.0, e.kind))
        .collect();
    assert_eq!(
        host,
        [
            ("draw", 100, 800, HostKind::Other),
            ("paint", 200, 100, HostKind::Other),
        ]
    );
    assert!(c.activities().is_empty());
    assert_eq!(c.diagnostics().count("perfetto-other-producer"), 1);
    assert_eq!(c.diagnostics().count("perfetto-unterminated-slice"), 1);
    assert_eq!(c.threads()[0].pid, 7);
}

/// A sequence whose packets default to an incremental clock: each timestamp is a delta
/// from the previous one, from the snapshot's base, and a reset starts again from a new
/// snapshot.
#[test]
fn incremental_clock_deltas_accumulate_per_sequence() {
    use rocprof_reader::proto::{ClockSnapshot, TracePacketDefaults, clock_snapshot::Clock};
    let mut w = Writer {
        packets: Vec::new(),
    };
    let mut thread = track(THREAD, None, None);
    thread.track_descriptor.as_mut().unwrap().thread = Some(ThreadDescriptor {
        pid: Some(1),
        tid: Some(2),
        thread_name: None,
    });
    w.packet(1, thread);
    let start_sequence = |base: u64| TracePacket {
        sequence_flags: Some(SequenceFlags::SeqIncrementalStateCleared as u32),
        trace_packet_defaults: Some(TracePacketDefaults {
            timestamp_clock_id: Some(64),
            track_event_defaults: None,
        }),
        clock_snapshot: Some(ClockSnapshot {
            clocks: vec![Clock {
                clock_id: Some(64),
                timestamp: Some(base),
                is_incremental: Some(true),
                unit_multiplier_ns: Some(1),
            }],
            primary_trace_clock: None,
        }),
        interned_data: Some(InternedData {
            event_categories: vec![EventCategory {
                iid: Some(1),
                name: Some("hip_api".to_owned()),
            }],
            event_names: names(&[(1, "hipMalloc")]),
            ..InternedData::default()
        }),
        ..TracePacket::default()
    };
    w.packet(3, start_sequence(20_000));
    w.slice(3, THREAD, 100, 50, 1, 1, vec![], None); // 20_100 .. 20_150
    w.packet(3, start_sequence(40_000));
    w.slice(3, THREAD, 10, 5, 1, 1, vec![], None); // 40_010 .. 40_015
    let dir = crate::scratch();
    let path = dir.path().join("incremental.pftrace");
    std::fs::write(&path, w.bytes()).unwrap();
    let c = &load(&path).unwrap()[0].capture;
    let times: Vec<_> = c
        .host_events()
        .iter()
        .map(|e| (e.start.0, e.dur.0))
        .collect();
    assert_eq!(times, [(20_100, 50), (40_010, 5)]);
}
