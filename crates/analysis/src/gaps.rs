//! GPU-idle gaps of a stream, and the host events on the launching threads that
//! overlap them: what the host was doing while the GPU waited.

use std::collections::BTreeMap;

use trace_model::{Capture, Format, HostEvent, HostKind, Nanos, StreamId, ThreadId};

use crate::budget::{Window, busy_intervals};
use std::borrow::Cow;

use crate::host_cause::{EarlyLabels, HostCause, Label, Labelled, ThreadLabels, split};
use crate::interval;
use crate::percent::ratio;
use trace_model::Provenance;

/// A stretch of a stream with nothing running, `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Gap {
    /// First idle instant.
    pub start: Nanos,
    /// First instant after the gap (the next activity's start, or the window's end).
    pub end: Nanos,
}

impl Gap {
    /// Length of the gap.
    pub fn len(&self) -> Nanos {
        self.end - self.start
    }

    /// Whether the gap has no length.
    pub fn is_empty(&self) -> bool {
        self.end <= self.start
    }
}

/// The idle gaps of one stream inside `window`: the complement of the union of its
/// activities, including the idle stretches at both ends of the window. Their total
/// equals the idle part of the stream's budget over the same window.
pub fn idle_gaps(capture: &Capture, stream: StreamId, window: Window) -> Vec<Gap> {
    let busy = busy_intervals(capture.stream_activities(stream).iter(), window);
    let mut gaps = Vec::new();
    let mut at = window.start;
    for (s, e) in busy {
        if s > at {
            gaps.push(Gap { start: at, end: s });
        }
        at = at.max(e);
    }
    if window.end > at {
        gaps.push(Gap {
            start: at,
            end: window.end,
        });
    }
    gaps
}

/// Why a stream sat idle, gap by gap (all `measured`), judged by the activity that ends
/// each gap:
/// - **host wait**: its launch call started after the gap began — nothing was queued,
///   the GPU waited for the host to issue work;
/// - **queued wait**: its launch call started before the gap began — the work was already
///   issued, yet the stream idled: it waited on a dependency (an event, another stream, a
///   collective's peers, a synchronisation), not on the host;
/// - **unattributed**: the activity has no launch in the trace, or no activity ends the gap
///   (the idle stretch at the end of the window).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct IdleCauses {
    /// Idle time before activities whose launch call started after the gap began.
    pub host_wait: Nanos,
    /// Idle time before activities whose launch call started before the gap began.
    pub queued_wait: Nanos,
    /// Idle time with no launch to judge by.
    pub unattributed: Nanos,
}

impl IdleCauses {
    /// Sum of the three causes: the stream's idle time in the window.
    pub fn total(&self) -> Nanos {
        self.host_wait + self.queued_wait + self.unattributed
    }

    /// Share of the idle time, in [0, 1]; 0 without idle time.
    pub fn share(&self, part: Nanos) -> f64 {
        ratio(part.0, self.total().0)
    }
}

/// Splits the idle gaps of `stream` (from [`idle_gaps`]) by cause.
pub fn idle_causes(capture: &Capture, stream: StreamId, gaps: &[Gap]) -> IdleCauses {
    let acts = capture.stream_activities(stream);
    let mut causes = IdleCauses::default();
    for g in gaps {
        // Activities are sorted by start: the first one starting at or after the gap's end
        // is the one that ends it.
        let next = acts.get(acts.partition_point(|a| a.start < g.end));
        let launch = next
            .filter(|a| a.start == g.end)
            .and_then(|a| a.launch())
            .map(|l| capture.host_event(l).start);
        match launch {
            Some(start) if start >= g.start => causes.host_wait += g.len(),
            Some(_) => causes.queued_wait += g.len(),
            None => causes.unattributed += g.len(),
        }
    }
    causes
}

/// Why a stretch of idle time happened, decided from the evidence of its own gap
/// (serialised as its snake-case name, `host_not_launched`).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum GapCause {
    /// The host had not issued the next activity yet, and was not blocked in a
    /// synchronising call: the GPU waited for the host.
    HostNotLaunched,
    /// The next activity was already issued but waited on another stream or an event (a
    /// stream-wait-event call before its launch, or the node dependencies of a graph).
    StreamOrEvent,
    /// The host had not issued the next activity because it was blocked in a
    /// synchronising call (device/stream/event synchronise, a synchronous copy): the host
    /// was waiting for the GPU, not the reverse.
    SyncCall,
    /// The trace holds no evidence: no launch for the next activity, work queued before
    /// the gap with no wait recorded, or no activity after the gap.
    Unknown,
}

impl GapCause {
    /// The cause in words, as reports print it.
    pub fn label(self) -> &'static str {
        match self {
            GapCause::HostNotLaunched => "host did not launch yet",
            GapCause::StreamOrEvent => "waiting on another stream or event",
            GapCause::SyncCall => "host blocked in a synchronising call",
            GapCause::Unknown => "unknown",
        }
    }
}

