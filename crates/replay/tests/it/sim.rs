//! A tiny program simulator that writes captures with known timing: one host thread runs
//! a program (host gaps, CPU ops around launch calls, synchronising calls), each launched
//! activity starts at the latest of its launch call's return plus a launch latency, its
//! stream's previous end, and the end of what it waits for plus a wait latency. It is
//! event-driven, not the replay's graph: the before/after pairs compare the two.

use std::path::Path;

use trace_model::{
    ActivityDetails, ActivityKind, Capture, CaptureBuilder, Device, DeviceId, Format, GpuActivity,
    HostEvent, HostKind, HostThread, KernelClass, MemcpyDirection, Nanos, Stream, StreamId,
    ThreadId, Vendor, classify_kernel,
};

use replay::StepWindow;

/// From a launch call's return to its activity's start on an idle stream.
pub const LATENCY: i64 = 4_000;
/// From a producer's end to a waiting activity's start.
pub const WAIT_LATENCY: i64 = 2_000;
/// A synchronising call's own time, and its return after the GPU work ends.
pub const SYNC_OWN: i64 = 2_000;
pub const SYNC_POST: i64 = 1_000;

pub const GEMM: &str = "volta_sgemm_128x64_nn";
pub const ELEMENTWISE: &str = "void at::native::vectorized_elementwise_kernel<4, add>";
pub const ALLREDUCE: &str = "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)";
pub const COPY: &str = "Memcpy HtoD (Pageable -> Device)";

pub struct Sim {
    b: CaptureBuilder,
    /// The host clock.
    pub h: i64,
    free: Vec<i64>,
    next: u64,
    pub windows: Vec<StepWindow>,
    /// When set, each launch latency is drawn from 2–8 µs and each wait latency from
    /// 1–4 µs (a fixed pseudo-random sequence) instead of the constants.
    jitter: Option<u64>,
}

/// What a launch returns: the activity's start and end.
#[derive(Debug, Clone, Copy)]
pub struct Launched {
    pub start: i64,
    pub end: i64,
}

impl Sim {
    pub fn new(streams: usize) -> Sim {
        let mut b = CaptureBuilder::new(Format::KinetoJson);
        b.devices.push(Device {
            id: DeviceId::new(0),
            ordinal: 0,
            vendor: Vendor::Nvidia,
            properties: Default::default(),
        });
        for s in 0..streams {
            b.streams.push(Stream {
                id: StreamId::new(s as u32),
                device: DeviceId::new(0),
                ordinal: 7 + s as i64,
                name: None,
            });
        }
        b.threads.push(HostThread {
            id: ThreadId::new(0),
            pid: 1,
            tid: 100,
            name: None,
            pid_text: None,
            tid_text: None,
        });
        Sim {
            b,
            h: 1_000_000,
            free: vec![0; streams],
            next: 0,
            windows: Vec::new(),
            jitter: None,
        }
    }

    /// The same simulator with latencies that vary from launch to launch.
    pub fn with_jitter(mut self, seed: u64) -> Sim {
        self.jitter = Some(seed | 1);
        self
    }

    /// A launch latency and a wait latency.
    fn latencies(&mut self) -> (i64, i64) {
        let Some(state) = &mut self.jitter else {
            return (LATENCY, WAIT_LATENCY);
        };
        *state ^= *state << 13;
        *state ^= *state >> 7;
        *state ^= *state << 17;
        let r = *state;
        (
            2_000 + (r % 6_001) as i64,
            1_000 + ((r >> 20) % 3_001) as i64,
        )
    }

    fn index(&mut self) -> u64 {
        self.next += 1;
        self.next
    }

    fn host(&mut self, name: &str, kind: HostKind, start: i64, dur: i64) -> u64 {
        let name = self.b.strings.intern(name);
        let index = self.index();
        let event = HostEvent::new(
            ThreadId::new(0),
            Nanos(start),
            Nanos(dur),
            name,
            kind,
            index,
        );
        self.b.push_host_event(event, None);
        index
    }

    /// Untraced host time.
    pub fn gap(&mut self, dur: i64) {
        self.h += dur;
    }

    /// A CPU op that computes for `cpu`, then runs `inside` (its launches).
    pub fn op(&mut self, name: &str, cpu: i64, inside: impl FnOnce(&mut Sim)) {
        let start = self.h;
        self.h += cpu;
        inside(self);
        let dur = self.h - start;
        self.host(name, HostKind::CpuOp, start, dur);
    }

