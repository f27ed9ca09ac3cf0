//! The small synthetic XSpace corpus of `testdata/xplane/` (`cargo xtask fixtures`): one
//! capture that loads (`ok/`), captures with absurd times that load with diagnostics
//! (`odd/`), and malformed files that must fail with an error naming the place (`err/`).
//! Each file gets a `.md` saying how it was made. Built with the writer of the parent
//! module (its field helpers and `/host:metadata` plane), so it needs no prost.

use std::path::PathBuf;

use super::{
    BASE_NS, STAT_CORRELATION_ID, STAT_STEP_NUM, common_stat_names, field_bytes, field_str,
    field_varint, metadata_plane, stat_u64, varint, write_event_metadata, write_stat_metadata,
};

/// Kernels on the one stream of the small capture, and how far apart they start, in ps.
const KERNELS: u64 = 12;
const SPACING_PS: u64 = 10_000_000;
const KERNEL_PS: u64 = 6_000_000;

/// How one kernel of the small capture is bent (all others stay as generated).
#[derive(Clone, Copy, Default)]
struct Bend {
    /// Index of the kernel to bend.
    kernel: u64,
    /// Raw 64-bit value of `offset_ps` (two's complement for negative values).
    offset_ps: Option<u64>,
    duration_ps: Option<u64>,
    /// `timestamp_ns` of the stream line.
    line_ns: Option<u64>,
}

/// Every corpus file, by path under the workspace root, with its `.md`.
pub(crate) fn corpus_files() -> Vec<(PathBuf, Vec<u8>)> {
    let ok = small_space(Bend::default());
    let day_ps: u64 = 24 * 3600 * 1_000_000_000_000;
    let odd: [(&str, Bend, &str); 6] = [
        (
            "kernel_30_days_later",
            Bend {
                kernel: 3,
                offset_ps: Some(30 * day_ps),
                ..Bend::default()
            },
            "kernel 3 starts 30 days after the others (left out: time-out-of-range)",
        ),
        (
            "kernel_offset_i64_max",
            Bend {
                kernel: 4,
                offset_ps: Some(i64::MAX as u64),
                ..Bend::default()
            },
            "kernel 4 has offset_ps = i64::MAX (left out: time-out-of-range)",
        ),
        (
            "kernel_offset_i64_min",
            Bend {
                kernel: 5,
                offset_ps: Some(i64::MIN as u64),
                ..Bend::default()
            },
            "kernel 5 has offset_ps = i64::MIN (left out: time-out-of-range)",
        ),
        (
            "kernel_duration_i64_max",
            Bend {
                kernel: 6,
                duration_ps: Some(i64::MAX as u64),
                ..Bend::default()
            },
            "kernel 6 has duration_ps = i64::MAX (left out: time-out-of-range)",
        ),
        (
            "kernel_duration_negative",
            Bend {
                kernel: 7,
                duration_ps: Some((-5_000_000i64) as u64),
                ..Bend::default()
            },
            "kernel 7 has duration_ps = -5000000 (left out: time-out-of-range)",
        ),
        (
            "line_timestamp_i64_max",
            Bend {
                line_ns: Some(i64::MAX as u64),
                ..Bend::default()
            },
            "the stream line's timestamp_ns is i64::MAX, so its start times saturate far from \
             the host's (its kernels are left out: time-out-of-range)",
        ),
    ];
    let mut invalid_utf8 = Vec::new();
    field_bytes(&mut invalid_utf8, 2, b"/device:GPU:\xff\xfe");
    let err: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "truncated",
            ok[..ok.len() / 2].to_vec(),
            "the first half of ok/small.xplane.pb",
        ),
        (
            "truncated_varint",
            [&ok[..40], &[0xff, 0xff][..]].concat(),
            "40 bytes of ok/small.xplane.pb, then a varint whose last byte is missing",
        ),
        (
            "bad_wire_type",
            [&[0x0f][..], &ok[1..]].concat(),
            "ok/small.xplane.pb with its first tag byte set to wire type 7",
        ),
        (
            "length_past_end",
            {
                let mut b = vec![0x0a];
                varint(&mut b, 1 << 30);
                b.extend_from_slice(b"\x08\x01");
                b
            },
            "a plane field claiming 1 GiB, followed by 2 bytes",
        ),
        (
            "varint_too_long",
            vec![
                0x0a, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
            ],
            "a plane length varint of 11 bytes",
        ),
        (
            "plane_name_not_utf8",
            {
                let mut b = Vec::new();
                field_bytes(&mut b, 1, &invalid_utf8);
                b
            },
            "one plane whose name holds the bytes ff fe",
        ),
        (
            "json_text",
            b"{\"traceEvents\": []}\n".to_vec(),
            "a Chrome trace's JSON text under an .xplane.pb name",
        ),
    ];

    let mut files = Vec::new();
    let mut add = |dir: &str, name: &str, bytes: Vec<u8>, how: &str| {
        let rel = PathBuf::from(format!("testdata/xplane/{dir}/{name}.xplane.pb"));
        let md = format!(
            "# {name}.xplane.pb\n\nGenerated by `cargo xtask fixtures` \
             (`xtask/src/synth_xplane/corpus.rs`): {how}.\n"
        );
        files.push((
            PathBuf::from(format!("{}.md", rel.display())),
            md.into_bytes(),
        ));
        files.push((rel, bytes));
    };
    add(
        "ok",
        "small",
        ok.clone(),
        "one GPU plane with 12 kernels on stream 7 (correlation ids 1-12), a host plane with \
         their 12 hipLaunchKernel calls and 2 train_step annotations (step_num 0 and 1), and \
         the /host:metadata plane with one HLO program",
    );
    for (name, bend, how) in odd {
        add("odd", name, small_space(bend), how);
    }
    for (name, bytes, how) in err {
        add("err", name, bytes, how);
    }
    files
}