/// One piece of evidence behind a cause: what was seen, summed over the gaps it explains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GapEvidence {
    /// The cause it supports.
    pub cause: GapCause,
    /// What was seen (a call name, or a sentence when no call is involved).
    pub what: String,
    /// Idle time it explains.
    pub time: Nanos,
    /// Gaps it explains (a gap split between causes counts for each).
    pub gaps: usize,
}

/// The idle time of a stream split by [`GapCause`], each gap judged on its own evidence
/// (all `measured`; the rules are [`gap_causes`]'s).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct GapCauses {
    /// Idle time before the host issued the next activity.
    pub host_not_launched: Nanos,
    /// Idle time with the next activity issued, waiting on another stream or event.
    pub stream_or_event: Nanos,
    /// Idle time while the launching thread was blocked in a synchronising call.
    pub sync_call: Nanos,
    /// Idle time without evidence.
    pub unknown: Nanos,
    /// The evidence, most idle time first (ties by cause, then text).
    pub evidence: Vec<GapEvidence>,
    /// [`GapCauses::host_not_launched`] split by what the launching thread was doing
    /// ([`HostCause`]); its times add up to `host_not_launched`.
    pub host: HostSplit,
}

/// The host-wait time of a stream split by [`HostCause`] (all `measured`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostSplit {
    /// Time per sub-cause (only those with time).
    pub time: BTreeMap<HostCause, Nanos>,
    /// The events that named the time, most time first (ties by cause, then name), at
    /// most [`HostSplit::TOP`] per sub-cause.
    pub top: Vec<HostTop>,
}

/// One named piece of a host sub-cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostTop {
    /// The sub-cause.
    pub cause: HostCause,
    /// The host event that named it (the call, the op, the enclosing range).
    pub name: String,
    /// Host-wait time it explains.
    pub time: Nanos,
}

impl HostSplit {
    /// Named events kept per sub-cause.
    pub const TOP: usize = 5;

    /// Time of one sub-cause.
    pub fn time_of(&self, cause: HostCause) -> Nanos {
        self.time.get(&cause).copied().unwrap_or_default()
    }

    /// Σ over sub-causes.
    pub fn total(&self) -> Nanos {
        self.time.values().copied().sum()
    }

    /// The sub-cause with the most time (ties by key), if any has time.
    pub fn largest(&self) -> Option<(HostCause, Nanos)> {
        self.time
            .iter()
            .filter(|(_, t)| t.0 > 0)
            .max_by(|a, b| a.1.cmp(b.1).then(b.0.cmp(a.0)))
            .map(|(c, t)| (*c, *t))
    }

    /// The named events of one sub-cause, most time first.
    pub fn top_of(&self, cause: HostCause) -> impl Iterator<Item = &HostTop> {
        self.top.iter().filter(move |t| t.cause == cause)
    }
}

impl GapCauses {
    /// Idle time of one cause.
    pub fn time(&self, cause: GapCause) -> Nanos {
        match cause {
            GapCause::HostNotLaunched => self.host_not_launched,
            GapCause::StreamOrEvent => self.stream_or_event,
            GapCause::SyncCall => self.sync_call,
            GapCause::Unknown => self.unknown,
        }
    }

    /// Sum over the causes: the stream's idle time in the window.
    pub fn total(&self) -> Nanos {
        self.host_not_launched + self.stream_or_event + self.sync_call + self.unknown
    }

    /// Share of the idle time of one cause, in [0, 1]; 0 without idle time.
    pub fn share(&self, cause: GapCause) -> f64 {
        ratio(self.time(cause).0, self.total().0)
    }

    /// The evidence of one cause, most idle time first.
    pub fn evidence_of(&self, cause: GapCause) -> impl Iterator<Item = &GapEvidence> {
        self.evidence.iter().filter(move |e| e.cause == cause)
    }

    fn add<'s>(&mut self, cause: GapCause, what: &'s str, time: Nanos, seen: &mut Seen<'s>) {
        if time.0 <= 0 {
            return;
        }
        match cause {
            GapCause::HostNotLaunched => self.host_not_launched += time,
            GapCause::StreamOrEvent => self.stream_or_event += time,
            GapCause::SyncCall => self.sync_call += time,
            GapCause::Unknown => self.unknown += time,
        }
        let e = seen.entry((cause, what)).or_insert((Nanos(0), 0));
        e.0 += time;
        e.1 += 1;
    }
}

/// Whether a host call blocks the host until GPU work finishes: device, stream and event
/// synchronisation, and the synchronous copies (`cudaMemcpy`, `hipMemcpy`,
/// `hipMemcpyWithStream`: a runtime copy call without `Async` in its name).
pub fn is_synchronising_call(name: &str) -> bool {
    name.contains("ynchronize")
        || ((name.starts_with("cuda") || name.starts_with("hip") || name.starts_with("cuMemcpy"))
            && name.contains("Memcpy")
            && !name.contains("Async"))
}

/// Whether a host call makes a stream wait for an event recorded on another stream
/// (`cudaStreamWaitEvent`, `hipStreamWaitEvent`, `cuStreamWaitEvent`).
pub fn is_stream_wait_call(name: &str) -> bool {
    name.contains("StreamWaitEvent")
}

