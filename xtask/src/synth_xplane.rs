//! Writes a large synthetic XSpace (`*.xplane.pb`) for `cargo xtask bench`, with a tiny
//! protobuf writer of our own so that xtask needs neither prost nor xplane-reader.
//!
//! The capture looks like a JAX run on 8 GPUs: `/device:GPU:N` planes with 4
//! `Stream #N(Kernel)` lines each, kernels carrying `correlation_id`, `hlo_op`, `hlo_module`
//! and `kernel_details` (the last three interned as `ref_value`s, as real files store them),
//! a `/host:CPU` plane whose threads hold one `train_step` annotation per step and the
//! `hipLaunchKernel` call of every kernel, and a `/host:metadata` plane with one small HLO
//! proto. Field numbers are those of `../shared/reference/xplane-hlo-schema.md`.
//! Deterministic: the same size gives the same bytes.

mod corpus;

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

pub(crate) use corpus::corpus_files;

const GPUS: u64 = 8;
const STREAMS: u64 = 4;
const HOST_THREADS: u64 = 4;
/// Kernels per stream per step.
const KERNELS_PER_STEP: u64 = 256;
/// Distinct kernel names and HLO ops per device plane.
const KERNEL_NAMES: u64 = 64;
const HLO_OPS: u64 = 512;
/// Spacing of launches within a step, and the length of a step, in ps.
const LAUNCH_SPACING_PS: u64 = 8_000_000;
const STEP_PS: u64 = KERNELS_PER_STEP * STREAMS * LAUNCH_SPACING_PS + 50_000_000;
/// `line.timestamp_ns`: a Unix-epoch base, as real NVIDIA captures have.
const BASE_NS: u64 = 1_764_000_000_000_000_000;

// Stat-metadata ids, shared by every plane that uses them; interned strings follow.
const STAT_CORRELATION_ID: u64 = 1;
const STAT_HLO_OP: u64 = 2;
const STAT_HLO_MODULE: u64 = 3;
const STAT_KERNEL_DETAILS: u64 = 4;
const STAT_PROGRAM_ID: u64 = 5;
const STAT_STEP_NUM: u64 = 6;
const STAT_DEVICE_VENDOR: u64 = 7;
const STAT_CLOCK_RATE: u64 = 8;
const STAT_CORE_COUNT: u64 = 9;
const STAT_MEMORY_BANDWIDTH: u64 = 10;
const STAT_MEMORY_SIZE: u64 = 11;
const STAT_COMPUTE_CAP_MAJOR: u64 = 12;
const STAT_COMPUTE_CAP_MINOR: u64 = 13;
const STAT_HLO_PROTO: u64 = 14;
const STAT_MODULE_NAME_REF: u64 = 20;
const STAT_KERNEL_DETAILS_REF: u64 = 21;
const STAT_HLO_OP_REF: u64 = 100;

const PROGRAM_ID: u64 = 1;
const MODULE: &str = "jit_train_step";

/// Writes the capture to `path` (through a temporary name), stopping after the step that
/// brings it to about `target_bytes`. Returns the size written.
pub(crate) fn write(path: &Path, target_bytes: u64) -> std::io::Result<u64> {
    // Every step adds the same number of bytes, give or take a few varint lengths, on top of
    // the metadata: size one and two steps first, then write as many steps as fit.
    let one = space_len(1);
    let per_step = space_len(2).saturating_sub(one).max(1);
    let steps = 1 + target_bytes.saturating_sub(one) / per_step;
    let tmp = path.with_extension("pb.tmp");
    let mut out = BufWriter::with_capacity(1 << 20, File::create(&tmp)?);
    let mut written = 0u64;
    for plane in planes(steps) {
        let mut record = Vec::with_capacity(plane.len() + 16);
        field_bytes(&mut record, 1, &plane);
        out.write_all(&record)?;
        written += record.len() as u64;
    }
    out.flush()?;
    drop(out);
    std::fs::rename(&tmp, path)?;
    Ok(written)
}

fn space_len(steps: u64) -> u64 {
    planes(steps)
        .map(|plane| plane.len() as u64 + 1 + varint_len(plane.len() as u64))
        .sum()
}

/// The encoded planes, one at a time (a device plane is tens of MB).
fn planes(steps: u64) -> impl Iterator<Item = Vec<u8>> {
    (0..GPUS)
        .map(move |gpu| device_plane(gpu, steps))
        .chain(std::iter::once_with(move || host_plane(steps)))
        .chain(std::iter::once_with(metadata_plane))
}

