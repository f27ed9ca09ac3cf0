//! Steps 1 to 5 and 7 of the investigation, each decided into its part of the value:
//! the per-capture results, the first capture's findings, the reconciliation checks (an
//! XSpace against its sibling `trace.json.gz`), the swimlane data, ops and attribution,
//! the roofline, the trust list and what a new capture would answer.

use std::path::{Path, PathBuf};

use analysis::{CaptureAnalysis, GpuSummary, InputAnalysis, Loaded};
use trace_model::{Capture, HostKind, Nanos, TrustItem};

use crate::model::*;
use crate::{CaptureFacts, Options, who};

/// The spread of step durations: the analysed GPU's own steps where the capture keeps
/// steps per GPU (TensorFlow's `Steps` lines), else the capture's steps.
fn step_spread(r: &CaptureAnalysis) -> Option<analysis::Spread> {
    match &r.device_steps {
        Some(d) => analysis::Spread::of(d.steps.iter().map(|m| m.range.span())),
        None => r.steps.duration_spread(),
    }
}

/// What found the steps; with the GPU whose own steps are the figures, and every GPU's
/// steps, where the capture keeps steps per GPU.
fn steps_origin(r: &CaptureAnalysis) -> StepsOrigin {
    StepsOrigin {
        origin: r.steps.origin.clone(),
        per_gpu: r.device_steps.as_ref().map(|d| PerGpuSteps {
            figures: d.ordinal,
            gpus: d
                .per_gpu
                .iter()
                .map(|&(gpu, steps, s)| GpuSteps {
                    gpu,
                    steps,
                    median: s.median,
                })
                .collect(),
        }),
    }
}

/// One capture's row of the per-capture tables.
pub(crate) fn capture_result(
    r: &CaptureAnalysis,
    f: &CaptureFacts,
    sm: &GpuSummary,
) -> CaptureResult {
    let v = &r.verdict;
    let steady = r.steady_step_durations();
    let window_mean_step = match (r.window, steady.len()) {
        (Some(w), n) if n > 0 => Some(Nanos(w.span().0 / n as i64)),
        _ => None,
    };
    let budgets = r
        .streams
        .iter()
        .map(|st| (st.device, Some(st.stream), &st.budget))
        .chain(r.devices.iter().map(|d| (d.device, None, &d.budget)))
        .map(|(device, stream, b)| BudgetRow {
            device,
            stream,
            span: b.span(),
            compute: b.compute,
            collective: b.collective,
            memcpy: b.memcpy,
            memset: b.memset,
            idle: b.idle,
            idle_share: b.share(b.idle),
        })
        .collect();
    CaptureResult {
        who: who(r),
        file_who: f.who.clone(),
        rank: r.rank,
        verdict: VerdictRow {
            bound: v.bound,
            diagnosis: r.diagnosis,
            critical: r.critical_stream().map(|c| (c.device, c.stream)),
            busy: v.busy_share,
            collective: v.collective_share,
            idle: v.idle_share,
            host_wait: v.host_wait_share,
            stream_wait: v.stream_wait_share,
            sync_wait: v.sync_wait_share,
            unknown_wait: v.unknown_wait_share,
            queue_ratio: v.queue_ratio,
        },
        step_spread: step_spread(r),
        steps_origin: steps_origin(r),
        steady_steps: steady,
        window_mean_step,
        gpu_models: f.gpus[0].clone(),
        gpu_vendors: f.gpus[1].clone(),
        devices_with_activity: r.devices.len(),
        budgets,
        buckets: sm
            .buckets
            .iter()
            .map(|b| Bucket {
                bucket: b.bucket.to_owned(),
                time: b.time_ns,
                percent: b.percent,
                activities: b.activities,
            })
            .collect(),
        top_ops: sm
            .ops
            .iter()
            .take(20)
            .map(|o| LaunchingOp {
                name: o.name.clone(),
                is_cpu_op: o.is_cpu_op,
                bucket: o.bucket.to_owned(),
                mixed: o.mixed,
                time: o.time_ns,
                percent: o.percent,
                activities: o.activities,
                layout: o.layout_ns,
            })
            .collect(),
    }
}