    /// A launch call of `call` ns that queues `name` (`dur` ns) on `stream`, after
    /// `wait` (a producer's end) when given.
    pub fn launch(
        &mut self,
        call: i64,
        stream: usize,
        name: &str,
        dur: i64,
        wait: Option<i64>,
        bytes: Option<u64>,
    ) -> Launched {
        let corr = self.next;
        let api = if bytes.is_some() {
            "cudaMemcpyAsync"
        } else {
            "cudaLaunchKernel"
        };
        let call_start = self.h;
        self.h += call;
        let name_id = self.b.strings.intern(name);
        let index = self.index();
        let mut event = HostEvent::new(
            ThreadId::new(0),
            Nanos(call_start),
            Nanos(call),
            self.b.strings.intern(api),
            HostKind::Runtime,
            index,
        );
        event.set_correlation(Some(corr));
        self.b.push_host_event(event, None);
        let (latency, wait_latency) = self.latencies();
        let start = (self.h + latency)
            .max(self.free[stream])
            .max(wait.map_or(0, |w| w + wait_latency));
        let (kind, class) = if bytes.is_some() {
            (
                ActivityKind::Memcpy,
                KernelClass::Memcpy(MemcpyDirection::HostToDevice),
            )
        } else {
            (ActivityKind::Kernel, classify_kernel(name))
        };
        let index = self.index();
        let mut a = GpuActivity::new(
            StreamId::new(stream as u32),
            Nanos(start),
            Nanos(dur),
            name_id,
            kind,
            class,
            index,
        );
        a.set_correlation(Some(corr));
        self.b.push_activity(
            a,
            ActivityDetails {
                bytes,
                ..Default::default()
            },
        );
        self.free[stream] = start + dur;
        Launched {
            start,
            end: start + dur,
        }
    }

    /// `cudaDeviceSynchronize`: returns after every stream's work.
    pub fn sync(&mut self) {
        let start = self.h;
        let gpu = self.free.iter().copied().max().unwrap_or(0);
        let end = (start + SYNC_OWN).max(gpu + SYNC_POST);
        self.host(
            "cudaDeviceSynchronize",
            HostKind::Runtime,
            start,
            end - start,
        );
        self.h = end;
    }

    /// Runs `body` as step `number`, its window the host time it takes.
    pub fn step(&mut self, number: i64, body: impl FnOnce(&mut Sim)) {
        let start = self.h;
        body(self);
        self.windows.push(StepWindow {
            number,
            start: Nanos(start),
            end: Nanos(self.h),
            gpu_ranged: false,
        });
    }

    pub fn finish(self) -> (Capture, Vec<StepWindow>) {
        (self.b.finish(Path::new("sim.json")), self.windows)
    }
}

/// The training-like program of the before/after pairs: per step, a host-to-device copy
/// the first GEMM waits for, `layers` layers (a host gap, a CPU op around a GEMM launch,
/// another around an elementwise launch), an all-reduce on a second stream waiting for the
/// last kernel, and a device synchronise.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    pub steps: usize,
    pub layers: usize,
    pub gap: i64,
    pub cpu: i64,
    pub launch: i64,
    pub gemm: i64,
    pub elementwise: i64,
    pub allreduce: i64,
    pub copy_bytes: u64,
    /// Bytes per second.
    pub copy_bandwidth: f64,
}

impl Program {
    /// Runs the program with constant latencies.
    pub fn run(&self) -> (Capture, Vec<StepWindow>) {
        self.run_on(Sim::new(3))
    }

    /// Runs the program with latencies that vary from launch to launch, drawn from `seed`:
    /// two runs with different seeds differ as two captures of one program do.
    pub fn run_jittered(&self, seed: u64) -> (Capture, Vec<StepWindow>) {
        self.run_on(Sim::new(3).with_jitter(seed))
    }

    fn run_on(&self, mut sim: Sim) -> (Capture, Vec<StepWindow>) {
        for step in 0..self.steps {
            sim.step(step as i64 + 1, |sim| {
                let copy_dur = (self.copy_bytes as f64 / self.copy_bandwidth * 1e9).round() as i64;
                let copy = sim.launch(self.launch, 2, COPY, copy_dur, None, Some(self.copy_bytes));
                let mut last = None;
                for layer in 0..self.layers {
                    sim.gap(self.gap);
                    let wait = (layer == 0).then_some(copy.end);
                    sim.op("aten::mm", self.cpu, |sim| {
                        sim.launch(self.launch, 0, GEMM, self.gemm, wait, None);
                    });
                    sim.gap(self.gap);
                    sim.op("aten::add", self.cpu, |sim| {
                        last = Some(sim.launch(
                            self.launch,
                            0,
                            ELEMENTWISE,
                            self.elementwise,
                            None,
                            None,
                        ));
                    });
                }
                sim.gap(self.gap);
                let after = last.map(|l| l.end);
                sim.launch(self.launch, 1, ALLREDUCE, self.allreduce, after, None);
                sim.sync();
            });
        }
        sim.finish()
    }
}
