//! Steps 6 and 7 of the investigation, in words: the ranked causes with their estimates
//! and knobs, what the capture already does, the trust list and what a new capture would
//! answer. The investigation chose them; this module only words and labels them.

use investigation::{
    Advice, CauseReplay, Investigation, Knob, Listed, PracticeKind, TrustNote, TrustSource, What,
};
use trace_model::{Provenance, TrustItem};

use crate::doc::{Block, Cell, Finding, Section, Span, Table, TrustEntry};
use crate::label::Figure;
use crate::measured;

/// A practice in use, in words, its share of GPU time a measured figure.
fn in_use_spans(u: &investigation::InUse) -> Vec<Span> {
    let shared = |what: &str| {
        let mut spans = vec![Span::text(format!("{what} ({}; ", u.evidence))];
        if let Some(share) = u.share {
            spans.push(Span::Figure(measured::share(share)));
        }
        spans.push(Span::text(" of GPU time)"));
        spans
    };
    match u.practice {
        PracticeKind::Compiled => shared("torch.compile/Inductor"),
        PracticeKind::GraphReplay => shared("CUDA/HIP graph replay"),
        PracticeKind::Checkpointing => vec![Span::text(format!(
            "activation checkpointing ({})",
            u.evidence
        ))],
        PracticeKind::PythonTracer => vec![Span::text(format!(
            "the Python tracer ({}; it adds its own time to every host gap)",
            u.evidence
        ))],
    }
}

/// What a replay error is.
const REPLAY_ERROR: &str =
    "the unchanged replay's median absolute step error against the measured steps";

/// What the replay error with typical delays is.
const TYPICAL_REPLAY_ERROR: &str = "the unchanged replay's median absolute step error against \
     the measured steps with every GPU edge at the capture's typical delay: the error of the \
     graph's structure alone";

/// A replay error (a fraction) as a percentage, inferred as `what` says.
fn replay_error_figure(e: f64, what: &'static str) -> Figure {
    Figure::percent(100.0 * e, Provenance::inferred(what))
}

/// The unchanged replay's error, with the typical-delay one beside it where known.
fn replay_error_cell(r: &investigation::Replayed) -> Cell {
    let figure = replay_error_figure;
    match (r.replay_error, r.typical_replay_error) {
        (None, _) => Cell::text("none"),
        (Some(e), None) => Cell::figure(figure(e, REPLAY_ERROR)),
        (Some(e), Some(t)) => Cell::Spans(vec![
            Span::Figure(figure(e, REPLAY_ERROR)),
            Span::text(" (typical delays: "),
            Span::Figure(figure(t, TYPICAL_REPLAY_ERROR)),
            Span::text(")"),
        ]),
    }
}

/// The first cause's sentence, after its subtraction estimate: its replayed step, or why
/// there is none.
fn replay_sentence(replay: &CauseReplay, spans: &mut Vec<Span>) {
    match replay {
        CauseReplay::Replayed(r) => {
            spans.push(Span::text(format!(
                "; a replay of its scenario `{}` on the capture's dependency graph gives ",
                r.scenario
            )));
            spans.push(Span::Figure(Figure::duration(
                r.step_after,
                Provenance::inferred(investigation::REPLAY_ASSUMPTIONS),
            )));
            spans.push(Span::text(" instead of "));
            spans.push(Span::Figure(Figure::duration(
                r.replayed_step,
                Provenance::inferred(investigation::REPLAY_ASSUMPTIONS),
            )));
            spans.push(Span::text(" (the unchanged replay; measured "));
            spans.push(Span::Figure(Figure::duration(
                r.measured_step,
                Provenance::Measured,
            )));
            spans.push(Span::text(", replay error "));
            spans.push(match r.replay_error {
                Some(e) => Span::Figure(replay_error_figure(e, REPLAY_ERROR)),
                None => Span::text("unknown"),
            });
            if let Some(t) = r.typical_replay_error {
                spans.push(Span::text("; "));
                spans.push(Span::Figure(replay_error_figure(t, TYPICAL_REPLAY_ERROR)));
                spans.push(Span::text(
                    " with typical delays, the error of the graph's structure alone",
                ));
            }
            spans.push(Span::text(")."));
            if let Some(ranks) = &r.ranks {
                spans.extend(ranks_sentence(ranks));
            }
            if let Some(why) = &r.alone {
                spans.extend(alone_sentence(why));
            }
        }
        CauseReplay::CannotReplay { reason } => {
            spans.push(Span::text("; cannot replay the capture: "));
            spans.extend(cannot_replay_spans(reason));
            spans.push(Span::text("."));
        }
        CauseReplay::NoScenario { .. } | CauseReplay::NotComputed => {
            spans.push(Span::text("."));
        }
    }
}