/// Step 1's findings of the first capture.
pub(crate) fn first_capture(a: &InputAnalysis) -> FirstCapture {
    let Some(first) = a.reports.first() else {
        return FirstCapture::default();
    };
    // The largest cause of the idle time, with the evidence that decided it.
    let top_gap = first
        .gap_causes
        .as_ref()
        .filter(|g| g.total().0 > 0)
        .map(|gc| {
            let cause = [
                analysis::GapCause::HostNotLaunched,
                analysis::GapCause::StreamOrEvent,
                analysis::GapCause::SyncCall,
                analysis::GapCause::Unknown,
            ]
            .into_iter()
            .max_by_key(|&c| (gc.time(c), std::cmp::Reverse(c)))
            .expect("four causes");
            TopGap {
                cause,
                share: gc.share(cause),
                evidence: gc.evidence_of(cause).next().map(|e| e.what.clone()),
            }
        });
    // Which evidence found the iterations, and what each forward is when it says so.
    let mut kinds: Vec<String> = first
        .steps
        .forward_kinds
        .iter()
        .filter(|k| !k.is_empty())
        .cloned()
        .collect();
    kinds.dedup();
    let w = &first.warm_up;
    let warm_up = (!w.steps.is_empty() || w.event_count > 0).then(|| WarmUp {
        steps: w.steps.len(),
        step_time: w.step_time,
        event_count: w.event_count,
        longest: w
            .events
            .iter()
            .take(3)
            .map(|e| (e.name.clone(), e.dur))
            .collect(),
        all: w.all,
    });
    // Host-only time of the steps: the GPU has nothing of the step yet, or any more.
    let host_only = first
        .host_only
        .as_ref()
        .filter(|h| (h.before_gpu + h.after_gpu).0 > 0)
        .map(|h| HostOnly {
            share: h.share(),
            before_gpu: h.before_gpu,
            after_gpu: h.after_gpu,
            steps: h.steps,
            top: h
                .top
                .iter()
                .take(3)
                .map(|t| (t.name.clone(), t.overlapped))
                .collect(),
        });
    FirstCapture {
        top_gap,
        steps: first
            .device_steps
            .as_ref()
            .map_or(first.steps.steps.len(), |d| d.steps.len()),
        steps_origin: steps_origin(first),
        forward_kinds: kinds,
        forward_spreads: first
            .steps
            .forward_spreads()
            .into_iter()
            .map(|(kind, count, spread)| (kind.to_string(), count, spread))
            .collect(),
        warm_up,
        host_only,
        diagnosis: Some(Diagnosed {
            diagnosis: first.diagnosis,
            framework: first.framework.framework.code().to_owned(),
            framework_evidence: first.framework.evidence.clone(),
            step_evidence: first
                .steps
                .considered
                .iter()
                .filter(|c| {
                    !matches!(
                        c.outcome,
                        analysis::CandidateOutcome::NotTried | analysis::CandidateOutcome::Absent
                    )
                })
                .cloned()
                .collect(),
        }),
        step_sides: first.step_sides.map(|s| StepSidesView {
            period: s.period,
            host: s.host,
            gpu: s.gpu,
            lag: s.lag,
            timed_by_gpu: s.basis == analysis::StepBasis::GpuSpan,
        }),
    }
}

