//! The diagnosis the investigation builds on (`analysis::CaptureAnalysis`: steps, idle
//! causes, verdict, knobs), on synthetic captures built with `trace_model::CaptureBuilder`,
//! with exact expected answers: one capture per host sub-cause of the GPU's idle time (their
//! times add up to it), per step evidence (a nested range that must lose), per verdict
//! (including each "cannot tell"), and the framework's knobs.

use std::path::Path;

use analysis::{
    CandidateOutcome, CannotTell, CaptureAnalysis, CauseKey, Diagnosis, Framework, GapCause,
    HostCause, HostRangeKind, Knob, SkipConfig, StepBasis, StepEvidence, StepOrigin,
};
use trace_model::{
    ActivityDetails, ActivityKind, Capture, CaptureBuilder, Device, DeviceId, DeviceProperties,
    Format, GpuActivity, HostEvent, HostKind, HostThread, KernelClass, MemcpyDirection, Nanos,
    Step, StepSource, Stream, StreamId, ThreadId, Vendor, classify_kernel,
};

const US: i64 = 1000;

/// A capture under construction: one NVIDIA GPU (ordinal 0) with streams 7 and 8, one
/// host thread; times in µs.
struct Synth {
    b: CaptureBuilder,
    index: u64,
    corr: u64,
}

impl Synth {
    fn new() -> Synth {
        Synth::new_as(Format::KinetoJson)
    }

    /// [`Synth::new`] read as `format` (an Nsight Systems capture's NVTX ranges).
    fn new_as(format: Format) -> Synth {
        let mut b = CaptureBuilder::new(format);
        b.devices.push(Device {
            id: DeviceId::new(0),
            ordinal: 0,
            vendor: Vendor::Nvidia,
            properties: DeviceProperties::default(),
        });
        for (i, ordinal) in [7, 8].into_iter().enumerate() {
            b.streams.push(Stream {
                id: StreamId::new(i as u32),
                device: DeviceId::new(0),
                ordinal,
                name: None,
            });
        }
        b.threads.push(HostThread {
            id: ThreadId::new(0),
            pid: 1,
            tid: 1,
            name: None,
            pid_text: None,
            tid_text: None,
        });
        Synth {
            b,
            index: 0,
            corr: 0,
        }
    }

    fn host_corr(&mut self, name: &str, kind: HostKind, start: i64, dur: i64, corr: Option<u64>) {
        let name = self.b.strings.intern(name);
        let mut e = HostEvent::new(
            ThreadId::new(0),
            Nanos(start * US),
            Nanos(dur * US),
            name,
            kind,
            self.index,
        );
        self.index += 1;
        e.set_correlation(corr);
        self.b.push_host_event(e, None);
    }

    /// A host event on the thread.
    fn host(&mut self, name: &str, kind: HostKind, start: i64, dur: i64) {
        self.host_corr(name, kind, start, dur, None);
    }

    /// An activity on stream 7 (`stream` 0) or 8 (1), launched by `call` at `at` for
    /// `call_dur`, running `[start, start + dur)`.
    #[allow(clippy::too_many_arguments)]
    fn activity(
        &mut self,
        name: &str,
        kind: ActivityKind,
        class: KernelClass,
        stream: u32,
        call: &str,
        at: i64,
        call_dur: i64,
        start: i64,
        dur: i64,
    ) {
        self.corr += 1;
        let corr = self.corr;
        self.host_corr(call, HostKind::Runtime, at, call_dur, Some(corr));
        let n = self.b.strings.intern(name);
        let mut a = GpuActivity::new(
            StreamId::new(stream),
            Nanos(start * US),
            Nanos(dur * US),
            n,
            kind,
            class,
            self.index,
        );
        self.index += 1;
        a.set_correlation(Some(corr));
        self.b.push_activity(a, ActivityDetails::default());
    }

    /// A kernel on stream 7 launched at `at` by a 5 µs `cudaLaunchKernel`.
    fn kernel(&mut self, name: &str, at: i64, start: i64, dur: i64) {
        self.kernel_on(0, name, at, start, dur);
    }

    fn kernel_on(&mut self, stream: u32, name: &str, at: i64, start: i64, dur: i64) {
        self.activity(
            name,
            ActivityKind::Kernel,
            classify_kernel(name),
            stream,
            "cudaLaunchKernel",
            at,
            5,
            start,
            dur,
        );
    }

    fn profiler_step(&mut self, number: i64, start: i64, end: i64) {
        let name = format!("ProfilerStep#{number}");
        self.host(&name, HostKind::Annotation, start, end - start);
        self.b.steps.push(Step {
            number,
            start: Nanos(start * US),
            end: Nanos(end * US),
            source: StepSource::ProfilerStep,
        });
    }

    fn finish(self) -> Capture {
        self.b.finish(Path::new("synthetic"))
    }
}