/// The launch latency: how long after its launch call returns an activity may take to
/// start on an idle stream and still count as launch overhead (driver submission and
/// scheduling take a few to a few tens of microseconds).
pub const LAUNCH_LATENCY: Nanos = Nanos(30_000);

/// Splits the idle gaps of `stream` (from [`idle_gaps`]) by [`GapCause`], each gap on its
/// own evidence. For the activity that ends a gap, with launch call ending at `L`:
/// - the part of the gap before `L` is host time: [`GapCause::SyncCall`] where the
///   launching thread was inside a synchronising call ([`is_synchronising_call`]),
///   [`GapCause::HostNotLaunched`] elsewhere (the launch call itself included), split by
///   what the thread was doing ([`HostCause`], the rules of `host_cause`) into
///   [`GapCauses::host`];
/// - the part from `L` (or from the gap's start, when `L` is earlier) to the gap's end is
///   queued time: [`GapCause::StreamOrEvent`] when the launching thread issued a
///   stream-wait-event call after the launch of the stream's previous activity and up to
///   the launch, or when the activity was launched by a graph (its nodes wait on their
///   dependencies); otherwise its first [`LAUNCH_LATENCY`] is launch overhead
///   ([`GapCause::HostNotLaunched`]) and the rest [`GapCause::Unknown`];
/// - a gap without a following activity or whose activity has no launch:
///   [`GapCause::Unknown`], except that the idle time after the last activity of a step
///   whose host range is still open (`host_tail`) is [`GapCause::HostNotLaunched`]: the
///   host was still inside the step and issued nothing more; likewise, for an activity
///   without a launch, the idle time inside `host_heads` (a host-ranged step before its
///   first GPU activity) is host-only time.
pub fn gap_causes(
    capture: &Capture,
    stream: StreamId,
    gaps: &[Gap],
    host_tail: &[Window],
    host_heads: &[Window],
) -> GapCauses {
    let early = EarlyLabels::none(capture);
    gap_causes_with(capture, stream, gaps, (host_tail, host_heads), &early)
}

/// [`gap_causes`], taking one thread's labels from `early` (worked out beside the rest of
/// the analysis) instead of working them out here.
pub(crate) fn gap_causes_with<'a, 'c: 'a>(
    capture: &'c Capture,
    stream: StreamId,
    gaps: &[Gap],
    (host_tail, host_heads): (&[Window], &[Window]),
    early: &'a EarlyLabels<'c>,
) -> GapCauses {
    let acts = capture.stream_activities(stream);
    let mut causes = GapCauses::default();
    let mut seen: Seen = BTreeMap::new();
    let mut host = HostAttribution::new(capture, main_launching_thread(capture, stream), early);
    // Each distinct name is checked once: is it a stream wait, a graph launch.
    let mut names = NameFlags::new(capture);
    for g in gaps {
        let at = acts.partition_point(|a| a.start < g.end);
        let next = acts.get(at).filter(|a| a.start == g.end);
        let Some(next) = next else {
            // The thread that launched the stream's last activity before the gap.
            let thread = acts[..at]
                .iter()
                .rev()
                .find_map(|a| a.launch())
                .map(|l| capture.host_event(l).thread);
            let mut tail = Nanos(0);
            for w in host_tail {
                let (s, e) = (g.start.max(w.start), g.end.min(w.end));
                if e > s {
                    tail += host.attribute(
                        &mut causes,
                        &mut seen,
                        thread,
                        Gap { start: s, end: e },
                        "the host was still inside the step and issued nothing more",
                    );
                }
            }
            causes.add(
                GapCause::Unknown,
                "no activity after the gap in the window",
                g.len() - tail,
                &mut seen,
            );
            continue;
        };
        let Some(launch_id) = next.launch() else {
            // Before the first GPU activity of a host-ranged step the GPU has no work of
            // the step yet: host-only time, launch or not.
            let mut head = Nanos(0);
            for w in host_heads {
                let (s, e) = (g.start.max(w.start), g.end.min(w.end));
                if e > s {
                    head += host.attribute(
                        &mut causes,
                        &mut seen,
                        None,
                        Gap { start: s, end: e },
                        "host-only time before the step's first GPU activity",
                    );
                }
            }
            causes.add(
                GapCause::Unknown,
                "the next activity has no launch in the trace",
                g.len() - head,
                &mut seen,
            );
            continue;
        };
        let launch = capture.host_event(launch_id);
        // Until the launch call returns, the host is still issuing the work.
        let split = launch.end().clamp(g.start, g.end);
        // Host part: what the launching thread did in [gap start, launch end).
        let host_part = Gap {
            start: g.start,
            end: split,
        };
        if !host_part.is_empty() {
            host.attribute(
                &mut causes,
                &mut seen,
                Some(launch.thread),
                host_part,
                "the next launch call began after the gap began",
            );
        }
        // Queued part: issued, yet not running.
        let queued = Gap {
            start: split,
            end: g.end,
        };
        if queued.is_empty() {
            continue;
        }
        if capture.activity_graph_id(next).is_some() || names.graph_launch(launch.name) {
            causes.add(
                GapCause::StreamOrEvent,
                "graph nodes waiting on their dependencies",
                queued.len(),
                &mut seen,
            );
            continue;
        }
        // The launch of the stream's previous activity bounds the search: a wait issued
        // before it was already satisfied when that activity ran.
        let since = acts[..at]
            .iter()
            .rev()
            .find_map(|a| a.launch())
            .map(|l| capture.host_event(l).start)
            .filter(|&t| t <= launch.start)
            .unwrap_or(Nanos(i64::MIN));
        let events = names.thread_events(launch.thread);
        let lo = events.partition_point(|e| e.start < since);
        let wait = events[lo..]
            .iter()
            .take_while(|e| e.start <= launch.start)
            .filter(|e| names.stream_wait(e.name))
            .last();
        match wait {
            Some(w) => causes.add(
                GapCause::StreamOrEvent,
                capture.name(w.name),
                queued.len(),
                &mut seen,
            ),
            None => {
                // Without a wait, the first microseconds after the call are the launch's
                // own latency (submission to start on an idle stream): launch overhead.
                let latency = queued.len().min(LAUNCH_LATENCY);
                causes.add(
                    GapCause::HostNotLaunched,
                    "launch latency (up to 30 µs from the launch call's end to the start)",
                    latency,
                    &mut seen,
                );
                host.add(HostCause::LaunchOverhead, LAUNCH_LATENCY_NAME, latency);
                causes.add(
                    GapCause::Unknown,
                    "work issued before the gap or over 30 µs before its start, no wait recorded",
                    queued.len() - latency,
                    &mut seen,
                );
            }
        }
    }
    causes.host = host.finish();
    causes.evidence = evidence(seen);
    causes
}