/// How a rank directory's ranks were replayed together: which, what was matched and
/// what was not, with the reasons.
fn ranks_sentence(ranks: &investigation::RanksReplayed) -> Vec<Span> {
    let mut spans = vec![Span::text(format!(
        " Ranks {} were replayed together, the scenario on every rank (collectives matched \
         across ranks: ",
        ranks.ranks.join(", ")
    ))];
    if ranks.matched.is_empty() {
        spans.push(Span::text("none"));
    }
    for (i, (kind, n)) in ranks.matched.iter().enumerate() {
        if i > 0 {
            spans.push(Span::text(", "));
        }
        spans.push(Span::Figure(measured::count(*n)));
        spans.push(Span::text(format!(" {} per rank", kind.label())));
    }
    let mut text = String::new();
    for reason in &ranks.not_matched {
        text += &format!("; not matched: {reason}");
    }
    spans.push(Span::text(text + ")."));
    spans
}

/// Why a rank directory's drawn rank was replayed alone, not with the other ranks.
fn alone_sentence(why: &investigation::ReplayedAlone) -> Vec<Span> {
    use investigation::ReplayedAlone as A;
    let mut spans = vec![Span::text(
        " This rank was replayed alone, not with the other ranks: ",
    )];
    match why {
        A::TooManyRanks { ranks, most } => {
            spans.push(Span::text("the directory holds "));
            spans.push(Span::Figure(measured::count(*ranks)));
            spans.push(Span::text(" ranks, more than the "));
            spans.push(Span::Figure(Figure::count(
                u64::try_from(*most).unwrap_or(u64::MAX),
                Provenance::read("the investigation's limit (`MAX_JOINT_RANKS`)"),
            )));
            spans.push(Span::text(" replayed together"));
        }
        A::NotReloaded { rank, error } => spans.push(Span::text(format!(
            "rank {rank} could not be loaded again ({error})"
        ))),
        A::NotReplayable { rank, reason } => {
            spans.push(Span::text(format!("rank {rank} cannot be replayed (")));
            spans.extend(cannot_replay_spans(reason));
            spans.push(Span::text(")"));
        }
    }
    spans.push(Span::text(
        "; its collectives keep their measured waits for their peers, so a rank made \
         faster is not shown waiting for slower ones.",
    ));
    spans
}

/// Why a capture cannot be replayed, its counts as measured figures.
pub(crate) fn cannot_replay_spans(reason: &investigation::CannotReplay) -> Vec<Span> {
    match reason {
        investigation::CannotReplay::Unlinked { linked, activities } => vec![
            Span::text("only "),
            Span::Figure(measured::count(*linked)),
            Span::text(" of "),
            Span::Figure(measured::count(*activities)),
            Span::text(
                " GPU activities are linked to a launch call (no correlation ids): the \
                 host-to-GPU edges are missing",
            ),
        ],
        other => vec![Span::text(other.to_string())],
    }
}