fn report(c: &Capture) -> CaptureAnalysis {
    analysis::analyze_capture(c, "synthetic", None, &SkipConfig::default())
}

const GEMM: &str = "volta_sgemm_128x64_nn";

/// One step of 16.01 ms: a 3 ms GEMM launched at 0, 10 ms of host time on the way to the
/// next launch at 13005 µs (what `between` puts there), a second 3 ms GEMM. The critical
/// stream idles 5 µs before the first kernel (its launch call) and 10.005 ms before the
/// second (10 ms of `between`, 5 µs of its launch call): 62.5 % of the step.
fn late_launch(between: impl FnOnce(&mut Synth)) -> CaptureAnalysis {
    late_launch_capture(between).1
}

fn late_launch_capture(between: impl FnOnce(&mut Synth)) -> (Capture, CaptureAnalysis) {
    let mut s = Synth::new();
    s.profiler_step(1, 0, 16_010);
    s.kernel(GEMM, 0, 5, 3_000);
    between(&mut s);
    s.kernel(GEMM, 13_005, 13_010, 3_000);
    let c = s.finish();
    let r = report(&c);
    (c, r)
}

/// The host sub-causes add up to the host-wait time, and the gap causes to the critical
/// stream's idle time.
fn assert_adds_up(r: &CaptureAnalysis) {
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(gc.host.total(), gc.host_not_launched, "{:?}", gc.host);
    let idle = r.critical_stream().expect("critical").budget.idle;
    assert_eq!(gc.total(), idle);
}

/// Asserts the host split of a [`late_launch`] capture: `cause` holds the 10 ms,
/// launch overhead the two 5 µs launch calls, and the verdict names `cause`.
fn assert_late(r: &CaptureAnalysis, cause: HostCause, top: &str) {
    assert_adds_up(r);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(gc.host_not_launched, Nanos(10_010 * US));
    assert_eq!(gc.host.time_of(cause), Nanos(10_000 * US), "{:?}", gc.host);
    assert_eq!(gc.host.time_of(HostCause::LaunchOverhead), Nanos(10 * US));
    assert_eq!(
        gc.host.top_of(cause).next().map(|t| t.name.as_str()),
        Some(top)
    );
    let sum: Nanos = HostCause::ALL.iter().map(|&c| gc.host.time_of(c)).sum();
    assert_eq!(sum, gc.host_not_launched);
}

#[test]
fn the_allocator_is_named() {
    let (c, r) = late_launch_capture(|s| s.host("hipFree", HostKind::Runtime, 3_005, 10_000));
    assert_late(&r, HostCause::Allocator, "hipFree");
    assert_eq!(
        r.diagnosis,
        Diagnosis::HostBound {
            cause: HostCause::Allocator
        }
    );
    assert_eq!(r.diagnosis.code(), "host-bound:allocator");
    // The ranked causes hold the sub-cause under its own key, not "host did not launch".
    let causes = analysis::causes(&r, &c, r.window.expect("window"));
    assert_eq!(
        (causes[0].key.code(), causes[0].time),
        (
            "gap:host-not-launched:allocator".to_owned(),
            Nanos(10_000 * US)
        )
    );
    assert!(
        !causes
            .iter()
            .any(|c| c.key == CauseKey::Gap(GapCause::HostNotLaunched)),
        "the host-wait time is ranked by sub-cause only"
    );
    // The idle-time causes add up to the idle time.
    let idle: Nanos = causes
        .iter()
        .filter(|c| matches!(c.key, CauseKey::Host(_) | CauseKey::Gap(_)))
        .map(|c| c.time)
        .sum();
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(
        idle + gc.unknown,
        r.critical_stream().expect("critical").budget.idle
    );
    let knobs = analysis::host_knobs(
        HostCause::Allocator,
        r.framework.framework,
        &analysis::Practices::default(),
    );
    assert_eq!(knobs, [Knob::CachingAllocator, Knob::ExpandableSegments]);
}

#[test]
fn data_loading_is_named_with_the_ops_inside_it() {
    let r = late_launch(|s| {
        s.host(
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            HostKind::Annotation,
            3_005,
            10_000,
        );
        // Collation inside the fetch is data loading too.
        s.host("aten::stack", HostKind::CpuOp, 4_000, 1_000);
    });
    assert_late(
        &r,
        HostCause::DataLoading,
        "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
    );
    assert_eq!(
        r.diagnosis,
        Diagnosis::HostBound {
            cause: HostCause::DataLoading
        }
    );
}

#[test]
fn cpu_work_without_launches_names_its_top_op() {
    let r = late_launch(|s| {
        s.host("preprocess", HostKind::CpuOp, 3_005, 10_000);
        s.host("aten::resize", HostKind::CpuOp, 3_005, 6_000);
    });
    assert_late(&r, HostCause::CpuWork, "aten::resize");
    let gc = r.gap_causes.as_ref().expect("gap causes");
    let names: Vec<(&str, Nanos)> = gc
        .host
        .top_of(HostCause::CpuWork)
        .map(|t| (t.name.as_str(), t.time))
        .collect();
    assert_eq!(
        names,
        [
            ("aten::resize", Nanos(6_000 * US)),
            ("preprocess", Nanos(4_000 * US))
        ]
    );
}

