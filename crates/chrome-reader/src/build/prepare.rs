//! The per-event half of the model build, which runs on the parsing threads: each run of
//! `traceEvents` (see `chunks.rs`) is parsed and turned into [`Op`]s (times in nanoseconds, categories
//! classified, `args` read, strings in a table of the batch's own), so that the builder
//! thread only merges: it maps each batch's strings to the capture's once per distinct
//! string, in the order the sequential build would have interned them, and applies the ops
//! in file order.

use trace_model::{FastMap, Nanos};

use super::{Cat, Event, KnownArgs, Time};
use crate::{Error, Id};

/// A string of one batch: an index into [`Prepared::strings`].
pub(super) type Local = u32;

/// A pid or tid as read: an integer, or a string (the builder gives it a key).
#[derive(Clone, Copy)]
pub(super) enum Key {
    Int(i64),
    Str(Local),
}

/// `Extra` with the batch's string indices.
pub(super) struct LocalExtra {
    pub stream: Option<i64>,
    pub device: Option<i64>,
    pub bytes: Option<i64>,
    pub graph_id: Option<i64>,
    pub program_id: Option<i64>,
    pub hlo_op: Option<Local>,
    pub hlo_module: Option<Local>,
    pub memcpy_details: Option<Local>,
    /// A CPU op's `Input Dims`, `Input type` and `Concrete Inputs` texts.
    pub shapes: Option<(Local, Option<Local>, Option<Local>)>,
    /// A `cuda_sync` event's `wait_on_stream`.
    pub wait_on_stream: Option<i64>,
    /// A `cuda_sync` event's `wait_on_cuda_event_record_corr_id`.
    pub wait_on_record: Option<i64>,
    /// A copy's `memory bandwidth (GB/s)`.
    pub bandwidth: Option<f64>,
}

/// The Kineto categories a complete event is kept for beside the rows
/// ([`trace_model::KinetoDetails`]), by their exact spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum KinetoCat {
    /// Any other.
    None,
    /// `cuda_driver`: a CUDA driver call.
    Driver,
    /// `cuda_sync`: a CUDA synchronisation event.
    Sync,
}

/// A complete event that passed the time checks.
pub(super) struct Complete {
    pub pid: Key,
    pub tid: Key,
    pub start: i64,
    pub dur: i64,
    pub name: Local,
    pub cat: Cat,
    /// The category's spelling when [`Cat::of`] does not know it (counted by the builder).
    pub unknown_cat: Option<Local>,
    pub index: u64,
    pub correlation: Option<i64>,
    pub external_id: Option<i64>,
    pub step_num: Option<i64>,
    /// Index into [`Prepared::extras`].
    pub extra: Option<u32>,
    /// Whether it is a driver call or a sync event.
    pub kineto: KinetoCat,
}

/// The diagnostics events can give, with the place they name.
#[derive(Clone, Copy)]
pub(super) enum Diag {
    NumberAsString,
    MissingTimestamp,
    NegativeDuration,
    MissingDuration,
    OutOfRange,
    BeginEnd,
}

pub(super) enum MetaName {
    None,
    Process(String),
    Thread(Key, String),
}

/// What one event does to the capture, in file order.
pub(super) enum Op {
    Complete(Complete),
    Meta {
        pid: Key,
        name: MetaName,
    },
    /// The first flow event (`s`, `f`, `t`) of the run with this category, which the
    /// builder interns there, so that string ids are those of an event-by-event build; the
    /// arrows themselves are counted in [`Prepared::flows`].
    Flow {
        cat: Local,
    },
    Diag {
        diag: Diag,
        index: usize,
        offset: u64,
        field: &'static str,
    },
}

/// The flow events of one run with one category and id: how many start (`s`) and finish
/// (`f`) an arrow, and the index of the first (`t` counts as neither).
pub(super) struct FlowEnds {
    pub cat: Local,
    pub id: i64,
    pub starts: u32,
    pub finishes: u32,
    pub first: usize,
}