/// What was seen, longest first (ties: by cause, then by what).
fn evidence(seen: Seen<'_>) -> Vec<GapEvidence> {
    let mut evidence: Vec<GapEvidence> = seen
        .into_iter()
        .map(|((cause, what), (time, gaps))| GapEvidence {
            cause,
            what: what.to_owned(),
            time,
            gaps,
        })
        .collect();
    evidence.sort_by(|a, b| {
        b.time
            .cmp(&a.time)
            .then(a.cause.cmp(&b.cause))
            .then(a.what.cmp(&b.what))
    });
    evidence
}

/// [`gap_causes`]' evidence so far: time and gap count by cause and what was seen.
type Seen<'s> = BTreeMap<(GapCause, &'s str), (Nanos, usize)>;

/// What [`gap_causes`] asks of a name, worked out once per distinct name (a substring
/// search per event of the scanned ranges was a fifth of its time), and the last
/// launching thread's events (most gaps' launches come from one thread).
struct NameFlags<'a> {
    capture: &'a Capture,
    /// Per string index: 0 not yet known, else 1 + (stream wait) + 2 × (graph launch).
    known: Vec<u8>,
    thread: Option<(ThreadId, &'a [trace_model::HostEvent])>,
}

impl<'a> NameFlags<'a> {
    fn new(capture: &'a Capture) -> Self {
        NameFlags {
            capture,
            known: Vec::new(),
            thread: None,
        }
    }

    fn flags(&mut self, name: trace_model::StringId) -> u8 {
        let i = name.index();
        if i >= self.known.len() {
            self.known.resize(i + 1, 0);
        }
        if self.known[i] == 0 {
            let text = self.capture.name(name);
            self.known[i] = 1
                + u8::from(is_stream_wait_call(text))
                + 2 * u8::from(text.contains("GraphLaunch"));
        }
        self.known[i] - 1
    }

    fn stream_wait(&mut self, name: trace_model::StringId) -> bool {
        self.flags(name) & 1 != 0
    }

    fn graph_launch(&mut self, name: trace_model::StringId) -> bool {
        self.flags(name) & 2 != 0
    }

    fn thread_events(&mut self, thread: ThreadId) -> &'a [trace_model::HostEvent] {
        match self.thread {
            Some((t, events)) if t == thread => events,
            _ => {
                let events = self.capture.thread_events(thread);
                self.thread = Some((thread, events));
                events
            }
        }
    }
}

/// The name the launch latency's host time goes under in [`HostSplit::top`].
const LAUNCH_LATENCY_NAME: &str = "launch latency (launch call's end to the start)";

/// The launching thread that issued most of a stream's activities (ties: lowest id).
fn main_launching_thread(capture: &Capture, stream: StreamId) -> Option<ThreadId> {
    let mut per: BTreeMap<ThreadId, usize> = BTreeMap::new();
    for a in capture.stream_activities(stream) {
        if let Some(l) = a.launch() {
            *per.entry(capture.host_event(l).thread).or_insert(0) += 1;
        }
    }
    per.into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(t, _)| t)
}