#[test]
fn a_long_stretch_inside_a_launching_op_is_its_cpu_work() {
    // The op launches the second kernel at its end; its 10 ms before that is its own
    // CPU work, not launch overhead.
    let r = late_launch(|s| s.host("aten::cudnn_convolution", HostKind::CpuOp, 3_005, 10_006));
    assert_late(&r, HostCause::CpuWork, "aten::cudnn_convolution");
}

#[test]
fn unrecorded_time_under_a_wrapper_is_nothing_recorded() {
    let r = late_launch(|s| s.host("train.py(40): train_step", HostKind::PythonFrame, 0, 16_010));
    assert_adds_up(&r);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(
        gc.host.time_of(HostCause::NothingRecorded),
        Nanos(10_000 * US)
    );
    // Without the frame, the step's own annotation is the wrapper that names it.
    let r = late_launch(|_| {});
    assert_late(&r, HostCause::NothingRecorded, "ProfilerStep#1");
    assert_eq!(
        analysis::host_knobs(
            HostCause::NothingRecorded,
            Framework::PyTorchEager,
            &analysis::Practices::default()
        ),
        [Knob::CaptureHostSide]
    );
}

/// CPU work that launches nothing: PyTorch's knobs move preprocessing off the step; in JAX
/// and TensorFlow it is Python between the program's dispatches (the dispatching thread a
/// stream thread waits for), which goes when more of the step is one compiled program.
#[test]
fn cpu_work_knobs_follow_the_framework() {
    let knobs = |f| analysis::host_knobs(HostCause::CpuWork, f, &analysis::Practices::default());
    assert_eq!(
        knobs(Framework::PyTorchEager),
        [Knob::PreprocessOnGpu, Knob::PreprocessInWorkers]
    );
    assert_eq!(
        knobs(Framework::Jax),
        [Knob::JaxJitWholeStep, Knob::PreprocessOnGpu]
    );
    assert_eq!(
        knobs(Framework::TensorFlow),
        [Knob::TfFunctionJit, Knob::PreprocessOnGpu]
    );
}

#[test]
fn compilation_and_profiler_overhead_are_named() {
    let r = late_launch(|s| s.host("cuModuleLoadData", HostKind::Runtime, 3_005, 10_000));
    assert_late(&r, HostCause::Compilation, "cuModuleLoadData");
    // Compilation over half the window: not steady state.
    assert_eq!(
        r.diagnosis,
        Diagnosis::CannotTell {
            reason: CannotTell::Compilation
        }
    );
    let r = late_launch(|s| s.host("[profiler] flush", HostKind::Other, 3_005, 10_000));
    assert_late(&r, HostCause::ProfilerOverhead, "[profiler] flush");
}

#[test]
fn a_synchronising_call_is_its_own_cause() {
    let r = late_launch(|s| s.host("cudaDeviceSynchronize", HostKind::Runtime, 3_005, 10_000));
    assert_adds_up(&r);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(gc.sync_call, Nanos(10_000 * US));
    assert_eq!(gc.host_not_launched, Nanos(10 * US));
    assert_eq!(gc.host.time_of(HostCause::LaunchOverhead), Nanos(10 * US));
    assert_eq!(r.diagnosis, Diagnosis::HostSync);
}

/// 600 kernels of 10 µs, each launched by a 25 µs call right after the previous one
/// returned: the GPU idles 15 µs + the first launch between kernels, all launch calls.
fn launch_bound(graph_replay: bool) -> CaptureAnalysis {
    let mut s = Synth::new();
    s.profiler_step(1, 0, 15_000);
    for i in 0..600 {
        let at = 25 * i;
        s.activity(
            GEMM,
            ActivityKind::Kernel,
            KernelClass::Gemm,
            0,
            "cudaLaunchKernel",
            at,
            25,
            at + 25,
            10,
        );
    }
    if graph_replay {
        s.host("cudaGraphLaunch", HostKind::Runtime, 14_990, 5);
        s.host("cudaGraphLaunch", HostKind::Runtime, 14_995, 5);
    }
    report(&s.finish())
}

