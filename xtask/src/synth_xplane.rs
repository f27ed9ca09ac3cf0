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

use std::fs::File;
use std::io::{BufWriter, Write};
use std::path::Path;

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