/// Step 2: the checks, in order; a failed one goes to the trust list.
pub(crate) fn reconciliation(
    a: &InputAnalysis,
    facts: &[CaptureFacts],
    single: Option<&Loaded>,
    trust: &mut Vec<TrustNote>,
) -> Vec<Check> {
    let mut t = Vec::new();
    let mut add = |t: &mut Vec<Check>, who: &Who, kind: CheckKind, holds: bool| {
        if !holds {
            trust.push(TrustNote {
                check: Some(t.len()),
                ..TrustNote::new(TrustSource::Check, Some(who.clone()), kind.trust_item())
            });
        }
        t.push(Check {
            who: who.clone(),
            kind,
            holds,
        });
    };
    for (r, f) in a.reports.iter().zip(facts) {
        let who = who(r);
        let la = &r.launch_all;
        add(
            &mut t,
            &who,
            CheckKind::Launch {
                without: la.without_launch,
                activities: la.activities,
            },
            la.without_launch == 0,
        );
        let per_step: Vec<usize> = r
            .per_step
            .iter()
            .filter_map(|s| s.skip.as_ref().map(|m| m.kernels))
            .collect();
        if per_step.len() > 1 {
            let (lo, hi) = (
                per_step.iter().min().copied().unwrap_or(0),
                per_step.iter().max().copied().unwrap_or(0),
            );
            add(
                &mut t,
                &who,
                CheckKind::KernelsPerStep {
                    steps: per_step.len(),
                    fewest: lo,
                    most: hi,
                },
                lo == hi,
            );
        }
        let failed = r.streams.iter().filter(|s| !s.budget.check.holds()).count();
        add(
            &mut t,
            &who,
            CheckKind::Budget {
                streams: r.streams.len(),
                failed,
            },
            failed == 0,
        );
        let devices = &f.device_kernels;
        if devices.len() > 1 {
            let same = devices.windows(2).all(|w| w[0].1 == w[1].1);
            add(
                &mut t,
                &who,
                CheckKind::Devices {
                    kernels: devices.clone(),
                },
                same,
            );
        }
    }
    // An XSpace next to its converted trace.json.gz (a JAX capture directory): the same
    // GPU activities per device in both.
    if let Some(l) = single
        && l.capture.format() == trace_model::Format::XPlane
        && let Some(json) = sibling_trace_json(&l.path)
    {
        let who = who(&a.reports[0]);
        let x = device_kernel_counts(&l.capture);
        let j = load::load_single(&json)
            .map(|other| device_kernel_counts(&other.capture))
            .map_err(|e| e.to_string());
        let holds = j.as_ref().is_ok_and(|j| *j == x);
        add(
            &mut t,
            &who,
            CheckKind::XplaneVsJson {
                xplane: x,
                json: json.display().to_string(),
                json_kernels: j,
            },
            holds,
        );
    }
    if a.reports.len() > 1 {
        let counts: Vec<(Who, usize)> = a
            .reports
            .iter()
            .map(|r| (who(r), r.launch_kernels.activities))
            .collect();
        let same = counts.windows(2).all(|w| w[0].1 == w[1].1);
        add(
            &mut t,
            &Who::AllRanks,
            CheckKind::Ranks { kernels: counts },
            same,
        );
    }
    t
}

/// The `*.trace.json.gz` beside an XSpace (XProf writes both into a capture directory).
fn sibling_trace_json(xplane: &Path) -> Option<PathBuf> {
    let listing =
        load::files::list_files(xplane.parent()?, |name| name.ends_with(".trace.json.gz")).ok()?;
    let [json] = <[PathBuf; 1]>::try_from(listing.files).ok()?;
    Some(json)
}

pub(crate) fn device_kernel_counts(c: &Capture) -> Vec<(i64, usize)> {
    let mut out: Vec<(i64, usize)> = c.devices().iter().map(|d| (d.ordinal, 0)).collect();
    for act in c.activities() {
        let ord = c.device(c.stream(act.stream).device).ordinal;
        if let Some(e) = out.iter_mut().find(|e| e.0 == ord) {
            e.1 += 1;
        }
    }
    out.retain(|e| e.1 > 0);
    out
}