fn device_plane(gpu: u64, steps: u64) -> Vec<u8> {
    let mut plane = Vec::new();
    field_varint(&mut plane, 1, gpu + 1);
    field_str(&mut plane, 2, &format!("/device:GPU:{gpu}"));
    let mut event_meta = Vec::new();
    for kernel in 0..KERNEL_NAMES {
        event_meta.push((kernel + 1, kernel_name(kernel)));
    }
    write_event_metadata(&mut plane, &event_meta);
    let mut stat_meta = common_stat_names();
    stat_meta.push((STAT_MODULE_NAME_REF, MODULE.to_owned()));
    stat_meta.push((
        STAT_KERNEL_DETAILS_REF,
        "regs:128 static_shared:0 dynamic_shared:49152 grid:132,1,1 block:384,1,1 occ_pct:37.5"
            .to_owned(),
    ));
    for op in 0..HLO_OPS {
        stat_meta.push((STAT_HLO_OP_REF + op, hlo_op_name(op)));
    }
    write_stat_metadata(&mut plane, &stat_meta);
    let mut stat = Vec::new();
    for (id, value) in [
        (STAT_CLOCK_RATE, 1_980_000u64),
        (STAT_CORE_COUNT, 132),
        (STAT_MEMORY_BANDWIDTH, 3_352_320_000_000),
        (STAT_MEMORY_SIZE, 85_045_018_624),
        (STAT_COMPUTE_CAP_MAJOR, 9),
        (STAT_COMPUTE_CAP_MINOR, 0),
    ] {
        stat.clear();
        field_varint(&mut stat, 1, id);
        field_varint(&mut stat, 3, value);
        field_bytes(&mut plane, 6, &stat);
    }
    stat.clear();
    field_varint(&mut stat, 1, STAT_DEVICE_VENDOR);
    field_str(&mut stat, 5, "Nvidia");
    field_bytes(&mut plane, 6, &stat);

    let mut line = Vec::new();
    let mut event = Vec::new();
    for stream in 0..STREAMS {
        line.clear();
        field_varint(&mut line, 1, stream + 7);
        field_str(&mut line, 2, &format!("Stream #{}(Kernel)", stream + 7));
        field_varint(&mut line, 3, BASE_NS);
        for step in 0..steps {
            for k in 0..KERNELS_PER_STEP {
                let slot = k * STREAMS + stream;
                let launch = launch_offset_ps(gpu, step, slot);
                let seed = mix(correlation_id(gpu, step, slot));
                event.clear();
                field_varint(&mut event, 1, seed % KERNEL_NAMES + 1);
                field_varint(&mut event, 2, launch + 5_000_000 + seed % 1_000_000);
                field_varint(&mut event, 3, 1_000_000 + (seed >> 8) % 6_000_000);
                stat_u64(
                    &mut event,
                    STAT_CORRELATION_ID,
                    correlation_id(gpu, step, slot),
                );
                stat_ref(
                    &mut event,
                    STAT_HLO_OP,
                    STAT_HLO_OP_REF + (seed >> 16) % HLO_OPS,
                );
                stat_ref(&mut event, STAT_HLO_MODULE, STAT_MODULE_NAME_REF);
                stat_ref(&mut event, STAT_KERNEL_DETAILS, STAT_KERNEL_DETAILS_REF);
                stat_i64(&mut event, STAT_PROGRAM_ID, PROGRAM_ID);
                field_bytes(&mut line, 4, &event);
            }
        }
        field_varint(&mut line, 9, steps * STEP_PS);
        field_bytes(&mut plane, 3, &line);
    }
    plane
}