#[test]
fn many_short_launches_are_launch_overhead_and_only_they_get_cuda_graphs() {
    let r = launch_bound(false);
    assert_adds_up(&r);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    // 25 µs before the first kernel, 15 µs between each of the 600.
    assert_eq!(
        gc.host.time_of(HostCause::LaunchOverhead),
        Nanos(9_010 * US)
    );
    assert_eq!(gc.host.total(), Nanos(9_010 * US));
    assert_eq!(
        r.diagnosis,
        Diagnosis::HostBound {
            cause: HostCause::LaunchOverhead
        }
    );
    for cause in HostCause::ALL {
        let knobs = analysis::host_knobs(cause, Framework::PyTorchEager, &Default::default());
        assert_eq!(
            knobs.contains(&Knob::CudaGraphs),
            cause == HostCause::LaunchOverhead,
            "{cause:?}"
        );
    }
}

#[test]
fn graphs_in_use_are_never_advised_again() {
    let mut s = Synth::new();
    s.host("cudaGraphLaunch", HostKind::Runtime, 0, 5);
    s.kernel(GEMM, 10, 20, 10);
    // The CUDA-graph allocator's own state calls are not activation checkpointing.
    s.host("_cuda_getCheckpointState", HostKind::CpuOp, 40, 5);
    let c = s.finish();
    let p = analysis::practices(&c);
    assert!(p.graph_replay.is_some());
    assert!(p.checkpointing.is_none(), "{:?}", p.checkpointing);
    let fw = analysis::detect_framework(&c, &p);
    assert_eq!(fw.framework, Framework::PyTorchGraphReplay);
    let knobs = analysis::host_knobs(HostCause::LaunchOverhead, fw.framework, &p);
    assert_eq!(knobs, [Knob::CaptureRemainingOps, Knob::TorchCompile]);
    assert!(analysis::is_activation_checkpoint(
        "torch/utils/checkpoint.py(450): checkpoint"
    ));
}

#[test]
fn frameworks_are_told_by_their_names() {
    let mut s = Synth::new();
    s.kernel("void mul_mat_q<(ggml_type)2, 128, false>", 0, 5, 100);
    let c = s.finish();
    let fw = analysis::detect_framework(&c, &analysis::practices(&c));
    assert_eq!(fw.framework, Framework::LlamaCpp);
    assert_eq!(
        analysis::host_knobs(HostCause::LaunchOverhead, fw.framework, &Default::default()),
        [Knob::GgmlGraphs]
    );
    let mut s = Synth::new();
    s.host("step[DECODE bs=8]", HostKind::Annotation, 0, 100);
    s.kernel(GEMM, 1, 5, 100);
    let c = s.finish();
    assert_eq!(
        analysis::detect_framework(&c, &analysis::practices(&c)).framework,
        Framework::Sglang
    );
    let mut s = Synth::new();
    s.host("__inference_train_step_1234", HostKind::Other, 0, 100);
    let c = s.finish();
    let fw = analysis::detect_framework(&c, &analysis::practices(&c)).framework;
    assert_eq!(fw, Framework::TensorFlow);
    // TensorFlow gets tf.data, not jax or torch knobs.
    assert_eq!(
        analysis::host_knobs(HostCause::DataLoading, fw, &Default::default()),
        [Knob::TfDataPipeline]
    );
}

#[test]
fn iterations_from_optimizer_step_annotations() {
    // Five iterations of 4 ms: batch fetch (1 ms), forward/backward (3 GEMMs of 0.8 ms),
    // optimizer step; no ProfilerStep.
    let mut s = Synth::new();
    for i in 0..5 {
        let t = 4_000 * i;
        s.host(
            "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
            HostKind::Annotation,
            t,
            1_000,
        );
        for k in 0..3 {
            let at = t + 1_000 + 900 * k;
            s.kernel(GEMM, at, at + 10, 800);
        }
        s.host(
            "Optimizer.step#SGD.step",
            HostKind::Annotation,
            t + 3_800,
            150,
        );
        s.kernel(
            "void at::native::vectorized_elementwise_kernel<4, add>",
            t + 3_810,
            t + 3_820,
            100,
        );
    }
    let r = report(&s.finish());
    assert_eq!(
        r.steps.origin,
        StepOrigin::IterationAnnotation {
            name: "Optimizer.step#…".to_owned()
        }
    );
    let ranges: Vec<(i64, i64)> = r
        .steps
        .steps
        .iter()
        .map(|s| (s.range.start.0 / US, s.range.end.0 / US))
        .collect();
    assert_eq!(
        ranges,
        [
            (0, 3_950),
            (3_950, 7_950),
            (7_950, 11_950),
            (11_950, 15_950),
            (15_950, 19_950)
        ]
    );
    let won: Vec<(StepEvidence, usize)> = r
        .steps
        .considered
        .iter()
        .filter(|c| c.outcome == CandidateOutcome::Chosen)
        .map(|c| (c.evidence, c.steps))
        .collect();
    assert_eq!(won, [(StepEvidence::IterationAnnotation, 5)]);
    assert_eq!(r.steps.considered[0].outcome, CandidateOutcome::Absent);
    // The fetches are the step's idle time: data loading, not launch overhead.
    assert_adds_up(&r);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    let (top, _) = gc.host.largest().expect("host time");
    assert_eq!(top, HostCause::DataLoading);
}