/// One run of events, prepared: their ops, in file order.
#[derive(Default)]
pub(crate) struct Prepared {
    pub(super) ops: Vec<Op>,
    pub(super) extras: Vec<LocalExtra>,
    pub(super) strings: Vec<Box<str>>,
    /// The run's flow events by category and id, in order of first sight. Counted here,
    /// on the parsing thread: a flow's two ends are mostly a few events apart, so the
    /// builder meets most ids once, as an arrow with both ends, instead of looking each
    /// event up in a table of every id of the capture (a third of the 1 GB synthetic
    /// trace's events are flows; that lookup was 0.5 s of the builder thread's 0.9 s).
    pub(super) flows: Vec<FlowEnds>,
    /// How many events' `args` the run decoded (see `build::args_decoded`).
    pub(super) args_decoded: u64,
    /// Whether some event's `ts` has a fraction of a microsecond.
    pub(super) fractional_us: bool,
    /// The `ts` of the run's event 0 (`Some(None)`: it has none), when the run has it.
    pub(super) first_ts: Option<Option<i64>>,
    /// The earliest start of a complete event with a category other than `Trace`.
    pub(super) hta_origin: Option<i64>,
    /// The ranges HTA's parser sees, with the run's own event indices.
    pub(super) arg_ranges: trace_model::ArgRanges,
    /// The run's complete events with a negative (`Some`) or no `dur` (`None`), by the
    /// run's own event index ([`trace_model::KinetoDetails::odd_durations`]).
    pub(super) odd_durations: Vec<(u64, Option<i64>)>,
    /// [`trace_model::KinetoDetails::asked`] of the run's events.
    pub(super) asked: u8,
}

impl Prepared {
    /// Empties the batch, keeping its buffers' room.
    fn clear(&mut self) {
        self.ops.clear();
        self.extras.clear();
        self.strings.clear();
        self.flows.clear();
        self.args_decoded = 0;
        self.fractional_us = false;
        self.first_ts = None;
        self.hta_origin = None;
        self.arg_ranges = trace_model::ArgRanges::default();
        self.odd_durations.clear();
        self.asked = 0;
    }

    /// How many ops the run gave (one per event that changes the capture but a flow, one
    /// per diagnostic, one per flow category).
    #[cfg(test)]
    pub(crate) fn op_count(&self) -> usize {
        self.ops.len()
    }
}

/// What an event without `args` (or a Python frame) reads as.
static NO_ARGS: KnownArgs = KnownArgs::NONE;

/// Prepares events one at a time (on a parsing thread; see the module's doc).
pub(crate) struct Prep<'p> {
    path: &'p std::path::Path,
    out: Prepared,
    ids: FastMap<Box<str>, Local>,
    /// Index into `out.flows` by category and id.
    flow_ids: FastMap<(Local, i64), u32>,
    /// By local string: whether an [`Op::Flow`] of that category was given.
    flow_cats: Vec<bool>,
    /// Whether CPU ops' input shapes are kept (`LoadConfig::without_shapes`).
    shapes: bool,
}

/// Batches the builder has applied, emptied, for the next runs to fill: their buffers are
/// memory already faulted in and of the right size. Without them each run grew its buffers
/// anew on a parsing thread and the builder's thread freed them, memory that glibc does not
/// hand back to the thread that allocated it. On the 1 GB synthetic trace with 2 parsing
/// threads the build took 97k page faults before and 67k after (the 1-thread build: 66k),
/// and 1.84 s instead of 1.92 (medians of 9, alternating, 2026-12-02).
#[derive(Default)]
pub(crate) struct Spares(std::sync::Mutex<Vec<Prepared>>);

impl Spares {
    /// Empties an applied batch and keeps it. At most one per run in flight is kept, since
    /// every batch was taken from here or made new by a run.
    pub(crate) fn give(&self, mut batch: Prepared) {
        batch.clear();
        self.0
            .lock()
            .expect("no thread panics holding the spare batches")
            .push(batch);
    }

    fn take(&self) -> Option<Prepared> {
        self.0
            .lock()
            .expect("no thread panics holding the spare batches")
            .pop()
    }
}

impl<'p> Prep<'p> {
    /// Prepares a run into a spare batch, if there is one.
    pub(crate) fn new(path: &'p std::path::Path, spares: &Spares) -> Self {
        Prep {
            path,
            out: spares.take().unwrap_or_default(),
            ids: FastMap::default(),
            flow_ids: FastMap::default(),
            flow_cats: Vec::new(),
            shapes: true,
        }
    }

    /// The same, keeping CPU ops' input shapes or not.
    pub(crate) fn with_shapes(self, shapes: bool) -> Self {
        Prep { shapes, ..self }
    }
}

impl crate::chunks::RunSink for Prep<'_> {
    type Out = Prepared;

    fn event_text(&mut self, index: usize, offset: u64, text: &[u8]) -> Result<(), Error> {
        let mut ev = crate::raw::parse_model_event(self.path, index, offset, text)?;
        self.event(&mut ev)
    }

    /// Prepares the event `at` if the fast parser reads it (see `fast.rs`).
    fn fast_event(&mut self, at: crate::chunks::EventAt<'_>) -> Option<Result<usize, Error>> {
        let at = super::fast::At {
            text: at.text,
            start: at.start,
            index: at.index,
            offset: at.offset,
            shapes: self.shapes,
        };
        let (res, end) = super::fast::event_with(at, |ev| self.event(ev))?;
        Some(res.map(|()| end))
    }

    fn finish(self) -> Prepared {
        self.out
    }
}