/// Step 3: the median step (or the chosen one) of the drawn captures.
pub(crate) fn swimlanes(
    a: &InputAnalysis,
    drawn: &[(&CaptureAnalysis, &Loaded)],
    options: &Options,
) -> Swimlanes {
    let first = drawn[0].0;
    let chosen = match options.step {
        Some(n) => first.steps.steps.iter().position(|st| st.number == n),
        None => first.steps.median_step(),
    };
    let Some(chosen) = chosen else {
        return Swimlanes::NoStep;
    };
    let number = first.steps.steps[chosen].number;
    let aligned = drawn
        .iter()
        .all(|(_, l)| l.capture.meta().base_time_ns.is_some());
    let base = |l: &Loaded| {
        if aligned {
            l.capture.meta().base_time_ns.unwrap_or(0)
        } else {
            0
        }
    };
    let mut lanes = Vec::new();
    let (mut start, mut end) = (i64::MAX, i64::MIN);
    let last_rank = a.last_finisher.as_ref().map(|lf| lf.rank);
    for &(r, l) in drawn {
        let Some(m) = r.per_step.iter().find(|m| m.number == number) else {
            continue;
        };
        let window = m.gpu_range.unwrap_or(m.range);
        let host_window = m.range;
        let off = base(l);
        start = start.min(off + window.start.0.min(host_window.start.0));
        end = end.max(off + window.end.0.max(host_window.end.0));
        let c = &l.capture;
        let multi = a.reports.len() > 1;
        let rank = multi.then(|| who(r));
        let mut last_stream: Option<(usize, i64)> = None;
        for st in c.streams() {
            let acts = c.stream_activities(st.id);
            let slices: Vec<Slice> = acts
                .iter()
                .filter(|x| x.end() > window.start && x.start < window.end)
                .map(|x| Slice {
                    start: off + x.start.0,
                    end: off + x.end().0,
                    class: x.class.word().to_owned(),
                    name: c.name(x.name).to_owned(),
                    dur: x.dur,
                    op: c.launching_op(x).map(|o| c.name(o.name).to_owned()),
                })
                .collect();
            if slices.is_empty() {
                continue;
            }
            let stream_end = slices.iter().map(|x| x.end).max().unwrap_or(0);
            if last_stream.is_none_or(|(_, e)| stream_end > e) {
                last_stream = Some((lanes.len(), stream_end));
            }
            let critical = r.critical_stream().is_some_and(|cs| cs.stream_id == st.id);
            lanes.push(Lane {
                rank: rank.clone(),
                kind: LaneKind::Gpu {
                    gpu: c.device(st.device).ordinal,
                    stream: st.ordinal,
                },
                critical,
                last_to_finish: false,
                slices,
            });
        }
        if multi
            && last_rank == Some(r.rank)
            && let Some((idx, _)) = last_stream
        {
            lanes[idx].last_to_finish = true;
        }
        for th in analysis::launching_threads(c) {
            let slices: Vec<Slice> = c
                .thread_events(th)
                .iter()
                .filter(|e| matches!(e.kind, HostKind::Launch | HostKind::Runtime))
                .filter(|e| {
                    e.end() > host_window.start && e.start < host_window.end.max(window.end)
                })
                .map(|e| Slice {
                    start: off + e.start.0,
                    end: off + e.end().0,
                    class: "host".to_owned(),
                    name: c.name(e.name).to_owned(),
                    dur: e.dur,
                    op: None,
                })
                .collect();
            lanes.push(Lane {
                rank: rank.clone(),
                kind: LaneKind::Host {
                    thread: c.thread(th).tid,
                },
                critical: false,
                last_to_finish: false,
                slices,
            });
        }
    }
    if lanes.is_empty() || start >= end {
        return Swimlanes::NoActivity { number };
    }
    let mut straggler = None;
    if let Some(lf) = &a.last_finisher
        && let Some(&(r, l)) = drawn.iter().find(|(r, _)| r.rank == lf.rank)
        && let Some(m) = r.per_step.iter().find(|m| m.number == lf.step)
        && let Some(w) = m.gpu_range
    {
        // What the last rank ran last in that step: a collective means it waited for (or
        // with) its peers at the end; compute means it had more work than the others.
        let c = &l.capture;
        let last = c
            .activities()
            .iter()
            .filter(|x| x.start < w.end && x.end() > w.start)
            .max_by_key(|x| x.end());
        straggler = last.map(|x| LastActivity {
            who: who(r),
            step: lf.step,
            behind_earliest: lf.behind_earliest,
            name: c.name(x.name).to_owned(),
            class: x.class.word().to_owned(),
            dur: x.dur,
            collective: x.class.is_collective(),
        });
    }
    Swimlanes::Drawn {
        number,
        chart: Chart { start, end, lanes },
        straggler,
    }
}

/// An op's layout transposes are large when they take at least this share of all GPU time.
pub const LARGE_LAYOUT_SHARE: f64 = 0.10;

/// The op, when its layout transposes take at least [`LARGE_LAYOUT_SHARE`] of all GPU time.
fn layout_heavy(
    op: &str,
    layout: Nanos,
    op_time: Nanos,
    gpu: Nanos,
    jax: bool,
) -> Option<LayoutHeavy> {
    let of_all = layout.0 as f64 / gpu.0.max(1) as f64;
    if layout <= Nanos::ZERO || of_all < LARGE_LAYOUT_SHARE {
        return None;
    }
    Some(LayoutHeavy {
        op: op.to_owned(),
        layout,
        op_time,
        gpu,
        jax,
    })
}