#[test]
fn a_scheduler_step_nested_in_the_denoising_loop_is_not_the_step() {
    // Three denoising iterations (`denoise` annotations, 5 ms of transformer GEMM each)
    // with a diffusers scheduler step inside (one 10 µs kernel).
    let mut s = Synth::new();
    for i in 0..3 {
        let t = 6_000 * i;
        s.host("denoise", HostKind::Annotation, t, 5_900);
        s.kernel(GEMM, t + 10, t + 20, 5_000);
        s.host(
            "diffusers/schedulers/scheduling_flow_match_euler_discrete.py(295): step",
            HostKind::PythonFrame,
            t + 5_100,
            100,
        );
        s.kernel(
            "void at::native::vectorized_elementwise_kernel<4, add>",
            t + 5_110,
            t + 5_120,
            10,
        );
    }
    let r = report(&s.finish());
    let engine = r
        .steps
        .considered
        .iter()
        .find(|c| c.evidence == StepEvidence::EngineStep)
        .expect("engine step considered");
    assert_eq!(engine.steps, 3);
    // It loses by the nesting rule (before the 50 % rule is asked): each lies inside a
    // repeating `denoise` that launches other work.
    let CandidateOutcome::NestedInRepeatingParent {
        ref parent,
        instances,
        share,
    } = engine.outcome
    else {
        panic!("{:?}", engine.outcome);
    };
    assert_eq!((parent.as_str(), instances), ("denoise", 3));
    assert!((share - 30.0 / 15_030.0).abs() < 1e-9, "{share}");
    assert_eq!(
        r.steps.origin,
        StepOrigin::RepeatedHostRange {
            name: "denoise".to_owned(),
            kind: HostRangeKind::Annotation
        }
    );
    assert_eq!(r.steps.steps.len(), 3);
}

/// Kernels of `dur` µs on stream 7, launched 1 ms ahead, `gap` µs apart, 10 steps.
fn busy(kind: ActivityKind, name: &str, class: KernelClass) -> CaptureAnalysis {
    let mut s = Synth::new();
    for i in 0..10 {
        let t = 1_000 * i;
        s.profiler_step(i, t, t + 1_000);
        s.activity(name, kind, class, 0, "cudaMemcpyAsync", t, 5, t + 10, 980);
    }
    report(&s.finish())
}

#[test]
fn compute_copy_and_collective_bound() {
    let r = busy(ActivityKind::Kernel, GEMM, KernelClass::Gemm);
    assert_eq!(
        r.diagnosis,
        Diagnosis::ComputeBound {
            class: KernelClass::Gemm
        }
    );
    let r = busy(
        ActivityKind::Memcpy,
        "Memcpy HtoD (Pinned -> Device)",
        KernelClass::Memcpy(MemcpyDirection::HostToDevice),
    );
    assert_eq!(r.diagnosis, Diagnosis::CopyBound);
    let nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)";
    let r = busy(ActivityKind::Kernel, nccl, classify_kernel(nccl));
    assert_eq!(r.diagnosis, Diagnosis::CollectiveBound);
}

#[test]
fn a_wait_on_another_stream_is_a_dependency() {
    // Kernel C is launched at 3.1 ms behind a stream-wait on stream 8's tiny kernel at
    // 11.9 ms: the critical stream idles 3–12 ms with its work already issued.
    let mut s = Synth::new();
    s.profiler_step(1, 0, 16_000);
    s.kernel(GEMM, 0, 5, 2_995);
    s.host("cudaStreamWaitEvent", HostKind::Runtime, 3_050, 5);
    s.kernel(GEMM, 3_100, 12_000, 4_000);
    s.kernel_on(
        1,
        "void at::native::vectorized_elementwise_kernel<4, add>",
        3_200,
        11_900,
        50,
    );
    let r = report(&s.finish());
    assert_adds_up(&r);
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(gc.stream_or_event, Nanos((12_000 - 3_105) * US));
    assert_eq!(r.diagnosis, Diagnosis::DependencyWait);
}

#[test]
fn mixed_when_nothing_dominates() {
    // 60 % busy, 40 % idle waiting for the host: neither bound.
    let r = {
        let mut s = Synth::new();
        s.profiler_step(1, 0, 10_000);
        s.kernel(GEMM, 0, 5, 5_995);
        s.host("aten::resize", HostKind::CpuOp, 6_000, 3_990);
        s.kernel(GEMM, 9_990, 9_995, 5);
        s.kernel(GEMM, 9_991, 10_000, 0);
        report(&s.finish())
    };
    assert_eq!(r.diagnosis, Diagnosis::Mixed, "{:?}", r.verdict);
}