/// Splits host time of the launching threads by label, keeping each thread's labels.
struct HostAttribution<'a, 'c> {
    capture: &'a Capture,
    fallback: Option<ThreadId>,
    labels: BTreeMap<ThreadId, Cow<'a, [Labelled]>>,
    /// Taken from `early` when a thread other than its own is first labelled.
    threads: Option<ThreadLabels<'c>>,
    early: &'a EarlyLabels<'c>,
    named: BTreeMap<(HostCause, String), Nanos>,
    /// Time by cause and event name (`None`: nothing recorded on the thread), added to
    /// `named` by [`HostAttribution::finish`]: a string per piece was most of the split's
    /// time.
    by_id: trace_model::FastMap<(HostCause, Option<trace_model::StringId>), Nanos>,
    /// [`HostAttribution::attribute`]'s scratch list of synchronising calls' time.
    sync: Vec<(trace_model::StringId, i64)>,
}

impl<'a, 'c: 'a> HostAttribution<'a, 'c> {
    fn new(capture: &'c Capture, fallback: Option<ThreadId>, early: &'a EarlyLabels<'c>) -> Self {
        HostAttribution {
            capture,
            fallback,
            labels: BTreeMap::new(),
            threads: None,
            early,
            named: BTreeMap::new(),
            by_id: trace_model::FastMap::default(),
            sync: Vec::new(),
        }
    }

    fn add(&mut self, cause: HostCause, name: &str, time: Nanos) {
        if time.0 > 0 {
            *self.named.entry((cause, name.to_owned())).or_default() += time;
        }
    }

    /// Attributes `range`, host time of `thread` (else the stream's main launching
    /// thread): synchronising calls to [`GapCause::SyncCall`], the rest to
    /// [`GapCause::HostNotLaunched`] under `what`, split by [`HostCause`]. Returns the
    /// range's length.
    fn attribute(
        &mut self,
        causes: &mut GapCauses,
        seen: &mut Seen<'a>,
        thread: Option<ThreadId>,
        range: Gap,
        what: &'a str,
    ) -> Nanos {
        let capture = self.capture;
        // Synchronising calls' time by name (few per range: a list, not a map), and the
        // rest straight into `by_id`.
        let sync = &mut self.sync;
        sync.clear();
        let by_id = &mut self.by_id;
        let mut piece = |c: HostCause, n: Option<trace_model::StringId>, len: i64| {
            if len > 0 {
                *by_id.entry((c, n)).or_default() += Nanos(len);
            }
        };
        match thread.or(self.fallback) {
            Some(t) => {
                let (threads, early) = (&mut self.threads, self.early);
                let labelled = self.labels.entry(t).or_insert_with(|| match early.of(t) {
                    Some(labels) => Cow::Borrowed(labels),
                    None => Cow::Owned(threads.get_or_insert_with(|| early.take_rest()).labels(t)),
                });
                split(
                    labelled,
                    range.start.0,
                    range.end.0,
                    |label, name, len| match (label, name) {
                        (Label::Sync, Some(n)) => match sync.iter_mut().find(|(m, _)| *m == n) {
                            Some((_, t)) => *t += len,
                            None => sync.push((n, len)),
                        },
                        (Label::Sync, None) => piece(HostCause::NothingRecorded, None, len),
                        (Label::Host(c), n) => piece(c, n, len),
                    },
                );
            }
            None => piece(HostCause::NothingRecorded, None, range.len().0),
        }
        let sync_total: i64 = sync.iter().map(|(_, t)| t).sum();
        // The synchronising call that took most of it names the evidence (ties: the
        // lowest name id).
        if let Some(&(name, _)) = sync.iter().max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0))) {
            causes.add(
                GapCause::SyncCall,
                capture.name(name),
                Nanos(sync_total),
                seen,
            );
        }
        causes.add(
            GapCause::HostNotLaunched,
            what,
            range.len() - Nanos(sync_total),
            seen,
        );
        range.len()
    }

    fn finish(mut self) -> HostSplit {
        for ((c, n), time) in std::mem::take(&mut self.by_id) {
            let name = n.map_or("nothing recorded on the thread", |n| self.capture.name(n));
            self.add(c, name, time);
        }
        let mut out = HostSplit::default();
        for ((c, _), t) in &self.named {
            *out.time.entry(*c).or_default() += *t;
        }
        let mut top: Vec<HostTop> = self
            .named
            .into_iter()
            .map(|((cause, name), time)| HostTop { cause, name, time })
            .collect();
        top.sort_by(|a, b| {
            a.cause
                .cmp(&b.cause)
                .then(b.time.cmp(&a.time))
                .then(a.name.cmp(&b.name))
        });
        let mut kept: Vec<HostTop> = Vec::new();
        for t in top {
            if kept.iter().filter(|k| k.cause == t.cause).count() < HostSplit::TOP {
                kept.push(t);
            }
        }
        kept.sort_by(|a, b| {
            b.time
                .cmp(&a.time)
                .then(a.cause.cmp(&b.cause))
                .then(a.name.cmp(&b.name))
        });
        out.top = kept;
        out
    }
}

/// The threads that issued at least one GPU activity, in id order.
pub fn launching_threads(capture: &Capture) -> Vec<ThreadId> {
    let mut threads: Vec<ThreadId> = capture
        .activities()
        .iter()
        .filter_map(|a| a.launch().map(|l| capture.host_event(l).thread))
        .collect();
    threads.sort_unstable();
    threads.dedup();
    threads
}