/// Step 4 beside the per-capture tables: layout-heavy ops, the top bucket, attribution.
pub(crate) fn ops(
    summaries: &[GpuSummary],
    attribution: Option<Result<attribution::Attribution, String>>,
    trust: &mut Vec<TrustNote>,
    new_capture: &mut Vec<Ask>,
) -> Ops {
    let mut out = Ops::default();
    if let Some(sm) = summaries.first() {
        out.layout = sm
            .ops
            .iter()
            .filter_map(|o| layout_heavy(&o.name, o.layout_ns, o.time_ns, sm.gpu_time_ns, false))
            .collect();
        out.top_bucket = sm
            .buckets
            .first()
            .map(|top| (top.bucket.to_owned(), top.percent, sm.core_compute_percent));
    }
    out.attribution = match attribution {
        None => None,
        Some(Err(e)) => {
            trust.push(TrustNote::new(
                TrustSource::Attribution,
                None,
                TrustItem::note("attribution-failed", e.clone()),
            ));
            Some(Err(e))
        }
        Some(Ok(at)) => {
            let view = attribution_view(&at);
            for n in &at.notes {
                trust.push(TrustNote::new(TrustSource::Attribution, None, n.clone()));
            }
            new_capture.extend(
                at.needs_new_capture
                    .iter()
                    .map(|text| Ask::Attribution { text: text.clone() }),
            );
            Some(Ok(view))
        }
    };
    out
}

/// Attribution of one capture: kernel → op → Python line.
pub(crate) fn attribution_of(first: &Loaded) -> Option<Result<attribution::Attribution, String>> {
    if first.format() == trace_model::Format::JaxTraceJson {
        return None;
    }
    let result = attribution::attribute_loaded(first, &attribution::Config::default());
    Some(result.map_err(|e| e.to_string()))
}

fn python_line(l: &attribution::LineRow) -> PythonLine {
    PythonLine {
        source_line: l.source_line.clone(),
        function: l.function.clone(),
        kernels: l.kernels,
        gpu_time: l.gpu_time_ns,
        share_pct: l.share_pct,
    }
}

fn attribution_view(at: &attribution::Attribution) -> AttributionView {
    let lines = at.lines();
    let kineto = at.format == attribution::SourceFormat::Kineto;
    let (hlo_ops, hlo_layout) = if kineto {
        (Vec::new(), Vec::new())
    } else {
        let ops = at.ops();
        (
            ops.iter()
                .take(15)
                .map(|o| HloOp {
                    program: o.program.clone(),
                    op_name: o.op_name.clone(),
                    kernels: o.kernels,
                    gpu_time: o.gpu_time_ns,
                    layout: o.layout_ns,
                    source_line: o.source_line.clone(),
                })
                .collect(),
            ops.iter()
                .filter_map(|o| {
                    layout_heavy(
                        &o.op_name,
                        o.layout_ns,
                        o.gpu_time_ns,
                        at.gpu_time_ns(),
                        true,
                    )
                })
                .collect(),
        )
    };
    AttributionView {
        path: at.path.clone(),
        kineto,
        match_kinds: at
            .by_match_kind()
            .into_iter()
            .map(|(kind, (n, t))| (kind.as_str().to_owned(), n, Nanos(t)))
            .collect(),
        gpu_time: at.gpu_time_ns(),
        attributed_time: at.attributed_time_ns(),
        top_line: top_line(&lines),
        lines: lines.iter().take(15).map(python_line).collect(),
        hlo_ops,
        hlo_layout,
        notes: at.notes.clone(),
    }
}

/// The headline Python line: the first by GPU time outside library frames (site-packages,
/// torch, JAX, the Inductor cache), or the first of all when every line is one (then the
/// flag is true).
fn top_line(lines: &[attribution::LineRow]) -> Option<(PythonLine, bool)> {
    let user = lines
        .iter()
        .find(|l| !attribution::is_library_line(&l.source_line));
    match user {
        Some(l) => Some((python_line(l), false)),
        None => Some((
            python_line(lines.iter().find(|l| !l.source_line.is_empty())?),
            true,
        )),
    }
}