#[test]
fn cannot_tell_a_graph_capture_with_one_replay() {
    let mut s = Synth::new();
    s.profiler_step(1, 0, 20_000);
    s.host("cudaStreamBeginCapture", HostKind::Runtime, 0, 5);
    s.host("cudaStreamEndCapture", HostKind::Runtime, 12_000, 5);
    s.host("cudaGraphLaunch", HostKind::Runtime, 12_010, 5);
    s.kernel(GEMM, 12_011, 12_020, 7_000);
    let r = report(&s.finish());
    let Diagnosis::CannotTell { reason } = r.diagnosis else {
        panic!("{:?}", r.diagnosis);
    };
    assert_eq!(reason, CannotTell::GraphCapture);
}

#[test]
fn cannot_tell_with_too_little_gpu_work() {
    let mut s = Synth::new();
    for i in 0..20 {
        s.kernel(GEMM, 100 * i, 100 * i + 10, 10);
    }
    let r = report(&s.finish());
    assert_eq!(
        r.diagnosis,
        Diagnosis::CannotTell {
            reason: CannotTell::TooLittleGpuWork {
                gpu_time: Nanos(200 * US)
            }
        }
    );
}

#[test]
fn cannot_tell_from_one_decode_step_whose_gpu_work_outlives_it() {
    // One SGLang decode step of 1.2 ms on the host; its graph replay runs 7 ms.
    let mut s = Synth::new();
    s.host("step[DECODE bs=1]", HostKind::Annotation, 0, 1_200);
    s.kernel(GEMM, 1_000, 1_010, 7_000);
    let r = report(&s.finish());
    assert_eq!(
        r.diagnosis,
        Diagnosis::CannotTell {
            reason: CannotTell::SingleOverlappedStep
        }
    );
}

#[test]
fn a_host_running_ahead_times_steps_by_their_gpu_span() {
    // Four host steps of 1 ms start to start; the GPU work of each takes 3 ms and lags.
    let mut s = Synth::new();
    for i in 0..4 {
        let t = 1_000 * i;
        s.profiler_step(i, t, t + 1_000);
        s.kernel(GEMM, t + 10, 3_000 * i + 20, 3_000);
    }
    let r = report(&s.finish());
    let sides = r.step_sides.expect("sides");
    assert_eq!(sides.basis, StepBasis::GpuSpan);
    assert_eq!(sides.period.expect("period").median, Nanos(1_000 * US));
    assert_eq!(sides.host.median, Nanos(1_000 * US));
    assert_eq!(sides.gpu.expect("gpu").median, Nanos(3_000 * US));
    // Step 1: GPU ends at 6.02 ms, host at 2 ms.
    assert_eq!(sides.lag.expect("lag").median, Nanos(4_020 * US));
    // The window is the GPU span of the steps' work, not joined with the host ranges.
    let w = r.window.expect("window");
    assert_eq!((w.start, w.end), (Nanos(20 * US), Nanos(12_020 * US)));
}

#[test]
fn warm_up_evidence_is_of_a_size_that_matters() {
    // Three 10 ms steps; a 50 µs autotuner call (0.5 % of a step) and a 6 ms module load
    // in the first step.
    let mut s = Synth::new();
    for i in 0..3 {
        let t = 10_000 * i;
        s.profiler_step(i, t, t + 10_000);
        s.kernel(GEMM, t + 7_000, t + 7_010, 2_900);
    }
    s.host(
        "CachingAutotuner.benchmark_all_configs",
        HostKind::PythonFrame,
        100,
        50,
    );
    s.host("cuModuleLoadData", HostKind::Runtime, 200, 6_000);
    let r = report(&s.finish());
    let names: Vec<&str> = r.warm_up.events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["cuModuleLoadData"]);
    assert_eq!(r.warm_up.steps, [0]);
}

#[test]
fn windows_are_per_gpu_never_joined_across_devices() {
    // GPU 0 runs 10 ms of GEMMs from 0; GPU 1 runs 4 ms 650 ms later. Joined, the window
    // would be 654 ms and 2 % busy; GPU 0's own window is 10 ms and fully busy.
    let mut s = Synth::new();
    s.b.devices.push(Device {
        id: DeviceId::new(1),
        ordinal: 1,
        vendor: Vendor::Nvidia,
        properties: DeviceProperties::default(),
    });
    s.b.streams.push(Stream {
        id: StreamId::new(2),
        device: DeviceId::new(1),
        ordinal: 7,
        name: None,
    });
    // Distinct names: no repeating sequence, no steps, the whole capture is one step.
    for i in 0..10 {
        let name = format!("volta_sgemm_128x64_nn_{i}");
        s.kernel(&name, 1_000 * i, 1_000 * i + 10, 1_000);
    }
    for i in 0..4 {
        let name = format!("volta_sgemm_64x64_nt_{i}");
        s.kernel_on(2, &name, 650_000 + 1_000 * i, 650_010 + 1_000 * i, 1_000);
    }
    let r = report(&s.finish());
    assert_eq!(r.steps.origin, StepOrigin::WholeCapture);
    let w = r.window.expect("window");
    assert_eq!((w.start, w.end), (Nanos(10 * US), Nanos(10_010 * US)));
    assert!(r.diagnostics.get("window-per-gpu").is_some());
    assert_eq!(
        r.diagnosis,
        Diagnosis::ComputeBound {
            class: KernelClass::Gemm
        }
    );
}