/// Whether a host event is host *work* for the coverage share: framework ops and
/// runtime calls, but not synchronisation calls (the host waiting for the GPU), not
/// user annotations or Python frames (they enclose whole steps), and, in Kineto traces,
/// not the uncategorised events (the profiler's own `Trace` span). In JAX traces the
/// XLA runtime's host events are mostly uncategorised, so there they count.
pub(crate) fn is_host_work(capture: &Capture, e: &HostEvent) -> bool {
    is_host_work_kind(capture, e.kind) && !is_synchronising_call(capture.name(e.name))
}

/// [`is_host_work`]'s test of the kind.
fn is_host_work_kind(capture: &Capture, kind: HostKind) -> bool {
    match kind {
        HostKind::CpuOp | HostKind::Launch | HostKind::Runtime => true,
        HostKind::Other => capture.format() != Format::KinetoJson,
        HostKind::Annotation | HostKind::PythonFrame => false,
        _ => false,
    }
}

/// Host time overlapping idle gaps, for one host event name.
#[derive(Debug, Clone, PartialEq)]
pub struct HostTime {
    /// The host event name.
    pub name: String,
    /// Its kind (CPU op, runtime call, annotation, …).
    pub kind: HostKind,
    /// Σ over events with this name of their overlap with the gaps.
    pub overlapped: Nanos,
    /// Events with this name that overlap a gap.
    pub events: usize,
}

/// The host side of a stream's idle gaps (all numbers `measured`).
#[derive(Debug, Clone, PartialEq)]
pub struct GapHost {
    /// Number of idle gaps.
    pub gap_count: usize,
    /// Total idle time of the gaps.
    pub idle: Nanos,
    /// Idle time during which at least one host-work event (a framework op or runtime
    /// call, not a synchronisation) ran on a thread that launches GPU work.
    pub covered: Nanos,
    /// Host event names ranked by overlapped time (ties by name), at most `top` of them.
    pub top: Vec<HostTime>,
    /// Always [`Provenance::Measured`].
    pub provenance: Provenance,
}

impl GapHost {
    /// `covered / idle`, 0 without idle time.
    pub fn covered_share(&self) -> f64 {
        ratio(self.covered.0, self.idle.0)
    }
}

/// Ranks host events on `threads` by their overlap with `gaps` (sorted, disjoint).
/// `ProfilerStep#N` annotations are left out: they span every gap of their step.
pub(crate) fn host_in_gaps(
    capture: &Capture,
    gaps: &[Gap],
    threads: &[ThreadId],
    top: usize,
) -> GapHost {
    let mut per_name: BTreeMap<(trace_model::StringId, HostKind), (i64, usize)> = BTreeMap::new();
    let mut work_iv: Vec<(i64, i64)> = Vec::new();
    let overlaps = Overlaps::new(gaps);
    // `is_host_work`'s name test, once per distinct name.
    let mut sync_name: Vec<Option<bool>> = vec![None; capture.strings().len()];
    let mut host_work = |e: &HostEvent| match sync_name.get_mut(e.name.index()) {
        Some(slot) => {
            let sync = *slot.get_or_insert_with(|| is_synchronising_call(capture.name(e.name)));
            is_host_work_kind(capture, e.kind) && !sync
        }
        None => is_host_work(capture, e),
    };
    for &t in threads {
        let mut sweep = overlaps.sweep();
        for e in capture.thread_events(t) {
            let overlap = sweep.of(e.start, e.end());
            if overlap <= 0 {
                continue;
            }
            if host_work(e) {
                work_iv.push((e.start.0, e.end().0));
            }
            if !capture.name(e.name).starts_with("ProfilerStep#") {
                let entry = per_name.entry((e.name, e.kind)).or_insert((0, 0));
                entry.0 += overlap;
                entry.1 += 1;
            }
        }
    }
    // Covered: the gaps' time under the union of the host-work events.
    let mut covered = 0;
    let mut g = 0;
    for (s, en) in interval::merged(work_iv) {
        while g < gaps.len() && gaps[g].end.0 <= s {
            g += 1;
        }
        let mut k = g;
        while k < gaps.len() && gaps[k].start.0 < en {
            covered += (gaps[k].end.0.min(en) - gaps[k].start.0.max(s)).max(0);
            k += 1;
        }
    }
    let ranked = rank_host_times(capture, per_name, top);
    GapHost {
        gap_count: gaps.len(),
        idle: gaps.iter().map(|g| g.len()).sum(),
        covered: Nanos(covered),
        top: ranked,
        provenance: Provenance::Measured,
    }
}

/// How much of an interval sorted, disjoint gaps cover, from prefix sums of their lengths:
/// O(log n) per interval, not a walk over the gaps it spans. Nested annotations (each
/// spanning every gap of the ones inside it) made the walk quadratic: 200,000 nested
/// steps took 9.5 s.
struct Overlaps<'a> {
    gaps: &'a [Gap],
    /// `prefix[i]`: the length of `gaps[..i]`.
    prefix: Vec<i64>,
}