/// The roofline of one capture file (or a JAX directory with one XSpace, or the one rank
/// of a rank directory that steps 3 to 6 describe); captures of several processes are
/// left to one at a time.
pub(crate) fn roofline_of(loaded: &[Loaded]) -> Option<Result<roofline::Roofline, String>> {
    match loaded {
        [one] if one.format() != trace_model::Format::JaxTraceJson => {
            Some(roofline::analyze_loaded(one).map_err(|e| e.to_string()))
        }
        _ => None,
    }
}

impl RooflineView {
    /// What step 5 and the roofline chart show of `rl`.
    pub fn of(rl: &roofline::Roofline) -> RooflineView {
        RooflineView {
            capture: rl.capture.clone(),
            device_recorded: rl.device.recorded.clone(),
            device_model: rl.device.model.clone(),
            device_label: rl.device.label().to_owned(),
            device_source: rl.device.source.clone(),
            ops: rl
                .ops
                .iter()
                .map(|o| RoofOp {
                    name: o.name.clone(),
                    program_id: o.program_id,
                    detail: o.detail.clone(),
                    kind: o.kind.name().to_owned(),
                    dtype: o.dtype,
                    time: o.time_ns.value,
                    flops: o.flops.value,
                    bytes: o.bytes.value,
                    intensity: o.intensity.value,
                    achieved_flops_per_s: o.achieved_flops_per_s.value,
                    bound: o.bound.value.name().to_owned(),
                    peak_basis: o.peak_basis.clone(),
                    flops_share_of_peak: o.flops_share_of_peak.value,
                    bytes_share_of_peak: o.bytes_share_of_peak.value,
                    peak_flops_per_s: o.peak_flops_per_s.value,
                    peak_bytes_per_s: o.peak_bytes_per_s.value,
                })
                .collect(),
            gpu_time: rl.gpu_time_ns.value,
        }
    }
}

/// Step 5: the view, its trust items and what a new capture would answer.
pub(crate) fn roofline(
    roofline: Option<Result<roofline::Roofline, String>>,
    trust: &mut Vec<TrustNote>,
    new_capture: &mut Vec<Ask>,
) -> Option<Result<RooflineView, String>> {
    let rl = match roofline? {
        Err(e) => {
            trust.push(TrustNote::new(
                TrustSource::Roofline,
                None,
                TrustItem::note("roofline-failed", e.clone()),
            ));
            return Some(Err(e));
        }
        Ok(rl) => rl,
    };
    for item in &rl.trust {
        let share = (rl.gpu_time_ns.value.0 > 0)
            .then(|| item.time_ns.unwrap_or_default().0 as f64 / rl.gpu_time_ns.value.0 as f64);
        trust.push(TrustNote::new(
            TrustSource::Roofline,
            None,
            item.clone().with_share(share),
        ));
        if item.code == "op-without-shapes" {
            new_capture.push(Ask::RecordShapes);
        }
    }
    Some(Ok(RooflineView::of(&rl)))
}

/// Step 7: the files of the capture that could not be read: one trust item each (the
/// report is of the others), and a new capture to ask for.
pub(crate) fn unread_trust(
    unread: &[String],
    trust: &mut Vec<TrustNote>,
    new_capture: &mut Vec<Ask>,
) {
    for err in unread {
        trust.push(
            TrustNote::new(
                TrustSource::Input,
                None,
                TrustItem::new("file-not-read", err.clone(), 1),
            )
            .listed(Listed::NotRead),
        );
    }
    if !unread.is_empty() {
        new_capture.push(Ask::Unread {
            files: unread.len(),
        });
    }
}