/// Two GPUs that keep their own steps (TensorFlow's per-GPU `Steps` line), 650 ms apart,
/// each 70 % busy within its 1 ms step: the window is one GPU's own step, not the 651 ms
/// union of both, so the GPU is not called idle.
#[test]
fn a_device_s_own_steps_are_its_window() {
    let mut s = Synth::new();
    s.b.devices.push(Device {
        id: DeviceId::new(1),
        ordinal: 1,
        vendor: Vendor::Nvidia,
        properties: DeviceProperties::default(),
    });
    s.b.streams.push(Stream {
        id: StreamId::new(2),
        device: DeviceId::new(1),
        ordinal: 9,
        name: None,
    });
    for (stream, base) in [(0u32, 0i64), (2, 650_000)] {
        for k in 0..10 {
            let t = base + 100 * k;
            s.activity(
                GEMM,
                ActivityKind::Kernel,
                KernelClass::Gemm,
                stream,
                "cudaLaunchKernel",
                t,
                5,
                t + 10,
                70,
            );
        }
    }
    for (device, base) in [(0u32, 0i64), (1, 650_000)] {
        s.b.meta.device_steps.push((
            DeviceId::new(device),
            Step {
                number: 0,
                start: Nanos(base * US),
                end: Nanos((base + 1_000) * US),
                source: StepSource::DeviceStepsLine,
            },
        ));
    }
    s.b.steps.push(Step {
        number: 0,
        start: Nanos(0),
        end: Nanos(651_000 * US),
        source: StepSource::DeviceStepsLine,
    });
    let r = report(&s.finish());
    let window = r.window.expect("a window");
    assert_eq!(window.span(), Nanos(1_000 * US), "{window:?}");
    // The step figures are the window GPU's own step, not the 651 ms union step.
    let d = r
        .device_steps
        .as_ref()
        .expect("the GPUs keep their own steps");
    assert_eq!(d.steps.len(), 1);
    assert_eq!(
        d.per_gpu
            .iter()
            .map(|(o, n, s)| (*o, *n, s.median))
            .collect::<Vec<_>>(),
        [(0, 1, Nanos(1_000 * US)), (1, 1, Nanos(1_000 * US))]
    );
    assert_eq!(r.steady_step_durations(), [Nanos(1_000 * US)]);
    assert_eq!(r.steady_step_count(), 1);
    let sides = r.step_sides.expect("step sides");
    assert_eq!(sides.host.median, Nanos(1_000 * US));
    // The GPU span: the first of its 10 GEMMs at +10 µs to the last's end at +980 µs.
    assert_eq!(sides.gpu.expect("GPU side").median, Nanos(970 * US));
    assert!(
        !matches!(r.diagnosis, Diagnosis::HostBound { .. }),
        "{:?}",
        r.diagnosis
    );
}

/// Autotuning in the gap before a late launch is JIT compilation and autotuning, like a
/// module load: Inductor's autotuner benchmarking its configurations.
#[test]
fn autotuning_is_compilation() {
    let r = late_launch(|s| {
        s.host(
            "CachingAutotuner.benchmark_all_configs",
            HostKind::PythonFrame,
            3_005,
            10_000,
        )
    });
    assert_late(
        &r,
        HostCause::Compilation,
        "CachingAutotuner.benchmark_all_configs",
    );
    assert_eq!(
        analysis::host_knobs(
            HostCause::Compilation,
            Framework::PyTorchCompiled,
            &analysis::Practices::default()
        ),
        [Knob::WarmUpBeforeCapture]
    );
}

/// Without `Optimizer.step`, each `enumerate(DataLoader)` batch fetch starts a step, from
/// its start to the next one's; the last ends with its last launch.
#[test]
fn iterations_from_data_loader_annotations() {
    let mut s = Synth::new();
    for i in 0..4 {
        let t = 3_000 * i;
        s.host(
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            HostKind::Annotation,
            t,
            1_000,
        );
        s.kernel(GEMM, t + 1_000, t + 1_010, 1_900);
    }
    let r = report(&s.finish());
    assert_eq!(
        r.steps.origin,
        StepOrigin::IterationAnnotation {
            name: "enumerate(DataLoader)#…".to_owned()
        }
    );
    let ranges: Vec<(i64, i64)> = r
        .steps
        .steps
        .iter()
        .map(|s| (s.range.start.0 / US, s.range.end.0 / US))
        .collect();
    assert_eq!(
        ranges,
        [(0, 3_000), (3_000, 6_000), (6_000, 9_000), (9_000, 10_005)]
    );
    // A third of each step is the fetch: data loading holds the host-wait time.
    let gc = r.gap_causes.as_ref().expect("gap causes");
    assert_eq!(
        gc.host.largest().map(|(c, _)| c),
        Some(HostCause::DataLoading)
    );
}