impl Prep<'_> {
    fn intern(&mut self, s: &str) -> Local {
        if let Some(&id) = self.ids.get(s) {
            return id;
        }
        let id = self.out.strings.len() as Local;
        self.out.strings.push(s.into());
        self.ids.insert(s.into(), id);
        id
    }

    fn key(&mut self, id: Option<&Id<'_>>) -> Key {
        match id {
            None => Key::Int(0),
            Some(id) => match id.as_i64() {
                Some(v) => Key::Int(v),
                None => match id {
                    Id::Str(s) => Key::Str(self.intern(s)),
                    Id::Int(v) => Key::Int(*v),
                },
            },
        }
    }

    /// Gives the [`Op::Flow`] of `cat` if it is the run's first flow of that category.
    fn flow_cat(&mut self, cat: Local) {
        let k = cat as usize;
        if self.flow_cats.len() <= k {
            self.flow_cats.resize(k + 1, false);
        }
        if !self.flow_cats[k] {
            self.flow_cats[k] = true;
            self.out.ops.push(Op::Flow { cat });
        }
    }

    /// Counts a flow event of `cat` and `id` with phase `ph`, event `index`.
    fn flow(&mut self, cat: Local, id: i64, ph: u8, index: usize) {
        let next = self.out.flows.len() as u32;
        let k = *self.flow_ids.entry((cat, id)).or_insert(next);
        if k == next {
            self.out.flows.push(FlowEnds {
                cat,
                id,
                starts: 0,
                finishes: 0,
                first: index,
            });
        }
        let ends = &mut self.out.flows[k as usize];
        match ph {
            b's' => ends.starts += 1,
            b'f' => ends.finishes += 1,
            _ => {}
        }
    }

    fn diag(&mut self, diag: Diag, ev: &Event<'_>, field: &'static str) {
        self.out.ops.push(Op::Diag {
            diag,
            index: ev.index,
            offset: ev.offset,
            field,
        });
    }

    /// Prepares `ev`, which it may leave emptied of strings it keeps.
    pub(crate) fn event(&mut self, ev: &mut Event<'_>) -> Result<(), Error> {
        self.out.args_decoded += u64::from(ev.args.as_ref().is_some_and(|a| a.decoded));
        // Every event's category and name, as written, whatever its phase.
        self.out.asked |= ev.cat.as_deref().map_or(0, trace_model::asked_bits)
            | ev.name.as_deref().map_or(0, trace_model::asked_bits);
        let ts = ev.ts.and_then(|n| n.micros_to_nanos());
        if ts.is_some_and(|t| t % 1000 != 0) {
            self.out.fractional_us = true;
        }
        if ev.index == 0 {
            self.out.first_ts = Some(ts);
        }
        match ev.ph.as_ref() {
            "X" => self.complete(ev),
            "M" => {
                let name = ev.args.as_mut().and_then(|a| a.name.take());
                let pid = self.key(ev.pid.as_ref());
                let name = match (ev.name.as_deref(), name) {
                    (Some("process_name"), Some(n)) => MetaName::Process(n),
                    (Some("thread_name"), Some(n)) => {
                        MetaName::Thread(self.key(ev.tid.as_ref()), n)
                    }
                    _ => MetaName::None,
                };
                self.out.ops.push(Op::Meta { pid, name });
                Ok(())
            }
            ph @ ("s" | "f" | "t") => {
                let cat = self.intern(ev.cat.as_deref().unwrap_or(""));
                self.flow_cat(cat);
                if let Some(id) = ev.id.as_ref().and_then(Id::as_i64) {
                    self.flow(cat, id, ph.as_bytes()[0], ev.index);
                }
                Ok(())
            }
            "B" | "E" => {
                self.diag(Diag::BeginEnd, ev, "ph");
                Ok(())
            }
            _ => Ok(()),
        }
    }

    fn time(&mut self, ev: &Event<'_>, field: &'static str) -> Result<Time, Error> {
        let n = if field == "ts" { ev.ts } else { ev.dur };
        let Some(n) = n else { return Ok(Time::Missing) };
        if n.was_quoted() {
            self.diag(Diag::NumberAsString, ev, field);
        }
        match n.micros_to_nanos() {
            Some(ns) => Ok(Time::Value(ns)),
            None if n.is_numeric() => Ok(Time::OutOfRange),
            None => Err(ev.not_a_time(self.path, field, n.text())),
        }
    }

    fn complete(&mut self, ev: &Event<'_>) -> Result<(), Error> {
        let start = match self.time(ev, "ts")? {
            Time::Value(start) if Nanos(start).in_range() => start,
            Time::Value(_) | Time::OutOfRange => {
                self.diag(Diag::OutOfRange, ev, "ts");
                return Ok(());
            }
            Time::Missing => {
                self.diag(Diag::MissingTimestamp, ev, "ts");
                return Ok(());
            }
        };
        let dur = match self.time(ev, "dur")? {
            Time::Value(d) if d < 0 => {
                self.diag(Diag::NegativeDuration, ev, "dur");
                self.out.odd_durations.push((ev.index as u64, Some(d)));
                0
            }
            Time::Value(d) => d,
            Time::OutOfRange => {
                self.diag(Diag::OutOfRange, ev, "dur");
                return Ok(());
            }
            Time::Missing => {
                self.diag(Diag::MissingDuration, ev, "dur");
                self.out.odd_durations.push((ev.index as u64, None));
                -1
            }
        };
        // HTA's parser reads only events with a duration.
        let has_dur = dur >= 0;
        let dur = dur.max(0);
        if !Nanos(start)
            .checked_add(Nanos(dur))
            .is_some_and(Nanos::in_range)
        {
            self.diag(Diag::OutOfRange, ev, "dur");
            return Ok(());
        }
        let cat = Cat::of(ev.cat.as_deref());
        let raw_cat = ev.cat.as_deref();
        if has_dur && raw_cat.is_some_and(|c| c != "Trace") {
            let origin = self.out.hta_origin.get_or_insert(start);
            *origin = (*origin).min(start);
        }
        let kineto = match raw_cat {
            Some("cuda_driver") => KinetoCat::Driver,
            Some("cuda_sync") => KinetoCat::Sync,
            _ => KinetoCat::None,
        };
        // Python frames carry nothing the model needs beyond time and name.
        let args = match &ev.args {
            Some(args) if cat != Cat::Python => args,
            _ => &NO_ARGS,
        };
        let name = self.intern(ev.name.as_deref().unwrap_or(""));
        let pid = self.key(ev.pid.as_ref());
        let tid = self.key(ev.tid.as_ref());
        let has_gpu_fields = args.stream.is_some()
            || args.device.is_some()
            || args.bytes.is_some()
            || args.graph_id.is_some()
            || args.hlo_op.is_some()
            || args.program_id.is_some()
            || args.memcpy_details.is_some()
            || args.wait_on_stream.is_some()
            || args.wait_on_cuda_event_record_corr_id.is_some()
            || args.memory_bandwidth.is_some();
        // HTA's parser keeps every event with a category but `python_function` and `Trace`.
        if has_dur
            && raw_cat.is_some_and(|c| !c.is_empty() && c != "python_function" && c != "Trace")
        {
            (self.out.arg_ranges).add(args.stream, args.correlation, ev.index as i64);
        }
        // Shapes of CPU ops only (`record_shapes=True`), and only as an array of inputs.
        let dims = args
            .input_dims
            .as_deref()
            .filter(|d| self.shapes && cat == Cat::CpuOp && d.starts_with('['));
        let extra = if has_gpu_fields || dims.is_some() {
            let extra = LocalExtra {
                stream: args.stream,
                device: args.device,
                bytes: args.bytes,
                graph_id: args.graph_id,
                program_id: args.program_id,
                hlo_op: args.hlo_op.as_deref().map(|s| self.intern(s)),
                hlo_module: args.hlo_module.as_deref().map(|s| self.intern(s)),
                memcpy_details: args.memcpy_details.as_deref().map(|s| self.intern(s)),
                shapes: dims.map(|d| {
                    let types = args.input_types.as_deref();
                    let concrete = args.concrete_inputs.as_deref();
                    (
                        self.intern(d),
                        types.map(|s| self.intern(s)),
                        concrete.map(|s| self.intern(s)),
                    )
                }),
                wait_on_stream: args.wait_on_stream,
                wait_on_record: args.wait_on_cuda_event_record_corr_id,
                bandwidth: args.memory_bandwidth,
            };
            self.out.extras.push(extra);
            Some(self.out.extras.len() as u32 - 1)
        } else {
            None
        };
        let unknown_cat = if cat.is_unknown() {
            Some(self.intern(ev.cat.as_deref().unwrap_or("")))
        } else {
            None
        };
        self.out.ops.push(Op::Complete(Complete {
            pid,
            tid,
            start,
            dur,
            name,
            cat,
            unknown_cat,
            index: ev.index as u64,
            correlation: args.correlation.or(args.correlation_id),
            external_id: args.external_id,
            step_num: args.step_num,
            extra,
            kineto,
        }));
        Ok(())
    }
}