fn host_plane(steps: u64) -> Vec<u8> {
    let mut plane = Vec::new();
    field_varint(&mut plane, 1, GPUS + 1);
    field_str(&mut plane, 2, "/host:CPU");
    write_event_metadata(
        &mut plane,
        &[
            (1, "hipLaunchKernel".to_owned()),
            (2, "train_step".to_owned()),
        ],
    );
    write_stat_metadata(&mut plane, &common_stat_names());
    let mut line = Vec::new();
    let mut event = Vec::new();
    for thread in 0..HOST_THREADS {
        line.clear();
        field_varint(&mut line, 1, 4_000 + thread);
        field_str(&mut line, 2, &format!("python3/{}", 4_000 + thread));
        field_varint(&mut line, 3, BASE_NS);
        for step in 0..steps {
            event.clear();
            field_varint(&mut event, 1, 2);
            field_varint(&mut event, 2, step * STEP_PS);
            field_varint(&mut event, 3, STEP_PS - 10_000_000);
            stat_u64(&mut event, STAT_STEP_NUM, step);
            field_bytes(&mut line, 4, &event);
            for slot in 0..KERNELS_PER_STEP * STREAMS {
                // Thread t launches for GPUs t and t + 4, in time order.
                for gpu in [thread, thread + HOST_THREADS] {
                    if gpu >= GPUS {
                        continue;
                    }
                    event.clear();
                    field_varint(&mut event, 1, 1);
                    field_varint(&mut event, 2, launch_offset_ps(gpu, step, slot));
                    field_varint(&mut event, 3, 3_000_000);
                    stat_u64(
                        &mut event,
                        STAT_CORRELATION_ID,
                        correlation_id(gpu, step, slot),
                    );
                    field_bytes(&mut line, 4, &event);
                }
            }
        }
        field_bytes(&mut plane, 3, &line);
    }
    plane
}

fn metadata_plane() -> Vec<u8> {
    let mut plane = Vec::new();
    field_varint(&mut plane, 1, GPUS + 2);
    field_str(&mut plane, 2, "/host:metadata");
    // HloProto { hlo_module: HloModuleProto { name, entry_computation_name, id } }.
    let mut module = Vec::new();
    field_str(&mut module, 1, MODULE);
    field_str(&mut module, 2, "main.42");
    field_varint(&mut module, 5, PROGRAM_ID);
    let mut hlo_proto = Vec::new();
    field_bytes(&mut hlo_proto, 1, &module);
    let mut meta = Vec::new();
    field_varint(&mut meta, 1, PROGRAM_ID);
    field_str(&mut meta, 2, &format!("{MODULE}({PROGRAM_ID})"));
    let mut stat = Vec::new();
    field_varint(&mut stat, 1, STAT_HLO_PROTO);
    field_bytes(&mut stat, 6, &hlo_proto);
    field_bytes(&mut meta, 5, &stat);
    stat.clear();
    field_varint(&mut stat, 1, STAT_PROGRAM_ID);
    field_varint(&mut stat, 4, PROGRAM_ID);
    field_bytes(&mut meta, 5, &stat);
    let mut entry = Vec::new();
    field_varint(&mut entry, 1, PROGRAM_ID);
    field_bytes(&mut entry, 2, &meta);
    field_bytes(&mut plane, 4, &entry);
    write_stat_metadata(&mut plane, &common_stat_names());
    plane
}

fn common_stat_names() -> Vec<(u64, String)> {
    [
        (STAT_CORRELATION_ID, "correlation_id"),
        (STAT_HLO_OP, "hlo_op"),
        (STAT_HLO_MODULE, "hlo_module"),
        (STAT_KERNEL_DETAILS, "kernel_details"),
        (STAT_PROGRAM_ID, "program_id"),
        (STAT_STEP_NUM, "step_num"),
        (STAT_DEVICE_VENDOR, "device_vendor"),
        (STAT_CLOCK_RATE, "clock_rate"),
        (STAT_CORE_COUNT, "core_count"),
        (STAT_MEMORY_BANDWIDTH, "memory_bandwidth"),
        (STAT_MEMORY_SIZE, "memory_size"),
        (STAT_COMPUTE_CAP_MAJOR, "compute_cap_major"),
        (STAT_COMPUTE_CAP_MINOR, "compute_cap_minor"),
        (STAT_HLO_PROTO, "Hlo Proto"),
    ]
    .into_iter()
    .map(|(id, name)| (id, name.to_owned()))
    .collect()
}

/// Start of the launch of kernel `slot` of `step` on `gpu`, in ps from the line base.
fn launch_offset_ps(gpu: u64, step: u64, slot: u64) -> u64 {
    step * STEP_PS + slot * LAUNCH_SPACING_PS + (gpu / HOST_THREADS) * (LAUNCH_SPACING_PS / 2)
}

fn correlation_id(gpu: u64, step: u64, slot: u64) -> u64 {
    (step * GPUS + gpu) * KERNELS_PER_STEP * STREAMS + slot + 1
}