impl<'a> Overlaps<'a> {
    fn new(gaps: &'a [Gap]) -> Overlaps<'a> {
        let mut prefix = Vec::with_capacity(gaps.len() + 1);
        prefix.push(0i64);
        for g in gaps {
            prefix.push(prefix[prefix.len() - 1] + g.len().0);
        }
        Overlaps { gaps, prefix }
    }

    /// The gaps' time inside `[s, e)`, by two searches: what [`Sweep`] must give (the
    /// tests' reference).
    #[cfg(test)]
    fn of(&self, s: Nanos, e: Nanos) -> i64 {
        // The gaps that end after `s` and start before `e`.
        let first = self.gaps.partition_point(|g| g.end <= s);
        let last = self.gaps.partition_point(|g| g.start < e);
        self.between(first, last, s, e)
    }

    /// `Overlaps::of` for intervals that come by start (a thread's events), found
    /// without two searches over every gap each.
    fn sweep(&self) -> Sweep<'_, 'a> {
        Sweep {
            overlaps: self,
            first: 0,
            after: Nanos(i64::MIN),
        }
    }

    /// The time of gaps `first..last` inside `[s, e)`, where `first` is the first gap
    /// ending after `s` and `last` the first starting at or after `e`.
    fn between(&self, first: usize, last: usize, s: Nanos, e: Nanos) -> i64 {
        if first >= last {
            return 0;
        }
        let inside = self.prefix[last]
            - self.prefix[first]
            - (s - self.gaps[first].start).0.max(0)
            - (self.gaps[last - 1].end - e).0.max(0);
        inside.max(0)
    }
}

/// `Overlaps::of` over intervals in start order: the first gap ending after the start
/// moves forward from the last interval's, and the gaps starting before the end are
/// found by galloping from it (most events end within a gap or two of their start). A
/// start before the last one searches afresh, so any order gives `of`'s figures.
struct Sweep<'o, 'a> {
    overlaps: &'o Overlaps<'a>,
    first: usize,
    /// The last start asked for.
    after: Nanos,
}

impl Sweep<'_, '_> {
    fn of(&mut self, s: Nanos, e: Nanos) -> i64 {
        let gaps = self.overlaps.gaps;
        if s < self.after {
            self.first = gaps.partition_point(|g| g.end <= s);
        } else {
            while self.first < gaps.len() && gaps[self.first].end <= s {
                self.first += 1;
            }
        }
        self.after = s;
        let first = self.first;
        // Every gap of `rest[..lo]` starts before `e`; `rest[hi]`, if any, does not.
        let rest = &gaps[first..];
        let mut hi = 1;
        while hi < rest.len() && rest[hi].start < e {
            hi *= 2;
        }
        let hi = hi.min(rest.len());
        let lo = hi / 2;
        let last = first + lo + rest[lo..hi].partition_point(|g| g.start < e);
        self.overlaps.between(first, last, s, e)
    }
}

/// Host events on `threads` ranked by their *self* time inside `ranges` (sorted,
/// disjoint): the overlap not covered by a child event on the same thread, so an
/// enclosing Python frame or op does not outrank the work it calls. Step annotations
/// (`ProfilerStep#N`) are left out, their children counted.
pub(crate) fn host_self_time_in(
    capture: &Capture,
    ranges: &[Gap],
    threads: &[ThreadId],
    top: usize,
) -> Vec<HostTime> {
    let overlaps = Overlaps::new(ranges);
    let mut per_name: BTreeMap<(trace_model::StringId, HostKind), (i64, usize)> = BTreeMap::new();
    for &t in threads {
        let mut sweep = overlaps.sweep();
        let mut overlap = |s: Nanos, e: Nanos| sweep.of(s, e);
        let events = capture.thread_events(t);
        let mut selfs: Vec<i64> = vec![0; events.len()];
        // Indices of the enclosing events, innermost last.
        let mut stack: Vec<usize> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            while stack.last().is_some_and(|&p| events[p].end() <= e.start) {
                stack.pop();
            }
            let o = overlap(e.start, e.end());
            selfs[i] = o;
            if let Some(&p) = stack.last() {
                selfs[p] -= o;
            }
            stack.push(i);
        }
        for (e, own) in events.iter().zip(selfs) {
            if own > 0 && !capture.name(e.name).starts_with("ProfilerStep#") {
                let entry = per_name.entry((e.name, e.kind)).or_insert((0, 0));
                entry.0 += own;
                entry.1 += 1;
            }
        }
    }
    rank_host_times(capture, per_name, top)
}