/// A cause's replayed step, or why there is none.
fn replayed_cell(r: &CauseReplay) -> Cell {
    match r {
        CauseReplay::Replayed(r) => Cell::figure(Figure::duration(
            r.step_after,
            Provenance::inferred(format!(
                "mean steady-state step replayed with `{}` ({} events changed); {}",
                r.scenario,
                r.events_changed,
                investigation::REPLAY_ASSUMPTIONS
            )),
        )),
        CauseReplay::CannotReplay { reason } => {
            let mut spans = vec![Span::text("cannot replay: ")];
            spans.extend(cannot_replay_spans(reason));
            Cell::Spans(spans)
        }
        CauseReplay::NoScenario { .. } => Cell::text("no scenario"),
        CauseReplay::NotComputed => Cell::text("not computed"),
    }
}

/// A knob, in words, a share it names a measured figure.
fn knob_spans(k: &Knob) -> Vec<Span> {
    match k {
        Knob::GraphsWiden { share, evidence } => vec![
            Span::text("graphs already replay "),
            Span::Figure(measured::share(*share)),
            Span::text(format!(
                " of GPU time ({evidence}): capture the work still launched one by one into them (the ops outside the graphs), or larger graphs"
            )),
        ],
        other => vec![Span::text(knob_text(other))],
    }
}

/// The knobs of a cause, `; ` between them: spans where one names a figure, else text.
fn knobs_cell(knobs: &[Knob]) -> Cell {
    let mut spans = Vec::new();
    for (i, k) in knobs.iter().enumerate() {
        if i > 0 {
            spans.push(Span::text("; "));
        }
        spans.extend(knob_spans(k));
    }
    if spans.iter().any(|s| matches!(s, Span::Figure(_))) {
        Cell::Spans(spans)
    } else {
        Cell::text(spans.iter().map(Span::plain).collect::<String>())
    }
}