/// Step 7: the diagnostics of every capture, graph kernels, collectives that include
/// waiting; and the captures that would answer more.
pub(crate) fn collect_trust(
    a: &InputAnalysis,
    facts: &[CaptureFacts],
    trust: &mut Vec<TrustNote>,
    new_capture: &mut Vec<Ask>,
) {
    if a.reports.iter().any(|r| r.warm_up.all) {
        new_capture.push(Ask::SteadyState);
    }
    for (r, f) in a.reports.iter().zip(facts) {
        let who = who(r);
        // The one diagnostic list of the workspace: the reader's, the step finder's and
        // the analysis' own, each counted; a share where its denominator is known.
        let activities = f.activities.max(1) as f64;
        let gpu_time = f.gpu_time;
        // One-sided flow arrows are in nearly every Kineto capture (a flow whose other end
        // fell outside the profiling window); they change a reported number only when an
        // activity has no launch, so they are listed only then.
        let without_launch = r
            .diagnostics
            .iter()
            .any(|d| d.code == "activity-without-launch" && d.count > 0);
        for d in r.diagnostics.iter() {
            if d.code == "flow-one-end" && !without_launch {
                continue;
            }
            let share = match d.code {
                "in-flight-at-start" if gpu_time > 0 => {
                    Some(r.in_flight.time.0 as f64 / gpu_time as f64)
                }
                "activity-without-launch" | "clock-skew" | "outside-steps" => {
                    Some(d.count as f64 / activities)
                }
                _ => None,
            };
            let note = TrustNote::new(
                TrustSource::Capture,
                Some(who.clone()),
                TrustItem::new(d.code, d.message.clone(), d.count).with_share(share),
            );
            trust.push(if d.code == "flow-one-end" {
                note.listed(Listed::ActivitiesWithoutLaunch)
            } else {
                note
            });
        }
        if let Some(t) = &r.total
            && t.graph_kernels > 0
        {
            let share = t.graph_kernels as f64 / t.kernels.max(1) as f64;
            trust.push(TrustNote::new(
                TrustSource::Capture,
                Some(who.clone()),
                TrustItem {
                    unit: Some("kernels".into()),
                    ..TrustItem::new(
                        "graph-kernels",
                        "kernels launched by CUDA/HIP graphs: their launch delay counts from the graph launch, and per-op tables may not see them",
                        t.graph_kernels as u64,
                    )
                }
                .with_share(Some(share)),
            ));
            if share > 0.5 {
                new_capture.push(Ask::GraphsOff { who: who.clone() });
            }
        }
        if r.comm_stream.is_some() || r.verdict.collective_share > 0.0 {
            trust.push(TrustNote::new(
                TrustSource::Capture,
                Some(who.clone()),
                TrustItem::note(
                    "collective-includes-waiting",
                    "collective kernel time includes waiting for peers, not only transfer",
                )
                .with_share(r.comm_stream.as_ref().map(|c| c.share)),
            ));
        }
        if !f.has_steps {
            new_capture.push(Ask::StepMarkers {
                who: who.clone(),
                jax: matches!(
                    f.format,
                    trace_model::Format::XPlane | trace_model::Format::JaxTraceJson
                ),
            });
        }
    }
    if a.reports.len() == 1 && a.reports[0].comm_stream.is_some() {
        new_capture.push(Ask::AllRanks);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: i64 = 1000;

    fn line(source_line: &str, gpu_time_ns: i64, share_pct: f64) -> attribution::LineRow {
        attribution::LineRow {
            source_line: source_line.to_owned(),
            function: String::new(),
            kernels: 1,
            gpu_time_ns: Nanos(gpu_time_ns),
            share_pct,
        }
    }

    /// The headline Python line skips library frames (torch, site-packages, the Inductor
    /// cache); with library frames only, the first is chosen and flagged as one.
    #[test]
    fn the_top_python_line_is_user_code() {
        let lines = [
            line("/tmp/torchinductor_root/ab/cab.py:10", 400 * US, 50.0),
            line("torch/nn/modules/linear.py:125", 200 * US, 25.0),
            line("train.py:42", 100 * US, 12.5),
        ];
        let (top, library) = top_line(&lines).expect("a line");
        assert_eq!((top.source_line.as_str(), library), ("train.py:42", false));
        assert_eq!(top.gpu_time, Nanos(100 * US));
        let (top, library) = top_line(&lines[..2]).expect("a line");
        assert_eq!(
            (top.source_line.as_str(), library),
            ("/tmp/torchinductor_root/ab/cab.py:10", true)
        );
        assert!(top_line(&[]).is_none());
    }
}