/// The small capture, with one kernel bent as `bend` says.
fn small_space(bend: Bend) -> Vec<u8> {
    let mut space = Vec::new();
    field_bytes(&mut space, 1, &small_device_plane(bend));
    field_bytes(&mut space, 1, &small_host_plane());
    field_bytes(&mut space, 1, &metadata_plane());
    space
}

fn small_device_plane(bend: Bend) -> Vec<u8> {
    let mut plane = Vec::new();
    field_varint(&mut plane, 1, 1);
    field_str(&mut plane, 2, "/device:GPU:0");
    write_event_metadata(
        &mut plane,
        &[
            (1, "loop_multiply_fusion".to_owned()),
            (
                2,
                "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_cublas".to_owned(),
            ),
            (3, "input_reduce_fusion".to_owned()),
        ],
    );
    write_stat_metadata(&mut plane, &common_stat_names());
    let mut line = Vec::new();
    field_varint(&mut line, 1, 7);
    field_str(&mut line, 2, "Stream #7(Kernel)");
    field_varint(&mut line, 3, bend.line_ns.unwrap_or(BASE_NS));
    for k in 0..KERNELS {
        let bent = k == bend.kernel;
        let mut event = Vec::new();
        field_varint(&mut event, 1, k % 3 + 1);
        let offset = (k * SPACING_PS + 2_000_000, bend.offset_ps.filter(|_| bent));
        field_varint(&mut event, 2, offset.1.unwrap_or(offset.0));
        let duration = bend.duration_ps.filter(|_| bent).unwrap_or(KERNEL_PS);
        field_varint(&mut event, 3, duration);
        stat_u64(&mut event, STAT_CORRELATION_ID, k + 1);
        field_bytes(&mut line, 4, &event);
    }
    field_bytes(&mut plane, 3, &line);
    plane
}

fn small_host_plane() -> Vec<u8> {
    let mut plane = Vec::new();
    field_varint(&mut plane, 1, 2);
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
    field_varint(&mut line, 1, 4_000);
    field_str(&mut line, 2, "python3/4000");
    field_varint(&mut line, 3, BASE_NS);
    let half = KERNELS / 2 * SPACING_PS;
    for step in 0..2 {
        let mut event = Vec::new();
        field_varint(&mut event, 1, 2);
        field_varint(&mut event, 2, step * half);
        field_varint(&mut event, 3, half - 1_000_000);
        stat_u64(&mut event, STAT_STEP_NUM, step);
        field_bytes(&mut line, 4, &event);
    }
    for k in 0..KERNELS {
        let mut event = Vec::new();
        field_varint(&mut event, 1, 1);
        field_varint(&mut event, 2, k * SPACING_PS);
        field_varint(&mut event, 3, 1_500_000);
        stat_u64(&mut event, STAT_CORRELATION_ID, k + 1);
        field_bytes(&mut line, 4, &event);
    }
    field_bytes(&mut plane, 3, &line);
    plane
}