/// A knob, in words.
fn knob_text(k: &Knob) -> String {
    match k {
        Knob::JaxDispatch => "fewer, larger dispatches (jit the whole step; lax.scan over layers), command buffers (XLA CUDA graphs), no host round trips inside the step (block_until_ready, device_get, Python-side logging), donate_argnums for the step's state".to_owned(),
        Knob::GraphsWiden { .. } => knob_spans(k).iter().map(Span::plain).collect(),
        Knob::GraphsOnCompile => "CUDA graphs: mode=\"reduce-overhead\" on the torch.compile already in use, or capture the step".to_owned(),
        Knob::Graphs => "CUDA graphs (torch.compile mode=\"reduce-overhead\", or capture the step)".to_owned(),
        Knob::GraphBreaks => "torch.compile is already in use: look for graph breaks (TORCH_LOGS=graph_breaks) that leave eager kernels and host work between compiled regions".to_owned(),
        Knob::FewerKernels => "fewer and larger kernels (fusion, torch.compile)".to_owned(),
        Knob::HostWorkOffStep => "moving host work (data loading, logging, .item() syncs) off the step, pinned memory with non_blocking copies".to_owned(),
        Knob::WithoutPythonTracer => "first confirm with a capture without with_stack: the Python tracer inflates host time".to_owned(),
        Knob::AwaitedStream => "look at what the awaited stream runs at that time (the swimlanes): overlap it with compute, split it, or remove the cross-stream wait; for collectives, check for a straggler rank".to_owned(),
        Knob::JaxNoRoundTrips => "no host round trips inside the step (block_until_ready, device_get, printing device values); keep values on the device".to_owned(),
        Knob::NoSyncs => "remove synchronisations inside the step (.item(), .cpu(), printing tensors, blocking copies): pinned memory with non_blocking copies, keep values on the GPU, move checks after the step".to_owned(),
        Knob::OverlapCollectives => "overlap collectives with compute (FSDP/DDP prefetch and bucket sizes, a second micro-batch in flight), fewer or larger collectives; collective time includes waiting for peers, so look at the last rank to finish first".to_owned(),
        Knob::OverlapCopies => "pinned host memory with non_blocking copies, prefetching inputs on a side stream, keeping tensors on the GPU".to_owned(),
        Knob::JaxLayouts => "choose layouts the convolution kernels take natively (NHWC / channels-last dimension_numbers in lax.conv_general_dilated), so XLA inserts no transposes around them".to_owned(),
        Knob::ChannelsLast => "channels-last memory format (model.to(memory_format=torch.channels_last) and the inputs), so cuDNN/MIOpen convolutions skip their NCHW/NHWC conversions".to_owned(),
        Knob::JaxFusion => "fusion: check the XLA fusion decisions of the top elementwise ops; fewer dtype converts; larger fused regions".to_owned(),
        Knob::CompiledFusion => "already compiled: the remaining ones are outside compiled regions (graph breaks) or Inductor's own; fused norm/activation/residual kernels, fewer dtype casts".to_owned(),
        Knob::Fusion => "fusion: torch.compile, fused norm/activation/residual kernels; fewer dtype casts".to_owned(),
        Knob::FusedAttention => "torch.nn.functional.scaled_dot_product_attention (FlashAttention or memory-efficient backend), or another fused attention kernel: it replaces the softmax and both batched matmuls; the estimate assumes the fused kernel's own time is small beside them".to_owned(),
        Knob::TfDispatch => "fewer, larger dispatches: the whole step in one tf.function with jit_compile=True (XLA), steps_per_execution in Keras, no Python between ops of the step".to_owned(),
        Knob::TfNoRoundTrips => "no host round trips inside the step (.numpy(), tensor printing, Python conditions on tensor values, tf.debugging checks); keep values on the device".to_owned(),
        Knob::TfLayouts => "layouts the convolution kernels take natively (data_format='channels_last' / NHWC on GPU, mixed precision), so no transposes run around them; the layout optimizer of grappler or XLA decides the rest".to_owned(),
        Knob::TfFusion => "fusion: XLA (tf.function(jit_compile=True)) fuses elementwise ops into their producers; fewer dtype casts".to_owned(),
        Knob::TrtLayouts => "build the engine with the I/O formats and precision its kernels take natively (NHWC/HWC8 formats, FP16/INT8), so TensorRT inserts no reformatting layers; check them with trtexec --dumpLayerInfo".to_owned(),
        Knob::TrtFusion => "check the engine's layer fusion (trtexec --dumpLayerInfo --profilingVerbosity=detailed): unfused elementwise layers often come from unsupported patterns or mixed precisions; a plugin or an ONNX rewrite can fuse them".to_owned(),
        Knob::FewerHostWaits => "synchronise once per step or batch, not between kernels; read results back asynchronously".to_owned(),
        Knob::EngineFusion => "fewer, fused kernels: the framework's fused variants of these ops (fused norm/activation/residual kernels)".to_owned(),
        Knob::MoeGemm => "mixture-of-experts GEMMs: use the engine's MoE kernel configuration tuned for this GPU and batch size (vLLM/SGLang fused_moe tuning configs, the backend: Triton, CUTLASS/TensorRT-LLM, CK/aiter), more tokens per expert per launch (larger batches), and expert parallelism where the experts do not fit one GPU's bandwidth; a dense-GEMM knob (a larger tile, cuBLAS settings) does not apply".to_owned(),
        Knob::Host { text, .. } | Knob::Compute { text, .. } => text.clone(),
    }
}