/// The `top` host names by time (then name and kind, so the order is stable), from time and
/// event count per (name, kind).
fn rank_host_times(
    capture: &Capture,
    per_name: BTreeMap<(trace_model::StringId, HostKind), (i64, usize)>,
    top: usize,
) -> Vec<HostTime> {
    let mut ranked: Vec<HostTime> = per_name
        .into_iter()
        .map(|((name, kind), (overlapped, events))| HostTime {
            name: capture.name(name).to_string(),
            kind,
            overlapped: Nanos(overlapped),
            events,
        })
        .collect();
    ranked.sort_by(|a, b| {
        b.overlapped
            .cmp(&a.overlapped)
            .then_with(|| a.name.cmp(&b.name))
            .then_with(|| a.kind.cmp(&b.kind))
    });
    ranked.truncate(top);
    ranked
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The causes' words, as reports print them (investigate's idle-time table and
    /// skip-stats' text).
    #[test]
    fn each_cause_has_its_words() {
        let words = [
            GapCause::HostNotLaunched,
            GapCause::StreamOrEvent,
            GapCause::SyncCall,
            GapCause::Unknown,
        ]
        .map(GapCause::label);
        assert_eq!(
            words,
            [
                "host did not launch yet",
                "waiting on another stream or event",
                "host blocked in a synchronising call",
                "unknown",
            ]
        );
    }

    /// Labels worked out ahead ([`EarlyLabels`], for the busiest launching thread) are the
    /// ones [`ThreadLabels`] gives, and the gaps' causes found with them are those found
    /// without, on every stream of the small fixtures.
    #[test]
    fn early_labels_change_nothing() {
        let root =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/chrome/ok");
        let (mut streams_checked, mut labelled_ahead) = (0, 0);
        for name in [
            "skip_stats_small.json",
            "tiny-train/rank0.pt.trace.json",
            "tiny-train/rank1.pt.trace.json",
        ] {
            let capture = chrome_reader::load(&root.join(name)).expect("a fixture reads");
            let early = EarlyLabels::new(&capture);
            let busiest = launching_threads(&capture)
                .into_iter()
                .filter(|&t| early.of(t).is_some())
                .collect::<Vec<_>>();
            assert!(busiest.len() <= 1, "{name}: one thread's labels at most");
            early.work();
            if let [t] = busiest[..] {
                assert_eq!(
                    early.of(t).map(<[Labelled]>::to_vec),
                    Some(ThreadLabels::new(&capture).labels(t)),
                    "{name}"
                );
                labelled_ahead += 1;
            }
            for stream in capture.streams() {
                let acts = capture.stream_activities(stream.id);
                let (Some(first), Some(last)) = (acts.first(), acts.iter().map(|a| a.end()).max())
                else {
                    continue;
                };
                let window = Window {
                    start: first.start,
                    end: last,
                };
                let gaps = idle_gaps(&capture, stream.id, window);
                let edges: (&[Window], &[Window]) = (&[window], &[window]);
                let with = gap_causes_with(&capture, stream.id, &gaps, edges, &early);
                let without = gap_causes(&capture, stream.id, &gaps, &[window], &[window]);
                assert_eq!(with, without, "{name}: stream {:?}", stream.id);
                streams_checked += 1;
            }
        }
        assert!(
            labelled_ahead >= 1 && streams_checked >= 2,
            "{labelled_ahead} {streams_checked}"
        );
    }

    /// The sweep gives `Overlaps::of`'s figures for intervals by start (nested, long,
    /// empty and inverted ones among them) and out of order, over many gaps and none.
    #[test]
    fn sweep_agrees_with_of() {
        let mut x: u64 = 7;
        let mut next = |m: i64| {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((x >> 33) % m as u64) as i64
        };
        let mut gaps = Vec::new();
        let mut t = 0;
        for _ in 0..200 {
            t += 1 + next(20);
            let len = 1 + next(15);
            gaps.push(Gap {
                start: Nanos(t),
                end: Nanos(t + len),
            });
            t += len;
        }
        let mut intervals: Vec<(i64, i64)> = (0..3_000)
            .map(|_| {
                let s = next(t + 50) - 20;
                let e = s + next(300) - 10;
                (s, e)
            })
            .collect();
        for sorted in [true, false] {
            if sorted {
                intervals.sort_by_key(|&(s, e)| (s, std::cmp::Reverse(e)));
            }
            for gaps in [&gaps[..], &gaps[..1], &[]] {
                let overlaps = Overlaps::new(gaps);
                let mut sweep = overlaps.sweep();
                for &(s, e) in &intervals {
                    let (s, e) = (Nanos(s), Nanos(e));
                    assert_eq!(sweep.of(s, e), overlaps.of(s, e), "{s:?}..{e:?}");
                }
            }
            intervals.reverse();
        }
    }

    /// The prefix-sum overlap equals the walk over every gap, for intervals around every
    /// edge of a set of gaps.
    #[test]
    fn overlaps_agree_with_the_walk() {
        let gaps: Vec<Gap> = [(2, 5), (5, 6), (9, 14), (20, 21), (30, 40)]
            .iter()
            .map(|&(s, e)| Gap {
                start: Nanos(s),
                end: Nanos(e),
            })
            .collect();
        let overlaps = Overlaps::new(&gaps);
        for s in 0..45 {
            for e in s..45 {
                let walk: i64 = gaps
                    .iter()
                    .map(|g| (g.end.0.min(e) - g.start.0.max(s)).max(0))
                    .sum();
                assert_eq!(overlaps.of(Nanos(s), Nanos(e)), walk, "[{s}, {e})");
            }
        }
    }
}