/// A cheap deterministic scramble (splitmix64's finaliser) for names and durations.
fn mix(value: u64) -> u64 {
    let mut z = value.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn kernel_name(index: u64) -> String {
    match index % 4 {
        0 => format!("loop_multiply_fusion_{index}"),
        1 => format!(
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas_{index}"
        ),
        2 => format!("input_reduce_fusion_{index}"),
        _ => format!(
            "void flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, {index}>(Flash_fwd_params)"
        ),
    }
}

fn hlo_op_name(index: u64) -> String {
    match index % 3 {
        0 => format!("fusion.{index}"),
        1 => format!("custom-call.{index}"),
        _ => format!("loop_convert_fusion.{index}"),
    }
}

/// The small XSpace of `testdata/attribution/synth.xplane.pb` (`cargo xtask fixtures`): one
/// program, `jit_synth_step`, stored under two ids (7 and 8, the same bytes), with a
/// `command_buffer` call, a `while` with `known_trip_count` 3 whose body holds an
/// all-gather-start, and kernels on two GPUs chosen so that every match kind of
/// attribute-kernels occurs a known number of times (listed in `synth.md`).
pub(crate) fn attribution_fixture() -> Vec<u8> {
    let hlo = attribution_hlo();
    let mut space = Vec::new();
    // GPU 0: program id 7. (kernel name, hlo_op, graph id, program, duration ps, memcpy)
    let gpu0: &[FixtureKernel<'_>] = &[
        (
            "input_reduce_fusion_10",
            Some("input_reduce_fusion.10"),
            None,
            Some(7),
            4_000_000,
            false,
        ),
        (
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas",
            Some("custom-call.11"),
            None,
            Some(7),
            9_000_000,
            false,
        ),
        (
            "loop_add_fusion_1",
            Some("command_buffer.12"),
            Some(5),
            Some(7),
            2_000_000,
            false,
        ),
        (
            "loop_mul_fusion_2",
            Some("command_buffer.12"),
            Some(5),
            Some(7),
            2_000_000,
            false,
        ),
        (
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_cublas",
            Some("command_buffer.12"),
            Some(5),
            Some(7),
            6_000_000,
            false,
        ),
        (
            "loop_sin_fusion_4",
            Some("loop_sin_fusion.4"),
            None,
            Some(7),
            1_000_000,
            false,
        ),
        (
            "ncclDevKernel_AllGather_RING_LL",
            Some("all-gather.34"),
            None,
            Some(7),
            3_000_000,
            false,
        ),
        (
            "loop_sin_fusion_4",
            Some("loop_sin_fusion.4"),
            None,
            Some(7),
            1_000_000,
            false,
        ),
        (
            "ncclDevKernel_AllGather_RING_LL",
            Some("all-gather.34"),
            None,
            Some(7),
            3_000_000,
            false,
        ),
        (
            "loop_sin_fusion_4",
            Some("loop_sin_fusion.4"),
            None,
            Some(7),
            1_000_000,
            false,
        ),
        (
            "ncclDevKernel_AllGather_RING_LL",
            Some("all-gather.34"),
            None,
            Some(7),
            3_000_000,
            false,
        ),
        (
            "Memcpy DtoD (Device -> Device)",
            None,
            None,
            Some(7),
            500_000,
            true,
        ),
        (
            "output_fusion_15",
            Some("output_fusion.15"),
            None,
            Some(7),
            2_500_000,
            false,
        ),
        ("mystery_kernel", None, None, Some(7), 700_000, false),
        ("__amd_rocclr_copyBuffer", None, None, None, 300_000, false),
    ];
    // GPU 1: program id 8 (the same module stored again).
    let gpu1: &[FixtureKernel<'_>] = &[
        (
            "input_reduce_fusion_10",
            None,
            None,
            Some(8),
            4_000_000,
            false,
        ),
        (
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas",
            Some("custom-call.11"),
            None,
            Some(8),
            9_000_000,
            false,
        ),
        (
            "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tt_n_cublas",
            None,
            None,
            Some(8),
            5_000_000,
            false,
        ),
    ];
    for (gpu, kernels) in [(0u64, gpu0), (1, gpu1)] {
        field_bytes(&mut space, 1, &attribution_device_plane(gpu, kernels));
    }
    let mut plane = Vec::new();
    field_varint(&mut plane, 1, 99);
    field_str(&mut plane, 2, "/host:metadata");
    for program in [7u64, 8] {
        let mut meta = Vec::new();
        field_varint(&mut meta, 1, program);
        field_str(&mut meta, 2, &format!("jit_synth_step({program})"));
        let mut stat = Vec::new();
        field_varint(&mut stat, 1, STAT_HLO_PROTO);
        field_bytes(&mut stat, 6, &hlo);
        field_bytes(&mut meta, 5, &stat);
        stat.clear();
        field_varint(&mut stat, 1, STAT_PROGRAM_ID);
        field_varint(&mut stat, 4, program);
        field_bytes(&mut meta, 5, &stat);
        let mut entry = Vec::new();
        field_varint(&mut entry, 1, program);
        field_bytes(&mut entry, 2, &meta);
        field_bytes(&mut plane, 4, &entry);
    }
    write_stat_metadata(&mut plane, &common_stat_names());
    field_bytes(&mut space, 1, &plane);
    space
}

const STAT_MEMCPY_DETAILS: u64 = 30;
const STAT_GRAPH_ID: u64 = 31;
const STAT_REF_BASE: u64 = 200;
/// The lines' `timestamp_ns`: small, so that times in ps stay far inside i64.
const FIXTURE_BASE_NS: u64 = 1_000_000_000;

type FixtureKernel<'a> = (
    &'a str,
    Option<&'a str>,
    Option<u64>,
    Option<u64>,
    u64,
    bool,
);