/// A cause, in words, with its evidence; for a cause whose evidence is timed, the words
/// before the evidence ([`what_spans`] adds it).
fn what_text(w: &What) -> String {
    match w {
        What::HostNotLaunched { evidence } => format!(
            "the GPU waits for the host to issue work (host did not launch yet, on the critical stream; evidence: {})",
            evidence.join("; ")
        ),
        What::HostCause { label, .. } => format!(
            "the GPU waits for the host: {label} (on the critical stream; evidence: "
        ),
        What::StreamOrEvent { evidence } => format!(
            "work was issued but waited on another stream or event (on the critical stream; evidence: {})",
            evidence.join("; ")
        ),
        What::SyncCall { evidence } => format!(
            "the host is blocked in a synchronising call, waiting for the GPU, while the critical stream idles (evidence: {})",
            evidence.join("; ")
        ),
        What::ExposedCollective { gpu } => {
            format!("communication no compute overlaps on GPU {gpu} (exposed collective time)")
        }
        What::ExposedMemcpy { gpu } => {
            format!("copies no compute overlaps on GPU {gpu} (exposed memcpy time)")
        }
        What::Layout => "layout transposes on the critical stream (NCHW/NHWC conversions, batched transposes, transpose fusions, im2col: data movement for a convolution or GEMM)".into(),
        What::Elementwise => {
            "elementwise/norm/activation kernels on the critical stream (memory-bound)".into()
        }
        What::EagerAttention { evidence, .. } => {
            format!("eager attention on the critical stream ({evidence}; ")
        }
        What::Compute { class, .. } => format!(
            "{class} kernels on the critical stream: the class the compute-bound verdict names (top: "
        ),
        What::MoeGemm { .. } => {
            "mixture-of-experts GEMMs on the critical stream (grouped/fused expert GEMMs; top: "
                .into()
        }
    }
}

/// A cause in words, with the GPU or host time of each piece of its evidence as a
/// measured figure (a host cause's host events, a mixture-of-experts cause's top GEMMs).
fn what_spans(w: &What) -> Vec<Span> {
    let timed = match w {
        What::HostCause { evidence, .. }
        | What::MoeGemm { evidence }
        | What::Compute { evidence, .. } => evidence,
        What::EagerAttention { share, .. } => {
            return vec![
                Span::text(what_text(w)),
                Span::Figure(measured::share(*share)),
                Span::text(" of all GPU time)"),
            ];
        }
        _ => return vec![Span::text(what_text(w))],
    };
    let mut spans = vec![Span::text(what_text(w))];
    for (i, (name, time)) in timed.iter().enumerate() {
        let sep = if i == 0 { "" } else { "; " };
        spans.push(Span::text(format!("{sep}{name} ")));
        spans.push(Span::Figure(Figure::duration(*time, Provenance::Measured)));
    }
    spans.push(Span::text(")"));
    spans
}