/// Nsight Systems NVTX ranges: three `train_iteration` ranges, each holding four
/// `TransformerBlock` ranges (an FSDP model's blocks) that launch most of its GPU work.
/// The iterations are the steps; the blocks repeat inside a repeating parent that
/// launches other work (its optimizer kernel), so they lose.
#[test]
fn nvtx_iterations_are_steps_and_their_blocks_are_not() {
    let mut s = Synth::new_as(Format::NsysSqlite);
    for i in 0..3 {
        let t = 10_000 * i;
        s.host("train_iteration", HostKind::Annotation, t, 9_500);
        for b in 0..4 {
            let at = t + 100 + 2_000 * b;
            s.host("TransformerBlock", HostKind::Annotation, at, 1_900);
            s.kernel(GEMM, at + 10, at + 20, 1_800);
        }
        s.kernel(
            "void at::native::vectorized_elementwise_kernel<4, add>",
            t + 8_200,
            t + 8_210,
            500,
        );
    }
    let r = report(&s.finish());
    assert_eq!(
        r.steps.origin,
        StepOrigin::RepeatedHostRange {
            name: "train_iteration".to_owned(),
            kind: HostRangeKind::Annotation
        }
    );
    assert_eq!(r.steps.steps.len(), 3);
    assert_eq!(
        r.steps
            .steps
            .iter()
            .map(|s| (s.range.start.0 / US, s.range.end.0 / US))
            .collect::<Vec<_>>(),
        [(0, 9_500), (10_000, 19_500), (20_000, 29_500)]
    );
}

/// Compute-bound names its class: convolutions leading the critical stream.
#[test]
fn compute_bound_by_convolution() {
    let conv = "void cudnn::cnn::implicit_convolve_sgemm<float, float, 128, 5, 5, 3, 3, 3, 1, false, false, true>";
    assert_eq!(classify_kernel(conv), KernelClass::Convolution);
    let r = busy(ActivityKind::Kernel, conv, KernelClass::Convolution);
    assert_eq!(
        r.diagnosis,
        Diagnosis::ComputeBound {
            class: KernelClass::Convolution
        }
    );
    assert_eq!(r.diagnosis.code(), "compute-bound:convolution");
}

/// The remaining reasons to say "cannot tell": no GPU work at all, only warm-up steps,
/// and an idle GPU without evidence why; each with the capture that would decide it.
#[test]
fn cannot_tell_without_gpu_work_in_warm_up_only_and_without_evidence() {
    // Host events only.
    let mut s = Synth::new();
    s.profiler_step(1, 0, 1_000);
    s.host("aten::add", HostKind::CpuOp, 10, 100);
    let r = report(&s.finish());
    assert_eq!(
        r.diagnosis,
        Diagnosis::CannotTell {
            reason: CannotTell::NoGpuWork
        }
    );
    // One step whose two launches take 200 ms each: first launches, warm-up only.
    let mut s = Synth::new();
    s.profiler_step(0, 0, 420_000);
    s.activity(
        GEMM,
        ActivityKind::Kernel,
        KernelClass::Gemm,
        0,
        "cudaLaunchKernel",
        10,
        200_000,
        200_015,
        1_000,
    );
    s.activity(
        GEMM,
        ActivityKind::Kernel,
        KernelClass::Gemm,
        0,
        "cudaLaunchKernel",
        200_020,
        200_000,
        400_025,
        1_000,
    );
    let r = report(&s.finish());
    assert!(r.warm_up.all);
    assert_eq!(
        r.diagnosis,
        Diagnosis::CannotTell {
            reason: CannotTell::WarmUpOnly
        }
    );
    // Two 1.5 ms GEMMs 4.5 ms apart with nothing launched between them (no launch calls recorded):
    // the idle time has no evidence.
    let mut s = Synth::new();
    s.profiler_step(1, 0, 8_010);
    for start in [5, 6_005] {
        let n = s.b.strings.intern(GEMM);
        let a = GpuActivity::new(
            StreamId::new(0),
            Nanos(start * US),
            Nanos(1_500 * US),
            n,
            ActivityKind::Kernel,
            KernelClass::Gemm,
            s.index,
        );
        s.index += 1;
        s.b.push_activity(a, ActivityDetails::default());
    }
    let r = report(&s.finish());
    let Diagnosis::CannotTell { reason } = r.diagnosis else {
        panic!("{:?} {:?}", r.diagnosis, r.verdict);
    };
    assert_eq!(reason, CannotTell::NoEvidence);
}