fn attribution_device_plane(gpu: u64, kernels: &[FixtureKernel<'_>]) -> Vec<u8> {
    let mut plane = Vec::new();
    field_varint(&mut plane, 1, gpu + 1);
    field_str(&mut plane, 2, &format!("/device:GPU:{gpu}"));
    let names: Vec<(u64, String)> = kernels
        .iter()
        .enumerate()
        .map(|(i, k)| (i as u64 + 1, k.0.to_owned()))
        .collect();
    write_event_metadata(&mut plane, &names);
    let mut stats = common_stat_names();
    stats.push((STAT_MEMCPY_DETAILS, "memcpy_details".to_owned()));
    stats.push((STAT_GRAPH_ID, "cuda_graph_id".to_owned()));
    stats.push((STAT_MODULE_NAME_REF, "jit_synth_step".to_owned()));
    for (i, k) in kernels.iter().enumerate() {
        if let Some(op) = k.1 {
            stats.push((STAT_REF_BASE + i as u64, op.to_owned()));
        }
    }
    write_stat_metadata(&mut plane, &stats);
    let mut compute = Vec::new();
    field_varint(&mut compute, 1, 7);
    field_str(&mut compute, 2, "Stream #7(Compute)");
    field_varint(&mut compute, 3, FIXTURE_BASE_NS);
    let mut copies = Vec::new();
    field_varint(&mut copies, 1, 8);
    field_str(&mut copies, 2, "Stream #8(MemcpyD2D)");
    field_varint(&mut copies, 3, FIXTURE_BASE_NS);
    let mut at = 1_000_000u64;
    for (i, &(_, hlo_op, graph, program, dur, memcpy)) in kernels.iter().enumerate() {
        let mut event = Vec::new();
        field_varint(&mut event, 1, i as u64 + 1);
        field_varint(&mut event, 2, at);
        field_varint(&mut event, 3, dur);
        if hlo_op.is_some() {
            stat_ref(&mut event, STAT_HLO_OP, STAT_REF_BASE + i as u64);
        }
        if let Some(program) = program {
            stat_ref(&mut event, STAT_HLO_MODULE, STAT_MODULE_NAME_REF);
            stat_i64(&mut event, STAT_PROGRAM_ID, program);
        }
        if let Some(graph) = graph {
            stat_i64(&mut event, STAT_GRAPH_ID, graph);
        }
        if memcpy {
            let mut stat = Vec::new();
            field_varint(&mut stat, 1, STAT_MEMCPY_DETAILS);
            field_str(&mut stat, 5, "kind:DtoD size:4096 dest:0 async:1");
            field_bytes(&mut event, 4, &stat);
            field_bytes(&mut copies, 4, &event);
        } else {
            field_bytes(&mut compute, 4, &event);
        }
        at += dur + 1_000_000;
    }
    field_bytes(&mut plane, 3, &compute);
    field_bytes(&mut plane, 3, &copies);
    plane
}

/// `jit_synth_step`'s HloProto. Computations (ids): 1 `fused_add` (a fusion body), 2
/// `command_buffer` (two fusions and a cuBLAS call), 3 `body` (a fusion and an
/// all-gather-start/done), 4 `cond`, 5 `main` (entry).
fn attribution_hlo() -> Vec<u8> {
    // (id, name, opcode, called computation ids, op_name, source line, backend config, target)
    type Inst<'a> = (
        u64,
        &'a str,
        &'a str,
        &'a [u64],
        &'a str,
        u64,
        &'a str,
        &'a str,
    );
    let computations: &[(u64, &str, &[Inst<'_>])] = &[
        (
            1,
            "fused_add",
            &[(1, "p.1", "parameter", &[], "", 0, "", "")],
        ),
        (
            2,
            "command_buffer",
            &[
                (2, "p.2", "parameter", &[], "", 0, "", ""),
                (
                    3,
                    "loop_add_fusion.1",
                    "fusion",
                    &[1],
                    "jit(step)/add",
                    11,
                    "",
                    "",
                ),
                (
                    4,
                    "loop_mul_fusion.2",
                    "fusion",
                    &[1],
                    "jit(step)/mul",
                    12,
                    "",
                    "",
                ),
                (
                    5,
                    "custom-call.5",
                    "custom-call",
                    &[],
                    "jit(step)/dot_general",
                    13,
                    "",
                    "__cublas$gemm",
                ),
            ],
        ),
        (
            3,
            "body",
            &[
                (6, "p.3", "parameter", &[], "", 0, "", ""),
                (
                    7,
                    "loop_sin_fusion.4",
                    "fusion",
                    &[1],
                    "jit(step)/while/body/sin",
                    21,
                    "",
                    "",
                ),
                (
                    8,
                    "all-gather-start.6",
                    "all-gather-start",
                    &[],
                    "jit(step)/while/body/all_gather",
                    22,
                    "",
                    "",
                ),
                (
                    9,
                    "all-gather-done.6",
                    "all-gather-done",
                    &[],
                    "jit(step)/while/body/all_gather",
                    22,
                    "",
                    "",
                ),
            ],
        ),
        (
            4,
            "cond",
            &[
                (10, "p.4", "parameter", &[], "", 0, "", ""),
                (11, "c.4", "constant", &[], "", 0, "", ""),
            ],
        ),
        (
            5,
            "main",
            &[
                (12, "p0", "parameter", &[], "", 0, "", ""),
                (
                    13,
                    "input_reduce_fusion.10",
                    "fusion",
                    &[1],
                    "jit(step)/reduce_sum",
                    5,
                    "",
                    "",
                ),
                (
                    14,
                    "custom-call.11",
                    "custom-call",
                    &[],
                    "jit(step)/dot_general",
                    6,
                    "",
                    "__cublas$gemm",
                ),
                (15, "command_buffer.12", "call", &[2], "", 0, "", ""),
                (
                    16,
                    "while.13",
                    "while",
                    &[3, 4],
                    "jit(step)/while",
                    20,
                    r#"{"known_trip_count":{"n":"3"}}"#,
                    "",
                ),
                (17, "copy.14", "copy", &[], "jit(step)/copy", 30, "", ""),
                (
                    18,
                    "output_fusion.15",
                    "fusion",
                    &[1],
                    "jit(step)/tanh",
                    31,
                    "",
                    "",
                ),
                (
                    19,
                    "custom-call.16",
                    "custom-call",
                    &[],
                    "jit(step)/dot_general",
                    32,
                    "",
                    "__cublas$gemm",
                ),
            ],
        ),
    ];
    let mut module = Vec::new();
    field_str(&mut module, 1, "jit_synth_step");
    field_str(&mut module, 2, "main");
    for &(id, name, instructions) in computations {
        let mut computation = Vec::new();
        field_str(&mut computation, 1, name);
        for &(iid, iname, opcode, called, op_name, line, config, target) in instructions {
            let mut inst = Vec::new();
            field_str(&mut inst, 1, iname);
            field_str(&mut inst, 2, opcode);
            if !op_name.is_empty() {
                let mut metadata = Vec::new();
                field_str(&mut metadata, 2, op_name);
                field_str(&mut metadata, 3, "/work/synth_step.py");
                field_varint(&mut metadata, 4, line);
                field_bytes(&mut inst, 7, &metadata);
            }
            if !target.is_empty() {
                field_str(&mut inst, 28, target);
            }
            field_varint(&mut inst, 35, iid);
            for &c in called {
                field_varint(&mut inst, 38, c);
            }
            if !config.is_empty() {
                field_str(&mut inst, 43, config);
            }
            field_bytes(&mut computation, 2, &inst);
        }
        field_varint(&mut computation, 5, id);
        let root = instructions.last().map_or(0, |i| i.0);
        field_varint(&mut computation, 6, root);
        field_bytes(&mut module, 3, &computation);
    }
    field_varint(&mut module, 5, 7);
    field_varint(&mut module, 6, 5);
    let mut hlo_proto = Vec::new();
    field_bytes(&mut hlo_proto, 1, &module);
    hlo_proto
}

/// `map<int64, XEventMetadata> event_metadata = 4`: entries of key 1, value 2.
fn write_event_metadata(plane: &mut Vec<u8>, entries: &[(u64, String)]) {
    for (id, name) in entries {
        let mut meta = Vec::new();
        field_varint(&mut meta, 1, *id);
        field_str(&mut meta, 2, name);
        let mut entry = Vec::new();
        field_varint(&mut entry, 1, *id);
        field_bytes(&mut entry, 2, &meta);
        field_bytes(plane, 4, &entry);
    }
}

/// `map<int64, XStatMetadata> stat_metadata = 5`.
fn write_stat_metadata(plane: &mut Vec<u8>, entries: &[(u64, String)]) {
    for (id, name) in entries {
        let mut meta = Vec::new();
        field_varint(&mut meta, 1, *id);
        field_str(&mut meta, 2, name);
        let mut entry = Vec::new();
        field_varint(&mut entry, 1, *id);
        field_bytes(&mut entry, 2, &meta);
        field_bytes(plane, 5, &entry);
    }
}

/// An `XStat` (event field 4) with `uint64_value`.
fn stat_u64(event: &mut Vec<u8>, metadata_id: u64, value: u64) {
    let mut stat = Vec::with_capacity(16);
    field_varint(&mut stat, 1, metadata_id);
    field_varint(&mut stat, 3, value);
    field_bytes(event, 4, &stat);
}

/// An `XStat` with `int64_value` (non-negative here, so the same varint).
fn stat_i64(event: &mut Vec<u8>, metadata_id: u64, value: u64) {
    let mut stat = Vec::with_capacity(16);
    field_varint(&mut stat, 1, metadata_id);
    field_varint(&mut stat, 4, value);
    field_bytes(event, 4, &stat);
}

/// An `XStat` with `ref_value`: an interned string, the name of stat metadata `target`.
fn stat_ref(event: &mut Vec<u8>, metadata_id: u64, target: u64) {
    let mut stat = Vec::with_capacity(16);
    field_varint(&mut stat, 1, metadata_id);
    field_varint(&mut stat, 7, target);
    field_bytes(event, 4, &stat);
}

fn field_varint(buf: &mut Vec<u8>, field: u64, value: u64) {
    varint(buf, field << 3);
    varint(buf, value);
}

fn field_str(buf: &mut Vec<u8>, field: u64, text: &str) {
    field_bytes(buf, field, text.as_bytes());
}

fn field_bytes(buf: &mut Vec<u8>, field: u64, body: &[u8]) {
    varint(buf, (field << 3) | 2);
    varint(buf, body.len() as u64);
    buf.extend_from_slice(body);
}

fn varint(buf: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        buf.push((value as u8) | 0x80);
        value >>= 7;
    }
    buf.push(value as u8);
}

fn varint_len(value: u64) -> u64 {
    u64::from((64 - (value | 1).leading_zeros()).div_ceil(7))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn varints() {
        for (value, bytes) in [
            (0u64, vec![0u8]),
            (1, vec![1]),
            (300, vec![0xac, 0x02]),
            (
                u64::MAX,
                vec![0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01],
            ),
        ] {
            let mut buf = Vec::new();
            varint(&mut buf, value);
            assert_eq!(buf, bytes);
            assert_eq!(varint_len(value), bytes.len() as u64);
        }
    }

    #[test]
    fn size_estimate_matches() {
        let dir = std::env::temp_dir().join(format!("synth-xplane-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("small.xplane.pb");
        let written = write(&path, 1).unwrap();
        assert_eq!(written, space_len(1));
        assert_eq!(std::fs::metadata(&path).unwrap().len(), written);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