/// Step 6: causes on the critical stream, ranked by their share of its window.
pub(super) fn change_section(change: &Advice, findings: &mut Vec<Finding>) -> Section {
    let mut s = Section::new("change", "6. What to change, ranked");
    let ranked = match change {
        Advice::NoWindow => {
            s.para("No analysed window: nothing to rank.");
            return s;
        }
        Advice::WarmUp => {
            s.para("The capture is warm-up only (see the verdict): nothing in it is steady state, so no cause is ranked. Capture again after warm-up.");
            return s;
        }
        Advice::CannotTell { reason } => {
            s.para(format!(
                "Cannot tell what bounds the step ({}), so no cause is ranked and nothing is estimated. A capture that would decide it: {}.",
                reason.describe(),
                reason.decide_with()
            ));
            return s;
        }
        Advice::Ranked(r) => r,
    };
    if !ranked.in_use.is_empty() {
        let mut spans = vec![Span::text("Already in use: ")];
        for (i, u) in ranked.in_use.iter().enumerate() {
            if i > 0 {
                spans.push(Span::text("; "));
            }
            spans.extend(in_use_spans(u));
        }
        spans.push(Span::text("."));
        findings.push(Finding::new(spans));
    }
    let per_step_formula = investigation::PER_STEP_FORMULA;
    let window_assumption = investigation::WINDOW_ASSUMPTION;
    let mut t = Table::new(
        "what_to_change",
        &[
            "rank",
            "cause",
            "share of window",
            "time per step",
            "step time if it went away (subtraction)",
            "step time if it went away (replayed)",
            "replayed change",
            "replay error (unchanged capture)",
            "critical path after (replayed)",
            "knobs to try (hypotheses)",
            "key",
        ],
    );
    for (i, c) in ranked.causes.iter().enumerate() {
        t.push(vec![
            Cell::text((i + 1).to_string()),
            Cell::Spans(what_spans(&c.what)),
            Cell::figure(Figure::percent(100.0 * c.share, Provenance::Measured)),
            Cell::figure(Figure::duration(
                c.per_step,
                Provenance::inferred(per_step_formula),
            )),
            // The class a compute-bound verdict names is not removed by any knob: its
            // kernels run faster, which no subtraction estimates.
            if let What::Compute { .. } = c.what {
                Cell::text("no estimate: the class that bounds the step")
            } else {
                Cell::figure(Figure::duration(
                    c.step_after,
                    Provenance::inferred(format!(
                        "the window's mean steady-state step minus the cause's time per step; {window_assumption}"
                    )),
                ))
            },
            replayed_cell(&c.replay),
            match &c.replay {
                CauseReplay::Replayed(r) => Cell::figure(Figure::percent(
                    100.0 * r.change,
                    Provenance::inferred(format!(
                        "the replayed step without the cause against the unchanged replay's ({} per step; measured {}); {}",
                        r.replayed_step.human(),
                        r.measured_step.human(),
                        investigation::REPLAY_ASSUMPTIONS
                    )),
                )),
                _ => Cell::text(""),
            },
            match &c.replay {
                CauseReplay::Replayed(r) => replay_error_cell(r),
                _ => Cell::text(""),
            },
            Cell::text(match &c.replay {
                CauseReplay::Replayed(r) => r
                    .critical_lane_after
                    .as_ref()
                    .map_or_else(String::new, ToString::to_string),
                _ => String::new(),
            }),
            knobs_cell(&c.knobs),
            Cell::code(c.key.clone()),
        ]);
    }
    if let Some(c) = ranked.causes.first() {
        findings.push(first_thing(ranked, c));
    }
    s.push(Block::Table(t.with_note(format!(
        "Causes overlap (host wait and exposed communication can be the same instant on different streams), so the rows are alternatives, not a sum. The step-time estimates are inferred: by subtraction ({per_step_formula}; {window_assumption}), and replayed (the cause's what-if scenario replayed on the capture's dependency graph over the steady-state steps, each step from its start to the last end of its work, so the replayed step can differ from the window's mean step; the replayed change is against the unchanged replay: {replay_assumptions}; the replay error is the unchanged replay's median absolute step error against the measurement, and in brackets the same with every GPU edge at the capture's typical delay (the error of the graph's structure alone, which a change that moves work off its measured delays is exposed to); a blank replayed cell says why there is none); the knobs are hypotheses to test with a new capture. Key: the cause's stable name, by which compare matches it in a later capture (or in this report.json).",
        replay_assumptions = investigation::REPLAY_ASSUMPTIONS,
    ))));
    s
}

/// The finding "First thing to change": the first ranked cause with its share and time,
/// and what goes away without it: for the class a compute-bound verdict names, nothing a
/// subtraction can estimate (its kernels run faster; a new capture measures it); for
/// another cause, the step by subtraction and by the replay of its scenario.
fn first_thing(ranked: &investigation::Ranked, c: &investigation::RankedCause) -> Finding {
    let per_step_formula = investigation::PER_STEP_FORMULA;
    let window_assumption = investigation::WINDOW_ASSUMPTION;
    let mut spans = vec![Span::text("First thing to change: ")];
    spans.extend(what_spans(&c.what));
    spans.extend([
        Span::text(", "),
        Span::Figure(Figure::percent(100.0 * c.share, Provenance::Measured)),
        Span::text(" of the window ("),
        Span::Figure(Figure::duration(c.time, Provenance::Measured)),
    ]);
    if let What::Compute { .. } = &c.what {
        spans.extend([
            Span::text(" over "),
            Span::Figure(measured::count(ranked.steps)),
            Span::text(
                " steady-state step(s)): the step shortens only as these kernels run faster, by what the knob saves of their ",
            ),
            Span::Figure(Figure::duration(
                c.per_step,
                Provenance::inferred(per_step_formula.to_owned()),
            )),
            Span::text(" per step; a new capture measures it."),
        ]);
        return Finding::new(spans);
    }
    spans.extend([
        Span::text(" over "),
        Span::Figure(measured::count(ranked.steps)),
        Span::text(
            " steady-state step(s)); without it the mean step of the window would take about ",
        ),
        Span::Figure(Figure::duration(
            c.step_after,
            Provenance::inferred(format!("{per_step_formula}; {window_assumption}")),
        )),
        Span::text(" instead of "),
        Span::Figure(Figure::duration(ranked.mean_step, Provenance::Measured)),
        Span::text(" by subtraction"),
    ]);
    replay_sentence(&c.replay, &mut spans);
    Finding::new(spans)
}

/// Step 7: one trust item as the list shows it: its words prefixed by who gave it (a
/// failed check's with the check's detail), its code, count and share as the item holds
/// them.
pub(super) fn trust_entry(inv: &Investigation, note: &TrustNote) -> TrustEntry {
    let item = &note.item;
    let from = match note.from {
        TrustSource::Attribution => Some("attribute-kernels".to_owned()),
        TrustSource::Roofline => Some("roofline".to_owned()),
        TrustSource::Check | TrustSource::Capture | TrustSource::Input => {
            note.who.as_ref().map(super::who_text)
        }
    };
    let detail = note
        .check
        .and_then(|i| inv.reconciliation.get(i))
        .map(|c| super::check_detail(&c.kind));
    let said = match note.listed {
        Some(Listed::NotRead) => format!("not read, so not in this report: {}", item.message),
        Some(Listed::ActivitiesWithoutLaunch) => format!(
            "{} (listed because some activities have no launch: the missing ends may be theirs)",
            item.message
        ),
        None => item.message.clone(),
    };
    let message = match (from, detail) {
        (Some(from), Some(detail)) => format!("{from}: {said}: {detail}"),
        (Some(from), None) => format!("{from}: {said}"),
        (None, Some(detail)) => format!("{said}: {detail}"),
        (None, None) => said,
    };
    TrustEntry::of_item(TrustItem {
        message,
        ..item.clone()
    })
}

/// What a new capture would answer, in words.
pub(super) fn ask_text(ask: &investigation::Ask) -> String {
    use investigation::Ask;
    match ask {
        Ask::Attribution { text } => text.clone(),
        Ask::RecordShapes => {
            "FLOPs and bytes of the ops without shapes: capture with `record_shapes=True`."
                .to_owned()
        }
        Ask::SteadyState => "A steady-state capture: every step of this one is warm-up (module loading, compilation, autotuning, first calls). Profile after a few steps (torch.profiler schedule(wait=1, warmup=2, active=3); in JAX, after the first call of each jitted function).".to_owned(),
        Ask::GraphsOff { who } => format!("{}: which op each graph kernel belongs to: capture once with CUDA graphs off (or per-node graph tracing).", super::who_text(who)),
        Ask::StepMarkers { who, jax: true } => format!(
            "{}: per-step numbers: wrap each step in `jax.profiler.StepTraceAnnotation(\"train\", step_num=i)` so steps can be compared.",
            super::who_text(who)
        ),
        Ask::StepMarkers { who, jax: false } => format!(
            "{}: per-step numbers: profile with a schedule and call `prof.step()` (ProfilerStep#N markers), so steps can be compared.",
            super::who_text(who)
        ),
        Ask::AllRanks => {
            "Whether a straggler makes the collectives wait: capture every rank of the same steps."
                .to_owned()
        }
        Ask::Unread { files } => format!(
            "The {files} file(s) that could not be read (listed in the trust list): capture them again, or investigate the others alone knowing the ranks are incomplete."
        ),
    }
}
